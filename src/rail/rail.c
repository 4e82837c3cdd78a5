/* The rail layer's set-up, channels, progress loop and introspection; the
 * rest of the layer is in the files rail_impl.h lists. */
#include "rail_impl.h"
#include "rail_policy.h"

#include <stdio.h>

const char *const px_rail_state_names[] = {"up", "suspect", "down"};

/* For px_rail_policy_name, which has no rail at hand. */
static const px_rail_policy_ops_t *px_rail_pol = &px_rail_policy_adaptive;

static int px_rail_ep_incoming(void *owner, int rank)
{
    px_rail_t *r = owner;
    return r->up->vc_incoming && rank >= 0 && rank < r->nranks && !r->vcs[rank]
               ? r->up->vc_incoming(r, rank)
               : -1;
}

static const px_net_rx_ops_t px_rail_rx_ops = {
    .rx_begin = px_rail_rx_begin,
    .rx_done = px_rail_rx_done,
    .ep_failed = px_rail_ep_failed,
    .ep_incoming = px_rail_ep_incoming,
    .bulk_progress = px_rail_bulk_progress_in,
    .bulk_done = px_rail_bulk_done_in,
};

/* ---------- parameters ---------- */

static px_status_t px_rail_parse_params(px_rail_t *r)
{
    /* the values are checked with the parameter table; this catches a
     * policy the table lists and the registry lacks */
    char names[128];
    if (px_lane_plan_init() != PX_OK) {
        px_error("rail", "%s", px_lane_plan_error());
        return PX_ERR_INVALID_PARAM;
    }
    r->policy = px_rail_policy_find(px_params.rail_policy, names, sizeof(names));
    if (!r->policy) {
        px_error("rail", "PX_RAIL_POLICY=%s: no such policy here (%s)", px_params.rail_policy,
                 names);
        return PX_ERR_INVALID_PARAM;
    }
    px_rail_pol = r->policy;
    const char *w = px_params.rail_weights;
    while (w && *w && r->nrail_weight < PX_NET_MAX_SUB) {
        char *end;
        double v = strtod(w, &end);
        if (end == w || v <= 0 || (*end && *end != ',')) {
            px_error("rail", "PX_RAIL_WEIGHTS=%s: expected positive numbers separated by commas",
                     px_params.rail_weights);
            return PX_ERR_INVALID_PARAM;
        }
        r->rail_weight[r->nrail_weight++] = v;
        w = *end ? end + 1 : end;
    }
    const char *b = px_params.rail_bind ? px_params.rail_bind : "scatter";
    if (!strcmp(b, "bunch")) {
        r->bind_list[0] = -1;
    } else if (!strcmp(b, "scatter")) {
        r->bind_list[0] = -2;
    } else {
        while (*b && r->nbind < 64) {
            char *end;
            long v = strtol(b, &end, 10);
            if (end == b || v < 0 || (*end && *end != ',')) {
                px_error("rail", "PX_RAIL_BIND=%s: use bunch, scatter or rail indices like 1,0",
                         px_params.rail_bind);
                return PX_ERR_INVALID_PARAM;
            }
            r->bind_list[r->nbind++] = (int)v;
            b = *end ? end + 1 : end;
        }
    }
    return PX_OK;
}

const char *px_rail_policy_name(void) { return px_rail_pol->name; }

/* ---------- setup ---------- */

px_status_t px_rail_init(const px_boot_info_t *boot, const char *net, const px_rail_rx_ops_t *up,
                         px_rail_t **rail_p)
{
    px_rail_t *r = calloc(1, sizeof(*r));
    px_status_t st;
    if (!r)
        return PX_ERR_NO_MEMORY;
    r->link_fd = -1;
    r->up = up;
    r->now = px_time_ns();
    r->nranks = px_boot_peer_room(boot);
    r->local_rank = boot->local_rank;
    r->me = boot->rank;
    st = px_rail_parse_params(r);
    if (st != PX_OK)
        goto err;
    r->ops = px_net_find(net);
    if (!r->ops) {
        px_error("rail", "unknown network transport '%s'", net);
        st = PX_ERR_INVALID_PARAM;
        goto err;
    }
    st = PX_ERR_NO_MEMORY;
    r->vcs = calloc((size_t)px_boot_peer_room(boot), sizeof(*r->vcs));
    r->vlist = calloc((size_t)px_boot_peer_room(boot), sizeof(*r->vlist));
    r->due = calloc((size_t)px_boot_peer_room(boot), sizeof(*r->due));
    r->hot = calloc((size_t)px_boot_peer_room(boot), sizeof(*r->hot));
    if (!r->vcs || !r->vlist || !r->due || !r->hot)
        goto err;
    st = r->ops->iface_open(boot, &px_rail_rx_ops, r, &r->iface);
    if (st != PX_OK)
        goto err;
    r->ops->iface_query(r->iface, &r->attr);
    if ((r->attr.caps & PX_NET_CAP_BULK) &&
        !(r->bulk = calloc(PX_RAIL_BULK_MAX, sizeof(*r->bulk)))) {
        r->ops->iface_close(r->iface);
        st = PX_ERR_NO_MEMORY;
        goto err;
    }
    r->ft = px_params.rail_ft && (r->attr.caps & PX_NET_CAP_RESET);
    if (r->attr.caps & PX_NET_CAP_LOSSY) {
        /* reliability is ours: every frame keeps its record until acknowledged */
        r->lossy = 1;
        r->ft = 1;
        r->frame_max = r->attr.max_frag;
        r->rto_min = (uint64_t)(px_params.rail_rto_min * 1e9);
        if (r->rto_min < 100000)
            r->rto_min = 100000;
    }
    if (r->ft)
        px_rail_link_open(r);
    r->copy_max =
        r->attr.eager_limit > PX_RAIL_COPY_SMALL ? r->attr.eager_limit : PX_RAIL_COPY_SMALL;
    /* a lossy transport holds nothing once it returns: there, waiting for
     * the acknowledgement is the only way to know the frame arrived */
    r->rel_cap = px_params.rail_release;
    r->release = r->rel_cap > 0 && !r->lossy;
    if (r->copy_max > PX_RAIL_COPY_MAX)
        r->copy_max = PX_RAIL_COPY_MAX;
    static int stats_taken; /* one segment per rank: the first rail's */
    if (px_params.stats && !stats_taken++)
        px_rail_stats_open(r, boot);
    *rail_p = r;
    return PX_OK;

err:
    free(r->vcs);
    free(r->vlist);
    free(r->due);
    free(r->hot);
    free(r);
    return st;
}

static void px_rail_vc_free(px_rail_vc_t *vc)
{
    px_list_t *e, *t;
    px_list_for_each_safe(e, t, &vc->backlog) {
        px_rail_backlog_t *b = px_container_of(e, px_rail_backlog_t, link);
        free(b->copy);
        free(b);
    }
    px_list_for_each_safe(e, t, &vc->deferred)
        free(px_container_of(e, px_rail_backlog_t, link));
    for (uint32_t i = 0; i < vc->tx_cap; i++) {
        px_rail_tx_t *x = vc->tx[i];
        if (!x)
            continue;
        if (x->msg && --x->msg->open == 0)
            free(x->msg);
        free(x->heap);
        free(x);
    }
    while (vc->held) {
        px_rail_held_t *h = vc->held;
        vc->held = h->next;
        free(h);
    }
    for (int i = 0; i < vc->nsub; i++)
        free(vc->sub[i].rx_held);
    free(vc->tx);
    free(vc);
}

void px_rail_finalize(px_rail_t *r)
{
    if (!r)
        return;
    r->ops->iface_close(r->iface);
    px_rail_link_close(r);
    px_rail_stats_close(r);
    for (int i = 0; i < r->nranks; i++)
        if (r->vcs[i])
            px_rail_vc_free(r->vcs[i]);
    while (r->txfree) {
        px_rail_tx_t *x = r->txfree;
        r->txfree = x->next;
        free(x->heap);
        free(x);
    }
    free(r->vcs);
    free(r->vlist);
    free(r->hot);
    free(r->due);
    free(r->rel_buf);
    free(r->bulk);
    free(r);
}

int px_rail_reachable(px_rail_t *r, int rank) { return r->ops->iface_reachable(r->iface, rank); }

static double px_rail_static_weight(px_rail_t *r, const px_net_sub_info_t *in)
{
    if (r->nrail_weight)
        return in->rail < r->nrail_weight ? r->rail_weight[in->rail] : r->rail_weight[0];
    return in->speed_mbs > 0 ? in->speed_mbs : 1.0;
}

/* The first subchannel on local rail `rail` (0 when there is none). */
static int px_rail_sub_on(const px_rail_vc_t *vc, int rail)
{
    for (int i = 0; i < vc->nsub; i++)
        if (vc->sub[i].info.rail == rail)
            return i;
    return 0;
}

px_status_t px_rail_vc_create(px_rail_t *r, int rank, void *owner, px_rail_vc_t **vc_p)
{
    px_rail_vc_t *vc = r->vcs[rank];
    px_status_t st;
    if (!vc) {
        px_net_sub_info_t info[PX_NET_MAX_SUB];
        memset(info, 0, sizeof(info));
        int n = r->ops->ep_subs(r->iface, rank, info, PX_NET_MAX_SUB);
        if (n < 0)
            return (px_status_t)n;
        if (n == 0)
            return PX_ERR_PEER_UNREACHABLE;
        vc = calloc(1, sizeof(*vc) + (size_t)n * sizeof(vc->sub[0]));
        if (!vc)
            return PX_ERR_NO_MEMORY;
        vc->tx = calloc(PX_RAIL_TX_CAP0, sizeof(*vc->tx));
        if (!vc->tx) {
            free(vc);
            return PX_ERR_NO_MEMORY;
        }
        vc->tx_cap = PX_RAIL_TX_CAP0;
        vc->rail = r;
        vc->rank = rank;
        vc->nsub = n;
        vc->nup = n;
        /* lanes as the transport enumerates them (lane-major), else none */
        vc->nlane = info[n - 1].lane + 1;
        for (int i = 0; i < n; i++)
            if (vc->nlane < 1 || n % vc->nlane || info[i].lane != i / (n / vc->nlane))
                vc->nlane = 1;
        vc->npair = n / vc->nlane;
        px_list_init(&vc->backlog);
        px_list_init(&vc->deferred);
        vc->cwnd = px_params.rail_cwnd_max;
        if (r->lossy && vc->cwnd < 4 * r->frame_max)
            vc->cwnd = 4 * r->frame_max;
        double total = 0;
        for (int i = 0; i < n; i++) {
            px_rail_sub_t *s = &vc->sub[i];
            s->vc = vc;
            s->idx = i;
            s->info = info[i];
            s->st = &s->st_own;
            if (r->seg && rank < (int)r->seg->nranks) { /* the job's ranks: pxinfo --stats */
                px_rail_stats_entry_t *e = &r->seg->e[rank * PX_NET_MAX_SUB + i];
                e->peer = rank;
                e->sub = i;
                snprintf(e->label, sizeof(e->label), "%s", info[i].label);
                s->st = &e->st;
                __atomic_store_n(&e->in_use, 1, __ATOMIC_RELEASE);
            }
            s->weight = px_rail_static_weight(r, &info[i]);
            s->est_mbs = s->weight;
            if (i < vc->npair)
                total += s->weight;
            st = r->ops->ep_create(r->iface, rank, i, s, &s->ep);
            if (st != PX_OK) {
                free(vc->tx);
                free(vc);
                return st;
            }
        }
        for (int i = 0; i < n; i++) {
            vc->sub[i].weight = r->policy->even ? 1.0 / vc->npair : vc->sub[i].weight / total;
            vc->sub[i].st->weight = vc->sub[i].weight;
        }
        px_rail_set_primary(vc);
        /* binding: one rail per local rank */
        int nrails = 0;
        for (int i = 0; i < n; i++)
            if (info[i].rail + 1 > nrails)
                nrails = info[i].rail + 1;
        int want = 0;
        if (r->bind_list[0] == -2 && r->nbind == 0)
            want = r->local_rank % (nrails ? nrails : 1);
        else if (r->nbind)
            want = r->bind_list[r->local_rank % r->nbind];
        vc->bind_sub = px_rail_sub_on(vc, want);
        if (r->policy == &px_rail_policy_bind && r->nbind && want >= nrails)
            px_warn("rail",
                    "PX_RAIL_BIND names rail %d but rank %d is reached over %d rail(s); "
                    "using %s",
                    want, rank, nrails, info[vc->bind_sub].label);
        for (int i = 0; i < n; i++)
            px_debug("rail", "rank %d subchannel %d: %s (weight %.3f)", rank, i, info[i].label,
                     vc->sub[i].weight);
        r->vcs[rank] = vc;
        r->vlist[r->nvc++] = vc;
    }
    vc->owner = owner;
    *vc_p = vc;
    return PX_OK;
}

px_status_t px_rail_vc_destroy(px_rail_t *r, px_rail_vc_t *vc)
{
    if (!vc->failed && (px_rail_vc_pending(vc) || px_rail_vc_unacked(vc)))
        return PX_ERR_BUSY;
    for (int i = 0; i < r->nvc; i++)
        if (r->vlist[i] == vc)
            r->vlist[i--] = r->vlist[--r->nvc];
    for (int i = 0; i < r->ndue; i++)
        if (r->due[i] == vc)
            r->due[i--] = r->due[--r->ndue];
    for (int i = 0; i < r->nhot; i++)
        if (r->hot[i] == vc)
            r->hot[i--] = r->hot[--r->nhot];
    for (int i = 0; i < vc->nsub; i++)
        r->ops->ep_destroy(vc->sub[i].ep);
    r->vcs[vc->rank] = NULL;
    px_rail_vc_free(vc);
    return PX_OK;
}

uint32_t px_rail_vc_unacked(px_rail_vc_t *vc) { return vc->tx_seq - vc->tx_acked; }

void px_rail_vc_set_single(px_rail_vc_t *vc)
{
    vc->single = 1;
    vc->armed = 1; /* nothing connected in advance */
    /* the bound subchannel: by local rank over the rails, as PX_RAIL_BIND=scatter */
    int nrails = 0, want;
    for (int i = 0; i < vc->nsub; i++)
        if (vc->sub[i].info.rail + 1 > nrails)
            nrails = vc->sub[i].info.rail + 1;
    want = vc->rail->local_rank % (nrails ? nrails : 1);
    vc->bind_sub = px_rail_sub_on(vc, want);
}

int px_rail_vc_single(const px_rail_vc_t *vc) { return vc->single; }

void px_rail_vc_connect(px_rail_vc_t *vc)
{
    if (vc->failed)
        return;
    px_rail_connect_unused(vc, -1);
    vc->armed = 1;
    px_rail_heat(vc);
}

int px_rail_vc_ready(px_rail_vc_t *vc)
{
    int (*ready)(px_net_ep_t *) = vc->rail->ops->ep_ready;
    int n = 0, ok = 0, any = 0;
    if (vc->failed)
        return 0;
    for (int i = 0; i < vc->nsub; i++) {
        px_rail_sub_t *s = &vc->sub[i];
        if (!px_rail_usable(s))
            continue;
        int r = ready(s->ep);
        any |= r;
        if (vc->single && i != vc->bind_sub)
            continue;
        n++;
        ok += r;
    }
    return n && ok == n ? 2 : any;
}

int px_rail_vc_nsub(px_rail_vc_t *vc) { return vc->nsub; }

double px_rail_vc_weight(px_rail_vc_t *vc, int i)
{
    const px_rail_policy_ops_t *pol = vc->rail->policy;
    i %= vc->npair; /* lanes show their pair's share */
    return pol->share ? pol->share(vc, i) : vc->sub[i].weight;
}

const px_rail_sub_stats_t *px_rail_vc_stats(px_rail_vc_t *vc, int i) { return vc->sub[i].st; }

int px_rail_progress(px_rail_t *r) { return px_rail_progress_ready(r, 1); }

int px_rail_progress_ready(px_rail_t *r, int readable)
{
    r->now = px_time_ns();
    int n = 0;
    if (readable || !r->ops->iface_quiet(r->iface)) {
        n = r->ops->iface_progress(r->iface);
        if (n)
            r->now = px_time_ns();
    }
    if (r->ndue)
        px_rail_acks_due(r);
    if (__builtin_expect(r->bulk_due, 0))
        px_rail_bulk_fail_due(r);
    if (r->rel_any || r->stage_x || r->pre.staged < r->pre.len)
        px_rail_release_step(r);
    if (r->now >= r->next_tick) {
        r->next_tick = r->now + PX_RAIL_TICK_NS;
        if (r->link_fd >= 0)
            px_rail_link_poll(r);
        if (r->now >= r->next_sweep) {
            /* every channel; the busy ones stay hot */
            r->next_sweep = r->now + PX_RAIL_SWEEP_NS;
            for (int i = 0; i < r->nvc; i++)
                if (!r->vlist[i]->failed)
                    px_rail_vc_tick(r->vlist[i], r->now);
            r->nhot = 0;
            for (int i = 0; i < r->nvc; i++) {
                px_rail_vc_t *vc = r->vlist[i];
                vc->hot = 0;
                if (!vc->failed && !px_rail_vc_idle(vc))
                    px_rail_heat(vc);
            }
        } else {
            for (int i = 0; i < r->nhot;) {
                px_rail_vc_t *vc = r->hot[i];
                if (!vc->failed)
                    px_rail_vc_tick(vc, r->now);
                if (vc->failed || px_rail_vc_idle(vc)) {
                    vc->hot = 0;
                    r->hot[i] = r->hot[--r->nhot];
                } else {
                    i++;
                }
            }
        }
    } else if (r->ft && r->resend_any) {
        r->resend_any = 0;
        for (int i = 0; i < r->nhot; i++)
            if (r->hot[i]->resend_pending)
                px_rail_resend(r->hot[i]);
    }
    return n;
}

void px_rail_ack_all(px_rail_t *r)
{
    r->now = px_time_ns();
    for (int i = 0; i < r->nvc; i++)
        if (r->vlist[i]->rx_unacked && !r->vlist[i]->failed)
            px_rail_send_ack(r->vlist[i], 0, 0, 0, -1);
}

int px_rail_fd(px_rail_t *r) { return r->ops->iface_fd(r->iface); }

int px_rail_lossy(px_rail_t *r) { return r->lossy; }

const char *px_rail_net_name(px_rail_t *r) { return r->ops->name; }

/* Payload bytes of a frame that travels as one datagram on every usable
 * subchannel of vc (0: not known). */
static size_t px_rail_vc_one(const px_rail_vc_t *vc)
{
    size_t one = 0;
    for (int i = 0; i < vc->nsub; i++) {
        size_t f = vc->sub[i].info.frame_one;
        if (f > PX_NET_HDR_MAX && px_rail_usable(&vc->sub[i]) && (!one || f - PX_NET_HDR_MAX < one))
            one = f - PX_NET_HDR_MAX;
    }
    return one;
}

/* What the bulk lanes deliver in a quarter of PX_RAIL_BULK_HOLD_NS,
 * between 4 KB and PX_LANE_BULK_FRAME (that until a rate is measured): no
 * frame holds its lane long, and the two px_rail_bulk_max lets out at
 * least are acknowledged well within PX_RAIL_BULK_HOLD_NS. */
size_t px_rail_bulk_frame(const px_rail_vc_t *vc)
{
    size_t f = px_params.lane_bulk_frame;
    double rate = px_rail_bulk_rate(vc), t = rate * (double)(PX_RAIL_BULK_HOLD_NS / 4);
    if (rate > 0 && t < (double)f)
        f = t < 4096 ? 4096 : (size_t)t & ~(size_t)1023;
    return f;
}

size_t px_rail_vc_chunk(px_rail_vc_t *vc, size_t chunk)
{
    /* class lanes: a bulk frame holds its lane briefly, so the frames of
     * the other lanes go out between its frames */
    if (vc->nlane > 1 && !px_lane_plan.distribute) {
        size_t f = px_rail_bulk_frame(vc);
        if (chunk > f)
            chunk = f;
    } else if (vc->npair == 1) {
        /* one lane and one path: as long as the connection carries in a
         * few milliseconds, so that the answers going the same way pass
         * between the frames (px_net_ops_t.ep_frame). Frames striped over
         * several paths keep their size: each path carries a part, and
         * the parts a failed path leaves are cut again by the survivors'
         * weights (px_rail_resplit), which needs large parts. */
        px_rail_sub_t *s = &vc->sub[0];
        size_t f = s->ep ? vc->rail->ops->ep_frame(s->ep) : 0;
        if (f && chunk > f)
            chunk = f;
    }
    if (__builtin_expect(!vc->small_frames, 1))
        return chunk;
    size_t one = px_rail_vc_one(vc);
    return one && one < chunk ? one : chunk;
}

/* An eager message is one frame: under heavy loss one of several datagrams
 * is lost with any of them, and then sent again whole, so a message larger
 * than a datagram goes by rendezvous, in one-datagram frames. */
size_t px_rail_vc_eager(px_rail_vc_t *vc, size_t lim)
{
    if (__builtin_expect(!vc->small_frames, 1))
        return lim;
    size_t one = px_rail_vc_one(vc);
    return one && one < lim ? one : lim;
}

size_t px_rail_eager_limit(px_rail_t *rail) { return rail->attr.eager_limit; }

size_t px_rail_max_frame(px_rail_t *rail) { return rail->frame_max; }

int px_rail_vc_used(const px_rail_vc_t *vc) { return !vc->failed && (vc->tx_seq || vc->rx_next); }

/* The i-th channel a quiescence concerns: the listed peers' (peers[i]), or
 * every channel that carried frames (peers NULL, i < r->nvc); NULL: none. */
static px_rail_vc_t *px_rail_q_vc(px_rail_t *r, const int *peers, int i)
{
    px_rail_vc_t *vc;
    if (!peers) {
        vc = r->vlist[i];
        return px_rail_vc_used(vc) ? vc : NULL;
    }
    vc = peers[i] >= 0 && peers[i] < r->nranks ? r->vcs[peers[i]] : NULL;
    return vc && !vc->failed ? vc : NULL;
}

void px_rail_done_begin(px_rail_t *r, const int *peers, int n)
{
    for (int i = 0; i < (peers ? n : r->nvc); i++) {
        px_rail_vc_t *vc = px_rail_q_vc(r, peers, i);
        if (vc)
            vc->done_epoch++;
    }
}

void px_rail_send_done(px_rail_t *r, const int *peers, int n)
{
    r->now = px_time_ns();
    for (int i = 0; i < (peers ? n : r->nvc); i++) {
        px_rail_vc_t *vc = px_rail_q_vc(r, peers, i);
        if (!vc)
            continue;
        int si = px_rail_best(vc, PX_SUB_SUSPECT);
        if (si >= 0) {
            uint64_t w[PX_RAIL_SACK_WORDS];
            px_rail_rx_bitmap(vc, w);
            px_rail_send_ctl(vc, si, PX_RAIL_DONE, 0, vc->done_epoch, w[0]);
        }
    }
}

int px_rail_peers_done(px_rail_t *r, const int *peers, int n, char *missing, size_t len)
{
    int done = 1;
    size_t k = 0;
    if (missing && len)
        missing[0] = 0;
    for (int i = 0; i < (peers ? n : r->nvc); i++) {
        px_rail_vc_t *vc = px_rail_q_vc(r, peers, i);
        if (!vc || (int32_t)(vc->peer_epoch - vc->done_epoch) >= 0)
            continue;
        done = 0;
        if (!missing)
            break;
        if (k < len)
            k += (size_t)snprintf(missing + k, len - k, "%s%d", k ? " " : "", vc->rank);
    }
    return done;
}

/* One line of what a channel holds, for a job that seems stuck: what it
 * sent and had acknowledged, the oldest frame out (which the peer needs
 * before it acknowledges the ones after it), what it received, and what
 * waits on each subchannel. */
int px_rail_vc_dump(px_rail_vc_t *vc, char *buf, size_t len)
{
    static const char *const st[] = {"up", "suspect", "down"};
    static const char *const rx[] = {"", " receiving", " holding", " skipping"};
    int held = 0;
    for (px_rail_held_t *h = vc->held; h; h = h->next)
        held++;
    uint64_t now = px_time_ns();
    size_t n = (size_t)snprintf(
        buf, len,
        "sent %u acked %u (ordered %u), received %u (next ordered %u)%s%s%s%s held %d orphans "
        "%d split %d moved %.1f MB%s",
        vc->tx_seq, vc->tx_acked, vc->tx_oseq, vc->rx_next, vc->rx_onext,
        px_list_empty(&vc->backlog) ? "" : ", backlog",
        px_list_empty(&vc->deferred) ? "" : ", deferred stripes",
        vc->resend_pending ? ", resend pending" : "", vc->ack_due ? ", ack due" : "", held,
        vc->norphan, vc->nsplit, (double)vc->moved_bytes / 1e6, vc->failed ? ", FAILED" : "");
    const px_rail_tx_t *x = vc->tx[vc->tx_acked & (vc->tx_cap - 1)];
    if (vc->tx_acked != vc->tx_seq && x && x->seq == vc->tx_acked && n < len)
        n += (size_t)snprintf(buf + n, len - n,
                              "; oldest out %u: %zu bytes on sub %d %.2f s ago%s%s, last frame "
                              "acknowledged %.2f s ago",
                              x->seq, x->len, x->sub, (double)px_since(now, x->t_sent) / 1e9,
                              x->resend ? ", to go again" : "", x->wire ? ", being written" : "",
                              vc->frame_ack_ns ? (double)px_since(now, vc->frame_ack_ns) / 1e9
                                               : -1.0);
    for (int i = 0; i < vc->nsub && n < len; i++) {
        const px_rail_sub_t *s = &vc->sub[i];
        const px_net_ops_t *ops = vc->rail->ops;
        n += (size_t)snprintf(buf + n, len - n, "; %s %s%s%s unacked %u queued %zu%s%s%s",
                              s->info.label, st[s->state], s->late ? " late" : "",
                              s->moved ? " moved" : "", s->unacked, ops->ep_pending(s->ep),
                              rx[s->rx_state & 3], *ops->ep_describe(s->ep) ? ", " : "",
                              ops->ep_describe(s->ep));
    }
    return n < len ? (int)n : (int)len - 1;
}
