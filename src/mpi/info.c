/* Info objects: ordered (key, value) string pairs, the predefined read-only
 * MPI_INFO_ENV, and the hints of communicators (Comm_set_info/get_info). */
#include "mpi_impl.h"
#include "../util/lanes.h"
#include "../util/log.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

typedef struct px_info_kv {
    struct px_info_kv *next;
    char *key, *value;
} px_info_kv_t;

struct px_mpi_info {
    MPI_Info handle;
    int readonly;
    int nkeys;
    px_info_kv_t *head, *tail; /* insertion order is the order of Get_nthkey */
};

static px_htab_t px_info_tab;
#define PX_INFO_DYN 0x9c000000u
static px_mpi_info_t px_info_env = {MPI_INFO_ENV, 1, 0, NULL, NULL};
static int px_info_env_ready;

static px_info_kv_t *px_info_find(const px_mpi_info_t *in, const char *key, px_info_kv_t **prev_p)
{
    px_info_kv_t *prev = NULL;
    for (px_info_kv_t *e = in->head; e; prev = e, e = e->next)
        if (strcmp(e->key, key) == 0) {
            if (prev_p)
                *prev_p = prev;
            return e;
        }
    return NULL;
}

static int px_info_put(px_mpi_info_t *in, const char *key, const char *value)
{
    char *v = strdup(value);
    if (!v)
        return MPI_ERR_NO_MEM;
    px_info_kv_t *e = px_info_find(in, key, NULL);
    if (e) { /* a new value replaces the old one, the key keeps its place */
        free(e->value);
        e->value = v;
        return MPI_SUCCESS;
    }
    e = calloc(1, sizeof(*e));
    if (!e || !(e->key = strdup(key))) {
        free(e);
        free(v);
        return MPI_ERR_NO_MEM;
    }
    e->value = v;
    if (in->tail)
        in->tail->next = e;
    else
        in->head = e;
    in->tail = e;
    in->nkeys++;
    return MPI_SUCCESS;
}

static void px_info_clear(px_mpi_info_t *in)
{
    px_info_kv_t *e = in->head;
    while (e) {
        px_info_kv_t *n = e->next;
        free(e->key);
        free(e->value);
        free(e);
        e = n;
    }
    in->head = in->tail = NULL;
    in->nkeys = 0;
}

px_mpi_info_t *px_mpi_info_copy(const px_mpi_info_t *src)
{
    px_mpi_info_t *in = calloc(1, sizeof(*in));
    if (!in)
        return NULL;
    in->handle = MPI_INFO_NULL;
    for (const px_info_kv_t *e = src ? src->head : NULL; e; e = e->next)
        if (px_info_put(in, e->key, e->value) != MPI_SUCCESS) {
            px_info_clear(in);
            free(in);
            return NULL;
        }
    return in;
}

void px_mpi_info_destroy(px_mpi_info_t *in)
{
    if (!in || in == &px_info_env)
        return;
    if (in->handle != MPI_INFO_NULL)
        px_htab_del(&px_info_tab, PX_HANDLE_IDX(in->handle));
    px_info_clear(in);
    free(in);
}

/* MPI_INFO_ENV (MPI 3.1 section 8.8): how the process was started, as far
 * as it is known here (no "soft" or "file": the launcher has neither);
 * built at first use. */
static void px_info_env_build(void)
{
    char buf[MPI_MAX_INFO_VAL + 1];
    /* built again once MPI is initialized if first read before */
    px_info_clear(&px_info_env);
    px_info_env_ready = px_mpi_comm_world != NULL;
    /* command and argv from the kernel's copy of the command line */
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f) {
        char line[8192];
        size_t n = fread(line, 1, sizeof(line) - 1, f);
        fclose(f);
        line[n] = 0;
        if (n > 0) {
            px_info_put(&px_info_env, "command", line);
            size_t off = strlen(line) + 1, len = 0;
            buf[0] = 0;
            while (off < n) {
                const char *arg = line + off;
                size_t al = strlen(arg);
                if (len + al + 2 > sizeof(buf))
                    break;
                len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", len ? " " : "", arg);
                off += al + 1;
            }
            if (len)
                px_info_put(&px_info_env, "argv", buf);
        }
    }
    if (px_mpi_comm_world) {
        snprintf(buf, sizeof(buf), "%d", px_mpi_comm_world->size);
        px_info_put(&px_info_env, "maxprocs", buf);
    }
    if (gethostname(buf, sizeof(buf) - 1) == 0) {
        buf[sizeof(buf) - 1] = 0;
        px_info_put(&px_info_env, "host", buf);
    }
    struct utsname u;
    if (uname(&u) == 0)
        px_info_put(&px_info_env, "arch", u.machine);
    if (getcwd(buf, sizeof(buf)))
        px_info_put(&px_info_env, "wdir", buf);
    int level = MPI_THREAD_SINGLE;
    if (px_mpi_initialized)
        PMPI_Query_thread(&level);
    px_info_put(&px_info_env, "thread_level",
                level == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
                : level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                : level == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                                                 : "MPI_THREAD_SINGLE");
}

static px_mpi_info_t *px_info_get(MPI_Info h)
{
    if (h == MPI_INFO_ENV) {
        if (!px_info_env_ready)
            px_info_env_build();
        return &px_info_env;
    }
    if (PX_HANDLE_HI(h) != PX_INFO_DYN)
        return NULL;
    px_mpi_info_t *in = px_htab_get(&px_info_tab, PX_HANDLE_IDX(h));
    return in && in->handle == h ? in : NULL;
}

const char *px_mpi_info_value(MPI_Info h, const char *key)
{
    const px_mpi_info_t *in = h == MPI_INFO_NULL ? NULL : px_info_get(h);
    const px_info_kv_t *e = in ? px_info_find(in, key, NULL) : NULL;
    return e ? e->value : NULL;
}

static int px_info_register(px_mpi_info_t *in, MPI_Info *out)
{
    int idx = px_htab_add(&px_info_tab, in);
    if (idx < 0)
        return MPI_ERR_NO_MEM;
    in->handle = (MPI_Info)(PX_INFO_DYN | (unsigned)idx);
    *out = in->handle;
    return MPI_SUCCESS;
}

#define PX_GET_INFO(var, h, fn)                                                                    \
    px_mpi_info_t *var = px_info_get(h);                                                           \
    if (!var)                                                                                      \
    return px_mpi_error(NULL, MPI_ERR_INFO, fn, "invalid info object")

static int px_info_check_key(const char *key, const char *fn)
{
    if (!key)
        return px_mpi_error(NULL, MPI_ERR_INFO_KEY, fn, "null key");
    size_t len = strlen(key);
    if (len == 0 || len > MPI_MAX_INFO_KEY)
        return px_mpi_error(NULL, MPI_ERR_INFO_KEY, fn, "key of %zu characters (1 to %d allowed)",
                            len, MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Info_create)(MPI_Info *info)
{
    PX_CS_ENTER();
    if (!info)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Info_create", "null argument");
    px_mpi_info_t *in = px_mpi_info_copy(NULL);
    if (!in || px_info_register(in, info) != MPI_SUCCESS) {
        free(in);
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, "MPI_Info_create", "out of memory");
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Info_create)

/* The number of processes the job was started with: MPI_COMM_WORLD's size
 * while MPI is initialized, else what the launcher put in the environment
 * (pxrun, Slurm, a PMI-1 launcher), 1 for a process no launcher started, and
 * 0 (unknown) under a PMI-2 or PMIx server that tells it only at MPI_Init.
 * So MPI_Info_create_env gives the same before MPI_Init, during and after. */
static int px_info_job_size(void)
{
    if (px_mpi_initialized && !px_mpi_finalized)
        return px_mpi_comm_world->size;
    static const char *const vars[] = {"PX_SIZE", "SLURM_STEP_NUM_TASKS", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        char *end;
        long n = v ? strtol(v, &end, 10) : 0;
        if (v && *v && !*end && n > 0 && n <= INT_MAX)
            return (int)n;
    }
    if (getenv("PMIX_RANK") || getenv("PMI_FD") || getenv("PMI_PORT"))
        return 0;
    return 1;
}

/* MPI-4.0: the environment the process was started in, under the keys of
 * MPI_Comm_spawn's info (those this process can tell). Valid before
 * MPI_Init, with the arguments main was given (or none). */
PX_PMPI(MPI_Info_create_env)(int argc, char *argv[], MPI_Info *info)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Info_create_env";
    if (!info || argc < 0 || (argc > 0 && !argv))
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid arguments");
    int rc = PMPI_Info_create(info);
    if (rc != MPI_SUCCESS)
        return rc;
    char buf[4096], host[256] = "";
    struct utsname u;
    size_t len = 0;
    buf[0] = 0;
    for (int i = 1; i < argc && argv[i]; i++) /* the arguments after the command */
        len += (size_t)snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0, "%s%s",
                                i > 1 ? " " : "", argv[i]);
    if (argc > 0 && argv[0])
        rc = PMPI_Info_set(*info, "command", argv[0]);
    if (rc == MPI_SUCCESS && argc > 1 && len < sizeof(buf))
        rc = PMPI_Info_set(*info, "argv", buf);
    int maxprocs = px_info_job_size();
    if (rc == MPI_SUCCESS && maxprocs > 0) {
        snprintf(buf, sizeof(buf), "%d", maxprocs);
        rc = PMPI_Info_set(*info, "maxprocs", buf);
    }
    if (rc == MPI_SUCCESS && gethostname(host, sizeof(host) - 1) == 0)
        rc = PMPI_Info_set(*info, "host", host);
    if (rc == MPI_SUCCESS && uname(&u) == 0)
        rc = PMPI_Info_set(*info, "arch", u.machine);
    if (rc == MPI_SUCCESS && getcwd(buf, sizeof(buf)))
        rc = PMPI_Info_set(*info, "wdir", buf);
    if (rc == MPI_SUCCESS) {
        static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                             "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
        int level = MPI_THREAD_SINGLE;
        if (px_mpi_initialized && !px_mpi_finalized)
            PMPI_Query_thread(&level);
        rc = PMPI_Info_set(*info, "thread_level", levels[level & 3]);
    }
    if (rc != MPI_SUCCESS)
        PMPI_Info_free(info);
    return rc;
}
PX_WEAK(MPI_Info_create_env)

PX_PMPI(MPI_Info_set)(MPI_Info info, const char *key, const char *value)
{
    PX_CS_ENTER();
    PX_GET_INFO(in, info, "MPI_Info_set");
    int rc = px_info_check_key(key, "MPI_Info_set");
    if (rc != MPI_SUCCESS)
        return rc;
    if (!value)
        return px_mpi_error(NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set", "null value");
    if (strlen(value) > MPI_MAX_INFO_VAL)
        return px_mpi_error(NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set",
                            "value of %zu characters (at most %d allowed)", strlen(value),
                            MPI_MAX_INFO_VAL);
    if (in->readonly)
        return px_mpi_error(NULL, MPI_ERR_INFO, "MPI_Info_set", "MPI_INFO_ENV is read-only");
    if (px_info_put(in, key, value) != MPI_SUCCESS)
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, "MPI_Info_set", "out of memory");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Info_set)

PX_PMPI(MPI_Info_delete)(MPI_Info info, const char *key)
{
    PX_CS_ENTER();
    PX_GET_INFO(in, info, "MPI_Info_delete");
    int rc = px_info_check_key(key, "MPI_Info_delete");
    if (rc != MPI_SUCCESS)
        return rc;
    if (in->readonly)
        return px_mpi_error(NULL, MPI_ERR_INFO, "MPI_Info_delete", "MPI_INFO_ENV is read-only");
    px_info_kv_t *prev = NULL, *e = px_info_find(in, key, &prev);
    if (!e)
        return px_mpi_error(NULL, MPI_ERR_INFO_NOKEY, "MPI_Info_delete", "no key \"%s\"", key);
    if (prev)
        prev->next = e->next;
    else
        in->head = e->next;
    if (in->tail == e)
        in->tail = prev;
    in->nkeys--;
    free(e->key);
    free(e->value);
    free(e);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Info_delete)

PX_PMPI(MPI_Info_get)(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    PX_CS_ENTER();
    PX_GET_INFO(in, info, "MPI_Info_get");
    int rc = px_info_check_key(key, "MPI_Info_get");
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag || valuelen < 0 || (!value && valuelen > 0))
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Info_get", "invalid arguments");
    px_info_kv_t *e = px_info_find(in, key, NULL);
    *flag = e != NULL;
    if (e && value) { /* at most valuelen characters, then the terminator */
        size_t n = strlen(e->value);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, e->value, n);
        value[n] = 0;
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Info_get)

/* MPI-4.0: *buflen in, the room at value; out, the value's length + 1.
 * A buffer too short gets the value cut, still terminated. */
PX_PMPI(MPI_Info_get_string)(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Info_get_string";
    PX_GET_INFO(in, info, fn);
    int rc = px_info_check_key(key, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag || !buflen || *buflen < 0 || (!value && *buflen > 0))
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid arguments");
    px_info_kv_t *e = px_info_find(in, key, NULL);
    *flag = e != NULL;
    if (!e)
        return MPI_SUCCESS;
    size_t n = strlen(e->value);
    if (*buflen > 0) {
        size_t k = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
        memcpy(value, e->value, k);
        value[k] = 0;
    }
    *buflen = (int)n + 1;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Info_get_string)

PX_PMPI(MPI_Info_get_valuelen)(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    PX_CS_ENTER();
    PX_GET_INFO(in, info, "MPI_Info_get_valuelen");
    int rc = px_info_check_key(key, "MPI_Info_get_valuelen");
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag || !valuelen)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Info_get_valuelen", "null argument");
    px_info_kv_t *e = px_info_find(in, key, NULL);
    *flag = e != NULL;
    if (e)
        *valuelen = (int)strlen(e->value);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Info_get_valuelen)

PX_PMPI(MPI_Info_get_nkeys)(MPI_Info info, int *nkeys)
{
    PX_CS_ENTER();
    PX_GET_INFO(in, info, "MPI_Info_get_nkeys");
    if (!nkeys)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Info_get_nkeys", "null argument");
    *nkeys = in->nkeys;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Info_get_nkeys)

PX_PMPI(MPI_Info_get_nthkey)(MPI_Info info, int n, char *key)
{
    PX_CS_ENTER();
    PX_GET_INFO(in, info, "MPI_Info_get_nthkey");
    if (!key)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey", "null argument");
    if (n < 0 || n >= in->nkeys)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey",
                            "key number %d of an object with %d keys", n, in->nkeys);
    px_info_kv_t *e = in->head;
    for (int i = 0; i < n; i++)
        e = e->next;
    snprintf(key, MPI_MAX_INFO_KEY + 1, "%s", e->key);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Info_get_nthkey)

PX_PMPI(MPI_Info_dup)(MPI_Info info, MPI_Info *newinfo)
{
    PX_CS_ENTER();
    PX_GET_INFO(in, info, "MPI_Info_dup");
    if (!newinfo)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Info_dup", "null argument");
    px_mpi_info_t *c = px_mpi_info_copy(in);
    if (!c || px_info_register(c, newinfo) != MPI_SUCCESS) {
        px_mpi_info_destroy(c);
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, "MPI_Info_dup", "out of memory");
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Info_dup)

PX_PMPI(MPI_Info_free)(MPI_Info *info)
{
    PX_CS_ENTER();
    if (!info)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Info_free", "null argument");
    PX_GET_INFO(in, *info, "MPI_Info_free");
    if (in->readonly)
        return px_mpi_error(NULL, MPI_ERR_INFO, "MPI_Info_free",
                            "cannot free the predefined MPI_INFO_ENV");
    px_mpi_info_destroy(in);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Info_free)

/* ---------- communicator hints ---------- */

/* Every hint is kept as given, and Comm_get_info returns a copy of what was
 * set. The one Plexus acts on: plexus_lane_class = small, coll, medium or
 * bulk sends every message of the communicator on that class's lane, or
 * auto (the default) by its size (docs/lanes.md). Another value is
 * ignored, with a warning. */
/* The hints a communicator keeps, which MPI_Comm_get_info returns: the
 * standard's assertions and Plexus's own; others are ignored (MPI-4.0
 * 7.4.4; logged at debug level). */
static int px_comm_hint_known(const char *key)
{
    return strncmp(key, "mpi_assert_", 11) == 0 || strncmp(key, "plexus_", 7) == 0;
}

static px_mpi_info_t *px_comm_info_copy(const px_mpi_info_t *src)
{
    px_mpi_info_t *in = calloc(1, sizeof(*in));
    if (!in)
        return NULL;
    in->handle = MPI_INFO_NULL;
    for (const px_info_kv_t *e = src->head; e; e = e->next) {
        if (!px_comm_hint_known(e->key)) {
            px_debug("mpi", "communicator hint %s ignored", e->key);
            continue;
        }
        if (px_info_put(in, e->key, e->value) != MPI_SUCCESS) {
            px_info_clear(in);
            free(in);
            return NULL;
        }
    }
    return in;
}

static void px_comm_hints(px_mpi_comm_t *c)
{
    px_info_kv_t *e = c->info ? px_info_find(c->info, "plexus_lane_class", NULL) : NULL;
    c->lane_mode = 0;
    if (!e || strcmp(e->value, "auto") == 0)
        return;
    for (int k = 0; k < PX_LANE_NCLASS; k++)
        if (strcmp(e->value, px_lane_class_name(k)) == 0) {
            c->lane_mode = PX_PROTO_MODE_CLASS | (k << PX_PROTO_MODE_CLASS_SHIFT);
            return;
        }
    px_warn("mpi", "plexus_lane_class=%s ignored: small, coll, medium, bulk or auto", e->value);
}

PX_PMPI(MPI_Comm_set_info)(MPI_Comm comm, MPI_Info info)
{
    PX_CS_ENTER();
    PX_CHECK_INIT("MPI_Comm_set_info");
    PX_GET_COMM(c, comm, "MPI_Comm_set_info");
    px_mpi_info_t *in = px_info_get(info);
    if (!in)
        return px_mpi_error(c, MPI_ERR_INFO, "MPI_Comm_set_info", "invalid info object");
    px_mpi_info_t *copy = px_comm_info_copy(in);
    if (!copy)
        return px_mpi_error(c, MPI_ERR_NO_MEM, "MPI_Comm_set_info", "out of memory");
    if (c->info) { /* later hints replace earlier ones of the same key */
        for (px_info_kv_t *e = copy->head; e; e = e->next)
            if (px_info_put(c->info, e->key, e->value) != MPI_SUCCESS) {
                px_mpi_info_destroy(copy);
                return px_mpi_error(c, MPI_ERR_NO_MEM, "MPI_Comm_set_info", "out of memory");
            }
        px_mpi_info_destroy(copy);
    } else {
        c->info = copy;
    }
    px_comm_hints(c);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_set_info)

PX_PMPI(MPI_Comm_get_info)(MPI_Comm comm, MPI_Info *info_used)
{
    PX_CS_ENTER();
    PX_CHECK_INIT("MPI_Comm_get_info");
    PX_GET_COMM(c, comm, "MPI_Comm_get_info");
    if (!info_used)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Comm_get_info", "null argument");
    px_mpi_info_t *copy = px_mpi_info_copy(c->info);
    if (!copy || px_info_register(copy, info_used) != MPI_SUCCESS) {
        px_mpi_info_destroy(copy);
        return px_mpi_error(c, MPI_ERR_NO_MEM, "MPI_Comm_get_info", "out of memory");
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_get_info)

/* Hints given to MPI_Comm_dup_with_info replace those copied from the original. */
int px_mpi_info_valid(MPI_Info info) { return px_info_get(info) != NULL; }

int px_mpi_info_set_comm(px_mpi_comm_t *c, MPI_Info info)
{
    if (info == MPI_INFO_NULL) {
        px_mpi_info_destroy(c->info);
        c->info = NULL;
        c->lane_mode = 0;
        return MPI_SUCCESS;
    }
    px_mpi_info_t *in = px_info_get(info);
    if (!in)
        return MPI_ERR_INFO;
    px_mpi_info_t *copy = px_comm_info_copy(in);
    if (!copy)
        return MPI_ERR_NO_MEM;
    px_mpi_info_destroy(c->info);
    c->info = copy;
    px_comm_hints(c);
    return MPI_SUCCESS;
}
