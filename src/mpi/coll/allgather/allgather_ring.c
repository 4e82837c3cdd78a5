/* Ring allgather of equal byte blocks: n-1 steps, each rank forwards the
 * block it received last. */
#include "../coll_impl.h"

int px_coll_allgather_ring(const void *sbuf, void *rbuf, size_t bytes, px_mpi_comm_t *c)
{
    int n = c->size, r = c->rank;
    char *out = rbuf;
    if (sbuf != MPI_IN_PLACE)
        memcpy(out + (size_t)r * bytes, sbuf, bytes);
    for (int i = 0; i < n - 1; i++) {
        int sblk = (r - i + n) % n, rblk = (r - i - 1 + n) % n;
        int rc = px_coll_sendrecv(out + (size_t)sblk * bytes, bytes, (r + 1) % n,
                                  out + (size_t)rblk * bytes, bytes, (r - 1 + n) % n,
                                  PX_COLL_TAG_ALLGATHER, c);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
