/* Linear alltoall: all receives and sends posted in one round; fewest
 * steps, lets the transport overlap everything; for medium blocks. */
#include "../coll_impl.h"

int px_coll_alltoall_resolve(px_coll_sched_t *s, const px_coll_args_t *a, px_coll_args_t *out);
int px_coll_alltoall_own(px_coll_sched_t *s, const px_coll_args_t *a, const char *src, char *dst);

PX_COLL_BUILDER(px_coll_alltoall_linear)
{
    px_coll_args_t b;
    int rc = px_coll_alltoall_resolve(s, a, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    int n = c->size, r = c->rank;
    MPI_Aint sblk = (MPI_Aint)b.scount * px_mpi_dt_get(b.stype)->extent;
    MPI_Aint rblk = (MPI_Aint)b.rcount * px_mpi_dt_get(b.rtype)->extent;
    rc = px_coll_alltoall_own(s, &b, (const char *)b.sbuf + r * sblk, (char *)b.rbuf + r * rblk);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int k = 1; k < n; k++) {
        int src = (r - k + n) % n;
        px_coll_sched_recv(s, c, (char *)b.rbuf + src * rblk, b.rcount, b.rtype, src);
    }
    for (int k = 1; k < n; k++) {
        int dst = (r + k) % n;
        px_coll_sched_send(s, c, (const char *)b.sbuf + dst * sblk, b.scount, b.stype, dst);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
