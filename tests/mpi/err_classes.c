/* Invalid arguments under MPI_ERRORS_RETURN give the right error class and
 * no crash: rank, tag, communicator, datatype, count, root, op; error
 * handlers (default fatal, set/get, inherited by Comm_dup), Error_string
 * and Error_class for every class; communication still works afterwards. */
#include "px_test.h"

static int err_class(int rc)
{
    int cls = -12345;
    if (MPI_Error_class(rc, &cls) != MPI_SUCCESS)
        return -12345;
    return cls;
}

#define EXPECT_CLASS(call, cls)                                                                    \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        PX_CHECK(rc_ != MPI_SUCCESS && err_class(rc_) == (cls),                                    \
                 "%s: rc %d class %d, expected %s (%d)", #call, rc_, err_class(rc_), #cls, cls);   \
        checks++;                                                                                  \
    } while (0)

static int checks;

static void handlers(void)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_Comm dup;

    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    PX_CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler of COMM_WORLD is not "
                                         "MPI_ERRORS_ARE_FATAL");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    PX_CHECK(eh == MPI_ERRORS_RETURN, "get_errhandler after set");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_get_errhandler(dup, &eh);
    PX_CHECK(eh == MPI_ERRORS_RETURN, "Comm_dup did not inherit the handler");
    /* The dup's handler is used for errors on the dup. */
    int x = 0;
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, px_test_size, 0, dup), MPI_ERR_RANK);
    MPI_Comm_free(&dup);
}

static void point_to_point(void)
{
    int n = px_test_size, me = px_test_rank, x = 1, y = 0;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    int flag;

    /* Ranks. */
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, n, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Isend(&x, 1, MPI_INT, n + 3, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Recv(&y, 1, MPI_INT, n, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Irecv(&y, 1, MPI_INT, -9, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Ssend(&x, 1, MPI_INT, n, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Probe(n, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Iprobe(n, 0, MPI_COMM_WORLD, &flag, &st), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Send_init(&x, 1, MPI_INT, n, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Sendrecv(&x, 1, MPI_INT, n, 0, &y, 1, MPI_INT, me, 0, MPI_COMM_WORLD, &st),
                 MPI_ERR_RANK);

    /* Tags: negative (other than ANY_TAG on receives), ANY_TAG on sends. */
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, me, -1, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, me, -100, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, me, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Isend(&x, 1, MPI_INT, me, -5, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Irecv(&y, 1, MPI_INT, me, -5, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Recv(&y, 1, MPI_INT, me, -3, MPI_COMM_WORLD, &st), MPI_ERR_TAG);

    /* Communicator. */
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Recv(&y, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Irecv(&y, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM);
    {
        int rank = -1, size = -1;
        EXPECT_CLASS(MPI_Comm_rank(MPI_COMM_NULL, &rank), MPI_ERR_COMM);
        EXPECT_CLASS(MPI_Comm_size(MPI_COMM_NULL, &size), MPI_ERR_COMM);
    }

    /* Datatype. */
    EXPECT_CLASS(MPI_Send(&x, 1, MPI_DATATYPE_NULL, me, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Irecv(&y, 1, MPI_DATATYPE_NULL, me, 0, MPI_COMM_WORLD, &r), MPI_ERR_TYPE);

    /* Count. */
    EXPECT_CLASS(MPI_Send(&x, -1, MPI_INT, me, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Irecv(&y, -4, MPI_INT, me, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);

    /* None of the failed sends may have queued a message. Those with a valid
     * destination all targeted this rank; other ranks may already be sending
     * valid traffic of later phases, so only probe for this rank's own. */
    flag = 1;
    MPI_Iprobe(me, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    PX_CHECK(flag == 0, "a failed send was delivered (tag %d)", st.MPI_TAG);
}

static void collectives(void)
{
    int n = px_test_size, x = 3, y = 0;

    EXPECT_CLASS(MPI_Bcast(&x, 1, MPI_INT, n, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Bcast(&x, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, n + 2, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Bcast(&x, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Bcast(&x, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
}

static void strings(void)
{
    static const int classes[] = {
        MPI_SUCCESS,      MPI_ERR_BUFFER,   MPI_ERR_COUNT,   MPI_ERR_TYPE,      MPI_ERR_TAG,
        MPI_ERR_COMM,     MPI_ERR_RANK,     MPI_ERR_REQUEST, MPI_ERR_ROOT,      MPI_ERR_GROUP,
        MPI_ERR_OP,       MPI_ERR_TOPOLOGY, MPI_ERR_DIMS,    MPI_ERR_ARG,       MPI_ERR_UNKNOWN,
        MPI_ERR_TRUNCATE, MPI_ERR_OTHER,    MPI_ERR_INTERN,  MPI_ERR_IN_STATUS, MPI_ERR_PENDING,
        MPI_ERR_NO_MEM,   MPI_ERR_INFO};
    const int nc = (int)(sizeof(classes) / sizeof(classes[0]));
    char first[MPI_MAX_ERROR_STRING] = "";
    int distinct = 0, lastcode = MPI_ERR_LASTCODE;

    for (int i = 0; i < nc; i++) {
        char s[MPI_MAX_ERROR_STRING];
        int len = -1, cls = -1;
        memset(s, 0, sizeof(s));
        PX_CHECK(MPI_Error_string(classes[i], s, &len) == MPI_SUCCESS, "Error_string(%d) failed",
                 classes[i]);
        PX_CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(s) == len,
                 "Error_string(%d): length %d for '%s'", classes[i], len, s);
        MPI_Error_class(classes[i], &cls);
        PX_CHECK(cls == classes[i], "Error_class(%d) = %d", classes[i], cls);
        PX_CHECK(classes[i] <= lastcode, "class %d above MPI_ERR_LASTCODE %d", classes[i],
                 lastcode);
        if (i == 1)
            strcpy(first, s);
        else if (i > 1 && strcmp(first, s) != 0)
            distinct = 1;
    }
    PX_CHECK(distinct, "all error strings are the same");

    /* A real error code maps back to its class, and has a message. */
    int x = 0;
    int rc = MPI_Send(&x, 1, MPI_INT, px_test_size, 0, MPI_COMM_WORLD);
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, s, &len);
    PX_CHECK(err_class(rc) == MPI_ERR_RANK && len > 0, "code %d: class %d, message '%s'", rc,
             err_class(rc), s);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "err_classes");
    handlers();
    point_to_point();
    collectives();
    strings();

    /* Everything still works, with errors returned or fatal again. */
    {
        int me = px_test_rank, n = px_test_size, got = -1, sum = 0;
        PX_MPI(MPI_Sendrecv(&me, 1, MPI_INT, (me + 1) % n, 1, &got, 1, MPI_INT, (me + n - 1) % n, 1,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        PX_CHECK(got == (me + n - 1) % n, "ring after errors got %d", got);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        PX_CHECK(sum == n * (n - 1) / 2, "Allreduce after errors: %d", sum);
    }
    return px_test_finish("%d invalid calls gave the expected class", checks);
}
