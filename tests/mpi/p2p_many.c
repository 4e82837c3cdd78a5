/* 100 000 small messages from each even rank to its odd partner (a lone rank
 * sends them to itself): windows of nonblocking sends and pre-posted
 * ANY_TAG receives, sizes and tags varying with the sequence number. Every
 * message is checked; the total is confirmed back to the sender. */
#include "px_test.h"

#define NMSG 100000
#define WINDOW 256
#define ACK_EVERY 4096 /* bounds the receiver's unexpected queue */
#define MAXINTS 16

static int msg_ints(int seq) { return 1 + seq % MAXINTS; }

static void fill_msg(int *m, int seq, int src)
{
    for (int i = 0; i < msg_ints(seq); i++)
        m[i] = seq * 31 + i + src * 7;
}

static void send_window(int peer, int first, int n, int (*bufs)[MAXINTS], MPI_Request *reqs)
{
    for (int k = 0; k < n; k++) {
        int seq = first + k;
        fill_msg(bufs[k], seq, px_test_rank);
        MPI_Isend(bufs[k], msg_ints(seq), MPI_INT, peer, seq % 3, MPI_COMM_WORLD, &reqs[k]);
    }
}

static int recv_window(int src, int first, int n, int (*bufs)[MAXINTS], MPI_Request *reqs,
                       MPI_Status *sts)
{
    int bad = 0;
    MPI_Waitall(n, reqs, sts);
    for (int k = 0; k < n; k++) {
        int seq = first + k, count = -1, want[MAXINTS];
        MPI_Get_count(&sts[k], MPI_INT, &count);
        fill_msg(want, seq, src);
        if (count != msg_ints(seq) || sts[k].MPI_TAG != seq % 3 ||
            memcmp(bufs[k], want, sizeof(int) * msg_ints(seq)) != 0) {
            if (bad++ == 0)
                PX_CHECK(0,
                         "message %d: count %d tag %d first int %d, expected "
                         "%d/%d/%d",
                         seq, count, sts[k].MPI_TAG, bufs[k][0], msg_ints(seq), seq % 3, want[0]);
        }
    }
    return bad;
}

static void post_window(int src, int n, int (*bufs)[MAXINTS], MPI_Request *reqs)
{
    for (int k = 0; k < n; k++)
        MPI_Irecv(bufs[k], MAXINTS, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[k]);
}

int main(int argc, char **argv)
{
    static int sbufs[WINDOW][MAXINTS], rbufs[WINDOW][MAXINTS];
    MPI_Request sreqs[WINDOW], rreqs[WINDOW];
    MPI_Status sts[WINDOW];
    int bad = 0, got = 0;
    double t0, t1;

    px_test_init(&argc, &argv, "p2p_many");
    int peer = px_pair_peer(px_test_rank, px_test_size);
    int self = peer < 0;
    int sender = self || px_test_rank % 2 == 0;
    int receiver = self || px_test_rank % 2 == 1;
    if (self)
        peer = px_test_rank;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int first = 0; first < NMSG; first += WINDOW) {
        int n = NMSG - first < WINDOW ? NMSG - first : WINDOW;
        if (receiver)
            post_window(peer, n, rbufs, rreqs);
        if (sender)
            send_window(peer, first, n, sbufs, sreqs);
        if (receiver) {
            bad += recv_window(peer, first, n, rbufs, rreqs, sts);
            got += n;
        }
        if (sender)
            MPI_Waitall(n, sreqs, MPI_STATUSES_IGNORE);
        if (!self && (first + n) % ACK_EVERY < WINDOW) {
            if (receiver)
                MPI_Send(&got, 1, MPI_INT, peer, 7, MPI_COMM_WORLD);
            else
                MPI_Recv(&got, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    t1 = MPI_Wtime();
    if (!self) {
        if (receiver)
            MPI_Send(&got, 1, MPI_INT, peer, 8, MPI_COMM_WORLD);
        else
            MPI_Recv(&got, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    PX_CHECK(got == NMSG, "partner received %d messages, expected %d", got, NMSG);
    PX_CHECK(bad == 0, "%d of %d messages wrong", bad, NMSG);
    if (receiver) {
        int flag = 1;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        PX_CHECK(flag == 0, "extra message after the %d expected (tag %d)", NMSG, st.MPI_TAG);
    }
    return px_test_finish("%d messages per pair in %.2f s (%.0f msg/s)", NMSG, t1 - t0,
                          NMSG / (t1 - t0 > 0 ? t1 - t0 : 1e-9));
}
