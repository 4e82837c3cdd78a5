/* The topology-aware broadcast tree of Plexus (src/topo's delay matrix and
 * px_topo_bcast_order, expanded to ranks as src/mpi/coll/coll_topo.c does:
 * the tree over the hosts, then each host's first rank to its others) as a
 * schedule for topo_sim, and what building it costs.
 *
 *   topo_tree FABRIC ROOT HOSTFILE   (HOSTFILE: rank i's host on line i)
 *
 * Prints {"kind":"bcast","algorithm":"topo",...,"edges":[[p,c],...],
 * "costs":{"load_s","delay_matrix_s","tree_s"}}: the fabric's load, the
 * whole delay matrix among the hosts (every row), and the tree from a
 * fresh matrix (only the rows it asks for, as the library builds it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/topo.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: topo_tree FABRIC ROOT HOSTFILE\n");
        return 2;
    }
    char err[512], line[256];
    px_topo_t *t;
    double t0 = now();
    if (px_topo_load(argv[1], &t, err, sizeof(err)) != PX_OK) {
        fprintf(stderr, "topo_tree: %s\n", err);
        return 1;
    }
    double t_load = now() - t0;
    int root = atoi(argv[2]), n = 0, cap = 1024;
    int *host = malloc(sizeof(int) * (size_t)cap);
    FILE *f = fopen(argv[3], "r");
    if (!f || !host) {
        fprintf(stderr, "topo_tree: cannot read %s\n", argv[3]);
        return 1;
    }
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, " \t\r\n")] = '\0';
        if (!line[0])
            continue;
        if (n == cap)
            host = realloc(host, sizeof(int) * (size_t)(cap *= 2));
        if ((host[n++] = px_topo_host_find(t, line)) < 0) {
            fprintf(stderr, "topo_tree: host %s is not in the fabric\n", line);
            return 1;
        }
    }
    fclose(f);
    /* groups: the hosts in the order of their first rank; a group's
     * leader is the root on its host, its first rank elsewhere */
    int *group = malloc(sizeof(int) * (size_t)n), *ghost = malloc(sizeof(int) * (size_t)n);
    int *lead = malloc(sizeof(int) * (size_t)n), ng = 0;
    for (int r = 0; r < n; r++) {
        int g = 0;
        while (g < ng && ghost[g] != host[r])
            g++;
        if (g == ng) {
            ghost[ng] = host[r];
            lead[ng++] = r;
        }
        group[r] = g;
    }
    lead[group[root]] = root;
    double t1 = now();
    px_topo_delay_t *d = px_topo_delay_new(t, ghost, ng);
    for (int g = 0; g < ng; g++)
        px_topo_delay_row(d, g);
    double t_delay = now() - t1;
    px_topo_delay_free(d);
    int *order = malloc(sizeof(int) * (size_t)ng);
    double t2 = now();
    d = px_topo_delay_new(t, ghost, ng);
    px_topo_bcast_order(d, group[root], order);
    double t_tree = now() - t2;
    printf("{\"kind\": \"bcast\", \"algorithm\": \"topo\", \"root\": %d, \"nranks\": %d, "
           "\"mixed_rates\": %s, \"hosts\": [",
           root, n, px_topo_delay_mixed(d) ? "true" : "false");
    for (int r = 0; r < n; r++)
        printf("%s\"%s\"", r ? ", " : "", px_topo_host_name(t, host[r]));
    printf("], \"edges\": [");
    int first = 1;
    for (int v = 1; v < ng; v++) {
        printf("%s[%d, %d]", first ? "" : ", ", lead[order[v - (v & -v)]], lead[order[v]]);
        first = 0;
    }
    /* then each host's first rank to its others (a rank forwards to all
     * its children at once, as the library's schedule does) */
    for (int r = 0; r < n; r++)
        if (r != lead[group[r]]) {
            printf("%s[%d, %d]", first ? "" : ", ", lead[group[r]], r);
            first = 0;
        }
    printf("], \"costs\": {\"load_s\": %.6f, \"delay_matrix_s\": %.6f, \"tree_s\": %.6f, "
           "\"hosts\": %d}}\n",
           t_load, t_delay, t_tree, ng);
    px_topo_delay_free(d);
    px_topo_free(t);
    return 0;
}
