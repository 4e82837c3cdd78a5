/* One-sided interleaving test: rank 0 opens an access epoch on rank 1's
 * window (MPI_Win_start; rank 1 exposes it with MPI_Win_post) and issues
 * NOPS puts and NOPS gets of SIZE bytes, all puts first, then completes
 * the epoch; ITERS epochs. Puts load the link from origin to target, gets
 * from target to origin: issued as written, one direction works at a
 * time; a library that lets the gets go ahead of the queued puts uses both.
 * Rank 0 prints the throughput (bytes moved both ways per second).
 * Usage: interleave [SIZE [ITERS [NOPS]]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != 2) {
        if (!rank)
            fprintf(stderr, "interleave: needs exactly 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t size = argc > 1 ? (size_t)atol(argv[1]) : 1u << 20;
    int iters = argc > 2 ? atoi(argv[2]) : 10;
    int nops = argc > 3 ? atoi(argv[3]) : 16;
    char *win_mem, *local = malloc(2 * (size_t)nops * size);
    memset(local, rank + 1, 2 * (size_t)nops * size);
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)(2 * (size_t)nops * size), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                     &win_mem, &win);
    memset(win_mem, 7, 2 * (size_t)nops * size);
    MPI_Group world, peer;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int other = 1 - rank;
    MPI_Group_incl(world, 1, &other, &peer);
    double t0 = 0;
    for (int it = -1; it < iters; it++) { /* one warm-up epoch */
        if (it == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (rank == 0) {
            MPI_Win_start(peer, 0, win);
            for (int i = 0; i < nops; i++)
                MPI_Put(local + (size_t)i * size, (int)size, MPI_BYTE, 1, (MPI_Aint)(i * size),
                        (int)size, MPI_BYTE, win);
            for (int i = 0; i < nops; i++)
                MPI_Get(local + (size_t)(nops + i) * size, (int)size, MPI_BYTE, 1,
                        (MPI_Aint)((nops + i) * size), (int)size, MPI_BYTE, win);
            MPI_Win_complete(win);
        } else {
            MPI_Win_post(peer, 0, win);
            MPI_Win_wait(win);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double dt = MPI_Wtime() - t0;
    int bad = 0;
    if (rank == 0) {
        for (size_t i = (size_t)nops * size; i < 2 * (size_t)nops * size; i++)
            bad += local[i] != 7;
    } else {
        for (size_t i = 0; i < (size_t)nops * size; i++)
            bad += win_mem[i] != 1;
    }
    int allbad = 0;
    MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%zu bytes, %d puts + %d gets per epoch, %d epochs: %.1f MB/s%s\n", size, nops, nops,
               iters, 2.0 * nops * (double)size * iters / dt / 1e6, allbad ? " (DATA WRONG)" : "");
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    free(local);
    MPI_Finalize();
    return allbad != 0;
}
