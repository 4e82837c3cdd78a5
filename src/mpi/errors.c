/* Error classes, error handlers and the strings behind them. */
#include "mpi_impl.h"
#include "error_strings.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct px_mpi_errh {
    MPI_Comm_errhandler_function *fn;
    int refs;
} px_mpi_errh_t;

static px_htab_t px_errh_tab;
#define PX_ERRH_DYN 0x94000000u

/* user-defined error classes/codes (MPI_Add_error_class/code) */
#define PX_USER_ERR_BASE 0x40000000 /* above MPI_ERR_LASTCODE's range is not allowed */
static int px_err_next_class = 80;  /* first class after MPICH's predefined ones */
static char *px_err_strings[256];

int px_mpi_status_to_class(px_status_t st)
{
    switch (st) {
    case PX_OK:
        return MPI_SUCCESS;
    case PX_ERR_NO_MEMORY:
        return MPI_ERR_NO_MEM;
    case PX_ERR_INVALID_PARAM:
        return MPI_ERR_ARG;
    case PX_ERR_TRUNCATED:
        return MPI_ERR_TRUNCATE;
    case PX_ERR_PEER_UNREACHABLE:
    case PX_ERR_PEER_DEAD:
        return MPI_ERR_OTHER;
    default:
        return st < 0 ? MPI_ERR_INTERN : MPI_SUCCESS;
    }
}

int px_mpi_error(px_mpi_comm_t *comm, int errclass, const char *fn, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    if (!comm)
        comm = px_mpi_comm_world;
    MPI_Errhandler eh = comm ? comm->errh : MPI_ERRORS_ARE_FATAL;
    if (eh == MPI_ERRORS_RETURN)
        return errclass;
    if (eh != MPI_ERRORS_ARE_FATAL) {
        px_mpi_errh_t *h = px_htab_get(&px_errh_tab, PX_HANDLE_IDX(eh));
        if (h && h->fn) {
            MPI_Comm ch = comm->handle;
            int code = errclass;
            h->fn(&ch, &code);
            return errclass;
        }
    }
    char line[800];
    snprintf(line, sizeof(line), "%s: %s (%s)", fn, msg, px_mpi_error_string(errclass));
    fprintf(stderr, "Plexus fatal error on rank %d: %s\n",
            px_mpi_comm_world ? px_mpi_comm_world->rank : 0, line);
    fflush(stderr);
    if (px_mpi_initialized && !px_mpi_finalized)
        px_boot_abort(errclass ? (errclass & 0xff ? errclass & 0xff : 1) : 1, line);
    exit(1);
}

PX_PMPI(MPI_Error_string)(int errorcode, char *string, int *resultlen)
{
    PX_CS_ENTER();
    const char *s = NULL;
    if (!string || !resultlen)
        return MPI_ERR_ARG;
    if (errorcode >= 80 && errorcode < 80 + 256 && px_err_strings[errorcode - 80])
        s = px_err_strings[errorcode - 80];
    if (!s)
        s = px_mpi_error_string(errorcode);
    int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", s);
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Error_string)

PX_PMPI(MPI_Error_class)(int errorcode, int *errorclass)
{
    PX_CS_ENTER();
    if (!errorclass)
        return MPI_ERR_ARG;
    if (errorcode < 0 || (errorcode > MPI_ERR_LASTCODE))
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Error_class", "invalid error code %d",
                            errorcode);
    *errorclass = errorcode;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Error_class)

PX_PMPI(MPI_Add_error_class)(int *errorclass)
{
    PX_CS_ENTER();
    if (!errorclass)
        return MPI_ERR_ARG;
    if (px_err_next_class >= 80 + 256)
        return MPI_ERR_OTHER;
    *errorclass = px_err_next_class++;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Add_error_class)

PX_PMPI(MPI_Add_error_code)(int errorclass, int *errorcode)
{
    PX_CS_ENTER();
    (void)errorclass;
    return PMPI_Add_error_class(errorcode);
}
PX_WEAK(MPI_Add_error_code)

PX_PMPI(MPI_Add_error_string)(int errorcode, const char *string)
{
    PX_CS_ENTER();
    if (errorcode < 80 || errorcode >= px_err_next_class || !string)
        return MPI_ERR_ARG;
    free(px_err_strings[errorcode - 80]);
    px_err_strings[errorcode - 80] = strdup(string);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Add_error_string)

PX_PMPI(MPI_Comm_create_errhandler)(MPI_Comm_errhandler_function *fn, MPI_Errhandler *eh)
{
    PX_CS_ENTER();
    px_mpi_errh_t *h = calloc(1, sizeof(*h));
    if (!h || !eh)
        return MPI_ERR_ARG;
    h->fn = fn;
    h->refs = 1;
    int idx = px_htab_add(&px_errh_tab, h);
    *eh = (MPI_Errhandler)(PX_ERRH_DYN | (unsigned)idx);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_create_errhandler)

static int px_errh_valid(MPI_Errhandler eh)
{
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN)
        return 1;
    return PX_HANDLE_HI(eh) == PX_ERRH_DYN && px_htab_get(&px_errh_tab, PX_HANDLE_IDX(eh));
}

PX_PMPI(MPI_Comm_set_errhandler)(MPI_Comm comm, MPI_Errhandler eh)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_set_errhandler");
    if (!px_errh_valid(eh))
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Comm_set_errhandler", "invalid error handler");
    c->errh = eh;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_set_errhandler)

PX_PMPI(MPI_Comm_get_errhandler)(MPI_Comm comm, MPI_Errhandler *eh)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_get_errhandler");
    if (!eh)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Comm_get_errhandler", "null argument");
    *eh = c->errh;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_get_errhandler)

PX_PMPI(MPI_Errhandler_free)(MPI_Errhandler *eh)
{
    PX_CS_ENTER();
    if (!eh || !px_errh_valid(*eh))
        return MPI_ERR_ARG;
    /* predefined handlers stay; user ones live as long as the process */
    *eh = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Errhandler_free)

PX_PMPI(MPI_Comm_call_errhandler)(MPI_Comm comm, int errorcode)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_call_errhandler");
    px_mpi_error(c, errorcode, "MPI_Comm_call_errhandler", "error raised by the application");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_call_errhandler)

/* MPI-1 names still used by old programs */
PX_PMPI(MPI_Errhandler_set)(MPI_Comm comm, MPI_Errhandler eh)
{
    PX_CS_ENTER();
    return PMPI_Comm_set_errhandler(comm, eh);
}
PX_WEAK(MPI_Errhandler_set)
PX_PMPI(MPI_Errhandler_get)(MPI_Comm comm, MPI_Errhandler *eh)
{
    PX_CS_ENTER();
    return PMPI_Comm_get_errhandler(comm, eh);
}
PX_WEAK(MPI_Errhandler_get)
