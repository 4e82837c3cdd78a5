/* One-sided communication: the frames a window receives (as target:
 * puts, accumulates, gets and synchronisations; as origin: the answers
 * to its gets and flushes). */
#include "proto_rma_impl.h"
#include "../util/log.h"

#include <stdlib.h>
#include <string.h>

/* An accumulate being received. */
typedef struct px_rma_stage {
    uint8_t rk; /* PX_RMA_RX_ACC */
    uint8_t flags;
    int origin;
    uint32_t op, type;
    px_proto_win_t *w;
    char *dst;
    size_t len;
    uint64_t res, at;
    char data[];
} px_rma_stage_t;

static void px_rma_grant(px_proto_win_t *w)
{
    while (w->waiters && w->lock_excl < 0) {
        px_rma_waiter_t *x = w->waiters;
        if (x->excl && w->lock_shared)
            break;
        w->waiters = x->next;
        if (!w->waiters)
            w->waiters_tail = &w->waiters;
        if (x->excl)
            w->lock_excl = x->origin;
        else
            w->lock_shared++;
        px_rma_sync(w, x->origin, PX_RMA_S_GRANT, 0, 0);
        free(x);
    }
}

/* A flush or unlock from p's origin whose bytes have all been applied. */
/* p's origin waits for a flush or unlock (wanting) and everything it
 * counted has been applied: the lock is released (unlock), the origin
 * told (ack: by an ACK of its own; 0: the caller tells it otherwise). */
static void px_rma_want_done(px_rma_peer_t *p, int ack)
{
    px_proto_win_t *w = p->w;
    if (p->wanting == PX_RMA_S_UNLOCK) {
        if (w->lock_excl == p->rank)
            w->lock_excl = -1;
        else if (w->lock_shared)
            w->lock_shared--;
    }
    p->wanting = 0;
    if (ack)
        px_rma_sync(w, p->rank, PX_RMA_S_ACK, 0, 0);
    px_rma_grant(w);
}

static void px_rma_check(px_rma_peer_t *p)
{
    if (p->wanting && px_rma_settled(p, p->want))
        px_rma_want_done(p, 1);
}

/* A flush or unlock that rides on an operation's frame: it is answered
 * once that frame is applied too (want counts its bytes). */
static void px_rma_then(px_rma_peer_t *p, unsigned flags, uint64_t want)
{
    if (flags & (PX_AM_RMA_FLUSH | PX_AM_RMA_UNLOCK)) {
        p->want = want;
        p->wanting = flags & PX_AM_RMA_UNLOCK ? PX_RMA_S_UNLOCK : PX_RMA_S_FLUSH;
    }
}

/* The window and origin a frame names, or NULL (reported). */
static px_proto_win_t *px_rma_named(int peer, const void *hdr, size_t hdr_len, px_am_hdr_t *h)
{
    memcpy(h, hdr, hdr_len < sizeof(*h) ? hdr_len : sizeof(*h));
    if (hdr_len < sizeof(*h))
        memset((char *)h + hdr_len, 0, sizeof(*h) - hdr_len);
    px_proto_win_t *w = px_rma_win_find(h->ctx);
    if (!w || h->src < 0 || h->src >= w->size || w->peers[h->src] != peer) {
        px_error("proto", "one-sided message from rank %d for an unknown window", peer);
        return NULL;
    }
    return w;
}

static void *px_rma_am_put(int peer, const void *hdr, size_t hdr_len, size_t off, size_t len,
                           void **ctx_p)
{
    px_am_hdr_t h;
    px_proto_win_t *w = px_rma_named(peer, hdr, hdr_len, &h);
    if (!w)
        return NULL;
    *ctx_p = &w->p[h.src]; /* counted even when refused: the origin's flush must end */
    px_rma_then(&w->p[h.src], h.flags, h.c);
    char *p = px_rma_local(w, h.a, h.b);
    if (!p || off > h.b || len > h.b - off) {
        px_error("proto", "put from rank %d outside the window (offset %#llx, %llu bytes)", peer,
                 (unsigned long long)h.a, (unsigned long long)h.b);
        return NULL;
    }
    return p + off;
}

static void *px_rma_am_acc(int peer, const void *hdr, size_t hdr_len, size_t off, size_t len,
                           void **ctx_p)
{
    px_am_hdr_t h;
    (void)off;
    px_proto_win_t *w = px_rma_named(peer, hdr, hdr_len, &h);
    if (!w)
        return NULL;
    px_rma_stage_t *s = malloc(sizeof(*s) + len);
    if (!s) {
        px_error("proto", "out of memory for an accumulate of %zu bytes", len);
        return NULL;
    }
    px_rma_then(&w->p[h.src], h.flags, h.f);
    s->rk = PX_RMA_RX_ACC;
    s->flags = h.flags;
    s->origin = h.src;
    s->op = (uint32_t)h.tag;
    s->type = (uint32_t)h.c;
    s->w = w;
    s->len = len;
    s->res = h.d;
    s->at = h.e;
    size_t span = h.flags & PX_AM_RMA_CAS ? len / 2 : len;
    s->dst = h.b == len ? px_rma_local(w, h.a, span) : NULL;
    if (!s->dst)
        px_error("proto", "accumulate from rank %d outside the window (offset %#llx, %zu bytes)",
                 peer, (unsigned long long)h.a, span);
    *ctx_p = s;
    return s->data;
}

static void px_rma_free_cb(void *arg, px_status_t st)
{
    (void)st;
    free(arg);
}

/* A frame of a get's answer has left the window (the send that was in
 * progress has read it). */
static void px_rma_answered_cb(void *arg, px_status_t st)
{
    (void)st;
    px_rma_peer_t *p = arg;
    p->answering--;
    px_rma_check(p);
}

/* DATA frames with n bytes at src into the origin's request res at `at`.
 * owned: src is a copy to free once sent, in one frame (an accumulate's
 * answer: no larger than the frame that asked); otherwise src is window
 * memory (a get's answer), whose n bytes count as applied for the origin,
 * and frames still reading it as answering. */
static void px_rma_answer(px_proto_win_t *w, int origin, const char *src, size_t n, uint64_t res,
                          uint64_t at, void *owned, int acks)
{
    px_rma_peer_t *p = &w->p[origin];
    int peer = w->peers[origin];
    /* as a rendezvous's data: the route the channel rules give the size */
    px_chan_pick_t pk;
    px_chan_pick(peer, n, 0, &pk);
    px_chan_route_t *route = pk.rndv ? pk.data : pk.env;
    size_t chunk = owned || n <= px_chan_eager(peer, route) ? n : px_chan_chunk(peer, route, 0);
    px_status_t st = PX_OK;
    for (size_t sent = 0; sent < n && st >= 0; sent += chunk) {
        size_t k = n - sent < chunk ? n - sent : chunk;
        px_am_hdr_t h = {.am = PX_AM_DATA, .a = res, .b = at + sent};
        if (acks) { /* the answer is the ACK of the flush that rode on the operation */
            h.flags = PX_AM_FLAG_RMA_ACK;
            h.ctx = w->id;
            h.src = w->me;
        }
        struct iovec iov = {(char *)src + sent, k};
        /* with a callback, as the rail layer stripes only frames that have one */
        st = px_chan_send(peer, route, &h, px_am_hdr_len[PX_AM_DATA], &iov, 1,
                          k > 4096 ? PX_CHAN_F_STRIPE : 0,
                          owned ? px_rma_free_cb : px_rma_answered_cb, owned ? owned : (void *)p);
        if (owned && st != PX_INPROGRESS)
            free(owned);
        if (!owned && st == PX_INPROGRESS)
            p->answering++;
    }
    if (!owned) {
        p->applied += n;
        px_rma_check(p);
    }
    if (st < 0)
        px_error("proto", "cannot answer a one-sided operation of rank %d: %s", peer,
                 px_status_string(st));
}

static void *px_rma_am_get(int peer, const void *hdr, size_t hdr_len, size_t off, size_t len,
                           void **ctx_p)
{
    px_am_hdr_t h;
    (void)off, (void)len, (void)ctx_p;
    px_proto_win_t *w = px_rma_named(peer, hdr, hdr_len, &h);
    if (!w)
        return NULL;
    char *p = px_rma_local(w, h.a, h.b);
    if (!p) {
        px_error("proto", "get from rank %d outside the window (offset %#llx, %llu bytes)", peer,
                 (unsigned long long)h.a, (unsigned long long)h.b);
        px_rma_sync(w, h.src, PX_RMA_S_GET_ERROR, 0, h.c);
        w->p[h.src].applied += h.b;
        px_rma_check(&w->p[h.src]);
        return NULL;
    }
    px_rma_answer(w, h.src, p, h.b, h.c, h.d, NULL, 0);
    return NULL;
}

static void *px_rma_am_sync(int peer, const void *hdr, size_t hdr_len, size_t off, size_t len,
                            void **ctx_p)
{
    px_am_hdr_t h;
    (void)off, (void)len, (void)ctx_p;
    px_proto_win_t *w = px_rma_named(peer, hdr, hdr_len, &h);
    if (!w)
        return NULL;
    px_rma_peer_t *p = &w->p[h.src];
    switch (h.tag) {
    case PX_RMA_S_LOCK: {
        px_rma_waiter_t *x = malloc(sizeof(*x));
        if (!x) {
            px_error("proto", "out of memory for a lock request");
            break;
        }
        x->origin = h.src;
        x->excl = !!h.b;
        x->next = NULL;
        *w->waiters_tail = x;
        w->waiters_tail = &x->next;
        px_rma_grant(w);
        break;
    }
    case PX_RMA_S_GRANT:
        p->granted = 1;
        break;
    case PX_RMA_S_FLUSH:
    case PX_RMA_S_UNLOCK:
        p->want = h.a;
        p->wanting = (uint8_t)h.tag;
        px_rma_check(p);
        break;
    case PX_RMA_S_ACK:
        if (p->acks_due > 0)
            p->acks_due--;
        break;
    case PX_RMA_S_POST:
        p->posts++;
        break;
    case PX_RMA_S_COMPLETE:
        p->completes++;
        p->complete_at = h.a;
        break;
    case PX_RMA_S_GET_ERROR: {
        px_proto_req_t *req = px_proto_id_lookup(h.b);
        if (req && req->kind == PX_PROTO_REQ_RECV && !req->done) {
            req->st_error = PX_ERR_INVALID_PARAM;
            px_proto_complete(req);
        }
        break;
    }
    default:
        px_error("proto", "unknown one-sided synchronisation %d from rank %d", h.tag, peer);
    }
    return NULL;
}

void px_proto_rma_rx_done(int peer, void *ctx, size_t len)
{
    (void)peer;
    if (*(uint8_t *)ctx == PX_RMA_RX_PUT) {
        px_rma_peer_t *p = ctx;
        p->applied += len;
        px_rma_check(p);
        return;
    }
    px_rma_stage_t *s = ctx;
    px_proto_win_t *w = s->w;
    size_t rlen = s->flags & PX_AM_RMA_CAS ? s->len / 2 : s->len;
    char *old = NULL;
    if (s->dst && (s->flags & PX_AM_RMA_FETCH)) {
        old = malloc(rlen ? rlen : 1);
        if (old)
            memcpy(old, s->dst, rlen);
    }
    if (s->dst) {
        if (s->flags & PX_AM_RMA_CAS) {
            if (!memcmp(s->dst, s->data, rlen))
                memcpy(s->dst, s->data + rlen, rlen);
        } else if (w->apply(s->op, s->type, s->dst, s->data, s->len)) {
            px_error("proto", "invalid accumulate from rank %d", w->peers[s->origin]);
        }
    }
    px_rma_peer_t *p = &w->p[s->origin];
    p->applied += s->len;
    /* a flush that this frame completes is told with the answer */
    int acks = old && p->wanting && px_rma_settled(p, p->want);
    if (s->flags & PX_AM_RMA_FETCH) {
        if (old)
            px_rma_answer(w, s->origin, old, rlen, s->res, s->at, old, acks);
        else
            px_rma_sync(w, s->origin, PX_RMA_S_GET_ERROR, 0, s->res);
    }
    free(s);
    if (acks)
        px_rma_want_done(p, 0);
    else
        px_rma_check(p);
}

/* A DATA frame that also acknowledges a flush (px_rma_answer). */
void px_proto_rma_data_acks(int peer, const px_am_hdr_t *h)
{
    px_proto_win_t *w = px_rma_win_find(h->ctx);
    if (!w || h->src < 0 || h->src >= w->size || w->peers[h->src] != peer) {
        px_error("proto", "one-sided answer from rank %d for an unknown window", peer);
        return;
    }
    if (w->p[h->src].acks_due > 0)
        w->p[h->src].acks_due--;
}

void px_proto_rma_register(void)
{
    px_chan_am_register(PX_AM_RMA_PUT, px_am_hdr_len[PX_AM_RMA_PUT], PX_CHAN_AM_STRIPED,
                        px_rma_am_put);
    px_chan_am_register(PX_AM_RMA_ACC, px_am_hdr_len[PX_AM_RMA_ACC], 0, px_rma_am_acc);
    px_chan_am_register(PX_AM_RMA_GET, px_am_hdr_len[PX_AM_RMA_GET], 0, px_rma_am_get);
    px_chan_am_register(PX_AM_RMA_SYNC, px_am_hdr_len[PX_AM_RMA_SYNC], 0, px_rma_am_sync);
}
