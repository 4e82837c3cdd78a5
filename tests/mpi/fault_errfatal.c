/* The default handler MPI_ERRORS_ARE_FATAL (run by run_expect.sh): rank 1
 * (rank 0 when alone) sends to an invalid rank while the others wait in
 * MPI_Barrier. The error must end the whole job non-zero, soon, with no
 * process left; returning from the bad call is a failure. */
#include "px_test.h"

int main(int argc, char **argv)
{
    int victim, x = 1;

    px_test_init(&argc, &argv, "fault_errfatal");
    victim = px_test_size > 1 ? 1 : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (px_test_rank == victim) {
        px_sleep_ms(200);
        printf("PX_FAULT_MARK rank=%d t=%.6f: MPI_Send to rank %d\n", px_test_rank, px_epoch_now(),
               px_test_size + 5);
        fflush(stdout);
        int rc = MPI_Send(&x, 1, MPI_INT, px_test_size + 5, 0, MPI_COMM_WORLD);
        fprintf(stderr,
                "FAIL fault_errfatal: invalid MPI_Send returned %d under "
                "MPI_ERRORS_ARE_FATAL\n",
                rc);
        return 0; /* exit 0 so that the driver sees the job "succeed" and fails */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fprintf(stderr, "FAIL fault_errfatal rank %d: barrier completed\n", px_test_rank);
    return 0;
}
