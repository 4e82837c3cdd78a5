/* The topology profile (PX_PROFILE=topo, docs/topology.md): what each rank
 * sent to each other rank, messages and bytes, counted at the protocol
 * level (so collectives' traffic is in it) over the whole run or over the
 * sections a signal marks (src/proto/proto_prof.c). At MPI_Finalize,
 * before the last barrier, rank 0 gathers over MPI_COMM_WORLD each rank's
 * host name and an entry per rank it sent to (so rank 0 holds what the
 * pairs that communicated need, not a full matrix), classifies each pair by the hops
 * between their hosts on the fabric (PX_TOPO) or, flat, as intra- or
 * inter-node, adds each pair's traffic to the links of its route, and
 * writes it all as JSON (`pxtopo report` draws it). */
#include "mpi_impl.h"
#include "../topo/topo.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What each rank sends rank 0: a head, then an entry per rank it sent to. */
typedef struct px_prof_head {
    char host[64];
    uint64_t sections, npairs;
} px_prof_head_t;
typedef struct px_prof_ent {
    uint64_t dst, msgs, bytes;
} px_prof_ent_t;

static int px_prof_signal(void)
{
    const char *s = px_params.profile_signal;
    return !strcmp(s, "usr1") ? SIGUSR1 : !strcmp(s, "usr2") ? SIGUSR2 : 0;
}

/* Whether MPI_Init started the profile: MPI_Finalize gathers on that
 * alone (PX_PROFILE written through MPI_T later does not start or stop
 * it, so every rank takes part in the gather or none does). */
static int px_prof_started;

void px_mpi_profile_start(void)
{
    if (!px_profile_topo())
        return;
    px_prof_started = 1;
    px_status_t st = px_proto_prof_start(px_prof_signal());
    if (st != PX_OK)
        px_warn("mpi", "PX_PROFILE=topo: cannot start the profile: %s", px_status_string(st));
}

static void px_prof_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* The class of a pair: -1 self, -2 intra-node, -3 inter-node, -4 unknown
 * (a host outside the fabric), else the hops between the hosts. */
static int px_prof_class(const px_boot_info_t *b, int s, int d)
{
    if (s == d)
        return -1;
    if (px_topo_job()) {
        int h = px_topo_job_hops(s, d);
        return h < 0 ? -4 : h;
    }
    int ns = b->node_of ? b->node_of[s] : s, nd = b->node_of ? b->node_of[d] : d;
    return ns == nd ? -2 : -3;
}

static void px_prof_class_name(int k, char *buf, size_t len)
{
    static const char *const fixed[] = {"self", "intra-node", "inter-node", "unknown"};
    if (k < 0)
        snprintf(buf, len, "%s", fixed[-k - 1]);
    else
        snprintf(buf, len, "%d hop%s", k, k == 1 ? "" : "s");
}

/* Adds a pair's traffic to each link of its route, in the direction it is
 * crossed: load[4 * link + dir] messages, load[4 * link + 2 + dir] bytes. */
static void px_prof_route(px_topo_t *t, int ha, int hb, uint64_t msgs, uint64_t bytes,
                          uint64_t *load, int *links, int max)
{
    int n = px_topo_path_links(t, ha, hb, 0, 0, links, max);
    int cur = ha, cur_host = 1; /* the vertex the route is at */
    for (int i = 0; i < n && i < max; i++) {
        int h0, h1, e0 = px_topo_link_end(t, links[i], 0, &h0), e1;
        e1 = px_topo_link_end(t, links[i], 1, &h1);
        int dir = !(e0 == cur && h0 == cur_host);
        load[4 * links[i] + dir] += msgs;
        load[4 * links[i] + 2 + dir] += bytes;
        cur = dir ? e0 : e1;
        cur_host = dir ? h0 : h1;
    }
}

static void px_prof_write_fabric(FILE *f, px_topo_t *t, const uint64_t *load)
{
    fprintf(f, "  \"topology\": {\"file\": ");
    px_prof_str(f, px_params.topo);
    fprintf(f, ", \"format\": ");
    px_prof_str(f, px_topo_format(t));
    fprintf(f, ",\n    \"hosts\": [");
    for (int h = 0; h < px_topo_num_hosts(t); h++) {
        fprintf(f, h ? ", " : "");
        px_prof_str(f, px_topo_host_name(t, h));
    }
    fprintf(f, "],\n    \"switches\": [");
    for (int s = 0; s < px_topo_num_switches(t); s++) {
        fprintf(f, s ? ", " : "");
        px_prof_str(f, px_topo_switch_name(t, s));
    }
    fprintf(f, "],\n    \"links\": [");
    for (int l = 0; l < px_topo_num_links(t); l++) {
        int h0, h1, e0 = px_topo_link_end(t, l, 0, &h0), e1 = px_topo_link_end(t, l, 1, &h1);
        fprintf(f, "%s\n      {\"a\": ", l ? "," : "");
        px_prof_str(f, h0 ? px_topo_host_name(t, e0) : px_topo_switch_name(t, e0));
        fprintf(f, ", \"b\": ");
        px_prof_str(f, h1 ? px_topo_host_name(t, e1) : px_topo_switch_name(t, e1));
        const uint64_t *x = load + 4 * l;
        fprintf(f,
                ", \"rate_bps\": %llu, \"msgs\": [%llu, %llu], \"bytes\": [%llu, "
                "%llu]}",
                (unsigned long long)px_topo_link_rate(t, l), (unsigned long long)x[0],
                (unsigned long long)x[1], (unsigned long long)x[2], (unsigned long long)x[3]);
    }
    fprintf(f, "]},\n");
}

/* Rank 0: classifies what it gathered and writes the file. */
static int px_prof_write(const px_boot_info_t *b, const px_prof_head_t *heads,
                         const px_prof_ent_t *ents, const char *path)
{
    int n = b->size;
    px_topo_t *t = px_topo_job();
    int nlinks = t ? px_topo_num_links(t) : 0, maxl = t ? px_topo_num_switches(t) + 2 : 0;
    /* classes: 4 fixed ones, then hops 0..maxl */
    int ncls = 4 + maxl + 1;
    uint64_t *load = calloc(4 * (size_t)nlinks + 1, sizeof(uint64_t));
    uint64_t *cls = calloc(2 * (size_t)ncls, sizeof(uint64_t));
    int *links = calloc((size_t)maxl + 1, sizeof(int));
    FILE *f = fopen(path, "w");
    if (!load || !cls || !links || !f) {
        free(load);
        free(cls);
        free(links);
        if (f)
            fclose(f);
        return -1;
    }
    fprintf(f, "{\n  \"format\": \"plexus-profile\",\n  \"version\": 1,\n");
    fprintf(f, "  \"job_id\": \"%016llx\",\n  \"ranks\": %d,\n  \"nodes\": %d,\n",
            (unsigned long long)b->job_id, n, b->num_nodes);
    fprintf(f, "  \"counted\": \"messages and bytes each rank sent to each rank, at the protocol "
               "level (point-to-point and collectives; not one-sided operations)\",\n");
    fprintf(f, "  \"section\": \"%s\",\n", px_prof_signal() ? "signal" : "run");
    fprintf(f, "  \"rank_info\": [");
    for (int r = 0; r < n; r++) {
        uint64_t sections = heads[r].sections;
        int host = px_topo_job_host(r);
        fprintf(f, "%s\n    {\"rank\": %d, \"host\": ", r ? "," : "", r);
        px_prof_str(f, heads[r].host);
        fprintf(f, ", \"node\": %d, \"fabric_host\": ", b->node_of ? b->node_of[r] : r);
        if (host >= 0)
            fprintf(f, "%d", host);
        else
            fprintf(f, "null");
        fprintf(f, ", \"sections\": %llu}", (unsigned long long)sections);
    }
    fprintf(f, "],\n  \"pairs\": [");
    int first = 1;
    const px_prof_ent_t *e = ents;
    for (int s = 0; s < n; s++) {
        for (uint64_t i = 0; i < heads[s].npairs; i++, e++) {
            int d = (int)e->dst;
            uint64_t msgs = e->msgs, bytes = e->bytes;
            int k = px_prof_class(b, s, d);
            char name[32];
            px_prof_class_name(k, name, sizeof(name));
            int ci = k < 0 ? -k - 1 : 4 + (k <= maxl ? k : maxl);
            cls[2 * ci] += msgs;
            cls[2 * ci + 1] += bytes;
            if (k > 0)
                px_prof_route(t, px_topo_job_host(s), px_topo_job_host(d), msgs, bytes, load, links,
                              maxl);
            fprintf(f,
                    "%s\n    {\"src\": %d, \"dst\": %d, \"msgs\": %llu, \"bytes\": %llu, "
                    "\"class\": \"%s\", \"hops\": ",
                    first ? "" : ",", s, d, (unsigned long long)msgs, (unsigned long long)bytes,
                    name);
            if (k >= 0)
                fprintf(f, "%d}", k);
            else
                fprintf(f, "null}");
            first = 0;
        }
    }
    fprintf(f, "],\n  \"classes\": [");
    first = 1;
    for (int ci = 0; ci < ncls; ci++) {
        int k = ci < 4 ? -ci - 1 : ci - 4;
        /* the classes this kind of job has, even when empty, and the hop
         * counts that occurred */
        int shown = k == -1 || (t ? k == -4 || k == 0 : k == -2 || k == -3) || cls[2 * ci];
        if (!shown)
            continue;
        char name[32];
        px_prof_class_name(k, name, sizeof(name));
        fprintf(f, "%s\n    {\"name\": \"%s\", \"hops\": ", first ? "" : ",", name);
        if (k >= 0)
            fprintf(f, "%d", k);
        else
            fprintf(f, "null");
        fprintf(f, ", \"msgs\": %llu, \"bytes\": %llu}", (unsigned long long)cls[2 * ci],
                (unsigned long long)cls[2 * ci + 1]);
        first = 0;
    }
    fprintf(f, "],\n");
    if (t)
        px_prof_write_fabric(f, t, load);
    else
        fprintf(f, "  \"topology\": null,\n");
    fprintf(f, "  \"end\": true\n}\n");
    free(load);
    free(cls);
    free(links);
    return fclose(f) ? -1 : 0;
}

void px_mpi_profile_finish(const px_boot_info_t *b)
{
    if (!px_prof_started)
        return;
    px_prof_started = 0;
    int n = b->size;
    uint64_t *counts = calloc(2 * (size_t)n, sizeof(uint64_t));
    px_prof_head_t head, *heads = b->rank == 0 ? calloc((size_t)n, sizeof(*heads)) : NULL;
    memset(&head, 0, sizeof(head));
    int sections = counts ? px_proto_prof_take(counts) : -1;
    px_proto_prof_stop();
    for (int r = 0; counts && r < n; r++)
        head.npairs += counts[2 * r] != 0;
    px_prof_ent_t *mine = malloc(sizeof(*mine) * (head.npairs + 1)), *ents = NULL;
    for (int r = 0, k = 0; mine && counts && r < n; r++)
        if (counts[2 * r])
            mine[k++] = (px_prof_ent_t){(uint64_t)r, counts[2 * r], counts[2 * r + 1]};
    free(counts);
    px_topo_job_hostname(b, head.host, sizeof(head.host));
    head.host[sizeof(head.host) - 1] = '\0';
    head.sections = sections < 0 ? 0 : (uint64_t)sections;
    /* every rank takes part, or none waits for the others */
    int ok = mine && sections >= 0 && (b->rank != 0 || heads), all = 0;
    int rc = px_mpi_coll_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, px_mpi_comm_world);
    int agreed = rc == MPI_SUCCESS && all;
    if (agreed)
        rc = px_mpi_coll_gather_bytes(&head, heads, sizeof(head), 0, px_mpi_comm_world);
    /* rank 0 makes room for every rank's entries, and says whether it could */
    MPI_Aint *rcounts = NULL, *rdispls = NULL;
    if (agreed && rc == MPI_SUCCESS && b->rank == 0) {
        size_t total = 0;
        rcounts = malloc(sizeof(*rcounts) * (size_t)n);
        rdispls = malloc(sizeof(*rdispls) * (size_t)n);
        for (int r = 0; rcounts && rdispls && r < n; r++) {
            rdispls[r] = (MPI_Aint)total;
            rcounts[r] = (MPI_Aint)(heads[r].npairs * sizeof(px_prof_ent_t));
            total += heads[r].npairs * sizeof(px_prof_ent_t);
        }
        all = rcounts && rdispls && (ents = malloc(total + sizeof(px_prof_ent_t)));
    }
    if (agreed && rc == MPI_SUCCESS)
        rc = px_mpi_coll_bcast(&all, 1, MPI_INT, 0, px_mpi_comm_world);
    if (rc == MPI_SUCCESS && all)
        rc = px_mpi_coll_gatherv_bytes(mine, head.npairs * sizeof(px_prof_ent_t), ents, rcounts,
                                       rdispls, 0, px_mpi_comm_world);
    if (b->rank == 0 && (rc != MPI_SUCCESS || !agreed || !all)) {
        px_warn("mpi", "PX_PROFILE=topo: no profile written (%s)",
                rc != MPI_SUCCESS ? "the gather failed"
                : !agreed         ? "a rank could not count"
                                  : "out of memory");
    } else if (b->rank == 0) {
        char def[64];
        const char *path = px_params.profile_file;
        if (!path || !path[0]) {
            snprintf(def, sizeof(def), "plexus-profile-%016llx.json",
                     (unsigned long long)b->job_id);
            path = def;
        }
        if (px_prof_write(b, heads, ents, path))
            px_warn("mpi", "PX_PROFILE=topo: cannot write %s", path);
        else
            fprintf(stderr, "[plexus profile] topology profile of %d ranks written to %s\n", n,
                    path);
    }
    free(mine);
    free(heads);
    free(ents);
    free(rcounts);
    free(rdispls);
}
