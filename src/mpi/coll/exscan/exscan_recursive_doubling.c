/* Recursive-doubling exclusive scan: like the scan, but a rank's result
 * collects only the partial results of lower ranks. Any operation. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_exscan_recursive_doubling)
{
    int n = c->size, r = c->rank, have = 0;
    void *partial = px_coll_tmp_items(s, a->dt, a->count);
    if (!partial)
        return MPI_ERR_NO_MEM;
    px_coll_copy_items(s, a->sbuf, partial, 0, a->count, a->dt);
    for (int mask = 1; mask < n; mask <<= 1) {
        int peer = r ^ mask;
        if (peer >= n)
            continue;
        void *tmp = px_coll_tmp_items(s, a->dt, a->count);
        if (!tmp)
            return MPI_ERR_NO_MEM;
        px_coll_recv_items(s, c, tmp, 0, a->count, a->dt, peer);
        px_coll_send_items(s, c, partial, 0, a->count, a->dt, peer);
        px_coll_sched_round(s);
        if (peer < r) {
            px_coll_sched_reduce(s, tmp, partial, a->count, a->dt, a->op);
            if (have)
                px_coll_sched_reduce(s, tmp, a->rbuf, a->count, a->dt, a->op);
            else
                px_coll_copy_items(s, tmp, a->rbuf, 0, a->count, a->dt);
            have = 1;
        } else {
            px_coll_sched_reduce(s, partial, tmp, a->count, a->dt, a->op);
            px_coll_copy_items(s, tmp, partial, 0, a->count, a->dt);
        }
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
