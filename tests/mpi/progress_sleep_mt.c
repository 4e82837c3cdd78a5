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
 * bound (the sleep's own bound is 1 ms with network peers, 100 ms without).
 *
 * Last, requests that another thread of the same rank completes while
 * nothing arrives: a receive from the rank itself that the other thread
 * sends, and a generalized request that it completes. The thread asleep
 * in the kernel must be woken by the other thread, not by the bound (which
 * only shared memory's 100 ms shows). */
#include <pthread.h>
#include <unistd.h>

#include "px_test.h"

#define ITERS 300
#define NTHREADS 4
#define ROUNDS 200
#define MEAN_MAX_S 0.005 /* per operation; a loaded CI machine included */
#define KICKS 8
#define KICK_DELAY_US 3000 /* before the other thread completes the request */
#define KICK_MAX_S 0.02    /* mean wait for it, the delay included */

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

static MPI_Request kick_req;

static void *kick_send(void *arg)
{
    int v = (int)(intptr_t)arg;
    usleep(KICK_DELAY_US);
    MPI_Send(&v, 1, MPI_INT, rank, 100, MPI_COMM_WORLD);
    return NULL;
}

static void *kick_grequest(void *arg)
{
    (void)arg;
    usleep(KICK_DELAY_US);
    MPI_Grequest_complete(kick_req);
    return NULL;
}

static int greq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int greq_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

/* Mean time this thread waits for a request another thread completes. */
static double kicked_wait(int grequest)
{
    double total = 0;
    for (int i = 0; i < KICKS; i++) {
        pthread_t th;
        int v = -1;
        if (grequest)
            MPI_Grequest_start(greq_query, greq_free, greq_cancel, NULL, &kick_req);
        else
            MPI_Irecv(&v, 1, MPI_INT, rank, 100, MPI_COMM_WORLD, &kick_req);
        pthread_create(&th, NULL, grequest ? kick_grequest : kick_send,
                       (void *)(intptr_t)(i * 10 + rank));
        double t = MPI_Wtime();
        MPI_Wait(&kick_req, MPI_STATUS_IGNORE);
        total += MPI_Wtime() - t;
        pthread_join(th, NULL);
        TCHECK(grequest || v == i * 10 + rank, "receive %d from this rank gave %d", i, v);
    }
    return total / KICKS;
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

    /* completed by another thread of this rank */
    double self_recv = kicked_wait(0), greq = kicked_wait(1);

    double worst[4], mine[4] = {coll, rank < size - size % 2 ? rtt : 0, self_recv, greq};
    MPI_Allreduce(mine, worst, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        TCHECK(worst[0] < MEAN_MAX_S, "a round of collectives took %.2f ms on average",
               1e3 * worst[0]);
        TCHECK(size < 2 || worst[1] < MEAN_MAX_S, "%d threads' round trips took %.2f ms on average",
               NTHREADS, 1e3 * worst[1]);
        TCHECK(worst[2] < KICK_MAX_S,
               "a receive that another thread sends took %.2f ms on average (sent after %d us)",
               1e3 * worst[2], KICK_DELAY_US);
        TCHECK(worst[3] < KICK_MAX_S,
               "a generalized request that another thread completes took %.2f ms on average "
               "(completed after %d us)",
               1e3 * worst[3], KICK_DELAY_US);
    }
    int fail = nerr != 0, any;
    MPI_Allreduce(&fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && !any)
        printf("PASS progress_sleep_mt np=%d: %s, collectives %.3f ms a round, %d threads' round "
               "trips %.3f ms, completed by another thread after %.1f ms: receive %.3f ms, "
               "generalized request %.3f ms\n",
               size, mode, 1e3 * worst[0], NTHREADS, 1e3 * worst[1], KICK_DELAY_US / 1e3,
               1e3 * worst[2], 1e3 * worst[3]);
    return any;
}
