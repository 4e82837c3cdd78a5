/* Linear alltoall: all receives and sends posted in one round; fewest
 * steps, lets the transport overlap everything; for medium blocks. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_alltoall_linear)
{
    px_coll_args_t b;
    MPI_Aint sblk, rblk;
    int rc = px_coll_alltoall_start(s, a, c, &b, &sblk, &rblk);
    if (rc != MPI_SUCCESS)
        return rc;
    int n = c->size, r = c->rank;
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
