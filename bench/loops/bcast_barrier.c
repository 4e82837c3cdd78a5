/* Times MPI_Bcast on each rank separately, and the whole cycle of a
 * broadcast and a barrier, after 50 warm-up cycles:
 *   bench/loops/bcast_barrier BYTES ITERATIONS
 * Build with any library's mpicc, e.g.
 *   build/bin/mpicc -O2 -o build/bcast_barrier bench/loops/bcast_barrier.c
 *   mpicc.openmpi -O2 -o build/bcast_barrier.ompi bench/loops/bcast_barrier.c */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    int n = atoi(argv[1]), it = atoi(argv[2]);
    char *b = malloc(n);
    double tb = 0, t0 = 0;
    for (int i = 0; i < it + 50; i++) {
        if (i == 50) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            tb = 0;
        }
        double t = MPI_Wtime();
        MPI_Bcast(b, n, MPI_CHAR, 0, MPI_COMM_WORLD);
        tb += MPI_Wtime() - t;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double tot = MPI_Wtime() - t0;
    printf("rank %d bytes %d bcast %.1f us iteration %.1f us\n", r, n, tb / it * 1e6,
           tot / it * 1e6);
    MPI_Finalize();
    return 0;
}
