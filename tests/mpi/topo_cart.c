/* Cartesian topologies: create, queries (get, coords, rank with periodic
 * wrap), shift at edges, sub-grids, map, grids smaller than the
 * communicator, and errors, all against coordinates computed here
 * (row-major: the last dimension varies fastest). */
#include "px_test.h"

static int row_major_rank(int nd, const int *dims, const int *co)
{
    int r = 0;
    for (int i = 0; i < nd; i++)
        r = r * dims[i] + co[i];
    return r;
}

static void row_major_coords(int nd, const int *dims, int r, int *co)
{
    for (int i = nd - 1; i >= 0; i--) {
        co[i] = r % dims[i];
        r /= dims[i];
    }
}

static int is_class(int rc, int c1, int c2)
{
    int cls = -1;
    if (rc == MPI_SUCCESS)
        return 0;
    MPI_Error_class(rc, &cls);
    return cls == c1 || cls == c2;
}

/* Checks every query of a Cartesian communicator against the formulas. */
static int check_grid(MPI_Comm cart, int nd, const int *dims, const int *periods)
{
    int checks = 0, rank, size, status, ndq;
    int gd[8], gp[8], gc[8], co[8], mine[8];
    MPI_Comm_rank(cart, &rank);
    MPI_Comm_size(cart, &size);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    PX_MPI(MPI_Topo_test(cart, &status));
    PX_CHECK(status == MPI_CART, "Topo_test gave %d", status);
    PX_MPI(MPI_Cartdim_get(cart, &ndq));
    PX_CHECK(ndq == nd, "Cartdim_get gave %d, want %d", ndq, nd);
    PX_MPI(MPI_Cart_get(cart, nd, gd, gp, gc));
    row_major_coords(nd, dims, rank, mine);
    for (int i = 0; i < nd; i++) {
        PX_CHECK(gd[i] == dims[i], "Cart_get dims[%d] = %d, want %d", i, gd[i], dims[i]);
        PX_CHECK(!!gp[i] == !!periods[i], "Cart_get periods[%d] = %d", i, gp[i]);
        PX_CHECK(gc[i] == mine[i], "Cart_get coords[%d] = %d, want %d", i, gc[i], mine[i]);
        checks += 3;
    }
    for (int r = 0; r < size; r++) {
        int want[8], back = -1;
        row_major_coords(nd, dims, r, want);
        PX_MPI(MPI_Cart_coords(cart, r, nd, co));
        for (int i = 0; i < nd; i++)
            PX_CHECK(co[i] == want[i], "Cart_coords(%d)[%d] = %d, want %d", r, i, co[i], want[i]);
        PX_MPI(MPI_Cart_rank(cart, co, &back));
        PX_CHECK(back == r, "Cart_rank(coords of %d) = %d", r, back);
        checks += 2;
    }
    for (int d = 0; d < nd; d++) {
        for (int disp = -3; disp <= 3; disp++) {
            int src, dst, exp_src, exp_dst;
            PX_MPI(MPI_Cart_shift(cart, d, disp, &src, &dst));
            for (int s = -1; s <= 1; s += 2) {
                int c[8];
                memcpy(c, mine, sizeof(int) * (size_t)nd);
                int v = c[d] + s * disp, e;
                if (periods[d])
                    v = ((v % dims[d]) + dims[d]) % dims[d];
                if (v < 0 || v >= dims[d])
                    e = MPI_PROC_NULL;
                else {
                    c[d] = v;
                    e = row_major_rank(nd, dims, c);
                }
                if (s < 0)
                    exp_src = e;
                else
                    exp_dst = e;
            }
            PX_CHECK(src == exp_src && dst == exp_dst,
                     "Cart_shift(dim %d, disp %d) = (%d, %d), want (%d, %d)", d, disp, src, dst,
                     exp_src, exp_dst);
            checks++;
        }
        /* wrap in periodic dimensions, errors in the others */
        int c[8], r = -1;
        memcpy(c, mine, sizeof(int) * (size_t)nd);
        c[d] = mine[d] + 2 * dims[d];
        int rc = MPI_Cart_rank(cart, c, &r);
        if (periods[d])
            PX_CHECK(rc == MPI_SUCCESS && r == rank, "periodic Cart_rank wrap gave rc %d rank %d",
                     rc, r);
        else
            PX_CHECK(is_class(rc, MPI_ERR_ARG, MPI_ERR_RANK),
                     "non-periodic out-of-range coordinate gave rc %d", rc);
        c[d] = mine[d] - dims[d];
        rc = MPI_Cart_rank(cart, c, &r);
        if (periods[d])
            PX_CHECK(rc == MPI_SUCCESS && r == rank, "periodic negative wrap gave rc %d rank %d",
                     rc, r);
        else
            PX_CHECK(is_class(rc, MPI_ERR_ARG, MPI_ERR_RANK),
                     "non-periodic negative coordinate gave rc %d", rc);
        checks += 2;
    }
    int s1, s2;
    PX_CHECK(MPI_Cart_shift(cart, nd, 1, &s1, &s2) != MPI_SUCCESS, "shift in dimension %d accepted",
             nd);
    PX_CHECK(is_class(MPI_Cart_coords(cart, size, nd, co), MPI_ERR_RANK, MPI_ERR_ARG),
             "Cart_coords of rank %d accepted", size);
    /* the grid communicates: sum of ranks */
    int sum = 0;
    PX_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, cart));
    PX_CHECK(sum == size * (size - 1) / 2, "Allreduce on the grid gave %d", sum);
    return checks + 4;
}

/* Cart_sub keeping the dimensions in `remain`: members, order, topology. */
static int check_sub(MPI_Comm cart, int nd, const int *dims, const int *periods, const int *remain)
{
    MPI_Comm sub;
    int rank, wrank, mine[8], sdims[8], sper[8], snd = 0, ssize = 1, checks = 0;
    MPI_Comm_rank(cart, &rank);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    row_major_coords(nd, dims, rank, mine);
    for (int i = 0; i < nd; i++)
        if (remain[i]) {
            sdims[snd] = dims[i];
            sper[snd] = periods[i];
            snd++;
            ssize *= dims[i];
        }
    PX_MPI(MPI_Cart_sub(cart, remain, &sub));
    PX_REQUIRE(sub != MPI_COMM_NULL, "Cart_sub gave MPI_COMM_NULL");
    int n, r, q;
    MPI_Comm_size(sub, &n);
    MPI_Comm_rank(sub, &r);
    PX_CHECK(n == ssize, "sub-grid size %d, want %d", n, ssize);
    /* my rank in the sub-grid is the row-major rank of the kept coordinates */
    int kc[8], k = 0;
    for (int i = 0; i < nd; i++)
        if (remain[i])
            kc[k++] = mine[i];
    int want = snd ? row_major_rank(snd, sdims, kc) : 0;
    PX_CHECK(r == want, "sub-grid rank %d, want %d", r, want);
    PX_MPI(MPI_Cartdim_get(sub, &q));
    PX_CHECK(q == snd, "sub-grid has %d dims, want %d", q, snd);
    if (snd > 0) {
        int gd[8], gp[8], gc[8];
        PX_MPI(MPI_Cart_get(sub, snd, gd, gp, gc));
        for (int i = 0; i < snd; i++)
            PX_CHECK(gd[i] == sdims[i] && !!gp[i] == !!sper[i] && gc[i] == kc[i],
                     "sub-grid dim %d: (%d,%d,%d) want (%d,%d,%d)", i, gd[i], gp[i], gc[i],
                     sdims[i], sper[i], kc[i]);
    }
    /* every member shares my dropped coordinates */
    int *mine_slot = calloc((size_t)n, sizeof(int)), *all = malloc(sizeof(int) * (size_t)n);
    mine_slot[r] = rank; /* gather through a sum: every other slot is 0 */
    PX_MPI(MPI_Allreduce(mine_slot, all, n, MPI_INT, MPI_SUM, sub));
    free(mine_slot);
    for (int i = 0; i < n; i++) {
        int co[8];
        row_major_coords(nd, dims, all[i], co);
        for (int j = 0; j < nd; j++)
            if (!remain[j])
                PX_CHECK(co[j] == mine[j], "member %d (grid rank %d) is in another sub-grid", i,
                         all[i]);
        if (i)
            PX_CHECK(all[i] > all[i - 1], "sub-grid members out of order");
        checks++;
    }
    free(all);
    (void)wrank;
    MPI_Comm_free(&sub);
    return checks + 3;
}

int main(int argc, char **argv)
{
    int checks = 0, status;
    px_test_init(&argc, &argv, "topo_cart");
    int size = px_test_size, rank = px_test_rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* MPI_COMM_WORLD has no topology */
    PX_MPI(MPI_Topo_test(MPI_COMM_WORLD, &status));
    PX_CHECK(status == MPI_UNDEFINED, "Topo_test(world) = %d", status);
    int nd0;
    PX_CHECK(is_class(MPI_Cartdim_get(MPI_COMM_WORLD, &nd0), MPI_ERR_TOPOLOGY, MPI_ERR_COMM),
             "Cartdim_get on a communicator without topology accepted");

    /* a grid larger than the communicator: an error, and MPI_COMM_NULL in
     * place of whatever the output held */
    int over[2] = {size, size + 1}, nop[2] = {0, 0};
    MPI_Comm none = MPI_COMM_WORLD;
    PX_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, over, nop, 0, &none) != MPI_SUCCESS &&
                 none == MPI_COMM_NULL,
             "a %dx%d grid of %d ranks: no error, or the output left as it was", size, size + 1,
             size);

    /* 2-D, periodic first dimension */
    int d2[2] = {0, 0}, p2[2] = {1, 0};
    PX_MPI(MPI_Dims_create(size, 2, d2));
    MPI_Comm c2;
    PX_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &c2));
    PX_REQUIRE(c2 != MPI_COMM_NULL, "2-D grid of all ranks gave MPI_COMM_NULL");
    int r2;
    MPI_Comm_rank(c2, &r2);
    PX_CHECK(r2 == rank, "rank %d in the grid without reordering", r2);
    checks += check_grid(c2, 2, d2, p2);
    int rem_a[2] = {0, 1}, rem_b[2] = {1, 0}, rem_d[2] = {1, 1};
    checks += check_sub(c2, 2, d2, p2, rem_a);
    checks += check_sub(c2, 2, d2, p2, rem_b);
    checks += check_sub(c2, 2, d2, p2, rem_d);

    /* 3-D, only the middle dimension periodic */
    int d3[3] = {0, 0, 0}, p3[3] = {0, 1, 0};
    PX_MPI(MPI_Dims_create(size, 3, d3));
    MPI_Comm c3;
    PX_MPI(MPI_Cart_create(MPI_COMM_WORLD, 3, d3, p3, 1, &c3));
    PX_REQUIRE(c3 != MPI_COMM_NULL, "3-D grid gave MPI_COMM_NULL");
    checks += check_grid(c3, 3, d3, p3);
    int rem3[3] = {1, 0, 1};
    checks += check_sub(c3, 3, d3, p3, rem3);

    /* 1-D ring and line with every rank */
    int d1[1] = {size}, per1[1] = {1}, nper1[1] = {0};
    MPI_Comm ring, line;
    PX_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, per1, 0, &ring));
    PX_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, nper1, 0, &line));
    checks += check_grid(ring, 1, d1, per1);
    checks += check_grid(line, 1, d1, nper1);
    int src, dst;
    PX_MPI(MPI_Cart_shift(line, 0, 1, &src, &dst));
    PX_CHECK(src == (rank == 0 ? MPI_PROC_NULL : rank - 1), "line source %d", src);
    PX_CHECK(dst == (rank == size - 1 ? MPI_PROC_NULL : rank + 1), "line dest %d", dst);
    PX_MPI(MPI_Cart_shift(ring, 0, 1, &src, &dst));
    PX_CHECK(src == (rank + size - 1) % size && dst == (rank + 1) % size, "ring shift (%d,%d)", src,
             dst);
    /* data moves along the ring as Cart_shift says */
    int got = -1;
    PX_MPI(
        MPI_Sendrecv(&rank, 1, MPI_INT, dst, 7, &got, 1, MPI_INT, src, 7, ring, MPI_STATUS_IGNORE));
    PX_CHECK(got == src, "ring neighbour sent %d, want %d", got, src);
    checks += 5;

    /* a grid smaller than the communicator leaves the last rank out */
    if (size > 1) {
        int ds[1] = {size - 1}, ps[1] = {0}, nr = -2;
        MPI_Comm small;
        PX_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, ds, ps, 0, &small));
        PX_MPI(MPI_Cart_map(MPI_COMM_WORLD, 1, ds, ps, &nr));
        if (rank == size - 1) {
            PX_CHECK(small == MPI_COMM_NULL, "rank outside the grid got a communicator");
            PX_CHECK(nr == MPI_UNDEFINED, "Cart_map gave %d outside the grid", nr);
        } else {
            PX_REQUIRE(small != MPI_COMM_NULL, "rank inside the grid got MPI_COMM_NULL");
            int n;
            MPI_Comm_size(small, &n);
            PX_CHECK(n == size - 1, "small grid has %d ranks", n);
            PX_CHECK(nr == rank, "Cart_map gave %d", nr);
            checks += check_grid(small, 1, ds, ps);
            MPI_Comm_free(&small);
        }
        checks += 2;
    }

    /* errors: a grid larger than the communicator, negative ndims */
    MPI_Comm bad = MPI_COMM_NULL;
    int big[2] = {size + 1, 1}, neg[2] = {size, -1}, pp[2] = {0, 0};
    PX_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, big, pp, 0, &bad) != MPI_SUCCESS,
             "grid of %d processes on %d accepted", size + 1, size);
    PX_CHECK(MPI_Cart_create(MPI_COMM_WORLD, -1, neg, pp, 0, &bad) != MPI_SUCCESS,
             "negative ndims accepted");
    checks += 2;

    MPI_Comm_free(&c2);
    MPI_Comm_free(&c3);
    MPI_Comm_free(&ring);
    MPI_Comm_free(&line);
    return px_test_finish("%d checks, grids %dx%d and %dx%dx%d", checks, d2[0], d2[1], d3[0], d3[1],
                          d3[2]);
}
