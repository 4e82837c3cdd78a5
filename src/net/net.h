/* Transports: self, shm, tcp, udp, ofi (libfabric, when built with it).
 * One ops table each.
 *
 * A transport carries frames made of a small header (opaque bytes of the
 * layer above, copied by the transport) and a payload (an iovec the caller
 * keeps valid until the send completes). Received frames are delivered up
 * through px_net_rx_ops_t: rx_begin gets the header and says where the
 * payload goes, rx_done runs when it is there. Transports never call MPI.
 *
 * The contract of an ops table: every member is filled. An operation the
 * transport does not have is one of the px_net_stub_* functions below,
 * which answer PX_ERR_UNSUPPORTED or the neutral answer its comment gives,
 * so a caller never tests a member for NULL. What a caller must know
 * before it relies on an operation (fault tolerance needs ep_reset and
 * ep_rx_cancel, say) is a capability bit of px_net_attr_t.caps, and an
 * operation its bit covers works when the bit is set. */
#ifndef PX_NET_H
#define PX_NET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "../boot/boot.h"
#include "../util/px_status.h"

#define PX_NET_HDR_MAX 96 /* largest header an upper layer may pass */

typedef struct px_net_iface px_net_iface_t;
typedef struct px_net_ep px_net_ep_t;

/* Upcalls into the layer that owns an endpoint (rail for networks, proto
 * for shm/self). `owner` is what that layer gave ep_create. */
typedef struct px_net_rx_ops {
    /* The header of a frame has arrived. Returns where its payload_len
     * bytes go (NULL: discard them); *ctx_p is handed to rx_done. */
    void *(*rx_begin)(void *owner, const void *hdr, size_t hdr_len, size_t payload_len,
                      void **ctx_p);
    void (*rx_done)(void *owner, void *ctx);
    /* Where rx_begin answered PX_NET_RX_STREAM (a transport with
     * PX_NET_CAP_STREAM): each piece of the payload, in order, len bytes
     * at data, valid during the call only; rx_done follows the last. The
     * layer above takes the bytes from the transport's own buffers (a
     * receive unpacks them into place) instead of having them copied out
     * first. NULL for an owner that never answers PX_NET_RX_STREAM. */
    void (*rx_data)(void *owner, void *ctx, const void *data, size_t len);
    /* The endpoint failed (peer gone, link error). */
    void (*ep_failed)(void *owner, px_status_t why);
    /* Bulk transfers (PX_NET_CAP_BULK; only such a transport calls
     * these two, with the owner of the endpoint that started the transfer
     * and the arg given to ep_bulk_recv or ep_bulk_send).
     * bulk_progress: the receiver has `got` bytes in place, in order, from
     * the start; its peer should be told (ep_bulk_acked there).
     * bulk_done: the transfer ended: the receiver has everything, or the
     * sender's was acknowledged whole (PX_OK), or it gave up (an error). */
    void (*bulk_progress)(void *owner, void *arg, uint64_t got);
    void (*bulk_done)(void *owner, void *arg, px_status_t st);
    /* Optional: `rank` connects to this interface and has no endpoint here
     * yet. The layer above may create its endpoints (ep_create) now;
     * returns 0 when it did, else the connection is refused. `owner` is
     * what that layer gave iface_open. */
    int (*ep_incoming)(void *owner, int rank);
} px_net_rx_ops_t;

/* Writes bytes [off, off + len) of a payload at dst (ep_send_fill),
 * arg as the send's. */
typedef void (*px_net_fill_fn)(void *arg, void *dst, size_t off, size_t len);

/* rx_begin's answer for a payload taken piece by piece (rx_data). */
#define PX_NET_RX_STREAM ((void *)(uintptr_t)1)

/* Called when a send that returned PX_INPROGRESS no longer needs the
 * caller's payload (it was written or copied out). */
typedef void (*px_net_send_cb_t)(void *arg, px_status_t status);

enum {
    /* ep_get and ep_put: a peer's memory directly (CMA); without it they
     * answer PX_ERR_UNSUPPORTED. */
    PX_NET_CAP_GET = 1u << 0,
    /* Frames may be lost, duplicated or reordered, and ep_failed never says
     * so: the layer above retransmits (the rail layer does). Frames must not
     * exceed max_frag payload bytes. */
    PX_NET_CAP_LOSSY = 1u << 1,
    /* ep_reset and ep_rx_cancel do what they say (what the rail layer's
     * fault tolerance needs); without it they do nothing. */
    PX_NET_CAP_RESET = 1u << 2,
    /* ep_path_check asks the network; without it, it answers
     * PX_ERR_UNSUPPORTED. */
    PX_NET_CAP_PATH_CHECK = 1u << 3,
    /* ep_bulk_*: a large payload straight into the receiver's buffer, paced
     * and made reliable by the transport itself; the receiver posts the
     * buffer and hands the sender an offer (over any channel), then each
     * side's ep_bulk_acked / bulk_progress carry the receiver's progress.
     * Without it ep_bulk_recv and ep_bulk_send answer PX_ERR_UNSUPPORTED. */
    PX_NET_CAP_BULK = 1u << 4,
    /* After ep_reset nothing the peer sent before it arrives (the old
     * connection is gone): a frame on a reset endpoint came over a path
     * that works now. Without it a frame sent before a fault may still be
     * delivered after the reset. */
    PX_NET_CAP_FENCE = 1u << 5,
    /* A peer may sleep in the kernel until this transport signals it
     * (iface_sleep): what the layer above writes for it into memory they
     * share (shared-memory collectives) needs an ep_wake after. Without it
     * ep_wake does nothing and need not be called. */
    PX_NET_CAP_WAKE = 1u << 6,
    /* rx_begin may answer PX_NET_RX_STREAM (rx_data), and ep_send_fill
     * writes payloads into the transport's own buffers. */
    PX_NET_CAP_STREAM = 1u << 7,
};

/* What a bulk receiver tells its sender (opaque to the layers above, which
 * carry it; the subchannel index is the same at both ends). */
typedef struct px_net_bulk_offer {
    uint64_t token;  /* this transfer's, random */
    uint32_t window; /* bytes the sender may have unacknowledged */
    uint32_t dgram;  /* data bytes per datagram */
    uint16_t port;
} px_net_bulk_offer_t;

typedef struct px_net_attr {
    unsigned caps;
    size_t max_frag;    /* payload bytes per frame the transport prefers */
    size_t eager_limit; /* default eager/rendezvous threshold */
    double latency_us;  /* rough estimates for selection tables */
    double bandwidth_mbs;
} px_net_attr_t;

/* One subchannel to a peer: a (local address, remote address) pair on one
 * rail and path. */
typedef struct px_net_sub_info {
    int rail;                     /* local rail (interface) index */
    int path;                     /* index of the path within the rail */
    double speed_mbs;             /* link speed of the local interface, 0 unknown */
    char label[64];               /* e.g. "rail0 10.100.0.1>10.100.0.2" */
    uint32_t local_ip, remote_ip; /* IPv4, network byte order (0: not IP) */
    uint32_t dgram_max;           /* datagram transports: largest payload per datagram */
    uint32_t frame_one;           /* datagram transports: largest frame (upper header and
                         * payload) that travels as one datagram */
    /* QoS lanes (src/util/lanes.h): subchannels that share one address pair
     * come in lanes, subchannel k = lane * pairs + pair, each its own
     * connection (or datagram flow) with its own marks */
    int lane;
    int tos;  /* IP_TOS byte its packets carry, -1: unmarked */
    int prio; /* SO_PRIORITY of its socket, -1: unset */
} px_net_sub_info_t;

#define PX_NET_MAX_SUB 16

typedef struct px_net_ops {
    size_t size; /* sizeof(px_net_ops_t), for future extension */
    const char *name;
    /* Opens the transport for this process; may use boot put/fence. The
     * interface's upcalls that concern no endpoint (ep_incoming) get
     * `owner`. */
    px_status_t (*iface_open)(const px_boot_info_t *boot, const px_net_rx_ops_t *rx, void *owner,
                              px_net_iface_t **iface_p);
    void (*iface_close)(px_net_iface_t *iface);
    void (*iface_query)(px_net_iface_t *iface, px_net_attr_t *attr_p);
    /* Whether this transport can reach `rank` at all. */
    int (*iface_reachable)(px_net_iface_t *iface, int rank);
    /* Endpoint to a peer; may connect lazily. `sub` selects one of several
     * endpoints to the same peer (subchannel index, 0 for one rail). */
    px_status_t (*ep_create)(px_net_iface_t *iface, int rank, int sub, void *owner,
                             px_net_ep_t **ep_p);
    /* Subchannels to `rank` (at most max, filled into info): how many
     * endpoints ep_create accepts for it. Negative: an error, e.g. no common
     * rail. A transport of one endpoint per peer: px_net_stub_ep_subs. */
    int (*ep_subs)(px_net_iface_t *iface, int rank, px_net_sub_info_t *info, int max);
    /* Sends hdr + iov. Returns PX_OK when the payload is no longer needed,
     * PX_INPROGRESS when cb(arg) will say so later, or an error. */
    px_status_t (*ep_send)(px_net_ep_t *ep, const void *hdr, size_t hdr_len,
                           const struct iovec *iov, int iovcnt, px_net_send_cb_t cb, void *arg);
    /* Copies len bytes at the peer's address raddr into local (PX_NET_CAP_GET). */
    px_status_t (*ep_get)(px_net_ep_t *ep, void *local, uint64_t raddr, size_t len);
    /* Copies len bytes at local to the peer's address raddr (PX_NET_CAP_GET). */
    px_status_t (*ep_put)(px_net_ep_t *ep, const void *local, uint64_t raddr, size_t len);
    /* Bytes queued but not yet written. */
    size_t (*ep_pending)(px_net_ep_t *ep);
    /* Drops the endpoint's connection and everything queued on it (their
     * callbacks run with an error) without reporting ep_failed; the next
     * ep_send connects afresh (PX_NET_CAP_RESET). */
    void (*ep_reset)(px_net_ep_t *ep);
    /* Takes back every queued send that has a callback (the callback
     * runs with PX_ERR_CANCELED); the connection stays, and a send whose
     * first bytes are written goes on from a copy of the rest. Frames the
     * layer above sends again elsewhere then do not wait behind a stalled
     * connection. px_net_stub_ep_withdraw where sends are never held
     * back. */
    void (*ep_withdraw)(px_net_ep_t *ep);
    /* Ends the endpoint of a process that has left (one of another job,
     * after MPI_Comm_disconnect): its connection closes in order, which the
     * peer takes for "leaving", queued sends end with PX_ERR_CANCELED, no
     * upcall follows, and the transport forgets the endpoint; once all of a
     * rank's are ended, the next ep_create pairs its addresses afresh from
     * what the bootstrap store then holds. px_net_stub_ep_destroy (nothing)
     * where no process of another job is ever reached. */
    void (*ep_destroy)(px_net_ep_t *ep);
    /* Discards the rest of the payload of the frame being received (rx_done
     * still runs); the layer above got the same frame another way
     * (PX_NET_CAP_RESET). */
    void (*ep_rx_cancel)(px_net_ep_t *ep);
    /* Polls; returns the number of events handled. */
    int (*iface_progress)(px_net_iface_t *iface);
    /* A descriptor the engine may block on when idle, or -1. */
    int (*iface_fd)(px_net_iface_t *iface);
    /* Datagram transports: whether ep's path still carries packets, as the
     * peer's kernel answers it (not the peer process, which may be busy
     * elsewhere): 1 yes, 0 not known yet (call again), -1 no answer within
     * timeout_ns, or the network refuses. Starts a check when none is under
     * way (PX_NET_CAP_PATH_CHECK). */
    int (*ep_path_check)(px_net_ep_t *ep, uint64_t timeout_ns);
    /* A few words on the endpoint's connection, for a job that seems stuck
     * (e.g. "connected", "in handshake"); "" when there is nothing to say. */
    const char *(*ep_describe)(px_net_ep_t *ep);
    /* Nonzero when iface_progress would only look at iface_fd: nothing
     * queued to flush, no timer of its own. The engine then skips a poll
     * whose descriptor is not readable. 0 always: always poll. */
    int (*iface_quiet)(px_net_iface_t *iface);
    /* Nonzero when a frame sent on ep now goes out at once (a connection
     * is established and verified), not after a connection set-up. 1
     * always: nothing to set up. */
    int (*ep_ready)(px_net_ep_t *ep);
    /* Bulk transfers (PX_NET_CAP_BULK). ep_bulk_recv: len bytes from ep's
     * peer will land in buf; fills the offer for the sender, or answers
     * PX_ERR_BUSY (no resources now: send the data another way). arg names
     * the transfer in upcalls and below, at both ends. */
    px_status_t (*ep_bulk_recv)(px_net_ep_t *ep, void *buf, size_t len, void *arg,
                                px_net_bulk_offer_t *offer);
    /* Streams buf[0, len) to the receiver that made the offer; buf stays
     * valid until bulk_done or ep_bulk_cancel. */
    px_status_t (*ep_bulk_send)(px_net_ep_t *ep, const px_net_bulk_offer_t *offer, const void *buf,
                                size_t len, void *arg);
    /* Sender: the receiver has `got` bytes of the transfer arg in place. */
    void (*ep_bulk_acked)(px_net_ep_t *ep, void *arg, uint64_t got);
    /* Ends the transfer arg without an upcall; returns the bytes in place
     * (receiver) or acknowledged (sender) so far. Unknown arg: 0. */
    uint64_t (*ep_bulk_cancel)(px_net_ep_t *ep, void *arg);
    /* A transport whose arrivals iface_fd does not show by itself (shared
     * memory) and that PX_PROGRESS_MODE=sleep made signal it: on=1 before
     * the engine sleeps on iface_fd asks the peers to signal it from then
     * on (the engine polls once more after, for what came in between);
     * on=0 after waking stops them and consumes the signals. */
    void (*iface_sleep)(px_net_iface_t *iface, int on);
    /* ep_send of a frame that frames sent after it may overtake: data the
     * layer above places by offset, in any order (rendezvous, one-sided).
     * A connection sends the ordered frames that come later (requests,
     * answers, acknowledgements) before such frames still queued, so an
     * answer does not wait behind a transfer going the same way.
     * Transports that keep every frame in order give their ep_send. */
    px_status_t (*ep_send_bulk)(px_net_ep_t *ep, const void *hdr, size_t hdr_len,
                                const struct iovec *iov, int iovcnt, px_net_send_cb_t cb,
                                void *arg);
    /* The largest bulk frame worth sending on ep now (bytes): what its
     * connection carries in a few milliseconds at the rate it delivers, so
     * that an ordered frame sent after it waits for little; 0 when the
     * transport has no preference (px_net_stub_ep_frame). */
    size_t (*ep_frame)(px_net_ep_t *ep);
    /* PX_NET_CAP_WAKE: signals ep's peer if it sleeps, as a send would;
     * costs a load when it does not. */
    void (*ep_wake)(px_net_ep_t *ep);
    /* PX_NET_CAP_STREAM: sends hdr and a payload of len bytes that
     * fill(arg, ...) writes straight into the transport's buffers, in
     * order, as they take it (now or from a later iface_progress); the
     * layer above packs a message there instead of into a copy of its
     * own. Returns and calls cb(arg) as ep_send does. Without the bit:
     * PX_ERR_UNSUPPORTED (px_net_stub_ep_send_fill). */
    px_status_t (*ep_send_fill)(px_net_ep_t *ep, const void *hdr, size_t hdr_len, size_t len,
                                px_net_fill_fn fill, px_net_send_cb_t cb, void *arg);
} px_net_ops_t;

/* What fills the member of an operation a transport does not have
 * (src/net/stub.c). These three answer PX_ERR_UNSUPPORTED: */
px_status_t px_net_stub_ep_get(px_net_ep_t *ep, void *local, uint64_t raddr, size_t len);
px_status_t px_net_stub_ep_put(px_net_ep_t *ep, const void *local, uint64_t raddr, size_t len);
int px_net_stub_ep_path_check(px_net_ep_t *ep, uint64_t timeout_ns);
/* One subchannel, its info zeroed (no rail, no label). */
int px_net_stub_ep_subs(px_net_iface_t *iface, int rank, px_net_sub_info_t *info, int max);
void px_net_stub_ep_reset(px_net_ep_t *ep);                  /* does nothing */
void px_net_stub_ep_withdraw(px_net_ep_t *ep);               /* does nothing */
void px_net_stub_ep_destroy(px_net_ep_t *ep);                /* does nothing */
void px_net_stub_ep_rx_cancel(px_net_ep_t *ep);              /* does nothing */
const char *px_net_stub_ep_describe(px_net_ep_t *ep);        /* "" */
int px_net_stub_iface_fd(px_net_iface_t *iface);             /* -1: nothing to block on */
int px_net_stub_iface_quiet(px_net_iface_t *iface);          /* 0: always poll */
void px_net_stub_iface_sleep(px_net_iface_t *iface, int on); /* does nothing */
int px_net_stub_ep_ready(px_net_ep_t *ep);                   /* 1: nothing to set up */
size_t px_net_stub_ep_frame(px_net_ep_t *ep);                /* 0: no preference */
void px_net_stub_ep_wake(px_net_ep_t *ep);                   /* does nothing */
px_status_t px_net_stub_ep_send_fill(px_net_ep_t *ep, const void *hdr, size_t hdr_len, size_t len,
                                     px_net_fill_fn fill, px_net_send_cb_t cb,
                                     void *arg); /* PX_ERR_UNSUPPORTED */
/* No bulk transfers: PX_ERR_UNSUPPORTED, and nothing to ack or cancel. */
px_status_t px_net_stub_ep_bulk_recv(px_net_ep_t *ep, void *buf, size_t len, void *arg,
                                     px_net_bulk_offer_t *offer);
px_status_t px_net_stub_ep_bulk_send(px_net_ep_t *ep, const px_net_bulk_offer_t *offer,
                                     const void *buf, size_t len, void *arg);
void px_net_stub_ep_bulk_acked(px_net_ep_t *ep, void *arg, uint64_t got);
uint64_t px_net_stub_ep_bulk_cancel(px_net_ep_t *ep, void *arg);

extern const px_net_ops_t px_net_self_ops;
extern const px_net_ops_t px_net_shm_ops;
/* PX_SHM_EAGER_LIMIT=auto: the limit while ranks on the machine are at
 * most twice its cores, and above that */
#define PX_SHM_EAGER_AUTO_HIGH 65536
#define PX_SHM_EAGER_AUTO_LOW 16384
extern const px_net_ops_t px_net_tcp_ops;
extern const px_net_ops_t px_net_udp_ops;
#ifdef PX_HAVE_OFI
extern const px_net_ops_t px_net_ofi_ops;
/* The libfabric providers and NICs this host offers, and the one PX_NET=ofi
 * would use (pxinfo). */
void px_net_ofi_print(FILE *f);
#endif

/* Registry: every transport, in preference order. */
const px_net_ops_t *px_net_find(const char *name);
const px_net_ops_t *const *px_net_all(void);

static inline size_t px_net_iov_len(const struct iovec *iov, int iovcnt)
{
    size_t n = 0;
    for (int i = 0; i < iovcnt; i++)
        n += iov[i].iov_len;
    return n;
}

/* Copies the iovec's bytes into dst, one after the other. */
static inline void px_net_iov_gather(void *dst, const struct iovec *iov, int iovcnt)
{
    size_t o = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len) /* a zero-byte message may come with a NULL buffer */
            memcpy((char *)dst + o, iov[i].iov_base, iov[i].iov_len);
        o += iov[i].iov_len;
    }
}

#endif
