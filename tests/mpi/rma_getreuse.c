/* A target rewrites its window as soon as the fence or MPI_Win_wait that
 * ends an epoch returns, while others got from it in that epoch: every get
 * must see the epoch's data, never the next round's. Each rank gets from
 * its left neighbour a strided type (one small get per element) and a large
 * contiguous block (several frames), then rewrites its own window at once;
 * no barrier between. The standard lets the target do so: the fence or
 * wait completes the gets at the target too. */
#include "px_test.h"

#define NINT 2048             /* ints of the strided part of the window */
#define BIG (256 * 1024 + 12) /* bytes of the contiguous part */
#define ROUNDS 40

static int val(int rank, int round, int i) { return (rank * 1000 + round) * 4096 + i; }

static void rewrite(int *ints, char *big, int me, int round)
{
    for (int i = 0; i < NINT; i++)
        ints[i] = val(me, round, i);
    px_fill(big, BIG, (uint64_t)me * 1000 + (uint64_t)round);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "rma_getreuse");
    int me = px_test_rank, n = px_test_size;
    int left = (me + n - 1) % n;
    size_t len = NINT * sizeof(int) + BIG;
    char *mem = malloc(len), *big_got = malloc(BIG);
    int *got = malloc(NINT / 2 * sizeof(int));
    PX_REQUIRE(mem && big_got && got, "no memory");
    int *ints = (int *)mem;
    char *big = mem + NINT * sizeof(int);
    MPI_Datatype every2; /* the even ints of the strided part */
    PX_MPI(MPI_Type_vector(NINT / 2, 1, 2, MPI_INT, &every2));
    PX_MPI(MPI_Type_commit(&every2));
    MPI_Win win; /* made by messages even on one machine */
    PX_MPI(MPI_Win_create(mem, (MPI_Aint)len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int rounds = 0;
    rewrite(ints, big, me, 0);
    for (int sync = 0; sync < 2; sync++)
        for (int r = 0; r < ROUNDS; r++, rounds++) {
            if (sync == 0)
                PX_MPI(MPI_Win_fence(0, win));
            else {
                PX_MPI(MPI_Win_post(world, 0, win));
                PX_MPI(MPI_Win_start(world, 0, win));
            }
            memset(got, 0, NINT / 2 * sizeof(int));
            memset(big_got, 0, BIG);
            PX_MPI(MPI_Get(got, NINT / 2, MPI_INT, left, 0, 1, every2, win));
            PX_MPI(MPI_Get(big_got, BIG, MPI_BYTE, left, NINT * sizeof(int), BIG, MPI_BYTE, win));
            if (sync == 0)
                PX_MPI(MPI_Win_fence(0, win));
            else {
                PX_MPI(MPI_Win_complete(win));
                PX_MPI(MPI_Win_wait(win));
            }
            rewrite(ints, big, me, rounds + 1); /* the next round's, at once */
            int bad = -1;
            for (int i = 0; i < NINT / 2 && bad < 0; i++)
                if (got[i] != val(left, rounds, 2 * i))
                    bad = i;
            PX_CHECK(bad < 0, "%s round %d: element %d got from %d is %d, not %d",
                     sync ? "post/start" : "fence", r, bad, left, bad < 0 ? 0 : got[bad],
                     bad < 0 ? 0 : val(left, rounds, 2 * bad));
            size_t at = px_verify(big_got, BIG, (uint64_t)left * 1000 + (uint64_t)rounds);
            PX_CHECK(at == BIG, "%s round %d: block got from %d wrong at byte %zu",
                     sync ? "post/start" : "fence", r, left, at);
        }
    MPI_Group_free(&world);
    PX_MPI(MPI_Win_free(&win));
    PX_MPI(MPI_Type_free(&every2));
    free(mem);
    free(big_got);
    free(got);
    return px_test_finish("%d rounds of a strided and a %d-byte get, the window rewritten at once",
                          rounds, BIG);
}
