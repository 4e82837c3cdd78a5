/* pxrun: the Plexus launcher (like mpiexec). Internal interfaces. */
#ifndef PXRUN_H
#define PXRUN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "boot/boot_server.h"

/* Exit codes of pxrun's own failures (a failing rank's code otherwise). */
#define PXRUN_EXIT_ERROR 1
#define PXRUN_EXIT_USAGE 2
#define PXRUN_EXIT_TIMEOUT 124
#define PXRUN_EXIT_NOEXEC 126
#define PXRUN_EXIT_NOTFOUND 127

#define PXRUN_STDIN_BUF 65536 /* stdin bytes buffered for rank 0 */

typedef struct pxrun_host {
    char *name;
    int slots;
} pxrun_host_t;

typedef struct pxrun_opts {
    int np;              /* 0: not given */
    pxrun_host_t *hosts; /* from --hosts or --hostfile; none: this machine */
    int nhosts;
    int ppn;    /* 0: use slots */
    char **env; /* "VAR=VAL" from -x and --env, in order */
    int nenv;
    const char *launcher;        /* template as given; NULL: fork locally (ssh for remote hosts) */
    const char *remote_launcher; /* without --launcher, for remote hosts; NULL: ssh */
    const char *wdir;            /* the ranks' working directory (-wdir); NULL: pxrun's */
    const char *boot_iface;
    int boot_port;
    int tag_output;
    int verbose;
    double timeout;           /* 0: none */
    const char *timeout_from; /* "--timeout" or "MPIEXEC_TIMEOUT", for messages */
    double connect_timeout;
    int connect_timeout_given; /* also applies when no rank connected at all */
    char **argv;               /* program and its arguments (the first of apps) */
    int argc;
    /* MPMD: "prog args : -n N prog2 args2 ...", apps[k] its k-th program;
     * its ranks follow those of apps[k-1] and get PX_APPNUM=k */
    struct pxrun_app {
        int np;
        char **argv;
        int argc;
    } * apps;
    int napps;
} pxrun_opts_t;

/* Buffered output of one stream of one rank; only whole lines leave it. */
typedef struct pxrun_linebuf {
    int fd;   /* read end; -1 once closed */
    int dest; /* STDOUT_FILENO or STDERR_FILENO */
    char *buf;
    size_t len, cap;
} pxrun_linebuf_t;

typedef struct pxrun_rank {
    int rank;
    int node_id;
    int local_rank;
    int local_size;
    const char *host;
    int remote; /* started through a launcher */
    pid_t pid;  /* also its process group id */
    int started;
    int running;
    int status; /* wait status once reaped */
    int judged; /* its exit status has been classified (reported if it was a failure) */
    int connected, finalized, aborted;
    uint64_t lost_ns; /* bootstrap connection lost before finalize, process still running */
    char lost_why[160];
    pxrun_linebuf_t out, err;
} pxrun_rank_t;

typedef struct pxrun_job {
    pxrun_opts_t *opts;
    pxrun_rank_t *ranks;
    int np;
    int num_nodes;
    int universe_size;
    char *hosts_list; /* the hosts given, "host:slots,...", for MPI_Comm_spawn; NULL: none */
    int *node_of;
    char **launcher_words; /* launcher template split into words; NULL when forking locally */
    int nlauncher_words;
    int launcher_is_ssh; /* remote command line goes through a shell: quote it */
    char boot_ip[64];
    px_boot_server_t *srv;
    uint8_t secret[32];
    char secret_hex[65];
    uint64_t job_id;
    uint64_t start_ns;
    int nrunning;

    /* the first failure decides the exit code and the message */
    int failed;
    int exit_code;
    uint64_t term_ns; /* when termination started */
    int term_killed;  /* SIGKILL sent */
    uint64_t dump_ns; /* --timeout reached: ranks asked to print their state */
    int signals_seen;

    /* stdin of pxrun -> rank 0 */
    int stdin_open; /* still reading our stdin */
    int stdin_pipe; /* write end to rank 0, -1 when closed */

    /* a job MPI_Comm_spawn started: the read end of a pipe only the
     * spawning process holds open; its end ends this job (-1: none) */
    int parent_fd;
    char *stdin_buf;
    size_t stdin_len;
    int out_broken[3]; /* our stdout/stderr refused data: drop further output */
} pxrun_job_t;

/* options and placement (pxrun_opts.c) */
int pxrun_opts_parse(int argc, char **argv, pxrun_opts_t *o);
int pxrun_place(pxrun_job_t *job);
int pxrun_host_is_local(const char *name);
int pxrun_split_words(const char *s, char ***words_p, int *n_p);
int pxrun_resolve_iface(pxrun_job_t *job);

/* launching (pxrun_launch.c) */
int pxrun_prepare_launcher(pxrun_job_t *job);
/* Hosts from a Slurm allocation (SLURM_JOB_NODELIST): 1 when added, 0 when
 * not inside one, -1 on an error (reported). */
int pxrun_slurm_hosts(pxrun_opts_t *o);
int pxrun_add_host(pxrun_opts_t *o, const char *name, size_t nlen, int slots);
int pxrun_check_program(pxrun_job_t *job);
/* The program of a rank (MPMD: its app's). */
const struct pxrun_app *pxrun_app_of(const pxrun_opts_t *o, int rank, int *appnum_p);
int pxrun_launch_rank(pxrun_job_t *job, pxrun_rank_t *r);
char *pxrun_launcher_cmdline(pxrun_job_t *job, const pxrun_rank_t *r);

/* output and input forwarding (pxrun_io.c) */
void pxrun_linebuf_read(pxrun_job_t *job, pxrun_rank_t *r, pxrun_linebuf_t *lb);
void pxrun_linebuf_drain(pxrun_job_t *job, pxrun_rank_t *r, pxrun_linebuf_t *lb);
void pxrun_stdin_read(pxrun_job_t *job);
void pxrun_stdin_write(pxrun_job_t *job);
void pxrun_stdin_close(pxrun_job_t *job);

void pxrun_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pxrun_vlog(pxrun_job_t *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
