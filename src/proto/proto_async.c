/* The progress thread (PX_ASYNC_PROGRESS): a process busy computing without
 * calling MPI still answers its peers, so that a passive-target epoch
 * against it, a rendezvous it should serve or a nonblocking collective it
 * takes part in completes in bounded time.
 *
 * The thread takes part only while no MPI call is under way: it takes the
 * library's lock (src/util/cs.h, on for the whole job) with a try, and an
 * MPI call that holds it is already making progress itself, so the thread
 * never waits for it nor makes it wait. Between two rounds it sleeps for
 * PX_ASYNC_POLL_NS. It does not wait in epoll for input: the program's own
 * calls take most input, and a thread woken for each message only to find
 * the lock taken costs the program a CPU it may need (two ranks on two
 * cores), where a timer costs a few microseconds every PX_ASYNC_POLL_NS. */
#include "proto_impl.h"
#include "../util/cs.h"
#include "../util/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define PX_ASYNC_POLL_NS 200000L
/* rounds of progress in one hold of the lock, while they find work */
#define PX_ASYNC_BURST 64

static pthread_t px_async_thread;
static int px_async_running;
static atomic_int px_async_stop;

static void px_async_nap(void)
{
    struct timespec ts = {0, PX_ASYNC_POLL_NS};
    nanosleep(&ts, NULL);
}

static void *px_async_main(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&px_async_stop, memory_order_acquire)) {
        px_async_nap();
        if (!px_cs_trylock())
            continue; /* an MPI call is under way: it progresses */
        for (int n = 0; n < PX_ASYNC_BURST && px_proto_progress() > 0; n++)
            ;
        px_cs_unlock();
    }
    return NULL;
}

px_status_t px_proto_async_start(void)
{
    if (px_async_running)
        return PX_OK;
    if (!px_cs_on) {
        px_error("proto", "the progress thread needs the library's lock on");
        return PX_ERR_INVALID_PARAM;
    }
    atomic_store(&px_async_stop, 0);
    int rc = pthread_create(&px_async_thread, NULL, px_async_main, NULL);
    if (rc) {
        px_error("proto", "cannot start the progress thread: %s", strerror(rc));
        return PX_ERR_NO_MEMORY;
    }
    px_async_running = 1;
    return PX_OK;
}

void px_proto_async_stop(void)
{
    if (!px_async_running)
        return;
    atomic_store_explicit(&px_async_stop, 1, memory_order_release);
    pthread_join(px_async_thread, NULL);
    px_async_running = 0;
}
