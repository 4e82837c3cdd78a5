/* Rail layer: a virtual channel per network peer. Every frame carries a
 * per-channel sequence number and a cumulative acknowledgement (piggybacked
 * on reverse traffic, explicit only after PX_RAIL_ACK_EVERY frames without
 * any). Today a channel has one subchannel (one TCP connection); multi-rail
 * striping, failover and the datagram transport extend this layer. */
#ifndef PX_RAIL_H
#define PX_RAIL_H

#include "../net/net.h"

typedef struct px_rail px_rail_t;
typedef struct px_rail_vc px_rail_vc_t;

typedef struct px_rail_sub_stats {
    uint64_t frames_tx, frames_rx, bytes_tx, bytes_rx, acks_tx, acks_rx;
} px_rail_sub_stats_t;

/* Opens the network transports named in `net` (e.g. "tcp"). Frames that
 * arrive are handed to up->rx_begin/rx_done with the owner given to
 * px_rail_vc_create. */
px_status_t px_rail_init(const px_boot_info_t *boot, const char *net, const px_net_rx_ops_t *up,
                         px_rail_t **rail_p);
void px_rail_finalize(px_rail_t *rail);
int px_rail_reachable(px_rail_t *rail, int rank);
px_status_t px_rail_vc_create(px_rail_t *rail, int rank, void *owner, px_rail_vc_t **vc_p);
/* Same contract as px_net_ops_t.ep_send. */
px_status_t px_rail_vc_send(px_rail_vc_t *vc, const void *hdr, size_t hdr_len,
                            const struct iovec *iov, int iovcnt, px_net_send_cb_t cb, void *arg);
size_t px_rail_vc_pending(px_rail_vc_t *vc);
size_t px_rail_vc_eager_limit(px_rail_vc_t *vc);
int px_rail_progress(px_rail_t *rail);
int px_rail_fd(px_rail_t *rail);
/* Frames sent but not yet acknowledged by the peer. */
uint32_t px_rail_vc_unacked(px_rail_vc_t *vc);
void px_rail_print_stats(px_rail_t *rail, int rank);

#endif
