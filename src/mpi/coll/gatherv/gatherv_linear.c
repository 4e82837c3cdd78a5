/* Linear gatherv: the root receives every rank's block at its displacement
 * with the receive datatype. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_gatherv_linear)
{
    px_mpi_dt_t *rd = px_mpi_dt_get(a->rtype), *sd = px_mpi_dt_get(a->stype);
    if (c->rank != a->root) {
        px_coll_sched_send(s, c, a->sbuf, a->scount, a->stype, a->root);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < c->size; i++) {
        char *dst = (char *)a->rbuf + (MPI_Aint)a->rdispls[i] * rd->extent;
        if (i != c->rank) {
            px_coll_sched_recv(s, c, dst, a->rcounts[i], a->rtype, i);
        } else if (a->sbuf != MPI_IN_PLACE && a->scount) {
            void *tmp = px_coll_sched_alloc(s, (size_t)a->scount * (size_t)sd->size);
            if (!tmp)
                return MPI_ERR_NO_MEM;
            px_coll_sched_pack(s, a->sbuf, a->scount, a->stype, tmp);
            px_coll_sched_unpack(s, tmp, a->rcounts[i], a->rtype, dst);
        }
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
