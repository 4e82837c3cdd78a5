/* pxrun: starts the ranks, serves the bootstrap protocol, forwards I/O and
 * signals, and ends the whole job when one rank fails. One thread, one poll
 * loop: no rank can block pxrun. */
#include "pxrun.h"
#include "boot/boot.h"
#include "boot/boot_wire.h"
#include "util/clock.h"

#include <dirent.h>
#include <errno.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define PXRUN_NS 1000000000ull
#define PXRUN_KILL_AFTER_NS (1 * PXRUN_NS) /* SIGTERM -> SIGKILL */
#define PXRUN_GIVE_UP_NS (5 * PXRUN_NS)    /* after SIGTERM: stop waiting for exits */
#define PXRUN_LOST_GRACE_NS (PXRUN_NS / 2) /* connection lost: wait for the exit status */
#define PXRUN_PIPE_GRACE_NS (PXRUN_NS / 2) /* all exited: descendants holding pipes */
#define PXRUN_POLL_MS 100
#define PXRUN_DUMP_WAIT_NS (1 * PXRUN_NS) /* --timeout: time to print their state */

void pxrun_msg(const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    int n = snprintf(line, sizeof(line), "pxrun: ");
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, (size_t)n) < 0) {
        /* nowhere to report */
    }
}

void pxrun_vlog(pxrun_job_t *job, const char *fmt, ...)
{
    char line[1500];
    va_list ap;
    if (!job->opts->verbose)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    pxrun_msg("%s", line);
}

static void pxrun_signal_ranks(pxrun_job_t *job, int sig, int include_exited)
{
    for (int i = 0; i < job->np; i++) {
        pxrun_rank_t *r = &job->ranks[i];
        /* exited ranks: their group may still hold descendants (no orphans) */
        if (r->started && (r->running || include_exited))
            killpg(r->pid, sig);
    }
}

static void pxrun_terminate(pxrun_job_t *job, const char *why)
{
    if (job->term_ns)
        return;
    job->term_ns = px_time_ns();
    /* signals first: local ranks die at once instead of printing the abort */
    pxrun_signal_ranks(job, SIGTERM, 1);
    px_boot_server_abort_all(job->srv, job->exit_code, why);
}

/* Records the first failure (its code becomes pxrun's) and ends the job. */
static void pxrun_fail(pxrun_job_t *job, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pxrun_fail(pxrun_job_t *job, int code, const char *fmt, ...)
{
    char msg[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (job->failed) {
        pxrun_vlog(job, "(after the job failed) %s", msg);
        return;
    }
    job->failed = 1;
    job->exit_code = (code & 0xff) ? (code & 0xff) : PXRUN_EXIT_ERROR;
    pxrun_msg("%s", msg);
    pxrun_terminate(job, msg);
}

static void pxrun_check_unconnected_exit(pxrun_job_t *job)
{
    int waiting = 0;
    if (job->failed)
        return;
    for (int i = 0; i < job->np; i++) {
        pxrun_rank_t *r = &job->ranks[i];
        waiting |= r->connected && !r->finalized && r->running;
    }
    if (!waiting)
        return;
    for (int i = 0; i < job->np; i++) {
        pxrun_rank_t *r = &job->ranks[i];
        /* judged: an exit code of its own (a failing launcher) is the better report */
        if (r->started && r->judged && !r->connected) {
            pxrun_fail(job, PXRUN_EXIT_ERROR,
                       "rank %d (host %s) exited without connecting to pxrun while other ranks "
                       "wait for it (did it call MPI_Init?)",
                       r->rank, r->host);
            return;
        }
    }
}

/* ------------------------------------------------ bootstrap server events */

static void pxrun_on_connected(void *arg, int rank)
{
    pxrun_job_t *job = arg;
    job->ranks[rank].connected = 1;
    pxrun_check_unconnected_exit(job);
}

static void pxrun_on_finalized(void *arg, int rank)
{
    pxrun_job_t *job = arg;
    job->ranks[rank].finalized = 1;
    pxrun_vlog(job, "rank %d finalized", rank);
}

static void pxrun_on_lost(void *arg, int rank, const char *why)
{
    pxrun_job_t *job = arg;
    pxrun_rank_t *r = &job->ranks[rank];
    pxrun_vlog(job, "rank %d: bootstrap connection closed before finalize (%s)", rank, why);
    if (r->running && !r->lost_ns) {
        /* usually the process is dying: its exit status tells more, wait for it briefly */
        r->lost_ns = px_time_ns();
        snprintf(r->lost_why, sizeof(r->lost_why), "%s", why);
    }
}

static void pxrun_on_aborted(void *arg, int rank, int code, const char *msg)
{
    pxrun_job_t *job = arg;
    pxrun_rank_t *r = &job->ranks[rank];
    if (job->failed) {
        pxrun_vlog(job, "rank %d called MPI_Abort with code %d: %s", rank, code, msg);
        return;
    }
    r->aborted = 1;
    pxrun_fail(job, code, "rank %d (host %s) called MPI_Abort with code %d%s%s", rank, r->host,
               code, msg[0] ? ": " : "", msg);
    /* the code goes to the invoking environment as it is, 0 too (as with
     * mpiexec of MPICH and Open MPI): a program may end a job that is done
     * this way (a Fortran STOP in one coarray image does) */
    if (code == 0)
        job->exit_code = 0;
}

static void pxrun_on_job_error(void *arg, const char *msg)
{
    pxrun_fail(arg, PXRUN_EXIT_ERROR, "%s", msg);
}

static void pxrun_on_log(void *arg, const char *msg) { pxrun_vlog(arg, "%s", msg); }

/* --------------------------------------------------------------- processes */

static void pxrun_classify_exit(pxrun_job_t *job, pxrun_rank_t *r)
{
    int st = r->status;
    if (r->aborted)
        return; /* reported when the abort arrived */
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        pxrun_fail(job, 128 + sig, "rank %d (host %s) killed by signal %d (%s)", r->rank, r->host,
                   sig, strsignal(sig));
        return;
    }
    int code = WEXITSTATUS(st);
    if (code) {
        char *cmd = (r->remote && !r->connected) ? pxrun_launcher_cmdline(job, r) : NULL;
        pxrun_fail(job, code, "rank %d (host %s) exited with code %d%s%s%s", r->rank, r->host, code,
                   cmd ? " before connecting to pxrun (launcher '" : "", cmd ? cmd : "",
                   cmd ? "' failed?)" : "");
        free(cmd);
        return;
    }
    if (r->connected && !r->finalized) {
        pxrun_fail(job, PXRUN_EXIT_ERROR,
                   "rank %d (host %s) exited with code 0 without finalizing (MPI_Finalize not "
                   "called?)",
                   r->rank, r->host);
        return;
    }
    pxrun_vlog(job, "rank %d exited with code 0", r->rank);
    pxrun_check_unconnected_exit(job);
}

static pxrun_rank_t *pxrun_rank_by_pid(pxrun_job_t *job, pid_t pid)
{
    for (int i = 0; i < job->np; i++)
        if (job->ranks[i].started && job->ranks[i].pid == pid)
            return &job->ranks[i];
    return NULL;
}

static void pxrun_reap(pxrun_job_t *job)
{
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0)
            return;
        pxrun_rank_t *r = pxrun_rank_by_pid(job, pid);
        if (!r || !r->running)
            continue;
        r->running = 0;
        r->status = st;
        job->nrunning--;
        if (r->rank == 0)
            pxrun_stdin_close(job);
        /* an ABORT or FINALIZE sent just before exiting must count first */
        px_boot_server_progress(job->srv);
        pxrun_linebuf_drain(job, r, &r->out);
        pxrun_linebuf_drain(job, r, &r->err);
        r->judged = 1;
        pxrun_classify_exit(job, r);
    }
}

static void pxrun_on_signal(pxrun_job_t *job, int sig)
{
    if (sig == SIGCHLD) {
        pxrun_reap(job);
        return;
    }
    job->signals_seen++;
    if (job->signals_seen == 1) {
        pxrun_signal_ranks(job, sig, 0); /* forwarded as is, then the job ends */
        pxrun_fail(job, 128 + sig, "received signal %d (%s); terminating the job", sig,
                   strsignal(sig));
        if (!job->term_ns)
            pxrun_terminate(job, "pxrun was interrupted");
    } else {
        pxrun_signal_ranks(job, SIGKILL, 0);
        job->term_killed = 1;
    }
}

static void pxrun_check_timers(pxrun_job_t *job)
{
    uint64_t now = px_time_ns();
    if (job->term_ns && !job->term_killed && now - job->term_ns >= PXRUN_KILL_AFTER_NS) {
        pxrun_signal_ranks(job, SIGKILL, 1);
        job->term_killed = 1;
    }
    if (job->failed)
        return;
    for (int i = 0; i < job->np; i++) {
        pxrun_rank_t *r = &job->ranks[i];
        if (r->running && r->lost_ns && now - r->lost_ns > PXRUN_LOST_GRACE_NS) {
            pxrun_fail(job, PXRUN_EXIT_ERROR, "rank %d (host %s) lost its connection to pxrun (%s)",
                       r->rank, r->host, r->lost_why);
            return;
        }
    }
    if (job->opts->timeout > 0 && now - job->start_ns > (uint64_t)(job->opts->timeout * 1e9)) {
        /* first each rank says what it waits for (if its progress engine
         * runs), then the job ends */
        if (!job->dump_ns) {
            job->dump_ns = now;
            pxrun_msg("job reached %s (%g s); asking every rank what it waits for",
                      job->opts->timeout_from, job->opts->timeout);
            px_boot_server_dump_all(job->srv);
            return;
        }
        if (now - job->dump_ns < PXRUN_DUMP_WAIT_NS)
            return;
        pxrun_fail(job, PXRUN_EXIT_TIMEOUT, "job timed out after %g s (%s); terminating",
                   job->opts->timeout, job->opts->timeout_from);
        return;
    }
    if ((px_boot_server_num_connected(job->srv) > 0 || job->opts->connect_timeout_given) &&
        now - job->start_ns > (uint64_t)(job->opts->connect_timeout * 1e9)) {
        char list[512] = "";
        size_t len = 0;
        int count = 0;
        for (int i = 0; i < job->np; i++) {
            pxrun_rank_t *r = &job->ranks[i];
            if (!r->running || r->connected)
                continue;
            if (count < 16 && len < sizeof(list) - 64)
                len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d (host %s)",
                                        count ? ", " : "", r->rank, r->host);
            count++;
        }
        if (count)
            pxrun_fail(job, PXRUN_EXIT_ERROR,
                       "%s %s%s did not connect to pxrun within %g s (--connect-timeout)",
                       count > 1 ? "ranks" : "rank", list, count > 16 ? ", ..." : "",
                       job->opts->connect_timeout);
    }
}

/* ------------------------------------------------------------------- main */

static int pxrun_pipes_open(const pxrun_job_t *job)
{
    for (int i = 0; i < job->np; i++)
        if (job->ranks[i].out.fd >= 0 || job->ranks[i].err.fd >= 0)
            return 1;
    return 0;
}

static void pxrun_close_pipes(pxrun_job_t *job)
{
    for (int i = 0; i < job->np; i++) {
        pxrun_rank_t *r = &job->ranks[i];
        pxrun_linebuf_drain(job, r, &r->out);
        pxrun_linebuf_drain(job, r, &r->err);
        if (r->out.fd >= 0) {
            close(r->out.fd);
            r->out.fd = -1;
        }
        if (r->err.fd >= 0) {
            close(r->err.fd);
            r->err.fd = -1;
        }
    }
}

static int pxrun_loop(pxrun_job_t *job, int sigfd)
{
    size_t cap = 5 + 2 * (size_t)job->np;
    struct pollfd *fds = calloc(cap, sizeof(*fds));
    int *who = calloc(cap, sizeof(int)); /* rank*2 (+1 for stderr); negative: special */
    uint64_t all_exited_ns = 0;
    if (!fds || !who) {
        pxrun_msg("out of memory");
        free(fds);
        free(who);
        return -1;
    }
    for (;;) {
        uint64_t now = px_time_ns();
        if (!job->nrunning) {
            if (!all_exited_ns)
                all_exited_ns = now;
            if (!pxrun_pipes_open(job))
                break;
            /* descendants (or ranks behind a launcher) may still hold the pipes:
             * give their last lines a moment, then stop waiting */
            if (now - all_exited_ns > PXRUN_PIPE_GRACE_NS) {
                pxrun_close_pipes(job);
                break;
            }
        }
        if (job->term_ns && job->nrunning && now - job->term_ns > PXRUN_GIVE_UP_NS) {
            pxrun_msg("%d process(es) still running after SIGKILL; giving up waiting",
                      job->nrunning);
            break;
        }

        int n = 0;
        fds[n] = (struct pollfd){.fd = sigfd, .events = POLLIN};
        who[n++] = -1;
        fds[n] = (struct pollfd){.fd = px_boot_server_fd(job->srv), .events = POLLIN};
        who[n++] = -2;
        if (job->stdin_open && job->stdin_pipe >= 0 && job->stdin_len < PXRUN_STDIN_BUF) {
            fds[n] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
            who[n++] = -3;
        }
        if (job->stdin_pipe >= 0 && job->stdin_len) {
            fds[n] = (struct pollfd){.fd = job->stdin_pipe, .events = POLLOUT};
            who[n++] = -4;
        }
        if (job->parent_fd >= 0) {
            fds[n] = (struct pollfd){.fd = job->parent_fd, .events = POLLIN};
            who[n++] = -5;
        }
        for (int i = 0; i < job->np; i++) {
            if (job->ranks[i].out.fd >= 0) {
                fds[n] = (struct pollfd){.fd = job->ranks[i].out.fd, .events = POLLIN};
                who[n++] = 2 * i;
            }
            if (job->ranks[i].err.fd >= 0) {
                fds[n] = (struct pollfd){.fd = job->ranks[i].err.fd, .events = POLLIN};
                who[n++] = 2 * i + 1;
            }
        }
        int rc = poll(fds, (nfds_t)n, PXRUN_POLL_MS);
        if (rc < 0 && errno != EINTR) {
            pxrun_msg("poll: %s", strerror(errno));
            break;
        }
        px_boot_server_progress(job->srv);
        for (int k = 0; rc > 0 && k < n; k++) {
            if (!fds[k].revents)
                continue;
            if (who[k] >= 0) {
                pxrun_rank_t *r = &job->ranks[who[k] / 2];
                pxrun_linebuf_read(job, r, (who[k] & 1) ? &r->err : &r->out);
            } else if (who[k] == -3) {
                if (job->stdin_open)
                    pxrun_stdin_read(job);
            } else if (who[k] == -4) {
                pxrun_stdin_write(job);
            } else if (who[k] == -5) {
                /* nothing is ever written: this is the end of the process
                 * that spawned the job */
                char c;
                if (read(job->parent_fd, &c, 1) <= 0) {
                    close(job->parent_fd);
                    job->parent_fd = -1;
                    pxrun_fail(job, PXRUN_EXIT_ERROR,
                               "the process that spawned this job has ended; terminating it");
                }
            }
        }
        struct signalfd_siginfo si;
        while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
            pxrun_on_signal(job, (int)si.ssi_signo);
        /* SIGCHLDs coalesce; a cheap extra reap costs nothing */
        pxrun_reap(job);
        pxrun_check_timers(job);
    }
    free(fds);
    free(who);
    return 0;
}

static void pxrun_job_free(pxrun_job_t *job)
{
    pxrun_stdin_close(job);
    free(job->stdin_buf);
    pxrun_close_pipes(job);
    px_boot_server_destroy(job->srv);
    for (int i = 0; i < job->nlauncher_words; i++)
        free(job->launcher_words[i]);
    free(job->launcher_words);
    free(job->ranks);
    free(job->node_of);
    for (int i = 0; i < job->opts->nhosts; i++)
        free(job->opts->hosts[i].name);
    free(job->opts->hosts);
    for (int i = 0; i < job->opts->nenv; i++)
        free(job->opts->env[i]);
    free(job->opts->env);
}

/* With 0, 1 or 2 closed, pipes would land there and the child's dup2s collide. */
static void pxrun_sanitize_stdio(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        int nfd = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
        if (nfd >= 0 && nfd != fd) {
            dup2(nfd, fd);
            close(nfd);
        }
    }
}

static void pxrun_raise_fd_limit(void)
{
    struct rlimit rl;
    /* 4 descriptors per rank (two pipes, two sockets) */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* Ranks unlink their node's shared-memory segment once all have mapped it;
 * if the job died before that, the segment of this machine goes here. */
static void pxrun_shm_cleanup(uint64_t job_id)
{
    char prefix[64];
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    if (!d)
        return;
    int n = snprintf(prefix, sizeof(prefix), "plexus-%016llx-", (unsigned long long)job_id);
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, (size_t)n)) {
            char name[300];
            snprintf(name, sizeof(name), "/%s", e->d_name);
            shm_unlink(name);
        }
    closedir(d);
}

static int pxrun_run(int argc, char **argv, pxrun_job_t *job)
{
    pxrun_opts_t *opts = job->opts;
    int rc;

    signal(SIGPIPE, SIG_IGN);
    pxrun_sanitize_stdio();
    rc = pxrun_opts_parse(argc, argv, opts);
    if (rc)
        return rc > 0 ? 0 : PXRUN_EXIT_USAGE;
    pxrun_raise_fd_limit();

    if (pxrun_place(job) < 0) {
        pxrun_msg("out of memory");
        return PXRUN_EXIT_ERROR;
    }
    if ((rc = pxrun_prepare_launcher(job)) != 0)
        return rc < 0 ? PXRUN_EXIT_USAGE : rc;
    if ((rc = pxrun_check_program(job)) != 0)
        return rc;
    if (pxrun_resolve_iface(job) < 0)
        return PXRUN_EXIT_USAGE;

    if (px_boot_random(job->secret, sizeof(job->secret)) != PX_OK ||
        px_boot_random(&job->job_id, sizeof(job->job_id)) != PX_OK) {
        pxrun_msg("cannot get random bytes for the job secret");
        return PXRUN_EXIT_ERROR;
    }
    for (int i = 0; i < 32; i++)
        snprintf(job->secret_hex + 2 * i, 3, "%02x", job->secret[i]);

    px_boot_server_conf_t conf = {
        .bind_addr = job->boot_ip,
        .port = opts->boot_port,
        .size = job->np,
        .num_nodes = job->num_nodes,
        .universe_size = job->universe_size,
        .node_of = job->node_of,
        .secret = job->secret,
        .job_id = job->job_id,
    };
    px_boot_server_cbs_t cbs = {
        .arg = job,
        .connected = pxrun_on_connected,
        .finalized = pxrun_on_finalized,
        .lost = pxrun_on_lost,
        .aborted = pxrun_on_aborted,
        .job_error = pxrun_on_job_error,
        .log = pxrun_on_log,
    };
    px_status_t st = px_boot_server_create(&conf, &cbs, &job->srv);
    if (st != PX_OK) {
        pxrun_msg("cannot listen on %s:%d for the bootstrap server: %s", job->boot_ip,
                  opts->boot_port, errno ? strerror(errno) : px_status_string(st));
        return PXRUN_EXIT_ERROR;
    }
    pxrun_vlog(job, "job %016llx: %d rank(s) on %d node(s), bootstrap server %s",
               (unsigned long long)job->job_id, job->np, job->num_nodes,
               px_boot_server_addr(job->srv));
    for (int i = 0; opts->verbose && i < job->np; i++)
        pxrun_vlog(job, "rank %d -> host %s (node %d, local rank %d of %d)%s", i,
                   job->ranks[i].host, job->ranks[i].node_id, job->ranks[i].local_rank,
                   job->ranks[i].local_size, job->ranks[i].remote ? " via launcher" : "");

    /* signals arrive through the loop; blocked before the first fork so none is lost */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sigfd < 0) {
        pxrun_msg("signalfd: %s", strerror(errno));
        return PXRUN_EXIT_ERROR;
    }

    /* started by MPI_Comm_spawn: the spawning process's end ends the job */
    const char *pfd = getenv("PX_PXRUN_PARENT_FD");
    job->parent_fd = pfd && *pfd ? atoi(pfd) : -1;
    if (job->parent_fd >= 0 && fcntl(job->parent_fd, F_SETFD, FD_CLOEXEC) < 0)
        job->parent_fd = -1;
    unsetenv("PX_PXRUN_PARENT_FD");

    /* a background pxrun must not read the terminal (it would be stopped) */
    job->stdin_open = !(isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) != getpgrp());

    job->start_ns = px_time_ns();
    for (int i = 0; i < job->np; i++) {
        if (pxrun_launch_rank(job, &job->ranks[i]) < 0) {
            pxrun_fail(job, PXRUN_EXIT_ERROR, "could not start rank %d; terminating the job", i);
            break;
        }
    }
    if (job->stdin_pipe < 0)
        job->stdin_open = 0;

    pxrun_loop(job, sigfd);
    close(sigfd);
    pxrun_shm_cleanup(job->job_id);
    return job->failed ? job->exit_code : 0;
}

int main(int argc, char **argv)
{
    pxrun_opts_t opts = {0};
    pxrun_job_t job = {.opts = &opts, .stdin_pipe = -1, .parent_fd = -1};
    int rc = pxrun_run(argc, argv, &job);
    pxrun_job_free(&job);
    return rc;
}
