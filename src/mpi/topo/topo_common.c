/* Topology objects: allocation, copy, neighbour tags, and the creation of
 * the communicator that carries a topology. */
#include "topo_impl.h"

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

int px_mpi_topo_comm_create(px_mpi_comm_t *old, int n, px_mpi_topo_t *topo, MPI_Comm *newcomm,
                            const char *fn)
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
    memcpy(g->world, old->group->world, sizeof(int) * (size_t)n);
    g->rank = old->rank;
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
