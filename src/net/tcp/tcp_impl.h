/* tcp: non-blocking sockets with TCP_NODELAY, connections made on first use.
 *
 * Handshake: both ends send HELLO (job, ranks, subchannel, a fresh nonce),
 * then AUTH = HMAC(job secret, peer's nonce, ranks, subchannel). The secret
 * never crosses the wire. When two ranks connect to each other at once, the
 * connection initiated by the lower rank wins on both sides.
 *
 * Frames: {payload_len u32, hdr_len u16, magic u16} + header + payload.
 * Small frames are read through a staging buffer; large payloads are read
 * straight into the destination the layer above returned.
 *
 * tcp.c: the interface, sending and receiving frames, progress;
 * tcp_conn.c: connections, the handshake, accepting. */
#ifndef PX_TCP_IMPL_H
#define PX_TCP_IMPL_H

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
#define PX_TCP_VERSION 2
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
#define PX_TCP_COPY_MAX 4096 /* queued payloads this small are copied */
#define PX_TCP_DIRECT_CAP 8  /* most connections read directly by a pass */
/* Sending bulk frames (ep_send_bulk) on a connection slower than
 * PX_TCP_LOWAT_MAX per PX_TCP_QUEUE_NS: while frames wait in the endpoint's
 * queue, its kernel keeps at most PX_TCP_QUEUE_NS of unsent bytes at the
 * rate the connection delivers (TCP_NOTSENT_LOWAT, at least
 * PX_TCP_LOWAT_MIN), and bulk frames carry about as much (ep_frame, at least
 * PX_TCP_FRAME_MIN). The rest waits in the queue, where ordered frames go
 * ahead of bulk ones: an answer waits behind a few milliseconds of data,
 * not behind a socket buffer of several megabytes. Once the queue is empty
 * the kernel takes everything again (eager sends complete at once). The
 * rate is the kernel's own measure, read at most once per PX_TCP_QUEUE_NS. */
#define PX_TCP_QUEUE_NS 4000000ull
#define PX_TCP_LOWAT_MIN (128 * 1024)
#define PX_TCP_LOWAT_MAX (4 * 1024 * 1024)
#define PX_TCP_FRAME_MIN (64 * 1024)

typedef struct __attribute__((packed)) px_tcp_hello {
    uint32_t magic;
    uint16_t version;
    uint16_t sub;
    uint64_t job_id; /* the sender's job: from is its rank there */
    uint64_t to_job; /* the receiver's: to is its rank there */
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
    int bulk; /* ep_send_bulk: ordered frames queued after it may go first */
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
    /* send: the rate read at rate_ns (bytes/s, 0 unknown), and from it
     * the bulk frame for ep_frame (0: no preference) and the unsent bytes
     * the kernel keeps while bulk frames are queued (0: no bound); lowat:
     * the bound set now (0: the system's, none) */
    uint64_t rate, rate_ns;
    size_t frame;
    int lowat_bulk, lowat;
    /* handshake */
    uint8_t my_nonce[16], peer_nonce[16];
    uint8_t hs_out[sizeof(px_tcp_hello_t) + 32];
    size_t hs_out_len, hs_out_off;
    uint8_t hs_in[sizeof(px_tcp_hello_t) + 32];
    size_t hs_in_len;
    int hello_in, auth_sent;
    int orderly; /* ends in order outside finalize (ep_destroy) */
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
    void *owner;    /* the layer above's, for ep_incoming */
    int me, nranks; /* nranks: room for peers (px_boot_info_t.peer_cap) */
    uint64_t job_id;
    px_list_t conns;
    int nconns;
    int closing;
    px_list_t dead;      /* closed connections, freed at the end of progress */
    int reconnect;       /* endpoints may have data queued and no connection */
    uint64_t next_check; /* when to look at them again */
    int direct_max;      /* PX_TCP_POLL_DIRECT, at most PX_TCP_DIRECT_CAP */
    unsigned pass;       /* progress passes, for the periodic epoll look */
    unsigned long reads; /* receive calls that returned bytes */
};

_Static_assert(offsetof(struct px_net_iface, addr) == 0, "addr.c finds addr at the start");
_Static_assert(offsetof(struct px_net_ep, owner) == 0, "addr.c sets owner at the start");

/* Listening sockets are tagged with small integers in epoll, connections
 * with their (aligned) pointers. */
#define PX_TCP_IS_LISTENER(p) ((uintptr_t)(p) <= PX_NET_MAX_ADDR)

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

/* tcp.c */
void px_tcp_set_opts(int fd);
double px_tcp_connect_timeout(void);
void px_tcp_drop_queue(struct px_net_ep *ep, px_status_t why);
void px_tcp_conn_flush(px_tcp_conn_t *c);

/* tcp_conn.c */
void px_tcp_arm_out(px_tcp_conn_t *c, int on);
uint64_t px_tcp_delivery_rate(int fd, int *app_limited); /* tcp_rate.c */
void px_tcp_conn_close(px_tcp_conn_t *c, px_status_t why);
void px_tcp_free_dead(struct px_net_iface *s);
px_status_t px_tcp_connect(struct px_net_ep *ep);
/* Advances the handshake of c on events; -1 when the connection was closed. */
int px_tcp_handshake(px_tcp_conn_t *c, uint32_t events);
void px_tcp_accept(struct px_net_iface *s, int l);
void px_tcp_check_connects(struct px_net_iface *s);

#endif
