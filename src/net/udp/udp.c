/* udp: one datagram socket per rail address, reachable by every peer with no
 * set-up; nothing is connected and nothing is reliable here. Reliability
 * (sequence numbers, acknowledgements, retransmission, windows) is the rail
 * layer's: this transport says so with PX_NET_CAP_LOSSY.
 *
 * Datagram: {magic, hdr_len, sub, job key, from, frame, frame_len, frag_off}
 * then bytes [frag_off, frag_off + n) of the frame (upper header + payload).
 * A frame larger than one datagram goes as consecutive fragments of the
 * path MTU; the receiver reassembles one frame per endpoint at a time and
 * drops a frame whose fragments do not arrive in order (the rail layer sends
 * it again). The job key (HMAC of the job secret) keeps out datagrams of
 * other jobs and strangers; every field is checked before use and what
 * fails a check is dropped and counted, never delivered.
 *
 * Subchannels pair addresses exactly as tcp does (addr.h); each rank
 * publishes its datagram ports as "udp". Bulk transfers straight into a
 * receiver's buffer (PX_NET_CAP_BULK) are in udp_bulk.c. */
#include "udp_bulk.h"
#include "../addr.h"
#include "../net.h"
#include "../../util/clock.h"
#include "../../util/iov.h"
#include "../../util/list.h"
#include "../../util/log.h"
#include "../../util/param.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#define PX_UDP_MAGIC 0x50585544u /* "PXUD" */
#define PX_UDP_MAX_SUB PX_NET_MAX_SUB
#define PX_UDP_DGRAM_MAX 65507      /* largest IPv4 UDP payload */
#define PX_UDP_FRAME_MAX (4u << 20) /* a frame the receiver is willing to reassemble */
#define PX_UDP_RX_BATCH 16
#define PX_UDP_TX_BATCH 64
#define PX_UDP_TXQ_MAX (64u << 20) /* queued bytes beyond which datagrams are dropped */
#define PX_UDP_SLICES 16           /* pieces of a frame one datagram may gather */
/* datagrams per offloaded send: the kernel's limit (UDP_MAX_SEGMENTS), and
 * what keeps a send's header and slices under UIO_MAXIOV */
#define PX_UDP_GSO_MAX (1024 / (PX_UDP_SLICES + 1))

/* Ancillary data of a send: a lane's marks and an offloaded send's segment size. */
typedef union {
    char buf[3 * CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
} px_udp_ctl_t;

typedef struct __attribute__((packed)) px_udp_hdr {
    uint32_t magic;
    uint16_t hdr_len;   /* upper header bytes at the start of the frame */
    uint16_t sub;       /* subchannel index, as both sides enumerate them */
    uint64_t key;       /* job key */
    uint32_t from;      /* sender's rank */
    uint32_t frame;     /* per-endpoint frame number */
    uint32_t frame_len; /* upper header + payload bytes */
    uint32_t frag_off;  /* where this datagram's bytes go in the frame */
} px_udp_hdr_t;

/* A datagram that could not be written at once (socket buffer full). */
typedef struct px_udp_qd {
    px_list_t link;
    struct px_net_ep *ep;
    size_t len;
    uint16_t seg; /* several datagrams of this size (segmentation offload); 0: one */
    char data[];
} px_udp_qd_t;

struct px_net_ep {
    void *owner; /* first: addr.c sets it */
    struct px_net_iface *iface;
    int rank, sub;
    int local; /* socket (local address) index */
    struct sockaddr_in remote;
    uint32_t tx_frame;
    size_t queued; /* bytes of it in the socket's queue */
    /* reassembly of one fragmented frame */
    char *ra_buf;
    size_t ra_cap;
    uint32_t ra_frame, ra_len, ra_got;
    uint16_t ra_hdr_len;
    int ra_active;
    /* a path check under way: a TCP connection attempt to the peer's port */
    px_net_path_chk_t chk;
    /* its lane's marks: one socket carries every lane of an address, so
     * each datagram carries them as ancillary data (IP_TOS, and SO_PRIORITY
     * where the kernel takes it); ctl_len 0: unmarked */
    size_t ctl_len;
    union {
        char buf[2 * CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
};

typedef struct px_udp_stats {
    uint64_t rx_dgrams, rx_frames, tx_dgrams, tx_frames, tx_queued, tx_dropped;
    uint64_t tx_offload, rx_offload; /* sends and receives of several datagrams at once */
    uint64_t bad_len, bad_magic, bad_key, bad_peer, bad_src, frag_drop;
} px_udp_stats_t;

struct px_net_iface {
    px_net_addrs_t addr; /* first, for addr.c: one datagram socket per address */
    const px_net_rx_ops_t *rx;
    int me, nranks;
    uint64_t key;
    size_t dmax[PX_NET_MAX_ADDR];   /* frame bytes per datagram on that socket */
    px_list_t txq[PX_NET_MAX_ADDR]; /* datagrams waiting for socket space */
    size_t txq_bytes;
    int out_armed[PX_NET_MAX_ADDR];
    /* segmentation offload (UDP_SEGMENT): datagrams one send may carry on
     * that socket, 1 without it; receive offload (UDP_GRO): whether the
     * kernel may hand up several datagrams of a sender as one */
    int gso[PX_NET_MAX_ADDR];
    int gro[PX_NET_MAX_ADDR];
    size_t frame_max; /* what iface_query advertises as max_frag */
    size_t eager_max; /* and as the largest eager message */
    /* receive batch */
    struct mmsghdr msgs[PX_UDP_RX_BATCH];
    struct iovec iov[PX_UDP_RX_BATCH];
    struct sockaddr_in from[PX_UDP_RX_BATCH];
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } rxctl[PX_UDP_RX_BATCH];
    char *rxbuf;
    px_udp_stats_t st;
    px_udp_bulk_t *bulk; /* made at the first bulk transfer */
};

_Static_assert(offsetof(struct px_net_iface, addr) == 0, "addr.c finds addr at the start");
_Static_assert(offsetof(struct px_net_ep, owner) == 0, "addr.c sets owner at the start");

static px_net_ep_t *px_udp_ep_new(px_net_iface_t *s, int rank, int sub,
                                  const px_net_addr_pair_t *pair);

/* ---------- set-up ---------- */

static int px_udp_if_mtu(int fd, const char *ifname)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    if (ioctl(fd, SIOCGIFMTU, &ifr) < 0)
        return 1500;
    return ifr.ifr_mtu;
}

static void px_udp_bufsize(int fd, int opt_force, int opt, size_t want)
{
    if (!want)
        return;
    int v = want > (size_t)1 << 30 ? 1 << 30 : (int)want;
    /* root may exceed net.core.[rw]mem_max; others get what the kernel allows */
    if (setsockopt(fd, SOL_SOCKET, opt_force, &v, sizeof(v)) < 0)
        setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v));
}

static px_status_t px_udp_iface_open(const px_boot_info_t *boot, const px_net_rx_ops_t *rx,
                                     void *owner, px_net_iface_t **iface_p)
{
    struct px_net_iface *s = calloc(1, sizeof(*s));
    char val[PX_BOOT_VAL_MAX];
    px_status_t st;

    if (!s)
        return PX_ERR_NO_MEMORY;
    s->rx = rx;
    (void)owner; /* it never calls ep_incoming */
    s->me = boot->rank;
    s->nranks = boot->size;
    for (int i = 0; i < PX_NET_MAX_ADDR; i++)
        px_list_init(&s->txq[i]);
    {
        /* job key: HMAC(secret, "plexus-udp" || job id); the secret stays here */
        size_t slen;
        const uint8_t *secret = px_boot_secret(&slen);
        uint8_t msg[18], mac[32];
        memcpy(msg, "plexus-udp", 10);
        memcpy(msg + 10, &boot->job_id, 8);
        px_hmac_sha256(secret, slen, msg, sizeof(msg), mac);
        memcpy(&s->key, mac, sizeof(s->key));
    }
    s->rxbuf = malloc((size_t)PX_UDP_RX_BATCH * 65536);
    if (!s->rxbuf) {
        free(s);
        return PX_ERR_NO_MEMORY;
    }
    for (int i = 0; i < PX_UDP_RX_BATCH; i++) {
        s->iov[i].iov_base = s->rxbuf + (size_t)i * 65536;
        s->iov[i].iov_len = 65536;
        s->msgs[i].msg_hdr.msg_iov = &s->iov[i];
        s->msgs[i].msg_hdr.msg_iovlen = 1;
        s->msgs[i].msg_hdr.msg_name = &s->from[i];
    }

    st = px_net_addr_open(&s->addr, "udp", SOCK_DGRAM, px_udp_ep_new, boot);
    if (st != PX_OK) {
        free(s->rxbuf);
        free(s);
        return st;
    }
    size_t smallest = PX_UDP_DGRAM_MAX;
    for (int i = 0; i < s->addr.nlocal; i++) {
        const px_net_addr_t *a = &s->addr.local[i];
        int fd = s->addr.fd[i];
        px_udp_bufsize(fd, SO_RCVBUFFORCE, SO_RCVBUF, px_params.udp_rcvbuf);
        px_udp_bufsize(fd, SO_SNDBUFFORCE, SO_SNDBUF, px_params.udp_sndbuf);
        int mtu = px_params.udp_mtu ? (int)px_params.udp_mtu : px_udp_if_mtu(fd, a->ifname);
        /* IPv4 and UDP headers, then ours */
        long d = (long)mtu - 28 - (long)sizeof(px_udp_hdr_t);
        if (d > PX_UDP_DGRAM_MAX - (long)sizeof(px_udp_hdr_t))
            d = PX_UDP_DGRAM_MAX - (long)sizeof(px_udp_hdr_t);
        if (d < PX_NET_HDR_MAX + 256) {
            px_error("udp", "MTU %d of %s is too small for datagrams", mtu, a->ifname);
            st = PX_ERR_INVALID_PARAM;
            goto err;
        }
        s->dmax[i] = (size_t)d;
        if ((size_t)d < smallest)
            smallest = (size_t)d;
        /* A frame of several datagrams crosses the stack once, cut by the
         * kernel (or the NIC) into datagrams of the same size as without
         * offload, and may be handed up to the receiver at once. */
        int zero = 0, one = 1;
        size_t per = PX_UDP_DGRAM_MAX / ((size_t)d + sizeof(px_udp_hdr_t));
        s->gso[i] = 1;
        if (px_params.udp_offload && per > 1 &&
            setsockopt(fd, SOL_UDP, UDP_SEGMENT, &zero, sizeof(zero)) == 0)
            s->gso[i] = per < PX_UDP_GSO_MAX ? (int)per : PX_UDP_GSO_MAX;
        s->gro[i] =
            px_params.udp_offload && setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) == 0;
    }
    /* Frames the layer above should not exceed: one datagram when the path
     * carries large ones, else PX_UDP_FRAME (several fragments, each a
     * chance to lose the frame). */
    s->frame_max = px_params.udp_frame ? px_params.udp_frame : 8192;
    if (smallest - PX_NET_HDR_MAX > s->frame_max)
        s->frame_max = smallest - PX_NET_HDR_MAX;
    if (s->frame_max > PX_UDP_FRAME_MAX - PX_NET_HDR_MAX)
        s->frame_max = PX_UDP_FRAME_MAX - PX_NET_HDR_MAX;
    /* An eager message goes as one frame, which may take two datagrams
     * (frames of rendezvous data keep to one), rather than as a rendezvous
     * for the few bytes of a header beyond one datagram. */
    s->eager_max = 2 * (smallest - PX_NET_HDR_MAX);
    if (s->eager_max < s->frame_max)
        s->eager_max = s->frame_max;
    if (s->eager_max > px_params.udp_eager_limit)
        s->eager_max = px_params.udp_eager_limit;

    st = px_net_addr_publish(&s->addr, val, sizeof(val));
    if (st != PX_OK)
        goto err;
    px_debug("udp", "rank %d datagram sockets %s (frames up to %zu bytes, offload %s)", s->me, val,
             s->frame_max,
             s->gso[0] > 1 ? (s->gro[0] ? "send+receive" : "send")
                           : (s->gro[0] ? "receive" : "off"));
    *iface_p = s;
    return PX_OK;

err:
    px_net_addr_close(&s->addr);
    free(s->rxbuf);
    free(s);
    return st;
}

static void px_udp_drop_queue(struct px_net_iface *s, int i, struct px_net_ep *only)
{
    px_list_t *e, *t;
    px_list_for_each_safe(e, t, &s->txq[i]) {
        px_udp_qd_t *q = px_container_of(e, px_udp_qd_t, link);
        if (only && q->ep != only)
            continue;
        px_list_del(e);
        q->ep->queued -= q->len;
        s->txq_bytes -= q->len;
        free(q);
    }
}

static void px_udp_iface_close(px_net_iface_t *s)
{
    if (PX_LOG_ON(PX_LOG_DEBUG) || px_profile_counters())
        fprintf(stderr,
                "[plexus profile] rank %d udp: datagrams tx %llu rx %llu frames tx %llu rx %llu "
                "offloaded tx %llu rx %llu "
                "queued %llu dropped_tx %llu | dropped rx: bad_length %llu bad_magic %llu "
                "bad_key %llu unknown_peer %llu wrong_source %llu fragments %llu\n",
                s->me, (unsigned long long)s->st.tx_dgrams, (unsigned long long)s->st.rx_dgrams,
                (unsigned long long)s->st.tx_frames, (unsigned long long)s->st.rx_frames,
                (unsigned long long)s->st.tx_offload, (unsigned long long)s->st.rx_offload,
                (unsigned long long)s->st.tx_queued, (unsigned long long)s->st.tx_dropped,
                (unsigned long long)s->st.bad_len, (unsigned long long)s->st.bad_magic,
                (unsigned long long)s->st.bad_key, (unsigned long long)s->st.bad_peer,
                (unsigned long long)s->st.bad_src, (unsigned long long)s->st.frag_drop);
    px_udp_bulk_close(s->bulk, s->me, PX_LOG_ON(PX_LOG_DEBUG) || px_profile_counters());
    for (int i = 0; i < s->addr.nlocal; i++)
        px_udp_drop_queue(s, i, NULL);
    for (int i = 0; i < s->nranks * PX_UDP_MAX_SUB; i++)
        if (s->addr.eps[i]) {
            px_net_addr_path_check_end(&s->addr.eps[i]->chk);
            free(s->addr.eps[i]->ra_buf);
            free(s->addr.eps[i]);
        }
    px_net_addr_close(&s->addr);
    free(s->rxbuf);
    free(s);
}

static void px_udp_iface_query(px_net_iface_t *s, px_net_attr_t *attr)
{
    memset(attr, 0, sizeof(*attr));
    attr->caps = PX_NET_CAP_LOSSY | PX_NET_CAP_RESET | PX_NET_CAP_PATH_CHECK | PX_NET_CAP_BULK;
    attr->max_frag = s->frame_max;
    attr->eager_limit = s->eager_max;
    attr->latency_us = 15;
    attr->bandwidth_mbs = 500;
}

static int px_udp_ep_subs(px_net_iface_t *s, int rank, px_net_sub_info_t *info, int max)
{
    int n = px_net_addr_ep_subs(s, rank, info, max);
    px_net_addr_peer_t *p = n > 0 ? s->addr.peers[rank] : NULL;
    for (int i = 0; i < n; i++) {
        info[i].dgram_max = (uint32_t)(s->dmax[p->pair[i].local] + sizeof(px_udp_hdr_t));
        info[i].frame_one = (uint32_t)s->dmax[p->pair[i].local];
    }
    return n;
}

/* Whether this kernel takes a socket priority per datagram (SO_PRIORITY
 * ancillary data, Linux 6.14 and later): one datagram of no bytes from a
 * loopback socket to itself, asked once. */
static int px_udp_prio_cmsg(void)
{
    static int ok = -1;
    if (ok >= 0)
        return ok;
    ok = 0;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
        if (fd >= 0)
            close(fd);
        return ok;
    }
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } c;
    int prio = 0;
    c.align.cmsg_level = SOL_SOCKET;
    c.align.cmsg_type = SO_PRIORITY;
    c.align.cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(&c.align), &prio, sizeof(int));
    struct msghdr mh = {.msg_name = &a,
                        .msg_namelen = sizeof(a),
                        .msg_control = c.buf,
                        .msg_controllen = sizeof(c.buf)};
    ok = sendmsg(fd, &mh, MSG_DONTWAIT) == 0;
    if (!ok)
        px_debug("udp", "no SO_PRIORITY per datagram here (%s): lanes carry their DSCP only",
                 strerror(errno));
    close(fd);
    return ok;
}

/* Appends one int of ancillary data to ep's control buffer. */
static void px_udp_cmsg(struct px_net_ep *ep, int level, int type, int value)
{
    struct cmsghdr *cm = (struct cmsghdr *)(ep->ctl.buf + ep->ctl_len);
    cm->cmsg_level = level;
    cm->cmsg_type = type;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &value, sizeof(int));
    ep->ctl_len += CMSG_SPACE(sizeof(int));
}

/* An endpoint for ep_create: datagrams to the pair's remote address. */
static px_net_ep_t *px_udp_ep_new(px_net_iface_t *s, int rank, int sub,
                                  const px_net_addr_pair_t *pair)
{
    struct px_net_ep *ep = calloc(1, sizeof(*ep));
    if (ep) {
        ep->iface = s;
        ep->rank = rank;
        ep->sub = sub;
        ep->local = pair->local;
        ep->remote = pair->remote;
        ep->chk.fd = -1;
        if (pair->info.tos >= 0)
            px_udp_cmsg(ep, IPPROTO_IP, IP_TOS, pair->info.tos);
        if (pair->info.prio >= 0 && px_udp_prio_cmsg())
            px_udp_cmsg(ep, SOL_SOCKET, SO_PRIORITY, pair->info.prio);
    }
    return ep;
}

/* ---------- sending ---------- */

static px_status_t px_udp_errno_status(int err)
{
    switch (err) {
    case ENETUNREACH:
    case EHOSTUNREACH:
    case ENETDOWN:
    case EPERM: /* a firewall rule */
    case EADDRNOTAVAIL:
        return PX_ERR_LINK_UNREACHABLE;
    case EMSGSIZE:
        return PX_ERR_INVALID_PARAM;
    default:
        return PX_ERR_IO;
    }
}

static void px_udp_arm_out(struct px_net_iface *s, int i, int on)
{
    if (s->out_armed[i] == on)
        return;
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0),
                             .data.ptr = (void *)(uintptr_t)(i + 1)}; /* as addr.h tags it */
    epoll_ctl(s->addr.epfd, EPOLL_CTL_MOD, s->addr.fd[i], &ev);
    s->out_armed[i] = on;
}

/* Whether a send's error says the kernel or the device will not offload
 * segmentation (no checksum offload: EIO; a segment larger than the
 * route's MTU: EINVAL). */
static int px_udp_offload_refused(int err)
{
    return err == EIO || err == EINVAL || err == EOPNOTSUPP || err == ENOPROTOOPT;
}

static void px_udp_offload_off(struct px_net_iface *s, int i, int err)
{
    if (s->gso[i] > 1)
        px_debug("udp", "rank %d: no segmentation offload on %s (%s): one datagram per send", s->me,
                 s->addr.local[i].ifname, strerror(err));
    s->gso[i] = 1;
}

/* ep's marks and, with seg, the segment size of an offloaded send; sets
 * mh's control to ctl (or to none). */
static inline void px_udp_mark(struct px_net_ep *ep, uint16_t seg, px_udp_ctl_t *ctl,
                               struct msghdr *mh)
{
    if (!seg) {
        if (ep->ctl_len) {
            mh->msg_control = ep->ctl.buf;
            mh->msg_controllen = ep->ctl_len;
        }
        return;
    }
    memcpy(ctl->buf, ep->ctl.buf, ep->ctl_len);
    struct cmsghdr *cm = (struct cmsghdr *)(ctl->buf + ep->ctl_len);
    cm->cmsg_level = SOL_UDP;
    cm->cmsg_type = UDP_SEGMENT;
    cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
    mh->msg_control = ctl->buf;
    mh->msg_controllen = ep->ctl_len + CMSG_SPACE(sizeof(uint16_t));
}

/* Keeps a copy of a send (one datagram, or seg-sized ones) the socket could not take. */
static void px_udp_queue(struct px_net_ep *ep, const struct msghdr *mh, uint16_t seg)
{
    struct px_net_iface *s = ep->iface;
    size_t len = px_net_iov_len(mh->msg_iov, (int)mh->msg_iovlen);
    if (s->txq_bytes + len > PX_UDP_TXQ_MAX) {
        s->st.tx_dropped++; /* like a full network: the rail layer sends it again */
        return;
    }
    px_udp_qd_t *q = malloc(sizeof(*q) + len);
    if (!q) {
        s->st.tx_dropped++;
        return;
    }
    q->ep = ep;
    q->len = len;
    q->seg = seg;
    px_net_iov_gather(q->data, mh->msg_iov, (int)mh->msg_iovlen);
    px_list_insert_tail(&s->txq[ep->local], &q->link);
    ep->queued += len;
    s->txq_bytes += len;
    s->st.tx_queued++;
    px_udp_arm_out(s, ep->local, 1);
}

/* Writes the queued sends of socket i; returns how many. */
static int px_udp_flush(struct px_net_iface *s, int i)
{
    int n = 0;
    while (!px_list_empty(&s->txq[i])) {
        px_udp_qd_t *q = px_container_of(s->txq[i].next, px_udp_qd_t, link);
        struct iovec v = {q->data, q->len};
        struct msghdr mh = {.msg_name = &q->ep->remote,
                            .msg_namelen = sizeof(q->ep->remote),
                            .msg_iov = &v,
                            .msg_iovlen = 1};
        px_udp_ctl_t ctl;
        px_udp_mark(q->ep, q->seg, &ctl, &mh);
        ssize_t w = sendmsg(s->addr.fd[i], &mh, 0);
        if (w < 0 && (errno == EAGAIN || errno == ENOBUFS || errno == EINTR))
            break;
        /* written, or refused for good (the rail layer notices the loss) */
        if (w < 0 && q->seg && px_udp_offload_refused(errno))
            px_udp_offload_off(s, i, errno);
        px_list_del(&q->link);
        q->ep->queued -= q->len;
        s->txq_bytes -= q->len;
        if (w >= 0)
            s->st.tx_dgrams += q->seg ? (q->len + q->seg - 1) / q->seg : 1;
        free(q);
        n++;
    }
    if (px_list_empty(&s->txq[i]))
        px_udp_arm_out(s, i, 0);
    return n;
}

static px_status_t px_udp_ep_send(px_net_ep_t *ep, const void *hdr, size_t hdr_len,
                                  const struct iovec *iov, int iovcnt, px_net_send_cb_t cb,
                                  void *arg)
{
    struct px_net_iface *s = ep->iface;
    int i = ep->local;
    size_t plen = px_net_iov_len(iov, iovcnt);
    size_t total = hdr_len + plen;
    (void)cb;
    (void)arg;
    if (hdr_len > PX_NET_HDR_MAX || iovcnt > PX_UDP_SLICES - 2 || total > PX_UDP_FRAME_MAX)
        return PX_ERR_INVALID_PARAM;

    px_udp_hdr_t dh = {.magic = PX_UDP_MAGIC,
                       .hdr_len = (uint16_t)hdr_len,
                       .sub = (uint16_t)ep->sub,
                       .key = s->key,
                       .from = (uint32_t)s->me,
                       .frame = ep->tx_frame++,
                       .frame_len = (uint32_t)total};
    struct iovec whole[PX_UDP_SLICES];
    whole[0].iov_base = (void *)hdr;
    whole[0].iov_len = hdr_len;
    if (iovcnt)
        memcpy(whole + 1, iov, (size_t)iovcnt * sizeof(*iov));
    int nwhole = iovcnt + 1;
    size_t dmax = s->dmax[i];
    uint16_t seg = (uint16_t)(dmax + sizeof(px_udp_hdr_t));
    int queue_rest = !px_list_empty(&s->txq[i]); /* keep the order of the queue */

    /* every datagram of the frame, written in batches of sends; with
     * segmentation offload a send carries up to gso[i] full datagrams, each
     * its header and then its slice of the frame */
    px_udp_hdr_t fh[PX_UDP_TX_BATCH];
    struct iovec fiov[PX_UDP_TX_BATCH * (PX_UDP_SLICES + 1)];
    struct mmsghdr mm[PX_UDP_TX_BATCH];
    int cnt[PX_UDP_TX_BATCH];      /* datagrams of each send */
    size_t start[PX_UDP_TX_BATCH]; /* frame offset of each send's first one */
    px_udp_ctl_t ctl[PX_UDP_TX_BATCH];
    size_t off = 0;
    do {
        int k = 0, m = 0, nv = 0, per = s->gso[i];
        for (; k < PX_UDP_TX_BATCH && (off < total || (total == 0 && k == 0)); k++) {
            size_t n = total - off < dmax ? total - off : dmax;
            fh[k] = dh;
            fh[k].frag_off = (uint32_t)off;
            int first = nv;
            fiov[nv].iov_base = &fh[k];
            fiov[nv].iov_len = sizeof(fh[k]);
            nv += 1 + px_iov_slice(whole, nwhole, off, n, &fiov[nv + 1], PX_UDP_SLICES);
            if (m > 0 && cnt[m - 1] < per) { /* follows a full datagram of the send */
                mm[m - 1].msg_hdr.msg_iovlen += (size_t)(nv - first);
                cnt[m - 1]++;
            } else {
                memset(&mm[m], 0, sizeof(mm[m]));
                mm[m].msg_hdr.msg_name = &ep->remote;
                mm[m].msg_hdr.msg_namelen = sizeof(ep->remote);
                mm[m].msg_hdr.msg_iov = &fiov[first];
                mm[m].msg_hdr.msg_iovlen = (size_t)(nv - first);
                cnt[m] = 1;
                start[m] = off;
                m++;
            }
            off += n;
            if (total == 0) {
                k = 1;
                break;
            }
        }
        for (int j = 0; j < m; j++)
            px_udp_mark(ep, cnt[j] > 1 ? seg : 0, &ctl[j], &mm[j].msg_hdr);
        int done = 0;
        while (!queue_rest && done < m) {
            int w = sendmmsg(s->addr.fd[i], mm + done, (unsigned)(m - done), 0);
            if (w > 0) {
                for (int j = done; j < done + w; j++) {
                    s->st.tx_dgrams += (uint64_t)cnt[j];
                    s->st.tx_offload += cnt[j] > 1;
                }
                done += w;
                continue;
            }
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == ENOBUFS) {
                queue_rest = 1;
                break;
            }
            if (cnt[done] > 1 && px_udp_offload_refused(errno)) {
                /* the rest again, one datagram per send */
                px_udp_offload_off(s, i, errno);
                off = start[done];
                done = m;
                break;
            }
            px_status_t st = px_udp_errno_status(errno);
            if (st == PX_ERR_INVALID_PARAM)
                px_error("udp", "datagram of %zu bytes to rank %d too large (PX_UDP_MTU?)",
                         px_net_iov_len(mm[done].msg_hdr.msg_iov, (int)mm[done].msg_hdr.msg_iovlen),
                         ep->rank);
            else
                px_debug("udp", "send to rank %d sub %d: %s", ep->rank, ep->sub, strerror(errno));
            return st;
        }
        for (; done < m; done++)
            px_udp_queue(ep, &mm[done].msg_hdr, cnt[done] > 1 ? seg : 0);
    } while (off < total);
    s->st.tx_frames++;
    return PX_OK; /* the kernel or our queue has a copy */
}

static size_t px_udp_ep_pending(px_net_ep_t *ep) { return ep->queued; }

static void px_udp_ep_reset(px_net_ep_t *ep)
{
    /* nothing connected: forget what is queued and the frame being
     * reassembled (its buffer stays, it may be in use by a delivery) */
    px_udp_drop_queue(ep->iface, ep->local, ep);
    ep->ra_active = 0;
}

static void px_udp_ep_rx_cancel(px_net_ep_t *ep) { (void)ep; /* frames arrive whole */ }

/* The path check of addr.c, to the peer's datagram port (where no TCP
 * listener answers: a refusal says the path works). */
static int px_udp_ep_path_check(px_net_ep_t *ep, uint64_t timeout_ns)
{
    const px_net_addr_t *l = &ep->iface->addr.local[ep->local];
    return px_net_addr_path_check(&ep->chk, l->ifname, l->addr, &ep->remote, timeout_ns, "udp",
                                  ep->rank);
}

/* ---------- receiving ---------- */

static void px_udp_deliver(struct px_net_iface *s, struct px_net_ep *ep, const char *frame,
                           size_t hdr_len, size_t len)
{
    void *ctx = NULL;
    size_t plen = len - hdr_len;
    s->st.rx_frames++;
    void *dst = s->rx->rx_begin(ep->owner, frame, hdr_len, plen, &ctx);
    if (dst && plen)
        memcpy(dst, frame + hdr_len, plen);
    s->rx->rx_done(ep->owner, ctx);
}

/* Checks one datagram and hands up the frame it completes. */
static void px_udp_input(struct px_net_iface *s, int sock, const char *d, size_t n,
                         const struct sockaddr_in *src)
{
    px_udp_hdr_t h;
    s->st.rx_dgrams++;
    if (n < sizeof(h)) {
        s->st.bad_len++;
        return;
    }
    memcpy(&h, d, sizeof(h));
    if (h.magic != PX_UDP_MAGIC) {
        s->st.bad_magic++;
        return;
    }
    if (h.key != s->key) {
        s->st.bad_key++;
        return;
    }
    size_t data = n - sizeof(h);
    if (h.frame_len > PX_UDP_FRAME_MAX || h.hdr_len > PX_NET_HDR_MAX || h.hdr_len > h.frame_len ||
        h.frag_off > h.frame_len || data > h.frame_len - h.frag_off ||
        (data == 0 && h.frame_len != 0)) {
        s->st.bad_len++;
        return;
    }
    struct px_net_ep *ep = NULL;
    if (h.from < (uint32_t)s->nranks && h.sub < PX_UDP_MAX_SUB && h.from != (uint32_t)s->me)
        ep = s->addr.eps[h.from * PX_UDP_MAX_SUB + h.sub];
    if (!ep || !ep->owner) {
        s->st.bad_peer++;
        return;
    }
    if (ep->local != sock || ep->remote.sin_addr.s_addr != src->sin_addr.s_addr ||
        ep->remote.sin_port != src->sin_port) {
        s->st.bad_src++;
        return;
    }
    const char *p = d + sizeof(h);
    if (h.frag_off == 0 && data == h.frame_len) { /* the common case: one datagram */
        if (h.hdr_len > data) {
            s->st.bad_len++;
            return;
        }
        ep->ra_active = 0;
        px_udp_deliver(s, ep, p, h.hdr_len, data);
        return;
    }
    if (h.frag_off == 0) {
        if (h.hdr_len > data) { /* the upper header comes whole in the first */
            s->st.bad_len++;
            return;
        }
        if (ep->ra_active)
            s->st.frag_drop++; /* the previous frame lost a fragment */
        if (ep->ra_cap < h.frame_len) {
            char *b = realloc(ep->ra_buf, h.frame_len);
            if (!b) {
                ep->ra_active = 0;
                s->st.frag_drop++;
                return;
            }
            ep->ra_buf = b;
            ep->ra_cap = h.frame_len;
        }
        ep->ra_active = 1;
        ep->ra_frame = h.frame;
        ep->ra_len = h.frame_len;
        ep->ra_hdr_len = h.hdr_len;
        ep->ra_got = 0;
    } else if (!ep->ra_active || h.frame != ep->ra_frame || h.frag_off != ep->ra_got ||
               h.frame_len != ep->ra_len) {
        if (ep->ra_active)
            s->st.frag_drop++;
        ep->ra_active = 0;
        return;
    }
    memcpy(ep->ra_buf + ep->ra_got, p, data);
    ep->ra_got += (uint32_t)data;
    if (ep->ra_got == ep->ra_len) {
        ep->ra_active = 0;
        px_udp_deliver(s, ep, ep->ra_buf, ep->ra_hdr_len, ep->ra_len);
    }
}

/* The datagram size of a receive that holds several (UDP_GRO), or 0. */
static size_t px_udp_rx_seg(struct msghdr *mh)
{
    if (!mh->msg_controllen)
        return 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm))
        if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO &&
            cm->cmsg_len >= CMSG_LEN(sizeof(int))) {
            int seg;
            memcpy(&seg, CMSG_DATA(cm), sizeof(seg));
            return seg > 0 ? (size_t)seg : 0;
        }
    return 0;
}

static int px_udp_iface_progress(px_net_iface_t *s)
{
    int events = s->bulk && px_udp_bulk_busy(s->bulk) ? px_udp_bulk_progress(s->bulk) : 0;
    for (int i = 0; i < s->addr.nlocal; i++) {
        if (!px_list_empty(&s->txq[i]))
            events += px_udp_flush(s, i);
        for (int round = 0; round < 4; round++) {
            for (int k = 0; k < PX_UDP_RX_BATCH; k++) {
                s->msgs[k].msg_hdr.msg_namelen = sizeof(s->from[k]);
                s->msgs[k].msg_hdr.msg_control = s->gro[i] ? s->rxctl[k].buf : NULL;
                s->msgs[k].msg_hdr.msg_controllen = s->gro[i] ? sizeof(s->rxctl[k].buf) : 0;
                s->msgs[k].msg_len = 0;
            }
            int m = recvmmsg(s->addr.fd[i], s->msgs, PX_UDP_RX_BATCH, MSG_DONTWAIT, NULL);
            if (m <= 0)
                break;
            for (int k = 0; k < m; k++) {
                const char *d = s->iov[k].iov_base;
                size_t n = s->msgs[k].msg_len, seg = px_udp_rx_seg(&s->msgs[k].msg_hdr);
                if (!seg || seg >= n) {
                    px_udp_input(s, i, d, n, &s->from[k]);
                    continue;
                }
                s->st.rx_offload++; /* datagrams of one sender, seg bytes each but the last */
                for (size_t o = 0; o < n; o += seg)
                    px_udp_input(s, i, d + o, n - o < seg ? n - o : seg, &s->from[k]);
            }
            events += m;
            if (m < PX_UDP_RX_BATCH)
                break;
        }
    }
    return events;
}

static int px_udp_iface_quiet(px_net_iface_t *s)
{
    if (s->bulk && px_udp_bulk_busy(s->bulk))
        return 0;
    for (int i = 0; i < s->addr.nlocal; i++)
        if (!px_list_empty(&s->txq[i]))
            return 0;
    return 1;
}

/* ---------- bulk transfers (udp_bulk.c) on a subchannel's addresses ---------- */

static px_udp_bulk_t *px_udp_bulk_of(struct px_net_iface *s)
{
    if (!s->bulk)
        s->bulk = px_udp_bulk_open(s->rx);
    return s->bulk;
}

static px_status_t px_udp_ep_bulk_recv(px_net_ep_t *ep, void *buf, size_t len, void *arg,
                                       px_net_bulk_offer_t *offer)
{
    struct px_net_iface *s = ep->iface;
    px_udp_bulk_t *b = px_udp_bulk_of(s);
    if (!b)
        return PX_ERR_NO_MEMORY;
    return px_udp_bulk_recv(b, ep->owner, s->addr.local[ep->local].addr.s_addr,
                            (uint32_t)(s->dmax[ep->local] + sizeof(px_udp_hdr_t)), buf, len, arg,
                            offer);
}

static px_status_t px_udp_ep_bulk_send(px_net_ep_t *ep, const px_net_bulk_offer_t *offer,
                                       const void *buf, size_t len, void *arg)
{
    struct px_net_iface *s = ep->iface;
    px_udp_bulk_t *b = px_udp_bulk_of(s);
    if (!b)
        return PX_ERR_NO_MEMORY;
    return px_udp_bulk_send(b, ep->owner, s->addr.local[ep->local].addr.s_addr,
                            ep->remote.sin_addr.s_addr, offer, buf, len, arg);
}

static void px_udp_ep_bulk_acked(px_net_ep_t *ep, void *arg, uint64_t got)
{
    if (ep->iface->bulk)
        px_udp_bulk_acked(ep->iface->bulk, arg, got);
}

static uint64_t px_udp_ep_bulk_cancel(px_net_ep_t *ep, void *arg)
{
    return ep->iface->bulk ? px_udp_bulk_cancel(ep->iface->bulk, arg) : 0;
}

const px_net_ops_t px_net_udp_ops = {
    .size = sizeof(px_net_ops_t),
    .name = "udp",
    .iface_open = px_udp_iface_open,
    .iface_close = px_udp_iface_close,
    .iface_query = px_udp_iface_query,
    .iface_reachable = px_net_addr_iface_reachable,
    .ep_create = px_net_addr_ep_create,
    .ep_subs = px_udp_ep_subs,
    .ep_send = px_udp_ep_send,
    .ep_send_bulk = px_udp_ep_send,
    .ep_frame = px_net_stub_ep_frame,
    .ep_wake = px_net_stub_ep_wake,
    .ep_send_fill = px_net_stub_ep_send_fill,
    .ep_get = px_net_stub_ep_get,
    .ep_put = px_net_stub_ep_put,
    .ep_pending = px_udp_ep_pending,
    .ep_reset = px_udp_ep_reset,
    .ep_withdraw = px_net_stub_ep_withdraw,
    .ep_destroy = px_net_stub_ep_destroy,
    .ep_rx_cancel = px_udp_ep_rx_cancel,
    .iface_progress = px_udp_iface_progress,
    .iface_fd = px_net_addr_iface_fd,
    .ep_path_check = px_udp_ep_path_check,
    .ep_describe = px_net_stub_ep_describe,
    .iface_quiet = px_udp_iface_quiet,
    .ep_ready = px_net_stub_ep_ready,
    .ep_bulk_recv = px_udp_ep_bulk_recv,
    .ep_bulk_send = px_udp_ep_bulk_send,
    .ep_bulk_acked = px_udp_ep_bulk_acked,
    .ep_bulk_cancel = px_udp_ep_bulk_cancel,
    .iface_sleep = px_net_stub_iface_sleep,
};
