/* tcp connections: set-up (connect, accept), the authenticated handshake,
 * and their end. */
#include "tcp_impl.h"

static int px_tcp_handshake_step(px_tcp_conn_t *c, uint32_t events);

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

void px_tcp_arm_out(px_tcp_conn_t *c, int on)
{
    if (c->out_armed == on || c->state == PX_TCP_CLOSED)
        return;
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(c->iface->addr.epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->out_armed = on;
}

void px_tcp_conn_close(px_tcp_conn_t *c, px_status_t why)
{
    struct px_net_iface *s = c->iface;
    struct px_net_ep *ep = c->ep;
    if (c->state == PX_TCP_CLOSED)
        return;
    int was_established = c->state == PX_TCP_ESTABLISHED;
    epoll_ctl(s->addr.epfd, EPOLL_CTL_DEL, c->fd, NULL);
    if (!s->closing && !c->orderly) {
        /* Only finalize (and ep_destroy) ends a connection in order: the peer takes an
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

void px_tcp_free_dead(struct px_net_iface *s)
{
    while (!px_list_empty(&s->dead)) {
        px_list_t *e = s->dead.next;
        px_list_del(e);
        free(px_container_of(e, px_tcp_conn_t, link));
    }
}

px_status_t px_tcp_connect(struct px_net_ep *ep)
{
    struct px_net_iface *s = ep->iface;
    const px_net_addr_pair_t *pr = &s->addr.peers[ep->rank]->pair[ep->sub];
    struct sockaddr_in la = {.sin_family = AF_INET, .sin_addr = s->addr.local[pr->local].addr};

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return PX_ERR_IO;
    px_tcp_set_opts(fd);
    px_net_addr_mark(fd, &pr->info, "tcp");
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
    uint64_t to_job;
    uint32_t to;
    px_boot_peer_ident(c->peer_rank, &to_job, &to);
    px_tcp_hello_t h = {
        .magic = PX_TCP_HELLO_MAGIC,
        .version = PX_TCP_VERSION,
        .sub = (uint16_t)c->sub,
        .job_id = c->iface->job_id,
        .to_job = to_job,
        .from = (uint32_t)c->iface->me,
        .to = to,
    };
    memcpy(h.nonce, c->my_nonce, sizeof(h.nonce));
    memcpy(c->hs_out + c->hs_out_len, &h, sizeof(h));
    c->hs_out_len += sizeof(h);
}

/* The proof of peer `from` to peer `to` (either is this process) with the
 * key of the connection's peer: the job's secret, or the one its job and
 * this one derived when they met. 0, or -1 when the peer has no key. */
static int px_tcp_hs_mac(px_tcp_conn_t *c, const uint8_t *nonce, int from, int to, uint8_t mac[32])
{
    uint8_t msg[8 + 16 + 2 * (8 + 4) + 2];
    uint64_t jf, jt;
    uint32_t rf, rt;
    size_t klen;
    const uint8_t *key = px_boot_peer_key(c->peer_rank, &klen);
    if (!key || px_boot_peer_ident(from, &jf, &rf) || px_boot_peer_ident(to, &jt, &rt))
        return -1;
    memcpy(msg, "plxtcp02", 8);
    memcpy(msg + 8, nonce, 16);
    memcpy(msg + 24, &jf, 8);
    memcpy(msg + 32, &rf, 4);
    memcpy(msg + 36, &jt, 8);
    memcpy(msg + 44, &rt, 4);
    uint16_t sub = (uint16_t)c->sub;
    memcpy(msg + 48, &sub, 2);
    px_hmac_sha256(key, klen, msg, sizeof(msg), mac);
    return 0;
}

static int px_tcp_hs_write(px_tcp_conn_t *c)
{
    while (c->hs_out_off < c->hs_out_len) {
        ssize_t n =
            send(c->fd, c->hs_out + c->hs_out_off, c->hs_out_len - c->hs_out_off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return 0;
            return -1;
        }
        c->hs_out_off += (size_t)n;
    }
    return 0;
}

/* An incoming connection carries the marks of the lane its hello named. */
static void px_tcp_mark_incoming(px_tcp_conn_t *c)
{
    px_net_addr_mark(c->fd, &c->iface->addr.peers[c->peer_rank]->pair[c->sub].info, "tcp");
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
            px_tcp_mark_incoming(c);
            return 0;
        }
        if (px_boot_peer_before(s->me, c->peer_rank) && ep->conn->initiator)
            return -1; /* ours wins */
        px_tcp_conn_close(ep->conn, PX_OK);
    }
    c->ep = ep;
    ep->conn = c;
    px_tcp_mark_incoming(c);
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

/* Advances the handshake; returns -1 when the connection was closed. While
 * it waits for the peer, only input wakes it: a connection left armed for
 * output would be reported writable on every poll, and the engine, seeing
 * events, would spin instead of yielding the processor to that peer. */
int px_tcp_handshake(px_tcp_conn_t *c, uint32_t events)
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
            /* from a rank of this job, or a process of another job met before */
            int from = h.magic == PX_TCP_HELLO_MAGIC && h.version == PX_TCP_VERSION
                           ? px_boot_peer_find(h.job_id, h.from)
                           : -1;
            if (from < 0 || from == s->me || h.to_job != s->job_id || h.to != (uint32_t)s->me ||
                h.sub >= PX_TCP_MAX_SUB ||
                (c->initiator && (from != c->peer_rank || h.sub != c->sub))) {
                px_warn("tcp", "rejected connection: bad hello");
                goto fail;
            }
            memcpy(c->peer_nonce, h.nonce, 16);
            c->hello_in = 1;
            if (!c->initiator) {
                c->peer_rank = from;
                c->sub = h.sub;
                if (px_tcp_bind_incoming(c) < 0) {
                    px_tcp_conn_close(c, PX_OK);
                    return -1;
                }
                px_tcp_hs_queue_hello(c);
            }
            uint8_t mac[32];
            if (px_tcp_hs_mac(c, c->peer_nonce, s->me, c->peer_rank, mac))
                goto fail;
            memcpy(c->hs_out + c->hs_out_len, mac, 32);
            c->hs_out_len += 32;
            c->auth_sent = 1;
            if (px_tcp_hs_write(c) < 0)
                goto fail;
            continue;
        }
        uint8_t mac[32];
        if (px_tcp_hs_mac(c, c->my_nonce, c->peer_rank, s->me, mac) ||
            memcmp(mac, c->hs_in + sizeof(px_tcp_hello_t), 32)) {
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

void px_tcp_accept(struct px_net_iface *s, int l)
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

void px_tcp_check_connects(struct px_net_iface *s)
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
