/* How a floating-point reduction groups its operands. MPI lets a library
 * group a commutative operation as it likes, but numerical programs notice:
 * a sum of doubles grouped differently differs in its last bits, and
 * ScaLAPACK's eigensolver testers fail checks on such differences.
 *
 * Every rank holds values of very different magnitudes, so that every
 * grouping of the ranks' values gives its own bits. Checked, for sums of
 * MPI_DOUBLE and MPI_FLOAT over vectors of 1 to 40,000 items:
 *   - MPI_Allreduce gives every rank the same bits (always);
 *   - with PXTEST_TREE_ORDER=1 (the shared-memory algorithms, forced), the
 *     bits of the binomial tree's grouping towards rank 0,
 *     ((x0 + x1) + (x2 + x3)) + ..., for MPI_Allreduce and for MPI_Reduce
 *     to every root: MPICH's reduction to rank 0 and recursive doubling on
 *     2^k ranks group so too. */
#include "px_test.h"

#include <math.h>

static int rank, size, tree;

/* rank r's item i: magnitudes from 1e-8 to 1e8 by rank and item */
static double val(int r, int i)
{
    double scale = pow(10.0, (double)((r * 5 + i * 3) % 17) - 8.0);
    return scale * (1.0 + (double)(((long long)r * 7919 + (long long)i * 104729) % 1000) / 997.0) *
           ((r + i) % 3 ? 1 : -1);
}

/* The binomial tree's grouping of ranks [lo, lo + len) (len a power of two,
 * cut at size): the lower half's sum plus the upper half's. */
static double tree_d(int i, int lo, int len)
{
    if (len == 1)
        return val(lo, i);
    int half = len / 2;
    if (lo + half >= size)
        return tree_d(i, lo, half);
    return tree_d(i, lo, half) + tree_d(i, lo + half, half);
}

static float tree_f(int i, int lo, int len)
{
    if (len == 1)
        return (float)val(lo, i);
    int half = len / 2;
    if (lo + half >= size)
        return tree_f(i, lo, half);
    return tree_f(i, lo, half) + tree_f(i, lo + half, half);
}

static int pof2_ceil(int n)
{
    int p = 1;
    while (p < n)
        p *= 2;
    return p;
}

/* result: count items of dt just reduced (on every rank when all) */
static void check(const char *what, MPI_Datatype dt, const void *res, int count, int all)
{
    int fl = dt == MPI_FLOAT;
    size_t es = fl ? sizeof(float) : sizeof(double);
    /* the same bits on every rank: rank 0's result broadcast and compared */
    if (all) {
        char *r0 = malloc(es * (size_t)count);
        memcpy(r0, res, es * (size_t)count);
        MPI_Bcast(r0, count, dt, 0, MPI_COMM_WORLD);
        PX_CHECK(memcmp(r0, res, es * (size_t)count) == 0,
                 "%s count %d: rank %d's result differs from rank 0's", what, count, rank);
        free(r0);
    }
    if (!tree)
        return;
    int p = pof2_ceil(size), bad = 0;
    for (int i = 0; i < count && !bad; i++) {
        if (fl) {
            float e = tree_f(i, 0, p), g = ((const float *)res)[i];
            if (memcmp(&e, &g, sizeof(e)) != 0) {
                PX_CHECK(0, "%s count %d: [%d] = %a, the tree's grouping gives %a", what, count, i,
                         (double)g, (double)e);
                bad = 1;
            }
        } else {
            double e = tree_d(i, 0, p), g = ((const double *)res)[i];
            if (memcmp(&e, &g, sizeof(e)) != 0) {
                PX_CHECK(0, "%s count %d: [%d] = %a, the tree's grouping gives %a", what, count, i,
                         g, e);
                bad = 1;
            }
        }
    }
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "coll_fp_order");
    rank = px_test_rank;
    size = px_test_size;
    const char *t = getenv("PXTEST_TREE_ORDER");
    tree = t && atoi(t);
    static const int counts[] = {1, 3, 100, 1500, 40000};
    int checks = 0;
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        int count = counts[ci];
        double *sd = malloc(sizeof(double) * (size_t)count);
        double *rd = malloc(sizeof(double) * (size_t)count);
        float *sf = malloc(sizeof(float) * (size_t)count);
        float *rf = malloc(sizeof(float) * (size_t)count);
        for (int i = 0; i < count; i++) {
            sd[i] = val(rank, i);
            sf[i] = (float)sd[i];
        }
        PX_MPI(MPI_Allreduce(sd, rd, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        check("Allreduce double", MPI_DOUBLE, rd, count, 1);
        PX_MPI(MPI_Allreduce(sf, rf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
        check("Allreduce float", MPI_FLOAT, rf, count, 1);
        memcpy(rd, sd, sizeof(double) * (size_t)count);
        PX_MPI(MPI_Allreduce(MPI_IN_PLACE, rd, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        check("Allreduce in place", MPI_DOUBLE, rd, count, 1);
        checks += 3;
        if (count <= 1500) { /* a reduce to each root */
            for (int root = 0; root < size; root++) {
                PX_MPI(MPI_Reduce(sd, rd, count, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD));
                if (rank == root) {
                    char what[64];
                    snprintf(what, sizeof(what), "Reduce to %d", root);
                    check(what, MPI_DOUBLE, rd, count, 0);
                }
                checks++;
            }
        }
        free(sd);
        free(rd);
        free(sf);
        free(rf);
    }
    return px_test_finish("%d reductions, %s", checks,
                          tree ? "the binomial tree's grouping" : "the same bits on every rank");
}
