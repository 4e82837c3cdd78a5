/* Scratch memory that large operations take and give back on every call
 * (a collective's temporary buffers). A block given back is kept, up to
 * PX_SCRATCH_KEEP blocks and PX_SCRATCH_KEEP_BYTES in all, and the next
 * request it can hold takes it again: its pages stay mapped. Otherwise
 * glibc gives such blocks back to the kernel on free (blocks from 128 KB
 * are mappings of their own, and the top of the heap is trimmed past
 * twice that), and every call then pays a page fault per 4 KB it touches.
 * Small requests go to malloc alone. At most 64 MB stay kept, as much as
 * glibc itself keeps at the top of its heap once its thresholds have
 * adapted (32 MB blocks, trimmed past twice that). Not thread-safe:
 * callers hold the library's lock (every MPI call does). */
#ifndef PX_UTIL_SCRATCH_H
#define PX_UTIL_SCRATCH_H

#include <stddef.h>

/* requests from this size are served from the kept blocks */
#define PX_SCRATCH_MIN ((size_t)64 << 10)
#define PX_SCRATCH_KEEP 8
#define PX_SCRATCH_KEEP_BYTES ((size_t)64 << 20)

/* At least `bytes` (aligned as malloc's), or NULL. */
void *px_scratch_get(size_t bytes);
/* Gives back a block of px_scratch_get (NULL: nothing). */
void px_scratch_put(void *p);
/* Frees every kept block (at finalize). */
void px_scratch_release(void);
/* Blocks and bytes kept now (tests). */
size_t px_scratch_kept(int *blocks);

#endif
