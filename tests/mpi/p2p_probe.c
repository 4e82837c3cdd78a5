/* Probe, Iprobe, Mprobe, Improbe and Mrecv: probing does not consume, the
 * probed count sizes the receive, a matched probe removes the message from
 * matching, and MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC. */
#include "px_test.h"

#define NSIZE 7
static const int sizes[NSIZE] = {0, 1, 100, 5000, 70000, 300000, 2000003};
#define TAG_A 10  /* + i: one tag per size */
#define TAG_M 40  /* matched-probe batch, one tag */
#define TAG_MA 41 /* matched-probe batch for ANY_TAG */
#define TAG_NEVER 999

static uint64_t seed_of(int src, int tag, int i)
{
    return (uint64_t)src << 40 | (uint64_t)tag << 20 | (uint64_t)i;
}

static void sender_start(int peer, MPI_Request *reqs, char **bufs)
{
    int k = 0;
    for (int i = 0; i < NSIZE; i++) {
        bufs[k] = malloc(sizes[i] + 1);
        px_fill(bufs[k], sizes[i], seed_of(px_test_rank, TAG_A + i, i));
        MPI_Isend(bufs[k], sizes[i], MPI_BYTE, peer, TAG_A + i, MPI_COMM_WORLD, &reqs[k]);
        k++;
    }
    for (int i = 0; i < NSIZE; i++) {
        bufs[k] = malloc(sizes[i] + 1);
        px_fill(bufs[k], sizes[i], seed_of(px_test_rank, TAG_M, i));
        MPI_Isend(bufs[k], sizes[i], MPI_BYTE, peer, TAG_M, MPI_COMM_WORLD, &reqs[k]);
        k++;
    }
    for (int i = 0; i < NSIZE; i++) {
        bufs[k] = malloc(sizes[i] + 1);
        px_fill(bufs[k], sizes[i], seed_of(px_test_rank, TAG_MA, i));
        MPI_Isend(bufs[k], sizes[i], MPI_BYTE, peer, TAG_MA, MPI_COMM_WORLD, &reqs[k]);
        k++;
    }
}

static void check_status(const MPI_Status *st, int src, int tag, int count, const char *what)
{
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    PX_CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && n == count,
             "%s: status src %d tag %d count %d, expected %d/%d/%d", what, st->MPI_SOURCE,
             st->MPI_TAG, n, src, tag, count);
}

static void recv_checked(int src, int tag, int i, MPI_Message *msg)
{
    MPI_Status st;
    char *buf = malloc(sizes[i] + 1);
    if (msg)
        MPI_Mrecv(buf, sizes[i], MPI_BYTE, msg, &st);
    else
        MPI_Recv(buf, sizes[i], MPI_BYTE, src, tag, MPI_COMM_WORLD, &st);
    check_status(&st, src, tag, sizes[i], msg ? "Mrecv" : "Recv after probe");
    PX_CHECK(px_verify(buf, sizes[i], seed_of(src, tag, i)) == (size_t)sizes[i],
             "tag %d size %d: data corrupt", tag, sizes[i]);
    free(buf);
}

static void receiver(int peer)
{
    MPI_Status st;
    int flag = -1;

    MPI_Iprobe(peer, TAG_NEVER, MPI_COMM_WORLD, &flag, &st);
    PX_CHECK(flag == 0, "Iprobe found a message that was never sent");

    /* Probe / Iprobe, newest tag first; probing twice sees the same message. */
    for (int i = NSIZE - 1; i >= 0; i--) {
        int tag = TAG_A + i;
        if (i % 2) {
            MPI_Probe(peer, tag, MPI_COMM_WORLD, &st);
        } else {
            flag = 0;
            while (!flag)
                MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st);
        }
        check_status(&st, peer, tag, sizes[i], "probe");
        flag = 0;
        MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, &st);
        PX_CHECK(flag == 1, "second Iprobe of tag %d lost the message", tag);
        check_status(&st, peer, tag, sizes[i], "second probe");
        recv_checked(peer, tag, i, NULL);
    }

    /* Mprobe takes the message out of matching: a probe now sees the next. */
    for (int i = 0; i < NSIZE; i++) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        if (i % 2) {
            MPI_Mprobe(peer, TAG_M, MPI_COMM_WORLD, &msg, &st);
        } else {
            flag = 0;
            while (!flag)
                MPI_Improbe(MPI_ANY_SOURCE, TAG_M, MPI_COMM_WORLD, &flag, &msg, &st);
        }
        PX_CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC,
                 "Mprobe gave no message handle");
        check_status(&st, peer, TAG_M, sizes[i], "mprobe");
        if (i + 1 < NSIZE) {
            MPI_Status st2;
            flag = 0;
            while (!flag)
                MPI_Iprobe(peer, TAG_M, MPI_COMM_WORLD, &flag, &st2);
            check_status(&st2, peer, TAG_M, sizes[i + 1], "probe after mprobe");
        }
        recv_checked(peer, TAG_M, i, &msg);
        PX_CHECK(msg == MPI_MESSAGE_NULL, "Mrecv did not reset the handle");
    }

    /* Mprobe with ANY_TAG / ANY_SOURCE keeps per-sender order. */
    for (int i = 0; i < NSIZE; i++) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st);
        check_status(&st, peer, TAG_MA, sizes[i], "mprobe any");
        if (st.MPI_SOURCE == peer && st.MPI_TAG == TAG_MA)
            recv_checked(peer, TAG_MA, i, &msg);
        else
            PX_REQUIRE(0, "cannot continue after wrong Mprobe match");
    }

    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    PX_CHECK(flag == 0, "Iprobe found a leftover message (tag %d)", st.MPI_TAG);
}

static void proc_null(void)
{
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    int flag = 0, count = -1, x = 42;

    MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &msg, &st);
    PX_CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL) handle");
    PX_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
             "Mprobe(PROC_NULL) status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    MPI_Mrecv(&x, 1, MPI_INT, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    PX_CHECK(count == 0 && st.MPI_SOURCE == MPI_PROC_NULL && x == 42,
             "Mrecv(NO_PROC) count %d src %d x %d", count, st.MPI_SOURCE, x);
    PX_CHECK(msg == MPI_MESSAGE_NULL, "Mrecv(NO_PROC) did not reset handle");

    MPI_Improbe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &flag, &msg, &st);
    PX_CHECK(flag == 1 && msg == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL)");
    MPI_Mrecv(&x, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);

    MPI_Probe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    PX_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && count == 0, "Probe(PROC_NULL)");
    flag = 0;
    MPI_Iprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &flag, &st);
    PX_CHECK(flag == 1 && st.MPI_SOURCE == MPI_PROC_NULL, "Iprobe(PROC_NULL)");
}

int main(int argc, char **argv)
{
    MPI_Request reqs[3 * NSIZE];
    char *bufs[3 * NSIZE];

    px_test_init(&argc, &argv, "p2p_probe");
    int peer = px_pair_peer(px_test_rank, px_test_size);
    /* A rank without a partner probes messages it sends itself. */
    int self = peer < 0;
    if (self)
        peer = px_test_rank;

    if (self || px_test_rank % 2 == 0)
        sender_start(peer, reqs, bufs);
    if (self || px_test_rank % 2 == 1)
        receiver(peer);
    if (self || px_test_rank % 2 == 0) {
        MPI_Waitall(3 * NSIZE, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 3 * NSIZE; i++)
            free(bufs[i]);
    }
    proc_null();
    return px_test_finish("%d probed messages per pair (0 B..2 MB), PROC_NULL", 3 * NSIZE);
}
