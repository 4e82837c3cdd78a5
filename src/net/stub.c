/* The operations a transport does not have, for its ops table (net.h).
 * Apart from the registry in net.c, so that a program with a transport of
 * its own and its own px_net_find (the rail layer's unit tests) can fill
 * its table with these without linking every transport. */
#include "net.h"

px_status_t px_net_stub_ep_get(px_net_ep_t *ep, void *local, uint64_t raddr, size_t len)
{
    (void)ep;
    (void)local;
    (void)raddr;
    (void)len;
    return PX_ERR_UNSUPPORTED;
}

px_status_t px_net_stub_ep_put(px_net_ep_t *ep, const void *local, uint64_t raddr, size_t len)
{
    (void)ep;
    (void)local;
    (void)raddr;
    (void)len;
    return PX_ERR_UNSUPPORTED;
}

int px_net_stub_ep_subs(px_net_iface_t *iface, int rank, px_net_sub_info_t *info, int max)
{
    (void)iface;
    (void)rank;
    if (max > 0) {
        memset(info, 0, sizeof(*info));
        info->tos = info->prio = -1;
    }
    return 1;
}

void px_net_stub_ep_reset(px_net_ep_t *ep) { (void)ep; }

void px_net_stub_ep_withdraw(px_net_ep_t *ep) { (void)ep; }
void px_net_stub_ep_destroy(px_net_ep_t *ep) { (void)ep; }

void px_net_stub_ep_rx_cancel(px_net_ep_t *ep) { (void)ep; }

int px_net_stub_ep_path_check(px_net_ep_t *ep, uint64_t timeout_ns)
{
    (void)ep;
    (void)timeout_ns;
    return PX_ERR_UNSUPPORTED;
}

const char *px_net_stub_ep_describe(px_net_ep_t *ep)
{
    (void)ep;
    return "";
}

int px_net_stub_iface_fd(px_net_iface_t *iface)
{
    (void)iface;
    return -1;
}

int px_net_stub_iface_quiet(px_net_iface_t *iface)
{
    (void)iface;
    return 0;
}

void px_net_stub_iface_sleep(px_net_iface_t *iface, int on)
{
    (void)iface;
    (void)on;
}

void px_net_stub_ep_wake(px_net_ep_t *ep) { (void)ep; }

int px_net_stub_ep_ready(px_net_ep_t *ep)
{
    (void)ep;
    return 1;
}

size_t px_net_stub_ep_frame(px_net_ep_t *ep)
{
    (void)ep;
    return 0;
}

px_status_t px_net_stub_ep_bulk_recv(px_net_ep_t *ep, void *buf, size_t len, void *arg,
                                     px_net_bulk_offer_t *offer)
{
    (void)ep, (void)buf, (void)len, (void)arg, (void)offer;
    return PX_ERR_UNSUPPORTED;
}

px_status_t px_net_stub_ep_bulk_send(px_net_ep_t *ep, const px_net_bulk_offer_t *offer,
                                     const void *buf, size_t len, void *arg)
{
    (void)ep, (void)offer, (void)buf, (void)len, (void)arg;
    return PX_ERR_UNSUPPORTED;
}

void px_net_stub_ep_bulk_acked(px_net_ep_t *ep, void *arg, uint64_t got)
{
    (void)ep, (void)arg, (void)got;
}

uint64_t px_net_stub_ep_bulk_cancel(px_net_ep_t *ep, void *arg)
{
    (void)ep, (void)arg;
    return 0;
}

px_status_t px_net_stub_ep_send_fill(px_net_ep_t *ep, const void *hdr, size_t hdr_len, size_t len,
                                     px_net_fill_fn fill, px_net_send_cb_t cb, void *arg)
{
    (void)ep, (void)hdr, (void)hdr_len, (void)len, (void)fill, (void)cb, (void)arg;
    return PX_ERR_UNSUPPORTED;
}
