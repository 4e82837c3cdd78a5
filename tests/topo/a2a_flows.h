/* The flows of an alltoall schedule on the links between switches,
 * counted from the routes apart from the schedule generator: for the
 * checks of tests/topo and topo_dump --stats. */
#ifndef PX_TESTS_A2A_FLOWS_H
#define PX_TESTS_A2A_FLOWS_H

#include <stdlib.h>
#include <string.h>

#include "topo/topo.h"

/* The most distinct host pairs (flows) on one link between switches, in
 * one direction, in step st. */
static inline int step_flows(px_topo_t *t, const px_topo_a2a_t *s, const int *hosts, int st)
{
    int n = px_topo_a2a_ranks(s), nl = px_topo_num_links(t), ns = px_topo_num_switches(t),
        worst = 0;
    int *cnt = calloc((size_t)nl * 2 + 1, sizeof(int)), *sws = malloc(sizeof(int) * (ns + 1));
    int *lk = malloc(sizeof(int) * (ns + 2)), *seen = malloc(sizeof(int) * (size_t)n * 2);
    int m = 0;
    for (int r = 0; r < n; r++) {
        int d = px_topo_a2a_dst(s, st, r), dup = 0;
        if (d < 0 || hosts[r] < 0 || hosts[d] < 0 || hosts[r] == hosts[d])
            continue;
        for (int j = 0; j < m && !dup; j++)
            dup = seen[2 * j] == hosts[r] && seen[2 * j + 1] == hosts[d];
        if (dup)
            continue;
        seen[2 * m] = hosts[r];
        seen[2 * m++ + 1] = hosts[d];
        int k = px_topo_path(t, hosts[r], hosts[d], 0, 0, sws, ns + 1);
        px_topo_path_links(t, hosts[r], hosts[d], 0, 0, lk, ns + 2);
        for (int i = 1; i < k; i++) { /* link i joins switches i-1 and i */
            int *c = &cnt[2 * lk[i] + (sws[i - 1] < sws[i])];
            if (++*c > worst)
                worst = *c;
        }
    }
    free(cnt);
    free(sws);
    free(lk);
    free(seen);
    return worst;
}

/* The same over all steps. */
static inline int max_flows(px_topo_t *t, const px_topo_a2a_t *s, const int *hosts)
{
    int worst = 0;
    for (int st = 0; st < px_topo_a2a_steps(s); st++) {
        int w = step_flows(t, s, hosts, st);
        worst = w > worst ? w : worst;
    }
    return worst;
}

#endif
