/* MPI_Comm_spawn, MPI_Comm_spawn_multiple and MPI_Comm_get_parent
 * (MPI-3.1 10.3).
 *
 * The root of the spawning group opens a port and starts the children as a
 * job of their own with pxrun, the launcher that started the parent (its
 * path, launcher template and hosts come from the parent's environment,
 * PX_PXRUN*; its server listens where this process reaches its own), or the one installed beside this
 * library for a program started without it. The children get the port's
 * name in PX_PARENT_PORT; their MPI_Init connects to it on their
 * MPI_COMM_WORLD (px_mpi_spawn_init) while the parent's root accepts on it,
 * so the two groups meet as any two jobs do (dynproc.c) and the
 * inter-communicator is the one MPI_Comm_get_parent returns. Several
 * commands (spawn_multiple) are one job: pxrun's ':' form, each command's
 * processes with MPI_APPNUM its index.
 *
 * The launcher is a child process of the root and ends the children if
 * the root's process ends first: it watches a pipe whose other end only
 * the root holds (PX_PXRUN_PARENT_FD; not the death signal of prctl, which
 * follows the thread that forked, and mpi4py spawns from passing threads). Should it end before the children connect (a
 * command that cannot start, a program that never calls MPI_Init within
 * PX_PORT_TIMEOUT), the spawn fails with MPI_ERR_SPAWN at every member.
 * MPI_Finalize of the root waits for the launchers it started to end:
 * finalize is collective over connected processes. */
#include "mpi_impl.h"
#include "../boot/port.h"
#include "../util/clock.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

px_mpi_comm_t *px_mpi_comm_parent;

/* Launchers this process started and has not reaped. */
typedef struct px_spawned {
    pid_t pid;
    int watch; /* the root's end of the launcher's watch pipe */
    struct px_spawned *next;
} px_spawned_t;
static px_spawned_t *px_spawned;

/* A growing argv. */
typedef struct {
    char **v;
    int n, cap, oom;
} px_argv_t;

static void px_argv_add(px_argv_t *a, const char *s)
{
    if (a->oom)
        return;
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? 2 * a->cap : 32;
        char **v = realloc(a->v, sizeof(char *) * (size_t)cap);
        if (!v) {
            a->oom = 1;
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    if (!(a->v[a->n] = strdup(s))) {
        a->oom = 1;
        return;
    }
    a->v[++a->n] = NULL;
}

static void px_argv_free(px_argv_t *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
}

/* pxrun: the parent's, else the one installed beside this library. */
static int px_spawn_pxrun(char *out, size_t len)
{
    const char *e = getenv("PX_PXRUN");
    Dl_info di;
    if (e && *e) {
        snprintf(out, len, "%s", e);
    } else if (dladdr((void *)px_spawn_pxrun, &di) && di.dli_fname && strchr(di.dli_fname, '/')) {
        char lib[PATH_MAX];
        snprintf(lib, sizeof(lib), "%s", di.dli_fname);
        *strrchr(lib, '/') = 0;
        snprintf(out, len, "%s/../bin/pxrun", lib);
    } else {
        return -1;
    }
    return access(out, X_OK);
}

/* The children's pxrun command: placement and launcher like the parent's
 * (or the info's "host" / "hostfile"), the port, then each command with
 * its count and arguments, separated by ':'. */
static void px_spawn_argv(px_argv_t *a, const char *pxrun, const char *port, int count,
                          char *cmds[], char **argvs[], const int np[], const MPI_Info infos[])
{
    char buf[64];
    const char *host = NULL, *hostfile = NULL;
    for (int i = 0; i < count && !host && !hostfile; i++) {
        host = px_mpi_info_value(infos ? infos[i] : MPI_INFO_NULL, "host");
        hostfile = px_mpi_info_value(infos ? infos[i] : MPI_INFO_NULL, "hostfile");
    }
    const char *hosts = getenv("PX_PXRUN_HOSTS"), *launcher = getenv("PX_PXRUN_LAUNCHER");
    /* the children reach their launcher's server where this process
     * reaches its own (loopback: pxrun picks, by where the children run) */
    const char *iface = px_boot_local_addr();
    if (iface && !strncmp(iface, "127.", 4))
        iface = NULL;
    px_argv_add(a, pxrun);
    /* a program that never calls MPI_Init ends the children's job */
    snprintf(buf, sizeof(buf), "%g", px_params.port_timeout);
    px_argv_add(a, "--connect-timeout");
    px_argv_add(a, buf);
    if (host || hostfile || (hosts && *hosts)) {
        px_argv_add(a, hostfile ? "--hostfile" : "--hosts");
        px_argv_add(a, hostfile ? hostfile : host ? host : hosts);
    }
    if (launcher && *launcher) {
        px_argv_add(a, "--launcher");
        px_argv_add(a, launcher);
    }
    if (iface && *iface) {
        px_argv_add(a, "--bootstrap-iface");
        px_argv_add(a, iface);
    }
    char *pp = malloc(strlen(port) + 32);
    if (pp) {
        sprintf(pp, "PX_PARENT_PORT=%s", port);
        px_argv_add(a, "--env");
        px_argv_add(a, pp);
        free(pp);
    } else {
        a->oom = 1;
    }
    for (int i = 0; i < count; i++) {
        if (i)
            px_argv_add(a, ":");
        snprintf(buf, sizeof(buf), "%d", np[i]);
        px_argv_add(a, "-n");
        px_argv_add(a, buf);
        px_argv_add(a, "--");
        px_argv_add(a, cmds[i]);
        for (char **p = argvs && argvs[i] != MPI_ARGV_NULL ? argvs[i] : NULL; p && *p; p++)
            px_argv_add(a, *p);
    }
}

/* The launcher's environment: this process's, without the variables of
 * this job's launcher (the children's pxrun sets its own). */
static char **px_spawn_env(void)
{
    int n = 0;
    while (environ[n])
        n++;
    char **v = calloc((size_t)n + 2, sizeof(char *)); /* and PX_PXRUN_PARENT_FD */
    if (!v)
        return NULL;
    for (int i = 0, k = 0; i < n; i++) {
        char name[64];
        size_t l = strcspn(environ[i], "=");
        snprintf(name, sizeof(name), "%.*s", (int)(l < sizeof(name) ? l : sizeof(name) - 1),
                 environ[i]);
        if (!px_param_is_launcher_var(name))
            v[k++] = environ[i];
    }
    return v;
}

/* Starts the launcher; *pid_p its process, *watch_p the root's end of the
 * pipe whose end (the root's process ending) ends the children. */
static px_status_t px_spawn_start(char **argv, const char *wdir, pid_t *pid_p, int *watch_p,
                                  char *why, size_t wlen)
{
    char **env = px_spawn_env(), var[48];
    int pfd[2] = {-1, -1};
    if (!env || pipe2(pfd, O_CLOEXEC) < 0) {
        free(env);
        snprintf(why, wlen, "cannot start the children: %s", strerror(errno));
        return PX_ERR_NO_MEMORY;
    }
    int n = 0;
    while (env[n])
        n++;
    snprintf(var, sizeof(var), "PX_PXRUN_PARENT_FD=%d", pfd[0]);
    env[n] = var; /* px_spawn_env left room for one */
    env[n + 1] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        /* only async-signal-safe calls from here: the parent may have threads */
        fcntl(pfd[0], F_SETFD, 0);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            dup2(nul, STDIN_FILENO);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (wdir && chdir(wdir) < 0)
            _exit(126);
        execve(argv[0], argv, env);
        _exit(127);
    }
    int err = errno;
    free(env);
    close(pfd[0]);
    if (pid < 0) {
        close(pfd[1]);
        snprintf(why, wlen, "cannot start %s: %s", argv[0], strerror(err));
        return PX_ERR_IO;
    }
    *pid_p = pid;
    *watch_p = pfd[1];
    return PX_OK;
}

/* The root's side: starts the children and waits for them to connect to
 * the port. *fd_p the socket of the meeting. */
static px_status_t px_spawn_root(px_port_t *port, int count, char *cmds[], char **argvs[],
                                 const int np[], const MPI_Info infos[], int *fd_p, char *why,
                                 size_t wlen)
{
    char pxrun[PATH_MAX];
    if (px_spawn_pxrun(pxrun, sizeof(pxrun))) {
        snprintf(why, wlen,
                 "no launcher to start the children with: PX_PXRUN is not set and %.200s is not "
                 "executable",
                 pxrun);
        return PX_ERR_NOT_FOUND;
    }
    px_argv_t a = {0};
    px_spawn_argv(&a, pxrun, px_port_name(port), count, cmds, argvs, np, infos);
    const char *wdir = px_mpi_info_value(infos ? infos[0] : MPI_INFO_NULL, "wdir");
    pid_t pid = -1;
    int watch = -1;
    px_status_t st = a.oom ? PX_ERR_NO_MEMORY : px_spawn_start(a.v, wdir, &pid, &watch, why, wlen);
    px_argv_free(&a);
    if (st != PX_OK)
        return st;
    px_debug("mpi", "spawn: launcher pid %d started for %d command(s)", (int)pid, count);
    for (;;) {
        st = px_port_accept(port, 200, px_mpi_dyn_idle, NULL, fd_p);
        if (st != PX_ERR_TIMEOUT)
            break;
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            close(watch);
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                snprintf(why, wlen,
                         "the children ended without connecting to their parent: a spawned "
                         "program must call MPI_Init or MPI_Init_thread (MPI-4.1 has a spawned "
                         "process reach its parent through the World Model, not sessions)");
            else
                snprintf(why, wlen,
                         "the children's launcher ended (%s %d) before they connected; its "
                         "messages say why (a command that cannot start, or that does not call "
                         "MPI_Init)",
                         WIFEXITED(status) ? "exit code" : "signal",
                         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            return PX_ERR_NOT_FOUND;
        }
    }
    if (st != PX_OK) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        close(watch);
        snprintf(why, wlen, "waiting for the children: %s", px_status_string(st));
        return st;
    }
    px_spawned_t *s = malloc(sizeof(*s));
    if (s) {
        s->pid = pid;
        s->watch = watch;
        s->next = px_spawned;
        px_spawned = s;
    } /* else the launcher runs on, unwatched, and is not waited for */
    return PX_OK;
}

/* Collective over comm: the root's arguments only count there. */
static int px_spawn(int count, char *cmds[], char **argvs[], const int np[], const MPI_Info infos[],
                    int root, MPI_Comm comm, MPI_Comm *intercomm, int errcodes[], const char *fn)
{
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    int rc = px_mpi_dyn_check(c, MPI_INFO_NULL, root, intercomm, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    *intercomm = MPI_COMM_NULL;
    /* the root's outcome, the number of children and why it failed */
    struct {
        int st, n;
        char why[400];
    } out = {PX_OK, 0, ""};
    px_port_t *port = NULL;
    int fd = -1;
    char name[PX_PORT_NAME_MAX];
    if (c->rank == root) {
        for (int i = 0; i < count && out.st == PX_OK; i++) {
            if (!cmds || !cmds[i] || !*cmds[i] || !np || np[i] <= 0) {
                snprintf(out.why, sizeof(out.why),
                         "command %d: a command and a positive number of processes are needed", i);
                out.st = PX_ERR_INVALID_PARAM;
            } else {
                out.n += np[i];
            }
            if (infos && infos[i] != MPI_INFO_NULL && !px_mpi_info_valid(infos[i])) {
                snprintf(out.why, sizeof(out.why), "command %d: invalid info object", i);
                out.st = PX_ERR_INVALID_PARAM;
            }
        }
        if (out.st == PX_OK && count < 1) {
            snprintf(out.why, sizeof(out.why), "count must be at least 1");
            out.st = PX_ERR_INVALID_PARAM;
        }
        if (out.st == PX_OK) {
            out.st = px_port_open(px_boot_local_addr(), &port, name);
            if (out.st != PX_OK)
                snprintf(out.why, sizeof(out.why), "cannot open a port for the children: %s",
                         px_status_string(out.st));
        }
        if (out.st == PX_OK)
            out.st =
                px_spawn_root(port, count, cmds, argvs, np, infos, &fd, out.why, sizeof(out.why));
    }
    rc = px_mpi_coll_bcast(&out, (int)sizeof(out), MPI_BYTE, root, c);
    if (rc == MPI_SUCCESS && out.st == PX_OK) {
        /* the children's MPI_Init connects; they go second in a merge */
        rc =
            px_mpi_dyn_meet(c, root, fd, PX_OK, 1, 1, c->rank == root ? name : NULL, intercomm, fn);
    } else if (rc == MPI_SUCCESS) {
        /* a code whose MPI_Error_string says why, at every member */
        int obj = c->handle;
        rc = px_mpi_error_at(c->errh, &obj,
                             out.st == PX_ERR_INVALID_PARAM ? MPI_ERR_ARG : MPI_ERR_SPAWN, fn,
                             out.why);
    }
    if (fd >= 0)
        close(fd);
    if (port)
        px_port_close(port);
    if (errcodes)
        for (int i = 0; i < out.n; i++)
            errcodes[i] = rc == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_SPAWN;
    return rc;
}

PX_PMPI(MPI_Comm_spawn)
(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
 MPI_Comm *intercomm, int array_of_errcodes[])
{
    PX_CS_ENTER();
    char *cmds[1] = {(char *)command};
    char **argvs[1] = {argv};
    MPI_Info infos[1] = {info};
    return px_spawn(1, cmds, argvs, &maxprocs, infos, root, comm, intercomm, array_of_errcodes,
                    "MPI_Comm_spawn");
}
PX_WEAK(MPI_Comm_spawn)

PX_PMPI(MPI_Comm_spawn_multiple)
(int count, char *array_of_commands[], char **array_of_argv[], const int array_of_maxprocs[],
 const MPI_Info array_of_info[], int root, MPI_Comm comm, MPI_Comm *intercomm,
 int array_of_errcodes[])
{
    PX_CS_ENTER();
    return px_spawn(count, array_of_commands,
                    array_of_argv == MPI_ARGVS_NULL ? NULL : array_of_argv, array_of_maxprocs,
                    array_of_info, root, comm, intercomm, array_of_errcodes,
                    "MPI_Comm_spawn_multiple");
}
PX_WEAK(MPI_Comm_spawn_multiple)

PX_PMPI(MPI_Comm_get_parent)(MPI_Comm *parent)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Comm_get_parent";
    PX_CHECK_INIT(fn);
    if (!parent)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    *parent = px_mpi_comm_parent ? px_mpi_comm_parent->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_get_parent)

void px_mpi_spawn_init(void)
{
    const char *port = getenv("PX_PARENT_PORT");
    if (!port || !*port)
        return;
    MPI_Comm ic = MPI_COMM_NULL;
    MPI_Errhandler eh = px_mpi_comm_world->errh;
    px_mpi_comm_world->errh = MPI_ERRORS_RETURN;
    int rc = px_mpi_dyn_accept_connect(port, MPI_INFO_NULL, 0, px_mpi_comm_world->handle, &ic, 0,
                                       "MPI_Init");
    px_mpi_comm_world->errh = eh;
    if (rc != MPI_SUCCESS)
        px_boot_abort(1, "MPI_Init: this job was spawned, and cannot reach its parent");
    px_mpi_comm_parent = px_mpi_comm_get(ic);
}

void px_mpi_spawn_finalize(void)
{
    uint64_t t0 = px_time_ns();
    int said = 0;
    while (px_spawned) {
        px_spawned_t *s = px_spawned;
        int status;
        pid_t r = waitpid(s->pid, &status, WNOHANG);
        if (r == 0) {
            if (!said && px_time_ns() - t0 > 10000000000ull) {
                px_warn("mpi", "MPI_Finalize waits for the job it spawned (launcher pid %d) to end",
                        (int)s->pid);
                said = 1;
            }
            usleep(10000);
            continue;
        }
        px_spawned = s->next;
        close(s->watch);
        free(s);
    }
}
