/* Inter-arrival times of small messages sent at a steady pace while the same
 * sender streams bulk data to the same receiver (two ranks):
 *
 *   bench/loops/lanes_arrival SMALL COUNT INTERVAL_US BULK WINDOW
 *
 * Rank 0 sends COUNT messages of SMALL bytes to rank 1, one every INTERVAL_US
 * microseconds, and meanwhile keeps WINDOW nonblocking sends of BULK bytes in
 * flight to rank 1 on another tag (BULK 0: no bulk stream). Rank 1 notes the
 * time each small message completes and prints the gaps between consecutive
 * ones, in microseconds, on one line ("gaps_us ..."), and the bulk goodput;
 * how late rank 0 sent, on average and at worst ("send_late_us").
 * A message waiting behind bulk data arrives late, and the gap after the one
 * before it is long: the tail of the gaps is head-of-line blocking.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_SMALL = 1, TAG_BULK = 2, MAXWIN = 64 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc != 6 || np != 2) {
        if (rank == 0)
            fprintf(stderr, "usage (2 ranks): lanes_arrival SMALL COUNT INTERVAL_US BULK WINDOW\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int small = atoi(argv[1]), count = atoi(argv[2]);
    double interval = atof(argv[3]) * 1e-6;
    int bulk = atoi(argv[4]), win = atoi(argv[5]);
    if (small < 1 || count < 2 || interval <= 0 || bulk < 0 || win < 1 || win > MAXWIN)
        MPI_Abort(MPI_COMM_WORLD, 2);
    char *sbuf = calloc(1, (size_t)small);
    char *bbuf = calloc((size_t)win, bulk ? (size_t)bulk : 1);
    MPI_Request breq[MAXWIN], sreq[MAXWIN];
    for (int i = 0; i < MAXWIN; i++)
        breq[i] = sreq[i] = MPI_REQUEST_NULL;
    long nbulk = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();

    if (rank == 0) {
        /* bulk stream until the last small message is out, then one empty
         * message per posted receive to stop the receiver */
        if (bulk)
            for (int i = 0; i < win; i++, nbulk++)
                MPI_Isend(bbuf + (size_t)i * bulk, bulk, MPI_CHAR, 1, TAG_BULK, MPI_COMM_WORLD,
                          &breq[i]);
        double next = t0, late_max = 0, late_sum = 0;
        int sent = 0;
        while (sent < count) {
            double now = MPI_Wtime();
            if (now >= next) {
                late_sum += now - next;
                if (now - next > late_max)
                    late_max = now - next;
                MPI_Request *r = &sreq[sent % MAXWIN];
                MPI_Wait(r, MPI_STATUS_IGNORE);
                MPI_Isend(sbuf, small, MPI_CHAR, 1, TAG_SMALL, MPI_COMM_WORLD, r);
                sent++;
                next += interval;
            }
            if (bulk) {
                int idx, flag;
                MPI_Testany(win, breq, &idx, &flag, MPI_STATUS_IGNORE);
                if (flag && idx != MPI_UNDEFINED) {
                    MPI_Isend(bbuf + (size_t)idx * bulk, bulk, MPI_CHAR, 1, TAG_BULK,
                              MPI_COMM_WORLD, &breq[idx]);
                    nbulk++;
                }
            }
        }
        MPI_Waitall(MAXWIN, sreq, MPI_STATUSES_IGNORE);
        if (bulk) {
            MPI_Waitall(win, breq, MPI_STATUSES_IGNORE);
            for (int i = 0; i < win; i++)
                MPI_Send(NULL, 0, MPI_CHAR, 1, TAG_BULK, MPI_COMM_WORLD);
        }
        /* progress until the receiver has everything (a library may leave
         * the end markers queued and not progress them in MPI_Finalize) */
        MPI_Barrier(MPI_COMM_WORLD);
        /* how late the sender itself was (a gap it caused is not the network's),
         * printed by rank 1 so that the two ranks' lines cannot interleave */
        double late[2] = {late_sum / count, late_max};
        MPI_Send(late, 2, MPI_DOUBLE, 1, TAG_SMALL, MPI_COMM_WORLD);
    } else {
        double *at = malloc(sizeof(double) * (size_t)count);
        int got = 0, ends = 0, posted = 0;
        if (bulk)
            for (int i = 0; i < win; i++, posted++)
                MPI_Irecv(bbuf + (size_t)i * bulk, bulk, MPI_CHAR, 0, TAG_BULK, MPI_COMM_WORLD,
                          &breq[i]);
        MPI_Request sr;
        MPI_Irecv(sbuf, small, MPI_CHAR, 0, TAG_SMALL, MPI_COMM_WORLD, &sr);
        while (got < count || (bulk && ends < win)) {
            int flag = 0;
            if (got < count) {
                MPI_Test(&sr, &flag, MPI_STATUS_IGNORE);
                if (flag) {
                    at[got++] = MPI_Wtime();
                    if (got < count)
                        MPI_Irecv(sbuf, small, MPI_CHAR, 0, TAG_SMALL, MPI_COMM_WORLD, &sr);
                }
            }
            if (bulk && posted > 0) {
                int idx;
                MPI_Status st;
                MPI_Testany(win, breq, &idx, &flag, &st);
                if (flag && idx != MPI_UNDEFINED) {
                    int n;
                    MPI_Get_count(&st, MPI_CHAR, &n);
                    posted--;
                    if (n == 0)
                        ends++;
                    else
                        nbulk++;
                    if (n > 0) { /* a receive per bulk message: the last WINDOW take the
                                  * end markers, in whatever order they complete */
                        MPI_Irecv(bbuf + (size_t)idx * bulk, bulk, MPI_CHAR, 0, TAG_BULK,
                                  MPI_COMM_WORLD, &breq[idx]);
                        posted++;
                    }
                }
            }
        }
        double t1 = MPI_Wtime(), late[2];
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Recv(late, 2, MPI_DOUBLE, 0, TAG_SMALL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("send_late_us mean %.1f max %.1f\n", late[0] * 1e6, late[1] * 1e6);
        printf("bulk_mbps %.1f\n", (double)nbulk * bulk * 8 / (t1 - t0) / 1e6);
        printf("gaps_us");
        for (int i = 1; i < count; i++)
            printf(" %.1f", (at[i] - at[i - 1]) * 1e6);
        printf("\n");
        fflush(stdout);
        free(at);
    }
    free(sbuf);
    free(bbuf);
    MPI_Finalize();
    return 0;
}
