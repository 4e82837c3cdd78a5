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
#undef MPI_CONVERSION_FN_NULL
#undef MPI_CONVERSION_FN_NULL_C

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

/* An output string the call may not have given (an error, or MPI_Info_get
 * of a missing key): the caller's variable is left as it was, as in C. */
void px_f_str_result(int given, char *tmp, char *dst, size_t len)
{
    if (given)
        px_f_str_out(tmp, dst, len);
    else
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

/* s into a blank-padded value of length len: at most max characters. */
static void px_f_str_put(const char *s, char *value, size_t len, size_t max)
{
    size_t n = strlen(s);
    if (n > max)
        n = max;
    if (n > len)
        n = len;
    memcpy(value, s, n);
    memset(value + n, ' ', len - n);
}

int px_f_info_get_string(MPI_Fint info, const char *key, size_t keylen, MPI_Fint *buflen,
                         char *value, size_t len, MPI_Fint *flag)
{
    char *k = px_f_str_in(key, keylen);
    int need = 0, f = 0;
    int err = MPI_Info_get_string(info, k, &need, NULL, &f);
    if (err == MPI_SUCCESS && f && *buflen > 0) {
        char *s = malloc((size_t)need);
        if (!s)
            abort();
        err = MPI_Info_get_string(info, k, &need, s, &f);
        if (err == MPI_SUCCESS)
            px_f_str_put(s, value, len, (size_t)*buflen);
        free(s);
    }
    free(k);
    if (err == MPI_SUCCESS) {
        *flag = f != 0;
        if (f)
            *buflen = need - 1;
    }
    return err;
}

int px_f_session_get_nth_pset(MPI_Fint session, MPI_Fint info, MPI_Fint n, MPI_Fint *pset_len,
                              char *name, size_t len)
{
    int need = 0;
    int err = MPI_Session_get_nth_pset(session, info, n, &need, NULL);
    if (err == MPI_SUCCESS && *pset_len > 0) {
        char *s = malloc((size_t)need);
        if (!s)
            abort();
        err = MPI_Session_get_nth_pset(session, info, n, &need, s);
        if (err == MPI_SUCCESS)
            px_f_str_put(s, name, len, (size_t)*pset_len);
        free(s);
    }
    if (err == MPI_SUCCESS)
        *pset_len = need - 1;
    return err;
}

static int px_f_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ')
            return 0;
    return 1;
}

/* The arguments of one command: elements len characters long, step
 * elements apart, up to the first blank one; NULL-terminated, as C's. */
static char **px_f_argv(const char *a, size_t len, size_t step)
{
    size_t n = 0;
    while (!px_f_blank(a + n * step * len, len))
        n++;
    char **v = malloc((n + 1) * sizeof(*v));
    if (!v)
        abort();
    for (size_t i = 0; i < n; i++)
        v[i] = px_f_str_in(a + i * step * len, len);
    v[n] = NULL;
    return v;
}

static void px_f_argv_free(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

int px_f_comm_spawn(const char *cmd, size_t cmdlen, const char *argv, size_t argvlen,
                    MPI_Fint maxprocs, MPI_Fint info, MPI_Fint root, MPI_Fint comm,
                    MPI_Fint *intercomm, MPI_Fint *errcodes)
{
    char *c = px_f_str_in(cmd, cmdlen);
    char **v = argv ? px_f_argv(argv, argvlen, 1) : NULL;
    int err = MPI_Comm_spawn(c, v ? v : MPI_ARGV_NULL, maxprocs, info, root, comm, intercomm,
                             errcodes ? errcodes : MPI_ERRCODES_IGNORE);
    px_f_argv_free(v);
    free(c);
    return err;
}

int px_f_comm_spawn_multiple(MPI_Fint count, const char *cmds, size_t cmdlen, const char *argvs,
                             size_t argvlen, const MPI_Fint *maxprocs, const MPI_Fint *infos,
                             MPI_Fint root, MPI_Fint comm, MPI_Fint *intercomm, MPI_Fint *errcodes)
{
    size_t n = count > 0 ? (size_t)count : 0;
    char **c = calloc(n + 1, sizeof(*c));
    char ***v = argvs ? calloc(n + 1, sizeof(*v)) : NULL;
    if (!c || (argvs && !v))
        abort();
    for (size_t i = 0; i < n; i++) {
        c[i] = px_f_str_in(cmds + i * cmdlen, cmdlen);
        if (v)
            v[i] = px_f_argv(argvs + i * argvlen, argvlen, n);
    }
    int err = MPI_Comm_spawn_multiple(count, c, v ? v : MPI_ARGVS_NULL, maxprocs, infos, root, comm,
                                      intercomm, errcodes ? errcodes : MPI_ERRCODES_IGNORE);
    for (size_t i = 0; i < n; i++) {
        free(c[i]);
        if (v)
            px_f_argv_free(v[i]);
    }
    free(c);
    free(v);
    return err;
}

typedef struct {
    px_f_greq_query_fn *query;
    px_f_greq_free_fn *free;
    px_f_greq_cancel_fn *cancel;
    MPI_Aint *extra;
} px_f_greq_t;

static int px_f_greq_query(void *extra, MPI_Status *status)
{
    px_f_greq_t *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->query(g->extra, status, &ierr);
    return ierr;
}

/* the state is freed after the free callback */
static int px_f_greq_free(void *extra)
{
    px_f_greq_t *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->free(g->extra, &ierr);
    free(g);
    return ierr;
}

static int px_f_greq_cancel(void *extra, int complete)
{
    px_f_greq_t *g = extra;
    MPI_Fint ierr = MPI_SUCCESS, c = complete != 0;
    g->cancel(g->extra, &c, &ierr);
    return ierr;
}

int px_f_grequest_start(px_f_greq_query_fn *query, px_f_greq_free_fn *free_fn,
                        px_f_greq_cancel_fn *cancel, MPI_Aint *extra, MPI_Fint *request)
{
    px_f_greq_t *g = malloc(sizeof(*g));
    if (!g)
        abort();
    *g = (px_f_greq_t){.query = query, .free = free_fn, .cancel = cancel, .extra = extra};
    int err = MPI_Grequest_start(px_f_greq_query, px_f_greq_free, px_f_greq_cancel, g, request);
    if (err != MPI_SUCCESS)
        free(g);
    return err;
}

/* MPI_CONVERSION_FN_NULL(_C): never called (px_f_conv_null turns them into
 * C's NULL), they only have to exist under every name a program may use. */
void pmpi_conversion_fn_null_(void *u, MPI_Fint *t, MPI_Fint *c, void *f, MPI_Offset *p,
                              MPI_Aint *e, MPI_Fint *ierr);
void pmpi_conversion_fn_null_(void *u, MPI_Fint *t, MPI_Fint *c, void *f, MPI_Offset *p,
                              MPI_Aint *e, MPI_Fint *ierr)
{
    (void)u, (void)t, (void)c, (void)f, (void)p, (void)e;
    *ierr = MPI_SUCCESS;
}
PX_F_ALIASES(conversion_fn_null, CONVERSION_FN_NULL)
void pmpi_conversion_fn_null_c_(void *u, MPI_Fint *t, MPI_Count *c, void *f, MPI_Offset *p,
                                MPI_Aint *e, MPI_Fint *ierr);
void pmpi_conversion_fn_null_c_(void *u, MPI_Fint *t, MPI_Count *c, void *f, MPI_Offset *p,
                                MPI_Aint *e, MPI_Fint *ierr)
{
    (void)u, (void)t, (void)c, (void)f, (void)p, (void)e;
    *ierr = MPI_SUCCESS;
}
PX_F_ALIASES(conversion_fn_null_c, CONVERSION_FN_NULL_C)

/* Whether fn is one of the names of a NULL conversion: a program linked
 * without position independence may see another address for an alias
 * than the library does for the function itself. */
static int px_f_conv_null(void *fn)
{
    void *names[] = {(void *)pmpi_conversion_fn_null_,  (void *)mpi_conversion_fn_null_,
                     (void *)mpi_conversion_fn_null__,  (void *)MPI_CONVERSION_FN_NULL,
                     (void *)PMPI_CONVERSION_FN_NULL,   (void *)pmpi_conversion_fn_null_c_,
                     (void *)mpi_conversion_fn_null_c_, (void *)mpi_conversion_fn_null_c__,
                     (void *)MPI_CONVERSION_FN_NULL_C,  (void *)PMPI_CONVERSION_FN_NULL_C,
                     (void *)mpi_conversion_fn_null,    (void *)mpi_conversion_fn_null_c,
                     (void *)pmpi_conversion_fn_null,   (void *)pmpi_conversion_fn_null_c,
                     (void *)pmpi_conversion_fn_null__, (void *)pmpi_conversion_fn_null_c__};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (fn == names[i])
            return 1;
    return 0;
}

/* Registered representations live until MPI_Finalize: so does this. */
typedef struct {
    px_f_conv_fn *read, *write;
    px_f_conv_c_fn *read_c, *write_c;
    px_f_extent_fn *extent;
    MPI_Aint extra;
} px_f_datarep_t;

static int px_f_dr_read(void *userbuf, MPI_Datatype type, int count, void *filebuf,
                        MPI_Offset position, void *extra)
{
    px_f_datarep_t *d = extra;
    MPI_Fint t = type, c = count, ierr = MPI_SUCCESS;
    d->read(userbuf, &t, &c, filebuf, &position, &d->extra, &ierr);
    return ierr;
}

static int px_f_dr_write(void *userbuf, MPI_Datatype type, int count, void *filebuf,
                         MPI_Offset position, void *extra)
{
    px_f_datarep_t *d = extra;
    MPI_Fint t = type, c = count, ierr = MPI_SUCCESS;
    d->write(userbuf, &t, &c, filebuf, &position, &d->extra, &ierr);
    return ierr;
}

static int px_f_dr_read_c(void *userbuf, MPI_Datatype type, MPI_Count count, void *filebuf,
                          MPI_Offset position, void *extra)
{
    px_f_datarep_t *d = extra;
    MPI_Fint t = type, ierr = MPI_SUCCESS;
    d->read_c(userbuf, &t, &count, filebuf, &position, &d->extra, &ierr);
    return ierr;
}

static int px_f_dr_write_c(void *userbuf, MPI_Datatype type, MPI_Count count, void *filebuf,
                           MPI_Offset position, void *extra)
{
    px_f_datarep_t *d = extra;
    MPI_Fint t = type, ierr = MPI_SUCCESS;
    d->write_c(userbuf, &t, &count, filebuf, &position, &d->extra, &ierr);
    return ierr;
}

static int px_f_dr_extent(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    px_f_datarep_t *d = extra;
    MPI_Fint t = type, ierr = MPI_SUCCESS;
    d->extent(&t, extent, &d->extra, &ierr);
    return ierr;
}

static px_f_datarep_t *px_f_datarep_new(px_f_extent_fn *extent_fn, MPI_Aint extra)
{
    px_f_datarep_t *d = calloc(1, sizeof(*d));
    if (!d)
        abort();
    d->extent = extent_fn;
    d->extra = extra;
    return d;
}

int px_f_register_datarep(const char *datarep, size_t len, px_f_conv_fn *read_fn,
                          px_f_conv_fn *write_fn, px_f_extent_fn *extent_fn, MPI_Aint extra)
{
    px_f_datarep_t *d = px_f_datarep_new(extent_fn, extra);
    d->read = px_f_conv_null((void *)read_fn) ? NULL : read_fn;
    d->write = px_f_conv_null((void *)write_fn) ? NULL : write_fn;
    char *name = px_f_str_in(datarep, len);
    int err =
        MPI_Register_datarep(name, d->read ? px_f_dr_read : NULL, d->write ? px_f_dr_write : NULL,
                             extent_fn ? px_f_dr_extent : NULL, d);
    free(name);
    if (err != MPI_SUCCESS)
        free(d);
    return err;
}

int px_f_register_datarep_c(const char *datarep, size_t len, px_f_conv_c_fn *read_fn,
                            px_f_conv_c_fn *write_fn, px_f_extent_fn *extent_fn, MPI_Aint extra)
{
    px_f_datarep_t *d = px_f_datarep_new(extent_fn, extra);
    d->read_c = px_f_conv_null((void *)read_fn) ? NULL : read_fn;
    d->write_c = px_f_conv_null((void *)write_fn) ? NULL : write_fn;
    char *name = px_f_str_in(datarep, len);
    int err = MPI_Register_datarep_c(name, d->read_c ? px_f_dr_read_c : NULL,
                                     d->write_c ? px_f_dr_write_c : NULL,
                                     extent_fn ? px_f_dr_extent : NULL, d);
    free(name);
    if (err != MPI_SUCCESS)
        free(d);
    return err;
}
