/* pxperf: micro-benchmarks of the active-message layer (include/plexus/am.h)
 * in the manner of VIBe (the communication-subsystems design document): a
 * base latency, bandwidth and CPU use, the set-up costs, then one property
 * varied at a time, each reported as its difference from the base, so that
 * the cost of each implementation choice shows by itself (docs/vibe.md).
 *
 * Run with two or more ranks: pxrun -n 2 pxperf [--quick] [--json FILE].
 * Rank 0 drives, rank 1 is its partner, further ranks only take part in
 * the endpoint benchmark. The transport is what PX_NET selects, the
 * progress mode what PX_PROGRESS_MODE says; both are reported. */
#include <plexus/am.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

enum { H_PING, H_PONG, H_SINK, H_DONE, H_KEY, H_IDLE, H_IDLE_ACK };
enum { OP_SEND, OP_PUT, OP_GET };

#define BASE_SIZE 4         /* bytes of the base latency */
#define BASE_WINDOW 64      /* messages in flight in the base bandwidth */
#define BW_SIZE (64 * 1024) /* bytes per message of the base bandwidth, at most */
#define MAX_TRANSFER                                                                               \
    (4u << 20) /* largest transfer size: beyond the largest single active
                                 * message, a transfer is cut into several */
#define MAX_ROWS 256
#define MAX_KV 32

typedef struct {
    const char *group;
    char value[24];
    const char *metric;
    double result, base;
} row_t;

typedef struct {
    const char *key;
    double v;
} kv_t;

static struct {
    int me, np, quick;
    int reply_in_handler; /* rank 1 answers pings from the handler */
    plexus_am_ep_t peer;  /* rank 0: rank 1; the others: rank 0 */
    volatile int pinged, ponged, done, have_key, idle;
    plexus_am_counter_t pings;
    uint64_t pings_due;     /* pings rank 1 has been told to expect so far */
    plexus_am_counter_t lc; /* local completions of sends from constant buffers */
    uint64_t posted;
    char *buf;  /* MAX_TRANSFER-or-more bytes, never written after start */
    char *rbuf; /* as many bytes, where handlers copy what arrives, as a program's would */
    size_t buflen, max_data, bw_size;
    char **pool; /* fresh buffers for the buffer-reuse benchmark */
    size_t npool;
    plexus_am_rkey_t key;
    double peer_cpu;
    int lat_iters, lat_warm;
    size_t bw_bytes;
    double idle_s;
    double last_cpu; /* CPU use of rank 0 in the last benchmark */
    row_t rows[MAX_ROWS];
    int nrows;
    kv_t setup[MAX_KV], base[MAX_KV];
    int nsetup, nbase;
} g;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* user + system time of this process, in seconds */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "pxperf rank %d: %s: %s\n", g.me, what, plexus_am_strerror(rc));
    exit(1);
}

#define CALL(x)                                                                                    \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_ < 0)                                                                               \
            die(#x, rc_);                                                                          \
    } while (0)

static void kv_add(kv_t *t, int *n, const char *key, double v)
{
    if (*n < MAX_KV)
        t[(*n)++] = (kv_t){key, v};
}

static double kv_get(const kv_t *t, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].key, key))
            return t[i].v;
    return NAN;
}

static void row_add(const char *group, const char *value, const char *metric, double result)
{
    if (g.me != 0 || g.nrows >= MAX_ROWS)
        return;
    row_t *r = &g.rows[g.nrows++];
    r->group = group;
    snprintf(r->value, sizeof(r->value), "%s", value);
    r->metric = metric;
    r->result = result;
    r->base = kv_get(g.base, g.nbase, metric);
}

static void row_addn(const char *group, long value, const char *metric, double result)
{
    char v[24];
    snprintf(v, sizeof(v), "%ld", value);
    row_add(group, v, metric, result);
}

/* ---------- handlers ---------- */

/* The header of a piece of a transfer: where its data goes in the
 * receiver's buffer, and whether it is the transfer's last piece (pieces of
 * one sender arrive in order). Messages without one go to offset 0. */
typedef struct {
    uint64_t off;
    uint64_t last;
} piece_t;

/* Copies a piece's data into the receive buffer; 1 when it ends its transfer. */
static int land(const void *hdr, size_t hl, const void *data, size_t len)
{
    piece_t h = {0, 1};
    if (hl >= sizeof(h))
        memcpy(&h, hdr, sizeof(h));
    if (len && h.off + len <= g.buflen)
        memcpy(g.rbuf + h.off, data, len);
    return h.last != 0;
}

static void send_const(plexus_am_ep_t ep, unsigned id, const struct iovec *iov, int k);

static void on_ping(plexus_am_token_t *tok, const void *hdr, size_t hl, void *data, size_t len,
                    void *arg)
{
    (void)arg;
    if (!land(hdr, hl, data, len))
        return;
    g.pings.count++;
    if (!g.reply_in_handler) {
        g.pinged = 1;
        return;
    }
    plexus_am_cmpl_t c = {.local = &g.lc};
    g.posted++;
    int rc = plexus_am_reply(tok, H_PONG, NULL, 0, g.buf, len, &c);
    if (rc < 0)
        die("reply", rc);
}

static void on_flag(plexus_am_token_t *tok, const void *hdr, size_t hl, void *data, size_t len,
                    void *arg)
{
    (void)tok, (void)hdr, (void)hl, (void)data, (void)len;
    *(volatile int *)arg = 1;
}

static void on_pong(plexus_am_token_t *tok, const void *hdr, size_t hl, void *data, size_t len,
                    void *arg)
{
    (void)tok, (void)arg;
    if (land(hdr, hl, data, len))
        g.ponged = 1;
}

static void on_sink(plexus_am_token_t *tok, const void *hdr, size_t hl, void *data, size_t len,
                    void *arg)
{
    (void)tok, (void)arg;
    land(hdr, hl, data, len);
}

static void on_key(plexus_am_token_t *tok, const void *hdr, size_t hl, void *data, size_t len,
                   void *arg)
{
    (void)tok, (void)hdr, (void)hl, (void)len, (void)arg;
    memcpy(&g.key, data, sizeof(g.key));
    g.have_key = 1;
}

static void on_idle_ack(plexus_am_token_t *tok, const void *hdr, size_t hl, void *data, size_t len,
                        void *arg)
{
    (void)tok, (void)hl, (void)data, (void)len, (void)arg;
    memcpy((void *)&g.peer_cpu, hdr, sizeof(double));
    g.ponged = 1;
}

static void cb_flag(void *arg, int status)
{
    if (status < 0)
        die("completion", status);
    *(volatile int *)arg = 1;
}

/* ---------- primitives ---------- */

/* A send from buffers that never change: a local completion is asked for
 * (so the payload is not copied at the call) and collected by drain(). */
static void send_const(plexus_am_ep_t ep, unsigned id, const struct iovec *iov, int k)
{
    plexus_am_cmpl_t c = {.local = &g.lc};
    g.posted++;
    CALL(plexus_am_sendv(ep, id, NULL, 0, iov, k, &c));
}

static void drain(void) { CALL(plexus_am_wait_counter(&g.lc, g.posted)); }

/* Active messages a transfer of len bytes takes. */
static uint64_t pieces(size_t len)
{
    return len <= g.max_data ? 1 : (len + g.max_data - 1) / g.max_data;
}

/* A transfer of len bytes from p as one active message per g.max_data
 * bytes, as a program on the layer sends what one message cannot hold;
 * each counts once in c's counters. */
static void send_transfer(plexus_am_ep_t ep, unsigned id, const char *p, size_t len,
                          const plexus_am_cmpl_t *c)
{
    size_t off = 0;
    do {
        size_t n = len - off < g.max_data ? len - off : g.max_data;
        piece_t h = {off, off + n == len};
        plexus_am_cmpl_t cc = *c;
        g.posted += cc.local == &g.lc;
        CALL(plexus_am_send(ep, id, &h, sizeof(h), p + off, n, &cc));
        off += n;
    } while (off < len);
}

static void done_to(plexus_am_ep_t ep) { CALL(plexus_am_send(ep, H_DONE, NULL, 0, NULL, 0, NULL)); }

static void wait_done(void)
{
    CALL(plexus_am_wait_flag(&g.done));
    g.done = 0;
}

/* Half the round trip of a ping-pong of len bytes, sent in k pieces, from
 * rank 0 to rank 1 and back; rank 0's CPU use in g.last_cpu. */
static double pingpong(size_t len, int k)
{
    int n = g.lat_warm + g.lat_iters;
    struct iovec iov[PLEXUS_AM_IOV_MAX];
    size_t piece = len / (size_t)k, off = 0;
    for (int i = 0; i < k; i++) {
        iov[i].iov_base = g.buf + off;
        iov[i].iov_len = i == k - 1 ? len - off : piece;
        off += iov[i].iov_len;
    }
    double t0 = 0, c0 = 0, t;
    if (g.me == 0) {
        for (int i = 0; i < n; i++) {
            if (i == g.lat_warm) {
                t0 = now_s();
                c0 = cpu_s();
            }
            if (len > g.max_data) {
                plexus_am_cmpl_t c = {.local = &g.lc};
                send_transfer(g.peer, H_PING, g.buf, len, &c);
            } else
                send_const(g.peer, H_PING, iov, k);
            CALL(plexus_am_wait_flag(&g.ponged));
            g.ponged = 0;
        }
        t = now_s() - t0;
        g.last_cpu = (cpu_s() - c0) / t;
        drain();
        return 1e6 * t / (2.0 * g.lat_iters);
    }
    if (g.me == 1) {
        /* a ping may come in before this point (during the barrier) */
        g.pings_due += (uint64_t)n;
        if (g.reply_in_handler)
            CALL(plexus_am_wait_counter(&g.pings, g.pings_due));
        else
            for (int i = 0; i < n; i++) {
                CALL(plexus_am_wait_flag(&g.pinged));
                g.pinged = 0;
                plexus_am_cmpl_t c = {.local = &g.lc};
                send_transfer(g.peer, H_PONG, g.buf, len, &c);
            }
        drain();
    }
    return 0;
}

/* The 4-byte ping-pong with rank 1 replying from its handler. Every rank
 * switches before a barrier: a ping must not find rank 1 still in the
 * other mode. */
static double pingpong_in_handler(void)
{
    g.reply_in_handler = 1;
    CALL(plexus_am_barrier());
    double v = pingpong(BASE_SIZE, 1);
    g.reply_in_handler = 0;
    return v;
}

/* Which buffer message i goes from: the same one at reuse 100 (%), a
 * fresh one of the pool each time at 0. */
static char *pick(long i, int reuse, size_t *next)
{
    if (reuse >= 100 || (i * reuse) / 100 != ((i + 1) * reuse) / 100 || !g.npool)
        return g.buf;
    return g.pool[(*next)++ % g.npool];
}

/* Rank 0 streams messages (or puts, or gets) of len bytes to rank 1,
 * window of them at most without remote completion, g.bw_bytes in all;
 * MB/s. Rank 0's CPU use in g.last_cpu. */
static double stream(size_t len, int window, int reuse, int op, size_t total)
{
    long n = (long)(total / len), warm = window, most = g.quick ? 512 : 50000;
    uint64_t per = op == OP_SEND ? pieces(len) : 1; /* remote completions per message */
    if (n > most)
        n = most;
    if (n < 2L * window)
        n = 2L * window;
    if (g.me != 0) {
        if (g.me == 1)
            wait_done();
        return 0;
    }
    plexus_am_counter_t ctr = {0, 0};
    size_t next = 0;
    double t0 = 0, c0 = 0, t;
    for (long i = 0; i < warm + n; i++) {
        if (i == warm) {
            CALL(plexus_am_wait_counter(&ctr, (uint64_t)i * per));
            t0 = now_s();
            c0 = cpu_s();
        }
        if (i >= window)
            CALL(plexus_am_wait_counter(&ctr, (uint64_t)(i - window + 1) * per));
        char *p = pick(i, reuse, &next);
        plexus_am_cmpl_t c = {.local = &g.lc, .remote = &ctr};
        if (op == OP_SEND) {
            send_transfer(g.peer, H_SINK, p, len, &c);
            continue;
        }
        g.posted++;
        if (op == OP_PUT)
            CALL(plexus_am_put(g.peer, p, len, &g.key, 0, &c));
        else {
            c.remote = NULL;
            c.local = &ctr;
            g.posted--;
            CALL(plexus_am_get(g.peer, p, len, &g.key, 0, &c));
        }
    }
    CALL(plexus_am_wait_counter(&ctr, (uint64_t)(warm + n) * per));
    t = now_s() - t0;
    g.last_cpu = (cpu_s() - c0) / t;
    drain();
    done_to(g.peer);
    return (double)len * (double)n / t / 1e6;
}

/* Half the time of a 4-byte put (remote completion) or get, waited for
 * one at a time. */
static double onesided_lat(int op)
{
    if (g.me != 0) {
        if (g.me == 1)
            wait_done();
        return 0;
    }
    plexus_am_counter_t ctr = {0, 0};
    int n = g.lat_warm + g.lat_iters;
    double t0 = 0;
    for (int i = 0; i < n; i++) {
        if (i == g.lat_warm)
            t0 = now_s();
        plexus_am_cmpl_t c = {.remote = &ctr};
        if (op == OP_PUT)
            CALL(plexus_am_put(g.peer, g.buf, BASE_SIZE, &g.key, 0, &c));
        else {
            c.remote = NULL;
            c.local = &ctr;
            CALL(plexus_am_get(g.peer, g.pool ? g.pool[0] : g.buf + g.buflen - BASE_SIZE, BASE_SIZE,
                               &g.key, 0, &c));
        }
        CALL(plexus_am_wait_counter(&ctr, (uint64_t)i + 1));
    }
    double t = now_s() - t0;
    done_to(g.peer);
    return 1e6 * t / (2.0 * g.lat_iters);
}

/* Half the time of a 4-byte message whose handler's run is learnt by a
 * remote counter, a remote callback, or the handler's own reply setting a
 * flag. */
static double completion_lat(const char *how)
{
    if (!strcmp(how, "flag"))
        return pingpong_in_handler();
    if (g.me != 0) {
        if (g.me == 1)
            wait_done();
        return 0;
    }
    plexus_am_counter_t ctr = {0, 0};
    volatile int flag = 0;
    int cb = !strcmp(how, "callback");
    int n = g.lat_warm + g.lat_iters;
    double t0 = 0;
    for (int i = 0; i < n; i++) {
        if (i == g.lat_warm)
            t0 = now_s();
        plexus_am_cmpl_t c = {
            .remote = cb ? NULL : &ctr, .remote_cb = cb ? cb_flag : NULL, .arg = (void *)&flag};
        CALL(plexus_am_send(g.peer, H_SINK, NULL, 0, g.buf, BASE_SIZE, &c));
        if (cb) {
            CALL(plexus_am_wait_flag(&flag));
            flag = 0;
        } else
            CALL(plexus_am_wait_counter(&ctr, (uint64_t)i + 1));
    }
    double t = now_s() - t0;
    done_to(g.peer);
    return 1e6 * t / (2.0 * g.lat_iters);
}

/* Rank 1 waits idle for g.idle_s while rank 0 sleeps, then answers its
 * ping at once: rank 1's CPU use while waiting, and half the round trip
 * of that ping (how fast an idle waiter wakes). */
static void idle_wait(double *cpu_p, double *wake_us_p)
{
    if (g.me == 1) {
        double t0 = now_s(), c0 = cpu_s();
        CALL(plexus_am_wait_flag(&g.idle));
        g.idle = 0;
        double cpu = (cpu_s() - c0) / (now_s() - t0);
        CALL(plexus_am_send(g.peer, H_IDLE_ACK, &cpu, sizeof(cpu), NULL, 0, NULL));
    } else if (g.me == 0) {
        struct timespec ts = {(time_t)g.idle_s,
                              (long)((g.idle_s - (double)(time_t)g.idle_s) * 1e9)};
        nanosleep(&ts, NULL);
        double t0 = now_s();
        CALL(plexus_am_send(g.peer, H_IDLE, NULL, 0, NULL, 0, NULL));
        CALL(plexus_am_wait_flag(&g.ponged));
        g.ponged = 0;
        *wake_us_p = 1e6 * (now_s() - t0) / 2.0;
        *cpu_p = g.peer_cpu;
    }
}

/* ---------- the benchmarks ---------- */

static void bench_setup_mem(void)
{
    static const size_t sizes[] = {4096, 1 << 20};
    static const char *const reg[] = {"register_4k_us", "register_1m_us"};
    static const char *const dereg[] = {"deregister_4k_us", "deregister_1m_us"};
    int reps = g.quick ? 20 : 1000;
    for (int s = 0; s < 2; s++) {
        char *p = malloc(sizes[s]);
        if (!p)
            die("memory", PLEXUS_AM_ERR_NO_MEMORY);
        double tr = 0, td = 0;
        for (int i = 0; i < reps; i++) {
            plexus_am_mem_t m;
            double t0 = now_s();
            CALL(plexus_am_mem_register(p, sizes[s], &m));
            double t1 = now_s();
            CALL(plexus_am_mem_deregister(m));
            tr += t1 - t0;
            td += now_s() - t1;
        }
        kv_add(g.setup, &g.nsetup, reg[s], 1e6 * tr / reps);
        kv_add(g.setup, &g.nsetup, dereg[s], 1e6 * td / reps);
        free(p);
    }
    int n = 10000;
    plexus_am_ep_t ep;
    double t0 = now_s();
    for (int i = 0; i < n; i++)
        CALL(plexus_am_ep(i % g.np, &ep));
    kv_add(g.setup, &g.nsetup, "endpoint_us", 1e6 * (now_s() - t0) / n);
}

static void bench_base(void)
{
    double lat = pingpong(BASE_SIZE, 1);
    double cpu_lat = g.last_cpu;
    CALL(plexus_am_barrier());
    double bw = stream(g.bw_size, BASE_WINDOW, 100, OP_SEND, g.bw_bytes);
    double cpu_bw = g.last_cpu;
    CALL(plexus_am_barrier());
    double idle_cpu = 0, wake = 0;
    idle_wait(&idle_cpu, &wake);
    kv_add(g.base, &g.nbase, "latency_us", lat);
    kv_add(g.base, &g.nbase, "bandwidth_mbs", bw);
    kv_add(g.base, &g.nbase, "cpu_latency", cpu_lat);
    kv_add(g.base, &g.nbase, "cpu_bandwidth", cpu_bw);
    kv_add(g.base, &g.nbase, "idle_cpu", idle_cpu);
    kv_add(g.base, &g.nbase, "idle_wake_us", wake);
    kv_add(g.base, &g.nbase, "idle_wait_s", g.idle_s);
    kv_add(g.base, &g.nbase, "latency_size", BASE_SIZE);
    kv_add(g.base, &g.nbase, "bandwidth_size", (double)g.bw_size);
    kv_add(g.base, &g.nbase, "window", BASE_WINDOW);
    kv_add(g.base, &g.nbase, "max_data", (double)g.max_data);
}

static void bench_reuse(void)
{
    static const int pct[] = {0, 50, 100};
    for (int i = 0; i < 3; i++) {
        double bw = stream(g.bw_size, BASE_WINDOW, pct[i], OP_SEND, g.bw_bytes);
        row_addn("buffer_reuse", pct[i], "bandwidth_mbs", bw);
        CALL(plexus_am_barrier());
    }
}

static void bench_segments(void)
{
    /* the same 32 bytes in 1 to 8 pieces: only the number of pieces varies
     * (against the base's 4 bytes, the 1-piece row shows what the size adds) */
    for (int k = 1; k <= PLEXUS_AM_IOV_MAX; k++) {
        row_addn("segments", k, "latency_us", pingpong((size_t)BASE_SIZE * PLEXUS_AM_IOV_MAX, k));
        CALL(plexus_am_barrier());
    }
}

static void bench_completion(void)
{
    static const char *const how[] = {"counter", "callback", "flag"};
    for (int i = 0; i < 3; i++) {
        row_add("completion", how[i], "latency_us", completion_lat(how[i]));
        CALL(plexus_am_barrier());
    }
}

static void bench_endpoints(void)
{
    /* opened in this order: the partner, this process, then the others */
    for (int k = 1; k <= g.np; k++) {
        int r = k == 1 ? 1 : k == 2 ? 0 : k - 1;
        if (g.me == 0) {
            plexus_am_ep_t ep;
            plexus_am_counter_t c = {0, 0};
            plexus_am_cmpl_t cm = {.remote = &c};
            CALL(plexus_am_ep(r, &ep));
            CALL(plexus_am_send(ep, H_SINK, NULL, 0, g.buf, 1, &cm));
            CALL(plexus_am_wait_counter(&c, 1));
        }
        CALL(plexus_am_barrier());
        row_addn("endpoints", k, "latency_us", pingpong(BASE_SIZE, 1));
        CALL(plexus_am_barrier());
    }
}

static void bench_handler(void)
{
    row_add("handler_reply", "main", "latency_us", pingpong(BASE_SIZE, 1));
    CALL(plexus_am_barrier());
    row_add("handler_reply", "handler", "latency_us", pingpong_in_handler());
    CALL(plexus_am_barrier());
}

static void bench_onesided(void)
{
    plexus_am_mem_t mem = NULL;
    char *region = NULL;
    if (g.me == 1) {
        region = calloc(1, g.bw_size);
        plexus_am_rkey_t key;
        if (!region)
            die("memory", PLEXUS_AM_ERR_NO_MEMORY);
        CALL(plexus_am_mem_register(region, g.bw_size, &mem));
        CALL(plexus_am_mem_rkey(mem, &key));
        CALL(plexus_am_send(g.peer, H_KEY, NULL, 0, &key, sizeof(key), NULL));
    }
    if (g.me == 0)
        CALL(plexus_am_wait_flag(&g.have_key));
    CALL(plexus_am_barrier());
    row_add("one_sided", "put", "latency_us", onesided_lat(OP_PUT));
    CALL(plexus_am_barrier());
    row_add("one_sided", "get", "latency_us", onesided_lat(OP_GET));
    CALL(plexus_am_barrier());
    row_add("one_sided", "put", "bandwidth_mbs",
            stream(g.bw_size, BASE_WINDOW, 100, OP_PUT, g.bw_bytes));
    CALL(plexus_am_barrier());
    /* gets land in a fresh buffer, not in the constant send buffer */
    char *keep = g.buf;
    if (g.npool)
        g.buf = g.pool[0];
    row_add("one_sided", "get", "bandwidth_mbs",
            stream(g.bw_size, BASE_WINDOW, 100, OP_GET, g.bw_bytes));
    g.buf = keep;
    CALL(plexus_am_barrier());
    if (mem) {
        CALL(plexus_am_mem_deregister(mem));
        free(region);
    }
}

static void bench_size(size_t s)
{
    row_addn("transfer_size", (long)s, "latency_us", pingpong(s, 1));
    CALL(plexus_am_barrier());
    /* at least 8 transfers in flight, whatever their size */
    size_t total = g.bw_bytes > 16 * s ? g.bw_bytes : 16 * s;
    row_addn("transfer_size", (long)s, "bandwidth_mbs",
             stream(s, s > g.max_data ? 8 : BASE_WINDOW, 100, OP_SEND, total));
    CALL(plexus_am_barrier());
}

/* Powers of 4 up to MAX_TRANSFER, and the largest single active message;
 * beyond it a transfer is several messages (send_transfer). */
static void bench_sizes(void)
{
    size_t top = g.quick ? 256u << 10 : MAX_TRANSFER;
    for (size_t s = 1; s <= top; s *= 4) {
        if (s / 4 < g.max_data && g.max_data < s)
            bench_size(g.max_data);
        bench_size(s);
    }
}

static void bench_frames(void)
{
    /* the same bytes cut into frames of each size up to the channel's maximum */
    size_t total = g.quick ? (1u << 20) : (32u << 20);
    for (size_t f = 1024;; f *= 4) {
        if (f > g.max_data)
            f = g.max_data;
        row_addn("frame_size", (long)f, "bandwidth_mbs",
                 stream(f, BASE_WINDOW, 100, OP_SEND, total));
        CALL(plexus_am_barrier());
        if (f == g.max_data)
            break;
    }
}

static void bench_pipeline(void)
{
    for (int w = 1; w <= 64; w *= 2) {
        row_addn("pipeline", w, "bandwidth_mbs", stream(g.bw_size, w, 100, OP_SEND, g.bw_bytes));
        CALL(plexus_am_barrier());
    }
}

/* What the channel guarantees, by its name. The interface cannot choose
 * it: PX_NET does, so levels are compared across runs (docs/vibe.md). */
static const char *reliability_of(const char *ch)
{
    if (!strcmp(ch, "shm") || !strcmp(ch, "self"))
        return "memory (nothing to lose)";
    if (!strcmp(ch, "tcp"))
        return "reliable stream (the kernel's TCP)";
    if (!strcmp(ch, "udp"))
        return "reliable datagrams (Plexus's rail layer over UDP)";
    if (!strcmp(ch, "udp+tcp"))
        return "hybrid (reliable datagrams, then TCP)";
    return "the libfabric provider's";
}

/* ---------- output ---------- */

static void print_table(const char *ch, const char *mode, double t_init, double t_fin)
{
    printf("# pxperf: %d ranks, channel %s, PX_NET=%s, PX_PROGRESS_MODE=%s%s\n", g.np, ch,
           getenv("PX_NET") ? getenv("PX_NET") : "(default)", mode, g.quick ? ", quick" : "");
    printf("\n%-24s %14s\n", "set-up", "us");
    printf("%-24s %14.1f\n%-24s %14.1f\n", "init", t_init, "finalize", t_fin);
    for (int i = 0; i < g.nsetup; i++)
        printf("%-24s %14.3f\n", g.setup[i].key, g.setup[i].v);
    printf("\n%-24s %14s\n", "base", "value");
    for (int i = 0; i < g.nbase; i++)
        printf("%-24s %14.3f\n", g.base[i].key, g.base[i].v);
    printf("\nreliability: %s (varied only by PX_NET, across runs)\n", reliability_of(ch));
    printf("\n%-14s %-10s %-14s %12s %12s %10s\n", "property", "value", "metric", "result", "base",
           "diff %");
    for (int i = 0; i < g.nrows; i++) {
        row_t *r = &g.rows[i];
        printf("%-14s %-10s %-14s %12.3f %12.3f %+10.1f\n", r->group, r->value, r->metric,
               r->result, r->base, 100.0 * (r->result - r->base) / r->base);
    }
}

static void json_kv(FILE *f, const char *name, const kv_t *t, int n, const char *more)
{
    fprintf(f, "  \"%s\": {", name);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s\"%s\": %.6g", i ? ", " : "", t[i].key, t[i].v);
    fprintf(f, "%s},\n", more);
}

static int write_json(const char *path, const char *ch, const char *mode, double t_init,
                      double t_fin)
{
    FILE *f = fopen(path, "w");
    char more[128];
    if (!f) {
        perror(path);
        return 1;
    }
    fprintf(f, "{\n  \"program\": \"pxperf\",\n  \"ranks\": %d,\n  \"quick\": %s,\n", g.np,
            g.quick ? "true" : "false");
    fprintf(f, "  \"transport\": \"%s\",\n  \"net\": \"%s\",\n  \"progress_mode\": \"%s\",\n", ch,
            getenv("PX_NET") ? getenv("PX_NET") : "", mode);
    snprintf(more, sizeof(more), ", \"init_us\": %.6g, \"finalize_us\": %.6g", t_init, t_fin);
    json_kv(f, "setup", g.setup, g.nsetup, more);
    json_kv(f, "base", g.base, g.nbase, "");
    fprintf(f,
            "  \"reliability\": {\"level\": \"%s\", \"varied_by_interface\": false, \"note\": "
            "\"the interface has no reliability choice; PX_NET=udp (reliable datagrams) and "
            "PX_NET=tcp are compared across runs, raw datagrams are not exposed\"},\n",
            reliability_of(ch));
    fprintf(f, "  \"varied\": {");
    const char *group = NULL;
    for (int i = 0; i < g.nrows; i++) {
        row_t *r = &g.rows[i];
        if (!group || strcmp(group, r->group)) {
            fprintf(f, "%s\n    \"%s\": [", group ? "]," : "", r->group);
            group = r->group;
        } else
            fprintf(f, ",");
        fprintf(f,
                "\n      {\"value\": \"%s\", \"metric\": \"%s\", \"result\": %.6g, \"base\": "
                "%.6g, \"diff\": %.6g, \"diff_pct\": %.6g}",
                r->value, r->metric, r->result, r->base, r->result - r->base,
                100.0 * (r->result - r->base) / r->base);
    }
    fprintf(f, "%s\n  }\n}\n", group ? "]" : "");
    return fclose(f) ? 1 : 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: pxrun -n 2 pxperf [--quick] [--json FILE]\n"
                    "  --quick      every benchmark, briefly (for tests)\n"
                    "  --json FILE  also write the results as JSON (rank 0)\n");
}

int main(int argc, char **argv)
{
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            g.quick = 1;
        else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else {
            usage();
            return 2;
        }
    }
    double t0 = now_s();
    CALL(plexus_am_init());
    double t_init = 1e6 * (now_s() - t0);
    g.me = plexus_am_rank();
    g.np = plexus_am_size();
    if (g.np < 2) {
        if (g.me == 0)
            fprintf(stderr, "pxperf: needs two ranks or more (pxrun -n 2 pxperf)\n");
        plexus_am_finalize();
        return 2;
    }
    CALL(plexus_am_ep(g.me == 0 ? 1 : 0, &g.peer));
    g.max_data = plexus_am_max_data(g.peer);
    g.bw_size = g.max_data < BW_SIZE ? g.max_data : BW_SIZE;
    g.buflen = g.max_data > MAX_TRANSFER ? g.max_data : MAX_TRANSFER;
    g.buf = calloc(1, g.buflen);
    g.rbuf = calloc(1, g.buflen);
    g.lat_iters = g.quick ? 100 : 10000;
    g.lat_warm = g.quick ? 10 : 500;
    g.bw_bytes = g.quick ? (2u << 20) : (256u << 20);
    g.idle_s = g.quick ? 0.2 : 1.0;
    /* fresh buffers: a pool larger than the caches */
    g.npool = (g.quick ? (4u << 20) : (64u << 20)) / g.bw_size;
    g.pool = calloc(g.npool, sizeof(*g.pool));
    if (!g.buf || !g.rbuf || !g.pool)
        die("memory", PLEXUS_AM_ERR_NO_MEMORY);
    for (size_t i = 0; i < g.npool; i++)
        if (!(g.pool[i] = calloc(1, g.bw_size)))
            die("memory", PLEXUS_AM_ERR_NO_MEMORY);
    memset(g.buf, 0x5a, g.buflen);

    CALL(plexus_am_register(H_PING, on_ping, NULL, NULL));
    CALL(plexus_am_register(H_PONG, on_pong, NULL, NULL));
    CALL(plexus_am_register(H_SINK, on_sink, NULL, NULL));
    CALL(plexus_am_register(H_DONE, on_flag, NULL, (void *)&g.done));
    CALL(plexus_am_register(H_KEY, on_key, NULL, NULL));
    CALL(plexus_am_register(H_IDLE, on_flag, NULL, (void *)&g.idle));
    CALL(plexus_am_register(H_IDLE_ACK, on_idle_ack, NULL, NULL));
    /* the first exchange with each peer sets up what it needs (a
     * connection over the network); a second one shows the rest */
    t0 = now_s();
    CALL(plexus_am_barrier());
    double first = now_s() - t0;
    t0 = now_s();
    for (int i = 0; i < 10; i++)
        CALL(plexus_am_barrier());
    double warm = (now_s() - t0) / 10;
    kv_add(g.setup, &g.nsetup, "connect_us", 1e6 * first);
    kv_add(g.setup, &g.nsetup, "barrier_us", 1e6 * warm);
    bench_setup_mem();

    bench_base();
    CALL(plexus_am_barrier());
    bench_reuse();
    bench_segments();
    bench_completion();
    bench_endpoints();
    bench_handler();
    bench_onesided();
    bench_sizes();
    bench_frames();
    bench_pipeline();

    char ch[16];
    snprintf(ch, sizeof(ch), "%s", plexus_am_ep_channel(g.peer));
    const char *mode = getenv("PX_PROGRESS_MODE") ? getenv("PX_PROGRESS_MODE") : "auto";
    t0 = now_s();
    CALL(plexus_am_finalize());
    double t_fin = 1e6 * (now_s() - t0);
    if (g.me != 0)
        return 0;
    print_table(ch, mode, t_init, t_fin);
    return json ? write_json(json, ch, mode, t_init, t_fin) : 0;
}
