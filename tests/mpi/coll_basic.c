/* Barrier, Bcast, Reduce, Allreduce: results checked element by element
 * against values computed locally, for counts 0 .. 1 MB, every root class
 * (first, middle, last), ops SUM/MAX/MIN/PROD on int, double and long long,
 * MAXLOC/MINLOC on MPI_DOUBLE_INT, and MPI_IN_PLACE (Allreduce, Reduce at
 * the root). Barrier is checked to actually wait for the last arrival. */
#include "px_test.h"

typedef struct {
    double val;
    int loc;
} double_int_t;

enum { T_INT, T_DOUBLE, T_LL, NTYPES };
static const char *type_names[NTYPES] = {"int", "double", "long long"};
static MPI_Datatype mpi_type(int t)
{
    return t == T_INT ? MPI_INT : t == T_DOUBLE ? MPI_DOUBLE : MPI_LONG_LONG;
}

enum { OP_SUM, OP_MAX, OP_MIN, OP_PROD, NOPS };
static const char *op_names[NOPS] = {"SUM", "MAX", "MIN", "PROD"};
static MPI_Op mpi_op(int op)
{
    return op == OP_SUM ? MPI_SUM : op == OP_MAX ? MPI_MAX : op == OP_MIN ? MPI_MIN : MPI_PROD;
}

/* Exactly representable contributions, so float results are exact too. */
static long long contrib(int op, int t, int rank, int i)
{
    switch (op) {
    case OP_SUM:
        if (t == T_LL)
            return (rank + 1) * 1000000000000LL + i;
        return (long long)(rank + 1) * ((i % 17) - 8);
    case OP_MAX:
    case OP_MIN:
        return (long long)((i * 7 + rank * 13) % 101 - 50) * (t == T_LL ? (1LL << 40) : 1);
    default: {
        int m = (i + rank) % 4;
        return m == 0 ? 2 : m == 1 ? -1 : 1;
    }
    }
}

static void put(void *buf, int t, int i, long long v)
{
    if (t == T_INT)
        ((int *)buf)[i] = (int)v;
    else if (t == T_DOUBLE)
        ((double *)buf)[i] = (double)v;
    else
        ((long long *)buf)[i] = v;
}

static long long get(const void *buf, int t, int i)
{
    if (t == T_INT)
        return ((const int *)buf)[i];
    if (t == T_DOUBLE)
        return (long long)((const double *)buf)[i];
    return ((const long long *)buf)[i];
}

static long long expected(int op, int t, int n, int i)
{
    long long acc = contrib(op, t, 0, i);
    for (int r = 1; r < n; r++) {
        long long v = contrib(op, t, r, i);
        acc = op == OP_SUM   ? acc + v
              : op == OP_MAX ? (v > acc ? v : acc)
              : op == OP_MIN ? (v < acc ? v : acc)
                             : acc * v;
    }
    return acc;
}

static void fill(void *buf, int op, int t, int count)
{
    for (int i = 0; i < count; i++)
        put(buf, t, i, contrib(op, t, px_test_rank, i));
}

static int check(const void *buf, int op, int t, int count, const char *what, int root)
{
    for (int i = 0; i < count; i++) {
        long long want = expected(op, t, px_test_size, i), got = get(buf, t, i);
        if (got != want) {
            PX_CHECK(0, "%s %s %s count %d root %d: element %d is %lld, expected %lld", what,
                     op_names[op], type_names[t], count, root, i, got, want);
            return 1;
        }
    }
    return 0;
}

static int roots[3], nroots;

static void reductions(void)
{
    const int counts[] = {0, 1, 7, 1000, 16384, 131072};
    const int ncounts = (int)(sizeof(counts) / sizeof(counts[0]));
    size_t maxbytes = 131072 * sizeof(long long);
    void *sbuf = malloc(maxbytes), *rbuf = malloc(maxbytes);
    int combo = 0;

    for (int op = 0; op < NOPS; op++)
        for (int t = 0; t < NTYPES; t++)
            for (int c = 0; c < ncounts; c++) {
                int count = counts[c];
                /* Large sizes only for SUM: protocols do not depend on the op. */
                if (count > 1000 && op != OP_SUM)
                    continue;
                MPI_Datatype dt = mpi_type(t);
                int root = roots[combo++ % nroots];

                fill(sbuf, op, t, count);
                memset(rbuf, 0x55, maxbytes);
                MPI_Allreduce(sbuf, rbuf, count, dt, mpi_op(op), MPI_COMM_WORLD);
                check(rbuf, op, t, count, "Allreduce", -1);

                fill(rbuf, op, t, count);
                MPI_Allreduce(MPI_IN_PLACE, rbuf, count, dt, mpi_op(op), MPI_COMM_WORLD);
                check(rbuf, op, t, count, "Allreduce(IN_PLACE)", -1);

                memset(rbuf, 0x55, maxbytes);
                MPI_Reduce(sbuf, rbuf, count, dt, mpi_op(op), root, MPI_COMM_WORLD);
                if (px_test_rank == root)
                    check(rbuf, op, t, count, "Reduce", root);
                if (count > 0)
                    PX_CHECK(get(sbuf, t, count - 1) == contrib(op, t, px_test_rank, count - 1),
                             "Reduce modified the send buffer");

                if (px_test_rank == root) {
                    fill(rbuf, op, t, count);
                    MPI_Reduce(MPI_IN_PLACE, rbuf, count, dt, mpi_op(op), root, MPI_COMM_WORLD);
                    check(rbuf, op, t, count, "Reduce(IN_PLACE)", root);
                } else {
                    /* recvbuf is insignificant away from the root. */
                    MPI_Reduce(sbuf, NULL, count, dt, mpi_op(op), root, MPI_COMM_WORLD);
                }
            }
    free(sbuf);
    free(rbuf);
}

/* Values with many ties: MAXLOC/MINLOC must pick the lowest rank on a tie. */
static void loc_ops(void)
{
    const int count = 1000;
    double_int_t *in = malloc(count * sizeof(*in)), *out = malloc(count * sizeof(*out));
    int n = px_test_size;

    for (int pass = 0; pass < 2; pass++) {
        MPI_Op op = pass == 0 ? MPI_MAXLOC : MPI_MINLOC;
        for (int i = 0; i < count; i++) {
            in[i].val = (double)((i + px_test_rank * 3) % 5) + 0.5;
            in[i].loc = px_test_rank;
        }
        for (int k = 0; k < 2; k++) {
            int root = roots[k % nroots];
            memset(out, 0, count * sizeof(*out));
            if (k == 0)
                MPI_Allreduce(in, out, count, MPI_DOUBLE_INT, op, MPI_COMM_WORLD);
            else
                MPI_Reduce(in, out, count, MPI_DOUBLE_INT, op, root, MPI_COMM_WORLD);
            if (k == 1 && px_test_rank != root)
                continue;
            for (int i = 0; i < count; i++) {
                double best = (double)((i) % 5) + 0.5;
                int bloc = 0;
                for (int r = 1; r < n; r++) {
                    double v = (double)((i + r * 3) % 5) + 0.5;
                    if (pass == 0 ? v > best : v < best) {
                        best = v;
                        bloc = r;
                    }
                }
                if (out[i].val != best || out[i].loc != bloc) {
                    PX_CHECK(0, "%s %s element %d: (%g, %d), expected (%g, %d)",
                             k ? "Reduce" : "Allreduce", pass ? "MINLOC" : "MAXLOC", i, out[i].val,
                             out[i].loc, best, bloc);
                    break;
                }
            }
        }
    }
    free(in);
    free(out);
}

static void bcasts(void)
{
    const int sizes[] = {0, 1, 3, 100, 4096, 65537, 1 << 20};
    char *buf = malloc(1 << 20);
    for (int k = 0; k < 7; k++)
        for (int ri = 0; ri < nroots; ri++) {
            int n = sizes[k], root = roots[ri];
            uint64_t seed = (uint64_t)root << 32 | (uint64_t)n;
            if (px_test_rank == root)
                px_fill(buf, n, seed);
            else
                memset(buf, 0, n);
            MPI_Bcast(buf, n, MPI_BYTE, root, MPI_COMM_WORLD);
            PX_CHECK(px_verify(buf, n, seed) == (size_t)n, "Bcast %d B root %d wrong", n, root);
        }
    /* A typed broadcast too. */
    double d[333];
    for (int i = 0; i < 333; i++)
        d[i] = px_test_rank == roots[nroots - 1] ? i * 0.25 : -1.0;
    MPI_Bcast(d, 333, MPI_DOUBLE, roots[nroots - 1], MPI_COMM_WORLD);
    for (int i = 0; i < 333; i++)
        if (d[i] != i * 0.25) {
            PX_CHECK(0, "Bcast doubles element %d = %g", i, d[i]);
            break;
        }
    free(buf);
}

/* The last rank arrives 200 ms late; nobody may leave before it arrives.
 * Every rank reads the machine's monotonic clock (all ranks of a test run on
 * one host) when it leaves; the sleeper reads it when it enters. A rank may
 * also leave the first barrier late (its last message from the sleeper can
 * still be waiting for a connection the sleeper finishes only after its
 * nap), so times are compared with the sleeper's entry, not with t0. */
static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void barrier_waits(void)
{
    const double delay = 0.2;
    int sleeper = px_test_size - 1;
    double t[2], *all = malloc(sizeof(double) * 2 * (size_t)px_test_size);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = mono_now();
    if (px_test_rank == sleeper)
        px_sleep_ms((long)(delay * 1000));
    t[0] = mono_now(); /* entry */
    MPI_Barrier(MPI_COMM_WORLD);
    t[1] = mono_now(); /* exit */
    if (px_test_rank == sleeper)
        PX_CHECK(t[1] - t0 >= delay * 0.9, "the sleeper left after %.3f s", t[1] - t0);
    MPI_Gather(t, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (px_test_rank == 0)
        for (int r = 0; r < px_test_size; r++)
            PX_CHECK(all[2 * r + 1] >= all[2 * sleeper],
                     "rank %d left the barrier %.6f s before rank %d entered it", r,
                     all[2 * sleeper] - all[2 * r + 1], sleeper);
    free(all);
    for (int i = 0; i < 20; i++)
        MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "coll_basic");
    int n = px_test_size;
    roots[0] = 0;
    nroots = 1;
    if (n > 2)
        roots[nroots++] = n / 2;
    if (n > 1)
        roots[nroots++] = n - 1;

    barrier_waits();
    bcasts();
    reductions();
    loc_ops();
    return px_test_finish("Barrier, Bcast 0..1 MB, Reduce/Allreduce 4 ops x 3 types "
                          "x 0..1 MB, MAXLOC/MINLOC, IN_PLACE, %d roots",
                          nroots);
}
