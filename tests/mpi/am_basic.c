/* The public active-message interface (include/plexus/am.h) used as a
 * runtime other than MPI would: handlers that check their payload and
 * reply, completion by counters and by callbacks, I/O vectors, placement
 * of a payload by the receiver, put and get on registered regions in
 * pieces larger than one message, every pair of ranks (self included),
 * and the errors for bad handler ids, missing handlers, unregistered
 * regions and ranges. Alone in a pxrun job, or inside an MPI job when
 * PLEXUS_AM_TEST_MPI=1 (then MPI traffic is interleaved with it). */
#include <mpi.h>
#include <plexus/am.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { H_PING, H_PONG, H_IOV, H_PLACE, H_RKEY, H_ERRS, H_UNUSED = 7 };

static int me, np, errors, with_mpi;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            errors++;                                                                              \
            fprintf(stderr, "FAIL am_basic rank %d line %d: ", me, __LINE__);                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, " [%s]\n", #cond);                                                     \
        }                                                                                          \
    } while (0)
/* An error that leaves the rest meaningless: the job ends. */
#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        CHECK(cond, __VA_ARGS__);                                                                  \
        if (!(cond))                                                                               \
            exit(1);                                                                               \
    } while (0)

static unsigned char pat(int src, int dst, size_t i, unsigned seq)
{
    return (unsigned char)(src * 31 + dst * 7 + i * 13 + seq * 3);
}

typedef struct ping_hdr {
    int src, seq;
    unsigned len;
} ping_hdr_t;

/* ---------- handlers ---------- */

static volatile int pongs;
static uint64_t pong_sum;

/* Checks a ping's payload and answers with its checksum. */
static void on_ping(plexus_am_token_t *tok, const void *hdr, size_t hdr_len, void *data, size_t len,
                    void *arg)
{
    ping_hdr_t h;
    (void)arg;
    CHECK(hdr_len == sizeof(h), "ping header of %zu bytes", hdr_len);
    memcpy(&h, hdr, sizeof(h));
    CHECK(h.src == plexus_am_token_rank(tok), "ping from %d says %d", plexus_am_token_rank(tok),
          h.src);
    CHECK(len == h.len, "ping of %zu bytes, header says %u", len, h.len);
    CHECK(len == 0 || data != NULL, "no data");
    uint64_t sum = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = ((unsigned char *)data)[i];
        if (c != pat(h.src, me, i, (unsigned)h.seq)) {
            CHECK(0, "ping %d from %d: byte %zu is %u", h.seq, h.src, i, c);
            break;
        }
        sum += c;
    }
    /* a handler must not wait */
    plexus_am_counter_t c = {0, 0};
    CHECK(plexus_am_wait_counter(&c, 1) == PLEXUS_AM_ERR_IN_HANDLER, "wait inside a handler");
    CHECK(plexus_am_barrier() == PLEXUS_AM_ERR_IN_HANDLER, "barrier inside a handler");
    int rc = plexus_am_reply(tok, H_PONG, &h, sizeof(h), &sum, sizeof(sum), NULL);
    CHECK(rc == PLEXUS_AM_OK, "reply: %s", plexus_am_strerror(rc));
}

static void on_pong(plexus_am_token_t *tok, const void *hdr, size_t hdr_len, void *data, size_t len,
                    void *arg)
{
    ping_hdr_t h;
    uint64_t sum, want = 0;
    (void)tok, (void)arg, (void)hdr_len;
    memcpy(&h, hdr, sizeof(h));
    CHECK(len == sizeof(sum), "pong of %zu bytes", len);
    memcpy(&sum, data, sizeof(sum));
    for (size_t i = 0; i < h.len; i++)
        want += pat(me, plexus_am_token_rank(tok), i, (unsigned)h.seq);
    CHECK(sum == want, "pong %d from %d: sum %llu, sent %llu", h.seq, plexus_am_token_rank(tok),
          (unsigned long long)sum, (unsigned long long)want);
    pong_sum += sum;
    pongs++;
}

static volatile int iovs;
static void on_iov(plexus_am_token_t *tok, const void *hdr, size_t hdr_len, void *data, size_t len,
                   void *arg)
{
    (void)hdr, (void)arg;
    int src = plexus_am_token_rank(tok);
    CHECK(hdr_len == 0, "iov header of %zu bytes", hdr_len);
    CHECK(len == 3 + 1000 + 64, "iov message of %zu bytes", len);
    for (size_t i = 0; i < len && i < 1067; i++)
        if (((unsigned char *)data)[i] != pat(src, me, i, 99)) {
            CHECK(0, "iov from %d: byte %zu", src, i);
            break;
        }
    iovs++;
}

/* The receiver chooses where a payload goes: a slot per sender. */
static unsigned char place_slots[8][512];
static volatile int placed;
static void *on_place_where(plexus_am_token_t *tok, const void *hdr, size_t hdr_len, size_t len,
                            void *arg)
{
    (void)hdr, (void)hdr_len, (void)arg;
    int src = plexus_am_token_rank(tok);
    CHECK(len == 400, "placed message of %zu bytes", len);
    return src < 8 && len <= 512 ? place_slots[src] : NULL;
}
static void on_place(plexus_am_token_t *tok, const void *hdr, size_t hdr_len, void *data,
                     size_t len, void *arg)
{
    (void)hdr, (void)hdr_len, (void)arg;
    int src = plexus_am_token_rank(tok);
    CHECK(data == place_slots[src], "payload of %d not where its place said", src);
    for (size_t i = 0; i < len; i++)
        if (place_slots[src][i] != pat(src, me, i, 5)) {
            CHECK(0, "placed payload of %d: byte %zu", src, i);
            break;
        }
    placed++;
}

/* Peers' region keys, and a region's error counts at rank 0. */
static plexus_am_rkey_t rkeys[3][64];
static volatile int nkeys;
static void on_rkey(plexus_am_token_t *tok, const void *hdr, size_t hdr_len, void *data, size_t len,
                    void *arg)
{
    int which;
    (void)hdr_len, (void)arg;
    memcpy(&which, hdr, sizeof(which));
    CHECK(len == sizeof(plexus_am_rkey_t), "key of %zu bytes", len);
    memcpy(&rkeys[which][plexus_am_token_rank(tok)], data, sizeof(plexus_am_rkey_t));
    nkeys++;
}
static int all_errors;
static void on_errs(plexus_am_token_t *tok, const void *hdr, size_t hdr_len, void *data, size_t len,
                    void *arg)
{
    int e;
    (void)tok, (void)hdr_len, (void)data, (void)len, (void)arg;
    memcpy(&e, hdr, sizeof(e));
    all_errors += e;
}

/* ---------- callbacks ---------- */

static int cb_local, cb_remote, cb_err;
static void on_local(void *arg, int st)
{
    cb_local++;
    if (st)
        cb_err = st;
    CHECK(arg == &cb_local, "callback argument");
}
static void on_remote(void *arg, int st)
{
    cb_remote++;
    if (st)
        cb_err = st;
    (void)arg;
}

/* ---------- parts of the test ---------- */

static void test_errors(plexus_am_ep_t self)
{
    char big[PLEXUS_AM_HDR_MAX + 1] = {0};
    plexus_am_ep_t ep;
    CHECK(plexus_am_register(PLEXUS_AM_HANDLERS_MAX, on_ping, NULL, NULL) == PLEXUS_AM_ERR_BAD_ID,
          "register out of range");
    CHECK(plexus_am_send(self, PLEXUS_AM_HANDLERS_MAX, NULL, 0, NULL, 0, NULL) ==
              PLEXUS_AM_ERR_BAD_ID,
          "send to an id out of range");
    CHECK(plexus_am_send(self, 1000, NULL, 0, NULL, 0, NULL) == PLEXUS_AM_ERR_BAD_ID,
          "send to id 1000");
    CHECK(plexus_am_ep(np, &ep) == PLEXUS_AM_ERR_BAD_EP, "endpoint of rank %d", np);
    CHECK(plexus_am_ep(-1, &ep) == PLEXUS_AM_ERR_BAD_EP, "endpoint of rank -1");
    CHECK(plexus_am_send(self, H_PING, big, sizeof(big), NULL, 0, NULL) == PLEXUS_AM_ERR_TOO_BIG,
          "header too big");
    size_t max = plexus_am_max_data(self);
    char *huge = calloc(1, max + 1);
    REQUIRE(huge, "memory");
    CHECK(plexus_am_send(self, H_PING, NULL, 0, huge, max + 1, NULL) == PLEXUS_AM_ERR_TOO_BIG,
          "payload of %zu bytes, max %zu", max + 1, max);
    free(huge);
    struct iovec v[PLEXUS_AM_IOV_MAX + 1];
    memset(v, 0, sizeof(v));
    CHECK(plexus_am_sendv(self, H_IOV, NULL, 0, v, PLEXUS_AM_IOV_MAX + 1, NULL) ==
              PLEXUS_AM_ERR_INVALID,
          "too many pieces");
    CHECK(strcmp(plexus_am_strerror(PLEXUS_AM_ERR_RANGE), "unknown error") != 0, "strerror");
}

/* Pings to every rank, some told by counters and some by callbacks;
 * every ping is answered by its target's handler. */
static void test_ping(plexus_am_ep_t *eps, int rounds)
{
    plexus_am_counter_t lc = {0, 0}, rc = {0, 0};
    size_t max = plexus_am_max_data(eps[0]);
    static unsigned char bufs[16][8192];
    size_t sizes[] = {0, 1, 7, 100, 256, 257, 4000, 8192};
    int sent = 0, by_counter = 0, by_cb = 0, fire = 0;
    for (int k = 0; k < rounds; k++) {
        for (int r = 0; r < np; r++) {
            int seq = k * np + r;
            size_t len = sizes[seq % 8];
            if (len > max)
                len = max;
            unsigned char *b = bufs[seq % 16];
            ping_hdr_t h = {me, seq, (unsigned)len};
            for (size_t i = 0; i < len; i++)
                b[i] = pat(me, r, i, (unsigned)seq);
            plexus_am_cmpl_t c = {0};
            if (seq % 3 == 0) {
                c.local = &lc;
                c.remote = &rc;
                by_counter++;
            } else if (seq % 3 == 1) {
                c.local_cb = on_local;
                c.remote_cb = on_remote;
                c.arg = &cb_local;
                by_cb++;
            } else {
                fire++; /* neither: the payload is copied at the call */
            }
            int rv =
                plexus_am_send(eps[r], H_PING, &h, sizeof(h), b, len, seq % 3 == 2 ? NULL : &c);
            CHECK(rv == PLEXUS_AM_OK, "send to %d: %s", r, plexus_am_strerror(rv));
            if (seq % 3 == 2)
                memset(b, 0xee, len); /* it was copied */
            sent++;
            /* buffers are reused 16 sends later: wait for those */
            if (seq % 3 == 0)
                CHECK(plexus_am_wait_counter(&lc, (uint64_t)by_counter) == PLEXUS_AM_OK,
                      "local counter error %d", lc.error);
            else if (seq % 3 == 1)
                while (cb_local < by_cb)
                    plexus_am_progress();
        }
    }
    CHECK(plexus_am_wait_counter(&rc, (uint64_t)by_counter) == PLEXUS_AM_OK,
          "remote counter error %d", rc.error);
    while (cb_remote < by_cb || pongs < sent)
        plexus_am_progress();
    CHECK(lc.count == (uint64_t)by_counter && rc.count == (uint64_t)by_counter,
          "counters %llu %llu, want %d", (unsigned long long)lc.count, (unsigned long long)rc.count,
          by_counter);
    CHECK(cb_local == by_cb && cb_remote == by_cb && !cb_err, "callbacks %d %d (error %d)",
          cb_local, cb_remote, cb_err);
    CHECK(pongs == sent, "%d pongs for %d pings", pongs, sent);
}

static void test_iov_place(plexus_am_ep_t *eps)
{
    static unsigned char a[3], b[1000], c[64], p[400];
    plexus_am_counter_t lc = {0, 0}, rc = {0, 0};
    plexus_am_cmpl_t cm = {.local = &lc, .remote = &rc};
    for (int r = 0; r < np; r++) {
        for (size_t i = 0; i < 1067; i++) {
            unsigned char v = pat(me, r, i, 99);
            if (i < 3)
                a[i] = v;
            else if (i < 1003)
                b[i - 3] = v;
            else
                c[i - 1003] = v;
        }
        for (size_t i = 0; i < sizeof(p); i++)
            p[i] = pat(me, r, i, 5);
        struct iovec iov[3] = {{a, 3}, {b, 1000}, {c, 64}};
        int rv = plexus_am_sendv(eps[r], H_IOV, NULL, 0, iov, 3, &cm);
        CHECK(rv == PLEXUS_AM_OK, "sendv: %s", plexus_am_strerror(rv));
        rv = plexus_am_send(eps[r], H_PLACE, NULL, 0, p, sizeof(p), &cm);
        CHECK(rv == PLEXUS_AM_OK, "send placed: %s", plexus_am_strerror(rv));
        /* the buffers are filled again for the next peer */
        CHECK(plexus_am_wait_counter(&lc, 2 * (uint64_t)(r + 1)) == PLEXUS_AM_OK,
              "iov/place local error %d", lc.error);
    }
    CHECK(plexus_am_wait_counter(&rc, 2 * (uint64_t)np) == PLEXUS_AM_OK,
          "iov/place remote error %d", rc.error);
    while (iovs < np || placed < np)
        plexus_am_progress();
}

/* A message for an id nobody registered: its remote completion fails. */
static void test_no_handler(plexus_am_ep_t *eps)
{
    plexus_am_counter_t lc = {0, 0}, rc = {0, 0};
    plexus_am_cmpl_t c = {.local = &lc, .remote = &rc};
    int dst = (me + 1) % np;
    CHECK(plexus_am_send(eps[dst], H_UNUSED, "x", 1, "payload", 7, &c) == PLEXUS_AM_OK, "send");
    CHECK(plexus_am_wait_counter(&rc, 1) == PLEXUS_AM_ERR_NO_HANDLER,
          "message to an unregistered id: remote error %d", rc.error);
    CHECK(plexus_am_wait_counter(&lc, 1) == PLEXUS_AM_OK, "its local completion is fine");
}

static size_t min_max_data(plexus_am_ep_t *eps)
{
    size_t m = plexus_am_max_data(eps[0]);
    for (int r = 1; r < np; r++)
        if (plexus_am_max_data(eps[r]) < m)
            m = plexus_am_max_data(eps[r]);
    return m;
}

static void send_key(plexus_am_ep_t *eps, int which, plexus_am_mem_t m)
{
    plexus_am_rkey_t k;
    plexus_am_counter_t lc = {0, 0};
    plexus_am_cmpl_t c = {.local = &lc};
    REQUIRE(plexus_am_mem_rkey(m, &k) == PLEXUS_AM_OK, "rkey");
    for (int r = 0; r < np; r++)
        CHECK(plexus_am_send(eps[r], H_RKEY, &which, sizeof(which), &k, sizeof(k), &c) ==
                  PLEXUS_AM_OK,
              "key to %d", r);
    plexus_am_wait_counter(&lc, (uint64_t)np);
}

/* Get a peer's region whole, put into a slot of another's, each in more
 * pieces than one message carries; then the errors. */
static void test_rma(plexus_am_ep_t *eps)
{
    /* the same at every rank: the smallest message limit of the job */
    size_t S = 3 * min_max_data(eps) + 123;
    if (S > (1u << 20))
        S = (1u << 20) + 123;
    unsigned char *src = malloc(S), *slots = calloc((size_t)np, S), *got = malloc(S);
    unsigned char *tmp = malloc(64);
    REQUIRE(src && slots && got && tmp, "memory");
    for (size_t i = 0; i < S; i++)
        src[i] = pat(me, 0, i, 11);
    plexus_am_mem_t msrc, mslots, mtmp;
    REQUIRE(plexus_am_mem_register(src, S, &msrc) == PLEXUS_AM_OK, "register");
    REQUIRE(plexus_am_mem_register(slots, (size_t)np * S, &mslots) == PLEXUS_AM_OK, "register");
    REQUIRE(plexus_am_mem_register(tmp, 64, &mtmp) == PLEXUS_AM_OK, "register");
    send_key(eps, 0, msrc);
    send_key(eps, 1, mslots);
    send_key(eps, 2, mtmp);
    while (nkeys < 3 * np) /* (some may have come before this call) */
        plexus_am_progress();
    plexus_am_barrier();

    int from = (me + 1) % np, to = (me + 2) % np;
    plexus_am_counter_t lc = {0, 0}, rc = {0, 0};
    plexus_am_cmpl_t c = {.local = &lc, .remote = &rc};
    CHECK(plexus_am_get(eps[from], got, S, &rkeys[0][from], 0, &c) == PLEXUS_AM_OK, "get");
    CHECK(plexus_am_wait_counter(&lc, 1) == PLEXUS_AM_OK, "get: error %d", lc.error);
    CHECK(rc.count == 1, "a get's remote completion comes with its local one");
    for (size_t i = 0; i < S; i++)
        if (got[i] != pat(from, 0, i, 11)) {
            CHECK(0, "got from %d: byte %zu of %zu", from, i, S);
            break;
        }
    /* a piece from the middle */
    memset(got, 0, S);
    CHECK(plexus_am_get(eps[from], got, 1000, &rkeys[0][from], S - 1000, &c) == PLEXUS_AM_OK,
          "get");
    CHECK(plexus_am_wait_counter(&lc, 2) == PLEXUS_AM_OK, "get: error %d", lc.error);
    CHECK(got[0] == pat(from, 0, S - 1000, 11) && got[999] == pat(from, 0, S - 1, 11),
          "the end of %d's region", from);

    CHECK(plexus_am_put(eps[to], src, S, &rkeys[1][to], (uint64_t)me * S, &c) == PLEXUS_AM_OK,
          "put");
    CHECK(plexus_am_wait_counter(&rc, 3) == PLEXUS_AM_OK, "put: remote error %d", rc.error);
    CHECK(plexus_am_wait_counter(&lc, 3) == PLEXUS_AM_OK, "put: local error %d", lc.error);
    plexus_am_barrier();
    for (int o = 0; o < np; o++) {
        int wrote = (o + 2) % np == me; /* o put its region into its slot here */
        unsigned char *s = slots + (size_t)o * S;
        for (size_t i = 0; i < S; i++) {
            unsigned char want = wrote ? pat(o, 0, i, 11) : 0;
            if (s[i] != want) {
                CHECK(0, "slot of %d: byte %zu is %u, want %u", o, i, s[i], want);
                break;
            }
        }
    }

    /* errors the origin sees at once: out of the region's range */
    CHECK(plexus_am_put(eps[to], src, 2, &rkeys[2][to], 63, &c) == PLEXUS_AM_ERR_RANGE,
          "put beyond the end");
    CHECK(plexus_am_get(eps[to], got, 65, &rkeys[2][to], 0, &c) == PLEXUS_AM_ERR_RANGE,
          "get larger than the region");
    /* errors the target sees: a key it never gave out */
    plexus_am_rkey_t bad = rkeys[2][to];
    bad.w[0] += 1ull << 32; /* another generation of the slot */
    plexus_am_counter_t el = {0, 0}, er = {0, 0};
    plexus_am_cmpl_t ce = {.local = &el, .remote = &er};
    CHECK(plexus_am_put(eps[to], src, 8, &bad, 0, &ce) == PLEXUS_AM_OK, "put, bad key");
    CHECK(plexus_am_wait_counter(&er, 1) == PLEXUS_AM_ERR_NOT_REGISTERED,
          "put with a stale key: remote error %d", er.error);
    el = (plexus_am_counter_t){0, 0};
    CHECK(plexus_am_get(eps[to], got, 8, &bad, 0, &ce) == PLEXUS_AM_OK, "get, bad key");
    CHECK(plexus_am_wait_counter(&el, 1) == PLEXUS_AM_ERR_NOT_REGISTERED,
          "get with a stale key: local error %d", el.error);
    /* a region deregistered after its key went out */
    plexus_am_barrier();
    CHECK(plexus_am_mem_deregister(mtmp) == PLEXUS_AM_OK, "deregister");
    CHECK(plexus_am_mem_deregister(NULL) == PLEXUS_AM_ERR_NOT_REGISTERED, "deregister nothing");
    plexus_am_barrier();
    el = (plexus_am_counter_t){0, 0};
    CHECK(plexus_am_get(eps[to], got, 8, &rkeys[2][to], 0, &ce) == PLEXUS_AM_OK, "get");
    CHECK(plexus_am_wait_counter(&el, 1) == PLEXUS_AM_ERR_NOT_REGISTERED,
          "get from a deregistered region: error %d", el.error);
    er = (plexus_am_counter_t){0, 0};
    CHECK(plexus_am_put(eps[to], src, 0, &rkeys[2][to], 0, &ce) == PLEXUS_AM_OK, "empty put");
    CHECK(plexus_am_wait_counter(&er, 1) == PLEXUS_AM_ERR_NOT_REGISTERED,
          "empty put to a deregistered region: error %d", er.error);
    plexus_am_barrier();
    plexus_am_mem_deregister(msrc);
    plexus_am_mem_deregister(mslots);
    free(src);
    free(slots);
    free(got);
    free(tmp);
}

int main(int argc, char **argv)
{
    const char *m = getenv("PLEXUS_AM_TEST_MPI");
    int major, minor, mpi_rank = -1;
    with_mpi = m && atoi(m);
    if (with_mpi) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    }
    REQUIRE(plexus_am_rank() == PLEXUS_AM_ERR_NOT_INIT, "rank before init");
    REQUIRE(plexus_am_init() == PLEXUS_AM_OK, "init");
    REQUIRE(plexus_am_init() == PLEXUS_AM_OK, "init again (nested)");
    REQUIRE(plexus_am_finalize() == PLEXUS_AM_OK, "finalize of the nested init");
    me = plexus_am_rank();
    np = plexus_am_size();
    REQUIRE(np >= 1 && np <= 64 && me >= 0 && me < np, "rank %d of %d", me, np);
    if (with_mpi)
        CHECK(me == mpi_rank, "rank %d, MPI says %d", me, mpi_rank);
    CHECK(plexus_am_version(&major, &minor) == PLEXUS_AM_VERSION &&
              major == PLEXUS_AM_VERSION_MAJOR && minor == PLEXUS_AM_VERSION_MINOR,
          "version %d.%d", major, minor);

    plexus_am_ep_t eps[64];
    for (int r = 0; r < np; r++) {
        REQUIRE(plexus_am_ep(r, &eps[r]) == PLEXUS_AM_OK, "endpoint %d", r);
        CHECK(plexus_am_ep_rank(eps[r]) == r, "endpoint's rank");
        const char *ch = plexus_am_ep_channel(eps[r]);
        CHECK(ch && (r == me) == !strcmp(ch, "self"), "rank %d's channel %s", r, ch ? ch : "NULL");
    }
    CHECK(plexus_am_ep_channel(NULL) == NULL, "channel of no endpoint");
    CHECK(plexus_am_register(H_PING, on_ping, NULL, NULL) == PLEXUS_AM_OK, "register");
    CHECK(plexus_am_register(H_PONG, on_pong, NULL, NULL) == PLEXUS_AM_OK, "register");
    CHECK(plexus_am_register(H_IOV, on_iov, NULL, NULL) == PLEXUS_AM_OK, "register");
    CHECK(plexus_am_register(H_PLACE, on_place, on_place_where, NULL) == PLEXUS_AM_OK, "register");
    CHECK(plexus_am_register(H_RKEY, on_rkey, NULL, NULL) == PLEXUS_AM_OK, "register");
    CHECK(plexus_am_register(H_ERRS, on_errs, NULL, NULL) == PLEXUS_AM_OK, "register");
    REQUIRE(plexus_am_barrier() == PLEXUS_AM_OK, "barrier");

    test_errors(eps[me]);
    test_ping(eps, 40);
    if (with_mpi) { /* MPI works between the interface's traffic */
        int sum = 0, one = 1;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(sum == np, "allreduce %d", sum);
    }
    test_iov_place(eps);
    test_no_handler(eps);
    test_rma(eps);

    /* rank 0 hears every rank's failures */
    plexus_am_counter_t lc = {0, 0};
    plexus_am_cmpl_t c = {.local = &lc};
    plexus_am_send(eps[0], H_ERRS, &errors, sizeof(errors), NULL, 0, &c);
    plexus_am_wait_counter(&lc, 1);
    plexus_am_barrier();
    if (me == 0 && all_errors == 0)
        printf("PASS am_basic np=%d: %d pings per rank, put/get of %zu-byte regions%s\n", np, pongs,
               3 * min_max_data(eps) + 123, with_mpi ? ", inside MPI" : "");
    int total = all_errors;
    REQUIRE(plexus_am_finalize() == PLEXUS_AM_OK, "finalize");
    CHECK(plexus_am_send(eps[0], H_PING, NULL, 0, NULL, 0, NULL) == PLEXUS_AM_ERR_NOT_INIT,
          "send after finalize");
    if (with_mpi)
        MPI_Finalize();
    return me == 0 ? (total != 0) : (errors != 0);
}
