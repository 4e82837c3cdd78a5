/* Linear scatter: the root posts one send per rank at once. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_scatter_linear)
{
    px_mpi_dt_t *sd = px_mpi_dt_get(a->stype);
    if (c->rank != a->root) {
        px_coll_sched_recv(s, c, a->rbuf, a->rcount, a->rtype, a->root);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    MPI_Aint blk = (MPI_Aint)a->scount * sd->extent;
    for (int i = 0; i < c->size; i++) {
        const char *src = (const char *)a->sbuf + i * blk;
        if (i != c->rank) {
            px_coll_sched_send(s, c, src, a->scount, a->stype, i);
        } else if (a->rbuf != MPI_IN_PLACE && a->bytes) {
            void *tmp = px_coll_sched_alloc(s, a->bytes);
            if (!tmp)
                return MPI_ERR_NO_MEM;
            px_coll_sched_pack(s, src, a->scount, a->stype, tmp);
            px_coll_sched_unpack(s, tmp, a->rcount, a->rtype, a->rbuf);
        }
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
