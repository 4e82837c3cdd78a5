/* File views (displacement, etype, filetype) flattened to blocks in the
 * file representation, and the file ranges of an access. */
#include "io_impl.h"
#include "../dtype_engine.h"

#include <stdlib.h>
#include <strings.h>

/* ---------- views ---------- */

void px_io_view_free(px_io_view_t *v)
{
    /* a view never set holds MPI_DATATYPE_NULL (or zeros) */
    if (v->etype && v->etype != MPI_DATATYPE_NULL && !px_mpi_dtype_is_builtin(v->etype))
        PMPI_Type_free(&v->etype);
    if (v->filetype && v->filetype != MPI_DATATYPE_NULL && !px_mpi_dtype_is_builtin(v->filetype))
        PMPI_Type_free(&v->filetype);
    free(v->boff);
    free(v->blen);
    free(v->bpre);
    memset(v, 0, sizeof(*v));
    v->etype = v->filetype = MPI_DATATYPE_NULL;
}

static int px_io_type_copy(MPI_Datatype t, MPI_Datatype *out)
{
    if (px_mpi_dtype_is_builtin(t)) {
        *out = t;
        return MPI_SUCCESS;
    }
    return PMPI_Type_dup(t, out);
}

static int px_io_type_usable(MPI_Datatype t)
{
    px_mpi_dt_t *d = px_mpi_dt_get(t);
    px_dt_obj_t *o = px_dt_obj(d);
    return d && d->committed && !(o && o->user_freed);
}

/* The blocks of filetype t in type-map order, adjacent ones merged; checks
 * what the standard asks of a filetype: displacements non-negative and
 * non-decreasing, and for a file one may write, no byte twice in it. Its
 * copies may overlap (an extent smaller than its data's span): libraries
 * build such filetypes and access one copy (parallel HDF5's chunked
 * collective I/O, whose struct of resized chunk types has its lower bound
 * at the first resized member, MPI-4.0 5.1.7); an access across copies
 * maps each copy where the tiling puts it, later bytes last, as ROMIO
 * does. */
static int px_io_view_blocks(px_io_view_t *v, const px_dt_run_t *runs, MPI_Aint nruns,
                             MPI_Aint extent, int writable, const char **why)
{
    MPI_Aint n = 0;
    v->boff = malloc(sizeof(MPI_Aint) * (size_t)(nruns + 1));
    v->blen = malloc(sizeof(MPI_Aint) * (size_t)(nruns + 1));
    v->bpre = malloc(sizeof(MPI_Aint) * (size_t)(nruns + 1));
    if (!v->boff || !v->blen || !v->bpre)
        return MPI_ERR_NO_MEM;
    MPI_Aint pre = 0;
    for (MPI_Aint i = 0; i < nruns; i++) {
        MPI_Aint off = runs[i].off,
                 len = runs[i].n * (v->resized ? px_io_rep_basic_size(v, runs[i].basic)
                                               : px_mpi_dtype_builtin(runs[i].basic)->size);
        if (!len)
            continue;
        if (off < 0) {
            *why = "the filetype has a negative displacement";
            return MPI_ERR_IO;
        }
        if (n && off < v->boff[n - 1]) {
            *why = "the filetype's displacements decrease";
            return MPI_ERR_IO;
        }
        if (n && writable && off < v->boff[n - 1] + v->blen[n - 1]) {
            *why = "the filetype overlaps itself";
            return MPI_ERR_IO;
        }
        if (n && off == v->boff[n - 1] + v->blen[n - 1]) {
            v->blen[n - 1] += len;
        } else {
            v->boff[n] = off;
            v->blen[n] = len;
            v->bpre[n] = pre;
            n++;
        }
        pre += len;
    }
    v->nblks = n;
    v->contig = n == 1 && v->boff[0] == 0 && v->blen[0] == extent;
    return MPI_SUCCESS;
}

/* ---------- filetypes in the file representation ---------- */

/* In a representation where some types have another size than in memory
 * (external32's long, a program's representation) the file holds each
 * element at its size there. As MPI-3.1 13.5.1 says, displacements a
 * constructor counts in elements of a type (contiguous, vector, indexed,
 * subarray) are scaled to that type's extent in the file, and byte
 * displacements (hvector, hindexed, struct, resized) are taken as they
 * are; the file adds no alignment padding. */
typedef struct px_io_fmap {
    const px_io_view_t *v;
    px_dt_run_t *runs; /* file offsets */
    MPI_Aint n, cap;
    int rc;
    MPI_Datatype memo; /* the last type whose bounds were asked */
    MPI_Aint memo_lb, memo_ext;
} px_io_fmap_t;

/* Called for each block of a type: count copies of old at file
 * displacement disp. */
typedef void px_io_fblk_fn(px_io_fmap_t *m, MPI_Aint disp, MPI_Aint count, MPI_Datatype old,
                           void *arg);

static void px_io_fbounds(px_io_fmap_t *m, MPI_Datatype t, MPI_Aint *lb, MPI_Aint *ext);

static void px_io_fsubarray(px_io_fmap_t *m, const int *in, MPI_Datatype old, MPI_Aint e,
                            px_io_fblk_fn *fn, void *arg)
{
    int nd = in[0], c = in[1 + 3 * nd] == MPI_ORDER_C;
    const int *size = in + 1, *sub = in + 1 + nd, *start = in + 1 + 2 * nd;
    int fast = c ? nd - 1 : 0, idx[32] = {0};
    MPI_Aint stride[32];
    if (nd > 32) {
        m->rc = MPI_ERR_UNSUPPORTED_DATAREP;
        return;
    }
    for (int k = 0; k < nd; k++)
        if (sub[k] <= 0)
            return;
    MPI_Aint s = 1;
    for (int k = 0; k < nd; k++) {
        int d = c ? nd - 1 - k : k; /* fastest first */
        stride[d] = s;
        s *= size[d];
    }
    for (;;) {
        MPI_Aint lin = 0;
        for (int k = 0; k < nd; k++)
            lin += (start[k] + idx[k]) * stride[k];
        fn(m, lin * e, sub[fast], old, arg);
        int k = 1; /* the next index, slower dimensions last */
        for (; k < nd; k++) {
            int d = c ? nd - 1 - k : k;
            if (++idx[d] < sub[d])
                break;
            idx[d] = 0;
        }
        if (k >= nd)
            return;
    }
}

/* Calls fn for each block of derived type o in type-map order. */
static void px_io_fblocks(px_io_fmap_t *m, px_dt_obj_t *o, px_io_fblk_fn *fn, void *arg)
{
    const int *in = o->ints;
    const MPI_Aint *a = o->aints;
    MPI_Datatype *t = o->types;
    MPI_Aint lb, e = 0;
    if (o->nc) { /* a large-count constructor */
        m->rc = MPI_ERR_UNSUPPORTED_DATAREP;
        return;
    }
    if (o->combiner != MPI_COMBINER_STRUCT && o->nt)
        px_io_fbounds(m, t[0], &lb, &e);
    switch (o->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        fn(m, 0, 1, t[0], arg);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        fn(m, 0, in[0], t[0], arg);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        for (MPI_Aint i = 0; i < in[0]; i++)
            fn(m, i * (o->combiner == MPI_COMBINER_VECTOR ? in[2] * e : a[0]), in[1], t[0], arg);
        break;
    case MPI_COMBINER_INDEXED:
        for (int i = 0; i < in[0]; i++)
            fn(m, in[1 + in[0] + i] * e, in[1 + i], t[0], arg);
        break;
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < in[0]; i++)
            fn(m, a[i], in[1 + i], t[0], arg);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        for (int i = 0; i < in[0]; i++)
            fn(m, in[2 + i] * e, in[1], t[0], arg);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < in[0]; i++)
            fn(m, a[i], in[1], t[0], arg);
        break;
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < in[0]; i++)
            fn(m, a[i], in[1 + i], t[i], arg);
        break;
    case MPI_COMBINER_SUBARRAY:
        px_io_fsubarray(m, in, t[0], e, fn, arg);
        break;
    default: /* darray, Fortran 90 parameterized types, ... */
        m->rc = MPI_ERR_UNSUPPORTED_DATAREP;
    }
}

static void px_io_fbounds_blk(px_io_fmap_t *m, MPI_Aint disp, MPI_Aint count, MPI_Datatype old,
                              void *arg)
{
    MPI_Aint *b = arg, lb, ext;
    if (count <= 0)
        return;
    px_io_fbounds(m, old, &lb, &ext);
    if (b[2] || disp + lb < b[0])
        b[0] = disp + lb;
    if (b[2] || disp + lb + count * ext > b[1])
        b[1] = disp + lb + count * ext;
    b[2] = 0;
}

/* The lower bound and extent of t in the file. */
static void px_io_fbounds(px_io_fmap_t *m, MPI_Datatype t, MPI_Aint *lb, MPI_Aint *ext)
{
    px_dt_obj_t *o = px_dt_obj(px_mpi_dt_get(t));
    if (t == m->memo) {
        *lb = m->memo_lb;
        *ext = m->memo_ext;
        return;
    }
    MPI_Aint b[3] = {0, 0, 1}; /* lower bound, upper bound, none yet */
    if (!o) {
        b[1] = px_io_rep_size(m->v, t, NULL);
        if (b[1] < 0)
            m->rc = MPI_ERR_CONVERSION;
    } else if (o->combiner == MPI_COMBINER_RESIZED) {
        b[0] = o->aints[0];
        b[1] = o->aints[0] + o->aints[1];
    } else if (o->combiner == MPI_COMBINER_SUBARRAY && !o->nc) {
        MPI_Aint olb, e = 0, n = 1;
        px_io_fbounds(m, o->types[0], &olb, &e);
        for (int k = 0; k < o->ints[0]; k++)
            n *= o->ints[1 + k];
        b[1] = n * e;
    } else {
        px_io_fblocks(m, o, px_io_fbounds_blk, b);
    }
    *lb = b[0];
    *ext = b[1] - b[0];
    m->memo = t;
    m->memo_lb = *lb;
    m->memo_ext = *ext;
}

/* Appends n elements of basic type `basic` at file offset off. */
static void px_io_fmap_add(px_io_fmap_t *m, MPI_Aint off, MPI_Aint n, MPI_Datatype basic)
{
    if (m->n) {
        px_dt_run_t *l = &m->runs[m->n - 1];
        if (l->basic == basic && l->off + l->n * px_io_rep_basic_size(m->v, basic) == off) {
            l->n += n;
            return;
        }
    }
    if (m->n == m->cap) {
        MPI_Aint cap = m->cap ? 2 * m->cap : 64;
        px_dt_run_t *r = realloc(m->runs, sizeof(*r) * (size_t)cap);
        if (!r) {
            m->rc = MPI_ERR_NO_MEM;
            return;
        }
        m->runs = r;
        m->cap = cap;
    }
    m->runs[m->n++] = (px_dt_run_t){off, n, basic};
}

static void px_io_fput(px_io_fmap_t *m, MPI_Datatype t, MPI_Aint count, MPI_Aint disp);

static void px_io_fput_blk(px_io_fmap_t *m, MPI_Aint disp, MPI_Aint count, MPI_Datatype old,
                           void *arg)
{
    px_io_fput(m, old, count, *(MPI_Aint *)arg + disp);
}

/* Appends the file type map of count copies of t at disp. */
static void px_io_fput(px_io_fmap_t *m, MPI_Datatype t, MPI_Aint count, MPI_Aint disp)
{
    MPI_Aint lb, ext;
    px_io_fbounds(m, t, &lb, &ext);
    px_dt_obj_t *o = px_dt_obj(px_mpi_dt_get(t));
    px_dt_view_t dv;
    px_dt_view_of(t, &dv);
    if (!o && dv.nruns == 1 && count > 0) { /* one basic type: one run */
        px_io_fmap_add(m, disp, count, t);
        return;
    }
    for (MPI_Aint c = 0; c < count && m->rc == MPI_SUCCESS; c++) {
        MPI_Aint at = disp + c * ext;
        if (o) {
            px_io_fblocks(m, o, px_io_fput_blk, &at);
            continue;
        }
        for (MPI_Aint i = 0; i < dv.nsegs; i++) { /* a pair's two elements, packed */
            px_io_fmap_add(m, at, 1, dv.segs[i].basic);
            at += px_io_rep_basic_size(m->v, dv.segs[i].basic);
        }
    }
}

int px_io_view_set(px_io_file_t *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                   const char *datarep, const char *fn)
{
    if (disp < 0)
        return px_io_error(f, MPI_ERR_ARG, fn, "%s: negative displacement %lld", f->name,
                           (long long)disp);
    if (!px_io_type_usable(etype))
        return px_io_error(f, MPI_ERR_TYPE, fn, "%s: invalid or uncommitted etype", f->name);
    if (!px_io_type_usable(filetype))
        return px_io_error(f, MPI_ERR_TYPE, fn, "%s: invalid or uncommitted filetype", f->name);
    px_mpi_dt_t *e = px_mpi_dt_get(etype), *ft = px_mpi_dt_get(filetype);
    if (e->size <= 0 || ft->size <= 0)
        return px_io_error(f, MPI_ERR_ARG, fn, "%s: etype and filetype must hold data", f->name);
    if (ft->size % e->size)
        return px_io_error(f, MPI_ERR_ARG, fn,
                           "%s: the filetype (%ld bytes) is not made of etypes (%ld bytes)",
                           f->name, (long)ft->size, (long)e->size);
    if (ft->extent <= 0)
        return px_io_error(f, MPI_ERR_TYPE, fn, "%s: the filetype's extent is not positive",
                           f->name);
    if (!datarep)
        return px_io_error(f, MPI_ERR_ARG, fn, "%s: null data representation", f->name);
    px_io_view_t v = {0};
    v.etype = v.filetype = MPI_DATATYPE_NULL;
    v.rep = px_io_rep_builtin(datarep);
    if (v.rep < 0) {
        v.urep = px_io_datarep_find(datarep);
        if (!v.urep)
            return px_io_error(f, MPI_ERR_UNSUPPORTED_DATAREP, fn,
                               "%s: unknown data representation \"%s\"", f->name, datarep);
        v.rep = PX_IO_REP_USER;
    }
    int eres = 0, fres = 0;
    MPI_Aint esize = px_io_rep_size(&v, etype, &eres), fsize = px_io_rep_size(&v, filetype, &fres);
    if (esize < 0 || fsize < 0)
        return px_io_error(f, MPI_ERR_CONVERSION, fn, "%s: the extent function of \"%s\" failed",
                           f->name, datarep);
    if (esize <= 0 || fsize % esize)
        return px_io_error(f, MPI_ERR_ARG, fn,
                           "%s: in \"%s\" the filetype (%ld bytes) is not made of etypes (%ld "
                           "bytes)",
                           f->name, datarep, (long)fsize, (long)esize);
    /* a layout in the representation's sizes when they differ */
    v.resized = eres || fres;
    px_io_fmap_t m = {.v = &v, .memo = MPI_DATATYPE_NULL};
    MPI_Aint lb = 0, extent = ft->extent;
    px_dt_view_t dv;
    const char *why = "";
    int rc = MPI_SUCCESS;
    if (v.resized) {
        px_io_fbounds(&m, filetype, &lb, &extent);
        px_io_fput(&m, filetype, 1, 0);
        rc = m.rc;
        why = rc == MPI_ERR_CONVERSION ? "an extent function failed"
                                       : "a filetype built with darray, a Fortran 90 "
                                         "parameterized type or a large-count constructor";
        if (rc == MPI_SUCCESS && extent <= 0) {
            rc = MPI_ERR_TYPE;
            why = "the filetype's extent in the file is not positive";
        }
    } else if (px_dt_view_of(filetype, &dv) != MPI_SUCCESS) {
        rc = MPI_ERR_TYPE;
    } else {
        m.runs = px_dt_runs_expand(&dv);
        m.n = dv.nruns;
        if (!m.runs)
            rc = MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS)
        rc = px_io_view_blocks(&v, m.runs, m.n, extent, !(f->amode & MPI_MODE_RDONLY), &why);
    free(m.runs);
    if (rc != MPI_SUCCESS) {
        px_io_view_free(&v);
        if (rc == MPI_ERR_UNSUPPORTED_DATAREP)
            return px_io_error(f, rc, fn, "%s: \"%s\" changes type sizes: %s is not supported",
                               f->name, datarep, why);
        return px_io_error(f, rc, fn, "%s: %s", f->name,
                           rc == MPI_ERR_NO_MEM ? "out of memory" : why);
    }
    snprintf(v.datarep, sizeof(v.datarep), "%s", datarep);
    v.disp = disp;
    v.esize = esize;
    v.ft_size = fsize;
    v.ft_extent = extent;
    /* the view keeps copies: the program may free its types */
    if (px_io_type_copy(etype, &v.etype) != MPI_SUCCESS ||
        px_io_type_copy(filetype, &v.filetype) != MPI_SUCCESS) {
        px_io_view_free(&v);
        return px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    px_io_view_free(&f->view);
    f->view = v;
    f->fp = 0;
    return MPI_SUCCESS;
}

/* The block holding data byte `within` of a filetype copy. */
static MPI_Aint px_io_view_block(const px_io_view_t *v, MPI_Aint within)
{
    MPI_Aint lo = 0, hi = v->nblks - 1;
    while (lo < hi) {
        MPI_Aint mid = (lo + hi + 1) / 2;
        if (v->bpre[mid] <= within)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

MPI_Offset px_io_view_byte_offset(const px_io_view_t *v, MPI_Offset off)
{
    MPI_Offset pos = off * v->esize;
    MPI_Offset tile = pos / v->ft_size;
    MPI_Aint within = (MPI_Aint)(pos % v->ft_size);
    MPI_Aint b = px_io_view_block(v, within);
    return v->disp + tile * v->ft_extent + v->boff[b] + (within - v->bpre[b]);
}

int px_io_view_pieces(const px_io_view_t *v, MPI_Offset off, MPI_Offset nbytes, px_io_piece_t **p_p,
                      MPI_Aint *n_p)
{
    *p_p = NULL;
    *n_p = 0;
    if (nbytes <= 0)
        return MPI_SUCCESS;
    if (v->contig) {
        px_io_piece_t *p = malloc(sizeof(*p));
        if (!p)
            return MPI_ERR_NO_MEM;
        p->off = v->disp + off * v->esize;
        p->len = nbytes;
        *p_p = p;
        *n_p = 1;
        return MPI_SUCCESS;
    }
    MPI_Offset pos = off * v->esize;
    MPI_Offset tile = pos / v->ft_size;
    MPI_Aint within = (MPI_Aint)(pos % v->ft_size);
    MPI_Aint b = px_io_view_block(v, within);
    /* at most one piece per block touched, plus the first partial one */
    MPI_Offset maxn = (nbytes / v->ft_size + 2) * v->nblks + 1;
    MPI_Aint cap = maxn < 64 ? (MPI_Aint)maxn : 64, n = 0;
    px_io_piece_t *p = malloc(sizeof(*p) * (size_t)cap);
    if (!p)
        return MPI_ERR_NO_MEM;
    MPI_Aint skip = within - v->bpre[b];
    while (nbytes > 0) {
        MPI_Offset o = v->disp + tile * v->ft_extent + v->boff[b] + skip;
        MPI_Offset len = v->blen[b] - skip;
        if (len > nbytes)
            len = nbytes;
        if (n && p[n - 1].off + p[n - 1].len == o) {
            p[n - 1].len += len;
        } else {
            if (n == cap) {
                cap *= 2;
                px_io_piece_t *np = realloc(p, sizeof(*p) * (size_t)cap);
                if (!np) {
                    free(p);
                    return MPI_ERR_NO_MEM;
                }
                p = np;
            }
            p[n++] = (px_io_piece_t){o, len};
        }
        nbytes -= len;
        skip = 0;
        if (++b == v->nblks) {
            b = 0;
            tile++;
        }
    }
    *p_p = p;
    *n_p = n;
    return MPI_SUCCESS;
}

MPI_Offset px_io_view_eof(const px_io_view_t *v, MPI_Offset size)
{
    if (size <= v->disp)
        return 0;
    MPI_Offset rel = size - v->disp, ext = v->ft_extent, bytes = 0;
    /* the data bytes below the end, block by block over the copies (a
     * copy's blocks may reach into the next copies' extents) */
    for (MPI_Aint b = 0; b < v->nblks; b++) {
        MPI_Offset a = rel - v->boff[b], len = v->blen[b];
        if (a <= 0)
            break;
        MPI_Offset copies = (a + ext - 1) / ext; /* starting below the end */
        MPI_Offset full = a >= len ? (a - len) / ext + 1 : 0;
        if (full > copies)
            full = copies;
        /* copy t of the rest holds a - t * ext bytes below the end */
        MPI_Offset part = copies - full;
        bytes += full * len + part * a - ext * (full + copies - 1) * part / 2;
    }
    return (bytes + v->esize - 1) / v->esize;
}

PX_PMPI(MPI_File_set_view)
(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,
 MPI_Info info)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_set_view";
    PX_GET_FILE(f, fh, fn);
    if (info != MPI_INFO_NULL && !px_mpi_info_valid(info))
        return px_io_error(f, MPI_ERR_INFO, fn, "invalid info object");
    if (f->split)
        return px_io_error(f, MPI_ERR_IO, fn, "%s: a split collective access is not ended",
                           f->name);
    int seq = !!(f->amode & MPI_MODE_SEQUENTIAL);
    if ((disp == MPI_DISPLACEMENT_CURRENT) != seq)
        return px_io_error(f, MPI_ERR_ARG, fn,
                           "%s: MPI_DISPLACEMENT_CURRENT is for (and only for) files opened "
                           "with MPI_MODE_SEQUENTIAL",
                           f->name);
    int rc;
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        /* the shared pointer's byte offset in the old view */
        MPI_Offset sh = 0;
        rc = px_mpi_coll_barrier(f->comm);
        if (rc == MPI_SUCCESS && f->comm->rank == 0)
            rc = px_io_shfp_fetch_add(f, 0, 0, &sh, fn);
        if (rc == MPI_SUCCESS)
            rc = px_mpi_coll_bcast(&sh, 1, MPI_INT64_T, 0, f->comm);
        if (rc != MPI_SUCCESS)
            return px_io_error(f, rc, fn, "%s: cannot read the shared file pointer", f->name);
        disp = px_io_view_byte_offset(&f->view, sh);
    }
    /* every process checks its own arguments (the displacement and the
     * filetype may differ between them); all agree on the outcome */
    rc = px_io_view_set(f, disp, etype, filetype, datarep, fn);
    int64_t mine[3] = {rc != MPI_SUCCESS, rc == MPI_SUCCESS ? f->view.esize : 0, 0}, all[3];
    mine[2] = -mine[1];
    if (px_mpi_coll_allreduce(mine, all, 3, MPI_INT64_T, MPI_MAX, f->comm) != MPI_SUCCESS)
        return px_io_error(f, MPI_ERR_OTHER, fn, "%s: a process of the file is lost", f->name);
    if (rc != MPI_SUCCESS)
        return rc;
    if (all[0])
        return px_io_error(f, MPI_ERR_ARG, fn, "%s: another process's view was refused", f->name);
    if (all[1] != -all[2])
        return px_io_error(f, MPI_ERR_NOT_SAME, fn, "%s: the processes gave different etypes",
                           f->name);
    rc = px_io_hints_apply(f, info);
    /* the shared file pointer goes back to 0 */
    if (rc == MPI_SUCCESS && f->comm->rank == 0)
        rc = px_io_shfp_fetch_add(f, 0, 1, NULL, fn);
    if (rc == MPI_SUCCESS)
        rc = px_mpi_coll_barrier(f->comm);
    if (rc != MPI_SUCCESS)
        return px_io_error(f, rc, fn, "%s: cannot reset the shared file pointer", f->name);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_set_view)

/* The etype and filetype come back as new handles of the program's (a
 * derived one duplicated: the program frees it). */
PX_PMPI(MPI_File_get_view)
(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_get_view";
    PX_GET_FILE(f, fh, fn);
    if (!disp || !etype || !filetype || !datarep)
        return px_io_error(f, MPI_ERR_ARG, fn, "null argument");
    MPI_Datatype e, t;
    if (px_io_type_copy(f->view.etype, &e) != MPI_SUCCESS)
        return px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    if (px_io_type_copy(f->view.filetype, &t) != MPI_SUCCESS) {
        if (!px_mpi_dtype_is_builtin(e))
            PMPI_Type_free(&e);
        return px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *disp = f->view.disp;
    *etype = e;
    *filetype = t;
    snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", f->view.datarep);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_get_view)

PX_PMPI(MPI_File_get_byte_offset)(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_get_byte_offset";
    PX_GET_FILE(f, fh, fn);
    if (!disp)
        return px_io_error(f, MPI_ERR_ARG, fn, "null argument");
    if (offset < 0)
        return px_io_error(f, MPI_ERR_ARG, fn, "%s: negative offset %lld", f->name,
                           (long long)offset);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return px_io_error(f, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s: opened sequential", f->name);
    *disp = px_io_view_byte_offset(&f->view, offset);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_get_byte_offset)

PX_PMPI(MPI_File_get_type_extent)(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    PX_CS_ENTER();
    const char *fn = "MPI_File_get_type_extent";
    PX_GET_FILE(f, fh, fn);
    if (!extent)
        return px_io_error(f, MPI_ERR_ARG, fn, "null argument");
    px_mpi_dt_t *d = px_mpi_dt_get(datatype);
    px_dt_obj_t *o = px_dt_obj(d);
    if (!d || (o && o->user_freed))
        return px_io_error(f, MPI_ERR_TYPE, fn, "invalid datatype");
    /* a type whose sizes the representation changes is laid out in the
     * file as a filetype would be */
    MPI_Aint ext = d->extent, lb;
    int resized = 0;
    if (px_io_rep_size(&f->view, datatype, &resized) < 0)
        return px_io_error(f, MPI_ERR_CONVERSION, fn, "%s: the extent function of \"%s\" failed",
                           f->name, f->view.datarep);
    if (resized) {
        px_io_fmap_t m = {.v = &f->view, .memo = MPI_DATATYPE_NULL};
        px_io_fbounds(&m, datatype, &lb, &ext);
        if (m.rc != MPI_SUCCESS)
            return px_io_error(f, m.rc, fn, "%s: no extent in \"%s\" for this datatype", f->name,
                               f->view.datarep);
    }
    *extent = ext;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_File_get_type_extent)

/* ---------- the data of an access ---------- */

int px_io_check_buf(px_io_file_t *f, const void *buf, int count, MPI_Datatype dt, const char *fn,
                    MPI_Aint *bytes_p)
{
    if (count < 0)
        return px_io_error(f, MPI_ERR_COUNT, fn, "negative count %d", count);
    if (!px_io_type_usable(dt))
        return px_io_error(f, MPI_ERR_TYPE, fn, "invalid or uncommitted datatype");
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    MPI_Aint bytes = (MPI_Aint)count * d->size;
    if (bytes && !buf)
        return px_io_error(f, MPI_ERR_BUFFER, fn, "null buffer");
    int resized = 0;
    MPI_Aint size = px_io_rep_size(&f->view, dt, &resized);
    if (size < 0)
        return px_io_error(f, MPI_ERR_CONVERSION, fn, "%s: the extent function of \"%s\" failed",
                           f->name, f->view.datarep);
    const px_io_datarep_t *u = f->view.urep;
    if (resized && f->view.rep == PX_IO_REP_USER &&
        !(u->read_fn || u->read_fn_c || u->write_fn || u->write_fn_c))
        return px_io_error(f, MPI_ERR_UNSUPPORTED_DATAREP, fn,
                           "%s: \"%s\" changes type sizes but has no conversion functions", f->name,
                           f->view.datarep);
    bytes = (MPI_Aint)count * size;
    if (bytes % f->view.esize)
        return px_io_error(f, MPI_ERR_IO, fn,
                           "%s: %ld bytes of data in the file are not a whole number of etypes "
                           "(%ld bytes)",
                           f->name, (long)bytes, (long)f->view.esize);
    *bytes_p = bytes;
    return MPI_SUCCESS;
}
