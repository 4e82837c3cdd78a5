/* A rank killed by SIGKILL during collective writes (run by
 * run_expect.sh): every rank writes its block of a shared file with
 * MPI_File_write_at_all, round after round; in round KILL_ROUND rank 1
 * kills itself instead of entering the call, while the others are inside
 * it waiting for its pieces. The job must end non-zero with a message
 * naming the signal, soon, leaving no process behind (run_expect.sh checks
 * both), and so no process holding the file: rank 0 unlinks it right after
 * the open, so nothing of it is left once they are gone. */
#include "px_test.h"

#include <signal.h>
#include <unistd.h>

#define ROUNDS 50
#define KILL_ROUND 5
#define BLOCK 4096

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "io_kill");
    if (px_test_size < 2)
        return px_test_skip("needs 2 ranks");
    char path[256];
    int id = (int)getpid();
    MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof(path), "%s/io_kill.%d.dat", dir, id);
    MPI_File fh;
    PX_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (px_test_rank == 0)
        unlink(path);
    /* interleaved blocks: two-phase collective buffering */
    MPI_Datatype ft;
    MPI_Type_vector(ROUNDS, BLOCK, BLOCK * px_test_size, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    PX_MPI(MPI_File_set_view(fh, (MPI_Offset)px_test_rank * BLOCK, MPI_BYTE, ft, "native",
                             MPI_INFO_NULL));
    char buf[BLOCK];
    memset(buf, 'a' + px_test_rank % 26, sizeof(buf));
    for (int r = 0; r < ROUNDS; r++) {
        if (r == KILL_ROUND && px_test_rank == 1) {
            printf("PX_FAULT_MARK rank=%d t=%.6f: raising SIGKILL\n", px_test_rank, px_epoch_now());
            fflush(stdout);
            raise(SIGKILL);
        }
        MPI_File_write_at_all(fh, (MPI_Offset)r * BLOCK, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    fprintf(stderr, "FAIL io_kill rank %d: collective writes completed without rank 1\n",
            px_test_rank);
    return 98;
}
