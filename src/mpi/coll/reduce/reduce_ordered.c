/* Reduction that keeps rank order, for non-commutative operations: a
 * binomial tree over ranks rooted at rank 0 where every subtree holds a
 * contiguous range of ranks, so each parent computes (its range) op
 * (child's range); rank 0 forwards the result to the root. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_reduce_ordered)
{
    int n = c->size, r = c->rank;
    const void *acc = a->sbuf;
    void *bufs[2] = {NULL, NULL};
    int cur = 0;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (r & mask) {
            px_coll_send_items(s, c, acc, 0, a->count, a->dt, r & ~mask);
            px_coll_sched_round(s);
            acc = NULL;
            break;
        }
        if ((r | mask) >= n)
            continue;
        if (!bufs[0]) {
            bufs[0] = px_coll_tmp_items(s, a->dt, a->count);
            bufs[1] = px_coll_tmp_items(s, a->dt, a->count);
            if (!bufs[0] || !bufs[1])
                return MPI_ERR_NO_MEM;
        }
        /* tmp = acc op tmp, then tmp becomes the accumulator */
        void *tmp = bufs[cur];
        px_coll_recv_items(s, c, tmp, 0, a->count, a->dt, r | mask);
        px_coll_sched_round(s);
        px_coll_sched_reduce(s, acc, tmp, a->count, a->dt, a->op);
        acc = tmp;
        cur ^= 1;
    }
    if (r == 0) {
        if (a->root == 0)
            px_coll_copy_items(s, acc, a->rbuf, 0, a->count, a->dt);
        else
            px_coll_send_items(s, c, acc, 0, a->count, a->dt, a->root);
        px_coll_sched_round(s);
    }
    if (r == a->root && r != 0) {
        px_coll_recv_items(s, c, a->rbuf, 0, a->count, a->dt, 0);
        px_coll_sched_round(s);
    }
    return MPI_SUCCESS;
}
