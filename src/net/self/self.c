/* self: a process sending to itself. Frames are queued and delivered from
 * progress (never from inside the send) so handlers do not nest; ep_get is a
 * plain copy, giving single-copy large self-messages. */
#include "../net.h"
#include "../../util/list.h"

#include <stdlib.h>
#include <string.h>

typedef struct px_self_frame {
    px_list_t link;
    size_t hdr_len, len;
    uint8_t hdr[PX_NET_HDR_MAX];
    char data[];
} px_self_frame_t;

struct px_net_ep {
    struct px_net_iface *iface;
    void *owner;
};

struct px_net_iface {
    const px_net_rx_ops_t *rx;
    int me;
    struct px_net_ep ep;
    px_list_t queue;
};

static px_status_t px_self_iface_open(const px_boot_info_t *boot, const px_net_rx_ops_t *rx,
                                      void *owner, px_net_iface_t **iface_p)
{
    struct px_net_iface *s = calloc(1, sizeof(*s));
    if (!s)
        return PX_ERR_NO_MEMORY;
    s->rx = rx;
    (void)owner; /* it never calls ep_incoming */
    s->me = boot->rank;
    s->ep.iface = s;
    px_list_init(&s->queue);
    *iface_p = s;
    return PX_OK;
}

static void px_self_iface_close(px_net_iface_t *s)
{
    px_list_t *e, *t;
    px_list_for_each_safe(e, t, &s->queue)
        free(px_container_of(e, px_self_frame_t, link));
    free(s);
}

static void px_self_iface_query(px_net_iface_t *s, px_net_attr_t *attr)
{
    (void)s;
    memset(attr, 0, sizeof(*attr));
    attr->caps = PX_NET_CAP_GET;
    attr->max_frag = SIZE_MAX;
    attr->eager_limit = 16384;
    attr->latency_us = 0.05;
    attr->bandwidth_mbs = 20000;
}

static int px_self_iface_reachable(px_net_iface_t *s, int rank) { return rank == s->me; }

static px_status_t px_self_ep_create(px_net_iface_t *s, int rank, int sub, void *owner,
                                     px_net_ep_t **ep_p)
{
    if (rank != s->me)
        return PX_ERR_UNSUPPORTED;
    if (sub != 0) /* one subchannel (px_net_stub_ep_subs) */
        return PX_ERR_INVALID_PARAM;
    s->ep.owner = owner;
    *ep_p = &s->ep;
    return PX_OK;
}

static px_status_t px_self_ep_send(px_net_ep_t *ep, const void *hdr, size_t hdr_len,
                                   const struct iovec *iov, int iovcnt, px_net_send_cb_t cb,
                                   void *arg)
{
    (void)cb;
    (void)arg;
    size_t len = px_net_iov_len(iov, iovcnt);
    if (hdr_len > PX_NET_HDR_MAX)
        return PX_ERR_INVALID_PARAM;
    px_self_frame_t *f = malloc(sizeof(*f) + len);
    if (!f)
        return PX_ERR_NO_MEMORY;
    f->hdr_len = hdr_len;
    f->len = len;
    memcpy(f->hdr, hdr, hdr_len);
    char *p = f->data;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len)
            memcpy(p, iov[i].iov_base, iov[i].iov_len);
        p += iov[i].iov_len;
    }
    px_list_insert_tail(&ep->iface->queue, &f->link);
    return PX_OK;
}

static px_status_t px_self_ep_get(px_net_ep_t *ep, void *local, uint64_t raddr, size_t len)
{
    (void)ep;
    memmove(local, (const void *)(uintptr_t)raddr, len);
    return PX_OK;
}

static px_status_t px_self_ep_put(px_net_ep_t *ep, const void *local, uint64_t raddr, size_t len)
{
    (void)ep;
    memmove((void *)(uintptr_t)raddr, local, len);
    return PX_OK;
}

static size_t px_self_ep_pending(px_net_ep_t *ep)
{
    (void)ep;
    return 0;
}

static int px_self_iface_progress(px_net_iface_t *s)
{
    int events = 0;
    /* Only frames queued before this call: handlers may queue more. */
    px_list_t batch;
    if (px_list_empty(&s->queue))
        return 0;
    px_list_init(&batch);
    batch.next = s->queue.next;
    batch.prev = s->queue.prev;
    batch.next->prev = &batch;
    batch.prev->next = &batch;
    px_list_init(&s->queue);
    while (!px_list_empty(&batch)) {
        px_self_frame_t *f = px_container_of(batch.next, px_self_frame_t, link);
        px_list_del(&f->link);
        void *ctx = NULL;
        void *dest = s->rx->rx_begin(s->ep.owner, f->hdr, f->hdr_len, f->len, &ctx);
        if (dest && f->len)
            memcpy(dest, f->data, f->len);
        s->rx->rx_done(s->ep.owner, ctx);
        free(f);
        events++;
    }
    return events;
}

const px_net_ops_t px_net_self_ops = {
    .size = sizeof(px_net_ops_t),
    .name = "self",
    .iface_open = px_self_iface_open,
    .iface_close = px_self_iface_close,
    .iface_query = px_self_iface_query,
    .iface_reachable = px_self_iface_reachable,
    .ep_create = px_self_ep_create,
    .ep_subs = px_net_stub_ep_subs,
    .ep_send = px_self_ep_send,
    .ep_send_bulk = px_self_ep_send,
    .ep_frame = px_net_stub_ep_frame,
    .ep_wake = px_net_stub_ep_wake,
    .ep_send_fill = px_net_stub_ep_send_fill,
    .ep_get = px_self_ep_get,
    .ep_put = px_self_ep_put,
    .ep_pending = px_self_ep_pending,
    .ep_reset = px_net_stub_ep_reset,
    .ep_withdraw = px_net_stub_ep_withdraw,
    .ep_destroy = px_net_stub_ep_destroy,
    .ep_rx_cancel = px_net_stub_ep_rx_cancel,
    .iface_progress = px_self_iface_progress,
    .iface_fd = px_net_stub_iface_fd,
    .ep_path_check = px_net_stub_ep_path_check,
    .ep_describe = px_net_stub_ep_describe,
    .iface_quiet = px_net_stub_iface_quiet,
    .ep_ready = px_net_stub_ep_ready,
    .ep_bulk_recv = px_net_stub_ep_bulk_recv,
    .ep_bulk_send = px_net_stub_ep_bulk_send,
    .ep_bulk_acked = px_net_stub_ep_bulk_acked,
    .ep_bulk_cancel = px_net_stub_ep_bulk_cancel,
    .iface_sleep = px_net_stub_iface_sleep,
};
