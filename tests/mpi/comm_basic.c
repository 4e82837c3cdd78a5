/* Communicators: dup/split/compare/free/group, with traffic on each. The
 * same (source, tag) on different communicators never matches across them;
 * split ranks follow (color, key); collectives stay inside their
 * communicator; many dup/free cycles keep working. */
#include "px_test.h"

/* Messages with the same tag, sent on B first and A second, received on A
 * first: A's receive must get A's message. */
static void no_crosstalk(MPI_Comm a, MPI_Comm b, const char *what)
{
    int ra, rb, n;
    MPI_Comm_rank(a, &ra);
    MPI_Comm_rank(b, &rb);
    MPI_Comm_size(a, &n);
    int to_a = (ra + 1) % n, from_a = (ra + n - 1) % n;
    int nb;
    MPI_Comm_size(b, &nb);
    int to_b = (rb + 1) % nb, from_b = (rb + nb - 1) % nb;
    int sa = 1000 + ra, sb = 2000 + rb, ga = -1, gb = -1;
    MPI_Request r[2];
    MPI_Status st;

    MPI_Isend(&sb, 1, MPI_INT, to_b, 7, b, &r[0]);
    MPI_Isend(&sa, 1, MPI_INT, to_a, 7, a, &r[1]);
    MPI_Recv(&ga, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, a, &st);
    PX_CHECK(ga == 1000 + from_a && st.MPI_SOURCE == from_a,
             "%s: receive on first comm got %d from %d, expected %d from %d", what, ga,
             st.MPI_SOURCE, 1000 + from_a, from_a);
    MPI_Recv(&gb, 1, MPI_INT, from_b, 7, b, &st);
    PX_CHECK(gb == 2000 + from_b, "%s: receive on second comm got %d", what, gb);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "comm_basic");
    int me = px_test_rank, n = px_test_size, res = -1, r = -1, s = -1;
    MPI_Comm dup, dup2, split, rsplit, half;

    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res);
    PX_CHECK(res == MPI_IDENT, "compare(world, world) = %d", res);

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_rank(dup, &r);
    MPI_Comm_size(dup, &s);
    PX_CHECK(r == me && s == n, "dup rank %d size %d", r, s);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &res);
    PX_CHECK(res == MPI_CONGRUENT, "compare(world, dup) = %d", res);
    no_crosstalk(MPI_COMM_WORLD, dup, "world/dup");
    no_crosstalk(dup, MPI_COMM_WORLD, "dup/world");
    MPI_Comm_dup(dup, &dup2);
    no_crosstalk(dup2, dup, "dup2/dup");

    /* Same group in reverse order: similar; reversed ranks. */
    MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &rsplit);
    MPI_Comm_rank(rsplit, &r);
    PX_CHECK(r == n - 1 - me, "reverse split: rank %d, expected %d", r, n - 1 - me);
    MPI_Comm_compare(MPI_COMM_WORLD, rsplit, &res);
    PX_CHECK(res == (n > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "compare(world, reversed) = %d", res);
    no_crosstalk(rsplit, MPI_COMM_WORLD, "reversed/world");

    /* Even/odd split; key ties broken by old rank. */
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, 0, &split);
    MPI_Comm_rank(split, &r);
    MPI_Comm_size(split, &s);
    PX_CHECK(r == me / 2 && s == (n + 1 - me % 2) / 2, "parity split: rank %d size %d", r, s);
    MPI_Comm_compare(MPI_COMM_WORLD, split, &res);
    PX_CHECK(res == (n > 1 ? MPI_UNEQUAL : MPI_CONGRUENT), "compare(world, parity) = %d", res);
    no_crosstalk(split, MPI_COMM_WORLD, "parity/world");
    {
        int sum = -1, want = 0;
        MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, split);
        for (int i = me % 2; i < n; i += 2)
            want += i;
        PX_CHECK(sum == want, "Allreduce on parity split: %d, expected %d", sum, want);
        int root_rank = -1;
        int v = r == 0 ? me : -1;
        MPI_Bcast(&v, 1, MPI_INT, 0, split);
        root_rank = me % 2;
        PX_CHECK(v == root_rank, "Bcast on parity split: %d", v);
    }

    /* Groups: translate split ranks back to world ranks. */
    {
        MPI_Group gw, gs, gsel;
        int ranks[64], out[64], cmp = -1, gsz = -1, grk = -1;
        MPI_Comm_group(MPI_COMM_WORLD, &gw);
        MPI_Comm_group(split, &gs);
        MPI_Group_size(gs, &gsz);
        MPI_Group_rank(gs, &grk);
        PX_CHECK(gsz == s && grk == r, "split group size %d rank %d", gsz, grk);
        for (int i = 0; i < gsz && i < 64; i++)
            ranks[i] = i;
        MPI_Group_translate_ranks(gs, gsz < 64 ? gsz : 64, ranks, gw, out);
        for (int i = 0; i < gsz && i < 64; i++)
            PX_CHECK(out[i] == 2 * i + me % 2, "translate: split rank %d -> %d", i, out[i]);
        MPI_Group_compare(gw, gs, &cmp);
        PX_CHECK(cmp == (n > 1 ? MPI_UNEQUAL : MPI_IDENT), "group compare %d", cmp);
        for (int i = 0; i < gsz && i < 64; i++)
            ranks[i] = 2 * i + me % 2;
        MPI_Group_incl(gw, gsz, ranks, &gsel);
        MPI_Group_compare(gsel, gs, &cmp);
        PX_CHECK(cmp == MPI_IDENT, "incl of the split's ranks vs split group: %d", cmp);
        MPI_Group_free(&gsel);
        MPI_Group_free(&gs);
        MPI_Group_free(&gw);
        PX_CHECK(gw == MPI_GROUP_NULL, "Group_free did not null the handle");
    }

    /* MPI_UNDEFINED gives MPI_COMM_NULL; a first-half communicator. */
    MPI_Comm_split(MPI_COMM_WORLD, me < (n + 1) / 2 ? 1 : MPI_UNDEFINED, me, &half);
    if (me < (n + 1) / 2) {
        PX_CHECK(half != MPI_COMM_NULL, "member got MPI_COMM_NULL");
        if (half != MPI_COMM_NULL) {
            MPI_Comm_size(half, &s);
            PX_CHECK(s == (n + 1) / 2, "half size %d", s);
            MPI_Comm hd;
            MPI_Comm_dup(half, &hd);
            no_crosstalk(half, hd, "half/dup of half");
            MPI_Comm_free(&hd);
            MPI_Comm_free(&half);
        }
    } else {
        PX_CHECK(half == MPI_COMM_NULL, "MPI_UNDEFINED color gave a communicator");
    }

    /* Many dup/free cycles: context ids must be recycled without confusion. */
    for (int i = 0; i < 64; i++) {
        MPI_Comm c;
        int v = i, w = -1;
        MPI_Comm_dup(i % 2 ? dup : MPI_COMM_WORLD, &c);
        MPI_Sendrecv(&v, 1, MPI_INT, (me + 1) % n, 3, &w, 1, MPI_INT, (me + n - 1) % n, 3, c,
                     MPI_STATUS_IGNORE);
        PX_CHECK(w == i, "dup cycle %d got %d", i, w);
        MPI_Comm_free(&c);
        PX_CHECK(c == MPI_COMM_NULL, "Comm_free did not null the handle");
    }

    /* Barrier on each communicator, then free; world still works. */
    MPI_Barrier(dup2);
    MPI_Barrier(split);
    MPI_Comm_free(&dup2);
    MPI_Comm_free(&split);
    MPI_Comm_free(&rsplit);
    {
        int total = -1;
        MPI_Allreduce(&me, &total, 1, MPI_INT, MPI_SUM, dup);
        PX_CHECK(total == n * (n - 1) / 2, "Allreduce on dup after frees: %d", total);
    }
    MPI_Comm_free(&dup);
    return px_test_finish("dup/split/compare/group/free, 64 dup-free cycles");
}
