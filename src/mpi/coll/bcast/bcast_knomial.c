/* K-nomial-tree broadcast (radix PX_BCAST_KNOMIAL_RADIX, default 4): fewer
 * levels than binomial at the cost of more sends per parent. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_bcast_knomial)
{
    int n = c->size, vr = (c->rank - a->root + n) % n, k = (int)px_params.bcast_knomial_radix;
    long mask = 1;
    while (mask < n) {
        long digit = (vr / mask) % k;
        if (digit) {
            px_coll_sched_recv(s, c, a->rbuf, (MPI_Aint)a->bytes, MPI_BYTE,
                               (int)((vr - digit * mask + a->root) % n));
            px_coll_sched_round(s);
            break;
        }
        mask *= k;
    }
    /* children below my level, largest subtrees first */
    for (mask /= k; mask > 0; mask /= k)
        for (int j = 1; j < k; j++) {
            long child = vr + j * mask;
            if (child < n)
                px_coll_sched_send(s, c, a->rbuf, (MPI_Aint)a->bytes, MPI_BYTE,
                                   (int)((child + a->root) % n));
        }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
