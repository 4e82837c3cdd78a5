/* Times one exchange between rank pairs (rank r with r^1): MPI_Irecv and
 * MPI_Isend of BYTES each way, then MPI_Waitall, after a barrier, as a
 * collective's exchange step does:
 *   bench/loops/exchange BYTES ITERATIONS
 * Prints each rank's mean and longest exchange after 10 warm-up calls.
 * Build with any library's mpicc, e.g.
 *   build/bin/mpicc -O2 -o build/exchange bench/loops/exchange.c
 *   mpicc.openmpi -O2 -o build/exchange.ompi bench/loops/exchange.c */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 3 || n % 2) {
        if (r == 0)
            fprintf(stderr, "usage: %s BYTES ITERATIONS (an even number of ranks)\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    int bytes = atoi(argv[1]), it = atoi(argv[2]), peer = r ^ 1;
    char *a = malloc((size_t)bytes), *b = malloc((size_t)bytes);
    memset(a, r, (size_t)bytes);
    double sum = 0, most = 0;
    for (int i = 0; i < it + 10; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        MPI_Request q[2];
        MPI_Irecv(b, bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(a, bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        t = MPI_Wtime() - t;
        if (i >= 10) {
            sum += t;
            most = t > most ? t : most;
        }
    }
    printf("exchange rank %d bytes %d mean %.1f longest %.1f us\n", r, bytes, sum / it * 1e6,
           most * 1e6);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
