/* Rabenseifner's allreduce for large vectors and commutative operations:
 * recursive-halving reduce-scatter, then recursive-doubling allgather;
 * each rank sends about 2x the vector instead of log2 n times it. */
#include "../coll_impl.h"

/* The communicator rank behind participant newrank (after folding). */
static inline int px_rab_real(int newrank, int rem)
{
    return newrank < rem ? newrank * 2 + 1 : newrank + rem;
}

int px_coll_rabenseifner_reduce_scatter(px_coll_sched_t *s, px_mpi_comm_t *c, void *acc,
                                        MPI_Aint count, MPI_Datatype dt, MPI_Op op, MPI_Aint *cnts,
                                        MPI_Aint *displs, int up, px_coll_rab_step_t *steps,
                                        int *newrank_p)
{
    int n = c->size, pof2 = px_coll_pof2_floor(n), rem = n - pof2;
    void *tmp = px_coll_tmp_items(s, dt, count);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < pof2; i++) {
        cnts[i] = count / pof2 + (i < count % pof2);
        displs[i] = i ? displs[i - 1] + cnts[i - 1] : 0;
    }
    int newrank = px_coll_allreduce_fold(s, c, acc, tmp, count, dt, op, rem);
    if (newrank >= 0) {
        /* Each step halves the blocks this rank reduces; the partner differs
         * in one bit of newrank and holds the same blocks before the step. */
        int lo = 0, hi = pof2, i = 0;
        for (int k = pof2 / 2; k > 0; k >>= 1, i++) {
            int mask = up ? pof2 / 2 / k : k, dst = px_rab_real(newrank ^ mask, rem);
            int mid = lo + (hi - lo) / 2, upper = (newrank & mask) != 0;
            int klo = upper ? mid : lo, khi = upper ? hi : mid;
            int slo = upper ? lo : mid, shi = upper ? mid : hi;
            MPI_Aint kc = displs[khi - 1] + cnts[khi - 1] - displs[klo];
            MPI_Aint sc = displs[shi - 1] + cnts[shi - 1] - displs[slo];
            px_coll_recv_items(s, c, tmp, displs[klo], kc, dt, dst);
            px_coll_send_items(s, c, acc, displs[slo], sc, dt, dst);
            px_coll_sched_round(s);
            px_coll_sched_reduce(s, px_coll_item(tmp, displs[klo], dt),
                                 px_coll_item(acc, displs[klo], dt), kc, dt, op);
            if (steps)
                steps[i] = (px_coll_rab_step_t){dst, klo, khi, slo, shi};
            lo = klo;
            hi = khi;
        }
    }
    *newrank_p = newrank;
    return MPI_SUCCESS;
}

/* Whether the halving should start with the nearest partners (newrank ^ 1)
 * instead of the farthest (newrank ^ pof2/2): the first steps carry the
 * most data (half the vector, then a quarter...), so they should be the
 * ones between ranks of one node. Decided once per communicator from the
 * launcher's node map, alike on every rank: the order with fewer bytes
 * between nodes (ranks placed in blocks of 2 or more per node: nearest
 * first; 4 ranks on 2 nodes send half as much between them). */
static int px_rab_up(px_mpi_comm_t *c, int pof2, int rem)
{
    if (!c->rab_order) {
        int lg = 0;
        while ((1 << lg) < pof2)
            lg++;
        uint64_t far_first = 0, near_first = 0;
        for (int b = 0; b < lg; b++) {
            uint64_t cross = 0; /* pairs on different nodes at distance 1 << b */
            for (int nr = 0; nr < pof2; nr++)
                if (!(nr & (1 << b)) && px_mpi_comm_node_of(c, px_rab_real(nr, rem)) !=
                                            px_mpi_comm_node_of(c, px_rab_real(nr | 1 << b, rem)))
                    cross++;
            far_first += cross << b;             /* step lg-1-b: 1/2^(lg-b) of the vector */
            near_first += cross << (lg - 1 - b); /* step b: 1/2^(b+1) */
        }
        c->rab_order = near_first < far_first ? 2 : 1;
    }
    return c->rab_order == 2;
}

PX_COLL_BUILDER(px_coll_allreduce_rabenseifner)
{
    int n = c->size, pof2 = px_coll_pof2_floor(n), rem = n - pof2, newrank;
    MPI_Aint *cnts = px_coll_sched_alloc(s, sizeof(MPI_Aint) * 2 * (size_t)pof2);
    if (!cnts)
        return MPI_ERR_NO_MEM;
    MPI_Aint *displs = cnts + pof2;
    px_coll_rab_step_t steps[32];
    int nsteps = 0;
    while ((1 << nsteps) < pof2)
        nsteps++;
    void *acc = a->rbuf;
    px_coll_copy_items(s, a->sbuf, acc, 0, a->count, a->dt);
    int rc = px_coll_rabenseifner_reduce_scatter(s, c, acc, a->count, a->dt, a->op, cnts, displs,
                                                 px_rab_up(c, pof2, rem), steps, &newrank);
    if (rc != MPI_SUCCESS)
        return rc;
    if (newrank >= 0) {
        /* the halving backwards: each step doubles the blocks held */
        for (int i = nsteps - 1; i >= 0; i--) {
            const px_coll_rab_step_t *st = &steps[i];
            MPI_Aint mc = displs[st->khi - 1] + cnts[st->khi - 1] - displs[st->klo];
            MPI_Aint tc = displs[st->shi - 1] + cnts[st->shi - 1] - displs[st->slo];
            px_coll_sched_round(s);
            px_coll_recv_items(s, c, acc, displs[st->slo], tc, a->dt, st->peer);
            px_coll_send_items(s, c, acc, displs[st->klo], mc, a->dt, st->peer);
        }
    }
    px_coll_sched_round(s);
    px_coll_allreduce_unfold(s, c, acc, a->count, a->dt, rem);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
