#include "ofi_impl.h"
#include "../../util/iov.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PX_OFI_PAGE 4096u
#define PX_OFI_CQ_BATCH 16
#define PX_OFI_ACCESS (FI_READ | FI_REMOTE_READ)

/* ---------- registrations ---------- */

static int px_ofi_reg(px_ofi_rail_t *r, void *buf, size_t len, uint64_t access,
                      struct fid_mr **mr_p)
{
    struct px_net_iface *s = r->s;
    int rc = fi_mr_reg(r->domain, buf, len, access, 0, s->mr_prov_key ? 0 : s->next_key++, 0, mr_p,
                       NULL);
    if (!rc && s->mr_endpoint) {
        rc = fi_mr_bind(*mr_p, &r->ep->fid, 0);
        if (!rc)
            rc = fi_mr_enable(*mr_p);
        if (rc) {
            fi_close(&(*mr_p)->fid);
            *mr_p = NULL;
        }
    }
    s->st.mr_regs += !rc;
    return rc;
}

/* A registration covering [p, p + len) for ep's transfers: from the cache,
 * or made now (kept in the cache when a place is free or unused). */
px_ofi_mr_t *px_ofi_mr_get(struct px_net_ep *ep, const void *p, size_t len)
{
    uintptr_t a = (uintptr_t)p;
    px_ofi_mr_t *slot = NULL;
    int n = (int)px_params.ofi_mr_cache;
    for (int i = 0; i < n && ep->mrc; i++) {
        px_ofi_mr_t *m = &ep->mrc[i];
        if (m->mr && a >= m->base && a + len <= m->base + m->len) {
            m->refs++;
            m->used = ++ep->clock;
            ep->iface->st.mr_hits++;
            return m;
        }
        if (!m->refs && (!slot || (slot->mr && (!m->mr || m->used < slot->used))))
            slot = m;
    }
    if (slot && slot->mr) {
        fi_close(&slot->mr->fid);
        slot->mr = NULL;
    }
    if (!slot && !(slot = calloc(1, sizeof(*slot))))
        return NULL;
    /* whole pages: the next transfer from around here finds it too */
    uintptr_t base = a & ~(uintptr_t)(PX_OFI_PAGE - 1);
    size_t span = ((a + len + PX_OFI_PAGE - 1) & ~(uintptr_t)(PX_OFI_PAGE - 1)) - base;
    struct fid_mr *mr;
    int rc = px_ofi_reg(ep->rail, (void *)base, span, PX_OFI_ACCESS, &mr);
    if (rc) {
        px_debug("ofi", "registering %zu bytes for rank %d: %s", span, ep->rank, fi_strerror(-rc));
        if (!(slot >= ep->mrc && slot < ep->mrc + n))
            free(slot);
        return NULL;
    }
    slot->mr = mr;
    slot->base = base;
    slot->len = span;
    slot->desc = fi_mr_desc(mr);
    slot->key = fi_mr_key(mr);
    slot->refs = 1;
    slot->cached = ep->mrc && slot >= ep->mrc && slot < ep->mrc + n;
    slot->used = ++ep->clock;
    return slot;
}

/* close: the peer must not read through it any more (a reset) */
void px_ofi_mr_put(px_ofi_mr_t *m, int close)
{
    if (close && m->mr) {
        fi_close(&m->mr->fid);
        m->mr = NULL;
    }
    if (--m->refs > 0)
        return;
    if (!m->cached) {
        if (m->mr)
            fi_close(&m->mr->fid);
        free(m);
    }
}

/* ---------- message buffers ---------- */

static px_ofi_slab_t *px_ofi_slab_new(px_ofi_rail_t *r, int n, int kind)
{
    struct px_net_iface *s = r->s;
    px_ofi_slab_t *sl = calloc(1, sizeof(*sl));
    size_t bytes = ((size_t)n * s->bufsize + PX_OFI_PAGE - 1) & ~(size_t)(PX_OFI_PAGE - 1);
    if (!sl)
        return NULL;
    sl->bufs = calloc((size_t)n, sizeof(*sl->bufs));
    sl->mem = aligned_alloc(PX_OFI_PAGE, bytes);
    if (!sl->bufs || !sl->mem ||
        (s->mr_local && px_ofi_reg(r, sl->mem, bytes, FI_SEND | FI_RECV, &sl->mr) != 0)) {
        free(sl->bufs);
        free(sl->mem);
        free(sl);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        px_ofi_buf_t *b = &sl->bufs[i];
        b->ctx.kind = kind;
        b->rail = r;
        b->data = sl->mem + (size_t)i * s->bufsize;
        b->desc = sl->mr ? fi_mr_desc(sl->mr) : NULL;
        if (kind == PX_OFI_CTX_TX) {
            b->next = r->tx_free;
            r->tx_free = b;
        }
    }
    return sl;
}

static void px_ofi_slab_free(px_ofi_slab_t *sl)
{
    if (sl->mr)
        fi_close(&sl->mr->fid);
    free(sl->bufs);
    free(sl->mem);
    free(sl);
}

px_ofi_buf_t *px_ofi_tx_grow(px_ofi_rail_t *r)
{
    px_ofi_slab_t *sl = px_ofi_slab_new(r, PX_OFI_SLAB, PX_OFI_CTX_TX);
    if (!sl)
        return NULL;
    sl->next = r->slabs;
    r->slabs = sl;
    px_ofi_buf_t *b = r->tx_free;
    r->tx_free = b->next;
    return b;
}

int px_ofi_repost(px_ofi_rail_t *r, px_ofi_buf_t *b)
{
    int rc = fi_recv(r->ep, b->data, r->s->bufsize, b->desc, FI_ADDR_UNSPEC, &b->ctx);
    if (rc == -FI_EAGAIN) {
        b->next = r->unposted;
        r->unposted = b;
        return 0;
    }
    return rc;
}

px_status_t px_ofi_rail_bufs(px_ofi_rail_t *r)
{
    int n = (int)px_params.ofi_rx_bufs;
    px_ofi_slab_t *tx = px_ofi_slab_new(r, PX_OFI_SLAB, PX_OFI_CTX_TX);
    if (!tx)
        return PX_ERR_NO_MEMORY;
    r->slabs = tx;
    if (!(r->rx_slab = px_ofi_slab_new(r, n, PX_OFI_CTX_RX)))
        return PX_ERR_NO_MEMORY;
    for (int i = 0; i < n; i++) {
        int rc = px_ofi_repost(r, &r->rx_slab->bufs[i]);
        if (rc) {
            px_error("ofi", "%s on %s: cannot post receive buffers: %s", r->s->prov, r->domain_name,
                     fi_strerror(-rc));
            return px_ofi_status(rc);
        }
    }
    return PX_OK;
}

void px_ofi_rail_free_bufs(px_ofi_rail_t *r)
{
    while (r->slabs) {
        px_ofi_slab_t *sl = r->slabs;
        r->slabs = sl->next;
        px_ofi_slab_free(sl);
    }
    if (r->rx_slab)
        px_ofi_slab_free(r->rx_slab);
    r->rx_slab = NULL;
    r->tx_free = r->unposted = NULL;
}

/* ---------- sending ---------- */

static inline void px_ofi_wire_fill(struct px_net_ep *ep, px_ofi_wire_t *w, int type,
                                    size_t hdr_len, uint64_t len)
{
    w->magic = PX_OFI_MAGIC;
    w->type = (uint8_t)type;
    w->hdr_len = (uint8_t)hdr_len;
    w->from = (uint32_t)ep->iface->me;
    w->sub = (uint16_t)ep->sub;
    w->nseg = 0;
    w->epoch = ep->epoch;
    w->seq = 0; /* px_ofi_post numbers it */
    w->len = len;
    w->key = ep->iface->key;
}

/* Hands a built message to the provider: 0, -FI_EAGAIN (try later) or an
 * error. An injected message's buffer is free at once. */
static int px_ofi_post(struct px_net_ep *ep, px_ofi_buf_t *b)
{
    struct px_net_iface *s = ep->iface;
    px_ofi_wire_t *w = (px_ofi_wire_t *)b->data;
    int rc;
    /* a message of a frame takes the next number when it goes (a refused
     * one keeps it for its next try: nothing else goes meanwhile) */
    int ordered = w->type < PX_OFI_FIN;
    if (ordered)
        w->seq = ep->tx_seq;
    /* BYE wants its completion: the endpoint closes once it went */
    if (b->len <= s->inject && w->type != PX_OFI_BYE) {
        rc = (int)fi_inject(ep->rail->ep, b->data, b->len, ep->dest);
        if (rc == 0) {
            s->st.tx_inject++;
            px_ofi_tx_put(b);
        }
    } else {
        b->ep = ep;
        b->epoch = ep->epoch;
        rc = (int)fi_send(ep->rail->ep, b->data, b->len, b->desc, ep->dest, &b->ctx);
        /* with manual progress the provider may still hold it: pending
         * until its completion (px_ofi_tx_done) */
        if (rc == 0) {
            ep->pending += b->len;
            ep->posted++;
        }
    }
    ep->tx_seq += ordered && rc == 0;
    return rc;
}

void px_ofi_tx_done(px_ofi_buf_t *b)
{
    struct px_net_ep *ep = b->ep;
    if (ep) {
        ep->posted--;
        ep->events++;
        if (ep->epoch == b->epoch)
            ep->pending -= b->len < ep->pending ? b->len : ep->pending;
        if (ep->posted == PX_OFI_EP_POSTED - 1 && !px_list_empty(&ep->sendq))
            px_ofi_ep_work(ep); /* a chunked frame may go on */
    }
    b->ep = NULL;
    px_ofi_tx_put(b);
}

/* A control message (FIN or NAK of the peer's transfer `cookie`, RESET, BYE);
 * queued when the provider wants progress first. */
void px_ofi_ctrl(struct px_net_ep *ep, int type, uint64_t cookie)
{
    struct px_net_iface *s = ep->iface;
    px_ofi_buf_t *b = ep->peer_done ? NULL : px_ofi_tx_get(ep->rail);
    if (ep->peer_done)
        return;
    if (b) {
        px_ofi_wire_fill(ep, (px_ofi_wire_t *)b->data, type, 0, 0);
        memcpy(b->data + sizeof(px_ofi_wire_t), &cookie, sizeof(cookie));
        b->len = sizeof(px_ofi_wire_t) + sizeof(px_ofi_rts_t);
        int rc = px_ofi_post(ep, b);
        if (rc == 0)
            return;
        px_ofi_tx_put(b);
        if (rc != -FI_EAGAIN) {
            px_debug("ofi", "control message %d to rank %d: %s", type, ep->rank, fi_strerror(-rc));
            return; /* its peer finds the subchannel failing */
        }
    }
    px_ofi_held_t *h = malloc(sizeof(*h) + sizeof(cookie));
    if (!h)
        return;
    h->from = ep->rank;
    h->sub = ep->sub;
    h->len = (size_t)type;
    memcpy(h->data, &cookie, sizeof(cookie));
    px_list_insert_tail(&s->ctrl, &h->link);
}

void px_ofi_ctrl_retry(struct px_net_iface *s)
{
    px_list_t q, *e, *t;
    px_list_init(&q);
    px_list_splice_tail(&q, &s->ctrl); /* px_ofi_ctrl may queue again */
    px_list_for_each_safe(e, t, &q) {
        px_ofi_held_t *h = px_container_of(e, px_ofi_held_t, link);
        uint64_t cookie;
        memcpy(&cookie, h->data, sizeof(cookie));
        px_list_del(e);
        px_ofi_ctrl(s->eps[h->from * PX_NET_MAX_SUB + h->sub], (int)h->len, cookie);
        free(h);
    }
}

/* The next message of a chunked frame into op->ready. */
static int px_ofi_chunk_build(struct px_net_ep *ep, px_ofi_sop_t *op)
{
    struct px_net_iface *s = ep->iface;
    px_ofi_buf_t *b = px_ofi_tx_get(ep->rail);
    if (!b)
        return -FI_ENOMEM;
    px_ofi_wire_t *w = (px_ofi_wire_t *)b->data;
    size_t o = sizeof(*w), room, n;
    if (op->off == 0) {
        px_ofi_wire_fill(ep, w, PX_OFI_LONG, op->hdr_len, op->len);
        memcpy(b->data + o, op->hdr, op->hdr_len);
        o += op->hdr_len;
    }
    room = s->bufsize - o;
    n = op->len - op->off < room ? op->len - op->off : room;
    if (op->off)
        px_ofi_wire_fill(ep, w, PX_OFI_CHUNK, 0, n);
    struct iovec v[PX_OFI_MAX_SEG + 8];
    int nv = px_iov_slice(op->iov, op->iovcnt, op->off, n, v, (int)(sizeof(v) / sizeof(v[0])));
    px_net_iov_gather(b->data + o, v, nv);
    b->len = o + n;
    op->off += n;
    op->ready = b;
    op->ready_n = n;
    s->st.tx_chunks++;
    return 0;
}

/* Posts what is left of a chunked frame: 1 when all of it went, 0 when the
 * provider wants progress first, or an error. */
static int px_ofi_chunk_push(struct px_net_ep *ep, px_ofi_sop_t *op)
{
    for (;;) {
        if (!op->ready) {
            if (op->off == op->len && op->len)
                return 1;
            if (ep->posted >= PX_OFI_EP_POSTED)
                return 0; /* the rest once some went (px_ofi_tx_done) */
            int rc = px_ofi_chunk_build(ep, op);
            if (rc)
                return rc;
        }
        size_t n = op->ready_n;
        int rc = px_ofi_post(ep, op->ready);
        if (rc == -FI_EAGAIN) {
            ep->iface->st.tx_again++;
            return 0;
        }
        if (rc) {
            px_ofi_tx_put(op->ready);
            op->ready = NULL;
            return rc;
        }
        op->ready = NULL;
        ep->pending -= n < ep->pending ? n : ep->pending;
    }
}

/* Posts the endpoint's send queue in order until the provider wants
 * progress. */
void px_ofi_pump(struct px_net_ep *ep)
{
    while (!px_list_empty(&ep->sendq)) {
        px_ofi_qent_t *q = px_container_of(ep->sendq.next, px_ofi_qent_t, link);
        int rc;
        if (q->sop) {
            px_ofi_sop_t *op = px_container_of(q, px_ofi_sop_t, q);
            rc = px_ofi_chunk_push(ep, op);
            if (rc == 1) {
                px_list_del(&q->link);
                if (op->cb)
                    op->cb(op->arg, PX_OK);
                free(op);
                continue;
            }
        } else {
            px_ofi_buf_t *b = px_container_of(q, px_ofi_buf_t, q);
            rc = px_ofi_post(ep, b);
            if (rc == 0) {
                px_list_del(&q->link);
                ep->pending -= b->len < ep->pending ? b->len : ep->pending;
                continue;
            }
            ep->iface->st.tx_again += rc == -FI_EAGAIN;
        }
        if (rc == 0 || rc == -FI_EAGAIN) {
            px_ofi_ep_work(ep);
            return;
        }
        /* the provider refuses the subchannel: its sends end here */
        px_status_t why = px_ofi_status(rc);
        px_debug("ofi", "send to rank %d sub %d: %s", ep->rank, ep->sub, fi_strerror(-rc));
        ep->iface->rx->ep_failed(ep->owner, why);
        return;
    }
}

/* A message built in b goes now, or after those queued before it. */
static px_status_t px_ofi_send_buf(struct px_net_ep *ep, px_ofi_buf_t *b)
{
    if (__builtin_expect(px_list_empty(&ep->sendq), 1)) {
        int rc = px_ofi_post(ep, b);
        if (rc == 0)
            return PX_OK;
        if (rc != -FI_EAGAIN) {
            px_ofi_tx_put(b);
            px_debug("ofi", "send to rank %d sub %d: %s", ep->rank, ep->sub, fi_strerror(-rc));
            return px_ofi_status(rc);
        }
        ep->iface->st.tx_again++;
    }
    b->q.sop = 0;
    px_list_insert_tail(&ep->sendq, &b->q.link);
    ep->pending += b->len;
    px_ofi_ep_work(ep);
    return PX_OK;
}

static px_ofi_sop_t *px_ofi_sop_new(const void *hdr, size_t hdr_len, const struct iovec *iov,
                                    int iovcnt, size_t len, px_net_send_cb_t cb, void *arg)
{
    px_ofi_sop_t *op = calloc(1, sizeof(*op) + (size_t)iovcnt * sizeof(*iov));
    if (!op)
        return NULL;
    op->q.sop = 1;
    op->cb = cb;
    op->arg = arg;
    op->len = len;
    op->hdr_len = (uint8_t)hdr_len;
    memcpy(op->hdr, hdr, hdr_len);
    op->iovcnt = iovcnt;
    memcpy(op->iov, iov, (size_t)iovcnt * sizeof(*iov));
    return op;
}

void px_ofi_sop_free(px_ofi_sop_t *op, int close)
{
    for (int i = 0; i < op->nmr; i++)
        px_ofi_mr_put(op->mr[i], close);
    if (op->ready)
        px_ofi_tx_put(op->ready);
    free(op);
}

/* A large frame as an RTS naming its registered pieces; the receiver reads
 * them and answers FIN, which completes the send. PX_ERR_BUSY: a piece
 * could not be registered (the frame goes in messages instead). */
static px_status_t px_ofi_send_rts(struct px_net_ep *ep, px_ofi_sop_t *op)
{
    struct px_net_iface *s = ep->iface;
    px_ofi_seg_t seg[PX_OFI_MAX_SEG];
    int nseg = 0;
    for (int i = 0; i < op->iovcnt; i++) {
        if (!op->iov[i].iov_len)
            continue;
        px_ofi_mr_t *m = px_ofi_mr_get(ep, op->iov[i].iov_base, op->iov[i].iov_len);
        if (!m) {
            while (op->nmr)
                px_ofi_mr_put(op->mr[--op->nmr], 0);
            return PX_ERR_BUSY;
        }
        op->mr[op->nmr++] = m;
        uintptr_t a = (uintptr_t)op->iov[i].iov_base;
        seg[nseg++] = (px_ofi_seg_t){
            .addr = s->mr_virt ? a : a - m->base, .len = op->iov[i].iov_len, .key = m->key};
    }
    px_ofi_buf_t *b = px_ofi_tx_get(ep->rail);
    if (!b)
        return PX_ERR_NO_MEMORY;
    px_ofi_wire_t *w = (px_ofi_wire_t *)b->data;
    px_ofi_wire_fill(ep, w, PX_OFI_RTS, op->hdr_len, op->len);
    w->nseg = (uint16_t)nseg;
    op->cookie = s->next_cookie++;
    char *p = b->data + sizeof(*w);
    memcpy(p, &op->cookie, sizeof(op->cookie));
    p += sizeof(px_ofi_rts_t);
    memcpy(p, seg, (size_t)nseg * sizeof(seg[0]));
    p += (size_t)nseg * sizeof(seg[0]);
    memcpy(p, op->hdr, op->hdr_len);
    b->len = (size_t)(p - b->data) + op->hdr_len;
    px_status_t st = px_ofi_send_buf(ep, b);
    if (st != PX_OK)
        return st;
    s->st.tx_rts++;
    px_list_insert_tail(&ep->rts, &op->q.link);
    ep->pending += op->len;
    return PX_INPROGRESS;
}

px_status_t px_ofi_ep_send(struct px_net_ep *ep, const void *hdr, size_t hdr_len,
                           const struct iovec *iov, int iovcnt, px_net_send_cb_t cb, void *arg)
{
    struct px_net_iface *s = ep->iface;
    size_t len = px_net_iov_len(iov, iovcnt);
    if (hdr_len > PX_NET_HDR_MAX || iovcnt < 0)
        return PX_ERR_INVALID_PARAM;
    if (__builtin_expect(ep->peer_done, 0))
        return PX_OK; /* the peer is finalizing (BYE): nothing reaches it any more */
    ep->used = 1;
    if (__builtin_expect(len <= s->inline_max, 1)) {
        /* copied: the caller's buffer is free at once */
        px_ofi_buf_t *b = px_ofi_tx_get(ep->rail);
        if (!b)
            return PX_ERR_NO_MEMORY;
        px_ofi_wire_fill(ep, (px_ofi_wire_t *)b->data, PX_OFI_EAGER, hdr_len, len);
        memcpy(b->data + sizeof(px_ofi_wire_t), hdr, hdr_len);
        px_net_iov_gather(b->data + sizeof(px_ofi_wire_t) + hdr_len, iov, iovcnt);
        b->len = sizeof(px_ofi_wire_t) + hdr_len + len;
        s->st.tx_eager++;
        return px_ofi_send_buf(ep, b);
    }
    px_ofi_sop_t *op = px_ofi_sop_new(hdr, hdr_len, iov, iovcnt, len, cb, arg);
    if (!op)
        return PX_ERR_NO_MEMORY;
    if (s->rma && iovcnt <= PX_OFI_MAX_SEG) {
        px_status_t st = px_ofi_send_rts(ep, op);
        if (st != PX_ERR_BUSY) {
            if (st != PX_INPROGRESS)
                px_ofi_sop_free(op, 0);
            return st;
        }
    }
    /* in messages, copied: done once the last one is built */
    ep->pending += len;
    if (px_list_empty(&ep->sendq)) {
        int rc = px_ofi_chunk_push(ep, op);
        if (rc == 1) {
            free(op);
            return PX_OK;
        }
        if (rc < 0) {
            ep->pending -= len - op->off;
            px_ofi_sop_free(op, 0);
            return px_ofi_status(rc);
        }
    }
    px_list_insert_tail(&ep->sendq, &op->q.link);
    px_ofi_ep_work(ep);
    return PX_INPROGRESS;
}

size_t px_ofi_ep_pending(struct px_net_ep *ep) { return ep->peer_done ? 0 : ep->pending; }

/* The FIN or NAK of transfer `cookie`. */
void px_ofi_fin_in(struct px_net_ep *ep, uint64_t cookie, int nak)
{
    struct px_net_iface *s = ep->iface;
    px_list_t *e, *t;
    px_list_for_each_safe(e, t, &ep->rts) {
        px_ofi_sop_t *op = px_container_of(e, px_ofi_sop_t, q.link);
        if (op->cookie != cookie)
            continue;
        px_list_del(e);
        ep->pending -= op->len < ep->pending ? op->len : ep->pending;
        if (nak)
            s->st.naks_rx++;
        else
            s->st.tx_bytes_read += op->len;
        /* a refused transfer's pieces are closed: a read still on its way
         * must find nothing */
        px_net_send_cb_t cb = op->cb;
        void *arg = op->arg;
        px_ofi_sop_free(op, nak);
        if (cb)
            cb(arg, nak ? PX_ERR_LINK_RESET : PX_OK);
        return;
    }
    s->st.fins_late++; /* a transfer this side gave up (reset) */
}
