/* Copies of large blocks. */
#ifndef PX_UTIL_COPY_H
#define PX_UTIL_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Blocks from this size may take the string instruction (px_copy). */
#define PX_COPY_MOVSB_MIN (1u << 20)

/* 1 when the processor copies fast with `rep movsb` (ERMS), set once by
 * px_copy_init. */
extern int px_copy_movsb;

void px_copy_init(void);

/* memcpy for blocks that may be large. glibc (2.36) copies blocks larger
 * than the level-2 cache with a vector loop on AMD processors, and that
 * loop loses a good part of its speed when source and destination sit at
 * the same offset within a cache line (both page-aligned, as windows and
 * large allocations often are); `rep movsb` does not. Other blocks go to
 * memcpy. */
static inline void px_copy(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
    if (n >= PX_COPY_MOVSB_MIN && !(((uintptr_t)dst ^ (uintptr_t)src) & 63) && px_copy_movsb) {
        __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
        return;
    }
#endif
    memcpy(dst, src, n);
}

#endif
