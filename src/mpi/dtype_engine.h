/* Derived datatype engine.
 *
 * A derived type is kept flattened: its type map as a list of runs of one
 * basic type (used for element counts and external32), and the same data as
 * a list of contiguous byte blocks in type-map order, merged where adjacent
 * (used by pack/unpack). Both lists are compressed: a run or block repeated
 * at a constant stride is one entry (px_dt_seg_t), so that the lists grow
 * with the type's structure, not with its number of elements. The px_mpi_dt_t the rest of the MPI layer sees is
 * the first member of px_dt_obj_t. */
#ifndef PX_MPI_DTYPE_ENGINE_H
#define PX_MPI_DTYPE_ENGINE_H

#include "mpi_impl.h"

/* High bits of every derived datatype's handle (predefined ones differ). */
#define PX_DT_DYN 0xcc000000u

/* n consecutive elements of a primitive (never a pair) basic type at off. */
typedef struct px_dt_run {
    MPI_Aint off;
    MPI_Aint n;
    MPI_Datatype basic;
} px_dt_run_t;

/* A run and its copies: reps runs of n elements of basic, the first at
 * off, each stride bytes after the one before (stride 0 when reps is 1).
 * A type map is a list of these, each one's copies in order, so that a
 * vector of a million elements takes one entry, not a million. Blocks of
 * bytes use the same form with basic MPI_BYTE and n the length. */
typedef struct px_dt_seg {
    MPI_Aint off;
    MPI_Aint n;
    MPI_Aint reps, stride;
    MPI_Datatype basic;
} px_dt_seg_t;

typedef struct px_dt_obj {
    px_mpi_dt_t d;       /* first: px_mpi_dt_get hands out &obj->d */
    int refs;            /* user handle, types built on it, requests using it */
    int urefs;           /* references the user holds (handles to free) */
    int user_freed;      /* urefs reached 0 */
    int saved_committed; /* committed state before MPI_Type_free */
    int registered;      /* has a handle in px_mpi_dt_tab */
    int fixed;           /* MPI_Type_create_f90_*: predefined, never freed */
    int combiner;
    int ni, na, nt;
    int *ints;
    MPI_Aint *aints;
    MPI_Datatype *types;
    /* the counts of a large-count constructor (MPI_Type_get_contents_c) */
    MPI_Count nc;
    MPI_Count *counts;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Aint ub, true_ub;
    int mark_lb, mark_ub; /* bounds fixed by MPI_LB/MPI_UB or resized: sticky */
    MPI_Aint align;       /* strictest alignment of the basic types inside */
    px_dt_seg_t *segs;    /* the type map */
    MPI_Aint nsegs;
    MPI_Aint nruns;    /* runs in all, copies counted */
    px_dt_seg_t *blks; /* the same data as contiguous byte blocks, merged where adjacent */
    MPI_Aint nblks;
    MPI_Datatype basic; /* single basic type of all runs, else MPI_DATATYPE_NULL */
    /* the one predefined type (a pair type such as MPI_DOUBLE_INT counting
     * as one) the type map is made of, for predefined reduction operations;
     * MPI_DATATYPE_NULL when it mixes several or has no data */
    MPI_Datatype elem;
} px_dt_obj_t;

/* Read-only description of any type, predefined or derived. */
typedef struct px_dt_view {
    MPI_Aint size, lb, ub, extent, true_lb, true_ub, align;
    int mark_lb, mark_ub;
    int is_lb, is_ub;  /* the MPI_LB / MPI_UB markers themselves */
    MPI_Datatype elem; /* as px_dt_obj_t's */
    const px_dt_seg_t *segs;
    MPI_Aint nsegs, nruns;
    px_dt_seg_t local[2];
} px_dt_view_t;

/* Walks a type map run by run (each copy of a segment is one run):
 *     px_dt_run_t r;
 *     for (px_dt_runit_t it = px_dt_runs(v->segs, v->nsegs); px_dt_runit_next(&it, &r);) */
typedef struct px_dt_runit {
    const px_dt_seg_t *s;
    MPI_Aint i, n, k;
} px_dt_runit_t;

static inline px_dt_runit_t px_dt_runs(const px_dt_seg_t *s, MPI_Aint n)
{
    return (px_dt_runit_t){s, 0, n, 0};
}

static inline int px_dt_runit_next(px_dt_runit_t *it, px_dt_run_t *r)
{
    if (it->i >= it->n)
        return 0;
    const px_dt_seg_t *g = &it->s[it->i];
    *r = (px_dt_run_t){g->off + it->k * g->stride, g->n, g->basic};
    if (++it->k >= g->reps) {
        it->k = 0;
        it->i++;
    }
    return 1;
}

/* The runs of a view one by one in a new array of v->nruns (NULL when out
 * of memory), for code that needs them all at once. */
px_dt_run_t *px_dt_runs_expand(const px_dt_view_t *v);

/* Derived object behind d, or NULL for predefined types. */
static inline px_dt_obj_t *px_dt_obj(const px_mpi_dt_t *d)
{
    return d && !d->builtin ? (px_dt_obj_t *)d : NULL;
}

/* MPI_SUCCESS or MPI_ERR_TYPE (invalid, null or freed handle). */
int px_dt_view_of(MPI_Datatype t, px_dt_view_t *v);
void px_dt_view_obj(const px_dt_obj_t *o, px_dt_view_t *v);

/* Building a type: add entries, then finish. */
typedef struct px_dt_builder {
    px_dt_seg_t *segs;
    MPI_Aint nsegs, cap;
    int have_nlb, have_nub, have_elb, have_eub, have_true;
    MPI_Aint nlb, nub, elb, eub, tlb, tub, align, size;
    int have_elem;
    MPI_Datatype elem;
    int nomem;
} px_dt_builder_t;

/* count consecutive copies of v (extent apart) at byte displacement disp */
void px_dt_build_add(px_dt_builder_t *b, const px_dt_view_t *v, MPI_Aint count, MPI_Aint disp);
/* count blocks of blocklen copies of v, stride bytes apart from 0 */
void px_dt_build_vector(px_dt_builder_t *b, const px_dt_view_t *v, MPI_Aint count,
                        MPI_Aint blocklen, MPI_Aint stride);
/* New unregistered object (refs 1), or NULL when out of memory. pad_struct
 * rounds the extent up to the alignment as C structs are. */
px_dt_obj_t *px_dt_build_finish(px_dt_builder_t *b, int pad_struct);
/* Overrides bounds as MPI_Type_create_resized does. */
void px_dt_set_bounds(px_dt_obj_t *o, MPI_Aint lb, MPI_Aint extent);
/* Gives o a handle; MPI_SUCCESS or MPI_ERR_NO_MEM. */
int px_dt_register(px_dt_obj_t *o);
/* Records the constructor arguments (retains derived types among them). */
int px_dt_set_contents(px_dt_obj_t *o, int combiner, int ni, const int *ints, int na,
                       const MPI_Aint *aints, int nt, const MPI_Datatype *types);
/* Replaces them with a large-count constructor's (datatype_c.c). */
int px_dt_set_large_contents(px_dt_obj_t *o, int combiner, int ni, const int *ints, MPI_Count nc,
                             const MPI_Count *counts, int nt, const MPI_Datatype *types);
/* Hands out o's contents as MPI_Type_get_contents does (the caller owns a
 * reference to each derived type among them). */
int px_dt_contents_out(px_dt_obj_t *o, MPI_Count max_integers, MPI_Count max_addresses,
                       MPI_Count max_datatypes, int *ints, MPI_Aint *aints, MPI_Datatype *types,
                       const char *fn);
void px_dt_obj_retain(px_dt_obj_t *o);
void px_dt_obj_release(px_dt_obj_t *o);
/* Drops the user's reference (MPI_Type_free). */
void px_dt_user_free(px_dt_obj_t *o);
px_dt_obj_t *px_dt_obj_dup(const px_dt_obj_t *o);

/* For the rest of the MPI layer: keep a type alive while a request uses it
 * (no-ops for predefined types). */
void px_mpi_dt_retain(MPI_Datatype dt);
void px_mpi_dt_release(MPI_Datatype dt);

/* Basic elements in `bytes` bytes of data of type d, counting partial
 * items; MPI_UNDEFINED when bytes end inside a basic element. */
MPI_Count px_mpi_dt_count_elements(const px_mpi_dt_t *d, MPI_Count bytes);
/* Packs (out 1) or unpacks (out 0) bytes [from, to) of the packed form of
 * items of d, the items at user in their own layout, the packed form at
 * packed (its byte 0): a message packed or unpacked piece by piece, a
 * partial last item included. */
void px_mpi_dt_range(const px_mpi_dt_t *d, void *user, void *packed, size_t from, size_t to,
                     int out);
/* Scatters `bytes` packed bytes (maybe a partial last item) into dst. */
void px_mpi_dt_unpack_bytes(const px_mpi_dt_t *d, MPI_Count bytes, const void *src, void *dst);

/* Alignment of a primitive basic type. */
MPI_Aint px_dt_basic_align(MPI_Datatype t);

#endif
