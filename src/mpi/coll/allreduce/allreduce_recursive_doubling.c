/* Recursive-doubling allreduce for commutative operations: log2 n
 * exchanges of the whole vector; the ranks beyond the largest power of two
 * fold into a partner first and get the result back at the end. */
#include "../coll_impl.h"

int px_coll_allreduce_fold(px_coll_sched_t *s, px_mpi_comm_t *c, void *acc, void *tmp,
                           MPI_Aint count, MPI_Datatype dt, MPI_Op op, int rem)
{
    int r = c->rank, newrank;
    if (r >= 2 * rem)
        return r - rem;
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
    return newrank;
}

void px_coll_allreduce_unfold(px_coll_sched_t *s, px_mpi_comm_t *c, void *acc, MPI_Aint count,
                              MPI_Datatype dt, int rem)
{
    int r = c->rank;
    if (r >= 2 * rem)
        return;
    if (r % 2)
        px_coll_send_items(s, c, acc, 0, count, dt, r - 1);
    else
        px_coll_recv_items(s, c, acc, 0, count, dt, r + 1);
}

PX_COLL_BUILDER(px_coll_allreduce_recursive_doubling)
{
    int n = c->size, pof2 = px_coll_pof2_floor(n), rem = n - pof2;
    void *acc = a->rbuf, *tmp = px_coll_tmp_items(s, a->dt, a->count);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    px_coll_copy_items(s, a->sbuf, acc, 0, a->count, a->dt);
    int newrank = px_coll_allreduce_fold(s, c, acc, tmp, a->count, a->dt, a->op, rem);
    if (newrank >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int nd = newrank ^ mask, dst = nd < rem ? nd * 2 + 1 : nd + rem;
            px_coll_recv_items(s, c, tmp, 0, a->count, a->dt, dst);
            px_coll_send_items(s, c, acc, 0, a->count, a->dt, dst);
            px_coll_sched_round(s);
            px_coll_sched_reduce(s, tmp, acc, a->count, a->dt, a->op);
        }
    }
    px_coll_allreduce_unfold(s, c, acc, a->count, a->dt, rem);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
