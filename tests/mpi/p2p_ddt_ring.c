/* Large non-contiguous messages go through a ring of two windows at each
 * end, not a packed copy of the message's size (src/proto/proto_ring.c).
 * Rank 0 sends, rank 1 receives messages of 72 MB and some bytes (a
 * vector of 3-int blocks every 5 ints, so that items straddle the
 * windows' edges):
 *   vector to vector, contiguous to vector, vector to contiguous;
 *   two at once on different tags, received in the other order;
 *   one that arrived before its receive was posted, one taken by
 *   MPI_Mprobe and MPI_Mrecv;
 *   one into a smaller receive (MPI_ERR_TRUNCATE, the part that fits
 *   delivered); messages of 3 MB and 40 KB into the large receive (no
 *   windows: they fit the ring);
 *   a synchronous send; one to itself (rank 1);
 *   with a third rank, two senders at once to receives from any source.
 * Every int is checked. The peak resident memory of the sender and the
 * receiver must grow by less than 64 MB beyond their own buffers (two
 * rings at once take 16 MB; libfabric's buffers come on top with
 * PX_NET=ofi): a packed copy of the message (72 MB) fails the check (not
 * under AddressSanitizer). */
#include "px_test.h"

#include <sys/resource.h>

enum { BLK = 3, STRIDE = 5 };
#define NBLK ((72 << 20) / (BLK * 4) + 1001) /* ints: NBLK * BLK */

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int val(size_t i, int seed) { return (int)(i * 2654435761u) ^ seed; }

/* Fills the n ints the type selects in buf (spread: every STRIDE) or the
 * contiguous ints. */
static void put(int *buf, size_t n, int spread, int seed)
{
    for (size_t i = 0; i < n; i++)
        buf[spread ? (i / BLK) * STRIDE + i % BLK : i] = val(i, seed);
}

static size_t bad(const int *buf, size_t n, int spread, int seed)
{
    for (size_t i = 0; i < n; i++)
        if (buf[spread ? (i / BLK) * STRIDE + i % BLK : i] != val(i, seed))
            return i + 1;
    return 0;
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "p2p_ddt_ring");
    PX_REQUIRE(px_test_size >= 2, "needs 2 ranks");
    int me = px_test_rank;
    size_t n = (size_t)NBLK * BLK, span = (size_t)NBLK * STRIDE;
    MPI_Datatype vec, big;
    MPI_Type_vector(NBLK, BLK, STRIDE, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_contiguous((int)n, MPI_INT, &big);
    MPI_Type_commit(&big);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *a = NULL, *b = NULL;
    if (me < 3) {
        a = malloc(span * sizeof(int));
        b = malloc(span * sizeof(int));
        PX_REQUIRE(a && b, "out of memory");
        memset(a, 0, span * sizeof(int));
        memset(b, 0, span * sizeof(int));
    }
    long rss0 = maxrss_kb();
    MPI_Status st;
    MPI_Request rq[2];
    int count;
    size_t e;

    /* 1-3: one message each way of packing; a = vector, b = contiguous */
    for (int k = 0; k < 3; k++) {
        int sv = k != 1, rv = k != 2; /* sender / receiver use the vector */
        if (me == 0) {
            put(a, n, sv, k);
            MPI_Send(a, sv ? 1 : (int)n, sv ? vec : MPI_INT, 1, k, MPI_COMM_WORLD);
        } else if (me == 1) {
            memset(a, 0, span * sizeof(int));
            MPI_Recv(a, rv ? 1 : (int)n, rv ? vec : MPI_INT, 0, k, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            PX_CHECK(count == (int)n, "case %d: count %d, not %zu", k, count, n);
            PX_CHECK(!(e = bad(a, n, rv, k)), "case %d: int %zu wrong", k, e - 1);
        }
    }

    /* 4: two at once, tags 10 and 11, received in the other order */
    if (me == 0) {
        put(a, n, 1, 10);
        put(b, n, 1, 11);
        MPI_Isend(a, 1, vec, 1, 10, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(b, 1, vec, 1, 11, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    } else if (me == 1) {
        memset(a, 0, span * sizeof(int));
        memset(b, 0, span * sizeof(int));
        MPI_Irecv(b, 1, vec, 0, 11, MPI_COMM_WORLD, &rq[1]);
        MPI_Irecv(a, 1, vec, 0, 10, MPI_COMM_WORLD, &rq[0]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        PX_CHECK(!(e = bad(a, n, 1, 10)), "two at once, tag 10: int %zu wrong", e - 1);
        PX_CHECK(!(e = bad(b, n, 1, 11)), "two at once, tag 11: int %zu wrong", e - 1);
    }

    /* 5: sent before its receive is posted; then matched by MPI_Mprobe */
    if (me == 0) {
        put(a, n, 1, 20);
        put(b, n, 1, 21);
        MPI_Isend(a, 1, vec, 1, 20, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(b, 1, vec, 1, 21, MPI_COMM_WORLD, &rq[1]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 1) {
            int flag = 0;
            while (!flag)
                MPI_Iprobe(0, 20, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            memset(a, 0, span * sizeof(int));
            MPI_Recv(a, 1, vec, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            PX_CHECK(!(e = bad(a, n, 1, 20)), "unexpected: int %zu wrong", e - 1);
            MPI_Message msg;
            memset(b, 0, span * sizeof(int));
            MPI_Mprobe(0, 21, MPI_COMM_WORLD, &msg, &st);
            MPI_Mrecv(b, 1, vec, &msg, &st);
            PX_CHECK(!(e = bad(b, n, 1, 21)), "mrecv: int %zu wrong", e - 1);
        }
    }

    /* 6: into a receive of two thirds of it */
    size_t part = (size_t)(NBLK / 3 * 2) * BLK;
    if (me == 0) {
        put(a, n, 1, 30);
        MPI_Send(a, 1, vec, 1, 30, MPI_COMM_WORLD);
    } else if (me == 1) {
        MPI_Datatype small;
        MPI_Type_vector(NBLK / 3 * 2, BLK, STRIDE, MPI_INT, &small);
        MPI_Type_commit(&small);
        memset(a, 0, span * sizeof(int));
        int rc = MPI_Recv(a, 1, small, 0, 30, MPI_COMM_WORLD, &st);
        int cls;
        MPI_Error_class(rc, &cls);
        PX_CHECK(cls == MPI_ERR_TRUNCATE, "truncated: error class %d", cls);
        PX_CHECK(!(e = bad(a, part, 1, 30)), "truncated: int %zu wrong", e - 1);
        MPI_Type_free(&small);
    }

    /* 6b: smaller messages than the receive, which fit its ring */
    const int few[2] = {(3 << 20) / (BLK * 4) + 7, (40 << 10) / (BLK * 4) + 3};
    for (int f = 0; f < 2; f++) {
        MPI_Datatype sm;
        MPI_Type_vector(few[f], BLK, STRIDE, MPI_INT, &sm);
        MPI_Type_commit(&sm);
        if (me == 0) {
            put(a, (size_t)few[f] * BLK, 1, 35 + f);
            MPI_Send(a, 1, sm, 1, 35, MPI_COMM_WORLD);
        } else if (me == 1) {
            memset(a, 0, span * sizeof(int));
            MPI_Recv(a, 1, vec, 0, 35, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            PX_CHECK(count == few[f] * BLK, "smaller: count %d", count);
            PX_CHECK(!(e = bad(a, (size_t)few[f] * BLK, 1, 35 + f)), "smaller %d: int %zu wrong", f,
                     e - 1);
        }
        MPI_Type_free(&sm);
    }

    /* 7: synchronous; 8: rank 1 to itself */
    if (me == 0) {
        put(a, n, 1, 50);
        MPI_Ssend(a, 1, vec, 1, 50, MPI_COMM_WORLD);
    } else if (me == 1) {
        memset(a, 0, span * sizeof(int));
        MPI_Recv(a, 1, vec, 0, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        PX_CHECK(!(e = bad(a, n, 1, 50)), "synchronous: int %zu wrong", e - 1);
        put(b, n, 1, 60);
        memset(a, 0, span * sizeof(int));
        MPI_Isend(b, 1, vec, 1, 60, MPI_COMM_WORLD, &rq[0]);
        MPI_Recv(a, 1, vec, 1, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        PX_CHECK(!(e = bad(a, n, 1, 60)), "to itself: int %zu wrong", e - 1);
    }

    /* 9: ranks 0 and 2 to rank 1's receives from any source */
    if (px_test_size >= 3) {
        if (me == 0 || me == 2) {
            put(a, n, 1, 40 + me);
            MPI_Send(a, 1, vec, 1, 40, MPI_COMM_WORLD);
        } else if (me == 1) {
            memset(a, 0, span * sizeof(int));
            memset(b, 0, span * sizeof(int));
            MPI_Status s2[2];
            MPI_Irecv(a, 1, vec, MPI_ANY_SOURCE, 40, MPI_COMM_WORLD, &rq[0]);
            MPI_Irecv(b, 1, vec, MPI_ANY_SOURCE, 40, MPI_COMM_WORLD, &rq[1]);
            MPI_Waitall(2, rq, s2);
            PX_CHECK(s2[0].MPI_SOURCE + s2[1].MPI_SOURCE == 2, "sources %d and %d",
                     s2[0].MPI_SOURCE, s2[1].MPI_SOURCE);
            PX_CHECK(!(e = bad(a, n, 1, 40 + s2[0].MPI_SOURCE)), "any source: int %zu wrong",
                     e - 1);
            PX_CHECK(!(e = bad(b, n, 1, 40 + s2[1].MPI_SOURCE)), "any source: int %zu wrong",
                     e - 1);
        }
    }

    long grew = (maxrss_kb() - rss0) >> 10;
#ifdef __SANITIZE_ADDRESS__
    grew = 0; /* its allocator keeps freed blocks aside: not the library's */
#endif
    if (me < 2)
        PX_CHECK(grew < 64, "rank %d's peak memory grew by %ld MB (message: %zu MB)", me, grew,
                 n * 4 >> 20);
    MPI_Type_free(&vec);
    MPI_Type_free(&big);
    free(a);
    free(b);
    long g0 = grew;
    MPI_Bcast(&g0, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return px_test_finish("messages of %zu ints through rings, peak memory grew %ld MB (sender), "
                          "%ld MB (receiver)",
                          n, g0, grew);
}
