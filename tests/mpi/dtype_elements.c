/* MPI_Get_count / MPI_Get_elements(_x) on messages that end inside an item
 * of a derived receive type: the basic elements received are counted by
 * walking the type map, and the partial item's data is stored. */
#include "px_test.h"

#include <stddef.h>

static int rank, peer, nchecks;

struct rec {
    int i;
    double d;
};

/* Sends `bytes` bytes of src to peer and receives them with (count, type). */
static void xfer(const void *src, int bytes, void *dst, int count, MPI_Datatype type,
                 MPI_Status *st)
{
    MPI_Request r;
    PX_MPI(MPI_Irecv(dst, count, type, peer, 3, MPI_COMM_WORLD, &r));
    PX_MPI(MPI_Send(src, bytes, MPI_BYTE, peer, 3, MPI_COMM_WORLD));
    PX_MPI(MPI_Wait(&r, st));
}

static void expect_counts(const char *what, MPI_Status *st, MPI_Datatype t, int count, int elements)
{
    int c, e;
    MPI_Count ex;
    PX_MPI(MPI_Get_count(st, t, &c));
    PX_MPI(MPI_Get_elements(st, t, &e));
    PX_MPI(MPI_Get_elements_x(st, t, &ex));
    nchecks++;
    PX_CHECK(c == count, "%s: Get_count %d expected %d", what, c, count);
    PX_CHECK(e == elements && ex == elements, "%s: Get_elements %d / %lld expected %d", what, e,
             (long long)ex, elements);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "dtype_elements");
    rank = px_test_rank;
    peer = px_pair_peer(rank, px_test_size);
    if (peer < 0)
        peer = rank;
    MPI_Status st;

    /* mixed struct { int; double; }: 2 items and the int of a third */
    MPI_Datatype rt;
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {offsetof(struct rec, i), offsetof(struct rec, d)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    PX_MPI(MPI_Type_create_struct(2, bl, dp, ty, &rt));
    PX_MPI(MPI_Type_commit(&rt));
    unsigned char raw[64];
    for (int k = 0; k < 3; k++) {
        int iv = rank * 10 + k;
        double dv = rank + 0.25 * k;
        memcpy(raw + 12 * k, &iv, 4);
        memcpy(raw + 12 * k + 4, &dv, 8);
    }
    struct rec r[3];
    for (int k = 0; k < 3; k++) {
        r[k].i = -1;
        r[k].d = -1;
    }
    xfer(raw, 28, r, 3, rt, &st);
    expect_counts("struct, 2 items + int", &st, rt, MPI_UNDEFINED, 5);
    PX_CHECK(r[0].i == peer * 10 && r[1].d == peer + 0.25 && r[2].i == peer * 10 + 2 &&
                 r[2].d == -1,
             "struct partial data: %d %g %d %g", r[0].i, r[1].d, r[2].i, r[2].d);

    /* whole items only */
    xfer(raw, 24, r, 3, rt, &st);
    expect_counts("struct, 2 items", &st, rt, 2, 4);

    /* nothing */
    xfer(raw, 0, r, 3, rt, &st);
    expect_counts("struct, empty message", &st, rt, 0, 0);

    /* uniform vector of ints: 4 per item, 7 received */
    MPI_Datatype vt;
    PX_MPI(MPI_Type_vector(2, 2, 3, MPI_INT, &vt));
    PX_MPI(MPI_Type_commit(&vt));
    int src[8], dst[16];
    for (int i = 0; i < 8; i++)
        src[i] = rank * 100 + i;
    for (int i = 0; i < 16; i++)
        dst[i] = -1;
    xfer(src, 7 * 4, dst, 3, vt, &st);
    expect_counts("vector, 7 ints", &st, vt, MPI_UNDEFINED, 7);
    /* vector extent is 5 ints: items at 0 and 5, blocks at +0 and +3 */
    int want[16] = {0, 1, -1, 2, 3, 4, 5, -1, 6, -1, -1, -1, -1, -1, -1, -1};
    for (int i = 0; i < 16; i++) {
        int w = want[i] < 0 ? -1 : peer * 100 + want[i];
        if (dst[i] != w) {
            PX_CHECK(0, "vector partial data: element %d is %d expected %d", i, dst[i], w);
            break;
        }
    }

    /* nested: contiguous(2, struct) counts the struct's elements */
    MPI_Datatype ct;
    PX_MPI(MPI_Type_contiguous(2, rt, &ct));
    PX_MPI(MPI_Type_commit(&ct));
    xfer(raw, 28, r, 2, ct, &st);
    expect_counts("contiguous of struct, 28 bytes", &st, ct, MPI_UNDEFINED, 5);
    xfer(raw, 36, r, 2, ct, &st);
    expect_counts("contiguous of struct, 36 bytes", &st, ct, MPI_UNDEFINED, 6);

    PX_MPI(MPI_Type_free(&rt));
    PX_MPI(MPI_Type_free(&vt));
    PX_MPI(MPI_Type_free(&ct));
    return px_test_finish("%d partial receives counted", nchecks);
}
