/* The transport contract of src/net/net.h, checked on one transport below
 * the rail and channel layers (ctest net.conformance.<transport>): self as
 * a singleton, the others as two ranks under pxrun. argv[1] (else PX_NET)
 * names the transport.
 *
 *   - every member of the ops table is filled, and the capability bits
 *     agree with what the operations answer;
 *   - reachability: the peer is reachable, a rank the transport cannot
 *     reach is refused, and so are a subchannel past those ep_subs counts
 *     and a header longer than PX_NET_HDR_MAX;
 *   - a peer that sends before this rank made its endpoint: a transport
 *     that connects calls ep_incoming, a lossless one keeps the frames
 *     until the endpoint is there;
 *   - frames in both directions at once, of many sizes up to several MB
 *     (on a lossy transport up to max_frag, or eager_limit when that is
 *     larger), the payload in several iovecs,
 *     arrive whole with every header byte, in order per endpoint; on a lossy
 *     transport, what arrives is intact;
 *   - ep_get and ep_put (PX_NET_CAP_GET), ep_path_check
 *     (PX_NET_CAP_PATH_CHECK), iface_quiet and iface_fd;
 *   - bulk transfers (PX_NET_CAP_BULK): each rank posts a buffer, the
 *     offers cross through the bootstrap, each streams to the other with
 *     the receiver's progress carried back in frames, and both buffers end
 *     intact with bulk_done at both ends; without the bit ep_bulk_recv and
 *     ep_bulk_send answer PX_ERR_UNSUPPORTED;
 *   - bulk frames (ep_send_bulk) queued while the peer does not read, then
 *     ordered ones: all arrive whole, the ordered ones in order; a
 *     transport with an ep_send_bulk of its own sends the ordered frames
 *     ahead of the bulk frames not yet begun, the others keep every frame
 *     in order;
 *   - ep_rx_cancel discards the rest of a frame being received, ep_reset
 *     drops what is queued, running its callbacks with an error, and the
 *     next send connects afresh (PX_NET_CAP_RESET); without the bit, neither
 *     loses anything.
 *
 * Both ranks go through the same phases, each ended by barriers, so that a
 * failed check never leaves the other rank waiting. Every rank counts its
 * checks; rank 0 prints the job's "N passed, N failed". */
#include "boot/boot.h"
#include "net/net.h"
#include "util/clock.h"
#include "px_unit.h"

#include <inttypes.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every function member of px_net_ops_t; adding a member without adding
 * it here fails the build below. */
/* clang-format off */
#define CONF_OPS(X) \
    X(iface_open) X(iface_close) X(iface_query) X(iface_reachable) X(ep_create) X(ep_subs) \
    X(ep_send) X(ep_get) X(ep_put) X(ep_pending) X(ep_reset) X(ep_withdraw) X(ep_destroy) X(ep_rx_cancel) \
    X(iface_progress) X(iface_fd) X(ep_path_check) X(ep_describe) X(iface_quiet) X(ep_ready) \
    X(ep_bulk_recv) X(ep_bulk_send) X(ep_bulk_acked) X(ep_bulk_cancel) X(iface_sleep) \
    X(ep_send_bulk) X(ep_frame) X(ep_wake) X(ep_send_fill)
/* clang-format on */
#define CONF_COUNT(m) +1
_Static_assert(offsetof(px_net_ops_t, iface_open) +
                       (0 CONF_OPS(CONF_COUNT)) * sizeof(void (*)(void)) ==
                   sizeof(px_net_ops_t),
               "px_net_ops_t has a member this test does not check");

#define CONF_MAGIC 0x464e4f43u /* "CONF" */
#define CONF_SENTINEL 0xee     /* receive buffers of frames to cancel start with it */
#define CONF_WAIT_NS 30000000000ull
#define CONF_QUIET_NS 500000000ull /* lossy: no frame for this long ends a wait */

enum {
    PH_NONE,
    PH_INCOMING,
    PH_STREAM,
    PH_CANCEL,
    PH_RESET,
    PH_MARKER,
    PH_BULK,
    PH_LATE,     /* bulk frames (ep_send_bulk) ... */
    PH_OVERTAKE, /* ... and the ordered frames sent after them */
    PH_COUNT
};
enum { F_CANCEL = 1 };

/* The start of every header sent; the rest, up to hdr_len, is a pattern. */
typedef struct conf_hdr {
    uint32_t magic, phase, seq, flags;
    uint64_t len; /* payload bytes */
    uint32_t hdr_len, from;
} conf_hdr_t;

typedef struct conf_rx {
    conf_hdr_t h;
    unsigned char *buf;
    int bad, canceled;
    int streamed; /* rx_begin answered PX_NET_RX_STREAM: rx_data fills buf */
    size_t got;   /* bytes rx_data gave */
} conf_rx_t;

/* This rank's end of one subchannel. */
typedef struct conf_conn {
    px_net_ep_t *ep;
    int sub;
    uint32_t tx_seq[PH_COUNT];
    uint32_t rx_next[PH_COUNT];
    int rx_count[PH_COUNT], rx_order[PH_COUNT];
    conf_rx_t *inflight; /* rx_begin seen, rx_done not yet */
} conf_conn_t;

typedef struct conf_tx {
    unsigned char *buf;
    int cbs;
    px_status_t st;
    size_t filled; /* ep_send_fill: bytes its fill wrote */
} conf_tx_t;

static const char *name;
static const px_net_ops_t *ops;
static px_net_iface_t *iface;
static px_net_attr_t attr;
static px_boot_info_t info;
static int me, peer, lossy;
static conf_conn_t conns[PX_NET_MAX_SUB];
static int nsub; /* subchannels to the peer; 0 until this rank made its endpoints */

/* what arrived, counted over every subchannel */
static int rx_bad, rx_abandoned, rx_cancel_seen, rx_cancel_discarded, rx_cancel_whole, rx_unknown;
static uint64_t last_rx_ns;
static int failed_calls, incoming_calls, incoming_other;
static int cancel_driver; /* progress cancels frames flagged F_CANCEL once in flight */

/* PH_OVERTAKE frame k arrived after overtake_after[k] PH_LATE frames */
static int overtake_after[3];

/* what was sent */
static int tx_errors, tx_outstanding, tx_cb_errors, tx_cb_extra;
static int tx_bulk;     /* conf_submit sends with ep_send_bulk */
static int tx_fill_bad; /* ep_send_fill asked for bytes out of order */

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (cond) {                                                                                \
            px_unit_passed++;                                                                      \
        } else {                                                                                   \
            px_unit_failed++;                                                                      \
            fprintf(stderr, "FAIL %s rank %d line %d: ", name, me, __LINE__);                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static inline unsigned char pat(uint32_t seq, size_t k)
{
    return (unsigned char)(seq * 131u + (uint32_t)k * 7u + (uint32_t)(k >> 9) + 1u);
}

static inline unsigned char hdr_pat(uint32_t seq, size_t i)
{
    return (unsigned char)(seq * 17u + i);
}

/* bulk transfers: this rank's, both directions */
static struct {
    int sub;              /* the subchannel both use */
    char rx_arg, tx_arg;  /* their args (addresses) */
    int rx_done, tx_done; /* bulk_done calls */
    px_status_t rx_st, tx_st;
    int bad_owner, bad_arg;
    uint64_t got; /* the receiver's last progress */
} bulk;

/* A PH_BULK frame: the peer's progress as a receiver, for our sender. */
static void conf_bulk_acked(const conf_rx_t *r)
{
    uint64_t got;
    if (r->h.len == sizeof(got) && r->buf) {
        memcpy(&got, r->buf, sizeof(got));
        ops->ep_bulk_acked(conns[bulk.sub].ep, &bulk.tx_arg, got);
    }
}

/* ---------- the upcalls ---------- */

static void *conf_rx_begin(void *owner, const void *hdr, size_t hdr_len, size_t payload_len,
                           void **ctx_p)
{
    conf_conn_t *c = owner;
    conf_rx_t *r = calloc(1, sizeof(*r));
    const unsigned char *h = hdr;
    if (!r) {
        *ctx_p = NULL;
        return NULL;
    }
    int ok = hdr_len >= sizeof(conf_hdr_t) && hdr_len <= PX_NET_HDR_MAX;
    if (ok)
        memcpy(&r->h, hdr, sizeof(r->h));
    ok = ok && r->h.magic == CONF_MAGIC && r->h.hdr_len == hdr_len && r->h.len == payload_len &&
         r->h.phase > PH_NONE && r->h.phase < PH_COUNT && r->h.from == (uint32_t)peer;
    for (size_t i = sizeof(conf_hdr_t); ok && i < hdr_len; i++)
        ok = h[i] == hdr_pat(r->h.seq, i);
    r->bad = !ok;
    if (ok && payload_len) {
        r->buf = malloc(payload_len);
        if (r->buf && (r->h.flags & F_CANCEL))
            memset(r->buf, CONF_SENTINEL, payload_len);
    }
    if (c->inflight) /* rx_done of the previous frame never came */
        rx_abandoned++;
    c->inflight = r;
    *ctx_p = r;
    /* every other frame piece by piece where the transport can */
    if (r->buf && (attr.caps & PX_NET_CAP_STREAM) && !(r->h.flags & F_CANCEL) && (r->h.seq & 1)) {
        r->streamed = 1;
        return PX_NET_RX_STREAM;
    }
    return r->buf;
}

static void conf_rx_data(void *owner, void *ctx, const void *data, size_t len)
{
    conf_rx_t *r = ctx;
    (void)owner;
    if (!r || !r->streamed || len == 0 || len > r->h.len - r->got) {
        if (r)
            r->bad = 1;
        return;
    }
    memcpy(r->buf + r->got, data, len);
    r->got += len;
}

/* A frame cut off by ep_rx_cancel: the pattern up to some point, then
 * nothing written; 1 when something was left out. */
static int conf_discarded(const conf_rx_t *r)
{
    size_t k = 0, len = (size_t)r->h.len;
    while (k < len && r->buf[k] == pat(r->h.seq, k))
        k++;
    for (size_t j = k; j < len; j++)
        if (r->buf[j] != CONF_SENTINEL)
            return 0;
    return k < len;
}

static int conf_whole(const conf_rx_t *r)
{
    for (size_t k = 0; k < (size_t)r->h.len; k++)
        if (r->buf[k] != pat(r->h.seq, k))
            return 0;
    return 1;
}

static void conf_rx_done(void *owner, void *ctx)
{
    conf_conn_t *c = owner;
    conf_rx_t *r = ctx;
    last_rx_ns = px_time_ns();
    if (!r) {
        rx_unknown++;
        return;
    }
    if (c->inflight == r)
        c->inflight = NULL;
    else
        rx_unknown++; /* rx_done of a frame that is not the one being received */
    if (!r->bad && r->h.len && !r->buf)
        r->bad = 1; /* out of memory here: no way to look at it */
    if (r->streamed && r->got != r->h.len)
        r->bad = 1; /* rx_data did not give the whole payload */
    if (!r->bad && r->h.phase == PH_BULK) {
        conf_bulk_acked(r);
        free(r->buf);
        free(r);
        return;
    }
    if (!r->bad) {
        if (r->canceled && (attr.caps & PX_NET_CAP_RESET)) {
            if (conf_discarded(r))
                rx_cancel_discarded++;
        } else if (!conf_whole(r)) {
            r->bad = 1;
        } else if (r->canceled) {
            rx_cancel_whole++;
        }
    }
    if (r->bad) {
        rx_bad++;
    } else {
        int ph = (int)r->h.phase;
        c->rx_count[ph]++;
        if (r->h.seq != c->rx_next[ph])
            c->rx_order[ph]++;
        c->rx_next[ph] = r->h.seq + 1;
        if (ph == PH_OVERTAKE && r->h.seq < 3)
            overtake_after[r->h.seq] = c->rx_count[PH_LATE];
    }
    free(r->buf);
    free(r);
}

static void conf_ep_failed(void *owner, px_status_t why)
{
    (void)owner;
    (void)why;
    failed_calls++;
}

static int conf_make_eps(void);

/* What iface_open is given as its owner: ep_incoming must get it back. */
static int conf_owner;

static int conf_ep_incoming(void *owner, int rank)
{
    incoming_calls++;
    if (owner != &conf_owner || rank != peer || nsub) {
        incoming_other++;
        return -1;
    }
    return conf_make_eps() == PX_OK ? 0 : -1;
}

static px_status_t conf_send_raw(conf_conn_t *c, int phase, const void *data, size_t len);

static void conf_bulk_progress(void *owner, void *arg, uint64_t got)
{
    if (owner != &conns[bulk.sub])
        bulk.bad_owner++;
    if (arg != &bulk.rx_arg) {
        bulk.bad_arg++;
        return;
    }
    bulk.got = got;
    conf_send_raw(&conns[bulk.sub], PH_BULK, &got, sizeof(got));
}

static void conf_bulk_done(void *owner, void *arg, px_status_t st)
{
    if (owner != &conns[bulk.sub])
        bulk.bad_owner++;
    if (arg == &bulk.rx_arg) {
        bulk.rx_done++;
        bulk.rx_st = st;
    } else if (arg == &bulk.tx_arg) {
        bulk.tx_done++;
        bulk.tx_st = st;
    } else {
        bulk.bad_arg++;
    }
}

static const px_net_rx_ops_t conf_rx_ops = {
    .rx_begin = conf_rx_begin,
    .rx_done = conf_rx_done,
    .rx_data = conf_rx_data,
    .ep_failed = conf_ep_failed,
    .bulk_progress = conf_bulk_progress,
    .bulk_done = conf_bulk_done,
    .ep_incoming = conf_ep_incoming,
};

/* ---------- sending and waiting ---------- */

static void conf_send_cb(void *arg, px_status_t st)
{
    conf_tx_t *t = arg;
    if (t->cbs++) {
        tx_cb_extra++;
        return;
    }
    t->st = st;
    if (st != PX_OK)
        tx_cb_errors++;
    tx_outstanding--;
    free(t->buf);
    t->buf = NULL;
}

/* ep_send of a frame whose payload t owns; t is freed unless the send is
 * in progress. */
static px_status_t conf_submit(conf_conn_t *c, const void *hdr, size_t hl, const struct iovec *iov,
                               int n, conf_tx_t *t)
{
    tx_outstanding++;
    px_status_t st =
        (tx_bulk ? ops->ep_send_bulk : ops->ep_send)(c->ep, hdr, hl, iov, n, conf_send_cb, t);
    if (st == PX_INPROGRESS)
        return st; /* t lives on: a failed check of its callback is better than a crash */
    tx_outstanding--;
    if (st != PX_OK)
        tx_errors++;
    free(t->buf);
    free(t);
    return st;
}

/* ep_send_fill's fill: bytes of t's payload, asked for in order. */
static void conf_fill(void *arg, void *dst, size_t off, size_t n)
{
    conf_tx_t *t = arg;
    if (off != t->filled)
        tx_fill_bad++;
    memcpy(dst, t->buf + off, n);
    t->filled = off + n;
}

/* Sends frame seq of `phase` on c: header of 32 to 96 bytes, the payload in
 * up to three iovecs, or written by ep_send_fill (every fourth frame where
 * the transport has it). Returns what ep_send did. */
static px_status_t conf_send(conf_conn_t *c, int phase, size_t len, uint32_t flags)
{
    uint32_t seq = c->tx_seq[phase]++;
    unsigned char hdr[PX_NET_HDR_MAX];
    size_t hl = sizeof(conf_hdr_t) + seq % (PX_NET_HDR_MAX - sizeof(conf_hdr_t) + 1);
    conf_hdr_t h = {.magic = CONF_MAGIC,
                    .phase = (uint32_t)phase,
                    .seq = seq,
                    .flags = flags,
                    .len = len,
                    .hdr_len = (uint32_t)hl,
                    .from = (uint32_t)me};
    memcpy(hdr, &h, sizeof(h));
    for (size_t i = sizeof(h); i < hl; i++)
        hdr[i] = hdr_pat(seq, i);
    conf_tx_t *t = calloc(1, sizeof(*t));
    t->buf = malloc(len ? len : 1);
    for (size_t k = 0; k < len; k++)
        t->buf[k] = pat(seq, k);
    /* the cuts move with seq; a zero-length piece now and then */
    size_t a = len ? (seq * 7919u) % (len + 1) : 0, b = a + (len - a) / 2;
    struct iovec iov[3] = {{t->buf, a}, {t->buf + a, b - a}, {t->buf + b, len - b}};
    int n = 1 + (int)(seq % 3);
    if (n == 1)
        iov[0].iov_len = len;
    else if (n == 2)
        iov[1].iov_len = len - a;
    if ((attr.caps & PX_NET_CAP_STREAM) && !tx_bulk && seq % 4 == 2) {
        tx_outstanding++;
        px_status_t st = ops->ep_send_fill(c->ep, hdr, hl, len, conf_fill, conf_send_cb, t);
        if (st == PX_INPROGRESS)
            return st;
        tx_outstanding--;
        if (st != PX_OK)
            tx_errors++;
        else if (t->filled != len)
            tx_fill_bad++;
        free(t->buf);
        free(t);
        return st;
    }
    return conf_submit(c, hdr, hl, iov, n, t);
}

/* A frame of `phase` whose payload is `data` (copied). */
static px_status_t conf_send_raw(conf_conn_t *c, int phase, const void *data, size_t len)
{
    conf_hdr_t h = {.magic = CONF_MAGIC,
                    .phase = (uint32_t)phase,
                    .seq = c->tx_seq[phase]++,
                    .len = len,
                    .hdr_len = sizeof(h),
                    .from = (uint32_t)me};
    conf_tx_t *t = calloc(1, sizeof(*t));
    t->buf = malloc(len);
    memcpy(t->buf, data, len);
    struct iovec iov = {t->buf, len};
    return conf_submit(c, &h, sizeof(h), &iov, 1, t);
}

static void conf_progress(void)
{
    ops->iface_progress(iface);
    if (!cancel_driver)
        return;
    for (int i = 0; i < nsub; i++) {
        conf_rx_t *r = conns[i].inflight;
        if (r && !r->bad && (r->h.flags & F_CANCEL) && !r->canceled) {
            ops->ep_rx_cancel(conns[i].ep);
            r->canceled = 1;
            rx_cancel_seen++;
        }
    }
}

static size_t conf_pending(void)
{
    size_t n = 0;
    for (int i = 0; i < nsub; i++)
        n += ops->ep_pending(conns[i].ep);
    return n;
}

static int conf_received(int phase)
{
    int n = 0;
    for (int i = 0; i < nsub; i++)
        n += conns[i].rx_count[phase];
    return n;
}

static int conf_out_of_order(int phase)
{
    int n = 0;
    for (int i = 0; i < nsub; i++)
        n += conns[i].rx_order[phase];
    return n;
}

/* Progresses until this rank's sends are done and `expect` frames of
 * `phase` arrived (a lossy transport: some, then nothing for a while; none
 * when expect is 0), or the time is up. Returns whether it ended in time. */
static int conf_wait(int phase, int expect)
{
    uint64_t t0 = px_time_ns(), now;
    last_rx_ns = t0;
    for (;;) {
        conf_progress();
        now = px_time_ns();
        int sent = tx_outstanding == 0 && conf_pending() == 0;
        int got =
            expect == 0 || (lossy ? now - last_rx_ns > CONF_QUIET_NS && conf_received(phase) > 0
                                  : conf_received(phase) >= expect);
        if (sent && got)
            return 1;
        if (now - t0 > CONF_WAIT_NS)
            return 0;
    }
}

static void conf_barrier(void)
{
    px_status_t st = px_boot_barrier();
    if (st != PX_OK) {
        fprintf(stderr, "FAIL %s rank %d: barrier: %s\n", name, me, px_status_name(st));
        exit(1);
    }
}

static int conf_make_eps(void)
{
    px_net_sub_info_t subs[PX_NET_MAX_SUB];
    int n = ops->ep_subs(iface, peer, subs, PX_NET_MAX_SUB);
    EXPECT(n >= 1 && n <= PX_NET_MAX_SUB, "ep_subs to rank %d: %d", peer, n);
    if (n < 1 || n > PX_NET_MAX_SUB)
        return PX_ERR_PEER_UNREACHABLE;
    for (int i = 0; i < n; i++) {
        conns[i].sub = i;
        px_status_t st = ops->ep_create(iface, peer, i, &conns[i], &conns[i].ep);
        EXPECT(st == PX_OK && conns[i].ep, "ep_create(rank %d, sub %d): %s", peer, i,
               px_status_name(st));
        if (st != PX_OK)
            return st;
    }
    nsub = n;
    return PX_OK;
}

/* ---------- the checks ---------- */

static void check_table(void)
{
    EXPECT(ops->size == sizeof(px_net_ops_t), "size %zu", ops->size);
    EXPECT(ops->name && !strcmp(ops->name, name), "name %s", ops->name ? ops->name : "(null)");
#define CONF_FILLED(m) EXPECT(ops->m != NULL, "ops->" #m " is NULL");
    CONF_OPS(CONF_FILLED)
#undef CONF_FILLED
}

static void check_attr(void)
{
    unsigned known = PX_NET_CAP_GET | PX_NET_CAP_LOSSY | PX_NET_CAP_RESET | PX_NET_CAP_PATH_CHECK |
                     PX_NET_CAP_BULK | PX_NET_CAP_FENCE | PX_NET_CAP_WAKE | PX_NET_CAP_STREAM;
    EXPECT(!(attr.caps & ~known), "unknown capability bits %#x", attr.caps & ~known);
    EXPECT(attr.max_frag > 0, "max_frag 0");
    EXPECT(attr.eager_limit > 0, "eager_limit 0");
    EXPECT(!lossy || (attr.max_frag < ((size_t)1 << 32) && attr.eager_limit < ((size_t)1 << 32)),
           "lossy, max_frag %zu, eager_limit %zu", attr.max_frag, attr.eager_limit);
    EXPECT(attr.latency_us > 0 && attr.bandwidth_mbs > 0, "latency %g us, bandwidth %g MB/s",
           attr.latency_us, attr.bandwidth_mbs);
    int fd = ops->iface_fd(iface);
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    EXPECT(fd == -1 || (fd >= 0 && poll(&pf, 1, 0) >= 0 && !(pf.revents & POLLNVAL)),
           "iface_fd %d is not a descriptor", fd);
}

static void check_reach(void)
{
    EXPECT(ops->iface_reachable(iface, peer), "rank %d unreachable", peer);
    int bad[] = {-1, info.size, info.size + 7, me == peer ? -2 : me};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int r = bad[i];
        px_net_ep_t *ep = NULL;
        conf_conn_t dummy;
        EXPECT(!ops->iface_reachable(iface, r), "rank %d reachable", r);
        px_status_t st = ops->ep_create(iface, r, 0, &dummy, &ep);
        EXPECT(st != PX_OK, "ep_create to rank %d: %s", r, px_status_name(st));
    }
}

/* After the endpoints exist: a subchannel past the last, a header too long. */
static void check_limits(void)
{
    px_net_ep_t *ep = NULL;
    conf_conn_t dummy;
    if (nsub < PX_NET_MAX_SUB) {
        px_status_t st = ops->ep_create(iface, peer, nsub, &dummy, &ep);
        EXPECT(st != PX_OK, "ep_create of sub %d of %d: %s", nsub, nsub, px_status_name(st));
    }
    unsigned char hdr[PX_NET_HDR_MAX + 1];
    memset(hdr, 0, sizeof(hdr));
    px_status_t st = ops->ep_send(conns[0].ep, hdr, sizeof(hdr), NULL, 0, NULL, NULL);
    EXPECT(st != PX_OK && st != PX_INPROGRESS, "a %zu-byte header: %s", sizeof(hdr),
           px_status_name(st));
}

/* Rank 0 sends before rank 1 made its endpoint. */
static void phase_incoming(void)
{
    const int n = 40;
    char val[8];
    size_t len;
    int connects = 0;
    if (me == 0) {
        conf_make_eps();
        /* a fresh endpoint that is not ready has a connection to set up */
        connects = nsub && !ops->ep_ready(conns[0].ep);
        snprintf(val, sizeof(val), "%d", connects);
        px_boot_put("conf.connects", val, strlen(val) + 1);
    }
    px_boot_fence();
    if (me == 1 && px_boot_get(0, "conf.connects", val, sizeof(val), &len) == PX_OK)
        connects = atoi(val);
    if (me == 0) {
        uint64_t t0 = px_time_ns();
        for (int i = 0; nsub && (lossy ? px_time_ns() - t0 < 2500000000ull : i < n); i++) {
            EXPECT(conf_send(&conns[0], PH_INCOMING, (size_t)(i * 997) % 5000, 0) >= 0,
                   "send %d before the peer has an endpoint", i);
            for (uint64_t t = px_time_ns(); lossy && px_time_ns() - t < 20000000ull;)
                conf_progress();
        }
        EXPECT(conf_wait(PH_INCOMING, 0), "sends before the peer has an endpoint");
    } else {
        uint64_t t0 = px_time_ns();
        while (!nsub && px_time_ns() - t0 < 1000000000ull)
            conf_progress();
        if (connects)
            EXPECT(incoming_calls == 1 && nsub, "ep_incoming: %d calls, endpoints %s",
                   incoming_calls, nsub ? "made" : "not made");
        else
            EXPECT(incoming_calls == 0, "ep_incoming from a transport that does not connect");
        if (!nsub)
            conf_make_eps();
        int done = conf_wait(PH_INCOMING, n);
        if (lossy) {
            EXPECT(conf_received(PH_INCOMING) > 0, "nothing arrived");
        } else {
            EXPECT(done && conf_received(PH_INCOMING) == n, "%d of %d frames sent early",
                   conf_received(PH_INCOMING), n);
            EXPECT(conf_out_of_order(PH_INCOMING) == 0, "%d out of order",
                   conf_out_of_order(PH_INCOMING));
        }
        EXPECT(incoming_other == 0, "%d unexpected ep_incoming calls", incoming_other);
    }
    conf_barrier();
}

/* Frames of many sizes both ways at once, round robin over the subchannels. */
static void phase_stream(void)
{
    static const size_t sizes[] = {0,
                                   1,
                                   2,
                                   7,
                                   8,
                                   15,
                                   16,
                                   17,
                                   100,
                                   1000,
                                   1500,
                                   4095,
                                   4096,
                                   4097,
                                   8191,
                                   8192,
                                   8193,
                                   16383,
                                   16384,
                                   16385,
                                   32768,
                                   65379,
                                   65535,
                                   65536,
                                   65537,
                                   131072,
                                   262143,
                                   1u << 20,
                                   (1u << 20) + 1,
                                   (3u << 20) + 1,
                                   (6u << 20) + 3};
    const int nbig = (int)(sizeof(sizes) / sizeof(sizes[0]));
    const int total = 300;
    for (int i = 0; i < total; i++) {
        size_t len = i % 3 == 0 && i / 3 < nbig ? sizes[i / 3] : (size_t)(i * 37) % 2000;
        /* a lossy transport's largest frame: an eager message whole */
        size_t most = attr.eager_limit > attr.max_frag ? attr.eager_limit : attr.max_frag;
        if (lossy && len > most)
            len = i % 2 ? most : most - 1;
        conf_conn_t *c = &conns[i % nsub];
        px_status_t st = conf_send(c, PH_STREAM, len, 0);
        EXPECT(st == PX_OK || st == PX_INPROGRESS, "send %d of %zu bytes: %s", i, len,
               px_status_name(st));
        for (int k = 0; k < (lossy ? 20 : 1); k++)
            conf_progress();
    }
    int done = conf_wait(PH_STREAM, total);
    EXPECT(tx_errors == 0 && tx_cb_errors == 0 && tx_cb_extra == 0,
           "send errors %d, callbacks with an error %d, callbacks run twice %d", tx_errors,
           tx_cb_errors, tx_cb_extra);
    EXPECT(tx_outstanding == 0, "%d sends never completed", tx_outstanding);
    EXPECT(tx_fill_bad == 0, "ep_send_fill: %d payloads asked for out of order or not whole",
           tx_fill_bad);
    EXPECT(rx_bad == 0 && rx_unknown == 0, "%d frames damaged, %d rx_done without rx_begin", rx_bad,
           rx_unknown);
    if (lossy) {
        EXPECT(conf_received(PH_STREAM) > 0, "nothing arrived");
    } else {
        EXPECT(done && conf_received(PH_STREAM) == total, "%d of %d frames",
               conf_received(PH_STREAM), total);
        for (int i = 0; i < nsub; i++)
            EXPECT(conns[i].rx_count[PH_STREAM] == total / nsub + (i < total % nsub),
                   "sub %d: %d frames", i, conns[i].rx_count[PH_STREAM]);
        EXPECT(conf_out_of_order(PH_STREAM) == 0, "%d out of order", conf_out_of_order(PH_STREAM));
        EXPECT(rx_abandoned == 0, "%d frames begun and never done", rx_abandoned);
    }
    EXPECT(failed_calls == 0, "ep_failed %d times", failed_calls);
    for (int i = 0; i < nsub; i++) {
        EXPECT(ops->ep_ready(conns[i].ep), "sub %d not ready after traffic both ways", i);
        const char *d = ops->ep_describe(conns[i].ep);
        EXPECT(d != NULL, "ep_describe of sub %d: NULL", i);
    }
    conf_barrier();
    /* nothing in flight either way: a quiet interface whose descriptor is
     * not readable has nothing to do */
    if (ops->iface_quiet(iface)) {
        int fd = ops->iface_fd(iface);
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (fd >= 0 && poll(&pf, 1, 0) == 0)
            EXPECT(ops->iface_progress(iface) == 0, "quiet, yet progress found events");
    }
    conf_barrier();
}

/* ep_get and ep_put on the peer's buffers, published with their addresses. */
static void phase_get_put(void)
{
    const size_t len = (1u << 20) + 123;
    unsigned char *src = malloc(len), *dst = calloc(1, len), *local = malloc(len);
    char val[64];
    size_t vlen;
    unsigned long long psrc = 0, pdst = 0;
    for (size_t k = 0; k < len; k++)
        src[k] = pat((uint32_t)me + 1000, k);
    snprintf(val, sizeof(val), "%llx %llx", (unsigned long long)(uintptr_t)src,
             (unsigned long long)(uintptr_t)dst);
    px_boot_put("conf.buf", val, strlen(val) + 1);
    px_boot_fence();
    if (px_boot_get(peer, "conf.buf", val, sizeof(val), &vlen) == PX_OK)
        sscanf(val, "%llx %llx", &psrc, &pdst);
    px_net_ep_t *ep = conns[0].ep;
    px_status_t gst = ops->ep_get(ep, local, psrc, len);
    px_status_t pst = ops->ep_put(ep, src, pdst, len);
    px_net_attr_t now;
    ops->iface_query(iface, &now);
    if (attr.caps & PX_NET_CAP_GET) {
        /* the kernel may refuse cross-process copies: the bit goes with them */
        EXPECT(gst == PX_OK || (gst == PX_ERR_UNSUPPORTED && !(now.caps & PX_NET_CAP_GET)),
               "ep_get: %s", px_status_name(gst));
        EXPECT(pst == PX_OK || (pst == PX_ERR_UNSUPPORTED && !(now.caps & PX_NET_CAP_GET)),
               "ep_put: %s", px_status_name(pst));
        if (gst == PX_OK) {
            size_t k = 0;
            while (k < len && local[k] == pat((uint32_t)peer + 1000, k))
                k++;
            EXPECT(k == len, "ep_get: byte %zu of %zu differs", k, len);
        }
    } else {
        EXPECT(gst == PX_ERR_UNSUPPORTED, "ep_get without PX_NET_CAP_GET: %s", px_status_name(gst));
        EXPECT(pst == PX_ERR_UNSUPPORTED, "ep_put without PX_NET_CAP_GET: %s", px_status_name(pst));
    }
    snprintf(val, sizeof(val), "%d", (int)pst);
    px_boot_put("conf.put", val, strlen(val) + 1);
    px_boot_fence();
    if (px_boot_get(peer, "conf.put", val, sizeof(val), &vlen) == PX_OK && atoi(val) == PX_OK) {
        size_t k = 0;
        while (k < len && dst[k] == pat((uint32_t)peer + 1000, k))
            k++;
        EXPECT(k == len, "ep_put by rank %d: byte %zu of %zu differs", peer, k, len);
    }
    conf_barrier();
    free(src);
    free(dst);
    free(local);
}

static void phase_path_check(void)
{
    int p = 0;
    if (attr.caps & PX_NET_CAP_PATH_CHECK) {
        uint64_t t0 = px_time_ns();
        while ((p = ops->ep_path_check(conns[0].ep, 2000000000ull)) == 0 &&
               px_time_ns() - t0 < 5000000000ull)
            usleep(1000);
        EXPECT(p == 1, "ep_path_check of a live path: %d", p);
    } else {
        p = ops->ep_path_check(conns[0].ep, 1000000);
        EXPECT(p == PX_ERR_UNSUPPORTED, "ep_path_check without PX_NET_CAP_PATH_CHECK: %d", p);
    }
    conf_barrier();
}

/* Each rank receives a bulk transfer from the other on the last
 * subchannel, at the same time as it sends one. */
static void phase_bulk(void)
{
    const size_t len = (3u << 20) + 4321;
    unsigned char *src = malloc(len), *dst = calloc(1, len);
    for (size_t k = 0; k < len; k++)
        src[k] = pat((uint32_t)me + 2000, k);
    bulk.sub = nsub - 1;
    px_net_ep_t *ep = conns[bulk.sub].ep;
    px_net_bulk_offer_t mine = {0}, theirs = {0};
    px_status_t rst = ops->ep_bulk_recv(ep, dst, len, &bulk.rx_arg, &mine);
    if (!(attr.caps & PX_NET_CAP_BULK)) {
        EXPECT(rst == PX_ERR_UNSUPPORTED, "ep_bulk_recv without PX_NET_CAP_BULK: %s",
               px_status_name(rst));
        px_status_t sst = ops->ep_bulk_send(ep, &mine, src, len, &bulk.tx_arg);
        EXPECT(sst == PX_ERR_UNSUPPORTED, "ep_bulk_send without PX_NET_CAP_BULK: %s",
               px_status_name(sst));
        EXPECT(ops->ep_bulk_cancel(ep, &bulk.rx_arg) == 0, "ep_bulk_cancel of nothing");
        conf_barrier();
        free(src);
        free(dst);
        return;
    }
    EXPECT(rst == PX_OK, "ep_bulk_recv: %s", px_status_name(rst));
    char val[128];
    size_t vlen;
    snprintf(val, sizeof(val), "%llx %x %x %x", (unsigned long long)mine.token, mine.window,
             mine.dgram, mine.port);
    px_boot_put("conf.bulk", val, strlen(val) + 1);
    px_boot_fence();
    unsigned long long token = 0;
    unsigned window = 0, dgram = 0, port = 0;
    if (px_boot_get(peer, "conf.bulk", val, sizeof(val), &vlen) == PX_OK)
        sscanf(val, "%llx %x %x %x", &token, &window, &dgram, &port);
    theirs = (px_net_bulk_offer_t){token, window, dgram, (uint16_t)port};
    px_status_t sst = ops->ep_bulk_send(ep, &theirs, src, len, &bulk.tx_arg);
    EXPECT(sst == PX_OK, "ep_bulk_send: %s", px_status_name(sst));
    uint64_t t0 = px_time_ns();
    while ((bulk.rx_done < 1 || bulk.tx_done < (sst == PX_OK)) && px_time_ns() - t0 < CONF_WAIT_NS)
        conf_progress();
    EXPECT(bulk.rx_done == 1 && bulk.rx_st == PX_OK, "receiver: %d bulk_done, %s", bulk.rx_done,
           px_status_name(bulk.rx_st));
    EXPECT(bulk.tx_done == 1 && bulk.tx_st == PX_OK, "sender: %d bulk_done, %s", bulk.tx_done,
           px_status_name(bulk.tx_st));
    EXPECT(bulk.got == len, "progress told: %llu of %zu", (unsigned long long)bulk.got, len);
    EXPECT(!bulk.bad_owner && !bulk.bad_arg, "upcalls with another owner %d or arg %d",
           bulk.bad_owner, bulk.bad_arg);
    size_t k = 0;
    while (k < len && dst[k] == pat((uint32_t)peer + 2000, k))
        k++;
    EXPECT(k == len, "bulk transfer: byte %zu of %zu differs", k, len);
    EXPECT(ops->ep_bulk_cancel(ep, &bulk.rx_arg) == 0, "ep_bulk_cancel of a finished transfer");
    /* the peer may still wait for a progress frame of ours */
    conf_wait(PH_BULK, 0);
    conf_barrier();
    free(src);
    free(dst);
}

/* Rank 0 queues bulk frames while rank 1 waits in a barrier, more than the
 * kernels' buffers hold, then ordered frames. */
static void phase_overtake(void)
{
    const int nb = 12, no = 3;
    const size_t big = (size_t)2 << 20;
    if (me == 0) {
        tx_bulk = 1;
        for (int i = 0; i < nb; i++)
            EXPECT(conf_send(&conns[0], PH_LATE, big, 0) >= 0, "bulk send %d", i);
        tx_bulk = 0;
        for (int i = 0; i < no; i++)
            EXPECT(conf_send(&conns[0], PH_OVERTAKE, 100 + (size_t)i, 0) >= 0, "ordered send %d",
                   i);
    }
    conf_barrier();
    int done = conf_wait(PH_LATE, me == 1 ? nb : 0);
    done = done && conf_wait(PH_OVERTAKE, me == 1 ? no : 0);
    EXPECT(tx_errors == 0 && tx_cb_errors == 0, "send errors %d, callbacks with an error %d",
           tx_errors, tx_cb_errors);
    EXPECT(rx_bad == 0 && rx_unknown == 0, "%d frames damaged, %d rx_done without rx_begin", rx_bad,
           rx_unknown);
    if (me == 1) {
        EXPECT(done && conf_received(PH_LATE) == nb && conf_received(PH_OVERTAKE) == no,
               "%d of %d bulk and %d of %d ordered frames", conf_received(PH_LATE), nb,
               conf_received(PH_OVERTAKE), no);
        EXPECT(conf_out_of_order(PH_OVERTAKE) == 0, "ordered frames out of order");
        if (ops->ep_send_bulk != ops->ep_send)
            EXPECT(overtake_after[0] < nb, "the first ordered frame came after all %d bulk frames",
                   nb);
        else
            EXPECT(overtake_after[0] == nb, "an ordered frame came after %d of %d bulk frames",
                   overtake_after[0], nb);
    }
    EXPECT(failed_calls == 0, "ep_failed %d times", failed_calls);
    conf_barrier();
}

/* Large frames flagged to be cancelled once in flight, each followed by a
 * small one that must still arrive whole. */
static void phase_cancel(void)
{
    const int rounds = 3;
    size_t big = lossy ? attr.max_frag : (size_t)24 << 20;
    if (!lossy && (attr.caps & PX_NET_CAP_RESET)) {
        /* larger than a stream's receive buffer can grow, or a receiver
         * slower than its sender may find a frame whole at its first read */
        unsigned long lo, def, max = 0;
        FILE *f = fopen("/proc/sys/net/ipv4/tcp_rmem", "r");
        if (f && fscanf(f, "%lu %lu %lu", &lo, &def, &max) == 3 && max + ((size_t)1 << 20) > big)
            big = max + ((size_t)1 << 20);
        if (f)
            fclose(f);
    }
    cancel_driver = 1;
    for (int i = 0; i < rounds; i++) {
        EXPECT(conf_send(&conns[0], PH_CANCEL, big, F_CANCEL) >= 0, "send of a frame to cancel");
        EXPECT(conf_send(&conns[0], PH_CANCEL, 1000 + (size_t)i, 0) >= 0, "send after it");
        conf_progress();
    }
    int done = conf_wait(PH_CANCEL, 2 * rounds);
    cancel_driver = 0;
    EXPECT(tx_errors == 0 && tx_cb_errors == 0, "send errors %d, callbacks with an error %d",
           tx_errors, tx_cb_errors);
    EXPECT(rx_bad == 0 && rx_unknown == 0, "%d frames damaged, %d rx_done without rx_begin", rx_bad,
           rx_unknown);
    if (!lossy) {
        EXPECT(done && conf_received(PH_CANCEL) == 2 * rounds,
               "%d of %d frames (rx_done must "
               "run for a cancelled one)",
               conf_received(PH_CANCEL), 2 * rounds);
        EXPECT(conf_out_of_order(PH_CANCEL) == 0, "%d out of order", conf_out_of_order(PH_CANCEL));
        EXPECT(rx_abandoned == 0, "%d frames begun and never done", rx_abandoned);
    }
    if (attr.caps & PX_NET_CAP_RESET) {
        /* a stream shows a large frame in flight between two polls; a
         * transport that delivers frames whole has nothing to cancel */
        if (!lossy)
            EXPECT(rx_cancel_seen > 0, "no frame of %zu bytes was ever in flight", big);
        EXPECT(rx_cancel_discarded == rx_cancel_seen, "%d of %d cancelled frames kept their tail",
               rx_cancel_seen - rx_cancel_discarded, rx_cancel_seen);
    } else {
        EXPECT(rx_cancel_whole == rx_cancel_seen,
               "without PX_NET_CAP_RESET, %d of %d frames "
               "ep_rx_cancel was called on arrived whole",
               rx_cancel_whole, rx_cancel_seen);
    }
    EXPECT(failed_calls == 0, "ep_failed %d times", failed_calls);
    conf_barrier();
}

/* ep_reset with sends queued. With PX_NET_CAP_RESET, rank 1 stops reading
 * (it waits in a barrier) so that rank 0's sends queue up; rank 0 resets,
 * then sends markers that must arrive over a fresh connection. Without
 * it, ep_reset and ep_rx_cancel must lose nothing. */
static void phase_reset(void)
{
    const size_t big = lossy ? attr.max_frag : (size_t)8 << 20;
    const int markers = 3;
    int sender = me == 0;
    int reset_drops = (attr.caps & PX_NET_CAP_RESET) && info.size > 1;
    if (reset_drops) {
        if (sender) {
            int n = 0, before = tx_outstanding;
            while (n < 64 && (lossy ? n < 20 : ops->ep_pending(conns[0].ep) == 0)) {
                px_status_t st = conf_send(&conns[0], PH_RESET, big, 0);
                EXPECT(st == PX_OK || st == PX_INPROGRESS, "send %d: %s", n, px_status_name(st));
                n++;
            }
            if (!lossy)
                EXPECT(ops->ep_pending(conns[0].ep) > 0 && tx_outstanding > before,
                       "nothing queued after %d sends of %zu bytes to a rank that does not read", n,
                       big);
            if (!lossy && ops->ep_withdraw != px_net_stub_ep_withdraw) {
                /* two more wait whole behind the one being written: all
                 * three come back, with their callbacks (the rest of the
                 * one begun goes on from the transport's copy), and the
                 * connection stays */
                for (int k = 0; k < 2; k++)
                    EXPECT(conf_send(&conns[0], PH_RESET, big, 0) == PX_INPROGRESS,
                           "send behind a full connection did not queue");
                int out = tx_outstanding, e0 = tx_cb_errors, f0 = failed_calls;
                size_t pend = ops->ep_pending(conns[0].ep);
                ops->ep_withdraw(conns[0].ep);
                int back = tx_cb_errors - e0;
                EXPECT(back >= 3 && tx_outstanding == before,
                       "ep_withdraw ended %d of %d queued sends", back, out - before);
                EXPECT(ops->ep_pending(conns[0].ep) + 2 * big <= pend,
                       "%zu bytes pending after ep_withdraw (%zu before)",
                       ops->ep_pending(conns[0].ep), pend);
                EXPECT(failed_calls == f0 && ops->ep_ready(conns[0].ep),
                       "ep_withdraw closed the connection");
                tx_cb_errors = e0;
            }
            int queued = tx_outstanding - before, errs = tx_cb_errors, failed = failed_calls;
            ops->ep_reset(conns[0].ep);
            EXPECT(tx_outstanding == before, "%d queued sends still pending after ep_reset",
                   tx_outstanding - before);
            EXPECT(tx_cb_errors - errs == queued, "%d of %d queued sends ended with an error",
                   tx_cb_errors - errs, queued);
            EXPECT(ops->ep_pending(conns[0].ep) == 0, "%zu bytes pending after ep_reset",
                   ops->ep_pending(conns[0].ep));
            EXPECT(failed_calls == failed, "ep_reset reported ep_failed");
            tx_cb_errors = errs; /* those were meant */
        }
        conf_barrier();
    } else if (sender) {
        for (int i = 0; i < 3; i++)
            EXPECT(conf_send(&conns[0], PH_RESET, big + (size_t)i, 0) >= 0, "send %d", i);
        ops->ep_reset(conns[0].ep);
        ops->ep_rx_cancel(conns[0].ep);
    }
    if (sender) {
        for (int i = 0; i < (lossy ? 5 * markers : markers); i++) {
            EXPECT(conf_send(&conns[0], PH_MARKER, 100 + (size_t)i, 0) >= 0, "marker %d", i);
            for (uint64_t t = px_time_ns(); lossy && px_time_ns() - t < 20000000ull;)
                conf_progress();
        }
    }
    int receiver = me == 1 || info.size == 1;
    if (receiver) {
        int done = conf_wait(PH_MARKER, markers);
        EXPECT(rx_bad == 0, "%d frames damaged", rx_bad);
        if (lossy) {
            EXPECT(conf_received(PH_MARKER) > 0, "no marker arrived after ep_reset");
        } else {
            EXPECT(done && conf_received(PH_MARKER) == markers, "%d of %d markers after ep_reset",
                   conf_received(PH_MARKER), markers);
            EXPECT(conf_out_of_order(PH_MARKER) == 0, "markers out of order");
        }
        if (!reset_drops && !lossy) {
            EXPECT(conf_received(PH_RESET) == 3 && conf_out_of_order(PH_RESET) == 0,
                   "without PX_NET_CAP_RESET, %d of 3 frames before ep_reset arrived",
                   conf_received(PH_RESET));
            EXPECT(failed_calls == 0 && rx_abandoned == 0, "ep_failed %d, frames abandoned %d",
                   failed_calls, rx_abandoned);
        }
    } else {
        EXPECT(conf_wait(PH_MARKER, 0), "markers not sent");
        /* a provider that moves data only while polled (libfabric's ofi_rxm
         * completes a send once queued) still holds them: poll on a while,
         * as a process waiting in MPI would */
        for (uint64_t t = px_time_ns(); px_time_ns() - t < CONF_QUIET_NS;)
            conf_progress();
    }
    if (sender)
        EXPECT(tx_cb_errors == 0 && tx_errors == 0, "send errors %d, callbacks with an error %d",
               tx_errors, tx_cb_errors);
    conf_barrier();
}

int main(int argc, char **argv)
{
    name = argc > 1 ? argv[1] : getenv("PX_NET");
    px_status_t st = px_boot_init(&info);
    if (st != PX_OK || !name) {
        fprintf(stderr, "usage: [pxrun -n 2] conformance TRANSPORT (boot: %s)\n",
                px_status_name(st));
        return 2;
    }
    me = info.rank;
    peer = info.size == 1 ? me : me ^ 1;
    ops = px_net_find(name);
    EXPECT(ops != NULL, "no transport named %s", name);
    if (ops && (info.size == 1) != !strcmp(name, "self")) {
        fprintf(stderr, "%s: run self alone and the others with two ranks\n", name);
        return 2;
    }
    if (ops) {
        int failed = px_unit_failed;
        check_table();
        if (px_unit_failed != failed) /* a NULL member: calling it would only crash */
            ops = NULL;
    }
    if (ops) {
        st = ops->iface_open(&info, &conf_rx_ops, &conf_owner, &iface);
        EXPECT(st == PX_OK, "iface_open: %s", px_status_name(st));
    }
    if (ops && st == PX_OK) {
        px_boot_fence(); /* what iface_open published */
        ops->iface_query(iface, &attr);
        lossy = !!(attr.caps & PX_NET_CAP_LOSSY);
        check_attr();
        check_reach();
        if (info.size > 1)
            phase_incoming();
        else
            conf_make_eps();
        if (nsub) {
            check_limits();
            phase_stream();
            phase_get_put();
            phase_path_check();
            if (info.size > 1)
                phase_bulk();
            if (info.size > 1 && !lossy)
                phase_overtake();
            phase_cancel();
            phase_reset();
        }
        ops->iface_close(iface);
    }

    /* the job's total, from rank 0 */
    char val[64];
    size_t len;
    int passed = px_unit_passed, failed = px_unit_failed;
    snprintf(val, sizeof(val), "%d %d", passed, failed);
    px_boot_put("conf.result", val, strlen(val) + 1);
    px_boot_fence();
    if (me == 0) {
        for (int r = 1; r < info.size; r++) {
            int p = 0, f = 1;
            if (px_boot_get(r, "conf.result", val, sizeof(val), &len) == PX_OK)
                sscanf(val, "%d %d", &p, &f);
            passed += p;
            failed += f;
        }
        printf("%s: %d passed, %d failed\n", name, passed, failed);
    }
    px_boot_barrier();
    px_boot_finalize();
    return px_unit_failed ? 1 : 0;
}
