/* Prints what the C fabric model makes of a description, in the same
 * lines as `pxtopo dump`, so that a test can compare the two
 * implementations on the samples:
 *   topo_dump FILE
 * or an alltoall schedule for ranks on hosts of the fabric, as JSON
 * (every ordered exchange of every step: src sends its block to dst):
 *   topo_dump --alltoall tacs1|tacs2|pairwise|roundrobin [--conflicts C]
 *             [--stats] FILE [HOST[:RANKS] ...]
 * (no hosts: every host of the fabric, one rank each). --stats prints, in
 * place of the schedule, its size, the flows on its links and the time
 * taken to build it; --stats-no-flows the same without the flows (-1),
 * which take long to count with many ranks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/topo.h"
#include "a2a_flows.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int alltoall(int argc, char **argv)
{
    const char *algo = argv[2], *file = NULL;
    int conflicts = 1, stats = 0, i = 3, kind = -1;
    for (int k = 0; k < 4; k++)
        if (!strcmp(algo, px_topo_a2a_name((px_topo_a2a_kind_t)k)))
            kind = k;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--conflicts") && i + 1 < argc)
            conflicts = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--stats"))
            stats = 1;
        else if (!strcmp(argv[i], "--stats-no-flows"))
            stats = 2;
        else
            kind = -1;
    }
    if (kind < 0 || i >= argc) {
        fprintf(stderr, "usage: topo_dump --alltoall tacs1|tacs2|pairwise|roundrobin "
                        "[--conflicts C] [--stats|--stats-no-flows] FILE [HOST[:RANKS] ...]\n");
        return 2;
    }
    file = argv[i++];
    char err[512];
    px_topo_t *t;
    double t0 = now();
    if (px_topo_load(file, &t, err, sizeof(err)) != PX_OK) {
        fprintf(stderr, "topo_dump: %s\n", err);
        return 1;
    }
    double t1 = now();
    int nh = px_topo_num_hosts(t), n = 0, cap = nh + argc;
    int *hosts = malloc(sizeof(int) * (size_t)cap);
    if (i == argc)
        for (n = 0; n < nh; n++)
            hosts[n] = n;
    for (; i < argc; i++) {
        char name[256];
        snprintf(name, sizeof(name), "%s", argv[i]);
        char *colon = strchr(name, ':');
        int k = colon ? atoi(colon + 1) : 1;
        if (colon)
            *colon = '\0';
        int h = px_topo_host_find(t, name);
        if (h < 0) {
            fprintf(stderr, "topo_dump: no host %s in %s\n", name, file);
            return 1;
        }
        for (int j = 0; j < k; j++) {
            if (n == cap)
                hosts = realloc(hosts, sizeof(int) * (size_t)(cap *= 2));
            hosts[n++] = h;
        }
    }
    px_topo_a2a_t *s;
    double t2 = now();
    int dcss = px_topo_a2a_dcss(t, hosts, n, 5);
    double t3 = now();
    if (px_topo_a2a_build(t, hosts, n, (px_topo_a2a_kind_t)kind, conflicts, &s) != PX_OK) {
        fprintf(stderr, "topo_dump: cannot build the schedule\n");
        return 1;
    }
    double t4 = now();
    if (stats) {
        long excess = -1;
        int worst = -1;
        if (stats == 1) {
            excess = 0;
            worst = max_flows(t, s, hosts, conflicts + 1, &excess);
        }
        printf("%s ranks %d steps %d max_flows_per_link %d over_budget %ld load %.3f s dcss %s "
               "%.3f s build %.3f s%s\n",
               algo, n, px_topo_a2a_steps(s), worst, excess, t1 - t0, dcss ? "topo" : "pairwise",
               t3 - t2, t4 - t3, px_topo_a2a_fell_back(s) ? " (the round-robin rearranged)" : "");
    } else {
        printf("{\"kind\":\"alltoall\",\"algorithm\":\"%s\",\"nranks\":%d,\"hosts\":[", algo, n);
        for (int r = 0; r < n; r++)
            printf("%s\"%s\"", r ? "," : "", px_topo_host_name(t, hosts[r]));
        printf("],\"steps\":[");
        for (int st = 0; st < px_topo_a2a_steps(s); st++) {
            printf("%s[", st ? ",\n" : "\n");
            int first = 1;
            for (int r = 0; r < n; r++) {
                int d = px_topo_a2a_dst(s, st, r);
                if (d >= 0) {
                    printf("%s[%d,%d]", first ? "" : ",", r, d);
                    first = 0;
                }
            }
            printf("]");
        }
        printf("]}\n");
    }
    px_topo_a2a_free(s);
    free(hosts);
    px_topo_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    char err[512];
    px_topo_t *t;
    if (argc >= 3 && !strcmp(argv[1], "--alltoall"))
        return alltoall(argc, argv);
    if (argc != 2) {
        fprintf(stderr, "usage: topo_dump FILE\n");
        return 2;
    }
    if (px_topo_load(argv[1], &t, err, sizeof(err)) != PX_OK) {
        fprintf(stderr, "topo_dump: %s\n", err);
        return 1;
    }
    int n = px_topo_num_hosts(t), ns = px_topo_num_switches(t);
    int *all = malloc(sizeof(int) * (size_t)n), *sws = malloc(sizeof(int) * (size_t)(ns + 1));
    int *shared = malloc(sizeof(int) * (size_t)n);
    printf("format %s\nhosts %d\nswitches %d\nlinks %d\n", px_topo_format(t), n, ns,
           px_topo_num_links(t));
    int depth = px_topo_depth(t);
    printf("depth %d\n", depth);
    for (int level = 0; level <= depth; level++) {
        int nc = px_topo_num_clusters(t, level);
        printf("level %d: %d clusters:", level, nc);
        for (int c = 0; c < nc; c++) {
            printf(c ? " |" : "");
            for (int h = 0; h < n; h++)
                if (px_topo_cluster(t, h, level) == c)
                    printf(" %s", px_topo_host_name(t, h));
        }
        printf("\n");
    }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            if (a == b)
                continue;
            int k = px_topo_path(t, a, b, 0, 0, sws, ns + 1);
            printf("path %s %s %d:", px_topo_host_name(t, a), px_topo_host_name(t, b), k);
            for (int i = 0; i < k && i <= ns; i++)
                printf(" [%s]", px_topo_switch_name(t, sws[i]));
            printf("\n");
        }
    for (int h = 0; h < n; h++)
        all[h] = h;
    printf("hosts_per_leaf %.3f\n", px_topo_hosts_per_leaf(t, all, n));
    printf("sharing %d:", px_topo_sharing(t, all, n, shared));
    for (int h = 0; h < n; h++)
        if (shared[h])
            printf(" %s", px_topo_host_name(t, h));
    printf("\n");
    free(all);
    free(sws);
    free(shared);
    px_topo_free(t);
    return 0;
}
