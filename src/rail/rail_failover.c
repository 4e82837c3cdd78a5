/* Failover: records of a failed subchannel go again on the working ones;
 * a stripe is re-split over them by their weights. */
#include "rail_impl.h"

/* Sends stripe record x, whose subchannel failed, again in pieces over the
 * working subchannels by their current weights, so the failed subchannel's
 * share is re-split rather than loaded onto one survivor. Each piece is a
 * record of its own with a new seq that names x (PX_RAIL_H_SPLIT, oseq =
 * x's seq, the number of pieces in the header); x stays in the window with
 * its seq only, which the receiver counts as received once every piece is
 * in. A whole copy of x still on its way is cut off or dropped once a piece
 * has arrived; pieces of an x whose whole copy arrived first are skipped.
 * So every byte is delivered once whichever copies arrive. Returns 0
 * (nothing sent) when x is not worth cutting. */
static int px_rail_resplit(px_rail_vc_t *vc, px_rail_tx_t *x)
{
    px_rail_t *r = vc->rail;
    double share[PX_NET_MAX_SUB];
    size_t bytes[PX_NET_MAX_SUB];
    int order[PX_NET_MAX_SUB], n = 0;
    px_rail_tx_t *piece[PX_NET_MAX_SUB];

    if (!x->msg || (x->hflags & PX_RAIL_H_SPLIT) || r->lossy || x->len < 2 * PX_RAIL_RESPLIT_MIN ||
        px_rail_window_full(vc, PX_NET_MAX_SUB) || px_rail_split(vc, share) < 2)
        return 0;
    size_t unit = px_params.rail_stripe_unit ? px_params.rail_stripe_unit : 1;
    size_t left = x->len;
    int big = -1;
    for (int i = 0; i < vc->npair; i++) {
        size_t b = (size_t)(share[i] * (double)x->len);
        b -= b % unit;
        /* a pair's piece goes on its bulk lane, or another that works */
        int si = vc->nlane > 1 ? px_rail_lane_sub(vc, i, PX_LANE_BULK) : i;
        if (si < 0 || vc->sub[si].state != PX_SUB_UP || vc->sub[i].resting ||
            b < PX_RAIL_RESPLIT_MIN)
            continue; /* too small a share (or a probe's): the others take it */
        bytes[si] = b < left ? b : left;
        left -= bytes[si];
        order[n++] = si;
        if (big < 0 || share[i] > share[big % vc->npair])
            big = si;
    }
    if (n < 2 || vc->split_open + (uint32_t)n > PX_RAIL_SPLIT_MAX)
        return 0;
    bytes[big] += left;
    for (int k = 0; k < n; k++)
        if (!(piece[k] = px_rail_tx_get(vc))) {
            while (--k >= 0)
                px_rail_tx_put(r, piece[k]);
            return 0;
        }
    px_rail_msg_t *m = x->msg;
    size_t off = 0;
    for (int k = 0; k < n; k++) {
        px_rail_tx_t *y = piece[k];
        size_t len = bytes[order[k]];
        y->msg = m;
        y->part = x->part;
        y->rel_ok = x->rel_ok;
        y->bulk = x->bulk; /* x's bytes on the bulk lanes are the pieces' now */
        y->dlv = x->dlv;
        y->dlv_ns = x->dlv_ns;
        m->extra++;
        m->open++;
        m->users += !x->told;
        y->told = x->told;
        if ((y->inbuf = x->told && x->inbuf))
            r->rel_live++; /* a slice of x's copy */
        y->iovcnt = px_iov_slice(x->iov, x->iovcnt, off, len, y->iov, PX_RAIL_IOV);
        y->len = len;
        y->off = x->off + off;
        y->hflags = x->hflags | PX_RAIL_H_SPLIT;
        y->npieces = (uint8_t)n;
        y->uhl = x->uhl;
        memcpy(y->uh, x->uh, x->uhl);
        y->seq = vc->tx_seq++;
        y->oseq = x->seq;
        vc->tx[y->seq & (vc->tx_cap - 1)] = y;
        off += len;
    }
    vc->split_open += (uint32_t)n;
    /* x keeps only its seq and completes with the cumulative
     * acknowledgement; its bytes are the pieces' now */
    if (r->stage_x == x)
        r->stage_x = NULL;
    x->resend = 0;
    x->sub = -1;
    x->len = 0;
    x->iovcnt = 0;
    r->resplits++;
    r->resplit_pieces += (uint64_t)n;
    px_debug("rail", "stripe %u to rank %d again in %d pieces", x->seq, vc->rank, n);
    for (int k = 0; k < n && !vc->failed; k++) {
        if (vc->sub[order[k]].state == PX_SUB_DOWN) { /* it failed meanwhile */
            piece[k]->resend = 1;
            px_rail_resend_mark(vc);
            continue;
        }
        px_rail_xmit(vc, piece[k], order[k]);
    }
    return 1;
}

/* Sends again, on working subchannels, every record whose subchannel failed. */
void px_rail_resend(px_rail_vc_t *vc)
{
    if (vc->failed)
        return;
    int any = 0;
    for (int i = 0; i < vc->nsub; i++)
        any |= vc->sub[i].state != PX_SUB_DOWN;
    if (!any)
        return; /* kept until a subchannel comes back */
    vc->resend_pending = 0;
    for (uint32_t q = vc->tx_acked; q != vc->tx_seq; q++) {
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (!x || x->seq != q || !x->resend || x->wire || x->acked)
            continue;
        int from = x->sub;
        size_t len = x->len;
        int si = -1;
        if (x->msg) {
            x->msg->resent = 1;
            si = px_rail_resplit(vc, x) ? -2 : px_rail_best(vc, PX_SUB_UP);
        } else {
            si = px_rail_pick(vc, 0, x->len);
        }
        if (si == -1)
            si = px_rail_best(vc, PX_SUB_SUSPECT);
        if (si == -1) {
            px_rail_resend_mark(vc);
            return;
        }
        if (from >= 0) {
            vc->sub[from].st->resent_frames++;
            vc->sub[from].st->resent_bytes += len;
        }
        if (si == -2) { /* sent in pieces */
            if (vc->failed)
                return;
            continue;
        }
        px_debug("rail", "frame %u (%zu bytes) to rank %d again, now on %s", x->seq, x->len,
                 vc->rank, vc->sub[si].info.label);
        px_rail_xmit(vc, x, si);
        if (vc->failed)
            return;
    }
    if (!px_list_empty(&vc->backlog))
        px_rail_backlog_flush(vc);
    if (!px_list_empty(&vc->deferred))
        px_rail_deferred_flush(vc);
}
