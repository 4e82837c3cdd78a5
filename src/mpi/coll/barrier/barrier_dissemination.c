/* Dissemination barrier: ceil(log2 n) rounds, any n; in round k every rank
 * signals rank + 2^k and waits for rank - 2^k. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_barrier_dissemination)
{
    (void)a;
    for (int k = 1; k < c->size; k <<= 1) {
        px_coll_sched_recv(s, c, NULL, 0, MPI_BYTE, (c->rank - k + c->size) % c->size);
        px_coll_sched_send(s, c, NULL, 0, MPI_BYTE, (c->rank + k) % c->size);
        px_coll_sched_round(s);
    }
    return MPI_SUCCESS;
}
