/* Prints what the C fabric model makes of a description, in the same
 * lines as `pxtopo dump`, so that a test can compare the two
 * implementations on the samples:
 *   topo_dump FILE */
#include <stdio.h>
#include <stdlib.h>

#include "topo/topo.h"

int main(int argc, char **argv)
{
    char err[512];
    px_topo_t *t;
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
