/* MPI-4.0 sessions (chapter 11): MPI_Session_init and _finalize, the
 * process sets mpi://WORLD, mpi://SELF and mpix://SHARED (the processes of
 * this machine, as Open MPI names it), groups made from them, and the
 * sessions' error handlers and info. A session is one more user of the
 * runtime (init.c): the first user, session or MPI_Init, brings it up; the
 * last to finalize tears it down (MPI_Finalize) or leaves it at rest for a
 * later session (a session). Communicators come from a session's
 * groups through MPI_Comm_create_from_group (comm.c) and
 * MPI_Intercomm_create_from_groups (intercomm.c). */
#include "mpi_impl.h"
#include "../boot/machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

typedef struct px_mpi_session {
    MPI_Session handle;
    MPI_Errhandler errh;
    int thread_level;
} px_mpi_session_t;

static px_htab_t px_session_tab;
/* MPICH's layout: direct handle (bits 30-31 10) of object kind 14 */
#define PX_SESSION_DYN 0xb8000000u

static const char *const px_psets[] = {"mpi://WORLD", "mpi://SELF", "mpix://SHARED"};
enum { PX_PSET_WORLD, PX_PSET_SELF, PX_PSET_SHARED };
#define PX_NPSETS ((int)(sizeof(px_psets) / sizeof(px_psets[0])))

static const char *const px_thread_names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                              "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

static px_mpi_session_t *px_session_get(MPI_Session h)
{
    if (PX_HANDLE_HI(h) != PX_SESSION_DYN)
        return NULL;
    px_mpi_session_t *s = px_htab_get(&px_session_tab, PX_HANDLE_IDX(h));
    return s && s->handle == h ? s : NULL;
}

/* An invalid session has no handler of its own: the error goes where
 * errors on no object go. */
#define PX_GET_SESSION(var, h, fn)                                                                 \
    px_mpi_session_t *var = px_session_get(h);                                                     \
    if (!var)                                                                                      \
    return px_mpi_error(NULL, MPI_ERR_SESSION, fn, "invalid session")

#define PX_SESSION_ERR(s, cls, fn, ...)                                                            \
    px_mpi_error_obj((s)->errh, (s)->handle, cls, fn, __VA_ARGS__)

/* The index of a process set, -1 if there is none of that name (in any
 * case: programs written for MPICH say "mpi://world"). */
static int px_pset_find(const char *name)
{
    for (int i = 0; name && i < PX_NPSETS; i++)
        if (!strcasecmp(name, px_psets[i]))
            return i;
    return -1;
}

/* The process set a call names (*p_out) and its output argument: checked,
 * errors reported through the session. */
static int px_session_pset(px_mpi_session_t *s, const char *name, const void *out, int *p_out,
                           const char *fn)
{
    if (!out)
        return PX_SESSION_ERR(s, MPI_ERR_ARG, fn, "null argument");
    *p_out = px_pset_find(name);
    if (*p_out < 0)
        return PX_SESSION_ERR(s, MPI_ERR_ARG, fn, "no process set named \"%s\"",
                              name ? name : "(null)");
    return MPI_SUCCESS;
}

/* The members of process set p in world ranks, in order, into world (when
 * not NULL); returns how many, and this process's rank among them in *me. */
static int px_pset_members(int p, int *world, int *me)
{
    const px_mpi_comm_t *w = px_mpi_comm_sworld;
    int n = 0;
    for (int r = 0; r < w->size; r++) {
        int in = p == PX_PSET_WORLD  ? 1
                 : p == PX_PSET_SELF ? r == w->rank
                                     : px_mpi_comm_node_of(w, r) == px_mpi_comm_node_of(w, w->rank);
        if (!in)
            continue;
        if (r == w->rank)
            *me = n;
        if (world)
            world[n] = r;
        n++;
    }
    return n;
}

static int px_info_check(MPI_Info info) { return info == MPI_INFO_NULL || px_mpi_info_valid(info); }

/* "thread_level" of the info given to MPI_Session_init: every level is
 * provided; MPI_THREAD_SINGLE when none is asked for; -1 for a value that
 * names no level. The library's lock is the process's: once the world
 * model, the tool interface or another session has turned it on, every
 * session runs MPI_THREAD_MULTIPLE and says so, as MPICH's do. */
static int px_session_level(MPI_Info info)
{
    char v[64];
    int flag = 0, level = MPI_THREAD_SINGLE;
    if (info != MPI_INFO_NULL &&
        PMPI_Info_get(info, "thread_level", (int)sizeof(v) - 1, v, &flag) == MPI_SUCCESS && flag) {
        for (level = MPI_THREAD_MULTIPLE; level >= MPI_THREAD_SINGLE; level--)
            if (!strcasecmp(v, px_thread_names[level]))
                break;
        if (level < MPI_THREAD_SINGLE)
            return -1;
    }
    return px_cs_on ? MPI_THREAD_MULTIPLE : level;
}

PX_PMPI(MPI_Session_init)(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Session_init";
    if (errhandler != MPI_ERRHANDLER_NULL && !px_mpi_errh_valid(errhandler))
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid error handler");
    /* MPI-4.0 11.3.1: a session's errors are fatal unless it is given a handler */
    MPI_Errhandler eh = errhandler == MPI_ERRHANDLER_NULL ? MPI_ERRORS_ARE_FATAL : errhandler;
    if (!session)
        return px_mpi_error_obj(eh, MPI_SESSION_NULL, MPI_ERR_ARG, fn, "null argument");
    if (!px_info_check(info))
        return px_mpi_error_obj(eh, MPI_SESSION_NULL, MPI_ERR_INFO, fn, "invalid info object");
    int level = px_session_level(info);
    if (level < 0)
        return px_mpi_error_obj(eh, MPI_SESSION_NULL, MPI_ERR_INFO_VALUE, fn,
                                "thread_level is none of MPI_THREAD_SINGLE, _FUNNELED, "
                                "_SERIALIZED, _MULTIPLE");
    px_mpi_session_t *s = calloc(1, sizeof(*s));
    int idx = s ? px_htab_add(&px_session_tab, s) : -1;
    if (idx < 0) {
        free(s);
        return px_mpi_error_obj(eh, MPI_SESSION_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    if (px_mpi_rt_acquire(fn) != MPI_SUCCESS) {
        px_htab_del(&px_session_tab, idx);
        free(s);
        return px_mpi_error_obj(eh, MPI_SESSION_NULL, MPI_ERR_OTHER, fn,
                                "the library was finalized and cannot be initialized again");
    }
    s->handle = (MPI_Session)(PX_SESSION_DYN | (unsigned)idx);
    s->errh = eh;
    s->thread_level = level;
    if (level == MPI_THREAD_MULTIPLE) {
        px_cs_on = 1; /* the library's lock, as MPI_Init_thread turns it on */
        px_boot_share_cpus();
    }
    *session = s->handle;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Session_init)

PX_PMPI(MPI_Session_finalize)(MPI_Session *session)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Session_finalize";
    if (!session)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    PX_GET_SESSION(s, *session, fn);
    px_htab_del(&px_session_tab, PX_HANDLE_IDX(s->handle));
    free(s);
    *session = MPI_SESSION_NULL;
    /* the last user of the runtime leaves it at rest (init.c): a new
     * session may follow, and the job's processes synchronise as they exit */
    px_mpi_rt_release();
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Session_finalize)

PX_PMPI(MPI_Session_get_num_psets)(MPI_Session session, MPI_Info info, int *npset_names)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Session_get_num_psets";
    PX_GET_SESSION(s, session, fn);
    if (!px_info_check(info))
        return PX_SESSION_ERR(s, MPI_ERR_INFO, fn, "invalid info object");
    if (!npset_names)
        return PX_SESSION_ERR(s, MPI_ERR_ARG, fn, "null argument");
    *npset_names = PX_NPSETS;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Session_get_num_psets)

/* *pset_len 0 asks for the length of the name, its terminating null
 * included; otherwise at most *pset_len - 1 characters are copied. */
PX_PMPI(MPI_Session_get_nth_pset)
(MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Session_get_nth_pset";
    PX_GET_SESSION(s, session, fn);
    if (!px_info_check(info))
        return PX_SESSION_ERR(s, MPI_ERR_INFO, fn, "invalid info object");
    if (n < 0 || n >= PX_NPSETS)
        return PX_SESSION_ERR(s, MPI_ERR_ARG, fn, "no process set %d (there are %d)", n, PX_NPSETS);
    if (!pset_len || *pset_len < 0 || (*pset_len > 0 && !pset_name))
        return PX_SESSION_ERR(s, MPI_ERR_ARG, fn, "invalid name buffer");
    int need = (int)strlen(px_psets[n]) + 1;
    if (*pset_len == 0) {
        *pset_len = need;
        return MPI_SUCCESS;
    }
    snprintf(pset_name, (size_t)*pset_len, "%s", px_psets[n]);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Session_get_nth_pset)

/* A new info object holding key = value (the program frees it). */
static int px_session_info1(const char *key, const char *value, MPI_Info *out)
{
    int rc = PMPI_Info_create(out);
    if (rc == MPI_SUCCESS && (rc = PMPI_Info_set(*out, key, value)) != MPI_SUCCESS)
        PMPI_Info_free(out);
    return rc;
}

PX_PMPI(MPI_Session_get_pset_info)(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Session_get_pset_info";
    PX_GET_SESSION(s, session, fn);
    int p, rc = px_session_pset(s, pset_name, info, &p, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    char size[16];
    int me;
    snprintf(size, sizeof(size), "%d", px_pset_members(p, NULL, &me));
    rc = px_session_info1("mpi_size", size, info);
    if (rc != MPI_SUCCESS)
        return PX_SESSION_ERR(s, rc, fn, "cannot make the info object");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Session_get_pset_info)

PX_PMPI(MPI_Session_get_info)(MPI_Session session, MPI_Info *info_used)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Session_get_info";
    PX_GET_SESSION(s, session, fn);
    if (!info_used)
        return PX_SESSION_ERR(s, MPI_ERR_ARG, fn, "null argument");
    int rc = px_session_info1("thread_level", px_thread_names[s->thread_level], info_used);
    if (rc != MPI_SUCCESS)
        return PX_SESSION_ERR(s, rc, fn, "cannot make the info object");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Session_get_info)

PX_PMPI(MPI_Group_from_session_pset)
(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Group_from_session_pset";
    PX_GET_SESSION(s, session, fn);
    int p, rc = px_session_pset(s, pset_name, newgroup, &p, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    int me = 0;
    px_mpi_group_t *g = px_mpi_group_new(px_pset_members(p, NULL, &me));
    if (!g)
        return PX_SESSION_ERR(s, MPI_ERR_NO_MEM, fn, "out of memory");
    px_pset_members(p, g->world, &g->rank);
    *newgroup = px_mpi_group_handle(g);
    if (*newgroup == MPI_GROUP_NULL) {
        px_mpi_group_release(g);
        return PX_SESSION_ERR(s, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Group_from_session_pset)

/* A session's handler is called as a communicator's is, with the session's
 * handle. */
PX_PMPI(MPI_Session_create_errhandler)
(MPI_Session_errhandler_function *session_errhandler_fn, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)session_errhandler_fn,
                                       errhandler);
}
PX_WEAK(MPI_Session_create_errhandler)

PX_PMPI(MPI_Session_set_errhandler)(MPI_Session session, MPI_Errhandler errhandler)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Session_set_errhandler";
    PX_GET_SESSION(s, session, fn);
    if (!px_mpi_errh_valid(errhandler))
        return PX_SESSION_ERR(s, MPI_ERR_ARG, fn, "invalid error handler");
    s->errh = errhandler;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Session_set_errhandler)

PX_PMPI(MPI_Session_get_errhandler)(MPI_Session session, MPI_Errhandler *errhandler)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Session_get_errhandler";
    PX_GET_SESSION(s, session, fn);
    if (!errhandler)
        return PX_SESSION_ERR(s, MPI_ERR_ARG, fn, "null argument");
    *errhandler = s->errh;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Session_get_errhandler)

PX_PMPI(MPI_Session_call_errhandler)(MPI_Session session, int errorcode)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Session_call_errhandler";
    PX_GET_SESSION(s, session, fn);
    PX_SESSION_ERR(s, errorcode, fn, "error raised by the application");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Session_call_errhandler)
