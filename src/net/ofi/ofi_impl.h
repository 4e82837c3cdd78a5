/* ofi: libfabric reliable-datagram endpoints (FI_EP_RDM) with FI_MSG.
 *
 * Rails: with a provider addressed by IPv4 (tcp;ofi_rxm, udp;ofi_rxd,
 * verbs;ofi_rxm over IPoIB) one endpoint per local address that the rail
 * selection of the IP transports picks (PX_RAILS, addr.h) and the provider
 * can open, paired between ranks by subnet exactly as tcp pairs them; with
 * any other provider (shm, efa, cxi, psm3) one endpoint per domain, paired
 * by index. Each pair is one subchannel of the rail layer.
 *
 * Every message starts with px_ofi_wire_t (job key, sender, subchannel).
 * A frame that fits PX_OFI_BUFFER with its headers goes as one message copied
 * through a registered buffer (EAGER). A larger one goes as an RTS naming
 * the sender's memory, registered for it; the receiver reads it with fi_read
 * into the destination the layer above gave and answers FIN, which completes
 * the send (with PX_OFI_RMA=0, or a provider without FI_RMA: LONG and CHUNK
 * messages, copied through registered buffers, one frame's after another).
 * Frames of one subchannel are handed up one at a time, in the order sent:
 * messages are numbered within the sender's epoch (a provider may let a
 * large message overtake small ones), and what arrives while a frame is
 * being read waits behind it.
 *
 * A reset (ep_reset) starts a new epoch, which voids at the peer what it
 * still has of the old one, and ends the subchannel's sends at once: the
 * registrations the peer may still read through are closed first, so that
 * a buffer the caller takes back is never read afterwards; a read into this
 * side that was under way is given up and its sender told (NAK). IP
 * providers get a watchdog: work that does not move for PX_RAIL_DETECT, on
 * a path whose peer's kernel does not answer, fails the subchannel. BYE at
 * close lets a peer still finishing drop what it would send us.
 *
 * ofi.c: providers, rails, addresses, endpoints, the interface;
 * ofi_xfer.c: buffers, registrations, sending;
 * ofi_recv.c: receiving, resets, progress. */
#ifndef PX_OFI_IMPL_H
#define PX_OFI_IMPL_H

#include "../addr.h"
#include "../net.h"
#include "../../util/list.h"
#include "../../util/log.h"
#include "../../util/param.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <stddef.h>
#include <stdint.h>

/* libfabric is loaded when an ofi interface opens (dlopen), so that a
 * program that never uses it neither pays for loading it (and the device
 * libraries it pulls in) nor needs it installed. Its few functions that are
 * not inline come from px_ofi_lib; the macros keep their usual names. */
typedef struct px_ofi_lib {
    int (*getinfo)(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info);
    void (*freeinfo)(struct fi_info *info);
    struct fi_info *(*dupinfo)(const struct fi_info *info);
    int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
    const char *(*strerror)(int errnum);
    uint32_t (*version)(void);
} px_ofi_lib_t;
extern px_ofi_lib_t px_ofi_lib;
#define fi_getinfo px_ofi_lib.getinfo
#define fi_freeinfo px_ofi_lib.freeinfo
#define fi_dupinfo px_ofi_lib.dupinfo
#define fi_fabric px_ofi_lib.fabric
#define fi_strerror px_ofi_lib.strerror
#define fi_version px_ofi_lib.version

#define PX_OFI_VERSION FI_VERSION(1, 9)
#define PX_OFI_MAGIC 0x4f46u /* "OF" */
#define PX_OFI_MAX_RAIL PX_NET_MAX_ADDR
#define PX_OFI_MAX_SEG 8               /* registered pieces an RTS names (PX_RAIL_IOV) */
#define PX_OFI_READ_PIECE (512u << 10) /* one fi_read */
#define PX_OFI_READ_DEPTH 4            /* fi_reads in flight per frame */
#define PX_OFI_SLAB 64                 /* buffers per registered slab */
#define PX_OFI_EP_POSTED 64 /* chunked frames: messages a subchannel has in the provider */
#define PX_OFI_NAME_MAX 256 /* endpoint name bytes */
#define PX_OFI_ALIGN 64

enum {
    PX_OFI_EAGER = 1, /* header + payload */
    PX_OFI_RTS = 2,   /* px_ofi_rts_t + segments + header: read the payload */
    PX_OFI_LONG = 3,  /* header + the first bytes of a frame sent in messages */
    PX_OFI_CHUNK = 4, /* the next bytes of that frame */
    /* control, acted on as it arrives: */
    PX_OFI_FIN = 5,   /* cookie: the frame is read (or discarded) */
    PX_OFI_NAK = 6,   /* cookie: the frame was given up here, send it again */
    PX_OFI_RESET = 7, /* the sender reset the subchannel: what it sent before `epoch` is void */
    PX_OFI_BYE = 8,   /* the sender is closing: send it nothing more */
};

/* At the start of every message. Messages of frames are numbered per
 * subchannel (seq) within the sender's epoch, which a reset starts anew:
 * the receiver hands them on in that order (a provider may let a large
 * message overtake a small one: ofi_rxm's segmented messages do) and drops
 * those of an epoch that is over. */
typedef struct __attribute__((packed)) px_ofi_wire {
    uint16_t magic;
    uint8_t type;
    uint8_t hdr_len; /* upper header bytes (EAGER, RTS, LONG) */
    uint32_t from;   /* sender's rank */
    uint16_t sub;    /* subchannel, as both sides number them */
    uint16_t nseg;   /* RTS: segments */
    uint32_t epoch;
    uint32_t seq;
    uint64_t len; /* payload bytes of the frame (CHUNK: of this message) */
    uint64_t key; /* job key */
} px_ofi_wire_t;

typedef struct __attribute__((packed)) px_ofi_seg {
    uint64_t addr, len, key;
} px_ofi_seg_t;

/* After the wire header of an RTS, FIN and NAK. */
typedef struct __attribute__((packed)) px_ofi_rts {
    uint64_t cookie; /* the sender's name for the transfer */
} px_ofi_rts_t;

/* Bytes a message carries besides the upper header and payload, at most. */
#define PX_OFI_OVERHEAD                                                                            \
    (sizeof(px_ofi_wire_t) + sizeof(px_ofi_rts_t) + PX_OFI_MAX_SEG * sizeof(px_ofi_seg_t))

struct px_ofi_rail;
struct px_net_ep;

/* What a completion's op_context points at. */
enum { PX_OFI_CTX_TX, PX_OFI_CTX_RX, PX_OFI_CTX_READ };

typedef struct px_ofi_ctx {
    struct fi_context2 fi; /* first: the provider's (FI_CONTEXT2) */
    int kind;
} px_ofi_ctx_t;

/* An entry of an endpoint's send queue: a message ready to post, or a
 * frame going out in LONG and CHUNK messages. */
typedef struct px_ofi_qent {
    px_list_t link;
    int sop;
} px_ofi_qent_t;

/* A registered message buffer: sent from (a pool of them per rail) or
 * posted to receive. */
typedef struct px_ofi_buf {
    px_ofi_ctx_t ctx;
    struct px_ofi_rail *rail;
    struct px_ofi_buf *next; /* free list */
    px_ofi_qent_t q;         /* in an endpoint's send queue */
    struct px_net_ep *ep;    /* sent: to whom (a failure is that endpoint's) */
    unsigned epoch;          /* ... and before which reset */
    void *desc;
    size_t len; /* message bytes in data */
    char *data;
} px_ofi_buf_t;

typedef struct px_ofi_slab {
    struct px_ofi_slab *next;
    struct fid_mr *mr;
    px_ofi_buf_t *bufs;
    char *mem;
} px_ofi_slab_t;

/* A registration of an endpoint's transfers, kept for reuse (cached) or
 * for one transfer. */
typedef struct px_ofi_mr {
    struct fid_mr *mr; /* NULL: a free cache entry */
    uintptr_t base;
    size_t len;
    void *desc;
    uint64_t key;
    int refs;
    int cached;
    uint64_t used; /* last use, for eviction */
} px_ofi_mr_t;

/* A send whose payload is still needed: an RTS waiting for FIN, or a frame
 * going out in LONG and CHUNK messages. */
typedef struct px_ofi_sop {
    px_ofi_qent_t q; /* ep->rts (waiting for FIN) or ep->sendq (chunks to go) */
    uint64_t cookie;
    px_net_send_cb_t cb;
    void *arg;
    size_t len, off;     /* payload bytes, and sent so far (chunked) */
    px_ofi_buf_t *ready; /* chunked: the next message, built, the provider refused it for now */
    size_t ready_n;      /* ... its payload bytes */
    uint8_t hdr_len;
    int nmr;
    px_ofi_mr_t *mr[PX_OFI_MAX_SEG];
    int iovcnt;
    uint8_t hdr[PX_NET_HDR_MAX];
    struct iovec iov[];
} px_ofi_sop_t;

/* One fi_read of a frame being read; rx NULL once the frame was given up
 * (it is freed when its completion comes). */
typedef struct px_ofi_read {
    px_ofi_ctx_t ctx;
    struct px_ofi_read *next; /* free list */
    struct px_ofi_rx *rx;
    struct px_ofi_rail *rail;
    px_ofi_mr_t *lmr; /* the destination's registration, held while the read is out */
    size_t len;
} px_ofi_read_t;

/* A frame being received on an endpoint (one at a time). */
typedef struct px_ofi_rx {
    struct px_net_ep *ep;
    int active;
    int orphan;   /* this side reset the endpoint: no upcalls, the reads to wait for */
    int canceled; /* ep_rx_cancel: nothing more into dst */
    int failed;   /* a read failed */
    int chunked;  /* LONG/CHUNK: the rest comes in messages */
    char *dst;
    void *ctx;
    size_t len, next, done; /* bytes: of the frame, asked for, in place */
    int inflight;
    uint64_t cookie;
    int nseg;
    px_ofi_seg_t seg[PX_OFI_MAX_SEG];
    px_ofi_mr_t *lmr; /* dst registered (FI_MR_LOCAL) */
    px_ofi_read_t *rd[PX_OFI_READ_DEPTH];
} px_ofi_rx_t;

/* A message that arrived while its endpoint was busy with a frame (or had
 * no endpoint yet), copied. */
typedef struct px_ofi_held {
    px_list_t link;
    int from, sub;
    uint32_t seq;
    size_t len;
    char data[];
} px_ofi_held_t;

typedef struct px_ofi_rail {
    struct px_net_iface *s;
    int idx;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    int wait_fd;
    px_net_addr_t addr; /* IP providers: the local address, its port the endpoint's */
    char domain_name[64];
    size_t namelen;
    uint8_t name[PX_OFI_NAME_MAX];
    px_ofi_slab_t *slabs;
    px_ofi_buf_t *tx_free;
    px_ofi_slab_t *rx_slab; /* PX_OFI_RX_BUFS buffers posted to receive */
    px_ofi_buf_t *unposted; /* ... whose repost the provider refused for now */
    int reads_out;          /* fi_reads whose completion has not come */
} px_ofi_rail_t;

struct px_net_ep {
    void *owner;
    struct px_net_iface *iface;
    int rank, sub;
    px_ofi_rail_t *rail;
    fi_addr_t dest;
    px_list_t sendq; /* px_ofi_qent_t: messages and chunked frames, in order */
    px_list_t rts;   /* px_ofi_sop_t waiting for FIN */
    size_t pending;  /* bytes queued here, in the provider, or not yet read by the peer */
    int posted;      /* messages the provider holds (their completion to come) */
    int used;        /* something was sent or received on it: say BYE at the end */
    int peer_done;   /* the peer said BYE */
    px_list_t held;  /* px_ofi_held_t in order, behind the frame in rx */
    px_list_t ooo;   /* px_ofi_held_t that came before their turn, by seq */
    px_ofi_rx_t rx;  /* the frame being received */
    unsigned epoch;  /* resets so far (an upcall may reset the endpoint) */
    uint32_t tx_seq; /* the next message's number in this epoch */
    uint32_t rx_epoch, rx_next; /* the peer's epoch, and the number due in it */
    int queued;                 /* on the interface's work list */
    px_list_t work;
    /* IP providers: the peer's address, and the watchdog of a subchannel
     * whose provider holds work that moves no more (an RDM provider over
     * TCP retries for minutes): after PX_RAIL_DETECT without progress a
     * path check asks the peer's kernel, and a path that does not answer
     * is reported failed, as TCP_USER_TIMEOUT does for tcp */
    struct sockaddr_in remote;
    px_net_path_chk_t chk;
    uint64_t events, seen; /* completions and messages so far, at the last look */
    uint64_t stall_since;  /* work held and nothing moving since */
    int watching;          /* a watchdog path check is under way */
    uint64_t clock;        /* registration cache uses */
    px_ofi_mr_t *mrc;      /* PX_OFI_MR_CACHE entries */
    char desc[96];
};

typedef struct px_ofi_peer {
    int n;
    struct {
        int local; /* rail index */
        px_net_sub_info_t info;
        size_t namelen;
        uint8_t name[PX_OFI_NAME_MAX];
    } sub[PX_NET_MAX_SUB];
} px_ofi_peer_t;

typedef struct px_ofi_stats {
    uint64_t tx_eager, tx_inject, tx_rts, tx_chunks, tx_again, tx_bytes_read;
    uint64_t rx_eager, rx_rts, rx_long, rx_held, rx_early, rx_bad, rx_ooo, rx_stale;
    uint64_t reads, read_errors, naks_tx, naks_rx, fins_late, mr_hits, mr_regs, cq_errors;
} px_ofi_stats_t;

struct px_net_iface {
    const px_net_rx_ops_t *rx;
    int me, nranks;
    const int *node_of;
    uint64_t key;
    char prov[64];
    int ip;        /* the provider is addressed by IPv4: rails are local addresses */
    int same_node; /* the provider reaches ranks of this node only (shm) */
    int rma;       /* large frames by fi_read */
    int mr_local, mr_virt, mr_prov_key, mr_endpoint;
    uint64_t next_key;
    size_t inline_max; /* payload bytes a frame sent in one message may have */
    size_t bufsize;    /* bytes of every message buffer */
    size_t inject;     /* smallest inject size of the rails */
    int nrail;
    px_ofi_rail_t rail[PX_OFI_MAX_RAIL];
    int explicit_rails;
    px_ofi_peer_t **peers;  /* per rank, NULL until paired */
    struct px_net_ep **eps; /* [rank * PX_NET_MAX_SUB + sub] */
    px_list_t work;         /* endpoints with held messages or sends to push */
    px_list_t early;        /* messages from subchannels with no endpoint yet */
    int early_check;        /* an endpoint was made since: look at them */
    px_list_t ctrl;         /* control messages the provider refused for now */
    px_ofi_read_t *read_free;
    uint64_t next_cookie;
    int epfd;                  /* the rails' wait descriptors (PX_PROGRESS_MODE=block), or -1 */
    int closing;               /* frames that arrive now are dropped */
    struct px_net_ep **eplist; /* the endpoints made, densely (the watchdog's) */
    int neps;
    uint64_t next_watch; /* when the watchdog looks at them again */
    unsigned pass;       /* progress passes */
    px_ofi_stats_t st;
};

/* The endpoint has something for the next progress pass. */
static inline void px_ofi_ep_work(struct px_net_ep *ep)
{
    if (!ep->queued) {
        ep->queued = 1;
        px_list_insert_tail(&ep->iface->work, &ep->work);
    }
}

px_ofi_buf_t *px_ofi_tx_grow(px_ofi_rail_t *r);

/* A send buffer of rail r (the pool grows when empty). */
static inline px_ofi_buf_t *px_ofi_tx_get(px_ofi_rail_t *r)
{
    px_ofi_buf_t *b = r->tx_free;
    if (__builtin_expect(!b, 0))
        return px_ofi_tx_grow(r);
    r->tx_free = b->next;
    return b;
}

static inline void px_ofi_tx_put(px_ofi_buf_t *b)
{
    b->next = b->rail->tx_free;
    b->rail->tx_free = b;
}

/* ofi.c */
px_status_t px_ofi_status(int fi_err);
/* Loads libfabric once; PX_OK, or the reason logged. */
px_status_t px_ofi_load(void);

/* ofi_xfer.c: buffers, registrations, sending */
px_status_t px_ofi_rail_bufs(px_ofi_rail_t *r);
void px_ofi_rail_free_bufs(px_ofi_rail_t *r);
int px_ofi_repost(px_ofi_rail_t *r, px_ofi_buf_t *b);
/* A sent message's completion: its buffer back to the pool. */
void px_ofi_tx_done(px_ofi_buf_t *b);
px_ofi_mr_t *px_ofi_mr_get(struct px_net_ep *ep, const void *p, size_t len);
/* close: the peer must not read through it any more */
void px_ofi_mr_put(px_ofi_mr_t *m, int close);
void px_ofi_ctrl(struct px_net_ep *ep, int type, uint64_t cookie);
void px_ofi_ctrl_retry(struct px_net_iface *s);
void px_ofi_pump(struct px_net_ep *ep);
void px_ofi_sop_free(px_ofi_sop_t *op, int close);
px_status_t px_ofi_ep_send(struct px_net_ep *ep, const void *hdr, size_t hdr_len,
                           const struct iovec *iov, int iovcnt, px_net_send_cb_t cb, void *arg);
size_t px_ofi_ep_pending(struct px_net_ep *ep);
void px_ofi_fin_in(struct px_net_ep *ep, uint64_t cookie, int nak);

/* ofi_recv.c: receiving, resets, progress */
void px_ofi_ep_reset(struct px_net_ep *ep);
/* Ends every send of ep queued here or waiting for its peer to read it,
 * their callbacks with `why`. */
void px_ofi_drop_sends(struct px_net_ep *ep, px_status_t why);
void px_ofi_ep_rx_cancel(struct px_net_ep *ep);
const char *px_ofi_ep_describe(struct px_net_ep *ep);
int px_ofi_iface_progress(struct px_net_iface *s);
int px_ofi_iface_quiet(struct px_net_iface *s);
int px_ofi_ep_path_check(struct px_net_ep *ep, uint64_t timeout_ns);
void px_ofi_ep_free(struct px_net_ep *ep);
void px_ofi_iface_free_reads(struct px_net_iface *s);

#endif
