/* Recursive global lock for MPI_THREAD_MULTIPLE (see cs.h).
 *
 * A test-and-set lock whose waiters spin briefly, then yield the CPU, and
 * never sleep: whichever waiter is running gets the lock as soon as it is
 * free. A sleeping mutex waiter is woken too late to win against a holder
 * that releases and retakes the lock in its wait loop; a ticket lock waits
 * for the next ticket's thread even when it is not running (with more
 * threads than cores, a whole time slice). */
#include "cs.h"

#include <pthread.h>
#include <sched.h>

int px_cs_on;

static int px_cs_locked;
static int px_cs_waiting; /* threads spinning in px_cs_take */
static pthread_t px_cs_owner;
static int px_cs_owned; /* px_cs_owner is valid */
static int px_cs_depth;

static inline void px_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static int px_cs_mine(void)
{
    return __atomic_load_n(&px_cs_owned, __ATOMIC_ACQUIRE) &&
           pthread_equal(px_cs_owner, pthread_self());
}

static void px_cs_take(void)
{
    if (__atomic_exchange_n(&px_cs_locked, 1, __ATOMIC_ACQUIRE)) {
        __atomic_add_fetch(&px_cs_waiting, 1, __ATOMIC_RELAXED);
        for (unsigned spin = 0;; spin++) {
            if (!__atomic_load_n(&px_cs_locked, __ATOMIC_RELAXED) &&
                !__atomic_exchange_n(&px_cs_locked, 1, __ATOMIC_ACQUIRE))
                break;
            if (spin < 64)
                px_cpu_relax();
            else
                sched_yield();
        }
        __atomic_sub_fetch(&px_cs_waiting, 1, __ATOMIC_RELAXED);
    }
    px_cs_owner = pthread_self();
    __atomic_store_n(&px_cs_owned, 1, __ATOMIC_RELEASE);
}

static void px_cs_give(void)
{
    __atomic_store_n(&px_cs_owned, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&px_cs_locked, 0, __ATOMIC_RELEASE);
}

void px_cs_lock(void)
{
    if (px_cs_mine()) {
        px_cs_depth++;
        return;
    }
    px_cs_take();
    px_cs_depth = 1;
}

int px_cs_trylock(void)
{
    if (__atomic_load_n(&px_cs_locked, __ATOMIC_RELAXED) ||
        __atomic_exchange_n(&px_cs_locked, 1, __ATOMIC_ACQUIRE))
        return 0;
    px_cs_owner = pthread_self();
    __atomic_store_n(&px_cs_owned, 1, __ATOMIC_RELEASE);
    px_cs_depth = 1;
    return 1;
}

void px_cs_unlock(void)
{
    if (--px_cs_depth > 0)
        return;
    px_cs_give();
}

int px_cs_release(void)
{
    if (!px_cs_on || !px_cs_mine())
        return 0;
    int depth = px_cs_depth;
    px_cs_depth = 0;
    px_cs_give();
    return depth;
}

void px_cs_reacquire(int depth)
{
    if (!depth)
        return;
    px_cs_take();
    px_cs_depth = depth;
}

void px_cs_yield_slow(void)
{
    if (!__atomic_load_n(&px_cs_waiting, __ATOMIC_RELAXED))
        return;
    int depth = px_cs_release();
    if (!depth)
        return;
    sched_yield(); /* let a waiter on this core run and take it */
    px_cs_reacquire(depth);
}
