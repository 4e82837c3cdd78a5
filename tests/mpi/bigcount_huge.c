/* Large-count calls (MPI-4.0 _c) with a count above INT_MAX: MPI_Send_c /
 * MPI_Recv_c, MPI_Bcast_c, MPI_Allreduce_c, and MPI_Gatherv_c and
 * MPI_Scatterv_c with one block, of INT_MAX + 4099 bytes, the data checked
 * byte for byte and the count read back with MPI_Get_count_c and
 * MPI_Get_elements_c. Needs 2.1 GB per rank at a time; runs at 2 ranks
 * (more only adds time). */
#include "px_test.h"

#include <limits.h>

#define HUGE_N ((MPI_Count)INT_MAX + 4099)

/* Byte i of a pattern that differs at every offset of a 4 GB buffer and
 * between seeds. */
static unsigned char pat(MPI_Count i, unsigned seed)
{
    return (unsigned char)((i * 2654435761u) >> 13 ^ (i >> 20) ^ seed);
}

static MPI_Count check(const unsigned char *b, unsigned seed)
{
    MPI_Count bad = 0;
    for (MPI_Count i = 0; i < HUGE_N; i++)
        if (b[i] != pat(i, seed) && bad++ < 3)
            PX_CHECK(0, "byte %lld is %u, expected %u (seed %u)", (long long)i, b[i], pat(i, seed),
                     seed);
    return bad;
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "bigcount_huge");
    int rank = px_test_rank, size = px_test_size;
    unsigned char *buf = malloc((size_t)HUGE_N);
    PX_REQUIRE(buf, "cannot allocate %lld bytes", (long long)HUGE_N);

    /* point-to-point: rank 0 to the last rank, count read back */
    if (size > 1 && (rank == 0 || rank == size - 1)) {
        if (rank == 0) {
            for (MPI_Count i = 0; i < HUGE_N; i++)
                buf[i] = pat(i, 1);
            PX_MPI(MPI_Send_c(buf, HUGE_N, MPI_BYTE, size - 1, 7, MPI_COMM_WORLD));
        } else {
            MPI_Status st;
            MPI_Count n = -1;
            memset(buf, 0, (size_t)HUGE_N);
            PX_MPI(MPI_Recv_c(buf, HUGE_N, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &st));
            PX_MPI(MPI_Get_count_c(&st, MPI_BYTE, &n));
            PX_CHECK(n == HUGE_N, "MPI_Get_count_c says %lld", (long long)n);
            int small = 0;
            PX_MPI(MPI_Get_count(&st, MPI_BYTE, &small));
            PX_CHECK(small == MPI_UNDEFINED, "MPI_Get_count says %d", small);
            PX_MPI(MPI_Get_elements_c(&st, MPI_BYTE, &n));
            PX_CHECK(n == HUGE_N, "MPI_Get_elements_c says %lld", (long long)n);
            check(buf, 1);
        }
    }

    /* broadcast from the last rank */
    if (rank == size - 1)
        for (MPI_Count i = 0; i < HUGE_N; i++)
            buf[i] = pat(i, 2);
    else
        memset(buf, 0xee, (size_t)HUGE_N);
    PX_MPI(MPI_Bcast_c(buf, HUGE_N, MPI_BYTE, size - 1, MPI_COMM_WORLD));
    check(buf, 2);

    /* reduction in place: every rank adds rank + 1 to a pattern of zeros
     * and ones, so each byte ends as its pattern bit times size plus the
     * sum of rank + 1 */
    for (MPI_Count i = 0; i < HUGE_N; i++)
        buf[i] = (unsigned char)((pat(i, 3) & 1) + rank + 1);
    PX_MPI(MPI_Allreduce_c(MPI_IN_PLACE, buf, HUGE_N, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD));
    MPI_Count bad = 0;
    unsigned ranks = (unsigned)(size * (size + 1) / 2);
    for (MPI_Count i = 0; i < HUGE_N; i++) {
        unsigned char want = (unsigned char)((pat(i, 3) & 1) * size + ranks);
        if (buf[i] != want && bad++ < 3)
            PX_CHECK(0, "allreduce byte %lld is %u, expected %u", (long long)i, buf[i], want);
    }

    /* gatherv and scatterv whose one non-empty block, the last rank's, is
     * that long: gathered to rank 0 and scattered back */
    MPI_Count *cnts = calloc((size_t)size, sizeof(MPI_Count));
    MPI_Aint *dsp = calloc((size_t)size, sizeof(MPI_Aint));
    PX_REQUIRE(cnts && dsp, "out of memory");
    cnts[size - 1] = HUGE_N;
    int last = rank == size - 1;
    for (MPI_Count i = 0; i < HUGE_N; i++)
        buf[i] = last ? pat(i, 4) : 0;
    PX_MPI(MPI_Gatherv_c(buf, last ? HUGE_N : 0, MPI_BYTE, buf, cnts, dsp, MPI_BYTE, 0,
                         MPI_COMM_WORLD));
    if (rank == 0)
        check(buf, 4);
    for (MPI_Count i = 0; i < HUGE_N; i++)
        buf[i] = rank == 0 ? pat(i, 5) : 0;
    PX_MPI(MPI_Scatterv_c(buf, cnts, dsp, MPI_BYTE, buf, last ? HUGE_N : 0, MPI_BYTE, 0,
                          MPI_COMM_WORLD));
    if (last)
        check(buf, 5);
    free(cnts);
    free(dsp);
    free(buf);
    return px_test_finish("%lld bytes sent, broadcast, reduced, gathered and scattered",
                          (long long)HUGE_N);
}
