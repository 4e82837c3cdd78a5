/* Unit tests of the library lock (src/util/cs.c): mutual exclusion and
 * recursion under several threads, trylock, release/reacquire at the same
 * depth, and that a thread waiting for the lock sleeps rather than spins
 * or yields in a loop (its CPU time while another thread holds the lock
 * for a while stays a small part of that while). */
#include "px_unit.h"
#include "util/cs.h"

#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#define NTHREADS 4
#define ROUNDS 200000

static long counter;
static volatile int inside;
static int overlap;

static void *hammer(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        px_cs_lock();
        px_cs_lock(); /* recursive */
        if (__atomic_add_fetch(&inside, 1, __ATOMIC_RELAXED) != 1)
            __atomic_store_n(&overlap, 1, __ATOMIC_RELAXED);
        counter++;
        __atomic_sub_fetch(&inside, 1, __ATOMIC_RELAXED);
        px_cs_unlock();
        if (i % 64 == 0)
            px_cs_yield(); /* a waiting call's step */
        px_cs_unlock();
    }
    return NULL;
}

static double thread_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static double wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static double waiter_cpu, waiter_wait;

static void *waiter(void *arg)
{
    (void)arg;
    double c0 = thread_cpu_s(), t0 = wall_s();
    px_cs_lock();
    waiter_wait = wall_s() - t0;
    waiter_cpu = thread_cpu_s() - c0;
    px_cs_unlock();
    return NULL;
}

static void *try_other(void *arg)
{
    *(int *)arg = px_cs_trylock();
    if (*(int *)arg)
        px_cs_unlock();
    return NULL;
}

int main(void)
{
    px_cs_on = 1;

    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&t[i], NULL, hammer, NULL);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    CHECK(counter == (long)NTHREADS * ROUNDS);
    CHECK(!overlap);

    /* trylock: fails while another thread holds the lock, also for the
     * holder's own thread, and succeeds once it is free */
    px_cs_lock();
    int got = -1;
    pthread_t o;
    pthread_create(&o, NULL, try_other, &got);
    pthread_join(o, NULL);
    CHECK(got == 0);
    CHECK(px_cs_trylock() == 0);
    /* release gives the whole depth back, reacquire takes it again */
    px_cs_lock();
    int depth = px_cs_release();
    CHECK(depth == 2);
    pthread_create(&o, NULL, try_other, &got);
    pthread_join(o, NULL);
    CHECK(got == 1);
    px_cs_reacquire(depth);
    px_cs_unlock();
    px_cs_unlock();
    pthread_create(&o, NULL, try_other, &got);
    pthread_join(o, NULL);
    CHECK(got == 1);

    /* a waiter sleeps: held for 300 ms, the waiter gets it after about that
     * and used far less CPU than that meanwhile */
    px_cs_lock();
    pthread_create(&o, NULL, waiter, NULL);
    struct timespec hold = {0, 300000000L};
    nanosleep(&hold, NULL);
    px_cs_unlock();
    pthread_join(o, NULL);
    CHECK(waiter_wait > 0.25);
    CHECK(waiter_cpu < 0.05);
    if (waiter_cpu >= 0.05)
        fprintf(stderr, "waiter used %.3f s of CPU in %.3f s\n", waiter_cpu, waiter_wait);
    return px_unit_report();
}
