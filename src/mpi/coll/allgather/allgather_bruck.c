/* Bruck allgather: ceil(log2 n) steps for any n; blocks travel packed in
 * an order rotated by the rank and are put in place at the end. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_allgather_bruck)
{
    int n = c->size, r = c->rank;
    size_t blk = a->bytes;
    px_mpi_dt_t *rd = px_mpi_dt_get(a->rtype);
    MPI_Aint rblk = (MPI_Aint)a->rcount * rd->extent;
    char *tmp = px_coll_sched_alloc(s, (size_t)n * blk);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    if (a->sbuf == MPI_IN_PLACE)
        px_coll_sched_pack(s, (char *)a->rbuf + r * rblk, a->rcount, a->rtype, tmp);
    else
        px_coll_sched_pack(s, a->sbuf, a->scount, a->stype, tmp);
    for (int pof = 1; pof < n; pof <<= 1) {
        int cnt = pof < n - pof ? pof : n - pof;
        px_coll_sched_recv(s, c, tmp + (size_t)pof * blk, (MPI_Aint)((size_t)cnt * blk), MPI_BYTE,
                           (r + pof) % n);
        px_coll_sched_send(s, c, tmp, (MPI_Aint)((size_t)cnt * blk), MPI_BYTE, (r - pof + n) % n);
        px_coll_sched_round(s);
    }
    /* tmp[i] holds block (r + i) mod n */
    for (int i = 0; i < n; i++)
        px_coll_sched_unpack(s, tmp + (size_t)i * blk, a->rcount, a->rtype,
                             (char *)a->rbuf + (MPI_Aint)((r + i) % n) * rblk);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
