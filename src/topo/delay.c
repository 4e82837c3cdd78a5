/* The delay matrix among a set of hosts and the broadcast tree renumbered
 * from it (the dissertation's network-topology and network-speed aware
 * broadcast).
 *
 * The delay between two hosts is the hop count of the route between them.
 * When the hosts of the set are cabled at different rates (their first
 * link, the HCA's), it is 1/min(link rate along the route) instead: a
 * slow link anywhere on the route makes it slow, whatever its length.
 *
 * The tree is the binomial tree of the collectives (position v's parent is
 * v minus its lowest set bit; the subtree of v is positions v to
 * v + lowest bit - 1). Its positions are filled in the order of the size
 * of their subtrees, largest first (between equals breadth first, as the
 * dissertation traverses the tree), and each subtree draws its members
 * from its parent's: the root's is everyone, and a subtree of size s
 * takes s members of its parent's that keep switch clusters whole. The
 * smallest cluster that can hold the subtree, between equals the one
 * farthest from the parent (the nearest for a single host), a level down
 * again inside it; when none can, whole clusters, the largest first, and
 * the rest from the cluster that supplies most of it. The head of the
 * subtree is the member in its largest cluster, then the closest to the
 * parent. So each cluster is entered from outside once where the sizes
 * allow it: from the root, one message per other leaf crosses the
 * spines, and the leaf's hosts forward it among themselves; "closest host
 * first" gave the root's largest subtree a host of the root's own leaf,
 * and each far host was reached over the spines on its own.
 *
 * The clusters are the members' leaf switches joined as the switch
 * clusters join hosts (cluster.c), computed for the leaves of the members
 * only. With hosts at several rates (their first links) each position
 * that forwards is given a rate first, the fastest to the largest
 * subtrees, and the clusters are kept whole among the members of the
 * rate asked for; the leaves of the tree take the members left over, of
 * any rate. The positions that forward to most of the tree so get the
 * fastest hosts, and the slowest are leaves. Rows of the matrix are
 * computed as the tree asks for them. */
#include "topo_impl.h"

#include <stdlib.h>
#include <string.h>

struct px_topo_delay {
    px_topo_t *topo;
    int n;
    int *hosts;      /* fabric host of each member, -1 unknown */
    uint64_t *rate;  /* each member's first link, 0 unknown */
    int mixed;       /* members' rates differ */
    double **row;    /* computed rows */
    int **hops;      /* and their hop counts */
    int *cl, levels; /* the members' clusters (px_topo_delay_clusters) */
};

#define PX_TOPO_DELAY_FAR 1e18

px_topo_delay_t *px_topo_delay_new(px_topo_t *t, const int *hosts, int n)
{
    px_topo_delay_t *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->topo = t;
    d->n = n;
    d->hosts = malloc(sizeof(int) * (size_t)(n ? n : 1));
    d->rate = calloc((size_t)(n ? n : 1), sizeof(uint64_t));
    d->row = calloc((size_t)(n ? n : 1), sizeof(double *));
    d->hops = calloc((size_t)(n ? n : 1), sizeof(int *));
    if (!d->hosts || !d->rate || !d->row || !d->hops) {
        px_topo_delay_free(d);
        return NULL;
    }
    memcpy(d->hosts, hosts, sizeof(int) * (size_t)n);
    uint64_t first = 0;
    for (int i = 0; i < n; i++) {
        int h = hosts[i];
        if (h >= 0 && h < t->nhosts) {
            int hv = t->hosts[h];
            for (int p = 0; p < t->v[hv].nports && !d->rate[i]; p++)
                if (t->v[hv].ports[p].link >= 0)
                    d->rate[i] = t->links[t->v[hv].ports[p].link].rate;
        }
        if (d->rate[i] && !first)
            first = d->rate[i];
        if (d->rate[i] && d->rate[i] != first)
            d->mixed = 1;
    }
    return d;
}

void px_topo_delay_free(px_topo_delay_t *d)
{
    if (!d)
        return;
    for (int i = 0; d->row && i < d->n; i++)
        free(d->row[i]);
    for (int i = 0; d->hops && i < d->n; i++)
        free(d->hops[i]);
    free(d->row);
    free(d->hops);
    free(d->hosts);
    free(d->rate);
    free(d->cl);
    free(d);
}

int px_topo_delay_mixed(const px_topo_delay_t *d) { return d->mixed; }

uint64_t px_topo_delay_rate(const px_topo_delay_t *d, int i) { return d->rate[i]; }

/* Delay from member i to j; *hops_p its hop count (-1: no route). */
static double px_topo_delay_pair(px_topo_delay_t *d, int i, int j, int *links, int maxl,
                                 int *hops_p)
{
    int a = d->hosts[i], b = d->hosts[j];
    *hops_p = i == j || (a >= 0 && a == b) ? 0 : -1;
    if (!*hops_p)
        return 0;
    int nl = a < 0 || b < 0 ? -1 : px_topo_walk(d->topo, a, b, 0, 0, NULL, 0, links, maxl);
    if (nl < 0)
        return PX_TOPO_DELAY_FAR;
    *hops_p = nl;
    if (!d->mixed)
        return nl;
    uint64_t slow = 0;
    for (int k = 0; k <= nl && k < maxl; k++) {
        uint64_t r = d->topo->links[links[k]].rate;
        if (r && (!slow || r < slow))
            slow = r;
    }
    return slow ? 1e12 / (double)slow : PX_TOPO_DELAY_FAR / 2; /* picoseconds per bit */
}

static int px_topo_delay_fill(px_topo_delay_t *d, int i)
{
    if (d->row[i])
        return 0;
    double *r = malloc(sizeof(double) * (size_t)d->n);
    int *h = malloc(sizeof(int) * (size_t)d->n);
    int maxl = d->topo->nswitches + 2;
    int *links = malloc(sizeof(int) * (size_t)maxl);
    if (!r || !h || !links) {
        free(r);
        free(h);
        free(links);
        return -1;
    }
    for (int j = 0; j < d->n; j++)
        r[j] = px_topo_delay_pair(d, i, j, links, maxl, &h[j]);
    free(links);
    d->row[i] = r;
    d->hops[i] = h;
    return 0;
}

const double *px_topo_delay_row(px_topo_delay_t *d, int i)
{
    return px_topo_delay_fill(d, i) ? NULL : d->row[i];
}

typedef struct px_topo_slot {
    int size, bfs, pos;
} px_topo_slot_t;

/* Larger subtrees first; between equals breadth first. */
static int px_topo_slot_cmp(const void *a, const void *b)
{
    const px_topo_slot_t *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return (x->bfs > y->bfs) - (x->bfs < y->bfs);
}

/* The state of one fill. Members are handled by their rank in the order
 * of the switch clusters (cluster at level 1, then 2, ...), so that any
 * subset listed by rank has each cluster of each level in one run. */
typedef struct px_topo_fill {
    px_topo_delay_t *d;
    int n, levels; /* cluster levels 1..levels (0: no clusters) */
    int *cl;       /* cl[m * levels + level - 1]: member m's cluster */
    int *member;   /* member[rank] */
    int *tier;     /* member's rate tier, 0 the fastest */
    int ntiers;
    int parent; /* the member the current subtree hangs from */
    int size;   /* and its size */
    const double *row;
    const int *hops; /* the parent's rows */
    int *sel, nsel;  /* ranks chosen for the current subtree */
    int *surplus;    /* per tier: members of the parent's pool no forwarding
                      * position left there asks for, free to be leaves */
} px_topo_fill_t;

static int px_topo_fill_cl(const px_topo_fill_t *f, int m, int level)
{
    return f->cl[(size_t)m * f->levels + level - 1];
}

/* Levels at which member m shares the parent's cluster: the fewer, the
 * farther. */
static int px_topo_fill_join(const px_topo_fill_t *f, int m)
{
    int level = 1;
    while (level <= f->levels &&
           px_topo_fill_cl(f, m, level) == px_topo_fill_cl(f, f->parent, level))
        level++;
    return level - 1;
}

typedef struct px_topo_clkey {
    const int *cl;
    int levels, m;
} px_topo_clkey_t;

static int px_topo_clkey_cmp(const void *a, const void *b)
{
    const px_topo_clkey_t *x = a, *y = b;
    for (int i = 0; i < x->levels; i++)
        if (x->cl[i] != y->cl[i])
            return x->cl[i] < y->cl[i] ? -1 : 1;
    return (x->m > y->m) - (x->m < y->m);
}

typedef struct px_topo_near {
    double delay;
    int hops, m, rank;
} px_topo_near_t;

/* Nearer the parent first: by delay, then hops, then member. */
static int px_topo_near_cmp(const void *a, const void *b)
{
    const px_topo_near_t *x = a, *y = b;
    if (x->delay != y->delay)
        return x->delay < y->delay ? -1 : 1;
    if (x->hops != y->hops)
        return (unsigned)x->hops < (unsigned)y->hops ? -1 : 1;
    return (x->m > y->m) - (x->m < y->m);
}

static int px_topo_int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void px_topo_fill_count(const px_topo_fill_t *f, const int *x, int nx, int *cnt)
{
    memset(cnt, 0, sizeof(int) * (size_t)f->ntiers);
    for (int i = 0; i < nx; i++)
        cnt[f->tier[f->member[x[i]]]]++;
}

/* What a cluster of counts cnt (per tier) can give toward need: need[t]
 * members of tier t for the forwarding positions, need[T] of any tier
 * with a surplus for the leaves; into give (T + 1). Returns the total. */
static int px_topo_fill_give(const px_topo_fill_t *f, const int *cnt, const int *need, int *give)
{
    int T = f->ntiers, spare = 0, total = 0;
    for (int t = 0; t < T; t++) {
        give[t] = cnt[t] < need[t] ? cnt[t] : need[t];
        int s = cnt[t] - give[t];
        spare += s < f->surplus[t] ? s : f->surplus[t];
        total += give[t];
    }
    give[T] = spare < need[T] ? spare : need[T];
    return total + give[T];
}

/* Chooses from the ranks x (one run at level-1, in rank order) the
 * members of one subtree: need[t] of tier t (t < T, its forwarding
 * positions) and need[T] of any tier with a surplus (its leaves),
 * keeping whole clusters together: the smallest cluster of the level
 * that can give it all (between equals the farthest from the parent, or
 * for a single host the nearest), else whole clusters, the largest
 * first, then the rest from the clusters that give most of it, a level
 * down. need is consumed. Returns -1 out of memory. */
static int px_topo_fill_carve(px_topo_fill_t *f, const int *x, int nx, int level, int *need)
{
    int total = 0, T = f->ntiers;
    for (int t = 0; t <= T; t++)
        total += need[t];
    if (!total)
        return 0;
    if (level > f->levels) {
        /* one cluster of the finest level: the nearest to the parent for
         * the forwarding positions, then for the leaves the slowest */
        px_topo_near_t *c = malloc(sizeof(*c) * (size_t)nx);
        if (!c)
            return -1;
        for (int i = 0; i < nx; i++) {
            int m = f->member[x[i]];
            c[i] = (px_topo_near_t){f->row[m], f->hops[m], m, x[i]};
        }
        qsort(c, (size_t)nx, sizeof(*c), px_topo_near_cmp);
        for (int i = 0; i < nx; i++)
            if (need[f->tier[c[i].m]] > 0) {
                need[f->tier[c[i].m]]--;
                f->sel[f->nsel++] = c[i].rank;
                c[i].rank = -1;
            }
        for (int t = T - 1; t >= 0; t--)
            for (int i = 0; i < nx && need[T] > 0 && f->surplus[t] > 0; i++)
                if (c[i].rank >= 0 && f->tier[c[i].m] == t) {
                    need[T]--;
                    f->surplus[t]--;
                    f->sel[f->nsel++] = c[i].rank;
                }
        free(c);
        return 0;
    }
    int *start = malloc(sizeof(int) * ((size_t)nx + 1)), *taken = calloc((size_t)nx, sizeof(int));
    int *cnt = malloc(sizeof(int) * ((size_t)T * 2 + 1)), ng = 0, rc = -1;
    if (!start || !taken || !cnt)
        goto out;
    int *give = cnt + T;
    for (int i = 0; i < nx; i++)
        if (!i || px_topo_fill_cl(f, f->member[x[i]], level) !=
                      px_topo_fill_cl(f, f->member[x[i - 1]], level))
            start[ng++] = i;
    start[ng] = nx;
    /* pass 0: one cluster that gives it all; pass 1: whole clusters that
     * fit in what is still needed, the largest first; pass 2: the rest */
    for (int pass = 0; pass < 3 && total > 0; pass++) {
        for (;;) {
            int best = -1, best_size = 0, best_join = 0, best_use = 0;
            for (int g = 0; g < ng; g++) {
                if (taken[g])
                    continue;
                int a = start[g], size = start[g + 1] - a;
                px_topo_fill_count(f, x + a, size, cnt);
                int use = px_topo_fill_give(f, cnt, need, give);
                if (!use || (pass == 0 && use < total) || (pass == 1 && use < size))
                    continue;
                int join = px_topo_fill_join(f, f->member[x[a]]), better;
                if (best < 0)
                    better = 1;
                else if (pass == 0 && size != best_size)
                    better = size < best_size;
                else if (pass == 1 && size != best_size)
                    better = size > best_size;
                else if (pass == 2 && use != best_use)
                    better = use > best_use;
                else
                    better = f->size > 1 ? join < best_join : join > best_join;
                if (better) {
                    best = g;
                    best_size = size;
                    best_join = join;
                    best_use = use;
                }
            }
            if (best < 0)
                break;
            int a = start[best], size = start[best + 1] - a;
            taken[best] = 1;
            px_topo_fill_count(f, x + a, size, cnt);
            total -= px_topo_fill_give(f, cnt, need, give);
            for (int t = 0; t <= T; t++)
                need[t] -= give[t];
            if (px_topo_fill_carve(f, x + a, size, level + 1, give) < 0)
                goto out;
            if (pass == 0 || !total)
                break;
        }
    }
    rc = 0;
out:
    free(start);
    free(taken);
    free(cnt);
    return rc;
}

/* The head of a subtree among the chosen ranks (sorted), of tier `tier`:
 * the one in the largest share of the subtree at each level, from the
 * top (its children then find their hosts in its clusters), then the
 * nearest to the parent. */
static int px_topo_fill_head(px_topo_fill_t *f, int tier, int *run)
{
    int ns = f->nsel, best = -1;
    for (int level = 1; level <= f->levels; level++) {
        int *r = run + (size_t)(level - 1) * ns;
        for (int i = 0; i < ns;) {
            int j = i, c = px_topo_fill_cl(f, f->member[f->sel[i]], level);
            while (j < ns && px_topo_fill_cl(f, f->member[f->sel[j]], level) == c)
                j++;
            for (int k = i; k < j; k++)
                r[k] = j - i;
            i = j;
        }
    }
    for (int i = 0; i < ns; i++) {
        int m = f->member[f->sel[i]];
        if (tier < f->ntiers && f->tier[m] != tier)
            continue;
        int cmp = 0;
        if (best < 0)
            cmp = -1;
        for (int level = 1; !cmp && level <= f->levels; level++) {
            int *r = run + (size_t)(level - 1) * ns;
            cmp = (r[best] > r[i]) - (r[best] < r[i]);
        }
        if (!cmp) {
            px_topo_near_t a = {f->row[m], f->hops[m], m, 0};
            int bm = f->member[f->sel[best]];
            px_topo_near_t b = {f->row[bm], f->hops[bm], bm, 0};
            cmp = px_topo_near_cmp(&a, &b);
        }
        if (cmp < 0)
            best = i;
    }
    return best;
}

/* The members' switch clusters: each leaf switch's members (a member on
 * a host the description lacks alone), then those leaves joined as the
 * switch clusters join hosts (cluster.c), over the hops between them.
 * Level `levels` is the leaf, 1 the coarsest cluster below the whole.
 * Only the leaves are clustered, not the fabric's hosts: a description
 * of a whole site costs nothing more for a small job. Above
 * PX_TOPO_FILL_MAX_LEAVES leaves (the clustering grows with their cube)
 * only the leaves count. Computed at the first tree and kept: d->cl[m *
 * levels + level - 1] is member m's cluster at a level. Returns the
 * levels, -1 out of memory. */
#define PX_TOPO_FILL_MAX_LEAVES 256
static int px_topo_delay_clusters(px_topo_delay_t *d)
{
    if (d->cl)
        return d->levels;
    px_topo_t *t = d->topo;
    int n = d->n, na = 0, levels = -1;
    int *atom = malloc(sizeof(int) * (size_t)n), *rep = malloc(sizeof(int) * (size_t)n);
    int *of_leaf = malloc(sizeof(int) * (size_t)(t->nswitches ? t->nswitches : 1));
    int *dist = NULL, *acl = NULL, *ncl = NULL, adepth = 1;
    if (!atom || !rep || !of_leaf)
        goto out;
    for (int s = 0; s < t->nswitches; s++)
        of_leaf[s] = -1;
    for (int m = 0; m < n; m++) {
        int h = d->hosts[m], leaf = h >= 0 && h < t->nhosts ? px_topo_host_leaf(t, h) : -1;
        if (leaf >= 0 && of_leaf[leaf] >= 0) {
            atom[m] = of_leaf[leaf];
            continue;
        }
        if (leaf >= 0)
            of_leaf[leaf] = na;
        rep[na] = leaf >= 0 ? h : -1;
        atom[m] = na++;
    }
    if (na <= PX_TOPO_FILL_MAX_LEAVES) {
        if (!(dist = malloc(sizeof(int) * (size_t)na * (size_t)na)))
            goto out;
        for (int a = 0; a < na; a++) {
            dist[(size_t)a * na + a] = 0;
            for (int b = a + 1; b < na; b++) {
                int h = rep[a] < 0 || rep[b] < 0 ? -1 : px_topo_hops(t, rep[a], rep[b]);
                dist[(size_t)a * na + b] = dist[(size_t)b * na + a] = h < 0 ? PX_TOPO_FAR : h;
            }
        }
        if (px_topo_cluster_matrix(na, dist, &acl, &ncl, &adepth) != PX_OK)
            goto out;
    }
    if (!(d->cl = malloc(sizeof(int) * (size_t)(n ? n : 1) * (size_t)adepth)))
        goto out;
    for (int m = 0; m < n; m++)
        for (int level = 1; level <= adepth; level++)
            d->cl[(size_t)m * adepth + level - 1] =
                acl ? acl[(size_t)level * na + atom[m]] : atom[m];
    levels = d->levels = adepth;
out:
    free(atom);
    free(rep);
    free(of_leaf);
    free(dist);
    free(acl);
    free(ncl);
    return levels;
}

/* Rate tiers: 0 for every member with one rate; else the distinct rates
 * of the members' links, the fastest 0, an unknown rate the slowest. */
static int px_topo_fill_tiers(px_topo_fill_t *f)
{
    px_topo_delay_t *d = f->d;
    f->ntiers = 1;
    if (!d->mixed) {
        memset(f->tier, 0, sizeof(int) * (size_t)f->n);
        return 0;
    }
    uint64_t *r = malloc(sizeof(uint64_t) * (size_t)f->n);
    if (!r)
        return -1;
    int nr = 0;
    for (int i = 0; i < f->n; i++) {
        int k = 0;
        while (k < nr && r[k] != d->rate[i])
            k++;
        if (k == nr)
            r[nr++] = d->rate[i];
    }
    for (int i = 0; i < f->n; i++) {
        f->tier[i] = 0;
        for (int k = 0; k < nr; k++)
            if (d->rate[i] == 0 ? r[k] != 0 : r[k] > d->rate[i])
                f->tier[i]++;
    }
    f->ntiers = nr;
    free(r);
    return 0;
}

px_status_t px_topo_bcast_order(px_topo_delay_t *d, int root, int *order)
{
    int n = d->n;
    if (root < 0 || root >= n)
        return PX_ERR_INVALID_PARAM;
    px_topo_fill_t f = {.d = d, .n = n};
    int levels = f.levels = px_topo_delay_clusters(d);
    f.cl = d->cl;
    int *queue = malloc(sizeof(int) * (size_t)n), *owner = malloc(sizeof(int) * (size_t)n);
    int *pos_tier = malloc(sizeof(int) * (size_t)n);
    int *cand = malloc(sizeof(int) * (size_t)n), *need = NULL, *run = NULL;
    char *done = calloc((size_t)n, 1); /* positions whose subtree has its members */
    px_topo_slot_t *slot = malloc(sizeof(*slot) * (size_t)n);
    px_topo_clkey_t *key = malloc(sizeof(*key) * (size_t)n);
    f.member = malloc(sizeof(int) * (size_t)n);
    f.tier = malloc(sizeof(int) * (size_t)n);
    f.sel = malloc(sizeof(int) * (size_t)n);
    run = malloc(sizeof(int) * (size_t)n * (size_t)(levels > 0 ? levels : 1));
    px_status_t st = PX_ERR_NO_MEMORY;
    if (levels < 0 || !queue || !owner || !pos_tier || !cand || !done || !slot || !key ||
        !f.member || !f.tier || !f.sel || !run || px_topo_fill_tiers(&f) < 0)
        goto out;
    int T = f.ntiers;
    if (!(need = malloc(sizeof(int) * ((size_t)T * 3 + 1))))
        goto out;
    int *left = need + T + 1;
    f.surplus = left + T;
    /* the members in the order of their clusters */
    for (int m = 0; m < n; m++)
        key[m] = (px_topo_clkey_t){f.cl + (size_t)m * levels, levels, m};
    qsort(key, (size_t)n, sizeof(*key), px_topo_clkey_cmp);
    for (int r = 0; r < n; r++)
        f.member[r] = key[r].m;
    /* the positions breadth first, each one's children largest first,
     * then ordered by the size of their subtrees */
    int qn = 0, top = 1;
    while (top < n)
        top <<= 1;
    queue[qn++] = 0;
    for (int qi = 0; qi < qn; qi++) {
        int v = queue[qi], low = v ? v & -v : top;
        for (int m = low >> 1; m > 0; m >>= 1)
            if (v + m < n)
                queue[qn++] = v + m;
    }
    for (int i = 1; i < qn; i++) {
        int v = queue[i], low = v & -v;
        slot[i - 1] = (px_topo_slot_t){low < n - v ? low : n - v, i, v};
    }
    qsort(slot, (size_t)(qn - 1), sizeof(*slot), px_topo_slot_cmp);
    /* the tier each forwarding position takes: the fastest left to the
     * largest subtrees; the leaves take any (tier T) */
    memset(left, 0, sizeof(int) * (size_t)T);
    for (int m = 0; m < n; m++)
        if (m != root)
            left[f.tier[m]]++;
    pos_tier[0] = f.tier[root];
    for (int i = 0; i < qn - 1; i++) {
        int tt = 0;
        while (!left[tt])
            tt++;
        if (slot[i].size > 1)
            left[tt]--;
        pos_tier[slot[i].pos] = slot[i].size > 1 ? tt : T;
    }
    /* each position's subtree draws on its parent's pool: owner[m] is the
     * position whose pool member m is in, -1 once placed */
    for (int m = 0; m < n; m++)
        owner[m] = m == root ? -1 : 0;
    order[0] = root;
    for (int i = 0; i < qn - 1; i++) {
        int c = slot[i].pos, size = slot[i].size, p = c - (c & -c), nc = 0;
        f.parent = order[p];
        if (!(f.row = px_topo_delay_row(d, f.parent)))
            goto out;
        f.hops = d->hops[f.parent];
        /* the pool's members beyond what its forwarding positions still
         * ask for may be leaves */
        memset(f.surplus, 0, sizeof(int) * (size_t)T);
        for (int r = 0; r < n; r++)
            if (owner[f.member[r]] == p) {
                cand[nc++] = r;
                f.surplus[f.tier[f.member[r]]]++;
            }
        int low = p ? p & -p : top, end = p + low < n ? p + low : n;
        for (int v = p + 1; v < end; v++)
            if (!done[v] && pos_tier[v] < T)
                f.surplus[pos_tier[v]]--;
        memset(need, 0, sizeof(int) * ((size_t)T + 1));
        for (int v = c; v < c + size; v++) {
            need[pos_tier[v]]++;
            done[v] = 1;
        }
        f.nsel = 0;
        f.size = size;
        if (px_topo_fill_carve(&f, cand, nc, 1, need) < 0)
            goto out;
        qsort(f.sel, (size_t)f.nsel, sizeof(int), px_topo_int_cmp);
        int h = f.nsel == size ? px_topo_fill_head(&f, pos_tier[c], run) : -1;
        if (h < 0) {
            st = PX_ERR_PROTOCOL; /* the pools lost count: cannot happen */
            goto out;
        }
        for (int k = 0; k < f.nsel; k++)
            owner[f.member[f.sel[k]]] = k == h ? -1 : c;
        order[c] = f.member[f.sel[h]];
    }
    st = PX_OK;
out:
    free(queue);
    free(owner);
    free(pos_tier);
    free(cand);
    free(done);
    free(need);
    free(run);
    free(slot);
    free(key);
    free(f.member);
    free(f.tier);
    free(f.sel);
    return st;
}
