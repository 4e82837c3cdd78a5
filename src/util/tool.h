/* What the layers show to the tool information interface (MPI_T,
 * src/mpi/tool): the counters they keep, by index (counters.def), and the
 * events they raise. Both are named here, at the bottom, so that the
 * layer that keeps a counter or raises an event and the interface above
 * name it alike. */
#ifndef PX_UTIL_TOOL_H
#define PX_UTIL_TOOL_H

enum {
#define PX_COUNTER(name, category, cls, doc) PX_CTR_##name,
#include "counters.def"
#undef PX_COUNTER
    PX_CTR_N
};

/* Events, with the ints each carries:
 *   PX_TOOL_EV_SUB_STATE  a subchannel changed state: peer (world rank),
 *                         subchannel index, old state, new state (0 UP,
 *                         1 SUSPECT, 2 DOWN), 1 on a datagram rail else 0 */
enum { PX_TOOL_EV_SUB_STATE, PX_TOOL_EV_N };
#define PX_TOOL_EV_DATA_MAX 8

/* Set by the interface while it is initialized; called where the event
 * happens (in progress, under the library's lock when it is on). */
typedef void (*px_tool_event_fn)(int event, const int *data, int n);
extern px_tool_event_fn px_tool_event_hook;

static inline void px_tool_event(int event, const int *data, int n)
{
    px_tool_event_fn fn = px_tool_event_hook;
    if (__builtin_expect(fn != 0, 0))
        fn(event, data, n);
}

#endif
