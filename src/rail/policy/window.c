/* window: PX_RAIL_WINDOW frames in a row on one subchannel, then the next. */
#include "../rail_policy.h"

static int px_rail_window_pick(px_rail_vc_t *vc, unsigned flags)
{
    (void)flags;
    if (vc->rr_left <= 0) {
        vc->rr = (vc->rr + 1) % vc->npair;
        vc->rr_left = px_params.rail_window;
    }
    vc->rr_left--;
    return vc->rr;
}

const px_rail_policy_ops_t px_rail_policy_window = {
    .name = "window",
    .pick = px_rail_window_pick,
};
