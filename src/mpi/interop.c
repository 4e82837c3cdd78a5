/* Language interoperability: statuses between C and Fortran, and the
 * datatypes of Fortran's parameterised kinds (MPI_Type_create_f90_*,
 * MPI_Type_match_size). An f90 type is the sized type of its kind under a
 * handle of its own, made once per (kind, p, r) and kept: predefined
 * (never freed), with the combiner and the integers of its call. */
#include "mpi_impl.h"
#include "dtype_engine.h"

#include <stdlib.h>

/* The Fortran status is the C one, integer for integer (MPICH's layout). */
PX_PMPI(MPI_Status_c2f)(const MPI_Status *c_status, MPI_Fint *f_status)
{
    PX_CS_ENTER();
    if (!c_status || !f_status || c_status == MPI_STATUS_IGNORE)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Status_c2f", "null or ignored status");
    memcpy(f_status, c_status, sizeof(MPI_Fint) * MPI_F_STATUS_SIZE);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Status_c2f)

PX_PMPI(MPI_Status_f2c)(const MPI_Fint *f_status, MPI_Status *c_status)
{
    PX_CS_ENTER();
    if (!f_status || !c_status || c_status == MPI_STATUS_IGNORE)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Status_f2c", "null or ignored status");
    memcpy(c_status, f_status, sizeof(MPI_Fint) * MPI_F_STATUS_SIZE);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Status_f2c)

_Static_assert(sizeof(MPI_Status) == sizeof(MPI_Fint) * MPI_F_STATUS_SIZE,
               "MPI_Status is MPI_F_STATUS_SIZE Fortran integers");

_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Fint) * MPI_F_STATUS_SIZE,
               "TYPE(MPI_Status) is MPI_F_STATUS_SIZE Fortran integers");

/* The Fortran 2008 status (MPI-4.0 section 19.3.5) has the same five
 * integers in the same order as the C and the Fortran INTEGER ones. */
static int px_status_copy(const void *from, void *to, const char *fn)
{
    if (!from || !to || from == MPI_STATUS_IGNORE || to == MPI_STATUS_IGNORE ||
        from == MPI_F08_STATUS_IGNORE || to == MPI_F08_STATUS_IGNORE)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null or ignored status");
    memcpy(to, from, sizeof(MPI_Fint) * MPI_F_STATUS_SIZE);
    return MPI_SUCCESS;
}

#define PX_STATUS_CONV(name, from_t, to_t)                                                         \
    PX_PMPI(name)(const from_t *from, to_t *to)                                                    \
    {                                                                                              \
        PX_CS_ENTER();                                                                             \
        return px_status_copy(from, to, #name);                                                    \
    }                                                                                              \
    PX_WEAK(name)

PX_STATUS_CONV(MPI_Status_c2f08, MPI_Status, MPI_F08_status)
PX_STATUS_CONV(MPI_Status_f082c, MPI_F08_status, MPI_Status)
PX_STATUS_CONV(MPI_Status_f082f, MPI_F08_status, MPI_Fint)
PX_STATUS_CONV(MPI_Status_f2f08, MPI_Fint, MPI_F08_status)

/* Sized types by precision and decimal exponent range, as
 * selected_real_kind and selected_int_kind choose them with gfortran
 * (MPI_UNDEFINED: not constrained). */
static const struct {
    int p, r;
    MPI_Datatype real, complex;
} px_f90_reals[] = {
    {6, 37, MPI_REAL4, MPI_COMPLEX8},
    {15, 307, MPI_REAL8, MPI_COMPLEX16},
    {33, 4931, MPI_REAL16, MPI_COMPLEX32},
};

/* The f90 type of (combiner, p, r) with the layout of `sized`. */
static int px_f90_type(int combiner, int p, int r, MPI_Datatype sized, MPI_Datatype *newtype,
                       const char *fn)
{
    static struct px_f90 {
        int combiner, p, r;
        MPI_Datatype t;
    } made[64];
    static int nmade;
    for (int i = 0; i < nmade; i++)
        if (made[i].combiner == combiner && made[i].p == p && made[i].r == r) {
            *newtype = made[i].t;
            return MPI_SUCCESS;
        }
    MPI_Datatype t;
    int ni = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    int *ints = malloc(sizeof(int) * 2);
    if (nmade == (int)(sizeof(made) / sizeof(made[0])) || !ints ||
        PMPI_Type_dup(sized, &t) != MPI_SUCCESS) {
        free(ints);
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory (or too many f90 types)");
    }
    px_dt_obj_t *o = px_dt_obj(px_mpi_dt_get(t));
    ints[0] = ni == 1 ? r : p;
    ints[1] = r;
    free(o->ints);
    o->ints = ints;
    o->ni = ni;
    o->nt = 0; /* the sized type is predefined: nothing held */
    o->combiner = combiner;
    o->fixed = 1;
    PMPI_Type_get_name(sized, o->name, &(int){0});
    made[nmade++] = (struct px_f90){combiner, p, r, t};
    *newtype = t;
    return MPI_SUCCESS;
}

static int px_f90_real(int p, int r, int complex, MPI_Datatype *newtype, const char *fn)
{
    if (!newtype)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "p and r both MPI_UNDEFINED");
    for (size_t i = 0; i < sizeof(px_f90_reals) / sizeof(px_f90_reals[0]); i++)
        if ((p == MPI_UNDEFINED || p <= px_f90_reals[i].p) &&
            (r == MPI_UNDEFINED || r <= px_f90_reals[i].r))
            return px_f90_type(complex ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, p, r,
                               complex ? px_f90_reals[i].complex : px_f90_reals[i].real, newtype,
                               fn);
    return px_mpi_error(NULL, MPI_ERR_ARG, fn, "no REAL kind has precision %d and range %d", p, r);
}

PX_PMPI(MPI_Type_create_f90_real)(int p, int r, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    return px_f90_real(p, r, 0, newtype, "MPI_Type_create_f90_real");
}
PX_WEAK(MPI_Type_create_f90_real)

PX_PMPI(MPI_Type_create_f90_complex)(int p, int r, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    return px_f90_real(p, r, 1, newtype, "MPI_Type_create_f90_complex");
}
PX_WEAK(MPI_Type_create_f90_complex)

PX_PMPI(MPI_Type_create_f90_integer)(int r, MPI_Datatype *newtype)
{
    PX_CS_ENTER();
    static const struct {
        int r;
        MPI_Datatype t;
    } ints[] = {{2, MPI_INTEGER1}, {4, MPI_INTEGER2}, {9, MPI_INTEGER4}, {18, MPI_INTEGER8}};
    if (!newtype)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_integer", "null argument");
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
        if (r <= ints[i].r)
            return px_f90_type(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, ints[i].t, newtype,
                               "MPI_Type_create_f90_integer");
    return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_integer",
                        "no INTEGER kind has range %d", r);
}
PX_WEAK(MPI_Type_create_f90_integer)

PX_PMPI(MPI_Type_match_size)(int typeclass, int size, MPI_Datatype *datatype)
{
    PX_CS_ENTER();
    static const MPI_Datatype reals[] = {MPI_REAL4, MPI_REAL8, MPI_REAL16};
    static const MPI_Datatype ints[] = {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8};
    static const MPI_Datatype cplx[] = {MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32};
    const MPI_Datatype *list = typeclass == MPI_TYPECLASS_REAL      ? reals
                               : typeclass == MPI_TYPECLASS_INTEGER ? ints
                               : typeclass == MPI_TYPECLASS_COMPLEX ? cplx
                                                                    : NULL;
    int n = typeclass == MPI_TYPECLASS_INTEGER ? 4 : 3;
    if (!datatype || !list)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_match_size", "invalid type class");
    for (int i = 0; i < n; i++) {
        int s;
        if (PMPI_Type_size(list[i], &s) == MPI_SUCCESS && s == size) {
            *datatype = list[i];
            return MPI_SUCCESS;
        }
    }
    return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Type_match_size",
                        "no type of class %d has %d bytes", typeclass, size);
}
PX_WEAK(MPI_Type_match_size)
