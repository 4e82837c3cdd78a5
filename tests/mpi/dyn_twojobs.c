/* Accept and connect between two separate pxrun jobs (started by
 * dyn_twojobs.sh): `dyn_twojobs accept FILE NREMOTE` opens a port at rank
 * 0, writes its name to FILE and accepts on MPI_COMM_WORLD;
 * `dyn_twojobs connect FILE NREMOTE` waits for FILE and connects on
 * MPI_COMM_WORLD. Then, with every payload checked:
 *   - point to point both ways over the inter-communicator, every rank with
 *     every remote rank, eager and rendezvous sizes (up to 4 MB);
 *   - inter-communicator collectives (bcast from each side, allreduce);
 *   - MPI_Intercomm_merge (the accepting job first) and collectives,
 *     alltoall and MPI_Comm_split_type on the merged communicator;
 *   - a second meeting on the same port (the processes met before), then
 *     traffic on both inter-communicators kept apart;
 *   - MPI_Comm_disconnect.
 * With `refuse` as a fourth argument both sides must instead fail with the
 * same error at every rank (PX_DYN_PEERS too small), promptly.
 * Each job's rank 0 prints "PASS dyn_twojobs np=N:". */
#include "px_test.h"

#include <unistd.h>

static const size_t sizes[] = {0, 8, 1000, 65536, 4u << 20};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* The pattern of a message from (side, rank) to rank `to`, size index k. */
static uint64_t seed_of(int side, int from, int to, int k, int round)
{
    return ((uint64_t)side << 40) ^ ((uint64_t)from << 24) ^ ((uint64_t)to << 8) ^ (uint64_t)k ^
           ((uint64_t)round << 48);
}

/* Every local rank sends to every remote rank and receives from each. */
static void p2p_all(MPI_Comm ic, int side, int round)
{
    int me, rn;
    MPI_Comm_rank(ic, &me);
    MPI_Comm_remote_size(ic, &rn);
    int n = rn * (int)NSIZES;
    char **sb = calloc((size_t)n, sizeof(char *)), **rb = calloc((size_t)n, sizeof(char *));
    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
    PX_REQUIRE(sb && rb && req, "out of memory");
    for (int r = 0, i = 0; r < rn; r++)
        for (int k = 0; k < (int)NSIZES; k++, i++) {
            sb[i] = malloc(sizes[k] + 1);
            rb[i] = malloc(sizes[k] + 1);
            PX_REQUIRE(sb[i] && rb[i], "out of memory");
            px_fill(sb[i], sizes[k], seed_of(side, me, r, k, round));
            PX_MPI(MPI_Irecv(rb[i], (int)sizes[k], MPI_BYTE, r, k + 100 * round, ic, &req[2 * i]));
            PX_MPI(
                MPI_Isend(sb[i], (int)sizes[k], MPI_BYTE, r, k + 100 * round, ic, &req[2 * i + 1]));
        }
    PX_MPI(MPI_Waitall(2 * n, req, MPI_STATUSES_IGNORE));
    for (int r = 0, i = 0; r < rn; r++)
        for (int k = 0; k < (int)NSIZES; k++, i++) {
            size_t bad = px_verify(rb[i], sizes[k], seed_of(!side, r, me, k, round));
            PX_CHECK(bad == sizes[k], "round %d: %zu bytes from remote rank %d: bad at %zu", round,
                     sizes[k], r, bad);
            free(sb[i]);
            free(rb[i]);
        }
    free(sb);
    free(rb);
    free(req);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "dyn_twojobs");
    PX_REQUIRE((argc == 4 || (argc == 5 && !strcmp(argv[4], "refuse"))) &&
                   (!strcmp(argv[1], "accept") || !strcmp(argv[1], "connect")),
               "usage: dyn_twojobs accept|connect FILE NREMOTE [refuse]");
    int acc = !strcmp(argv[1], "accept"), me = px_test_rank, np = px_test_size;
    int nremote = atoi(argv[3]), refuse = argc == 5;
    const char *file = argv[2];
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (me == 0 && acc) {
        char tmp[4096];
        PX_MPI(MPI_Open_port(MPI_INFO_NULL, port));
        snprintf(tmp, sizeof(tmp), "%s.tmp", file);
        FILE *f = fopen(tmp, "w");
        PX_REQUIRE(f && fprintf(f, "%s\n", port) > 0 && fclose(f) == 0, "writing %s", tmp);
        PX_REQUIRE(rename(tmp, file) == 0, "renaming to %s", file);
    } else if (me == 0) {
        FILE *f = NULL;
        for (int i = 0; i < 3000 && !(f = fopen(file, "r")); i++)
            px_sleep_ms(10);
        PX_REQUIRE(f && fgets(port, sizeof(port), f), "reading %s", file);
        fclose(f);
        port[strcspn(port, "\n")] = 0;
    }
    MPI_Comm ic = MPI_COMM_NULL;
    double t0 = MPI_Wtime();
    int rc = acc ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic)
                 : MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic);
    if (refuse) {
        int cls = -1, len = 0;
        char msg[MPI_MAX_ERROR_STRING] = "";
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, msg, &len);
        PX_CHECK(rc != MPI_SUCCESS && ic == MPI_COMM_NULL, "%s succeeded", argv[1]);
        /* every rank of a side fails alike */
        int lo = cls, hi = cls;
        PX_MPI(MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        PX_MPI(MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        PX_CHECK(lo == hi, "ranks failed with different classes %d..%d", lo, hi);
        if (me == 0 && acc)
            PX_MPI(MPI_Close_port(port));
        return px_test_finish("%s refused in %.2f s: %s", argv[1], MPI_Wtime() - t0, msg);
    }
    PX_REQUIRE(rc == MPI_SUCCESS && ic != MPI_COMM_NULL, "%s failed (%d)", argv[1], rc);
    double t_meet = MPI_Wtime() - t0;
    int flag = 0, rsize = 0, lsize = 0;
    PX_MPI(MPI_Comm_test_inter(ic, &flag));
    PX_MPI(MPI_Comm_remote_size(ic, &rsize));
    PX_MPI(MPI_Comm_size(ic, &lsize));
    PX_CHECK(flag && rsize == nremote && lsize == np, "inter %d, sizes %d/%d (want %d/%d)", flag,
             lsize, rsize, np, nremote);
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);

    p2p_all(ic, acc, 0);

    /* bcast from each side's rank 0, then the other way */
    for (int from = 0; from < 2; from++) {
        uint64_t v[4] = {0};
        int root = from == acc ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        if (root == MPI_ROOT)
            for (int i = 0; i < 4; i++)
                v[i] = seed_of(from, 0, 0, i, 9);
        PX_MPI(MPI_Bcast(v, 4, MPI_UINT64_T, root, ic));
        if (from != acc)
            for (int i = 0; i < 4; i++)
                PX_CHECK(v[i] == seed_of(from, 0, 0, i, 9), "bcast from side %d: word %d", from, i);
    }
    /* inter allreduce: each side gets the sum over the other side */
    long mine = 1000L * acc + me, sum = -1;
    PX_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, ic));
    long want = 1000L * !acc * nremote + (long)nremote * (nremote - 1) / 2;
    PX_CHECK(sum == want, "inter allreduce: %ld, want %ld", sum, want);

    /* merged: the accepting job first */
    MPI_Comm m;
    PX_MPI(MPI_Intercomm_merge(ic, !acc, &m));
    int mr, ms;
    MPI_Comm_rank(m, &mr);
    MPI_Comm_size(m, &ms);
    PX_CHECK(ms == np + nremote && mr == (acc ? me : nremote + me), "merged rank %d of %d", mr, ms);
    long all = -1;
    PX_MPI(MPI_Allreduce(&(long){mr}, &all, 1, MPI_LONG, MPI_SUM, m));
    PX_CHECK(all == (long)ms * (ms - 1) / 2, "merged allreduce %ld", all);
    int *sa = malloc(sizeof(int) * 2 * (size_t)ms), *ra = malloc(sizeof(int) * 2 * (size_t)ms);
    PX_REQUIRE(sa && ra, "out of memory");
    for (int i = 0; i < ms; i++)
        sa[2 * i] = mr, sa[2 * i + 1] = i * 7 + mr;
    PX_MPI(MPI_Alltoall(sa, 2, MPI_INT, ra, 2, MPI_INT, m));
    for (int i = 0; i < ms; i++)
        PX_CHECK(ra[2 * i] == i && ra[2 * i + 1] == mr * 7 + i, "alltoall from %d: %d %d", i,
                 ra[2 * i], ra[2 * i + 1]);
    free(sa);
    free(ra);
    /* shared memory is never shared with another job's processes */
    MPI_Comm node;
    PX_MPI(MPI_Comm_split_type(m, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nsz = 0, nsz_max = 0;
    MPI_Comm_size(node, &nsz);
    PX_MPI(MPI_Allreduce(&nsz, &nsz_max, 1, MPI_INT, MPI_MAX, m));
    PX_CHECK(nsz >= 1 && nsz <= np, "node communicator of %d crosses jobs", nsz);
    PX_MPI(MPI_Comm_free(&node));
    PX_MPI(MPI_Comm_free(&m));

    /* a second meeting of the same processes on the same port */
    MPI_Comm ic2 = MPI_COMM_NULL;
    rc = acc ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic2)
             : MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic2);
    PX_REQUIRE(rc == MPI_SUCCESS && ic2 != MPI_COMM_NULL, "second %s failed (%d)", argv[1], rc);
    /* the same tags on both: nothing crosses from one to the other */
    p2p_all(ic2, acc, 1);
    p2p_all(ic, acc, 2);

    PX_MPI(MPI_Comm_disconnect(&ic2));
    PX_MPI(MPI_Comm_disconnect(&ic));
    PX_CHECK(ic == MPI_COMM_NULL, "disconnect left a communicator");
    if (me == 0 && acc)
        PX_MPI(MPI_Close_port(port));
    return px_test_finish("%s with a job of %d: met in %.2f s, data checked both ways", argv[1],
                          nremote, t_meet);
}
