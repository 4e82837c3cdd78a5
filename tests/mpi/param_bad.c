/* A parameter value the table refuses (run by run_expect.sh with a bad
 * PX_* value in the environment): MPI_Init must end the job at once, with a
 * non-zero exit code and a message naming the variable, instead of
 * returning or leaving ranks waiting for each other. */
#include "px_test.h"

int main(int argc, char **argv)
{
    /* the rank is not known before MPI_Init: the launcher's word for it */
    const char *rank = getenv("PX_RANK");
    printf("PX_FAULT_MARK rank=%s t=%.6f: calling MPI_Init with a bad parameter\n",
           rank && *rank ? rank : "0", px_epoch_now());
    fflush(stdout);
    MPI_Init(&argc, &argv);
    px_test_begin("param_bad");
    fprintf(stderr, "FAIL param_bad rank %d: MPI_Init returned despite the bad parameter\n",
            px_test_rank);
    MPI_Finalize();
    return 0; /* a job that gets here must not pass for one that failed */
}
