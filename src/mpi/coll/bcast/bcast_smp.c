/* Node-aware broadcast: the root hands the data to its node's leader,
 * leaders broadcast among themselves, each leader broadcasts on its node
 * over shared memory. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_bcast_smp)
{
    px_coll_hier_t *h = px_coll_hier_get(c);
    if (!h)
        return MPI_ERR_INTERN;
    px_mpi_comm_t *nd = h->node;
    int root_leader = h->leader_of[a->root];
    int on_root_node = h->leader_of[c->rank] == root_leader;
    px_coll_args_t sub = *a;
    int rc = MPI_SUCCESS;
    if (on_root_node && nd->size > 1) {
        /* the root's local rank: ranks of a node are in comm order, so the
         * root is the (number of earlier comm ranks on this node)-th one */
        int root_local = 0;
        for (int i = 0; i < a->root; i++)
            root_local += h->leader_of[i] == root_leader;
        if (root_local != 0) {
            if (nd->rank == root_local)
                px_coll_sched_send(s, nd, a->rbuf, (MPI_Aint)a->bytes, MPI_BYTE, 0);
            else if (nd->rank == 0)
                px_coll_sched_recv(s, nd, a->rbuf, (MPI_Aint)a->bytes, MPI_BYTE, root_local);
            px_coll_sched_round(s);
        }
    }
    if (h->leaders && h->leaders->size > 1) {
        sub.root = root_leader;
        rc = px_coll_build_into(s, PX_COLL_BCAST, &sub, h->leaders);
        px_coll_sched_round(s);
    }
    if (rc == MPI_SUCCESS && nd->size > 1) {
        sub.root = 0;
        if (on_root_node) {
            /* the root already has the data: broadcast from it directly to
             * avoid a second copy to it */
            int root_local = 0;
            for (int i = 0; i < a->root; i++)
                root_local += h->leader_of[i] == root_leader;
            sub.root = root_local;
        }
        rc = px_coll_build_into(s, PX_COLL_BCAST, &sub, nd);
    }
    return rc;
}
