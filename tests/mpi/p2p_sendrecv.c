/* Sendrecv and Sendrecv_replace around a ring (periodic) and along a chain
 * (MPI_PROC_NULL at the ends), for sizes across the protocol thresholds and
 * mixed datatypes; every rank sends and receives at once, so a protocol that
 * cannot progress both directions deadlocks here. */
#include "px_test.h"

static const int sizes[] = {0, 1, 100, 16384, 65537, 1 << 20};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

static uint64_t seed_of(int src, int k, int what)
{
    return (uint64_t)src << 32 | (uint64_t)k << 8 | (uint64_t)what;
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "p2p_sendrecv");
    int me = px_test_rank, n = px_test_size;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    int maxn = 1 << 20;
    char *s = malloc(maxn), *r = malloc(maxn + 8);
    MPI_Status st;
    int count = -1;

    for (int k = 0; k < NSIZES; k++) {
        int bytes = sizes[k];

        /* Ring, bytes, shifting right. */
        px_fill(s, bytes, seed_of(me, k, 1));
        memset(r, 0, bytes + 8);
        MPI_Sendrecv(s, bytes, MPI_BYTE, right, k, r, maxn + 8, MPI_BYTE, left, k, MPI_COMM_WORLD,
                     &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        PX_CHECK(count == bytes && st.MPI_SOURCE == left && st.MPI_TAG == k &&
                     px_verify(r, bytes, seed_of(left, k, 1)) == (size_t)bytes,
                 "ring Sendrecv %d B: count %d source %d tag %d", bytes, count, st.MPI_SOURCE,
                 st.MPI_TAG);

        /* Ring, Sendrecv_replace as ints, shifting left, different tags. */
        int ints = bytes / 4;
        px_fill(s, ints * 4, seed_of(me, k, 2));
        MPI_Sendrecv_replace(s, ints, MPI_INT, left, 100 + k, right, MPI_ANY_TAG, MPI_COMM_WORLD,
                             &st);
        MPI_Get_count(&st, MPI_INT, &count);
        PX_CHECK(count == ints && st.MPI_SOURCE == right && st.MPI_TAG == 100 + k &&
                     px_verify(s, ints * 4, seed_of(right, k, 2)) == (size_t)ints * 4,
                 "ring Sendrecv_replace %d ints: count %d source %d", ints, count, st.MPI_SOURCE);

        /* Chain: data moves right, ends use PROC_NULL. */
        int cl = me > 0 ? me - 1 : MPI_PROC_NULL;
        int cr = me < n - 1 ? me + 1 : MPI_PROC_NULL;
        px_fill(s, bytes, seed_of(me, k, 3));
        MPI_Sendrecv_replace(s, bytes, MPI_BYTE, cr, 300 + k, cl, 300 + k, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (cl == MPI_PROC_NULL)
            PX_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && count == 0 &&
                         px_verify(s, bytes, seed_of(me, k, 3)) == (size_t)bytes,
                     "chain start: Sendrecv_replace from PROC_NULL changed data");
        else
            PX_CHECK(st.MPI_SOURCE == cl && count == bytes &&
                         px_verify(s, bytes, seed_of(cl, k, 3)) == (size_t)bytes,
                     "chain Sendrecv_replace %d B from %d: count %d", bytes, cl, count);
    }
    free(s);
    free(r);
    return px_test_finish("%d sizes up to 1 MB, ring and chain", NSIZES);
}
