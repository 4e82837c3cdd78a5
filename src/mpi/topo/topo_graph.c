/* Graph topologies (MPI_Graph_create and its queries) and MPI_Topo_test. */
#include "topo_impl.h"

#include <stdlib.h>

/* Checks a graph description; returns MPI_SUCCESS or the reported error. */
static int px_graph_check(px_mpi_comm_t *c, int nnodes, const int *index, const int *edges,
                          const char *fn)
{
    if (nnodes < 0)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "negative nnodes %d", nnodes);
    if (nnodes > c->size)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "nnodes %d exceeds the communicator's size %d",
                            nnodes, c->size);
    if (nnodes == 0)
        return MPI_SUCCESS;
    if (!index)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null index");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return px_mpi_error(c, MPI_ERR_ARG, fn, "index[%d] = %d is not cumulative", i,
                                index[i]);
    int nedges = index[nnodes - 1];
    if (nedges > 0 && !edges)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null edges");
    for (int i = 0; i < nedges; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return px_mpi_error(c, MPI_ERR_RANK, fn, "edges[%d] = %d is outside 0..%d", i, edges[i],
                                nnodes - 1);
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Graph_create)
(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
 MPI_Comm *comm_graph)
{
    PX_CS_ENTER();
    PX_OUT_COMM_NULL(comm_graph);
    PX_CHECK_INIT("MPI_Graph_create");
    PX_GET_COMM(c, comm_old, "MPI_Graph_create");
    if (!comm_graph)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Graph_create", "null comm_graph");
    int rc = px_graph_check(c, nnodes, index, edges, "MPI_Graph_create");
    if (rc != MPI_SUCCESS)
        return rc;
    int *order = NULL, me = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    if (reorder && nnodes > 1) {
        /* the graph's edges, node i to each of its list */
        int ne = index[nnodes - 1];
        int *src = malloc(sizeof(int) * (size_t)(ne + 1));
        order = malloc(sizeof(int) * (size_t)nnodes);
        for (int i = 0, e = 0; src && i < nnodes; i++)
            for (; e < index[i]; e++)
                src[e] = i;
        rc = px_mpi_topo_reorder(c, nnodes, src ? ne : 0, src, edges, NULL, order, &me);
        free(src);
        if (!order || !src || rc != MPI_SUCCESS) {
            uint32_t ctx;
            px_mpi_comm_alloc_ctx(c, &ctx);
            free(order);
            return px_mpi_error(c, rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM, "MPI_Graph_create",
                                "cannot place the ranks");
        }
    }
    px_mpi_topo_t *t = NULL;
    if (me != MPI_UNDEFINED) {
        int nedges = index[nnodes - 1], ok = 1;
        int first = me ? index[me - 1] : 0, deg = index[me] - first;
        t = px_mpi_topo_new(MPI_GRAPH);
        if (t) {
            t->nnodes = nnodes;
            t->nedges = nedges;
            t->index = malloc(sizeof(int) * (size_t)nnodes);
            t->edges = nedges ? malloc(sizeof(int) * (size_t)nedges) : NULL;
            t->indeg = t->outdeg = deg;
            t->in = deg ? malloc(sizeof(int) * (size_t)deg) : NULL;
            t->out = deg ? malloc(sizeof(int) * (size_t)deg) : NULL;
            ok = t->index && (!nedges || t->edges) && (!deg || (t->in && t->out));
            if (ok) {
                memcpy(t->index, index, sizeof(int) * (size_t)nnodes);
                if (nedges)
                    memcpy(t->edges, edges, sizeof(int) * (size_t)nedges);
                if (deg) {
                    memcpy(t->in, edges + first, sizeof(int) * (size_t)deg);
                    memcpy(t->out, edges + first, sizeof(int) * (size_t)deg);
                }
                ok = px_mpi_topo_graph_tags(t) == MPI_SUCCESS;
            }
        }
        if (!t || !ok) {
            px_mpi_topo_free(t);
            uint32_t ctx;
            px_mpi_comm_alloc_ctx(c, &ctx); /* keep the others from waiting */
            free(order);
            return px_mpi_error(c, MPI_ERR_NO_MEM, "MPI_Graph_create", "out of memory");
        }
    }
    rc = px_mpi_topo_comm_create(c, nnodes, order, t, comm_graph, "MPI_Graph_create");
    free(order);
    return rc;
}
PX_WEAK(MPI_Graph_create)

PX_PMPI(MPI_Graphdims_get)(MPI_Comm comm, int *nnodes, int *nedges)
{
    PX_CS_ENTER();
    int rc;
    PX_CHECK_INIT("MPI_Graphdims_get");
    PX_GET_COMM(c, comm, "MPI_Graphdims_get");
    px_mpi_topo_t *t = px_mpi_topo_of(c, MPI_GRAPH, "MPI_Graphdims_get", &rc);
    if (!t)
        return rc;
    if (!nnodes || !nedges)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Graphdims_get", "null argument");
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Graphdims_get)

PX_PMPI(MPI_Graph_get)(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    PX_CS_ENTER();
    int rc;
    PX_CHECK_INIT("MPI_Graph_get");
    PX_GET_COMM(c, comm, "MPI_Graph_get");
    px_mpi_topo_t *t = px_mpi_topo_of(c, MPI_GRAPH, "MPI_Graph_get", &rc);
    if (!t)
        return rc;
    if (maxindex < 0 || maxedges < 0)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Graph_get", "negative maxindex or maxedges");
    int ni = maxindex < t->nnodes ? maxindex : t->nnodes;
    int ne = maxedges < t->nedges ? maxedges : t->nedges;
    if ((ni > 0 && !index) || (ne > 0 && !edges))
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Graph_get", "null output array");
    if (ni > 0)
        memcpy(index, t->index, sizeof(int) * (size_t)ni);
    if (ne > 0)
        memcpy(edges, t->edges, sizeof(int) * (size_t)ne);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Graph_get)

PX_PMPI(MPI_Graph_neighbors_count)(MPI_Comm comm, int rank, int *nneighbors)
{
    PX_CS_ENTER();
    int rc;
    PX_CHECK_INIT("MPI_Graph_neighbors_count");
    PX_GET_COMM(c, comm, "MPI_Graph_neighbors_count");
    px_mpi_topo_t *t = px_mpi_topo_of(c, MPI_GRAPH, "MPI_Graph_neighbors_count", &rc);
    if (!t)
        return rc;
    if (!nneighbors)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Graph_neighbors_count", "null nneighbors");
    if (rank < 0 || rank >= t->nnodes)
        return px_mpi_error(c, MPI_ERR_RANK, "MPI_Graph_neighbors_count",
                            "invalid rank %d (graph of %d nodes)", rank, t->nnodes);
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Graph_neighbors_count)

PX_PMPI(MPI_Graph_neighbors)(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    PX_CS_ENTER();
    int rc;
    PX_CHECK_INIT("MPI_Graph_neighbors");
    PX_GET_COMM(c, comm, "MPI_Graph_neighbors");
    px_mpi_topo_t *t = px_mpi_topo_of(c, MPI_GRAPH, "MPI_Graph_neighbors", &rc);
    if (!t)
        return rc;
    if (rank < 0 || rank >= t->nnodes)
        return px_mpi_error(c, MPI_ERR_RANK, "MPI_Graph_neighbors",
                            "invalid rank %d (graph of %d nodes)", rank, t->nnodes);
    if (maxneighbors < 0)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Graph_neighbors", "negative maxneighbors");
    int first = rank ? t->index[rank - 1] : 0, deg = t->index[rank] - first;
    int n = maxneighbors < deg ? maxneighbors : deg;
    if (n > 0 && !neighbors)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Graph_neighbors", "null neighbors");
    if (n > 0)
        memcpy(neighbors, t->edges + first, sizeof(int) * (size_t)n);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Graph_neighbors)

PX_PMPI(MPI_Graph_map)
(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    PX_CS_ENTER();
    PX_CHECK_INIT("MPI_Graph_map");
    PX_GET_COMM(c, comm, "MPI_Graph_map");
    if (!newrank)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Graph_map", "null newrank");
    int rc = px_graph_check(c, nnodes, index, edges, "MPI_Graph_map");
    if (rc != MPI_SUCCESS)
        return rc;
    if (nnodes < 1)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Graph_map", "nnodes must be positive");
    /* the placement reorder=1 would choose (the identity without one) */
    int ne = index[nnodes - 1];
    int *src = malloc(sizeof(int) * (size_t)(ne + 1));
    if (!src)
        return px_mpi_error(c, MPI_ERR_NO_MEM, "MPI_Graph_map", "out of memory");
    for (int i = 0, e = 0; i < nnodes; i++)
        for (; e < index[i]; e++)
            src[e] = i;
    rc = px_mpi_topo_map(c, nnodes, ne, src, edges, newrank);
    free(src);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Graph_map", "cannot place the ranks");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Graph_map)

PX_PMPI(MPI_Topo_test)(MPI_Comm comm, int *status)
{
    PX_CS_ENTER();
    PX_CHECK_INIT("MPI_Topo_test");
    PX_GET_COMM(c, comm, "MPI_Topo_test");
    if (!status)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Topo_test", "null status");
    px_mpi_topo_t *t = c->topo_free == px_mpi_topo_free ? c->topo : NULL;
    *status = t ? t->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Topo_test)
