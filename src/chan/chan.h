/* Channel layer: for each peer, the one object that decides what carries
 * its messages: the process itself (self), shared memory inside a node, or
 * the network through the rail layer: a virtual channel over connections
 * (tcp), over datagrams (udp), or both (hybrid: datagrams first, a
 * connection once the peer carries enough traffic, PX_RC_PROMOTE_AFTER).
 * It owns the PX_CHANNELS rule table (chan_rules.h), the per-peer ordering
 * fence between channels, the transports' set-up and their progress.
 *
 * Frames are active messages: the first byte of every header is an id
 * whose handler the owning layer registered (px_chan_am_register); the
 * handler runs in the progress context on arrival and says where the
 * payload goes, and the upper layer's rx_done runs once it is there.
 * Nothing here knows MPI: sends carry neutral hints (PX_CHAN_F_*). */
#ifndef PX_CHAN_H
#define PX_CHAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "../boot/boot.h"
#include "../util/px_status.h"

/* A network route to a peer (one of its rail channels); NULL for a peer on
 * this node, or "the peer's current default" where a route is asked for. */
typedef struct px_chan_route px_chan_route_t;

/* What carried a message, for the profile's volume per channel kind. */
enum { PX_CAR_SELF, PX_CAR_SHM, PX_CAR_UDP, PX_CAR_TCP, PX_CAR_N };

/* Hints with a send (the same bits as the rail layer's PX_RAIL_F_*). */
enum {
    PX_CHAN_F_STRIPE = 1u << 0,  /* offset-addressed data: may be split, arrive in any order */
    PX_CHAN_F_WAITED = 1u << 1,  /* the caller waits for this send before anything else */
    PX_CHAN_F_RELEASE = 1u << 3, /* the caller waits for nothing else: done once written */
    PX_CHAN_F_HELD = 1u << 4,    /* the caller waits for the callback anyway: keep its buffer */
    PX_CHAN_F_COLL = 1u << 5,    /* a collective's traffic (its own QoS lane) */
    PX_CHAN_F_CLASS = 1u << 2,   /* the lane class is given, at PX_CHAN_F_CLASS_SHIFT */
};
#define PX_CHAN_F_CLASS_SHIFT 6 /* 2 bits: PX_LANE_SMALL .. PX_LANE_BULK */

typedef void (*px_chan_send_cb_t)(void *arg, px_status_t status);

/* ---------- active messages ---------- */

/* One table of ids for every layer above: the protocols' own and, from
 * PX_AM_USER (proto_impl.h), those of the public interface (plexus/am.h). */
#define PX_CHAN_AM_MAX 128
#define PX_CHAN_HDR_MAX 64  /* largest header of an active message */
#define PX_CHAN_AM_CTRL 127 /* the channel layer's own (hybrid connection agreement) */

/* The header of a frame of id `am` from `peer` has arrived (hdr_len is at
 * least the length registered). Returns where its len payload bytes go
 * (NULL: discard them); *ctx_p goes to the upper layer's rx_done. off: the
 * offset of this piece within the frame's payload (striped frames only). */
typedef void *(*px_chan_am_fn)(int peer, const void *hdr, size_t hdr_len, size_t off, size_t len,
                               void **ctx_p);

enum { PX_CHAN_AM_STRIPED = 1u << 0 /* frames of this id may arrive in stripes */ };

/* A handler's answer, while px_chan_rx_can_stream() says 1, for a payload
 * it takes where it lies, piece by piece in order (px_chan_up_t.rx_data),
 * instead of having it copied to one place first. */
#define PX_CHAN_RX_STREAM ((void *)(uintptr_t)1)
int px_chan_rx_can_stream(void);

/* Registers the handler of id (below PX_CHAN_AM_CTRL) before px_chan_init. */
void px_chan_am_register(unsigned id, size_t hdr_len, unsigned flags, px_chan_am_fn fn);

/* The upper layer's side. */
typedef struct px_chan_up {
    /* The payload of a frame is in place; ctx is what its handler set
     * (NULL: nothing to do); len: the bytes of this piece. */
    void (*rx_done)(int peer, void *ctx, size_t len);
    /* A piece of a payload whose handler answered PX_CHAN_RX_STREAM: len
     * bytes at data, valid during the call only; rx_done follows the
     * last piece with the payload's whole length. */
    void (*rx_data)(int peer, void *ctx, const void *data, size_t len);
    /* peer is lost for good: its channel has ended its queued sends. */
    void (*peer_failed)(int peer, px_status_t why);
    /* Bulk transfers (px_chan_bulk_*), with the caller's arg: the receiver
     * has `got` bytes in place (tell the sender); a transfer ended whole;
     * a sender's transfer stopped at `acked` bytes (its path failed): the
     * rest must go in frames (px_chan_send). */
    void (*bulk_progress)(int peer, void *arg, uint64_t got);
    void (*bulk_done)(int peer, void *arg, px_status_t st);
    void (*bulk_failed)(int peer, void *arg, uint64_t acked);
} px_chan_up_t;

/* Opens the transports PX_NET names, makes a channel to every rank and
 * finds which ranks share this machine (collective over the job). */
px_status_t px_chan_init(const px_boot_info_t *boot, const px_chan_up_t *up);
void px_chan_finalize(void);

/* Processes of other jobs (boot.h, px_boot_peer_add), reached over tcp.
 * px_chan_card: this process's address card, which the other job's
 * processes give px_chan_peer_add (opens tcp if the job had no network);
 * PX_ERR_UNSUPPORTED when the job's network is not tcp.
 * px_chan_peer_add: the channel to rank `rank` of job `job_id`, made now
 * unless met before; *peer_p: its peer number, from the job's size up. */
px_status_t px_chan_card(char *card, size_t len);
/* Ends the channel to a process of another job that has left (nothing
 * queued or unacknowledged, else PX_ERR_BUSY); its number may be given to
 * another. */
px_status_t px_chan_peer_remove(int peer);
px_status_t px_chan_peer_add(uint64_t job_id, uint32_t rank, const uint8_t key[32],
                             const char *card, const char *node, int *peer_p);

/* ---------- choosing and sending ---------- */

typedef struct px_chan_pick {
    px_chan_route_t *env;  /* network peers: carries the message, or its rendezvous request */
    px_chan_route_t *data; /* network peers: carries rendezvous data */
    int car;               /* PX_CAR_* of what carries the data */
    uint8_t rndv;          /* rendezvous */
    uint8_t get;           /* the receiver may read the sender's buffer itself */
    uint8_t zc;            /* udp-zcopy */
} px_chan_pick_t;

/* The channel of a message of len bytes to peer (coll: a collective's
 * traffic, for PX_CHANNELS class=). A message stays on the route of the
 * previous one while that has frames unacknowledged, so no message to a
 * peer overtakes another. Counts towards opening a connection (hybrid). */
void px_chan_pick(int peer, size_t len, int coll, px_chan_pick_t *k);

/* Sends hdr (byte 0: the active-message id) and iov on route (NULL: the
 * peer's current default). Same contract as px_net_ops_t.ep_send. */
px_status_t px_chan_send(int peer, px_chan_route_t *route, const void *hdr, size_t hdr_len,
                         const struct iovec *iov, int iovcnt, unsigned flags, px_chan_send_cb_t cb,
                         void *arg);
/* Sends hdr and a payload of len bytes that fill(arg, dst, off, n) writes
 * straight into the channel's buffers, in order, as they take it: to a
 * shared-memory peer, whose ring cells then hold what would otherwise be
 * packed into a copy first. PX_ERR_UNSUPPORTED to any other peer. Else
 * as px_chan_send (cb(arg) once the payload is written). */
typedef void (*px_chan_fill_fn)(void *arg, void *dst, size_t off, size_t n);
px_status_t px_chan_send_fill(int peer, const void *hdr, size_t hdr_len, size_t len,
                              px_chan_fill_fn fill, px_chan_send_cb_t cb, void *arg);

/* Bytes queued to peer and not yet handed to the kernel (about: a frame
 * waiting in the rail layer counts one byte). */
size_t px_chan_pending(int peer);

/* Eager limit and rendezvous data per frame of a route (NULL: the peer's
 * own channel); px_chan_chunk gives `want` (0: the route's own size); both
 * are cut to what one datagram carries while the path loses many frames.
 * px_chan_eager_max: the peer's own channel's limit, whatever the loss (the
 * largest message a frame may carry at all). */
size_t px_chan_eager(int peer, px_chan_route_t *route);
size_t px_chan_eager_max(int peer);
/* The largest message any channel sends eagerly. */
size_t px_chan_eager_top(void);
size_t px_chan_chunk(int peer, px_chan_route_t *route, size_t want);
/* Whether route is a connection (tcp) rather than datagrams. */
int px_chan_route_conn(int peer, px_chan_route_t *route);

/* A rendezvous payload that will go in PX_CHAN_F_RELEASE frames once the
 * peer asks for it: copied meanwhile (rail prestage). */
void px_chan_prestage(px_chan_route_t *route, const void *buf, size_t len);
void px_chan_prestage_end(px_chan_route_t *route, const void *buf);

/* ---------- peers on this node: direct access to their memory ---------- */

int px_chan_local(int peer);
/* Whether the receiver may read a sender's buffer itself (CMA). */
int px_chan_can_get(int peer);
/* len bytes at the peer's raddr into local, or local into raddr;
 * PX_ERR_UNSUPPORTED when the channel cannot. */
px_status_t px_chan_get(int peer, void *local, uint64_t raddr, size_t len);
px_status_t px_chan_put(int peer, const void *local, uint64_t raddr, size_t len);
/* After a write into memory shared with peer that the peer polls: wakes it
 * if it sleeps in the kernel (PX_PROGRESS_MODE=sleep or block).
 * px_chan_wakes: whether any peer may need it (else skip the calls). */
int px_chan_wakes(void);
void px_chan_wake(int peer);
/* Reads of the peer's memory failed (e.g. the kernel forbids them): its
 * rendezvous transfers are copied from now on. */
void px_chan_copy_only(int peer);

/* ---------- bulk transfers (udp-zcopy) ---------- */

/* Datagram peers: a large payload straight into the receiver's buffer over
 * the rail's own path (rail.h, px_rail_bulk_*), which fails over to frames
 * when the path does. The receiver posts its buffer and carries the offer
 * to the sender (its three words as they are); progress is told with
 * bulk_progress at the receiver and px_chan_bulk_acked at the sender. */
typedef struct px_chan_bulk_offer {
    uint64_t w[3];
} px_chan_bulk_offer_t;
/* Receiver: 0 and the offer, or -1 (no path or no resources: copy). */
int px_chan_bulk_recv(int peer, void *buf, size_t len, void *arg, px_chan_bulk_offer_t *offer);
/* Sender: PX_OK, then bulk_done or bulk_failed follows; an error when the
 * offer is not valid for this peer. */
px_status_t px_chan_bulk_send(int peer, const px_chan_bulk_offer_t *offer, const void *buf,
                              size_t len, void *arg);
void px_chan_bulk_acked(int peer, void *arg, uint64_t got);
/* Ends a transfer without an upcall: bytes in place or acknowledged. */
uint64_t px_chan_bulk_cancel(int peer, void *arg);
/* Transfers under way: the progress loop must not sleep. */
int px_chan_bulk_busy(void);

/* ---------- progress, flush, state ---------- */

/* Polls every channel once; returns the number of events. */
int px_chan_progress(void);
/* PX_PROGRESS_MODE=sleep and block, around a sleep with the library's lock released.
 * px_chan_sleep_arm asks the peers to signal this process, then polls once
 * more: -1 when it must not sleep now (nothing to sleep on, transfers under
 * way, sends waiting for ring space), else the events of that poll (when
 * more than 0 it has disarmed: do not sleep). At 0, px_chan_sleep_wait
 * sleeps until something arrives, then px_chan_sleep_disarm. */
int px_chan_sleep_arm(void);
void px_chan_sleep_wait(void);
void px_chan_sleep_disarm(void);
/* With MPI_THREAD_MULTIPLE: another thread wakes the one in
 * px_chan_sleep_wait (or its next sleep, if it has not got there yet);
 * px_chan_sleep_unkick takes the signal back after the wake. */
void px_chan_sleep_kick(void);
void px_chan_sleep_unkick(void);

/* How far px_chan_flush waits. */
enum {
    PX_CHAN_FLUSH_SENT,  /* nothing is queued to any peer */
    PX_CHAN_FLUSH_ACKED, /* every peer has acknowledged everything sent to it */
    /* the last flush of a job: over a lossy transport, acknowledged and
     * every peer talked to has said it is done too (it may still need our
     * acknowledgements until then); elsewhere the same as SENT */
    PX_CHAN_FLUSH_LAST,
};
/* wait(idle) is one step of the caller's wait loop (it must progress). */
px_status_t px_chan_flush(int mode, void (*wait)(unsigned *idle));
/* MPI_Comm_disconnect: everything sent to the n peers is acknowledged, and
 * over lossy transports each of them has said the same (px_rail_done_begin),
 * so that nothing sent either way still needs this process's progress
 * after it returns. Collective over those peers. */
px_status_t px_chan_flush_peers(const int *peers, int n, void (*wait)(unsigned *idle));

int px_chan_failed(int peer);
const char *px_chan_name(int peer);
/* A line per network channel to peer (sequence numbers, queues), for a
 * job that seems stuck; nothing when the peer was never talked to (talked:
 * the caller exchanged messages with it). */
void px_chan_dump(int peer, int me, int talked);
/* PX_PROFILE: the channels and what they carried; then the rails'. */
void px_chan_print_stats(int me);
void px_chan_print_rail_stats(int me);
/* The tool interface (chan_stats.c): adds the channels' and the rails'
 * counters to c (indices PX_CTR_chan_* and PX_CTR_rail_*,
 * src/util/tool.h); nothing before px_chan_init or after finalize. */
void px_chan_counters_add(uint64_t *c);
/* A SIZE parameter this layer resolves when its row says "auto"
 * ("shm_eager_limit", "rc_promote_size"): 1 and the value it took, or 0
 * when it has not resolved it. */
int px_chan_size_in_effect(const char *param, uint64_t *value_p);

#endif
