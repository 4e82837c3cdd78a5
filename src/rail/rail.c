#include "rail.h"
#include "../util/log.h"
#include "../util/param.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PX_RAIL_DATA = 1, PX_RAIL_ACK = 2 };

typedef struct __attribute__((packed)) px_rail_hdr {
    uint32_t seq; /* of this frame (DATA) */
    uint32_t ack; /* every frame up to ack-1 has arrived */
    uint8_t type;
    uint8_t sub;
    uint16_t pad;
} px_rail_hdr_t;

typedef struct px_rail_sub {
    px_net_ep_t *ep;
    const px_net_ops_t *ops;
    px_rail_sub_stats_t st;
} px_rail_sub_t;

struct px_rail_vc {
    px_rail_t *rail;
    void *owner;
    int rank;
    uint32_t tx_seq;    /* next sequence number to send */
    uint32_t tx_acked;  /* peer has everything below this */
    uint32_t rx_next;   /* next expected sequence number */
    uint32_t rx_unacked; /* frames received since we last told the peer */
    int rx_drop;        /* current frame is a duplicate */
    int nsub;
    px_rail_sub_t sub[1];
};

struct px_rail {
    const px_net_rx_ops_t *up;
    const px_net_ops_t *ops;
    px_net_iface_t *iface;
    px_net_attr_t attr;
    px_rail_vc_t **vcs;
    int nranks;
};

static void *px_rail_rx_begin(void *owner, const void *hdr, size_t hdr_len, size_t payload_len,
                              void **ctx_p);
static void px_rail_rx_done(void *owner, void *ctx);
static void px_rail_ep_failed(void *owner, px_status_t why);

static const px_net_rx_ops_t px_rail_rx_ops = {
    .rx_begin = px_rail_rx_begin,
    .rx_done = px_rail_rx_done,
    .ep_failed = px_rail_ep_failed,
};

px_status_t px_rail_init(const px_boot_info_t *boot, const char *net, const px_net_rx_ops_t *up,
                         px_rail_t **rail_p)
{
    px_rail_t *r = calloc(1, sizeof(*r));
    px_status_t st;
    if (!r)
        return PX_ERR_NO_MEMORY;
    r->up = up;
    r->nranks = boot->size;
    r->ops = px_net_find(net);
    if (!r->ops) {
        px_error("rail", "unknown network transport '%s'", net);
        free(r);
        return PX_ERR_INVALID_PARAM;
    }
    r->vcs = calloc((size_t)boot->size, sizeof(*r->vcs));
    if (!r->vcs) {
        free(r);
        return PX_ERR_NO_MEMORY;
    }
    st = r->ops->iface_open(boot, &px_rail_rx_ops, &r->iface);
    if (st != PX_OK) {
        free(r->vcs);
        free(r);
        return st;
    }
    r->ops->iface_query(r->iface, &r->attr);
    *rail_p = r;
    return PX_OK;
}

void px_rail_finalize(px_rail_t *r)
{
    if (!r)
        return;
    r->ops->iface_close(r->iface);
    for (int i = 0; i < r->nranks; i++)
        free(r->vcs[i]);
    free(r->vcs);
    free(r);
}

int px_rail_reachable(px_rail_t *r, int rank) { return r->ops->iface_reachable(r->iface, rank); }

px_status_t px_rail_vc_create(px_rail_t *r, int rank, void *owner, px_rail_vc_t **vc_p)
{
    px_rail_vc_t *vc = r->vcs[rank];
    px_status_t st;
    if (!vc) {
        vc = calloc(1, sizeof(*vc));
        if (!vc)
            return PX_ERR_NO_MEMORY;
        vc->rail = r;
        vc->rank = rank;
        vc->nsub = 1;
        vc->sub[0].ops = r->ops;
        st = r->ops->ep_create(r->iface, rank, 0, vc, &vc->sub[0].ep);
        if (st != PX_OK) {
            free(vc);
            return st;
        }
        r->vcs[rank] = vc;
    }
    vc->owner = owner;
    *vc_p = vc;
    return PX_OK;
}

static inline void px_rail_hdr_fill(px_rail_vc_t *vc, px_rail_hdr_t *h, uint8_t type)
{
    h->ack = vc->rx_next;
    h->type = type;
    h->sub = 0;
    h->pad = 0;
    vc->rx_unacked = 0;
}

px_status_t px_rail_vc_send(px_rail_vc_t *vc, const void *hdr, size_t hdr_len,
                            const struct iovec *iov, int iovcnt, px_net_send_cb_t cb, void *arg)
{
    uint8_t buf[PX_NET_HDR_MAX];
    px_rail_hdr_t *h = (px_rail_hdr_t *)buf;
    px_rail_sub_t *sub = &vc->sub[0];

    if (hdr_len + sizeof(*h) > sizeof(buf))
        return PX_ERR_INVALID_PARAM;
    h->seq = vc->tx_seq;
    px_rail_hdr_fill(vc, h, PX_RAIL_DATA);
    memcpy(buf + sizeof(*h), hdr, hdr_len);
    px_status_t st = sub->ops->ep_send(sub->ep, buf, sizeof(*h) + hdr_len, iov, iovcnt, cb, arg);
    if (st >= 0) {
        vc->tx_seq++;
        sub->st.frames_tx++;
        sub->st.bytes_tx += px_net_iov_len(iov, iovcnt);
    }
    return st;
}

static void px_rail_send_ack(px_rail_vc_t *vc)
{
    px_rail_hdr_t h;
    px_rail_sub_t *sub = &vc->sub[0];
    h.seq = 0;
    px_rail_hdr_fill(vc, &h, PX_RAIL_ACK);
    if (sub->ops->ep_send(sub->ep, &h, sizeof(h), NULL, 0, NULL, NULL) >= 0)
        sub->st.acks_tx++;
}

size_t px_rail_vc_pending(px_rail_vc_t *vc)
{
    return vc->sub[0].ops->ep_pending(vc->sub[0].ep);
}

size_t px_rail_vc_eager_limit(px_rail_vc_t *vc) { return vc->rail->attr.eager_limit; }

uint32_t px_rail_vc_unacked(px_rail_vc_t *vc) { return vc->tx_seq - vc->tx_acked; }

static void *px_rail_rx_begin(void *owner, const void *hdr, size_t hdr_len, size_t payload_len,
                              void **ctx_p)
{
    px_rail_vc_t *vc = owner;
    px_rail_hdr_t h;

    if (hdr_len < sizeof(h)) {
        px_error("rail", "short frame header (%zu bytes) from rank %d", hdr_len, vc->rank);
        vc->rx_drop = 1;
        return NULL;
    }
    memcpy(&h, hdr, sizeof(h));
    /* cumulative ack: only ever moves forward (modulo 2^32) */
    if ((int32_t)(h.ack - vc->tx_acked) > 0 && (int32_t)(h.ack - vc->tx_seq) <= 0) {
        vc->tx_acked = h.ack;
        vc->sub[0].st.acks_rx++;
    }
    if (h.type == PX_RAIL_ACK) {
        vc->rx_drop = 1;
        return NULL;
    }
    if (h.type != PX_RAIL_DATA || h.seq != vc->rx_next) {
        /* one subchannel delivers in order: anything else is a duplicate or garbage */
        px_warn("rail", "dropping frame seq %u (type %u) from rank %d, expected %u", h.seq, h.type,
                vc->rank, vc->rx_next);
        vc->rx_drop = 1;
        return NULL;
    }
    vc->rx_next++;
    vc->rx_unacked++;
    vc->rx_drop = 0;
    vc->sub[0].st.frames_rx++;
    vc->sub[0].st.bytes_rx += payload_len;
    return vc->rail->up->rx_begin(vc->owner, (const char *)hdr + sizeof(h), hdr_len - sizeof(h),
                                  payload_len, ctx_p);
}

static void px_rail_rx_done(void *owner, void *ctx)
{
    px_rail_vc_t *vc = owner;
    if (vc->rx_drop) {
        vc->rx_drop = 0;
        return;
    }
    vc->rail->up->rx_done(vc->owner, ctx);
    if (vc->rx_unacked >= (uint32_t)px_params.rail_ack_every)
        px_rail_send_ack(vc);
}

static void px_rail_ep_failed(void *owner, px_status_t why)
{
    px_rail_vc_t *vc = owner;
    /* single subchannel: nothing to fail over to yet */
    if (vc->rail->up->ep_failed)
        vc->rail->up->ep_failed(vc->owner, why);
}

int px_rail_progress(px_rail_t *r) { return r->ops->iface_progress(r->iface); }

int px_rail_fd(px_rail_t *r) { return r->ops->iface_fd(r->iface); }

void px_rail_print_stats(px_rail_t *r, int rank)
{
    for (int i = 0; i < r->nranks; i++) {
        px_rail_vc_t *vc = r->vcs[i];
        if (!vc || (!vc->sub[0].st.frames_tx && !vc->sub[0].st.frames_rx))
            continue;
        px_rail_sub_stats_t *s = &vc->sub[0].st;
        fprintf(stderr,
                "[plexus profile] rank %d -> %d vc: sub0 %s frames tx %llu rx %llu bytes tx %llu "
                "rx %llu acks tx %llu rx %llu unacked %u\n",
                rank, i, r->ops->name, (unsigned long long)s->frames_tx,
                (unsigned long long)s->frames_rx, (unsigned long long)s->bytes_tx,
                (unsigned long long)s->bytes_rx, (unsigned long long)s->acks_tx,
                (unsigned long long)s->acks_rx, px_rail_vc_unacked(vc));
    }
}
