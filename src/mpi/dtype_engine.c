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
    v->segs = v->local;
    v->elem = b->size > 0 ? b->handle : MPI_DATATYPE_NULL;
    if (b->is_pair) {
        v->local[0] = (px_dt_seg_t){0, 1, 1, 0, b->pair_first};
        v->local[1] = (px_dt_seg_t){b->second_offset, 1, 1, 0, b->pair_second};
        v->nsegs = v->nruns = 2;
        MPI_Aint a1 = px_dt_basic_align(b->pair_first), a2 = px_dt_basic_align(b->pair_second);
        v->align = a1 > a2 ? a1 : a2;
    } else if (b->size > 0) {
        v->local[0] = (px_dt_seg_t){0, 1, 1, 0, b->handle};
        v->nsegs = v->nruns = 1;
        v->align = px_dt_basic_align(b->handle);
    } else {
        v->nsegs = v->nruns = 0;
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
    v->segs = o->segs;
    v->nsegs = o->nsegs;
    v->nruns = o->nruns;
}

px_dt_run_t *px_dt_runs_expand(const px_dt_view_t *v)
{
    px_dt_run_t *runs = malloc(sizeof(*runs) * (size_t)(v->nruns ? v->nruns : 1)), r;
    MPI_Aint i = 0;
    if (runs)
        for (px_dt_runit_t it = px_dt_runs(v->segs, v->nsegs); px_dt_runit_next(&it, &r);)
            runs[i++] = r;
    return runs;
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

/* Appends g (reps >= 1) to the list *segs of *n (room for *cap), where
 * unit is the size of g's basic type: an entry that continues the last one
 * joins it, as a longer last run (the run is adjacent to the last copy) or
 * as one more copy (the same run again at the entry's stride). 0 when out
 * of memory. */
static int px_dt_seg_push(px_dt_seg_t **segs, MPI_Aint *n, MPI_Aint *cap, px_dt_seg_t g,
                          MPI_Aint unit)
{
    if (g.n <= 0 || g.reps <= 0)
        return 1;
    if (g.reps > 1 && g.stride == g.n * unit) { /* copies that touch: one run */
        g.n *= g.reps;
        g.reps = 1;
    }
    if (g.reps == 1)
        g.stride = 0;
    if (*n) {
        px_dt_seg_t *l = &(*segs)[*n - 1];
        MPI_Aint last = l->off + (l->reps - 1) * l->stride; /* l's last copy */
        if (l->basic == g.basic && last + l->n * unit == g.off) {
            /* g's first run extends l's last copy */
            if (l->reps == 1) {
                l->n += g.n;
            } else {
                l->reps--;
                if (l->reps == 1)
                    l->stride = 0;
                if (!px_dt_seg_push(segs, n, cap, (px_dt_seg_t){last, l->n + g.n, 1, 0, g.basic},
                                    unit))
                    return 0;
            }
            g.off += g.stride;
            if (--g.reps == 0)
                return 1;
            return px_dt_seg_push(segs, n, cap, g, unit);
        }
        if (l->basic == g.basic && l->n == g.n) {
            MPI_Aint st = l->reps == 1 ? g.off - l->off : l->stride;
            if (st != 0 && g.off == last + st && (g.reps == 1 || g.stride == st)) {
                l->stride = st;
                l->reps += g.reps;
                return 1;
            }
        }
    }
    if (*n == *cap) {
        MPI_Aint c = *cap ? *cap * 2 : 8;
        px_dt_seg_t *r = realloc(*segs, sizeof(*r) * (size_t)c);
        if (!r)
            return 0;
        *segs = r;
        *cap = c;
    }
    (*segs)[(*n)++] = g;
    return 1;
}

static void px_dt_build_seg(px_dt_builder_t *b, px_dt_seg_t g)
{
    if (!b->nomem && !px_dt_seg_push(&b->segs, &b->nsegs, &b->cap, g, px_dt_bsize(g.basic)))
        b->nomem = 1;
}

#define PX_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PX_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Bounds, alignment and element type of count copies of v at disp (not
 * the size: the callers add it). */
static void px_dt_build_bounds(px_dt_builder_t *b, const px_dt_view_t *v, MPI_Aint count,
                               MPI_Aint disp)
{
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
    if (v->size > 0) {
        if (!b->have_elem)
            b->elem = v->elem;
        else if (b->elem != v->elem)
            b->elem = MPI_DATATYPE_NULL;
        b->have_elem = 1;
    }
}

/* The runs of count copies of v at disp. */
static void px_dt_build_segs(px_dt_builder_t *b, const px_dt_view_t *v, MPI_Aint count,
                             MPI_Aint disp)
{
    if (v->nsegs == 1) {
        /* one segment: the copies of v are copies of its run */
        px_dt_seg_t g = v->segs[0];
        if (g.reps == 1 || g.reps * g.stride == v->extent) {
            if (g.reps == 1)
                g.stride = v->extent;
            g.off += disp;
            g.reps *= count;
            px_dt_build_seg(b, g);
            return;
        }
    }
    for (MPI_Aint k = 0; k < count && !b->nomem; k++) {
        MPI_Aint base = disp + k * v->extent;
        for (MPI_Aint i = 0; i < v->nsegs; i++) {
            px_dt_seg_t g = v->segs[i];
            g.off += base;
            px_dt_build_seg(b, g);
        }
    }
}

void px_dt_build_add(px_dt_builder_t *b, const px_dt_view_t *v, MPI_Aint count, MPI_Aint disp)
{
    if (count <= 0 || b->nomem)
        return;
    px_dt_build_bounds(b, v, count, disp);
    b->size += count * v->size;
    px_dt_build_segs(b, v, count, disp);
}

void px_dt_build_vector(px_dt_builder_t *b, const px_dt_view_t *v, MPI_Aint count,
                        MPI_Aint blocklen, MPI_Aint stride)
{
    if (count <= 0 || blocklen <= 0 || b->nomem)
        return;
    /* the blocks in between lie within the first and the last */
    px_dt_build_bounds(b, v, blocklen, 0);
    px_dt_build_bounds(b, v, blocklen, (count - 1) * stride);
    b->size += count * blocklen * v->size;
    px_dt_builder_t blk = {0};
    px_dt_build_segs(&blk, v, blocklen, 0);
    if (blk.nomem) {
        b->nomem = 1;
    } else if (blk.nsegs == 1 &&
               (blk.segs[0].reps == 1 || blk.segs[0].reps * blk.segs[0].stride == stride)) {
        /* a block is one run or copies of one, the next block continues them */
        px_dt_seg_t g = blk.segs[0];
        if (g.reps == 1)
            g.stride = stride;
        g.reps *= count;
        px_dt_build_seg(b, g);
    } else {
        for (MPI_Aint k = 0; k < count && !b->nomem; k++)
            for (MPI_Aint i = 0; i < blk.nsegs; i++) {
                px_dt_seg_t g = blk.segs[i];
                g.off += k * stride;
                px_dt_build_seg(b, g);
            }
    }
    free(blk.segs);
}

static void px_dt_pack_fn(const px_mpi_dt_t *d, MPI_Aint count, const void *src, void *dst);
static void px_dt_unpack_fn(const px_mpi_dt_t *d, MPI_Aint count, const void *src, void *dst);

/* No data, or one block as long as the extent. */
static int px_dt_dense(const px_dt_obj_t *o)
{
    return o->d.size == 0 || (o->nblks == 1 && o->blks[0].reps == 1 && o->blks[0].n == o->d.extent);
}

/* Derives blocks, element counts and contiguity from the runs. */
static int px_dt_finish_layout(px_dt_obj_t *o)
{
    free(o->blks);
    o->blks = NULL;
    o->nblks = 0;
    MPI_Aint cap = 0, elements = 0, nruns = 0;
    o->basic = o->nsegs ? o->segs[0].basic : MPI_DATATYPE_NULL;
    for (MPI_Aint i = 0; i < o->nsegs; i++) {
        const px_dt_seg_t *g = &o->segs[i];
        elements += g->n * g->reps;
        nruns += g->reps;
        if (g->basic != o->basic)
            o->basic = MPI_DATATYPE_NULL;
        px_dt_seg_t blk = {g->off, g->n * px_dt_bsize(g->basic), g->reps, g->stride, MPI_BYTE};
        if (!px_dt_seg_push(&o->blks, &o->nblks, &cap, blk, 1))
            return MPI_ERR_NO_MEM;
    }
    o->d.elements = elements;
    o->nruns = nruns;
    o->d.contig =
        o->d.size == 0 || (o->nblks == 1 && o->blks[0].reps == 1 && o->blks[0].n == o->d.extent);
    o->d.pack = px_dt_pack_fn;
    o->d.unpack = px_dt_unpack_fn;
    return MPI_SUCCESS;
}

px_dt_obj_t *px_dt_build_finish(px_dt_builder_t *b, int pad_struct)
{
    px_dt_obj_t *o = b->nomem ? NULL : calloc(1, sizeof(*o));
    if (!o) {
        free(b->segs);
        b->segs = NULL;
        return NULL;
    }
    o->refs = 1;
    o->segs = b->segs;
    o->nsegs = b->nsegs;
    b->segs = NULL;
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
    o->d.contig = px_dt_dense(o);
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
    o->segs = malloc(sizeof(*o->segs) * (size_t)(s->nsegs ? s->nsegs : 1));
    o->blks = malloc(sizeof(*o->blks) * (size_t)(s->nblks ? s->nblks : 1));
    if (!o->segs || !o->blks) {
        free(o->segs);
        free(o->blks);
        free(o);
        return NULL;
    }
    memcpy(o->segs, s->segs, sizeof(*o->segs) * (size_t)s->nsegs);
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
    free(o->segs);
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

/* Largest block copied in line (px_dt_copy_mid) rather than by a call */
#define PX_DT_MID 256

/* A block of 17 to PX_DT_MID bytes: 32-byte copies, the last one ending at
 * its end (overlapping the one before), or two 16-byte ones below 32. */
static inline void px_dt_copy_mid(char *dst, const char *src, MPI_Aint n)
{
    MPI_Aint i = 0;
    for (; i + 32 <= n; i += 32)
        memcpy(dst + i, src + i, 32);
    if (i == n)
        return;
    if (n >= 32) {
        memcpy(dst + n - 32, src + n - 32, 32);
    } else {
        memcpy(dst, src, 16);
        memcpy(dst + n - 16, src + n - 16, 16);
    }
}

static char *px_dt_gather(char *p, const char *q, MPI_Aint n, MPI_Aint len, MPI_Aint stride)
{
    switch (len) {
    case 1:
        PX_DT_GATHER(1);
        break;
    case 2:
        PX_DT_GATHER(2);
        break;
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
        if (len > 16 && len <= PX_DT_MID)
            for (MPI_Aint j = 0; j < n; j++, q += stride, p += len)
                px_dt_copy_mid(p, q, len);
        else
            for (MPI_Aint j = 0; j < n; j++, q += stride, p += len)
                memcpy(p, q, (size_t)len);
    }
    return p;
}

static const char *px_dt_scatter(const char *p, char *q, MPI_Aint n, MPI_Aint len, MPI_Aint stride)
{
    switch (len) {
    case 1:
        PX_DT_SCATTER(1);
        break;
    case 2:
        PX_DT_SCATTER(2);
        break;
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
        if (len > 16 && len <= PX_DT_MID)
            for (MPI_Aint j = 0; j < n; j++, q += stride, p += len)
                px_dt_copy_mid(q, p, len);
        else
            for (MPI_Aint j = 0; j < n; j++, q += stride, p += len)
                memcpy(q, p, (size_t)len);
    }
    return p;
}

/* A single short block, 4 to 16 bytes (an element or two of an indexed
 * type): two copies of 8 (or 4) bytes that overlap where n is less than
 * twice that, in place of a call and a choice of loop. 0: not short. */
static inline int px_dt_copy_short(char *dst, const char *src, MPI_Aint n)
{
    uint64_t a, b;
    uint32_t c, e;
    if (n >= 8 && n <= 16) {
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
        return 1;
    }
    if (n >= 4 && n < 8) {
        memcpy(&c, src, 4);
        memcpy(&e, src + n - 4, 4);
        memcpy(dst, &c, 4);
        memcpy(dst + n - 4, &e, 4);
        return 1;
    }
    return 0;
}

/* Whether count items of o are the copies of one block (a vector of
 * vectors, a resized basic type), and which. */
static int px_dt_items_as_one(const px_dt_obj_t *o, MPI_Aint count, px_dt_seg_t *all)
{
    if (o->nblks != 1)
        return 0;
    *all = o->blks[0];
    if (all->reps == 1)
        all->stride = o->d.extent;
    else if (all->reps * all->stride != o->d.extent)
        return 0;
    all->reps *= count;
    return 1;
}

static void px_dt_pack_fn(const px_mpi_dt_t *d, MPI_Aint count, const void *src, void *dst)
{
    const px_dt_obj_t *o = (const px_dt_obj_t *)d;
    char *p = dst;
    /* MPI_BOTTOM plus absolute displacements: integer arithmetic, not NULL + x */
    uintptr_t base = (uintptr_t)src;
    px_dt_seg_t all;
    if (px_dt_items_as_one(o, count, &all)) {
        px_dt_gather(p, (const char *)(base + (uintptr_t)all.off), all.reps, all.n, all.stride);
        return;
    }
    for (MPI_Aint i = 0; i < count; i++, base += (uintptr_t)o->d.extent)
        for (MPI_Aint k = 0; k < o->nblks; k++) {
            const px_dt_seg_t *g = &o->blks[k];
            const char *q = (const char *)(base + (uintptr_t)g->off);
            if (g->reps == 1 && px_dt_copy_short(p, q, g->n)) {
                p += g->n;
                continue;
            }
            p = px_dt_gather(p, q, g->reps, g->n, g->stride);
        }
}

static void px_dt_unpack_fn(const px_mpi_dt_t *d, MPI_Aint count, const void *src, void *dst)
{
    const px_dt_obj_t *o = (const px_dt_obj_t *)d;
    const char *p = src;
    uintptr_t base = (uintptr_t)dst;
    px_dt_seg_t all;
    if (px_dt_items_as_one(o, count, &all)) {
        px_dt_scatter(p, (char *)(base + (uintptr_t)all.off), all.reps, all.n, all.stride);
        return;
    }
    for (MPI_Aint i = 0; i < count; i++, base += (uintptr_t)o->d.extent)
        for (MPI_Aint k = 0; k < o->nblks; k++) {
            const px_dt_seg_t *g = &o->blks[k];
            char *q = (char *)(base + (uintptr_t)g->off);
            if (g->reps == 1 && px_dt_copy_short(q, p, g->n)) {
                p += g->n;
                continue;
            }
            p = px_dt_scatter(p, q, g->reps, g->n, g->stride);
        }
}

/* Bytes [a, b) of one item's packed form, item at base in the user's
 * layout, its packed form at pk: packed (out) or unpacked. */
static void px_dt_item_range(const px_dt_obj_t *o, uintptr_t base, char *pk, MPI_Aint a, MPI_Aint b,
                             int out)
{
    MPI_Aint pos = 0; /* packed offset of the segment */
    for (MPI_Aint k = 0; k < o->nblks && pos < b; pos += o->blks[k].reps * o->blks[k].n, k++) {
        const px_dt_seg_t *g = &o->blks[k];
        MPI_Aint end = pos + g->reps * g->n;
        if (end <= a)
            continue;
        /* blocks r0 .. r1 - 1 of the segment overlap [a, b) */
        MPI_Aint r0 = a > pos ? (a - pos) / g->n : 0;
        MPI_Aint r1 = b < end ? (b - pos + g->n - 1) / g->n : g->reps;
        for (MPI_Aint r = r0; r < r1;) {
            MPI_Aint s = pos + r * g->n, lo = PX_MAX(s, a), hi = PX_MIN(s + g->n, b);
            char *u = (char *)(base + (uintptr_t)(g->off + r * g->stride));
            if (lo == s && hi == s + g->n) { /* whole blocks up to the last whole one */
                MPI_Aint n = PX_MIN(r1, (b - pos) / g->n) - r;
                if (out)
                    px_dt_gather(pk + s, u, n, g->n, g->stride);
                else
                    px_dt_scatter(pk + s, u, n, g->n, g->stride);
                r += n;
                continue;
            }
            if (out)
                memcpy(pk + lo, u + (lo - s), (size_t)(hi - lo));
            else
                memcpy(u + (lo - s), pk + lo, (size_t)(hi - lo));
            r++;
        }
    }
}

void px_mpi_dt_range(const px_mpi_dt_t *d, void *user, void *packed, size_t from, size_t to,
                     int out)
{
    MPI_Aint size = d->size;
    if (from >= to || size <= 0)
        return;
    if (d->contig) {
        char *u = (char *)user + d->true_lb + from, *p = (char *)packed + from;
        memcpy(out ? p : u, out ? u : p, to - from);
        return;
    }
    const px_dt_obj_t *o = px_dt_obj(d);
    MPI_Aint i = (MPI_Aint)(from / (size_t)size), last = (MPI_Aint)((to - 1) / (size_t)size);
    for (; i <= last; i++) {
        uintptr_t base = (uintptr_t)user + (uintptr_t)(i * d->extent);
        char *pk = (char *)packed + i * size;
        MPI_Aint a = PX_MAX((MPI_Aint)from - i * size, 0);
        MPI_Aint b = PX_MIN((MPI_Aint)to - i * size, size);
        if (a == 0 && b == size) { /* whole items: the type's own loops */
            MPI_Aint n = (MPI_Aint)(to / (size_t)size) - i;
            if (out)
                d->pack(d, n, (const void *)base, pk);
            else
                d->unpack(d, n, pk, (void *)base);
            i += n - 1;
        } else if (o) {
            px_dt_item_range(o, base, pk, a, b, out);
        } else { /* a pair type: through one item's packed copy */
            char tmp[64];
            d->pack(d, 1, (const void *)base, tmp);
            if (out) {
                memcpy(pk + a, tmp + a, (size_t)(b - a));
            } else {
                memcpy(tmp + a, pk + a, (size_t)(b - a));
                d->unpack(d, 1, tmp, (void *)base);
            }
        }
    }
}

void px_mpi_dt_unpack_bytes(const px_mpi_dt_t *d, MPI_Count bytes, const void *src, void *dst)
{
    if (bytes > 0)
        px_mpi_dt_range(d, dst, (void *)src, 0, (size_t)bytes, 0);
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
    for (MPI_Aint i = 0; i < v.nsegs && rest > 0; i++) {
        const px_dt_seg_t *g = &v.segs[i];
        MPI_Aint bs = px_dt_bsize(g->basic);
        MPI_Count len = (MPI_Count)g->n * bs, whole_runs = PX_MIN(g->reps, rest / len);
        n += whole_runs * g->n;
        rest -= whole_runs * len;
        if (whole_runs < g->reps && rest > 0) {
            n += rest / bs;
            rest %= bs;
            break;
        }
    }
    return rest ? MPI_UNDEFINED : n;
}
