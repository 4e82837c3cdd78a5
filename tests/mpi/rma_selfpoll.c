/* A process that polls its own part of a window in a loop still serves the
 * others' operations on it, without any other MPI call: rank 0 waits,
 * inside MPI_Win_lock_all, for a counter in its own part to reach a total
 * by MPI_Get_accumulate(MPI_NO_OP) on itself and MPI_Win_flush, while
 * every other rank adds to that counter with MPI_Accumulate and
 * MPI_Win_flush, then waits for rank 0's go the same way (the token chase
 * of MPICH's linked-list benchmarks). The window is made by MPI_Win_create,
 * so that the operations travel as messages even on one machine. The
 * counts are checked at the end. */
#include "px_test.h"

#define ADDS 200

/* Polls long `disp` of rank t's part with atomic reads until it reaches want. */
static void poll_until(MPI_Win win, int t, MPI_Aint disp, long want)
{
    long got = -1;
    do {
        PX_MPI(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &got, 1, MPI_LONG, t, disp, 1,
                                  MPI_LONG, MPI_NO_OP, win));
        PX_MPI(MPI_Win_flush(t, win));
    } while (got < want);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "rma_selfpoll");
    if (px_test_size < 2)
        return px_test_skip("needs 2 ranks");
    int me = px_test_rank, np = px_test_size;
    long *mem = calloc(2, sizeof(long)); /* the counter, then the go */
    MPI_Win win;
    PX_MPI(
        MPI_Win_create(mem, 2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    long total = (long)(np - 1) * ADDS, one = 1;
    PX_MPI(MPI_Win_lock_all(0, win));
    if (me == 0) {
        poll_until(win, 0, 0, total); /* its own part: the others' adds land meanwhile */
        for (int t = 1; t < np; t++) {
            PX_MPI(MPI_Accumulate(&one, 1, MPI_LONG, t, 1, 1, MPI_LONG, MPI_SUM, win));
            PX_MPI(MPI_Win_flush(t, win));
        }
    } else {
        for (int i = 0; i < ADDS; i++) {
            PX_MPI(MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win));
            PX_MPI(MPI_Win_flush(0, win));
        }
        poll_until(win, me, 1, 1); /* the go, polled on its own part likewise */
    }
    PX_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        PX_CHECK(mem[0] == total, "counter %ld, want %ld", mem[0], total);
    else
        PX_CHECK(mem[1] == 1, "go %ld", mem[1]);
    PX_MPI(MPI_Win_free(&win));
    free(mem);
    return px_test_finish("%d adds per rank, polled on the target's own part", ADDS);
}
