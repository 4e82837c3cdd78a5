/* Dissemination barrier: ceil(log2 n) rounds, any n. */
#include "../coll_impl.h"

int px_coll_barrier_dissemination(px_mpi_comm_t *c)
{
    char dummy = 0;
    for (int k = 1; k < c->size; k <<= 1) {
        int rc = px_coll_sendrecv(&dummy, 0, (c->rank + k) % c->size, &dummy, 0,
                                  (c->rank - k + c->size) % c->size, PX_COLL_TAG_BARRIER, c);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
