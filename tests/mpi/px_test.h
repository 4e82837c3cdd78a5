/* Shared helpers for the MPI integration tests: checks, payload patterns,
 * checksums and a common start/finish protocol. Standard MPI only, so every
 * test also runs on any other MPI implementation. */
#ifndef PX_TEST_H
#define PX_TEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *px_test_name = "?";
static int px_test_rank = -1;
static int px_test_size = 0;
static int px_test_errors = 0;

/* Enough failure lines to diagnose, few enough not to flood the log. */
#define PX_TEST_MAX_REPORTS 20

static inline void px_test_fail_(const char *file, int line, const char *expr, const char *fmt, ...)
{
    char msg[1024];
    int len;
    va_list ap;

    px_test_errors++;
    if (px_test_errors > PX_TEST_MAX_REPORTS)
        return;
    len = snprintf(msg, sizeof(msg), "FAIL %s rank %d %s:%d: ", px_test_name, px_test_rank, file,
                   line);
    va_start(ap, fmt);
    if (len > 0 && len < (int)sizeof(msg))
        len += vsnprintf(msg + len, sizeof(msg) - len, fmt, ap);
    va_end(ap);
    if (len > 0 && len < (int)sizeof(msg))
        snprintf(msg + len, sizeof(msg) - len, " [%s]", expr);
    /* One write per line so lines of different ranks do not interleave. */
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
}

/* Soft check: record, report and continue. */
#define PX_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond))                                                                               \
            px_test_fail_(__FILE__, __LINE__, #cond, __VA_ARGS__);                                 \
    } while (0)

/* Hard check: continuing would hang or crash, so the whole job stops. */
#define PX_REQUIRE(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            px_test_fail_(__FILE__, __LINE__, #cond, __VA_ARGS__);                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

/* For calls made while a communicator has MPI_ERRORS_RETURN. */
#define PX_MPI(call)                                                                               \
    do {                                                                                           \
        int px_rc_ = (call);                                                                       \
        if (px_rc_ != MPI_SUCCESS) {                                                               \
            char px_msg_[MPI_MAX_ERROR_STRING] = "";                                               \
            int px_len_ = 0;                                                                       \
            MPI_Error_string(px_rc_, px_msg_, &px_len_);                                           \
            px_test_fail_(__FILE__, __LINE__, #call, "returned %d: %s", px_rc_, px_msg_);          \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

/* The error class of a call's result is cls (the call returns errors). */
#define PX_EXPECT_CLASS(call, cls)                                                                 \
    do {                                                                                           \
        int px_rc_ = (call), px_c_ = -1;                                                           \
        MPI_Error_class(px_rc_, &px_c_);                                                           \
        PX_CHECK(px_c_ == (cls), "%s: class %d, want %d (%s)", #call, px_c_, cls, #cls);           \
    } while (0)

/* Call after MPI_Init / MPI_Init_thread. */
static inline void px_test_begin(const char *name)
{
    px_test_name = name;
    MPI_Comm_rank(MPI_COMM_WORLD, &px_test_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &px_test_size);
    setvbuf(stdout, NULL, _IOLBF, 0);
}

static inline void px_test_init(int *argc, char ***argv, const char *name)
{
    MPI_Init(argc, argv);
    px_test_begin(name);
}

/* Agree on the outcome, print one summary line, finalize. Returns the exit
 * code for main(). */
static inline int px_test_finish(const char *fmt, ...)
{
    int total = 0;
    char summary[512] = "";
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(summary, sizeof(summary), fmt, ap);
    va_end(ap);
    MPI_Allreduce(&px_test_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (px_test_rank == 0) {
        if (total == 0)
            printf("PASS %s np=%d: %s\n", px_test_name, px_test_size, summary);
        else
            printf("FAIL %s np=%d: %d failed checks\n", px_test_name, px_test_size, total);
        fflush(stdout);
    }
    MPI_Finalize();
    return total == 0 && px_test_errors == 0 ? 0 : 1;
}

/* For tests that need more ranks than they were given. */
static inline int px_test_skip(const char *why)
{
    if (px_test_rank == 0)
        printf("skipped: %s (%s np=%d)\n", why, px_test_name, px_test_size);
    MPI_Finalize();
    return 0;
}

/* Affine maps x -> m*x + c (mod 2^32) composed "a then b": an associative,
 * non-commutative operation (MPI_Op_create(px_aff_fn, 0, ...) over two
 * MPI_UNSIGNED) that shows whether a reduction keeps rank order. */
typedef struct {
    unsigned m, c;
} px_aff_t;

static inline px_aff_t px_aff_then(px_aff_t a, px_aff_t b)
{
    px_aff_t r = {a.m * b.m, b.m * a.c + b.c};
    return r;
}

static inline void px_aff_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    px_aff_t *a = (px_aff_t *)in, *b = (px_aff_t *)inout;
    (void)dt;
    for (int i = 0; i < *len; i++)
        b[i] = px_aff_then(a[i], b[i]);
}

/* Element i of rank r's contribution. */
static inline px_aff_t px_aff_val(int r, int i)
{
    px_aff_t a = {(unsigned)(r * 2 + 3 + (i % 5)), (unsigned)(r * 7 + i)};
    return a;
}

/* x_lo then ... then x_hi (inclusive), element i */
static inline px_aff_t px_aff_fold(int lo, int hi, int i)
{
    px_aff_t acc = px_aff_val(lo, i);
    for (int r = lo + 1; r <= hi; r++)
        acc = px_aff_then(acc, px_aff_val(r, i));
    return acc;
}

/* Pair tests pair ranks 2i and 2i+1; a lone last rank gets -1. */
static inline int px_pair_peer(int rank, int size)
{
    int peer = rank ^ 1;
    return peer < size ? peer : -1;
}

static inline void px_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Wall-clock seconds, comparable between processes of one machine: printed
 * by the fault tests so the driver can time the job's end. */
static inline double px_epoch_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline uint64_t px_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Byte i of the pattern depends on (seed, i): shifted, truncated, duplicated
 * or foreign data all show up at a definite offset. */
static inline void px_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = buf;
    uint64_t base = px_mix64(seed);
    size_t i;

    for (i = 0; i + 8 <= n; i += 8) {
        uint64_t w = px_mix64(base + i);
        memcpy(p + i, &w, 8);
    }
    if (i < n) {
        uint64_t w = px_mix64(base + i);
        memcpy(p + i, &w, n - i);
    }
}

/* Returns n when buf holds the pattern, else the first bad offset. */
static inline size_t px_verify(const void *buf, size_t n, uint64_t seed)
{
    const unsigned char *p = buf;
    uint64_t base = px_mix64(seed);
    size_t i, j;

    for (i = 0; i < n; i += 8) {
        uint64_t w = px_mix64(base + i);
        size_t len = n - i < 8 ? n - i : 8;
        if (memcmp(p + i, &w, len) != 0) {
            const unsigned char *e = (const unsigned char *)&w;
            for (j = 0; j < len && p[i + j] == e[j]; j++) {
            }
            return i + j;
        }
    }
    return n;
}

/* Position-dependent checksum (Fletcher-style over bytes, 64-bit sums). */
static inline uint64_t px_checksum(const void *buf, size_t n)
{
    const unsigned char *p = buf;
    uint64_t a = 1, b = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        a += p[i];
        b += a;
    }
    return (b << 32) ^ a ^ ((uint64_t)n << 1);
}

#endif /* PX_TEST_H */
