/* tcp: non-blocking sockets with TCP_NODELAY, connections made on first use.
 *
 * Handshake: both ends send HELLO (job, ranks, subchannel, a fresh nonce),
 * then AUTH = HMAC(job secret, peer's nonce, ranks, subchannel). The secret
 * never crosses the wire. When two ranks connect to each other at once, the
 * connection initiated by the lower rank wins on both sides.
 *
 * Frames: {payload_len u32, hdr_len u16, magic u16} + header + payload.
 * Small frames are read through a staging buffer; large payloads are read
 * straight into the destination the layer above returned. */
#include "../addr.h"
#include "../net.h"
#include "../../util/clock.h"
#include "../../util/iov.h"
#include "../../util/list.h"
#include "../../util/log.h"
#include "../../util/param.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define PX_TCP_MAX_SUB PX_NET_MAX_SUB
#define PX_TCP_HELLO_MAGIC 0x50585443u /* "PXTC" */
#define PX_TCP_FRAME_MAGIC 0x5846u
#define PX_TCP_VERSION 1
#define PX_TCP_RXBUF (64 * 1024)
#define PX_TCP_DIRECT_MIN 8192 /* read payloads this large straight into place */
/* After a payload of PX_TCP_BIG_MIN or more, and until PX_TCP_BIG_KEEP
 * smaller frames in a row followed it, reads into staging ask for one frame
 * header (with the upper layer's) and little more, so that the next large
 * payload stays in the socket for its own read instead of passing through
 * staging (a copy that costs more than the second system call from 32 KB);
 * a stream of small frames goes back to filling staging with one read. */
#define PX_TCP_BIG_MIN 32768
#define PX_TCP_HDR_READ 128
#define PX_TCP_BIG_KEEP 8
#define PX_TCP_COPY_MAX 4096   /* queued payloads this small are copied */
#define PX_TCP_DIRECT_CAP 8    /* most connections read directly by a pass */

typedef struct __attribute__((packed)) px_tcp_hello {
    uint32_t magic;
    uint16_t version;
    uint16_t sub;
    uint64_t job_id;
    uint32_t from, to;
    uint8_t nonce[16];
} px_tcp_hello_t;

typedef struct __attribute__((packed)) px_tcp_frame {
    uint32_t payload_len;
    uint16_t hdr_len;
    uint16_t magic;
} px_tcp_frame_t;

typedef enum {
    PX_TCP_CONNECTING,
    PX_TCP_HANDSHAKE,
    PX_TCP_ESTABLISHED,
    PX_TCP_CLOSED,
} px_tcp_state_t;

typedef struct px_tcp_sop {
    px_list_t link;
    int iovcnt, idx;
    px_net_send_cb_t cb;
    void *arg;
    uint8_t fh[sizeof(px_tcp_frame_t) + PX_NET_HDR_MAX];
    struct iovec iov[]; /* iov[0] is fh */
} px_tcp_sop_t;

typedef struct px_tcp_conn {
    struct px_net_iface *iface;
    struct px_net_ep *ep; /* NULL until the peer is known */
    int fd;
    px_tcp_state_t state;
    int initiator;
    int out_armed; /* EPOLLOUT requested */
    /* handshake */
    uint8_t my_nonce[16], peer_nonce[16];
    uint8_t hs_out[sizeof(px_tcp_hello_t) + 32];
    size_t hs_out_len, hs_out_off;
    uint8_t hs_in[sizeof(px_tcp_hello_t) + 32];
    size_t hs_in_len;
    int hello_in, auth_sent;
    int peer_rank, sub;
    /* receive */
    char *rxbuf;
    size_t rx_start, rx_end;
    int rx_in_payload;
    int rx_big; /* > 0: a recent frame carried PX_TCP_BIG_MIN or more (header reads stay short) */
    px_tcp_frame_t rx_frame;
    char *rx_dest;
    void *rx_ctx;
    size_t rx_got;
    px_list_t link; /* iface->conns */
} px_tcp_conn_t;

struct px_net_ep {
    void *owner; /* first: addr.c sets it */
    struct px_net_iface *iface;
    int rank, sub;
    px_tcp_conn_t *conn;
    px_list_t sendq;
    size_t queued_bytes;
    uint64_t connect_deadline, next_attempt;
    int failed;
    int was_up;    /* has had a working connection */
    int peer_done; /* the peer closed it in order: it is finalizing */
};

struct px_net_iface {
    px_net_addrs_t addr; /* first, for addr.c: one listening socket per address */
    const px_net_rx_ops_t *rx;
    void *owner; /* the layer above's, for ep_incoming */
    int me, nranks;
    uint64_t job_id;
    const uint8_t *secret;
    size_t secret_len;
    px_list_t conns;
    int nconns;
    int closing;
    px_list_t dead; /* closed connections, freed at the end of progress */
    int reconnect;  /* endpoints may have data queued and no connection */
    uint64_t next_check; /* when to look at them again */
    int direct_max;      /* PX_TCP_POLL_DIRECT, at most PX_TCP_DIRECT_CAP */
    unsigned pass;       /* progress passes, for the periodic epoll look */
    unsigned long reads; /* receive calls that returned bytes */
};

_Static_assert(offsetof(struct px_net_iface, addr) == 0, "addr.c finds addr at the start");
_Static_assert(offsetof(struct px_net_ep, owner) == 0, "addr.c sets owner at the start");

static void px_tcp_conn_close(px_tcp_conn_t *c, px_status_t why);
static void px_tcp_conn_flush(px_tcp_conn_t *c);
static void px_tcp_free_dead(struct px_net_iface *s);
static px_net_ep_t *px_tcp_ep_new(px_net_iface_t *s, int rank, int sub,
                                  const px_net_addr_pair_t *pair);

/* ---------- sockets ---------- */

/* Listening sockets are tagged with small integers in epoll, connections
 * with their (aligned) pointers. */
#define PX_TCP_IS_LISTENER(p) ((uintptr_t)(p) <= PX_NET_MAX_ADDR)

static void px_tcp_set_opts(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (px_params.tcp_sndbuf) {
        int v = (int)px_params.tcp_sndbuf;
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
    }
    if (px_params.tcp_rcvbuf) {
        int v = (int)px_params.tcp_rcvbuf;
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
    }
    if (px_params.rail_detect > 0) {
        /* data the peer's kernel has not acknowledged for this long (a dead
         * link) ends the connection instead of leaving it retrying for
         * minutes; the rail layer moves its frames elsewhere (or, without
         * fault tolerance, reports the error instead of hanging) */
        unsigned ms = (unsigned)(px_params.rail_detect * 1000);
        setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
    }
    /* While it opens, the connection is probed: a peer that reset its end
     * (a subchannel it gave up on) with the reset lost on the way would
     * leave ours half-open, waiting for a hello that never comes and
     * refusing the peer's fresh connections meanwhile. A probe makes the
     * peer's kernel answer with another reset; a peer that is only busy
     * answers it. Turned off once established (heartbeats take over). */
    int ka = 1, idle = 1, intvl = 1, cnt = 5;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &ka, sizeof(ka));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* What a failed read or write on an established connection means. */
static px_status_t px_tcp_errno_status(int err)
{
    switch (err) {
    case ETIMEDOUT: /* TCP_USER_TIMEOUT or retransmissions gave up: a dead path */
        return PX_ERR_TIMEOUT;
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN:
        return PX_ERR_LINK_UNREACHABLE;
    default:
        return PX_ERR_LINK_RESET;
    }
}

#define PX_TCP_EOF (-1) /* the peer ended the connection */
#define PX_TCP_ERR (-2) /* errno says why */

/* readv, its outcomes sorted: the bytes read, 0 when there are none yet,
 * PX_TCP_EOF or PX_TCP_ERR. */
static inline ssize_t px_tcp_read(int fd, struct iovec *v, int nv)
{
    ssize_t n = readv(fd, v, nv);
    if (n > 0)
        return n;
    if (n == 0)
        return PX_TCP_EOF;
    return errno == EAGAIN || errno == EINTR ? 0 : PX_TCP_ERR;
}

static double px_tcp_connect_timeout(void)
{
    /* with failover a subchannel that cannot connect is given up on sooner:
     * the others carry its traffic and it is probed again later */
    double t = px_params.tcp_connect_timeout;
    if (px_params.rail_ft) {
        double ft = 3 * px_params.rail_detect > 2.0 ? 3 * px_params.rail_detect : 2.0;
        if (ft < t)
            t = ft;
    }
    return t;
}

/* Ends every queued send of ep with `why` (the rail layer sends them again). */
static void px_tcp_drop_queue(struct px_net_ep *ep, px_status_t why)
{
    px_list_t q, *e, *t;
    px_list_init(&q);
    /* detach first: a callback may queue new frames on this endpoint */
    while (!px_list_empty(&ep->sendq)) {
        e = ep->sendq.next;
        px_list_del(e);
        px_list_insert_tail(&q, e);
    }
    ep->queued_bytes = 0;
    px_list_for_each_safe(e, t, &q)
    {
        px_tcp_sop_t *op = px_container_of(e, px_tcp_sop_t, link);
        px_list_del(e);
        if (op->cb)
            op->cb(op->arg, why);
        free(op);
    }
}

/* ---------- interface ---------- */

static px_status_t px_tcp_iface_open(const px_boot_info_t *boot, const px_net_rx_ops_t *rx,
                                     void *owner, px_net_iface_t **iface_p)
{
    struct px_net_iface *s = calloc(1, sizeof(*s));
    char val[PX_BOOT_VAL_MAX];
    px_status_t st = s ? px_net_addr_open(&s->addr, "tcp", SOCK_STREAM, px_tcp_ep_new, boot)
                       : PX_ERR_NO_MEMORY;
    if (st == PX_OK && (st = px_net_addr_publish(&s->addr, val, sizeof(val))) != PX_OK)
        px_net_addr_close(&s->addr);
    if (st != PX_OK) {
        free(s);
        return st;
    }
    s->rx = rx;
    s->owner = owner;
    s->me = boot->rank;
    s->nranks = boot->size;
    s->job_id = boot->job_id;
    s->secret = px_boot_secret(&s->secret_len);
    px_list_init(&s->conns);
    px_list_init(&s->dead);
    s->direct_max = px_params.tcp_poll_direct < 0 ? 0
                    : px_params.tcp_poll_direct > PX_TCP_DIRECT_CAP ? PX_TCP_DIRECT_CAP
                                                                   : (int)px_params.tcp_poll_direct;
    px_debug("tcp", "listening on %s", val);
    *iface_p = s;
    return PX_OK;
}

static void px_tcp_iface_close(px_net_iface_t *s)
{
    px_list_t *e, *t;
    uint64_t deadline = px_time_ns() + 5000000000ull;

    /* Graceful close: stop writing, then read until every peer has closed
     * too, so no side resets a connection that still carries data. */
    s->closing = 1;
    px_list_for_each_safe(e, t, &s->conns)
    {
        px_tcp_conn_t *c = px_container_of(e, px_tcp_conn_t, link);
        if (c->state == PX_TCP_ESTABLISHED)
            shutdown(c->fd, SHUT_WR);
        else
            px_tcp_conn_close(c, PX_OK);
    }
    while (s->nconns > 0 && px_time_ns() < deadline) {
        struct epoll_event evs[64];
        int n = epoll_wait(s->addr.epfd, evs, 64, 100);
        for (int i = 0; i < n; i++) {
            px_tcp_conn_t *c = evs[i].data.ptr;
            if (PX_TCP_IS_LISTENER(c) || c->state == PX_TCP_CLOSED)
                continue;
            char buf[4096];
            ssize_t r = read(c->fd, buf, sizeof(buf));
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
                px_tcp_conn_close(c, PX_OK);
        }
    }
    px_list_for_each_safe(e, t, &s->conns)
        px_tcp_conn_close(px_container_of(e, px_tcp_conn_t, link), PX_OK);
    px_tcp_free_dead(s);
    for (int i = 0; i < s->nranks * PX_TCP_MAX_SUB; i++) {
        struct px_net_ep *ep = s->addr.eps[i];
        if (!ep)
            continue;
        px_list_for_each_safe(e, t, &ep->sendq) free(px_container_of(e, px_tcp_sop_t, link));
        free(ep);
    }
    px_net_addr_close(&s->addr);
    free(s);
}

static void px_tcp_iface_query(px_net_iface_t *s, px_net_attr_t *attr)
{
    (void)s;
    memset(attr, 0, sizeof(*attr));
    attr->caps = PX_NET_CAP_RESET;
    attr->max_frag = 1u << 20;
    attr->eager_limit = px_params.tcp_eager_limit;
    attr->latency_us = 10;
    attr->bandwidth_mbs = 1000;
}

/* An endpoint for ep_create; it connects on first use. */
static px_net_ep_t *px_tcp_ep_new(px_net_iface_t *s, int rank, int sub,
                                  const px_net_addr_pair_t *pair)
{
    (void)pair;
    struct px_net_ep *ep = calloc(1, sizeof(*ep));
    if (ep) {
        ep->iface = s;
        ep->rank = rank;
        ep->sub = sub;
        px_list_init(&ep->sendq);
    }
    return ep;
}

/* ---------- connections ---------- */

static px_tcp_conn_t *px_tcp_conn_new(struct px_net_iface *s, int fd, int initiator)
{
    px_tcp_conn_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->iface = s;
    c->fd = fd;
    c->initiator = initiator;
    c->peer_rank = -1;
    c->state = initiator ? PX_TCP_CONNECTING : PX_TCP_HANDSHAKE;
    if (getrandom(c->my_nonce, sizeof(c->my_nonce), 0) != sizeof(c->my_nonce)) {
        free(c);
        return NULL;
    }
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
    c->out_armed = 1;
    if (epoll_ctl(s->addr.epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        free(c);
        return NULL;
    }
    px_list_insert_tail(&s->conns, &c->link);
    s->nconns++;
    return c;
}

static void px_tcp_arm_out(px_tcp_conn_t *c, int on)
{
    if (c->out_armed == on || c->state == PX_TCP_CLOSED)
        return;
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(c->iface->addr.epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->out_armed = on;
}

static void px_tcp_conn_close(px_tcp_conn_t *c, px_status_t why)
{
    struct px_net_iface *s = c->iface;
    struct px_net_ep *ep = c->ep;
    if (c->state == PX_TCP_CLOSED)
        return;
    int was_established = c->state == PX_TCP_ESTABLISHED;
    epoll_ctl(s->addr.epfd, EPOLL_CTL_DEL, c->fd, NULL);
    if (!s->closing) {
        /* Only finalize ends a connection in order: the peer takes an
         * orderly end for "finalizing" and what it wrote for delivered. Any
         * other end is a reset, even of a connection still in its handshake
         * here (the peer may have finished its side and written frames; an
         * orderly end would lose them quietly). */
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    }
    close(c->fd);
    c->state = PX_TCP_CLOSED;
    px_list_del(&c->link);
    s->nconns--;
    if (ep && ep->conn == c) {
        ep->conn = NULL;
        if (!was_established) {
            /* a handshake that lost a head-to-head race or met a refusal:
             * retry soon; only the connect deadline makes it a failure */
            ep->next_attempt = px_time_ns() + 10000000ull;
            s->reconnect = 1;
            s->next_check = ep->next_attempt;
        } else if (why != PX_OK && !s->closing) {
            px_debug("tcp", "connection to rank %d (sub %d) closed: %s", ep->rank, ep->sub,
                     px_status_string(why));
            /* an error (not an orderly end) may have taken written but
             * undelivered frames with it */
            int lost = !px_list_empty(&ep->sendq) || c->rx_in_payload || why != PX_ERR_LINK_DOWN;
            /* Only finalize closes a connection in order (a failing or
             * reset one ends with an error), so a clean end means the peer
             * is leaving: what is still sent to it (late acknowledgements)
             * is dropped rather than reconnecting. */
            if (!lost)
                ep->peer_done = 1;
            if (px_params.rail_ft) {
                /* what was queued cannot continue on another connection
                 * mid-frame: the rail layer has it and sends it again */
                px_tcp_drop_queue(ep, why);
                ep->connect_deadline = 0;
            }
            if (lost) {
                ep->failed = 1;
                if (s->rx->ep_failed)
                    s->rx->ep_failed(ep->owner, why);
            }
        }
    }
    free(c->rxbuf);
    c->rxbuf = NULL;
    /* handlers up the stack may still hold c: free it after progress */
    px_list_insert_tail(&s->dead, &c->link);
}

static void px_tcp_free_dead(struct px_net_iface *s)
{
    while (!px_list_empty(&s->dead)) {
        px_list_t *e = s->dead.next;
        px_list_del(e);
        free(px_container_of(e, px_tcp_conn_t, link));
    }
}

static px_status_t px_tcp_connect(struct px_net_ep *ep)
{
    struct px_net_iface *s = ep->iface;
    const px_net_addr_pair_t *pr = &s->addr.peers[ep->rank]->pair[ep->sub];
    struct sockaddr_in la = {.sin_family = AF_INET, .sin_addr = s->addr.local[pr->local].addr};

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return PX_ERR_IO;
    px_tcp_set_opts(fd);
    /* leave from this subchannel's own address, so the reply path is its own */
    if (bind(fd, (struct sockaddr *)&la, sizeof(la)) < 0 ||
        (connect(fd, (struct sockaddr *)&pr->remote, sizeof(pr->remote)) < 0 &&
         errno != EINPROGRESS)) {
        px_debug("tcp", "connect to rank %d over %s: %s", ep->rank, pr->info.label,
                 strerror(errno));
        close(fd);
        return PX_ERR_LINK_UNREACHABLE;
    }
    px_tcp_conn_t *c = px_tcp_conn_new(s, fd, 1);
    if (!c) {
        close(fd);
        return PX_ERR_NO_MEMORY;
    }
    c->ep = ep;
    c->peer_rank = ep->rank;
    c->sub = ep->sub;
    ep->conn = c;
    if (!ep->connect_deadline)
        ep->connect_deadline = px_time_ns() + (uint64_t)(px_tcp_connect_timeout() * 1e9);
    return PX_OK;
}

static void px_tcp_hs_queue_hello(px_tcp_conn_t *c)
{
    px_tcp_hello_t h = {
        .magic = PX_TCP_HELLO_MAGIC,
        .version = PX_TCP_VERSION,
        .sub = (uint16_t)c->sub,
        .job_id = c->iface->job_id,
        .from = (uint32_t)c->iface->me,
        .to = (uint32_t)c->peer_rank,
    };
    memcpy(h.nonce, c->my_nonce, sizeof(h.nonce));
    memcpy(c->hs_out + c->hs_out_len, &h, sizeof(h));
    c->hs_out_len += sizeof(h);
}

static void px_tcp_hs_mac(px_tcp_conn_t *c, const uint8_t *nonce, uint32_t from, uint32_t to,
                          uint8_t mac[32])
{
    uint8_t msg[8 + 16 + 4 + 4 + 2 + 8];
    memcpy(msg, "plxtcp01", 8);
    memcpy(msg + 8, nonce, 16);
    memcpy(msg + 24, &from, 4);
    memcpy(msg + 28, &to, 4);
    uint16_t sub = (uint16_t)c->sub;
    memcpy(msg + 32, &sub, 2);
    memcpy(msg + 34, &c->iface->job_id, 8);
    px_hmac_sha256(c->iface->secret, c->iface->secret_len, msg, sizeof(msg), mac);
}

static int px_tcp_hs_write(px_tcp_conn_t *c)
{
    while (c->hs_out_off < c->hs_out_len) {
        ssize_t n = send(c->fd, c->hs_out + c->hs_out_off, c->hs_out_len - c->hs_out_off,
                         MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return 0;
            return -1;
        }
        c->hs_out_off += (size_t)n;
    }
    return 0;
}

/* Binds an incoming connection to its endpoint, resolving head-to-head
 * connects: the connection initiated by the lower rank wins. */
static int px_tcp_bind_incoming(px_tcp_conn_t *c)
{
    struct px_net_iface *s = c->iface;
    struct px_net_ep *ep = s->addr.eps[c->peer_rank * PX_TCP_MAX_SUB + c->sub];
    if (!ep && s->rx->ep_incoming && s->rx->ep_incoming(s->owner, c->peer_rank) == 0)
        ep = s->addr.eps[c->peer_rank * PX_TCP_MAX_SUB + c->sub];
    if (!ep) {
        px_warn("tcp", "connection from rank %d for unknown subchannel %d", c->peer_rank, c->sub);
        return -1;
    }
    if (ep->conn && ep->conn != c) {
        if (ep->conn->state == PX_TCP_ESTABLISHED) {
            /* the peer found this connection dead and made a new one; an
             * unauthenticated newcomer never displaces a working connection,
             * so the switch waits for its authentication */
            if (!px_params.rail_ft)
                return -1;
            c->ep = ep;
            return 0;
        }
        if (s->me < c->peer_rank && ep->conn->initiator)
            return -1; /* ours wins */
        px_tcp_conn_close(ep->conn, PX_OK);
    }
    c->ep = ep;
    ep->conn = c;
    return 0;
}

static void px_tcp_established(px_tcp_conn_t *c)
{
    struct px_net_ep *ep = c->ep;
    if (ep->conn != c) {
        /* authenticated replacement of a connection the peer gave up on */
        if (ep->conn) {
            px_debug("tcp", "rank %d replaced subchannel %d's connection", c->peer_rank, c->sub);
            px_tcp_conn_close(ep->conn, PX_ERR_LINK_RESET);
        }
        if (ep->conn && ep->conn != c) { /* a newer one got in meanwhile */
            px_tcp_conn_close(c, PX_OK);
            return;
        }
        ep->conn = c;
    }
    ep->was_up = 1;
    c->state = PX_TCP_ESTABLISHED;
    int ka = 0;
    setsockopt(c->fd, SOL_SOCKET, SO_KEEPALIVE, &ka, sizeof(ka));
    c->rxbuf = malloc(PX_TCP_RXBUF);
    if (!c->rxbuf) {
        px_tcp_conn_close(c, PX_ERR_NO_MEMORY);
        return;
    }
    c->ep->connect_deadline = 0;
    c->ep->failed = 0;
    px_debug("tcp", "connected to rank %d (sub %d, %s)", c->peer_rank, c->sub,
             c->initiator ? "outgoing" : "incoming");
    px_tcp_conn_flush(c);
}

static int px_tcp_handshake_step(px_tcp_conn_t *c, uint32_t events);

/* Advances the handshake; returns -1 when the connection was closed. While
 * it waits for the peer, only input wakes it: a connection left armed for
 * output would be reported writable on every poll, and the engine, seeing
 * events, would spin instead of yielding the processor to that peer. */
static int px_tcp_handshake(px_tcp_conn_t *c, uint32_t events)
{
    int rc = px_tcp_handshake_step(c, events);
    if (rc == 0 && c->state == PX_TCP_HANDSHAKE)
        px_tcp_arm_out(c, c->hs_out_off < c->hs_out_len);
    return rc;
}

static int px_tcp_handshake_step(px_tcp_conn_t *c, uint32_t events)
{
    struct px_net_iface *s = c->iface;

    if (c->state == PX_TCP_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof(err);
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return 0;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) {
            px_debug("tcp", "connect to rank %d failed: %s", c->peer_rank, strerror(err));
            px_tcp_conn_close(c, PX_ERR_LINK_UNREACHABLE);
            return -1;
        }
        c->state = PX_TCP_HANDSHAKE;
        px_tcp_hs_queue_hello(c);
    }
    if (px_tcp_hs_write(c) < 0)
        goto fail;

    for (;;) {
        size_t want = c->hello_in ? sizeof(px_tcp_hello_t) + 32 : sizeof(px_tcp_hello_t);
        if (c->hs_in_len < want) {
            struct iovec v = {c->hs_in + c->hs_in_len, want - c->hs_in_len};
            ssize_t n = px_tcp_read(c->fd, &v, 1);
            if (n == 0)
                break;
            if (n < 0)
                goto fail;
            c->hs_in_len += (size_t)n;
            continue;
        }
        if (!c->hello_in) {
            px_tcp_hello_t h;
            memcpy(&h, c->hs_in, sizeof(h));
            if (h.magic != PX_TCP_HELLO_MAGIC || h.version != PX_TCP_VERSION ||
                h.job_id != s->job_id || h.to != (uint32_t)s->me || h.from >= (uint32_t)s->nranks ||
                h.sub >= PX_TCP_MAX_SUB || (c->initiator && (h.from != (uint32_t)c->peer_rank ||
                                                             h.sub != c->sub))) {
                px_warn("tcp", "rejected connection: bad hello");
                goto fail;
            }
            memcpy(c->peer_nonce, h.nonce, 16);
            c->hello_in = 1;
            if (!c->initiator) {
                c->peer_rank = (int)h.from;
                c->sub = h.sub;
                if (px_tcp_bind_incoming(c) < 0) {
                    px_tcp_conn_close(c, PX_OK);
                    return -1;
                }
                px_tcp_hs_queue_hello(c);
            }
            uint8_t mac[32];
            px_tcp_hs_mac(c, c->peer_nonce, (uint32_t)s->me, (uint32_t)c->peer_rank, mac);
            memcpy(c->hs_out + c->hs_out_len, mac, 32);
            c->hs_out_len += 32;
            c->auth_sent = 1;
            if (px_tcp_hs_write(c) < 0)
                goto fail;
            continue;
        }
        uint8_t mac[32];
        px_tcp_hs_mac(c, c->my_nonce, (uint32_t)c->peer_rank, (uint32_t)s->me, mac);
        if (memcmp(mac, c->hs_in + sizeof(px_tcp_hello_t), 32)) {
            px_warn("tcp", "rejected connection claiming rank %d: authentication failed",
                    c->peer_rank);
            goto fail;
        }
        if (c->hs_out_off < c->hs_out_len)
            break; /* our AUTH still has to go out */
        px_tcp_established(c);
        return c->state == PX_TCP_CLOSED ? -1 : 0;
    }
    if (c->hello_in && c->hs_in_len == sizeof(px_tcp_hello_t) + 32 &&
        c->hs_out_off == c->hs_out_len) {
        px_tcp_established(c);
        return c->state == PX_TCP_CLOSED ? -1 : 0;
    }
    return 0;

fail:
    px_tcp_conn_close(c, PX_ERR_LINK_RESET);
    return -1;
}

/* ---------- sending ---------- */

static void px_tcp_sop_done(struct px_net_ep *ep, px_tcp_sop_t *op, px_status_t st)
{
    px_list_del(&op->link);
    if (op->cb)
        op->cb(op->arg, st);
    free(op);
    (void)ep;
}

/* Moves op's iovec cursor past n written bytes. */
static void px_tcp_sop_advance(px_tcp_sop_t *op, size_t n)
{
    while (n && op->idx < op->iovcnt) {
        struct iovec *v = &op->iov[op->idx];
        if (n >= v->iov_len) {
            n -= v->iov_len;
            v->iov_len = 0;
            op->idx++;
        } else {
            v->iov_base = (char *)v->iov_base + n;
            v->iov_len -= n;
            n = 0;
        }
    }
    while (op->idx < op->iovcnt && op->iov[op->idx].iov_len == 0)
        op->idx++;
}

/* writev without SIGPIPE: a peer that reset the connection (a subchannel
 * it gave up on) is an error to handle, not a signal that ends the rank. */
static inline ssize_t px_tcp_sendv(int fd, struct iovec *iov, int cnt)
{
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)cnt};
    return sendmsg(fd, &m, MSG_NOSIGNAL);
}

/* Writes of more than PX_TCP_SPLIT_MIN bytes go in pieces. One write of a
 * 64 KB message with its headers leaves the kernel one full offload packet
 * and a tail of a few dozen bytes, and a pacing congestion control (BBR)
 * holds that tail for as long as the full packet takes to send: the
 * message crosses at half the rate. Up to PX_TCP_SPLIT_PIECES times that
 * size, a write goes as that many equal pieces as make each at most
 * PX_TCP_SPLIT_MIN (two halves of a 64 KB message, three thirds of a
 * 128 KB one); larger writes as two halves, their tails being small beside
 * them. Pieces also let the receiver copy the first while the next cross.
 * 2 emulated nodes, 64 KB eager allgather: 40 us against 47 in one write. */
#define PX_TCP_SPLIT_MIN 65536
#define PX_TCP_SPLIT_PIECES 4

static ssize_t px_tcp_writev(int fd, struct iovec *iov, int cnt)
{
    size_t total = 0;
    if (cnt > 16)
        return px_tcp_sendv(fd, iov, cnt);
    for (int i = 0; i < cnt; i++)
        total += iov[i].iov_len;
    if (total <= PX_TCP_SPLIT_MIN)
        return px_tcp_sendv(fd, iov, cnt);
    size_t pieces = (total + PX_TCP_SPLIT_MIN - 1) / PX_TCP_SPLIT_MIN;
    if (pieces > PX_TCP_SPLIT_PIECES)
        pieces = 2;
    struct iovec w[16];
    size_t done = 0; /* bytes written */
    for (size_t p = 1; p <= pieces; p++) {
        size_t len = total * p / pieces - done;
        int nw = px_iov_slice(iov, cnt, done, len, w, 16);
        ssize_t n = px_tcp_sendv(fd, w, nw);
        if (n < 0)
            return done ? (ssize_t)done : n;
        done += (size_t)n;
        if ((size_t)n != len)
            break;
    }
    return (ssize_t)done;
}

/* Writes queued frames until the socket would block. */
static void px_tcp_conn_flush(px_tcp_conn_t *c)
{
    struct px_net_ep *ep = c->ep;
    while (!px_list_empty(&ep->sendq)) {
        px_tcp_sop_t *op = px_container_of(ep->sendq.next, px_tcp_sop_t, link);
        int cnt = op->iovcnt - op->idx;
        if (cnt > IOV_MAX)
            cnt = IOV_MAX;
        ssize_t n = px_tcp_writev(c->fd, op->iov + op->idx, cnt);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                break;
            px_tcp_conn_close(c, px_tcp_errno_status(errno));
            return;
        }
        ep->queued_bytes -= (size_t)n;
        px_tcp_sop_advance(op, (size_t)n);
        if (op->idx == op->iovcnt)
            px_tcp_sop_done(ep, op, PX_OK);
    }
    px_tcp_arm_out(c, !px_list_empty(&ep->sendq));
}

static px_status_t px_tcp_ep_send(px_net_ep_t *ep, const void *hdr, size_t hdr_len,
                                  const struct iovec *iov, int iovcnt, px_net_send_cb_t cb,
                                  void *arg)
{
    px_tcp_conn_t *c = ep->conn;
    size_t total = px_net_iov_len(iov, iovcnt);
    px_tcp_frame_t fr = {.payload_len = (uint32_t)total,
                         .hdr_len = (uint16_t)hdr_len,
                         .magic = PX_TCP_FRAME_MAGIC};
    size_t written = 0;

    if (hdr_len > PX_NET_HDR_MAX || total > UINT32_MAX)
        return PX_ERR_INVALID_PARAM;
    if (ep->failed)
        return PX_ERR_LINK_DOWN;
    if (ep->peer_done)
        return PX_OK;

    if (c && c->state == PX_TCP_ESTABLISHED && px_list_empty(&ep->sendq) && iovcnt < 15) {
        uint8_t fh[sizeof(fr) + PX_NET_HDR_MAX];
        struct iovec v[16];
        memcpy(fh, &fr, sizeof(fr));
        memcpy(fh + sizeof(fr), hdr, hdr_len);
        v[0].iov_base = fh;
        v[0].iov_len = sizeof(fr) + hdr_len;
        if (iovcnt)
            memcpy(v + 1, iov, sizeof(*iov) * (size_t)iovcnt);
        ssize_t n = px_tcp_writev(c->fd, v, iovcnt + 1);
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
            px_status_t why = px_tcp_errno_status(errno);
            px_tcp_conn_close(c, why);
            return why;
        }
        written = n > 0 ? (size_t)n : 0;
        if (written == sizeof(fr) + hdr_len + total)
            return PX_OK;
    }

    /* Queue what is left (all of it when not connected yet). A small payload
     * is copied, so the caller's buffer is free at once, as with the other
     * MPI libraries (programs that reuse the buffer of a pending small Isend
     * too early still send what they meant). */
    int copy = total <= PX_TCP_COPY_MAX;
    int nv = copy ? 2 : iovcnt + 1; /* the frame header, then the payload */
    px_tcp_sop_t *op = malloc(sizeof(*op) + sizeof(struct iovec) * (size_t)nv + (copy ? total : 0));
    if (!op)
        return PX_ERR_NO_MEMORY;
    memcpy(op->fh, &fr, sizeof(fr));
    memcpy(op->fh + sizeof(fr), hdr, hdr_len);
    op->iov[0].iov_base = op->fh;
    op->iov[0].iov_len = sizeof(fr) + hdr_len;
    if (copy) {
        char *data = (char *)(op->iov + nv);
        px_net_iov_gather(data, iov, iovcnt);
        op->iov[1].iov_base = data;
        op->iov[1].iov_len = total;
        op->iovcnt = total ? 2 : 1;
        cb = NULL;
    } else {
        memcpy(op->iov + 1, iov, sizeof(*iov) * (size_t)iovcnt);
        op->iovcnt = iovcnt + 1;
    }
    op->idx = 0;
    op->cb = cb;
    op->arg = arg;
    ep->queued_bytes += sizeof(fr) + hdr_len + total - written;
    px_tcp_sop_advance(op, written); /* skip what the first writev sent */
    px_list_insert_tail(&ep->sendq, &op->link);

    if (!ep->conn) {
        px_status_t st = px_tcp_connect(ep);
        if (st != PX_OK && st != PX_ERR_LINK_UNREACHABLE) {
            px_list_del(&op->link);
            ep->queued_bytes = 0;
            free(op);
            return st;
        }
        if (!ep->connect_deadline)
            ep->connect_deadline = px_time_ns() + (uint64_t)(px_tcp_connect_timeout() * 1e9);
    } else if (ep->conn->state == PX_TCP_ESTABLISHED) {
        px_tcp_arm_out(ep->conn, 1);
    }
    return copy ? PX_OK : PX_INPROGRESS;
}

static size_t px_tcp_ep_pending(px_net_ep_t *ep) { return ep->queued_bytes; }

static void px_tcp_ep_reset(px_net_ep_t *ep)
{
    px_tcp_conn_t *c = ep->conn;
    if (c) {
        /* an abortive close (px_tcp_conn_close): the peer sees a reset,
         * not the orderly end that means "finalizing" */
        ep->conn = NULL; /* closes quietly: no ep_failed for it */
        px_tcp_conn_close(c, PX_OK);
    }
    px_tcp_drop_queue(ep, PX_ERR_LINK_DOWN);
    ep->failed = 0;
    ep->connect_deadline = 0;
    ep->next_attempt = 0;
}

static const char *px_tcp_ep_describe(px_net_ep_t *ep)
{
    if (!ep->conn)
        return ep->failed ? "no connection (failed)" : "no connection";
    switch (ep->conn->state) {
    case PX_TCP_CONNECTING:
        return "connecting";
    case PX_TCP_HANDSHAKE:
        return ep->conn->initiator ? "in handshake (outgoing)" : "in handshake (incoming)";
    case PX_TCP_ESTABLISHED:
        return "connected";
    default:
        return "closed";
    }
}

static int px_tcp_ep_ready(px_net_ep_t *ep)
{
    return ep->conn && ep->conn->state == PX_TCP_ESTABLISHED;
}

static void px_tcp_ep_rx_cancel(px_net_ep_t *ep)
{
    if (ep->conn && ep->conn->rx_in_payload)
        ep->conn->rx_dest = NULL;
}

/* ---------- receiving ---------- */

static void px_tcp_conn_read(px_tcp_conn_t *c)
{
    struct px_net_iface *s = c->iface;
    struct px_net_ep *ep = c->ep;
    char discard[4096];
    ssize_t n;

    /* Frames already in staging are always parsed; only reads from the
     * socket are bounded (level-triggered epoll reports what is left). A
     * read that returned less than asked for emptied the socket: the next
     * one would only say EAGAIN, a system call between the message just
     * delivered and the caller's reply to it. */
    int reads = 0, drained = 0;
    for (;;) {
        size_t avail = c->rx_end - c->rx_start;
        if (!c->rx_in_payload) {
            if (avail >= sizeof(px_tcp_frame_t)) {
                memcpy(&c->rx_frame, c->rxbuf + c->rx_start, sizeof(c->rx_frame));
                if (c->rx_frame.magic != PX_TCP_FRAME_MAGIC ||
                    c->rx_frame.hdr_len > PX_NET_HDR_MAX) {
                    px_error("tcp", "corrupt frame from rank %d; closing", c->peer_rank);
                    px_tcp_conn_close(c, PX_ERR_PROTOCOL);
                    return;
                }
                size_t need = sizeof(px_tcp_frame_t) + c->rx_frame.hdr_len;
                if (avail >= need) {
                    if (c->rx_frame.payload_len >= PX_TCP_BIG_MIN)
                        c->rx_big = PX_TCP_BIG_KEEP;
                    else if (c->rx_big)
                        c->rx_big--;
                    c->rx_dest = s->rx->rx_begin(ep->owner,
                                                 c->rxbuf + c->rx_start + sizeof(px_tcp_frame_t),
                                                 c->rx_frame.hdr_len, c->rx_frame.payload_len,
                                                 &c->rx_ctx);
                    if (c->state == PX_TCP_CLOSED) /* the layer above reset it */
                        return;
                    c->rx_start += need;
                    c->rx_got = 0;
                    c->rx_in_payload = 1;
                    continue;
                }
            }
        } else {
            size_t want = c->rx_frame.payload_len - c->rx_got;
            size_t take = avail < want ? avail : want;
            if (take) {
                if (c->rx_dest)
                    memcpy(c->rx_dest + c->rx_got, c->rxbuf + c->rx_start, take);
                c->rx_got += take;
                c->rx_start += take;
                want -= take;
            }
            if (!want) {
                c->rx_in_payload = 0;
                s->rx->rx_done(ep->owner, c->rx_ctx);
                if (c->state == PX_TCP_CLOSED)
                    return;
                continue;
            }
            if (want >= PX_TCP_DIRECT_MIN) {
                if (drained || ++reads > 16)
                    return;
                /* staging is empty here: the payload straight into place,
                 * the next frame's header into staging in the same call */
                c->rx_start = c->rx_end = 0;
                struct iovec v[2] = {{c->rx_dest ? c->rx_dest + c->rx_got : discard, want},
                                     {c->rxbuf, PX_TCP_HDR_READ}};
                int nv = 2;
                if (!c->rx_dest && want > sizeof(discard)) {
                    v[0].iov_len = sizeof(discard);
                    nv = 1;
                }
                n = px_tcp_read(c->fd, v, nv);
                if (n == 0)
                    return;
                if (n < 0)
                    goto closed;
                size_t got = (size_t)n < v[0].iov_len ? (size_t)n : v[0].iov_len;
                c->rx_got += got;
                c->rx_end = (size_t)n - got;
                s->reads++;
                drained = (size_t)n < v[0].iov_len + (nv == 2 ? v[1].iov_len : 0);
                continue;
            }
        }
        /* need more bytes in staging */
        if (drained || ++reads > 16)
            return;
        if (c->rx_start == c->rx_end) {
            c->rx_start = c->rx_end = 0;
        } else if (c->rx_start > PX_TCP_RXBUF / 2) {
            memmove(c->rxbuf, c->rxbuf + c->rx_start, c->rx_end - c->rx_start);
            c->rx_end -= c->rx_start;
            c->rx_start = 0;
        }
        size_t room = PX_TCP_RXBUF - c->rx_end;
        if (c->rx_big && !c->rx_in_payload && room > PX_TCP_HDR_READ)
            room = PX_TCP_HDR_READ;
        struct iovec v = {c->rxbuf + c->rx_end, room};
        n = px_tcp_read(c->fd, &v, 1);
        if (n == 0)
            return;
        if (n < 0)
            goto closed;
        c->rx_end += (size_t)n;
        s->reads++;
        drained = (size_t)n < room;
    }
closed:
    if (n == PX_TCP_EOF)
        px_tcp_conn_close(c, (c->rx_in_payload || c->rx_end != c->rx_start) ? PX_ERR_LINK_RESET
                                                                           : PX_ERR_LINK_DOWN);
    else
        px_tcp_conn_close(c, px_tcp_errno_status(errno));
}

static void px_tcp_accept(struct px_net_iface *s, int l)
{
    for (;;) {
        int fd = accept4(s->addr.fd[l], NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            return;
        px_tcp_set_opts(fd);
        px_tcp_conn_t *c = px_tcp_conn_new(s, fd, 0);
        if (!c) {
            close(fd);
            continue;
        }
        /* the acceptor learns the peer's rank from its hello first */
        px_tcp_handshake(c, 0);
    }
}

static void px_tcp_check_connects(struct px_net_iface *s)
{
    uint64_t now = px_time_ns();
    s->reconnect = 0;
    for (int i = 0; i < s->nranks * PX_TCP_MAX_SUB; i++) {
        struct px_net_ep *ep = s->addr.eps[i];
        if (!ep || ep->conn || px_list_empty(&ep->sendq) || ep->failed)
            continue;
        s->reconnect = 1;
        if (ep->connect_deadline && now > ep->connect_deadline) {
            const px_net_addr_pair_t *pr = &s->addr.peers[ep->rank]->pair[ep->sub];
            px_error("tcp", "cannot connect to rank %d over %s within %.1f s", ep->rank,
                     pr->info.label, px_tcp_connect_timeout());
            ep->failed = 1;
            if (s->rx->ep_failed)
                s->rx->ep_failed(ep->owner, PX_ERR_PEER_UNREACHABLE);
            continue;
        }
        if (now >= ep->next_attempt) {
            ep->next_attempt = now + 50000000ull; /* 50 ms between attempts */
            px_tcp_connect(ep);
        }
    }
}

/* With few connections, all established and none waiting to write, a
 * pass reads each one directly: a receive call that finds a frame also
 * reads it, where epoll would take one call to say which socket is readable
 * and another to read it (2 emulated nodes, 1-byte ping-pong: 5.0 us
 * against 5.5). An empty receive costs more than an empty epoll_wait (about
 * 130 ns against 85 here), hence the small limit. Every 16th pass still asks
 * epoll, which also sees listening sockets and connections in their
 * handshake. Returns -1 when the pass must ask epoll (always with
 * PX_TCP_POLL_DIRECT=0, even before any connection exists). */
static int px_tcp_progress_direct(struct px_net_iface *s)
{
    px_tcp_conn_t *cs[PX_TCP_DIRECT_CAP];
    int k = 0;
    if (!s->direct_max || s->nconns > s->direct_max || (++s->pass & 15) == 0)
        return -1;
    px_list_t *it, *tmp;
    px_list_for_each_safe(it, tmp, &s->conns) {
        px_tcp_conn_t *c = px_container_of(it, px_tcp_conn_t, link);
        if (c->state != PX_TCP_ESTABLISHED || c->out_armed)
            return -1;
        cs[k++] = c;
    }
    /* a read may close connections (and move them off the list) through
     * the layers above: walk the copy, skip what is closed meanwhile */
    unsigned long before = s->reads;
    for (int i = 0; i < k; i++)
        if (cs[i]->state == PX_TCP_ESTABLISHED)
            px_tcp_conn_read(cs[i]);
    if (!px_list_empty(&s->dead))
        px_tcp_free_dead(s);
    return (int)(s->reads - before);
}

static int px_tcp_iface_progress(px_net_iface_t *s)
{
    struct epoll_event evs[32];
    int n = px_tcp_progress_direct(s);
    if (n >= 0)
        return n;
    n = epoll_wait(s->addr.epfd, evs, 32, 0);
    for (int i = 0; i < n; i++) {
        px_tcp_conn_t *c = evs[i].data.ptr;
        if (PX_TCP_IS_LISTENER(c)) {
            px_tcp_accept(s, (int)(uintptr_t)c - 1);
            continue;
        }
        if (c->state == PX_TCP_CLOSED)
            continue;
        if (c->state != PX_TCP_ESTABLISHED) {
            if (px_tcp_handshake(c, evs[i].events) < 0)
                continue;
            if (c->state != PX_TCP_ESTABLISHED)
                continue;
        }
        if (evs[i].events & EPOLLOUT)
            px_tcp_conn_flush(c);
        if (c->state == PX_TCP_ESTABLISHED && (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
            px_tcp_conn_read(c);
    }
    /* rare: endpoints whose connection failed and still have data queued
     * (a lost head-to-head race retries within milliseconds) */
    if (s->reconnect) {
        uint64_t now = px_time_ns();
        if (now >= s->next_check) {
            s->next_check = now + 5000000ull;
            px_tcp_check_connects(s);
        }
    }
    if (!px_list_empty(&s->dead))
        px_tcp_free_dead(s);
    return n;
}

static int px_tcp_iface_quiet(px_net_iface_t *s)
{
    return !s->reconnect && px_list_empty(&s->dead);
}

const px_net_ops_t px_net_tcp_ops = {
    .size = sizeof(px_net_ops_t),
    .name = "tcp",
    .iface_open = px_tcp_iface_open,
    .iface_close = px_tcp_iface_close,
    .iface_query = px_tcp_iface_query,
    .iface_reachable = px_net_addr_iface_reachable,
    .ep_create = px_net_addr_ep_create,
    .ep_subs = px_net_addr_ep_subs,
    .ep_send = px_tcp_ep_send,
    .ep_get = px_net_stub_ep_get,
    .ep_put = px_net_stub_ep_put,
    .ep_pending = px_tcp_ep_pending,
    .ep_reset = px_tcp_ep_reset,
    .ep_rx_cancel = px_tcp_ep_rx_cancel,
    .iface_progress = px_tcp_iface_progress,
    .iface_fd = px_net_addr_iface_fd,
    .ep_path_check = px_net_stub_ep_path_check,
    .ep_describe = px_tcp_ep_describe,
    .iface_quiet = px_tcp_iface_quiet,
    .ep_ready = px_tcp_ep_ready,
};
