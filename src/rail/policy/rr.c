/* rr: frames round-robin over the subchannels, none striped. */
#include "../rail_policy.h"

static int px_rail_rr_pick(px_rail_vc_t *vc, unsigned flags)
{
    (void)flags;
    return px_rail_policy_next_rr(vc);
}

const px_rail_policy_ops_t px_rail_policy_rr = {
    .name = "rr",
    .pick = px_rail_rr_pick,
};
