/* MPI collective entry points, blocking and nonblocking: argument checks
 * (reported through the communicator's error handler), MPI_IN_PLACE
 * resolution, then one schedule built by the selected algorithm, run to
 * completion or wrapped in a request. */
#include "coll_impl.h"
#include "inter/coll_inter.h"

#include <stdlib.h>

#define PX_TRY(expr)                                                                               \
    do {                                                                                           \
        int px_rc_ = (expr);                                                                       \
        if (px_rc_ != MPI_SUCCESS)                                                                 \
            return px_rc_;                                                                         \
    } while (0)

static int px_chk_type(px_mpi_comm_t *c, MPI_Datatype dt, const char *fn)
{
    px_mpi_dt_t *d = dt == MPI_DATATYPE_NULL ? NULL : px_mpi_dt_get(dt);
    if (!d)
        return px_mpi_error(c, MPI_ERR_TYPE, fn, "invalid datatype");
    if (!d->committed)
        return px_mpi_error(c, MPI_ERR_TYPE, fn, "datatype not committed");
    return MPI_SUCCESS;
}

static int px_chk_buf(px_mpi_comm_t *c, int count, MPI_Datatype dt, const char *fn)
{
    if (count < 0)
        return px_mpi_error(c, MPI_ERR_COUNT, fn, "negative count %d", count);
    return px_chk_type(c, dt, fn);
}

/* ---------- the arrays of the v and w variants ----------
 * The algorithms take counts and displacements as MPI_Aint (which
 * MPI_Count is too), so the int arrays of an MPI-3 entry point are
 * widened, and only once this rank is known to read them (a gatherv's away
 * from its root may point anywhere); a large-count entry point's are taken
 * as they are. Both kinds of entry point run the same algorithms, so they
 * match each other whichever each rank calls (as MPICH's do). Arrays of up
 * to PX_CV_SMALL entries are widened on the stack. */
#define PX_CV_SMALL 16
typedef struct px_cv {
    const int *ic, *id;    /* an MPI-3 entry point's counts and displacements */
    const MPI_Aint *c, *d; /* what the algorithms read */
    MPI_Aint *heap;
    MPI_Aint small[2 * PX_CV_SMALL];
} px_cv_t;

static void px_cv_free(px_cv_t *v) { free(v->heap); }

/* An entry point's arrays: ints (I) or large-count ones (C). */
#define PX_CV_I(name, cnts, dsp)                                                                   \
    px_cv_t name __attribute__((cleanup(px_cv_free))) = {.ic = (cnts), .id = (dsp)}
#define PX_CV_C(name, cnts, dsp)                                                                   \
    px_cv_t name __attribute__((cleanup(px_cv_free))) = {.c = (cnts), .d = (dsp)}

/* v's n entries as MPI_Aint in v->c and v->d (a NULL array stays NULL). */
static int px_cv_wide(px_cv_t *v, int n, px_mpi_comm_t *c, const char *fn)
{
    if (!v || (!v->ic && !v->id))
        return MPI_SUCCESS;
    MPI_Aint *w = v->small;
    if (n > PX_CV_SMALL && !(w = v->heap = malloc(sizeof(*w) * 2 * (size_t)n)))
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; v->ic && i < n; i++)
        w[i] = v->ic[i];
    for (int i = 0; v->id && i < n; i++)
        w[n + i] = v->id[i];
    v->c = v->ic ? w : NULL;
    v->d = v->id ? w + n : NULL;
    v->ic = v->id = NULL;
    return MPI_SUCCESS;
}

static int px_chk_counts(px_mpi_comm_t *c, const MPI_Aint *counts, const MPI_Aint *displs,
                         MPI_Datatype dt, const char *fn)
{
    if (!counts || !displs)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null counts or displacements");
    for (int i = 0; i < c->size; i++)
        if (counts[i] < 0)
            return px_mpi_error(c, MPI_ERR_COUNT, fn, "negative count %ld for rank %d",
                                (long)counts[i], i);
    return px_chk_type(c, dt, fn);
}

/* A reduce-scatter's receive counts: one for every rank (the block
 * variant) or an array of them. */
static int px_chk_rs_counts(px_mpi_comm_t *c, int block, const MPI_Aint *rcounts, int rcount,
                            MPI_Datatype dt, const char *fn)
{
    if (block)
        return px_chk_buf(c, rcount, dt, fn);
    if (!rcounts)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null receive counts");
    for (int i = 0; i < c->size; i++)
        if (rcounts[i] < 0)
            return px_mpi_error(c, MPI_ERR_COUNT, fn, "negative count %ld", (long)rcounts[i]);
    return px_chk_type(c, dt, fn);
}

/* The checked counts as an array, which the algorithms take (the block
 * variant's count repeated in *cnts_p, for the caller to free), and their
 * total. */
static int px_rs_counts(px_mpi_comm_t *c, int block, int rcount, const MPI_Aint **rcounts_p,
                        MPI_Aint **cnts_p, size_t *total_p, const char *fn)
{
    *cnts_p = NULL;
    if (block) {
        MPI_Aint *cnts = malloc(sizeof(*cnts) * (size_t)c->size);
        if (!cnts)
            return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
        for (int i = 0; i < c->size; i++)
            cnts[i] = rcount;
        *rcounts_p = *cnts_p = cnts;
    }
    size_t total = 0;
    for (int i = 0; i < c->size; i++)
        total += (size_t)(*rcounts_p)[i];
    *total_p = total;
    return MPI_SUCCESS;
}

static int px_chk_root(px_mpi_comm_t *c, int root, const char *fn)
{
    if (root < 0 || root >= c->size)
        return px_mpi_error(c, MPI_ERR_ROOT, fn, "invalid root %d (size %d)", root, c->size);
    return MPI_SUCCESS;
}

static int px_chk_op(px_mpi_comm_t *c, MPI_Op op, MPI_Datatype dt, int *commute_p, const char *fn)
{
    if (px_mpi_op_check(op, dt, commute_p) != MPI_SUCCESS)
        return px_mpi_error(c, MPI_ERR_OP, fn, "%s", px_mpi_op_check_msg(op, dt));
    return MPI_SUCCESS;
}

static int px_chk_req(px_mpi_comm_t *c, MPI_Request *req, int nonblocking, const char *fn)
{
    if (nonblocking && !req)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null request pointer");
    return MPI_SUCCESS;
}

/* The standard requires equal type signatures on both sides of a transfer;
 * a mismatch within one call is caught before anything is sent. */
static int px_chk_sig(px_mpi_comm_t *c, MPI_Aint scount, MPI_Datatype st, MPI_Aint rcount,
                      MPI_Datatype rt, const char *fn)
{
    size_t sb = (size_t)scount * (size_t)px_mpi_dt_get(st)->size;
    size_t rb = (size_t)rcount * (size_t)px_mpi_dt_get(rt)->size;
    if (sb > rb)
        return px_mpi_error(c, MPI_ERR_TRUNCATE, fn, "%zu bytes sent, %zu expected", sb, rb);
    if (sb < rb)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "%zu bytes sent, %zu expected", sb, rb);
    return MPI_SUCCESS;
}

/* Send and receive buffers at one address where MPI_IN_PLACE is meant. */
static int px_chk_alias(px_mpi_comm_t *c, const void *sbuf, const void *rbuf, size_t bytes,
                        const char *fn)
{
    if (bytes && sbuf == rbuf)
        return px_mpi_error(c, MPI_ERR_BUFFER, fn,
                            "send and receive buffers alias (use MPI_IN_PLACE)");
    return MPI_SUCCESS;
}

/* The same where the send and the receive have datatypes of their own:
 * MPI_BOTTOM on both sides is not one, the datatypes hold the addresses. */
static int px_chk_alias2(px_mpi_comm_t *c, const void *sbuf, const void *rbuf, size_t bytes,
                         const char *fn)
{
    return sbuf == MPI_BOTTOM ? MPI_SUCCESS : px_chk_alias(c, sbuf, rbuf, bytes, fn);
}

static size_t px_bytes(MPI_Aint count, MPI_Datatype dt)
{
    return (size_t)count * (size_t)px_mpi_dt_get(dt)->size;
}

/* Runs or starts a built schedule. */
static int px_coll_go(px_coll_sched_t *s, int rc, px_mpi_comm_t *c, MPI_Request *req,
                      const char *fn)
{
    if (rc == MPI_SUCCESS)
        rc = s->err;
    if (rc != MPI_SUCCESS) {
        px_coll_sched_free(s);
        return px_mpi_error(c, rc, fn, "cannot set up the collective");
    }
    if (!req) {
        rc = px_coll_sched_run(s);
        return rc == MPI_SUCCESS ? rc : px_mpi_error(c, rc, fn, "communication failed");
    }
    px_mpi_req_t *r;
    rc = px_coll_sched_start_req(s, c, &r);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, fn, "cannot start the collective");
    *req = r->handle;
    return MPI_SUCCESS;
}

static px_coll_sched_t *px_coll_begin(px_mpi_comm_t *c, MPI_Request *req)
{
    /* the node hierarchy is built only where every rank surely takes part */
    if (!req)
        px_coll_hier_ensure(c);
    return px_coll_sched_new(c);
}

/* A blocking call by the application, where the shared-memory algorithms
 * are candidates too: runs it if the selection picks one (1, *rc set), else
 * returns the algorithm chosen for a schedule (0). */
static int px_coll_shm_try(px_coll_id_t id, const px_coll_args_t *a, px_mpi_comm_t *c,
                           const char *fn, int *rc, const px_coll_algo_t **al_p)
{
    px_coll_hier_ensure(c);
    const px_coll_algo_t *al = px_coll_select_top(id, a, c);
    if (!al || !(al->flags & PX_COLL_F_SHM)) {
        *al_p = al;
        return 0;
    }
    *rc = px_coll_shm_run(id, (al->flags & PX_COLL_F_CMA) != 0, a, c);
    if (*rc != MPI_SUCCESS)
        *rc = px_mpi_error(c, *rc, fn, "communication failed");
    return 1;
}

int px_coll_run_top(px_coll_id_t id, const px_coll_args_t *a, px_mpi_comm_t *c)
{
    px_coll_hier_ensure(c);
    const px_coll_algo_t *al = px_coll_select_top(id, a, c);
    if (al && (al->flags & PX_COLL_F_SHM))
        return px_coll_shm_run(id, (al->flags & PX_COLL_F_CMA) != 0, a, c);
    px_coll_sched_t *s = px_coll_sched_new(c);
    if (!s)
        return MPI_ERR_NO_MEM;
    return px_coll_sched_run_built(s, px_coll_build_with(s, id, al, a, c));
}

/* The start of a persistent collective that has a lane in the
 * communicator's shared-memory segment: runs it there if it fits (1, *rc
 * set), else returns 0 (a schedule on the tag its init took). */
static int px_coll_lane_try(px_coll_id_t id, const px_coll_args_t *a, px_mpi_comm_t *c,
                            MPI_Request *req, const char *fn, int *rc)
{
    px_cshm_lane_t *l = c->coll_lane_next;
    c->coll_lane_next = NULL;
    if (!l || !px_coll_shm_lane_fits(id, a, c))
        return 0;
    px_mpi_req_t *r;
    *rc = px_coll_shm_lane_start(l, id, a, c, &r);
    if (*rc != MPI_SUCCESS)
        *rc = px_mpi_error(c, *rc, fn, "cannot start the collective");
    else
        *req = r->handle;
    return 1;
}

/* A collective that moves no data completes at once, as in MPICH: every
 * rank can tell from its own arguments, the type signatures of its blocks
 * having to match the others' (a.bytes: a block, or the largest block of
 * an allgatherv, or the whole vector of the reductions). Not the v and w
 * variants of the rooted and all-to-all collectives, where one rank's
 * empty blocks say nothing of the others'; a barrier only on a
 * communicator of one process. Returns 1 when done (*rc set). */
static int px_coll_empty(px_coll_id_t id, const px_coll_args_t *a, px_mpi_comm_t *c,
                         MPI_Request *req, const char *fn, int *rc)
{
    if (id == PX_COLL_BARRIER ? c->size > 1
                              : a->bytes || id == PX_COLL_GATHERV || id == PX_COLL_SCATTERV ||
                                    id == PX_COLL_ALLTOALLV || id == PX_COLL_ALLTOALLW)
        return 0;
    *rc = MPI_SUCCESS;
    if (req) {
        px_mpi_req_t *r = px_mpi_req_new(PX_MPI_REQ_DONE);
        if (!r) {
            *rc = px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
            return 1;
        }
        r->st_source = MPI_ANY_SOURCE;
        r->st_tag = MPI_ANY_TAG;
        *req = r->handle;
    }
    return 1;
}

static int px_coll_launch(px_coll_id_t id, const px_coll_args_t *a, px_mpi_comm_t *c,
                          MPI_Request *req, const char *fn)
{
    int rc0;
    if (px_coll_empty(id, a, c, req, fn, &rc0))
        return rc0;
    if (!req) {
        const px_coll_algo_t *al;
        int rc;
        if (px_coll_shm_try(id, a, c, fn, &rc, &al))
            return rc;
        px_coll_sched_t *s = px_coll_sched_new(c);
        if (!s)
            return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
        return px_coll_go(s, px_coll_build_with(s, id, al, a, c), c, NULL, fn);
    }
    int rc;
    if (px_coll_lane_try(id, a, c, req, fn, &rc))
        return rc;
    px_coll_sched_t *s = px_coll_begin(c, req);
    if (!s || px_coll_sched_keep(s, a, c->size) != MPI_SUCCESS) {
        px_coll_sched_free(s);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    return px_coll_go(s, px_coll_build_into(s, id, a, c), c, req, fn);
}

/* ---------- inter-communicators (MPI-3.1 §5.2.2) ----------
 * Arrays indexed by peer have the remote group's size; a rooted collective
 * takes MPI_ROOT at the root, MPI_PROC_NULL at the other members of the
 * root's group and the root's rank in the other group; MPI_IN_PLACE is
 * defined for intra-communicators only. */

static int px_inter_chk_root(px_mpi_comm_t *c, int root, const char *fn)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (root < 0 || root >= c->remote->size)
        return px_mpi_error(c, MPI_ERR_ROOT, fn, "invalid root %d (remote size %d)", root,
                            c->remote->size);
    return MPI_SUCCESS;
}

static int px_inter_chk_counts(px_mpi_comm_t *c, int n, const MPI_Aint *counts,
                               const MPI_Aint *displs, MPI_Datatype dt, const char *fn)
{
    if (!counts || (!displs && n > 0))
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null counts or displacements");
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            return px_mpi_error(c, MPI_ERR_COUNT, fn, "negative count %ld for rank %d",
                                (long)counts[i], i);
    return px_chk_type(c, dt, fn);
}

static int px_inter_chk_inplace(px_mpi_comm_t *c, const void *buf, const char *fn)
{
    if (buf == MPI_IN_PLACE)
        return px_mpi_error(c, MPI_ERR_BUFFER, fn,
                            "MPI_IN_PLACE is not valid on an inter-communicator");
    return MPI_SUCCESS;
}

static int px_inter_launch(px_coll_build_fn build, const px_coll_args_t *a, px_mpi_comm_t *c,
                           MPI_Request *req, const char *fn)
{
    px_coll_sched_t *s = px_coll_inter_sched_new(c);
    if (!s || (req && px_coll_sched_keep(s, a, c->remote->size) != MPI_SUCCESS)) {
        px_coll_sched_free(s);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    return px_coll_go(s, build(s, a, c), c, req, fn);
}

static int px_inter_bcast(px_mpi_comm_t *c, void *buf, int count, MPI_Datatype dt, int root,
                          MPI_Request *req, const char *fn)
{
    PX_TRY(px_inter_chk_root(c, root, fn));
    if (root != MPI_PROC_NULL) {
        PX_TRY(px_chk_buf(c, count, dt, fn));
        PX_TRY(px_inter_chk_inplace(c, buf, fn));
    }
    px_coll_args_t a = {.rbuf = buf, .count = count, .dt = dt, .root = root};
    return px_inter_launch(px_coll_inter_bcast, &a, c, req, fn);
}

static int px_inter_reduce(px_coll_id_t id, px_mpi_comm_t *c, const void *sbuf, void *rbuf,
                           int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Request *req,
                           const char *fn)
{
    if (id == PX_COLL_SCAN || id == PX_COLL_EXSCAN)
        return px_mpi_error(c, MPI_ERR_COMM, fn, "not defined on inter-communicators");
    if (id == PX_COLL_REDUCE) {
        PX_TRY(px_inter_chk_root(c, root, fn));
        if (root == MPI_PROC_NULL)
            return px_inter_launch(px_coll_inter_reduce, &(px_coll_args_t){.root = root}, c, req,
                                   fn);
    }
    PX_TRY(px_chk_buf(c, count, dt, fn));
    px_coll_args_t a = {
        .sbuf = sbuf, .rbuf = rbuf, .count = count, .dt = dt, .op = op, .root = root};
    PX_TRY(px_chk_op(c, op, dt, &a.commute, fn));
    int sends = id != PX_COLL_REDUCE || root != MPI_ROOT;
    int recvs = id != PX_COLL_REDUCE || root == MPI_ROOT;
    if (sends)
        PX_TRY(px_inter_chk_inplace(c, sbuf, fn));
    if (recvs)
        PX_TRY(px_inter_chk_inplace(c, rbuf, fn));
    if (sends && recvs)
        PX_TRY(px_chk_alias(c, sbuf, rbuf, px_bytes(count, dt), fn));
    a.bytes = px_bytes(count, dt);
    return px_inter_launch(id == PX_COLL_REDUCE ? px_coll_inter_reduce : px_coll_inter_allreduce,
                           &a, c, req, fn);
}

static int px_inter_rooted(px_mpi_comm_t *c, int gather, int v, const void *sbuf, int scount,
                           MPI_Datatype st, const MPI_Aint *scounts, const MPI_Aint *sdispls,
                           void *rbuf, int rcount, MPI_Datatype rt, const MPI_Aint *rcounts,
                           const MPI_Aint *rdispls, int root, MPI_Request *req, const char *fn)
{
    PX_TRY(px_inter_chk_root(c, root, fn));
    px_coll_args_t a = {.sbuf = sbuf,
                        .scount = scount,
                        .stype = st,
                        .scounts = scounts,
                        .sdispls = sdispls,
                        .rbuf = rbuf,
                        .rcount = rcount,
                        .rtype = rt,
                        .rcounts = rcounts,
                        .rdispls = rdispls,
                        .root = root};
    int rs = c->remote->size;
    if (root == MPI_ROOT && gather) {
        PX_TRY(v ? px_inter_chk_counts(c, rs, rcounts, rdispls, rt, fn)
                 : px_chk_buf(c, rcount, rt, fn));
        PX_TRY(px_inter_chk_inplace(c, rbuf, fn));
    } else if (root == MPI_ROOT) {
        PX_TRY(v ? px_inter_chk_counts(c, rs, scounts, sdispls, st, fn)
                 : px_chk_buf(c, scount, st, fn));
        PX_TRY(px_inter_chk_inplace(c, sbuf, fn));
    } else if (root != MPI_PROC_NULL && gather) {
        PX_TRY(px_chk_buf(c, scount, st, fn));
        PX_TRY(px_inter_chk_inplace(c, sbuf, fn));
    } else if (root != MPI_PROC_NULL) {
        PX_TRY(px_chk_buf(c, rcount, rt, fn));
        PX_TRY(px_inter_chk_inplace(c, rbuf, fn));
    }
    px_coll_build_fn b = gather ? (v ? px_coll_inter_gatherv : px_coll_inter_gather)
                                : (v ? px_coll_inter_scatterv : px_coll_inter_scatter);
    return px_inter_launch(b, &a, c, req, fn);
}

static int px_inter_allgather(px_mpi_comm_t *c, int v, const void *sbuf, int scount,
                              MPI_Datatype st, void *rbuf, int rcount, const MPI_Aint *rcounts,
                              const MPI_Aint *displs, MPI_Datatype rt, MPI_Request *req,
                              const char *fn)
{
    PX_TRY(px_inter_chk_inplace(c, sbuf, fn));
    PX_TRY(px_inter_chk_inplace(c, rbuf, fn));
    PX_TRY(px_chk_buf(c, scount, st, fn));
    PX_TRY(v ? px_inter_chk_counts(c, c->remote->size, rcounts, displs, rt, fn)
             : px_chk_buf(c, rcount, rt, fn));
    px_coll_args_t a = {.sbuf = sbuf,
                        .scount = scount,
                        .stype = st,
                        .rbuf = rbuf,
                        .rcount = rcount,
                        .rtype = rt,
                        .rcounts = rcounts,
                        .rdispls = displs};
    return px_inter_launch(v ? px_coll_inter_allgatherv : px_coll_inter_allgather, &a, c, req, fn);
}

static int px_inter_alltoall(px_mpi_comm_t *c, const void *sbuf, int scount, MPI_Datatype st,
                             void *rbuf, int rcount, MPI_Datatype rt, MPI_Request *req,
                             const char *fn)
{
    PX_TRY(px_inter_chk_inplace(c, sbuf, fn));
    PX_TRY(px_inter_chk_inplace(c, rbuf, fn));
    PX_TRY(px_chk_buf(c, scount, st, fn));
    PX_TRY(px_chk_buf(c, rcount, rt, fn));
    px_coll_args_t a = {
        .sbuf = sbuf, .scount = scount, .stype = st, .rbuf = rbuf, .rcount = rcount, .rtype = rt};
    return px_inter_launch(px_coll_inter_alltoall, &a, c, req, fn);
}

static int px_inter_alltoallw(px_mpi_comm_t *c, int w, const void *sbuf, const MPI_Aint *scounts,
                              const MPI_Aint *sdispls, const MPI_Datatype *stypes, MPI_Datatype st,
                              void *rbuf, const MPI_Aint *rcounts, const MPI_Aint *rdispls,
                              const MPI_Datatype *rtypes, MPI_Datatype rt, MPI_Request *req,
                              const char *fn)
{
    int rs = c->remote->size;
    PX_TRY(px_inter_chk_inplace(c, sbuf, fn));
    PX_TRY(px_inter_chk_inplace(c, rbuf, fn));
    if (w && (!stypes || !rtypes) && rs > 0)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null datatypes");
    PX_TRY(px_inter_chk_counts(c, rs, scounts, sdispls, w ? MPI_BYTE : st, fn));
    PX_TRY(px_inter_chk_counts(c, rs, rcounts, rdispls, w ? MPI_BYTE : rt, fn));
    for (int i = 0; w && i < rs; i++) {
        PX_TRY(px_chk_type(c, stypes[i], fn));
        PX_TRY(px_chk_type(c, rtypes[i], fn));
    }
    px_coll_args_t a = {.sbuf = sbuf,
                        .scounts = scounts,
                        .sdispls = sdispls,
                        .stypes = stypes,
                        .stype = st,
                        .rbuf = rbuf,
                        .rcounts = rcounts,
                        .rdispls = rdispls,
                        .rtypes = rtypes,
                        .rtype = rt};
    return px_inter_launch(w ? px_coll_inter_alltoallw : px_coll_inter_alltoallv, &a, c, req, fn);
}

static int px_inter_reduce_scatter(px_mpi_comm_t *c, int block, const void *sbuf, void *rbuf,
                                   const MPI_Aint *rcounts, int rcount, MPI_Datatype dt, MPI_Op op,
                                   MPI_Request *req, const char *fn)
{
    PX_TRY(px_inter_chk_inplace(c, sbuf, fn));
    PX_TRY(px_inter_chk_inplace(c, rbuf, fn));
    PX_TRY(px_chk_rs_counts(c, block, rcounts, rcount, dt, fn));
    px_coll_args_t a = {.sbuf = sbuf, .rbuf = rbuf, .dt = dt, .op = op};
    PX_TRY(px_chk_op(c, op, dt, &a.commute, fn));
    MPI_Aint *cnts;
    size_t total;
    PX_TRY(px_rs_counts(c, block, rcount, &rcounts, &cnts, &total, fn));
    int rc = total > (size_t)0x7fffffff ? px_mpi_error(c, MPI_ERR_COUNT, fn, "count overflow")
                                        : px_chk_alias(c, sbuf, rbuf, total, fn);
    if (rc == MPI_SUCCESS) {
        a.rcounts = rcounts; /* copied while the schedule is built */
        a.bytes = px_bytes((int)total, dt);
        rc = px_inter_launch(px_coll_inter_reduce_scatter, &a, c, req, fn);
    }
    free(cnts);
    return rc;
}

/* ---------- implementations shared by blocking and nonblocking ---------- */

static int px_barrier(MPI_Comm comm, MPI_Request *req, const char *fn)
{
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    PX_TRY(px_chk_req(c, req, fn[4] == 'I', fn));
    px_coll_args_t a = {0};
    if (c->is_inter)
        return px_inter_launch(px_coll_inter_barrier, &a, c, req, fn);
    return px_coll_launch(PX_COLL_BARRIER, &a, c, req, fn);
}

static int px_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                    MPI_Request *req, const char *fn)
{
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    PX_TRY(px_chk_req(c, req, fn[4] == 'I', fn));
    if (c->is_inter)
        return px_inter_bcast(c, buf, count, dt, root, req, fn);
    PX_TRY(px_chk_buf(c, count, dt, fn));
    PX_TRY(px_chk_root(c, root, fn));
    if (buf == MPI_IN_PLACE)
        return px_mpi_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not valid here");
    px_coll_args_t a = {.rbuf = buf,
                        .count = count,
                        .dt = dt,
                        .root = root,
                        .bytes = (size_t)count * (size_t)px_mpi_dt_get(dt)->size};
    const px_coll_algo_t *al;
    int rc;
    if (px_coll_empty(PX_COLL_BCAST, &a, c, req, fn, &rc))
        return rc;
    if (!req && px_coll_shm_try(PX_COLL_BCAST, &a, c, fn, &rc, &al))
        return rc;
    if (req && px_coll_lane_try(PX_COLL_BCAST, &a, c, req, fn, &rc))
        return rc;
    px_coll_sched_t *s = px_coll_begin(c, req);
    /* a nonblocking bcast holds its datatype: the caller may free it at once */
    if (!s || (req && px_coll_sched_keep(s, &(px_coll_args_t){.dt = dt}, c->size) != MPI_SUCCESS)) {
        px_coll_sched_free(s);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    return px_coll_go(s, px_coll_bcast_sched(s, buf, count, dt, root, c), c, req, fn);
}

static int px_reduce_common(px_coll_id_t id, const void *sbuf, void *rbuf, int count,
                            MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, MPI_Request *req,
                            const char *fn)
{
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    PX_TRY(px_chk_req(c, req, fn[4] == 'I', fn));
    if (c->is_inter)
        return px_inter_reduce(id, c, sbuf, rbuf, count, dt, op, root, req, fn);
    PX_TRY(px_chk_buf(c, count, dt, fn));
    px_coll_args_t a = {.count = count, .dt = dt, .op = op, .root = root, .rbuf = rbuf};
    PX_TRY(px_chk_op(c, op, dt, &a.commute, fn));
    if (id == PX_COLL_REDUCE) {
        PX_TRY(px_chk_root(c, root, fn));
        if (c->rank != root && sbuf == MPI_IN_PLACE)
            return px_mpi_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is only valid at the root");
    }
    int has_result = id != PX_COLL_REDUCE || c->rank == root;
    if (has_result && rbuf == MPI_IN_PLACE)
        return px_mpi_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not valid as receive buffer");
    if (has_result)
        PX_TRY(px_chk_alias(c, sbuf, rbuf, px_bytes(count, dt), fn));
    a.sbuf = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    a.bytes = px_bytes(count, dt);
    return px_coll_launch(id, &a, c, req, fn);
}

/* Gather and scatter, with or without v. The root's side of the transfer
 * (the receive of a gather, the send of a scatter) holds a block for every
 * rank, the other side one rank's own block; MPI_IN_PLACE stands for the
 * root's own block only. */
static int px_rooted(int gather, const void *sbuf, int scount, px_cv_t *sv, MPI_Datatype st,
                     void *rbuf, int rcount, px_cv_t *rv, MPI_Datatype rt, int root, MPI_Comm comm,
                     MPI_Request *req, const char *fn)
{
    int v = (gather ? rv : sv) != NULL; /* the v calls pass their arrays */
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    PX_TRY(px_chk_req(c, req, fn[4] == 'I', fn));
    if (!c->is_inter)
        PX_TRY(px_chk_root(c, root, fn));
    /* the root's side has a block for every rank */
    if (v && (c->is_inter ? root == MPI_ROOT : c->rank == root))
        PX_TRY(px_cv_wide(gather ? rv : sv, px_mpi_comm_peer_size(c), c, fn));
    const MPI_Aint *scounts = sv ? sv->c : NULL, *sdispls = sv ? sv->d : NULL;
    const MPI_Aint *rcounts = rv ? rv->c : NULL, *rdispls = rv ? rv->d : NULL;
    if (c->is_inter)
        return px_inter_rooted(c, gather, v, sbuf, scount, st, scounts, sdispls, rbuf, rcount, rt,
                               rcounts, rdispls, root, req, fn);
    px_coll_args_t a = {.sbuf = sbuf,
                        .scount = scount,
                        .stype = st,
                        .scounts = scounts,
                        .sdispls = sdispls,
                        .rbuf = rbuf,
                        .rcount = rcount,
                        .rtype = rt,
                        .rcounts = rcounts,
                        .rdispls = rdispls,
                        .root = root};
    const void *all = gather ? rbuf : sbuf, *own = gather ? sbuf : rbuf;
    int all_count = gather ? rcount : scount, own_count = gather ? scount : rcount;
    MPI_Datatype all_type = gather ? rt : st, own_type = gather ? st : rt;
    if (c->rank == root) {
        const MPI_Aint *counts = gather ? rcounts : scounts;
        if (v)
            PX_TRY(px_chk_counts(c, counts, gather ? rdispls : sdispls, all_type, fn));
        else
            PX_TRY(px_chk_buf(c, all_count, all_type, fn));
        if (all == MPI_IN_PLACE)
            return px_mpi_error(c, MPI_ERR_BUFFER, fn,
                                gather ? "MPI_IN_PLACE is not valid as receive buffer"
                                       : "MPI_IN_PLACE is not valid as send buffer");
        if (own != MPI_IN_PLACE) {
            MPI_Aint mine = v ? counts[root] : all_count; /* its own block among all */
            PX_TRY(px_chk_buf(c, own_count, own_type, fn));
            PX_TRY(gather ? px_chk_sig(c, scount, st, mine, rt, fn)
                          : px_chk_sig(c, mine, st, rcount, rt, fn));
            PX_TRY(px_chk_alias2(c, own, all, px_bytes(own_count, own_type), fn));
        }
        a.bytes = v ? 0 : px_bytes(all_count, all_type);
    } else {
        if (own == MPI_IN_PLACE)
            return px_mpi_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is only valid at the root");
        PX_TRY(px_chk_buf(c, own_count, own_type, fn));
        a.bytes = v ? 0 : px_bytes(own_count, own_type);
    }
    px_coll_id_t id =
        gather ? (v ? PX_COLL_GATHERV : PX_COLL_GATHER) : (v ? PX_COLL_SCATTERV : PX_COLL_SCATTER);
    return px_coll_launch(id, &a, c, req, fn);
}

static int px_allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                        px_cv_t *rv, MPI_Datatype rt, MPI_Comm comm, MPI_Request *req,
                        const char *fn)
{
    int v = rv != NULL; /* allgatherv passes its arrays */
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    PX_TRY(px_chk_req(c, req, fn[4] == 'I', fn));
    PX_TRY(px_cv_wide(rv, px_mpi_comm_peer_size(c), c, fn));
    const MPI_Aint *rcounts = rv ? rv->c : NULL, *displs = rv ? rv->d : NULL;
    if (c->is_inter)
        return px_inter_allgather(c, v, sbuf, scount, st, rbuf, rcount, rcounts, displs, rt, req,
                                  fn);
    if (v)
        PX_TRY(px_chk_counts(c, rcounts, displs, rt, fn));
    else
        PX_TRY(px_chk_buf(c, rcount, rt, fn));
    if (rbuf == MPI_IN_PLACE)
        return px_mpi_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not valid as receive buffer");
    MPI_Aint mine = v ? rcounts[c->rank] : rcount;
    if (sbuf != MPI_IN_PLACE) {
        PX_TRY(px_chk_buf(c, scount, st, fn));
        PX_TRY(px_chk_sig(c, scount, st, mine, rt, fn));
        PX_TRY(px_chk_alias2(c, sbuf, rbuf, px_bytes(scount, st), fn));
        /* the own block given where it is received (MPI_IN_PLACE's case) */
        MPI_Aint at = v ? displs[c->rank] : (MPI_Aint)c->rank * rcount;
        if (rbuf != MPI_BOTTOM)
            PX_TRY(px_chk_alias2(c, sbuf, (char *)rbuf + at * px_mpi_dt_get(rt)->extent,
                                 px_bytes(scount, st), fn));
    }
    px_coll_args_t a = {.sbuf = sbuf,
                        .scount = scount,
                        .stype = st,
                        .rbuf = rbuf,
                        .rcount = rcount,
                        .rtype = rt,
                        .rcounts = rcounts,
                        .rdispls = displs};
    /* allgatherv: the largest block (every rank knows every count) */
    MPI_Aint most = rcount;
    for (int r = 0; v && r < c->size; r++)
        most = r == 0 || rcounts[r] > most ? rcounts[r] : most;
    a.bytes = px_bytes(most, rt);
    return px_coll_launch(v ? PX_COLL_ALLGATHERV : PX_COLL_ALLGATHER, &a, c, req, fn);
}

static int px_alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                       MPI_Datatype rt, MPI_Comm comm, MPI_Request *req, const char *fn)
{
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    PX_TRY(px_chk_req(c, req, fn[4] == 'I', fn));
    if (c->is_inter)
        return px_inter_alltoall(c, sbuf, scount, st, rbuf, rcount, rt, req, fn);
    PX_TRY(px_chk_buf(c, rcount, rt, fn));
    if (rbuf == MPI_IN_PLACE)
        return px_mpi_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not valid as receive buffer");
    if (sbuf != MPI_IN_PLACE) {
        PX_TRY(px_chk_buf(c, scount, st, fn));
        PX_TRY(px_chk_sig(c, scount, st, rcount, rt, fn));
        PX_TRY(px_chk_alias2(c, sbuf, rbuf, px_bytes(scount, st), fn));
    } else {
        scount = rcount;
        st = rt;
    }
    px_coll_args_t a = {
        .sbuf = sbuf, .scount = scount, .stype = st, .rbuf = rbuf, .rcount = rcount, .rtype = rt};
    a.bytes = px_bytes(rcount, rt);
    return px_coll_launch(PX_COLL_ALLTOALL, &a, c, req, fn);
}

static int px_alltoallw(const void *sbuf, px_cv_t *sv, const MPI_Datatype *stypes, MPI_Datatype st,
                        void *rbuf, px_cv_t *rv, const MPI_Datatype *rtypes, MPI_Datatype rt,
                        MPI_Comm comm, MPI_Request *req, const char *fn)
{
    int w = strstr(fn, "lltoallw") != NULL;
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    PX_TRY(px_chk_req(c, req, fn[4] == 'I', fn));
    /* in place, the send arrays are not significant */
    PX_TRY(px_cv_wide(rv, px_mpi_comm_peer_size(c), c, fn));
    if (sbuf != MPI_IN_PLACE)
        PX_TRY(px_cv_wide(sv, px_mpi_comm_peer_size(c), c, fn));
    const MPI_Aint *scounts = sv->c, *sdispls = sv->d, *rcounts = rv->c, *rdispls = rv->d;
    if (c->is_inter)
        return px_inter_alltoallw(c, w, sbuf, scounts, sdispls, stypes, st, rbuf, rcounts, rdispls,
                                  rtypes, rt, req, fn);
    if (rbuf == MPI_IN_PLACE)
        return px_mpi_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not valid as receive buffer");
    if (w && !rtypes)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null receive datatypes");
    PX_TRY(px_chk_counts(c, rcounts, rdispls, w ? rtypes[0] : rt, fn));
    for (int i = 0; w && i < c->size; i++)
        PX_TRY(px_chk_type(c, rtypes[i], fn));
    if (sbuf != MPI_IN_PLACE) {
        if (w && !stypes)
            return px_mpi_error(c, MPI_ERR_ARG, fn, "null send datatypes");
        PX_TRY(px_chk_counts(c, scounts, sdispls, w ? stypes[0] : st, fn));
        for (int i = 0; w && i < c->size; i++)
            PX_TRY(px_chk_type(c, stypes[i], fn));
        int me = c->rank, moves = 0;
        PX_TRY(
            px_chk_sig(c, scounts[me], w ? stypes[me] : st, rcounts[me], w ? rtypes[me] : rt, fn));
        for (int i = 0; i < c->size && !moves; i++)
            moves = scounts[i] > 0;
        PX_TRY(px_chk_alias2(c, sbuf, rbuf, (size_t)moves, fn));
    }
    px_coll_args_t a = {.sbuf = sbuf,
                        .scounts = scounts,
                        .sdispls = sdispls,
                        .stypes = w ? stypes : NULL,
                        .stype = st,
                        .rbuf = rbuf,
                        .rcounts = rcounts,
                        .rdispls = rdispls,
                        .rtypes = w ? rtypes : NULL,
                        .rtype = rt};
    return px_coll_launch(w ? PX_COLL_ALLTOALLW : PX_COLL_ALLTOALLV, &a, c, req, fn);
}

static int px_reduce_scatter(const void *sbuf, void *rbuf, px_cv_t *rv, int rcount, MPI_Datatype dt,
                             MPI_Op op, MPI_Comm comm, MPI_Request *req, const char *fn)
{
    int block = rv == NULL; /* reduce_scatter passes its counts */
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    PX_TRY(px_chk_req(c, req, fn[4] == 'I', fn));
    /* the counts of the local group's ranks */
    PX_TRY(px_cv_wide(rv, c->size, c, fn));
    const MPI_Aint *rcounts = rv ? rv->c : NULL;
    if (c->is_inter)
        return px_inter_reduce_scatter(c, block, sbuf, rbuf, rcounts, rcount, dt, op, req, fn);
    px_coll_args_t a = {.dt = dt, .op = op, .rbuf = rbuf};
    PX_TRY(px_chk_rs_counts(c, block, rcounts, rcount, dt, fn));
    PX_TRY(px_chk_op(c, op, dt, &a.commute, fn));
    if (rbuf == MPI_IN_PLACE)
        return px_mpi_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not valid as receive buffer");
    MPI_Aint *cnts;
    size_t total;
    PX_TRY(px_rs_counts(c, block, rcount, &rcounts, &cnts, &total, fn));
    if (sbuf != MPI_IN_PLACE && sbuf == rbuf && total) {
        free(cnts);
        return px_chk_alias(c, sbuf, rbuf, total, fn);
    }
    a.sbuf = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    a.rcounts = rcounts;
    a.bytes = total * (size_t)px_mpi_dt_get(dt)->size;
    /* the counts are read while the schedule is built, not later */
    int rc = px_coll_launch(block ? PX_COLL_REDUCE_SCATTER_BLOCK : PX_COLL_REDUCE_SCATTER, &a, c,
                            req, fn);
    free(cnts);
    return rc;
}

/* ---------- MPI functions ----------
 * A collective's blocking and nonblocking entry points are defined together,
 * so that the two cannot drift apart: the same parameters (the nonblocking
 * one's followed by the request) and one implementation, which takes the
 * request (NULL when blocking) and the function's name for its errors.
 * tests/fortran/CMakeLists.txt reads the names from the first line of each. */

#define PX_COLL_PARAMS(...) __VA_ARGS__ /* a parameter list without its parentheses */
/* decls: local declarations first (the px_cv_t of the arrays) */
#define PX_COLL_ENTRY_V(name, iname, params, decls, impl, ...)                                     \
    PX_PMPI(name) params                                                                           \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        PX_COLL_PARAMS decls;                                                                      \
        return impl(__VA_ARGS__, NULL, #name);                                                     \
    }                                                                                              \
    PX_WEAK(name)                                                                                  \
    PX_PMPI(iname)(PX_COLL_PARAMS params, MPI_Request * req)                                       \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        PX_COLL_PARAMS decls;                                                                      \
        return impl(__VA_ARGS__, req, #iname);                                                     \
    }                                                                                              \
    PX_WEAK(iname)
#define PX_COLL_ENTRY(name, iname, params, impl, ...)                                              \
    PX_COLL_ENTRY_V(name, iname, params, (), impl, __VA_ARGS__)

PX_COLL_ENTRY(MPI_Barrier, MPI_Ibarrier, (MPI_Comm comm), px_barrier, comm)

PX_COLL_ENTRY(MPI_Bcast, MPI_Ibcast,
              (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm), px_bcast, buf,
              count, dt, root, comm)

PX_COLL_ENTRY(MPI_Reduce, MPI_Ireduce,
              (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
               MPI_Comm comm),
              px_reduce_common, PX_COLL_REDUCE, sbuf, rbuf, count, dt, op, root, comm)

PX_COLL_ENTRY(MPI_Allreduce, MPI_Iallreduce,
              (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
              px_reduce_common, PX_COLL_ALLREDUCE, sbuf, rbuf, count, dt, op, 0, comm)

PX_COLL_ENTRY(MPI_Scan, MPI_Iscan,
              (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
              px_reduce_common, PX_COLL_SCAN, sbuf, rbuf, count, dt, op, 0, comm)

PX_COLL_ENTRY(MPI_Exscan, MPI_Iexscan,
              (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
              px_reduce_common, PX_COLL_EXSCAN, sbuf, rbuf, count, dt, op, 0, comm)

PX_COLL_ENTRY(MPI_Gather, MPI_Igather,
              (const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
               MPI_Datatype rt, int root, MPI_Comm comm),
              px_rooted, 1, sbuf, scount, NULL, st, rbuf, rcount, NULL, rt, root, comm)

PX_COLL_ENTRY_V(MPI_Gatherv, MPI_Igatherv,
                (const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rcounts[],
                 const int displs[], MPI_Datatype rt, int root, MPI_Comm comm),
                (PX_CV_I(rv, rcounts, displs)), px_rooted, 1, sbuf, scount, NULL, st, rbuf, 0, &rv,
                rt, root, comm)

PX_COLL_ENTRY(MPI_Scatter, MPI_Iscatter,
              (const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
               MPI_Datatype rt, int root, MPI_Comm comm),
              px_rooted, 0, sbuf, scount, NULL, st, rbuf, rcount, NULL, rt, root, comm)

PX_COLL_ENTRY_V(MPI_Scatterv, MPI_Iscatterv,
                (const void *sbuf, const int scounts[], const int displs[], MPI_Datatype st,
                 void *rbuf, int rcount, MPI_Datatype rt, int root, MPI_Comm comm),
                (PX_CV_I(sv, scounts, displs)), px_rooted, 0, sbuf, 0, &sv, st, rbuf, rcount, NULL,
                rt, root, comm)

PX_COLL_ENTRY(MPI_Allgather, MPI_Iallgather,
              (const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
               MPI_Datatype rt, MPI_Comm comm),
              px_allgather, sbuf, scount, st, rbuf, rcount, NULL, rt, comm)

PX_COLL_ENTRY_V(MPI_Allgatherv, MPI_Iallgatherv,
                (const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rcounts[],
                 const int displs[], MPI_Datatype rt, MPI_Comm comm),
                (PX_CV_I(rv, rcounts, displs)), px_allgather, sbuf, scount, st, rbuf, 0, &rv, rt,
                comm)

PX_COLL_ENTRY(MPI_Alltoall, MPI_Ialltoall,
              (const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
               MPI_Datatype rt, MPI_Comm comm),
              px_alltoall, sbuf, scount, st, rbuf, rcount, rt, comm)

PX_COLL_ENTRY_V(MPI_Alltoallv, MPI_Ialltoallv,
                (const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype st,
                 void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rt,
                 MPI_Comm comm),
                (PX_CV_I(sv, scounts, sdispls); PX_CV_I(rv, rcounts, rdispls)), px_alltoallw, sbuf,
                &sv, NULL, st, rbuf, &rv, NULL, rt, comm)

PX_COLL_ENTRY_V(MPI_Alltoallw, MPI_Ialltoallw,
                (const void *sbuf, const int scounts[], const int sdispls[],
                 const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const int rdispls[],
                 const MPI_Datatype rtypes[], MPI_Comm comm),
                (PX_CV_I(sv, scounts, sdispls); PX_CV_I(rv, rcounts, rdispls)), px_alltoallw, sbuf,
                &sv, stypes, MPI_BYTE, rbuf, &rv, rtypes, MPI_BYTE, comm)

PX_COLL_ENTRY(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block,
              (const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
              px_reduce_scatter, sbuf, rbuf, NULL, rcount, dt, op, comm)

PX_COLL_ENTRY_V(MPI_Reduce_scatter, MPI_Ireduce_scatter,
                (const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op,
                 MPI_Comm comm),
                (PX_CV_I(rv, rcounts, NULL)), px_reduce_scatter, sbuf, rbuf, &rv, 0, dt, op, comm)

/* The large-count v and w variants: the implementations above, their
 * arrays taken as they are; the one count of a side with a single block
 * (n of type t: a gatherv's send, a scatterv's receive, an allgatherv's
 * send) above INT_MAX becomes one item of a datatype that holds it
 * (b.count of b.type). */
#define PX_COLL_ENTRY_C_(name, params, n, t, decls, impl, req, ...)                                \
    PX_PMPI(name) params                                                                           \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        PX_COLL_PARAMS decls;                                                                      \
        px_mpi_big_t b;                                                                            \
        int rc = px_mpi_big_of(n, t, &b, #name);                                                   \
        if (rc == MPI_SUCCESS)                                                                     \
            rc = impl(__VA_ARGS__, req, #name);                                                    \
        px_mpi_big_free(&b);                                                                       \
        return rc;                                                                                 \
    }                                                                                              \
    PX_WEAK(name)
#define PX_COLL_ENTRY_C(name, iname, params, n, t, decls, impl, ...)                               \
    PX_COLL_ENTRY_C_(name, params, n, t, decls, impl, NULL, __VA_ARGS__)                           \
    PX_COLL_ENTRY_C_(iname, (PX_COLL_PARAMS params, MPI_Request * req), n, t, decls, impl, req,    \
                     __VA_ARGS__)

PX_COLL_ENTRY_C(MPI_Gatherv_c, MPI_Igatherv_c,
                (const void *sbuf, MPI_Count scount, MPI_Datatype st, void *rbuf,
                 const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rt, int root,
                 MPI_Comm comm),
                scount, st, (PX_CV_C(rv, rcounts, displs)), px_rooted, 1, sbuf, b.count, NULL,
                b.type, rbuf, 0, &rv, rt, root, comm)

PX_COLL_ENTRY_C(MPI_Scatterv_c, MPI_Iscatterv_c,
                (const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
                 MPI_Datatype st, void *rbuf, MPI_Count rcount, MPI_Datatype rt, int root,
                 MPI_Comm comm),
                rcount, rt, (PX_CV_C(sv, scounts, displs)), px_rooted, 0, sbuf, 0, &sv, st, rbuf,
                b.count, NULL, b.type, root, comm)

PX_COLL_ENTRY_C(MPI_Allgatherv_c, MPI_Iallgatherv_c,
                (const void *sbuf, MPI_Count scount, MPI_Datatype st, void *rbuf,
                 const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rt,
                 MPI_Comm comm),
                scount, st, (PX_CV_C(rv, rcounts, displs)), px_allgather, sbuf, b.count, b.type,
                rbuf, 0, &rv, rt, comm)

PX_COLL_ENTRY_C(MPI_Alltoallv_c, MPI_Ialltoallv_c,
                (const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                 MPI_Datatype st, void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
                 MPI_Datatype rt, MPI_Comm comm),
                0, MPI_BYTE, (PX_CV_C(sv, scounts, sdispls); PX_CV_C(rv, rcounts, rdispls)),
                px_alltoallw, sbuf, &sv, NULL, st, rbuf, &rv, NULL, rt, comm)

PX_COLL_ENTRY_C(MPI_Alltoallw_c, MPI_Ialltoallw_c,
                (const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                 const MPI_Datatype stypes[], void *rbuf, const MPI_Count rcounts[],
                 const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm),
                0, MPI_BYTE, (PX_CV_C(sv, scounts, sdispls); PX_CV_C(rv, rcounts, rdispls)),
                px_alltoallw, sbuf, &sv, stypes, MPI_BYTE, rbuf, &rv, rtypes, MPI_BYTE, comm)
