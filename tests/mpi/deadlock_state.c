/* A job stuck for good (run by run_expect.sh, not in the testlist): after a
 * barrier, rank 1 sends rank 0 a message it never receives (tag 9), then
 * ranks 0 and 1 each wait for a message the other never sends (tag 7). At
 * --timeout pxrun asks every rank for its state before ending the job; the
 * test checks that rank 0 names the receive it waits for and the message it
 * left unreceived. */
#include "px_test.h"

int main(int argc, char **argv)
{
    int x = 42, y;

    px_test_init(&argc, &argv, "deadlock_state");
    if (px_test_size < 2) {
        fprintf(stderr, "deadlock_state needs 2 ranks\n");
        return 2;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (px_test_rank == 1)
        MPI_Send(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
    if (px_test_rank < 2) {
        printf("PX_FAULT_MARK rank=%d t=%.6f: waiting for a message never sent\n", px_test_rank,
               px_epoch_now());
        fflush(stdout);
        MPI_Recv(&y, 1, MPI_INT, 1 - px_test_rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Finalize(); /* the others wait in theirs */
        return 0;
    }
    fprintf(stderr, "FAIL deadlock_state rank %d: a receive completed\n", px_test_rank);
    return 98;
}
