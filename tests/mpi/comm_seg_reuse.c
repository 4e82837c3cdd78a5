/* Communicators freed and created again with the same members: the
 * shared-memory segment of a freed communicator is taken over by the next
 * one of the same members in the same order (src/mpi/coll/coll_shm.c).
 * Collectives on every such communicator deliver the right data: in a loop
 * of MPI_Comm_dup / MPI_Comm_free with a different number of operations on
 * each, on the same members in reverse order, on subsets, and with several
 * communicators alive at once and freed out of order. */
#include "px_test.h"

#define NB 1000 /* broadcast elements */
#define NR 300  /* allreduce elements */
#define NG 40   /* allgather elements per rank */

static int nchecks;

/* k collectives on c, each with data that depends on seed, c's size and order. */
static void colls(MPI_Comm c, int seed, int k)
{
    int me, np;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &np);
    static int b[NB], r[NR], rs[NR], g[NG], ga[NG * 64];
    for (int op = 0; op < k; op++) {
        int s = seed * 31 + op, root = s % np;
        switch (op % 4) {
        case 0:
            for (int i = 0; i < NB; i++)
                b[i] = me == root ? s * 7 + i : -1;
            MPI_Bcast(b, NB, MPI_INT, root, c);
            for (int i = 0; i < NB; i++)
                if (b[i] != s * 7 + i) {
                    PX_CHECK(0, "seed %d op %d: bcast element %d is %d, want %d", seed, op, i, b[i],
                             s * 7 + i);
                    break;
                }
            break;
        case 1:
            for (int i = 0; i < NR; i++)
                r[i] = (me + 1) * (i + s);
            MPI_Allreduce(r, rs, NR, MPI_INT, MPI_SUM, c);
            for (int i = 0; i < NR; i++)
                if (rs[i] != np * (np + 1) / 2 * (i + s)) {
                    PX_CHECK(0, "seed %d op %d: allreduce element %d is %d, want %d", seed, op, i,
                             rs[i], np * (np + 1) / 2 * (i + s));
                    break;
                }
            break;
        case 2:
            for (int i = 0; i < NG; i++)
                g[i] = me * 1000 + i + s;
            MPI_Allgather(g, NG, MPI_INT, ga, NG, MPI_INT, c);
            for (int j = 0; j < np * NG; j++)
                if (ga[j] != j / NG * 1000 + j % NG + s) {
                    PX_CHECK(0, "seed %d op %d: allgather element %d is %d, want %d", seed, op, j,
                             ga[j], j / NG * 1000 + j % NG + s);
                    break;
                }
            break;
        default:
            MPI_Barrier(c);
            break;
        }
        nchecks++;
    }
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "comm_seg_reuse");
    int me = px_test_rank, np = px_test_size;
    PX_REQUIRE(np <= 64, "at most 64 ranks");

    /* a loop of dup / free, a different number of operations each time */
    for (int it = 0; it < 40; it++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        colls(c, it, 1 + it % 7);
        MPI_Comm_free(&c);
    }
    /* the same members in reverse order, then in order again */
    for (int it = 0; it < 6; it++) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, 0, it % 2 ? me : np - me, &c);
        colls(c, 100 + it, 4 + it);
        MPI_Comm_free(&c);
    }
    /* halves, then the whole again */
    for (int it = 0; it < 6; it++) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, it % 2 ? me % 2 : me < np / 2, me, &c);
        colls(c, 200 + it, 5);
        MPI_Comm_free(&c);
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        colls(c, 250 + it, 3);
        MPI_Comm_free(&c);
    }
    /* several alive at once, used in turn, half of them freed (the last
     * made first) and made again each round */
    MPI_Comm cs[6];
    for (int i = 0; i < 6; i++)
        MPI_Comm_dup(i % 2 || i == 0 ? MPI_COMM_WORLD : cs[0], &cs[i]);
    for (int round = 0; round < 4; round++) {
        for (int k = 0; k < 3; k++)
            for (int i = 5; i >= 0; i--)
                colls(cs[i], 300 + round * 10 + i, 1 + (i + k) % 4);
        for (int i = 5; i >= 0; i--)
            if ((i + round) % 2 == 0)
                MPI_Comm_free(&cs[i]);
        for (int i = 0; i < 6; i++)
            if ((i + round) % 2 == 0)
                MPI_Comm_dup(MPI_COMM_WORLD, &cs[i]);
    }
    for (int i = 0; i < 6; i++) {
        colls(cs[i], 400 + i, 4);
        MPI_Comm_free(&cs[i]);
    }
    return px_test_finish("%d collectives checked", nchecks);
}
