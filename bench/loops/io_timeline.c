/* A preload library that times, in each rank, the socket calls made inside
 * MPI_Bcast, MPI_Gather, MPI_Reduce, MPI_Allreduce,
 * MPI_Alltoall ("coll>" to "coll<") and MPI_Barrier:
 * where a collective's time goes between its
 * writes, its reads and its waits. Works with any MPI library (it wraps
 * libc's calls and MPI through the profiling interface).
 *   build/bin/mpicc -O2 -shared -fPIC -o build/io_timeline.so bench/loops/io_timeline.c -ldl
 *   mpicc.openmpi -O2 -shared -fPIC -o build/io_timeline.ompi.so bench/loops/io_timeline.c -ldl
 * Run a program with LD_PRELOAD set to it (pxrun --env, mpirun -x) and
 * IO_TIMELINE=PREFIX: each rank writes PREFIX.RANK at MPI_Finalize, one line
 * per event: start and end (us, CLOCK_MONOTONIC), call, result, bytes asked
 * (timeout for polls), descriptor (-1 for polls and MPI calls). Polls and
 * reads that return nothing are not recorded.
 * bench/loops/io_timeline.py summarizes the files. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#define EVENTS (1 << 20) /* the last this many events are kept */

enum {
    EV_WRITEV = 1,
    EV_READV,
    EV_SENDMSG,
    EV_RECV,
    EV_EPOLL,
    EV_POLL,
    EV_COLL_IN,
    EV_COLL_OUT,
    EV_BARRIER_IN,
    EV_BARRIER_OUT,
    EV_N
};
static const char *ev_name[EV_N] = {"",     "writev", "readv", "sendmsg",  "recv",    "epoll_wait",
                                    "poll", "coll>",  "coll<", "barrier>", "barrier<"};

static struct ev {
    double t0, t1;
    int type, fd;
    long ret, arg;
} ev[EVENTS];
static long nev;
static int on, rank = -1;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void rec_fd(double t0, int type, int fd, long ret, long arg)
{
    if (on)
        ev[nev++ & (EVENTS - 1)] = (struct ev){t0, now(), type, fd, ret, arg};
}

static void rec(double t0, int type, long ret, long arg) { rec_fd(t0, type, -1, ret, arg); }

static size_t iov_bytes(const struct iovec *v, size_t n)
{
    size_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i].iov_len;
    return s;
}

#define RESOLVE(f)                                                                                 \
    do {                                                                                           \
        if (!real_##f)                                                                             \
            real_##f = dlsym(RTLD_NEXT, #f);                                                       \
    } while (0)

static ssize_t (*real_writev)(int, const struct iovec *, int);
ssize_t writev(int fd, const struct iovec *v, int n)
{
    RESOLVE(writev);
    double t = now();
    ssize_t r = real_writev(fd, v, n);
    rec_fd(t, EV_WRITEV, fd, (long)r, (long)iov_bytes(v, (size_t)n));
    return r;
}

static ssize_t (*real_readv)(int, const struct iovec *, int);
ssize_t readv(int fd, const struct iovec *v, int n)
{
    RESOLVE(readv);
    double t = now();
    ssize_t r = real_readv(fd, v, n);
    if (r > 0)
        rec_fd(t, EV_READV, fd, (long)r, (long)iov_bytes(v, (size_t)n));
    return r;
}

static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);
ssize_t sendmsg(int fd, const struct msghdr *m, int fl)
{
    RESOLVE(sendmsg);
    double t = now();
    ssize_t r = real_sendmsg(fd, m, fl);
    rec_fd(t, EV_SENDMSG, fd, (long)r, (long)iov_bytes(m->msg_iov, m->msg_iovlen));
    return r;
}

static ssize_t (*real_recv)(int, void *, size_t, int);
ssize_t recv(int fd, void *b, size_t l, int fl)
{
    RESOLVE(recv);
    double t = now();
    ssize_t r = real_recv(fd, b, l, fl);
    if (r > 0)
        rec_fd(t, EV_RECV, fd, (long)r, (long)l);
    return r;
}

static int (*real_epoll_wait)(int, struct epoll_event *, int, int);
int epoll_wait(int e, struct epoll_event *v, int m, int to)
{
    RESOLVE(epoll_wait);
    double t = now();
    int r = real_epoll_wait(e, v, m, to);
    if (r > 0 || to != 0)
        rec(t, EV_EPOLL, r, to);
    return r;
}

static int (*real_poll)(struct pollfd *, nfds_t, int);
int poll(struct pollfd *p, nfds_t n, int to)
{
    RESOLVE(poll);
    double t = now();
    int r = real_poll(p, n, to);
    if (r > 0 || to != 0)
        rec(t, EV_POLL, r, to);
    return r;
}

static void coll_in(int count)
{
    if (rank < 0) {
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        on = getenv("IO_TIMELINE") != NULL;
    }
    rec(now(), EV_COLL_IN, 0, count);
}

int MPI_Bcast(void *b, int c, MPI_Datatype d, int root, MPI_Comm comm)
{
    coll_in(c);
    int r = PMPI_Bcast(b, c, d, root, comm);
    rec(now(), EV_COLL_OUT, 0, c);
    return r;
}

int MPI_Gather(const void *sb, int sc, MPI_Datatype sd, void *rb, int rc, MPI_Datatype rd, int root,
               MPI_Comm comm)
{
    coll_in(sc);
    int r = PMPI_Gather(sb, sc, sd, rb, rc, rd, root, comm);
    rec(now(), EV_COLL_OUT, 0, sc);
    return r;
}

int MPI_Reduce(const void *sb, void *rb, int c, MPI_Datatype d, MPI_Op op, int root, MPI_Comm comm)
{
    coll_in(c);
    int r = PMPI_Reduce(sb, rb, c, d, op, root, comm);
    rec(now(), EV_COLL_OUT, 0, c);
    return r;
}

int MPI_Allreduce(const void *sb, void *rb, int c, MPI_Datatype d, MPI_Op op, MPI_Comm comm)
{
    coll_in(c);
    int r = PMPI_Allreduce(sb, rb, c, d, op, comm);
    rec(now(), EV_COLL_OUT, 0, c);
    return r;
}

int MPI_Alltoall(const void *sb, int sc, MPI_Datatype sd, void *rb, int rc, MPI_Datatype rd,
                 MPI_Comm comm)
{
    coll_in(sc);
    int r = PMPI_Alltoall(sb, sc, sd, rb, rc, rd, comm);
    rec(now(), EV_COLL_OUT, 0, sc);
    return r;
}

int MPI_Barrier(MPI_Comm comm)
{
    rec(now(), EV_BARRIER_IN, 0, 0);
    int r = PMPI_Barrier(comm);
    rec(now(), EV_BARRIER_OUT, 0, 0);
    return r;
}

int MPI_Finalize(void)
{
    const char *prefix = getenv("IO_TIMELINE");
    on = 0;
    if (prefix && rank >= 0) {
        char fn[4096];
        snprintf(fn, sizeof fn, "%s.%d", prefix, rank);
        FILE *o = fopen(fn, "w");
        if (o) {
            for (long i = nev > EVENTS ? nev - EVENTS : 0; i < nev; i++) {
                struct ev *e = &ev[i & (EVENTS - 1)];
                fprintf(o, "%.3f %.3f %s %ld %ld %d\n", e->t0, e->t1, ev_name[e->type], e->ret,
                        e->arg, e->fd);
            }
            fclose(o);
        } else {
            perror(fn);
        }
    }
    return PMPI_Finalize();
}
