/* 1 MB broadcasts, or 256 KB allgathers, between two ranks, each checked:
 *   release bcast|bcast_late|allgather
 * (bcast_late: rank 1 comes to each broadcast 5 ms after the root)
 * Driven by release_test.py, which reads from PX_PROFILE which sends
 * completed before their acknowledgement (PX_RAIL_RELEASE). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ITERS 20

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int late = argc > 1 && !strcmp(argv[1], "bcast_late");
    int bcast = late || (argc > 1 && !strcmp(argv[1], "bcast"));
    size_t n = bcast ? (1u << 20) : (256u << 10);
    unsigned char *buf = malloc(n * (size_t)size), *mine = malloc(n);
    for (int it = 0; it < ITERS; it++) {
        if (bcast) {
            for (size_t i = 0; i < n; i++)
                buf[i] = rank == 0 ? (unsigned char)(i * 7 + it) : 0;
            if (late && rank == 1)
                usleep(5000);
            MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
            if (rank == 0) /* the root's buffer is its own again at once */
                memset(buf, 0xee, n);
            else
                for (size_t i = 0; i < n; i++)
                    bad += buf[i] != (unsigned char)(i * 7 + it);
            if (late) /* as OSU: the acknowledgements come back before rank 1 sleeps */
                MPI_Barrier(MPI_COMM_WORLD);
        } else {
            for (size_t i = 0; i < n; i++)
                mine[i] = (unsigned char)(i * 3 + rank + it);
            MPI_Allgather(mine, (int)n, MPI_BYTE, buf, (int)n, MPI_BYTE, MPI_COMM_WORLD);
            for (int r = 0; r < size; r++)
                for (size_t i = 0; i < n; i++)
                    bad += buf[(size_t)r * n + i] != (unsigned char)(i * 3 + r + it);
        }
    }
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all)
            printf("FAIL release: %d wrong bytes\n", all);
        else
            printf("PASS release %s\n", argv[1]);
    }
    free(buf);
    free(mine);
    MPI_Finalize();
    return all != 0;
}
