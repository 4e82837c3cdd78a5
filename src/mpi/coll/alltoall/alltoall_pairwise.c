/* Pairwise-exchange alltoall: n-1 steps, in step k a rank sends to r+k and
 * receives from r-k; one message in flight per direction, for large blocks. */
#include "../coll_impl.h"

/* MPI_IN_PLACE: the send data is the receive buffer, copied aside first. */
int px_coll_alltoall_resolve(px_coll_sched_t *s, const px_coll_args_t *a, px_coll_args_t *out)
{
    *out = *a;
    if (a->sbuf != MPI_IN_PLACE)
        return MPI_SUCCESS;
    int n = s->comm->size;
    void *tmp = px_coll_tmp_items(s, a->rtype, (MPI_Aint)n * a->rcount);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    px_coll_copy_items(s, a->rbuf, tmp, 0, (MPI_Aint)n * a->rcount, a->rtype);
    out->sbuf = tmp;
    out->scount = a->rcount;
    out->stype = a->rtype;
    return MPI_SUCCESS;
}

/* This rank's own block, converted from the send to the receive type (one
 * copy when both are contiguous: the signatures match). */
static int px_coll_alltoall_own(px_coll_sched_t *s, const px_coll_args_t *a, const char *src,
                                char *dst)
{
    px_mpi_dt_t *sd = px_mpi_dt_get(a->stype), *rd = px_mpi_dt_get(a->rtype);
    if (sd->contig && rd->contig) {
        px_coll_sched_copy(s, src + sd->true_lb, dst + rd->true_lb, a->bytes);
        return MPI_SUCCESS;
    }
    void *tmp = px_coll_sched_alloc(s, a->bytes);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    px_coll_sched_pack(s, src, a->scount, a->stype, tmp);
    px_coll_sched_unpack(s, tmp, a->rcount, a->rtype, dst);
    return MPI_SUCCESS;
}

int px_coll_alltoall_start(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c,
                           px_coll_args_t *b, MPI_Aint *sblk, MPI_Aint *rblk)
{
    int rc = px_coll_alltoall_resolve(s, a, b);
    if (rc != MPI_SUCCESS)
        return rc;
    *sblk = (MPI_Aint)b->scount * px_mpi_dt_get(b->stype)->extent;
    *rblk = (MPI_Aint)b->rcount * px_mpi_dt_get(b->rtype)->extent;
    return px_coll_alltoall_own(s, b, (const char *)b->sbuf + c->rank * *sblk,
                                (char *)b->rbuf + c->rank * *rblk);
}

PX_COLL_BUILDER(px_coll_alltoall_pairwise)
{
    px_coll_args_t b;
    MPI_Aint sblk, rblk;
    int rc = px_coll_alltoall_start(s, a, c, &b, &sblk, &rblk);
    if (rc != MPI_SUCCESS)
        return rc;
    int n = c->size, r = c->rank;
    for (int k = 1; k < n; k++) {
        int dst = (r + k) % n, src = (r - k + n) % n;
        px_coll_sched_recv(s, c, (char *)b.rbuf + src * rblk, b.rcount, b.rtype, src);
        px_coll_sched_send(s, c, (const char *)b.sbuf + dst * sblk, b.scount, b.stype, dst);
        px_coll_sched_round(s);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
