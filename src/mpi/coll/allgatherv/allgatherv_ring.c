/* Ring allgatherv: like the ring allgather, each block at its own
 * displacement and count. */
#include "../coll_impl.h"

int px_coll_allgatherv_own(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c);

int px_coll_allgatherv_own(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c)
{
    if (a->sbuf == MPI_IN_PLACE || !a->scount)
        return MPI_SUCCESS;
    px_mpi_dt_t *rd = px_mpi_dt_get(a->rtype), *sd = px_mpi_dt_get(a->stype);
    void *tmp = px_coll_sched_alloc(s, (size_t)a->scount * (size_t)sd->size);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    px_coll_sched_pack(s, a->sbuf, a->scount, a->stype, tmp);
    px_coll_sched_unpack(s, tmp, a->rcounts[c->rank], a->rtype,
                         (char *)a->rbuf + (MPI_Aint)a->rdispls[c->rank] * rd->extent);
    return MPI_SUCCESS;
}

PX_COLL_BUILDER(px_coll_allgatherv_ring)
{
    int n = c->size, r = c->rank;
    px_mpi_dt_t *rd = px_mpi_dt_get(a->rtype);
    int rc = px_coll_allgatherv_own(s, a, c);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n - 1; i++) {
        int sb = (r - i + n) % n, rb = (r - i - 1 + n) % n;
        px_coll_sched_recv(s, c, (char *)a->rbuf + (MPI_Aint)a->rdispls[rb] * rd->extent,
                           a->rcounts[rb], a->rtype, (r - 1 + n) % n);
        px_coll_sched_send(s, c, (char *)a->rbuf + (MPI_Aint)a->rdispls[sb] * rd->extent,
                           a->rcounts[sb], a->rtype, (r + 1) % n);
        px_coll_sched_round(s);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
