/* Node-aware barrier: everyone on a node reports to its leader over shared
 * memory, leaders run a dissemination barrier, then release their node. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_barrier_smp)
{
    px_coll_hier_t *h = px_coll_hier_get(c);
    if (!h)
        return MPI_ERR_INTERN;
    px_mpi_comm_t *nd = h->node;
    if (nd->rank != 0) {
        px_coll_sched_send(s, nd, NULL, 0, MPI_BYTE, 0);
        px_coll_sched_round(s);
        px_coll_sched_recv(s, nd, NULL, 0, MPI_BYTE, 0);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    for (int i = 1; i < nd->size; i++)
        px_coll_sched_recv(s, nd, NULL, 0, MPI_BYTE, i);
    px_coll_sched_round(s);
    int rc = px_coll_barrier_dissemination(s, a, h->leaders);
    px_coll_sched_round(s);
    for (int i = 1; i < nd->size; i++)
        px_coll_sched_send(s, nd, NULL, 0, MPI_BYTE, i);
    px_coll_sched_round(s);
    return rc;
}
