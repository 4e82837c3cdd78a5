/* Binomial-tree reduction for commutative operations. */
#include "../coll_impl.h"

#include <stdlib.h>

int px_coll_reduce_binomial(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                            int root, px_mpi_comm_t *c)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    int n = c->size, vr = (c->rank - root + n) % n, rc = MPI_SUCCESS;
    size_t span = (size_t)count * (size_t)d->extent; /* element layout as the user has it */
    char *acc = malloc(span ? span : 1), *tmp = malloc(span ? span : 1);
    if (!acc || !tmp) {
        free(acc);
        free(tmp);
        return MPI_ERR_NO_MEM;
    }
    memcpy(acc, sbuf, span);
    for (int mask = 1; mask < n; mask <<= 1) {
        if ((vr & mask) == 0) {
            int src = vr | mask;
            if (src < n) {
                rc = px_coll_recv(tmp, span, (src + root) % n, PX_COLL_TAG_REDUCE, c);
                if (rc != MPI_SUCCESS)
                    break;
                px_mpi_op_apply(op, tmp, acc, count, dt);
            }
        } else {
            rc = px_coll_send(acc, span, ((vr & ~mask) + root) % n, PX_COLL_TAG_REDUCE, c);
            break;
        }
    }
    if (rc == MPI_SUCCESS && c->rank == root)
        memcpy(rbuf, acc, span);
    free(acc);
    free(tmp);
    return rc;
}
