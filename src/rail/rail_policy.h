/* Striping policies: how a channel spreads its frames and striped blocks
 * over its subchannels (PX_RAIL_POLICY; docs/multirail.md). One file each
 * under policy/; policy/policy.c holds what they share and the registry. */
#ifndef PX_RAIL_POLICY_H
#define PX_RAIL_POLICY_H

#include "rail_impl.h"

struct px_rail_policy_ops {
    const char *name;
    /* The subchannel of a frame that goes whole. The caller takes the best
     * working one instead when it is not usable. NULL: the primary (the
     * largest weight). */
    int (*pick)(px_rail_vc_t *vc, unsigned flags);
    /* Whether a stripeable block of at least PX_RAIL_STRIPE_MIN bytes is
     * split over the subchannels. NULL: never. */
    int (*stripes)(const px_rail_vc_t *vc, unsigned flags);
    /* The share of each subchannel in a striped block, 0 for those worse
     * than `worst` (a PX_SUB_* state) or left out; returns how many get a
     * share. NULL: by weight. */
    int (*split)(px_rail_vc_t *vc, double *share, int worst);
    /* A striped block is acknowledged: rate[i] is what subchannel i carried
     * lately in bytes per microsecond, or -1 when it had no part of the
     * block. NULL: nothing to learn. */
    void (*learn)(px_rail_vc_t *vc, const double *rate, int nparts);
    /* A subchannel's share as shown by the counters. NULL: its weight. */
    double (*share)(const px_rail_vc_t *vc, int sub);
    /* Equal starting weights rather than by link speed (PX_RAIL_WEIGHTS). */
    int even;
};

extern const px_rail_policy_ops_t px_rail_policy_bind, px_rail_policy_rr, px_rail_policy_wrr,
    px_rail_policy_window, px_rail_policy_even, px_rail_policy_weighted, px_rail_policy_adaptive,
    px_rail_policy_bss, px_rail_policy_epc;

/* By name (NULL: unknown); `names` gets the accepted names for a message. */
const px_rail_policy_ops_t *px_rail_policy_find(const char *name, char *names, size_t len);

/* Shared by several policies. */
int px_rail_policy_stripe_always(const px_rail_vc_t *vc, unsigned flags);
int px_rail_policy_next_rr(px_rail_vc_t *vc);
void px_rail_policy_adaptive_learn(px_rail_vc_t *vc, const double *rate, int nparts);

#endif
