/* Linear allgatherv: every rank sends its block to every other rank in a
 * single round; fewest steps, n-1 messages per rank. */
#include "../coll_impl.h"

int px_coll_allgatherv_own(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c);

PX_COLL_BUILDER(px_coll_allgatherv_linear)
{
    int n = c->size, r = c->rank;
    px_mpi_dt_t *rd = px_mpi_dt_get(a->rtype);
    int rc = px_coll_allgatherv_own(s, a, c);
    if (rc != MPI_SUCCESS)
        return rc;
    px_coll_sched_round(s);
    char *mine = (char *)a->rbuf + (MPI_Aint)a->rdispls[r] * rd->extent;
    for (int k = 1; k < n; k++) {
        int src = (r - k + n) % n, dst = (r + k) % n;
        px_coll_sched_recv(s, c, (char *)a->rbuf + (MPI_Aint)a->rdispls[src] * rd->extent,
                           a->rcounts[src], a->rtype, src);
        px_coll_sched_send(s, c, mine, a->rcounts[r], a->rtype, dst);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
