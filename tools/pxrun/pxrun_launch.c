/* pxrun: starting ranks, locally (fork/exec) or through a launcher template. */
#include "pxrun.h"
#include "util/param.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* Variables pxrun sets per rank (px_param_launcher_vars); stale copies in
 * our environment are dropped. */
static int pxrun_is_rank_var(const char *entry)
{
    char name[64];
    size_t n = strcspn(entry, "=");
    if (n >= sizeof(name))
        return 0;
    memcpy(name, entry, n);
    name[n] = 0;
    return px_param_is_launcher_var(name);
}

/* Finds an executable in PATH; returns 0, or ENOENT / EACCES. */
static int pxrun_which(const char *prog)
{
    struct stat st;
    if (strchr(prog, '/')) {
        if (stat(prog, &st) < 0)
            return ENOENT;
        return (S_ISREG(st.st_mode) && access(prog, X_OK) == 0) ? 0 : EACCES;
    }
    const char *path = getenv("PATH");
    int found_noexec = 0;
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        char full[4096];
        snprintf(full, sizeof(full), "%.*s/%s", (int)n, n ? path : ".", prog);
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(full, X_OK) == 0)
                return 0;
            found_noexec = 1;
        }
        if (!end)
            break;
        path = end + 1;
    }
    return found_noexec ? EACCES : ENOENT;
}

int pxrun_prepare_launcher(pxrun_job_t *job)
{
    const char *tmpl = job->opts->launcher;
    int any_remote = 0;
    for (int r = 0; r < job->np; r++)
        any_remote |= job->ranks[r].remote;
    if (!any_remote)
        return 0;
    if (!tmpl)
        tmpl = job->opts->remote_launcher;
    if (!tmpl || !strcmp(tmpl, "ssh"))
        tmpl = "ssh -o BatchMode=yes -o ConnectTimeout=10 {host}";
    else if (!strcmp(tmpl, "pxfab") || !strcmp(tmpl, "netns"))
        tmpl = "ip netns exec {host}";
    if (pxrun_split_words(tmpl, &job->launcher_words, &job->nlauncher_words) < 0)
        return -1;
    if (!job->nlauncher_words) {
        pxrun_msg("--launcher is empty");
        return -1;
    }
    const char *cmd = job->launcher_words[0];
    const char *base = strrchr(cmd, '/') ? strrchr(cmd, '/') + 1 : cmd;
    /* ssh hands the remote command to a shell: its words must be quoted */
    job->launcher_is_ssh = !strcmp(base, "ssh") || !strcmp(base, "rsh");
    int e = pxrun_which(cmd);
    if (e) {
        pxrun_msg("launcher command '%s' %s", cmd, e == ENOENT ? "not found" : "is not executable");
        return e == ENOENT ? PXRUN_EXIT_NOTFOUND : PXRUN_EXIT_NOEXEC;
    }
    return 0;
}

/* Local launches resolve the program here so a typo fails at once. */
int pxrun_check_program(pxrun_job_t *job)
{
    int any_local = 0;
    for (int r = 0; r < job->np; r++)
        any_local |= !job->ranks[r].remote;
    if (!any_local)
        return 0;
    const char *wdir = job->opts->wdir;
    struct stat st;
    int bad = !wdir ? 0 : stat(wdir, &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : 0;
    if (bad) {
        pxrun_msg("working directory '%s': %s", wdir, strerror(bad));
        return PXRUN_EXIT_NOTFOUND;
    }
    for (int k = 0; k < job->opts->napps; k++) {
        const char *prog = job->opts->apps[k].argv[0];
        /* a relative path names a file in the ranks' working directory */
        char path[PATH_MAX];
        if (wdir && prog[0] != '/' && strchr(prog, '/')) {
            snprintf(path, sizeof(path), "%s/%s", wdir, prog);
            prog = path;
        }
        int e = pxrun_which(prog);
        if (e == ENOENT) {
            pxrun_msg("program '%s' not found", prog);
            return PXRUN_EXIT_NOTFOUND;
        }
        if (e) {
            pxrun_msg("program '%s' is not executable", prog);
            return PXRUN_EXIT_NOEXEC;
        }
    }
    return 0;
}

/* The rank's variables as "VAR=VAL" strings (NULL-terminated, malloc'ed). */
static char **pxrun_rank_env(pxrun_job_t *job, const pxrun_rank_t *r, int with_px_tunables)
{
    size_t cap = 24 + (size_t)job->opts->nenv;
    if (with_px_tunables)
        for (char **e = environ; *e; e++)
            cap++;
    char **v = calloc(cap, sizeof(char *));
    int n = 0;
    if (!v)
        return NULL;
#define PXRUN_ENV(...)                                                                             \
    do {                                                                                           \
        if (asprintf(&v[n], __VA_ARGS__) >= 0)                                                     \
            n++;                                                                                   \
    } while (0)
    /* tunables first so -x/--env and the rank variables win in `env` order */
    if (with_px_tunables)
        for (char **e = environ; *e; e++)
            if (!strncmp(*e, "PX_", 3) && !pxrun_is_rank_var(*e))
                PXRUN_ENV("%s", *e);
    for (int i = 0; i < job->opts->nenv; i++)
        PXRUN_ENV("%s", job->opts->env[i]);
    int appnum;
    pxrun_app_of(job->opts, r->rank, &appnum);
    PXRUN_ENV("PX_RANK=%d", r->rank);
    PXRUN_ENV("PX_APPNUM=%d", appnum);
    PXRUN_ENV("PX_SIZE=%d", job->np);
    PXRUN_ENV("PX_NODE_ID=%d", r->node_id);
    PXRUN_ENV("PX_NUM_NODES=%d", job->num_nodes);
    PXRUN_ENV("PX_LOCAL_RANK=%d", r->local_rank);
    PXRUN_ENV("PX_LOCAL_SIZE=%d", r->local_size);
    PXRUN_ENV("PX_UNIVERSE_SIZE=%d", job->universe_size);
    PXRUN_ENV("PX_NODE_NAME=%s", r->host);
    PXRUN_ENV("PX_BOOT_ADDR=%s", px_boot_server_addr(job->srv));
    PXRUN_ENV("PX_JOB_SECRET=%s", job->secret_hex);
    PXRUN_ENV("PX_JOB_ID=%016llx", (unsigned long long)job->job_id);
    /* MPI_Comm_spawn starts its children with this pxrun, placed and
     * launched like this job (docs/dynamic.md) */
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (sl > 0)
        PXRUN_ENV("PX_PXRUN=%.*s", (int)sl, self);
    if (job->opts->launcher)
        PXRUN_ENV("PX_PXRUN_LAUNCHER=%s", job->opts->launcher);
    if (job->hosts_list)
        PXRUN_ENV("PX_PXRUN_HOSTS=%s", job->hosts_list);
#undef PXRUN_ENV
    v[n] = NULL;
    return v;
}

static void pxrun_free_vec(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

/* 'word' with ' turned into '\'' for a POSIX shell. */
static char *pxrun_shell_quote(const char *s)
{
    size_t n = 3;
    for (const char *p = s; *p; p++)
        n += *p == '\'' ? 4 : 1;
    char *q = malloc(n), *o = q;
    if (!q)
        return NULL;
    *o++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o++ = '\'';
    *o = 0;
    return q;
}

static char *pxrun_subst_host(const char *word, const char *host)
{
    size_t hl = strlen(host), n = strlen(word) + 1;
    for (const char *p = strstr(word, "{host}"); p; p = strstr(p + 6, "{host}"))
        n += hl;
    char *out = malloc(n), *o = out;
    if (!out)
        return NULL;
    for (const char *p = word; *p;) {
        if (!strncmp(p, "{host}", 6)) {
            memcpy(o, host, hl);
            o += hl;
            p += 6;
        } else {
            *o++ = *p++;
        }
    }
    *o = 0;
    return out;
}

/* argv for a launcher start: template words, then `env [-C DIR] VAR=VAL...
 * program args` (-C: -wdir). */
static char **pxrun_launcher_argv(pxrun_job_t *job, const pxrun_rank_t *r)
{
    char **env = pxrun_rank_env(job, r, 1);
    if (!env)
        return NULL;
    int nenv = 0;
    while (env[nenv])
        nenv++;
    const struct pxrun_app *app = pxrun_app_of(job->opts, r->rank, NULL);
    size_t total = (size_t)job->nlauncher_words + 3 + (size_t)nenv + (size_t)app->argc + 1;
    char **v = calloc(total, sizeof(char *));
    int n = 0, ok = v != NULL;
    for (int i = 0; ok && i < job->nlauncher_words; i++)
        ok = (v[n++] = pxrun_subst_host(job->launcher_words[i], r->host)) != NULL;
    char *(*wrap)(const char *) = job->launcher_is_ssh ? pxrun_shell_quote : strdup;
    if (ok)
        ok = (v[n++] = strdup("env")) != NULL;
    if (ok && job->opts->wdir)
        ok = (v[n++] = strdup("-C")) != NULL && (v[n++] = wrap(job->opts->wdir)) != NULL;
    for (int i = 0; ok && i < nenv; i++)
        ok = (v[n++] = wrap(env[i])) != NULL;
    for (int i = 0; ok && i < app->argc; i++)
        ok = (v[n++] = wrap(app->argv[i])) != NULL;
    pxrun_free_vec(env);
    if (!ok) {
        pxrun_free_vec(v);
        return NULL;
    }
    return v;
}

/* The launcher part of a rank's command, for messages. */
char *pxrun_launcher_cmdline(pxrun_job_t *job, const pxrun_rank_t *r)
{
    size_t n = 1;
    char **w = calloc((size_t)job->nlauncher_words + 1, sizeof(char *));
    if (!w)
        return NULL;
    for (int i = 0; i < job->nlauncher_words; i++) {
        w[i] = pxrun_subst_host(job->launcher_words[i], r->host);
        n += (w[i] ? strlen(w[i]) : 0) + 1;
    }
    char *s = calloc(1, n);
    for (int i = 0; s && i < job->nlauncher_words; i++) {
        if (i)
            strcat(s, " ");
        if (w[i])
            strcat(s, w[i]);
    }
    pxrun_free_vec(w);
    return s;
}

static void pxrun_child_fail(const char *what, const char *prog, int err) __attribute__((noreturn));
static void pxrun_child_fail(const char *what, const char *prog, int err)
{
    char line[600];
    int n = snprintf(line, sizeof(line), "pxrun: cannot %s '%s': %s\n", what, prog, strerror(err));
    if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) {
        /* stderr gone: the exit code still says it */
    }
    _exit(err == ENOENT ? PXRUN_EXIT_NOTFOUND : PXRUN_EXIT_NOEXEC);
}

int pxrun_launch_rank(pxrun_job_t *job, pxrun_rank_t *r)
{
    int out[2], err[2], in = -1, in_pipe[2] = {-1, -1};
    char **argv = NULL, **env = NULL;
    pid_t parent = getpid();

    if (r->remote)
        argv = pxrun_launcher_argv(job, r);
    else
        env = pxrun_rank_env(job, r, 0);
    if (!argv && !env) {
        pxrun_msg("out of memory launching rank %d", r->rank);
        return -1;
    }
    if (pipe2(out, O_CLOEXEC) < 0)
        goto err_vec;
    if (pipe2(err, O_CLOEXEC) < 0)
        goto err_out;
    if (r->rank == 0 && job->stdin_open) {
        if (pipe2(in_pipe, O_CLOEXEC) < 0)
            goto err_err;
        in = in_pipe[0];
    } else {
        in = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (in < 0)
            goto err_err;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        goto err_in;
    if (pid == 0) {
        /* own process group: pxrun signals the whole rank, and the terminal's
         * Ctrl-C reaches pxrun only, which forwards it */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(PXRUN_EXIT_ERROR);
        dup2(in, STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        if (r->remote) {
            execvp(argv[0], argv);
            pxrun_child_fail("start launcher", argv[0], errno);
        }
        for (int i = 0; environ[i];)
            if (pxrun_is_rank_var(environ[i])) {
                char name[64];
                size_t n = (size_t)(strchr(environ[i], '=') - environ[i]);
                snprintf(name, sizeof(name), "%.*s", (int)n, environ[i]);
                unsetenv(name);
            } else {
                i++;
            }
        for (char **e = env; *e; e++)
            putenv(*e);
        if (job->opts->wdir && chdir(job->opts->wdir) != 0)
            pxrun_child_fail("change to directory", job->opts->wdir, errno);
        char **prog = pxrun_app_of(job->opts, r->rank, NULL)->argv;
        execvp(prog[0], prog);
        pxrun_child_fail("execute", prog[0], errno);
    }
    setpgid(pid, pid); /* also here: no window where a signal misses the group */
    close(out[1]);
    close(err[1]);
    close(in);
    if (in_pipe[1] >= 0) {
        fcntl(in_pipe[1], F_SETFL, fcntl(in_pipe[1], F_GETFL) | O_NONBLOCK);
        job->stdin_pipe = in_pipe[1];
    }
    fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
    fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
    r->out.fd = out[0];
    r->out.dest = STDOUT_FILENO;
    r->err.fd = err[0];
    r->err.dest = STDERR_FILENO;
    r->pid = pid;
    r->started = 1;
    r->running = 1;
    job->nrunning++;
    if (job->opts->verbose) {
        char *cmd = r->remote ? pxrun_launcher_cmdline(job, r) : NULL;
        pxrun_vlog(job, "rank %d started as pid %d on %s%s%s", r->rank, (int)pid, r->host,
                   cmd ? " via " : "", cmd ? cmd : "");
        free(cmd);
    }
    pxrun_free_vec(argv);
    pxrun_free_vec(env);
    return 0;

err_in:
    close(in);
    if (in_pipe[1] >= 0)
        close(in_pipe[1]);
err_err:
    close(err[0]);
    close(err[1]);
err_out:
    close(out[0]);
    close(out[1]);
err_vec:
    pxrun_msg("cannot start rank %d: %s", r->rank, strerror(errno));
    pxrun_free_vec(argv);
    pxrun_free_vec(env);
    return -1;
}
