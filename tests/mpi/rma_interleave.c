/* Many large puts, then gets, in one epoch: the puts' frames beyond
 * PX_RMA_PACE wait in the window while the gets go ahead of them. Every
 * rank puts NOPS blocks of SIZE bytes into its right neighbour's window
 * (some by MPI_Rput, waited in the middle of the epoch), then gets NOPS
 * blocks from its left neighbour's; under fence, lock_all + flush_all and
 * post/start/complete/wait, several rounds. The data put and got is
 * checked. */
#include "px_test.h"

#define NOPS 8
#define SIZE (384 * 1024 + 40) /* several frames, not a multiple of one */

static uint64_t seed(int rank, int round, int i) { return (uint64_t)rank * 1000 + round * 50 + i; }

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "rma_interleave");
    int me = px_test_rank, n = px_test_size;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    size_t part = (size_t)NOPS * SIZE; /* [puts received | blocks others get] */
    char *mem = malloc(2 * part), *src = malloc(part), *got = malloc(part);
    PX_REQUIRE(mem && src && got, "no memory");
    MPI_Win win; /* made by messages even on one machine */
    PX_MPI(MPI_Win_create(mem, (MPI_Aint)(2 * part), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int rounds = 0;
    for (int sync = 0; sync < 3; sync++)
        for (int round = 0; round < 2; round++, rounds++) {
            /* this round's blocks to be got from me, and mine to put */
            for (int i = 0; i < NOPS; i++) {
                px_fill(mem + part + (size_t)i * SIZE, SIZE, seed(me, rounds, i) + 7);
                px_fill(src + (size_t)i * SIZE, SIZE, seed(me, rounds, i));
            }
            memset(got, 0, part);
            MPI_Barrier(MPI_COMM_WORLD);
            if (sync == 0)
                PX_MPI(MPI_Win_fence(0, win));
            else if (sync == 1)
                PX_MPI(MPI_Win_lock_all(0, win));
            else {
                PX_MPI(MPI_Win_post(world, 0, win));
                PX_MPI(MPI_Win_start(world, 0, win));
            }
            MPI_Request req[NOPS];
            int nreq = 0;
            for (int i = 0; i < NOPS; i++) {
                if (sync == 1 && i % 2)
                    PX_MPI(MPI_Rput(src + (size_t)i * SIZE, SIZE, MPI_BYTE, right,
                                    (MPI_Aint)i * SIZE, SIZE, MPI_BYTE, win, &req[nreq++]));
                else
                    PX_MPI(MPI_Put(src + (size_t)i * SIZE, SIZE, MPI_BYTE, right,
                                   (MPI_Aint)i * SIZE, SIZE, MPI_BYTE, win));
            }
            if (nreq)
                PX_MPI(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
            for (int i = 0; i < NOPS; i++)
                PX_MPI(MPI_Get(got + (size_t)i * SIZE, SIZE, MPI_BYTE, left,
                               (MPI_Aint)(part + (size_t)i * SIZE), SIZE, MPI_BYTE, win));
            if (sync == 0)
                PX_MPI(MPI_Win_fence(0, win));
            else if (sync == 1) {
                PX_MPI(MPI_Win_flush_all(win));
                PX_MPI(MPI_Win_unlock_all(win));
            } else {
                PX_MPI(MPI_Win_complete(win));
                PX_MPI(MPI_Win_wait(win));
            }
            MPI_Barrier(MPI_COMM_WORLD); /* every put to me is in place */
            for (int i = 0; i < NOPS; i++) {
                size_t bad = px_verify(got + (size_t)i * SIZE, SIZE, seed(left, rounds, i) + 7);
                PX_CHECK(bad == SIZE, "sync %d round %d: block %d got from %d wrong at byte %zu",
                         sync, round, i, left, bad);
                bad = px_verify(mem + (size_t)i * SIZE, SIZE, seed(left, rounds, i));
                PX_CHECK(bad == SIZE, "sync %d round %d: block %d put by %d wrong at byte %zu",
                         sync, round, i, left, bad);
            }
        }
    MPI_Group_free(&world);
    PX_MPI(MPI_Win_free(&win));
    free(mem);
    free(src);
    free(got);
    return px_test_finish("%d rounds of %d puts and %d gets of %d bytes", rounds, NOPS, NOPS, SIZE);
}
