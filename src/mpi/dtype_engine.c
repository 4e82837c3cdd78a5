/* Derived datatype engine: flattening, bounds, reference counts and the
 * pack/unpack loops that point-to-point uses for non-contiguous types. */
#include "dtype_engine.h"

#include <stdlib.h>

extern px_htab_t px_mpi_dt_tab;

/* ---------- views ---------- */

MPI_Aint px_dt_basic_align(MPI_Datatype t)
{
    const px_dtype_builtin_t *b = px_mpi_dtype_builtin(t);
    if (!b || b->size <= 0)
        return 1;
    MPI_Aint a = b->kind == PX_DTK_COMPLEX ? b->size / 2 : b->size;
    if (a > 16)
        a = 16;
    /* sizes that are not powers of two align to the largest power dividing them */
    while (a & (a - 1))
        a &= a - 1;
    return a ? a : 1;
}

static void px_dt_view_builtin(const px_dtype_builtin_t *b, px_dt_view_t *v)
{
    memset(v, 0, sizeof(*v));
    v->size = b->size;
    v->lb = b->lb;
    v->extent = b->extent;
    v->ub = b->lb + b->extent;
    v->true_lb = b->true_lb;
    v->true_ub = b->true_lb + b->true_extent;
    v->is_lb = b->handle == MPI_LB;
    v->is_ub = b->handle == MPI_UB;
    v->runs = v->local;
    v->elem = b->size > 0 ? b->handle : MPI_DATATYPE_NULL;
    if (b->is_pair) {
        v->local[0] = (px_dt_run_t){0, 1, b->pair_first};
        v->local[1] = (px_dt_run_t){b->second_offset, 1, b->pair_second};
        v->nruns = 2;
        MPI_Aint a1 = px_dt_basic_align(b->pair_first), a2 = px_dt_basic_align(b->pair_second);
        v->align = a1 > a2 ? a1 : a2;
    } else if (b->size > 0) {
        v->local[0] = (px_dt_run_t){0, 1, b->handle};
        v->nruns = 1;
        v->align = px_dt_basic_align(b->handle);
    } else {
        v->nruns = 0;
        v->align = 1;
    }
}

void px_dt_view_obj(const px_dt_obj_t *o, px_dt_view_t *v)
{
    memset(v, 0, sizeof(*v));
    v->size = o->d.size;
    v->lb = o->d.lb;
    v->extent = o->d.extent;
    v->ub = o->ub;
    v->true_lb = o->d.true_lb;
    v->true_ub = o->true_ub;
    v->align = o->align;
    v->mark_lb = o->mark_lb;
    v->mark_ub = o->mark_ub;
    v->elem = o->elem;
    v->runs = o->runs;
    v->nruns = o->nruns;
}

int px_dt_view_of(MPI_Datatype t, px_dt_view_t *v)
{
    const px_dtype_builtin_t *b = px_mpi_dtype_builtin(t);
    if (b) {
        px_dt_view_builtin(b, v);
        return MPI_SUCCESS;
    }
    px_dt_obj_t *o = px_dt_obj(px_mpi_dt_get(t));
    if (!o || o->user_freed)
        return MPI_ERR_TYPE;
    px_dt_view_obj(o, v);
    return MPI_SUCCESS;
}

/* ---------- building ---------- */

static inline MPI_Aint px_dt_bsize(MPI_Datatype t) { return px_mpi_dtype_builtin(t)->size; }

static void px_dt_build_run(px_dt_builder_t *b, MPI_Aint off, MPI_Aint n, MPI_Datatype basic)
{
    if (n <= 0)
        return;
    if (b->nruns) {
        px_dt_run_t *l = &b->runs[b->nruns - 1];
        if (l->basic == basic && l->off + l->n * px_dt_bsize(basic) == off) {
            l->n += n;
            return;
        }
    }
    if (b->nruns == b->cap) {
        MPI_Aint cap = b->cap ? b->cap * 2 : 16;
        px_dt_run_t *r = realloc(b->runs, sizeof(*r) * (size_t)cap);
        if (!r) {
            b->nomem = 1;
            return;
        }
        b->runs = r;
        b->cap = cap;
    }
    b->runs[b->nruns++] = (px_dt_run_t){off, n, basic};
}

#define PX_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PX_MAX(a, b) ((a) > (b) ? (a) : (b))

void px_dt_build_add(px_dt_builder_t *b, const px_dt_view_t *v, MPI_Aint count, MPI_Aint disp)
{
    if (count <= 0 || b->nomem)
        return;
    if (v->is_lb) {
        b->elb = b->have_elb ? PX_MIN(b->elb, disp) : disp;
        b->have_elb = 1;
        return;
    }
    if (v->is_ub) {
        b->eub = b->have_eub ? PX_MAX(b->eub, disp) : disp;
        b->have_eub = 1;
        return;
    }
    MPI_Aint last = disp + (count - 1) * v->extent;
    MPI_Aint lo = PX_MIN(disp, last), hi = PX_MAX(disp, last);
    /* a type without data or markers has no bounds to contribute */
    if (v->size > 0 || v->mark_lb || v->mark_ub) {
        MPI_Aint l = v->lb + lo, u = v->ub + hi;
        if (v->mark_lb) {
            b->elb = b->have_elb ? PX_MIN(b->elb, l) : l;
            b->have_elb = 1;
        } else {
            b->nlb = b->have_nlb ? PX_MIN(b->nlb, l) : l;
            b->have_nlb = 1;
        }
        if (v->mark_ub) {
            b->eub = b->have_eub ? PX_MAX(b->eub, u) : u;
            b->have_eub = 1;
        } else {
            b->nub = b->have_nub ? PX_MAX(b->nub, u) : u;
            b->have_nub = 1;
        }
    }
    if (v->size > 0) {
        MPI_Aint l = v->true_lb + lo, u = v->true_ub + hi;
        b->tlb = b->have_true ? PX_MIN(b->tlb, l) : l;
        b->tub = b->have_true ? PX_MAX(b->tub, u) : u;
        b->have_true = 1;
    }
    b->align = PX_MAX(b->align, v->align);
    b->size += count * v->size;
    if (v->size > 0) {
        if (!b->have_elem)
            b->elem = v->elem;
        else if (b->elem != v->elem)
            b->elem = MPI_DATATYPE_NULL;
        b->have_elem = 1;
    }
    if (v->nruns == 1 && v->runs[0].n * px_dt_bsize(v->runs[0].basic) == v->extent) {
        /* dense single-run type: the copies form one run */
        px_dt_build_run(b, v->runs[0].off + disp, v->runs[0].n * count, v->runs[0].basic);
        return;
    }
    for (MPI_Aint k = 0; k < count && !b->nomem; k++) {
        MPI_Aint base = disp + k * v->extent;
        for (MPI_Aint i = 0; i < v->nruns; i++)
            px_dt_build_run(b, v->runs[i].off + base, v->runs[i].n, v->runs[i].basic);
    }
}

static void px_dt_pack_fn(const px_mpi_dt_t *d, MPI_Aint count, const void *src, void *dst);
static void px_dt_unpack_fn(const px_mpi_dt_t *d, MPI_Aint count, const void *src, void *dst);

/* Derives blocks, element counts, contiguity and the fast path from runs. */
static int px_dt_finish_layout(px_dt_obj_t *o)
{
    free(o->blks);
    o->blks = NULL;
    o->nblks = 0;
    MPI_Aint cap = 0, elements = 0;
    o->basic = o->nruns ? o->runs[0].basic : MPI_DATATYPE_NULL;
    for (MPI_Aint i = 0; i < o->nruns; i++) {
        const px_dt_run_t *r = &o->runs[i];
        MPI_Aint len = r->n * px_dt_bsize(r->basic);
        elements += r->n;
        if (r->basic != o->basic)
            o->basic = MPI_DATATYPE_NULL;
        if (o->nblks && o->blks[o->nblks - 1].off + o->blks[o->nblks - 1].len == r->off) {
            o->blks[o->nblks - 1].len += len;
            continue;
        }
        if (o->nblks == cap) {
            cap = cap ? cap * 2 : 8;
            px_dt_blk_t *nb = realloc(o->blks, sizeof(*nb) * (size_t)cap);
            if (!nb)
                return MPI_ERR_NO_MEM;
            o->blks = nb;
        }
        o->blks[o->nblks++] = (px_dt_blk_t){r->off, len};
    }
    o->d.elements = elements;
    o->regular = 0;
    if (o->nblks >= 1) {
        o->regular = 1;
        o->vlen = o->blks[0].len;
        o->vstride = o->nblks > 1 ? o->blks[1].off - o->blks[0].off : 0;
        for (MPI_Aint i = 1; i < o->nblks && o->regular; i++)
            if (o->blks[i].len != o->vlen || o->blks[i].off - o->blks[i - 1].off != o->vstride)
                o->regular = 0;
    }
    o->d.contig = o->d.size == 0 || (o->nblks == 1 && o->blks[0].len == o->d.extent);
    o->d.pack = px_dt_pack_fn;
    o->d.unpack = px_dt_unpack_fn;
    return MPI_SUCCESS;
}

px_dt_obj_t *px_dt_build_finish(px_dt_builder_t *b, int pad_struct)
{
    px_dt_obj_t *o = b->nomem ? NULL : calloc(1, sizeof(*o));
    if (!o) {
        free(b->runs);
        b->runs = NULL;
        return NULL;
    }
    o->refs = 1;
    o->runs = b->runs;
    o->nruns = b->nruns;
    b->runs = NULL;
    o->elem = b->have_elem ? b->elem : MPI_DATATYPE_NULL;
    o->mark_lb = b->have_elb;
    o->mark_ub = b->have_eub;
    MPI_Aint lb = b->have_elb ? b->elb : b->have_nlb ? b->nlb : 0;
    MPI_Aint ub = b->have_eub ? b->eub : b->have_nub ? b->nub : 0;
    o->align = b->align ? b->align : 1;
    if (pad_struct && !b->have_eub && !b->have_elb && o->align > 1 && ub > lb) {
        /* as a C compiler pads a struct to its strictest member */
        MPI_Aint rem = (ub - lb) % o->align;
        if (rem)
            ub += o->align - rem;
    }
    o->d.handle = MPI_DATATYPE_NULL;
    o->d.size = b->size;
    o->d.lb = lb;
    o->ub = ub;
    o->d.extent = ub - lb;
    o->d.true_lb = b->have_true ? b->tlb : 0;
    o->true_ub = b->have_true ? b->tub : 0;
    o->d.true_extent = o->true_ub - o->d.true_lb;
    o->combiner = MPI_COMBINER_NAMED;
    if (px_dt_finish_layout(o) != MPI_SUCCESS) {
        px_dt_obj_release(o);
        return NULL;
    }
    return o;
}

void px_dt_set_bounds(px_dt_obj_t *o, MPI_Aint lb, MPI_Aint extent)
{
    o->d.lb = lb;
    o->d.extent = extent;
    o->ub = lb + extent;
    o->mark_lb = o->mark_ub = 1;
    o->d.contig = o->d.size == 0 || (o->nblks == 1 && o->blks[0].len == o->d.extent);
}

int px_dt_register(px_dt_obj_t *o)
{
    int idx = px_htab_add(&px_mpi_dt_tab, o);
    if (idx < 0)
        return MPI_ERR_NO_MEM;
    o->registered = 1;
    o->urefs = 1;
    o->d.handle = (MPI_Datatype)(PX_DT_DYN | (unsigned)idx);
    return MPI_SUCCESS;
}

int px_dt_set_contents(px_dt_obj_t *o, int combiner, int ni, const int *ints, int na,
                       const MPI_Aint *aints, int nt, const MPI_Datatype *types)
{
    o->combiner = combiner;
    o->ints = ni ? malloc(sizeof(int) * (size_t)ni) : NULL;
    o->aints = na ? malloc(sizeof(MPI_Aint) * (size_t)na) : NULL;
    o->types = nt ? malloc(sizeof(MPI_Datatype) * (size_t)nt) : NULL;
    if ((ni && !o->ints) || (na && !o->aints) || (nt && !o->types))
        return MPI_ERR_NO_MEM;
    o->ni = ni;
    o->na = na;
    if (ni)
        memcpy(o->ints, ints, sizeof(int) * (size_t)ni);
    if (na)
        memcpy(o->aints, aints, sizeof(MPI_Aint) * (size_t)na);
    for (int i = 0; i < nt; i++) {
        o->types[i] = types[i];
        px_dt_obj_t *c = px_dt_obj(px_mpi_dt_get(types[i]));
        if (c)
            px_dt_obj_retain(c);
    }
    o->nt = nt;
    return MPI_SUCCESS;
}

/* Releases the recorded contents (the datatypes they hold). */
static void px_dt_drop_contents(px_dt_obj_t *o)
{
    for (int i = 0; i < o->nt; i++) {
        px_dt_obj_t *c = px_dt_obj(px_mpi_dt_get(o->types[i]));
        if (c)
            px_dt_obj_release(c);
    }
    free(o->ints);
    free(o->aints);
    free(o->types);
    free(o->counts);
    o->ints = NULL;
    o->aints = NULL;
    o->types = NULL;
    o->counts = NULL;
    o->ni = o->na = o->nt = 0;
    o->nc = 0;
}

int px_dt_set_large_contents(px_dt_obj_t *o, int combiner, int ni, const int *ints, MPI_Count nc,
                             const MPI_Count *counts, int nt, const MPI_Datatype *types)
{
    px_dt_drop_contents(o);
    int rc = px_dt_set_contents(o, combiner, ni, ints, 0, NULL, nt, types);
    if (rc != MPI_SUCCESS)
        return rc;
    o->counts = malloc(sizeof(MPI_Count) * (size_t)(nc ? nc : 1));
    if (!o->counts)
        return MPI_ERR_NO_MEM;
    memcpy(o->counts, counts, sizeof(MPI_Count) * (size_t)nc);
    o->nc = nc;
    return MPI_SUCCESS;
}

px_dt_obj_t *px_dt_obj_dup(const px_dt_obj_t *s)
{
    px_dt_obj_t *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    *o = *s;
    o->refs = 1;
    o->user_freed = 0;
    o->registered = 0;
    o->ints = NULL;
    o->aints = NULL;
    o->types = NULL;
    o->counts = NULL;
    o->ni = o->na = o->nt = 0;
    o->nc = 0;
    o->name[0] = 0;
    o->runs = malloc(sizeof(*o->runs) * (size_t)(s->nruns ? s->nruns : 1));
    o->blks = malloc(sizeof(*o->blks) * (size_t)(s->nblks ? s->nblks : 1));
    if (!o->runs || !o->blks) {
        free(o->runs);
        free(o->blks);
        free(o);
        return NULL;
    }
    memcpy(o->runs, s->runs, sizeof(*o->runs) * (size_t)s->nruns);
    memcpy(o->blks, s->blks, sizeof(*o->blks) * (size_t)s->nblks);
    return o;
}

/* ---------- lifetime ---------- */

void px_dt_obj_retain(px_dt_obj_t *o) { o->refs++; }

static void px_dt_destroy(px_dt_obj_t *o)
{
    if (o->registered)
        px_htab_del(&px_mpi_dt_tab, PX_HANDLE_IDX(o->d.handle));
    px_dt_drop_contents(o);
    free(o->runs);
    free(o->blks);
    free(o);
}

void px_dt_obj_release(px_dt_obj_t *o)
{
    if (--o->refs <= 0)
        px_dt_destroy(o);
}

/* MPI_Type_free: the handle goes with the last of the program's references;
 * the object lives on while a request, a window operation, a schedule or
 * another type still holds it (px_mpi_dt_retain). */
void px_dt_user_free(px_dt_obj_t *o)
{
    if (--o->urefs <= 0) {
        o->user_freed = 1;
        o->saved_committed = o->d.committed;
        o->d.committed = 0; /* new communication on the stale handle fails */
    }
    px_dt_obj_release(o);
}

void px_mpi_dt_retain(MPI_Datatype dt)
{
    px_dt_obj_t *o = px_dt_obj(px_mpi_dt_get(dt));
    if (o)
        px_dt_obj_retain(o);
}

void px_mpi_dt_release(MPI_Datatype dt)
{
    px_dt_obj_t *o = px_dt_obj(px_mpi_dt_get(dt));
    if (o)
        px_dt_obj_release(o);
}

/* ---------- pack / unpack ---------- */

/* Constant-size copies let the compiler emit plain loads and stores; four
 * per iteration keep several loads in flight. */
#define PX_DT_GATHER(L)                                                                            \
    do {                                                                                           \
        MPI_Aint j = 0;                                                                            \
        for (; j + 4 <= n; j += 4, q += 4 * stride, p += 4 * (L)) {                                \
            memcpy(p, q, (L));                                                                     \
            memcpy(p + (L), q + stride, (L));                                                      \
            memcpy(p + 2 * (L), q + 2 * stride, (L));                                              \
            memcpy(p + 3 * (L), q + 3 * stride, (L));                                              \
        }                                                                                          \
        for (; j < n; j++, q += stride, p += (L))                                                  \
            memcpy(p, q, (L));                                                                     \
    } while (0)
#define PX_DT_SCATTER(L)                                                                           \
    do {                                                                                           \
        MPI_Aint j = 0;                                                                            \
        for (; j + 4 <= n; j += 4, q += 4 * stride, p += 4 * (L)) {                                \
            memcpy(q, p, (L));                                                                     \
            memcpy(q + stride, p + (L), (L));                                                      \
            memcpy(q + 2 * stride, p + 2 * (L), (L));                                              \
            memcpy(q + 3 * stride, p + 3 * (L), (L));                                              \
        }                                                                                          \
        for (; j < n; j++, q += stride, p += (L))                                                  \
            memcpy(q, p, (L));                                                                     \
    } while (0)

static char *px_dt_gather(char *p, const char *q, MPI_Aint n, MPI_Aint len, MPI_Aint stride)
{
    switch (len) {
    case 4:
        PX_DT_GATHER(4);
        break;
    case 8:
        PX_DT_GATHER(8);
        break;
    case 16:
        PX_DT_GATHER(16);
        break;
    default:
        for (MPI_Aint j = 0; j < n; j++, q += stride, p += len)
            memcpy(p, q, (size_t)len);
    }
    return p;
}

static const char *px_dt_scatter(const char *p, char *q, MPI_Aint n, MPI_Aint len, MPI_Aint stride)
{
    switch (len) {
    case 4:
        PX_DT_SCATTER(4);
        break;
    case 8:
        PX_DT_SCATTER(8);
        break;
    case 16:
        PX_DT_SCATTER(16);
        break;
    default:
        for (MPI_Aint j = 0; j < n; j++, q += stride, p += len)
            memcpy(q, p, (size_t)len);
    }
    return p;
}

static void px_dt_pack_fn(const px_mpi_dt_t *d, MPI_Aint count, const void *src, void *dst)
{
    const px_dt_obj_t *o = (const px_dt_obj_t *)d;
    char *p = dst;
    /* MPI_BOTTOM plus absolute displacements: integer arithmetic, not NULL + x */
    uintptr_t base = (uintptr_t)src;
    for (MPI_Aint i = 0; i < count; i++, base += (uintptr_t)o->d.extent) {
        if (o->regular) {
            p = px_dt_gather(p, (const char *)(base + (uintptr_t)o->blks[0].off), o->nblks, o->vlen,
                             o->vstride);
            continue;
        }
        for (MPI_Aint k = 0; k < o->nblks; k++) {
            memcpy(p, (const char *)(base + (uintptr_t)o->blks[k].off), (size_t)o->blks[k].len);
            p += o->blks[k].len;
        }
    }
}

static void px_dt_unpack_fn(const px_mpi_dt_t *d, MPI_Aint count, const void *src, void *dst)
{
    const px_dt_obj_t *o = (const px_dt_obj_t *)d;
    const char *p = src;
    uintptr_t base = (uintptr_t)dst;
    for (MPI_Aint i = 0; i < count; i++, base += (uintptr_t)o->d.extent) {
        if (o->regular) {
            p = px_dt_scatter(p, (char *)(base + (uintptr_t)o->blks[0].off), o->nblks, o->vlen,
                              o->vstride);
            continue;
        }
        for (MPI_Aint k = 0; k < o->nblks; k++) {
            memcpy((char *)(base + (uintptr_t)o->blks[k].off), p, (size_t)o->blks[k].len);
            p += o->blks[k].len;
        }
    }
}

void px_mpi_dt_unpack_bytes(const px_mpi_dt_t *d, MPI_Count bytes, const void *src, void *dst)
{
    if (d->size <= 0 || bytes <= 0)
        return;
    MPI_Aint whole = (MPI_Aint)(bytes / d->size), rest = (MPI_Aint)(bytes % d->size);
    if (d->contig)
        memcpy((char *)dst + d->true_lb, src, (size_t)bytes);
    else if (whole)
        d->unpack(d, whole, src, dst);
    if (!rest || d->contig)
        return;
    const char *p = (const char *)src + whole * d->size;
    uintptr_t base = (uintptr_t)dst + (uintptr_t)(whole * d->extent);
    const px_dt_obj_t *o = px_dt_obj(d);
    if (!o) { /* pair types: value first, then the index */
        MPI_Aint f = px_mpi_dtype_builtin(d->b->pair_first)->size;
        memcpy((char *)base, p, (size_t)PX_MIN(rest, f));
        if (rest > f)
            memcpy((char *)base + d->b->second_offset, p + f, (size_t)(rest - f));
        return;
    }
    for (MPI_Aint k = 0; k < o->nblks && rest > 0; k++) {
        MPI_Aint len = PX_MIN(rest, o->blks[k].len);
        memcpy((char *)(base + (uintptr_t)o->blks[k].off), p, (size_t)len);
        p += len;
        rest -= len;
    }
}

MPI_Count px_mpi_dt_count_elements(const px_mpi_dt_t *d, MPI_Count bytes)
{
    if (d->size <= 0)
        return 0;
    MPI_Count whole = bytes / d->size, rest = bytes % d->size;
    MPI_Count n = whole * d->elements;
    if (!rest)
        return n;
    px_dt_view_t v;
    const px_dt_obj_t *o = px_dt_obj(d);
    if (o)
        px_dt_view_obj(o, &v);
    else
        px_dt_view_builtin(d->b, &v);
    for (MPI_Aint i = 0; i < v.nruns && rest > 0; i++) {
        MPI_Aint bs = px_dt_bsize(v.runs[i].basic);
        MPI_Count len = (MPI_Count)v.runs[i].n * bs;
        if (rest >= len) {
            n += v.runs[i].n;
            rest -= len;
        } else {
            n += rest / bs;
            rest %= bs;
            break;
        }
    }
    return rest ? MPI_UNDEFINED : n;
}
