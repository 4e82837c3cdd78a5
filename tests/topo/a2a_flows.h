/* The flows of an alltoall schedule on the links between switches,
 * counted from the routes apart from the schedule generator: for the
 * checks of tests/topo and topo_dump --stats. */
#ifndef PX_TESTS_A2A_FLOWS_H
#define PX_TESTS_A2A_FLOWS_H

#include <stdlib.h>
#include <string.h>

#include "topo/topo.h"

/* The most distinct host pairs (flows) on one link between switches, in
 * one direction, in step st; adds to *excess the flows beyond cap on each
 * link (when excess is not NULL). */
static inline int step_flows(px_topo_t *t, const px_topo_a2a_t *s, const int *hosts, int st,
                             int cap, long *excess)
{
    int n = px_topo_a2a_ranks(s), nl = px_topo_num_links(t), ns = px_topo_num_switches(t),
        worst = 0;
    size_t hs = 16;
    while (hs < 2 * (size_t)n)
        hs *= 2;
    int *cnt = calloc((size_t)nl * 2 + 1, sizeof(int)), *sws = malloc(sizeof(int) * (ns + 1));
    int *lk = malloc(sizeof(int) * (ns + 2));
    long *seen = malloc(sizeof(long) * hs); /* host pairs met in this step, hashed */
    for (size_t i = 0; i < hs; i++)
        seen[i] = -1;
    for (int r = 0; r < n; r++) {
        int d = px_topo_a2a_dst(s, st, r);
        if (d < 0 || hosts[r] < 0 || hosts[d] < 0 || hosts[r] == hosts[d])
            continue;
        long key = (long)hosts[r] * 1000003L + hosts[d];
        size_t h = (size_t)key * 2654435761u & (hs - 1);
        while (seen[h] >= 0 && seen[h] != key)
            h = (h + 1) & (hs - 1);
        if (seen[h] == key)
            continue;
        seen[h] = key;
        int k = px_topo_path(t, hosts[r], hosts[d], 0, 0, sws, ns + 1);
        px_topo_path_links(t, hosts[r], hosts[d], 0, 0, lk, ns + 2);
        for (int i = 1; i < k; i++) { /* link i joins switches i-1 and i */
            int *c = &cnt[2 * lk[i] + (sws[i - 1] < sws[i])];
            if (++*c > worst)
                worst = *c;
            if (excess && *c > cap)
                ++*excess;
        }
    }
    free(cnt);
    free(sws);
    free(lk);
    free(seen);
    return worst;
}

/* The same over all steps. */
static inline int max_flows(px_topo_t *t, const px_topo_a2a_t *s, const int *hosts, int cap,
                            long *excess)
{
    int worst = 0;
    for (int st = 0; st < px_topo_a2a_steps(s); st++) {
        int w = step_flows(t, s, hosts, st, cap, excess);
        worst = w > worst ? w : worst;
    }
    return worst;
}

#endif
