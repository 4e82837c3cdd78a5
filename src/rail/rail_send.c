/* Sending: a frame goes whole (with its record under fault tolerance) or
 * as a striped block of records, one per subchannel the policy gives a
 * share; frames beyond the window wait in the backlog, striped blocks
 * beyond the bytes allowed in flight in the deferred queue. */
#include "rail_impl.h"

#include <stdio.h>

/* A header-only control frame (ACK, PING, PONG) on subchannel si. */
void px_rail_send_ctl(px_rail_vc_t *vc, int si, uint8_t type, uint8_t flags, uint32_t seq,
                      uint64_t val)
{
    px_rail_send_ctlx(vc, si, type, flags, seq, val, NULL, 0);
}

void px_rail_send_ctlx(px_rail_vc_t *vc, int si, uint8_t type, uint8_t flags, uint32_t seq,
                       uint64_t val, const void *more, size_t len)
{
    uint8_t buf[PX_NET_HDR_MAX];
    px_rail_hdr_t h;
    px_rail_sub_t *s = &vc->sub[si];
    memset(&h, 0, sizeof(h));
    h.seq = seq;
    h.off = val;
    px_rail_hdr_fill(vc, &h, type, flags, si);
    memcpy(buf, &h, sizeof(h));
    if (len)
        memcpy(buf + sizeof(h), more, len);
    px_status_t st = vc->rail->ops->ep_send(s->ep, buf, sizeof(h) + len, NULL, 0, NULL, NULL);
    if (st >= 0) {
        s->last_tx_ns = vc->rail->now;
        if (type == PX_RAIL_ACK)
            s->st->acks_tx++;
    } else if (s->state != PX_SUB_DOWN) {
        px_rail_sub_down(s, st);
    }
}

/* Without fault tolerance: a frame goes straight to the transport with the
 * caller's completion and is forgotten once written. */
static px_status_t px_rail_send_frame(px_rail_vc_t *vc, int si, const void *hdr, size_t hdr_len,
                                      const struct iovec *iov, int iovcnt, uint8_t hflags,
                                      px_net_send_cb_t cb, void *arg)
{
    uint8_t buf[PX_NET_HDR_MAX];
    px_rail_hdr_t *h = (px_rail_hdr_t *)buf;
    px_rail_sub_t *s = &vc->sub[si];

    if (hdr_len + sizeof(*h) > sizeof(buf))
        return PX_ERR_INVALID_PARAM;
    h->seq = vc->tx_seq;
    h->oseq = (hflags & PX_RAIL_H_UNORD) ? 0 : vc->tx_oseq;
    h->off = 0;
    px_rail_hdr_fill(vc, h, PX_RAIL_DATA, hflags, si);
    memcpy(buf + sizeof(*h), hdr, hdr_len);
    const px_net_ops_t *ops = vc->rail->ops;
    px_status_t st = ((hflags & PX_RAIL_H_UNORD) ? ops->ep_send_bulk : ops->ep_send)(
        s->ep, buf, sizeof(*h) + hdr_len, iov, iovcnt, cb, arg);
    if (st >= 0) {
        vc->tx_seq++;
        if (!(hflags & PX_RAIL_H_UNORD))
            vc->tx_oseq++;
        s->st->frames_tx++;
        s->st->bytes_tx += px_net_iov_len(iov, iovcnt);
        s->used = 1;
    }
    return st;
}

/* Room in vc->tx for every record under way plus the PX_NET_MAX_SUB a
 * caller may take before numbering them (stripes, re-split pieces). */
static int px_rail_tx_room(px_rail_vc_t *vc)
{
    uint32_t need = vc->tx_seq - vc->tx_acked + PX_NET_MAX_SUB + 1, cap = vc->tx_cap;
    if (__builtin_expect(need <= cap, 1))
        return 0;
    while (cap < need)
        cap *= 2;
    px_rail_tx_t **tx = calloc(cap, sizeof(*tx));
    if (!tx)
        return -1;
    for (uint32_t q = vc->tx_acked; q != vc->tx_seq; q++)
        tx[q & (cap - 1)] = vc->tx[q & (vc->tx_cap - 1)];
    free(vc->tx);
    vc->tx = tx;
    vc->tx_cap = cap;
    return 0;
}

px_rail_tx_t *px_rail_tx_get(px_rail_vc_t *vc)
{
    px_rail_t *r = vc->rail;
    if (px_rail_tx_room(vc) < 0)
        return NULL;
    px_rail_tx_t *x = r->txfree;
    if (x) {
        r->txfree = x->next;
    } else {
        x = malloc(sizeof(*x));
        if (!x)
            return NULL;
        x->heap = NULL;
        x->heap_cap = 0;
    }
    x->vc = vc;
    x->msg = NULL;
    x->cb = NULL;
    x->wire = x->acked = x->resend = x->tries = x->again = x->npieces = 0;
    x->told = x->inbuf = x->rel_ok = x->bulk = 0;
    x->area = NULL;
    x->staged = 0;
    x->off = 0;
    x->sub = -1;
    return x;
}

void px_rail_tx_put(px_rail_t *r, px_rail_tx_t *x)
{
    if (r->stage_x == x)
        r->stage_x = NULL;
    if (x->inbuf) {
        x->inbuf = 0;
        if (--r->rel_live == 0)
            r->rel_used = 0;
    }
    x->area = NULL;
    if (x->heap_cap > x->vc->rail->copy_max) { /* keep only eager-sized buffers around */
        free(x->heap);
        x->heap = NULL;
        x->heap_cap = 0;
    }
    x->next = r->txfree;
    r->txfree = x;
}

/* Copies the payload into the record (the caller's buffer is free at once). */
static int px_rail_tx_copy(px_rail_tx_t *x, const struct iovec *iov, int iovcnt, size_t len)
{
    char *d = x->small;
    if (len > PX_RAIL_INLINE) {
        if (x->heap_cap < len) {
            char *h = realloc(x->heap, len);
            if (!h)
                return -1;
            x->heap = h;
            x->heap_cap = len;
        }
        d = x->heap;
    }
    px_net_iov_gather(d, iov, iovcnt);
    x->iov[0].iov_base = d;
    x->iov[0].iov_len = len;
    x->iovcnt = len ? 1 : 0;
    return 0;
}

/* A record of block m is done (told: its caller was told already). */
static void px_rail_msg_event(px_rail_msg_t *m, int told)
{
    if (!told && --m->users == 0)
        m->cb(m->arg, m->st);
    if (--m->open == 0)
        free(m);
}

/* A record is done when acknowledged and no longer held by a transport. */
void px_rail_tx_finish(px_rail_tx_t *x)
{
    px_rail_t *r = x->vc->rail;
    px_rail_msg_t *m = x->msg;
    px_net_send_cb_t cb = x->cb;
    void *arg = x->arg;
    px_status_t st = x->vc->failed ? PX_ERR_PEER_UNREACHABLE : PX_OK;
    px_rail_tx_put(r, x);
    if (m) {
        if (st != PX_OK)
            m->st = st;
        px_rail_msg_event(m, x->told);
    } else if (cb) {
        cb(arg, st);
    }
}

void px_rail_vc_cancel(px_rail_vc_t *vc, px_status_t why)
{
    px_rail_t *r = vc->rail;
    px_list_t *e, *t;
    px_rail_tx_t *done = NULL;
    for (uint32_t q = vc->tx_acked; q != vc->tx_seq; q++) {
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (!x || x->seq != q)
            continue;
        vc->tx[q & (vc->tx_cap - 1)] = NULL;
        x->acked = 1; /* nothing more will come for it */
        if (!x->wire) {
            x->next = done;
            done = x;
        }
    }
    vc->tx_acked = vc->tx_seq;
    vc->inflight = vc->bulk_out = 0;
    for (int i = 0; i < vc->nsub; i++) /* records the transports hold end in their callbacks */
        r->ops->ep_reset(vc->sub[i].ep);
    while (done) {
        px_rail_tx_t *x = done;
        done = x->next;
        px_rail_tx_finish(x);
    }
    px_list_for_each_safe(e, t, &vc->backlog) {
        px_rail_backlog_t *b = px_container_of(e, px_rail_backlog_t, link);
        px_list_del(e);
        if (b->copy)
            free(b->copy);
        else if (b->cb)
            b->cb(b->arg, why);
        free(b);
    }
    px_list_for_each_safe(e, t, &vc->deferred) {
        px_rail_backlog_t *b = px_container_of(e, px_rail_backlog_t, link);
        px_list_del(e);
        b->cb(b->arg, why);
        free(b);
    }
    vc->resend_pending = 0;
}

static void px_rail_wire_cb(void *arg, px_status_t st)
{
    px_rail_tx_t *x = arg;
    x->wire = 0;
    x->vc->on_wire--;
    if (x->acked) {
        px_rail_tx_finish(x);
        return;
    }
    if (st == PX_OK && x->vc->rail->release && px_rail_caller_held(x))
        px_rail_release_mark(x->vc);
    /* marked to go again while the transport still wrote it (px_rail_resend
     * skips such records): it goes now */
    if (st == PX_OK && x->resend)
        px_rail_resend_mark(x->vc);
    if (st != PX_OK) {
        /* the transport dropped it (failing subchannel): send it again */
        px_rail_vc_t *vc = x->vc;
        if (!vc->rail->ft) {
            if (x->msg)
                x->msg->st = st;
            return;
        }
        if (!x->resend) {
            x->resend = 1;
            if (x->sub >= 0 && vc->sub[x->sub].unacked)
                vc->sub[x->sub].unacked--;
        }
        px_rail_resend_mark(vc);
    }
}

/* Sends (or sends again) record x on subchannel si. */
void px_rail_xmit(px_rail_vc_t *vc, px_rail_tx_t *x, int si)
{
    uint8_t buf[PX_NET_HDR_MAX];
    px_rail_hdr_t *h = (px_rail_hdr_t *)buf;
    px_rail_sub_t *s = &vc->sub[si];
    uint64_t now = vc->rail->now;

    h->seq = x->seq;
    h->oseq = x->oseq;
    h->off = x->off;
    px_rail_hdr_fill(vc, h, PX_RAIL_DATA, x->hflags, si);
    h->sub |= (uint16_t)(x->npieces << 8);
    memcpy(buf + sizeof(*h), x->uh, x->uhl);
    if (x->sub >= 0) {
        x->again = 1;
        h->flags |= PX_RAIL_H_AGAIN;
    } else if (vc->tx_acked == x->seq) {
        vc->out_since = now;
    }
    x->sub = si;
    x->order = s->tx_order++;
    x->wire = 1;
    x->resend = 0;
    /* stripes are timed: a fresh clock; others make do with the progress one */
    x->t_sent = (x->hflags & PX_RAIL_H_TIMED) ? px_time_ns() : now;
    if (s->unacked++ == 0)
        s->busy_since = x->t_sent;
    s->last_tx_ns = now;
    s->used = 1;
    s->st->frames_tx++;
    s->st->bytes_tx += x->len;
    if (__builtin_expect(!vc->armed, 0)) {
        /* first traffic to this peer: connect the alternates now, so a
         * failover finds them ready and verified */
        vc->armed = 1;
        if (vc->rail->ft)
            px_rail_connect_unused(vc, si);
    }
    const px_net_ops_t *ops = vc->rail->ops;
    px_status_t st = ((x->hflags & PX_RAIL_H_UNORD) ? ops->ep_send_bulk : ops->ep_send)(
        s->ep, buf, sizeof(*h) + x->uhl, x->iov, x->iovcnt, px_rail_wire_cb, x);
    if (st == PX_INPROGRESS) {
        vc->on_wire++;
        if (vc->rail->release && vc->rail->ft && !vc->rail->stage_x && !x->area)
            px_rail_stage_start(vc->rail, x);
    } else if (st == PX_OK) {
        x->wire = 0;
        if (vc->rail->release && px_rail_caller_held(x))
            px_rail_release_mark(vc); /* not here: the caller is still in its send */
    } else if (st < 0) {
        x->wire = 0;
        x->resend = 1;
        s->unacked--;
        px_rail_resend_mark(vc);
        px_rail_sub_down(s, st);
    }
}

/* Class lanes: record x carries rendezvous data on the bulk lanes. The
 * delivery clock starts with it when nothing else is out there. */
static void px_rail_bulk_add(px_rail_vc_t *vc, px_rail_tx_t *x)
{
    if (!vc->bulk_out)
        vc->bulk_dlv_ns = px_time_ns();
    x->bulk = 1;
    x->dlv = vc->bulk_dlv;
    x->dlv_ns = vc->bulk_dlv_ns;
    vc->bulk_out += x->len;
}

/* With fault tolerance: a whole frame with its record. */
static px_status_t px_rail_send_rec(px_rail_vc_t *vc, const void *hdr, size_t hdr_len,
                                    const struct iovec *iov, int iovcnt, unsigned flags,
                                    px_net_send_cb_t cb, void *arg)
{
    size_t len = px_net_iov_len(iov, iovcnt);
    px_status_t ret = PX_OK;
    if (hdr_len + sizeof(px_rail_hdr_t) > PX_NET_HDR_MAX)
        return PX_ERR_INVALID_PARAM;
    px_rail_tx_t *x = px_rail_tx_get(vc);
    if (!x)
        return PX_ERR_NO_MEMORY;
    x->hflags = (flags & PX_RAIL_F_STRIPE) ? PX_RAIL_H_UNORD : 0;
    x->rel_ok = (flags & PX_RAIL_F_RELEASE) != 0;
    size_t copy_max = (flags & PX_RAIL_F_WAITED) ? vc->rail->copy_max : PX_RAIL_COPY_SMALL;
    x->len = len;
    px_rail_t *r = vc->rail;
    int rel =
        cb && len > copy_max && (flags & PX_RAIL_F_RELEASE) && r->release && iovcnt <= PX_RAIL_IOV;
    if (rel) {
        memcpy(x->iov, iov, (size_t)iovcnt * sizeof(*iov));
        x->iovcnt = iovcnt;
        if (r->pre.vc == vc)
            px_rail_pre_attach(r, x); /* its copy may be begun */
    }
    if (rel && r->rel_live == (uint32_t)(r->pre.vc != NULL) + x->inbuf && px_rail_area(r, x) == 0) {
        /* The first frame to release while nothing released is in flight
         * on the rail (but a prestaged payload): copied now, what is not
         * yet, while the links are quiet, and done at once (a broadcast's
         * root); the others wait for their write. */
        px_rail_stage_copy(x, len - x->staged);
        x->iov[0].iov_base = x->area;
        x->iov[0].iov_len = len;
        x->iovcnt = 1;
        x->told = 1;
        x->hflags |= PX_RAIL_H_SACK;
        vc->rail->released++;
        vc->rail->released_bytes += len;
    } else if (cb && (len > copy_max || (flags & PX_RAIL_F_HELD)) && iovcnt <= PX_RAIL_IOV) {
        /* the caller's buffer is kept until the peer has it all */
        memcpy(x->iov, iov, (size_t)iovcnt * sizeof(*iov));
        x->iovcnt = iovcnt;
        x->cb = cb;
        x->arg = arg;
        x->hflags |= PX_RAIL_H_SACK;
        if (r->pre.vc == vc && x->rel_ok)
            px_rail_pre_attach(r, x);
        ret = PX_INPROGRESS;
    } else if (px_rail_tx_copy(x, iov, iovcnt, len) < 0) {
        px_rail_tx_put(vc->rail, x);
        return PX_ERR_NO_MEMORY;
    }
    x->len = len;
    if (px_rail_bulk_bound(vc, flags, len, cb))
        px_rail_bulk_add(vc, x);
    if (vc->rail->lossy) {
        /* the frame that fills three quarters of the window asks to be
         * acknowledged at once: the window then reopens while the last
         * quarter is on the way, not when the receiver's delayed
         * acknowledgement comes. A smaller message, the usual exchange, costs
         * the receiver no acknowledgement of its own before its reply. */
        size_t mark = vc->cwnd / 4 * 3;
        if (vc->inflight < mark && vc->inflight + len >= mark)
            x->hflags |= PX_RAIL_H_SACK;
        vc->inflight += len;
        if (__builtin_expect(++vc->fr_sent >= PX_RAIL_LOSS_SAMPLE, 0))
            px_rail_loss_look(vc);
    }
    x->uhl = (uint16_t)hdr_len;
    memcpy(x->uh, hdr, hdr_len);
    x->seq = vc->tx_seq++;
    x->oseq = (x->hflags & PX_RAIL_H_UNORD) ? 0 : vc->tx_oseq++;
    vc->tx[x->seq & (vc->tx_cap - 1)] = x;
    int si = px_rail_pick(vc, flags, len);
    if (si < 0) {
        x->resend = 1; /* sent when a subchannel comes back */
        px_rail_resend_mark(vc);
    } else {
        px_rail_xmit(vc, x, si);
    }
    return ret;
}

static px_status_t px_rail_send_striped(px_rail_vc_t *vc, const void *hdr, size_t hdr_len,
                                        const struct iovec *iov, int iovcnt, size_t len,
                                        unsigned flags, px_net_send_cb_t cb, void *arg)
{
    double share[PX_NET_MAX_SUB];
    size_t bytes[PX_NET_MAX_SUB];
    int n = vc->npair, used = 0, bulk = px_rail_bulk_bound(vc, flags, len, cb);
    size_t unit = px_params.rail_stripe_unit ? px_params.rail_stripe_unit : 1;

    if (hdr_len + sizeof(px_rail_hdr_t) > PX_NET_HDR_MAX)
        return PX_ERR_INVALID_PARAM;
    if (!px_rail_split(vc, share)) {
        /* nothing works: one part, sent when a subchannel comes back */
        for (int i = 0; i < n; i++)
            share[i] = i == 0;
    }
    size_t left = len;
    int last = -1;
    for (int i = 0; i < n; i++) {
        bytes[i] = 0;
        if (share[i] <= 0)
            continue;
        size_t b = (size_t)(share[i] * (double)len);
        b -= b % unit;
        if (b > left)
            b = left;
        bytes[i] = b;
        left -= b;
        last = i;
    }
    /* the remainder goes to the largest share */
    int big = last;
    for (int i = 0; i < n; i++)
        if (share[i] > 0 && share[i] > share[big])
            big = i;
    bytes[big] += left;
    for (int i = 0; i < n; i++)
        used += bytes[i] > 0;
    if (!used) { /* an empty block still needs one frame */
        bytes[big] = 0;
        used = 1;
    }
    for (int i = 0; i < n; i++)
        px_trace("rail", "stripe to rank %d sub %d: %zu of %zu bytes (share %.3f)", vc->rank, i,
                 bytes[i], len, share[i]);

    px_rail_msg_t *m = malloc(sizeof(*m));
    if (!m)
        return PX_ERR_NO_MEMORY;
    m->cb = cb;
    m->arg = arg;
    m->nparts = used;
    m->nacked = 0;
    m->open = m->users = used + 1; /* a record per part, + this function */
    m->st = PX_OK;
    m->warm = 1;
    m->resent = 0;
    m->extra = 0;
    uint64_t now = vc->rail->now = px_time_ns();
    size_t off = 0;
    int k = 0;
    for (int i = 0; i < n && k < used; i++) {
        if (!bytes[i] && !(len == 0 && i == big))
            continue;
        /* the pair's share goes on one of its lanes (itself without lanes) */
        int si = i;
        if (vc->nlane > 1 && (si = px_rail_lane_sub(vc, i, px_rail_lane_class(flags, len))) < 0)
            si = i;
        px_rail_tx_t *x = px_rail_tx_get(vc);
        if (!x) {
            /* cannot happen often; the block fails as a whole */
            m->st = PX_ERR_NO_MEMORY;
            m->open -= used - k;
            m->users -= used - k;
            break;
        }
        x->msg = m;
        x->part = k;
        x->rel_ok = (flags & PX_RAIL_F_RELEASE) != 0;
        m->part[k].sub = si;
        m->part[k].bytes = bytes[i];
        m->part[k].t_ns = 0;
        k++;
        x->iovcnt = px_iov_slice(iov, iovcnt, off, bytes[i], x->iov, PX_RAIL_IOV);
        x->len = bytes[i];
        x->off = off;
        if (bulk)
            px_rail_bulk_add(vc, x);
        if (vc->rail->pre.vc == vc && x->rel_ok)
            px_rail_pre_attach(vc->rail, x);
        x->hflags = PX_RAIL_H_UNORD | PX_RAIL_H_SACK | PX_RAIL_H_TIMED;
        x->uhl = (uint16_t)hdr_len;
        memcpy(x->uh, hdr, hdr_len);
        x->seq = vc->tx_seq++;
        x->oseq = 0;
        vc->tx[x->seq & (vc->tx_cap - 1)] = x;
        if (!vc->sub[i].warm)
            m->warm = 0;
        vc->stripe_inflight += bytes[i];
        if (vc->sub[si].state == PX_SUB_DOWN) {
            x->resend = 1;
            px_rail_resend_mark(vc);
        } else {
            vc->sub[si].st->stripes++;
            vc->sub[si].st->stripe_bytes += bytes[i];
            vc->sub[i].last_use_ns = now;
            px_rail_xmit(vc, x, si);
        }
        off += bytes[i];
    }
    px_rail_msg_event(m, 0);
    return PX_INPROGRESS;
}

static px_status_t px_rail_enqueue(px_list_t *q, const void *hdr, size_t hdr_len,
                                   const struct iovec *iov, int iovcnt, unsigned flags,
                                   px_net_send_cb_t cb, void *arg);

/* Striped bytes allowed in flight to a peer: about 40 ms of what the working
 * subchannels carry (so a failing one has little to send again and weights
 * stay fresh on slow links), between 1 MB and PX_RAIL_INFLIGHT. */
static size_t px_rail_inflight_max(px_rail_vc_t *vc)
{
    double rate = 0; /* bytes per ns */
    for (int i = 0; i < vc->npair; i++) {
        px_rail_sub_t *s = &vc->sub[i];
        if (s->state == PX_SUB_DOWN || s->resting)
            continue;
        if (s->ew_ns <= 0)
            return px_params.rail_inflight; /* not measured yet */
        rate += s->ew_bytes / s->ew_ns;
    }
    size_t lim = (size_t)(rate * 40e6);
    if (lim < (1u << 20))
        lim = 1u << 20;
    return lim < px_params.rail_inflight ? lim : px_params.rail_inflight;
}

/* Whether at least two address pairs work: striping over one alone only
 * holds blocks back behind their acknowledgements (a peer left with one
 * rail after a failure is sent to as if it had only that one). */
static int px_rail_pairs_up(const px_rail_vc_t *vc)
{
    int n = 0;
    for (int i = 0; i < vc->npair && n < 2; i++)
        n += px_rail_usable(&vc->sub[i]);
    return n >= 2;
}

/* Class lanes: rendezvous bytes allowed on the bulk lanes unacknowledged,
 * what they delivered lately in PX_RAIL_BULK_HOLD_NS (at least two frames
 * of px_rail_bulk_frame). The oldest is then acknowledged within about that
 * time, however slow the bulk lanes' class is on the fabric, and so holds
 * the channel's window (shared by the lanes) no longer: the other lanes'
 * frames never wait for window space behind a queue of bulk data. */
static size_t px_rail_bulk_max(const px_rail_vc_t *vc)
{
    size_t two = 2 * px_rail_bulk_frame(vc);
    double t = px_rail_bulk_rate(vc) * (double)PX_RAIL_BULK_HOLD_NS;
    return t > (double)two ? (size_t)t : two;
}

/* Whether a frame of len bytes goes as a striped block (striped) now. */
static int px_rail_block_striped(px_rail_vc_t *vc, unsigned flags, size_t len, px_net_send_cb_t cb)
{
    return vc->npair > 1 && (flags & PX_RAIL_F_STRIPE) && !vc->rail->lossy &&
           len >= px_params.rail_stripe_min && cb && px_rail_pairs_up(vc) &&
           px_rail_stripes(vc, flags);
}

/* Whether such a frame waits in vc->deferred for bytes in flight to be
 * acknowledged: a striped block split late, so its split uses weights
 * learnt from the blocks before it; a frame for the bulk lanes
 * (px_rail_bulk_max). The first always goes. */
static int px_rail_held_back(px_rail_vc_t *vc, size_t len, int striped, int bulk)
{
    if (striped && vc->stripe_inflight && vc->stripe_inflight + len > px_rail_inflight_max(vc))
        return 1;
    return bulk && vc->bulk_out && vc->bulk_out + len > px_rail_bulk_max(vc);
}

static px_status_t px_rail_send_go(px_rail_vc_t *vc, const void *hdr, size_t hdr_len,
                                   const struct iovec *iov, int iovcnt, size_t len, int striped,
                                   unsigned flags, px_net_send_cb_t cb, void *arg)
{
    if (striped)
        return px_rail_send_striped(vc, hdr, hdr_len, iov, iovcnt, len, flags, cb, arg);
    if (vc->rail->ft)
        return px_rail_send_rec(vc, hdr, hdr_len, iov, iovcnt, flags, cb, arg);
    return px_rail_send_frame(vc, px_rail_pick(vc, flags, len), hdr, hdr_len, iov, iovcnt,
                              (flags & PX_RAIL_F_STRIPE) ? PX_RAIL_H_UNORD : 0, cb, arg);
}

static px_status_t px_rail_send_now(px_rail_vc_t *vc, const void *hdr, size_t hdr_len,
                                    const struct iovec *iov, int iovcnt, unsigned flags,
                                    px_net_send_cb_t cb, void *arg)
{
    size_t len = px_net_iov_len(iov, iovcnt);
    int striped = px_rail_block_striped(vc, flags, len, cb);
    int bulk = px_rail_bulk_bound(vc, flags, len, cb);
    /* ordered frames never wait behind these: only they are deferred */
    if (__builtin_expect(striped || bulk, 0)) {
        if (!px_list_empty(&vc->deferred))
            px_rail_deferred_flush(vc);
        if (!px_list_empty(&vc->deferred) || px_rail_held_back(vc, len, striped, bulk))
            return px_rail_enqueue(&vc->deferred, hdr, hdr_len, iov, iovcnt, flags, cb, arg);
    }
    return px_rail_send_go(vc, hdr, hdr_len, iov, iovcnt, len, striped, flags, cb, arg);
}

void px_rail_free_cb(void *arg, px_status_t st)
{
    (void)st;
    free(arg);
}

void px_rail_deferred_flush(px_rail_vc_t *vc)
{
    while (!px_list_empty(&vc->deferred) && !px_rail_window_full(vc, PX_NET_MAX_SUB)) {
        px_rail_backlog_t *b = px_container_of(vc->deferred.next, px_rail_backlog_t, link);
        size_t len = px_net_iov_len(b->iov, b->iovcnt);
        int striped = px_rail_block_striped(vc, b->flags, len, b->cb);
        if (px_rail_held_back(vc, len, striped, px_rail_bulk_bound(vc, b->flags, len, b->cb)))
            return;
        px_list_del(&b->link);
        px_status_t st = px_rail_send_go(vc, b->hdr, b->hdr_len, b->iov, b->iovcnt, len, striped,
                                         b->flags, b->cb, b->arg);
        if (st != PX_INPROGRESS)
            b->cb(b->arg, st); /* done at once (copied), or failed */
        free(b);
    }
}

void px_rail_backlog_flush(px_rail_vc_t *vc)
{
    while (!px_list_empty(&vc->backlog) && !px_rail_window_full(vc, PX_NET_MAX_SUB)) {
        px_rail_backlog_t *b = px_container_of(vc->backlog.next, px_rail_backlog_t, link);
        if (px_rail_cwnd_full(vc, px_net_iov_len(b->iov, b->iovcnt)))
            return;
        px_list_del(&b->link);
        px_net_send_cb_t cb = b->copy ? px_rail_free_cb : b->cb;
        void *arg = b->copy ? b->copy : b->arg;
        px_status_t st =
            px_rail_send_now(vc, b->hdr, b->hdr_len, b->iov, b->iovcnt, b->flags, cb, arg);
        if (st == PX_OK && cb)
            cb(arg, PX_OK);
        else if (st < 0 && cb)
            cb(arg, st);
        free(b);
    }
}

px_status_t px_rail_vc_send(px_rail_vc_t *vc, const void *hdr, size_t hdr_len,
                            const struct iovec *iov, int iovcnt, unsigned flags,
                            px_net_send_cb_t cb, void *arg)
{
    if (__builtin_expect(vc->failed, 0))
        return PX_ERR_PEER_UNREACHABLE;
    vc->last_activity = vc->rail->now;
    px_rail_heat(vc);
    /* a striped block takes up to one sequence number per subchannel */
    if (__builtin_expect(!px_list_empty(&vc->backlog) || px_rail_window_full(vc, PX_NET_MAX_SUB) ||
                             px_rail_cwnd_full(vc, px_net_iov_len(iov, iovcnt)),
                         0)) {
        vc->rail->window_waits += px_rail_window_full(vc, PX_NET_MAX_SUB);
        return px_rail_enqueue(&vc->backlog, hdr, hdr_len, iov, iovcnt, flags, cb, arg);
    }
    return px_rail_send_now(vc, hdr, hdr_len, iov, iovcnt, flags, cb, arg);
}

/* Queues a frame for later (window full, or too many stripe bytes in flight). */
static px_status_t px_rail_enqueue(px_list_t *q, const void *hdr, size_t hdr_len,
                                   const struct iovec *iov, int iovcnt, unsigned flags,
                                   px_net_send_cb_t cb, void *arg)
{
    size_t len = px_net_iov_len(iov, iovcnt);
    if (hdr_len > PX_NET_HDR_MAX)
        return PX_ERR_INVALID_PARAM;
    px_rail_backlog_t *b =
        calloc(1, sizeof(*b) + (size_t)(iovcnt ? iovcnt : 1) * sizeof(struct iovec));
    if (!b)
        return PX_ERR_NO_MEMORY;
    b->flags = flags;
    b->cb = cb;
    b->arg = arg;
    b->hdr_len = hdr_len;
    memcpy(b->hdr, hdr, hdr_len);
    if (!cb && len) { /* the caller keeps nothing for us: copy */
        b->copy = malloc(len);
        if (!b->copy) {
            free(b);
            return PX_ERR_NO_MEMORY;
        }
        px_net_iov_gather(b->copy, iov, iovcnt);
        b->iov[0].iov_base = b->copy;
        b->iov[0].iov_len = len;
        b->iovcnt = 1;
    } else {
        if (iovcnt)
            memcpy(b->iov, iov, (size_t)iovcnt * sizeof(*iov));
        b->iovcnt = iovcnt;
    }
    px_list_insert_tail(q, &b->link);
    return cb ? PX_INPROGRESS : PX_OK;
}

size_t px_rail_vc_pending(px_rail_vc_t *vc)
{
    size_t n = px_list_empty(&vc->backlog) && px_list_empty(&vc->deferred) ? 0 : 1;
    n += vc->resend_pending;
    for (int i = 0; i < vc->nsub; i++)
        if (vc->sub[i].state != PX_SUB_DOWN) /* a down one holds only probes */
            n += vc->rail->ops->ep_pending(vc->sub[i].ep);
    return n;
}
