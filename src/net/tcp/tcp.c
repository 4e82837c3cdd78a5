#include "tcp_impl.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static px_net_ep_t *px_tcp_ep_new(px_net_iface_t *s, int rank, int sub,
                                  const px_net_addr_pair_t *pair);

/* ---------- sockets ---------- */

void px_tcp_set_opts(int fd)
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

double px_tcp_connect_timeout(void)
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
void px_tcp_drop_queue(struct px_net_ep *ep, px_status_t why)
{
    px_list_t q, *e, *t;
    px_list_init(&q);
    /* detach first: a callback may queue new frames on this endpoint */
    px_list_splice_tail(&q, &ep->sendq);
    ep->queued_bytes = 0;
    px_list_for_each_safe(e, t, &q) {
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
    px_status_t st =
        s ? px_net_addr_open(&s->addr, "tcp", SOCK_STREAM, px_tcp_ep_new, boot) : PX_ERR_NO_MEMORY;
    if (st == PX_OK && (st = px_net_addr_publish(&s->addr, val, sizeof(val))) != PX_OK)
        px_net_addr_close(&s->addr);
    if (st != PX_OK) {
        free(s);
        return st;
    }
    s->rx = rx;
    s->owner = owner;
    s->me = boot->rank;
    s->nranks = px_boot_peer_room(boot);
    s->job_id = boot->job_id;
    px_list_init(&s->conns);
    px_list_init(&s->dead);
    s->direct_max = px_params.tcp_poll_direct < 0 ? 0
                    : px_params.tcp_poll_direct > PX_TCP_DIRECT_CAP
                        ? PX_TCP_DIRECT_CAP
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
    px_list_for_each_safe(e, t, &s->conns) {
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
        px_list_for_each_safe(e, t, &ep->sendq)
            free(px_container_of(e, px_tcp_sop_t, link));
        free(ep);
    }
    px_net_addr_close(&s->addr);
    free(s);
}

static void px_tcp_iface_query(px_net_iface_t *s, px_net_attr_t *attr)
{
    (void)s;
    memset(attr, 0, sizeof(*attr));
    attr->caps = PX_NET_CAP_RESET | PX_NET_CAP_PATH_CHECK | PX_NET_CAP_FENCE;
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
 * them. Pieces also let the receiver copy the first while the next cross
 * (docs/transports.md, "tcp"). */
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

/* Follows the rate c delivers at (at most once per PX_TCP_QUEUE_NS): its
 * bulk frames, and its kernel's unsent bytes while they are queued, carry
 * PX_TCP_QUEUE_NS of it. */
static void px_tcp_pace(px_tcp_conn_t *c)
{
    uint64_t now = px_time_ns();
    if (now - c->rate_ns < PX_TCP_QUEUE_NS)
        return;
    c->rate_ns = now;
    int app_limited = 0;
    uint64_t rate = px_tcp_delivery_rate(c->fd, &app_limited);
    if (!rate || (app_limited && rate < c->rate))
        return; /* an idle connection's rate says little about its path */
    c->rate = rate;
    double want = (double)rate * (double)PX_TCP_QUEUE_NS * 1e-9;
    if (want >= PX_TCP_LOWAT_MAX) { /* its kernel drains a full buffer that fast */
        c->frame = 0;
        c->lowat_bulk = 0;
        return;
    }
    c->frame = want < PX_TCP_FRAME_MIN ? PX_TCP_FRAME_MIN : (size_t)want & ~(size_t)4095;
    c->lowat_bulk = want < PX_TCP_LOWAT_MIN ? PX_TCP_LOWAT_MIN : (int)want;
}

/* The kernel's bound on unsent bytes becomes `lowat` (0: none). */
static void px_tcp_lowat(px_tcp_conn_t *c, int lowat)
{
    if (lowat == c->lowat)
        return;
    /* 0 restores the system's (net.ipv4.tcp_notsent_lowat, no bound by default) */
    if (setsockopt(c->fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof(lowat)) == 0)
        c->lowat = lowat;
}

/* Writes queued frames until the socket would block. */
void px_tcp_conn_flush(px_tcp_conn_t *c)
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
    if (px_list_empty(&ep->sendq))
        px_tcp_lowat(c, 0);
    px_tcp_arm_out(c, !px_list_empty(&ep->sendq));
}

/* Queues op: behind every frame when it is bulk, else ahead of the bulk
 * frames not yet started at the end of the queue (behind every ordered
 * frame, and the first frame, which may be partly written). */
static void px_tcp_enqueue(struct px_net_ep *ep, px_tcp_sop_t *op)
{
    px_list_t *at = ep->sendq.prev;
    if (!op->bulk)
        while (at != &ep->sendq && at != ep->sendq.next &&
               px_container_of(at, px_tcp_sop_t, link)->bulk)
            at = at->prev;
    px_list_insert_head(at, &op->link);
}

static px_status_t px_tcp_ep_send_x(px_net_ep_t *ep, const void *hdr, size_t hdr_len,
                                    const struct iovec *iov, int iovcnt, px_net_send_cb_t cb,
                                    void *arg, int bulk)
{
    px_tcp_conn_t *c = ep->conn;
    size_t total = px_net_iov_len(iov, iovcnt);
    px_tcp_frame_t fr = {
        .payload_len = (uint32_t)total, .hdr_len = (uint16_t)hdr_len, .magic = PX_TCP_FRAME_MAGIC};
    size_t written = 0;

    if (hdr_len > PX_NET_HDR_MAX || total > UINT32_MAX)
        return PX_ERR_INVALID_PARAM;
    if (ep->failed)
        return PX_ERR_LINK_DOWN;
    if (ep->peer_done)
        return PX_OK;

    if (bulk && c && c->state == PX_TCP_ESTABLISHED) {
        px_tcp_pace(c);
        px_tcp_lowat(c, c->lowat_bulk);
    }
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
        if (written == sizeof(fr) + hdr_len + total) {
            px_tcp_lowat(c, 0);
            return PX_OK;
        }
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
    op->bulk = bulk;
    px_tcp_sop_advance(op, written); /* skip what the first writev sent */
    px_tcp_enqueue(ep, op);

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

static px_status_t px_tcp_ep_send(px_net_ep_t *ep, const void *hdr, size_t hdr_len,
                                  const struct iovec *iov, int iovcnt, px_net_send_cb_t cb,
                                  void *arg)
{
    return px_tcp_ep_send_x(ep, hdr, hdr_len, iov, iovcnt, cb, arg, 0);
}

static px_status_t px_tcp_ep_send_bulk(px_net_ep_t *ep, const void *hdr, size_t hdr_len,
                                       const struct iovec *iov, int iovcnt, px_net_send_cb_t cb,
                                       void *arg)
{
    return px_tcp_ep_send_x(ep, hdr, hdr_len, iov, iovcnt, cb, arg, 1);
}

static size_t px_tcp_ep_pending(px_net_ep_t *ep) { return ep->queued_bytes; }

static size_t px_tcp_ep_frame(px_net_ep_t *ep)
{
    px_tcp_conn_t *c = ep->conn;
    if (!c || c->state != PX_TCP_ESTABLISHED)
        return 0;
    px_tcp_pace(c);
    return c->frame;
}

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

static void px_tcp_ep_destroy(px_net_ep_t *ep)
{
    struct px_net_iface *s = ep->iface;
    px_list_t *e, *t;
    /* its connections (also one still in its handshake) end in order */
    px_list_for_each_safe(e, t, &s->conns) {
        px_tcp_conn_t *c = px_container_of(e, px_tcp_conn_t, link);
        if (c->ep != ep && ep->conn != c)
            continue;
        c->ep = NULL;
        c->orderly = 1;
        px_tcp_conn_close(c, PX_OK);
    }
    ep->conn = NULL;
    px_tcp_drop_queue(ep, PX_ERR_CANCELED);
    px_net_ep_t **slot = &s->addr.eps[ep->rank * PX_TCP_MAX_SUB];
    slot[ep->sub] = NULL;
    int left = 0;
    for (int k = 0; k < PX_TCP_MAX_SUB; k++)
        left |= slot[k] != NULL;
    if (!left) {
        free(s->addr.peers[ep->rank]);
        s->addr.peers[ep->rank] = NULL;
    }
    free(ep);
}

/* A begun send whose caller wants its buffer back (ep_withdraw): what is
 * left of it is copied into a send of its own in its place, which the
 * connection writes whole (the stream's framing needs it), and the caller
 * is told the send was taken back. NULL when there is no memory for it. */
static px_tcp_sop_t *px_tcp_sop_detach(px_tcp_sop_t *op)
{
    size_t left = 0;
    for (int i = op->idx; i < op->iovcnt; i++)
        left += op->iov[i].iov_len;
    px_tcp_sop_t *c = malloc(sizeof(*c) + sizeof(struct iovec) + left);
    if (!c)
        return NULL;
    char *data = (char *)(c->iov + 1);
    px_net_iov_gather(data, op->iov + op->idx, op->iovcnt - op->idx);
    c->iov[0].iov_base = data;
    c->iov[0].iov_len = left;
    c->iovcnt = 1;
    c->idx = 0;
    c->bulk = 0; /* begun: first in the queue, where it stays */
    c->cb = NULL;
    c->arg = NULL;
    return c;
}

static void px_tcp_ep_withdraw(px_net_ep_t *ep)
{
    px_list_t q, *e, *t;
    px_list_init(&q);
    /* detach first: a callback may queue new frames on this endpoint. A
     * begun send stays, as a copy of what is left of it: over a path that
     * went silent it would otherwise hold its caller until the connection
     * times out. */
    px_list_for_each_safe(e, t, &ep->sendq) {
        px_tcp_sop_t *op = px_container_of(e, px_tcp_sop_t, link);
        if (!op->cb)
            continue; /* a copy: it must go whole */
        if (op->idx || op->iov[0].iov_base != op->fh) {
            px_tcp_sop_t *c = px_tcp_sop_detach(op);
            if (!c)
                continue;                     /* it goes whole, from the caller's buffer */
            px_list_insert_head(e, &c->link); /* just after op */
        } else {
            size_t left = 0;
            for (int i = 0; i < op->iovcnt; i++)
                left += op->iov[i].iov_len;
            ep->queued_bytes -= left;
        }
        px_list_del(e);
        px_list_insert_tail(&q, e);
    }
    px_list_for_each_safe(e, t, &q) {
        px_tcp_sop_t *op = px_container_of(e, px_tcp_sop_t, link);
        px_list_del(e);
        op->cb(op->arg, PX_ERR_CANCELED);
        free(op);
    }
    if (ep->conn && ep->conn->state == PX_TCP_ESTABLISHED)
        px_tcp_arm_out(ep->conn, !px_list_empty(&ep->sendq));
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

/* Whether the peer's kernel acknowledges what this connection sends
 * (TCP_INFO): -1 when segments are outstanding and no acknowledgement came
 * for longer than timeout_ns and than the connection's own round trip and
 * four deviations allow (a path that drops everything); 1 when one came, or
 * nothing is outstanding (a receiver whose window is full still answers the
 * window probes, and nothing is outstanding then); 0 without a connection.
 * Called only for data outstanding at the layer above for longer than
 * timeout_ns, so an acknowledgement from before an idle spell does not
 * count against a path. */
static int px_tcp_ep_path_check(px_net_ep_t *ep, uint64_t timeout_ns)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    if (!ep->conn || ep->conn->state != PX_TCP_ESTABLISHED ||
        getsockopt(ep->conn->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
        return 0;
    if (!ti.tcpi_unacked)
        return 1;
    uint64_t silent = (uint64_t)ti.tcpi_last_ack_recv * 1000000ull;
    uint64_t rtt = ((uint64_t)ti.tcpi_rtt + 4ull * ti.tcpi_rttvar) * 1000ull;
    uint64_t limit = timeout_ns > 2 * rtt ? timeout_ns : 2 * rtt;
    return silent > limit ? -1 : 1;
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
                    c->rx_dest =
                        s->rx->rx_begin(ep->owner, c->rxbuf + c->rx_start + sizeof(px_tcp_frame_t),
                                        c->rx_frame.hdr_len, c->rx_frame.payload_len, &c->rx_ctx);
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

/* With few connections, all established and none waiting to write, a
 * pass reads each one directly: a receive call that finds a frame also
 * reads it, where epoll would take one call to say which socket is readable
 * and another to read it. An empty receive costs more than an empty
 * epoll_wait, hence the small limit (docs/transports.md, "tcp"). Every 16th
 * pass still asks
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
    .ep_send_bulk = px_tcp_ep_send_bulk,
    .ep_frame = px_tcp_ep_frame,
    .ep_wake = px_net_stub_ep_wake,
    .ep_send_fill = px_net_stub_ep_send_fill,
    .ep_get = px_net_stub_ep_get,
    .ep_put = px_net_stub_ep_put,
    .ep_pending = px_tcp_ep_pending,
    .ep_reset = px_tcp_ep_reset,
    .ep_withdraw = px_tcp_ep_withdraw,
    .ep_destroy = px_tcp_ep_destroy,
    .ep_rx_cancel = px_tcp_ep_rx_cancel,
    .iface_progress = px_tcp_iface_progress,
    .iface_fd = px_net_addr_iface_fd,
    .ep_path_check = px_tcp_ep_path_check,
    .ep_describe = px_tcp_ep_describe,
    .iface_quiet = px_tcp_iface_quiet,
    .ep_ready = px_tcp_ep_ready,
    .ep_bulk_recv = px_net_stub_ep_bulk_recv,
    .ep_bulk_send = px_net_stub_ep_bulk_send,
    .ep_bulk_acked = px_net_stub_ep_bulk_acked,
    .ep_bulk_cancel = px_net_stub_ep_bulk_cancel,
    .iface_sleep = px_net_stub_iface_sleep,
};
