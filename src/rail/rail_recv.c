/* Receiving: duplicates dropped, ordered frames handed up in order
 * whatever subchannel carried them (early ones held), stripes handed up at
 * their offset as they arrive, pieces of a re-split stripe counted. */
#include "rail_impl.h"

/* Hands up every held ordered frame whose turn has come. */
static void px_rail_flush_held(px_rail_vc_t *vc)
{
    const px_rail_rx_ops_t *up = vc->rail->up;
    while (vc->held && vc->held->oseq == vc->rx_onext) {
        px_rail_held_t *h = vc->held;
        void *ctx = NULL;
        vc->held = h->next;
        vc->rx_onext++;
        void *dst = up->rx_begin(vc->owner, h->hdr, h->hdr_len, 0, h->len, &ctx);
        if (dst && h->len)
            memcpy(dst, h->data, h->len);
        up->rx_done(vc->owner, ctx, h->len);
        free(h);
    }
}

void px_rail_orphan_keep(px_rail_vc_t *vc, uint32_t seq, void *dst, void *ctx)
{
    px_rail_orphan_t *o = NULL;
    for (int i = 0; i < PX_NET_MAX_SUB; i++)
        if (vc->orphan[i].used && vc->orphan[i].seq == seq)
            o = &vc->orphan[i];
    for (int i = 0; i < PX_NET_MAX_SUB && !o; i++)
        if (!vc->orphan[i].used) {
            o = &vc->orphan[i];
            vc->norphan++;
        }
    if (!o) { /* one per subchannel at most: a frame cut on each */
        px_error("rail", "frame %u from rank %d cut with no room to keep its destination", seq,
                 vc->rank);
        return;
    }
    *o = (px_rail_orphan_t){.seq = seq, .used = 1, .dst = dst, .ctx = ctx};
}

/* Frame seq has arrived whole. */
static void px_rail_rx_mark(px_rail_vc_t *vc, uint32_t seq)
{
    vc->rx_bits[(seq % PX_RAIL_WIN) / 64] |= 1ull << (seq % 64);
    if ((int32_t)(seq + 1 - vc->rx_top) > 0)
        vc->rx_top = seq + 1;
    while (vc->rx_bits[(vc->rx_next % PX_RAIL_WIN) / 64] & (1ull << (vc->rx_next % 64))) {
        vc->rx_bits[(vc->rx_next % PX_RAIL_WIN) / 64] &= ~(1ull << (vc->rx_next % 64));
        vc->rx_next++;
    }
    vc->rx_unacked++;
}

static px_rail_rx_split_t *px_rail_split_find(px_rail_vc_t *vc, uint32_t orig)
{
    for (int i = 0; i < PX_RAIL_SPLIT_MAX; i++)
        if (vc->rx_split[i].used && vc->rx_split[i].orig == orig)
            return &vc->rx_split[i];
    return NULL;
}

/* A piece of stripe h->oseq, sent again after a failure, arrives on s.
 * Returns 1 when it is not delivered: the stripe's whole copy arrived first
 * (the piece is skipped, its own seq still counts as received), or the
 * piece is malformed. Otherwise a whole copy still arriving elsewhere is cut
 * off and the piece is delivered at its offset. */
static int px_rail_rx_piece(px_rail_vc_t *vc, px_rail_sub_t *s, const px_rail_hdr_t *h)
{
    px_rail_t *r = vc->rail;
    uint32_t orig = h->oseq;
    int total = h->sub >> 8;
    if (!(h->flags & PX_RAIL_H_UNORD) || (int32_t)(h->seq - orig) <= 0 ||
        h->seq - orig >= PX_RAIL_WIN || total < 2 || total > PX_NET_MAX_SUB) {
        px_warn("rail", "malformed piece %u of stripe %u from rank %d dropped", h->seq, orig,
                vc->rank);
        return 1;
    }
    px_rail_rx_split_t *e = px_rail_split_find(vc, orig);
    if (!e) {
        if (px_rail_rx_has(vc, orig)) {
            r->rx_split_skipped++;
            s->rx_state = PX_RX_SKIP;
            s->rx_seq = h->seq;
            s->rx_len = 0;
            s->rx_sack = h->flags & (PX_RAIL_H_SACK | PX_RAIL_H_TIMED);
            s->rx_t0 = r->now;
            return 1;
        }
        for (int i = 0; i < PX_RAIL_SPLIT_MAX && !e; i++)
            if (!vc->rx_split[i].used)
                e = &vc->rx_split[i];
        if (!e) { /* the sender keeps fewer open: a broken peer */
            px_warn("rail", "too many stripes in pieces from rank %d; piece %u dropped", vc->rank,
                    h->seq);
            return 1;
        }
        *e = (px_rail_rx_split_t){.orig = orig, .used = 1, .total = (uint8_t)total};
        vc->nsplit++;
        for (int i = 0; i < vc->nsub; i++) {
            px_rail_sub_t *o = &vc->sub[i];
            if (o != s && o->rx_state != PX_RX_DROP && o->rx_seq == orig && !o->rx_piece) {
                r->ops->ep_rx_cancel(o->ep);
                o->rx_state = PX_RX_DROP;
            }
        }
    }
    return 0;
}

/* A piece has arrived whole: with the last one the stripe itself has. */
static void px_rail_rx_piece_done(px_rail_vc_t *vc, uint32_t orig)
{
    px_rail_rx_split_t *e = px_rail_split_find(vc, orig);
    if (e && ++e->got >= e->total) {
        e->used = 0;
        vc->nsplit--;
        px_rail_rx_mark(vc, orig);
    }
}

void *px_rail_rx_begin(void *owner, const void *hdr, size_t hdr_len, size_t payload_len,
                       void **ctx_p)
{
    px_rail_sub_t *s = owner;
    px_rail_vc_t *vc = s->vc;
    px_rail_t *r = vc->rail;
    px_rail_hdr_t h;
    (void)ctx_p;

    s->rx_state = PX_RX_DROP;
    if (hdr_len < sizeof(h)) {
        px_error("rail", "short frame header (%zu bytes) from rank %d", hdr_len, vc->rank);
        return NULL;
    }
    memcpy(&h, hdr, sizeof(h));
    uint64_t downs = s->st->downs;
    vc->last_rx = r->now;
    px_rail_heat(vc);
    if (s->state == PX_SUB_DOWN && r->ft) {
        /* a frame on a connection made since the reset: the path works
         * again. Where a frame sent before the fault may still come after
         * it (datagrams, libfabric), only the answer to a probe says so; a
         * frame has the next probe go at once. */
        if ((r->attr.caps & PX_NET_CAP_FENCE) || h.type == PX_RAIL_PONG) {
            px_rail_sub_up(s);
        } else if (!s->probe_soon) {
            s->probe_soon = 1;
            s->next_probe = r->now;
        }
    }
    /* the cumulative part first: it usually covers a stripe acknowledged
     * selectively too, which is then timed by the sender's clock alone (the
     * receiver's header-to-last-byte time says little about a small stripe
     * it read in one go) */
    px_rail_ack_in(vc, h.ack);
    if (__builtin_expect(s->st->downs != downs, 0))
        return NULL; /* a completion sent on s, which failed: this frame goes again */
    switch (h.type) {
    case PX_RAIL_DATA:
        break;
    case PX_RAIL_ACK:
        s->st->acks_rx++;
        if (h.flags & PX_RAIL_H_BITMAP) {
            /* the first word in the header, the others after it */
            uint64_t w[PX_RAIL_SACK_WORDS];
            size_t more = hdr_len - sizeof(h);
            if (more % 8 || more / 8 >= PX_RAIL_SACK_WORDS) {
                px_warn("rail", "dropping an acknowledgement of %zu bytes from rank %d", hdr_len,
                        vc->rank);
                return NULL;
            }
            w[0] = h.off;
            memcpy(w + 1, (const char *)hdr + sizeof(h), more);
            px_rail_bitmap_in(vc, h.ack, w, 1 + (int)(more / 8));
            if (h.flags & PX_RAIL_H_DUP)
                px_rail_dup_in(vc, h.seq);
        }
        if (h.flags & PX_RAIL_H_SACK) {
            px_rail_tx_t *x = vc->tx[h.seq & (vc->tx_cap - 1)];
            if (x && x->seq == h.seq)
                px_rail_tx_acked(vc, x, px_time_ns(), h.off);
            /* over datagrams its bytes left the window, as with a bitmap */
            if (!px_list_empty(&vc->backlog))
                px_rail_backlog_flush(vc);
            if (!px_list_empty(&vc->deferred))
                px_rail_deferred_flush(vc);
        }
        return NULL;
    case PX_RAIL_PING:
        px_rail_send_ctl(vc, s->idx, PX_RAIL_PONG, 0, 0, 0);
        return NULL;
    case PX_RAIL_PONG:
        /* the peer answers: what another subchannel still owes is late
         * on that path, not because the peer is busy */
        if (!r->lossy) {
            s->pong_ns = px_time_ns();
            if (!s->unacked)
                vc->last_ack_rx = s->pong_ns;
            /* a round-trip sample of an idle connection, when no other
             * ping went after the heartbeat (its answer could be this one) */
            if (s->hb_ns && s->asked_ns < s->hb_ns)
                px_rail_sub_rtt(s, (double)px_since(s->pong_ns, s->hb_ns));
        }
        s->hb_ns = 0;
        px_rail_sub_alive(s);
        return NULL;
    case PX_RAIL_DONE:
        if ((int32_t)(h.seq - vc->peer_epoch) > 0)
            vc->peer_epoch = h.seq;
        return NULL;
    case PX_RAIL_SUBDOWN:
        /* not when it has just come back: the notice may predate that */
        if (r->ft && h.seq < (uint32_t)vc->nsub && vc->sub[h.seq].state != PX_SUB_DOWN &&
            px_since(r->now, vc->sub[h.seq].up_since) > (uint64_t)(2e9 * px_params.rail_detect)) {
            px_rail_sub_t *d = &vc->sub[h.seq];
            px_info("rail", "rank %d reports subchannel %s dead", vc->rank, d->info.label);
            px_rail_sub_down(d, PX_ERR_LINK_DOWN);
        }
        return NULL;
    default:
        px_warn("rail", "dropping frame of unknown type %u from rank %d", h.type, vc->rank);
        return NULL;
    }
    uint32_t d = h.seq - vc->rx_next;
    if ((int32_t)d >= PX_RAIL_WIN) {
        r->rx_out_of_window++;
        px_debug("rail", "dropping frame seq %u from rank %d, expected %u..%u", h.seq, vc->rank,
                 vc->rx_next, vc->rx_next + PX_RAIL_WIN - 1);
        return NULL;
    }
    if (px_rail_rx_has(vc, h.seq)) {
        r->rx_dup++;
        /* a copy sent again after a failure: the first one made it, so our
         * acknowledgement may not have */
        px_debug("rail", "duplicate frame %u from rank %d dropped", h.seq, vc->rank);
        if (r->lossy && !(h.flags & PX_RAIL_H_SACK))
            px_rail_send_dup_ack(vc, h.seq, s->idx);
        else
            px_rail_send_ack(vc, (h.flags & PX_RAIL_H_SACK) != 0, h.seq, 0, s->idx);
        return NULL;
    }
    s->rx_piece = 0;
    if (__builtin_expect(vc->nsplit, 0) && !(h.flags & PX_RAIL_H_SPLIT) &&
        px_rail_split_find(vc, h.seq)) {
        /* a late whole copy of a stripe that is arriving in pieces */
        r->rx_dup++;
        return NULL;
    }
    if (__builtin_expect(h.flags & PX_RAIL_H_SPLIT, 0)) {
        if (px_rail_rx_piece(vc, s, &h))
            return NULL;
        s->rx_piece = 1;
        s->rx_porig = h.oseq;
    }
    const char *uh = (const char *)hdr + sizeof(h);
    size_t uhl = hdr_len - sizeof(h);
    s->st->frames_rx++;
    s->st->bytes_rx += payload_len;
    s->rx_seq = h.seq;
    s->rx_len = payload_len;
    s->rx_sack = h.flags & (PX_RAIL_H_SACK | PX_RAIL_H_TIMED);
    if (s->rx_sack)
        s->rx_t0 = r->now;
    s->rx_ordered = !(h.flags & PX_RAIL_H_UNORD);
    s->rx_again = (h.flags & PX_RAIL_H_AGAIN) != 0;
    s->rx_ctx = NULL;
    s->rx_dst = NULL;
    if (__builtin_expect(r->ft, 1)) {
        /* the same frame still arriving on another subchannel (it was sent
         * again when that one looked dead): this copy takes over */
        for (int i = 0; i < vc->nsub; i++) {
            px_rail_sub_t *o = &vc->sub[i];
            if (o == s || o->rx_state == PX_RX_DROP || o->rx_seq != h.seq)
                continue;
            if (o->rx_again && !(h.flags & PX_RAIL_H_AGAIN)) {
                /* the first copy, late (on a path that failed after it
                 * left): the one sent again stays */
                r->rx_dup++;
                return NULL;
            }
            r->ops->ep_rx_cancel(o->ep);
            s->rx_state = o->rx_state;
            s->rx_ctx = o->rx_ctx;
            s->rx_dst = o->rx_dst;
            s->rx_held = o->rx_held;
            o->rx_held = NULL;
            o->rx_state = PX_RX_DROP;
            if (s->rx_state == PX_RX_HOLD)
                return s->rx_held->data;
            if (s->rx_ordered)
                return s->rx_dst;
            s->rx_state = PX_RX_DROP;
        }
        if (vc->norphan && s->rx_ordered)
            for (int i = 0; i < PX_NET_MAX_SUB; i++)
                if (vc->orphan[i].used && vc->orphan[i].seq == h.seq) {
                    vc->orphan[i].used = 0;
                    vc->norphan--;
                    s->rx_state = PX_RX_DELIVER;
                    s->rx_ctx = vc->orphan[i].ctx;
                    s->rx_dst = vc->orphan[i].dst;
                    return s->rx_dst;
                }
    }
    if (s->rx_ordered && h.oseq != vc->rx_onext) {
        if ((int32_t)(h.oseq - vc->rx_onext) < 0 || uhl > PX_NET_HDR_MAX) {
            px_warn("rail", "stale ordered frame %u from rank %d dropped", h.oseq, vc->rank);
            return NULL;
        }
        /* early: keep it until the frames before it have been handed up */
        px_rail_held_t *hd = malloc(sizeof(*hd) + payload_len);
        if (!hd) {
            px_error("rail", "out of memory holding a frame from rank %d", vc->rank);
            return NULL;
        }
        hd->oseq = h.oseq;
        hd->hdr_len = uhl;
        hd->len = payload_len;
        memcpy(hd->hdr, uh, uhl);
        s->rx_held = hd;
        s->rx_state = PX_RX_HOLD;
        return hd->data;
    }
    if (s->rx_ordered)
        vc->rx_onext++;
    s->rx_state = PX_RX_DELIVER;
    s->rx_dst = r->up->rx_begin(vc->owner, uh, uhl, h.off, payload_len, &s->rx_ctx);
    if (__builtin_expect(s->rx_state != PX_RX_DELIVER, 0)) {
        /* s failed while the layer above took the header (an answer it
         * sent there could not be written): the copy sent again goes where
         * this one was to go, which s's abandon could not know yet */
        if (s->rx_ordered)
            px_rail_orphan_keep(vc, h.seq, s->rx_dst, s->rx_ctx);
        return NULL;
    }
    return s->rx_dst;
}

void px_rail_rx_done(void *owner, void *ctx)
{
    px_rail_sub_t *s = owner;
    px_rail_vc_t *vc = s->vc;
    (void)ctx;

    /* no longer arriving before the layer above runs: what it sends from
     * its completion may fail s, which must not take the frame for cut */
    int state = s->rx_state;
    s->rx_state = PX_RX_DROP;
    switch (state) {
    case PX_RX_DROP:
        return;
    case PX_RX_HOLD: {
        px_rail_held_t *hd = s->rx_held, **pp = &vc->held;
        s->rx_held = NULL;
        while (*pp && (int32_t)((*pp)->oseq - hd->oseq) < 0)
            pp = &(*pp)->next;
        hd->next = *pp;
        *pp = hd;
        break;
    }
    case PX_RX_SKIP:
        break;
    default:
        vc->rail->up->rx_done(vc->owner, s->rx_ctx, s->rx_len);
        break;
    }
    px_rail_rx_mark(vc, s->rx_seq);
    if (__builtin_expect(s->rx_piece, 0)) {
        s->rx_piece = 0;
        px_rail_rx_piece_done(vc, s->rx_porig);
    }
    if (vc->rail->lossy && (int32_t)(s->rx_seq - vc->rx_next) > 0 && !vc->gap_ack) {
        /* a frame before this one is missing: say so in this pass */
        px_rail_t *r = vc->rail;
        vc->gap_ack = 1;
        if (!vc->ack_due) {
            vc->ack_due = 1;
            r->due[r->ndue++] = vc;
        }
    }
    if (s->rx_sack & PX_RAIL_H_TIMED) { /* at once: it times the stripe */
        px_rail_send_ack(vc, 1, s->rx_seq, px_time_ns() - s->rx_t0, s->idx);
    } else if (s->rx_sack) {
        /* the sender waits for it: one acknowledgement for everything that
         * arrives in this progress pass */
        px_rail_t *r = vc->rail;
        if (vc->nsack_due < 8)
            vc->sack_due[vc->nsack_due++] = s->rx_seq;
        else
            px_rail_send_ack(vc, 1, s->rx_seq, 0, s->idx);
        if (!vc->ack_due) {
            vc->ack_due = 1;
            r->due[r->ndue++] = vc;
        }
    }
    if (vc->held)
        px_rail_flush_held(vc);
    if (vc->rx_unacked >= (uint32_t)px_params.rail_ack_every)
        px_rail_send_ack(vc, 0, 0, 0, s->idx);
}
