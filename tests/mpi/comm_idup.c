/* MPI_Comm_idup with traffic in flight: receives posted on the parent
 * before the idup are matched by sends made after it; several idups are
 * outstanding at once and completed with Waitall/Test; the duplicates are
 * congruent, keep the parent's attributes and carry their own traffic
 * without crosstalk; idup of a duplicate and of MPI_COMM_SELF. */
#include "px_test.h"

static int copy_calls;

static int copy_fn(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)kv, (void)extra;
    copy_calls++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Ring exchange on c with a payload that names the communicator. */
static void ring(MPI_Comm c, int salt, const char *what)
{
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    int right = (r + 1) % n, left = (r + n - 1) % n, v = salt * 1000 + r, got = -1;
    MPI_Status st;
    MPI_Sendrecv(&v, 1, MPI_INT, right, 9, &got, 1, MPI_INT, MPI_ANY_SOURCE, 9, c, &st);
    PX_CHECK(got == salt * 1000 + left && st.MPI_SOURCE == left,
             "%s: got %d from %d, expected %d from %d", what, got, st.MPI_SOURCE,
             salt * 1000 + left, left);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "comm_idup");
    int me = px_test_rank, n = px_test_size;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    enum { NDUP = 4, NMSG = 8 };
    MPI_Comm dups[NDUP];
    MPI_Request req[NDUP];
    int kv, attrval = 1234;

    MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &kv, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kv, &attrval);

    /* receives from the left neighbour posted before the idups, same tags
     * the duplicates will use later */
    int in[NMSG], out[NMSG];
    MPI_Request rr[NMSG], sr[NMSG];
    for (int i = 0; i < NMSG; i++) {
        in[i] = -1;
        out[i] = me * 100 + i;
        MPI_Irecv(&in[i], 1, MPI_INT, left, 9, MPI_COMM_WORLD, &rr[i]);
    }
    for (int i = 0; i < NDUP; i++)
        PX_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &dups[i], &req[i]));
    /* half of the sends before the idups complete, half after */
    for (int i = 0; i < NMSG / 2; i++)
        MPI_Isend(&out[i], 1, MPI_INT, right, 9, MPI_COMM_WORLD, &sr[i]);
    MPI_Status st[NDUP];
    PX_MPI(MPI_Waitall(NDUP, req, st));
    (void)st;
    /* MPI leaves the source and tag of a completed communicator
     * construction undefined: only the request itself is checked */
    for (int i = 0; i < NDUP; i++)
        PX_CHECK(req[i] == MPI_REQUEST_NULL, "idup request %d not freed", i);
    for (int i = NMSG / 2; i < NMSG; i++)
        MPI_Isend(&out[i], 1, MPI_INT, right, 9, MPI_COMM_WORLD, &sr[i]);

    /* traffic on every duplicate while the parent's messages are pending */
    for (int i = 0; i < NDUP; i++)
        ring(dups[i], i + 1, "duplicate");
    MPI_Waitall(NMSG, rr, MPI_STATUSES_IGNORE);
    MPI_Waitall(NMSG, sr, MPI_STATUSES_IGNORE);
    for (int i = 0; i < NMSG; i++)
        PX_CHECK(in[i] == left * 100 + i, "parent message %d: %d, expected %d", i, in[i],
                 left * 100 + i);

    for (int i = 0; i < NDUP; i++) {
        int res = -1, flag = 0, r = -1, s = -1;
        void *v = NULL;
        MPI_Comm_compare(MPI_COMM_WORLD, dups[i], &res);
        PX_CHECK(res == MPI_CONGRUENT, "compare(world, idup %d) = %d", i, res);
        MPI_Comm_rank(dups[i], &r);
        MPI_Comm_size(dups[i], &s);
        PX_CHECK(r == me && s == n, "idup %d: rank %d size %d", i, r, s);
        MPI_Comm_get_attr(dups[i], kv, &v, &flag);
        PX_CHECK(flag && v == &attrval, "idup %d: attribute not copied", i);
        for (int j = 0; j < i; j++) {
            MPI_Comm_compare(dups[i], dups[j], &res);
            PX_CHECK(res == MPI_CONGRUENT, "compare(idup %d, idup %d) = %d", i, j, res);
        }
    }
    PX_CHECK(copy_calls == NDUP, "copy callback called %d times, expected %d", copy_calls, NDUP);

    /* idup of a duplicate, completed by polling with MPI_Test */
    MPI_Comm dd;
    MPI_Request q;
    int done = 0, polls = 0;
    PX_MPI(MPI_Comm_idup(dups[0], &dd, &q));
    while (!done && polls++ < 1000000)
        MPI_Test(&q, &done, MPI_STATUS_IGNORE);
    PX_REQUIRE(done, "idup of a duplicate never completed");
    ring(dd, 77, "duplicate of a duplicate");
    int sum = 0;
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, dd);
    PX_CHECK(sum == n * (n - 1) / 2, "allreduce on the duplicate: %d", sum);

    /* idup of MPI_COMM_SELF */
    MPI_Comm sd;
    PX_MPI(MPI_Comm_idup(MPI_COMM_SELF, &sd, &q));
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    int ss = -1;
    MPI_Comm_size(sd, &ss);
    PX_CHECK(ss == 1, "idup(self) size %d", ss);
    int x = 5, y = -1;
    MPI_Sendrecv(&x, 1, MPI_INT, 0, 1, &y, 1, MPI_INT, 0, 1, sd, MPI_STATUS_IGNORE);
    PX_CHECK(y == 5, "self duplicate got %d", y);
    MPI_Comm_free(&sd);

    MPI_Comm_free(&dd);
    for (int i = 0; i < NDUP; i++)
        MPI_Comm_free(&dups[i]);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, kv);
    MPI_Comm_free_keyval(&kv);
    return px_test_finish("%d idups with %d messages in flight", NDUP + 2, NMSG);
}
