/* The job's fabric (PX_TOPO): rank 0 reads the description, once for the
 * job, and puts the model in its compact form through the bootstrap in
 * pieces; one fence, at which every node's first rank also publishes its
 * host name; then every rank rebuilds the model and maps the ranks onto
 * fabric hosts. Only MPI_Init pays for it; the queries later are local. */
#include "topo_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../boot/boot.h"
#include "../util/log.h"
#include "../util/param.h"

/* a piece, with room to spare under the bootstrap's value limit */
#define PX_TOPO_PIECE (PX_BOOT_VAL_MAX - 24)

static px_topo_t *px_topo_job_fabric;
static int *px_topo_job_hosts; /* fabric host of each rank */
static int px_topo_job_size;

void px_topo_job_hostname(const px_boot_info_t *boot, char *out, size_t outsz)
{
    if (boot->node_name && boot->node_name[0] && strcmp(boot->node_name, "localhost")) {
        snprintf(out, outsz, "%s", boot->node_name);
        return;
    }
    if (gethostname(out, outsz - 1))
        out[0] = '\0';
    out[outsz - 1] = '\0';
}

/* Rank 0: the header ("<bytes> <pieces> <format>" or "error <why>") and
 * the pieces. */
static px_status_t px_topo_job_publish(const char *path)
{
    char err[512] = "", head[PX_BOOT_VAL_MAX];
    px_topo_t *t = NULL;
    char *text = NULL;
    size_t len = 0;
    px_status_t st = px_topo_load(path, &t, err, sizeof(err));
    if (st == PX_OK && (st = px_topo_serialize(t, &text, &len)) != PX_OK)
        snprintf(err, sizeof(err), "%s: out of memory", path);
    if (st != PX_OK) {
        snprintf(head, sizeof(head), "error %s", err);
        px_topo_free(t);
        return px_boot_put("topo", head, strlen(head) + 1);
    }
    size_t pieces = (len + PX_TOPO_PIECE - 1) / PX_TOPO_PIECE;
    snprintf(head, sizeof(head), "%zu %zu %s", len, pieces, px_topo_format(t));
    st = px_boot_put("topo", head, strlen(head) + 1);
    for (size_t i = 0; st == PX_OK && i < pieces; i++) {
        char key[32];
        size_t n =
            len - i * PX_TOPO_PIECE < PX_TOPO_PIECE ? len - i * PX_TOPO_PIECE : PX_TOPO_PIECE;
        snprintf(key, sizeof(key), "topo.%zu", i);
        st = px_boot_put(key, text + i * PX_TOPO_PIECE, n);
    }
    free(text);
    px_topo_free(t);
    return st;
}

static px_status_t px_topo_job_fetch(const char *path, px_topo_t **t_p, char *err, size_t errlen)
{
    char head[PX_BOOT_VAL_MAX + 1] = "", fmt[32] = "";
    size_t n, len, pieces;
    px_status_t st = px_boot_get(0, "topo", head, PX_BOOT_VAL_MAX, &n);
    if (st != PX_OK) {
        px_topo_err(err, errlen, "PX_TOPO=%s: rank 0 shared no fabric: %s", path,
                    px_status_string(st));
        return st;
    }
    head[n < sizeof(head) ? n : sizeof(head) - 1] = '\0';
    if (!strncmp(head, "error ", 6)) {
        px_topo_err(err, errlen, "PX_TOPO: %s", head + 6);
        return PX_ERR_INVALID_PARAM;
    }
    if (sscanf(head, "%zu %zu %31s", &len, &pieces, fmt) != 3) {
        px_topo_err(err, errlen, "PX_TOPO=%s: rank 0 shared a bad header", path);
        return PX_ERR_PROTOCOL;
    }
    char *text = malloc(len + 1);
    if (!text)
        return PX_ERR_NO_MEMORY;
    size_t got = 0;
    for (size_t i = 0; st == PX_OK && i < pieces; i++) {
        char key[32];
        snprintf(key, sizeof(key), "topo.%zu", i);
        st = px_boot_get(0, key, text + got, len - got, &n);
        got += st == PX_OK ? n : 0;
    }
    if (st == PX_OK && got != len)
        st = PX_ERR_PROTOCOL;
    if (st != PX_OK) {
        px_topo_err(err, errlen, "PX_TOPO=%s: cannot fetch the shared fabric: %s", path,
                    px_status_string(st));
        free(text);
        return st;
    }
    text[len] = '\0';
    st = px_topo_parse(text, len, path, t_p, err, errlen);
    free(text);
    return st;
}

px_status_t px_topo_job_init(const px_boot_info_t *boot, char *err, size_t errlen)
{
    const char *path = px_params.topo;
    if (!path || !path[0] || px_topo_job_fabric)
        return PX_OK;
    char host[256];
    px_topo_job_hostname(boot, host, sizeof(host));
    px_status_t st = PX_OK;
    int *first = calloc((size_t)boot->num_nodes + 1, sizeof(int)); /* first rank of each node */
    px_topo_job_hosts = malloc(sizeof(int) * (size_t)boot->size);
    if (!first || !px_topo_job_hosts) {
        free(first);
        px_topo_job_finalize();
        return PX_ERR_NO_MEMORY;
    }
    for (int i = 0; i <= boot->num_nodes; i++)
        first[i] = -1;
    for (int r = 0; r < boot->size; r++) {
        int node = boot->node_of ? boot->node_of[r] : r;
        if (node >= 0 && node < boot->num_nodes && first[node] < 0)
            first[node] = r;
    }
    int node = boot->node_of ? boot->node_of[boot->rank] : boot->rank;
    int lead = boot->num_nodes > 0 && node < boot->num_nodes ? first[node] == boot->rank : 1;
    if (boot->size > 1) {
        if (boot->rank == 0)
            st = px_topo_job_publish(path);
        if (st == PX_OK && lead)
            st = px_boot_put("topo.host", host, strlen(host) + 1);
        if (st == PX_OK)
            st = px_boot_fence();
        if (st == PX_OK)
            st = px_topo_job_fetch(path, &px_topo_job_fabric, err, errlen);
    } else {
        st = px_topo_load(path, &px_topo_job_fabric, err, errlen);
    }
    for (int r = 0; st == PX_OK && r < boot->size; r++) {
        int nd = boot->node_of ? boot->node_of[r] : r;
        int from = nd >= 0 && nd < boot->num_nodes && first[nd] >= 0 ? first[nd] : r;
        char name[256] = "";
        size_t n = 0;
        if (from == boot->rank)
            snprintf(name, sizeof(name), "%s", host);
        else if (px_boot_get(from, "topo.host", name, sizeof(name) - 1, &n) == PX_OK)
            name[n] = '\0';
        px_topo_job_hosts[r] = px_topo_host_find(px_topo_job_fabric, name);
        if (px_topo_job_hosts[r] < 0 && boot->rank == 0)
            px_warn("topo", "PX_TOPO=%s: rank %d's host %s is not in the fabric", path, r,
                    name[0] ? name : "(unknown)");
    }
    free(first);
    if (st != PX_OK) {
        px_topo_job_finalize();
        return st;
    }
    px_topo_job_size = boot->size;
    px_debug("topo", "PX_TOPO=%s: %s, %d hosts, %d switches", path,
             px_topo_format(px_topo_job_fabric), px_topo_num_hosts(px_topo_job_fabric),
             px_topo_num_switches(px_topo_job_fabric));
    return PX_OK;
}

void px_topo_job_finalize(void)
{
    px_topo_free(px_topo_job_fabric);
    free(px_topo_job_hosts);
    px_topo_job_fabric = NULL;
    px_topo_job_hosts = NULL;
    px_topo_job_size = 0;
}

px_topo_t *px_topo_job(void) { return px_topo_job_fabric; }

int px_topo_job_host(int rank)
{
    return px_topo_job_fabric && rank >= 0 && rank < px_topo_job_size ? px_topo_job_hosts[rank]
                                                                      : -1;
}

int px_topo_job_hops(int a, int b)
{
    int ha = px_topo_job_host(a), hb = px_topo_job_host(b);
    return ha < 0 || hb < 0 ? -1 : px_topo_hops(px_topo_job_fabric, ha, hb);
}
