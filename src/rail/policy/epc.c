/* epc: data the caller waits for at once (PX_RAIL_F_WAITED: a blocking
 * call, a collective's step) is striped adaptively; other data goes whole,
 * round-robin over the subchannels, so many nonblocking messages in flight
 * use every rail without the cost of splitting each. */
#include "../rail_policy.h"

static int px_rail_epc_pick(px_rail_vc_t *vc, unsigned flags)
{
    if ((flags & PX_RAIL_F_STRIPE) && !(flags & PX_RAIL_F_WAITED))
        return px_rail_policy_next_rr(vc);
    return vc->primary;
}

static int px_rail_epc_stripes(const px_rail_vc_t *vc, unsigned flags)
{
    (void)vc;
    return (flags & PX_RAIL_F_WAITED) != 0;
}

const px_rail_policy_ops_t px_rail_policy_epc = {
    .name = "epc",
    .pick = px_rail_epc_pick,
    .stripes = px_rail_epc_stripes,
    .learn = px_rail_policy_adaptive_learn,
};
