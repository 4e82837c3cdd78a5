/* The library's critical section for MPI_THREAD_MULTIPLE: one recursive
 * lock around every MPI call, released while a call waits for progress so
 * that other threads can run theirs (the global-lock model of MPICH's
 * default build). Off (one load and a branch per call) unless the
 * application asked for MPI_THREAD_MULTIPLE. */
#ifndef PX_UTIL_CS_H
#define PX_UTIL_CS_H

extern int px_cs_on;

void px_cs_lock(void);
void px_cs_unlock(void);
/* Takes the lock if it is free (not held by anyone, this thread included):
 * 1, else 0 at once. The progress thread's way in (src/proto/proto_async.c). */
int px_cs_trylock(void);
void px_cs_yield_slow(void);
/* In a wait loop: lets waiting threads in (no-op when off or not held). */
static inline void px_cs_yield(void)
{
    if (__builtin_expect(px_cs_on, 0))
        px_cs_yield_slow();
}
/* Around a call that may sleep (epoll_wait): released entirely, then
 * taken back at the same depth. Returns the depth to give back. */
int px_cs_release(void);
void px_cs_reacquire(int depth);

/* Waiting for another thread's progress. When one thread of the process
 * sleeps in the kernel for arrivals (PX_PROGRESS_MODE=sleep or block), the
 * others that wait in MPI do not sleep there too: each arrival would wake
 * only one of them, and the one woken would complete the others' requests
 * without telling them. They sleep on the generation word instead, which
 * px_cs_wake bumps when a request completes and when the thread asleep in
 * the kernel comes back (one of them then takes its place).
 * px_cs_wait_others: holding the lock; released while asleep, taken back
 * at the same depth; returns after a wake or timeout_ms. */
extern int px_cs_waiters;
void px_cs_wait_others(int timeout_ms);
void px_cs_wake_slow(void);
static inline void px_cs_wake(void)
{
    if (__builtin_expect(__atomic_load_n(&px_cs_waiters, __ATOMIC_RELAXED) != 0, 0))
        px_cs_wake_slow();
}

static inline int px_cs_enter(void)
{
    if (__builtin_expect(!px_cs_on, 1))
        return 0;
    px_cs_lock();
    return 1;
}

static inline void px_cs_leave(int *held)
{
    if (*held)
        px_cs_unlock();
}

/* First statement of an MPI entry point: held until the function returns,
 * whichever return it takes. */
#define PX_CS_ENTER() int px_cs_held_ __attribute__((cleanup(px_cs_leave), unused)) = px_cs_enter()

#endif
