/* Ring allgather: n-1 steps, each rank forwards the block it received
 * last to its right neighbour; bandwidth-optimal for large blocks. */
#include "../coll_impl.h"

/* Copies this rank's contribution into its block of rbuf (unless in place). */
int px_coll_allgather_own(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c)
{
    if (a->sbuf == MPI_IN_PLACE || !a->bytes)
        return MPI_SUCCESS;
    px_mpi_dt_t *rd = px_mpi_dt_get(a->rtype), *sd = px_mpi_dt_get(a->stype);
    char *own = (char *)a->rbuf + (MPI_Aint)c->rank * a->rcount * rd->extent;
    if (sd->contig && rd->contig) {
        /* same bytes on both sides (the signatures match): one copy */
        px_coll_sched_copy(s, (const char *)a->sbuf + sd->true_lb, own + rd->true_lb, a->bytes);
        return MPI_SUCCESS;
    }
    void *tmp = px_coll_sched_alloc(s, a->bytes);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    px_coll_sched_pack(s, a->sbuf, a->scount, a->stype, tmp);
    px_coll_sched_unpack(s, tmp, a->rcount, a->rtype, own);
    return MPI_SUCCESS;
}

/* The block leaves from the send buffer, so the round posts it before the
 * copy into rbuf (which then runs in slices while the transfers go on):
 * with the copy first, a large block's request left after the peer had
 * begun writing its own block, and the peer's clear-to-send came back
 * behind it. Not while ranks share cores: there the slices and the
 * transfers compete for them (docs/collectives.md). The signatures of the
 * send and receive types match, so the peer receives the same bytes. */
void px_coll_allgather_send_own(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c,
                                int peer)
{
    if (a->sbuf != MPI_IN_PLACE && !px_proto_oversubscribed()) {
        px_coll_sched_send(s, c, a->sbuf, a->scount, a->stype, peer);
        return;
    }
    MPI_Aint blk = (MPI_Aint)a->rcount * px_mpi_dt_get(a->rtype)->extent;
    px_coll_sched_send(s, c, (char *)a->rbuf + c->rank * blk, a->rcount, a->rtype, peer);
}

PX_COLL_BUILDER(px_coll_allgather_ring)
{
    int n = c->size, r = c->rank;
    px_mpi_dt_t *rd = px_mpi_dt_get(a->rtype);
    MPI_Aint blk = (MPI_Aint)a->rcount * rd->extent;
    int rc = px_coll_allgather_own(s, a, c);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n - 1; i++) {
        int sblk = (r - i + n) % n, rblk = (r - i - 1 + n) % n;
        px_coll_sched_recv(s, c, (char *)a->rbuf + rblk * blk, a->rcount, a->rtype,
                           (r - 1 + n) % n);
        if (i == 0)
            px_coll_allgather_send_own(s, a, c, (r + 1) % n);
        else
            px_coll_sched_send(s, c, (char *)a->rbuf + sblk * blk, a->rcount, a->rtype,
                               (r + 1) % n);
        px_coll_sched_round(s);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
