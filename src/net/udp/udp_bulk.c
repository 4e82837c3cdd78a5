#include "udp_bulk.h"

#include "../../util/clock.h"
#include "../../util/log.h"
#include "../../util/param.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define PX_UDP_BULK_MAGIC 0x5a435058u /* "XPCZ" */
#define PX_UDP_BULK_MAX 64            /* transfers under way per direction */
#define PX_UDP_BULK_BATCH 32          /* datagrams per recvmmsg / sendmmsg */

typedef struct __attribute__((packed)) px_udp_bulk_hdr {
    uint32_t magic;
    uint32_t len; /* data bytes in this datagram */
    uint64_t token;
    uint64_t off; /* where they go in the transfer */
} px_udp_bulk_hdr_t;

/* A pooled receive socket and the transfer it serves. */
typedef struct {
    int fd;      /* -1: slot unused */
    uint32_t ip; /* bound to */
    uint16_t port;
    size_t rcvbuf;
    int busy;
    void *owner;
    char *buf;
    size_t len, got, acked, dup_at;
    uint32_t dgram;
    uint64_t token;
    void *arg;
} px_udp_bulk_rx_t;

typedef struct {
    int busy;
    void *owner;
    int fd;
    struct sockaddr_in to;
    const char *buf;
    size_t len, acked, sent, dup_at;
    uint32_t window, dgram;
    /* congestion: what may be unacknowledged (slow start up to ssthresh,
     * then one datagram per window's worth acknowledged; halved on a loss) */
    size_t cwnd, ssthresh;
    uint64_t token;
    uint64_t last_ns, rto_ns;
    /* round trips: one timed offset at a time, not after a go-back (Karn) */
    size_t probe_off;
    uint64_t probe_ns;
    double srtt, rttvar;
    void *arg;
} px_udp_bulk_tx_t;

/* One sending socket per local address. */
typedef struct {
    uint32_t ip;
    int fd;
} px_udp_bulk_src_t;

struct px_udp_bulk {
    const px_net_rx_ops_t *rx;
    px_udp_bulk_rx_t rx_x[PX_UDP_BULK_MAX];
    px_udp_bulk_tx_t tx[PX_UDP_BULK_MAX];
    px_udp_bulk_src_t src[8];
    int nsrc;
    int nrx_busy, ntx_busy;
    char *scratch; /* a datagram that has no place in the buffer */
    px_udp_bulk_stats_t st;
};

const px_udp_bulk_stats_t *px_udp_bulk_stats(const px_udp_bulk_t *b) { return &b->st; }

px_udp_bulk_t *px_udp_bulk_open(const px_net_rx_ops_t *rx)
{
    px_udp_bulk_t *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->rx = rx;
    for (int i = 0; i < PX_UDP_BULK_MAX; i++)
        b->rx_x[i].fd = -1;
    return b;
}

static void px_udp_bulk_print(const px_udp_bulk_t *b, int rank);

void px_udp_bulk_close(px_udp_bulk_t *b, int rank, int profile)
{
    if (!b)
        return;
    if (profile)
        px_udp_bulk_print(b, rank);
    for (int i = 0; i < PX_UDP_BULK_MAX; i++)
        if (b->rx_x[i].fd >= 0)
            close(b->rx_x[i].fd);
    for (int i = 0; i < b->nsrc; i++)
        close(b->src[i].fd);
    free(b->scratch);
    free(b);
}

static int px_udp_bulk_socket(uint32_t ip, uint16_t *port_p)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = ip};
    socklen_t al = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || getsockname(fd, (struct sockaddr *)&a, &al)) {
        px_warn("udp", "bulk transfer: cannot bind a socket: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (port_p)
        *port_p = ntohs(a.sin_port);
    return fd;
}

/* Asks for `want` bytes of socket buffer (beyond the system limit when
 * allowed); returns what the kernel gives (its figure counts overhead
 * too, so about half of it holds data). */
static size_t px_udp_bulk_bufsize(int fd, int opt, int opt_force, size_t want)
{
    int v = want > (1u << 30) ? 1 << 30 : (int)want;
    if (setsockopt(fd, SOL_SOCKET, opt_force, &v, sizeof(v)))
        (void)setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v));
    socklen_t l = sizeof(v);
    if (getsockopt(fd, SOL_SOCKET, opt, &v, &l))
        return 0;
    return (size_t)v;
}

/* ---------- receiver ---------- */

px_status_t px_udp_bulk_recv(px_udp_bulk_t *b, void *owner, uint32_t local_ip, uint32_t dgram_max,
                             void *buf, size_t len, void *arg, px_net_bulk_offer_t *offer)
{
    int pool = (int)px_params.udp_zcopy_pool, free_i = -1, pick = -1, used = 0;
    if (dgram_max <= sizeof(px_udp_bulk_hdr_t) + 512 || !local_ip)
        return PX_ERR_UNSUPPORTED;
    if (pool > PX_UDP_BULK_MAX)
        pool = PX_UDP_BULK_MAX;
    for (int i = 0; i < PX_UDP_BULK_MAX; i++) {
        px_udp_bulk_rx_t *x = &b->rx_x[i];
        if (x->fd < 0) {
            if (free_i < 0)
                free_i = i;
            continue;
        }
        used++;
        if (!x->busy && x->ip == local_ip && pick < 0)
            pick = i;
    }
    if (pick < 0) {
        if (used >= pool || free_i < 0) {
            b->st.no_socket++;
            return PX_ERR_BUSY;
        }
        px_udp_bulk_rx_t *x = &b->rx_x[free_i];
        x->fd = px_udp_bulk_socket(local_ip, &x->port);
        if (x->fd < 0)
            return PX_ERR_BUSY;
        x->ip = local_ip;
        x->rcvbuf =
            px_udp_bulk_bufsize(x->fd, SO_RCVBUF, SO_RCVBUFFORCE, 2 * px_params.udp_zcopy_window);
        pick = free_i;
    }
    if (!b->scratch && !(b->scratch = malloc(65536)))
        return PX_ERR_NO_MEMORY;
    px_udp_bulk_rx_t *x = &b->rx_x[pick];
    uint64_t token = 0;
    while (!token)
        if (getrandom(&token, sizeof(token), 0) != sizeof(token))
            token = (uint64_t)px_time_ns() * 0x9e3779b97f4a7c15ull ^ (uintptr_t)x;
    /* whatever an earlier transfer left in the socket carries its token */
    x->busy = 1;
    x->owner = owner;
    x->buf = buf;
    x->len = len;
    x->got = x->acked = 0;
    x->dup_at = (size_t)-1;
    x->dgram = (dgram_max > 65507 ? 65507 : dgram_max) - (uint32_t)sizeof(px_udp_bulk_hdr_t);
    x->token = token;
    x->arg = arg;
    b->nrx_busy++;
    size_t win = px_params.udp_zcopy_window, room = x->rcvbuf / 2;
    if (room && win > room)
        win = room;
    if (win < 2 * (size_t)x->dgram)
        win = 2 * (size_t)x->dgram;
    offer->port = x->port;
    offer->window = (uint32_t)win;
    offer->dgram = x->dgram;
    offer->token = token;
    return PX_OK;
}

static void px_udp_bulk_rx_end(px_udp_bulk_t *b, px_udp_bulk_rx_t *x, px_status_t st)
{
    void *arg = x->arg;
    x->busy = 0;
    x->arg = NULL;
    b->nrx_busy--;
    /* transfers counted once done: an offer the sender turns down (no
     * socket free there) ends here cancelled, its data sent another way */
    if (st == PX_OK) {
        b->st.rx_transfers++;
        b->st.rx_bytes += x->len;
    }
    b->rx->bulk_done(x->owner, arg, st);
}

/* Reads what has arrived on x's socket: each datagram's data is pointed at
 * its place were the stream in order, so in-order data lands without a
 * copy; the rest is moved or dropped. */
static int px_udp_bulk_rx_poll(px_udp_bulk_t *b, px_udp_bulk_rx_t *x)
{
    struct mmsghdr m[PX_UDP_BULK_BATCH];
    struct iovec iov[PX_UDP_BULK_BATCH][2];
    px_udp_bulk_hdr_t h[PX_UDP_BULK_BATCH];
    size_t at[PX_UDP_BULK_BATCH];
    int n = 0, events = 0;
    size_t d = x->dgram;
    /* at most one datagram beyond the buffer's end (into scratch) */
    for (; n < PX_UDP_BULK_BATCH; n++) {
        at[n] = x->got + (size_t)n * d;
        iov[n][0] = (struct iovec){&h[n], sizeof(h[n])};
        if (at[n] < x->len)
            iov[n][1] = (struct iovec){x->buf + at[n], x->len - at[n] < d ? x->len - at[n] : d};
        else
            iov[n][1] = (struct iovec){b->scratch, d};
        m[n].msg_hdr = (struct msghdr){.msg_iov = iov[n], .msg_iovlen = 2};
        m[n].msg_len = 0;
        if (at[n] >= x->len) {
            n++;
            break;
        }
    }
    int r = recvmmsg(x->fd, m, (unsigned)n, MSG_DONTWAIT, NULL);
    if (r <= 0)
        return 0;
    int gap = 0;
    for (int i = 0; i < r; i++) {
        size_t got = m[i].msg_len;
        events++;
        if (got < sizeof(px_udp_bulk_hdr_t) || (m[i].msg_hdr.msg_flags & MSG_TRUNC) ||
            h[i].magic != PX_UDP_BULK_MAGIC || h[i].token != x->token ||
            h[i].len != got - sizeof(px_udp_bulk_hdr_t) || h[i].len == 0 || h[i].off > x->len ||
            h[i].len > x->len - h[i].off) {
            b->st.rx_bad++; /* an earlier transfer's, a stranger's, or malformed */
            continue;
        }
        size_t off = (size_t)h[i].off, len = h[i].len;
        if (off != x->got) {
            b->st.rx_dropped++; /* a repeat, or one after a lost datagram */
            gap |= off > x->got;
            continue;
        }
        const char *src = at[i] < x->len ? x->buf + at[i] : b->scratch;
        if (src != x->buf + off) {
            memmove(x->buf + off, src, len);
            b->st.rx_moved++;
        } else {
            b->st.rx_inplace++;
        }
        x->got += len;
    }
    /* acknowledge each batch that moved on (the sender's window grows with
     * them), and once per point when something is missing: that report
     * repeats the last one, which tells the sender to go back at once (a
     * batch that both moved on and saw a gap reports twice, or the sender
     * would take the gap for data still under way and wait for its timer) */
    if (x->got != x->acked) {
        x->acked = x->got;
        b->rx->bulk_progress(x->owner, x->arg, x->got);
    }
    if (gap && x->dup_at != x->got) {
        x->dup_at = x->got;
        b->rx->bulk_progress(x->owner, x->arg, x->got);
    }
    if (x->got == x->len)
        px_udp_bulk_rx_end(b, x, PX_OK);
    return events;
}

/* ---------- sender ---------- */

static px_udp_bulk_tx_t *px_udp_bulk_tx_find(px_udp_bulk_t *b, void *arg)
{
    for (int i = 0; i < PX_UDP_BULK_MAX; i++)
        if (b->tx[i].busy && b->tx[i].arg == arg)
            return &b->tx[i];
    return NULL;
}

/* Sends from x->sent while the window allows and the socket takes them. */
static void px_udp_bulk_push(px_udp_bulk_t *b, px_udp_bulk_tx_t *x)
{
    size_t win = x->cwnd < x->window ? x->cwnd : x->window;
    while (x->sent < x->len && x->sent - x->acked < win) {
        struct mmsghdr m[PX_UDP_BULK_BATCH];
        struct iovec iov[PX_UDP_BULK_BATCH][2];
        px_udp_bulk_hdr_t h[PX_UDP_BULK_BATCH];
        int n = 0;
        size_t off = x->sent;
        while (n < PX_UDP_BULK_BATCH && off < x->len && off - x->acked < win) {
            size_t k = x->len - off < x->dgram ? x->len - off : x->dgram;
            h[n] = (px_udp_bulk_hdr_t){PX_UDP_BULK_MAGIC, (uint32_t)k, x->token, off};
            iov[n][0] = (struct iovec){&h[n], sizeof(h[n])};
            iov[n][1] = (struct iovec){(void *)(x->buf + off), k};
            m[n].msg_hdr = (struct msghdr){.msg_name = &x->to,
                                           .msg_namelen = sizeof(x->to),
                                           .msg_iov = iov[n],
                                           .msg_iovlen = 2};
            off += k;
            n++;
        }
        int r = sendmmsg(x->fd, m, (unsigned)n, MSG_DONTWAIT);
        if (r <= 0)
            return; /* socket full (or an error): again at the next progress */
        for (int i = 0; i < r; i++)
            x->sent += iov[i][1].iov_len;
        if (!x->probe_ns) {
            x->probe_off = x->sent;
            x->probe_ns = px_time_ns();
        }
        b->st.tx_dgrams += (uint64_t)r;
        if (r < n)
            return;
    }
}

px_status_t px_udp_bulk_send(px_udp_bulk_t *b, void *owner, uint32_t local_ip, uint32_t remote_ip,
                             const px_net_bulk_offer_t *offer, const void *buf, size_t len,
                             void *arg)
{
    int fd = -1;
    for (int i = 0; i < b->nsrc; i++)
        if (b->src[i].ip == local_ip)
            fd = b->src[i].fd;
    if (fd < 0) {
        if (b->nsrc == (int)(sizeof(b->src) / sizeof(b->src[0])))
            return PX_ERR_BUSY;
        fd = px_udp_bulk_socket(local_ip, NULL);
        if (fd < 0)
            return PX_ERR_BUSY;
        px_udp_bulk_bufsize(fd, SO_SNDBUF, SO_SNDBUFFORCE, 2 * px_params.udp_zcopy_window);
        b->src[b->nsrc++] = (px_udp_bulk_src_t){local_ip, fd};
    }
    px_udp_bulk_tx_t *x = NULL;
    for (int i = 0; i < PX_UDP_BULK_MAX && !x; i++)
        if (!b->tx[i].busy)
            x = &b->tx[i];
    if (!x)
        return PX_ERR_BUSY;
    if (offer->dgram == 0 || offer->dgram > 65507 || offer->window == 0 || !offer->port)
        return PX_ERR_INVALID_PARAM;
    *x = (px_udp_bulk_tx_t){.busy = 1,
                            .owner = owner,
                            .fd = fd,
                            .buf = buf,
                            .len = len,
                            .dup_at = (size_t)-1,
                            .window = offer->window,
                            .dgram = offer->dgram,
                            .token = offer->token,
                            .arg = arg};
    x->to.sin_family = AF_INET;
    x->to.sin_addr.s_addr = remote_ip;
    x->to.sin_port = htons(offer->port);
    x->rto_ns = (uint64_t)(px_params.rail_rto_min * 1e9);
    x->last_ns = px_time_ns();
    x->cwnd = 4 * (size_t)x->dgram > 65536 ? 4 * (size_t)x->dgram : 65536;
    x->ssthresh = x->window;
    b->ntx_busy++;
    px_udp_bulk_push(b, x);
    return PX_OK;
}

static void px_udp_bulk_tx_end(px_udp_bulk_t *b, px_udp_bulk_tx_t *x, px_status_t st)
{
    void *arg = x->arg;
    x->busy = 0;
    b->ntx_busy--;
    if (st == PX_OK) {
        b->st.tx_transfers++;
        b->st.tx_bytes += x->len;
    }
    b->rx->bulk_done(x->owner, arg, st);
}

void px_udp_bulk_acked(px_udp_bulk_t *b, void *arg, uint64_t got)
{
    px_udp_bulk_tx_t *x = px_udp_bulk_tx_find(b, arg);
    if (!x || got > x->len)
        return; /* a late or invalid acknowledgement */
    if (got > x->acked) {
        size_t moved = (size_t)got - x->acked;
        uint64_t now = px_time_ns();
        x->acked = (size_t)got;
        if (x->sent < x->acked)
            x->sent = x->acked;
        x->last_ns = now;
        if (x->probe_ns && got >= x->probe_off) {
            /* smoothed round trip and its variation, as TCP keeps them */
            double rtt = (double)(now - x->probe_ns);
            if (x->srtt == 0) {
                x->srtt = rtt;
                x->rttvar = rtt / 2;
            } else {
                x->rttvar =
                    0.75 * x->rttvar + 0.25 * (rtt > x->srtt ? rtt - x->srtt : x->srtt - rtt);
                x->srtt = 0.875 * x->srtt + 0.125 * rtt;
            }
            x->probe_ns = 0;
        }
        double rto = x->srtt + 4 * x->rttvar, lo = px_params.rail_rto_min * 1e9;
        x->rto_ns = (uint64_t)(rto > lo ? (rto < 1e9 ? rto : 1e9) : lo);
        if (x->cwnd < x->ssthresh)
            x->cwnd += moved;
        else
            x->cwnd += (size_t)x->dgram * moved / x->cwnd + 1;
        if (x->acked == x->len) {
            px_udp_bulk_tx_end(b, x, PX_OK);
            return;
        }
    } else if (got == x->acked && x->sent > x->acked && x->dup_at != got) {
        /* the receiver misses what follows `got`: go back once per point,
         * and send less at a time */
        x->dup_at = (size_t)got;
        b->st.tx_resent += x->sent - x->acked;
        x->sent = x->acked;
        x->probe_ns = 0;
        x->ssthresh = x->cwnd / 2 > 2 * (size_t)x->dgram ? x->cwnd / 2 : 2 * (size_t)x->dgram;
        x->cwnd = x->ssthresh;
    }
    px_udp_bulk_push(b, x);
}

/* ---------- progress ---------- */

int px_udp_bulk_progress(px_udp_bulk_t *b)
{
    int n = 0;
    if (b->nrx_busy)
        for (int i = 0; i < PX_UDP_BULK_MAX; i++)
            if (b->rx_x[i].fd >= 0 && b->rx_x[i].busy)
                n += px_udp_bulk_rx_poll(b, &b->rx_x[i]);
    if (b->ntx_busy) {
        uint64_t now = px_time_ns();
        uint64_t give_up = (uint64_t)(px_params.partition_timeout * 1e9);
        for (int i = 0; i < PX_UDP_BULK_MAX; i++) {
            px_udp_bulk_tx_t *x = &b->tx[i];
            if (!x->busy)
                continue;
            if (now - x->last_ns > x->rto_ns) {
                if (now - x->last_ns > give_up) {
                    px_error("udp", "bulk transfer: no progress for %.0f s at %zu of %zu bytes",
                             px_params.partition_timeout, x->acked, x->len);
                    px_udp_bulk_tx_end(b, x, PX_ERR_TIMEOUT);
                    continue;
                }
                /* nothing acknowledged for a while: from the last point again */
                b->st.tx_timeouts++;
                b->st.tx_resent += x->sent - x->acked;
                x->sent = x->acked;
                x->dup_at = (size_t)-1;
                x->probe_ns = 0;
                x->ssthresh =
                    x->cwnd / 2 > 2 * (size_t)x->dgram ? x->cwnd / 2 : 2 * (size_t)x->dgram;
                x->cwnd = 2 * (size_t)x->dgram;
                x->rto_ns = x->rto_ns * 2 < 1000000000ull ? x->rto_ns * 2 : 1000000000ull;
                x->last_ns = now;
                n++;
            }
            px_udp_bulk_push(b, x);
        }
    }
    return n;
}

int px_udp_bulk_busy(const px_udp_bulk_t *b) { return b->nrx_busy + b->ntx_busy; }

uint64_t px_udp_bulk_cancel(px_udp_bulk_t *b, void *arg)
{
    for (int i = 0; i < PX_UDP_BULK_MAX; i++) {
        if (b->rx_x[i].busy && b->rx_x[i].arg == arg) {
            b->rx_x[i].busy = 0;
            b->rx_x[i].arg = NULL;
            b->nrx_busy--;
            return b->rx_x[i].got;
        }
        if (b->tx[i].busy && b->tx[i].arg == arg) {
            b->tx[i].busy = 0;
            b->ntx_busy--;
            return b->tx[i].acked;
        }
    }
    return 0;
}

static void px_udp_bulk_print(const px_udp_bulk_t *b, int rank)
{
    if (!b->st.rx_transfers && !b->st.tx_transfers && !b->st.no_socket)
        return;
    int sockets = 0;
    for (int i = 0; i < PX_UDP_BULK_MAX; i++)
        sockets += b->rx_x[i].fd >= 0;
    fprintf(stderr,
            "[plexus profile] rank %d udp-zcopy: sockets %d + %d sending | rx transfers %llu "
            "bytes %llu in place %llu moved %llu dropped %llu bad %llu no socket %llu | tx "
            "transfers %llu bytes %llu datagrams %llu resent bytes %llu timeouts %llu\n",
            rank, sockets, b->nsrc, (unsigned long long)b->st.rx_transfers,
            (unsigned long long)b->st.rx_bytes, (unsigned long long)b->st.rx_inplace,
            (unsigned long long)b->st.rx_moved, (unsigned long long)b->st.rx_dropped,
            (unsigned long long)b->st.rx_bad, (unsigned long long)b->st.no_socket,
            (unsigned long long)b->st.tx_transfers, (unsigned long long)b->st.tx_bytes,
            (unsigned long long)b->st.tx_dgrams, (unsigned long long)b->st.tx_resent,
            (unsigned long long)b->st.tx_timeouts);
}
