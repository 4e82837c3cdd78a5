/* Linear alltoallv/alltoallw: every receive and send posted in one round. */
#include "../coll_impl.h"

int px_coll_alltoallw_resolve(px_coll_sched_t *s, const px_coll_args_t *a, px_coll_args_t *out);
void px_coll_alltoallw_block(const px_coll_args_t *a, int send, int i, char **buf_p,
                             MPI_Datatype *dt_p);

PX_COLL_BUILDER(px_coll_alltoallw_linear)
{
    px_coll_args_t b;
    int rc = px_coll_alltoallw_resolve(s, a, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    int n = c->size, r = c->rank;
    for (int k = 0; k < n; k++) {
        int src = (r - k + n) % n;
        char *p;
        MPI_Datatype t;
        px_coll_alltoallw_block(&b, 0, src, &p, &t);
        px_coll_sched_recv(s, c, p, b.rcounts[src], t, src);
    }
    for (int k = 0; k < n; k++) {
        int dst = (r + k) % n;
        char *p;
        MPI_Datatype t;
        px_coll_alltoallw_block(&b, 1, dst, &p, &t);
        px_coll_sched_send(s, c, p, b.scounts[dst], t, dst);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
