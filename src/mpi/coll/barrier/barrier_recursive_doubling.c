/* Recursive-doubling barrier: pairwise exchanges over the largest power of
 * two; the remaining ranks report to a partner first and are released last. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_barrier_recursive_doubling)
{
    (void)a;
    int n = c->size, r = c->rank, pof2 = px_coll_pof2_floor(n), rem = n - pof2;
    if (r >= pof2) {
        px_coll_sched_send(s, c, NULL, 0, MPI_BYTE, r - pof2);
        px_coll_sched_round(s);
        px_coll_sched_recv(s, c, NULL, 0, MPI_BYTE, r - pof2);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    if (r < rem) {
        px_coll_sched_recv(s, c, NULL, 0, MPI_BYTE, r + pof2);
        px_coll_sched_round(s);
    }
    for (int mask = 1; mask < pof2; mask <<= 1) {
        px_coll_sched_recv(s, c, NULL, 0, MPI_BYTE, r ^ mask);
        px_coll_sched_send(s, c, NULL, 0, MPI_BYTE, r ^ mask);
        px_coll_sched_round(s);
    }
    if (r < rem) {
        px_coll_sched_send(s, c, NULL, 0, MPI_BYTE, r + pof2);
        px_coll_sched_round(s);
    }
    return MPI_SUCCESS;
}
