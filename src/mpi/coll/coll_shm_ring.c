/* Where the writers of a communicator's shared-memory segment put their
 * data and announce it (coll_shm_impl.h): the places of a ring that a
 * writer ahead takes in turn, the slots k % 2 of the others, and the
 * announcement lines, each written again only once every rank has
 * finished what was there. */
#include "coll_shm_impl.h"

#include <stdint.h>

/* Does this rank's operation in held[j], if after `acked` (which every
 * rank has finished), still hold data in [at, at + len)? */
static int px_cshm_holds(const struct px_coll_shm *m, int j, uint64_t acked, size_t at, size_t len)
{
    return m->held[j].k > acked && m->held[j].at < at + len && at < m->held[j].end;
}

/* The newest operation that holds [at, at + len) of this rank's ring, or 0. */
static uint64_t px_cshm_overlap(const struct px_coll_shm *m, uint64_t acked, size_t at, size_t len)
{
    uint64_t newest = 0;
    for (int j = 0; j < PX_CSHM_AHEAD; j++)
        if (px_cshm_holds(m, j, acked, at, len) && m->held[j].k > newest)
            newest = m->held[j].k;
    return newest;
}

/* The place of len bytes in this rank's ring just after the last one it
 * took there (at the start when that does not fit before the end), if no
 * operation holds any of it, else SIZE_MAX: the places go round the ring
 * as the operations finish, in order. */
static size_t px_cshm_fit(const struct px_coll_shm *m, uint64_t acked, size_t len)
{
    size_t at = m->rnext + len <= 2 * m->slot ? m->rnext : 0;
    for (int j = 0; j < PX_CSHM_AHEAD; j++)
        if (px_cshm_holds(m, j, acked, at, len))
            return SIZE_MAX;
    return at;
}

/* The operations every rank has finished: the least of their acks, read
 * now (m->acked keeps it for the next claims). */
static uint64_t px_cshm_acked(struct px_coll_shm *m)
{
    uint64_t acked = UINT64_MAX;
    for (int r = 0; r < m->n; r++) {
        uint64_t a = atomic_load_explicit(&m->flags[r].ack, memory_order_acquire);
        acked = a < acked ? a : acked;
    }
    return m->acked = acked;
}

/* Before writing `bytes` for operation k. With a ring: a writer that goes
 * on without waiting for the others (`ahead`: a gather's sender, a
 * scatter's root) takes its announcement's line for up to PX_CSHM_INLINE
 * bytes, else the place after the last one it took (px_cshm_fit), once
 * the operations every rank had finished, when it last looked, leave it
 * free; one that waits for the others' data anyway takes the start of
 * slot k % 2, as without a ring, once the operations there are finished.
 * Either also waits for operation k - PX_CSHM_AHEAD, whose place in held[]
 * k takes, and for the one announced last in line k % PX_CSHM_AHEAD. What
 * the others have finished is read again only when what was last read
 * leaves no room: the others' ack lines stay where they are while the
 * writer runs ahead. Without: slot k % 2, once every rank has finished
 * k - 2. */
int px_cshm_claim(struct px_coll_shm *m, uint64_t k, size_t bytes, int ahead)
{
    if (!m->ring) {
        if (k <= 2 || m->acked >= k - 2)
            return MPI_SUCCESS;
        int rc = px_cshm_wait(m, 1, -1, k - 2);
        px_cshm_acked(m); /* the lines just read */
        return rc;
    }
    size_t len =
        bytes ? (bytes + PX_CSHM_PLACE - 1) / PX_CSHM_PLACE * PX_CSHM_PLACE : PX_CSHM_PLACE;
    size_t at = (k & 1) * m->slot;
    int w = k % PX_CSHM_AHEAD;
    int inl = ahead && bytes <= PX_CSHM_INLINE; /* in its announcement's line */
    uint64_t acked = m->acked;
    for (;;) {
        /* the operations last in held[w] and announced in line w, then
         * those that hold the place it takes */
        uint64_t wait = m->held[w].k > m->posted[w] ? m->held[w].k : m->posted[w];
        if (wait > acked) {
            /* wait for it */
        } else if (inl) {
            wait = 0;
        } else if (!ahead) {
            wait = px_cshm_overlap(m, acked, at, len);
        } else if ((at = px_cshm_fit(m, acked, len)) == SIZE_MAX) { /* the oldest still read */
            wait = 0;
            for (int j = 0; j < PX_CSHM_AHEAD; j++)
                if (m->held[j].k > acked && (!wait || m->held[j].k < wait))
                    wait = m->held[j].k;
        } else {
            wait = 0;
        }
        if (!wait)
            break;
        /* a writer ahead that finds no room waits until the others are
         * half its calls closer (up to its last call, which it has
         * posted), rather than reading their ack lines again at every call
         * while they write them */
        if (ahead)
            wait = wait + PX_CSHM_AHEAD / 2 < k ? wait + PX_CSHM_AHEAD / 2 : k - 1;
        if ((acked = px_cshm_acked(m)) < wait) {
            int rc = px_cshm_wait(m, 1, -1, wait);
            if (rc != MPI_SUCCESS)
                return rc;
            acked = px_cshm_acked(m);
        }
    }
    m->held[w].k = k;
    m->held[w].at = inl ? 0 : at;
    m->held[w].end = inl ? 0 : at + len;
    if (ahead && !inl)
        m->rnext = at + len;
    return MPI_SUCCESS;
}

int px_cshm_announce(struct px_coll_shm *m, uint64_t k)
{
    int w = k % PX_CSHM_AHEAD;
    uint64_t before = m->posted[w];
    if (before > m->acked && px_cshm_acked(m) < before) {
        int rc = px_cshm_wait(m, 1, -1, before);
        px_cshm_acked(m);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    m->posted[w] = k;
    px_cshm_ann_t *mine = px_cshm_ann(m, m->me, k);
    mine->lfreed = m->lane_freed;
    if (m->ring && m->held[w].k == k && px_cshm_ahead(m->kid, m->kroot, m->me))
        mine->off = m->held[w].end ? (uint16_t)(m->held[w].at / PX_CSHM_PLACE) : PX_CSHM_OFF_INLINE;
    atomic_store_explicit(&mine->seq, k, memory_order_release);
    if (__builtin_expect(m->wake, 0))
        px_cshm_wake_all(m);
    return MPI_SUCCESS;
}
