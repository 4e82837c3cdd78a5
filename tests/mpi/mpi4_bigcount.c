/* MPI-4.0 calls with small counts, data checked: the large-count (_c)
 * point-to-point, collective (blocking, nonblocking, persistent, v and w)
 * and reduction entry points, the v and w collectives with displacements
 * above INT_MAX, MPI_Type_size_c / MPI_Get_count_c on a type
 * of more than 2 GB, the large-count constructors and their contents,
 * persistent neighbourhood collectives on a periodic ring, generalized
 * requests, f90 types, MPI_Status_c2f/f2c and the mpi_f08 status
 * conversions, and MPI_Info_create_env (also before MPI_Init). */
#include "px_test.h"

#include <limits.h>
#include <sys/mman.h>

static int rank, size;

static int val(int r, int i) { return r * 1000 + i; }

static void p2p_c(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int sb[8], rb[8];
    MPI_Status st;
    MPI_Request rq[2];
    MPI_Count n = 0;
    for (int i = 0; i < 8; i++)
        sb[i] = val(rank, i), rb[i] = -1;
    MPI_Sendrecv_c(sb, 8, MPI_INT, next, 1, rb, 8, MPI_INT, prev, 1, MPI_COMM_WORLD, &st);
    MPI_Get_count_c(&st, MPI_INT, &n);
    PX_CHECK(n == 8, "sendrecv_c count %lld", (long long)n);
    for (int i = 0; i < 8; i++)
        PX_CHECK(rb[i] == val(prev, i), "sendrecv_c [%d] = %d", i, rb[i]);
    MPI_Irecv_c(rb, 5, MPI_INT, prev, 2, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend_c(sb, 5, MPI_INT, next, 2, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 5; i++)
        PX_CHECK(rb[i] == val(prev, i), "isend_c [%d] = %d", i, rb[i]);
    MPI_Send_init_c(sb, 3, MPI_INT, next, 3, MPI_COMM_WORLD, &rq[1]);
    MPI_Recv_init_c(rb, 3, MPI_INT, prev, 3, MPI_COMM_WORLD, &rq[0]);
    for (int k = 0; k < 2; k++) {
        rb[2] = -1;
        MPI_Startall(2, rq);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        PX_CHECK(rb[2] == val(prev, 2), "persistent _c start %d: %d", k, rb[2]);
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    /* a negative count is refused with MPI_ERR_COUNT */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Send_c(sb, -1, MPI_INT, next, 4, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(rc, &cls);
    PX_CHECK(cls == MPI_ERR_COUNT, "negative count: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void coll_c(void)
{
    int *sb = malloc(sizeof(int) * 4 * (size_t)size), *rb = malloc(sizeof(int) * 4 * (size_t)size);
    MPI_Count *cnt = malloc(sizeof(MPI_Count) * (size_t)size);
    MPI_Aint *dsp = malloc(sizeof(MPI_Aint) * (size_t)size);
    MPI_Request rq;
    for (int i = 0; i < 4 * size; i++)
        sb[i] = val(rank, i), rb[i] = -1;
    /* bcast, allreduce (blocking, nonblocking, persistent) */
    int b[3] = {rank == 0 ? 7 : 0, rank == 0 ? 8 : 0, rank == 0 ? 9 : 0};
    MPI_Bcast_c(b, 3, MPI_INT, 0, MPI_COMM_WORLD);
    PX_CHECK(b[0] == 7 && b[2] == 9, "bcast_c %d %d", b[0], b[2]);
    long s[2] = {rank, 2 * rank}, r[2] = {0, 0}, want = (long)size * (size - 1) / 2;
    MPI_Allreduce_c(s, r, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    PX_CHECK(r[0] == want && r[1] == 2 * want, "allreduce_c %ld %ld", r[0], r[1]);
    MPI_Iallreduce_c(s, r, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    PX_CHECK(r[0] == size - 1, "iallreduce_c %ld", r[0]);
    MPI_Allreduce_init_c(s, r, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
    for (int k = 0; k < 2; k++) {
        r[1] = -1;
        MPI_Start(&rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        PX_CHECK(r[1] == 2 * want, "allreduce_init_c start %d: %ld", k, r[1]);
    }
    MPI_Request_free(&rq);
    MPI_Scan_c(s, r, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    PX_CHECK(r[0] == (long)rank * (rank + 1) / 2, "scan_c %ld", r[0]);
    long red = -1;
    MPI_Reduce_c(s, &red, 1, MPI_LONG, MPI_SUM, size - 1, MPI_COMM_WORLD);
    PX_CHECK(rank != size - 1 || red == want, "reduce_c %ld", red);
    /* gather / allgather / alltoall */
    MPI_Allgather_c(sb, 2, MPI_INT, rb, 2, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        PX_CHECK(rb[2 * p + 1] == val(p, 1), "allgather_c from %d: %d", p, rb[2 * p + 1]);
    MPI_Alltoall_c(sb, 2, MPI_INT, rb, 2, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        PX_CHECK(rb[2 * p] == val(p, 2 * rank), "alltoall_c from %d: %d", p, rb[2 * p]);
    /* v-collectives: rank p sends p + 1 ints, placed in reverse rank order */
    MPI_Aint off = 0;
    for (int p = size - 1; p >= 0; p--) {
        cnt[p] = p + 1;
        dsp[p] = off;
        off += p + 1;
    }
    for (int i = 0; i < 4 * size; i++)
        rb[i] = -1;
    MPI_Allgatherv_c(sb, rank + 1, MPI_INT, rb, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        PX_CHECK(rb[dsp[p] + p] == val(p, p), "allgatherv_c from %d: %d", p, rb[dsp[p] + p]);
    for (int i = 0; i < 4 * size; i++)
        rb[i] = -1;
    MPI_Igatherv_c(sb, rank + 1, MPI_INT, rb, cnt, dsp, MPI_INT, 0, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    for (int p = 0; rank == 0 && p < size; p++)
        PX_CHECK(rb[dsp[p]] == val(p, 0), "igatherv_c from %d: %d", p, rb[dsp[p]]);
    /* alltoallv: one int to each rank, at a displacement of 2 */
    MPI_Count c1[64];
    MPI_Aint d2[64];
    for (int p = 0; p < size && p < 64; p++)
        c1[p] = 1, d2[p] = 2 * p;
    MPI_Alltoallv_c(sb, c1, d2, MPI_INT, rb, c1, d2, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        PX_CHECK(rb[2 * p] == val(p, 2 * rank), "alltoallv_c from %d: %d", p, rb[2 * p]);
    /* reduce_scatter_block: block p of the sum goes to rank p */
    MPI_Reduce_scatter_block_c(sb, rb, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int sum = 0;
    for (int p = 0; p < size; p++)
        sum += val(p, 2 * rank + 1);
    PX_CHECK(rb[1] == sum, "reduce_scatter_block_c %d, want %d", rb[1], sum);
    free(sb), free(rb), free(cnt), free(dsp);
}

/* The v and w collectives with displacements above INT_MAX: absolute
 * addresses of a mapping (high in the address space) from MPI_BOTTOM, in
 * ints (v) or bytes (w). Rank p's block is p + 1 ints; each rank's blocks
 * lie in reverse rank order, a gap after each. */
static void v_far(void)
{
    size_t n = 64 * 1024;
    int *m =
        mmap(NULL, 2 * n * sizeof(int), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    PX_REQUIRE(m != MAP_FAILED, "mmap failed");
    int *src = m, *dst = m + n, mine[64], got[64];
    PX_REQUIRE(size <= 64 && (MPI_Aint)(uintptr_t)m / (MPI_Aint)sizeof(int) > INT_MAX,
               "the mapping is at %p", (void *)m);
    MPI_Count cnt[64], one[64];
    MPI_Aint at[64], sat[64], bat[64], sbat[64]; /* in ints, and in bytes */
    MPI_Datatype ints[64];
    MPI_Aint off = 0;
    for (int p = size - 1; p >= 0; p--) {
        cnt[p] = p + 1;
        one[p] = 1;
        at[p] = (MPI_Aint)(uintptr_t)(dst + off) / (MPI_Aint)sizeof(int);
        bat[p] = (MPI_Aint)(uintptr_t)(dst + off);
        sat[p] = (MPI_Aint)(uintptr_t)(src + off) / (MPI_Aint)sizeof(int);
        sbat[p] = (MPI_Aint)(uintptr_t)(src + off);
        ints[p] = MPI_INT;
        off += p + 2;
    }
    for (int i = 0; i < 64; i++)
        mine[i] = val(rank, i);
#define CLEAR() (memset(dst, 0xff, n * sizeof(int)), memset(got, 0xff, sizeof(got)))
    /* gatherv and its nonblocking form: the root's blocks land far */
    for (int nb = 0; nb < 2; nb++) {
        MPI_Request rq;
        CLEAR();
        if (nb) {
            MPI_Igatherv_c(mine, rank + 1, MPI_INT, MPI_BOTTOM, cnt, at, MPI_INT, size - 1,
                           MPI_COMM_WORLD, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        } else {
            MPI_Gatherv_c(mine, rank + 1, MPI_INT, MPI_BOTTOM, cnt, at, MPI_INT, size - 1,
                          MPI_COMM_WORLD);
        }
        for (int p = 0; rank == size - 1 && p < size; p++)
            for (int i = 0; i <= p + 1; i++) {
                int *w = (int *)(uintptr_t)(at[p] * (MPI_Aint)sizeof(int)) + i;
                PX_CHECK(*w == (i <= p ? val(p, i) : -1), "gatherv_c (%d) from %d [%d]: %d", nb, p,
                         i, *w);
            }
    }
    /* scatterv: the root's blocks are read from far */
    for (int i = 0; i < (int)n; i++)
        src[i] = val(size + rank, i);
    CLEAR();
    MPI_Scatterv_c(MPI_BOTTOM, cnt, sat, MPI_INT, got, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i <= rank + 1; i++) {
        MPI_Aint o = sat[rank] - (MPI_Aint)(uintptr_t)src / (MPI_Aint)sizeof(int) + i;
        PX_CHECK(got[i] == (i <= rank ? val(size, (int)o) : -1), "scatterv_c [%d]: %d", i, got[i]);
    }
    /* allgatherv */
    CLEAR();
    MPI_Allgatherv_c(mine, rank + 1, MPI_INT, MPI_BOTTOM, cnt, at, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++) {
        int *w = (int *)(uintptr_t)(at[p] * (MPI_Aint)sizeof(int));
        PX_CHECK(w[p] == val(p, p) && w[p + 1] == -1, "allgatherv_c from %d: %d %d", p, w[p],
                 w[p + 1]);
    }
    /* alltoallv and alltoallw: one int to each rank, from and to far */
    for (int p = 0; p < size; p++)
        src[sat[p] - (MPI_Aint)(uintptr_t)src / (MPI_Aint)sizeof(int)] = val(rank, p);
    for (int w = 0; w < 2; w++) {
        CLEAR();
        if (w)
            MPI_Alltoallw_c(MPI_BOTTOM, one, sbat, ints, MPI_BOTTOM, one, bat, ints,
                            MPI_COMM_WORLD);
        else
            MPI_Alltoallv_c(MPI_BOTTOM, one, sat, MPI_INT, MPI_BOTTOM, one, at, MPI_INT,
                            MPI_COMM_WORLD);
        for (int p = 0; p < size; p++) {
            int *r = (int *)(uintptr_t)bat[p];
            PX_CHECK(r[0] == val(p, rank) && r[1] == -1, "%s from %d: %d %d",
                     w ? "alltoallw_c" : "alltoallv_c", p, r[0], r[1]);
        }
    }
#undef CLEAR
    munmap(m, 2 * n * sizeof(int));
}

/* MPI_Op_create_c: the function sees an MPI_Count length */
static MPI_Count seen_len;
static void max_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)dt;
    seen_len = *len;
    for (MPI_Count i = 0; i < *len; i++)
        if (((int *)in)[i] > ((int *)inout)[i])
            ((int *)inout)[i] = ((int *)in)[i];
}

static void ops_and_pack(void)
{
    MPI_Op op;
    int in[3] = {5, 1, 9}, io[3] = {3, 4, 9};
    MPI_Op_create_c(max_c, 1, &op);
    MPI_Reduce_local_c(in, io, 3, MPI_INT, op);
    PX_CHECK(io[0] == 5 && io[1] == 4 && seen_len == 3, "reduce_local_c %d %d len %lld", io[0],
             io[1], (long long)seen_len);
    MPI_Op_free(&op);
    char buf[64];
    MPI_Count pos = 0, size_c = 0;
    int out[3] = {0, 0, 0};
    MPI_Pack_size_c(3, MPI_INT, MPI_COMM_WORLD, &size_c);
    PX_CHECK(size_c == 12, "pack_size_c %lld", (long long)size_c);
    MPI_Pack_c(in, 3, MPI_INT, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
    PX_CHECK(pos == 12, "pack_c position %lld", (long long)pos);
    pos = 0;
    MPI_Unpack_c(buf, sizeof(buf), &pos, out, 3, MPI_INT, MPI_COMM_WORLD);
    PX_CHECK(out[2] == 9 && pos == 12, "unpack_c %d at %lld", out[2], (long long)pos);
    pos = 0;
    MPI_Pack_external_c("external32", in, 3, MPI_INT, buf, sizeof(buf), &pos);
    PX_CHECK(pos == 12 && buf[3] == 5, "pack_external_c %lld, byte 3 = %d", (long long)pos, buf[3]);
}

static void types_c(void)
{
    /* a contiguous type of 3 GB: its size and a status of one item of it */
    MPI_Datatype big, v;
    MPI_Count n = 3LL << 30, sz = 0, lb = -1, ext = 0, cnt = 0;
    MPI_Type_contiguous_c(n, MPI_BYTE, &big);
    MPI_Type_commit(&big);
    MPI_Type_size_c(big, &sz);
    MPI_Type_get_extent_c(big, &lb, &ext);
    PX_CHECK(sz == n && lb == 0 && ext == n, "type_size_c %lld extent %lld", (long long)sz,
             (long long)ext);
    int small = 0;
    MPI_Type_size(big, &small);
    PX_CHECK(small == MPI_UNDEFINED, "type_size of 3 GB: %d", small);
    MPI_Status st;
    MPI_Status_set_elements_x(&st, MPI_BYTE, 2 * n);
    {
        /* an invalid datatype is a datatype error, not an argument error */
        MPI_Errhandler eh;
        MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Status junk;
        int rc = MPI_Status_set_elements(&junk, MPI_DATATYPE_NULL, 3), cls = -1;
        MPI_Error_class(rc, &cls);
        PX_CHECK(cls == MPI_ERR_TYPE, "set_elements with MPI_DATATYPE_NULL: class %d", cls);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    }
    MPI_Get_count_c(&st, big, &cnt);
    PX_CHECK(cnt == 2, "get_count_c of 6 GB in 3 GB items: %lld", (long long)cnt);
    MPI_Get_elements_c(&st, big, &cnt);
    PX_CHECK(cnt == 2 * n, "get_elements_c %lld", (long long)cnt);
    /* contents in the large-count layout */
    MPI_Count ni, na, nc, nt;
    int comb, ints[1];
    MPI_Count counts[1];
    MPI_Aint aints[1];
    MPI_Datatype types[1];
    MPI_Type_get_envelope_c(big, &ni, &na, &nc, &nt, &comb);
    PX_CHECK(comb == MPI_COMBINER_CONTIGUOUS && ni == 0 && nc == 1 && nt == 1,
             "envelope_c %d %lld %lld", comb, (long long)ni, (long long)nc);
    MPI_Type_get_contents_c(big, 1, 1, 1, 1, ints, aints, counts, types);
    PX_CHECK(counts[0] == n && types[0] == MPI_BYTE, "contents_c %lld", (long long)counts[0]);
    MPI_Type_free(&big);
    /* a vector with a stride above INT_MAX bytes: extent and size only */
    MPI_Type_create_hvector_c(2, 4, (MPI_Count)INT_MAX + 1, MPI_INT, &v);
    MPI_Type_size_c(v, &sz);
    MPI_Type_get_extent_c(v, &lb, &ext);
    PX_CHECK(sz == 32 && ext == (MPI_Count)INT_MAX + 1 + 16, "hvector_c size %lld extent %lld",
             (long long)sz, (long long)ext);
    MPI_Type_free(&v);
    /* an indexed type used for a transfer to self */
    MPI_Count bl[2] = {2, 1}, dp[2] = {4, 0};
    int src[6] = {10, 11, 12, 13, 14, 15}, dst[3] = {0, 0, 0};
    MPI_Type_indexed_c(2, bl, dp, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Sendrecv_c(src, 1, v, 0, 5, dst, 3, MPI_INT, 0, 5, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    PX_CHECK(dst[0] == 14 && dst[1] == 15 && dst[2] == 10, "indexed_c %d %d %d", dst[0], dst[1],
             dst[2]);
    MPI_Type_free(&v);
    /* f90 and sized types */
    MPI_Datatype t;
    int s = 0;
    MPI_Type_create_f90_real(10, MPI_UNDEFINED, &t);
    MPI_Type_size(t, &s);
    PX_CHECK(s == 8, "f90_real(10) has %d bytes", s);
    MPI_Type_create_f90_integer(3, &t);
    MPI_Type_size(t, &s);
    PX_CHECK(s == 2, "f90_integer(3) has %d bytes", s);
    MPI_Type_create_f90_complex(5, 20, &t);
    MPI_Type_size(t, &s);
    PX_CHECK(s == 8, "f90_complex(5, 20) has %d bytes", s);
    MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &t);
    PX_CHECK(t == MPI_INTEGER8, "match_size integer 8");
}

/* Persistent neighbour collectives on a periodic ring (a 1-d cart). */
static void neighbours(void)
{
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1}, left, right;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    MPI_Cart_shift(ring, 0, 1, &left, &right);
    int sb[2] = {val(rank, 0), val(rank, 1)}, rb[4] = {-1, -1, -1, -1};
    MPI_Request rq[2];
    MPI_Neighbor_allgather_init(sb, 1, MPI_INT, rb, 1, MPI_INT, ring, MPI_INFO_NULL, &rq[0]);
    int ab[4] = {-1, -1, -1, -1};
    MPI_Neighbor_alltoall_init(sb, 1, MPI_INT, ab, 1, MPI_INT, ring, MPI_INFO_NULL, &rq[1]);
    for (int k = 0; k < 3; k++) {
        rb[0] = rb[1] = ab[0] = ab[1] = -1;
        /* started in a different order on odd ranks */
        if (rank & 1) {
            MPI_Start(&rq[1]);
            MPI_Start(&rq[0]);
        } else {
            MPI_Startall(2, rq);
        }
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        PX_CHECK(rb[0] == val(left, 0) && rb[1] == val(right, 0), "allgather_init %d: %d %d", k,
                 rb[0], rb[1]);
        /* block 0 goes left, block 1 right: from the left comes its block 1 */
        PX_CHECK(ab[0] == val(left, 1) && ab[1] == val(right, 0), "alltoall_init %d: %d %d", k,
                 ab[0], ab[1]);
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    int cnt[2] = {1, 1}, dsp[2] = {2, 0};
    MPI_Neighbor_allgatherv_init(sb, 1, MPI_INT, rb, cnt, dsp, MPI_INT, ring, MPI_INFO_NULL,
                                 &rq[0]);
    MPI_Start(&rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    PX_CHECK(rb[2] == val(left, 0) && rb[0] == val(right, 0), "allgatherv_init %d %d", rb[2],
             rb[0]);
    MPI_Request_free(&rq[0]);
    int sdsp[2] = {1, 0};
    MPI_Neighbor_alltoallv_init(sb, cnt, sdsp, MPI_INT, ab, cnt, dsp, MPI_INT, ring, MPI_INFO_NULL,
                                &rq[0]);
    MPI_Start(&rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    /* the left neighbour sent its element 0 rightwards (its block 1 at sdispls 0) */
    PX_CHECK(ab[2] == val(left, 0) && ab[0] == val(right, 1), "alltoallv_init %d %d", ab[2], ab[0]);
    MPI_Request_free(&rq[0]);
    MPI_Aint wd[2] = {0, sizeof(int)};
    MPI_Datatype wt[2] = {MPI_INT, MPI_INT};
    MPI_Neighbor_alltoallw_init(sb, cnt, wd, wt, ab, cnt, wd, wt, ring, MPI_INFO_NULL, &rq[0]);
    MPI_Start(&rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    PX_CHECK(ab[0] == val(left, 1) && ab[1] == val(right, 0), "alltoallw_init %d %d", ab[0], ab[1]);
    MPI_Request_free(&rq[0]);
    /* and the large-count one */
    MPI_Count ccnt[2] = {1, 1};
    MPI_Aint cdsp[2] = {1, 0};
    rb[0] = rb[1] = -1;
    MPI_Neighbor_allgatherv_init_c(sb, 1, MPI_INT, rb, ccnt, cdsp, MPI_INT, ring, MPI_INFO_NULL,
                                   &rq[0]);
    MPI_Start(&rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    PX_CHECK(rb[1] == val(left, 0) && rb[0] == val(right, 0), "allgatherv_init_c %d %d", rb[1],
             rb[0]);
    MPI_Request_free(&rq[0]);
    MPI_Comm_free(&ring);
}

/* Generalized requests: the callbacks run when they should. */
static int queried, freed, cancelled;
static int g_query(void *extra, MPI_Status *st)
{
    queried++;
    MPI_Status_set_elements(st, MPI_INT, *(int *)extra);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = 3;
    st->MPI_TAG = 42;
    return MPI_SUCCESS;
}
static int g_free(void *extra)
{
    (void)extra;
    freed++;
    return MPI_SUCCESS;
}
static int g_cancel(void *extra, int complete)
{
    (void)extra;
    cancelled += 1 + complete;
    return MPI_SUCCESS;
}

static void grequests(void)
{
    MPI_Request rq;
    MPI_Status st;
    int flag = 1, extra = 6;
    MPI_Grequest_start(g_query, g_free, g_cancel, &extra, &rq);
    MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    PX_CHECK(!flag && queried == 0, "incomplete grequest tested done");
    MPI_Cancel(&rq);
    PX_CHECK(cancelled == 1, "cancel callback: %d", cancelled);
    MPI_Grequest_complete(rq);
    MPI_Wait(&rq, &st);
    int n = 0;
    MPI_Get_count(&st, MPI_INT, &n);
    PX_CHECK(queried == 1 && freed == 1 && rq == MPI_REQUEST_NULL, "callbacks %d %d", queried,
             freed);
    PX_CHECK(n == 6 && st.MPI_SOURCE == 3 && st.MPI_TAG == 42, "status %d %d %d", n, st.MPI_SOURCE,
             st.MPI_TAG);
    /* freed before it completes: the free function runs at the completion */
    MPI_Grequest_start(g_query, g_free, NULL, &extra, &rq);
    MPI_Request saved = rq;
    MPI_Request_free(&rq);
    PX_CHECK(freed == 1, "freed too early");
    MPI_Grequest_complete(saved);
    PX_CHECK(freed == 2, "free callback after complete: %d", freed);
    /* status conversion round trip */
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_Status back;
    MPI_Status_c2f(&st, f);
    MPI_Status_f2c(f, &back);
    MPI_Get_count(&back, MPI_INT, &n);
    PX_CHECK(n == 6 && back.MPI_TAG == 42, "status c2f/f2c %d %d", n, back.MPI_TAG);
    /* through TYPE(MPI_Status) of mpi_f08, both ways */
    MPI_F08_status f08, f08b;
    MPI_Fint f2[MPI_F_STATUS_SIZE];
    MPI_Status back2;
    PX_CHECK(MPI_Status_c2f08(&st, &f08) == MPI_SUCCESS && f08.MPI_TAG == 42 &&
                 f08.MPI_SOURCE == st.MPI_SOURCE,
             "status c2f08: tag %d", f08.MPI_TAG);
    MPI_Status_f082f(&f08, f2);
    MPI_Status_f2f08(f2, &f08b);
    MPI_Status_f082c(&f08b, &back2);
    MPI_Get_count(&back2, MPI_INT, &n);
    PX_CHECK(n == 6 && back2.MPI_TAG == 42 && f2[MPI_F_TAG] == 42,
             "status c2f08/f082f/f2f08/f082c %d %d", n, back2.MPI_TAG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ec = MPI_Status_f082c(&f08, MPI_STATUS_IGNORE), cls = -1;
    MPI_Error_class(ec, &cls);
    PX_CHECK(cls == MPI_ERR_ARG, "MPI_Status_f082c to MPI_STATUS_IGNORE: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void info_env(int argc, char **argv, MPI_Info pre)
{
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Info_create_env(argc, argv, &info);
    MPI_Info_get(info, "command", MPI_MAX_INFO_VAL, v, &flag);
    PX_CHECK(flag && strstr(v, "mpi4_bigcount"), "command: %s", flag ? v : "(none)");
    MPI_Info_get(info, "maxprocs", MPI_MAX_INFO_VAL, v, &flag);
    PX_CHECK(flag && atoi(v) == size, "maxprocs: %s", flag ? v : "(none)");
    MPI_Info_get(info, "thread_level", MPI_MAX_INFO_VAL, v, &flag);
    PX_CHECK(flag && !strcmp(v, "MPI_THREAD_SINGLE"), "thread_level: %s", flag ? v : "(none)");
    MPI_Info_get(info, "wdir", MPI_MAX_INFO_VAL, v, &flag);
    PX_CHECK(flag && v[0] == '/', "wdir: %s", flag ? v : "(none)");
    MPI_Info_free(&info);
    /* made before MPI_Init: the same job size, from the launcher */
    MPI_Info_get(pre, "maxprocs", MPI_MAX_INFO_VAL, v, &flag);
    PX_CHECK(flag && atoi(v) == size, "maxprocs before MPI_Init: %s", flag ? v : "(none)");
    MPI_Info_get(pre, "command", MPI_MAX_INFO_VAL, v, &flag);
    PX_CHECK(flag && strstr(v, "mpi4_bigcount"), "command before MPI_Init: %s",
             flag ? v : "(none)");
    MPI_Info_free(&pre);
}

int main(int argc, char **argv)
{
    MPI_Info pre;
    MPI_Info_create_env(argc, argv, &pre); /* valid before MPI_Init */
    px_test_init(&argc, &argv, "mpi4_bigcount");
    rank = px_test_rank;
    size = px_test_size;
    p2p_c();
    coll_c();
    v_far();
    ops_and_pack();
    types_c();
    neighbours();
    grequests();
    info_env(argc, argv, pre);
    return px_test_finish("large-count calls, persistent neighbour collectives, grequests");
}
