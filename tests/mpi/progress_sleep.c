/* PX_PROGRESS_MODE=sleep: a rank waiting in MPI_Recv for a message that
 * comes only after a second uses little CPU meanwhile (it sleeps in the
 * kernel instead of polling), and still wakes promptly when the message
 * arrives; then a burst of ping-pongs checks nothing is lost or delayed by
 * the sleeping in between. Run with PX_PROGRESS_MODE=sleep and block
 * (testlist: block sleeps too, after PX_SPIN_COUNT empty polls). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define WAIT_S 1.0
#define CPU_MAX 0.20   /* fraction of a core while waiting */
#define WAKE_MAX_S 0.1 /* a loaded CI machine's scheduling delay included */

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

int main(int argc, char **argv)
{
    int rank, size, fail = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = getenv("PX_PROGRESS_MODE");
    if (!mode || (strcmp(mode, "sleep") && strcmp(mode, "block"))) {
        if (rank == 0)
            fprintf(stderr, "FAIL progress_sleep: run with PX_PROGRESS_MODE=sleep or block\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* every rank but 0 waits; rank 0 sleeps, then wakes them one by one */
    double cpu = 0, wake = 0;
    if (rank == 0) {
        struct timespec ts = {(time_t)WAIT_S, 0};
        nanosleep(&ts, NULL);
        for (int r = 1; r < size; r++) {
            double t0 = MPI_Wtime(), back = 0;
            MPI_Send(&t0, 1, MPI_DOUBLE, r, 1, MPI_COMM_WORLD);
            MPI_Recv(&back, 1, MPI_DOUBLE, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double rtt = MPI_Wtime() - t0;
            if (rtt > WAKE_MAX_S) {
                fprintf(stderr, "FAIL progress_sleep: rank %d answered after %.1f ms\n", r,
                        1e3 * rtt);
                fail = 1;
            }
            if (back > CPU_MAX) {
                fprintf(stderr, "FAIL progress_sleep: rank %d used %.0f%% of a core waiting\n", r,
                        100 * back);
                fail = 1;
            }
            if (wake < rtt)
                wake = rtt;
            if (cpu < back)
                cpu = back;
        }
    } else {
        double t0 = MPI_Wtime(), c0 = cpu_s(), got;
        MPI_Recv(&got, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double used = (cpu_s() - c0) / (MPI_Wtime() - t0);
        MPI_Send(&used, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    }
    /* the pair (0, 1) ping-pongs with checked payloads */
    if (size > 1 && rank < 2) {
        int buf[64];
        for (int i = 0; i < 1000; i++) {
            if (rank == 0) {
                for (int k = 0; k < 64; k++)
                    buf[k] = i * 64 + k;
                MPI_Send(buf, 64, MPI_INT, 1, 3, MPI_COMM_WORLD);
                MPI_Recv(buf, 64, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int k = 0; k < 64; k++)
                    if (buf[k] != i * 64 + k + 1) {
                        fprintf(stderr, "FAIL progress_sleep: ping %d word %d is %d\n", i, k,
                                buf[k]);
                        fail = 1;
                        i = 1000;
                        break;
                    }
            } else {
                MPI_Recv(buf, 64, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int k = 0; k < 64; k++)
                    buf[k]++;
                MPI_Send(buf, 64, MPI_INT, 0, 4, MPI_COMM_WORLD);
            }
        }
    }
    MPI_Bcast(&fail, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && !fail)
        printf("PASS progress_sleep np=%d: waiters used at most %.1f%% CPU over %.0f s, woke "
               "within %.2f ms\n",
               size, 100 * cpu, WAIT_S, 1e3 * wake);
    return fail;
}
