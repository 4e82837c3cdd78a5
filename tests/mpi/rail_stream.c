/* A checksummed stream of large blocking sends from rank 0 to rank 1, in
 * phases, for the multi-rail tests. Before each phase rank 0 prints
 * "READY <k>" and waits until the file <gate>/go<k> exists, so a driver can
 * change the fabric and read link counters between phases; after the last
 * phase it prints "PASS rail_stream ...". Rank 1 checks every block. Blocks
 * go WINDOW at a time as nonblocking sends (1: blocking MPI_Send).
 * Usage: rail_stream PHASES MB_PER_PHASE GATE_DIR [BLOCK_BYTES [WINDOW]] */
#include "px_test.h"

#include <unistd.h>

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "rail_stream");
    if (argc < 4 || px_test_size < 2)
        return px_test_skip("usage: rail_stream PHASES MB_PER_PHASE GATE_DIR [BLOCK], 2+ ranks");
    int phases = atoi(argv[1]);
    size_t per_phase = (size_t)atol(argv[2]) << 20;
    const char *gate = argv[3];
    size_t blk = argc > 4 ? (size_t)atol(argv[4]) : 4u << 20;
    int win = argc > 5 ? atoi(argv[5]) : 1;
    if (win < 1)
        win = 1;
    char *buf = malloc(blk * (size_t)win);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)win);
    int rank = px_test_rank;
    long nblk = (long)(per_phase / blk);

    for (int p = 0; p < phases; p++) {
        if (rank == 0) {
            char path[512];
            snprintf(path, sizeof(path), "%s/go%d", gate, p);
            printf("READY %d\n", p);
            fflush(stdout);
            for (int w = 0; access(path, F_OK) != 0; w++) {
                PX_REQUIRE(w < 60000, "gate %s never opened", path);
                px_sleep_ms(5);
            }
        }
        PX_MPI(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = MPI_Wtime();
        for (long i0 = 0; i0 < nblk; i0 += win) {
            int n = nblk - i0 < win ? (int)(nblk - i0) : win;
            for (int j = 0; j < n; j++) {
                uint64_t seed = ((uint64_t)p << 32) | (uint64_t)(i0 + j);
                char *b = buf + blk * (size_t)j;
                if (rank == 0) {
                    px_fill(b, blk, seed);
                    if (win == 1)
                        PX_MPI(MPI_Send(b, (int)blk, MPI_BYTE, 1, p, MPI_COMM_WORLD));
                    else
                        PX_MPI(MPI_Isend(b, (int)blk, MPI_BYTE, 1, p, MPI_COMM_WORLD, &req[j]));
                } else if (rank == 1) {
                    PX_MPI(MPI_Irecv(b, (int)blk, MPI_BYTE, 0, p, MPI_COMM_WORLD, &req[j]));
                }
            }
            if (rank == 1 || (rank == 0 && win > 1))
                PX_MPI(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
            for (int j = 0; rank == 1 && j < n; j++) {
                uint64_t seed = ((uint64_t)p << 32) | (uint64_t)(i0 + j);
                PX_CHECK(px_verify(buf + blk * (size_t)j, blk, seed) == blk,
                         "phase %d block %ld corrupted", p, i0 + j);
            }
        }
        PX_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            double dt = MPI_Wtime() - t0;
            printf("PHASE %d %.1f MB/s\n", p, (double)nblk * (double)blk / dt / 1e6);
            fflush(stdout);
        }
    }
    free(buf);
    free(req);
    return px_test_finish("%d phases of %ld blocks", phases, nblk);
}
