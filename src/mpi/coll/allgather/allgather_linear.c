/* Linear allgather: every rank sends its block to every other rank in one
 * round. n-1 messages per rank like the ring, but a single step, so ranks
 * that share cores wait for each other once instead of n-1 times. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_allgather_linear)
{
    int n = c->size, r = c->rank;
    px_mpi_dt_t *rd = px_mpi_dt_get(a->rtype);
    MPI_Aint blk = (MPI_Aint)a->rcount * rd->extent;
    int rc = px_coll_allgather_own(s, a, c);
    if (rc != MPI_SUCCESS)
        return rc;
    px_coll_sched_round(s);
    for (int k = 1; k < n; k++) {
        int src = (r - k + n) % n, dst = (r + k) % n;
        px_coll_sched_recv(s, c, (char *)a->rbuf + src * blk, a->rcount, a->rtype, src);
        px_coll_sched_send(s, c, (char *)a->rbuf + r * blk, a->rcount, a->rtype, dst);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
