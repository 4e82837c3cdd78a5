/* adaptive (the default): striped blocks split by weights that follow what
 * each subchannel is measured to carry, W' = (1-a) W + a W_total r / sum(r)
 * over the subchannels of each block (a = PX_RAIL_ALPHA, r the measured
 * rates), never below PX_RAIL_MIN_SHARE. One whose weight would fall below
 * that floor would take longer for its floor share than the others for the
 * rest, and every block would wait for it: it rests (left out but for
 * probe stripes, px_rail_split) until a probe measures it above the floor. */
#include "../rail_policy.h"

void px_rail_policy_adaptive_learn(px_rail_vc_t *vc, const double *rate, int nparts)
{
    double a = px_params.rail_alpha, sum_rate = 0, sum_w = 0;
    int n = vc->npair;
    if (nparts < 2)
        return;
    for (int i = 0; i < n; i++)
        if (rate[i] >= 0) {
            sum_rate += rate[i];
            sum_w += vc->sub[i].weight;
        }
    if (sum_rate <= 0)
        return;
    double total = 0, floor = px_params.rail_min_share;
    for (int i = 0; i < n; i++) {
        px_rail_sub_t *s = &vc->sub[i];
        if (rate[i] >= 0) {
            int probe = s->probing;
            s->weight = (1 - a) * s->weight + a * sum_w * rate[i] / sum_rate;
            px_rail_rest(s, s->weight < floor);
            if (!s->resting && !probe) /* kept up outside a probe: no longer backed off */
                s->retry_ns = 0;
        }
        if (s->weight < floor)
            s->weight = floor;
        total += s->weight;
    }
    for (int i = 0; i < n; i++)
        vc->sub[i].weight /= total;
    px_rail_set_primary(vc);
    for (int i = 0; i < n; i++)
        px_trace("rail", "rank %d sub %d: measured %.1f MB/s, weight %.3f%s", vc->rank, i, rate[i],
                 vc->sub[i].weight, vc->sub[i].resting ? " (rests)" : "");
}

const px_rail_policy_ops_t px_rail_policy_adaptive = {
    .name = "adaptive",
    .stripes = px_rail_policy_stripe_always,
    .learn = px_rail_policy_adaptive_learn,
};
