/* Switch clusters: the dissertation's neighbour-joining variant, an
 * agglomerative minimum-distance complete-linkage clustering of the hosts
 * by hop count. Each step takes the closest active pair, adds every active
 * node at that distance from the first of the pair, keeps those all at
 * that distance from each other, and joins them under a new node whose
 * distance to the rest is the largest of its members'. Hosts of one leaf
 * switch (1 hop apart) join first, then the leaves under one switch, and
 * so on; the tree's levels are the switch clusters. The same steps, in the
 * same order, are in python/plexus/topo/cluster.py. */
#include "topo_impl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

px_status_t px_topo_cluster_matrix(int n, int *d, int **cluster_p, int **nclusters_p, int *depth_p)
{
    int ids = 2 * n + 1;
    int *node = malloc(sizeof(int) * (size_t)n), *active = malloc(sizeof(int) * (size_t)n);
    int *parent = malloc(sizeof(int) * (size_t)ids), *depth = malloc(sizeof(int) * (size_t)ids);
    int *list = malloc(sizeof(int) * (size_t)n), *gone = malloc(sizeof(int) * (size_t)n);
    int *row = malloc(sizeof(int) * (size_t)n), *chain = malloc(sizeof(int) * (size_t)ids);
    int *cluster = NULL, *nclusters = NULL;
    px_status_t st = PX_ERR_NO_MEMORY;
    if (!node || !active || !parent || !depth || !list || !gone || !row || !chain)
        goto out;
    for (int i = 0; i < n; i++) {
        node[i] = i;
        active[i] = 1;
    }
    for (int i = 0; i < ids; i++)
        parent[i] = -1;
    int next = n;
    for (;;) {
        int best = PX_TOPO_FAR, bi = -1, bj = -1;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; active[i] && j < n; j++)
                if (active[j] && d[(size_t)i * n + j] < best) {
                    best = d[(size_t)i * n + j];
                    bi = i;
                    bj = j;
                }
        if (bi < 0)
            break;
        int nl = 0;
        list[nl++] = bi;
        list[nl++] = bj;
        for (int k = 0; k < n; k++)
            if (active[k] && k != bi && k != bj && d[(size_t)bi * n + k] == best)
                list[nl++] = k;
        for (int x = 0; x < nl; x++)
            gone[x] = 0;
        for (int x = 0; x < nl; x++)
            for (int y = 0; !gone[x] && y < nl; y++)
                if (y != x && !gone[y] && d[(size_t)list[x] * n + list[y]] != best)
                    gone[y] = 1;
        int slot = n, id = next++;
        for (int x = 0; x < nl; x++)
            if (!gone[x]) {
                parent[node[list[x]]] = id;
                if (list[x] < slot)
                    slot = list[x];
            }
        for (int k = 0; k < n; k++) {
            row[k] = 0;
            for (int x = 0; x < nl; x++) {
                int v = d[(size_t)list[x] * n + k];
                if (!gone[x] && v > row[k])
                    row[k] = v;
            }
        }
        for (int x = 0; x < nl; x++)
            if (!gone[x])
                active[list[x]] = 0;
        active[slot] = 1;
        node[slot] = id;
        for (int k = 0; k < n; k++)
            if (active[k] && k != slot)
                d[(size_t)slot * n + k] = d[(size_t)k * n + slot] = row[k];
    }
    /* the root: the last join when it took everyone, else a node above
     * what is left (hosts with no route between them, or a lone host) */
    int left = 0, last = -1;
    for (int k = 0; k < n; k++)
        if (active[k]) {
            left++;
            last = node[k];
        }
    int root = last;
    if (left > 1 || last < n) {
        root = next++;
        for (int k = 0; k < n; k++)
            if (active[k])
                parent[node[k]] = root;
    }
    for (int i = 0; i < next; i++)
        depth[i] = -1;
    depth[root] = 0;
    int maxd = 0;
    for (int h = 0; h < n; h++) {
        int x = h, nc = 0;
        while (depth[x] < 0) {
            chain[nc++] = x;
            x = parent[x];
        }
        while (nc > 0) {
            nc--;
            depth[chain[nc]] = depth[parent[chain[nc]]] + 1;
        }
        if (depth[h] > maxd)
            maxd = depth[h];
    }
    cluster = malloc(sizeof(int) * (size_t)(n ? n : 1) * (size_t)(maxd + 1));
    nclusters = calloc((size_t)maxd + 1, sizeof(int));
    if (!cluster || !nclusters)
        goto out;
    /* chain now maps a tree node to its cluster id at the level */
    for (int level = 0; level <= maxd; level++) {
        for (int i = 0; i < next; i++)
            chain[i] = -1;
        for (int h = 0; h < n; h++) {
            int x = h;
            while (depth[x] > level)
                x = parent[x];
            if (chain[x] < 0)
                chain[x] = nclusters[level]++;
            cluster[(size_t)level * n + h] = chain[x];
        }
    }
    *cluster_p = cluster;
    *nclusters_p = nclusters;
    *depth_p = maxd;
    cluster = nclusters = NULL;
    st = PX_OK;
out:
    free(cluster);
    free(nclusters);
    free(node);
    free(active);
    free(parent);
    free(depth);
    free(list);
    free(gone);
    free(row);
    free(chain);
    return st;
}

static px_status_t px_topo_build_clusters(px_topo_t *t)
{
    if (t->clustered)
        return PX_OK;
    int n = t->nhosts;
    int *d = malloc(sizeof(int) * (size_t)(n ? n : 1) * (size_t)n);
    if (!d)
        return PX_ERR_NO_MEMORY;
    for (int i = 0; i < n; i++) {
        d[(size_t)i * n + i] = 0;
        for (int j = i + 1; j < n; j++) {
            int h = px_topo_hops(t, i, j);
            d[(size_t)i * n + j] = d[(size_t)j * n + i] = h < 0 ? PX_TOPO_FAR : h;
        }
    }
    int *cluster, *nclusters, depth;
    px_status_t st = px_topo_cluster_matrix(n, d, &cluster, &nclusters, &depth);
    free(d);
    if (st != PX_OK)
        return st;
    free(t->cluster);
    free(t->nclusters);
    t->cluster = cluster;
    t->nclusters = nclusters;
    t->depth = depth;
    t->clustered = 1;
    return PX_OK;
}

int px_topo_depth(px_topo_t *t) { return px_topo_build_clusters(t) == PX_OK ? t->depth : -1; }

int px_topo_cluster(px_topo_t *t, int host, int level)
{
    if (px_topo_build_clusters(t) != PX_OK || host < 0 || host >= t->nhosts || level < 0)
        return -1;
    if (level > t->depth)
        level = t->depth;
    return t->cluster[(size_t)level * t->nhosts + host];
}

int px_topo_num_clusters(px_topo_t *t, int level)
{
    if (px_topo_build_clusters(t) != PX_OK || level < 0)
        return -1;
    return t->nclusters[level > t->depth ? t->depth : level];
}

int px_topo_num_clusters_of(px_topo_t *t, int level, const int *hosts, int n)
{
    int count = 0;
    for (int i = 0; i < n; i++) {
        int c = px_topo_cluster(t, hosts[i], level), first = 1;
        if (c < 0)
            return -1;
        for (int j = 0; j < i && first; j++)
            first = px_topo_cluster(t, hosts[j], level) != c;
        count += first;
    }
    return count;
}

int px_topo_sharing(px_topo_t *t, const int *hosts, int n, int *shared)
{
    int nsw = t->nswitches;
    /* first host seen on each link, per direction (0 up, 1 down) */
    int *first = malloc(sizeof(int) * 2 * (size_t)(t->nlinks ? t->nlinks : 1));
    int *mark = calloc((size_t)(t->nhosts ? t->nhosts : 1), sizeof(int));
    int *sws = malloc(sizeof(int) * (size_t)(nsw + 1)), *links = malloc(sizeof(int) * (nsw + 2));
    int count = -1;
    if (!first || !mark || !sws || !links)
        goto out;
    for (int l = 0; l < 2 * t->nlinks; l++)
        first[l] = -1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int a = hosts[i], b = hosts[j];
            if (a == b || px_topo_host_leaf(t, a) == px_topo_host_leaf(t, b))
                continue;
            int k = px_topo_walk(t, a, b, 0, 0, sws, nsw + 1, links, nsw + 2);
            for (int s = 1; s < k; s++) {
                int lo = t->v[t->switches[sws[s - 1]]].level;
                int hi = t->v[t->switches[sws[s]]].level;
                int dir = lo == 0 && hi > 0 ? 0 : lo > 0 && hi == 0 ? 1 : -1;
                if (dir < 0)
                    continue;
                int user = dir == 0 ? a : b, *f = &first[2 * links[s] + dir];
                if (*f < 0)
                    *f = user;
                else if (*f != user)
                    mark[*f] = mark[user] = 1;
            }
        }
    count = 0;
    for (int i = 0; i < n; i++) {
        if (shared)
            shared[i] = hosts[i] >= 0 && hosts[i] < t->nhosts && mark[hosts[i]];
        int dup = 0;
        for (int j = 0; j < i && !dup; j++)
            dup = hosts[j] == hosts[i];
        count += !dup && hosts[i] >= 0 && hosts[i] < t->nhosts && mark[hosts[i]];
    }
out:
    free(first);
    free(mark);
    free(sws);
    free(links);
    return count;
}

double px_topo_hosts_per_leaf(px_topo_t *t, const int *hosts, int n)
{
    int leaves = 0, counted = 0;
    for (int i = 0; i < n; i++) {
        int dup = 0, leaf = px_topo_host_leaf(t, hosts[i]);
        for (int j = 0; j < i && !dup; j++)
            dup = hosts[j] == hosts[i];
        if (dup || leaf < 0)
            continue;
        counted++;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = hosts[j] != hosts[i] && px_topo_host_leaf(t, hosts[j]) == leaf;
        leaves += !seen;
    }
    return leaves ? (double)counted / leaves : 0.0;
}
