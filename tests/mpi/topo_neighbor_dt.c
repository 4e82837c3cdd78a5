/* Neighbour collectives with derived, non-contiguous datatypes: columns of
 * a row-major matrix (vector resized to one element) sent and received by
 * Neighbor_alltoall / Ineighbor_alltoall, a strided vector gathered by
 * Neighbor_allgather, and derived send types with basic receive types in
 * Neighbor_alltoallw. */
#include "px_test.h"

#define ROWS 5
#define MAXNB 16

typedef struct {
    int cart, me, indeg, outdeg;
    int in[MAXNB], out[MAXNB];
    int in_key[MAXNB][3], out_key[MAXNB][3];
} nb_t;

static int key_value(const int *k, int e) { return ((k[0] * 64 + k[1]) * 8 + k[2]) * 64 + e; }

/* Same neighbour lists and edge keys as topo_neighbor.c. */
static void nb_setup(nb_t *t, MPI_Comm comm)
{
    int st;
    memset(t, 0, sizeof(*t));
    MPI_Comm_rank(comm, &t->me);
    MPI_Topo_test(comm, &st);
    if (st == MPI_CART) {
        int nd;
        t->cart = 1;
        MPI_Cartdim_get(comm, &nd);
        for (int d = 0; d < nd; d++)
            PX_MPI(MPI_Cart_shift(comm, d, 1, &t->in[2 * d], &t->in[2 * d + 1]));
        t->indeg = t->outdeg = 2 * nd;
        memcpy(t->out, t->in, sizeof(t->in));
        for (int i = 0; i < t->indeg; i++) {
            t->in_key[i][0] = t->in[i];
            t->in_key[i][1] = i ^ 1;
            t->out_key[i][0] = t->me;
            t->out_key[i][1] = i;
        }
        return;
    }
    int w;
    PX_MPI(MPI_Dist_graph_neighbors_count(comm, &t->indeg, &t->outdeg, &w));
    PX_REQUIRE(t->indeg <= MAXNB && t->outdeg <= MAXNB, "too many neighbours");
    PX_MPI(MPI_Dist_graph_neighbors(comm, MAXNB, t->in, MPI_UNWEIGHTED, MAXNB, t->out,
                                    MPI_UNWEIGHTED));
    for (int i = 0; i < t->indeg; i++) {
        int k = 0;
        for (int j = 0; j < i; j++)
            k += t->in[j] == t->in[i];
        t->in_key[i][0] = t->in[i];
        t->in_key[i][1] = t->me;
        t->in_key[i][2] = k;
    }
    for (int i = 0; i < t->outdeg; i++) {
        int k = 0;
        for (int j = 0; j < i; j++)
            k += t->out[j] == t->out[i];
        t->out_key[i][0] = t->me;
        t->out_key[i][1] = t->out[i];
        t->out_key[i][2] = k;
    }
}

/* Column type of a ROWS x ncols row-major int matrix, extent one int. */
static MPI_Datatype column_type(int ncols)
{
    MPI_Datatype v, col;
    PX_MPI(MPI_Type_vector(ROWS, 1, ncols, MPI_INT, &v));
    PX_MPI(MPI_Type_create_resized(v, 0, (MPI_Aint)sizeof(int), &col));
    PX_MPI(MPI_Type_commit(&col));
    MPI_Type_free(&v);
    return col;
}

static int run(MPI_Comm comm, const char *name)
{
    nb_t t;
    int n = 0;
    nb_setup(&t, comm);
    int no = t.outdeg ? t.outdeg : 1, ni = t.indeg ? t.indeg : 1;
    MPI_Datatype scol = column_type(no), rcol = column_type(ni);
    int *sm = malloc(sizeof(int) * ROWS * (size_t)no);
    int *rm = malloc(sizeof(int) * ROWS * (size_t)ni);

    /* alltoall: column j of my matrix to out[j], into column i of theirs */
    for (int nb = 0; nb < 2; nb++) {
        for (int r = 0; r < ROWS; r++)
            for (int j = 0; j < t.outdeg; j++)
                sm[r * no + j] = key_value(t.out_key[j], r + 8 * nb);
        for (int i = 0; i < ROWS * ni; i++)
            rm[i] = -1;
        if (nb) {
            MPI_Request rq;
            PX_MPI(MPI_Ineighbor_alltoall(sm, 1, scol, rm, 1, rcol, comm, &rq));
            PX_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else
            PX_MPI(MPI_Neighbor_alltoall(sm, 1, scol, rm, 1, rcol, comm));
        for (int i = 0; i < t.indeg; i++)
            for (int r = 0; r < ROWS; r++) {
                int want = t.in[i] == MPI_PROC_NULL ? -1 : key_value(t.in_key[i], r + 8 * nb);
                PX_CHECK(rm[r * ni + i] == want, "%s %s alltoall column %d row %d = %d, want %d",
                         name, nb ? "nonblocking" : "blocking", i, r, rm[r * ni + i], want);
                n++;
            }
    }

    /* allgather: every other int of a 2*ROWS array, into contiguous blocks */
    {
        MPI_Datatype strided;
        int src[2 * ROWS], *dst = malloc(sizeof(int) * ROWS * (size_t)ni);
        PX_MPI(MPI_Type_vector(ROWS, 1, 2, MPI_INT, &strided));
        PX_MPI(MPI_Type_commit(&strided));
        for (int e = 0; e < 2 * ROWS; e++)
            src[e] = e % 2 ? -5 : t.me * 100 + e / 2;
        for (int i = 0; i < ROWS * ni; i++)
            dst[i] = -1;
        PX_MPI(MPI_Neighbor_allgather(src, 1, strided, dst, ROWS, MPI_INT, comm));
        for (int i = 0; i < t.indeg; i++)
            for (int e = 0; e < ROWS; e++) {
                int want = t.in[i] == MPI_PROC_NULL ? -1 : t.in[i] * 100 + e;
                PX_CHECK(dst[i * ROWS + e] == want, "%s allgather block %d[%d] = %d, want %d", name,
                         i, e, dst[i * ROWS + e], want);
                n++;
            }
        MPI_Type_free(&strided);
        free(dst);
    }

    /* alltoallw: columns out, contiguous in, at byte displacements */
    {
        int sc[MAXNB], rc[MAXNB];
        MPI_Aint sd[MAXNB], rd[MAXNB];
        MPI_Datatype st[MAXNB], rt[MAXNB];
        int *flat = malloc(sizeof(int) * (ROWS + 1) * (size_t)ni);
        for (int r = 0; r < ROWS; r++)
            for (int j = 0; j < t.outdeg; j++)
                sm[r * no + j] = key_value(t.out_key[j], r + 30);
        for (int j = 0; j < t.outdeg; j++) {
            sc[j] = 1;
            sd[j] = (MPI_Aint)(j * (int)sizeof(int));
            st[j] = scol;
        }
        for (int i = 0; i < t.indeg; i++) {
            rc[i] = ROWS;
            rd[i] = (MPI_Aint)((size_t)(t.indeg - 1 - i) * (ROWS + 1) * sizeof(int));
            rt[i] = MPI_INT;
        }
        for (int i = 0; i < (ROWS + 1) * ni; i++)
            flat[i] = -1;
        PX_MPI(MPI_Neighbor_alltoallw(sm, sc, sd, st, flat, rc, rd, rt, comm));
        for (int i = 0; i < t.indeg; i++)
            for (int r = 0; r < ROWS; r++) {
                int got = flat[(t.indeg - 1 - i) * (ROWS + 1) + r];
                int want = t.in[i] == MPI_PROC_NULL ? -1 : key_value(t.in_key[i], r + 30);
                PX_CHECK(got == want, "%s alltoallw block %d row %d = %d, want %d", name, i, r, got,
                         want);
                n++;
            }
        free(flat);
    }
    MPI_Type_free(&scol);
    MPI_Type_free(&rcol);
    free(sm);
    free(rm);
    return n;
}

int main(int argc, char **argv)
{
    int n = 0;
    px_test_init(&argc, &argv, "topo_neighbor_dt");
    int size = px_test_size, rank = px_test_rank;
    MPI_Comm c;

    int d2[2] = {0, 0}, p2[2] = {0, 0};
    MPI_Dims_create(size, 2, d2);
    PX_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &c));
    n += run(c, "grid");
    MPI_Comm_free(&c);

    if (size >= 3) { /* a ring without repeated neighbours */
        int d1[1] = {size}, p1[1] = {1};
        PX_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &c));
        n += run(c, "ring");
        MPI_Comm_free(&c);
    }

    /* v -> v+1, v -> v-2: no repeated neighbour at 2 and at 4 or more ranks
     * (repeats are topo_neighbor's business) */
    if (size == 2 || size >= 4) {
        int src[2] = {(rank - 1 + size) % size, (rank + 2) % size};
        int dst[2] = {(rank + 1) % size, (rank - 2 + 2 * size) % size};
        PX_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst,
                                              MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
        n += run(c, "distgraph");
        MPI_Comm_free(&c);
    }
    return px_test_finish("%d elements checked", n);
}
