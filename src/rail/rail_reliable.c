/* Reliability: every frame carries a sequence number and the cumulative
 * acknowledgement of the other direction; frames the sender waits for are
 * acknowledged selectively as well. Over lossy transports the rail layer
 * also retransmits (bitmap acknowledgements, timeouts from the measured
 * round trip) and keeps a congestion window. */
#include "rail_impl.h"

#include <math.h>

/* Which of the frames after rx_next have arrived (lossy transports): bit k
 * of w[k / 64] for frame rx_next + 1 + k, in as many words as reach the
 * highest one (at least one, at most PX_RAIL_SACK_WORDS); their number. */
int px_rail_rx_bitmap(px_rail_vc_t *vc, uint64_t w[PX_RAIL_SACK_WORDS])
{
    uint32_t span = vc->rx_top - vc->rx_next; /* frames from rx_next to the highest */
    int n = span > 1 ? (int)((span - 2) / 64 + 1) : 1;
    if (n > (int)PX_RAIL_SACK_WORDS)
        n = (int)PX_RAIL_SACK_WORDS;
    /* rx_bits is a ring over seq % PX_RAIL_WIN holding exactly the arrivals
     * in [rx_next, rx_next + PX_RAIL_WIN): 64 bits from any position */
    for (int i = 0; i < n; i++) {
        uint32_t p = (vc->rx_next + 1 + 64 * (uint32_t)i) % PX_RAIL_WIN;
        uint32_t at = p / 64, sh = p % 64;
        uint64_t v = vc->rx_bits[at] >> sh;
        if (sh)
            v |= vc->rx_bits[(at + 1) % (PX_RAIL_WIN / 64)] << (64 - sh);
        w[i] = v;
    }
    return n;
}

static void px_rail_send_ack_flags(px_rail_vc_t *vc, int sack, uint32_t seq, uint64_t dur_ns,
                                   int pref, uint8_t dup);

void px_rail_send_ack(px_rail_vc_t *vc, int sack, uint32_t seq, uint64_t dur_ns, int pref)
{
    px_rail_send_ack_flags(vc, sack, seq, dur_ns, pref, 0);
}

void px_rail_send_dup_ack(px_rail_vc_t *vc, uint32_t seq, int pref)
{
    px_rail_send_ack_flags(vc, 0, seq, 0, pref, PX_RAIL_H_DUP);
}

static void px_rail_send_ack_flags(px_rail_vc_t *vc, int sack, uint32_t seq, uint64_t dur_ns,
                                   int pref, uint8_t dup)
{
    /* the working subchannel with the least queued, so the ack is not stuck
     * behind data; on a tie the one the frame came on, or with class lanes
     * its pair's small-message lane */
    int best = -1;
    if (vc->nlane > 1 && !px_lane_plan.distribute && pref >= 0)
        pref = px_lane_plan.first[PX_LANE_SMALL] * vc->npair + pref % vc->npair;
    size_t least = (size_t)-1;
    for (int i = 0; i < vc->nsub; i++) {
        if (vc->sub[i].state != PX_SUB_UP && vc->nsub > 1)
            continue;
        size_t q = vc->rail->ops->ep_pending(vc->sub[i].ep);
        if (q < least || (q == least && i == pref)) {
            least = q;
            best = i;
        }
    }
    if (best < 0)
        best = px_rail_best(vc, PX_SUB_SUSPECT);
    if (best < 0)
        return; /* nothing works: the cumulative ack goes with the next frame */
    if (!sack && vc->rail->lossy) {
        uint64_t w[PX_RAIL_SACK_WORDS];
        int n = px_rail_rx_bitmap(vc, w);
        vc->gap_ack = 0;
        px_rail_send_ctlx(vc, best, PX_RAIL_ACK, PX_RAIL_H_BITMAP | dup, dup ? seq : 0, w[0], w + 1,
                          (size_t)(n - 1) * sizeof(w[0]));
        return;
    }
    px_rail_send_ctl(vc, best, PX_RAIL_ACK, sack ? PX_RAIL_H_SACK : 0, seq, dur_ns);
}

/* The acknowledgements asked for during this progress pass: a cumulative one,
 * and selective ones for what it does not cover. */
void px_rail_acks_due(px_rail_t *r)
{
    for (int i = 0; i < r->ndue; i++) {
        px_rail_vc_t *vc = r->due[i];
        vc->ack_due = 0;
        if (vc->failed) {
            vc->nsack_due = 0;
            continue;
        }
        int covered = 1;
        for (int k = 0; k < vc->nsack_due; k++)
            covered &= (int32_t)(vc->sack_due[k] - vc->rx_next) < 0;
        if (vc->gap_ack || (covered && vc->rail->lossy)) {
            px_rail_send_ack(vc, 0, 0, 0, -1); /* the bitmap covers the selective ones */
        } else if (covered) {
            px_rail_send_ack(vc, 0, 0, 0, -1);
        } else {
            for (int k = 0; k < vc->nsack_due; k++)
                px_rail_send_ack(vc, 1, vc->sack_due[k], 0, -1);
        }
        vc->nsack_due = 0;
    }
    r->ndue = 0;
}

/* Lossy transports: every PX_RAIL_LOSS_SAMPLE frames, the share that had to
 * be sent again decides the rendezvous frame size (with hysteresis: a
 * frame of six datagrams is lost six times as often as one of one). */
void px_rail_loss_look(px_rail_vc_t *vc)
{
    double lost = (double)vc->fr_retx / vc->fr_sent;
    if (!vc->small_frames && lost > PX_RAIL_LOSS_HIGH) {
        vc->small_frames = 1;
        vc->rail->small_frame_periods++;
        px_debug("rail",
                 "rank %d: %.1f%% of frames sent again: rendezvous data in "
                 "one-datagram frames",
                 vc->rank, 100 * lost);
    } else if (vc->small_frames && lost < PX_RAIL_LOSS_LOW) {
        vc->small_frames = 0;
        px_debug("rail", "rank %d: %.1f%% of frames sent again: back to full frames", vc->rank,
                 100 * lost);
    }
    vc->fr_sent = vc->fr_retx = 0;
}

/* A round-trip sample of s (ns): the smoothed time and its deviation, as
 * TCP keeps them, and the deepest queue seen lately (a frame behind a full
 * queue is late, not lost, and sending it again only deepens it). */
void px_rail_sub_rtt(px_rail_sub_t *s, double rtt)
{
    if (s->srtt == 0) {
        s->srtt = rtt;
        s->rttvar = rtt / 2;
    } else {
        s->rttvar = 0.75 * s->rttvar + 0.25 * fabs(s->srtt - rtt);
        s->srtt = 0.875 * s->srtt + 0.125 * rtt;
    }
    if (rtt > s->rtt_max)
        s->rtt_max = rtt;
    else
        s->rtt_max -= (s->rtt_max - s->srtt) / 256;
}

/* Class lanes: the rendezvous bytes of x left the bulk lanes. The rate they
 * deliver at is sampled as BBR does: the bytes acknowledged there since x
 * was sent over the time since the last acknowledgement before it (or its
 * sending, when nothing else was out). Bytes and times are averaged apart,
 * so that a burst of acknowledgements after a pause (a short time) weighs
 * little. A frame sent twice is no sample. */
static void px_rail_bulk_lane_acked(px_rail_vc_t *vc, px_rail_tx_t *x, uint64_t now)
{
    vc->bulk_out -= x->len;
    vc->bulk_dlv += x->len;
    if (now > vc->bulk_dlv_ns)
        vc->bulk_dlv_ns = now;
    uint64_t dt = px_since(now, x->dlv_ns);
    if (x->again || x->resend || (x->hflags & PX_RAIL_H_SPLIT) || !dt)
        return;
    double b = (double)(vc->bulk_dlv - x->dlv);
    if (vc->bulk_ew_ns == 0) {
        vc->bulk_ew_bytes = b;
        vc->bulk_ew_ns = (double)dt;
    } else {
        vc->bulk_ew_bytes = 0.75 * vc->bulk_ew_bytes + 0.25 * b;
        vc->bulk_ew_ns = 0.75 * vc->bulk_ew_ns + 0.25 * (double)dt;
    }
}

/* The peer has all of record x (rx_ns: its header-to-last-byte time, or 0). */
void px_rail_tx_acked(px_rail_vc_t *vc, px_rail_tx_t *x, uint64_t now, uint64_t rx_ns)
{
    vc->tx[x->seq & (vc->tx_cap - 1)] = NULL;
    x->acked = 1;
    if (x->hflags & PX_RAIL_H_SPLIT)
        vc->split_open--;
    vc->last_ack_rx = vc->frame_ack_ns = now;
    if (!x->resend && x->sub >= 0) {
        px_rail_sub_t *sub = &vc->sub[x->sub];
        if (sub->unacked)
            sub->unacked--;
        sub->busy_since = sub->acked_ns = now;
        /* a round-trip sample: frames acknowledged at once, and on lossy
         * transports every frame; never one sent twice (Karn) */
        if (vc->rail->lossy && (int32_t)(x->order - sub->acked_order) > 0)
            sub->acked_order = x->order;
        if (!x->again && ((x->hflags & PX_RAIL_H_SACK) || vc->rail->lossy))
            px_rail_sub_rtt(sub, (double)px_since(now, x->t_sent));
        px_rail_sub_alive(sub);
    }
    if (x->bulk)
        px_rail_bulk_lane_acked(vc, x, now);
    if (vc->rail->lossy) {
        px_rail_t *r = vc->rail;
        vc->inflight -= x->len;
        if (vc->cwnd < px_params.rail_cwnd_max) /* additive increase: a frame per window */
            vc->cwnd += r->frame_max * (x->len + 64) / vc->cwnd + 1;
    }
    px_rail_msg_t *m = x->msg;
    if (m) {
        vc->stripe_inflight -= x->len;
        /* timed per address pair: its lanes share one link */
        px_rail_sub_t *sub = px_rail_rep(vc, m->part[x->part].sub);
        if (x->resend || x->sub != m->part[x->part].sub) {
            m->resent = 1;
        } else {
            uint64_t start = x->t_sent > sub->last_ack_ns ? x->t_sent : sub->last_ack_ns;
            /* the sender's view; the receiver's (rx_ns, header to last byte)
             * is no measure of a stripe it read in one go */
            uint64_t t = px_since(now, start);
            (void)rx_ns;
            m->part[x->part].t_ns = t;
            sub->last_ack_ns = now;
            if (!sub->warm) {
                /* the first stripe also paid for the connection: not a sample */
            } else if (sub->ew_ns == 0) {
                sub->ew_bytes = (double)x->len;
                sub->ew_ns = (double)t;
            } else {
                sub->ew_bytes = 0.9 * sub->ew_bytes + 0.1 * (double)x->len;
                sub->ew_ns = 0.9 * sub->ew_ns + 0.1 * (double)t;
            }
            vc->sub[m->part[x->part].sub].st->stripe_ns += t;
        }
        if (++m->nacked == m->nparts + m->extra) {
            px_rail_learn(vc, m);
            for (int i = 0; i < vc->nsub; i++)
                vc->sub[i].st->weight = px_rail_vc_weight(vc, i);
            for (int k = 0; k < m->nparts; k++)
                px_rail_rep(vc, m->part[k].sub)->warm = 1;
        }
    }
    if (vc->rel_wait)
        px_rail_release_mark(vc);
    if (!x->wire)
        px_rail_tx_finish(x);
}

void px_rail_ack_in(px_rail_vc_t *vc, uint32_t ack)
{
    /* cumulative: only ever moves forward, never past what was sent */
    if ((int32_t)(ack - vc->tx_acked) <= 0 || (int32_t)(ack - vc->tx_seq) > 0)
        return;
    /* frames that are timed (stripes, round-trip samples) get a fresh
     * clock; the others make do with the progress pass's */
    uint64_t fresh = 0;
    int lossy = vc->rail->lossy;
    for (uint32_t s = vc->tx_acked; s != ack; s++) {
        px_rail_tx_t *x = vc->tx[s & (vc->tx_cap - 1)];
        if (x && x->seq == s) {
            if (!(x->hflags & PX_RAIL_H_SACK) && !lossy) {
                px_rail_tx_acked(vc, x, vc->rail->now, 0);
                continue;
            }
            if (!fresh)
                fresh = px_time_ns();
            px_rail_tx_acked(vc, x, fresh, 0);
        }
    }
    vc->tx_acked = ack;
    if (!px_list_empty(&vc->backlog))
        px_rail_backlog_flush(vc);
    if (!px_list_empty(&vc->deferred))
        px_rail_deferred_flush(vc);
}

/* Lossy transports: the retransmission timeout of subchannel s. */
uint64_t px_rail_rto(px_rail_t *r, const px_rail_sub_t *s)
{
    uint64_t rto = s->srtt > 0 ? (uint64_t)(s->srtt + 4 * s->rttvar) : 3 * r->rto_min;
    uint64_t deep = (uint64_t)(1.25 * s->rtt_max);
    if (rto < deep)
        rto = deep;
    return rto < r->rto_min ? r->rto_min : rto;
}

/* Sends record x again (lost, or its acknowledgement was): on its own
 * subchannel while that works, else on the best other. */
/* Sends x again: on the subchannel it went on if that is up, else (or
 * when `elsewhere`, and another is up: its path may have died) on
 * another. */
static void px_rail_retransmit(px_rail_vc_t *vc, px_rail_tx_t *x, int elsewhere)
{
    int si = x->sub;
    vc->fr_retx++;
    if (elsewhere && si >= 0) {
        int o = -1;
        for (int i = 0; i < vc->nsub; i++)
            if (i != si && vc->sub[i].state == PX_SUB_UP &&
                (o < 0 || vc->sub[i].weight > vc->sub[o].weight))
                o = i;
        if (o >= 0)
            si = o;
    }
    if (si < 0 || vc->sub[si].state != PX_SUB_UP) {
        si = px_rail_pick(vc, x->msg ? PX_RAIL_F_STRIPE : 0, x->len);
        if (si < 0)
            return; /* nothing works: the partition logic takes over */
    }
    if (x->sub >= 0 && vc->sub[x->sub].unacked)
        vc->sub[x->sub].unacked--;
    px_rail_xmit(vc, x, si);
}

/* Lossy transports: a loss takes the congestion window down by 30% (as
 * Linux's CUBIC does; halving it, as Reno does, left the link idle after
 * each random loss), once per `gap` (a round trip: the losses of one
 * window are one event). */
static void px_rail_cwnd_cut(px_rail_vc_t *vc, uint64_t now, uint64_t gap)
{
    px_rail_t *r = vc->rail;
    if (px_since(now, vc->last_cut) <= gap)
        return;
    vc->last_cut = now;
    vc->cwnd = vc->cwnd / 10 * 7;
    if (vc->cwnd < 4 * r->frame_max)
        vc->cwnd = 4 * r->frame_max;
}

/* Lossy transports: frames unacknowledged past their timeout go again, on
 * another subchannel when one is up (a path that went silent then costs one
 * timeout, not a detection), with the timeout doubled per try; a timeout
 * halves the congestion window. Only frames the acknowledgement bitmap can
 * speak of (the cumulative point and as far after it as the peer's bitmaps
 * reach): one further on may have arrived long ago and wait for a hole
 * below to be filled; it is looked at once the bitmaps reach it. */
void px_rail_retransmit_due(px_rail_vc_t *vc, uint64_t now)
{
    px_rail_t *r = vc->rail;
    int cut = 0;
    size_t cwnd = vc->cwnd;
    uint32_t span = vc->sack_span > 64 ? vc->sack_span : 64;
    uint32_t end = vc->tx_seq - vc->tx_acked > span ? vc->tx_acked + span + 1 : vc->tx_seq;
    for (uint32_t q = vc->tx_acked; q != end && !vc->failed; q++) {
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (!x || x->seq != q || x->acked || x->wire || x->resend || x->sub < 0)
            continue;
        const px_rail_sub_t *s = &vc->sub[x->sub];
        uint64_t rto = px_rail_rto(r, s) << (x->tries < 6 ? x->tries : 6);
        if (rto > 1000000000ull)
            rto = 1000000000ull;
        /* timed from the later of its sending and the subchannel's last
         * acknowledgement, as TCP restarts its timer on each: while the
         * peer acknowledges what went before it, x is queued, not lost (a
         * loss among frames that keep arriving shows in the bitmap) */
        uint64_t from = x->t_sent > s->busy_since ? x->t_sent : s->busy_since;
        if (px_since(now, from) < rto)
            continue;
        if (x->tries < 255)
            x->tries++;
        r->retx_timeout++;
        cut = 1;
        if (x->tries == 1) {
            /* remembered until the peer says it had the first copy */
            unsigned k = vc->rto_next++ % (sizeof(vc->rto_log) / sizeof(vc->rto_log[0]));
            vc->rto_log[k].seq = x->seq;
            vc->rto_log[k].used = 1;
            vc->rto_log[k].cwnd = cwnd;
            vc->rto_log[k].sub = x->sub;
            vc->rto_log[k].t_first = x->t_sent;
            vc->rto_log[k].rto = rto;
        }
        px_debug("rail",
                 "frame %u (%zu bytes) to rank %d: no acknowledgement after %.1f ms, "
                 "sending it again (try %d)",
                 x->seq, x->len, vc->rank, (double)rto / 1e6, x->tries);
        px_rail_retransmit(vc, x, 1);
    }
    if (cut)
        px_rail_cwnd_cut(vc, now, r->rto_min);
}

/* An acknowledgement with a bitmap: the frames it marks have arrived. Every
 * frame it shows missing goes again at once if a frame sent after it on the
 * same subchannel has arrived (a path keeps order: it is lost, not slower
 * than frames on other rails; and a frame sent again is not sent a third
 * time until a later one arrives). Losses are repaired from the bitmap, not
 * one per timeout, whatever their number in the window. */
void px_rail_bitmap_in(px_rail_vc_t *vc, uint32_t ack, const uint64_t *w, int nw)
{
    uint64_t now = px_time_ns();
    uint32_t top = 0; /* bits below this one were looked at */
    vc->sack_span = 64 * (uint32_t)nw;
    for (int i = 0; i < nw; i++)
        for (uint64_t b = w[i]; b; b &= b - 1) {
            uint32_t k = 64 * (uint32_t)i + (uint32_t)__builtin_ctzll(b);
            uint32_t q = ack + 1 + k;
            if ((int32_t)(q - vc->tx_seq) >= 0)
                goto seen;
            top = k + 1;
            px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
            if (x && x->seq == q && !x->acked)
                px_rail_tx_acked(vc, x, now, 0);
        }
seen:
    if (!top)
        return;
    for (uint32_t k = 0; k <= top; k++) {
        uint32_t q = ack + k; /* k = 0: the cumulative point, missing by definition */
        if (k && (w[(k - 1) / 64] >> ((k - 1) % 64) & 1))
            continue;
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (!x || x->seq != q || x->acked || x->wire || x->resend || x->sub < 0)
            continue;
        const px_rail_sub_t *s = &vc->sub[x->sub];
        if ((int32_t)(s->acked_order - x->order) > 0) {
            vc->rail->retx_fast++;
            px_rail_retransmit(vc, x, 0);
            px_rail_cwnd_cut(vc, now, (uint64_t)s->srtt);
        }
    }
    if (!px_list_empty(&vc->backlog))
        px_rail_backlog_flush(vc);
    if (!px_list_empty(&vc->deferred)) /* bulk lanes: acknowledged bytes made room */
        px_rail_deferred_flush(vc);
}

/* The peer had frame seq already when a copy came again. If that copy went
 * on a timeout, the timeout was spurious: the first copy (or its
 * acknowledgement) was late, not lost, most often because the peer was
 * busy outside the library and acknowledged late. The window goes back to
 * what it was before the timeout cut it. The timeout itself is left as the
 * round trips make it (stretching it to cover such delays made real losses
 * wait as long), except on a subchannel with no round trip measured yet:
 * there the time since the first copy went, at most twice the timeout that
 * fired, stands for one. Otherwise a subchannel whose acknowledgements come
 * later than the first guess has every frame sent twice and, none being
 * timed (Karn), never gets a measure. */
void px_rail_dup_in(px_rail_vc_t *vc, uint32_t seq)
{
    for (unsigned k = 0; k < sizeof(vc->rto_log) / sizeof(vc->rto_log[0]); k++) {
        if (!vc->rto_log[k].used || vc->rto_log[k].seq != seq)
            continue;
        vc->rail->retx_spurious++;
        if (vc->fr_retx) /* not a loss: out of the loss rate too */
            vc->fr_retx--;
        if (vc->cwnd < vc->rto_log[k].cwnd)
            vc->cwnd = vc->rto_log[k].cwnd;
        int si = vc->rto_log[k].sub;
        if (si >= 0 && si < vc->nsub && vc->sub[si].srtt == 0) {
            px_rail_sub_t *s = &vc->sub[si];
            double rtt = (double)px_since(px_time_ns(), vc->rto_log[k].t_first);
            double step = 2.0 * (double)vc->rto_log[k].rto;
            if (rtt > step)
                rtt = step;
            if (rtt > s->rtt_max)
                s->rtt_max = rtt;
        }
        vc->rto_log[k].used = 0;
        return;
    }
}
