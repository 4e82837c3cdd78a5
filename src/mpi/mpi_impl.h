/* Internal state of the MPI layer: handles, communicators, groups,
 * requests, datatypes, error handling. */
#ifndef PX_MPI_IMPL_H
#define PX_MPI_IMPL_H

#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include "../boot/boot.h"
#include "../proto/proto.h"
#include "../util/cs.h"
#include "../util/log.h"
#include "../util/param.h"
#include "dtype_builtin.h"
#include "op_builtin.h"

#define PX_PMPI(name) __attribute__((visibility("default"))) int P##name
/* Every MPI_X is a weak alias of the strong PMPI_X (profiling interface). */
#define PX_WEAK(name) _Pragma(PX_STR(weak name = P##name))
#define PX_STR(x) PX_STR2(x)
#define PX_STR2(x) #x

/* ---------- handle tables ---------- */

typedef struct px_htab {
    void **obj;
    int *free_idx;
    int n, cap, nfree;
} px_htab_t;

int px_htab_add(px_htab_t *t, void *obj); /* index, or -1 */
void px_htab_del(px_htab_t *t, int idx);
static inline void *px_htab_get(const px_htab_t *t, int idx)
{
    return idx >= 0 && idx < t->n ? t->obj[idx] : NULL;
}

#define PX_HANDLE_IDX(h) ((int)((unsigned)(h)&0x03ffffffu))
#define PX_HANDLE_HI(h) ((unsigned)(h)&0xfc000000u)

/* ---------- groups ---------- */

typedef struct px_mpi_group {
    int refs;
    int handle;
    int size;
    int rank;    /* this process's rank in the group, MPI_UNDEFINED if absent */
    int world[]; /* world rank of each member */
} px_mpi_group_t;

px_mpi_group_t *px_mpi_group_new(int size);
px_mpi_group_t *px_mpi_group_get(MPI_Group g);
void px_mpi_group_release(px_mpi_group_t *g);
int px_mpi_group_handle(px_mpi_group_t *g); /* registers if needed */

/* ---------- communicators ---------- */

typedef struct px_mpi_attr px_mpi_attr_t;

typedef struct px_mpi_comm {
    int handle;
    int refs;
    uint32_t ctx; /* point-to-point context; ctx + 1 is for collectives */
    int rank, size;
    px_mpi_group_t *group;
    MPI_Errhandler errh;
    char name[MPI_MAX_OBJECT_NAME];
    px_mpi_attr_t *attrs;
    int coll_tag;      /* sequence for internal collective tags */
    int coll_tag_next; /* a persistent collective's start: the tag its init took, + 1 */
    struct px_cshm_lane *coll_lane_next; /* and its shared-memory lane, if it has one */
    /* node awareness (learnt from the launcher) */
    int local_rank, local_size;
    /* members of several jobs (dynamic processes): the jobs number their
     * nodes apart, so here each member counts as a node of its own; all
     * members see it alike, as each sees the other jobs' members as peers
     * beyond its own job */
    int mixed;
    /* Rabenseifner's allreduce: 0 not chosen yet, 1 largest distance first,
     * 2 smallest first (allreduce/allreduce_rabenseifner.c) */
    int rab_order;
    /* ranks 2i and 2i+1 on one node: 0 not known yet, 1 yes, -1 no
     * (coll/coll_select.c) */
    int pairs;
    /* ranks on exactly two nodes: 0 not known yet, 1 yes, -1 no */
    int two_nodes;
    /* virtual topology (Cart/Graph/Dist_graph), owned by src/mpi/topo */
    void *topo;
    void (*topo_free)(void *topo);
    /* inter-communicators: point-to-point ranks name members of `remote`;
     * local_comm is an intra-communicator over the local group (own context)
     * for agreements inside the group. inter_low orders the groups in
     * Intercomm_merge when both pass the same `high`. */
    int is_inter;
    int inter_low;
    px_mpi_group_t *remote;
    struct px_mpi_comm *local_comm;
    /* hints from MPI_Comm_set_info (src/mpi/info.c), NULL when none */
    struct px_mpi_info *info;
    /* PX_PROTO_MODE_CLASS and a lane class when the hints name one
     * (plexus_lane_class), or'ed into every send's mode; else 0 */
    int lane_mode;
    /* shared-memory collectives (src/mpi/coll/coll_shm.c), set at first use */
    struct px_coll_shm *cshm;
    /* switch clusters from the fabric description (src/mpi/coll/coll_topo.c), set at first use */
    struct px_coll_tclus *tclus;
    /* its alltoall schedule from the fabric (src/mpi/coll/alltoall/alltoall_topo.c), at first use */
    struct px_coll_ta2a *ta2a;
} px_mpi_comm_t;

extern px_mpi_comm_t *px_mpi_comm_world, *px_mpi_comm_self;
/* The process set mpi://WORLD as the sessions see it: an internal
 * intra-communicator over every process of the job with its own context
 * ids, which exists whenever the runtime is up (also without MPI_Init), on
 * which the members of a group agree on the context id of a communicator
 * made from the group (comm.c). */
extern px_mpi_comm_t *px_mpi_comm_sworld;

/* The node (from the launcher) of rank `rank` of intra-communicator c. */
int px_mpi_comm_node_of(const px_mpi_comm_t *c, int rank);

void *px_mpi_topo_dup(const void *topo); /* deep copy, NULL if out of memory (src/mpi/topo) */

extern px_htab_t px_mpi_comm_tab;
/* MPI_COMM_WORLD/SELF are 0x44000000|index, others 0x84000000|index. */
static inline px_mpi_comm_t *px_mpi_comm_get(MPI_Comm h)
{
    unsigned hi = PX_HANDLE_HI(h);
    if (hi != 0x44000000u && hi != 0x84000000u)
        return NULL;
    px_mpi_comm_t *c = px_htab_get(&px_mpi_comm_tab, PX_HANDLE_IDX(h));
    return c && c->handle == h ? c : NULL;
}
/* New communicator over `group` (this process must be a member). */
int px_mpi_comm_create_from_group(px_mpi_comm_t *parent, px_mpi_group_t *group, uint32_t ctx,
                                  px_mpi_comm_t **comm_p);
/* Agrees on a fresh context id over parent (collective). */
int px_mpi_comm_alloc_ctx(px_mpi_comm_t *parent, uint32_t *ctx_p);
void px_mpi_comm_release(px_mpi_comm_t *c);
void px_coll_shm_free(struct px_coll_shm *m);
void px_coll_tclus_free(struct px_coll_tclus *t);
/* Frees c's node hierarchy (its node and leader communicators), if built. */
void px_coll_hier_forget(px_mpi_comm_t *c);
void px_coll_ta2a_free(struct px_coll_ta2a *t);
/* World rank of point-to-point peer r: a member of the remote group on an
 * inter-communicator, of the group otherwise. */
static inline int px_mpi_comm_world_rank(const px_mpi_comm_t *c, int r)
{
    return (c->remote ? c->remote : c->group)->world[r];
}
/* Number of valid point-to-point peers (the remote size on inter-communicators). */
static inline int px_mpi_comm_peer_size(const px_mpi_comm_t *c)
{
    return c->remote ? c->remote->size : c->size;
}
/* Context ids. `max` replaces *val with the largest value any member of the
 * new communicator passes (a collective over them); px_mpi_comm_agree_ctx
 * then finds n consecutive ids free at every member, also when other
 * threads of a member agree on ids for other communicators meanwhile. */
typedef int (*px_mpi_ctx_max_fn)(void *arg, int *val);
int px_mpi_comm_agree_ctx(uint32_t n, px_mpi_ctx_max_fn max, void *arg, uint32_t *ctx_p);
/* Fresh context ids (n of them) agreed by the members of g only, over
 * px_mpi_comm_sworld, on a tag derived from stringtag (MPI_Comm_create_from_group,
 * MPI_Intercomm_create_from_groups); salt keeps the two calls apart. */
int px_mpi_group_agree_ctx(const px_mpi_group_t *g, uint32_t n, const char *stringtag, int salt,
                           uint32_t *ctx_p);
/* The checks both share: the handler for the new communicator (*eh_p; its
 * errors go there, MPI_ERRHANDLER_NULL is MPI_ERRORS_ARE_FATAL), the string
 * tag, info and output argument. MPI_SUCCESS, or the error reported. */
int px_mpi_from_group_check(MPI_Errhandler errhandler, const char *stringtag, MPI_Info info,
                            const void *out, MPI_Errhandler *eh_p, const char *fn);
/* ... and the end they share: nc gets the handler and a copy of info's
 * hints, the program its handle (nc is freed if that fails). */
int px_mpi_from_group_finish(px_mpi_comm_t *nc, MPI_Errhandler eh, MPI_Info info, MPI_Comm *out,
                             const char *fn);
/* Inter-communicators (src/mpi/intercomm.c). */
/* Tags between the leaders of an inter-communicator on its own ctx + 1
 * (above the collective schedules' range): agreements use this one and
 * the two after it. */
#define PX_INTER_AGREE_TAG 0x60000000
/* The same for an agreement in the background (MPI_Comm_idup), from the
 * collective tag it took: it may overlap others. */
#define PX_INTER_BG_TAG(t) (0x70000000 | ((t)&0x0fffffff))
int px_mpi_intercomm_dup(px_mpi_comm_t *c, px_mpi_comm_t **newc_p, const char *fn);
int px_mpi_intercomm_split(px_mpi_comm_t *c, int color, int key, MPI_Comm *newcomm, const char *fn);
/* Inter-communicator over the local group lg and remote group rg (one
 * reference of each taken over), contexts ctx .. ctx + 3 agreed by both
 * groups; low: this side first in a merge where both pass the same high. */
int px_mpi_intercomm_build(px_mpi_comm_t *parent, px_mpi_group_t *lg, px_mpi_group_t *rg,
                           uint32_t ctx, int low, px_mpi_comm_t **newc_p);
/* The job this process belongs to (set at MPI_Init). */
const px_boot_info_t *px_mpi_boot_info(void);

/* ---------- info objects (src/mpi/info.c) ---------- */

typedef struct px_mpi_info px_mpi_info_t;
px_mpi_info_t *px_mpi_info_copy(const px_mpi_info_t *src); /* NULL src: empty object */
void px_mpi_info_destroy(px_mpi_info_t *info);
/* Replaces c's hints by a copy of info's (none for MPI_INFO_NULL). */
int px_mpi_info_set_comm(px_mpi_comm_t *c, MPI_Info info);
/* Whether info names an info object. */
int px_mpi_info_valid(MPI_Info info);
/* The value of key in info, NULL when absent (or MPI_INFO_NULL). */
const char *px_mpi_info_value(MPI_Info info, const char *key);

/* ---------- datatypes ---------- */

typedef struct px_mpi_dt {
    MPI_Datatype handle;
    MPI_Aint size, extent, lb, true_lb, true_extent;
    int contig; /* count elements are one contiguous block */
    int committed;
    int builtin;
    const px_dtype_builtin_t *b; /* for builtins */
    char *rename;                /* builtins: the name MPI_Type_set_name gave, NULL: b's */
    MPI_Aint elements;           /* basic elements per item (MPI_Get_elements) */
    /* gather count items at src into dst (size*count bytes), and back */
    void (*pack)(const struct px_mpi_dt *d, MPI_Aint count, const void *src, void *dst);
    void (*unpack)(const struct px_mpi_dt *d, MPI_Aint count, const void *src, void *dst);
} px_mpi_dt_t;

/* Predefined types of the 0x4c00SSII form, by their low byte: the lookup
 * on every send and receive is one load and one compare. */
extern px_mpi_dt_t *px_mpi_dt_fast[256];
px_mpi_dt_t *px_mpi_dt_get_slow(MPI_Datatype dt);
static inline px_mpi_dt_t *px_mpi_dt_get(MPI_Datatype dt)
{
    if (((unsigned)dt & 0xffff0000u) == 0x4c000000u) {
        px_mpi_dt_t *d = px_mpi_dt_fast[(unsigned)dt & 0xffu];
        if (d && d->handle == dt)
            return d;
    }
    return px_mpi_dt_get_slow(dt);
}
void px_mpi_dt_init(void);
/* bigcount.c: count (> INT_MAX) elements of t as one item of a new
 * committed datatype, for the int functions (BigMPI's construction). */
int px_mpi_big_type(MPI_Count count, MPI_Datatype t, MPI_Datatype *out);
/* A large-count function's count n of t for an int function: count n of
 * type t when n fits, else 1 of a datatype made to hold the n (made, which
 * px_mpi_big_free frees after the call). */
typedef struct px_mpi_big {
    int count;
    MPI_Datatype type, made;
} px_mpi_big_t;
int px_mpi_big_of(MPI_Count n, MPI_Datatype t, px_mpi_big_t *b, const char *fn);
void px_mpi_big_free(px_mpi_big_t *b);

/* ---------- requests ---------- */

enum {
    PX_MPI_REQ_SEND = 1,
    PX_MPI_REQ_RECV,
    PX_MPI_REQ_DONE, /* completes at once (PROC_NULL, buffered) */
    PX_MPI_REQ_COLL, /* nonblocking collective schedule */
    PX_MPI_REQ_GREQ,
    PX_MPI_REQ_RMA,  /* request-based one-sided operation (rma/rma_ops.c) */
    PX_MPI_REQ_PART, /* partitioned send or receive (part.c) */
};

typedef struct px_mpi_req px_mpi_req_t;
typedef int (*px_mpi_req_poll_fn)(px_mpi_req_t *r); /* returns 1 when done */

struct px_mpi_req {
    px_proto_req_t p; /* first: proto completes it */
    int handle;
    uint8_t kind;
    uint8_t persistent;
    uint8_t active; /* persistent: started and not yet completed */
    uint8_t user_freed;
    px_mpi_comm_t *comm;
    /* arguments (persistent requests re-use them) */
    void *ubuf;
    MPI_Aint count; /* above INT_MAX for a schedule's transfer of bytes */
    MPI_Datatype dtype;
    int rank;
    int tag;
    int mode;
    int bsend;
    /* non-contiguous data staged here */
    void *packbuf;
    /* status of requests that complete without proto */
    int st_source, st_tag, st_error;
    MPI_Count st_count;
    int st_cancelled;
    /* nonblocking collectives and generalized requests */
    px_mpi_req_poll_fn poll;
    void *sched;
    uint8_t polled; /* on the list every progress call polls (px_mpi_req_poll_start) */
    /* what px_mpi_req_free must release besides (persistent collectives) */
    void (*release)(px_mpi_req_t *r);
    px_mpi_req_t *free_next;
};

/* The empty status (MPI-4.0 3.7.3) of a request started again. */
static inline void px_mpi_req_status_empty(px_mpi_req_t *r)
{
    r->st_source = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    r->st_count = 0;
    r->st_error = MPI_SUCCESS;
}

/* r (with its poll function set) advances in every progress call from now
 * on, whatever request the program waits for, until its poll says it is
 * done: a nonblocking collective must progress while the process waits in
 * any MPI call (two of them on different communicators, started in
 * different orders on different ranks, would otherwise wait for each
 * other). */
void px_mpi_req_poll_start(px_mpi_req_t *r);
/* A request on c that its poll function completes, with its state in
 * sched (a nonblocking collective): polled once now and, unless that
 * completed it, by every progress call from then on. NULL: no memory. */
px_mpi_req_t *px_mpi_req_polled(px_mpi_comm_t *c, px_mpi_req_poll_fn poll, void *sched);
/* A request done when every one of its parts is (the transfers of a
 * neighbourhood collective, the pieces of a large-count call): its sched
 * is a px_mpi_req_group_t, which px_mpi_req_group_poll frees with the
 * parts once they are done; the first error of a part is the request's. */
typedef struct px_mpi_req_group {
    int n;
    px_mpi_req_t **reqs; /* NULL once completed */
    int err;
} px_mpi_req_group_t;
int px_mpi_req_group_poll(px_mpi_req_t *r);
/* coll_persist.c: MPI_Start of a persistent collective. */
int px_mpi_pcoll_start(px_mpi_req_t *r);
/* io/io_coll.c: how this process's collective file accesses went, for
 * the tool interface (mpi.io performance variables). */
enum {
    PX_IO_STAT_TWO_PHASE,
    PX_IO_STAT_DIRECT,
    PX_IO_STAT_AGG_BYTES,
    PX_IO_STAT_FSYNC,
    PX_IO_STAT_N
};
extern uint64_t px_mpi_io_stats[PX_IO_STAT_N];

/* part.c: MPI_Start of a partitioned request. */
int px_mpi_part_start(px_mpi_req_t *r);
px_mpi_req_t *px_mpi_req_new(int kind);
px_mpi_req_t *px_mpi_req_new_internal(int kind);
void px_mpi_req_free(px_mpi_req_t *r);
px_mpi_req_t *px_mpi_req_get(MPI_Request h);
/* Whether r is complete (polls schedules); no progress. */
int px_mpi_req_is_done(px_mpi_req_t *r);
/* Fills status, releases resources; returns the request's error class. */
int px_mpi_req_complete(px_mpi_req_t *r, MPI_Status *status);
void px_mpi_req_wait(px_mpi_req_t *r);

/* Internal blocking point-to-point (collectives, communicator set-up). */
int px_mpi_isend_internal(px_mpi_req_t **req_p, const void *buf, int count, MPI_Datatype dt,
                          int dest, int tag, px_mpi_comm_t *c, uint32_t ctx, int mode);
int px_mpi_irecv_internal(px_mpi_req_t **req_p, void *buf, int count, MPI_Datatype dt, int src,
                          int tag, px_mpi_comm_t *c, uint32_t ctx);
/* The same for requests the library keeps to itself (collective schedules):
 * no MPI_Request handle is registered. The count may exceed INT_MAX (a
 * schedule moves a large-count call's data as bytes). */
int px_mpi_isend_nohandle(px_mpi_req_t **req_p, const void *buf, MPI_Aint count, MPI_Datatype dt,
                          int dest, int tag, px_mpi_comm_t *c, uint32_t ctx, int mode);
int px_mpi_irecv_nohandle(px_mpi_req_t **req_p, void *buf, MPI_Aint count, MPI_Datatype dt, int src,
                          int tag, px_mpi_comm_t *c, uint32_t ctx);

/* ---------- errors ---------- */

/* px_mpi_initialized and px_mpi_finalized are the world model's
 * (MPI_Initialized, MPI_Finalized); px_mpi_rt_up says the runtime under it
 * (bootstrap, channels, MPI_COMM_WORLD's internals) is up, for the world
 * model, for a session, or both (init.c). */
extern int px_mpi_initialized, px_mpi_finalized;
extern int px_mpi_rt_up, px_mpi_rt_gone;
/* One more user of the runtime (MPI_Init or MPI_Session_init): the first
 * brings it up. MPI_ERR_OTHER when it was torn down already. */
int px_mpi_rt_acquire(const char *fn);
/* One user less: the last one tears the runtime down (a barrier over every
 * process of the job first). */
void px_mpi_rt_release(void);
/* attr.c: a new communicator gets the attributes whose copy callback says
 * so (an error code when one fails); a freed one's are deleted, newest
 * first. */
int px_mpi_attr_copy_all(px_mpi_comm_t *old, px_mpi_comm_t *newc);
/* The next MPI_*_set_attr or MPI_*_get_attr of this thread comes from
 * Fortran (libmpifort; attr.c) */
void px_mpi_attr_fortran(void);
void px_mpi_attr_delete_all(px_mpi_comm_t *c);
/* ... and of datatypes: MPI_Type_dup copies them, MPI_Type_free deletes them. */
int px_mpi_type_attr_copy(MPI_Datatype old, MPI_Datatype nt);
void px_mpi_type_attr_delete_all(MPI_Datatype t);

/* ... and of windows (rma/win.c: the windows and their predefined
 * attributes: 1 when keyval is one, its value stored when val is given). */
void px_mpi_win_attr_delete_all(MPI_Win win);
int px_mpi_win_valid(MPI_Win win);
int px_mpi_win_predef_attr(MPI_Win win, int keyval, void *val, int *flag);
int px_mpi_win_raise(MPI_Win win, int errclass, const char *fn, const char *msg);

/* op.c: a user operation stays alive while something under way uses it,
 * even after MPI_Op_free (predefined ones: nothing to do). */
void px_mpi_op_retain(MPI_Op op);
void px_mpi_op_release(MPI_Op op);

/* errors.c: classes and codes a program added, and what MPI_LASTUSEDCODE
 * says; the class of a code (-1: not a code); its string. */
extern int px_mpi_lastusedcode;
int px_mpi_error_class_of(int code);
const char *px_mpi_error_text(int code);
int px_mpi_error(px_mpi_comm_t *comm, int errclass, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int px_mpi_status_to_class(px_status_t st);
/* The same for another kind of object (a window): its handler and handle. */
int px_mpi_error_obj(MPI_Errhandler eh, int handle, int errclass, const char *fn, const char *fmt,
                     ...) __attribute__((format(printf, 5, 6)));
int px_mpi_errh_valid(MPI_Errhandler eh);
/* A code of class errclass that carries "fn: msg" for MPI_Error_string. */
int px_mpi_error_code_new(int errclass, const char *fn, const char *msg);
/* Raises such a code through eh for the object whose handle is at obj
 * (a file: the handler gets an MPI_File *). */
int px_mpi_error_at(MPI_Errhandler eh, void *obj, int errclass, const char *fn, const char *msg);
/* ... and code as it is (MPI_File_call_errhandler). */
int px_mpi_error_call(MPI_Errhandler eh, void *obj, int code, const char *fn, const char *msg);
/* Also sets MPI_ERR_OTHER style codes for users (MPI_Add_error_class). */

/* A communicator constructor's output is MPI_COMM_NULL until it succeeds:
 * an error leaves no stale handle behind (as MPICH does). */
#define PX_OUT_COMM_NULL(out)                                                                      \
    do {                                                                                           \
        if (out)                                                                                   \
            *(out) = MPI_COMM_NULL;                                                                \
    } while (0)

/* The runtime is up: MPI_Init was called, or a session is open. */
#define PX_CHECK_INIT(fn)                                                                          \
    do {                                                                                           \
        if (__builtin_expect(!px_mpi_rt_up, 0))                                                    \
            return px_mpi_error(NULL, MPI_ERR_OTHER, fn,                                           \
                                px_mpi_rt_gone ? "called after MPI_Finalize"                       \
                                               : "called before MPI_Init or MPI_Session_init");    \
    } while (0)

#define PX_GET_COMM(var, handle, fn)                                                               \
    px_mpi_comm_t *var = px_mpi_comm_get(handle);                                                  \
    if (__builtin_expect(!var, 0))                                                                 \
    return px_mpi_error(NULL, MPI_ERR_COMM, fn, "invalid communicator")

/* ---------- dynamic processes (dynproc.c, spawn.c) ---------- */

/* Checks the arguments every accept, connect and spawn checks. */
int px_mpi_dyn_check(px_mpi_comm_t *c, MPI_Info info, int root, MPI_Comm *newcomm, const char *fn);
/* MPI_Comm_accept (acc) or MPI_Comm_connect on comm. */
int px_mpi_dyn_accept_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                              MPI_Comm *newcomm, int acc, const char *fn);
/* Collective over c: the root (which has the socket fd from the port, or
 * failed with st) meets the other group's root; *newcomm the result. */
int px_mpi_dyn_meet(px_mpi_comm_t *c, int root, int fd, px_status_t st, int low, int acc,
                    const char *port, MPI_Comm *newcomm, const char *fn);
/* PX_PORT_TIMEOUT in milliseconds; the progress a waiting root keeps up. */
int px_mpi_dyn_timeout_ms(void);
void px_mpi_dyn_idle(void *arg);
/* Processes of other jobs that no communicator or group names any more
 * are forgotten (px_proto_peer_remove): their numbers are free again. The
 * marks: named[p - base] for peers base .. base + room - 1. */
void px_mpi_dyn_gc(void);
void px_mpi_group_mark(const px_mpi_group_t *g, uint8_t *named, int base, int room);
void px_mpi_groups_mark(uint8_t *named, int base, int room);
void px_mpi_comms_mark(uint8_t *named, int base, int room);
/* MPI_Init of a spawned job: connects to the parent (PX_PARENT_PORT). */
void px_mpi_spawn_init(void);
/* MPI_Finalize: waits for the jobs this process spawned to end. */
void px_mpi_spawn_finalize(void);
/* The inter-communicator to the parent (NULL: none, or freed). */
extern px_mpi_comm_t *px_mpi_comm_parent;

/* ---------- collectives ---------- */

int px_mpi_coll_barrier(px_mpi_comm_t *c);
/* Agreements that run in the background (MPI_Comm_idup): a collective tag
 * taken, in order with the program's collectives, when the operation
 * starts, and an allreduce or bcast on it that px_mpi_coll_sched_test advances (1
 * when done, the schedule freed, *err its outcome). Rounds that follow
 * one another may share the tag: each member posts them in the same order
 * and messages between two members do not overtake each other. NULL: out
 * of memory or a bad operation. */
int px_mpi_coll_tag_take(px_mpi_comm_t *c);
void *px_mpi_coll_iallreduce_tag(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                                 MPI_Op op, px_mpi_comm_t *c, int tag);
void *px_mpi_coll_ibcast_tag(void *buf, int count, MPI_Datatype dt, int root, px_mpi_comm_t *c,
                             int tag);
int px_mpi_coll_sched_test(void *sched, int *err);
int px_mpi_coll_bcast(void *buf, int count, MPI_Datatype dt, int root, px_mpi_comm_t *c);
int px_mpi_coll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                       int root, px_mpi_comm_t *c);
int px_mpi_coll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                          px_mpi_comm_t *c);
int px_mpi_coll_allgather_bytes(const void *sbuf, void *rbuf, size_t bytes, px_mpi_comm_t *c);
/* The same as the program's own MPI_Allgather of bytes would go (through
 * the shared segment on one machine), errors returned rather than raised:
 * for a communicator that is complete, whose members all make the call
 * (a file's), not while one is being built. */
int px_mpi_coll_allgather_top(const void *sbuf, void *rbuf, size_t bytes, px_mpi_comm_t *c);
int px_mpi_coll_bcast_top(void *buf, size_t bytes, int root, px_mpi_comm_t *c);
/* Each member's `bytes` into rbuf at the root, in rank order. */
int px_mpi_coll_gather_bytes(const void *sbuf, void *rbuf, size_t bytes, int root,
                             px_mpi_comm_t *c);
/* Each member's `bytes` (its own count) into rbuf at the root, member i's
 * at rdispls[i] (rcounts[i] bytes; both read at the root only). */
int px_mpi_coll_gatherv_bytes(const void *sbuf, size_t bytes, void *rbuf, const MPI_Aint *rcounts,
                              const MPI_Aint *rdispls, int root, px_mpi_comm_t *c);

/* ---------- the topology profile (profile.c, PX_PROFILE=topo) ---------- */

/* At the end of MPI_Init: starts counting (or waits for the signal). */
void px_mpi_profile_start(void);
/* Collective over MPI_COMM_WORLD at MPI_Finalize, before its barrier: rank
 * 0 gathers the counts and writes the profile. */
void px_mpi_profile_finish(const px_boot_info_t *boot);

/* ---------- operations ---------- */

int px_mpi_op_check(MPI_Op op, MPI_Datatype dt, int *commutative_p);
void px_mpi_op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt);
/* Why px_mpi_op_check refused (op, dt), for the error message. */
const char *px_mpi_op_check_msg(MPI_Op op, MPI_Datatype dt);

/* ---------- files (io/) ---------- */

/* Closes the files a program left open (MPI_Finalize). */
void px_mpi_io_finalize(void);

/* ---------- buffered sends ---------- */

int px_mpi_bsend_start(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                       px_mpi_comm_t *c, px_mpi_req_t **req_p);

#endif
