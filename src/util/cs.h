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
