/* Datatypes: predefined ones here; the derived-type engine plugs into the
 * same px_mpi_dt_t (size, extent, contiguity, pack/unpack). */
#include "mpi_impl.h"

#include <stdio.h>
#include <stdlib.h>

static px_mpi_dt_t *px_dt_builtin_objs;
px_htab_t px_mpi_dt_tab; /* derived types: handle 0xcc000000 | index */
#define PX_DT_DYN 0xcc000000u

/* Pair types (MAXLOC/MINLOC) have padding: move value and index apart. */
static void px_dt_pair_pack(const px_mpi_dt_t *d, MPI_Aint count, const void *src, void *dst)
{
    const px_dtype_builtin_t *b = d->b;
    MPI_Aint s1 = b->second_offset;
    MPI_Aint s2 = d->size - px_mpi_dtype_builtin(b->pair_first)->size;
    MPI_Aint f1 = px_mpi_dtype_builtin(b->pair_first)->size;
    const char *s = src;
    char *o = dst;
    for (MPI_Aint i = 0; i < count; i++, s += d->extent, o += d->size) {
        memcpy(o, s, (size_t)f1);
        memcpy(o + f1, s + s1, (size_t)s2);
    }
}

static void px_dt_pair_unpack(const px_mpi_dt_t *d, MPI_Aint count, const void *src, void *dst)
{
    const px_dtype_builtin_t *b = d->b;
    MPI_Aint s1 = b->second_offset;
    MPI_Aint f1 = px_mpi_dtype_builtin(b->pair_first)->size;
    MPI_Aint s2 = d->size - f1;
    const char *s = src;
    char *o = dst;
    for (MPI_Aint i = 0; i < count; i++, o += d->extent, s += d->size) {
        memcpy(o, s, (size_t)f1);
        memcpy(o + s1, s + f1, (size_t)s2);
    }
}

void px_mpi_dt_init(void)
{
    int n = px_mpi_dtype_builtin_count();
    if (px_dt_builtin_objs)
        return;
    px_dt_builtin_objs = calloc((size_t)n, sizeof(*px_dt_builtin_objs));
    if (!px_dt_builtin_objs)
        return;
    for (int i = 0; i < n; i++) {
        const px_dtype_builtin_t *b = px_mpi_dtype_builtin_at(i);
        px_mpi_dt_t *d = &px_dt_builtin_objs[i];
        d->handle = b->handle;
        d->size = b->size;
        d->extent = b->extent;
        d->lb = b->lb;
        d->true_lb = b->true_lb;
        d->true_extent = b->true_extent;
        d->contig = b->size == b->extent;
        d->committed = 1;
        d->builtin = 1;
        d->b = b;
        d->elements = b->is_pair ? 2 : (b->size ? 1 : 0);
        if (b->is_pair && !d->contig) {
            d->pack = px_dt_pair_pack;
            d->unpack = px_dt_pair_unpack;
        }
    }
}

px_mpi_dt_t *px_mpi_dt_get(MPI_Datatype dt)
{
    const px_dtype_builtin_t *b = px_mpi_dtype_builtin(dt);
    if (b) {
        if (!px_dt_builtin_objs)
            px_mpi_dt_init();
        return &px_dt_builtin_objs[b - px_mpi_dtype_builtin_at(0)];
    }
    if (PX_HANDLE_HI(dt) == PX_DT_DYN)
        return px_htab_get(&px_mpi_dt_tab, PX_HANDLE_IDX(dt));
    return NULL;
}

PX_PMPI(MPI_Type_size)(MPI_Datatype datatype, int *size)
{
    px_mpi_dt_t *d = px_mpi_dt_get(datatype);
    if (!d)
        return px_mpi_error(NULL, MPI_ERR_TYPE, "MPI_Type_size", "invalid datatype");
    if (!size)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_size", "null argument");
    *size = d->size > 0x7fffffff ? MPI_UNDEFINED : (int)d->size;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_size)

PX_PMPI(MPI_Type_size_x)(MPI_Datatype datatype, MPI_Count *size)
{
    px_mpi_dt_t *d = px_mpi_dt_get(datatype);
    if (!d)
        return px_mpi_error(NULL, MPI_ERR_TYPE, "MPI_Type_size_x", "invalid datatype");
    if (!size)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_size_x", "null argument");
    *size = d->size;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_size_x)

PX_PMPI(MPI_Type_get_extent)(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    px_mpi_dt_t *d = px_mpi_dt_get(datatype);
    if (!d)
        return px_mpi_error(NULL, MPI_ERR_TYPE, "MPI_Type_get_extent", "invalid datatype");
    if (!lb || !extent)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_get_extent", "null argument");
    *lb = d->lb;
    *extent = d->extent;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_get_extent)

PX_PMPI(MPI_Type_get_true_extent)(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    px_mpi_dt_t *d = px_mpi_dt_get(datatype);
    if (!d)
        return px_mpi_error(NULL, MPI_ERR_TYPE, "MPI_Type_get_true_extent", "invalid datatype");
    if (!lb || !extent)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_get_true_extent", "null argument");
    *lb = d->true_lb;
    *extent = d->true_extent;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_get_true_extent)

PX_PMPI(MPI_Type_get_name)(MPI_Datatype datatype, char *name, int *resultlen)
{
    px_mpi_dt_t *d = px_mpi_dt_get(datatype);
    if (!d)
        return px_mpi_error(NULL, MPI_ERR_TYPE, "MPI_Type_get_name", "invalid datatype");
    int n = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", d->builtin ? d->b->name : "");
    *resultlen = n;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_get_name)

PX_PMPI(MPI_Get_address)(const void *location, MPI_Aint *address)
{
    if (!address)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Get_address", "null argument");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Get_address)

PX_PMPI(MPI_Address)(void *location, MPI_Aint *address)
{
    return PMPI_Get_address(location, address);
}
PX_WEAK(MPI_Address)

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return base + disp; }
#pragma weak MPI_Aint_add = PMPI_Aint_add
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) { return addr1 - addr2; }
#pragma weak MPI_Aint_diff = PMPI_Aint_diff
