/* File views (displacement, etype, filetype) flattened to blocks, and the
 * file ranges of an access. */
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
