/* Persistent collectives (MPI-4.0): each made once with MPI_<Coll>_init,
 * started several times with new data in the buffers between starts, and
 * checked every time; several started together with MPI_Startall and
 * completed in another order; two started in different orders on
 * different ranks; the datatype and user operation freed right
 * after the init (the request keeps them); an inactive request completes at
 * once; MPI_Request_free ends them. Then the v-collectives' arrays of
 * counts and displacements, overwritten and freed right after the init
 * (the request keeps copies, as mpi4py expects), in the int and the
 * large-count inits, the rooted ones with no arrays away from the root. */
#include "px_test.h"

enum { ROUNDS = 3, N = 64 };

static void sum_ints(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void check(int cond, const char *what, int round)
{
    PX_CHECK(cond, "%s, start %d", what, round);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "coll_persistent");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int n = px_test_size, me = px_test_rank;
    int *a = malloc(sizeof(int) * N * n), *b = malloc(sizeof(int) * N * n);
    int *counts = malloc(sizeof(int) * n), *displs = malloc(sizeof(int) * n);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * n);
    for (int i = 0; i < n; i++) {
        counts[i] = N;
        displs[i] = i * N;
        types[i] = MPI_INT;
    }
    MPI_Request bar, bc, ar, red, ga, sc, ag, aa, scn, exs, rsb, gv, agv, av, aw, rs;
    int bcast_buf[N], red_in[N], red_out[N], ar_out[N], one, scan_out, exscan_out = -1;

    /* the datatype and operation go right after the init: the request keeps them */
    MPI_Datatype blk;
    MPI_Op sum;
    PX_MPI(MPI_Type_contiguous(N, MPI_INT, &blk));
    PX_MPI(MPI_Type_commit(&blk));
    PX_MPI(MPI_Op_create(sum_ints, 1, &sum));
    PX_MPI(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &bar));
    PX_MPI(MPI_Bcast_init(bcast_buf, 1, blk, n - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &bc));
    PX_MPI(MPI_Allreduce_init(red_in, ar_out, N, MPI_INT, sum, MPI_COMM_WORLD, MPI_INFO_NULL, &ar));
    PX_MPI(MPI_Type_free(&blk));
    PX_MPI(MPI_Op_free(&sum));
    PX_MPI(MPI_Reduce_init(red_in, red_out, N, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                           &red));
    PX_MPI(MPI_Gather_init(a, N, MPI_INT, b, N, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &ga));
    PX_MPI(MPI_Scatter_init(a, N, MPI_INT, b, N, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &sc));
    PX_MPI(MPI_Allgather_init(a, N, MPI_INT, b, N, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &ag));
    PX_MPI(MPI_Alltoall_init(a, N, MPI_INT, b, N, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &aa));
    PX_MPI(
        MPI_Scan_init(&one, &scan_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &scn));
    PX_MPI(MPI_Exscan_init(&one, &exscan_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                           &exs));
    PX_MPI(MPI_Reduce_scatter_block_init(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                         &rsb));
    PX_MPI(MPI_Gatherv_init(a, N, MPI_INT, b, counts, displs, MPI_INT, 0, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &gv));
    PX_MPI(MPI_Allgatherv_init(a, N, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &agv));
    PX_MPI(MPI_Alltoallv_init(a, counts, displs, MPI_INT, b, counts, displs, MPI_INT,
                              MPI_COMM_WORLD, MPI_INFO_NULL, &av));
    int *bdispls = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++)
        bdispls[i] = displs[i] * (int)sizeof(int);
    PX_MPI(MPI_Alltoallw_init(a, counts, bdispls, types, b, counts, bdispls, types, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &aw));
    PX_MPI(MPI_Reduce_scatter_init(a, b, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                   &rs));

    /* an inactive persistent request completes at once with an empty status */
    MPI_Status st;
    PX_MPI(MPI_Wait(&bc, &st));
    PX_CHECK(bc != MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_ANY_SOURCE,
             "wait on an inactive persistent collective");

    for (int r = 0; r < ROUNDS; r++) {
        int bad;
        /* bcast, allreduce and reduce together, completed in another order */
        for (int i = 0; i < N; i++) {
            bcast_buf[i] = me == n - 1 ? 1000 * r + i : -1;
            red_in[i] = me + r + i;
        }
        MPI_Request three[3] = {bc, ar, red};
        PX_MPI(MPI_Startall(3, three));
        PX_MPI(MPI_Wait(&three[2], MPI_STATUS_IGNORE));
        PX_MPI(MPI_Wait(&three[0], MPI_STATUS_IGNORE));
        PX_MPI(MPI_Wait(&three[1], MPI_STATUS_IGNORE));
        PX_CHECK(three[0] == bc && three[1] == ar, "persistent requests kept their handles");
        bad = 0;
        for (int i = 0; i < N; i++) {
            bad += bcast_buf[i] != 1000 * r + i;
            bad += ar_out[i] != n * (r + i) + n * (n - 1) / 2;
            if (me == 0)
                bad += red_out[i] != n - 1 + r + i;
        }
        check(!bad, "bcast / allreduce with a freed op and type / reduce", r);

        PX_MPI(MPI_Start(&bar));
        PX_MPI(MPI_Wait(&bar, MPI_STATUS_IGNORE));

        /* gather and scatter at root 0 */
        for (int i = 0; i < N * n; i++)
            a[i] = me * 100000 + r * 1000 + i;
        PX_MPI(MPI_Start(&ga));
        PX_MPI(MPI_Wait(&ga, MPI_STATUS_IGNORE));
        bad = 0;
        for (int p = 0; me == 0 && p < n; p++)
            for (int i = 0; i < N; i++)
                bad += b[p * N + i] != p * 100000 + r * 1000 + i;
        check(!bad, "gather", r);
        PX_MPI(MPI_Start(&sc));
        PX_MPI(MPI_Wait(&sc, MPI_STATUS_IGNORE));
        bad = 0;
        for (int i = 0; i < N; i++)
            bad += b[i] != r * 1000 + me * N + i;
        check(!bad, "scatter", r);

        /* the all-to-all family */
        PX_MPI(MPI_Start(&ag));
        PX_MPI(MPI_Wait(&ag, MPI_STATUS_IGNORE));
        bad = 0;
        for (int p = 0; p < n; p++)
            for (int i = 0; i < N; i++)
                bad += b[p * N + i] != p * 100000 + r * 1000 + i;
        check(!bad, "allgather", r);
        MPI_Request all[3] = {aa, av, aw};
        for (int k = 0; k < 3; k++) {
            memset(b, 0xff, sizeof(int) * N * n);
            PX_MPI(MPI_Start(&all[k]));
            PX_MPI(MPI_Wait(&all[k], MPI_STATUS_IGNORE));
            bad = 0;
            for (int p = 0; p < n; p++)
                for (int i = 0; i < N; i++)
                    bad += b[p * N + i] != p * 100000 + r * 1000 + me * N + i;
            check(!bad, k == 0 ? "alltoall" : k == 1 ? "alltoallv" : "alltoallw", r);
        }
        memset(b, 0xff, sizeof(int) * N * n);
        PX_MPI(MPI_Start(&gv));
        PX_MPI(MPI_Wait(&gv, MPI_STATUS_IGNORE));
        PX_MPI(MPI_Start(&agv));
        PX_MPI(MPI_Wait(&agv, MPI_STATUS_IGNORE));
        bad = 0;
        for (int p = 0; p < n; p++)
            for (int i = 0; i < N; i++)
                bad += b[p * N + i] != p * 100000 + r * 1000 + i;
        check(!bad, "gatherv / allgatherv", r);

        /* reductions that scatter, and scans */
        for (int i = 0; i < N * n; i++)
            a[i] = r + i;
        MPI_Request two[2] = {rsb, rs};
        for (int k = 0; k < 2; k++) {
            memset(b, 0xff, sizeof(int) * N);
            PX_MPI(MPI_Start(&two[k]));
            PX_MPI(MPI_Wait(&two[k], MPI_STATUS_IGNORE));
            bad = 0;
            for (int i = 0; i < N; i++)
                bad += b[i] != n * (r + me * N + i);
            check(!bad, k ? "reduce_scatter" : "reduce_scatter_block", r);
        }
        one = r + 1;
        PX_MPI(MPI_Start(&scn));
        PX_MPI(MPI_Start(&exs));
        PX_MPI(MPI_Wait(&exs, MPI_STATUS_IGNORE));
        PX_MPI(MPI_Wait(&scn, MPI_STATUS_IGNORE));
        check(scan_out == (me + 1) * (r + 1), "scan", r);
        check(me == 0 || exscan_out == me * (r + 1), "exscan", r);
    }

    /* the inits match in order; the starts may come in any order */
    for (int r = 0; r < ROUNDS; r++) {
        MPI_Request two[2] = {bc, bar};
        for (int i = 0; i < N; i++)
            bcast_buf[i] = me == n - 1 ? 7 * r + i : -1;
        if (me % 2) {
            PX_MPI(MPI_Start(&two[1]));
            PX_MPI(MPI_Start(&two[0]));
        } else {
            PX_MPI(MPI_Start(&two[0]));
            PX_MPI(MPI_Start(&two[1]));
        }
        PX_MPI(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += bcast_buf[i] != 7 * r + i;
        check(!bad, "bcast and barrier started in different orders", r);
    }

    MPI_Request *reqs[] = {&bar, &bc,  &ar,  &red, &ga,  &sc, &ag, &aa,
                           &scn, &exs, &rsb, &gv,  &agv, &av, &aw, &rs};
    for (size_t k = 0; k < sizeof(reqs) / sizeof(reqs[0]); k++) {
        PX_MPI(MPI_Request_free(reqs[k]));
        PX_CHECK(*reqs[k] == MPI_REQUEST_NULL, "MPI_Request_free did not reset the handle");
    }
    /* arrays gone after the init */
    for (int big = 0; big < 2; big++)
        for (int root = 0; root < n; root++) {
            int *sbuf = malloc(sizeof(int) * (size_t)(n * 2 + 1)), rbuf[2] = {-1, -1};
            int *gbuf = malloc(sizeof(int) * (size_t)(n * 2 + 1));
            int *ic = malloc(sizeof(int) * n), *id = malloc(sizeof(int) * n);
            MPI_Count *cc = malloc(sizeof(MPI_Count) * n);
            MPI_Aint *cd = malloc(sizeof(MPI_Aint) * n);
            PX_REQUIRE(sbuf && gbuf && ic && id && cc && cd, "out of memory");
            for (int i = 0; i < n; i++) {
                ic[i] = cc[i] = 2;
                id[i] = cd[i] = 2 * i;
                sbuf[2 * i] = 100 * root + i, sbuf[2 * i + 1] = -i;
            }
            int at = me == root;
            MPI_Request sv, gvr;
            if (big) {
                PX_MPI(MPI_Scatterv_init_c(at ? sbuf : NULL, at ? cc : NULL, at ? cd : NULL,
                                           MPI_INT, rbuf, 2, MPI_INT, root, MPI_COMM_WORLD,
                                           MPI_INFO_NULL, &sv));
                PX_MPI(MPI_Gatherv_init_c(rbuf, 2, MPI_INT, at ? gbuf : NULL, at ? cc : NULL,
                                          at ? cd : NULL, MPI_INT, root, MPI_COMM_WORLD,
                                          MPI_INFO_NULL, &gvr));
            } else {
                PX_MPI(MPI_Scatterv_init(at ? sbuf : NULL, at ? ic : NULL, at ? id : NULL, MPI_INT,
                                         rbuf, 2, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL,
                                         &sv));
                PX_MPI(MPI_Gatherv_init(rbuf, 2, MPI_INT, at ? gbuf : NULL, at ? ic : NULL,
                                        at ? id : NULL, MPI_INT, root, MPI_COMM_WORLD,
                                        MPI_INFO_NULL, &gvr));
            }
            for (int i = 0; i < n; i++)
                ic[i] = id[i] = -77, cc[i] = cd[i] = -77;
            free(ic), free(id), free(cc), free(cd);
            for (int k = 0; k < n * 2; k++)
                gbuf[k] = -1;
            PX_MPI(MPI_Start(&sv));
            PX_MPI(MPI_Wait(&sv, MPI_STATUS_IGNORE));
            PX_CHECK(rbuf[0] == 100 * root + me && rbuf[1] == -me,
                     "scatterv%s root %d, arrays freed: %d %d", big ? "_c" : "", root, rbuf[0],
                     rbuf[1]);
            PX_MPI(MPI_Start(&gvr));
            PX_MPI(MPI_Wait(&gvr, MPI_STATUS_IGNORE));
            for (int i = 0; at && i < n; i++)
                PX_CHECK(gbuf[2 * i] == 100 * root + i && gbuf[2 * i + 1] == -i,
                         "gatherv%s root %d, arrays freed: block %d", big ? "_c" : "", root, i);
            PX_MPI(MPI_Request_free(&sv));
            PX_MPI(MPI_Request_free(&gvr));
            free(sbuf);
            free(gbuf);
        }
    free(a);
    free(b);
    free(counts);
    free(displs);
    free(bdispls);
    free(types);
    return px_test_finish("16 persistent collectives, %d starts each; v-arrays freed after the "
                          "init",
                          ROUNDS);
}
