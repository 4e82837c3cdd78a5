/* Pairwise reduce-scatter (commutative operations): n-1 steps; in step k a
 * rank sends its contribution to block r+k and receives block r's
 * contribution from r-k. Each element crosses the network once. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_reduce_scatter_pairwise)
{
    int n = c->size, r = c->rank;
    MPI_Aint *displs = px_coll_sched_alloc(s, sizeof(MPI_Aint) * ((size_t)n + 1));
    if (!displs)
        return MPI_ERR_NO_MEM;
    displs[0] = 0;
    for (int i = 0; i < n; i++)
        displs[i + 1] = displs[i] + a->rcounts[i];
    MPI_Aint mine = a->rcounts[r];
    void *acc = px_coll_tmp_items(s, a->dt, mine), *tmp = px_coll_tmp_items(s, a->dt, mine);
    if (!acc || !tmp)
        return MPI_ERR_NO_MEM;
    px_coll_copy_items(s, px_coll_item(a->sbuf, displs[r], a->dt), acc, 0, mine, a->dt);
    for (int k = 1; k < n; k++) {
        int dst = (r + k) % n, src = (r - k + n) % n;
        px_coll_recv_items(s, c, tmp, 0, mine, a->dt, src);
        px_coll_send_items(s, c, a->sbuf, displs[dst], a->rcounts[dst], a->dt, dst);
        px_coll_sched_round(s);
        px_coll_sched_reduce(s, tmp, acc, mine, a->dt, a->op);
    }
    px_coll_copy_items(s, acc, a->rbuf, 0, mine, a->dt);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
