/* bind: each rank uses one rail for everything, chosen by local rank
 * (PX_RAIL_BIND): ranks of a node spread over the rails without striping.
 * Also what a channel limited to one subchannel uses (px_rail_vc_set_single). */
#include "../rail_policy.h"

static int px_rail_bind_pick(px_rail_vc_t *vc, unsigned flags)
{
    (void)flags;
    return vc->bind_sub;
}

const px_rail_policy_ops_t px_rail_policy_bind = {
    .name = "bind",
    .pick = px_rail_bind_pick,
};
