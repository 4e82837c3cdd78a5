/* Persistent requests: Send_init/Recv_init/Ssend_init/Bsend_init/Rsend_init
 * started many times with Start and Startall, with the send buffer rewritten
 * between starts (data is read at Start time); inactive requests complete
 * at once with an empty status; Request_free on inactive persistent and on
 * active ordinary requests. (MPI_PROC_NULL persistent requests: p2p_procnull.) */
#include "px_test.h"

#define ITERS 300
#define SMALL 64
#define LARGE (256 * 1024)

static uint64_t seed_of(int src, int kind, int it)
{
    return (uint64_t)src << 40 | (uint64_t)kind << 32 | (uint64_t)it;
}

static void check_data(const char *buf, int n, const MPI_Status *st, int src, int kind, int it,
                       const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    PX_CHECK(count == n && px_verify(buf, n, seed_of(src, kind, it)) == (size_t)n,
             "%s iteration %d: count %d, data %s", what, it, count,
             px_verify(buf, n, seed_of(src, kind, it)) == (size_t)n ? "ok" : "wrong");
}

static void check_empty(MPI_Request *r, const char *what)
{
    MPI_Status st;
    int flag = 0, count = -1;
    st.MPI_SOURCE = st.MPI_TAG = 4242;
    MPI_Test(r, &flag, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    PX_CHECK(flag && *r != MPI_REQUEST_NULL, "%s: Test on inactive request flag %d", what, flag);
    PX_CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && count == 0,
             "%s: inactive request status %d/%d/%d, expected empty", what, st.MPI_SOURCE,
             st.MPI_TAG, count);
    MPI_Wait(r, &st);
    PX_CHECK(*r != MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_ANY_SOURCE,
             "%s: Wait on inactive request", what);
}

/* Standard mode, two requests each side, Start and Startall alternating. */
static void standard(int peer, int send, int recv)
{
    char *sb[2] = {malloc(SMALL), malloc(LARGE)};
    char *rb[2] = {malloc(SMALL), malloc(LARGE)};
    int n[2] = {SMALL, LARGE};
    MPI_Request sr[2], rr[2], all[4];
    MPI_Status st[4];

    if (recv)
        for (int k = 0; k < 2; k++)
            MPI_Recv_init(rb[k], n[k], MPI_BYTE, peer, 20 + k, MPI_COMM_WORLD, &rr[k]);
    if (send)
        for (int k = 0; k < 2; k++)
            MPI_Send_init(sb[k], n[k], MPI_BYTE, peer, 20 + k, MPI_COMM_WORLD, &sr[k]);
    if (recv)
        check_empty(&rr[0], "fresh Recv_init");
    if (send)
        check_empty(&sr[1], "fresh Send_init");

    for (int it = 0; it < ITERS; it++) {
        int na = 0;
        if (recv)
            for (int k = 0; k < 2; k++) {
                memset(rb[k], 0, n[k]);
                all[na++] = rr[k];
            }
        if (send)
            for (int k = 0; k < 2; k++) {
                px_fill(sb[k], n[k], seed_of(px_test_rank, k, it));
                all[na++] = sr[k];
            }
        if (it % 2) {
            MPI_Startall(na, all);
        } else {
            for (int k = 0; k < na; k++)
                MPI_Start(&all[k]);
        }
        MPI_Waitall(na, all, st);
        for (int k = 0; k < na; k++)
            PX_REQUIRE(all[k] != MPI_REQUEST_NULL, "Waitall freed a persistent request");
        if (recv)
            for (int k = 0; k < 2; k++)
                check_data(rb[k], n[k], &st[k], peer, k, it, "Send_init/Recv_init");
    }
    if (recv) {
        check_empty(&rr[1], "completed Recv_init");
        for (int k = 0; k < 2; k++) {
            MPI_Request_free(&rr[k]);
            PX_CHECK(rr[k] == MPI_REQUEST_NULL, "Request_free left the handle");
        }
    }
    if (send)
        for (int k = 0; k < 2; k++)
            MPI_Request_free(&sr[k]);
    for (int k = 0; k < 2; k++) {
        free(sb[k]);
        free(rb[k]);
    }
}

/* Synchronous, buffered and ready persistent sends, one request each. */
static void other_modes(int peer, int send, int recv, int self)
{
    char *sb = malloc(LARGE), *rb = malloc(LARGE);
    int bsize = LARGE + MPI_BSEND_OVERHEAD;
    char *att = malloc(bsize);
    MPI_Request s[3], r;
    MPI_Status st;
    const int iters = ITERS / 3;

    if (send) {
        MPI_Ssend_init(sb, LARGE, MPI_BYTE, peer, 30, MPI_COMM_WORLD, &s[0]);
        MPI_Bsend_init(sb, LARGE, MPI_BYTE, peer, 30, MPI_COMM_WORLD, &s[1]);
        MPI_Rsend_init(sb, SMALL, MPI_BYTE, peer, 30, MPI_COMM_WORLD, &s[2]);
        MPI_Buffer_attach(att, bsize);
    }
    if (recv)
        MPI_Recv_init(rb, LARGE, MPI_BYTE, peer, 30, MPI_COMM_WORLD, &r);

    for (int it = 0; it < iters; it++) {
        int mode = it % 3, n = mode == 2 ? SMALL : LARGE;
        if (recv) {
            memset(rb, 0, LARGE);
            MPI_Start(&r);
            if (!self)
                MPI_Send(NULL, 0, MPI_BYTE, peer, 31, MPI_COMM_WORLD);
        }
        if (send) {
            if (!self)
                MPI_Recv(NULL, 0, MPI_BYTE, peer, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            px_fill(sb, n, seed_of(px_test_rank, 10 + mode, it));
            MPI_Start(&s[mode]);
            if (mode == 1) {
                /* Buffered: complete before the receiver has to act. */
                MPI_Wait(&s[mode], MPI_STATUS_IGNORE);
                memset(sb, 0xee, LARGE);
            }
        }
        if (recv) {
            MPI_Wait(&r, &st);
            check_data(rb, n, &st, peer, 10 + mode, it,
                       mode == 0   ? "Ssend_init"
                       : mode == 1 ? "Bsend_init"
                                   : "Rsend_init");
        }
        if (send && mode != 1)
            MPI_Wait(&s[mode], MPI_STATUS_IGNORE);
    }
    if (send) {
        void *det;
        int dsize;
        for (int k = 0; k < 3; k++)
            MPI_Request_free(&s[k]);
        MPI_Buffer_detach(&det, &dsize);
    }
    if (recv)
        MPI_Request_free(&r);
    free(sb);
    free(rb);
    free(att);
}

/* Request_free on an active send: the message must still arrive. */
static void free_active(int peer, int send, int recv)
{
    static int data[1000];
    int got[1000];
    MPI_Request r;

    if (send) {
        for (int i = 0; i < 1000; i++)
            data[i] = i * 3 + px_test_rank;
        MPI_Isend(data, 1000, MPI_INT, peer, 40, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        PX_CHECK(r == MPI_REQUEST_NULL, "Request_free left the handle");
    }
    if (recv) {
        MPI_Recv(got, 1000, MPI_INT, peer, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int bad = 0;
        for (int i = 0; i < 1000; i++)
            bad += got[i] != i * 3 + peer;
        PX_CHECK(bad == 0, "freed Isend: %d wrong elements", bad);
    }
    /* The sender may reuse 'data' only after learning it was received. */
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "p2p_persistent");
    int peer = px_pair_peer(px_test_rank, px_test_size);
    int self = peer < 0;
    if (self)
        peer = px_test_rank;

    for (int dir = 0; dir < 2; dir++) {
        int send = self || px_test_rank % 2 == dir;
        int recv = self || px_test_rank % 2 != dir;
        standard(peer, send, recv);
        other_modes(peer, send, recv, self);
    }
    free_active(peer, 1, 1);
    return px_test_finish("%d persistent rounds x 2 sizes, %d other-mode rounds, "
                          "each direction",
                          ITERS, ITERS / 3);
}
