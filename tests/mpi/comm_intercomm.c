/* Inter-communicators between the two halves of MPI_COMM_WORLD (lower half
 * world ranks 0..h-1, upper half h..n-1, h = n/2): Comm_test_inter, sizes,
 * local and remote groups; point-to-point across with specific sources and
 * MPI_ANY_SOURCE (status.MPI_SOURCE is the sender's rank in its own group),
 * probes, Sendrecv, MPI_PROC_NULL and an invalid remote rank; leaders other
 * than rank 0 and a duplicated peer communicator; Comm_dup and Comm_compare
 * of inter-communicators; Intercomm_merge with every combination of `high`
 * checked against the expected rank order. Needs np >= 2. */
#include "px_test.h"

static int me, n, h, lower, lsize, rsize, lrank;

/* World rank of remote rank r. */
static int remote_world(int r) { return lower ? h + r : r; }
static int local_world(int r) { return lower ? r : h + r; }

static void check_structure(MPI_Comm ic, const char *what)
{
    int flag = -1, s = -1, rs = -1, r = -1;
    MPI_Comm_test_inter(ic, &flag);
    PX_CHECK(flag == 1, "%s: test_inter = %d", what, flag);
    MPI_Comm_size(ic, &s);
    MPI_Comm_rank(ic, &r);
    PX_MPI(MPI_Comm_remote_size(ic, &rs));
    PX_CHECK(s == lsize && rs == rsize && r == lrank, "%s: size %d remote %d rank %d", what, s, rs,
             r);

    MPI_Group wg, lg, rg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(ic, &lg);
    PX_MPI(MPI_Comm_remote_group(ic, &rg));
    int gs = -1, gr = -2;
    MPI_Group_size(rg, &gs);
    MPI_Group_rank(rg, &gr);
    PX_CHECK(gs == rsize && gr == MPI_UNDEFINED, "%s: remote group size %d, my rank %d", what, gs,
             gr);
    MPI_Group_rank(lg, &gr);
    PX_CHECK(gr == lrank, "%s: local group rank %d", what, gr);
    int idx[64], wr[64];
    for (int i = 0; i < 64; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(rg, rsize < 64 ? rsize : 64, idx, wg, wr);
    for (int i = 0; i < rsize && i < 64; i++)
        PX_CHECK(wr[i] == remote_world(i), "%s: remote %d is world %d", what, i, wr[i]);
    MPI_Group_translate_ranks(lg, lsize < 64 ? lsize : 64, idx, wg, wr);
    for (int i = 0; i < lsize && i < 64; i++)
        PX_CHECK(wr[i] == local_world(i), "%s: local %d is world %d", what, i, wr[i]);
    MPI_Group_free(&wg);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
}

/* Every local rank sends one message to every remote rank. */
static void traffic(MPI_Comm ic, int salt, const char *what)
{
    int *out = malloc(sizeof(int) * (size_t)rsize), *in = malloc(sizeof(int) * (size_t)rsize);
    int *seen = calloc((size_t)rsize, sizeof(int));
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)rsize);
    MPI_Status st;

    /* round 1: MPI_ANY_SOURCE on the receiving side */
    for (int j = 0; j < rsize; j++) {
        out[j] = salt + me * 1000 + j;
        MPI_Isend(&out[j], 1, MPI_INT, j, 20 + (lrank % 3), ic, &rq[j]);
    }
    for (int k = 0; k < rsize; k++) {
        int v = -1, cnt = -1;
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, ic, &st);
        MPI_Get_count(&st, MPI_INT, &cnt);
        int src = st.MPI_SOURCE;
        PX_CHECK(src >= 0 && src < rsize, "%s: MPI_SOURCE %d out of range", what, src);
        if (src < 0 || src >= rsize)
            continue;
        seen[src]++;
        PX_CHECK(v == salt + remote_world(src) * 1000 + lrank,
                 "%s: from remote %d got %d, expected %d", what, src, v,
                 salt + remote_world(src) * 1000 + lrank);
        PX_CHECK(st.MPI_TAG == 20 + (src % 3) && cnt == 1, "%s: tag %d count %d", what, st.MPI_TAG,
                 cnt);
    }
    for (int j = 0; j < rsize; j++)
        PX_CHECK(seen[j] == 1, "%s: %d messages from remote %d", what, seen[j], j);
    MPI_Waitall(rsize, rq, MPI_STATUSES_IGNORE);
    /* round 1 received with MPI_ANY_TAG: no later message may overtake it */
    MPI_Barrier(MPI_COMM_WORLD);

    /* round 2: specific sources, posted in reverse order */
    for (int j = rsize - 1; j >= 0; j--)
        MPI_Irecv(&in[j], 1, MPI_INT, j, 30, ic, &rq[j]);
    for (int j = 0; j < rsize; j++) {
        out[j] = -(salt + me * 1000 + j);
        MPI_Send(&out[j], 1, MPI_INT, j, 30, ic);
    }
    for (int j = 0; j < rsize; j++) {
        MPI_Wait(&rq[j], &st);
        PX_CHECK(st.MPI_SOURCE == j && st.MPI_TAG == 30, "%s: status source %d tag %d", what,
                 st.MPI_SOURCE, st.MPI_TAG);
        PX_CHECK(in[j] == -(salt + remote_world(j) * 1000 + lrank),
                 "%s: specific receive from %d got %d", what, j, in[j]);
    }

    /* round 3: probe with MPI_ANY_SOURCE, then Sendrecv between partners */
    int partner = lrank; /* pairs local rank i with remote rank i */
    if (lrank < rsize) {
        int v = salt + me, g = -1;
        MPI_Send(&v, 1, MPI_INT, partner, 40, ic);
        MPI_Probe(MPI_ANY_SOURCE, 40, ic, &st);
        PX_CHECK(st.MPI_SOURCE == lrank, "%s: probe source %d, expected %d", what, st.MPI_SOURCE,
                 lrank);
        MPI_Recv(&g, 1, MPI_INT, st.MPI_SOURCE, 40, ic, MPI_STATUS_IGNORE);
        PX_CHECK(g == salt + remote_world(lrank), "%s: probed message %d", what, g);
        int a = me, b = -1;
        MPI_Sendrecv(&a, 1, MPI_INT, partner, 41, &b, 1, MPI_INT, partner, 41, ic, &st);
        PX_CHECK(b == remote_world(partner) && st.MPI_SOURCE == partner,
                 "%s: sendrecv got %d from %d", what, b, st.MPI_SOURCE);
        /* a large message (rendezvous on most transports) */
        size_t big = (size_t)1 << 20;
        char *sb = malloc(big), *rb = malloc(big);
        px_fill(sb, big, (uint64_t)(salt + me));
        MPI_Sendrecv(sb, (int)big, MPI_BYTE, partner, 42, rb, (int)big, MPI_BYTE, MPI_ANY_SOURCE,
                     42, ic, &st);
        size_t bad = px_verify(rb, big, (uint64_t)(salt + remote_world(partner)));
        PX_CHECK(bad == big && st.MPI_SOURCE == partner, "%s: large message bad at %zu, from %d",
                 what, bad, st.MPI_SOURCE);
        free(sb);
        free(rb);
    }
    free(out);
    free(in);
    free(seen);
    free(rq);
}

static void check_merge(MPI_Comm ic, int high_lower, int high_upper, const char *what)
{
    MPI_Comm m;
    int mine_high = lower ? high_lower : high_upper;
    PX_MPI(MPI_Intercomm_merge(ic, mine_high, &m));
    int r = -1, s = -1, flag = -1;
    MPI_Comm_rank(m, &r);
    MPI_Comm_size(m, &s);
    MPI_Comm_test_inter(m, &flag);
    PX_CHECK(s == n && flag == 0, "%s: size %d inter %d", what, s, flag);
    int *all = malloc(sizeof(int) * (size_t)n);
    MPI_Allgather(&me, 1, MPI_INT, all, 1, MPI_INT, m);
    PX_CHECK(all[r] == me, "%s: my rank %d holds world %d", what, r, all[r]);
    int lower_first;
    if (high_lower != high_upper)
        lower_first = !high_lower;
    else /* either order, but one group entirely before the other */
        lower_first = all[0] == 0;
    for (int i = 0; i < n; i++) {
        int expect = lower_first ? i : (i < n - h ? h + i : i - (n - h));
        PX_CHECK(all[i] == expect, "%s: merged rank %d is world %d, expected %d", what, i, all[i],
                 expect);
    }
    int expect_rank = lower_first ? me : (lower ? (n - h) + me : me - h);
    PX_CHECK(r == expect_rank, "%s: merged rank %d, expected %d", what, r, expect_rank);
    /* the merged communicator works for point-to-point and collectives */
    int sum = 0;
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, m);
    PX_CHECK(sum == n * (n - 1) / 2, "%s: allreduce %d", what, sum);
    int right = (r + 1) % n, left = (r + n - 1) % n, got = -1;
    MPI_Sendrecv(&me, 1, MPI_INT, right, 3, &got, 1, MPI_INT, left, 3, m, MPI_STATUS_IGNORE);
    PX_CHECK(got == all[left], "%s: ring got %d, expected %d", what, got, all[left]);
    free(all);
    MPI_Comm_free(&m);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "comm_intercomm");
    me = px_test_rank;
    n = px_test_size;
    if (n < 2)
        return px_test_skip("needs at least 2 ranks");
    h = n / 2;
    lower = me < h;
    lsize = lower ? h : n - h;
    rsize = n - lsize;

    MPI_Comm local, ic, ic2, icd;
    MPI_Comm_split(MPI_COMM_WORLD, lower, me, &local);
    MPI_Comm_rank(local, &lrank);
    int flag = -1;
    MPI_Comm_test_inter(local, &flag);
    PX_CHECK(flag == 0, "intra-communicator: test_inter = %d", flag);

    /* leaders: local rank 0 of each half, world ranks 0 and h */
    PX_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, lower ? h : 0, 123, &ic));
    check_structure(ic, "intercomm");
    traffic(ic, 100000, "intercomm");

    /* leaders: the last local rank, through a duplicate of the world */
    MPI_Comm peer;
    MPI_Comm_dup(MPI_COMM_WORLD, &peer);
    PX_MPI(MPI_Intercomm_create(local, lsize - 1, peer, lower ? n - 1 : h - 1, 7, &ic2));
    check_structure(ic2, "intercomm (last leaders)");
    traffic(ic2, 200000, "intercomm (last leaders)");

    /* traffic on ic and ic2 with the same tags does not cross */
    {
        int a = 1, b = 2, ga = -1, gb = -1, dst = lrank;
        MPI_Request rq[4];
        if (lrank < rsize) {
            MPI_Irecv(&ga, 1, MPI_INT, lrank, 5, ic, &rq[0]);
            MPI_Irecv(&gb, 1, MPI_INT, lrank, 5, ic2, &rq[1]);
            MPI_Isend(&b, 1, MPI_INT, dst, 5, ic2, &rq[2]);
            MPI_Isend(&a, 1, MPI_INT, dst, 5, ic, &rq[3]);
            MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
            PX_CHECK(ga == 1 && gb == 2, "crosstalk: ic got %d, ic2 got %d", ga, gb);
        }
    }

    /* dup and compare */
    int res = -1;
    PX_MPI(MPI_Comm_dup(ic, &icd));
    check_structure(icd, "dup of intercomm");
    MPI_Comm_compare(ic, ic, &res);
    PX_CHECK(res == MPI_IDENT, "compare(ic, ic) = %d", res);
    MPI_Comm_compare(ic, icd, &res);
    PX_CHECK(res == MPI_CONGRUENT, "compare(ic, dup) = %d", res);
    MPI_Comm_compare(ic, ic2, &res);
    PX_CHECK(res == MPI_CONGRUENT, "compare(ic, ic2) = %d", res);
    MPI_Comm_compare(ic, MPI_COMM_WORLD, &res);
    PX_CHECK(res == MPI_UNEQUAL, "compare(ic, world) = %d", res);
    MPI_Comm_compare(ic, local, &res);
    PX_CHECK(res == MPI_UNEQUAL, "compare(ic, local) = %d", res);
    traffic(icd, 300000, "dup of intercomm");

    /* MPI_PROC_NULL and an invalid remote rank */
    {
        int v = 0, cls = -1;
        MPI_Status st;
        MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 1, ic);
        MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, ic, &st);
        PX_CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL source %d", st.MPI_SOURCE);
        MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
        int rc = MPI_Send(&v, 1, MPI_INT, rsize, 1, ic);
        MPI_Error_class(rc, &cls);
        PX_CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RANK, "send to remote rank %d: class %d",
                 rsize, cls);
        MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL);

        /* a local leader out of range */
        MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
        MPI_Comm bad = MPI_COMM_NULL;
        rc = MPI_Intercomm_create(local, lsize, MPI_COMM_WORLD, 0, 9, &bad);
        MPI_Error_class(rc, &cls);
        PX_CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RANK, "local leader %d: class %d", lsize, cls);
        MPI_Comm_set_errhandler(local, MPI_ERRORS_ARE_FATAL);
    }

    /* merges: high flags (lower, upper) */
    check_merge(ic, 0, 1, "merge(0,1)");
    check_merge(ic, 1, 0, "merge(1,0)");
    check_merge(ic2, 0, 0, "merge(0,0)");
    check_merge(icd, 1, 1, "merge(1,1)");

    /* split by local rank modulo the smaller side's size (every color has
     * members on both sides: MPICH 4.0 hangs otherwise), reversed by key:
     * each side keeps its members of my color in descending world order */
    {
        MPI_Comm sp;
        int ncol = h < n - h ? h : n - h;
        int color = lrank % ncol;
        PX_MPI(MPI_Comm_split(ic, color, -me, &sp));
        int ln = 0, rn = 0, lpos = 0, rw[64];
        for (int w = n - 1; w >= 0; w--) {
            if ((w < h ? w : w - h) % ncol != color)
                continue;
            if ((w < h) == lower) {
                if (w == me)
                    lpos = ln;
                ln++;
            } else {
                rw[rn++] = w;
            }
        }
        if (rn == 0) {
            PX_CHECK(sp == MPI_COMM_NULL, "split: no remote member of color %d, yet a comm", color);
        } else {
            PX_REQUIRE(sp != MPI_COMM_NULL, "split: MPI_COMM_NULL for color %d", color);
            int s = -1, r = -1, rs = -1, fl = 0;
            MPI_Comm_test_inter(sp, &fl);
            MPI_Comm_size(sp, &s);
            MPI_Comm_rank(sp, &r);
            MPI_Comm_remote_size(sp, &rs);
            PX_CHECK(fl && s == ln && r == lpos && rs == rn,
                     "split: inter %d size %d rank %d remote %d, expected %d %d %d", fl, s, r, rs,
                     ln, lpos, rn);
            /* local rank r talks to remote rank r % rn; the message names
             * the sender so the mapping of both groups is checked */
            int got = -1, cnt = 0;
            MPI_Request rq;
            MPI_Isend(&me, 1, MPI_INT, r % rn, 8, sp, &rq);
            for (int k = 0; k < rn; k++) /* remote ranks sending to me */
                if (k % ln == r)
                    cnt++;
            for (int k = 0; k < cnt; k++) {
                MPI_Status st;
                MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 8, sp, &st);
                PX_CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rn && got == rw[st.MPI_SOURCE] &&
                             st.MPI_SOURCE % ln == r,
                         "split: got %d from remote %d", got, st.MPI_SOURCE);
            }
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            MPI_Comm_free(&sp);
        }
    }

    /* create/dup/free cycles keep working and keep contexts apart */
    for (int cyc = 0; cyc < 20; cyc++) {
        MPI_Comm x, xd;
        PX_MPI(MPI_Intercomm_create(local, 0, peer, lower ? h : 0, 1000 + cyc, &x));
        PX_MPI(MPI_Comm_dup(x, &xd));
        if (lrank < rsize) {
            int a = cyc, b = -1, c2 = 100 + cyc, d = -1;
            MPI_Request rq[2];
            MPI_Irecv(&b, 1, MPI_INT, lrank, 0, x, &rq[0]);
            MPI_Irecv(&d, 1, MPI_INT, lrank, 0, xd, &rq[1]);
            MPI_Send(&c2, 1, MPI_INT, lrank, 0, xd);
            MPI_Send(&a, 1, MPI_INT, lrank, 0, x);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            PX_CHECK(b == cyc && d == 100 + cyc, "cycle %d: got %d and %d", cyc, b, d);
        }
        MPI_Comm_free(&xd);
        MPI_Comm_free(&x);
    }

    MPI_Comm_free(&icd);
    MPI_Comm_free(&ic2);
    MPI_Comm_free(&ic);
    PX_CHECK(ic == MPI_COMM_NULL, "freed intercomm handle not reset");
    MPI_Comm_free(&peer);
    MPI_Comm_free(&local);
    return px_test_finish("halves %d+%d: 3 inter-communicators, traffic, split, 4 merges", h,
                          n - h);
}
