/* The checks of the unit tests: each counts as passed or failed, and a
 * program ends with "N passed, N failed" (px_unit_report). */
#ifndef PX_UNIT_H
#define PX_UNIT_H

#include <stdio.h>

static int px_unit_passed, px_unit_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond)                                                                                  \
            px_unit_passed++;                                                                      \
        else {                                                                                     \
            px_unit_failed++;                                                                      \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                        \
        }                                                                                          \
    } while (0)

static inline int px_unit_report(void)
{
    printf("%d passed, %d failed\n", px_unit_passed, px_unit_failed);
    return px_unit_failed ? 1 : 0;
}

#endif
