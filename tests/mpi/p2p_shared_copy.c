/* Large messages between pair partners, as shared memory moves them: the
 * receiver copies from the sender's memory and the sender, when it polls,
 * writes the other half (src/net/shm/shm.c, "shared copies").
 *
 *  1. Sizes around the chunk boundaries one way and back, each checked; the
 *     receive buffer is overwritten at once with another pattern, which
 *     must still be intact after the next messages (a write from the
 *     sender arriving after the receive completed would spoil it).
 *  2. Both partners exchange at once (MPI_Sendrecv) many times.
 *  3. A sender that computes without calling MPI for 400 ms after
 *     MPI_Isend: over shared memory with single-copy reads, its partner's
 *     MPI_Recv ends long before that (the receiver copies everything
 *     itself); elsewhere the time is only printed. */
#include "px_test.h"

#include <time.h>
#include <unistd.h>

static const size_t sizes[] = {131072,  131073,  200000,          262144 + 13,
                               1 << 20, 3 << 20, (3 << 20) + 4095};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define MAXB ((size_t)4 << 20)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Single-copy reads between the two processes are expected: shared memory
 * chosen, not turned off, and the kernel lets one process read another's
 * memory (root, or Yama's ptrace_scope 0). */
static int single_copy_expected(void)
{
    const char *net = getenv("PX_NET"), *cma = getenv("PX_SHM_CMA");
    if (!net || !strstr(net, "shm"))
        return 0;
    if (cma && (!strcmp(cma, "0") || !strcmp(cma, "no") || !strcmp(cma, "off")))
        return 0;
    if (geteuid() == 0)
        return 1;
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = 0;
    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = 1;
        fclose(f);
    }
    return scope == 0;
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "p2p_shared_copy");
    int peer = px_pair_peer(px_test_rank, px_test_size);
    if (peer < 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        return px_test_finish("no partner");
    }
    int even = px_test_rank % 2 == 0;
    unsigned char *sbuf = malloc(MAXB), *rbuf = malloc(MAXB), *keep = malloc(MAXB);
    PX_REQUIRE(sbuf && rbuf && keep, "cannot allocate buffers");

    /* 1: one way and back, the receive buffer reused at once */
    size_t kept = 0;
    uint64_t keep_seed = 0;
    for (int round = 0; round < 6; round++) {
        for (size_t i = 0; i < NSIZES; i++) {
            size_t n = sizes[i];
            uint64_t seed = 1000 * (uint64_t)round + i + (even ? 0 : 500);
            MPI_Status st;
            int count;
            if (even == (round % 2 == 0)) {
                px_fill(sbuf, n, seed);
                PX_MPI(MPI_Send(sbuf, (int)n, MPI_BYTE, peer, (int)i, MPI_COMM_WORLD));
            } else {
                memset(rbuf, 0, n);
                PX_MPI(MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, (int)i, MPI_COMM_WORLD, &st));
                MPI_Get_count(&st, MPI_BYTE, &count);
                PX_CHECK((size_t)count == n, "round %d: %d bytes, expected %zu", round, count, n);
                uint64_t sseed = 1000 * (uint64_t)round + i + (even ? 500 : 0);
                size_t bad = px_verify(rbuf, n, sseed);
                PX_CHECK(bad == n, "round %d, %zu bytes: first wrong byte at %zu", round, n, bad);
                /* the previous receive's buffer, overwritten since: intact? */
                if (kept) {
                    size_t b2 = px_verify(keep, kept, keep_seed);
                    PX_CHECK(b2 == kept, "a buffer written after its receive changed at %zu", b2);
                }
                /* receive into keep next time round: rbuf and keep swap */
                unsigned char *t = rbuf;
                rbuf = keep;
                keep = t;
                kept = n;
                keep_seed = 77 + seed;
                px_fill(keep, kept, keep_seed);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (kept) {
        size_t b2 = px_verify(keep, kept, keep_seed);
        PX_CHECK(b2 == kept, "the last receive buffer, overwritten, changed at %zu", b2);
    }

    /* 2: both ways at once */
    for (int it = 0; it < 40; it++) {
        size_t n = sizes[it % NSIZES];
        px_fill(sbuf, n, 5000 + (uint64_t)it * 2 + (even ? 0 : 1));
        MPI_Status st;
        PX_MPI(MPI_Sendrecv(sbuf, (int)n, MPI_BYTE, peer, 7, rbuf, (int)n, MPI_BYTE, peer, 7,
                            MPI_COMM_WORLD, &st));
        size_t bad = px_verify(rbuf, n, 5000 + (uint64_t)it * 2 + (even ? 1 : 0));
        PX_CHECK(bad == n, "exchange %d, %zu bytes: first wrong byte at %zu", it, n, bad);
    }

    /* 3: the sender computes while its partner receives */
    size_t n = (size_t)2 << 20;
    double waited = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (even) {
        MPI_Request r;
        px_fill(sbuf, n, 9001);
        PX_MPI(MPI_Isend(sbuf, (int)n, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &r));
        double t0 = now_s();
        volatile uint64_t x = 0;
        while (now_s() - t0 < 0.4)
            x++;
        PX_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        MPI_Status st;
        double t0 = now_s();
        PX_MPI(MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &st));
        waited = now_s() - t0;
        size_t bad = px_verify(rbuf, n, 9001);
        PX_CHECK(bad == n, "busy sender: first wrong byte at %zu", bad);
        if (single_copy_expected())
            PX_CHECK(waited < 0.2, "receive from a busy sender took %.3f s", waited);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double worst = 0;
    MPI_Reduce(&waited, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    free(sbuf);
    free(rbuf);
    free(keep);
    return px_test_finish("%zu sizes, receive from a busy sender %.3f s", NSIZES, worst);
}
