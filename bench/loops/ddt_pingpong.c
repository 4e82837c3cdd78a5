/* Ping-pong of a non-contiguous message between ranks 0 and 1: BYTES of
 * data in 64-byte blocks, every other one (MPI_Type_vector), or the same
 * bytes contiguous for reference. ITERS round trips after a few warm-up
 * ones; the first message's data is checked at rank 1. Rank 0 prints one
 * JSON line with the median one-way time (half a round trip) in µs and
 * the most a rank's peak resident memory grew during the ping-pong, MB
 * (what the library took for the messages beyond the program's buffer):
 *   bench/loops/ddt_pingpong BYTES ITERS vector|contig */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

enum { BLOCK = 64 };

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    if (argc < 4) {
        if (r == 0)
            fprintf(stderr, "usage: ddt_pingpong BYTES ITERS vector|contig\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long bytes = atol(argv[1]);
    int iters = atoi(argv[2]), vector = !strcmp(argv[3], "vector");
    long blocks = bytes / BLOCK;
    bytes = blocks * BLOCK;
    size_t span = vector ? 2 * (size_t)bytes : (size_t)bytes;
    unsigned char *buf = malloc(span ? span : 1);
    for (size_t i = 0; i < span; i++)
        buf[i] = r == 0 ? (unsigned char)(i * 7 + i / 4096) : 0;
    MPI_Datatype t;
    if (vector)
        MPI_Type_vector((int)blocks, BLOCK, 2 * BLOCK, MPI_BYTE, &t);
    else
        MPI_Type_contiguous((int)bytes, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    double *tm = malloc(sizeof(double) * (size_t)iters);
    int bad = 0;
    long rss0 = maxrss_kb();
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -3; i < iters; i++) {
        double t0 = MPI_Wtime();
        if (r == 0) {
            MPI_Send(buf, 1, t, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, 1, t, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (r == 1) {
            MPI_Recv(buf, 1, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (i == -3)
                for (size_t k = 0; k < span; k++)
                    if ((!vector || k % (2 * BLOCK) < BLOCK) &&
                        buf[k] != (unsigned char)(k * 7 + k / 4096))
                        bad++;
            MPI_Send(buf, 1, t, 0, 0, MPI_COMM_WORLD);
        }
        if (i >= 0)
            tm[i] = (MPI_Wtime() - t0) / 2 * 1e6;
    }
    long grew = (maxrss_kb() - rss0) >> 10;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &grew, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (r == 0) {
        qsort(tm, (size_t)iters, sizeof(double), cmp);
        printf("{\"bytes\":%ld,\"layout\":\"%s\",\"iters\":%d,\"median_us\":%.2f,"
               "\"grew_mb\":%ld,\"wrong\":%d}\n",
               bytes, vector ? "vector" : "contig", iters, tm[iters / 2], grew, bad);
    }
    MPI_Type_free(&t);
    free(tm);
    free(buf);
    MPI_Finalize();
    return bad != 0;
}
