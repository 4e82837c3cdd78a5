/* Large messages of non-contiguous types through a ring of two windows
 * at each end instead of a packed copy of the message's size.
 *
 * A receive drained as it lands (unpacked) asks for the message a window
 * at a time (a clear-to-send each, PX_AM_FLAG_MORE on all but the last),
 * the next one for a slot as soon as the window in it has landed whole
 * and been drained. Two windows are asked for at the start, so one
 * travels while the other is drained. Byte o of the message lands at
 * buf + o % (2 * PX_PROTO_RING_WIN), the head that came with the request
 * too (it is part of window 0). Frames may come in any order (striped):
 * each counts towards its window, whose context it carries.
 *
 * A send filled as it goes (packed) writes byte o at the same place of
 * its own ring; see "sends" below. No frame crosses a window's end (a
 * receiver through a ring asks for one window per clear-to-send, a
 * sender's ring cuts its frames there too), so none wraps; either end
 * may have a ring while the other has a buffer of the message's size. */
#include "proto_impl.h"
#include "../util/log.h"
#include "../util/param.h"

#include <stdlib.h>

typedef struct px_proto_ring_slot {
    uint8_t rk; /* PX_RING_RX, first: px_proto_rx_done routes by it */
    px_proto_req_t *req;
    uint64_t win;    /* the window it holds */
    size_t got, end; /* bytes landed; its end in the message */
    /* as in px_proto_irecv_drain: drained up to `drained`; pieces given
     * out in order up to `expect` (SIZE_MAX once one came out of order) */
    size_t drained, expect;
} px_proto_ring_slot_t;

struct px_proto_ring {
    px_proto_ring_slot_t slot[2];
    uint64_t next, nwin, done; /* window to ask for next; windows in all; drained */
    uint64_t sreq;             /* the sender's request */
    size_t head;               /* bytes that came with the request */
};

size_t px_proto_ring_size(size_t len)
{
    size_t ring = 2 * PX_PROTO_RING_WIN;
    if (len <= ring || px_chan_eager_top() > PX_PROTO_RING_WIN ||
        px_params.rndv_head > PX_PROTO_RING_WIN)
        return len;
    return ring;
}

/* Asks for window w into slot s. */
static void px_proto_ring_ask(int peer, px_proto_req_t *req, px_proto_ring_t *rs, int s)
{
    uint64_t w = rs->next++;
    size_t start = (size_t)w * PX_PROTO_RING_WIN, end = start + PX_PROTO_RING_WIN;
    if (end > req->rndv_total)
        end = req->rndv_total;
    px_proto_ring_slot_t *sl = &rs->slot[s];
    sl->win = w;
    sl->end = end;
    sl->got = 0;
    if (w == 0)
        start = rs->head; /* the head is counted as it lands */
    sl->drained = (size_t)w * PX_PROTO_RING_WIN;
    sl->expect = start;
    px_am_hdr_t h = {.am = PX_AM_CTS,
                     .flags = rs->next < rs->nwin ? PX_AM_FLAG_MORE : 0,
                     .a = rs->sreq,
                     .b = req->id,
                     .c = end,
                     .d = start};
    px_status_t st = px_chan_send(peer, NULL, &h, px_am_hdr_len[PX_AM_CTS], NULL, 0, 0, NULL, NULL);
    if (st < 0)
        px_error("proto", "cannot send a clear-to-send to rank %d: %s", peer, px_status_string(st));
}

/* req (rndv_total set, larger than its ring) met a rendezvous request
 * from sreq with head bytes: asks for the first two windows. -1: no
 * memory. */
int px_proto_ring_start(int peer, px_proto_req_t *req, uint64_t sreq, size_t head)
{
    px_proto_ring_t *rs = calloc(1, sizeof(*rs));
    if (!rs)
        return -1;
    rs->nwin = (req->rndv_total + PX_PROTO_RING_WIN - 1) / PX_PROTO_RING_WIN;
    rs->sreq = sreq;
    rs->head = head;
    for (int s = 0; s < 2; s++) {
        rs->slot[s].rk = PX_RING_RX;
        rs->slot[s].req = req;
        rs->slot[s].win = UINT64_MAX;
    }
    req->rs = rs;
    if (!req->id)
        px_proto_id_get(req);
    px_proto_ring_ask(peer, req, rs, 0);
    px_proto_ring_ask(peer, req, rs, 1);
    return 0;
}

/* Where len bytes of DATA at message offset off go, their context in
 * *ctx_p; NULL: not in a window asked for. A frame that follows all that
 * has landed in its window is drained where it lies when the channel
 * allows it (PX_CHAN_RX_STREAM, px_proto_ring_rx_data). */
void *px_proto_ring_place(px_proto_req_t *req, size_t off, size_t len, void **ctx_p)
{
    px_proto_ring_t *rs = req->rs;
    uint64_t w = off / PX_PROTO_RING_WIN;
    px_proto_ring_slot_t *sl = &rs->slot[w & 1];
    if (sl->win != w || off + len > sl->end || len > sl->end - sl->got)
        return NULL;
    int in_order = off == sl->expect;
    sl->expect = in_order ? off + len : SIZE_MAX;
    *ctx_p = sl;
    if (in_order && len && px_chan_rx_can_stream() &&
        (size_t)w * PX_PROTO_RING_WIN + sl->got == off) {
        if (sl->drained < off)
            req->drain(req, px_proto_at(req, sl->drained), sl->drained, off);
        sl->drained = off;
        return PX_CHAN_RX_STREAM;
    }
    return (char *)req->buf + off % (2 * PX_PROTO_RING_WIN);
}

void px_proto_ring_rx_data(void *ctx, const void *data, size_t len)
{
    px_proto_ring_slot_t *sl = ctx;
    sl->req->drain(sl->req, data, sl->drained, sl->drained + len);
    sl->drained += len;
}

/* len bytes landed in a window: ctx is a slot, or the request itself for
 * the head. A window landed whole is drained and its slot asked to hold
 * the next; the receive completes with the last. */
void px_proto_ring_landed(px_proto_req_t *req, void *ctx, size_t len)
{
    px_proto_ring_t *rs = req->rs;
    px_proto_ring_slot_t *sl = ctx == (void *)req ? &rs->slot[0] : ctx;
    size_t start = (size_t)sl->win * PX_PROTO_RING_WIN;
    sl->got += len;
    req->rndv_got += len;
    if (sl->got < sl->end - start) {
        /* everything given out has landed, in order: drained a step at a
         * time while the rest travels */
        if (start + sl->got == sl->expect && sl->expect - sl->drained >= PX_PROTO_DRAIN_STEP) {
            req->drain(req, px_proto_at(req, sl->drained), sl->drained, sl->expect);
            sl->drained = sl->expect;
        }
        return;
    }
    req->drain(req, px_proto_at(req, sl->drained), sl->drained, sl->end);
    sl->win = UINT64_MAX;
    if (++rs->done == rs->nwin) {
        px_proto_complete(req); /* px_proto_ring_end */
        return;
    }
    if (rs->next < rs->nwin)
        px_proto_ring_ask(req->peer, req, rs, (int)(sl - rs->slot));
}

void px_proto_ring_rx_done(void *ctx, size_t len)
{
    px_proto_ring_slot_t *sl = ctx;
    px_proto_ring_landed(sl->req, sl, len);
}

/* ---------- sends ---------- */

/* A send through a ring writes each frame in its place once the frames
 * that held the place before (two windows back) have been sent: the
 * channel keeps a frame's buffer until the peer has it (failover may send
 * it again), so each window counts its frames still held. The head that
 * goes with the request is part of window 0. Frames are cut at window
 * ends, whatever the receiver asks for. */
typedef struct px_proto_sring_slot {
    px_proto_req_t *req;
    uint64_t win; /* the window whose frames it holds */
    int busy;     /* of them, sends not yet completed */
} px_proto_sring_slot_t;

struct px_proto_sring {
    px_proto_sring_slot_t slot[2];
    size_t chunk; /* of the frames to a network peer */
    uint8_t am;
    uint8_t final; /* the receiver asked for its last range */
};

int px_proto_sring_start(px_proto_req_t *req)
{
    px_proto_sring_t *ss = calloc(1, sizeof(*ss));
    if (!ss)
        return -1;
    for (int s = 0; s < 2; s++) {
        ss->slot[s].req = req;
        ss->slot[s].win = s;
    }
    req->ss = ss;
    return 0;
}

int px_proto_sring_claim(px_proto_req_t *req, size_t off, size_t *k)
{
    uint64_t w = off / PX_PROTO_RING_WIN;
    px_proto_sring_slot_t *sl = &req->ss->slot[w & 1];
    if (sl->win != w) {
        if (sl->busy)
            return -1;
        sl->win = w;
    }
    size_t end = (size_t)(w + 1) * PX_PROTO_RING_WIN;
    if (*k > end - off)
        *k = end - off;
    return 0;
}

static void px_proto_sring_cb(void *arg, px_status_t st)
{
    px_proto_sring_slot_t *sl = arg;
    px_proto_req_t *req = sl->req;
    px_proto_sring_t *ss = req->ss;
    if (st != PX_OK)
        req->st_error = st; /* no more frames go */
    /* a place freed: the frames waiting for it go (before this one's
     * count, which may be the request's last) */
    if ((--sl->busy == 0 || st != PX_OK) && (ss->final || req->fill_off < req->fill_end))
        px_proto_sring_range(req, ss->chunk, ss->am, ss->final);
    px_proto_send_cb(req, PX_OK);
}

px_status_t px_proto_sring_send(px_proto_req_t *req, size_t off, px_chan_route_t *route,
                                const void *hdr, size_t hdr_len, const struct iovec *iov,
                                int iovcnt, unsigned flags)
{
    px_proto_sring_slot_t *sl = &req->ss->slot[(off / PX_PROTO_RING_WIN) & 1];
    px_status_t st =
        px_chan_send(req->peer, route, hdr, hdr_len, iov, iovcnt, flags, px_proto_sring_cb, sl);
    if (st == PX_INPROGRESS)
        sl->busy++;
    return st;
}

void px_proto_sring_range(px_proto_req_t *req, size_t chunk, uint8_t am, int final)
{
    px_proto_sring_t *ss = req->ss;
    ss->chunk = chunk;
    ss->am = am;
    ss->final = (uint8_t) final;
    if (!px_proto_data_pump(req, chunk, am) || !final)
        return;
    ss->final = 0;                /* once */
    px_proto_send_cb(req, PX_OK); /* the wait for the receiver is over */
}

/* A receive or send with a ring is complete (or failed): its ring's state
 * goes; a receive that went window by window has nothing left to drain. */
void px_proto_ring_end(px_proto_req_t *req)
{
    if (req->kind == PX_PROTO_REQ_SEND) {
        free(req->ss);
        req->ss = NULL;
        return;
    }
    if (!req->rs) /* the message fitted the ring: no windows */
        return;
    free(req->rs);
    req->rs = NULL;
    req->drained = req->st_count;
}
