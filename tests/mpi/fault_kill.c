/* A rank killed by SIGKILL (run by run_expect.sh): rank 1 (rank 0 when
 * alone) kills itself while the others wait for a message from it. The job
 * must end non-zero with a message naming the signal, soon, leaving no
 * process behind. */
#include "px_test.h"

#include <signal.h>

int main(int argc, char **argv)
{
    int victim, dummy;

    px_test_init(&argc, &argv, "fault_kill");
    victim = px_test_size > 1 ? 1 : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (px_test_rank == victim) {
        px_sleep_ms(200);
        printf("PX_FAULT_MARK rank=%d t=%.6f: raising SIGKILL\n", px_test_rank, px_epoch_now());
        fflush(stdout);
        raise(SIGKILL);
        return 97;
    }
    MPI_Recv(&dummy, 1, MPI_INT, victim, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "FAIL fault_kill rank %d: received from a killed rank\n", px_test_rank);
    return 98;
}
