/* Shared-memory collectives for communicators whose ranks are all on one
 * machine: instead of messages through the shared-memory channel, each rank
 * writes its contribution once into its own slot of a segment mapped by the
 * whole communicator and reads the others' slots directly, so a small
 * allreduce, barrier, broadcast or allgather costs one wait per rank instead
 * of log2 n message rounds (each a wake-up when ranks share cores).
 *
 * Segment: per rank a flags block (its `ack` word on a cache line of its
 * own), PX_CSHM_AHEAD announcement lines, then per rank two data slots of
 * PX_COLL_SHM_SIZE bytes. A rank publishes its data for operation k by
 * storing seq = k (release) in its announcement line k % PX_CSHM_AHEAD and
 * has finished reading operation k when it stores ack = k; it writes a
 * place or a line again only once every rank's ack has reached the last
 * operation there (coll_shm_ring.c). A writer that waits for the others'
 * data anyway uses slot k % 2; one that goes on without waiting (a
 * gather's senders, a scatter's root) takes the next place of its ring, or
 * its announcement's line for up to PX_CSHM_INLINE bytes, and publishes
 * where with its seq, so it runs up to PX_CSHM_AHEAD calls ahead of its
 * readers. Reductions combine the slots
 * in rank order on every rank, so all ranks get bit-identical results and
 * non-commutative operations are right. Larger allreduces go chunk by
 * chunk and split the combining among the ranks (px_cshm_allreduce_split,
 * a third word `red`).
 *
 * The 'cma' broadcast, allgather and alltoall read the others' buffers
 * instead (coll_shm_direct.c); the segment's setup checks that each rank
 * may read its neighbour's memory and agrees on it like on the segment
 * itself.
 *
 * The segment is created at the first call that would use it (a blocking
 * collective, where every rank takes part), mode 0600, and unlinked as soon
 * as every rank has mapped it; the ranks agree over point-to-point messages
 * whether it works, so one rank's failure makes the communicator use the
 * message-based algorithms everywhere. */
#include "coll_shm_impl.h"
#include "../../util/scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Segments a process keeps mapped at most (bytes); communicators beyond it
 * use the message-based algorithms. */
#define PX_CSHM_MAPPED_MAX ((size_t)256 << 20)
/* Allreduce from this size on splits the combining among the ranks (each
 * combines an n-th of every chunk): one more wait, but n times less
 * arithmetic per rank, which pays from about here */
#define PX_CSHM_SPLIT_MIN 8192
/* Chunks of a split allreduce are at most this large (or one element): with
 * larger chunks a rank combines longer before the others may copy */
#define PX_CSHM_SPLIT_CHUNK 65536
static size_t px_cshm_mapped;
/* Stands for "not usable" when there was no memory to say so. */
static struct px_coll_shm px_cshm_none = {.state = -1};

static size_t px_cshm_slot_size(void) { return (px_params.coll_shm_size + 63) & ~(size_t)63; }

/* Segments of freed communicators stay mapped for the next communicator
 * of the same members in the same order (a library that duplicates a
 * communicator per object, a loop of MPI_Comm_dup and MPI_Comm_free):
 * setting a segment up costs the zeroing of its pages and three rounds of
 * messages. Such a communicator takes the segment over with its state (the
 * operations counted go on as on one communicator), if every member still
 * keeps it. */
#define PX_CSHM_KEPT 4
static struct px_coll_shm *px_cshm_kept[PX_CSHM_KEPT];
static uint64_t px_cshm_ids, px_cshm_kept_n;

static void px_cshm_unmap(struct px_coll_shm *m)
{
    if (m->base) {
        munmap(m->base, m->len);
        px_cshm_mapped -= m->len;
    }
    free(m->kept_world);
    free(m);
}

void px_coll_shm_free(struct px_coll_shm *m)
{
    if (!m || m == &px_cshm_none)
        return;
    /* kept for a later communicator of the same members, unless threads
     * may create communicators at once: two creations whose collectives
     * interleave across threads could then pick the same kept segment */
    if (m->state == 1 && m->id && !px_cs_on &&
        (m->kept_world = malloc(sizeof(int) * (size_t)m->n))) {
        memcpy(m->kept_world, m->world, sizeof(int) * (size_t)m->n);
        m->world = m->kept_world;
        int i = 0; /* a free place, else the oldest */
        for (int j = 0; j < PX_CSHM_KEPT; j++)
            if (!px_cshm_kept[j] ||
                (px_cshm_kept[i] && px_cshm_kept[j]->kept_at < px_cshm_kept[i]->kept_at))
                i = j;
        if (px_cshm_kept[i])
            px_cshm_unmap(px_cshm_kept[i]);
        m->kept_at = ++px_cshm_kept_n;
        px_cshm_kept[i] = m;
        return;
    }
    px_cshm_unmap(m);
}

/* The kept segment of c's members in c's order: its id (or 0); with take,
 * removed from the kept ones and given to c. */
static uint64_t px_cshm_kept_find(px_mpi_comm_t *c, uint64_t id, int take)
{
    for (int j = 0; j < PX_CSHM_KEPT; j++) {
        struct px_coll_shm *m = px_cshm_kept[j];
        if (!m || m->n != c->size || m->me != c->rank || m->slot != px_cshm_slot_size() ||
            (id && m->id != id))
            continue;
        int r = 0;
        while (r < m->n && m->world[r] == px_mpi_comm_world_rank(c, r))
            r++;
        if (r < m->n)
            continue;
        if (take) {
            px_cshm_kept[j] = NULL;
            m->world = c->group->world;
            free(m->kept_world);
            m->kept_world = NULL;
            m->wake = px_proto_peers_wake();
            m->lane_taken = m->lane_freed = 0; /* every member freed its requests */
            c->cshm = m;
        }
        return m->id;
    }
    return 0;
}

/* Partial results of px_cshm_combine, each at most a slot: reserved when a
 * segment is set up, kept. PX_CSHM_LEVELS blocks at once at most (n <= 64). */
#define PX_CSHM_LEVELS 8
static char *px_cshm_scratch;
static size_t px_cshm_scratch_cap;

static int px_cshm_reserve(size_t slot)
{
    if (px_cshm_scratch_cap >= slot * PX_CSHM_LEVELS)
        return 1;
    char *p = realloc(px_cshm_scratch, slot * PX_CSHM_LEVELS);
    if (!p)
        return 0;
    px_cshm_scratch = p;
    px_cshm_scratch_cap = slot * PX_CSHM_LEVELS;
    return 1;
}

/* Creates and maps the segment (collective over c); 1 if every rank can use it. */
static int px_cshm_create(px_mpi_comm_t *c)
{
    struct px_coll_shm *m = calloc(1, sizeof(*m));
    int n = c->size, ok = m != NULL;
    if (!m) { /* only this rank knows: it still joins the agreement */
        uint64_t root_ok = 0;
        int all;
        int rc = px_mpi_coll_bcast(&root_ok, 1, MPI_UINT64_T, 0, c);
        if (rc == MPI_SUCCESS)
            px_mpi_coll_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c);
        c->cshm = &px_cshm_none;
        return 0;
    }
    for (int r = 0; r < n; r++)
        if (!px_proto_peer_local(px_mpi_comm_world_rank(c, r)))
            ok = 0;
    m->n = n;
    m->me = c->rank;
    m->slot = px_cshm_slot_size();
    if (!px_cshm_reserve(m->slot))
        ok = 0;
    m->world = c->group->world;
    m->wake = px_proto_peers_wake();
    long page = sysconf(_SC_PAGESIZE);
    m->lslot = m->slot < PX_CSHM_LANE_SLOT ? m->slot : PX_CSHM_LANE_SLOT;
    m->len = (size_t)n * (sizeof(px_cshm_flags_t) + PX_CSHM_AHEAD * sizeof(px_cshm_ann_t)) +
             (size_t)n * 2 * m->slot +
             (size_t)PX_CSHM_LANES * (size_t)n * (sizeof(px_cshm_flags_t) + 2 * m->lslot);
    m->len = (m->len + (size_t)page - 1) & ~((size_t)page - 1);
    for (int j = 0; j < PX_CSHM_KEPT && px_cshm_mapped + m->len > PX_CSHM_MAPPED_MAX; j++)
        if (px_cshm_kept[j]) { /* kept segments give way to one in use */
            px_cshm_unmap(px_cshm_kept[j]);
            px_cshm_kept[j] = NULL;
        }
    if (px_cshm_mapped + m->len > PX_CSHM_MAPPED_MAX)
        ok = 0;
    char name[96];
    snprintf(name, sizeof(name), "/plexus-%016llx-c%u-%d", (unsigned long long)px_proto_job_id(),
             c->ctx, px_mpi_comm_world_rank(c, 0));
    int fd = -1, created = 0;
    if (c->rank == 0 && ok) {
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 && errno == EEXIST) { /* left by a process of this job that died */
            shm_unlink(name);
            fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        }
        created = fd >= 0;
        /* the pages are reserved now: a full /dev/shm fails here rather
         * than with SIGBUS at a later write */
        int err;
        if (fd >= 0 && (err = posix_fallocate(fd, 0, (off_t)m->len)) != 0) {
            errno = err;
            close(fd);
            fd = -1;
        }
        if (fd < 0)
            px_warn("coll",
                    "cannot create shared-memory segment %s (%zu bytes): %s; collectives "
                    "on this communicator use messages",
                    name, m->len, strerror(errno));
        ok = fd >= 0;
    }
    /* the segment's id, 0 when rank 0 has none */
    uint64_t root_ok = ok ? ((uint64_t)px_mpi_comm_world_rank(c, 0) << 40) | ++px_cshm_ids : 0;
    int rc = px_mpi_coll_bcast(&root_ok, 1, MPI_UINT64_T, 0, c);
    m->id = root_ok;
    if (rc == MPI_SUCCESS && root_ok && ok && c->rank != 0) {
        fd = shm_open(name, O_RDWR, 0600);
        ok = fd >= 0;
    }
    ok = ok && root_ok && rc == MPI_SUCCESS;
    if (ok) {
        m->base = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m->base == MAP_FAILED) {
            m->base = NULL;
            ok = 0;
        } else {
            px_cshm_mapped += m->len;
            /* for the probe below: the neighbour reads this word, which
             * holds its own address here */
            px_cshm_flags_t *f = (px_cshm_flags_t *)m->base + m->me;
            f->addr = (uint64_t)(uintptr_t)&f->addr;
        }
    }
    if (fd >= 0)
        close(fd);
    /* 2: usable with a ring (m->ring): writers that need not wait for the
     * others place their data where they can run ahead, which off counts
     * in places of 16 bits */
    ok = ok ? 1 + (2 * m->slot / PX_CSHM_PLACE < PX_CSHM_OFF_INLINE) : 0;
    int all = 0;
    if (rc == MPI_SUCCESS)
        rc = px_mpi_coll_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c);
    m->ring = all == 2;
    if (rc == MPI_SUCCESS && all) {
        /* may this rank read its neighbour's memory? (each rank probes one
         * neighbour: permission is per user and machine, not per pair) */
        int next = (m->me + 1) % n;
        px_cshm_flags_t *f = (px_cshm_flags_t *)m->base + next;
        uint64_t v = 0;
        int dok =
            px_proto_peer_read(px_mpi_comm_world_rank(c, next), &v, f->addr, sizeof(v)) == PX_OK &&
            v == f->addr;
        if (!dok)
            px_info("coll",
                    "cannot read rank %d's memory; shm collectives copy through the "
                    "slots",
                    next);
        rc = px_mpi_coll_allreduce(&dok, &m->direct, 1, MPI_INT, MPI_MIN, c);
    }
    if (created)
        shm_unlink(name); /* every rank has mapped it or given up */
    if (rc != MPI_SUCCESS || !all) {
        if (m->base) {
            munmap(m->base, m->len);
            px_cshm_mapped -= m->len;
        }
        m->base = NULL;
        m->state = -1;
    } else {
        m->flags = m->base;
        m->ann = (px_cshm_ann_t *)(m->flags + n);
        m->data = (char *)(m->ann + (size_t)n * PX_CSHM_AHEAD);
        m->lflags = (px_cshm_flags_t *)(m->data + (size_t)n * 2 * m->slot);
        m->ldata = (char *)(m->lflags + (size_t)PX_CSHM_LANES * (size_t)n);
        m->state = 1;
    }
    c->cshm = m;
    return m->state == 1;
}

/* Gives c a segment (collective over c): a kept one when every rank keeps
 * the one rank 0 names, else a new one. 1 if every rank can use it. */
static int px_cshm_setup(px_mpi_comm_t *c)
{
    uint64_t id = c->rank == 0 ? px_cshm_kept_find(c, 0, 0) : 0;
    if (px_mpi_coll_bcast(&id, 1, MPI_UINT64_T, 0, c) != MPI_SUCCESS) {
        c->cshm = &px_cshm_none;
        return 0;
    }
    if (id) {
        int have = px_cshm_kept_find(c, id, 0) != 0, all = 0;
        if (px_mpi_coll_allreduce(&have, &all, 1, MPI_INT, MPI_MIN, c) != MPI_SUCCESS) {
            c->cshm = &px_cshm_none;
            return 0;
        }
        if (all) {
            px_cshm_kept_find(c, id, 1);
            return 1;
        }
    }
    return px_cshm_create(c);
}

int px_cshm_blocks_fit(const px_coll_args_t *a, int n, size_t slot)
{
    size_t size = (size_t)px_mpi_dt_get(a->rtype)->size;
    for (int r = 0; r < n; r++)
        if ((size_t)a->rcounts[r] * size > slot)
            return 0;
    return 1;
}

int px_coll_shm_usable(px_coll_id_t id, int direct, const px_coll_args_t *a, px_mpi_comm_t *c)
{
    size_t slot = px_cshm_slot_size();
    if (!slot || c->is_inter || c->size < 2 || c->size > PX_CSHM_MAX_RANKS ||
        c->local_size != c->size)
        return 0;
    if (direct && id != PX_COLL_BCAST && id != PX_COLL_ALLGATHER && id != PX_COLL_ALLTOALL)
        return 0;
    int fits = 1;
    switch (id) {
    case PX_COLL_BARRIER:
        break;
    case PX_COLL_ALLTOALL:
    case PX_COLL_SCATTER:
        fits = a->bytes <= slot / (size_t)c->size;
        break;
    case PX_COLL_ALLGATHERV: /* every rank knows every block's size */
        fits = px_cshm_blocks_fit(a, c->size, slot);
        break;
    case PX_COLL_ALLTOALLV: /* in place (at every rank): each block is read before it is written */
        fits = a->sbuf != MPI_IN_PLACE;
        break;
    case PX_COLL_ALLREDUCE: /* larger vectors go chunk by chunk */
        fits = (size_t)px_mpi_dt_get(a->dt)->size <= slot;
        break;
    default:
        fits = a->bytes <= slot;
        break;
    }
    if (!fits && !direct)
        return 0;
    /* the same on every rank up to here: set up (a collective) on first use */
    if (!c->cshm && !px_cshm_setup(c))
        return 0;
    return c->cshm->state == 1 && (direct ? c->cshm->direct : 1);
}

/* Waits until word `which` (0 seq, 1 ack, 2 red) of rank `who` (or of every rank
 * when who < 0) reaches val, progressing the engine meanwhile; gives up when
 * the rank waited for (or `from`, when not negative: the one that stores
 * the word) has failed. */
int px_cshm_wait_from(struct px_coll_shm *m, int which, int who, uint64_t val, int from)
{
    int r = who < 0 ? 0 : who, end = who < 0 ? m->n : who + 1;
    unsigned idle = 0;
    for (;;) {
        for (; r < end; r++) {
            if (who < 0 && r == m->me) /* its own words are in place (or not used) */
                continue;
            if (atomic_load_explicit(px_cshm_word(m, r, which, val), memory_order_acquire) < val)
                break;
            if (which == 0 && m->ring) /* from the line just read */
                m->seen[r] = px_cshm_ann(m, r, val)->off;
        }
        if (r == end)
            return MPI_SUCCESS;
        if (px_proto_peer_failed(m->world[from < 0 ? r : from]))
            return MPI_ERR_OTHER;
        px_proto_wait_step_shared(&idle);
    }
}

int px_cshm_wait(struct px_coll_shm *m, int which, int who, uint64_t val)
{
    return px_cshm_wait_from(m, which, who, val, -1);
}

/* Members that sleep in the kernel (PX_PROGRESS_MODE=sleep or block) see
 * a store only once woken. */
void px_cshm_wake_all(const struct px_coll_shm *m)
{
    for (int r = 0; r < m->n; r++)
        if (r != m->me)
            px_proto_peer_wake(m->world[r]);
}

/* count items of dt at buf <-> contiguous bytes at p */
void px_cshm_pack(const void *buf, MPI_Aint count, MPI_Datatype dt, void *p)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    if (d->contig)
        memcpy(p, (const char *)buf + d->true_lb, (size_t)count * (size_t)d->size);
    else if (count)
        d->pack(d, count, buf, p);
}

void px_cshm_unpack(const void *p, MPI_Aint count, MPI_Datatype dt, void *buf)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    if (d->contig)
        memcpy((char *)buf + d->true_lb, p, (size_t)count * (size_t)d->size);
    else if (count)
        d->unpack(d, count, p, buf);
}

/* Rank r's vector of operation k, to combine: the root of a reduce not in
 * place takes its own from its send buffer (it writes no slot). */
static const char *px_cshm_x(struct px_coll_shm *m, int r, uint64_t k, const px_coll_args_t *a)
{
    if (r == m->me && !px_cshm_writes(m->kid, a, r))
        return (const char *)a->sbuf + px_mpi_dt_get(a->dt)->true_lb;
    return px_cshm_slot(m, r, k);
}

/* x_0 op x_1 op ... op x_{n-1} of count items at byte offset at of every
 * slot into buf (contiguous datatype), in rank order. A commutative
 * operation is grouped as a binomial tree towards rank 0 combines it
 * (((x_0 op x_1) op (x_2 op x_3)) op ..., the grouping of the
 * message-based reduce and of recursive doubling on 2^k ranks, in Plexus
 * and in MPICH), so that moving ranks between shared memory and the network
 * does not change the last bits of a floating-point sum; pairwise sums
 * also lose less precision than a running one. Blocks of 2^j ranks are
 * kept on a stack whose bottom is buf. A non-commutative operation is
 * grouped from the right, x_0 op (x_1 op (...)), which keeps the order
 * without a copy (MPI's ops compute inout = in op inout). */
static void px_cshm_combine(struct px_coll_shm *m, uint64_t k, const px_coll_args_t *a, size_t at,
                            MPI_Aint count, char *buf)
{
    px_mpi_dt_t *d = px_mpi_dt_get(a->dt);
    size_t len = (size_t)count * (size_t)d->size;
    MPI_Aint lb = d->true_lb;
    int n = m->n;
    if (!a->commute || n < 3) {
        memcpy(buf + lb, px_cshm_x(m, n - 1, k, a) + at, len);
        for (int r = n - 2; r >= 0; r--)
            px_mpi_op_apply(a->op, px_cshm_x(m, r, k, a) + at - lb, buf, count, a->dt);
        return;
    }
    /* entry i: data at part[i] (a slot until something is combined into
     * it, then buf for i = 0 or scratch), covering ranks[i] ranks */
    const char *part[PX_CSHM_LEVELS];
    int ranks[PX_CSHM_LEVELS], top = 0;
    for (int r = 0; r < n; r++) {
        const char *cur = px_cshm_x(m, r, k, a) + at;
        int cur_ranks = 1;
        while (top > 0 && ranks[top - 1] == cur_ranks) {
            char *into = top == 1 ? buf + lb : px_cshm_scratch + (size_t)(top - 1) * len;
            if (part[top - 1] != into)
                memcpy(into, part[top - 1], len);
            px_mpi_op_apply(a->op, cur - lb, into - lb, count, a->dt);
            cur = into;
            cur_ranks *= 2;
            top--;
        }
        part[top] = cur;
        ranks[top++] = cur_ranks;
    }
    /* the blocks left, the smallest (highest ranks) first */
    const char *acc = part[top - 1];
    for (int i = top - 2; i >= 0; i--) {
        char *into = i == 0 ? buf + lb : px_cshm_scratch + (size_t)i * len;
        if (part[i] != into)
            memcpy(into, part[i], len);
        px_mpi_op_apply(a->op, acc - lb, into - lb, count, a->dt);
        acc = into;
    }
    if (acc != buf + lb)
        memcpy(buf + lb, acc, len);
}

/* Allreduce of vectors larger than a slot (or where every rank combining
 * the whole vector costs more than the extra wait): chunk by chunk, every
 * rank writes its chunk into its slot, combines its own n-th of the chunk
 * over all slots in rank order into its result and back into the same
 * place of its slot (which only it reads), publishes that with red = k and
 * copies the other ranks' n-ths out of their slots. Each chunk moves about
 * three times its size through memory per rank, against one message round
 * per halving and doubling step otherwise. */
static int px_cshm_allreduce_split(struct px_coll_shm *m, const px_coll_args_t *a)
{
    px_mpi_dt_t *d = px_mpi_dt_get(a->dt);
    size_t es = (size_t)d->size;
    size_t chunk = m->slot < PX_CSHM_SPLIT_CHUNK ? m->slot : PX_CSHM_SPLIT_CHUNK;
    MPI_Aint per = (MPI_Aint)(chunk >= es ? chunk / es : 1); /* usable: es <= slot */
    const char *sb = (const char *)a->sbuf + d->true_lb;
    char *rb = (char *)a->rbuf + d->true_lb;
    int me = m->me, n = m->n, rc = MPI_SUCCESS;
    m->kid = PX_COLL_ALLREDUCE;
    for (MPI_Aint off = 0; off < a->count && rc == MPI_SUCCESS; off += per) {
        MPI_Aint cnt = a->count - off < per ? a->count - off : per;
        uint64_t k = ++m->op;
        if ((rc = px_cshm_claim(m, k, (size_t)cnt * es, 0)) != MPI_SUCCESS)
            break;
        char *mine = px_cshm_slot(m, me, k);
        memcpy(mine, sb + (size_t)off * es, (size_t)cnt * es);
        if ((rc = px_cshm_announce(m, k)) != MPI_SUCCESS)
            break;
        MPI_Aint lo = cnt * me / n, hi = cnt * (me + 1) / n;
        if ((rc = px_cshm_wait(m, 0, -1, k)) != MPI_SUCCESS)
            break;
        if (hi > lo) {
            size_t at = (size_t)lo * es, len = (size_t)(hi - lo) * es;
            char *dst = rb + (size_t)off * es + at;
            px_cshm_combine(m, k, a, at, hi - lo, dst - d->true_lb);
            memcpy(mine + at, dst, len);
        }
        px_cshm_post(m, 2, k);
        if ((rc = px_cshm_wait(m, 2, -1, k)) != MPI_SUCCESS)
            break;
        for (int r = 0; r < n; r++) {
            MPI_Aint rlo = cnt * r / n, rhi = cnt * (r + 1) / n;
            if (r != me && rhi > rlo)
                memcpy(rb + (size_t)(off + rlo) * es, px_cshm_slot(m, r, k) + (size_t)rlo * es,
                       (size_t)(rhi - rlo) * es);
        }
        px_cshm_post(m, 1, k);
    }
    return rc;
}

/* Does this rank write a slot in operation id (its seq and the claim)? A
 * gather's root copies its own block straight into place, a reduce's
 * combines it from where it is (unless in place: the result goes there). */
int px_cshm_writes(px_coll_id_t id, const px_coll_args_t *a, int me)
{
    switch (id) {
    case PX_COLL_BARRIER:
        return 0;
    case PX_COLL_BCAST:
    case PX_COLL_SCATTER:
    case PX_COLL_SCATTERV:
        return me == a->root;
    case PX_COLL_GATHER:
    case PX_COLL_GATHERV:
        return me != a->root;
    case PX_COLL_REDUCE:
        return me != a->root || a->sbuf == a->rbuf;
    default:
        return 1;
    }
}

/* scount items of stype at sbuf into rcount of rtype at rbuf (the same
 * type signature, at most a slot's bytes): a gather root's own block. */
static void px_cshm_copy(const void *sbuf, MPI_Aint scount, MPI_Datatype stype, void *rbuf,
                         MPI_Aint rcount, MPI_Datatype rtype)
{
    px_mpi_dt_t *sd = px_mpi_dt_get(stype), *rd = px_mpi_dt_get(rtype);
    if (sd->contig && rd->contig) {
        memcpy((char *)rbuf + rd->true_lb, (const char *)sbuf + sd->true_lb,
               (size_t)scount * (size_t)sd->size);
        return;
    }
    px_cshm_pack(sbuf, scount, stype, px_cshm_scratch);
    px_cshm_unpack(px_cshm_scratch, rcount, rtype, rbuf);
}

/* A scatterv's blocks that go through the slots lie this many bytes apart
 * in the root's: the largest of them in whole 8 bytes (published with its
 * seq), so that small blocks take a small place; on a lane the n-ths of a
 * slot (px_cshm_vpart). */
static size_t px_cshm_vstride(const struct px_coll_shm *m, const px_coll_args_t *a)
{
    if (!m->ann)
        return px_cshm_vpart(m, PX_COLL_SCATTERV);
    size_t most = 0, size = (size_t)px_mpi_dt_get(a->stype)->size;
    for (int r = 0; r < m->n; r++)
        if (px_cshm_vfits(m, PX_COLL_SCATTERV, a->scounts[r], a->stype) &&
            (size_t)a->scounts[r] * size > most)
            most = (size_t)a->scounts[r] * size;
    return (most + 7) & ~(size_t)7;
}

/* The bytes px_cshm_write writes at most (it writes from the start). */
static size_t px_cshm_need(const struct px_coll_shm *m, px_coll_id_t id, const px_coll_args_t *a)
{
    switch (id) {
    case PX_COLL_SCATTER:
    case PX_COLL_ALLTOALL:
        return (size_t)m->n * a->bytes;
    case PX_COLL_ALLGATHERV:
        return (size_t)a->rcounts[m->me] * (size_t)px_mpi_dt_get(a->rtype)->size;
    case PX_COLL_GATHERV: /* its block, if it goes through the slots */
        return a->sbuf != MPI_IN_PLACE && px_cshm_vfits(m, id, a->scount, a->stype)
                   ? (size_t)a->scount * (size_t)px_mpi_dt_get(a->stype)->size
                   : 0;
    case PX_COLL_SCATTERV:
        return (size_t)m->n * px_cshm_vstride(m, a);
    case PX_COLL_ALLTOALLV:
        return (size_t)m->n * px_cshm_vpart(m, id);
    default: /* a broadcast's message, a reduction's vector, a gather's block */
        return a->bytes;
    }
}

/* This rank's contribution to operation k into its slot. */
void px_cshm_write(struct px_coll_shm *m, px_coll_id_t id, const px_coll_args_t *a, uint64_t k)
{
    char *mine = px_cshm_slot(m, m->me, k);
    switch (id) {
    case PX_COLL_BCAST:
        px_cshm_pack(a->rbuf, a->count, a->dt, mine);
        break;
    case PX_COLL_REDUCE:
    case PX_COLL_ALLREDUCE:
    case PX_COLL_REDUCE_SCATTER: /* the whole vector (sbuf: rbuf when in place) */
    case PX_COLL_REDUCE_SCATTER_BLOCK:
        memcpy(mine, (const char *)a->sbuf + px_mpi_dt_get(a->dt)->true_lb, a->bytes);
        break;
    case PX_COLL_ALLGATHER: {
        MPI_Aint rext = px_mpi_dt_get(a->rtype)->extent * a->rcount;
        if (a->sbuf == MPI_IN_PLACE)
            px_cshm_pack((char *)a->rbuf + m->me * rext, a->rcount, a->rtype, mine);
        else
            px_cshm_pack(a->sbuf, a->scount, a->stype, mine);
        break;
    }
    case PX_COLL_GATHER:
        px_cshm_pack(a->sbuf, a->scount, a->stype, mine);
        break;
    case PX_COLL_SCATTER: { /* the root's slot: the blocks for ranks 0..n-1 */
        MPI_Aint sext = px_mpi_dt_get(a->stype)->extent * a->scount;
        for (int r = 0; r < m->n; r++)
            px_cshm_pack((const char *)a->sbuf + r * sext, a->scount, a->stype,
                         mine + (size_t)r * a->bytes);
        break;
    }
    case PX_COLL_ALLGATHERV: {
        MPI_Aint rext = px_mpi_dt_get(a->rtype)->extent;
        if (a->sbuf == MPI_IN_PLACE)
            px_cshm_pack((char *)a->rbuf + a->rdispls[m->me] * rext, a->rcounts[m->me], a->rtype,
                         mine);
        else
            px_cshm_pack(a->sbuf, a->scount, a->stype, mine);
        break;
    }
    case PX_COLL_GATHERV: /* its block if it fits */
        if (px_cshm_vfits(m, id, a->scount, a->stype))
            px_cshm_pack(a->sbuf, a->scount, a->stype, mine);
        break;
    case PX_COLL_SCATTERV:    /* the blocks that fit, block r at r strides */
    case PX_COLL_ALLTOALLV: { /* block r at r n-ths of the slot */
        MPI_Aint sext = px_mpi_dt_get(a->stype)->extent;
        size_t part = id == PX_COLL_SCATTERV ? px_cshm_vstride(m, a) : px_cshm_vpart(m, id);
        if (id == PX_COLL_SCATTERV && m->ann)
            px_cshm_ann(m, m->me, k)->stride = (uint32_t)part;
        for (int r = 0; r < m->n; r++)
            if (px_cshm_vfits(m, id, a->scounts[r], a->stype))
                px_cshm_pack((const char *)a->sbuf + a->sdispls[r] * sext, a->scounts[r], a->stype,
                             mine + (size_t)r * part);
        break;
    }
    case PX_COLL_ALLTOALL: {
        /* slot of rank r: its blocks for ranks 0..n-1; IN_PLACE data is
         * copied out of rbuf before rbuf is written */
        const void *src = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
        MPI_Aint sext = px_mpi_dt_get(a->stype)->extent * a->scount;
        for (int r = 0; r < m->n; r++)
            px_cshm_pack((const char *)src + r * sext, a->scount, a->stype,
                         mine + (size_t)r * a->bytes);
        break;
    }
    default:
        break;
    }
}

/* The word this rank then waits for (0 seq, 1 ack) and whose (every
 * rank: -1); 0 when it waits for nothing. The barrier: rank 0 sees every
 * arrival, then releases the others with its ack: it leaves first, so an
 * operation it roots next (a broadcast) has its data out before the others
 * look for it. */
int px_cshm_waits(px_coll_id_t id, const px_coll_args_t *a, int me, int *which, int *who)
{
    *which = 0;
    *who = -1;
    switch (id) {
    case PX_COLL_BARRIER:
        if (me != 0)
            *which = 1, *who = 0;
        return 1;
    case PX_COLL_BCAST:
    case PX_COLL_SCATTER:
    case PX_COLL_SCATTERV:
        *who = a->root;
        return me != a->root;
    case PX_COLL_REDUCE:
    case PX_COLL_GATHER:
    case PX_COLL_GATHERV:
        return me == a->root;
    default:
        return 1;
    }
}

/* What this rank takes from the slots of operation k once written. */
void px_cshm_take(struct px_coll_shm *m, px_coll_id_t id, const px_coll_args_t *a, uint64_t k)
{
    int me = m->me, n = m->n;
    switch (id) {
    case PX_COLL_BCAST:
        if (me != a->root)
            px_cshm_unpack(px_cshm_slot(m, a->root, k), a->count, a->dt, a->rbuf);
        break;
    case PX_COLL_REDUCE:
    case PX_COLL_ALLREDUCE:
        if (id == PX_COLL_ALLREDUCE || me == a->root)
            px_cshm_combine(m, k, a, 0, a->count, a->rbuf);
        break;
    case PX_COLL_GATHERV:
        if (me == a->root) {
            MPI_Aint rext = px_mpi_dt_get(a->rtype)->extent;
            for (int r = 0; r < n; r++) {
                if (!px_cshm_vfits(m, id, a->rcounts[r], a->rtype))
                    continue;
                char *at = (char *)a->rbuf + a->rdispls[r] * rext;
                if (r != me)
                    px_cshm_unpack(px_cshm_slot(m, r, k), a->rcounts[r], a->rtype, at);
                else if (a->sbuf != MPI_IN_PLACE)
                    px_cshm_copy(a->sbuf, a->scount, a->stype, at, a->rcounts[r], a->rtype);
            }
        }
        break;
    case PX_COLL_SCATTERV:
        if ((me != a->root || a->rbuf != MPI_IN_PLACE) && px_cshm_vfits(m, id, a->rcount, a->rtype))
            px_cshm_unpack(px_cshm_slot(m, a->root, k) +
                               (size_t)me * (m->ann ? px_cshm_ann(m, a->root, k)->stride
                                                    : px_cshm_vpart(m, id)),
                           a->rcount, a->rtype, a->rbuf);
        break;
    case PX_COLL_ALLTOALLV: {
        MPI_Aint rext = px_mpi_dt_get(a->rtype)->extent;
        for (int r = 0; r < n; r++)
            if (px_cshm_vfits(m, id, a->rcounts[r], a->rtype))
                px_cshm_unpack(px_cshm_slot(m, r, k) + (size_t)me * px_cshm_vpart(m, id),
                               a->rcounts[r], a->rtype, (char *)a->rbuf + a->rdispls[r] * rext);
        break;
    }
    case PX_COLL_REDUCE_SCATTER: /* this rank's part, combined over every slot */
    case PX_COLL_REDUCE_SCATTER_BLOCK: {
        size_t at = 0;
        for (int r = 0; r < me; r++)
            at += (size_t)a->rcounts[r];
        if (a->rcounts[me])
            px_cshm_combine(m, k, a, at * (size_t)px_mpi_dt_get(a->dt)->size, a->rcounts[me],
                            a->rbuf);
        break;
    }
    case PX_COLL_ALLGATHER: {
        MPI_Aint rext = px_mpi_dt_get(a->rtype)->extent * a->rcount;
        for (int r = 0; r < n; r++)
            if (r != me || a->sbuf != MPI_IN_PLACE)
                px_cshm_unpack(px_cshm_slot(m, r, k), a->rcount, a->rtype,
                               (char *)a->rbuf + r * rext);
        break;
    }
    case PX_COLL_ALLTOALL: {
        MPI_Aint rext = px_mpi_dt_get(a->rtype)->extent * a->rcount;
        for (int r = 0; r < n; r++)
            px_cshm_unpack(px_cshm_slot(m, r, k) + (size_t)me * a->bytes, a->rcount, a->rtype,
                           (char *)a->rbuf + r * rext);
        break;
    }
    case PX_COLL_GATHER: {
        MPI_Aint rext = px_mpi_dt_get(a->rtype)->extent * a->rcount;
        for (int r = 0; r < n && me == a->root; r++) {
            if (r != me)
                px_cshm_unpack(px_cshm_slot(m, r, k), a->rcount, a->rtype,
                               (char *)a->rbuf + r * rext);
            else if (a->sbuf != MPI_IN_PLACE)
                px_cshm_copy(a->sbuf, a->scount, a->stype, (char *)a->rbuf + r * rext, a->rcount,
                             a->rtype);
        }
        break;
    }
    case PX_COLL_SCATTER:
        if (me != a->root || a->rbuf != MPI_IN_PLACE)
            px_cshm_unpack(px_cshm_slot(m, a->root, k) + (size_t)me * a->bytes, a->rcount, a->rtype,
                           a->rbuf);
        break;
    case PX_COLL_ALLGATHERV: {
        MPI_Aint rext = px_mpi_dt_get(a->rtype)->extent;
        for (int r = 0; r < n; r++)
            if (r != me || a->sbuf != MPI_IN_PLACE)
                px_cshm_unpack(px_cshm_slot(m, r, k), a->rcounts[r], a->rtype,
                               (char *)a->rbuf + a->rdispls[r] * rext);
        break;
    }
    default:
        break;
    }
}

int px_coll_shm_run(px_coll_id_t id, int direct, const px_coll_args_t *a, px_mpi_comm_t *c)
{
    struct px_coll_shm *m = c->cshm;
    if (direct)
        return px_cshm_direct(m, id, a);
    if (id == PX_COLL_ALLREDUCE && (a->bytes >= PX_CSHM_SPLIT_MIN || a->bytes > m->slot)) {
        px_trace("coll", "%s: shm (ranks %d, bytes %zu), combining split", px_coll_name(id),
                 c->size, a->bytes);
        return px_cshm_allreduce_split(m, a);
    }
    if (id == PX_COLL_ALLTOALLW)
        return MPI_ERR_INTERN;
    /* the v-variants' blocks that do not fit their part of a slot go as
     * messages, posted first, on a collective tag */
    px_mpi_req_t *reqs[2 * PX_CSHM_MAX_RANKS];
    int nreqs = 0, rc = MPI_SUCCESS, which, who;
    int nv = id == PX_COLL_GATHERV || id == PX_COLL_SCATTERV || id == PX_COLL_ALLTOALLV;
    if (nv)
        rc = px_cshm_vmsgs(m, id, a, c, px_mpi_coll_tag_take(c), reqs, &nreqs);
    uint64_t k = ++m->op;
    px_trace("coll", "%s: shm (ranks %d, bytes %zu)", px_coll_name(id), c->size, a->bytes);
    m->kid = id;
    m->kroot = a->root;
    int writes = px_cshm_writes(id, a, m->me);
    int crc = writes
                  ? px_cshm_claim(m, k, px_cshm_need(m, id, a), px_cshm_ahead(id, a->root, m->me))
                  : MPI_SUCCESS;
    if (crc != MPI_SUCCESS) {
        px_cshm_vmsgs_wait(reqs, &nreqs);
        return crc;
    }
    if (writes)
        px_cshm_write(m, id, a, k);
    int wrc = writes || id == PX_COLL_BARRIER ? px_cshm_announce(m, k) : MPI_SUCCESS;
    if (wrc == MPI_SUCCESS && nv)
        wrc = px_cshm_vwait(m, id, a, k);
    else if (wrc == MPI_SUCCESS && px_cshm_waits(id, a, m->me, &which, &who))
        wrc = px_cshm_wait(m, which, who, k);
    if (wrc == MPI_SUCCESS)
        px_cshm_take(m, id, a, k);
    int mrc = px_cshm_vmsgs_wait(reqs, &nreqs);
    rc = rc != MPI_SUCCESS ? rc : wrc != MPI_SUCCESS ? wrc : mrc;
    if (rc == MPI_SUCCESS && id == PX_COLL_BARRIER)
        px_cshm_lanes_recycle(m, k);
    px_cshm_post(m, 1, k);
    return rc;
}
