/* The channel of each message (PX_CHANNELS, docs/transports.md) and the
 * send on it. */
#include "chan_impl.h"

_Static_assert((unsigned)PX_CHAN_F_STRIPE == PX_RAIL_F_STRIPE &&
                   (unsigned)PX_CHAN_F_WAITED == PX_RAIL_F_WAITED &&
                   (unsigned)PX_CHAN_F_RELEASE == PX_RAIL_F_RELEASE &&
                   (unsigned)PX_CHAN_F_HELD == PX_RAIL_F_HELD &&
                   (unsigned)PX_CHAN_F_COLL == PX_RAIL_F_COLL &&
                   (unsigned)PX_CHAN_F_CLASS == PX_RAIL_F_CLASS &&
                   PX_CHAN_F_CLASS_SHIFT == PX_RAIL_F_CLASS_SHIFT,
               "send hints pass to the rail layer unchanged");

static inline int px_chr_proto_ok(const px_chr_rule_t *r, int rndv)
{
    return r->proto == PX_CHR_PROTO_ANY || (r->proto == PX_CHR_PROTO_RNDV) == rndv;
}

/* The eager limit of a message to p on vc: its carrier's, or less while
 * vc's path loses many frames (px_rail_vc_eager). */
static inline size_t px_chan_vc_eager(px_chan_t *p, px_rail_vc_t *vc)
{
    return px_rail_vc_eager(vc, px_c.car_eager[px_chan_car(p, vc)]);
}

/* The first entry of PX_CHANNELS whose condition holds and whose channel
 * the peer has; without one, the peer's default channel. A network
 * message stays on the channel of the previous one while that still has
 * unacknowledged frames (MPI's order between two messages to one peer);
 * a rendezvous request always does, since its data is addressed to its
 * receive and may take any channel. */
void px_chan_pick(int peer, size_t len, int coll, px_chan_pick_t *k)
{
    px_chan_t *p = &px_c.peers[peer];
    const px_chr_table_t *t = &px_c.chr;
    int i;
    if (p->kind != PX_CHAN_RAIL) {
        k->env = k->data = NULL;
        k->car = p->kind == PX_CHAN_SELF ? PX_CAR_SELF : PX_CAR_SHM;
        k->get = 1;
        k->zc = 0;
        k->rndv = len > p->eager_limit;
        for (i = 0; i < t->n; i++) {
            const px_chr_rule_t *r = &t->r[i];
            if (!px_chr_cond(r, len, coll))
                continue;
            if (r->chan == PX_CHR_SHM && px_chr_proto_ok(r, k->rndv))
                break;
            if (r->chan == PX_CHR_COPY) {
                k->rndv = 1;
                k->get = 0;
                break;
            }
        }
        px_c.chr_hits[i]++;
        goto count;
    }
    if (p->hybrid)
        px_chan_rc_count(p, len);
    px_rail_vc_t *def = px_chan_vc(p);
    px_rail_vc_t *udp = p->car == PX_CAR_UDP ? p->vc : NULL;
    px_rail_vc_t *tcp = p->car == PX_CAR_TCP ? p->vc : p->rc == PX_RC_ACTIVE ? p->vc_rc : NULL;
    px_rail_vc_t *c = NULL;
    int rndv = 0, zc = 0;
    for (i = 0; i < t->n; i++) {
        const px_chr_rule_t *r = &t->r[i];
        int forced = 0;
        if (!px_chr_cond(r, len, coll))
            continue;
        zc = 0;
        switch (r->chan) {
        case PX_CHR_UDP:
            c = udp;
            break;
        case PX_CHR_TCP:
            c = tcp;
            break;
        case PX_CHR_TCP_RNDV:
            c = tcp, forced = 1;
            break;
        case PX_CHR_UDP_RNDV:
            c = udp, forced = 1;
            break;
        case PX_CHR_UDP_ZCOPY:
            c = udp, forced = 1, zc = 1;
            break;
        case PX_CHR_COPY:
            c = def, forced = 1;
            break;
        default:
            c = NULL; /* shm: not to a network peer */
        }
        if (!c)
            continue;
        rndv = forced || len > px_chan_vc_eager(p, c);
        if (px_chr_proto_ok(r, rndv))
            break;
        c = NULL;
    }
    if (!c) {
        c = def;
        zc = 0;
        rndv = len > px_chan_vc_eager(p, c);
    }
    px_c.chr_hits[i]++;
    /* a message goes where the previous one went while that has frames
     * unacknowledged; a rendezvous request then stays there alone (its
     * data is addressed to its receive and may take any channel) */
    px_rail_vc_t *env = c;
    if (__builtin_expect(env != p->env_vc, 0) &&
        (px_rail_vc_unacked(p->env_vc) || px_rail_vc_pending(p->env_vc))) {
        env = p->env_vc;
        if (!rndv) {
            c = env;
            p->fenced++;
            rndv = len > px_chan_vc_eager(p, c);
            zc = 0;
        }
    }
    p->env_vc = env;
    k->env = (px_chan_route_t *)env;
    k->data = (px_chan_route_t *)c;
    k->car = px_chan_car(p, c);
    k->rndv = (uint8_t)rndv;
    k->get = 0;
    k->zc = (uint8_t)zc;
count:
    p->car_msgs[k->car]++;
    p->car_bytes[k->car] += len;
}

px_status_t px_chan_send(int peer, px_chan_route_t *route, const void *hdr, size_t hdr_len,
                         const struct iovec *iov, int iovcnt, unsigned flags, px_chan_send_cb_t cb,
                         void *arg)
{
    px_chan_t *p = &px_c.peers[peer];
    if (p->kind == PX_CHAN_RAIL) {
        px_rail_vc_t *vc = route ? (px_rail_vc_t *)route : px_chan_vc(p);
        px_c.rail_active = 1;
        return px_rail_vc_send(vc, hdr, hdr_len, iov, iovcnt, flags, cb, arg);
    }
    if (p->kind == PX_CHAN_SELF)
        px_c.self_active = 1;
    return p->ops->ep_send(p->ep, hdr, hdr_len, iov, iovcnt, cb, arg);
}

size_t px_chan_eager(int peer, px_chan_route_t *route)
{
    px_chan_t *p = &px_c.peers[peer];
    if (p->kind != PX_CHAN_RAIL)
        return p->eager_limit;
    return px_chan_vc_eager(p, route ? (px_rail_vc_t *)route : p->vc);
}

size_t px_chan_eager_top(void)
{
    size_t top = px_c.shm_eager;
    for (int i = 0; i < PX_CAR_N; i++)
        if (px_c.car_eager[i] > top)
            top = px_c.car_eager[i];
    return top;
}

size_t px_chan_eager_max(int peer)
{
    px_chan_t *p = &px_c.peers[peer];
    return p->kind != PX_CHAN_RAIL ? p->eager_limit : px_c.car_eager[px_chan_car(p, p->vc)];
}

size_t px_chan_chunk(int peer, px_chan_route_t *route, size_t want)
{
    px_chan_t *p = &px_c.peers[peer];
    if (p->kind != PX_CHAN_RAIL)
        return want ? want : p->chunk;
    px_rail_vc_t *vc = route ? (px_rail_vc_t *)route : p->vc;
    return px_rail_vc_chunk(vc, want ? want : px_c.car_chunk[px_chan_car(p, vc)]);
}

int px_chan_route_conn(int peer, px_chan_route_t *route)
{
    px_chan_t *p = &px_c.peers[peer];
    return p->kind == PX_CHAN_RAIL &&
           px_chan_car(p, route ? (px_rail_vc_t *)route : p->vc) == PX_CAR_TCP;
}

void px_chan_prestage(px_chan_route_t *route, const void *buf, size_t len)
{
    if (route)
        px_rail_prestage((px_rail_vc_t *)route, buf, len);
}

void px_chan_prestage_end(px_chan_route_t *route, const void *buf)
{
    if (route)
        px_rail_prestage_end((px_rail_vc_t *)route, buf);
}

int px_chan_local(int peer) { return px_c.peers[peer].kind != PX_CHAN_RAIL; }

int px_chan_can_get(int peer) { return px_c.peers[peer].can_get; }

px_status_t px_chan_send_fill(int peer, const void *hdr, size_t hdr_len, size_t len,
                              px_chan_fill_fn fill, px_chan_send_cb_t cb, void *arg)
{
    px_chan_t *p = &px_c.peers[peer];
    if (p->kind == PX_CHAN_RAIL || !p->stream)
        return PX_ERR_UNSUPPORTED;
    return p->ops->ep_send_fill(p->ep, hdr, hdr_len, len, fill, cb, arg);
}

px_status_t px_chan_get(int peer, void *local, uint64_t raddr, size_t len)
{
    px_chan_t *p = &px_c.peers[peer];
    if (!p->can_get)
        return PX_ERR_UNSUPPORTED;
    return len ? p->ops->ep_get(p->ep, local, raddr, len) : PX_OK;
}

int px_chan_wakes(void) { return px_c.wake_peers; }

void px_chan_wake(int peer)
{
    px_chan_t *p = &px_c.peers[peer];
    if (p->wake)
        p->ops->ep_wake(p->ep);
}

void px_chan_copy_only(int peer) { px_c.peers[peer].can_get = 0; }

px_status_t px_chan_put(int peer, const void *local, uint64_t raddr, size_t len)
{
    px_chan_t *p = &px_c.peers[peer];
    if (!p->can_get)
        return PX_ERR_UNSUPPORTED;
    return len ? p->ops->ep_put(p->ep, local, raddr, len) : PX_OK;
}

/* ---------- bulk transfers ---------- */

static px_rail_vc_t *px_chan_bulk_vc(int peer)
{
    px_chan_t *p = &px_c.peers[peer];
    return p->kind == PX_CHAN_RAIL && p->car == PX_CAR_UDP ? p->vc : NULL;
}

int px_chan_bulk_recv(int peer, void *buf, size_t len, void *arg, px_chan_bulk_offer_t *offer)
{
    px_rail_vc_t *vc = px_chan_bulk_vc(peer);
    px_rail_bulk_offer_t o;
    if (!vc || px_rail_bulk_recv(vc, buf, len, arg, &o) != PX_OK)
        return -1;
    offer->w[0] =
        o.net.port | (uint64_t)(o.net.dgram & 0xffff) << 16 | (uint64_t)o.net.window << 32;
    offer->w[1] = o.net.token;
    offer->w[2] = o.sub;
    return 0;
}

px_status_t px_chan_bulk_send(int peer, const px_chan_bulk_offer_t *offer, const void *buf,
                              size_t len, void *arg)
{
    px_rail_vc_t *vc = px_chan_bulk_vc(peer);
    if (!vc || offer->w[2] >= PX_NET_MAX_SUB)
        return PX_ERR_INVALID_PARAM;
    px_rail_bulk_offer_t o = {.net = {.port = (uint16_t)offer->w[0],
                                      .dgram = (uint32_t)(offer->w[0] >> 16) & 0xffff,
                                      .window = (uint32_t)(offer->w[0] >> 32),
                                      .token = offer->w[1]},
                              .sub = (uint16_t)offer->w[2]};
    return px_rail_bulk_send(vc, &o, buf, len, arg);
}

void px_chan_bulk_acked(int peer, void *arg, uint64_t got)
{
    px_rail_vc_t *vc = px_chan_bulk_vc(peer);
    if (vc)
        px_rail_bulk_acked(vc, arg, got);
}

uint64_t px_chan_bulk_cancel(int peer, void *arg)
{
    px_rail_vc_t *vc = px_chan_bulk_vc(peer);
    return vc ? px_rail_bulk_cancel(vc, arg) : 0;
}

int px_chan_bulk_busy(void) { return px_c.rail && px_rail_bulk_busy(px_c.rail); }
