/* Displaced ring: every rank sends SIZE bytes to rank + D and receives from
 * rank - D at the same time, ITERS times; rank 0 prints the aggregate rate.
 * With D = N/2 on a two-leaf fat-tree every message crosses the spines.
 * Usage: ring SIZE ITERS [D] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    size_t size = argc > 1 ? (size_t)atol(argv[1]) : 4u << 20;
    int iters = argc > 2 ? atoi(argv[2]) : 20;
    int d = argc > 3 ? atoi(argv[3]) : n / 2;
    if (d <= 0)
        d = 1;
    char *s = malloc(size), *r = malloc(size);
    memset(s, rank, size);
    int to = (rank + d) % n, from = (rank - d + n) % n;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Sendrecv(s, (int)size, MPI_BYTE, to, 0, r, (int)size, MPI_BYTE, from, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    double dt = MPI_Wtime() - t0;
    if (r[0] != (char)from || r[size - 1] != (char)from)
        fprintf(stderr, "ring: rank %d received wrong data\n", rank);
    if (rank == 0)
        printf("ring %zu bytes x %d, displacement %d, %d ranks: %.1f MB/s per rank\n", size, iters,
               d, n, (double)size * iters / dt / 1e6);
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
