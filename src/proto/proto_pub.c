/* The public active-message interface (include/plexus/am.h, docs/am.md).
 *
 * It is the protocols' own mechanism opened up: each public handler id is
 * an id of the channel layer's table (PX_AM_USER + id), dispatched by the
 * same code as MPI's eager and rendezvous messages, sent with the same
 * px_chan_send, progressed by px_proto_progress and set up by the same
 * px_proto_init, whether MPI did it or this file did (a program without
 * MPI). Operations that must be told of completion live in a pool of
 * descriptors named on the wire by index and generation, as proto.c's
 * requests are, so that nothing is allocated per message once warm. */
#include "proto_pub_impl.h"
#include "../boot/machine.h"
#include "../util/log.h"
#include "../util/param.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(PLEXUS_AM_HANDLERS_MAX == PX_AM_USER_N, "the public ids are the channel's range");

px_pub_state_t px_pub;

/* ---------- codes ---------- */

int px_pub_err(px_status_t st)
{
    if (st >= 0)
        return PLEXUS_AM_OK;
    if (st == PX_ERR_NO_MEMORY)
        return PLEXUS_AM_ERR_NO_MEMORY;
    if (st <= PX_ERR_LINK_DOWN)
        return PLEXUS_AM_ERR_PEER;
    return PLEXUS_AM_ERR_INVALID;
}

const char *plexus_am_strerror(int code)
{
    switch (code) {
    case PLEXUS_AM_OK:
        return "success";
    case PLEXUS_AM_ERR_NOT_INIT:
        return "plexus_am_init has not been called";
    case PLEXUS_AM_ERR_BAD_ID:
        return "handler id out of range";
    case PLEXUS_AM_ERR_NO_HANDLER:
        return "no handler registered under that id at the target";
    case PLEXUS_AM_ERR_BAD_EP:
        return "no such peer";
    case PLEXUS_AM_ERR_TOO_BIG:
        return "header or payload too large";
    case PLEXUS_AM_ERR_NOT_REGISTERED:
        return "memory region not registered";
    case PLEXUS_AM_ERR_RANGE:
        return "outside the registered region";
    case PLEXUS_AM_ERR_INVALID:
        return "invalid argument";
    case PLEXUS_AM_ERR_IN_HANDLER:
        return "blocking call inside a handler";
    case PLEXUS_AM_ERR_NO_MEMORY:
        return "out of memory";
    case PLEXUS_AM_ERR_PEER:
        return "peer unreachable";
    case PLEXUS_AM_ERR_INIT:
        return "cannot set up the job";
    default:
        return "unknown error";
    }
}

int plexus_am_version(int *major_p, int *minor_p)
{
    if (major_p)
        *major_p = PLEXUS_AM_VERSION_MAJOR;
    if (minor_p)
        *minor_p = PLEXUS_AM_VERSION_MINOR;
    return PLEXUS_AM_VERSION;
}

/* ---------- operations ---------- */

px_pub_op_t *px_pub_op_get(int peer, const plexus_am_cmpl_t *c)
{
    px_pub_op_t *op = px_pub.free_ops;
    if (op) {
        px_pub.free_ops = op->next_free;
    } else {
        if ((px_pub.nops & (px_pub.nops - 1)) == 0) { /* 0 or a power of two: full */
            uint32_t n = px_pub.nops ? px_pub.nops * 2 : 64;
            px_pub_op_t **ops = realloc(px_pub.ops, sizeof(*ops) * n);
            if (!ops)
                return NULL;
            px_pub.ops = ops;
        }
        if (!(op = calloc(1, sizeof(*op))))
            return NULL;
        op->idx = px_pub.nops;
        op->gen = 1;
        px_pub.ops[px_pub.nops++] = op;
    }
    op->busy = 1;
    op->get = 0;
    op->peer = peer;
    op->status = PLEXUS_AM_OK;
    op->lpend = op->rpend = 1; /* the caller's tokens while it issues */
    op->c = c ? *c : (plexus_am_cmpl_t){0};
    op->bounce = NULL;
    return op;
}

void px_pub_op_put(px_pub_op_t *op)
{
    free(op->bounce);
    op->bounce = NULL;
    op->busy = 0;
    op->gen++;
    op->next_free = px_pub.free_ops;
    px_pub.free_ops = op;
}

uint64_t px_pub_op_id(const px_pub_op_t *op) { return ((uint64_t)op->gen << 32) | (op->idx + 1); }

px_pub_op_t *px_pub_op_lookup(uint64_t id)
{
    uint32_t i = (uint32_t)id - 1;
    if (!(uint32_t)id || i >= px_pub.nops)
        return NULL;
    px_pub_op_t *op = px_pub.ops[i];
    return op->busy && op->gen == (uint32_t)(id >> 32) ? op : NULL;
}

static void px_pub_tell(plexus_am_counter_t *ctr, plexus_am_cb_t cb, void *arg, int st)
{
    if (ctr) {
        if (st && !ctr->error)
            ctr->error = st;
        ctr->count++;
    }
    if (cb)
        cb(arg, st);
}

void px_pub_fail(px_pub_op_t *op, int st)
{
    if (st && !op->status)
        op->status = st;
}

/* One of op's local (or remote) events has come; the last tells its
 * completion, and the op goes once both kinds have. */
static void px_pub_dec(px_pub_op_t *op, int remote, int st)
{
    unsigned *pend = remote ? &op->rpend : &op->lpend;
    px_pub_fail(op, st);
    if (--*pend)
        return;
    if (remote)
        px_pub_tell(op->c.remote, op->c.remote_cb, op->c.arg, op->status);
    else
        px_pub_tell(op->c.local, op->c.local_cb, op->c.arg, op->status);
    if (!op->lpend && !op->rpend)
        px_pub_op_put(op);
}

/* A get is complete (data in place, or failed): both completions. */
void px_pub_get_done(px_pub_op_t *op, int st)
{
    px_pub_fail(op, st);
    px_pub_tell(op->c.local, op->c.local_cb, op->c.arg, op->status);
    px_pub_tell(op->c.remote, op->c.remote_cb, op->c.arg, op->status);
    px_pub_op_put(op);
}

static void px_pub_sent(void *arg, px_status_t st) { px_pub_dec(arg, 0, px_pub_err(st)); }

int px_pub_wants_local(const plexus_am_cmpl_t *c) { return c && (c->local || c->local_cb); }

int px_pub_wants_remote(const plexus_am_cmpl_t *c) { return c && (c->remote || c->remote_cb); }

/* One frame of op; its acknowledgement is counted when it asks for one. */
px_status_t px_pub_frame(px_pub_op_t *op, const void *hdr, size_t hdr_len, const struct iovec *iov,
                         int iovcnt, int acked)
{
    px_status_t st = px_chan_send(op->peer, NULL, hdr, hdr_len, iov, iovcnt, 0, px_pub_sent, op);
    if (st == PX_INPROGRESS)
        op->lpend++;
    if (st >= 0 && acked)
        op->rpend++;
    return st;
}

/* The caller has issued everything of op; st: the first frame's result.
 * A call that fails at once tells no completion. */
int px_pub_issued(px_pub_op_t *op, px_status_t st)
{
    if (st < 0 && op->lpend == 1 && op->rpend == 1) {
        px_pub_op_put(op);
        return px_pub_err(st);
    }
    px_pub_dec(op, 0, px_pub_err(st));
    if (op->busy) /* not released by a local completion that ended it */
        px_pub_dec(op, 1, PLEXUS_AM_OK);
    return PLEXUS_AM_OK;
}

/* ---------- set-up ---------- */

/* A job of the interface alone: what MPI_Init does below MPI. */
static int px_pub_setup(void)
{
    px_boot_info_t boot;
    char prefix[32];
    px_status_t pst = px_param_init();
    if (px_boot_init(&boot) != PX_OK) {
        fprintf(stderr, "Plexus: plexus_am_init: bootstrap failed\n");
        return PLEXUS_AM_ERR_INIT;
    }
    snprintf(prefix, sizeof(prefix), "rank %d", boot.rank);
    px_log_set_prefix(prefix);
    if (pst != PX_OK) {
        /* through the launcher, so that the job ends now and says why */
        char msg[1100];
        snprintf(msg, sizeof(msg), "plexus_am_init: %s", px_param_error());
        fprintf(stderr, "Plexus: rank %d: %s\n", boot.rank, msg);
        if (boot.singleton)
            exit(1);
        px_boot_abort(1, msg);
    }
    px_status_t st = px_proto_init(&boot);
    if (st != PX_OK) {
        char msg[160];
        snprintf(msg, sizeof(msg), "plexus_am_init: cannot set up communication: %s",
                 px_status_string(st));
        fprintf(stderr, "Plexus: rank %d: %s\n", boot.rank, msg);
        px_boot_abort(1, msg);
    }
    /* PX_BIND as MPI_Init applies it: ranks that start piled on one core
     * would otherwise poll there, taking turns at its time slices */
    px_boot_bind();
    px_boot_spread();
    px_pub.owner = 1;
    return PLEXUS_AM_OK;
}

int plexus_am_init(void)
{
    int held = px_cs_enter(), rc = PLEXUS_AM_OK;
    if (px_pub.users) {
        px_pub.users++;
        px_cs_leave(&held);
        return PLEXUS_AM_OK;
    }
    if (!px_p.peers && (rc = px_pub_setup()) != PLEXUS_AM_OK)
        goto out;
    px_pub.eps = calloc((size_t)px_p.boot.size, sizeof(*px_pub.eps));
    if (!px_pub.eps) {
        rc = PLEXUS_AM_ERR_NO_MEMORY;
        goto out;
    }
    for (int r = 0; r < px_p.boot.size; r++)
        px_pub.eps[r].rank = r;
    px_pub.users = 1;
out:
    px_cs_leave(&held);
    return rc;
}

int plexus_am_finalize(void)
{
    PX_PUB_ENTER();
    if (px_pub.handler)
        PX_PUB_RETURN(PLEXUS_AM_ERR_IN_HANDLER);
    if (--px_pub.users)
        PX_PUB_RETURN(PLEXUS_AM_OK);
    if (px_pub.owner) {
        /* as MPI_Finalize: everything acknowledged, everyone done sending,
         * then the last acknowledgements over datagrams */
        px_pub.users = 1;
        px_proto_flush(PX_FLUSH_ACKED);
        plexus_am_barrier();
        px_proto_flush(PX_FLUSH_LAST);
        px_pub.users = 0;
        px_proto_finalize();
        px_boot_finalize();
        px_pub.owner = 0;
    }
    memset(px_pub.h, 0, sizeof(px_pub.h));
    free(px_pub.eps);
    px_pub.eps = NULL;
    PX_PUB_RETURN(PLEXUS_AM_OK);
}

/* proto's finalize: the pools and the registrations go with the job. */
void px_proto_pub_finalize(void)
{
    for (uint32_t i = 0; i < px_pub.nops; i++) {
        free(px_pub.ops[i]->bounce);
        free(px_pub.ops[i]);
    }
    free(px_pub.ops);
    px_pub.ops = NULL;
    px_pub.free_ops = NULL;
    px_pub.nops = 0;
    while (px_pub.free_rx) {
        px_pub_rx_t *rx = px_pub.free_rx;
        px_pub.free_rx = rx->next_free;
        free(rx);
    }
    px_pub_rma_finalize();
    px_pub.bar_epoch = px_pub.bar_released = 0;
    px_pub.bar_arrived[0] = px_pub.bar_arrived[1] = 0;
}

int plexus_am_rank(void) { return px_pub.users ? px_p.boot.rank : PLEXUS_AM_ERR_NOT_INIT; }

int plexus_am_size(void) { return px_pub.users ? px_p.boot.size : PLEXUS_AM_ERR_NOT_INIT; }

int plexus_am_ep(int rank, plexus_am_ep_t *ep_p)
{
    if (!px_pub.users)
        return PLEXUS_AM_ERR_NOT_INIT;
    if (rank < 0 || rank >= px_p.boot.size || !ep_p)
        return PLEXUS_AM_ERR_BAD_EP;
    *ep_p = &px_pub.eps[rank];
    return PLEXUS_AM_OK;
}

int plexus_am_ep_rank(plexus_am_ep_t ep) { return ep ? ep->rank : PLEXUS_AM_ERR_BAD_EP; }

int px_pub_ep_ok(plexus_am_ep_t ep)
{
    return ep && ep >= px_pub.eps && ep < px_pub.eps + px_p.boot.size;
}

size_t plexus_am_max_data(plexus_am_ep_t ep)
{
    return px_pub.users && px_pub_ep_ok(ep) ? px_chan_eager_max(ep->rank) : 0;
}

const char *plexus_am_ep_channel(plexus_am_ep_t ep)
{
    return px_pub.users && px_pub_ep_ok(ep) ? px_proto_channel_name(ep->rank) : NULL;
}

int plexus_am_register(unsigned id, plexus_am_handler_t handler, plexus_am_place_t place, void *arg)
{
    PX_PUB_ENTER();
    if (id >= PX_AM_USER_N)
        PX_PUB_RETURN(PLEXUS_AM_ERR_BAD_ID);
    px_pub.h[id].fn = handler;
    px_pub.h[id].place = handler ? place : NULL;
    px_pub.h[id].arg = arg;
    PX_PUB_RETURN(PLEXUS_AM_OK);
}

/* ---------- messages ---------- */

static int px_pub_sendv(plexus_am_ep_t ep, unsigned id, const void *hdr, size_t hdr_len,
                        const struct iovec *iov, int iovcnt, const plexus_am_cmpl_t *c)
{
    if (id >= PX_AM_USER_N)
        return PLEXUS_AM_ERR_BAD_ID;
    if (!px_pub_ep_ok(ep))
        return PLEXUS_AM_ERR_BAD_EP;
    if (iovcnt < 0 || iovcnt > PLEXUS_AM_IOV_MAX || (iovcnt && !iov) || (hdr_len && !hdr))
        return PLEXUS_AM_ERR_INVALID;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    int peer = ep->rank;
    if (hdr_len > PLEXUS_AM_HDR_MAX || len > px_chan_eager_max(peer))
        return PLEXUS_AM_ERR_TOO_BIG;
    if (px_chan_failed(peer))
        return PLEXUS_AM_ERR_PEER;
    px_pub_hdr_t h;
    h.am = (uint8_t)(PX_AM_USER + id);
    h.flags = h.pad = 0;
    h.hlen = (uint8_t)hdr_len;
    h.pad2 = 0;
    h.op = 0;
    if (hdr_len)
        memcpy(h.user, hdr, hdr_len);
    int local = px_pub_wants_local(c), remote = px_pub_wants_remote(c);
    if (!local && !remote && !len) /* a header alone is copied by the channel */
        return px_pub_err(
            px_chan_send(peer, NULL, &h, PX_PUB_HDR0 + hdr_len, NULL, 0, 0, NULL, NULL));
    px_pub_op_t *op = px_pub_op_get(peer, c);
    if (!op)
        return PLEXUS_AM_ERR_NO_MEMORY;
    struct iovec one;
    if (!local && len) { /* nobody is told when the buffers are free: copy them */
        char *b = len <= PX_PUB_INLINE ? op->inl : (op->bounce = malloc(len));
        if (!b) {
            px_pub_op_put(op);
            return PLEXUS_AM_ERR_NO_MEMORY;
        }
        for (int i = 0, at = 0; i < iovcnt; at += (int)iov[i].iov_len, i++)
            memcpy(b + at, iov[i].iov_base, iov[i].iov_len);
        one = (struct iovec){b, len};
        iov = &one;
        iovcnt = 1;
    }
    if (remote)
        h.op = px_pub_op_id(op);
    return px_pub_issued(op, px_pub_frame(op, &h, PX_PUB_HDR0 + hdr_len, iov, iovcnt, remote));
}

int plexus_am_sendv(plexus_am_ep_t ep, unsigned id, const void *hdr, size_t hdr_len,
                    const struct iovec *iov, int iovcnt, const plexus_am_cmpl_t *cmpl)
{
    PX_PUB_ENTER();
    PX_PUB_RETURN(px_pub_sendv(ep, id, hdr, hdr_len, iov, iovcnt, cmpl));
}

int plexus_am_send(plexus_am_ep_t ep, unsigned id, const void *hdr, size_t hdr_len,
                   const void *data, size_t len, const plexus_am_cmpl_t *cmpl)
{
    struct iovec iov = {(void *)data, len};
    PX_PUB_ENTER();
    PX_PUB_RETURN(px_pub_sendv(ep, id, hdr, hdr_len, &iov, len ? 1 : 0, cmpl));
}

int plexus_am_reply(plexus_am_token_t *tok, unsigned id, const void *hdr, size_t hdr_len,
                    const void *data, size_t len, const plexus_am_cmpl_t *cmpl)
{
    if (!tok)
        return PLEXUS_AM_ERR_INVALID;
    return plexus_am_send(plexus_am_token_ep(tok), id, hdr, hdr_len, data, len, cmpl);
}

int plexus_am_token_rank(const plexus_am_token_t *tok) { return tok->rank; }

plexus_am_ep_t plexus_am_token_ep(const plexus_am_token_t *tok)
{
    return px_pub.eps ? &px_pub.eps[tok->rank] : NULL;
}

/* ---------- arrival ---------- */

px_pub_rx_t *px_pub_rx_get(int kind)
{
    px_pub_rx_t *rx = px_pub.free_rx;
    if (rx)
        px_pub.free_rx = rx->next_free;
    else if (!(rx = malloc(sizeof(*rx))))
        return NULL;
    rx->rk = PX_PUB_RX;
    rx->kind = (uint8_t)kind;
    rx->own = 0;
    rx->op = 0;
    return rx;
}

static void px_pub_rx_put(px_pub_rx_t *rx)
{
    if (rx->own)
        free(rx->data);
    rx->next_free = px_pub.free_rx;
    px_pub.free_rx = rx;
}

/* Tells the sender's operation op (if any) that its frame is handled. */
void px_pub_ack(int peer, uint64_t op, int st)
{
    if (op)
        px_proto_ctrl(peer, PX_AM_PUB_ACK, op, (uint64_t)(int64_t)st, 0);
}

static void px_pub_run(int peer, unsigned id, const void *hdr, size_t hdr_len, void *data,
                       size_t len)
{
    struct plexus_am_token tok = {peer};
    px_pub.handler++;
    px_pub.h[id].fn(&tok, hdr, hdr_len, data, len, px_pub.h[id].arg);
    px_pub.handler--;
}

static void *px_pub_am_msg(int peer, const void *hdr, size_t hdr_len, size_t off, size_t len,
                           void **ctx_p)
{
    px_pub_hdr_t h;
    unsigned id = ((const uint8_t *)hdr)[0] - PX_AM_USER;
    (void)off;
    memcpy(&h, hdr, PX_PUB_HDR0);
    if (h.hlen > hdr_len - PX_PUB_HDR0) {
        px_error("proto", "invalid active message from rank %d", peer);
        return NULL;
    }
    if (!px_pub.users || !px_pub.h[id].fn) {
        px_error("proto", "active message for handler %u from rank %d: no handler registered", id,
                 peer);
        px_pub_ack(peer, h.op, PLEXUS_AM_ERR_NO_HANDLER);
        return NULL;
    }
    const char *user = (const char *)hdr + PX_PUB_HDR0;
    if (!len) { /* nothing to wait for */
        px_pub_run(peer, id, user, h.hlen, NULL, 0);
        px_pub_ack(peer, h.op, PLEXUS_AM_OK);
        return NULL;
    }
    px_pub_rx_t *rx = px_pub_rx_get(PX_PUB_RX_MSG);
    if (!rx)
        goto err_nomem;
    rx->id = (uint8_t)id;
    rx->hlen = h.hlen;
    rx->op = h.op;
    rx->len = len;
    memcpy(rx->hdr, user, h.hlen);
    rx->data = NULL;
    if (px_pub.h[id].place) {
        struct plexus_am_token tok = {peer};
        px_pub.handler++;
        rx->data = px_pub.h[id].place(&tok, rx->hdr, h.hlen, len, px_pub.h[id].arg);
        px_pub.handler--;
    }
    if (!rx->data) {
        rx->own = len > PX_PUB_INLINE;
        rx->data = rx->own ? malloc(len) : rx->inl;
        if (!rx->data) {
            rx->own = 0;
            px_pub_rx_put(rx);
            goto err_nomem;
        }
    }
    *ctx_p = rx;
    return rx->data;

err_nomem:
    px_error("proto", "out of memory for an active message of %zu bytes", len);
    px_pub_ack(peer, h.op, PLEXUS_AM_ERR_NO_MEMORY);
    return NULL;
}

void px_proto_pub_rx_done(int peer, void *ctx, size_t len)
{
    px_pub_rx_t *rx = ctx;
    (void)len;
    switch (rx->kind) {
    case PX_PUB_RX_MSG:
        if (px_pub.users && px_pub.h[rx->id].fn)
            px_pub_run(peer, rx->id, rx->hdr, rx->hlen, rx->data, rx->len);
        px_pub_ack(peer, rx->op, PLEXUS_AM_OK);
        break;
    case PX_PUB_RX_PUT:
        px_pub_ack(peer, rx->op, PLEXUS_AM_OK);
        break;
    case PX_PUB_RX_GETR:
        rx->getop->got += rx->len;
        if (rx->getop->got == rx->getop->len)
            px_pub_get_done(rx->getop, PLEXUS_AM_OK);
        break;
    }
    px_pub_rx_put(rx);
}

static void *px_pub_am_ack(int peer, const void *hdr, size_t hdr_len, size_t off, size_t len,
                           void **ctx_p)
{
    px_am_hdr_t h;
    (void)off, (void)len, (void)ctx_p;
    memcpy(&h, hdr, hdr_len < sizeof(h) ? hdr_len : sizeof(h));
    px_pub_op_t *op = px_pub_op_lookup(h.a);
    if (!op || op->peer != peer || (!op->get && !op->rpend)) {
        px_error("proto", "invalid active-message acknowledgement from rank %d", peer);
        return NULL;
    }
    if (op->get)
        px_pub_get_done(op, (int)(int64_t)h.b);
    else
        px_pub_dec(op, 1, (int)(int64_t)h.b);
    return NULL;
}

/* ---------- progress ---------- */

int plexus_am_progress(void)
{
    PX_PUB_ENTER();
    PX_PUB_RETURN(px_proto_progress());
}

/* Progresses until *count >= value (a counter's) or, without count,
 * until *flag is set. */
static int px_pub_wait(volatile uint64_t *count, uint64_t value, volatile int *flag)
{
    unsigned idle = 0;
    PX_PUB_ENTER();
    if (!count && !flag)
        PX_PUB_RETURN(PLEXUS_AM_ERR_INVALID);
    if (px_pub.handler)
        PX_PUB_RETURN(PLEXUS_AM_ERR_IN_HANDLER);
    while (count ? *count < value : !*flag)
        px_proto_wait_step(&idle);
    PX_PUB_RETURN(PLEXUS_AM_OK);
}

int plexus_am_wait_counter(plexus_am_counter_t *counter, uint64_t value)
{
    int rc = px_pub_wait(counter ? &counter->count : NULL, value, NULL);
    return rc == PLEXUS_AM_OK ? counter->error : rc;
}

int plexus_am_wait_flag(volatile int *flag) { return px_pub_wait(NULL, 0, flag); }

/* Barrier: every rank tells rank 0 it has arrived at epoch e; rank 0,
 * once all have, releases them. Arrivals for the next epoch may come
 * before rank 0 has left this one: they are counted by parity. */
static void *px_pub_am_bar(int peer, const void *hdr, size_t hdr_len, size_t off, size_t len,
                           void **ctx_p)
{
    px_am_hdr_t h;
    (void)peer, (void)off, (void)len, (void)ctx_p;
    memcpy(&h, hdr, hdr_len < sizeof(h) ? hdr_len : sizeof(h));
    if (px_p.boot.rank == 0)
        px_pub.bar_arrived[h.a & 1]++;
    else if (h.a > px_pub.bar_released)
        px_pub.bar_released = h.a;
    return NULL;
}

int plexus_am_barrier(void)
{
    unsigned idle = 0;
    PX_PUB_ENTER();
    if (px_pub.handler)
        PX_PUB_RETURN(PLEXUS_AM_ERR_IN_HANDLER);
    uint64_t e = ++px_pub.bar_epoch;
    int n = px_p.boot.size;
    if (px_p.boot.rank == 0) {
        while (px_pub.bar_arrived[e & 1] < (uint64_t)(n - 1))
            px_proto_wait_step(&idle);
        px_pub.bar_arrived[e & 1] = 0;
        for (int r = 1; r < n; r++)
            px_proto_ctrl(r, PX_AM_PUB_BAR, e, 0, 0);
    } else {
        px_proto_ctrl(0, PX_AM_PUB_BAR, e, 0, 0);
        while (px_pub.bar_released < e)
            px_proto_wait_step(&idle);
    }
    PX_PUB_RETURN(PLEXUS_AM_OK);
}

/* ---------- registration and failures ---------- */

void px_proto_pub_register(void)
{
    px_chan_am_register(PX_AM_PUB_ACK, px_am_hdr_len[PX_AM_PUB_ACK], 0, px_pub_am_ack);
    px_pub_rma_register();
    px_chan_am_register(PX_AM_PUB_BAR, px_am_hdr_len[PX_AM_PUB_BAR], 0, px_pub_am_bar);
    /* every public id is dispatched from the start, so that a message for
     * one without a handler is answered with an error, not dropped as
     * malformed by the channel */
    for (unsigned id = 0; id < PX_AM_USER_N; id++)
        px_chan_am_register(PX_AM_USER + id, PX_PUB_HDR0, 0, px_pub_am_msg);
}

/* The channel to peer is lost for good: what waits for its answers fails
 * (its queued sends have ended through their callbacks already). */
void px_proto_pub_peer_failed(int peer)
{
    for (uint32_t i = 0; i < px_pub.nops; i++) {
        px_pub_op_t *op = px_pub.ops[i];
        if (!op->busy || op->peer != peer)
            continue;
        if (op->get)
            px_pub_get_done(op, PLEXUS_AM_ERR_PEER);
        else if (op->rpend) {
            op->rpend = 1;
            px_pub_dec(op, 1, PLEXUS_AM_ERR_PEER);
        }
    }
}
