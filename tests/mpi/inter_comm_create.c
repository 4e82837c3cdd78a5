/* MPI_Comm_create, MPI_Comm_split and MPI_Comm_dup on an inter-communicator
 * between uneven groups of MPI_COMM_WORLD (group A: world ranks with
 * rank % 3 == 0, group B: the others), MPI-3.1 §6.4.2. Each result is
 * checked against the expected local and remote members (as world ranks),
 * then used for point-to-point traffic and a collective. Needs np >= 2. */
#include "px_test.h"

static int me, np, ina;

/* World ranks of group A (a = 1) or B in order. */
static int members(int a, int *w)
{
    int n = 0;
    for (int r = 0; r < np; r++)
        if ((r % 3 == 0) == a)
            w[n++] = r;
    return n;
}

/* Checks that ic joins exactly `loc` (me included) with `rem`, then that
 * messages and an Allreduce cross it. */
static void check_inter(MPI_Comm ic, const int *loc, int nl, const int *rem, int nr,
                        const char *what)
{
    int flag = 0, s = -1, rs = -1, r = -1;
    MPI_Comm_test_inter(ic, &flag);
    PX_CHECK(flag, "%s: not an inter-communicator", what);
    MPI_Comm_size(ic, &s);
    MPI_Comm_rank(ic, &r);
    MPI_Comm_remote_size(ic, &rs);
    PX_CHECK(s == nl && rs == nr, "%s: sizes %d+%d, want %d+%d", what, s, rs, nl, nr);
    if (s != nl || rs != nr)
        return;
    PX_CHECK(r >= 0 && r < nl && loc[r] == me, "%s: rank %d", what, r);
    MPI_Group wg, lg, rg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(ic, &lg);
    MPI_Comm_remote_group(ic, &rg);
    int idx[64], wr[64];
    for (int i = 0; i < 64; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(lg, nl, idx, wg, wr);
    for (int i = 0; i < nl; i++)
        PX_CHECK(wr[i] == loc[i], "%s: local %d is world %d, want %d", what, i, wr[i], loc[i]);
    MPI_Group_translate_ranks(rg, nr, idx, wg, wr);
    for (int i = 0; i < nr; i++)
        PX_CHECK(wr[i] == rem[i], "%s: remote %d is world %d, want %d", what, i, wr[i], rem[i]);
    MPI_Group_free(&wg);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);

    /* every local member sends its world rank to every remote member */
    int in[64];
    MPI_Request rq[128];
    for (int i = 0; i < nr; i++) {
        MPI_Irecv(&in[i], 1, MPI_INT, i, 5, ic, &rq[i]);
        MPI_Isend(&me, 1, MPI_INT, i, 5, ic, &rq[nr + i]);
    }
    PX_MPI(MPI_Waitall(2 * nr, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < nr; i++)
        PX_CHECK(in[i] == rem[i], "%s: message from remote %d carries %d, want %d", what, i, in[i],
                 rem[i]);
    int sum = -1, want = 0;
    for (int i = 0; i < nr; i++)
        want += rem[i];
    PX_MPI(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, ic));
    PX_CHECK(sum == want, "%s: allreduce %d, want %d", what, sum, want);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "inter_comm_create");
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2)
        return px_test_skip("needs at least 2 ranks");
    if (np > 64)
        return px_test_skip("at most 64 ranks");
    ina = me % 3 == 0;
    int lw[64], rw[64];
    int ln = members(ina, lw), rn = members(!ina, rw);
    MPI_Comm local, ic;
    PX_MPI(MPI_Comm_split(MPI_COMM_WORLD, ina, me, &local));
    PX_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, ina ? 1 : 0, 9, &ic));
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    check_inter(ic, lw, ln, rw, rn, "intercomm");

    /* Comm_dup */
    MPI_Comm dup;
    PX_MPI(MPI_Comm_dup(ic, &dup));
    check_inter(dup, lw, ln, rw, rn, "dup");
    int cmp = -1;
    MPI_Comm_compare(ic, dup, &cmp);
    PX_CHECK(cmp == MPI_CONGRUENT, "compare(ic, dup) = %d", cmp);
    MPI_Comm_free(&dup);

    /* Comm_create: A keeps its even local ranks, B its local ranks >= 1 (or
     * all when alone), each listed in reverse order */
    MPI_Group lg, sub;
    MPI_Comm_group(ic, &lg);
    int keepA[64], keepB[64], na = 0, nbk = 0, sel[64], ns = 0;
    int allA[64], allB[64];
    int nA = members(1, allA), nB = members(0, allB);
    for (int i = nA - 1; i >= 0; i--)
        if (i % 2 == 0)
            keepA[na++] = allA[i];
    for (int i = nB - 1; i >= 0; i--)
        if (i >= 1 || nB == 1)
            keepB[nbk++] = allB[i];
    if (ina) {
        for (int i = ln - 1; i >= 0; i--)
            if (i % 2 == 0)
                sel[ns++] = i;
    } else {
        for (int i = ln - 1; i >= 0; i--)
            if (i >= 1 || ln == 1)
                sel[ns++] = i;
    }
    MPI_Group_incl(lg, ns, sel, &sub);
    MPI_Comm nc = MPI_COMM_NULL;
    PX_MPI(MPI_Comm_create(ic, sub, &nc));
    const int *mine = ina ? keepA : keepB, *theirs = ina ? keepB : keepA;
    int nmine = ina ? na : nbk, ntheirs = ina ? nbk : na, in = 0;
    for (int i = 0; i < nmine; i++)
        in |= mine[i] == me;
    if (in) {
        PX_CHECK(nc != MPI_COMM_NULL, "Comm_create: member got MPI_COMM_NULL");
        if (nc != MPI_COMM_NULL) {
            check_inter(nc, mine, nmine, theirs, ntheirs, "create");
            MPI_Comm_free(&nc);
        }
    } else {
        PX_CHECK(nc == MPI_COMM_NULL, "Comm_create: non-member got a communicator");
    }
    MPI_Group_free(&sub);

    /* Comm_create where group B gives the empty group: null everywhere */
    nc = MPI_COMM_NULL;
    PX_MPI(MPI_Comm_create(ic, ina ? lg : MPI_GROUP_EMPTY, &nc));
    PX_CHECK(nc == MPI_COMM_NULL, "Comm_create with one empty side gave a communicator");

    /* Comm_create with a group outside the local group is an error */
    MPI_Group wg, other;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, 1, &rw[0], &other);
    int rc = MPI_Comm_create(ic, other, &nc), cls = 0;
    MPI_Error_class(rc, &cls);
    PX_CHECK(cls == MPI_ERR_GROUP, "Comm_create with a remote member: class %d", cls);
    MPI_Group_free(&other);
    MPI_Group_free(&wg);
    MPI_Group_free(&lg);

    /* Comm_split: color = world rank % 2, key = -world rank (reverse order);
     * world rank 1 opts out */
    int color = me == 1 ? MPI_UNDEFINED : me % 2;
    PX_MPI(MPI_Comm_split(ic, color, -me, &nc));
    if (color == MPI_UNDEFINED) {
        PX_CHECK(nc == MPI_COMM_NULL, "split: undefined color got a communicator");
    } else {
        int sl[64], sr[64], nsl = 0, nsr = 0;
        for (int i = ln - 1; i >= 0; i--)
            if (lw[i] != 1 && lw[i] % 2 == color)
                sl[nsl++] = lw[i];
        for (int i = rn - 1; i >= 0; i--)
            if (rw[i] != 1 && rw[i] % 2 == color)
                sr[nsr++] = rw[i];
        if (nsr == 0) {
            PX_CHECK(nc == MPI_COMM_NULL, "split: no remote member of color %d, yet a comm", color);
        } else {
            PX_CHECK(nc != MPI_COMM_NULL, "split: color %d gave MPI_COMM_NULL", color);
            if (nc != MPI_COMM_NULL) {
                check_inter(nc, sl, nsl, sr, nsr, "split");
                MPI_Comm_free(&nc);
            }
        }
    }
    /* the parent still works after all that */
    check_inter(ic, lw, ln, rw, rn, "intercomm after");
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    return px_test_finish("groups %d+%d: dup, create, create with an empty side, split",
                          ina ? ln : rn, ina ? rn : ln);
}
