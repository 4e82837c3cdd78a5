/* A session beside the world model: opened before MPI_Init, its WORLD
 * group is MPI_COMM_WORLD's and its communicator congruent to it, yet
 * messages on the two never match each other's receives; a bad session
 * handle is MPI_ERR_SESSION; MPI_Finalize with the session still open ends
 * the world model only (MPI_Finalized says so) and the session's
 * communicator still works until MPI_Session_finalize. */
#include "px_test.h"

int main(int argc, char **argv)
{
    MPI_Session s = MPI_SESSION_NULL;
    int flag = -1;
    if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) != MPI_SUCCESS) {
        fprintf(stderr, "FAIL sessions_world: MPI_Session_init\n");
        return 1;
    }
    MPI_Initialized(&flag);
    PX_CHECK(flag == 0, "MPI_Initialized is %d with only a session", flag);
    MPI_Group sg;
    PX_MPI(MPI_Group_from_session_pset(s, "mpi://WORLD", &sg));
    /* the world model joins the runtime the session brought up */
    px_test_init(&argc, &argv, "sessions_world");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int me = px_test_rank, n = px_test_size;
    MPI_Initialized(&flag);
    PX_CHECK(flag == 1, "MPI_Initialized is %d after MPI_Init", flag);

    MPI_Group wg;
    int cmp = -1;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(sg, wg, &cmp);
    PX_CHECK(cmp == MPI_IDENT, "session WORLD group vs MPI_COMM_WORLD's: %d", cmp);
    MPI_Comm sc = MPI_COMM_NULL;
    PX_MPI(MPI_Comm_create_from_group(sg, "org.plexus.test.sw", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                      &sc));
    MPI_Comm_compare(sc, MPI_COMM_WORLD, &cmp);
    PX_CHECK(cmp == MPI_CONGRUENT, "session communicator vs MPI_COMM_WORLD: %d", cmp);

    /* the same (source, tag) on both: each receive gets its own message */
    int right = (me + 1) % n, left = (me + n - 1) % n;
    int vw = 100 + me, vs = 200 + me, iw = -1, is = -1;
    MPI_Request q[2];
    PX_MPI(MPI_Isend(&vw, 1, MPI_INT, right, 4, MPI_COMM_WORLD, &q[0]));
    PX_MPI(MPI_Isend(&vs, 1, MPI_INT, right, 4, sc, &q[1]));
    PX_MPI(MPI_Recv(&is, 1, MPI_INT, left, 4, sc, MPI_STATUS_IGNORE));
    PX_MPI(MPI_Recv(&iw, 1, MPI_INT, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    PX_MPI(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    PX_CHECK(iw == 100 + left && is == 200 + left, "world got %d, session got %d (left %d)", iw, is,
             left);
    /* collectives on both, interleaved */
    int a = me + 1, b = 2 * me, ra = -1, rb = -1;
    PX_MPI(MPI_Allreduce(&a, &ra, 1, MPI_INT, MPI_SUM, sc));
    PX_MPI(MPI_Allreduce(&b, &rb, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    PX_CHECK(ra == n * (n + 1) / 2 && rb == n * (n - 1), "allreduce: %d and %d", ra, rb);

    /* a handle that is no session, through MPI_COMM_WORLD's handler */
    int np = -1;
    PX_EXPECT_CLASS(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &np),
                    MPI_ERR_SESSION);
    PX_EXPECT_CLASS(MPI_Session_get_num_psets((MPI_Session)0xb8001234, MPI_INFO_NULL, &np),
                    MPI_ERR_SESSION);
    MPI_Session gone = MPI_SESSION_NULL;
    PX_EXPECT_CLASS(MPI_Session_finalize(&gone), MPI_ERR_SESSION);

    MPI_Group_free(&wg);
    PX_MPI(MPI_Finalize());
    MPI_Finalized(&flag);
    PX_CHECK(flag == 1, "MPI_Finalized is %d after MPI_Finalize", flag);

    /* the session's communicator outlives the world model */
    int total = -1;
    PX_MPI(MPI_Allreduce(&px_test_errors, &total, 1, MPI_INT, MPI_SUM, sc));
    MPI_Comm_free(&sc);
    MPI_Group_free(&sg);
    PX_MPI(MPI_Session_finalize(&s));
    if (me == 0) {
        if (total == 0)
            printf("PASS sessions_world np=%d: a session before MPI_Init and after "
                   "MPI_Finalize, apart from MPI_COMM_WORLD\n",
                   n);
        else
            printf("FAIL sessions_world np=%d: %d failed checks\n", n, total);
        fflush(stdout);
    }
    return total == 0 ? 0 : 1;
}
