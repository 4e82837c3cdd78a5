#include "rail.h"
#include "../util/clock.h"
#include "../util/iov.h"
#include "../util/list.h"
#include "../util/log.h"
#include "../util/param.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

/* frame types; SUBDOWN tells the peer (over a working subchannel) that
 * subchannel `seq` timed out here, so its side stops waiting for its own
 * timeout */
enum { PX_RAIL_DATA = 1, PX_RAIL_ACK = 2, PX_RAIL_PING = 3, PX_RAIL_PONG = 4, PX_RAIL_SUBDOWN = 5,
       PX_RAIL_DONE = 6 /* at finalize: every frame of the sender is acknowledged */ };

/* header flags on the wire */
enum {
    PX_RAIL_H_UNORD = 1, /* deliver at once, outside the ordered sequence */
    PX_RAIL_H_SACK = 2,  /* DATA: acknowledge as soon as it is in; ACK: seq is such a frame */
    PX_RAIL_H_TIMED = 4, /* DATA: a stripe; its acknowledgement carries the arrival time and
                          * goes at once (otherwise one goes per progress pass) */
    PX_RAIL_H_BITMAP = 8, /* ACK (lossy transports): off is a bitmap of the frames ack+1 ..
                           * ack+64 that have arrived (selective acknowledgement) */
    PX_RAIL_H_SPLIT = 16, /* DATA: a piece of the stripe whose seq is in oseq, sent again in
                           * pieces after its subchannel failed; the top byte of `sub` says
                           * how many pieces there are */
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
#define PX_RAIL_SACK_SPAN 64 /* frames after the cumulative point an acknowledgement covers */
#define PX_RAIL_LOSS_LOW 0.01

typedef struct __attribute__((packed)) px_rail_hdr {
    uint32_t seq;  /* of this frame (DATA); of the acknowledged stripe (ACK with SACK) */
    uint32_t ack;  /* every frame below ack has arrived */
    uint32_t oseq; /* ordered sequence number (DATA without UNORD) */
    uint8_t type;
    uint8_t flags;
    uint16_t sub;  /* subchannel it was sent on (informational) */
    uint64_t off;  /* offset of this stripe in its frame's payload */
} px_rail_hdr_t;

typedef enum { PX_POL_BIND, PX_POL_RR, PX_POL_WRR, PX_POL_WINDOW, PX_POL_EVEN, PX_POL_WEIGHTED,
               PX_POL_ADAPTIVE, PX_POL_BSS, PX_POL_EPC } px_rail_policy_t;

static const char *const px_rail_policy_names[] = {"bind", "rr", "wrr", "window", "even",
                                                   "weighted", "adaptive", "bss", "epc"};

/* Subchannel states. SUSPECT: acknowledgements are overdue, new traffic
 * avoids it but what it carries stays; DOWN: the transport gave up on it,
 * its frames moved to the others and it is probed until it answers. */
enum { PX_SUB_UP, PX_SUB_SUSPECT, PX_SUB_DOWN };
static const char *const px_rail_state_names[] = {"up", "suspect", "down"};

#define PX_RAIL_INLINE 256   /* payload bytes kept inside a send record */
/* Payloads up to 8 KB, and those of blocking sends and collectives up to
 * the transport's eager limit (at most PX_RAIL_COPY_MAX), are copied into
 * their record so the sender completes at once as without fault tolerance
 * (a blocking send, or a collective step waiting for its sends, would
 * otherwise wait a round trip). The rest (nonblocking eager sends,
 * rendezvous data) stay in the caller's buffer until acknowledged: a stream
 * of them pays one acknowledgement per progress pass instead of a copy.
 * (8 KB rather than 4: osu_bibw between 2 nodes, 8 KB, 2,411 MB/s against
 * 1,710 with the wait for acknowledgements, the link's pace; from 16 KB
 * the link is the limit either way.) */
#define PX_RAIL_COPY_SMALL 8192
#define PX_RAIL_COPY_MAX (256 * 1024)
#define PX_RAIL_IOV 8
#define PX_RAIL_TICK_NS 1000000ull   /* timers run at most this often */
#define PX_RAIL_SWEEP_NS 8000000ull  /* ... and those of idle channels this often */
#define PX_RAIL_ACK_DELAY_NS 1000000ull /* an arrival is acknowledged within this */

typedef struct px_rail_msg px_rail_msg_t;

/* A frame sent and not yet acknowledged. With fault tolerance every data
 * frame has one (payload copied when small, the caller's buffer otherwise,
 * whose completion then waits for the acknowledgement); without it only
 * stripes do. */
typedef struct px_rail_tx {
    struct px_rail_tx *next; /* free list */
    px_rail_vc_t *vc;
    px_rail_msg_t *msg;      /* the striped block it is part of */
    int part;                /* its index in msg->part */
    px_net_send_cb_t cb;     /* the caller's completion, once acknowledged */
    void *arg;
    uint32_t seq, oseq;
    uint64_t off, t_sent;
    size_t len;
    int sub;                 /* where it was last sent */
    uint8_t hflags;
    uint8_t wire;            /* the transport still holds the payload */
    uint8_t acked, resend;
    uint8_t tries;           /* lossy transports: retransmissions after a timeout */
    uint8_t again;           /* sent more than once: its acknowledgement times nothing */
    uint8_t npieces;
    uint8_t rel_ok;          /* sent with PX_RAIL_F_RELEASE: it may be released */
    uint8_t told;            /* the caller was told it is done before the acknowledgement */
    uint8_t inbuf;           /* it holds a reference on the rail's release buffer */
    char *area;              /* its place in that buffer (the payload once told) */
    size_t staged;           /* bytes already copied there */
    uint32_t order;          /* lossy: its place among the frames its subchannel sent */         /* PX_RAIL_H_SPLIT: pieces of the stripe it is one of */
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
    int users;  /* records whose caller is not told yet, + the sending function */
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
    uint32_t orig;       /* seq of the stripe */
    uint8_t used, total, got; /* pieces it was cut into, and received */
} px_rail_rx_split_t;

typedef struct px_rail_sub {
    px_rail_vc_t *vc;
    int idx;
    px_net_ep_t *ep;
    px_net_sub_info_t info;
    /* the frame being received on this subchannel */
    int rx_state;
    int rx_ordered, rx_sack;
    int rx_piece;      /* it is a piece of a stripe sent again (PX_RAIL_H_SPLIT) */
    uint32_t rx_porig; /* ... of this stripe */
    uint32_t rx_seq;
    uint64_t rx_t0; /* when a stripe's header arrived */
    size_t rx_len;
    void *rx_ctx, *rx_dst;
    px_rail_held_t *rx_held;
    /* striping */
    double weight;        /* share of a striped block (fraction) */
    double est_mbs;       /* bss: estimated throughput */
    uint64_t last_ack_ns; /* when its last stripe was acknowledged */
    uint64_t last_use_ns; /* bss: when it last carried a stripe */
    double ew_bytes, ew_ns; /* moving averages of stripe bytes and times: their ratio is the rate */
    int probing;            /* bss: its next measurement replaces the estimate */
    int warm;
    double wrr_cur;
    /* health */
    int state;
    int used;             /* has carried traffic (a connection exists or existed) */
    uint32_t unacked;     /* frames on it awaiting acknowledgement */
    uint64_t busy_since;  /* last acknowledgement progress while unacked > 0 */
    uint64_t last_tx_ns;
    double srtt, rttvar;  /* acknowledgement times of its frames (ns) */
    double rtt_max;       /* the longest recent one, decaying towards srtt (lossy timeout) */
    /* lossy: frames sent on it, numbered, and the highest number acknowledged:
     * a frame unacknowledged below it is lost (one path keeps order), where
     * frames on other subchannels may just be slower */
    uint32_t tx_order, acked_order;
    uint64_t down_since, next_probe, up_since;
    /* lossy transports: when the peer's kernel last said the path works,
     * and a path check under way */
    uint64_t path_ok_ns;
    int path_checking;
    int down_silent; /* it went down for silence: a path check brings it back */
    double probe_gap;     /* seconds */
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
    int rr, rr_left, primary, bind_sub;
    int resend_pending; /* records to send again */
    uint32_t on_wire;   /* records a transport still writes (its callback outstanding) */
    uint8_t rel_due;    /* px_rail_release at the end of this progress pass */
    uint8_t rel_wait;   /* the release buffer was short: try again on acknowledgements */
    int hot;            /* on rail->hot: its timers run every tick */
    uint32_t split_open; /* pieces of re-split stripes not yet acknowledged */
    int armed;          /* every subchannel connected (alternates ready before a failure) */
    int single;         /* one subchannel at a time (px_rail_vc_set_single) */
    int nup;            /* subchannels not down */
    uint64_t part_since; /* every subchannel down since */
    uint64_t last_activity;
    uint64_t last_ack_rx; /* when an acknowledgement last made progress */
    uint64_t last_rx;     /* when the peer last sent anything */
    /* lossy transports: congestion window over unacknowledged bytes */
    size_t inflight, cwnd;
    /* ... frames sent and sent again since the last look at the loss rate;
     * rendezvous data goes in one-datagram frames while it is high */
    uint32_t fr_sent, fr_retx;
    int small_frames;
    uint64_t last_cut;    /* when the window was last halved */
    int peer_done;        /* the peer sent DONE at finalize */
    int gap_ack;          /* a frame arrived above a gap: acknowledge in this pass */
    /* receive side */
    uint32_t rx_next;  /* every frame below has arrived */
    uint64_t rx_bits[PX_RAIL_WIN / 64]; /* arrivals at or above rx_next, by seq % WIN */
    /* stripes arriving in pieces (PX_RAIL_H_SPLIT): a whole copy is dropped
     * meanwhile, the stripe's own seq counts as received with the last piece */
    int nsplit;
    px_rail_rx_split_t rx_split[PX_RAIL_SPLIT_MAX];
    uint32_t rx_onext; /* next ordered frame to hand up */
    uint32_t rx_unacked;
    uint64_t last_ack_tx;
    int ack_due;          /* on r->due: acknowledge at the end of this progress pass */
    int nsack_due;
    uint32_t sack_due[8]; /* frames whose sender waits, maybe above the cumulative point */
    px_rail_held_t *held; /* sorted by oseq */
    int norphan;
    px_rail_orphan_t orphan[PX_NET_MAX_SUB];
    int nsub;
    px_rail_sub_t sub[]; /* nsub of them */
};

struct px_rail {
    const px_rail_rx_ops_t *up;
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
    px_rail_vc_t **due;   /* channels with acknowledgements to send this pass */
    int ndue;
    int nranks, local_rank, me;
    px_rail_policy_t policy;
    int ft;
    int lossy;       /* the transport loses frames: retransmission timers, windows */
    size_t frame_max; /* lossy: largest payload per frame */
    uint64_t rto_min;
    uint64_t retx_timeout, retx_fast, rx_out_of_window, rx_dup;
    uint64_t resplits, resplit_pieces; /* failed stripes sent again in pieces */
    uint64_t small_frame_periods;      /* lossy: times a channel went to one-datagram frames */
    uint64_t rx_split_skipped;         /* pieces whose original had arrived whole */
    size_t copy_max; /* payloads copied into their send record */
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
    px_rail_stats_seg_t *seg;  /* PX_STATS: counters other processes can read */
    size_t seg_len;
    char seg_name[64];
};

static px_rail_policy_t px_rail_pol = PX_POL_ADAPTIVE;

/* ---------- counters a running job exposes (PX_STATS=1, read by pxinfo --stats) ---------- */

static void px_rail_stats_open(px_rail_t *r, const px_boot_info_t *boot)
{
    snprintf(r->seg_name, sizeof(r->seg_name), "/plexus-%016llx-stats-%d",
             (unsigned long long)boot->job_id, boot->rank);
    r->seg_len = sizeof(px_rail_stats_seg_t) +
                 (size_t)boot->size * PX_NET_MAX_SUB * sizeof(px_rail_stats_entry_t);
    int fd = shm_open(r->seg_name, O_CREAT | O_RDWR | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)r->seg_len) < 0) {
        px_warn("rail", "PX_STATS: cannot create %s; counters only at finalize", r->seg_name);
        if (fd >= 0) {
            close(fd);
            shm_unlink(r->seg_name);
        }
        return;
    }
    void *p = mmap(NULL, r->seg_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        shm_unlink(r->seg_name);
        return;
    }
    r->seg = p;
    r->seg->magic = PX_RAIL_STATS_MAGIC;
    r->seg->rank = boot->rank;
    r->seg->nranks = boot->size;
    r->seg->max_sub = PX_NET_MAX_SUB;
    snprintf(r->seg->policy, sizeof(r->seg->policy), "%s", px_rail_policy_names[r->policy]);
}

static void px_rail_stats_close(px_rail_t *r)
{
    if (!r->seg)
        return;
    munmap(r->seg, r->seg_len);
    shm_unlink(r->seg_name);
    r->seg = NULL;
}

static void *px_rail_rx_begin(void *owner, const void *hdr, size_t hdr_len, size_t payload_len,
                              void **ctx_p);
static void px_rail_rx_done(void *owner, void *ctx);
static void px_rail_ep_failed(void *owner, px_status_t why);

/* The rails of this process (one per network transport in use), for
 * callbacks that know only the interface. */
static px_rail_t *px_rail_all[4];

static int px_rail_ep_incoming(px_net_iface_t *iface, int rank)
{
    for (int i = 0; i < 4; i++) {
        px_rail_t *r = px_rail_all[i];
        if (r && r->iface == iface)
            return r->up->vc_incoming && rank >= 0 && rank < r->nranks && !r->vcs[rank]
                       ? r->up->vc_incoming(r, rank)
                       : -1;
    }
    return -1;
}

static const px_net_rx_ops_t px_rail_rx_ops = {
    .rx_begin = px_rail_rx_begin,
    .rx_done = px_rail_rx_done,
    .ep_failed = px_rail_ep_failed,
    .ep_incoming = px_rail_ep_incoming,
};

/* ---------- parameters ---------- */

static px_status_t px_rail_parse_params(px_rail_t *r)
{
    const char *pol = px_params.rail_policy ? px_params.rail_policy : "adaptive";
    int found = 0;
    for (size_t i = 0; i < sizeof(px_rail_policy_names) / sizeof(px_rail_policy_names[0]); i++)
        if (!strcmp(pol, px_rail_policy_names[i])) {
            r->policy = (px_rail_policy_t)i;
            found = 1;
        }
    if (!found) {
        px_error("rail", "PX_RAIL_POLICY=%s: unknown policy (use bind, rr, wrr, window, even, "
                 "weighted, adaptive, bss or epc)", pol);
        return PX_ERR_INVALID_PARAM;
    }
    px_rail_pol = r->policy;
    if (px_params.rail_alpha < 0 || px_params.rail_alpha > 1 || px_params.rail_min_share < 0 ||
        px_params.rail_min_share >= 0.5 || px_params.rail_window < 1 ||
        px_params.rail_bss_batch < 1) {
        px_error("rail", "PX_RAIL_ALPHA must be in [0,1], PX_RAIL_MIN_SHARE in [0,0.5), "
                 "PX_RAIL_WINDOW and PX_RAIL_BSS_BATCH at least 1");
        return PX_ERR_INVALID_PARAM;
    }
    const char *w = px_params.rail_weights;
    while (w && *w && r->nrail_weight < PX_NET_MAX_SUB) {
        char *end;
        double v = strtod(w, &end);
        if (end == w || v <= 0 || (*end && *end != ',')) {
            px_error("rail", "PX_RAIL_WEIGHTS=%s: expected positive numbers separated by commas",
                     px_params.rail_weights);
            return PX_ERR_INVALID_PARAM;
        }
        r->rail_weight[r->nrail_weight++] = v;
        w = *end ? end + 1 : end;
    }
    const char *b = px_params.rail_bind ? px_params.rail_bind : "scatter";
    if (!strcmp(b, "bunch")) {
        r->bind_list[0] = -1;
    } else if (!strcmp(b, "scatter")) {
        r->bind_list[0] = -2;
    } else {
        while (*b && r->nbind < 64) {
            char *end;
            long v = strtol(b, &end, 10);
            if (end == b || v < 0 || (*end && *end != ',')) {
                px_error("rail", "PX_RAIL_BIND=%s: use bunch, scatter or rail indices like 1,0",
                         px_params.rail_bind);
                return PX_ERR_INVALID_PARAM;
            }
            r->bind_list[r->nbind++] = (int)v;
            b = *end ? end + 1 : end;
        }
    }
    return PX_OK;
}

const char *px_rail_policy_name(void) { return px_rail_policy_names[px_rail_pol]; }

/* ---------- setup ---------- */

px_status_t px_rail_init(const px_boot_info_t *boot, const char *net, const px_rail_rx_ops_t *up,
                         px_rail_t **rail_p)
{
    px_rail_t *r = calloc(1, sizeof(*r));
    px_status_t st;
    if (!r)
        return PX_ERR_NO_MEMORY;
    r->up = up;
    r->now = px_time_ns();
    r->nranks = boot->size;
    r->local_rank = boot->local_rank;
    r->me = boot->rank;
    st = px_rail_parse_params(r);
    if (st != PX_OK) {
        free(r);
        return st;
    }
    r->ops = px_net_find(net);
    if (!r->ops) {
        px_error("rail", "unknown network transport '%s'", net);
        free(r);
        return PX_ERR_INVALID_PARAM;
    }
    r->ft = px_params.rail_ft && r->ops->ep_reset && r->ops->ep_rx_cancel;
    if (px_params.rail_detect <= 0 || px_params.partition_timeout < 0 || px_params.rail_probe_max <= 0) {
        px_error("rail", "PX_RAIL_DETECT and PX_RAIL_PROBE_MAX must be positive, "
                 "PX_PARTITION_TIMEOUT at least 0");
        free(r);
        return PX_ERR_INVALID_PARAM;
    }
    r->vcs = calloc((size_t)boot->size, sizeof(*r->vcs));
    r->vlist = calloc((size_t)boot->size, sizeof(*r->vlist));
    r->due = calloc((size_t)boot->size, sizeof(*r->due));
    r->hot = calloc((size_t)boot->size, sizeof(*r->hot));
    if (!r->vcs || !r->vlist || !r->due || !r->hot) {
        free(r->vcs);
        free(r->vlist);
        free(r->due);
        free(r->hot);
        free(r);
        return PX_ERR_NO_MEMORY;
    }
    st = r->ops->iface_open(boot, &px_rail_rx_ops, &r->iface);
    if (st != PX_OK) {
        free(r->vcs);
        free(r->vlist);
        free(r->due);
        free(r->hot);
        free(r);
        return st;
    }
    r->ops->iface_query(r->iface, &r->attr);
    if (r->attr.caps & PX_NET_CAP_LOSSY) {
        /* reliability is ours: every frame keeps its record until acknowledged */
        r->lossy = 1;
        r->ft = 1;
        r->frame_max = r->attr.max_frag;
        r->rto_min = (uint64_t)(px_params.rail_rto_min * 1e9);
        if (r->rto_min < 100000)
            r->rto_min = 100000;
    }
    r->copy_max = r->attr.eager_limit > PX_RAIL_COPY_SMALL ? r->attr.eager_limit : PX_RAIL_COPY_SMALL;
    /* a lossy transport holds nothing once it returns: there, waiting for
     * the acknowledgement is the only way to know the frame arrived */
    r->rel_cap = px_params.rail_release;
    r->release = r->rel_cap > 0 && !r->lossy;
    if (r->copy_max > PX_RAIL_COPY_MAX)
        r->copy_max = PX_RAIL_COPY_MAX;
    for (int i = 0; i < 4; i++)
        if (!px_rail_all[i]) {
            px_rail_all[i] = r;
            break;
        }
    static int stats_taken; /* one segment per rank: the first rail's */
    if (px_params.stats && !stats_taken++)
        px_rail_stats_open(r, boot);
    *rail_p = r;
    return PX_OK;
}

static void px_rail_vc_free(px_rail_vc_t *vc)
{
    px_list_t *e, *t;
    px_list_for_each_safe(e, t, &vc->backlog)
    {
        px_rail_backlog_t *b = px_container_of(e, px_rail_backlog_t, link);
        free(b->copy);
        free(b);
    }
    px_list_for_each_safe(e, t, &vc->deferred) free(px_container_of(e, px_rail_backlog_t, link));
    for (uint32_t i = 0; i < vc->tx_cap; i++) {
        px_rail_tx_t *x = vc->tx[i];
        if (!x)
            continue;
        if (x->msg && --x->msg->open == 0)
            free(x->msg);
        free(x->heap);
        free(x);
    }
    while (vc->held) {
        px_rail_held_t *h = vc->held;
        vc->held = h->next;
        free(h);
    }
    for (int i = 0; i < vc->nsub; i++)
        free(vc->sub[i].rx_held);
    free(vc->tx);
    free(vc);
}

void px_rail_finalize(px_rail_t *r)
{
    if (!r)
        return;
    for (int i = 0; i < 4; i++)
        if (px_rail_all[i] == r)
            px_rail_all[i] = NULL;
    r->ops->iface_close(r->iface);
    px_rail_stats_close(r);
    for (int i = 0; i < r->nranks; i++)
        if (r->vcs[i])
            px_rail_vc_free(r->vcs[i]);
    while (r->txfree) {
        px_rail_tx_t *x = r->txfree;
        r->txfree = x->next;
        free(x->heap);
        free(x);
    }
    free(r->vcs);
    free(r->vlist);
    free(r->hot);
    free(r->due);
    free(r->rel_buf);
    free(r);
}

int px_rail_reachable(px_rail_t *r, int rank) { return r->ops->iface_reachable(r->iface, rank); }

static double px_rail_static_weight(px_rail_t *r, const px_net_sub_info_t *in)
{
    if (r->nrail_weight)
        return in->rail < r->nrail_weight ? r->rail_weight[in->rail] : r->rail_weight[0];
    return in->speed_mbs > 0 ? in->speed_mbs : 1.0;
}

static void px_rail_set_primary(px_rail_vc_t *vc)
{
    int best = 0;
    for (int i = 1; i < vc->nsub; i++)
        if (vc->sub[i].weight > vc->sub[best].weight * 1.001)
            best = i;
    vc->primary = best;
}

/* The first subchannel on local rail `rail` (0 when there is none). */
static int px_rail_sub_on(const px_rail_vc_t *vc, int rail)
{
    for (int i = 0; i < vc->nsub; i++)
        if (vc->sub[i].info.rail == rail)
            return i;
    return 0;
}

px_status_t px_rail_vc_create(px_rail_t *r, int rank, void *owner, px_rail_vc_t **vc_p)
{
    px_rail_vc_t *vc = r->vcs[rank];
    px_status_t st;
    if (!vc) {
        px_net_sub_info_t info[PX_NET_MAX_SUB];
        int n = 1;
        memset(info, 0, sizeof(info));
        if (r->ops->ep_subs) {
            n = r->ops->ep_subs(r->iface, rank, info, PX_NET_MAX_SUB);
            if (n < 0)
                return (px_status_t)n;
            if (n == 0)
                return PX_ERR_PEER_UNREACHABLE;
        }
        vc = calloc(1, sizeof(*vc) + (size_t)n * sizeof(vc->sub[0]));
        if (!vc)
            return PX_ERR_NO_MEMORY;
        vc->tx = calloc(PX_RAIL_TX_CAP0, sizeof(*vc->tx));
        if (!vc->tx) {
            free(vc);
            return PX_ERR_NO_MEMORY;
        }
        vc->tx_cap = PX_RAIL_TX_CAP0;
        vc->rail = r;
        vc->rank = rank;
        vc->nsub = n;
        vc->nup = n;
        px_list_init(&vc->backlog);
        px_list_init(&vc->deferred);
        vc->cwnd = px_params.rail_cwnd_max;
        if (r->lossy && vc->cwnd < 4 * r->frame_max)
            vc->cwnd = 4 * r->frame_max;
        double total = 0;
        for (int i = 0; i < n; i++) {
            px_rail_sub_t *s = &vc->sub[i];
            s->vc = vc;
            s->idx = i;
            s->info = info[i];
            s->st = &s->st_own;
            if (r->seg) {
                px_rail_stats_entry_t *e = &r->seg->e[rank * PX_NET_MAX_SUB + i];
                e->peer = rank;
                e->sub = i;
                snprintf(e->label, sizeof(e->label), "%s", info[i].label);
                s->st = &e->st;
                __atomic_store_n(&e->in_use, 1, __ATOMIC_RELEASE);
            }
            s->weight = px_rail_static_weight(r, &info[i]);
            s->est_mbs = s->weight;
            total += s->weight;
            st = r->ops->ep_create(r->iface, rank, i, s, &s->ep);
            if (st != PX_OK) {
                free(vc->tx);
                free(vc);
                return st;
            }
        }
        for (int i = 0; i < n; i++) {
            vc->sub[i].weight = r->policy == PX_POL_EVEN ? 1.0 / n : vc->sub[i].weight / total;
            vc->sub[i].st->weight = vc->sub[i].weight;
        }
        px_rail_set_primary(vc);
        /* binding: one rail per local rank */
        int nrails = 0;
        for (int i = 0; i < n; i++)
            if (info[i].rail + 1 > nrails)
                nrails = info[i].rail + 1;
        int want = 0;
        if (r->bind_list[0] == -2 && r->nbind == 0)
            want = r->local_rank % (nrails ? nrails : 1);
        else if (r->nbind)
            want = r->bind_list[r->local_rank % r->nbind];
        vc->bind_sub = px_rail_sub_on(vc, want);
        if (r->policy == PX_POL_BIND && r->nbind && want >= nrails)
            px_warn("rail", "PX_RAIL_BIND names rail %d but rank %d is reached over %d rail(s); "
                    "using %s", want, rank, nrails, info[vc->bind_sub].label);
        for (int i = 0; i < n; i++)
            px_debug("rail", "rank %d subchannel %d: %s (weight %.3f)", rank, i, info[i].label,
                     vc->sub[i].weight);
        r->vcs[rank] = vc;
        r->vlist[r->nvc++] = vc;
    }
    vc->owner = owner;
    *vc_p = vc;
    return PX_OK;
}

/* ---------- subchannel health ---------- */

static void px_rail_sub_up(px_rail_sub_t *s);
static void px_rail_resend(px_rail_vc_t *vc);

/* vc has traffic: its timers run every tick until it is idle again. */
static inline void px_rail_heat(px_rail_vc_t *vc)
{
    if (__builtin_expect(!vc->hot, 0)) {
        px_rail_t *r = vc->rail;
        vc->hot = 1;
        r->hot[r->nhot++] = vc;
    }
}

static void px_rail_stage_start(px_rail_t *r, px_rail_tx_t *x);
static void px_rail_pre_attach(px_rail_t *r, px_rail_tx_t *x);
static void px_rail_free_cb(void *arg, px_status_t st);

/* x's payload is its caller's buffer, and the caller waits for it. With
 * fault tolerance only frames sent with PX_RAIL_F_RELEASE are released (a
 * collective's round that waits for nothing else): a copy made while the
 * bytes are in flight competes with their delivery for the CPU, which cost
 * 10% on a 2 MB ping-pong and 10-15% on a 4-node allgather at 128 KB between
 * emulated nodes, where the early completion gained nothing. Without fault
 * tolerance nothing is copied, and every written frame is released. */
static inline int px_rail_caller_held(const px_rail_tx_t *x)
{
    if (x->told || !x->len || (x->vc->rail->ft && !x->rel_ok))
        return 0;
    if (x->msg)
        return x->msg->cb != px_rail_free_cb;
    return x->cb && x->cb != px_rail_free_cb;
}

static void px_rail_stage_copy(px_rail_tx_t *x, size_t len);
static int px_rail_area(px_rail_t *r, px_rail_tx_t *x);

/* vc may have frames whose senders can be told (px_rail_release). */
static inline void px_rail_release_mark(px_rail_vc_t *vc)
{
    vc->rel_due = 1;
    vc->rail->rel_any = 1;
    px_rail_heat(vc);
}

static inline void px_rail_resend_mark(px_rail_vc_t *vc)
{
    vc->resend_pending = 1;
    vc->rail->resend_any = 1;
    px_rail_heat(vc);
}
static void px_rail_send_ctl(px_rail_vc_t *vc, int si, uint8_t type, uint8_t flags, uint32_t seq,
                             uint64_t val);

/* A ping on each subchannel a send may use that has carried nothing yet
 * (but skip): the transport connects and verifies it now. */
static void px_rail_connect_unused(px_rail_vc_t *vc, int skip)
{
    for (int i = 0; i < vc->nsub; i++) {
        px_rail_sub_t *s = &vc->sub[i];
        if (i == skip || (vc->single && i != vc->bind_sub) || s->state != PX_SUB_UP || s->used)
            continue;
        s->used = 1;
        px_rail_send_ctl(vc, i, PX_RAIL_PING, 0, 0, 0);
    }
}
static void px_rail_backlog_flush(px_rail_vc_t *vc);
static void px_rail_deferred_flush(px_rail_vc_t *vc);

static inline int px_rail_usable(const px_rail_sub_t *s) { return s->state == PX_SUB_UP; }

/* Time from t to now; 0 when t was taken after now (now is read once per
 * progress call, some stamps are fresher). */
static inline uint64_t px_since(uint64_t now, uint64_t t) { return now > t ? now - t : 0; }

/* The best subchannel by weight among those in the given state or better,
 * or -1. */
static int px_rail_best(px_rail_vc_t *vc, int worst_state)
{
    int best = -1;
    for (int i = 0; i < vc->nsub; i++)
        if (vc->sub[i].state <= worst_state &&
            (best < 0 || vc->sub[i].weight > vc->sub[best].weight * 1.001))
            best = i;
    return best;
}

static void px_rail_set_state(px_rail_sub_t *s, int state)
{
    s->state = state;
    s->st->state = state;
}

static void px_rail_count_up(px_rail_vc_t *vc)
{
    int n = 0;
    for (int i = 0; i < vc->nsub; i++)
        n += vc->sub[i].state != PX_SUB_DOWN;
    vc->nup = n;
}

/* What was arriving on s when it failed: a matched ordered frame keeps its
 * destination for the copy the sender will send again; the rest is
 * forgotten (stripes are written again at their offset, early frames held
 * again). */
static void px_rail_rx_abandon(px_rail_sub_t *s)
{
    px_rail_vc_t *vc = s->vc;
    if (s->rx_state == PX_RX_DELIVER && s->rx_ordered) {
        for (int i = 0; i < PX_NET_MAX_SUB; i++)
            if (!vc->orphan[i].used) {
                vc->orphan[i] = (px_rail_orphan_t){.seq = s->rx_seq, .used = 1,
                                                   .dst = s->rx_dst, .ctx = s->rx_ctx};
                vc->norphan++;
                break;
            }
    } else if (s->rx_state == PX_RX_HOLD) {
        free(s->rx_held);
        s->rx_held = NULL;
    }
    s->rx_state = PX_RX_DROP;
}

static void px_rail_vc_cancel(px_rail_vc_t *vc, px_status_t why);

/* The peer is gone for good: every send to it ends with an error, then the
 * layer above fails what waits for it. */
static void px_rail_vc_fail(px_rail_vc_t *vc, px_status_t why)
{
    if (vc->failed)
        return;
    vc->failed = 1;
    px_rail_vc_cancel(vc, why);
    if (vc->rail->up->ep_failed)
        vc->rail->up->ep_failed(vc->owner, why);
}

/* The transport gave up on s: everything it had not delivered goes to the
 * other subchannels (at the next progress), and s is probed until it works. */
static void px_rail_sub_down(px_rail_sub_t *s, px_status_t why)
{
    px_rail_vc_t *vc = s->vc;
    px_rail_t *r = vc->rail;
    uint64_t now = r->now = px_time_ns();

    if (!r->ft) {
        px_error("rail", "subchannel %s to rank %d failed: %s", s->info.label, vc->rank,
                 px_status_string(why));
        px_rail_vc_fail(vc, why);
        return;
    }
    if (s->state == PX_SUB_DOWN)
        return;
    uint32_t moved = 0;
    for (uint32_t q = vc->tx_acked; q != vc->tx_seq; q++) {
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (x && x->seq == q && x->sub == s->idx && !x->acked && !x->resend) {
            x->resend = 1;
            moved++;
        }
    }
    px_rail_set_state(s, PX_SUB_DOWN);
    s->st->downs++;
    s->down_since = now;
    s->unacked = 0;
    s->probe_gap = 0.1;
    s->next_probe = now + 100000000ull;
    px_rail_count_up(vc);
    px_warn("rail", "subchannel %s to rank %d DOWN (%s); %u unacknowledged frame(s) move to %d "
            "other subchannel(s)", s->info.label, vc->rank, px_status_string(why), moved,
            vc->nup);
    /* drop the connection and what is queued on it: those frames go again */
    r->ops->ep_reset(s->ep);
    px_rail_rx_abandon(s);
    px_rail_resend_mark(vc);
    if (why == PX_ERR_TIMEOUT || why == PX_ERR_LINK_UNREACHABLE) {
        /* the peer's side of a dead link only times out when it has data
         * on it too: tell it over a working subchannel */
        int o = px_rail_best(vc, PX_SUB_SUSPECT);
        if (o >= 0)
            px_rail_send_ctl(vc, o, PX_RAIL_SUBDOWN, 0, (uint32_t)s->idx, 0);
    }
    if (vc->nup == 0 && !vc->part_since) {
        vc->part_since = now;
        r->partitions++;
        px_warn("rail", "rank %d unreachable on every subchannel; waiting up to %g s for a path "
                "(PX_PARTITION_TIMEOUT)", vc->rank, px_params.partition_timeout);
    }
}

static void px_rail_sub_up(px_rail_sub_t *s)
{
    px_rail_vc_t *vc = s->vc;
    px_rail_t *r = vc->rail;
    uint64_t now = r->now = px_time_ns();
    s->st->down_ns += now - s->down_since;
    s->st->recoveries++;
    px_rail_set_state(s, PX_SUB_UP);
    s->up_since = now;
    s->down_silent = 0;
    /* re-join with a fresh share: the mean of the others' */
    double sum = 0;
    int k = 0;
    for (int i = 0; i < vc->nsub; i++)
        if (i != s->idx && vc->sub[i].state != PX_SUB_DOWN) {
            sum += vc->sub[i].weight;
            k++;
        }
    s->weight = k ? sum / k : 1.0;
    if (s->weight < px_params.rail_min_share)
        s->weight = px_params.rail_min_share;
    double total = 0;
    for (int i = 0; i < vc->nsub; i++)
        total += vc->sub[i].weight;
    for (int i = 0; i < vc->nsub; i++)
        vc->sub[i].weight /= total;
    s->ew_bytes = s->ew_ns = 0;
    s->est_mbs = s->est_mbs > 0 ? s->est_mbs : 1;
    s->probing = 1;
    s->warm = 0;
    s->srtt = s->rttvar = s->rtt_max = 0;
    px_rail_count_up(vc);
    px_warn("rail", "subchannel %s to rank %d recovered after %.2f s", s->info.label, vc->rank,
            (double)(now - s->down_since) / 1e9);
    if (vc->part_since) {
        r->partition_ns += now - vc->part_since;
        px_warn("rail", "rank %d reachable again after %.2f s", vc->rank,
                (double)(now - vc->part_since) / 1e9);
        vc->part_since = 0;
    }
    px_rail_resend_mark(vc);
}

/* ---------- sending ---------- */

static inline void px_rail_hdr_fill(px_rail_vc_t *vc, px_rail_hdr_t *h, uint8_t type,
                                    uint8_t flags, int sub)
{
    h->ack = vc->rx_next;
    h->type = type;
    h->flags = flags;
    h->sub = (uint16_t)sub;
    vc->rx_unacked = 0;
    vc->last_ack_tx = vc->rail->now;
}

/* A header-only control frame (ACK, PING, PONG) on subchannel si. */
static void px_rail_send_ctl(px_rail_vc_t *vc, int si, uint8_t type, uint8_t flags, uint32_t seq,
                             uint64_t val)
{
    px_rail_hdr_t h;
    px_rail_sub_t *s = &vc->sub[si];
    memset(&h, 0, sizeof(h));
    h.seq = seq;
    h.off = val;
    px_rail_hdr_fill(vc, &h, type, flags, si);
    px_status_t st = vc->rail->ops->ep_send(s->ep, &h, sizeof(h), NULL, 0, NULL, NULL);
    if (st >= 0) {
        s->last_tx_ns = vc->rail->now;
        if (type == PX_RAIL_ACK)
            s->st->acks_tx++;
    } else if (s->state != PX_SUB_DOWN) {
        px_rail_sub_down(s, st);
    }
}

static inline int px_rail_rx_has(px_rail_vc_t *vc, uint32_t seq);

/* Which of the frames rx_next+1 .. rx_next+64 have arrived (lossy transports). */
static uint64_t px_rail_rx_bitmap(px_rail_vc_t *vc)
{
    uint64_t b = 0;
    for (uint32_t k = 0; k < 64; k++)
        if (px_rail_rx_has(vc, vc->rx_next + 1 + k))
            b |= 1ull << k;
    return b;
}

static void px_rail_send_ack(px_rail_vc_t *vc, int sack, uint32_t seq, uint64_t dur_ns, int pref)
{
    /* the working subchannel with the least queued, so the ack is not stuck
     * behind data; on a tie the one the frame came on */
    int best = -1;
    size_t least = (size_t)-1;
    for (int i = 0; i < vc->nsub; i++) {
        if (vc->sub[i].state != PX_SUB_UP && vc->nsub > 1)
            continue;
        size_t q = vc->rail->ops->ep_pending(vc->sub[i].ep);
        if (q < least || (q == least && i == pref)) {
            least = q;
            best = i;
        }
    }
    if (best < 0)
        best = px_rail_best(vc, PX_SUB_SUSPECT);
    if (best < 0)
        return; /* nothing works: the cumulative ack goes with the next frame */
    if (!sack && vc->rail->lossy) {
        vc->gap_ack = 0;
        px_rail_send_ctl(vc, best, PX_RAIL_ACK, PX_RAIL_H_BITMAP, 0, px_rail_rx_bitmap(vc));
        return;
    }
    px_rail_send_ctl(vc, best, PX_RAIL_ACK, sack ? PX_RAIL_H_SACK : 0, seq, dur_ns);
}

static int px_rail_stripes(px_rail_vc_t *vc, unsigned flags);

/* Subchannel of a frame that goes whole, or -1 when none works. */
static int px_rail_pick(px_rail_vc_t *vc, unsigned flags)
{
    int n = vc->nsub, si;
    if (n == 1)
        return vc->sub[0].state == PX_SUB_DOWN ? -1 : 0;
    px_rail_policy_t pol = vc->single ? PX_POL_BIND : vc->rail->policy;
    if (vc->rail->lossy && (flags & PX_RAIL_F_STRIPE) && px_rail_stripes(vc, flags))
        pol = PX_POL_WRR; /* frames are small: striping spreads whole ones by weight */
    switch (pol) {
    case PX_POL_BIND:
        si = vc->bind_sub;
        break;
    case PX_POL_RR:
        vc->rr = (vc->rr + 1) % n;
        si = vc->rr;
        break;
    case PX_POL_WINDOW:
        if (vc->rr_left <= 0) {
            vc->rr = (vc->rr + 1) % n;
            vc->rr_left = px_params.rail_window;
        }
        vc->rr_left--;
        si = vc->rr;
        break;
    case PX_POL_WRR: { /* smooth weighted round-robin */
        int best = -1;
        for (int i = 0; i < n; i++) {
            if (!px_rail_usable(&vc->sub[i]))
                continue;
            vc->sub[i].wrr_cur += vc->sub[i].weight;
            if (best < 0 || vc->sub[i].wrr_cur > vc->sub[best].wrr_cur)
                best = i;
        }
        if (best >= 0)
            vc->sub[best].wrr_cur -= 1.0;
        si = best;
        break;
    }
    case PX_POL_EPC:
        /* nonblocking point-to-point data goes round-robin, the rest on the best */
        if ((flags & PX_RAIL_F_STRIPE) && !(flags & (PX_RAIL_F_BLOCKING | PX_RAIL_F_COLL))) {
            vc->rr = (vc->rr + 1) % n;
            si = vc->rr;
        } else {
            si = vc->primary;
        }
        break;
    default:
        si = vc->primary;
    }
    if (si >= 0 && px_rail_usable(&vc->sub[si]))
        return si;
    si = px_rail_best(vc, PX_SUB_UP);
    return si >= 0 ? si : px_rail_best(vc, PX_SUB_SUSPECT);
}

static int px_rail_stripes(px_rail_vc_t *vc, unsigned flags)
{
    if (__builtin_expect(vc->single, 0))
        return 0;
    switch (vc->rail->policy) {
    case PX_POL_EVEN:
    case PX_POL_WEIGHTED:
    case PX_POL_ADAPTIVE:
    case PX_POL_BSS:
        return 1;
    case PX_POL_EPC:
        return (flags & (PX_RAIL_F_BLOCKING | PX_RAIL_F_COLL)) != 0;
    default:
        return 0;
    }
}

/* Without fault tolerance: a frame goes straight to the transport with the
 * caller's completion and is forgotten once written. */
static px_status_t px_rail_send_frame(px_rail_vc_t *vc, int si, const void *hdr, size_t hdr_len,
                                      const struct iovec *iov, int iovcnt, uint8_t hflags,
                                      px_net_send_cb_t cb, void *arg)
{
    uint8_t buf[PX_NET_HDR_MAX];
    px_rail_hdr_t *h = (px_rail_hdr_t *)buf;
    px_rail_sub_t *s = &vc->sub[si];

    if (hdr_len + sizeof(*h) > sizeof(buf))
        return PX_ERR_INVALID_PARAM;
    h->seq = vc->tx_seq;
    h->oseq = (hflags & PX_RAIL_H_UNORD) ? 0 : vc->tx_oseq;
    h->off = 0;
    px_rail_hdr_fill(vc, h, PX_RAIL_DATA, hflags, si);
    memcpy(buf + sizeof(*h), hdr, hdr_len);
    px_status_t st = vc->rail->ops->ep_send(s->ep, buf, sizeof(*h) + hdr_len, iov, iovcnt, cb, arg);
    if (st >= 0) {
        vc->tx_seq++;
        if (!(hflags & PX_RAIL_H_UNORD))
            vc->tx_oseq++;
        s->st->frames_tx++;
        s->st->bytes_tx += px_net_iov_len(iov, iovcnt);
        s->used = 1;
    }
    return st;
}

/* Room in vc->tx for every record under way plus the PX_NET_MAX_SUB a
 * caller may take before numbering them (stripes, re-split pieces). */
static int px_rail_tx_room(px_rail_vc_t *vc)
{
    uint32_t need = vc->tx_seq - vc->tx_acked + PX_NET_MAX_SUB + 1, cap = vc->tx_cap;
    if (__builtin_expect(need <= cap, 1))
        return 0;
    while (cap < need)
        cap *= 2;
    px_rail_tx_t **tx = calloc(cap, sizeof(*tx));
    if (!tx)
        return -1;
    for (uint32_t q = vc->tx_acked; q != vc->tx_seq; q++)
        tx[q & (cap - 1)] = vc->tx[q & (vc->tx_cap - 1)];
    free(vc->tx);
    vc->tx = tx;
    vc->tx_cap = cap;
    return 0;
}

static px_rail_tx_t *px_rail_tx_get(px_rail_vc_t *vc)
{
    px_rail_t *r = vc->rail;
    if (px_rail_tx_room(vc) < 0)
        return NULL;
    px_rail_tx_t *x = r->txfree;
    if (x) {
        r->txfree = x->next;
    } else {
        x = malloc(sizeof(*x));
        if (!x)
            return NULL;
        x->heap = NULL;
        x->heap_cap = 0;
    }
    x->vc = vc;
    x->msg = NULL;
    x->cb = NULL;
    x->wire = x->acked = x->resend = x->tries = x->again = x->npieces = 0;
    x->told = x->inbuf = x->rel_ok = 0;
    x->area = NULL;
    x->staged = 0;
    x->off = 0;
    x->sub = -1;
    return x;
}

static void px_rail_tx_put(px_rail_t *r, px_rail_tx_t *x)
{
    if (r->stage_x == x)
        r->stage_x = NULL;
    if (x->inbuf) {
        x->inbuf = 0;
        if (--r->rel_live == 0)
            r->rel_used = 0;
    }
    x->area = NULL;
    if (x->heap_cap > x->vc->rail->copy_max) { /* keep only eager-sized buffers around */
        free(x->heap);
        x->heap = NULL;
        x->heap_cap = 0;
    }
    x->next = r->txfree;
    r->txfree = x;
}

/* Copies the payload into the record (the caller's buffer is free at once). */
static int px_rail_tx_copy(px_rail_tx_t *x, const struct iovec *iov, int iovcnt, size_t len)
{
    char *d = x->small;
    if (len > PX_RAIL_INLINE) {
        if (x->heap_cap < len) {
            char *h = realloc(x->heap, len);
            if (!h)
                return -1;
            x->heap = h;
            x->heap_cap = len;
        }
        d = x->heap;
    }
    px_net_iov_gather(d, iov, iovcnt);
    x->iov[0].iov_base = d;
    x->iov[0].iov_len = len;
    x->iovcnt = len ? 1 : 0;
    return 0;
}

/* A record of block m is done (told: its caller was told already). */
static void px_rail_msg_event(px_rail_msg_t *m, int told)
{
    if (!told && --m->users == 0)
        m->cb(m->arg, m->st);
    if (--m->open == 0)
        free(m);
}

/* A record is done when acknowledged and no longer held by a transport. */
static void px_rail_tx_finish(px_rail_tx_t *x)
{
    px_rail_t *r = x->vc->rail;
    px_rail_msg_t *m = x->msg;
    px_net_send_cb_t cb = x->cb;
    void *arg = x->arg;
    px_status_t st = x->vc->failed ? PX_ERR_PEER_UNREACHABLE : PX_OK;
    px_rail_tx_put(r, x);
    if (m) {
        if (st != PX_OK)
            m->st = st;
        px_rail_msg_event(m, x->told);
    } else if (cb) {
        cb(arg, st);
    }
}

static void px_rail_vc_cancel(px_rail_vc_t *vc, px_status_t why)
{
    px_rail_t *r = vc->rail;
    px_list_t *e, *t;
    px_rail_tx_t *done = NULL;
    for (uint32_t q = vc->tx_acked; q != vc->tx_seq; q++) {
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (!x || x->seq != q)
            continue;
        vc->tx[q & (vc->tx_cap - 1)] = NULL;
        x->acked = 1; /* nothing more will come for it */
        if (!x->wire) {
            x->next = done;
            done = x;
        }
    }
    vc->tx_acked = vc->tx_seq;
    vc->inflight = 0;
    for (int i = 0; i < vc->nsub; i++) /* records the transports hold end in their callbacks */
        if (r->ops->ep_reset)
            r->ops->ep_reset(vc->sub[i].ep);
    while (done) {
        px_rail_tx_t *x = done;
        done = x->next;
        px_rail_tx_finish(x);
    }
    px_list_for_each_safe(e, t, &vc->backlog)
    {
        px_rail_backlog_t *b = px_container_of(e, px_rail_backlog_t, link);
        px_list_del(e);
        if (b->copy)
            free(b->copy);
        else if (b->cb)
            b->cb(b->arg, why);
        free(b);
    }
    px_list_for_each_safe(e, t, &vc->deferred)
    {
        px_rail_backlog_t *b = px_container_of(e, px_rail_backlog_t, link);
        px_list_del(e);
        b->cb(b->arg, why);
        free(b);
    }
    vc->resend_pending = 0;
}

static void px_rail_wire_cb(void *arg, px_status_t st)
{
    px_rail_tx_t *x = arg;
    x->wire = 0;
    x->vc->on_wire--;
    if (x->acked) {
        px_rail_tx_finish(x);
        return;
    }
    if (st == PX_OK && x->vc->rail->release && px_rail_caller_held(x))
        px_rail_release_mark(x->vc);
    if (st != PX_OK) {
        /* the transport dropped it (failing subchannel): send it again */
        px_rail_vc_t *vc = x->vc;
        if (!vc->rail->ft) {
            if (x->msg)
                x->msg->st = st;
            return;
        }
        if (!x->resend) {
            x->resend = 1;
            if (x->sub >= 0 && vc->sub[x->sub].unacked)
                vc->sub[x->sub].unacked--;
        }
        px_rail_resend_mark(vc);
    }
}

/* Sends (or sends again) record x on subchannel si. */
static void px_rail_xmit(px_rail_vc_t *vc, px_rail_tx_t *x, int si)
{
    uint8_t buf[PX_NET_HDR_MAX];
    px_rail_hdr_t *h = (px_rail_hdr_t *)buf;
    px_rail_sub_t *s = &vc->sub[si];
    uint64_t now = vc->rail->now;

    h->seq = x->seq;
    h->oseq = x->oseq;
    h->off = x->off;
    px_rail_hdr_fill(vc, h, PX_RAIL_DATA, x->hflags, si);
    h->sub |= (uint16_t)(x->npieces << 8);
    memcpy(buf + sizeof(*h), x->uh, x->uhl);
    if (x->sub >= 0)
        x->again = 1;
    x->sub = si;
    x->order = s->tx_order++;
    x->wire = 1;
    x->resend = 0;
    /* stripes are timed: a fresh clock; others make do with the progress one */
    x->t_sent = (x->hflags & PX_RAIL_H_TIMED) ? px_time_ns() : now;
    if (s->unacked++ == 0)
        s->busy_since = x->t_sent;
    s->last_tx_ns = now;
    s->used = 1;
    s->st->frames_tx++;
    s->st->bytes_tx += x->len;
    if (__builtin_expect(!vc->armed, 0)) {
        /* first traffic to this peer: connect the alternates now, so a
         * failover finds them ready and verified */
        vc->armed = 1;
        if (vc->rail->ft)
            px_rail_connect_unused(vc, si);
    }
    px_status_t st = vc->rail->ops->ep_send(s->ep, buf, sizeof(*h) + x->uhl, x->iov, x->iovcnt,
                                            px_rail_wire_cb, x);
    if (st == PX_INPROGRESS) {
        vc->on_wire++;
        if (vc->rail->release && vc->rail->ft && !vc->rail->stage_x && !x->area)
            px_rail_stage_start(vc->rail, x);
    } else if (st == PX_OK) {
        x->wire = 0;
        if (vc->rail->release && px_rail_caller_held(x))
            px_rail_release_mark(vc); /* not here: the caller is still in its send */
    } else if (st < 0) {
        x->wire = 0;
        x->resend = 1;
        s->unacked--;
        px_rail_resend_mark(vc);
        px_rail_sub_down(s, st);
    }
}

/* Lossy transports: every PX_RAIL_LOSS_SAMPLE frames, the share that had to
 * be sent again decides the rendezvous frame size (with hysteresis: a
 * frame of six datagrams is lost six times as often as one of one). */
static void px_rail_loss_look(px_rail_vc_t *vc)
{
    double lost = (double)vc->fr_retx / vc->fr_sent;
    if (!vc->small_frames && lost > PX_RAIL_LOSS_HIGH) {
        vc->small_frames = 1;
        vc->rail->small_frame_periods++;
        px_debug("rail", "rank %d: %.1f%% of frames sent again: rendezvous data in "
                 "one-datagram frames", vc->rank, 100 * lost);
    } else if (vc->small_frames && lost < PX_RAIL_LOSS_LOW) {
        vc->small_frames = 0;
        px_debug("rail", "rank %d: %.1f%% of frames sent again: back to full frames",
                 vc->rank, 100 * lost);
    }
    vc->fr_sent = vc->fr_retx = 0;
}

/* With fault tolerance: a whole frame with its record. */
static px_status_t px_rail_send_rec(px_rail_vc_t *vc, const void *hdr, size_t hdr_len,
                                    const struct iovec *iov, int iovcnt, unsigned flags,
                                    px_net_send_cb_t cb, void *arg)
{
    size_t len = px_net_iov_len(iov, iovcnt);
    px_status_t ret = PX_OK;
    if (hdr_len + sizeof(px_rail_hdr_t) > PX_NET_HDR_MAX)
        return PX_ERR_INVALID_PARAM;
    px_rail_tx_t *x = px_rail_tx_get(vc);
    if (!x)
        return PX_ERR_NO_MEMORY;
    x->hflags = (flags & PX_RAIL_F_STRIPE) ? PX_RAIL_H_UNORD : 0;
    x->rel_ok = (flags & PX_RAIL_F_RELEASE) != 0;
    size_t copy_max =
        (flags & (PX_RAIL_F_BLOCKING | PX_RAIL_F_COLL)) ? vc->rail->copy_max : PX_RAIL_COPY_SMALL;
    x->len = len;
    px_rail_t *r = vc->rail;
    int rel = cb && len > copy_max && (flags & PX_RAIL_F_RELEASE) && r->release &&
              iovcnt <= PX_RAIL_IOV;
    if (rel) {
        memcpy(x->iov, iov, (size_t)iovcnt * sizeof(*iov));
        x->iovcnt = iovcnt;
        if (r->pre.vc == vc)
            px_rail_pre_attach(r, x); /* its copy may be begun */
    }
    if (rel && r->rel_live == (uint32_t)(r->pre.vc != NULL) + x->inbuf &&
        px_rail_area(r, x) == 0) {
        /* The first frame to release while nothing released is in flight
         * on the rail (but a prestaged payload): copied now, what is not
         * yet, while the links are quiet, and done at once (a broadcast's
         * root); the others wait for their write. */
        px_rail_stage_copy(x, len - x->staged);
        x->iov[0].iov_base = x->area;
        x->iov[0].iov_len = len;
        x->iovcnt = 1;
        x->told = 1;
        x->hflags |= PX_RAIL_H_SACK;
        vc->rail->released++;
        vc->rail->released_bytes += len;
    } else if (cb && (len > copy_max || (flags & PX_RAIL_F_HELD)) && iovcnt <= PX_RAIL_IOV) {
        /* the caller's buffer is kept until the peer has it all */
        memcpy(x->iov, iov, (size_t)iovcnt * sizeof(*iov));
        x->iovcnt = iovcnt;
        x->cb = cb;
        x->arg = arg;
        x->hflags |= PX_RAIL_H_SACK;
        if (r->pre.vc == vc && x->rel_ok)
            px_rail_pre_attach(r, x);
        ret = PX_INPROGRESS;
    } else if (px_rail_tx_copy(x, iov, iovcnt, len) < 0) {
        px_rail_tx_put(vc->rail, x);
        return PX_ERR_NO_MEMORY;
    }
    x->len = len;
    if (vc->rail->lossy) {
        vc->inflight += len;
        if (__builtin_expect(++vc->fr_sent >= PX_RAIL_LOSS_SAMPLE, 0))
            px_rail_loss_look(vc);
    }
    x->uhl = (uint16_t)hdr_len;
    memcpy(x->uh, hdr, hdr_len);
    x->seq = vc->tx_seq++;
    x->oseq = (x->hflags & PX_RAIL_H_UNORD) ? 0 : vc->tx_oseq++;
    vc->tx[x->seq & (vc->tx_cap - 1)] = x;
    int si = px_rail_pick(vc, flags);
    if (si < 0) {
        x->resend = 1; /* sent when a subchannel comes back */
        px_rail_resend_mark(vc);
    } else {
        px_rail_xmit(vc, x, si);
    }
    return ret;
}

/* The share of each subchannel in a striped block (0 for those left out or
 * not working); returns how many get a share. */
static int px_rail_split(px_rail_vc_t *vc, double *share)
{
    int n = vc->nsub, worst = PX_SUB_UP;
    px_rail_t *r = vc->rail;
    int ok = 0;
    for (int i = 0; i < n; i++)
        ok += px_rail_usable(&vc->sub[i]);
    if (!ok) { /* only suspects left: better than waiting */
        worst = PX_SUB_SUSPECT;
        for (int i = 0; i < n; i++)
            ok += vc->sub[i].state == PX_SUB_SUSPECT;
        if (!ok)
            return 0;
    }
    if (r->policy == PX_POL_BSS) {
        int order[PX_NET_MAX_SUB], m = 0, batch = px_params.rail_bss_batch;
        uint64_t now = px_time_ns(), retry = (uint64_t)(px_params.rail_bss_retry * 1e9);
        for (int i = 0; i < n; i++) {
            share[i] = 0;
            if (vc->sub[i].state <= worst)
                order[m++] = i;
        }
        for (int i = 1; i < m; i++)
            for (int j = i; j > 0 && vc->sub[order[j]].est_mbs > vc->sub[order[j - 1]].est_mbs; j--) {
                int t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        if (batch > m)
            batch = m;
        double sum = 0;
        for (int i = 0; i < batch; i++)
            sum += vc->sub[order[i]].est_mbs;
        for (int i = 0; i < batch; i++)
            share[order[i]] = sum > 0 ? vc->sub[order[i]].est_mbs / sum : 1.0 / batch;
        /* One subchannel left out for PX_RAIL_BSS_RETRY gets a small probe
         * stripe; what it measures replaces its old estimate, so a path that
         * has recovered climbs back into the batch. */
        for (int k = batch; k < m; k++) {
            px_rail_sub_t *c = &vc->sub[order[k]];
            uint64_t last = c->last_use_ns > c->last_ack_ns ? c->last_use_ns : c->last_ack_ns;
            if ((c->warm || c->probing) && px_since(now, last) > retry) {
                double probe = px_params.rail_min_share > 0 ? px_params.rail_min_share : 0.05;
                for (int i = 0; i < batch; i++)
                    share[order[i]] *= 1 - probe;
                share[order[k]] = probe;
                c->ew_bytes = c->ew_ns = 0;
                c->probing = 1;
                return batch + 1;
            }
        }
        return batch;
    }
    double sum = 0;
    for (int i = 0; i < n; i++) {
        share[i] = vc->sub[i].state > worst ? 0 : r->policy == PX_POL_EVEN ? 1.0 : vc->sub[i].weight;
        sum += share[i];
    }
    for (int i = 0; i < n; i++)
        share[i] = sum > 0 ? share[i] / sum : 0;
    return ok;
}

static px_status_t px_rail_send_striped(px_rail_vc_t *vc, const void *hdr, size_t hdr_len,
                                        const struct iovec *iov, int iovcnt, size_t len,
                                        unsigned flags, px_net_send_cb_t cb, void *arg)
{
    double share[PX_NET_MAX_SUB];
    size_t bytes[PX_NET_MAX_SUB];
    int n = vc->nsub, used = 0;
    size_t unit = px_params.rail_stripe_unit ? px_params.rail_stripe_unit : 1;

    if (hdr_len + sizeof(px_rail_hdr_t) > PX_NET_HDR_MAX)
        return PX_ERR_INVALID_PARAM;
    if (!px_rail_split(vc, share)) {
        /* nothing works: one part, sent when a subchannel comes back */
        for (int i = 0; i < n; i++)
            share[i] = i == 0;
    }
    size_t left = len;
    int last = -1;
    for (int i = 0; i < n; i++) {
        bytes[i] = 0;
        if (share[i] <= 0)
            continue;
        size_t b = (size_t)(share[i] * (double)len);
        b -= b % unit;
        if (b > left)
            b = left;
        bytes[i] = b;
        left -= b;
        last = i;
    }
    /* the remainder goes to the largest share */
    int big = last;
    for (int i = 0; i < n; i++)
        if (share[i] > 0 && share[i] > share[big])
            big = i;
    bytes[big] += left;
    for (int i = 0; i < n; i++)
        used += bytes[i] > 0;
    if (!used) { /* an empty block still needs one frame */
        bytes[big] = 0;
        used = 1;
    }
        for (int i = 0; i < n; i++)
            px_trace("rail", "stripe to rank %d sub %d: %zu of %zu bytes (share %.3f)", vc->rank,
                     i, bytes[i], len, share[i]);

    px_rail_msg_t *m = malloc(sizeof(*m));
    if (!m)
        return PX_ERR_NO_MEMORY;
    m->cb = cb;
    m->arg = arg;
    m->nparts = used;
    m->nacked = 0;
    m->open = m->users = used + 1; /* a record per part, + this function */
    m->st = PX_OK;
    m->warm = 1;
    m->resent = 0;
    m->extra = 0;
    uint64_t now = vc->rail->now = px_time_ns();
    size_t off = 0;
    int k = 0;
    for (int i = 0; i < n && k < used; i++) {
        if (!bytes[i] && !(len == 0 && i == big))
            continue;
        px_rail_tx_t *x = px_rail_tx_get(vc);
        if (!x) {
            /* cannot happen often; the block fails as a whole */
            m->st = PX_ERR_NO_MEMORY;
            m->open -= used - k;
            m->users -= used - k;
            break;
        }
        x->msg = m;
        x->part = k;
        x->rel_ok = (flags & PX_RAIL_F_RELEASE) != 0;
        m->part[k].sub = i;
        m->part[k].bytes = bytes[i];
        m->part[k].t_ns = 0;
        k++;
        x->iovcnt = px_iov_slice(iov, iovcnt, off, bytes[i], x->iov, PX_RAIL_IOV);
        x->len = bytes[i];
        x->off = off;
        if (vc->rail->pre.vc == vc && x->rel_ok)
            px_rail_pre_attach(vc->rail, x);
        x->hflags = PX_RAIL_H_UNORD | PX_RAIL_H_SACK | PX_RAIL_H_TIMED;
        x->uhl = (uint16_t)hdr_len;
        memcpy(x->uh, hdr, hdr_len);
        x->seq = vc->tx_seq++;
        x->oseq = 0;
        vc->tx[x->seq & (vc->tx_cap - 1)] = x;
        if (!vc->sub[i].warm)
            m->warm = 0;
        vc->stripe_inflight += bytes[i];
        if (vc->sub[i].state == PX_SUB_DOWN) {
            x->resend = 1;
            px_rail_resend_mark(vc);
        } else {
            vc->sub[i].st->stripes++;
            vc->sub[i].st->stripe_bytes += bytes[i];
            vc->sub[i].last_use_ns = now;
            px_rail_xmit(vc, x, i);
        }
        off += bytes[i];
    }
    px_rail_msg_event(m, 0);
    return PX_INPROGRESS;
}

/* Adaptive striping and BSS learn from each striped block's stripe times. */
static void px_rail_learn(px_rail_vc_t *vc, px_rail_msg_t *m)
{
    px_rail_t *r = vc->rail;
    double a = px_params.rail_alpha, rate[PX_NET_MAX_SUB], sum_rate = 0, sum_w = 0;
    int n = vc->nsub;
    if (!m->warm || m->resent || m->nparts < 1)
        return;
    for (int i = 0; i < n; i++)
        rate[i] = -1;
    for (int k = 0; k < m->nparts; k++) {
        px_rail_sub_t *sub = &vc->sub[m->part[k].sub];
        /* a ratio of averages: acknowledgements that arrive in bursts (a
         * short interval after a long one) do not skew it */
        rate[m->part[k].sub] = sub->ew_bytes / (sub->ew_ns > 1000 ? sub->ew_ns : 1000) * 1e3;
    }
    if (r->policy == PX_POL_BSS) {
        for (int i = 0; i < n; i++)
            if (rate[i] >= 0) {
                px_rail_sub_t *c = &vc->sub[i];
                c->est_mbs = c->probing ? rate[i] : (1 - a) * c->est_mbs + a * rate[i];
                c->probing = 0;
            }
        for (int i = 0; i < n; i++)
            px_trace("rail", "rank %d sub %d: measured %.1f MB/s, estimate %.1f MB/s", vc->rank, i,
                     rate[i], vc->sub[i].est_mbs);
        return;
    }
    if (r->policy != PX_POL_ADAPTIVE && r->policy != PX_POL_EPC)
        return;
    if (m->nparts < 2)
        return;
    for (int i = 0; i < n; i++)
        if (rate[i] >= 0) {
            sum_rate += rate[i];
            sum_w += vc->sub[i].weight;
        }
    if (sum_rate <= 0)
        return;
    /* W' = (1-a) W + a * W_total * (W/t) / sum(W/t), over the stripes of this block */
    double total = 0, floor = px_params.rail_min_share;
    for (int i = 0; i < n; i++) {
        if (rate[i] >= 0)
            vc->sub[i].weight = (1 - a) * vc->sub[i].weight + a * sum_w * rate[i] / sum_rate;
        if (vc->sub[i].weight < floor)
            vc->sub[i].weight = floor;
        total += vc->sub[i].weight;
    }
    for (int i = 0; i < n; i++)
        vc->sub[i].weight /= total;
    px_rail_set_primary(vc);
        for (int i = 0; i < n; i++)
            px_trace("rail", "rank %d sub %d: measured %.1f MB/s, weight %.3f", vc->rank, i,
                     rate[i], vc->sub[i].weight);
}

/* The peer has all of record x (rx_ns: its header-to-last-byte time, or 0). */
static void px_rail_tx_acked(px_rail_vc_t *vc, px_rail_tx_t *x, uint64_t now, uint64_t rx_ns)
{
    vc->tx[x->seq & (vc->tx_cap - 1)] = NULL;
    x->acked = 1;
    if (x->hflags & PX_RAIL_H_SPLIT)
        vc->split_open--;
    vc->last_ack_rx = now;
    if (!x->resend && x->sub >= 0) {
        px_rail_sub_t *sub = &vc->sub[x->sub];
        if (sub->unacked)
            sub->unacked--;
        sub->busy_since = now;
        /* a round-trip sample: frames acknowledged at once, and on lossy
         * transports every frame; never one sent twice (Karn) */
        if (vc->rail->lossy && (int32_t)(x->order - sub->acked_order) > 0)
            sub->acked_order = x->order;
        if (!x->again && ((x->hflags & PX_RAIL_H_SACK) || vc->rail->lossy)) {
            double rtt = (double)px_since(now, x->t_sent);
            if (sub->srtt == 0) {
                sub->srtt = rtt;
                sub->rttvar = rtt / 2;
            } else {
                sub->rttvar = 0.75 * sub->rttvar + 0.25 * fabs(sub->srtt - rtt);
                sub->srtt = 0.875 * sub->srtt + 0.125 * rtt;
            }
            /* the deepest queue seen lately: a frame behind a full queue
             * is late, not lost, and sending it again only deepens it */
            if (rtt > sub->rtt_max)
                sub->rtt_max = rtt;
            else
                sub->rtt_max -= (sub->rtt_max - sub->srtt) / 256;
        }
        if (sub->state == PX_SUB_SUSPECT && sub->unacked == 0) {
            px_info("rail", "subchannel %s to rank %d answers again", sub->info.label, vc->rank);
            px_rail_set_state(sub, PX_SUB_UP);
        }
    }
    if (vc->rail->lossy) {
        px_rail_t *r = vc->rail;
        vc->inflight -= x->len;
        if (vc->cwnd < px_params.rail_cwnd_max) /* additive increase: a frame per window */
            vc->cwnd += r->frame_max * (x->len + 64) / vc->cwnd + 1;
    }
    px_rail_msg_t *m = x->msg;
    if (m) {
        vc->stripe_inflight -= x->len;
        px_rail_sub_t *sub = &vc->sub[m->part[x->part].sub];
        if (x->resend || x->sub != m->part[x->part].sub) {
            m->resent = 1;
        } else {
            uint64_t start = x->t_sent > sub->last_ack_ns ? x->t_sent : sub->last_ack_ns;
            /* the sender's view; the receiver's (rx_ns, header to last byte)
             * is no measure of a stripe it read in one go */
            uint64_t t = px_since(now, start);
            (void)rx_ns;
            m->part[x->part].t_ns = t;
            sub->last_ack_ns = now;
            if (!sub->warm) {
                /* the first stripe also paid for the connection: not a sample */
            } else if (sub->ew_ns == 0) {
                sub->ew_bytes = (double)x->len;
                sub->ew_ns = (double)t;
            } else {
                sub->ew_bytes = 0.9 * sub->ew_bytes + 0.1 * (double)x->len;
                sub->ew_ns = 0.9 * sub->ew_ns + 0.1 * (double)t;
            }
            sub->st->stripe_ns += t;
        }
        if (++m->nacked == m->nparts + m->extra) {
            px_rail_learn(vc, m);
            for (int i = 0; i < vc->nsub; i++)
                vc->sub[i].st->weight = px_rail_vc_weight(vc, i);
            for (int k = 0; k < m->nparts; k++)
                vc->sub[m->part[k].sub].warm = 1;
        }
    }
    if (vc->rel_wait)
        px_rail_release_mark(vc);
    if (!x->wire)
        px_rail_tx_finish(x);
}

static px_status_t px_rail_enqueue(px_list_t *q, const void *hdr, size_t hdr_len,
                                   const struct iovec *iov, int iovcnt, unsigned flags,
                                   px_net_send_cb_t cb, void *arg);

/* Striped bytes allowed in flight to a peer: about 40 ms of what the working
 * subchannels carry (so a failing one has little to send again and weights
 * stay fresh on slow links), between 1 MB and PX_RAIL_INFLIGHT. */
static size_t px_rail_inflight_max(px_rail_vc_t *vc)
{
    double rate = 0; /* bytes per ns */
    for (int i = 0; i < vc->nsub; i++) {
        px_rail_sub_t *s = &vc->sub[i];
        if (s->state == PX_SUB_DOWN)
            continue;
        if (s->ew_ns <= 0)
            return px_params.rail_inflight; /* not measured yet */
        rate += s->ew_bytes / s->ew_ns;
    }
    size_t lim = (size_t)(rate * 40e6);
    if (lim < (1u << 20))
        lim = 1u << 20;
    return lim < px_params.rail_inflight ? lim : px_params.rail_inflight;
}

static px_status_t px_rail_send_now(px_rail_vc_t *vc, const void *hdr, size_t hdr_len,
                                    const struct iovec *iov, int iovcnt, unsigned flags,
                                    px_net_send_cb_t cb, void *arg)
{
    size_t len;
    if (vc->nsub > 1 && (flags & PX_RAIL_F_STRIPE) && !vc->rail->lossy &&
        (len = px_net_iov_len(iov, iovcnt)) >= px_params.rail_stripe_min && cb &&
        px_rail_stripes(vc, flags)) {
        /* Split late: a block waits while enough stripe bytes are in flight,
         * so its split uses weights learnt from the blocks before it. Ordered
         * frames never wait behind it. */
        if (vc->stripe_inflight && (vc->stripe_inflight + len > px_rail_inflight_max(vc) ||
                                    !px_list_empty(&vc->deferred)))
            return px_rail_enqueue(&vc->deferred, hdr, hdr_len, iov, iovcnt, flags, cb, arg);
        return px_rail_send_striped(vc, hdr, hdr_len, iov, iovcnt, len, flags, cb, arg);
    }
    if (vc->rail->ft)
        return px_rail_send_rec(vc, hdr, hdr_len, iov, iovcnt, flags, cb, arg);
    return px_rail_send_frame(vc, px_rail_pick(vc, flags), hdr, hdr_len, iov, iovcnt,
                              (flags & PX_RAIL_F_STRIPE) ? PX_RAIL_H_UNORD : 0, cb, arg);
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

static void px_rail_free_cb(void *arg, px_status_t st)
{
    (void)st;
    free(arg);
}

static void px_rail_deferred_flush(px_rail_vc_t *vc)
{
    while (!px_list_empty(&vc->deferred) && !px_rail_window_full(vc, PX_NET_MAX_SUB)) {
        px_rail_backlog_t *b = px_container_of(vc->deferred.next, px_rail_backlog_t, link);
        size_t len = px_net_iov_len(b->iov, b->iovcnt);
        if (vc->stripe_inflight && vc->stripe_inflight + len > px_rail_inflight_max(vc))
            return;
        px_list_del(&b->link);
        px_status_t st = px_rail_send_striped(vc, b->hdr, b->hdr_len, b->iov, b->iovcnt, len, b->flags,
                                              b->cb, b->arg);
        if (st < 0)
            b->cb(b->arg, st);
        free(b);
    }
}

static void px_rail_backlog_flush(px_rail_vc_t *vc)
{
    while (!px_list_empty(&vc->backlog) && !px_rail_window_full(vc, PX_NET_MAX_SUB)) {
        px_rail_backlog_t *b = px_container_of(vc->backlog.next, px_rail_backlog_t, link);
        if (px_rail_cwnd_full(vc, px_net_iov_len(b->iov, b->iovcnt)))
            return;
        px_list_del(&b->link);
        px_net_send_cb_t cb = b->copy ? px_rail_free_cb : b->cb;
        void *arg = b->copy ? b->copy : b->arg;
        px_status_t st = px_rail_send_now(vc, b->hdr, b->hdr_len, b->iov, b->iovcnt, b->flags,
                                          cb, arg);
        if (st == PX_OK && cb)
            cb(arg, PX_OK);
        else if (st < 0 && cb)
            cb(arg, st);
        free(b);
    }
}

px_status_t px_rail_vc_send(px_rail_vc_t *vc, const void *hdr, size_t hdr_len,
                            const struct iovec *iov, int iovcnt, unsigned flags,
                            px_net_send_cb_t cb, void *arg)
{
    if (__builtin_expect(vc->failed, 0))
        return PX_ERR_PEER_UNREACHABLE;
    vc->last_activity = vc->rail->now;
    px_rail_heat(vc);
    /* a striped block takes up to one sequence number per subchannel */
    if (__builtin_expect(!px_list_empty(&vc->backlog) || px_rail_window_full(vc, PX_NET_MAX_SUB) ||
                             px_rail_cwnd_full(vc, px_net_iov_len(iov, iovcnt)), 0))
        return px_rail_enqueue(&vc->backlog, hdr, hdr_len, iov, iovcnt, flags, cb, arg);
    return px_rail_send_now(vc, hdr, hdr_len, iov, iovcnt, flags, cb, arg);
}

/* Queues a frame for later (window full, or too many stripe bytes in flight). */
static px_status_t px_rail_enqueue(px_list_t *q, const void *hdr, size_t hdr_len,
                                   const struct iovec *iov, int iovcnt, unsigned flags,
                                   px_net_send_cb_t cb, void *arg)
{
    size_t len = px_net_iov_len(iov, iovcnt);
    if (hdr_len > PX_NET_HDR_MAX)
        return PX_ERR_INVALID_PARAM;
    px_rail_backlog_t *b = calloc(1, sizeof(*b) + (size_t)(iovcnt ? iovcnt : 1) * sizeof(struct iovec));
    if (!b)
        return PX_ERR_NO_MEMORY;
    b->flags = flags;
    b->cb = cb;
    b->arg = arg;
    b->hdr_len = hdr_len;
    memcpy(b->hdr, hdr, hdr_len);
    if (!cb && len) { /* the caller keeps nothing for us: copy */
        b->copy = malloc(len);
        if (!b->copy) {
            free(b);
            return PX_ERR_NO_MEMORY;
        }
        px_net_iov_gather(b->copy, iov, iovcnt);
        b->iov[0].iov_base = b->copy;
        b->iov[0].iov_len = len;
        b->iovcnt = 1;
    } else {
        if (iovcnt)
            memcpy(b->iov, iov, (size_t)iovcnt * sizeof(*iov));
        b->iovcnt = iovcnt;
    }
    px_list_insert_tail(q, &b->link);
    return cb ? PX_INPROGRESS : PX_OK;
}

size_t px_rail_vc_pending(px_rail_vc_t *vc)
{
    size_t n = px_list_empty(&vc->backlog) && px_list_empty(&vc->deferred) ? 0 : 1;
    n += vc->resend_pending;
    for (int i = 0; i < vc->nsub; i++)
        if (vc->sub[i].state != PX_SUB_DOWN) /* a down one holds only probes */
            n += vc->rail->ops->ep_pending(vc->sub[i].ep);
    return n;
}

size_t px_rail_vc_eager_limit(px_rail_vc_t *vc) { return vc->rail->attr.eager_limit; }

uint32_t px_rail_vc_unacked(px_rail_vc_t *vc) { return vc->tx_seq - vc->tx_acked; }

void px_rail_vc_set_single(px_rail_vc_t *vc)
{
    vc->single = 1;
    vc->armed = 1; /* nothing connected in advance */
    /* the bound subchannel: by local rank over the rails, as PX_RAIL_BIND=scatter */
    int nrails = 0, want;
    for (int i = 0; i < vc->nsub; i++)
        if (vc->sub[i].info.rail + 1 > nrails)
            nrails = vc->sub[i].info.rail + 1;
    want = vc->rail->local_rank % (nrails ? nrails : 1);
    vc->bind_sub = px_rail_sub_on(vc, want);
}

int px_rail_vc_single(const px_rail_vc_t *vc) { return vc->single; }

void px_rail_vc_connect(px_rail_vc_t *vc)
{
    if (vc->failed)
        return;
    px_rail_connect_unused(vc, -1);
    vc->armed = 1;
    px_rail_heat(vc);
}

int px_rail_vc_ready(px_rail_vc_t *vc)
{
    int (*ready)(px_net_ep_t *) = vc->rail->ops->ep_ready;
    int n = 0, ok = 0, any = 0;
    if (vc->failed)
        return 0;
    for (int i = 0; i < vc->nsub; i++) {
        px_rail_sub_t *s = &vc->sub[i];
        if (!px_rail_usable(s))
            continue;
        int r = !ready || ready(s->ep);
        any |= r;
        if (vc->single && i != vc->bind_sub)
            continue;
        n++;
        ok += r;
    }
    return n && ok == n ? 2 : any;
}

int px_rail_vc_nsub(px_rail_vc_t *vc) { return vc->nsub; }

double px_rail_vc_weight(px_rail_vc_t *vc, int i)
{
    if (vc->rail->policy == PX_POL_BSS) {
        double sum = 0;
        for (int k = 0; k < vc->nsub; k++)
            sum += vc->sub[k].est_mbs;
        return sum > 0 ? vc->sub[i].est_mbs / sum : 0;
    }
    return vc->sub[i].weight;
}

const px_rail_sub_stats_t *px_rail_vc_stats(px_rail_vc_t *vc, int i) { return vc->sub[i].st; }

/* Sends stripe record x, whose subchannel failed, again in pieces over the
 * working subchannels by their current weights, so the failed subchannel's
 * share is re-split rather than loaded onto one survivor. Each piece is a
 * record of its own with a new seq that names x (PX_RAIL_H_SPLIT, oseq =
 * x's seq, the number of pieces in the header); x stays in the window with
 * its seq only, which the receiver counts as received once every piece is
 * in. A whole copy of x still on its way is cut off or dropped once a piece
 * has arrived; pieces of an x whose whole copy arrived first are skipped.
 * So every byte is delivered once whichever copies arrive. Returns 0
 * (nothing sent) when x is not worth cutting. */
static int px_rail_resplit(px_rail_vc_t *vc, px_rail_tx_t *x)
{
    px_rail_t *r = vc->rail;
    double share[PX_NET_MAX_SUB];
    size_t bytes[PX_NET_MAX_SUB];
    int order[PX_NET_MAX_SUB], n = 0;
    px_rail_tx_t *piece[PX_NET_MAX_SUB];

    if (!x->msg || (x->hflags & PX_RAIL_H_SPLIT) || r->lossy || x->len < 2 * PX_RAIL_RESPLIT_MIN ||
        px_rail_window_full(vc, PX_NET_MAX_SUB) || px_rail_split(vc, share) < 2)
        return 0;
    size_t unit = px_params.rail_stripe_unit ? px_params.rail_stripe_unit : 1;
    size_t left = x->len;
    int big = -1;
    for (int i = 0; i < vc->nsub; i++) {
        size_t b = (size_t)(share[i] * (double)x->len);
        b -= b % unit;
        bytes[i] = 0;
        if (vc->sub[i].state != PX_SUB_UP || b < PX_RAIL_RESPLIT_MIN)
            continue; /* too small a share: the others take it */
        bytes[i] = b < left ? b : left;
        left -= bytes[i];
        order[n++] = i;
        if (big < 0 || share[i] > share[big])
            big = i;
    }
    if (n < 2 || vc->split_open + (uint32_t)n > PX_RAIL_SPLIT_MAX)
        return 0;
    bytes[big] += left;
    for (int k = 0; k < n; k++)
        if (!(piece[k] = px_rail_tx_get(vc))) {
            while (--k >= 0)
                px_rail_tx_put(r, piece[k]);
            return 0;
        }
    px_rail_msg_t *m = x->msg;
    size_t off = 0;
    for (int k = 0; k < n; k++) {
        px_rail_tx_t *y = piece[k];
        size_t len = bytes[order[k]];
        y->msg = m;
        y->part = x->part;
        y->rel_ok = x->rel_ok;
        m->extra++;
        m->open++;
        m->users += !x->told;
        y->told = x->told;
        if ((y->inbuf = x->told && x->inbuf))
            r->rel_live++; /* a slice of x's copy */
        y->iovcnt = px_iov_slice(x->iov, x->iovcnt, off, len, y->iov, PX_RAIL_IOV);
        y->len = len;
        y->off = x->off + off;
        y->hflags = x->hflags | PX_RAIL_H_SPLIT;
        y->npieces = (uint8_t)n;
        y->uhl = x->uhl;
        memcpy(y->uh, x->uh, x->uhl);
        y->seq = vc->tx_seq++;
        y->oseq = x->seq;
        vc->tx[y->seq & (vc->tx_cap - 1)] = y;
        off += len;
    }
    vc->split_open += (uint32_t)n;
    /* x keeps only its seq and completes with the cumulative
     * acknowledgement; its bytes are the pieces' now */
    if (r->stage_x == x)
        r->stage_x = NULL;
    x->resend = 0;
    x->sub = -1;
    x->len = 0;
    x->iovcnt = 0;
    r->resplits++;
    r->resplit_pieces += (uint64_t)n;
    px_debug("rail", "stripe %u to rank %d again in %d pieces", x->seq, vc->rank, n);
    for (int k = 0; k < n && !vc->failed; k++) {
        if (vc->sub[order[k]].state == PX_SUB_DOWN) { /* it failed meanwhile */
            piece[k]->resend = 1;
            px_rail_resend_mark(vc);
            continue;
        }
        px_rail_xmit(vc, piece[k], order[k]);
    }
    return 1;
}

/* Sends again, on working subchannels, every record whose subchannel failed. */
static void px_rail_resend(px_rail_vc_t *vc)
{
    if (vc->failed)
        return;
    int any = 0;
    for (int i = 0; i < vc->nsub; i++)
        any |= vc->sub[i].state != PX_SUB_DOWN;
    if (!any)
        return; /* kept until a subchannel comes back */
    vc->resend_pending = 0;
    for (uint32_t q = vc->tx_acked; q != vc->tx_seq; q++) {
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (!x || x->seq != q || !x->resend || x->wire || x->acked)
            continue;
        int from = x->sub;
        size_t len = x->len;
        int si = -1;
        if (x->msg) {
            x->msg->resent = 1;
            si = px_rail_resplit(vc, x) ? -2 : px_rail_best(vc, PX_SUB_UP);
        } else {
            si = px_rail_pick(vc, 0);
        }
        if (si == -1)
            si = px_rail_best(vc, PX_SUB_SUSPECT);
        if (si == -1) {
            px_rail_resend_mark(vc);
            return;
        }
        if (from >= 0) {
            vc->sub[from].st->resent_frames++;
            vc->sub[from].st->resent_bytes += len;
        }
        if (si == -2) { /* sent in pieces */
            if (vc->failed)
                return;
            continue;
        }
        px_debug("rail", "frame %u (%zu bytes) to rank %d again, now on %s", x->seq, x->len,
                 vc->rank, vc->sub[si].info.label);
        px_rail_xmit(vc, x, si);
        if (vc->failed)
            return;
    }
    if (!px_list_empty(&vc->backlog))
        px_rail_backlog_flush(vc);
    if (!px_list_empty(&vc->deferred))
        px_rail_deferred_flush(vc);
}

/* Lossy transports: the retransmission timeout of subchannel s. */
static uint64_t px_rail_rto(px_rail_t *r, const px_rail_sub_t *s)
{
    uint64_t rto = s->srtt > 0 ? (uint64_t)(s->srtt + 4 * s->rttvar) : 3 * r->rto_min;
    uint64_t deep = (uint64_t)(1.25 * s->rtt_max);
    if (rto < deep)
        rto = deep;
    return rto < r->rto_min ? r->rto_min : rto;
}

/* Sends record x again (lost, or its acknowledgement was): on its own
 * subchannel while that works, else on the best other. */
static void px_rail_retransmit(px_rail_vc_t *vc, px_rail_tx_t *x)
{
    int si = x->sub;
    vc->fr_retx++;
    if (si < 0 || vc->sub[si].state != PX_SUB_UP) {
        si = px_rail_pick(vc, x->msg ? PX_RAIL_F_STRIPE : 0);
        if (si < 0)
            return; /* nothing works: the partition logic takes over */
    }
    if (x->sub >= 0 && vc->sub[x->sub].unacked)
        vc->sub[x->sub].unacked--;
    px_rail_xmit(vc, x, si);
}

/* Lossy transports: a loss halves the congestion window, once per `gap`
 * (a round trip: the losses of one window are one event). */
static void px_rail_cwnd_cut(px_rail_vc_t *vc, uint64_t now, uint64_t gap)
{
    px_rail_t *r = vc->rail;
    if (px_since(now, vc->last_cut) <= gap)
        return;
    vc->last_cut = now;
    vc->cwnd /= 2;
    if (vc->cwnd < 4 * r->frame_max)
        vc->cwnd = 4 * r->frame_max;
}

/* Lossy transports: frames unacknowledged past their timeout go again, with
 * the timeout doubled per try; a timeout halves the congestion window. Only
 * frames the acknowledgement bitmap can speak of (the cumulative point and
 * the PX_RAIL_SACK_SPAN after it): one further on may have arrived long ago
 * and wait for a hole below to be filled; it is looked at once the
 * cumulative point comes near it. */
static void px_rail_retransmit_due(px_rail_vc_t *vc, uint64_t now)
{
    px_rail_t *r = vc->rail;
    int cut = 0;
    uint32_t end = vc->tx_seq - vc->tx_acked > PX_RAIL_SACK_SPAN
                       ? vc->tx_acked + PX_RAIL_SACK_SPAN + 1
                       : vc->tx_seq;
    for (uint32_t q = vc->tx_acked; q != end && !vc->failed; q++) {
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (!x || x->seq != q || x->acked || x->wire || x->resend || x->sub < 0)
            continue;
        uint64_t rto = px_rail_rto(r, &vc->sub[x->sub]) << (x->tries < 6 ? x->tries : 6);
        if (rto > 1000000000ull)
            rto = 1000000000ull;
        if (px_since(now, x->t_sent) < rto)
            continue;
        if (x->tries < 255)
            x->tries++;
        r->retx_timeout++;
        cut = 1;
        px_debug("rail", "frame %u (%zu bytes) to rank %d: no acknowledgement after %.1f ms, "
                 "sending it again (try %d)", x->seq, x->len, vc->rank, (double)rto / 1e6, x->tries);
        px_rail_retransmit(vc, x);
    }
    if (cut)
        px_rail_cwnd_cut(vc, now, r->rto_min);
}

/* An acknowledgement with a bitmap: the frames it marks have arrived. Every
 * frame it shows missing goes again at once if a frame sent after it on the
 * same subchannel has arrived (a path keeps order: it is lost, not slower
 * than frames on other rails; and a frame sent again is not sent a third
 * time until a later one arrives). Losses are repaired from the bitmap, not
 * one per timeout, whatever their number in the window. */
static void px_rail_bitmap_in(px_rail_vc_t *vc, uint32_t ack, uint64_t bits)
{
    if (!bits)
        return;
    uint64_t now = px_time_ns();
    uint32_t top = 0; /* bits below this one were looked at */
    for (uint32_t k = 0; k < 64; k++) {
        if (!(bits >> k & 1))
            continue;
        uint32_t q = ack + 1 + k;
        if ((int32_t)(q - vc->tx_seq) >= 0)
            break;
        top = k + 1;
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (x && x->seq == q && !x->acked)
            px_rail_tx_acked(vc, x, now, 0);
    }
    for (uint32_t k = 0; k <= top; k++) {
        uint32_t q = ack + k; /* k = 0: the cumulative point, missing by definition */
        if (k && (bits >> (k - 1) & 1))
            continue;
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (!x || x->seq != q || x->acked || x->wire || x->resend || x->sub < 0)
            continue;
        const px_rail_sub_t *s = &vc->sub[x->sub];
        if ((int32_t)(s->acked_order - x->order) > 0) {
            vc->rail->retx_fast++;
            px_rail_retransmit(vc, x);
            px_rail_cwnd_cut(vc, now, (uint64_t)s->srtt);
        }
    }
    if (!px_list_empty(&vc->backlog))
        px_rail_backlog_flush(vc);
}

/* ---------- receiving ---------- */

static void px_rail_ack_in(px_rail_vc_t *vc, uint32_t ack)
{
    /* cumulative: only ever moves forward, never past what was sent */
    if ((int32_t)(ack - vc->tx_acked) <= 0 || (int32_t)(ack - vc->tx_seq) > 0)
        return;
    /* frames that are timed (stripes, round-trip samples) get a fresh
     * clock; the others make do with the progress pass's */
    uint64_t fresh = 0;
    int lossy = vc->rail->lossy;
    for (uint32_t s = vc->tx_acked; s != ack; s++) {
        px_rail_tx_t *x = vc->tx[s & (vc->tx_cap - 1)];
        if (x && x->seq == s) {
            if (!(x->hflags & PX_RAIL_H_SACK) && !lossy) {
                px_rail_tx_acked(vc, x, vc->rail->now, 0);
                continue;
            }
            if (!fresh)
                fresh = px_time_ns();
            px_rail_tx_acked(vc, x, fresh, 0);
        }
    }
    vc->tx_acked = ack;
    if (!px_list_empty(&vc->backlog))
        px_rail_backlog_flush(vc);
    if (!px_list_empty(&vc->deferred))
        px_rail_deferred_flush(vc);
}

/* Hands up every held ordered frame whose turn has come. */
static void px_rail_flush_held(px_rail_vc_t *vc)
{
    const px_rail_rx_ops_t *up = vc->rail->up;
    while (vc->held && vc->held->oseq == vc->rx_onext) {
        px_rail_held_t *h = vc->held;
        void *ctx = NULL;
        vc->held = h->next;
        vc->rx_onext++;
        void *dst = up->rx_begin(vc->owner, h->hdr, h->hdr_len, 0, h->len, &ctx);
        if (dst && h->len)
            memcpy(dst, h->data, h->len);
        up->rx_done(vc->owner, ctx, h->len);
        free(h);
    }
}

static inline int px_rail_rx_has(px_rail_vc_t *vc, uint32_t seq)
{
    uint32_t d = seq - vc->rx_next;
    if ((int32_t)d < 0)
        return 1;
    if (d >= PX_RAIL_WIN)
        return 0;
    return (vc->rx_bits[(seq % PX_RAIL_WIN) / 64] >> (seq % 64)) & 1;
}

/* Frame seq has arrived whole. */
static void px_rail_rx_mark(px_rail_vc_t *vc, uint32_t seq)
{
    vc->rx_bits[(seq % PX_RAIL_WIN) / 64] |= 1ull << (seq % 64);
    while (vc->rx_bits[(vc->rx_next % PX_RAIL_WIN) / 64] & (1ull << (vc->rx_next % 64))) {
        vc->rx_bits[(vc->rx_next % PX_RAIL_WIN) / 64] &= ~(1ull << (vc->rx_next % 64));
        vc->rx_next++;
    }
    vc->rx_unacked++;
}

static px_rail_rx_split_t *px_rail_split_find(px_rail_vc_t *vc, uint32_t orig)
{
    for (int i = 0; i < PX_RAIL_SPLIT_MAX; i++)
        if (vc->rx_split[i].used && vc->rx_split[i].orig == orig)
            return &vc->rx_split[i];
    return NULL;
}

/* A piece of stripe h->oseq, sent again after a failure, arrives on s.
 * Returns 1 when it is not delivered: the stripe's whole copy arrived first
 * (the piece is skipped, its own seq still counts as received), or the
 * piece is malformed. Otherwise a whole copy still arriving elsewhere is cut
 * off and the piece is delivered at its offset. */
static int px_rail_rx_piece(px_rail_vc_t *vc, px_rail_sub_t *s, const px_rail_hdr_t *h)
{
    px_rail_t *r = vc->rail;
    uint32_t orig = h->oseq;
    int total = h->sub >> 8;
    if (!(h->flags & PX_RAIL_H_UNORD) || (int32_t)(h->seq - orig) <= 0 ||
        h->seq - orig >= PX_RAIL_WIN || total < 2 || total > PX_NET_MAX_SUB) {
        px_warn("rail", "malformed piece %u of stripe %u from rank %d dropped", h->seq, orig,
                vc->rank);
        return 1;
    }
    px_rail_rx_split_t *e = px_rail_split_find(vc, orig);
    if (!e) {
        if (px_rail_rx_has(vc, orig)) {
            r->rx_split_skipped++;
            s->rx_state = PX_RX_SKIP;
            s->rx_seq = h->seq;
            s->rx_len = 0;
            s->rx_sack = h->flags & (PX_RAIL_H_SACK | PX_RAIL_H_TIMED);
            s->rx_t0 = r->now;
            return 1;
        }
        for (int i = 0; i < PX_RAIL_SPLIT_MAX && !e; i++)
            if (!vc->rx_split[i].used)
                e = &vc->rx_split[i];
        if (!e) { /* the sender keeps fewer open: a broken peer */
            px_warn("rail", "too many stripes in pieces from rank %d; piece %u dropped", vc->rank,
                    h->seq);
            return 1;
        }
        *e = (px_rail_rx_split_t){.orig = orig, .used = 1, .total = (uint8_t)total};
        vc->nsplit++;
        for (int i = 0; i < vc->nsub; i++) {
            px_rail_sub_t *o = &vc->sub[i];
            if (o != s && o->rx_state != PX_RX_DROP && o->rx_seq == orig && !o->rx_piece) {
                r->ops->ep_rx_cancel(o->ep);
                o->rx_state = PX_RX_DROP;
            }
        }
    }
    return 0;
}

/* A piece has arrived whole: with the last one the stripe itself has. */
static void px_rail_rx_piece_done(px_rail_vc_t *vc, uint32_t orig)
{
    px_rail_rx_split_t *e = px_rail_split_find(vc, orig);
    if (e && ++e->got >= e->total) {
        e->used = 0;
        vc->nsplit--;
        px_rail_rx_mark(vc, orig);
    }
}

static void *px_rail_rx_begin(void *owner, const void *hdr, size_t hdr_len, size_t payload_len,
                              void **ctx_p)
{
    px_rail_sub_t *s = owner;
    px_rail_vc_t *vc = s->vc;
    px_rail_t *r = vc->rail;
    px_rail_hdr_t h;
    (void)ctx_p;

    s->rx_state = PX_RX_DROP;
    if (hdr_len < sizeof(h)) {
        px_error("rail", "short frame header (%zu bytes) from rank %d", hdr_len, vc->rank);
        return NULL;
    }
    memcpy(&h, hdr, sizeof(h));
    vc->last_rx = r->now;
    px_rail_heat(vc);
    if (s->state == PX_SUB_DOWN && r->ft)
        px_rail_sub_up(s); /* a frame on a fresh connection: it works again */
    /* the cumulative part first: it usually covers a stripe acknowledged
     * selectively too, which is then timed by the sender's clock alone (the
     * receiver's header-to-last-byte time says little about a small stripe
     * it read in one go) */
    px_rail_ack_in(vc, h.ack);
    switch (h.type) {
    case PX_RAIL_DATA:
        break;
    case PX_RAIL_ACK:
        s->st->acks_rx++;
        if (h.flags & PX_RAIL_H_BITMAP)
            px_rail_bitmap_in(vc, h.ack, h.off);
        if (h.flags & PX_RAIL_H_SACK) {
            px_rail_tx_t *x = vc->tx[h.seq & (vc->tx_cap - 1)];
            if (x && x->seq == h.seq)
                px_rail_tx_acked(vc, x, px_time_ns(), h.off);
            if (!px_list_empty(&vc->deferred))
                px_rail_deferred_flush(vc);
        }
        return NULL;
    case PX_RAIL_PING:
        px_rail_send_ctl(vc, s->idx, PX_RAIL_PONG, 0, 0, 0);
        return NULL;
    case PX_RAIL_PONG:
        return NULL;
    case PX_RAIL_DONE:
        vc->peer_done = 1;
        return NULL;
    case PX_RAIL_SUBDOWN:
        /* not when it has just come back: the notice may predate that */
        if (r->ft && h.seq < (uint32_t)vc->nsub && vc->sub[h.seq].state != PX_SUB_DOWN &&
            px_since(r->now, vc->sub[h.seq].up_since) >
                (uint64_t)(2e9 * px_params.rail_detect)) {
            px_rail_sub_t *d = &vc->sub[h.seq];
            px_info("rail", "rank %d reports subchannel %s dead", vc->rank, d->info.label);
            px_rail_sub_down(d, PX_ERR_LINK_DOWN);
        }
        return NULL;
    default:
        px_warn("rail", "dropping frame of unknown type %u from rank %d", h.type, vc->rank);
        return NULL;
    }
    uint32_t d = h.seq - vc->rx_next;
    if ((int32_t)d >= PX_RAIL_WIN) {
        r->rx_out_of_window++;
        px_debug("rail", "dropping frame seq %u from rank %d, expected %u..%u", h.seq, vc->rank,
                 vc->rx_next, vc->rx_next + PX_RAIL_WIN - 1);
        return NULL;
    }
    if (px_rail_rx_has(vc, h.seq)) {
        r->rx_dup++;
        /* a copy sent again after a failure: the first one made it, so our
         * acknowledgement may not have */
        px_debug("rail", "duplicate frame %u from rank %d dropped", h.seq, vc->rank);
        px_rail_send_ack(vc, (h.flags & PX_RAIL_H_SACK) != 0, h.seq, 0, s->idx);
        return NULL;
    }
    s->rx_piece = 0;
    if (__builtin_expect(vc->nsplit, 0) && !(h.flags & PX_RAIL_H_SPLIT) &&
        px_rail_split_find(vc, h.seq)) {
        /* a late whole copy of a stripe that is arriving in pieces */
        r->rx_dup++;
        return NULL;
    }
    if (__builtin_expect(h.flags & PX_RAIL_H_SPLIT, 0)) {
        if (px_rail_rx_piece(vc, s, &h))
            return NULL;
        s->rx_piece = 1;
        s->rx_porig = h.oseq;
    }
    const char *uh = (const char *)hdr + sizeof(h);
    size_t uhl = hdr_len - sizeof(h);
    s->st->frames_rx++;
    s->st->bytes_rx += payload_len;
    s->rx_seq = h.seq;
    s->rx_len = payload_len;
    s->rx_sack = h.flags & (PX_RAIL_H_SACK | PX_RAIL_H_TIMED);
    if (s->rx_sack)
        s->rx_t0 = r->now;
    s->rx_ordered = !(h.flags & PX_RAIL_H_UNORD);
    s->rx_ctx = NULL;
    s->rx_dst = NULL;
    if (__builtin_expect(r->ft, 1)) {
        /* the same frame still arriving on another subchannel (it was sent
         * again when that one looked dead): this copy takes over */
        for (int i = 0; i < vc->nsub; i++) {
            px_rail_sub_t *o = &vc->sub[i];
            if (o == s || o->rx_state == PX_RX_DROP || o->rx_seq != h.seq)
                continue;
            r->ops->ep_rx_cancel(o->ep);
            s->rx_state = o->rx_state;
            s->rx_ctx = o->rx_ctx;
            s->rx_dst = o->rx_dst;
            s->rx_held = o->rx_held;
            o->rx_held = NULL;
            o->rx_state = PX_RX_DROP;
            if (s->rx_state == PX_RX_HOLD)
                return s->rx_held->data;
            if (s->rx_ordered)
                return s->rx_dst;
            s->rx_state = PX_RX_DROP;
        }
        if (vc->norphan && s->rx_ordered)
            for (int i = 0; i < PX_NET_MAX_SUB; i++)
                if (vc->orphan[i].used && vc->orphan[i].seq == h.seq) {
                    vc->orphan[i].used = 0;
                    vc->norphan--;
                    s->rx_state = PX_RX_DELIVER;
                    s->rx_ctx = vc->orphan[i].ctx;
                    s->rx_dst = vc->orphan[i].dst;
                    return s->rx_dst;
                }
    }
    if (s->rx_ordered && h.oseq != vc->rx_onext) {
        if ((int32_t)(h.oseq - vc->rx_onext) < 0 || uhl > PX_NET_HDR_MAX) {
            px_warn("rail", "stale ordered frame %u from rank %d dropped", h.oseq, vc->rank);
            return NULL;
        }
        /* early: keep it until the frames before it have been handed up */
        px_rail_held_t *hd = malloc(sizeof(*hd) + payload_len);
        if (!hd) {
            px_error("rail", "out of memory holding a frame from rank %d", vc->rank);
            return NULL;
        }
        hd->oseq = h.oseq;
        hd->hdr_len = uhl;
        hd->len = payload_len;
        memcpy(hd->hdr, uh, uhl);
        s->rx_held = hd;
        s->rx_state = PX_RX_HOLD;
        return hd->data;
    }
    if (s->rx_ordered)
        vc->rx_onext++;
    s->rx_state = PX_RX_DELIVER;
    s->rx_dst = r->up->rx_begin(vc->owner, uh, uhl, h.off, payload_len, &s->rx_ctx);
    return s->rx_dst;
}

static void px_rail_rx_done(void *owner, void *ctx)
{
    px_rail_sub_t *s = owner;
    px_rail_vc_t *vc = s->vc;
    (void)ctx;

    switch (s->rx_state) {
    case PX_RX_DROP:
        return;
    case PX_RX_HOLD: {
        px_rail_held_t *hd = s->rx_held, **pp = &vc->held;
        s->rx_held = NULL;
        while (*pp && (int32_t)((*pp)->oseq - hd->oseq) < 0)
            pp = &(*pp)->next;
        hd->next = *pp;
        *pp = hd;
        break;
    }
    case PX_RX_SKIP:
        break;
    default:
        vc->rail->up->rx_done(vc->owner, s->rx_ctx, s->rx_len);
        break;
    }
    s->rx_state = PX_RX_DROP;
    px_rail_rx_mark(vc, s->rx_seq);
    if (__builtin_expect(s->rx_piece, 0)) {
        s->rx_piece = 0;
        px_rail_rx_piece_done(vc, s->rx_porig);
    }
    if (vc->rail->lossy && (int32_t)(s->rx_seq - vc->rx_next) > 0 && !vc->gap_ack) {
        /* a frame before this one is missing: say so in this pass */
        px_rail_t *r = vc->rail;
        vc->gap_ack = 1;
        if (!vc->ack_due) {
            vc->ack_due = 1;
            r->due[r->ndue++] = vc;
        }
    }
    if (s->rx_sack & PX_RAIL_H_TIMED) { /* at once: it times the stripe */
        px_rail_send_ack(vc, 1, s->rx_seq, px_time_ns() - s->rx_t0, s->idx);
    } else if (s->rx_sack) {
        /* the sender waits for it: one acknowledgement for everything that
         * arrives in this progress pass */
        px_rail_t *r = vc->rail;
        if (vc->nsack_due < 8)
            vc->sack_due[vc->nsack_due++] = s->rx_seq;
        else
            px_rail_send_ack(vc, 1, s->rx_seq, 0, s->idx);
        if (!vc->ack_due) {
            vc->ack_due = 1;
            r->due[r->ndue++] = vc;
        }
    }
    if (vc->held)
        px_rail_flush_held(vc);
    if (vc->rx_unacked >= (uint32_t)px_params.rail_ack_every)
        px_rail_send_ack(vc, 0, 0, 0, s->idx);
}

static void px_rail_ep_failed(void *owner, px_status_t why)
{
    px_rail_sub_t *s = owner;
    if (s->state == PX_SUB_DOWN && s->vc->rail->ft) {
        /* a probe that did not get through */
        px_debug("rail", "probe of %s to rank %d failed: %s", s->info.label, s->vc->rank,
                 px_status_string(why));
        return;
    }
    px_rail_sub_down(s, why);
}

/* ---------- timers: acknowledgements, suspicion, heartbeats, probes, partitions ---------- */

/* Lossy transports: the transport's path check (answered by the peer's
 * kernel), started only when `start`, followed up while under way. */
static int px_rail_path_check(px_rail_sub_t *s, uint64_t timeout, int start)
{
    const px_net_ops_t *ops = s->vc->rail->ops;
    if (!ops->ep_path_check || (!s->path_checking && !start))
        return 0;
    int p = ops->ep_path_check(s->ep, timeout);
    s->path_checking = p == 0;
    return p;
}

/* Nothing for the fine-grained timers: everything sent acknowledged,
 * everything received acknowledged, nothing queued or to send again,
 * every subchannel up and clear. Heartbeats and probes run anyway, at the
 * sweep. */
static int px_rail_vc_idle(const px_rail_vc_t *vc)
{
    if (vc->rx_unacked || vc->tx_acked != vc->tx_seq || vc->resend_pending || vc->part_since ||
        !px_list_empty(&vc->backlog) || !px_list_empty(&vc->deferred))
        return 0;
    for (int i = 0; i < vc->nsub; i++)
        if (vc->sub[i].state != PX_SUB_UP || vc->sub[i].unacked)
            return 0;
    return 1;
}

static void px_rail_vc_tick(px_rail_vc_t *vc, uint64_t now)
{
    px_rail_t *r = vc->rail;
    if (vc->rx_unacked && px_since(now, vc->last_ack_tx) >= PX_RAIL_ACK_DELAY_NS)
        px_rail_send_ack(vc, 0, 0, 0, -1);
    if (!r->ft)
        return;
    if (r->lossy && vc->tx_acked != vc->tx_seq)
        px_rail_retransmit_due(vc, now);
    uint64_t detect = (uint64_t)(px_params.rail_detect * 1e9);
    uint64_t hb = detect / 3;
    int active = px_since(now, vc->last_activity) < 5000000000ull;
    for (int i = 0; i < vc->nsub && !vc->failed; i++) {
        px_rail_sub_t *s = &vc->sub[i];
        if (s->state == PX_SUB_DOWN) {
            /* datagrams: the path answers again (its peer may be too busy
             * to answer a ping): in use again, the frames it owes go again */
            if (s->down_silent && px_rail_path_check(s, detect, now >= s->next_probe) > 0) {
                px_rail_sub_up(s);
                s->path_ok_ns = now;
                continue;
            }
            if (now < s->next_probe)
                continue;
            /* a fresh connection and a ping; the answer brings it back */
            r->ops->ep_reset(s->ep);
            px_rail_send_ctl(vc, i, PX_RAIL_PING, 0, 0, 0);
            s->probe_gap *= 2;
            if (s->probe_gap > px_params.rail_probe_max)
                s->probe_gap = px_params.rail_probe_max;
            s->next_probe = now + (uint64_t)(s->probe_gap * 1e9);
            continue;
        }
        /* acknowledgements overdue while the peer acknowledges what the
         * other subchannels carry: suspect (new traffic avoids it). A peer
         * that acknowledges nothing is just busy; only the transport's own
         * timeout (TCP_USER_TIMEOUT) or an error makes a subchannel DOWN. */
        uint64_t rto = (uint64_t)(s->srtt + 4 * s->rttvar);
        if (rto < detect / 4)
            rto = detect / 4;
        if (rto > detect)
            rto = detect;
        if (s->unacked && px_since(now, s->busy_since) > rto &&
            vc->last_ack_rx > s->busy_since + rto / 2) {
            if (s->state == PX_SUB_UP && vc->nsub > 1) {
                px_info("rail", "subchannel %s to rank %d suspect: %u frame(s) unacknowledged "
                        "for %.0f ms", s->info.label, vc->rank, s->unacked,
                        (double)px_since(now, s->busy_since) / 1e6);
                px_rail_set_state(s, PX_SUB_SUSPECT);
                s->st->suspects++;
                px_rail_send_ctl(vc, i, PX_RAIL_PING, 0, 0, 0);
            }
        } else if (s->state == PX_SUB_SUSPECT) {
            px_rail_set_state(s, PX_SUB_UP);
        }
        /* datagrams have no transport timeout (TCP_USER_TIMEOUT): when the
         * peer has said nothing for PX_RAIL_DETECT while frames wait for its
         * acknowledgement (or heartbeats for an answer), ask its kernel
         * whether the path works. If it does the peer is only busy; if not,
         * the subchannel is down (and with every one down,
         * PX_PARTITION_TIMEOUT runs). A path that dies while the peer talks
         * on the others is caught as suspect, below. */
        if (r->lossy) {
            int silent = px_since(now, vc->last_rx) > detect &&
                         ((s->unacked && px_since(now, s->busy_since) > detect) ||
                          (s->used && active && px_since(now, vc->last_rx) > detect + hb));
            int p = px_rail_path_check(s, detect, silent && px_since(now, s->path_ok_ns) > detect);
            if (p > 0) {
                s->path_ok_ns = now;
            } else if (p < 0) {
                px_rail_sub_down(s, PX_ERR_TIMEOUT);
                s->down_silent = 1;
                continue;
            }
        }
        /* still nothing after PX_RAIL_DETECT while the peer keeps
         * acknowledging the others: the path is dead even if the transport
         * has not noticed yet (its retransmission timer may be long) */
        if (s->state == PX_SUB_SUSPECT && px_since(now, s->busy_since) > detect &&
            vc->last_ack_rx > s->busy_since + detect / 2) {
            px_rail_sub_down(s, PX_ERR_TIMEOUT);
            continue;
        }
        /* heartbeat: an idle connection also has something the transport
         * must get acknowledged, so a dead link shows before it is needed */
        if (s->state != PX_SUB_DOWN && s->used && active && px_since(now, s->last_tx_ns) > hb)
            px_rail_send_ctl(vc, i, PX_RAIL_PING, 0, 0, 0);
    }
    if (vc->failed)
        return;
    if (vc->part_since &&
        px_since(now, vc->part_since) > (uint64_t)(px_params.partition_timeout * 1e9)) {
        char rails[256];
        size_t o = 0;
        rails[0] = 0;
        for (int i = 0; i < vc->nsub && o < sizeof(rails) - 1; i++)
            o += (size_t)snprintf(rails + o, sizeof(rails) - o, "%s%s", i ? ", " : "",
                                  vc->sub[i].info.label);
        px_error("rail", "rank %d unreachable: every subchannel (%s) down for %.1f s "
                 "(PX_PARTITION_TIMEOUT=%g)", vc->rank, rails,
                 (double)(now - vc->part_since) / 1e9, px_params.partition_timeout);
        r->partition_ns += now - vc->part_since;
        vc->part_since = 0;
        px_rail_vc_fail(vc, PX_ERR_PEER_UNREACHABLE);
        return;
    }
    if (vc->resend_pending)
        px_rail_resend(vc);
}

/* The acknowledgements asked for during this progress pass: a cumulative one,
 * and selective ones for what it does not cover. */
static void px_rail_acks_due(px_rail_t *r)
{
    for (int i = 0; i < r->ndue; i++) {
        px_rail_vc_t *vc = r->due[i];
        vc->ack_due = 0;
        if (vc->failed) {
            vc->nsack_due = 0;
            continue;
        }
        int covered = 1;
        for (int k = 0; k < vc->nsack_due; k++)
            covered &= (int32_t)(vc->sack_due[k] - vc->rx_next) < 0;
        if (vc->gap_ack || (covered && vc->rail->lossy)) {
            px_rail_send_ack(vc, 0, 0, 0, -1); /* the bitmap covers the selective ones */
        } else if (covered) {
            px_rail_send_ack(vc, 0, 0, 0, -1);
        } else {
            for (int k = 0; k < vc->nsack_due; k++)
                px_rail_send_ack(vc, 1, vc->sack_due[k], 0, -1);
        }
        vc->nsack_due = 0;
    }
    r->ndue = 0;
}

/* ---------- completion before the acknowledgement (PX_RAIL_RELEASE) ---------- */

#define PX_RAIL_REL_ALIGN(n) (((n) + 63) & ~(size_t)63)
#define PX_RAIL_REL_BATCH 64 /* callers told per call; the rest on the next pass */

/* x is written, not acknowledged, and its caller still waits for it. */
static inline int px_rail_releasable(const px_rail_tx_t *x)
{
    return !x->acked && !x->wire && !x->resend && px_rail_caller_held(x);
}

/* Copies bytes [x->staged, x->staged + len) of x's payload to its area. */
static void px_rail_stage_copy(px_rail_tx_t *x, size_t len)
{
    struct iovec v[PX_RAIL_IOV];
    int n = px_iov_slice(x->iov, x->iovcnt, x->staged, len, v, PX_RAIL_IOV);
    px_net_iov_gather(x->area + x->staged, v, n);
    x->staged += len;
}

/* A place in the release buffer for x's payload (0), or -1. */
static int px_rail_area(px_rail_t *r, px_rail_tx_t *x)
{
    if (x->area)
        return 0; /* a slice of a prestaged payload (px_rail_pre_attach) */
    size_t a = PX_RAIL_REL_ALIGN(x->len);
    if (a > r->rel_cap - r->rel_used)
        return -1;
    if (!r->rel_buf && !(r->rel_buf = malloc(r->rel_cap))) {
        r->release = 0; /* wait for acknowledgements from now on */
        return -1;
    }
    x->area = r->rel_buf + r->rel_used;
    x->staged = 0;
    x->inbuf = 1;
    r->rel_used += a;
    r->rel_live++;
    return 0;
}

/* A frame the transport could not write at once: while the sender waits
 * for the socket, the progress passes copy it (a slice each), so that
 * little is left to copy once it is written. One frame at a time. */
static void px_rail_stage_start(px_rail_t *r, px_rail_tx_t *x)
{
    if (px_rail_caller_held(x) && px_rail_area(r, x) == 0)
        r->stage_x = x;
}

#define PX_RAIL_STAGE_STEP (64 * 1024)

static void px_rail_stage(px_rail_t *r)
{
    px_rail_tx_t *x = r->stage_x;
    size_t k = x->len - x->staged;
    px_rail_stage_copy(x, k < PX_RAIL_STAGE_STEP ? k : PX_RAIL_STAGE_STEP);
    if (x->staged == x->len)
        r->stage_x = NULL;
}

/* A rendezvous send's sender waits for the clear-to-send, its links quiet:
 * with fault tolerance, the payload its frames will copy once written
 * (px_rail_release) is copied meanwhile, a slice per progress pass, into a
 * place the release buffer keeps for it. Frames made from that buffer
 * (px_rail_pre_attach) take their slice of the copy and the bytes already
 * in it; px_rail_prestage_end gives the place back. One payload per rail.
 * 2 emulated nodes, 1 MB broadcasts with the receiver 200 us late
 * (bench/loops/coll_rank_time): the root's call takes 450-465 us against
 * 552-577 (Open MPI 426-473); 4 MB: 1,198-1,271 against 1,399-1,437. In
 * osu_bcast, where the root waits 25-35 us, it comes out even. */
void px_rail_prestage(px_rail_vc_t *vc, const void *buf, size_t len)
{
    px_rail_t *r = vc->rail;
    size_t a = PX_RAIL_REL_ALIGN(len);
    if (!r->ft || !r->release || r->pre.vc || !len || vc->failed || a > r->rel_cap - r->rel_used)
        return;
    if (!r->rel_buf && !(r->rel_buf = malloc(r->rel_cap)))
        return;
    r->pre.vc = vc;
    r->pre.src = buf;
    r->pre.len = len;
    r->pre.staged = 0;
    r->pre.area = r->rel_buf + r->rel_used;
    r->rel_used += a;
    r->rel_live++;
}

void px_rail_prestage_end(px_rail_vc_t *vc, const void *buf)
{
    px_rail_t *r = vc->rail;
    if (r->pre.vc != vc || r->pre.src != buf)
        return;
    r->prestaged_bytes += r->pre.staged;
    r->pre.vc = NULL;
    r->pre.len = r->pre.staged = 0;
    if (--r->rel_live == 0)
        r->rel_used = 0;
}

uint64_t px_rail_prestaged_bytes(const px_rail_t *r) { return r->prestaged_bytes; }

static void px_rail_prestage_step(px_rail_t *r)
{
    if (r->pre.vc->failed) { /* no clear-to-send will come */
        px_rail_prestage_end(r->pre.vc, r->pre.src);
        return;
    }
    size_t k = r->pre.len - r->pre.staged;
    if (k > PX_RAIL_STAGE_STEP)
        k = PX_RAIL_STAGE_STEP;
    memcpy(r->pre.area + r->pre.staged, r->pre.src + r->pre.staged, k);
    r->pre.staged += k;
}

/* x (one piece of the caller's buffer) lies in the prestaged payload: its
 * copy goes to its slice of the place kept, from where the copy stands. */
static void px_rail_pre_attach(px_rail_t *r, px_rail_tx_t *x)
{
    const char *b = x->iovcnt == 1 ? x->iov[0].iov_base : NULL;
    if (!b || x->area || b < r->pre.src || x->len > r->pre.len ||
        (size_t)(b - r->pre.src) > r->pre.len - x->len)
        return;
    size_t off = (size_t)(b - r->pre.src);
    x->area = r->pre.area + off;
    x->staged = r->pre.staged <= off ? 0 : r->pre.staged - off < x->len ? r->pre.staged - off : x->len;
    x->inbuf = 1;
    r->rel_live++;
}

/* Once a transport has written everything vc had for it (a connection's
 * kernel now carries the bytes), the senders of the frames still waiting
 * for their acknowledgement are told they are done, as a socket write
 * completes a send in other MPI libraries: a broadcast's root or a
 * sender of large messages goes on a round trip and a queue's drain
 * earlier. With fault tolerance the frames stay until acknowledged, with
 * their payload copied out of the caller's buffer, which is the caller's
 * again; if that copy does not fit, the senders wait as before and the
 * release is tried again as acknowledgements free room. Never inside a
 * send call: the progress pass runs it. */
static void px_rail_release(px_rail_vc_t *vc)
{
    px_rail_t *r = vc->rail;
    size_t need = 0;
    int n = 0;
    vc->rel_wait = 0;
    if (vc->failed || vc->on_wire || vc->resend_pending || !px_list_empty(&vc->backlog) ||
        !px_list_empty(&vc->deferred))
        return; /* the last write's callback marks it again */
    for (uint32_t q = vc->tx_acked; q != vc->tx_seq; q++) {
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (x && x->seq == q && px_rail_releasable(x)) {
            if (!x->area)
                need += PX_RAIL_REL_ALIGN(x->len);
            n++;
        }
    }
    if (!n)
        return;
    if (r->ft && need > r->rel_cap - r->rel_used) {
        vc->rel_wait = 1;
        return;
    }
    struct {
        px_net_send_cb_t cb;
        void *arg;
        px_status_t st;
    } told[PX_RAIL_REL_BATCH];
    int k = 0;
    for (uint32_t q = vc->tx_acked; q != vc->tx_seq && k < PX_RAIL_REL_BATCH; q++) {
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (!x || x->seq != q || !px_rail_releasable(x))
            continue;
        if (r->ft) {
            if (!x->area && px_rail_area(r, x) < 0)
                break; /* cannot happen: the room was counted */
            if (r->stage_x == x)
                r->stage_x = NULL;
            px_rail_stage_copy(x, x->len - x->staged);
            x->iov[0].iov_base = x->area;
            x->iov[0].iov_len = x->len;
            x->iovcnt = 1;
        }
        x->told = 1;
        r->released++;
        r->released_bytes += x->len;
        if (x->msg) {
            px_rail_msg_t *m = x->msg;
            if (--m->users == 0) { /* every part told: the caller is done */
                told[k].cb = m->cb;
                told[k].arg = m->arg;
                told[k++].st = m->st;
            }
        } else {
            told[k].cb = x->cb;
            told[k].arg = x->arg;
            told[k++].st = PX_OK;
            x->cb = NULL;
        }
    }
    if (k == PX_RAIL_REL_BATCH)
        px_rail_release_mark(vc);
    /* callers may send again from their callbacks: only after the walk */
    for (int i = 0; i < k; i++)
        told[i].cb(told[i].arg, told[i].st);
}

static void px_rail_release_due(px_rail_t *r)
{
    r->rel_any = 0;
    for (int i = 0; i < r->nhot; i++) {
        px_rail_vc_t *vc = r->hot[i];
        if (vc->rel_due) {
            vc->rel_due = 0;
            px_rail_release(vc);
        }
    }
}

int px_rail_progress(px_rail_t *r) { return px_rail_progress_ready(r, 1); }

int px_rail_progress_ready(px_rail_t *r, int readable)
{
    r->now = px_time_ns();
    int n = 0;
    if (readable || !r->ops->iface_quiet || !r->ops->iface_quiet(r->iface)) {
        n = r->ops->iface_progress(r->iface);
        if (n)
            r->now = px_time_ns();
    }
    if (r->ndue)
        px_rail_acks_due(r);
    if (r->rel_any)
        px_rail_release_due(r);
    else if (r->stage_x)
        px_rail_stage(r);
    else if (r->pre.staged < r->pre.len)
        px_rail_prestage_step(r);
    if (r->now >= r->next_tick) {
        r->next_tick = r->now + PX_RAIL_TICK_NS;
        if (r->now >= r->next_sweep) {
            /* every channel; the busy ones stay hot */
            r->next_sweep = r->now + PX_RAIL_SWEEP_NS;
            for (int i = 0; i < r->nvc; i++)
                if (!r->vlist[i]->failed)
                    px_rail_vc_tick(r->vlist[i], r->now);
            r->nhot = 0;
            for (int i = 0; i < r->nvc; i++) {
                px_rail_vc_t *vc = r->vlist[i];
                vc->hot = 0;
                if (!vc->failed && !px_rail_vc_idle(vc))
                    px_rail_heat(vc);
            }
        } else {
            for (int i = 0; i < r->nhot;) {
                px_rail_vc_t *vc = r->hot[i];
                if (!vc->failed)
                    px_rail_vc_tick(vc, r->now);
                if (vc->failed || px_rail_vc_idle(vc)) {
                    vc->hot = 0;
                    r->hot[i] = r->hot[--r->nhot];
                } else {
                    i++;
                }
            }
        }
    } else if (r->ft && r->resend_any) {
        r->resend_any = 0;
        for (int i = 0; i < r->nhot; i++)
            if (r->hot[i]->resend_pending)
                px_rail_resend(r->hot[i]);
    }
    return n;
}

void px_rail_ack_all(px_rail_t *r)
{
    r->now = px_time_ns();
    for (int i = 0; i < r->nvc; i++)
        if (r->vlist[i]->rx_unacked && !r->vlist[i]->failed)
            px_rail_send_ack(r->vlist[i], 0, 0, 0, -1);
}

int px_rail_fd(px_rail_t *r) { return r->ops->iface_fd(r->iface); }

int px_rail_lossy(px_rail_t *r) { return r->lossy; }

const char *px_rail_net_name(px_rail_t *r) { return r->ops->name; }

size_t px_rail_vc_chunk(px_rail_vc_t *vc, size_t chunk)
{
    if (__builtin_expect(!vc->small_frames, 1))
        return chunk;
    size_t one = 0;
    for (int i = 0; i < vc->nsub; i++) {
        size_t f = vc->sub[i].info.frame_one;
        if (f > PX_NET_HDR_MAX && px_rail_usable(&vc->sub[i]) && (!one || f - PX_NET_HDR_MAX < one))
            one = f - PX_NET_HDR_MAX;
    }
    return one && one < chunk ? one : chunk;
}

size_t px_rail_eager_limit(px_rail_t *rail) { return rail->attr.eager_limit; }

const px_net_sub_info_t *px_rail_vc_path(px_rail_vc_t *vc)
{
    for (int i = 0; i < vc->nsub; i++)
        if (px_rail_usable(&vc->sub[i]))
            return &vc->sub[i].info;
    return NULL;
}

size_t px_rail_max_frame(px_rail_t *rail) { return rail->frame_max; }

int px_rail_vc_used(const px_rail_vc_t *vc)
{
    return !vc->failed && (vc->tx_seq || vc->rx_next);
}

void px_rail_send_done(px_rail_t *r)
{
    r->now = px_time_ns();
    for (int i = 0; i < r->nvc; i++) {
        px_rail_vc_t *vc = r->vlist[i];
        if (!px_rail_vc_used(vc))
            continue;
        int si = px_rail_best(vc, PX_SUB_SUSPECT);
        if (si >= 0)
            px_rail_send_ctl(vc, si, PX_RAIL_DONE, 0, 0, px_rail_rx_bitmap(vc));
    }
}

int px_rail_peers_done(px_rail_t *r, char *missing, size_t len)
{
    int done = 1;
    size_t n = 0;
    if (missing && len)
        missing[0] = 0;
    for (int i = 0; i < r->nvc; i++) {
        px_rail_vc_t *vc = r->vlist[i];
        if (!px_rail_vc_used(vc) || vc->peer_done)
            continue;
        done = 0;
        if (!missing)
            break;
        if (n < len)
            n += (size_t)snprintf(missing + n, len - n, "%s%d", n ? " " : "", vc->rank);
    }
    return done;
}

/* One line of what a channel holds, for a job that seems stuck: what it
 * sent and had acknowledged, what it received, and what waits. */
int px_rail_vc_dump(px_rail_vc_t *vc, char *buf, size_t len)
{
    static const char *const st[] = {"up", "suspect", "down"};
    static const char *const rx[] = {"", " receiving", " holding", " skipping"};
    int held = 0;
    for (px_rail_held_t *h = vc->held; h; h = h->next)
        held++;
    size_t n = (size_t)snprintf(
        buf, len,
        "sent %u acked %u (ordered %u), received %u (next ordered %u)%s%s%s%s held %d orphans "
        "%d split %d%s",
        vc->tx_seq, vc->tx_acked, vc->tx_oseq, vc->rx_next, vc->rx_onext,
        px_list_empty(&vc->backlog) ? "" : ", backlog",
        px_list_empty(&vc->deferred) ? "" : ", deferred stripes",
        vc->resend_pending ? ", resend pending" : "", vc->ack_due ? ", ack due" : "", held,
        vc->norphan, vc->nsplit, vc->failed ? ", FAILED" : "");
    for (int i = 0; i < vc->nsub && n < len; i++) {
        const px_rail_sub_t *s = &vc->sub[i];
        const px_net_ops_t *ops = vc->rail->ops;
        n += (size_t)snprintf(buf + n, len - n, "; %s %s unacked %u queued %zu%s%s%s", s->info.label,
                              st[s->state], s->unacked, ops->ep_pending(s->ep),
                              rx[s->rx_state & 3], ops->ep_describe ? ", " : "",
                              ops->ep_describe ? ops->ep_describe(s->ep) : "");
    }
    return n < len ? (int)n : (int)len - 1;
}

void px_rail_print_stats(px_rail_t *r, int rank)
{
    uint64_t suspects = 0, downs = 0, recoveries = 0, resent = 0, resent_bytes = 0, down_ns = 0;
    for (int i = 0; i < r->nranks; i++) {
        px_rail_vc_t *vc = r->vcs[i];
        if (!vc)
            continue;
        for (int k = 0; k < vc->nsub; k++) {
            px_rail_sub_stats_t *s = vc->sub[k].st;
            suspects += s->suspects;
            downs += s->downs;
            recoveries += s->recoveries;
            resent += s->resent_frames;
            resent_bytes += s->resent_bytes;
            down_ns += s->down_ns;
            if (vc->sub[k].state == PX_SUB_DOWN)
                down_ns += px_time_ns() - vc->sub[k].down_since;
            if (!s->frames_tx && !s->frames_rx)
                continue;
            fprintf(stderr,
                    "[plexus profile] rank %d -> %d sub %d (%s) policy %s weight %.3f frames tx "
                    "%llu rx %llu bytes tx %llu rx %llu stripes %llu stripe_bytes %llu "
                    "mean_stripe_us %.1f acks tx %llu rx %llu state %s down %llu resent %llu "
                    "rtt_us %.1f rttvar_us %.1f\n",
                    rank, i, k, vc->sub[k].info.label, px_rail_policy_names[r->policy],
                    px_rail_vc_weight(vc, k), (unsigned long long)s->frames_tx,
                    (unsigned long long)s->frames_rx, (unsigned long long)s->bytes_tx,
                    (unsigned long long)s->bytes_rx, (unsigned long long)s->stripes,
                    (unsigned long long)s->stripe_bytes,
                    s->stripes ? (double)s->stripe_ns / (double)s->stripes / 1e3 : 0.0,
                    (unsigned long long)s->acks_tx, (unsigned long long)s->acks_rx,
                    px_rail_state_names[vc->sub[k].state], (unsigned long long)s->downs,
                    (unsigned long long)s->resent_frames, vc->sub[k].srtt / 1e3,
                    vc->sub[k].rttvar / 1e3);
        }
    }
    if (r->lossy)
        fprintf(stderr,
                "[plexus profile] rank %d reliability: retransmitted on timeout %llu fast %llu "
                "duplicates dropped %llu out-of-window dropped %llu small-frame periods %llu\n",
                rank, (unsigned long long)r->retx_timeout, (unsigned long long)r->retx_fast,
                (unsigned long long)r->rx_dup, (unsigned long long)r->rx_out_of_window,
                (unsigned long long)r->small_frame_periods);
    if (r->released)
        fprintf(stderr,
                "[plexus profile] rank %d completed before acknowledgement: frames %llu bytes %llu "
                "copied while waiting for the receiver %llu\n",
                rank, (unsigned long long)r->released, (unsigned long long)r->released_bytes,
                (unsigned long long)r->prestaged_bytes);
    fprintf(stderr,
            "[plexus profile] rank %d faults: suspect %llu down %llu recovered %llu failover "
            "frames %llu bytes %llu resplit %llu pieces %llu skipped %llu partitioned %llu "
            "subchannel_down_s %.2f partition_s %.2f transport %s\n",
            rank, (unsigned long long)suspects, (unsigned long long)downs,
            (unsigned long long)recoveries, (unsigned long long)resent,
            (unsigned long long)resent_bytes, (unsigned long long)r->resplits,
            (unsigned long long)r->resplit_pieces, (unsigned long long)r->rx_split_skipped,
            (unsigned long long)r->partitions, (double)down_ns / 1e9,
            (double)r->partition_ns / 1e9, r->ops->name);
}
