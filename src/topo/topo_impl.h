/* Inside the fabric model: a graph of vertices (hosts and switches) whose
 * ports are joined by links, built by the loaders through the functions
 * below, and what is derived from it on demand (levels, planes, route
 * distances, the switch clusters). */
#ifndef PX_TOPO_IMPL_H
#define PX_TOPO_IMPL_H

#include <limits.h>
#include <stdarg.h>
#include "topo.h"

typedef struct px_topo_port {
    char *name;
    int link; /* -1 until cabled */
} px_topo_port_t;

/* One forwarding-table entry: destination (host, rail, path) -> port. */
typedef struct px_topo_fwd {
    int host, rail, path, port;
} px_topo_fwd_t;

typedef struct px_topo_vertex {
    char *name;
    int is_host;
    int index; /* among the hosts, or among the switches */
    int level; /* switches: 0 = leaf, -1 = not given */
    int plane; /* switches: connected component of the switch graph */
    px_topo_port_t *ports;
    int nports, portcap;
    px_topo_fwd_t *fwd; /* switches with a forwarding table; sorted once loaded */
    int nfwd, fwdcap;
} px_topo_vertex_t;

typedef struct px_topo_link {
    int v[2], p[2];
    uint64_t rate;
} px_topo_link_t;

typedef struct px_topo_names {
    char **keys;
    int *vals;
    size_t cap, n;
} px_topo_names_t;

/* Distances toward one destination switch over up/down paths. */
typedef struct px_topo_updn {
    int *down; /* descending only */
    int *any;  /* up then down */
} px_topo_updn_t;

struct px_topo {
    const char *format;
    px_topo_vertex_t *v;
    int nv, vcap;
    int *hosts, nhosts, hcap;
    int *switches, nswitches, scap;
    px_topo_link_t *links;
    int nlinks, lcap;
    px_topo_names_t host_names, switch_names;
    /* derived */
    int ready;    /* levels, planes, up/down order */
    int *sw_rank; /* position of each switch in the up/down order */
    px_topo_updn_t *updn;
    int clustered;
    int depth;
    int *cluster;   /* cluster[level * nhosts + host] */
    int *nclusters; /* per level */
};

px_topo_t *px_topo_new(const char *format);
/* Host or switch of that name, created when new; -1 when out of memory. */
int px_topo_add_host(px_topo_t *t, const char *name);
int px_topo_add_switch(px_topo_t *t, const char *name, int level);
/* Port of a vertex by name, created when new; -1 when out of memory. */
int px_topo_add_port(px_topo_t *t, int vertex, const char *name);
/* Cables two ports; the same cable given again (from its other end) is
 * accepted once. Fails when a port is already cabled elsewhere. */
px_status_t px_topo_connect(px_topo_t *t, int va, int pa, int vb, int pb, uint64_t rate);
px_status_t px_topo_add_fwd(px_topo_t *t, int sw_vertex, int host, int rail, int path, int port);
/* Checks and sorts what the loaders built. */
px_status_t px_topo_finish(px_topo_t *t, char *err, size_t errlen);

int px_topo_names_get(const px_topo_names_t *m, const char *key);
/* Python's natural sort key order ("leaf2" < "leaf10"), as pxfab orders
 * equal-cost neighbours. */
int px_topo_natcmp(const char *a, const char *b);

void px_topo_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

px_status_t px_topo_parse_json(px_topo_t *t, const char *text, size_t len, const char *name,
                               char *err, size_t errlen);
px_status_t px_topo_parse_ibnet(px_topo_t *t, const char *text, const char *name, char *err,
                                size_t errlen);
px_status_t px_topo_parse_slurm(px_topo_t *t, const char *text, const char *name, char *err,
                                size_t errlen);
px_status_t px_topo_parse_model(px_topo_t *t, const char *text, const char *name, char *err,
                                size_t errlen);

/* The vertex at the other end of a port's link (-1: not cabled), and
 * the port there. */
int px_topo_peer(const px_topo_t *t, int v, int port, int *peer_port);
/* Walks the route from host a to host b: the switches (indices) and the
 * links crossed, each up to its max; returns the switch count, or -1. */
int px_topo_walk(px_topo_t *t, int a, int b, int rail, int path, int *sws, int maxs, int *links,
                 int maxl);

/* The switch clusters' agglomerative clustering (cluster.c) over a
 * distance matrix d of n points (n x n, PX_TOPO_FAR without a route;
 * changed in place): cluster[level * n + i] is point i's cluster at a
 * level, 0..depth, nclusters[level] how many. The caller frees both. */
#define PX_TOPO_FAR INT_MAX
px_status_t px_topo_cluster_matrix(int n, int *d, int **cluster_p, int **nclusters_p, int *depth_p);

/* The next line of text (without its newline) into a buffer the caller
 * frees; NULL at the end. */
char *px_topo_next_line(const char **pos);

#endif
