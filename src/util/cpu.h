/* Processor hints shared by the shared-memory paths. */
#ifndef PX_UTIL_CPU_H
#define PX_UTIL_CPU_H

/* Asks for the cache line at p in exclusive state, ahead of a store to it
 * (what __builtin_prefetch(p, 1) gives on x86 only with -mprfchw; a no-op
 * on processors without it). Changes no memory. */
static inline void px_prefetchw(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("prefetchw %0" ::"m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1);
#endif
}

#endif
