/* Bruck alltoall for small blocks: ceil(log2 n) steps instead of n-1; in
 * step k every block whose (rotated) index has bit k set moves 2^k ranks
 * on. Blocks are packed, so any datatype works. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_alltoall_bruck)
{
    px_coll_args_t b;
    int rc = px_coll_alltoall_resolve(s, a, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    int n = c->size, r = c->rank;
    size_t blk = b.bytes;
    MPI_Aint sblk = (MPI_Aint)b.scount * px_mpi_dt_get(b.stype)->extent;
    MPI_Aint rblk = (MPI_Aint)b.rcount * px_mpi_dt_get(b.rtype)->extent;
    char *tmp = px_coll_sched_alloc(s, (size_t)n * blk);
    char *sp = px_coll_sched_alloc(s, (size_t)n * blk),
         *rp = px_coll_sched_alloc(s, (size_t)n * blk);
    if (!tmp || !sp || !rp)
        return MPI_ERR_NO_MEM;
    /* tmp[i] = block destined to rank (r + i) mod n */
    for (int i = 0; i < n; i++)
        px_coll_sched_pack(s, (const char *)b.sbuf + (MPI_Aint)((r + i) % n) * sblk, b.scount,
                           b.stype, tmp + (size_t)i * blk);
    for (int pof = 1; pof < n; pof <<= 1) {
        int cnt = 0;
        for (int i = 1; i < n; i++)
            if (i & pof)
                px_coll_sched_copy(s, tmp + (size_t)i * blk, sp + (size_t)cnt++ * blk, blk);
        px_coll_sched_recv(s, c, rp, (MPI_Aint)((size_t)cnt * blk), MPI_BYTE, (r - pof + n) % n);
        px_coll_sched_send(s, c, sp, (MPI_Aint)((size_t)cnt * blk), MPI_BYTE, (r + pof) % n);
        px_coll_sched_round(s);
        cnt = 0;
        for (int i = 1; i < n; i++)
            if (i & pof)
                px_coll_sched_copy(s, rp + (size_t)cnt++ * blk, tmp + (size_t)i * blk, blk);
    }
    /* tmp[i] now holds the block from rank (r - i) mod n */
    for (int i = 0; i < n; i++)
        px_coll_sched_unpack(s, tmp + (size_t)i * blk, b.rcount, b.rtype,
                             (char *)b.rbuf + (MPI_Aint)((r - i + n) % n) * rblk);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
