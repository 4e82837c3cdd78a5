/* Kept scratch blocks (see scratch.h). Each block starts with a header
 * giving its size; the caller's memory follows it. */
#include "scratch.h"

#include <stdlib.h>

typedef struct {
    size_t cap; /* bytes after the header */
    size_t pad; /* keeps the caller's memory aligned as malloc's */
} px_scratch_hdr_t;

static px_scratch_hdr_t *px_kept[PX_SCRATCH_KEEP];
static int px_nkept;
static size_t px_kept_bytes;

void *px_scratch_get(size_t bytes)
{
    if (bytes >= PX_SCRATCH_MIN) {
        int best = -1; /* the smallest kept block that holds it */
        for (int i = 0; i < px_nkept; i++)
            if (px_kept[i]->cap >= bytes && (best < 0 || px_kept[i]->cap < px_kept[best]->cap))
                best = i;
        if (best >= 0) {
            px_scratch_hdr_t *h = px_kept[best];
            px_kept[best] = px_kept[--px_nkept];
            px_kept_bytes -= h->cap;
            return h + 1;
        }
    }
    px_scratch_hdr_t *h = malloc(sizeof(*h) + (bytes ? bytes : 1));
    if (!h)
        return NULL;
    h->cap = bytes;
    return h + 1;
}

void px_scratch_put(void *p)
{
    if (!p)
        return;
    px_scratch_hdr_t *h = (px_scratch_hdr_t *)p - 1;
    if (h->cap < PX_SCRATCH_MIN || h->cap > PX_SCRATCH_KEEP_BYTES) {
        free(h);
        return;
    }
    /* room made by freeing the smallest kept blocks, if they are smaller */
    while (px_nkept == PX_SCRATCH_KEEP || px_kept_bytes + h->cap > PX_SCRATCH_KEEP_BYTES) {
        int small = 0;
        for (int i = 1; i < px_nkept; i++)
            if (px_kept[i]->cap < px_kept[small]->cap)
                small = i;
        if (!px_nkept || px_kept[small]->cap >= h->cap) {
            free(h);
            return;
        }
        px_kept_bytes -= px_kept[small]->cap;
        free(px_kept[small]);
        px_kept[small] = px_kept[--px_nkept];
    }
    px_kept[px_nkept++] = h;
    px_kept_bytes += h->cap;
}

void px_scratch_release(void)
{
    while (px_nkept)
        free(px_kept[--px_nkept]);
    px_kept_bytes = 0;
}

size_t px_scratch_kept(int *blocks)
{
    if (blocks)
        *blocks = px_nkept;
    return px_kept_bytes;
}
