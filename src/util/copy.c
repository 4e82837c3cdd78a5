/* Copies of large blocks (see copy.h). */
#include "copy.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

int px_copy_movsb;

void px_copy_init(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    /* CPUID leaf 7: EBX bit 9, enhanced REP MOVSB/STOSB */
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
        px_copy_movsb = (b >> 9) & 1;
#endif
}
