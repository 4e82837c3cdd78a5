/* Persistent collectives (MPI-4.0, MPI_<Collective>_init): the request
 * keeps the call's arguments, and each MPI_Start runs the nonblocking
 * collective with them (the schedule is built again at every start, on the
 * collective tag the init took, so that starts match whatever their order
 * at each member). The request holds its datatypes and
 * operation until it is freed. The arguments are checked when the
 * collective starts: an error the init could have found is reported by
 * the first MPI_Start. A derived datatype is duplicated at the init (the
 * program may free its own handle at once); a user operation is held; the
 * arrays of counts, displacements and datatypes are copied (the program
 * may free them once the init returns, as mpi4py does). */
#include "coll_impl.h"

#include <stdlib.h>

typedef struct px_pcoll px_pcoll_t;
typedef int (*px_pcoll_start_fn)(px_pcoll_t *p, MPI_Request *inner);

/* One side (send or receive) of a collective's arguments. */
typedef struct px_pcoll_side {
    void *buf;
    MPI_Count count;
    const int *counts, *displs;
    MPI_Datatype type;
    const MPI_Datatype *types;
    /* the large-count inits' arrays instead (neighbourhood alltoallw: the
     * displacements of both kinds of init) */
    const MPI_Count *ccounts;
    const MPI_Aint *cdispls;
    /* a large-count init: every member's start takes the large-count
     * collective, also where its arrays are not significant (NULL) */
    int big;
} px_pcoll_side_t;

struct px_pcoll {
    px_pcoll_start_fn start;
    px_pcoll_side_t s, r;
    MPI_Op op;
    int root;
    MPI_Comm comm;
    int tag;           /* the collective tag its init took */
    MPI_Request inner; /* the collective of the current start */
    void *copy[2];     /* the copies of s's and r's arrays */
    px_cshm_lane_t lane;
};

static int px_pcoll_poll(px_mpi_req_t *r)
{
    px_pcoll_t *p = r->sched;
    if (p->inner == MPI_REQUEST_NULL)
        return 1;
    px_mpi_req_t *q = px_mpi_req_get(p->inner);
    if (!px_mpi_req_is_done(q))
        return 0;
    r->st_error = px_mpi_req_complete(q, MPI_STATUS_IGNORE);
    px_mpi_req_free(q);
    p->inner = MPI_REQUEST_NULL;
    return 1;
}

/* The request's own handle of a derived datatype (predefined ones stay). */
static int px_pcoll_type_own(MPI_Datatype *t)
{
    if (!*t || *t == MPI_DATATYPE_NULL)
        return MPI_SUCCESS;
    px_mpi_dt_t *d = px_mpi_dt_get(*t);
    if (!d)
        return MPI_ERR_TYPE;
    return d->builtin ? MPI_SUCCESS : PMPI_Type_dup(*t, t);
}

static void px_pcoll_type_drop(MPI_Datatype *t)
{
    px_mpi_dt_t *d = *t && *t != MPI_DATATYPE_NULL ? px_mpi_dt_get(*t) : NULL;
    if (d && !d->builtin)
        PMPI_Type_free(t);
}

static void px_pcoll_release(px_mpi_req_t *r)
{
    px_pcoll_t *p = r->sched;
    if (!p)
        return;
    if (p->inner != MPI_REQUEST_NULL) { /* freed while active: it ends first */
        px_mpi_req_t *q = px_mpi_req_get(p->inner);
        px_mpi_req_wait(q);
        px_mpi_req_complete(q, MPI_STATUS_IGNORE);
        px_mpi_req_free(q);
    }
    px_coll_shm_lane_drop(&p->lane);
    px_pcoll_type_drop(&p->s.type);
    px_pcoll_type_drop(&p->r.type);
    px_mpi_op_release(p->op);
    free(p->copy[0]);
    free(p->copy[1]);
    free(p);
    r->sched = NULL;
}

int px_mpi_pcoll_start(px_mpi_req_t *r)
{
    px_pcoll_t *p = r->sched;
    px_mpi_req_status_empty(r);
    /* every start runs on the tag the init took: the inits match in order,
     * the starts may come in any order (MPI-4.0 6.13); starts of one
     * request follow one another, so they may share it */
    r->comm->coll_tag_next = p->tag + 1;
    r->comm->coll_lane_next = p->lane.m ? &p->lane : NULL;
    int rc = p->start(p, &p->inner);
    r->comm->coll_tag_next = 0;
    r->comm->coll_lane_next = NULL;
    if (rc != MPI_SUCCESS) {
        p->inner = MPI_REQUEST_NULL;
        return rc;
    }
    if (!px_pcoll_poll(r))
        px_mpi_req_poll_start(r);
    return MPI_SUCCESS;
}

static int px_start_barrier(px_pcoll_t *p, MPI_Request *q);
static int px_start_bcast(px_pcoll_t *p, MPI_Request *q);
static int px_start_reduce(px_pcoll_t *p, MPI_Request *q);
static int px_start_allreduce(px_pcoll_t *p, MPI_Request *q);
static int px_start_allgather(px_pcoll_t *p, MPI_Request *q);
static int px_start_alltoall(px_pcoll_t *p, MPI_Request *q);
static int px_start_gather(px_pcoll_t *p, MPI_Request *q);
static int px_start_scatter(px_pcoll_t *p, MPI_Request *q);
static int px_start_allgatherv(px_pcoll_t *p, MPI_Request *q);
static int px_start_gatherv(px_pcoll_t *p, MPI_Request *q);
static int px_start_scatterv(px_pcoll_t *p, MPI_Request *q);
static int px_start_alltoallv(px_pcoll_t *p, MPI_Request *q);
static int px_start_reduce_scatter(px_pcoll_t *p, MPI_Request *q);
static int px_start_reduce_scatter_block(px_pcoll_t *p, MPI_Request *q);
static int px_start_nbr_allgatherv(px_pcoll_t *p, MPI_Request *q);
static int px_start_nbr_alltoallv(px_pcoll_t *p, MPI_Request *q);
static int px_start_nbr_alltoallw(px_pcoll_t *p, MPI_Request *q);

/* How many entries the arrays of a side hold: the neighbours the side
 * talks to (neighbourhood collectives), none where they are not
 * significant (the v-side of a rooted one away from its root), the local
 * group (reduce_scatter's counts), else the group it talks to. */
static int px_pcoll_len(px_pcoll_start_fn start, px_mpi_comm_t *c, int send, int root)
{
    if (start == px_start_nbr_allgatherv || start == px_start_nbr_alltoallv ||
        start == px_start_nbr_alltoallw) {
        int kind = MPI_UNDEFINED, in = 0, out = 0, w = 0, n = 0;
        PMPI_Topo_test(c->handle, &kind);
        if (kind == MPI_DIST_GRAPH)
            PMPI_Dist_graph_neighbors_count(c->handle, &in, &out, &w);
        else if (kind == MPI_GRAPH)
            PMPI_Graph_neighbors_count(c->handle, c->rank, &n), in = out = n;
        else if (kind == MPI_CART)
            PMPI_Cartdim_get(c->handle, &n), in = out = 2 * n;
        return send ? out : in;
    }
    if ((start == px_start_gatherv && !send) || (start == px_start_scatterv && send))
        if (c->is_inter ? root != MPI_ROOT : root != c->rank)
            return 0;
    if (start == px_start_reduce_scatter)
        return c->size;
    return c->is_inter ? c->remote->size : c->size;
}

/* Copies the arrays of side x (n entries each) into one allocation. */
static int px_pcoll_copy(px_pcoll_side_t *x, int n, void **mem)
{
    const void *src[5] = {x->counts, x->displs, x->types, x->ccounts, x->cdispls};
    const size_t sz[5] = {sizeof(int), sizeof(int), sizeof(MPI_Datatype), sizeof(MPI_Count),
                          sizeof(MPI_Aint)};
    size_t total = 0;
    for (int i = 0; i < 5; i++)
        total += src[i] ? sz[i] * (size_t)n : 0;
    if (!total)
        return MPI_SUCCESS;
    char *m = *mem = malloc(total);
    if (!m)
        return MPI_ERR_NO_MEM;
    void *dst[5];
    for (int i = 0; i < 5; i++) {
        dst[i] = src[i] ? memcpy(m, src[i], sz[i] * (size_t)n) : NULL;
        m += src[i] ? sz[i] * (size_t)n : 0;
    }
    x->counts = dst[0], x->displs = dst[1], x->types = dst[2], x->ccounts = dst[3];
    x->cdispls = dst[4];
    return MPI_SUCCESS;
}

/* The persistent request of a collective: start says which, s and r are
 * its send and receive sides. */
static int px_pcoll_make(const char *fn, px_pcoll_start_fn start, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request, px_pcoll_side_t s, px_pcoll_side_t r, MPI_Op op,
                         int root)
{
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    if (!request)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null request pointer");
    if (info != MPI_INFO_NULL && !px_mpi_info_valid(info))
        return px_mpi_error(c, MPI_ERR_INFO, fn, "invalid info object");
    px_pcoll_t *p = malloc(sizeof(*p));
    px_mpi_req_t *q = p ? px_mpi_req_new(PX_MPI_REQ_COLL) : NULL;
    if (!q) {
        free(p);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *p = (px_pcoll_t){.start = start,
                      .s = s,
                      .r = r,
                      .op = op,
                      .root = root,
                      .comm = comm,
                      .inner = MPI_REQUEST_NULL};
    if (px_pcoll_copy(&p->s, px_pcoll_len(start, c, 1, root), &p->copy[0]) ||
        px_pcoll_copy(&p->r, px_pcoll_len(start, c, 0, root), &p->copy[1])) {
        free(p->copy[0]);
        free(p);
        px_mpi_req_free(q);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int rc = px_pcoll_type_own(&p->s.type);
    if (rc == MPI_SUCCESS && (rc = px_pcoll_type_own(&p->r.type)) != MPI_SUCCESS)
        px_pcoll_type_drop(&p->s.type);
    if (rc != MPI_SUCCESS) {
        free(p->copy[0]);
        free(p->copy[1]);
        free(p);
        px_mpi_req_free(q);
        return px_mpi_error(c, rc, fn, "invalid datatype");
    }
    px_mpi_op_retain(op);
    p->tag = px_mpi_coll_tag_take(c);
    if (!c->is_inter &&
        (start == px_start_barrier || start == px_start_bcast || start == px_start_reduce ||
         start == px_start_allreduce || start == px_start_allgather || start == px_start_alltoall ||
         start == px_start_gather || start == px_start_scatter || start == px_start_allgatherv ||
         start == px_start_reduce_scatter || start == px_start_reduce_scatter_block ||
         start == px_start_gatherv || start == px_start_scatterv || start == px_start_alltoallv))
        px_coll_shm_lane_take(c, &p->lane);
    q->comm = c;
    c->refs++;
    q->persistent = 1;
    q->sched = p;
    q->poll = px_pcoll_poll;
    q->release = px_pcoll_release;
    q->dtype = MPI_DATATYPE_NULL;
    *request = q->handle;
    return MPI_SUCCESS;
}

/* Sides: a buffer with one count, with counts and displacements, or (w)
 * with a datatype per rank; the same with the arrays of a large-count
 * init (C), or a neighbourhood alltoallw's (int counts, MPI_Aint
 * displacements: NW). */
#define PX_ONE(buf, count, type)                                                                   \
    ((px_pcoll_side_t){(void *)(buf), (count), NULL, NULL, (type), NULL, NULL, NULL, 0})
#define PX_V(buf, counts, displs, type)                                                            \
    ((px_pcoll_side_t){(void *)(buf), 0, (counts), (displs), (type), NULL, NULL, NULL, 0})
#define PX_W(buf, counts, displs, types)                                                           \
    ((px_pcoll_side_t){(void *)(buf), 0, (counts), (displs), MPI_DATATYPE_NULL, (types), NULL,     \
                       NULL, 0})
#define PX_VC(buf, counts, displs, type)                                                           \
    ((px_pcoll_side_t){(void *)(buf), 0, NULL, NULL, (type), NULL, (counts), (displs), 1})
#define PX_WC(buf, counts, displs, types)                                                          \
    ((px_pcoll_side_t){(void *)(buf), 0, NULL, NULL, MPI_DATATYPE_NULL, (types), (counts),         \
                       (displs), 1})
#define PX_NW(buf, counts, displs, types)                                                          \
    ((px_pcoll_side_t){(void *)(buf), 0, (counts), NULL, MPI_DATATYPE_NULL, (types), NULL,         \
                       (displs), 0})
#define PX_NONE PX_ONE(NULL, 0, MPI_DATATYPE_NULL)
#define PX_PCOLL_EXPAND(...) __VA_ARGS__

/* ---------- each collective: how a start runs it, and its init calls ----------
 * A start runs the large-count nonblocking collective, which takes the
 * int one when the counts fit. */

static int px_start_barrier(px_pcoll_t *p, MPI_Request *q) { return PMPI_Ibarrier(p->comm, q); }
PX_PMPI(MPI_Barrier_init)(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PX_CS_ENTER();
    return px_pcoll_make("MPI_Barrier_init", px_start_barrier, comm, info, request, PX_NONE,
                         PX_NONE, MPI_OP_NULL, 0);
}
PX_WEAK(MPI_Barrier_init)

static int px_start_bcast(px_pcoll_t *p, MPI_Request *q)
{
    return PMPI_Ibcast_c(p->r.buf, p->r.count, p->r.type, p->root, p->comm, q);
}

/* An init and its large-count twin: count_t is int or MPI_Count. */
#define PX_PCOLL_BCAST(name, count_t)                                                              \
    PX_PMPI(name)                                                                                  \
    (void *buf, count_t count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Info info,            \
     MPI_Request *request)                                                                         \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_pcoll_make(#name, px_start_bcast, comm, info, request, PX_NONE,                  \
                             PX_ONE(buf, count, dt), MPI_OP_NULL, root);                           \
    }                                                                                              \
    PX_WEAK(name)
PX_PCOLL_BCAST(MPI_Bcast_init, int)
PX_PCOLL_BCAST(MPI_Bcast_init_c, MPI_Count)

/* Gather, scatter, allgather and alltoall (also the neighbourhood ones):
 * one count per side. */
static int px_start_gather(px_pcoll_t *p, MPI_Request *q)
{
    return PMPI_Igather_c(p->s.buf, p->s.count, p->s.type, p->r.buf, p->r.count, p->r.type, p->root,
                          p->comm, q);
}
static int px_start_scatter(px_pcoll_t *p, MPI_Request *q)
{
    return PMPI_Iscatter_c(p->s.buf, p->s.count, p->s.type, p->r.buf, p->r.count, p->r.type,
                           p->root, p->comm, q);
}
static int px_start_allgather(px_pcoll_t *p, MPI_Request *q)
{
    return PMPI_Iallgather_c(p->s.buf, p->s.count, p->s.type, p->r.buf, p->r.count, p->r.type,
                             p->comm, q);
}
static int px_start_alltoall(px_pcoll_t *p, MPI_Request *q)
{
    return PMPI_Ialltoall_c(p->s.buf, p->s.count, p->s.type, p->r.buf, p->r.count, p->r.type,
                            p->comm, q);
}
static int px_start_nbr_allgather(px_pcoll_t *p, MPI_Request *q)
{
    return PMPI_Ineighbor_allgather_c(p->s.buf, p->s.count, p->s.type, p->r.buf, p->r.count,
                                      p->r.type, p->comm, q);
}
static int px_start_nbr_alltoall(px_pcoll_t *p, MPI_Request *q)
{
    return PMPI_Ineighbor_alltoall_c(p->s.buf, p->s.count, p->s.type, p->r.buf, p->r.count,
                                     p->r.type, p->comm, q);
}

#define PX_PCOLL_ONE_COUNT_(name, count_t, startfn, root_param, root_v)                            \
    PX_PMPI(name)                                                                                  \
    (const void *sbuf, count_t scount, MPI_Datatype stype, void *rbuf, count_t rcount,             \
     MPI_Datatype rtype PX_PCOLL_EXPAND root_param, MPI_Comm comm, MPI_Info info,                  \
     MPI_Request *request)                                                                         \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_pcoll_make(#name, startfn, comm, info, request, PX_ONE(sbuf, scount, stype),     \
                             PX_ONE(rbuf, rcount, rtype), MPI_OP_NULL, root_v);                    \
    }                                                                                              \
    PX_WEAK(name)
#define PX_PCOLL_ONE_COUNT(Name, startfn, root_param, root_v)                                      \
    PX_PCOLL_ONE_COUNT_(MPI_##Name##_init, int, startfn, root_param, root_v)                       \
    PX_PCOLL_ONE_COUNT_(MPI_##Name##_init_c, MPI_Count, startfn, root_param, root_v)

PX_PCOLL_ONE_COUNT(Gather, px_start_gather, (, int root), root)
PX_PCOLL_ONE_COUNT(Scatter, px_start_scatter, (, int root), root)
PX_PCOLL_ONE_COUNT(Allgather, px_start_allgather, (), 0)
PX_PCOLL_ONE_COUNT(Alltoall, px_start_alltoall, (), 0)
PX_PCOLL_ONE_COUNT(Neighbor_allgather, px_start_nbr_allgather, (), 0)
PX_PCOLL_ONE_COUNT(Neighbor_alltoall, px_start_nbr_alltoall, (), 0)

/* With counts and displacements on one side or both: each start calls the
 * entry point of the arrays its init was given. */
static int px_start_gatherv(px_pcoll_t *p, MPI_Request *q)
{
    if (p->r.big)
        return PMPI_Igatherv_c(p->s.buf, p->s.count, p->s.type, p->r.buf, p->r.ccounts,
                               p->r.cdispls, p->r.type, p->root, p->comm, q);
    return PMPI_Igatherv(p->s.buf, (int)p->s.count, p->s.type, p->r.buf, p->r.counts, p->r.displs,
                         p->r.type, p->root, p->comm, q);
}
static int px_start_scatterv(px_pcoll_t *p, MPI_Request *q)
{
    if (p->s.big)
        return PMPI_Iscatterv_c(p->s.buf, p->s.ccounts, p->s.cdispls, p->s.type, p->r.buf,
                                p->r.count, p->r.type, p->root, p->comm, q);
    return PMPI_Iscatterv(p->s.buf, p->s.counts, p->s.displs, p->s.type, p->r.buf, (int)p->r.count,
                          p->r.type, p->root, p->comm, q);
}
static int px_start_allgatherv(px_pcoll_t *p, MPI_Request *q)
{
    if (p->r.big)
        return PMPI_Iallgatherv_c(p->s.buf, p->s.count, p->s.type, p->r.buf, p->r.ccounts,
                                  p->r.cdispls, p->r.type, p->comm, q);
    return PMPI_Iallgatherv(p->s.buf, (int)p->s.count, p->s.type, p->r.buf, p->r.counts,
                            p->r.displs, p->r.type, p->comm, q);
}
static int px_start_nbr_allgatherv(px_pcoll_t *p, MPI_Request *q)
{
    if (p->r.big)
        return PMPI_Ineighbor_allgatherv_c(p->s.buf, p->s.count, p->s.type, p->r.buf, p->r.ccounts,
                                           p->r.cdispls, p->r.type, p->comm, q);
    return PMPI_Ineighbor_allgatherv(p->s.buf, (int)p->s.count, p->s.type, p->r.buf, p->r.counts,
                                     p->r.displs, p->r.type, p->comm, q);
}
static int px_start_alltoallv(px_pcoll_t *p, MPI_Request *q)
{
    if (p->r.big)
        return PMPI_Ialltoallv_c(p->s.buf, p->s.ccounts, p->s.cdispls, p->s.type, p->r.buf,
                                 p->r.ccounts, p->r.cdispls, p->r.type, p->comm, q);
    return PMPI_Ialltoallv(p->s.buf, p->s.counts, p->s.displs, p->s.type, p->r.buf, p->r.counts,
                           p->r.displs, p->r.type, p->comm, q);
}
static int px_start_nbr_alltoallv(px_pcoll_t *p, MPI_Request *q)
{
    if (p->r.big)
        return PMPI_Ineighbor_alltoallv_c(p->s.buf, p->s.ccounts, p->s.cdispls, p->s.type, p->r.buf,
                                          p->r.ccounts, p->r.cdispls, p->r.type, p->comm, q);
    return PMPI_Ineighbor_alltoallv(p->s.buf, p->s.counts, p->s.displs, p->s.type, p->r.buf,
                                    p->r.counts, p->r.displs, p->r.type, p->comm, q);
}
static int px_start_alltoallw(px_pcoll_t *p, MPI_Request *q)
{
    if (p->r.big)
        return PMPI_Ialltoallw_c(p->s.buf, p->s.ccounts, p->s.cdispls, p->s.types, p->r.buf,
                                 p->r.ccounts, p->r.cdispls, p->r.types, p->comm, q);
    return PMPI_Ialltoallw(p->s.buf, p->s.counts, p->s.displs, p->s.types, p->r.buf, p->r.counts,
                           p->r.displs, p->r.types, p->comm, q);
}
static int px_start_nbr_alltoallw(px_pcoll_t *p, MPI_Request *q)
{
    if (p->r.big)
        return PMPI_Ineighbor_alltoallw_c(p->s.buf, p->s.ccounts, p->s.cdispls, p->s.types,
                                          p->r.buf, p->r.ccounts, p->r.cdispls, p->r.types, p->comm,
                                          q);
    return PMPI_Ineighbor_alltoallw(p->s.buf, p->s.counts, p->s.cdispls, p->s.types, p->r.buf,
                                    p->r.counts, p->r.cdispls, p->r.types, p->comm, q);
}

/* The inits of a v-collective whose one side has a single count (ONE
 * sbuf, scount, stype or rbuf, rcount, rtype): gatherv's send side comes
 * first, scatterv's last. */
#define PX_PCOLL_V1_(name, count_t, counts_t, displs_t, V, startfn, gather, root_param, root_v)    \
    PX_PMPI(name)                                                                                  \
    (PX_PCOLL_V1_PARAMS_##gather(count_t, counts_t, displs_t) PX_PCOLL_EXPAND root_param,          \
     MPI_Comm comm, MPI_Info info, MPI_Request * request)                                          \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_pcoll_make(#name, startfn, comm, info, request, PX_PCOLL_V1_SIDES_##gather(V),   \
                             MPI_OP_NULL, root_v);                                                 \
    }                                                                                              \
    PX_WEAK(name)
#define PX_PCOLL_V1_PARAMS_1(count_t, counts_t, displs_t)                                          \
    const void *sbuf, count_t scount, MPI_Datatype stype, void *rbuf, const counts_t rcounts[],    \
        const displs_t displs[], MPI_Datatype rtype
#define PX_PCOLL_V1_PARAMS_0(count_t, counts_t, displs_t)                                          \
    const void *sbuf, const counts_t scounts[], const displs_t displs[], MPI_Datatype stype,       \
        void *rbuf, count_t rcount, MPI_Datatype rtype
#define PX_PCOLL_V1_SIDES_1(V) PX_ONE(sbuf, scount, stype), V(rbuf, rcounts, displs, rtype)
#define PX_PCOLL_V1_SIDES_0(V) V(sbuf, scounts, displs, stype), PX_ONE(rbuf, rcount, rtype)
#define PX_PCOLL_V1(Name, startfn, gather, root_param, root_v)                                     \
    PX_PCOLL_V1_(MPI_##Name##_init, int, int, int, PX_V, startfn, gather, root_param, root_v)      \
    PX_PCOLL_V1_(MPI_##Name##_init_c, MPI_Count, MPI_Count, MPI_Aint, PX_VC, startfn, gather,      \
                 root_param, root_v)

PX_PCOLL_V1(Gatherv, px_start_gatherv, 1, (, int root), root)
PX_PCOLL_V1(Scatterv, px_start_scatterv, 0, (, int root), root)
PX_PCOLL_V1(Allgatherv, px_start_allgatherv, 1, (), 0)
PX_PCOLL_V1(Neighbor_allgatherv, px_start_nbr_allgatherv, 1, (), 0)

/* Arrays on both sides: alltoallv and alltoallw (types_t: MPI_Datatype for
 * v, const MPI_Datatype * for w). */
#define PX_PCOLL_V2_(name, counts_t, displs_t, types_t, V, startfn)                                \
    PX_PMPI(name)                                                                                  \
    (const void *sbuf, const counts_t scounts[], const displs_t sdispls[], types_t stype,          \
     void *rbuf, const counts_t rcounts[], const displs_t rdispls[], types_t rtype, MPI_Comm comm, \
     MPI_Info info, MPI_Request *request)                                                          \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_pcoll_make(#name, startfn, comm, info, request,                                  \
                             V(sbuf, scounts, sdispls, stype), V(rbuf, rcounts, rdispls, rtype),   \
                             MPI_OP_NULL, 0);                                                      \
    }                                                                                              \
    PX_WEAK(name)
#define PX_PCOLL_TYPES const MPI_Datatype *
PX_PCOLL_V2_(MPI_Alltoallv_init, int, int, MPI_Datatype, PX_V, px_start_alltoallv)
PX_PCOLL_V2_(MPI_Alltoallv_init_c, MPI_Count, MPI_Aint, MPI_Datatype, PX_VC, px_start_alltoallv)
PX_PCOLL_V2_(MPI_Neighbor_alltoallv_init, int, int, MPI_Datatype, PX_V, px_start_nbr_alltoallv)
PX_PCOLL_V2_(MPI_Neighbor_alltoallv_init_c, MPI_Count, MPI_Aint, MPI_Datatype, PX_VC,
             px_start_nbr_alltoallv)
PX_PCOLL_V2_(MPI_Alltoallw_init, int, int, PX_PCOLL_TYPES, PX_W, px_start_alltoallw)
PX_PCOLL_V2_(MPI_Alltoallw_init_c, MPI_Count, MPI_Aint, PX_PCOLL_TYPES, PX_WC, px_start_alltoallw)
PX_PCOLL_V2_(MPI_Neighbor_alltoallw_init, int, MPI_Aint, PX_PCOLL_TYPES, PX_NW,
             px_start_nbr_alltoallw)
PX_PCOLL_V2_(MPI_Neighbor_alltoallw_init_c, MPI_Count, MPI_Aint, PX_PCOLL_TYPES, PX_WC,
             px_start_nbr_alltoallw)

/* ---------- reductions ---------- */

static int px_start_reduce(px_pcoll_t *p, MPI_Request *q)
{
    return PMPI_Ireduce_c(p->s.buf, p->r.buf, p->r.count, p->r.type, p->op, p->root, p->comm, q);
}
static int px_start_allreduce(px_pcoll_t *p, MPI_Request *q)
{
    return PMPI_Iallreduce_c(p->s.buf, p->r.buf, p->r.count, p->r.type, p->op, p->comm, q);
}
static int px_start_scan(px_pcoll_t *p, MPI_Request *q)
{
    return PMPI_Iscan_c(p->s.buf, p->r.buf, p->r.count, p->r.type, p->op, p->comm, q);
}
static int px_start_exscan(px_pcoll_t *p, MPI_Request *q)
{
    return PMPI_Iexscan_c(p->s.buf, p->r.buf, p->r.count, p->r.type, p->op, p->comm, q);
}
static int px_start_reduce_scatter_block(px_pcoll_t *p, MPI_Request *q)
{
    return PMPI_Ireduce_scatter_block_c(p->s.buf, p->r.buf, p->r.count, p->r.type, p->op, p->comm,
                                        q);
}
static int px_start_reduce_scatter(px_pcoll_t *p, MPI_Request *q)
{
    if (p->r.big)
        return PMPI_Ireduce_scatter_c(p->s.buf, p->r.buf, p->r.ccounts, p->r.type, p->op, p->comm,
                                      q);
    return PMPI_Ireduce_scatter(p->s.buf, p->r.buf, p->r.counts, p->r.type, p->op, p->comm, q);
}

/* The send side of a reduction is its buffer only; the receive side has
 * the count (per rank for reduce_scatter) and the datatype of both. */
#define PX_PCOLL_REDUCTION_(name, count_t, startfn, root_param, root_v)                            \
    PX_PMPI(name)                                                                                  \
    (const void *sbuf, void *rbuf, count_t count, MPI_Datatype dt,                                 \
     MPI_Op op PX_PCOLL_EXPAND root_param, MPI_Comm comm, MPI_Info info, MPI_Request *request)     \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_pcoll_make(#name, startfn, comm, info, request,                                  \
                             PX_ONE(sbuf, 0, MPI_DATATYPE_NULL), PX_ONE(rbuf, count, dt), op,      \
                             root_v);                                                              \
    }                                                                                              \
    PX_WEAK(name)
#define PX_PCOLL_REDUCTION(Name, startfn, root_param, root_v)                                      \
    PX_PCOLL_REDUCTION_(MPI_##Name##_init, int, startfn, root_param, root_v)                       \
    PX_PCOLL_REDUCTION_(MPI_##Name##_init_c, MPI_Count, startfn, root_param, root_v)

PX_PCOLL_REDUCTION(Reduce, px_start_reduce, (, int root), root)
PX_PCOLL_REDUCTION(Allreduce, px_start_allreduce, (), 0)
PX_PCOLL_REDUCTION(Scan, px_start_scan, (), 0)
PX_PCOLL_REDUCTION(Exscan, px_start_exscan, (), 0)
PX_PCOLL_REDUCTION(Reduce_scatter_block, px_start_reduce_scatter_block, (), 0)

PX_PMPI(MPI_Reduce_scatter_init)
(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
 MPI_Info info, MPI_Request *request)
{
    PX_CS_ENTER();
    return px_pcoll_make("MPI_Reduce_scatter_init", px_start_reduce_scatter, comm, info, request,
                         PX_ONE(sbuf, 0, MPI_DATATYPE_NULL), PX_V(rbuf, rcounts, NULL, dt), op, 0);
}
PX_WEAK(MPI_Reduce_scatter_init)

PX_PMPI(MPI_Reduce_scatter_init_c)
(const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
 MPI_Info info, MPI_Request *request)
{
    PX_CS_ENTER();
    return px_pcoll_make("MPI_Reduce_scatter_init_c", px_start_reduce_scatter, comm, info, request,
                         PX_ONE(sbuf, 0, MPI_DATATYPE_NULL), PX_VC(rbuf, rcounts, NULL, dt), op, 0);
}
PX_WEAK(MPI_Reduce_scatter_init_c)
