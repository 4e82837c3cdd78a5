/* How single-copy reads (process_vm_readv) of one process's memory slow
 * each other down, against plain copies out of shared memory:
 *   bench/loops/cma_readers BYTES READERS MODE [ITERATIONS]
 * MODE: same   every reader reads the same BYTES of the parent process
 *       apart  each reader reads its own BYTES of the parent process
 *       pairs  each reader reads the next reader's memory (READERS
 *              sources instead of one)
 *       memcpy each reader copies the parent's BYTES out of a shared mapping
 * Reader i runs on CPU i mod (online CPUs); each prints its mean time per
 * read. Build: cc -O2 -o build/cma_readers bench/loops/cma_readers.c */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

struct shared {
    _Atomic int go, done;
    _Atomic pid_t pid[64];
};

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s BYTES READERS same|apart|pairs|memcpy [ITERATIONS]\n", argv[0]);
        return 2;
    }
    size_t n = strtoull(argv[1], NULL, 0);
    int readers = atoi(argv[2]), it = argc > 4 ? atoi(argv[4]) : 20000;
    const char *mode = argv[3];
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (readers < 1 || readers > 64 || !n || it < 1) {
        fprintf(stderr, "cma_readers: 1-64 readers, BYTES and ITERATIONS > 0\n");
        return 2;
    }
    /* the data: shared, so that memcpy mode and every reader see it at the
     * same address in each process */
    char *src =
        mmap(NULL, n * (size_t)readers, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    struct shared *sh =
        mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (src == MAP_FAILED || sh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    memset(src, 7, n * (size_t)readers);
    pid_t parent = getpid();
    for (int r = 0; r < readers; r++) {
        if (fork())
            continue;
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET((int)(r % cpus), &set);
        sched_setaffinity(0, sizeof(set), &set);
        char *dst = malloc(n);
        if (!dst)
            _exit(1);
        memset(dst, 0, n);
        sh->pid[r] = getpid();
        while (!sh->go)
            ;
        pid_t from = !strcmp(mode, "pairs") ? sh->pid[(r + 1) % readers] : parent;
        char *at = src + (!strcmp(mode, "apart") ? (size_t)r * n : 0);
        int copy = !strcmp(mode, "memcpy");
        double t0 = now_us();
        for (int i = 0; i < it; i++) {
            if (copy) {
                memcpy(dst, at, n);
                __asm__ volatile("" : : "r"(dst) : "memory");
            } else {
                struct iovec l = {dst, n}, rv = {at, n};
                if (process_vm_readv(from, &l, 1, &rv, 1, 0) != (ssize_t)n) {
                    perror("process_vm_readv");
                    _exit(1);
                }
            }
        }
        printf("reader %d (%s): %.2f us per %zu bytes\n", r, mode, (now_us() - t0) / it, n);
        fflush(stdout);
        /* stay until all are done: in pairs mode the others read this one */
        atomic_fetch_add(&sh->done, 1);
        while (sh->done < readers)
            ;
        _exit(0);
    }
    for (int r = 0; r < readers; r++)
        while (!sh->pid[r])
            ;
    sh->go = 1;
    int status, bad = 0;
    while (wait(&status) > 0)
        bad |= !WIFEXITED(status) || WEXITSTATUS(status);
    return bad;
}
