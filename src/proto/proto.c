#include "proto.h"

#include "chan_rules.h"
#include "zcopy.h"
#include "../net/net.h"
#include "../rail/rail.h"
#include "../util/clock.h"
#include "../util/cs.h"
#include "../util/log.h"
#include "../util/param.h"

#include <errno.h>
#include <stddef.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* ---------- wire format ---------- */

enum {
    PX_AM_EAGER = 1,
    PX_AM_RTS = 2,
    PX_AM_CTS = 3,
    PX_AM_DATA = 4,
    PX_AM_FIN = 5,
    PX_AM_SYNC_ACK = 6,
    PX_AM_RC = 7, /* hybrid: a = PX_RC_ASK, PX_RC_YES or PX_RC_NO */
    PX_AM_ZCTS = 8, /* udp-zcopy clear-to-send */
    PX_AM_ZACK = 9, /* udp-zcopy: bytes received in order */
    PX_AM_MAX
};
#define PX_AM_FLAG_SYNC 1
#define PX_AM_FLAG_ZCOPY 2 /* RTS: the sender asks for udp-zcopy */

typedef struct px_am_hdr {
    uint8_t am, flags;
    uint16_t pad;
    int32_t src, tag;
    uint32_t ctx;
    uint64_t a, b, c, d, e, f; /* by type: see px_am_hdr_len */
} px_am_hdr_t;

_Static_assert(offsetof(px_am_hdr_t, a) == 16, "the envelope is the first 16 bytes");

/* EAGER: a = sender's request (sync only). RTS: a = size, b = sender's
 * request, c = sender's buffer address; over network channels its payload
 * may be the message's first bytes (PX_RNDV_HEAD). CTS: a = sender's request, b =
 * receiver's request, c = bytes accepted. DATA: a = receiver's request,
 * b = offset. FIN / SYNC_ACK: a = sender's request. ZCTS: a = sender's
 * request, b = receiver's request, c = bytes accepted, d = port | data
 * bytes per datagram << 16 | window << 32, e = token, f = the receiving
 * socket's IPv4 address. ZACK: a = sender's
 * request, b = bytes received in order. */
static const uint8_t px_am_hdr_len[PX_AM_MAX] = {
    [PX_AM_EAGER] = 16, [PX_AM_RTS] = 40, [PX_AM_CTS] = 40,
    [PX_AM_DATA] = 32,  [PX_AM_FIN] = 24, [PX_AM_SYNC_ACK] = 24, [PX_AM_RC] = 24,
    [PX_AM_ZCTS] = 64,  [PX_AM_ZACK] = 32,
};

/* ---------- state ---------- */

enum { PX_CHAN_SELF, PX_CHAN_SHM, PX_CHAN_RAIL };

/* What carried a message, for the profile's channel volume. */
enum { PX_CAR_SELF, PX_CAR_SHM, PX_CAR_UDP, PX_CAR_TCP, PX_CAR_N };

/* With datagrams and connections both enabled (hybrid), a network peer's
 * connection goes NONE -> ASKED (enough traffic: the peer is asked, over
 * datagrams, whether it has room for one more connection) -> WANTED (it
 * said yes, or it asked us and we had room) -> ACTIVE (once nothing sent
 * over datagrams is unacknowledged). A peer that says no is not asked
 * again. */
enum { PX_RC_NONE, PX_RC_ASKED, PX_RC_WANTED, PX_RC_ACTIVE };
enum { PX_RC_ASK = 1, PX_RC_YES = 2, PX_RC_NO = 3 };

typedef struct px_proto_peer {
    int rank;
    int kind;
    int failed;
    int can_get;
    size_t eager_limit;
    size_t chunk;            /* rendezvous data per frame */
    const px_net_ops_t *ops; /* self and shm */
    px_net_ep_t *ep;
    px_rail_vc_t *vc;
    px_rail_vc_t *vc_rc;     /* hybrid: the connection, created when wanted */
    uint8_t hybrid;          /* a connection may be opened to it */
    uint8_t rc;
    uint8_t rc_in;           /* the peer asked for it */
    uint8_t rc_denied;       /* the peer had no room: stay on datagrams */
    uint32_t rc_qual;        /* messages that count towards opening it */
    /* per-channel receive state: frames of one channel arrive one at a time */
    size_t rx_len;
    uint64_t msgs_tx, bytes_tx, msgs_rx, bytes_rx, rndv_tx;
    /* PX_CHANNELS: the channel the last matchable message (eager or
     * rendezvous request) took; another one is used only once everything
     * sent over this one is acknowledged, so no message overtakes another */
    px_rail_vc_t *env_vc;
    uint64_t car_msgs[PX_CAR_N], car_bytes[PX_CAR_N]; /* sent, by what carried the data */
    uint64_t fenced; /* messages kept on env_vc to stay in order */
} px_proto_peer_t;

struct px_proto_unexp {
    px_list_t link;
    uint32_t ctx;
    int src, tag, peer;
    uint8_t am, flags;
    uint8_t arrived;
    size_t size;
    size_t head; /* RTS: bytes of the message that came with it (in data) */
    uint64_t sreq, addr;
    char *data;
    px_proto_req_t *req; /* a receive waiting for the payload to arrive */
    char inline_data[];
};

/* ctx values handed to rx_done, tagged in the low bits */
#define PX_RX_REQ 1u
#define PX_RX_UNEXP 2u
#define PX_RX_DATA 3u
#define PX_RX_TAG(p, t) ((void *)((uintptr_t)(p) | (t)))
#define PX_RX_PTR(c) ((void *)((uintptr_t)(c) & ~(uintptr_t)3))
#define PX_RX_KIND(c) ((unsigned)((uintptr_t)(c)&3))

static struct {
    px_boot_info_t boot;
    px_proto_peer_t *peers;
    px_net_iface_t *self_if, *shm_if;
    px_rail_t *rail;
    px_rail_t *rail_rc; /* hybrid: connections beside the datagrams of rail */
    int rc_active;      /* some connection is wanted or in use: poll rail_rc */
    int rc_out, rc_in;  /* connections we opened / the peers opened */
    int rc_fast;        /* ... of them on every rail and path (PX_RC_FAST_MAX) */
    size_t rc_size;     /* smallest message that counts towards one */
    size_t rc_unit;     /* bytes per count (0: one per message) */
    int epfd;           /* hybrid: both rails' descriptors, to sleep on */
    unsigned rc_tick;
    int self_active; /* something was ever sent to self: poll its queue */
    int rail_active;
    int rail_peers; /* some peer is reached over the network */
    int rail_fd;
    int oversub;
    int start_cpu; /* PX_BIND=spread: CPU to start on (px_proto_spread), else -1 */
    size_t shm_eager; /* PX_SHM_EAGER_LIMIT, 'auto' resolved */
    unsigned spin_limit;
    enum { PX_WAIT_AUTO, PX_WAIT_SPIN, PX_WAIT_YIELD, PX_WAIT_BLOCK } mode;
    int block_ok;
    int finalizing;
    unsigned tick;
    px_list_t posted, unexp;
    /* wire identifiers of requests a peer may name */
    px_proto_req_t **ids;
    uint32_t *gens;
    uint32_t nids, free_id;
    uint64_t n_unexp, n_eager, n_rndv;
    /* PX_CHANNELS */
    px_chr_table_t chr;
    uint64_t chr_hits[PX_CHR_MAX + 1]; /* the last one: no entry applied */
    int vc_car;                        /* what a peer's first rail is: PX_CAR_UDP or _TCP */
    size_t car_eager[PX_CAR_N], car_chunk[PX_CAR_N];
    int zc_used; /* udp-zcopy transfers happened: poll their sockets and timers */
} px_p;

/* ---------- request identifiers (validated on arrival) ---------- */

#define PX_ID_NONE 0xffffffffu

static uint64_t px_proto_id_get(px_proto_req_t *req)
{
    uint32_t i = px_p.free_id;
    if (i == PX_ID_NONE) {
        uint32_t n = px_p.nids ? px_p.nids * 2 : 256;
        px_proto_req_t **ids = realloc(px_p.ids, sizeof(*ids) * n);
        uint32_t *gens = ids ? realloc(px_p.gens, sizeof(*gens) * n) : NULL;
        if (ids)
            px_p.ids = ids;
        if (!gens)
            return 0;
        px_p.gens = gens;
        for (uint32_t k = px_p.nids; k < n; k++) {
            px_p.ids[k] = (px_proto_req_t *)(uintptr_t)(k + 1 < n ? k + 1 : PX_ID_NONE);
            px_p.gens[k] = 1;
        }
        i = px_p.nids;
        px_p.nids = n;
    }
    px_p.free_id = (uint32_t)(uintptr_t)px_p.ids[i];
    px_p.ids[i] = req;
    req->id = ((uint64_t)px_p.gens[i] << 32) | i;
    return req->id;
}

static void px_proto_id_put(px_proto_req_t *req)
{
    if (!req->id)
        return;
    uint32_t i = (uint32_t)req->id;
    px_p.gens[i]++;
    px_p.ids[i] = (px_proto_req_t *)(uintptr_t)px_p.free_id;
    px_p.free_id = i;
    req->id = 0;
}

static px_proto_req_t *px_proto_id_lookup(uint64_t id)
{
    uint32_t i = (uint32_t)id;
    if (i >= px_p.nids || px_p.gens[i] != (uint32_t)(id >> 32))
        return NULL;
    return px_p.ids[i];
}

/* ---------- channels ---------- */

/* Hybrid: the connection is used once it is established (the side that
 * asked for it opens it in the background while datagrams carry on; the
 * other side waits for it to arrive) and nothing sent over datagrams is
 * unacknowledged, so that nothing sent over it overtakes them. */
static void px_proto_rc_switch(px_proto_peer_t *p)
{
    if (px_rail_vc_ready(p->vc_rc) < (p->rc_in ? 1 : 2) || px_rail_vc_pending(p->vc) ||
        px_rail_vc_unacked(p->vc))
        return;
    p->rc = PX_RC_ACTIVE;
    px_debug("proto", "rank %d: connection in use (%s)", p->rank,
             p->rc_in ? "opened by the peer" : "opened after enough traffic");
}

/* The virtual channel of a network peer's next frame. */
static inline px_rail_vc_t *px_peer_vc(px_proto_peer_t *p)
{
    if (__builtin_expect(p->rc == PX_RC_WANTED, 0))
        px_proto_rc_switch(p);
    return p->rc == PX_RC_ACTIVE ? p->vc_rc : p->vc;
}

static void px_proto_rc_ask(px_proto_peer_t *p);

/* Hybrid: one more message to p; asks for a connection once enough of them
 * were large enough and this process holds fewer than PX_MAX_RC_CONN. A
 * message counts once per PX_RC_PROMOTE_SIZE it holds: a peer sent a few
 * large messages carries as much as one sent many medium ones, and bulk
 * data is what a connection carries best. */
static inline void px_proto_rc_count(px_proto_peer_t *p, size_t len)
{
    if (p->rc != PX_RC_NONE || p->rc_denied || len < px_p.rc_size)
        return;
    size_t units = px_p.rc_unit ? len / px_p.rc_unit : 1;
    p->rc_qual = units >= UINT32_MAX - p->rc_qual ? UINT32_MAX : p->rc_qual + (uint32_t)units;
    if (p->rc_qual >= (uint32_t)px_params.rc_promote_after &&
        px_p.rc_out + px_p.rc_in < px_params.max_rc_conn)
        px_proto_rc_ask(p);
}

/* Sends over vc (a network peer's chosen channel) or the peer's own
 * shared-memory or self channel. */
static inline px_status_t px_chan_send_on(px_proto_peer_t *p, px_rail_vc_t *vc,
                                          const px_am_hdr_t *h, size_t hl,
                                          const struct iovec *iov, int iovcnt, unsigned rflags,
                                          px_net_send_cb_t cb, void *arg)
{
    if (p->kind == PX_CHAN_RAIL) {
        px_p.rail_active = 1;
        return px_rail_vc_send(vc, h, hl, iov, iovcnt, rflags, cb, arg);
    }
    if (p->kind == PX_CHAN_SELF)
        px_p.self_active = 1;
    return p->ops->ep_send(p->ep, h, hl, iov, iovcnt, cb, arg);
}

static inline px_status_t px_chan_send(px_proto_peer_t *p, const px_am_hdr_t *h,
                                       const struct iovec *iov, int iovcnt, unsigned rflags,
                                       px_net_send_cb_t cb, void *arg)
{
    size_t hl = px_am_hdr_len[h->am];
    if (p->kind == PX_CHAN_RAIL) {
        px_p.rail_active = 1;
        return px_rail_vc_send(px_peer_vc(p), h, hl, iov, iovcnt, rflags, cb, arg);
    }
    if (p->kind == PX_CHAN_SELF)
        px_p.self_active = 1;
    return p->ops->ep_send(p->ep, h, hl, iov, iovcnt, cb, arg);
}

static void px_proto_complete(px_proto_req_t *req)
{
    px_proto_id_put(req);
    req->done = 1;
    if (req->cb)
        req->cb(req);
}

static void px_proto_send_cb(void *arg, px_status_t st)
{
    px_proto_req_t *req = arg;
    if (st != PX_OK)
        req->st_error = st;
    if (--req->pending == 0)
        px_proto_complete(req);
}

static void px_proto_ctrl(px_proto_peer_t *p, uint8_t am, uint64_t a, uint64_t b, uint64_t c)
{
    px_am_hdr_t h = {.am = am, .a = a, .b = b, .c = c};
    px_status_t st = px_chan_send(p, &h, NULL, 0, 0, NULL, NULL);
    if (st < 0)
        px_error("proto", "cannot send control message %u to rank %d: %s", am, p->rank,
                 px_status_string(st));
}

/* ---------- hybrid: connections by agreement ---------- */

/* The connection's channel (connected on first use): the first
 * PX_RC_FAST_MAX get the fastest path, every rail and path to the peer;
 * the others one subchannel and one socket. */
static int px_proto_rc_vc(px_proto_peer_t *p)
{
    if (px_rail_vc_create(px_p.rail_rc, p->rank, p, &p->vc_rc) != PX_OK)
        return -1;
    if (px_p.rc_fast < px_params.rc_fast_max)
        px_p.rc_fast++;
    else
        px_rail_vc_set_single(p->vc_rc);
    px_debug("proto", "rank %d: connection on %s", p->rank,
             px_rail_vc_single(p->vc_rc) ? "one subchannel" : "every subchannel");
    return 0;
}

/* Its channel on the connection rail (connected on first use). */
static int px_proto_rc_want(px_proto_peer_t *p)
{
    if (!p->vc_rc && px_proto_rc_vc(p) != 0)
        return -1;
    p->rc = PX_RC_WANTED;
    px_p.rc_active = 1;
    return 0;
}

static void px_proto_rc_ask(px_proto_peer_t *p)
{
    p->rc = PX_RC_ASKED;
    px_p.rc_out++;
    px_proto_ctrl(p, PX_AM_RC, PX_RC_ASK, 0, 0);
}

/* A connection request or the answer to ours. Counts stay within
 * PX_MAX_RC_CONN on both sides (two requests crossing each other are one
 * connection that both count as theirs). */
static void px_proto_rc_msg(px_proto_peer_t *p, uint64_t what)
{
    switch (what) {
    case PX_RC_ASK:
        if (p->hybrid && p->rc == PX_RC_NONE &&
            px_p.rc_out + px_p.rc_in < px_params.max_rc_conn && px_proto_rc_want(p) == 0) {
            p->rc_in = 1;
            px_p.rc_in++;
        }
        px_proto_ctrl(p, PX_AM_RC, p->rc == PX_RC_NONE ? PX_RC_NO : PX_RC_YES, 0, 0);
        break;
    case PX_RC_YES:
        if (p->rc != PX_RC_ASKED)
            break;
        if (px_proto_rc_want(p) != 0) {
            p->rc = PX_RC_NONE;
            p->rc_denied = 1;
            px_p.rc_out--;
            break;
        }
        /* connected now, while messages still go as datagrams; they move
         * over once it is established (px_proto_rc_switch) */
        px_rail_vc_connect(p->vc_rc);
        break;
    case PX_RC_NO:
        if (p->rc == PX_RC_ASKED) {
            p->rc = PX_RC_NONE;
            p->rc_denied = 1;
            px_p.rc_out--;
        }
        break;
    default:
        px_error("proto", "invalid connection message %llu from rank %d",
                 (unsigned long long)what, p->rank);
    }
}

/* ---------- PX_CHANNELS: the channel of each message ---------- */

typedef struct {
    px_rail_vc_t *env;  /* network peers: carries the message, or its rendezvous request */
    px_rail_vc_t *data; /* network peers: carries rendezvous data */
    int car;            /* PX_CAR_* of what carries the data */
    uint8_t rndv;       /* rendezvous */
    uint8_t get;        /* the receiver may read the sender's buffer itself */
    uint8_t zc;         /* udp-zcopy */
} px_pick_t;

static inline int px_vc_car(const px_proto_peer_t *p, const px_rail_vc_t *vc)
{
    return vc == p->vc ? px_p.vc_car : PX_CAR_TCP;
}

static inline int px_chr_proto_ok(const px_chr_rule_t *r, int rndv)
{
    return r->proto == PX_CHR_PROTO_ANY || (r->proto == PX_CHR_PROTO_RNDV) == rndv;
}

/* The first entry of PX_CHANNELS whose condition holds and whose channel
 * the peer has; without one, the peer's default channel. A network
 * message stays on the channel of the previous one while that still has
 * unacknowledged frames (MPI's order between two messages to one peer);
 * a rendezvous request always does, since its data is addressed to its
 * receive and may take any channel. */
static inline void px_proto_pick(px_proto_peer_t *p, size_t len, int coll, px_pick_t *k)
{
    const px_chr_table_t *t = &px_p.chr;
    int i;
    if (p->kind != PX_CHAN_RAIL) {
        k->env = k->data = NULL;
        k->car = p->kind == PX_CHAN_SELF ? PX_CAR_SELF : PX_CAR_SHM;
        k->get = 1;
        k->zc = 0;
        k->rndv = len > p->eager_limit;
        for (i = 0; i < t->n; i++) {
            const px_chr_rule_t *r = &t->r[i];
            if (!px_chr_cond(r, len, coll))
                continue;
            if (r->chan == PX_CHR_SHM && px_chr_proto_ok(r, k->rndv))
                break;
            if (r->chan == PX_CHR_COPY) {
                k->rndv = 1;
                k->get = 0;
                break;
            }
        }
        px_p.chr_hits[i]++;
        return;
    }
    px_rail_vc_t *def = px_peer_vc(p);
    px_rail_vc_t *udp = px_p.vc_car == PX_CAR_UDP ? p->vc : NULL;
    px_rail_vc_t *tcp = px_p.vc_car == PX_CAR_TCP ? p->vc
                        : p->rc == PX_RC_ACTIVE ? p->vc_rc : NULL;
    px_rail_vc_t *c = NULL;
    int rndv = 0, zc = 0;
    for (i = 0; i < t->n; i++) {
        const px_chr_rule_t *r = &t->r[i];
        int forced = 0;
        if (!px_chr_cond(r, len, coll))
            continue;
        zc = 0;
        switch (r->chan) {
        case PX_CHR_UDP: c = udp; break;
        case PX_CHR_TCP: c = tcp; break;
        case PX_CHR_TCP_RNDV: c = tcp, forced = 1; break;
        case PX_CHR_UDP_RNDV: c = udp, forced = 1; break;
        case PX_CHR_UDP_ZCOPY: c = udp, forced = 1, zc = 1; break;
        case PX_CHR_COPY: c = def, forced = 1; break;
        default: c = NULL; /* shm: not to a network peer */
        }
        if (!c)
            continue;
        rndv = forced || len > px_p.car_eager[px_vc_car(p, c)];
        if (px_chr_proto_ok(r, rndv))
            break;
        c = NULL;
    }
    if (!c) {
        c = def;
        zc = 0;
        rndv = len > px_p.car_eager[px_vc_car(p, c)];
    }
    px_p.chr_hits[i]++;
    /* a message goes where the previous one went while that has frames
     * unacknowledged; a rendezvous request then stays there alone (its
     * data is addressed to its receive and may take any channel) */
    px_rail_vc_t *env = c;
    if (__builtin_expect(env != p->env_vc, 0) &&
        (px_rail_vc_unacked(p->env_vc) || px_rail_vc_pending(p->env_vc))) {
        env = p->env_vc;
        if (!rndv) {
            c = env;
            p->fenced++;
            rndv = len > px_p.car_eager[px_vc_car(p, c)];
            zc = 0;
        }
    }
    p->env_vc = env;
    k->env = env;
    k->data = c;
    k->car = px_vc_car(p, c);
    k->rndv = (uint8_t)rndv;
    k->get = 0;
    k->zc = (uint8_t)zc;
}

/* ---------- rendezvous ---------- */

static int px_proto_zc_offer(px_proto_peer_t *p, px_proto_req_t *req, size_t n, uint64_t sreq);

/* The receive req met a rendezvous request for size bytes. head: bytes of
 * the message that came with the request; the caller counts them in
 * rndv_got as they land (the receive completes then if nothing else is
 * accepted). */
static void px_proto_rndv_start(px_proto_peer_t *p, px_proto_req_t *req, size_t size,
                                uint64_t sreq, uint64_t addr, unsigned flags, size_t head)
{
    size_t n = size < req->len ? size : req->len;
    if (size > req->len)
        req->st_error = PX_ERR_TRUNCATED;
    req->st_count = n;
    p->msgs_rx++;
    p->bytes_rx += n;
    if (p->can_get && addr && !head) { /* 0: the sender wants the data copied (PX_CHANNELS copy) */
        px_status_t st = n ? p->ops->ep_get(p->ep, req->buf, addr, n) : PX_OK;
        if (st == PX_OK) {
            px_proto_ctrl(p, PX_AM_FIN, sreq, 0, 0);
            px_proto_complete(req);
            return;
        }
        p->can_get = 0; /* e.g. process_vm_readv forbidden: copy instead */
    }
    req->rndv_total = n;
    req->rndv_got = 0;
    if ((flags & PX_AM_FLAG_ZCOPY) && !head && n && px_proto_zc_offer(p, req, n, sreq) == 0)
        return;
    /* the sender sends what lies beyond its head and below n */
    px_proto_ctrl(p, PX_AM_CTS, sreq, px_proto_id_get(req), n);
    if (n == 0 && !head)
        px_proto_complete(req);
}

/* An unexpected request's head has arrived and its receive is matched. */
static void px_proto_rndv_head_take(px_proto_req_t *req, px_proto_unexp_t *u)
{
    size_t m = u->head < req->rndv_total ? u->head : req->rndv_total;
    if (m)
        memcpy(req->buf, u->data, m);
    free(u->data);
    free(u);
    req->rndv_got += m;
    if (req->rndv_got == req->rndv_total)
        px_proto_complete(req);
}

static void px_proto_rndv_data(px_proto_peer_t *p, px_proto_req_t *req, size_t n)
{
    px_rail_vc_t *vc = req->dvc; /* the channel the rule chose for the data */
    size_t chunk = p->kind == PX_CHAN_RAIL
                       ? px_rail_vc_chunk(vc, px_p.car_chunk[px_vc_car(p, vc)])
                       : p->chunk;
    /* a send-only collective round (a broadcast's root) returns once its
     * frames are written: in smaller frames, the writes of a message up to
     * about 1 MB end earlier; a larger one goes faster in large writes,
     * which the kernel takes up to the socket's buffer as fast as it copies */
    if (p->kind == PX_CHAN_RAIL && (req->rflags & PX_RAIL_F_RELEASE)) {
        size_t small = px_params.rndv_release_chunk, large = px_params.rndv_release_large;
        if (n <= px_params.rndv_release_max) {
            if (small && small < chunk)
                chunk = small;
        } else if (px_vc_car(p, vc) == PX_CAR_TCP && large > chunk) {
            chunk = px_rail_vc_chunk(vc, large);
        }
    }
    for (size_t off = req->head; off < n; off += chunk) {
        size_t k = n - off < chunk ? n - off : chunk;
        px_am_hdr_t h = {.am = PX_AM_DATA, .a = req->rndv_total, .b = off};
        struct iovec iov = {(char *)req->buf + off, k};
        px_status_t st = px_chan_send_on(p, vc, &h, px_am_hdr_len[PX_AM_DATA], &iov, 1,
                                         PX_RAIL_F_STRIPE | req->rflags, px_proto_send_cb, req);
        if (st == PX_INPROGRESS)
            req->pending++;
        else if (st < 0)
            req->st_error = st;
    }
    if (p->kind == PX_CHAN_RAIL && (req->rflags & PX_RAIL_F_RELEASE))
        px_rail_prestage_end(vc, (const char *)req->buf + req->head);
    px_proto_send_cb(req, PX_OK); /* the wait for CTS is over */
}

/* ---------- udp-zcopy (src/proto/zcopy.c) ---------- */

/* Receiver: a pooled socket on the address of a working subchannel to p;
 * tells the sender where to stream. -1: copy instead. */
static int px_proto_zc_offer(px_proto_peer_t *p, px_proto_req_t *req, size_t n, uint64_t sreq)
{
    const px_net_sub_info_t *path;
    px_zc_offer_t o;
    if (p->kind != PX_CHAN_RAIL || px_p.vc_car != PX_CAR_UDP || !(path = px_rail_vc_path(p->vc)) ||
        px_zc_recv_post(p->rank, path->local_ip, path->dgram_max, req->buf, n, req, sreq, &o))
        return -1;
    px_am_hdr_t h = {.am = PX_AM_ZCTS, .a = sreq, .b = px_proto_id_get(req), .c = n,
                     .d = o.port | (uint64_t)o.dgram << 16 | (uint64_t)o.window << 32,
                     .e = o.token, .f = path->local_ip};
    px_status_t st = px_chan_send(p, &h, NULL, 0, 0, NULL, NULL);
    if (st < 0)
        px_error("proto", "cannot send control message %u to rank %d: %s", PX_AM_ZCTS, p->rank,
                 px_status_string(st));
    px_p.zc_used = 1;
    return 0;
}

/* Sender: the receiver's socket is ready. */
static void px_proto_zc_go(px_proto_peer_t *p, px_proto_req_t *req, const px_am_hdr_t *h)
{
    const px_net_sub_info_t *path = px_rail_vc_path(p->vc);
    px_zc_offer_t o = {.port = (uint16_t)h->d, .dgram = (uint32_t)(h->d >> 16) & 0xffff,
                       .window = (uint32_t)(h->d >> 32), .token = h->e};
    if (!path || !h->f || px_zc_send_start(p->rank, path->local_ip, (uint32_t)h->f, &o, req->buf,
                                  (size_t)h->c, req)) {
        px_error("proto", "udp-zcopy to rank %d: cannot start the transfer", p->rank);
        req->st_error = PX_ERR_IO;
        px_proto_send_cb(req, PX_OK);
        return;
    }
    px_p.zc_used = 1;
}

static void px_proto_zc_ack(int peer, uint64_t sreq, uint64_t got)
{
    px_proto_ctrl(&px_p.peers[peer], PX_AM_ZACK, sreq, got, 0);
}

static void px_proto_zc_recv_done(void *arg, px_status_t st)
{
    px_proto_req_t *req = arg;
    if (st != PX_OK)
        req->st_error = st;
    req->rndv_got = req->rndv_total;
    px_proto_complete(req);
}

static void px_proto_zc_send_done(void *arg, px_status_t st)
{
    px_proto_send_cb(arg, st); /* the wait for the receiver is over */
}

static const px_zc_ops_t px_proto_zc_ops = {
    .ack = px_proto_zc_ack,
    .recv_done = px_proto_zc_recv_done,
    .send_done = px_proto_zc_send_done,
};

/* ---------- matching ---------- */

static inline int px_match(uint32_t ctx, int src, int tag, uint32_t mctx, int msrc, int mtag)
{
    return ctx == mctx && (msrc == PX_ANY_SOURCE || msrc == src) &&
           (mtag == PX_ANY_TAG || mtag == tag);
}

static inline px_proto_req_t *px_proto_match_posted(uint32_t ctx, int src, int tag)
{
    px_list_t *e, *t;
    px_list_for_each_safe(e, t, &px_p.posted)
    {
        px_proto_req_t *r = px_container_of(e, px_proto_req_t, link);
        if (px_match(ctx, src, tag, r->ctx, r->rank, r->tag)) {
            px_list_del(e);
            return r;
        }
    }
    return NULL;
}

static void px_proto_set_status(px_proto_req_t *req, int src, int tag, int peer, size_t size)
{
    req->st_source = src;
    req->st_tag = tag;
    req->peer = peer;
    req->st_count = size < req->len ? size : req->len;
    if (size > req->len)
        req->st_error = PX_ERR_TRUNCATED;
}

/* A receive met an unexpected message (irecv or mrecv). */
static void px_proto_take_unexp(px_proto_req_t *req, px_proto_unexp_t *u)
{
    px_proto_peer_t *p = &px_p.peers[u->peer];
    req->st_source = u->src;
    req->st_tag = u->tag;
    req->peer = u->peer;
    if (u->am == PX_AM_RTS) {
        px_proto_rndv_start(p, req, u->size, u->sreq, u->addr, u->flags, u->head);
        if (!u->head)
            free(u);
        else if (u->arrived)
            px_proto_rndv_head_take(req, u);
        else
            u->req = req; /* rx_done finishes it */
        return;
    }
    px_proto_set_status(req, u->src, u->tag, u->peer, u->size);
    if (u->flags & PX_AM_FLAG_SYNC)
        px_proto_ctrl(p, PX_AM_SYNC_ACK, u->sreq, 0, 0);
    if (!u->arrived) {
        u->req = req; /* rx_done finishes it */
        return;
    }
    if (req->st_count)
        memcpy(req->buf, u->data, req->st_count);
    if (u->data != u->inline_data)
        free(u->data);
    free(u);
    px_proto_complete(req);
}

/* ---------- receive path (header and completion handlers) ---------- */

static void *px_proto_rx_begin_at(void *owner, const void *hdr, size_t hdr_len, size_t off,
                                  size_t payload_len, void **ctx_p)
{
    px_proto_peer_t *p = owner;
    px_am_hdr_t h;
    px_proto_req_t *req;

    *ctx_p = NULL;
    if (hdr_len < 1 || ((const uint8_t *)hdr)[0] == 0 || ((const uint8_t *)hdr)[0] >= PX_AM_MAX ||
        hdr_len < px_am_hdr_len[((const uint8_t *)hdr)[0]] || hdr_len > sizeof(h) ||
        (off && ((const uint8_t *)hdr)[0] != PX_AM_DATA)) {
        px_error("proto", "malformed message header from rank %d (%zu bytes)", p->rank, hdr_len);
        return NULL;
    }
    /* the common 16-byte envelope is copied inline; the rest only when sent */
    memcpy(&h, hdr, 16);
    h.a = h.b = h.c = h.d = h.e = h.f = 0;
    if (hdr_len > 16)
        memcpy((char *)&h + 16, (const char *)hdr + 16, hdr_len - 16);

    switch (h.am) {
    case PX_AM_EAGER:
        px_p.n_eager++;
        p->msgs_rx++;
        p->bytes_rx += payload_len;
        req = px_proto_match_posted(h.ctx, h.src, h.tag);
        if (req) {
            px_proto_set_status(req, h.src, h.tag, p->rank, payload_len);
            if (h.flags & PX_AM_FLAG_SYNC)
                px_proto_ctrl(p, PX_AM_SYNC_ACK, h.a, 0, 0);
            *ctx_p = PX_RX_TAG(req, PX_RX_REQ);
            if (payload_len > req->len) {
                req->tmp = malloc(payload_len);
                return req->tmp;
            }
            return req->buf;
        } else {
            size_t inl = payload_len <= 256 ? payload_len : 0;
            px_proto_unexp_t *u = malloc(sizeof(*u) + inl);
            if (!u) {
                px_error("proto", "out of memory for an unexpected message of %zu bytes",
                         payload_len);
                return NULL;
            }
            u->data = inl || !payload_len ? u->inline_data : malloc(payload_len);
            if (!u->data) {
                free(u);
                return NULL;
            }
            u->ctx = h.ctx;
            u->src = h.src;
            u->tag = h.tag;
            u->peer = p->rank;
            u->am = PX_AM_EAGER;
            u->flags = h.flags;
            u->head = 0;
            u->arrived = 0;
            u->size = payload_len;
            u->sreq = h.a;
            u->req = NULL;
            px_list_insert_tail(&px_p.unexp, &u->link);
            px_p.n_unexp++;
            *ctx_p = PX_RX_TAG(u, PX_RX_UNEXP);
            return u->data;
        }
    case PX_AM_RTS:
        /* a head is smaller than the message, and never with a read of the
         * sender's memory or udp-zcopy */
        if (payload_len && (payload_len >= h.a || h.c || (h.flags & PX_AM_FLAG_ZCOPY))) {
            px_error("proto", "invalid rendezvous request from rank %d", p->rank);
            return NULL;
        }
        px_p.n_rndv++;
        req = px_proto_match_posted(h.ctx, h.src, h.tag);
        if (req) {
            req->st_source = h.src;
            req->st_tag = h.tag;
            req->peer = p->rank;
            px_proto_rndv_start(p, req, h.a, h.b, h.c, h.flags, payload_len);
            if (!payload_len)
                return NULL;
            if (payload_len <= req->rndv_total) { /* counted as rendezvous data */
                *ctx_p = PX_RX_TAG(req, PX_RX_DATA);
                return req->buf;
            }
            /* truncated within the head: nothing more comes */
            if (!(req->tmp = malloc(payload_len))) {
                px_error("proto", "out of memory for a message of %zu bytes", payload_len);
                return NULL;
            }
            *ctx_p = PX_RX_TAG(req, PX_RX_REQ);
            return req->tmp;
        } else {
            px_proto_unexp_t *u = malloc(sizeof(*u));
            if (!u)
                return NULL;
            u->data = payload_len ? malloc(payload_len) : NULL;
            if (payload_len && !u->data) {
                px_error("proto", "out of memory for an unexpected message of %zu bytes",
                         payload_len);
                free(u);
                return NULL;
            }
            u->ctx = h.ctx;
            u->src = h.src;
            u->tag = h.tag;
            u->peer = p->rank;
            u->am = PX_AM_RTS;
            u->flags = h.flags;
            u->arrived = !payload_len;
            u->size = h.a;
            u->head = payload_len;
            u->sreq = h.b;
            u->addr = h.c;
            u->req = NULL;
            px_list_insert_tail(&px_p.unexp, &u->link);
            px_p.n_unexp++;
            if (!payload_len)
                return NULL;
            *ctx_p = PX_RX_TAG(u, PX_RX_UNEXP);
            return u->data;
        }
    case PX_AM_CTS:
        req = px_proto_id_lookup(h.a);
        if (!req || req->kind != PX_PROTO_REQ_SEND || h.c > req->len) {
            px_error("proto", "invalid clear-to-send from rank %d", p->rank);
            return NULL;
        }
        req->rndv_total = h.b; /* the receiver's identifier travels in DATA.a */
        px_proto_rndv_data(p, req, h.c);
        return NULL;
    case PX_AM_DATA:
        req = px_proto_id_lookup(h.a);
        if (!req || req->kind != PX_PROTO_REQ_RECV || h.b > req->rndv_total ||
            off > req->rndv_total - h.b || payload_len > req->rndv_total - h.b - off) {
            px_error("proto", "invalid rendezvous data from rank %d", p->rank);
            return NULL;
        }
        *ctx_p = PX_RX_TAG(req, PX_RX_DATA);
        return (char *)req->buf + h.b + off;
    case PX_AM_RC:
        if (p->kind == PX_CHAN_RAIL)
            px_proto_rc_msg(p, h.a);
        return NULL;
    case PX_AM_ZCTS:
        req = px_proto_id_lookup(h.a);
        if (!req || req->kind != PX_PROTO_REQ_SEND || h.c > req->len || p->kind != PX_CHAN_RAIL) {
            px_error("proto", "invalid zero-copy clear-to-send from rank %d", p->rank);
            return NULL;
        }
        px_proto_zc_go(p, req, &h);
        return NULL;
    case PX_AM_ZACK:
        req = px_proto_id_lookup(h.a);
        if (!req || req->kind != PX_PROTO_REQ_SEND) {
            px_error("proto", "invalid zero-copy acknowledgement from rank %d", p->rank);
            return NULL;
        }
        px_zc_send_acked(req, h.b);
        return NULL;
    case PX_AM_FIN:
    case PX_AM_SYNC_ACK:
        req = px_proto_id_lookup(h.a);
        if (!req || req->kind != PX_PROTO_REQ_SEND) {
            px_error("proto", "invalid completion notice from rank %d", p->rank);
            return NULL;
        }
        px_proto_send_cb(req, PX_OK);
        return NULL;
    }
    return NULL;
}

static void px_proto_rx_done_len(void *owner, void *ctx, size_t len)
{
    (void)owner; /* completions are found through ctx */
    px_proto_req_t *req;
    px_proto_unexp_t *u;

    switch (PX_RX_KIND(ctx)) {
    case PX_RX_REQ:
        req = PX_RX_PTR(ctx);
        if (req->tmp) {
            memcpy(req->buf, req->tmp, req->st_count);
            free(req->tmp);
            req->tmp = NULL;
        }
        px_proto_complete(req);
        break;
    case PX_RX_UNEXP:
        u = PX_RX_PTR(ctx);
        u->arrived = 1;
        if (u->req && u->am == PX_AM_RTS) {
            px_proto_rndv_head_take(u->req, u);
        } else if (u->req) { /* matched while its payload was still arriving */
            req = u->req;
            if (req->st_count)
                memcpy(req->buf, u->data, req->st_count);
            if (u->data != u->inline_data)
                free(u->data);
            free(u);
            px_proto_complete(req);
        }
        break;
    case PX_RX_DATA:
        req = PX_RX_PTR(ctx);
        req->rndv_got += len;
        if (req->rndv_got == req->rndv_total)
            px_proto_complete(req);
        break;
    default:
        break;
    }
}

/* Everything that waits for `rank` ends with `why`: receives naming it,
 * rendezvous transfers and synchronous sends it was to answer (the channel
 * has already ended its queued sends). Receives from any source stay. */
static void px_proto_fail_peer(int rank, px_status_t why)
{
    px_list_t *e, *t;
    px_zc_fail_peer(rank);
    px_list_for_each_safe(e, t, &px_p.posted)
    {
        px_proto_req_t *r = px_container_of(e, px_proto_req_t, link);
        if (r->rank != PX_ANY_SOURCE && r->peer == rank) {
            px_list_del(e);
            r->st_error = why;
            px_proto_complete(r);
        }
    }
    for (uint32_t i = 0; i < px_p.nids; i++) {
        px_proto_req_t *r = px_p.ids[i];
        /* free slots hold small indices */
        if ((uintptr_t)r <= px_p.nids || (uintptr_t)r == PX_ID_NONE || r->done || r->peer != rank)
            continue;
        r->st_error = why;
        r->pending = 0;
        px_proto_complete(r);
    }
}

static void px_proto_ep_failed(void *owner, px_status_t why)
{
    px_proto_peer_t *p = owner;
    p->failed = 1;
    if (px_p.finalizing)
        return;
    px_error("proto", "rank %d is lost (%s): operations with it fail through their "
             "communicator's error handler", p->rank, px_status_string(why));
    px_proto_fail_peer(p->rank, PX_ERR_PEER_UNREACHABLE);
}

/* Shared memory and self deliver one frame at a time per peer. */
static void *px_proto_rx_begin(void *owner, const void *hdr, size_t hdr_len, size_t payload_len,
                               void **ctx_p)
{
    ((px_proto_peer_t *)owner)->rx_len = payload_len;
    return px_proto_rx_begin_at(owner, hdr, hdr_len, 0, payload_len, ctx_p);
}

static void px_proto_rx_done(void *owner, void *ctx)
{
    px_proto_rx_done_len(owner, ctx, ((px_proto_peer_t *)owner)->rx_len);
}

static const px_net_rx_ops_t px_proto_rx_ops = {
    .rx_begin = px_proto_rx_begin,
    .rx_done = px_proto_rx_done,
    .ep_failed = px_proto_ep_failed,
};

/* The rail layer may have stripes of several frames in flight at once. */
static const px_rail_rx_ops_t px_proto_rail_rx_ops = {
    .rx_begin = px_proto_rx_begin_at,
    .rx_done = px_proto_rx_done_len,
    .ep_failed = px_proto_ep_failed,
};

/* Hybrid: a frame over a connection the peer opened; answer over it too. */
static void *px_proto_rc_rx_begin(void *owner, const void *hdr, size_t hdr_len, size_t off,
                                  size_t payload_len, void **ctx_p)
{
    px_proto_peer_t *p = owner;
    if (__builtin_expect(p->rc == PX_RC_NONE, 0)) {
        p->rc = PX_RC_WANTED;
        p->rc_in = 1;
        px_p.rc_in++;
        px_p.rc_active = 1;
    }
    return px_proto_rx_begin_at(owner, hdr, hdr_len, off, payload_len, ctx_p);
}

/* Hybrid: a peer connects before we wanted a connection to it. */
static int px_proto_rc_incoming(px_rail_t *rail, int rank)
{
    px_proto_peer_t *p = &px_p.peers[rank];
    if (rail != px_p.rail_rc || !p->hybrid || p->vc_rc)
        return -1;
    return px_proto_rc_vc(p);
}

static const px_rail_rx_ops_t px_proto_rc_rx_ops = {
    .rx_begin = px_proto_rc_rx_begin,
    .rx_done = px_proto_rx_done_len,
    .ep_failed = px_proto_ep_failed,
    .vc_incoming = px_proto_rc_incoming,
};

/* ---------- send / receive ---------- */

px_status_t px_proto_isend(px_proto_req_t *req, int peer, uint32_t ctx, int my_rank, int tag,
                           const void *buf, size_t len, px_proto_mode_t mode)
{
    px_proto_peer_t *p = &px_p.peers[peer];
    px_status_t st;

    req->kind = PX_PROTO_REQ_SEND;
    /* traffic class for the rail policy: collectives use the odd contexts */
    req->rflags = (uint8_t)(((mode & PX_PROTO_MODE_BLOCKING) ? PX_RAIL_F_BLOCKING : 0) |
                            ((ctx & 1) ? PX_RAIL_F_COLL : 0) |
                            ((mode & PX_PROTO_MODE_RELEASE) ? PX_RAIL_F_RELEASE : 0));
    mode = (px_proto_mode_t)(mode & 3);
    req->mode = (uint8_t)mode;
    req->done = 0;
    req->cancelled = 0;
    req->st_error = PX_OK;
    req->peer = peer;
    req->buf = (void *)buf;
    req->len = len;
    req->id = 0;
    if (p->failed)
        return PX_ERR_PEER_UNREACHABLE;
    p->msgs_tx++;
    p->bytes_tx += len;
    if (p->hybrid)
        px_proto_rc_count(p, len);
    px_pick_t k;
    px_proto_pick(p, len, ctx & 1, &k);
    p->car_msgs[k.car]++;
    p->car_bytes[k.car] += len;

    if (!k.rndv) {
        px_am_hdr_t h = {.am = PX_AM_EAGER, .src = my_rank, .tag = tag, .ctx = ctx};
        struct iovec iov = {(void *)buf, len};
        size_t hl = 16;
        req->pending = 1;
        if (mode == PX_PROTO_MODE_SYNC) {
            h.flags = PX_AM_FLAG_SYNC;
            h.a = px_proto_id_get(req);
            hl = 24;
            req->pending = 2;
        }
        st = px_chan_send_on(p, k.env, &h, hl, &iov, 1, req->rflags, px_proto_send_cb, req);
        if (st == PX_OK) {
            if (--req->pending == 0)
                px_proto_complete(req);
        } else if (st < 0) {
            px_proto_id_put(req);
            return st;
        }
        return PX_OK;
    }

    /* rendezvous: the receiver reads directly (FIN) or asks for DATA (CTS);
     * over a network channel that carries the data too, the first bytes go
     * with the request and cross while the receiver answers */
    px_am_hdr_t h = {.am = PX_AM_RTS, .flags = k.zc ? PX_AM_FLAG_ZCOPY : 0, .src = my_rank,
                     .tag = tag, .ctx = ctx, .a = len, .b = px_proto_id_get(req),
                     .c = k.get ? (uint64_t)(uintptr_t)buf : 0};
    size_t head = 0;
    if (k.env && k.env == k.data && !k.zc) {
        size_t lim = px_p.car_eager[px_vc_car(p, k.env)];
        head = px_params.rndv_head < lim ? px_params.rndv_head : lim;
        if (head >= len) /* a rendezvous PX_CHANNELS asked for: no head */
            head = 0;
    }
    struct iovec iov = {(void *)buf, head};
    p->rndv_tx++;
    req->pending = 1;
    req->dvc = k.data;
    req->head = head;
    /* the request waits for its data anyway: the head needs no copy. Not
     * so in a round that only sends (PX_RAIL_F_RELEASE) while ranks have
     * their own cores: there a held head would be copied to the rail's
     * release buffer once written and keep the data frames from being
     * copied while the links are quiet (px_rail_send_rec). With ranks
     * sharing cores that early copy of a frame of up to 4 MB delays its
     * transfer instead (2 emulated nodes with 2 ranks each on 2 cores,
     * osu_bcast 4 MB: 5,627 us against 4,169) */
    unsigned held = head && (!(req->rflags & PX_RAIL_F_RELEASE) || px_p.oversub)
                        ? PX_RAIL_F_HELD
                        : 0;
    st = px_chan_send_on(p, k.env, &h, px_am_hdr_len[PX_AM_RTS], &iov, head ? 1 : 0,
                         req->rflags | held, px_proto_send_cb, req);
    if (st == PX_INPROGRESS)
        req->pending++;
    else if (st < 0) {
        px_proto_id_put(req);
        return st;
    }
    /* the data frames of such a round will be copied once written (fault
     * tolerance): the wait for the clear-to-send copies them instead */
    if ((req->rflags & PX_RAIL_F_RELEASE) && !px_p.oversub && p->kind == PX_CHAN_RAIL &&
        k.data && !k.zc && !k.get)
        px_rail_prestage(k.data, (const char *)buf + head, len - head);
    return PX_OK;
}

px_status_t px_proto_irecv(px_proto_req_t *req, int src_peer, uint32_t ctx, int src_rank, int tag,
                           void *buf, size_t len)
{
    px_list_t *e;
    req->kind = PX_PROTO_REQ_RECV;
    req->done = 0;
    req->cancelled = 0;
    req->st_error = PX_OK;
    req->st_count = 0;
    req->ctx = ctx;
    req->rank = src_rank;
    req->peer = src_peer; /* until matched: the source's world rank, if one is named */
    req->tag = tag;
    req->buf = buf;
    req->len = len;
    req->id = 0;
    req->tmp = NULL;
    for (e = px_p.unexp.next; e != &px_p.unexp; e = e->next) {
        px_proto_unexp_t *u = px_container_of(e, px_proto_unexp_t, link);
        if (px_match(u->ctx, u->src, u->tag, ctx, src_rank, tag)) {
            px_list_del(e);
            px_proto_take_unexp(req, u);
            return PX_OK;
        }
    }
    if (src_peer >= 0 && src_rank != PX_ANY_SOURCE && px_p.peers[src_peer].failed) {
        req->st_error = PX_ERR_PEER_UNREACHABLE; /* nothing more will come from it */
        px_proto_complete(req);
        return PX_OK;
    }
    px_list_insert_tail(&px_p.posted, &req->link);
    return PX_OK;
}

int px_proto_cancel_recv(px_proto_req_t *req)
{
    px_list_t *e;
    for (e = px_p.posted.next; e != &px_p.posted; e = e->next) {
        if (e == &req->link) {
            px_list_del(e);
            req->cancelled = 1;
            req->done = 1;
            return 1;
        }
    }
    return 0;
}

int px_proto_iprobe(uint32_t ctx, int src_rank, int tag, int *src_p, int *tag_p, size_t *len_p)
{
    px_list_t *e;
    for (e = px_p.unexp.next; e != &px_p.unexp; e = e->next) {
        px_proto_unexp_t *u = px_container_of(e, px_proto_unexp_t, link);
        if (px_match(u->ctx, u->src, u->tag, ctx, src_rank, tag)) {
            *src_p = u->src;
            *tag_p = u->tag;
            *len_p = u->size;
            return 1;
        }
    }
    return 0;
}

px_proto_unexp_t *px_proto_improbe(uint32_t ctx, int src_rank, int tag, int *src_p, int *tag_p,
                                   size_t *len_p)
{
    px_list_t *e;
    for (e = px_p.unexp.next; e != &px_p.unexp; e = e->next) {
        px_proto_unexp_t *u = px_container_of(e, px_proto_unexp_t, link);
        if (px_match(u->ctx, u->src, u->tag, ctx, src_rank, tag)) {
            px_list_del(e);
            *src_p = u->src;
            *tag_p = u->tag;
            *len_p = u->size;
            return u;
        }
    }
    return NULL;
}

px_status_t px_proto_mrecv(px_proto_req_t *req, px_proto_unexp_t *u, void *buf, size_t len)
{
    req->kind = PX_PROTO_REQ_RECV;
    req->done = 0;
    req->cancelled = 0;
    req->st_error = PX_OK;
    req->st_count = 0;
    req->ctx = u->ctx;
    req->rank = u->src;
    req->tag = u->tag;
    req->buf = buf;
    req->len = len;
    req->id = 0;
    req->tmp = NULL;
    px_proto_take_unexp(req, u);
    return PX_OK;
}

/* ---------- state dump (pxrun --timeout, SIGUSR1) ---------- */

static void px_proto_dump_sig(int sig)
{
    (void)sig;
    atomic_store_explicit(&px_boot_dump_req, 1, memory_order_relaxed);
}

static const char *px_proto_tag_str(int tag, char *buf, size_t len)
{
    if (tag == PX_ANY_TAG)
        return "any";
    snprintf(buf, len, "%d", tag);
    return buf;
}

/* What this rank waits for, on stderr: receives posted and not matched,
 * messages arrived and not received, transfers under way, and each network
 * channel's sequence numbers. Asked for by pxrun when a job reaches its
 * --timeout (or by SIGUSR1), so that a stuck job says where it is stuck. */
static void px_proto_dump(void)
{
    enum { MAX_LIST = 8 };
    int me = px_p.boot.rank, n = 0;
    char t1[16], line[1024];
    fprintf(stderr, "[rank %d state] at %.3f s (the clock of its log messages)\n", me,
            px_time_sec());
    for (px_list_t *it = px_p.posted.next; it != &px_p.posted; it = it->next) {
        px_proto_req_t *r = px_container_of(it, px_proto_req_t, link);
        if (n++ < MAX_LIST)
            fprintf(stderr, "[rank %d state] receive posted: source %s tag %s context %u, %zu bytes\n",
                    me, r->rank == PX_ANY_SOURCE ? "any" : (snprintf(line, 16, "%d", r->rank), line),
                    px_proto_tag_str(r->tag, t1, sizeof(t1)), r->ctx, r->len);
    }
    if (n > MAX_LIST)
        fprintf(stderr, "[rank %d state] ... %d receives posted in all\n", me, n);
    n = 0;
    for (px_list_t *it = px_p.unexp.next; it != &px_p.unexp; it = it->next) {
        px_proto_unexp_t *u = px_container_of(it, px_proto_unexp_t, link);
        if (n++ < MAX_LIST)
            fprintf(stderr, "[rank %d state] arrived, not received: from %d tag %d context %u, %zu bytes%s\n",
                    me, u->src, u->tag, u->ctx, u->size,
                    u->am == PX_AM_RTS ? " (rendezvous request)" : u->arrived ? "" : " (arriving)");
    }
    if (n > MAX_LIST)
        fprintf(stderr, "[rank %d state] ... %d unreceived messages in all\n", me, n);
    /* requests a peer may name: rendezvous sends and receives under way */
    uint8_t *free_slot = px_p.nids ? calloc(px_p.nids, 1) : NULL;
    n = 0;
    if (free_slot || !px_p.nids) {
        for (uint32_t i = px_p.free_id; i != PX_ID_NONE && i < px_p.nids;
             i = (uint32_t)(uintptr_t)px_p.ids[i])
            free_slot[i] = 1;
        for (uint32_t i = 0; i < px_p.nids; i++) {
            if (free_slot[i])
                continue;
            px_proto_req_t *r = px_p.ids[i];
            if (n++ >= MAX_LIST)
                continue;
            if (r->kind == PX_PROTO_REQ_SEND)
                fprintf(stderr,
                        "[rank %d state] rendezvous send to rank %d tag %d: %zu bytes, %d event(s) "
                        "to go\n",
                        me, r->peer, r->tag, r->len, r->pending);
            else
                fprintf(stderr,
                        "[rank %d state] rendezvous receive from rank %d tag %d: %zu of %zu bytes "
                        "arrived\n",
                        me, r->peer, r->st_tag, r->rndv_got, r->rndv_total);
        }
        free(free_slot);
    }
    if (n > MAX_LIST)
        fprintf(stderr, "[rank %d state] ... %d rendezvous transfers in all\n", me, n);
    for (int k = 0; k < px_p.boot.size; k++) {
        px_proto_peer_t *p = &px_p.peers[k];
        if (p->kind != PX_CHAN_RAIL || !p->vc || (!p->msgs_tx && !p->msgs_rx && !p->vc_rc))
            continue;
        px_rail_vc_dump(p->vc, line, sizeof(line));
        fprintf(stderr, "[rank %d state] to %d: %s%s; %s\n", me, k, px_rail_net_name(px_p.rail),
                p->failed ? " (failed)" : "", line);
        if (p->vc_rc) {
            static const char *const rc[] = {"none", "asked", "wanted", "in use"};
            px_rail_vc_dump(p->vc_rc, line, sizeof(line));
            fprintf(stderr, "[rank %d state] to %d: connection %s, messages now on %s; %s\n", me, k,
                    rc[p->rc & 3], p->env_vc == p->vc_rc ? "it" : "datagrams", line);
        }
    }
    fflush(stderr);
}

/* ---------- progress ---------- */

/* Hybrid with connections in use: one look at both rails' descriptors
 * tells which to read (the other runs only its timers), instead of a
 * receive call on each every time. */
static int px_proto_progress_both(void)
{
    struct epoll_event ev[2];
    int ready[2] = {0, 0};
    int m = epoll_wait(px_p.epfd, ev, 2, 0);
    for (int i = 0; i < m; i++)
        ready[ev[i].data.u32 & 1] = 1;
    return px_rail_progress_ready(px_p.rail, ready[0]) +
           px_rail_progress_ready(px_p.rail_rc, ready[1]);
}

int px_proto_progress(void)
{
    int n = 0;
    if (__builtin_expect(atomic_load_explicit(&px_boot_dump_req, memory_order_relaxed), 0)) {
        atomic_store_explicit(&px_boot_dump_req, 0, memory_order_relaxed);
        px_proto_dump();
    }
    if (__builtin_expect(px_p.zc_used, 0))
        n += px_zc_progress();
    if (px_p.self_active)
        n += px_net_self_ops.iface_progress(px_p.self_if);
    if (px_p.shm_if)
        n += px_net_shm_ops.iface_progress(px_p.shm_if);
    /* the network is polled every time once it carries traffic, and now
     * and then before that (to accept connections) */
    if (px_p.rail_peers && (px_p.rail_active || (++px_p.tick & 15) == 0 || !px_p.shm_if)) {
        if (px_p.rc_active && px_p.rail_active)
            return n + px_proto_progress_both();
        int k = px_rail_progress(px_p.rail);
        if (k)
            px_p.rail_active = 1;
        n += k;
        /* connections: accepted now and then, polled every time once in use */
        if (px_p.rail_rc && (px_p.rc_active || (++px_p.rc_tick & 15) == 0)) {
            k = px_rail_progress(px_p.rail_rc);
            if (k)
                px_p.rail_active = 1;
            n += k;
        }
    }
    return n;
}

void px_proto_wait_step(unsigned *idle)
{
    /* With MPI_THREAD_MULTIPLE, a waiting call lets other threads' calls
     * in between two polls; the caller re-checks its condition after. */
    if (px_proto_progress())
        *idle = 0;
    else
        ++*idle;
    if (!*idle || *idle < px_p.spin_limit || px_p.mode == PX_WAIT_SPIN ||
        (px_p.mode == PX_WAIT_AUTO && !px_p.oversub)) {
        px_cs_yield();
        return;
    }
    int depth = px_cs_release();
    /* (zero-copy sockets are not in the epoll set: no sleeping while in use) */
    if (px_p.block_ok && px_p.mode == PX_WAIT_BLOCK && !(px_p.zc_used && px_zc_busy())) {
        /* only sockets to watch: sleep in the kernel until one is ready.
         * Not the default when oversubscribed: waking from epoll takes
         * tens of microseconds, a yielding process runs again sooner
         * (4 ranks on 2 cores over TCP: osu_allreduce 8 B 85 -> 49 us). */
        struct epoll_event ev;
        epoll_wait(px_p.epfd >= 0 ? px_p.epfd : px_p.rail_fd, &ev, 1, 1);
    } else {
        sched_yield();
    }
    px_cs_reacquire(depth);
}

int px_proto_oversubscribed(void) { return px_p.oversub; }

int px_proto_peer_failed(int peer) { return px_p.peers[peer].failed; }

int px_proto_peer_local(int peer) { return px_p.peers[peer].kind != PX_CHAN_RAIL; }

px_status_t px_proto_peer_read(int peer, void *local, uint64_t raddr, size_t len)
{
    px_proto_peer_t *p = &px_p.peers[peer];
    if (!p->can_get || !p->ops->ep_get)
        return PX_ERR_UNSUPPORTED;
    return len ? p->ops->ep_get(p->ep, local, raddr, len) : PX_OK;
}

px_status_t px_proto_peer_write(int peer, const void *local, uint64_t raddr, size_t len)
{
    px_proto_peer_t *p = &px_p.peers[peer];
    if (!p->can_get || !p->ops->ep_put)
        return PX_ERR_UNSUPPORTED;
    return len ? p->ops->ep_put(p->ep, local, raddr, len) : PX_OK;
}

uint64_t px_proto_job_id(void) { return px_p.boot.job_id; }

const char *px_proto_channel_name(int peer)
{
    static const char *const names[] = {"self", "shm", "tcp"};
    if (px_p.peers[peer].kind == PX_CHAN_RAIL)
        return px_p.peers[peer].rc == PX_RC_ACTIVE ? "udp+tcp" : px_rail_net_name(px_p.rail);
    return names[px_p.peers[peer].kind];
}

/* ---------- set-up ---------- */

static int px_net_enabled(const char *name)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", px_params.net);
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (!strcmp(t, name))
            return 1;
    return 0;
}

static int px_proto_count_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* PX_BIND: the i-th rank on this machine gets the i-th CPU it may use
 * (wrapping when ranks outnumber CPUs); core binds it there now, spread
 * leaves the move to px_proto_spread. With ranks sharing cores, a
 * process the scheduler moves between them leaves its partners waiting
 * (4 ranks on 2 cores, osu_alltoall 128 KB: 74-122 us from run to run
 * unbound, 66-76 bound). */
static void px_proto_bind(int mine, int same)
{
    cpu_set_t set, one;
    px_p.start_cpu = -1;
    if (!strcmp(px_params.bind, "none"))
        return;
    int core = !strcmp(px_params.bind, "core");
    if (!core && strcmp(px_params.bind, "spread")) {
        px_warn("proto", "PX_BIND=%s: unknown (use spread, core or none); not binding",
                px_params.bind);
        return;
    }
    if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) < 1)
        return;
    int k = mine % CPU_COUNT(&set), cpu = -1;
    for (int c = 0; c < CPU_SETSIZE && k >= 0; c++)
        if (CPU_ISSET(c, &set) && k-- == 0)
            cpu = c;
    if (cpu < 0 || CPU_COUNT(&set) == 1)
        return;
    if (!core) { /* alone on the machine: nothing to spread */
        px_p.start_cpu = same > 1 ? cpu : -1;
        return;
    }
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0)
        px_warn("proto", "PX_BIND=core: could not bind to CPU %d: %s", cpu, strerror(errno));
    else
        px_debug("proto", "bound to CPU %d (rank %d on this machine)", cpu, mine);
}

/* PX_BIND=spread, at the end of MPI_Init: the scheduler starts the ranks of
 * a machine wherever it likes and, while they are all runnable (waiting
 * ranks poll and yield), rarely moves one that has just run: 4 ranks on 2
 * cores stayed three on one core and one on the other in about half of
 * the short jobs, and an alltoall of 64 KB blocks then took 48-62 us
 * instead of 28-35. Each rank moves to its own CPU once, the i-th rank of
 * the machine to the i-th CPU it may use, and gets its whole set back at
 * once, so that the scheduler may still move it later. */
void px_proto_spread(void)
{
    cpu_set_t set, one;
    if (px_p.start_cpu < 0 || sched_getaffinity(0, sizeof(set), &set) != 0)
        return;
    CPU_ZERO(&one);
    CPU_SET(px_p.start_cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) == 0) { /* moves before returning */
        sched_setaffinity(0, sizeof(set), &set);
        px_debug("proto", "started on CPU %d", px_p.start_cpu);
    }
}

/* Ranks on this physical machine, whatever node the launcher says they are
 * on (emulated nodes share one machine). */
static void px_proto_detect_oversub(void)
{
    char me[320], other[320];
    size_t len;
    int same = 0;
    char host[256] = "", bootid[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(bootid, sizeof(bootid), f))
            bootid[0] = 0;
        fclose(f);
    }
    gethostname(host, sizeof(host) - 1);
    snprintf(me, sizeof(me), "%s/%s", host, bootid);
    int mine = 0; /* this rank's index among the ranks on this machine */
    for (int r = 0; r < px_p.boot.size; r++)
        if (px_boot_get(r, "host", other, sizeof(other), &len) == PX_OK && !strcmp(other, me)) {
            if (r == px_p.boot.rank)
                mine = same;
            same++;
        }
    px_p.oversub = same > px_proto_count_cpus();
    px_proto_bind(mine, same);
    /* Eager through the rings costs two copies and no round trip; the
     * rendezvous one copy (process_vm_readv) after a request and before a
     * completion notice. On 2 cores, 16-32 KB: osu_alltoall and
     * osu_allgather 1.3-1.8x faster eager with 4 ranks; with 8 ranks
     * eager wins at 16 KB and loses from 32 KB on (two copies where the
     * cores are the bottleneck). */
    px_p.shm_eager = px_params.shm_eager_limit;
    if (px_p.shm_eager == PX_PARAM_SIZE_AUTO)
        px_p.shm_eager = same <= 2 * px_proto_count_cpus() ? PX_SHM_EAGER_AUTO_HIGH
                                                           : PX_SHM_EAGER_AUTO_LOW;
}

px_status_t px_proto_init(const px_boot_info_t *boot)
{
    px_status_t st;
    char host[320], hn[256] = "", bootid[64] = "";
    int use_shm, use_tcp, use_udp;

    px_p.boot = *boot;
    px_list_init(&px_p.posted);
    px_list_init(&px_p.unexp);
    px_p.free_id = PX_ID_NONE;
    {
        /* SIGUSR1 prints what this rank waits for, unless the program uses it */
        struct sigaction sa, old;
        if (sigaction(SIGUSR1, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
            !(old.sa_flags & SA_SIGINFO)) {
            memset(&sa, 0, sizeof(sa));
            sa.sa_handler = px_proto_dump_sig;
            sa.sa_flags = SA_RESTART;
            sigemptyset(&sa.sa_mask);
            sigaction(SIGUSR1, &sa, NULL);
        }
    }
    px_p.rail_fd = -1;
    px_p.epfd = -1;
    use_shm = px_net_enabled("shm");
    use_tcp = px_net_enabled("tcp");
    use_udp = px_net_enabled("udp");
    if (!use_shm && !use_tcp && !use_udp && boot->size > 1) {
        px_error("proto", "PX_NET='%s' names no usable transport (use shm, tcp, udp or a "
                 "comma-separated combination)", px_params.net);
        return PX_ERR_INVALID_PARAM;
    }
    if (use_tcp && use_udp &&
        (px_params.rc_promote_after < 0 || px_params.max_rc_conn < 0 ||
         px_params.rc_fast_max < 0)) {
        px_error("proto", "PX_RC_PROMOTE_AFTER, PX_MAX_RC_CONN and PX_RC_FAST_MAX must be 0 or more");
        return PX_ERR_INVALID_PARAM;
    }

    {
        char err[256];
        const char *text = px_params.channels; /* empty: every message on the default */
        if (px_chr_parse(text, &px_p.chr, err, sizeof(err))) {
            px_error("proto", "PX_CHANNELS='%s': %s", text, err);
            return PX_ERR_INVALID_PARAM;
        }
    }

    px_zc_init(&px_proto_zc_ops);
    px_p.peers = calloc((size_t)boot->size, sizeof(*px_p.peers));
    if (!px_p.peers)
        return PX_ERR_NO_MEMORY;

    st = px_net_self_ops.iface_open(boot, &px_proto_rx_ops, &px_p.self_if);
    if (st != PX_OK)
        goto err;
    /* Opening shm is collective over the job (bootstrap barriers), so every
     * rank joins it, also one alone on its node, and then drops it. */
    if (use_shm && boot->size > 1) {
        st = px_net_shm_ops.iface_open(boot, &px_proto_rx_ops, &px_p.shm_if);
        if (st != PX_OK)
            goto err;
        if (boot->local_size < 2) {
            px_net_shm_ops.iface_close(px_p.shm_if);
            px_p.shm_if = NULL;
        }
    }
    if ((use_tcp || use_udp) && boot->size > 1) {
        st = px_rail_init(boot, use_udp ? "udp" : "tcp", &px_proto_rail_rx_ops, &px_p.rail);
        if (st != PX_OK)
            goto err;
        px_p.rail_fd = px_rail_fd(px_p.rail);
        size_t chunk = px_params.rndv_chunk ? px_params.rndv_chunk : (1u << 20);
        px_p.vc_car = use_udp ? PX_CAR_UDP : PX_CAR_TCP;
        px_p.car_eager[px_p.vc_car] = px_rail_eager_limit(px_p.rail);
        /* a lossy transport wants frames it can lose cheaply */
        size_t fm = px_rail_max_frame(px_p.rail);
        px_p.car_chunk[px_p.vc_car] = fm && fm < chunk ? fm : chunk;
        if (use_udp && use_tcp) {
            st = px_rail_init(boot, "tcp", &px_proto_rc_rx_ops, &px_p.rail_rc);
            if (st != PX_OK)
                goto err;
            px_p.car_eager[PX_CAR_TCP] = px_rail_eager_limit(px_p.rail_rc);
            px_p.car_chunk[PX_CAR_TCP] = chunk;
            /* auto: the messages datagrams carry by rendezvous count, one
             * per datagram eager limit they hold (what datagrams send
             * eagerly, they send about as well as a connection) */
            px_p.rc_size = px_params.rc_promote_size;
            px_p.rc_unit = px_params.rc_promote_size;
            if (px_params.rc_promote_size == PX_PARAM_SIZE_AUTO) {
                px_p.rc_unit = px_p.car_eager[PX_CAR_UDP];
                px_p.rc_size = px_p.rc_unit + 1;
            }
            /* data: which rail (px_proto_progress reads it) */
            px_p.epfd = epoll_create1(EPOLL_CLOEXEC);
            struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 0};
            struct epoll_event ev_rc = {.events = EPOLLIN, .data.u32 = 1};
            if (px_p.epfd < 0 || epoll_ctl(px_p.epfd, EPOLL_CTL_ADD, px_p.rail_fd, &ev) ||
                epoll_ctl(px_p.epfd, EPOLL_CTL_ADD, px_rail_fd(px_p.rail_rc), &ev_rc)) {
                px_error("proto", "epoll: %s", strerror(errno));
                st = PX_ERR_IO;
                goto err;
            }
        }
    }

    {
        FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
        if (f) {
            if (!fgets(bootid, sizeof(bootid), f))
                bootid[0] = 0;
            fclose(f);
        }
        gethostname(hn, sizeof(hn) - 1);
        snprintf(host, sizeof(host), "%s/%s", hn, bootid);
        px_boot_put("host", host, strlen(host) + 1);
    }
    st = px_boot_fence();
    if (st != PX_OK)
        goto err;
    px_proto_detect_oversub();
    px_p.spin_limit = (unsigned)(px_p.oversub ? px_params.oversub_spin_count : px_params.spin_count);
    if (!strcmp(px_params.progress_mode, "spin"))
        px_p.mode = PX_WAIT_SPIN;
    else if (!strcmp(px_params.progress_mode, "yield"))
        px_p.mode = PX_WAIT_YIELD;
    else if (!strcmp(px_params.progress_mode, "block"))
        px_p.mode = PX_WAIT_BLOCK;
    else {
        if (strcmp(px_params.progress_mode, "auto"))
            px_warn("proto", "PX_PROGRESS_MODE='%s' is not spin, yield, block or auto; using auto",
                    px_params.progress_mode);
        px_p.mode = PX_WAIT_AUTO;
    }

    for (int r = 0; r < boot->size; r++) {
        px_proto_peer_t *p = &px_p.peers[r];
        px_net_attr_t attr;
        p->rank = r;
        p->chunk = px_params.rndv_chunk ? px_params.rndv_chunk : (1u << 20);
        if (r == boot->rank) {
            p->kind = PX_CHAN_SELF;
            p->ops = &px_net_self_ops;
            st = p->ops->ep_create(px_p.self_if, r, 0, p, &p->ep);
        } else if (px_p.shm_if && px_net_shm_ops.iface_reachable(px_p.shm_if, r)) {
            p->kind = PX_CHAN_SHM;
            p->ops = &px_net_shm_ops;
            st = p->ops->ep_create(px_p.shm_if, r, 0, p, &p->ep);
        } else if (px_p.rail && px_rail_reachable(px_p.rail, r)) {
            p->kind = PX_CHAN_RAIL;
            st = px_rail_vc_create(px_p.rail, r, p, &p->vc);
            /* its connection is made only when wanted */
            p->hybrid = px_p.rail_rc && px_rail_reachable(px_p.rail_rc, r);
        } else {
            px_error("proto", "no transport in PX_NET='%s' reaches rank %d (node %d)",
                     px_params.net, r, boot->node_of[r]);
            st = PX_ERR_PEER_UNREACHABLE;
        }
        if (st != PX_OK)
            goto err;
        if (p->kind == PX_CHAN_RAIL) {
            px_p.rail_peers = 1;
            p->env_vc = p->vc;
            p->eager_limit = px_p.car_eager[px_p.vc_car];
            p->chunk = px_p.car_chunk[px_p.vc_car];
        } else {
            p->ops->iface_query(p->kind == PX_CHAN_SELF ? px_p.self_if : px_p.shm_if, &attr);
            p->eager_limit = px_p.shm_eager;
            p->can_get = !!(attr.caps & PX_NET_CAP_GET);
        }
    }
    /* sleeping in epoll is only safe when no shared-memory ring needs polling */
    px_p.block_ok = px_p.rail_peers && !px_p.shm_if;
    px_debug("proto", "ready: %d ranks, %s%s, oversubscribed=%d", boot->size,
             px_p.shm_if ? "shm " : "", px_p.rail ? px_rail_net_name(px_p.rail) : "", px_p.oversub);
    return PX_OK;

err:
    px_proto_finalize();
    return st;
}

/* Lossy transports at finalize: every frame of ours is acknowledged; stay
 * (answering) until each peer we talked to says the same, so none is left
 * waiting for an acknowledgement we would no longer send. */
static px_status_t px_proto_quiesce(void)
{
    uint64_t t0 = px_time_ns(), next = 0, now;
    unsigned idle = 0;
    while (!px_rail_peers_done(px_p.rail, NULL, 0)) {
        now = px_time_ns();
        if (now >= next) {
            px_rail_send_done(px_p.rail);
            px_rail_ack_all(px_p.rail);
            next = now + 2000000ull;
        }
        if (now - t0 > 10000000000ull) {
            char who[256];
            px_rail_peers_done(px_p.rail, who, sizeof(who));
            px_warn("proto", "finalize: rank(s) %s did not confirm their traffic within 10 s",
                    who);
            return PX_ERR_TIMEOUT;
        }
        px_proto_wait_step(&idle);
    }
    for (int i = 0; i < 3; i++) /* our last DONE may be lost: it costs nothing to repeat */
        px_rail_send_done(px_p.rail);
    return PX_OK;
}

px_status_t px_proto_flush(int mode)
{
    unsigned idle = 0;
    int lossy = px_p.rail && px_rail_lossy(px_p.rail);
    int acks = mode == PX_FLUSH_ACKED || (mode == PX_FLUSH_LAST && lossy);
    uint64_t deadline = px_time_ns() + 60000000000ull;
    for (;;) {
        int busy = 0;
        for (int r = 0; r < px_p.boot.size && !busy; r++) {
            px_proto_peer_t *p = &px_p.peers[r];
            if (p->failed)
                continue;
            if (p->kind == PX_CHAN_RAIL)
                busy = px_rail_vc_pending(p->vc) != 0 || (acks && px_rail_vc_unacked(p->vc)) ||
                       (p->vc_rc && (px_rail_vc_pending(p->vc_rc) != 0 ||
                                     (acks && px_rail_vc_unacked(p->vc_rc))));
            else if (p->kind == PX_CHAN_SHM)
                busy = p->ops->ep_pending(p->ep) != 0;
        }
        if (!busy)
            return mode == PX_FLUSH_LAST && lossy ? px_proto_quiesce() : PX_OK;
        if (acks && px_p.rail)
            px_rail_ack_all(px_p.rail); /* peers in the same loop wait for ours */
        if (acks && px_p.rail_rc)
            px_rail_ack_all(px_p.rail_rc);
        if (px_time_ns() > deadline) {
            px_warn("proto", "data still queued after 60 s at finalize");
            return PX_ERR_TIMEOUT;
        }
        px_proto_wait_step(&idle);
    }
}

void px_proto_print_stats(void)
{
    fprintf(stderr,
            "[plexus profile] rank %d: eager rx %llu, rendezvous rx %llu, unexpected %llu, "
            "oversubscribed %d\n",
            px_p.boot.rank, (unsigned long long)px_p.n_eager, (unsigned long long)px_p.n_rndv,
            (unsigned long long)px_p.n_unexp, px_p.oversub);
    for (int r = 0; r < px_p.boot.size; r++) {
        px_proto_peer_t *p = &px_p.peers[r];
        if (p->msgs_tx || p->msgs_rx)
            fprintf(stderr,
                    "[plexus profile] rank %d -> %d channel %s: msgs tx %llu rx %llu bytes tx "
                    "%llu rx %llu rendezvous tx %llu\n",
                    px_p.boot.rank, r, px_proto_channel_name(r), (unsigned long long)p->msgs_tx,
                    (unsigned long long)p->msgs_rx, (unsigned long long)p->bytes_tx,
                    (unsigned long long)p->bytes_rx, (unsigned long long)p->rndv_tx);
    }
    /* channels allocated by type and what each carried (sent) */
    enum { SELF = PX_CAR_SELF, SHM = PX_CAR_SHM, DGRAM = PX_CAR_UDP, CONN = PX_CAR_TCP,
           NCH = PX_CAR_N };
    static const char *const chn[NCH] = {"self", "shm", "udp", "tcp"};
    unsigned long long nch[NCH] = {0}, msgs[NCH] = {0}, bytes[NCH] = {0}, fenced = 0;
    for (int r = 0; r < px_p.boot.size; r++) {
        px_proto_peer_t *p = &px_p.peers[r];
        int c = p->kind == PX_CHAN_SELF ? SELF : p->kind == PX_CHAN_SHM ? SHM : px_p.vc_car;
        /* a datagram channel is there from the start; a connection once used */
        nch[c] += c != CONN || px_rail_vc_used(p->vc);
        if (p->vc_rc)
            nch[CONN] += p->rc != PX_RC_NONE;
        for (int k = 0; k < NCH; k++) {
            msgs[k] += p->car_msgs[k];
            bytes[k] += p->car_bytes[k];
        }
        fenced += p->fenced;
    }
    char vol[512];
    size_t off = 0;
    for (int c = 0; c < NCH; c++)
        off += (size_t)snprintf(vol + off, sizeof(vol) - off, "%s%s %llu msgs %llu bytes",
                                c ? ", " : "", chn[c], msgs[c], bytes[c]);
    char opened[96] = "";
    if (px_p.rail_rc)
        snprintf(opened, sizeof(opened), " (opened here %d, by peers %d; fastest path %d)",
                 px_p.rc_out, px_p.rc_in, px_p.rc_fast);
    fprintf(stderr,
            "[plexus profile] rank %d channels: self %llu shm %llu udp %llu tcp %llu%s | sent: %s\n",
            px_p.boot.rank, nch[SELF], nch[SHM], nch[DGRAM], nch[CONN], opened, vol);
    /* which PX_CHANNELS entry chose the channel of the messages sent */
    char hits[1024];
    off = 0;
    for (int i = 0; i <= px_p.chr.n && off < sizeof(hits); i++) {
        char rule[96] = "default";
        if (i < px_p.chr.n)
            px_chr_format(&px_p.chr.r[i], rule, sizeof(rule));
        off += (size_t)snprintf(hits + off, sizeof(hits) - off, "%s%d %s %llu", i ? ", " : "",
                                i + 1, rule, (unsigned long long)px_p.chr_hits[i]);
    }
    fprintf(stderr, "[plexus profile] rank %d channel rules: %s | kept in order on the "
            "previous channel %llu\n", px_p.boot.rank, hits, fenced);
    px_zc_print_stats(px_p.boot.rank);
    if (px_p.rail)
        px_rail_print_stats(px_p.rail, px_p.boot.rank);
    if (px_p.rail_rc)
        px_rail_print_stats(px_p.rail_rc, px_p.boot.rank);
}

void px_proto_finalize(void)
{
    px_list_t *e, *t;
    px_p.finalizing = 1;
    px_zc_finalize();
    px_p.zc_used = 0;
    if (px_p.rail)
        px_rail_finalize(px_p.rail);
    if (px_p.rail_rc)
        px_rail_finalize(px_p.rail_rc);
    if (px_p.epfd >= 0)
        close(px_p.epfd);
    px_p.epfd = -1;
    px_p.rail_rc = NULL;
    if (px_p.shm_if)
        px_net_shm_ops.iface_close(px_p.shm_if);
    if (px_p.self_if)
        px_net_self_ops.iface_close(px_p.self_if);
    px_p.rail = NULL;
    px_p.shm_if = px_p.self_if = NULL;
    if (px_p.unexp.next) {
        px_list_for_each_safe(e, t, &px_p.unexp)
        {
            px_proto_unexp_t *u = px_container_of(e, px_proto_unexp_t, link);
            if (u->data && u->data != u->inline_data)
                free(u->data);
            free(u);
        }
        px_list_init(&px_p.unexp);
    }
    free(px_p.peers);
    px_p.peers = NULL;
    free(px_p.ids);
    free(px_p.gens);
    px_p.ids = NULL;
    px_p.gens = NULL;
    px_p.nids = 0;
}
