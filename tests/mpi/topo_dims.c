/* MPI_Dims_create against hand-computed balanced factorizations (ties
 * between equally balanced ones broken as MPICH does), with fixed
 * dimensions and the documented error cases. */
#include "px_test.h"

typedef struct {
    int nnodes, ndims;
    int in[4];
    int want[4];
} dims_case_t;

static const dims_case_t cases[] = {
    {6, 2, {0, 0}, {3, 2}},
    {7, 2, {0, 0}, {7, 1}},
    {12, 2, {0, 0}, {4, 3}},
    {16, 2, {0, 0}, {4, 4}},
    {36, 2, {0, 0}, {6, 6}},
    {72, 2, {0, 0}, {9, 8}},
    {8, 3, {0, 0, 0}, {2, 2, 2}},
    {24, 3, {0, 0, 0}, {4, 3, 2}},
    {30, 3, {0, 0, 0}, {5, 3, 2}},
    {16, 3, {0, 4, 0}, {2, 4, 2}},
    {12, 3, {0, 3, 0}, {2, 3, 2}},
    {64, 4, {0, 0, 0, 0}, {4, 4, 2, 2}},
    {2, 4, {0, 0, 0, 0}, {2, 1, 1, 1}},
    {1, 3, {0, 0, 0}, {1, 1, 1}},
    {6, 2, {2, 3}, {2, 3}},
    {20, 3, {0, 0, 5}, {2, 2, 5}},
    {9, 1, {0}, {9}},
    {11, 3, {0, 0, 0}, {11, 1, 1}},
    /* equal spreads: the larger smallest factor, then the same for the
     * rest (the grids MPICH gives) */
    {5040, 3, {0, 0, 0}, {21, 16, 15}},
    {10800, 3, {0, 0, 0}, {27, 20, 20}},
    {5616, 4, {0, 0, 0, 0}, {13, 9, 8, 6}},
    {5040, 4, {0, 0, 0, 0}, {10, 9, 8, 7}},
};

int main(int argc, char **argv)
{
    int ncases = (int)(sizeof(cases) / sizeof(cases[0]));
    px_test_init(&argc, &argv, "topo_dims");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    for (int k = 0; k < ncases; k++) {
        const dims_case_t *c = &cases[k];
        int d[4];
        memcpy(d, c->in, sizeof(d));
        int rc = MPI_Dims_create(c->nnodes, c->ndims, d);
        PX_CHECK(rc == MPI_SUCCESS, "case %d (%d in %d dims) returned %d", k, c->nnodes, c->ndims,
                 rc);
        for (int i = 0; i < c->ndims; i++)
            PX_CHECK(d[i] == c->want[i], "case %d (%d in %d dims): dims[%d] = %d, want %d", k,
                     c->nnodes, c->ndims, i, d[i], c->want[i]);
    }

    /* properties over a range: product, non-increasing free entries */
    int checked = 0;
    for (int n = 1; n <= 200; n++)
        for (int nd = 1; nd <= 4; nd++) {
            int d[4] = {0, 0, 0, 0}, prod = 1;
            PX_CHECK(MPI_Dims_create(n, nd, d) == MPI_SUCCESS, "n=%d nd=%d failed", n, nd);
            for (int i = 0; i < nd; i++) {
                prod *= d[i];
                PX_CHECK(d[i] >= 1, "n=%d nd=%d dims[%d]=%d", n, nd, i, d[i]);
                if (i)
                    PX_CHECK(d[i] <= d[i - 1], "n=%d nd=%d not non-increasing", n, nd);
            }
            PX_CHECK(prod == n, "n=%d nd=%d product %d", n, nd, prod);
            /* a prime count cannot be split */
            int prime = n > 1;
            for (int p = 2; p * p <= n && prime; p++)
                prime = n % p != 0;
            if (prime)
                PX_CHECK(d[0] == n, "prime n=%d nd=%d gave dims[0]=%d", n, nd, d[0]);
            checked++;
        }

    /* errors: fixed dimensions that do not divide, negative entries */
    int d2[2] = {0, 3};
    PX_CHECK(MPI_Dims_create(10, 2, d2) != MPI_SUCCESS, "10 processes with a fixed 3 accepted");
    int d3[2] = {-1, 0};
    PX_CHECK(MPI_Dims_create(6, 2, d3) != MPI_SUCCESS, "negative dims entry accepted");
    int d4[2] = {2, 2};
    PX_CHECK(MPI_Dims_create(6, 2, d4) != MPI_SUCCESS, "fixed 2x2 for 6 processes accepted");

    /* the communicator's own size, as applications use it */
    int dw[2] = {0, 0};
    PX_CHECK(MPI_Dims_create(px_test_size, 2, dw) == MPI_SUCCESS, "Dims_create(size) failed");
    PX_CHECK(dw[0] * dw[1] == px_test_size && dw[0] >= dw[1], "size %d gave %dx%d", px_test_size,
             dw[0], dw[1]);
    return px_test_finish("%d hand-computed cases, %d range checks", ncases, checked);
}
