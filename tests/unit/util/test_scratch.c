/* Unit tests of the kept scratch blocks: a large block given back is
 * handed out again (same address) to a request it can hold, the smallest
 * that holds it first; small blocks and blocks past the byte limit are not
 * kept; at most PX_SCRATCH_KEEP blocks, the smallest given up first; every
 * block is usable over its whole size and aligned as malloc's. */
#include "px_unit.h"
#include "util/scratch.h"

#include <stdint.h>
#include <string.h>

static void *get_filled(size_t n)
{
    unsigned char *p = px_scratch_get(n);
    CHECK(p != NULL);
    if (p) {
        CHECK(((uintptr_t)p & 15) == 0);
        memset(p, 0x5a, n);
        CHECK(p[0] == 0x5a && p[n - 1] == 0x5a);
    }
    return p;
}

int main(void)
{
    const size_t M = PX_SCRATCH_MIN;
    int blocks = -1;
    CHECK(px_scratch_kept(&blocks) == 0 && blocks == 0);

    /* small: served, not kept */
    void *s = get_filled(100);
    px_scratch_put(s);
    CHECK(px_scratch_kept(&blocks) == 0 && blocks == 0);
    px_scratch_put(NULL);

    /* large: kept and handed out again to a request it holds */
    void *a = get_filled(4 * M);
    px_scratch_put(a);
    CHECK(px_scratch_kept(&blocks) == 4 * M && blocks == 1);
    void *b = get_filled(3 * M);
    CHECK(b == a);
    CHECK(px_scratch_kept(&blocks) == 0 && blocks == 0);
    /* a larger request than any kept block gets a new one */
    px_scratch_put(b);
    void *c = get_filled(5 * M);
    CHECK(c != a);
    CHECK(px_scratch_kept(&blocks) == 4 * M && blocks == 1);
    px_scratch_put(c);
    CHECK(px_scratch_kept(&blocks) == 9 * M && blocks == 2);
    /* the smallest kept block that holds the request */
    void *d = get_filled(2 * M);
    CHECK(d == a);
    void *e = get_filled(2 * M);
    CHECK(e == c);
    CHECK(px_scratch_kept(&blocks) == 0 && blocks == 0);
    px_scratch_put(d);
    px_scratch_put(e);

    /* at most PX_SCRATCH_KEEP blocks: giving back one more frees the
     * smallest if it is smaller, else the one given back */
    px_scratch_release();
    void *k[PX_SCRATCH_KEEP + 2];
    for (int i = 0; i < PX_SCRATCH_KEEP + 2; i++)
        k[i] = get_filled((size_t)(i + 1) * M);
    for (int i = 1; i < PX_SCRATCH_KEEP + 1; i++)
        px_scratch_put(k[i]); /* sizes 2..KEEP+1 */
    size_t want = 0;
    for (int i = 2; i <= PX_SCRATCH_KEEP + 1; i++)
        want += (size_t)i * M;
    CHECK(px_scratch_kept(&blocks) == want && blocks == PX_SCRATCH_KEEP);
    px_scratch_put(k[0]); /* 1 M: smaller than every kept one, freed */
    CHECK(px_scratch_kept(&blocks) == want && blocks == PX_SCRATCH_KEEP);
    px_scratch_put(k[PX_SCRATCH_KEEP + 1]); /* replaces the 2 M block */
    want += (size_t)(PX_SCRATCH_KEEP + 2) * M - 2 * M;
    CHECK(px_scratch_kept(&blocks) == want && blocks == PX_SCRATCH_KEEP);
    CHECK(px_scratch_get(2 * M) == k[2]); /* the 2 M one is gone: 3 M serves */
    px_scratch_put(k[2]);

    /* a block larger than the byte limit is never kept */
    px_scratch_release();
    CHECK(px_scratch_kept(&blocks) == 0 && blocks == 0);
    void *huge = px_scratch_get(PX_SCRATCH_KEEP_BYTES + 1);
    CHECK(huge != NULL);
    px_scratch_put(huge);
    CHECK(px_scratch_kept(&blocks) == 0 && blocks == 0);
    return px_unit_report();
}
