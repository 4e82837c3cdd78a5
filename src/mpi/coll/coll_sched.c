/* Schedule engine: a collective is a list of rounds; each round runs its
 * local steps (copy, pack, reduce) and posts its transfers, and the next
 * round starts once those transfers complete. Blocking collectives run the
 * schedule to completion; nonblocking ones wrap it in a request whose poll
 * advances it, so it progresses with the engine. */
#include "coll_impl.h"
#include "../dtype_engine.h"
#include "../../util/scratch.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Finished schedules are kept for reuse (the library is not entered by
 * two threads at once); a few cover every collective in flight at a time
 * in most programs. */
static px_coll_sched_t *px_sched_pool;
static int px_sched_pooled;
#define PX_SCHED_POOL_MAX 8

px_coll_sched_t *px_coll_sched_new(px_mpi_comm_t *c)
{
    if (c->coll_tag_next) { /* the tag a persistent collective took at its init */
        int tag = c->coll_tag_next - 1;
        c->coll_tag_next = 0;
        return px_coll_sched_new_tag(c, tag);
    }
    /* Collectives start in the same order everywhere (MPI requires it), so
     * a per-communicator sequence keeps concurrent ones apart. */
    px_coll_sched_t *s = px_coll_sched_new_tag(c, c->coll_tag & 0x3fffffff);
    if (s)
        c->coll_tag = (c->coll_tag + 1) & 0x3fffffff;
    return s;
}

px_coll_sched_t *px_coll_sched_new_tag(px_mpi_comm_t *c, int tag)
{
    px_coll_sched_t *s = px_sched_pool;
    if (s) {
        px_sched_pool = s->next_free;
        px_sched_pooled--;
    } else if (!(s = malloc(sizeof(*s)))) {
        return NULL;
    }
    memset(s, 0, offsetof(px_coll_sched_t, steps_in));
    s->next_free = NULL;
    s->comm = c;
    c->refs++;
    s->tag = tag;
    s->steps = s->steps_in;
    s->scap = PX_COLL_SCHED_INLINE;
    s->rounds = s->rounds_in;
    s->rcap = PX_COLL_SCHED_INLINE;
    s->reqs = s->reqs_in;
    s->qcap = PX_COLL_SCHED_INLINE;
    s->rounds[0] = 0;
    s->nrounds = 1;
    return s;
}

int px_coll_sched_keep(px_coll_sched_t *s, const px_coll_args_t *a, int n)
{
    int k = 3 + (a->stypes ? n : 0) + (a->rtypes ? n : 0);
    MPI_Datatype *t = malloc(sizeof(*t) * (size_t)k);
    if (!t)
        return MPI_ERR_NO_MEM;
    k = 0;
    t[k++] = a->stype;
    t[k++] = a->rtype;
    t[k++] = a->dt;
    for (int i = 0; a->stypes && i < n; i++)
        t[k++] = a->stypes[i];
    for (int i = 0; a->rtypes && i < n; i++)
        t[k++] = a->rtypes[i];
    for (int i = 0; i < k; i++)
        if (t[i] && t[i] != MPI_DATATYPE_NULL)
            px_mpi_dt_retain(t[i]);
    s->kept = t;
    s->nkept = k;
    s->kept_op = a->op;
    px_mpi_op_retain(a->op); /* nothing for predefined ones (or none) */
    return MPI_SUCCESS;
}

void px_coll_sched_free(px_coll_sched_t *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nkept; i++)
        if (s->kept[i] && s->kept[i] != MPI_DATATYPE_NULL)
            px_mpi_dt_release(s->kept[i]);
    free(s->kept);
    px_mpi_op_release(s->kept_op);
    for (int i = 0; i < s->nreqs; i++) {
        /* only on error paths: wait so no transfer writes freed memory */
        px_mpi_req_wait(s->reqs[i]);
        px_mpi_req_complete(s->reqs[i], MPI_STATUS_IGNORE);
        px_mpi_req_free(s->reqs[i]);
    }
    for (int i = 0; i < s->nmem; i++)
        px_scratch_put(s->mem[i]);
    free(s->mem);
    if (s->reqs != s->reqs_in)
        free(s->reqs);
    if (s->steps != s->steps_in)
        free(s->steps);
    if (s->rounds != s->rounds_in)
        free(s->rounds);
    px_mpi_comm_release(s->comm);
    if (px_sched_pooled < PX_SCHED_POOL_MAX) {
        s->next_free = px_sched_pool;
        px_sched_pool = s;
        px_sched_pooled++;
    } else {
        free(s);
    }
}

/* Grows *arr to hold `need` elements; an array still in the schedule's
 * inline room (inl) is copied out rather than reallocated. */
static int px_grow(void **arr, int *cap, int need, size_t elem, void *inl)
{
    if (need <= *cap)
        return 0;
    int nc = *cap ? *cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    void *p;
    if (*arr == inl && inl) {
        p = malloc((size_t)nc * elem);
        if (p)
            memcpy(p, inl, (size_t)*cap * elem);
    } else {
        p = realloc(*arr, (size_t)nc * elem);
    }
    if (!p)
        return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

void px_coll_sched_round(px_coll_sched_t *s)
{
    if (s->rounds[s->nrounds - 1] == s->nsteps)
        return; /* current round still empty */
    if (px_grow((void **)&s->rounds, &s->rcap, s->nrounds + 1, sizeof(int), s->rounds_in)) {
        s->err = MPI_ERR_NO_MEM;
        return;
    }
    s->rounds[s->nrounds++] = s->nsteps;
}

static void px_sched_add(px_coll_sched_t *s, px_coll_step_t st)
{
    if (px_grow((void **)&s->steps, &s->scap, s->nsteps + 1, sizeof(st), s->steps_in)) {
        s->err = MPI_ERR_NO_MEM;
        return;
    }
    s->steps[s->nsteps++] = st;
}

void px_coll_sched_send(px_coll_sched_t *s, px_mpi_comm_t *c, const void *buf, MPI_Aint count,
                        MPI_Datatype dt, int peer)
{
    px_sched_add(
        s,
        (px_coll_step_t){
            .kind = PX_COLL_STEP_SEND, .c = c, .peer = peer, .src = buf, .count = count, .dt = dt});
}

void px_coll_sched_recv(px_coll_sched_t *s, px_mpi_comm_t *c, void *buf, MPI_Aint count,
                        MPI_Datatype dt, int peer)
{
    px_sched_add(
        s,
        (px_coll_step_t){
            .kind = PX_COLL_STEP_RECV, .c = c, .peer = peer, .dst = buf, .count = count, .dt = dt});
}

void px_coll_sched_copy(px_coll_sched_t *s, const void *src, void *dst, size_t bytes)
{
    if (bytes && src != dst)
        px_sched_add(
            s, (px_coll_step_t){
                   .kind = PX_COLL_STEP_COPY, .src = src, .dst = dst, .count = (MPI_Aint)bytes});
}

void px_coll_sched_reduce(px_coll_sched_t *s, const void *in, void *inout, MPI_Aint count,
                          MPI_Datatype dt, MPI_Op op)
{
    if (count)
        px_sched_add(s, (px_coll_step_t){.kind = PX_COLL_STEP_REDUCE,
                                         .src = in,
                                         .dst = inout,
                                         .count = count,
                                         .dt = dt,
                                         .op = op});
}

void px_coll_sched_pack(px_coll_sched_t *s, const void *src, MPI_Aint count, MPI_Datatype dt,
                        void *dst)
{
    if (count)
        px_sched_add(
            s, (px_coll_step_t){
                   .kind = PX_COLL_STEP_PACK, .src = src, .dst = dst, .count = count, .dt = dt});
}

void px_coll_sched_unpack(px_coll_sched_t *s, const void *src, MPI_Aint count, MPI_Datatype dt,
                          void *dst)
{
    if (count)
        px_sched_add(
            s, (px_coll_step_t){
                   .kind = PX_COLL_STEP_UNPACK, .src = src, .dst = dst, .count = count, .dt = dt});
}

void *px_coll_sched_alloc(px_coll_sched_t *s, size_t bytes)
{
    void *p = px_scratch_get(bytes);
    if (!p || px_grow((void **)&s->mem, &s->mcap, s->nmem + 1, sizeof(void *), NULL)) {
        px_scratch_put(p);
        s->err = MPI_ERR_NO_MEM;
        return NULL;
    }
    s->mem[s->nmem++] = p;
    return p;
}

void *px_coll_tmp_items(px_coll_sched_t *s, MPI_Datatype dt, MPI_Aint count)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    char *p = px_coll_sched_alloc(s, px_coll_span(d, count));
    return p ? p - d->true_lb : NULL;
}

/* A non-contiguous datatype goes as its items, so that only the bytes of
 * its type map reach the receiver's buffer (the standard leaves the bytes
 * between them alone); a contiguous one as the bytes of its span. */
void px_coll_send_items(px_coll_sched_t *s, px_mpi_comm_t *c, const void *buf, MPI_Aint first,
                        MPI_Aint count, MPI_Datatype dt, int peer)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    if (!d->contig) {
        px_coll_sched_send(s, c, (const char *)buf + first * d->extent, count, dt, peer);
        return;
    }
    px_coll_sched_send(s, c, (const char *)buf + d->true_lb + first * d->extent,
                       (MPI_Aint)px_coll_span(d, count), MPI_BYTE, peer);
}

void px_coll_recv_items(px_coll_sched_t *s, px_mpi_comm_t *c, void *buf, MPI_Aint first,
                        MPI_Aint count, MPI_Datatype dt, int peer)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    if (!d->contig) {
        px_coll_sched_recv(s, c, (char *)buf + first * d->extent, count, dt, peer);
        return;
    }
    px_coll_sched_recv(s, c, (char *)buf + d->true_lb + first * d->extent,
                       (MPI_Aint)px_coll_span(d, count), MPI_BYTE, peer);
}

void px_coll_copy_items(px_coll_sched_t *s, const void *src, void *dst, MPI_Aint first,
                        MPI_Aint count, MPI_Datatype dt)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    if (!d->contig) { /* the type map only: packed, then unpacked */
        if (src == dst || !count || !d->size)
            return;
        void *tmp = px_coll_sched_alloc(s, (size_t)count * (size_t)d->size);
        if (!tmp)
            return;
        MPI_Aint off = first * d->extent;
        px_coll_sched_pack(s, (const char *)src + off, count, dt, tmp);
        px_coll_sched_unpack(s, tmp, count, dt, (char *)dst + off);
        return;
    }
    MPI_Aint off = d->true_lb + first * d->extent;
    px_coll_sched_copy(s, (const char *)src + off, (char *)dst + off, px_coll_span(d, count));
}

/* Local work between progress passes while transfers of the round wait. */
#define PX_SCHED_SLICE (256 * 1024)

/* memmove; sliced: in slices with a progress pass before each but the
 * first, so that the round's transfers go on meanwhile. */
static void px_sched_copy(const char *src, char *dst, size_t bytes, int sliced)
{
    if (!sliced || bytes <= PX_SCHED_SLICE || (src < dst + bytes && dst < src + bytes)) {
        memmove(dst, src, bytes);
        return;
    }
    for (size_t off = 0; off < bytes; off += PX_SCHED_SLICE) {
        if (off)
            px_proto_progress();
        memcpy(dst + off, src + off, bytes - off < PX_SCHED_SLICE ? bytes - off : PX_SCHED_SLICE);
    }
}

static void px_step_pack(const px_coll_step_t *st, int unpack, int sliced)
{
    px_mpi_dt_t *d = px_mpi_dt_get(st->dt);
    if (d->contig) {
        size_t bytes = (size_t)st->count * (size_t)d->size;
        if (unpack)
            px_sched_copy(st->src, (char *)st->dst + d->true_lb, bytes, sliced);
        else
            px_sched_copy((const char *)st->src + d->true_lb, st->dst, bytes, sliced);
    } else if (unpack) {
        d->unpack(d, st->count, st->src, st->dst);
    } else {
        d->pack(d, st->count, st->src, st->dst);
    }
}

/* dst = src op dst; sliced (contiguous types): as px_sched_copy. */
static void px_step_reduce(const px_coll_step_t *st, int sliced)
{
    px_mpi_dt_t *d = px_mpi_dt_get(st->dt);
    MPI_Aint per = d->contig && d->extent > 0 ? PX_SCHED_SLICE / d->extent : 0;
    if (!sliced || per <= 0 || st->count <= per) {
        px_mpi_op_apply(st->op, st->src, st->dst, (int)st->count, st->dt);
        return;
    }
    for (MPI_Aint i = 0; i < st->count; i += per) {
        if (i)
            px_proto_progress();
        px_mpi_op_apply(st->op, (const char *)st->src + i * d->extent,
                        (char *)st->dst + i * d->extent,
                        (int)(st->count - i < per ? st->count - i : per), st->dt);
    }
}

/* Does [lo, hi) meet the count items of dt at p (contig: count bytes)? */
static int px_span_meets(const void *p, MPI_Aint count, MPI_Datatype dt, int contig, uintptr_t lo,
                         uintptr_t hi)
{
    uintptr_t a = (uintptr_t)p, b;
    if (!count)
        return 0;
    if (contig) {
        b = a + (size_t)count;
    } else {
        px_mpi_dt_t *d = px_mpi_dt_get(dt);
        a += (uintptr_t)d->true_lb;
        b = a + px_coll_span(d, count);
    }
    return a < hi && lo < b;
}

/* Does local step st write [lo, hi), or (reads) read it? */
static int px_step_meets(const px_coll_step_t *st, uintptr_t lo, uintptr_t hi, int reads)
{
    switch (st->kind) {
    case PX_COLL_STEP_SEND:
    case PX_COLL_STEP_RECV:
        return 0; /* transfers keep their order among themselves */
    case PX_COLL_STEP_COPY:
        return (reads && px_span_meets(st->src, st->count, 0, 1, lo, hi)) ||
               px_span_meets(st->dst, st->count, 0, 1, lo, hi);
    case PX_COLL_STEP_REDUCE:
        return (reads && px_span_meets(st->src, st->count, st->dt, 0, lo, hi)) ||
               px_span_meets(st->dst, st->count, st->dt, 0, lo, hi);
    default: { /* pack, unpack: items of dt on one side, their bytes on the other */
        MPI_Aint bytes = st->count * px_mpi_dt_get(st->dt)->size;
        int unpack = st->kind == PX_COLL_STEP_UNPACK;
        return (reads &&
                px_span_meets(st->src, unpack ? bytes : st->count, st->dt, unpack, lo, hi)) ||
               px_span_meets(st->dst, unpack ? st->count : bytes, st->dt, !unpack, lo, hi);
    }
    }
}

/* Runs a local step (sliced: see px_sched_copy) or posts a transfer. */
static int px_sched_step(px_coll_sched_t *s, px_coll_step_t *st, int mode, int sliced)
{
    int rc = MPI_SUCCESS;
    px_mpi_req_t *r = NULL;
    switch (st->kind) {
    case PX_COLL_STEP_SEND:
        rc = px_mpi_isend_nohandle(&r, st->src, st->count, st->dt, st->peer, s->tag, st->c,
                                   st->c->ctx + 1, mode);
        break;
    case PX_COLL_STEP_RECV:
        rc = px_mpi_irecv_nohandle(&r, st->dst, st->count, st->dt, st->peer, s->tag, st->c,
                                   st->c->ctx + 1);
        break;
    case PX_COLL_STEP_COPY:
        px_sched_copy(st->src, st->dst, (size_t)st->count, sliced);
        break;
    case PX_COLL_STEP_REDUCE:
        px_step_reduce(st, sliced);
        break;
    case PX_COLL_STEP_PACK:
        px_step_pack(st, 0, sliced);
        break;
    case PX_COLL_STEP_UNPACK:
        px_step_pack(st, 1, sliced);
        break;
    }
    if (rc != MPI_SUCCESS || !r)
        return rc;
    if (px_grow((void **)&s->reqs, &s->qcap, s->nreqs + 1, sizeof(*s->reqs), s->reqs_in)) {
        px_mpi_req_wait(r);
        px_mpi_req_free(r);
        return MPI_ERR_NO_MEM;
    }
    s->reqs[s->nreqs++] = r;
    return MPI_SUCCESS;
}

/* Rounds of more steps than this post their transfers in the builder's order. */
#define PX_SCHED_EARLY_MAX 64
/* Local work of at least this many bytes gets a progress pass before it. */
#define PX_SCHED_EARLY_POLL 65536

/* Bytes a local step reads (0 for transfers). */
static size_t px_step_local_bytes(const px_coll_step_t *st)
{
    switch (st->kind) {
    case PX_COLL_STEP_SEND:
    case PX_COLL_STEP_RECV:
        return 0;
    case PX_COLL_STEP_COPY:
        return (size_t)st->count;
    default:
        return (size_t)st->count * (size_t)px_mpi_dt_get(st->dt)->size;
    }
}

/* A round's transfers are posted before its local steps (copies, packs,
 * reductions), in their order, up to the first that a local step before it
 * would change (its buffer written, or a receive's buffer read), and large
 * local steps then run in slices with a progress pass before each: the
 * clear-to-send of a receive leaves at once instead of after the copy,
 * which a sender otherwise waits for (a gather root's copy of its own
 * block). 1: slice the local steps. */
static int px_sched_post_early(px_coll_sched_t *s, int first, int end, int mode)
{
    size_t local = 0;
    int early = 0;
    for (int i = first; i < end; i++)
        local += px_step_local_bytes(&s->steps[i]);
    if (!local)
        return 0;
    for (int i = first; i < end && s->err == MPI_SUCCESS; i++) {
        px_coll_step_t *st = &s->steps[i];
        int recv = st->kind == PX_COLL_STEP_RECV;
        if (!recv && st->kind != PX_COLL_STEP_SEND)
            continue;
        px_mpi_dt_t *d = px_mpi_dt_get(st->dt);
        uintptr_t lo = (uintptr_t)(recv ? st->dst : st->src) + (uintptr_t)d->true_lb;
        uintptr_t hi = lo + px_coll_span(d, st->count);
        int meets = 0;
        for (int j = first; j < i && !meets; j++)
            meets = px_step_meets(&s->steps[j], lo, hi, recv);
        if (meets)
            break; /* and the later transfers wait too, keeping their order */
        st->early = 1;
        early = 1;
        int rc = px_sched_step(s, st, mode, 0);
        if (rc != MPI_SUCCESS)
            s->err = rc;
    }
    if (!early || local < PX_SCHED_EARLY_POLL)
        return 0;
    px_proto_progress();
    return 1;
}

static void px_sched_start_round(px_coll_sched_t *s)
{
    int first = s->rounds[s->cur];
    int end = s->cur + 1 < s->nrounds ? s->rounds[s->cur + 1] : s->nsteps;
    /* A round that only sends (a broadcast's root, a reduction's leaf)
     * waits for nothing but its sends: they may complete once written
     * (PX_RAIL_RELEASE). So may those of a round that also receives, while
     * each rank has a CPU of its own: there the peer's acknowledgement
     * comes behind the peer's own data and, without the release, an
     * exchange waits for it after its receives are done. With ranks
     * sharing cores the copies aside compete with the transfers for the
     * CPU, and the round waits instead; so it does for sends above
     * PX_RNDV_RELEASE_MAX, whose copies cost more than the wait
     * (docs/collectives.md). */
    int mode = PX_PROTO_MODE_RELEASE, recv = 0;
    size_t most = 0; /* the round's largest send */
    for (int i = first; i < end; i++) {
        const px_coll_step_t *st = &s->steps[i];
        if (st->kind == PX_COLL_STEP_RECV) {
            recv = 1;
        } else if (st->kind == PX_COLL_STEP_SEND) {
            size_t b = (size_t)st->count * (size_t)px_mpi_dt_get(st->dt)->size;
            most = b > most ? b : most;
        }
    }
    if (recv && (px_proto_oversubscribed() || most > px_params.rndv_release_max))
        mode = PX_PROTO_MODE_STD;
    int sliced = end - first <= PX_SCHED_EARLY_MAX && px_sched_post_early(s, first, end, mode);
    for (int i = first; i < end && s->err == MPI_SUCCESS; i++) {
        px_coll_step_t *st = &s->steps[i];
        if (st->early) {
            st->early = 0;
            continue;
        }
        int rc = px_sched_step(s, st, mode, sliced);
        if (rc != MPI_SUCCESS)
            s->err = rc;
    }
    s->posted = 1;
}

static int px_coll_sched_step(px_coll_sched_t *s);

int px_coll_sched_progress(px_coll_sched_t *s)
{
    /* posting a round may progress the engine, whose hook polls the
     * schedules under way (px_mpi_req_poll_start): not this one again */
    if (s->busy)
        return 0;
    s->busy = 1;
    int done = px_coll_sched_step(s);
    s->busy = 0;
    return done;
}

static int px_coll_sched_step(px_coll_sched_t *s)
{
    for (;;) {
        if (s->posted) {
            for (int i = 0; i < s->nreqs; i++)
                if (!px_mpi_req_is_done(s->reqs[i]))
                    return 0;
            for (int i = 0; i < s->nreqs; i++) {
                int rc = px_mpi_req_complete(s->reqs[i], MPI_STATUS_IGNORE);
                if (rc != MPI_SUCCESS && s->err == MPI_SUCCESS)
                    s->err = rc;
                px_mpi_req_free(s->reqs[i]);
            }
            s->nreqs = 0;
            s->posted = 0;
            s->cur++;
        }
        if (s->err != MPI_SUCCESS || s->cur >= s->nrounds)
            return 1;
        px_sched_start_round(s);
    }
}

int px_coll_sched_run(px_coll_sched_t *s)
{
    unsigned idle = 0;
    while (!px_coll_sched_progress(s))
        px_proto_wait_step(&idle);
    int rc = s->err;
    px_coll_sched_free(s);
    return rc;
}

int px_coll_sched_run_built(px_coll_sched_t *s, int rc)
{
    if (rc == MPI_SUCCESS)
        rc = s->err;
    if (rc != MPI_SUCCESS) {
        px_coll_sched_free(s);
        return rc;
    }
    return px_coll_sched_run(s);
}

static int px_coll_req_poll(px_mpi_req_t *r)
{
    px_coll_sched_t *s = r->sched;
    if (!s)
        return 1;
    if (!px_coll_sched_progress(s))
        return 0;
    r->st_error = s->err;
    r->sched = NULL;
    px_coll_sched_free(s);
    return 1;
}

int px_coll_sched_start_req(px_coll_sched_t *s, px_mpi_comm_t *c, px_mpi_req_t **req_p)
{
    px_mpi_req_t *r = px_mpi_req_polled(c, px_coll_req_poll, s); /* posts the first round */
    if (!r) {
        px_coll_sched_free(s);
        return MPI_ERR_NO_MEM;
    }
    *req_p = r;
    return MPI_SUCCESS;
}
