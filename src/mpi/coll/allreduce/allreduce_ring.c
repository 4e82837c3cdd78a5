/* Ring allreduce for large vectors and commutative operations: n-1 steps
 * of ring reduce-scatter over n segments, then n-1 steps of ring allgather;
 * bandwidth-optimal and every step uses only neighbour links. */
#include "../coll_impl.h"

#include <stdlib.h>

PX_COLL_BUILDER(px_coll_allreduce_ring)
{
    int n = c->size, r = c->rank, right = (r + 1) % n, left = (r - 1 + n) % n;
    void *acc = a->rbuf, *tmp = px_coll_tmp_items(s, a->dt, a->count);
    MPI_Aint *cnts = px_coll_sched_alloc(s, sizeof(MPI_Aint) * 2 * (size_t)n);
    if (!tmp || !cnts)
        return MPI_ERR_NO_MEM;
    MPI_Aint *displs = cnts + n;
    for (int i = 0; i < n; i++) {
        cnts[i] = a->count / n + (i < a->count % n);
        displs[i] = i ? displs[i - 1] + cnts[i - 1] : 0;
    }
    px_coll_copy_items(s, a->sbuf, acc, 0, a->count, a->dt);
    for (int k = 0; k < n - 1; k++) {
        int sseg = (r - k + n) % n, rseg = (r - k - 1 + n) % n;
        px_coll_recv_items(s, c, tmp, displs[rseg], cnts[rseg], a->dt, left);
        px_coll_send_items(s, c, acc, displs[sseg], cnts[sseg], a->dt, right);
        px_coll_sched_round(s);
        px_coll_sched_reduce(s, px_coll_item(tmp, displs[rseg], a->dt),
                             px_coll_item(acc, displs[rseg], a->dt), cnts[rseg], a->dt, a->op);
    }
    for (int k = 0; k < n - 1; k++) {
        int sseg = (r + 1 - k + n) % n, rseg = (r - k + n) % n;
        px_coll_recv_items(s, c, acc, displs[rseg], cnts[rseg], a->dt, left);
        px_coll_send_items(s, c, acc, displs[sseg], cnts[sseg], a->dt, right);
        px_coll_sched_round(s);
    }
    return MPI_SUCCESS;
}
