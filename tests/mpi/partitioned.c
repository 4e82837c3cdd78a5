/* Partitioned communication (MPI-4.0 chapter 4) around a ring: every rank
 * sends to its right neighbour and receives from its left one.
 *   - several starts of the same requests, fresh data each time, the
 *     partitions readied forwards, backwards, by MPI_Pready_range and by
 *     MPI_Pready_list in a shuffled order;
 *   - send and receive partition counts that differ (8/8, 8/4, 3/6, 4/3,
 *     where a receive partition straddles two send partitions);
 *   - the sender readies half of its partitions and waits for word from its
 *     receiver before readying the rest: meanwhile the receiver must see the
 *     partitions of that half arrive with MPI_Parrived (data checked per
 *     partition before MPI_Wait) and the others not arrived;
 *   - partitions of 1 MB (rendezvous, udp-zcopy over udp);
 *   - a strided datatype on both sides (packed and unpacked per partition);
 *   - partitions readied from several threads, with MPI_THREAD_MULTIPLE;
 *   - partitioned and ordinary messages with the same tag do not match
 *     each other; two partitioned pairs with one tag match in the order of
 *     their init calls, whatever the order of their starts;
 *   - MPI_PROC_NULL; the error classes of bad arguments, of readying a
 *     partition twice or outside a start, and of a total size mismatch. */
#include <pthread.h>

#include "px_test.h"

#define GO_TAG 999

static int me, np, right, left, provided;

static int val(int sender, int round, int cfg, long i)
{
    return (int)(((long)sender * 1000003L + round * 7919L + cfg * 104729L + i * 31L) & 0x7fffffff);
}

static int err_class(int rc)
{
    int c = rc;
    MPI_Error_class(rc, &c);
    return c;
}

/* Readies partitions [lo, hi) of a send request, in an order chosen by round. */
static void ready(MPI_Request req, int lo, int hi, int round)
{
    int n = hi - lo;
    if (n <= 0)
        return;
    switch (round % 4) {
    case 0:
        for (int k = lo; k < hi; k++)
            PX_MPI(MPI_Pready(k, req));
        break;
    case 1:
        for (int k = hi - 1; k >= lo; k--)
            PX_MPI(MPI_Pready(k, req));
        break;
    case 2:
        PX_MPI(MPI_Pready_range(lo, hi - 1, req));
        break;
    default: {
        int *list = malloc(sizeof(int) * (size_t)n);
        unsigned seed = (unsigned)(me * 31 + round);
        for (int i = 0; i < n; i++)
            list[i] = lo + i;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(rand_r(&seed) % (unsigned)(i + 1)), t = list[i];
            list[i] = list[j];
            list[j] = t;
        }
        PX_MPI(MPI_Pready_list(n, list, req));
        free(list);
    }
    }
}

/* Polls MPI_Parrived until receive partitions [lo, hi) (of rc ints each,
 * from `left`) have all arrived, checking each one's data as it does. */
static void await_parts(MPI_Request req, const int *rb, int lo, int hi, long rc, int round, int cfg)
{
    char *seen = calloc((size_t)(hi > lo ? hi - lo : 1), 1);
    int left_n = hi - lo;
    while (left_n > 0) {
        for (int i = lo; i < hi; i++) {
            int flag = 0;
            if (seen[i - lo])
                continue;
            PX_MPI(MPI_Parrived(req, i, &flag));
            if (!flag)
                continue;
            seen[i - lo] = 1;
            left_n--;
            long bad = 0;
            for (long e = i * rc; e < (i + 1) * rc; e++)
                bad += rb[e] != val(left, round, cfg, e);
            PX_CHECK(!bad, "cfg %d round %d: partition %d arrived with %ld wrong values", cfg,
                     round, i, bad);
        }
    }
    free(seen);
}

/* ns send partitions to the right and nr receive partitions from the left,
 * of total ints in all, over `rounds` starts. */
static void ring_config(int cfg, int ns, int nr, long total, int rounds)
{
    long sc = total / ns, rc = total / nr;
    int *sb = malloc(sizeof(int) * (size_t)total), *rb = malloc(sizeof(int) * (size_t)total);
    MPI_Request req[2];
    MPI_Status st[2];
    int tag = 10 + cfg;
    PX_MPI(MPI_Precv_init(rb, nr, rc, MPI_INT, left, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]));
    PX_MPI(MPI_Psend_init(sb, ns, sc, MPI_INT, right, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]));
    for (int round = 0; round < rounds; round++) {
        for (long i = 0; i < total; i++) {
            sb[i] = val(me, round, cfg, i);
            rb[i] = -1;
        }
        PX_MPI(MPI_Startall(2, req));
        int sh = ns / 2;
        ready(req[1], 0, sh, round);
        /* receive partitions wholly inside the first sh send partitions */
        int full = (int)(sh * sc / rc);
        await_parts(req[0], rb, 0, full, rc, round, cfg);
        for (int i = full; i < nr; i++) {
            int flag = 1;
            PX_MPI(MPI_Parrived(req[0], i, &flag));
            PX_CHECK(!flag, "cfg %d round %d: partition %d arrived before it was sent", cfg, round,
                     i);
        }
        int dummy = 0;
        PX_MPI(MPI_Send(&dummy, 0, MPI_INT, left, GO_TAG, MPI_COMM_WORLD));
        PX_MPI(MPI_Recv(&dummy, 0, MPI_INT, right, GO_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        ready(req[1], sh, ns, round + 1);
        await_parts(req[0], rb, full, nr, rc, round, cfg);
        PX_MPI(MPI_Waitall(2, req, st));
        int cnt = -1;
        MPI_Get_count(&st[0], MPI_INT, &cnt);
        PX_CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == tag && cnt == total,
                 "cfg %d round %d: status source %d tag %d count %d", cfg, round, st[0].MPI_SOURCE,
                 st[0].MPI_TAG, cnt);
        long bad = 0;
        for (long i = 0; i < total; i++)
            bad += rb[i] != val(left, round, cfg, i);
        PX_CHECK(!bad, "cfg %d round %d: %ld wrong values after MPI_Waitall", cfg, round, bad);
        int flag = 0;
        PX_MPI(MPI_Parrived(req[0], nr - 1, &flag)); /* inactive: all there */
        PX_CHECK(flag, "cfg %d: MPI_Parrived on the inactive request", cfg);
    }
    PX_MPI(MPI_Request_free(&req[0]));
    PX_MPI(MPI_Request_free(&req[1]));
    PX_CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL, "freed requests not null");
    free(sb);
    free(rb);
}

/* Every other int of items of N (an item spans EXT ints, the next one
 * begins right after its last): 4 send partitions of one item, 2 receive
 * partitions of two; the gaps at the receiver stay as they were. */
static void strided(void)
{
    enum { N = 300, ITEMS = 4, EXT = 2 * N - 1 };
    MPI_Datatype v;
    PX_MPI(MPI_Type_vector(N, 1, 2, MPI_INT, &v));
    PX_MPI(MPI_Type_commit(&v));
    static int sb[ITEMS * EXT], rb[ITEMS * EXT];
    MPI_Request req[2];
    PX_MPI(MPI_Precv_init(rb, 2, 2, v, left, 30, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]));
    PX_MPI(MPI_Psend_init(sb, 4, 1, v, right, 30, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]));
    MPI_Type_free(&v); /* the requests keep it */
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < ITEMS * EXT; i++) {
            sb[i] = i % EXT % 2 ? -3 : val(me, round, 30, i);
            rb[i] = -7;
        }
        PX_MPI(MPI_Startall(2, req));
        for (int k = 3; k >= 0; k--)
            PX_MPI(MPI_Pready(k, req[1]));
        int got[2] = {0, 0}, n = 0;
        while (n < 2)
            for (int i = 0; i < 2; i++) {
                int flag = 0;
                if (got[i])
                    continue;
                PX_MPI(MPI_Parrived(req[0], i, &flag));
                if (!flag)
                    continue;
                got[i] = 1;
                n++;
                int bad = 0;
                for (int e = i * 2 * EXT; e < (i + 1) * 2 * EXT; e++)
                    bad += rb[e] != (e % EXT % 2 ? -7 : val(left, round, 30, e));
                PX_CHECK(!bad, "strided round %d: partition %d arrived with %d wrong values", round,
                         i, bad);
            }
        PX_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    }
    MPI_Request_free(&req[0]);
    MPI_Request_free(&req[1]);
}

/* ---------- readied from several threads ---------- */

#define NT 4
static MPI_Request thr_req;
static int thr_nparts;

static void *thr_ready(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int k = thr_nparts - 1 - t; k >= 0; k -= NT) {
        int rc = MPI_Pready(k, thr_req);
        PX_CHECK(rc == MPI_SUCCESS, "thread %d: MPI_Pready(%d) returned %d", t, k, rc);
    }
    return NULL;
}

static void threads(void)
{
    enum { NS = 16, NR = 4, TOTAL = 16 * 2048, CFG = 40 };
    int *sb = malloc(sizeof(int) * TOTAL), *rb = malloc(sizeof(int) * TOTAL);
    MPI_Request req[2];
    PX_MPI(MPI_Precv_init(rb, NR, TOTAL / NR, MPI_INT, left, CFG, MPI_COMM_WORLD, MPI_INFO_NULL,
                          &req[0]));
    PX_MPI(MPI_Psend_init(sb, NS, TOTAL / NS, MPI_INT, right, CFG, MPI_COMM_WORLD, MPI_INFO_NULL,
                          &req[1]));
    for (int round = 0; round < 3; round++) {
        for (long i = 0; i < TOTAL; i++) {
            sb[i] = val(me, round, CFG, i);
            rb[i] = -1;
        }
        PX_MPI(MPI_Startall(2, req));
        thr_req = req[1];
        thr_nparts = NS;
        pthread_t th[NT];
        for (int t = 0; t < NT; t++)
            pthread_create(&th[t], NULL, thr_ready, (void *)(intptr_t)t);
        /* this thread watches the arrivals meanwhile */
        await_parts(req[0], rb, 0, NR, TOTAL / NR, round, CFG);
        for (int t = 0; t < NT; t++)
            pthread_join(th[t], NULL);
        PX_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    }
    MPI_Request_free(&req[0]);
    MPI_Request_free(&req[1]);
    free(sb);
    free(rb);
}

/* ---------- matching ---------- */

static void matching(void)
{
    enum { TAG = 77 };
    int ord_s[30], ord_r[30], a[100], b[120], x[100], y[120];
    for (int i = 0; i < 30; i++) {
        ord_s[i] = val(me, 0, 50, i);
        ord_r[i] = -1;
    }
    for (int i = 0; i < 100; i++)
        a[i] = val(me, 1, 50, i), x[i] = -1;
    for (int i = 0; i < 120; i++)
        b[i] = val(me, 2, 50, i), y[i] = -1;
    MPI_Request rq[6];
    /* receiver: X then Y (partitioned), then the ordinary receive */
    PX_MPI(MPI_Precv_init(x, 1, 100, MPI_INT, left, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]));
    PX_MPI(MPI_Precv_init(y, 3, 40, MPI_INT, left, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
    PX_MPI(MPI_Startall(2, rq));
    PX_MPI(MPI_Irecv(ord_r, 30, MPI_INT, left, TAG, MPI_COMM_WORLD, &rq[2]));
    /* sender: the ordinary message first, then A and B */
    PX_MPI(MPI_Isend(ord_s, 30, MPI_INT, right, TAG, MPI_COMM_WORLD, &rq[3]));
    PX_MPI(MPI_Psend_init(a, 2, 50, MPI_INT, right, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[4]));
    PX_MPI(MPI_Psend_init(b, 4, 30, MPI_INT, right, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[5]));
    PX_MPI(MPI_Start(&rq[4]));
    PX_MPI(MPI_Start(&rq[5]));
    PX_MPI(MPI_Pready_range(0, 3, rq[5]));
    PX_MPI(MPI_Pready_range(0, 1, rq[4]));
    MPI_Status st[6];
    PX_MPI(MPI_Waitall(6, rq, st));
    int bad = 0;
    for (int i = 0; i < 30; i++)
        bad += ord_r[i] != val(left, 0, 50, i);
    PX_CHECK(!bad, "the ordinary message: %d wrong values", bad);
    bad = 0;
    for (int i = 0; i < 100; i++)
        bad += x[i] != val(left, 1, 50, i);
    PX_CHECK(!bad, "first partitioned pair: %d wrong values", bad);
    bad = 0;
    for (int i = 0; i < 120; i++)
        bad += y[i] != val(left, 2, 50, i);
    PX_CHECK(!bad, "second partitioned pair: %d wrong values", bad);
    for (int i = 0; i < 6; i++)
        if (rq[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&rq[i]);

    /* the same sizes: the init calls' order decides, not the starts' */
    int c[64], d[64], z[64], w[64];
    for (int i = 0; i < 64; i++)
        c[i] = val(me, 3, 50, i), d[i] = val(me, 4, 50, i), z[i] = w[i] = -1;
    PX_MPI(MPI_Psend_init(c, 2, 32, MPI_INT, right, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]));
    PX_MPI(MPI_Psend_init(d, 2, 32, MPI_INT, right, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
    PX_MPI(MPI_Precv_init(z, 2, 32, MPI_INT, left, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[2]));
    PX_MPI(MPI_Precv_init(w, 2, 32, MPI_INT, left, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[3]));
    PX_MPI(MPI_Start(&rq[2])); /* receives in init order, sends the other way round */
    PX_MPI(MPI_Start(&rq[1]));
    PX_MPI(MPI_Pready_range(0, 1, rq[1]));
    PX_MPI(MPI_Start(&rq[3]));
    PX_MPI(MPI_Start(&rq[0]));
    PX_MPI(MPI_Pready_range(0, 1, rq[0]));
    PX_MPI(MPI_Waitall(4, rq, st));
    bad = 0;
    for (int i = 0; i < 64; i++)
        bad += (z[i] != val(left, 3, 50, i)) + (w[i] != val(left, 4, 50, i));
    PX_CHECK(!bad, "pairs started out of their init order: %d wrong values", bad);
    for (int i = 0; i < 4; i++)
        MPI_Request_free(&rq[i]);
}

static void procnull(void)
{
    int buf[8] = {0};
    MPI_Request s, r;
    MPI_Status st;
    int flag = 0;
    PX_MPI(MPI_Psend_init(buf, 2, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    PX_MPI(MPI_Precv_init(buf, 4, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    for (int round = 0; round < 2; round++) {
        PX_MPI(MPI_Start(&s));
        PX_MPI(MPI_Start(&r));
        PX_MPI(MPI_Pready_range(0, 1, s));
        PX_MPI(MPI_Parrived(r, 3, &flag));
        PX_CHECK(flag, "MPI_PROC_NULL: partition not arrived");
        PX_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
        PX_MPI(MPI_Wait(&r, &st));
        PX_CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "MPI_PROC_NULL: status source %d", st.MPI_SOURCE);
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

/* ---------- errors ---------- */

static void expect(int rc, int cls, const char *what)
{
    PX_CHECK(err_class(rc) == cls, "%s: class %d, expected %d", what, err_class(rc), cls);
}

static void errors(void)
{
    int buf[64] = {0};
    MPI_Request s, r, o;
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info ni = MPI_INFO_NULL;
    expect(MPI_Psend_init(buf, 0, 4, MPI_INT, right, 0, w, ni, &s), MPI_ERR_ARG, "0 partitions");
    expect(MPI_Precv_init(buf, -2, 4, MPI_INT, left, 0, w, ni, &r), MPI_ERR_ARG, "-2 partitions");
    expect(MPI_Psend_init(buf, 2, -1, MPI_INT, right, 0, w, ni, &s), MPI_ERR_COUNT,
           "negative count");
    expect(MPI_Psend_init(buf, 2, 4, MPI_INT, np, 0, w, ni, &s), MPI_ERR_RANK, "bad rank");
    expect(MPI_Precv_init(buf, 2, 4, MPI_INT, MPI_ANY_SOURCE, 0, w, ni, &r), MPI_ERR_RANK,
           "MPI_ANY_SOURCE");
    expect(MPI_Precv_init(buf, 2, 4, MPI_INT, left, MPI_ANY_TAG, w, ni, &r), MPI_ERR_TAG,
           "MPI_ANY_TAG");
    expect(MPI_Psend_init(buf, 2, 4, MPI_DATATYPE_NULL, right, 0, w, ni, &s), MPI_ERR_TYPE,
           "null datatype");

    /* readying outside a start, twice, out of range; arrival on a send */
    static int sb[64], rb[64];
    for (int i = 0; i < 64; i++)
        sb[i] = val(me, 0, 60, i), rb[i] = -1;
    PX_MPI(MPI_Psend_init(sb, 4, 16, MPI_INT, right, 60, w, ni, &s));
    PX_MPI(MPI_Precv_init(rb, 4, 16, MPI_INT, left, 60, w, ni, &r));
    expect(MPI_Pready(0, s), MPI_ERR_REQUEST, "MPI_Pready before MPI_Start");
    PX_MPI(MPI_Start(&s));
    PX_MPI(MPI_Start(&r));
    expect(MPI_Pready(4, s), MPI_ERR_ARG, "partition 4 of 4");
    expect(MPI_Pready(-1, s), MPI_ERR_ARG, "partition -1");
    expect(MPI_Pready(0, r), MPI_ERR_REQUEST, "MPI_Pready on a receive");
    int flag;
    expect(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST, "MPI_Parrived on a send");
    expect(MPI_Parrived(r, 9, &flag), MPI_ERR_ARG, "MPI_Parrived, partition 9");
    PX_MPI(MPI_Pready(1, s));
    expect(MPI_Pready(1, s), MPI_ERR_ARG, "partition 1 readied twice");
    expect(MPI_Pready_range(2, 1, s), MPI_ERR_ARG, "empty range");
    expect(MPI_Pready_range(0, 2, s), MPI_ERR_ARG, "range over a ready partition");
    int dup[3] = {2, 3, 2};
    expect(MPI_Pready_list(3, dup, s), MPI_ERR_ARG, "list naming 2 twice");
    expect(MPI_Start(&s), MPI_ERR_REQUEST, "MPI_Start of an active request");
    o = s;
    expect(MPI_Request_free(&o), MPI_ERR_REQUEST, "MPI_Request_free of an active request");
    /* the failed calls readied nothing: 0, 2 and 3 may be readied now */
    int rest[3] = {3, 0, 2};
    PX_MPI(MPI_Pready_list(3, rest, s));
    PX_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
    PX_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += rb[i] != val(left, 0, 60, i);
    PX_CHECK(!bad, "after the refused calls: %d wrong values", bad);
    expect(MPI_Pready(0, s), MPI_ERR_REQUEST, "MPI_Pready after completion");
    PX_MPI(MPI_Request_free(&s));
    PX_MPI(MPI_Request_free(&r));

    /* total sizes differ: both sides complete with MPI_ERR_TRUNCATE, no hang */
    PX_MPI(MPI_Psend_init(sb, 4, 16, MPI_INT, right, 61, w, ni, &s));
    PX_MPI(MPI_Precv_init(rb, 3, 20, MPI_INT, left, 61, w, ni, &r));
    for (int round = 0; round < 2; round++) {
        PX_MPI(MPI_Start(&r));
        PX_MPI(MPI_Start(&s));
        PX_MPI(MPI_Pready_range(0, 3, s));
        expect(MPI_Wait(&s, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE, "send of a size mismatch");
        expect(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE, "receive of a size mismatch");
    }
    PX_MPI(MPI_Request_free(&s));
    PX_MPI(MPI_Request_free(&r));
}

int main(int argc, char **argv)
{
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    px_test_begin("partitioned");
    me = px_test_rank;
    np = px_test_size;
    right = (me + 1) % np;
    left = (me + np - 1) % np;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ring_config(0, 8, 8, 8 * 100, 4);
    ring_config(1, 8, 4, 8 * 1000, 4);
    ring_config(2, 3, 6, 6 * 5000, 4);
    ring_config(3, 4, 3, 12 * 100, 4);
    ring_config(4, 4, 2, 4L << 18, 2); /* 1 MB per send partition */
    strided();
    int threaded = provided == MPI_THREAD_MULTIPLE;
    if (threaded)
        threads();
    matching();
    procnull();
    errors();
    return px_test_finish("%d configurations, 1 MB partitions, strided, %s, matching, "
                          "MPI_PROC_NULL, errors",
                          5, threaded ? "threads" : "threads skipped (no MPI_THREAD_MULTIPLE)");
}
