/* Allreduce as a reduction to rank 0 followed by a broadcast; works for
 * every operation (the reduction keeps rank order when it must). */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_allreduce_reduce_bcast)
{
    px_coll_args_t sub = *a;
    sub.root = 0;
    int rc = px_coll_build_into(s, PX_COLL_REDUCE, &sub, c);
    if (rc != MPI_SUCCESS)
        return rc;
    px_coll_sched_round(s);
    rc = px_coll_bcast_sched(s, a->rbuf, a->count, a->dt, 0, c);
    px_coll_sched_round(s);
    return rc;
}
