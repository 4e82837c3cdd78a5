/* The MPI program of the build-system tests (cmake_findmpi.sh, meson_mpi.sh):
 * succeeds only as one 2-rank job whose allreduce sums the ranks. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, sum = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("size %d sum %d\n", size, sum);
    MPI_Finalize();
    return size == 2 && sum == 1 ? 0 : 1;
}
