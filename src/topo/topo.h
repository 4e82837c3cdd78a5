/* The fabric model: hosts, switches, links with rates, routes between
 * hosts, the switch clusters of the hosts, and the queries of the
 * Topology Information Interface (network depth, switch cluster of a host
 * at a depth, path and hops between two hosts, hosts sharing a link just
 * above the leaf level, hosts per leaf switch).
 *
 * Loaded from pxfab's Plexus JSON, ibnetdiscover output (with OpenSM's
 * forwarding tables after it, when given) or Slurm's
 * topology.conf (the format is recognised from the text). Routes come from
 * the forwarding tables of a description when it has them, otherwise they
 * are computed: min-hop over up/down paths, equal-cost choices spread over
 * the candidates by destination, as pxfab's emulated fabric routes.
 *
 * Hosts are numbered 0..n-1 in the order the description lists them. A
 * hop is a switch on the path: two hosts on one switch are 1 hop apart,
 * a host from itself 0. */
#ifndef PX_TOPO_H
#define PX_TOPO_H

#include <stddef.h>
#include <stdint.h>
#include "../util/px_status.h"

struct px_boot_info;

typedef struct px_topo px_topo_t;

/* Loads a description from a file; on failure err says what and where. */
px_status_t px_topo_load(const char *path, px_topo_t **topo_p, char *err, size_t errlen);
/* The same from text in memory; `name` appears in error messages. */
px_status_t px_topo_parse(const char *text, size_t len, const char *name, px_topo_t **topo_p,
                          char *err, size_t errlen);
void px_topo_free(px_topo_t *topo);
/* Which format the text was read as: "plexus-json", "ibnetdiscover", "slurm". */
const char *px_topo_format(const px_topo_t *topo);

/* A compact form of the whole model (hosts, switches, links, forwarding
 * tables) that px_topo_parse reads back: what rank 0 shares with the job.
 * The caller frees *text_p. */
px_status_t px_topo_serialize(const px_topo_t *topo, char **text_p, size_t *len_p);

int px_topo_num_hosts(const px_topo_t *topo);
const char *px_topo_host_name(const px_topo_t *topo, int host);
/* Host index of a name, or -1. A name with a domain also matches the
 * host of its first label ("node3.cluster" finds "node3"). */
int px_topo_host_find(const px_topo_t *topo, const char *name);
int px_topo_num_switches(const px_topo_t *topo);
const char *px_topo_switch_name(const px_topo_t *topo, int sw);
/* The switch a host's first port is cabled to (its leaf), or -1. */
int px_topo_host_leaf(const px_topo_t *topo, int host);

/* Hops from host a to host b over a's rail `rail` toward b's address
 * `path` (LMC-style path index) on that rail; -1 when there is no route. */
int px_topo_hops_rail(px_topo_t *topo, int a, int b, int rail, int path);
static inline int px_topo_hops(px_topo_t *topo, int a, int b)
{
    return px_topo_hops_rail(topo, a, b, 0, 0);
}
/* The switches from a to b in order, at most max of them; returns the hop
 * count (which may exceed max) or -1 without a route. */
int px_topo_path(px_topo_t *topo, int a, int b, int rail, int path, int *switches, int max);
/* The links a route crosses, from a to b, at most max; returns how many
 * (switches + 1) or -1. A link is an index for px_topo_link_*. */
int px_topo_path_links(px_topo_t *topo, int a, int b, int rail, int path, int *links, int max);
int px_topo_num_links(const px_topo_t *topo);
/* Rate of a link in bit/s (0: not given by the description). */
uint64_t px_topo_link_rate(const px_topo_t *topo, int link);
/* One end (0 or 1) of a link: a host index (*is_host 1) or a switch index
 * (*is_host 0); -1 for no such link. */
int px_topo_link_end(const px_topo_t *topo, int link, int end, int *is_host);

/* The hierarchical clustering of the hosts into switch clusters
 * (agglomerative, complete linkage over hop counts: hosts of one leaf
 * switch join first, then leaves joined by the next level, ...). Level 0
 * is one cluster of all hosts; level depth() is every host on its own. */
int px_topo_depth(px_topo_t *topo);
/* Cluster of a host at a level: 0..px_topo_num_clusters(level)-1,
 * numbered in the order of their first host. */
int px_topo_cluster(px_topo_t *topo, int host, int level);
int px_topo_num_clusters(px_topo_t *topo, int level);
/* Distinct clusters at a level among a set of hosts. */
int px_topo_num_clusters_of(px_topo_t *topo, int level, const int *hosts, int n);

/* Of a set of hosts, which share a link just above the leaf level: a
 * leaf-to-upper-switch link crossed in the same direction by the routes
 * of two or more hosts of the set exchanging with each other. Sets
 * shared[i] (when shared is not NULL) and returns how many share. */
int px_topo_sharing(px_topo_t *topo, const int *hosts, int n, int *shared);
/* Hosts of the set per distinct leaf switch among them. */
double px_topo_hosts_per_leaf(px_topo_t *topo, const int *hosts, int n);

/* ---- alltoall schedules (sched.c) ------------------------------------ */

/* The dissertation's topology-aware alltoall schedules: greedy matchings
 * of hosts, farthest partners first, with at most `conflicts` extra flows
 * per link between switches (and direction) in a step. TACS1 adds steps
 * until every pair has exchanged; TACS2 stays within the normal length
 * (the round-robin of pair exchanges) and lets the pairs left over exceed
 * the budget. PAIRWISE is the plain shifted exchange (rank r sends to
 * r+k+1 in step k), ROUNDROBIN the normal schedule of pair exchanges. */
typedef enum {
    PX_TOPO_A2A_PAIRWISE,
    PX_TOPO_A2A_TACS1,
    PX_TOPO_A2A_TACS2,
    PX_TOPO_A2A_ROUNDROBIN
} px_topo_a2a_kind_t;
typedef struct px_topo_a2a px_topo_a2a_t;

/* A schedule for n ranks, rank r on fabric host hosts[r] (-1: unknown, a
 * host of its own without links; topo may be NULL). */
px_status_t px_topo_a2a_build(px_topo_t *topo, const int *hosts, int n, px_topo_a2a_kind_t kind,
                              int conflicts, px_topo_a2a_t **out);
void px_topo_a2a_free(px_topo_a2a_t *s);
const char *px_topo_a2a_name(px_topo_a2a_kind_t kind);
px_topo_a2a_kind_t px_topo_a2a_kind(const px_topo_a2a_t *s);
int px_topo_a2a_ranks(const px_topo_a2a_t *s);
int px_topo_a2a_steps(const px_topo_a2a_t *s);
/* TACS2 found no room for the pairs left over and is the round-robin
 * rearranged. */
int px_topo_a2a_fell_back(const px_topo_a2a_t *s);
/* The rank r sends its block to in a step, and the one it receives from
 * (the same in the pair exchanges of TACS1, TACS2 and the round-robin);
 * -1 when r is idle in that step. */
int px_topo_a2a_dst(const px_topo_a2a_t *s, int step, int r);
int px_topo_a2a_src(const px_topo_a2a_t *s, int step, int r);
/* DCSS: whether a topology-aware schedule is worth it for ranks on these
 * hosts: not when the allocation is sparse (a leaf switch holds on average
 * no more than sparsity_pct percent of its hosts) nor when no two of them
 * share a link just above the leaf level. */
int px_topo_a2a_dcss(px_topo_t *topo, const int *hosts, int n, int sparsity_pct);

/* ---- process placement (place.c) ------------------------------------ */

/* Whether Plexus was built with a graph partitioner (METIS); without one
 * px_topo_place keeps the identity. */
/* More nodes than this are not placed (the node distance matrix and the
 * groups' traffic matrix are dense). */
#define PX_TOPO_PLACE_MAX_NODES 1024
int px_topo_place_available(void);
/* A symmetric graph in CSR form from n vertices and directed edges
 * (src[i] -> dst[i], weight w[i], or 1 when w is NULL): both directions
 * of every edge, repeated edges merged with their weights added, self
 * loops and non-positive weights dropped. The caller frees the arrays. */
px_status_t px_topo_graph_build(int n, int nedges, const int *src, const int *dst, const int *w,
                                int **xadj_p, int **adj_p, int **w_p);
/* Places the n vertices of a graph (CSR, weights w or 1) onto n slots:
 * slot s is on node slot_node[s] (0..nnodes-1) and dist[a * nnodes + b]
 * is what a unit of traffic between nodes a and b costs (0 within a
 * node). The graph is cut into groups the size of each node's slot count
 * (node super-vertices), the groups are laid onto the nodes to minimise
 * the weighted distance between them, and the vertices of a group take
 * its node's slots in order. place[v] is vertex v's slot. Returns 1 when
 * the placement costs less than the identity, 0 when the identity is kept
 * (no partitioner, one node, or nothing better found), -1 out of memory
 * (identity). Deterministic: the same input gives the same placement. */
int px_topo_place(int n, const int *xadj, const int *adj, const int *w, const int *slot_node,
                  int nnodes, const int *dist, int *place);
/* Sum over the edges of weight * dist between the nodes of their ends'
 * slots (place NULL: the identity). */
long long px_topo_place_cost(int n, const int *xadj, const int *adj, const int *w,
                             const int *slot_node, int nnodes, const int *dist, const int *place);

/* ---- the broadcast tree from a delay matrix --------------------------- */

/* The delays among a set of n hosts (fabric host indices, -1 for a host the
 * description lacks): hop counts, or, when the hosts' first links differ
 * in rate, 1/min(link rate along the route) in picoseconds per bit. Rows
 * are computed when first asked for and kept. */
typedef struct px_topo_delay px_topo_delay_t;
px_topo_delay_t *px_topo_delay_new(px_topo_t *topo, const int *hosts, int n);
void px_topo_delay_free(px_topo_delay_t *d);
/* Whether the rates decide (the hosts' links differ in rate). */
int px_topo_delay_mixed(const px_topo_delay_t *d);
/* Rate of member i's first link (0: not given). */
uint64_t px_topo_delay_rate(const px_topo_delay_t *d, int i);
/* Delays from member i to every member, or NULL when out of memory. */
const double *px_topo_delay_row(px_topo_delay_t *d, int i);
/* The members renumbered for a binomial tree rooted at member root:
 * order[v] is the member at tree position v (order[0] = root). The
 * positions are filled in the order of their subtrees' sizes, largest
 * first (between equals breadth first). Each subtree takes its members
 * from its parent's: whole switch clusters where one fits (the smallest
 * that holds it, between equals the farthest from the parent), so that
 * each cluster is entered from outside once where the sizes allow it
 * (greedy: below the top level of an uneven tree sometimes once more);
 * its head is the member in the largest part of it, then the closest to
 * the parent. With hosts at several link rates the positions that
 * forward take the fastest members, the largest subtrees first, and the
 * leaves of the tree the members left over. */
px_status_t px_topo_bcast_order(px_topo_delay_t *d, int root, int *order);

/* ---- the job's view (PX_TOPO) ---------------------------------------- */

/* Collective over the job, at MPI_Init: with PX_TOPO set, rank 0 loads the
 * description and the job shares it through the bootstrap; each rank maps
 * every rank's host name onto the fabric. Without PX_TOPO nothing happens
 * and the job is flat. */
px_status_t px_topo_job_init(const struct px_boot_info *boot, char *err, size_t errlen);
void px_topo_job_finalize(void);
/* The job's fabric, or NULL when flat. */
px_topo_t *px_topo_job(void);
/* The name this process's host is looked up by: the launcher's name for
 * it, else the machine's host name. */
void px_topo_job_hostname(const struct px_boot_info *boot, char *out, size_t outsz);
/* Fabric host of a rank, or -1 (flat, or its host is not in the fabric). */
int px_topo_job_host(int rank);
/* Hops between the hosts of two ranks; -1 when unknown. */
int px_topo_job_hops(int rank_a, int rank_b);

#endif
