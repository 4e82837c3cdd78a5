/* Node-aware allreduce (commutative operations): reduce to each node's
 * leader over shared memory, allreduce among leaders, broadcast back on
 * each node. Only one process per node crosses the network. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_allreduce_smp)
{
    px_coll_hier_t *h = px_coll_hier_get(c);
    if (!h)
        return MPI_ERR_INTERN;
    px_coll_args_t sub = *a;
    int rc = MPI_SUCCESS;
    sub.root = 0;
    if (h->node->size > 1) {
        rc = px_coll_build_into(s, PX_COLL_REDUCE, &sub, h->node);
        px_coll_sched_round(s);
    } else {
        px_coll_copy_items(s, a->sbuf, a->rbuf, 0, a->count, a->dt);
    }
    if (rc == MPI_SUCCESS && h->leaders && h->leaders->size > 1) {
        sub.sbuf = a->rbuf;
        rc = px_coll_build_into(s, PX_COLL_ALLREDUCE, &sub, h->leaders);
        px_coll_sched_round(s);
    }
    if (rc == MPI_SUCCESS && h->node->size > 1) {
        rc = px_coll_bcast_sched(s, a->rbuf, a->count, a->dt, 0, h->node);
        px_coll_sched_round(s);
    }
    return rc;
}
