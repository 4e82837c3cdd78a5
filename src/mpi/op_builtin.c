/* Predefined reduction operations.
 *
 * Every (operation, C representation) pair is one small loop over restrict
 * pointers, generated from the type lists below, and picked once per call from
 * a table; there is no per-element dispatch, so the loops vectorise. */
#include "op_builtin.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dtype_builtin.h"

/* These loops are the arithmetic of every reduction. GCC's -O2 cost model
 * ("very cheap") only vectorises loops needing no scalar epilogue, which
 * excludes all of them; the dynamic model weighs the epilogue instead. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "align-loops=32")
#endif

/* Fortran REAL*16 / COMPLEX*32 are IEEE binary128 with gfortran. Without
 * compiler support for it, fall back to long double (same size on x86_64). */
#if defined(__SIZEOF_FLOAT128__) && defined(__GNUC__) && !defined(__clang__)
__extension__ typedef _Float128 px_op_f128_t;
#else
typedef long double px_op_f128_t;
#endif

/* MPI_INTn_T and MPI_INTEGERn are mapped to the C types below by name. */
_Static_assert(_Generic((int8_t)0, signed char : 1, default : 0), "int8_t is signed char");
_Static_assert(_Generic((int16_t)0, short : 1, default : 0), "int16_t is short");
_Static_assert(_Generic((int32_t)0, int : 1, default : 0), "int32_t is int");
_Static_assert(_Generic((int64_t)0, long : 1, default : 0), "int64_t is long");
_Static_assert(_Generic((MPI_Aint)0, long : 1, default : 0), "MPI_Aint is long");
_Static_assert(_Generic((MPI_Fint)0, int : 1, default : 0), "MPI_Fint is int");
_Static_assert(sizeof(px_op_f128_t) == 16, "REAL*16 is 16 bytes");

/* ------------------------------------------------------------------------- */
/* C representations: (name, type, ...)                                      */
/* ------------------------------------------------------------------------- */

/* integers: (name, type, unsigned type used for wrap-around arithmetic) */
#define PX_OP_INT_TYPES(X)                                                                         \
    X(c, char, unsigned char)                                                                      \
    X(sc, signed char, unsigned char)                                                              \
    X(uc, unsigned char, unsigned char)                                                            \
    X(s, short, unsigned short)                                                                    \
    X(us, unsigned short, unsigned short)                                                          \
    X(i, int, unsigned int)                                                                        \
    X(u, unsigned int, unsigned int)                                                               \
    X(l, long, unsigned long)                                                                      \
    X(ul, unsigned long, unsigned long)                                                            \
    X(ll, long long, unsigned long long)                                                           \
    X(ull, unsigned long long, unsigned long long)

/* real floating point: (name, type) */
#define PX_OP_FLOAT_TYPES(X)                                                                       \
    X(f, float)                                                                                    \
    X(d, double)                                                                                   \
    X(ld, long double)                                                                             \
    X(q, px_op_f128_t)

/* complex: (name, type of the real and imaginary parts) */
#define PX_OP_COMPLEX_TYPES(X)                                                                     \
    X(cf, float)                                                                                   \
    X(cd, double)                                                                                  \
    X(cld, long double)                                                                            \
    X(cq, px_op_f128_t)

/* logical: (name, type); results are 0 or 1 (gfortran's .FALSE./.TRUE.) */
#define PX_OP_LOGICAL_TYPES(X)                                                                     \
    X(b, _Bool)                                                                                    \
    X(fl, MPI_Fint)

/* value/index pairs: (name, value type, index type) */
#define PX_OP_PAIR_TYPES(X)                                                                        \
    X(p_fi, float, int)                                                                            \
    X(p_di, double, int)                                                                           \
    X(p_li, long, int)                                                                             \
    X(p_si, short, int)                                                                            \
    X(p_ldi, long double, int)                                                                     \
    X(p_ii, int, int)                                                                              \
    X(p_ff, float, float)                                                                          \
    X(p_dd, double, double)

/* clang-format off */
enum {
    PX_CT_NONE = 0,
#define PX_CT_ENUM(nm, ...) PX_CT_##nm,
    PX_OP_INT_TYPES(PX_CT_ENUM)
    PX_OP_FLOAT_TYPES(PX_CT_ENUM)
    PX_OP_COMPLEX_TYPES(PX_CT_ENUM)
    PX_OP_LOGICAL_TYPES(PX_CT_ENUM)
    PX_OP_PAIR_TYPES(PX_CT_ENUM)
#undef PX_CT_ENUM
    PX_CT_COUNT
};

/* Bytes of data of one element of each representation. */
enum {
#define PX_CT_SIZE_I(nm, T, UT) PX_CT_SIZE_##nm = sizeof(T),
#define PX_CT_SIZE_1(nm, T) PX_CT_SIZE_##nm = sizeof(T),
#define PX_CT_SIZE_2(nm, R) PX_CT_SIZE_##nm = 2 * sizeof(R),
#define PX_CT_SIZE_P(nm, VT, IT) PX_CT_SIZE_##nm = sizeof(VT) + sizeof(IT),
    PX_OP_INT_TYPES(PX_CT_SIZE_I)
    PX_OP_FLOAT_TYPES(PX_CT_SIZE_1)
    PX_OP_COMPLEX_TYPES(PX_CT_SIZE_2)
    PX_OP_LOGICAL_TYPES(PX_CT_SIZE_1)
    PX_OP_PAIR_TYPES(PX_CT_SIZE_P)
#undef PX_CT_SIZE_I
#undef PX_CT_SIZE_1
#undef PX_CT_SIZE_2
#undef PX_CT_SIZE_P
};
/* clang-format on */

/* Operation index = low byte of the handle. */
enum {
    PX_OPI_MAX = 1,
    PX_OPI_MIN,
    PX_OPI_SUM,
    PX_OPI_PROD,
    PX_OPI_LAND,
    PX_OPI_BAND,
    PX_OPI_LOR,
    PX_OPI_BOR,
    PX_OPI_LXOR,
    PX_OPI_BXOR,
    PX_OPI_MINLOC,
    PX_OPI_MAXLOC,
    PX_OPI_REPLACE,
    PX_OPI_NO_OP,
    PX_OPI_COUNT
};
#define PX_OPI_CHECK(op, idx) _Static_assert(((unsigned)(op)&0xffu) == (idx), #op);
PX_OPI_CHECK(MPI_MAX, PX_OPI_MAX)
PX_OPI_CHECK(MPI_MIN, PX_OPI_MIN)
PX_OPI_CHECK(MPI_SUM, PX_OPI_SUM)
PX_OPI_CHECK(MPI_PROD, PX_OPI_PROD)
PX_OPI_CHECK(MPI_LAND, PX_OPI_LAND)
PX_OPI_CHECK(MPI_BAND, PX_OPI_BAND)
PX_OPI_CHECK(MPI_LOR, PX_OPI_LOR)
PX_OPI_CHECK(MPI_BOR, PX_OPI_BOR)
PX_OPI_CHECK(MPI_LXOR, PX_OPI_LXOR)
PX_OPI_CHECK(MPI_BXOR, PX_OPI_BXOR)
PX_OPI_CHECK(MPI_MINLOC, PX_OPI_MINLOC)
PX_OPI_CHECK(MPI_MAXLOC, PX_OPI_MAXLOC)
PX_OPI_CHECK(MPI_REPLACE, PX_OPI_REPLACE)
PX_OPI_CHECK(MPI_NO_OP, PX_OPI_NO_OP)
#undef PX_OPI_CHECK

/* ------------------------------------------------------------------------- */
/* Kernels                                                                   */
/* ------------------------------------------------------------------------- */

typedef void (*px_op_fn_t)(const void *restrict in, void *restrict inout, MPI_Aint n);

/* On x86-64 each loop is also built for AVX2 (twice the width of the
 * baseline's SSE2), and the loader picks the version the CPU runs. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define PX_OP_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef PX_OP_CLONES
#define PX_OP_CLONES
#endif

/* b[i] = a[i] op b[i]; the variadic tail is the loop body over a (in) and
 * b (inout), variadic so that it may contain commas. */
#define PX_OP_LOOP(fname, T, ...)                                                                  \
    PX_OP_CLONES static void fname(const void *restrict in_, void *restrict io_, MPI_Aint n)       \
    {                                                                                              \
        const T *restrict a = (const T *)in_;                                                      \
        T *restrict b = (T *)io_;                                                                  \
        for (MPI_Aint i = 0; i < n; i++) {                                                         \
            __VA_ARGS__;                                                                           \
        }                                                                                          \
    }

#define PX_OP_MAX_STMT b[i] = a[i] > b[i] ? a[i] : b[i]
#define PX_OP_MIN_STMT b[i] = a[i] < b[i] ? a[i] : b[i]
/* logical operators without short-circuit, so both operands load unconditionally */
#define PX_OP_LOGIC_FNS(nm, T)                                                                     \
    PX_OP_LOOP(px_op_land_##nm, T, b[i] = (T)((a[i] != 0) & (b[i] != 0)))                          \
    PX_OP_LOOP(px_op_lor_##nm, T, b[i] = (T)((a[i] != 0) | (b[i] != 0)))                           \
    PX_OP_LOOP(px_op_lxor_##nm, T, b[i] = (T)((a[i] != 0) ^ (b[i] != 0)))

/* Integer SUM/PROD wrap around (computed in the unsigned type: signed
 * overflow would be undefined; "* 1u" keeps short operands out of int). */
#define PX_OP_INT_FNS(nm, T, UT)                                                                   \
    PX_OP_LOOP(px_op_max_##nm, T, PX_OP_MAX_STMT)                                                  \
    PX_OP_LOOP(px_op_min_##nm, T, PX_OP_MIN_STMT)                                                  \
    PX_OP_LOOP(px_op_sum_##nm, T, b[i] = (T)(UT)((UT)a[i] * 1u + (UT)b[i]))                        \
    PX_OP_LOOP(px_op_prod_##nm, T, b[i] = (T)(UT)((UT)a[i] * 1u * (UT)b[i]))                       \
    PX_OP_LOGIC_FNS(nm, T)                                                                         \
    PX_OP_LOOP(px_op_band_##nm, T, b[i] = (T)(a[i] & b[i]))                                        \
    PX_OP_LOOP(px_op_bor_##nm, T, b[i] = (T)(a[i] | b[i]))                                         \
    PX_OP_LOOP(px_op_bxor_##nm, T, b[i] = (T)(a[i] ^ b[i]))
PX_OP_INT_TYPES(PX_OP_INT_FNS)

#define PX_OP_FLOAT_FNS(nm, T)                                                                     \
    PX_OP_LOOP(px_op_max_##nm, T, PX_OP_MAX_STMT)                                                  \
    PX_OP_LOOP(px_op_min_##nm, T, PX_OP_MIN_STMT)                                                  \
    PX_OP_LOOP(px_op_sum_##nm, T, b[i] = a[i] + b[i])                                              \
    PX_OP_LOOP(px_op_prod_##nm, T, b[i] = a[i] * b[i])
PX_OP_FLOAT_TYPES(PX_OP_FLOAT_FNS)

/* A complex value is laid out as R[2] = {re, im} (C11 6.2.5p13). The product
 * is the textbook formula, without Annex G's inf/nan recovery, so it
 * vectorises (the same choice Fortran compilers make). */
#define PX_OP_COMPLEX_FNS(nm, R)                                                                   \
    static void px_op_sum_##nm(const void *restrict in_, void *restrict io_, MPI_Aint n)           \
    {                                                                                              \
        const R *restrict a = (const R *)in_;                                                      \
        R *restrict b = (R *)io_;                                                                  \
        for (MPI_Aint i = 0; i < 2 * n; i++)                                                       \
            b[i] = a[i] + b[i];                                                                    \
    }                                                                                              \
    static void px_op_prod_##nm(const void *restrict in_, void *restrict io_, MPI_Aint n)          \
    {                                                                                              \
        const R *restrict a = (const R *)in_;                                                      \
        R *restrict b = (R *)io_;                                                                  \
        for (MPI_Aint i = 0; i < n; i++) {                                                         \
            R ar = a[2 * i], ai = a[2 * i + 1];                                                    \
            R br = b[2 * i], bi = b[2 * i + 1];                                                    \
            b[2 * i] = ar * br - ai * bi;                                                          \
            b[2 * i + 1] = ar * bi + ai * br;                                                      \
        }                                                                                          \
    }
PX_OP_COMPLEX_TYPES(PX_OP_COMPLEX_FNS)

PX_OP_LOGICAL_TYPES(PX_OP_LOGIC_FNS)

/* MAXLOC/MINLOC: the better value wins; on equal values the smaller index
 * (MPI-3.1 5.9.4). Written as selects so the loop has no branches. */
#define PX_OP_PAIR_FNS(nm, VT, IT)                                                                 \
    typedef struct {                                                                               \
        VT v;                                                                                      \
        IT k;                                                                                      \
    } px_op_##nm##_t;                                                                              \
    PX_OP_LOOP(px_op_maxloc_##nm, px_op_##nm##_t, VT av = a[i].v, bv = b[i].v;                     \
               IT ak = a[i].k, bk = b[i].k; IT kmin = ak < bk ? ak : bk;                           \
               b[i].k = av > bv ? ak : (av == bv ? kmin : bk); b[i].v = av > bv ? av : bv)         \
    PX_OP_LOOP(px_op_minloc_##nm, px_op_##nm##_t, VT av = a[i].v, bv = b[i].v;                     \
               IT ak = a[i].k, bk = b[i].k; IT kmin = ak < bk ? ak : bk;                           \
               b[i].k = av < bv ? ak : (av == bv ? kmin : bk); b[i].v = av < bv ? av : bv)
PX_OP_PAIR_TYPES(PX_OP_PAIR_FNS)

/* ------------------------------------------------------------------------- */
/* Dispatch                                                                  */
/* ------------------------------------------------------------------------- */

/* clang-format off */
static const px_op_fn_t px_op_table[PX_OPI_COUNT][PX_CT_COUNT] = {
#define PX_OP_ROW(OPI, fn, nm) [PX_OPI_##OPI][PX_CT_##nm] = px_op_##fn##_##nm,
#define PX_OP_ORDER_ROWS(nm) PX_OP_ROW(MAX, max, nm) PX_OP_ROW(MIN, min, nm)
#define PX_OP_ARITH_ROWS(nm) PX_OP_ROW(SUM, sum, nm) PX_OP_ROW(PROD, prod, nm)
#define PX_OP_LOGIC_ROWS(nm, ...)                                              \
    PX_OP_ROW(LAND, land, nm) PX_OP_ROW(LOR, lor, nm) PX_OP_ROW(LXOR, lxor, nm)
#define PX_OP_INT_ROWS(nm, T, UT)                                              \
    PX_OP_ORDER_ROWS(nm) PX_OP_ARITH_ROWS(nm) PX_OP_LOGIC_ROWS(nm, T)          \
    PX_OP_ROW(BAND, band, nm) PX_OP_ROW(BOR, bor, nm) PX_OP_ROW(BXOR, bxor, nm)
#define PX_OP_FLOAT_ROWS(nm, T) PX_OP_ORDER_ROWS(nm) PX_OP_ARITH_ROWS(nm)
#define PX_OP_COMPLEX_ROWS(nm, R) PX_OP_ARITH_ROWS(nm)
#define PX_OP_PAIR_ROWS(nm, VT, IT)                                            \
    PX_OP_ROW(MAXLOC, maxloc, nm) PX_OP_ROW(MINLOC, minloc, nm)
    PX_OP_INT_TYPES(PX_OP_INT_ROWS)
    PX_OP_FLOAT_TYPES(PX_OP_FLOAT_ROWS)
    PX_OP_COMPLEX_TYPES(PX_OP_COMPLEX_ROWS)
    PX_OP_LOGICAL_TYPES(PX_OP_LOGIC_ROWS)
    PX_OP_PAIR_TYPES(PX_OP_PAIR_ROWS)
};
/* clang-format on */

/* Builtin datatype -> C representation. */
#define PX_OP_DTYPE_MAP(X)                                                                         \
    X(MPI_CHAR, c)                                                                                 \
    X(MPI_SIGNED_CHAR, sc)                                                                         \
    X(MPI_UNSIGNED_CHAR, uc)                                                                       \
    X(MPI_BYTE, uc)                                                                                \
    X(MPI_SHORT, s)                                                                                \
    X(MPI_UNSIGNED_SHORT, us)                                                                      \
    X(MPI_INT, i)                                                                                  \
    X(MPI_UNSIGNED, u)                                                                             \
    X(MPI_LONG, l)                                                                                 \
    X(MPI_UNSIGNED_LONG, ul)                                                                       \
    X(MPI_LONG_LONG_INT, ll)                                                                       \
    X(MPI_UNSIGNED_LONG_LONG, ull)                                                                 \
    X(MPI_FLOAT, f)                                                                                \
    X(MPI_DOUBLE, d)                                                                               \
    X(MPI_LONG_DOUBLE, ld)                                                                         \
    X(MPI_2INT, p_ii)                                                                              \
    X(MPI_CHARACTER, c)                                                                            \
    X(MPI_INTEGER, i)                                                                              \
    X(MPI_REAL, f)                                                                                 \
    X(MPI_LOGICAL, fl)                                                                             \
    X(MPI_COMPLEX, cf)                                                                             \
    X(MPI_DOUBLE_PRECISION, d)                                                                     \
    X(MPI_2INTEGER, p_ii)                                                                          \
    X(MPI_2REAL, p_ff)                                                                             \
    X(MPI_DOUBLE_COMPLEX, cd)                                                                      \
    X(MPI_2DOUBLE_PRECISION, p_dd)                                                                 \
    X(MPI_REAL4, f)                                                                                \
    X(MPI_COMPLEX8, cf)                                                                            \
    X(MPI_REAL8, d)                                                                                \
    X(MPI_COMPLEX16, cd)                                                                           \
    X(MPI_REAL16, q)                                                                               \
    X(MPI_COMPLEX32, cq)                                                                           \
    X(MPI_INTEGER1, sc)                                                                            \
    X(MPI_INTEGER2, s)                                                                             \
    X(MPI_INTEGER4, i)                                                                             \
    X(MPI_INTEGER8, l)                                                                             \
    X(MPI_CXX_BOOL, b)                                                                             \
    X(MPI_CXX_FLOAT_COMPLEX, cf)                                                                   \
    X(MPI_CXX_DOUBLE_COMPLEX, cd)                                                                  \
    X(MPI_CXX_LONG_DOUBLE_COMPLEX, cld)                                                            \
    X(MPI_INT8_T, sc)                                                                              \
    X(MPI_INT16_T, s)                                                                              \
    X(MPI_INT32_T, i)                                                                              \
    X(MPI_INT64_T, l)                                                                              \
    X(MPI_UINT8_T, uc)                                                                             \
    X(MPI_UINT16_T, us)                                                                            \
    X(MPI_UINT32_T, u)                                                                             \
    X(MPI_UINT64_T, ul)                                                                            \
    X(MPI_C_BOOL, b)                                                                               \
    X(MPI_C_FLOAT_COMPLEX, cf)                                                                     \
    X(MPI_C_DOUBLE_COMPLEX, cd)                                                                    \
    X(MPI_C_LONG_DOUBLE_COMPLEX, cld)                                                              \
    X(MPI_AINT, l)                                                                                 \
    X(MPI_OFFSET, l)                                                                               \
    X(MPI_COUNT, l)

#define PX_OP_PAIR_DTYPE_MAP(X)                                                                    \
    X(MPI_FLOAT_INT, p_fi)                                                                         \
    X(MPI_DOUBLE_INT, p_di)                                                                        \
    X(MPI_LONG_INT, p_li)                                                                          \
    X(MPI_SHORT_INT, p_si)                                                                         \
    X(MPI_LONG_DOUBLE_INT, p_ldi)

/* indexed by the low byte of a 0x4c handle / the low bits of a 0x8c handle */
static const unsigned char px_op_ctype_builtin[256] = {
#define PX_OP_CT_SLOT(h, nm) [(unsigned)(h)&0xffu] = PX_CT_##nm,
    PX_OP_DTYPE_MAP(PX_OP_CT_SLOT)};
static const unsigned char px_op_ctype_pair[8] = {
#define PX_OP_CT_PSLOT(h, nm) [(unsigned)(h)&7u] = PX_CT_##nm,
    PX_OP_PAIR_DTYPE_MAP(PX_OP_CT_PSLOT)};

/* A 0x4c handle carries the size of its type: the representation must match. */
#define PX_OP_CT_SIZE_CHECK(h, nm)                                                                 \
    _Static_assert((((unsigned)(h) >> 8) & 0xffu) == PX_CT_SIZE_##nm, #h " representation");
PX_OP_DTYPE_MAP(PX_OP_CT_SIZE_CHECK)
#undef PX_OP_CT_SIZE_CHECK

static unsigned px_op_ctype_of(MPI_Datatype dt)
{
    unsigned h = (unsigned)dt;

    if ((h & 0xffff0000u) == 0x4c000000u)
        return px_op_ctype_builtin[h & 0xffu];
    if ((h & 0xfffffff8u) == 0x8c000000u)
        return px_op_ctype_pair[h & 7u];
    return PX_CT_NONE;
}

/* ------------------------------------------------------------------------- */
/* Validity                                                                  */
/* ------------------------------------------------------------------------- */

#define PX_OPBIT(op) (1u << PX_OPI_##op)
#define PX_OPS_ACC (PX_OPBIT(REPLACE) | PX_OPBIT(NO_OP))
#define PX_OPS_LOGIC (PX_OPBIT(LAND) | PX_OPBIT(LOR) | PX_OPBIT(LXOR))
#define PX_OPS_BITS (PX_OPBIT(BAND) | PX_OPBIT(BOR) | PX_OPBIT(BXOR))
#define PX_OPS_ARITH (PX_OPBIT(SUM) | PX_OPBIT(PROD))
#define PX_OPS_ORDER (PX_OPBIT(MAX) | PX_OPBIT(MIN))
#define PX_OPS_INT (PX_OPS_ORDER | PX_OPS_ARITH | PX_OPS_LOGIC | PX_OPS_BITS)

static unsigned px_op_valid_mask(const px_dtype_builtin_t *d)
{
    switch (d->kind) {
    case PX_DTK_SIGNED:
    case PX_DTK_UNSIGNED:
        return PX_OPS_INT | PX_OPS_ACC;
    case PX_DTK_FLOAT:
        return PX_OPS_ORDER | PX_OPS_ARITH | PX_OPS_ACC;
    case PX_DTK_COMPLEX:
        return PX_OPS_ARITH | PX_OPS_ACC;
    case PX_DTK_LOGICAL:
        return PX_OPS_LOGIC | PX_OPS_ACC;
    case PX_DTK_BYTE:
        return PX_OPS_BITS | PX_OPS_ACC;
    case PX_DTK_CHAR:
        /* not integers for the standard, but MPICH accepts them; so do we */
        if (d->handle == MPI_CHAR || d->handle == MPI_CHARACTER)
            return PX_OPS_INT | PX_OPS_ACC;
        return PX_OPS_ACC;
    case PX_DTK_PAIR:
        return PX_OPBIT(MAXLOC) | PX_OPBIT(MINLOC) | PX_OPS_ACC;
    case PX_DTK_PACKED:
        return PX_OPS_ACC;
    default:
        return 0;
    }
}

int px_mpi_op_builtin_check(MPI_Op op, MPI_Datatype dt)
{
    const px_dtype_builtin_t *d;

    if (!px_mpi_op_is_builtin(op))
        return MPI_ERR_OP;
    d = px_mpi_dtype_builtin(dt);
    if (d == NULL)
        return MPI_ERR_TYPE;
    return (px_op_valid_mask(d) >> ((unsigned)op & 0xffu)) & 1u ? MPI_SUCCESS : MPI_ERR_OP;
}

void px_mpi_op_builtin_apply(MPI_Op op, const void *in, void *inout, MPI_Aint count,
                             MPI_Datatype dt)
{
    unsigned oi;
    px_op_fn_t fn;

    if (!px_mpi_op_is_builtin(op) || count <= 0)
        return;
    oi = (unsigned)op & 0xffu;
    if (oi == PX_OPI_REPLACE) {
        const px_dtype_builtin_t *d = px_mpi_dtype_builtin(dt);
        if (d != NULL && in != inout)
            memmove(inout, in, (size_t)count * (size_t)d->extent);
        return;
    }
    fn = px_op_table[oi][px_op_ctype_of(dt)];
    if (fn != NULL)
        fn(in, inout, count);
}

const char *px_mpi_op_builtin_name(MPI_Op op)
{
    static const char *const names[PX_OPI_COUNT] = {
        [PX_OPI_MAX] = "MPI_MAX",         [PX_OPI_MIN] = "MPI_MIN",
        [PX_OPI_SUM] = "MPI_SUM",         [PX_OPI_PROD] = "MPI_PROD",
        [PX_OPI_LAND] = "MPI_LAND",       [PX_OPI_BAND] = "MPI_BAND",
        [PX_OPI_LOR] = "MPI_LOR",         [PX_OPI_BOR] = "MPI_BOR",
        [PX_OPI_LXOR] = "MPI_LXOR",       [PX_OPI_BXOR] = "MPI_BXOR",
        [PX_OPI_MINLOC] = "MPI_MINLOC",   [PX_OPI_MAXLOC] = "MPI_MAXLOC",
        [PX_OPI_REPLACE] = "MPI_REPLACE", [PX_OPI_NO_OP] = "MPI_NO_OP",
    };

    if (!px_mpi_op_is_builtin(op))
        return NULL;
    return names[(unsigned)op & 0xffu];
}
