#include "clock.h"

double px_time_sec(void)
{
    static uint64_t t0;
    uint64_t now = px_time_ns();
    if (!t0)
        t0 = now;
    return (double)(now - t0) * 1e-9;
}
