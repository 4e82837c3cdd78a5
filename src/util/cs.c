/* Recursive global lock for MPI_THREAD_MULTIPLE (see cs.h).
 *
 * A futex lock (Drepper's "mutex3": 0 free, 1 held, 2 held with threads
 * that may be asleep on it). A thread that finds it held spins briefly,
 * then sleeps in the kernel until a release wakes it. With more threads in
 * MPI than cores, the threads waiting for the lock leave the cores to the
 * one that holds it, whose progress completes their requests too; threads
 * that spun and yielded instead kept taking turns on the cores with it, and
 * a message then took about as long as a round of them all. A holder that
 * waits for progress lets the others in between two polls (px_cs_yield:
 * it lets go, which wakes one sleeper, yields the processor and takes the
 * lock back), as MPICH's global lock does. */
#include "cs.h"

#include <linux/futex.h>
#include <pthread.h>
#include <limits.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* pauses before a thread that finds the lock held goes to sleep */
#define PX_CS_SPIN 128

int px_cs_on;

static int px_cs_word;    /* 0 free, 1 held, 2 held and maybe sleepers */
static int px_cs_waiting; /* threads in px_cs_take, spinning or asleep */
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

static void px_futex_wait(int *w, int v)
{
    syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void px_futex_wake(int *w) { syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

static int px_cs_mine(void)
{
    return __atomic_load_n(&px_cs_owned, __ATOMIC_ACQUIRE) &&
           pthread_equal(px_cs_owner, pthread_self());
}

static int px_cs_try(void)
{
    int free_ = 0;
    return __atomic_compare_exchange_n(&px_cs_word, &free_, 1, 0, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

static void px_cs_got(void)
{
    px_cs_owner = pthread_self();
    __atomic_store_n(&px_cs_owned, 1, __ATOMIC_RELEASE);
}

static void px_cs_take(void)
{
    if (!px_cs_try()) {
        __atomic_add_fetch(&px_cs_waiting, 1, __ATOMIC_RELAXED);
        int got = 0;
        for (int spin = 0; spin < PX_CS_SPIN && !got; spin++) {
            px_cpu_relax();
            got = !__atomic_load_n(&px_cs_word, __ATOMIC_RELAXED) && px_cs_try();
        }
        /* asleep until a release finds the word at 2 and wakes one */
        while (!got && __atomic_exchange_n(&px_cs_word, 2, __ATOMIC_ACQUIRE))
            px_futex_wait(&px_cs_word, 2);
        __atomic_sub_fetch(&px_cs_waiting, 1, __ATOMIC_RELAXED);
    }
    px_cs_got();
}

static void px_cs_give(void)
{
    __atomic_store_n(&px_cs_owned, 0, __ATOMIC_RELEASE);
    if (__atomic_exchange_n(&px_cs_word, 0, __ATOMIC_RELEASE) == 2)
        px_futex_wake(&px_cs_word);
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
    if (__atomic_load_n(&px_cs_word, __ATOMIC_RELAXED) || !px_cs_try())
        return 0;
    px_cs_got();
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

int px_cs_waiters;    /* threads in px_cs_wait_others (changed under the lock) */
static int px_cs_gen; /* bumped by px_cs_wake_slow */

void px_cs_wait_others(int timeout_ms)
{
    int g = __atomic_load_n(&px_cs_gen, __ATOMIC_ACQUIRE);
    __atomic_add_fetch(&px_cs_waiters, 1, __ATOMIC_RELAXED);
    int depth = px_cs_release();
    struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
    /* returns at once if a wake bumped the word since g was read */
    syscall(SYS_futex, &px_cs_gen, FUTEX_WAIT_PRIVATE, g, &ts, NULL, 0);
    px_cs_reacquire(depth);
    __atomic_sub_fetch(&px_cs_waiters, 1, __ATOMIC_RELAXED);
}

void px_cs_wake_slow(void)
{
    __atomic_add_fetch(&px_cs_gen, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &px_cs_gen, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
