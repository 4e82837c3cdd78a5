/* Subchannel health: UP, SUSPECT (acknowledgements overdue: new traffic
 * avoids it), DOWN (the transport gave up, or silence past PX_RAIL_DETECT:
 * its frames move to the others and it is probed until it answers);
 * heartbeats, path checks of datagram paths, and the partition timeout. */
#include "rail_impl.h"
#include "rail_policy.h"
#include "../util/tool.h"

#include <stdio.h>

/* A ping on each subchannel a send may use that has carried nothing yet
 * (but skip): the transport connects and verifies it now. */
void px_rail_connect_unused(px_rail_vc_t *vc, int skip)
{
    for (int i = 0; i < vc->nsub; i++) {
        px_rail_sub_t *s = &vc->sub[i];
        if (i == skip || (vc->single && i != vc->bind_sub) || s->state != PX_SUB_UP || s->used)
            continue;
        s->used = 1;
        px_rail_send_ctl(vc, i, PX_RAIL_PING, 0, 0, 0);
    }
}

/* The best subchannel by weight among those in the given state or better,
 * or -1. */
int px_rail_best(px_rail_vc_t *vc, int worst_state)
{
    int best = -1;
    for (int i = 0; i < vc->nsub; i++)
        if (vc->sub[i].state <= worst_state &&
            (best < 0 || vc->sub[i].weight > vc->sub[best].weight * 1.001))
            best = i;
    return best;
}

void px_rail_set_state(px_rail_sub_t *s, int state)
{
    int old = s->state;
    s->state = state;
    s->st->state = state;
    if (old != state) {
        const int ev[] = {s->vc->rank, s->idx, old, state, s->vc->rail->lossy};
        px_tool_event(PX_TOOL_EV_SUB_STATE, ev, 5);
    }
}

static void px_rail_count_up(px_rail_vc_t *vc)
{
    int n = 0;
    for (int i = 0; i < vc->nsub; i++)
        n += vc->sub[i].state != PX_SUB_DOWN;
    vc->nup = n;
}

/* What was arriving on s when it failed: a matched ordered frame keeps its
 * destination for the copy the sender will send again; the rest is
 * forgotten (stripes are written again at their offset, early frames held
 * again). */
static void px_rail_rx_abandon(px_rail_sub_t *s)
{
    if (s->rx_state == PX_RX_DELIVER && s->rx_ordered) {
        px_rail_orphan_keep(s->vc, s->rx_seq, s->rx_dst, s->rx_ctx);
    } else if (s->rx_state == PX_RX_HOLD) {
        free(s->rx_held);
        s->rx_held = NULL;
    }
    s->rx_state = PX_RX_DROP;
}

/* The peer is gone for good: every send to it ends with an error, then the
 * layer above fails what waits for it. */
static void px_rail_vc_fail(px_rail_vc_t *vc, px_status_t why)
{
    if (vc->failed)
        return;
    vc->failed = 1;
    px_rail_bulk_vc_fail(vc);
    px_rail_vc_cancel(vc, why);
    if (vc->rail->up->ep_failed)
        vc->rail->up->ep_failed(vc->owner, why);
}

/* Marks every unacknowledged frame s carries to go again elsewhere;
 * returns how many, and adds their bytes to *bytes. */
static uint32_t px_rail_sub_mark_resend(px_rail_sub_t *s, uint64_t *bytes)
{
    px_rail_vc_t *vc = s->vc;
    uint32_t moved = 0;
    for (uint32_t q = vc->tx_acked; q != vc->tx_seq; q++) {
        px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (x && x->seq == q && x->sub == s->idx && !x->acked && !x->resend) {
            x->resend = 1;
            moved++;
            *bytes += x->len;
        }
    }
    return moved;
}

/* What a peer's suspect subchannels may send again on the others: a
 * floor, and an eighth of what was sent to it. A path that is only slow
 * (its acknowledgements late, not lost) thus costs at most that in bytes
 * sent twice, however often it turns suspect, while a path that fails
 * soon after a false alarm still has its frames moved at once. */
#define PX_RAIL_MOVE_FLOOR (16u << 20)

static int px_rail_move_allowed(const px_rail_vc_t *vc)
{
    uint64_t sent = 0;
    for (int k = 0; k < vc->nsub; k++)
        sent += vc->sub[k].st->bytes_tx;
    return vc->moved_bytes <= PX_RAIL_MOVE_FLOOR + sent / 8;
}

/* s is suspect: its unacknowledged frames go again on the others at once
 * (the receiver keeps one copy of each, whichever arrives first; the
 * transport hands back those it still holds, px_net_ops_t.ep_withdraw).
 * Connections only: over datagrams the rail layer's own
 * retransmission already sends a lost frame again. Only to a subchannel
 * that is up, and within the peer's budget (px_rail_move_allowed); a move
 * that has to wait is tried again at the next tick. Moves, and those
 * after which the path answered, are counted. */
static void px_rail_sub_move(px_rail_sub_t *s)
{
    px_rail_vc_t *vc = s->vc;
    int others = 0;
    for (int k = 0; k < vc->nsub; k++)
        others += k != s->idx && vc->sub[k].state == PX_SUB_UP;
    if (vc->rail->lossy || !others || !px_rail_move_allowed(vc))
        return;
    uint64_t bytes = 0;
    uint32_t moved = px_rail_sub_mark_resend(s, &bytes);
    vc->moved_bytes += bytes;
    s->unacked = 0;
    s->moved = 1;
    s->st->moves++;
    px_info("rail", "subchannel %s to rank %d: %u frame(s) go again on the others", s->info.label,
            vc->rank, moved);
    /* those the transport still holds go now, not after it */
    vc->rail->ops->ep_withdraw(s->ep);
    px_rail_resend_mark(vc);
}

/* Acknowledgements on s are overdue while the peer acknowledges what the
 * others carry: new traffic avoids it, its frames move (px_rail_sub_move),
 * and a ping asks whether it still works: its answer brings it back, and
 * DOWN needs firmer evidence (the transport's error, the peer's report, or
 * PX_RAIL_DETECT of silence). The connection stays: a path that is only
 * slow delivers what it holds. */
static void px_rail_sub_suspect(px_rail_sub_t *s, uint64_t now)
{
    px_rail_vc_t *vc = s->vc;
    px_info("rail", "subchannel %s to rank %d suspect: no answer for %.0f ms (%u frame(s) out)",
            s->info.label, vc->rank, (double)px_since(now, s->busy_since) / 1e6, s->unacked);
    px_rail_set_state(s, PX_SUB_SUSPECT);
    s->held = 1;
    s->st->suspects++;
    s->asked_ns = now;
    px_rail_send_ctl(vc, s->idx, PX_RAIL_PING, 0, 0, 0);
    if (s->unacked)
        px_rail_sub_move(s);
}

/* A ping on every UP subchannel but i not asked within `gap`: whether the
 * peer answers at all while i's acknowledgements are overdue (an answer
 * counts as hearing it elsewhere, px_rail_heard_elsewhere). */
static void px_rail_ask_others(px_rail_vc_t *vc, int i, uint64_t now, uint64_t gap)
{
    for (int k = 0; k < vc->nsub; k++) {
        px_rail_sub_t *o = &vc->sub[k];
        if (k != i && o->state == PX_SUB_UP && px_since(now, o->asked_ns) > gap) {
            o->asked_ns = now;
            px_rail_send_ctl(vc, k, PX_RAIL_PING, 0, 0, 0);
        }
    }
}

/* The oldest frame the peer has not acknowledged if it went on s, else
 * NULL: frames on the other subchannels that arrived after it wait for it
 * before they are acknowledged, so they look late without being so. */
static const px_rail_tx_t *px_rail_sub_oldest(const px_rail_vc_t *vc, const px_rail_sub_t *s)
{
    uint32_t n = 0;
    for (uint32_t q = vc->tx_acked; q != vc->tx_seq && n < 256; q++, n++) {
        const px_rail_tx_t *x = vc->tx[q & (vc->tx_cap - 1)];
        if (x && x->seq == q && !x->acked && !x->resend)
            return x->sub == s->idx ? x : NULL;
    }
    return NULL;
}

/* The oldest frame out has waited on s for PX_RAIL_DETECT / 2 while the
 * peer answers on the others, although its path answers (over TCP: the
 * kernel still hears the peer's): the link is not dead but too slow for
 * its share, say filled by other traffic, and every message with a stripe
 * on it waits. So too when s delivers its earlier frames one by one, each
 * in less than that, while the ones queued behind them wait ever longer.
 * As MPTCP does with a subflow that blocks the others, its frames go again
 * on the others (px_rail_sub_move, within the budget) and
 * a policy that learns the split from measurements (adaptive) drops its
 * share to the floor and leaves it out until a probe stripe shows it keeps
 * up (px_rail_split; fixed weights stay). It is suspect until it answers,
 * and DOWN only if its path falls silent too. */
static void px_rail_sub_late(px_rail_sub_t *s, uint64_t now)
{
    px_rail_vc_t *vc = s->vc;
    s->late = 1;
    s->st->lates++;
    if (vc->rail->policy->learn && s->idx < vc->npair && vc->npair > 1) {
        double total = 0;
        s->weight = px_params.rail_min_share;
        for (int i = 0; i < vc->npair; i++)
            if (i != s->idx)
                total += vc->sub[i].weight;
        for (int i = 0; i < vc->npair; i++)
            if (i != s->idx && total > 0)
                vc->sub[i].weight *= (1 - s->weight) / total;
        px_rail_set_primary(vc);
        if (!vc->rail->policy->split)
            px_rail_rest(s, 1);
    }
    px_rail_sub_suspect(s, now);
}

/* s answered: a suspect one is in use again. */
void px_rail_sub_alive(px_rail_sub_t *s)
{
    if (s->state != PX_SUB_SUSPECT || s->unacked)
        return;
    s->held = s->late = 0;
    if (s->moved) {
        s->moved = 0;
        s->st->moves_spurious++;
    }
    s->busy_since = s->vc->rail->now;
    px_info("rail", "subchannel %s to rank %d answers again", s->info.label, s->vc->rank);
    px_rail_set_state(s, PX_SUB_UP);
}

/* The transport gave up on s: everything it had not delivered goes to the
 * other subchannels (at the next progress), and s is probed until it works. */
void px_rail_sub_down(px_rail_sub_t *s, px_status_t why)
{
    px_rail_vc_t *vc = s->vc;
    px_rail_t *r = vc->rail;
    uint64_t now = r->now = px_time_ns();

    if (!r->ft) {
        px_error("rail", "subchannel %s to rank %d failed: %s", s->info.label, vc->rank,
                 px_status_string(why));
        px_rail_vc_fail(vc, why);
        return;
    }
    if (s->state == PX_SUB_DOWN)
        return;
    uint64_t bytes = 0;
    uint32_t moved = px_rail_sub_mark_resend(s, &bytes);
    px_rail_set_state(s, PX_SUB_DOWN);
    s->moved = s->held = s->late = 0;
    px_rail_bulk_sub_down(s);
    s->st->downs++;
    s->down_since = now;
    s->unacked = 0;
    s->hb_ns = 0;
    s->probe_gap = 0.1;
    s->probe_soon = 0;
    s->next_probe = now + 100000000ull;
    px_rail_count_up(vc);
    px_warn("rail",
            "subchannel %s to rank %d DOWN (%s); %u unacknowledged frame(s) move to %d "
            "other subchannel(s)",
            s->info.label, vc->rank, px_status_string(why), moved, vc->nup);
    /* drop the connection and what is queued on it: those frames go again */
    r->ops->ep_reset(s->ep);
    px_rail_rx_abandon(s);
    px_rail_resend_mark(vc);
    if (why == PX_ERR_TIMEOUT || why == PX_ERR_LINK_UNREACHABLE) {
        /* the peer's side of a dead link only times out when it has data
         * on it too: tell it over a working subchannel */
        int o = px_rail_best(vc, PX_SUB_SUSPECT);
        if (o >= 0)
            px_rail_send_ctl(vc, o, PX_RAIL_SUBDOWN, 0, (uint32_t)s->idx, 0);
    }
    if (vc->nup == 0 && !vc->part_since) {
        vc->part_since = now;
        r->partitions++;
        px_warn("rail",
                "rank %d unreachable on every subchannel; waiting up to %g s for a path "
                "(PX_PARTITION_TIMEOUT)",
                vc->rank, px_params.partition_timeout);
    }
}

void px_rail_sub_up(px_rail_sub_t *s)
{
    px_rail_vc_t *vc = s->vc;
    px_rail_t *r = vc->rail;
    uint64_t now = r->now = px_time_ns();
    s->st->down_ns += now - s->down_since;
    s->st->recoveries++;
    px_rail_set_state(s, PX_SUB_UP);
    s->up_since = now;
    s->down_silent = 0;
    /* re-join with a fresh share: the mean of the others' (a lane's share
     * is its pair's, held by lane 0) */
    if (s->idx < vc->npair) {
        double sum = 0;
        int k = 0;
        for (int i = 0; i < vc->npair; i++)
            if (i != s->idx && vc->sub[i].state != PX_SUB_DOWN) {
                sum += vc->sub[i].weight;
                k++;
            }
        s->weight = k ? sum / k : 1.0;
        if (s->weight < px_params.rail_min_share)
            s->weight = px_params.rail_min_share;
        double total = 0;
        for (int i = 0; i < vc->npair; i++)
            total += vc->sub[i].weight;
        for (int i = 0; i < vc->npair; i++)
            vc->sub[i].weight /= total;
    }
    s->ew_bytes = s->ew_ns = 0;
    px_rail_rest(s, 0);
    s->retry_ns = 0;
    s->est_mbs = s->est_mbs > 0 ? s->est_mbs : 1;
    s->probing = 1;
    s->warm = 0;
    s->srtt = s->rttvar = s->rtt_max = 0;
    px_rail_count_up(vc);
    px_warn("rail", "subchannel %s to rank %d recovered after %.2f s", s->info.label, vc->rank,
            (double)(now - s->down_since) / 1e9);
    if (vc->part_since) {
        r->partition_ns += now - vc->part_since;
        px_warn("rail", "rank %d reachable again after %.2f s", vc->rank,
                (double)(now - vc->part_since) / 1e9);
        vc->part_since = 0;
    }
    px_rail_resend_mark(vc);
}

void px_rail_ep_failed(void *owner, px_status_t why)
{
    px_rail_sub_t *s = owner;
    if (s->state == PX_SUB_DOWN && s->vc->rail->ft) {
        /* a probe that did not get through */
        px_debug("rail", "probe of %s to rank %d failed: %s", s->info.label, s->vc->rank,
                 px_status_string(why));
        return;
    }
    px_rail_sub_down(s, why);
}

/* Lossy transports: the transport's path check (answered by the peer's
 * kernel), started only when `start`, followed up while under way. */
static int px_rail_path_check(px_rail_sub_t *s, uint64_t timeout, int start)
{
    const px_net_ops_t *ops = s->vc->rail->ops;
    if (!(s->vc->rail->attr.caps & PX_NET_CAP_PATH_CHECK) || (!s->path_checking && !start))
        return 0;
    int p = ops->ep_path_check(s->ep, timeout);
    s->path_checking = p == 0;
    return p;
}

/* Nothing for the fine-grained timers: everything sent acknowledged,
 * everything received acknowledged, nothing queued or to send again,
 * every subchannel up and clear. Heartbeats and probes run anyway, at the
 * sweep. */
int px_rail_vc_idle(const px_rail_vc_t *vc)
{
    if (vc->rx_unacked || vc->tx_acked != vc->tx_seq || vc->resend_pending || vc->part_since ||
        !px_list_empty(&vc->backlog) || !px_list_empty(&vc->deferred))
        return 0;
    for (int i = 0; i < vc->nsub; i++)
        if (vc->sub[i].state != PX_SUB_UP || vc->sub[i].unacked)
            return 0;
    return 1;
}

/* When the peer last showed, other than on subchannel i, that it runs:
 * an acknowledgement that made progress, or (connections) a ping answered
 * on another subchannel that is up. */
static uint64_t px_rail_heard_elsewhere(const px_rail_vc_t *vc, int i)
{
    uint64_t heard = vc->last_ack_rx;
    for (int k = 0; k < vc->nsub; k++)
        if (k != i && vc->sub[k].state == PX_SUB_UP && vc->sub[k].pong_ns > heard)
            heard = vc->sub[k].pong_ns;
    return heard;
}

/* How long s may go without an acknowledgement while it has frames out:
 * the measured round trip and four deviations, at least PX_RAIL_RTO_MIN
 * (a quarter of PX_RAIL_DETECT before there is a measure), at most
 * PX_RAIL_DETECT. */
static uint64_t px_rail_sub_rto(const px_rail_sub_t *s, uint64_t detect)
{
    uint64_t floor = (uint64_t)(px_params.rail_rto_min * 1e9);
    uint64_t rto = s->srtt > 0 ? (uint64_t)(s->srtt + 4 * s->rttvar) : detect / 4;
    if (rto < floor)
        rto = floor;
    return rto < detect ? rto : detect;
}

/* QoS lanes: another lane of s's address pair had a frame acknowledged or
 * a ping answered in the last `win`, so the path they share works and s's
 * silence is the queue of its traffic class (a class held to its
 * guaranteed rate keeps a frame for tens of milliseconds under congestion,
 * where the round trip the lane measured while idle is a fraction of one). */
static int px_rail_lane_path_works(const px_rail_vc_t *vc, const px_rail_sub_t *s, uint64_t now,
                                   uint64_t win)
{
    if (vc->nlane < 2)
        return 0;
    for (int k = s->idx % vc->npair; k < vc->nsub; k += vc->npair)
        if (k != s->idx && vc->sub[k].state == PX_SUB_UP) {
            const px_rail_sub_t *o = &vc->sub[k];
            uint64_t heard = o->acked_ns > o->pong_ns ? o->acked_ns : o->pong_ns;
            if (heard && px_since(now, heard) < win)
                return 1;
        }
    return 0;
}

/* How often an idle subchannel of a peer in use is pinged: every eight of
 * its round-trip timeouts, so that a link that dies while idle shows within
 * a few of them (connections: the ping is not answered) before traffic
 * needs it; at least a millisecond per peer this process has a channel to
 * (a large job sends at most about a thousand heartbeats a second per
 * rail), at most PX_RAIL_DETECT/3. */
static uint64_t px_rail_hb_period(const px_rail_sub_t *s, int nvc, uint64_t detect)
{
    uint64_t hb = 8 * px_rail_sub_rto(s, detect);
    uint64_t budget = (uint64_t)nvc * 1000000ull;
    if (hb < budget)
        hb = budget;
    return hb < detect / 3 ? hb : detect / 3;
}

/* Datagrams: the peer talks, but nothing sent to it has been acknowledged
 * for twice PX_RAIL_DETECT (since the oldest frame went, the last
 * acknowledgement or a subchannel came back), though a running peer
 * acknowledges whatever it gets with whatever it sends: frames in this
 * direction do not arrive on any subchannel (a one-way failure, which no
 * silence shows and, unlike TCP, no transport timeout ends). Every
 * subchannel goes down: PX_PARTITION_TIMEOUT runs instead of sending again
 * for good, and a probe answered brings one back. A path that fails on
 * some subchannels only is left to the suspect rule (the peer acknowledges
 * the frames sent again on the others). */
static void px_rail_one_way(px_rail_vc_t *vc, uint64_t now, uint64_t detect)
{
    uint64_t from = vc->last_ack_rx > vc->out_since ? vc->last_ack_rx : vc->out_since;
    for (int i = 0; i < vc->nsub; i++)
        if (vc->sub[i].up_since > from)
            from = vc->sub[i].up_since;
    if (!vc->nup || px_since(now, from) <= 2 * detect || vc->last_rx <= from + detect)
        return;
    px_warn("rail",
            "rank %d talks but has acknowledged nothing for %.1f s: frames to it do not "
            "arrive",
            vc->rank, (double)px_since(now, from) / 1e9);
    for (int i = 0; i < vc->nsub && !vc->failed; i++)
        if (vc->sub[i].state != PX_SUB_DOWN)
            px_rail_sub_down(&vc->sub[i], PX_ERR_TIMEOUT);
}

/* Connections: the oldest frame out, which the peer needs before it
 * acknowledges the ones after it, has waited 8 x PX_RAIL_DETECT, and the
 * peer has acknowledged no frame meanwhile (a slow link delivers the
 * frames queued before it, each at most a transport fragment). The rules
 * above may all have let it wait: its subchannel is suspect but its path
 * answers (late), the budget for moving frames is spent, or the
 * connection stalls with no error. First a ping on every subchannel not
 * down asks whether the peer runs at all (a peer busy computing answers
 * nothing and is waited for); if it answers but has still not
 * acknowledged the frame PX_RAIL_DETECT later (a peer back from a long
 * computation acknowledges what it holds within that), the subchannel
 * that holds the frame goes down: its frames go again on the others and a
 * fresh connection is probed. */
static void px_rail_hole_check(px_rail_vc_t *vc, uint64_t now, uint64_t detect)
{
    const px_rail_tx_t *x = vc->tx[vc->tx_acked & (vc->tx_cap - 1)];
    if (!x || x->seq != vc->tx_acked || x->acked ||
        px_since(now, x->t_sent > vc->frame_ack_ns ? x->t_sent : vc->frame_ack_ns) <= 8 * detect) {
        vc->hole_ask_ns = vc->hole_heard_ns = 0;
        return;
    }
    if (x->resend) {
        px_rail_resend_mark(vc);
        return;
    }
    if (vc->hole_ask_ns && !vc->hole_heard_ns && vc->last_rx > vc->hole_ask_ns)
        vc->hole_heard_ns = now;
    if (vc->hole_heard_ns && px_since(now, vc->hole_heard_ns) > detect && x->sub >= 0 &&
        vc->sub[x->sub].state != PX_SUB_DOWN) {
        px_rail_sub_t *s = &vc->sub[x->sub];
        px_info("rail",
                "frame %u to rank %d unacknowledged on %s for %.1f s while the peer "
                "answers: the subchannel goes down, its frames go on the others",
                x->seq, vc->rank, s->info.label, (double)px_since(now, x->t_sent) / 1e9);
        vc->hole_ask_ns = vc->hole_heard_ns = 0;
        px_rail_sub_down(s, PX_ERR_TIMEOUT);
        return;
    }
    if (!vc->hole_heard_ns && (!vc->hole_ask_ns || px_since(now, vc->hole_ask_ns) > detect)) {
        vc->hole_ask_ns = now;
        for (int k = 0; k < vc->nsub; k++)
            if (vc->sub[k].state != PX_SUB_DOWN)
                px_rail_send_ctl(vc, k, PX_RAIL_PING, 0, 0, 0);
    }
}

void px_rail_vc_tick(px_rail_vc_t *vc, uint64_t now)
{
    px_rail_t *r = vc->rail;
    if (vc->rx_unacked && px_since(now, vc->last_ack_tx) >= PX_RAIL_ACK_DELAY_NS)
        px_rail_send_ack(vc, 0, 0, 0, -1);
    if (!r->ft)
        return;
    if (r->lossy && vc->tx_acked != vc->tx_seq)
        px_rail_retransmit_due(vc, now);
    uint64_t detect = (uint64_t)(px_params.rail_detect * 1e9);
    int active = px_since(now, vc->last_activity) < 5000000000ull;
    if (r->lossy && vc->tx_acked != vc->tx_seq)
        px_rail_one_way(vc, now, detect);
    if (!r->lossy && vc->tx_acked != vc->tx_seq)
        px_rail_hole_check(vc, now, detect);
    if (vc->failed)
        return;
    for (int i = 0; i < vc->nsub && !vc->failed; i++) {
        px_rail_sub_t *s = &vc->sub[i];
        if (s->state == PX_SUB_DOWN) {
            /* datagrams: the path answers again (its peer may be too busy
             * to answer a ping): in use again, the frames it owes go again */
            if (s->down_silent && px_rail_path_check(s, detect, now >= s->next_probe) > 0) {
                px_rail_sub_up(s);
                s->path_ok_ns = now;
                continue;
            }
            if (now < s->next_probe)
                continue;
            /* a fresh connection and a ping; the answer brings it back */
            r->ops->ep_reset(s->ep);
            px_rail_send_ctl(vc, i, PX_RAIL_PING, 0, 0, 0);
            s->probe_gap *= 2;
            if (s->probe_gap > px_params.rail_probe_max)
                s->probe_gap = px_params.rail_probe_max;
            s->next_probe = now + (uint64_t)(s->probe_gap * 1e9);
            continue;
        }
        /* acknowledgements overdue while the peer acknowledges what the
         * other subchannels carry: suspect (new traffic avoids it). A peer
         * that acknowledges nothing is just busy; only the transport's own
         * timeout (TCP_USER_TIMEOUT) or an error makes a subchannel DOWN. */
        /* over datagrams the frames' own timeout, which covers the deepest
         * recent queue: a subchannel whose frames wait behind others is
         * late, not silent (a rail whose frames are queued behind several
         * milliseconds of stripes was taken for suspect again and again) */
        uint64_t rto = px_rail_sub_rto(s, detect);
        uint64_t hb = px_rail_hb_period(s, r->nvc, detect);
        if (r->lossy) {
            uint64_t q = px_rail_rto(r, s);
            rto = q > rto ? (q < detect ? q : detect) : rto;
        }
        /* a lane whose path works (its pair's other lanes are heard) is
         * slow, not silent: suspect only after the timeout a subchannel
         * has before any measure, a quarter of PX_RAIL_DETECT */
        if (rto < detect / 4 && px_rail_lane_path_works(vc, s, now, detect / 4))
            rto = detect / 4;
        uint64_t heard = px_rail_heard_elsewhere(vc, i);
        if (s->unacked && px_since(now, s->busy_since) > rto && heard > s->busy_since + rto / 2) {
            /* the peer answers on the others; when the transport can
             * tell, only once it says the path itself is silent (over TCP:
             * the kernel has heard nothing from the peer's; a slow path,
             * not a dead one, keeps being heard), s is suspect */
            if (s->state == PX_SUB_UP && vc->nsub > 1 &&
                (r->lossy || !(r->attr.caps & PX_NET_CAP_PATH_CHECK) ||
                 px_rail_path_check(s, rto, 1) < 0))
                px_rail_sub_suspect(s, now);
            else if (s->state == PX_SUB_SUSPECT && !s->moved)
                px_rail_sub_move(s);
        } else if (!r->lossy && s->unacked && px_since(now, s->busy_since) > rto &&
                   s->state == PX_SUB_UP) {
            /* overdue, and the others are quiet: ask on each of them
             * whether the peer answers at all (a busy one does not), at
             * most once per round-trip timeout. The others may owe
             * acknowledgements too: frames that arrived after a lost one
             * wait for it before they are acknowledged. */
            px_rail_ask_others(vc, i, now, rto);
        } else if (!r->lossy && s->hb_ns && !s->unacked && s->state == PX_SUB_UP && vc->nsub > 1 &&
                   px_since(now, s->hb_ns) > rto && heard > s->hb_ns + rto / 2 &&
                   (!(r->attr.caps & PX_NET_CAP_PATH_CHECK) || px_rail_path_check(s, rto, 1) < 0)) {
            /* an idle connection's heartbeat unanswered while the peer
             * answers on the others and this path's kernel hears nothing:
             * suspect before traffic needs it (a datagram heartbeat may just
             * be lost: those paths are checked on silence, below) */
            s->busy_since = s->hb_ns;
            px_rail_sub_suspect(s, now);
        } else if (s->state == PX_SUB_SUSPECT && !s->held) {
            px_rail_set_state(s, PX_SUB_UP);
        }
        /* the oldest frame out sent on it PX_RAIL_DETECT / 2 ago and not
         * acknowledged (whether the frames before it on s were): late once
         * the peer has answered elsewhere for PX_RAIL_DETECT / 4 since
         * and that frame is still out (a peer back from a long computation
         * answers everywhere within that); when the others are quiet
         * (everything else waits for this one), ask there */
        const px_rail_tx_t *old;
        if (!r->lossy && vc->nlane <= 1 && s->state == PX_SUB_UP && s->unacked && vc->nsub > 1 &&
            (old = px_rail_sub_oldest(vc, s)) && px_since(now, old->t_sent) > detect / 2) {
            uint64_t since = old->t_sent;
            if (heard > since && s->late_heard <= since)
                s->late_heard = now;
            if (s->late_heard > since && px_since(now, s->late_heard) > detect / 4) {
                px_rail_sub_late(s, now);
            } else if (heard <= since) {
                px_rail_ask_others(vc, i, now, detect / 4);
            }
        }
        /* datagrams have no transport timeout (TCP_USER_TIMEOUT): when the
         * peer has said nothing for PX_RAIL_DETECT while frames wait for its
         * acknowledgement (or heartbeats for an answer), ask its kernel
         * whether the path works. If it does the peer is only busy; if not,
         * the subchannel is down (and with every one down,
         * PX_PARTITION_TIMEOUT runs). A path that dies while the peer talks
         * on the others is caught as suspect, below. */
        if (r->lossy) {
            int silent = px_since(now, vc->last_rx) > detect &&
                         ((s->unacked && px_since(now, s->busy_since) > detect) ||
                          (s->used && active && px_since(now, vc->last_rx) > detect + hb));
            int p = px_rail_path_check(s, detect, silent && px_since(now, s->path_ok_ns) > detect);
            if (p > 0) {
                s->path_ok_ns = now;
            } else if (p < 0) {
                px_rail_sub_down(s, PX_ERR_TIMEOUT);
                s->down_silent = 1;
                continue;
            }
        }
        /* still nothing after PX_RAIL_DETECT while the peer keeps
         * acknowledging the others: the path is dead even if the transport
         * has not noticed yet (its retransmission timer may be long) */
        if (s->state == PX_SUB_SUSPECT && px_since(now, s->busy_since) > detect &&
            heard > s->busy_since + detect / 2 &&
            (!s->late || px_rail_path_check(s, detect, 1) < 0)) {
            px_rail_sub_down(s, PX_ERR_TIMEOUT);
            continue;
        }
        /* datagrams: a held suspect is asked again every two timeouts
         * whether it answers: one lost ping or answer must not leave it
         * waiting for the rule above (the heartbeat below may come only a
         * third of PX_RAIL_DETECT after the last send on it) */
        if (r->lossy && s->state == PX_SUB_SUSPECT && s->held &&
            px_since(now, s->asked_ns) > 2 * rto) {
            s->asked_ns = now;
            px_rail_send_ctl(vc, i, PX_RAIL_PING, 0, 0, 0);
        }
        /* heartbeat: an idle connection also has something the transport
         * must get acknowledged, so a dead link shows before it is needed */
        if (s->state != PX_SUB_DOWN && s->used && active && px_since(now, s->last_tx_ns) > hb) {
            if (!s->hb_ns)
                s->hb_ns = now;
            px_rail_send_ctl(vc, i, PX_RAIL_PING, 0, 0, 0);
        }
    }
    if (vc->failed)
        return;
    if (vc->part_since &&
        px_since(now, vc->part_since) > (uint64_t)(px_params.partition_timeout * 1e9)) {
        char rails[256];
        size_t o = 0;
        rails[0] = 0;
        for (int i = 0; i < vc->nsub && o < sizeof(rails) - 1; i++)
            o += (size_t)snprintf(rails + o, sizeof(rails) - o, "%s%s", i ? ", " : "",
                                  vc->sub[i].info.label);
        px_error("rail",
                 "rank %d unreachable: every subchannel (%s) down for %.1f s "
                 "(PX_PARTITION_TIMEOUT=%g)",
                 vc->rank, rails, (double)(now - vc->part_since) / 1e9,
                 px_params.partition_timeout);
        r->partition_ns += now - vc->part_since;
        vc->part_since = 0;
        px_rail_vc_fail(vc, PX_ERR_PEER_UNREACHABLE);
        return;
    }
    if (vc->resend_pending)
        px_rail_resend(vc);
}
