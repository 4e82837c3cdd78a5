/* Recursive-doubling allreduce for commutative operations; the ranks
 * beyond the largest power of two fold into a partner first. */
#include "../coll_impl.h"

#include <stdlib.h>

int px_coll_allreduce_recursive_doubling(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                                         MPI_Op op, px_mpi_comm_t *c)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    size_t span = (size_t)count * (size_t)d->extent;
    int n = c->size, r = c->rank, rc = MPI_SUCCESS, newrank;
    int pof2 = 1;
    while (pof2 * 2 <= n)
        pof2 *= 2;
    int rem = n - pof2;
    char *tmp = malloc(span ? span : 1);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    if (sbuf != rbuf)
        memcpy(rbuf, sbuf, span);

    if (r < 2 * rem) {
        if (r % 2 == 0) {
            rc = px_coll_send(rbuf, span, r + 1, PX_COLL_TAG_ALLREDUCE, c);
            newrank = -1;
        } else {
            rc = px_coll_recv(tmp, span, r - 1, PX_COLL_TAG_ALLREDUCE, c);
            if (rc == MPI_SUCCESS)
                px_mpi_op_apply(op, tmp, rbuf, count, dt);
            newrank = r / 2;
        }
    } else {
        newrank = r - rem;
    }
    if (newrank != -1 && rc == MPI_SUCCESS) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int nd = newrank ^ mask;
            int dst = nd < rem ? nd * 2 + 1 : nd + rem;
            rc = px_coll_sendrecv(rbuf, span, dst, tmp, span, dst, PX_COLL_TAG_ALLREDUCE, c);
            if (rc != MPI_SUCCESS)
                break;
            px_mpi_op_apply(op, tmp, rbuf, count, dt);
        }
    }
    if (rc == MPI_SUCCESS && r < 2 * rem) {
        if (r % 2)
            rc = px_coll_send(rbuf, span, r - 1, PX_COLL_TAG_ALLREDUCE, c);
        else
            rc = px_coll_recv(rbuf, span, r + 1, PX_COLL_TAG_ALLREDUCE, c);
    }
    free(tmp);
    return rc;
}
