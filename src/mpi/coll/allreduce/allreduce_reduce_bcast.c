/* Allreduce as a reduction to rank 0 followed by a broadcast; works for
 * every operation (the reduction keeps rank order when it must). */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_allreduce_reduce_bcast)
{
    px_mpi_dt_t *d = px_mpi_dt_get(a->dt);
    px_coll_args_t sub = *a;
    sub.root = 0;
    int rc = px_coll_build_into(s, PX_COLL_REDUCE, &sub, c);
    if (rc != MPI_SUCCESS)
        return rc;
    px_coll_sched_round(s);
    /* every rank has the same layout, so the span goes as bytes */
    sub.rbuf = (char *)a->rbuf + d->true_lb;
    sub.bytes = px_coll_span(d, a->count);
    rc = px_coll_build_into(s, PX_COLL_BCAST, &sub, c);
    px_coll_sched_round(s);
    return rc;
}
