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
 * v minus its lowest set bit). Its positions are filled in the order of
 * the size of their subtrees, largest first (between equals breadth
 * first, as the dissertation traverses the tree): each gets the host
 * closest to its parent's host among those left (between equals the one
 * with the faster link, then the fewer hops, then the lower index). The
 * positions that forward to most of the tree so get the closest and
 * fastest hosts; the leaves of the tree, which forward nothing, get what
 * is left. Rows of the matrix are computed as the tree asks for them. */
#include "topo_impl.h"

#include <stdlib.h>
#include <string.h>

struct px_topo_delay {
    px_topo_t *topo;
    int n;
    int *hosts;     /* fabric host of each member, -1 unknown */
    uint64_t *rate; /* each member's first link, 0 unknown */
    int mixed;      /* members' rates differ */
    double **row;   /* computed rows */
    int **hops;     /* and their hop counts */
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

px_status_t px_topo_bcast_order(px_topo_delay_t *d, int root, int *order)
{
    int n = d->n;
    if (root < 0 || root >= n)
        return PX_ERR_INVALID_PARAM;
    char *used = calloc((size_t)n, 1);
    int *queue = malloc(sizeof(int) * (size_t)n);
    px_topo_slot_t *slot = malloc(sizeof(*slot) * (size_t)n);
    if (!used || !queue || !slot) {
        free(used);
        free(queue);
        free(slot);
        return PX_ERR_NO_MEMORY;
    }
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
    order[0] = root;
    used[root] = 1;
    px_status_t st = PX_OK;
    for (int i = 0; i < qn - 1; i++) {
        int c = slot[i].pos, parent = order[c - (c & -c)];
        const double *row = px_topo_delay_row(d, parent);
        if (!row) {
            st = PX_ERR_NO_MEMORY;
            break;
        }
        const int *hops = d->hops[parent];
        int best = -1;
        for (int x = 0; x < n; x++) {
            if (used[x])
                continue;
            if (best < 0 || row[x] < row[best] ||
                (row[x] == row[best] &&
                 (d->rate[x] > d->rate[best] ||
                  (d->rate[x] == d->rate[best] && (unsigned)hops[x] < (unsigned)hops[best]))))
                best = x;
        }
        order[c] = best;
        used[best] = 1;
    }
    free(used);
    free(queue);
    free(slot);
    return st;
}
