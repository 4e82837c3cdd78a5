/* Completion before the acknowledgement (PX_RAIL_RELEASE). */
#include "rail_impl.h"

#define PX_RAIL_REL_ALIGN(n) (((n) + 63) & ~(size_t)63)
#define PX_RAIL_REL_BATCH 64 /* callers told per call; the rest on the next pass */

/* x is written, not acknowledged, and its caller still waits for it. */
static inline int px_rail_releasable(const px_rail_tx_t *x)
{
    return !x->acked && !x->wire && !x->resend && px_rail_caller_held(x);
}

/* Copies bytes [x->staged, x->staged + len) of x's payload to its area. */
void px_rail_stage_copy(px_rail_tx_t *x, size_t len)
{
    struct iovec v[PX_RAIL_IOV];
    int n = px_iov_slice(x->iov, x->iovcnt, x->staged, len, v, PX_RAIL_IOV);
    px_net_iov_gather(x->area + x->staged, v, n);
    x->staged += len;
}

/* A place in the release buffer for x's payload (0), or -1. */
int px_rail_area(px_rail_t *r, px_rail_tx_t *x)
{
    if (x->area)
        return 0; /* a slice of a prestaged payload (px_rail_pre_attach) */
    size_t a = PX_RAIL_REL_ALIGN(x->len);
    if (a > r->rel_cap - r->rel_used)
        return -1;
    if (!r->rel_buf && !(r->rel_buf = malloc(r->rel_cap))) {
        r->release = 0; /* wait for acknowledgements from now on */
        return -1;
    }
    x->area = r->rel_buf + r->rel_used;
    x->staged = 0;
    x->inbuf = 1;
    r->rel_used += a;
    r->rel_live++;
    return 0;
}

/* A frame the transport could not write at once: while the sender waits
 * for the socket, the progress passes copy it (a slice each), so that
 * little is left to copy once it is written. One frame at a time. */
void px_rail_stage_start(px_rail_t *r, px_rail_tx_t *x)
{
    if (px_rail_caller_held(x) && px_rail_area(r, x) == 0)
        r->stage_x = x;
}

#define PX_RAIL_STAGE_STEP (64 * 1024)

static void px_rail_stage(px_rail_t *r)
{
    px_rail_tx_t *x = r->stage_x;
    size_t k = x->len - x->staged;
    px_rail_stage_copy(x, k < PX_RAIL_STAGE_STEP ? k : PX_RAIL_STAGE_STEP);
    if (x->staged == x->len)
        r->stage_x = NULL;
}

/* A rendezvous send's sender waits for the clear-to-send, its links quiet:
 * with fault tolerance, the payload its frames will copy once written
 * (px_rail_release) is copied meanwhile, a slice per progress pass, into a
 * place the release buffer keeps for it. Frames made from that buffer
 * (px_rail_pre_attach) take their slice of the copy and the bytes already
 * in it; px_rail_prestage_end gives the place back. One payload per rail.
 * A broadcast's root gains most when its receivers come late
 * (docs/fault-tolerance.md). */
void px_rail_prestage(px_rail_vc_t *vc, const void *buf, size_t len)
{
    px_rail_t *r = vc->rail;
    size_t a = PX_RAIL_REL_ALIGN(len);
    if (!r->ft || !r->release || r->pre.vc || !len || vc->failed || a > r->rel_cap - r->rel_used)
        return;
    if (!r->rel_buf && !(r->rel_buf = malloc(r->rel_cap)))
        return;
    r->pre.vc = vc;
    r->pre.src = buf;
    r->pre.len = len;
    r->pre.staged = 0;
    r->pre.area = r->rel_buf + r->rel_used;
    r->rel_used += a;
    r->rel_live++;
}

void px_rail_prestage_end(px_rail_vc_t *vc, const void *buf)
{
    px_rail_t *r = vc->rail;
    if (r->pre.vc != vc || r->pre.src != buf)
        return;
    r->prestaged_bytes += r->pre.staged;
    r->pre.vc = NULL;
    r->pre.len = r->pre.staged = 0;
    if (--r->rel_live == 0)
        r->rel_used = 0;
}

uint64_t px_rail_prestaged_bytes(const px_rail_t *r) { return r->prestaged_bytes; }

static void px_rail_prestage_step(px_rail_t *r)
{
    if (r->pre.vc->failed) { /* no clear-to-send will come */
        px_rail_prestage_end(r->pre.vc, r->pre.src);
        return;
    }
    size_t k = r->pre.len - r->pre.staged;
    if (k > PX_RAIL_STAGE_STEP)
        k = PX_RAIL_STAGE_STEP;
    memcpy(r->pre.area + r->pre.staged, r->pre.src + r->pre.staged, k);
    r->pre.staged += k;
}

/* x (one piece of the caller's buffer) lies in the prestaged payload: its
 * copy goes to its slice of the place kept, from where the copy stands. */
void px_rail_pre_attach(px_rail_t *r, px_rail_tx_t *x)
{
    const char *b = x->iovcnt == 1 ? x->iov[0].iov_base : NULL;
    if (!b || x->area || b < r->pre.src || x->len > r->pre.len ||
        (size_t)(b - r->pre.src) > r->pre.len - x->len)
        return;
    size_t off = (size_t)(b - r->pre.src);
    x->area = r->pre.area + off;
    x->staged = r->pre.staged <= off           ? 0
                : r->pre.staged - off < x->len ? r->pre.staged - off
                                               : x->len;
    x->inbuf = 1;
    r->rel_live++;
}

/* Once a transport has written everything vc had for it (a connection's
 * kernel now carries the bytes), the senders of the frames still waiting
 * for their acknowledgement are told they are done, as a socket write
 * completes a send in other MPI libraries: a broadcast's root or a
 * sender of large messages goes on a round trip and a queue's drain
 * earlier. With fault tolerance the frames stay until acknowledged, with
 * their payload copied out of the caller's buffer, which is the caller's
 * again; if that copy does not fit, the senders wait as before and the
 * release is tried again as acknowledgements free room. Never inside a
 * send call: the progress pass runs it. */
static void px_rail_release(px_rail_vc_t *vc)
{
    px_rail_t *r = vc->rail;
    size_t need = 0;
    int n = 0;
    vc->rel_wait = 0;
    if (vc->failed || vc->on_wire || vc->resend_pending || !px_list_empty(&vc->backlog) ||
        !px_list_empty(&vc->deferred))
        return; /* the last write's callback marks it again */
    for (uint32_t q = vc->tx_acked; q != vc->tx_seq; q++) {
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (x && x->seq == q && px_rail_releasable(x)) {
            if (!x->area)
                need += PX_RAIL_REL_ALIGN(x->len);
            n++;
        }
    }
    if (!n)
        return;
    if (r->ft && need > r->rel_cap - r->rel_used) {
        vc->rel_wait = 1;
        return;
    }
    struct {
        px_net_send_cb_t cb;
        void *arg;
        px_status_t st;
    } told[PX_RAIL_REL_BATCH];
    int k = 0;
    for (uint32_t q = vc->tx_acked; q != vc->tx_seq && k < PX_RAIL_REL_BATCH; q++) {
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (!x || x->seq != q || !px_rail_releasable(x))
            continue;
        if (r->ft) {
            if (!x->area && px_rail_area(r, x) < 0)
                break; /* cannot happen: the room was counted */
            if (r->stage_x == x)
                r->stage_x = NULL;
            px_rail_stage_copy(x, x->len - x->staged);
            x->iov[0].iov_base = x->area;
            x->iov[0].iov_len = x->len;
            x->iovcnt = 1;
        }
        x->told = 1;
        r->released++;
        r->released_bytes += x->len;
        if (x->msg) {
            px_rail_msg_t *m = x->msg;
            if (--m->users == 0) { /* every part told: the caller is done */
                told[k].cb = m->cb;
                told[k].arg = m->arg;
                told[k++].st = m->st;
            }
        } else {
            told[k].cb = x->cb;
            told[k].arg = x->arg;
            told[k++].st = PX_OK;
            x->cb = NULL;
        }
    }
    if (k == PX_RAIL_REL_BATCH)
        px_rail_release_mark(vc);
    /* callers may send again from their callbacks: only after the walk */
    for (int i = 0; i < k; i++)
        told[i].cb(told[i].arg, told[i].st);
}

static void px_rail_release_due(px_rail_t *r)
{
    r->rel_any = 0;
    for (int i = 0; i < r->nhot; i++) {
        px_rail_vc_t *vc = r->hot[i];
        if (vc->rel_due) {
            vc->rel_due = 0;
            px_rail_release(vc);
        }
    }
}

void px_rail_release_step(px_rail_t *r)
{
    if (r->rel_any)
        px_rail_release_due(r);
    else if (r->stage_x)
        px_rail_stage(r);
    else if (r->pre.staged < r->pre.len)
        px_rail_prestage_step(r);
}
