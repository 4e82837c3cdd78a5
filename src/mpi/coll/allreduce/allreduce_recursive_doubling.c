/* Recursive-doubling allreduce for commutative operations: log2 n
 * exchanges of the whole vector; the ranks beyond the largest power of two
 * fold into a partner first and get the result back at the end. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_allreduce_recursive_doubling)
{
    int n = c->size, r = c->rank, pof2 = px_coll_pof2_floor(n), rem = n - pof2, newrank;
    void *acc = a->rbuf, *tmp = px_coll_tmp_items(s, a->dt, a->count);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    px_coll_copy_items(s, a->sbuf, acc, 0, a->count, a->dt);
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            px_coll_send_items(s, c, acc, 0, a->count, a->dt, r + 1);
            newrank = -1;
        } else {
            px_coll_recv_items(s, c, tmp, 0, a->count, a->dt, r - 1);
            newrank = r / 2;
        }
        px_coll_sched_round(s);
        if (newrank >= 0)
            px_coll_sched_reduce(s, tmp, acc, a->count, a->dt, a->op);
    } else {
        newrank = r - rem;
    }
    if (newrank >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int nd = newrank ^ mask, dst = nd < rem ? nd * 2 + 1 : nd + rem;
            px_coll_recv_items(s, c, tmp, 0, a->count, a->dt, dst);
            px_coll_send_items(s, c, acc, 0, a->count, a->dt, dst);
            px_coll_sched_round(s);
            px_coll_sched_reduce(s, tmp, acc, a->count, a->dt, a->op);
        }
    }
    if (r < 2 * rem) {
        if (r % 2)
            px_coll_send_items(s, c, acc, 0, a->count, a->dt, r - 1);
        else
            px_coll_recv_items(s, c, acc, 0, a->count, a->dt, r + 1);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
