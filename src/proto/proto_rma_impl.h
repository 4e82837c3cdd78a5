/* One-sided communication: what the origin and the target halves of a
 * window share (proto_rma.c: windows and what an origin sends;
 * proto_rma_rx.c: the frames a window receives).
 *
 * Wire (px_am_hdr_t; src: the origin's rank in the window, ctx: the
 * window's id):
 *   RMA_PUT   a = offset at the target, b = bytes of the whole put; the
 *             payload lands in the window (striped when large); flags
 *             PX_AM_RMA_FLUSH or _UNLOCK: then a flush or unlock, c = the
 *             origin's count (RMA_SYNC's a)
 *   RMA_ACC   a = offset, b = bytes, c = type, tag = operation, d = the
 *             origin's result request (fetching: flags PX_AM_RMA_FETCH),
 *             e = where in it; flags PX_AM_RMA_CAS: payload is the compare
 *             value then the new one; PX_AM_RMA_FLUSH, _UNLOCK: as a put's,
 *             f = the count
 *   RMA_GET   a = offset, b = bytes, c = the origin's request, d = where in
 *             it; answered with DATA frames
 *   RMA_SYNC  tag = what (PX_RMA_S_*), a = bytes the origin sent to this
 *             target (flush, unlock, complete), b = argument
 * Offsets are from the window's base, or absolute addresses in a dynamic
 * window; the target checks them against what it exposes. */
#ifndef PX_PROTO_RMA_IMPL_H
#define PX_PROTO_RMA_IMPL_H

#include "proto_impl.h"

#define PX_AM_RMA_FETCH 1
#define PX_AM_RMA_CAS 2
/* a put or accumulate that carries a flush or an unlock (its bytes-sent
 * count in c for a put, f for an accumulate) */
#define PX_AM_RMA_FLUSH 4
#define PX_AM_RMA_UNLOCK 8

enum {
    PX_RMA_S_LOCK = 1,  /* b: exclusive */
    PX_RMA_S_GRANT,     /* the lock is the origin's */
    PX_RMA_S_FLUSH,     /* a: bytes sent; answered with ACK once applied */
    PX_RMA_S_UNLOCK,    /* the same, and the lock is released */
    PX_RMA_S_ACK,       /* a flush or unlock is done */
    PX_RMA_S_POST,      /* the target's exposure epoch is open to the origin */
    PX_RMA_S_COMPLETE,  /* a: bytes sent in the access epoch */
    PX_RMA_S_GET_ERROR, /* b: the origin's request (a get the target refused) */
};

/* What an rx_done context of this file points at. */
enum { PX_RMA_RX_PUT = 1, PX_RMA_RX_ACC };

/* One member of the window, as origin and as target. */
typedef struct px_rma_peer {
    uint8_t rk; /* PX_RMA_RX_PUT: puts from this origin count here */
    px_proto_win_t *w;
    int rank;
    /* this process as target of the member */
    uint64_t applied; /* bytes applied, gets' answered */
    int answering;    /* frames of answers to its gets still reading the window */
    uint64_t want;    /* a flush or unlock waits for applied >= want */
    uint8_t wanting;  /* 0, PX_RMA_S_FLUSH or PX_RMA_S_UNLOCK */
    int completes;    /* completions received (post/start/complete/wait) */
    uint64_t complete_at;
    /* this process as origin to the member */
    uint64_t sent;  /* bytes put, accumulated and got: what the target applies */
    uint64_t gsent; /* of which got */
    int acks_due;
    int granted;
    int posts;
    /* the last small put or accumulate to the member, not sent yet: a
     * flush or unlock that follows rides on it (one frame, not two) */
    uint8_t held;
    px_am_hdr_t hold_hdr;
    const void *hold_buf;
    size_t hold_len;
    px_proto_req_t *hold_req;
    /* large puts' frames waiting for the channel to the member to have
     * less than PX_RMA_PACE bytes queued, in order: gets and small
     * operations go ahead of them */
    struct px_rma_qput *qhead, *qtail;
} px_rma_peer_t;

/* Everything p's origin counted up to `bytes` is applied, and no answer
 * to its gets still reads the window (a fence, wait or unlock may end). */
static inline int px_rma_settled(const px_rma_peer_t *p, uint64_t bytes)
{
    return p->applied >= bytes && !p->answering;
}

/* A frame of a large put, waiting for its pace. */
typedef struct px_rma_qput {
    struct px_rma_qput *next;
    px_proto_req_t *req;
    const void *buf;
    size_t len;   /* this frame */
    size_t whole; /* the whole put (the route its size gets) */
    px_am_hdr_t h;
} px_rma_qput_t;

typedef struct px_rma_region {
    uintptr_t base;
    size_t len;
    struct px_rma_region *next;
} px_rma_region_t;

typedef struct px_rma_waiter {
    int origin, excl;
    struct px_rma_waiter *next;
} px_rma_waiter_t;

struct px_proto_win {
    uint32_t id;
    int me, size;
    int *peers;
    char *base;
    size_t len;
    int dynamic;
    px_rma_region_t *regions;
    uint64_t *rbase, *rlen;
    px_proto_rma_apply_fn apply;
    px_rma_peer_t *p;
    uint64_t tx_pending; /* frames sent without a request, not yet completed */
    int nheld;           /* members with a frame held (px_rma_peer_t.held) */
    /* the lock of this process's part */
    int lock_excl; /* -1, or the origin holding it */
    int lock_shared;
    px_rma_waiter_t *waiters, **waiters_tail;
    px_proto_win_t *next;
};

/* The window of that id, or NULL. */
px_proto_win_t *px_rma_win_find(uint32_t id);
/* Where [off, off + len) of this process's part is, or NULL when the
 * window does not expose all of it. */
char *px_rma_local(px_proto_win_t *w, uint64_t off, size_t len);
/* Sends a synchronisation (PX_RMA_S_*) to member target. */
void px_rma_sync(px_proto_win_t *w, int target, int what, uint64_t a, uint64_t b);

#endif
