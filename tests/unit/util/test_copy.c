/* Unit tests of px_copy: every byte of blocks around the size from which
 * it may take the string instruction, at source and destination offsets
 * that share their place in a cache line or not, and nothing written
 * beside them; and the processor feature it relies on read as the kernel
 * reports it. */
#include "px_unit.h"
#include "util/copy.h"

#include <stdlib.h>
#include <string.h>

#define GUARD 64

/* "erms" among the flags of the first processor in /proc/cpuinfo: 1, 0,
 * or -1 when it cannot be read (not Linux on x86) */
static int cpuinfo_erms(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return -1;
    char line[8192];
    int found = -1;
    while (found < 0 && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "flags", 5))
            continue;
        found = strstr(line, " erms ") || strstr(line, " erms\n");
    }
    fclose(f);
    return found;
}

int main(void)
{
    px_copy_init();
#if defined(__x86_64__)
    int erms = cpuinfo_erms();
    if (erms >= 0)
        CHECK(px_copy_movsb == erms);
#endif
    static const size_t sizes[] = {1,
                                   63,
                                   4096,
                                   PX_COPY_MOVSB_MIN - 1,
                                   PX_COPY_MOVSB_MIN,
                                   PX_COPY_MOVSB_MIN + 63,
                                   3 * PX_COPY_MOVSB_MIN + 5};
    static const size_t offs[][2] = {{0, 0}, {64, 0}, {8, 0}, {0, 8}, {4096, 4096 + 64}, {17, 17}};
    size_t max = 3 * PX_COPY_MOVSB_MIN + 5 + 4096 + 64 + 2 * GUARD;
    unsigned char *src = aligned_alloc(4096, (max + 4095) / 4096 * 4096);
    unsigned char *dst = aligned_alloc(4096, (max + 4095) / 4096 * 4096);
    CHECK(src && dst);
    if (!src || !dst)
        return px_unit_report();
    for (size_t i = 0; i < max; i++)
        src[i] = (unsigned char)(i * 131 + (i >> 12));
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
        for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
            size_t n = sizes[s], so = GUARD + offs[k][0], d0 = GUARD + offs[k][1];
            memset(dst, 0xa5, max);
            px_copy(dst + d0, src + so, n);
            CHECK(!memcmp(dst + d0, src + so, n));
            int clean = 1;
            for (size_t i = d0 - GUARD; i < d0; i++)
                clean &= dst[i] == 0xa5;
            for (size_t i = d0 + n; i < d0 + n + GUARD; i++)
                clean &= dst[i] == 0xa5;
            CHECK(clean);
        }
    free(src);
    free(dst);
    return px_unit_report();
}
