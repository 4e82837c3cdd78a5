/* Linear-chain exclusive scan: rank r receives the prefix of ranks
 * 0..r-1 (its result), then sends prefix op own data to r+1. Any
 * operation; rank 0's receive buffer is left untouched. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_exscan_linear)
{
    int n = c->size, r = c->rank;
    if (r == 0) {
        if (n > 1)
            px_coll_send_items(s, c, a->sbuf, 0, a->count, a->dt, 1);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    void *prev = px_coll_tmp_items(s, a->dt, a->count);
    void *next = px_coll_tmp_items(s, a->dt, a->count);
    if (!prev || !next)
        return MPI_ERR_NO_MEM;
    px_coll_recv_items(s, c, prev, 0, a->count, a->dt, r - 1);
    px_coll_sched_round(s);
    if (r < n - 1) {
        px_coll_copy_items(s, a->sbuf, next, 0, a->count, a->dt);
        px_coll_sched_reduce(s, prev, next, a->count, a->dt, a->op);
    }
    /* after reading sbuf: with MPI_IN_PLACE it is the receive buffer */
    px_coll_copy_items(s, prev, a->rbuf, 0, a->count, a->dt);
    if (r < n - 1)
        px_coll_send_items(s, c, next, 0, a->count, a->dt, r + 1);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
