/* pxinfo: what this Plexus build is and how it is configured. */
#include "net/net.h"
#include "util/param.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void px_mpi_coll_print_table(FILE *f); /* src/mpi/coll/coll_select.c */

static void usage(FILE *out)
{
    fprintf(out, "usage: pxinfo [--params [--markdown]] [--coll] [--version] [-h]\n"
                 "  (no option)  version, transports and the main settings\n"
                 "  --coll       collective algorithms and the table that selects them\n"
                 "  --params     every parameter with its default and documentation\n"
                 "  --markdown   with --params: the reference page docs/params.md\n");
}

static const char *cma_state(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int v = 0;
    if (!f)
        return "available (no Yama restriction)";
    if (fscanf(f, "%d", &v) != 1)
        v = 0;
    fclose(f);
    return v == 0 ? "available (ptrace_scope 0)"
                  : "restricted by ptrace_scope; large intra-node messages are copied";
}

int main(int argc, char **argv)
{
    int params = 0, markdown = 0, coll = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--params"))
            params = 1;
        else if (!strcmp(argv[i], "--coll"))
            coll = 1;
        else if (!strcmp(argv[i], "--markdown"))
            markdown = 1;
        else if (!strcmp(argv[i], "--version")) {
            printf("Plexus %s\n", PX_VERSION);
            return 0;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "pxinfo: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    px_param_init();
    if (params) {
        px_param_print(stdout, markdown ? "markdown" : "text");
        return 0;
    }
    if (coll) {
        px_mpi_coll_print_table(stdout);
        return 0;
    }
    printf("Plexus %s (MPI 3.1, MPICH ABI)\n\nTransports:\n", PX_VERSION);
    for (const px_net_ops_t *const *t = px_net_all(); *t; t++) {
        const char *note = "";
        if (!strcmp((*t)->name, "shm")) {
            struct stat st;
            note = stat("/dev/shm", &st) == 0 ? cma_state() : "unavailable: no /dev/shm";
        } else if (!strcmp((*t)->name, "tcp"))
            note = "available";
        else if (!strcmp((*t)->name, "self"))
            note = "available";
        printf("  %-6s %s\n", (*t)->name, note);
    }
    printf("\nSelected: PX_NET=%s (shm between ranks of a node, tcp between nodes)\n",
           px_params.net);
    printf("Eager limits: shm %zu bytes, tcp %zu bytes\n", px_params.shm_eager_limit,
           px_params.tcp_eager_limit);
    printf("Progress: PX_PROGRESS_MODE=%s, PX_SPIN_COUNT=%ld\n", px_params.progress_mode,
           px_params.spin_count);
    printf("\n`pxinfo --params` lists every parameter, `pxinfo --coll` the collective algorithms.\n");
    return 0;
}
