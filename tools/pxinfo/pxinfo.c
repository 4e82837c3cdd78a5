/* pxinfo: what this Plexus build is and how it is configured. */
#include "net/net.h"
#include "net/addr.h"
#include "chan/chan_rules.h"
#include "rail/rail.h"
#include "util/param.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void px_mpi_coll_print_table(FILE *f); /* src/mpi/coll/coll_select.c */

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: pxinfo [--params [--markdown]] [--coll] [--channels] [--rails] [--ofi] "
        "[--stats [JOB]] [--version] [-h]\n"
        "  (no option)  version, transports and the main settings\n"
        "  --coll       collective algorithms and the table that selects them\n"
        "  --channels   the PX_CHANNELS table that picks each message's channel\n"
        "  --rails      the rails and paths this host offers, the rail policy and its thresholds\n"
        "  --ofi        the libfabric providers and NICs this host offers (PX_NET=ofi)\n"
        "  --stats      per-subchannel counters of running jobs started with PX_STATS=1\n"
        "               (JOB: a job id as in /dev/shm/plexus-<JOB>-*, default all)\n"
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

static int print_rails(void)
{
    px_net_addr_t a[PX_NET_MAX_ADDR];
    int explicit_rails;
    struct in_addr remote = {0}; /* as seen by a launcher on another host */
    int n = px_net_addr_local(remote, &explicit_rails, a, PX_NET_MAX_ADDR);
    if (n < 0)
        return 1;
    printf("Rails of this host (%s):\n", explicit_rails ? "PX_RAILS" : "discovered");
    for (int i = 0; i < n; i++)
        if (!a[i].boot)
            printf("  rail %d  %-10s %s/%d\n", a[i].rail, a[i].ifname, inet_ntoa(a[i].addr),
                   a[i].prefix);
    printf(
        "  (the interface that reaches the launcher is left out when there are others;\n"
        "   two ranks use every address pair on a shared subnet, at most PX_PATHS=%ld per rail)\n",
        px_params.paths);
    printf("\nPolicy: PX_RAIL_POLICY=%s\n", px_params.rail_policy);
    printf("  striped from %zu bytes (PX_RAIL_STRIPE_MIN), in units of %zu bytes\n",
           px_params.rail_stripe_min, px_params.rail_stripe_unit);
    printf(
        "  at most %zu striped bytes in flight per peer before a block waits (PX_RAIL_INFLIGHT)\n",
        px_params.rail_inflight);
    printf("  adaptive: alpha %.2f, minimum share %.2f; bss: batch %ld; retry after %.2f s\n",
           px_params.rail_alpha, px_params.rail_min_share, px_params.rail_bss_batch,
           px_params.rail_retry);
    printf("  window: %ld messages per subchannel; bind: %s; weights: %s\n", px_params.rail_window,
           px_params.rail_bind, px_params.rail_weights[0] ? px_params.rail_weights : "link speeds");
    if (px_params.rail_ft)
        printf("\nFault tolerance: on (PX_RAIL_FT); a subchannel is down after %.2f s of "
               "unacknowledged data\n  (PX_RAIL_DETECT), probed every <= %.2f s "
               "(PX_RAIL_PROBE_MAX); a peer with no path left fails after %g s\n"
               "  (PX_PARTITION_TIMEOUT)\n",
               px_params.rail_detect, px_params.rail_probe_max, px_params.partition_timeout);
    else
        printf("\nFault tolerance: off (PX_RAIL_FT=0): a failed subchannel ends the job\n");
    return 0;
}

static int print_stats(const char *job)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *de;
    int found = 0;
    if (!d) {
        perror("pxinfo: /dev/shm");
        return 1;
    }
    while ((de = readdir(d))) {
        char j[64];
        int rank;
        if (sscanf(de->d_name, "plexus-%63[0-9a-f]-stats-%d", j, &rank) != 2 ||
            (job && strcmp(job, j)))
            continue;
        char path[300];
        snprintf(path, sizeof(path), "/dev/shm/%s", de->d_name);
        int fd = open(path, O_RDONLY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(px_rail_stats_seg_t)) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        const px_rail_stats_seg_t *seg =
            mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (seg == MAP_FAILED)
            continue;
        size_t n = ((size_t)st.st_size - sizeof(*seg)) / sizeof(seg->e[0]);
        if (seg->magic == PX_RAIL_STATS_MAGIC) {
            found++;
            printf("job %s rank %d (policy %.15s):\n", j, seg->rank, seg->policy);
            for (size_t i = 0; i < n; i++) {
                const px_rail_stats_entry_t *e = &seg->e[i];
                if (!__atomic_load_n(&e->in_use, __ATOMIC_ACQUIRE))
                    continue;
                static const char *const states[] = {"up", "suspect", "DOWN"};
                int stt = e->st.state >= 0 && e->st.state <= 2 ? e->st.state : 0;
                printf("  -> %d sub %d %-40.64s %-7s weight %.3f tx %llu B/%llu frames rx %llu "
                       "B/%llu frames stripes %llu mean %.1f us down %llu resent %llu\n",
                       e->peer, e->sub, e->label, states[stt], e->st.weight,
                       (unsigned long long)e->st.bytes_tx, (unsigned long long)e->st.frames_tx,
                       (unsigned long long)e->st.bytes_rx, (unsigned long long)e->st.frames_rx,
                       (unsigned long long)e->st.stripes,
                       e->st.stripes ? (double)e->st.stripe_ns / (double)e->st.stripes / 1e3 : 0.0,
                       (unsigned long long)e->st.downs, (unsigned long long)e->st.resent_frames);
            }
        }
        munmap((void *)seg, (size_t)st.st_size);
    }
    closedir(d);
    if (!found)
        printf("no running job publishes counters%s%s (start it with PX_STATS=1)\n",
               job ? " for job " : "", job ? job : "");
    return 0;
}

static int print_ofi(void)
{
#ifdef PX_HAVE_OFI
    px_net_ofi_print(stdout);
    return 0;
#else
    fprintf(stderr, "pxinfo: this Plexus was built without libfabric (libfabric-dev)\n");
    return 1;
#endif
}

static int print_channels(void)
{
    px_chr_table_t t;
    char err[256];
    printf("PX_CHANNELS=%s\n\n", px_params.channels);
    if (px_chr_parse(px_params.channels, &t, err, sizeof(err))) {
        fprintf(stderr, "pxinfo: PX_CHANNELS is invalid at %s\n", err);
        return 1;
    }
    px_chr_print(stdout, &t);
    printf("\nFor each message, the first entry whose condition holds and whose channel the "
           "destination has\n(shm: on this node; udp: PX_NET has udp; tcp: PX_NET is tcp, or has "
           "udp and tcp and the\nconnection is open) carries it. A message stays on the channel "
           "of the one before it\nwhile that one is unacknowledged, so none overtakes another.\n");
    return 0;
}

int main(int argc, char **argv)
{
    int params = 0, markdown = 0, coll = 0, rails = 0, stats = 0, channels = 0, ofi = 0;
    const char *job = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--params"))
            params = 1;
        else if (!strcmp(argv[i], "--rails"))
            rails = 1;
        else if (!strcmp(argv[i], "--ofi"))
            ofi = 1;
        else if (!strcmp(argv[i], "--stats")) {
            stats = 1;
            if (i + 1 < argc && argv[i + 1][0] != '-')
                job = argv[++i];
        } else if (!strcmp(argv[i], "--coll"))
            coll = 1;
        else if (!strcmp(argv[i], "--channels"))
            channels = 1;
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
    /* a bad value is reported; what is shown then holds its default */
    int bad = px_param_init() != PX_OK;
    if (bad)
        fprintf(stderr, "pxinfo: %s\n", px_param_error());
    if (params) {
        px_param_print(stdout, markdown ? "markdown" : "text");
        return bad;
    }
    if (bad)
        return 1;
    if (coll) {
        px_mpi_coll_print_table(stdout);
        return 0;
    }
    if (channels)
        return print_channels();
    if (rails)
        return print_rails();
    if (ofi)
        return print_ofi();
    if (stats)
        return print_stats(job);
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
        else if (!strcmp((*t)->name, "ofi"))
            note = "libfabric, loaded when used (`pxinfo --ofi`)";
        printf("  %-6s %s\n", (*t)->name, note);
    }
#ifndef PX_HAVE_OFI
    printf("  %-6s not built (libfabric's headers were missing)\n", "ofi");
#endif
    printf("\nSelected: PX_NET=%s (shm between ranks of a node, tcp between nodes)\n",
           px_params.net);
    if (px_params.shm_eager_limit == PX_PARAM_SIZE_AUTO)
        printf("Eager limits: shm auto (%d bytes while ranks on a machine are at most twice its "
               "cores, else %d), tcp %zu bytes\n",
               PX_SHM_EAGER_AUTO_HIGH, PX_SHM_EAGER_AUTO_LOW, px_params.tcp_eager_limit);
    else
        printf("Eager limits: shm %zu bytes, tcp %zu bytes\n", px_params.shm_eager_limit,
               px_params.tcp_eager_limit);
    px_boot_print_backends(stdout);
    printf("Progress: PX_PROGRESS_MODE=%s, PX_SPIN_COUNT=%ld\n", px_params.progress_mode,
           px_params.spin_count);
    printf("Rails: PX_RAIL_POLICY=%s (`pxinfo --rails`)\n", px_params.rail_policy);
    printf("\n`pxinfo --params` lists every parameter, `pxinfo --coll` the collective "
           "algorithms,\n`pxinfo --channels` the channel of each message.\n");
    return 0;
}
