/* One-sided communication: windows, and what an origin sends (the
 * frames' format: proto_rma_impl.h; what a target does with them:
 * proto_rma_rx.c). */
#include "proto_rma_impl.h"
#include "../util/log.h"
#include "../util/param.h"

#include <stdlib.h>
#include <string.h>

static px_proto_win_t *px_rma_wins;
uint64_t px_rma_queued; /* paced frames queued in all windows */

px_proto_win_t *px_rma_win_find(uint32_t id)
{
    for (px_proto_win_t *w = px_rma_wins; w; w = w->next)
        if (w->id == id)
            return w;
    return NULL;
}

px_proto_win_t *px_proto_win_new(uint32_t id, int me, int size, const int *peers, void *base,
                                 size_t len, int dynamic, px_proto_rma_apply_fn apply)
{
    if (px_rma_win_find(id))
        return NULL;
    px_proto_win_t *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->peers = malloc(sizeof(int) * (size_t)size);
    w->p = calloc((size_t)size, sizeof(*w->p));
    if (!w->peers || !w->p) {
        free(w->peers), free(w->p), free(w);
        return NULL;
    }
    memcpy(w->peers, peers, sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) {
        w->p[i].rk = PX_RMA_RX_PUT;
        w->p[i].w = w;
        w->p[i].rank = i;
    }
    w->id = id;
    w->me = me;
    w->size = size;
    w->base = base;
    w->len = len;
    w->dynamic = dynamic;
    w->apply = apply;
    w->lock_excl = -1;
    w->waiters_tail = &w->waiters;
    w->next = px_rma_wins;
    px_rma_wins = w;
    return w;
}

int px_proto_win_parts(px_proto_win_t *w, const uint64_t *rbase, const uint64_t *rlen)
{
    size_t n = sizeof(uint64_t) * (size_t)w->size;
    w->rbase = malloc(n);
    w->rlen = malloc(n);
    if (!w->rbase || !w->rlen) {
        free(w->rbase), free(w->rlen);
        w->rbase = w->rlen = NULL;
        return -1;
    }
    memcpy(w->rbase, rbase, n);
    memcpy(w->rlen, rlen, n);
    return 0;
}

static int px_rma_finalizing;

void px_proto_win_free(px_proto_win_t *w)
{
    if (!w)
        return;
    /* answers to gets still in the channel's hands call back into w->p */
    int answering = 0;
    for (int t = 0; t < w->size; t++) {
        unsigned idle = 0;
        while (w->p[t].answering && !px_rma_finalizing && !px_proto_peer_failed(w->peers[t]))
            px_proto_wait_step(&idle);
        answering |= w->p[t].answering;
    }
    for (px_proto_win_t **q = &px_rma_wins; *q; q = &(*q)->next)
        if (*q == w) {
            *q = w->next;
            break;
        }
    while (w->regions) {
        px_rma_region_t *r = w->regions;
        w->regions = r->next;
        free(r);
    }
    while (w->waiters) {
        px_rma_waiter_t *x = w->waiters;
        w->waiters = x->next;
        free(x);
    }
    for (int t = 0; t < w->size; t++) /* none after a wait for completion; a failed job's */
        while (w->p[t].qhead) {
            px_rma_qput_t *q = w->p[t].qhead;
            w->p[t].qhead = q->next;
            px_rma_queued--;
            free(q);
        }
    if (answering) /* a window left to MPI_Finalize, or its peer lost: kept for the callbacks */
        return;
    free(w->peers), free(w->p), free(w->rbase), free(w->rlen), free(w);
}

void px_proto_rma_finalize(void)
{
    px_rma_finalizing = 1;
    while (px_rma_wins)
        px_proto_win_free(px_rma_wins);
    px_rma_finalizing = 0;
}

int px_proto_win_attach(px_proto_win_t *w, void *base, size_t len)
{
    px_rma_region_t *r = malloc(sizeof(*r));
    if (!r)
        return -1;
    r->base = (uintptr_t)base;
    r->len = len;
    r->next = w->regions;
    w->regions = r;
    return 0;
}

int px_proto_win_detach(px_proto_win_t *w, const void *base)
{
    for (px_rma_region_t **q = &w->regions; *q; q = &(*q)->next)
        if ((*q)->base == (uintptr_t)base) {
            px_rma_region_t *r = *q;
            *q = r->next;
            free(r);
            return 0;
        }
    return -1;
}

/* The attached region holding address a, or NULL (a at a region's end
 * counts when the region is empty or a is not in another one). */
static px_rma_region_t *px_rma_region_at(px_proto_win_t *w, uint64_t a)
{
    px_rma_region_t *end = NULL;
    for (px_rma_region_t *r = w->regions; r; r = r->next)
        if (a >= r->base && a - r->base <= r->len) {
            if (a - r->base < r->len)
                return r;
            end = r;
        }
    return end;
}

/* Where [off, off + len) of this process's part is, or NULL when the
 * window does not expose all of it. In a dynamic window the range may run
 * on through regions attached one right after the other. */
char *px_rma_local(px_proto_win_t *w, uint64_t off, size_t len)
{
    if (!w->dynamic)
        return off <= w->len && len <= w->len - off ? w->base + off : NULL;
    uint64_t a = off;
    for (px_rma_region_t *r; (r = px_rma_region_at(w, a));) {
        uint64_t rest = r->len - (a - r->base);
        if (len - (a - off) <= rest)
            return (char *)(uintptr_t)off;
        if (!rest)
            return NULL;
        a += rest;
    }
    return NULL;
}

/* ---------- origin ---------- */

void px_proto_rma_req_init(px_proto_req_t *req, int kind, void *buf, size_t total)
{
    memset(req, 0, sizeof(*req));
    req->kind = (uint8_t)kind;
    req->buf = buf;
    req->len = total;
    req->rndv_total = total;
    if (kind == PX_PROTO_REQ_SEND) {
        req->pending = 1;
    } else {
        req->id = 0;
        req->peer = -1;
        if (!total)
            req->done = 1;
        else
            px_proto_id_get(req);
    }
}

void px_proto_rma_req_issued(px_proto_req_t *req) { px_proto_send_cb(req, PX_OK); }

void px_proto_rma_req_fail(px_proto_req_t *req, px_status_t st)
{
    if (req->done)
        return;
    req->st_error = st;
    px_proto_complete(req);
}

static void px_rma_win_sent(void *arg, px_status_t st)
{
    px_proto_win_t *w = arg;
    if (st != PX_OK)
        px_error("proto", "one-sided operation failed: %s", px_status_string(st));
    w->tx_pending--;
}

static px_status_t px_rma_send_now(px_proto_win_t *w, int target, px_chan_route_t *route,
                                   const px_am_hdr_t *h, const void *buf, size_t len,
                                   unsigned flags, px_proto_req_t *req)
{
    struct iovec iov = {(void *)buf, len};
    px_chan_send_cb_t cb = req ? px_proto_send_cb : px_rma_win_sent;
    void *arg = req ? (void *)req : (void *)w;
    px_status_t st = px_chan_send(w->peers[target], route, h, px_am_hdr_len[h->am],
                                  len ? &iov : NULL, len ? 1 : 0, flags, len ? cb : NULL, arg);
    if (st == PX_INPROGRESS && len) {
        if (req)
            req->pending++;
        else
            w->tx_pending++;
        st = PX_OK;
    } else if (st == PX_INPROGRESS) {
        st = PX_OK;
    }
    return st;
}

/* Sends the frame held for target, as it is. */
static px_status_t px_rma_release(px_proto_win_t *w, int target)
{
    px_rma_peer_t *p = &w->p[target];
    if (!p->held)
        return PX_OK;
    p->held = 0;
    w->nheld--;
    px_proto_req_t *req = p->hold_req;
    if (!req)
        w->tx_pending--; /* counted while held */
    px_status_t st =
        px_rma_send_now(w, target, NULL, &p->hold_hdr, p->hold_buf, p->hold_len, 0, req);
    if (req)
        px_proto_send_cb(req, st < 0 ? st : PX_OK); /* the count it had while held */
    return st;
}

/* Every frame to target goes through here, after the one held for it. */
static px_status_t px_rma_send(px_proto_win_t *w, int target, px_chan_route_t *route,
                               const px_am_hdr_t *h, const void *buf, size_t len, unsigned flags,
                               px_proto_req_t *req)
{
    px_status_t st = px_rma_release(w, target);
    if (st < 0)
        return st;
    return px_rma_send_now(w, target, route, h, buf, len, flags, req);
}

/* A small put or accumulate waits for what follows: the next frame to
 * the target sends it, a flush or unlock rides on it, and anything that
 * waits for its completion here sends it first (px_proto_rma_push). */
static px_status_t px_rma_send_or_hold(px_proto_win_t *w, int target, const px_am_hdr_t *h,
                                       const void *buf, size_t len, px_proto_req_t *req)
{
    px_status_t st = px_rma_release(w, target);
    if (st < 0 || !len)
        return st < 0 ? st : px_rma_send_now(w, target, NULL, h, buf, len, 0, req);
    px_rma_peer_t *p = &w->p[target];
    p->held = 1;
    p->hold_hdr = *h;
    p->hold_buf = buf;
    p->hold_len = len;
    p->hold_req = req;
    w->nheld++;
    if (req) /* not complete here until sent */
        req->pending++;
    else
        w->tx_pending++;
    return PX_OK;
}

void px_proto_rma_push(px_proto_win_t *w)
{
    for (int t = 0; t < w->size && w->nheld; t++)
        px_rma_release(w, t);
    if (px_rma_queued)
        px_proto_rma_pace();
}

/* A copy straight into or out of the target's memory: itself, or a peer
 * on this node large enough to be worth a system call. 1 when done. */
static int px_rma_direct(px_proto_win_t *w, int target, uint64_t off, void *buf, size_t len,
                         int put)
{
    int peer = w->peers[target];
    if (target == w->me) {
        char *p = px_rma_local(w, off, len);
        if (!p)
            return 0;
        if (put)
            memmove(p, buf, len);
        else
            memmove(buf, p, len);
        return 1;
    }
    if (!w->rbase || w->dynamic || !px_chan_can_get(peer) || len <= px_chan_eager(peer, NULL))
        return 0;
    if (off > w->rlen[target] || len > w->rlen[target] - off)
        return 0;
    uint64_t raddr = w->rbase[target] + off;
    return (put ? px_chan_put(peer, buf, raddr, len) : px_chan_get(peer, buf, raddr, len)) == PX_OK;
}

/* ---------- pacing of large puts ----------
 *
 * Frames of large puts go to the channel only while it has less than
 * PX_RMA_PACE bytes queued to the target; the rest wait here, in order.
 * What the origin issues next, gets above all, then waits behind little
 * in the channel's queues, so that puts load the link from origin to
 * target while the gets' answers come the other way. The standard orders
 * neither puts with gets nor puts with accumulates, and a flush, unlock or
 * completion carries the count of bytes put, which the target waits for
 * whatever arrives first. Queued frames leave from px_proto_progress
 * (px_proto_rma_pace) and before every wait (px_proto_rma_push). */

/* Sends what the pace allows of the queue to target. */
static int px_rma_pace_peer(px_proto_win_t *w, int target)
{
    px_rma_peer_t *p = &w->p[target];
    int peer = w->peers[target], n = 0;
    while (p->qhead && px_chan_pending(peer) < px_params.rma_pace) {
        px_rma_qput_t *q = p->qhead;
        p->qhead = q->next;
        if (!p->qhead)
            p->qtail = NULL;
        px_rma_queued--;
        px_chan_pick_t k;
        px_chan_pick(peer, q->whole, 0, &k);
        struct iovec iov = {(void *)q->buf, q->len};
        px_chan_send_cb_t cb = q->req ? px_proto_send_cb : px_rma_win_sent;
        void *arg = q->req ? (void *)q->req : (void *)w;
        /* the count it had while queued stays until the callback */
        px_status_t st = px_chan_send(peer, k.rndv ? k.data : k.env, &q->h, px_am_hdr_len[q->h.am],
                                      &iov, 1, PX_CHAN_F_STRIPE, cb, arg);
        if (st != PX_INPROGRESS) /* written already, or failed */
            cb(arg, st < 0 ? st : PX_OK);
        free(q);
        n++;
    }
    return n;
}

int px_proto_rma_pace(void)
{
    int n = 0;
    for (px_proto_win_t *w = px_rma_wins; w && px_rma_queued; w = w->next)
        for (int t = 0; t < w->size && px_rma_queued; t++)
            if (w->p[t].qhead)
                n += px_rma_pace_peer(w, t);
    return n;
}

/* A frame of a large put: sent now if the pace allows, else queued. */
static px_status_t px_rma_put_paced(px_proto_win_t *w, int target, px_chan_route_t *route,
                                    const px_am_hdr_t *h, const void *buf, size_t len, size_t whole,
                                    px_proto_req_t *req)
{
    px_rma_peer_t *p = &w->p[target];
    if (!p->qhead && px_chan_pending(w->peers[target]) < px_params.rma_pace)
        return px_rma_send(w, target, route, h, buf, len, PX_CHAN_F_STRIPE, req);
    px_status_t st = px_rma_release(w, target);
    if (st < 0)
        return st;
    px_rma_qput_t *q = malloc(sizeof(*q));
    if (!q)
        return PX_ERR_NO_MEMORY;
    *q = (px_rma_qput_t){.req = req, .buf = buf, .len = len, .whole = whole, .h = *h};
    if (req) /* complete here once sent */
        req->pending++;
    else
        w->tx_pending++;
    if (p->qtail)
        p->qtail->next = q;
    else
        p->qhead = q;
    p->qtail = q;
    px_rma_queued++;
    return PX_OK;
}

px_status_t px_proto_rma_put(px_proto_win_t *w, int target, uint64_t off, const void *buf,
                             size_t len, px_proto_req_t *req)
{
    if (!len || px_rma_direct(w, target, off, (void *)buf, len, 1))
        return PX_OK;
    int peer = w->peers[target];
    px_chan_pick_t k;
    px_chan_pick(peer, len, 0, &k);
    px_chan_route_t *route = k.rndv ? k.data : k.env;
    size_t chunk = len <= px_chan_eager(peer, route) ? len : px_chan_chunk(peer, route, 0);
    px_status_t st = PX_OK;
    for (size_t at = 0; at < len && st == PX_OK; at += chunk) {
        size_t n = len - at < chunk ? len - at : chunk;
        px_am_hdr_t h = {.am = PX_AM_RMA_PUT, .src = w->me, .ctx = w->id, .a = off + at, .b = n};
        if (n == len && !k.rndv)
            st = px_rma_send_or_hold(w, target, &h, buf, n, req);
        else if (px_params.rma_pace && n > 4096)
            st = px_rma_put_paced(w, target, route, &h, (const char *)buf + at, n, len, req);
        else
            st = px_rma_send(w, target, route, &h, (const char *)buf + at, n,
                             n > 4096 ? PX_CHAN_F_STRIPE : 0, req);
    }
    w->p[target].sent += len;
    return st;
}

px_status_t px_proto_rma_get(px_proto_win_t *w, int target, uint64_t off, size_t len,
                             px_proto_req_t *res, size_t at)
{
    if (!len)
        return PX_OK;
    if (at > res->rndv_total || len > res->rndv_total - at)
        return PX_ERR_INVALID_PARAM;
    if (px_rma_direct(w, target, off, (char *)res->buf + at, len, 0)) {
        res->rndv_got += len;
        if (res->rndv_got == res->rndv_total)
            px_proto_complete(res);
        return PX_OK;
    }
    px_am_hdr_t h = {
        .am = PX_AM_RMA_GET, .src = w->me, .ctx = w->id, .a = off, .b = len, .c = res->id, .d = at};
    /* counted as applied once answered, so that the target's fence, wait
     * or lock release waits until the answer has read the window */
    w->p[target].sent += len;
    w->p[target].gsent += len;
    return px_rma_send(w, target, NULL, &h, NULL, 0, 0, NULL);
}

px_status_t px_proto_rma_acc(px_proto_win_t *w, int target, uint64_t off, const void *buf,
                             size_t len, size_t unit, uint32_t op, uint32_t type, unsigned flags,
                             px_proto_req_t *req, px_proto_req_t *res, size_t at)
{
    size_t rlen = flags & PX_RMA_CAS ? len / 2 : len;
    if (res && (at > res->rndv_total || rlen > res->rndv_total - at))
        return PX_ERR_INVALID_PARAM;
    /* each piece one frame, in order, of whole elements; its answer too */
    size_t chunk = px_chan_eager(w->peers[target], NULL);
    if (!unit)
        unit = 1;
    chunk = chunk < unit ? unit : chunk - chunk % unit;
    if (flags & PX_RMA_CAS)
        chunk = len;
    px_status_t st = PX_OK;
    for (size_t done = 0; done < len && st == PX_OK; done += chunk) {
        size_t n = len - done < chunk ? len - done : chunk;
        px_am_hdr_t h = {.am = PX_AM_RMA_ACC,
                         .flags = (uint8_t)((res ? PX_AM_RMA_FETCH : 0) |
                                            (flags & PX_RMA_CAS ? PX_AM_RMA_CAS : 0)),
                         .src = w->me,
                         .tag = (int32_t)op,
                         .ctx = w->id,
                         .a = off + done,
                         .b = n,
                         .c = type,
                         .d = res ? res->id : 0,
                         .e = at + done};
        w->p[target].sent += n;
        if (n == len)
            st = px_rma_send_or_hold(w, target, &h, buf, n, req);
        else
            st = px_rma_send(w, target, NULL, &h, (const char *)buf + done, n, 0, req);
    }
    return st;
}

void px_rma_sync(px_proto_win_t *w, int target, int what, uint64_t a, uint64_t b)
{
    px_am_hdr_t h = {.am = PX_AM_RMA_SYNC, .src = w->me, .tag = what, .ctx = w->id, .a = a, .b = b};
    px_status_t st = px_rma_send(w, target, NULL, &h, NULL, 0, 0, NULL);
    if (st < 0)
        px_error("proto", "cannot send a one-sided synchronisation to rank %d: %s",
                 w->peers[target], px_status_string(st));
}

px_status_t px_proto_rma_lock(px_proto_win_t *w, int target, int exclusive)
{
    w->p[target].granted = 0;
    px_rma_sync(w, target, PX_RMA_S_LOCK, 0, (uint64_t) !!exclusive);
    return PX_OK;
}

int px_proto_rma_locked(px_proto_win_t *w, int target) { return w->p[target].granted; }

px_status_t px_proto_rma_flush(px_proto_win_t *w, int target, int unlock)
{
    px_rma_peer_t *p = &w->p[target];
    p->acks_due++;
    if (unlock)
        p->granted = 0;
    if (p->held) { /* on the last operation's frame */
        p->hold_hdr.flags |= unlock ? PX_AM_RMA_UNLOCK : PX_AM_RMA_FLUSH;
        if (p->hold_hdr.am == PX_AM_RMA_PUT)
            p->hold_hdr.c = p->sent;
        else
            p->hold_hdr.f = p->sent;
        return px_rma_release(w, target);
    }
    px_rma_sync(w, target, unlock ? PX_RMA_S_UNLOCK : PX_RMA_S_FLUSH, p->sent, 0);
    return PX_OK;
}

int px_proto_rma_flushed(px_proto_win_t *w, int target) { return w->p[target].acks_due == 0; }

int px_proto_rma_local_done(px_proto_win_t *w)
{
    px_proto_rma_push(w);
    return w->tx_pending == 0;
}

px_status_t px_proto_rma_post(px_proto_win_t *w, int origin)
{
    px_rma_sync(w, origin, PX_RMA_S_POST, 0, 0);
    return PX_OK;
}

int px_proto_rma_take_post(px_proto_win_t *w, int target)
{
    if (!w->p[target].posts)
        return 0;
    w->p[target].posts--;
    return 1;
}

px_status_t px_proto_rma_complete(px_proto_win_t *w, int target)
{
    px_rma_sync(w, target, PX_RMA_S_COMPLETE, w->p[target].sent, 0);
    return PX_OK;
}

int px_proto_rma_take_complete(px_proto_win_t *w, int origin)
{
    px_rma_peer_t *p = &w->p[origin];
    if (!p->completes || !px_rma_settled(p, p->complete_at))
        return 0;
    p->completes--;
    return 1;
}

uint64_t px_proto_rma_sent(px_proto_win_t *w, int target) { return w->p[target].sent; }

uint64_t px_proto_rma_sent_updates(px_proto_win_t *w, int target)
{
    return w->p[target].sent - w->p[target].gsent;
}

int px_proto_rma_applied(px_proto_win_t *w, int origin, uint64_t bytes)
{
    return px_rma_settled(&w->p[origin], bytes);
}
