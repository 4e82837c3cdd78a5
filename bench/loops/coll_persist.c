/* Blocking, nonblocking (start + wait) and persistent (MPI_Start +
 * MPI_Wait) barrier, allreduce and broadcast of COUNT doubles, each
 * ITERATIONS times after 1000 warm-up calls; prints the slowest rank's
 * mean time per call:
 *   bench/loops/coll_persist COUNT [ITERATIONS]
 * Build with any MPI-4.0 library's mpicc, e.g.
 *   build/bin/mpicc -O2 -o build/coll_persist bench/loops/coll_persist.c
 *   mpicc.mpich -O2 -o build/coll_persist.mpich bench/loops/coll_persist.c */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int n = argc > 1 ? atoi(argv[1]) : 1, iters = argc > 2 ? atoi(argv[2]) : 200000;
    double *a = calloc(n, 8), *b = calloc(n, 8);
    MPI_Request r;
    const char *names[] = {"Barrier",        "Ibarrier", "Barrier_init", "Allreduce", "Iallreduce",
                           "Allreduce_init", "Bcast",    "Ibcast",       "Bcast_init"};
    for (int t = 0; t < 9; t++) {
        if (t % 3 == 2) {
            if (t == 2)
                MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r);
            if (t == 5)
                MPI_Allreduce_init(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
            if (t == 8)
                MPI_Bcast_init(a, n, MPI_DOUBLE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = 0;
        for (int i = -1000; i < iters; i++) {
            if (i == 0)
                t0 = MPI_Wtime();
            switch (t) {
            case 0:
                MPI_Barrier(MPI_COMM_WORLD);
                break;
            case 1:
                MPI_Ibarrier(MPI_COMM_WORLD, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
                break;
            case 3:
                MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                break;
            case 4:
                MPI_Iallreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
                break;
            case 6:
                MPI_Bcast(a, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
                break;
            case 7:
                MPI_Ibcast(a, n, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
                break;
            default:
                MPI_Start(&r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
                break;
            }
        }
        double us = (MPI_Wtime() - t0) / iters * 1e6, mx;
        MPI_Reduce(&us, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (!rank)
            printf("%-16s %7.3f us\n", names[t], mx);
        if (t % 3 == 2)
            MPI_Request_free(&r);
    }
    MPI_Finalize();
    return 0;
}
