/* MPI_Pack/MPI_Unpack and the portable "external32" representation:
 * big-endian, with the standard's fixed sizes (long is 4 bytes, wchar 2,
 * long double an IEEE binary128). */
#include "dtype_engine.h"

#include <stdlib.h>

static px_mpi_dt_t *px_pack_type(MPI_Datatype dt, const char *fn, int *rc)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    px_dt_obj_t *o = px_dt_obj(d);
    if (!d || (o && o->user_freed)) {
        *rc = px_mpi_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype");
        return NULL;
    }
    if (!d->committed) {
        *rc = px_mpi_error(NULL, MPI_ERR_TYPE, fn, "datatype not committed");
        return NULL;
    }
    return d;
}

static void px_pack_native(const px_mpi_dt_t *d, MPI_Aint count, const void *src, void *dst)
{
    if (!count || !d->size)
        return;
    if (d->contig)
        memcpy(dst, (const char *)((uintptr_t)src + (uintptr_t)d->true_lb),
               (size_t)(count * d->size));
    else
        d->pack(d, count, src, dst);
}

static void px_unpack_native(const px_mpi_dt_t *d, MPI_Aint count, const void *src, void *dst)
{
    if (!count || !d->size)
        return;
    if (d->contig)
        memcpy((char *)((uintptr_t)dst + (uintptr_t)d->true_lb), src, (size_t)(count * d->size));
    else
        d->unpack(d, count, src, dst);
}

/* MPI_Pack and MPI_Pack_c (the int one passes its position through a
 * MPI_Count and back). */
static int px_pack(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                   MPI_Count outsize, MPI_Count *position, MPI_Comm comm, const char *fn)
{
    int rc;
    PX_GET_COMM(c, comm, fn);
    if (incount < 0)
        return px_mpi_error(c, MPI_ERR_COUNT, fn, "negative count %lld", (long long)incount);
    if (!position || *position < 0 || outsize < 0)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "invalid position or size");
    px_mpi_dt_t *d = px_pack_type(datatype, fn, &rc);
    if (!d)
        return rc;
    MPI_Aint need = (MPI_Aint)incount * d->size;
    if ((MPI_Aint)*position + need > outsize)
        return px_mpi_error(c, MPI_ERR_TRUNCATE, fn, "%ld bytes do not fit at %lld of %lld",
                            (long)need, (long long)*position, (long long)outsize);
    px_pack_native(d, incount, inbuf, (char *)outbuf + *position);
    *position += need;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Pack)
(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
 MPI_Comm comm)
{
    PX_CS_ENTER();
    MPI_Count pos = position ? *position : -1;
    int rc = px_pack(inbuf, incount, datatype, outbuf, outsize, &pos, comm, "MPI_Pack");
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}
PX_WEAK(MPI_Pack)

PX_PMPI(MPI_Pack_c)
(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
 MPI_Count *position, MPI_Comm comm)
{
    PX_CS_ENTER();
    return px_pack(inbuf, incount, datatype, outbuf, outsize, position, comm, "MPI_Pack_c");
}
PX_WEAK(MPI_Pack_c)

static int px_unpack(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                     MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm, const char *fn)
{
    int rc;
    PX_GET_COMM(c, comm, fn);
    if (outcount < 0)
        return px_mpi_error(c, MPI_ERR_COUNT, fn, "negative count %lld", (long long)outcount);
    if (!position || *position < 0 || insize < 0)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "invalid position or size");
    px_mpi_dt_t *d = px_pack_type(datatype, fn, &rc);
    if (!d)
        return rc;
    MPI_Aint need = (MPI_Aint)outcount * d->size;
    if ((MPI_Aint)*position + need > insize)
        return px_mpi_error(c, MPI_ERR_TRUNCATE, fn, "%ld bytes wanted at %lld of %lld", (long)need,
                            (long long)*position, (long long)insize);
    px_unpack_native(d, outcount, (const char *)inbuf + *position, outbuf);
    *position += need;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Unpack)
(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype,
 MPI_Comm comm)
{
    PX_CS_ENTER();
    MPI_Count pos = position ? *position : -1;
    int rc = px_unpack(inbuf, insize, &pos, outbuf, outcount, datatype, comm, "MPI_Unpack");
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}
PX_WEAK(MPI_Unpack)

PX_PMPI(MPI_Unpack_c)
(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
 MPI_Datatype datatype, MPI_Comm comm)
{
    PX_CS_ENTER();
    return px_unpack(inbuf, insize, position, outbuf, outcount, datatype, comm, "MPI_Unpack_c");
}
PX_WEAK(MPI_Unpack_c)

PX_PMPI(MPI_Pack_size_c)(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Pack_size";
    PX_GET_COMM(c, comm, fn);
    px_mpi_dt_t *d = px_mpi_dt_get(datatype);
    px_dt_obj_t *o = px_dt_obj(d);
    if (!d || (o && o->user_freed))
        return px_mpi_error(c, MPI_ERR_TYPE, fn, "invalid datatype");
    if (incount < 0)
        return px_mpi_error(c, MPI_ERR_COUNT, fn, "negative count %lld", (long long)incount);
    if (!size)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null argument");
    *size = incount * d->size;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Pack_size_c)

PX_PMPI(MPI_Pack_size)(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    PX_CS_ENTER();
    MPI_Count n = 0;
    int rc = PMPI_Pack_size_c(incount, datatype, comm, size ? &n : NULL);
    if (rc == MPI_SUCCESS)
        *size = n > 0x7fffffff ? MPI_UNDEFINED : (int)n;
    return rc;
}
PX_WEAK(MPI_Pack_size)

/* ---------- external32 ---------- */

enum {
    PX_X32_COPY,
    PX_X32_SWAP,
    PX_X32_CPLX,
    PX_X32_SINT,
    PX_X32_UINT,
    PX_X32_LDBL,
    PX_X32_LDBL_CPLX
};

/* Size in external32 and how to convert one element of a primitive type. */
static MPI_Aint px_x32_info(MPI_Datatype t, int *mode)
{
    const px_dtype_builtin_t *b = px_mpi_dtype_builtin(t);
    if (t == MPI_LONG_DOUBLE) {
        *mode = PX_X32_LDBL;
        return 16;
    }
    if (t == MPI_C_LONG_DOUBLE_COMPLEX || t == MPI_CXX_LONG_DOUBLE_COMPLEX) {
        *mode = PX_X32_LDBL_CPLX;
        return 32;
    }
    if (t == MPI_LONG || t == MPI_UNSIGNED_LONG) {
        *mode = t == MPI_LONG ? PX_X32_SINT : PX_X32_UINT;
        return 4;
    }
    if (t == MPI_WCHAR) {
        *mode = PX_X32_UINT;
        return 2;
    }
    if (b->size <= 1) {
        *mode = PX_X32_COPY;
        return b->size;
    }
    *mode = b->kind == PX_DTK_COMPLEX ? PX_X32_CPLX : PX_X32_SWAP;
    return b->size;
}

static void px_x32_swap(unsigned char *dst, const unsigned char *src, MPI_Aint n)
{
    for (MPI_Aint i = 0; i < n; i++)
        dst[i] = src[n - 1 - i];
}

/* Native integer of size ns at src to a big-endian one of size es. */
static void px_x32_int_out(unsigned char *dst, MPI_Aint es, const unsigned char *src, MPI_Aint ns,
                           int sign)
{
    uint64_t v = 0;
    memcpy(&v, src, (size_t)ns); /* little-endian host */
    if (sign && ns < 8 && (v >> (ns * 8 - 1)) & 1)
        v |= ~(uint64_t)0 << (ns * 8);
    for (MPI_Aint i = 0; i < es; i++)
        dst[es - 1 - i] = (unsigned char)(v >> (8 * i));
}

static void px_x32_int_in(unsigned char *dst, MPI_Aint ns, const unsigned char *src, MPI_Aint es,
                          int sign)
{
    uint64_t v = 0;
    for (MPI_Aint i = 0; i < es; i++)
        v |= (uint64_t)src[es - 1 - i] << (8 * i);
    if (sign && es < 8 && (v >> (es * 8 - 1)) & 1)
        v |= ~(uint64_t)0 << (es * 8);
    memcpy(dst, &v, (size_t)ns);
}

static void px_x32_ldbl_out(unsigned char *dst, const unsigned char *src)
{
    long double x;
    memcpy(&x, src, sizeof(x));
    __float128 q = (__float128)x;
    px_x32_swap(dst, (const unsigned char *)&q, 16);
}

static void px_x32_ldbl_in(unsigned char *dst, const unsigned char *src)
{
    __float128 q;
    px_x32_swap((unsigned char *)&q, src, 16);
    long double x = (long double)q;
    memcpy(dst, &x, sizeof(x));
}

/* Converts one element; out = 1 native -> external32. */
static void px_x32_elem(unsigned char *x, unsigned char *n, MPI_Datatype t, int out)
{
    int mode;
    MPI_Aint es = px_x32_info(t, &mode), ns = px_mpi_dtype_builtin(t)->size;
    switch (mode) {
    case PX_X32_COPY:
        if (out)
            memcpy(x, n, (size_t)ns);
        else
            memcpy(n, x, (size_t)ns);
        break;
    case PX_X32_SWAP:
        if (out)
            px_x32_swap(x, n, ns);
        else
            px_x32_swap(n, x, ns);
        break;
    case PX_X32_CPLX:
        for (int h = 0; h < 2; h++) {
            if (out)
                px_x32_swap(x + h * ns / 2, n + h * ns / 2, ns / 2);
            else
                px_x32_swap(n + h * ns / 2, x + h * ns / 2, ns / 2);
        }
        break;
    case PX_X32_SINT:
    case PX_X32_UINT:
        if (out)
            px_x32_int_out(x, es, n, ns, mode == PX_X32_SINT);
        else
            px_x32_int_in(n, ns, x, es, mode == PX_X32_SINT);
        break;
    case PX_X32_LDBL:
        if (out)
            px_x32_ldbl_out(x, n);
        else
            px_x32_ldbl_in(n, x);
        break;
    case PX_X32_LDBL_CPLX:
        for (int h = 0; h < 2; h++) {
            if (out)
                px_x32_ldbl_out(x + 16 * h, n + ns / 2 * h);
            else
                px_x32_ldbl_in(n + ns / 2 * h, x + 16 * h);
        }
        break;
    }
}

static MPI_Aint px_x32_item_size(const px_dt_view_t *v)
{
    MPI_Aint s = 0;
    int mode;
    for (MPI_Aint i = 0; i < v->nsegs; i++)
        s += v->segs[i].n * v->segs[i].reps * px_x32_info(v->segs[i].basic, &mode);
    return s;
}

/* Walks count items in type-map order converting each element. */
static void px_x32_walk(const px_dt_view_t *v, MPI_Aint count, void *buf, unsigned char *x, int out)
{
    uintptr_t base = (uintptr_t)buf;
    for (MPI_Aint k = 0; k < count; k++, base += (uintptr_t)v->extent) {
        px_dt_run_t run;
        for (px_dt_runit_t it = px_dt_runs(v->segs, v->nsegs); px_dt_runit_next(&it, &run);) {
            const px_dt_run_t *r = &run;
            int mode;
            MPI_Aint es = px_x32_info(r->basic, &mode), ns = px_mpi_dtype_builtin(r->basic)->size;
            unsigned char *n = (unsigned char *)(base + (uintptr_t)r->off);
            for (MPI_Aint j = 0; j < r->n; j++, n += ns, x += es)
                px_x32_elem(x, n, r->basic, out);
        }
    }
}

static int px_x32_begin(const char *datarep, MPI_Datatype dt, const char *fn, px_dt_view_t *v)
{
    if (!datarep || strcmp(datarep, "external32") != 0)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "unsupported data representation \"%s\"",
                            datarep ? datarep : "(null)");
    if (px_dt_view_of(dt, v) != MPI_SUCCESS)
        return px_mpi_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype");
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    if (!d->committed)
        return px_mpi_error(NULL, MPI_ERR_TYPE, fn, "datatype not committed");
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Pack_external_size_c)
(const char datarep[], MPI_Count incount, MPI_Datatype datatype, MPI_Count *size)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Pack_external_size";
    px_dt_view_t v;
    int rc = px_x32_begin(datarep, datatype, fn, &v);
    if (rc)
        return rc;
    if (incount < 0 || !size)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid count or null size");
    *size = incount * px_x32_item_size(&v);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Pack_external_size_c)

PX_PMPI(MPI_Pack_external_size)
(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size)
{
    PX_CS_ENTER();
    return PMPI_Pack_external_size_c(datarep, incount, datatype, size);
}
PX_WEAK(MPI_Pack_external_size)

PX_PMPI(MPI_Pack_external_c)
(const char datarep[], const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
 MPI_Count outsize, MPI_Count *position)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Pack_external";
    px_dt_view_t v;
    int rc = px_x32_begin(datarep, datatype, fn, &v);
    if (rc)
        return rc;
    if (incount < 0 || !position || *position < 0)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid count or position");
    MPI_Aint need = (MPI_Aint)incount * px_x32_item_size(&v);
    if (*position + need > outsize)
        return px_mpi_error(NULL, MPI_ERR_TRUNCATE, fn, "%ld bytes do not fit at %ld of %ld",
                            (long)need, (long)*position, (long)outsize);
    px_x32_walk(&v, incount, (void *)inbuf, (unsigned char *)outbuf + *position, 1);
    *position += need;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Pack_external_c)

PX_PMPI(MPI_Pack_external)
(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
 MPI_Aint outsize, MPI_Aint *position)
{
    PX_CS_ENTER();
    return PMPI_Pack_external_c(datarep, inbuf, incount, datatype, outbuf, outsize, position);
}
PX_WEAK(MPI_Pack_external)

PX_PMPI(MPI_Unpack_external_c)
(const char datarep[], const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
 MPI_Count outcount, MPI_Datatype datatype)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Unpack_external";
    px_dt_view_t v;
    int rc = px_x32_begin(datarep, datatype, fn, &v);
    if (rc)
        return rc;
    if (outcount < 0 || !position || *position < 0)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid count or position");
    MPI_Aint need = (MPI_Aint)outcount * px_x32_item_size(&v);
    if (*position + need > insize)
        return px_mpi_error(NULL, MPI_ERR_TRUNCATE, fn, "%ld bytes wanted at %ld of %ld",
                            (long)need, (long)*position, (long)insize);
    px_x32_walk(&v, outcount, outbuf, (unsigned char *)inbuf + *position, 0);
    *position += need;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Unpack_external_c)

PX_PMPI(MPI_Unpack_external)
(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position, void *outbuf,
 int outcount, MPI_Datatype datatype)
{
    PX_CS_ENTER();
    return PMPI_Unpack_external_c(datarep, inbuf, insize, position, outbuf, outcount, datatype);
}
PX_WEAK(MPI_Unpack_external)
