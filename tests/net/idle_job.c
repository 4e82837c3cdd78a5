/* A job that keeps progressing for a few seconds while ranks 0 and 1 talk
 * only to each other, so rank 0 has no connection to rank 2 yet: a test
 * can meanwhile knock on rank 0's data port. Checks its own traffic. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, flag, bad = 0;
    double secs = argc > 1 ? atof(argv[1]) : 3.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        fprintf(stderr, "READY\n");
    double t0 = MPI_Wtime();
    int i = 0;
    while ((rank < 2 && size >= 2) || MPI_Wtime() - t0 < secs) {
        if (rank < 2 && size >= 2) {
            /* rank 0 decides when the pair stops: it sends -1 */
            int v = i, got = -1;
            if (rank == 0 && MPI_Wtime() - t0 >= secs - 0.2)
                v = -1;
            MPI_Sendrecv(&v, 1, MPI_INT, 1 - rank, 7, &got, 1, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            if (v == -1 || got == -1)
                break;
            bad |= got != i;
            i++;
        } else {
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s idle_job: %d exchanges\n", any ? "FAIL" : "PASS", i);
    MPI_Finalize();
    return any;
}
