/* MPI_Comm_create_group: only the group's members call it. Evens and odds
 * build their communicators at the same time with the same tag; the
 * reversed world; a group without rank 0 while rank 0 is busy with other
 * traffic; ranks and groups of the results; the new communicators carry
 * their own traffic and collectives without crosstalk with the parent. */
#include "px_test.h"

/* Checks rank/size/membership of c built from world ranks members[0..n) in
 * that order, then a ring exchange and an allreduce on it. */
static void check_comm(MPI_Comm c, const int *members, int n, const char *what)
{
    int me = px_test_rank, r = -1, s = -1, pos = -1;
    for (int i = 0; i < n; i++)
        if (members[i] == me)
            pos = i;
    PX_REQUIRE(c != MPI_COMM_NULL, "%s: member %d got MPI_COMM_NULL", what, me);
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &s);
    PX_CHECK(r == pos && s == n, "%s: rank %d size %d, expected %d %d", what, r, s, pos, n);

    /* the group of c maps back to the expected world ranks */
    MPI_Group wg, cg;
    int *idx = malloc(sizeof(int) * (size_t)n), *wr = malloc(sizeof(int) * (size_t)n);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(c, &cg);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(cg, n, idx, wg, wr);
    for (int i = 0; i < n; i++)
        PX_CHECK(wr[i] == members[i], "%s: rank %d is world %d, expected %d", what, i, wr[i],
                 members[i]);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
    free(idx);
    free(wr);

    /* ring: the message from my left neighbour carries its world rank */
    int left = (r + n - 1) % n, right = (r + 1) % n, got = -1;
    MPI_Status st;
    MPI_Sendrecv(&me, 1, MPI_INT, right, 5, &got, 1, MPI_INT, MPI_ANY_SOURCE, 5, c, &st);
    PX_CHECK(got == members[left] && st.MPI_SOURCE == left,
             "%s: ring got %d from %d, expected %d from %d", what, got, st.MPI_SOURCE,
             members[left], left);
    int sum = 0, expect = 0;
    for (int i = 0; i < n; i++)
        expect += members[i] + 1;
    int mine = me + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c);
    PX_CHECK(sum == expect, "%s: allreduce %d, expected %d", what, sum, expect);
}

static MPI_Comm create_from(const int *members, int n, int tag)
{
    MPI_Group wg, g;
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, n, members, &g);
    PX_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, g, tag, &c));
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    return c;
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "comm_create_group");
    int me = px_test_rank, n = px_test_size;
    int *mem = malloc(sizeof(int) * (size_t)n);
    int cnt = 0, checked = 0;
    MPI_Comm c;

    /* evens and odds at the same time, same tag: disjoint groups */
    cnt = 0;
    for (int i = me % 2; i < n; i += 2)
        mem[cnt++] = i;
    c = create_from(mem, cnt, 11);
    check_comm(c, mem, cnt, me % 2 ? "odds" : "evens");
    MPI_Comm_free(&c);
    checked++;

    /* reversed world: rank i of the new communicator is world n-1-i */
    for (int i = 0; i < n; i++)
        mem[i] = n - 1 - i;
    c = create_from(mem, n, 12);
    check_comm(c, mem, n, "reversed");
    int res = -1;
    MPI_Comm_compare(MPI_COMM_WORLD, c, &res);
    PX_CHECK(res == (n > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "compare(world, reversed) = %d", res);
    MPI_Comm_free(&c);
    checked++;

    /* everyone but world rank 0, which meanwhile waits for a message that
     * the last rank sends on MPI_COMM_WORLD only after its creation */
    if (n > 1) {
        if (me == 0) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, n - 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            PX_CHECK(v == 4242, "rank 0 got %d", v);
        } else {
            for (int i = 1; i < n; i++)
                mem[i - 1] = i;
            c = create_from(mem, n - 1, 13);
            check_comm(c, mem, n - 1, "without rank 0");
            MPI_Comm_free(&c);
            if (me == n - 1) {
                int v = 4242;
                MPI_Send(&v, 1, MPI_INT, 0, 77, MPI_COMM_WORLD);
            }
        }
        checked++;
    }

    /* a process outside the group gets MPI_COMM_NULL at once */
    {
        MPI_Group wg, g;
        int zero = 0;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Group_incl(wg, 1, &zero, &g);
        c = MPI_COMM_SELF;
        PX_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, g, 14, &c));
        if (me == 0) {
            int s = -1;
            PX_REQUIRE(c != MPI_COMM_NULL, "rank 0 alone got MPI_COMM_NULL");
            MPI_Comm_size(c, &s);
            PX_CHECK(s == 1, "single-member communicator of size %d", s);
            MPI_Comm_free(&c);
        } else {
            PX_CHECK(c == MPI_COMM_NULL, "non-member did not get MPI_COMM_NULL");
        }
        MPI_Group_free(&g);
        MPI_Group_free(&wg);
    }

    /* many rounds over pairs from a dup'ed parent: the contexts agreed by
     * different pairs must not be confused with each other or the parent */
    MPI_Comm parent;
    MPI_Comm_dup(MPI_COMM_WORLD, &parent);
    for (int round = 0; round < 5; round++) {
        int peer = px_pair_peer(me, n);
        if (peer < 0)
            continue;
        int pair[2] = {me < peer ? me : peer, me < peer ? peer : me};
        if (round % 2)
            pair[0] ^= pair[1], pair[1] ^= pair[0], pair[0] ^= pair[1];
        MPI_Group pg, g;
        MPI_Comm_group(parent, &pg);
        MPI_Group_incl(pg, 2, pair, &g);
        PX_MPI(MPI_Comm_create_group(parent, g, 100 + round, &c));
        check_comm(c, pair, 2, "pair");
        /* same tag on the parent and the new communicator */
        int a = 1000 + me, b = -1;
        MPI_Request rq;
        MPI_Isend(&a, 1, MPI_INT, peer, 3, parent, &rq);
        int cr;
        MPI_Comm_rank(c, &cr);
        int x = 2000 + me, y = -1;
        MPI_Sendrecv(&x, 1, MPI_INT, 1 - cr, 3, &y, 1, MPI_INT, 1 - cr, 3, c, MPI_STATUS_IGNORE);
        PX_CHECK(y == 2000 + peer, "pair communicator got %d, expected %d", y, 2000 + peer);
        MPI_Recv(&b, 1, MPI_INT, peer, 3, parent, MPI_STATUS_IGNORE);
        PX_CHECK(b == 1000 + peer, "parent got %d, expected %d", b, 1000 + peer);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Comm_free(&c);
        MPI_Group_free(&g);
        MPI_Group_free(&pg);
    }
    MPI_Comm_free(&parent);

    /* error class of a negative tag */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    {
        MPI_Group wg;
        int cls = -1;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        int rc = MPI_Comm_create_group(MPI_COMM_WORLD, wg, -1, &c);
        MPI_Error_class(rc, &cls);
        PX_CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_TAG, "negative tag: class %d", cls);
        MPI_Group_free(&wg);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);

    free(mem);
    return px_test_finish("%d constructions checked (evens/odds, reversed, partial, pairs)",
                          checked + 5);
}
