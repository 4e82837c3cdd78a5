/* Rabenseifner's reduction for large messages and commutative operations:
 * a recursive-halving reduce-scatter leaves each of the pof2 participating
 * ranks with one reduced segment, which then goes straight to the root. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_reduce_rabenseifner)
{
    int n = c->size, pof2 = px_coll_pof2_floor(n), rem = n - pof2, newrank;
    MPI_Aint *cnts = px_coll_sched_alloc(s, sizeof(MPI_Aint) * 2 * (size_t)pof2);
    if (!cnts)
        return MPI_ERR_NO_MEM;
    MPI_Aint *displs = cnts + pof2;
    void *acc = px_coll_tmp_items(s, a->dt, a->count);
    if (!acc)
        return MPI_ERR_NO_MEM;
    px_coll_copy_items(s, a->sbuf, acc, 0, a->count, a->dt);
    int rc = px_coll_rabenseifner_reduce_scatter(s, c, acc, a->count, a->dt, a->op, cnts, displs, 0,
                                                 NULL, &newrank);
    if (rc != MPI_SUCCESS)
        return rc;
    px_coll_sched_round(s);
    if (c->rank == a->root) {
        for (int i = 0; i < pof2; i++) {
            int owner = i < rem ? 2 * i + 1 : i + rem;
            if (owner == c->rank)
                px_coll_copy_items(s, acc, a->rbuf, displs[i], cnts[i], a->dt);
            else
                px_coll_recv_items(s, c, a->rbuf, displs[i], cnts[i], a->dt, owner);
        }
    } else if (newrank >= 0) {
        px_coll_send_items(s, c, acc, displs[newrank], cnts[newrank], a->dt, a->root);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
