/* Large-count datatype calls (MPI-4.0 _c). A constructor builds its type
 * with the int constructor when every value fits, else from blocks of
 * px_mpi_big_type (BigMPI's construction: one datatype per block, side by
 * side in a struct, resized to the bounds the constructor defines); either
 * way the type records the call's arguments in the large-count layout
 * (MPI_Type_get_envelope_c, MPI_Type_get_contents_c). The queries return
 * the true MPI_Count. */
#include "dtype_engine.h"

#include <limits.h>
#include <stdlib.h>

/* ---------- queries ---------- */

static px_mpi_dt_t *px_dtc_get(MPI_Datatype dt, const char *fn, int *rc)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    px_dt_obj_t *o = px_dt_obj(d);
    *rc = MPI_SUCCESS;
    if (!d || (o && o->user_freed)) {
        *rc = px_mpi_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype");
        return NULL;
    }
    return d;
}

PX_PMPI(MPI_Type_size_c)(MPI_Datatype datatype, MPI_Count *size)
{
    PX_CS_ENTER();
    int rc;
    px_mpi_dt_t *d = px_dtc_get(datatype, "MPI_Type_size_c", &rc);
    if (!d)
        return rc;
    if (!size)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_size_c", "null argument");
    *size = d->size;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_size_c)

PX_PMPI(MPI_Type_get_extent_c)(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    PX_CS_ENTER();
    int rc;
    px_mpi_dt_t *d = px_dtc_get(datatype, "MPI_Type_get_extent_c", &rc);
    if (!d)
        return rc;
    if (!lb || !extent)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_get_extent_c", "null argument");
    *lb = d->lb;
    *extent = d->extent;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_get_extent_c)

PX_PMPI(MPI_Type_get_true_extent_c)(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    PX_CS_ENTER();
    int rc;
    px_mpi_dt_t *d = px_dtc_get(datatype, "MPI_Type_get_true_extent_c", &rc);
    if (!d)
        return rc;
    if (!lb || !extent)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_get_true_extent_c", "null argument");
    *lb = d->true_lb;
    *extent = d->true_extent;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_get_true_extent_c)

PX_PMPI(MPI_Type_get_envelope_c)
(MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses,
 MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner)
{
    PX_CS_ENTER();
    int rc;
    px_mpi_dt_t *d = px_dtc_get(datatype, "MPI_Type_get_envelope_c", &rc);
    if (!d)
        return rc;
    if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes || !combiner)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_get_envelope_c", "null argument");
    px_dt_obj_t *o = px_dt_obj(d);
    *num_integers = o ? o->ni : 0;
    *num_addresses = o ? o->na : 0;
    *num_large_counts = o ? o->nc : 0;
    *num_datatypes = o ? o->nt : 0;
    *combiner = o ? o->combiner : MPI_COMBINER_NAMED;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_get_envelope_c)

PX_PMPI(MPI_Type_get_contents_c)
(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses, MPI_Count max_large_counts,
 MPI_Count max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
 MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[])
{
    PX_CS_ENTER();
    int rc;
    px_mpi_dt_t *d = px_dtc_get(datatype, "MPI_Type_get_contents_c", &rc);
    if (!d)
        return rc;
    px_dt_obj_t *o = px_dt_obj(d);
    if (!o)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_get_contents_c",
                            "predefined datatypes have no contents");
    if (max_large_counts < o->nc || (o->nc && !array_of_large_counts))
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_get_contents_c",
                            "array of large counts too small or null (need %lld)",
                            (long long)o->nc);
    rc = px_dt_contents_out(o, max_integers, max_addresses, max_datatypes, array_of_integers,
                            array_of_addresses, array_of_datatypes, "MPI_Type_get_contents_c");
    if (rc == MPI_SUCCESS && o->nc)
        memcpy(array_of_large_counts, o->counts, sizeof(MPI_Count) * (size_t)o->nc);
    return rc;
}
PX_WEAK(MPI_Type_get_contents_c)

/* ---------- constructors ---------- */

/* a[0..n) as ints in out: 0 when one does not fit */
static int px_dtc_narrow(MPI_Count n, const MPI_Count *a, int *out)
{
    for (MPI_Count i = 0; i < n; i++) {
        if (a[i] > INT_MAX || a[i] < INT_MIN)
            return 0;
        out[i] = (int)a[i];
    }
    return 1;
}

/* Records the large-count arguments on a type just built (released on
 * failure); the counts are the call's own values in its order. */
static int px_dtc_finish(int rc, MPI_Datatype *newtype, int combiner, int ni, const int *ints,
                         MPI_Count nc, const MPI_Count *counts, int nt, const MPI_Datatype *types,
                         const char *fn)
{
    if (rc != MPI_SUCCESS)
        return rc;
    px_dt_obj_t *o = px_dt_obj(px_mpi_dt_get(*newtype));
    rc =
        o ? px_dt_set_large_contents(o, combiner, ni, ints, nc, counts, nt, types) : MPI_ERR_INTERN;
    if (rc != MPI_SUCCESS) {
        PMPI_Type_free(newtype);
        return px_mpi_error(NULL, rc, fn, "out of memory");
    }
    return MPI_SUCCESS;
}

/* count elements of t, with px_mpi_big_type when they are more than
 * INT_MAX */
static int px_dtc_block(MPI_Count count, MPI_Datatype t, MPI_Datatype *out)
{
    return count > INT_MAX ? px_mpi_big_type(count, t, out)
                           : PMPI_Type_contiguous((int)count, t, out);
}

/* Blocks bl[i] elements of types[i] (or of t) at byte displacement disp[i],
 * as a struct of one datatype per block; struct_like keeps the struct's
 * bounds, else they become those of the indexed family (from the lowest
 * block's lower bound to the highest one's upper bound, no padding). */
static int px_dtc_blocks(MPI_Count n, const MPI_Count *bl, MPI_Count blc, const MPI_Aint *disp,
                         MPI_Datatype t, const MPI_Datatype *types, int struct_like,
                         MPI_Datatype *newtype)
{
    if (n > INT_MAX)
        return MPI_ERR_COUNT;
    size_t m = (size_t)(n ? n : 1);
    MPI_Datatype *blk = malloc(m * sizeof(*blk));
    int *ones = malloc(m * sizeof(int));
    int rc = blk && ones ? MPI_SUCCESS : MPI_ERR_NO_MEM, made = 0, have = 0;
    MPI_Aint lo = 0, hi = 0;
    for (; rc == MPI_SUCCESS && made < (int)n; made++) {
        MPI_Count len = bl ? bl[made] : blc;
        MPI_Datatype ti = types ? types[made] : t;
        ones[made] = 1;
        rc = len < 0 ? MPI_ERR_ARG : px_dtc_block(len, ti, &blk[made]);
        MPI_Aint lb, extent;
        if (rc == MPI_SUCCESS && len > 0 && PMPI_Type_get_extent(ti, &lb, &extent) == 0) {
            MPI_Aint l = disp[made] + lb, h = l + (MPI_Aint)len * extent;
            lo = have && lo < l ? lo : l;
            hi = have && hi > h ? hi : h;
            have = 1;
        }
    }
    if (rc != MPI_SUCCESS)
        made--;
    MPI_Datatype st = MPI_DATATYPE_NULL;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_create_struct((int)n, ones, disp, blk, struct_like ? newtype : &st);
    if (rc == MPI_SUCCESS && !struct_like) {
        rc = PMPI_Type_create_resized(st, lo, hi - lo, newtype);
        PMPI_Type_free(&st);
    }
    for (int i = 0; i < made; i++)
        PMPI_Type_free(&blk[i]);
    free(blk);
    free(ones);
    return rc;
}

PX_PMPI(MPI_Type_contiguous_c)(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Type_contiguous_c";
    int rc = count > INT_MAX ? px_mpi_big_type(count, oldtype, newtype)
                             : PMPI_Type_contiguous(count < 0 ? -1 : (int)count, oldtype, newtype);
    /* px_mpi_big_type commits: a new type is not committed */
    if (rc == MPI_SUCCESS && count > INT_MAX)
        px_mpi_dt_get(*newtype)->committed = 0;
    return px_dtc_finish(rc, newtype, MPI_COMBINER_CONTIGUOUS, 0, NULL, 1, &count, 1, &oldtype, fn);
}
PX_WEAK(MPI_Type_contiguous_c)

/* Vector (stride in extents of oldtype) and hvector (in bytes). */
static int px_dtc_vector(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                         MPI_Datatype oldtype, MPI_Datatype *newtype, int bytes, const char *fn)
{
    int rc;
    if (count <= INT_MAX && blocklength <= INT_MAX && stride <= INT_MAX && stride >= INT_MIN) {
        rc = bytes
                 ? PMPI_Type_create_hvector((int)count, (int)blocklength, stride, oldtype, newtype)
                 : PMPI_Type_vector((int)count, (int)blocklength, (int)stride, oldtype, newtype);
    } else {
        MPI_Aint lb, extent;
        MPI_Datatype blk;
        rc = PMPI_Type_get_extent(oldtype, &lb, &extent);
        if (rc == MPI_SUCCESS && count > INT_MAX)
            rc = px_mpi_error(NULL, MPI_ERR_COUNT, fn, "more than INT_MAX blocks");
        if (rc == MPI_SUCCESS)
            rc = px_dtc_block(blocklength, oldtype, &blk);
        if (rc == MPI_SUCCESS) {
            rc = PMPI_Type_create_hvector((int)count, 1, bytes ? stride : stride * extent, blk,
                                          newtype);
            PMPI_Type_free(&blk);
        }
    }
    MPI_Count counts[3] = {count, blocklength, stride};
    return px_dtc_finish(rc, newtype, bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR, 0, NULL,
                         3, counts, 1, &oldtype, fn);
}

PX_PMPI(MPI_Type_vector_c)
(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
 MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    return px_dtc_vector(count, blocklength, stride, oldtype, newtype, 0, "MPI_Type_vector_c");
}
PX_WEAK(MPI_Type_vector_c)

PX_PMPI(MPI_Type_create_hvector_c)
(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
 MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    return px_dtc_vector(count, blocklength, stride, oldtype, newtype, 1,
                         "MPI_Type_create_hvector_c");
}
PX_WEAK(MPI_Type_create_hvector_c)

/* The indexed family and struct. bl == NULL: every block has blc
 * elements; displacements in extents of oldtype (indexed) or bytes. */
enum {
    PX_DTC_INDEXED,
    PX_DTC_HINDEXED,
    PX_DTC_INDEXED_BLOCK,
    PX_DTC_HINDEXED_BLOCK,
    PX_DTC_STRUCT
};

static const int px_dtc_combiner[] = {MPI_COMBINER_INDEXED, MPI_COMBINER_HINDEXED,
                                      MPI_COMBINER_INDEXED_BLOCK, MPI_COMBINER_HINDEXED_BLOCK,
                                      MPI_COMBINER_STRUCT};

static int px_dtc_indexed(int kind, MPI_Count count, const MPI_Count *bl, MPI_Count blc,
                          const MPI_Count *disp, MPI_Datatype oldtype, const MPI_Datatype *types,
                          MPI_Datatype *newtype, const char *fn)
{
    if (count < 0)
        return px_mpi_error(NULL, MPI_ERR_COUNT, fn, "negative count %lld", (long long)count);
    if (count > INT_MAX)
        return px_mpi_error(NULL, MPI_ERR_COUNT, fn, "more than INT_MAX blocks");
    if (!newtype || (count > 0 && (!disp || (kind != PX_DTC_INDEXED_BLOCK &&
                                             kind != PX_DTC_HINDEXED_BLOCK && !bl))))
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    int n = (int)count,
        bytes = kind == PX_DTC_HINDEXED || kind == PX_DTC_HINDEXED_BLOCK || kind == PX_DTC_STRUCT;
    size_t m = (size_t)(n ? n : 1);
    int *ibl = malloc(m * sizeof(int)), *idisp = malloc(m * sizeof(int));
    MPI_Aint *adisp = malloc(m * sizeof(MPI_Aint));
    MPI_Count *counts = malloc((2 * m + 1) * sizeof(MPI_Count));
    int rc = ibl && idisp && adisp && counts ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    MPI_Aint lb, extent = 1;
    if (rc == MPI_SUCCESS && !bytes && PMPI_Type_get_extent(oldtype, &lb, &extent) != MPI_SUCCESS)
        rc = MPI_ERR_TYPE;
    if (rc != MPI_SUCCESS) {
        free(ibl), free(idisp), free(adisp), free(counts);
        return px_mpi_error(NULL, rc, fn,
                            rc == MPI_ERR_TYPE ? "invalid datatype" : "out of memory");
    }
    for (int i = 0; i < n; i++)
        adisp[i] = (MPI_Aint)disp[i] * (bytes ? 1 : extent);
    int fits = (bl ? px_dtc_narrow(n, bl, ibl) : px_dtc_narrow(1, &blc, ibl)) &&
               (bytes || px_dtc_narrow(n, disp, idisp));
    switch (fits ? kind : -1) {
    case PX_DTC_INDEXED:
        rc = PMPI_Type_indexed(n, ibl, idisp, oldtype, newtype);
        break;
    case PX_DTC_HINDEXED:
        rc = PMPI_Type_create_hindexed(n, ibl, adisp, oldtype, newtype);
        break;
    case PX_DTC_INDEXED_BLOCK:
        rc = PMPI_Type_create_indexed_block(n, ibl[0], idisp, oldtype, newtype);
        break;
    case PX_DTC_HINDEXED_BLOCK:
        rc = PMPI_Type_create_hindexed_block(n, ibl[0], adisp, oldtype, newtype);
        break;
    case PX_DTC_STRUCT:
        rc = PMPI_Type_create_struct(n, ibl, adisp, types, newtype);
        break;
    default:
        rc = px_dtc_blocks(n, bl, blc, adisp, oldtype, types, kind == PX_DTC_STRUCT, newtype);
        if (rc != MPI_SUCCESS)
            rc = px_mpi_error(NULL, rc, fn, "cannot build the datatype");
    }
    /* contents: count, the blocklength(s), the displacements */
    MPI_Count nc = 0;
    counts[nc++] = count;
    if (bl) {
        memcpy(counts + nc, bl, sizeof(MPI_Count) * (size_t)n);
        nc += n;
    } else {
        counts[nc++] = blc;
    }
    memcpy(counts + nc, disp, sizeof(MPI_Count) * (size_t)n);
    nc += n;
    rc = px_dtc_finish(rc, newtype, px_dtc_combiner[kind], 0, NULL, nc, counts, types ? n : 1,
                       types ? types : &oldtype, fn);
    free(ibl), free(idisp), free(adisp), free(counts);
    return rc;
}

PX_PMPI(MPI_Type_indexed_c)
(MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[],
 MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    return px_dtc_indexed(PX_DTC_INDEXED, count, array_of_blocklengths, 0, array_of_displacements,
                          oldtype, NULL, newtype, "MPI_Type_indexed_c");
}
PX_WEAK(MPI_Type_indexed_c)

PX_PMPI(MPI_Type_create_hindexed_c)
(MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[],
 MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    return px_dtc_indexed(PX_DTC_HINDEXED, count, array_of_blocklengths, 0, array_of_displacements,
                          oldtype, NULL, newtype, "MPI_Type_create_hindexed_c");
}
PX_WEAK(MPI_Type_create_hindexed_c)

PX_PMPI(MPI_Type_create_indexed_block_c)
(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
 MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    return px_dtc_indexed(PX_DTC_INDEXED_BLOCK, count, NULL, blocklength, array_of_displacements,
                          oldtype, NULL, newtype, "MPI_Type_create_indexed_block_c");
}
PX_WEAK(MPI_Type_create_indexed_block_c)

PX_PMPI(MPI_Type_create_hindexed_block_c)
(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
 MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    return px_dtc_indexed(PX_DTC_HINDEXED_BLOCK, count, NULL, blocklength, array_of_displacements,
                          oldtype, NULL, newtype, "MPI_Type_create_hindexed_block_c");
}
PX_WEAK(MPI_Type_create_hindexed_block_c)

PX_PMPI(MPI_Type_create_struct_c)
(MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[],
 const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    if (count > 0 && !array_of_types)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_create_struct_c", "null argument");
    return px_dtc_indexed(PX_DTC_STRUCT, count, array_of_blocklengths, 0, array_of_displacements,
                          MPI_DATATYPE_NULL, array_of_types, newtype, "MPI_Type_create_struct_c");
}
PX_WEAK(MPI_Type_create_struct_c)

PX_PMPI(MPI_Type_create_resized_c)
(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    MPI_Count counts[2] = {lb, extent};
    return px_dtc_finish(PMPI_Type_create_resized(oldtype, lb, extent, newtype), newtype,
                         MPI_COMBINER_RESIZED, 0, NULL, 2, counts, 1, &oldtype,
                         "MPI_Type_create_resized_c");
}
PX_WEAK(MPI_Type_create_resized_c)

/* Subarray and darray: a dimension of more than INT_MAX elements is not
 * supported (the element lists of datatype.c are int). */
PX_PMPI(MPI_Type_create_subarray_c)
(int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
 const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Type_create_subarray_c";
    if (ndims <= 0 || !array_of_sizes || !array_of_subsizes || !array_of_starts)
        return PMPI_Type_create_subarray(ndims, NULL, NULL, NULL, order, oldtype, newtype);
    size_t n = (size_t)ndims;
    int *v = malloc(3 * n * sizeof(int));
    MPI_Count *counts = malloc(3 * n * sizeof(MPI_Count));
    if (!v || !counts) {
        free(v), free(counts);
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    memcpy(counts, array_of_sizes, n * sizeof(MPI_Count));
    memcpy(counts + n, array_of_subsizes, n * sizeof(MPI_Count));
    memcpy(counts + 2 * n, array_of_starts, n * sizeof(MPI_Count));
    int rc = px_dtc_narrow((MPI_Count)(3 * n), counts, v)
                 ? PMPI_Type_create_subarray(ndims, v, v + n, v + 2 * n, order, oldtype, newtype)
                 : px_mpi_error(NULL, MPI_ERR_COUNT, fn, "a dimension above INT_MAX elements");
    int ints[2] = {ndims, order};
    rc = px_dtc_finish(rc, newtype, MPI_COMBINER_SUBARRAY, 2, ints, (MPI_Count)(3 * n), counts, 1,
                       &oldtype, fn);
    free(v), free(counts);
    return rc;
}
PX_WEAK(MPI_Type_create_subarray_c)

PX_PMPI(MPI_Type_create_darray_c)
(int size, int rank, int ndims, const MPI_Count array_of_gsizes[], const int array_of_distribs[],
 const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
 MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Type_create_darray_c";
    if (ndims <= 0 || !array_of_gsizes || !array_of_distribs || !array_of_dargs || !array_of_psizes)
        return PMPI_Type_create_darray(size, rank, ndims, NULL, array_of_distribs, array_of_dargs,
                                       array_of_psizes, order, oldtype, newtype);
    size_t n = (size_t)ndims;
    int *g = malloc(n * sizeof(int)), *ints = malloc((3 * n + 4) * sizeof(int));
    if (!g || !ints) {
        free(g), free(ints);
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int rc = px_dtc_narrow(ndims, array_of_gsizes, g)
                 ? PMPI_Type_create_darray(size, rank, ndims, g, array_of_distribs, array_of_dargs,
                                           array_of_psizes, order, oldtype, newtype)
                 : px_mpi_error(NULL, MPI_ERR_COUNT, fn, "a dimension above INT_MAX elements");
    /* size, rank, ndims, distribs, dargs, psizes, order; gsizes are counts */
    ints[0] = size, ints[1] = rank, ints[2] = ndims;
    memcpy(ints + 3, array_of_distribs, n * sizeof(int));
    memcpy(ints + 3 + n, array_of_dargs, n * sizeof(int));
    memcpy(ints + 3 + 2 * n, array_of_psizes, n * sizeof(int));
    ints[3 + 3 * n] = order;
    rc = px_dtc_finish(rc, newtype, MPI_COMBINER_DARRAY, (int)(3 * n + 4), ints, ndims,
                       array_of_gsizes, 1, &oldtype, fn);
    free(g), free(ints);
    return rc;
}
PX_WEAK(MPI_Type_create_darray_c)
