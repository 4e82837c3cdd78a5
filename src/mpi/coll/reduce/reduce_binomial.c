/* Binomial-tree reduction for commutative operations: log2 n levels, each
 * parent folds its children's partial results into its own. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_reduce_binomial)
{
    int n = c->size, vr = (c->rank - a->root + n) % n;
    const void *acc = a->sbuf;
    void *tmp = NULL, *work = NULL;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (vr & mask) {
            px_coll_send_items(s, c, acc, 0, a->count, a->dt, ((vr & ~mask) + a->root) % n);
            px_coll_sched_round(s);
            return MPI_SUCCESS;
        }
        if ((vr | mask) >= n)
            continue;
        if (!work) {
            /* the root accumulates in its receive buffer */
            work = vr == 0 ? a->rbuf : px_coll_tmp_items(s, a->dt, a->count);
            tmp = px_coll_tmp_items(s, a->dt, a->count);
            if (!work || !tmp)
                return MPI_ERR_NO_MEM;
            px_coll_copy_items(s, acc, work, 0, a->count, a->dt);
            acc = work;
        }
        px_coll_recv_items(s, c, tmp, 0, a->count, a->dt, ((vr | mask) + a->root) % n);
        px_coll_sched_round(s);
        px_coll_sched_reduce(s, tmp, work, a->count, a->dt, a->op);
    }
    /* root */
    if (!work)
        px_coll_copy_items(s, a->sbuf, a->rbuf, 0, a->count, a->dt);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
