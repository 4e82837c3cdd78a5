/* Datatypes: predefined ones here; the derived-type engine plugs into the
 * same px_mpi_dt_t (size, extent, contiguity, pack/unpack). */
#include "mpi_impl.h"
#include "dtype_engine.h"

#include <stdio.h>
#include <stdlib.h>

static px_mpi_dt_t *px_dt_builtin_objs;
px_htab_t px_mpi_dt_tab; /* derived types: handle 0xcc000000 | index */

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
        if (((unsigned)b->handle & 0xffff0000u) == 0x4c000000u &&
            !px_mpi_dt_fast[(unsigned)b->handle & 0xffu])
            px_mpi_dt_fast[(unsigned)b->handle & 0xffu] = d;
    }
}

px_mpi_dt_t *px_mpi_dt_fast[256];

px_mpi_dt_t *px_mpi_dt_get_slow(MPI_Datatype dt)
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

PX_PMPI(MPI_Get_address)(const void *location, MPI_Aint *address)
{
    PX_CS_ENTER();
    if (!address)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Get_address", "null argument");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Get_address)

PX_PMPI(MPI_Address)(void *location, MPI_Aint *address)
{
    PX_CS_ENTER();
    return PMPI_Get_address(location, address);
}
PX_WEAK(MPI_Address)

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return base + disp; }
#pragma weak MPI_Aint_add = PMPI_Aint_add
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) { return addr1 - addr2; }
#pragma weak MPI_Aint_diff = PMPI_Aint_diff

/* ---------- queries ---------- */

/* Any valid type the user may still name (freed derived types are not). */
static px_mpi_dt_t *px_dt_user_get(MPI_Datatype dt)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    px_dt_obj_t *o = px_dt_obj(d);
    return o && o->user_freed ? NULL : d;
}

#define PX_DT_GET(var, dt, fn)                                                                     \
    px_mpi_dt_t *var = px_dt_user_get(dt);                                                         \
    if (!var)                                                                                      \
    return px_mpi_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype")

PX_PMPI(MPI_Type_size)(MPI_Datatype datatype, int *size)
{
    PX_CS_ENTER();
    PX_DT_GET(d, datatype, "MPI_Type_size");
    if (!size)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_size", "null argument");
    *size = d->size > 0x7fffffff ? MPI_UNDEFINED : (int)d->size;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_size)

PX_PMPI(MPI_Type_size_x)(MPI_Datatype datatype, MPI_Count *size)
{
    PX_CS_ENTER();
    PX_DT_GET(d, datatype, "MPI_Type_size_x");
    if (!size)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_size_x", "null argument");
    *size = d->size;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_size_x)

PX_PMPI(MPI_Type_get_extent)(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    PX_CS_ENTER();
    PX_DT_GET(d, datatype, "MPI_Type_get_extent");
    if (!lb || !extent)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_get_extent", "null argument");
    *lb = d->lb;
    *extent = d->extent;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_get_extent)

PX_PMPI(MPI_Type_get_extent_x)(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    PX_CS_ENTER();
    PX_DT_GET(d, datatype, "MPI_Type_get_extent_x");
    if (!lb || !extent)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_get_extent_x", "null argument");
    *lb = d->lb;
    *extent = d->extent;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_get_extent_x)

PX_PMPI(MPI_Type_get_true_extent)(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    PX_CS_ENTER();
    PX_DT_GET(d, datatype, "MPI_Type_get_true_extent");
    if (!lb || !extent)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_get_true_extent", "null argument");
    *lb = d->true_lb;
    *extent = d->true_extent;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_get_true_extent)

PX_PMPI(MPI_Type_get_true_extent_x)(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    PX_CS_ENTER();
    PX_DT_GET(d, datatype, "MPI_Type_get_true_extent_x");
    if (!lb || !extent)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_get_true_extent_x", "null argument");
    *lb = d->true_lb;
    *extent = d->true_extent;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_get_true_extent_x)

PX_PMPI(MPI_Type_extent)(MPI_Datatype datatype, MPI_Aint *extent)
{
    PX_CS_ENTER();
    PX_DT_GET(d, datatype, "MPI_Type_extent");
    if (!extent)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_extent", "null argument");
    *extent = d->extent;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_extent)

PX_PMPI(MPI_Type_lb)(MPI_Datatype datatype, MPI_Aint *displacement)
{
    PX_CS_ENTER();
    PX_DT_GET(d, datatype, "MPI_Type_lb");
    if (!displacement)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_lb", "null argument");
    *displacement = d->lb;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_lb)

PX_PMPI(MPI_Type_ub)(MPI_Datatype datatype, MPI_Aint *displacement)
{
    PX_CS_ENTER();
    PX_DT_GET(d, datatype, "MPI_Type_ub");
    if (!displacement)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_ub", "null argument");
    *displacement = d->lb + d->extent;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_ub)

PX_PMPI(MPI_Type_get_name)(MPI_Datatype datatype, char *name, int *resultlen)
{
    PX_CS_ENTER();
    PX_DT_GET(d, datatype, "MPI_Type_get_name");
    if (!name || !resultlen)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_get_name", "null argument");
    px_dt_obj_t *o = px_dt_obj(d);
    int n = snprintf(name, MPI_MAX_OBJECT_NAME, "%s",
                     o           ? o->name
                     : d->rename ? d->rename
                                 : d->b->name);
    *resultlen = n < MPI_MAX_OBJECT_NAME ? n : MPI_MAX_OBJECT_NAME - 1;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_get_name)

PX_PMPI(MPI_Type_set_name)(MPI_Datatype datatype, const char *name)
{
    PX_CS_ENTER();
    PX_DT_GET(d, datatype, "MPI_Type_set_name");
    if (!name)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_set_name", "null argument");
    px_dt_obj_t *o = px_dt_obj(d);
    if (!o) { /* a predefined type: this process's name for it */
        char *r = strndup(name, MPI_MAX_OBJECT_NAME - 1);
        if (!r)
            return px_mpi_error(NULL, MPI_ERR_NO_MEM, "MPI_Type_set_name", "out of memory");
        free(d->rename);
        d->rename = r;
        return MPI_SUCCESS;
    }
    snprintf(o->name, sizeof(o->name), "%s", name);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_set_name)

/* ---------- constructors ---------- */

/* Builds from blocks: block i is bl[i] (or blc) copies of type i (or of
 * the single view v0) at byte displacement disp[i]. */
static int px_dt_from_blocks(int n, const px_dt_view_t *v0, const MPI_Datatype *types,
                             const int *bl, int blc, const MPI_Aint *disp, int pad,
                             px_dt_obj_t **o_p)
{
    px_dt_builder_t b;
    memset(&b, 0, sizeof(b));
    for (int i = 0; i < n; i++) {
        px_dt_view_t vi;
        const px_dt_view_t *v = v0;
        if (!v) {
            if (px_dt_view_of(types[i], &vi) != MPI_SUCCESS) {
                free(b.segs);
                return MPI_ERR_TYPE;
            }
            v = &vi;
        }
        px_dt_build_add(&b, v, bl ? bl[i] : blc, disp ? disp[i] : 0);
    }
    *o_p = px_dt_build_finish(&b, pad);
    return *o_p ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* Registers o, records its contents and hands out the handle. */
static int px_dt_publish(px_dt_obj_t *o, const char *fn, int combiner, int ni, const int *ints,
                         int na, const MPI_Aint *aints, int nt, const MPI_Datatype *types,
                         MPI_Datatype *newtype)
{
    int rc = px_dt_set_contents(o, combiner, ni, ints, na, aints, nt, types);
    if (rc == MPI_SUCCESS)
        rc = px_dt_register(o);
    if (rc != MPI_SUCCESS) {
        px_dt_obj_release(o);
        return px_mpi_error(NULL, rc, fn, "out of memory");
    }
    *newtype = o->d.handle;
    return MPI_SUCCESS;
}

static int px_dt_check_old(MPI_Datatype t, px_dt_view_t *v, const char *fn)
{
    if (px_dt_view_of(t, v) != MPI_SUCCESS)
        return px_mpi_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype");
    return MPI_SUCCESS;
}

#define PX_DT_CHECK_INIT_OUT(fn, out)                                                              \
    do {                                                                                           \
        if (!(out))                                                                                \
            return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null newtype");                            \
    } while (0)

static int px_dt_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                         MPI_Datatype *newtype, int combiner, int ni, const int *ints, int na,
                         const MPI_Aint *aints, const char *fn, int stride_in_extents)
{
    px_dt_view_t v;
    PX_DT_CHECK_INIT_OUT(fn, newtype);
    if (count < 0)
        return px_mpi_error(NULL, MPI_ERR_COUNT, fn, "negative count %d", count);
    if (blocklength < 0)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "negative blocklength %d", blocklength);
    int rc = px_dt_check_old(oldtype, &v, fn);
    if (rc)
        return rc;
    MPI_Aint bstride = stride_in_extents ? stride * v.extent : stride;
    px_dt_builder_t b;
    memset(&b, 0, sizeof(b));
    px_dt_build_vector(&b, &v, count, blocklength, bstride);
    px_dt_obj_t *o = px_dt_build_finish(&b, 0);
    if (!o)
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "cannot build the datatype");
    return px_dt_publish(o, fn, combiner, ni, ints, na, aints, 1, &oldtype, newtype);
}

PX_PMPI(MPI_Type_contiguous)(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    int ints[1] = {count};
    px_dt_view_t v;
    PX_DT_CHECK_INIT_OUT("MPI_Type_contiguous", newtype);
    if (count < 0)
        return px_mpi_error(NULL, MPI_ERR_COUNT, "MPI_Type_contiguous", "negative count %d", count);
    int rc = px_dt_check_old(oldtype, &v, "MPI_Type_contiguous");
    if (rc)
        return rc;
    px_dt_obj_t *o;
    rc = px_dt_from_blocks(1, &v, NULL, NULL, count, NULL, 0, &o);
    if (rc)
        return px_mpi_error(NULL, rc, "MPI_Type_contiguous", "cannot build the datatype");
    return px_dt_publish(o, "MPI_Type_contiguous", MPI_COMBINER_CONTIGUOUS, 1, ints, 0, NULL, 1,
                         &oldtype, newtype);
}
PX_WEAK(MPI_Type_contiguous)

PX_PMPI(MPI_Type_vector)
(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    int ints[3] = {count, blocklength, stride};
    return px_dt_hvector(count, blocklength, stride, oldtype, newtype, MPI_COMBINER_VECTOR, 3, ints,
                         0, NULL, "MPI_Type_vector", 1);
}
PX_WEAK(MPI_Type_vector)

PX_PMPI(MPI_Type_create_hvector)
(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    int ints[2] = {count, blocklength};
    return px_dt_hvector(count, blocklength, stride, oldtype, newtype, MPI_COMBINER_HVECTOR, 2,
                         ints, 1, &stride, "MPI_Type_create_hvector", 0);
}
PX_WEAK(MPI_Type_create_hvector)

PX_PMPI(MPI_Type_hvector)
(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    int ints[2] = {count, blocklength};
    return px_dt_hvector(count, blocklength, stride, oldtype, newtype, MPI_COMBINER_HVECTOR, 2,
                         ints, 1, &stride, "MPI_Type_hvector", 0);
}
PX_WEAK(MPI_Type_hvector)

/* Indexed family. bl == NULL: every block has blc elements. Integer
 * displacements (idisp) are in extents of oldtype, byte ones in adisp. */
static int px_dt_indexed(int count, const int *bl, int blc, const int *idisp, const MPI_Aint *adisp,
                         MPI_Datatype oldtype, MPI_Datatype *newtype, int combiner, const char *fn)
{
    px_dt_view_t v;
    PX_DT_CHECK_INIT_OUT(fn, newtype);
    if (count < 0)
        return px_mpi_error(NULL, MPI_ERR_COUNT, fn, "negative count %d", count);
    if (count > 0 && ((!bl && blc < 0) || (!idisp && !adisp)))
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid arguments");
    for (int i = 0; bl && i < count; i++)
        if (bl[i] < 0)
            return px_mpi_error(NULL, MPI_ERR_ARG, fn, "negative blocklength %d", bl[i]);
    int rc = px_dt_check_old(oldtype, &v, fn);
    if (rc)
        return rc;
    size_t n = (size_t)(count ? count : 1);
    MPI_Aint *disp = malloc(sizeof(MPI_Aint) * n);
    int *ints = malloc(sizeof(int) * (2 * n + 2));
    if (!disp || !ints) {
        free(disp);
        free(ints);
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    for (int i = 0; i < count; i++)
        disp[i] = idisp ? (MPI_Aint)idisp[i] * v.extent : adisp[i];
    /* contents as MPI_Type_get_contents lays them out */
    int ni = 0, na = 0;
    ints[ni++] = count;
    if (bl) {
        for (int i = 0; i < count; i++)
            ints[ni++] = bl[i];
    } else {
        ints[ni++] = blc;
    }
    if (idisp) {
        for (int i = 0; i < count; i++)
            ints[ni++] = idisp[i];
    } else {
        na = count;
    }
    px_dt_obj_t *o;
    rc = px_dt_from_blocks(count, &v, NULL, bl, blc, disp, 0, &o);
    free(disp);
    if (rc) {
        free(ints);
        return px_mpi_error(NULL, rc, fn, "cannot build the datatype");
    }
    rc = px_dt_publish(o, fn, combiner, ni, ints, na, adisp, 1, &oldtype, newtype);
    free(ints);
    return rc;
}

PX_PMPI(MPI_Type_indexed)
(int count, const int array_of_blocklengths[], const int array_of_displacements[],
 MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    if (count > 0 && !array_of_blocklengths)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_indexed", "null blocklengths");
    return px_dt_indexed(count, array_of_blocklengths, 0, array_of_displacements, NULL, oldtype,
                         newtype, MPI_COMBINER_INDEXED, "MPI_Type_indexed");
}
PX_WEAK(MPI_Type_indexed)

PX_PMPI(MPI_Type_create_hindexed)
(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
 MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    if (count > 0 && !array_of_blocklengths)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_create_hindexed", "null blocklengths");
    return px_dt_indexed(count, array_of_blocklengths, 0, NULL, array_of_displacements, oldtype,
                         newtype, MPI_COMBINER_HINDEXED, "MPI_Type_create_hindexed");
}
PX_WEAK(MPI_Type_create_hindexed)

PX_PMPI(MPI_Type_hindexed)
(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
 MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    if (count > 0 && !array_of_blocklengths)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_hindexed", "null blocklengths");
    return px_dt_indexed(count, array_of_blocklengths, 0, NULL, array_of_displacements, oldtype,
                         newtype, MPI_COMBINER_HINDEXED, "MPI_Type_hindexed");
}
PX_WEAK(MPI_Type_hindexed)

PX_PMPI(MPI_Type_create_indexed_block)
(int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype,
 MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    return px_dt_indexed(count, NULL, blocklength, array_of_displacements, NULL, oldtype, newtype,
                         MPI_COMBINER_INDEXED_BLOCK, "MPI_Type_create_indexed_block");
}
PX_WEAK(MPI_Type_create_indexed_block)

PX_PMPI(MPI_Type_create_hindexed_block)
(int count, int blocklength, const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
 MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    return px_dt_indexed(count, NULL, blocklength, NULL, array_of_displacements, oldtype, newtype,
                         MPI_COMBINER_HINDEXED_BLOCK, "MPI_Type_create_hindexed_block");
}
PX_WEAK(MPI_Type_create_hindexed_block)

PX_PMPI(MPI_Type_create_struct)
(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
 const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Type_create_struct";
    PX_DT_CHECK_INIT_OUT(fn, newtype);
    if (count < 0)
        return px_mpi_error(NULL, MPI_ERR_COUNT, fn, "negative count %d", count);
    if (count > 0 && (!array_of_blocklengths || !array_of_displacements || !array_of_types))
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    for (int i = 0; i < count; i++) {
        px_dt_view_t v;
        if (array_of_blocklengths[i] < 0)
            return px_mpi_error(NULL, MPI_ERR_ARG, fn, "negative blocklength %d",
                                array_of_blocklengths[i]);
        int rc = px_dt_check_old(array_of_types[i], &v, fn);
        if (rc)
            return rc;
    }
    int *ints = malloc(sizeof(int) * (size_t)(count + 1));
    if (!ints)
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    ints[0] = count;
    for (int i = 0; i < count; i++)
        ints[i + 1] = array_of_blocklengths[i];
    px_dt_obj_t *o;
    int rc = px_dt_from_blocks(count, NULL, array_of_types, array_of_blocklengths, 0,
                               array_of_displacements, 1, &o);
    if (rc) {
        free(ints);
        return px_mpi_error(NULL, rc, fn, "cannot build the datatype");
    }
    rc = px_dt_publish(o, fn, MPI_COMBINER_STRUCT, count + 1, ints, count, array_of_displacements,
                       count, array_of_types, newtype);
    free(ints);
    return rc;
}
PX_WEAK(MPI_Type_create_struct)

PX_PMPI(MPI_Type_struct)
(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
 MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements,
                                   array_of_types, newtype);
}
PX_WEAK(MPI_Type_struct)

PX_PMPI(MPI_Type_create_resized)
(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Type_create_resized";
    px_dt_view_t v;
    PX_DT_CHECK_INIT_OUT(fn, newtype);
    int rc = px_dt_check_old(oldtype, &v, fn);
    if (rc)
        return rc;
    px_dt_obj_t *o;
    rc = px_dt_from_blocks(1, &v, NULL, NULL, 1, NULL, 0, &o);
    if (rc)
        return px_mpi_error(NULL, rc, fn, "cannot build the datatype");
    px_dt_set_bounds(o, lb, extent);
    MPI_Aint aints[2] = {lb, extent};
    return px_dt_publish(o, fn, MPI_COMBINER_RESIZED, 0, NULL, 2, aints, 1, &oldtype, newtype);
}
PX_WEAK(MPI_Type_create_resized)

/* Subarray and darray: the elements a process holds are, per dimension, a
 * sorted list of global indices; the type map walks their product in C
 * (last index fastest) or Fortran order, and the type spans the whole
 * global array: lb 0, extent prod(gsizes) * extent(oldtype). */
static px_dt_obj_t *px_dt_grid(int ndims, const int *gsizes, int *const *idx, const int *nidx,
                               int order, const px_dt_view_t *old)
{
    px_dt_obj_t *t = NULL;
    MPI_Aint stride = old->extent;
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        px_dt_builder_t b;
        memset(&b, 0, sizeof(b));
        px_dt_view_t inner;
        if (t)
            px_dt_view_obj(t, &inner);
        else
            inner = *old;
        for (int i = 0; i < nidx[d]; i++) {
            if (!t) { /* runs of consecutive indices become one block */
                int j = i;
                while (j + 1 < nidx[d] && idx[d][j + 1] == idx[d][j] + 1)
                    j++;
                px_dt_build_add(&b, &inner, j - i + 1, (MPI_Aint)idx[d][i] * stride);
                i = j;
            } else {
                px_dt_build_add(&b, &inner, 1, (MPI_Aint)idx[d][i] * stride);
            }
        }
        px_dt_obj_t *nt = px_dt_build_finish(&b, 0);
        if (t)
            px_dt_obj_release(t);
        if (!nt)
            return NULL;
        t = nt;
        stride *= gsizes[d];
    }
    if (!t) {
        px_dt_builder_t b;
        memset(&b, 0, sizeof(b));
        px_dt_build_add(&b, old, 1, 0);
        t = px_dt_build_finish(&b, 0);
        if (!t)
            return NULL;
    }
    px_dt_set_bounds(t, 0, stride);
    return t;
}

static void px_dt_free_lists(int ndims, int **idx)
{
    for (int d = 0; d < ndims; d++)
        free(idx[d]);
    free(idx);
}

PX_PMPI(MPI_Type_create_subarray)
(int ndims, const int array_of_sizes[], const int array_of_subsizes[], const int array_of_starts[],
 int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Type_create_subarray";
    px_dt_view_t v;
    PX_DT_CHECK_INIT_OUT(fn, newtype);
    if (ndims <= 0)
        return px_mpi_error(NULL, MPI_ERR_DIMS, fn, "invalid ndims %d", ndims);
    if (!array_of_sizes || !array_of_subsizes || !array_of_starts)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid order %d", order);
    for (int d = 0; d < ndims; d++)
        if (array_of_sizes[d] <= 0 || array_of_subsizes[d] <= 0 ||
            array_of_subsizes[d] > array_of_sizes[d] || array_of_starts[d] < 0 ||
            array_of_starts[d] > array_of_sizes[d] - array_of_subsizes[d])
            return px_mpi_error(NULL, MPI_ERR_ARG, fn,
                                "dimension %d: size %d subsize %d start %d is invalid", d,
                                array_of_sizes[d], array_of_subsizes[d], array_of_starts[d]);
    int rc = px_dt_check_old(oldtype, &v, fn);
    if (rc)
        return rc;
    int **idx = calloc((size_t)ndims, sizeof(*idx));
    int *ints = malloc(sizeof(int) * (size_t)(3 * ndims + 2));
    if (!idx || !ints) {
        free(idx);
        free(ints);
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    for (int d = 0; d < ndims; d++) {
        idx[d] = malloc(sizeof(int) * (size_t)array_of_subsizes[d]);
        if (!idx[d]) {
            px_dt_free_lists(ndims, idx);
            free(ints);
            return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
        }
        for (int i = 0; i < array_of_subsizes[d]; i++)
            idx[d][i] = array_of_starts[d] + i;
    }
    px_dt_obj_t *o = px_dt_grid(ndims, array_of_sizes, idx, array_of_subsizes, order, &v);
    px_dt_free_lists(ndims, idx);
    if (!o) {
        free(ints);
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    ints[0] = ndims;
    for (int d = 0; d < ndims; d++) {
        ints[1 + d] = array_of_sizes[d];
        ints[1 + ndims + d] = array_of_subsizes[d];
        ints[1 + 2 * ndims + d] = array_of_starts[d];
    }
    ints[1 + 3 * ndims] = order;
    rc = px_dt_publish(o, fn, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, ints, 0, NULL, 1, &oldtype,
                       newtype);
    free(ints);
    return rc;
}
PX_WEAK(MPI_Type_create_subarray)

PX_PMPI(MPI_Type_create_darray)
(int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
 const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
 MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Type_create_darray";
    px_dt_view_t v;
    PX_DT_CHECK_INIT_OUT(fn, newtype);
    if (size <= 0 || rank < 0 || rank >= size)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid size %d / rank %d", size, rank);
    if (ndims <= 0)
        return px_mpi_error(NULL, MPI_ERR_DIMS, fn, "invalid ndims %d", ndims);
    if (!array_of_gsizes || !array_of_distribs || !array_of_dargs || !array_of_psizes)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid order %d", order);
    long long nprocs = 1;
    for (int d = 0; d < ndims; d++) {
        int g = array_of_gsizes[d], p = array_of_psizes[d], a = array_of_dargs[d];
        int dist = array_of_distribs[d];
        if (g <= 0 || p <= 0)
            return px_mpi_error(NULL, MPI_ERR_ARG, fn, "dimension %d: gsize %d psize %d", d, g, p);
        if (dist != MPI_DISTRIBUTE_BLOCK && dist != MPI_DISTRIBUTE_CYCLIC &&
            dist != MPI_DISTRIBUTE_NONE)
            return px_mpi_error(NULL, MPI_ERR_ARG, fn, "dimension %d: invalid distribution", d);
        if (dist == MPI_DISTRIBUTE_NONE && p != 1)
            return px_mpi_error(NULL, MPI_ERR_ARG, fn,
                                "dimension %d: MPI_DISTRIBUTE_NONE needs psize 1", d);
        if (a != MPI_DISTRIBUTE_DFLT_DARG && a <= 0)
            return px_mpi_error(NULL, MPI_ERR_ARG, fn, "dimension %d: invalid darg %d", d, a);
        if (dist == MPI_DISTRIBUTE_BLOCK && a != MPI_DISTRIBUTE_DFLT_DARG && (long long)a * p < g)
            return px_mpi_error(NULL, MPI_ERR_ARG, fn, "dimension %d: block %d * %d processes < %d",
                                d, a, p, g);
        nprocs *= p;
    }
    if (nprocs != size)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "psizes multiply to %lld, not size %d", nprocs,
                            size);
    int rc = px_dt_check_old(oldtype, &v, fn);
    if (rc)
        return rc;
    int **idx = calloc((size_t)ndims, sizeof(*idx));
    int *nidx = calloc((size_t)ndims, sizeof(int));
    int *ints = malloc(sizeof(int) * (size_t)(4 * ndims + 4));
    if (!idx || !nidx || !ints) {
        free(idx);
        free(nidx);
        free(ints);
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    /* process grid coordinates are row-major whatever the array order */
    int rest = rank, procs = size;
    for (int d = 0; d < ndims; d++) {
        procs /= array_of_psizes[d];
        int coord = rest / procs;
        rest %= procs;
        int g = array_of_gsizes[d], p = array_of_psizes[d], a = array_of_dargs[d];
        int dist = array_of_distribs[d];
        idx[d] = malloc(sizeof(int) * (size_t)g);
        if (!idx[d]) {
            px_dt_free_lists(ndims, idx);
            free(nidx);
            free(ints);
            return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
        }
        for (int i = 0; i < g; i++) {
            int owner;
            if (dist == MPI_DISTRIBUTE_NONE)
                owner = 0;
            else if (dist == MPI_DISTRIBUTE_BLOCK)
                owner = i / (a == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : a);
            else
                owner = (i / (a == MPI_DISTRIBUTE_DFLT_DARG ? 1 : a)) % p;
            if (owner == coord)
                idx[d][nidx[d]++] = i;
        }
    }
    px_dt_obj_t *o = px_dt_grid(ndims, array_of_gsizes, idx, nidx, order, &v);
    px_dt_free_lists(ndims, idx);
    free(nidx);
    if (!o) {
        free(ints);
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    for (int d = 0; d < ndims; d++) {
        ints[3 + d] = array_of_gsizes[d];
        ints[3 + ndims + d] = array_of_distribs[d];
        ints[3 + 2 * ndims + d] = array_of_dargs[d];
        ints[3 + 3 * ndims + d] = array_of_psizes[d];
    }
    ints[3 + 4 * ndims] = order;
    rc = px_dt_publish(o, fn, MPI_COMBINER_DARRAY, 4 * ndims + 4, ints, 0, NULL, 1, &oldtype,
                       newtype);
    free(ints);
    return rc;
}
PX_WEAK(MPI_Type_create_darray)

PX_PMPI(MPI_Type_dup)(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Type_dup";
    PX_DT_CHECK_INIT_OUT(fn, newtype);
    PX_DT_GET(d, oldtype, fn);
    px_dt_obj_t *s = px_dt_obj(d), *o;
    if (s) {
        o = px_dt_obj_dup(s);
        if (!o)
            return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    } else {
        px_dt_view_t v;
        px_dt_view_of(oldtype, &v);
        int rc = px_dt_from_blocks(1, &v, NULL, NULL, 1, NULL, 0, &o);
        if (rc)
            return px_mpi_error(NULL, rc, fn, "cannot build the datatype");
        /* a duplicate of a predefined type keeps its exact bounds */
        o->d.lb = d->lb;
        o->d.extent = d->extent;
        o->ub = d->lb + d->extent;
    }
    o->d.committed = d->committed;
    int rc = px_dt_publish(o, fn, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &oldtype, newtype);
    if (rc != MPI_SUCCESS)
        return rc;
    /* the attributes whose copy callbacks say so (MPI-3.1 6.7.4) */
    rc = px_mpi_type_attr_copy(oldtype, *newtype);
    if (rc != MPI_SUCCESS) {
        PMPI_Type_free(newtype);
        *newtype = MPI_DATATYPE_NULL;
        return px_mpi_error(NULL, rc, fn, "attribute copy callback failed");
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_dup)

PX_PMPI(MPI_Type_commit)(MPI_Datatype *datatype)
{
    PX_CS_ENTER();
    if (!datatype)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_commit", "null argument");
    PX_DT_GET(d, *datatype, "MPI_Type_commit");
    /* layout is flattened at construction; committing only enables use */
    d->committed = 1;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_commit)

PX_PMPI(MPI_Type_free)(MPI_Datatype *datatype)
{
    PX_CS_ENTER();
    if (!datatype)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_free", "null argument");
    PX_DT_GET(d, *datatype, "MPI_Type_free");
    px_dt_obj_t *o = px_dt_obj(d);
    if (!o || o->fixed)
        return px_mpi_error(NULL, MPI_ERR_TYPE, "MPI_Type_free",
                            "cannot free a predefined datatype");
    px_mpi_type_attr_delete_all(*datatype);
    px_dt_user_free(o);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_free)

PX_PMPI(MPI_Type_get_envelope)
(MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes, int *combiner)
{
    PX_CS_ENTER();
    PX_DT_GET(d, datatype, "MPI_Type_get_envelope");
    if (!num_integers || !num_addresses || !num_datatypes || !combiner)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_get_envelope", "null argument");
    px_dt_obj_t *o = px_dt_obj(d);
    if (o && o->nc)
        return px_mpi_error(NULL, MPI_ERR_TYPE, "MPI_Type_get_envelope",
                            "built by a large-count constructor: use MPI_Type_get_envelope_c");
    *num_integers = o ? o->ni : 0;
    *num_addresses = o ? o->na : 0;
    *num_datatypes = o ? o->nt : 0;
    *combiner = o ? o->combiner : MPI_COMBINER_NAMED;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_get_envelope)

int px_dt_contents_out(px_dt_obj_t *o, MPI_Count max_integers, MPI_Count max_addresses,
                       MPI_Count max_datatypes, int *array_of_integers,
                       MPI_Aint *array_of_addresses, MPI_Datatype *array_of_datatypes,
                       const char *fn)
{
    if (max_integers < o->ni || max_addresses < o->na || max_datatypes < o->nt)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "arrays too small (need %d, %d, %d)", o->ni,
                            o->na, o->nt);
    if ((o->ni && !array_of_integers) || (o->na && !array_of_addresses) ||
        (o->nt && !array_of_datatypes))
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    if (o->ni)
        memcpy(array_of_integers, o->ints, sizeof(int) * (size_t)o->ni);
    if (o->na)
        memcpy(array_of_addresses, o->aints, sizeof(MPI_Aint) * (size_t)o->na);
    for (int i = 0; i < o->nt; i++) {
        array_of_datatypes[i] = o->types[i];
        px_dt_obj_t *c = px_dt_obj(px_mpi_dt_get(o->types[i]));
        if (c) {
            /* the caller owns a reference and frees it with MPI_Type_free */
            if (c->user_freed) {
                c->user_freed = 0;
                c->d.committed = c->saved_committed;
            }
            c->urefs++;
            px_dt_obj_retain(c);
        }
    }
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Type_get_contents)
(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
 int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    PX_CS_ENTER();
    const char *fn = "MPI_Type_get_contents";
    PX_DT_GET(d, datatype, fn);
    px_dt_obj_t *o = px_dt_obj(d);
    if (!o)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "predefined datatypes have no contents");
    if (o->nc)
        return px_mpi_error(NULL, MPI_ERR_TYPE, fn,
                            "built by a large-count constructor: use MPI_Type_get_contents_c");
    return px_dt_contents_out(o, max_integers, max_addresses, max_datatypes, array_of_integers,
                              array_of_addresses, array_of_datatypes, fn);
}
PX_WEAK(MPI_Type_get_contents)
