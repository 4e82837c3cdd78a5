/* How a library waits. Ranks 0 and 1:
 *   1. a ping-pong of 4 bytes, ITERS round trips after 1,000 warm-up ones:
 *      the one-way latency (half a round trip, median) and the CPU each
 *      rank used meanwhile (user + system time over wall time);
 *   2. three times: rank 1 waits in MPI_Recv while rank 0 sleeps IDLE
 *      seconds outside MPI, then sends 4 bytes, which rank 1 returns at
 *      once: the CPU rank 1 used while it waited, and the round trip after
 *      the idle time less a normal one (the cost of waking up).
 * Rank 0 prints one JSON line (medians of the three idle waits):
 *   bench/loops/idle_wait [IDLE_S [ITERS]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median3(double *v)
{
    qsort(v, 3, sizeof(double), cmp);
    return v[1];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    double idle = argc > 1 ? atof(argv[1]) : 1.0;
    int iters = argc > 2 ? atoi(argv[2]) : 20000;
    char buf[4] = {0};
    double *t = malloc(sizeof(double) * (size_t)iters);
    double c0 = 0, w0 = 0;
    for (int i = -1000; i < iters; i++) {
        if (i == 0) {
            c0 = cpu_s();
            w0 = MPI_Wtime();
        }
        double t0 = MPI_Wtime();
        if (r == 0) {
            MPI_Send(buf, 4, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, 4, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (r == 1) {
            MPI_Recv(buf, 4, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 4, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
        if (i >= 0)
            t[i] = (MPI_Wtime() - t0) / 2 * 1e6;
    }
    double cpu_pp = (cpu_s() - c0) / (MPI_Wtime() - w0);
    qsort(t, (size_t)iters, sizeof(double), cmp);
    double lat = t[iters / 2];

    double idle_cpu[3], wake_us[3];
    for (int k = 0; k < 3; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == 0) {
            struct timespec ts = {(time_t)idle, (long)((idle - (double)(time_t)idle) * 1e9)};
            nanosleep(&ts, NULL);
            double s = MPI_Wtime();
            MPI_Send(buf, 4, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, 4, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            wake_us[k] = (MPI_Wtime() - s) * 1e6 - 2 * lat;
            idle_cpu[k] = 0;
        } else if (r == 1) {
            double cc = cpu_s(), ww = MPI_Wtime();
            MPI_Recv(buf, 4, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            idle_cpu[k] = (cpu_s() - cc) / (MPI_Wtime() - ww);
            MPI_Send(buf, 4, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            wake_us[k] = 0;
        }
    }
    /* rank 1's CPU figures to rank 0 */
    double mine[4] = {cpu_pp, idle_cpu[0], idle_cpu[1], idle_cpu[2]}, peer[4] = {0};
    if (r == 1)
        MPI_Send(mine, 4, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    else if (r == 0)
        MPI_Recv(peer, 4, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (r == 0)
        printf("{\"latency_us\":%.3f,\"cpu_pingpong\":%.3f,\"cpu_pingpong_peer\":%.3f,"
               "\"idle_cpu\":%.4f,\"wake_us\":%.1f,\"idle_s\":%g,\"iters\":%d}\n",
               lat, cpu_pp, peer[0], median3(peer + 1), median3(wake_us), idle, iters);
    free(t);
    MPI_Finalize();
    return 0;
}
