/* Cartesian topologies: Dims_create, Cart_create and its queries, shift,
 * sub-grids and map. Ranks are laid out row-major (the last dimension
 * varies fastest), as the standard requires. */
#include "topo_impl.h"

#include <limits.h>
#include <stdlib.h>

/* ---------- Dims_create ---------- */

typedef struct {
    int k;
    int cur[64], best[64];
    int have;
    int ndiv;
    int *div; /* divisors of the number to factor, decreasing */
} px_dims_search_t;

/* Balanced means: the smallest spread (largest - smallest), then the largest
 * smallest factor; on a tie the same again for the factors without the
 * smallest (MPICH's choice, so that both libraries lay out the same grid). */
static int px_dims_better(const px_dims_search_t *s)
{
    if (!s->have)
        return 1;
    for (int j = s->k - 1; j > 0; j--) {
        int dc = s->cur[0] - s->cur[j], db = s->best[0] - s->best[j];
        if (dc != db)
            return dc < db;
        if (s->cur[j] != s->best[j])
            return s->cur[j] > s->best[j];
    }
    return 0;
}

/* Whether f^e >= v, without overflow. */
static int px_dims_pow_ge(int f, int e, int v)
{
    long long p = 1;
    for (int j = 0; j < e; j++) {
        p *= f;
        if (p >= v)
            return 1;
    }
    return p >= v;
}

/* Largest x with x^e <= v (v >= 1, e >= 1). */
static int px_dims_iroot(int v, int e)
{
    int lo = 1, hi = v;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        long long p = 1;
        int over = 0;
        for (int j = 0; j < e && !over; j++) {
            p *= mid;
            over = p > v;
        }
        if (over)
            hi = mid - 1;
        else
            lo = mid;
    }
    return lo;
}

/* Whether choosing f (with m left to place in rem factors, f the largest of
 * them) can still beat the best answer: the smallest factor will be at most
 * the (rem-1)-th root of m/f. */
static int px_dims_hopeless(const px_dims_search_t *s, int i, int f, int m, int rem)
{
    if (!s->have)
        return 0;
    int max = i ? s->cur[0] : f;
    int lb = max - px_dims_iroot(m / f, rem - 1);
    return lb > s->best[0] - s->best[s->k - 1];
}

/* Factor m into positions i..k-1, each factor <= prev, non-increasing. */
static void px_dims_search(px_dims_search_t *s, int i, int m, int prev)
{
    int rem = s->k - i;
    if (rem == 1) {
        if (m <= prev) {
            s->cur[i] = m;
            if (px_dims_better(s)) {
                memcpy(s->best, s->cur, sizeof(int) * (size_t)s->k);
                s->have = 1;
            }
        }
        return;
    }
    if (i == 0) {
        /* the largest factor, from the smallest possible one up: balanced
         * answers come first and bound the rest */
        for (int di = s->ndiv - 1; di >= 0; di--) {
            int f = s->div[di];
            if (!px_dims_pow_ge(f, rem, m))
                continue;
            if (px_dims_hopeless(s, i, f, m, rem))
                break; /* the bound only grows with f here */
            s->cur[0] = f;
            px_dims_search(s, 1, m / f, f);
        }
        return;
    }
    for (int di = 0; di < s->ndiv; di++) {
        int f = s->div[di];
        if (f > prev || f > m || m % f)
            continue;
        /* f is the largest of the rem factors left; smaller f only make
         * f^rem >= m harder */
        if (!px_dims_pow_ge(f, rem, m))
            break;
        if (px_dims_hopeless(s, i, f, m, rem))
            continue;
        s->cur[i] = f;
        px_dims_search(s, i + 1, m / f, f);
    }
}

PX_PMPI(MPI_Dims_create)(int nnodes, int ndims, int dims[])
{
    PX_CS_ENTER();
    PX_CHECK_INIT("MPI_Dims_create");
    if (nnodes <= 0)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Dims_create", "nnodes %d is not positive",
                            nnodes);
    if (ndims < 0)
        return px_mpi_error(NULL, MPI_ERR_DIMS, "MPI_Dims_create", "negative ndims %d", ndims);
    if (ndims == 0)
        return MPI_SUCCESS; /* nothing to fill in */
    if (!dims)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Dims_create", "null dims");
    long long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return px_mpi_error(NULL, MPI_ERR_DIMS, "MPI_Dims_create", "dims[%d] = %d is negative",
                                i, dims[i]);
        if (dims[i] > 0) {
            fixed *= dims[i];
            if (fixed > nnodes)
                break;
        } else
            nfree++;
    }
    if (fixed > nnodes || nnodes % fixed)
        return px_mpi_error(NULL, MPI_ERR_DIMS, "MPI_Dims_create",
                            "%d processes cannot be divided by the fixed dimensions", nnodes);
    int rest = (int)(nnodes / fixed);
    if (nfree == 0)
        return rest == 1
                   ? MPI_SUCCESS
                   : px_mpi_error(NULL, MPI_ERR_DIMS, "MPI_Dims_create",
                                  "fixed dimensions give %lld processes, not %d", fixed, nnodes);
    /* Beyond log2(rest) free dimensions the extra ones are all 1. */
    int k = 0;
    for (int r = rest; r > 1; r /= 2)
        k++;
    if (k > nfree)
        k = nfree;
    int out[64];
    if (k == 0) {
        for (int i = 0; i < nfree; i++)
            out[i < 64 ? i : 63] = 1;
    } else {
        px_dims_search_t *s = calloc(1, sizeof(*s));
        if (!s)
            return px_mpi_error(NULL, MPI_ERR_NO_MEM, "MPI_Dims_create", "out of memory");
        s->k = k;
        /* an int has at most 1600 divisors */
        s->div = malloc(sizeof(int) * 1600);
        if (!s->div) {
            free(s);
            return px_mpi_error(NULL, MPI_ERR_NO_MEM, "MPI_Dims_create", "out of memory");
        }
        for (long long d = 1; d * d <= rest; d++)
            if (rest % d == 0) {
                s->div[s->ndiv++] = (int)d;
                if (d * d != rest)
                    s->div[s->ndiv++] = (int)(rest / d);
            }
        for (int i = 1; i < s->ndiv; i++) { /* decreasing order */
            int v = s->div[i], j = i - 1;
            while (j >= 0 && s->div[j] < v) {
                s->div[j + 1] = s->div[j];
                j--;
            }
            s->div[j + 1] = v;
        }
        px_dims_search(s, 0, rest, rest);
        free(s->div);
        memcpy(out, s->best, sizeof(int) * (size_t)k);
        free(s);
    }
    for (int i = 0, j = 0; i < ndims; i++)
        if (dims[i] == 0) {
            dims[i] = j < k ? out[j] : 1;
            j++;
        }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Dims_create)

/* ---------- helpers ---------- */

int px_mpi_topo_cart_rank_of(const px_mpi_topo_t *t, const int *coords)
{
    int r = 0;
    for (int i = 0; i < t->ndims; i++)
        r = r * t->dims[i] + coords[i];
    return r;
}

void px_mpi_topo_cart_coords_of(const px_mpi_topo_t *t, int rank, int *coords)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

/* Neighbour of rank `rank` at displacement disp along dimension d, or
 * MPI_PROC_NULL off a non-periodic edge. */
static int px_cart_shifted(const px_mpi_topo_t *t, const int *coords, int d, int disp)
{
    int c[64];
    memcpy(c, coords, sizeof(int) * (size_t)t->ndims);
    long long v = (long long)c[d] + disp;
    if (t->periods[d]) {
        v %= t->dims[d];
        if (v < 0)
            v += t->dims[d];
    } else if (v < 0 || v >= t->dims[d])
        return MPI_PROC_NULL;
    c[d] = (int)v;
    return px_mpi_topo_cart_rank_of(t, c);
}

int px_mpi_topo_cart_neighbours(px_mpi_topo_t *t, int rank)
{
    int n = 2 * t->ndims;
    t->indeg = t->outdeg = n;
    if (n == 0)
        return MPI_SUCCESS;
    t->in = malloc(sizeof(int) * (size_t)n);
    t->out = malloc(sizeof(int) * (size_t)n);
    t->in_tag = malloc(sizeof(int) * (size_t)n);
    t->out_tag = malloc(sizeof(int) * (size_t)n);
    if (!t->in || !t->out || !t->in_tag || !t->out_tag)
        return MPI_ERR_NO_MEM;
    (void)rank;
    for (int d = 0; d < t->ndims; d++) {
        int lo = px_cart_shifted(t, t->coords, d, -1), hi = px_cart_shifted(t, t->coords, d, 1);
        t->in[2 * d] = t->out[2 * d] = lo;
        t->in[2 * d + 1] = t->out[2 * d + 1] = hi;
        /* What I send towards -1 arrives at that process as data from its
         * +1 neighbour, and the other way round: tag by the receiving block
         * so a process that is both neighbours (periodic size 1 or 2) still
         * puts each message in the right block. */
        t->in_tag[2 * d] = 2 * d;
        t->in_tag[2 * d + 1] = 2 * d + 1;
        t->out_tag[2 * d] = 2 * d + 1;
        t->out_tag[2 * d + 1] = 2 * d;
    }
    return MPI_SUCCESS;
}

/* Builds a Cartesian topology for rank `rank` of a grid. */
static px_mpi_topo_t *px_cart_topo(int ndims, const int *dims, const int *periods, int rank)
{
    px_mpi_topo_t *t = px_mpi_topo_new(MPI_CART);
    if (!t)
        return NULL;
    t->ndims = ndims;
    if (ndims > 0) {
        t->dims = malloc(sizeof(int) * (size_t)ndims);
        t->periods = malloc(sizeof(int) * (size_t)ndims);
        t->coords = malloc(sizeof(int) * (size_t)ndims);
        if (!t->dims || !t->periods || !t->coords) {
            px_mpi_topo_free(t);
            return NULL;
        }
        for (int i = 0; i < ndims; i++) {
            t->dims[i] = dims[i];
            t->periods[i] = periods[i] != 0;
        }
        px_mpi_topo_cart_coords_of(t, rank, t->coords);
    }
    if (px_mpi_topo_cart_neighbours(t, rank) != MPI_SUCCESS) {
        px_mpi_topo_free(t);
        return NULL;
    }
    return t;
}

/* Checks the grid and returns its number of processes, or -1 after
 * reporting the error into *rc. */
static long long px_cart_check(px_mpi_comm_t *c, int ndims, const int *dims, const int *periods,
                               const char *fn, int *rc)
{
    *rc = MPI_SUCCESS;
    if (ndims < 0) {
        *rc = px_mpi_error(c, MPI_ERR_DIMS, fn, "negative ndims %d", ndims);
        return -1;
    }
    if (ndims > 64) {
        *rc = px_mpi_error(c, MPI_ERR_DIMS, fn, "too many dimensions (%d, at most 64)", ndims);
        return -1;
    }
    if (ndims > 0 && (!dims || !periods)) {
        *rc = px_mpi_error(c, MPI_ERR_ARG, fn, "null dims or periods");
        return -1;
    }
    long long n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0) {
            *rc = px_mpi_error(c, MPI_ERR_DIMS, fn, "dims[%d] = %d is not positive", i, dims[i]);
            return -1;
        }
        n *= dims[i];
        if (n > c->size) {
            *rc = px_mpi_error(c, MPI_ERR_DIMS, fn,
                               "the grid needs more processes than the communicator's %d", c->size);
            return -1;
        }
    }
    return n;
}

/* ---------- Cart_create and queries ---------- */

/* reorder=1 (map 0), or MPI_Cart_map (map 1): the grid's edges (each
 * process to its neighbours along every dimension) placed onto old's first
 * n members. */
static int px_cart_place(px_mpi_comm_t *c, int n, int ndims, const int *dims, const int *periods,
                         int map, int *order, int *newrank)
{
    px_mpi_topo_t *g = px_cart_topo(ndims, dims, periods, 0);
    int m = 2 * ndims * n, k = 0;
    int *src = malloc(sizeof(int) * (size_t)(m + 1)), *dst = malloc(sizeof(int) * (size_t)(m + 1));
    int rc = MPI_ERR_NO_MEM;
    if (g && src && dst) {
        for (int v = 0; v < n; v++) {
            px_mpi_topo_cart_coords_of(g, v, g->coords);
            for (int d = 0; d < ndims; d++)
                for (int disp = -1; disp <= 1; disp += 2) {
                    int u = px_cart_shifted(g, g->coords, d, disp);
                    if (u != MPI_PROC_NULL) {
                        src[k] = v;
                        dst[k++] = u;
                    }
                }
        }
        rc = MPI_SUCCESS;
    }
    int rc2;
    if (map) {
        rc2 = rc == MPI_SUCCESS ? px_mpi_topo_map(c, n, k, src, dst, newrank) : rc;
    } else {
        /* every member takes part, also after running out of memory above */
        rc2 = px_mpi_topo_reorder(c, n, rc == MPI_SUCCESS ? k : 0, src, dst, NULL, order, newrank);
    }
    px_mpi_topo_free(g);
    free(src);
    free(dst);
    return rc != MPI_SUCCESS ? rc : rc2;
}

PX_PMPI(MPI_Cart_create)
(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
 MPI_Comm *comm_cart)
{
    PX_CS_ENTER();
    PX_OUT_COMM_NULL(comm_cart);
    int rc;
    PX_CHECK_INIT("MPI_Cart_create");
    PX_GET_COMM(c, comm_old, "MPI_Cart_create");
    if (!comm_cart)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Cart_create", "null comm_cart");
    long long n = px_cart_check(c, ndims, dims, periods, "MPI_Cart_create", &rc);
    if (n < 0)
        return rc;
    int *order = NULL, newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    if (reorder && !c->is_inter) {
        order = malloc(sizeof(int) * (size_t)n);
        rc = px_cart_place(c, (int)n, ndims, dims, periods, 0, order, &newrank);
        if (!order || rc != MPI_SUCCESS) {
            uint32_t ctx;
            px_mpi_comm_alloc_ctx(c, &ctx);
            free(order);
            return px_mpi_error(c, order ? rc : MPI_ERR_NO_MEM, "MPI_Cart_create",
                                "cannot place the ranks");
        }
    }
    px_mpi_topo_t *t = NULL;
    if (newrank != MPI_UNDEFINED && !(t = px_cart_topo(ndims, dims, periods, newrank))) {
        /* still take part in the context agreement, then fail */
        uint32_t ctx;
        px_mpi_comm_alloc_ctx(c, &ctx);
        free(order);
        return px_mpi_error(c, MPI_ERR_NO_MEM, "MPI_Cart_create", "out of memory");
    }
    rc = px_mpi_topo_comm_create(c, (int)n, order, t, comm_cart, "MPI_Cart_create");
    free(order);
    return rc;
}
PX_WEAK(MPI_Cart_create)

PX_PMPI(MPI_Cartdim_get)(MPI_Comm comm, int *ndims)
{
    PX_CS_ENTER();
    int rc;
    PX_CHECK_INIT("MPI_Cartdim_get");
    PX_GET_COMM(c, comm, "MPI_Cartdim_get");
    px_mpi_topo_t *t = px_mpi_topo_of(c, MPI_CART, "MPI_Cartdim_get", &rc);
    if (!t)
        return rc;
    if (!ndims)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Cartdim_get", "null ndims");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Cartdim_get)

PX_PMPI(MPI_Cart_get)(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    PX_CS_ENTER();
    int rc;
    PX_CHECK_INIT("MPI_Cart_get");
    PX_GET_COMM(c, comm, "MPI_Cart_get");
    px_mpi_topo_t *t = px_mpi_topo_of(c, MPI_CART, "MPI_Cart_get", &rc);
    if (!t)
        return rc;
    if (maxdims < 0)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Cart_get", "negative maxdims %d", maxdims);
    int n = maxdims < t->ndims ? maxdims : t->ndims;
    if (n > 0 && (!dims || !periods || !coords))
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Cart_get", "null output array");
    for (int i = 0; i < n; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
        coords[i] = t->coords[i];
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Cart_get)

PX_PMPI(MPI_Cart_rank)(MPI_Comm comm, const int coords[], int *rank)
{
    PX_CS_ENTER();
    int rc, w[64];
    PX_CHECK_INIT("MPI_Cart_rank");
    PX_GET_COMM(c, comm, "MPI_Cart_rank");
    px_mpi_topo_t *t = px_mpi_topo_of(c, MPI_CART, "MPI_Cart_rank", &rc);
    if (!t)
        return rc;
    if (!rank || (t->ndims > 0 && !coords))
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Cart_rank", "null argument");
    for (int i = 0; i < t->ndims; i++) {
        int v = coords[i];
        if (t->periods[i]) {
            v %= t->dims[i];
            if (v < 0)
                v += t->dims[i];
        } else if (v < 0 || v >= t->dims[i])
            return px_mpi_error(c, MPI_ERR_ARG, "MPI_Cart_rank",
                                "coordinate %d of dimension %d is outside 0..%d (not periodic)", v,
                                i, t->dims[i] - 1);
        w[i] = v;
    }
    *rank = px_mpi_topo_cart_rank_of(t, w);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Cart_rank)

PX_PMPI(MPI_Cart_coords)(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    PX_CS_ENTER();
    int rc;
    PX_CHECK_INIT("MPI_Cart_coords");
    PX_GET_COMM(c, comm, "MPI_Cart_coords");
    px_mpi_topo_t *t = px_mpi_topo_of(c, MPI_CART, "MPI_Cart_coords", &rc);
    if (!t)
        return rc;
    if (rank < 0 || rank >= c->size)
        return px_mpi_error(c, MPI_ERR_RANK, "MPI_Cart_coords", "invalid rank %d (size %d)", rank,
                            c->size);
    if (maxdims < t->ndims)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Cart_coords",
                            "maxdims %d is less than the %d dimensions", maxdims, t->ndims);
    if (t->ndims > 0 && !coords)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Cart_coords", "null coords");
    px_mpi_topo_cart_coords_of(t, rank, coords);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Cart_coords)

PX_PMPI(MPI_Cart_shift)(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    PX_CS_ENTER();
    int rc;
    PX_CHECK_INIT("MPI_Cart_shift");
    PX_GET_COMM(c, comm, "MPI_Cart_shift");
    px_mpi_topo_t *t = px_mpi_topo_of(c, MPI_CART, "MPI_Cart_shift", &rc);
    if (!t)
        return rc;
    if (!rank_source || !rank_dest)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Cart_shift", "null argument");
    if (direction < 0 || direction >= t->ndims)
        return px_mpi_error(c, MPI_ERR_DIMS, "MPI_Cart_shift", "direction %d is outside 0..%d",
                            direction, t->ndims - 1);
    if (disp == INT_MIN)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Cart_shift", "displacement out of range");
    *rank_dest = px_cart_shifted(t, t->coords, direction, disp);
    *rank_source = px_cart_shifted(t, t->coords, direction, -disp);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Cart_shift)

PX_PMPI(MPI_Cart_sub)(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    PX_CS_ENTER();
    PX_OUT_COMM_NULL(newcomm);
    int rc;
    PX_CHECK_INIT("MPI_Cart_sub");
    PX_GET_COMM(c, comm, "MPI_Cart_sub");
    px_mpi_topo_t *t = px_mpi_topo_of(c, MPI_CART, "MPI_Cart_sub", &rc);
    if (!t)
        return rc;
    if (!newcomm || (t->ndims > 0 && !remain_dims))
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Cart_sub", "null argument");
    /* Every member computes its sub-grid alone; the sub-grids are disjoint,
     * so one context id serves them all (as in MPI_Comm_split). */
    uint32_t ctx;
    rc = px_mpi_comm_alloc_ctx(c, &ctx);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Cart_sub", "cannot agree on a context id");
    int sdims[64], sper[64], nd = 0, n = 1;
    for (int i = 0; i < t->ndims; i++)
        if (remain_dims[i]) {
            sdims[nd] = t->dims[i];
            sper[nd] = t->periods[i];
            nd++;
            n *= t->dims[i];
        }
    px_mpi_group_t *g = px_mpi_group_new(n);
    if (!g)
        return px_mpi_error(c, MPI_ERR_NO_MEM, "MPI_Cart_sub", "out of memory");
    /* Members in increasing rank order of the parent: their sub-grid
     * coordinates then run row-major as well. */
    int co[64], k = 0, myrank = -1;
    for (int r = 0; r < c->size && k < n; r++) {
        px_mpi_topo_cart_coords_of(t, r, co);
        int same = 1;
        for (int i = 0; i < t->ndims && same; i++)
            same = remain_dims[i] || co[i] == t->coords[i];
        if (!same)
            continue;
        if (r == c->rank)
            myrank = k;
        g->world[k++] = c->group->world[r];
    }
    g->rank = myrank;
    px_mpi_topo_t *st = px_cart_topo(nd, sdims, sper, myrank);
    if (!st || k != n || myrank < 0) {
        px_mpi_topo_free(st);
        px_mpi_group_release(g);
        return px_mpi_error(c, st ? MPI_ERR_INTERN : MPI_ERR_NO_MEM, "MPI_Cart_sub",
                            "cannot build the sub-grid");
    }
    px_mpi_comm_t *nc;
    rc = px_mpi_comm_create_from_group(c, g, ctx, &nc);
    if (rc != MPI_SUCCESS) {
        px_mpi_topo_free(st);
        px_mpi_group_release(g);
        return px_mpi_error(c, rc, "MPI_Cart_sub", "out of memory");
    }
    nc->topo = st;
    nc->topo_free = px_mpi_topo_free;
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Cart_sub)

PX_PMPI(MPI_Cart_map)(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    PX_CS_ENTER();
    int rc;
    PX_CHECK_INIT("MPI_Cart_map");
    PX_GET_COMM(c, comm, "MPI_Cart_map");
    if (!newrank)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Cart_map", "null newrank");
    long long n = px_cart_check(c, ndims, dims, periods, "MPI_Cart_map", &rc);
    if (n < 0)
        return rc;
    /* the placement reorder=1 would choose (the identity without one) */
    rc = px_cart_place(c, (int)n, ndims, dims, periods, 1, NULL, newrank);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Cart_map", "cannot place the ranks");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Cart_map)
