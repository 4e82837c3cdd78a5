/* Binomial-tree broadcast: log2 n steps; best for small messages. */
#include "../coll_impl.h"

int px_coll_bcast_binomial(void *buf, size_t bytes, int root, px_mpi_comm_t *c)
{
    int n = c->size, vr = (c->rank - root + n) % n, mask = 1, rc;
    while (mask < n) {
        if (vr & mask) {
            rc = px_coll_recv(buf, bytes, (vr - mask + root) % n, PX_COLL_TAG_BCAST, c);
            if (rc != MPI_SUCCESS)
                return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < n) {
            rc = px_coll_send(buf, bytes, (vr + mask + root) % n, PX_COLL_TAG_BCAST, c);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return MPI_SUCCESS;
}
