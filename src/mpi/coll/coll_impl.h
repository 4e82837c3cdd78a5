/* Collective framework: a schedule engine (rounds of send/recv/local
 * steps), one builder function per algorithm in <coll>/<coll>_<algo>.c,
 * one registry of algorithms, and a selection table (coll_select.c). */
#ifndef PX_MPI_COLL_IMPL_H
#define PX_MPI_COLL_IMPL_H

#include <stdio.h>

#include "../mpi_impl.h"

/* ---------- collectives ---------- */

typedef enum {
    PX_COLL_BARRIER,
    PX_COLL_BCAST,
    PX_COLL_REDUCE,
    PX_COLL_ALLREDUCE,
    PX_COLL_GATHER,
    PX_COLL_GATHERV,
    PX_COLL_SCATTER,
    PX_COLL_SCATTERV,
    PX_COLL_ALLGATHER,
    PX_COLL_ALLGATHERV,
    PX_COLL_ALLTOALL,
    PX_COLL_ALLTOALLV,
    PX_COLL_ALLTOALLW,
    PX_COLL_REDUCE_SCATTER,
    PX_COLL_REDUCE_SCATTER_BLOCK,
    PX_COLL_SCAN,
    PX_COLL_EXSCAN,
    PX_COLL_COUNT
} px_coll_id_t;

/* Arguments of one collective call, after MPI_IN_PLACE has been resolved
 * by the entry point where the algorithms need no special case. */
typedef struct px_coll_args {
    const void *sbuf; /* MPI_IN_PLACE kept only where documented per collective */
    void *rbuf;
    int scount, rcount;
    MPI_Datatype stype, rtype;
    /* counts and displacements of the v and w variants: the large-count
     * functions' arrays, or an MPI-3 entry point's ints widened */
    const MPI_Aint *scounts, *sdispls, *rcounts, *rdispls;
    const MPI_Datatype *stypes, *rtypes; /* Alltoallw (displacements in bytes) */
    int count;                           /* reductions */
    MPI_Datatype dt;
    MPI_Op op;
    int commute;
    int root;
    size_t bytes; /* message size used for selection; equal on every rank */
} px_coll_args_t;

/* ---------- schedules ---------- */

enum {
    PX_COLL_STEP_SEND = 1,
    PX_COLL_STEP_RECV,
    PX_COLL_STEP_COPY,   /* memcpy count bytes */
    PX_COLL_STEP_REDUCE, /* dst = src op dst */
    PX_COLL_STEP_PACK,   /* count items of dt at src -> contiguous bytes at dst */
    PX_COLL_STEP_UNPACK, /* contiguous bytes at src -> count items of dt at dst */
};

typedef struct px_coll_step {
    uint8_t kind;
    uint8_t early; /* a transfer posted ahead of its round's local steps */
    px_mpi_comm_t *c;
    int peer;
    const void *src;
    void *dst;
    MPI_Aint count;
    MPI_Datatype dt;
    MPI_Op op;
} px_coll_step_t;

#define PX_COLL_SCHED_INLINE 16

typedef struct px_coll_sched {
    px_mpi_comm_t *comm;
    int tag;
    px_coll_step_t *steps;
    int nsteps, scap;
    int *rounds; /* index of the first step of each round */
    int nrounds, rcap;
    int cur;    /* round being executed */
    int posted; /* round cur has been started */
    px_mpi_req_t **reqs;
    int nreqs, qcap;
    void **mem; /* temporaries freed with the schedule */
    int nmem, mcap;
    /* datatypes and operation a nonblocking collective uses: released with
     * the schedule, so that the program may free its handles meanwhile */
    MPI_Datatype *kept;
    int nkept;
    MPI_Op kept_op;
    int err;
    int busy; /* px_coll_sched_progress is running it */
    /* room for small schedules, so that most calls allocate nothing */
    px_coll_step_t steps_in[PX_COLL_SCHED_INLINE];
    int rounds_in[PX_COLL_SCHED_INLINE];
    px_mpi_req_t *reqs_in[PX_COLL_SCHED_INLINE];
    struct px_coll_sched *next_free;
} px_coll_sched_t;

px_coll_sched_t *px_coll_sched_new(px_mpi_comm_t *c);
/* The same on a tag the caller took earlier (px_mpi_coll_tag_take). */
px_coll_sched_t *px_coll_sched_new_tag(px_mpi_comm_t *c, int tag);
/* Keeps the datatypes and the operation of a (n: entries of its per-rank
 * type arrays) alive until the schedule is freed. */
int px_coll_sched_keep(px_coll_sched_t *s, const px_coll_args_t *a, int n);
void px_coll_sched_free(px_coll_sched_t *s);
/* Ends the current round: later steps start once its transfers complete. */
void px_coll_sched_round(px_coll_sched_t *s);
void px_coll_sched_send(px_coll_sched_t *s, px_mpi_comm_t *c, const void *buf, MPI_Aint count,
                        MPI_Datatype dt, int peer);
void px_coll_sched_recv(px_coll_sched_t *s, px_mpi_comm_t *c, void *buf, MPI_Aint count,
                        MPI_Datatype dt, int peer);
void px_coll_sched_copy(px_coll_sched_t *s, const void *src, void *dst, size_t bytes);
void px_coll_sched_reduce(px_coll_sched_t *s, const void *in, void *inout, MPI_Aint count,
                          MPI_Datatype dt, MPI_Op op);
void px_coll_sched_pack(px_coll_sched_t *s, const void *src, MPI_Aint count, MPI_Datatype dt,
                        void *dst);
void px_coll_sched_unpack(px_coll_sched_t *s, const void *src, MPI_Aint count, MPI_Datatype dt,
                          void *dst);
/* Scratch memory owned by the schedule (NULL sets s->err). */
void *px_coll_sched_alloc(px_coll_sched_t *s, size_t bytes);
/* Advances; returns 1 when every round has completed (s->err holds the class). */
int px_coll_sched_progress(px_coll_sched_t *s);
/* Runs a schedule to completion and frees it; returns its error class. */
int px_coll_sched_run(px_coll_sched_t *s);
/* The same for a schedule whose building returned rc: freed unrun unless
 * rc and the schedule's own error are MPI_SUCCESS. */
int px_coll_sched_run_built(px_coll_sched_t *s, int rc);
/* A blocking collective of the library's own chosen as the program's would
 * be, shared memory included (mpi_impl.h: px_mpi_coll_allgather_top). */
int px_coll_run_top(px_coll_id_t id, const px_coll_args_t *a, px_mpi_comm_t *c);
/* Wraps a schedule in a nonblocking-collective request. */
int px_coll_sched_start_req(px_coll_sched_t *s, px_mpi_comm_t *c, px_mpi_req_t **req_p);

/* ---------- reduction buffers ----------
 * Reduction data keeps the user's layout: `count` items of dt occupy
 * [buf + true_lb, buf + true_lb + span). Temporaries have the same layout. */
static inline size_t px_coll_span(const px_mpi_dt_t *d, MPI_Aint count)
{
    return count ? (size_t)((count - 1) * d->extent + d->true_extent) : 0;
}
/* A scratch buffer that holds count items of dt in the user's layout. */
void *px_coll_tmp_items(px_coll_sched_t *s, MPI_Datatype dt, MPI_Aint count);
/* Send/recv/copy count items of a reduction buffer starting at item `first`
 * (a contiguous datatype's span as bytes, a non-contiguous one's type map
 * only; segments need a contiguous datatype). */
void px_coll_send_items(px_coll_sched_t *s, px_mpi_comm_t *c, const void *buf, MPI_Aint first,
                        MPI_Aint count, MPI_Datatype dt, int peer);
void px_coll_recv_items(px_coll_sched_t *s, px_mpi_comm_t *c, void *buf, MPI_Aint first,
                        MPI_Aint count, MPI_Datatype dt, int peer);
void px_coll_copy_items(px_coll_sched_t *s, const void *src, void *dst, MPI_Aint first,
                        MPI_Aint count, MPI_Datatype dt);
/* Broadcast of count items of dt at buf over c (coll.c): a non-contiguous
 * datatype is packed at the root and unpacked elsewhere, so that only its
 * type map is written. */
int px_coll_bcast_sched(px_coll_sched_t *s, void *buf, int count, MPI_Datatype dt, int root,
                        px_mpi_comm_t *c);
static inline char *px_coll_item(const void *buf, MPI_Aint i, MPI_Datatype dt)
{
    return (char *)buf + i * px_mpi_dt_get(dt)->extent;
}

/* ---------- algorithm registry and selection ---------- */

enum {
    PX_COLL_F_COMMUTE = 1u << 0,    /* commutative operations only */
    PX_COLL_F_POF2 = 1u << 1,       /* communicator size a power of two */
    PX_COLL_F_CONTIG = 1u << 2,     /* contiguous reduction datatype (segments) */
    PX_COLL_F_HIER = 1u << 3,       /* node hierarchy built for the communicator */
    PX_COLL_F_COUNT_POF2 = 1u << 4, /* count >= largest power of two <= size */
    PX_COLL_F_SHM = 1u << 5,        /* shared-memory segment (coll_shm.c): blocking calls,
                                    ranks on one machine, data within PX_COLL_SHM_SIZE */
    PX_COLL_F_TOPO = 1u << 7,       /* fabric description (PX_TOPO) puts the ranks in several
                                    switch clusters, some of more than one rank */
    PX_COLL_F_CMA = 1u << 6,        /* with F_SHM: the segment only signals, each rank reads
                                    the others' buffers (process_vm_readv), any size */
};

typedef int (*px_coll_build_fn)(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c);

typedef struct px_coll_algo {
    px_coll_id_t coll;
    const char *name;
    px_coll_build_fn build;
    unsigned flags;
    const char *doc;
} px_coll_algo_t;

/* Where a row applies: any placement, all ranks on one node, ranks on
 * several nodes, on several nodes in pairs (ranks 2i and 2i+1 on one
 * node, as the launcher places two or more per node), or on exactly two
 * nodes; from the launcher's node map, so known alike on every rank of the
 * communicator. */
typedef enum {
    PX_COLL_NODES_ANY = 0,
    PX_COLL_NODES_ONE,
    PX_COLL_NODES_SEVERAL,
    PX_COLL_NODES_PAIRS,
    PX_COLL_NODES_TWO
} px_coll_nodes_t;

/* One row of the selection table: the first row of a collective whose limits
 * hold and whose algorithm applies wins (0 = no limit). */
typedef struct px_coll_rule {
    px_coll_id_t coll;
    int max_comm_size;
    size_t max_bytes;
    int max_ppn;
    const char *algo;
    px_coll_nodes_t nodes;
} px_coll_rule_t;

const char *px_coll_name(px_coll_id_t coll);
const px_coll_algo_t *px_coll_select(px_coll_id_t coll, const px_coll_args_t *a, px_mpi_comm_t *c);
/* Builds the selected algorithm into a new schedule. */
int px_coll_build(px_coll_id_t coll, const px_coll_args_t *a, px_mpi_comm_t *c,
                  px_coll_sched_t **s_p);
/* Builds the selected algorithm of `coll` into an existing schedule, over c
 * (used by algorithms composed of others, e.g. over sub-communicators). */
int px_coll_build_into(px_coll_sched_t *s, px_coll_id_t coll, const px_coll_args_t *a,
                       px_mpi_comm_t *c);
int px_coll_build_algo(px_coll_sched_t *s, px_coll_id_t coll, const char *algo,
                       const px_coll_args_t *a, px_mpi_comm_t *c);
/* Builds algorithm al (already selected) into s. */
int px_coll_build_with(px_coll_sched_t *s, px_coll_id_t coll, const px_coll_algo_t *al,
                       const px_coll_args_t *a, px_mpi_comm_t *c);
void px_mpi_coll_print_table(FILE *f);
/* The algorithm for a blocking call made by the application (the
 * shared-memory algorithms are only chosen here). */
const px_coll_algo_t *px_coll_select_top(px_coll_id_t coll, const px_coll_args_t *a,
                                         px_mpi_comm_t *c);
/* Shared-memory collectives (coll_shm.c): whether id can run on c's segment
 * (collective: sets the segment up at the first call that needs it), and
 * running it. */
/* direct: the F_CMA variant (bcast, allgather, alltoall) */
int px_coll_shm_usable(px_coll_id_t id, int direct, const px_coll_args_t *a, px_mpi_comm_t *c);
int px_coll_shm_run(px_coll_id_t id, int direct, const px_coll_args_t *a, px_mpi_comm_t *c);
/* A persistent collective's lane in c's segment: words and small slots of
 * its own, where its starts count, whatever order the ranks start their
 * persistent requests in (coll_shm.c). */
typedef struct px_cshm_lane {
    struct px_coll_shm *m; /* NULL: no lane */
    int lane;
    px_coll_id_t id;  /* the collective of the start under way */
    px_coll_args_t a; /* and its arguments */
    uint64_t k;       /* the lane's operation number of that start */
    int phase;        /* 0: its data not yet written, 1: waiting to read */
    MPI_Aint *v;      /* a copy of the start's counts and displacements */
    /* gatherv, scatterv, alltoallv: the blocks too large for their part of
     * a slot go as messages on the tag the init took (coll_shm_lane.c) */
    int tag;
    int nreqs;
    px_mpi_req_t **reqs;
    int err; /* posting one failed: the start still runs on the lane, then fails */
} px_cshm_lane_t;
/* At a persistent collective's init (in the same order on every rank):
 * gives l one of c's lanes if c's segment is set up and has one free. */
void px_coll_shm_lane_take(px_mpi_comm_t *c, px_cshm_lane_t *l);
/* The request that had lane l is freed (its last start ended): the lane
 * is free again once every rank has freed it (a later blocking barrier). */
void px_coll_shm_lane_drop(px_cshm_lane_t *l);
/* Whether the call (id, a) runs on a lane (the same answer at every
 * start and on every rank). */
int px_coll_shm_lane_fits(px_coll_id_t id, const px_coll_args_t *a, px_mpi_comm_t *c);
/* Counts a call of coll's "shm" algorithm for the tool interface. */
void px_coll_count_shm(px_coll_id_t coll, size_t bytes);
/* Starts (id, a) on lane l as a nonblocking request (a call of id's "shm"
 * algorithm for the tool interface). */
int px_coll_shm_lane_start(px_cshm_lane_t *l, px_coll_id_t id, const px_coll_args_t *a,
                           px_mpi_comm_t *c, px_mpi_req_t **req_p);
/* Whether some PX_<COLL>_ALGORITHM forces a node-aware algorithm. */
int px_coll_forced_hier(void);
/* PX_<COLL>_ALGORITHM changed (the tool interface wrote it): read again at
 * the next selection. */
void px_coll_forced_reset(void);
/* The registry for the tool interface: algorithm i's name and its
 * collective's (NULL past the end), and the schedules built with it (a
 * composite algorithm's parts count too; a persistent collective counts
 * once, at its init) and their bytes. */
int px_coll_algo_count(void);
const char *px_coll_algo_info(int i, const char **coll_p);
void px_coll_algo_usage(int i, uint64_t *calls_p, uint64_t *bytes_p);

/* ---------- switch clusters (coll_topo.c) ---------- */

/* Whether c's ranks fall into several switch clusters, some of more than
 * one rank (computed at the first call, the same on every rank). */
int px_coll_tclus_usable(px_mpi_comm_t *c);
/* Whether the topology-aware alltoall runs its schedule on c (DCSS, at the
 * first call; the schedule is then built and kept with c). */
int px_coll_ta2a_usable(px_mpi_comm_t *c);

/* ---------- node hierarchy (coll_hier.c) ---------- */

typedef struct px_coll_hier {
    int handle;
    uint32_t ctx;
    int state;              /* 0 none, 1 built, -1 not applicable */
    px_mpi_comm_t *node;    /* ranks of this comm on my node */
    px_mpi_comm_t *leaders; /* local rank 0 of every node; NULL elsewhere */
    int num_nodes, max_ppn, min_ppn;
    int *leader_of; /* comm rank -> rank of its node's leader in `leaders` */
} px_coll_hier_t;

/* The hierarchy if already built (never communicates). */
px_coll_hier_t *px_coll_hier_get(px_mpi_comm_t *c);
/* Builds it on first use; only from blocking collectives (communicates). */
void px_coll_hier_ensure(px_mpi_comm_t *c);
int px_coll_hier_usable(px_mpi_comm_t *c);

/* ---------- helpers ---------- */

static inline int px_coll_pof2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

/* Blocking byte transfers on the collective context (kept for callers
 * outside the schedule engine). */
int px_coll_send(const void *buf, size_t bytes, int dest, int tag, px_mpi_comm_t *c);
int px_coll_recv(void *buf, size_t bytes, int src, int tag, px_mpi_comm_t *c);
int px_coll_sendrecv(const void *sbuf, size_t sbytes, int dest, void *rbuf, size_t rbytes, int src,
                     int tag, px_mpi_comm_t *c);

/* ---------- algorithm builders ---------- */

#define PX_COLL_BUILDER(name)                                                                      \
    int name(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c)

PX_COLL_BUILDER(px_coll_barrier_dissemination);
PX_COLL_BUILDER(px_coll_barrier_tree);
PX_COLL_BUILDER(px_coll_barrier_recursive_doubling);
PX_COLL_BUILDER(px_coll_barrier_smp);
PX_COLL_BUILDER(px_coll_bcast_binomial);
PX_COLL_BUILDER(px_coll_bcast_linear);
PX_COLL_BUILDER(px_coll_bcast_knomial);
PX_COLL_BUILDER(px_coll_bcast_scatter_ring);
PX_COLL_BUILDER(px_coll_bcast_pipeline);
PX_COLL_BUILDER(px_coll_bcast_smp);
PX_COLL_BUILDER(px_coll_bcast_topo);
PX_COLL_BUILDER(px_coll_reduce_binomial);
PX_COLL_BUILDER(px_coll_reduce_ordered);
PX_COLL_BUILDER(px_coll_reduce_rabenseifner);
PX_COLL_BUILDER(px_coll_allreduce_recursive_doubling);
PX_COLL_BUILDER(px_coll_allreduce_ring);
PX_COLL_BUILDER(px_coll_allreduce_rabenseifner);
PX_COLL_BUILDER(px_coll_allreduce_reduce_bcast);
PX_COLL_BUILDER(px_coll_allreduce_smp);
PX_COLL_BUILDER(px_coll_gather_binomial);
PX_COLL_BUILDER(px_coll_gather_linear);
PX_COLL_BUILDER(px_coll_gather_topo);
PX_COLL_BUILDER(px_coll_gatherv_linear);
PX_COLL_BUILDER(px_coll_scatter_binomial);
PX_COLL_BUILDER(px_coll_scatter_linear);
PX_COLL_BUILDER(px_coll_scatter_topo);
PX_COLL_BUILDER(px_coll_scatterv_linear);
/* Copies this rank's own block of an allgather into rbuf (unless in place). */
int px_coll_allgather_own(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c);
/* Schedules the send of this rank's own block of an allgather to peer:
 * from sbuf (unless in place, or ranks share cores), so that it does not
 * wait for the copy into rbuf. */
void px_coll_allgather_send_own(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c,
                                int peer);
PX_COLL_BUILDER(px_coll_allgather_ring);
PX_COLL_BUILDER(px_coll_allgather_linear);
PX_COLL_BUILDER(px_coll_allgather_recursive_doubling);
PX_COLL_BUILDER(px_coll_allgather_bruck);
PX_COLL_BUILDER(px_coll_allgatherv_ring);
PX_COLL_BUILDER(px_coll_allgatherv_linear);
/* alltoall_pairwise.c: MPI_IN_PLACE resolved (the send data copied aside),
 * and with start, the block extents and this rank's own block copied */
int px_coll_alltoall_resolve(px_coll_sched_t *s, const px_coll_args_t *a, px_coll_args_t *out);
int px_coll_alltoall_start(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c,
                           px_coll_args_t *b, MPI_Aint *sblk, MPI_Aint *rblk);
PX_COLL_BUILDER(px_coll_alltoall_pairwise);
PX_COLL_BUILDER(px_coll_alltoall_bruck);
PX_COLL_BUILDER(px_coll_alltoall_linear);
PX_COLL_BUILDER(px_coll_alltoall_staggered);
PX_COLL_BUILDER(px_coll_alltoall_topo);
/* alltoallw_pairwise.c: MPI_IN_PLACE resolved (the send data copied
 * aside), and the receive or send of the block of rank i */
int px_coll_alltoallw_resolve(px_coll_sched_t *s, const px_coll_args_t *a, px_coll_args_t *out);
void px_coll_alltoallw_recv(px_coll_sched_t *s, px_mpi_comm_t *c, const px_coll_args_t *a, int i);
void px_coll_alltoallw_send(px_coll_sched_t *s, px_mpi_comm_t *c, const px_coll_args_t *a, int i);
PX_COLL_BUILDER(px_coll_alltoallw_pairwise);
PX_COLL_BUILDER(px_coll_alltoallw_linear);
PX_COLL_BUILDER(px_coll_reduce_scatter_recursive_halving);
PX_COLL_BUILDER(px_coll_reduce_scatter_pairwise);
PX_COLL_BUILDER(px_coll_reduce_scatter_reduce_scatterv);
PX_COLL_BUILDER(px_coll_scan_linear);
/* scan_recursive_doubling.c: MPI_Scan (inclusive) or MPI_Exscan */
int px_coll_scan_doubling(px_coll_sched_t *s, const px_coll_args_t *a, px_mpi_comm_t *c,
                          int inclusive);
PX_COLL_BUILDER(px_coll_scan_recursive_doubling);
PX_COLL_BUILDER(px_coll_exscan_linear);
PX_COLL_BUILDER(px_coll_exscan_recursive_doubling);

/* Recursive doubling and halving on n ranks that are not a power of two
 * (allreduce/allreduce_recursive_doubling.c): of the first 2 * rem ranks
 * (rem = n - pof2), each even one hands its vector in acc to the odd one
 * above it, which reduces it in through tmp, and takes no further part
 * until unfold sends it the result. fold returns the rank's place among the
 * pof2 left (newrank), -1 if folded out. */
int px_coll_allreduce_fold(px_coll_sched_t *s, px_mpi_comm_t *c, void *acc, void *tmp,
                           MPI_Aint count, MPI_Datatype dt, MPI_Op op, int rem);
void px_coll_allreduce_unfold(px_coll_sched_t *s, px_mpi_comm_t *c, void *acc, MPI_Aint count,
                              MPI_Datatype dt, int rem);

/* One step of a recursive halving: the partner, the blocks (indices into
 * cnts/displs) this rank keeps [klo, khi) and those it sends [slo, shi). */
typedef struct px_coll_rab_step {
    int peer, klo, khi, slo, shi;
} px_coll_rab_step_t;

/* Shared pieces of the segmenting reductions (allreduce/allreduce_rabenseifner.c):
 * recursive halving over the pof2 ranks left after folding (newrank -1:
 * folded out), partners farthest first (newrank ^ pof2/2 first; the rank
 * then holds segment `newrank` of acc) or, with up, nearest first (the
 * segment whose index is newrank's bits reversed). steps (log2 pof2 of
 * them, may be NULL) receives each step, for an allgather to retrace. */
int px_coll_rabenseifner_reduce_scatter(px_coll_sched_t *s, px_mpi_comm_t *c, void *acc,
                                        MPI_Aint count, MPI_Datatype dt, MPI_Op op, MPI_Aint *cnts,
                                        MPI_Aint *displs, int up, px_coll_rab_step_t *steps,
                                        int *newrank_p);

#endif
