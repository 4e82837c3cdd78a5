/* wrr: frames over the subchannels in proportion to their weights (smooth
 * weighted round-robin), none striped. Also how frames of a striped block
 * are spread over a lossy transport, whose frames are small. */
#include "../rail_policy.h"

static int px_rail_wrr_pick(px_rail_vc_t *vc, unsigned flags)
{
    int best = -1;
    (void)flags;
    for (int i = 0; i < vc->npair; i++) {
        if (!px_rail_usable(&vc->sub[i]))
            continue;
        vc->sub[i].wrr_cur += vc->sub[i].weight;
        if (best < 0 || vc->sub[i].wrr_cur > vc->sub[best].wrr_cur)
            best = i;
    }
    if (best >= 0)
        vc->sub[best].wrr_cur -= 1.0;
    return best;
}

const px_rail_policy_ops_t px_rail_policy_wrr = {
    .name = "wrr",
    .pick = px_rail_wrr_pick,
};
