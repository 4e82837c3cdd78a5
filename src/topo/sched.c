/* Topology-aware alltoall schedules (the dissertation's TACS1 and TACS2)
 * and the rule that decides whether to use one (DCSS).
 *
 * The schedule is built over hosts ("nodes"), then expanded to ranks. At
 * node level a step is a matching: each host exchanges with at most one
 * other. Greedy, farthest partners first: for each hop class, from the
 * farthest down, every step of the normal length (the H-1 steps of a
 * round-robin over H hosts, H when H is odd) is offered to every idle host,
 * which takes its farthest remaining partner that is idle in that step and
 * whose routes (both directions) put no second flow on any link between
 * switches; then, in the same step, one that puts at most `conflicts` more
 * (budget c: at most c+1 flows per link and direction). Farther pairs thus
 * spread over all the steps before nearer ones fill the gaps.
 *
 * TACS1 then adds steps, each filled the same way, until every pair has
 * exchanged: the budget holds in every step, at the price of more steps.
 * (When the round-robin, rearranged as below, keeps the budget, TACS1 is
 * that: no longer than it must be.)
 * TACS2 stays within the normal length: the pairs left over are put into
 * steps where both hosts are idle, swapping the steps of an alternating
 * chain of pairs where they have none in common (a Kempe chain, as in edge
 * colouring); those pairs may exceed the budget. When a pair cannot be
 * placed so, the budget is raised by one and the steps built again, as long
 * as the result puts fewer flows on its busiest link than the round-robin
 * does. Otherwise TACS2 is the round-robin, rearranged: pairs of steps
 * swap alternating chains of their pairs where that lowers the flows over
 * the budget in both without raising the busiest link (a bounded number of
 * tries).
 *
 * Expansion to ranks, with k the most ranks on one host: first the
 * exchanges inside each host (a round-robin over local indices: k-1 steps,
 * k when k is odd), then each node step becomes k steps; in the t-th, local
 * rank i of the lower host of a pair exchanges with local rank (i+t) mod k
 * of the other. Ranks on hosts the fabric lacks are hosts of their own,
 * without links. */
#include "topo_impl.h"

#include <stdlib.h>
#include <string.h>

struct px_topo_a2a {
    px_topo_a2a_kind_t kind;
    int n;       /* ranks */
    int nsteps;  /* rank-level steps */
    int nnodes;  /* hosts (and ranks on unknown hosts) */
    int ppn;     /* most ranks on one host */
    int intra;   /* rank-level steps inside the hosts, first */
    int nnsteps; /* node-level steps */
    int fallback;
    int *node_of, *local_of; /* per rank */
    int *rank_at;            /* node * ppn + local -> rank, or -1 */
    int *npart;              /* node step * nnodes + node -> partner node, or -1 */
};

const char *px_topo_a2a_name(px_topo_a2a_kind_t kind)
{
    switch (kind) {
    case PX_TOPO_A2A_PAIRWISE:
        return "pairwise";
    case PX_TOPO_A2A_TACS1:
        return "tacs1";
    case PX_TOPO_A2A_TACS2:
        return "tacs2";
    case PX_TOPO_A2A_ROUNDROBIN:
        return "roundrobin";
    }
    return "?";
}

/* Round-robin (circle method) over m members: the partner of i in round
 * r (0 <= r < rounds), -1 when idle. */
static int px_rr_rounds(int m) { return m < 2 ? 0 : (m % 2 ? m : m - 1); }

static int px_rr_partner(int m, int r, int i)
{
    int M = m % 2 ? m + 1 : m, p; /* odd m: a dummy member M-1, its partner idles */
    if (i == M - 1)
        p = r;
    else if (i == r)
        p = M - 1;
    else
        p = ((2 * r - i) % (M - 1) + (M - 1)) % (M - 1);
    return p >= m ? -1 : p;
}

/* ---- the node-level greedy ------------------------------------------- */

typedef struct px_a2a_gen {
    int H;          /* nodes */
    int L;          /* directed links between switches */
    int *hops;      /* H*H */
    int *roff, *rl; /* route of (a,b): rl[roff[a*H+b] .. roff[a*H+b+1]) */
    unsigned char *done;
    int *cand, *head; /* per node: the others by hops (desc), then by (b-a) mod H */
    int *rem;         /* pairs left per node */
    int *near;        /* per node: the first of its candidates whose routes cross no link */
    int *eoff, *edge; /* per node: the distinct first links of its routes out (edge[eoff[2a]..
                       * eoff[2a+1])) and last links of the routes in (..eoff[2a+2]) */
    long left;        /* pairs left */
    int nsteps, cap;
    int *part;            /* step * H */
    unsigned short *load; /* step * L */
} px_a2a_gen_t;

static int px_gen_grow(px_a2a_gen_t *g, int steps)
{
    if (steps <= g->cap)
        return 0;
    int cap = g->cap ? g->cap : 16;
    while (cap < steps)
        cap *= 2;
    int *part = realloc(g->part, sizeof(int) * (size_t)cap * (size_t)g->H);
    if (!part)
        return -1;
    g->part = part;
    unsigned short *load =
        realloc(g->load, sizeof(short) * (size_t)cap * (size_t)(g->L ? g->L : 1));
    if (!load)
        return -1;
    g->load = load;
    for (int s = g->cap; s < cap; s++) {
        for (int a = 0; a < g->H; a++)
            g->part[(size_t)s * g->H + a] = -1;
        memset(g->load + (size_t)s * (size_t)g->L, 0, sizeof(short) * (size_t)g->L);
    }
    g->cap = cap;
    return 0;
}

/* Whether a<->b fits step s with at most `cap` flows per link. */
static int px_gen_fits(const px_a2a_gen_t *g, int s, int a, int b, int cap)
{
    const unsigned short *ld = g->load + (size_t)s * (size_t)g->L;
    for (int dir = 0; dir < 2; dir++) {
        size_t pr = dir ? (size_t)b * g->H + a : (size_t)a * g->H + b;
        for (int i = g->roff[pr]; i < g->roff[pr + 1]; i++)
            if (ld[g->rl[i]] + 1 > cap)
                return 0;
    }
    return 1;
}

static void px_gen_load(px_a2a_gen_t *g, int s, int a, int b, int delta);

static void px_gen_take(px_a2a_gen_t *g, int s, int a, int b)
{
    px_gen_load(g, s, a, b, 1);
    g->part[(size_t)s * g->H + a] = b;
    g->part[(size_t)s * g->H + b] = a;
    g->done[(size_t)a * g->H + b] = g->done[(size_t)b * g->H + a] = 1;
    g->rem[a]--;
    g->rem[b]--;
    g->left--;
}

/* Idle node a takes, in step s, its farthest remaining partner at least
 * minhops away that is idle there and fits the cap. */
/* Whether every link by which a's routes leave its leaf, or every one by
 * which they reach it, is full in step s: then a can only take a partner
 * whose route crosses no link. */
static int px_gen_walled(const px_a2a_gen_t *g, int s, int a, int cap)
{
    const unsigned short *ld = g->load + (size_t)s * (size_t)g->L;
    for (int side = 0; side < 2; side++) {
        int lo = g->eoff[2 * a + side], hi = g->eoff[2 * a + side + 1], full = hi > lo;
        for (int i = lo; i < hi && full; i++)
            full = ld[g->edge[i]] >= cap;
        if (full)
            return 1;
    }
    return 0;
}

static int px_gen_try(px_a2a_gen_t *g, int s, int a, int minhops, int cap)
{
    int H = g->H, *c = g->cand + (size_t)a * (H - 1);
    const int *part = g->part + (size_t)s * H;
    while (g->head[a] < H - 1 && g->done[(size_t)a * H + c[g->head[a]]])
        g->head[a]++;
    int from = g->head[a];
    if (px_gen_walled(g, s, a, cap)) {
        if (g->near[a] >= H - 1 || g->hops[(size_t)a * H + c[g->near[a]]] < minhops)
            return 0;
        from = from > g->near[a] ? from : g->near[a];
    }
    /* the round-robin's partner first, when far enough: where nothing
     * conflicts, the schedule stays the round-robin and its length */
    int rr = px_rr_partner(H, s % px_rr_rounds(H), a);
    if (rr >= 0 && part[rr] < 0 && !g->done[(size_t)a * H + rr] &&
        g->hops[(size_t)a * H + rr] >= minhops && px_gen_fits(g, s, a, rr, cap)) {
        px_gen_take(g, s, a, rr);
        return 1;
    }
    for (int i = from; i < H - 1; i++) {
        int b = c[i];
        if (g->hops[(size_t)a * H + b] < minhops)
            break;
        if (part[b] >= 0 || g->done[(size_t)a * H + b] || !px_gen_fits(g, s, a, b, cap))
            continue;
        px_gen_take(g, s, a, b);
        return 1;
    }
    return 0;
}

/* Every idle node of step s that has pairs left tries, without conflicts
 * and then within the budget. */
static void px_gen_fill(px_a2a_gen_t *g, int s, int minhops, int budget)
{
    for (int pass = 0; pass < 2; pass++) {
        int cap = pass ? budget + 1 : 1;
        if (pass && cap == 1)
            break;
        for (int k = 0; k < g->H && g->left; k++) {
            int a = (k + s) % g->H;
            if (g->rem[a] && g->part[(size_t)s * g->H + a] < 0)
                px_gen_try(g, s, a, minhops, cap);
        }
    }
}

static const px_a2a_gen_t *px_gen_sort_ctx;
static int px_gen_sort_a;

static int px_gen_cmp(const void *x, const void *y)
{
    const px_a2a_gen_t *g = px_gen_sort_ctx;
    int a = px_gen_sort_a, b1 = *(const int *)x, b2 = *(const int *)y;
    int h1 = g->hops[(size_t)a * g->H + b1], h2 = g->hops[(size_t)a * g->H + b2];
    if (h1 != h2)
        return h1 > h2 ? -1 : 1;
    int d1 = (b1 - a + g->H) % g->H, d2 = (b2 - a + g->H) % g->H;
    return d1 < d2 ? -1 : d1 > d2;
}

static void px_gen_free(px_a2a_gen_t *g)
{
    free(g->hops);
    free(g->roff);
    free(g->rl);
    free(g->done);
    free(g->cand);
    free(g->head);
    free(g->rem);
    free(g->near);
    free(g->eoff);
    free(g->edge);
    free(g->part);
    free(g->load);
}

/* Hops and routes between the nodes' hosts (host -1: no links, 1 hop). */
static px_status_t px_gen_routes(px_a2a_gen_t *g, px_topo_t *t, const int *nhost)
{
    int H = g->H, nsw = t ? t->nswitches : 0, nl = t ? t->nlinks : 0;
    int *lid = malloc(sizeof(int) * (size_t)(nl ? nl : 1));
    int *sws = malloc(sizeof(int) * (size_t)(nsw + 1)), *lk = malloc(sizeof(int) * (nsw + 2));
    size_t cap = (size_t)H * H * 4 + 16, n = 0;
    size_t *via = malloc(sizeof(size_t) * (size_t)(nsw ? nsw : 1) * (size_t)H);
    g->hops = malloc(sizeof(int) * (size_t)H * H);
    g->roff = malloc(sizeof(int) * ((size_t)H * H + 1));
    g->rl = malloc(sizeof(int) * cap);
    if (!lid || !sws || !lk || !via || !g->hops || !g->roff || !g->rl) {
        free(via);
        free(lid);
        free(sws);
        free(lk);
        return PX_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < (size_t)nsw * H; i++)
        via[i] = (size_t)-1;
    g->L = 0;
    for (int l = 0; l < nl; l++) /* links between two switches, two directions each */
        lid[l] =
            !t->v[t->links[l].v[0]].is_host && !t->v[t->links[l].v[1]].is_host ? 2 * g->L++ : -1;
    g->L *= 2;
    px_status_t st = PX_OK;
    for (int a = 0; a < H && st == PX_OK; a++)
        for (int b = 0; b < H; b++) {
            size_t pr = (size_t)a * H + b;
            g->roff[pr] = (int)n;
            g->hops[pr] = a == b ? 0 : 1;
            if (a == b || nhost[a] < 0 || nhost[b] < 0)
                continue;
            /* routes go by destination: from one leaf to b, every host of
             * the leaf takes the same links */
            int leaf = px_topo_host_leaf(t, nhost[a]);
            size_t *seen = leaf >= 0 ? &via[(size_t)leaf * H + b] : NULL;
            if (seen && *seen != (size_t)-1) {
                int lo = g->roff[*seen], hi = g->roff[*seen + 1];
                g->hops[pr] = g->hops[*seen];
                if (n + (size_t)(hi - lo) > cap) {
                    int *rl = realloc(g->rl, sizeof(int) * (cap *= 2));
                    if (!rl) {
                        st = PX_ERR_NO_MEMORY;
                        break;
                    }
                    g->rl = rl;
                }
                memcpy(g->rl + n, g->rl + lo, sizeof(int) * (size_t)(hi - lo));
                n += (size_t)(hi - lo);
                continue;
            }
            if (seen)
                *seen = pr;
            int k = px_topo_walk(t, nhost[a], nhost[b], 0, 0, sws, nsw + 1, lk, nsw + 2);
            if (k < 0)
                continue;
            g->hops[pr] = k;
            if (n + (size_t)k + 1 > cap) {
                int *rl = realloc(g->rl, sizeof(int) * (cap *= 2));
                if (!rl) {
                    st = PX_ERR_NO_MEMORY;
                    break;
                }
                g->rl = rl;
            }
            for (int s = 1; s < k && s < nsw + 1; s++) {
                const px_topo_link_t *L = &t->links[lk[s]];
                if (lid[lk[s]] < 0)
                    continue;
                /* direction: from the link's first end to its second, or back */
                g->rl[n++] = lid[lk[s]] + (L->v[0] == t->switches[sws[s - 1]] ? 0 : 1);
            }
        }
    g->roff[(size_t)H * H] = (int)n;
    free(via);
    free(lid);
    free(sws);
    free(lk);
    return st;
}

/* Adds (delta 1) or removes (-1) the flows of a<->b in step s. */
static void px_gen_load(px_a2a_gen_t *g, int s, int a, int b, int delta)
{
    unsigned short *ld = g->load + (size_t)s * (size_t)g->L;
    for (int dir = 0; dir < 2; dir++) {
        size_t pr = dir ? (size_t)b * g->H + a : (size_t)a * g->H + b;
        for (int i = g->roff[pr]; i < g->roff[pr + 1]; i++)
            ld[g->rl[i]] = (unsigned short)(ld[g->rl[i]] + delta);
    }
}

static int px_gen_peak(const px_a2a_gen_t *g, int s, int a, int b)
{
    const unsigned short *ld = g->load + (size_t)s * (size_t)g->L;
    int peak = 0;
    for (int dir = 0; dir < 2; dir++) {
        size_t pr = dir ? (size_t)b * g->H + a : (size_t)a * g->H + b;
        for (int i = g->roff[pr]; i < g->roff[pr + 1]; i++)
            peak = ld[g->rl[i]] > peak ? ld[g->rl[i]] : peak;
    }
    return peak;
}

static void px_gen_set(px_a2a_gen_t *g, int s, int a, int b)
{
    g->part[(size_t)s * g->H + a] = b;
    g->part[(size_t)s * g->H + b] = a;
    px_gen_load(g, s, a, b, 1);
}

/* Moves the len pairs of chain (v, w, step) from step al to be and back. */
static void px_gen_swap(px_a2a_gen_t *g, const int *chain, int len, int al, int be)
{
    int H = g->H;
    for (int i = 0; i < len; i++) {
        int u = chain[3 * i], z = chain[3 * i + 1], c = chain[3 * i + 2];
        g->part[(size_t)c * H + u] = g->part[(size_t)c * H + z] = -1;
        px_gen_load(g, c, u, z, -1);
    }
    for (int i = 0; i < len; i++)
        px_gen_set(g, chain[3 * i + 2] == al ? be : al, chain[3 * i], chain[3 * i + 1]);
}

/* Follows the pairs alternately in steps al and be from v, starting in
 * col, into chain after its *len entries; 1 when it comes to `stop`, 0
 * when it ends. */
static int px_gen_chain(const px_a2a_gen_t *g, int *chain, int *len, int v, int col, int al, int be,
                        int stop)
{
    int H = g->H, w;
    while ((w = g->part[(size_t)col * H + v]) >= 0 && *len <= 2 * H) {
        chain[3 * *len] = v;
        chain[3 * *len + 1] = w;
        chain[3 * *len + 2] = col;
        ++*len;
        v = w;
        col = col == al ? be : al;
        if (v == stop)
            return 1;
    }
    return 0;
}

/* Swaps steps al and be along the chain of pairs from v that starts in
 * al, unless it reaches `avoid`; 1 when done. */
static int px_gen_kempe(px_a2a_gen_t *g, int *chain, int v, int avoid, int al, int be)
{
    int len = 0;
    if (px_gen_chain(g, chain, &len, v, al, al, be, avoid))
        return 0;
    px_gen_swap(g, chain, len, al, be);
    return 1;
}

/* The pairs TACS1 left beyond the normal length, put into the first
 * `steps` steps (TACS2): in the step where both are idle and the pair adds
 * least to its busiest link, or after a Kempe swap. 0 when every one
 * found a place. */
static int px_gen_squeeze(px_a2a_gen_t *g, int steps)
{
    int H = g->H, *chain = malloc(sizeof(int) * 3 * (size_t)(2 * H + 2));
    if (!chain)
        return -1;
    int failed = 0;
    long work = 64L * H; /* Kempe swaps tried in all, a bounded search: the caller has a way out */
    for (int a = 0; a < H && !failed; a++)
        for (int b = a + 1; b < H && !failed; b++) {
            if (g->done[(size_t)a * H + b])
                continue;
            int best = -1, bestpeak = 0;
            for (int x = 0; x < steps; x++)
                if (g->part[(size_t)x * H + a] < 0 && g->part[(size_t)x * H + b] < 0) {
                    int pk = px_gen_peak(g, x, a, b);
                    if (best < 0 || pk < bestpeak) {
                        best = x;
                        bestpeak = pk;
                    }
                }
            for (int al = 0; al < steps && best < 0 && work > 0; al++) {
                if (g->part[(size_t)al * H + a] >= 0)
                    continue;
                for (int be = 0; be < steps && best < 0 && work > 0; be++) {
                    if (g->part[(size_t)be * H + b] >= 0)
                        continue;
                    work--;
                    /* a idle in al, busy in be; b the reverse */
                    if (px_gen_kempe(g, chain, b, a, al, be))
                        best = al;
                    else if (px_gen_kempe(g, chain, a, b, be, al))
                        best = be;
                }
            }
            if (best >= 0) {
                px_gen_set(g, best, a, b);
                g->done[(size_t)a * H + b] = g->done[(size_t)b * H + a] = 1;
                g->left--;
            } else {
                failed = 1;
            }
        }
    free(chain);
    return failed;
}

/* Each node's first candidate without links, and its edge links. */
static px_status_t px_gen_edges(px_a2a_gen_t *g)
{
    int H = g->H;
    g->near = malloc(sizeof(int) * (size_t)H);
    g->eoff = malloc(sizeof(int) * (2 * (size_t)H + 1));
    g->edge = malloc(sizeof(int) * 2 * (size_t)H * (size_t)H + 1);
    if (!g->near || !g->eoff || !g->edge)
        return PX_ERR_NO_MEMORY;
    int n = 0;
    for (int a = 0; a < H; a++) {
        const int *c = g->cand + (size_t)a * (H - 1);
        int i = 0;
        while (i < H - 1 && g->roff[(size_t)a * H + c[i]] != g->roff[(size_t)a * H + c[i] + 1])
            i++;
        g->near[a] = i;
        for (int side = 0; side < 2; side++) {
            g->eoff[2 * a + side] = n;
            for (int b = 0; b < H; b++) {
                size_t pr = side ? (size_t)b * H + a : (size_t)a * H + b;
                if (g->roff[pr] == g->roff[pr + 1])
                    continue;
                int l = g->rl[side ? g->roff[pr + 1] - 1 : g->roff[pr]], dup = 0;
                for (int j = g->eoff[2 * a + side]; j < n && !dup; j++)
                    dup = g->edge[j] == l;
                if (!dup)
                    g->edge[n++] = l;
            }
        }
    }
    g->eoff[2 * H] = n;
    return PX_OK;
}

/* The greedy over the first n0 steps, from scratch, with a budget. */
static void px_gen_greedy(px_a2a_gen_t *g, int n0, int maxh, int budget)
{
    int H = g->H;
    g->left = (long)H * (H - 1) / 2;
    memset(g->done, 0, (size_t)H * H);
    memset(g->head, 0, sizeof(int) * (size_t)H);
    for (int a = 0; a < H; a++)
        g->rem[a] = H - 1;
    for (size_t i = 0; i < (size_t)g->cap * H; i++)
        g->part[i] = -1;
    memset(g->load, 0, sizeof(short) * (size_t)g->cap * (size_t)g->L);
    /* the hop classes present, farthest first */
    for (int h = maxh; h >= 1 && g->left; h--) {
        int present = 0;
        for (size_t i = 0; i < (size_t)H * H && !present; i++)
            present = g->hops[i] == h;
        if (!present)
            continue;
        for (int s = 0; s < n0 && g->left; s++)
            px_gen_fill(g, s, h, budget);
    }
    g->nsteps = n0;
}

/* The most flows on one link in one step of the first n0 steps. */
static int px_gen_peak_all(const px_a2a_gen_t *g, int n0)
{
    int peak = 0;
    for (size_t i = 0; i < (size_t)n0 * (size_t)g->L; i++)
        peak = g->load[i] > peak ? g->load[i] : peak;
    return peak;
}

/* The round-robin in the first n0 steps, with its loads. */
static void px_gen_rr(px_a2a_gen_t *g, int n0)
{
    int H = g->H;
    if (g->L)
        memset(g->load, 0, sizeof(short) * (size_t)g->cap * (size_t)g->L);
    for (int r = 0; r < n0; r++)
        for (int a = 0; a < H; a++)
            g->part[(size_t)r * H + a] = px_rr_partner(H, r, a);
    for (int r = 0; r < n0 && g->roff; r++)
        for (int a = 0; a < H; a++) {
            int b = g->part[(size_t)r * H + a];
            if (b > a)
                px_gen_load(g, r, a, b, 1);
        }
    g->nsteps = n0;
    g->left = 0;
}

/* Flows over cap on the links of step s, and whether any link carries
 * more than peak. */
static long px_gen_excess(const px_a2a_gen_t *g, int s, int cap, int peak, int *over)
{
    const unsigned short *ld = g->load + (size_t)s * (size_t)g->L;
    long ex = 0;
    for (int l = 0; l < g->L; l++) {
        ex += ld[l] > cap ? ld[l] - cap : 0;
        *over |= ld[l] > peak;
    }
    return ex;
}

/* Moves the pairs of the al/be component through a (a path or a cycle of
 * pairs alternately in steps al and be) each to the other step. */
static void px_gen_flip(px_a2a_gen_t *g, int *chain, int a, int al, int be)
{
    int len = 0; /* a cycle comes back to a whole; a path goes both ways from it */
    if (!px_gen_chain(g, chain, &len, a, al, al, be, a))
        px_gen_chain(g, chain, &len, a, be, al, be, a);
    px_gen_swap(g, chain, len, al, be);
}

/* TACS2 from the round-robin: swaps of alternating components between two
 * steps, kept when they lower the flows over the budget in those steps
 * and put no more than `peak` on any link; a bounded number of tries. */
static void px_gen_improve(px_a2a_gen_t *g, int n0, int cap, int peak)
{
    int H = g->H, *chain = malloc(sizeof(int) * 3 * (size_t)(2 * H + 2));
    long *ex = malloc(sizeof(long) * (size_t)(n0 ? n0 : 1)), tries = 16L * H;
    if (!chain || !ex || n0 < 2) {
        free(chain);
        free(ex);
        return;
    }
    int dummy = 0;
    for (int s = 0; s < n0; s++)
        ex[s] = px_gen_excess(g, s, cap, peak, &dummy);
    for (int better = 1; better && tries > 0;) {
        better = 0;
        for (int al = 0; al < n0 && tries > 0; al++)
            for (int a = 0; a < H && ex[al] && tries > 0; a++) {
                int b = g->part[(size_t)al * H + a];
                if (b < a || px_gen_peak(g, al, a, b) <= cap)
                    continue; /* each pair once; only those on a link over budget */
                for (int k = 0; k < 16 && tries > 0; k++, tries--) {
                    int be = (al + 1 +
                              (int)(((unsigned)a * 7919u + (unsigned)k * 104729u) %
                                    (unsigned)(n0 - 1))) %
                             n0;
                    int over = 0;
                    px_gen_flip(g, chain, a, al, be);
                    long ea = px_gen_excess(g, al, cap, peak, &over);
                    long eb = px_gen_excess(g, be, cap, peak, &over);
                    if (!over && ea + eb < ex[al] + ex[be]) {
                        ex[al] = ea;
                        ex[be] = eb;
                        better = 1;
                        break;
                    }
                    px_gen_flip(g, chain, a, be, al); /* undo */
                }
            }
    }
    free(chain);
    free(ex);
}

/* The flows the busiest link must carry per step, on average over n0
 * steps (every pair's flows over the whole alltoall, shared by the steps);
 * -1 when out of memory. */
static int px_gen_need(const px_a2a_gen_t *g, int n0)
{
    unsigned *total = calloc((size_t)(g->L ? g->L : 1), sizeof(unsigned));
    int need = 0;
    if (!total || n0 < 1) {
        free(total);
        return total ? 0 : -1;
    }
    for (size_t i = 0; i < (size_t)g->roff[(size_t)g->H * g->H]; i++)
        total[g->rl[i]]++;
    for (int l = 0; l < g->L; l++) {
        int avg = (int)((total[l] + (unsigned)n0 - 1) / (unsigned)n0);
        need = avg > need ? avg : need;
    }
    free(total);
    return need;
}

static px_status_t px_gen_run(px_a2a_gen_t *g, px_topo_t *t, const int *nhost,
                              px_topo_a2a_kind_t kind, int budget, int *fallback)
{
    int H = g->H, n0 = px_rr_rounds(H);
    g->done = calloc((size_t)H * H, 1);
    g->cand = malloc(sizeof(int) * (size_t)H * (size_t)(H > 1 ? H - 1 : 1));
    g->head = calloc((size_t)H, sizeof(int));
    g->rem = malloc(sizeof(int) * (size_t)H);
    if (!g->done || !g->cand || !g->head || !g->rem)
        return PX_ERR_NO_MEMORY;
    if (kind != PX_TOPO_A2A_ROUNDROBIN) { /* the links first: the steps' loads count them */
        px_status_t st = px_gen_routes(g, t, nhost);
        if (st != PX_OK)
            return st;
    }
    if (px_gen_grow(g, n0))
        return PX_ERR_NO_MEMORY;
    if (kind == PX_TOPO_A2A_ROUNDROBIN) {
        px_gen_rr(g, n0);
        return PX_OK;
    }
    int maxh = 0;
    for (int a = 0; a < H; a++) {
        int *c = g->cand + (size_t)a * (H - 1), k = 0;
        for (int b = 0; b < H; b++) {
            if (b != a)
                c[k++] = b;
            if (g->hops[(size_t)a * H + b] > maxh)
                maxh = g->hops[(size_t)a * H + b];
        }
        px_gen_sort_ctx = g;
        px_gen_sort_a = a;
        qsort(c, (size_t)(H - 1), sizeof(int), px_gen_cmp);
    }
    if (px_gen_edges(g) != PX_OK)
        return PX_ERR_NO_MEMORY;
    if (kind == PX_TOPO_A2A_TACS1) {
        /* the round-robin, rearranged, when that keeps the budget: as
         * short as can be */
        px_gen_rr(g, n0);
        int rrpeak = px_gen_peak_all(g, n0), need = px_gen_need(g, n0);
        if (need < 0)
            return PX_ERR_NO_MEMORY;
        if (rrpeak > budget + 1 && need <= budget + 1)
            px_gen_improve(g, n0, budget + 1, rrpeak);
        if (px_gen_peak_all(g, n0) <= budget + 1)
            return PX_OK;
        px_gen_greedy(g, n0, maxh, budget);
        while (g->left) { /* more steps */
            if (px_gen_grow(g, g->nsteps + 1))
                return PX_ERR_NO_MEMORY;
            px_gen_fill(g, g->nsteps++, 0, budget);
        }
        return PX_OK;
    }
    /* TACS2: the least budget, from `budget` up, whose greedy leaves pairs
     * that fit in the normal length, with fewer flows on the busiest link
     * than the round-robin puts there (else the round-robin); not below
     * what the links must carry on average (a link's flows over all the
     * exchanges, shared by the steps) */
    px_gen_rr(g, n0);
    int rrpeak = px_gen_peak_all(g, n0), need = px_gen_need(g, n0);
    if (need < 0)
        return PX_ERR_NO_MEMORY;
    for (int b = budget > need - 1 ? budget : need - 1; b + 1 < rrpeak; b++) {
        px_gen_greedy(g, n0, maxh, b);
        if ((!g->left || !px_gen_squeeze(g, n0)) && px_gen_peak_all(g, n0) < rrpeak)
            return PX_OK;
    }
    *fallback = 1;
    px_gen_rr(g, n0);
    px_gen_improve(g, n0, budget + 1, rrpeak);
    return PX_OK;
}

px_status_t px_topo_a2a_build(px_topo_t *t, const int *hosts, int n, px_topo_a2a_kind_t kind,
                              int conflicts, px_topo_a2a_t **out)
{
    *out = NULL;
    px_topo_a2a_t *s = calloc(1, sizeof(*s));
    if (!s || n < 1) {
        free(s);
        return s ? PX_ERR_INVALID_PARAM : PX_ERR_NO_MEMORY;
    }
    s->kind = kind;
    s->n = n;
    if (kind == PX_TOPO_A2A_PAIRWISE) {
        s->nsteps = n - 1;
        *out = s;
        return PX_OK;
    }
    s->node_of = malloc(sizeof(int) * (size_t)n);
    s->local_of = malloc(sizeof(int) * (size_t)n);
    int *nhost = malloc(sizeof(int) * (size_t)n), *cnt = calloc((size_t)n, sizeof(int));
    int nh = t ? t->nhosts : 0;
    int *node_of_host = malloc(sizeof(int) * (size_t)(nh ? nh : 1));
    px_a2a_gen_t g = {0};
    px_status_t st = PX_ERR_NO_MEMORY;
    if (!s->node_of || !s->local_of || !nhost || !cnt || !node_of_host)
        goto out;
    for (int h = 0; h < nh; h++)
        node_of_host[h] = -1;
    int H = 0, k = 1;
    for (int r = 0; r < n; r++) {
        int h = hosts && t && hosts[r] >= 0 && hosts[r] < nh ? hosts[r] : -1;
        int nd = h >= 0 ? node_of_host[h] : -1;
        if (nd < 0) {
            nd = H++;
            nhost[nd] = h;
            if (h >= 0)
                node_of_host[h] = nd;
        }
        s->node_of[r] = nd;
        s->local_of[r] = cnt[nd]++;
        if (cnt[nd] > k)
            k = cnt[nd];
    }
    s->nnodes = H;
    s->ppn = k;
    s->rank_at = malloc(sizeof(int) * (size_t)H * (size_t)k);
    if (!s->rank_at)
        goto out;
    for (int i = 0; i < H * k; i++)
        s->rank_at[i] = -1;
    for (int r = 0; r < n; r++)
        s->rank_at[s->node_of[r] * k + s->local_of[r]] = r;
    g.H = H;
    st = px_gen_run(&g, t, nhost, kind, conflicts < 0 ? 0 : conflicts, &s->fallback);
    if (st != PX_OK)
        goto out;
    /* drop empty node steps */
    int kept = 0;
    for (int x = 0; x < g.nsteps; x++) {
        int any = 0;
        for (int a = 0; a < H && !any; a++)
            any = g.part[(size_t)x * H + a] >= 0;
        if (any && kept != x)
            memmove(g.part + (size_t)kept * H, g.part + (size_t)x * H, sizeof(int) * (size_t)H);
        kept += any;
    }
    s->nnsteps = kept;
    s->npart = g.part;
    g.part = NULL;
    s->intra = px_rr_rounds(k);
    s->nsteps = s->intra + k * s->nnsteps;
    *out = s;
    s = NULL;
out:
    px_gen_free(&g);
    free(nhost);
    free(cnt);
    free(node_of_host);
    px_topo_a2a_free(s);
    return st;
}

void px_topo_a2a_free(px_topo_a2a_t *s)
{
    if (!s)
        return;
    free(s->node_of);
    free(s->local_of);
    free(s->rank_at);
    free(s->npart);
    free(s);
}

px_topo_a2a_kind_t px_topo_a2a_kind(const px_topo_a2a_t *s) { return s->kind; }
int px_topo_a2a_ranks(const px_topo_a2a_t *s) { return s->n; }
int px_topo_a2a_steps(const px_topo_a2a_t *s) { return s->nsteps; }
int px_topo_a2a_fell_back(const px_topo_a2a_t *s) { return s->fallback; }

int px_topo_a2a_dst(const px_topo_a2a_t *s, int step, int r)
{
    if (step < 0 || step >= s->nsteps || r < 0 || r >= s->n)
        return -1;
    if (s->kind == PX_TOPO_A2A_PAIRWISE)
        return (r + step + 1) % s->n;
    int A = s->node_of[r], i = s->local_of[r], k = s->ppn, j;
    if (step < s->intra) {
        j = px_rr_partner(k, step, i);
        return j < 0 ? -1 : s->rank_at[A * k + j];
    }
    step -= s->intra;
    int B = s->npart[(size_t)(step / k) * s->nnodes + A], tt = step % k;
    if (B < 0)
        return -1;
    j = A < B ? (i + tt) % k : (i - tt + k) % k;
    return s->rank_at[B * k + j];
}

int px_topo_a2a_src(const px_topo_a2a_t *s, int step, int r)
{
    if (s->kind == PX_TOPO_A2A_PAIRWISE)
        return step < 0 || step >= s->nsteps || r < 0 || r >= s->n ? -1
                                                                   : (r - step - 1 + s->n) % s->n;
    return px_topo_a2a_dst(s, step, r); /* pair exchanges */
}

int px_topo_a2a_dcss(px_topo_t *t, const int *hosts, int n, int sparsity_pct)
{
    if (!t || n < 2)
        return 0;
    int *set = malloc(sizeof(int) * (size_t)n), m = 0;
    if (!set)
        return 0;
    for (int r = 0; r < n; r++) {
        int dup = hosts[r] < 0;
        for (int j = 0; j < m && !dup; j++)
            dup = set[j] == hosts[r];
        if (!dup)
            set[m++] = hosts[r];
    }
    /* sparse: a leaf holds, on average, no more than sparsity% of the hosts */
    int ok = m > 1 && px_topo_hosts_per_leaf(t, set, m) * 100.0 > (double)sparsity_pct * m;
    if (ok)
        ok = px_topo_sharing(t, set, m, NULL) > 0;
    free(set);
    return ok;
}
