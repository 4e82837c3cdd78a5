/* Binomial-tree scatter: the root packs the blocks in rank order relative
 * to itself and hands each child its whole subtree's blocks; log2 n steps,
 * best for small blocks. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_scatter_binomial)
{
    int n = c->size, vr = (c->rank - a->root + n) % n;
    size_t blk = a->bytes;
    int sub = n, mask = 1;
    for (; mask < n; mask <<= 1)
        if (vr & mask) {
            sub = mask < n - vr ? mask : n - vr;
            break;
        }
    int parent = (vr - mask + a->root) % n;
    if (sub == 1 && vr != 0) {
        px_coll_sched_recv(s, c, a->rbuf, a->rcount, a->rtype, parent);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    char *tmp = px_coll_sched_alloc(s, (size_t)sub * blk);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    if (vr == 0) {
        px_mpi_dt_t *sd = px_mpi_dt_get(a->stype);
        for (int i = 0; i < n; i++)
            px_coll_sched_pack(
                s, (const char *)a->sbuf + (MPI_Aint)((i + a->root) % n) * a->scount * sd->extent,
                a->scount, a->stype, tmp + (size_t)i * blk);
    } else {
        px_coll_sched_recv(s, c, tmp, (MPI_Aint)((size_t)sub * blk), MPI_BYTE, parent);
        px_coll_sched_round(s);
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n) {
            int cnt = mask < n - vr - mask ? mask : n - vr - mask;
            px_coll_sched_send(s, c, tmp + (size_t)mask * blk, (MPI_Aint)((size_t)cnt * blk),
                               MPI_BYTE, (vr + mask + a->root) % n);
        }
    if (!(vr == 0 && a->rbuf == MPI_IN_PLACE))
        px_coll_sched_unpack(s, tmp, a->rcount, a->rtype, a->rbuf);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
