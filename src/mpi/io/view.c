/* File views (displacement, etype, filetype) flattened to blocks, the
 * file ranges of an access, and data representations: native and
 * internal (the same), external32 (big-endian) and the program's own
 * (MPI_Register_datarep). */
#include "io_impl.h"
#include "../dtype_engine.h"

#include <stdlib.h>
#include <strings.h>

/* ---------- data representations ---------- */

static px_io_datarep_t *px_io_dreps;

void px_io_datarep_finalize(void)
{
    while (px_io_dreps) {
        px_io_datarep_t *d = px_io_dreps;
        px_io_dreps = d->next;
        free(d);
    }
}

static const px_io_datarep_t *px_io_datarep_find(const char *name)
{
    for (px_io_datarep_t *d = px_io_dreps; d; d = d->next)
        if (!strcmp(d->name, name))
            return d;
    return NULL;
}

static int px_io_rep_builtin(const char *name)
{
    if (!strcasecmp(name, "native") || !strcasecmp(name, "internal"))
        return PX_IO_REP_NATIVE;
    if (!strcasecmp(name, "external32"))
        return PX_IO_REP_EXTERNAL32;
    return -1;
}

/* One registration, of the int conversions (r, w) or the large-count
 * ones (rc, wc). */
static int px_io_datarep_add(const char *datarep, MPI_Datarep_conversion_function *r,
                             MPI_Datarep_conversion_function *w,
                             MPI_Datarep_conversion_function_c *rc,
                             MPI_Datarep_conversion_function_c *wc,
                             MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state,
                             const char *fn)
{
    PX_CHECK_INIT(fn);
    if (!datarep || !*datarep || strlen(datarep) >= MPI_MAX_DATAREP_STRING)
        return px_io_error(NULL, MPI_ERR_ARG, fn, "invalid data representation name");
    if (!dtype_file_extent_fn)
        return px_io_error(NULL, MPI_ERR_ARG, fn, "%s: no extent function", datarep);
    if (px_io_rep_builtin(datarep) >= 0 || px_io_datarep_find(datarep))
        return px_io_error(NULL, MPI_ERR_DUP_DATAREP, fn, "%s: already defined", datarep);
    px_io_datarep_t *d = calloc(1, sizeof(*d));
    if (!d)
        return px_io_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    snprintf(d->name, sizeof(d->name), "%s", datarep);
    d->read_fn = r;
    d->write_fn = w;
    d->read_fn_c = rc;
    d->write_fn_c = wc;
    d->extent_fn = dtype_file_extent_fn;
    d->extra = extra_state;
    d->next = px_io_dreps;
    px_io_dreps = d;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Register_datarep)
(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
 MPI_Datarep_conversion_function *write_conversion_fn,
 MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    PX_CS_ENTER();
    return px_io_datarep_add(datarep, read_conversion_fn, write_conversion_fn, NULL, NULL,
                             dtype_file_extent_fn, extra_state, "MPI_Register_datarep");
}
PX_WEAK(MPI_Register_datarep)

PX_PMPI(MPI_Register_datarep_c)
(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
 MPI_Datarep_conversion_function_c *write_conversion_fn,
 MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    PX_CS_ENTER();
    return px_io_datarep_add(datarep, NULL, NULL, read_conversion_fn, write_conversion_fn,
                             dtype_file_extent_fn, extra_state, "MPI_Register_datarep_c");
}
PX_WEAK(MPI_Register_datarep_c)

/* How a predefined element travels in external32 when it keeps its native
 * size: 0 copied, 1 byte-swapped, 2 byte-swapped by halves (complex);
 * -1: its external32 size differs (not supported yet). */
static int px_io_x32_mode(MPI_Datatype t)
{
    const px_dtype_builtin_t *b = px_mpi_dtype_builtin(t);
    if (!b || t == MPI_LONG || t == MPI_UNSIGNED_LONG || t == MPI_WCHAR || t == MPI_LONG_DOUBLE ||
        t == MPI_C_LONG_DOUBLE_COMPLEX || t == MPI_CXX_LONG_DOUBLE_COMPLEX)
        return -1;
    if (b->size <= 1)
        return 0;
    return b->kind == PX_DTK_COMPLEX ? 2 : 1;
}

/* Whether every element of t has the same size in the representation as
 * in memory (what views and conversions assume here). */
static int px_io_rep_sizes_ok(const px_io_view_t *v, MPI_Datatype t)
{
    px_dt_view_t dv;
    if (v->rep == PX_IO_REP_NATIVE || px_dt_view_of(t, &dv) != MPI_SUCCESS)
        return 1;
    for (MPI_Aint i = 0; i < dv.nruns; i++) {
        MPI_Datatype b = dv.runs[i].basic;
        if (v->rep == PX_IO_REP_EXTERNAL32 && px_io_x32_mode(b) < 0)
            return 0;
        if (v->rep == PX_IO_REP_USER) {
            MPI_Aint ext = 0;
            if (v->urep->extent_fn(b, &ext, v->urep->extra) != MPI_SUCCESS ||
                ext != px_mpi_dtype_builtin(b)->size)
                return 0;
        }
    }
    return 1;
}

static void px_io_swap(unsigned char *p, MPI_Aint n)
{
    for (MPI_Aint i = 0; i < n / 2; i++) {
        unsigned char t = p[i];
        p[i] = p[n - 1 - i];
        p[n - 1 - i] = t;
    }
}

/* Converts `bytes` of packed items of t between native and external32 in
 * place (the same operation both ways: sizes are equal). */
static void px_io_x32_convert(MPI_Datatype t, char *buf, MPI_Aint bytes)
{
    px_dt_view_t dv;
    if (px_dt_view_of(t, &dv) != MPI_SUCCESS || !dv.size)
        return;
    MPI_Aint pos = 0;
    while (pos < bytes)
        for (MPI_Aint i = 0; i < dv.nruns && pos < bytes; i++) {
            const px_dt_run_t *r = &dv.runs[i];
            int mode = px_io_x32_mode(r->basic);
            MPI_Aint es = px_mpi_dtype_builtin(r->basic)->size;
            for (MPI_Aint j = 0; j < r->n && pos + es <= bytes; j++, pos += es) {
                if (mode == 1)
                    px_io_swap((unsigned char *)buf + pos, es);
                else if (mode == 2) {
                    px_io_swap((unsigned char *)buf + pos, es / 2);
                    px_io_swap((unsigned char *)buf + pos + es / 2, es / 2);
                }
            }
            if (r->n && pos + es > bytes)
                return; /* a partial element at the end stays as it is */
        }
}

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
 * non-decreasing, and for a file one may write, no byte twice (within a
 * copy or across copies). */
static int px_io_view_blocks(px_io_view_t *v, MPI_Datatype t, int writable, const char **why)
{
    px_dt_view_t dv;
    if (px_dt_view_of(t, &dv) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    MPI_Aint n = 0;
    v->boff = malloc(sizeof(MPI_Aint) * (size_t)(dv.nruns + 1));
    v->blen = malloc(sizeof(MPI_Aint) * (size_t)(dv.nruns + 1));
    v->bpre = malloc(sizeof(MPI_Aint) * (size_t)(dv.nruns + 1));
    if (!v->boff || !v->blen || !v->bpre)
        return MPI_ERR_NO_MEM;
    MPI_Aint pre = 0;
    for (MPI_Aint i = 0; i < dv.nruns; i++) {
        MPI_Aint off = dv.runs[i].off,
                 len = dv.runs[i].n * px_mpi_dtype_builtin(dv.runs[i].basic)->size;
        if (!len)
            continue;
        if (off < 0) {
            *why = "the filetype has a negative displacement";
            return MPI_ERR_TYPE;
        }
        if (n && off < v->boff[n - 1]) {
            *why = "the filetype's displacements decrease";
            return MPI_ERR_TYPE;
        }
        if (n && writable && off < v->boff[n - 1] + v->blen[n - 1]) {
            *why = "the filetype overlaps itself";
            return MPI_ERR_TYPE;
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
    if (n && v->boff[0] + dv.extent < v->boff[n - 1] + (writable ? v->blen[n - 1] : 0)) {
        *why = "copies of the filetype overlap (its extent is too small)";
        return MPI_ERR_TYPE;
    }
    v->contig = n == 1 && v->boff[0] == 0 && v->blen[0] == dv.extent;
    return MPI_SUCCESS;
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
    if (!px_io_rep_sizes_ok(&v, etype) || !px_io_rep_sizes_ok(&v, filetype))
        return px_io_error(f, MPI_ERR_UNSUPPORTED_DATAREP, fn,
                           "%s: \"%s\" with types whose size differs from the native one is "
                           "not supported",
                           f->name, datarep);
    const char *why = "";
    int rc = px_io_view_blocks(&v, filetype, !(f->amode & MPI_MODE_RDONLY), &why);
    if (rc != MPI_SUCCESS) {
        px_io_view_free(&v);
        return px_io_error(f, rc, fn, "%s: %s", f->name,
                           rc == MPI_ERR_NO_MEM ? "out of memory" : why);
    }
    snprintf(v.datarep, sizeof(v.datarep), "%s", datarep);
    v.disp = disp;
    v.esize = e->size;
    v.ft_size = ft->size;
    v.ft_extent = ft->extent;
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
    MPI_Offset rel = size - v->disp;
    MPI_Offset tile = rel / v->ft_extent;
    MPI_Offset bytes = tile * v->ft_size;
    /* the data of this copy and of the next lying below the end (a copy's
     * blocks may reach into the next copy's extent) */
    for (MPI_Offset t = tile; t <= tile + 1; t++)
        for (MPI_Aint b = 0; b < v->nblks; b++) {
            MPI_Offset start = t * v->ft_extent + v->boff[b];
            if (start >= rel)
                break;
            MPI_Offset in = rel - start;
            bytes += in < v->blen[b] ? in : v->blen[b];
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
    MPI_Aint ext = d->extent;
    if (f->view.rep == PX_IO_REP_USER && px_mpi_dtype_is_builtin(datatype)) {
        if (f->view.urep->extent_fn(datatype, &ext, f->view.urep->extra) != MPI_SUCCESS)
            return px_io_error(f, MPI_ERR_CONVERSION, fn,
                               "%s: the extent function of \"%s\" "
                               "failed",
                               f->name, f->view.datarep);
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
    if (bytes % f->view.esize)
        return px_io_error(f, MPI_ERR_IO, fn,
                           "%s: %ld bytes of data are not a whole number of etypes (%ld bytes)",
                           f->name, (long)bytes, (long)f->view.esize);
    if (!px_io_rep_sizes_ok(&f->view, dt))
        return px_io_error(f, MPI_ERR_UNSUPPORTED_DATAREP, fn,
                           "%s: \"%s\" with types whose size differs from the native one is "
                           "not supported",
                           f->name, f->view.datarep);
    *bytes_p = bytes;
    return MPI_SUCCESS;
}

/* The user's buffer itself when its data is contiguous and native, else
 * a new one of `bytes` (*own_p set). */
int px_io_stream_in_buf(px_io_file_t *f, void *buf, int count, MPI_Datatype dt, MPI_Aint bytes,
                        char **stream_p, int *own_p)
{
    (void)count;
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    *own_p = 0;
    if (f->view.rep == PX_IO_REP_NATIVE && d->contig) {
        *stream_p = (char *)buf + d->true_lb;
        return MPI_SUCCESS;
    }
    char *s = malloc(bytes ? (size_t)bytes : 1);
    if (!s)
        return MPI_ERR_NO_MEM;
    *stream_p = s;
    *own_p = 1;
    return MPI_SUCCESS;
}

int px_io_stream_out(px_io_file_t *f, const void *buf, int count, MPI_Datatype dt, char **stream_p,
                     int *own_p, const char *fn)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    MPI_Aint bytes = (MPI_Aint)count * d->size;
    char *s;
    if (px_io_stream_in_buf(f, (void *)buf, count, dt, bytes, &s, own_p) != MPI_SUCCESS)
        return px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    if (!*own_p) {
        *stream_p = s;
        return MPI_SUCCESS;
    }
    const px_io_datarep_t *u = f->view.rep == PX_IO_REP_USER ? f->view.urep : NULL;
    if (u && (u->write_fn || u->write_fn_c)) {
        int rc = u->write_fn ? u->write_fn((void *)buf, dt, count, s, 0, u->extra)
                             : u->write_fn_c((void *)buf, dt, (MPI_Count)count, s, 0, u->extra);
        if (rc != MPI_SUCCESS) {
            free(s);
            *own_p = 0;
            return px_io_error(f, MPI_ERR_CONVERSION, fn,
                               "%s: the write conversion of \"%s\" failed (%d)", f->name,
                               f->view.datarep, rc);
        }
    } else {
        if (bytes && d->contig)
            memcpy(s, (const char *)buf + d->true_lb, (size_t)bytes);
        else if (bytes)
            d->pack(d, count, buf, s);
        if (f->view.rep == PX_IO_REP_EXTERNAL32)
            px_io_x32_convert(dt, s, bytes);
    }
    *stream_p = s;
    return MPI_SUCCESS;
}

int px_io_stream_in(px_io_file_t *f, char *stream, int own, MPI_Aint got, void *buf, int count,
                    MPI_Datatype dt, const char *fn)
{
    int rc = MPI_SUCCESS;
    if (!own)
        return rc;
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    const px_io_datarep_t *u = f->view.rep == PX_IO_REP_USER ? f->view.urep : NULL;
    if (u && (u->read_fn || u->read_fn_c)) {
        /* whole items only: a conversion function knows no partial ones */
        int items = d->size ? (int)(got / d->size) : count;
        int urc = !items       ? MPI_SUCCESS
                  : u->read_fn ? u->read_fn(buf, dt, items, stream, 0, u->extra)
                               : u->read_fn_c(buf, dt, (MPI_Count)items, stream, 0, u->extra);
        if (urc != MPI_SUCCESS)
            rc = px_io_error(f, MPI_ERR_CONVERSION, fn,
                             "%s: the read conversion of \"%s\" failed (%d)", f->name,
                             f->view.datarep, urc);
    } else {
        if (f->view.rep == PX_IO_REP_EXTERNAL32)
            px_io_x32_convert(dt, stream, got);
        if (got)
            px_mpi_dt_unpack_bytes(d, got, stream, buf);
    }
    free(stream);
    return rc;
}
