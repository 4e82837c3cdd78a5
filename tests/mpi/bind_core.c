/* PX_BIND: with "core" every rank runs on one CPU afterwards, the i-th rank
 * on this machine (all ranks of these tests are on one) on the i-th CPU of
 * the set it was started with, wrapping when ranks outnumber CPUs; with
 * "spread" (the default) it only starts there, and MPI_Init gives back the
 * set it was started with, as with "none". */
#include "px_test.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    cpu_set_t before, after;
    int ok_before = sched_getaffinity(0, sizeof(before), &before) == 0;
    px_test_init(&argc, &argv, "bind_core");
    PX_REQUIRE(ok_before && sched_getaffinity(0, sizeof(after), &after) == 0,
               "sched_getaffinity failed");
    const char *b = getenv("PX_BIND");
    int bind = b && !strcmp(b, "core");
    if (bind) {
        int k = px_test_rank % CPU_COUNT(&before), want = -1;
        for (int c = 0; c < CPU_SETSIZE && want < 0; c++)
            if (CPU_ISSET(c, &before) && k-- == 0)
                want = c;
        PX_CHECK(CPU_COUNT(&after) == 1 && CPU_ISSET(want, &after),
                 "rank %d: bound to %d CPUs, expected CPU %d only", px_test_rank, CPU_COUNT(&after),
                 want);
    } else {
        PX_CHECK(CPU_EQUAL(&before, &after), "rank %d: MPI_Init changed the affinity unasked",
                 px_test_rank);
    }
    /* the bound ranks still talk */
    int sum = 0, one = 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PX_CHECK(sum == px_test_size, "allreduce gave %d", sum);
    return px_test_finish(bind ? "bound one CPU each" : "affinity untouched");
}
