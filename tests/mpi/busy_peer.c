/* A peer that makes no MPI call for a while is busy, not lost. In each
 * pair, the even rank sends eager and rendezvous messages and then waits for
 * the answer, while the odd rank computes (sleeps) for BUSY_MS before it
 * receives: over datagrams nothing acknowledges the even rank's frames all
 * that time. The testlist runs it with PX_PARTITION_TIMEOUT below BUSY_MS,
 * so a rank that took silence for a dead network would end the job. */
#include "px_test.h"

#define BUSY_MS 4000
#define NMSG 8

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "busy_peer");
    int peer = px_pair_peer(px_test_rank, px_test_size);
    static char buf[NMSG][256 * 1024];
    size_t len[NMSG];
    for (int i = 0; i < NMSG; i++)
        len[i] = (size_t)64 << (2 * i); /* 64 B .. 256 KB: eager and rendezvous */
    for (int i = 0; i < NMSG; i++)
        if (len[i] > sizeof(buf[i]))
            len[i] = sizeof(buf[i]);
    if (peer >= 0 && px_test_rank % 2 == 0) {
        MPI_Request r[NMSG];
        for (int i = 0; i < NMSG; i++) {
            px_fill(buf[i], len[i], (uint64_t)px_test_rank * 100 + i);
            MPI_Isend(buf[i], (int)len[i], MPI_BYTE, peer, i, MPI_COMM_WORLD, &r[i]);
        }
        double t0 = MPI_Wtime();
        int answer = -1;
        MPI_Recv(&answer, 1, MPI_INT, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double waited = MPI_Wtime() - t0;
        MPI_Waitall(NMSG, r, MPI_STATUSES_IGNORE);
        PX_CHECK(answer == NMSG, "the busy peer confirmed %d messages of %d", answer, NMSG);
        PX_CHECK(waited >= BUSY_MS / 1000.0 * 0.9, "waited %.2f s only: the peer was not busy",
                 waited);
    } else if (peer >= 0) {
        px_sleep_ms(BUSY_MS);
        int good = 0;
        for (int i = 0; i < NMSG; i++) {
            MPI_Recv(buf[i], (int)len[i], MPI_BYTE, peer, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            size_t bad = px_verify(buf[i], len[i], (uint64_t)peer * 100 + i);
            PX_CHECK(bad == len[i], "message %d (%zu bytes): byte %zu wrong", i, len[i], bad);
            good += bad == len[i];
        }
        MPI_Send(&good, 1, MPI_INT, peer, 99, MPI_COMM_WORLD);
    }
    return px_test_finish("%d messages waited %d ms for a busy peer", NMSG, BUSY_MS);
}
