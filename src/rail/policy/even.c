/* even: striped blocks in equal parts over the working subchannels. */
#include "../rail_policy.h"

static int px_rail_even_split(px_rail_vc_t *vc, double *share, int worst)
{
    int ok = 0;
    for (int i = 0; i < vc->npair; i++)
        ok += (share[i] = vc->sub[i].state > worst ? 0 : 1.0) > 0;
    for (int i = 0; i < vc->npair; i++)
        share[i] /= ok;
    return ok;
}

const px_rail_policy_ops_t px_rail_policy_even = {
    .name = "even",
    .stripes = px_rail_policy_stripe_always,
    .split = px_rail_even_split,
    .even = 1,
};
