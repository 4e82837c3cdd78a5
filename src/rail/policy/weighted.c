/* weighted: striped blocks split by fixed weights, the link speeds of the
 * local interfaces or PX_RAIL_WEIGHTS. */
#include "../rail_policy.h"

const px_rail_policy_ops_t px_rail_policy_weighted = {
    .name = "weighted",
    .stripes = px_rail_policy_stripe_always,
};
