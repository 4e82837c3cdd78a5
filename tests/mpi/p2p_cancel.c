/* Cancel of receives: a posted, unmatched receive is cancelled
 * (Test_cancelled true, buffer untouched) and a later message with its tag
 * goes to the next receive; a receive already matched is not cancelled
 * (Test_cancelled false, data delivered), for eager and rendezvous sizes;
 * ANY_SOURCE and persistent receives cancel too. */
#include "px_test.h"

#define LARGE (1 << 20)

static uint64_t seed_of(int src, int what) { return (uint64_t)src * 100 + (uint64_t)what; }

/* Cancel an unmatched receive; returns nothing was received. */
static void cancel_unmatched(int src, int tag, const char *what)
{
    int buf[4] = {9, 9, 9, 9}, cancelled = -1, flag = 0;
    MPI_Request r;
    MPI_Status st;

    MPI_Irecv(buf, 4, MPI_INT, src, tag, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &cancelled);
    PX_CHECK(cancelled == 1, "%s: Test_cancelled %d on an unmatched receive", what, cancelled);
    PX_CHECK(r == MPI_REQUEST_NULL, "%s: Wait left the request", what);
    PX_CHECK(buf[0] == 9 && buf[3] == 9, "%s: cancelled receive wrote data", what);

    /* Cancel then Test (not Wait) completes the request as well. */
    MPI_Irecv(buf, 4, MPI_INT, src, tag, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    double end = MPI_Wtime() + 5.0;
    while (!flag && MPI_Wtime() < end)
        MPI_Test(&r, &flag, &st);
    PX_REQUIRE(flag, "%s: cancelled receive never completed in Test", what);
    cancelled = -1;
    MPI_Test_cancelled(&st, &cancelled);
    PX_CHECK(cancelled == 1, "%s: Test_cancelled %d after Test", what, cancelled);
}

static void receiver(int peer)
{
    const int sizes[2] = {16, LARGE};
    char *a = malloc(LARGE), *b = malloc(LARGE);
    MPI_Request r;
    MPI_Status st;
    int cancelled = -1, count = -1;

    /* 1. Unmatched receives, specific and wildcard source, then the real
     *    message with that tag must reach a fresh receive. */
    cancel_unmatched(peer, 5, "specific source");
    cancel_unmatched(MPI_ANY_SOURCE, 5, "ANY_SOURCE");
    MPI_Send(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD); /* now send tag 5 */
    {
        int v[4] = {0};
        MPI_Recv(v, 4, MPI_INT, peer, 5, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        PX_CHECK(count == 4 && v[0] == 500 + peer && v[3] == 503 + peer,
                 "message after cancelled receives: count %d v0 %d", count, v[0]);
    }

    /* 2. Matched receives: msg1 and msg2 share a tag, so once msg2 is in the
     *    second receive, msg1 is matched to the first. Cancel must fail. */
    for (int k = 0; k < 2; k++) {
        int n = sizes[k];
        memset(a, 0, n);
        MPI_Irecv(a, n, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &r);
        MPI_Send(NULL, 0, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
        MPI_Recv(b, 1, MPI_BYTE, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Cancel(&r);
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &cancelled);
        PX_CHECK(cancelled == 0, "matched %d B receive was cancelled", n);
        MPI_Get_count(&st, MPI_BYTE, &count);
        PX_CHECK(count == n && px_verify(a, n, seed_of(peer, k)) == (size_t)n,
                 "matched %d B receive after Cancel: count %d or data wrong", n, count);
    }

    /* 3. Persistent receive: cancel an active one, then reuse it. */
    {
        int v = -1;
        MPI_Recv_init(&v, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, &r);
        MPI_Start(&r);
        MPI_Cancel(&r);
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &cancelled);
        PX_CHECK(cancelled == 1, "cancelled persistent receive: %d", cancelled);
        PX_CHECK(v == -1, "cancelled persistent receive wrote %d", v);
        MPI_Start(&r);
        MPI_Send(NULL, 0, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &cancelled);
        PX_CHECK(cancelled == 0 && v == 88,
                 "restarted persistent receive: "
                 "cancelled %d v %d",
                 cancelled, v);
        MPI_Request_free(&r);
    }
    free(a);
    free(b);
}

static void sender(int peer)
{
    const int sizes[2] = {16, LARGE};
    char *a = malloc(LARGE), one = 1;
    int v[4] = {500 + px_test_rank, 501 + px_test_rank, 502 + px_test_rank, 503 + px_test_rank};

    MPI_Recv(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(v, 4, MPI_INT, peer, 5, MPI_COMM_WORLD);
    for (int k = 0; k < 2; k++) {
        MPI_Request r[2];
        px_fill(a, sizes[k], seed_of(px_test_rank, k));
        MPI_Recv(NULL, 0, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Isend(a, sizes[k], MPI_BYTE, peer, 6, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(&one, 1, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    }
    int y = 88;
    MPI_Recv(NULL, 0, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&y, 1, MPI_INT, peer, 8, MPI_COMM_WORLD);
    free(a);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "p2p_cancel");
    int peer = px_pair_peer(px_test_rank, px_test_size);

    if (peer >= 0) {
        if (px_test_rank % 2)
            receiver(peer);
        else
            sender(peer);
    } else {
        /* Alone: unmatched cancels, then a self message still arrives. */
        int v = 3, w = 0;
        MPI_Request r;
        cancel_unmatched(px_test_rank, 5, "self");
        MPI_Isend(&v, 1, MPI_INT, px_test_rank, 5, MPI_COMM_WORLD, &r);
        MPI_Recv(&w, 1, MPI_INT, px_test_rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        PX_CHECK(w == 3, "self message after cancel: %d", w);
    }
    return px_test_finish("cancel of unmatched, matched (16 B, 1 MB), persistent "
                          "receives");
}
