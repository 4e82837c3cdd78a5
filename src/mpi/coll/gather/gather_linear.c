/* Linear gather: the root posts one receive per rank at once; best for
 * large blocks where the root's link is the bottleneck anyway. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_gather_linear)
{
    px_mpi_dt_t *rd = px_mpi_dt_get(a->rtype);
    if (c->rank != a->root) {
        px_coll_sched_send(s, c, a->sbuf, a->scount, a->stype, a->root);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    MPI_Aint blk = (MPI_Aint)a->rcount * rd->extent;
    for (int i = 0; i < c->size; i++) {
        char *dst = (char *)a->rbuf + i * blk;
        if (i != c->rank) {
            px_coll_sched_recv(s, c, dst, a->rcount, a->rtype, i);
        } else if (a->sbuf != MPI_IN_PLACE && a->bytes) {
            void *tmp = px_coll_sched_alloc(s, a->bytes);
            if (!tmp)
                return MPI_ERR_NO_MEM;
            px_coll_sched_pack(s, a->sbuf, a->scount, a->stype, tmp);
            px_coll_sched_unpack(s, tmp, a->rcount, a->rtype, dst);
        }
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
