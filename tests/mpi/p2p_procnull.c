/* MPI_PROC_NULL as source or destination: every operation succeeds at once,
 * receive buffers stay untouched, and the status says source MPI_PROC_NULL,
 * tag MPI_ANY_TAG, count 0 - for blocking, nonblocking, multiple-completion,
 * persistent and combined operations, also with MPI_DATATYPE_NULL. */
#include "px_test.h"

static void check_null_status(const MPI_Status *st, const char *what)
{
    int count = -1, elems = -1;
    MPI_Get_count(st, MPI_INT, &count);
    MPI_Get_elements(st, MPI_INT, &elems);
    PX_CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && count == 0 &&
                 elems == 0,
             "%s: status source %d tag %d count %d elements %d, expected "
             "PROC_NULL/ANY_TAG/0",
             what, st->MPI_SOURCE, st->MPI_TAG, count, elems);
}

int main(int argc, char **argv)
{
    int x[4] = {1, 2, 3, 4}, y[4] = {7, 7, 7, 7};
    MPI_Status st, sts[4];
    MPI_Request r[4];
    int flag = 0, idx = -1;

    px_test_init(&argc, &argv, "p2p_procnull");

    MPI_Send(x, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Ssend(x, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Rsend(x, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Bsend(x, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Recv(y, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    check_null_status(&st, "Recv");

    MPI_Irecv(y, 4, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &r[0]);
    MPI_Wait(&r[0], &st);
    check_null_status(&st, "Irecv/Wait");
    PX_CHECK(r[0] == MPI_REQUEST_NULL, "Wait did not free the request");

    MPI_Irecv(y, 4, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &r[0]);
    while (!flag)
        MPI_Test(&r[0], &flag, &st);
    check_null_status(&st, "Irecv/Test");

    MPI_Isend(x, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(y, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &r[1]);
    MPI_Issend(x, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &r[2]);
    MPI_Irecv(y, 4, MPI_INT, MPI_PROC_NULL, 4, MPI_COMM_WORLD, &r[3]);
    MPI_Waitall(4, r, sts);
    check_null_status(&sts[1], "Irecv/Waitall");
    check_null_status(&sts[3], "Irecv/Waitall");

    MPI_Irecv(y, 4, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &r[0]);
    MPI_Waitany(1, r, &idx, &st);
    PX_CHECK(idx == 0, "Waitany index %d", idx);
    check_null_status(&st, "Irecv/Waitany");

    MPI_Sendrecv(x, 4, MPI_INT, MPI_PROC_NULL, 6, y, 4, MPI_INT, MPI_PROC_NULL, 6, MPI_COMM_WORLD,
                 &st);
    check_null_status(&st, "Sendrecv");
    MPI_Sendrecv_replace(y, 4, MPI_INT, MPI_PROC_NULL, 7, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &st);
    check_null_status(&st, "Sendrecv_replace");

    MPI_Probe(MPI_PROC_NULL, 8, MPI_COMM_WORLD, &st);
    check_null_status(&st, "Probe");
    flag = 0;
    MPI_Iprobe(MPI_PROC_NULL, 8, MPI_COMM_WORLD, &flag, &st);
    PX_CHECK(flag, "Iprobe(PROC_NULL) flag 0");
    check_null_status(&st, "Iprobe");

    MPI_Send_init(x, 4, MPI_INT, MPI_PROC_NULL, 9, MPI_COMM_WORLD, &r[0]);
    MPI_Recv_init(y, 4, MPI_INT, MPI_PROC_NULL, 9, MPI_COMM_WORLD, &r[1]);
    for (int it = 0; it < 3; it++) {
        MPI_Startall(2, r);
        MPI_Waitall(2, r, sts);
        check_null_status(&sts[1], "Recv_init/Startall/Waitall");
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);

    PX_CHECK(y[0] == 7 && y[1] == 7 && y[2] == 7 && y[3] == 7,
             "a PROC_NULL receive modified the buffer");

    /* No data moves, so MPI_DATATYPE_NULL is accepted with PROC_NULL (as in
     * MPICH). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 11, MPI_COMM_WORLD, &r[0]);
    PX_CHECK(rc == MPI_SUCCESS, "Irecv(PROC_NULL, MPI_DATATYPE_NULL) rc %d", rc);
    MPI_Wait(&r[0], &st);
    check_null_status(&st, "Irecv/Wait with MPI_DATATYPE_NULL");
    rc = MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 11, MPI_COMM_WORLD, &st);
    PX_CHECK(rc == MPI_SUCCESS, "Recv(PROC_NULL, MPI_DATATYPE_NULL) rc %d", rc);
    check_null_status(&st, "Recv with MPI_DATATYPE_NULL");
    rc = MPI_Send(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 11, MPI_COMM_WORLD);
    PX_CHECK(rc == MPI_SUCCESS, "Send(PROC_NULL, MPI_DATATYPE_NULL) rc %d", rc);
    rc = MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 11, NULL, 0, MPI_DATATYPE_NULL,
                      MPI_PROC_NULL, 11, MPI_COMM_WORLD, &st);
    PX_CHECK(rc == MPI_SUCCESS, "Sendrecv(PROC_NULL, MPI_DATATYPE_NULL) rc %d", rc);
    rc = MPI_Recv_init(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 11, MPI_COMM_WORLD, &r[0]);
    PX_CHECK(rc == MPI_SUCCESS, "Recv_init(PROC_NULL, MPI_DATATYPE_NULL) rc %d", rc);
    if (rc == MPI_SUCCESS) {
        MPI_Start(&r[0]);
        MPI_Wait(&r[0], &st);
        check_null_status(&st, "Recv_init/Start with MPI_DATATYPE_NULL");
        MPI_Request_free(&r[0]);
    }
    /* with a real peer too when the count is 0 (as in MPICH) */
    rc = MPI_Isend(NULL, 0, MPI_DATATYPE_NULL, px_test_rank, 11, MPI_COMM_WORLD, &r[0]);
    PX_CHECK(rc == MPI_SUCCESS, "Isend(0, MPI_DATATYPE_NULL) to a rank: rc %d", rc);
    rc = MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, px_test_rank, 11, MPI_COMM_WORLD, &st);
    PX_CHECK(rc == MPI_SUCCESS && st.MPI_SOURCE == px_test_rank && st.MPI_TAG == 11,
             "Recv(0, MPI_DATATYPE_NULL) from a rank: rc %d", rc);
    if (rc == MPI_SUCCESS)
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    /* and refused when data would move */
    int cls = -1, one = 1;
    rc = MPI_Send(&one, 1, MPI_DATATYPE_NULL, px_test_rank, 11, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    PX_CHECK(cls == MPI_ERR_TYPE, "Send(1, MPI_DATATYPE_NULL) to a rank: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* Ring with open ends: the ends talk to PROC_NULL. */
    {
        int me = px_test_rank, n = px_test_size, got = -5;
        int left = me > 0 ? me - 1 : MPI_PROC_NULL;
        int right = me < n - 1 ? me + 1 : MPI_PROC_NULL;
        MPI_Sendrecv(&me, 1, MPI_INT, right, 10, &got, 1, MPI_INT, left, 10, MPI_COMM_WORLD, &st);
        if (left == MPI_PROC_NULL) {
            PX_CHECK(got == -5, "chain start received %d", got);
            check_null_status(&st, "chain Sendrecv");
        } else {
            PX_CHECK(got == left && st.MPI_SOURCE == left, "chain received %d from %d", got,
                     st.MPI_SOURCE);
        }
    }
    return px_test_finish("PROC_NULL with 12 kinds of operation");
}
