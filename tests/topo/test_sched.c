/* The alltoall schedule generator (src/topo/sched.c) on the samples of this
 * folder and on generated fat-trees, with ranks placed one or several per
 * host and on a subset of the hosts: every ordered pair of ranks exchanges
 * exactly once, no rank sends or receives twice in a step, the pair
 * exchanges are symmetric, TACS1 keeps the conflict budget on every link
 * in every step (counted from the routes apart from the generator), TACS2
 * is no longer than the normal round-robin, and DCSS answers as the
 * allocation asks.
 *   test_sched SAMPLE_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "px_unit.h"
#include "topo/topo.h"
#include "sample.h"
#include "a2a_flows.h"

/* Every pair once, one send and one receive per rank and step, partners
 * symmetric where the schedule is of pair exchanges. */
static int valid(const px_topo_a2a_t *s, const char *what)
{
    int n = px_topo_a2a_ranks(s), ok = 1;
    unsigned char *seen = calloc((size_t)n * n, 1), *busy = malloc((size_t)n * 2);
    for (int st = 0; st < px_topo_a2a_steps(s) && ok; st++) {
        memset(busy, 0, (size_t)n * 2);
        for (int r = 0; r < n && ok; r++) {
            int d = px_topo_a2a_dst(s, st, r), f = px_topo_a2a_src(s, st, r);
            if (d < 0)
                continue;
            if (d == r || d >= n || busy[2 * r] || busy[2 * d + 1] || seen[(size_t)r * n + d]++) {
                fprintf(stderr, "%s: step %d: %d -> %d repeated or clashing\n", what, st, r, d);
                ok = 0;
            }
            busy[2 * r] = busy[2 * d + 1] = 1;
            if (px_topo_a2a_kind(s) != PX_TOPO_A2A_PAIRWISE &&
                (f != d || px_topo_a2a_dst(s, st, d) != r)) {
                fprintf(stderr, "%s: step %d: %d and %d not a pair\n", what, st, r, d);
                ok = 0;
            }
            if (px_topo_a2a_kind(s) == PX_TOPO_A2A_PAIRWISE && px_topo_a2a_dst(s, st, f) != r)
                ok = 0;
        }
    }
    for (int a = 0; a < n && ok; a++)
        for (int b = 0; b < n && ok; b++)
            if (a != b && seen[(size_t)a * n + b] != 1) {
                fprintf(stderr, "%s: %d -> %d never sent\n", what, a, b);
                ok = 0;
            }
    free(seen);
    free(busy);
    return ok;
}

static int check_fabric(px_topo_t *t, const char *name, const int *hosts, int n)
{
    char what[256];
    px_topo_a2a_t *s[4] = {0};
    int ok = 1;
    for (int k = 0; k < 4; k++) {
        snprintf(what, sizeof(what), "%s, %d ranks, %s", name, n,
                 px_topo_a2a_name((px_topo_a2a_kind_t)k));
        CHECK(px_topo_a2a_build(t, hosts, n, (px_topo_a2a_kind_t)k, 1, &s[k]) == PX_OK);
        if (!s[k])
            return 0;
        CHECK(valid(s[k], what));
    }
    int rr = px_topo_a2a_steps(s[PX_TOPO_A2A_ROUNDROBIN]);
    CHECK(px_topo_a2a_steps(s[PX_TOPO_A2A_PAIRWISE]) == n - 1);
    CHECK(px_topo_a2a_steps(s[PX_TOPO_A2A_TACS2]) <= rr);
    CHECK(px_topo_a2a_steps(s[PX_TOPO_A2A_TACS1]) >= px_topo_a2a_steps(s[PX_TOPO_A2A_TACS2]) ||
          px_topo_a2a_steps(s[PX_TOPO_A2A_TACS1]) >= n - 1);
    /* budget 1: two flows per link and direction at most; budget 0: one */
    int w1 = max_flows(t, s[PX_TOPO_A2A_TACS1], hosts, 2, NULL);
    /* TACS2 no worse than the round-robin: on the busiest link, and in
     * flows over the budget */
    long ex2 = 0, exrr = 0;
    int w2 = max_flows(t, s[PX_TOPO_A2A_TACS2], hosts, 2, &ex2);
    int wrr = max_flows(t, s[PX_TOPO_A2A_ROUNDROBIN], hosts, 2, &exrr);
    CHECK(w2 <= wrr && ex2 <= exrr);
    /* where the round-robin keeps the budget, TACS1 is no longer */
    if (wrr <= 2)
        CHECK(px_topo_a2a_steps(s[PX_TOPO_A2A_TACS1]) == rr);
    if (w2 > wrr || ex2 > exrr)
        fprintf(stderr, "%s, %d ranks: tacs2 %d flows, %ld over; round-robin %d, %ld\n", name, n,
                w2, ex2, wrr, exrr);
    CHECK(w1 <= 2);
    px_topo_a2a_t *s0 = NULL;
    CHECK(px_topo_a2a_build(t, hosts, n, PX_TOPO_A2A_TACS1, 0, &s0) == PX_OK);
    if (s0) {
        snprintf(what, sizeof(what), "%s, %d ranks, tacs1 budget 0", name, n);
        CHECK(valid(s0, what));
        CHECK(max_flows(t, s0, hosts, 1, NULL) <= 1);
        CHECK(px_topo_a2a_steps(s0) >= px_topo_a2a_steps(s[PX_TOPO_A2A_TACS1]) - n / 4);
    }
    if (w1 > 2)
        fprintf(stderr, "%s, %d ranks: tacs1 puts %d flows on a link\n", name, n, w1);
    px_topo_a2a_free(s0);
    for (int k = 0; k < 4; k++)
        px_topo_a2a_free(s[k]);
    return ok;
}

/* One rank per host; two or three on some; every other host. */
static void check_placements(px_topo_t *t, const char *name)
{
    int nh = px_topo_num_hosts(t), n = 0;
    int *hosts = malloc(sizeof(int) * (size_t)nh * 3);
    for (int h = 0; h < nh; h++)
        hosts[h] = h;
    check_fabric(t, name, hosts, nh);
    for (int h = 0; h < nh; h++)
        for (int j = 0; j < 1 + (h % 3 == 0) + (h % 5 == 0); j++)
            hosts[n++] = h;
    check_fabric(t, name, hosts, n);
    n = 0;
    for (int h = 0; h < nh; h += 2)
        hosts[n++] = h;
    if (n > 1)
        check_fabric(t, name, hosts, n);
    free(hosts);
}

/* A two-level fat-tree in topology.conf: `per` hosts on each leaf, every
 * leaf cabled to each of `spines` spines (over-subscribed when fewer). */
static px_topo_t *fattree(int nodes, int per, int spines)
{
    char *text = malloc(1 << 16), err[256];
    size_t o = 0;
    int leaves = (nodes + per - 1) / per;
    for (int l = 0; l < leaves; l++)
        o += (size_t)snprintf(text + o, (1 << 16) - o, "SwitchName=leaf%d Nodes=n[%04d-%04d]\n", l,
                              l * per, (l + 1) * per > nodes ? nodes - 1 : (l + 1) * per - 1);
    for (int s = 0; s < spines; s++)
        o += (size_t)snprintf(text + o, (1 << 16) - o, "SwitchName=spine%d Switches=leaf[0-%d]\n",
                              s, leaves - 1);
    px_topo_t *t = NULL;
    if (px_topo_parse(text, o, "fattree.conf", &t, err, sizeof(err)) != PX_OK)
        fprintf(stderr, "fattree: %s\n", err);
    free(text);
    return t;
}

static void test_samples(void)
{
    static const char *const names[] = {"pxfab-fattree.json", "fattree.ibnet",
                                        "figure54.topology.conf", "uneven.topology.conf"};
    for (int i = 0; i < 4; i++) {
        px_topo_t *t = load(names[i]);
        CHECK(t != NULL);
        if (t)
            check_placements(t, names[i]);
        px_topo_free(t);
    }
}

static void test_fattrees(void)
{
    static const int shapes[][3] = {{48, 8, 2}, {64, 16, 4}, {96, 16, 2}, {130, 16, 4}};
    for (int i = 0; i < 4; i++) {
        px_topo_t *t = fattree(shapes[i][0], shapes[i][1], shapes[i][2]);
        char name[64];
        snprintf(name, sizeof(name), "fat-tree %d/%d/%d", shapes[i][0], shapes[i][1], shapes[i][2]);
        CHECK(t != NULL);
        if (t)
            check_placements(t, name);
        px_topo_free(t);
    }
}

/* Farthest first: the first step crosses the spines as much as the
 * budget lets it (4 leaves, 2 uplinks each, 2 flows per uplink: 16 ranks
 * exchange across), and the pairs under one leaf fill the rest of it. */
static void test_order(void)
{
    px_topo_t *t = fattree(32, 8, 2);
    int hosts[32];
    for (int h = 0; h < 32; h++)
        hosts[h] = h;
    px_topo_a2a_t *s = NULL;
    CHECK(t && px_topo_a2a_build(t, hosts, 32, PX_TOPO_A2A_TACS1, 1, &s) == PX_OK);
    if (!s) {
        px_topo_free(t);
        return;
    }
    int far = 0, near = 0;
    for (int r = 0; r < 32; r++) {
        int d = px_topo_a2a_dst(s, 0, r);
        far += d >= 0 && px_topo_hops(t, r, d) == 3;
        near += d >= 0 && px_topo_hops(t, r, d) == 1;
    }
    CHECK(far == 16);
    CHECK(near == 16);
    CHECK(step_flows(t, s, hosts, 0, 2, NULL) == 2);
    px_topo_a2a_free(s);
    px_topo_free(t);
}

/* DCSS: pairwise for one leaf, for one host per leaf, and for a sparse
 * allocation; the schedule for hosts sharing uplinks. */
static void test_dcss(void)
{
    px_topo_t *t = fattree(64, 16, 4);
    int hosts[64];
    for (int h = 0; h < 64; h++)
        hosts[h] = h;
    CHECK(px_topo_a2a_dcss(t, hosts, 64, 5) == 1);
    CHECK(px_topo_a2a_dcss(t, hosts, 16, 5) == 0); /* one leaf */
    int spread[4] = {0, 16, 32, 48};
    CHECK(px_topo_a2a_dcss(t, spread, 4, 5) == 0);  /* no uplink shared */
    CHECK(px_topo_a2a_dcss(t, hosts, 64, 30) == 0); /* 16 of 64 = 25% */
    int two[4] = {0, 1, 16, 17};
    CHECK(px_topo_a2a_dcss(t, two, 4, 5) == 1);
    CHECK(px_topo_a2a_dcss(NULL, two, 4, 5) == 0);
    px_topo_free(t);
}

int main(int argc, char **argv)
{
    dir = argc > 1 ? argv[1] : ".";
    test_samples();
    test_fattrees();
    test_order();
    test_dcss();
    return px_unit_report();
}
