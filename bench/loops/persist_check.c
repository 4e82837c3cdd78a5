/* Every persistent collective of MPI-4.0 (MPI_*_init) started STARTS times
 * on MPI_COMM_WORLD with new data before each start, the result checked
 * after each MPI_Wait: what IMB-MPI4 times without looking at the data.
 * For each collective and block size (bytes per rank and block, as IMB
 * counts them) prints
 *   name bytes us wrong
 * us: the mean time of MPI_Start + MPI_Wait over the starts, averaged over
 * the ranks (IMB's t_avg); wrong: how many starts left a wrong result at
 * some rank (0 when every start delivered its own data). A barrier
 * separates the starts, as IMB's do.
 *   persist_check [STARTS] [BYTES...]
 * Build with any MPI-4.0 library's mpicc (bench/persist_check.py does). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    BCAST,
    REDUCE,
    ALLREDUCE,
    GATHER,
    SCATTER,
    ALLGATHER,
    ALLTOALL,
    REDUCE_SCATTER_BLOCK,
    GATHERV,
    SCATTERV,
    ALLGATHERV,
    ALLTOALLV,
    REDUCE_SCATTER,
    SCAN,
    EXSCAN,
    NCOLL
};
static const char *names[NCOLL] = {
    "Bcast",          "Reduce",    "Allreduce",  "Gather",
    "Scatter",        "Allgather", "Alltoall",   "Reduce_scatter_block",
    "Gatherv",        "Scatterv",  "Allgatherv", "Alltoallv",
    "Reduce_scatter", "Scan",      "Exscan"};

static int rank, size;

/* the value of element k of the block rank `from` sends to rank `to` at start s */
static int val(int from, int to, int s, int k)
{
    return (from * 131 + to * 37 + s * 17 + k) % 100003;
}

/* send buffer of start s, size * cnt ints (block d for rank d) */
static void fill(int c, int *sb, int cnt, int s)
{
    for (int d = 0; d < size; d++)
        for (int k = 0; k < cnt; k++) {
            int to = d;
            if (c == BCAST || c == REDUCE || c == ALLREDUCE || c == GATHER || c == ALLGATHER ||
                c == GATHERV || c == ALLGATHERV || c == SCAN || c == EXSCAN)
                to = 0; /* one block, the same for everyone */
            sb[d * cnt + k] = val(rank, to, s, k);
        }
}

static int sum(int upto, int to, int s, int k)
{
    int v = 0;
    for (int r = 0; r < upto; r++)
        v += val(r, to, s, k);
    return v;
}

/* 1 when this rank's result of start s is right */
static int check(int c, const int *rb, const int *bb, int cnt, int s)
{
    for (int k = 0; k < cnt; k++) {
        switch (c) {
        case BCAST:
            if (bb[k] != val(0, 0, s, k))
                return 0;
            break;
        case REDUCE:
            if (rank == 0 && rb[k] != sum(size, 0, s, k))
                return 0;
            break;
        case ALLREDUCE:
            if (rb[k] != sum(size, 0, s, k))
                return 0;
            break;
        case SCAN:
            if (rb[k] != sum(rank + 1, 0, s, k))
                return 0;
            break;
        case EXSCAN:
            if (rank > 0 && rb[k] != sum(rank, 0, s, k))
                return 0;
            break;
        case SCATTER:
        case SCATTERV:
            if (rb[k] != val(0, rank, s, k))
                return 0;
            break;
        case REDUCE_SCATTER_BLOCK:
        case REDUCE_SCATTER:
            if (rb[k] != sum(size, rank, s, k))
                return 0;
            break;
        default:
            for (int r = 0; r < size; r++) {
                if ((c == GATHER || c == GATHERV) && rank != 0)
                    break;
                int to = (c == ALLTOALL || c == ALLTOALLV) ? rank : 0;
                if (rb[r * cnt + k] != val(r, to, s, k))
                    return 0;
            }
        }
    }
    return 1;
}

static void make(int c, int *sb, int *rb, int *bb, int cnt, int *counts, int *displs,
                 MPI_Request *q)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info i = MPI_INFO_NULL;
    switch (c) {
    case BCAST:
        MPI_Bcast_init(bb, cnt, MPI_INT, 0, w, i, q);
        break;
    case REDUCE:
        MPI_Reduce_init(sb, rb, cnt, MPI_INT, MPI_SUM, 0, w, i, q);
        break;
    case ALLREDUCE:
        MPI_Allreduce_init(sb, rb, cnt, MPI_INT, MPI_SUM, w, i, q);
        break;
    case GATHER:
        MPI_Gather_init(sb, cnt, MPI_INT, rb, cnt, MPI_INT, 0, w, i, q);
        break;
    case SCATTER:
        MPI_Scatter_init(sb, cnt, MPI_INT, rb, cnt, MPI_INT, 0, w, i, q);
        break;
    case ALLGATHER:
        MPI_Allgather_init(sb, cnt, MPI_INT, rb, cnt, MPI_INT, w, i, q);
        break;
    case ALLTOALL:
        MPI_Alltoall_init(sb, cnt, MPI_INT, rb, cnt, MPI_INT, w, i, q);
        break;
    case REDUCE_SCATTER_BLOCK:
        MPI_Reduce_scatter_block_init(sb, rb, cnt, MPI_INT, MPI_SUM, w, i, q);
        break;
    case GATHERV:
        MPI_Gatherv_init(sb, cnt, MPI_INT, rb, counts, displs, MPI_INT, 0, w, i, q);
        break;
    case SCATTERV:
        MPI_Scatterv_init(sb, counts, displs, MPI_INT, rb, cnt, MPI_INT, 0, w, i, q);
        break;
    case ALLGATHERV:
        MPI_Allgatherv_init(sb, cnt, MPI_INT, rb, counts, displs, MPI_INT, w, i, q);
        break;
    case ALLTOALLV:
        MPI_Alltoallv_init(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT, w, i, q);
        break;
    case REDUCE_SCATTER:
        MPI_Reduce_scatter_init(sb, rb, counts, MPI_INT, MPI_SUM, w, i, q);
        break;
    case SCAN:
        MPI_Scan_init(sb, rb, cnt, MPI_INT, MPI_SUM, w, i, q);
        break;
    case EXSCAN:
        MPI_Exscan_init(sb, rb, cnt, MPI_INT, MPI_SUM, w, i, q);
        break;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int starts = argc > 1 ? atoi(argv[1]) : 200;
    int nsz = argc > 2 ? argc - 2 : 1;
    for (int z = 0; z < nsz; z++) {
        int bytes = argc > 2 ? atoi(argv[2 + z]) : 4096;
        int cnt = bytes / 4 > 0 ? bytes / 4 : 1;
        size_t n = (size_t)cnt * size;
        int *sb = malloc(n * 4), *rb = malloc(n * 4), *bb = malloc(n * 4);
        int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
        for (int d = 0; d < size; d++) {
            counts[d] = cnt;
            displs[d] = d * cnt;
        }
        for (int c = 0; c < NCOLL; c++) {
            MPI_Request q;
            make(c, sb, rb, bb, cnt, counts, displs, &q);
            double t = 0;
            int wrong = 0;
            for (int s = 0; s < starts; s++) {
                fill(c, sb, cnt, s);
                memset(rb, 0xff, n * 4);
                if (c == BCAST) {
                    if (rank == 0)
                        memcpy(bb, sb, (size_t)cnt * 4);
                    else
                        memset(bb, 0xff, (size_t)cnt * 4);
                }
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                MPI_Start(&q);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
                t += MPI_Wtime() - t0;
                int ok = check(c, rb, bb, cnt, s), all;
                MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
                wrong += !all;
            }
            MPI_Request_free(&q);
            double us = t / starts * 1e6, avg;
            MPI_Reduce(&us, &avg, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            if (rank == 0)
                printf("%s %d %.3f %d\n", names[c], bytes, avg / size, wrong);
            fflush(stdout);
        }
        free(sb);
        free(rb);
        free(bb);
        free(counts);
        free(displs);
    }
    MPI_Finalize();
    return 0;
}
