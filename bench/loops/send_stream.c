/* Rank 0 sends COUNT blocking messages of BYTES to rank 1, 200 times, and
 * each rank prints its mean time per batch (how long a sender takes to hand
 * a stream over, against its receiver):
 *   bench/loops/send_stream BYTES COUNT */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    int n = atoi(argv[1]), k = atoi(argv[2]), it = 200;
    char *b = malloc((size_t)n * k);
    double ts = 0;
    for (int i = 0; i < it; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        for (int j = 0; j < k; j++) {
            if (r == 0)
                MPI_Send(b + (size_t)j * n, n, MPI_CHAR, 1, j, MPI_COMM_WORLD);
            else
                MPI_Recv(b + (size_t)j * n, n, MPI_CHAR, 0, j, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        ts += MPI_Wtime() - t;
    }
    printf("rank %d: %d sends of %d: %.1f us\n", r, k, n, ts / it * 1e6);
    MPI_Finalize();
    return 0;
}
