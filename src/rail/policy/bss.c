/* bss: striped blocks over the PX_RAIL_BSS_BATCH subchannels with the best
 * estimated throughput, in proportion to it; a subchannel left out for
 * PX_RAIL_RETRY gets a small probe stripe so that a path that has
 * recovered climbs back into the batch. */
#include "../rail_policy.h"

static int px_rail_bss_split(px_rail_vc_t *vc, double *share, int worst)
{
    int n = vc->npair, order[PX_NET_MAX_SUB], m = 0, batch = px_params.rail_bss_batch;
    uint64_t now = px_time_ns(), retry = (uint64_t)(px_params.rail_retry * 1e9);
    for (int i = 0; i < n; i++) {
        share[i] = 0;
        if (vc->sub[i].state <= worst)
            order[m++] = i;
    }
    for (int i = 1; i < m; i++)
        for (int j = i; j > 0 && vc->sub[order[j]].est_mbs > vc->sub[order[j - 1]].est_mbs; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    if (batch > m)
        batch = m;
    double sum = 0;
    for (int i = 0; i < batch; i++)
        sum += vc->sub[order[i]].est_mbs;
    for (int i = 0; i < batch; i++)
        share[order[i]] = sum > 0 ? vc->sub[order[i]].est_mbs / sum : 1.0 / batch;
    /* what the probe measures replaces the old estimate */
    for (int k = batch; k < m; k++) {
        px_rail_sub_t *c = &vc->sub[order[k]];
        uint64_t last = c->last_use_ns > c->last_ack_ns ? c->last_use_ns : c->last_ack_ns;
        if ((c->warm || c->probing) && px_since(now, last) > retry) {
            double probe = px_params.rail_min_share > 0 ? px_params.rail_min_share : 0.05;
            for (int i = 0; i < batch; i++)
                share[order[i]] *= 1 - probe;
            share[order[k]] = probe;
            c->ew_bytes = c->ew_ns = 0;
            c->probing = 1;
            return batch + 1;
        }
    }
    return batch;
}

static void px_rail_bss_learn(px_rail_vc_t *vc, const double *rate, int nparts)
{
    double a = px_params.rail_alpha;
    (void)nparts;
    for (int i = 0; i < vc->npair; i++)
        if (rate[i] >= 0) {
            px_rail_sub_t *c = &vc->sub[i];
            if (c->probing) {
                /* a probe is a small stripe that a rested link's queues and
                 * token buckets take at once: it can show the subchannel is as
                 * good as the best working one, never better, so a path that
                 * is still slow costs one block in the batch, not several */
                double best = 0;
                for (int j = 0; j < vc->npair; j++)
                    if (j != i && px_rail_usable(&vc->sub[j]) && vc->sub[j].est_mbs > best)
                        best = vc->sub[j].est_mbs;
                c->est_mbs = best > 0 && rate[i] > best ? best : rate[i];
            } else {
                c->est_mbs = (1 - a) * c->est_mbs + a * rate[i];
            }
            c->probing = 0;
        }
    for (int i = 0; i < vc->npair; i++)
        px_trace("rail", "rank %d sub %d: measured %.1f MB/s, estimate %.1f MB/s", vc->rank, i,
                 rate[i], vc->sub[i].est_mbs);
}

static double px_rail_bss_share(const px_rail_vc_t *vc, int sub)
{
    double sum = 0;
    for (int k = 0; k < vc->npair; k++)
        sum += vc->sub[k].est_mbs;
    return sum > 0 ? vc->sub[sub].est_mbs / sum : 0;
}

const px_rail_policy_ops_t px_rail_policy_bss = {
    .name = "bss",
    .stripes = px_rail_policy_stripe_always,
    .split = px_rail_bss_split,
    .learn = px_rail_bss_learn,
    .share = px_rail_bss_share,
};
