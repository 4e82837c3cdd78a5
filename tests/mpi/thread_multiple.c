/* MPI_THREAD_MULTIPLE: several threads per rank call MPI at once.
 * Each thread exchanges checksummed messages of growing size (eager and
 * rendezvous) with the same thread of the partner rank, on a shared
 * communicator told apart by tag and on its own duplicate; receives by
 * wildcard source as well; nonblocking and blocking calls mixed; then each
 * thread runs collectives on its own communicator while the others do the
 * same; then each thread duplicates its communicator over and over while
 * the others do too, and checks that the copies are distinct (messages and
 * a collective on each); then each thread opens a session of its own,
 * which must say MPI_THREAD_MULTIPLE, and a communicator from it. Every byte is
 * checked; a lost wake-up or a corrupted queue shows as a wrong checksum or
 * a hang (the test's timeout). */
#include <pthread.h>

#include "px_test.h"

#define NTHREADS 4
#define ROUNDS 200

static MPI_Comm thread_comm[NTHREADS];
static int peer, nerr;

#define TCHECK(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (__atomic_add_fetch(&nerr, 1, __ATOMIC_RELAXED) < 20) {                             \
                fprintf(stderr, "FAIL thread_multiple rank %d: ", px_test_rank);                   \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static size_t size_of(int round) { return (size_t)1 << (round % 19); /* 1 B .. 256 KB */ }

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    size_t max = (size_t)1 << 18;
    unsigned char *s = malloc(max), *r = malloc(max);
    for (int i = 0; i < ROUNDS && peer >= 0; i++) {
        size_t n = size_of(i + t);
        uint64_t mine = ((uint64_t)px_test_rank << 40) | ((uint64_t)t << 32) | (uint64_t)i;
        uint64_t theirs = ((uint64_t)peer << 40) | ((uint64_t)t << 32) | (uint64_t)i;
        px_fill(s, n, mine);
        memset(r, 0, n);
        MPI_Comm comm = (i & 1) ? thread_comm[t] : MPI_COMM_WORLD;
        int tag = (i & 1) ? 7 : 100 + t;
        if (i % 3 == 0) {
            MPI_Request q[2];
            MPI_Irecv(r, (int)n, MPI_BYTE, peer, tag, comm, &q[0]);
            MPI_Isend(s, (int)n, MPI_BYTE, peer, tag, comm, &q[1]);
            MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        } else if (i % 3 == 1) {
            MPI_Status st;
            MPI_Sendrecv(s, (int)n, MPI_BYTE, peer, tag, r, (int)n, MPI_BYTE,
                         (i & 1) ? MPI_ANY_SOURCE : peer, tag, comm, &st);
            TCHECK(st.MPI_SOURCE == peer, "thread %d round %d: source %d", t, i, st.MPI_SOURCE);
        } else if (px_test_rank < peer) {
            MPI_Send(s, (int)n, MPI_BYTE, peer, tag, comm);
            MPI_Recv(r, (int)n, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(r, (int)n, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
            MPI_Send(s, (int)n, MPI_BYTE, peer, tag, comm);
        }
        size_t bad = px_verify(r, n, theirs);
        TCHECK(bad == n, "thread %d round %d (%zu bytes): byte %zu wrong", t, i, n, bad);
    }
    /* collectives on the thread's own communicator, concurrently */
    for (int i = 0; i < 20; i++) {
        long v = px_test_rank * 10 + t + i, sum = 0;
        MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, thread_comm[t]);
        long want = 10L * px_test_size * (px_test_size - 1) / 2 + (long)(t + i) * px_test_size;
        TCHECK(sum == want, "thread %d allreduce %d: %ld, expected %ld", t, i, sum, want);
        int root = i % px_test_size, b = px_test_rank == root ? 1000 * t + i : -1;
        MPI_Bcast(&b, 1, MPI_INT, root, thread_comm[t]);
        TCHECK(b == 1000 * t + i, "thread %d bcast %d: %d", t, i, b);
    }
    /* communicators created by every thread at once must be distinct: the
     * same tag and peer on each, so a shared context id shows as crossed
     * messages */
    for (int i = 0; i < 30; i++) {
        MPI_Comm nc;
        MPI_Comm_dup(thread_comm[t], &nc); /* collective: the unpaired rank too */
        if (peer >= 0) {
            int out = t * 1000 + i, in = -1;
            MPI_Sendrecv(&out, 1, MPI_INT, peer, 0, &in, 1, MPI_INT, peer, 0, nc,
                         MPI_STATUS_IGNORE);
            TCHECK(in == out, "thread %d dup %d: got %d from the peer's thread %d", t, i, in,
                   in / 1000);
        }
        /* a collective on each new one: its shared segment is its own too */
        long v = 100 * t + i + px_test_rank, sum = -1;
        MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, nc);
        long want =
            (long)px_test_size * (100 * t + i) + (long)px_test_size * (px_test_size - 1) / 2;
        TCHECK(sum == want, "thread %d dup %d allreduce: %ld, expected %ld", t, i, sum, want);
        MPI_Comm_free(&nc);
    }
    /* a session per thread, opened without info while the others open
     * theirs: the process runs MPI_THREAD_MULTIPLE, so the session does too;
     * a communicator from its WORLD or SELF set, told apart by its tag */
    MPI_Session ses = MPI_SESSION_NULL;
    int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &ses);
    TCHECK(rc == MPI_SUCCESS, "thread %d MPI_Session_init: %d", t, rc);
    if (rc == MPI_SUCCESS) {
        MPI_Info used;
        char lv[64] = "";
        int flag = 0;
        MPI_Session_get_info(ses, &used);
        MPI_Info_get(used, "thread_level", (int)sizeof(lv) - 1, lv, &flag);
        MPI_Info_free(&used);
        TCHECK(flag && !strcmp(lv, "MPI_THREAD_MULTIPLE"), "thread %d session thread_level %s", t,
               flag ? lv : "(none)");
        char tag[32];
        snprintf(tag, sizeof tag, "org.plexus.test.thread%d", t);
        MPI_Group g = MPI_GROUP_NULL;
        MPI_Comm sc = MPI_COMM_NULL;
        MPI_Group_from_session_pset(ses, t % 2 ? "mpi://WORLD" : "mpi://SELF", &g);
        rc = MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &sc);
        TCHECK(rc == MPI_SUCCESS, "thread %d MPI_Comm_create_from_group: %d", t, rc);
        MPI_Group_free(&g);
        if (rc == MPI_SUCCESS) {
            int n = -1;
            long v = px_test_rank + t, sum = -1;
            MPI_Comm_size(sc, &n);
            MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, sc);
            long want = t % 2 ? (long)px_test_size * (px_test_size - 1) / 2 + (long)t * n : v;
            TCHECK(n == (t % 2 ? px_test_size : 1) && sum == want,
                   "thread %d session communicator: size %d, allreduce %ld, expected %ld", t, n,
                   sum, want);
            MPI_Comm_free(&sc);
        }
        MPI_Session_finalize(&ses);
    }
    free(s);
    free(r);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1, q = -1, main_flag = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    px_test_begin("thread_multiple");
    PX_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Query_thread(&q);
    PX_CHECK(q == MPI_THREAD_MULTIPLE, "MPI_Query_thread gives %d", q);
    MPI_Is_thread_main(&main_flag);
    PX_CHECK(main_flag, "MPI_Is_thread_main false in the main thread");
    peer = px_pair_peer(px_test_rank, px_test_size);
    for (int t = 0; t < NTHREADS; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &thread_comm[t]);
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NTHREADS; t++)
        MPI_Comm_free(&thread_comm[t]);
    px_test_errors += nerr;
    return px_test_finish("%d threads x %d exchanges up to 256 KB, collectives per thread",
                          NTHREADS, ROUNDS);
}
