/* Bulk transfers over the transport's own path (PX_NET_CAP_BULK, udp):
 * the rail layer chooses the subchannel, counts the bytes in its
 * statistics like any other traffic, and when that subchannel fails (or
 * the transport gives up) stops the sender's transfer and tells the layer
 * above from which offset the rest must go over the channel's reliable
 * frames instead, which stripe and fail over as usual. */
#include "rail_impl.h"

int px_rail_bulk_able(px_rail_vc_t *vc) { return vc->rail->bulk && !vc->failed && vc->nup > 0; }

static px_rail_bulk_t *px_rail_bulk_new(px_rail_vc_t *vc, int si, int send, void *arg, size_t len)
{
    px_rail_t *r = vc->rail;
    for (int i = 0; i < PX_RAIL_BULK_MAX; i++)
        if (!r->bulk[i].vc) {
            r->bulk[i] = (px_rail_bulk_t){.vc = vc, .si = si, .send = send, .arg = arg, .len = len};
            r->nbulk++;
            return &r->bulk[i];
        }
    return NULL;
}

static void px_rail_bulk_free(px_rail_bulk_t *b)
{
    b->vc->rail->nbulk--;
    b->vc = NULL;
}

static px_rail_bulk_t *px_rail_bulk_find(px_rail_vc_t *vc, void *arg, int send)
{
    px_rail_t *r = vc->rail;
    for (int i = 0; i < PX_RAIL_BULK_MAX; i++)
        if (r->bulk[i].vc == vc && r->bulk[i].arg == arg && r->bulk[i].send == send)
            return &r->bulk[i];
    return NULL;
}

/* Counts the bytes that moved since the last look. */
static void px_rail_bulk_count(px_rail_bulk_t *b, uint64_t got)
{
    if (got <= b->done || got > b->len)
        return;
    px_rail_sub_stats_t *st = b->vc->sub[b->si].st;
    if (b->send)
        st->bytes_tx += got - b->done;
    else
        st->bytes_rx += got - b->done;
    b->done = got;
}

/* The subchannels up, from the one after the last chosen: concurrent
 * transfers spread over the rails. */
static int px_rail_bulk_pick(px_rail_vc_t *vc)
{
    for (int k = 0; k < vc->nsub; k++) {
        int si = (vc->bulk_rr + k) % vc->nsub;
        if (px_rail_usable(&vc->sub[si])) {
            vc->bulk_rr = si + 1;
            return si;
        }
    }
    return -1;
}

px_status_t px_rail_bulk_recv(px_rail_vc_t *vc, void *buf, size_t len, void *arg,
                              px_rail_bulk_offer_t *offer)
{
    px_rail_t *r = vc->rail;
    int si = px_rail_bulk_able(vc) ? px_rail_bulk_pick(vc) : -1;
    if (si < 0)
        return PX_ERR_UNSUPPORTED;
    px_rail_bulk_t *b = px_rail_bulk_new(vc, si, 0, arg, len);
    if (!b)
        return PX_ERR_BUSY;
    px_status_t st = r->ops->ep_bulk_recv(vc->sub[si].ep, buf, len, b, &offer->net);
    if (st != PX_OK) {
        px_rail_bulk_free(b);
        return st;
    }
    offer->sub = (uint16_t)si;
    vc->sub[si].used = 1;
    px_rail_heat(vc);
    return PX_OK;
}

px_status_t px_rail_bulk_send(px_rail_vc_t *vc, const px_rail_bulk_offer_t *offer, const void *buf,
                              size_t len, void *arg)
{
    px_rail_t *r = vc->rail;
    int si = offer->sub;
    if (si >= vc->nsub)
        return PX_ERR_INVALID_PARAM; /* not an offer of this channel */
    /* the receiver listens on one subchannel's address: when it is not up
     * here, the data goes the other way at once */
    px_rail_bulk_t *b = px_rail_bulk_new(vc, si, 1, arg, len);
    if (!b)
        return PX_ERR_BUSY;
    if (!px_rail_bulk_able(vc) || !px_rail_usable(&vc->sub[si]) ||
        r->ops->ep_bulk_send(vc->sub[si].ep, &offer->net, buf, len, b) != PX_OK) {
        b->failed = 1;
        r->bulk_due = 1;
    }
    vc->sub[si].used = 1;
    px_rail_heat(vc);
    return PX_OK;
}

void px_rail_bulk_acked(px_rail_vc_t *vc, void *arg, uint64_t got)
{
    px_rail_bulk_t *b = px_rail_bulk_find(vc, arg, 1);
    if (!b || b->failed)
        return; /* late: the transfer ended, or moved to the channel's frames */
    px_rail_bulk_count(b, got);
    vc->rail->ops->ep_bulk_acked(vc->sub[b->si].ep, b, got); /* may end it (bulk_done) */
}

uint64_t px_rail_bulk_cancel(px_rail_vc_t *vc, void *arg)
{
    px_rail_bulk_t *b = px_rail_bulk_find(vc, arg, 0);
    if (!b)
        b = px_rail_bulk_find(vc, arg, 1);
    if (!b)
        return 0;
    uint64_t got = b->failed ? b->done : vc->rail->ops->ep_bulk_cancel(vc->sub[b->si].ep, b);
    px_rail_bulk_count(b, got);
    px_rail_bulk_free(b);
    return got;
}

int px_rail_bulk_busy(const px_rail_t *r) { return r->nbulk; }

/* ---------- from the transport (px_net_rx_ops_t) ---------- */

void px_rail_bulk_progress_in(void *owner, void *arg, uint64_t got)
{
    px_rail_bulk_t *b = arg;
    (void)owner;
    px_rail_bulk_count(b, got);
    px_rail_t *r = b->vc->rail;
    r->up->bulk_progress(b->vc->owner, b->arg, got);
}

void px_rail_bulk_done_in(void *owner, void *arg, px_status_t st)
{
    px_rail_bulk_t *b = arg;
    px_rail_vc_t *vc = b->vc;
    void *up_arg = b->arg;
    (void)owner;
    if (st == PX_OK) {
        px_rail_bulk_count(b, b->len);
        px_rail_bulk_free(b);
        vc->rail->up->bulk_done(vc->owner, up_arg, PX_OK);
        return;
    }
    /* the transport gave up on its path: the rest goes the other way */
    px_warn("rail",
            "bulk transfer to rank %d on %s: %s; the rest at %llu of %zu bytes goes "
            "over the channel",
            vc->rank, vc->sub[b->si].info.label, px_status_string(st), (unsigned long long)b->done,
            b->len);
    b->failed = 1;
    vc->rail->bulk_due = 1;
}

/* ---------- failures ---------- */

/* Subchannel s went down: the transfers it sent stop where the receiver
 * had got them (told above at the next progress). Those it received wait:
 * the sender's side of the subchannel fails too, and its rest arrives
 * over the channel. */
void px_rail_bulk_sub_down(px_rail_sub_t *s)
{
    px_rail_t *r = s->vc->rail;
    if (!r->nbulk)
        return;
    for (int i = 0; i < PX_RAIL_BULK_MAX; i++) {
        px_rail_bulk_t *b = &r->bulk[i];
        if (b->vc != s->vc || b->si != s->idx || !b->send || b->failed)
            continue;
        px_rail_bulk_count(b, r->ops->ep_bulk_cancel(s->ep, b));
        b->failed = 1;
        r->bulk_due = 1;
    }
}

/* The peer is gone: its transfers end without a word (the layer above
 * fails what waits for the peer). */
void px_rail_bulk_vc_fail(px_rail_vc_t *vc)
{
    px_rail_t *r = vc->rail;
    for (int i = 0; r->nbulk && i < PX_RAIL_BULK_MAX; i++)
        if (r->bulk[i].vc == vc) {
            if (!r->bulk[i].failed)
                r->ops->ep_bulk_cancel(vc->sub[r->bulk[i].si].ep, &r->bulk[i]);
            px_rail_bulk_free(&r->bulk[i]);
        }
}

/* Tells the layer above of the sends that stopped (outside the transport's
 * and the health code's call stacks: it sends the rest at once). */
void px_rail_bulk_fail_due(px_rail_t *r)
{
    r->bulk_due = 0;
    for (int i = 0; r->nbulk && i < PX_RAIL_BULK_MAX; i++) {
        px_rail_bulk_t *b = &r->bulk[i];
        if (!b->vc || !b->failed)
            continue;
        px_rail_vc_t *vc = b->vc;
        void *arg = b->arg;
        uint64_t at = b->done;
        r->bulk_moved++;
        r->bulk_rest_bytes += b->len - at;
        px_rail_bulk_free(b);
        vc->rail->up->bulk_failed(vc->owner, arg, at);
    }
}
