/* udp-zcopy: rendezvous data over a pool of datagram sockets, received
 * straight into the user's buffer (the UD zero-copy idea: a socket per
 * transfer, so that every datagram arriving on it is known to belong to one
 * posted buffer and the kernel can copy it there; there is no staging
 * buffer and no copy out of it).
 *
 * The receiver takes a socket from its pool, binds it to the address of a
 * working subchannel to the sender and tells the sender its port, a random
 * per-transfer token and a window (PX_AM_ZCTS, over the reliable channel).
 * The sender streams datagrams {magic, length, token, offset} + data to that
 * port, at most a window beyond what the receiver has acknowledged. The
 * receiver reads batches with each datagram's data pointed at where it
 * belongs if the stream is in order; a datagram with another offset (lost
 * or reordered predecessor) or a wrong token is dropped, and the receiver
 * repeats its acknowledgement; the sender goes back to the acknowledged
 * offset on a repeated acknowledgement or a timeout (go-back-N).
 * Acknowledgements (PX_AM_ZACK) travel over the reliable channel. */
#ifndef PX_PROTO_ZCOPY_H
#define PX_PROTO_ZCOPY_H

#include "../util/px_status.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    /* the receiver has `got` bytes in order: tell the sender (peer, its request sreq) */
    void (*ack)(int peer, uint64_t sreq, uint64_t got);
    /* a transfer ended (req: what was given to post/start) */
    void (*recv_done)(void *req, px_status_t st);
    void (*send_done)(void *req, px_status_t st);
} px_zc_ops_t;

/* What the receiver tells the sender. */
typedef struct {
    uint16_t port;
    uint32_t window; /* bytes the sender may have unacknowledged */
    uint32_t dgram;  /* data bytes per datagram */
    uint64_t token;
} px_zc_offer_t;

typedef struct {
    uint64_t rx_transfers, rx_bytes, rx_inplace, rx_moved, rx_dropped, rx_bad, no_socket;
    uint64_t tx_transfers, tx_bytes, tx_dgrams, tx_resent, tx_timeouts;
} px_zc_stats_t;

void px_zc_init(const px_zc_ops_t *ops);
const px_zc_stats_t *px_zc_stats(void);
void px_zc_finalize(void);

/* Receiver: a socket for `len` bytes into buf from peer, on local address
 * local_ip (network order), datagrams of at most dgram_max bytes. 0 and
 * the offer, or -1 (no socket free: the caller falls back to copying). */
int px_zc_recv_post(int peer, uint32_t local_ip, uint32_t dgram_max, void *buf, size_t len,
                    void *req, uint64_t sreq, px_zc_offer_t *offer);

/* Sender: stream buf[0, len) to remote_ip:offer->port from local_ip. */
int px_zc_send_start(int peer, uint32_t local_ip, uint32_t remote_ip, const px_zc_offer_t *offer,
                     const void *buf, size_t len, void *req);
/* Sender: the receiver acknowledged `got` bytes of the transfer of req. */
void px_zc_send_acked(void *req, uint64_t got);

/* Polls receive sockets and send timers; the number of events. */
int px_zc_progress(void);
/* Transfers under way (the progress loop must not sleep in epoll). */
int px_zc_busy(void);
/* Forgets every transfer with peer (its requests are failed by the caller). */
void px_zc_fail_peer(int peer);
void px_zc_print_stats(int rank);

#endif
