/* Algorithm registry and selection. The registry lists every algorithm
 * with the conditions it needs; the default table below (data, first
 * matching row wins) picks one per call from the communicator size, the
 * message size and the ranks per node; PX_<COLL>_ALGORITHM forces one. */
#include "coll_impl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const px_coll_names[PX_COLL_COUNT] = {
    [PX_COLL_BARRIER] = "barrier",
    [PX_COLL_BCAST] = "bcast",
    [PX_COLL_REDUCE] = "reduce",
    [PX_COLL_ALLREDUCE] = "allreduce",
    [PX_COLL_GATHER] = "gather",
    [PX_COLL_GATHERV] = "gatherv",
    [PX_COLL_SCATTER] = "scatter",
    [PX_COLL_SCATTERV] = "scatterv",
    [PX_COLL_ALLGATHER] = "allgather",
    [PX_COLL_ALLGATHERV] = "allgatherv",
    [PX_COLL_ALLTOALL] = "alltoall",
    [PX_COLL_ALLTOALLV] = "alltoallv",
    [PX_COLL_ALLTOALLW] = "alltoallw",
    [PX_COLL_REDUCE_SCATTER] = "reduce_scatter",
    [PX_COLL_REDUCE_SCATTER_BLOCK] = "reduce_scatter_block",
    [PX_COLL_SCAN] = "scan",
    [PX_COLL_EXSCAN] = "exscan",
};

const char *px_coll_name(px_coll_id_t coll) { return px_coll_names[coll]; }

/* The registry: the first algorithm of each collective without conditions
 * is the fallback when nothing else applies. */
static const px_coll_algo_t px_coll_algos[] = {
    {PX_COLL_BARRIER, "dissemination", px_coll_barrier_dissemination, 0,
     "ceil(log2 n) rounds, any n"},
    {PX_COLL_BARRIER, "recursive_doubling", px_coll_barrier_recursive_doubling, 0,
     "pairwise exchanges over the largest power of two"},
    {PX_COLL_BARRIER, "tree", px_coll_barrier_tree, 0,
     "binomial fan-in to rank 0 and fan-out, n-1 messages each way"},
    {PX_COLL_BARRIER, "smp", px_coll_barrier_smp, PX_COLL_F_HIER,
     "node-local gather, barrier among node leaders, node-local release"},
    {PX_COLL_BARRIER, "shm", NULL, PX_COLL_F_SHM, "flags in a shared segment, one wait"},
    {PX_COLL_BCAST, "binomial", px_coll_bcast_binomial, 0, "binomial tree"},
    {PX_COLL_BCAST, "knomial", px_coll_bcast_knomial, 0, "k-nomial tree (PX_BCAST_KNOMIAL_RADIX)"},
    {PX_COLL_BCAST, "linear", px_coll_bcast_linear, 0,
     "root sends to all at once (one node, single-copy reads in parallel)"},
    {PX_COLL_BCAST, "scatter_ring", px_coll_bcast_scatter_ring, 0,
     "binomial scatter + ring allgather (large messages)"},
    {PX_COLL_BCAST, "pipeline", px_coll_bcast_pipeline, 0,
     "segments down a chain of ranks (PX_BCAST_PIPELINE_SEGMENT; large messages, few ranks)"},
    {PX_COLL_BCAST, "smp", px_coll_bcast_smp, PX_COLL_F_HIER,
     "root to its node leader, among leaders, then within each node"},
    {PX_COLL_BCAST, "topo", px_coll_bcast_topo, PX_COLL_F_TOPO,
     "binomial tree over the hosts renumbered from a delay matrix (hops, or 1/min link rate; "
     "PX_TOPO), then within each host"},
    {PX_COLL_BCAST, "shm", NULL, PX_COLL_F_SHM, "root writes a shared slot, all read it"},
    {PX_COLL_BCAST, "cma", NULL, PX_COLL_F_SHM | PX_COLL_F_CMA,
     "all read the root's buffer directly (process_vm_readv), one copy"},
    {PX_COLL_REDUCE, "ordered", px_coll_reduce_ordered, 0,
     "rank-ordered binomial tree to rank 0 (any operation)"},
    {PX_COLL_REDUCE, "binomial", px_coll_reduce_binomial, PX_COLL_F_COMMUTE,
     "binomial tree rooted at the root"},
    {PX_COLL_REDUCE, "rabenseifner", px_coll_reduce_rabenseifner,
     PX_COLL_F_COMMUTE | PX_COLL_F_CONTIG | PX_COLL_F_COUNT_POF2,
     "recursive-halving reduce-scatter + gather to the root (large)"},
    {PX_COLL_REDUCE, "shm", NULL, PX_COLL_F_SHM | PX_COLL_F_CONTIG,
     "all write shared slots, the root combines them in rank order"},
    {PX_COLL_ALLREDUCE, "reduce_bcast", px_coll_allreduce_reduce_bcast, 0,
     "reduce to rank 0 + broadcast (any operation)"},
    {PX_COLL_ALLREDUCE, "recursive_doubling", px_coll_allreduce_recursive_doubling,
     PX_COLL_F_COMMUTE, "log2 n whole-vector exchanges (small)"},
    {PX_COLL_ALLREDUCE, "rabenseifner", px_coll_allreduce_rabenseifner,
     PX_COLL_F_COMMUTE | PX_COLL_F_CONTIG | PX_COLL_F_COUNT_POF2,
     "recursive-halving reduce-scatter + recursive-doubling allgather"},
    {PX_COLL_ALLREDUCE, "ring", px_coll_allreduce_ring, PX_COLL_F_COMMUTE | PX_COLL_F_CONTIG,
     "ring reduce-scatter + ring allgather (large)"},
    {PX_COLL_ALLREDUCE, "smp", px_coll_allreduce_smp, PX_COLL_F_COMMUTE | PX_COLL_F_HIER,
     "node reduce, allreduce among leaders, node broadcast"},
    {PX_COLL_ALLREDUCE, "shm", NULL, PX_COLL_F_SHM | PX_COLL_F_CONTIG,
     "all write shared slots, each combines them in rank order"},
    {PX_COLL_GATHER, "linear", px_coll_gather_linear, 0, "root receives from all at once"},
    {PX_COLL_GATHER, "binomial", px_coll_gather_binomial, 0, "binomial tree (small blocks)"},
    {PX_COLL_GATHER, "topo", px_coll_gather_topo, PX_COLL_F_TOPO,
     "through a leader per route group of each switch cluster (PX_TOPO): one message per group to "
     "the root"},
    {PX_COLL_GATHER, "shm", NULL, PX_COLL_F_SHM, "all write shared slots, the root reads them"},
    {PX_COLL_GATHERV, "linear", px_coll_gatherv_linear, 0, "root receives from all at once"},
    {PX_COLL_GATHERV, "shm", NULL, PX_COLL_F_SHM,
     "blocks up to a lane's slot through shared slots, the root reads them; larger ones as "
     "messages"},
    {PX_COLL_SCATTER, "linear", px_coll_scatter_linear, 0, "root sends to all at once"},
    {PX_COLL_SCATTER, "binomial", px_coll_scatter_binomial, 0, "binomial tree (small blocks)"},
    {PX_COLL_SCATTER, "topo", px_coll_scatter_topo, PX_COLL_F_TOPO,
     "through a leader per route group of each switch cluster (PX_TOPO): one message per group "
     "from the root"},
    {PX_COLL_SCATTER, "shm", NULL, PX_COLL_F_SHM,
     "the root writes the n blocks to a shared slot, each reads its own"},
    {PX_COLL_SCATTERV, "linear", px_coll_scatterv_linear, 0, "root sends to all at once"},
    {PX_COLL_SCATTERV, "shm", NULL, PX_COLL_F_SHM,
     "the root writes blocks up to an n-th of a lane's slot to a shared slot, each reads its "
     "own; larger ones as messages"},
    {PX_COLL_ALLGATHER, "ring", px_coll_allgather_ring, 0, "n-1 neighbour steps (large)"},
    {PX_COLL_ALLGATHER, "recursive_doubling", px_coll_allgather_recursive_doubling, PX_COLL_F_POF2,
     "log2 n exchanges of doubling size"},
    {PX_COLL_ALLGATHER, "bruck", px_coll_allgather_bruck, 0, "ceil(log2 n) steps, any n"},
    {PX_COLL_ALLGATHER, "linear", px_coll_allgather_linear, 0,
     "everyone to everyone in one step (ranks sharing cores)"},
    {PX_COLL_ALLGATHER, "shm", NULL, PX_COLL_F_SHM, "all write shared slots, all read them"},
    {PX_COLL_ALLGATHER, "cma", NULL, PX_COLL_F_SHM | PX_COLL_F_CMA,
     "each reads every other's block from its buffer (process_vm_readv)"},
    {PX_COLL_ALLGATHERV, "ring", px_coll_allgatherv_ring, 0, "n-1 neighbour steps"},
    {PX_COLL_ALLGATHERV, "linear", px_coll_allgatherv_linear, 0, "everyone to everyone at once"},
    {PX_COLL_ALLGATHERV, "shm", NULL, PX_COLL_F_SHM, "all write shared slots, all read them"},
    {PX_COLL_ALLTOALL, "pairwise", px_coll_alltoall_pairwise, 0,
     "n-1 steps, one partner each (large)"},
    {PX_COLL_ALLTOALL, "bruck", px_coll_alltoall_bruck, 0, "ceil(log2 n) steps (small)"},
    {PX_COLL_ALLTOALL, "linear", px_coll_alltoall_linear, 0, "all transfers at once (medium)"},
    {PX_COLL_ALLTOALL, "staggered", px_coll_alltoall_staggered, 0,
     "first node's ranks in turn exchange with all later ones (large, two nodes)"},
    {PX_COLL_ALLTOALL, "topo", px_coll_alltoall_topo, PX_COLL_F_TOPO,
     "pair exchanges in topology-aware steps, farthest partners first, a conflict budget per "
     "link (PX_TOPO; TACS1 on the whole job, TACS2 on parts; DCSS leaves it to pairwise)"},
    {PX_COLL_ALLTOALL, "shm", NULL, PX_COLL_F_SHM,
     "each writes its n blocks to a shared slot, all read theirs"},
    {PX_COLL_ALLTOALL, "cma", NULL, PX_COLL_F_SHM | PX_COLL_F_CMA,
     "each reads its block from every other's buffer (process_vm_readv)"},
    {PX_COLL_ALLTOALLV, "pairwise", px_coll_alltoallw_pairwise, 0, "n steps, one partner each"},
    {PX_COLL_ALLTOALLV, "linear", px_coll_alltoallw_linear, 0, "all transfers at once"},
    {PX_COLL_ALLTOALLV, "shm", NULL, PX_COLL_F_SHM,
     "each writes its blocks up to an n-th of a lane's slot to a shared slot, all read theirs; "
     "larger ones as messages"},
    {PX_COLL_ALLTOALLW, "pairwise", px_coll_alltoallw_pairwise, 0, "n steps, one partner each"},
    {PX_COLL_ALLTOALLW, "linear", px_coll_alltoallw_linear, 0, "all transfers at once"},
    {PX_COLL_REDUCE_SCATTER, "reduce_scatterv", px_coll_reduce_scatter_reduce_scatterv, 0,
     "reduce to rank 0 + scatterv (any operation)"},
    {PX_COLL_REDUCE_SCATTER, "recursive_halving", px_coll_reduce_scatter_recursive_halving,
     PX_COLL_F_COMMUTE | PX_COLL_F_CONTIG | PX_COLL_F_POF2, "log2 n halving exchanges"},
    {PX_COLL_REDUCE_SCATTER, "pairwise", px_coll_reduce_scatter_pairwise, PX_COLL_F_COMMUTE,
     "n-1 pairwise exchanges"},
    {PX_COLL_REDUCE_SCATTER, "shm", NULL, PX_COLL_F_SHM | PX_COLL_F_CONTIG,
     "all write their vectors to shared slots, each combines its part over them"},
    {PX_COLL_REDUCE_SCATTER_BLOCK, "reduce_scatterv", px_coll_reduce_scatter_reduce_scatterv, 0,
     "reduce to rank 0 + scatterv (any operation)"},
    {PX_COLL_REDUCE_SCATTER_BLOCK, "recursive_halving", px_coll_reduce_scatter_recursive_halving,
     PX_COLL_F_COMMUTE | PX_COLL_F_CONTIG | PX_COLL_F_POF2, "log2 n halving exchanges"},
    {PX_COLL_REDUCE_SCATTER_BLOCK, "pairwise", px_coll_reduce_scatter_pairwise, PX_COLL_F_COMMUTE,
     "n-1 pairwise exchanges"},
    {PX_COLL_REDUCE_SCATTER_BLOCK, "shm", NULL, PX_COLL_F_SHM | PX_COLL_F_CONTIG,
     "all write their vectors to shared slots, each combines its part over them"},
    {PX_COLL_SCAN, "recursive_doubling", px_coll_scan_recursive_doubling, 0,
     "log2 n exchanges, rank order kept"},
    {PX_COLL_SCAN, "linear", px_coll_scan_linear, 0, "chain through the ranks"},
    {PX_COLL_EXSCAN, "recursive_doubling", px_coll_exscan_recursive_doubling, 0,
     "log2 n exchanges, rank order kept"},
    {PX_COLL_EXSCAN, "linear", px_coll_exscan_linear, 0, "chain through the ranks"},
};
#define PX_NALGOS ((int)(sizeof(px_coll_algos) / sizeof(px_coll_algos[0])))

/* Each algorithm's uses and their bytes, for the tool interface: one
 * increment per collective, none on the point-to-point path. */
static uint64_t px_coll_algo_calls[PX_NALGOS], px_coll_algo_bytes[PX_NALGOS];

static void px_coll_count(const px_coll_algo_t *al, const px_coll_args_t *a)
{
    px_coll_algo_calls[al - px_coll_algos]++;
    px_coll_algo_bytes[al - px_coll_algos] += a->bytes;
}

void px_coll_count_shm(px_coll_id_t coll, size_t bytes)
{
    static int at[PX_COLL_COUNT]; /* index + 1 of coll's "shm" algorithm, found once */
    if (!at[coll])
        for (int i = 0; i < PX_NALGOS && !at[coll]; i++)
            if (px_coll_algos[i].coll == coll && !strcmp(px_coll_algos[i].name, "shm"))
                at[coll] = i + 1;
    if (at[coll] > 0) {
        px_coll_algo_calls[at[coll] - 1]++;
        px_coll_algo_bytes[at[coll] - 1] += bytes;
    }
}

int px_coll_algo_count(void) { return PX_NALGOS; }

const char *px_coll_algo_info(int i, const char **coll_p)
{
    if (i < 0 || i >= PX_NALGOS)
        return NULL;
    *coll_p = px_coll_names[px_coll_algos[i].coll];
    return px_coll_algos[i].name;
}

void px_coll_algo_usage(int i, uint64_t *calls_p, uint64_t *bytes_p)
{
    *calls_p = i >= 0 && i < PX_NALGOS ? px_coll_algo_calls[i] : 0;
    *bytes_p = i >= 0 && i < PX_NALGOS ? px_coll_algo_bytes[i] : 0;
}

/* The default selection table is data: coll_table.json, in the format of
 * PX_COLL_TUNING_FILE (below), compiled into the library as
 * px_coll_table_json and read with the same parser. The message size is
 * the whole vector for bcast and the reductions and one rank's block for
 * the gathers, scatters and alltoalls; node-aware ("smp") rows only apply
 * when the communicator spans several nodes with more than one rank on
 * some node. What each row rests on, with the measurements, is in
 * docs/collectives.md ("The selection table, operation by operation"). */
extern const char px_coll_table_json[];

static const px_coll_algo_t *px_coll_find(px_coll_id_t coll, const char *name)
{
    for (int i = 0; i < PX_NALGOS; i++)
        if (px_coll_algos[i].coll == coll && !strcmp(px_coll_algos[i].name, name))
            return &px_coll_algos[i];
    return NULL;
}

/* ---------- tuning file ----------
 * PX_COLL_TUNING_FILE names a JSON array of rules consulted before the
 * default table, e.g.
 *   [{"coll": "bcast", "max_comm_size": 0, "max_bytes": 16384,
 *     "max_ppn": 0, "nodes": "any", "algorithm": "binomial"}, ...]
 * ("nodes": "one" = all ranks on one node, "several" = on more than one,
 * "pairs" = on more than one with ranks 2i and 2i+1 on one node, "two" =
 * on exactly two nodes.)
 * Every rank must read the same file. Unknown collectives or algorithms
 * are reported and skipped. */

/* A table of rules and their algorithms, looked up by name once:
 * selection runs on every blocking collective and must not compare
 * strings each time. */
typedef struct px_coll_table {
    px_coll_rule_t *rules;
    const px_coll_algo_t **algos;
    int n;
} px_coll_table_t;

static px_coll_table_t px_file_table, px_default_table;
static int px_tables_loaded;
#define px_file_nrules (px_file_table.n)

/* The value of "key" inside the object text [p, end): a number or string. */
static int px_json_field(const char *p, const char *end, const char *key, char *out, size_t outsz)
{
    size_t kl = strlen(key);
    for (const char *q = p; q + kl + 2 <= end; q++) {
        if (*q != '"' || strncmp(q + 1, key, kl) || q[kl + 1] != '"')
            continue;
        q += kl + 2;
        while (q < end && (isspace((unsigned char)*q) || *q == ':'))
            q++;
        size_t n = 0;
        if (q < end && *q == '"') {
            for (q++; q < end && *q != '"' && n + 1 < outsz; q++)
                out[n++] = *q;
        } else {
            for (; q < end && (isalnum((unsigned char)*q) || *q == '_') && n + 1 < outsz; q++)
                out[n++] = *q;
        }
        out[n] = 0;
        return n > 0;
    }
    return 0;
}

/* The rules of a JSON array in text; `origin` names it in warnings. */
static void px_coll_parse_table(const char *text, const char *origin, px_coll_table_t *t)
{
    int cap = 0;
    for (const char *p = text; (p = strchr(p, '{')); p++)
        cap++;
    t->rules = calloc((size_t)(cap ? cap : 1), sizeof(*t->rules));
    t->algos = calloc((size_t)(cap ? cap : 1), sizeof(*t->algos));
    if (!t->rules || !t->algos) {
        free(t->rules);
        free(t->algos);
        t->rules = NULL;
        t->algos = NULL;
        return;
    }
    for (const char *p = text; (p = strchr(p, '{'));) {
        const char *end = strchr(p, '}');
        if (!end)
            break;
        char coll[64], algo[64], num[32];
        px_coll_rule_t ru = {0};
        int ci = -1;
        if (px_json_field(p, end, "coll", coll, sizeof(coll)))
            for (int i = 0; i < PX_COLL_COUNT; i++)
                if (!strcmp(coll, px_coll_names[i]))
                    ci = i;
        if (ci < 0 || !px_json_field(p, end, "algorithm", algo, sizeof(algo)) ||
            !px_coll_find((px_coll_id_t)ci, algo)) {
            px_warn("coll", "%s: skipping rule %.*s", origin, (int)(end - p + 1), p);
            p = end + 1;
            continue;
        }
        ru.coll = (px_coll_id_t)ci;
        ru.algo = px_coll_find((px_coll_id_t)ci, algo)->name;
        if (px_json_field(p, end, "max_comm_size", num, sizeof(num)))
            ru.max_comm_size = atoi(num);
        if (px_json_field(p, end, "max_bytes", num, sizeof(num)))
            ru.max_bytes = (size_t)strtoull(num, NULL, 10);
        if (px_json_field(p, end, "max_ppn", num, sizeof(num)))
            ru.max_ppn = atoi(num);
        if (px_json_field(p, end, "nodes", num, sizeof(num))) {
            if (!strcmp(num, "one"))
                ru.nodes = PX_COLL_NODES_ONE;
            else if (!strcmp(num, "several"))
                ru.nodes = PX_COLL_NODES_SEVERAL;
            else if (!strcmp(num, "pairs"))
                ru.nodes = PX_COLL_NODES_PAIRS;
            else if (!strcmp(num, "two"))
                ru.nodes = PX_COLL_NODES_TWO;
            else if (strcmp(num, "any")) {
                px_warn("coll",
                        "%s: \"nodes\" must be one, several, pairs, two or any; skipping rule %.*s",
                        origin, (int)(end - p + 1), p);
                p = end + 1;
                continue;
            }
        }
        t->algos[t->n] = px_coll_find(ru.coll, ru.algo);
        t->rules[t->n++] = ru;
        p = end + 1;
    }
}

static void px_coll_load_tables(void)
{
    px_tables_loaded = 1;
    px_coll_parse_table(px_coll_table_json, "the built-in selection table", &px_default_table);
    const char *path = px_params.coll_tuning_file;
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "r");
    if (!f) {
        px_warn("coll", "PX_COLL_TUNING_FILE=%s: cannot open; using the default table", path);
        return;
    }
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[len] = 0;
    px_coll_parse_table(text, path, &px_file_table);
}

/* Row i of the effective table: the file's rules, then the defaults. */
static const px_coll_rule_t *px_coll_rule(int i)
{
    if (!px_tables_loaded)
        px_coll_load_tables();
    if (i < px_file_table.n)
        return &px_file_table.rules[i];
    i -= px_file_table.n;
    return i < px_default_table.n ? &px_default_table.rules[i] : NULL;
}

static const px_coll_algo_t *px_coll_rule_algo(int i, const px_coll_rule_t *ru)
{
    (void)ru;
    if (i < px_file_table.n)
        return px_file_table.algos[i];
    return px_default_table.algos[i - px_file_table.n];
}

/* Set while selecting for a blocking call made by the application. */
static __thread int px_select_top;

/* Whether the algorithm can run this call. Every input is the same on
 * every rank, so all ranks choose alike. */
static int px_coll_applies(const px_coll_algo_t *al, const px_coll_args_t *a, px_mpi_comm_t *c)
{
    int n = c->size;
    if ((al->flags & PX_COLL_F_COMMUTE) && !a->commute)
        return 0;
    if ((al->flags & PX_COLL_F_POF2) && (n & (n - 1)))
        return 0;
    if (al->flags & PX_COLL_F_CONTIG) {
        px_mpi_dt_t *d = px_mpi_dt_get(a->dt);
        if (!d || !d->contig)
            return 0;
    }
    if ((al->flags & PX_COLL_F_COUNT_POF2) && a->count < px_coll_pof2_floor(n))
        return 0;
    if ((al->flags & PX_COLL_F_HIER) && !px_coll_hier_usable(c))
        return 0;
    if ((al->flags & PX_COLL_F_TOPO) && !px_coll_tclus_usable(c))
        return 0;
    if ((al->flags & PX_COLL_F_TOPO) && al->coll == PX_COLL_ALLTOALL && !px_coll_ta2a_usable(c))
        return 0;
    if (al->flags & PX_COLL_F_SHM) {
        if (!px_select_top)
            return 0;
        /* the first call that gets here sets the segment up, with
         * collectives of its own that must not consider it */
        px_select_top = 0;
        int ok = px_coll_shm_usable(al->coll, (al->flags & PX_COLL_F_CMA) != 0, a, c);
        px_select_top = 1;
        return ok;
    }
    return 1;
}

static const px_coll_algo_t *px_coll_fallback(px_coll_id_t coll)
{
    for (int i = 0; i < PX_NALGOS; i++)
        if (px_coll_algos[i].coll == coll && !px_coll_algos[i].flags)
            return &px_coll_algos[i];
    return NULL;
}

/* PX_<COLL>_ALGORITHM: the parameter table accepts only names of the
 * registry (or auto). */
static const char *const *const px_coll_forced_param[PX_COLL_COUNT] = {
    [PX_COLL_BARRIER] = &px_params.barrier_algorithm,
    [PX_COLL_BCAST] = &px_params.bcast_algorithm,
    [PX_COLL_REDUCE] = &px_params.reduce_algorithm,
    [PX_COLL_ALLREDUCE] = &px_params.allreduce_algorithm,
    [PX_COLL_GATHER] = &px_params.gather_algorithm,
    [PX_COLL_GATHERV] = &px_params.gatherv_algorithm,
    [PX_COLL_SCATTER] = &px_params.scatter_algorithm,
    [PX_COLL_SCATTERV] = &px_params.scatterv_algorithm,
    [PX_COLL_ALLGATHER] = &px_params.allgather_algorithm,
    [PX_COLL_ALLGATHERV] = &px_params.allgatherv_algorithm,
    [PX_COLL_ALLTOALL] = &px_params.alltoall_algorithm,
    [PX_COLL_ALLTOALLV] = &px_params.alltoallv_algorithm,
    [PX_COLL_ALLTOALLW] = &px_params.alltoallw_algorithm,
    [PX_COLL_REDUCE_SCATTER] = &px_params.reduce_scatter_algorithm,
    [PX_COLL_REDUCE_SCATTER_BLOCK] = &px_params.reduce_scatter_block_algorithm,
    [PX_COLL_SCAN] = &px_params.scan_algorithm,
    [PX_COLL_EXSCAN] = &px_params.exscan_algorithm,
};

/* Read once (selection runs on every blocking collective), again after
 * px_coll_forced_reset. */
static const char *px_forced[PX_COLL_COUNT];
static int px_forced_loaded, px_forced_hier = -1;

void px_coll_forced_reset(void)
{
    px_forced_loaded = 0;
    px_forced_hier = -1;
}

static const char *px_coll_forced(px_coll_id_t coll)
{
    const char **forced = px_forced;
    if (!px_forced_loaded) {
        for (int i = 0; i < PX_COLL_COUNT; i++) {
            const char *v = *px_coll_forced_param[i];
            forced[i] = v && strcmp(v, "auto") ? v : NULL;
            /* params.def and the registry above list the same names */
            if (forced[i] && !px_coll_find((px_coll_id_t)i, forced[i]))
                px_warn("coll",
                        "%s algorithm '%s' is not in the registry; using the "
                        "selection table",
                        px_coll_names[i], forced[i]);
        }
        px_forced_loaded = 1;
    }
    return forced[coll];
}

int px_coll_forced_hier(void)
{
    int v = px_forced_hier;
    if (v >= 0)
        return v;
    v = 0;
    for (int i = 0; i < PX_COLL_COUNT; i++) {
        const char *f = px_coll_forced((px_coll_id_t)i);
        const px_coll_algo_t *al = f ? px_coll_find((px_coll_id_t)i, f) : NULL;
        if (al && (al->flags & PX_COLL_F_HIER))
            v = 1;
    }
    px_forced_hier = v;
    return v;
}

/* The rows of each collective, in table order: selection walks only its
 * own collective's rows (built once, after the tuning file is read). */
static int px_rule_first[PX_COLL_COUNT];
static int *px_rule_next;

static int px_coll_rules_indexed(void)
{
    if (px_rule_next)
        return 1;
    int n = 0, last[PX_COLL_COUNT];
    while (px_coll_rule(n))
        n++;
    int *next = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!next)
        return 0;
    for (int k = 0; k < PX_COLL_COUNT; k++)
        px_rule_first[k] = last[k] = -1;
    for (int i = 0; i < n; i++) {
        int k = (int)px_coll_rule(i)->coll;
        next[i] = -1;
        if (k < 0 || k >= PX_COLL_COUNT)
            continue;
        if (last[k] < 0)
            px_rule_first[k] = i;
        else
            next[last[k]] = i;
        last[k] = i;
    }
    px_rule_next = next;
    return 1;
}

/* Whether ranks 2i and 2i+1 of c share a node for every i (the node map
 * is the same on every rank: so is the answer). Once per communicator. */
static int px_coll_pairs(px_mpi_comm_t *c)
{
    if (!c->pairs) {
        c->pairs = 1;
        for (int r = 0; r + 1 < c->size; r += 2)
            if (px_mpi_comm_node_of(c, r) != px_mpi_comm_node_of(c, r + 1))
                c->pairs = -1;
    }
    return c->pairs > 0;
}

/* Whether c's ranks are on exactly two nodes (likewise once). */
static int px_coll_two_nodes(px_mpi_comm_t *c)
{
    if (!c->two_nodes) {
        int a = px_mpi_comm_node_of(c, 0), b = a;
        c->two_nodes = 1;
        for (int r = 1; r < c->size; r++) {
            int x = px_mpi_comm_node_of(c, r);
            if (x == a || x == b)
                continue;
            if (a == b)
                b = x;
            else
                c->two_nodes = -1;
        }
        if (a == b)
            c->two_nodes = -1;
    }
    return c->two_nodes > 0;
}

const px_coll_algo_t *px_coll_select(px_coll_id_t coll, const px_coll_args_t *a, px_mpi_comm_t *c)
{
    const char *f = px_coll_forced(coll);
    if (f) {
        const px_coll_algo_t *al = px_coll_find(coll, f);
        if (al && px_coll_applies(al, a, c))
            return al;
        /* not applicable to this call (e.g. non-commutative op): fall through */
    }
    px_coll_hier_t *h = px_coll_hier_get(c);
    int ppn = h ? h->max_ppn : c->local_size;
    int multinode = h && h->num_nodes > 1 && h->max_ppn > 1;
    /* local_size == size holds on every rank of c or on none */
    px_coll_nodes_t where = c->local_size == c->size ? PX_COLL_NODES_ONE : PX_COLL_NODES_SEVERAL;
    const px_coll_rule_t *ru;
    int indexed = px_coll_rules_indexed();
    for (int i = indexed ? px_rule_first[coll] : 0; i >= 0 && (ru = px_coll_rule(i));
         i = indexed ? px_rule_next[i] : i + 1) {
        if (ru->coll != coll || (ru->max_comm_size && c->size > ru->max_comm_size) ||
            (ru->max_bytes && a->bytes > ru->max_bytes) || (ru->max_ppn && ppn > ru->max_ppn) ||
            (ru->nodes && ru->nodes != where &&
             !(ru->nodes == PX_COLL_NODES_PAIRS && where == PX_COLL_NODES_SEVERAL &&
               px_coll_pairs(c)) &&
             !(ru->nodes == PX_COLL_NODES_TWO && where == PX_COLL_NODES_SEVERAL &&
               px_coll_two_nodes(c))))
            continue;
        const px_coll_algo_t *al = px_coll_rule_algo(i, ru);
        if (!al || ((al->flags & PX_COLL_F_HIER) && !multinode) || !px_coll_applies(al, a, c))
            continue;
        return al;
    }
    return px_coll_fallback(coll);
}

const px_coll_algo_t *px_coll_select_top(px_coll_id_t coll, const px_coll_args_t *a,
                                         px_mpi_comm_t *c)
{
    px_select_top = 1;
    const px_coll_algo_t *al = px_coll_select(coll, a, c);
    px_select_top = 0;
    if (al && (al->flags & PX_COLL_F_SHM)) /* runs without a schedule */
        px_coll_count(al, a);
    return al;
}

int px_coll_build_algo(px_coll_sched_t *s, px_coll_id_t coll, const char *algo,
                       const px_coll_args_t *a, px_mpi_comm_t *c)
{
    return px_coll_build_with(s, coll, algo ? px_coll_find(coll, algo) : px_coll_select(coll, a, c),
                              a, c);
}

int px_coll_build_with(px_coll_sched_t *s, px_coll_id_t coll, const px_coll_algo_t *al,
                       const px_coll_args_t *a, px_mpi_comm_t *c)
{
    if (!al || !al->build)
        return MPI_ERR_INTERN;
    px_coll_count(al, a);
    px_trace("coll", "%s: %s (ranks %d, bytes %zu)", px_coll_names[coll], al->name, c->size,
             a->bytes);
    return al->build(s, a, c);
}

int px_coll_build_into(px_coll_sched_t *s, px_coll_id_t coll, const px_coll_args_t *a,
                       px_mpi_comm_t *c)
{
    return px_coll_build_algo(s, coll, NULL, a, c);
}

int px_coll_build(px_coll_id_t coll, const px_coll_args_t *a, px_mpi_comm_t *c,
                  px_coll_sched_t **s_p)
{
    px_coll_sched_t *s = px_coll_sched_new(c);
    if (!s)
        return MPI_ERR_NO_MEM;
    int rc = px_coll_build_into(s, coll, a, c);
    if (rc == MPI_SUCCESS)
        rc = s->err;
    if (rc != MPI_SUCCESS) {
        px_coll_sched_free(s);
        return rc;
    }
    *s_p = s;
    return MPI_SUCCESS;
}

void px_mpi_coll_print_table(FILE *f)
{
    fprintf(f, "Collective algorithms (force one with PX_<COLLECTIVE>_ALGORITHM=<name>):\n");
    for (int c = 0; c < PX_COLL_COUNT; c++) {
        fprintf(f, "  %s:\n", px_coll_names[c]);
        for (int i = 0; i < PX_NALGOS; i++) {
            const px_coll_algo_t *al = &px_coll_algos[i];
            if ((int)al->coll != c)
                continue;
            fprintf(f, "    %-20s %s%s%s%s%s%s\n", al->name, al->doc,
                    al->flags & PX_COLL_F_COMMUTE ? " [commutative]" : "",
                    al->flags & PX_COLL_F_POF2 ? " [power-of-two size]" : "",
                    al->flags & PX_COLL_F_CONTIG ? " [contiguous type]" : "",
                    al->flags & PX_COLL_F_HIER ? " [multi-node]" : "",
                    al->flags & PX_COLL_F_SHM ? " [one machine, blocking]" : "");
        }
    }
    if (!px_tables_loaded)
        px_coll_load_tables();
    fprintf(f, "Selection table (first matching row wins; 0 = any)%s%s:\n",
            px_file_nrules ? ", rules from " : "",
            px_file_nrules ? px_params.coll_tuning_file : "");
    static const char *const where[] = {"any", "one", "several", "pairs", "two"};
    fprintf(f, "  %-22s %10s %12s %8s %8s  %s\n", "collective", "max_ranks", "max_bytes", "max_ppn",
            "nodes", "algorithm");
    const px_coll_rule_t *ru;
    for (int i = 0; (ru = px_coll_rule(i)); i++) {
        if (i == px_file_nrules && i)
            fprintf(f, "  (built-in defaults follow)\n");
        fprintf(f, "  %-22s %10d %12zu %8d %8s  %s\n", px_coll_names[ru->coll], ru->max_comm_size,
                ru->max_bytes, ru->max_ppn, where[ru->nodes], ru->algo);
    }
    for (int c = 0; c < PX_COLL_COUNT; c++) {
        const char *v = px_coll_forced((px_coll_id_t)c);
        if (v)
            fprintf(f, "  forced: %s = %s\n", px_coll_names[c], v);
    }
}
