/* Linear scatterv: the root sends every rank its block from its
 * displacement with the send datatype. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_scatterv_linear)
{
    px_mpi_dt_t *sd = px_mpi_dt_get(a->stype);
    if (c->rank != a->root) {
        px_coll_sched_recv(s, c, a->rbuf, a->rcount, a->rtype, a->root);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < c->size; i++) {
        const char *src = (const char *)a->sbuf + (MPI_Aint)a->sdispls[i] * sd->extent;
        if (i != c->rank) {
            px_coll_sched_send(s, c, src, a->scounts[i], a->stype, i);
        } else if (a->rbuf != MPI_IN_PLACE && a->scounts[i]) {
            void *tmp = px_coll_sched_alloc(s, (size_t)a->scounts[i] * (size_t)sd->size);
            if (!tmp)
                return MPI_ERR_NO_MEM;
            px_coll_sched_pack(s, src, a->scounts[i], a->stype, tmp);
            px_coll_sched_unpack(s, tmp, a->rcount, a->rtype, a->rbuf);
        }
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
