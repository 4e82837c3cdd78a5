/* Every blocking collective checked element by element against a result
 * computed locally: counts 0 .. 256 Ki ints (2 MB vectors for Bcast and the
 * reductions), roots first/middle/last, MPI_IN_PLACE wherever the standard
 * allows it, a non-commutative user operation on a derived pair type (must
 * reduce in rank order), and strided (vector) datatypes on one side of the
 * data-movement collectives. Run with PX_<COLL>_ALGORITHM=... to check one
 * algorithm; the expected results do not depend on the algorithm. */
#include "px_test.h"

static int rank, size;

static int val(int r, int i, int salt) { return (int)((r * 131 + i * 7 + salt * 17) % 1000) - 500; }

typedef px_aff_t aff_t; /* the non-commutative operation (px_test.h) */
static MPI_Datatype aff_type;
static MPI_Op aff_op;
#define aff_val px_aff_val
#define aff_fold px_aff_fold

#define CHECK_INTS(buf, n, expr, what, ...)                                                        \
    do {                                                                                           \
        int bad_ = 0;                                                                              \
        for (int i = 0; i < (n) && !bad_; i++)                                                     \
            if ((buf)[i] != (expr)) {                                                              \
                PX_CHECK(0, what " elem %d: got %d want %d", __VA_ARGS__, i, (buf)[i],             \
                         (int)(expr));                                                             \
                bad_ = 1;                                                                          \
            }                                                                                      \
    } while (0)

static const int counts[] = {0, 1, 3, 100, 4099, 65536, 262144};
#define NCOUNTS ((int)(sizeof(counts) / sizeof(counts[0])))

static void test_bcast(int count, int root)
{
    int *buf = malloc(sizeof(int) * (count + 1));
    for (int i = 0; i < count; i++)
        buf[i] = rank == root ? val(root, i, 1) : -7;
    PX_MPI(MPI_Bcast(buf, count, MPI_INT, root, MPI_COMM_WORLD));
    CHECK_INTS(buf, count, val(root, i, 1), "Bcast count %d root %d", count, root);
    free(buf);
}

/* Bcast of a strided vector type: only every other int moves. */
static void test_bcast_vector(int count, int root)
{
    MPI_Datatype vec;
    if (count == 0)
        return;
    MPI_Type_vector(count, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *buf = malloc(sizeof(int) * 2 * count);
    for (int i = 0; i < 2 * count; i++)
        buf[i] = rank == root ? val(root, i, 2) : -7;
    PX_MPI(MPI_Bcast(buf, 1, vec, root, MPI_COMM_WORLD));
    CHECK_INTS(buf, 2 * count, (i % 2 == 0 || rank == root) ? val(root, i, 2) : -7,
               "Bcast(vector) count %d root %d", count, root);
    MPI_Type_free(&vec);
    free(buf);
}

static void test_reduce(int count, int root)
{
    int *s = calloc(count + 1, sizeof(int)), *r = calloc(count + 1, sizeof(int));
    for (int i = 0; i < count; i++) {
        s[i] = val(rank, i, 3);
        r[i] = -9;
    }
    PX_MPI(MPI_Reduce(s, r, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
    if (rank == root) {
        for (int i = 0; i < count; i++) {
            int want = 0;
            for (int q = 0; q < size; q++)
                want += val(q, i, 3);
            if (r[i] != want) {
                PX_CHECK(0, "Reduce SUM count %d root %d elem %d: got %d want %d", count, root, i,
                         r[i], want);
                break;
            }
        }
        /* in place at the root */
        memcpy(r, s, sizeof(int) * count);
        PX_MPI(MPI_Reduce(MPI_IN_PLACE, r, count, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD));
    } else {
        PX_MPI(MPI_Reduce(s, NULL, count, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD));
    }
    if (rank == root)
        for (int i = 0; i < count; i++) {
            int want = val(0, i, 3);
            for (int q = 1; q < size; q++)
                want = val(q, i, 3) > want ? val(q, i, 3) : want;
            if (r[i] != want) {
                PX_CHECK(0, "Reduce IN_PLACE MAX count %d root %d elem %d: got %d want %d", count,
                         root, i, r[i], want);
                break;
            }
        }
    free(s);
    free(r);
}

static void check_aff(const aff_t *got, int count, int lo, int hi, const char *what, int c2,
                      int root)
{
    for (int i = 0; i < count; i++) {
        aff_t w = aff_fold(lo, hi, i);
        if (got[i].m != w.m || got[i].c != w.c) {
            PX_CHECK(0, "%s count %d root %d elem %d: got (%u,%u) want (%u,%u)", what, c2, root, i,
                     got[i].m, got[i].c, w.m, w.c);
            return;
        }
    }
}

static void test_reduce_noncomm(int count, int root)
{
    aff_t *s = malloc(sizeof(aff_t) * (count + 1)), *r = malloc(sizeof(aff_t) * (count + 1));
    for (int i = 0; i < count; i++)
        s[i] = aff_val(rank, i);
    PX_MPI(MPI_Reduce(s, r, count, aff_type, aff_op, root, MPI_COMM_WORLD));
    if (rank == root)
        check_aff(r, count, 0, size - 1, "Reduce(user non-commutative)", count, root);
    free(s);
    free(r);
}

static void test_allreduce(int count)
{
    int *s = calloc(count + 1, sizeof(int)), *r = calloc(count + 1, sizeof(int));
    double *ds = malloc(sizeof(double) * (count + 1)), *dr = malloc(sizeof(double) * (count + 1));
    for (int i = 0; i < count; i++) {
        s[i] = val(rank, i, 4);
        ds[i] = val(rank, i, 5) * 0.5;
    }
    PX_MPI(MPI_Allreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < count; i++) {
        int want = 0;
        for (int q = 0; q < size; q++)
            want += val(q, i, 4);
        if (r[i] != want) {
            PX_CHECK(0, "Allreduce SUM int count %d elem %d: got %d want %d", count, i, r[i], want);
            break;
        }
    }
    memcpy(dr, ds, sizeof(double) * count);
    PX_MPI(MPI_Allreduce(MPI_IN_PLACE, dr, count, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    for (int i = 0; i < count; i++) {
        double want = val(0, i, 5) * 0.5;
        for (int q = 1; q < size; q++)
            want = val(q, i, 5) * 0.5 < want ? val(q, i, 5) * 0.5 : want;
        if (dr[i] != want) {
            PX_CHECK(0, "Allreduce IN_PLACE MIN double count %d elem %d: got %g want %g", count, i,
                     dr[i], want);
            break;
        }
    }
    /* non-commutative user op, in place */
    aff_t *a = malloc(sizeof(aff_t) * (count + 1));
    for (int i = 0; i < count; i++)
        a[i] = aff_val(rank, i);
    PX_MPI(MPI_Allreduce(MPI_IN_PLACE, a, count, aff_type, aff_op, MPI_COMM_WORLD));
    check_aff(a, count, 0, size - 1, "Allreduce(user non-commutative)", count, -1);
    free(a);
    free(s);
    free(r);
    free(ds);
    free(dr);
}

static void test_gather_scatter(int count, int root)
{
    int *s = malloc(sizeof(int) * (count + 1)),
        *all = malloc(sizeof(int) * ((size_t)count * size + 1));
    for (int i = 0; i < count; i++)
        s[i] = val(rank, i, 6);
    for (int i = 0; i < count * size; i++)
        all[i] = -3;
    PX_MPI(MPI_Gather(s, count, MPI_INT, all, count, MPI_INT, root, MPI_COMM_WORLD));
    if (rank == root)
        CHECK_INTS(all, count * size, val(i / count, i % count, 6), "Gather count %d root %d",
                   count, root);
    /* in place at the root: its block is already in place */
    if (rank == root) {
        for (int i = 0; i < count * size; i++)
            all[i] = i / count == root ? val(root, i % count, 7) : -3;
        PX_MPI(MPI_Gather(MPI_IN_PLACE, count, MPI_INT, all, count, MPI_INT, root, MPI_COMM_WORLD));
        CHECK_INTS(all, count * size, val(i / count, i % count, 7),
                   "Gather IN_PLACE count %d root %d", count, root);
    } else {
        for (int i = 0; i < count; i++)
            s[i] = val(rank, i, 7);
        PX_MPI(MPI_Gather(s, count, MPI_INT, NULL, 0, MPI_INT, root, MPI_COMM_WORLD));
    }
    /* scatter */
    if (rank == root)
        for (int i = 0; i < count * size; i++)
            all[i] = val(i / count, i % count, 8);
    for (int i = 0; i < count; i++)
        s[i] = -4;
    PX_MPI(MPI_Scatter(all, count, MPI_INT, s, count, MPI_INT, root, MPI_COMM_WORLD));
    CHECK_INTS(s, count, val(rank, i, 8), "Scatter count %d root %d", count, root);
    if (rank == root) {
        PX_MPI(
            MPI_Scatter(all, count, MPI_INT, MPI_IN_PLACE, count, MPI_INT, root, MPI_COMM_WORLD));
        CHECK_INTS(all, count * size, val(i / count, i % count, 8),
                   "Scatter IN_PLACE root buffer count %d root %d", count, root);
    } else {
        for (int i = 0; i < count; i++)
            s[i] = -4;
        PX_MPI(MPI_Scatter(NULL, 0, MPI_INT, s, count, MPI_INT, root, MPI_COMM_WORLD));
        CHECK_INTS(s, count, val(rank, i, 8), "Scatter(2) count %d root %d", count, root);
    }
    free(s);
    free(all);
}

/* rank q contributes (q % 3) * count / 2 + 1 items at displacement with a gap */
static int vcount(int q, int count) { return count ? (q % 3) * count / 2 + 1 : 0; }

static void test_gatherv_scatterv(int count, int root)
{
    int *rc = malloc(sizeof(int) * size), *dp = malloc(sizeof(int) * size), tot = 0;
    for (int q = 0; q < size; q++) {
        rc[q] = vcount(q, count);
        dp[q] = tot + 2;
        tot += rc[q] + 2;
    }
    int mine = rc[rank];
    int *s = malloc(sizeof(int) * (mine + 1)), *all = malloc(sizeof(int) * (tot + 1));
    for (int i = 0; i < mine; i++)
        s[i] = val(rank, i, 9);
    for (int i = 0; i < tot; i++)
        all[i] = -5;
    PX_MPI(MPI_Gatherv(s, mine, MPI_INT, all, rc, dp, MPI_INT, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int q = 0; q < size; q++)
            CHECK_INTS(all + dp[q], rc[q], val(q, i, 9), "Gatherv count %d root %d from %d", count,
                       root, q);
    if (rank == root)
        for (int q = 0; q < size; q++)
            for (int i = 0; i < rc[q]; i++)
                all[dp[q] + i] = val(q, i, 10);
    for (int i = 0; i < mine; i++)
        s[i] = -6;
    PX_MPI(MPI_Scatterv(all, rc, dp, MPI_INT, s, mine, MPI_INT, root, MPI_COMM_WORLD));
    CHECK_INTS(s, mine, val(rank, i, 10), "Scatterv count %d root %d", count, root);
    /* in place at the root: its own block stays where it is */
    if (rank == root) {
        PX_MPI(
            MPI_Scatterv(all, rc, dp, MPI_INT, MPI_IN_PLACE, mine, MPI_INT, root, MPI_COMM_WORLD));
        for (int q = 0; q < size; q++)
            for (int i = 0; i < rc[q]; i++)
                all[dp[q] + i] = q == root ? val(q, i, 11) : -5;
        PX_MPI(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, rc, dp, MPI_INT, root,
                           MPI_COMM_WORLD));
        for (int q = 0; q < size; q++)
            CHECK_INTS(all + dp[q], rc[q], val(q, i, 11),
                       "Gatherv IN_PLACE count %d root %d from %d", count, root, q);
    } else {
        PX_MPI(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, s, mine, MPI_INT, root, MPI_COMM_WORLD));
        CHECK_INTS(s, mine, val(rank, i, 10), "Scatterv(2) count %d root %d", count, root);
        for (int i = 0; i < mine; i++)
            s[i] = val(rank, i, 11);
        PX_MPI(MPI_Gatherv(s, mine, MPI_INT, NULL, NULL, NULL, MPI_INT, root, MPI_COMM_WORLD));
    }
    free(s);
    free(all);
    free(rc);
    free(dp);
}

static void test_allgather(int count)
{
    int *s = malloc(sizeof(int) * (count + 1)),
        *all = malloc(sizeof(int) * ((size_t)count * size + 1));
    for (int i = 0; i < count; i++)
        s[i] = val(rank, i, 11);
    for (int i = 0; i < count * size; i++)
        all[i] = -3;
    PX_MPI(MPI_Allgather(s, count, MPI_INT, all, count, MPI_INT, MPI_COMM_WORLD));
    CHECK_INTS(all, count * size, val(i / count, i % count, 11), "Allgather count %d", count);
    for (int i = 0; i < count * size; i++)
        all[i] = i / count == rank ? val(rank, i % count, 12) : -3;
    PX_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, count, MPI_INT, MPI_COMM_WORLD));
    CHECK_INTS(all, count * size, val(i / count, i % count, 12), "Allgather IN_PLACE count %d",
               count);
    /* strided send type, contiguous receive */
    if (count) {
        MPI_Datatype vec;
        MPI_Type_vector(count, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        int *sv = malloc(sizeof(int) * 2 * count);
        for (int i = 0; i < 2 * count; i++)
            sv[i] = i % 2 ? -1 : val(rank, i / 2, 13);
        PX_MPI(MPI_Allgather(sv, 1, vec, all, count, MPI_INT, MPI_COMM_WORLD));
        CHECK_INTS(all, count * size, val(i / count, i % count, 13), "Allgather(vector) count %d",
                   count);
        MPI_Type_free(&vec);
        free(sv);
    }
    /* allgatherv */
    int *rc = malloc(sizeof(int) * size), *dp = malloc(sizeof(int) * size), tot = 0;
    for (int q = 0; q < size; q++) {
        rc[q] = vcount(q, count);
        dp[q] = tot + 1;
        tot += rc[q] + 1;
    }
    int *av = malloc(sizeof(int) * (tot + 1)), *sv = malloc(sizeof(int) * (rc[rank] + 1));
    for (int i = 0; i < rc[rank]; i++)
        sv[i] = val(rank, i, 14);
    for (int i = 0; i < tot; i++)
        av[i] = -2;
    PX_MPI(MPI_Allgatherv(sv, rc[rank], MPI_INT, av, rc, dp, MPI_INT, MPI_COMM_WORLD));
    for (int q = 0; q < size; q++)
        CHECK_INTS(av + dp[q], rc[q], val(q, i, 14), "Allgatherv count %d from %d", count, q);
    for (int i = 0; i < tot; i++)
        av[i] = -2;
    for (int i = 0; i < rc[rank]; i++)
        av[dp[rank] + i] = val(rank, i, 15);
    PX_MPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, av, rc, dp, MPI_INT, MPI_COMM_WORLD));
    for (int q = 0; q < size; q++)
        CHECK_INTS(av + dp[q], rc[q], val(q, i, 15), "Allgatherv IN_PLACE count %d from %d", count,
                   q);
    free(av);
    free(sv);
    free(rc);
    free(dp);
    free(s);
    free(all);
}

/* element i of the block from q to r */
static int a2a(int q, int r, int i) { return val(q, i, 16 + r); }

static void test_alltoall(int count)
{
    size_t tot = (size_t)count * size;
    int *s = malloc(sizeof(int) * (tot + 1)), *r = malloc(sizeof(int) * (tot + 1));
    for (size_t k = 0; k < tot; k++) {
        s[k] = a2a(rank, (int)(k / count), (int)(k % count));
        r[k] = -1;
    }
    PX_MPI(MPI_Alltoall(s, count, MPI_INT, r, count, MPI_INT, MPI_COMM_WORLD));
    CHECK_INTS(r, (int)tot, a2a(i / count, rank, i % count), "Alltoall count %d", count);
    memcpy(r, s, sizeof(int) * tot);
    PX_MPI(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, count, MPI_INT, MPI_COMM_WORLD));
    CHECK_INTS(r, (int)tot, a2a(i / count, rank, i % count), "Alltoall IN_PLACE count %d", count);
    /* alltoallv: block to q has vcount(rank+q) items, with gaps */
    int *sc = malloc(sizeof(int) * size), *sd = malloc(sizeof(int) * size);
    int *rc = malloc(sizeof(int) * size), *rd = malloc(sizeof(int) * size), st = 0, rt = 0;
    for (int q = 0; q < size; q++) {
        sc[q] = vcount(rank + q, count);
        sd[q] = st + 1;
        st += sc[q] + 1;
        rc[q] = vcount(q + rank, count);
        rd[q] = rt + 3;
        rt += rc[q] + 3;
    }
    int *sv = malloc(sizeof(int) * (st + 1)), *rv = malloc(sizeof(int) * (rt + 1));
    for (int q = 0; q < size; q++)
        for (int i = 0; i < sc[q]; i++)
            sv[sd[q] + i] = a2a(rank, q, i);
    for (int i = 0; i < rt; i++)
        rv[i] = -1;
    PX_MPI(MPI_Alltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, MPI_COMM_WORLD));
    for (int q = 0; q < size; q++)
        CHECK_INTS(rv + rd[q], rc[q], a2a(q, rank, i), "Alltoallv count %d from %d", count, q);
    /* in place: symmetric counts needed, use rc for both */
    for (int q = 0; q < size; q++)
        for (int i = 0; i < rc[q]; i++)
            rv[rd[q] + i] = a2a(rank, q, i);
    PX_MPI(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rv, rc, rd, MPI_INT,
                         MPI_COMM_WORLD));
    for (int q = 0; q < size; q++)
        CHECK_INTS(rv + rd[q], rc[q], a2a(q, rank, i), "Alltoallv IN_PLACE count %d from %d", count,
                   q);
    /* alltoallw: byte displacements, receive side strided for odd ranks */
    MPI_Datatype *stys = malloc(sizeof(MPI_Datatype) * size),
                 *rtys = malloc(sizeof(MPI_Datatype) * size);
    int *sdb = malloc(sizeof(int) * size), *rdb = malloc(sizeof(int) * size);
    int *rw = malloc(sizeof(int) * (2 * rt + 2));
    MPI_Datatype strided[64];
    for (int q = 0; q < size; q++) {
        stys[q] = MPI_INT;
        sdb[q] = sd[q] * (int)sizeof(int);
        if (q % 2 && rc[q]) {
            MPI_Type_vector(rc[q], 1, 2, MPI_INT, &strided[q]);
            MPI_Type_commit(&strided[q]);
            rtys[q] = strided[q];
        } else {
            rtys[q] = MPI_INT;
        }
        rdb[q] = 2 * rd[q] * (int)sizeof(int);
    }
    int *rcw = malloc(sizeof(int) * size);
    for (int q = 0; q < size; q++)
        rcw[q] = q % 2 && rc[q] ? 1 : rc[q];
    for (int i = 0; i < 2 * rt + 2; i++)
        rw[i] = -1;
    PX_MPI(MPI_Alltoallw(sv, sc, sdb, stys, rw, rcw, rdb, rtys, MPI_COMM_WORLD));
    for (int q = 0; q < size; q++) {
        int step = q % 2 ? 2 : 1, *p = rw + 2 * rd[q];
        for (int i = 0; i < rc[q]; i++)
            if (p[i * step] != a2a(q, rank, i)) {
                PX_CHECK(0, "Alltoallw count %d from %d elem %d: got %d want %d", count, q, i,
                         p[i * step], a2a(q, rank, i));
                break;
            }
    }
    for (int q = 0; q < size; q++)
        if (q % 2 && rc[q])
            MPI_Type_free(&strided[q]);
    free(stys);
    free(rtys);
    free(sdb);
    free(rdb);
    free(rw);
    free(rcw);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sv);
    free(rv);
    free(s);
    free(r);
}

static void test_reduce_scatter(int count)
{
    size_t tot = (size_t)count * size;
    int *s = malloc(sizeof(int) * (tot + 1)), *r = malloc(sizeof(int) * (tot + 1));
    for (size_t k = 0; k < tot; k++)
        s[k] = val(rank, (int)k, 20);
    PX_MPI(MPI_Reduce_scatter_block(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < count; i++) {
        int want = 0;
        for (int q = 0; q < size; q++)
            want += val(q, rank * count + i, 20);
        if (r[i] != want) {
            PX_CHECK(0, "Reduce_scatter_block count %d elem %d: got %d want %d", count, i, r[i],
                     want);
            break;
        }
    }
    memcpy(r, s, sizeof(int) * tot);
    PX_MPI(MPI_Reduce_scatter_block(MPI_IN_PLACE, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < count; i++) {
        int want = 0;
        for (int q = 0; q < size; q++)
            want += val(q, rank * count + i, 20);
        if (r[i] != want) {
            PX_CHECK(0, "Reduce_scatter_block IN_PLACE count %d elem %d: got %d want %d", count, i,
                     r[i], want);
            break;
        }
    }
    /* reduce_scatter with uneven counts and the non-commutative op */
    int *rc = malloc(sizeof(int) * size), tv = 0, off = 0;
    for (int q = 0; q < size; q++) {
        rc[q] = vcount(q, count);
        tv += rc[q];
    }
    for (int q = 0; q < rank; q++)
        off += rc[q];
    aff_t *as = malloc(sizeof(aff_t) * (tv + 1)), *ar = malloc(sizeof(aff_t) * (tv + 1));
    for (int i = 0; i < tv; i++)
        as[i] = aff_val(rank, i);
    PX_MPI(MPI_Reduce_scatter(as, ar, rc, aff_type, aff_op, MPI_COMM_WORLD));
    for (int i = 0; i < rc[rank]; i++) {
        aff_t w = aff_fold(0, size - 1, off + i);
        if (ar[i].m != w.m || ar[i].c != w.c) {
            PX_CHECK(0, "Reduce_scatter(user op) count %d elem %d wrong", count, i);
            break;
        }
    }
    int *is = malloc(sizeof(int) * (tv + 1));
    for (int i = 0; i < tv; i++)
        is[i] = val(rank, i, 21);
    PX_MPI(MPI_Reduce_scatter(MPI_IN_PLACE, is, rc, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < rc[rank]; i++) {
        int want = val(0, off + i, 21);
        for (int q = 1; q < size; q++)
            want = val(q, off + i, 21) > want ? val(q, off + i, 21) : want;
        if (is[i] != want) {
            PX_CHECK(0, "Reduce_scatter IN_PLACE MAX count %d elem %d: got %d want %d", count, i,
                     is[i], want);
            break;
        }
    }
    free(is);
    free(as);
    free(ar);
    free(rc);
    free(s);
    free(r);
}

static void test_scan(int count)
{
    int *s = calloc(count + 1, sizeof(int)), *r = calloc(count + 1, sizeof(int));
    for (int i = 0; i < count; i++)
        s[i] = val(rank, i, 22);
    PX_MPI(MPI_Scan(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < count; i++) {
        int want = 0;
        for (int q = 0; q <= rank; q++)
            want += val(q, i, 22);
        if (r[i] != want) {
            PX_CHECK(0, "Scan count %d elem %d: got %d want %d", count, i, r[i], want);
            break;
        }
    }
    for (int i = 0; i < count; i++)
        r[i] = -77;
    PX_MPI(MPI_Exscan(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < count && rank > 0; i++) {
        int want = 0;
        for (int q = 0; q < rank; q++)
            want += val(q, i, 22);
        if (r[i] != want) {
            PX_CHECK(0, "Exscan count %d elem %d: got %d want %d", count, i, r[i], want);
            break;
        }
    }
    aff_t *a = malloc(sizeof(aff_t) * (count + 1)), *b = malloc(sizeof(aff_t) * (count + 1));
    for (int i = 0; i < count; i++)
        a[i] = b[i] = aff_val(rank, i);
    PX_MPI(MPI_Scan(MPI_IN_PLACE, a, count, aff_type, aff_op, MPI_COMM_WORLD));
    check_aff(a, count, 0, rank, "Scan IN_PLACE(user non-commutative)", count, -1);
    PX_MPI(MPI_Exscan(MPI_IN_PLACE, b, count, aff_type, aff_op, MPI_COMM_WORLD));
    if (rank > 0)
        check_aff(b, count, 0, rank - 1, "Exscan IN_PLACE(user non-commutative)", count, -1);
    free(a);
    free(b);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "coll_all");
    rank = px_test_rank;
    size = px_test_size;
    MPI_Type_contiguous(2, MPI_UNSIGNED, &aff_type);
    MPI_Type_commit(&aff_type);
    MPI_Op_create(px_aff_fn, 0, &aff_op);
    int roots[3] = {0, size / 2, size - 1}, nroots = size == 1 ? 1 : size == 2 ? 2 : 3;
    for (int k = 0; k < NCOUNTS; k++) {
        int count = counts[k];
        /* per-rank blocks stay below 256 KB so 8 ranks fit in a few MB */
        int blk = count > 65536 ? 65536 : count;
        for (int j = 0; j < nroots; j++) {
            test_bcast(count, roots[j]);
            if (count <= 65536)
                test_bcast_vector(count, roots[j]);
            test_reduce(count, roots[j]);
            if (count <= 65536)
                test_reduce_noncomm(count, roots[j]);
            test_gather_scatter(blk / (count > 4099 ? 8 : 1), roots[j]);
            test_gatherv_scatterv(blk / (count > 4099 ? 8 : 1), roots[j]);
        }
        test_allreduce(count);
        test_allgather(blk / (count > 4099 ? 8 : 1));
        test_alltoall(blk / (count > 4099 ? 8 : 1));
        test_reduce_scatter(count / size);
        test_scan(count > 65536 ? 65536 : count);
    }
    PX_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Op_free(&aff_op);
    MPI_Type_free(&aff_type);
    return px_test_finish("all blocking collectives, counts 0..%d, %d roots, IN_PLACE, "
                          "user non-commutative op, vector types",
                          counts[NCOUNTS - 1], nroots);
}
