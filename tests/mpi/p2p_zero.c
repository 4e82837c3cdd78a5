/* Zero-byte messages: every send flavour, matched by larger receives, probed,
 * to self, with non-byte types, and interleaved with non-empty messages
 * without losing order. */
#include "px_test.h"

#define NSEQ 64

static void check_zero(const MPI_Status *st, int src, int tag, const char *what)
{
    int count = -1, elems = -1;
    MPI_Get_count(st, MPI_DOUBLE, &count);
    MPI_Get_elements(st, MPI_DOUBLE, &elems);
    PX_CHECK(count == 0 && elems == 0, "%s: count %d elements %d", what, count, elems);
    PX_CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag, "%s: source %d tag %d, expected %d/%d",
             what, st->MPI_SOURCE, st->MPI_TAG, src, tag);
}

static void sender(int peer)
{
    MPI_Request r[2];
    int vals[NSEQ];

    MPI_Send(NULL, 0, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD);
    MPI_Isend(NULL, 0, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &r[0]);
    MPI_Issend(NULL, 0, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    MPI_Ssend(NULL, 0, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD);
    MPI_Send(NULL, 0, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD); /* probed */
    MPI_Send(NULL, 0, MPI_DOUBLE, peer, 6, MPI_COMM_WORLD); /* ANY_SOURCE */
    /* Alternating empty and one-int messages on one tag. */
    for (int i = 0; i < NSEQ; i++) {
        vals[i] = 1000 + i;
        MPI_Send(&vals[i], i % 2, MPI_INT, peer, 7, MPI_COMM_WORLD);
    }
}

static void receiver(int peer)
{
    double d[4] = {1.5, 2.5, 3.5, 4.5};
    MPI_Request r[2];
    MPI_Status st, sts[2];
    int flag = 0;

    MPI_Recv(d, 4, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &st);
    check_zero(&st, peer, 1, "Send/Recv");
    PX_CHECK(d[0] == 1.5 && d[3] == 4.5, "empty message modified the buffer");
    MPI_Irecv(d, 4, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(d, 4, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, sts);
    check_zero(&sts[0], peer, 2, "Isend/Irecv");
    check_zero(&sts[1], peer, 3, "Issend/Irecv");
    MPI_Recv(d, 4, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD, &st);
    check_zero(&st, peer, 4, "Ssend/Recv");
    MPI_Probe(peer, 5, MPI_COMM_WORLD, &st);
    check_zero(&st, peer, 5, "Probe");
    while (!flag)
        MPI_Iprobe(peer, 5, MPI_COMM_WORLD, &flag, &st);
    check_zero(&st, peer, 5, "Iprobe");
    MPI_Recv(NULL, 0, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD, &st);
    check_zero(&st, peer, 5, "Recv of probed");
    MPI_Recv(d, 4, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    check_zero(&st, peer, 6, "ANY_SOURCE/ANY_TAG");
    PX_CHECK(d[0] == 1.5 && d[3] == 4.5, "empty message modified the buffer");
    for (int i = 0; i < NSEQ; i++) {
        int v = -1, count = -1;
        MPI_Recv(&v, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        PX_CHECK(count == i % 2, "message %d of the mixed run: count %d", i, count);
        if (i % 2)
            PX_CHECK(v == 1000 + i, "message %d of the mixed run: value %d", i, v);
        else
            PX_CHECK(v == -1, "empty message %d wrote %d", i, v);
    }
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "p2p_zero");
    int peer = px_pair_peer(px_test_rank, px_test_size);

    if (peer >= 0) {
        if (px_test_rank % 2 == 0)
            sender(peer);
        else
            receiver(peer);
    }

    /* To self: nonblocking send first, since a blocking one may wait. */
    {
        MPI_Request r;
        MPI_Status st;
        char c = 'x';
        MPI_Isend(NULL, 0, MPI_BYTE, px_test_rank, 9, MPI_COMM_WORLD, &r);
        MPI_Recv(&c, 1, MPI_CHAR, px_test_rank, 9, MPI_COMM_WORLD, &st);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        int count = -1;
        MPI_Get_count(&st, MPI_CHAR, &count);
        PX_CHECK(count == 0 && c == 'x' && st.MPI_SOURCE == px_test_rank,
                 "self empty message: count %d src %d", count, st.MPI_SOURCE);
        MPI_Sendrecv(NULL, 0, MPI_CHAR, px_test_rank, 10, &c, 1, MPI_CHAR, px_test_rank, 10,
                     MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_CHAR, &count);
        PX_CHECK(count == 0 && st.MPI_TAG == 10, "self empty Sendrecv count %d", count);
    }
    return px_test_finish("%d empty messages per pair plus self", NSEQ / 2 + 7);
}
