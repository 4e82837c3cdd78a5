/* The fabric model on the samples of this folder: parsing of each format,
 * routes and hop counts, the switch clusters, the queries, the compact
 * form the job shares, and the errors a bad description gives.
 *   test_topo SAMPLE_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "px_unit.h"
#include "topo/topo.h"
#include "sample.h"

/* A sample's text into buf (NUL-terminated); returns its length. */
static size_t read_sample(const char *name, char *buf, size_t size)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    size_t len = f ? fread(buf, 1, size - 1, f) : 0;
    if (f)
        fclose(f);
    buf[len] = '\0';
    return len;
}

static int H(px_topo_t *t, const char *name) { return px_topo_host_find(t, name); }

static int hops(px_topo_t *t, const char *a, const char *b)
{
    return px_topo_hops(t, H(t, a), H(t, b));
}

/* "sw1 sw2 ..." of the route from a to b over path p */
static const char *path_str(px_topo_t *t, const char *a, const char *b, int p)
{
    static char buf[512];
    int sws[16], n = px_topo_path(t, H(t, a), H(t, b), 0, p, sws, 16);
    buf[0] = '\0';
    for (int i = 0; i < n && i < 16; i++)
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? " " : "",
                 px_topo_switch_name(t, sws[i]));
    return n < 0 ? "(none)" : buf;
}

static int set(px_topo_t *t, const char *names, int *out)
{
    char copy[512];
    int n = 0;
    snprintf(copy, sizeof(copy), "%s", names);
    for (char *s = strtok(copy, " "); s; s = strtok(NULL, " "))
        out[n++] = H(t, s);
    return n;
}

static void test_slurm(void)
{
    px_topo_t *t = load("figure54.topology.conf");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(!strcmp(px_topo_format(t), "slurm"));
    CHECK(px_topo_num_hosts(t) == 8 && px_topo_num_switches(t) == 7);
    CHECK(!strcmp(px_topo_host_name(t, 0), "cn01") && !strcmp(px_topo_host_name(t, 7), "cn08"));
    CHECK(H(t, "cn05") == 4 && H(t, "cn05.cluster.example") == 4 && H(t, "cn9") == -1);
    CHECK(hops(t, "cn01", "cn01") == 0);
    CHECK(hops(t, "cn01", "cn02") == 1);
    CHECK(hops(t, "cn01", "cn04") == 3);
    CHECK(hops(t, "cn01", "cn08") == 5);
    CHECK(hops(t, "cn08", "cn01") == 5);
    CHECK(!strcmp(path_str(t, "cn02", "cn06", 0), "edge0 agg0 core agg1 edge2"));
    int links[8];
    CHECK(px_topo_path_links(t, H(t, "cn01"), H(t, "cn03"), 0, 0, links, 8) == 4);
    CHECK(px_topo_link_rate(t, links[0]) == 10000000000ull);
    CHECK(px_topo_link_rate(t, links[1]) == 40000000000ull);
    /* Figure 5.4: two clusters at level 1, four at level 2 */
    CHECK(px_topo_depth(t) == 3);
    CHECK(px_topo_num_clusters(t, 0) == 1);
    CHECK(px_topo_num_clusters(t, 1) == 2);
    CHECK(px_topo_num_clusters(t, 2) == 4);
    CHECK(px_topo_num_clusters(t, 3) == 8);
    CHECK(px_topo_cluster(t, H(t, "cn04"), 1) == 0 && px_topo_cluster(t, H(t, "cn05"), 1) == 1);
    CHECK(px_topo_cluster(t, H(t, "cn03"), 2) == 1 && px_topo_cluster(t, H(t, "cn04"), 2) == 1);
    CHECK(px_topo_cluster(t, H(t, "cn07"), 2) == 3);
    int s[8], n = set(t, "cn01 cn03 cn04", s);
    CHECK(px_topo_num_clusters_of(t, 1, s, n) == 1 && px_topo_num_clusters_of(t, 2, s, n) == 2);
    CHECK(px_topo_hosts_per_leaf(t, s, n) == 1.5);
    px_topo_free(t);
}

static void test_uneven(void)
{
    px_topo_t *t = load("uneven.topology.conf");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(hops(t, "x1", "a1") == 4 && hops(t, "a6", "a1") == 5 && hops(t, "x1", "a6") == 4);
    /* complete linkage: leafx joins mid1's branch (4 hops) before leaf3,
     * which is 5 hops from mid1's hosts */
    CHECK(px_topo_depth(t) == 4);
    CHECK(px_topo_num_clusters(t, 1) == 2);
    CHECK(px_topo_cluster(t, H(t, "x2"), 1) == px_topo_cluster(t, H(t, "a1"), 1));
    CHECK(px_topo_cluster(t, H(t, "a6"), 1) != px_topo_cluster(t, H(t, "a1"), 1));
    CHECK(px_topo_cluster(t, H(t, "a4"), 2) == px_topo_cluster(t, H(t, "a1"), 2));
    CHECK(px_topo_cluster(t, H(t, "a4"), 3) != px_topo_cluster(t, H(t, "a1"), 3));
    CHECK(px_topo_cluster(t, H(t, "a6"), 2) != px_topo_cluster(t, H(t, "a7"), 2));
    px_topo_free(t);
}

static void test_ibnet(void)
{
    px_topo_t *t = load("fattree.ibnet");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(!strcmp(px_topo_format(t), "ibnetdiscover"));
    CHECK(px_topo_num_hosts(t) == 10 && px_topo_num_switches(t) == 6 && px_topo_num_links(t) == 18);
    CHECK(H(t, "node01") == 0 && H(t, "node10") == 9);
    CHECK(hops(t, "node01", "node05") == 1 && hops(t, "node01", "node06") == 3);
    /* destination-based spreading: node06 is host 5, 5 mod 4 spines */
    CHECK(!strcmp(path_str(t, "node01", "node06", 0), "leaf-1 spine-2 leaf-2"));
    CHECK(!strcmp(path_str(t, "node02", "node07", 0), "leaf-1 spine-3 leaf-2"));
    CHECK(!strcmp(path_str(t, "node07", "node04", 0), "leaf-2 spine-4 leaf-1"));
    CHECK(!strcmp(path_str(t, "node07", "node04", 1), "leaf-2 spine-1 leaf-1"));
    int links[4];
    CHECK(px_topo_path_links(t, 0, 5, 0, 0, links, 4) == 4);
    CHECK(px_topo_link_rate(t, links[0]) == 40000000000ull); /* 4xQDR */
    CHECK(px_topo_depth(t) == 2 && px_topo_num_clusters(t, 1) == 2);
    int s[10], n;
    n = set(t, "node01 node02 node06 node07", s);
    CHECK(px_topo_sharing(t, s, n, NULL) == 4);
    n = set(t, "node01 node06", s);
    CHECK(px_topo_sharing(t, s, n, NULL) == 0);
    int shared[3];
    n = set(t, "node01 node02 node06", s);
    CHECK(px_topo_sharing(t, s, n, shared) == 2);
    CHECK(shared[0] && shared[1] && !shared[2]);
    n = set(t, "node01 node02 node03", s);
    CHECK(px_topo_sharing(t, s, n, NULL) == 0); /* one leaf: nothing crosses */
    n = set(t, "node01 node02 node03 node06", s);
    CHECK(px_topo_hosts_per_leaf(t, s, n) == 2.0);
    px_topo_free(t);
}

/* Repeated switch descriptions, a host with two CAs on two planes, a
 * description with spaces, and the compact form the job shares. */
static void test_ibnet_inline(void)
{
    const char *text =
        "Switch\t36 \"S-0002c9020046c588\"\t\t# \"Infiniscale-IV Mellanox Technologies\" base "
        "port 0 lid 2 lmc 0\n"
        "[1]\t\"H-0002c90300293e1e\"[1](2c90300293e1f) \t\t# \"gpu1 mlx4_0\" lid 6 4xFDR\n"
        "[2]\t\"H-0002c90300293eba\"[1](2c90300293ebb) \t\t# \"gpu2 mlx4_0\" lid 8 4xFDR\n"
        "\n"
        "Switch\t36 \"S-0002c9020046c600\"\t\t# \"Infiniscale-IV Mellanox Technologies\" base "
        "port 0 lid 3 lmc 0\n"
        "[1]\t\"H-0002c90300293e20\"[1](2c90300293e21) \t\t# \"gpu1 mlx4_1\" lid 7 4xEDR\n"
        "[2]\t\"H-0002c90300293ec0\"[1](2c90300293ec1) \t\t# \"gpu2 mlx4_1\" lid 9 4xEDR\n"
        "\n"
        "Ca\t1 \"H-0002c90300293e1e\"\t\t# \"gpu1 mlx4_0\"\n"
        "[1](2c90300293e1f) \t\"S-0002c9020046c588\"[1]\t\t# lid 6 lmc 0 \"Infiniscale-IV "
        "Mellanox Technologies\" lid 2 4xFDR\n";
    char err[256];
    px_topo_t *t = NULL;
    CHECK(px_topo_parse(text, strlen(text), "inline", &t, err, sizeof(err)) == PX_OK);
    if (!t)
        return;
    CHECK(px_topo_num_hosts(t) == 2 && px_topo_num_switches(t) == 2);
    CHECK(!strcmp(px_topo_switch_name(t, 0), "S-0002c9020046c588"));
    CHECK(px_topo_hops_rail(t, 0, 1, 0, 0) == 1 && px_topo_hops_rail(t, 0, 1, 1, 0) == 1);
    int sws[2], links[2];
    CHECK(px_topo_path(t, 0, 1, 1, 0, sws, 2) == 1 && sws[0] == 1);
    CHECK(px_topo_path_links(t, 0, 1, 1, 0, links, 2) == 2);
    CHECK(px_topo_link_rate(t, links[0]) == 100000000000ull); /* 4xEDR */
    char *ser;
    size_t len;
    CHECK(px_topo_serialize(t, &ser, &len) == PX_OK);
    px_topo_t *u = NULL;
    CHECK(px_topo_parse(ser, len, "model", &u, err, sizeof(err)) == PX_OK);
    if (u) {
        CHECK(!strcmp(px_topo_format(u), "ibnetdiscover"));
        CHECK(px_topo_num_hosts(u) == 2 && px_topo_num_links(u) == px_topo_num_links(t));
        CHECK(px_topo_path(u, 0, 1, 1, 0, sws, 2) == 1 && sws[0] == 1);
        CHECK(px_topo_link_rate(u, links[0]) == 100000000000ull);
        px_topo_free(u);
    }
    free(ser);
    px_topo_free(t);
}

static void test_pxfab_json(void)
{
    px_topo_t *t = load("pxfab-fattree.json");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(!strcmp(px_topo_format(t), "plexus-json"));
    CHECK(px_topo_num_hosts(t) == 4 && px_topo_num_switches(t) == 4 && px_topo_num_links(t) == 8);
    /* pxfab's own tables: the path index moves to the other spine */
    CHECK(!strcmp(path_str(t, "node0", "node2", 0), "leaf0 spine0 leaf1"));
    CHECK(!strcmp(path_str(t, "node0", "node2", 1), "leaf0 spine1 leaf1"));
    CHECK(!strcmp(path_str(t, "node0", "node3", 0), "leaf0 spine1 leaf1"));
    CHECK(px_topo_hops_rail(t, 0, 2, 0, 2) == -1); /* two addresses per rail */
    int links[4];
    CHECK(px_topo_path_links(t, 0, 2, 0, 0, links, 4) == 4);
    CHECK(px_topo_link_rate(t, links[0]) == 1000000000ull);
    CHECK(px_topo_link_rate(t, links[1]) == 500000000ull);

    /* without the tables, the computed routes are the same */
    static char text[1 << 16];
    size_t len = read_sample("pxfab-fattree.json", text, sizeof(text));
    char *r = strstr(text, "\"routing\"");
    CHECK(r != NULL);
    if (r)
        r[1] = 'x'; /* "xouting": no tables */
    px_topo_t *c = NULL;
    char err[256];
    CHECK(px_topo_parse(text, len, "no-tables", &c, err, sizeof(err)) == PX_OK);
    int same = c != NULL;
    for (int a = 0; c && a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int p = 0; p < 2; p++) {
                int s1[4], s2[4];
                int n1 = px_topo_path(t, a, b, 0, p, s1, 4),
                    n2 = px_topo_path(c, a, b, 0, p, s2, 4);
                same &= n1 == n2 && !memcmp(s1, s2, sizeof(int) * (size_t)(n1 > 0 ? n1 : 0));
            }
    CHECK(same);
    px_topo_free(c);
    px_topo_free(t);
}

/* OpenSM's forwarding tables after ibnetdiscover's text (lft.ibnet: as
 * ibroute and dump_lfts.sh print them; lft-opensm.ibnet: as OpenSM writes
 * opensm-lfts.dump). The computed routes of that fabric are min-hop,
 * node03 over spine-1 from leaf-1; the tables send it over spine-2, and
 * node05 from leaf-1 on a detour down to leaf-2 and up again (5 hops). */
static void test_lfts(void)
{
    px_topo_t *t = load("lft.ibnet");
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(px_topo_num_hosts(t) == 6 && px_topo_num_switches(t) == 5 && px_topo_num_links(t) == 12);
    CHECK(!strcmp(path_str(t, "node01", "node03", 0), "leaf-1 spine-2 leaf-2"));
    CHECK(hops(t, "node01", "node05") == 5);
    CHECK(!strcmp(path_str(t, "node02", "node05", 0), "leaf-1 spine-1 leaf-2 spine-2 leaf-3"));
    CHECK(!strcmp(path_str(t, "node03", "node05", 0), "leaf-2 spine-2 leaf-3"));
    CHECK(!strcmp(path_str(t, "node05", "node01", 0), "leaf-3 spine-1 leaf-1"));
    /* node06 has lmc 1: its second LID is path 1; no third */
    CHECK(!strcmp(path_str(t, "node01", "node06", 1), "leaf-1 spine-1 leaf-3"));
    CHECK(px_topo_hops_rail(t, H(t, "node01"), H(t, "node06"), 0, 2) == -1);
    /* the tables travel in the compact form the job shares */
    char *ser, err[256];
    size_t len;
    px_topo_t *u = NULL;
    CHECK(px_topo_serialize(t, &ser, &len) == PX_OK);
    CHECK(px_topo_parse(ser, len, "model", &u, err, sizeof(err)) == PX_OK);
    if (u) {
        CHECK(hops(u, "node01", "node05") == 5);
        px_topo_free(u);
    }
    free(ser);
    px_topo_free(t);

    /* the same fabric without its tables: computed routes */
    static char text[1 << 16];
    read_sample("lft.ibnet", text, sizeof(text));
    char *cut = strstr(text, "Unicast lids");
    CHECK(cut != NULL);
    if (cut)
        *cut = '\0';
    CHECK(px_topo_parse(text, strlen(text), "no-tables", &u, err, sizeof(err)) == PX_OK);
    if (u) {
        CHECK(!strcmp(path_str(u, "node01", "node03", 0), "leaf-1 spine-1 leaf-2"));
        CHECK(hops(u, "node01", "node05") == 3);
        px_topo_free(u);
    }

    t = load("lft-opensm.ibnet");
    CHECK(t != NULL);
    if (t) {
        CHECK(!strcmp(path_str(t, "node01", "node03", 0), "leaf-1 spine-2 leaf-2"));
        CHECK(!strcmp(path_str(t, "node02", "node05", 0), "leaf-1 spine-2 leaf-3"));
        CHECK(!strcmp(path_str(t, "node03", "node05", 0), "leaf-2 spine-1 leaf-3"));
        px_topo_free(t);
    }

    /* a table of a switch the description lacks; a route to an uncabled port */
    if (cut) {
        char bad[1 << 12];
        snprintf(bad, sizeof(bad),
                 "%sUnicast lids [0x0-0xc] of switch Lid 9 guid 0x0002c902005000ff (x):\n"
                 "0x0006 001 : (Channel Adapter portguid 0x0002c90300b0c101: 'node01 HCA-1')\n",
                 text);
        CHECK(px_topo_parse(bad, strlen(bad), "bad", &u, err, sizeof(err)) != PX_OK);
        CHECK(strstr(err, "0x0002c902005000ff") != NULL);
        snprintf(bad, sizeof(bad),
                 "%sUnicast lids [0-12] of switch Lid 3 guid 0x0002c90200500011 ('leaf-1'):\n"
                 "0x0006 020 # Channel Adapter portguid 0x0002c90300b0c101: 'node01 HCA-1'\n",
                 text);
        CHECK(px_topo_parse(bad, strlen(bad), "bad", &u, err, sizeof(err)) != PX_OK);
        CHECK(strstr(err, "port 20") != NULL);
    }
}

/* The broadcast tree from the delay matrix. mixed.ibnet: n01 n03 n05 n07
 * at 4xSDR (10 Gbit/s), n02 n04 n06 n08 at 4xDDR (20 Gbit/s), four per
 * leaf. With two rates the delay is 1/min(rate on the route): the DDR
 * hosts take the positions that forward to the most (position v of 8
 * heads a subtree of min(lowest bit of v, 8 - v)), the SDR ones the
 * leaves. Whatever the rates, each switch cluster's hosts hang together
 * in the tree: a cluster is entered once. */
static int subtree(int v, int n) { return (v & -v) < n - v ? (v & -v) : n - v; }

/* Tree edges (parent position -> position) between two clusters of a
 * level. */
static int crossings(px_topo_t *t, const int *hosts, const int *order, int n, int level)
{
    int count = 0;
    for (int v = 1; v < n; v++) {
        int p = v - (v & -v);
        count += px_topo_cluster(t, hosts[order[v]], level) !=
                 px_topo_cluster(t, hosts[order[p]], level);
    }
    return count;
}

/* For every root: the order is a renumbering rooted there, and at every
 * level of the clusters the tree enters each cluster from outside
 * `extra` times more than once (crossings = clusters touched - 1 +
 * extra; 0: the least a tree can do). Returns the trees and levels that
 * differ. */
static int check_bcast_clusters(px_topo_t *t, const int *hosts, int n, int extra, const char *what)
{
    px_topo_delay_t *d = px_topo_delay_new(t, hosts, n);
    CHECK(d != NULL);
    if (!d)
        return -1;
    int order[64], bad = 0, depth = px_topo_depth(t);
    CHECK(n <= 64 && depth >= 2);
    for (int root = 0; root < n && n <= 64; root++) {
        CHECK(px_topo_bcast_order(d, root, order) == PX_OK);
        unsigned long long seen = 0;
        for (int v = 0; v < n; v++)
            seen |= 1ull << order[v];
        CHECK(order[0] == root && seen == (n == 64 ? ~0ull : (1ull << n) - 1));
        for (int level = 1; level < depth; level++) {
            int c = crossings(t, hosts, order, n, level);
            int least = px_topo_num_clusters_of(t, level, hosts, n) - 1;
            if (c == least + extra)
                continue;
            bad++;
            fprintf(stderr, "%s: root %d, level %d: %d crossings, want %d; order", what, root,
                    level, c, least + extra);
            for (int v = 0; v < n; v++)
                fprintf(stderr, " %s", px_topo_host_name(t, hosts[order[v]]));
            fprintf(stderr, "\n");
        }
    }
    px_topo_delay_free(d);
    return bad;
}

static void test_bcast_order(void)
{
    px_topo_t *t = load("mixed.ibnet");
    CHECK(t != NULL);
    if (!t)
        return;
    int hosts[8], order[8];
    for (int i = 0; i < 8; i++)
        hosts[i] = i;
    px_topo_delay_t *d = px_topo_delay_new(t, hosts, 8);
    CHECK(d && px_topo_delay_mixed(d));
    if (!d)
        return;
    CHECK(px_topo_delay_rate(d, 0) == 10000000000ull && px_topo_delay_rate(d, 1) == 20000000000ull);
    const double *row = px_topo_delay_row(d, 1);
    CHECK(row[3] == 50 && row[5] == 50 && row[0] == 100 && row[1] == 0);
    for (int root = 0; root < 8; root++) {
        CHECK(px_topo_bcast_order(d, root, order) == PX_OK);
        int seen = 0, fast_least = 8, slow_most = 0;
        for (int v = 0; v < 8; v++)
            seen |= 1 << order[v];
        CHECK(order[0] == root && seen == 0xff);
        for (int v = 1; v < 8; v++) {
            int size = subtree(v, 8);
            if (order[v] % 2 && size < fast_least)
                fast_least = size;
            if (!(order[v] % 2) && size > slow_most)
                slow_most = size;
        }
        CHECK(fast_least >= slow_most);
    }
    /* and the far leaf is entered once, from the root */
    CHECK(check_bcast_clusters(t, hosts, 8, 0, "mixed.ibnet") == 0);
    /* from SDR n01: DDR n06 heads the far leaf (half the tree), DDR n08
     * a quarter under it over SDR n05, SDR n07 a leaf of n06; DDR n02 the
     * root's other quarter over SDR n03, DDR n04 a leaf of the root */
    CHECK(px_topo_bcast_order(d, 0, order) == PX_OK);
    int want[8] = {0, 3, 1, 2, 5, 6, 7, 4};
    CHECK(!memcmp(order, want, sizeof(want)));
    px_topo_delay_free(d);
    px_topo_free(t);

    /* one rate (fattree.ibnet, all 4xQDR, two leaves of five): from
     * node01, the two hosts of the far leaf make the root's larger
     * subtree (one crossing), node02 of its own leaf the smaller */
    px_topo_t *f = load("fattree.ibnet");
    CHECK(f != NULL);
    if (f) {
        int fh[4] = {H(f, "node01"), H(f, "node06"), H(f, "node07"), H(f, "node02")};
        d = px_topo_delay_new(f, fh, 4);
        CHECK(d && !px_topo_delay_mixed(d));
        CHECK(px_topo_bcast_order(d, 0, order) == PX_OK);
        CHECK(order[0] == 0 && order[2] == 1 && order[3] == 2 && order[1] == 3);
        CHECK(px_topo_bcast_order(d, 1, order) == PX_OK);
        CHECK(order[0] == 1 && order[2] == 0 && order[3] == 3 && order[1] == 2);
        px_topo_delay_free(d);
        /* two leaves of four, the members listed alternating between them */
        int h8[8];
        CHECK(set(f, "node01 node06 node02 node07 node03 node08 node04 node09", h8) == 8);
        CHECK(check_bcast_clusters(f, h8, 8, 0, "fattree 2x4") == 0);
        /* members on hosts the description lacks (-1): each alone */
        int hu[6] = {H(f, "node01"), -1, H(f, "node06"), H(f, "node02"), -1, H(f, "node07")};
        d = px_topo_delay_new(f, hu, 6);
        CHECK(d != NULL);
        for (int root = 0; d && root < 6; root++) {
            int seen = 0;
            CHECK(px_topo_bcast_order(d, root, order) == PX_OK);
            for (int v = 0; v < 6; v++)
                seen |= 1 << order[v];
            CHECK(order[0] == root && seen == 0x3f);
        }
        px_topo_delay_free(d);
        /* five and three: the three cannot be one subtree of 8 (subtrees
         * hold 1, 2 or 4), so two crossings is the least */
        CHECK(set(f, "node01 node02 node03 node04 node05 node06 node07 node08", h8) == 8);
        CHECK(check_bcast_clusters(f, h8, 8, 1, "fattree 5+3") == 0);
        px_topo_free(f);
    }
    /* the emulated fabric of the measurements: two leaves of two */
    px_topo_t *p = load("pxfab-fattree.json");
    CHECK(p != NULL);
    if (p) {
        int h4[4];
        CHECK(set(p, "node0 node2 node1 node3", h4) == 4);
        CHECK(check_bcast_clusters(p, h4, 4, 0, "pxfab 2x2") == 0);
        px_topo_free(p);
    }
    /* four leaves of two under one spine */
    const char *conf = "SwitchName=spine Switches=leaf[1-4]\n"
                       "SwitchName=leaf1 Nodes=h[1-2]\n"
                       "SwitchName=leaf2 Nodes=h[3-4]\n"
                       "SwitchName=leaf3 Nodes=h[5-6]\n"
                       "SwitchName=leaf4 Nodes=h[7-8]\n";
    char err[256];
    px_topo_t *q = NULL;
    CHECK(px_topo_parse(conf, strlen(conf), "4x2.conf", &q, err, sizeof(err)) == PX_OK);
    if (q) {
        int h8[8];
        CHECK(set(q, "h1 h3 h5 h7 h2 h4 h6 h8", h8) == 8);
        CHECK(check_bcast_clusters(q, h8, 8, 0, "4x2") == 0);
        px_topo_free(q);
    }
    /* two levels (Figure 5.4: core, two aggregation switches, four edges
     * of two): each aggregation switch's hosts and each edge's are
     * entered once */
    px_topo_t *g = load("figure54.topology.conf");
    CHECK(g != NULL);
    if (g) {
        int h8[8];
        CHECK(set(g, "cn08 cn01 cn05 cn03 cn02 cn07 cn04 cn06", h8) == 8);
        CHECK(check_bcast_clusters(g, h8, 8, 0, "figure 5.4") == 0);
        px_topo_free(g);
    }
}

static void test_errors(void)
{
    char err[256];
    px_topo_t *t = NULL;
    const char *bad_json = "{\"format\": \"plexus-topology\", \"nodes\": [";
    CHECK(px_topo_parse(bad_json, strlen(bad_json), "bad.json", &t, err, sizeof(err)) != PX_OK);
    CHECK(strstr(err, "bad.json") && strstr(err, "invalid JSON"));
    const char *conf = "SwitchName=s0 Switches=s9\n";
    CHECK(px_topo_parse(conf, strlen(conf), "t.conf", &t, err, sizeof(err)) != PX_OK);
    CHECK(strstr(err, "t.conf:1") && strstr(err, "s9"));
    const char *conf2 = "SwitchName=s0 Nodes=n[1-\n";
    CHECK(px_topo_parse(conf2, strlen(conf2), "t.conf", &t, err, sizeof(err)) != PX_OK);
    const char *conf3 = "Nodes=n1\n";
    CHECK(px_topo_parse(conf3, strlen(conf3), "t.conf", &t, err, sizeof(err)) != PX_OK);
    CHECK(strstr(err, "SwitchName") != NULL);
    const char *ib = "Switch\t8 \"S-01\"\t# \"s\"\n[1] garbage\n";
    CHECK(px_topo_parse(ib, strlen(ib), "ib.txt", &t, err, sizeof(err)) != PX_OK);
    CHECK(strstr(err, "ib.txt:2") != NULL);
    CHECK(px_topo_load("/nonexistent/fabric", &t, err, sizeof(err)) == PX_ERR_IO);
    const char *empty = "# nothing\n";
    CHECK(px_topo_parse(empty, strlen(empty), "e.conf", &t, err, sizeof(err)) != PX_OK);
}

/* Placement: the graph builder, and a 4x4x4 grid onto 16 nodes of 4
 * processes dealt round-robin, nodes k, k+4, k+8, k+12 on leaf k (1 hop within a leaf, 3
 * across): more nodes than are tried exhaustively, so the groups are laid
 * by swaps. */
static void test_place(void)
{
    int src[] = {0, 1, 0, 2, 0}, dst[] = {1, 0, 0, 1, 1}, w[] = {2, 3, 9, 1, 0};
    int *xadj, *adj, *wt;
    CHECK(px_topo_graph_build(3, 5, src, dst, w, &xadj, &adj, &wt) == PX_OK);
    CHECK(xadj[0] == 0 && xadj[1] == 1 && xadj[2] == 3 && xadj[3] == 4);
    CHECK(adj[0] == 1 && wt[0] == 5 && adj[1] == 0 && wt[1] == 5 && adj[2] == 2 && wt[2] == 1);
    CHECK(adj[3] == 1 && wt[3] == 1);
    free(xadj);
    free(adj);
    free(wt);

    enum { N = 64, K = 16 };
    int es[N * 6], ed[N * 6], m = 0, slot_node[N], dist[K * K], place[N], seen[N] = {0};
    for (int v = 0; v < N; v++) {
        int c[3] = {v / 16, v / 4 % 4, v % 4};
        for (int d = 0; d < 3; d++)
            if (c[d] < 3) {
                es[m] = v;
                ed[m++] = v + (d == 0 ? 16 : d == 1 ? 4 : 1);
            }
        slot_node[v] = v % K;
    }
    for (int a = 0; a < K; a++)
        for (int b = 0; b < K; b++)
            dist[a * K + b] = a == b ? 0 : a % 4 == b % 4 ? 1 : 3;
    CHECK(px_topo_graph_build(N, m, es, ed, NULL, &xadj, &adj, &wt) == PX_OK);
    int rc = px_topo_place(N, xadj, adj, wt, slot_node, K, dist, place);
    long long before = px_topo_place_cost(N, xadj, adj, wt, slot_node, K, dist, NULL);
    long long after = px_topo_place_cost(N, xadj, adj, wt, slot_node, K, dist, place);
    int per[K] = {0}, cls[4] = {0};
    for (int v = 0; v < N; v++) {
        seen[place[v]]++;
        per[slot_node[place[v]]]++;
        for (int i = xadj[v]; i < xadj[v + 1]; i++)
            cls[dist[slot_node[place[v]] * K + slot_node[place[adj[i]]]]]++;
    }
    for (int v = 0; v < N; v++)
        CHECK(seen[v] == 1);
    for (int k = 0; k < K; k++)
        CHECK(per[k] == 4);
    printf("place 4x4x4 on 16 nodes: rc %d, cost %lld -> %lld, messages on a node %d, "
           "1 hop %d, 3 hops %d\n",
           rc, before, after, cls[0], cls[1], cls[3]);
    if (px_topo_place_available()) {
        CHECK(rc == 1 && after < before);
        /* 2x2 tiles on the nodes (4 of 6 messages a process sends), and
         * the tiles of a leaf next to each other */
        CHECK(cls[0] == 128);
        CHECK(cls[3] <= cls[1]);
    } else {
        CHECK(rc == 0 && after == before);
    }
    free(xadj);
    free(adj);
    free(wt);
}

int main(int argc, char **argv)
{
    dir = argc > 1 ? argv[1] : ".";
    test_slurm();
    test_uneven();
    test_ibnet();
    test_ibnet_inline();
    test_pxfab_json();
    test_lfts();
    test_bcast_order();
    test_errors();
    test_place();
    return px_unit_report();
}
