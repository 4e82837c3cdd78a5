/* Fortran binding support (see px_fortran.h). */
#include "px_fortran.h"

#include <string.h>

/* The C header's callback macros would expand inside the Fortran names below. */
#undef MPI_NULL_COPY_FN
#undef MPI_NULL_DELETE_FN
#undef MPI_DUP_FN
#undef MPI_COMM_NULL_COPY_FN
#undef MPI_COMM_NULL_DELETE_FN
#undef MPI_COMM_DUP_FN
#undef MPI_TYPE_NULL_COPY_FN
#undef MPI_TYPE_NULL_DELETE_FN
#undef MPI_TYPE_DUP_FN
#undef MPI_WIN_NULL_COPY_FN
#undef MPI_WIN_NULL_DELETE_FN
#undef MPI_WIN_DUP_FN

px_f_priv1_t mpipriv1_;
px_f_priv2_t mpipriv2_;
px_f_privc_t mpiprivc_;
MPI_Fint mpifcmb5_;
MPI_Fint mpifcmb9_;

char *px_f_str_in(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    size_t lead = 0;
    while (lead < len && s[lead] == ' ')
        lead++;
    char *c = malloc(len - lead + 1);
    if (!c)
        abort();
    memcpy(c, s + lead, len - lead);
    c[len - lead] = '\0';
    return c;
}

/* Large enough for any MPI_MAX_* string plus the NUL, or the caller's length
 * (MPI_Info_get writes up to valuelen characters). */
char *px_f_str_tmp(size_t len)
{
    size_t n = len + MPI_MAX_LIBRARY_VERSION_STRING + 1;
    char *c = calloc(1, n);
    if (!c)
        abort();
    return c;
}

void px_f_str_out(char *tmp, char *dst, size_t len)
{
    size_t n = strlen(tmp);
    if (n > len)
        n = len;
    memcpy(dst, tmp, n);
    memset(dst + n, ' ', len - n);
    free(tmp);
}

int px_f_keyval(int keyval)
{
    switch (keyval - 1) {
    case MPI_TAG_UB:
    case MPI_HOST:
    case MPI_IO:
    case MPI_WTIME_IS_GLOBAL:
    case MPI_UNIVERSE_SIZE:
    case MPI_LASTUSEDCODE:
    case MPI_APPNUM:
    case MPI_WIN_BASE:
    case MPI_WIN_SIZE:
    case MPI_WIN_DISP_UNIT:
    case MPI_WIN_CREATE_FLAVOR:
    case MPI_WIN_MODEL:
        return keyval - 1;
    default:
        return keyval;
    }
}

MPI_Aint px_f_attr_value_comm(int keyval, void *v)
{
    switch (keyval) {
    case MPI_TAG_UB:
    case MPI_HOST:
    case MPI_IO:
    case MPI_WTIME_IS_GLOBAL:
    case MPI_UNIVERSE_SIZE:
    case MPI_LASTUSEDCODE:
    case MPI_APPNUM:
        return *(int *)v;
    default:
        return (MPI_Aint)(intptr_t)v;
    }
}

MPI_Aint px_f_attr_value_type(int keyval, void *v)
{
    (void)keyval;
    return (MPI_Aint)(intptr_t)v;
}

MPI_Aint px_f_attr_value_win(int keyval, void *v)
{
    switch (keyval) {
    case MPI_WIN_BASE:
        return (MPI_Aint)(intptr_t)v;
    case MPI_WIN_SIZE:
        return *(MPI_Aint *)v;
    case MPI_WIN_DISP_UNIT:
    case MPI_WIN_CREATE_FLAVOR:
    case MPI_WIN_MODEL:
        return *(int *)v;
    default:
        return (MPI_Aint)(intptr_t)v;
    }
}

px_f_keyval_t *px_f_keyval_new(px_f_copy_fn *copy, px_f_delete_fn *del, MPI_Aint extra)
{
    px_f_keyval_t *k = malloc(sizeof(*k));
    if (!k)
        abort();
    k->copy = copy;
    k->del = del;
    k->extra = extra;
    return k;
}

int px_f_copy_tramp(int oldobj, int keyval, void *extra, void *in, void *out, int *flag)
{
    px_f_keyval_t *k = extra;
    MPI_Fint fobj = oldobj, fkv = keyval, fflag = 0, ierr = MPI_SUCCESS;
    MPI_Aint vin = (MPI_Aint)(intptr_t)in, vout = 0;
    k->copy(&fobj, &fkv, &k->extra, &vin, &vout, &fflag, &ierr);
    *flag = fflag != 0;
    if (*flag)
        *(void **)out = (void *)(intptr_t)vout;
    return ierr;
}

int px_f_delete_tramp(int obj, int keyval, void *val, void *extra)
{
    px_f_keyval_t *k = extra;
    MPI_Fint fobj = obj, fkv = keyval, ierr = MPI_SUCCESS;
    MPI_Aint v = (MPI_Aint)(intptr_t)val;
    k->del(&fobj, &fkv, &v, &k->extra, &ierr);
    return ierr;
}

px_f1_keyval_t *px_f1_keyval_new(px_f1_copy_fn *copy, px_f1_delete_fn *del, MPI_Fint extra)
{
    px_f1_keyval_t *k = malloc(sizeof(*k));
    if (!k)
        abort();
    k->copy = copy;
    k->del = del;
    k->extra = extra;
    return k;
}

int px_f1_copy_tramp(int oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    px_f1_keyval_t *k = extra;
    MPI_Fint fobj = oldcomm, fkv = keyval, fflag = 0, ierr = MPI_SUCCESS;
    MPI_Fint vin = (MPI_Fint)(intptr_t)in, vout = 0;
    k->copy(&fobj, &fkv, &k->extra, &vin, &vout, &fflag, &ierr);
    *flag = fflag != 0;
    if (*flag)
        *(void **)out = (void *)(intptr_t)vout;
    return ierr;
}

int px_f1_delete_tramp(int comm, int keyval, void *val, void *extra)
{
    px_f1_keyval_t *k = extra;
    MPI_Fint fobj = comm, fkv = keyval, ierr = MPI_SUCCESS;
    MPI_Fint v = (MPI_Fint)(intptr_t)val;
    k->del(&fobj, &fkv, &v, &k->extra, &ierr);
    return ierr;
}

/* Predefined Fortran attribute callbacks (MPI_COMM_NULL_COPY_FN, ...). */
#define PX_F_NULL_COPY(l, U)                                                                       \
    void pmpi_##l##_(MPI_Fint *o, MPI_Fint *kv, MPI_Aint *e, MPI_Aint *in, MPI_Aint *out,          \
                     MPI_Fint *flag, MPI_Fint *ierr);                                              \
    void pmpi_##l##_(MPI_Fint *o, MPI_Fint *kv, MPI_Aint *e, MPI_Aint *in, MPI_Aint *out,          \
                     MPI_Fint *flag, MPI_Fint *ierr)                                               \
    {                                                                                              \
        (void)o, (void)kv, (void)e, (void)in, (void)out;                                           \
        *flag = 0;                                                                                 \
        *ierr = MPI_SUCCESS;                                                                       \
    }                                                                                              \
    PX_F_ALIASES(l, U)
#define PX_F_DUP(l, U)                                                                             \
    void pmpi_##l##_(MPI_Fint *o, MPI_Fint *kv, MPI_Aint *e, MPI_Aint *in, MPI_Aint *out,          \
                     MPI_Fint *flag, MPI_Fint *ierr);                                              \
    void pmpi_##l##_(MPI_Fint *o, MPI_Fint *kv, MPI_Aint *e, MPI_Aint *in, MPI_Aint *out,          \
                     MPI_Fint *flag, MPI_Fint *ierr)                                               \
    {                                                                                              \
        (void)o, (void)kv, (void)e;                                                                \
        *out = *in;                                                                                \
        *flag = 1;                                                                                 \
        *ierr = MPI_SUCCESS;                                                                       \
    }                                                                                              \
    PX_F_ALIASES(l, U)
#define PX_F_NULL_DELETE(l, U)                                                                     \
    void pmpi_##l##_(MPI_Fint *o, MPI_Fint *kv, MPI_Aint *v, MPI_Aint *e, MPI_Fint *ierr);         \
    void pmpi_##l##_(MPI_Fint *o, MPI_Fint *kv, MPI_Aint *v, MPI_Aint *e, MPI_Fint *ierr)          \
    {                                                                                              \
        (void)o, (void)kv, (void)v, (void)e;                                                       \
        *ierr = MPI_SUCCESS;                                                                       \
    }                                                                                              \
    PX_F_ALIASES(l, U)

PX_F_NULL_COPY(comm_null_copy_fn, COMM_NULL_COPY_FN)
PX_F_NULL_COPY(type_null_copy_fn, TYPE_NULL_COPY_FN)
PX_F_NULL_COPY(win_null_copy_fn, WIN_NULL_COPY_FN)
PX_F_DUP(comm_dup_fn, COMM_DUP_FN)
PX_F_DUP(type_dup_fn, TYPE_DUP_FN)
PX_F_DUP(win_dup_fn, WIN_DUP_FN)
PX_F_NULL_DELETE(comm_null_delete_fn, COMM_NULL_DELETE_FN)
PX_F_NULL_DELETE(type_null_delete_fn, TYPE_NULL_DELETE_FN)
PX_F_NULL_DELETE(win_null_delete_fn, WIN_NULL_DELETE_FN)

/* MPI-1 callbacks (MPI_Keyval_create): INTEGER attribute values. */
void pmpi_null_copy_fn_(MPI_Fint *o, MPI_Fint *kv, MPI_Fint *e, MPI_Fint *in, MPI_Fint *out,
                        MPI_Fint *flag, MPI_Fint *ierr);
void pmpi_null_copy_fn_(MPI_Fint *o, MPI_Fint *kv, MPI_Fint *e, MPI_Fint *in, MPI_Fint *out,
                        MPI_Fint *flag, MPI_Fint *ierr)
{
    (void)o, (void)kv, (void)e, (void)in, (void)out;
    *flag = 0;
    *ierr = MPI_SUCCESS;
}
PX_F_ALIASES(null_copy_fn, NULL_COPY_FN)
void pmpi_dup_fn_(MPI_Fint *o, MPI_Fint *kv, MPI_Fint *e, MPI_Fint *in, MPI_Fint *out,
                  MPI_Fint *flag, MPI_Fint *ierr);
void pmpi_dup_fn_(MPI_Fint *o, MPI_Fint *kv, MPI_Fint *e, MPI_Fint *in, MPI_Fint *out,
                  MPI_Fint *flag, MPI_Fint *ierr)
{
    (void)o, (void)kv, (void)e;
    *out = *in;
    *flag = 1;
    *ierr = MPI_SUCCESS;
}
PX_F_ALIASES(dup_fn, DUP_FN)
void pmpi_null_delete_fn_(MPI_Fint *o, MPI_Fint *kv, MPI_Fint *v, MPI_Fint *e, MPI_Fint *ierr);
void pmpi_null_delete_fn_(MPI_Fint *o, MPI_Fint *kv, MPI_Fint *v, MPI_Fint *e, MPI_Fint *ierr)
{
    (void)o, (void)kv, (void)v, (void)e;
    *ierr = MPI_SUCCESS;
}
PX_F_ALIASES(null_delete_fn, NULL_DELETE_FN)

/* MPI_F_SYNC_REG(buf): an opaque call is all it takes to make the compiler
 * reload or store buf around nonblocking transfers. */
void pmpi_f_sync_reg_(void *buf);
void pmpi_f_sync_reg_(void *buf) { (void)buf; }
PX_F_ALIASES(f_sync_reg, F_SYNC_REG)
