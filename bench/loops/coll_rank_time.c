/* Times one collective on each rank separately, after 20 warm-up calls,
 * with a barrier after every call (as OSU does):
 *   bench/loops/coll_rank_time bcast|gather|scatter|reduce|allreduce|alltoall BYTES ITERATIONS [LATE_US]
 * (LATE_US: the ranks other than 0 come that many microseconds after the
 * barrier to each call, as a receiver still busy with its own work)
 * Rank 0 is the root; reduce and allreduce sum BYTES/4 floats, alltoall
 * sends BYTES to every rank. Where osu_X reports the
 * mean over the ranks, this shows which rank's time differs between two
 * libraries; rank 0 also prints that mean and the median over the calls of
 * the slowest rank's time (when the collective is over everywhere), and the
 * period of the loop (a call and its barriers). Each rank also prints when
 * it started its calls, on average, after rank 0 started the same call, by
 * CLOCK_MONOTONIC: comparable between processes of one machine (emulated
 * nodes), not between hosts. A rank that leaves the barrier before the root
 * waits in the collective for the root, and its time there is longer by
 * as much, with the collective as fast. Build
 * with any library's mpicc, e.g.
 *   build/bin/mpicc -O2 -o build/coll_rank_time bench/loops/coll_rank_time.c
 *   mpicc.openmpi -O2 -o build/coll_rank_time.ompi bench/loops/coll_rank_time.c */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 4) {
        if (r == 0)
            fprintf(stderr,
                    "usage: %s bcast|gather|scatter|reduce|allreduce|alltoall BYTES ITERATIONS\n",
                    argv[0]);
        MPI_Finalize();
        return 2;
    }
    const char *op = argv[1];
    int n = atoi(argv[2]), it = atoi(argv[3]);
    double late = argc > 4 && r != 0 ? atof(argv[4]) * 1e-6 : 0;
    char *a = malloc((size_t)n * (size_t)np), *b = malloc((size_t)n * (size_t)np);
    memset(a, 1, (size_t)n * (size_t)np);
    memset(b, 0, (size_t)n * (size_t)np);
    double t_sum = 0, *slowest = malloc(sizeof(double) * (size_t)(it > 0 ? it : 1));
    double lag_sum = 0, t_first = 0;
    for (int i = 0; i < it + 20; i++) {
        if (i == 20) {
            MPI_Barrier(MPI_COMM_WORLD);
            t_sum = 0;
            t_first = mono();
        }
        if (late > 0) {
            double t_late = MPI_Wtime();
            while (MPI_Wtime() - t_late < late)
                ;
        }
        double t = MPI_Wtime(), t0 = mono(), root_t0 = t0;
        if (!strcmp(op, "alltoall"))
            MPI_Alltoall(a, n, MPI_CHAR, b, n, MPI_CHAR, MPI_COMM_WORLD);
        else if (!strcmp(op, "allreduce"))
            MPI_Allreduce(a, b, n / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        else if (!strcmp(op, "reduce"))
            MPI_Reduce(a, b, n / 4, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        else if (!strcmp(op, "gather"))
            MPI_Gather(a, n, MPI_CHAR, b, n, MPI_CHAR, 0, MPI_COMM_WORLD);
        else if (!strcmp(op, "scatter"))
            MPI_Scatter(a, n, MPI_CHAR, b, n, MPI_CHAR, 0, MPI_COMM_WORLD);
        else
            MPI_Bcast(a, n, MPI_CHAR, 0, MPI_COMM_WORLD);
        double dt = MPI_Wtime() - t, mx;
        t_sum += dt;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Reduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Bcast(&root_t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (i >= 20) {
            slowest[i - 20] = mx;
            lag_sum += t0 - root_t0;
        }
    }
    double period = (mono() - t_first) / it;
    printf("%s rank %d bytes %d %.1f us, started %.1f us after rank 0\n", op, r, n,
           t_sum / it * 1e6, lag_sum / it * 1e6);
    double mean = 0, my = t_sum / it;
    MPI_Reduce(&my, &mean, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (r == 0 && it > 0) {
        qsort(slowest, (size_t)it, sizeof(double), cmp_double);
        printf("%s bytes %d: mean of the ranks %.1f us, slowest rank per call %.1f us "
               "(median of %d calls)\n",
               op, n, mean / np * 1e6, slowest[it / 2] * 1e6, it);
        printf("%s bytes %d: a call and its barriers every %.1f us\n", op, n, period * 1e6);
    }
    free(slowest);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
