/* Binomial-tree gather: each rank collects its subtree's blocks (packed, in
 * rank order relative to the root) and forwards them in one message;
 * log2 n steps, best for small blocks. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_gather_binomial)
{
    int n = c->size, vr = (c->rank - a->root + n) % n;
    size_t blk = a->bytes;
    int sub = n, pmask = 1; /* blocks in my subtree; distance to the parent */
    for (; pmask < n; pmask <<= 1)
        if (vr & pmask) {
            sub = pmask < n - vr ? pmask : n - vr;
            break;
        }
    if (sub == 1 && vr != 0) {
        /* leaf: send the user's data directly */
        px_coll_sched_send(s, c, a->sbuf, a->scount, a->stype, (vr - pmask + a->root) % n);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    char *tmp = px_coll_sched_alloc(s, (size_t)sub * blk);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    int in_place = a->sbuf == MPI_IN_PLACE;
    if (!in_place)
        px_coll_sched_pack(s, a->sbuf, a->scount, a->stype, tmp);
    int mask = 1;
    for (; mask < n && !(vr & mask); mask <<= 1)
        if (vr + mask < n) {
            int cnt = mask < n - vr - mask ? mask : n - vr - mask;
            px_coll_sched_recv(s, c, tmp + (size_t)mask * blk, (MPI_Aint)((size_t)cnt * blk),
                               MPI_BYTE, (vr + mask + a->root) % n);
        }
    px_coll_sched_round(s);
    if (vr != 0) {
        px_coll_sched_send(s, c, tmp, (MPI_Aint)((size_t)sub * blk), MPI_BYTE,
                           (vr - mask + a->root) % n);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    px_mpi_dt_t *rd = px_mpi_dt_get(a->rtype);
    for (int i = in_place ? 1 : 0; i < n; i++)
        px_coll_sched_unpack(s, tmp + (size_t)i * blk, a->rcount, a->rtype,
                             (char *)a->rbuf +
                                 (MPI_Aint)((i + a->root) % n) * a->rcount * rd->extent);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
