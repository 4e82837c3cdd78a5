/* MPI-4.0 sessions without MPI_Init: the process sets (names, mpi://WORLD
 * and mpi://SELF, their "mpi_size"), a communicator made from the WORLD
 * set (allreduce and a ring of messages, checked), two sessions at once,
 * communicators made concurrently from two overlapping halves under two
 * string tags (kept apart), an inter-communicator made from two disjoint
 * halves (messages both ways), the session's info and error handlers, and
 * the error classes of bad arguments, mpix://SHARED against split_type,
 * and new sessions after the last one ended. MPI_Initialized and
 * MPI_Finalized stay 0 all along: they speak of the world model only. */
#include "px_test.h"

static MPI_Session handler_session = MPI_SESSION_NULL;
static int handler_code, handler_calls;

static void session_handler(MPI_Session *s, int *code, ...)
{
    handler_session = *s;
    handler_code = *code;
    handler_calls++;
}

/* A group of the world ranks lo..hi of the WORLD group w. */
static MPI_Group range_group(MPI_Group w, int lo, int hi)
{
    int r[1][3] = {{lo, hi, 1}};
    MPI_Group g;
    PX_MPI(MPI_Group_range_incl(w, 1, r, &g));
    return g;
}

/* Sum over comm of v, checked against want. */
static void check_sum(MPI_Comm comm, int v, int want, const char *what)
{
    int sum = -1;
    PX_MPI(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm));
    PX_CHECK(sum == want, "%s: allreduce gave %d, want %d", what, sum, want);
}

int main(void)
{
    int flag = -1;
    MPI_Initialized(&flag);
    PX_CHECK(flag == 0, "MPI_Initialized is %d before anything", flag);

    /* a thread level that is none: MPI_ERR_INFO_VALUE, no session */
    MPI_Info sinfo;
    MPI_Info_create(&sinfo);
    MPI_Info_set(sinfo, "thread_level", "MPI_THREAD_MULTPLE");
    MPI_Session s = MPI_SESSION_NULL;
    int icls = -1, rc = MPI_Session_init(sinfo, MPI_ERRORS_RETURN, &s);
    MPI_Error_class(rc, &icls);
    PX_CHECK(icls == MPI_ERR_INFO_VALUE && s == MPI_SESSION_NULL,
             "thread_level MPI_THREAD_MULTPLE: class %d, session 0x%x", icls, (unsigned)s);
    /* a session asking for MPI_THREAD_FUNNELED, errors returned */
    MPI_Info_set(sinfo, "thread_level", "MPI_THREAD_FUNNELED");
    rc = MPI_Session_init(sinfo, MPI_ERRORS_RETURN, &s);
    MPI_Info_free(&sinfo);
    if (rc != MPI_SUCCESS || s == MPI_SESSION_NULL) {
        fprintf(stderr, "FAIL sessions: MPI_Session_init returned %d\n", rc);
        return 1;
    }
    MPI_Initialized(&flag);
    PX_CHECK(flag == 0, "MPI_Initialized is %d with a session open", flag);

    /* the process sets */
    int npsets = -1, seen_world = 0, seen_self = 0;
    PX_MPI(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &npsets));
    PX_CHECK(npsets >= 2, "%d process sets", npsets);
    for (int i = 0; i < npsets; i++) {
        int len = 0;
        char name[MPI_MAX_PSET_NAME_LEN];
        PX_MPI(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        PX_CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "process set %d: length %d", i, len);
        memset(name, 'x', sizeof(name));
        PX_MPI(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        PX_CHECK((int)strlen(name) == len - 1, "process set %d: \"%s\" is not %d long", i, name,
                 len - 1);
        seen_world += !strcmp(name, "mpi://WORLD");
        seen_self += !strcmp(name, "mpi://SELF");
    }
    PX_CHECK(seen_world == 1 && seen_self == 1, "mpi://WORLD seen %d times, mpi://SELF %d",
             seen_world, seen_self);

    MPI_Group wgroup, sgroup;
    PX_MPI(MPI_Group_from_session_pset(s, "mpi://WORLD", &wgroup));
    PX_MPI(MPI_Group_from_session_pset(s, "mpi://SELF", &sgroup));
    int n = -1, me = -1, ssize = -1, srank = -1;
    MPI_Group_size(wgroup, &n);
    MPI_Group_rank(wgroup, &me);
    MPI_Group_size(sgroup, &ssize);
    MPI_Group_rank(sgroup, &srank);
    px_test_name = "sessions";
    px_test_rank = me;
    px_test_size = n;
    PX_REQUIRE(n >= 1 && me >= 0 && me < n, "WORLD group: size %d, rank %d", n, me);
    PX_CHECK(ssize == 1 && srank == 0, "SELF group: size %d, rank %d", ssize, srank);
    int tr = -1;
    MPI_Group_translate_ranks(sgroup, 1, (int[]){0}, wgroup, &tr);
    PX_CHECK(tr == me, "SELF's process is rank %d of WORLD, want %d", tr, me);

    /* "mpi_size" of each set is its group's size */
    const char *names[2] = {"mpi://WORLD", "mpi://SELF"};
    int sizes[2] = {n, 1};
    for (int i = 0; i < 2; i++) {
        MPI_Info pi;
        char v[32] = "";
        int vflag = 0;
        PX_MPI(MPI_Session_get_pset_info(s, names[i], &pi));
        PX_MPI(MPI_Info_get(pi, "mpi_size", (int)sizeof(v) - 1, v, &vflag));
        PX_CHECK(vflag && atoi(v) == sizes[i], "%s: mpi_size \"%s\" (flag %d), want %d", names[i],
                 v, vflag, sizes[i]);
        MPI_Info_free(&pi);
    }

    /* the session's info: the thread level it provides */
    MPI_Info used;
    char lv[64] = "";
    int lflag = 0;
    PX_MPI(MPI_Session_get_info(s, &used));
    PX_MPI(MPI_Info_get(used, "thread_level", (int)sizeof(lv) - 1, lv, &lflag));
    PX_CHECK(lflag && !strcmp(lv, "MPI_THREAD_FUNNELED"), "thread_level \"%s\" (flag %d)", lv,
             lflag);
    MPI_Info_free(&used);

    /* a communicator over WORLD: allreduce and a ring */
    MPI_Comm wcomm = MPI_COMM_NULL;
    PX_MPI(MPI_Comm_create_from_group(wgroup, "org.plexus.test.world", MPI_INFO_NULL,
                                      MPI_ERRORS_RETURN, &wcomm));
    int cs = -1, cr = -1;
    MPI_Comm_size(wcomm, &cs);
    MPI_Comm_rank(wcomm, &cr);
    PX_REQUIRE(cs == n && cr == me, "WORLD communicator: size %d rank %d, want %d %d", cs, cr, n,
               me);
    MPI_Errhandler ceh = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(wcomm, &ceh);
    PX_CHECK(ceh == MPI_ERRORS_RETURN, "the communicator's handler is 0x%x", (unsigned)ceh);
    check_sum(wcomm, me + 1, n * (n + 1) / 2, "WORLD");
    enum { N = 1000 };
    static int sbuf[N], rbuf[N];
    int right = (me + 1) % n, left = (me + n - 1) % n;
    for (int i = 0; i < N; i++) {
        sbuf[i] = me * 7919 + i;
        rbuf[i] = -1;
    }
    MPI_Status st;
    PX_MPI(MPI_Sendrecv(sbuf, N, MPI_INT, right, 5, rbuf, N, MPI_INT, left, 5, wcomm, &st));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += rbuf[i] != left * 7919 + i;
    PX_CHECK(!bad && st.MPI_SOURCE == left && st.MPI_TAG == 5,
             "ring: %d wrong values, source %d tag %d", bad, st.MPI_SOURCE, st.MPI_TAG);

    /* a second session at once, with a handler of the program's own */
    MPI_Errhandler myeh;
    PX_MPI(MPI_Session_create_errhandler(session_handler, &myeh));
    MPI_Session s2 = MPI_SESSION_NULL;
    PX_MPI(MPI_Session_init(MPI_INFO_NULL, myeh, &s2));
    PX_CHECK(s2 != s && s2 != MPI_SESSION_NULL, "second session 0x%x, first 0x%x", (unsigned)s2,
             (unsigned)s);
    MPI_Errhandler geh = MPI_ERRHANDLER_NULL;
    PX_MPI(MPI_Session_get_errhandler(s2, &geh));
    PX_CHECK(geh == myeh, "second session's handler 0x%x, want 0x%x", (unsigned)geh,
             (unsigned)myeh);
    PX_MPI(MPI_Session_call_errhandler(s2, MPI_ERR_OTHER));
    PX_CHECK(handler_calls == 1 && handler_session == s2 && handler_code == MPI_ERR_OTHER,
             "handler called %d times, session 0x%x code %d", handler_calls,
             (unsigned)handler_session, handler_code);
    /* errors of the session go to it: an unknown process set */
    MPI_Group g2 = MPI_GROUP_NULL;
    int rc2 = MPI_Group_from_session_pset(s2, "mpi://NO-SUCH-SET", &g2);
    int cls = -1;
    MPI_Error_class(rc2, &cls);
    PX_CHECK(handler_calls == 2 && handler_session == s2 && cls == MPI_ERR_ARG,
             "unknown set: handler called %d times, class %d", handler_calls, cls);
    PX_MPI(MPI_Group_from_session_pset(s2, "mpi://SELF", &g2));
    MPI_Comm selfc = MPI_COMM_NULL;
    PX_MPI(MPI_Comm_create_from_group(g2, "org.plexus.test.self", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                      &selfc));
    MPI_Comm_size(selfc, &cs);
    PX_CHECK(cs == 1, "SELF communicator of size %d", cs);
    check_sum(selfc, me + 3, me + 3, "SELF");
    MPI_Comm_free(&selfc);
    MPI_Group_free(&g2);

    /* two overlapping halves, concurrently, under two string tags: a
     * process in both creates a's first, as every process does */
    int alo = 0, ahi = n / 2, blo = (n - 1) / 2, bhi = n - 1;
    int ina = me >= alo && me <= ahi, inb = me >= blo && me <= bhi;
    MPI_Group ga = range_group(wgroup, alo, ahi), gb = range_group(wgroup, blo, bhi);
    MPI_Comm ca = MPI_COMM_NULL, cb = MPI_COMM_NULL;
    if (ina)
        PX_MPI(MPI_Comm_create_from_group(ga, "org.plexus.test.half-a", MPI_INFO_NULL,
                                          MPI_ERRORS_RETURN, &ca));
    if (inb)
        PX_MPI(MPI_Comm_create_from_group(gb, "org.plexus.test.half-b", MPI_INFO_NULL,
                                          MPI_ERRORS_RETURN, &cb));
    /* messages on one never match receives on the other: a ring on each,
     * both sent first, received in the other order */
    MPI_Request q2[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int va = 1000 + me, vb = 2000 + me, a_in = -1, b_in = -1, ra = 0, sa = 1, rb = 0, sb = 1;
    if (ina) {
        MPI_Comm_rank(ca, &ra);
        MPI_Comm_size(ca, &sa);
        PX_MPI(MPI_Isend(&va, 1, MPI_INT, (ra + 1) % sa, 9, ca, &q2[0]));
    }
    if (inb) {
        MPI_Comm_rank(cb, &rb);
        MPI_Comm_size(cb, &sb);
        PX_MPI(MPI_Isend(&vb, 1, MPI_INT, (rb + 1) % sb, 9, cb, &q2[1]));
        PX_MPI(MPI_Recv(&b_in, 1, MPI_INT, (rb + sb - 1) % sb, 9, cb, MPI_STATUS_IGNORE));
        PX_CHECK(b_in == 2000 + blo + (rb + sb - 1) % sb, "half b: got %d", b_in);
    }
    if (ina) {
        PX_MPI(MPI_Recv(&a_in, 1, MPI_INT, (ra + sa - 1) % sa, 9, ca, MPI_STATUS_IGNORE));
        PX_CHECK(a_in == 1000 + alo + (ra + sa - 1) % sa, "half a: got %d", a_in);
    }
    PX_MPI(MPI_Waitall(2, q2, MPI_STATUSES_IGNORE));
    if (ina) {
        int sz = -1;
        MPI_Comm_size(ca, &sz);
        PX_CHECK(sz == ahi - alo + 1, "half a of size %d", sz);
        check_sum(ca, me, (alo + ahi) * (ahi - alo + 1) / 2, "half a");
    }
    if (inb) {
        int sz = -1;
        MPI_Comm_size(cb, &sz);
        PX_CHECK(sz == bhi - blo + 1, "half b of size %d", sz);
        check_sum(cb, 10 * me, 10 * (blo + bhi) * (bhi - blo + 1) / 2, "half b");
    }

    /* an inter-communicator between the lower and the upper half */
    int inter_done = 0;
    if (n >= 2) {
        int h = n / 2, low = me < h;
        MPI_Group lo = range_group(wgroup, 0, h - 1), hi = range_group(wgroup, h, n - 1);
        MPI_Comm ic = MPI_COMM_NULL;
        PX_MPI(MPI_Intercomm_create_from_groups(low ? lo : hi, 0, low ? hi : lo, 0,
                                                "org.plexus.test.inter", MPI_INFO_NULL,
                                                MPI_ERRORS_RETURN, &ic));
        int inter = 0, rsize = -1, lrank = -1, lsize = -1;
        MPI_Comm_test_inter(ic, &inter);
        MPI_Comm_remote_size(ic, &rsize);
        MPI_Comm_rank(ic, &lrank);
        MPI_Comm_size(ic, &lsize);
        int want_l = low ? h : n - h, want_r = low ? n - h : h;
        PX_CHECK(inter && lsize == want_l && rsize == want_r && lrank == (low ? me : me - h),
                 "inter-communicator: inter %d, sizes %d/%d, rank %d", inter, lsize, rsize, lrank);
        /* rank i of each side sends to rank i of the other, if there is one */
        int out = 31 * me + 1, in = -1;
        MPI_Request q = MPI_REQUEST_NULL;
        if (lrank < rsize)
            PX_MPI(MPI_Isend(&out, 1, MPI_INT, lrank, 3, ic, &q));
        if (lrank < rsize) {
            PX_MPI(MPI_Recv(&in, 1, MPI_INT, lrank, 3, ic, &st));
            int peer = low ? lrank + h : lrank;
            PX_CHECK(in == 31 * peer + 1 && st.MPI_SOURCE == lrank,
                     "inter-communicator: got %d from %d, want %d from %d", in, st.MPI_SOURCE,
                     31 * peer + 1, lrank);
        }
        PX_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
        /* merged, the lower half first */
        MPI_Comm merged;
        PX_MPI(MPI_Intercomm_merge(ic, !low, &merged));
        int mr = -1;
        MPI_Comm_rank(merged, &mr);
        PX_CHECK(mr == me, "merged rank %d, want %d", mr, me);
        check_sum(merged, me + 1, n * (n + 1) / 2, "merged");
        MPI_Comm_free(&merged);
        /* errors: overlapping groups, a leader out of range */
        MPI_Comm bad_ic = MPI_COMM_NULL;
        PX_EXPECT_CLASS(MPI_Intercomm_create_from_groups(wgroup, 0, low ? hi : lo, 0, "x",
                                                         MPI_INFO_NULL, MPI_ERRORS_RETURN, &bad_ic),
                        MPI_ERR_GROUP);
        PX_EXPECT_CLASS(MPI_Intercomm_create_from_groups(low ? lo : hi, n, low ? hi : lo, 0, "x",
                                                         MPI_INFO_NULL, MPI_ERRORS_RETURN, &bad_ic),
                        MPI_ERR_RANK);
        /* a group this process is not in */
        MPI_Comm bad_c = MPI_COMM_NULL;
        PX_EXPECT_CLASS(MPI_Comm_create_from_group(low ? hi : lo, "y", MPI_INFO_NULL,
                                                   MPI_ERRORS_RETURN, &bad_c),
                        MPI_ERR_GROUP);
        PX_CHECK(bad_ic == MPI_COMM_NULL && bad_c == MPI_COMM_NULL, "a failed call made 0x%x 0x%x",
                 (unsigned)bad_ic, (unsigned)bad_c);
        MPI_Comm_free(&ic);
        MPI_Group_free(&lo);
        MPI_Group_free(&hi);
        inter_done = 1;
    }

    /* bad arguments, reported through the first session's MPI_ERRORS_RETURN */
    MPI_Group bg;
    MPI_Info bi;
    int blen = 0;
    char bname[8];
    PX_EXPECT_CLASS(MPI_Group_from_session_pset(s, "mpi://NOPE", &bg), MPI_ERR_ARG);
    PX_EXPECT_CLASS(MPI_Session_get_pset_info(s, "mpi://NOPE", &bi), MPI_ERR_ARG);
    PX_EXPECT_CLASS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, npsets, &blen, bname), MPI_ERR_ARG);
    PX_EXPECT_CLASS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &blen, bname), MPI_ERR_ARG);
    PX_EXPECT_CLASS(MPI_Session_get_num_psets(s, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
    PX_EXPECT_CLASS(MPI_Session_set_errhandler(s, (MPI_Errhandler)0x12345), MPI_ERR_ARG);
    MPI_Comm ec = MPI_COMM_NULL;
    /* the empty group: MPI_COMM_NULL at once, nobody to wait for */
    ec = MPI_COMM_WORLD;
    PX_MPI(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "z", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ec));
    PX_CHECK(ec == MPI_COMM_NULL, "a communicator from the empty group: %#x", (unsigned)ec);
    MPI_Group lower;
    PX_MPI(MPI_Group_from_session_pset(s, "mpi://world", &lower));
    PX_MPI(MPI_Group_free(&lower));
    PX_EXPECT_CLASS(MPI_Comm_create_from_group(wgroup, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &ec),
                    MPI_ERR_ARG);
    /* a short buffer gets as much of the name as fits */
    blen = 4;
    PX_MPI(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &blen, bname));
    PX_CHECK(strlen(bname) == 3, "a name in 4 bytes is \"%s\"", bname);

    /* the second session ends while the first goes on */
    PX_MPI(MPI_Session_finalize(&s2));
    PX_CHECK(s2 == MPI_SESSION_NULL, "finalized session is 0x%x", (unsigned)s2);
    check_sum(wcomm, 2, 2 * n, "WORLD after the second session ended");

    /* mpix://SHARED: the processes of this machine, as split_type shared
     * sees them */
    MPI_Group hgroup, lgroup;
    MPI_Comm lcomm;
    PX_MPI(MPI_Group_from_session_pset(s, "mpix://SHARED", &hgroup));
    PX_MPI(MPI_Comm_split_type(wcomm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &lcomm));
    MPI_Comm_group(lcomm, &lgroup);
    int gcmp = -1, hsize = -1;
    MPI_Group_compare(hgroup, lgroup, &gcmp);
    MPI_Group_size(hgroup, &hsize);
    PX_CHECK(gcmp == MPI_IDENT, "mpix://SHARED (%d processes) is not the node's group (%d)", hsize,
             gcmp);
    MPI_Info hi;
    char hv[32] = "";
    int hflag = 0;
    PX_MPI(MPI_Session_get_pset_info(s, "mpix://SHARED", &hi));
    PX_MPI(MPI_Info_get(hi, "mpi_size", (int)sizeof(hv) - 1, hv, &hflag));
    PX_CHECK(hflag && atoi(hv) == hsize, "mpix://SHARED: mpi_size \"%s\", want %d", hv, hsize);
    MPI_Info_free(&hi);
    MPI_Group_free(&hgroup);
    MPI_Group_free(&lgroup);
    MPI_Comm_free(&lcomm);

    /* agree on the outcome so far */
    int total = -1;
    PX_MPI(MPI_Allreduce(&px_test_errors, &total, 1, MPI_INT, MPI_SUM, wcomm));
    if (ca != MPI_COMM_NULL)
        MPI_Comm_free(&ca);
    if (cb != MPI_COMM_NULL)
        MPI_Comm_free(&cb);
    MPI_Group_free(&ga);
    MPI_Group_free(&gb);
    MPI_Comm_free(&wcomm);
    MPI_Group_free(&wgroup);
    MPI_Group_free(&sgroup);
    PX_MPI(MPI_Session_finalize(&s));
    int fin = -1;
    MPI_Initialized(&flag);
    MPI_Finalized(&fin);
    if (flag != 0 || fin != 0) {
        fprintf(stderr, "FAIL sessions rank %d: MPI_Initialized %d, MPI_Finalized %d at the end\n",
                me, flag, fin);
        return 1;
    }
    /* MPI again after the last session ended (MPI-4.0 11.3): twice, with a
     * communicator over WORLD each time; then the even ranks alone, on
     * their own, while the odd ones end (finalizing a session does not wait
     * for the other processes) */
    for (int round = 0; round < 2; round++) {
        MPI_Session s3 = MPI_SESSION_NULL;
        MPI_Group g3;
        MPI_Comm c3 = MPI_COMM_NULL;
        char tag[32];
        PX_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s3));
        PX_MPI(MPI_Group_from_session_pset(s3, "mpi://WORLD", &g3));
        snprintf(tag, sizeof(tag), "org.plexus.test.again%d", round);
        PX_MPI(MPI_Comm_create_from_group(g3, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c3));
        check_sum(c3, me + round, n * (n - 1) / 2 + n * round, "WORLD in a new session");
        int t3 = -1;
        PX_MPI(MPI_Allreduce(&px_test_errors, &t3, 1, MPI_INT, MPI_SUM, c3));
        total = t3;
        MPI_Comm_free(&c3);
        MPI_Group_free(&g3);
        PX_MPI(MPI_Session_finalize(&s3));
    }
    if (me % 2 == 0) {
        MPI_Session s4 = MPI_SESSION_NULL;
        MPI_Group g4;
        MPI_Comm c4 = MPI_COMM_NULL;
        PX_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s4));
        PX_MPI(MPI_Group_from_session_pset(s4, "mpi://SELF", &g4));
        PX_MPI(MPI_Comm_create_from_group(g4, "org.plexus.test.self", MPI_INFO_NULL,
                                          MPI_ERRORS_RETURN, &c4));
        check_sum(c4, 7, 7, "SELF in a session of its own");
        MPI_Comm_free(&c4);
        MPI_Group_free(&g4);
        PX_MPI(MPI_Session_finalize(&s4));
        total += px_test_errors; /* this rank's own, reported by itself */
    }
    if (me == 0) {
        if (total == 0)
            printf("PASS sessions np=%d: process sets, WORLD/SELF/halves/inter communicators%s, "
                   "two sessions, errors, mpix://SHARED, sessions after the last one ended\n",
                   n, inter_done ? "" : " (no inter-communicator at np=1)");
        else
            printf("FAIL sessions np=%d: %d failed checks\n", n, total);
        fflush(stdout);
    }
    return total == 0 ? 0 : 1;
}
