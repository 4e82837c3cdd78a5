#include "ofi_impl.h"
#include "../../util/clock.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PX_OFI_CQ_BATCH 16

/* ---------- reads of large frames ---------- */

static px_ofi_read_t *px_ofi_read_get(struct px_net_iface *s)
{
    px_ofi_read_t *rd = s->read_free;
    if (rd)
        s->read_free = rd->next;
    else if (!(rd = calloc(1, sizeof(*rd))))
        return NULL;
    rd->ctx.kind = PX_OFI_CTX_READ;
    return rd;
}

static void px_ofi_read_put(struct px_net_iface *s, px_ofi_read_t *rd)
{
    rd->next = s->read_free;
    s->read_free = rd;
}

void px_ofi_iface_free_reads(struct px_net_iface *s)
{
    while (s->read_free) {
        px_ofi_read_t *rd = s->read_free;
        s->read_free = rd->next;
        free(rd);
    }
}

/* The frame in ep->rx is over once no read is out: read whole (FIN and
 * rx_done), or cancelled (the same), or failed or given up by this side
 * (NAK, and the layer above is told of a failure). */
static void px_ofi_rx_check(struct px_net_ep *ep)
{
    px_ofi_rx_t *x = &ep->rx;
    struct px_net_iface *s = ep->iface;
    if (!x->active || x->chunked || x->inflight)
        return;
    if (!x->orphan && !x->failed && !x->canceled && x->next < x->len)
        return; /* more to read */
    x->active = 0;
    if (x->lmr) {
        px_ofi_mr_put(x->lmr, 0);
        x->lmr = NULL;
    }
    if (x->orphan || x->failed) {
        /* the sender takes its buffer back and sends the frame again */
        px_ofi_ctrl(ep, PX_OFI_NAK, x->cookie);
        s->st.naks_tx++;
        if (!x->orphan) {
            px_debug("ofi", "reading a frame of rank %d failed", ep->rank);
            s->rx->ep_failed(ep->owner, PX_ERR_LINK_RESET);
        }
    } else {
        px_ofi_ctrl(ep, PX_OFI_FIN, x->cookie);
        s->rx->rx_done(ep->owner, x->ctx);
    }
    if (!px_list_empty(&ep->held))
        px_ofi_ep_work(ep);
}

static void px_ofi_read_more(struct px_net_ep *ep)
{
    px_ofi_rx_t *x = &ep->rx;
    struct px_net_iface *s = ep->iface;
    while (!x->orphan && !x->canceled && !x->failed && x->next < x->len &&
           x->inflight < PX_OFI_READ_DEPTH) {
        /* the piece at x->next, within one segment */
        size_t off = x->next;
        int k = 0;
        while (k < x->nseg && off >= x->seg[k].len)
            off -= x->seg[k++].len;
        size_t n = x->seg[k].len - off;
        if (n > PX_OFI_READ_PIECE)
            n = PX_OFI_READ_PIECE;
        int slot = 0;
        while (x->rd[slot])
            slot++;
        px_ofi_read_t *rd = px_ofi_read_get(s);
        if (!rd) {
            x->failed = 1;
            return;
        }
        int rc = (int)fi_read(ep->rail->ep, x->dst + x->next, n, x->lmr ? x->lmr->desc : NULL,
                              ep->dest, x->seg[k].addr + off, x->seg[k].key, &rd->ctx);
        if (rc) {
            px_ofi_read_put(s, rd);
            if (rc == -FI_EAGAIN) {
                px_ofi_ep_work(ep);
                return;
            }
            px_debug("ofi", "fi_read from rank %d: %s", ep->rank, fi_strerror(-rc));
            x->failed = 1;
            return;
        }
        /* the read keeps what it writes through registered, whatever
         * becomes of the frame */
        if ((rd->lmr = x->lmr))
            rd->lmr->refs++;
        rd->rx = x;
        rd->rail = ep->rail;
        rd->rail->reads_out++;
        rd->len = n;
        x->rd[slot] = rd;
        x->inflight++;
        x->next += n;
        s->st.reads++;
    }
}

static void px_ofi_read_done(struct px_net_iface *s, px_ofi_read_t *rd, int err)
{
    px_ofi_rx_t *x = rd->rx;
    rd->rail->reads_out--;
    if (rd->lmr)
        px_ofi_mr_put(rd->lmr, 0);
    rd->lmr = NULL;
    if (err)
        s->st.read_errors++;
    px_ofi_read_put(s, rd);
    if (!x)
        return; /* of a frame given up */
    x->ep->events++;
    for (int i = 0; i < PX_OFI_READ_DEPTH; i++)
        if (x->rd[i] == rd)
            x->rd[i] = NULL;
    x->inflight--;
    if (err)
        x->failed = 1;
    else
        x->done += rd->len;
    px_ofi_read_more(x->ep);
    px_ofi_rx_check(x->ep);
}

/* ---------- frames ---------- */

/* The frame under way ends without rx_done: its sender voided it (a reset,
 * or a protocol fault). Reads still out write nothing the layer above
 * counts on; they end in the background. */
static void px_ofi_rx_abandon(struct px_net_ep *ep)
{
    px_ofi_rx_t *x = &ep->rx;
    if (!x->active)
        return;
    for (int i = 0; i < PX_OFI_READ_DEPTH; i++)
        if (x->rd[i]) {
            x->rd[i]->rx = NULL;
            x->rd[i] = NULL;
        }
    x->inflight = 0;
    if (x->lmr) {
        px_ofi_mr_put(x->lmr, 0);
        x->lmr = NULL;
    }
    x->active = 0;
    if (!x->orphan)
        ep->iface->rx->ep_failed(ep->owner, PX_ERR_LINK_RESET);
}

static void px_ofi_chunk_in(struct px_net_ep *ep, const char *p, size_t n)
{
    px_ofi_rx_t *x = &ep->rx;
    if (n > x->len - x->done) {
        ep->iface->st.rx_bad++;
        px_ofi_rx_abandon(ep);
        return;
    }
    if (x->dst && !x->canceled && !x->orphan && n)
        memcpy(x->dst + x->done, p, n);
    x->done += n;
    if (x->done < x->len)
        return;
    x->active = 0;
    if (!x->orphan)
        ep->iface->rx->rx_done(ep->owner, x->ctx);
}

static void px_ofi_rts_in(struct px_net_ep *ep, const px_ofi_wire_t *w, const char *h)
{
    struct px_net_iface *s = ep->iface;
    px_ofi_rx_t *x = &ep->rx;
    unsigned epoch = ep->epoch;
    s->st.rx_rts++;
    memcpy(&x->cookie, h, sizeof(x->cookie));
    h += sizeof(px_ofi_rts_t);
    x->nseg = w->nseg;
    memcpy(x->seg, h, (size_t)w->nseg * sizeof(px_ofi_seg_t));
    h += (size_t)w->nseg * sizeof(px_ofi_seg_t);
    x->dst = s->rx->rx_begin(ep->owner, h, w->hdr_len, w->len, &x->ctx);
    if (ep->epoch != epoch)
        x->orphan = 1; /* the layer above reset the endpoint meanwhile */
    else if (!x->dst)
        x->canceled = 1; /* nothing to read: FIN at once */
    else if (s->mr_local && !(x->lmr = px_ofi_mr_get(ep, x->dst, x->len)))
        x->failed = 1;
    px_ofi_read_more(ep);
    px_ofi_rx_check(ep);
}

/* One message of a frame, in its turn, the endpoint free to take it. */
static void px_ofi_frame_in(struct px_net_ep *ep, const char *m, size_t len)
{
    struct px_net_iface *s = ep->iface;
    px_ofi_wire_t w;
    px_ofi_rx_t *x = &ep->rx;
    memcpy(&w, m, sizeof(w));
    const char *h = m + sizeof(w);
    if (x->active) { /* a chunked frame: the sender sends its messages together */
        if (w.type == PX_OFI_CHUNK) {
            px_ofi_chunk_in(ep, h, len - sizeof(w));
            return;
        }
        s->st.rx_bad++;
        px_ofi_rx_abandon(ep);
    }
    if (w.type == PX_OFI_EAGER) {
        void *ctx = NULL;
        unsigned epoch = ep->epoch;
        s->st.rx_eager++;
        void *dst = s->rx->rx_begin(ep->owner, h, w.hdr_len, w.len, &ctx);
        if (ep->epoch != epoch)
            return; /* the layer above reset the endpoint meanwhile */
        if (dst && w.len)
            memcpy(dst, h + w.hdr_len, w.len);
        s->rx->rx_done(ep->owner, ctx);
        return;
    }
    if (w.type == PX_OFI_CHUNK) {
        s->st.rx_bad++; /* of a frame given up */
        return;
    }
    memset(x, 0, sizeof(*x));
    x->ep = ep;
    x->active = 1;
    x->len = w.len;
    if (w.type == PX_OFI_RTS) {
        px_ofi_rts_in(ep, &w, h);
        return;
    }
    unsigned epoch = ep->epoch;
    s->st.rx_long++;
    x->chunked = 1;
    x->dst = s->rx->rx_begin(ep->owner, h, w.hdr_len, w.len, &x->ctx);
    if (ep->epoch != epoch)
        x->orphan = 1; /* its chunks still come: they are skipped */
    px_ofi_chunk_in(ep, h + w.hdr_len, len - sizeof(w) - w.hdr_len);
}

static px_ofi_held_t *px_ofi_copy(const px_ofi_wire_t *w, const char *m, size_t len)
{
    px_ofi_held_t *h = malloc(sizeof(*h) + len);
    if (h) {
        h->from = (int)w->from;
        h->sub = w->sub;
        h->seq = w->seq;
        h->len = len;
        memcpy(h->data, m, len);
    }
    return h;
}

/* A message of a frame in its turn: taken now, or after the frame under
 * way (h: the message already copied, taken over). */
static void px_ofi_turn(struct px_net_ep *ep, const px_ofi_wire_t *w, const char *m, size_t len,
                        px_ofi_held_t *h)
{
    px_ofi_rx_t *x = &ep->rx;
    if (__builtin_expect(px_list_empty(&ep->held), 1) &&
        (!x->active || (x->chunked && w->type == PX_OFI_CHUNK))) {
        px_ofi_frame_in(ep, m, len);
        free(h);
        return;
    }
    ep->iface->st.rx_held++;
    if (h || (h = px_ofi_copy(w, m, len)))
        px_list_insert_tail(&ep->held, &h->link);
}

static void px_ofi_free_list(px_list_t *q)
{
    px_list_t *e, *t;
    px_list_for_each_safe(e, t, q) {
        px_list_del(e);
        free(px_container_of(e, px_ofi_held_t, link));
    }
}

/* The peer reset the subchannel (RESET, or a message of a later epoch):
 * what it sent before is void, the frame under way too. */
static void px_ofi_epoch_in(struct px_net_ep *ep, uint32_t epoch)
{
    ep->rx_epoch = epoch;
    ep->rx_next = 0;
    px_ofi_free_list(&ep->held);
    px_ofi_free_list(&ep->ooo);
    px_ofi_rx_abandon(ep);
}

/* The peer is closing (it has what it waited for): what is still queued
 * for it is dropped, and what is sent from now on, on every subchannel (the
 * BYE of a failed one may never come). */
static void px_ofi_bye_in(struct px_net_ep *ep)
{
    struct px_net_iface *s = ep->iface;
    for (int i = 0; i < PX_NET_MAX_SUB; i++) {
        struct px_net_ep *e = s->eps[ep->rank * PX_NET_MAX_SUB + i];
        if (e && !e->peer_done) {
            px_ofi_drop_sends(e, PX_ERR_LINK_DOWN);
            e->peer_done = 1;
        }
    }
}

/* A message on its endpoint: control acted on, the others handed on in
 * their order. */
static void px_ofi_ep_msg(struct px_net_ep *ep, const char *m, size_t len)
{
    struct px_net_iface *s = ep->iface;
    px_ofi_wire_t w;
    memcpy(&w, m, sizeof(w));
    int32_t age = (int32_t)(w.epoch - ep->rx_epoch);
    ep->used = 1;
    ep->events++;
    if (w.type >= PX_OFI_FIN) {
        if (w.type == PX_OFI_RESET) {
            if (age > 0)
                px_ofi_epoch_in(ep, w.epoch);
            return;
        }
        if (w.type == PX_OFI_BYE) {
            px_ofi_bye_in(ep);
            return;
        }
        uint64_t cookie;
        memcpy(&cookie, m + sizeof(w), sizeof(cookie));
        px_ofi_fin_in(ep, cookie, w.type == PX_OFI_NAK);
        return;
    }
    if (__builtin_expect(s->closing, 0))
        return; /* nothing goes up any more */
    if (__builtin_expect(age != 0, 0)) {
        if (age < 0) {
            s->st.rx_stale++;
            return;
        }
        px_ofi_epoch_in(ep, w.epoch);
    }
    if (__builtin_expect(w.seq != ep->rx_next, 0)) {
        /* overtaken by a later one: wait for it, sorted */
        px_ofi_held_t *h = (int32_t)(w.seq - ep->rx_next) > 0 ? px_ofi_copy(&w, m, len) : NULL;
        if (!h) {
            s->st.rx_stale++;
            return;
        }
        px_list_t *e = ep->ooo.prev;
        while (e != &ep->ooo && (int32_t)(px_container_of(e, px_ofi_held_t, link)->seq - w.seq) > 0)
            e = e->prev;
        px_list_insert_head(e, &h->link);
        s->st.rx_ooo++;
        return;
    }
    ep->rx_next++;
    px_ofi_turn(ep, &w, m, len, NULL);
    while (!px_list_empty(&ep->ooo)) {
        px_ofi_held_t *h = px_container_of(ep->ooo.next, px_ofi_held_t, link);
        if (h->seq != ep->rx_next)
            break;
        px_list_del(&h->link);
        ep->rx_next++;
        memcpy(&w, h->data, sizeof(w));
        px_ofi_turn(ep, &w, h->data, h->len, h);
    }
}

/* Checks a message before anything in it is used; 0 when it is valid. */
static int px_ofi_check(const struct px_net_iface *s, const char *m, size_t len)
{
    px_ofi_wire_t w;
    if (len < sizeof(w))
        return -1;
    memcpy(&w, m, sizeof(w));
    if (w.magic != PX_OFI_MAGIC || w.key != s->key || w.from >= (uint32_t)s->nranks ||
        w.from == (uint32_t)s->me || w.sub >= PX_NET_MAX_SUB || w.hdr_len > PX_NET_HDR_MAX)
        return -1;
    size_t body = len - sizeof(w);
    switch (w.type) {
    case PX_OFI_EAGER:
        return body >= w.hdr_len && w.len == body - w.hdr_len ? 0 : -1;
    case PX_OFI_LONG:
        return body >= w.hdr_len && body - w.hdr_len <= w.len ? 0 : -1;
    case PX_OFI_CHUNK:
        return w.len == body ? 0 : -1;
    case PX_OFI_FIN:
    case PX_OFI_NAK:
        return body >= sizeof(px_ofi_rts_t) ? 0 : -1;
    case PX_OFI_RESET:
    case PX_OFI_BYE:
        return 0;
    case PX_OFI_RTS: {
        px_ofi_seg_t seg;
        uint64_t sum = 0;
        size_t need = sizeof(px_ofi_rts_t) + (size_t)w.nseg * sizeof(seg) + w.hdr_len;
        if (w.nseg < 1 || w.nseg > PX_OFI_MAX_SEG || body < need)
            return -1;
        for (int i = 0; i < w.nseg; i++) {
            memcpy(&seg, m + sizeof(w) + sizeof(px_ofi_rts_t) + (size_t)i * sizeof(seg),
                   sizeof(seg));
            sum += seg.len;
        }
        return sum == w.len ? 0 : -1;
    }
    default:
        return -1;
    }
}

/* A message arrived on rail r. */
static void px_ofi_msg_in(px_ofi_rail_t *r, const char *m, size_t len)
{
    struct px_net_iface *s = r->s;
    px_ofi_wire_t w;
    if (px_ofi_check(s, m, len)) {
        s->st.rx_bad++;
        return;
    }
    memcpy(&w, m, sizeof(w));
    struct px_net_ep *ep = s->eps[w.from * PX_NET_MAX_SUB + w.sub];
    if (__builtin_expect(!ep || !ep->owner, 0)) {
        /* before this side made the endpoint: kept until it does */
        px_ofi_held_t *h = px_ofi_copy(&w, m, len);
        s->st.rx_early++;
        if (h)
            px_list_insert_tail(&s->early, &h->link);
        return;
    }
    if (ep->rail != r) {
        s->st.rx_bad++;
        return;
    }
    px_ofi_ep_msg(ep, m, len);
}

/* Messages that waited behind a frame, as far as the endpoint takes them. */
static void px_ofi_ep_drain(struct px_net_ep *ep)
{
    while (!px_list_empty(&ep->held)) {
        px_ofi_held_t *h = px_container_of(ep->held.next, px_ofi_held_t, link);
        px_ofi_wire_t w;
        memcpy(&w, h->data, sizeof(w));
        if (ep->rx.active && !(ep->rx.chunked && w.type == PX_OFI_CHUNK))
            return;
        px_list_del(&h->link);
        px_ofi_frame_in(ep, h->data, h->len);
        free(h);
    }
}

/* Messages that came before their endpoint, once it is there. */
static void px_ofi_early(struct px_net_iface *s)
{
    px_list_t q, *e, *t;
    s->early_check = 0;
    px_list_init(&q);
    px_list_for_each_safe(e, t, &s->early) {
        px_ofi_held_t *h = px_container_of(e, px_ofi_held_t, link);
        struct px_net_ep *ep = s->eps[h->from * PX_NET_MAX_SUB + h->sub];
        if (ep && ep->owner) {
            px_list_del(e);
            px_list_insert_tail(&q, e);
        }
    }
    px_list_for_each_safe(e, t, &q) {
        px_ofi_held_t *h = px_container_of(e, px_ofi_held_t, link);
        px_list_del(e);
        px_ofi_ep_msg(s->eps[h->from * PX_NET_MAX_SUB + h->sub], h->data, h->len);
        free(h);
    }
}

/* ---------- resets ---------- */

void px_ofi_drop_sends(struct px_net_ep *ep, px_status_t why)
{
    px_list_t q, *e, *t;
    px_list_init(&q);
    px_list_splice_tail(&q, &ep->sendq); /* detached: a callback may send again */
    px_list_splice_tail(&q, &ep->rts);
    ep->pending = 0;
    px_list_for_each_safe(e, t, &q) {
        px_ofi_qent_t *en = px_container_of(e, px_ofi_qent_t, link);
        px_list_del(e);
        if (!en->sop) {
            px_ofi_tx_put(px_container_of(en, px_ofi_buf_t, q));
            continue;
        }
        px_ofi_sop_t *op = px_container_of(en, px_ofi_sop_t, q);
        px_net_send_cb_t cb = op->cb;
        void *arg = op->arg;
        /* the peer may still be reading: its registrations close first */
        px_ofi_sop_free(op, 1);
        if (cb)
            cb(arg, why);
    }
}

void px_ofi_ep_reset(struct px_net_ep *ep)
{
    /* a new epoch: the peer voids what it still has of the old one */
    ep->epoch++;
    ep->tx_seq = 0;
    px_ofi_drop_sends(ep, PX_ERR_LINK_DOWN);
    px_ofi_ctrl(ep, PX_OFI_RESET, 0);
    /* the frame being received: given up, its sender told (NAK) once no
     * read is out */
    if (ep->rx.active) {
        ep->rx.orphan = 1;
        px_ofi_rx_check(ep);
    }
}

void px_ofi_ep_rx_cancel(struct px_net_ep *ep)
{
    if (ep->rx.active && !ep->rx.orphan) {
        ep->rx.canceled = 1;
        px_ofi_ep_work(ep); /* rx_done at the next pass, not inside the caller's upcall */
    }
}

const char *px_ofi_ep_describe(struct px_net_ep *ep)
{
    const px_ofi_rx_t *x = &ep->rx;
    int o = snprintf(ep->desc, sizeof(ep->desc), "%s", ep->rail->domain_name);
    if (ep->pending)
        o += snprintf(ep->desc + o, sizeof(ep->desc) - (size_t)o, ", %zu bytes to send",
                      ep->pending);
    if (x->active)
        snprintf(ep->desc + o, sizeof(ep->desc) - (size_t)o, ", %s %zu of %zu bytes",
                 x->chunked ? "receiving" : "reading", x->done, x->len);
    return ep->desc;
}

/* The path check of addr.c, to the discard port of the peer's address, not
 * to its endpoint's: a provider listening there (ofi_rxm) would take the
 * probe for a peer connecting. Its kernel's refusal says the path works. */
int px_ofi_ep_path_check(struct px_net_ep *ep, uint64_t timeout_ns)
{
    if (!ep->iface->ip)
        return PX_ERR_UNSUPPORTED;
    const px_net_addr_t *l = &ep->rail->addr;
    struct sockaddr_in to = ep->remote;
    to.sin_port = htons(9);
    return px_net_addr_path_check(&ep->chk, l->ifname, l->addr, &to, timeout_ns, "ofi", ep->rank);
}

void px_ofi_ep_free(struct px_net_ep *ep)
{
    px_list_t *e, *t;
    px_net_addr_path_check_end(&ep->chk);
    px_ofi_free_list(&ep->held);
    px_ofi_free_list(&ep->ooo);
    px_list_for_each_safe(e, t, &ep->sendq) {
        px_ofi_qent_t *en = px_container_of(e, px_ofi_qent_t, link);
        if (en->sop)
            px_ofi_sop_free(px_container_of(en, px_ofi_sop_t, q), 1);
    }
    px_list_for_each_safe(e, t, &ep->rts)
        px_ofi_sop_free(px_container_of(e, px_ofi_sop_t, q.link), 1);
    if (ep->rx.lmr)
        px_ofi_mr_put(ep->rx.lmr, 1);
    for (int i = 0; ep->mrc && i < px_params.ofi_mr_cache; i++)
        if (ep->mrc[i].mr)
            fi_close(&ep->mrc[i].mr->fid);
    free(ep->mrc);
    free(ep);
}

/* ---------- progress ---------- */

static void px_ofi_cq_error(px_ofi_rail_t *r)
{
    struct px_net_iface *s = r->s;
    struct fi_cq_err_entry err;
    memset(&err, 0, sizeof(err));
    if (fi_cq_readerr(r->cq, &err, 0) != 1)
        return;
    s->st.cq_errors++;
    px_ofi_ctx_t *c = err.op_context;
    if (!c)
        return;
    if (c->kind == PX_OFI_CTX_READ) {
        px_debug("ofi", "read: %s", fi_cq_strerror(r->cq, err.prov_errno, err.err_data, NULL, 0));
        px_ofi_read_done(s, (px_ofi_read_t *)c, err.err ? err.err : FI_EIO);
        return;
    }
    px_ofi_buf_t *b = (px_ofi_buf_t *)c;
    if (c->kind == PX_OFI_CTX_RX) {
        if (err.err != FI_ECANCELED && px_ofi_repost(r, b) == 0)
            s->st.rx_bad++;
        return;
    }
    /* a message that did not go: its subchannel fails (unless reset since) */
    struct px_net_ep *ep = b->ep;
    unsigned epoch = b->epoch;
    px_ofi_tx_done(b);
    px_debug("ofi", "send to rank %d: %s", ep ? ep->rank : -1,
             fi_cq_strerror(r->cq, err.prov_errno, err.err_data, NULL, 0));
    if (ep && ep->epoch == epoch && ep->owner)
        s->rx->ep_failed(ep->owner, px_ofi_status(err.err ? -err.err : -FI_EIO));
}

static int px_ofi_rail_poll(px_ofi_rail_t *r)
{
    struct fi_cq_data_entry ce[PX_OFI_CQ_BATCH];
    int n = (int)fi_cq_read(r->cq, ce, PX_OFI_CQ_BATCH);
    if (n == -FI_EAGAIN)
        return 0;
    if (n == -FI_EAVAIL) {
        px_ofi_cq_error(r);
        return 1;
    }
    if (n < 0)
        return 0;
    for (int i = 0; i < n; i++) {
        px_ofi_ctx_t *c = ce[i].op_context;
        if (c->kind == PX_OFI_CTX_TX) {
            px_ofi_tx_done((px_ofi_buf_t *)c);
        } else if (c->kind == PX_OFI_CTX_RX) {
            px_ofi_buf_t *b = (px_ofi_buf_t *)c;
            px_ofi_msg_in(r, b->data, ce[i].len);
            int rc = px_ofi_repost(r, b);
            if (rc)
                px_error("ofi", "%s on %s: cannot post a receive buffer again: %s", r->s->prov,
                         r->domain_name, fi_strerror(-rc));
        } else {
            px_ofi_read_done(r->s, (px_ofi_read_t *)c, 0);
        }
    }
    return n;
}

/* Endpoints with sends to push, reads to issue, frames to end or messages
 * waiting. */
static void px_ofi_work(struct px_net_iface *s)
{
    px_list_t q, *e, *t;
    px_list_init(&q);
    px_list_splice_tail(&q, &s->work);
    px_list_for_each_safe(e, t, &q) {
        struct px_net_ep *ep = px_container_of(e, struct px_net_ep, work);
        px_list_del(e);
        ep->queued = 0;
        px_ofi_pump(ep);
        if (ep->rx.active && !ep->rx.chunked) {
            px_ofi_read_more(ep);
            px_ofi_rx_check(ep);
        }
        px_ofi_ep_drain(ep);
    }
}

/* Whether the provider holds work of ep that must move. */
static int px_ofi_ep_busy(const struct px_net_ep *ep)
{
    return ep->posted || !px_list_empty(&ep->rts) || !px_list_empty(&ep->sendq) ||
           (ep->rx.active && ep->rx.inflight);
}

/* The watchdog (IP providers): a subchannel whose work has not moved for
 * PX_RAIL_DETECT gets a path check; no answer within as long again, and
 * it is reported failed. A peer that is only busy elsewhere answers. */
static void px_ofi_watch(struct px_net_iface *s, uint64_t now)
{
    uint64_t detect = (uint64_t)(px_params.rail_detect * 1e9);
    s->next_watch = now + detect / 4;
    for (int i = 0; i < s->neps; i++) {
        struct px_net_ep *ep = s->eplist[i];
        if (ep->peer_done || !ep->owner || !px_ofi_ep_busy(ep) || ep->events != ep->seen) {
            ep->seen = ep->events; /* it moves, or has nothing to move */
            ep->stall_since = now;
            if (ep->watching)
                px_net_addr_path_check_end(&ep->chk);
            ep->watching = 0;
            continue;
        }
        if (!ep->watching && now - ep->stall_since < detect)
            continue;
        ep->watching = 1;
        int p = px_ofi_ep_path_check(ep, detect);
        if (p == 0)
            continue;
        ep->watching = 0;
        ep->stall_since = now;
        if (p < 0) {
            px_debug("ofi",
                     "rank %d sub %d: nothing moved for %.2f s and the path does not "
                     "answer",
                     ep->rank, ep->sub, px_params.rail_detect);
            s->rx->ep_failed(ep->owner, PX_ERR_TIMEOUT);
        }
    }
}

int px_ofi_iface_progress(struct px_net_iface *s)
{
    int n = 0;
    for (int i = 0; i < s->nrail; i++) {
        px_ofi_rail_t *r = &s->rail[i];
        int k;
        while ((k = px_ofi_rail_poll(r)) == PX_OFI_CQ_BATCH)
            n += k;
        n += k;
        if (__builtin_expect(r->unposted != NULL, 0)) {
            px_ofi_buf_t *b = r->unposted; /* what is refused again goes back */
            r->unposted = NULL;
            while (b) {
                px_ofi_buf_t *next = b->next;
                px_ofi_repost(r, b);
                b = next;
            }
        }
    }
    if (__builtin_expect(s->early_check, 0))
        px_ofi_early(s);
    if (__builtin_expect(!px_list_empty(&s->ctrl), 0))
        px_ofi_ctrl_retry(s);
    if (!px_list_empty(&s->work))
        px_ofi_work(s);
    if (s->ip && s->neps && (++s->pass & 63) == 0) { /* the clock now and then */
        uint64_t now = px_time_ns();
        if (now >= s->next_watch)
            px_ofi_watch(s, now);
    }
    return n;
}

int px_ofi_iface_quiet(struct px_net_iface *s)
{
    if (s->epfd < 0 || !px_list_empty(&s->work) || !px_list_empty(&s->ctrl) || s->early_check)
        return 0;
    for (int i = 0; i < s->nrail; i++) {
        struct fid *f = &s->rail[i].cq->fid;
        if (s->rail[i].unposted || fi_trywait(s->rail[i].fabric, &f, 1) != FI_SUCCESS)
            return 0;
    }
    return 1;
}
