/* Data representations: native and internal (the same), external32
 * (big-endian) and the program's own (MPI_Register_datarep), and the
 * conversion of an access's data between memory and the file. */
#include "io_impl.h"
#include "../dtype_engine.h"

#include <stdlib.h>
#include <strings.h>

/* ---------- the program's representations ---------- */

static px_io_datarep_t *px_io_dreps;

void px_io_datarep_finalize(void)
{
    while (px_io_dreps) {
        px_io_datarep_t *d = px_io_dreps;
        px_io_dreps = d->next;
        free(d);
    }
}

const px_io_datarep_t *px_io_datarep_find(const char *name)
{
    for (px_io_datarep_t *d = px_io_dreps; d; d = d->next)
        if (!strcmp(d->name, name))
            return d;
    return NULL;
}

int px_io_rep_builtin(const char *name)
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

int px_io_rep_sizes_ok(const px_io_view_t *v, MPI_Datatype t)
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

/* ---------- the data of an access ---------- */

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
