#include "rail.h"
#include "../util/clock.h"
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

enum { PX_RAIL_DATA = 1, PX_RAIL_ACK = 2 };

/* header flags on the wire */
enum {
    PX_RAIL_H_UNORD = 1, /* deliver at once, outside the ordered sequence */
    PX_RAIL_H_SACK = 2,  /* DATA: acknowledge as soon as it is in; ACK: seq is such a frame */
};

/* Receive window: a sender never has more than this many frames
 * unacknowledged, so the receiver can track arrivals ahead of the cumulative
 * point in a bitmap. */
#define PX_RAIL_WIN 1024

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

typedef struct px_rail_msg px_rail_msg_t;

typedef struct px_rail_stripe {
    px_rail_msg_t *msg;
    int sub;
    uint32_t seq;
    size_t bytes;
    uint64_t t_post;
    uint64_t t_ns; /* measured time, set on acknowledgement */
    int sent, acked;
} px_rail_stripe_t;

struct px_rail_msg {
    px_net_send_cb_t cb;
    void *arg;
    int nstripes, open; /* open: stripe events still to come (sent + acked each) */
    px_status_t st;
    int warm;           /* every subchannel used had carried a stripe before */
    px_rail_stripe_t stripe[];
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

enum { PX_RX_DROP, PX_RX_DELIVER, PX_RX_HOLD };

typedef struct px_rail_sub {
    px_rail_vc_t *vc;
    int idx;
    px_net_ep_t *ep;
    px_net_sub_info_t info;
    /* the frame being received on this subchannel */
    int rx_state;
    int rx_ordered, rx_sack;
    uint32_t rx_seq;
    uint64_t rx_t0; /* when a stripe's header arrived */
    size_t rx_len;
    void *rx_ctx;
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
    px_rail_stripe_t *inflight[PX_RAIL_WIN]; /* stripes awaiting acknowledgement, by seq */
    px_list_t backlog;  /* frames waiting for window space, in order */
    px_list_t deferred; /* striped blocks waiting until fewer stripe bytes are in flight */
    size_t stripe_inflight;
    int rr, rr_left, primary, bind_sub;
    /* receive side */
    uint32_t rx_next;  /* every frame below has arrived */
    uint64_t rx_bits[PX_RAIL_WIN / 64]; /* arrivals at or above rx_next, by seq % WIN */
    uint32_t rx_onext; /* next ordered frame to hand up */
    uint32_t rx_unacked;
    px_rail_held_t *held; /* sorted by oseq */
    int nsub;
    px_rail_sub_t sub[PX_NET_MAX_SUB];
};

struct px_rail {
    const px_rail_rx_ops_t *up;
    const px_net_ops_t *ops;
    px_net_iface_t *iface;
    px_net_attr_t attr;
    px_rail_vc_t **vcs;
    int nranks, local_rank;
    px_rail_policy_t policy;
    double rail_weight[PX_NET_MAX_SUB];
    int nrail_weight;
    int bind_list[64], nbind; /* explicit binding by local rank; -1 bunch, -2 scatter */
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

static const px_net_rx_ops_t px_rail_rx_ops = {
    .rx_begin = px_rail_rx_begin,
    .rx_done = px_rail_rx_done,
    .ep_failed = px_rail_ep_failed,
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
    r->nranks = boot->size;
    r->local_rank = boot->local_rank;
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
    r->vcs = calloc((size_t)boot->size, sizeof(*r->vcs));
    if (!r->vcs) {
        free(r);
        return PX_ERR_NO_MEMORY;
    }
    st = r->ops->iface_open(boot, &px_rail_rx_ops, &r->iface);
    if (st != PX_OK) {
        free(r->vcs);
        free(r);
        return st;
    }
    r->ops->iface_query(r->iface, &r->attr);
    if (px_params.stats)
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
    for (int i = 0; i < PX_RAIL_WIN; i++) {
        px_rail_stripe_t *s = vc->inflight[i];
        if (s && --s->msg->open == 0)
            free(s->msg);
    }
    while (vc->held) {
        px_rail_held_t *h = vc->held;
        vc->held = h->next;
        free(h);
    }
    for (int i = 0; i < vc->nsub; i++)
        free(vc->sub[i].rx_held);
    free(vc);
}

void px_rail_finalize(px_rail_t *r)
{
    if (!r)
        return;
    r->ops->iface_close(r->iface);
    px_rail_stats_close(r);
    for (int i = 0; i < r->nranks; i++)
        if (r->vcs[i])
            px_rail_vc_free(r->vcs[i]);
    free(r->vcs);
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
        vc = calloc(1, sizeof(*vc));
        if (!vc)
            return PX_ERR_NO_MEMORY;
        vc->rail = r;
        vc->rank = rank;
        vc->nsub = n;
        px_list_init(&vc->backlog);
        px_list_init(&vc->deferred);
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
        vc->bind_sub = 0;
        for (int i = 0; i < n; i++)
            if (info[i].rail == want) {
                vc->bind_sub = i;
                break;
            }
        if (r->policy == PX_POL_BIND && r->nbind && want >= nrails)
            px_warn("rail", "PX_RAIL_BIND names rail %d but rank %d is reached over %d rail(s); "
                    "using %s", want, rank, nrails, info[vc->bind_sub].label);
        for (int i = 0; i < n; i++)
            px_debug("rail", "rank %d subchannel %d: %s (weight %.3f)", rank, i, info[i].label,
                     vc->sub[i].weight);
        r->vcs[rank] = vc;
    }
    vc->owner = owner;
    *vc_p = vc;
    return PX_OK;
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
}

static void px_rail_send_ack(px_rail_vc_t *vc, int sack, uint32_t seq, uint64_t dur_ns)
{
    px_rail_hdr_t h;
    /* the subchannel with the least queued, so the ack is not stuck behind data */
    int best = 0;
    size_t least = (size_t)-1;
    for (int i = 0; i < vc->nsub; i++) {
        size_t q = vc->sub[i].ep ? vc->rail->ops->ep_pending(vc->sub[i].ep) : (size_t)-1;
        if (q < least) {
            least = q;
            best = i;
        }
    }
    px_rail_sub_t *s = &vc->sub[best];
    memset(&h, 0, sizeof(h));
    h.seq = seq;
    h.off = dur_ns; /* how long the stripe took to arrive, header to last byte */
    px_rail_hdr_fill(vc, &h, PX_RAIL_ACK, sack ? PX_RAIL_H_SACK : 0, best);
    if (vc->rail->ops->ep_send(s->ep, &h, sizeof(h), NULL, 0, NULL, NULL) >= 0)
        s->st->acks_tx++;
}

/* Subchannel of a frame that goes whole. */
static int px_rail_pick(px_rail_vc_t *vc, unsigned flags)
{
    int n = vc->nsub;
    if (n == 1)
        return 0;
    switch (vc->rail->policy) {
    case PX_POL_BIND:
        return vc->bind_sub;
    case PX_POL_RR:
        vc->rr = (vc->rr + 1) % n;
        return vc->rr;
    case PX_POL_WINDOW:
        if (vc->rr_left <= 0) {
            vc->rr = (vc->rr + 1) % n;
            vc->rr_left = px_params.rail_window;
        }
        vc->rr_left--;
        return vc->rr;
    case PX_POL_WRR: { /* smooth weighted round-robin */
        int best = 0;
        for (int i = 0; i < n; i++) {
            vc->sub[i].wrr_cur += vc->sub[i].weight;
            if (vc->sub[i].wrr_cur > vc->sub[best].wrr_cur)
                best = i;
        }
        vc->sub[best].wrr_cur -= 1.0;
        return best;
    }
    case PX_POL_EPC:
        /* nonblocking point-to-point data goes round-robin, the rest on the best */
        if ((flags & PX_RAIL_F_STRIPE) && !(flags & (PX_RAIL_F_BLOCKING | PX_RAIL_F_COLL))) {
            vc->rr = (vc->rr + 1) % n;
            return vc->rr;
        }
        return vc->primary;
    default:
        return vc->primary;
    }
}

static int px_rail_stripes(px_rail_vc_t *vc, unsigned flags)
{
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

static px_status_t px_rail_send_frame(px_rail_vc_t *vc, int si, const void *hdr, size_t hdr_len,
                                      const struct iovec *iov, int iovcnt, uint8_t hflags,
                                      uint64_t off, px_net_send_cb_t cb, void *arg)
{
    uint8_t buf[PX_NET_HDR_MAX];
    px_rail_hdr_t *h = (px_rail_hdr_t *)buf;
    px_rail_sub_t *s = &vc->sub[si];

    if (hdr_len + sizeof(*h) > sizeof(buf))
        return PX_ERR_INVALID_PARAM;
    h->seq = vc->tx_seq;
    h->oseq = (hflags & PX_RAIL_H_UNORD) ? 0 : vc->tx_oseq;
    h->off = off;
    px_rail_hdr_fill(vc, h, PX_RAIL_DATA, hflags, si);
    memcpy(buf + sizeof(*h), hdr, hdr_len);
    px_status_t st = vc->rail->ops->ep_send(s->ep, buf, sizeof(*h) + hdr_len, iov, iovcnt, cb, arg);
    if (st >= 0) {
        vc->tx_seq++;
        if (!(hflags & PX_RAIL_H_UNORD))
            vc->tx_oseq++;
        s->st->frames_tx++;
        s->st->bytes_tx += px_net_iov_len(iov, iovcnt);
    }
    return st;
}

static void px_rail_msg_event(px_rail_msg_t *m)
{
    if (--m->open > 0)
        return;
    m->cb(m->arg, m->st);
    free(m);
}

static void px_rail_stripe_sent(void *arg, px_status_t st)
{
    px_rail_stripe_t *s = arg;
    if (st != PX_OK)
        s->msg->st = st;
    s->sent = 1;
    px_rail_msg_event(s->msg);
}

/* Cuts iov (total len) at [off, off+len) into out; returns the count. */
static int px_rail_iov_slice(const struct iovec *iov, int iovcnt, size_t off, size_t len,
                             struct iovec *out, int max)
{
    int k = 0;
    for (int i = 0; i < iovcnt && len && k < max; i++) {
        if (off >= iov[i].iov_len) {
            off -= iov[i].iov_len;
            continue;
        }
        size_t take = iov[i].iov_len - off;
        if (take > len)
            take = len;
        out[k].iov_base = (char *)iov[i].iov_base + off;
        out[k].iov_len = take;
        k++;
        len -= take;
        off = 0;
    }
    return k;
}

/* The share of each subchannel in a striped block (0 for those left out). */
static int px_rail_split(px_rail_vc_t *vc, double *share)
{
    int n = vc->nsub;
    px_rail_t *r = vc->rail;
    if (r->policy == PX_POL_BSS) {
        int order[PX_NET_MAX_SUB], batch = px_params.rail_bss_batch;
        uint64_t now = px_time_ns(), retry = (uint64_t)(px_params.rail_bss_retry * 1e9);
        for (int i = 0; i < n; i++)
            order[i] = i;
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && vc->sub[order[j]].est_mbs > vc->sub[order[j - 1]].est_mbs; j--) {
                int t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        if (batch > n)
            batch = n;
        double sum = 0;
        for (int i = 0; i < n; i++)
            share[i] = 0;
        for (int i = 0; i < batch; i++)
            sum += vc->sub[order[i]].est_mbs;
        for (int i = 0; i < batch; i++)
            share[order[i]] = vc->sub[order[i]].est_mbs / sum;
        /* One subchannel left out for PX_RAIL_BSS_RETRY gets a small probe
         * stripe; what it measures replaces its old estimate, so a path that
         * has recovered climbs back into the batch. */
        for (int k = batch; k < n; k++) {
            px_rail_sub_t *c = &vc->sub[order[k]];
            uint64_t last = c->last_use_ns > c->last_ack_ns ? c->last_use_ns : c->last_ack_ns;
            if (c->warm && now - last > retry) {
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
    for (int i = 0; i < n; i++)
        share[i] = r->policy == PX_POL_EVEN ? 1.0 / n : vc->sub[i].weight;
    return n;
}

static px_status_t px_rail_send_striped(px_rail_vc_t *vc, const void *hdr, size_t hdr_len,
                                        const struct iovec *iov, int iovcnt, size_t len,
                                        px_net_send_cb_t cb, void *arg)
{
    double share[PX_NET_MAX_SUB];
    size_t bytes[PX_NET_MAX_SUB];
    int n = vc->nsub, used = 0;
    size_t unit = px_params.rail_stripe_unit ? px_params.rail_stripe_unit : 1;

    px_rail_split(vc, share);
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
    if (PX_LOG_ON(PX_LOG_TRACE))
        for (int i = 0; i < n; i++)
            px_trace("rail", "stripe to rank %d sub %d: %zu of %zu bytes (share %.3f)", vc->rank,
                     i, bytes[i], len, share[i]);

    px_rail_msg_t *m = malloc(sizeof(*m) + (size_t)used * sizeof(px_rail_stripe_t));
    if (!m)
        return PX_ERR_NO_MEMORY;
    m->cb = cb;
    m->arg = arg;
    m->nstripes = used;
    m->open = 2 * used + 1; /* sent + acknowledged per stripe, + this function */
    m->st = PX_OK;
    m->warm = 1;
    uint64_t now = px_time_ns();
    size_t off = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!bytes[i])
            continue;
        px_rail_stripe_t *s = &m->stripe[k++];
        struct iovec sl[8];
        int cnt = px_rail_iov_slice(iov, iovcnt, off, bytes[i], sl, 8);
        s->msg = m;
        s->sub = i;
        s->seq = vc->tx_seq;
        s->bytes = bytes[i];
        s->t_post = now;
        s->t_ns = 0;
        s->sent = s->acked = 0;
        if (!vc->sub[i].warm)
            m->warm = 0;
        vc->inflight[s->seq % PX_RAIL_WIN] = s;
        px_status_t st = px_rail_send_frame(vc, i, hdr, hdr_len, sl, cnt,
                                            PX_RAIL_H_UNORD | PX_RAIL_H_SACK, off, px_rail_stripe_sent, s);
        if (st < 0) {
            /* the channel is failing: nothing will acknowledge this stripe */
            vc->inflight[s->seq % PX_RAIL_WIN] = NULL;
            m->st = st;
            m->open -= 2;
        } else {
            if (st == PX_OK)
                px_rail_stripe_sent(s, PX_OK);
            vc->sub[i].st->stripes++;
            vc->sub[i].st->stripe_bytes += bytes[i];
            vc->stripe_inflight += bytes[i];
            vc->sub[i].last_use_ns = now;
        }
        off += bytes[i];
    }
    px_rail_msg_event(m);
    return PX_INPROGRESS;
}

/* Adaptive striping and BSS learn from each striped block's stripe times. */
static void px_rail_learn(px_rail_vc_t *vc, px_rail_msg_t *m)
{
    px_rail_t *r = vc->rail;
    double a = px_params.rail_alpha, rate[PX_NET_MAX_SUB], sum_rate = 0, sum_w = 0;
    int n = vc->nsub;
    if (!m->warm || m->nstripes < 1)
        return;
    for (int i = 0; i < n; i++)
        rate[i] = -1;
    for (int k = 0; k < m->nstripes; k++) {
        px_rail_sub_t *sub = &vc->sub[m->stripe[k].sub];
        /* a ratio of averages: acknowledgements that arrive in bursts (a
         * short interval after a long one) do not skew it */
        rate[m->stripe[k].sub] = sub->ew_bytes / (sub->ew_ns > 1000 ? sub->ew_ns : 1000) * 1e3;
    }
    if (r->policy == PX_POL_BSS) {
        for (int i = 0; i < n; i++)
            if (rate[i] >= 0) {
                px_rail_sub_t *c = &vc->sub[i];
                c->est_mbs = c->probing ? rate[i] : (1 - a) * c->est_mbs + a * rate[i];
                c->probing = 0;
            }
        if (PX_LOG_ON(PX_LOG_TRACE))
            for (int i = 0; i < n; i++)
                px_trace("rail", "rank %d sub %d: measured %.1f MB/s, estimate %.1f MB/s",
                         vc->rank, i, rate[i], vc->sub[i].est_mbs);
        return;
    }
    if (r->policy != PX_POL_ADAPTIVE && r->policy != PX_POL_EPC)
        return;
    if (m->nstripes < 2)
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
    if (PX_LOG_ON(PX_LOG_TRACE))
        for (int i = 0; i < n; i++)
            px_trace("rail", "rank %d sub %d: measured %.1f MB/s, weight %.3f", vc->rank, i,
                     rate[i], vc->sub[i].weight);
}

static void px_rail_stripe_acked(px_rail_vc_t *vc, uint32_t seq, uint64_t now, uint64_t rx_ns)
{
    px_rail_stripe_t *s = vc->inflight[seq % PX_RAIL_WIN];
    if (!s || s->seq != seq || s->acked)
        return;
    vc->inflight[seq % PX_RAIL_WIN] = NULL;
    vc->stripe_inflight -= s->bytes;
    px_rail_sub_t *sub = &vc->sub[s->sub];
    uint64_t start = s->t_post > sub->last_ack_ns ? s->t_post : sub->last_ack_ns;
    s->t_ns = now - start;
    /* the receiver's view (header to last byte) excludes queueing and the
     * acknowledgement's trip; it cannot be longer than what we saw */
    if (rx_ns && rx_ns < s->t_ns)
        s->t_ns = rx_ns;
    sub->last_ack_ns = now;
    if (!sub->warm) {
        /* the first stripe also paid for the connection: not a sample */
    } else if (sub->ew_ns == 0) {
        sub->ew_bytes = (double)s->bytes;
        sub->ew_ns = (double)s->t_ns;
    } else {
        sub->ew_bytes = 0.9 * sub->ew_bytes + 0.1 * (double)s->bytes;
        sub->ew_ns = 0.9 * sub->ew_ns + 0.1 * (double)s->t_ns;
    }
    sub->st->stripe_ns += s->t_ns;
    s->acked = 1;
    px_rail_msg_t *m = s->msg;
    int all = 1;
    for (int k = 0; k < m->nstripes; k++)
        all &= m->stripe[k].acked;
    if (all) {
        px_rail_learn(vc, m);
        for (int i = 0; i < vc->nsub; i++)
            vc->sub[i].st->weight = px_rail_vc_weight(vc, i);
        for (int k = 0; k < m->nstripes; k++)
            vc->sub[m->stripe[k].sub].warm = 1;
    }
    px_rail_msg_event(m);
}

static px_status_t px_rail_enqueue(px_list_t *q, const void *hdr, size_t hdr_len,
                                   const struct iovec *iov, int iovcnt, unsigned flags,
                                   px_net_send_cb_t cb, void *arg);

static px_status_t px_rail_send_now(px_rail_vc_t *vc, const void *hdr, size_t hdr_len,
                                    const struct iovec *iov, int iovcnt, unsigned flags,
                                    px_net_send_cb_t cb, void *arg)
{
    size_t len;
    if (vc->nsub > 1 && (flags & PX_RAIL_F_STRIPE) &&
        (len = px_net_iov_len(iov, iovcnt)) >= px_params.rail_stripe_min && cb &&
        px_rail_stripes(vc, flags)) {
        /* Split late: a block waits while enough stripe bytes are in flight,
         * so its split uses weights learnt from the blocks before it. Ordered
         * frames never wait behind it. */
        if (vc->stripe_inflight && (vc->stripe_inflight + len > px_params.rail_inflight ||
                                    !px_list_empty(&vc->deferred)))
            return px_rail_enqueue(&vc->deferred, hdr, hdr_len, iov, iovcnt, flags, cb, arg);
        return px_rail_send_striped(vc, hdr, hdr_len, iov, iovcnt, len, cb, arg);
    }
    return px_rail_send_frame(vc, px_rail_pick(vc, flags), hdr, hdr_len, iov, iovcnt,
                              (flags & PX_RAIL_F_STRIPE) ? PX_RAIL_H_UNORD : 0, 0, cb, arg);
}

static inline int px_rail_window_full(px_rail_vc_t *vc, int need)
{
    return vc->tx_seq - vc->tx_acked + (uint32_t)need > PX_RAIL_WIN;
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
        if (vc->stripe_inflight && vc->stripe_inflight + len > px_params.rail_inflight)
            return;
        px_list_del(&b->link);
        px_status_t st = px_rail_send_striped(vc, b->hdr, b->hdr_len, b->iov, b->iovcnt, len,
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
    /* a striped block takes up to one sequence number per subchannel */
    if (__builtin_expect(!px_list_empty(&vc->backlog) || px_rail_window_full(vc, PX_NET_MAX_SUB), 0))
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
        size_t o = 0;
        for (int i = 0; i < iovcnt; i++) {
            if (iov[i].iov_len)
                memcpy((char *)b->copy + o, iov[i].iov_base, iov[i].iov_len);
            o += iov[i].iov_len;
        }
        b->iov[0].iov_base = b->copy;
        b->iov[0].iov_len = len;
        b->iovcnt = 1;
    } else {
        memcpy(b->iov, iov, (size_t)iovcnt * sizeof(*iov));
        b->iovcnt = iovcnt;
    }
    px_list_insert_tail(q, &b->link);
    return cb ? PX_INPROGRESS : PX_OK;
}

size_t px_rail_vc_pending(px_rail_vc_t *vc)
{
    size_t n = px_list_empty(&vc->backlog) && px_list_empty(&vc->deferred) ? 0 : 1;
    for (int i = 0; i < vc->nsub; i++)
        n += vc->rail->ops->ep_pending(vc->sub[i].ep);
    return n;
}

size_t px_rail_vc_eager_limit(px_rail_vc_t *vc) { return vc->rail->attr.eager_limit; }

uint32_t px_rail_vc_unacked(px_rail_vc_t *vc) { return vc->tx_seq - vc->tx_acked; }

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

/* ---------- receiving ---------- */

static void px_rail_ack_in(px_rail_vc_t *vc, uint32_t ack)
{
    /* cumulative: only ever moves forward, never past what was sent */
    if ((int32_t)(ack - vc->tx_acked) <= 0 || (int32_t)(ack - vc->tx_seq) > 0)
        return;
    uint64_t now = 0;
    for (uint32_t s = vc->tx_acked; s != ack; s++)
        if (vc->inflight[s % PX_RAIL_WIN]) {
            if (!now)
                now = px_time_ns();
            px_rail_stripe_acked(vc, s, now, 0);
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

static void *px_rail_rx_begin(void *owner, const void *hdr, size_t hdr_len, size_t payload_len,
                              void **ctx_p)
{
    px_rail_sub_t *s = owner;
    px_rail_vc_t *vc = s->vc;
    px_rail_hdr_t h;
    (void)ctx_p;

    s->rx_state = PX_RX_DROP;
    if (hdr_len < sizeof(h)) {
        px_error("rail", "short frame header (%zu bytes) from rank %d", hdr_len, vc->rank);
        return NULL;
    }
    memcpy(&h, hdr, sizeof(h));
    px_rail_ack_in(vc, h.ack);
    if (h.type == PX_RAIL_ACK) {
        s->st->acks_rx++;
        if (h.flags & PX_RAIL_H_SACK) {
            px_rail_stripe_acked(vc, h.seq, px_time_ns(), h.off);
            if (!px_list_empty(&vc->deferred))
                px_rail_deferred_flush(vc);
        }
        return NULL;
    }
    uint32_t d = h.seq - vc->rx_next;
    if (h.type != PX_RAIL_DATA || d >= PX_RAIL_WIN) {
        if ((int32_t)d < 0)
            px_debug("rail", "duplicate frame %u from rank %d dropped", h.seq, vc->rank);
        else
            px_warn("rail", "dropping frame seq %u (type %u) from rank %d, expected %u..%u",
                    h.seq, h.type, vc->rank, vc->rx_next, vc->rx_next + PX_RAIL_WIN - 1);
        return NULL;
    }
    uint64_t bit = 1ull << (h.seq % 64);
    uint64_t *word = &vc->rx_bits[(h.seq % PX_RAIL_WIN) / 64];
    if (*word & bit) {
        px_debug("rail", "duplicate frame %u from rank %d dropped", h.seq, vc->rank);
        return NULL;
    }
    *word |= bit;
    while (vc->rx_bits[(vc->rx_next % PX_RAIL_WIN) / 64] & (1ull << (vc->rx_next % 64))) {
        vc->rx_bits[(vc->rx_next % PX_RAIL_WIN) / 64] &= ~(1ull << (vc->rx_next % 64));
        vc->rx_next++;
    }
    vc->rx_unacked++;
    s->st->frames_rx++;
    s->st->bytes_rx += payload_len;
    s->rx_seq = h.seq;
    s->rx_len = payload_len;
    s->rx_sack = (h.flags & PX_RAIL_H_SACK) != 0;
    if (s->rx_sack)
        s->rx_t0 = px_time_ns();
    s->rx_ordered = !(h.flags & PX_RAIL_H_UNORD);
    const char *uh = (const char *)hdr + sizeof(h);
    size_t uhl = hdr_len - sizeof(h);
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
    s->rx_ctx = NULL;
    return vc->rail->up->rx_begin(vc->owner, uh, uhl, h.off, payload_len, &s->rx_ctx);
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
    default:
        vc->rail->up->rx_done(vc->owner, s->rx_ctx, s->rx_len);
        if (s->rx_sack) /* time the stripe: acknowledge it now */
            px_rail_send_ack(vc, 1, s->rx_seq, px_time_ns() - s->rx_t0);
        break;
    }
    s->rx_state = PX_RX_DROP;
    if (vc->held)
        px_rail_flush_held(vc);
    if (vc->rx_unacked >= (uint32_t)px_params.rail_ack_every)
        px_rail_send_ack(vc, 0, 0, 0);
}

static void px_rail_ep_failed(void *owner, px_status_t why)
{
    px_rail_sub_t *s = owner;
    px_rail_vc_t *vc = s->vc;
    px_error("rail", "subchannel %s to rank %d failed: %s", s->info.label, vc->rank,
             px_status_string(why));
    if (vc->failed)
        return;
    vc->failed = 1;
    if (vc->rail->up->ep_failed)
        vc->rail->up->ep_failed(vc->owner, why);
}

int px_rail_progress(px_rail_t *r) { return r->ops->iface_progress(r->iface); }

int px_rail_fd(px_rail_t *r) { return r->ops->iface_fd(r->iface); }

void px_rail_print_stats(px_rail_t *r, int rank)
{
    for (int i = 0; i < r->nranks; i++) {
        px_rail_vc_t *vc = r->vcs[i];
        if (!vc)
            continue;
        for (int k = 0; k < vc->nsub; k++) {
            px_rail_sub_stats_t *s = vc->sub[k].st;
            if (!s->frames_tx && !s->frames_rx)
                continue;
            fprintf(stderr,
                    "[plexus profile] rank %d -> %d sub %d (%s) policy %s weight %.3f frames tx "
                    "%llu rx %llu bytes tx %llu rx %llu stripes %llu stripe_bytes %llu "
                    "mean_stripe_us %.1f acks tx %llu rx %llu\n",
                    rank, i, k, vc->sub[k].info.label, px_rail_policy_names[r->policy],
                    px_rail_vc_weight(vc, k), (unsigned long long)s->frames_tx,
                    (unsigned long long)s->frames_rx, (unsigned long long)s->bytes_tx,
                    (unsigned long long)s->bytes_rx, (unsigned long long)s->stripes,
                    (unsigned long long)s->stripe_bytes,
                    s->stripes ? (double)s->stripe_ns / (double)s->stripes / 1e3 : 0.0,
                    (unsigned long long)s->acks_tx, (unsigned long long)s->acks_rx);
        }
    }
}
