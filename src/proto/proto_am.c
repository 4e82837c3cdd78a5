/* The protocols' active messages: eager (data with the envelope),
 * rendezvous (RTS; then a direct read of the sender's buffer where the
 * channel can, or CTS + DATA, or udp-zcopy), synchronous mode (an
 * acknowledgement at match time), and the matching of envelopes (context,
 * source, tag) against posted receives and unexpected messages. */
#include "proto_impl.h"
#include "../util/log.h"
#include "../util/param.h"

#include <stdlib.h>
#include <string.h>

const uint8_t px_am_hdr_len[PX_AM_MAX] = {
    [PX_AM_EAGER] = 16,    [PX_AM_RTS] = 40,      [PX_AM_CTS] = 48,     [PX_AM_DATA] = 32,
    [PX_AM_FIN] = 24,      [PX_AM_SYNC_ACK] = 24, [PX_AM_ZCTS] = 64,    [PX_AM_ZACK] = 32,
    [PX_AM_ZDATA] = 40,    [PX_AM_RMA_PUT] = 32,  [PX_AM_RMA_ACC] = 56, [PX_AM_RMA_GET] = 48,
    [PX_AM_RMA_SYNC] = 32, [PX_AM_PUB_ACK] = 32,  [PX_AM_PUB_PUT] = 40, [PX_AM_PUB_GET] = 48,
    [PX_AM_PUB_GETR] = 32, [PX_AM_PUB_BAR] = 24,
};

/* The header as a px_am_hdr_t: the common 16-byte envelope always, the
 * rest only as far as it was sent. */
static inline void px_am_hdr_get(px_am_hdr_t *h, const void *hdr, size_t hdr_len)
{
    memcpy(h, hdr, 16);
    h->a = h->b = h->c = h->d = h->e = h->f = 0;
    if (hdr_len > 16)
        memcpy((char *)h + 16, (const char *)hdr + 16, hdr_len - 16);
}

/* ---------- rendezvous ---------- */

static int px_proto_zc_offer(int peer, px_proto_req_t *req, size_t n, uint64_t sreq);

/* The receive req met a rendezvous request for size bytes. head: bytes of
 * the message that came with the request; the caller counts them in
 * rndv_got as they land (the receive completes then if nothing else is
 * accepted). */
static void px_proto_rndv_start(int peer, px_proto_req_t *req, size_t size, uint64_t sreq,
                                uint64_t addr, unsigned flags, size_t head)
{
    size_t n = size < req->len ? size : req->len;
    if (size > req->len)
        req->st_error = PX_ERR_TRUNCATED;
    req->st_count = n;
    px_p.peers[peer].msgs_rx++;
    px_p.peers[peer].bytes_rx += n;
    /* addr 0: the sender wants the data copied (PX_CHANNELS copy, or a
     * send packed as it goes); a receive taken as it lands (drain) asks
     * for the frames too, to unpack each while the next is copied */
    if (px_chan_can_get(peer) && addr && !head && !req->drain) {
        if (px_chan_get(peer, req->buf, addr, n) == PX_OK) {
            px_proto_ctrl(peer, PX_AM_FIN, sreq, 0, 0);
            px_proto_complete(req);
            return;
        }
        px_chan_copy_only(peer); /* e.g. process_vm_readv forbidden: copy instead */
    }
    req->rndv_total = n;
    req->rndv_got = 0;
    if (req->ring && n > req->ring) { /* window by window (proto_ring.c) */
        if (px_proto_ring_start(peer, req, sreq, head) == 0)
            return;
        px_error("proto", "out of memory for a receive of %zu bytes", n);
        req->st_error = PX_ERR_NO_MEMORY; /* nothing is accepted */
        req->st_count = req->rndv_total = n = 0;
    }
    req->rx_expect = head < n ? head : n;
    if ((flags & PX_AM_FLAG_ZCOPY) && !head && n && px_proto_zc_offer(peer, req, n, sreq) == 0)
        return;
    /* the sender sends what lies beyond its head and below n */
    px_proto_ctrl(peer, PX_AM_CTS, sreq, px_proto_id_get(req), n);
    if (n == 0 && !head)
        px_proto_complete(req);
}

/* An unexpected request's head has arrived and its receive is matched. */
static void px_proto_rndv_head_take(px_proto_req_t *req, px_proto_unexp_t *u)
{
    size_t m = u->head < req->rndv_total ? u->head : req->rndv_total;
    if (m)
        memcpy(req->buf, u->data, m);
    px_proto_unexp_free(u);
    if (req->rs) {
        px_proto_ring_landed(req, req, m);
        return;
    }
    req->rndv_got += m;
    if (req->rndv_got == req->rndv_total)
        px_proto_complete(req);
}

/* A send filled as it goes (px_proto_isend_fill) to a shared-memory peer
 * packs each DATA frame into the ring's cells as the ring takes them
 * (px_chan_send_fill), the next frame once the ring has taken all but
 * PX_PROTO_FILL_AHEAD of the ones before: packing then overlaps the
 * receiver's unpacking, where packing every frame up front would come
 * before it. A frame that does not follow the ones handed over so far is
 * packed into buf and sent from there, and so are those after it. */
#define PX_PROTO_FILL_FRAME PX_PROTO_DRAIN_STEP
#define PX_PROTO_FILL_AHEAD 2

static void px_proto_fill_frames(px_proto_req_t *req);

/* The next n bytes of the frames filled in the cells, at dst: the cells
 * of one peer are written in the order their frames were sent. */
static void px_proto_fill_cell(void *arg, void *dst, size_t off, size_t n)
{
    px_proto_req_t *req = arg;
    (void)off;
    req->fill(req, dst, req->fill_at, req->fill_at + n);
    req->fill_at += n;
}

static void px_proto_fill_cb(void *arg, px_status_t st)
{
    px_proto_req_t *req = arg;
    if (st != PX_OK)
        req->st_error = st;
    req->fill_busy--;
    px_proto_fill_frames(req); /* before this frame's count goes */
    px_proto_send_cb(req, PX_OK);
}

/* Packs and sends frames from req->fill_off up to req->fill_end while fewer
 * than PX_PROTO_FILL_AHEAD wait for room in the ring. */
static void px_proto_fill_frames(px_proto_req_t *req)
{
    while (req->fill_off < req->fill_end && req->fill_busy < PX_PROTO_FILL_AHEAD &&
           req->st_error == PX_OK) {
        /* cut where the receiver's windows are (proto_ring.c) */
        size_t off = req->fill_off, k = PX_PROTO_FILL_FRAME - off % PX_PROTO_FILL_FRAME;
        if (k > req->fill_end - off)
            k = req->fill_end - off;
        px_am_hdr_t h = {.am = PX_AM_DATA, .a = req->rndv_total, .b = off, .c = req->head};
        px_status_t st = PX_ERR_UNSUPPORTED;
        if (!req->fill_copy && off == req->filled) {
            st = px_chan_send_fill(req->peer, &h, px_am_hdr_len[PX_AM_DATA], k, px_proto_fill_cell,
                                   px_proto_fill_cb, req);
            if (st != PX_ERR_UNSUPPORTED)
                req->filled = off + k;
        }
        if (st == PX_ERR_UNSUPPORTED) {
            req->fill_copy = 1;
            px_proto_fill_to(req, off + k);
            struct iovec iov = {px_proto_at(req, off), k};
            st = px_chan_send(req->peer, NULL, &h, px_am_hdr_len[PX_AM_DATA], &iov, 1, req->rflags,
                              px_proto_fill_cb, req);
        }
        req->fill_off = off + k;
        if (st == PX_INPROGRESS) {
            req->pending++;
            req->fill_busy++;
        } else if (st < 0) {
            req->st_error = st;
        }
    }
}

/* Sends bytes [from, n) of a rendezvous send (from req->head on) as DATA
 * frames (am PX_AM_DATA), or as the rest of a udp-zcopy transfer whose
 * path failed (PX_AM_ZDATA, from req->head), then ends the send's wait for
 * the receiver unless it asks for more. */
static void px_proto_rndv_data(int peer, px_proto_req_t *req, size_t from, size_t n, uint8_t am,
                               int more)
{
    if (from < req->head)
        from = req->head;
    if (req->fill_off >= req->fill_end) /* else this range follows on */
        req->fill_off = from;
    req->fill_end = n;
    if (req->fill && !req->dvc && am == PX_AM_DATA) {
        px_proto_fill_frames(req);
        if (!more)
            px_proto_send_cb(req, PX_OK); /* the wait for CTS is over */
        return;
    }
    px_chan_route_t *route = req->dvc; /* the channel the rule chose for the data */
    size_t chunk = px_chan_chunk(peer, route, 0);
    /* a send-only collective round (a broadcast's root) returns once its
     * frames are written: in smaller frames, the writes of a message up to
     * about 1 MB end earlier; a larger one goes faster in large writes,
     * which the kernel takes up to the socket's buffer as fast as it copies */
    if (route && (req->rflags & PX_CHAN_F_RELEASE)) {
        size_t small = px_params.rndv_release_chunk, large = px_params.rndv_release_large;
        if (n <= px_params.rndv_release_max) {
            if (small && small < chunk)
                chunk = small;
        } else if (px_chan_route_conn(peer, route) && large > chunk) {
            chunk = px_chan_chunk(peer, route, large);
        }
    }
    /* a send packed as it goes packs a frame, then writes it: frames no
     * larger than the receiver's unpacking steps let the packing of the
     * next, the transfer and the unpacking of the last overlap (one
     * through a ring is cut where the receiver's windows are) */
    if (req->fill && !req->ring && chunk > PX_PROTO_FILL_FRAME)
        chunk = PX_PROTO_FILL_FRAME;
    if (req->ring) { /* the last frame's completion ends the wait */
        px_proto_sring_range(req, chunk, am, !more);
        return;
    }
    px_proto_data_pump(req, chunk, am);
    if (more)
        return;
    if (req->rflags & PX_CHAN_F_RELEASE)
        px_chan_prestage_end(route, (const char *)req->buf + req->head);
    px_proto_send_cb(req, PX_OK); /* the wait for CTS is over */
}

int px_proto_data_pump(px_proto_req_t *req, size_t chunk, uint8_t am)
{
    while (req->fill_off < req->fill_end && req->st_error == PX_OK) {
        size_t off = req->fill_off, k = req->fill_end - off < chunk ? req->fill_end - off : chunk;
        if (req->ring && px_proto_sring_claim(req, off, &k))
            return 0;
        px_proto_fill_to(req, off + k);
        req->fill_off = off + k;
        px_am_hdr_t h = {.am = am, .a = req->rndv_total, .b = off, .c = req->head};
        struct iovec iov = {px_proto_at(req, off), k};
        unsigned fl = PX_CHAN_F_STRIPE | req->rflags;
        px_status_t st =
            req->ring ? px_proto_sring_send(req, off, req->dvc, &h, px_am_hdr_len[am], &iov, 1, fl)
                      : px_chan_send(req->peer, req->dvc, &h, px_am_hdr_len[am], &iov, 1, fl,
                                     px_proto_send_cb, req);
        if (st == PX_INPROGRESS)
            req->pending++;
        else if (st < 0)
            req->st_error = st;
    }
    return 1;
}

/* ---------- udp-zcopy (the channel's bulk transfers) ---------- */

/* Receiver: the data of req (n bytes) by a bulk transfer straight into
 * its buffer; tells the sender where to stream. -1: copy instead. */
static int px_proto_zc_offer(int peer, px_proto_req_t *req, size_t n, uint64_t sreq)
{
    px_chan_bulk_offer_t o;
    if (px_chan_bulk_recv(peer, req->buf, n, req, &o))
        return -1;
    req->bulk = 1;
    req->peer_id = sreq;
    px_am_hdr_t h = {.am = PX_AM_ZCTS,
                     .a = sreq,
                     .b = px_proto_id_get(req),
                     .c = n,
                     .d = o.w[0],
                     .e = o.w[1],
                     .f = o.w[2]};
    px_status_t st =
        px_chan_send(peer, NULL, &h, px_am_hdr_len[PX_AM_ZCTS], NULL, 0, 0, NULL, NULL);
    if (st < 0)
        px_error("proto", "cannot send control message %u to rank %d: %s", PX_AM_ZCTS, peer,
                 px_status_string(st));
    return 0;
}

/* Sender: the receiver's buffer is ready. The receiver's identifier goes
 * in rndv_total (as after a CTS) and the bytes accepted in rndv_got, for
 * the rest that may have to go in frames. */
static void px_proto_zc_go(int peer, px_proto_req_t *req, const px_am_hdr_t *h)
{
    px_chan_bulk_offer_t o = {{h->d, h->e, h->f}};
    req->rndv_total = h->b;
    req->rndv_got = h->c;
    if (px_chan_bulk_send(peer, &o, req->buf, (size_t)h->c, req) != PX_OK) {
        px_error("proto", "udp-zcopy to rank %d: cannot start the transfer", peer);
        req->st_error = PX_ERR_IO;
        px_proto_send_cb(req, PX_OK);
    }
}

void px_proto_bulk_progress(int peer, void *arg, uint64_t got)
{
    px_proto_ctrl(peer, PX_AM_ZACK, ((px_proto_req_t *)arg)->peer_id, got, 0);
}

void px_proto_bulk_done(int peer, void *arg, px_status_t st)
{
    px_proto_req_t *req = arg;
    (void)peer;
    if (req->kind == PX_PROTO_REQ_SEND) {
        px_proto_send_cb(req, st); /* the wait for the receiver is over */
        return;
    }
    if (st != PX_OK)
        req->st_error = st;
    req->bulk = 0;
    req->rndv_got = req->rndv_total;
    px_proto_complete(req);
}

/* Sender: the transfer's path failed with `acked` bytes in place at the
 * receiver; the rest goes in frames over the channel, which fails over. */
void px_proto_bulk_failed(int peer, void *arg, uint64_t acked)
{
    px_proto_req_t *req = arg;
    req->head = (size_t)acked;
    px_proto_rndv_data(peer, req, req->head, req->rndv_got, PX_AM_ZDATA, 0);
}

/* ---------- matching ---------- */

static inline px_proto_req_t *px_proto_match_posted(uint32_t ctx, int src, int tag)
{
    px_list_t *e, *t;
    px_list_for_each_safe(e, t, &px_p.posted) {
        px_proto_req_t *r = px_container_of(e, px_proto_req_t, link);
        if (px_match(ctx, src, tag, r->ctx, r->rank, r->tag)) {
            px_list_del(e);
            return r;
        }
    }
    return NULL;
}

/* Unexpected messages: an entry carries its payload after it up to
 * PX_UNEXP_INLINE bytes (a larger one's data is allocated apart). Entries
 * with room for PX_UNEXP_SMALL bytes serve payloads up to that size and
 * those with data apart (rendezvous requests, large messages), and are
 * kept when freed, up to PX_UNEXP_KEEP of them, for the next ones: a
 * stream of small messages that arrive before their receives (a blocking
 * receive behind its sender, batches of them drained from a ring at once)
 * takes its entries from there, not from malloc. */
#define PX_UNEXP_INLINE 256
#define PX_UNEXP_SMALL 64
#define PX_UNEXP_KEEP 4096
static px_proto_unexp_t *px_unexp_kept; /* chained through link.next */
static int px_unexp_nkept;

/* An entry with room for payload_len bytes inline when that is up to
 * PX_UNEXP_INLINE (u->data set), else for none (u->data NULL). */
static px_proto_unexp_t *px_proto_unexp_new(size_t payload_len)
{
    px_proto_unexp_t *u;
    size_t inl = payload_len <= PX_UNEXP_INLINE ? payload_len : 0;
    if (inl <= PX_UNEXP_SMALL && px_unexp_kept) {
        u = px_unexp_kept;
        px_unexp_kept = (px_proto_unexp_t *)u->link.next;
        px_unexp_nkept--;
    } else if (inl <= PX_UNEXP_SMALL) {
        if (!(u = malloc(sizeof(*u) + PX_UNEXP_SMALL)))
            return NULL;
        u->kept = 1;
    } else {
        if (!(u = malloc(sizeof(*u) + inl)))
            return NULL;
        u->kept = 0;
    }
    u->data = inl || !payload_len ? u->inline_data : NULL;
    return u;
}

void px_proto_unexp_free(px_proto_unexp_t *u)
{
    if (u->data && u->data != u->inline_data)
        free(u->data);
    if (!u->kept || px_unexp_nkept >= PX_UNEXP_KEEP) {
        free(u);
        return;
    }
    u->link.next = (px_list_t *)px_unexp_kept;
    px_unexp_kept = u;
    px_unexp_nkept++;
}

void px_proto_unexp_drop(void)
{
    while (px_unexp_kept) {
        px_proto_unexp_t *u = px_unexp_kept;
        px_unexp_kept = (px_proto_unexp_t *)u->link.next;
        free(u);
    }
    px_unexp_nkept = 0;
}

static void px_proto_set_status(px_proto_req_t *req, int src, int tag, int peer, size_t size)
{
    req->st_source = src;
    req->st_tag = tag;
    req->peer = peer;
    req->st_count = size < req->len ? size : req->len;
    if (size > req->len)
        req->st_error = PX_ERR_TRUNCATED;
}

/* A receive met an unexpected message (irecv or mrecv). */
void px_proto_take_unexp(px_proto_req_t *req, px_proto_unexp_t *u)
{
    req->st_source = u->src;
    req->st_tag = u->tag;
    req->peer = u->peer;
    if (u->am == PX_AM_RTS) {
        px_proto_rndv_start(u->peer, req, u->size, u->sreq, u->addr, u->flags, u->head);
        if (!u->head)
            px_proto_unexp_free(u);
        else if (u->arrived)
            px_proto_rndv_head_take(req, u);
        else
            u->req = req; /* rx_done finishes it */
        return;
    }
    px_proto_set_status(req, u->src, u->tag, u->peer, u->size);
    if (u->flags & PX_AM_FLAG_SYNC)
        px_proto_ctrl(u->peer, PX_AM_SYNC_ACK, u->sreq, 0, 0);
    if (!u->arrived) {
        u->req = req; /* rx_done finishes it */
        return;
    }
    if (req->st_count)
        memcpy(req->buf, u->data, req->st_count);
    px_proto_unexp_free(u);
    px_proto_complete(req);
}

/* ---------- handlers (run when a header arrives) ---------- */

static void *px_proto_am_eager(int peer, const void *hdr, size_t hdr_len, size_t off,
                               size_t payload_len, void **ctx_p)
{
    px_am_hdr_t h;
    (void)off;
    px_am_hdr_get(&h, hdr, hdr_len);
    px_p.n_eager++;
    px_p.peers[peer].msgs_rx++;
    px_p.peers[peer].bytes_rx += payload_len;
    px_proto_req_t *req = px_proto_match_posted(h.ctx, h.src, h.tag);
    if (req) {
        px_proto_set_status(req, h.src, h.tag, peer, payload_len);
        if (h.flags & PX_AM_FLAG_SYNC)
            px_proto_ctrl(peer, PX_AM_SYNC_ACK, h.a, 0, 0);
        *ctx_p = PX_RX_TAG(req, PX_RX_REQ);
        if (payload_len > req->len) {
            req->tmp = malloc(payload_len);
            return req->tmp;
        }
        return req->buf;
    }
    px_proto_unexp_t *u = px_proto_unexp_new(payload_len);
    if (u && !u->data)
        u->data = malloc(payload_len);
    if (!u || !u->data) {
        px_error("proto", "out of memory for an unexpected message of %zu bytes", payload_len);
        if (u)
            px_proto_unexp_free(u);
        return NULL;
    }
    u->ctx = h.ctx;
    u->src = h.src;
    u->tag = h.tag;
    u->peer = peer;
    u->am = PX_AM_EAGER;
    u->flags = h.flags;
    u->head = 0;
    u->arrived = 0;
    u->size = payload_len;
    u->sreq = h.a;
    u->req = NULL;
    px_list_insert_tail(&px_p.unexp, &u->link);
    px_p.n_unexp++;
    *ctx_p = PX_RX_TAG(u, PX_RX_UNEXP);
    return u->data;
}

static void *px_proto_am_rts(int peer, const void *hdr, size_t hdr_len, size_t off,
                             size_t payload_len, void **ctx_p)
{
    px_am_hdr_t h;
    (void)off;
    px_am_hdr_get(&h, hdr, hdr_len);
    /* a head is smaller than the message, and never with a read of the
     * sender's memory or udp-zcopy */
    if (payload_len && (payload_len >= h.a || h.c || (h.flags & PX_AM_FLAG_ZCOPY))) {
        px_error("proto", "invalid rendezvous request from rank %d", peer);
        return NULL;
    }
    px_p.n_rndv++;
    px_proto_req_t *req = px_proto_match_posted(h.ctx, h.src, h.tag);
    if (req) {
        req->st_source = h.src;
        req->st_tag = h.tag;
        req->peer = peer;
        px_proto_rndv_start(peer, req, h.a, h.b, h.c, h.flags, payload_len);
        if (!payload_len)
            return NULL;
        if (payload_len <= req->rndv_total) { /* counted as rendezvous data */
            *ctx_p = PX_RX_TAG(req, PX_RX_DATA);
            return req->buf;
        }
        /* truncated within the head: nothing more comes */
        if (!(req->tmp = malloc(payload_len))) {
            px_error("proto", "out of memory for a message of %zu bytes", payload_len);
            return NULL;
        }
        *ctx_p = PX_RX_TAG(req, PX_RX_REQ);
        return req->tmp;
    }
    px_proto_unexp_t *u = px_proto_unexp_new(0);
    if (!u)
        return NULL;
    u->data = payload_len ? malloc(payload_len) : NULL;
    if (payload_len && !u->data) {
        px_error("proto", "out of memory for an unexpected message of %zu bytes", payload_len);
        px_proto_unexp_free(u);
        return NULL;
    }
    u->ctx = h.ctx;
    u->src = h.src;
    u->tag = h.tag;
    u->peer = peer;
    u->am = PX_AM_RTS;
    u->flags = h.flags;
    u->arrived = !payload_len;
    u->size = h.a;
    u->head = payload_len;
    u->sreq = h.b;
    u->addr = h.c;
    u->req = NULL;
    px_list_insert_tail(&px_p.unexp, &u->link);
    px_p.n_unexp++;
    if (!payload_len)
        return NULL;
    *ctx_p = PX_RX_TAG(u, PX_RX_UNEXP);
    return u->data;
}

/* The request of `kind` that a control message's `a` names, its header in
 * h; NULL when it names none. */
static px_proto_req_t *px_proto_named(const void *hdr, size_t hdr_len, px_am_hdr_t *h, int kind)
{
    px_am_hdr_get(h, hdr, hdr_len);
    px_proto_req_t *req = px_proto_id_lookup(h->a);
    return req && req->kind == kind ? req : NULL;
}

static void *px_proto_invalid(int peer, const char *what)
{
    px_error("proto", "invalid %s from rank %d", what, peer);
    return NULL;
}

static void *px_proto_am_cts(int peer, const void *hdr, size_t hdr_len, size_t off, size_t len,
                             void **ctx_p)
{
    px_am_hdr_t h;
    px_proto_req_t *req = px_proto_named(hdr, hdr_len, &h, PX_PROTO_REQ_SEND);
    (void)off, (void)len, (void)ctx_p;
    if (!req || h.c > req->len || h.d > h.c)
        return px_proto_invalid(peer, "clear-to-send");
    req->rndv_total = h.b; /* the receiver's identifier travels in DATA.a */
    px_proto_rndv_data(peer, req, h.d, h.c, PX_AM_DATA, (h.flags & PX_AM_FLAG_MORE) != 0);
    return NULL;
}

static void *px_proto_am_data(int peer, const void *hdr, size_t hdr_len, size_t off,
                              size_t payload_len, void **ctx_p)
{
    px_am_hdr_t h;
    px_proto_req_t *req = px_proto_named(hdr, hdr_len, &h, PX_PROTO_REQ_RECV);
    if (!req || h.b > req->rndv_total || off > req->rndv_total - h.b ||
        payload_len > req->rndv_total - h.b - off)
        return px_proto_invalid(peer, "rendezvous data");
    if ((h.flags & PX_AM_FLAG_RMA_ACK) && !off)
        px_proto_rma_data_acks(peer, &h);
    if (req->rs) {
        void *at = px_proto_ring_place(req, h.b + off, payload_len, ctx_p);
        return at ? at : px_proto_invalid(peer, "rendezvous data");
    }
    *ctx_p = PX_RX_TAG(req, PX_RX_DATA);
    if (req->drain) {
        size_t at = h.b + off;
        if (at != req->rx_expect) { /* out of order (striped): the caller takes it all at the end */
            req->drain = NULL;
        } else {
            req->rx_expect += payload_len;
            /* everything before it in place: drained from the ring's cells */
            if (px_chan_rx_can_stream() && req->rndv_got == at && payload_len) {
                if (req->drained < at)
                    req->drain(req, px_proto_at(req, req->drained), req->drained, at);
                req->drained = at;
                return PX_CHAN_RX_STREAM;
            }
        }
    }
    return (char *)req->buf + h.b + off;
}

/* A piece of DATA frame drained where it lies (PX_CHAN_RX_STREAM). */
void px_proto_rx_data(int peer, void *ctx, const void *data, size_t len)
{
    (void)peer;
    if (PX_RX_KIND(ctx) != PX_RX_DATA) { /* a window of a receive through a ring */
        px_proto_ring_rx_data(ctx, data, len);
        return;
    }
    px_proto_req_t *req = PX_RX_PTR(ctx);
    req->drain(req, data, req->drained, req->drained + len);
    req->drained += len;
}

/* The rest of a udp-zcopy transfer whose path failed: the receiver's own
 * transfer ends where the sender's rest begins. A receive that the
 * transfer completed before the sender knew is gone: its rest is dropped. */
static void *px_proto_am_zdata(int peer, const void *hdr, size_t hdr_len, size_t off,
                               size_t payload_len, void **ctx_p)
{
    px_am_hdr_t h;
    px_proto_req_t *req = px_proto_named(hdr, hdr_len, &h, PX_PROTO_REQ_RECV);
    if (!req)
        return NULL;
    if (req->bulk) {
        if (h.c > req->rndv_total)
            return px_proto_invalid(peer, "zero-copy rest");
        px_chan_bulk_cancel(peer, req);
        req->bulk = 0;
        req->rndv_got = h.c;
    }
    return px_proto_am_data(peer, hdr, hdr_len, off, payload_len, ctx_p);
}

static void *px_proto_am_zcts(int peer, const void *hdr, size_t hdr_len, size_t off, size_t len,
                              void **ctx_p)
{
    px_am_hdr_t h;
    px_proto_req_t *req = px_proto_named(hdr, hdr_len, &h, PX_PROTO_REQ_SEND);
    (void)off, (void)len, (void)ctx_p;
    if (!req || h.c > req->len || px_chan_local(peer))
        return px_proto_invalid(peer, "zero-copy clear-to-send");
    px_proto_zc_go(peer, req, &h);
    return NULL;
}

/* ZACK (udp-zcopy progress), FIN and SYNC_ACK: news of a send from its
 * receiver. */
static void *px_proto_am_send_news(int peer, const void *hdr, size_t hdr_len, size_t off,
                                   size_t len, void **ctx_p)
{
    px_am_hdr_t h;
    px_proto_req_t *req = px_proto_named(hdr, hdr_len, &h, PX_PROTO_REQ_SEND);
    int zack = h.am == PX_AM_ZACK;
    (void)off, (void)len, (void)ctx_p;
    if (!req)
        return px_proto_invalid(peer, zack ? "zero-copy acknowledgement" : "completion notice");
    if (zack)
        px_chan_bulk_acked(peer, req, h.b);
    else
        px_proto_send_cb(req, PX_OK);
    return NULL;
}

void px_proto_am_register(void)
{
    px_chan_am_register(PX_AM_EAGER, px_am_hdr_len[PX_AM_EAGER], 0, px_proto_am_eager);
    px_chan_am_register(PX_AM_RTS, px_am_hdr_len[PX_AM_RTS], 0, px_proto_am_rts);
    px_chan_am_register(PX_AM_CTS, px_am_hdr_len[PX_AM_CTS], 0, px_proto_am_cts);
    px_chan_am_register(PX_AM_DATA, px_am_hdr_len[PX_AM_DATA], PX_CHAN_AM_STRIPED,
                        px_proto_am_data);
    px_chan_am_register(PX_AM_FIN, px_am_hdr_len[PX_AM_FIN], 0, px_proto_am_send_news);
    px_chan_am_register(PX_AM_SYNC_ACK, px_am_hdr_len[PX_AM_SYNC_ACK], 0, px_proto_am_send_news);
    px_chan_am_register(PX_AM_ZCTS, px_am_hdr_len[PX_AM_ZCTS], 0, px_proto_am_zcts);
    px_chan_am_register(PX_AM_ZACK, px_am_hdr_len[PX_AM_ZACK], 0, px_proto_am_send_news);
    px_chan_am_register(PX_AM_ZDATA, px_am_hdr_len[PX_AM_ZDATA], PX_CHAN_AM_STRIPED,
                        px_proto_am_zdata);
    px_proto_rma_register();
    px_proto_pub_register();
}

/* ---------- completion (runs when a payload is in place) ---------- */

void px_proto_rx_done(int peer, void *ctx, size_t len)
{
    px_proto_req_t *req;
    px_proto_unexp_t *u;

    switch (PX_RX_KIND(ctx)) {
    case PX_RX_REQ:
        req = PX_RX_PTR(ctx);
        if (req->tmp) {
            memcpy(req->buf, req->tmp, req->st_count);
            free(req->tmp);
            req->tmp = NULL;
        }
        px_proto_complete(req);
        break;
    case PX_RX_UNEXP:
        u = PX_RX_PTR(ctx);
        u->arrived = 1;
        if (u->req && u->am == PX_AM_RTS) {
            px_proto_rndv_head_take(u->req, u);
        } else if (u->req) { /* matched while its payload was still arriving */
            req = u->req;
            if (req->st_count)
                memcpy(req->buf, u->data, req->st_count);
            px_proto_unexp_free(u);
            px_proto_complete(req);
        }
        break;
    case PX_RX_DATA:
        req = PX_RX_PTR(ctx);
        if (req->rs) { /* the head of a receive through a ring */
            px_proto_ring_landed(req, req, len);
            break;
        }
        req->rndv_got += len;
        if (req->rndv_got == req->rndv_total) {
            px_proto_complete(req);
        } else if (req->drain && req->rndv_got == req->rx_expect &&
                   req->rndv_got - req->drained >= PX_PROTO_DRAIN_STEP) {
            /* every piece given out so far has landed, in order */
            req->drain(req, px_proto_at(req, req->drained), req->drained, req->rndv_got);
            req->drained = req->rndv_got;
        }
        break;
    default:
        if (ctx && *(uint8_t *)ctx == PX_PUB_RX)
            px_proto_pub_rx_done(peer, ctx, len);
        else if (ctx && *(uint8_t *)ctx == PX_RING_RX)
            px_proto_ring_rx_done(ctx, len);
        else if (ctx)
            px_proto_rma_rx_done(peer, ctx, len);
        break;
    }
}

/* Everything that waits for `rank` ends with `why`: receives naming it,
 * rendezvous transfers and synchronous sends it was to answer (the channel
 * has already ended its queued sends). Receives from any source stay. */
static void px_proto_fail_peer(int rank, px_status_t why)
{
    px_list_t *e, *t;
    px_list_for_each_safe(e, t, &px_p.posted) {
        px_proto_req_t *r = px_container_of(e, px_proto_req_t, link);
        if (r->rank != PX_ANY_SOURCE && r->peer == rank) {
            px_list_del(e);
            r->st_error = why;
            px_proto_complete(r);
        }
    }
    for (uint32_t i = 0; i < px_p.nids; i++) {
        px_proto_req_t *r = px_p.ids[i];
        /* free slots hold small indices */
        if ((uintptr_t)r <= px_p.nids || (uintptr_t)r == PX_ID_NONE || r->done || r->peer != rank)
            continue;
        r->st_error = why;
        r->pending = 0;
        px_proto_complete(r);
    }
}

void px_proto_peer_failed_cb(int peer, px_status_t why)
{
    px_error("proto",
             "rank %d is lost (%s): operations with it fail through their "
             "communicator's error handler",
             peer, px_status_string(why));
    px_proto_fail_peer(peer, PX_ERR_PEER_UNREACHABLE);
    px_proto_pub_peer_failed(peer);
}
