/* Ping-pong of BYTES between ranks 0 and 1, ITERS round trips after 100
 * warm-up ones; rank 0 prints one JSON line with the one-way latency
 * (half a round trip) in microseconds: median, 99th percentile, maximum.
 * Under loss the tail is what matters, not the mean:
 *   bench/loops/pingpong_pct [BYTES [ITERS]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    int bytes = argc > 1 ? atoi(argv[1]) : 8, iters = argc > 2 ? atoi(argv[2]) : 10000;
    char *buf = calloc(bytes > 0 ? (size_t)bytes : 1, 1);
    double *t = malloc(sizeof(double) * (size_t)iters);
    for (int i = -100; i < iters; i++) {
        double t0 = MPI_Wtime();
        if (r == 0) {
            MPI_Send(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (r == 1) {
            MPI_Recv(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
        if (i >= 0)
            t[i] = (MPI_Wtime() - t0) / 2 * 1e6;
    }
    if (r == 0) {
        qsort(t, (size_t)iters, sizeof(double), cmp);
        printf("{\"bytes\":%d,\"iters\":%d,\"median_us\":%.2f,\"p99_us\":%.2f,\"max_us\":%.2f}\n",
               bytes, iters, t[iters / 2], t[(int)(iters * 0.99)], t[iters - 1]);
    }
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
