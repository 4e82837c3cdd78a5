/* Intrusive doubly linked list (circular, with a head sentinel). */
#ifndef PX_LIST_H
#define PX_LIST_H

#include <stddef.h>

typedef struct px_list {
    struct px_list *next, *prev;
} px_list_t;

#define PX_LIST_INIT(name)                                                                         \
    {                                                                                              \
        &(name), &(name)                                                                           \
    }
#define px_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

static inline void px_list_init(px_list_t *h) { h->next = h->prev = h; }
static inline int px_list_empty(const px_list_t *h) { return h->next == h; }

static inline void px_list_insert_tail(px_list_t *h, px_list_t *e)
{
    e->prev = h->prev;
    e->next = h;
    h->prev->next = e;
    h->prev = e;
}

static inline void px_list_insert_head(px_list_t *h, px_list_t *e)
{
    e->next = h->next;
    e->prev = h;
    h->next->prev = e;
    h->next = e;
}

static inline void px_list_del(px_list_t *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->next = e->prev = e;
}

/* Moves every entry of `from` to the end of `to` (from is left empty):
 * a queue detached before its entries' callbacks run, which may queue
 * again. */
static inline void px_list_splice_tail(px_list_t *to, px_list_t *from)
{
    if (px_list_empty(from))
        return;
    from->next->prev = to->prev;
    to->prev->next = from->next;
    from->prev->next = to;
    to->prev = from->prev;
    px_list_init(from);
}

#define px_list_for_each_safe(pos, tmp, head)                                                      \
    for (pos = (head)->next, tmp = pos->next; pos != (head); pos = tmp, tmp = pos->next)

#endif
