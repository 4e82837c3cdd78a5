/* Linear alltoallv/alltoallw: every receive and send posted in one round. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_alltoallw_linear)
{
    px_coll_args_t b;
    int rc = px_coll_alltoallw_resolve(s, a, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    int n = c->size, r = c->rank;
    for (int k = 0; k < n; k++)
        px_coll_alltoallw_recv(s, c, &b, (r - k + n) % n);
    for (int k = 0; k < n; k++)
        px_coll_alltoallw_send(s, c, &b, (r + k) % n);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
