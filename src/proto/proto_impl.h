/* Internals of the protocol layer:
 *   proto.c     requests, the send and receive calls, progress and waiting,
 *               set-up, state dump, counters
 *   proto_am.c  the active messages of the protocols (eager, rendezvous,
 *               completion notices, udp-zcopy) and matching
 *   proto_rma.c one-sided communication for MPI windows: windows and the
 *               origin (proto_rma_rx.c: the frames received, proto_rma_impl.h)
 *   proto_pub.c the public active-message interface (include/plexus/am.h)
 *   proto_prof.c the sections the topology profile counts (PX_PROFILE=topo)
 * udp-zcopy's transfers themselves are the udp transport's (bulk
 * transfers), reached through the channel layer. */
#ifndef PX_PROTO_IMPL_H
#define PX_PROTO_IMPL_H

#include "proto.h"
#include "../chan/chan.h"

#include <pthread.h>
#include <stddef.h>

/* ---------- wire format ---------- */

enum {
    PX_AM_EAGER = 1,
    PX_AM_RTS = 2,
    PX_AM_CTS = 3,
    PX_AM_DATA = 4,
    PX_AM_FIN = 5,
    PX_AM_SYNC_ACK = 6,
    PX_AM_ZCTS = 8,    /* udp-zcopy clear-to-send */
    PX_AM_ZACK = 9,    /* udp-zcopy: bytes received in order */
    PX_AM_ZDATA = 10,  /* udp-zcopy: the rest of a transfer whose path failed */
    PX_AM_RMA_PUT = 7, /* one-sided (proto_rma.c) */
    PX_AM_RMA_ACC = 11,
    PX_AM_RMA_GET = 12,
    PX_AM_RMA_SYNC = 13,
    PX_AM_PUB_ACK = 14, /* the public interface's own (proto_pub.c) */
    PX_AM_PUB_PUT = 15,
    PX_AM_PUB_GET = 16,
    PX_AM_PUB_GETR = 17,
    PX_AM_PUB_BAR = 18,
    PX_AM_MAX = 19
};
/* The public interface's handler ids (plexus/am.h) are the channel ids
 * [PX_AM_USER, PX_AM_USER + PX_AM_USER_N): the same table, the same
 * dispatch and the same sends as the protocols above. */
#define PX_AM_USER 64
#define PX_AM_USER_N 32
#define PX_AM_FLAG_SYNC 1
#define PX_AM_FLAG_ZCOPY 2 /* RTS: the sender asks for udp-zcopy */
#define PX_AM_FLAG_RMA_ACK                                                                         \
    4 /* DATA: also acknowledges a one-sided flush (ctx: window, src: its rank) */
#define PX_AM_FLAG_MORE 8 /* CTS: more clear-to-sends of the message follow */

typedef struct px_am_hdr {
    uint8_t am, flags;
    uint16_t pad;
    int32_t src, tag;
    uint32_t ctx;
    uint64_t a, b, c, d, e, f; /* by type: see px_am_hdr_len */
} px_am_hdr_t;

_Static_assert(offsetof(px_am_hdr_t, a) == 16, "the envelope is the first 16 bytes");
_Static_assert(sizeof(px_am_hdr_t) <= PX_CHAN_HDR_MAX, "a header fits a channel's frame");
_Static_assert(PX_AM_MAX <= PX_AM_USER && PX_AM_USER + PX_AM_USER_N <= PX_CHAN_AM_CTRL,
               "the protocols' ids, then the public ones, below the channel's own");

/* EAGER: a = sender's request (sync only). RTS: a = size, b = sender's
 * request, c = sender's buffer address; over network channels its payload
 * may be the message's first bytes (PX_RNDV_HEAD). CTS: a = sender's
 * request, b = receiver's request, c = end of the bytes asked for, d =
 * their start (from the head on at least); with PX_AM_FLAG_MORE another
 * CTS asks for more (a receive through a ring, proto_ring.c), without it
 * c is the end of the bytes accepted. DATA: a = receiver's
 * request, b = offset. FIN / SYNC_ACK: a = sender's request. ZCTS: a =
 * sender's request, b = receiver's request, c = bytes accepted, d e f =
 * the channel's bulk offer (px_chan_bulk_offer_t). ZACK: a = sender's
 * request, b = bytes received in order. ZDATA: as DATA, c = where the
 * sender's rest begins (everything below is in place at the receiver).
 * RMA_*: see proto_rma_impl.h. */
extern const uint8_t px_am_hdr_len[PX_AM_MAX];

/* ---------- state ---------- */

typedef struct px_proto_peer {
    uint64_t msgs_tx, bytes_tx, msgs_rx, bytes_rx, rndv_tx;
} px_proto_peer_t;

struct px_proto_unexp {
    px_list_t link;
    uint32_t ctx;
    int src, tag, peer;
    uint8_t am, flags;
    uint8_t arrived;
    uint8_t kept; /* from px_proto_unexp_new's small entries (proto_am.c) */
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

#define PX_ID_NONE 0xffffffffu

extern struct px_proto_state {
    px_boot_info_t boot;
    px_proto_peer_t *peers;
    int oversub;
    unsigned spin_limit;
    enum { PX_WAIT_AUTO, PX_WAIT_SPIN, PX_WAIT_BLOCK, PX_WAIT_SLEEP } mode;
    px_list_t posted, unexp;
    /* wire identifiers of requests a peer may name */
    px_proto_req_t **ids;
    uint32_t *gens;
    uint32_t nids, free_id;
    uint64_t n_unexp, n_eager, n_rndv;
    int (*hook)(void); /* px_proto_set_progress_hook */
    int sleeper;       /* a thread sleeps in the kernel for the process */
    int kicked;        /* another thread has woken it (px_chan_sleep_kick) */
    int armed;         /* px_chan_sleep_arm'd by armed_by, not yet disarmed */
    pthread_t armed_by;
    int shared_pending; /* px_proto_shared_pending */
} px_p;

/* proto.c */
uint64_t px_proto_id_get(px_proto_req_t *req);
void px_proto_id_put(px_proto_req_t *req);
px_proto_req_t *px_proto_id_lookup(uint64_t id);
void px_proto_complete(px_proto_req_t *req);
void px_proto_send_cb(void *arg, px_status_t st);
void px_proto_ctrl(int peer, uint8_t am, uint64_t a, uint64_t b, uint64_t c);

/* proto_rma_rx.c: registers the one-sided active messages; rx_done of
 * their contexts (tagged 0, not NULL) */
void px_proto_rma_register(void);
void px_proto_rma_rx_done(int peer, void *ctx, size_t len);
void px_proto_rma_finalize(void);
/* Frames of large puts waiting for their pace (PX_RMA_PACE), and what
 * sends those it allows now: called by px_proto_progress while any wait. */
extern uint64_t px_rma_queued;
int px_proto_rma_pace(void);
void px_proto_rma_data_acks(int peer, const px_am_hdr_t *h);

/* proto_pub.c: registers the public ids' handlers; rx_done of its
 * contexts (tagged 0, first byte PX_PUB_RX); a peer's operations fail */
#define PX_PUB_RX 0x7e
void px_proto_pub_register(void);
void px_proto_pub_rx_done(int peer, void *ctx, size_t len);
void px_proto_pub_peer_failed(int peer);
void px_proto_pub_finalize(void);

/* proto_ring.c: a receive or a send through a ring of two
 * PX_PROTO_RING_WIN windows (px_proto_ring_size); a receive's frames'
 * contexts are tagged 0, first byte PX_RING_RX */
#define PX_RING_RX 0x7d
typedef struct px_proto_ring px_proto_ring_t;
typedef struct px_proto_sring px_proto_sring_t;
int px_proto_ring_start(int peer, px_proto_req_t *req, uint64_t sreq, size_t head);
void *px_proto_ring_place(px_proto_req_t *req, size_t off, size_t len, void **ctx_p);
void px_proto_ring_landed(px_proto_req_t *req, void *ctx, size_t len);
void px_proto_ring_rx_done(void *ctx, size_t len);
/* A piece of a window drained where it lies (px_proto_ring_place). */
void px_proto_ring_rx_data(void *ctx, const void *data, size_t len);
/* A send through a ring (req->ring): px_proto_sring_start makes its state
 * (-1: no memory); px_proto_sring_claim says whether the frame of *k bytes
 * at off may be written now (-1: the frames before it in its place are
 * still being sent; the last one's completion resumes px_proto_data_pump)
 * and cuts it at its window's end; px_proto_sring_send sends it, counted
 * in its window. */
int px_proto_sring_start(px_proto_req_t *req);
int px_proto_sring_claim(px_proto_req_t *req, size_t off, size_t *k);
/* The receiver asked for frames up to req->fill_end, chunk bytes each
 * (the last range it asks for when final): sent as the ring lets them. */
void px_proto_sring_range(px_proto_req_t *req, size_t chunk, uint8_t am, int final);
px_status_t px_proto_sring_send(px_proto_req_t *req, size_t off, px_chan_route_t *route,
                                const void *hdr, size_t hdr_len, const struct iovec *iov,
                                int iovcnt, unsigned flags);
/* Ends a receive's or a send's ring (at completion). */
void px_proto_ring_end(px_proto_req_t *req);
/* proto_am.c: sends the frames (am: PX_AM_DATA or PX_AM_ZDATA) of a send
 * to a network peer from req->fill_off up to req->fill_end, chunk bytes
 * each, as far as its ring lets it; 1 once all are sent. */
int px_proto_data_pump(px_proto_req_t *req, size_t chunk, uint8_t am);

/* proto_am.c */
void px_proto_am_register(void);
void px_proto_take_unexp(px_proto_req_t *req, px_proto_unexp_t *u);
/* An unexpected message's entry once done with (its data freed unless
 * inline): kept for the next one, up to a few, else freed; at finalize
 * (px_proto_unexp_drop) the kept ones go too. */
void px_proto_unexp_free(px_proto_unexp_t *u);
void px_proto_unexp_drop(void);
void px_proto_rx_done(int peer, void *ctx, size_t len);
void px_proto_rx_data(int peer, void *ctx, const void *data, size_t len);
void px_proto_peer_failed_cb(int peer, px_status_t why);
void px_proto_bulk_progress(int peer, void *arg, uint64_t got);
void px_proto_bulk_done(int peer, void *arg, px_status_t st);
void px_proto_bulk_failed(int peer, void *arg, uint64_t acked);

/* Where byte off of a message lies in req->buf (a ring: proto_ring.c). */
static inline char *px_proto_at(const px_proto_req_t *req, size_t off)
{
    return (char *)req->buf + (req->ring ? off % req->ring : off);
}

/* Fills bytes [0, to) of a send written on demand (px_proto_isend_fill). */
static inline void px_proto_fill_to(px_proto_req_t *req, size_t to)
{
    if (req->fill && to > req->filled) {
        req->fill(req, px_proto_at(req, req->filled), req->filled, to);
        req->filled = to;
    }
}

static inline int px_match(uint32_t ctx, int src, int tag, uint32_t mctx, int msrc, int mtag)
{
    return ctx == mctx && (msrc == PX_ANY_SOURCE || msrc == src) &&
           (mtag == PX_ANY_TAG || mtag == tag);
}

#endif
