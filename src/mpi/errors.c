/* Error classes, error handlers and the strings behind them. */
#include "mpi_impl.h"
#include "error_strings.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct px_mpi_errh {
    MPI_Comm_errhandler_function *fn;
    int refs;
} px_mpi_errh_t;

static px_htab_t px_errh_tab;
#define PX_ERRH_DYN 0x94000000u

/* Error classes and codes a program adds (MPI_Add_error_class/code), above
 * MPI_ERR_LASTCODE as the standard wants them (MPICH's layout: the bit
 * above MPI_ERR_LASTCODE marks them). A class is PX_ERR_DYN | i (i in 1 ..
 * PX_ERR_DYN_MAX, low byte only); a code is PX_ERR_DYN | j << 8 (j from
 * 1), its class kept in a table. Each may carry a string. */
#define PX_ERR_DYN 0x40000000
#define PX_ERR_DYN_MAX 255
#define PX_ERR_CODES_MAX 4096
static int px_err_nclass, px_err_ncode;
static int px_err_code_class[PX_ERR_CODES_MAX + 1];
static char *px_err_class_str[PX_ERR_DYN_MAX + 1], *px_err_code_str[PX_ERR_CODES_MAX + 1];
int px_mpi_lastusedcode = MPI_ERR_LASTCODE;

/* Codes that carry a message (file errors name the file and the cause):
 * PX_ERR_MSG | generation << 13 | slot << 7 | class, below MPI_ERR_LASTCODE
 * as MPICH's own codes are; the last PX_ERR_MSG_SLOTS messages are kept, an
 * older code still gives its class's text. */
#define PX_ERR_MSG 0x20000000
#define PX_ERR_MSG_SLOTS 64
static struct {
    int code;
    char text[MPI_MAX_ERROR_STRING];
} px_err_msg[PX_ERR_MSG_SLOTS];
static unsigned px_err_msg_seq;

static int px_err_is_msg(int code)
{
    return code >= 0 && code <= MPI_ERR_LASTCODE && (code & PX_ERR_MSG);
}

int px_mpi_error_code_new(int errclass, const char *fn, const char *msg)
{
    if (errclass <= 0 || errclass > 0x7f)
        return errclass; /* classes a program added keep their own code */
    unsigned seq = px_err_msg_seq++;
    unsigned slot = seq % PX_ERR_MSG_SLOTS, gen = (seq / PX_ERR_MSG_SLOTS) & 0xffff;
    int code = (int)(PX_ERR_MSG | gen << 13 | slot << 7 | (unsigned)errclass);
    px_err_msg[slot].code = code;
    snprintf(px_err_msg[slot].text, sizeof(px_err_msg[slot].text), "%s: %s: %s",
             px_mpi_error_string(errclass), fn, msg);
    return code;
}

/* 1 and its index for a class the program added, 2 for a code, else 0. */
static int px_err_dyn(int code, int *idx)
{
    if ((code & ~0x3fffffff) != PX_ERR_DYN)
        return 0;
    int lo = code & 0xff, hi = (code & 0x3fffffff) >> 8;
    if (!hi && lo >= 1 && lo <= px_err_nclass) {
        *idx = lo;
        return 1;
    }
    if (!lo && hi >= 1 && hi <= px_err_ncode) {
        *idx = hi;
        return 2;
    }
    return 0;
}

/* The class of a valid code, or -1. */
int px_mpi_error_class_of(int code)
{
    int i;
    switch (px_err_dyn(code, &i)) {
    case 1:
        return code;
    case 2:
        return px_err_code_class[i];
    default:
        if (px_err_is_msg(code))
            return code & 0x7f;
        return code >= 0 && code <= MPI_ERR_LASTCODE ? code : -1;
    }
}

/* The string of a code (what MPI_Add_error_string gave for an added one,
 * else ""). */
const char *px_mpi_error_text(int code)
{
    int i;
    switch (px_err_dyn(code, &i)) {
    case 1:
        return px_err_class_str[i] ? px_err_class_str[i] : "";
    case 2:
        return px_err_code_str[i] ? px_err_code_str[i] : "";
    default:
        if (px_err_is_msg(code)) {
            unsigned slot = ((unsigned)code >> 7) % PX_ERR_MSG_SLOTS;
            if (px_err_msg[slot].code == code)
                return px_err_msg[slot].text;
            return px_mpi_error_string(code & 0x7f);
        }
        return px_mpi_error_string(code);
    }
}

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

/* Calls error handler eh of the object whose handle is at obj (an int for
 * a communicator or a window, a pointer for a file) for errclass (or a
 * code); returns it when the handler returns. */
static int px_mpi_error_raise(MPI_Errhandler eh, void *obj, int errclass, const char *fn,
                              const char *msg)
{
    if (eh == MPI_ERRORS_RETURN)
        return errclass;
    if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_ABORT) {
        px_mpi_errh_t *h = px_htab_get(&px_errh_tab, PX_HANDLE_IDX(eh));
        if (h && h->fn) {
            int code = errclass;
            h->fn(obj, &code);
            return errclass;
        }
    }
    char line[800];
    int cls = px_mpi_error_class_of(errclass);
    snprintf(line, sizeof(line), "%s: %s (%s)", fn, msg,
             px_mpi_error_text(cls >= 0 ? cls : errclass));
    if (cls >= 0)
        errclass = cls;
    fprintf(stderr, "Plexus fatal error on rank %d: %s\n",
            px_mpi_comm_world ? px_mpi_comm_world->rank : 0, line);
    fflush(stderr);
    if (px_mpi_rt_up)
        px_boot_abort(errclass ? (errclass & 0xff ? errclass & 0xff : 1) : 1, line);
    exit(1);
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
    int obj = comm ? comm->handle : 0;
    return px_mpi_error_raise(comm ? comm->errh : MPI_ERRORS_ARE_FATAL, &obj, errclass, fn, msg);
}

int px_mpi_error_obj(MPI_Errhandler eh, int handle, int errclass, const char *fn, const char *fmt,
                     ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return px_mpi_error_raise(eh, &handle, errclass, fn, msg);
}

int px_mpi_error_call(MPI_Errhandler eh, void *obj, int code, const char *fn, const char *msg)
{
    return px_mpi_error_raise(eh, obj, code, fn, msg);
}

int px_mpi_error_at(MPI_Errhandler eh, void *obj, int errclass, const char *fn, const char *msg)
{
    return px_mpi_error_raise(eh, obj, px_mpi_error_code_new(errclass, fn, msg), fn, msg);
}

int px_mpi_errh_valid(MPI_Errhandler eh)
{
    if (eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT)
        return 1;
    return PX_HANDLE_HI(eh) == PX_ERRH_DYN && px_htab_get(&px_errh_tab, PX_HANDLE_IDX(eh));
}

PX_PMPI(MPI_Error_string)(int errorcode, char *string, int *resultlen)
{
    PX_CS_ENTER();
    if (!string || !resultlen)
        return MPI_ERR_ARG;
    int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", px_mpi_error_text(errorcode));
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Error_string)

PX_PMPI(MPI_Error_class)(int errorcode, int *errorclass)
{
    PX_CS_ENTER();
    if (!errorclass)
        return MPI_ERR_ARG;
    int c = px_mpi_error_class_of(errorcode);
    if (c < 0)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Error_class", "invalid error code %d",
                            errorcode);
    *errorclass = c;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Error_class)

static void px_err_used(int code)
{
    if (code > px_mpi_lastusedcode)
        px_mpi_lastusedcode = code;
}

PX_PMPI(MPI_Add_error_class)(int *errorclass)
{
    PX_CS_ENTER();
    if (!errorclass)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Add_error_class", "null argument");
    if (px_err_nclass == PX_ERR_DYN_MAX)
        return px_mpi_error(NULL, MPI_ERR_OTHER, "MPI_Add_error_class",
                            "no more than %d classes can be added", PX_ERR_DYN_MAX);
    *errorclass = PX_ERR_DYN | ++px_err_nclass;
    px_err_used(*errorclass);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Add_error_class)

PX_PMPI(MPI_Add_error_code)(int errorclass, int *errorcode)
{
    PX_CS_ENTER();
    if (!errorcode)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Add_error_code", "null argument");
    int i;
    if (px_mpi_error_class_of(errorclass) != errorclass ||
        (errorclass & PX_ERR_DYN && px_err_dyn(errorclass, &i) != 1))
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Add_error_code", "%d is not an error class",
                            errorclass);
    if (px_err_ncode == PX_ERR_CODES_MAX)
        return px_mpi_error(NULL, MPI_ERR_OTHER, "MPI_Add_error_code",
                            "no more than %d codes can be added", PX_ERR_CODES_MAX);
    px_err_code_class[++px_err_ncode] = errorclass;
    *errorcode = PX_ERR_DYN | px_err_ncode << 8;
    px_err_used(*errorcode);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Add_error_code)

PX_PMPI(MPI_Add_error_string)(int errorcode, const char *string)
{
    PX_CS_ENTER();
    int i, kind = px_err_dyn(errorcode, &i);
    if (!kind)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Add_error_string",
                            "%d is not a class or code the program added", errorcode);
    if (!string || strlen(string) >= MPI_MAX_ERROR_STRING)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Add_error_string",
                            "no string, or longer than MPI_MAX_ERROR_STRING");
    char **slot = kind == 1 ? &px_err_class_str[i] : &px_err_code_str[i];
    char *copy = strdup(string);
    if (!copy)
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_string", "out of memory");
    free(*slot);
    *slot = copy;
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

/* MPI-1's name, deprecated: the same handler */
PX_PMPI(MPI_Errhandler_create)(MPI_Handler_function *fn, MPI_Errhandler *eh)
{
    PX_CS_ENTER();
    return PMPI_Comm_create_errhandler(fn, eh);
}
PX_WEAK(MPI_Errhandler_create)

/* A window's handler is called the same way, with the window's handle. */
PX_PMPI(MPI_Win_create_errhandler)(MPI_Win_errhandler_function *fn, MPI_Errhandler *eh)
{
    return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)fn, eh);
}
PX_WEAK(MPI_Win_create_errhandler)

PX_PMPI(MPI_Comm_set_errhandler)(MPI_Comm comm, MPI_Errhandler eh)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_set_errhandler");
    if (!px_mpi_errh_valid(eh))
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
    if (!eh || !px_mpi_errh_valid(*eh))
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
