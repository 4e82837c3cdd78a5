/* A target that computes without calling MPI still serves its window when
 * the progress thread is on (PX_ASYNC_PROGRESS=1, as the testlist runs
 * it). Rank 0 exposes a window made by MPI_Win_create (so that its peers
 * reach it by messages even on one machine), posts a 4 MB receive from
 * rank 1 and then computes for BUSY_MS. Meanwhile every other rank runs
 * passive-target epochs against it (exclusive lock, put, get, accumulate,
 * fetch-and-op, unlock) and rank 1 also sends it the 4 MB message
 * (rendezvous: the receiver has to answer). All of it must complete well
 * before BUSY_MS is over (DEADLINE_MS); the window's data and counter are
 * checked after. */
#include "px_test.h"

#define BUSY_MS 3000
/* well before the target calls MPI again (also over a lossy network, where
 * the 4 MB message alone may take most of a second) */
#define DEADLINE_MS (BUSY_MS * 3 / 4)
#define EPOCHS 20
#define N 64
#define BIG (4 << 20)

static double now(void) { return MPI_Wtime(); }

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "rma_busy");
    if (px_test_size < 2)
        return px_test_skip("needs 2 ranks");
    int me = px_test_rank, size = px_test_size;
    /* per origin: N ints of data, then the shared counter at the end */
    long *mem = calloc((size_t)size * N + 1, sizeof(long));
    PX_REQUIRE(mem, "no memory");
    MPI_Win win;
    PX_MPI(MPI_Win_create(mem, ((MPI_Aint)size * N + 1) * (MPI_Aint)sizeof(long), sizeof(long),
                          MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    char *big = malloc(BIG);
    PX_REQUIRE(big, "no memory");
    MPI_Request rreq = MPI_REQUEST_NULL;
    if (me == 0)
        PX_MPI(MPI_Irecv(big, BIG, MPI_CHAR, 1, 7, MPI_COMM_WORLD, &rreq));
    else if (me == 1)
        px_fill(big, BIG, 77);
    MPI_Barrier(MPI_COMM_WORLD);

    double t0 = now(), took = 0, send_took = 0;
    if (me == 0) {
        /* computing: no MPI call until BUSY_MS have passed */
        volatile double x = 1;
        while ((now() - t0) * 1000 < BUSY_MS)
            for (int i = 0; i < 100000; i++)
                x = x * 1.0000001 + 1e-9;
    } else {
        long v[N], got[N], one = 1, old;
        for (int e = 0; e < EPOCHS; e++) {
            for (int i = 0; i < N; i++)
                v[i] = (long)me * 100000 + e * 1000 + i;
            PX_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            PX_MPI(MPI_Put(v, N, MPI_LONG, 0, (MPI_Aint)me * N, N, MPI_LONG, win));
            PX_MPI(MPI_Win_flush(0, win));
            PX_MPI(MPI_Get(got, N, MPI_LONG, 0, (MPI_Aint)me * N, N, MPI_LONG, win));
            PX_MPI(MPI_Accumulate(&one, 1, MPI_LONG, 0, (MPI_Aint)size * N, 1, MPI_LONG, MPI_SUM,
                                  win));
            PX_MPI(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, (MPI_Aint)size * N, MPI_SUM, win));
            PX_MPI(MPI_Win_unlock(0, win));
            for (int i = 0; i < N; i++)
                PX_CHECK(got[i] == v[i], "epoch %d: got[%d] = %ld, want %ld", e, i, got[i], v[i]);
            PX_CHECK(old >= 2 * e + 1, "epoch %d: fetched counter %ld, want at least %d", e, old,
                     2 * e + 1);
        }
        took = now() - t0;
        if (me == 1) {
            double s0 = now();
            PX_MPI(MPI_Send(big, BIG, MPI_CHAR, 0, 7, MPI_COMM_WORLD));
            send_took = now() - s0;
        }
        PX_CHECK(took * 1000 < DEADLINE_MS,
                 "%d epochs against a busy target took %.0f ms (it computes for %d ms)", EPOCHS,
                 took * 1000, BUSY_MS);
        PX_CHECK(me != 1 || (took + send_took) * 1000 < DEADLINE_MS,
                 "a 4 MB send to a busy receiver ended %.0f ms in (it computes for %d ms)",
                 (took + send_took) * 1000, BUSY_MS);
    }
    if (me == 0) {
        MPI_Status st;
        PX_MPI(MPI_Wait(&rreq, &st));
        size_t bad = px_verify(big, BIG, 77);
        PX_CHECK(bad == BIG, "4 MB message corrupt at byte %zu", bad);
    }
    double mine[2] = {took, send_took}, worst[2] = {0, 0};
    MPI_Reduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        for (int r = 1; r < size; r++)
            for (int i = 0; i < N; i++) {
                long want = (long)r * 100000 + (EPOCHS - 1) * 1000 + i;
                PX_CHECK(mem[r * N + i] == want, "window[%d][%d] = %ld, want %ld", r, i,
                         mem[r * N + i], want);
            }
        long want = 2L * EPOCHS * (size - 1);
        PX_CHECK(mem[size * N] == want, "counter %ld, want %ld", mem[size * N], want);
    }
    PX_MPI(MPI_Win_free(&win));
    free(mem);
    free(big);
    return px_test_finish("%d origins x %d epochs against a target busy for %d ms: slowest %.0f "
                          "ms, then 4 MB in %.0f ms",
                          size - 1, EPOCHS, BUSY_MS, worst[0] * 1000, worst[1] * 1000);
}
