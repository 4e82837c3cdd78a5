#ifndef PX_CLOCK_H
#define PX_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t px_time_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Seconds since the first call in this process. */
double px_time_sec(void);

#endif
