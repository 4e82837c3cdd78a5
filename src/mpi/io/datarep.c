/* Data representations: native and internal (the same), external32
 * (big-endian, with the sizes of MPI-3.1 Table 13.2) and the program's own
 * (MPI_Register_datarep); the sizes of types in a representation and the
 * conversion of an access's data between memory and the file. */
#include "io_impl.h"
#include "../dtype_engine.h"

#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>
#include <wchar.h>

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

/* ---------- external32 ---------- */

/* How a predefined element travels in external32: copied, byte-swapped,
 * byte-swapped by halves (complex), or converted to another size or
 * format (long and unsigned long: 4 bytes; wchar: 2 bytes; long double:
 * IEEE binary128, 16 bytes; long double complex: two of them). */
enum {
    PX_X32_COPY,
    PX_X32_SWAP,
    PX_X32_SWAP2,
    PX_X32_LONG,
    PX_X32_ULONG,
    PX_X32_WCHAR,
    PX_X32_LDBL,
    PX_X32_LDBL2
};

static int px_io_x32_mode(MPI_Datatype t)
{
    if (t == MPI_LONG)
        return PX_X32_LONG;
    if (t == MPI_UNSIGNED_LONG)
        return PX_X32_ULONG;
    if (t == MPI_WCHAR)
        return PX_X32_WCHAR;
    if (t == MPI_LONG_DOUBLE)
        return PX_X32_LDBL;
    if (t == MPI_C_LONG_DOUBLE_COMPLEX || t == MPI_CXX_LONG_DOUBLE_COMPLEX)
        return PX_X32_LDBL2;
    const px_dtype_builtin_t *b = px_mpi_dtype_builtin(t);
    if (b->size <= 1)
        return PX_X32_COPY;
    return b->kind == PX_DTK_COMPLEX ? PX_X32_SWAP2 : PX_X32_SWAP;
}

static MPI_Aint px_io_x32_size(MPI_Datatype t)
{
    switch (px_io_x32_mode(t)) {
    case PX_X32_LONG:
    case PX_X32_ULONG:
        return 4;
    case PX_X32_WCHAR:
        return 2;
    case PX_X32_LDBL:
        return 16;
    case PX_X32_LDBL2:
        return 32;
    default:
        return px_mpi_dtype_builtin(t)->size;
    }
}

static void px_io_swap(unsigned char *p, MPI_Aint n)
{
    for (MPI_Aint i = 0; i < n / 2; i++) {
        unsigned char t = p[i];
        p[i] = p[n - 1 - i];
        p[n - 1 - i] = t;
    }
}

static void px_io_be_put(unsigned char *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)v;
}

static uint64_t px_io_be_get(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* long double (x87 80-bit extended, little-endian, in 16 bytes) to and
 * from big-endian binary128: the sign and the exponent (bias 16383 in
 * both) are kept; the 63 fraction bits after the explicit integer bit
 * become the top of the 112-bit fraction. Exact one way; the other way
 * rounds to nearest even (to infinity past the largest value). Zeros,
 * denormals, infinities and NaNs (their payload's top bits, quiet bit
 * included) map onto each other. */
#define PX_LDBL_X87 (LDBL_MANT_DIG == 64)
#define PX_LDBL_QUAD (LDBL_MANT_DIG == 113)

static int px_io_ldbl_put(const unsigned char *n, unsigned char *x)
{
#if PX_LDBL_X87
    uint64_t m;
    uint16_t se;
    memcpy(&m, n, 8);
    memcpy(&se, n + 8, 2);
    uint64_t e = se & 0x7fff, f = m & ~(1ULL << 63);
    if (!e && (m >> 63))
        e = 1; /* a pseudo-denormal is the normal number of exponent 1 */
    px_io_be_put(x, (uint64_t)(se & 0x8000) << 48 | e << 48 | f >> 15, 8);
    px_io_be_put(x + 8, f << 49, 8);
    return 0;
#elif PX_LDBL_QUAD
    memcpy(x, n, 16);
    px_io_swap(x, 16);
    return 0;
#else
    (void)n;
    (void)x;
    return -1; /* no conversion for this long double format */
#endif
}

static void px_io_ldbl_get(const unsigned char *x, unsigned char *n)
{
    memset(n, 0, sizeof(long double));
#if PX_LDBL_X87
    uint64_t hi = px_io_be_get(x, 8), lo = px_io_be_get(x + 8, 8);
    uint64_t e = (hi >> 48) & 0x7fff, fhi = hi & 0xffffffffffffULL;
    uint64_t top = fhi << 15 | lo >> 49, rem = lo & ((1ULL << 49) - 1), half = 1ULL << 48;
    uint64_t m;
    if (e == 0x7fff) {
        m = 1ULL << 63 | top;
        if (!top && (fhi || lo))
            m |= 1ULL << 62; /* a NaN whose payload is all in the dropped bits */
    } else {
        m = (e ? 1ULL << 63 : 0) | top;
        if (rem > half || (rem == half && (m & 1))) {
            if (++m == 0) {
                m = 1ULL << 63;
                e++;
            } else if (!e && (m >> 63)) {
                e = 1; /* a denormal rounded up to the smallest normal */
            }
        }
        if (e == 0x7fff)
            m = 1ULL << 63;
    }
    uint16_t se = (uint16_t)((hi >> 48 & 0x8000) | e);
    memcpy(n, &m, 8);
    memcpy(n + 8, &se, 2);
#elif PX_LDBL_QUAD
    memcpy(n, x, 16);
    px_io_swap(n, 16);
#else
    (void)x;
#endif
}

/* One element of basic type t from memory (n) to external32 (x); -1 when
 * its value has no external32 representation. */
static int px_io_x32_put(MPI_Datatype t, const unsigned char *n, unsigned char *x)
{
    MPI_Aint ns = px_mpi_dtype_builtin(t)->size;
    switch (px_io_x32_mode(t)) {
    case PX_X32_LONG: {
        long v;
        memcpy(&v, n, sizeof(v));
        if (v < INT32_MIN || v > INT32_MAX)
            return -1;
        px_io_be_put(x, (uint64_t)v, 4);
        return 0;
    }
    case PX_X32_ULONG: {
        unsigned long v;
        memcpy(&v, n, sizeof(v));
        if (v > UINT32_MAX)
            return -1;
        px_io_be_put(x, v, 4);
        return 0;
    }
    case PX_X32_WCHAR: {
        wchar_t v;
        memcpy(&v, n, sizeof(v));
        if (v < 0 || (unsigned long)v > 0xffff)
            return -1;
        px_io_be_put(x, (uint64_t)v, 2);
        return 0;
    }
    case PX_X32_LDBL:
        return px_io_ldbl_put(n, x);
    case PX_X32_LDBL2:
        return px_io_ldbl_put(n, x) || px_io_ldbl_put(n + ns / 2, x + 16) ? -1 : 0;
    case PX_X32_SWAP2:
        memcpy(x, n, (size_t)ns);
        px_io_swap(x, ns / 2);
        px_io_swap(x + ns / 2, ns / 2);
        return 0;
    case PX_X32_SWAP:
        memcpy(x, n, (size_t)ns);
        px_io_swap(x, ns);
        return 0;
    default:
        memcpy(x, n, (size_t)ns);
        return 0;
    }
}

/* One element of basic type t from external32 (x) to memory (n). */
static void px_io_x32_get(MPI_Datatype t, const unsigned char *x, unsigned char *n)
{
    MPI_Aint ns = px_mpi_dtype_builtin(t)->size;
    switch (px_io_x32_mode(t)) {
    case PX_X32_LONG: {
        long v = (int32_t)(uint32_t)px_io_be_get(x, 4);
        memcpy(n, &v, sizeof(v));
        return;
    }
    case PX_X32_ULONG: {
        unsigned long v = (unsigned long)px_io_be_get(x, 4);
        memcpy(n, &v, sizeof(v));
        return;
    }
    case PX_X32_WCHAR: {
        wchar_t v = (wchar_t)px_io_be_get(x, 2);
        memcpy(n, &v, sizeof(v));
        return;
    }
    case PX_X32_LDBL:
        px_io_ldbl_get(x, n);
        return;
    case PX_X32_LDBL2:
        px_io_ldbl_get(x, n);
        px_io_ldbl_get(x + 16, n + ns / 2);
        return;
    default: /* the swaps are their own inverse */
        px_io_x32_put(t, x, n);
    }
}

/* Whether a type holds elements that external32 does not just copy or
 * byte-swap in place. */
static int px_io_x32_special(MPI_Datatype t)
{
    px_dt_view_t dv;
    if (px_dt_view_of(t, &dv) != MPI_SUCCESS)
        return 0;
    for (MPI_Aint i = 0; i < dv.nsegs; i++)
        if (px_io_x32_mode(dv.segs[i].basic) > PX_X32_SWAP2)
            return 1;
    return 0;
}

/* Converts `bytes` of packed items of t between native and external32 in
 * place (types that keep their size and are only swapped). */
static void px_io_x32_swap_stream(MPI_Datatype t, char *buf, MPI_Aint bytes)
{
    px_dt_view_t dv;
    if (px_dt_view_of(t, &dv) != MPI_SUCCESS || !dv.size)
        return;
    MPI_Aint pos = 0;
    while (pos < bytes) {
        px_dt_run_t run;
        for (px_dt_runit_t it = px_dt_runs(dv.segs, dv.nsegs);
             pos < bytes && px_dt_runit_next(&it, &run);) {
            const px_dt_run_t *r = &run;
            int mode = px_io_x32_mode(r->basic);
            MPI_Aint es = px_mpi_dtype_builtin(r->basic)->size;
            for (MPI_Aint j = 0; j < r->n && pos + es <= bytes; j++, pos += es) {
                if (mode == PX_X32_SWAP)
                    px_io_swap((unsigned char *)buf + pos, es);
                else if (mode == PX_X32_SWAP2) {
                    px_io_swap((unsigned char *)buf + pos, es / 2);
                    px_io_swap((unsigned char *)buf + pos + es / 2, es / 2);
                }
            }
            if (r->n && pos + es > bytes)
                return; /* a partial element at the end stays as it is */
        }
    }
}

/* Converts the whole elements of a packed stream of t: `nbytes` native
 * bytes at n into external32 at x (write), or `xbytes` external32 bytes
 * at x into n (read). Returns the bytes done on the other side, or -1
 * (write) when a value has no external32 representation. */
static MPI_Aint px_io_x32_stream(MPI_Datatype t, unsigned char *n, MPI_Aint nbytes,
                                 unsigned char *x, MPI_Aint xbytes, int write)
{
    px_dt_view_t dv;
    if (px_dt_view_of(t, &dv) != MPI_SUCCESS || !dv.size)
        return 0;
    MPI_Aint np = 0, xp = 0;
    for (;;) {
        px_dt_run_t run;
        for (px_dt_runit_t it = px_dt_runs(dv.segs, dv.nsegs); px_dt_runit_next(&it, &run);) {
            MPI_Datatype b = run.basic;
            MPI_Aint ns = px_mpi_dtype_builtin(b)->size, xs = px_io_x32_size(b);
            for (MPI_Aint j = 0; j < run.n; j++, np += ns, xp += xs) {
                if (write ? np + ns > nbytes : xp + xs > xbytes)
                    return write ? xp : np;
                if (!write)
                    px_io_x32_get(b, x + xp, n + np);
                else if (px_io_x32_put(b, n + np, x + xp))
                    return -1;
            }
        }
    }
}

/* ---------- sizes in a representation ---------- */

MPI_Aint px_io_rep_basic_size(const px_io_view_t *v, MPI_Datatype b)
{
    if (v->rep == PX_IO_REP_EXTERNAL32)
        return px_io_x32_size(b);
    MPI_Aint ext = px_mpi_dtype_builtin(b)->size;
    if (v->rep == PX_IO_REP_USER &&
        (v->urep->extent_fn(b, &ext, v->urep->extra) != MPI_SUCCESS || ext < 0))
        return -1;
    return ext;
}

MPI_Aint px_io_rep_size(const px_io_view_t *v, MPI_Datatype t, int *resized)
{
    px_mpi_dt_t *d = px_mpi_dt_get(t);
    px_dt_view_t dv;
    if (resized)
        *resized = 0;
    if (v->rep == PX_IO_REP_NATIVE || px_dt_view_of(t, &dv) != MPI_SUCCESS)
        return d->size;
    MPI_Aint size = 0, bs = 0;
    MPI_Datatype last = MPI_DATATYPE_NULL;
    for (MPI_Aint i = 0; i < dv.nsegs; i++) {
        MPI_Datatype b = dv.segs[i].basic;
        if (b != last)
            bs = px_io_rep_basic_size(v, b);
        if (bs < 0)
            return -1;
        last = b;
        size += dv.segs[i].n * dv.segs[i].reps * bs;
    }
    if (resized)
        *resized = size != d->size;
    return size;
}

MPI_Aint px_io_file_bytes(const px_io_view_t *v, MPI_Datatype t, MPI_Aint count)
{
    MPI_Aint size = px_io_rep_size(v, t, NULL);
    return size > 0 ? count * size : 0;
}

MPI_Aint px_io_map_bytes(const px_io_view_t *v, MPI_Datatype t, MPI_Aint bytes, int to_file)
{
    int resized = 0;
    MPI_Aint fsize = px_io_rep_size(v, t, &resized), nsize = px_mpi_dt_get(t)->size;
    px_dt_view_t dv;
    if (!resized || fsize <= 0 || !nsize || px_dt_view_of(t, &dv) != MPI_SUCCESS)
        return bytes;
    MPI_Aint from = to_file ? nsize : fsize, to = to_file ? fsize : nsize;
    MPI_Aint items = bytes / from, rem = bytes % from, out = items * to;
    px_dt_run_t run;
    for (px_dt_runit_t it = px_dt_runs(dv.segs, dv.nsegs); px_dt_runit_next(&it, &run);) {
        MPI_Aint ns = px_mpi_dtype_builtin(run.basic)->size,
                 fs = px_io_rep_basic_size(v, run.basic);
        for (MPI_Aint j = 0; j < run.n; j++) {
            if (rem < (to_file ? ns : fs))
                return out;
            rem -= to_file ? ns : fs;
            out += to_file ? fs : ns;
        }
    }
    return out;
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

/* The native packed data of an access: the buffer itself when it is
 * contiguous (*tmp_p NULL), else a packed copy in *tmp_p. */
static const char *px_io_native_packed(px_mpi_dt_t *d, const void *buf, int count, char **tmp_p)
{
    MPI_Aint bytes = (MPI_Aint)count * d->size;
    *tmp_p = NULL;
    if (d->contig || !bytes)
        return (const char *)buf + d->true_lb;
    *tmp_p = malloc((size_t)bytes);
    if (*tmp_p)
        d->pack(d, count, buf, *tmp_p);
    return *tmp_p;
}

int px_io_stream_out(px_io_file_t *f, const void *buf, int count, MPI_Datatype dt, char **stream_p,
                     int *own_p, const char *fn)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    MPI_Aint bytes = (MPI_Aint)count * d->size, fbytes = px_io_file_bytes(&f->view, dt, count);
    char *s;
    if (px_io_stream_in_buf(f, (void *)buf, count, dt, fbytes, &s, own_p) != MPI_SUCCESS)
        return px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    if (!*own_p) {
        *stream_p = s;
        return MPI_SUCCESS;
    }
    const px_io_datarep_t *u = f->view.rep == PX_IO_REP_USER ? f->view.urep : NULL;
    int rc = MPI_SUCCESS;
    if (u && (u->write_fn || u->write_fn_c)) {
        int urc = u->write_fn ? u->write_fn((void *)buf, dt, count, s, 0, u->extra)
                              : u->write_fn_c((void *)buf, dt, (MPI_Count)count, s, 0, u->extra);
        if (urc != MPI_SUCCESS)
            rc = px_io_error(f, MPI_ERR_CONVERSION, fn,
                             "%s: the write conversion of \"%s\" failed (%d)", f->name,
                             f->view.datarep, urc);
    } else if (f->view.rep == PX_IO_REP_EXTERNAL32 && px_io_x32_special(dt)) {
        char *tmp;
        const char *n = px_io_native_packed(d, buf, count, &tmp);
        if (!n)
            rc = px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
        else if (px_io_x32_stream(dt, (unsigned char *)n, bytes, (unsigned char *)s, fbytes, 1) < 0)
            rc = px_io_error(f, MPI_ERR_CONVERSION, fn,
                             "%s: a value has no external32 representation (a long or "
                             "unsigned long past 32 bits, a wchar past 16 bits)",
                             f->name);
        free(tmp);
    } else {
        if (bytes && d->contig)
            memcpy(s, (const char *)buf + d->true_lb, (size_t)bytes);
        else if (bytes)
            d->pack(d, count, buf, s);
        if (f->view.rep == PX_IO_REP_EXTERNAL32)
            px_io_x32_swap_stream(dt, s, bytes);
    }
    if (rc != MPI_SUCCESS) {
        free(s);
        *own_p = 0;
        return rc;
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
        MPI_Aint fsize = px_io_rep_size(&f->view, dt, NULL);
        int items = fsize > 0 ? (int)(got / fsize) : count;
        int urc = !items       ? MPI_SUCCESS
                  : u->read_fn ? u->read_fn(buf, dt, items, stream, 0, u->extra)
                               : u->read_fn_c(buf, dt, (MPI_Count)items, stream, 0, u->extra);
        if (urc != MPI_SUCCESS)
            rc = px_io_error(f, MPI_ERR_CONVERSION, fn,
                             "%s: the read conversion of \"%s\" failed (%d)", f->name,
                             f->view.datarep, urc);
    } else if (f->view.rep == PX_IO_REP_EXTERNAL32 && px_io_x32_special(dt)) {
        MPI_Aint bytes = (MPI_Aint)count * d->size;
        char *n = malloc(bytes ? (size_t)bytes : 1);
        if (!n) {
            rc = px_io_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
        } else {
            MPI_Aint nb =
                px_io_x32_stream(dt, (unsigned char *)n, bytes, (unsigned char *)stream, got, 0);
            if (nb)
                px_mpi_dt_unpack_bytes(d, nb, n, buf);
            free(n);
        }
    } else {
        if (f->view.rep == PX_IO_REP_EXTERNAL32)
            px_io_x32_swap_stream(dt, stream, got);
        if (got)
            px_mpi_dt_unpack_bytes(d, got, stream, buf);
    }
    free(stream);
    return rc;
}
