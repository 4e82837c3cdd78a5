/* One-sided operations: put, get, the accumulates, and their
 * request-based forms. The target's datatype is cut into its contiguous
 * blocks, each one operation of the protocol layer; the origin's data is
 * packed when it is not contiguous, results are unpacked when they are
 * complete. */
#include "rma_impl.h"
#include "../dtype_engine.h"
#include "../../util/copy.h"

#include <stdlib.h>

#define PX_RMA_PROC_NULL 1000000 /* check result: nothing to do */

/* ---------- operation records ---------- */

/* Pairs whose index lies apart from their value (px_rma_pair_apart) move
 * in the accumulates as they lie in memory, gap included: n bytes of such
 * pairs packed, from and to that form. */
static void *px_rma_spread_pairs(const px_dtype_builtin_t *b, const char *packed, size_t n)
{
    size_t f = (size_t)px_mpi_dtype_builtin(b->pair_first)->size, sz = (size_t)b->size;
    size_t ext = (size_t)b->true_extent, so = (size_t)b->second_offset;
    char *out = calloc(n / sz ? n / sz : 1, ext);
    for (size_t k = 0; out && k < n / sz; k++) {
        memcpy(out + k * ext, packed + k * sz, f);
        memcpy(out + k * ext + so, packed + k * sz + f, sz - f);
    }
    return out;
}

static void px_rma_gather_pairs(const px_dtype_builtin_t *b, char *buf, size_t n)
{
    size_t f = (size_t)px_mpi_dtype_builtin(b->pair_first)->size, sz = (size_t)b->size;
    size_t ext = (size_t)b->true_extent, so = (size_t)b->second_offset;
    for (size_t k = 0; k < n / sz; k++) { /* forwards: each lands at or before where it was */
        memmove(buf + k * sz, buf + k * ext, f);
        memmove(buf + k * sz + f, buf + k * ext + so, sz - f);
    }
}

static px_rma_op_t *px_rma_op_new(px_mpi_win_t *w, void *rbuf, size_t rlen)
{
    px_rma_op_t *op = calloc(1, sizeof(*op));
    if (!op)
        return NULL;
    op->refs = 1;
    op->win = w;
    op->dtype = MPI_DATATYPE_NULL;
    px_proto_rma_req_init(&op->snd, PX_PROTO_REQ_SEND, NULL, 0);
    px_proto_rma_req_init(&op->res, PX_PROTO_REQ_RECV, rbuf, rlen);
    op->next = w->ops;
    w->ops = op;
    return op;
}

void px_rma_op_release(px_rma_op_t *op)
{
    if (--op->refs)
        return;
    free(op->sbuf);
    free(op->rbuf);
    px_mpi_dt_release(op->dtype);
    free(op);
}

static int px_rma_op_done(px_rma_op_t *op) { return op->snd.done && op->res.done; }

/* Results unpacked, buffers freed; the operation's error class. */
int px_rma_op_finish(px_rma_op_t *op)
{
    if (op->finished)
        return op->err;
    op->finished = 1;
    px_status_t st = op->res.st_error ? op->res.st_error : op->snd.st_error;
    if (st == PX_ERR_INVALID_PARAM)
        op->err = MPI_ERR_RMA_RANGE;
    else if (st)
        op->err = px_mpi_status_to_class(st);
    if (op->rbuf && !op->err) {
        px_mpi_dt_t *d = px_mpi_dt_get(op->dtype);
        if (d && op->spread)
            px_rma_gather_pairs(op->spread, op->rbuf, (size_t)op->count * (size_t)d->size);
        if (d)
            d->unpack(d, op->count, op->rbuf, op->ubuf);
    }
    free(op->sbuf);
    free(op->rbuf);
    op->sbuf = op->rbuf = NULL;
    return op->err;
}

int px_rma_wait_local(px_mpi_win_t *w)
{
    unsigned idle = 0;
    int err = MPI_SUCCESS;
    px_proto_rma_push(w->pw);
    while (w->ops) {
        px_rma_op_t *op = w->ops;
        while (!px_rma_op_done(op))
            px_proto_wait_step(&idle);
        w->ops = op->next;
        int e = px_rma_op_finish(op);
        if (e && !err)
            err = e;
        px_rma_op_release(op);
    }
    while (!px_proto_rma_local_done(w->pw))
        px_proto_wait_step(&idle);
    return err;
}

/* Everything of op has been issued: the caller's token goes; after an
 * error (rc) a result that will not come is not waited for. */
static void px_rma_op_end(px_rma_op_t *op, int rc)
{
    if (!op)
        return;
    px_proto_rma_req_issued(&op->snd);
    if (rc)
        px_proto_rma_req_fail(&op->res, PX_ERR_IO);
}

/* ---------- request-based operations ---------- */

static int px_rma_req_poll(px_mpi_req_t *r)
{
    px_rma_op_t *op = r->sched;
    if (!px_rma_op_done(op)) {
        px_proto_rma_push(op->win->pw); /* its frame may be held */
        return 0;
    }
    r->st_error = px_rma_op_finish(op);
    return 1;
}

static void px_rma_req_release(px_mpi_req_t *r)
{
    if (r->sched)
        px_rma_op_release(r->sched);
    r->sched = NULL;
}

static int px_rma_req(px_mpi_win_t *w, px_rma_op_t *op, MPI_Request *request, const char *fn)
{
    px_mpi_req_t *r = px_mpi_req_new(PX_MPI_REQ_RMA);
    if (!r)
        return px_mpi_win_error(w, MPI_ERR_NO_MEM, fn, "out of memory");
    op->refs++;
    r->sched = op;
    r->poll = px_rma_req_poll;
    r->release = px_rma_req_release;
    r->st_source = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    *request = r->handle;
    return MPI_SUCCESS;
}

/* ---------- checks and layouts ---------- */

/* The target's side of an operation: PX_RMA_PROC_NULL, an error class
 * (reported), or MPI_SUCCESS with its type and where the window's
 * displacement 0 lies at the target. */
static inline __attribute__((always_inline)) int px_rma_check(px_mpi_win_t *w, int target,
                                                              MPI_Aint disp, int count,
                                                              MPI_Datatype dt, px_mpi_dt_t **d_p,
                                                              uint64_t *base_p, const char *fn)
{
    if (target == MPI_PROC_NULL)
        return PX_RMA_PROC_NULL;
    if (target < 0 || target >= w->comm->size)
        return px_mpi_win_error(w, MPI_ERR_RANK, fn, "invalid target rank %d", target);
    if (count < 0)
        return px_mpi_win_error(w, MPI_ERR_COUNT, fn, "negative count");
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    if (!d || !d->committed)
        return px_mpi_win_error(w, MPI_ERR_TYPE, fn, "invalid or uncommitted target datatype");
    if (!px_rma_access_ok(w, target))
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn,
                                "no access epoch to rank %d is open on this window", target);
    *d_p = d;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        *base_p = (uint64_t)disp;
        return MPI_SUCCESS;
    }
    MPI_Aint at = disp * w->disp_units[target];
    *base_p = (uint64_t)at;
    if (!count || !d->size)
        return MPI_SUCCESS;
    MPI_Aint lo = at + d->true_lb, hi = lo + (count - 1) * d->extent + d->true_extent;
    if (disp < 0 || lo < 0 || hi > w->sizes[target])
        return px_mpi_win_error(w, MPI_ERR_RMA_RANGE, fn,
                                "bytes %ld to %ld lie outside rank %d's window of %ld bytes",
                                (long)lo, (long)hi, target, (long)w->sizes[target]);
    return MPI_SUCCESS;
}

/* The contiguous blocks of count items of d, in type-map order. */
typedef int (*px_rma_blk_fn)(void *arg, MPI_Aint off, size_t len, size_t at);
static int px_rma_blocks(px_mpi_dt_t *d, int count, px_rma_blk_fn fn, void *arg)
{
    size_t at = 0;
    px_dt_obj_t *o = px_dt_obj(d);
    if (d->contig || (!o && !d->b->is_pair)) {
        size_t n = (size_t)count * (size_t)d->size;
        return n ? fn(arg, d->true_lb, n, 0) : 0;
    }
    if (!o) { /* a pair type with padding: the value and the index of each item */
        const px_dtype_builtin_t *b = d->b;
        size_t f = (size_t)px_mpi_dtype_builtin(b->pair_first)->size;
        int apart = px_rma_pair_apart(b);
        for (int i = 0; i < count; i++) {
            MPI_Aint base = (MPI_Aint)i * d->extent;
            int rc = fn(arg, base, apart ? f : (size_t)d->size, at);
            if (!rc && apart)
                rc = fn(arg, base + b->second_offset, (size_t)d->size - f, at + f);
            if (rc)
                return rc;
            at += (size_t)d->size;
        }
        return 0;
    }
    for (int i = 0; i < count; i++)
        for (MPI_Aint j = 0; j < o->nblks; j++)
            for (MPI_Aint k = 0; k < o->blks[j].reps; k++) {
                const px_dt_seg_t *g = &o->blks[j];
                int rc =
                    fn(arg, (MPI_Aint)i * d->extent + g->off + k * g->stride, (size_t)g->n, at);
                if (rc)
                    return rc;
                at += (size_t)g->n;
            }
    return 0;
}

/* The origin's data as contiguous bytes: its own memory, or packed into
 * *packed (the caller frees it). */
static int px_rma_origin(const void *addr, int count, px_mpi_dt_t *d, const char **data,
                         void **packed)
{
    size_t n = (size_t)count * (size_t)d->size;
    *packed = NULL;
    *data = (const char *)addr + d->true_lb;
    if (d->contig || !n)
        return MPI_SUCCESS;
    *packed = malloc(n);
    if (!*packed)
        return MPI_ERR_NO_MEM;
    d->pack(d, count, addr, *packed);
    *data = *packed;
    return MPI_SUCCESS;
}

/* The single predefined type every element of d is made of (the
 * accumulates need one), or MPI_DATATYPE_NULL. A pair type (MPI_DOUBLE_INT
 * ...) counts as one: a block of the type map holds whole pairs back to
 * back (px_rma_pair_apart ones travel with their gap). */
static MPI_Datatype px_rma_basic(px_mpi_dt_t *d)
{
    if (d->builtin)
        return d->handle;
    px_dt_obj_t *o = px_dt_obj(d);
    if (!o)
        return MPI_DATATYPE_NULL;
    return o->elem != MPI_DATATYPE_NULL ? o->elem : o->basic;
}

typedef struct {
    px_mpi_win_t *w;
    int target;
    uint64_t base;
    const char *data;
    px_proto_req_t *snd, *res;
    char *rdst; /* direct windows: where results go */
    size_t unit;
    MPI_Op op;
    MPI_Datatype basic;
    int kind;
} px_rma_xfer_t;

enum { PX_XFER_PUT, PX_XFER_GET, PX_XFER_ACC, PX_XFER_GACC };

/* One block on a direct window: loads and stores; accumulates (and the
 * reads of MPI_NO_OP) under the target's accumulate mutex. */
static void px_rma_direct_blk(px_rma_xfer_t *x, char *p, size_t len, size_t at)
{
    switch (x->kind) {
    case PX_XFER_PUT:
        memcpy(p, x->data + at, len);
        return;
    case PX_XFER_GET:
        if (x->op != MPI_NO_OP) {
            memcpy(x->rdst + at, p, len);
            return;
        }
        break;
    default:
        break;
    }
    px_rma_acc_lock(x->w, x->target);
    if (x->rdst)
        memcpy(x->rdst + at, p, len);
    if (x->kind != PX_XFER_GET)
        px_rma_apply((uint32_t)x->op, (uint32_t)x->basic, p, x->data + at, len);
    px_rma_acc_unlock(x->w, x->target);
}

static int px_rma_xfer_blk(void *arg, MPI_Aint off, size_t len, size_t at)
{
    px_rma_xfer_t *x = arg;
    uint64_t to = x->base + (uint64_t)off;
    if (x->w->direct) {
        px_rma_direct_blk(x, px_rma_part(x->w, x->target) + to, len, at);
        return 0;
    }
    px_status_t st;
    switch (x->kind) {
    case PX_XFER_PUT:
        st = px_proto_rma_put(x->w->pw, x->target, to, x->data + at, len, x->snd);
        break;
    case PX_XFER_GET:
        st = px_proto_rma_get(x->w->pw, x->target, to, len, x->res, at);
        break;
    default:
        st = px_proto_rma_acc(x->w->pw, x->target, to, x->data + at, len, x->unit, (uint32_t)x->op,
                              (uint32_t)x->basic, 0, x->snd,
                              x->kind == PX_XFER_GACC ? x->res : NULL, at);
    }
    return st < 0 ? px_mpi_status_to_class(st) : 0;
}

/* The blocks of the target's type for pairs that move with their gap: a
 * block of the type map's packed bytes holds the start of each pair it
 * begins; runs of pairs back to back in memory are one block. */
typedef struct {
    px_rma_xfer_t *x;
    size_t sz, ext; /* a pair's bytes packed, and in memory */
    MPI_Aint off;   /* the run: its place at the target, its first pair, its pairs */
    size_t first, n;
} px_rma_spread_t;

static int px_rma_spread_run(px_rma_spread_t *r)
{
    int rc = r->n ? px_rma_xfer_blk(r->x, r->off, r->n * r->ext, r->first * r->ext) : 0;
    r->n = 0;
    return rc;
}

static int px_rma_spread_blk(void *arg, MPI_Aint off, size_t len, size_t at)
{
    px_rma_spread_t *r = arg;
    for (size_t p = (at + r->sz - 1) / r->sz * r->sz; p < at + len; p += r->sz) {
        MPI_Aint e = off + (MPI_Aint)(p - at);
        if (r->n && e == r->off + (MPI_Aint)(r->n * r->ext)) {
            r->n++;
            continue;
        }
        int rc = px_rma_spread_run(r);
        if (rc)
            return rc;
        r->off = e;
        r->first = p / r->sz;
        r->n = 1;
    }
    return 0;
}

/* ---------- put and get ---------- */

/* An operation that reaches no target (MPI_PROC_NULL) or moves no data:
 * done at once, a request-based one with a request already complete. */
static int px_rma_nothing(px_mpi_win_t *w, MPI_Request *request, const char *fn)
{
    if (!request)
        return MPI_SUCCESS;
    px_rma_op_t *op = px_rma_op_new(w, NULL, 0);
    if (!op)
        return px_mpi_win_error(w, MPI_ERR_NO_MEM, fn, "out of memory");
    px_proto_rma_req_issued(&op->snd);
    return px_rma_req(w, op, request, fn);
}

static int px_rma_putget(int get, const void *oaddr, int ocount, MPI_Datatype odt, int target,
                         MPI_Aint disp, int tcount, MPI_Datatype tdt, MPI_Win win,
                         MPI_Request *request, const char *fn)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, fn);
    px_mpi_dt_t *td = NULL, *od = px_mpi_dt_get(odt);
    uint64_t base = 0;
    if (request)
        *request = MPI_REQUEST_NULL;
    if (ocount < 0)
        return px_mpi_win_error(w, MPI_ERR_COUNT, fn, "negative origin count");
    if (!od || !od->committed)
        return px_mpi_win_error(w, MPI_ERR_TYPE, fn, "invalid or uncommitted origin datatype");
    int rc = px_rma_check(w, target, disp, tcount, tdt, &td, &base, fn);
    size_t n = rc ? 0 : (size_t)ocount * (size_t)od->size;
    if (rc && rc != PX_RMA_PROC_NULL)
        return rc;
    if (!rc && n != (size_t)tcount * (size_t)td->size)
        return px_mpi_win_error(w, MPI_ERR_ARG, fn,
                                "origin (%zu bytes) and target (%zu bytes) do not match", n,
                                (size_t)tcount * (size_t)td->size);
    if (!n) /* MPI_PROC_NULL, or no data */
        return px_rma_nothing(w, request, fn);
    if (w->direct && !request && od->contig && td->contig) {
        /* a window of this machine, both sides contiguous: one copy */
        char *p = px_rma_part(w, target) + base + td->true_lb;
        char *o = (char *)oaddr + od->true_lb;
        if (get)
            px_copy(o, p, n);
        else
            px_copy(p, o, n);
        return MPI_SUCCESS;
    }
    px_rma_xfer_t x = {.w = w, .target = target, .base = base};
    px_rma_op_t *op = NULL;
    void *packed = NULL;
    if (get) {
        void *dst = (char *)oaddr + od->true_lb;
        if (!od->contig && n && !(dst = packed = malloc(n)))
            return px_mpi_win_error(w, MPI_ERR_NO_MEM, fn, "out of memory");
        x.rdst = dst;
        x.kind = PX_XFER_GET;
        x.op = MPI_OP_NULL;
        if (w->direct && !packed && !request) { /* done once copied */
            px_rma_blocks(td, tcount, px_rma_xfer_blk, &x);
            return MPI_SUCCESS;
        }
        op = px_rma_op_new(w, dst, w->direct ? 0 : n);
        if (!op) {
            free(packed);
            return px_mpi_win_error(w, MPI_ERR_NO_MEM, fn, "out of memory");
        }
        if (packed) {
            op->rbuf = packed;
            op->ubuf = (void *)oaddr;
            op->count = ocount;
            op->dtype = odt;
            px_mpi_dt_retain(odt);
        }
        x.res = &op->res;
    } else {
        rc = px_rma_origin(oaddr, ocount, od, &x.data, &packed);
        if (rc)
            return px_mpi_win_error(w, rc, fn, "out of memory");
        if (packed || request) {
            op = px_rma_op_new(w, NULL, 0);
            if (!op) {
                free(packed);
                return px_mpi_win_error(w, MPI_ERR_NO_MEM, fn, "out of memory");
            }
            op->sbuf = packed;
            x.snd = &op->snd;
        }
        x.kind = PX_XFER_PUT;
    }
    rc = px_rma_blocks(td, tcount, px_rma_xfer_blk, &x);
    px_rma_op_end(op, rc);
    if (rc)
        return px_mpi_win_error(w, rc, fn, "cannot reach rank %d", target);
    return request ? px_rma_req(w, op, request, fn) : MPI_SUCCESS;
}

PX_PMPI(MPI_Put)
(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
 MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return px_rma_putget(0, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                         target_count, target_datatype, win, NULL, "MPI_Put");
}
PX_WEAK(MPI_Put)

PX_PMPI(MPI_Get)
(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
 MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return px_rma_putget(1, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                         target_count, target_datatype, win, NULL, "MPI_Get");
}
PX_WEAK(MPI_Get)

/* The request-based forms exist only in passive-target epochs. */
static int px_rma_passive(MPI_Win win, int target, MPI_Request *request, const char *fn)
{
    px_mpi_win_t *w = px_mpi_win_get(win);
    if (!w)
        return px_mpi_error(NULL, MPI_ERR_WIN, fn, "invalid window");
    if (!request)
        return px_mpi_win_error(w, MPI_ERR_ARG, fn, "null request");
    if (target >= 0 && target < w->comm->size && !w->lock_all && !w->locked[target])
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn,
                                "request-based operations need a passive-target epoch");
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Rput)
(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
 MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
 MPI_Request *request)
{
    PX_CS_ENTER();
    int rc = px_rma_passive(win, target_rank, request, "MPI_Rput");
    if (rc)
        return rc;
    return px_rma_putget(0, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                         target_count, target_datatype, win, request, "MPI_Rput");
}
PX_WEAK(MPI_Rput)

PX_PMPI(MPI_Rget)
(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
 MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
 MPI_Request *request)
{
    PX_CS_ENTER();
    int rc = px_rma_passive(win, target_rank, request, "MPI_Rget");
    if (rc)
        return rc;
    return px_rma_putget(1, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                         target_count, target_datatype, win, request, "MPI_Rget");
}
PX_WEAK(MPI_Rget)

/* ---------- accumulates ---------- */

/* (Get_)accumulate. oaddr NULL with MPI_NO_OP: only the result. raddr NULL:
 * no result. */
static int px_rma_acc(const void *oaddr, int ocount, MPI_Datatype odt, void *raddr, int rcount,
                      MPI_Datatype rdt, int target, MPI_Aint disp, int tcount, MPI_Datatype tdt,
                      MPI_Op op, MPI_Win win, MPI_Request *request, const char *fn)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, fn);
    int fetch = raddr != NULL || rdt != MPI_DATATYPE_NULL;
    if (request)
        *request = MPI_REQUEST_NULL;
    if (!px_mpi_op_is_builtin(op) || (op == MPI_NO_OP && !fetch))
        return px_mpi_win_error(w, MPI_ERR_OP, fn,
                                "only predefined operations%s apply in one-sided accumulates",
                                fetch ? "" : " other than MPI_NO_OP");
    px_mpi_dt_t *td = NULL, *od = NULL, *rd = NULL;
    uint64_t base = 0;
    if (op != MPI_NO_OP) {
        od = px_mpi_dt_get(odt);
        if (ocount < 0)
            return px_mpi_win_error(w, MPI_ERR_COUNT, fn, "negative origin count");
        if (!od || !od->committed)
            return px_mpi_win_error(w, MPI_ERR_TYPE, fn, "invalid or uncommitted origin datatype");
    }
    if (fetch) {
        rd = px_mpi_dt_get(rdt);
        if (rcount < 0)
            return px_mpi_win_error(w, MPI_ERR_COUNT, fn, "negative result count");
        if (!rd || !rd->committed)
            return px_mpi_win_error(w, MPI_ERR_TYPE, fn, "invalid or uncommitted result datatype");
    }
    int rc = px_rma_check(w, target, disp, tcount, tdt, &td, &base, fn);
    if (rc == PX_RMA_PROC_NULL)
        return px_rma_nothing(w, request, fn);
    if (rc)
        return rc;
    size_t n = (size_t)tcount * (size_t)td->size;
    if (!n && (!od || !ocount || !od->size) && (!rd || !rcount || !rd->size))
        return px_rma_nothing(w, request, fn); /* no data anywhere: any types will do */
    MPI_Datatype basic = px_rma_basic(td);
    const px_dtype_builtin_t *bb = px_mpi_dtype_builtin(basic);
    if (!bb || !bb->size)
        return px_mpi_win_error(w, MPI_ERR_TYPE, fn,
                                "the target datatype must be made of one predefined type");
    if (n && op != MPI_REPLACE && op != MPI_NO_OP &&
        px_mpi_op_builtin_check(op, basic) != MPI_SUCCESS)
        return px_mpi_win_error(w, MPI_ERR_OP, fn, "the operation does not apply to this type");
    if (od && (px_rma_basic(od) != basic || (size_t)ocount * (size_t)od->size != n))
        return px_mpi_win_error(w, MPI_ERR_TYPE, fn, "origin and target types do not match");
    if (rd && (px_rma_basic(rd) != basic || (size_t)rcount * (size_t)rd->size != n))
        return px_mpi_win_error(w, MPI_ERR_TYPE, fn, "result and target types do not match");
    if (!n)
        return px_rma_nothing(w, request, fn);

    /* pairs apart (MPI_SHORT_INT) travel as they lie in memory: sn bytes */
    const px_dtype_builtin_t *spread = px_rma_pair_apart(bb) ? bb : NULL;
    size_t unit = spread ? (size_t)bb->true_extent : (size_t)bb->size;
    size_t sn = n / (size_t)bb->size * unit;
    px_rma_xfer_t x = {.w = w,
                       .target = target,
                       .base = base,
                       .unit = unit,
                       .op = op,
                       .basic = basic,
                       .kind = op == MPI_NO_OP ? PX_XFER_GET
                               : fetch         ? PX_XFER_GACC
                                               : PX_XFER_ACC};
    void *packed = NULL, *rpacked = NULL;
    if (od && (rc = px_rma_origin(oaddr, ocount, od, &x.data, &packed)))
        return px_mpi_win_error(w, rc, fn, "out of memory");
    if (od && spread) {
        void *s = px_rma_spread_pairs(spread, x.data, n);
        free(packed);
        if (!(x.data = packed = s))
            return px_mpi_win_error(w, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    void *dst = NULL;
    if (rd) {
        dst = (char *)raddr + rd->true_lb;
        if ((!rd->contig || spread) && !(dst = rpacked = malloc(sn))) {
            free(packed);
            return px_mpi_win_error(w, MPI_ERR_NO_MEM, fn, "out of memory");
        }
    }
    px_rma_op_t *o = NULL;
    if (packed || (rd && (!w->direct || rpacked)) || request) {
        o = px_rma_op_new(w, dst, rd && !w->direct ? sn : 0);
        if (!o) {
            free(packed), free(rpacked);
            return px_mpi_win_error(w, MPI_ERR_NO_MEM, fn, "out of memory");
        }
        o->sbuf = packed;
        if (rpacked) {
            o->rbuf = rpacked;
            o->ubuf = raddr;
            o->count = rcount;
            o->dtype = rdt;
            o->spread = spread;
            px_mpi_dt_retain(rdt);
        }
        x.snd = &o->snd;
        x.res = &o->res;
    }
    x.rdst = rd ? dst : NULL;
    if (spread) {
        px_rma_spread_t r = {.x = &x, .sz = (size_t)bb->size, .ext = unit};
        rc = px_rma_blocks(td, tcount, px_rma_spread_blk, &r);
        if (!rc)
            rc = px_rma_spread_run(&r);
    } else {
        rc = px_rma_blocks(td, tcount, px_rma_xfer_blk, &x);
    }
    px_rma_op_end(o, rc);
    if (rc)
        return px_mpi_win_error(w, rc, fn, "cannot reach rank %d", target);
    return request ? px_rma_req(w, o, request, fn) : MPI_SUCCESS;
}

PX_PMPI(MPI_Accumulate)
(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
 MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return px_rma_acc(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                      target_rank, target_disp, target_count, target_datatype, op, win, NULL,
                      "MPI_Accumulate");
}
PX_WEAK(MPI_Accumulate)

PX_PMPI(MPI_Get_accumulate)
(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
 int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
 int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    if (result_datatype == MPI_DATATYPE_NULL)
        return px_mpi_error(NULL, MPI_ERR_TYPE, "MPI_Get_accumulate", "null result datatype");
    return px_rma_acc(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                      result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                      win, NULL, "MPI_Get_accumulate");
}
PX_WEAK(MPI_Get_accumulate)

PX_PMPI(MPI_Raccumulate)
(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
 MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
 MPI_Request *request)
{
    PX_CS_ENTER();
    int rc = px_rma_passive(win, target_rank, request, "MPI_Raccumulate");
    if (rc)
        return rc;
    return px_rma_acc(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                      target_rank, target_disp, target_count, target_datatype, op, win, request,
                      "MPI_Raccumulate");
}
PX_WEAK(MPI_Raccumulate)

PX_PMPI(MPI_Rget_accumulate)
(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
 int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
 int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    PX_CS_ENTER();
    int rc = px_rma_passive(win, target_rank, request, "MPI_Rget_accumulate");
    if (rc)
        return rc;
    if (result_datatype == MPI_DATATYPE_NULL)
        return px_mpi_error(NULL, MPI_ERR_TYPE, "MPI_Rget_accumulate", "null result datatype");
    return px_rma_acc(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                      result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                      win, request, "MPI_Rget_accumulate");
}
PX_WEAK(MPI_Rget_accumulate)

PX_PMPI(MPI_Fetch_and_op)
(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
 MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    return px_rma_acc(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp,
                      1, datatype, op, win, NULL, "MPI_Fetch_and_op");
}
PX_WEAK(MPI_Fetch_and_op)

PX_PMPI(MPI_Compare_and_swap)
(const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype,
 int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Compare_and_swap";
    PX_GET_WIN(w, win, fn);
    /* integer, logical, multi-language or byte types (MPI-4.0 12.3.4); and
     * MPI_CHAR, compared as a byte, as MPICH allows */
    const px_dtype_builtin_t *b = px_mpi_dtype_builtin(datatype);
    if (!b || !b->size ||
        (px_mpi_op_builtin_check(MPI_BAND, datatype) != MPI_SUCCESS &&
         px_mpi_op_builtin_check(MPI_LAND, datatype) != MPI_SUCCESS && datatype != MPI_CHAR))
        return px_mpi_win_error(
            w, MPI_ERR_TYPE, fn,
            "compare-and-swap needs a predefined integer, logical or byte type");
    px_mpi_dt_t *td = NULL;
    uint64_t base = 0;
    int rc = px_rma_check(w, target_rank, target_disp, 1, datatype, &td, &base, fn);
    if (rc == PX_RMA_PROC_NULL)
        return MPI_SUCCESS;
    if (rc)
        return rc;
    if (!origin_addr || !compare_addr || !result_addr)
        return px_mpi_win_error(w, MPI_ERR_BUFFER, fn, "null buffer");
    size_t n = (size_t)b->size;
    if (w->direct) {
        char *p = px_rma_part(w, target_rank) + base;
        px_rma_acc_lock(w, target_rank);
        memcpy(result_addr, p, n);
        if (!memcmp(p, compare_addr, n))
            memcpy(p, origin_addr, n);
        px_rma_acc_unlock(w, target_rank);
        return MPI_SUCCESS;
    }
    px_rma_op_t *op = px_rma_op_new(w, result_addr, n);
    if (!op || !(op->sbuf = malloc(2 * n))) {
        if (op)
            px_proto_rma_req_issued(&op->snd);
        return px_mpi_win_error(w, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    memcpy(op->sbuf, compare_addr, n);
    memcpy((char *)op->sbuf + n, origin_addr, n);
    px_status_t st =
        px_proto_rma_acc(w->pw, target_rank, base, op->sbuf, 2 * n, 2 * n, (uint32_t)MPI_REPLACE,
                         (uint32_t)datatype, PX_RMA_CAS, &op->snd, &op->res, 0);
    px_proto_rma_req_issued(&op->snd);
    if (st < 0)
        return px_mpi_win_error(w, px_mpi_status_to_class(st), fn, "cannot reach rank %d",
                                target_rank);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Compare_and_swap)
