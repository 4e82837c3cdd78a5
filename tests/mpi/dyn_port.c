/* MPI_Open_port, MPI_Comm_accept and MPI_Comm_connect between the two halves
 * of MPI_COMM_WORLD (lower half world ranks 0..h-1 accepts, upper half
 * h..n-1 connects; the port name goes from world rank 0 to world rank h in a
 * message, and the root is not rank 0 of its half when the half has more than
 * one rank). The inter-communicator's groups are checked against the world
 * ranks; it carries point-to-point messages from every rank to every remote
 * rank with checked contents and sources, an Allreduce and a Bcast across the
 * groups, and an Intercomm_merge whose rank order is checked; a second
 * accept/connect on the same port works too. Then MPI_Comm_disconnect and
 * MPI_Close_port. Errors: a name that is not a port, a port that was closed
 * (refused at once), a port nobody accepts on (fails within PX_PORT_TIMEOUT,
 * which the test list sets to 2 s), accepting on a port this process did not
 * open, and a port name whose token was altered (the owner refuses it and
 * then accepts the genuine one): each returns MPI_ERR_PORT under
 * MPI_ERRORS_RETURN. Needs np >= 2. */
#include "px_test.h"

static int me, n, h, lower, lsize, rsize;

static int remote_world(int r) { return lower ? h + r : r; }

static void check_inter(MPI_Comm ic, const char *what)
{
    int flag = 0, s = -1, rs = -1, r = -1, lr = -1;
    MPI_Comm_test_inter(ic, &flag);
    MPI_Comm_size(ic, &s);
    MPI_Comm_rank(ic, &r);
    MPI_Comm_remote_size(ic, &rs);
    lr = lower ? me : me - h;
    PX_CHECK(flag && s == lsize && rs == rsize && r == lr, "%s: inter %d size %d remote %d rank %d",
             what, flag, s, rs, r);
    MPI_Group wg, rg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_remote_group(ic, &rg);
    for (int i = 0; i < rsize; i++) {
        int w = -1;
        MPI_Group_translate_ranks(rg, 1, &i, wg, &w);
        PX_CHECK(w == remote_world(i), "%s: remote rank %d is world %d", what, i, w);
    }
    MPI_Group_free(&wg);
    MPI_Group_free(&rg);

    /* every local rank sends its world rank and a pattern to every remote rank */
    int *out = malloc(sizeof(int) * (size_t)(rsize * 2)), *in = malloc(sizeof(int) * (size_t)rsize);
    unsigned char *big = malloc(70000), *bin = malloc(70000);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)(rsize * 2));
    for (int i = 0; i < rsize; i++) {
        out[i] = me * 1000 + remote_world(i);
        MPI_Irecv(&in[i], 1, MPI_INT, i, 7, ic, &rq[i]);
    }
    for (int i = 0; i < rsize; i++)
        MPI_Isend(&out[i], 1, MPI_INT, i, 7, ic, &rq[rsize + i]);
    MPI_Waitall(2 * rsize, rq, MPI_STATUSES_IGNORE);
    for (int i = 0; i < rsize; i++)
        PX_CHECK(in[i] == remote_world(i) * 1000 + me, "%s: from remote %d got %d", what, i, in[i]);
    /* a large message (rendezvous) between the roots of the halves' rank 0 */
    if (r == 0) {
        MPI_Status st;
        px_fill(big, 70000, (uint64_t)me + 99);
        MPI_Sendrecv(big, 70000, MPI_BYTE, 0, 8, bin, 70000, MPI_BYTE, MPI_ANY_SOURCE, 8, ic, &st);
        PX_CHECK(st.MPI_SOURCE == 0, "%s: large message from %d", what, st.MPI_SOURCE);
        size_t bad = px_verify(bin, 70000, (uint64_t)remote_world(0) + 99);
        PX_CHECK(bad == 70000, "%s: large message wrong at byte %zu", what, bad);
    }

    /* Allreduce across: each side gets the sum over the other group */
    int v = me + 1, sum = -1, want = 0;
    for (int i = 0; i < rsize; i++)
        want += remote_world(i) + 1;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, ic);
    PX_CHECK(sum == want, "%s: allreduce %d, want %d", what, sum, want);
    /* Bcast from the upper group's rank 0 to the lower group */
    int b = -1;
    if (lower)
        MPI_Bcast(&b, 1, MPI_INT, 0, ic);
    else {
        b = 4242 + h;
        MPI_Bcast(&b, 1, MPI_INT, r == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    }
    if (lower)
        PX_CHECK(b == 4242 + h, "%s: bcast got %d", what, b);

    /* merge: the accepting side (lower) goes first when both pass high = 0 */
    MPI_Comm m;
    MPI_Intercomm_merge(ic, 0, &m);
    int mr = -1, ms = -1;
    MPI_Comm_rank(m, &mr);
    MPI_Comm_size(m, &ms);
    PX_CHECK(ms == n && mr == me, "%s: merged rank %d of %d", what, mr, ms);
    int mx = -1;
    MPI_Allreduce(&me, &mx, 1, MPI_INT, MPI_MAX, m);
    PX_CHECK(mx == n - 1, "%s: merged max %d", what, mx);
    MPI_Comm_free(&m);
    free(out);
    free(in);
    free(big);
    free(bin);
    free(rq);
}

static void expect_port_error(int rc, const char *what)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    PX_CHECK(cls == MPI_ERR_PORT, "%s: class %d, want MPI_ERR_PORT", what, cls);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "dyn_port");
    me = px_test_rank;
    n = px_test_size;
    if (n < 2)
        return px_test_skip("needs 2 ranks");
    h = n / 2;
    lower = me < h;
    lsize = lower ? h : n - h;
    rsize = lower ? n - h : h;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, lower, me, &half);
    int root = lsize - 1; /* the last rank of each half */
    char port[MPI_MAX_PORT_NAME] = "";
    if (me == root && lower) {
        MPI_Open_port(MPI_INFO_NULL, port);
        PX_CHECK(strncmp(port, "plexus:", 7) == 0, "port name '%s'", port);
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, h + (n - h) - 1, 1, MPI_COMM_WORLD);
    }
    if (!lower && me - h == (n - h) - 1)
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, h - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    for (int round = 0; round < 2; round++) {
        MPI_Comm ic;
        if (lower)
            PX_MPI(MPI_Comm_accept(port, MPI_INFO_NULL, root, half, &ic));
        else
            PX_MPI(MPI_Comm_connect(port, MPI_INFO_NULL, (n - h) - 1, half, &ic));
        check_inter(ic, round ? "second" : "first");
        PX_MPI(MPI_Comm_disconnect(&ic));
        PX_CHECK(ic == MPI_COMM_NULL, "disconnect left the handle");
    }

    /* errors, at one process of each half, on MPI_COMM_SELF */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm ic = MPI_COMM_NULL;
    if (me == 0) {
        expect_port_error(MPI_Comm_connect("no such port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic),
                          "garbage name");
        expect_port_error(
            MPI_Comm_accept("plexus:0:1:127.0.0.1", MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic),
            "accept on a foreign port");
        char p2[MPI_MAX_PORT_NAME];
        PX_MPI(MPI_Open_port(MPI_INFO_NULL, p2));
        PX_CHECK(strcmp(p2, port) != 0, "two ports with one name");
        double t0 = MPI_Wtime();
        expect_port_error(MPI_Comm_connect(p2, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic),
                          "nobody accepts");
        double dt = MPI_Wtime() - t0;
        PX_CHECK(dt > 1.0 && dt < 20.0, "connect gave up after %.1f s (PX_PORT_TIMEOUT=2)", dt);
        PX_MPI(MPI_Close_port(p2));
        ic = MPI_COMM_WORLD;
        expect_port_error(MPI_Comm_connect(p2, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic),
                          "closed port");
        PX_CHECK(ic == MPI_COMM_NULL, "a failed connect gave a communicator");
        expect_port_error(MPI_Close_port(p2), "closing twice");
    }
    /* a token that is not the port's: the owner closes that connection and
     * goes on waiting; the genuine name then connects (world 0 and n-1) */
    char p3[MPI_MAX_PORT_NAME] = "";
    if (me == 0) {
        PX_MPI(MPI_Open_port(MPI_INFO_NULL, p3));
        MPI_Send(p3, MPI_MAX_PORT_NAME, MPI_CHAR, n - 1, 2, MPI_COMM_WORLD);
        PX_MPI(MPI_Comm_accept(p3, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
    } else if (me == n - 1) {
        MPI_Recv(p3, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        char forged[MPI_MAX_PORT_NAME];
        snprintf(forged, sizeof(forged), "%s", p3);
        forged[8] = forged[8] == '0' ? '1' : '0';
        expect_port_error(MPI_Comm_connect(forged, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic),
                          "forged token");
        PX_MPI(MPI_Comm_connect(p3, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
    }
    if (me == 0 || me == n - 1) {
        int rs = -1, x = me * 3 + 1, y = -1;
        MPI_Comm_remote_size(ic, &rs);
        PX_CHECK(rs == 1, "self-to-self: remote size %d", rs);
        MPI_Sendrecv(&x, 1, MPI_INT, 0, 3, &y, 1, MPI_INT, 0, 3, ic, MPI_STATUS_IGNORE);
        PX_CHECK(y == (n - 1 - me) * 3 + 1, "self-to-self: got %d", y);
        PX_MPI(MPI_Comm_disconnect(&ic));
        if (me == 0)
            PX_MPI(MPI_Close_port(p3));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == root && lower)
        PX_MPI(MPI_Close_port(port));
    MPI_Comm_free(&half);
    return px_test_finish("accept/connect between halves %d+%d, twice; port errors", h, n - h);
}
