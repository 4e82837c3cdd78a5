/* Bootstrap backend "pmi2": the PMI-2 interface a resource manager offers
 * its tasks (srun --mpi=pmi2 under Slurm; MPICH's Hydra), through the
 * manager's own client library, libpmi2.so.0, loaded when a job starts
 * under it so that libmpi depends on nothing else.
 *
 * PMI-2's key-value space is one per job and holds strings: a value goes in
 * as hex under "px<rank>.<key>", in pieces ("...#1", "#2") when longer than
 * one PMI-2 value. */
#include "boot_impl.h"
#include "../util/log.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PX_PMI2_SUCCESS 0
#define PX_PMI2_KEYLEN 64   /* PMI2_MAX_KEYLEN, with its terminating zero */
#define PX_PMI2_VALLEN 1024 /* PMI2_MAX_VALLEN */
#define PX_PMI2_CHUNK 1000  /* hex digits per value (even) */
#define PX_PMI2_JOBID 256

/* The PMI-2 calls used (MPICH's and Slurm's pmi2.h). */
static struct {
    void *lib;
    int (*init)(int *spawned, int *size, int *rank, int *appnum);
    int (*finalize)(void);
    int (*abort)(int flag, const char msg[]);
    int (*job_getid)(char jobid[], int jobid_size);
    int (*kvs_put)(const char key[], const char value[]);
    int (*kvs_fence)(void);
    int (*kvs_get)(const char *jobid, int src_pmi_id, const char key[], char value[], int maxvalue,
                   int *vallen);
    int (*get_job_attr)(const char name[], char value[], int valuelen, int *found);
    char jobid[PX_PMI2_JOBID];
} px_pmi2;

static int px_pmi2_key(char *out, int rank, const char *key, int part)
{
    int n = part ? snprintf(out, PX_PMI2_KEYLEN, "px%d.%s#%d", rank, key, part)
                 : snprintf(out, PX_PMI2_KEYLEN, "px%d.%s", rank, key);
    return n > 0 && n < PX_PMI2_KEYLEN;
}

static px_status_t px_pmi2_fence(const px_boot_buf_t *pending, uint32_t npending)
{
    px_boot_rd_t rd = px_boot_rd_make(pending->p, pending->len);
    char key[PX_BOOT_KEY_MAX], pkey[PX_PMI2_KEYLEN];
    char hex[2 * PX_BOOT_VAL_MAX + 16], val[PX_PMI2_VALLEN];
    for (uint32_t i = 0; i < npending; i++) {
        uint16_t klen = px_boot_rd_u16(&rd);
        uint32_t vlen = px_boot_rd_u32(&rd);
        const uint8_t *k = px_boot_rd_bytes(&rd, klen);
        const uint8_t *v = px_boot_rd_bytes(&rd, vlen);
        if (rd.err || klen >= sizeof(key) || vlen > PX_BOOT_VAL_MAX)
            return PX_ERR_PROTOCOL;
        memcpy(key, k, klen);
        key[klen] = 0;
        px_boot_hex(hex, v, vlen);
        size_t hlen = 2 * (size_t)vlen;
        int parts = hlen ? (int)((hlen + PX_PMI2_CHUNK - 1) / PX_PMI2_CHUNK) : 1;
        for (int p = 0; p < parts; p++) {
            size_t off = (size_t)p * PX_PMI2_CHUNK;
            size_t n = hlen - off < PX_PMI2_CHUNK ? hlen - off : PX_PMI2_CHUNK;
            /* the first piece says how many there are: "<parts>:<hex>" */
            int h = p ? 0 : snprintf(val, sizeof(val), "%d:", parts);
            memcpy(val + h, hex + off, n);
            val[h + n] = 0;
            if (!px_pmi2_key(pkey, px_boot_self_rank(), key, p)) {
                px_error("boot", "pmi2: key '%s' too long for PMI-2", key);
                return PX_ERR_INVALID_PARAM;
            }
            if (px_pmi2.kvs_put(pkey, val) != PX_PMI2_SUCCESS) {
                px_error("boot", "pmi2: PMI2_KVS_Put of '%s' failed", pkey);
                return PX_ERR_IO;
            }
        }
    }
    if (px_pmi2.kvs_fence() != PX_PMI2_SUCCESS) {
        px_error("boot", "pmi2: PMI2_KVS_Fence failed");
        return PX_ERR_JOB_ABORTED;
    }
    return PX_OK;
}

static px_status_t px_pmi2_get(int rank, const char *key)
{
    char pkey[PX_PMI2_KEYLEN], val[PX_PMI2_VALLEN + 1];
    char hex[2 * PX_BOOT_VAL_MAX + 1];
    uint8_t bin[PX_BOOT_VAL_MAX];
    int vlen = 0, parts = 0;
    size_t hlen = 0;
    for (int p = 0; p == 0 || p < parts; p++) {
        if (!px_pmi2_key(pkey, rank, key, p))
            return PX_ERR_NOT_FOUND;
        if (px_pmi2.kvs_get(px_pmi2.jobid, rank, pkey, val, PX_PMI2_VALLEN, &vlen) !=
                PX_PMI2_SUCCESS ||
            vlen < 0)
            return PX_ERR_NOT_FOUND;
        val[vlen < PX_PMI2_VALLEN ? vlen : PX_PMI2_VALLEN] = 0;
        const char *h = val;
        if (p == 0) {
            char *end;
            long n = strtol(val, &end, 10);
            if (*end != ':' || n < 1 || n > (long)(2 * PX_BOOT_VAL_MAX / PX_PMI2_CHUNK + 1))
                return PX_ERR_PROTOCOL;
            parts = (int)n;
            h = end + 1;
        }
        size_t n = strlen(h);
        if (hlen + n > sizeof(hex) - 1)
            return PX_ERR_PROTOCOL;
        memcpy(hex + hlen, h, n);
        hlen += n;
    }
    long n = px_boot_unhex(bin, sizeof(bin), hex, hlen);
    if (n < 0)
        return PX_ERR_PROTOCOL;
    return px_boot_store_insert(rank, (const uint8_t *)key, strlen(key), bin, (size_t)n);
}

static px_status_t px_pmi2_finalize(void)
{
    return px_pmi2.finalize() == PX_PMI2_SUCCESS ? PX_OK : PX_ERR_IO;
}

static int px_pmi2_abort_code;

static void px_pmi2_exit_code(void) { _exit(px_pmi2_abort_code); }

static void px_pmi2_abort(int code, const char *msg) __attribute__((noreturn));
static void px_pmi2_abort(int code, const char *msg)
{
    /* The manager ends every task of the job; this one leaves with the
     * code, which srun reports. PMI2_Abort exits by itself, with a code of
     * its own: the handler makes it ours. */
    char why[PX_BOOT_ABORT_MSG_MAX + 64];
    snprintf(why, sizeof(why), "abort with code %d: %s", code, msg ? msg : "");
    fprintf(stderr, "plexus rank %d: %s\n", px_boot_self_rank(), why);
    px_pmi2_abort_code = code & 0xff ? code & 0xff : 1;
    atexit(px_pmi2_exit_code);
    px_pmi2.abort(1, msg ? msg : "");
    px_boot_die(why, code & 0xff ? code & 0xff : 1);
}

static const px_boot_backend_ops_t px_pmi2_ops = {
    .name = "pmi2",
    .fence = px_pmi2_fence,
    .get = px_pmi2_get,
    .finalize = px_pmi2_finalize,
    .abort = px_pmi2_abort,
};

static int px_pmi2_load(void)
{
    const char *names[] = {"libpmi2.so.0", "libpmi2.so"};
    for (size_t i = 0; i < 2 && !px_pmi2.lib; i++)
        px_pmi2.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!px_pmi2.lib) {
        px_error("boot",
                 "pmi2: the job was started with PMI-2 (PMI_FD is set) but its client library "
                 "cannot be loaded (%s): install it (Debian: libpmi2-0, Slurm's), or start with "
                 "srun --mpi=pmix or pxrun",
                 dlerror());
        return 0;
    }
#define PX_PMI2_SYM(f, s)                                                                          \
    do {                                                                                           \
        *(void **)&px_pmi2.f = dlsym(px_pmi2.lib, s);                                              \
        if (!px_pmi2.f) {                                                                          \
            px_error("boot", "pmi2: libpmi2 has no %s", s);                                        \
            return 0;                                                                              \
        }                                                                                          \
    } while (0)
    PX_PMI2_SYM(init, "PMI2_Init");
    PX_PMI2_SYM(finalize, "PMI2_Finalize");
    PX_PMI2_SYM(abort, "PMI2_Abort");
    PX_PMI2_SYM(job_getid, "PMI2_Job_GetId");
    PX_PMI2_SYM(kvs_put, "PMI2_KVS_Put");
    PX_PMI2_SYM(kvs_fence, "PMI2_KVS_Fence");
    PX_PMI2_SYM(kvs_get, "PMI2_KVS_Get");
    PX_PMI2_SYM(get_job_attr, "PMI2_Info_GetJobAttr");
#undef PX_PMI2_SYM
    return 1;
}

const char *px_boot_pmi2_missing(void)
{
    void *h = dlopen("libpmi2.so.0", RTLD_LAZY | RTLD_LOCAL);
    if (!h)
        return "libpmi2.so.0 not found (Debian: libpmi2-0)";
    dlclose(h);
    return "";
}

px_status_t px_boot_pmi2_open(px_boot_rm_job_t *job, const px_boot_backend_ops_t **ops_p)
{
    if (!getenv("PMI_FD") && !getenv("PMI_PORT"))
        return PX_ERR_NOT_FOUND;
    if (!px_pmi2_load())
        return PX_ERR_INVALID_PARAM;
    int spawned = 0, size = 0, rank = -1, appnum = 0, found = 0;
    if (px_pmi2.init(&spawned, &size, &rank, &appnum) != PX_PMI2_SUCCESS || size < 1 ||
        size > PX_BOOT_MAX_RANKS || rank < 0 || rank >= size) {
        px_error("boot", "pmi2: PMI2_Init failed (size %d, rank %d)", size, rank);
        return PX_ERR_IO;
    }
    if (px_pmi2.job_getid(px_pmi2.jobid, sizeof(px_pmi2.jobid)) != PX_PMI2_SUCCESS) {
        px_error("boot", "pmi2: PMI2_Job_GetId failed");
        return PX_ERR_IO;
    }
    char map[PX_PMI2_VALLEN + 1] = "";
    int *node_of = malloc(sizeof(int) * (size_t)size);
    if (!node_of)
        return PX_ERR_NO_MEMORY;
    int nodes = -1;
    if (px_pmi2.get_job_attr("PMI_process_mapping", map, PX_PMI2_VALLEN, &found) ==
            PX_PMI2_SUCCESS &&
        found)
        nodes = px_boot_parse_mapping(map, size, node_of);
    if (nodes < 1) {
        px_error("boot", "pmi2: the manager gives no usable process mapping ('%s')", map);
        free(node_of);
        return PX_ERR_PROTOCOL;
    }
    job->rank = rank;
    job->size = size;
    job->universe_size = size;
    job->node_of = node_of;
    job->num_nodes = nodes;
    snprintf(job->id, sizeof(job->id), "pmi2:%s", px_pmi2.jobid);
    job->via = "PMI-2";
    *ops_p = &px_pmi2_ops;
    return PX_OK;
}
