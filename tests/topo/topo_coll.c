/* Broadcast (every root, several sizes), alltoall (several block sizes),
 * gather and scatter, with every root, in place and not, with a strided
 * receive or send type, blocking and nonblocking, on MPI_COMM_WORLD and on
 * a communicator of every other rank; every block checked. Run with
 * PX_TOPO and ranks on several emulated hosts (mpi_ranks.sh), the
 * topology-aware algorithms are chosen; PXTEST_EXPECT_TOPO (a list, e.g.
 * "gather,scatter,bcast,alltoall", or "none") makes the program check, through the
 * tool interface, that those ran and the others did not. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K 3 /* ints per rank's block */

static int bad;

static int val(int rank, int root, int i, int salt) { return rank * 1000 + root * 10 + i + salt; }

static void check(const char *what, int got, int want, int me, int root)
{
    if (got != want && bad++ < 10)
        fprintf(stderr, "rank %d: %s root %d: got %d, want %d\n", me, what, root, got, want);
}

/* A block of K ints spread with a stride of 2 (a vector type of extent 2K). */
static MPI_Datatype strided(void)
{
    MPI_Datatype v, r;
    MPI_Type_vector(K, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * K * sizeof(int)), &r);
    MPI_Type_free(&v);
    MPI_Type_commit(&r);
    return r;
}

static void gathers(MPI_Comm comm, int salt)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int *all = malloc(sizeof(int) * (size_t)(2 * K * n)), mine[K];
    MPI_Datatype st = strided();
    for (int root = 0; root < n; root++)
        for (int mode = 0; mode < 4; mode++) { /* plain, in place, strided receive, nonblocking */
            for (int i = 0; i < K; i++)
                mine[i] = val(me, root, i, salt + mode);
            for (int i = 0; i < 2 * K * n; i++)
                all[i] = -1;
            if (mode == 1 && me == root)
                for (int i = 0; i < K; i++)
                    all[me * K + i] = mine[i];
            const void *sb = mode == 1 && me == root ? MPI_IN_PLACE : mine;
            if (mode == 2) {
                MPI_Gather(sb, K, MPI_INT, all, 1, st, root, comm);
            } else if (mode == 3) {
                MPI_Request rq;
                MPI_Igather(sb, K, MPI_INT, all, K, MPI_INT, root, comm, &rq);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
            } else {
                MPI_Gather(sb, K, MPI_INT, all, K, MPI_INT, root, comm);
            }
            if (me != root)
                continue;
            for (int r = 0; r < n; r++)
                for (int i = 0; i < K; i++)
                    check("gather", mode == 2 ? all[r * 2 * K + 2 * i] : all[r * K + i],
                          val(r, root, i, salt + mode), me, root);
        }
    MPI_Type_free(&st);
    free(all);
}

static void scatters(MPI_Comm comm, int salt)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int *all = malloc(sizeof(int) * (size_t)(2 * K * n)), mine[K];
    MPI_Datatype st = strided();
    for (int root = 0; root < n; root++)
        for (int mode = 0; mode < 4; mode++) { /* plain, in place, strided send, nonblocking */
            for (int r = 0; r < n; r++)
                for (int i = 0; i < K; i++) {
                    if (mode == 2) {
                        all[r * 2 * K + 2 * i] = val(r, root, i, salt + mode);
                        all[r * 2 * K + 2 * i + 1] = -2;
                    } else {
                        all[r * K + i] = val(r, root, i, salt + mode);
                    }
                }
            for (int i = 0; i < K; i++)
                mine[i] = -1;
            void *rb = mode == 1 && me == root ? MPI_IN_PLACE : mine;
            if (mode == 2) {
                MPI_Scatter(all, 1, st, rb, K, MPI_INT, root, comm);
            } else if (mode == 3) {
                MPI_Request rq;
                MPI_Iscatter(all, K, MPI_INT, rb, K, MPI_INT, root, comm, &rq);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
            } else {
                MPI_Scatter(all, K, MPI_INT, rb, K, MPI_INT, root, comm);
            }
            for (int i = 0; i < K; i++)
                check("scatter", mode == 1 && me == root ? all[me * K + i] : mine[i],
                      val(me, root, i, salt + mode), me, root);
        }
    MPI_Type_free(&st);
    free(all);
}

static void bcasts(MPI_Comm comm, int salt)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    static int buf[4096];
    for (int root = 0; root < n; root++)
        for (int len = 1; len <= 4096; len *= 16) {
            for (int i = 0; i < len; i++)
                buf[i] = me == root ? val(root, root, i, salt) : -1;
            MPI_Bcast(buf, len, MPI_INT, root, comm);
            for (int i = 0; i < len; i++)
                check("bcast", buf[i], val(root, root, i, salt), me, root);
        }
}

/* Alltoall with blocks of several sizes, in place, with a strided receive
 * type and nonblocking; every block checked. */
static void alltoalls(MPI_Comm comm, int salt)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    /* blocks up to 36 KB: where the selection table has pairwise (or topo)
     * beyond 8 ranks */
    static const int lens[] = {1, 32, 1024, 9216};
    int big = 9216;
    int *sb = malloc(sizeof(int) * (size_t)(2 * big * n)),
        *rb = malloc(sizeof(int) * (size_t)(2 * big * n));
    MPI_Datatype st = strided();
    for (int li = 0; li < 4; li++)
        for (int mode = 0; mode < 4; mode++) {
            int len = lens[li]; /* plain, in place, strided receive, nonblocking */
            int blk = mode == 2 ? K : len, v = salt + mode + len;
            for (int r = 0; r < n; r++)
                for (int i = 0; i < blk; i++) {
                    sb[r * blk + i] = val(me, r, i, v);
                    rb[r * blk + i] = mode == 1 ? val(me, r, i, v) : -1;
                }
            if (mode == 1) {
                MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, blk, MPI_INT, comm);
            } else if (mode == 2) {
                for (int i = 0; i < 2 * K * n; i++)
                    rb[i] = -1;
                MPI_Alltoall(sb, K, MPI_INT, rb, 1, st, comm);
            } else if (mode == 3) {
                MPI_Request rq;
                MPI_Ialltoall(sb, blk, MPI_INT, rb, blk, MPI_INT, comm, &rq);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
            } else {
                MPI_Alltoall(sb, blk, MPI_INT, rb, blk, MPI_INT, comm);
            }
            for (int r = 0; r < n; r++)
                for (int i = 0; i < blk; i++)
                    check("alltoall", mode == 2 ? rb[r * 2 * K + 2 * i] : rb[r * blk + i],
                          val(r, me, i, v), me, r);
        }
    MPI_Type_free(&st);
    free(sb);
    free(rb);
}

/* Counts the calls of one algorithm (pvar coll_<coll>_<algo>_calls) from
 * now on: a handle starts at 0, and follows the variable once started. */
static MPI_T_pvar_session ses;
static MPI_T_pvar_handle count_calls(const char *pvar)
{
    int idx, count;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    if (MPI_T_pvar_get_index(pvar, MPI_T_PVAR_CLASS_COUNTER, &idx) == MPI_SUCCESS &&
        MPI_T_pvar_handle_alloc(ses, idx, NULL, &h, &count) == MPI_SUCCESS)
        MPI_T_pvar_start(ses, h);
    return h;
}

static unsigned long long calls(MPI_T_pvar_handle h)
{
    unsigned long long v = (unsigned long long)-1;
    if (h != MPI_T_PVAR_HANDLE_NULL)
        MPI_T_pvar_read(ses, h, &v);
    return v;
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_T_pvar_session_create(&ses);
    MPI_T_pvar_handle hg = count_calls("coll_gather_topo_calls");
    MPI_T_pvar_handle hs = count_calls("coll_scatter_topo_calls");
    MPI_T_pvar_handle hb = count_calls("coll_bcast_topo_calls");
    MPI_T_pvar_handle ha = count_calls("coll_alltoall_topo_calls");
    bcasts(MPI_COMM_WORLD, 0);
    alltoalls(MPI_COMM_WORLD, 0);
    gathers(MPI_COMM_WORLD, 0);
    scatters(MPI_COMM_WORLD, 0);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    bcasts(half, 5);
    gathers(half, 5);
    scatters(half, 5);
    alltoalls(half, 5);
    MPI_Comm_free(&half);

    /* the broadcast runs among node leaders: counted on some ranks only */
    unsigned long long mine[4] = {calls(hg), calls(hs), calls(hb), calls(ha)}, sum[4];
    MPI_Allreduce(mine, sum, 4, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    /* PXTEST_EXPECT_TOPO: the collectives whose topology-aware algorithm
     * must have run, e.g. "gather,scatter"; the others must not have */
    const char *expect = getenv("PXTEST_EXPECT_TOPO");
    static const char *const names[4] = {"gather", "scatter", "bcast", "alltoall"};
    if (expect && rank == 0)
        for (int i = 0; i < 4; i++) {
            int want = strstr(expect, names[i]) != NULL;
            if ((want && sum[i] == 0) || (!want && sum[i] != 0) ||
                mine[i] == (unsigned long long)-1) {
                fprintf(stderr, "topology-aware %s ran %llu times in all (%s)\n", names[i], sum[i],
                        want ? "expected some" : "expected none");
                bad++;
            }
        }
    int total;
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s topo_coll np=%d\n", total ? "FAIL" : "PASS", size);
    MPI_T_pvar_session_free(&ses);
    MPI_T_finalize();
    MPI_Finalize();
    return total != 0;
}
