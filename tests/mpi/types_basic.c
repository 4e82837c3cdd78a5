/* Every predefined C datatype: values sent and received (pair partners, or
 * oneself), checked element by element, with Get_count and Get_elements;
 * Allreduce SUM on every arithmetic type and MAXLOC/MINLOC on every pair
 * type. */
#include "px_test.h"

#include <complex.h>
#include <stdbool.h>
#include <wchar.h>

typedef struct {
    float v;
    int i;
} float_int_t;
typedef struct {
    double v;
    int i;
} double_int_t;
typedef struct {
    long v;
    int i;
} long_int_t;
typedef struct {
    int v;
    int i;
} int2_t;
typedef struct {
    short v;
    int i;
} short_int_t;
typedef struct {
    long double v;
    int i;
} ldouble_int_t;

enum kind { K_BITS, K_BOOL, K_FLT, K_DBL, K_LDBL, K_FCPLX, K_DCPLX, K_LDCPLX, K_PAIR };

typedef struct {
    const char *name;
    MPI_Datatype type;
    size_t size; /* extent of one element in C */
    enum kind kind;
    int elements; /* basic elements per item (Get_elements) */
    int arith;    /* MPI_SUM allowed */
} type_desc_t;

#define T(name, cty, kind, el, ar)                                                                 \
    {                                                                                              \
#name, name, sizeof(cty), kind, el, ar                                                     \
    }
static type_desc_t types[] = {
    T(MPI_CHAR, char, K_BITS, 1, 0),
    T(MPI_SIGNED_CHAR, signed char, K_BITS, 1, 1),
    T(MPI_UNSIGNED_CHAR, unsigned char, K_BITS, 1, 1),
    T(MPI_BYTE, unsigned char, K_BITS, 1, 0),
    T(MPI_WCHAR, wchar_t, K_BITS, 1, 0),
    T(MPI_SHORT, short, K_BITS, 1, 1),
    T(MPI_UNSIGNED_SHORT, unsigned short, K_BITS, 1, 1),
    T(MPI_INT, int, K_BITS, 1, 1),
    T(MPI_UNSIGNED, unsigned, K_BITS, 1, 1),
    T(MPI_LONG, long, K_BITS, 1, 1),
    T(MPI_UNSIGNED_LONG, unsigned long, K_BITS, 1, 1),
    T(MPI_LONG_LONG_INT, long long, K_BITS, 1, 1),
    T(MPI_LONG_LONG, long long, K_BITS, 1, 1),
    T(MPI_UNSIGNED_LONG_LONG, unsigned long long, K_BITS, 1, 1),
    T(MPI_INT8_T, int8_t, K_BITS, 1, 1),
    T(MPI_INT16_T, int16_t, K_BITS, 1, 1),
    T(MPI_INT32_T, int32_t, K_BITS, 1, 1),
    T(MPI_INT64_T, int64_t, K_BITS, 1, 1),
    T(MPI_UINT8_T, uint8_t, K_BITS, 1, 1),
    T(MPI_UINT16_T, uint16_t, K_BITS, 1, 1),
    T(MPI_UINT32_T, uint32_t, K_BITS, 1, 1),
    T(MPI_UINT64_T, uint64_t, K_BITS, 1, 1),
    T(MPI_AINT, MPI_Aint, K_BITS, 1, 0),
    T(MPI_OFFSET, MPI_Offset, K_BITS, 1, 0),
    T(MPI_COUNT, MPI_Count, K_BITS, 1, 0),
    T(MPI_PACKED, unsigned char, K_BITS, 1, 0),
    T(MPI_C_BOOL, bool, K_BOOL, 1, 0),
    T(MPI_FLOAT, float, K_FLT, 1, 1),
    T(MPI_DOUBLE, double, K_DBL, 1, 1),
    T(MPI_LONG_DOUBLE, long double, K_LDBL, 1, 1),
    T(MPI_C_COMPLEX, float _Complex, K_FCPLX, 1, 1),
    T(MPI_C_FLOAT_COMPLEX, float _Complex, K_FCPLX, 1, 1),
    T(MPI_C_DOUBLE_COMPLEX, double _Complex, K_DCPLX, 1, 1),
    T(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex, K_LDCPLX, 1, 1),
    T(MPI_FLOAT_INT, float_int_t, K_PAIR, 2, 0),
    T(MPI_DOUBLE_INT, double_int_t, K_PAIR, 2, 0),
    T(MPI_LONG_INT, long_int_t, K_PAIR, 2, 0),
    T(MPI_2INT, int2_t, K_PAIR, 2, 0),
    T(MPI_SHORT_INT, short_int_t, K_PAIR, 2, 0),
    T(MPI_LONG_DOUBLE_INT, ldouble_int_t, K_PAIR, 2, 0),
};
#define NTYPES ((int)(sizeof(types) / sizeof(types[0])))

/* Value j of the test vector for rank src, as a double (for float kinds). */
static double fval(int src, int j)
{
    static const double special[] = {0.0, -0.0, 1.0, -1.5, 1e30, -1e-30, 3.25};
    if (j < 7)
        return special[j];
    return (double)(j * 37 % 1001) * 0.125 - 60.0 + src;
}

static void fill(const type_desc_t *t, void *buf, int n, int src)
{
    char *p = buf;
    switch (t->kind) {
    case K_BITS:
        px_fill(buf, n * t->size, (uint64_t)src * 7919 + t->size);
        break;
    case K_BOOL:
        for (int j = 0; j < n; j++)
            ((bool *)buf)[j] = (j * 3 + src) % 2;
        break;
    case K_FLT:
        for (int j = 0; j < n; j++)
            ((float *)buf)[j] = (float)fval(src, j);
        break;
    case K_DBL:
        for (int j = 0; j < n; j++)
            ((double *)buf)[j] = fval(src, j);
        break;
    case K_LDBL:
        for (int j = 0; j < n; j++)
            ((long double *)buf)[j] = (long double)fval(src, j) / 3.0L;
        break;
    case K_FCPLX:
        for (int j = 0; j < n; j++)
            ((float _Complex *)buf)[j] = (float)fval(src, j) + (float)fval(src, j + 1) * I;
        break;
    case K_DCPLX:
        for (int j = 0; j < n; j++)
            ((double _Complex *)buf)[j] = fval(src, j) + fval(src, j + 3) * I;
        break;
    case K_LDCPLX:
        for (int j = 0; j < n; j++)
            ((long double _Complex *)buf)[j] =
                (long double)fval(src, j) / 3.0L + (long double)fval(src, j + 5) * I;
        break;
    case K_PAIR:
        memset(buf, 0, n * t->size);
        for (int j = 0; j < n; j++) {
            char *e = p + j * t->size;
            int idx = j * 11 + src;
            if (t->type == MPI_FLOAT_INT) {
                ((float_int_t *)e)->v = (float)fval(src, j);
                ((float_int_t *)e)->i = idx;
            } else if (t->type == MPI_DOUBLE_INT) {
                ((double_int_t *)e)->v = fval(src, j);
                ((double_int_t *)e)->i = idx;
            } else if (t->type == MPI_LONG_INT) {
                ((long_int_t *)e)->v = (long)j * 1000003L - src;
                ((long_int_t *)e)->i = idx;
            } else if (t->type == MPI_2INT) {
                ((int2_t *)e)->v = j * 7 - src;
                ((int2_t *)e)->i = idx;
            } else if (t->type == MPI_SHORT_INT) {
                ((short_int_t *)e)->v = (short)(j * 3 - src);
                ((short_int_t *)e)->i = idx;
            } else {
                ((ldouble_int_t *)e)->v = (long double)fval(src, j) / 3.0L;
                ((ldouble_int_t *)e)->i = idx;
            }
        }
        break;
    }
}

/* Compare values, not bytes: long double and pair types contain padding. */
static int same(const type_desc_t *t, const void *a, const void *b, int j)
{
    const char *x = (const char *)a + j * t->size, *y = (const char *)b + j * t->size;
    switch (t->kind) {
    case K_BITS:
        return memcmp(x, y, t->size) == 0;
    case K_BOOL:
        return *(const bool *)x == *(const bool *)y;
    case K_FLT:
    case K_DBL:
    case K_FCPLX:
    case K_DCPLX:
        return memcmp(x, y, t->size) == 0; /* also tells 0.0 from -0.0 */
    case K_LDBL:
        return *(const long double *)x == *(const long double *)y;
    case K_LDCPLX:
        return *(const long double _Complex *)x == *(const long double _Complex *)y;
    case K_PAIR:
        if (t->type == MPI_FLOAT_INT)
            return ((const float_int_t *)x)->v == ((const float_int_t *)y)->v &&
                   ((const float_int_t *)x)->i == ((const float_int_t *)y)->i;
        if (t->type == MPI_DOUBLE_INT)
            return ((const double_int_t *)x)->v == ((const double_int_t *)y)->v &&
                   ((const double_int_t *)x)->i == ((const double_int_t *)y)->i;
        if (t->type == MPI_LONG_INT)
            return ((const long_int_t *)x)->v == ((const long_int_t *)y)->v &&
                   ((const long_int_t *)x)->i == ((const long_int_t *)y)->i;
        if (t->type == MPI_2INT)
            return ((const int2_t *)x)->v == ((const int2_t *)y)->v &&
                   ((const int2_t *)x)->i == ((const int2_t *)y)->i;
        if (t->type == MPI_SHORT_INT)
            return ((const short_int_t *)x)->v == ((const short_int_t *)y)->v &&
                   ((const short_int_t *)x)->i == ((const short_int_t *)y)->i;
        return ((const ldouble_int_t *)x)->v == ((const ldouble_int_t *)y)->v &&
               ((const ldouble_int_t *)x)->i == ((const ldouble_int_t *)y)->i;
    }
    return 0;
}

static void exchange(int peer, int sender, int receiver)
{
    const int counts[] = {1, 37, 5000};
    for (int k = 0; k < NTYPES; k++) {
        const type_desc_t *t = &types[k];
        for (int c = 0; c < 3; c++) {
            int n = counts[c], src = receiver && sender ? px_test_rank : peer;
            char *s = malloc(n * t->size + 64), *r = malloc(n * t->size + 64);
            char *want = malloc(n * t->size + 64);
            MPI_Request req = MPI_REQUEST_NULL;
            MPI_Status st;
            if (sender) {
                fill(t, s, n, px_test_rank);
                MPI_Isend(s, n, t->type, peer, k, MPI_COMM_WORLD, &req);
            }
            if (receiver) {
                int count = -1, elems = -1;
                memset(r, 0x3c, n * t->size + 64);
                /* Room for more than was sent: count comes from the message. */
                MPI_Recv(r, n + 1, t->type, peer, k, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, t->type, &count);
                MPI_Get_elements(&st, t->type, &elems);
                PX_CHECK(count == n, "%s x%d: Get_count %d", t->name, n, count);
                PX_CHECK(elems == n * t->elements, "%s x%d: Get_elements %d, expected %d", t->name,
                         n, elems, n * t->elements);
                fill(t, want, n, src);
                for (int j = 0; j < n; j++)
                    if (!same(t, r, want, j)) {
                        PX_CHECK(0, "%s x%d: element %d differs", t->name, n, j);
                        break;
                    }
            }
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            free(s);
            free(r);
            free(want);
        }
    }
}

/* Stores v (complex kinds: v - v*i) as one element of type t. */
static void put_value(const type_desc_t *t, void *e, long long v)
{
    switch (t->kind) {
    case K_BITS:
        if (t->size == 1)
            *(int8_t *)e = (int8_t)v;
        else if (t->size == 2)
            *(int16_t *)e = (int16_t)v;
        else if (t->size == 4)
            *(int32_t *)e = (int32_t)v;
        else
            *(int64_t *)e = v;
        break;
    case K_FLT:
        *(float *)e = (float)v;
        break;
    case K_DBL:
        *(double *)e = (double)v;
        break;
    case K_LDBL:
        *(long double *)e = (long double)v;
        break;
    case K_FCPLX:
        *(float _Complex *)e = (float)v - (float)v * I;
        break;
    case K_DCPLX:
        *(double _Complex *)e = (double)v - (double)v * I;
        break;
    case K_LDCPLX:
        *(long double _Complex *)e = (long double)v - (long double)v * I;
        break;
    default:
        break;
    }
}

/* SUM over ranks of (rank + 1) * (j + 1): at most 108 at 8 ranks, so it
 * fits every type, signed or not. */
static void sums(void)
{
    int n = px_test_size;
    long long want_i = (long long)n * (n + 1) / 2;
    for (int k = 0; k < NTYPES; k++) {
        const type_desc_t *t = &types[k];
        char in[3 * 32], out[3 * 32], want[3 * 32];
        if (!t->arith)
            continue;
        memset(in, 0, sizeof(in));
        memset(out, 0, sizeof(out));
        memset(want, 0, sizeof(want));
        for (int j = 0; j < 3; j++) {
            put_value(t, in + j * t->size, (long long)(px_test_rank + 1) * (j + 1));
            put_value(t, want + j * t->size, want_i * (j + 1));
        }
        MPI_Allreduce(in, out, 3, t->type, MPI_SUM, MPI_COMM_WORLD);
        for (int j = 0; j < 3; j++)
            PX_CHECK(same(t, out, want, j), "Allreduce SUM %s element %d wrong", t->name, j);
    }
}

/* MAXLOC/MINLOC on each pair type; value ties go to the lowest index. */
#define LOC_CHECK(ctype, mtype, VAL)                                                               \
    do {                                                                                           \
        ctype in[4], out[4];                                                                       \
        for (int j = 0; j < 4; j++) {                                                              \
            in[j].v = VAL((px_test_rank * (j + 1)) % 3);                                           \
            in[j].i = px_test_rank;                                                                \
        }                                                                                          \
        for (int pass = 0; pass < 2; pass++) {                                                     \
            MPI_Allreduce(in, out, 4, mtype, pass ? MPI_MINLOC : MPI_MAXLOC, MPI_COMM_WORLD);      \
            for (int j = 0; j < 4; j++) {                                                          \
                int best = 0, bi = 0;                                                              \
                for (int r = 0; r < px_test_size; r++) {                                           \
                    int v = (r * (j + 1)) % 3;                                                     \
                    if (r == 0 || (pass ? v < best : v > best)) {                                  \
                        best = v;                                                                  \
                        bi = r;                                                                    \
                    }                                                                              \
                }                                                                                  \
                PX_CHECK(out[j].v == VAL(best) && out[j].i == bi,                                  \
                         "%s %s element %d: index %d, expected %d", pass ? "MINLOC" : "MAXLOC",    \
                         #mtype, j, out[j].i, bi);                                                 \
            }                                                                                      \
        }                                                                                          \
    } while (0)
#define AS_IS(x) (x)
#define AS_FLOAT(x) ((float)(x) + 0.5f)
#define AS_DOUBLE(x) ((double)(x) + 0.25)
#define AS_LDOUBLE(x) ((long double)(x) + 0.125L)

static void locs(void)
{
    LOC_CHECK(float_int_t, MPI_FLOAT_INT, AS_FLOAT);
    LOC_CHECK(double_int_t, MPI_DOUBLE_INT, AS_DOUBLE);
    LOC_CHECK(long_int_t, MPI_LONG_INT, AS_IS);
    LOC_CHECK(int2_t, MPI_2INT, AS_IS);
    LOC_CHECK(short_int_t, MPI_SHORT_INT, AS_IS);
    LOC_CHECK(ldouble_int_t, MPI_LONG_DOUBLE_INT, AS_LDOUBLE);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "types_basic");
    int peer = px_pair_peer(px_test_rank, px_test_size);

    for (int k = 0; k < NTYPES; k++)
        PX_CHECK(types[k].type != MPI_DATATYPE_NULL, "%s is MPI_DATATYPE_NULL", types[k].name);
    if (peer < 0) {
        exchange(px_test_rank, 1, 1);
    } else {
        exchange(peer, px_test_rank % 2 == 0, px_test_rank % 2 == 1);
        exchange(peer, px_test_rank % 2 == 1, px_test_rank % 2 == 0);
    }
    sums();
    locs();
    return px_test_finish("%d predefined datatypes: p2p x3 counts, SUM, MAXLOC/MINLOC", NTYPES);
}
