/* Table of predefined MPI datatypes (x86_64 Linux, gfortran conventions). */
#include "dtype_builtin.h"

#include <complex.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

/* Layouts of the MAXLOC/MINLOC pair types: { value; index; } as C lays them out. */
struct px_pair_float_int {
    float v;
    int k;
};
struct px_pair_double_int {
    double v;
    int k;
};
struct px_pair_long_int {
    long v;
    int k;
};
struct px_pair_short_int {
    short v;
    int k;
};
struct px_pair_ldouble_int {
    long double v;
    int k;
};
struct px_pair_int_int {
    int v;
    int k;
};
struct px_pair_float_float {
    float v;
    float k;
}; /* MPI_2REAL */
struct px_pair_double_double {
    double v;
    double k;
}; /* MPI_2DOUBLE_PRECISION */

/* Fortran REAL*16 is IEEE binary128 with gfortran; only its size matters here. */
#define PX_F_REAL16_SIZE 16
#define PX_F_COMPLEX32_SIZE 32

/*
 * The list of predefined types.
 *   S(handle, size, kind)                        scalar: extent = size, lb = 0
 *   P(handle, pair struct, value type, index type) pair with a 0x4c handle
 *   Q(handle, pair struct, value type, index type) pair with a 0x8c handle
 */
#define PX_DTYPE_BUILTIN_LIST(S, P, Q)                                                             \
    /* C */                                                                                        \
    S(MPI_CHAR, sizeof(char), PX_DTK_CHAR)                                                         \
    S(MPI_UNSIGNED_CHAR, sizeof(unsigned char), PX_DTK_UNSIGNED)                                   \
    S(MPI_SHORT, sizeof(short), PX_DTK_SIGNED)                                                     \
    S(MPI_UNSIGNED_SHORT, sizeof(unsigned short), PX_DTK_UNSIGNED)                                 \
    S(MPI_INT, sizeof(int), PX_DTK_SIGNED)                                                         \
    S(MPI_UNSIGNED, sizeof(unsigned), PX_DTK_UNSIGNED)                                             \
    S(MPI_LONG, sizeof(long), PX_DTK_SIGNED)                                                       \
    S(MPI_UNSIGNED_LONG, sizeof(unsigned long), PX_DTK_UNSIGNED)                                   \
    S(MPI_LONG_LONG_INT, sizeof(long long), PX_DTK_SIGNED)                                         \
    S(MPI_FLOAT, sizeof(float), PX_DTK_FLOAT)                                                      \
    S(MPI_DOUBLE, sizeof(double), PX_DTK_FLOAT)                                                    \
    S(MPI_LONG_DOUBLE, sizeof(long double), PX_DTK_FLOAT)                                          \
    S(MPI_BYTE, 1, PX_DTK_BYTE)                                                                    \
    S(MPI_WCHAR, sizeof(wchar_t), PX_DTK_CHAR)                                                     \
    S(MPI_PACKED, 1, PX_DTK_PACKED)                                                                \
    S(MPI_LB, 0, PX_DTK_OTHER)                                                                     \
    S(MPI_UB, 0, PX_DTK_OTHER)                                                                     \
    P(MPI_2INT, struct px_pair_int_int, MPI_INT, MPI_INT)                                          \
    S(MPI_SIGNED_CHAR, sizeof(signed char), PX_DTK_SIGNED)                                         \
    S(MPI_UNSIGNED_LONG_LONG, sizeof(unsigned long long), PX_DTK_UNSIGNED)                         \
    /* Fortran */                                                                                  \
    S(MPI_CHARACTER, 1, PX_DTK_CHAR)                                                               \
    S(MPI_INTEGER, sizeof(MPI_Fint), PX_DTK_SIGNED)                                                \
    S(MPI_REAL, sizeof(float), PX_DTK_FLOAT)                                                       \
    S(MPI_LOGICAL, sizeof(MPI_Fint), PX_DTK_LOGICAL)                                               \
    S(MPI_COMPLEX, sizeof(float _Complex), PX_DTK_COMPLEX)                                         \
    S(MPI_DOUBLE_PRECISION, sizeof(double), PX_DTK_FLOAT)                                          \
    P(MPI_2INTEGER, struct px_pair_int_int, MPI_INTEGER, MPI_INTEGER)                              \
    P(MPI_2REAL, struct px_pair_float_float, MPI_REAL, MPI_REAL)                                   \
    S(MPI_DOUBLE_COMPLEX, sizeof(double _Complex), PX_DTK_COMPLEX)                                 \
    P(MPI_2DOUBLE_PRECISION, struct px_pair_double_double, MPI_DOUBLE_PRECISION,                   \
      MPI_DOUBLE_PRECISION)                                                                        \
    S(MPI_REAL4, sizeof(float), PX_DTK_FLOAT)                                                      \
    S(MPI_COMPLEX8, sizeof(float _Complex), PX_DTK_COMPLEX)                                        \
    S(MPI_REAL8, sizeof(double), PX_DTK_FLOAT)                                                     \
    S(MPI_COMPLEX16, sizeof(double _Complex), PX_DTK_COMPLEX)                                      \
    S(MPI_REAL16, PX_F_REAL16_SIZE, PX_DTK_FLOAT)                                                  \
    S(MPI_COMPLEX32, PX_F_COMPLEX32_SIZE, PX_DTK_COMPLEX)                                          \
    S(MPI_INTEGER1, sizeof(int8_t), PX_DTK_SIGNED)                                                 \
    S(MPI_INTEGER2, sizeof(int16_t), PX_DTK_SIGNED)                                                \
    S(MPI_INTEGER4, sizeof(int32_t), PX_DTK_SIGNED)                                                \
    S(MPI_INTEGER8, sizeof(int64_t), PX_DTK_SIGNED)                                                \
    /* C++ (bool is one byte in the x86_64 C++ ABI) */                                             \
    S(MPI_CXX_BOOL, sizeof(_Bool), PX_DTK_LOGICAL)                                                 \
    S(MPI_CXX_FLOAT_COMPLEX, sizeof(float _Complex), PX_DTK_COMPLEX)                               \
    S(MPI_CXX_DOUBLE_COMPLEX, sizeof(double _Complex), PX_DTK_COMPLEX)                             \
    S(MPI_CXX_LONG_DOUBLE_COMPLEX, sizeof(long double _Complex), PX_DTK_COMPLEX)                   \
    /* C99 */                                                                                      \
    S(MPI_INT8_T, sizeof(int8_t), PX_DTK_SIGNED)                                                   \
    S(MPI_INT16_T, sizeof(int16_t), PX_DTK_SIGNED)                                                 \
    S(MPI_INT32_T, sizeof(int32_t), PX_DTK_SIGNED)                                                 \
    S(MPI_INT64_T, sizeof(int64_t), PX_DTK_SIGNED)                                                 \
    S(MPI_UINT8_T, sizeof(uint8_t), PX_DTK_UNSIGNED)                                               \
    S(MPI_UINT16_T, sizeof(uint16_t), PX_DTK_UNSIGNED)                                             \
    S(MPI_UINT32_T, sizeof(uint32_t), PX_DTK_UNSIGNED)                                             \
    S(MPI_UINT64_T, sizeof(uint64_t), PX_DTK_UNSIGNED)                                             \
    S(MPI_C_BOOL, sizeof(_Bool), PX_DTK_LOGICAL)                                                   \
    S(MPI_C_COMPLEX, sizeof(float _Complex), PX_DTK_COMPLEX)                                       \
    S(MPI_C_DOUBLE_COMPLEX, sizeof(double _Complex), PX_DTK_COMPLEX)                               \
    S(MPI_C_LONG_DOUBLE_COMPLEX, sizeof(long double _Complex), PX_DTK_COMPLEX)                     \
    S(MPI_AINT, sizeof(MPI_Aint), PX_DTK_SIGNED)                                                   \
    S(MPI_OFFSET, sizeof(MPI_Offset), PX_DTK_SIGNED)                                               \
    S(MPI_COUNT, sizeof(MPI_Count), PX_DTK_SIGNED)                                                 \
    /* value/index pairs with their own handle range */                                            \
    Q(MPI_FLOAT_INT, struct px_pair_float_int, MPI_FLOAT, MPI_INT)                                 \
    Q(MPI_DOUBLE_INT, struct px_pair_double_int, MPI_DOUBLE, MPI_INT)                              \
    Q(MPI_LONG_INT, struct px_pair_long_int, MPI_LONG, MPI_INT)                                    \
    Q(MPI_SHORT_INT, struct px_pair_short_int, MPI_SHORT, MPI_INT)                                 \
    Q(MPI_LONG_DOUBLE_INT, struct px_pair_ldouble_int, MPI_LONG_DOUBLE, MPI_INT)

/* Builtin handles: 0x4c00SSII. Pair handles: 0x8c00000I. */
#define PX_DTB_BUILTIN_MASK 0xffff0000u
#define PX_DTB_BUILTIN_TAG 0x4c000000u
#define PX_DTB_PAIR_MASK 0xfffffff8u
#define PX_DTB_PAIR_TAG 0x8c000000u

/* Position of each type in the dense table. */
enum {
#define PX_DTB_POS_S(h, size, kind) PX_DTB_POS_##h,
#define PX_DTB_POS_P(h, st, first, second) PX_DTB_POS_##h,
    PX_DTYPE_BUILTIN_LIST(PX_DTB_POS_S, PX_DTB_POS_P, PX_DTB_POS_P)
#undef PX_DTB_POS_S
#undef PX_DTB_POS_P
        PX_DTB_COUNT
};

/* The size carried in a 0x4c handle must be the size we report. */
#define PX_DTB_CHECK_S(h, size, kind)                                                              \
    _Static_assert((((unsigned)(h) >> 8) & 0xffu) == (size), #h " size");
#define PX_DTB_CHECK_P(h, st, first, second)                                                       \
    _Static_assert((((unsigned)(h) >> 8) & 0xffu) == sizeof(((st *)0)->v) + sizeof(((st *)0)->k),  \
                   #h " size");
#define PX_DTB_CHECK_Q(h, st, first, second)                                                       \
    _Static_assert(((unsigned)(h)&PX_DTB_PAIR_MASK) == PX_DTB_PAIR_TAG, #h " range");
PX_DTYPE_BUILTIN_LIST(PX_DTB_CHECK_S, PX_DTB_CHECK_P, PX_DTB_CHECK_Q)
#undef PX_DTB_CHECK_S
#undef PX_DTB_CHECK_P
#undef PX_DTB_CHECK_Q

static const px_dtype_builtin_t px_dtb_table[PX_DTB_COUNT] = {
#define PX_DTB_ROW_S(h, sz, knd)                                                                   \
    [PX_DTB_POS_##h] = {.handle = (h),                                                             \
                        .name = #h,                                                                \
                        .size = (sz),                                                              \
                        .extent = (sz),                                                            \
                        .lb = 0,                                                                   \
                        .true_lb = 0,                                                              \
                        .true_extent = (sz),                                                       \
                        .kind = (knd),                                                             \
                        .is_pair = 0,                                                              \
                        .pair_first = MPI_DATATYPE_NULL,                                           \
                        .pair_second = MPI_DATATYPE_NULL,                                          \
                        .second_offset = 0},
#define PX_DTB_ROW_P(h, st, first, second)                                                         \
    [PX_DTB_POS_##h] = {.handle = (h),                                                             \
                        .name = #h,                                                                \
                        .size = sizeof(((st *)0)->v) + sizeof(((st *)0)->k),                       \
                        .extent = sizeof(st),                                                      \
                        .lb = 0,                                                                   \
                        .true_lb = 0,                                                              \
                        .true_extent = offsetof(st, k) + sizeof(((st *)0)->k),                     \
                        .kind = PX_DTK_PAIR,                                                       \
                        .is_pair = 1,                                                              \
                        .pair_first = (first),                                                     \
                        .pair_second = (second),                                                   \
                        .second_offset = offsetof(st, k)},
    PX_DTYPE_BUILTIN_LIST(PX_DTB_ROW_S, PX_DTB_ROW_P, PX_DTB_ROW_P)
#undef PX_DTB_ROW_S
#undef PX_DTB_ROW_P
};

/* Low byte of a 0x4c handle -> position + 1 (0: no such type). */
static const unsigned char px_dtb_slot[256] = {
#define PX_DTB_SLOT_S(h, size, kind) [(unsigned)(h)&0xffu] = PX_DTB_POS_##h + 1,
#define PX_DTB_SLOT_P(h, st, first, second) [(unsigned)(h)&0xffu] = PX_DTB_POS_##h + 1,
#define PX_DTB_SLOT_Q(h, st, first, second)
    PX_DTYPE_BUILTIN_LIST(PX_DTB_SLOT_S, PX_DTB_SLOT_P, PX_DTB_SLOT_Q)
#undef PX_DTB_SLOT_S
#undef PX_DTB_SLOT_P
#undef PX_DTB_SLOT_Q
};

/* Low bits of a 0x8c pair handle -> position + 1. */
static const unsigned char px_dtb_pair_slot[8] = {
#define PX_DTB_PSLOT_S(h, size, kind)
#define PX_DTB_PSLOT_P(h, st, first, second)
#define PX_DTB_PSLOT_Q(h, st, first, second) [(unsigned)(h)&7u] = PX_DTB_POS_##h + 1,
    PX_DTYPE_BUILTIN_LIST(PX_DTB_PSLOT_S, PX_DTB_PSLOT_P, PX_DTB_PSLOT_Q)
#undef PX_DTB_PSLOT_S
#undef PX_DTB_PSLOT_P
#undef PX_DTB_PSLOT_Q
};

const px_dtype_builtin_t *px_mpi_dtype_builtin(MPI_Datatype dt)
{
    unsigned h = (unsigned)dt;
    unsigned pos;

    if ((h & PX_DTB_BUILTIN_MASK) == PX_DTB_BUILTIN_TAG)
        pos = px_dtb_slot[h & 0xffu];
    else if ((h & PX_DTB_PAIR_MASK) == PX_DTB_PAIR_TAG)
        pos = px_dtb_pair_slot[h & 7u];
    else
        return NULL;
    if (pos == 0)
        return NULL;
    /* the handle also carries the size; reject values that only share the index */
    return px_dtb_table[pos - 1].handle == dt ? &px_dtb_table[pos - 1] : NULL;
}

int px_mpi_dtype_builtin_count(void) { return PX_DTB_COUNT; }

const px_dtype_builtin_t *px_mpi_dtype_builtin_at(int i)
{
    if (i < 0 || i >= PX_DTB_COUNT)
        return NULL;
    return &px_dtb_table[i];
}
