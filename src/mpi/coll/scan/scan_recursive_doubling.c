/* Recursive-doubling scan: log2 n exchanges of partial results; keeps rank
 * order, so it works for non-commutative operations too. */
#include "../coll_impl.h"

/* Each exchange doubles the span of ranks a partial result covers, and a
 * rank's result takes in only those from lower ranks. The inclusive scan
 * starts the result from the rank's own data, the exclusive one from the
 * first partial result received (rank 0 receives none and leaves its
 * receive buffer untouched). */
int px_coll_scan_doubling(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c,
                          int inclusive)
{
    int n = c->size, r = c->rank, have = inclusive;
    void *partial = px_coll_tmp_items(s, a->dt, a->count);
    if (!partial)
        return MPI_ERR_NO_MEM;
    px_coll_copy_items(s, a->sbuf, partial, 0, a->count, a->dt);
    if (inclusive)
        px_coll_copy_items(s, a->sbuf, a->rbuf, 0, a->count, a->dt);
    for (int mask = 1; mask < n; mask <<= 1) {
        int peer = r ^ mask;
        if (peer >= n)
            continue;
        void *tmp = px_coll_tmp_items(s, a->dt, a->count);
        if (!tmp)
            return MPI_ERR_NO_MEM;
        px_coll_recv_items(s, c, tmp, 0, a->count, a->dt, peer);
        px_coll_send_items(s, c, partial, 0, a->count, a->dt, peer);
        px_coll_sched_round(s);
        if (peer < r) {
            px_coll_sched_reduce(s, tmp, partial, a->count, a->dt, a->op);
            if (have)
                px_coll_sched_reduce(s, tmp, a->rbuf, a->count, a->dt, a->op);
            else
                px_coll_copy_items(s, tmp, a->rbuf, 0, a->count, a->dt);
            have = 1;
        } else {
            /* partial = partial op tmp, computed in tmp and copied back */
            px_coll_sched_reduce(s, partial, tmp, a->count, a->dt, a->op);
            px_coll_copy_items(s, tmp, partial, 0, a->count, a->dt);
        }
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}

PX_COLL_BUILDER(px_coll_scan_recursive_doubling) { return px_coll_scan_doubling(s, a, c, 1); }
