/* Internals of the rail layer, shared by its files:
 *   rail.c          set-up, channels, the progress loop, introspection
 *   rail_send.c     sending: records, the window, striped blocks, backlogs
 *   rail_recv.c     receiving: duplicates, ordering, held frames, pieces
 *   rail_reliable.c acknowledgements in and out, retransmission (lossy
 *                   transports), the congestion window
 *   rail_health.c   subchannel states (up, suspect, down), probes, timers
 *   rail_link.c     local link and address changes from the kernel
 *   rail_failover.c frames of a failed subchannel sent again or re-split
 *   rail_release.c  completion before the acknowledgement (PX_RAIL_RELEASE)
 *   rail_stats.c    counters (PX_STATS segment, PX_PROFILE)
 *   rail_bulk.c     bulk transfers on the transport's own path, and their failover
 *   policy/         striping policies, one file each (rail_policy.h)
 * Nothing here is visible above the rail layer. */
#ifndef PX_RAIL_IMPL_H
#define PX_RAIL_IMPL_H

#include "rail.h"
#include "../util/clock.h"
#include "../util/iov.h"
#include "../util/lanes.h"
#include "../util/list.h"
#include "../util/log.h"
#include "../util/param.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct px_rail_policy_ops px_rail_policy_ops_t;

/* frame types; SUBDOWN tells the peer (over a working subchannel) that
 * subchannel `seq` timed out here, so its side stops waiting for its own
 * timeout */
enum {
    PX_RAIL_DATA = 1,
    PX_RAIL_ACK = 2,
    PX_RAIL_PING = 3,
    PX_RAIL_PONG = 4,
    PX_RAIL_SUBDOWN = 5,
    PX_RAIL_DONE = 6 /* at finalize: every frame of the sender is acknowledged */
};

/* header flags on the wire */
enum {
    PX_RAIL_H_UNORD = 1,  /* deliver at once, outside the ordered sequence */
    PX_RAIL_H_SACK = 2,   /* DATA: acknowledge as soon as it is in; ACK: seq is such a frame */
    PX_RAIL_H_TIMED = 4,  /* DATA: a stripe; its acknowledgement carries the arrival time and
                          * goes at once (otherwise one goes per progress pass) */
    PX_RAIL_H_BITMAP = 8, /* ACK (lossy transports): off is a bitmap of the frames ack+1 ..
                           * ack+64 that have arrived (selective acknowledgement) */
    PX_RAIL_H_SPLIT = 16, /* DATA: a piece of the stripe whose seq is in oseq, sent again in
                           * pieces after its subchannel failed; the top byte of `sub` says
                           * how many pieces there are */
    PX_RAIL_H_AGAIN = 32, /* DATA: not the first copy of this frame */
    PX_RAIL_H_DUP = 64,   /* ACK (lossy transports): frame seq arrived twice */
};

/* Receive window: a sender never has more than this many frames
 * unacknowledged, so the receiver can track arrivals ahead of the cumulative
 * point in a bitmap. */
#define PX_RAIL_WIN 1024
#define PX_RAIL_TX_CAP0 32 /* first size of a channel's record ring */
/* lossy transports: frames per look at the loss rate, and the share sent
 * again above which rendezvous data goes in one-datagram frames (below
 * which it goes back to full frames). High enough that the losses of a full
 * queue on a congested rail (about a tenth of the frames, until the
 * congestion window shrinks) do not count: frames of one datagram are more
 * frames for the same data, and a congested rail needs fewer. 5% random
 * loss of datagrams loses a quarter of 8 KB frames at MTU 1500. */
#define PX_RAIL_LOSS_SAMPLE 256
#define PX_RAIL_LOSS_HIGH 0.20
#define PX_RAIL_LOSS_LOW 0.01

typedef struct __attribute__((packed)) px_rail_hdr {
    uint32_t seq;  /* of this frame (DATA); of the acknowledged stripe (ACK with SACK) */
    uint32_t ack;  /* every frame below ack has arrived */
    uint32_t oseq; /* ordered sequence number (DATA without UNORD) */
    uint8_t type;
    uint8_t flags;
    uint16_t sub; /* subchannel it was sent on (informational) */
    uint64_t off; /* offset of this stripe in its frame's payload */
} px_rail_hdr_t;

/* Lossy transports: a bitmap acknowledgement covers up to this many 64-frame
 * words after its cumulative point, the first in the header's `off`, the
 * others after the header: as far as the highest frame that has arrived,
 * so losses anywhere in a window of a bandwidth-delay product are seen at
 * once. */
#define PX_RAIL_SACK_WORDS (1 + (PX_NET_HDR_MAX - sizeof(px_rail_hdr_t)) / 8)

/* Subchannel states. SUSPECT: acknowledgements are overdue, new traffic
 * avoids it but what it carries stays; DOWN: the transport gave up on it,
 * its frames moved to the others and it is probed until it answers. */
enum { PX_SUB_UP, PX_SUB_SUSPECT, PX_SUB_DOWN };

#define PX_RAIL_INLINE 256 /* payload bytes kept inside a send record */
/* Payloads up to 8 KB, and those the caller waits for at once
 * (PX_RAIL_F_WAITED) up to the transport's eager limit (at most
 * PX_RAIL_COPY_MAX), are copied into their record so the sender completes
 * at once as without fault tolerance (a blocking send, or a collective step
 * waiting for its sends, would otherwise wait a round trip). The rest
 * (nonblocking eager sends, rendezvous data) stay in the caller's buffer
 * until acknowledged: a stream of them pays one acknowledgement per
 * progress pass instead of a copy. Above 8 KB the link, not the wait
 * for acknowledgements, limits a stream of sends between nodes
 * (docs/fault-tolerance.md). */
#define PX_RAIL_COPY_SMALL 8192
#define PX_RAIL_COPY_MAX (256 * 1024)
#define PX_RAIL_IOV 8
#define PX_RAIL_TICK_NS 1000000ull      /* timers run at most this often */
#define PX_RAIL_SWEEP_NS 8000000ull     /* ... and those of idle channels this often */
#define PX_RAIL_ACK_DELAY_NS 1000000ull /* an arrival is acknowledged within this */
/* Class lanes: about the longest a rendezvous frame waits on the bulk lanes
 * between being handed to them and being acknowledged (px_rail_bulk_max).
 * Longer than a round trip with the queues of a busy fabric and host, or
 * the bound would hold the bulk lanes below their rate. */
#define PX_RAIL_BULK_HOLD_NS 16000000ull

typedef struct px_rail_msg px_rail_msg_t;

/* A frame sent and not yet acknowledged. With fault tolerance every data
 * frame has one (payload copied when small, the caller's buffer otherwise,
 * whose completion then waits for the acknowledgement); without it only
 * stripes do. */
typedef struct px_rail_tx {
    struct px_rail_tx *next; /* free list */
    px_rail_vc_t *vc;
    px_rail_msg_t *msg;  /* the striped block it is part of */
    int part;            /* its index in msg->part */
    px_net_send_cb_t cb; /* the caller's completion, once acknowledged */
    void *arg;
    uint32_t seq, oseq;
    uint64_t off, t_sent;
    size_t len;
    int sub; /* where it was last sent */
    uint8_t hflags;
    uint8_t wire; /* the transport still holds the payload */
    uint8_t acked, resend;
    uint8_t tries; /* lossy transports: retransmissions after a timeout */
    uint8_t again; /* sent more than once: its acknowledgement times nothing */
    uint8_t npieces;
    uint8_t rel_ok; /* sent with PX_RAIL_F_RELEASE: it may be released */
    uint8_t told;   /* the caller was told it is done before the acknowledgement */
    uint8_t inbuf;  /* it holds a reference on the rail's release buffer */
    uint8_t bulk;   /* counted in vc->bulk_out (class lanes) */
    /* ... and vc->bulk_dlv, vc->bulk_dlv_ns when it was sent */
    uint64_t dlv, dlv_ns;
    char *area;    /* its place in that buffer (the payload once told) */
    size_t staged; /* bytes already copied there */
    uint32_t order;
    /* lossy: its place among the frames its subchannel sent */ /* PX_RAIL_H_SPLIT: pieces of the stripe it is one of */
    uint16_t uhl;
    uint8_t uh[PX_NET_HDR_MAX];
    int iovcnt;
    struct iovec iov[PX_RAIL_IOV];
    char *heap;
    size_t heap_cap;
    char small[PX_RAIL_INLINE];
} px_rail_tx_t;

/* A striped block: completes when every part is acknowledged. */
struct px_rail_msg {
    px_net_send_cb_t cb;
    void *arg;
    int nparts, open, nacked;
    int users; /* records whose caller is not told yet, + the sending function */
    px_status_t st;
    int warm;   /* every subchannel used had carried a stripe before */
    int resent; /* a part went again: its times say nothing about rates */
    int extra;  /* records added by re-splitting a part after a failure */
    struct {
        int sub;
        size_t bytes;
        uint64_t t_ns;
    } part[PX_NET_MAX_SUB];
};

/* A frame waiting for window space. */
typedef struct px_rail_backlog {
    px_list_t link;
    unsigned flags;
    px_net_send_cb_t cb;
    void *arg;
    size_t hdr_len;
    uint8_t hdr[PX_NET_HDR_MAX];
    int iovcnt;
    void *copy; /* payload copied when the caller gave no callback */
    struct iovec iov[];
} px_rail_backlog_t;

/* An ordered frame that arrived before its turn. */
typedef struct px_rail_held {
    struct px_rail_held *next;
    uint32_t oseq;
    size_t hdr_len, len;
    uint8_t hdr[PX_NET_HDR_MAX];
    char data[];
} px_rail_held_t;

/* PX_RX_SKIP: a piece of a stripe whose whole copy arrived first; its
 * bytes are discarded but its own sequence number counts as received. */
enum { PX_RX_DROP, PX_RX_DELIVER, PX_RX_HOLD, PX_RX_SKIP };

/* An ordered frame handed up (matched) whose payload was cut by a failing
 * subchannel: its copy from the sender goes to the same place. */
typedef struct px_rail_orphan {
    uint32_t seq;
    int used;
    void *dst, *ctx;
} px_rail_orphan_t;

/* Stripes of a failed subchannel are sent again in at most this many
 * pieces at a time per peer, each piece at least PX_RAIL_RESPLIT_MIN. */
#define PX_RAIL_SPLIT_MAX 32
#define PX_RAIL_RESPLIT_MIN (64 * 1024)

typedef struct px_rail_rx_split {
    uint32_t orig;            /* seq of the stripe */
    uint8_t used, total, got; /* pieces it was cut into, and received */
} px_rail_rx_split_t;

/* A bulk transfer under way (rail_bulk.c): the transport's `arg`. */
#define PX_RAIL_BULK_MAX 128 /* per rail, both directions */
typedef struct px_rail_bulk {
    px_rail_vc_t *vc; /* NULL: free */
    int si;
    int send;
    int failed; /* sender: its path failed; the layer above is told at the next progress */
    void *arg;  /* the layer above's */
    size_t len;
    uint64_t done; /* bytes counted in the subchannel's statistics */
} px_rail_bulk_t;

typedef struct px_rail_sub {
    px_rail_vc_t *vc;
    int idx;
    px_net_ep_t *ep;
    px_net_sub_info_t info;
    /* the frame being received on this subchannel */
    int rx_state;
    int rx_ordered, rx_sack;
    int rx_piece;      /* it is a piece of a stripe sent again (PX_RAIL_H_SPLIT) */
    int rx_again;      /* not the first copy (PX_RAIL_H_AGAIN) */
    uint32_t rx_porig; /* ... of this stripe */
    uint32_t rx_seq;
    uint64_t rx_t0; /* when a stripe's header arrived */
    size_t rx_len;
    void *rx_ctx, *rx_dst;
    px_rail_held_t *rx_held;
    /* striping */
    double weight;          /* share of a striped block (fraction) */
    double est_mbs;         /* bss: estimated throughput */
    uint64_t last_ack_ns;   /* when its last stripe was acknowledged */
    uint64_t last_use_ns;   /* when it last carried a stripe */
    double ew_bytes, ew_ns; /* moving averages of stripe bytes and times: their ratio is the rate */
    int probing;            /* its next measurement is a probe's (bss: replaces the estimate) */
    /* split by learnt weights: left out of striped blocks, measured too slow
     * for the floor share (or late), until a probe stripe retry_ns after its
     * last one shows it keeps up; each probe doubles retry_ns, which is back
     * to 0 once it keeps up in a block that is not a probe */
    int resting;
    uint64_t retry_ns;
    int warm;
    double wrr_cur;
    /* health */
    int state;
    int used;            /* has carried traffic (a connection exists or existed) */
    uint32_t unacked;    /* frames on it awaiting acknowledgement */
    uint64_t busy_since; /* last acknowledgement progress while unacked > 0 */
    uint64_t acked_ns;   /* when a frame it carried was last acknowledged */
    uint64_t last_tx_ns;
    double srtt, rttvar; /* acknowledgement times of its frames (ns) */
    double rtt_max;      /* the longest recent one, decaying towards srtt (lossy timeout) */
    /* lossy: frames sent on it, numbered, and the highest number acknowledged:
     * a frame unacknowledged below it is lost (one path keeps order), where
     * frames on other subchannels may just be slower */
    uint32_t tx_order, acked_order;
    uint64_t down_since, next_probe, up_since;
    /* lossy transports: when the peer's kernel last said the path works,
     * and a path check under way */
    uint64_t path_ok_ns;
    /* connections: when a ping last asked on it whether the peer answers
     * at all, and when the peer last answered one */
    uint64_t asked_ns, pong_ns;
    uint64_t hb_ns; /* the oldest heartbeat not yet answered (0: none) */
    int path_checking;
    int down_silent;         /* it went down for silence: a path check brings it back */
    int moved;               /* suspect, its frames moved to the others */
    int held;                /* suspect until it answers (a ping or an acknowledgement of
                              * its own), whatever else happens meanwhile */
    int late;                /* suspect for holding the oldest frame out too long while
                              * its path answers: DOWN only once the path falls silent too */
    uint64_t late_heard;     /* when the peer was first heard elsewhere while that frame
                              * waited (older than its sending: not since) */
    double probe_gap;        /* seconds */
    int probe_soon;          /* a frame came while down: probed once at once */
    px_rail_sub_stats_t *st; /* in the job's stats segment (PX_STATS) or st_own */
    px_rail_sub_stats_t st_own;
} px_rail_sub_t;

struct px_rail_vc {
    px_rail_t *rail;
    void *owner;
    int rank;
    int failed;
    /* send side */
    uint32_t tx_seq, tx_acked, tx_oseq;
    /* unacknowledged frames by seq, at seq & (tx_cap - 1): grown on demand
     * (a peer that is sent little keeps a small ring) */
    px_rail_tx_t **tx;
    uint32_t tx_cap;
    px_list_t backlog;  /* frames waiting for window space, in order */
    px_list_t deferred; /* striped blocks waiting until fewer stripe bytes are in flight */
    size_t stripe_inflight;
    /* class lanes: rendezvous bytes on the bulk lanes not yet acknowledged,
     * the bytes acknowledged there so far and when the last were, and
     * moving averages of the bytes and times of delivery samples (their
     * ratio is the bulk lanes' rate) */
    size_t bulk_out;
    uint64_t bulk_dlv, bulk_dlv_ns;
    double bulk_ew_bytes, bulk_ew_ns;
    int rr, rr_left, primary, bind_sub;
    int resend_pending;  /* records to send again */
    uint32_t on_wire;    /* records a transport still writes (its callback outstanding) */
    uint8_t rel_due;     /* px_rail_release at the end of this progress pass */
    uint8_t rel_wait;    /* the release buffer was short: try again on acknowledgements */
    int hot;             /* on rail->hot: its timers run every tick */
    uint32_t split_open; /* pieces of re-split stripes not yet acknowledged */
    int armed;           /* every subchannel connected (alternates ready before a failure) */
    int single;          /* one subchannel at a time (px_rail_vc_set_single) */
    int nup;             /* subchannels not down */
    int bulk_rr;         /* where the next bulk transfer looks for a subchannel */
    uint64_t part_since; /* every subchannel down since */
    uint64_t last_activity;
    uint64_t last_ack_rx;   /* when an acknowledgement last made progress (or a
                             * subchannel with nothing outstanding answered a ping) */
    uint64_t moved_bytes;   /* bytes its suspect subchannels sent again on the others */
    uint64_t last_rx;       /* when the peer last sent anything */
    uint64_t frame_ack_ns;  /* when the peer last acknowledged a frame */
    uint64_t hole_ask_ns;   /* px_rail_hole_check asked the peer whether it runs */
    uint64_t hole_heard_ns; /* ... and it answered */
    uint64_t out_since;     /* when a frame went with none before it unacknowledged */
    /* lossy transports: congestion window over unacknowledged bytes */
    size_t inflight, cwnd;
    /* ... frames sent and sent again since the last look at the loss rate;
     * rendezvous data goes in one-datagram frames while it is high */
    uint32_t fr_sent, fr_retx;
    int small_frames;
    uint64_t last_cut;  /* when the window was last halved */
    uint32_t sack_span; /* frames after the cumulative point the peer's last bitmap covered */
    /* lossy: the last frames sent again on a timeout, until the peer says
     * whether it had them already (then the timeout was spurious) */
    struct {
        uint32_t seq;
        int used;
        int sub;          /* where its first copy went */
        uint64_t t_first; /* and when */
        uint64_t rto;     /* the timeout that fired */
        size_t cwnd;      /* before the timeout cut it */
    } rto_log[8];
    unsigned rto_next;
    /* quiescence (px_rail_done_begin): how many times this process began
     * one with the peer, and the most recent the peer said DONE for */
    uint32_t done_epoch, peer_epoch;
    int gap_ack; /* a frame arrived above a gap: acknowledge in this pass */
    /* receive side */
    uint32_t rx_next;                   /* every frame below has arrived */
    uint32_t rx_top;                    /* ... and none from here on */
    uint64_t rx_bits[PX_RAIL_WIN / 64]; /* arrivals at or above rx_next, by seq % WIN */
    /* stripes arriving in pieces (PX_RAIL_H_SPLIT): a whole copy is dropped
     * meanwhile, the stripe's own seq counts as received with the last piece */
    int nsplit;
    px_rail_rx_split_t rx_split[PX_RAIL_SPLIT_MAX];
    uint32_t rx_onext; /* next ordered frame to hand up */
    uint32_t rx_unacked;
    uint64_t last_ack_tx;
    int ack_due; /* on r->due: acknowledge at the end of this progress pass */
    int nsack_due;
    uint32_t sack_due[8]; /* frames whose sender waits, maybe above the cumulative point */
    px_rail_held_t *held; /* sorted by oseq */
    int norphan;
    px_rail_orphan_t orphan[PX_NET_MAX_SUB];
    /* QoS lanes: sub[lane * npair + pair]. Policies stripe and weigh the
     * npair address pairs (a rail's lanes share its bandwidth), whose
     * striping state lives in lane 0; px_rail_lane_sub then picks the lane */
    int npair, nlane;
    unsigned lane_rr; /* the next lane of a class with several, or of distribute */
    int nsub;
    px_rail_sub_t sub[]; /* nsub of them */
};

struct px_rail {
    const px_rail_rx_ops_t *up;
    int link_fd; /* rtnetlink: local link and address changes (rail_link.c); -1 none */
    const px_net_ops_t *ops;
    px_net_iface_t *iface;
    px_net_attr_t attr;
    px_rail_vc_t **vcs;
    px_rail_vc_t **vlist; /* the channels that exist, densely */
    int nvc;
    /* channels with traffic since they were last seen idle: their timers
     * (acknowledgements, retransmissions) run every PX_RAIL_TICK_NS, the
     * others' (heartbeats, probes) every PX_RAIL_SWEEP_NS */
    px_rail_vc_t **hot;
    int nhot;
    int resend_any; /* some channel has resend_pending */
    uint64_t next_sweep;
    px_rail_vc_t **due; /* channels with acknowledgements to send this pass */
    int ndue;
    int nranks, local_rank, me;
    const px_rail_policy_ops_t *policy;
    int ft;
    int lossy;        /* the transport loses frames: retransmission timers, windows */
    size_t frame_max; /* lossy: largest payload per frame */
    uint64_t rto_min;
    uint64_t retx_timeout, retx_fast, retx_spurious, rx_out_of_window, rx_dup;
    uint64_t window_waits;             /* frames sent to the backlog by a full window */
    uint64_t resplits, resplit_pieces; /* failed stripes sent again in pieces */
    uint64_t small_frame_periods;      /* lossy: times a channel went to one-datagram frames */
    uint64_t rx_split_skipped;         /* pieces whose original had arrived whole */
    size_t copy_max;                   /* payloads copied into their send record */
    /* PX_RAIL_RELEASE (connections): senders are told once the transport has
     * written their frames; with fault tolerance the frames go to rel_buf
     * first, a bump allocator emptied when the last of them is acknowledged */
    int release, rel_any;
    char *rel_buf;
    size_t rel_cap, rel_used;
    uint32_t rel_live;
    px_rail_tx_t *stage_x; /* a frame being written, copied meanwhile (px_rail_stage) */
    /* a rendezvous payload copied while its sender waits for the
     * clear-to-send (px_rail_prestage): its frames find their copy begun */
    struct {
        px_rail_vc_t *vc;
        const char *src;
        char *area;
        size_t len, staged;
    } pre;
    uint64_t released, released_bytes, prestaged_bytes;
    double rail_weight[PX_NET_MAX_SUB];
    int nrail_weight;
    int bind_list[64], nbind; /* explicit binding by local rank; -1 bunch, -2 scatter */
    px_rail_tx_t *txfree;
    uint64_t now, next_tick;
    uint64_t partitions, partition_ns;
    px_rail_stats_seg_t *seg; /* PX_STATS: counters other processes can read */
    px_rail_bulk_t *bulk;     /* PX_RAIL_BULK_MAX records (transports with PX_NET_CAP_BULK) */
    int nbulk;
    int bulk_due; /* a bulk send stopped: tell the layer above (px_rail_bulk_fail_due) */
    uint64_t bulk_moved, bulk_rest_bytes; /* bulk sends moved to frames, and the bytes left */
    size_t seg_len;
    char seg_name[64];
};

/* ---------- small helpers of every file ---------- */

/* Time from t to now; 0 when t was taken after now (now is read once per
 * progress call, some stamps are fresher). */
static inline uint64_t px_since(uint64_t now, uint64_t t) { return now > t ? now - t : 0; }

static inline int px_rail_usable(const px_rail_sub_t *s) { return s->state == PX_SUB_UP; }

/* The subchannel that holds the striping state of s's address pair. */
static inline px_rail_sub_t *px_rail_rep(px_rail_vc_t *vc, int si)
{
    return &vc->sub[si % vc->npair];
}

/* The lane class of a data frame (policy class). */
static inline int px_rail_lane_class(unsigned flags, size_t len)
{
    if (flags & PX_RAIL_F_CLASS)
        return (int)((flags >> PX_RAIL_F_CLASS_SHIFT) & 3);
    if (flags & PX_RAIL_F_COLL)
        return PX_LANE_COLL;
    /* rendezvous and one-sided data, whatever the size of its frames */
    if ((flags & PX_RAIL_F_STRIPE) || len >= px_params.lane_bulk_frame)
        return PX_LANE_BULK;
    if (len <= px_params.lane_small)
        return PX_LANE_SMALL;
    return PX_LANE_MEDIUM;
}

/* Class lanes: whether a frame is rendezvous or one-sided data for the bulk
 * lanes, whose bytes not yet acknowledged are bounded (px_rail_bulk_max).
 * Such frames are unordered and their caller waits for their completion,
 * so they may wait in vc->deferred; they need records to be counted. */
static inline int px_rail_bulk_bound(const px_rail_vc_t *vc, unsigned flags, size_t len,
                                     px_net_send_cb_t cb)
{
    return __builtin_expect(vc->nlane > 1, 0) && !px_lane_plan.distribute && cb &&
           (flags & PX_RAIL_F_STRIPE) && vc->rail->ft &&
           px_rail_lane_class(flags, len) == PX_LANE_BULK;
}

/* vc has traffic: its timers run every tick until it is idle again. */
static inline void px_rail_heat(px_rail_vc_t *vc)
{
    if (__builtin_expect(!vc->hot, 0)) {
        px_rail_t *r = vc->rail;
        vc->hot = 1;
        r->hot[r->nhot++] = vc;
    }
}

/* vc may have frames whose senders can be told (px_rail_release). */
static inline void px_rail_release_mark(px_rail_vc_t *vc)
{
    vc->rel_due = 1;
    vc->rail->rel_any = 1;
    px_rail_heat(vc);
}

/* vc has records to send again (px_rail_resend at the next progress). */
static inline void px_rail_resend_mark(px_rail_vc_t *vc)
{
    vc->resend_pending = 1;
    vc->rail->resend_any = 1;
    px_rail_heat(vc);
}

static inline void px_rail_hdr_fill(px_rail_vc_t *vc, px_rail_hdr_t *h, uint8_t type, uint8_t flags,
                                    int sub)
{
    h->ack = vc->rx_next;
    h->type = type;
    h->flags = flags;
    h->sub = (uint16_t)sub;
    vc->rx_unacked = 0;
    vc->last_ack_tx = vc->rail->now;
}

static inline int px_rail_window_full(px_rail_vc_t *vc, int need)
{
    return vc->tx_seq - vc->tx_acked + (uint32_t)need > PX_RAIL_WIN;
}

/* Lossy transports: the congestion window is full (one frame always goes). */
static inline int px_rail_cwnd_full(px_rail_vc_t *vc, size_t len)
{
    return vc->rail->lossy && vc->inflight && vc->inflight + len > vc->cwnd;
}

/* Whether frame seq has arrived. */
static inline int px_rail_rx_has(px_rail_vc_t *vc, uint32_t seq)
{
    uint32_t d = seq - vc->rx_next;
    if ((int32_t)d < 0)
        return 1;
    if (d >= PX_RAIL_WIN)
        return 0;
    return (vc->rx_bits[(seq % PX_RAIL_WIN) / 64] >> (seq % 64)) & 1;
}

void px_rail_free_cb(void *arg, px_status_t st);

/* x's payload is its caller's buffer, and the caller waits for it. With
 * fault tolerance only frames sent with PX_RAIL_F_RELEASE are released (a
 * collective's round that waits for nothing else): a copy made while the
 * bytes are in flight competes with their delivery for the CPU, which costs
 * more than the early completion gains unless the caller waits for nothing
 * else (docs/fault-tolerance.md). Without fault tolerance nothing is copied, and
 * every written frame is released. */
static inline int px_rail_caller_held(const px_rail_tx_t *x)
{
    if (x->told || !x->len || (x->vc->rail->ft && !x->rel_ok))
        return 0;
    if (x->msg)
        return x->msg->cb != px_rail_free_cb;
    return x->cb && x->cb != px_rail_free_cb;
}

/* ---------- between the files ---------- */

/* rail.c */
extern const char *const px_rail_state_names[];

/* rail_send.c */
void px_rail_send_ctl(px_rail_vc_t *vc, int si, uint8_t type, uint8_t flags, uint32_t seq,
                      uint64_t val);
/* ... with `len` more bytes after the header (at most PX_NET_HDR_MAX in all) */
void px_rail_send_ctlx(px_rail_vc_t *vc, int si, uint8_t type, uint8_t flags, uint32_t seq,
                       uint64_t val, const void *more, size_t len);
px_rail_tx_t *px_rail_tx_get(px_rail_vc_t *vc);
void px_rail_tx_put(px_rail_t *r, px_rail_tx_t *x);
void px_rail_tx_finish(px_rail_tx_t *x);
void px_rail_xmit(px_rail_vc_t *vc, px_rail_tx_t *x, int si);
void px_rail_vc_cancel(px_rail_vc_t *vc, px_status_t why);
void px_rail_backlog_flush(px_rail_vc_t *vc);
void px_rail_deferred_flush(px_rail_vc_t *vc);

/* rail_recv.c */
void *px_rail_rx_begin(void *owner, const void *hdr, size_t hdr_len, size_t payload_len,
                       void **ctx_p);
void px_rail_rx_done(void *owner, void *ctx);
/* Ordered frame seq, handed up, lost its payload with a failing
 * subchannel: the copy the sender sends again goes to dst / ctx. */
void px_rail_orphan_keep(px_rail_vc_t *vc, uint32_t seq, void *dst, void *ctx);

/* rail_reliable.c */
int px_rail_rx_bitmap(px_rail_vc_t *vc, uint64_t w[PX_RAIL_SACK_WORDS]);
void px_rail_send_ack(px_rail_vc_t *vc, int sack, uint32_t seq, uint64_t dur_ns, int pref);
/* Lossy transports: frame seq arrived twice (a bitmap acknowledgement that
 * says so). */
void px_rail_send_dup_ack(px_rail_vc_t *vc, uint32_t seq, int pref);
void px_rail_dup_in(px_rail_vc_t *vc, uint32_t seq);
void px_rail_acks_due(px_rail_t *r);
void px_rail_ack_in(px_rail_vc_t *vc, uint32_t ack);
void px_rail_bitmap_in(px_rail_vc_t *vc, uint32_t ack, const uint64_t *w, int nw);
void px_rail_tx_acked(px_rail_vc_t *vc, px_rail_tx_t *x, uint64_t now, uint64_t rx_ns);
void px_rail_loss_look(px_rail_vc_t *vc);
void px_rail_retransmit_due(px_rail_vc_t *vc, uint64_t now);
/* Lossy transports: the retransmission timeout of subchannel s (measured
 * round trip and four deviations, at least 1.25 times the longest recent
 * one, at least PX_RAIL_RTO_MIN). */
uint64_t px_rail_rto(px_rail_t *r, const px_rail_sub_t *s);

/* rail_health.c */
int px_rail_best(px_rail_vc_t *vc, int worst_state);
void px_rail_set_state(px_rail_sub_t *s, int state);
void px_rail_connect_unused(px_rail_vc_t *vc, int skip);
void px_rail_sub_down(px_rail_sub_t *s, px_status_t why);
void px_rail_sub_up(px_rail_sub_t *s);
void px_rail_sub_alive(px_rail_sub_t *s);
void px_rail_link_open(px_rail_t *r);
void px_rail_link_close(px_rail_t *r);
void px_rail_link_poll(px_rail_t *r);
void px_rail_ep_failed(void *owner, px_status_t why);
int px_rail_vc_idle(const px_rail_vc_t *vc);
void px_rail_vc_tick(px_rail_vc_t *vc, uint64_t now);
void px_rail_sub_rtt(px_rail_sub_t *s, double rtt);

/* rail_failover.c */
void px_rail_resend(px_rail_vc_t *vc);

/* rail_release.c */
void px_rail_stage_start(px_rail_t *r, px_rail_tx_t *x);
void px_rail_stage_copy(px_rail_tx_t *x, size_t len);
int px_rail_area(px_rail_t *r, px_rail_tx_t *x);
void px_rail_pre_attach(px_rail_t *r, px_rail_tx_t *x);
/* One step of the copies under way (px_rail_progress_ready). */
void px_rail_release_step(px_rail_t *r);

/* rail_bulk.c */
void px_rail_bulk_progress_in(void *owner, void *arg, uint64_t got);
void px_rail_bulk_done_in(void *owner, void *arg, px_status_t st);
void px_rail_bulk_sub_down(px_rail_sub_t *s);
void px_rail_bulk_vc_fail(px_rail_vc_t *vc);
void px_rail_bulk_fail_due(px_rail_t *r);

/* rail_stats.c */
void px_rail_stats_open(px_rail_t *r, const px_boot_info_t *boot);
void px_rail_stats_close(px_rail_t *r);

/* policy/policy.c */
int px_rail_pick(px_rail_vc_t *vc, unsigned flags, size_t len);
/* The working lane of pair p for class c (policy class; distribute: the
 * next lane), another working lane of the pair when those of c are not, or
 * -1 when none works. */
int px_rail_lane_sub(px_rail_vc_t *vc, int p, int c);
/* Class lanes: the size of a rendezvous frame for the bulk lanes. */
size_t px_rail_bulk_frame(const px_rail_vc_t *vc);
/* ... and the rate they deliver at (bytes per ns; 0: not measured yet) */
static inline double px_rail_bulk_rate(const px_rail_vc_t *vc)
{
    return vc->bulk_ew_ns > 0 ? vc->bulk_ew_bytes / vc->bulk_ew_ns : 0;
}
int px_rail_stripes(px_rail_vc_t *vc, unsigned flags);
int px_rail_split(px_rail_vc_t *vc, double *share);
/* s is left out of weight-split striped blocks (on) or back in (off). */
void px_rail_rest(px_rail_sub_t *s, int on);
#define PX_RAIL_RETRY_MAX 16 /* the longest wait between probes, in PX_RAIL_RETRY */
void px_rail_learn(px_rail_vc_t *vc, px_rail_msg_t *m);
void px_rail_set_primary(px_rail_vc_t *vc);

#endif
