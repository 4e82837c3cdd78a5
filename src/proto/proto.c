/* The protocol layer's requests, its send and receive calls, progress and
 * waiting, set-up, state dump and counters; the protocols themselves are
 * in proto_am.c. */
#include "proto_impl.h"
#include "../boot/machine.h"
#include "../util/clock.h"
#include "../util/copy.h"
#include "../util/cs.h"
#include "../util/log.h"
#include "../util/param.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct px_proto_state px_p;

/* ---------- request identifiers (validated on arrival) ---------- */

uint64_t px_proto_id_get(px_proto_req_t *req)
{
    uint32_t i = px_p.free_id;
    if (i == PX_ID_NONE) {
        uint32_t n = px_p.nids ? px_p.nids * 2 : 256;
        px_proto_req_t **ids = realloc(px_p.ids, sizeof(*ids) * n);
        uint32_t *gens = ids ? realloc(px_p.gens, sizeof(*gens) * n) : NULL;
        if (ids)
            px_p.ids = ids;
        if (!gens)
            return 0;
        px_p.gens = gens;
        for (uint32_t k = px_p.nids; k < n; k++) {
            px_p.ids[k] = (px_proto_req_t *)(uintptr_t)(k + 1 < n ? k + 1 : PX_ID_NONE);
            px_p.gens[k] = 1;
        }
        i = px_p.nids;
        px_p.nids = n;
    }
    px_p.free_id = (uint32_t)(uintptr_t)px_p.ids[i];
    px_p.ids[i] = req;
    req->id = ((uint64_t)px_p.gens[i] << 32) | i;
    return req->id;
}

void px_proto_id_put(px_proto_req_t *req)
{
    if (!req->id)
        return;
    uint32_t i = (uint32_t)req->id;
    px_p.gens[i]++;
    px_p.ids[i] = (px_proto_req_t *)(uintptr_t)px_p.free_id;
    px_p.free_id = i;
    req->id = 0;
}

px_proto_req_t *px_proto_id_lookup(uint64_t id)
{
    uint32_t i = (uint32_t)id;
    if (i >= px_p.nids || px_p.gens[i] != (uint32_t)(id >> 32))
        return NULL;
    return px_p.ids[i];
}

/* Another thread of the process may wait for what this one completed:
 * asleep until a completion (px_cs_wait_others), or asleep in the kernel
 * for the process, where only arrivals would wake it (once a sleep). Both
 * flags change under the library's lock, which the caller holds. */
static inline void px_proto_wake_(void)
{
    px_cs_wake();
    if (__builtin_expect(px_p.sleeper && !px_p.kicked, 0)) {
        px_p.kicked = 1;
        px_chan_sleep_kick();
    }
}

void px_proto_wake(void) { px_proto_wake_(); }

void px_proto_complete(px_proto_req_t *req)
{
    if (req->ring)
        px_proto_ring_end(req);
    px_proto_id_put(req);
    req->done = 1;
    if (req->cb)
        req->cb(req);
    px_proto_wake_();
}

void px_proto_send_cb(void *arg, px_status_t st)
{
    px_proto_req_t *req = arg;
    if (st != PX_OK)
        req->st_error = st;
    if (--req->pending == 0)
        px_proto_complete(req);
}

void px_proto_ctrl(int peer, uint8_t am, uint64_t a, uint64_t b, uint64_t c)
{
    px_am_hdr_t h = {.am = am, .a = a, .b = b, .c = c};
    px_status_t st = px_chan_send(peer, NULL, &h, px_am_hdr_len[am], NULL, 0, 0, NULL, NULL);
    if (st < 0)
        px_error("proto", "cannot send control message %u to rank %d: %s", am, peer,
                 px_status_string(st));
}

/* ---------- send / receive ---------- */

px_status_t px_proto_isend(px_proto_req_t *req, int peer, uint32_t ctx, int my_rank, int tag,
                           const void *buf, size_t len, px_proto_mode_t mode)
{
    return px_proto_isend_fill(req, peer, ctx, my_rank, tag, (void *)buf, len, mode, NULL, 0);
}

px_status_t px_proto_isend_fill(px_proto_req_t *req, int peer, uint32_t ctx, int my_rank, int tag,
                                void *buf, size_t len, px_proto_mode_t mode, px_proto_fill_fn fill,
                                size_t ring)
{
    px_proto_peer_t *p = &px_p.peers[peer];
    px_status_t st;

    req->kind = PX_PROTO_REQ_SEND;
    int coll = (mode & PX_PROTO_MODE_COLL) != 0;
    req->rflags =
        (uint8_t)(((mode & (PX_PROTO_MODE_BLOCKING | PX_PROTO_MODE_COLL)) ? PX_CHAN_F_WAITED : 0) |
                  ((mode & PX_PROTO_MODE_RELEASE) ? PX_CHAN_F_RELEASE : 0) |
                  (coll ? PX_CHAN_F_COLL : 0) |
                  ((mode & PX_PROTO_MODE_CLASS)
                       ? PX_CHAN_F_CLASS |
                             (((mode >> PX_PROTO_MODE_CLASS_SHIFT) & 3) << PX_CHAN_F_CLASS_SHIFT)
                       : 0));
    mode = (px_proto_mode_t)(mode & 3);
    req->mode = (uint8_t)mode;
    req->done = 0;
    req->cancelled = 0;
    req->st_error = PX_OK;
    req->peer = peer;
    req->buf = buf;
    req->len = len;
    req->id = 0;
    req->fill = fill;
    req->filled = 0;
    req->fill_copy = 0;
    req->ring = fill && ring < len ? ring : 0;
    if (px_chan_failed(peer))
        return PX_ERR_PEER_UNREACHABLE;
    p->msgs_tx++;
    p->bytes_tx += len;
    px_chan_pick_t k;
    px_chan_pick(peer, len, coll, &k);
    /* one filled as it goes is packed frame by frame as a shared-memory
     * peer's ring takes it (px_proto_rndv_data), not whole for the peer
     * to read */
    if (fill && k.car == PX_CAR_SHM)
        k.get = 0;
    /* one through a ring holds no more than the ring's worth at a time:
     * its frames go after the clear-to-send, each once written */
    if (req->ring) {
        if (!k.rndv || px_proto_sring_start(req) != 0) {
            req->ring = 0;
            return PX_ERR_NO_MEMORY;
        }
        k.get = k.zc = 0;
        req->rflags &= (uint8_t)~PX_CHAN_F_RELEASE;
    }

    if (!k.rndv) {
        px_proto_fill_to(req, len);
        px_am_hdr_t h = {.am = PX_AM_EAGER, .src = my_rank, .tag = tag, .ctx = ctx};
        struct iovec iov = {(void *)buf, len};
        size_t hl = 16;
        req->pending = 1;
        if (mode == PX_PROTO_MODE_SYNC) {
            h.flags = PX_AM_FLAG_SYNC;
            h.a = px_proto_id_get(req);
            hl = 24;
            req->pending = 2;
        }
        st = px_chan_send(peer, k.env, &h, hl, &iov, 1, req->rflags, px_proto_send_cb, req);
        if (st == PX_OK) {
            if (--req->pending == 0)
                px_proto_complete(req);
        } else if (st < 0) {
            px_proto_id_put(req);
            return st;
        }
        return PX_OK;
    }

    req->fill_off = req->fill_end = 0;
    req->fill_busy = 0;
    /* rendezvous: the receiver reads directly (FIN) or asks for DATA (CTS);
     * over a network channel that carries the data too, the first bytes go
     * with the request and cross while the receiver answers */
    px_am_hdr_t h = {.am = PX_AM_RTS,
                     .flags = k.zc ? PX_AM_FLAG_ZCOPY : 0,
                     .src = my_rank,
                     .tag = tag,
                     .ctx = ctx,
                     .a = len,
                     .b = px_proto_id_get(req),
                     .c = k.get ? (uint64_t)(uintptr_t)buf : 0};
    size_t head = 0;
    if (k.env && k.env == k.data && !k.zc) {
        size_t lim = px_chan_eager(peer, k.env);
        head = px_params.rndv_head < lim ? px_params.rndv_head : lim;
        if (head >= len) /* a rendezvous PX_CHANNELS asked for: no head */
            head = 0;
    }
    /* only DATA frames after a clear-to-send are filled as they go: the
     * receiver may read the buffer itself, a bulk transfer streams it, a
     * send-only round's frames are copied early */
    px_proto_fill_to(req, k.get || k.zc || (req->rflags & PX_CHAN_F_RELEASE) ? len : head);
    req->fill_at = req->filled;
    struct iovec iov = {(void *)buf, head};
    p->rndv_tx++;
    req->pending = 1;
    req->dvc = k.data;
    req->head = head;
    /* the request waits for its data anyway: the head needs no copy. Not
     * so in a round that only sends (PX_CHAN_F_RELEASE) while ranks have
     * their own cores: there a held head would be copied to the rail's
     * release buffer once written and keep the data frames from being
     * copied while the links are quiet. With ranks sharing cores that
     * early copy of a large frame delays its transfer instead
     * (docs/fault-tolerance.md). */
    unsigned held =
        head && (!(req->rflags & PX_CHAN_F_RELEASE) || px_p.oversub) ? PX_CHAN_F_HELD : 0;
    if (req->ring) /* the head holds its place in the ring until sent */
        st = px_proto_sring_send(req, 0, k.env, &h, px_am_hdr_len[PX_AM_RTS], &iov, head ? 1 : 0,
                                 req->rflags | held);
    else
        st = px_chan_send(peer, k.env, &h, px_am_hdr_len[PX_AM_RTS], &iov, head ? 1 : 0,
                          req->rflags | held, px_proto_send_cb, req);
    if (st == PX_INPROGRESS)
        req->pending++;
    else if (st < 0) {
        px_proto_id_put(req);
        if (req->ring)
            px_proto_ring_end(req);
        return st;
    }
    /* the data frames of such a round will be copied once written (fault
     * tolerance): the wait for the clear-to-send copies them instead */
    if ((req->rflags & PX_CHAN_F_RELEASE) && !px_p.oversub && k.data && !k.zc && !k.get)
        px_chan_prestage(k.data, (const char *)buf + head, len - head);
    return PX_OK;
}

px_status_t px_proto_irecv(px_proto_req_t *req, int src_peer, uint32_t ctx, int src_rank, int tag,
                           void *buf, size_t len)
{
    return px_proto_irecv_drain(req, src_peer, ctx, src_rank, tag, buf, len, NULL, 0);
}

px_status_t px_proto_irecv_drain(px_proto_req_t *req, int src_peer, uint32_t ctx, int src_rank,
                                 int tag, void *buf, size_t len, px_proto_drain_fn drain,
                                 size_t ring)
{
    px_list_t *e;
    req->kind = PX_PROTO_REQ_RECV;
    req->done = 0;
    req->cancelled = 0;
    req->st_error = PX_OK;
    req->st_count = 0;
    req->ctx = ctx;
    req->rank = src_rank;
    req->peer = src_peer; /* until matched: the source's world rank, if one is named */
    req->tag = tag;
    req->buf = buf;
    req->len = len;
    req->id = 0;
    req->tmp = NULL;
    req->drain = drain;
    req->drained = 0;
    req->ring = drain && ring < len ? ring : 0;
    req->rs = NULL; /* until a message needs the ring's windows */
    for (e = px_p.unexp.next; e != &px_p.unexp; e = e->next) {
        px_proto_unexp_t *u = px_container_of(e, px_proto_unexp_t, link);
        if (px_match(u->ctx, u->src, u->tag, ctx, src_rank, tag)) {
            px_list_del(e);
            px_proto_take_unexp(req, u);
            return PX_OK;
        }
    }
    if (src_peer >= 0 && src_rank != PX_ANY_SOURCE && px_chan_failed(src_peer)) {
        req->st_error = PX_ERR_PEER_UNREACHABLE; /* nothing more will come from it */
        px_proto_complete(req);
        return PX_OK;
    }
    px_list_insert_tail(&px_p.posted, &req->link);
    return PX_OK;
}

int px_proto_cancel_recv(px_proto_req_t *req)
{
    px_list_t *e;
    for (e = px_p.posted.next; e != &px_p.posted; e = e->next) {
        if (e == &req->link) {
            px_list_del(e);
            req->cancelled = 1;
            req->done = 1;
            return 1;
        }
    }
    return 0;
}

int px_proto_iprobe(uint32_t ctx, int src_rank, int tag, int *src_p, int *tag_p, size_t *len_p)
{
    px_list_t *e;
    for (e = px_p.unexp.next; e != &px_p.unexp; e = e->next) {
        px_proto_unexp_t *u = px_container_of(e, px_proto_unexp_t, link);
        if (px_match(u->ctx, u->src, u->tag, ctx, src_rank, tag)) {
            *src_p = u->src;
            *tag_p = u->tag;
            *len_p = u->size;
            return 1;
        }
    }
    return 0;
}

px_proto_unexp_t *px_proto_improbe(uint32_t ctx, int src_rank, int tag, int *src_p, int *tag_p,
                                   size_t *len_p)
{
    px_list_t *e;
    for (e = px_p.unexp.next; e != &px_p.unexp; e = e->next) {
        px_proto_unexp_t *u = px_container_of(e, px_proto_unexp_t, link);
        if (px_match(u->ctx, u->src, u->tag, ctx, src_rank, tag)) {
            px_list_del(e);
            *src_p = u->src;
            *tag_p = u->tag;
            *len_p = u->size;
            return u;
        }
    }
    return NULL;
}

px_status_t px_proto_mrecv(px_proto_req_t *req, px_proto_unexp_t *u, void *buf, size_t len,
                           px_proto_drain_fn drain, size_t ring)
{
    req->kind = PX_PROTO_REQ_RECV;
    req->done = 0;
    req->cancelled = 0;
    req->st_error = PX_OK;
    req->st_count = 0;
    req->ctx = u->ctx;
    req->rank = u->src;
    req->tag = u->tag;
    req->buf = buf;
    req->len = len;
    req->id = 0;
    req->tmp = NULL;
    req->drain = drain;
    req->drained = 0;
    req->ring = drain && ring < len ? ring : 0;
    req->rs = NULL;
    px_proto_take_unexp(req, u);
    return PX_OK;
}

/* ---------- state dump (pxrun --timeout, SIGUSR1) ---------- */

static void px_proto_dump_sig(int sig)
{
    (void)sig;
    atomic_store_explicit(&px_boot_dump_req, 1, memory_order_relaxed);
}

static const char *px_proto_tag_str(int tag, char *buf, size_t len)
{
    if (tag == PX_ANY_TAG)
        return "any";
    snprintf(buf, len, "%d", tag);
    return buf;
}

/* What this rank waits for, on stderr: receives posted and not matched,
 * messages arrived and not received, transfers under way, and each network
 * channel's sequence numbers. Asked for by pxrun when a job reaches its
 * --timeout (or by SIGUSR1), so that a stuck job says where it is stuck. */
static void px_proto_dump(void)
{
    enum { MAX_LIST = 8 };
    int me = px_p.boot.rank, n = 0;
    char t1[16], line[1024];
    fprintf(stderr, "[rank %d state] at %.3f s (the clock of its log messages)\n", me,
            px_time_sec());
    for (px_list_t *it = px_p.posted.next; it != &px_p.posted; it = it->next) {
        px_proto_req_t *r = px_container_of(it, px_proto_req_t, link);
        if (n++ < MAX_LIST)
            fprintf(stderr,
                    "[rank %d state] receive posted: source %s tag %s context %u, %zu bytes\n", me,
                    r->rank == PX_ANY_SOURCE ? "any" : (snprintf(line, 16, "%d", r->rank), line),
                    px_proto_tag_str(r->tag, t1, sizeof(t1)), r->ctx, r->len);
    }
    if (n > MAX_LIST)
        fprintf(stderr, "[rank %d state] ... %d receives posted in all\n", me, n);
    n = 0;
    for (px_list_t *it = px_p.unexp.next; it != &px_p.unexp; it = it->next) {
        px_proto_unexp_t *u = px_container_of(it, px_proto_unexp_t, link);
        if (n++ < MAX_LIST)
            fprintf(
                stderr,
                "[rank %d state] arrived, not received: from %d tag %d context %u, %zu bytes%s\n",
                me, u->src, u->tag, u->ctx, u->size,
                u->am == PX_AM_RTS ? " (rendezvous request)"
                : u->arrived       ? ""
                                   : " (arriving)");
    }
    if (n > MAX_LIST)
        fprintf(stderr, "[rank %d state] ... %d unreceived messages in all\n", me, n);
    /* requests a peer may name: rendezvous sends and receives under way */
    uint8_t *free_slot = px_p.nids ? calloc(px_p.nids, 1) : NULL;
    n = 0;
    if (free_slot || !px_p.nids) {
        for (uint32_t i = px_p.free_id; i != PX_ID_NONE && i < px_p.nids;
             i = (uint32_t)(uintptr_t)px_p.ids[i])
            free_slot[i] = 1;
        for (uint32_t i = 0; i < px_p.nids; i++) {
            if (free_slot[i])
                continue;
            px_proto_req_t *r = px_p.ids[i];
            if (n++ >= MAX_LIST)
                continue;
            if (r->kind == PX_PROTO_REQ_SEND)
                fprintf(stderr,
                        "[rank %d state] rendezvous send to rank %d tag %d: %zu bytes, %d event(s) "
                        "to go\n",
                        me, r->peer, r->tag, r->len, r->pending);
            else
                fprintf(stderr,
                        "[rank %d state] rendezvous receive from rank %d tag %d: %zu of %zu bytes "
                        "arrived\n",
                        me, r->peer, r->st_tag, r->rndv_got, r->rndv_total);
        }
        free(free_slot);
    }
    if (n > MAX_LIST)
        fprintf(stderr, "[rank %d state] ... %d rendezvous transfers in all\n", me, n);
    for (int k = 0; k < px_boot_peer_room(&px_p.boot); k++) /* processes of other jobs too */
        px_chan_dump(k, me, px_p.peers[k].msgs_tx || px_p.peers[k].msgs_rx);
    fflush(stderr);
}

/* ---------- progress ---------- */

int px_proto_progress(void)
{
    if (__builtin_expect(atomic_load_explicit(&px_boot_dump_req, memory_order_relaxed), 0)) {
        atomic_store_explicit(&px_boot_dump_req, 0, memory_order_relaxed);
        px_proto_dump();
    }
    if (__builtin_expect(atomic_load_explicit(&px_proto_prof_req, memory_order_relaxed), 0)) {
        atomic_store_explicit(&px_proto_prof_req, 0, memory_order_relaxed);
        px_proto_prof_toggle();
    }
    int n = px_chan_progress();
    if (__builtin_expect(px_rma_queued != 0, 0))
        n += px_proto_rma_pace();
    if (__builtin_expect(px_p.hook != NULL, 0))
        n += px_p.hook();
    return n;
}

void px_proto_set_progress_hook(int (*hook)(void)) { px_p.hook = hook; }

/* bound on a wait for another thread's progress: only a wake-up that never
 * comes lasts this long */
#define PX_PROTO_SLEEP_GUARD_MS 100

/* A poll found nothing, so sleep in the kernel (PX_PROGRESS_MODE=sleep at
 * once, block after PX_SPIN_COUNT empty polls): peers wake us on arrival.
 * It asks the peers to signal (arms), polls once more for what came in
 * between, then sleeps.
 *
 * look: the caller waits for a store a peer makes into memory they share,
 * which no poll sees (shared-memory collectives). Then it takes two calls:
 * the first arms, polls and returns, so that the caller looks at that
 * memory once more; the next call of the same thread sleeps. Arming stays
 * until a poll finds something: every signal meanwhile wakes the next
 * sleep at once.
 *
 * One thread of the process sleeps there; the others that wait meanwhile
 * sleep until a request completes or it comes back (src/util/cs.h). */
static void px_proto_sleep(unsigned *idle, int look)
{
    if (px_p.sleeper) {
        px_cs_wait_others(PX_PROTO_SLEEP_GUARD_MS);
        return;
    }
    if (!look || !px_p.armed || !pthread_equal(px_p.armed_by, pthread_self())) {
        int n = px_chan_sleep_arm();
        px_p.armed = 0;
        if (n > 0) {
            *idle = 0;
            return;
        }
        if (n < 0) { /* cannot sleep now */
            int depth = px_cs_release();
            sched_yield();
            px_cs_reacquire(depth);
            return;
        }
        if (look) {
            px_p.armed = 1;
            px_p.armed_by = pthread_self();
            return;
        }
    }
    px_p.armed = 0;
    px_p.sleeper = 1;
    px_p.kicked = 0;
    int depth = px_cs_release();
    px_chan_sleep_wait();
    px_cs_reacquire(depth);
    px_p.sleeper = 0;
    if (px_p.kicked)
        px_chan_sleep_unkick();
    px_chan_sleep_disarm();
    px_cs_wake(); /* one of the others may sleep here in turn */
}

static void px_proto_disarm(void)
{
    px_p.armed = 0;
    px_chan_sleep_disarm();
}

static void px_proto_wait_(unsigned *idle, int look)
{
    /* With MPI_THREAD_MULTIPLE, a waiting call lets other threads' calls
     * in between two polls; the caller re-checks its condition after. */
    if (px_proto_progress()) {
        *idle = 0;
        if (__builtin_expect(px_p.armed, 0))
            px_proto_disarm();
    } else {
        ++*idle;
    }
    if (px_p.mode == PX_WAIT_SLEEP && *idle) {
        px_proto_sleep(idle, look);
        return;
    }
    /* auto: yield the processor at every poll once spin_limit polls found
     * nothing. When nothing else wants the core the call returns at once;
     * when something does (another job, the program's other threads, or
     * more ranks than cores) it gets the core, and a process that spun on
     * would keep the one whose message it waits for from running. */
    if (!*idle || *idle < px_p.spin_limit || px_p.mode == PX_WAIT_SPIN) {
        px_cs_yield();
        return;
    }
    if (px_p.mode == PX_WAIT_BLOCK) {
        /* sleep in the kernel until something arrives: on the sockets, and
         * on the doorbell that shared-memory senders ring while this process
         * sleeps (it yields instead while it must not sleep: transfers under
         * way, sends waiting for ring space). Not the default when
         * oversubscribed: waking from epoll takes longer than a yielding
         * process takes to run again (docs/architecture.md, "Progress and
         * placement"). */
        px_proto_sleep(idle, look);
        return;
    }
    int depth = px_cs_release();
    sched_yield();
    px_cs_reacquire(depth);
}

void px_proto_wait_step(unsigned *idle) { px_proto_wait_(idle, px_p.shared_pending > 0); }

void px_proto_wait_step_shared(unsigned *idle) { px_proto_wait_(idle, 1); }

void px_proto_shared_pending(int delta) { px_p.shared_pending += delta; }

int px_proto_oversubscribed(void) { return px_p.oversub; }

int px_proto_peers_wake(void) { return px_chan_wakes(); }

void px_proto_peer_wake(int peer) { px_chan_wake(peer); }

int px_proto_peer_failed(int peer) { return px_chan_failed(peer); }

int px_proto_peer_local(int peer) { return px_chan_local(peer); }

px_status_t px_proto_peer_read(int peer, void *local, uint64_t raddr, size_t len)
{
    return px_chan_get(peer, local, raddr, len);
}

px_status_t px_proto_peer_write(int peer, const void *local, uint64_t raddr, size_t len)
{
    return px_chan_put(peer, local, raddr, len);
}

uint64_t px_proto_job_id(void) { return px_p.boot.job_id; }

const char *px_proto_channel_name(int peer) { return px_chan_name(peer); }

/* ---------- set-up ---------- */

static const px_chan_up_t px_proto_chan_up = {
    .rx_done = px_proto_rx_done,
    .rx_data = px_proto_rx_data,
    .peer_failed = px_proto_peer_failed_cb,
    .bulk_progress = px_proto_bulk_progress,
    .bulk_done = px_proto_bulk_done,
    .bulk_failed = px_proto_bulk_failed,
};

px_status_t px_proto_init(const px_boot_info_t *boot)
{
    px_status_t st;

    /* a program that set up the active-message interface alone (without
     * MPI) cannot start MPI over it: both would own the channels */
    if (px_p.peers)
        return PX_ERR_BUSY;
    px_p.boot = *boot;
    px_copy_init();
    px_list_init(&px_p.posted);
    px_list_init(&px_p.unexp);
    px_p.free_id = PX_ID_NONE;
    {
        /* SIGUSR1 prints what this rank waits for, unless the program uses it */
        struct sigaction sa, old;
        if (sigaction(SIGUSR1, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
            !(old.sa_flags & SA_SIGINFO)) {
            memset(&sa, 0, sizeof(sa));
            sa.sa_handler = px_proto_dump_sig;
            sa.sa_flags = SA_RESTART;
            sigemptyset(&sa.sa_mask);
            sigaction(SIGUSR1, &sa, NULL);
        }
    }
    px_p.peers = calloc((size_t)px_boot_peer_room(boot), sizeof(*px_p.peers));
    if (!px_p.peers)
        return PX_ERR_NO_MEMORY;
    px_proto_am_register();
    st = px_chan_init(boot, &px_proto_chan_up);
    if (st != PX_OK)
        goto err;
    px_p.oversub = px_boot_machine()->oversub;
    px_p.spin_limit =
        (unsigned)(px_p.oversub ? px_params.oversub_spin_count : px_params.spin_count);
    if (!strcmp(px_params.progress_mode, "spin"))
        px_p.mode = PX_WAIT_SPIN;
    else if (!strcmp(px_params.progress_mode, "block"))
        px_p.mode = PX_WAIT_BLOCK;
    else if (!strcmp(px_params.progress_mode, "sleep"))
        px_p.mode = PX_WAIT_SLEEP;
    else
        px_p.mode = PX_WAIT_AUTO;
    px_debug("proto", "ready: %d ranks, oversubscribed=%d", boot->size, px_p.oversub);
    return PX_OK;

err:
    px_proto_finalize();
    return st;
}

px_status_t px_proto_flush(int mode)
{
    return px_chan_flush(mode == PX_FLUSH_SENT    ? PX_CHAN_FLUSH_SENT
                         : mode == PX_FLUSH_ACKED ? PX_CHAN_FLUSH_ACKED
                                                  : PX_CHAN_FLUSH_LAST,
                         px_proto_wait_step);
}

px_status_t px_proto_flush_peers(const int *peers, int n)
{
    return px_chan_flush_peers(peers, n, px_proto_wait_step);
}

px_status_t px_proto_card(char *card, size_t len) { return px_chan_card(card, len); }

px_status_t px_proto_peer_add(uint64_t job_id, uint32_t rank, const uint8_t key[32],
                              const char *card, const char *node, int *peer_p)
{
    return px_chan_peer_add(job_id, rank, key, card, node, peer_p);
}

px_status_t px_proto_peer_remove(int peer)
{
    px_status_t st = px_chan_peer_remove(peer);
    if (st == PX_OK)
        memset(&px_p.peers[peer], 0, sizeof(px_p.peers[peer]));
    return st;
}

void px_proto_print_stats(void)
{
    fprintf(stderr,
            "[plexus profile] rank %d: eager rx %llu, rendezvous rx %llu, unexpected %llu, "
            "oversubscribed %d\n",
            px_p.boot.rank, (unsigned long long)px_p.n_eager, (unsigned long long)px_p.n_rndv,
            (unsigned long long)px_p.n_unexp, px_p.oversub);
    for (int r = 0; r < px_p.boot.size; r++) {
        px_proto_peer_t *p = &px_p.peers[r];
        if (p->msgs_tx || p->msgs_rx)
            fprintf(stderr,
                    "[plexus profile] rank %d -> %d channel %s: msgs tx %llu rx %llu bytes tx "
                    "%llu rx %llu rendezvous tx %llu\n",
                    px_p.boot.rank, r, px_proto_channel_name(r), (unsigned long long)p->msgs_tx,
                    (unsigned long long)p->msgs_rx, (unsigned long long)p->bytes_tx,
                    (unsigned long long)p->bytes_rx, (unsigned long long)p->rndv_tx);
    }
    px_chan_print_stats(px_p.boot.rank);
    px_chan_print_rail_stats(px_p.boot.rank);
}

void px_proto_finalize(void)
{
    px_list_t *e, *t;
    px_chan_finalize();
    px_proto_rma_finalize();
    px_proto_pub_finalize();
    if (px_p.unexp.next) {
        px_list_for_each_safe(e, t, &px_p.unexp) {
            px_proto_unexp_free(px_container_of(e, px_proto_unexp_t, link));
        }
        px_list_init(&px_p.unexp);
    }
    px_proto_unexp_drop();
    free(px_p.peers);
    px_p.peers = NULL;
    free(px_p.ids);
    free(px_p.gens);
    px_p.ids = NULL;
    px_p.gens = NULL;
    px_p.nids = 0;
}
