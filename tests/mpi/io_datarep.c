/* Data representations:
 * - "external32": ints, shorts and doubles written through an external32
 *   view are big-endian in the file (checked byte by byte through a native
 *   view), and read back through the external32 view as they were, also
 *   into a noncontiguous memory type; "internal" is the native layout;
 * - MPI_Register_datarep: a representation whose conversions store each
 *   int XOR a mask; the file holds the masked ints, reads give the
 *   originals, and the program's read, write and extent functions were
 *   called; registering a name twice (or a predefined one) is refused;
 * - MPI_Register_datarep_c: the same with another mask, whose large-count
 *   conversions are the ones called;
 * - types whose size differs in the representation, through external32:
 *   longs, long doubles and a struct of int, long, double and long double
 *   written collectively and independently are, in the file, 4-byte
 *   big-endian longs and binary128 long doubles (1.0, -2.5, a denormal,
 *   infinities, a NaN, 1/3, -0.0 checked byte by byte through a native
 *   view) and read back as they were, also into a strided memory type;
 *   MPI_File_get_type_extent gives the external32 sizes; a long or
 *   unsigned long past 32 bits is MPI_ERR_CONVERSION (in a collective
 *   write on every rank, when one rank's is), and so is a wchar past 16
 *   bits; wchars are 2 bytes and unsigned longs 4 (read back without
 *   sign extension); binary128 values a long double cannot hold are
 *   rounded to nearest even when read;
 * - a view of etype MPI_LONG and a filetype of every np-th long, in
 *   external32 and in a registered representation whose extent function
 *   gives 4 bytes for a long: the file holds 4-byte longs where the view
 *   puts them (checked through a native view), the conversions are
 *   called, the file pointer, byte offsets and extents count 4-byte
 *   longs; written collectively and independently, read back both ways;
 * - a subarray filetype of longs in external32 is scaled to 4-byte longs
 *   (byte offsets, extent); a darray one is MPI_ERR_UNSUPPORTED_DATAREP. */
#include "io_test.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

enum { N = 64 };
#define MASK 0x5a5a5a5a

static int calls_read, calls_write, calls_extent;

static int xor_write(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position,
                     void *extra)
{
    PX_CHECK(dt == MPI_INT && extra == &calls_write, "write conversion given another type");
    const int *u = (const int *)userbuf + position;
    int *f = filebuf;
    for (int i = 0; i < count; i++)
        f[i] = u[i] ^ MASK;
    calls_write++;
    return MPI_SUCCESS;
}

static int xor_read(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position,
                    void *extra)
{
    (void)extra;
    PX_CHECK(dt == MPI_INT, "read conversion given another type");
    int *u = (int *)userbuf + position;
    const int *f = filebuf;
    for (int i = 0; i < count; i++)
        u[i] = f[i] ^ MASK;
    calls_read++;
    return MPI_SUCCESS;
}

static int xor_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    (void)extra;
    int size;
    MPI_Type_size(dt, &size);
    *extent = size;
    calls_extent++;
    return MPI_SUCCESS;
}

/* The large-count conversions (MPI_Register_datarep_c): another mask. */
#define MASK_C 0x0f0f0f0f
static int calls_read_c, calls_write_c;

static int xor_write_c(void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf,
                       MPI_Offset position, void *extra)
{
    PX_CHECK(dt == MPI_INT && extra == &calls_write_c, "write_c conversion given another type");
    const int *u = (const int *)userbuf + position;
    int *f = filebuf;
    for (MPI_Count i = 0; i < count; i++)
        f[i] = u[i] ^ MASK_C;
    calls_write_c++;
    return MPI_SUCCESS;
}

static int xor_read_c(void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf,
                      MPI_Offset position, void *extra)
{
    PX_CHECK(dt == MPI_INT && extra == &calls_write_c, "read_c conversion given another type");
    int *u = (int *)userbuf + position;
    const int *f = filebuf;
    for (MPI_Count i = 0; i < count; i++)
        u[i] = f[i] ^ MASK_C;
    calls_read_c++;
    return MPI_SUCCESS;
}

/* Through the view of representation rep at xd (set by the caller): the
 * ints written are read back as they were, the conversions of the
 * representation (counted at writes, reads) were called, and the file
 * holds them XOR mask, as a native view shows. */
static void xor_roundtrip(MPI_File fh, MPI_Offset xd, const char *rep, const int *iv, int mask,
                          const int *writes, const int *reads)
{
    int ir[N], w0 = *writes, r0 = *reads;
    MPI_Status st;
    PX_MPI(MPI_File_write_at(fh, 0, iv, N, MPI_INT, &st));
    PX_CHECK(*writes > w0, "%s: the write conversion was not called", rep);
    memset(ir, 0, sizeof(ir));
    PX_MPI(MPI_File_read_at(fh, 0, ir, N, MPI_INT, &st));
    PX_CHECK(*reads > r0, "%s: the read conversion was not called", rep);
    PX_CHECK(io_count(&st, MPI_INT) == N && !memcmp(ir, iv, sizeof(ir)), "%s: read back differs",
             rep);
    PX_MPI(MPI_File_set_view(fh, xd, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    PX_MPI(MPI_File_read_at(fh, 0, ir, N, MPI_INT, &st));
    for (int i = 0; i < N; i++)
        if (ir[i] != (iv[i] ^ mask)) {
            PX_CHECK(0, "%s: int %d in the file is %x, want %x", rep, i, ir[i], iv[i] ^ mask);
            break;
        }
}

static void be_bytes(unsigned char *out, const void *v, int n)
{
    uint64_t x = 0;
    memcpy(&x, v, (size_t)n); /* little-endian host */
    for (int i = 0; i < n; i++)
        out[n - 1 - i] = (unsigned char)(x >> (8 * i));
}

/* ---------- types whose size differs in the representation ---------- */

enum { K = 8, S = 4 };

static long lval(int r, int i)
{
    static const long v[K] = {0, 1, -1, INT32_MAX, INT32_MIN, 0x01020304, -123456, 42};
    return v[i] + (i > 4 ? r : 0);
}

/* long doubles and their binary128 bytes (the last 8 are zero but for 1/3) */
static long double ldval(int i)
{
    const long double v[K] = {
        1.0L, -2.5L, 0x1p-16400L, HUGE_VALL, -HUGE_VALL, __builtin_nanl(""), 1.0L / 3, -0.0L};
    return v[i];
}
static const unsigned char ld_x32[K][16] = {
    {0x3f, 0xff},
    {0xc0, 0x00, 0x40},
    {0, 0, 0, 0, 0x40},
    {0x7f, 0xff},
    {0xff, 0xff},
    {0x7f, 0xff, 0x80},
    {0x3f, 0xfd, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x56},
    {0x80}};

typedef struct mix {
    int i;
    long l;
    double d;
    long double ld;
} mix_t;

static MPI_Datatype mix_type(void)
{
    int bl[4] = {1, 1, 1, 1};
    MPI_Aint dp[4] = {offsetof(mix_t, i), offsetof(mix_t, l), offsetof(mix_t, d),
                      offsetof(mix_t, ld)};
    MPI_Datatype ty[4] = {MPI_INT, MPI_LONG, MPI_DOUBLE, MPI_LONG_DOUBLE}, t;
    MPI_Type_create_struct(4, bl, dp, ty, &t);
    MPI_Type_commit(&t);
    return t;
}

static mix_t mixval(int r, int j)
{
    mix_t m;
    memset(&m, 0, sizeof(m));
    m.i = 100 * r + j - 3;
    m.l = -(1000L * r + j);
    m.d = 0.5 + j + r * 1e6;
    m.ld = ldval(j);
    return m;
}

/* The 10 bytes of an x87 long double that hold its value. */
static int ld_same(long double a, long double b) { return !memcmp(&a, &b, 10); }

/* External32 through a view of bytes: each rank's K longs (4 bytes each in
 * the file), K long doubles (binary128) and S structs of int, long, double
 * and long double (32 bytes packed), checked byte by byte through a native
 * view and read back; a long past 32 bits is MPI_ERR_CONVERSION. */
static void x32_mixed(MPI_File fh, MPI_Offset base)
{
    int me = px_test_rank, np = px_test_size;
    const MPI_Offset per = 4 * K + 16 * K + 32 * S;
    long lv[K], lr[2 * K];
    long double dv[K], dr[K];
    mix_t mv[S], mr[S];
    MPI_Datatype mt = mix_type();
    MPI_Status st;
    for (int i = 0; i < K; i++) {
        lv[i] = lval(me, i);
        dv[i] = ldval(i);
    }
    for (int j = 0; j < S; j++)
        mv[j] = mixval(me, j);
    PX_MPI(MPI_File_set_view(fh, base + me * per, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    PX_MPI(MPI_File_write_at_all(fh, 0, lv, K, MPI_LONG, &st));
    PX_CHECK(io_count(&st, MPI_LONG) == K, "wrote %d longs", io_count(&st, MPI_LONG));
    PX_MPI(MPI_File_write_at(fh, 4 * K, dv, K, MPI_LONG_DOUBLE, &st));
    PX_CHECK(io_count(&st, MPI_LONG_DOUBLE) == K, "wrote %d long doubles",
             io_count(&st, MPI_LONG_DOUBLE));
    PX_MPI(MPI_File_write_at_all(fh, 20 * K, mv, S, mt, &st));
    PX_CHECK(io_count(&st, mt) == S, "wrote %d structs", io_count(&st, mt));

    /* values without an external32 form: refused, nothing written */
    long big = 1L << 40, nb[2] = {3, -(1L << 35)};
    unsigned long ubig = 1UL << 33;
    EXPECT_CLASS(MPI_File_write_at(fh, 0, &big, 1, MPI_LONG, &st), MPI_ERR_CONVERSION);
    EXPECT_CLASS(MPI_File_write_at(fh, 0, nb, 2, MPI_LONG, &st), MPI_ERR_CONVERSION);
    EXPECT_CLASS(MPI_File_write_at(fh, 0, &ubig, 1, MPI_UNSIGNED_LONG, &st), MPI_ERR_CONVERSION);
    long one = me ? 7 : big; /* only rank 0's is out of range: all fail */
    EXPECT_CLASS(MPI_File_write_at_all(fh, 0, &one, 1, MPI_LONG, &st), MPI_ERR_CONVERSION);

    /* sizes in the file */
    MPI_Aint ext = 0;
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 3, MPI_LONG, &vec);
    MPI_Type_commit(&vec);
    const struct {
        MPI_Datatype t;
        MPI_Aint want;
    } exts[] = {{MPI_LONG, 4},  {MPI_UNSIGNED_LONG, 4}, {MPI_LONG_DOUBLE, 16},
                {MPI_WCHAR, 2}, {MPI_INT, 4},           {vec, 16}};
    for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
        PX_MPI(MPI_File_get_type_extent(fh, exts[i].t, &ext));
        PX_CHECK(ext == exts[i].want, "external32 extent of type %zu: %ld, want %ld", i, (long)ext,
                 (long)exts[i].want);
    }
    MPI_Type_free(&vec);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the next rank's bytes */
    int o = (me + 1) % np;
    unsigned char raw[4 * K + 16 * K + 32 * S], want[16];
    PX_MPI(MPI_File_set_view(fh, base + o * per, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    PX_MPI(MPI_File_read_at(fh, 0, raw, (int)per, MPI_BYTE, &st));
    PX_CHECK(io_count(&st, MPI_BYTE) == per, "read %d raw bytes", io_count(&st, MPI_BYTE));
    for (int i = 0; i < K; i++) {
        int32_t v = (int32_t)lval(o, i);
        be_bytes(want, &v, 4);
        PX_CHECK(!memcmp(raw + 4 * i, want, 4), "long %d of rank %d: %02x%02x%02x%02x", i, o,
                 raw[4 * i], raw[4 * i + 1], raw[4 * i + 2], raw[4 * i + 3]);
        const unsigned char *x = raw + 4 * K + 16 * i;
        PX_CHECK(!memcmp(x, ld_x32[i], 16),
                 "long double %d of rank %d: %02x%02x %02x%02x %02x%02x%02x%02x %02x%02x", i, o,
                 x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9]);
    }
    for (int j = 0; j < S; j++) {
        mix_t m = mixval(o, j);
        const unsigned char *x = raw + 20 * K + 32 * j;
        int32_t l = (int32_t)m.l;
        be_bytes(want, &m.i, 4);
        PX_CHECK(!memcmp(x, want, 4), "struct %d of rank %d: int", j, o);
        be_bytes(want, &l, 4);
        PX_CHECK(!memcmp(x + 4, want, 4), "struct %d of rank %d: long", j, o);
        be_bytes(want, &m.d, 8);
        PX_CHECK(!memcmp(x + 8, want, 8), "struct %d of rank %d: double", j, o);
        PX_CHECK(!memcmp(x + 16, ld_x32[j], 16), "struct %d of rank %d: long double", j, o);
    }

    /* and back through external32: longs into every other long */
    MPI_Datatype every2;
    MPI_Type_vector(K, 1, 2, MPI_LONG, &every2);
    MPI_Type_commit(&every2);
    memset(lr, 0x55, sizeof(lr));
    memset(dr, 0, sizeof(dr));
    memset(mr, 0, sizeof(mr));
    PX_MPI(MPI_File_set_view(fh, base + o * per, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    PX_MPI(MPI_File_read_at(fh, 0, lr, 1, every2, &st));
    PX_CHECK(io_count(&st, MPI_LONG) == K, "read %d longs", io_count(&st, MPI_LONG));
    PX_MPI(MPI_File_read_at_all(fh, 4 * K, dr, K, MPI_LONG_DOUBLE, &st));
    PX_CHECK(io_count(&st, MPI_LONG_DOUBLE) == K, "read %d long doubles",
             io_count(&st, MPI_LONG_DOUBLE));
    PX_MPI(MPI_File_read_at(fh, 20 * K, mr, S, mt, &st));
    for (int i = 0; i < K; i++) {
        PX_CHECK(lr[2 * i] == lval(o, i), "long %d of rank %d read back as %ld", i, o, lr[2 * i]);
        PX_CHECK(ld_same(dr[i], ldval(i)), "long double %d of rank %d read back as %Lg", i, o,
                 dr[i]);
    }
    for (int j = 0; j < S; j++) {
        mix_t m = mixval(o, j);
        PX_CHECK(mr[j].i == m.i && mr[j].l == m.l && mr[j].d == m.d && ld_same(mr[j].ld, m.ld),
                 "struct %d of rank %d read back differs", j, o);
    }
    MPI_Type_free(&every2);
    MPI_Type_free(&mt);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Binary128 values that a long double cannot hold exactly, read through
 * external32: ties round to even, more than half rounds up, the largest
 * binary128 becomes infinity, the smallest denormal zero, and a NaN whose
 * payload is only in the low bits stays a NaN. */
static void x32_rounding(MPI_File fh, MPI_Offset base)
{
    enum { R = 6 };
    static const unsigned char q[R][16] = {
        {0x3f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x01},
        {0x3f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x03},
        {0x3f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0x01},
        {0x7f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01},
        {0x7f, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
         0xff},
        {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01}};
    const long double want[R] = {1.0L, 1.0L + 0x1p-62L, 1.0L + 0x1p-63L, 0, HUGE_VALL, 0.0L};
    long double got[R];
    MPI_Status st;
    PX_MPI(MPI_File_set_view(fh, base, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    if (px_test_rank == 0)
        PX_MPI(MPI_File_write_at(fh, 0, q, (int)sizeof(q), MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    PX_MPI(MPI_File_set_view(fh, base, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    memset(got, 0, sizeof(got));
    PX_MPI(MPI_File_read_at_all(fh, 0, got, R, MPI_LONG_DOUBLE, &st));
    for (int i = 0; i < R; i++)
        PX_CHECK(i == 3 ? isnan(got[i]) : ld_same(got[i], want[i]),
                 "binary128 %d read as %La, want %La", i, got[i], want[i]);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* wchar (2 bytes in external32) and unsigned long (4 bytes, not sign
 * extended when read back); a wchar past 16 bits is MPI_ERR_CONVERSION. */
static void x32_wchar_ulong(MPI_File fh, MPI_Offset base)
{
    enum { W = 4 };
    const wchar_t wv[W] = {0x41, 0x3b1, 0xffff, (wchar_t)(0x100 + px_test_rank)};
    const unsigned long uv[W] = {0, 1, 0xfffffff0UL, 0x80000000UL + (unsigned long)px_test_rank};
    wchar_t wr[W];
    unsigned long ur[W];
    unsigned char raw[W * 6], want[4];
    MPI_Offset at = base + px_test_rank * (MPI_Offset)sizeof(raw);
    MPI_Status st;
    PX_MPI(MPI_File_set_view(fh, at, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    PX_MPI(MPI_File_write_at_all(fh, 0, wv, W, MPI_WCHAR, &st));
    PX_MPI(MPI_File_write_at(fh, 2 * W, uv, W, MPI_UNSIGNED_LONG, &st));
    wchar_t big = 0x10000;
    EXPECT_CLASS(MPI_File_write_at(fh, 0, &big, 1, MPI_WCHAR, &st), MPI_ERR_CONVERSION);
    PX_MPI(MPI_File_read_at_all(fh, 0, wr, W, MPI_WCHAR, &st));
    PX_CHECK(io_count(&st, MPI_WCHAR) == W, "read %d wchars", io_count(&st, MPI_WCHAR));
    PX_MPI(MPI_File_read_at(fh, 2 * W, ur, W, MPI_UNSIGNED_LONG, &st));
    PX_CHECK(!memcmp(wr, wv, sizeof(wr)) && !memcmp(ur, uv, sizeof(ur)),
             "wchars or unsigned longs read back differ");
    PX_MPI(MPI_File_set_view(fh, at, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    PX_MPI(MPI_File_read_at(fh, 0, raw, (int)sizeof(raw), MPI_BYTE, &st));
    for (int i = 0; i < W; i++) {
        uint16_t w = (uint16_t)wv[i];
        uint32_t u = (uint32_t)uv[i];
        be_bytes(want, &w, 2);
        PX_CHECK(!memcmp(raw + 2 * i, want, 2), "wchar %d in the file: %02x%02x", i, raw[2 * i],
                 raw[2 * i + 1]);
        be_bytes(want, &u, 4);
        PX_CHECK(!memcmp(raw + 2 * W + 4 * i, want, 4), "unsigned long %d in the file", i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The longs of a region where item i of rank r is at i * np + r, 4 bytes
 * each, as a native view shows them: big-endian (be) or as the program's
 * representation stores them (native int32 XOR mask). */
static void check_longs4(MPI_File fh, MPI_Offset base, long (*val)(int, int), int be, int32_t mask,
                         const char *what)
{
    int np = px_test_size;
    unsigned char raw[4 * K * 16], want[4]; /* up to 16 ranks */
    MPI_Status st;
    PX_MPI(MPI_File_set_view(fh, base, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    PX_MPI(MPI_File_read_at(fh, 0, raw, 4 * K * np, MPI_BYTE, &st));
    PX_CHECK(io_count(&st, MPI_BYTE) == 4 * K * np, "%s: read %d raw bytes", what,
             io_count(&st, MPI_BYTE));
    for (int r = 0; r < np; r++)
        for (int i = 0; i < K; i++) {
            int32_t v = (int32_t)val(r, i) ^ mask;
            if (be)
                be_bytes(want, &v, 4);
            else
                memcpy(want, &v, 4);
            const unsigned char *x = raw + 4 * (i * np + r);
            PX_CHECK(!memcmp(x, want, 4), "%s: long %d of rank %d in the file: %02x%02x%02x%02x",
                     what, i, r, x[0], x[1], x[2], x[3]);
        }
}

static long sval(int r, int i) { return (r + 1) * 1000003L * (i % 2 ? -1 : 1) + i; }
static long sval2(int r, int i) { return -sval(r, i) - 7; }

/* Through a view whose etype is MPI_LONG and filetype every np-th long
 * (rank r's start at long r): the file holds 4-byte longs, offsets and
 * extents count them; written collectively then independently, read back
 * both ways. */
static void strided_longs(MPI_File fh, MPI_Offset base, const char *rep, int be, int32_t mask,
                          const int *writes, const int *reads)
{
    int me = px_test_rank, np = px_test_size;
    MPI_Datatype ft;
    MPI_Type_vector(K, 1, np, MPI_LONG, &ft);
    MPI_Type_commit(&ft);
    MPI_Offset disp = base + me * 4, pos, boff;
    long w[K], r[K];
    MPI_Status st;
    for (int i = 0; i < K; i++)
        w[i] = sval(me, i);
    int w0 = writes ? *writes : 0, r0 = reads ? *reads : 0;
    PX_MPI(MPI_File_set_view(fh, disp, MPI_LONG, ft, rep, MPI_INFO_NULL));
    PX_MPI(MPI_File_write_all(fh, w, K, MPI_LONG, &st));
    PX_CHECK(io_count(&st, MPI_LONG) == K, "%s: wrote %d longs", rep, io_count(&st, MPI_LONG));
    PX_MPI(MPI_File_get_position(fh, &pos));
    PX_CHECK(pos == K, "%s: position %lld after %d longs", rep, (long long)pos, K);
    if (writes)
        PX_CHECK(*writes > w0, "%s: the write conversion was not called", rep);
    MPI_Aint ext = 0;
    PX_MPI(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    PX_CHECK(ext == 4, "%s: MPI_LONG extent %ld in the file", rep, (long)ext);
    PX_MPI(MPI_File_get_type_extent(fh, ft, &ext));
    PX_CHECK(ext == ((K - 1) * np + 1) * 4, "%s: filetype extent %ld in the file", rep, (long)ext);
    PX_MPI(MPI_File_get_byte_offset(fh, 3, &boff));
    PX_CHECK(boff == disp + 3 * np * 4, "%s: byte offset of long 3: %lld", rep, (long long)boff);
    PX_MPI(MPI_File_get_byte_offset(fh, K + 1, &boff));
    PX_CHECK(boff == disp + ((K - 1) * np + 1) * 4 + np * 4, "%s: byte offset of long %d: %lld",
             rep, K + 1, (long long)boff);
    MPI_Barrier(MPI_COMM_WORLD);
    check_longs4(fh, base, sval, be, mask, rep);

    PX_MPI(MPI_File_set_view(fh, disp, MPI_LONG, ft, rep, MPI_INFO_NULL));
    memset(r, 0, sizeof(r));
    PX_MPI(MPI_File_read_at(fh, 0, r, K, MPI_LONG, &st));
    PX_CHECK(io_count(&st, MPI_LONG) == K, "%s: read %d longs", rep, io_count(&st, MPI_LONG));
    if (reads)
        PX_CHECK(*reads > r0, "%s: the read conversion was not called", rep);
    PX_CHECK(!memcmp(r, w, sizeof(r)), "%s: independent read back differs", rep);
    for (int i = 0; i < K; i++)
        w[i] = sval2(me, i);
    PX_MPI(MPI_File_write_at(fh, 0, w, K, MPI_LONG, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    memset(r, 0, sizeof(r));
    PX_MPI(MPI_File_read_at_all(fh, 0, r, K, MPI_LONG, &st));
    PX_CHECK(io_count(&st, MPI_LONG) == K && !memcmp(r, w, sizeof(r)),
             "%s: collective read back differs", rep);
    MPI_Barrier(MPI_COMM_WORLD);
    check_longs4(fh, base, sval2, be, mask, rep);
    MPI_Type_free(&ft);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Filetypes whose displacements count elements are scaled to the sizes in
 * the file: a subarray of longs in external32 (offsets in the file are
 * those of 4-byte longs); a darray is refused in a view that changes
 * sizes. */
static void x32_layouts(MPI_File fh)
{
    int sizes[2] = {4, 6}, subs[2] = {2, 3}, starts[2] = {1, 2};
    MPI_Datatype sa, da;
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_LONG, &sa);
    MPI_Type_commit(&sa);
    PX_MPI(MPI_File_set_view(fh, 100, MPI_LONG, sa, "external32", MPI_INFO_NULL));
    MPI_Aint ext = 0;
    PX_MPI(MPI_File_get_type_extent(fh, sa, &ext));
    PX_CHECK(ext == 4 * 6 * 4, "subarray extent %ld in external32", (long)ext);
    const int want[7] = {8, 9, 10, 14, 15, 16, 24 + 8}; /* in longs, the last in the next copy */
    for (int i = 0; i < 7; i++) {
        MPI_Offset b = 0;
        PX_MPI(MPI_File_get_byte_offset(fh, i, &b));
        PX_CHECK(b == 100 + 4 * want[i], "subarray: byte offset of long %d: %lld, want %d", i,
                 (long long)b, 100 + 4 * want[i]);
    }
    int gs = 8 * px_test_size, distrib = MPI_DISTRIBUTE_BLOCK, darg = MPI_DISTRIBUTE_DFLT_DARG,
        psize = px_test_size;
    MPI_Type_create_darray(px_test_size, px_test_rank, 1, &gs, &distrib, &darg, &psize, MPI_ORDER_C,
                           MPI_LONG, &da);
    MPI_Type_commit(&da);
    EXPECT_CLASS(MPI_File_set_view(fh, 0, MPI_LONG, da, "external32", MPI_INFO_NULL),
                 MPI_ERR_UNSUPPORTED_DATAREP);
    PX_MPI(MPI_File_set_view(fh, 0, MPI_LONG, da, "native", MPI_INFO_NULL));
    MPI_Type_free(&sa);
    MPI_Type_free(&da);
}

/* A representation that stores a long in 4 bytes: int32 XOR a mask. */
#define MASK4 0x13572468
static int calls_read4, calls_write4;

static int long4_write(void *userbuf, MPI_Datatype dt, int count, void *filebuf,
                       MPI_Offset position, void *extra)
{
    (void)extra;
    PX_CHECK(dt == MPI_LONG, "long4 write conversion given another type");
    const long *u = (const long *)userbuf + position;
    int32_t *f = filebuf;
    for (int i = 0; i < count; i++)
        f[i] = (int32_t)u[i] ^ MASK4;
    calls_write4++;
    return MPI_SUCCESS;
}

static int long4_read(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position,
                      void *extra)
{
    (void)extra;
    PX_CHECK(dt == MPI_LONG, "long4 read conversion given another type");
    long *u = (long *)userbuf + position;
    const int32_t *f = filebuf;
    for (int i = 0; i < count; i++)
        u[i] = f[i] ^ MASK4;
    calls_read4++;
    return MPI_SUCCESS;
}

static int long4_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    (void)extra;
    int size;
    MPI_Type_size(dt, &size);
    *extent = dt == MPI_LONG ? 4 : size;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "io_datarep");
    int me = px_test_rank, np = px_test_size;
    PX_REQUIRE(np <= 16, "at most 16 ranks (check_longs4's buffer)");
    char path[512];
    io_path(path, sizeof(path), "dat");
    MPI_File fh;
    MPI_Status st;
    PX_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));

    /* each rank: N ints, N shorts, N doubles, at its own displacement */
    MPI_Offset per = N * (4 + 2 + 8), disp = me * per;
    int iv[N], ir[2 * N];
    short sv[N], sr[N];
    double dv[N], dr[N];
    for (int i = 0; i < N; i++) {
        iv[i] = (me + 1) * 0x01020304 + i;
        sv[i] = (short)(me * 300 + i - 7);
        dv[i] = (me + 1) * 1.5e10 + i * 0.25;
    }
    PX_MPI(MPI_File_set_view(fh, disp, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    PX_MPI(MPI_File_write_at_all(fh, 0, iv, N, MPI_INT, &st));
    PX_MPI(MPI_File_write_at(fh, 4 * N, sv, N, MPI_SHORT, &st));
    PX_MPI(MPI_File_write_at(fh, 6 * N, dv, N, MPI_DOUBLE, &st));
    PX_CHECK(io_count(&st, MPI_DOUBLE) == N, "wrote %d doubles", io_count(&st, MPI_DOUBLE));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Datatype et, ft;
    MPI_Offset d;
    PX_MPI(MPI_File_get_view(fh, &d, &et, &ft, rep));
    PX_CHECK(!strcmp(rep, "external32") && d == disp, "view %s at %lld", rep, (long long)d);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the bytes of the next rank's part, through a native view */
    int other = (me + 1) % np;
    PX_MPI(MPI_File_set_view(fh, other * per, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char raw[N * 14], want[8];
    PX_MPI(MPI_File_read_at(fh, 0, raw, (int)per, MPI_BYTE, &st));
    PX_CHECK(io_count(&st, MPI_BYTE) == per, "read %d raw bytes", io_count(&st, MPI_BYTE));
    int bad = 0;
    for (int i = 0; i < N && bad < 3; i++) {
        int ov = (other + 1) * 0x01020304 + i;
        short os = (short)(other * 300 + i - 7);
        double od = (other + 1) * 1.5e10 + i * 0.25;
        be_bytes(want, &ov, 4);
        if (memcmp(raw + 4 * i, want, 4))
            PX_CHECK(++bad > 3, "int %d of rank %d is not big-endian: %02x%02x%02x%02x", i, other,
                     raw[4 * i], raw[4 * i + 1], raw[4 * i + 2], raw[4 * i + 3]);
        be_bytes(want, &os, 2);
        if (memcmp(raw + 4 * N + 2 * i, want, 2))
            PX_CHECK(++bad > 3, "short %d of rank %d is not big-endian", i, other);
        be_bytes(want, &od, 8);
        if (memcmp(raw + 6 * N + 8 * i, want, 8))
            PX_CHECK(++bad > 3, "double %d of rank %d is not big-endian", i, other);
    }
    if (other == 0)
        PX_CHECK(raw[0] == 0x01 && raw[1] == 0x02 && raw[2] == 0x03 && raw[3] == 0x04,
                 "rank 0's first int in the file: %02x %02x %02x %02x", raw[0], raw[1], raw[2],
                 raw[3]);

    /* and back through an external32 view, ints into every other int */
    PX_MPI(MPI_File_set_view(fh, other * per, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    MPI_Datatype strided;
    MPI_Type_vector(N, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    memset(ir, 0, sizeof(ir));
    PX_MPI(MPI_File_read_at_all(fh, 0, ir, 1, strided, &st));
    PX_MPI(MPI_File_read_at(fh, 4 * N, sr, N, MPI_SHORT, &st));
    PX_MPI(MPI_File_read_at(fh, 6 * N, dr, N, MPI_DOUBLE, &st));
    for (int i = 0; i < N; i++) {
        if (ir[2 * i] != (other + 1) * 0x01020304 + i || ir[2 * i + 1] != 0 ||
            sr[i] != (short)(other * 300 + i - 7) || dr[i] != (other + 1) * 1.5e10 + i * 0.25) {
            PX_CHECK(0, "external32 read back: item %d of rank %d differs", i, other);
            break;
        }
    }
    MPI_Type_free(&strided);
    /* "internal" is the native layout here */
    PX_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "internal", MPI_INFO_NULL));

    /* a representation of the program's own */
    PX_MPI(MPI_Register_datarep("px-xor", xor_read, xor_write, xor_extent, &calls_write));
    EXPECT_CLASS(MPI_Register_datarep("px-xor", xor_read, xor_write, xor_extent, NULL),
                 MPI_ERR_DUP_DATAREP);
    EXPECT_CLASS(MPI_Register_datarep("external32", xor_read, xor_write, xor_extent, NULL),
                 MPI_ERR_DUP_DATAREP);
    MPI_Offset xd = np * per + me * N * 4;
    PX_MPI(MPI_File_set_view(fh, xd, MPI_INT, MPI_INT, "px-xor", MPI_INFO_NULL));
    PX_CHECK(calls_extent > 0, "the extent function was not called");
    MPI_Aint ext = 0;
    int ext_calls = calls_extent;
    PX_MPI(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    PX_CHECK(ext == 4 && calls_extent > ext_calls, "type extent %ld through px-xor", (long)ext);
    xor_roundtrip(fh, xd, "px-xor", iv, MASK, &calls_write, &calls_read);

    /* the same through the large-count registration: its conversions, not
     * the int ones, are called */
    PX_MPI(MPI_Register_datarep_c("px-xor-c", xor_read_c, xor_write_c, xor_extent, &calls_write_c));
    EXPECT_CLASS(MPI_Register_datarep_c("px-xor", xor_read_c, xor_write_c, xor_extent, NULL),
                 MPI_ERR_DUP_DATAREP);
    EXPECT_CLASS(MPI_Register_datarep_c("px-no-extent", xor_read_c, xor_write_c, NULL, NULL),
                 MPI_ERR_ARG);
    int int_reads = calls_read, int_writes = calls_write;
    PX_MPI(MPI_File_set_view(fh, xd, MPI_INT, MPI_INT, "px-xor-c", MPI_INFO_NULL));
    xor_roundtrip(fh, xd, "px-xor-c", iv, MASK_C, &calls_write_c, &calls_read_c);
    PX_CHECK(calls_read == int_reads && calls_write == int_writes,
             "the int conversions were called for px-xor-c");

    /* types whose size differs in the representation */
    MPI_Offset x32 = np * per + np * N * 4, x32s = x32 + np * (4 * K + 16 * K + 32 * S);
    x32_mixed(fh, x32);
    strided_longs(fh, x32s, "external32", 1, 0, NULL, NULL);
    PX_MPI(MPI_Register_datarep("px-long4", long4_read, long4_write, long4_extent, NULL));
    strided_longs(fh, x32s + np * K * 4, "px-long4", 0, MASK4, &calls_write4, &calls_read4);
    x32_layouts(fh);
    x32_rounding(fh, x32s + 2 * np * K * 4);
    x32_wchar_ulong(fh, x32s + 2 * np * K * 4 + 96);
    PX_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    return px_test_finish("external32 and registered representations (int and _c), %d items; "
                          "long, long double and a struct through external32 and a 4-byte-long "
                          "representation",
                          N);
}
