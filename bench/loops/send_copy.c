/* What keeping a copy of a large send costs its sender: the time from a
 * receiver's go-ahead to the moment the sender could tell its caller the
 * buffer is free again, one TCP connection, no MPI. A broadcast root with
 * fault tolerance must keep what it has written until the peer has it, so
 * it copies the buffer besides writing it; this compares ways of doing so:
 *   write        write the buffer (no copy: what MPI libraries without
 *                failover do)
 *   copy-write   copy into a staging buffer, then write from it
 *   write-copy   write the buffer, then copy it
 *   copy-zc      copy, then send the staging buffer with MSG_ZEROCOPY
 *   copy-file    copy into a memfd mapping, then sendfile() from it
 * The receiver reads each message whole, checks its contents and sends the
 * next go-ahead; the sender prints the median and 10th/90th percentiles of
 * its own time per message. Run the receiver first, e.g. on two pxfab nodes:
 *   ip netns exec node1 send_copy recv 10.100.0.2 5555 1048576 1000
 *   ip netns exec node0 send_copy send 10.100.0.2 5555 1048576 1000 copy-write
 * Build: cc -O2 -o build/send_copy bench/loops/send_copy.c */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

enum { M_WRITE, M_COPY_WRITE, M_WRITE_COPY, M_COPY_ZC, M_COPY_FILE, M_N };
static const char *mode_name[M_N] = {"write", "copy-write", "write-copy", "copy-zc", "copy-file"};

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void send_all(int fd, const char *p, size_t n, int flags)
{
    while (n) {
        ssize_t w = send(fd, p, n, flags);
        if (w < 0)
            die("send");
        p += w;
        n -= (size_t)w;
    }
}

/* MSG_ZEROCOPY completions: read so the socket's error queue stays short */
static void drain_errqueue(int fd)
{
    char ctl[256];
    struct msghdr m = {.msg_control = ctl, .msg_controllen = sizeof(ctl)};
    while (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) >= 0)
        m.msg_controllen = sizeof(ctl);
}

/* byte q of message i, so that a stale or misplaced byte is seen */
static char pattern(int i, size_t q) { return (char)(i * 7 + q / 4096); }

int main(int argc, char **argv)
{
    if (argc < 6 || (strcmp(argv[1], "send") && strcmp(argv[1], "recv"))) {
        fprintf(stderr,
                "usage: %s recv|send ADDR PORT BYTES ITERATIONS [MODE]\n"
                "modes: write copy-write write-copy copy-zc copy-file\n",
                argv[0]);
        return 2;
    }
    int recv_side = !strcmp(argv[1], "recv");
    size_t n = strtoul(argv[4], NULL, 0);
    int iters = atoi(argv[5]), warm = 10, mode = M_WRITE, one = 1, fd;
    if (!recv_side && argc > 6) {
        for (mode = 0; mode < M_N && strcmp(argv[6], mode_name[mode]); mode++)
            ;
        if (mode == M_N) {
            fprintf(stderr, "unknown mode %s\n", argv[6]);
            return 2;
        }
    }
    if (n == 0 || iters <= warm) {
        fprintf(stderr, "BYTES must be positive and ITERATIONS above %d\n", warm);
        return 2;
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[3]))};
    if (inet_pton(AF_INET, argv[2], &a.sin_addr) != 1) {
        fprintf(stderr, "bad address %s\n", argv[2]);
        return 2;
    }
    size_t alloc = (n + 4095) / 4096 * 4096;
    char *buf = aligned_alloc(4096, alloc), *stg;
    int mfd = -1;
    if (mode == M_COPY_FILE) { /* the staging buffer is the memfd's pages */
        mfd = memfd_create("send_copy", 0);
        if (mfd < 0 || ftruncate(mfd, (off_t)n) < 0)
            die("memfd");
        stg = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
        if (stg == MAP_FAILED)
            die("mmap");
    } else {
        stg = aligned_alloc(4096, alloc);
    }
    if (!buf || !stg)
        die("aligned_alloc");
    memset(buf, 0, n);
    memset(stg, 0, n);
    if (recv_side) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0)
            die("listen");
        fd = accept(l, NULL, NULL);
        close(l);
    } else {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        for (int t = 0; connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0; t++) {
            if (t == 500)
                die("connect");
            usleep(10000);
        }
        if (mode == M_COPY_ZC && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)))
            die("SO_ZEROCOPY");
    }
    if (fd < 0)
        die("accept");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

    double *t = malloc(sizeof(double) * (size_t)iters);
    for (int i = 0; i < iters; i++) {
        if (recv_side) {
            send_all(fd, "g", 1, 0);
            size_t got = 0;
            while (got < n) {
                ssize_t r = read(fd, buf + got, n - got);
                if (r <= 0)
                    die("read");
                got += (size_t)r;
            }
            for (size_t q = 0; q < n; q += 4096)
                if (buf[q] != pattern(i, q)) {
                    fprintf(stderr, "message %d: byte %zu is wrong\n", i, q);
                    return 1;
                }
            continue;
        }
        char go;
        if (read(fd, &go, 1) != 1)
            die("read go-ahead");
        if (mode == M_COPY_ZC)
            drain_errqueue(fd); /* the receiver has the previous message */
        for (size_t q = 0; q < n; q += 4096)
            buf[q] = pattern(i, q);
        double t0 = now_us();
        switch (mode) {
        case M_WRITE:
            send_all(fd, buf, n, 0);
            break;
        case M_COPY_WRITE:
            memcpy(stg, buf, n);
            send_all(fd, stg, n, 0);
            break;
        case M_WRITE_COPY:
            send_all(fd, buf, n, 0);
            memcpy(stg, buf, n);
            break;
        case M_COPY_ZC:
            memcpy(stg, buf, n);
            send_all(fd, stg, n, MSG_ZEROCOPY);
            break;
        case M_COPY_FILE: {
            memcpy(stg, buf, n);
            off_t off = 0;
            while ((size_t)off < n)
                if (sendfile(fd, mfd, &off, n - (size_t)off) < 0)
                    die("sendfile");
            break;
        }
        }
        t[i] = now_us() - t0;
    }
    if (!recv_side) {
        int m = iters - warm;
        qsort(t + warm, (size_t)m, sizeof(double), cmp_double);
        printf("%s %zu bytes: median %.1f us, p10 %.1f, p90 %.1f (%d messages)\n", mode_name[mode],
               n, t[warm + m / 2], t[warm + m / 10], t[warm + m * 9 / 10], m);
    }
    close(fd);
    return 0;
}
