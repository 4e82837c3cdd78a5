/* Predefined MPI datatypes: size, extent and layout of every builtin handle.
 *
 * Builtin handles follow the MPICH encoding (see include/mpi.h): 0x4c00SSII
 * with SS the size and II an index, so the lookup is a table access. The
 * value/index pair types MPI_FLOAT_INT ... MPI_LONG_DOUBLE_INT are
 * 0x8c000000..0x8c000004 and have their own small table; the datatype engine
 * must never hand out those values for derived types. */
#ifndef PX_MPI_DTYPE_BUILTIN_H
#define PX_MPI_DTYPE_BUILTIN_H

#include <stddef.h>

#include <mpi.h>

/* What a predefined type holds; reductions are checked against it. */
typedef enum px_dtype_kind {
    PX_DTK_SIGNED,   /* C, C99 and Fortran signed integers, MPI_AINT/OFFSET/COUNT */
    PX_DTK_UNSIGNED, /* unsigned integers */
    PX_DTK_FLOAT,    /* real floating point */
    PX_DTK_COMPLEX,  /* complex floating point */
    PX_DTK_LOGICAL,  /* MPI_C_BOOL, MPI_CXX_BOOL, MPI_LOGICAL */
    PX_DTK_BYTE,     /* MPI_BYTE */
    PX_DTK_CHAR,     /* MPI_CHAR, MPI_WCHAR, MPI_CHARACTER */
    PX_DTK_PAIR,     /* value/index pairs for MPI_MAXLOC/MPI_MINLOC */
    PX_DTK_PACKED,   /* MPI_PACKED */
    PX_DTK_OTHER     /* MPI_LB, MPI_UB markers */
} px_dtype_kind_t;

typedef struct px_dtype_builtin {
    MPI_Datatype handle;
    const char *name; /* what MPI_Type_get_name reports */
    MPI_Aint size;    /* bytes of data (excludes padding) */
    MPI_Aint extent;
    MPI_Aint lb;
    MPI_Aint true_lb;
    MPI_Aint true_extent;
    int kind;                 /* px_dtype_kind_t */
    int is_pair;              /* 1 for the MAXLOC/MINLOC pair types */
    MPI_Datatype pair_first;  /* value type of a pair, else MPI_DATATYPE_NULL */
    MPI_Datatype pair_second; /* index type of a pair, else MPI_DATATYPE_NULL */
    MPI_Aint second_offset;   /* byte offset of the index in a pair, else 0 */
} px_dtype_builtin_t;

/* Entry of a predefined datatype, or NULL if dt is not predefined
 * (MPI_DATATYPE_NULL, MPI_INTEGER16 and derived types give NULL). */
const px_dtype_builtin_t *px_mpi_dtype_builtin(MPI_Datatype dt);

/* Number of predefined datatypes and access to each (0 <= i < count),
 * e.g. for tests and for pxinfo. Aliases (MPI_LONG_LONG, MPI_C_COMPLEX)
 * share the entry of the type they alias. */
int px_mpi_dtype_builtin_count(void);
const px_dtype_builtin_t *px_mpi_dtype_builtin_at(int i);

static inline int px_mpi_dtype_is_builtin(MPI_Datatype dt)
{
    return px_mpi_dtype_builtin(dt) != NULL;
}

#endif
