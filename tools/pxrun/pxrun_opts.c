/* pxrun: command line, host lists and rank placement. */
#include "pxrun.h"
#include "util/param.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void pxrun_usage(FILE *out)
{
    fprintf(
        out,
        "usage: pxrun [options] program [args...] [: -n N program2 [args2...] ...]\n"
        "\n"
        "Starts an MPI job (Plexus launcher, like mpiexec).\n"
        "\n"
        "  -n, -np N                number of processes (default: all slots, or 1)\n"
        "  --hosts H1,H2:S,...      hosts, optionally with slots (default slots 1)\n"
        "  --hostfile FILE          one host per line: 'host', 'host:N' or 'host slots=N'\n"
        "  --ppn N                  processes per host per round (overrides slots)\n"
        "  -x VAR[=VAL]             export VAR (its current value, or VAL) to every rank\n"
        "  --env VAR=VAL            set VAR=VAL for every rank\n"
        "  --wdir DIR               the ranks' working directory (default: pxrun's; a\n"
        "                           relative program path is taken from DIR)\n"
        "  --launcher TEMPLATE      start remote ranks with TEMPLATE + 'env VAR=VAL... program';\n"
        "                           'ssh' = 'ssh -o BatchMode=yes {host}', 'pxfab' or 'netns' =\n"
        "                           'ip netns exec {host}', else a command with {host} replaced\n"
        "                           (default: fork locally; ssh for hosts that are not this one)\n"
        "  --bootstrap-iface IF     interface or IPv4 address the bootstrap server listens on\n"
        "                           and advertises (default 127.0.0.1 when every rank is\n"
        "                           local, else the first non-loopback IPv4 address)\n"
        "  --bootstrap-port P       TCP port of the bootstrap server (default: any free port)\n"
        "  --bind-to core|spread|none  core: each rank bound to one CPU of its machine, the\n"
        "                           i-th rank there to the i-th allowed CPU; spread: each\n"
        "                           starts there and may move (with MPI_THREAD_MULTIPLE and\n"
        "                           the ranks fitting the CPUs: stays on its share of them);\n"
        "                           none: the kernel places them (PX_BIND; default spread)\n"
        "  -l, --tag-output         prefix each output line with '[rank] '\n"
        "  --timeout SEC            end the job after SEC seconds (exit code 124), once\n"
        "                           every rank printed what it waits for (default:\n"
        "                           MPIEXEC_TIMEOUT from the environment, else none)\n"
        "  --connect-timeout SEC    end the job when a rank has not connected SEC seconds\n"
        "                           after launch while others have (default 60); given\n"
        "                           explicitly, also when no rank connects at all (a\n"
        "                           launcher that hangs; non-MPI programs never connect)\n"
        "  -v, --verbose            report placement, launches and connections\n"
        "  -h, --help               this text\n"
        "  --version                print the version\n"
        "\n"
        "Several programs make one job with ':' (as mpiexec takes them): 'pxrun -n 2 a : -n 3 b'\n"
        "starts ranks 0-1 as a, 2-4 as b; MPI_APPNUM is each one's index in the list.\n"
        "\n"
        "Installed as mpiexec and mpirun too. The names of MPICH's and Open MPI's\n"
        "launchers are taken as well: -host, -hosts, -H; -machinefile; -N, -npernode;\n"
        "-env/-genv VAR VAL; -genvlist A,B; -wdir, -wd; -prepend-rank; --oversubscribe and\n"
        "--allow-run-as-root (no effect: pxrun places any number of ranks, also as root).\n"
        "\n"
        "Every rank gets (some only when it needs them)");
    size_t col = 46;
    for (int i = 0; px_param_launcher_vars[i]; i++) {
        const char *sep = !px_param_launcher_vars[i + 1] ? " and" : i ? "," : "";
        size_t w = strlen(sep) + 1 + strlen(px_param_launcher_vars[i]);
        if (col + w + 1 > 80) {
            fprintf(out, "%s\n%s", sep, px_param_launcher_vars[i]);
            col = strlen(px_param_launcher_vars[i]);
        } else {
            fprintf(out, "%s %s", sep, px_param_launcher_vars[i]);
            col += w;
        }
    }
    fprintf(out, ". Through a launcher, PX_* tunables of pxrun's environment are passed on.\n"
                 "Exit code: the first failing rank's (128+S for a rank killed by signal S).\n");
}

static int pxrun_parse_int(const char *opt, const char *s, int min, int *v_p)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > (1 << 20)) {
        pxrun_msg("invalid value '%s' for %s (expected an integer >= %d)", s, opt, min);
        return -1;
    }
    *v_p = (int)v;
    return 0;
}

static int pxrun_parse_secs(const char *opt, const char *s, double *v_p)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v > 0) || v > 1e7) {
        pxrun_msg("invalid value '%s' for %s (expected seconds > 0)", s, opt);
        return -1;
    }
    *v_p = v;
    return 0;
}

int pxrun_add_host(pxrun_opts_t *o, const char *name, size_t nlen, int slots)
{
    pxrun_host_t *h = realloc(o->hosts, sizeof(*h) * (size_t)(o->nhosts + 1));
    if (!h)
        return -1;
    o->hosts = h;
    h[o->nhosts].name = strndup(name, nlen);
    h[o->nhosts].slots = slots;
    if (!h[o->nhosts].name)
        return -1;
    o->nhosts++;
    return 0;
}

static int pxrun_valid_hostname(const char *s, size_t n)
{
    if (!n || n > 255)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("-._[]@", s[i]))
            return 0;
    return 1;
}

/* "h1,h2:3,..." */
static int pxrun_parse_hosts(pxrun_opts_t *o, const char *list)
{
    const char *p = list;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *colon = memchr(p, ':', n);
        size_t nlen = colon ? (size_t)(colon - p) : n;
        int slots = 1;
        if (colon) {
            char num[32];
            size_t sl = n - nlen - 1;
            if (sl == 0 || sl >= sizeof(num)) {
                pxrun_msg("invalid host entry '%.*s' in --hosts", (int)n, p);
                return -1;
            }
            memcpy(num, colon + 1, sl);
            num[sl] = 0;
            if (pxrun_parse_int("--hosts slots", num, 1, &slots) < 0)
                return -1;
        }
        if (!pxrun_valid_hostname(p, nlen)) {
            pxrun_msg("invalid host name '%.*s' in --hosts", (int)nlen, p);
            return -1;
        }
        if (pxrun_add_host(o, p, nlen, slots) < 0)
            return -1;
        if (!end)
            break;
        p = end + 1;
    }
    if (!o->nhosts) {
        pxrun_msg("--hosts needs at least one host");
        return -1;
    }
    return 0;
}

static int pxrun_parse_hostfile(pxrun_opts_t *o, const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    int lineno = 0;
    if (!f) {
        pxrun_msg("cannot read hostfile '%s': %s", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *tok[4];
        int nt = 0;
        for (char *save = NULL, *t = strtok_r(line, " \t\r\n", &save); t && nt < 4;
             t = strtok_r(NULL, " \t\r\n", &save))
            tok[nt++] = t;
        if (!nt)
            continue;
        int slots = 1;
        char *name = tok[0];
        char *colon = strchr(name, ':');
        int bad = nt > 2;
        if (colon) {
            *colon = 0;
            bad |= nt != 1 || pxrun_parse_int("hostfile slots", colon + 1, 1, &slots) < 0;
        } else if (nt == 2) {
            bad |= strncmp(tok[1], "slots=", 6) != 0 ||
                   pxrun_parse_int("hostfile slots", tok[1] + 6, 1, &slots) < 0;
        }
        if (bad || !pxrun_valid_hostname(name, strlen(name))) {
            pxrun_msg("%s:%d: expected 'host', 'host:N' or 'host slots=N'", path, lineno);
            fclose(f);
            return -1;
        }
        if (pxrun_add_host(o, name, strlen(name), slots) < 0) {
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    if (!o->nhosts) {
        pxrun_msg("hostfile '%s' lists no hosts", path);
        return -1;
    }
    return 0;
}

static int pxrun_valid_varname(const char *s, size_t n)
{
    if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return 0;
    return 1;
}

static int pxrun_add_env(pxrun_opts_t *o, const char *opt, const char *spec)
{
    const char *eq = strchr(spec, '=');
    char *entry;
    size_t n = eq ? (size_t)(eq - spec) : strlen(spec);
    if (!pxrun_valid_varname(spec, n)) {
        pxrun_msg("invalid variable name in %s '%s'", opt, spec);
        return -1;
    }
    if (!eq && !strcmp(opt, "--env")) {
        pxrun_msg("--env needs VAR=VAL, got '%s'", spec);
        return -1;
    }
    if (eq) {
        entry = strdup(spec);
    } else {
        const char *v = getenv(spec);
        if (!v) {
            pxrun_msg("warning: -x %s: not set in pxrun's environment; not exported", spec);
            return 0;
        }
        if (asprintf(&entry, "%s=%s", spec, v) < 0)
            entry = NULL;
    }
    char **e = realloc(o->env, sizeof(char *) * (size_t)(o->nenv + 1));
    if (!entry || !e) {
        free(entry);
        return -1;
    }
    o->env = e;
    o->env[o->nenv++] = entry;
    return 0;
}

/* Returns 0 to run, 1 when done (help/version printed), -1 on a usage error. */
/* Splits the program part at each ':' followed by -n/-np N (MPMD, as
 * mpiexec does): "prog args : -n N [--] prog2 args2 ...". Without one, a
 * single app of every rank. */
static int pxrun_opts_apps(pxrun_opts_t *o)
{
    char **v = o->argv;
    int n = o->argc, start = 0, total = 0;
    o->apps = calloc((size_t)n, sizeof(*o->apps));
    if (!o->apps)
        return -1;
    o->napps = 0;
    for (int j = 0; j <= n; j++) {
        int sep = j < n && !strcmp(v[j], ":") && j + 2 < n &&
                  (!strcmp(v[j + 1], "-n") || !strcmp(v[j + 1], "-np"));
        if (j < n && !sep)
            continue;
        struct pxrun_app *a = &o->apps[o->napps++];
        a->argv = v + start;
        a->argc = j - start;
        if (a->argc < 1) {
            pxrun_msg("no program given for program %d of the ':' list", o->napps);
            return -1;
        }
        if (j == n)
            break;
        v[j] = NULL; /* ends this program's arguments */
        if (pxrun_parse_int("-n", v[j + 2], 1, &o->apps[o->napps].np) < 0)
            return -1;
        start = j + 3;
        if (start < n && !strcmp(v[start], "--"))
            start++;
        j = start - 1;
    }
    o->argc = o->apps[0].argc;
    if (o->napps > 1) {
        if (!o->np) {
            pxrun_msg("with several programs (':'), give each its -n, the first one too");
            return -1;
        }
        o->apps[0].np = o->np;
        for (int k = 0; k < o->napps; k++)
            total += o->apps[k].np;
        o->np = total;
    } else {
        o->apps[0].np = o->np;
    }
    return 0;
}

int pxrun_opts_parse(int argc, char **argv, pxrun_opts_t *o)
{
    static const struct {
        const char *names[6];
        int id;
        int has_arg;
    } table[] = {
        /* the names of MPICH's and Open MPI's launchers and of the
         * standard's mpiexec (-host, -wdir) too, so that scripts written
         * for them run unchanged */
        {{"-n", "-np", "--np", "--n", NULL}, 'n', 1},
        {{"--hosts", "-hosts", "--host", "-host", "-H", NULL}, 'H', 1},
        {{"--hostfile", "-hostfile", "-f", "--machinefile", "-machinefile", NULL}, 'f', 1},
        {{"--ppn", "-ppn", "-N", "--npernode", "-npernode", NULL}, 'p', 1},
        {{"-x", NULL}, 'x', 1},
        {{"--env", NULL}, 'e', 1},
        {{"-env", "-genv", NULL}, 'g', 1},
        {{"-genvlist", NULL}, 'G', 1},
        {{"--wdir", "-wdir", "-wd", "--wd", NULL}, 'w', 1},
        {{"--oversubscribe", "-oversubscribe", "--allow-run-as-root", NULL}, 'o', 0},
        {{"--launcher", "-launcher", NULL}, 'L', 1},
        {{"--bootstrap-iface", "-iface", NULL}, 'i', 1},
        {{"--bootstrap-port", NULL}, 'P', 1},
        {{"-l", "--tag-output", "-prepend-rank", NULL}, 'l', 0},
        {{"--timeout", NULL}, 't', 1},
        {{"--bind-to", "-bind-to", NULL}, 'b', 1},
        {{"--connect-timeout", NULL}, 'c', 1},
        {{"-v", "--verbose", NULL}, 'v', 0},
        {{"-h", "--help", NULL}, 'h', 0},
        {{"--version", NULL}, 'V', 0},
    };
    int i = 1, have_hostfile = 0, have_hosts = 0;

    o->connect_timeout = 60;
    while (i < argc) {
        const char *a = argv[i];
        const char *val = NULL;
        char name[64];
        if (a[0] != '-' || !a[1])
            break;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        /* "--opt=value" */
        const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        if (nl >= sizeof(name))
            nl = sizeof(name) - 1;
        memcpy(name, a, nl);
        name[nl] = 0;
        if (eq)
            val = eq + 1;
        /* "-n4" */
        if (!eq && a[1] == 'n' && isdigit((unsigned char)a[2])) {
            strcpy(name, "-n");
            val = a + 2;
        }
        int id = 0, has_arg = 0;
        for (size_t t = 0; t < sizeof(table) / sizeof(table[0]) && !id; t++)
            for (int k = 0; table[t].names[k] && !id; k++)
                if (!strcmp(name, table[t].names[k])) {
                    id = table[t].id;
                    has_arg = table[t].has_arg;
                }
        if (!id) {
            pxrun_msg("unknown option '%s' (see pxrun --help)", a);
            return -1;
        }
        i++;
        if (has_arg && !val) {
            if (i >= argc) {
                pxrun_msg("option '%s' needs a value (see pxrun --help)", name);
                return -1;
            }
            val = argv[i++];
        } else if (!has_arg && val) {
            pxrun_msg("option '%s' takes no value", name);
            return -1;
        }
        switch (id) {
        case 'n':
            if (pxrun_parse_int(name, val, 1, &o->np) < 0)
                return -1;
            break;
        case 'H':
            if (have_hostfile || have_hosts) {
                pxrun_msg("give --hosts or --hostfile once");
                return -1;
            }
            have_hosts = 1;
            if (pxrun_parse_hosts(o, val) < 0)
                return -1;
            break;
        case 'f':
            if (have_hostfile || have_hosts) {
                pxrun_msg("give --hosts or --hostfile once");
                return -1;
            }
            have_hostfile = 1;
            if (pxrun_parse_hostfile(o, val) < 0)
                return -1;
            break;
        case 'p':
            if (pxrun_parse_int(name, val, 1, &o->ppn) < 0)
                return -1;
            break;
        case 'x':
        case 'e':
            if (pxrun_add_env(o, id == 'x' ? "-x" : "--env", val) < 0)
                return -1;
            break;
        case 'g': /* MPICH's "-genv VAR VAL" (also VAR=VAL) */
            if (!strchr(val, '=')) {
                char *kv;
                if (i >= argc) {
                    pxrun_msg("option '%s' needs a variable and a value", name);
                    return -1;
                }
                if (asprintf(&kv, "%s=%s", val, argv[i++]) < 0)
                    return -1;
                int rc = pxrun_add_env(o, name, kv);
                free(kv);
                if (rc < 0)
                    return -1;
            } else if (pxrun_add_env(o, name, val) < 0) {
                return -1;
            }
            break;
        case 'G': /* MPICH's "-genvlist A,B": each as -x */
            for (const char *p = val; *p;) {
                const char *end = strchr(p, ',');
                size_t len = end ? (size_t)(end - p) : strlen(p);
                char var[256];
                if (!len || len >= sizeof(var) || memchr(p, '=', len)) {
                    pxrun_msg("-genvlist needs variable names separated by ',', got '%s'", val);
                    return -1;
                }
                memcpy(var, p, len);
                var[len] = 0;
                if (pxrun_add_env(o, "-x", var) < 0)
                    return -1;
                p += len + (end != NULL);
            }
            break;
        case 'w':
            if (!*val) {
                pxrun_msg("%s needs a directory", name);
                return -1;
            }
            o->wdir = val;
            break;
        case 'o': /* pxrun places any number of ranks, and runs as root */
            break;
        case 'L':
            if (!*val) {
                pxrun_msg("--launcher needs a command");
                return -1;
            }
            o->launcher = val;
            break;
        case 'i':
            o->boot_iface = val;
            break;
        case 'P':
            if (pxrun_parse_int(name, val, 0, &o->boot_port) < 0 || o->boot_port > 65535) {
                pxrun_msg("invalid --bootstrap-port '%s'", val);
                return -1;
            }
            break;
        case 'b': {
            char kv[32], err[256];
            if (px_param_check("PX_BIND", val, err, sizeof(err)) != PX_OK) {
                pxrun_msg("--bind-to: %s", err);
                return -1;
            }
            snprintf(kv, sizeof(kv), "PX_BIND=%s", val);
            if (pxrun_add_env(o, "--bind-to", kv) < 0)
                return -1;
            break;
        }
        case 'l':
            o->tag_output = 1;
            break;
        case 't':
            if (pxrun_parse_secs(name, val, &o->timeout) < 0)
                return -1;
            break;
        case 'c':
            if (pxrun_parse_secs(name, val, &o->connect_timeout) < 0)
                return -1;
            o->connect_timeout_given = 1;
            break;
        case 'v':
            o->verbose = 1;
            break;
        case 'h':
            pxrun_usage(stdout);
            return 1;
        case 'V':
            printf("pxrun (Plexus) %s\n", PX_VERSION);
            return 1;
        }
    }
    if (i >= argc) {
        pxrun_msg("no program given (see pxrun --help)");
        return -1;
    }
    /* the time limit test harnesses set for MPICH's and Open MPI's
     * launchers too; --timeout wins */
    const char *env_limit = getenv("MPIEXEC_TIMEOUT");
    o->timeout_from = "--timeout";
    if (!o->timeout && env_limit && *env_limit) {
        if (pxrun_parse_secs("MPIEXEC_TIMEOUT", env_limit, &o->timeout) < 0)
            return -1;
        o->timeout_from = "MPIEXEC_TIMEOUT";
    }
    o->argv = argv + i;
    o->argc = argc - i;
    return pxrun_opts_apps(o);
}

const struct pxrun_app *pxrun_app_of(const pxrun_opts_t *o, int rank, int *appnum_p)
{
    int k = 0;
    for (int first = 0; k < o->napps - 1 && rank >= first + o->apps[k].np; k++)
        first += o->apps[k].np;
    if (appnum_p)
        *appnum_p = k;
    return &o->apps[k];
}

int pxrun_host_is_local(const char *name)
{
    char me[256];
    if (!strcmp(name, "localhost") || !strncmp(name, "127.", 4) || !strcmp(name, "::1"))
        return 1;
    if (gethostname(me, sizeof(me)) < 0)
        return 0;
    me[sizeof(me) - 1] = 0;
    if (!strcmp(name, me))
        return 1;
    /* inside a Slurm job: this node's name in the allocation */
    const char *slurm = getenv("SLURMD_NODENAME");
    if (slurm && !strcmp(name, slurm))
        return 1;
    /* short name of this host */
    char *dot = strchr(me, '.');
    if (dot && !strchr(name, '.') && (size_t)(dot - me) == strlen(name) &&
        !strncmp(me, name, (size_t)(dot - me)))
        return 1;
    return 0;
}

/* Fills hosts in order, `slots` (or --ppn) ranks each, wrapping around when
 * ranks outnumber slots; a node is a distinct host name, numbered by first use. */
int pxrun_place(pxrun_job_t *job)
{
    pxrun_opts_t *o = job->opts;
    static char me[256];
    int total = 0;

    if (!o->nhosts && pxrun_slurm_hosts(o) < 0)
        return -1;
    for (int h = 0; h < o->nhosts; h++) {
        char *l = NULL;
        if (asprintf(&l, "%s%s%s:%d", job->hosts_list ? job->hosts_list : "", h ? "," : "",
                     o->hosts[h].name, o->hosts[h].slots) < 0)
            return -1;
        free(job->hosts_list);
        job->hosts_list = l;
    }
    int alone = !o->nhosts; /* this machine only, no host list */
    if (alone) {
        if (gethostname(me, sizeof(me)) < 0 || !me[0])
            strcpy(me, "localhost");
        me[sizeof(me) - 1] = 0;
        if (pxrun_add_host(o, me, strlen(me), o->np ? o->np : 1) < 0)
            return -1;
    }
    for (int h = 0; h < o->nhosts; h++)
        total += o->ppn ? o->ppn : o->hosts[h].slots;
    job->np = o->np ? o->np : total;
    job->universe_size = job->np > total ? job->np : total;
    /* MPI_UNIVERSE_SIZE: the slots given; on this machine alone its cores
     * (as Open MPI's mpirun says), so that a program that spawns as many
     * processes as the universe has room for fills the machine */
    long cores = alone ? sysconf(_SC_NPROCESSORS_ONLN) : 0;
    if (cores > job->universe_size && cores < 1 << 20)
        job->universe_size = (int)cores;
    job->ranks = calloc((size_t)job->np, sizeof(*job->ranks));
    job->node_of = calloc((size_t)job->np, sizeof(int));
    const char **node_names = calloc((size_t)job->np, sizeof(char *));
    if (!job->ranks || !job->node_of || !node_names) {
        free(node_names);
        return -1;
    }
    job->num_nodes = 0;
    for (int r = 0; r < job->np;) {
        for (int h = 0; h < o->nhosts && r < job->np; h++) {
            int cap = o->ppn ? o->ppn : o->hosts[h].slots;
            for (int k = 0; k < cap && r < job->np; k++, r++) {
                pxrun_rank_t *rk = &job->ranks[r];
                int node = -1;
                for (int n = 0; n < job->num_nodes && node < 0; n++)
                    if (!strcmp(node_names[n], o->hosts[h].name))
                        node = n;
                if (node < 0) {
                    node = job->num_nodes++;
                    node_names[node] = o->hosts[h].name;
                }
                rk->rank = r;
                rk->host = o->hosts[h].name;
                rk->node_id = node;
                rk->remote = o->launcher || !pxrun_host_is_local(rk->host);
                rk->pid = -1;
                rk->out.fd = rk->err.fd = -1;
                job->node_of[r] = node;
            }
        }
    }
    for (int r = 0; r < job->np; r++) {
        pxrun_rank_t *rk = &job->ranks[r];
        for (int q = 0; q < job->np; q++) {
            if (job->node_of[q] != rk->node_id)
                continue;
            if (q < r)
                rk->local_rank++;
            rk->local_size++;
        }
    }
    free(node_names);
    return 0;
}

/* Splits on blanks; single or double quotes group words (no escapes, no shell). */
int pxrun_split_words(const char *s, char ***words_p, int *n_p)
{
    char **w = NULL;
    int n = 0;
    const char *p = s;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        char *word = malloc(strlen(p) + 1);
        size_t k = 0;
        if (!word)
            goto err;
        while (*p && *p != ' ' && *p != '\t') {
            if (*p == '\'' || *p == '"') {
                char q = *p++;
                const char *end = strchr(p, q);
                if (!end) {
                    free(word);
                    pxrun_msg("unbalanced quote in '%s'", s);
                    goto err;
                }
                memcpy(word + k, p, (size_t)(end - p));
                k += (size_t)(end - p);
                p = end + 1;
            } else {
                word[k++] = *p++;
            }
        }
        word[k] = 0;
        char **nw = realloc(w, sizeof(char *) * (size_t)(n + 2));
        if (!nw) {
            free(word);
            goto err;
        }
        w = nw;
        w[n++] = word;
        w[n] = NULL;
    }
    *words_p = w;
    *n_p = n;
    return 0;
err:
    for (int i = 0; i < n; i++)
        free(w[i]);
    free(w);
    return -1;
}

/* Picks the address the bootstrap server listens on and advertises. */
int pxrun_resolve_iface(pxrun_job_t *job)
{
    const char *want = job->opts->boot_iface;
    struct in_addr a;
    struct ifaddrs *ifs = NULL, *ifa;
    int all_local = 1;

    for (int r = 0; r < job->np; r++)
        all_local &= !job->ranks[r].remote;
    if (want && inet_pton(AF_INET, want, &a) == 1) {
        snprintf(job->boot_ip, sizeof(job->boot_ip), "%s", want);
        return 0;
    }
    if (!want && all_local) {
        snprintf(job->boot_ip, sizeof(job->boot_ip), "127.0.0.1");
        return 0;
    }
    if (getifaddrs(&ifs) < 0) {
        pxrun_msg("cannot list network interfaces: %s", strerror(errno));
        return -1;
    }
    job->boot_ip[0] = 0;
    for (ifa = ifs; ifa && !job->boot_ip[0]; ifa = ifa->ifa_next) {
        if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET || !(ifa->ifa_flags & IFF_UP))
            continue;
        if (want ? strcmp(ifa->ifa_name, want) != 0 : (ifa->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)ifa->ifa_addr)->sin_addr, job->boot_ip,
                  sizeof(job->boot_ip));
    }
    freeifaddrs(ifs);
    if (!job->boot_ip[0]) {
        if (want) {
            pxrun_msg("--bootstrap-iface '%s': no such interface with an IPv4 address, and not an "
                      "IPv4 address",
                      want);
            return -1;
        }
        pxrun_msg("warning: no non-loopback IPv4 address found; remote ranks may not reach "
                  "127.0.0.1 (use --bootstrap-iface)");
        snprintf(job->boot_ip, sizeof(job->boot_ip), "127.0.0.1");
    }
    return 0;
}
