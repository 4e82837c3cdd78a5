/* pxrun inside a Slurm allocation (sbatch, salloc): the hosts and their
 * slots come from the allocation, as mpiexec takes them in MPICH and Open
 * MPI, and ranks on the allocation's other nodes start through srun. */
#include "pxrun.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends the names of one hostlist entry, "node", "node[1-3,7]" or
 * "gpu[01-02]" (zero padding kept), each with `slots`. */
static int pxrun_slurm_expand(pxrun_opts_t *o, const char *ent, size_t n, int **slots_p,
                              int *nslots, int *next)
{
    const char *lb = memchr(ent, '[', n);
    char name[300];
    if (!lb) {
        if (*next >= *nslots)
            return -1;
        return pxrun_add_host(o, ent, n, (*slots_p)[(*next)++]);
    }
    const char *rb = memchr(lb, ']', n - (size_t)(lb - ent));
    if (!rb || (size_t)(lb - ent) >= 200)
        return -1;
    size_t plen = (size_t)(lb - ent);
    const char *suffix = rb + 1;
    size_t slen = n - (size_t)(suffix - ent);
    const char *p = lb + 1;
    while (p < rb) {
        const char *e = p;
        while (e < rb && *e != ',')
            e++;
        char lo_s[32], hi_s[32];
        const char *dash = memchr(p, '-', (size_t)(e - p));
        size_t ll = (size_t)((dash ? dash : e) - p);
        size_t hl = dash ? (size_t)(e - dash - 1) : ll;
        if (!ll || ll >= sizeof(lo_s) || !hl || hl >= sizeof(hi_s))
            return -1;
        memcpy(lo_s, p, ll);
        lo_s[ll] = 0;
        memcpy(hi_s, dash ? dash + 1 : p, hl);
        hi_s[hl] = 0;
        for (size_t i = 0; i < ll; i++)
            if (!isdigit((unsigned char)lo_s[i]))
                return -1;
        for (size_t i = 0; i < hl; i++)
            if (!isdigit((unsigned char)hi_s[i]))
                return -1;
        long lo = atol(lo_s), hi = atol(hi_s);
        if (hi < lo || hi - lo > 100000)
            return -1;
        for (long v = lo; v <= hi; v++) {
            int k = snprintf(name, sizeof(name), "%.*s%0*ld%.*s", (int)plen, ent, (int)ll, v,
                             (int)slen, suffix);
            if (k <= 0 || k >= (int)sizeof(name) || *next >= *nslots)
                return -1;
            if (pxrun_add_host(o, name, (size_t)k, (*slots_p)[(*next)++]) < 0)
                return -1;
        }
        p = e < rb ? e + 1 : rb;
    }
    return 0;
}

/* "2(x3),1" -> 2,2,2,1 */
static int pxrun_slurm_counts(const char *s, int **out, int *n)
{
    *out = NULL;
    *n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10), rep = 1;
        if (end == s || v < 1 || v > 1 << 20)
            return -1;
        if (!strncmp(end, "(x", 2)) {
            rep = strtol(end + 2, &end, 10);
            if (rep < 1 || rep > 1 << 20 || *end != ')')
                return -1;
            end++;
        }
        int *g = realloc(*out, sizeof(int) * (size_t)(*n + rep));
        if (!g)
            return -1;
        *out = g;
        for (long i = 0; i < rep; i++)
            (*out)[(*n)++] = (int)v;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        s = end;
    }
    return *n ? 0 : -1;
}

int pxrun_slurm_hosts(pxrun_opts_t *o)
{
    const char *list = getenv("SLURM_JOB_NODELIST");
    const char *tasks = getenv("SLURM_TASKS_PER_NODE");
    if (!tasks || !*tasks)
        tasks = getenv("SLURM_JOB_CPUS_PER_NODE");
    if (!list || !*list || !getenv("SLURM_JOB_ID"))
        return 0;
    int *slots = NULL, nslots = 0, next = 0;
    if (!tasks || pxrun_slurm_counts(tasks, &slots, &nslots) < 0) {
        pxrun_msg("inside a Slurm allocation, but SLURM_TASKS_PER_NODE ('%s') does not say how "
                  "many tasks go on each node: give --hosts",
                  tasks ? tasks : "");
        free(slots);
        return -1;
    }
    /* entries are separated by commas outside brackets */
    const char *p = list;
    int depth = 0, bad = 0;
    for (const char *q = list;; q++) {
        if (*q == '[')
            depth++;
        else if (*q == ']')
            depth--;
        if ((*q == ',' && depth == 0) || !*q) {
            if (q == p || pxrun_slurm_expand(o, p, (size_t)(q - p), &slots, &nslots, &next) < 0)
                bad = 1;
            if (!*q || bad)
                break;
            p = q + 1;
        }
    }
    if (!bad && next != nslots)
        bad = 1;
    free(slots);
    if (bad) {
        pxrun_msg("cannot read the Slurm allocation (SLURM_JOB_NODELIST '%s', tasks per node "
                  "'%s'): give --hosts",
                  list, tasks);
        return -1;
    }
    /* this allocation's other nodes are reached through srun, which needs
     * neither ssh nor keys */
    if (!o->launcher)
        o->remote_launcher = "srun --overlap --mpi=none --nodes=1 --ntasks=1 --nodelist={host}";
    return 1;
}
