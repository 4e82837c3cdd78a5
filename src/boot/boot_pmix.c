/* Bootstrap backend "pmix": the PMIx interface of a resource manager
 * (srun --mpi=pmix under Slurm, PRRTE's prterun, Open MPI's launchers),
 * through OpenPMIx's client library, libpmix.so.2, loaded when a job starts
 * under it so that libmpi depends on nothing else. Values are byte objects
 * under their own keys per rank; the node map comes from each rank's
 * PMIX_HOSTNAME, which the ranks swap. */
#include "boot_impl.h"
#include "../util/log.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PX_HAVE_PMIX_H
#include <pmix.h>

static struct {
    void *lib;
    __typeof__(PMIx_Init) *init;
    __typeof__(PMIx_Finalize) *finalize;
    __typeof__(PMIx_Abort) *abort;
    __typeof__(PMIx_Put) *put;
    __typeof__(PMIx_Commit) *commit;
    __typeof__(PMIx_Fence) *fence;
    __typeof__(PMIx_Get) *get;
    __typeof__(PMIx_Value_destruct) *value_destruct;
    __typeof__(PMIx_Error_string) *error_string;
    pmix_proc_t me;
} px_pmix;

static void px_pmix_release(pmix_value_t *v)
{
    if (v) {
        px_pmix.value_destruct(v);
        free(v);
    }
}

static void px_pmix_flag(pmix_info_t *info, const char *key)
{
    memset(info, 0, sizeof(*info));
    snprintf(info->key, sizeof(info->key), "%s", key);
    info->value.type = PMIX_BOOL;
    info->value.data.flag = true;
}

/* An unsigned integer attribute of proc rank (PMIX_RANK_WILDCARD: the job). */
static int px_pmix_uint(pmix_rank_t rank, const char *key, long *out)
{
    pmix_proc_t p = px_pmix.me;
    pmix_value_t *v = NULL;
    p.rank = rank;
    if (px_pmix.get(&p, key, NULL, 0, &v) != PMIX_SUCCESS || !v)
        return 0;
    int ok = 1;
    switch (v->type) {
    case PMIX_UINT32:
        *out = (long)v->data.uint32;
        break;
    case PMIX_UINT16:
        *out = (long)v->data.uint16;
        break;
    case PMIX_INT:
        *out = (long)v->data.integer;
        break;
    case PMIX_UINT64:
        *out = (long)v->data.uint64;
        break;
    default:
        ok = 0;
    }
    px_pmix_release(v);
    return ok;
}

static px_status_t px_pmix_fence(const px_boot_buf_t *pending, uint32_t npending)
{
    px_boot_rd_t rd = px_boot_rd_make(pending->p, pending->len);
    char key[PX_BOOT_KEY_MAX];
    pmix_status_t rc;
    for (uint32_t i = 0; i < npending; i++) {
        uint16_t klen = px_boot_rd_u16(&rd);
        uint32_t vlen = px_boot_rd_u32(&rd);
        const uint8_t *k = px_boot_rd_bytes(&rd, klen);
        const uint8_t *v = px_boot_rd_bytes(&rd, vlen);
        if (rd.err || klen >= sizeof(key))
            return PX_ERR_PROTOCOL;
        memcpy(key, k, klen);
        key[klen] = 0;
        pmix_value_t val;
        memset(&val, 0, sizeof(val));
        val.type = PMIX_BYTE_OBJECT;
        val.data.bo.bytes = (char *)v;
        val.data.bo.size = vlen;
        rc = px_pmix.put(PMIX_GLOBAL, key, &val); /* PMIx copies it */
        if (rc != PMIX_SUCCESS) {
            px_error("boot", "pmix: PMIx_Put of '%s': %s", key, px_pmix.error_string(rc));
            return PX_ERR_IO;
        }
    }
    if (npending && (rc = px_pmix.commit()) != PMIX_SUCCESS) {
        px_error("boot", "pmix: PMIx_Commit: %s", px_pmix.error_string(rc));
        return PX_ERR_IO;
    }
    pmix_info_t collect;
    px_pmix_flag(&collect, PMIX_COLLECT_DATA);
    pmix_proc_t all = px_pmix.me;
    all.rank = PMIX_RANK_WILDCARD;
    rc = px_pmix.fence(&all, 1, &collect, 1);
    if (rc != PMIX_SUCCESS) {
        px_error("boot", "pmix: PMIx_Fence: %s", px_pmix.error_string(rc));
        return PX_ERR_JOB_ABORTED;
    }
    return PX_OK;
}

static px_status_t px_pmix_get(int rank, const char *key)
{
    pmix_proc_t p = px_pmix.me;
    pmix_value_t *v = NULL;
    pmix_info_t local;
    /* after a collecting fence the data is here: never wait for a key
     * nobody put */
    px_pmix_flag(&local, PMIX_OPTIONAL);
    p.rank = (pmix_rank_t)rank;
    if (px_pmix.get(&p, key, &local, 1, &v) != PMIX_SUCCESS || !v)
        return PX_ERR_NOT_FOUND;
    px_status_t st = PX_ERR_PROTOCOL;
    if (v->type == PMIX_BYTE_OBJECT && v->data.bo.size <= PX_BOOT_VAL_MAX)
        st = px_boot_store_insert(rank, (const uint8_t *)key, strlen(key),
                                  (const uint8_t *)v->data.bo.bytes, v->data.bo.size);
    px_pmix_release(v);
    return st;
}

static px_status_t px_pmix_finalize(void)
{
    return px_pmix.finalize(NULL, 0) == PMIX_SUCCESS ? PX_OK : PX_ERR_IO;
}

static void px_pmix_abort(int code, const char *msg) __attribute__((noreturn));
static void px_pmix_abort(int code, const char *msg)
{
    char why[PX_BOOT_ABORT_MSG_MAX + 64];
    snprintf(why, sizeof(why), "abort with code %d: %s", code, msg ? msg : "");
    fprintf(stderr, "plexus rank %d: %s\n", px_boot_self_rank(), why);
    /* NULL procs: the whole job */
    px_pmix.abort(code & 0xff ? code & 0xff : 1, msg ? msg : "", NULL, 0);
    px_boot_die(why, code & 0xff ? code & 0xff : 1);
}

static const px_boot_backend_ops_t px_pmix_ops = {
    .name = "pmix",
    .fence = px_pmix_fence,
    .get = px_pmix_get,
    .finalize = px_pmix_finalize,
    .abort = px_pmix_abort,
};

static int px_pmix_load(void)
{
    const char *names[] = {"libpmix.so.2", "libpmix.so"};
    for (size_t i = 0; i < 2 && !px_pmix.lib; i++)
        px_pmix.lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
    if (!px_pmix.lib) {
        px_error("boot",
                 "pmix: the job was started with PMIx (PMIX_NAMESPACE is set) but its client "
                 "library cannot be loaded (%s): install it (Debian: libpmix2), or start with "
                 "srun --mpi=pmi2 or pxrun",
                 dlerror());
        return 0;
    }
#define PX_PMIX_SYM(f, s)                                                                          \
    do {                                                                                           \
        *(void **)&px_pmix.f = dlsym(px_pmix.lib, s);                                              \
        if (!px_pmix.f) {                                                                          \
            px_error("boot", "pmix: libpmix has no %s", s);                                        \
            return 0;                                                                              \
        }                                                                                          \
    } while (0)
    PX_PMIX_SYM(init, "PMIx_Init");
    PX_PMIX_SYM(finalize, "PMIx_Finalize");
    PX_PMIX_SYM(abort, "PMIx_Abort");
    PX_PMIX_SYM(put, "PMIx_Put");
    PX_PMIX_SYM(commit, "PMIx_Commit");
    PX_PMIX_SYM(fence, "PMIx_Fence");
    PX_PMIX_SYM(get, "PMIx_Get");
    PX_PMIX_SYM(value_destruct, "PMIx_Value_destruct");
    PX_PMIX_SYM(error_string, "PMIx_Error_string");
#undef PX_PMIX_SYM
    return 1;
}

const char *px_boot_pmix_missing(void)
{
    void *h = dlopen("libpmix.so.2", RTLD_LAZY | RTLD_LOCAL);
    if (!h)
        return "libpmix.so.2 not found (Debian: libpmix2)";
    dlclose(h);
    return "";
}

px_status_t px_boot_pmix_open(px_boot_rm_job_t *job, const px_boot_backend_ops_t **ops_p)
{
    if (!getenv("PMIX_NAMESPACE") || !getenv("PMIX_RANK"))
        return PX_ERR_NOT_FOUND;
    if (!px_pmix_load())
        return PX_ERR_INVALID_PARAM;
    pmix_status_t rc = px_pmix.init(&px_pmix.me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        px_error("boot", "pmix: PMIx_Init: %s", px_pmix.error_string(rc));
        return PX_ERR_IO;
    }
    long size = 0, univ = 0, nodes = 0;
    if (!px_pmix_uint(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &size) || size < 1 ||
        size > PX_BOOT_MAX_RANKS || px_pmix.me.rank >= (pmix_rank_t)size) {
        px_error("boot", "pmix: no usable job size (PMIX_JOB_SIZE) for rank %u", px_pmix.me.rank);
        return PX_ERR_PROTOCOL;
    }
    if (!px_pmix_uint(PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, &univ))
        univ = size;
    /* Managers differ in what they say of other ranks' nodes (Slurm: only
     * of this node's); every one names this rank's, and the ranks swap
     * that (px_boot_rm_init). */
    pmix_value_t *v = NULL;
    if (px_pmix.get(&px_pmix.me, PMIX_HOSTNAME, NULL, 0, &v) == PMIX_SUCCESS && v &&
        v->type == PMIX_STRING && v->data.string && v->data.string[0])
        snprintf(job->node_label, sizeof(job->node_label), "%s", v->data.string);
    else if (px_pmix_uint(px_pmix.me.rank, PMIX_NODEID, &nodes))
        snprintf(job->node_label, sizeof(job->node_label), "nodeid %ld", nodes);
    else {
        px_error("boot", "pmix: neither PMIX_HOSTNAME nor PMIX_NODEID for this rank");
        px_pmix_release(v);
        return PX_ERR_PROTOCOL;
    }
    px_pmix_release(v);
    job->rank = (int)px_pmix.me.rank;
    job->size = (int)size;
    job->universe_size = (int)univ;
    job->node_of = NULL;
    snprintf(job->id, sizeof(job->id), "pmix:%s", px_pmix.me.nspace);
    job->via = "PMIx";
    *ops_p = &px_pmix_ops;
    return PX_OK;
}

#else /* no PMIx headers at build time */

const char *px_boot_pmix_missing(void)
{
    return "not built: no PMIx headers at build time (Debian: libpmix-dev)";
}

px_status_t px_boot_pmix_open(px_boot_rm_job_t *job, const px_boot_backend_ops_t **ops_p)
{
    (void)job;
    (void)ops_p;
    if (!getenv("PMIX_NAMESPACE") || !getenv("PMIX_RANK"))
        return PX_ERR_NOT_FOUND;
    px_error("boot", "the job was started with PMIx (PMIX_NAMESPACE is set) but this Plexus was "
                     "built without PMIx's headers (Debian: libpmix-dev): start with srun "
                     "--mpi=pmi2 or pxrun");
    return PX_ERR_UNSUPPORTED;
}

#endif
