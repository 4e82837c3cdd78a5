/* Virtual topologies attached to communicators (Cartesian, graph,
 * distributed graph), shared by the topology queries and the neighbour
 * collectives. */
#ifndef PX_MPI_TOPO_IMPL_H
#define PX_MPI_TOPO_IMPL_H

#include "../mpi_impl.h"

/* Tags on the collective context (comm->ctx + 1). Neighbour collectives add
 * the neighbour's match index to the base; both stay far above the small
 * tags the other collectives use. */
#define PX_MPI_TOPO_TAG_NBR 0x70000000
/* persistent ones: + (init's collective tag mod 2^20) * 256 + edge tag */
#define PX_MPI_TOPO_TAG_PNBR 0x40000000
#define PX_MPI_TOPO_TAG_DGRAPH_COUNT 0x6ff00001
#define PX_MPI_TOPO_TAG_DGRAPH_DATA 0x6ff00002

typedef struct px_topo {
    int kind; /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* MPI_CART */
    int ndims;
    int *dims, *periods, *coords;
    /* MPI_GRAPH: the whole graph, as given to MPI_Graph_create */
    int nnodes, nedges;
    int *index, *edges;
    /* MPI_DIST_GRAPH: weights are NULL when unweighted */
    int weighted;
    /* Neighbour lists as the neighbour collectives use them (all kinds):
     * block i of the receive buffer comes from in[i], block j of the send
     * buffer goes to out[j] (MPI_PROC_NULL: nothing moves). in_tag/out_tag
     * pair each edge with the same edge at the other end, so repeated
     * neighbours never mix up their messages. */
    int indeg, outdeg;
    int *in, *in_w, *out, *out_w;
    int *in_tag, *out_tag;
} px_mpi_topo_t;

px_mpi_topo_t *px_mpi_topo_new(int kind);
void px_mpi_topo_free(void *topo);
/* Deep copy (MPI_Comm_dup keeps the topology); NULL when out of memory. */
void *px_mpi_topo_dup(const void *topo);
/* Fills in_tag/out_tag for graph-like topologies: the k-th edge between the
 * same pair of processes is matched with tag base + k at both ends. */
int px_mpi_topo_graph_tags(px_mpi_topo_t *t);
/* Cartesian neighbour lists (2 per dimension: -1 then +1 neighbour). */
int px_mpi_topo_cart_neighbours(px_mpi_topo_t *t, int rank);
/* Topology of c, or an MPI error through c's handler when it has none (or
 * not the wanted kind; kind 0 accepts any). */
px_mpi_topo_t *px_mpi_topo_of(px_mpi_comm_t *c, int kind, const char *fn, int *rc);
/* Collective over old: fresh context; members 0..n-1 of old form the new
 * communicator, which receives topo: new rank i is old's member order[i]
 * (order NULL: in old's rank order). Others get MPI_COMM_NULL and topo is
 * freed. */
int px_mpi_topo_comm_create(px_mpi_comm_t *old, int n, const int *order, px_mpi_topo_t *topo,
                            MPI_Comm *newcomm, const char *fn);
/* Whether reorder=1 may place old's members 0..n-1 (the same answer on
 * every member, without communication): PX_REORDER, METIS, and nodes to
 * place onto. */
int px_mpi_topo_may_reorder(px_mpi_comm_t *old, int n);
/* Placement for reorder=1 (collective over old when it may reorder): the
 * graph of the new communicator's n ranks (directed edges src -> dst with
 * weights w, NULL for 1; the same on every member, or needed on old's rank
 * 0 only) is placed onto old's members 0..n-1 by px_topo_place, with their
 * nodes and the hops between them (PX_TOPO), on old's rank 0, which
 * broadcasts the result. order[i] is the member of old that takes new
 * rank i; *newrank this process's new rank (MPI_UNDEFINED beyond n).
 * Identity when PX_REORDER=0, without METIS, or when the members' nodes
 * leave nothing to place. */
int px_mpi_topo_reorder(px_mpi_comm_t *old, int n, int nedges, const int *src, const int *dst,
                        const int *w, int *order, int *newrank);
/* MPI_Cart_map and MPI_Graph_map: the same placement, computed by the
 * calling process alone (local: px_topo_place is deterministic and every
 * member sees the same nodes, so all agree with each other and with
 * reorder=1); *newrank as above. */
int px_mpi_topo_map(px_mpi_comm_t *old, int n, int nedges, const int *src, const int *dst,
                    int *newrank);
/* Rank of Cartesian coordinates (already wrapped or checked). */
int px_mpi_topo_cart_rank_of(const px_mpi_topo_t *t, const int *coords);
void px_mpi_topo_cart_coords_of(const px_mpi_topo_t *t, int rank, int *coords);

#endif
