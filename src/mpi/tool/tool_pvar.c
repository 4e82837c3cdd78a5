/* Performance variables: the counters every layer keeps
 * (src/util/counters.def, read through px_proto_counters), the traffic
 * with each process of a communicator, a communicator's queues, and the
 * uses of each collective algorithm. Nothing is counted for MPI_T on the
 * message path: a read sums what the layers keep anyway.
 *
 * Counters and timers (MPI-4.0 15.3.7): a handle starts at 0 when
 * allocated, stopped; while started it follows the variable; a stopped one
 * keeps its value; write, reset and readreset act on the handle alone.
 * Levels are continuous and read-only: a read is the amount now. After
 * MPI_Finalize the process-wide variables keep the values they reached. */
#include "tool_impl.h"
#include "../coll/coll_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    PX_T_PV_CTR,         /* PX_CTR_<arg> */
    PX_T_PV_PEER_SENT,   /* bytes to each process of a communicator */
    PX_T_PV_PEER_RECV,   /* ... from each */
    PX_T_PV_COMM_UNEXP,  /* a communicator's unexpected queue */
    PX_T_PV_COMM_POSTED, /* its posted receives */
    PX_T_PV_COLL_CALLS,  /* algorithm <arg> of the registry */
    PX_T_PV_COLL_BYTES,
    PX_T_PV_IO, /* px_mpi_io_stats[arg] */
};

typedef struct px_t_pvar {
    char name[64];
    const char *desc;
    int cls;
    int verbosity;
    int bind;
    int kind, arg;
    int sum;   /* COUNTER, TIMER: handles accumulate (else: the amount now) */
    int timer; /* kept in nanoseconds, read as seconds (MPI_DOUBLE) */
} px_t_pvar_t;

static px_t_pvar_t *px_t_pvars;
static int px_t_npvar;

static const struct {
    const char *name, *category, *doc;
    int cls;
} px_t_ctr_rows[PX_CTR_N] = {
#define PX_COUNTER(name, category, cls, doc) {#name, category, doc, MPI_T_PVAR_CLASS_##cls},
#include "../../util/counters.def"
#undef PX_COUNTER
};

/* The counters as MPI_Finalize left them (px_mpi_tool_finalize). */
static uint64_t px_t_final[PX_CTR_N];
static int px_t_final_taken;

static void px_t_counters(uint64_t *c)
{
    if (px_t_final_taken)
        memcpy(c, px_t_final, sizeof(px_t_final));
    else
        px_proto_counters(c);
}

void px_mpi_tool_finalize(void)
{
    px_proto_counters(px_t_final);
    px_t_final_taken = 1;
}

static px_t_pvar_t *px_t_pvar_add(const char *category, int kind, int arg, int cls, int bind)
{
    px_t_pvar_t *v = &px_t_pvars[px_t_npvar];
    /* what a user looks at first: messages and bytes; then channels and
     * communicators; the rails' and algorithms' details are a tuner's */
    v->verbosity =
        !strcmp(category, "proto") && bind == MPI_T_BIND_NO_OBJECT ? MPI_T_VERBOSITY_USER_BASIC
        : !strcmp(category, "proto") || !strcmp(category, "chan")  ? MPI_T_VERBOSITY_USER_DETAIL
        : !strcmp(category, "rail")                                ? MPI_T_VERBOSITY_TUNER_BASIC
                                                                   : MPI_T_VERBOSITY_TUNER_DETAIL;
    v->kind = kind;
    v->arg = arg;
    v->cls = cls;
    v->bind = bind;
    v->sum = cls == MPI_T_PVAR_CLASS_COUNTER || cls == MPI_T_PVAR_CLASS_TIMER;
    v->timer = cls == MPI_T_PVAR_CLASS_TIMER;
    px_t_cat_add_pvar(px_t_cat_of(category), px_t_npvar++);
    return v;
}

void px_t_pvar_setup(void)
{
    int nalg = px_coll_algo_count();
    px_t_pvars = calloc((size_t)(PX_CTR_N + 4 + 2 * nalg + PX_IO_STAT_N), sizeof(*px_t_pvars));
    if (!px_t_pvars)
        return;
    for (int i = 0; i < PX_CTR_N; i++) {
        px_t_pvar_t *v = px_t_pvar_add(px_t_ctr_rows[i].category, PX_T_PV_CTR, i,
                                       px_t_ctr_rows[i].cls, MPI_T_BIND_NO_OBJECT);
        snprintf(v->name, sizeof(v->name), "%s", px_t_ctr_rows[i].name);
        v->desc = px_t_ctr_rows[i].doc;
    }
    static const struct {
        const char *name, *desc;
        int kind, cls;
    } comm_vars[] = {
        {"proto_bytes_sent_to",
         "Bytes sent to each process of the communicator, element i for its rank i (remote "
         "group of an inter-communicator), over every communicator: the protocols count by "
         "process",
         PX_T_PV_PEER_SENT, MPI_T_PVAR_CLASS_COUNTER},
        {"proto_bytes_received_from",
         "Bytes received from each process of the communicator, element i for its rank i, over "
         "every communicator",
         PX_T_PV_PEER_RECV, MPI_T_PVAR_CLASS_COUNTER},
        {"proto_unexpected_queue_comm",
         "Messages in the unexpected queue now that were sent on this communicator (its "
         "point-to-point and collective traffic)",
         PX_T_PV_COMM_UNEXP, MPI_T_PVAR_CLASS_LEVEL},
        {"proto_posted_queue_comm", "Receives posted on this communicator and not yet matched now",
         PX_T_PV_COMM_POSTED, MPI_T_PVAR_CLASS_LEVEL},
    };
    for (size_t i = 0; i < sizeof(comm_vars) / sizeof(comm_vars[0]); i++) {
        px_t_pvar_t *v =
            px_t_pvar_add("proto", comm_vars[i].kind, 0, comm_vars[i].cls, MPI_T_BIND_MPI_COMM);
        snprintf(v->name, sizeof(v->name), "%s", comm_vars[i].name);
        v->desc = comm_vars[i].desc;
    }
    for (int i = 0; i < nalg; i++) {
        const char *coll, *algo = px_coll_algo_info(i, &coll);
        for (int bytes = 0; bytes < 2; bytes++) {
            px_t_pvar_t *v =
                px_t_pvar_add("mpi.coll", bytes ? PX_T_PV_COLL_BYTES : PX_T_PV_COLL_CALLS, i,
                              MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT);
            snprintf(v->name, sizeof(v->name), "coll_%s_%s_%s", coll, algo,
                     bytes ? "bytes" : "calls");
            v->desc = bytes ? "Message bytes of the collective calls that used this algorithm "
                              "(the size selection uses: the whole vector for bcast and the "
                              "reductions, one rank's block for gathers, scatters and alltoalls)"
                            : "Collective calls that used this algorithm: blocking, nonblocking "
                              "and persistent (counted at each start) ones, the library's "
                              "own, and the parts of node-aware and composite algorithms (calls "
                              "that move no data count nowhere)";
        }
    }
    static const struct {
        const char *name, *desc;
    } io_vars[PX_IO_STAT_N] = {
        [PX_IO_STAT_TWO_PHASE] = {"io_coll_two_phase",
                                  "Collective file accesses of this process that went through "
                                  "two-phase collective buffering (docs/io.md)"},
        [PX_IO_STAT_DIRECT] = {"io_coll_direct",
                               "Collective file accesses in which each process did its own "
                               "access (ranges apart, or pieces of a file-system block or more)"},
        [PX_IO_STAT_AGG_BYTES] = {"io_aggregated_bytes",
                                  "Bytes this process wrote or read for others as an aggregator "
                                  "of two-phase collective buffering (its own included)"},
        [PX_IO_STAT_FSYNC] = {"io_fsyncs",
                              "fsync calls MPI_File_sync made at this process (none where the "
                              "process wrote nothing through the file since its last sync)"},
    };
    for (int i = 0; i < PX_IO_STAT_N; i++) {
        px_t_pvar_t *v =
            px_t_pvar_add("mpi.io", PX_T_PV_IO, i, MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT);
        snprintf(v->name, sizeof(v->name), "%s", io_vars[i].name);
        v->desc = io_vars[i].desc;
    }
}

/* ---------- sessions and handles ---------- */

struct MPIR_T_pvar_handle_s {
    px_t_link_t link;
    int idx;
    int count;
    int started;
    MPI_Comm comm; /* bound variables: the communicator, as it was */
    uint32_t ctx;
    uint64_t *accum, *base; /* count of each */
    uint64_t *now;          /* room for the variable's value (count) */
};

struct MPIR_T_pvar_session_s {
    px_t_link_t link;
    px_t_link_t *handles;
};

static struct MPIR_T_pvar_handle_s px_t_all_handles;
struct MPIR_T_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES = &px_t_all_handles;

static px_t_link_t *px_t_sessions;

/* The communicator of a bound handle, or NULL when it is gone. */
static px_mpi_comm_t *px_t_handle_comm(const struct MPIR_T_pvar_handle_s *h)
{
    if (!px_mpi_rt_up)
        return NULL;
    px_mpi_comm_t *c = px_mpi_comm_get(h->comm);
    return c && c->ctx == h->ctx ? c : NULL;
}

static const px_mpi_group_t *px_t_peers(const px_mpi_comm_t *c)
{
    return c->is_inter ? c->remote : c->group;
}

/* The variable's value now, count elements. */
static int px_t_pvar_now(const struct MPIR_T_pvar_handle_s *h, uint64_t *out)
{
    const px_t_pvar_t *v = &px_t_pvars[h->idx];
    px_mpi_comm_t *c = NULL;
    if (v->bind == MPI_T_BIND_MPI_COMM && !(c = px_t_handle_comm(h)))
        return MPI_T_ERR_INVALID_HANDLE;
    switch (v->kind) {
    case PX_T_PV_CTR: {
        uint64_t all[PX_CTR_N];
        px_t_counters(all);
        out[0] = all[v->arg];
        break;
    }
    case PX_T_PV_PEER_SENT:
    case PX_T_PV_PEER_RECV:
        for (int i = 0; i < h->count; i++) {
            uint64_t sent = 0, received = 0;
            px_proto_peer_traffic(px_t_peers(c)->world[i], &sent, &received);
            out[i] = v->kind == PX_T_PV_PEER_SENT ? sent : received;
        }
        break;
    case PX_T_PV_COMM_UNEXP:
    case PX_T_PV_COMM_POSTED: {
        uint64_t unexp, posted;
        px_proto_queue_len(c->ctx, 2, &unexp, &posted);
        out[0] = v->kind == PX_T_PV_COMM_UNEXP ? unexp : posted;
        break;
    }
    case PX_T_PV_COLL_CALLS:
    case PX_T_PV_COLL_BYTES: {
        uint64_t calls, bytes;
        px_coll_algo_usage(v->arg, &calls, &bytes);
        out[0] = v->kind == PX_T_PV_COLL_CALLS ? calls : bytes;
        break;
    }
    case PX_T_PV_IO:
        out[0] = px_mpi_io_stats[v->arg];
        break;
    }
    return MPI_SUCCESS;
}

PX_PMPI(MPI_T_pvar_get_num)(int *num_pvar)
{
    PX_T_BEGIN();
    if (!num_pvar)
        return MPI_T_ERR_INVALID;
    *num_pvar = px_t_npvar;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_pvar_get_num)

PX_PMPI(MPI_T_pvar_get_info)
(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class, MPI_Datatype *datatype,
 MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *readonly, int *continuous,
 int *atomic)
{
    PX_T_BEGIN();
    if (pvar_index < 0 || pvar_index >= px_t_npvar)
        return MPI_T_ERR_INVALID_INDEX;
    const px_t_pvar_t *v = &px_t_pvars[pvar_index];
    px_t_str(name, name_len, v->name);
    px_t_str(desc, desc_len, v->desc);
    if (verbosity)
        *verbosity = v->verbosity;
    if (var_class)
        *var_class = v->cls;
    if (datatype)
        *datatype = v->timer ? MPI_DOUBLE : MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = v->bind;
    if (readonly)
        *readonly = !v->sum;
    if (continuous)
        *continuous = !v->sum;
    if (atomic)
        *atomic = v->sum; /* readreset under the library's lock */
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_pvar_get_info)

PX_PMPI(MPI_T_pvar_get_index)(const char *name, int var_class, int *pvar_index)
{
    PX_T_BEGIN();
    if (!name || !pvar_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < px_t_npvar; i++)
        if (px_t_pvars[i].cls == var_class && !strcmp(name, px_t_pvars[i].name)) {
            *pvar_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}
PX_WEAK(MPI_T_pvar_get_index)

PX_PMPI(MPI_T_pvar_session_create)(MPI_T_pvar_session *session)
{
    PX_T_BEGIN();
    if (!session)
        return MPI_T_ERR_INVALID;
    struct MPIR_T_pvar_session_s *s = calloc(1, sizeof(*s));
    if (!s)
        return MPI_T_ERR_MEMORY;
    px_t_list_push(&px_t_sessions, s);
    *session = s;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_pvar_session_create)

static void px_t_handle_destroy(struct MPIR_T_pvar_handle_s *h)
{
    free(h->accum);
    free(h);
}

static void px_t_session_destroy(struct MPIR_T_pvar_session_s *s)
{
    struct MPIR_T_pvar_handle_s *h;
    while ((h = px_t_list_pop(&s->handles)))
        px_t_handle_destroy(h);
    free(s);
}

PX_PMPI(MPI_T_pvar_session_free)(MPI_T_pvar_session *session)
{
    PX_T_BEGIN();
    if (!session || px_t_list_remove(&px_t_sessions, *session) != 0)
        return MPI_T_ERR_INVALID_SESSION;
    px_t_session_destroy(*session);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_pvar_session_free)

void px_t_pvar_release_all(void)
{
    struct MPIR_T_pvar_session_s *s;
    while ((s = px_t_list_pop(&px_t_sessions)))
        px_t_session_destroy(s);
}

PX_PMPI(MPI_T_pvar_handle_alloc)
(MPI_T_pvar_session session, int pvar_index, void *obj_handle, MPI_T_pvar_handle *handle,
 int *count)
{
    PX_T_BEGIN();
    struct MPIR_T_pvar_session_s *s = px_t_list_find(px_t_sessions, session);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    if (pvar_index < 0 || pvar_index >= px_t_npvar)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    const px_t_pvar_t *v = &px_t_pvars[pvar_index];
    struct MPIR_T_pvar_handle_s *h = calloc(1, sizeof(*h));
    if (!h)
        return MPI_T_ERR_MEMORY;
    h->idx = pvar_index;
    h->count = 1;
    if (v->bind == MPI_T_BIND_MPI_COMM) {
        px_mpi_comm_t *c = NULL;
        if (obj_handle && px_mpi_rt_up)
            c = px_mpi_comm_get(*(const MPI_Comm *)obj_handle);
        if (!c) {
            free(h);
            return MPI_T_ERR_INVALID_HANDLE;
        }
        h->comm = c->handle;
        h->ctx = c->ctx;
        if (v->kind == PX_T_PV_PEER_SENT || v->kind == PX_T_PV_PEER_RECV)
            h->count = px_t_peers(c)->size;
    }
    h->accum = calloc(3 * (size_t)h->count, sizeof(uint64_t));
    if (!h->accum) {
        free(h);
        return MPI_T_ERR_MEMORY;
    }
    h->base = h->accum + h->count;
    h->now = h->base + h->count;
    px_t_list_push(&s->handles, h);
    *handle = h;
    *count = h->count;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_pvar_handle_alloc)

PX_PMPI(MPI_T_pvar_handle_free)(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    PX_T_BEGIN();
    struct MPIR_T_pvar_session_s *s = px_t_list_find(px_t_sessions, session);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    if (!handle || px_t_list_remove(&s->handles, *handle) != 0)
        return MPI_T_ERR_INVALID_HANDLE;
    px_t_handle_destroy(*handle);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_pvar_handle_free)

/* ---------- start, stop, read, write, reset ---------- */

enum { PX_T_START, PX_T_STOP, PX_T_RESET };

/* One of start, stop, reset on h; with MPI_T_PVAR_ALL_HANDLES on every
 * handle of the session that supports it. */
static int px_t_handle_op(struct MPIR_T_pvar_handle_s *h, int op)
{
    const px_t_pvar_t *v = &px_t_pvars[h->idx];
    uint64_t *now = h->now;
    if (!v->sum)
        return op == PX_T_RESET ? MPI_T_ERR_PVAR_NO_WRITE : MPI_T_ERR_PVAR_NO_STARTSTOP;
    int rc = px_t_pvar_now(h, now);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < h->count; i++) {
        if (op == PX_T_STOP && h->started)
            h->accum[i] += now[i] - h->base[i];
        if (op == PX_T_RESET)
            h->accum[i] = 0;
        if (op != PX_T_STOP && !(op == PX_T_START && h->started))
            h->base[i] = now[i];
    }
    if (op != PX_T_RESET)
        h->started = op == PX_T_START;
    return MPI_SUCCESS;
}

static int px_t_session_op(MPI_T_pvar_session session, MPI_T_pvar_handle handle, int op)
{
    struct MPIR_T_pvar_session_s *s = px_t_list_find(px_t_sessions, session);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        int rc = MPI_SUCCESS;
        for (px_t_link_t *l = s->handles; l; l = l->next) {
            struct MPIR_T_pvar_handle_s *h = (struct MPIR_T_pvar_handle_s *)l;
            if (px_t_pvars[h->idx].sum) {
                int r = px_t_handle_op(h, op);
                rc = rc == MPI_SUCCESS ? r : rc;
            }
        }
        return rc;
    }
    struct MPIR_T_pvar_handle_s *h = px_t_list_find(s->handles, handle);
    return h ? px_t_handle_op(h, op) : MPI_T_ERR_INVALID_HANDLE;
}

PX_PMPI(MPI_T_pvar_start)(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    PX_T_BEGIN();
    return px_t_session_op(session, handle, PX_T_START);
}
PX_WEAK(MPI_T_pvar_start)

PX_PMPI(MPI_T_pvar_stop)(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    PX_T_BEGIN();
    return px_t_session_op(session, handle, PX_T_STOP);
}
PX_WEAK(MPI_T_pvar_stop)

PX_PMPI(MPI_T_pvar_reset)(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    PX_T_BEGIN();
    return px_t_session_op(session, handle, PX_T_RESET);
}
PX_WEAK(MPI_T_pvar_reset)

/* A single handle of the session for read, write and readreset. */
static int px_t_one_handle(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                           struct MPIR_T_pvar_handle_s **h_p)
{
    struct MPIR_T_pvar_session_s *s = px_t_list_find(px_t_sessions, session);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    *h_p = handle == MPI_T_PVAR_ALL_HANDLES ? NULL : px_t_list_find(s->handles, handle);
    return *h_p ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

static int px_t_read(struct MPIR_T_pvar_handle_s *h, void *buf)
{
    const px_t_pvar_t *v = &px_t_pvars[h->idx];
    uint64_t *val = h->now;
    int rc = px_t_pvar_now(h, val);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < h->count; i++) {
        if (v->sum)
            val[i] = h->accum[i] + (h->started ? val[i] - h->base[i] : 0);
        if (v->timer)
            ((double *)buf)[i] = (double)val[i] * 1e-9;
        else
            ((unsigned long long *)buf)[i] = val[i];
    }
    return MPI_SUCCESS;
}

PX_PMPI(MPI_T_pvar_read)(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    PX_T_BEGIN();
    struct MPIR_T_pvar_handle_s *h;
    int rc = px_t_one_handle(session, handle, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!buf)
        return MPI_T_ERR_INVALID;
    return px_t_read(h, buf);
}
PX_WEAK(MPI_T_pvar_read)

PX_PMPI(MPI_T_pvar_write)(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    PX_T_BEGIN();
    struct MPIR_T_pvar_handle_s *h;
    int rc = px_t_one_handle(session, handle, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    const px_t_pvar_t *v = &px_t_pvars[h->idx];
    if (!v->sum)
        return MPI_T_ERR_PVAR_NO_WRITE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    uint64_t *now = h->now;
    if ((rc = px_t_pvar_now(h, now)) != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < h->count; i++) {
        h->accum[i] = v->timer ? (uint64_t)(((const double *)buf)[i] * 1e9)
                               : ((const unsigned long long *)buf)[i];
        h->base[i] = now[i];
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_pvar_write)

PX_PMPI(MPI_T_pvar_readreset)(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    PX_T_BEGIN();
    struct MPIR_T_pvar_handle_s *h;
    int rc = px_t_one_handle(session, handle, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!px_t_pvars[h->idx].sum)
        return MPI_T_ERR_PVAR_NO_WRITE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    /* both under the library's lock: nothing counted in between is lost */
    rc = px_t_read(h, buf);
    return rc == MPI_SUCCESS ? px_t_handle_op(h, PX_T_RESET) : rc;
}
PX_WEAK(MPI_T_pvar_readreset)
