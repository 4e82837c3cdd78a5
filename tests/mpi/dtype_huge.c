/* Datatypes with billions of elements: building them costs memory for
 * their structure, not for each element (a strided run is one entry), so
 * a count above 2^31 of a strided type builds in a few megabytes; their
 * sizes and extents are exact; partial messages into such types count
 * their elements and land at the right places; adjacent runs still merge
 * into one block after repeated ones; and strided messages of millions of
 * one-byte elements arrive whole. */
#include "px_test.h"

#include <limits.h>
#include <sys/resource.h>

static int nchecks;

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Types of more than 2^31 elements, built and freed. */
static void huge_types(void)
{
    long before = maxrss_kb();
    MPI_Datatype r, t1, t2, t3, t4, v;
    MPI_Count size, lb, extent;
    const MPI_Count n1 = (MPI_Count)INT_MAX + 100;

    /* MPICH's pt2pt_large: 2^31 + 100 one-byte elements, two bytes apart */
    PX_MPI(MPI_Type_create_resized(MPI_CHAR, 0, 2, &r));
    PX_MPI(MPI_Type_contiguous_c(n1, r, &t1));
    PX_MPI(MPI_Type_commit(&t1));
    PX_MPI(MPI_Type_size_c(t1, &size));
    PX_MPI(MPI_Type_get_extent_c(t1, &lb, &extent));
    nchecks++;
    PX_CHECK(size == n1 && lb == 0 && extent == 2 * n1, "contiguous_c: size %lld extent %lld",
             (long long)size, (long long)extent);

    /* 2^30 blocks of two ints, three ints apart */
    PX_MPI(MPI_Type_vector(1 << 30, 2, 3, MPI_INT, &t2));
    PX_MPI(MPI_Type_commit(&t2));
    PX_MPI(MPI_Type_size_c(t2, &size));
    PX_MPI(MPI_Type_get_extent_c(t2, &lb, &extent));
    nchecks++;
    PX_CHECK(size == (MPI_Count)8 << 30 && extent == ((MPI_Count)3 * ((1 << 30) - 1) + 2) * 4,
             "vector: size %lld extent %lld", (long long)size, (long long)extent);

    /* a struct of both and a double, then 1,000 copies of a vector of
     * vectors (resized to its period) */
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {0, 2 * n1 + 8, 2 * n1 + 64};
    MPI_Datatype parts[3] = {t1, MPI_DOUBLE, t2};
    PX_MPI(MPI_Type_create_struct(3, bl, disp, parts, &t3));
    PX_MPI(MPI_Type_commit(&t3));
    PX_MPI(MPI_Type_size_c(t3, &size));
    nchecks++;
    PX_CHECK(size == n1 + 8 + ((MPI_Count)8 << 30), "struct: size %lld", (long long)size);
    PX_MPI(MPI_Type_vector(1 << 20, 1, 2, MPI_DOUBLE, &v));
    MPI_Datatype vr;
    PX_MPI(MPI_Type_create_resized(v, 0, (MPI_Aint)16 << 20, &vr));
    PX_MPI(MPI_Type_contiguous(1000, vr, &t4));
    PX_MPI(MPI_Type_commit(&t4));
    PX_MPI(MPI_Type_size_c(t4, &size));
    PX_MPI(MPI_Type_get_extent_c(t4, &lb, &extent));
    nchecks++;
    PX_CHECK(size == (MPI_Count)8000 << 20 && extent == (MPI_Count)16000 << 20,
             "contiguous of vectors: size %lld extent %lld", (long long)size, (long long)extent);

    long grew = maxrss_kb() - before;
    nchecks++;
    PX_CHECK(grew < 32 * 1024, "building types of %lld elements took %ld KiB", (long long)n1, grew);
    MPI_Datatype *all[] = {&r, &t1, &t2, &t3, &v, &vr, &t4};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        PX_MPI(MPI_Type_free(all[i]));
}

/* 4,000 bytes into a type of a million strided ints, and 600 ints plus
 * 4 bytes into a struct whose vector is followed by a double: elements,
 * count and where the data went. */
static void partial(MPI_Comm comm, int me, int peer)
{
    enum { N = 1 << 20 };
    MPI_Datatype v, s;
    PX_MPI(MPI_Type_vector(N, 1, 2, MPI_INT, &v));
    PX_MPI(MPI_Type_commit(&v));
    int *in = malloc(sizeof(int) * 2 * N), out[1200];
    for (int i = 0; i < 1200; i++)
        out[i] = 1000 + i;
    MPI_Request req;
    MPI_Status st;
    int count, elements;

    if (me == peer || me == 0)
        PX_MPI(MPI_Isend(out, 1000, MPI_INT, peer, 1, comm, &req));
    if (me == peer || me == 1) {
        for (int i = 0; i < 2 * N; i++)
            in[i] = -1;
        PX_MPI(MPI_Recv(in, 1, v, me == peer ? me : 0, 1, comm, &st));
        PX_MPI(MPI_Get_count(&st, v, &count));
        PX_MPI(MPI_Get_elements(&st, v, &elements));
        int bad = -1;
        for (int i = 0; i < 2 * N && bad < 0; i++)
            if (in[i] != (i % 2 == 0 && i < 2000 ? 1000 + i / 2 : -1))
                bad = i;
        nchecks++;
        PX_CHECK(count == MPI_UNDEFINED && elements == 1000 && bad < 0,
                 "partial vector: count %d elements %d, int %d wrong", count, elements, bad);
    }
    if (me == peer || me == 0)
        PX_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));

    /* struct {vector(600, 1, 2, int) at 0; double at 8000}, and 600 ints and
     * half the double sent */
    MPI_Datatype vs;
    PX_MPI(MPI_Type_vector(600, 1, 2, MPI_INT, &vs));
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8000};
    MPI_Datatype parts[2] = {vs, MPI_DOUBLE};
    PX_MPI(MPI_Type_create_struct(2, bl, disp, parts, &s));
    PX_MPI(MPI_Type_commit(&s));
    if (me == peer || me == 0)
        PX_MPI(MPI_Isend(out, 600 * 4 + 4, MPI_BYTE, peer, 2, comm, &req));
    if (me == peer || me == 1) {
        for (int i = 0; i < 2100; i++)
            in[i] = -1;
        PX_MPI(MPI_Recv(in, 1, s, me == peer ? me : 0, 2, comm, &st));
        PX_MPI(MPI_Get_elements(&st, s, &elements));
        int bytes;
        PX_MPI(MPI_Get_count(&st, MPI_BYTE, &bytes));
        int bad = -1;
        for (int i = 0; i < 2100 && bad < 0; i++) {
            int want = i < 1200 ? (i % 2 == 0 ? 1000 + i / 2 : -1) : i == 2000 ? 1600 : -1;
            if (in[i] != want)
                bad = i;
        }
        nchecks++;
        PX_CHECK(elements == MPI_UNDEFINED && bytes == 2404 && bad < 0,
                 "partial struct: elements %d bytes %d, int %d wrong", elements, bytes, bad);
    }
    if (me == peer || me == 0)
        PX_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    PX_MPI(MPI_Type_free(&vs));
    PX_MPI(MPI_Type_free(&s));
    PX_MPI(MPI_Type_free(&v));
    free(in);
}

/* ints at 0, 8 and 12: the last two touch and pack after the first, and
 * 3 items of it pack in type-map order. */
static void merged_runs(void)
{
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {0, 8, 12};
    MPI_Datatype t;
    PX_MPI(MPI_Type_create_hindexed(3, bl, disp, MPI_INT, &t));
    PX_MPI(MPI_Type_commit(&t));
    int src[12], packed[9], back[12], pos = 0;
    for (int i = 0; i < 12; i++)
        src[i] = i;
    PX_MPI(MPI_Pack(src, 3, t, packed, (int)sizeof(packed), &pos, MPI_COMM_SELF));
    static const int want[9] = {0, 2, 3, 4, 6, 7, 8, 10, 11};
    int bad = pos != (int)sizeof(packed) ? 99 : -1;
    for (int i = 0; i < 9 && bad < 0; i++)
        if (packed[i] != want[i])
            bad = i;
    for (int i = 0; i < 12; i++)
        back[i] = -1;
    pos = 0;
    PX_MPI(MPI_Unpack(packed, (int)sizeof(packed), &pos, back, 3, t, MPI_COMM_SELF));
    for (int i = 0; i < 12 && bad < 0; i++)
        if (back[i] != (i % 4 == 1 ? -1 : i))
            bad = 100 + i;
    nchecks++;
    PX_CHECK(bad < 0, "hindexed {0, 8, 12}: item %d wrong", bad);
    PX_MPI(MPI_Type_free(&t));
}

/* 16 million one-byte elements two bytes apart, as MPI_Send_c of a large
 * count sends them (a resized char). */
static void strided_bytes(MPI_Comm comm, int me, int peer)
{
    const MPI_Count n = (MPI_Count)16 << 20;
    MPI_Datatype r;
    PX_MPI(MPI_Type_create_resized(MPI_CHAR, 0, 2, &r));
    PX_MPI(MPI_Type_commit(&r));
    char *buf = malloc((size_t)(2 * n));
    MPI_Request req = MPI_REQUEST_NULL;
    if (me == peer || me == 0) {
        for (MPI_Count i = 0; i < 2 * n; i++)
            buf[i] = (char)(i % 2 ? 0x55 : (i / 2) % 251);
        PX_MPI(MPI_Isend_c(buf, n, r, peer, 3, comm, &req));
    }
    if (me == peer || me == 1) {
        char *in = malloc((size_t)(2 * n));
        memset(in, 0x77, (size_t)(2 * n));
        MPI_Status st;
        MPI_Count got;
        PX_MPI(MPI_Recv_c(in, n, r, me == peer ? me : 0, 3, comm, &st));
        PX_MPI(MPI_Get_count_c(&st, r, &got));
        MPI_Count bad = -1;
        for (MPI_Count i = 0; i < 2 * n && bad < 0; i++)
            if (in[i] != (char)(i % 2 ? 0x77 : (i / 2) % 251))
                bad = i;
        nchecks++;
        PX_CHECK(got == n && bad < 0, "strided bytes: count %lld, byte %lld wrong", (long long)got,
                 (long long)bad);
        free(in);
    }
    PX_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    PX_MPI(MPI_Type_free(&r));
    free(buf);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "dtype_huge");
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    huge_types();
    merged_runs();
    /* ranks 0 and 1 talk to each other; a single rank talks to itself */
    int peer = np == 1 ? 0 : me == 0 ? 1 : me == 1 ? 0 : -1;
    if (peer >= 0) {
        partial(MPI_COMM_WORLD, np == 1 ? 0 : me, np == 1 ? 0 : peer);
        strided_bytes(MPI_COMM_WORLD, np == 1 ? 0 : me, np == 1 ? 0 : peer);
    }
    return px_test_finish("%d checks", nchecks);
}
