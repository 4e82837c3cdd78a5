/* Helpers of the MPI-IO tests (io_*.c): file names every rank agrees on,
 * in $TMPDIR (or /tmp), unique per job; checks of error classes. */
#ifndef PX_IO_TEST_H
#define PX_IO_TEST_H

#include "px_test.h"

#include <unistd.h>

/* "<dir>/<test>.<rank 0's pid>.<tag>", the same on every rank of comm. */
static inline void io_path(char *out, size_t n, const char *tag)
{
    static long id = -1;
    if (id < 0) {
        id = (long)getpid();
        MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    }
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    snprintf(out, n, "%s/%s.%ld.%s", dir, px_test_name, id, tag);
}

/* The error class of a call's result is cls. */
#define EXPECT_CLASS PX_EXPECT_CLASS

/* Bytes a status says were transferred. */
static inline int io_count(MPI_Status *st, MPI_Datatype dt)
{
    int n = -1;
    MPI_Get_count(st, dt, &n);
    return n;
}

/* The value of the pattern at absolute file byte `off` written by `rank`. */
static inline unsigned char io_byte(int rank, long off)
{
    return (unsigned char)(rank * 37 + off * 13 + (off >> 8) * 7 + 1);
}

#endif
