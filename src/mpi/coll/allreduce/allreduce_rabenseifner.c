/* Rabenseifner's allreduce for large vectors and commutative operations:
 * recursive-halving reduce-scatter, then recursive-doubling allgather;
 * each rank sends about 2x the vector instead of log2 n times it. */
#include "../coll_impl.h"

int px_coll_rabenseifner_reduce_scatter(px_coll_sched_t *s, px_mpi_comm_t *c, void *acc,
                                        MPI_Aint count, MPI_Datatype dt, MPI_Op op,
                                        MPI_Aint *cnts, MPI_Aint *displs, int *newrank_p)
{
    int n = c->size, r = c->rank, pof2 = px_coll_pof2_floor(n), rem = n - pof2, newrank;
    void *tmp = px_coll_tmp_items(s, dt, count);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < pof2; i++) {
        cnts[i] = count / pof2 + (i < count % pof2);
        displs[i] = i ? displs[i - 1] + cnts[i - 1] : 0;
    }
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            px_coll_send_items(s, c, acc, 0, count, dt, r + 1);
            newrank = -1;
        } else {
            px_coll_recv_items(s, c, tmp, 0, count, dt, r - 1);
            newrank = r / 2;
        }
        px_coll_sched_round(s);
        if (newrank >= 0)
            px_coll_sched_reduce(s, tmp, acc, count, dt, op);
    } else {
        newrank = r - rem;
    }
    if (newrank >= 0) {
        int lo = 0, hi = pof2;
        for (int mask = pof2 / 2; mask > 0; mask >>= 1) {
            int nd = newrank ^ mask, dst = nd < rem ? nd * 2 + 1 : nd + rem, mid = lo + mask;
            int klo = newrank & mask ? mid : lo, khi = newrank & mask ? hi : mid;
            int slo = newrank & mask ? lo : mid, shi = newrank & mask ? mid : hi;
            MPI_Aint kc = displs[khi - 1] + cnts[khi - 1] - displs[klo];
            MPI_Aint sc = displs[shi - 1] + cnts[shi - 1] - displs[slo];
            px_coll_recv_items(s, c, tmp, displs[klo], kc, dt, dst);
            px_coll_send_items(s, c, acc, displs[slo], sc, dt, dst);
            px_coll_sched_round(s);
            px_coll_sched_reduce(s, px_coll_item(tmp, displs[klo], dt),
                                 px_coll_item(acc, displs[klo], dt), kc, dt, op);
            lo = klo;
            hi = khi;
        }
    }
    *newrank_p = newrank;
    return MPI_SUCCESS;
}

PX_COLL_BUILDER(px_coll_allreduce_rabenseifner)
{
    int n = c->size, r = c->rank, pof2 = px_coll_pof2_floor(n), rem = n - pof2, newrank;
    MPI_Aint *cnts = px_coll_sched_alloc(s, sizeof(MPI_Aint) * 2 * (size_t)pof2);
    if (!cnts)
        return MPI_ERR_NO_MEM;
    MPI_Aint *displs = cnts + pof2;
    void *acc = a->rbuf;
    px_coll_copy_items(s, a->sbuf, acc, 0, a->count, a->dt);
    int rc = px_coll_rabenseifner_reduce_scatter(s, c, acc, a->count, a->dt, a->op, cnts, displs,
                                                 &newrank);
    if (rc != MPI_SUCCESS)
        return rc;
    if (newrank >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int nd = newrank ^ mask, dst = nd < rem ? nd * 2 + 1 : nd + rem;
            int mine = newrank / mask * mask, theirs = nd / mask * mask;
            MPI_Aint mc = displs[mine + mask - 1] + cnts[mine + mask - 1] - displs[mine];
            MPI_Aint tc = displs[theirs + mask - 1] + cnts[theirs + mask - 1] - displs[theirs];
            px_coll_sched_round(s);
            px_coll_recv_items(s, c, acc, displs[theirs], tc, a->dt, dst);
            px_coll_send_items(s, c, acc, displs[mine], mc, a->dt, dst);
        }
    }
    px_coll_sched_round(s);
    if (r < 2 * rem) {
        if (r % 2)
            px_coll_send_items(s, c, acc, 0, a->count, a->dt, r - 1);
        else
            px_coll_recv_items(s, c, acc, 0, a->count, a->dt, r + 1);
        px_coll_sched_round(s);
    }
    return MPI_SUCCESS;
}
