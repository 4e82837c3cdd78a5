/* ScaLAPACK as Debian builds it for MPICH (libscalapack-mpich-dev), run on
 * Plexus through the MPICH ABI: compiled with MPICH's mpicc, so it and
 * libscalapack-mpich.so (with its BLACS) are linked against MPICH's
 * libmpich.so.12; the test puts Plexus's first on LD_LIBRARY_PATH.
 *
 * On a process grid as square as the job allows, with 2-D block-cyclic
 * matrices of N x N in blocks of NB (BLACS builds its communicators and
 * derived datatypes; pivoting broadcasts along rows and columns):
 *   - pdgemm: C = A * B, each local element checked against the sum
 *     computed directly from the formulas of A and B;
 *   - pdgesv: A x = b for a known x, with row pivoting, each local
 *     element of the solution checked;
 *   - pdpotrf + pdpotrs: the same system made symmetric positive definite,
 *     by Cholesky.
 * Prints "PASS scalapack_mpich np=P". */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

void Cblacs_pinfo(int *mypnum, int *nprocs);
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
void Cblacs_exit(int cont);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);
void pdgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);
void pdgesv_(const int *n, const int *nrhs, double *a, const int *ia, const int *ja,
             const int *desca, int *ipiv, double *b, const int *ib, const int *jb, const int *descb,
             int *info);
void pdpotrf_(const char *uplo, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, int *info);
void pdpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *ia,
              const int *ja, const int *desca, double *b, const int *ib, const int *jb,
              const int *descb, int *info);

enum { N = 192, NB = 16 };

static int rank, nprow, npcol, myrow, mycol;
static int fails;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond) && fails++ < 5) {                                                              \
            fprintf(stderr, "scalapack_mpich rank %d: line %d: ", rank, __LINE__);                 \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* global index (0-based) of local index l on process p of np */
static int g_of(int l, int p, int np) { return ((l / NB) * np + p) * NB + l % NB; }

static double a_gen(int i, int j) { return 1.0 / (1.0 + abs(i - j)) + (i == j ? N : 0.0); }
static double b_gen(int i, int j) { return (double)((i * 3 + j * 5) % 11) - 5.0; }
static double x_gen(int i) { return 1.0 + (double)(i % 7); }
/* symmetric positive definite */
static double s_gen(int i, int j) { return 1.0 / (1.0 + abs(i - j)) + (i == j ? 2.0 * N : 0.0); }

/* b = M x for the known x, in process column 0's local rows */
static void make_rhs(double *v, int mloc, double (*m)(int, int))
{
    for (int il = 0; il < mloc && mycol == 0; il++) {
        int i = g_of(il, myrow, nprow);
        double s = 0;
        for (int k = 0; k < N; k++)
            s += m(i, k) * x_gen(k);
        v[il] = s;
    }
}

static void check_x(const double *v, int mloc, const char *what)
{
    for (int il = 0; il < mloc && mycol == 0; il++) {
        int i = g_of(il, myrow, nprow);
        CHECK(fabs(v[il] - x_gen(i)) <= 1e-10 * x_gen(i), "%s x(%d) = %.15g, want %g", what, i,
              v[il], x_gen(i));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (nprow = (int)sqrt((double)np); np % nprow; nprow--)
        ;
    npcol = np / nprow;

    int ctxt, info, izero = 0, ione = 1, n = N, nb = NB;
    Cblacs_get(0, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row", nprow, npcol);
    Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
    int mloc = numroc_(&n, &nb, &myrow, &izero, &nprow);
    int nloc = numroc_(&n, &nb, &mycol, &izero, &npcol);
    int lld = mloc > 1 ? mloc : 1;
    int desc[9], descv[9];
    descinit_(desc, &n, &n, &nb, &nb, &izero, &izero, &ctxt, &lld, &info);
    CHECK(info == 0, "descinit: info %d", info);
    descinit_(descv, &n, &ione, &nb, &nb, &izero, &izero, &ctxt, &lld, &info);
    CHECK(info == 0, "descinit (vector): info %d", info);

    double *a = malloc(sizeof(double) * (size_t)lld * (nloc ? nloc : 1));
    double *b = malloc(sizeof(double) * (size_t)lld * (nloc ? nloc : 1));
    double *c = calloc((size_t)lld * (nloc ? nloc : 1), sizeof(double));
    double *v = malloc(sizeof(double) * (size_t)lld);
    int *ipiv = malloc(sizeof(int) * (size_t)(mloc + NB));

    /* pdgemm */
    for (int jl = 0; jl < nloc; jl++)
        for (int il = 0; il < mloc; il++) {
            int i = g_of(il, myrow, nprow), j = g_of(jl, mycol, npcol);
            a[il + jl * lld] = a_gen(i, j);
            b[il + jl * lld] = b_gen(i, j);
        }
    double one = 1.0, zero = 0.0;
    pdgemm_("N", "N", &n, &n, &n, &one, a, &ione, &ione, desc, b, &ione, &ione, desc, &zero, c,
            &ione, &ione, desc);
    for (int jl = 0; jl < nloc; jl++)
        for (int il = 0; il < mloc; il++) {
            int i = g_of(il, myrow, nprow), j = g_of(jl, mycol, npcol);
            double want = 0;
            for (int k = 0; k < N; k++)
                want += a_gen(i, k) * b_gen(k, j);
            CHECK(fabs(c[il + jl * lld] - want) <= 1e-9 * (1 + fabs(want)),
                  "C(%d,%d) = %g, want %g", i, j, c[il + jl * lld], want);
        }

    /* pdgesv: b = A x for the known x, held in process column 0 */
    make_rhs(v, mloc, a_gen);
    pdgesv_(&n, &ione, a, &ione, &ione, desc, ipiv, v, &ione, &ione, descv, &info);
    CHECK(info == 0, "pdgesv: info %d", info);
    check_x(v, mloc, "pdgesv");

    /* pdpotrf + pdpotrs */
    for (int jl = 0; jl < nloc; jl++)
        for (int il = 0; il < mloc; il++)
            a[il + jl * lld] = s_gen(g_of(il, myrow, nprow), g_of(jl, mycol, npcol));
    make_rhs(v, mloc, s_gen);
    pdpotrf_("L", &n, a, &ione, &ione, desc, &info);
    CHECK(info == 0, "pdpotrf: info %d", info);
    pdpotrs_("L", &n, &ione, a, &ione, &ione, desc, v, &ione, &ione, descv, &info);
    CHECK(info == 0, "pdpotrs: info %d", info);
    check_x(v, mloc, "pdpotrs");

    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all)
            printf("FAIL scalapack_mpich np=%d: %d wrong values\n", np, all);
        else
            printf("PASS scalapack_mpich np=%d (grid %dx%d)\n", np, nprow, npcol);
    }
    free(a);
    free(b);
    free(c);
    free(v);
    free(ipiv);
    Cblacs_gridexit(ctxt);
    Cblacs_exit(1); /* 1: MPI is still the program's */
    MPI_Finalize();
    return all != 0;
}
