/* Truncation: a message longer than the receive buffer gives error class
 * MPI_ERR_TRUNCATE under MPI_ERRORS_RETURN (return code of Recv/Wait/Test,
 * status.MPI_ERROR with MPI_ERR_IN_STATUS for Waitall), writes nothing past
 * the buffer, and leaves the stream usable. Eager and rendezvous sizes;
 * rendezvous truncated within the bytes that travel with the request over
 * network channels (PX_RNDV_HEAD) and beyond them. */
#include "px_test.h"

#define TAG 5
#define BIG (1 << 20)
#define GUARD 256
#define SENTINEL 0x5a

enum {
    M_SMALL_TR,
    M_OK1,
    M_BIG_TR,
    M_OK2,
    M_MID_TR,
    M_WAIT_TR,
    M_TEST_TR,
    M_ALL_A,
    M_ALL_B,
    M_ALL_C,
    M_ZERO_TR,
    M_OK3,
    M_COUNT
};

/* Bytes sent per message, and bytes the receiver posts for it. */
static const int sent[M_COUNT] = {400, 80, BIG, 80, BIG, BIG, 200, 40, BIG, 40, 4, 4};
static const int posted[M_COUNT] = {40, 400, 1000, 400, 100000, 4096, 196, 40, 400, 40, 0, 4};

static uint64_t seed_of(int src, int m) { return (uint64_t)src * 1000 + (uint64_t)m; }

static int err_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

static unsigned char *guarded(int m)
{
    unsigned char *b = malloc((size_t)posted[m] + GUARD);
    memset(b, SENTINEL, (size_t)posted[m] + GUARD);
    return b;
}

/* Truncated or not, nothing beyond the posted size may be written; what
 * fits must be the head of the message. */
static void check_buf(const unsigned char *b, int src, int m)
{
    int n = posted[m] < sent[m] ? posted[m] : sent[m];
    int bad = -1;
    for (int i = 0; i < GUARD; i++)
        if (b[posted[m] + i] != SENTINEL) {
            bad = i;
            break;
        }
    PX_CHECK(bad < 0, "message %d: byte %d past the %d-byte buffer overwritten", m, bad, posted[m]);
    PX_CHECK(px_verify(b, n, seed_of(src, m)) == (size_t)n,
             "message %d: the first %d bytes are not the message's", m, n);
}

static void receiver(int src)
{
    MPI_Status st;
    MPI_Request req;
    unsigned char *b;
    int rc, flag;

    /* Blocking receives, eager and rendezvous, each followed by a good one. */
    const int blocking[] = {M_SMALL_TR, M_OK1, M_BIG_TR, M_OK2, M_MID_TR};
    for (int k = 0; k < 5; k++) {
        int m = blocking[k];
        b = guarded(m);
        rc = MPI_Recv(b, posted[m], MPI_BYTE, src, TAG, MPI_COMM_WORLD, &st);
        if (sent[m] > posted[m])
            PX_CHECK(err_class(rc) == MPI_ERR_TRUNCATE,
                     "Recv of %d bytes into %d: class %d, expected MPI_ERR_TRUNCATE", sent[m],
                     posted[m], err_class(rc));
        else
            PX_CHECK(rc == MPI_SUCCESS, "Recv after truncation failed: %d", rc);
        check_buf(b, src, m);
        free(b);
    }

    b = guarded(M_WAIT_TR);
    MPI_Irecv(b, posted[M_WAIT_TR], MPI_BYTE, src, TAG, MPI_COMM_WORLD, &req);
    rc = MPI_Wait(&req, &st);
    PX_CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "Wait: class %d", err_class(rc));
    PX_CHECK(req == MPI_REQUEST_NULL, "Wait left the request active");
    check_buf(b, src, M_WAIT_TR);
    free(b);

    b = guarded(M_TEST_TR);
    MPI_Irecv(b, posted[M_TEST_TR], MPI_BYTE, src, TAG, MPI_COMM_WORLD, &req);
    flag = 0;
    rc = MPI_SUCCESS;
    while (!flag && rc == MPI_SUCCESS)
        rc = MPI_Test(&req, &flag, &st);
    PX_CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "Test: class %d", err_class(rc));
    check_buf(b, src, M_TEST_TR);
    free(b);

    {
        MPI_Request reqs[3];
        MPI_Status sts[3];
        unsigned char *bs[3];
        for (int k = 0; k < 3; k++) {
            bs[k] = guarded(M_ALL_A + k);
            MPI_Irecv(bs[k], posted[M_ALL_A + k], MPI_BYTE, src, TAG, MPI_COMM_WORLD, &reqs[k]);
        }
        for (int k = 0; k < 3; k++)
            sts[k].MPI_ERROR = -12345;
        rc = MPI_Waitall(3, reqs, sts);
        PX_CHECK(rc == MPI_ERR_IN_STATUS, "Waitall: rc %d, expected MPI_ERR_IN_STATUS", rc);
        PX_CHECK(err_class(sts[1].MPI_ERROR) == MPI_ERR_TRUNCATE,
                 "Waitall: truncated request has MPI_ERROR class %d", err_class(sts[1].MPI_ERROR));
        /* The others either completed (MPI_SUCCESS) or are still pending
         * (MPI_ERR_PENDING, request still active) - both are standard. */
        for (int k = 0; k < 3; k += 2) {
            PX_CHECK(sts[k].MPI_ERROR == MPI_SUCCESS || sts[k].MPI_ERROR == MPI_ERR_PENDING,
                     "Waitall: good request %d has MPI_ERROR %d", k, sts[k].MPI_ERROR);
            if (sts[k].MPI_ERROR == MPI_ERR_PENDING) {
                rc = MPI_Wait(&reqs[k], &st);
                PX_CHECK(rc == MPI_SUCCESS, "Wait on pending request %d: %d", k, rc);
            } else {
                PX_CHECK(reqs[k] == MPI_REQUEST_NULL, "completed request %d not freed", k);
            }
        }
        for (int k = 0; k < 3; k++) {
            check_buf(bs[k], src, M_ALL_A + k);
            free(bs[k]);
        }
    }

    b = guarded(M_ZERO_TR);
    rc = MPI_Recv(b, 0, MPI_BYTE, src, TAG, MPI_COMM_WORLD, &st);
    PX_CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "Recv into 0 bytes: class %d", err_class(rc));
    check_buf(b, src, M_ZERO_TR);
    free(b);

    b = guarded(M_OK3);
    rc = MPI_Recv(b, posted[M_OK3], MPI_BYTE, src, TAG, MPI_COMM_WORLD, &st);
    PX_CHECK(rc == MPI_SUCCESS, "last Recv failed: %d", rc);
    check_buf(b, src, M_OK3);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Request reqs[M_COUNT];
    unsigned char *bufs[M_COUNT];

    px_test_init(&argc, &argv, "p2p_truncate");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int peer = px_pair_peer(px_test_rank, px_test_size);
    int self = peer < 0;
    if (self)
        peer = px_test_rank;

    if (self || px_test_rank % 2 == 0) {
        for (int m = 0; m < M_COUNT; m++) {
            bufs[m] = malloc(sent[m]);
            px_fill(bufs[m], sent[m], seed_of(px_test_rank, m));
            PX_MPI(MPI_Isend(bufs[m], sent[m], MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &reqs[m]));
        }
    }
    if (self || px_test_rank % 2 == 1)
        receiver(peer);
    if (self || px_test_rank % 2 == 0) {
        /* Truncation is the receiver's error; the sends complete normally. */
        int rc = MPI_Waitall(M_COUNT, reqs, MPI_STATUSES_IGNORE);
        PX_CHECK(rc == MPI_SUCCESS, "sender Waitall rc %d", rc);
        for (int m = 0; m < M_COUNT; m++)
            free(bufs[m]);
    }
    return px_test_finish("7 truncations (eager, rendezvous, Recv/Wait/Test/Waitall)");
}
