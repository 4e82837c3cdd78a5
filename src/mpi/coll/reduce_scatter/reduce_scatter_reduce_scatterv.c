/* Reduce-scatter as a reduction of the whole vector to rank 0 followed by
 * a scatterv; works for every operation and datatype. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_reduce_scatter_reduce_scatterv)
{
    int n = c->size, r = c->rank;
    MPI_Aint total = 0, off = 0;
    for (int i = 0; i < n; i++)
        total += a->rcounts[i];
    void *full = r == 0 ? px_coll_tmp_items(s, a->dt, total) : NULL;
    if (r == 0 && !full)
        return MPI_ERR_NO_MEM;
    px_coll_args_t sub = *a;
    sub.rbuf = full;
    sub.count = (int)total;
    sub.root = 0;
    int rc = px_coll_build_into(s, PX_COLL_REDUCE, &sub, c);
    if (rc != MPI_SUCCESS)
        return rc;
    px_coll_sched_round(s);
    if (r == 0) {
        for (int i = 0; i < n; i++) {
            if (i == 0)
                px_coll_copy_items(s, px_coll_item(full, off, a->dt), a->rbuf, 0, a->rcounts[i],
                                   a->dt);
            else
                px_coll_send_items(s, c, full, off, a->rcounts[i], a->dt, i);
            off += a->rcounts[i];
        }
    } else {
        px_coll_recv_items(s, c, a->rbuf, 0, a->rcounts[r], a->dt, 0);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
