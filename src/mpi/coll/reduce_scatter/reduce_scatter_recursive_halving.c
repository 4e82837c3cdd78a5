/* Recursive-halving reduce-scatter (power-of-two sizes, commutative
 * operations, contiguous types): log2 n steps, each exchanging half of the
 * remaining range with the partner and reducing the half that is kept. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_reduce_scatter_recursive_halving)
{
    int n = c->size, r = c->rank;
    MPI_Aint *displs = px_coll_sched_alloc(s, sizeof(MPI_Aint) * ((size_t)n + 1));
    if (!displs)
        return MPI_ERR_NO_MEM;
    displs[0] = 0;
    for (int i = 0; i < n; i++)
        displs[i + 1] = displs[i] + a->rcounts[i];
    MPI_Aint total = displs[n];
    void *acc = px_coll_tmp_items(s, a->dt, total), *tmp = px_coll_tmp_items(s, a->dt, total);
    if (!acc || !tmp)
        return MPI_ERR_NO_MEM;
    px_coll_copy_items(s, a->sbuf, acc, 0, total, a->dt);
    int lo = 0, hi = n;
    for (int mask = n / 2; mask > 0; mask >>= 1) {
        int peer = r ^ mask, mid = lo + mask;
        int klo = r & mask ? mid : lo, khi = r & mask ? hi : mid;
        int slo = r & mask ? lo : mid, shi = r & mask ? mid : hi;
        px_coll_recv_items(s, c, tmp, displs[klo], displs[khi] - displs[klo], a->dt, peer);
        px_coll_send_items(s, c, acc, displs[slo], displs[shi] - displs[slo], a->dt, peer);
        px_coll_sched_round(s);
        px_coll_sched_reduce(s, px_coll_item(tmp, displs[klo], a->dt),
                             px_coll_item(acc, displs[klo], a->dt), displs[khi] - displs[klo],
                             a->dt, a->op);
        lo = klo;
        hi = khi;
    }
    px_coll_copy_items(s, px_coll_item(acc, displs[r], a->dt), a->rbuf, 0, a->rcounts[r], a->dt);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
