/* PX_BIND and MPI_THREAD_MULTIPLE: with "spread" (the default), when the
 * ranks of this machine (all ranks of these tests are on one) fit the CPUs
 * it was started with and those are all the machine's, the i-th rank and
 * the threads it creates afterwards run on the i-th of as many equal shares
 * of them as there are ranks; otherwise (one rank, more ranks than CPUs,
 * "none", or a set narrower than the machine) MPI_Init_thread leaves the
 * set as it was. Checked in a thread created after MPI_Init_thread, and
 * the shares of all ranks together. */
#include "px_test.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

static cpu_set_t in_thread;
static int thread_ok;

static void *look(void *arg)
{
    (void)arg;
    thread_ok = sched_getaffinity(0, sizeof(in_thread), &in_thread) == 0;
    return NULL;
}

int main(int argc, char **argv)
{
    cpu_set_t before;
    int provided, ok_before = sched_getaffinity(0, sizeof(before), &before) == 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    px_test_begin("bind_threads");
    PX_REQUIRE(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    pthread_t th;
    PX_REQUIRE(pthread_create(&th, NULL, look, NULL) == 0, "pthread_create");
    pthread_join(th, NULL);
    PX_REQUIRE(ok_before && thread_ok, "sched_getaffinity failed");

    const char *b = getenv("PX_BIND");
    int n = CPU_COUNT(&before), R = px_test_size, i = px_test_rank;
    int shared =
        (!b || !strcmp(b, "spread")) && R > 1 && R <= n && n == sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t want;
    if (shared) {
        int lo = i * n / R, hi = (i + 1) * n / R, k = 0;
        CPU_ZERO(&want);
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &before)) {
                if (k >= lo && k < hi)
                    CPU_SET(c, &want);
                k++;
            }
    } else {
        want = before;
    }
    PX_CHECK(CPU_EQUAL(&want, &in_thread),
             "rank %d: a thread created after MPI_Init_thread runs on %d CPUs, expected %d%s", i,
             CPU_COUNT(&in_thread), CPU_COUNT(&want), shared ? " (its share)" : " (unchanged)");

    /* the shares of all ranks: disjoint, and every CPU in one of them */
    unsigned char mine[CPU_SETSIZE / 8] = {0}, all[CPU_SETSIZE / 8], any[CPU_SETSIZE / 8];
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &in_thread))
            mine[c / 8] |= (unsigned char)(1u << (c % 8));
    MPI_Allreduce(mine, any, (int)sizeof(mine), MPI_UNSIGNED_CHAR, MPI_BOR, MPI_COMM_WORLD);
    MPI_Allreduce(mine, all, (int)sizeof(mine), MPI_UNSIGNED_CHAR, MPI_BAND, MPI_COMM_WORLD);
    if (shared) {
        int overlap = 0, covered = 0;
        for (int c = 0; c < CPU_SETSIZE; c++) {
            overlap += !!(all[c / 8] & (1u << (c % 8)));
            covered += !!(any[c / 8] & (1u << (c % 8)));
        }
        PX_CHECK(overlap == 0 && covered == n,
                 "the ranks' shares overlap on %d CPUs and cover %d of %d", overlap, covered, n);
    }
    int sum = 0, one = 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PX_CHECK(sum == px_test_size, "allreduce gave %d", sum);
    return px_test_finish(shared ? "each rank's threads on its share of the CPUs"
                                 : "affinity untouched");
}
