/* Gatherv, scatterv, allgatherv and alltoallv of COUNT bytes per block,
 * each ITERATIONS times after 500 warm-up calls, back to back or (sync) with
 * a barrier after each, through the int entry points and (with an MPI-4.0
 * library) the large-count ones, which mpi4py calls; then gather, scatter,
 * bcast (COUNT bytes) and reduce (COUNT / 8 doubles, at least one), through
 * the int ones; prints the slowest rank's mean time per call (barrier
 * included), one line each:
 *   bench/loops/vcoll COUNT [ITERATIONS [sync]]
 * Build with each library's mpicc (bench/vcoll.py does). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4
typedef MPI_Count big_t;
#else
typedef long long big_t; /* unused: no large-count calls */
#endif

enum {
    GATHERV,
    SCATTERV,
    ALLGATHERV,
    ALLTOALLV,
    VKINDS,
    GATHER = VKINDS,
    SCATTER,
    BCAST,
    REDUCE,
    KINDS
};
static const char *names[KINDS] = {"gatherv", "scatterv", "allgatherv", "alltoallv",
                                   "gather",  "scatter",  "bcast",      "reduce"};

static void run(int kind, int big, const char *s, char *r, const int *ic, const int *id,
                const big_t *c, const MPI_Aint *d, int cnt)
{
    (void)c, (void)d;
#if MPI_VERSION >= 4
    if (big) {
        switch (kind) {
        case GATHERV:
            MPI_Gatherv_c(s, cnt, MPI_BYTE, r, c, d, MPI_BYTE, 0, MPI_COMM_WORLD);
            break;
        case SCATTERV:
            MPI_Scatterv_c(s, c, d, MPI_BYTE, r, cnt, MPI_BYTE, 0, MPI_COMM_WORLD);
            break;
        case ALLGATHERV:
            MPI_Allgatherv_c(s, cnt, MPI_BYTE, r, c, d, MPI_BYTE, MPI_COMM_WORLD);
            break;
        default:
            MPI_Alltoallv_c(s, c, d, MPI_BYTE, r, c, d, MPI_BYTE, MPI_COMM_WORLD);
        }
        return;
    }
#endif
    switch (kind) {
    case GATHERV:
        MPI_Gatherv(s, cnt, MPI_BYTE, r, ic, id, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case SCATTERV:
        MPI_Scatterv(s, ic, id, MPI_BYTE, r, cnt, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case ALLGATHERV:
        MPI_Allgatherv(s, cnt, MPI_BYTE, r, ic, id, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case GATHER:
        MPI_Gather(s, cnt, MPI_BYTE, r, cnt, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case SCATTER:
        MPI_Scatter(s, cnt, MPI_BYTE, r, cnt, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case BCAST:
        MPI_Bcast(r, cnt, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case REDUCE:
        MPI_Reduce(s, r, cnt >= 16 ? cnt / 8 : 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    default:
        MPI_Alltoallv(s, ic, id, MPI_BYTE, r, ic, id, MPI_BYTE, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int cnt = argc > 1 ? atoi(argv[1]) : 8, iters = argc > 2 ? atoi(argv[2]) : 20000;
    int sync = argc > 3 && !strcmp(argv[3], "sync");
    size_t room = (size_t)(cnt > 8 ? cnt : 8) * n;
    char *s = calloc(room, 1), *r = calloc(room, 1);
    int *ic = malloc(n * sizeof(int)), *id = malloc(n * sizeof(int));
    big_t *cc = malloc(n * sizeof(big_t));
    MPI_Aint *cd = malloc(n * sizeof(MPI_Aint));
    for (int i = 0; i < n; i++)
        ic[i] = cnt, id[i] = i * cnt, cc[i] = cnt, cd[i] = (MPI_Aint)i * cnt;
    for (int big = 0; big < (MPI_VERSION >= 4 ? 2 : 1); big++)
        for (int k = 0; k < (big ? VKINDS : KINDS); k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = 0;
            for (int i = -500; i < iters; i++) {
                if (i == 0)
                    t0 = MPI_Wtime();
                run(k, big, s, r, ic, id, cc, cd, cnt);
                if (sync)
                    MPI_Barrier(MPI_COMM_WORLD);
            }
            double us = (MPI_Wtime() - t0) / iters * 1e6, most;
            MPI_Reduce(&us, &most, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0)
                printf("%s%s %.3f\n", names[k], big ? "_c" : "", most);
        }
    free(s), free(r), free(ic), free(id), free(cc), free(cd);
    MPI_Finalize();
    return 0;
}
