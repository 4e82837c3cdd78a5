/* Linear-chain scan: rank r waits for the prefix of ranks 0..r-1, combines
 * it with its own data in rank order and passes the result on; n-1 steps,
 * pipelined across successive calls. Any operation. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_scan_linear)
{
    int n = c->size, r = c->rank;
    px_coll_copy_items(s, a->sbuf, a->rbuf, 0, a->count, a->dt);
    if (r > 0) {
        void *tmp = px_coll_tmp_items(s, a->dt, a->count);
        if (!tmp)
            return MPI_ERR_NO_MEM;
        px_coll_recv_items(s, c, tmp, 0, a->count, a->dt, r - 1);
        px_coll_sched_round(s);
        px_coll_sched_reduce(s, tmp, a->rbuf, a->count, a->dt, a->op);
    }
    if (r < n - 1)
        px_coll_send_items(s, c, a->rbuf, 0, a->count, a->dt, r + 1);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
