/* Bootstrap client. Backends behind one small ops table (boot_impl.h):
 * "pxrun" (TCP to the launcher's server, challenge-response
 * authentication, boot_pxrun.c), "pmi2" and "pmix" (a resource manager's
 * process management interface, boot_pmi2.c and boot_pmix.c) and
 * "singleton" (no launcher: a job of one with a local key-value store).
 * Every backend feeds the same local store, which px_boot_get reads. */
#include "boot.h"
#include "boot_impl.h"
#include "boot_wire.h"
#include "../util/log.h"
#include "../util/param.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct px_boot_kv {
    struct px_boot_kv *next;
    int rank;
    uint32_t vlen;
    char key[PX_BOOT_KEY_MAX];
    uint8_t val[];
} px_boot_kv_t;

px_boot_state_t px_boot = {.kv_fd = -1, .ctl_fd = -1, .ctl_lock = PTHREAD_MUTEX_INITIALIZER};

/* ---------------------------------------------------------------- store */

static size_t px_boot_hash(int rank, const char *key)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(unsigned)rank;
    for (; *key; key++)
        h = (h ^ (uint8_t)*key) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

static px_boot_kv_t **px_boot_store_find(int rank, const char *key)
{
    if (!px_boot.nbuckets)
        return NULL;
    px_boot_kv_t **pp = &px_boot.buckets[px_boot_hash(rank, key) & (px_boot.nbuckets - 1)];
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->rank == rank && !strcmp((*pp)->key, key))
            return pp;
    return pp;
}

static px_status_t px_boot_store_grow(void)
{
    size_t n = px_boot.nbuckets ? px_boot.nbuckets * 2 : 256;
    px_boot_kv_t **b = calloc(n, sizeof(*b));
    if (!b)
        return PX_ERR_NO_MEMORY;
    for (size_t i = 0; i < px_boot.nbuckets; i++) {
        px_boot_kv_t *e = px_boot.buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            size_t h = px_boot_hash(e->rank, e->key) & (n - 1);
            e->next = b[h];
            b[h] = e;
        }
    }
    free(px_boot.buckets);
    px_boot.buckets = b;
    px_boot.nbuckets = n;
    return PX_OK;
}

/* Inserts or replaces (rank, key); a later put of the same key wins. */
px_status_t px_boot_store_insert(int rank, const uint8_t *key, size_t klen, const uint8_t *val,
                                 size_t vlen)
{
    if (px_boot.nkv >= px_boot.nbuckets * 2 && px_boot_store_grow() != PX_OK)
        return PX_ERR_NO_MEMORY;
    px_boot_kv_t *e = malloc(sizeof(*e) + vlen);
    if (!e)
        return PX_ERR_NO_MEMORY;
    e->rank = rank;
    e->vlen = (uint32_t)vlen;
    memcpy(e->key, key, klen);
    e->key[klen] = 0;
    if (vlen)
        memcpy(e->val, val, vlen);
    px_boot_kv_t **pp = px_boot_store_find(rank, e->key);
    if (*pp) {
        e->next = (*pp)->next;
        free(*pp);
    } else {
        e->next = NULL;
        px_boot.nkv++;
    }
    *pp = e;
    return PX_OK;
}

static void px_boot_store_clear(void)
{
    for (size_t i = 0; i < px_boot.nbuckets; i++) {
        px_boot_kv_t *e = px_boot.buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            free(e);
        }
        px_boot.buckets[i] = NULL;
    }
    px_boot.nkv = 0;
}

void px_boot_hex(char *dst, const uint8_t *src, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        dst[2 * i] = digits[src[i] >> 4];
        dst[2 * i + 1] = digits[src[i] & 15];
    }
    dst[2 * len] = 0;
}

static int px_boot_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

long px_boot_unhex(uint8_t *dst, size_t max, const char *src, size_t srclen)
{
    if (srclen % 2 || srclen / 2 > max)
        return -1;
    for (size_t i = 0; i < srclen / 2; i++) {
        int hi = px_boot_hexval(src[2 * i]), lo = px_boot_hexval(src[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        dst[i] = (uint8_t)(hi << 4 | lo);
    }
    return (long)(srclen / 2);
}

int px_boot_parse_mapping(const char *s, int size, int *node_of)
{
    /* (vector,(0,2,4),(2,1,3)): block of 4 ranks on each of nodes 0 and 1,
     * then 3 on node 2; the blocks repeat until every rank is placed */
    const char *p = strstr(s, "(vector");
    int blocks[64][3], nb = 0, max_node = -1;
    if (!p || size < 1)
        return -1;
    p += 7;
    while (*p == ',') {
        int a, b, c, n = 0;
        if (nb == 64 || sscanf(p, ",(%d,%d,%d)%n", &a, &b, &c, &n) != 3 || n == 0 || a < 0 ||
            b < 1 || c < 1 || a > PX_BOOT_MAX_RANKS || b > PX_BOOT_MAX_RANKS ||
            c > PX_BOOT_MAX_RANKS)
            return -1;
        blocks[nb][0] = a;
        blocks[nb][1] = b;
        blocks[nb][2] = c;
        nb++;
        p += n;
    }
    if (*p != ')' || nb == 0)
        return -1;
    int r = 0;
    while (r < size) {
        int before = r;
        for (int i = 0; i < nb && r < size; i++)
            for (int n = 0; n < blocks[i][1] && r < size; n++)
                for (int k = 0; k < blocks[i][2] && r < size; k++) {
                    int node = blocks[i][0] + n;
                    node_of[r++] = node;
                    if (node > max_node)
                        max_node = node;
                }
        if (r == before)
            return -1;
    }
    /* nodes must be numbered densely */
    if (max_node >= size)
        return -1;
    uint8_t *seen = calloc((size_t)max_node + 1, 1);
    int nodes = 0;
    if (!seen)
        return -1;
    for (int k = 0; k < size; k++)
        if (!seen[node_of[k]]) {
            seen[node_of[k]] = 1;
            nodes++;
        }
    free(seen);
    return nodes == max_node + 1 ? nodes : -1;
}

void px_boot_die(const char *why, int code)
{
    char line[PX_BOOT_ABORT_MSG_MAX + 128];
    int n = snprintf(line, sizeof(line), "plexus rank %d: %s\n", px_boot.info.rank, why);
    if (n > (int)sizeof(line) - 1)
        n = (int)sizeof(line) - 1;
    if (write(STDERR_FILENO, line, (size_t)n) < 0) {
        /* nothing left to tell */
    }
    _exit(code);
}

/* ------------------------------------------------- singleton backend ops */

static px_status_t px_boot_singleton_fence(const px_boot_buf_t *pending, uint32_t npending)
{
    px_boot_rd_t rd = px_boot_rd_make(pending->p, pending->len);
    for (uint32_t i = 0; i < npending; i++) {
        uint16_t klen = px_boot_rd_u16(&rd);
        uint32_t vlen = px_boot_rd_u32(&rd);
        const uint8_t *key = px_boot_rd_bytes(&rd, klen);
        const uint8_t *val = px_boot_rd_bytes(&rd, vlen);
        px_status_t st = px_boot_store_insert(0, key, klen, val, vlen);
        if (st != PX_OK)
            return st;
    }
    return PX_OK;
}

static px_status_t px_boot_singleton_finalize(void)
{
    atomic_store(&px_boot.finalized, 1);
    return PX_OK;
}

static void px_boot_singleton_abort(int code, const char *msg) __attribute__((noreturn));
static void px_boot_singleton_abort(int code, const char *msg)
{
    char why[PX_BOOT_ABORT_MSG_MAX + 64];
    snprintf(why, sizeof(why), "abort with code %d: %s", code, msg ? msg : "");
    px_boot_die(why, code & 0xff ? code & 0xff : 1);
}

static const px_boot_backend_ops_t px_boot_singleton_ops = {
    .name = "singleton",
    .fence = px_boot_singleton_fence,
    .finalize = px_boot_singleton_finalize,
    .abort = px_boot_singleton_abort,
};

static px_status_t px_boot_singleton_init(void)
{
    px_boot_info_t *info = &px_boot.info;
    px_status_t st = px_boot_random(px_boot.secret, sizeof(px_boot.secret));
    if (st == PX_OK)
        st = px_boot_random(&info->job_id, sizeof(info->job_id));
    px_boot.node_of = calloc(1, sizeof(int));
    if (st != PX_OK || !px_boot.node_of) {
        free(px_boot.node_of);
        px_boot.node_of = NULL;
        return st != PX_OK ? st : PX_ERR_NO_MEMORY;
    }
    info->rank = 0;
    info->size = 1;
    info->node_id = 0;
    info->num_nodes = 1;
    info->local_rank = 0;
    info->local_size = 1;
    info->universe_size = 1;
    info->node_of = px_boot.node_of;
    info->boot_host = "";
    info->singleton = 1;
    px_boot.ops = &px_boot_singleton_ops;
    return PX_OK;
}

/* ---------------------------------------- resource-manager backends */

#define PX_BOOT_SECRET_KEY "px.secret"
#define PX_BOOT_NODE_KEY "px.node"

static uint64_t px_boot_fnv(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ull;
    return h;
}

/* The rest of a start under a resource manager, whichever interface it
 * offers: the node map's derived fields, the address that reaches the
 * launching host, and the per-job secret. */
/* node_of from every rank's node label (published before the fence):
 * nodes numbered in order of first appearance. */
static px_status_t px_boot_rm_node_map(px_boot_rm_job_t *job)
{
    char label[sizeof(job->node_label)];
    char(*names)[sizeof(job->node_label)] = malloc(sizeof(*names) * (size_t)job->size);
    job->node_of = malloc(sizeof(int) * (size_t)job->size);
    if (!names || !job->node_of) {
        free(names);
        return PX_ERR_NO_MEMORY;
    }
    int nodes = 0;
    for (int r = 0; r < job->size; r++) {
        size_t len = 0;
        px_status_t st = px_boot_get(r, PX_BOOT_NODE_KEY, label, sizeof(label), &len);
        if (st == PX_OK && (len == 0 || label[len - 1]))
            st = PX_ERR_PROTOCOL;
        if (st != PX_OK) {
            free(names);
            return st;
        }
        int n = 0;
        while (n < nodes && strcmp(names[n], label))
            n++;
        if (n == nodes)
            memcpy(names[nodes++], label, len);
        job->node_of[r] = n;
    }
    free(names);
    job->num_nodes = nodes;
    return PX_OK;
}

static px_status_t px_boot_rm_init(px_boot_rm_job_t *job, const px_boot_backend_ops_t *ops)
{
    px_boot_info_t *info = &px_boot.info;
    px_status_t st = PX_OK;
    info->rank = job->rank;
    info->size = job->size;
    info->universe_size = job->universe_size > job->size ? job->universe_size : job->size;
    info->singleton = 0;
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "rank %d", info->rank);
    px_log_set_prefix(prefix);
    px_boot.ops = ops;
    px_boot.initialized = 1; /* for put, fence and get below */

    /* The per-job secret that authenticates data connections: rank 0 draws
     * it and hands it out through the manager's key-value space, which only
     * the job's own processes reach. The same fence carries each rank's
     * node when the manager gave no map. */
    char hex[2 * PX_BOOT_SECRET_LEN + 1];
    size_t len = 0;
    if (info->rank == 0) {
        st = px_boot_random(px_boot.secret, sizeof(px_boot.secret));
        px_boot_hex(hex, px_boot.secret, sizeof(px_boot.secret));
        if (st == PX_OK)
            st = px_boot_put(PX_BOOT_SECRET_KEY, hex, sizeof(hex));
    }
    if (st == PX_OK && !job->node_of)
        st = px_boot_put(PX_BOOT_NODE_KEY, job->node_label, strlen(job->node_label) + 1);
    if (st == PX_OK)
        st = px_boot_fence();
    if (st == PX_OK)
        st = px_boot_get(0, PX_BOOT_SECRET_KEY, hex, sizeof(hex), &len);
    if (st == PX_OK &&
        (len != sizeof(hex) || hex[len - 1] ||
         px_boot_unhex(px_boot.secret, sizeof(px_boot.secret), hex, len - 1) != PX_BOOT_SECRET_LEN))
        st = PX_ERR_PROTOCOL;
    if (st == PX_OK && !job->node_of)
        st = px_boot_rm_node_map(job);
    px_boot.initialized = 0;
    if (st != PX_OK) {
        px_error("boot", "%s: cannot share the job's secret and node map through %s: %s", ops->name,
                 job->via, px_status_string(st));
        return st;
    }
    info->num_nodes = job->num_nodes;
    px_boot.node_of = job->node_of;
    info->node_of = job->node_of;
    info->node_id = job->node_of[job->rank];
    for (int r = 0; r < job->size; r++) {
        if (job->node_of[r] != info->node_id)
            continue;
        if (r < job->rank)
            info->local_rank++;
        info->local_size++;
    }
    /* The host srun runs on plays the part of pxrun's: the interface that
     * reaches it is the management network (src/net/addr.c). A job on one
     * node stays on loopback. */
    const char *launch = getenv("SLURM_LAUNCH_NODE_IPADDR");
    snprintf(px_boot.boot_host, sizeof(px_boot.boot_host), "%s", launch ? launch : "");
    info->boot_host = px_boot.boot_host;
    /* Over several nodes, this rank's address on it is where other
     * processes reach what it opens itself (MPI_Open_port, the launcher of
     * MPI_Comm_spawn's children). */
    struct in_addr a;
    if (job->num_nodes == 1)
        snprintf(px_boot.local_addr, sizeof(px_boot.local_addr), "127.0.0.1");
    else if (launch && px_boot_route(launch, &a) == 0)
        inet_ntop(AF_INET, &a, px_boot.local_addr, sizeof(px_boot.local_addr));
    /* the manager's job name makes it unique, the secret keeps a reused
     * name (a job id wraps) from meeting an old job's segments */
    info->job_id = px_boot_fnv(px_boot_fnv(1469598103934665603ull, job->id, strlen(job->id)),
                               px_boot.secret, 8);
    return PX_OK;
}

/* Which backend: PX_BOOT, else the first whose variables are set. */
static px_status_t px_boot_choose(void)
{
    const char *want = px_params.boot;
    const char *addr = getenv("PX_BOOT_ADDR");
    int any = !strcmp(want, "auto");
    px_boot_rm_job_t job = {0};
    const px_boot_backend_ops_t *ops = NULL;
    px_status_t st;

    if ((any && addr && *addr) || !strcmp(want, "pxrun")) {
        if (!addr || !*addr) {
            px_error("boot", "PX_BOOT=pxrun but PX_BOOT_ADDR is not set: start the job with pxrun");
            return PX_ERR_INVALID_PARAM;
        }
        return px_boot_pxrun_init(addr);
    }
    static const struct {
        const char *name;
        px_status_t (*open)(px_boot_rm_job_t *, const px_boot_backend_ops_t **);
        const char *vars;
    } rm[] = {
        {"pmix", px_boot_pmix_open, "PMIX_NAMESPACE and PMIX_RANK"},
        {"pmi2", px_boot_pmi2_open, "PMI_FD, PMI_RANK and PMI_SIZE"},
    };
    for (size_t i = 0; i < sizeof(rm) / sizeof(rm[0]); i++) {
        if (!any && strcmp(want, rm[i].name))
            continue;
        st = rm[i].open(&job, &ops);
        if (st == PX_OK) {
            st = px_boot_rm_init(&job, ops);
            if (st != PX_OK) {
                free(job.node_of);
                px_boot.node_of = NULL;
            }
            return st;
        }
        if (st != PX_ERR_NOT_FOUND)
            return st;
        if (!any) {
            px_error("boot",
                     "PX_BOOT=%s but %s are not set: start the job with a launcher that "
                     "offers %s (srun --mpi=%s under Slurm)",
                     want, rm[i].vars, rm[i].name, rm[i].name);
            return PX_ERR_INVALID_PARAM;
        }
    }
    /* srun without --mpi (and no MpiDefault) starts each task alone: say
     * so rather than run that many jobs of one */
    const char *ntasks = getenv("SLURM_STEP_NUM_TASKS");
    if (any && ntasks && atoi(ntasks) > 1 && getenv("SLURM_PROCID")) {
        px_error("boot",
                 "started by srun as one of %s tasks, but without a process-management "
                 "interface, so the tasks cannot meet: run srun --mpi=pmi2 (or --mpi=pmix), or "
                 "set MpiDefault=pmi2 in slurm.conf; PX_BOOT=singleton runs each task on its own",
                 ntasks);
        return PX_ERR_INVALID_PARAM;
    }
    return px_boot_singleton_init();
}

void px_boot_print_backends(FILE *f)
{
    const char *pmi2 = px_boot_pmi2_missing(), *pmix = px_boot_pmix_missing();
    const char *addr = getenv("PX_BOOT_ADDR"), *ntasks = getenv("SLURM_STEP_NUM_TASKS");
    const char *now;
    if (strcmp(px_params.boot, "auto"))
        now = px_params.boot;
    else if (addr && *addr)
        now = "pxrun";
    else if (getenv("PMIX_NAMESPACE") && getenv("PMIX_RANK"))
        now = "pmix";
    else if (getenv("PMI_FD") || getenv("PMI_PORT"))
        now = "pmi2";
    else if (ntasks && atoi(ntasks) > 1 && getenv("SLURM_PROCID"))
        now = "none: a task of srun without --mpi (MPI_Init refuses)";
    else
        now = "singleton";
    fprintf(f, "Bootstrap: PX_BOOT=%s; here: %s\n", px_params.boot, now);
    fprintf(f, "  pxrun      built in (pxrun, also inside a Slurm allocation)\n");
    fprintf(f, "  pmi2       %s\n", *pmi2 ? pmi2 : "libpmi2.so.0 loads (srun --mpi=pmi2)");
    fprintf(f, "  pmix       %s\n", *pmix ? pmix : "libpmix.so.2 loads (srun --mpi=pmix)");
}

/* ------------------------------------------------------------ public API */

px_status_t px_boot_init(px_boot_info_t *info_p)
{
    px_status_t st;
    if (px_boot.initialized) {
        *info_p = px_boot.info;
        return PX_OK;
    }
    /* for the log level; a bad parameter is MPI_Init's to report */
    (void)px_param_init();
    memset(&px_boot.info, 0, sizeof(px_boot.info));
    atomic_store(&px_boot.finalized, 0);
    st = px_boot_choose();
    if (st != PX_OK)
        return st;
    const char *node = getenv("PX_NODE_NAME");
    if (!node)
        node = getenv("SLURMD_NODENAME");
    px_boot.info.node_name = node ? node : "";
    px_boot.info.peer_cap =
        px_boot.info.size + (int)(px_params.dyn_peers > 0 ? px_params.dyn_peers : 0);
    px_debug("boot", "%s: rank %d of %d, node %d of %d, local rank %d of %d, job %016llx",
             px_boot.ops->name, px_boot.info.rank, px_boot.info.size, px_boot.info.node_id,
             px_boot.info.num_nodes, px_boot.info.local_rank, px_boot.info.local_size,
             (unsigned long long)px_boot.info.job_id);
    px_boot.initialized = 1;
    *info_p = px_boot.info;
    return PX_OK;
}

px_status_t px_boot_put(const char *key, const void *val, size_t len)
{
    if (!px_boot.initialized || atomic_load(&px_boot.finalized))
        return PX_ERR_INVALID_PARAM;
    if (!key || (!val && len) || !px_boot_put_valid(strlen(key), (const uint8_t *)key, len))
        return PX_ERR_INVALID_PARAM;
    size_t klen = strlen(key);
    size_t before = px_boot.pending.len;
    if (px_boot.pending.len + PX_BOOT_PUT_HDR_LEN + klen + len + 4 > PX_BOOT_MAX_CLIENT_FRAME)
        return PX_ERR_NO_MEMORY; /* too much for one fence: fence more often */
    px_boot_buf_put_u16(&px_boot.pending, (uint16_t)klen);
    px_boot_buf_put_u32(&px_boot.pending, (uint32_t)len);
    px_boot_buf_put(&px_boot.pending, key, klen);
    px_boot_buf_put(&px_boot.pending, val, len);
    if (px_boot.pending.oom) {
        px_boot.pending.oom = 0;
        px_boot.pending.len = before;
        return PX_ERR_NO_MEMORY;
    }
    px_boot.npending++;
    px_boot_own_keep(key, val, len);
    return PX_OK;
}

px_status_t px_boot_fence(void)
{
    if (!px_boot.initialized || atomic_load(&px_boot.finalized))
        return PX_ERR_INVALID_PARAM;
    px_status_t st = px_boot.ops->fence(&px_boot.pending, px_boot.npending);
    px_boot.pending.len = 0;
    px_boot.npending = 0;
    if (px_boot.ops->get)
        px_boot_store_clear(); /* fetched values may have been put again */
    return st;
}

/* val == NULL only reports the length. A too small buffer gives
 * PX_ERR_TRUNCATED and copies nothing. */
px_status_t px_boot_get(int rank, const char *key, void *val, size_t maxlen, size_t *len_p)
{
    if (!px_boot.initialized || !key || rank < 0)
        return PX_ERR_INVALID_PARAM;
    if (rank >= px_boot.info.size)
        return px_boot_peer_get(rank, key, val, maxlen, len_p);
    px_boot_kv_t **pp = px_boot_store_find(rank, key);
    if ((!pp || !*pp) && px_boot.ops->get) {
        px_status_t st = px_boot.ops->get(rank, key);
        if (st != PX_OK)
            return st;
        pp = px_boot_store_find(rank, key);
    }
    if (!pp || !*pp)
        return PX_ERR_NOT_FOUND;
    if (val) {
        if ((*pp)->vlen > maxlen)
            return PX_ERR_TRUNCATED;
        memcpy(val, (*pp)->val, (*pp)->vlen);
    }
    if (len_p)
        *len_p = (*pp)->vlen;
    return PX_OK;
}

px_status_t px_boot_barrier(void)
{
    px_boot_buf_t none = {0};
    if (!px_boot.initialized || atomic_load(&px_boot.finalized))
        return PX_ERR_INVALID_PARAM;
    return px_boot.ops->fence(&none, 0);
}

void px_boot_abort(int code, const char *msg)
{
    if (!px_boot.initialized) {
        char why[PX_BOOT_ABORT_MSG_MAX + 64];
        snprintf(why, sizeof(why), "abort with code %d: %s", code, msg ? msg : "");
        px_boot_die(why, code & 0xff ? code & 0xff : 1);
    }
    px_boot.ops->abort(code, msg);
}

px_status_t px_boot_finalize(void)
{
    if (!px_boot.initialized)
        return PX_ERR_INVALID_PARAM;
    if (atomic_load(&px_boot.finalized))
        return PX_OK;
    px_boot_peers_clear();
    return px_boot.ops->finalize();
}

const uint8_t *px_boot_secret(size_t *len_p)
{
    if (len_p)
        *len_p = px_boot.initialized ? PX_BOOT_SECRET_LEN : 0;
    return px_boot.initialized ? px_boot.secret : NULL;
}

const char *px_boot_local_addr(void) { return px_boot.local_addr; }

int px_boot_route(const char *host, struct in_addr *out)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(9)};
    socklen_t len = sizeof(sa);
    int fd, rc = -1;
    if (!host || !host[0] || inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return -1;
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0) {
        *out = sa.sin_addr;
        rc = 0;
    }
    close(fd);
    return rc;
}

int px_boot_self_rank(void) { return px_boot.info.rank; }
