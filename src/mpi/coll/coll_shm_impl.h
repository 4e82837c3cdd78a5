/* Shared-memory collectives (coll_shm.c, coll_shm_lane.c): the segment a
 * communicator maps, and the steps its blocking calls and its persistent
 * collectives' lanes share. */
#ifndef PX_MPI_COLL_SHM_IMPL_H
#define PX_MPI_COLL_SHM_IMPL_H

#include <stdatomic.h>
#include <stddef.h>

#include "../../proto/proto.h"
#include "coll_impl.h"

/* Persistent collectives (MPI_<coll>_init) may be started in different
 * orders on different ranks, so their starts cannot take the operation
 * numbers of the communicator's other collectives: a persistent collective
 * (px_pcoll_make lists which) gets a lane of its own at its init, if one
 * of the PX_CSHM_LANES is free, with its own seq and ack words
 * and two slots of PX_CSHM_LANE_SLOT bytes per rank, and counts its starts
 * there. Ranks free their requests at different times, so a freed
 * request's lane only becomes free again at a point every rank passes in
 * the same order: a blocking shared-memory barrier, where each rank
 * publishes the lanes it has freed (`lfreed`, with its arrival) and rank 0
 * the lanes all have freed (`land`, with its release). */
#define PX_CSHM_LANES 8
#define PX_CSHM_LANE_SLOT 4096

/* A blocking call's writer that goes on without waiting for the others
 * (px_cshm_ahead) places its data in its two slots' memory seen as one
 * ring: it takes the place after the last one it took (from the start when
 * that does not fit), once the operations every reader had finished, when
 * it last looked, have left it free (it looks again once it finds no room,
 * and then waits until they are PX_CSHM_AHEAD / 2 calls closer), so it runs
 * up to PX_CSHM_AHEAD calls ahead of them with small data (a gather's
 * blocks, a scatter's) instead of two, in the same memory. Where operation
 * k's data starts (in places) is published with its seq. Every other
 * writer uses slot k % 2. */
#define PX_CSHM_AHEAD 16

/* Largest communicator served: every rank reads every slot, which stops
 * paying off long before this. */
#define PX_CSHM_MAX_RANKS 64
/* Places in the ring are whole pairs of cache lines (an adjacent-line
 * prefetcher fetches them together), so that a reader does not pull in
 * the line of the next place while the writer fills it. */
#define PX_CSHM_PLACE 128

/* A blocking call's announcement by one rank: its seq and where its data
 * lies (or the data itself, when small), in a line of its own per call
 * (operation k's in line k % PX_CSHM_AHEAD of the rank's PX_CSHM_AHEAD,
 * each the first of a pair, as the places are), as the point-to-point
 * rings' cells carry their stamps: the line a reader polls for operation k
 * is not the one the writer goes on to write for k + 1, and a writer
 * reuses a line only once every rank has finished the operation announced
 * there before. */
#define PX_CSHM_INLINE 40
typedef struct {
    _Atomic uint64_t seq;
    uint64_t lfreed; /* lanes this rank had freed (read at barriers) */
    uint16_t off;    /* ring: where the data starts, in places (PX_CSHM_OFF_INLINE: in data) */
    uint16_t pad;
    uint32_t stride;           /* scatterv: bytes from one block to the next */
    char data[PX_CSHM_INLINE]; /* ring: up to PX_CSHM_INLINE bytes of it */
    char pad2[64];             /* the pair's other line (see PX_CSHM_PLACE) */
} px_cshm_ann_t;
#define PX_CSHM_OFF_INLINE UINT16_MAX
_Static_assert(sizeof(px_cshm_ann_t) == 128, "a pair of cache lines per announcement");

/* Per rank: the seq of persistent collectives' lanes (blocking calls
 * announce theirs in px_cshm_ann_t lines), ack, and what goes with them. */
typedef struct {
    _Atomic uint64_t seq; /* lanes only */
    _Atomic uint64_t red; /* split allreduce: this rank's share is reduced;
                           * direct broadcast: the root wrote this rank's copy */
    uint64_t addr;        /* direct operations: this rank's data (its own
                           * address space), valid once seq says so */
    char pad0[40];
    _Atomic uint64_t ack;
    uint64_t land; /* barrier, rank 0: lanes every rank freed, valid once ack says so */
    char pad1[48];
} px_cshm_flags_t;
_Static_assert(sizeof(px_cshm_flags_t) == 128, "two cache lines per rank");
_Static_assert(offsetof(px_cshm_flags_t, ack) == 64, "ack on a line of its own");

struct px_coll_shm {
    int state; /* 1 usable, -1 not */
    int n, me;
    size_t slot;
    uint64_t op; /* operations started on this communicator */
    /* ring: writers that go on without waiting place their data where
     * there is room (0: every writer uses slot k % 2, as on a lane, and
     * with slots too large for off's 16 bits); held:
     * where this rank's data of its last PX_CSHM_AHEAD operations went
     * (operation k's at k % PX_CSHM_AHEAD) */
    int ring;
    px_coll_id_t kid; /* the operation under way, and its root */
    int kroot;
    /* each rank's off of the operation whose seq was last waited for,
     * read with the seq */
    uint16_t seen[PX_CSHM_MAX_RANKS];
    struct {
        uint64_t k;
        size_t at, end;
    } held[PX_CSHM_AHEAD];
    size_t rnext;   /* ring: the end of the last place taken there */
    uint64_t acked; /* the least ack of every rank when last read */
    /* blocking calls' announcements (NULL on a lane: its flags' seq),
     * per rank PX_CSHM_AHEAD lines; posted: the operation this rank last
     * announced in each of its lines */
    px_cshm_ann_t *ann;
    uint64_t posted[PX_CSHM_AHEAD];
    int direct; /* every rank may read every other's memory (process_vm_readv) */
    px_cshm_flags_t *flags;
    char *data;
    void *base;
    size_t len;
    const int *world; /* world rank of each member (failure checks) */
    int wake;         /* members may sleep in the kernel: wake them after a store */
    uint64_t id;      /* the same on every member: names the segment in px_cshm_kept */
    int *kept_world;  /* the copy of world kept with a freed communicator's segment */
    uint64_t kept_at; /* when it was kept (px_cshm_kept_n) */
    /* persistent collectives' lanes (px_coll_shm_lane_take): per lane and
     * rank a flags block, then per lane and rank two slots of lslot bytes */
    px_cshm_flags_t *lflags;
    char *ldata;
    size_t lslot;
    uint64_t lane_taken;             /* lanes given to requests, not yet free again */
    uint64_t lane_freed;             /* of those, the lanes whose request this process freed */
    uint64_t lane_op[PX_CSHM_LANES]; /* starts on each lane (kept with the segment) */
};

/* Does rank r go on without waiting for the others' data in operation id
 * (a broadcast's or scatter's root, a gather's or reduce's other ranks)?
 * Such a writer places its data where its ring has room (off[] says
 * where); every other writes at the start of slot k % 2. */
static inline int px_cshm_ahead(px_coll_id_t id, int root, int r)
{
    switch (id) {
    case PX_COLL_BCAST:
    case PX_COLL_SCATTER:
    case PX_COLL_SCATTERV:
        return r == root;
    case PX_COLL_REDUCE:
    case PX_COLL_GATHER:
    case PX_COLL_GATHERV:
        return r != root;
    default:
        return 0;
    }
}

/* Rank r's announcement line of operation k. */
static inline px_cshm_ann_t *px_cshm_ann(const struct px_coll_shm *m, int r, uint64_t k)
{
    return &m->ann[(size_t)r * PX_CSHM_AHEAD + k % PX_CSHM_AHEAD];
}

/* Rank r's data of operation k (m->kid, rooted at m->kroot): once this
 * rank has waited for r's seq to reach k (its own once it has claimed its
 * place). A writer ahead puts up to PX_CSHM_INLINE bytes in its
 * announcement's line (its place in held[] then ends at 0). */
static inline char *px_cshm_slot(const struct px_coll_shm *m, int r, uint64_t k)
{
    char *mem = m->data + (size_t)r * 2 * m->slot;
    if (!m->ring || !px_cshm_ahead(m->kid, m->kroot, r))
        return mem + (k & 1) * m->slot;
    size_t at = r == m->me ? m->held[k % PX_CSHM_AHEAD].at : (size_t)m->seen[r] * PX_CSHM_PLACE;
    if (r == m->me ? !m->held[k % PX_CSHM_AHEAD].end : m->seen[r] == PX_CSHM_OFF_INLINE)
        return px_cshm_ann(m, r, k)->data;
    return mem + at;
}

/* The room of a gatherv's block in a slot, or of each of a scatterv's or
 * alltoallv's blocks (an n-th of that): a lane's slot at most, also in the
 * larger slots of blocking calls, since larger blocks are faster as
 * messages, as the gather and scatter rows of the selection table have it. */
static inline size_t px_cshm_vpart(const struct px_coll_shm *m, px_coll_id_t id)
{
    size_t slot = m->lslot && m->lslot < m->slot ? m->lslot : m->slot;
    return id == PX_COLL_GATHERV ? slot : slot / (size_t)m->n;
}

/* Word `which` of rank r for operation k: 0 seq, 1 ack, 2 red. */
static inline _Atomic uint64_t *px_cshm_word(struct px_coll_shm *m, int r, int which, uint64_t k)
{
    px_cshm_flags_t *f = &m->flags[r];
    if (which == 0)
        return m->ann ? &px_cshm_ann(m, r, k)->seq : &f->seq;
    return which == 1 ? &f->ack : &f->red;
}

/* Members that sleep in the kernel (PX_PROGRESS_MODE=sleep or block) see
 * a store only once woken: px_cshm_post wakes them. */
void px_cshm_wake_all(const struct px_coll_shm *m);

/* Stores word `which` of this rank for operation k (a blocking call
 * announces its seq with px_cshm_announce). */
static inline void px_cshm_post(struct px_coll_shm *m, int which, uint64_t k)
{
    atomic_store_explicit(px_cshm_word(m, m->me, which, k), k, memory_order_release);
    if (__builtin_expect(m->wake, 0))
        px_cshm_wake_all(m);
}

/* A gatherv's, scatterv's or alltoallv's block of count items of dt (on a
 * lane or in a blocking call): goes through the slots if it fits its part
 * of one (px_cshm_vpart; scatterv, alltoallv: block r at r parts), else
 * as a message; both ends can tell from their own counts. */
static inline int px_cshm_vfits(const struct px_coll_shm *m, px_coll_id_t id, MPI_Aint count,
                                MPI_Datatype dt)
{
    return (size_t)count * (size_t)px_mpi_dt_get(dt)->size <= px_cshm_vpart(m, id);
}

/* Posts the messages of a gatherv, scatterv or alltoallv on segment v
 * (its blocks that do not fit their part of a slot; the receives first)
 * on `tag`, into reqs (room for 2n), *nreqs of them; then
 * px_cshm_vmsgs_done: 1 once all are done (and freed), -1 if one failed. */
int px_cshm_vmsgs(const struct px_coll_shm *v, px_coll_id_t id, const px_coll_args_t *a,
                  px_mpi_comm_t *c, int tag, px_mpi_req_t **reqs, int *nreqs);
int px_cshm_vmsgs_done(px_mpi_req_t **reqs, int *nreqs);
/* In a blocking call (px_coll_shm_run): waits for the writers of the
 * blocks of operation k this rank reads from the slots; then for its
 * messages. */
int px_cshm_vwait(struct px_coll_shm *m, px_coll_id_t id, const px_coll_args_t *a, uint64_t k);
int px_cshm_vmsgs_wait(px_mpi_req_t **reqs, int *nreqs);
/* Before this rank writes `bytes` for operation k (ahead: without waiting
 * for the others' data), where they go: once the operations there, and
 * the one announced before in the same announcement line, are finished
 * everywhere (coll_shm_ring.c). */
int px_cshm_claim(struct px_coll_shm *m, uint64_t k, size_t bytes, int ahead);
/* A blocking call's seq = k of this rank (with where its data lies, if it
 * placed it in its ring), once every rank has finished the operation
 * announced before in the same line (coll_shm_ring.c). */
int px_cshm_announce(struct px_coll_shm *m, uint64_t k);
/* Waits until word `which` (0 seq, 1 ack) of rank `who` (every rank: -1)
 * reaches val, progressing the engine meanwhile (coll_shm.c). */
int px_cshm_wait(struct px_coll_shm *m, int which, int who, uint64_t val);
/* The same, giving up when `from` (when not negative: the rank that stores
 * the word) has failed rather than the rank waited for. */
int px_cshm_wait_from(struct px_coll_shm *m, int which, int who, uint64_t val, int from);
/* count items of dt at buf <-> contiguous bytes at p */
void px_cshm_pack(const void *buf, MPI_Aint count, MPI_Datatype dt, void *p);
void px_cshm_unpack(const void *p, MPI_Aint count, MPI_Datatype dt, void *buf);
/* A broadcast, allgather or alltoall reading the others' buffers
 * (coll_shm_direct.c). */
int px_cshm_direct(struct px_coll_shm *m, px_coll_id_t id, const px_coll_args_t *a);

/* Do an allgatherv's blocks (a->rcounts) fit a slot of `slot` bytes each? */
int px_cshm_blocks_fit(const px_coll_args_t *a, int n, size_t slot);
/* Steps of operation id on this rank, in this order: does it write a slot
 * (then it claims it and posts its seq)? its contribution into its slot;
 * the word it then waits for (0 seq, 1 ack) and whose (every rank: -1),
 * 0 if none; what it takes from the slots once written. */
int px_cshm_writes(px_coll_id_t id, const px_coll_args_t *a, int me);
void px_cshm_write(struct px_coll_shm *m, px_coll_id_t id, const px_coll_args_t *a, uint64_t k);
int px_cshm_waits(px_coll_id_t id, const px_coll_args_t *a, int me, int *which, int *who);
void px_cshm_take(struct px_coll_shm *m, px_coll_id_t id, const px_coll_args_t *a, uint64_t k);
/* Blocking barrier k (coll_shm_lane.c), before this rank posts its ack:
 * the lanes every rank had freed are free again. */
void px_cshm_lanes_recycle(struct px_coll_shm *m, uint64_t k);

#endif
