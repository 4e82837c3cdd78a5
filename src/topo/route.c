/* Routes between hosts: from a switch's forwarding table when the
 * description gives one, otherwise computed as pxfab routes its fabrics
 * (and as OpenSM's min-hop and up/down engines would on a tree):
 * destination-based, along a shortest path that never turns up again after
 * going down, and among equal candidates the one at (destination host +
 * path index) modulo their number, in the natural order of the neighbours'
 * names, so that consecutive destinations and LMC paths leave over
 * consecutive spines. */
#include "topo_impl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PX_TOPO_INF INT_MAX

int px_topo_peer(const px_topo_t *t, int v, int port, int *peer_port)
{
    int l = t->v[v].ports[port].link;
    if (l < 0)
        return -1;
    const px_topo_link_t *k = &t->links[l];
    int side = k->v[0] == v && k->p[0] == port ? 1 : 0;
    if (peer_port)
        *peer_port = k->p[side];
    return k->v[side];
}

static const px_topo_t *px_topo_sort_ctx;

static int px_topo_rank_cmp(const void *a, const void *b)
{
    const px_topo_vertex_t *x = &px_topo_sort_ctx->v[*(const int *)a];
    const px_topo_vertex_t *y = &px_topo_sort_ctx->v[*(const int *)b];
    if (x->level != y->level)
        return x->level < y->level ? -1 : 1;
    return x->index > y->index ? -1 : x->index < y->index; /* lower index ranks higher */
}

/* Levels (as pxfab's export: 0 for switches with hosts, one more per hop
 * away; given levels win), planes, and the up/down order: a link leads up
 * to the switch of higher level, or of lower index between equals. */
static px_status_t px_topo_prepare(px_topo_t *t)
{
    if (t->ready)
        return PX_OK;
    int ns = t->nswitches;
    int *level = malloc(sizeof(int) * (size_t)(ns ? ns : 1));
    int *queue = malloc(sizeof(int) * (size_t)(ns ? ns : 1));
    int *order = malloc(sizeof(int) * (size_t)(ns ? ns : 1));
    free(t->sw_rank);
    t->sw_rank = malloc(sizeof(int) * (size_t)(ns ? ns : 1));
    if (!level || !queue || !order || !t->sw_rank) {
        free(level);
        free(queue);
        free(order);
        return PX_ERR_NO_MEMORY;
    }
    int qn = 0;
    for (int s = 0; s < ns; s++) {
        const px_topo_vertex_t *x = &t->v[t->switches[s]];
        level[s] = -1;
        for (int p = 0; p < x->nports; p++) {
            int o = px_topo_peer(t, t->switches[s], p, NULL);
            if (o >= 0 && t->v[o].is_host) {
                level[s] = 0;
                queue[qn++] = s;
                break;
            }
        }
    }
    for (int qi = 0; qi < qn; qi++) {
        int s = queue[qi];
        const px_topo_vertex_t *x = &t->v[t->switches[s]];
        for (int p = 0; p < x->nports; p++) {
            int o = px_topo_peer(t, t->switches[s], p, NULL);
            if (o >= 0 && !t->v[o].is_host && level[t->v[o].index] < 0) {
                level[t->v[o].index] = level[s] + 1;
                queue[qn++] = t->v[o].index;
            }
        }
    }
    for (int s = 0; s < ns; s++) {
        px_topo_vertex_t *x = &t->v[t->switches[s]];
        if (x->level < 0)
            x->level = level[s] < 0 ? 0 : level[s];
        x->plane = -1;
    }
    for (int s = 0; s < ns; s++) {
        if (t->v[t->switches[s]].plane >= 0)
            continue;
        t->v[t->switches[s]].plane = s;
        qn = 0;
        queue[qn++] = s;
        for (int qi = 0; qi < qn; qi++) {
            int v = t->switches[queue[qi]];
            for (int p = 0; p < t->v[v].nports; p++) {
                int o = px_topo_peer(t, v, p, NULL);
                if (o >= 0 && !t->v[o].is_host && t->v[o].plane < 0) {
                    t->v[o].plane = s;
                    queue[qn++] = t->v[o].index;
                }
            }
        }
    }
    for (int s = 0; s < ns; s++)
        order[s] = t->switches[s];
    px_topo_sort_ctx = t;
    qsort(order, (size_t)ns, sizeof(int), px_topo_rank_cmp);
    for (int i = 0; i < ns; i++)
        t->sw_rank[t->v[order[i]].index] = i;
    free(level);
    free(queue);
    free(order);
    if (!t->updn)
        t->updn = calloc((size_t)(ns ? ns : 1), sizeof(*t->updn));
    t->ready = t->updn != NULL;
    return t->ready ? PX_OK : PX_ERR_NO_MEMORY;
}

static int px_topo_up(const px_topo_t *t, int from_sw, int to_sw)
{
    return t->sw_rank[to_sw] > t->sw_rank[from_sw];
}

/* Distances to destination switch d: descending only, and up-then-down. */
static px_topo_updn_t *px_topo_updn(px_topo_t *t, int d)
{
    px_topo_updn_t *u = &t->updn[d];
    if (u->any)
        return u;
    int ns = t->nswitches;
    int *down = malloc(sizeof(int) * (size_t)ns), *any = malloc(sizeof(int) * (size_t)ns);
    int *queue = malloc(sizeof(int) * (size_t)ns), *byrank = malloc(sizeof(int) * (size_t)ns);
    if (!down || !any || !queue || !byrank) {
        free(down);
        free(any);
        free(queue);
        free(byrank);
        return NULL;
    }
    for (int s = 0; s < ns; s++)
        down[s] = PX_TOPO_INF;
    down[d] = 0;
    int qn = 0;
    queue[qn++] = d;
    for (int qi = 0; qi < qn; qi++) {
        int s = queue[qi], v = t->switches[s];
        for (int p = 0; p < t->v[v].nports; p++) {
            int o = px_topo_peer(t, v, p, NULL);
            if (o < 0 || t->v[o].is_host)
                continue;
            int os = t->v[o].index;
            if (down[os] == PX_TOPO_INF && px_topo_up(t, s, os)) {
                down[os] = down[s] + 1;
                queue[qn++] = os;
            }
        }
    }
    for (int s = 0; s < ns; s++)
        byrank[t->sw_rank[s]] = s;
    for (int i = ns - 1; i >= 0; i--) {
        int s = byrank[i], v = t->switches[s];
        any[s] = down[s];
        for (int p = 0; p < t->v[v].nports; p++) {
            int o = px_topo_peer(t, v, p, NULL);
            if (o < 0 || t->v[o].is_host || !px_topo_up(t, s, t->v[o].index))
                continue;
            int a = any[t->v[o].index];
            if (a != PX_TOPO_INF && a + 1 < any[s])
                any[s] = a + 1;
        }
    }
    free(queue);
    free(byrank);
    u->down = down;
    u->any = any;
    return u;
}

/* The port of a host that reaches the plane of the destination port. */
static int px_topo_host_port(const px_topo_t *t, int hv, int rail, int plane)
{
    const px_topo_vertex_t *x = &t->v[hv];
    if (rail < x->nports) {
        int o = px_topo_peer(t, hv, rail, NULL);
        if (o >= 0 && !t->v[o].is_host && t->v[o].plane == plane)
            return rail;
    }
    for (int p = 0; p < x->nports; p++) {
        int o = px_topo_peer(t, hv, p, NULL);
        if (o >= 0 && !t->v[o].is_host && t->v[o].plane == plane)
            return p;
    }
    return -1;
}

static const px_topo_t *px_topo_cand_ctx;
static int px_topo_cand_sw;

static int px_topo_cand_cmp(const void *a, const void *b)
{
    int pa = *(const int *)a, pb = *(const int *)b;
    int va = px_topo_peer(px_topo_cand_ctx, px_topo_cand_sw, pa, NULL);
    int vb = px_topo_peer(px_topo_cand_ctx, px_topo_cand_sw, pb, NULL);
    int c = px_topo_natcmp(px_topo_cand_ctx->v[va].name, px_topo_cand_ctx->v[vb].name);
    return c ? c : (pa > pb) - (pa < pb); /* a stable sort, as Python's */
}

/* The port switch vertex sw forwards (host dst, rail, path) to, or -1. */
static int px_topo_next_port(px_topo_t *t, int sw, int dst, int rail, int path, int dsw, int dport)
{
    const px_topo_vertex_t *x = &t->v[sw];
    if (x->nfwd) {
        px_topo_fwd_t key = {dst, rail, path, 0};
        int lo = 0, hi = x->nfwd - 1;
        while (lo <= hi) {
            int mid = (lo + hi) / 2;
            const px_topo_fwd_t *f = &x->fwd[mid];
            int c = f->host != key.host   ? (f->host < key.host ? -1 : 1)
                    : f->rail != key.rail ? (f->rail < key.rail ? -1 : 1)
                    : f->path != key.path ? (f->path < key.path ? -1 : 1)
                                          : 0;
            if (!c)
                return f->port;
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid - 1;
        }
        return -1;
    }
    if (sw == dsw)
        return dport;
    px_topo_updn_t *u = px_topo_updn(t, t->v[dsw].index);
    if (!u)
        return -1;
    int s = x->index, descend = u->down[s] != PX_TOPO_INF;
    int want = descend ? u->down[s] - 1 : u->any[s] - 1;
    if (!descend && u->any[s] == PX_TOPO_INF)
        return -1;
    int *cand = malloc(sizeof(int) * (size_t)(x->nports ? x->nports : 1)), nc = 0;
    if (!cand)
        return -1;
    for (int p = 0; p < x->nports; p++) {
        int o = px_topo_peer(t, sw, p, NULL);
        if (o < 0 || t->v[o].is_host)
            continue;
        int os = t->v[o].index;
        if (descend ? (px_topo_up(t, os, s) && u->down[os] == want)
                    : (px_topo_up(t, s, os) && u->any[os] == want))
            cand[nc++] = p;
    }
    int port = -1;
    if (nc) {
        px_topo_cand_ctx = t;
        px_topo_cand_sw = sw;
        qsort(cand, (size_t)nc, sizeof(int), px_topo_cand_cmp);
        port = cand[(dst + path) % nc];
    }
    free(cand);
    return port;
}

int px_topo_walk(px_topo_t *t, int a, int b, int rail, int path, int *sws, int maxs, int *links,
                 int maxl)
{
    if (a < 0 || b < 0 || a >= t->nhosts || b >= t->nhosts || rail < 0 || path < 0)
        return -1;
    if (a == b)
        return 0;
    if (px_topo_prepare(t) != PX_OK)
        return -1;
    int av = t->hosts[a], bv = t->hosts[b];
    if (rail >= t->v[bv].nports)
        return -1;
    int dport_b;
    int dsw = px_topo_peer(t, bv, rail, &dport_b);
    if (dsw < 0 || t->v[dsw].is_host)
        return -1;
    int sport = px_topo_host_port(t, av, rail, t->v[dsw].plane);
    if (sport < 0)
        return -1;
    int cur = px_topo_peer(t, av, sport, NULL), nsw = 0, nl = 0;
    if (links && maxl > 0)
        links[nl] = t->v[av].ports[sport].link;
    nl++;
    for (;;) {
        if (nsw > t->nswitches)
            return -1; /* a loop in the forwarding tables */
        if (sws && nsw < maxs)
            sws[nsw] = t->v[cur].index;
        nsw++;
        int port = px_topo_next_port(t, cur, b, rail, path, dsw, dport_b);
        if (port < 0 || port >= t->v[cur].nports)
            return -1;
        int nxt = px_topo_peer(t, cur, port, NULL);
        if (nxt < 0)
            return -1;
        if (links && nl < maxl)
            links[nl] = t->v[cur].ports[port].link;
        nl++;
        if (nxt == bv)
            return nsw;
        if (t->v[nxt].is_host)
            return -1;
        cur = nxt;
    }
}

int px_topo_hops_rail(px_topo_t *t, int a, int b, int rail, int path)
{
    return px_topo_walk(t, a, b, rail, path, NULL, 0, NULL, 0);
}

int px_topo_path(px_topo_t *t, int a, int b, int rail, int path, int *switches, int max)
{
    return px_topo_walk(t, a, b, rail, path, switches, max, NULL, 0);
}

int px_topo_path_links(px_topo_t *t, int a, int b, int rail, int path, int *links, int max)
{
    int n = px_topo_walk(t, a, b, rail, path, NULL, 0, links, max);
    return n <= 0 ? n : n + 1;
}

int px_topo_host_leaf(const px_topo_t *t, int h)
{
    if (h < 0 || h >= t->nhosts)
        return -1;
    int hv = t->hosts[h];
    for (int p = 0; p < t->v[hv].nports; p++) {
        int o = px_topo_peer(t, hv, p, NULL);
        if (o >= 0 && !t->v[o].is_host)
            return t->v[o].index;
    }
    return -1;
}
