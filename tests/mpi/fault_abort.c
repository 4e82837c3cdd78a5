/* MPI_Abort propagation (run by run_expect.sh): rank 1 (rank 0 when alone)
 * calls MPI_Abort(MPI_COMM_WORLD, 3) while every other rank is blocked in a
 * receive that nothing will match. The job must end with exit code 3, soon,
 * leaving no process behind. PXTEST_ABORT_CODE gives another code (0: the
 * job still ends at once, and pxrun exits 0, as mpiexec does). */
#include "px_test.h"

int main(int argc, char **argv)
{
    int victim, dummy;

    px_test_init(&argc, &argv, "fault_abort");
    victim = px_test_size > 1 ? 1 : 0;
    const char *env = getenv("PXTEST_ABORT_CODE");
    int code = env ? atoi(env) : 3;
    MPI_Barrier(MPI_COMM_WORLD);
    if (px_test_rank == victim) {
        px_sleep_ms(200); /* let the others block first */
        printf("PX_FAULT_MARK rank=%d t=%.6f: calling MPI_Abort(MPI_COMM_WORLD, %d)\n",
               px_test_rank, px_epoch_now(), code);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, code);
        fprintf(stderr, "FAIL fault_abort: MPI_Abort returned\n");
        return 97;
    }
    MPI_Recv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "FAIL fault_abort rank %d: a receive nothing sent completed\n", px_test_rank);
    return 98;
}
