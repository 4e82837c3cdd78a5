/* The public active-message interface, one-sided (include/plexus/am.h,
 * docs/am.md): regions registered by the target, named by keys of index
 * and generation, and put and get in frames the channel carries whole.
 * The target's side runs in the channel's handlers, as messages do. */
#include "proto_pub_impl.h"
#include "../util/log.h"

#include <stdlib.h>
#include <string.h>

int plexus_am_mem_register(void *base, size_t len, plexus_am_mem_t *mem_p)
{
    PX_PUB_ENTER();
    if ((!base && len) || !mem_p)
        PX_PUB_RETURN(PLEXUS_AM_ERR_INVALID);
    uint32_t i = 0;
    while (i < px_pub.nmems && px_pub.mems[i])
        i++;
    if (i == px_pub.nmems) {
        uint32_t n = px_pub.nmems ? px_pub.nmems * 2 : 16;
        struct plexus_am_mem **m = realloc(px_pub.mems, sizeof(*m) * n);
        uint32_t *g = m ? realloc(px_pub.mgens, sizeof(*g) * n) : NULL;
        if (m)
            px_pub.mems = m;
        if (!g)
            PX_PUB_RETURN(PLEXUS_AM_ERR_NO_MEMORY);
        px_pub.mgens = g;
        for (uint32_t k = px_pub.nmems; k < n; k++) {
            px_pub.mems[k] = NULL;
            px_pub.mgens[k] = 1;
        }
        px_pub.nmems = n;
    }
    struct plexus_am_mem *mem = malloc(sizeof(*mem));
    if (!mem)
        PX_PUB_RETURN(PLEXUS_AM_ERR_NO_MEMORY);
    *mem = (struct plexus_am_mem){base, len, i};
    px_pub.mems[i] = mem;
    *mem_p = mem;
    PX_PUB_RETURN(PLEXUS_AM_OK);
}

int plexus_am_mem_deregister(plexus_am_mem_t mem)
{
    PX_PUB_ENTER();
    if (!mem || mem->idx >= px_pub.nmems || px_pub.mems[mem->idx] != mem)
        PX_PUB_RETURN(PLEXUS_AM_ERR_NOT_REGISTERED);
    px_pub.mems[mem->idx] = NULL;
    px_pub.mgens[mem->idx]++; /* keys naming it no longer match */
    free(mem);
    PX_PUB_RETURN(PLEXUS_AM_OK);
}

int plexus_am_mem_rkey(plexus_am_mem_t mem, plexus_am_rkey_t *rkey_p)
{
    PX_PUB_ENTER();
    if (!mem || !rkey_p || mem->idx >= px_pub.nmems || px_pub.mems[mem->idx] != mem)
        PX_PUB_RETURN(PLEXUS_AM_ERR_NOT_REGISTERED);
    rkey_p->w[0] = ((uint64_t)px_pub.mgens[mem->idx] << 32) | mem->idx;
    rkey_p->w[1] = (uint64_t)(uintptr_t)mem->base;
    rkey_p->w[2] = mem->len;
    PX_PUB_RETURN(PLEXUS_AM_OK);
}

/* The target's side: where [off, off + len) of the region of key is, or
 * NULL and the error in *st_p. */
static char *px_pub_region(uint64_t key, uint64_t off, uint64_t len, int *st_p)
{
    uint32_t i = (uint32_t)key;
    struct plexus_am_mem *m = i < px_pub.nmems ? px_pub.mems[i] : NULL;
    if (!m || px_pub.mgens[i] != (uint32_t)(key >> 32)) {
        *st_p = PLEXUS_AM_ERR_NOT_REGISTERED;
        return NULL;
    }
    if (off > m->len || len > m->len - off) {
        *st_p = PLEXUS_AM_ERR_RANGE;
        return NULL;
    }
    return (char *)m->base + off;
}

/* The origin's side of a put or get: the checks it can make itself. */
static int px_pub_rma_check(plexus_am_ep_t ep, const void *buf, size_t len,
                            const plexus_am_rkey_t *rkey, uint64_t off)
{
    if (!px_pub_ep_ok(ep))
        return PLEXUS_AM_ERR_BAD_EP;
    if (!rkey || (!buf && len))
        return PLEXUS_AM_ERR_INVALID;
    if (off > rkey->w[2] || len > rkey->w[2] - off)
        return PLEXUS_AM_ERR_RANGE;
    if (px_chan_failed(ep->rank))
        return PLEXUS_AM_ERR_PEER;
    return PLEXUS_AM_OK;
}

int plexus_am_put(plexus_am_ep_t ep, const void *src, size_t len, const plexus_am_rkey_t *rkey,
                  uint64_t off, const plexus_am_cmpl_t *cmpl)
{
    PX_PUB_ENTER();
    int rc = px_pub_rma_check(ep, src, len, rkey, off);
    if (rc != PLEXUS_AM_OK)
        PX_PUB_RETURN(rc);
    int peer = ep->rank, remote = px_pub_wants_remote(cmpl);
    px_pub_op_t *op = px_pub_op_get(peer, cmpl);
    if (!op)
        PX_PUB_RETURN(PLEXUS_AM_ERR_NO_MEMORY);
    if (!px_pub_wants_local(cmpl) && len) { /* as a send: nobody waits for the buffer */
        char *b = len <= PX_PUB_INLINE ? op->inl : (op->bounce = malloc(len));
        if (!b) {
            px_pub_op_put(op);
            PX_PUB_RETURN(PLEXUS_AM_ERR_NO_MEMORY);
        }
        memcpy(b, src, len);
        src = b;
    }
    /* in frames a channel carries whole; an empty put still reaches the
     * target, so that its remote completion says the region is valid */
    size_t chunk = px_chan_eager(peer, NULL);
    px_status_t first = PX_OK;
    size_t at = 0;
    do {
        size_t n = len - at < chunk ? len - at : chunk;
        px_am_hdr_t h = {.am = PX_AM_PUB_PUT,
                         .a = remote ? px_pub_op_id(op) : 0,
                         .b = rkey->w[0],
                         .c = off + at};
        struct iovec iov = {(char *)src + at, n};
        px_status_t st =
            px_pub_frame(op, &h, px_am_hdr_len[PX_AM_PUB_PUT], &iov, n ? 1 : 0, remote);
        if (st < 0 && at == 0)
            first = st;
        else if (st < 0)
            px_pub_fail(op, px_pub_err(st));
        at += n;
    } while (at < len && first == PX_OK);
    PX_PUB_RETURN(px_pub_issued(op, first));
}

int plexus_am_get(plexus_am_ep_t ep, void *dst, size_t len, const plexus_am_rkey_t *rkey,
                  uint64_t off, const plexus_am_cmpl_t *cmpl)
{
    PX_PUB_ENTER();
    int rc = px_pub_rma_check(ep, dst, len, rkey, off);
    if (rc != PLEXUS_AM_OK)
        PX_PUB_RETURN(rc);
    px_pub_op_t *op = px_pub_op_get(ep->rank, cmpl);
    if (!op)
        PX_PUB_RETURN(PLEXUS_AM_ERR_NO_MEMORY);
    op->get = 1;
    op->dst = dst;
    op->len = len;
    op->got = 0;
    /* the target answers with the data, or with an acknowledgement that
     * carries its error (also for an empty get) */
    px_am_hdr_t h = {
        .am = PX_AM_PUB_GET, .a = px_pub_op_id(op), .b = rkey->w[0], .c = off, .d = len};
    px_status_t st =
        px_chan_send(ep->rank, NULL, &h, px_am_hdr_len[PX_AM_PUB_GET], NULL, 0, 0, NULL, NULL);
    if (st < 0) {
        px_pub_op_put(op);
        PX_PUB_RETURN(px_pub_err(st));
    }
    PX_PUB_RETURN(PLEXUS_AM_OK);
}

static void *px_pub_am_put(int peer, const void *hdr, size_t hdr_len, size_t off, size_t len,
                           void **ctx_p)
{
    px_am_hdr_t h;
    int st = PLEXUS_AM_OK;
    (void)off;
    memcpy(&h, hdr, hdr_len < sizeof(h) ? hdr_len : sizeof(h));
    char *dst = px_pub_region(h.b, h.c, len, &st);
    if (!dst || !len) {
        if (!dst && !h.a)
            px_error("proto", "put from rank %d: %s", peer, plexus_am_strerror(st));
        px_pub_ack(peer, h.a, st);
        return NULL;
    }
    if (h.a) {
        px_pub_rx_t *rx = px_pub_rx_get(PX_PUB_RX_PUT);
        if (!rx) { /* the data still lands; only its acknowledgement is early */
            px_pub_ack(peer, h.a, PLEXUS_AM_OK);
        } else {
            rx->op = h.a;
            *ctx_p = rx;
        }
    }
    return dst;
}

static void *px_pub_am_get(int peer, const void *hdr, size_t hdr_len, size_t off, size_t len,
                           void **ctx_p)
{
    px_am_hdr_t h;
    int st = PLEXUS_AM_OK;
    (void)off, (void)len, (void)ctx_p;
    memcpy(&h, hdr, hdr_len < sizeof(h) ? hdr_len : sizeof(h));
    char *src = px_pub_region(h.b, h.c, h.d, &st);
    if (!src || !h.d) {
        px_pub_ack(peer, h.a, st);
        return NULL;
    }
    size_t chunk = px_chan_eager(peer, NULL);
    for (uint64_t at = 0; at < h.d; at += chunk) {
        size_t n = h.d - at < chunk ? (size_t)(h.d - at) : chunk;
        px_am_hdr_t r = {.am = PX_AM_PUB_GETR, .a = h.a, .b = at};
        struct iovec iov = {src + at, n};
        px_status_t s =
            px_chan_send(peer, NULL, &r, px_am_hdr_len[PX_AM_PUB_GETR], &iov, 1, 0, NULL, NULL);
        if (s < 0) {
            px_pub_ack(peer, h.a, px_pub_err(s));
            break;
        }
    }
    return NULL;
}

static void *px_pub_am_getr(int peer, const void *hdr, size_t hdr_len, size_t off, size_t len,
                            void **ctx_p)
{
    px_am_hdr_t h;
    (void)off;
    memcpy(&h, hdr, hdr_len < sizeof(h) ? hdr_len : sizeof(h));
    px_pub_op_t *op = px_pub_op_lookup(h.a);
    if (!op || !op->get || op->peer != peer || h.b > op->len || len > op->len - h.b) {
        px_error("proto", "invalid get answer from rank %d", peer);
        return NULL;
    }
    px_pub_rx_t *rx = px_pub_rx_get(PX_PUB_RX_GETR);
    if (!rx) {
        px_pub_get_done(op, PLEXUS_AM_ERR_NO_MEMORY);
        return NULL;
    }
    rx->getop = op;
    rx->len = len;
    *ctx_p = rx;
    return op->dst + h.b;
}

/* proto's finalize: the registrations go with the job. */
void px_pub_rma_finalize(void)
{
    for (uint32_t i = 0; i < px_pub.nmems; i++)
        free(px_pub.mems[i]);
    free(px_pub.mems);
    free(px_pub.mgens);
    px_pub.mems = NULL;
    px_pub.mgens = NULL;
    px_pub.nmems = 0;
}

void px_pub_rma_register(void)
{
    px_chan_am_register(PX_AM_PUB_PUT, px_am_hdr_len[PX_AM_PUB_PUT], 0, px_pub_am_put);
    px_chan_am_register(PX_AM_PUB_GET, px_am_hdr_len[PX_AM_PUB_GET], 0, px_pub_am_get);
    px_chan_am_register(PX_AM_PUB_GETR, px_am_hdr_len[PX_AM_PUB_GETR], 0, px_pub_am_getr);
}
