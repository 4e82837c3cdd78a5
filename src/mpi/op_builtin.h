/* Predefined reduction operations (MPI_MAX ... MPI_NO_OP) on predefined types. */
#ifndef PX_MPI_OP_BUILTIN_H
#define PX_MPI_OP_BUILTIN_H

#include <mpi.h>

/* Builtin op handles are 0x58000001 (MPI_MAX) .. 0x5800000e (MPI_NO_OP). */
static inline int px_mpi_op_is_builtin(MPI_Op op)
{
    unsigned u = (unsigned)op;
    return (u & 0xffffff00u) == 0x58000000u && (u & 0xffu) >= 1u && (u & 0xffu) <= 14u;
}

/* MPI_SUCCESS if the predefined op may be applied to the predefined type dt:
 *   MPI_MAX, MPI_MIN            integers, floating point
 *   MPI_SUM, MPI_PROD           integers, floating point, complex
 *   MPI_LAND, MPI_LOR, MPI_LXOR integers, logical
 *   MPI_BAND, MPI_BOR, MPI_BXOR integers, MPI_BYTE
 *   MPI_MAXLOC, MPI_MINLOC      value/index pair types
 *   MPI_REPLACE, MPI_NO_OP      any predefined type except MPI_LB/MPI_UB
 * "integers" are the C, C99 and Fortran integer types and MPI_AINT/OFFSET/COUNT;
 * like MPICH, MPI_CHAR and MPI_CHARACTER are accepted as integers too.
 * MPI_REPLACE and MPI_NO_OP are only meaningful for one-sided accumulates;
 * reductions must reject them before calling this.
 * Returns MPI_ERR_OP for a non-predefined op or an op/type mismatch, and
 * MPI_ERR_TYPE when dt is not a predefined datatype. */
int px_mpi_op_builtin_check(MPI_Op op, MPI_Datatype dt);

/* inout[i] = in[i] op inout[i] for i < count elements of the predefined type dt.
 * The pair (op, dt) must have passed px_mpi_op_builtin_check(); other pairs
 * leave inout unchanged. in and inout must not overlap (except for MPI_REPLACE). */
void px_mpi_op_builtin_apply(MPI_Op op, const void *in, void *inout, MPI_Aint count,
                             MPI_Datatype dt);

/* "MPI_SUM" etc., or NULL for a non-predefined op. */
const char *px_mpi_op_builtin_name(MPI_Op op);

#endif
