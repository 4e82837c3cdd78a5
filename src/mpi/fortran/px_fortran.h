/* Fortran binding support: MPICH-compatible common blocks and the helpers the
 * generated wrappers (fortran_wrappers.c, from gen_fortran.py) use. */
#ifndef PX_FORTRAN_H
#define PX_FORTRAN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Same names and layout as MPICH's mpif.h common blocks, so the addresses
 * Fortran passes for MPI_BOTTOM, MPI_IN_PLACE, ... are these objects. */
typedef struct {
    MPI_Fint bottom, in_place, status_ignore[MPI_F_STATUS_SIZE];
} px_f_priv1_t;
typedef struct {
    MPI_Fint statuses_ignore[1][MPI_F_STATUS_SIZE];
    MPI_Fint errcodes_ignore[1];
} px_f_priv2_t;
typedef struct {
    char argvs_null[1][1];
    char argv_null[1];
} px_f_privc_t;

extern px_f_priv1_t mpipriv1_ PLEXUS_API;
extern px_f_priv2_t mpipriv2_ PLEXUS_API;
extern px_f_privc_t mpiprivc_ PLEXUS_API;
extern MPI_Fint mpifcmb5_ PLEXUS_API; /* MPI_UNWEIGHTED */
extern MPI_Fint mpifcmb9_ PLEXUS_API; /* MPI_WEIGHTS_EMPTY */

/* Choice buffer: Fortran MPI_BOTTOM / MPI_IN_PLACE to the C sentinels. */
static inline void *px_f_buf(void *p)
{
    if (p == (void *)&mpipriv1_.bottom)
        return MPI_BOTTOM;
    if (p == (void *)&mpipriv1_.in_place)
        return MPI_IN_PLACE;
    return p;
}

/* MPI_Status is 5 MPI_Fint in both languages; only the ignore markers differ. */
static inline MPI_Status *px_f_status(MPI_Fint *s)
{
    if (s == mpipriv1_.status_ignore)
        return MPI_STATUS_IGNORE;
    if (s == &mpipriv2_.statuses_ignore[0][0])
        return MPI_STATUSES_IGNORE;
    return (MPI_Status *)s;
}

static inline int *px_f_weights(MPI_Fint *w)
{
    if (w == &mpifcmb5_)
        return MPI_UNWEIGHTED;
    if (w == &mpifcmb9_)
        return MPI_WEIGHTS_EMPTY;
    return w;
}

/* MPI_Aint copy of n default INTEGERs (MPI-1 displacement arrays). */
static inline MPI_Aint *px_f_aints(const MPI_Fint *v, MPI_Fint n)
{
    MPI_Aint *a = malloc(sizeof(MPI_Aint) * (n > 0 ? (size_t)n : 1));
    if (!a)
        abort();
    for (MPI_Fint i = 0; i < n; i++)
        a[i] = v[i];
    return a;
}

/* Fortran strings: blank padded, length passed separately. */
char *px_f_str_in(const char *s, size_t len);
char *px_f_str_tmp(size_t len);
void px_f_str_out(char *tmp, char *dst, size_t len);
void px_f_str_result(int given, char *tmp, char *dst, size_t len);

/* Routines with a string in and out whose lengths differ between the
 * languages (C's count the terminating NUL, Fortran's do not), shared by
 * mpif.h and mpi_f08: the value of length len (blank padded) gets at most
 * *buflen characters; a *buflen of 0 only asks for the length. */
int px_f_info_get_string(MPI_Fint info, const char *key, size_t keylen, MPI_Fint *buflen,
                         char *value, size_t len, MPI_Fint *flag);
int px_f_session_get_nth_pset(MPI_Fint session, MPI_Fint info, MPI_Fint n, MPI_Fint *pset_len,
                              char *name, size_t len);

/* MPI_Comm_spawn(_multiple) with Fortran's arrays of strings: each element
 * len characters, blank padded; the arguments of a command end at the
 * first blank element. argv NULL: MPI_ARGV_NULL (MPI_ARGVS_NULL);
 * errcodes NULL: MPI_ERRCODES_IGNORE. In spawn_multiple, argv(i, j) is
 * argument j of command i (column-major, count rows). */
int px_f_comm_spawn(const char *cmd, size_t cmdlen, const char *argv, size_t argvlen,
                    MPI_Fint maxprocs, MPI_Fint info, MPI_Fint root, MPI_Fint comm,
                    MPI_Fint *intercomm, MPI_Fint *errcodes);
int px_f_comm_spawn_multiple(MPI_Fint count, const char *cmds, size_t cmdlen, const char *argvs,
                             size_t argvlen, const MPI_Fint *maxprocs, const MPI_Fint *infos,
                             MPI_Fint root, MPI_Fint comm, MPI_Fint *intercomm, MPI_Fint *errcodes);

/* MPI_Grequest_start with Fortran callbacks (extra_state of kind
 * MPI_ADDRESS_KIND by reference, LOGICAL complete; the status is the C
 * one in both bindings), run through C trampolines. The callbacks get the
 * caller's own extra_state variable, as with MPICH and Open MPI: what they
 * store in it, the program sees. */
typedef void(px_f_greq_query_fn)(MPI_Aint *extra_state, MPI_Status *status, MPI_Fint *ierror);
typedef void(px_f_greq_free_fn)(MPI_Aint *extra_state, MPI_Fint *ierror);
typedef void(px_f_greq_cancel_fn)(MPI_Aint *extra_state, MPI_Fint *complete, MPI_Fint *ierror);
int px_f_grequest_start(px_f_greq_query_fn *query, px_f_greq_free_fn *free_fn,
                        px_f_greq_cancel_fn *cancel, MPI_Aint *extra, MPI_Fint *request);

/* MPI_Register_datarep(_c) with Fortran conversion and extent procedures
 * (the buffers by address, everything else by reference, extra_state of
 * kind MPI_ADDRESS_KIND), run through C trampolines. Fortran's
 * MPI_CONVERSION_FN_NULL(_C) stands for C's. */
typedef void(px_f_conv_fn)(void *userbuf, MPI_Fint *datatype, MPI_Fint *count, void *filebuf,
                           MPI_Offset *position, MPI_Aint *extra_state, MPI_Fint *ierror);
typedef void(px_f_conv_c_fn)(void *userbuf, MPI_Fint *datatype, MPI_Count *count, void *filebuf,
                             MPI_Offset *position, MPI_Aint *extra_state, MPI_Fint *ierror);
typedef void(px_f_extent_fn)(MPI_Fint *datatype, MPI_Aint *extent, MPI_Aint *extra_state,
                             MPI_Fint *ierror);
int px_f_register_datarep(const char *datarep, size_t len, px_f_conv_fn *read_fn,
                          px_f_conv_fn *write_fn, px_f_extent_fn *extent_fn, MPI_Aint extra);
int px_f_register_datarep_c(const char *datarep, size_t len, px_f_conv_c_fn *read_fn,
                            px_f_conv_c_fn *write_fn, px_f_extent_fn *extent_fn, MPI_Aint extra);

/* C keyval of a Fortran one (predefined attributes are C value + 1). */
int px_f_keyval(int keyval);

/* libmpi: the next MPI_*_set_attr or MPI_*_get_attr of this thread comes
 * from Fortran, whose values are integers (C reads one set there through a
 * pointer to it, MPI-4.0 §19.3.7). */
void px_mpi_attr_fortran(void);

/* Value a Fortran program sees for an attribute the C layer returned as v. */
MPI_Aint px_f_attr_value_comm(int keyval, void *v);
MPI_Aint px_f_attr_value_type(int keyval, void *v);
MPI_Aint px_f_attr_value_win(int keyval, void *v);

/* Attribute callbacks as Fortran declares them (all by reference, values of
 * kind MPI_ADDRESS_KIND); the C layer calls them through the trampolines,
 * with the px_f_keyval_t as its extra_state. */
typedef void(px_f_copy_fn)(MPI_Fint *oldobj, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
                           MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierr);
typedef void(px_f_delete_fn)(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Aint *extra,
                             MPI_Fint *ierr);
typedef struct {
    px_f_copy_fn *copy;
    px_f_delete_fn *del;
    MPI_Aint extra;
} px_f_keyval_t;
px_f_keyval_t *px_f_keyval_new(px_f_copy_fn *copy, px_f_delete_fn *del, MPI_Aint extra);
int px_f_copy_tramp(int oldobj, int keyval, void *extra, void *in, void *out, int *flag);
int px_f_delete_tramp(int obj, int keyval, void *val, void *extra);

/* MPI-1 keyvals (MPI_Keyval_create): the same with default INTEGER values. */
typedef void(px_f1_copy_fn)(MPI_Fint *oldcomm, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in,
                            MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierr);
typedef void(px_f1_delete_fn)(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *extra,
                              MPI_Fint *ierr);
typedef struct {
    px_f1_copy_fn *copy;
    px_f1_delete_fn *del;
    MPI_Fint extra;
} px_f1_keyval_t;
px_f1_keyval_t *px_f1_keyval_new(px_f1_copy_fn *copy, px_f1_delete_fn *del, MPI_Fint extra);
int px_f1_copy_tramp(int oldcomm, int keyval, void *extra, void *in, void *out, int *flag);
int px_f1_delete_tramp(int comm, int keyval, void *val, void *extra);

/* The names MPICH exports for one Fortran routine, all bound to pmpi_<l>_.
 * (clang-format does not settle on one layout of a macro of macro calls.) */
/* clang-format off */
#define PX_F_ALIAS(strong, name) \
    extern __typeof__(strong) name __attribute__((weak, alias(#strong)));
#define PX_F_ALIASES(l, U) \
    PX_F_ALIAS(pmpi_##l##_, MPI_##U) \
    PX_F_ALIAS(pmpi_##l##_, PMPI_##U) \
    PX_F_ALIAS(pmpi_##l##_, mpi_##l) \
    PX_F_ALIAS(pmpi_##l##_, mpi_##l##_) \
    PX_F_ALIAS(pmpi_##l##_, mpi_##l##__) \
    PX_F_ALIAS(pmpi_##l##_, pmpi_##l) \
    PX_F_ALIAS(pmpi_##l##_, pmpi_##l##__)
/* clang-format on */

#endif
