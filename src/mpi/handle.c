#include "mpi_impl.h"

#include <stdlib.h>

int px_htab_add(px_htab_t *t, void *obj)
{
    int idx;
    if (t->nfree > 0) {
        idx = t->free_idx[--t->nfree];
    } else {
        if (t->n == t->cap) {
            int cap = t->cap ? t->cap * 2 : 64;
            void **o = realloc(t->obj, sizeof(*o) * (size_t)cap);
            if (!o)
                return -1;
            t->obj = o;
            int *f = realloc(t->free_idx, sizeof(*f) * (size_t)cap);
            if (!f)
                return -1;
            t->free_idx = f;
            t->cap = cap;
        }
        idx = t->n++;
    }
    t->obj[idx] = obj;
    return idx;
}

void px_htab_del(px_htab_t *t, int idx)
{
    if (idx < 0 || idx >= t->n || !t->obj[idx])
        return;
    t->obj[idx] = NULL;
    t->free_idx[t->nfree++] = idx;
}
