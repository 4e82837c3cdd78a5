/* Bootstrap server: one epoll set, non-blocking sockets, per-connection
 * input and output buffers, so no rank can stall the others. Connections are
 * freed only in px_boot_server_sweep(), so callbacks may call back into the
 * server (e.g. abort_all from a `lost` callback) at any time. */
#include "boot_server.h"
#include "boot_wire.h"
#include "boot_sha256.h"
#include "boot.h"
#include "../util/clock.h"
#include "../util/list.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define PX_BOOT_AUTH_TIMEOUT_NS (10ull * 1000000000ull)
#define PX_BOOT_CLOSE_TIMEOUT_NS (2ull * 1000000000ull)
#define PX_BOOT_MAX_PENDING_AUTH 1024
#define PX_BOOT_READ_CHUNK 65536

typedef enum {
    PX_BOOT_CONN_AUTH, /* HELLO sent, waiting for AUTH */
    PX_BOOT_CONN_KV,
    PX_BOOT_CONN_CTL,
    PX_BOOT_CONN_CLOSING, /* REJECT queued; closed once sent */
} px_boot_conn_state_t;

typedef struct px_boot_conn {
    px_list_t link;
    int fd;
    px_boot_conn_state_t state;
    int rank;
    int dead;     /* to be closed by the sweep */
    int epollout; /* EPOLLOUT currently requested */
    char why[160];
    uint8_t nonce[PX_BOOT_NONCE_LEN];
    px_boot_buf_t rbuf;
    size_t roff;
    px_boot_buf_t wbuf;
    size_t woff;
    uint64_t deadline_ns;
    char peer[64];
} px_boot_conn_t;

typedef struct px_boot_srank {
    px_boot_conn_t *kv, *ctl;
    int connected; /* kv authenticated at least once */
    int finalized;
    int lost; /* `lost` already reported */
    int fenced;
    px_boot_buf_t puts; /* validated puts of the current fence, wire form */
    uint32_t nputs;
} px_boot_srank_t;

struct px_boot_server {
    int epfd, lfd;
    char addr[64];
    int size, num_nodes, universe_size;
    int *node_of;
    uint8_t secret[PX_BOOT_SECRET_LEN];
    uint64_t job_id;
    px_boot_server_cbs_t cbs;
    px_list_t conns;
    int num_auth; /* connections still in the handshake */
    int num_connected;
    int num_fenced;
    int num_finalized;
    int fence_error_reported;
    px_boot_buf_t abort_frame; /* set once the job is aborted; late ranks get it too */
    px_boot_srank_t *ranks;
};

static void px_boot_server_logf(px_boot_server_t *srv, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void px_boot_server_logf(px_boot_server_t *srv, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    if (!srv->cbs.log)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    srv->cbs.log(srv->cbs.arg, msg);
}

static void px_boot_conn_fail(px_boot_conn_t *c, const char *why)
{
    if (c->dead)
        return;
    c->dead = 1;
    snprintf(c->why, sizeof(c->why), "%s", why);
}

static void px_boot_conn_update_events(px_boot_server_t *srv, px_boot_conn_t *c)
{
    int want = c->woff < c->wbuf.len;
    if (want == c->epollout || c->dead)
        return;
    struct epoll_event ev = {.events = EPOLLIN | (want ? EPOLLOUT : 0), .data.ptr = c};
    if (epoll_ctl(srv->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
        c->epollout = want;
}

static void px_boot_conn_flush(px_boot_server_t *srv, px_boot_conn_t *c)
{
    while (!c->dead && c->woff < c->wbuf.len) {
        ssize_t n = send(c->fd, c->wbuf.p + c->woff, c->wbuf.len - c->woff, MSG_NOSIGNAL);
        if (n > 0) {
            c->woff += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        px_boot_conn_fail(c, n < 0 ? strerror(errno) : "connection closed");
    }
    if (c->woff == c->wbuf.len) {
        c->wbuf.len = 0;
        c->woff = 0;
        if (c->state == PX_BOOT_CONN_CLOSING)
            px_boot_conn_fail(c, "");
    }
    px_boot_conn_update_events(srv, c);
}

/* Appends a whole frame (header + payload) to the connection's output. */
static void px_boot_conn_send(px_boot_server_t *srv, px_boot_conn_t *c, const px_boot_buf_t *frame)
{
    if (c->dead)
        return;
    px_boot_buf_put(&c->wbuf, frame->p, frame->len);
    if (c->wbuf.oom || frame->oom) {
        px_boot_conn_fail(c, "out of memory");
        return;
    }
    px_boot_conn_flush(srv, c);
}

static void px_boot_conn_reject(px_boot_server_t *srv, px_boot_conn_t *c, const char *why)
{
    px_boot_buf_t f = {0};
    size_t n = strlen(why);
    px_boot_server_logf(srv, "rejected bootstrap connection from %s: %s", c->peer, why);
    px_boot_buf_put_hdr(&f, PX_BOOT_MSG_REJECT, (uint32_t)n);
    px_boot_buf_put(&f, why, n);
    if (c->state == PX_BOOT_CONN_AUTH)
        srv->num_auth--;
    c->state = PX_BOOT_CONN_CLOSING;
    c->deadline_ns = px_time_ns() + PX_BOOT_CLOSE_TIMEOUT_NS;
    px_boot_conn_send(srv, c, &f);
    px_boot_buf_free(&f);
}

static void px_boot_server_accept(px_boot_server_t *srv)
{
    for (;;) {
        struct sockaddr_in sa;
        socklen_t salen = sizeof(sa);
        int fd = accept4(srv->lfd, (struct sockaddr *)&sa, &salen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            return; /* EAGAIN, or transient errors (EMFILE...) retried on the next event */
        }
        char peer[64];
        char ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
        snprintf(peer, sizeof(peer), "%s:%u", ip, (unsigned)ntohs(sa.sin_port));
        if (srv->num_auth >= PX_BOOT_MAX_PENDING_AUTH) {
            px_boot_server_logf(srv,
                                "rejected bootstrap connection from %s: too many handshakes "
                                "in progress",
                                peer);
            close(fd);
            continue;
        }
        px_boot_conn_t *c = calloc(1, sizeof(*c));
        if (!c) {
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        c->fd = fd;
        c->rank = -1;
        c->state = PX_BOOT_CONN_AUTH;
        c->deadline_ns = px_time_ns() + PX_BOOT_AUTH_TIMEOUT_NS;
        snprintf(c->peer, sizeof(c->peer), "%s", peer);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (px_boot_random(c->nonce, sizeof(c->nonce)) != PX_OK ||
            epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
            close(fd);
            free(c);
            continue;
        }
        px_list_insert_tail(&srv->conns, &c->link);
        srv->num_auth++;

        px_boot_buf_t f = {0};
        px_boot_buf_put_hdr(&f, PX_BOOT_MSG_HELLO, PX_BOOT_HELLO_LEN);
        px_boot_buf_put_u32(&f, PX_BOOT_MAGIC);
        px_boot_buf_put_u32(&f, PX_BOOT_PROTO_VERSION);
        px_boot_buf_put(&f, c->nonce, sizeof(c->nonce));
        px_boot_conn_send(srv, c, &f);
        px_boot_buf_free(&f);
    }
}

static void px_boot_server_welcome(px_boot_server_t *srv, px_boot_conn_t *c)
{
    px_boot_buf_t f = {0};
    px_boot_buf_put_hdr(&f, PX_BOOT_MSG_WELCOME,
                        (uint32_t)(PX_BOOT_WELCOME_FIXED_LEN + 4 * (size_t)srv->size));
    px_boot_buf_put_u32(&f, (uint32_t)srv->size);
    px_boot_buf_put_u32(&f, (uint32_t)srv->num_nodes);
    px_boot_buf_put_u32(&f, (uint32_t)srv->universe_size);
    px_boot_buf_put_u64(&f, srv->job_id);
    for (int r = 0; r < srv->size; r++)
        px_boot_buf_put_u32(&f, (uint32_t)srv->node_of[r]);
    px_boot_conn_send(srv, c, &f);
    px_boot_buf_free(&f);
}

static void px_boot_server_on_auth(px_boot_server_t *srv, px_boot_conn_t *c, px_boot_rd_t *rd)
{
    uint32_t rank = px_boot_rd_u32(rd);
    uint32_t role = px_boot_rd_u32(rd);
    const uint8_t *mac = px_boot_rd_bytes(rd, PX_BOOT_MAC_LEN);
    uint8_t want[PX_BOOT_MAC_LEN];

    if (rd->err || px_boot_rd_left(rd)) {
        px_boot_conn_reject(srv, c, "malformed authentication message");
        return;
    }
    /* The code is checked before rank or role, so an outsider learns nothing else. */
    px_boot_auth_mac(srv->secret, c->nonce, rank, role, want);
    if (!px_boot_mac_equal(mac, want, PX_BOOT_MAC_LEN)) {
        px_boot_conn_reject(srv, c, "authentication failed (wrong job secret)");
        return;
    }
    if (rank >= (uint32_t)srv->size) {
        px_boot_conn_reject(srv, c, "rank out of range");
        return;
    }
    px_boot_srank_t *r = &srv->ranks[rank];
    if (role == PX_BOOT_ROLE_KV) {
        if (r->kv || r->connected) {
            px_boot_conn_reject(srv, c, "rank already connected");
            return;
        }
        r->kv = c;
        r->connected = 1;
        c->state = PX_BOOT_CONN_KV;
        srv->num_connected++;
    } else if (role == PX_BOOT_ROLE_CTL) {
        if (r->ctl || !r->connected || r->lost) {
            px_boot_conn_reject(srv, c,
                                r->ctl ? "rank already connected" : "control connection before kv");
            return;
        }
        r->ctl = c;
        c->state = PX_BOOT_CONN_CTL;
    } else {
        px_boot_conn_reject(srv, c, "unknown role");
        return;
    }
    srv->num_auth--;
    c->rank = (int)rank;
    px_boot_server_logf(srv, "rank %u connected (%s) from %s", rank,
                        role == PX_BOOT_ROLE_KV ? "kv" : "ctl", c->peer);
    px_boot_server_welcome(srv, c);
    if (role == PX_BOOT_ROLE_CTL && srv->abort_frame.len)
        px_boot_conn_send(srv, c, &srv->abort_frame); /* connected after the job ended */
    if (role == PX_BOOT_ROLE_KV && srv->cbs.connected)
        srv->cbs.connected(srv->cbs.arg, (int)rank);
}

static void px_boot_server_check_stuck(px_boot_server_t *srv)
{
    /* A fence needs every rank; once a finalized rank is all that is missing it never completes. */
    if (srv->fence_error_reported || !srv->num_fenced || !srv->num_finalized ||
        srv->num_fenced + srv->num_finalized < srv->size)
        return;
    srv->fence_error_reported = 1;
    int fin = -1, fen = -1;
    for (int r = 0; r < srv->size; r++) {
        if (srv->ranks[r].finalized && fin < 0)
            fin = r;
        if (srv->ranks[r].fenced && fen < 0)
            fen = r;
    }
    char msg[200];
    snprintf(msg, sizeof(msg), "rank %d entered a fence/barrier after rank %d finalized", fen, fin);
    if (srv->cbs.job_error)
        srv->cbs.job_error(srv->cbs.arg, msg);
}

static void px_boot_server_fence_complete(px_boot_server_t *srv)
{
    px_boot_buf_t f = {0};
    size_t len = 4;
    uint32_t count = 0;
    for (int r = 0; r < srv->size; r++) {
        len += srv->ranks[r].puts.len + 4 * (size_t)srv->ranks[r].nputs;
        count += srv->ranks[r].nputs;
    }
    if (len > PX_BOOT_MAX_SERVER_FRAME) {
        if (srv->cbs.job_error)
            srv->cbs.job_error(srv->cbs.arg, "key-value exchange too large for one fence");
        return;
    }
    px_boot_buf_put_hdr(&f, PX_BOOT_MSG_FENCE_DONE, (uint32_t)len);
    px_boot_buf_put_u32(&f, count);
    for (int r = 0; r < srv->size; r++) {
        /* re-walk the validated puts to prefix each with its rank */
        px_boot_rd_t rd = px_boot_rd_make(srv->ranks[r].puts.p, srv->ranks[r].puts.len);
        for (uint32_t i = 0; i < srv->ranks[r].nputs; i++) {
            size_t start = rd.off;
            uint16_t klen = px_boot_rd_u16(&rd);
            uint32_t vlen = px_boot_rd_u32(&rd);
            px_boot_rd_bytes(&rd, (size_t)klen + vlen);
            px_boot_buf_put_u32(&f, (uint32_t)r);
            px_boot_buf_put(&f, srv->ranks[r].puts.p + start, rd.off - start);
        }
        srv->ranks[r].puts.len = 0;
        srv->ranks[r].nputs = 0;
        srv->ranks[r].fenced = 0;
    }
    srv->num_fenced = 0;
    if (f.oom) {
        if (srv->cbs.job_error)
            srv->cbs.job_error(srv->cbs.arg, "out of memory in the key-value exchange");
    } else {
        for (int r = 0; r < srv->size; r++)
            if (srv->ranks[r].kv)
                px_boot_conn_send(srv, srv->ranks[r].kv, &f);
    }
    px_boot_buf_free(&f);
}

static void px_boot_server_on_fence(px_boot_server_t *srv, px_boot_conn_t *c, px_boot_rd_t *rd)
{
    px_boot_srank_t *r = &srv->ranks[c->rank];
    if (r->fenced) {
        px_boot_conn_fail(c, "protocol violation: second fence request before the first completed");
        return;
    }
    uint32_t count = px_boot_rd_u32(rd);
    size_t body = rd->off;
    /* each put needs at least its header: bounds count before trusting it */
    if (rd->err || count > px_boot_rd_left(rd) / PX_BOOT_PUT_HDR_LEN) {
        px_boot_conn_fail(c, "protocol violation: bad fence put count");
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint16_t klen = px_boot_rd_u16(rd);
        uint32_t vlen = px_boot_rd_u32(rd);
        const uint8_t *key = px_boot_rd_bytes(rd, klen);
        if (rd->err || !px_boot_rd_bytes(rd, vlen) || !px_boot_put_valid(klen, key, vlen)) {
            px_boot_conn_fail(c, "protocol violation: malformed put in fence");
            return;
        }
    }
    if (px_boot_rd_left(rd)) {
        px_boot_conn_fail(c, "protocol violation: trailing bytes in fence");
        return;
    }
    px_boot_buf_put(&r->puts, rd->p + body, rd->len - body);
    if (r->puts.oom) {
        px_boot_conn_fail(c, "out of memory");
        return;
    }
    r->nputs = count;
    r->fenced = 1;
    srv->num_fenced++;
    if (srv->num_fenced == srv->size)
        px_boot_server_fence_complete(srv);
    else
        px_boot_server_check_stuck(srv);
}

static void px_boot_server_on_abort(px_boot_server_t *srv, px_boot_conn_t *c, px_boot_rd_t *rd)
{
    char msg[PX_BOOT_ABORT_MSG_MAX + 1];
    int32_t code = (int32_t)px_boot_rd_u32(rd);
    uint16_t n = px_boot_rd_u16(rd);
    const uint8_t *p = px_boot_rd_bytes(rd, n);
    if (rd->err || n > PX_BOOT_ABORT_MSG_MAX || px_boot_rd_left(rd)) {
        px_boot_conn_fail(c, "protocol violation: malformed abort");
        return;
    }
    for (size_t i = 0; i < n; i++) /* the message goes to a terminal: no control characters */
        msg[i] = (p[i] < 0x20 || p[i] == 0x7f) ? '?' : (char)p[i];
    msg[n] = 0;
    if (srv->cbs.aborted)
        srv->cbs.aborted(srv->cbs.arg, c->rank, code, msg);
}

static void px_boot_server_on_frame(px_boot_server_t *srv, px_boot_conn_t *c, uint32_t type,
                                    px_boot_rd_t *rd)
{
    switch (c->state) {
    case PX_BOOT_CONN_AUTH:
        if (type == PX_BOOT_MSG_AUTH)
            px_boot_server_on_auth(srv, c, rd);
        else
            px_boot_conn_reject(srv, c, "expected an authentication message");
        return;
    case PX_BOOT_CONN_KV:
        if (type == PX_BOOT_MSG_FENCE) {
            px_boot_server_on_fence(srv, c, rd);
        } else if (type == PX_BOOT_MSG_FINALIZE && !px_boot_rd_left(rd)) {
            px_boot_srank_t *r = &srv->ranks[c->rank];
            if (!r->finalized) {
                r->finalized = 1;
                srv->num_finalized++;
                if (srv->cbs.finalized)
                    srv->cbs.finalized(srv->cbs.arg, c->rank);
            }
            px_boot_buf_t f = {0};
            px_boot_buf_put_hdr(&f, PX_BOOT_MSG_FINALIZE_OK, 0);
            px_boot_conn_send(srv, c, &f);
            px_boot_buf_free(&f);
            px_boot_server_check_stuck(srv);
        } else if (type == PX_BOOT_MSG_ABORT) {
            px_boot_server_on_abort(srv, c, rd);
        } else {
            px_boot_conn_fail(c, "protocol violation: unexpected message on kv connection");
        }
        return;
    case PX_BOOT_CONN_CTL:
        if (type == PX_BOOT_MSG_ABORT)
            px_boot_server_on_abort(srv, c, rd);
        else
            px_boot_conn_fail(c, "protocol violation: unexpected message on ctl connection");
        return;
    case PX_BOOT_CONN_CLOSING:
        return; /* ignore whatever a rejected peer still sends */
    }
}

static size_t px_boot_conn_max_frame(const px_boot_conn_t *c)
{
    switch (c->state) {
    case PX_BOOT_CONN_AUTH:
        return PX_BOOT_AUTH_LEN;
    case PX_BOOT_CONN_KV:
        return PX_BOOT_MAX_CLIENT_FRAME;
    case PX_BOOT_CONN_CTL:
        return 6 + PX_BOOT_ABORT_MSG_MAX;
    default:
        return 0;
    }
}

static void px_boot_conn_read(px_boot_server_t *srv, px_boot_conn_t *c)
{
    if (c->dead)
        return;
    px_boot_buf_reserve(&c->rbuf, PX_BOOT_READ_CHUNK);
    if (c->rbuf.oom) {
        px_boot_conn_fail(c, "out of memory");
        return;
    }
    ssize_t n = recv(c->fd, c->rbuf.p + c->rbuf.len, PX_BOOT_READ_CHUNK, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        if (c->state == PX_BOOT_CONN_AUTH)
            px_boot_server_logf(srv, "bootstrap connection from %s closed during the handshake",
                                c->peer);
        px_boot_conn_fail(c, n < 0 ? strerror(errno) : "connection closed");
        return;
    }
    if (c->state == PX_BOOT_CONN_CLOSING) {
        c->rbuf.len = 0;
        return;
    }
    c->rbuf.len += (size_t)n;
    while (!c->dead && c->state != PX_BOOT_CONN_CLOSING &&
           c->rbuf.len - c->roff >= PX_BOOT_HDR_LEN) {
        uint32_t type, len;
        px_boot_hdr_decode(c->rbuf.p + c->roff, &type, &len);
        if (len > px_boot_conn_max_frame(c)) {
            if (c->state == PX_BOOT_CONN_AUTH)
                px_boot_conn_reject(srv, c, "oversized handshake message");
            else
                px_boot_conn_fail(c, "protocol violation: oversized message");
            break;
        }
        if (c->rbuf.len - c->roff < PX_BOOT_HDR_LEN + (size_t)len)
            break;
        px_boot_rd_t rd = px_boot_rd_make(c->rbuf.p + c->roff + PX_BOOT_HDR_LEN, len);
        c->roff += PX_BOOT_HDR_LEN + len;
        px_boot_server_on_frame(srv, c, type, &rd);
    }
    /* keep the unread tail at the start of the buffer */
    if (c->roff) {
        memmove(c->rbuf.p, c->rbuf.p + c->roff, c->rbuf.len - c->roff);
        c->rbuf.len -= c->roff;
        c->roff = 0;
    }
}

/* Closes dead connections; callbacks run here, after the server state is consistent. */
static void px_boot_server_sweep(px_boot_server_t *srv)
{
    for (;;) {
        px_boot_conn_t *dead = NULL;
        px_list_t *pos, *tmp;
        px_list_for_each_safe(pos, tmp, &srv->conns) {
            px_boot_conn_t *c = px_container_of(pos, px_boot_conn_t, link);
            if (c->dead) {
                dead = c;
                break;
            }
        }
        if (!dead)
            return;
        px_list_del(&dead->link);
        epoll_ctl(srv->epfd, EPOLL_CTL_DEL, dead->fd, NULL);
        close(dead->fd);
        if (dead->state == PX_BOOT_CONN_AUTH)
            srv->num_auth--;
        int rank = -1;
        if (dead->rank >= 0) {
            px_boot_srank_t *r = &srv->ranks[dead->rank];
            if (r->kv == dead)
                r->kv = NULL;
            if (r->ctl == dead)
                r->ctl = NULL;
            if ((dead->state == PX_BOOT_CONN_KV || dead->state == PX_BOOT_CONN_CTL) &&
                !r->finalized && !r->lost) {
                r->lost = 1;
                rank = dead->rank;
            }
        }
        char why[sizeof(dead->why)];
        memcpy(why, dead->why, sizeof(why));
        px_boot_buf_free(&dead->rbuf);
        px_boot_buf_free(&dead->wbuf);
        free(dead);
        if (rank >= 0 && srv->cbs.lost)
            srv->cbs.lost(srv->cbs.arg, rank, why);
    }
}

void px_boot_server_progress(px_boot_server_t *srv)
{
    struct epoll_event evs[64];
    int n;
    /* bounded rounds so one chatty peer cannot hold the caller */
    for (int round = 0; round < 16; round++) {
        n = epoll_wait(srv->epfd, evs, 64, 0);
        if (n <= 0)
            break;
        for (int i = 0; i < n; i++) {
            px_boot_conn_t *c = evs[i].data.ptr;
            if (!c) {
                px_boot_server_accept(srv);
                continue;
            }
            if (c->dead)
                continue;
            if (evs[i].events & EPOLLOUT)
                px_boot_conn_flush(srv, c);
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                px_boot_conn_read(srv, c);
        }
        px_boot_server_sweep(srv);
        if (n < 64)
            break;
    }
    uint64_t now = px_time_ns();
    px_list_t *pos, *tmp;
    px_list_for_each_safe(pos, tmp, &srv->conns) {
        px_boot_conn_t *c = px_container_of(pos, px_boot_conn_t, link);
        if (c->state == PX_BOOT_CONN_AUTH && now > c->deadline_ns) {
            px_boot_server_logf(srv, "bootstrap connection from %s: handshake timed out", c->peer);
            px_boot_conn_fail(c, "handshake timeout");
        } else if (c->state == PX_BOOT_CONN_CLOSING && now > c->deadline_ns) {
            px_boot_conn_fail(c, "");
        }
    }
    px_boot_server_sweep(srv);
}

void px_boot_server_abort_all(px_boot_server_t *srv, int code, const char *msg)
{
    px_boot_buf_t *f = &srv->abort_frame;
    size_t n = strlen(msg);
    if (n > PX_BOOT_ABORT_MSG_MAX)
        n = PX_BOOT_ABORT_MSG_MAX;
    f->len = 0;
    px_boot_buf_put_hdr(f, PX_BOOT_MSG_ABORT, (uint32_t)(6 + n));
    px_boot_buf_put_u32(f, (uint32_t)code);
    px_boot_buf_put_u16(f, (uint16_t)n);
    px_boot_buf_put(f, msg, n);
    for (int r = 0; r < srv->size; r++)
        if (srv->ranks[r].ctl)
            px_boot_conn_send(srv, srv->ranks[r].ctl, f);
}

void px_boot_server_dump_all(px_boot_server_t *srv)
{
    px_boot_buf_t f = {0};
    px_boot_buf_put_hdr(&f, PX_BOOT_MSG_DUMP, 0);
    for (int r = 0; r < srv->size; r++)
        if (srv->ranks[r].ctl)
            px_boot_conn_send(srv, srv->ranks[r].ctl, &f);
    free(f.p);
}

px_status_t px_boot_server_create(const px_boot_server_conf_t *conf,
                                  const px_boot_server_cbs_t *cbs, px_boot_server_t **srv_p)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    px_boot_server_t *srv;
    int one = 1;

    if (conf->size <= 0 || conf->size > PX_BOOT_MAX_RANKS || conf->num_nodes <= 0)
        return PX_ERR_INVALID_PARAM;
    if (inet_pton(AF_INET, conf->bind_addr, &sa.sin_addr) != 1)
        return PX_ERR_INVALID_PARAM;
    sa.sin_port = htons((uint16_t)conf->port);

    srv = calloc(1, sizeof(*srv));
    if (!srv)
        return PX_ERR_NO_MEMORY;
    srv->ranks = calloc((size_t)conf->size, sizeof(*srv->ranks));
    srv->node_of = malloc(sizeof(int) * (size_t)conf->size);
    if (!srv->ranks || !srv->node_of)
        goto err_free;
    memcpy(srv->node_of, conf->node_of, sizeof(int) * (size_t)conf->size);
    memcpy(srv->secret, conf->secret, PX_BOOT_SECRET_LEN);
    srv->size = conf->size;
    srv->num_nodes = conf->num_nodes;
    srv->universe_size = conf->universe_size;
    srv->job_id = conf->job_id;
    srv->cbs = *cbs;
    px_list_init(&srv->conns);

    srv->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (srv->lfd < 0)
        goto err_free;
    setsockopt(srv->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(srv->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(srv->lfd, SOMAXCONN) < 0)
        goto err_close_lfd;
    socklen_t salen = sizeof(sa);
    if (getsockname(srv->lfd, (struct sockaddr *)&sa, &salen) < 0)
        goto err_close_lfd;
    snprintf(srv->addr, sizeof(srv->addr), "%s:%u", conf->bind_addr, (unsigned)ntohs(sa.sin_port));

    srv->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (srv->epfd < 0)
        goto err_close_lfd;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->lfd, &ev) < 0)
        goto err_close_ep;
    *srv_p = srv;
    return PX_OK;

err_close_ep:
    close(srv->epfd);
err_close_lfd:
    close(srv->lfd);
err_free:
    free(srv->ranks);
    free(srv->node_of);
    free(srv);
    return PX_ERR_IO;
}

int px_boot_server_fd(const px_boot_server_t *srv) { return srv->epfd; }
const char *px_boot_server_addr(const px_boot_server_t *srv) { return srv->addr; }
int px_boot_server_num_connected(const px_boot_server_t *srv) { return srv->num_connected; }

int px_boot_server_rank_connected(const px_boot_server_t *srv, int rank)
{
    return rank >= 0 && rank < srv->size && srv->ranks[rank].connected;
}

int px_boot_server_rank_finalized(const px_boot_server_t *srv, int rank)
{
    return rank >= 0 && rank < srv->size && srv->ranks[rank].finalized;
}

void px_boot_server_destroy(px_boot_server_t *srv)
{
    px_list_t *pos, *tmp;
    if (!srv)
        return;
    px_list_for_each_safe(pos, tmp, &srv->conns) {
        px_boot_conn_t *c = px_container_of(pos, px_boot_conn_t, link);
        close(c->fd);
        px_boot_buf_free(&c->rbuf);
        px_boot_buf_free(&c->wbuf);
        free(c);
    }
    for (int r = 0; r < srv->size; r++)
        px_boot_buf_free(&srv->ranks[r].puts);
    px_boot_buf_free(&srv->abort_frame);
    close(srv->lfd);
    close(srv->epfd);
    free(srv->ranks);
    free(srv->node_of);
    memset(srv->secret, 0, sizeof(srv->secret));
    free(srv);
}
