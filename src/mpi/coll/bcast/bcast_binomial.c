/* Binomial-tree broadcast of a->bytes contiguous bytes at a->rbuf:
 * log2 n steps; best for small messages. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_bcast_binomial)
{
    int n = c->size, vr = (c->rank - a->root + n) % n, mask = 1;
    while (mask < n) {
        if (vr & mask) {
            px_coll_sched_recv(s, c, a->rbuf, (MPI_Aint)a->bytes, MPI_BYTE,
                               (vr - mask + a->root) % n);
            px_coll_sched_round(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n)
            px_coll_sched_send(s, c, a->rbuf, (MPI_Aint)a->bytes, MPI_BYTE,
                               (vr + mask + a->root) % n);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
