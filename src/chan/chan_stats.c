/* The channel layer's counters and those of the rails below it, for the
 * tool interface (src/util/tool.h): summed over every peer when read. */
#include "chan_impl.h"
#include "../util/param.h"
#include "../util/tool.h"

#include <string.h>

/* counters.def has a msgs and a bytes row per kind of carrier, in order */
_Static_assert(PX_CTR_chan_self_bytes - PX_CTR_chan_self_msgs == PX_CAR_N &&
                   PX_CTR_chan_fenced - PX_CTR_chan_self_bytes == PX_CAR_N,
               "one chan_<kind>_msgs and chan_<kind>_bytes row per PX_CAR_* in counters.def");

void px_chan_counters_add(uint64_t *c)
{
    if (!px_c.peers)
        return;
    for (int r = 0; r < px_c.boot.size; r++) {
        const px_chan_t *p = &px_c.peers[r];
        for (int k = 0; k < PX_CAR_N; k++) {
            c[PX_CTR_chan_self_msgs + k] += p->car_msgs[k];
            c[PX_CTR_chan_self_bytes + k] += p->car_bytes[k];
        }
        c[PX_CTR_chan_fenced] += p->fenced;
    }
    c[PX_CTR_chan_connections_opened] += (uint64_t)px_c.rc_out;
    c[PX_CTR_chan_connections_accepted] += (uint64_t)px_c.rc_in;
    if (px_c.rail)
        px_rail_counters_add(px_c.rail, c);
    if (px_c.rail_rc)
        px_rail_counters_add(px_c.rail_rc, c);
}

int px_chan_size_in_effect(const char *param, uint64_t *value_p)
{
    if (!px_c.peers)
        return 0;
    if (!strcmp(param, "shm_eager_limit")) {
        *value_p = px_c.shm_eager;
        return 1;
    }
    if (!strcmp(param, "rc_promote_size") && px_c.rail_rc) {
        *value_p = px_c.rc_size;
        return 1;
    }
    return 0;
}
