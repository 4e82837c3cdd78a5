/* Rail layer: a virtual channel per network peer, made of subchannels, one
 * per (rail, path) pair of addresses the two peers share (see
 * docs/multirail.md).
 *
 * Every frame carries a per-channel sequence number (acknowledgement,
 * duplicate suppression) and a cumulative acknowledgement piggybacked on
 * reverse traffic, explicit only after PX_RAIL_ACK_EVERY frames without any.
 * Ordered frames (everything but rendezvous data) also carry an ordered
 * sequence number and are handed up in that order whatever subchannel
 * carried them. Rendezvous data (PX_RAIL_F_STRIPE) may be split into stripes
 * over several subchannels; each stripe is handed up with its offset as soon
 * as it arrives and is acknowledged at once, which also times it; the send
 * completes when every stripe is acknowledged. A policy (PX_RAIL_POLICY)
 * chooses the subchannel of each frame and the split of each stripeable one. */
#ifndef PX_RAIL_H
#define PX_RAIL_H

#include "../net/net.h"

typedef struct px_rail px_rail_t;
typedef struct px_rail_vc px_rail_vc_t;

enum {
    PX_RAIL_F_STRIPE = 1u << 0,  /* offset-addressed data: may be split, delivered in any order */
    PX_RAIL_F_WAITED = 1u << 1,  /* the caller waits for this send before doing anything else
                                 * (a blocking call, a collective's step): payloads up to the
                                 * eager limit are copied so it completes at once; policy epc
                                 * stripes such data and sends the rest whole */
    PX_RAIL_F_RELEASE = 1u << 3, /* the sender waits for nothing else: done once written
                                   * (PX_RAIL_RELEASE) */
    PX_RAIL_F_HELD = 1u << 4,    /* the caller waits for the callback anyway (a rendezvous
                                   * head): its buffer is kept, not copied, whatever the size */
    PX_RAIL_F_COLL = 1u << 5,    /* a collective's traffic: with lanes, the collective lane */
    PX_RAIL_F_CLASS = 1u << 2,   /* the lane class is given (bits PX_RAIL_F_CLASS_SHIFT, 2 bits:
                                  * PX_LANE_*), whatever the frame's size: a communicator's hint */
};
#define PX_RAIL_F_CLASS_SHIFT 6

/* Upcalls to the layer above: like px_net_rx_ops_t, with the offset of a
 * stripe inside its frame's payload and the length in rx_done (stripes of
 * several frames may be in flight at once). */
typedef struct px_rail_rx_ops {
    void *(*rx_begin)(void *owner, const void *hdr, size_t hdr_len, size_t off, size_t len,
                      void **ctx_p);
    void (*rx_done)(void *owner, void *ctx, size_t len);
    void (*ep_failed)(void *owner, px_status_t why);
    /* Optional: `rank` opened a connection and has no virtual channel on
     * `rail` yet; the layer above may create it (px_rail_vc_create) now.
     * Returns 0 when it did, else the connection is refused. */
    int (*vc_incoming)(px_rail_t *rail, int rank);
    /* Bulk transfers (px_rail_bulk_*), with the arg the caller gave.
     * bulk_progress: the receiver has `got` bytes in place (tell the
     * sender: px_rail_bulk_acked there); bulk_done: a transfer ended
     * whole; bulk_failed: the sender's transfer stopped at `acked` bytes
     * (its path failed): the rest must go in frames (px_rail_vc_send).
     * Needed only by callers of px_rail_bulk_*. */
    void (*bulk_progress)(void *owner, void *arg, uint64_t got);
    void (*bulk_done)(void *owner, void *arg, px_status_t st);
    void (*bulk_failed)(void *owner, void *arg, uint64_t acked);
} px_rail_rx_ops_t;

typedef struct px_rail_sub_stats {
    uint64_t frames_tx, frames_rx, bytes_tx, bytes_rx, acks_tx, acks_rx;
    uint64_t stripes, stripe_bytes, stripe_ns; /* striped sends: count, bytes, summed times */
    double weight;                             /* current share of striped blocks */
    /* fault tolerance */
    uint64_t suspects, downs, recoveries; /* state changes */
    uint64_t moves, moves_spurious;       /* suspect: its frames moved to the others; and
                                           * then the subchannel answered after all */
    uint64_t lates; /* suspect for delivering nothing while its path answered */
    uint64_t resent_frames, resent_bytes; /* frames of this subchannel sent again on others */
    uint64_t down_ns;                     /* time spent down (closed intervals) */
    int32_t state;                        /* 0 up, 1 suspect, 2 down */
} px_rail_sub_stats_t;

/* With PX_STATS=1 each rank keeps its counters in a shared-memory segment
 * /dev/shm/plexus-<job>-stats-<rank> (mode 0600, removed at finalize) that
 * `pxinfo --stats` reads while the job runs. Entry [peer * max_sub + sub]. */
#define PX_RAIL_STATS_MAGIC 0x50585354u /* "PXST" */
typedef struct px_rail_stats_entry {
    uint32_t in_use;
    int32_t peer, sub;
    char label[64];
    px_rail_sub_stats_t st;
} px_rail_stats_entry_t;

typedef struct px_rail_stats_seg {
    uint32_t magic;
    int32_t rank, nranks, max_sub;
    char policy[16];
    px_rail_stats_entry_t e[];
} px_rail_stats_seg_t;

/* Opens the network transport `net` (e.g. "tcp") and checks the policy
 * parameters. */
px_status_t px_rail_init(const px_boot_info_t *boot, const char *net, const px_rail_rx_ops_t *up,
                         px_rail_t **rail_p);
void px_rail_finalize(px_rail_t *rail);
int px_rail_reachable(px_rail_t *rail, int rank);
/* Creates the channel and its subchannels (connections are made on first
 * use). Fails when the peer shares no usable network. */
px_status_t px_rail_vc_create(px_rail_t *rail, int rank, void *owner, px_rail_vc_t **vc_p);
/* Ends the channel to a process that has left (of another job): its
 * endpoints ended (ep_destroy) and the channel freed; PX_ERR_BUSY while it
 * has frames queued or unacknowledged (unless it failed). */
px_status_t px_rail_vc_destroy(px_rail_t *rail, px_rail_vc_t *vc);
/* Same contract as px_net_ops_t.ep_send, plus PX_RAIL_F_* flags. */
px_status_t px_rail_vc_send(px_rail_vc_t *vc, const void *hdr, size_t hdr_len,
                            const struct iovec *iov, int iovcnt, unsigned flags,
                            px_net_send_cb_t cb, void *arg);
/* Frames queued and not yet handed to the transport or written by it. */
size_t px_rail_vc_pending(px_rail_vc_t *vc);
int px_rail_progress(px_rail_t *rail);
/* The same, told whether px_rail_fd is readable: when it is not and the
 * transport is quiet, only the timers run (no system call). */
int px_rail_progress_ready(px_rail_t *rail, int readable);
int px_rail_fd(px_rail_t *rail);
/* Frames sent but not yet acknowledged by the peer. */
uint32_t px_rail_vc_unacked(px_rail_vc_t *vc);
/* One subchannel at a time (hybrid connections beyond PX_RC_FAST_MAX): no
 * striping, no alternates connected in advance; the bound subchannel
 * carries everything until it fails. Set before the first send. */
void px_rail_vc_set_single(px_rail_vc_t *vc);
int px_rail_vc_single(const px_rail_vc_t *vc);
/* Sets up, ahead of any data, the connections a send on vc would use (a
 * ping on each: the transport connects and verifies it). */
void px_rail_vc_connect(px_rail_vc_t *vc);
/* 2 when every subchannel a send on vc would use (those up) has its
 * connection established, else 1 when some subchannel up has one (the
 * peer connected it), else 0. */
int px_rail_vc_ready(px_rail_vc_t *vc);
/* Its state on one line (buf), for a job that seems stuck. */
int px_rail_vc_dump(px_rail_vc_t *vc, char *buf, size_t len);
/* Sends every pending acknowledgement now (the peer waits for them). */
void px_rail_ack_all(px_rail_t *rail);
/* Lossy transports (udp): the rail layer retransmits. */
int px_rail_lossy(px_rail_t *rail);
const char *px_rail_net_name(px_rail_t *rail);
/* Rendezvous data per frame to vc: `chunk`, or one datagram's worth while
 * the path to the peer loses many frames (a frame cut into several
 * datagrams is lost with any of them). */
size_t px_rail_vc_chunk(px_rail_vc_t *vc, size_t chunk);
/* The largest message to send eagerly to vc, given the carrier's limit
 * `lim`: one datagram's worth while the path loses many frames (larger
 * messages then go by rendezvous, whose data px_rail_vc_chunk cuts). */
size_t px_rail_vc_eager(px_rail_vc_t *vc, size_t lim);
/* With fault tolerance and PX_RAIL_RELEASE: len bytes at buf will be sent
 * to vc in frames sent with PX_RAIL_F_RELEASE once the peer asks for them;
 * progress passes copy them to the release buffer meanwhile.
 * px_rail_prestage_end once the frames are made (or will not be). */
void px_rail_prestage(px_rail_vc_t *vc, const void *buf, size_t len);
void px_rail_prestage_end(px_rail_vc_t *vc, const void *buf);
/* Bytes the prestages ended so far had copied. */
uint64_t px_rail_prestaged_bytes(const px_rail_t *rail);
/* Bulk transfers straight into the receiver's buffer over the transport's
 * own path (PX_NET_CAP_BULK), counted in the subchannel's statistics.
 * The receiver posts its buffer and gets an offer to carry to the sender;
 * the sender starts with it; the receiver's progress goes up
 * (bulk_progress), travels to the sender, and comes down there
 * (px_rail_bulk_acked). When the path fails the sender's transfer stops
 * and bulk_failed says from where the rest must go in frames; the
 * receiver then ends its own with px_rail_bulk_cancel. */
typedef struct px_rail_bulk_offer {
    px_net_bulk_offer_t net;
    uint16_t sub; /* the subchannel, the same at both ends */
} px_rail_bulk_offer_t;
/* Whether vc can carry bulk transfers now. */
int px_rail_bulk_able(px_rail_vc_t *vc);
/* Receiver: PX_OK and the offer, or an error (send the data in frames). */
px_status_t px_rail_bulk_recv(px_rail_vc_t *vc, void *buf, size_t len, void *arg,
                              px_rail_bulk_offer_t *offer);
/* Sender: PX_OK (then bulk_done or bulk_failed follows), or an error when
 * no record is free. */
px_status_t px_rail_bulk_send(px_rail_vc_t *vc, const px_rail_bulk_offer_t *offer, const void *buf,
                              size_t len, void *arg);
void px_rail_bulk_acked(px_rail_vc_t *vc, void *arg, uint64_t got);
/* Ends the transfer arg (either side) without an upcall: the bytes in
 * place or acknowledged so far. */
uint64_t px_rail_bulk_cancel(px_rail_vc_t *vc, void *arg);
/* Transfers under way (the progress loop must not sleep). */
int px_rail_bulk_busy(const px_rail_t *rail);
/* The same for every channel of the rail. */
size_t px_rail_eager_limit(px_rail_t *rail);
size_t px_rail_max_frame(px_rail_t *rail);
/* Quiescence on lossy transports (finalize, MPI_Comm_disconnect): once
 * every frame to the peers is acknowledged a rank says DONE to each, and
 * leaves when each has said DONE too (a peer may still need its
 * acknowledgements until then). The peers are those listed (n of them;
 * those this rail has no channel to are left out), or with peers NULL every
 * peer it talked to. Each quiescence with a peer has
 * its number (px_rail_done_begin counts them, both sides alike since the
 * calls that quiesce are collective), so a DONE from an earlier one does
 * not end a later one. */
void px_rail_done_begin(px_rail_t *rail, const int *peers, int n);
void px_rail_send_done(px_rail_t *rail, const int *peers, int n);
/* Frames went either way (over tcp: the connection exists). */
int px_rail_vc_used(const px_rail_vc_t *vc);
int px_rail_peers_done(px_rail_t *rail, const int *peers, int n, char *missing, size_t len);

/* Introspection (tests, pxinfo, PX_PROFILE). */
int px_rail_vc_nsub(px_rail_vc_t *vc);
double px_rail_vc_weight(px_rail_vc_t *vc, int sub);
const px_rail_sub_stats_t *px_rail_vc_stats(px_rail_vc_t *vc, int sub);
const char *px_rail_policy_name(void);
void px_rail_print_stats(px_rail_t *rail, int rank);
/* Adds the rail's counters to c (indices PX_CTR_rail_*, src/util/tool.h). */
void px_rail_counters_add(const px_rail_t *rail, uint64_t *c);

#endif
