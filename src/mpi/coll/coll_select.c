/* Algorithm registry and selection. The registry lists every algorithm
 * with the conditions it needs; the default table below (data, first
 * matching row wins) picks one per call from the communicator size, the
 * message size and the ranks per node; PX_<COLL>_ALGORITHM forces one. */
#include "coll_impl.h"

#include <ctype.h>
#include <stdlib.h>

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
    {PX_COLL_BCAST, "knomial", px_coll_bcast_knomial, 0,
     "k-nomial tree (PX_BCAST_KNOMIAL_RADIX)"},
    {PX_COLL_BCAST, "linear", px_coll_bcast_linear, 0,
     "root sends to all at once (one node, single-copy reads in parallel)"},
    {PX_COLL_BCAST, "scatter_ring", px_coll_bcast_scatter_ring, 0,
     "binomial scatter + ring allgather (large messages)"},
    {PX_COLL_BCAST, "pipeline", px_coll_bcast_pipeline, 0,
     "segments down a chain of ranks (PX_BCAST_PIPELINE_SEGMENT; large messages, few ranks)"},
    {PX_COLL_BCAST, "smp", px_coll_bcast_smp, PX_COLL_F_HIER,
     "root to its node leader, among leaders, then within each node"},
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
    {PX_COLL_ALLREDUCE, "ring", px_coll_allreduce_ring,
     PX_COLL_F_COMMUTE | PX_COLL_F_CONTIG, "ring reduce-scatter + ring allgather (large)"},
    {PX_COLL_ALLREDUCE, "smp", px_coll_allreduce_smp, PX_COLL_F_COMMUTE | PX_COLL_F_HIER,
     "node reduce, allreduce among leaders, node broadcast"},
    {PX_COLL_ALLREDUCE, "shm", NULL, PX_COLL_F_SHM | PX_COLL_F_CONTIG,
     "all write shared slots, each combines them in rank order"},
    {PX_COLL_GATHER, "linear", px_coll_gather_linear, 0, "root receives from all at once"},
    {PX_COLL_GATHER, "binomial", px_coll_gather_binomial, 0, "binomial tree (small blocks)"},
    {PX_COLL_GATHERV, "linear", px_coll_gatherv_linear, 0, "root receives from all at once"},
    {PX_COLL_SCATTER, "linear", px_coll_scatter_linear, 0, "root sends to all at once"},
    {PX_COLL_SCATTER, "binomial", px_coll_scatter_binomial, 0, "binomial tree (small blocks)"},
    {PX_COLL_SCATTERV, "linear", px_coll_scatterv_linear, 0, "root sends to all at once"},
    {PX_COLL_ALLGATHER, "ring", px_coll_allgather_ring, 0, "n-1 neighbour steps (large)"},
    {PX_COLL_ALLGATHER, "recursive_doubling", px_coll_allgather_recursive_doubling,
     PX_COLL_F_POF2, "log2 n exchanges of doubling size"},
    {PX_COLL_ALLGATHER, "bruck", px_coll_allgather_bruck, 0, "ceil(log2 n) steps, any n"},
    {PX_COLL_ALLGATHER, "linear", px_coll_allgather_linear, 0,
     "everyone to everyone in one step (ranks sharing cores)"},
    {PX_COLL_ALLGATHER, "shm", NULL, PX_COLL_F_SHM, "all write shared slots, all read them"},
    {PX_COLL_ALLGATHER, "cma", NULL, PX_COLL_F_SHM | PX_COLL_F_CMA,
     "each reads every other's block from its buffer (process_vm_readv)"},
    {PX_COLL_ALLGATHERV, "ring", px_coll_allgatherv_ring, 0, "n-1 neighbour steps"},
    {PX_COLL_ALLGATHERV, "linear", px_coll_allgatherv_linear, 0, "everyone to everyone at once"},
    {PX_COLL_ALLTOALL, "pairwise", px_coll_alltoall_pairwise, 0,
     "n-1 steps, one partner each (large)"},
    {PX_COLL_ALLTOALL, "bruck", px_coll_alltoall_bruck, 0, "ceil(log2 n) steps (small)"},
    {PX_COLL_ALLTOALL, "linear", px_coll_alltoall_linear, 0, "all transfers at once (medium)"},
    {PX_COLL_ALLTOALL, "staggered", px_coll_alltoall_staggered, 0,
     "first node's ranks in turn exchange with all later ones (large, two nodes)"},
    {PX_COLL_ALLTOALL, "shm", NULL, PX_COLL_F_SHM,
     "each writes its n blocks to a shared slot, all read theirs"},
    {PX_COLL_ALLTOALL, "cma", NULL, PX_COLL_F_SHM | PX_COLL_F_CMA,
     "each reads its block from every other's buffer (process_vm_readv)"},
    {PX_COLL_ALLTOALLV, "pairwise", px_coll_alltoallw_pairwise, 0, "n steps, one partner each"},
    {PX_COLL_ALLTOALLV, "linear", px_coll_alltoallw_linear, 0, "all transfers at once"},
    {PX_COLL_ALLTOALLW, "pairwise", px_coll_alltoallw_pairwise, 0, "n steps, one partner each"},
    {PX_COLL_ALLTOALLW, "linear", px_coll_alltoallw_linear, 0, "all transfers at once"},
    {PX_COLL_REDUCE_SCATTER, "reduce_scatterv", px_coll_reduce_scatter_reduce_scatterv, 0,
     "reduce to rank 0 + scatterv (any operation)"},
    {PX_COLL_REDUCE_SCATTER, "recursive_halving", px_coll_reduce_scatter_recursive_halving,
     PX_COLL_F_COMMUTE | PX_COLL_F_CONTIG | PX_COLL_F_POF2, "log2 n halving exchanges"},
    {PX_COLL_REDUCE_SCATTER, "pairwise", px_coll_reduce_scatter_pairwise, PX_COLL_F_COMMUTE,
     "n-1 pairwise exchanges"},
    {PX_COLL_REDUCE_SCATTER_BLOCK, "reduce_scatterv", px_coll_reduce_scatter_reduce_scatterv, 0,
     "reduce to rank 0 + scatterv (any operation)"},
    {PX_COLL_REDUCE_SCATTER_BLOCK, "recursive_halving",
     px_coll_reduce_scatter_recursive_halving,
     PX_COLL_F_COMMUTE | PX_COLL_F_CONTIG | PX_COLL_F_POF2, "log2 n halving exchanges"},
    {PX_COLL_REDUCE_SCATTER_BLOCK, "pairwise", px_coll_reduce_scatter_pairwise,
     PX_COLL_F_COMMUTE, "n-1 pairwise exchanges"},
    {PX_COLL_SCAN, "recursive_doubling", px_coll_scan_recursive_doubling, 0,
     "log2 n exchanges, rank order kept"},
    {PX_COLL_SCAN, "linear", px_coll_scan_linear, 0, "chain through the ranks"},
    {PX_COLL_EXSCAN, "recursive_doubling", px_coll_exscan_recursive_doubling, 0,
     "log2 n exchanges, rank order kept"},
    {PX_COLL_EXSCAN, "linear", px_coll_exscan_linear, 0, "chain through the ranks"},
};
#define PX_NALGOS ((int)(sizeof(px_coll_algos) / sizeof(px_coll_algos[0])))

/* Default tuning table: {collective, max comm size, max bytes, max ranks
 * per node, algorithm}; 0 = no limit. Message size is the whole vector
 * for bcast/reductions and one rank's block for the gathers, scatters and
 * alltoalls. Node-aware ("smp") rows only apply when the communicator
 * spans several nodes with more than one rank on some node. */
static const px_coll_rule_t px_coll_default_rules[] = {
    /* one machine: flags in a shared segment, rank 0 released first like
     * the tree (osu_barrier, 8 ranks on 2 cores: 13.8-15.3 us against the
     * tree's 34.8-37.2; 4 ranks 7.8-9.7 against 14.1-15.8) */
    {PX_COLL_BARRIER, 0, 0, 0, "shm", PX_COLL_NODES_ONE},
    {PX_COLL_BARRIER, 0, 0, 0, "smp", PX_COLL_NODES_ANY},
    {PX_COLL_BARRIER, 0, 0, 0, "tree", PX_COLL_NODES_ONE},
    /* two ranks on two nodes: both leave together (the tree lets rank 1
     * out one message later, and OSU's next timed call waits for it:
     * osu_alltoall/allreduce/allgather 2 nodes, 1 B-1 KB, 5.0-6.2 us
     * against 6.0-7.8, MPICH 4.9-5.8; osu_bcast 5.5-6.2 against 4.3-5.2) */
    {PX_COLL_BARRIER, 2, 0, 0, "dissemination", PX_COLL_NODES_SEVERAL},
    /* up to 4 ranks across nodes the tree is as fast (osu_barrier, 4 nodes:
     * 54-65 us against 58-68 us), and it releases rank 0 first, so that a
     * broadcast from it right after the barrier starts early */
    {PX_COLL_BARRIER, 4, 0, 0, "tree", PX_COLL_NODES_ANY},
    {PX_COLL_BARRIER, 0, 0, 0, "dissemination", PX_COLL_NODES_ANY},
    /* one machine, up to PX_COLL_SHM_SIZE: the root writes one slot that
     * all read (osu_bcast, 8 ranks, 1 B: 0.24 against 3.6 us; 64 KB: 12.7
     * against 22.9; 2 ranks, 64 KB: 6.0 against 11.1) */
    /* up to 4 ranks, larger messages: all read the root's buffer, one copy
     * each instead of two (osu_bcast, 4 ranks on 2 cores, five runs in
     * turn: 128 KB 13.8-15.0 against the slots' 15.5-16.2 us, Open MPI
     * 8.9-21.8; with the readers starting at different pages, 256 KB
     * 26-32 and 1 MB 128-163, Open MPI 33-43 and 202-237; with the root
     * writing one reader's copy, 64 KB 5.2-5.5, Open MPI 5.5-6.3 (32 KB:
     * 4.1 against the slots' 4.0), 128 KB 7.8, 256 KB 13.1; 2 ranks, 128 KB:
     * 4.9-5.1 against 15.8-16.4, Open MPI 5.1-6.0). With 8 ranks the slots
     * stay ahead while the message fits (128 KB: 14.6-15.1 against
     * 16.1-17.4), the reads beat the linear messages above (512 KB: 74-82
     * against 86-110) */
    {PX_COLL_BCAST, 2, 8192, 0, "shm", PX_COLL_NODES_ONE},
    {PX_COLL_BCAST, 2, 0, 0, "cma", PX_COLL_NODES_ONE},
    {PX_COLL_BCAST, 4, 32768, 0, "shm", PX_COLL_NODES_ONE},
    {PX_COLL_BCAST, 4, 0, 0, "cma", PX_COLL_NODES_ONE},
    {PX_COLL_BCAST, 0, 0, 0, "shm", PX_COLL_NODES_ONE},
    {PX_COLL_BCAST, 8, 0, 0, "cma", PX_COLL_NODES_ONE},
    {PX_COLL_BCAST, 0, 65536, 0, "smp", PX_COLL_NODES_ANY},
    {PX_COLL_BCAST, 0, 4096, 0, "binomial", PX_COLL_NODES_ANY},
    /* between nodes, 4-128 KB: the k-nomial tree's fewer rounds beat the
     * binomial tree's log2 n (4 nodes, 10 Gbit/s, 32 KB: 40-57 against
     * 64-77 us) */
    {PX_COLL_BCAST, 0, 32768, 0, "knomial", PX_COLL_NODES_SEVERAL},
    /* between nodes, above 32 KB and up to 4 ranks: 32 KB segments down a
     * chain carry the message over each link once (osu_bcast, 4 nodes,
     * 10 Gbit/s, 128 KB: 39-74 against the k-nomial tree's 204-207 us;
     * 1 MB: 826-915 against 1432-1604; 2 nodes, 128 KB: 82 against 102).
     * 8 ranks on 4 nodes: no clear gain over the k-nomial tree (64 KB-1 MB
     * within 10% either way) */
    /* ...but with two consecutive ranks per node the binomial tree from
     * rank 0 crosses between the nodes once and then copies inside both at
     * once, where the chain waits for each rank of the two sharing a node's
     * cores in turn (2 emulated nodes, 2 ranks each on 2 cores, osu_bcast:
     * 256 KB 137 against 194 us, 1 MB 575 against 912, 4 MB 2,492 against
     * 5,190; Open MPI 268, 695, 3,255) */
    {PX_COLL_BCAST, 4, 0, 0, "binomial", PX_COLL_NODES_PAIRS},
    {PX_COLL_BCAST, 4, 0, 0, "pipeline", PX_COLL_NODES_SEVERAL},
    {PX_COLL_BCAST, 0, 131072, 0, "knomial", PX_COLL_NODES_SEVERAL},
    /* likewise 8 ranks in pairs on 4 nodes from 256 KB (three runs in
     * turn, binomial / k-nomial to 512 KB, then scatter + ring / Open MPI:
     * 256 KB 288 / 415 / 645 us, 512 KB 581 / 772 / 1,403, 1 MB 1,147 /
     * 2,376 / 2,845, 4 MB 6,727 / 10,161 / 14,179) */
    {PX_COLL_BCAST, 8, 0, 2, "binomial", PX_COLL_NODES_PAIRS},
    {PX_COLL_BCAST, 0, 8192, 0, "binomial", PX_COLL_NODES_ANY},
    {PX_COLL_BCAST, 16, 0, 0, "linear", PX_COLL_NODES_ONE},
    {PX_COLL_BCAST, 0, 12288, 0, "binomial", PX_COLL_NODES_ANY},
    {PX_COLL_BCAST, 4, 0, 0, "binomial", PX_COLL_NODES_ANY},
    {PX_COLL_BCAST, 0, 524288, 0, "knomial", PX_COLL_NODES_ANY},
    /* 8 ranks, 4 on each of 2 nodes: the k-nomial tree (radix 4) from rank
     * 0 crosses between the nodes once and then reads inside both; the
     * scatter and ring allgather's 2(n-1) messages cost the shared cores
     * more (three runs in turn, k-nomial / scatter + ring / binomial / Open
     * MPI: 1 MB 544 / 1,834 / 896 / 2,009 us, 4 MB 3,231 / 6,489 / 3,852 /
     * 9,267). One rank on each of 8 nodes keeps the scatter + ring (4 MB:
     * 9,859 against the k-nomial tree's 15,702) */
    {PX_COLL_BCAST, 8, 0, 0, "knomial", PX_COLL_NODES_PAIRS},
    {PX_COLL_BCAST, 0, 0, 0, "scatter_ring", PX_COLL_NODES_ANY},
    /* the binomial tree beats reduce-scatter + gather at every size
     * measured: 2, 4 and 8 ranks on one node and 2 and 4 nodes, 4 KB-1 MB
     * (4 ranks, one node, 1 MB: 1.4-1.5 against 2.9-3.1 ms) */
    /* one machine, up to PX_COLL_SHM_SIZE: shared slots (osu_reduce, 8
     * ranks, 1 B: 2.5 against 9.8 us; 64 KB: 11 against 80) */
    {PX_COLL_REDUCE, 0, 0, 0, "shm", PX_COLL_NODES_ONE},
    {PX_COLL_REDUCE, 0, 0, 0, "binomial", PX_COLL_NODES_ANY},
    /* one machine: shared slots, one wait instead of log2 n rounds
     * (osu_allreduce, 4 ranks on 2 cores, 1 B: 3.1 against 8.6-10 us; 8
     * ranks, 32 KB: 23-31 against 38-42); from 8 KB every rank combines an
     * n-th (4 ranks, 1 MB: 392-509 against 591-752 us, Open MPI 577-594).
     * Two ranks on their own cores do one exchange faster at 64-128 KB
     * (64 KB: 10.2 against 13.3-13.6 us). */
    {PX_COLL_ALLREDUCE, 2, 32768, 0, "shm", PX_COLL_NODES_ONE},
    {PX_COLL_ALLREDUCE, 2, 131072, 0, "rabenseifner", PX_COLL_NODES_ONE},
    {PX_COLL_ALLREDUCE, 0, 0, 0, "shm", PX_COLL_NODES_ONE},
    {PX_COLL_ALLREDUCE, 0, 65536, 0, "smp", PX_COLL_NODES_ANY},
    {PX_COLL_ALLREDUCE, 0, 2048, 0, "recursive_doubling", PX_COLL_NODES_ANY},
    /* two ranks: one exchange instead of two half-size ones (2 nodes,
     * 8-32 KB: 32-37 against 68-78 us; one node, 1 MB: 222-272 against
     * 254-516 us); up to 4 nodes the extra rounds cost more than the bytes
     * they save up to 32 KB (4 nodes, 10 Gbit/s, 8 KB: 101-119 against
     * 232-386 us; 32 KB: 56-81 against 82-86). At 64 KB, with the 32 KB TCP
     * eager limit, Rabenseifner's halves go eagerly: 108-117 against
     * 131-208 us (Open MPI 126-170). Above 512 KB the two half-size
     * exchanges win again: a half's reduction overlaps the other half's
     * transfer, and a 4 MB exchange no longer waits, when the ranks enter
     * a little apart, for a clear-to-send behind the peer's data (2 nodes, osu_allreduce, three runs in turn,
     * one exchange / halving / Open MPI: 2 MB 1,796 / 1,689 / 1,714 us,
     * 4 MB 3,920 [3,654-4,997] / 3,550 [3,538-3,575] / 3,504) */
    {PX_COLL_ALLREDUCE, 2, 524288, 0, "recursive_doubling", PX_COLL_NODES_ANY},
    {PX_COLL_ALLREDUCE, 2, 0, 0, "rabenseifner", PX_COLL_NODES_ANY},
    {PX_COLL_ALLREDUCE, 4, 32768, 0, "recursive_doubling", PX_COLL_NODES_SEVERAL},
    /* on one node the halving and doubling beat the ring at every size
     * (osu_allreduce, 8 ranks, 1 MB: 1.6-2.1 against 2.4-2.5 ms; 4 ranks,
     * 1 MB: 0.6-0.7 against 0.8-1.1 ms; 3 ranks alike, 6 ranks even) */
    {PX_COLL_ALLREDUCE, 8, 0, 0, "rabenseifner", PX_COLL_NODES_ONE},
    {PX_COLL_ALLREDUCE, 0, 524288, 0, "rabenseifner", PX_COLL_NODES_ANY},
    /* nodes holding two or more consecutive ranks: the halving's first and
     * largest steps stay inside the nodes, and half as many bytes cross
     * between them as in the ring (2 nodes, 2 ranks each, 1 MB: 914-1164
     * against 1330-1478 us, Open MPI 1310-1538) */
    {PX_COLL_ALLREDUCE, 0, 0, 0, "rabenseifner", PX_COLL_NODES_PAIRS},
    /* four ranks on four nodes: the halving's two exchanges each way move
     * the bytes of the ring's three in fewer rounds (osu_allreduce, 4
     * emulated nodes, seven runs in turn: 1 MB 1,644 against 2,116 us, 2 MB
     * 3,135 against 3,417, 4 MB 7,221 against 7,495; Open MPI 1,793, 3,324,
     * 7,779). Three ranks keep the ring: there the halving first folds
     * one rank in whole (2 MB: 3,796 against 2,850) */
    {PX_COLL_ALLREDUCE, 3, 0, 0, "ring", PX_COLL_NODES_ANY},
    {PX_COLL_ALLREDUCE, 4, 0, 0, "rabenseifner", PX_COLL_NODES_ANY},
    {PX_COLL_ALLREDUCE, 0, 0, 0, "ring", PX_COLL_NODES_ANY},
    {PX_COLL_ALLREDUCE, 0, 0, 0, "recursive_doubling", PX_COLL_NODES_ANY},
    {PX_COLL_GATHER, 0, 16384, 0, "binomial", PX_COLL_NODES_ANY},
    {PX_COLL_GATHER, 0, 0, 0, "linear", PX_COLL_NODES_ANY},
    {PX_COLL_SCATTER, 0, 16384, 0, "binomial", PX_COLL_NODES_ANY},
    {PX_COLL_SCATTER, 0, 0, 0, "linear", PX_COLL_NODES_ANY},
    /* one machine: shared slots when ranks share cores (8 ranks, 64 KB:
     * 71 against 266 us); two ranks on their own cores copy faster through
     * messages above 512 B (16 KB: 2.8 against 6.6 us) */
    {PX_COLL_ALLGATHER, 2, 512, 0, "shm", PX_COLL_NODES_ONE},
    {PX_COLL_ALLGATHER, 2, 4096, 0, "recursive_doubling", PX_COLL_NODES_ONE},
    /* two ranks from 8 KB and up to 4 ranks above a slot: each reads the
     * others' blocks from their buffers (2 ranks, 64 KB: 4.8 against
     * 13.8-15.5 us, Open MPI 5.0-6.7; 4 ranks, 256 KB: 158-174 against
     * 187-213, Open MPI 228-304; 1 MB: 739-783 against 743-1022, Open MPI
     * 816-868). With 8 ranks the messages are faster at every size (256 KB:
     * 832-900 against 934-1063) */
    {PX_COLL_ALLGATHER, 2, 0, 0, "cma", PX_COLL_NODES_ONE},
    {PX_COLL_ALLGATHER, 2, 0, 0, "linear", PX_COLL_NODES_ONE},
    {PX_COLL_ALLGATHER, 0, 0, 0, "shm", PX_COLL_NODES_ONE},
    {PX_COLL_ALLGATHER, 4, 0, 0, "cma", PX_COLL_NODES_ONE},
    {PX_COLL_ALLGATHER, 4, 8192, 0, "recursive_doubling", PX_COLL_NODES_ONE},
    {PX_COLL_ALLGATHER, 16, 0, 0, "linear", PX_COLL_NODES_ONE},
    {PX_COLL_ALLGATHER, 0, 8192, 0, "recursive_doubling", PX_COLL_NODES_ANY},
    {PX_COLL_ALLGATHER, 0, 8192, 0, "bruck", PX_COLL_NODES_ANY},
    /* up to 4 ranks between nodes the ring's n-1 steps cost most (4 nodes,
     * 10 Gbit/s, four runs in turn: 16 KB linear 53-70 against the ring's
     * 67-92 us; 64 KB recursive doubling 153-240 against 220-311; 128 KB
     * 264-349 against 339-473). With four ranks recursive doubling stays
     * ahead to 512 KB on 4 nodes (four runs in turn, recursive doubling /
     * ring / Open MPI: 256 KB 639 / 811 / 686 us, 512 KB 1,307 / 1,493 /
     * 1,416; 1 MB 3,217 / 2,914 / 3,142) and to 256 KB in pairs on 2 (512
     * KB: 1,664 against the ring's 1,469) */
    {PX_COLL_ALLGATHER, 4, 32768, 0, "linear", PX_COLL_NODES_SEVERAL},
    {PX_COLL_ALLGATHER, 4, 262144, 0, "recursive_doubling", PX_COLL_NODES_SEVERAL},
    {PX_COLL_ALLGATHER, 4, 0, 0, "ring", PX_COLL_NODES_PAIRS},
    {PX_COLL_ALLGATHER, 4, 524288, 0, "recursive_doubling", PX_COLL_NODES_SEVERAL},
    /* eight ranks between nodes: recursive doubling's three rounds beat the
     * ring's seven steps up to 64 KB blocks, and to 128 KB with two ranks
     * per node (three runs in turn, recursive doubling / ring / Open MPI;
     * 4 nodes x 2: 32 KB 424 / 497 / 775 us, 64 KB 775 / 906 / 1,200,
     * 128 KB 1,411-1,484 / 1,538-1,737 / 1,567-1,920, 512 KB 7,144 /
     * 5,648 / 7,348; 2 nodes x 4: 32 KB 328 / 528 / 694, 64 KB 735 / 775
     * / 1,147, 128 KB 1,425 / 1,082 / 2,001); with one rank per node to
     * 512 KB (8 nodes: 128 KB 1,947 / 2,793 / 2,074, 256 KB 3,531 / 4,615 /
     * 3,774, 512 KB 7,477 / 8,506 / 7,401, 1 MB 18,169 / 18,215 / 16,831) */
    {PX_COLL_ALLGATHER, 8, 524288, 1, "recursive_doubling", PX_COLL_NODES_SEVERAL},
    {PX_COLL_ALLGATHER, 8, 131072, 2, "recursive_doubling", PX_COLL_NODES_SEVERAL},
    {PX_COLL_ALLGATHER, 8, 65536, 0, "recursive_doubling", PX_COLL_NODES_SEVERAL},
    {PX_COLL_ALLGATHER, 0, 0, 0, "ring", PX_COLL_NODES_ANY},
    {PX_COLL_ALLGATHERV, 0, 0, 0, "ring", PX_COLL_NODES_ANY},
    /* likewise (8 ranks, 4 KB: 23 against 62 us; 2 ranks, 16 KB: 2.6
     * through messages against 9.7) */
    {PX_COLL_ALLTOALL, 2, 512, 0, "shm", PX_COLL_NODES_ONE},
    {PX_COLL_ALLTOALL, 2, 4096, 0, "linear", PX_COLL_NODES_ONE},
    /* reading the blocks from the others' buffers: 2 ranks from 8 KB
     * (16 KB: 2.0-2.7 against 3.2-3.4 us, Open MPI 2.7-2.9), up to 4 ranks
     * above a slot's share to 128 KB (4 ranks, 64 KB: 25.5-30.0 against
     * 30.3-33.5, Open MPI 32.7-36.8); beyond that, and with 8 ranks, the
     * messages are faster (4 ranks, 256 KB: 171-185 against 168-206; 8
     * ranks, 64 KB: 225-240 against 245-299) */
    {PX_COLL_ALLTOALL, 2, 0, 0, "cma", PX_COLL_NODES_ONE},
    {PX_COLL_ALLTOALL, 2, 0, 0, "linear", PX_COLL_NODES_ONE},
    {PX_COLL_ALLTOALL, 0, 0, 0, "shm", PX_COLL_NODES_ONE},
    {PX_COLL_ALLTOALL, 4, 131072, 0, "cma", PX_COLL_NODES_ONE},
    {PX_COLL_ALLTOALL, 16, 0, 0, "linear", PX_COLL_NODES_ONE},
    /* two ranks between nodes exchange one block either way: Bruck adds
     * only its local rotations (2 nodes, five runs in turn, all at once /
     * Bruck / Open MPI: 8 B 9.6 / 10.9 / 12.7 us, 1 KB 10.3 / 11.0 / 13.0,
     * 4 KB 15.8 / 16.7 / 18.9, MPICH 16.2) */
    {PX_COLL_ALLTOALL, 2, 32768, 0, "linear", PX_COLL_NODES_SEVERAL},
    {PX_COLL_ALLTOALL, 0, 256, 0, "bruck", PX_COLL_NODES_ANY},
    /* up to 8 ranks between nodes Bruck's log2 n steps stay ahead to 4 KB
     * (runs in turn, Bruck / all at once / Open MPI; 4 nodes x 2, 2 KB:
     * 186 / 245 / 305 us, 4 KB: 222 / 262 / 327, 8 KB: 345 / 293 / 331;
     * 2 nodes x 4, 2 KB: 136 / 168 / 260; 4 ranks on 4 nodes or 2 x 2:
     * within the runs' spread) */
    {PX_COLL_ALLTOALL, 8, 4096, 0, "bruck", PX_COLL_NODES_SEVERAL},
    {PX_COLL_ALLTOALL, 0, 32768, 0, "linear", PX_COLL_NODES_ANY},
    /* up to 8 ranks on two nodes, above 128 KB: the first node's ranks in
     * turn exchange with all later ones. The link stays as full as with
     * every transfer at once, but those ranks leave one after the other
     * (osu_alltoall, the mean over the ranks, three runs in turn, staggered
     * / pairwise / all at once / Open MPI; 2 x 4, 256 KB: 2,791 / 3,400 /
     * 3,568 / 2,884 us, 512 KB: 5,678 / 7,177 / 8,499 / 6,407, 1 MB:
     * 12,952 / 15,492 / 17,841 / 13,429, 2 MB: 29,922 / 33,391 / 42,756 /
     * 31,942; 2 x 2, 512 KB: 1,441 / 1,628 / 2,017 / 1,655, 1 MB: 3,047 /
     * 3,430 / 3,884 / 3,478). Up to 128 KB all at once is faster (2 x 4,
     * 128 KB: 1,356 against 1,600 pairwise, Open MPI 1,706), and with 4
     * ranks pairwise from 2 MB (2 x 2, 2 MB: 8,283 against 8,623, Open MPI
     * 8,656; 4 MB: 18,510 against 20,121, Open MPI 19,772) */
    {PX_COLL_ALLTOALL, 8, 131072, 0, "linear", PX_COLL_NODES_TWO},
    {PX_COLL_ALLTOALL, 4, 1048576, 0, "staggered", PX_COLL_NODES_TWO},
    {PX_COLL_ALLTOALL, 4, 0, 0, "pairwise", PX_COLL_NODES_TWO},
    {PX_COLL_ALLTOALL, 8, 0, 0, "staggered", PX_COLL_NODES_TWO},
    /* up to 4 ranks on more than two nodes, all transfers at once: with
     * the 32 KB TCP eager limit these are rendezvous, and the receivers
     * pace them (4 nodes, 10 Gbit/s, 64 KB: 187-198 against pairwise
     * 321-330 us, Open MPI 229-240; 128 KB: 318-413 against 460-532; 512
     * KB: 1675-1985 against 2067-2182, Open MPI 1712-2067; 1 MB: 3996-4311
     * against 4446-4872, Open MPI 3988-4355) */
    {PX_COLL_ALLTOALL, 4, 0, 0, "linear", PX_COLL_NODES_SEVERAL},
    /* 8 ranks on more than two nodes (all on 2 cores): all at once, up to
     * 1 MB with 2 ranks per node and up to 256 KB with more. One exchange
     * at a time leaves the links idle while a step's partners are on the
     * same node (runs in turn, all at once / pairwise / Open MPI; 4 nodes x
     * 2, 128 KB: 1,642 / 2,270 / 1,950 us, 256 KB: 3,123 / 3,779 / 3,179,
     * 512 KB: 8,347 / 9,533 / 8,542, 1 MB: 17,261 / 18,872 / 17,557); with
     * 2 per node from 2 MB the transfers all at once crowd the shared
     * cores (34,242 / 32,304 / 35,489) */
    {PX_COLL_ALLTOALL, 8, 1048576, 2, "linear", PX_COLL_NODES_SEVERAL},
    {PX_COLL_ALLTOALL, 8, 262144, 0, "linear", PX_COLL_NODES_SEVERAL},
    {PX_COLL_ALLTOALL, 0, 0, 0, "pairwise", PX_COLL_NODES_ANY},
    {PX_COLL_ALLTOALLV, 0, 0, 0, "linear", PX_COLL_NODES_ANY},
    {PX_COLL_ALLTOALLW, 0, 0, 0, "linear", PX_COLL_NODES_ANY},
    {PX_COLL_REDUCE_SCATTER, 0, 0, 0, "recursive_halving", PX_COLL_NODES_ANY},
    {PX_COLL_REDUCE_SCATTER, 0, 0, 0, "pairwise", PX_COLL_NODES_ANY},
    {PX_COLL_REDUCE_SCATTER_BLOCK, 0, 0, 0, "recursive_halving", PX_COLL_NODES_ANY},
    {PX_COLL_REDUCE_SCATTER_BLOCK, 0, 0, 0, "pairwise", PX_COLL_NODES_ANY},
    {PX_COLL_SCAN, 0, 0, 0, "recursive_doubling", PX_COLL_NODES_ANY},
    {PX_COLL_EXSCAN, 0, 0, 0, "recursive_doubling", PX_COLL_NODES_ANY},
};
#define PX_NRULES ((int)(sizeof(px_coll_default_rules) / sizeof(px_coll_default_rules[0])))

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

static px_coll_rule_t *px_file_rules;
static const px_coll_algo_t **px_file_algos;
static int px_file_nrules, px_file_loaded;

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

static void px_coll_load_file(void)
{
    px_file_loaded = 1;
    const char *path = getenv("PX_COLL_TUNING_FILE");
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
    int cap = 0;
    for (const char *p = text; (p = strchr(p, '{')); p++)
        cap++;
    px_file_rules = calloc((size_t)(cap ? cap : 1), sizeof(*px_file_rules));
    px_file_algos = calloc((size_t)(cap ? cap : 1), sizeof(*px_file_algos));
    if (!px_file_rules || !px_file_algos) {
        free(px_file_rules);
        free(px_file_algos);
        px_file_rules = NULL;
        px_file_algos = NULL;
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
            px_warn("coll", "%s: skipping rule %.*s", path, (int)(end - p + 1), p);
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
                        path, (int)(end - p + 1), p);
                p = end + 1;
                continue;
            }
        }
        px_file_algos[px_file_nrules] = px_coll_find(ru.coll, ru.algo);
        px_file_rules[px_file_nrules++] = ru;
        p = end + 1;
    }
}

/* Row i of the effective table: the file's rules, then the defaults. */
static const px_coll_rule_t *px_coll_rule(int i)
{
    if (!px_file_loaded)
        px_coll_load_file();
    if (i < px_file_nrules)
        return &px_file_rules[i];
    i -= px_file_nrules;
    return i < PX_NRULES ? &px_coll_default_rules[i] : NULL;
}

/* The algorithm of row i, looked up by name once: selection runs on every
 * blocking collective and must not compare strings each time. */
static const px_coll_algo_t *px_coll_rule_algo(int i, const px_coll_rule_t *ru)
{
    static const px_coll_algo_t *cache[PX_NRULES];
    if (i < px_file_nrules)
        return px_file_algos[i];
    i -= px_file_nrules;
    if (!cache[i])
        cache[i] = px_coll_find(ru->coll, ru->algo);
    return cache[i];
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

/* PX_<COLL>_ALGORITHM, read once per collective. */
static const char *px_coll_forced(px_coll_id_t coll)
{
    static const char *forced[PX_COLL_COUNT];
    static int loaded;
    if (!loaded) {
        for (int i = 0; i < PX_COLL_COUNT; i++) {
            char var[64] = "PX_";
            size_t l = 3;
            for (const char *p = px_coll_names[i]; *p && l < 40; p++)
                var[l++] = (char)toupper((unsigned char)*p);
            strcpy(var + l, "_ALGORITHM");
            const char *v = getenv(var);
            forced[i] = v && *v && strcmp(v, "auto") ? v : NULL;
            if (forced[i] && !px_coll_find((px_coll_id_t)i, forced[i]))
                px_warn("coll", "%s=%s: no such algorithm, using the selection table", var,
                        forced[i]);
        }
        loaded = 1;
    }
    return forced[coll];
}

int px_coll_forced_hier(void)
{
    static int v = -1;
    if (v >= 0)
        return v;
    v = 0;
    for (int i = 0; i < PX_COLL_COUNT; i++) {
        const char *f = px_coll_forced((px_coll_id_t)i);
        const px_coll_algo_t *al = f ? px_coll_find((px_coll_id_t)i, f) : NULL;
        if (al && (al->flags & PX_COLL_F_HIER))
            v = 1;
    }
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
    return al;
}

int px_coll_build_algo(px_coll_sched_t *s, px_coll_id_t coll, const char *algo,
                       const px_coll_args_t *a, px_mpi_comm_t *c)
{
    return px_coll_build_with(s, coll,
                              algo ? px_coll_find(coll, algo) : px_coll_select(coll, a, c), a, c);
}

int px_coll_build_with(px_coll_sched_t *s, px_coll_id_t coll, const px_coll_algo_t *al,
                       const px_coll_args_t *a, px_mpi_comm_t *c)
{
    if (!al || !al->build)
        return MPI_ERR_INTERN;
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
    if (!px_file_loaded)
        px_coll_load_file();
    fprintf(f, "Selection table (first matching row wins; 0 = any)%s%s:\n",
            px_file_nrules ? ", rules from " : "",
            px_file_nrules ? getenv("PX_COLL_TUNING_FILE") : "");
    static const char *const where[] = {"any", "one", "several", "pairs", "two"};
    fprintf(f, "  %-22s %10s %12s %8s %8s  %s\n", "collective", "max_ranks", "max_bytes",
            "max_ppn", "nodes", "algorithm");
    const px_coll_rule_t *ru;
    for (int i = 0; (ru = px_coll_rule(i)); i++) {
        if (i == px_file_nrules && i)
            fprintf(f, "  (built-in defaults follow)\n");
        fprintf(f, "  %-22s %10d %12zu %8d %8s  %s\n", px_coll_names[ru->coll],
                ru->max_comm_size, ru->max_bytes, ru->max_ppn, where[ru->nodes], ru->algo);
    }
    for (int c = 0; c < PX_COLL_COUNT; c++) {
        const char *v = px_coll_forced((px_coll_id_t)c);
        if (v)
            fprintf(f, "  forced: %s = %s\n", px_coll_names[c], v);
    }
}
