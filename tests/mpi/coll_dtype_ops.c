/* Reductions on derived datatypes, in every function that applies an
 * operation: MPI_Reduce, Allreduce, Reduce_scatter(_block), Scan, Exscan,
 * their nonblocking and persistent forms, MPI_Reduce_local, and the
 * one-sided MPI_Accumulate, Get_accumulate and Raccumulate.
 * - predefined operations on types made of one predefined type: a vector
 *   of MPI_DOUBLE with gaps (MPI_SUM, MPI_MAX), a contiguous of MPI_INT
 *   (MPI_BAND, MPI_PROD), a struct of MPI_DOUBLE_INT pairs with gaps
 *   (MPI_MINLOC), applied element by element;
 * - a user operation on the vector with gaps;
 * - the receive buffer's bytes outside the type map (between the blocks,
 *   after them and the padding of the pairs) keep what the rank put there;
 * - a struct of MPI_DOUBLE and MPI_INT with MPI_SUM fails with MPI_ERR_OP.
 * Results are compared with a plain computation, at small and larger
 * counts. */
#include "px_test.h"

#include <stddef.h>

enum { K_D, K_I, K_DI };                                 /* element kinds */
enum { O_SUM, O_MAX, O_BAND, O_PROD, O_MINLOC, O_USER }; /* operations */
enum { MAXEL = 8, NCASES = 6 };

typedef struct {
    double v;
    int i;
} di_t;

typedef struct {
    const char *name;
    MPI_Datatype dt;
    MPI_Op op;
    int kind, opk;
    MPI_Aint extent;
    int nel;             /* elements per item */
    MPI_Aint off[MAXEL]; /* their byte offsets in an item */
} tcase_t;

static tcase_t cases[NCASES + 1]; /* the last: one-sided only */
static const tcase_t *user_case;  /* the layout the user operation walks */

/* the bytes outside the type map: this rank's own */
static unsigned char sentinel(int rank) { return (unsigned char)(0x50 + rank); }

/* element e of item k of rank r's contribution */
static double val_d(int r, MPI_Aint k, int e) { return (double)((r * 7 + k * 3 + e * 5) % 11 - 3); }
static int val_i(int r, MPI_Aint k, int e, int opk)
{
    if (opk == O_PROD)
        return 1 + (int)((r + k + e) % 3);
    return (int)(0xfff ^ (1 << ((r + e) % 12)) ^ (int)((k % 5) << 13));
}
static di_t val_di(int r, MPI_Aint k, int e)
{
    return (di_t){(double)((r * 5 + k + e * 3) % 4), r * 100 + (int)(k % 7) * 10 + e};
}

static void put_elem(const tcase_t *t, char *p, int r, MPI_Aint k, int e)
{
    if (t->kind == K_D) {
        double v = val_d(r, k, e);
        memcpy(p, &v, sizeof(v));
    } else if (t->kind == K_I) {
        int v = val_i(r, k, e, t->opk);
        memcpy(p, &v, sizeof(v));
    } else { /* the pair's two members only: not its padding */
        di_t v = val_di(r, k, e);
        memcpy(p, &v.v, sizeof(v.v));
        memcpy(p + offsetof(di_t, i), &v.i, sizeof(v.i));
    }
}

/* count items (global items first..) of rank r's data in a buffer filled
 * with sentinel(fill) */
static void fill(const tcase_t *t, char *buf, MPI_Aint first, MPI_Aint count, int r, int fill_rank)
{
    memset(buf, sentinel(fill_rank), (size_t)(count * t->extent));
    for (MPI_Aint k = 0; k < count; k++)
        for (int e = 0; e < t->nel; e++)
            put_elem(t, buf + k * t->extent + t->off[e], r, first + k, e);
}

/* what ranks lo..hi give for the elements of count items, into a buffer of
 * sentinel(me) */
static void expect(const tcase_t *t, char *buf, MPI_Aint first, MPI_Aint count, int lo, int hi,
                   int me)
{
    memset(buf, sentinel(me), (size_t)(count * t->extent));
    for (MPI_Aint k = 0; k < count; k++)
        for (int e = 0; e < t->nel; e++) {
            char *p = buf + k * t->extent + t->off[e];
            MPI_Aint g = first + k;
            if (t->kind == K_D) {
                double a = val_d(lo, g, e);
                for (int r = lo + 1; r <= hi; r++) {
                    double b = val_d(r, g, e);
                    a = t->opk == O_MAX ? (b > a ? b : a) : a + b;
                }
                memcpy(p, &a, sizeof(a));
            } else if (t->kind == K_I) {
                int a = val_i(lo, g, e, t->opk);
                for (int r = lo + 1; r <= hi; r++)
                    a = t->opk == O_PROD ? a * val_i(r, g, e, t->opk) : a & val_i(r, g, e, t->opk);
                memcpy(p, &a, sizeof(a));
            } else {
                di_t a = val_di(lo, g, e);
                for (int r = lo + 1; r <= hi; r++) {
                    di_t b = val_di(r, g, e);
                    if (b.v < a.v || (b.v == a.v && b.i < a.i))
                        a = b;
                }
                memcpy(p, &a.v, sizeof(a.v));
                memcpy(p + offsetof(di_t, i), &a.i, sizeof(a.i));
            }
        }
}

/* whether byte i of an item belongs to the type map */
static int in_map(const tcase_t *t, MPI_Aint i)
{
    MPI_Aint len = t->kind == K_D ? 8 : t->kind == K_I ? 4 : 12; /* the pairs' padding: not */
    for (int e = 0; e < t->nel; e++)
        if (i >= t->off[e] && i < t->off[e] + len)
            return 1;
    return 0;
}

static void compare(const tcase_t *t, const char *fn, MPI_Aint count, const char *got,
                    const char *want)
{
    size_t n = (size_t)(count * t->extent);
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            MPI_Aint in_item = (MPI_Aint)i % t->extent;
            PX_CHECK(0,
                     "%s %s count %ld: byte %zu (item %ld, offset %ld, %s) is 0x%02x, want 0x%02x",
                     fn, t->name, (long)count, i, (long)(i / (size_t)t->extent), (long)in_item,
                     in_map(t, in_item) ? "in the type map" : "outside the type map",
                     (unsigned char)got[i], (unsigned char)want[i]);
            return;
        }
}

/* the user operation: a sum over the vector's elements */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const tcase_t *t = user_case;
    (void)dt; /* a persistent collective may hand over a duplicate */
    for (int k = 0; k < *len; k++)
        for (int e = 0; e < t->nel; e++) {
            double a, b;
            char *q = (char *)inout + k * t->extent + t->off[e];
            memcpy(&a, (char *)in + k * t->extent + t->off[e], sizeof(a));
            memcpy(&b, q, sizeof(b));
            b += a;
            memcpy(q, &b, sizeof(b));
        }
}

static void set_case(int i, const tcase_t *layout, const char *name, MPI_Op op, int opk)
{
    cases[i] = *layout;
    cases[i].name = name;
    cases[i].op = op;
    cases[i].opk = opk;
}

static void make_cases(MPI_Op user)
{
    MPI_Datatype vec, ints, di2;
    /* 3 blocks of 2 doubles, 3 apart, in items of 10: gaps at 2, 5, 8, 9 */
    MPI_Type_vector(3, 2, 3, MPI_DOUBLE, &vec);
    MPI_Datatype vecr;
    MPI_Type_create_resized(vec, 0, 10 * sizeof(double), &vecr);
    MPI_Type_free(&vec);
    MPI_Type_commit(&vecr);
    MPI_Type_contiguous(4, MPI_INT, &ints);
    MPI_Type_commit(&ints);
    /* pairs 0 and 2 of every 3 (and the padding of each) are gaps */
    int bl[2] = {1, 1};
    MPI_Aint dsp[2] = {0, 2 * sizeof(di_t)};
    MPI_Datatype tys[2] = {MPI_DOUBLE_INT, MPI_DOUBLE_INT}, dis;
    MPI_Type_create_struct(2, bl, dsp, tys, &dis);
    MPI_Type_create_resized(dis, 0, 3 * sizeof(di_t), &di2);
    MPI_Type_free(&dis);
    MPI_Type_commit(&di2);
    tcase_t v = {.dt = vecr, .kind = K_D, .extent = 10 * sizeof(double), .nel = 6};
    MPI_Aint vo[6] = {0, 8, 24, 32, 48, 56};
    memcpy(v.off, vo, sizeof(vo));
    set_case(0, &v, "vector/MPI_SUM", MPI_SUM, O_SUM);
    set_case(1, &v, "vector/MPI_MAX", MPI_MAX, O_MAX);
    tcase_t c = {.dt = ints, .kind = K_I, .extent = 4 * sizeof(int), .nel = 4};
    for (int e = 0; e < 4; e++)
        c.off[e] = e * (MPI_Aint)sizeof(int);
    set_case(2, &c, "contiguous/MPI_BAND", MPI_BAND, O_BAND);
    set_case(3, &c, "contiguous/MPI_PROD", MPI_PROD, O_PROD);
    cases[4] = (tcase_t){.name = "struct of MPI_DOUBLE_INT/MPI_MINLOC",
                         .dt = di2,
                         .op = MPI_MINLOC,
                         .kind = K_DI,
                         .opk = O_MINLOC,
                         .extent = 3 * sizeof(di_t),
                         .nel = 2,
                         .off = {0, 2 * sizeof(di_t)}};
    cases[6] = (tcase_t){.name = "MPI_DOUBLE_INT/MPI_MINLOC",
                         .dt = MPI_DOUBLE_INT,
                         .op = MPI_MINLOC,
                         .kind = K_DI,
                         .opk = O_MINLOC,
                         .extent = sizeof(di_t),
                         .nel = 1};
    set_case(5, &v, "vector/user operation", user, O_USER);
    user_case = &cases[5];
}

enum { F_REDUCE, F_ALLREDUCE, F_ALLREDUCE_INPLACE, F_RS, F_RSB, F_SCAN, F_EXSCAN, F_NF };
static const char *fnames[F_NF] = {
    "Reduce", "Allreduce", "Allreduce(in place)", "Reduce_scatter", "Reduce_scatter_block",
    "Scan",   "Exscan"};

/* mode 0 blocking, 1 nonblocking, 2 persistent */
static int start(int f, int mode, const void *sb, void *rb, int count, const int *rcounts,
                 const tcase_t *t, int root, MPI_Request *req)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Datatype dt = t->dt;
    MPI_Op op = t->op;
    *req = MPI_REQUEST_NULL;
    switch (f) {
    case F_REDUCE:
        return mode == 0   ? MPI_Reduce(sb, rb, count, dt, op, root, w)
               : mode == 1 ? MPI_Ireduce(sb, rb, count, dt, op, root, w, req)
                           : MPI_Reduce_init(sb, rb, count, dt, op, root, w, MPI_INFO_NULL, req);
    case F_ALLREDUCE:
    case F_ALLREDUCE_INPLACE:
        return mode == 0   ? MPI_Allreduce(sb, rb, count, dt, op, w)
               : mode == 1 ? MPI_Iallreduce(sb, rb, count, dt, op, w, req)
                           : MPI_Allreduce_init(sb, rb, count, dt, op, w, MPI_INFO_NULL, req);
    case F_RS:
        return mode == 0 ? MPI_Reduce_scatter(sb, rb, rcounts, dt, op, w)
               : mode == 1
                   ? MPI_Ireduce_scatter(sb, rb, rcounts, dt, op, w, req)
                   : MPI_Reduce_scatter_init(sb, rb, rcounts, dt, op, w, MPI_INFO_NULL, req);
    case F_RSB:
        return mode == 0 ? MPI_Reduce_scatter_block(sb, rb, count, dt, op, w)
               : mode == 1
                   ? MPI_Ireduce_scatter_block(sb, rb, count, dt, op, w, req)
                   : MPI_Reduce_scatter_block_init(sb, rb, count, dt, op, w, MPI_INFO_NULL, req);
    case F_SCAN:
        return mode == 0   ? MPI_Scan(sb, rb, count, dt, op, w)
               : mode == 1 ? MPI_Iscan(sb, rb, count, dt, op, w, req)
                           : MPI_Scan_init(sb, rb, count, dt, op, w, MPI_INFO_NULL, req);
    default:
        return mode == 0   ? MPI_Exscan(sb, rb, count, dt, op, w)
               : mode == 1 ? MPI_Iexscan(sb, rb, count, dt, op, w, req)
                           : MPI_Exscan_init(sb, rb, count, dt, op, w, MPI_INFO_NULL, req);
    }
}

static void run_one(const tcase_t *t, int f, int mode, int count)
{
    static const char *modes[3] = {"", "nonblocking ", "persistent "};
    int n = px_test_size, me = px_test_rank, root = n - 1;
    char fn[96];
    snprintf(fn, sizeof(fn), "%s%s", modes[mode], fnames[f]);
    /* Reduce_scatter: rank i gets count + i % 2 items */
    int *rcounts = malloc(sizeof(int) * (size_t)n);
    MPI_Aint total = 0, first = 0, mine = count;
    for (int i = 0; i < n; i++) {
        rcounts[i] = f == F_RS ? count + i % 2 : count;
        if (i < me)
            first += rcounts[i];
        total += rcounts[i];
    }
    if (f == F_RS || f == F_RSB)
        mine = rcounts[me];
    else {
        total = count;
        first = 0;
    }
    size_t sbytes = (size_t)(total * t->extent), rbytes = (size_t)(mine * t->extent);
    char *sb = malloc(sbytes + 1), *rb = malloc(rbytes + 1), *want = malloc(rbytes + 1);
    fill(t, sb, 0, total, me, me + 8);
    if (f == F_ALLREDUCE_INPLACE)
        fill(t, rb, 0, total, me, me);
    else
        memset(rb, sentinel(me), rbytes);
    const void *src = f == F_ALLREDUCE_INPLACE ? MPI_IN_PLACE : sb;
    MPI_Request req;
    int rc = start(f, mode, src, rb, f == F_RS ? 0 : count, rcounts, t, root, &req);
    if (rc == MPI_SUCCESS && mode == 2)
        rc = MPI_Start(&req);
    if (rc == MPI_SUCCESS && mode)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (mode == 2 && req != MPI_REQUEST_NULL)
        MPI_Request_free(&req);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        PX_CHECK(0, "%s %s count %d: %s", fn, t->name, count, msg);
    } else if (f == F_EXSCAN && me == 0) {
        /* rank 0's result is undefined: only the gaps are checked */
        for (size_t i = 0; i < rbytes; i++)
            want[i] = in_map(t, (MPI_Aint)(i % (size_t)t->extent)) ? rb[i] : (char)sentinel(me);
        compare(t, fn, count, rb, want);
    } else if (f != F_REDUCE || me == root) {
        int lo = 0, hi = f == F_SCAN ? me : f == F_EXSCAN ? me - 1 : n - 1;
        expect(t, want, first, mine, lo, hi, me);
        compare(t, fn, mine, rb, want);
    } else {
        memset(want, sentinel(me), rbytes);
        compare(t, fn, mine, rb, want);
    }
    free(sb), free(rb), free(want), free(rcounts);
}

static void reduce_local(const tcase_t *t, int count)
{
    size_t bytes = (size_t)(count * t->extent);
    char *in = malloc(bytes), *io = malloc(bytes), *want = malloc(bytes);
    fill(t, in, 0, count, 1, 9);
    fill(t, io, 0, count, 0, 3);
    int rc = MPI_Reduce_local(in, io, count, t->dt, t->op);
    PX_CHECK(rc == MPI_SUCCESS, "Reduce_local %s count %d: error %d", t->name, count, rc);
    expect(t, want, 0, count, 0, 1, 3);
    if (rc == MPI_SUCCESS)
        compare(t, "Reduce_local", count, io, want);
    free(in), free(io), free(want);
}

/* one-sided: every rank combines its data into rank 0's window (created:
 * through the protocol; allocated on one machine: loads and stores) */
static void rma(int create)
{
    int n = px_test_size, me = px_test_rank;
    enum { CNT = 3 };
    /* regions: vector MPI_SUM (Accumulate), vector MPI_MAX (Raccumulate),
     * contiguous MPI_BAND (Get_accumulate), contiguous MPI_PROD
     * (Accumulate), struct of pairs MPI_MINLOC (Accumulate), MPI_DOUBLE_INT
     * itself MPI_MINLOC (Accumulate) */
    enum { NR = 6 };
    const int which[NR] = {0, 1, 2, 3, 4, 6};
    MPI_Aint at[NR + 1];
    at[0] = 0;
    for (int i = 0; i < NR; i++)
        at[i + 1] = at[i] + CNT * cases[which[i]].extent;
    char *base;
    MPI_Win win;
    char *mem = NULL;
    if (create) {
        base = mem = malloc((size_t)at[NR]);
        PX_MPI(MPI_Win_create(base, at[NR], 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
        PX_MPI(MPI_Win_allocate(at[NR], 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    /* rank 0's own data is the starting value */
    for (int i = 0; i < NR; i++)
        fill(&cases[which[i]], base + at[i], 0, CNT, 0, me);
    char *org[NR], *res = malloc((size_t)(CNT * cases[2].extent));
    for (int i = 0; i < NR; i++) {
        org[i] = malloc((size_t)(CNT * cases[which[i]].extent));
        fill(&cases[which[i]], org[i], 0, CNT, me + 1, me);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request rq;
    PX_MPI(MPI_Win_lock_all(0, win));
    const tcase_t *t = &cases[0];
    PX_MPI(MPI_Accumulate(org[0], CNT, t->dt, 0, at[0], CNT, t->dt, t->op, win));
    t = &cases[1];
    PX_MPI(MPI_Raccumulate(org[1], CNT, t->dt, 0, at[1], CNT, t->dt, t->op, win, &rq));
    PX_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    t = &cases[2];
    PX_MPI(
        MPI_Get_accumulate(org[2], CNT, t->dt, res, CNT, t->dt, 0, at[2], CNT, t->dt, t->op, win));
    t = &cases[3];
    PX_MPI(MPI_Accumulate(org[3], CNT, t->dt, 0, at[3], CNT, t->dt, t->op, win));
    t = &cases[4];
    PX_MPI(MPI_Accumulate(org[4], CNT, t->dt, 0, at[4], CNT, t->dt, t->op, win));
    t = &cases[6];
    PX_MPI(MPI_Accumulate(org[5], CNT, t->dt, 0, at[5], CNT, t->dt, t->op, win));
    PX_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        char *want = malloc((size_t)at[NR]);
        PX_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        static const char *fns[NR] = {"Accumulate", "Raccumulate", "Get_accumulate",
                                      "Accumulate", "Accumulate",  "Accumulate"};
        for (int i = 0; i < NR; i++) {
            expect(&cases[which[i]], want + at[i], 0, CNT, 0, n, me);
            compare(&cases[which[i]], fns[i], CNT, base + at[i], want + at[i]);
        }
        PX_MPI(MPI_Win_unlock(0, win));
        free(want);
    }
    PX_MPI(MPI_Win_free(&win));
    free(mem);
    for (int i = 0; i < NR; i++)
        free(org[i]);
    free(res);
}

static void mixed(void)
{
    int bl[2] = {1, 1};
    MPI_Aint dsp[2] = {0, sizeof(double)};
    MPI_Datatype tys[2] = {MPI_DOUBLE, MPI_INT}, mt;
    MPI_Type_create_struct(2, bl, dsp, tys, &mt);
    MPI_Type_commit(&mt);
    static double a[64], b[64]; /* room for two items of every type used */
    MPI_Request req = MPI_REQUEST_NULL;
    PX_EXPECT_CLASS(MPI_Allreduce(a, b, 2, mt, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    PX_EXPECT_CLASS(MPI_Reduce(a, b, 2, mt, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    PX_EXPECT_CLASS(MPI_Iallreduce(a, b, 2, mt, MPI_SUM, MPI_COMM_WORLD, &req), MPI_ERR_OP);
    PX_EXPECT_CLASS(MPI_Scan(a, b, 2, mt, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    PX_EXPECT_CLASS(MPI_Reduce_local(a, b, 2, mt, MPI_SUM), MPI_ERR_OP);
    /* MPI_IN_PLACE or one buffer twice: an error, not a crash */
    PX_EXPECT_CLASS(MPI_Reduce_local(MPI_IN_PLACE, b, 2, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    PX_EXPECT_CLASS(MPI_Reduce_local(a, MPI_IN_PLACE, 2, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    PX_EXPECT_CLASS(MPI_Reduce_local(b, b, 2, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    PX_EXPECT_CLASS(MPI_Reduce_local(a, b, 2, mt, MPI_MINLOC), MPI_ERR_OP);
    /* a predefined operation not defined for the one type: still refused */
    PX_EXPECT_CLASS(MPI_Allreduce(a, b, 2, cases[0].dt, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    PX_EXPECT_CLASS(MPI_Allreduce(a, b, 1, cases[4].dt, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    MPI_Type_free(&mt);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "coll_dtype_ops");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Op user;
    MPI_Op_create(user_sum, 1, &user);
    make_cases(user);
    static const int counts[] = {1, 3, 700};
    int runs = 0;
    for (int c = 0; c < NCASES; c++)
        for (int k = 0; k < 3; k++) {
            reduce_local(&cases[c], counts[k]);
            for (int f = 0; f < F_NF; f++)
                for (int mode = 0; mode < 3; mode++, runs++)
                    run_one(&cases[c], f, mode, counts[k]);
        }
    rma(0);
    rma(1);
    mixed();
    MPI_Type_free(&cases[0].dt); /* cases 1 and 5 share it */
    MPI_Type_free(&cases[2].dt); /* and case 3 */
    MPI_Type_free(&cases[4].dt);
    MPI_Op_free(&user);
    return px_test_finish("%d reductions on 6 derived-type cases, one-sided, mixed types refused",
                          runs);
}
