/* Node hierarchy of a communicator for the node-aware ("smp") algorithms:
 * a communicator of the ranks on this node and one of the node leaders,
 * built once (at the first blocking collective called on the communicator,
 * where every rank is known to take part) and cached in a small table
 * keyed by the communicator's handle and context id. */
#include "coll_impl.h"

#include <stdlib.h>

/* Indexed by the handle's table index. Entries are never evicted by other
 * communicators: whether a call builds must be the same on every rank. */
static px_coll_hier_t **px_hier_tab;
static int px_hier_cap;
/* This thread is building a hierarchy: its own collectives stay flat. Per
 * thread: another thread's collectives on its own communicator meanwhile
 * must decide as the same thread on the other ranks does. */
static __thread int px_hier_building;

static px_coll_hier_t **px_hier_slot(px_mpi_comm_t *c)
{
    int idx = PX_HANDLE_IDX(c->handle);
    if (idx >= px_hier_cap) {
        int nc = px_hier_cap ? px_hier_cap : 64;
        while (nc <= idx)
            nc *= 2;
        px_coll_hier_t **t = realloc(px_hier_tab, sizeof(*t) * (size_t)nc);
        if (!t)
            return NULL;
        memset(t + px_hier_cap, 0, sizeof(*t) * (size_t)(nc - px_hier_cap));
        px_hier_tab = t;
        px_hier_cap = nc;
    }
    return &px_hier_tab[idx];
}

static void px_hier_drop(px_coll_hier_t *h)
{
    if (!h)
        return;
    if (h->node)
        px_mpi_comm_release(h->node);
    if (h->leaders)
        px_mpi_comm_release(h->leaders);
    free(h->leader_of);
    free(h);
}

/* The entry for c; a stale entry (handle reused by a newer communicator,
 * told apart by its context id) is not returned. */
static px_coll_hier_t *px_hier_lookup(px_mpi_comm_t *c)
{
    int idx = PX_HANDLE_IDX(c->handle);
    px_coll_hier_t *h = idx < px_hier_cap ? px_hier_tab[idx] : NULL;
    return h && h->handle == c->handle && h->ctx == c->ctx ? h : NULL;
}

void px_coll_hier_forget(px_mpi_comm_t *c)
{
    px_coll_hier_t *h = px_hier_lookup(c);
    if (h) {
        px_hier_tab[PX_HANDLE_IDX(c->handle)] = NULL;
        px_hier_drop(h);
    }
}

px_coll_hier_t *px_coll_hier_get(px_mpi_comm_t *c)
{
    px_coll_hier_t *h = px_hier_lookup(c);
    return h && h->state == 1 ? h : NULL;
}

int px_coll_hier_usable(px_mpi_comm_t *c) { return px_coll_hier_get(c) != NULL; }

void px_coll_hier_ensure(px_mpi_comm_t *c)
{
    if (px_hier_building || c->size < 2 || !px_params.coll_hier || px_hier_lookup(c))
        return;
    /* All on one node is known alike on every rank (local_size == size holds
     * everywhere or nowhere): no hierarchy to exploit, unless forced. */
    if (c->local_size == c->size && !px_coll_forced_hier())
        return;
    if (!px_hier_slot(c))
        return;
    px_coll_hier_t *h = calloc(1, sizeof(*h));
    int *lo = malloc(sizeof(int) * (size_t)c->size);
    if (!h || !lo) {
        free(h);
        free(lo);
        return;
    }
    h->handle = c->handle;
    h->ctx = c->ctx;
    h->state = -1;
    px_hier_building = 1;
    MPI_Comm node = MPI_COMM_NULL, leaders = MPI_COMM_NULL;
    int rc = PMPI_Comm_split_type(c->handle, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node);
    int node_rank = 0, lr = -1;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_rank(node, &node_rank);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_split(c->handle, node_rank == 0 ? 0 : MPI_UNDEFINED, c->rank, &leaders);
    if (rc == MPI_SUCCESS) {
        h->node = px_mpi_comm_get(node);
        h->leaders = leaders != MPI_COMM_NULL ? px_mpi_comm_get(leaders) : NULL;
        lr = h->leaders ? h->leaders->rank : -1;
        rc = px_mpi_coll_bcast(&lr, 1, MPI_INT, 0, h->node);
    }
    if (rc == MPI_SUCCESS)
        rc = px_mpi_coll_allgather_bytes(&lr, lo, sizeof(int), c);
    px_hier_building = 0;
    if (rc != MPI_SUCCESS || !h->node) {
        /* stay flat; the sub-communicators (if any) are not freed here
         * because a failed collective leaves them in an unknown state */
        free(lo);
        h->node = h->leaders = NULL;
        px_hier_drop(*px_hier_slot(c));
        *px_hier_slot(c) = h;
        return;
    }
    h->leader_of = lo;
    int *cnt = calloc((size_t)c->size, sizeof(int));
    for (int i = 0; i < c->size && cnt; i++) {
        if (lo[i] + 1 > h->num_nodes)
            h->num_nodes = lo[i] + 1;
        cnt[lo[i]]++;
    }
    h->min_ppn = c->size;
    for (int i = 0; i < h->num_nodes && cnt; i++) {
        if (cnt[i] > h->max_ppn)
            h->max_ppn = cnt[i];
        if (cnt[i] < h->min_ppn)
            h->min_ppn = cnt[i];
    }
    free(cnt);
    h->state = 1;
    px_hier_drop(*px_hier_slot(c));
    *px_hier_slot(c) = h;
}
