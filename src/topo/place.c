/* Process placement: which slot (process) each vertex of a communication
 * graph takes so that heavy edges stay on one node and the rest cross as
 * few switches as possible. The scheme is the second of the topology
 * dissertation's multi-step mappings: the graph is first cut into groups
 * the size of each node's share of the slots (node super-vertices: a
 * group never splits again), then the groups are laid onto the nodes by
 * the hop distance between the nodes, and the vertices of a group onto
 * its node's slots in order. The cut is METIS's k-way partitioning, its
 * sizes then made exact; without METIS the placement is the identity. */
#include "topo_impl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef PX_HAVE_METIS
#include <metis.h>
#endif

int px_topo_place_available(void)
{
#ifdef PX_HAVE_METIS
    return 1;
#else
    return 0;
#endif
}

typedef struct {
    int u, v, w;
} px_place_edge_t;

static int px_place_edge_cmp(const void *a, const void *b)
{
    const px_place_edge_t *x = a, *y = b;
    return x->u != y->u ? (x->u < y->u ? -1 : 1) : x->v != y->v ? (x->v < y->v ? -1 : 1) : 0;
}

px_status_t px_topo_graph_build(int n, int nedges, const int *src, const int *dst, const int *w,
                                int **xadj_p, int **adj_p, int **w_p)
{
    px_place_edge_t *e = malloc(sizeof(*e) * (size_t)(2 * nedges + 1));
    int *xadj = calloc((size_t)n + 1, sizeof(int));
    if (!e || !xadj) {
        free(e);
        free(xadj);
        return PX_ERR_NO_MEMORY;
    }
    int m = 0;
    for (int i = 0; i < nedges; i++) {
        int a = src[i], b = dst[i], wt = w ? w[i] : 1;
        if (a == b || a < 0 || b < 0 || a >= n || b >= n || wt <= 0)
            continue;
        e[m++] = (px_place_edge_t){a, b, wt};
        e[m++] = (px_place_edge_t){b, a, wt};
    }
    qsort(e, (size_t)m, sizeof(*e), px_place_edge_cmp);
    int k = 0; /* merge repeated edges, adding their weights */
    for (int i = 0; i < m; i++) {
        if (k > 0 && e[k - 1].u == e[i].u && e[k - 1].v == e[i].v) {
            long long s = (long long)e[k - 1].w + e[i].w;
            e[k - 1].w = s > INT_MAX / 4 ? INT_MAX / 4 : (int)s;
        } else
            e[k++] = e[i];
    }
    int *adj = malloc(sizeof(int) * (size_t)(k + 1)), *wt = malloc(sizeof(int) * (size_t)(k + 1));
    if (!adj || !wt) {
        free(e);
        free(xadj);
        free(adj);
        free(wt);
        return PX_ERR_NO_MEMORY;
    }
    for (int i = 0; i < k; i++) {
        xadj[e[i].u + 1]++;
        adj[i] = e[i].v;
        wt[i] = e[i].w;
    }
    for (int v = 0; v < n; v++)
        xadj[v + 1] += xadj[v];
    free(e);
    *xadj_p = xadj;
    *adj_p = adj;
    *w_p = wt;
    return PX_OK;
}

long long px_topo_place_cost(int n, const int *xadj, const int *adj, const int *w,
                             const int *slot_node, int nnodes, const int *dist, const int *place)
{
    long long c = 0;
    for (int v = 0; v < n; v++) {
        int a = slot_node[place ? place[v] : v];
        for (int i = xadj[v]; i < xadj[v + 1]; i++) {
            int b = slot_node[place ? place[adj[i]] : adj[i]];
            c += (long long)(w ? w[i] : 1) * dist[a * nnodes + b];
        }
    }
    return c;
}

#ifdef PX_HAVE_METIS
/* Moves vertices out of groups larger than their target into smaller ones,
 * each time the vertex whose move loses the least edge weight (lowest
 * vertex first among equals), until every group has its size. */
static void px_place_balance(int n, const int *xadj, const int *adj, const int *w, int k,
                             const int *target, int *part)
{
    int *size = calloc((size_t)k, sizeof(int));
    long long *to = calloc((size_t)k, sizeof(long long));
    if (!size || !to) {
        free(size);
        free(to);
        /* still exact, if poorer: fill the groups in vertex order */
        for (int v = 0, p = 0, used = 0; v < n; v++) {
            while (p < k && used == target[p])
                p++, used = 0;
            part[v] = p;
            used++;
        }
        return;
    }
    for (int v = 0; v < n; v++)
        size[part[v]]++;
    for (;;) {
        int bv = -1, bp = -1;
        long long best = LLONG_MIN;
        for (int v = 0; v < n; v++) {
            if (size[part[v]] <= target[part[v]])
                continue;
            memset(to, 0, sizeof(long long) * (size_t)k);
            for (int i = xadj[v]; i < xadj[v + 1]; i++)
                to[part[adj[i]]] += w ? w[i] : 1;
            for (int p = 0; p < k; p++)
                if (size[p] < target[p] && to[p] - to[part[v]] > best) {
                    best = to[p] - to[part[v]];
                    bv = v;
                    bp = p;
                }
        }
        if (bv < 0)
            break;
        size[part[bv]]--;
        size[bp]++;
        part[bv] = bp;
    }
    free(size);
    free(to);
}

/* Swaps two vertices of different groups while that lowers the weight
 * between groups (bounded passes; for small graphs, where METIS's
 * coarsening has little room). */
static void px_place_refine(int n, const int *xadj, const int *adj, const int *w, int k, int *part)
{
    if (n > 1024)
        return;
    long long *conn = calloc((size_t)n * (size_t)k, sizeof(long long));
    if (!conn)
        return;
    for (int v = 0; v < n; v++)
        for (int i = xadj[v]; i < xadj[v + 1]; i++)
            conn[(size_t)v * k + part[adj[i]]] += w ? w[i] : 1;
    for (int pass = 0; pass < 8; pass++) {
        int moved = 0;
        for (int u = 0; u < n; u++)
            for (int v = u + 1; v < n; v++) {
                int pu = part[u], pv = part[v];
                if (pu == pv)
                    continue;
                long long wuv = 0;
                for (int i = xadj[u]; i < xadj[u + 1]; i++)
                    if (adj[i] == v)
                        wuv += w ? w[i] : 1;
                long long gain = conn[(size_t)u * k + pv] - conn[(size_t)u * k + pu] +
                                 conn[(size_t)v * k + pu] - conn[(size_t)v * k + pv] - 2 * wuv;
                if (gain <= 0)
                    continue;
                part[u] = pv;
                part[v] = pu;
                for (int i = xadj[u]; i < xadj[u + 1]; i++) {
                    conn[(size_t)adj[i] * k + pu] -= w ? w[i] : 1;
                    conn[(size_t)adj[i] * k + pv] += w ? w[i] : 1;
                }
                for (int i = xadj[v]; i < xadj[v + 1]; i++) {
                    conn[(size_t)adj[i] * k + pv] -= w ? w[i] : 1;
                    conn[(size_t)adj[i] * k + pu] += w ? w[i] : 1;
                }
                moved = 1;
            }
        if (!moved)
            break;
    }
    free(conn);
}

/* Cuts the graph into k groups of exactly target[p] vertices. */
static int px_place_partition(int n, const int *xadj, const int *adj, const int *w, int k,
                              const int *target, int *part)
{
    if (k == 1) {
        memset(part, 0, sizeof(int) * (size_t)n);
        return 0;
    }
    idx_t nv = n, ncon = 1, np = k, objval = 0, options[METIS_NOPTIONS];
    idx_t *ix = malloc(sizeof(idx_t) * (size_t)(n + 1)), *ia = NULL, *iw = NULL, *ip = NULL;
    real_t *tp = malloc(sizeof(real_t) * (size_t)k), ub = 1.001f;
    int ne = xadj[n], rc = -1;
    ia = malloc(sizeof(idx_t) * (size_t)(ne + 1));
    iw = malloc(sizeof(idx_t) * (size_t)(ne + 1));
    ip = malloc(sizeof(idx_t) * (size_t)n);
    if (!ix || !ia || !iw || !ip || !tp)
        goto out;
    /* METIS adds weights up in its own integers: large ones (bytes of a
     * profile) are scaled to at most 2^16, keeping every edge at least 1 */
    long long wmax = 1;
    for (int i = 0; w && i < ne; i++)
        wmax = w[i] > wmax ? w[i] : wmax;
    for (int v = 0; v <= n; v++)
        ix[v] = xadj[v];
    for (int i = 0; i < ne; i++) {
        long long x = w ? w[i] : 1;
        if (wmax > 65536)
            x = x * 65536 / wmax > 0 ? x * 65536 / wmax : 1;
        ia[i] = adj[i];
        iw[i] = (idx_t)x;
    }
    for (int p = 0; p < k; p++)
        tp[p] = (real_t)target[p] / (real_t)n;
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_NUMBERING] = 0;
    options[METIS_OPTION_SEED] = 42; /* the same cut wherever it is computed */
    options[METIS_OPTION_NCUTS] = 4;
    int mrc = k == n ? METIS_OK
                     : METIS_PartGraphKway(&nv, &ncon, ix, ia, NULL, NULL, iw, &np, tp, &ub,
                                           options, &objval, ip);
    if (mrc != METIS_OK)
        goto out;
    for (int v = 0; v < n; v++)
        part[v] = k == n ? v : (int)ip[v];
    px_place_balance(n, xadj, adj, w, k, target, part);
    px_place_refine(n, xadj, adj, w, k, part);
    rc = 0;
out:
    free(ix);
    free(ia);
    free(iw);
    free(ip);
    free(tp);
    return rc;
}

/* Weighted distance of laying group p on node node_of[p] for all p. */
static long long px_place_qcost(int k, const long long *q, const int *dist, const int *node_of)
{
    long long c = 0;
    for (int p = 0; p < k; p++)
        for (int r = 0; r < k; r++)
            if (q[p * k + r])
                c += q[p * k + r] * dist[node_of[p] * k + node_of[r]];
    return c;
}

/* Every assignment of groups onto nodes of their size, for few nodes. */
static void px_place_exhaust(int k, const long long *q, const int *dist, const int *size, int p,
                             int *cur, int *used, int *best, long long *bestc)
{
    if (p == k) {
        long long c = px_place_qcost(k, q, dist, cur);
        if (c < *bestc) {
            *bestc = c;
            memcpy(best, cur, sizeof(int) * (size_t)k);
        }
        return;
    }
    for (int nd = 0; nd < k; nd++)
        if (!used[nd] && size[nd] == size[p]) {
            used[nd] = 1;
            cur[p] = nd;
            px_place_exhaust(k, q, dist, size, p + 1, cur, used, best, bestc);
            used[nd] = 0;
        }
}

/* Lays the groups (group p sized for node p) onto the nodes. */
static void px_place_groups(int k, const long long *q, const int *dist, const int *size,
                            int *node_of)
{
    for (int p = 0; p < k; p++)
        node_of[p] = p;
    if (k <= 8) {
        int cur[8], used[8] = {0}, best[8];
        long long bestc = px_place_qcost(k, q, dist, node_of);
        memcpy(best, node_of, sizeof(int) * (size_t)k);
        px_place_exhaust(k, q, dist, size, 0, cur, used, best, &bestc);
        memcpy(node_of, best, sizeof(int) * (size_t)k);
        return;
    }
    /* pairwise swaps of same-sized nodes while the cost falls; a swap
     * changes only the terms of its two groups */
    for (int pass = 0, moved = 1; moved && pass < 16; pass++) {
        moved = 0;
        for (int a = 0; a < k; a++)
            for (int b = a + 1; b < k; b++) {
                int na = node_of[a], nb = node_of[b];
                if (size[na] != size[nb])
                    continue;
                long long d = 0;
                for (int r = 0; r < k; r++) {
                    int nr = r == a ? nb : r == b ? na : node_of[r];
                    int or = node_of[r];
                    d += q[a * k + r] * (dist[nb * k + nr] - dist[na * k + or ]) +
                         q[b * k + r] * (dist[na * k + nr] - dist[nb * k + or ]);
                    if (r != a && r != b)
                        d += q[r * k + a] * (dist[nr * k + nb] - dist[or * k + na]) +
                             q[r * k + b] * (dist[nr * k + na] - dist[or * k + nb]);
                }
                if (d < 0) {
                    node_of[a] = nb;
                    node_of[b] = na;
                    moved = 1;
                }
            }
    }
}

#endif

int px_topo_place(int n, const int *xadj, const int *adj, const int *w, const int *slot_node,
                  int nnodes, const int *dist, int *place)
{
    for (int v = 0; v < n; v++)
        place[v] = v;
    if (n < 2 || nnodes < 2 || nnodes > PX_TOPO_PLACE_MAX_NODES || !px_topo_place_available())
        return 0;
#ifdef PX_HAVE_METIS
    int k = nnodes, rc = -1;
    int *size = calloc((size_t)k, sizeof(int)), *part = malloc(sizeof(int) * (size_t)n);
    int *node_of = malloc(sizeof(int) * (size_t)k), *next = calloc((size_t)k, sizeof(int));
    int *cand = malloc(sizeof(int) * (size_t)n);
    long long *q = calloc((size_t)k * (size_t)k, sizeof(long long));
    if (!size || !part || !node_of || !next || !cand || !q)
        goto out;
    for (int s = 0; s < n; s++)
        size[slot_node[s]]++;
    if (px_place_partition(n, xadj, adj, w, k, size, part) < 0)
        goto out;
    for (int v = 0; v < n; v++)
        for (int i = xadj[v]; i < xadj[v + 1]; i++)
            q[part[v] * k + part[adj[i]]] += w ? w[i] : 1;
    px_place_groups(k, q, dist, size, node_of);
    /* vertices of a group onto the slots of its node, both in order */
    for (int v = 0; v < n; v++) {
        int nd = node_of[part[v]], s = next[nd];
        while (s < n && slot_node[s] != nd)
            s++;
        cand[v] = s;
        next[nd] = s + 1;
    }
    rc = 0;
    if (px_topo_place_cost(n, xadj, adj, w, slot_node, nnodes, dist, cand) <
        px_topo_place_cost(n, xadj, adj, w, slot_node, nnodes, dist, NULL)) {
        memcpy(place, cand, sizeof(int) * (size_t)n);
        rc = 1;
    }
out:
    free(size);
    free(part);
    free(node_of);
    free(next);
    free(cand);
    free(q);
    return rc;
#else
    (void)xadj, (void)adj, (void)w, (void)slot_node, (void)dist;
    return 0;
#endif
}
