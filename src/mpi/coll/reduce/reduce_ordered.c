/* Reduction in rank order at the root, for non-commutative operations:
 * result = x0 op x1 op ... op x(n-1). */
#include "../coll_impl.h"

#include <stdlib.h>

int px_coll_reduce_ordered(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                           int root, px_mpi_comm_t *c)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    size_t span = (size_t)count * (size_t)d->extent;
    int n = c->size, rc = MPI_SUCCESS;
    if (c->rank != root)
        return px_coll_send(sbuf, span, root, PX_COLL_TAG_REDUCE, c);
    char *acc = malloc(span ? span : 1), *tmp = malloc(span ? span : 1);
    if (!acc || !tmp) {
        free(acc);
        free(tmp);
        return MPI_ERR_NO_MEM;
    }
    for (int i = n - 1; i >= 0 && rc == MPI_SUCCESS; i--) {
        char *dst = i == n - 1 ? acc : tmp;
        if (i == root)
            memcpy(dst, sbuf, span);
        else
            rc = px_coll_recv(dst, span, i, PX_COLL_TAG_REDUCE, c);
        if (rc == MPI_SUCCESS && i != n - 1)
            px_mpi_op_apply(op, tmp, acc, count, dt); /* acc = x_i op acc */
    }
    if (rc == MPI_SUCCESS)
        memcpy(rbuf, acc, span);
    free(acc);
    free(tmp);
    return rc;
}
