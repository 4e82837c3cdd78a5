/* A rank leaving without MPI_Finalize (run by run_expect.sh): rank 1 (rank 0
 * when alone) calls exit(3) while the others wait in MPI_Barrier. The job
 * must end with exit code 3, soon, leaving no process behind. */
#include "px_test.h"

int main(int argc, char **argv)
{
    int victim;

    px_test_init(&argc, &argv, "fault_exit");
    victim = px_test_size > 1 ? 1 : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (px_test_rank == victim) {
        px_sleep_ms(200);
        printf("PX_FAULT_MARK rank=%d t=%.6f: calling exit(3)\n", px_test_rank, px_epoch_now());
        fflush(stdout);
        exit(3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fprintf(stderr, "FAIL fault_exit rank %d: barrier completed without rank %d\n", px_test_rank,
            victim);
    return 98;
}
