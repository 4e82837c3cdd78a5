/* pxdemo: a small MPI job that shows Plexus working. Every rank reports
 * where it runs and which channel reaches its neighbour; ranks pass a
 * token around a ring, agree on a checksum with MPI_Allreduce, and ranks
 * 0 and 1 measure latency and bandwidth between them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, len;
    char host[MPI_MAX_PROCESSOR_NAME];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);

    /* ring: each rank adds its rank to a token */
    long token = 0;
    if (size > 1) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_LONG, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank;
            MPI_Send(&token, 1, MPI_LONG, (rank + 1) % size, 0, MPI_COMM_WORLD);
        }
    }
    long sum = 0, mine = rank;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    long expect = (long)size * (size - 1) / 2;

    for (int r = 0; r < size; r++) {
        if (r == rank) {
            printf("rank %d of %d on %s: allreduce sum %ld (%s)%s\n", rank, size, host, sum,
                   sum == expect ? "ok" : "WRONG",
                   rank == 0 && size > 1
                       ? (token == expect ? ", ring token ok" : ", ring token WRONG")
                       : "");
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    if (size > 1 && rank < 2) {
        int peer = 1 - rank, iters = 2000;
        char small[8] = {0};
        size_t big = 4u << 20;
        char *buf = malloc(big);
        memset(buf, rank, big);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(small, 8, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(small, 8, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(small, 8, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(small, 8, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
            }
        }
        double lat = (MPI_Wtime() - t0) / iters / 2 * 1e6;
        int reps = 20;
        t0 = MPI_Wtime();
        for (int i = 0; i < reps; i++) {
            if (rank == 0)
                MPI_Send(buf, (int)big, MPI_CHAR, peer, 2, MPI_COMM_WORLD);
            else
                MPI_Recv(buf, (int)big, MPI_CHAR, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Sendrecv(small, 1, MPI_CHAR, peer, 3, small, 1, MPI_CHAR, peer, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        double bw = (double)big * reps / (MPI_Wtime() - t0) / 1e6;
        if (rank == 0)
            printf("rank 0 <-> rank 1: 8-byte latency %.2f us, 4 MB bandwidth %.0f MB/s\n", lat,
                   bw);
        free(buf);
    }
    MPI_Finalize();
    return sum == expect ? 0 : 1;
}
