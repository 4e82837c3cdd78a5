/* Topology objects: allocation, copy, neighbour tags, and the creation of
 * the communicator that carries a topology. */
#include "topo_impl.h"
#include "../../topo/topo.h"
#include "../../util/param.h"

#include <stdlib.h>

px_mpi_topo_t *px_mpi_topo_new(int kind)
{
    px_mpi_topo_t *t = calloc(1, sizeof(*t));
    if (t)
        t->kind = kind;
    return t;
}

void px_mpi_topo_free(void *topo)
{
    px_mpi_topo_t *t = topo;
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->coords);
    free(t->index);
    free(t->edges);
    free(t->in);
    free(t->in_w);
    free(t->out);
    free(t->out_w);
    free(t->in_tag);
    free(t->out_tag);
    free(t);
}

/* Copy of n ints; n == 0 or src == NULL gives NULL with *ok kept. */
static int *px_mpi_topo_idup(const int *src, int n, int *ok)
{
    if (!src || n <= 0)
        return NULL;
    int *p = malloc(sizeof(int) * (size_t)n);
    if (!p) {
        *ok = 0;
        return NULL;
    }
    memcpy(p, src, sizeof(int) * (size_t)n);
    return p;
}

void *px_mpi_topo_dup(const void *topo)
{
    const px_mpi_topo_t *s = topo;
    if (!s)
        return NULL;
    px_mpi_topo_t *t = px_mpi_topo_new(s->kind);
    int ok = 1;
    if (!t)
        return NULL;
    *t = *s;
    t->dims = px_mpi_topo_idup(s->dims, s->ndims, &ok);
    t->periods = px_mpi_topo_idup(s->periods, s->ndims, &ok);
    t->coords = px_mpi_topo_idup(s->coords, s->ndims, &ok);
    t->index = px_mpi_topo_idup(s->index, s->nnodes, &ok);
    t->edges = px_mpi_topo_idup(s->edges, s->nedges, &ok);
    t->in = px_mpi_topo_idup(s->in, s->indeg, &ok);
    t->in_w = px_mpi_topo_idup(s->in_w, s->indeg, &ok);
    t->in_tag = px_mpi_topo_idup(s->in_tag, s->indeg, &ok);
    t->out = px_mpi_topo_idup(s->out, s->outdeg, &ok);
    t->out_w = px_mpi_topo_idup(s->out_w, s->outdeg, &ok);
    t->out_tag = px_mpi_topo_idup(s->out_tag, s->outdeg, &ok);
    if (!ok) {
        px_mpi_topo_free(t);
        return NULL;
    }
    return t;
}

/* For each entry, how many earlier entries name the same process. */
static int px_mpi_topo_occurrences(const int *peer, int n, int *occ)
{
    if (n <= 0)
        return MPI_SUCCESS;
    /* Sort indices by (peer, position) so counting is linear after it. */
    int *idx = malloc(sizeof(int) * (size_t)n);
    if (!idx)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++)
        idx[i] = i;
    /* insertion sort for small lists, else a simple merge of runs */
    if (n <= 64) {
        for (int i = 1; i < n; i++) {
            int v = idx[i], j = i - 1;
            while (j >= 0 && peer[idx[j]] > peer[v]) {
                idx[j + 1] = idx[j];
                j--;
            }
            idx[j + 1] = v;
        }
    } else {
        int *tmp = malloc(sizeof(int) * (size_t)n);
        if (!tmp) {
            free(idx);
            return MPI_ERR_NO_MEM;
        }
        /* bottom-up stable merge sort */
        for (int w = 1; w < n; w *= 2) {
            for (int lo = 0; lo < n; lo += 2 * w) {
                int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
                int a = lo, b = mid, k = lo;
                while (a < mid && b < hi)
                    tmp[k++] = peer[idx[b]] < peer[idx[a]] ? idx[b++] : idx[a++];
                while (a < mid)
                    tmp[k++] = idx[a++];
                while (b < hi)
                    tmp[k++] = idx[b++];
            }
            memcpy(idx, tmp, sizeof(int) * (size_t)n);
        }
        free(tmp);
    }
    for (int i = 0; i < n; i++)
        occ[idx[i]] = i > 0 && peer[idx[i - 1]] == peer[idx[i]] ? occ[idx[i - 1]] + 1 : 0;
    free(idx);
    return MPI_SUCCESS;
}

int px_mpi_topo_graph_tags(px_mpi_topo_t *t)
{
    free(t->in_tag);
    free(t->out_tag);
    t->in_tag = t->out_tag = NULL;
    if (t->indeg > 0 && !(t->in_tag = malloc(sizeof(int) * (size_t)t->indeg)))
        return MPI_ERR_NO_MEM;
    if (t->outdeg > 0 && !(t->out_tag = malloc(sizeof(int) * (size_t)t->outdeg)))
        return MPI_ERR_NO_MEM;
    int rc = px_mpi_topo_occurrences(t->in, t->indeg, t->in_tag);
    if (rc == MPI_SUCCESS)
        rc = px_mpi_topo_occurrences(t->out, t->outdeg, t->out_tag);
    return rc;
}

px_mpi_topo_t *px_mpi_topo_of(px_mpi_comm_t *c, int kind, const char *fn, int *rc)
{
    px_mpi_topo_t *t = c->topo_free == px_mpi_topo_free ? c->topo : NULL;
    *rc = MPI_SUCCESS;
    if (!t) {
        *rc = px_mpi_error(c, MPI_ERR_TOPOLOGY, fn, "communicator has no topology");
        return NULL;
    }
    if (kind && t->kind != kind) {
        *rc = px_mpi_error(c, MPI_ERR_TOPOLOGY, fn, "communicator has a %s topology",
                           t->kind == MPI_CART    ? "Cartesian"
                           : t->kind == MPI_GRAPH ? "graph"
                                                  : "distributed graph");
        return NULL;
    }
    return t;
}

int px_mpi_topo_comm_create(px_mpi_comm_t *old, int n, const int *order, px_mpi_topo_t *topo,
                            MPI_Comm *newcomm, const char *fn)
{
    uint32_t ctx;
    /* every member of old takes part, also those left out of the new one */
    int rc = px_mpi_comm_alloc_ctx(old, &ctx);
    if (rc != MPI_SUCCESS) {
        px_mpi_topo_free(topo);
        return px_mpi_error(old, rc, fn, "cannot agree on a context id");
    }
    if (old->rank >= n) {
        px_mpi_topo_free(topo);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    px_mpi_group_t *g = px_mpi_group_new(n);
    if (!g) {
        px_mpi_topo_free(topo);
        return px_mpi_error(old, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    g->rank = old->rank;
    for (int i = 0; i < n; i++) {
        int m = order ? order[i] : i;
        g->world[i] = old->group->world[m];
        if (m == old->rank)
            g->rank = i;
    }
    px_mpi_comm_t *nc;
    rc = px_mpi_comm_create_from_group(old, g, ctx, &nc);
    if (rc != MPI_SUCCESS) {
        px_mpi_group_release(g);
        px_mpi_topo_free(topo);
        return px_mpi_error(old, rc, fn, "out of memory");
    }
    nc->topo = topo;
    nc->topo_free = px_mpi_topo_free;
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

/* The dense node index (0..) of each of old's members 0..n-1; returns how
 * many nodes, or -1 out of memory. */
static int px_mpi_topo_slot_nodes(px_mpi_comm_t *old, int n, int *slot_node, int **first_p)
{
    int *first = malloc(sizeof(int) * (size_t)n), k = 0; /* first member of each node */
    if (!first)
        return -1;
    for (int s = 0; s < n; s++) {
        int nd = px_mpi_comm_node_of(old, s), j = 0;
        while (j < k && px_mpi_comm_node_of(old, first[j]) != nd)
            j++;
        if (j == k)
            first[k++] = s;
        slot_node[s] = j;
    }
    *first_p = first;
    return k;
}

/* Cost of traffic between nodes: 0 within one, else the hops between their
 * hosts under PX_TOPO (at least 1), or 1 when the fabric does not know
 * them; a host the fabric lacks counts as farther than any it knows. */
static void px_mpi_topo_node_dist(px_mpi_comm_t *old, int k, const int *first, int *dist)
{
    int far = 1;
    for (int a = 0; a < k; a++)
        for (int b = 0; b < k; b++) {
            int h =
                a == b ? 0
                       : px_topo_job_hops(old->group->world[first[a]], old->group->world[first[b]]);
            dist[a * k + b] = h;
            if (h > far)
                far = h;
        }
    for (int a = 0; a < k; a++)
        for (int b = 0; b < k; b++)
            if (a != b && dist[a * k + b] < 1)
                dist[a * k + b] = dist[a * k + b] < 0 && px_topo_job() ? far + 2 : 1;
}

int px_mpi_topo_may_reorder(px_mpi_comm_t *old, int n)
{
    if (!px_params.reorder || !px_topo_place_available() || n < 2 || old->is_inter)
        return 0;
    /* every member sees the same nodes, so all decide alike: nothing to
     * place on one node, nor with one member per node and no fabric to
     * tell the nodes apart */
    int k = 0, *first = NULL, *slot_node = malloc(sizeof(int) * (size_t)n);
    if (slot_node)
        k = px_mpi_topo_slot_nodes(old, n, slot_node, &first);
    free(slot_node);
    free(first);
    return k > 1 && k <= PX_TOPO_PLACE_MAX_NODES && (k < n || px_topo_job());
}

/* The placement of the graph onto old's members 0..n-1, computed here:
 * place[v] is the member that takes vertex v (the identity when nothing
 * better is found or memory runs out). */
static void px_topo_compute(px_mpi_comm_t *old, int n, int nedges, const int *src, const int *dst,
                            const int *w, int *place)
{
    int placed = -1, *first = NULL, *slot_node = malloc(sizeof(int) * (size_t)n);
    int k = slot_node ? px_mpi_topo_slot_nodes(old, n, slot_node, &first) : -1;
    if (k > 0) {
        int *dist = malloc(sizeof(int) * (size_t)k * (size_t)k), *xadj = NULL, *adj = NULL,
            *wt = NULL;
        if (dist && px_topo_graph_build(n, nedges, src, dst, w, &xadj, &adj, &wt) == PX_OK) {
            px_mpi_topo_node_dist(old, k, first, dist);
            placed = px_topo_place(n, xadj, adj, wt, slot_node, k, dist, place);
        }
        free(dist);
        free(xadj);
        free(adj);
        free(wt);
    }
    if (placed < 0)
        for (int v = 0; v < n; v++)
            place[v] = v;
    free(slot_node);
    free(first);
}

/* This process's vertex in a placement (MPI_UNDEFINED when it has none). */
static int px_topo_vertex_of(const px_mpi_comm_t *old, int n, const int *place)
{
    for (int v = 0; v < n; v++)
        if (place[v] == old->rank)
            return v;
    return MPI_UNDEFINED;
}

int px_mpi_topo_reorder(px_mpi_comm_t *old, int n, int nedges, const int *src, const int *dst,
                        const int *w, int *order, int *newrank)
{
    for (int i = 0; order && i < n; i++)
        order[i] = i;
    *newrank = old->rank < n ? old->rank : MPI_UNDEFINED;
    if (!px_mpi_topo_may_reorder(old, n))
        return MPI_SUCCESS;
    int *place = malloc(sizeof(int) * (size_t)n);
    if (old->rank == 0 && place)
        px_topo_compute(old, n, nedges, src, dst, w, place);
    /* everyone takes part in the broadcast, also on failure */
    int dummy = 0, rc = px_mpi_coll_bcast(place ? place : &dummy, place ? n : 0, MPI_INT, 0, old);
    if (rc == MPI_SUCCESS && place && order) {
        for (int v = 0; v < n; v++)
            order[v] = place[v];
        *newrank = px_topo_vertex_of(old, n, place);
    }
    free(place);
    return !place ? MPI_ERR_NO_MEM : rc;
}

int px_mpi_topo_map(px_mpi_comm_t *old, int n, int nedges, const int *src, const int *dst,
                    int *newrank)
{
    *newrank = old->rank < n ? old->rank : MPI_UNDEFINED;
    if (!px_mpi_topo_may_reorder(old, n))
        return MPI_SUCCESS;
    int *place = malloc(sizeof(int) * (size_t)n);
    if (!place)
        return MPI_ERR_NO_MEM;
    px_topo_compute(old, n, nedges, src, dst, NULL, place);
    *newrank = px_topo_vertex_of(old, n, place);
    free(place);
    return MPI_SUCCESS;
}
