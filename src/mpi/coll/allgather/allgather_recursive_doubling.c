/* Recursive-doubling allgather (power-of-two sizes): log2 n exchanges,
 * each doubling the range of blocks a rank holds; best for small blocks. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_allgather_recursive_doubling)
{
    int n = c->size, r = c->rank;
    px_mpi_dt_t *rd = px_mpi_dt_get(a->rtype);
    MPI_Aint blk = (MPI_Aint)a->rcount * rd->extent;
    int rc = px_coll_allgather_own(s, a, c);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int mask = 1; mask < n; mask <<= 1) {
        int peer = r ^ mask, mine = r / mask * mask, theirs = peer / mask * mask;
        px_coll_sched_recv(s, c, (char *)a->rbuf + theirs * blk, (MPI_Aint)mask * a->rcount,
                           a->rtype, peer);
        if (mask == 1)
            px_coll_allgather_send_own(s, a, c, peer);
        else
            px_coll_sched_send(s, c, (char *)a->rbuf + mine * blk, (MPI_Aint)mask * a->rcount,
                               a->rtype, peer);
        px_coll_sched_round(s);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
