/* Bulk transfers of the udp transport (PX_NET_CAP_BULK): a large payload
 * over a pooled datagram socket, received straight into the receiver's
 * buffer (the UD zero-copy idea: a socket per transfer, so that every
 * datagram arriving on it is known to belong to one posted buffer and the
 * kernel can copy it there; there is no staging buffer and no copy out of
 * it).
 *
 * The receiver takes a socket from its pool, binds it to the local address
 * of the subchannel the layer above chose, and hands the sender an offer:
 * its port, a random per-transfer token and a window (carried by the layer
 * above over its reliable channel). The sender streams datagrams
 * {magic, length, token, offset} + data to that port, at most a window
 * beyond what the receiver has acknowledged. The receiver reads batches
 * with each datagram's data pointed at where it belongs if the stream is in
 * order; a datagram with another offset (lost or reordered predecessor) or
 * a wrong token is dropped, and the receiver repeats its progress; the
 * sender goes back to the acknowledged offset on a repeated acknowledgement
 * or a timeout (go-back-N). Progress (bulk_progress up at the receiver,
 * ep_bulk_acked down at the sender) travels through the layer above.
 *
 * Internal to src/net/udp; the unit test drives it directly. */
#ifndef PX_NET_UDP_BULK_H
#define PX_NET_UDP_BULK_H

#include "../net.h"

typedef struct px_udp_bulk px_udp_bulk_t;

typedef struct {
    uint64_t rx_transfers, rx_bytes, rx_inplace, rx_moved, rx_dropped, rx_bad, no_socket;
    uint64_t tx_transfers, tx_bytes, tx_dgrams, tx_resent, tx_timeouts;
} px_udp_bulk_stats_t;

/* Upcalls go to rx->bulk_progress and rx->bulk_done with the owner given
 * to px_udp_bulk_recv / px_udp_bulk_send. NULL when out of memory. */
px_udp_bulk_t *px_udp_bulk_open(const px_net_rx_ops_t *rx);
/* Closes the sockets; with `profile` prints the counters of rank `rank`. */
void px_udp_bulk_close(px_udp_bulk_t *b, int rank, int profile);
const px_udp_bulk_stats_t *px_udp_bulk_stats(const px_udp_bulk_t *b);

/* Receiver: a socket for `len` bytes into buf, on local address local_ip
 * (network order), datagrams of at most dgram_max bytes. PX_OK and the
 * offer, or PX_ERR_BUSY (no socket free: the caller sends another way). */
px_status_t px_udp_bulk_recv(px_udp_bulk_t *b, void *owner, uint32_t local_ip, uint32_t dgram_max,
                             void *buf, size_t len, void *arg, px_net_bulk_offer_t *offer);
/* Sender: streams buf[0, len) to remote_ip:offer->port from local_ip. */
px_status_t px_udp_bulk_send(px_udp_bulk_t *b, void *owner, uint32_t local_ip, uint32_t remote_ip,
                             const px_net_bulk_offer_t *offer, const void *buf, size_t len,
                             void *arg);
/* Sender: the receiver has `got` bytes of the transfer arg. */
void px_udp_bulk_acked(px_udp_bulk_t *b, void *arg, uint64_t got);
/* Ends the transfer arg without an upcall: the bytes in place (receiver)
 * or acknowledged (sender), 0 for an unknown arg. */
uint64_t px_udp_bulk_cancel(px_udp_bulk_t *b, void *arg);
/* Polls receive sockets and send timers; the number of events. */
int px_udp_bulk_progress(px_udp_bulk_t *b);
/* Transfers under way (the transport is not quiet). */
int px_udp_bulk_busy(const px_udp_bulk_t *b);

#endif
