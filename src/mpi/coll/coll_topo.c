/* Switch clusters of a communicator and the algorithms that use them.
 *
 * With a fabric description (PX_TOPO, src/topo), the ranks of a
 * communicator fall into switch clusters: those whose hosts hang off one
 * leaf switch. Traffic inside a cluster crosses one switch; traffic between
 * clusters climbs to the spines, whose uplinks are shared and often
 * over-subscribed. The two-level gather and scatter send one message per
 * cluster across the spines, through a leader in each cluster, instead of
 * one per rank.
 *
 * The clusters are computed at the first call that asks, on every rank from
 * the same model (shared at MPI_Init) and the communicator's group, so they
 * are the same everywhere without any communication. */
#include "coll_impl.h"
#include "../../topo/topo.h"

#include <stdlib.h>
#include <string.h>

typedef struct px_coll_tclus {
    int state; /* 1 usable, -1 not (no description, one cluster, one rank each) */
    int nclusters;
    int *cluster_of; /* comm rank -> cluster, numbered by their lowest rank */
    int *start;      /* cluster -> its first entry in members */
    int *members;    /* comm ranks, by cluster, in rank order within each */
    int *host_of;    /* comm rank -> host in the model, -1 when unknown */
    int *byhost;     /* members again, each host's ranks together (hosts in order of
                      * their lowest rank) */
    /* the broadcast's host groups (built at the first broadcast): runs of
     * byhost on one host (a rank on an unknown host alone) */
    int ngroups;
    int *gstart;            /* group -> its first entry in byhost */
    int *group_of;          /* comm rank -> group */
    int *ghost;             /* group -> its host in the model, -1 unknown */
    px_topo_delay_t *delay; /* among the groups' hosts (dropped after each tree above
                             * PX_TCLUS_KEEP_DELAY groups) */
    int **gorder;           /* per root group: the tree's groups, built when first rooted there */
    /* the scatter's [0] and the gather's [1] route groups, for the last root
     * each was asked for (px_tclus_routes) */
    struct px_tclus_routes {
        int root;   /* -1: not computed */
        int *lead;  /* comm rank -> the rank it exchanges its block with */
        int *first; /* leader -> its first entry in mem (others -1) */
        int *cnt;   /* leader -> the blocks it carries, its own included */
        int *mem;   /* ranks, by leader, in rank order within each */
    } routes[2];
} px_coll_tclus_t;

static px_coll_tclus_t px_tclus_none = {.state = -1};

void px_coll_tclus_free(struct px_coll_tclus *t)
{
    if (!t || t == &px_tclus_none)
        return;
    free(t->cluster_of);
    free(t->start);
    free(t->members);
    free(t->host_of);
    free(t->byhost);
    free(t->gstart);
    free(t->group_of);
    free(t->ghost);
    px_topo_delay_free(t->delay);
    for (int d = 0; d < 2; d++) {
        free(t->routes[d].lead);
        free(t->routes[d].first);
        free(t->routes[d].cnt);
        free(t->routes[d].mem);
    }
    for (int g = 0; t->gorder && g < t->ngroups; g++)
        free(t->gorder[g]);
    free(t->gorder);
    free(t);
}

static px_coll_tclus_t *px_tclus_build(px_mpi_comm_t *c)
{
    px_topo_t *topo = px_topo_job();
    int n = c->size;
    if (!topo || c->is_inter || n < 3)
        return &px_tclus_none;
    px_coll_tclus_t *t = calloc(1, sizeof(*t));
    int *leaf = malloc(sizeof(int) * (size_t)n), *seen = malloc(sizeof(int) * (size_t)n);
    if (t) {
        t->cluster_of = malloc(sizeof(int) * (size_t)n);
        t->start = calloc((size_t)n + 1, sizeof(int));
        t->members = malloc(sizeof(int) * (size_t)n);
        t->host_of = malloc(sizeof(int) * (size_t)n);
        t->byhost = malloc(sizeof(int) * (size_t)n);
    }
    if (!t || !leaf || !seen || !t->cluster_of || !t->start || !t->members || !t->host_of ||
        !t->byhost) {
        free(leaf);
        free(seen);
        px_coll_tclus_free(t);
        return &px_tclus_none;
    }
    int k = 0;
    for (int r = 0; r < n; r++) {
        int host = t->host_of[r] = px_topo_job_host(px_mpi_comm_world_rank(c, r));
        leaf[r] = host >= 0 ? px_topo_host_leaf(topo, host) : -1;
        int j = 0;
        /* a rank whose host the description lacks is a cluster of its own */
        while (leaf[r] >= 0 && j < k && leaf[seen[j]] != leaf[r])
            j++;
        if (leaf[r] < 0 || j == k)
            seen[k++] = r;
        t->cluster_of[r] = j;
    }
    t->nclusters = k;
    for (int r = 0; r < n; r++)
        t->start[t->cluster_of[r] + 1]++;
    for (int j = 0; j < k; j++)
        t->start[j + 1] += t->start[j];
    int *fill = seen; /* reused: next free entry of each cluster */
    for (int j = 0; j < k; j++)
        fill[j] = t->start[j];
    for (int r = 0; r < n; r++)
        t->members[fill[t->cluster_of[r]]++] = r;
    /* within each cluster, each host's ranks together: a rank joins the
     * first earlier rank of its host (members are in rank order) */
    for (int j = 0; j < k; j++) {
        int b = t->start[j], e = t->start[j + 1], o = b;
        for (int i = b; i < e; i++) {
            int r = t->members[i], h = t->host_of[r], q = b;
            while (q < i && (h < 0 || t->host_of[t->members[q]] != h))
                q++;
            if (q < i)
                continue; /* placed with the first of its host */
            t->byhost[o++] = r;
            for (int m = i + 1; m < e && h >= 0; m++)
                if (t->host_of[t->members[m]] == h)
                    t->byhost[o++] = t->members[m];
        }
    }
    free(leaf);
    free(seen);
    /* one cluster, or one rank per cluster: nothing to gain over flat */
    t->state = k > 1 && k < n ? 1 : -1;
    return t;
}

static const px_coll_tclus_t *px_coll_tclus(px_mpi_comm_t *c)
{
    if (!c->tclus)
        c->tclus = px_tclus_build(c);
    return c->tclus;
}

int px_coll_tclus_usable(px_mpi_comm_t *c) { return px_coll_tclus(c)->state == 1; }

static char *px_tclus_at(const void *buf, int rank, int count, MPI_Datatype dt)
{
    return (char *)buf + (MPI_Aint)rank * count * px_mpi_dt_get(dt)->extent;
}

/* Links of a route compared between hosts (longer routes: the first ones) */
#define PX_TCLUS_MAXL 16

/* The part of the route between the root's host and host h that decides
 * how a cluster is entered: from the root (scatter) every link but the
 * last, into the root (gather) every link but the first, so the hosts of
 * one leaf whose routes take different spines differ. Returns its length,
 * 0 when there is no route. */
static int px_tclus_route_key(int hr, int h, int to_root, int *key)
{
    int links[PX_TCLUS_MAXL + 1];
    int k =
        hr < 0 || h < 0
            ? -1
            : (to_root ? px_topo_path_links(px_topo_job(), h, hr, 0, 0, links, PX_TCLUS_MAXL + 1)
                       : px_topo_path_links(px_topo_job(), hr, h, 0, 0, links, PX_TCLUS_MAXL + 1));
    if (k < 2)
        return 0;
    if (k > PX_TCLUS_MAXL + 1)
        k = PX_TCLUS_MAXL + 1;
    for (int i = 0; i < k - 1; i++)
        key[i] = links[i + (to_root != 0)];
    return k - 1;
}

/* Who each rank exchanges its block with in a gather (to_root 1) or a
 * scatter (0) rooted at root: the root for the ranks of the root's
 * cluster; elsewhere the lowest rank of its route group, the ranks of a
 * cluster whose routes from (or to) the root's host cross the same links
 * up to their leaf. One message per route group crosses the spines, not
 * one per cluster: the spines a fat-tree spreads a leaf's hosts over all
 * carry their part at once. Kept for the last root asked. */
static const struct px_tclus_routes *px_tclus_routes(px_coll_tclus_t *t, int n, int root,
                                                     int to_root)
{
    struct px_tclus_routes *g = &t->routes[to_root != 0];
    if (g->lead && g->root == root)
        return g;
    if (!g->lead) {
        g->lead = malloc(sizeof(int) * (size_t)n);
        g->first = malloc(sizeof(int) * (size_t)n);
        g->cnt = malloc(sizeof(int) * (size_t)n);
        g->mem = malloc(sizeof(int) * (size_t)n);
        if (!g->lead || !g->first || !g->cnt || !g->mem) {
            free(g->lead), free(g->first), free(g->cnt), free(g->mem);
            g->lead = g->first = g->cnt = g->mem = NULL;
            return NULL;
        }
    }
    int hr = t->host_of[root], cr = t->cluster_of[root];
    int lkey[PX_TCLUS_MAXL], nl[64], keys[64][PX_TCLUS_MAXL], lrank[64];
    for (int j = 0; j < t->nclusters; j++) {
        int ng = 0;
        for (int i = t->start[j]; i < t->start[j + 1]; i++) {
            int r = t->members[i];
            if (j == cr) {
                g->lead[r] = root;
                continue;
            }
            int kl = px_tclus_route_key(hr, t->host_of[r], to_root, lkey), q = 0;
            while (q < ng && !(nl[q] == kl && !memcmp(keys[q], lkey, sizeof(int) * (size_t)kl)))
                q++;
            if (q == ng && ng < 64) { /* a new group, led by its lowest rank: r */
                nl[ng] = kl;
                memcpy(keys[ng], lkey, sizeof(int) * (size_t)kl);
                lrank[ng++] = r;
            }
            g->lead[r] = lrank[q < ng ? q : 0];
        }
    }
    /* each leader's ranks together, in rank order */
    for (int r = 0; r < n; r++)
        g->cnt[r] = 0, g->first[r] = -1;
    for (int r = 0; r < n; r++)
        if (g->lead[r] != root)
            g->cnt[g->lead[r]]++;
    int o = 0;
    for (int r = 0; r < n; r++)
        if (g->cnt[r]) {
            g->first[r] = o;
            o += g->cnt[r];
            g->cnt[r] = 0;
        }
    for (int r = 0; r < n; r++)
        if (g->lead[r] != root) {
            int l = g->lead[r];
            g->mem[g->first[l] + g->cnt[l]++] = r;
        }
    g->root = root;
    return g;
}

/* Two-level gather: members send their block to their route group's
 * leader, which packs them in rank order and sends one message to the
 * root; the root receives its own cluster's blocks directly. */
PX_COLL_BUILDER(px_coll_gather_topo)
{
    px_coll_tclus_t *t = (px_coll_tclus_t *)px_coll_tclus(c);
    int n = c->size, me = c->rank, root = a->root;
    const struct px_tclus_routes *g = px_tclus_routes(t, n, root, 1);
    if (!g)
        return MPI_ERR_NO_MEM;
    size_t blk = a->bytes;
    if (me != root && g->lead[me] != me) {
        px_coll_sched_send(s, c, a->sbuf, a->scount, a->stype, g->lead[me]);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    if (me != root) {
        int first = g->first[me], cnt = g->cnt[me];
        char *tmp = px_coll_sched_alloc(s, (size_t)cnt * blk);
        if (!tmp)
            return MPI_ERR_NO_MEM;
        for (int i = 0; i < cnt; i++) {
            int r = g->mem[first + i];
            if (r == me)
                px_coll_sched_pack(s, a->sbuf, a->scount, a->stype, tmp + (size_t)i * blk);
            else
                px_coll_sched_recv(s, c, tmp + (size_t)i * blk, (MPI_Aint)blk, MPI_BYTE, r);
        }
        px_coll_sched_round(s);
        px_coll_sched_send(s, c, tmp, (MPI_Aint)((size_t)cnt * blk), MPI_BYTE, root);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    /* the root: its cluster's members straight into place, every leader's
     * blocks packed, then put in place */
    char **tmp = px_coll_sched_alloc(s, sizeof(char *) * (size_t)n);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    for (int r = 0; r < n; r++) {
        if (r == me)
            continue;
        if (g->lead[r] == root)
            px_coll_sched_recv(s, c, px_tclus_at(a->rbuf, r, a->rcount, a->rtype), a->rcount,
                               a->rtype, r);
        else if (g->lead[r] == r) {
            if (!(tmp[r] = px_coll_sched_alloc(s, (size_t)g->cnt[r] * blk)))
                return MPI_ERR_NO_MEM;
            px_coll_sched_recv(s, c, tmp[r], (MPI_Aint)((size_t)g->cnt[r] * blk), MPI_BYTE, r);
        }
    }
    if (a->sbuf != MPI_IN_PLACE && blk) {
        char *own = px_coll_sched_alloc(s, blk);
        if (!own)
            return MPI_ERR_NO_MEM;
        px_coll_sched_pack(s, a->sbuf, a->scount, a->stype, own);
        px_coll_sched_unpack(s, own, a->rcount, a->rtype,
                             px_tclus_at(a->rbuf, me, a->rcount, a->rtype));
    }
    px_coll_sched_round(s);
    for (int r = 0; r < n; r++) {
        if (r == me || g->lead[r] != r)
            continue;
        for (int i = 0; i < g->cnt[r]; i++)
            px_coll_sched_unpack(
                s, tmp[r] + (size_t)i * blk, a->rcount, a->rtype,
                px_tclus_at(a->rbuf, g->mem[g->first[r] + i], a->rcount, a->rtype));
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}

/* Two-level scatter: the root sends each route group's blocks, packed in
 * rank order, to its leader, which hands them out; the members of the
 * root's cluster get theirs directly. */
PX_COLL_BUILDER(px_coll_scatter_topo)
{
    px_coll_tclus_t *t = (px_coll_tclus_t *)px_coll_tclus(c);
    int n = c->size, me = c->rank, root = a->root;
    const struct px_tclus_routes *g = px_tclus_routes(t, n, root, 0);
    if (!g)
        return MPI_ERR_NO_MEM;
    size_t blk = a->bytes;
    if (me != root && g->lead[me] != me) {
        px_coll_sched_recv(s, c, a->rbuf, a->rcount, a->rtype, g->lead[me]);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    if (me != root) {
        int first = g->first[me], cnt = g->cnt[me];
        char *tmp = px_coll_sched_alloc(s, (size_t)cnt * blk);
        if (!tmp)
            return MPI_ERR_NO_MEM;
        px_coll_sched_recv(s, c, tmp, (MPI_Aint)((size_t)cnt * blk), MPI_BYTE, root);
        px_coll_sched_round(s);
        for (int i = 0; i < cnt; i++) {
            int r = g->mem[first + i];
            if (r == me)
                px_coll_sched_unpack(s, tmp + (size_t)i * blk, a->rcount, a->rtype, a->rbuf);
            else
                px_coll_sched_send(s, c, tmp + (size_t)i * blk, (MPI_Aint)blk, MPI_BYTE, r);
        }
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    for (int r = 0; r < n; r++) {
        if (r == me)
            continue;
        if (g->lead[r] == root) {
            px_coll_sched_send(s, c, px_tclus_at(a->sbuf, r, a->scount, a->stype), a->scount,
                               a->stype, r);
            continue;
        }
        if (g->lead[r] != r)
            continue;
        char *tmp = px_coll_sched_alloc(s, (size_t)g->cnt[r] * blk);
        if (!tmp)
            return MPI_ERR_NO_MEM;
        for (int i = 0; i < g->cnt[r]; i++)
            px_coll_sched_pack(s,
                               px_tclus_at(a->sbuf, g->mem[g->first[r] + i], a->scount, a->stype),
                               a->scount, a->stype, tmp + (size_t)i * blk);
        px_coll_sched_send(s, c, tmp, (MPI_Aint)((size_t)g->cnt[r] * blk), MPI_BYTE, r);
    }
    if (a->rbuf != MPI_IN_PLACE && blk) {
        char *own = px_coll_sched_alloc(s, blk);
        if (!own)
            return MPI_ERR_NO_MEM;
        px_coll_sched_pack(s, px_tclus_at(a->sbuf, me, a->scount, a->stype), a->scount, a->stype,
                           own);
        px_coll_sched_unpack(s, own, a->rcount, a->rtype, a->rbuf);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}

/* The host groups, at the first broadcast. */
static int px_tclus_groups(px_coll_tclus_t *t, int n)
{
    if (t->gorder)
        return 0;
    t->ghost = malloc(sizeof(int) * (size_t)n);
    t->gstart = malloc(sizeof(int) * ((size_t)n + 1));
    t->group_of = malloc(sizeof(int) * (size_t)n);
    if (!t->ghost || !t->gstart || !t->group_of)
        return -1;
    int k = 0;
    for (int i = 0; i < n; i++) {
        int r = t->byhost[i], h = t->host_of[r];
        if (!i || h < 0 || h != t->host_of[t->byhost[i - 1]]) {
            t->gstart[k] = i;
            t->ghost[k++] = h;
        }
        t->group_of[r] = k - 1;
    }
    t->gstart[k] = n;
    t->ngroups = k;
    t->gorder = calloc((size_t)k, sizeof(int *));
    return t->gorder ? 0 : -1;
}

/* Above this many hosts the delay rows (8 + 4 bytes a pair) are not kept
 * between trees: a new root's tree computes the rows it needs again. */
#define PX_TCLUS_KEEP_DELAY 512

/* The tree over the groups from root group rg, built at its first use. */
static const int *px_tclus_gorder(px_coll_tclus_t *t, int rg)
{
    if (t->gorder[rg])
        return t->gorder[rg];
    if (!t->delay && !(t->delay = px_topo_delay_new(px_topo_job(), t->ghost, t->ngroups)))
        return NULL;
    int *order = malloc(sizeof(int) * (size_t)t->ngroups);
    if (!order || px_topo_bcast_order(t->delay, rg, order) != PX_OK) {
        free(order);
        return NULL;
    }
    if (t->ngroups > PX_TCLUS_KEEP_DELAY) {
        px_topo_delay_free(t->delay);
        t->delay = NULL;
    }
    return t->gorder[rg] = order;
}

/* The rank that speaks for a group: the root in its own, its first rank elsewhere. */
static int px_tclus_glead(const px_coll_tclus_t *t, int g, int root)
{
    return t->group_of[root] == g ? root : t->byhost[t->gstart[g]];
}

/* Broadcast down a binomial tree over the hosts renumbered from the delay
 * matrix (px_topo_bcast_order: hop counts, or 1/min(link rate) when the
 * hosts' links differ in rate): each subtree, the largest first, takes
 * its hosts from its parent's keeping switch clusters whole, so each
 * leaf is entered over the spines once where the sizes allow, and the
 * positions that carry most of the tree get the fastest hosts. One rank
 * per host (the root on its own) takes part; each then hands the data to
 * the other ranks of its host. The tree is built at the first broadcast
 * from each root's host and kept with the communicator. (The node-aware
 * broadcast, smp, runs it among the node leaders.) */
PX_COLL_BUILDER(px_coll_bcast_topo)
{
    px_coll_tclus_t *t = (px_coll_tclus_t *)px_coll_tclus(c);
    int n = c->size, root = a->root, me = c->rank;
    if (px_tclus_groups(t, n) < 0)
        return MPI_ERR_NO_MEM;
    int rg = t->group_of[root], g = t->group_of[me], ng = t->ngroups;
    const int *order = px_tclus_gorder(t, rg);
    if (!order)
        return MPI_ERR_NO_MEM;
    int lead = px_tclus_glead(t, g, root);
    if (me != lead) {
        px_coll_sched_recv(s, c, a->rbuf, (MPI_Aint)a->bytes, MPI_BYTE, lead);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    int vr = 0, top = 1;
    while (order[vr] != g)
        vr++;
    while (top < ng)
        top <<= 1;
    if (vr) {
        int parent = order[vr - (vr & -vr)];
        px_coll_sched_recv(s, c, a->rbuf, (MPI_Aint)a->bytes, MPI_BYTE,
                           px_tclus_glead(t, parent, root));
        px_coll_sched_round(s);
    }
    for (int mask = (vr ? vr & -vr : top) >> 1; mask > 0; mask >>= 1)
        if (vr + mask < ng)
            px_coll_sched_send(s, c, a->rbuf, (MPI_Aint)a->bytes, MPI_BYTE,
                               px_tclus_glead(t, order[vr + mask], root));
    for (int i = t->gstart[g]; i < t->gstart[g + 1]; i++)
        if (t->byhost[i] != me)
            px_coll_sched_send(s, c, a->rbuf, (MPI_Aint)a->bytes, MPI_BYTE, t->byhost[i]);
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
