/* Shared-memory collectives that read the others' buffers ('cma'), for
 * communicators whose segment (coll_shm.c) says every rank may read its
 * neighbour's memory.
 *
 * The 'cma' broadcast, allgather and alltoall do not go through the
 * slots: each rank that provides data stores where it lies in its own
 * address space (`addr`) before its seq, and the others copy it straight
 * into their buffers with process_vm_readv; every rank then stores
 * ack = k, and the ranks whose data was read wait until all have, so that
 * their buffers may change again. One copy instead of two, and no size
 * bound. Simultaneous reads of the same pages slow each other down in the
 * kernel, even when they start at different pages (bench/loops/cma_readers;
 * docs/collectives.md), so a broadcast root with two or three readers, idle
 * otherwise, writes one reader's copy itself (process_vm_writev): that
 * reader stores its buffer's address before its seq and waits for the
 * root to store its `red` = k. The segment's setup checks that each rank
 * may read its neighbour's memory and agrees on it like on the segment
 * itself. */
#include "coll_shm_impl.h"
#include "../../util/scratch.h"

/* A direct broadcast's root writes one reader's copy itself in
 * communicators of 3 up to this many ranks: with more, one copy fewer read
 * no longer shows, and with 2 the one reader gains nothing */
#define PX_CSHM_PUSH_MAX_RANKS 4

/* Stands for "no data" where a direct operation's address goes. */
#define PX_CSHM_NO_DATA UINT64_MAX

/* len bytes at raddr in rank r's address space into local. */
static int px_cshm_read(struct px_coll_shm *m, int r, void *local, uint64_t raddr, size_t len)
{
    px_status_t st = px_proto_peer_read(m->world[r], local, raddr, len);
    if (st == PX_OK)
        return MPI_SUCCESS;
    px_error("coll", "reading %zu bytes of rank %d's memory: %s", len, m->world[r],
             px_status_string(st));
    return MPI_ERR_OTHER;
}

/* Broadcast root: len bytes at local into rank r's buffer, which r has
 * published for operation k (PX_CSHM_NO_DATA: r has none), then r's red =
 * k; r's address becomes PX_CSHM_NO_DATA when it did not get the data. */
static int px_cshm_push(struct px_coll_shm *m, int r, uint64_t k, const void *local, size_t len,
                        int have)
{
    int rc = px_cshm_wait(m, 0, r, k);
    if (rc != MPI_SUCCESS)
        return rc; /* r has failed: nobody waits for its red */
    px_cshm_flags_t *f = &m->flags[r];
    if (have && f->addr != PX_CSHM_NO_DATA) {
        px_status_t st = px_proto_peer_write(m->world[r], local, f->addr, len);
        if (st != PX_OK) {
            px_error("coll", "writing %zu bytes into rank %d's memory: %s", len, m->world[r],
                     px_status_string(st));
            rc = MPI_ERR_OTHER;
        }
    }
    if (!have || rc != MPI_SUCCESS)
        f->addr = PX_CSHM_NO_DATA;
    atomic_store_explicit(&f->red, k, memory_order_release);
    if (m->wake)
        px_proto_peer_wake(m->world[r]);
    return rc;
}

/* count items of dt from rank r's packed or contiguous data at raddr into
 * buf (through tmp, of count items' size, when dt is not contiguous). */
static int px_cshm_read_into(struct px_coll_shm *m, int r, uint64_t raddr, void *buf,
                             MPI_Aint count, MPI_Datatype dt, void *tmp)
{
    px_mpi_dt_t *d = px_mpi_dt_get(dt);
    size_t len = (size_t)count * (size_t)d->size;
    if (!len)
        return MPI_SUCCESS;
    if (d->contig)
        return px_cshm_read(m, r, (char *)buf + d->true_lb, raddr, len);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    int rc = px_cshm_read(m, r, tmp, raddr, len);
    if (rc == MPI_SUCCESS)
        px_cshm_unpack(tmp, count, dt, buf);
    return rc;
}

/* Broadcast, allgather or alltoall reading the others' buffers (see the
 * top of the file). What a rank provides is its buffer itself when the
 * datatype is contiguous, else (and for in-place alltoall, whose buffer
 * is overwritten while the others read it) a packed copy. A rank that
 * lacks memory for a copy still takes part (PX_CSHM_NO_DATA tells the
 * others), so that all return with an error rather than some waiting
 * forever. */
int px_cshm_direct(struct px_coll_shm *m, px_coll_id_t id, const px_coll_args_t *a)
{
    uint64_t k = ++m->op;
    int me = m->me, n = m->n, rc = MPI_SUCCESS;
    px_trace("coll", "%s: cma (ranks %d, bytes %zu)", px_coll_name(id), n, a->bytes);
    const void *src = NULL; /* what this rank provides, its count, type, blocks */
    MPI_Aint scount = 0;
    MPI_Datatype stype = MPI_DATATYPE_NULL;
    int blocks = 1, gives = 1;
    MPI_Aint rext = 0;
    switch (id) {
    case PX_COLL_BCAST:
        gives = me == a->root;
        src = a->rbuf, scount = a->count, stype = a->dt;
        break;
    case PX_COLL_ALLGATHER:
        rext = px_mpi_dt_get(a->rtype)->extent * a->rcount;
        if (a->sbuf == MPI_IN_PLACE)
            src = (char *)a->rbuf + me * rext, scount = a->rcount, stype = a->rtype;
        else
            src = a->sbuf, scount = a->scount, stype = a->stype;
        break;
    default: /* PX_COLL_ALLTOALL */
        rext = px_mpi_dt_get(a->rtype)->extent * a->rcount;
        src = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf, scount = a->scount, stype = a->stype;
        blocks = n;
        break;
    }
    void *copy = NULL; /* packed data this rank provides, if not its buffer */
    uint64_t addr = PX_CSHM_NO_DATA;
    if (gives) {
        px_mpi_dt_t *d = px_mpi_dt_get(stype);
        int as_is = d->contig && (blocks == 1 || d->extent == d->size) &&
                    !(id == PX_COLL_ALLTOALL && a->sbuf == MPI_IN_PLACE);
        if (as_is) {
            addr = (uint64_t)(uintptr_t)((const char *)src + d->true_lb);
        } else if ((copy = px_scratch_get(a->bytes * (size_t)blocks + 1)) != NULL) {
            MPI_Aint sext = d->extent * scount;
            for (int b = 0; b < blocks; b++)
                px_cshm_pack((const char *)src + b * sext, scount, stype,
                             (char *)copy + (size_t)b * a->bytes);
            addr = (uint64_t)(uintptr_t)copy;
        } else {
            rc = MPI_ERR_NO_MEM;
        }
        m->flags[me].addr = addr;
        int w = px_cshm_announce(m, k);
        if (rc == MPI_SUCCESS)
            rc = w;
    }
    /* receive types that are not contiguous go through one block's copy */
    MPI_Datatype rtype = id == PX_COLL_BCAST ? a->dt : a->rtype;
    void *tmp = NULL;
    if (!px_mpi_dt_get(rtype)->contig && (id != PX_COLL_BCAST || !gives) &&
        !(tmp = px_scratch_get(a->bytes ? a->bytes : 1)))
        rc = MPI_ERR_NO_MEM;
    if (id == PX_COLL_BCAST) {
        /* the reader whose copy the root writes (see the top), if any */
        int rel = (me - a->root + n) % n, pushed = -1;
        if (n >= 3 && n <= PX_CSHM_PUSH_MAX_RANKS)
            pushed = n / 2;
        int contig = px_mpi_dt_get(a->dt)->contig;
        if (gives && pushed > 0) {
            int w = px_cshm_push(m, (a->root + pushed) % n, k, (const void *)(uintptr_t)addr,
                                 a->bytes, addr != PX_CSHM_NO_DATA);
            if (rc == MPI_SUCCESS)
                rc = w;
        } else if (rel == pushed) {
            char *dst = contig ? (char *)a->rbuf + px_mpi_dt_get(a->dt)->true_lb : tmp;
            m->flags[me].addr = rc == MPI_SUCCESS ? (uint64_t)(uintptr_t)dst : PX_CSHM_NO_DATA;
            int w = px_cshm_announce(m, k);
            if (w == MPI_SUCCESS)
                w = px_cshm_wait_from(m, 2, me, k, a->root);
            if (w != MPI_SUCCESS || m->flags[me].addr == PX_CSHM_NO_DATA)
                rc = rc != MPI_SUCCESS ? rc : w != MPI_SUCCESS ? w : MPI_ERR_OTHER;
            else if (!contig)
                px_cshm_unpack(tmp, a->count, a->dt, a->rbuf);
        } else if (!gives) {
            int w = px_cshm_wait(m, 0, a->root, k);
            uint64_t ra = m->flags[a->root].addr;
            if (w != MPI_SUCCESS || ra == PX_CSHM_NO_DATA)
                rc = w != MPI_SUCCESS ? w : MPI_ERR_OTHER;
            else if (rc == MPI_SUCCESS && contig) {
                /* the j-th of the readers that read starts at the j-th
                 * part of the root's pages and wraps round, so that
                 * readers that start together do not all begin with the
                 * same pages */
                char *dst = (char *)a->rbuf + px_mpi_dt_get(a->dt)->true_lb;
                int readers = n - 1 - (pushed > 0);
                size_t j = (size_t)(rel - 1 - (pushed > 0 && rel > pushed));
                size_t at = (a->bytes / (size_t)readers * j) & ~(size_t)4095;
                rc = px_cshm_read(m, a->root, dst + at, ra + at, a->bytes - at);
                if (rc == MPI_SUCCESS && at)
                    rc = px_cshm_read(m, a->root, dst, ra, at);
            } else if (rc == MPI_SUCCESS) {
                rc = px_cshm_read_into(m, a->root, ra, a->rbuf, a->count, a->dt, tmp);
            }
        }
    } else {
        /* own block first, then the others starting after this rank, so
         * that the ranks do not all read the same one at once; each as
         * soon as its owner has posted it (with up to 64 ranks: beyond,
         * once all have), so that a rank waiting for one that the
         * scheduler has not run yet reads the others meanwhile */
        if (rc == MPI_SUCCESS && !(id == PX_COLL_ALLGATHER && a->sbuf == MPI_IN_PLACE))
            px_cshm_unpack((const char *)(uintptr_t)addr + (size_t)(blocks > 1 ? me : 0) * a->bytes,
                           a->rcount, a->rtype, (char *)a->rbuf + me * rext);
        uint64_t left = n <= 64 ? ~(uint64_t)0 >> (64 - n) & ~((uint64_t)1 << me) : 0;
        unsigned idle = 0;
        if (!left && n > 1) {
            int w = px_cshm_wait(m, 0, -1, k);
            if (w != MPI_SUCCESS)
                rc = w;
        }
        for (int round = 0; rc == MPI_SUCCESS; round++) {
            int got = 0, late = -1;
            for (int i = 1; i < n && rc == MPI_SUCCESS; i++) {
                int r = (me + i) % n;
                if (left) {
                    if (!(left >> r & 1))
                        continue;
                    if (atomic_load_explicit(px_cshm_word(m, r, 0, k), memory_order_acquire) < k) {
                        late = r;
                        continue;
                    }
                    left &= ~((uint64_t)1 << r);
                } else if (round) {
                    break;
                }
                got = 1;
                uint64_t ra = m->flags[r].addr;
                if (ra == PX_CSHM_NO_DATA)
                    rc = MPI_ERR_OTHER;
                else
                    rc = px_cshm_read_into(m, r, ra + (size_t)(blocks > 1 ? me : 0) * a->bytes,
                                           (char *)a->rbuf + r * rext, a->rcount, a->rtype, tmp);
            }
            if (late < 0)
                break;
            if (!got) {
                if (px_proto_peer_failed(m->world[late])) {
                    rc = MPI_ERR_OTHER;
                    break;
                }
                px_proto_wait_step_shared(&idle);
            }
        }
    }
    px_cshm_post(m, 1, k);
    /* the others may be reading this rank's data until they say otherwise */
    if (gives) {
        int w = px_cshm_wait(m, 1, -1, k);
        if (rc == MPI_SUCCESS)
            rc = w;
    }
    px_scratch_put(copy);
    px_scratch_put(tmp);
    return rc;
}
