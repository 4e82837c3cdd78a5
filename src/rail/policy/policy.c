/* What the striping policies share: the registry, and the steps around a
 * policy's choice (one subchannel, fallbacks, measured rates). */
#include "../rail_policy.h"

#include <stdio.h>

static const px_rail_policy_ops_t *const px_rail_policies[] = {
    &px_rail_policy_bind,     &px_rail_policy_rr,   &px_rail_policy_wrr,
    &px_rail_policy_window,   &px_rail_policy_even, &px_rail_policy_weighted,
    &px_rail_policy_adaptive, &px_rail_policy_bss,  &px_rail_policy_epc,
};
#define PX_RAIL_NPOLICIES (sizeof(px_rail_policies) / sizeof(px_rail_policies[0]))

const px_rail_policy_ops_t *px_rail_policy_find(const char *name, char *names, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < PX_RAIL_NPOLICIES; i++) {
        if (name && !strcmp(name, px_rail_policies[i]->name))
            return px_rail_policies[i];
        if (names && o < len)
            o += (size_t)snprintf(names + o, len - o, "%s%s", i ? ", " : "",
                                  px_rail_policies[i]->name);
    }
    return NULL;
}

int px_rail_policy_stripe_always(const px_rail_vc_t *vc, unsigned flags)
{
    (void)vc;
    (void)flags;
    return 1;
}

int px_rail_policy_next_rr(px_rail_vc_t *vc)
{
    vc->rr = (vc->rr + 1) % vc->npair;
    return vc->rr;
}

void px_rail_set_primary(px_rail_vc_t *vc)
{
    int best = 0;
    for (int i = 1; i < vc->npair; i++)
        if (vc->sub[i].weight > vc->sub[best].weight * 1.001)
            best = i;
    vc->primary = best;
}

int px_rail_lane_sub(px_rail_vc_t *vc, int p, int c)
{
    const px_lane_plan_t *lp = &px_lane_plan;
    int first = 0, count = vc->nlane;
    unsigned start = 0;
    if (!lp->distribute) {
        first = lp->first[c];
        count = lp->count[c];
    }
    if (count > 1)
        start = vc->lane_rr++;
    for (int k = 0; k < count; k++) {
        int si = (first + (int)((start + (unsigned)k) % (unsigned)count)) * vc->npair + p;
        if (px_rail_usable(&vc->sub[si]))
            return si;
    }
    /* the class's lanes are out: the nearest class's, a less urgent one
     * first, so that bulk data does not land on the small-message lane
     * while a medium one works */
    if (!lp->distribute)
        for (int d = 1; d < PX_LANE_NCLASS; d++)
            for (int sgn = 1; sgn >= -1; sgn -= 2) {
                int cc = c + sgn * d;
                if (cc < 0 || cc >= PX_LANE_NCLASS)
                    continue;
                for (int l = lp->first[cc]; l < lp->first[cc] + lp->count[cc] && l < vc->nlane; l++)
                    if (px_rail_usable(&vc->sub[l * vc->npair + p]))
                        return l * vc->npair + p;
            }
    for (int l = 0; l < vc->nlane; l++)
        if (px_rail_usable(&vc->sub[l * vc->npair + p]))
            return l * vc->npair + p;
    return -1;
}

/* Subchannel of a frame of len bytes that goes whole, or -1 when none
 * works: the policy picks the address pair, the lane policy its lane. */
int px_rail_pick(px_rail_vc_t *vc, unsigned flags, size_t len)
{
    const px_rail_policy_ops_t *pol = vc->rail->policy;
    int si;
    if (vc->nsub == 1)
        return vc->sub[0].state == PX_SUB_DOWN ? -1 : 0;
    if (vc->single)
        pol = &px_rail_policy_bind;
    else if (vc->rail->lossy && (flags & PX_RAIL_F_STRIPE) && px_rail_stripes(vc, flags))
        pol = &px_rail_policy_wrr; /* frames are small: striping spreads whole ones by weight */
    si = pol->pick ? pol->pick(vc, flags) : vc->primary;
    if (__builtin_expect(vc->nlane > 1, 0) && si >= 0 && !vc->single)
        si = px_rail_lane_sub(vc, si, px_rail_lane_class(flags, len));
    if (si >= 0 && px_rail_usable(&vc->sub[si]))
        return si;
    si = px_rail_best(vc, PX_SUB_UP);
    return si >= 0 ? si : px_rail_best(vc, PX_SUB_SUSPECT);
}

int px_rail_stripes(px_rail_vc_t *vc, unsigned flags)
{
    const px_rail_policy_ops_t *pol = vc->rail->policy;
    if (__builtin_expect(vc->single, 0))
        return 0;
    return pol->stripes && pol->stripes(vc, flags);
}

/* The share of each subchannel in a striped block (0 for those left out or
 * not working); returns how many get a share. By weight unless the policy
 * splits otherwise; a subchannel that rests (px_rail_rest) is left out but
 * for a probe stripe now and then, at PX_RAIL_RETRY after its last stripe,
 * then twice as long after each probe (up to PX_RAIL_RETRY_MAX times), so a
 * path that stays slow costs few blocks a stall and one that recovers is
 * found again. */
int px_rail_split(px_rail_vc_t *vc, double *share)
{
    const px_rail_policy_ops_t *pol = vc->rail->policy;
    int n = vc->npair, worst = PX_SUB_UP, ok = 0;
    for (int i = 0; i < n; i++)
        ok += px_rail_usable(&vc->sub[i]);
    if (!ok) { /* only suspects left: better than waiting */
        worst = PX_SUB_SUSPECT;
        for (int i = 0; i < n; i++)
            ok += vc->sub[i].state == PX_SUB_SUSPECT;
        if (!ok)
            return 0;
    }
    if (pol->split)
        return pol->split(vc, share, worst);
    double sum = 0;
    int k = 0, probe = -1;
    uint64_t now = px_time_ns();
    for (int i = 0; i < n; i++) {
        px_rail_sub_t *s = &vc->sub[i];
        share[i] = s->state > worst || s->resting ? 0 : s->weight;
        sum += share[i];
        k += share[i] > 0;
        if (share[i] == 0 && s->state <= worst && s->resting && probe < 0 &&
            px_since(now, s->last_use_ns) >= s->retry_ns)
            probe = i;
    }
    if (!k) { /* every working one rests: by weight all the same */
        for (int i = 0; i < n; i++) {
            share[i] = vc->sub[i].state > worst ? 0 : vc->sub[i].weight;
            sum += share[i];
        }
    } else if (probe >= 0) {
        /* a probe stripe at its weight (the floor); only what it measures
         * decides whether it comes back */
        px_rail_sub_t *s = &vc->sub[probe];
        share[probe] = s->weight;
        sum += s->weight;
        s->ew_bytes = s->ew_ns = 0;
        s->probing = 1;
        uint64_t max = (uint64_t)(PX_RAIL_RETRY_MAX * px_params.rail_retry * 1e9);
        s->retry_ns = 2 * s->retry_ns < max ? 2 * s->retry_ns : max;
    }
    for (int i = 0; i < n; i++)
        share[i] = sum > 0 ? share[i] / sum : 0;
    return k ? k + (probe >= 0) : ok;
}

void px_rail_rest(px_rail_sub_t *s, int on)
{
    if (on && !s->retry_ns)
        s->retry_ns = (uint64_t)(px_params.rail_retry * 1e9);
    s->resting = on;
    s->probing = 0;
}

/* A striped block is acknowledged: the policy learns from what each
 * subchannel carried lately. */
void px_rail_learn(px_rail_vc_t *vc, px_rail_msg_t *m)
{
    const px_rail_policy_ops_t *pol = vc->rail->policy;
    double rate[PX_NET_MAX_SUB];
    if (!pol->learn || !m->warm || m->resent || m->nparts < 1)
        return;
    for (int i = 0; i < vc->npair; i++)
        rate[i] = -1;
    for (int k = 0; k < m->nparts; k++) {
        px_rail_sub_t *sub = px_rail_rep(vc, m->part[k].sub);
        /* a ratio of averages: acknowledgements that arrive in bursts (a
         * short interval after a long one) do not skew it */
        rate[sub->idx] = sub->ew_bytes / (sub->ew_ns > 1000 ? sub->ew_ns : 1000) * 1e3;
    }
    pol->learn(vc, rate, m->nparts);
}
