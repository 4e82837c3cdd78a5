/* Flat broadcast: the root sends to every other rank at once. On one node
 * with single-copy rendezvous each receiver reads the root's buffer itself,
 * in parallel, instead of waiting for a tree level above it. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_bcast_linear)
{
    int n = c->size;
    if (c->rank != a->root) {
        px_coll_sched_recv(s, c, a->rbuf, (MPI_Aint)a->bytes, MPI_BYTE, a->root);
    } else {
        /* the rank after the root first, as the tree algorithms do */
        for (int i = 1; i < n; i++)
            px_coll_sched_send(s, c, a->rbuf, (MPI_Aint)a->bytes, MPI_BYTE, (a->root + i) % n);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
