/* PX_PROGRESS_MODE=sleep and block with MPI_THREAD_MULTIPLE and with
 * shared-memory collectives: a rank that sleeps in the kernel must be woken
 * by whatever it waits for, not by the bound on its sleep.
 *
 * First, collectives with skewed arrivals: on one machine they go through a
 * segment the ranks share, whose stores no message announces. Then several
 * threads per rank ping-pong with the same thread of the partner rank, each
 * with its own tag: one thread of the process sleeps in the kernel, and the
 * others must be woken when it completes their messages. Payloads are
 * checked; a lost wake-up shows as a mean time per operation far above the
 * bound (the sleep's own bound is 1 ms with network peers, 100 ms without). */
#include <pthread.h>
#include <unistd.h>

#include "px_test.h"

#define ITERS 300
#define NTHREADS 4
#define ROUNDS 200
#define MEAN_MAX_S 0.005 /* per operation; a loaded CI machine included */

static int rank, size, nerr;

#define TCHECK(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (__atomic_add_fetch(&nerr, 1, __ATOMIC_RELAXED) < 20) {                             \
                fprintf(stderr, "FAIL progress_sleep_mt rank %d: ", rank);                         \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static void *pingpong(void *arg)
{
    int t = (int)(intptr_t)arg, peer = rank ^ 1, buf[64];
    for (int i = 0; i < ROUNDS; i++) {
        if (rank % 2 == 0) {
            for (int k = 0; k < 64; k++)
                buf[k] = (t << 24) + i * 64 + k;
            MPI_Send(buf, 64, MPI_INT, peer, t, MPI_COMM_WORLD);
            MPI_Recv(buf, 64, MPI_INT, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int k = 0; k < 64; k++)
                if (buf[k] != (t << 24) + i * 64 + k + 1) {
                    TCHECK(0, "thread %d round %d word %d is %d", t, i, k, buf[k]);
                    return NULL;
                }
        } else {
            MPI_Recv(buf, 64, MPI_INT, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int k = 0; k < 64; k++)
                buf[k]++;
            MPI_Send(buf, 64, MPI_INT, peer, t, MPI_COMM_WORLD);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = getenv("PX_PROGRESS_MODE");
    if (!mode || (strcmp(mode, "sleep") && strcmp(mode, "block"))) {
        if (rank == 0)
            fprintf(stderr, "FAIL progress_sleep_mt: run with PX_PROGRESS_MODE=sleep or block\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    TCHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d", provided);

    /* collectives, one rank late now and then, a different one each time */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < ITERS; it++) {
        if (it % 7 == 0 && rank == (it / 7) % size)
            usleep(200);
        int v[4], s[4];
        for (int k = 0; k < 4; k++)
            v[k] = it * 31 + rank * 7 + k;
        MPI_Allreduce(v, s, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int k = 0; k < 4; k++)
            TCHECK(s[k] == size * (it * 31 + k) + 7 * size * (size - 1) / 2,
                   "allreduce %d word %d is %d", it, k, s[k]);
        int b = rank == it % size ? it : -1;
        MPI_Bcast(&b, 1, MPI_INT, it % size, MPI_COMM_WORLD);
        TCHECK(b == it, "bcast %d gave %d", it, b);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double coll = (MPI_Wtime() - t0) / ITERS;

    /* threads: pairs of ranks (0,1), (2,3), ...; an odd last rank waits */
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (rank < size - size % 2) {
        pthread_t th[NTHREADS];
        for (int t = 0; t < NTHREADS; t++)
            pthread_create(&th[t], NULL, pingpong, (void *)(intptr_t)t);
        for (int t = 0; t < NTHREADS; t++)
            pthread_join(th[t], NULL);
    }
    double rtt = (MPI_Wtime() - t0) / ROUNDS;
    MPI_Barrier(MPI_COMM_WORLD);

    double worst[2], mine[2] = {coll, rank < size - size % 2 ? rtt : 0};
    MPI_Allreduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        TCHECK(worst[0] < MEAN_MAX_S, "a round of collectives took %.2f ms on average",
               1e3 * worst[0]);
        TCHECK(size < 2 || worst[1] < MEAN_MAX_S, "%d threads' round trips took %.2f ms on average",
               NTHREADS, 1e3 * worst[1]);
    }
    int fail = nerr != 0, any;
    MPI_Allreduce(&fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && !any)
        printf("PASS progress_sleep_mt np=%d: %s, collectives %.3f ms a round, %d threads' round "
               "trips %.3f ms\n",
               size, mode, 1e3 * worst[0], NTHREADS, 1e3 * worst[1]);
    return any;
}
