/* Distributed graph topologies: Dist_graph_create_adjacent (weighted,
 * MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY) and the general Dist_graph_create
 * (edges given by other processes than their ends), checked through
 * Dist_graph_neighbors_count / Dist_graph_neighbors against edge lists
 * computed here. */
#include "px_test.h"

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Compares (peer, weight) lists as multisets: the general constructor
 * leaves the order of neighbours to the implementation. */
static void check_multiset(const char *what, int n, const int *peer, const int *w, int nwant,
                           const int *wpeer, const int *ww)
{
    PX_CHECK(n == nwant, "%s: %d neighbours, want %d", what, n, nwant);
    if (n != nwant)
        return;
    int *a = malloc(sizeof(int) * 2 * (size_t)(n + 1));
    int *b = malloc(sizeof(int) * 2 * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        a[2 * i] = peer[i];
        a[2 * i + 1] = w ? w[i] : 0;
        b[2 * i] = wpeer[i];
        b[2 * i + 1] = ww ? ww[i] : 0;
    }
    qsort(a, (size_t)n, 2 * sizeof(int), cmp_pair);
    qsort(b, (size_t)n, 2 * sizeof(int), cmp_pair);
    for (int i = 0; i < n; i++)
        PX_CHECK(a[2 * i] == b[2 * i] && a[2 * i + 1] == b[2 * i + 1],
                 "%s: entry %d is (%d, w %d), want (%d, w %d)", what, i, a[2 * i], a[2 * i + 1],
                 b[2 * i], b[2 * i + 1]);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    int checks = 0;
    px_test_init(&argc, &argv, "topo_dist_graph");
    int n = px_test_size, r = px_test_rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* adjacent, weighted: edges u->u+1 and u->u-2, weight 100u+v */
    {
        int src[2] = {(r - 1 + n) % n, (r + 2) % n}, dst[2] = {(r + 1) % n, (r - 2 + 2 * n) % n};
        int sw[2] = {100 * src[0] + r, 100 * src[1] + r};
        int dw[2] = {100 * r + dst[0], 100 * r + dst[1]};
        MPI_Comm g;
        PX_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL,
                                              0, &g));
        int st, indeg, outdeg, weighted, gs[4], gsw[4], gd[4], gdw[4];
        PX_MPI(MPI_Topo_test(g, &st));
        PX_CHECK(st == MPI_DIST_GRAPH, "Topo_test = %d", st);
        PX_MPI(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
        PX_CHECK(indeg == 2 && outdeg == 2 && weighted, "counts (%d, %d, %d)", indeg, outdeg,
                 weighted);
        PX_MPI(MPI_Dist_graph_neighbors(g, 2, gs, gsw, 2, gd, gdw));
        /* the adjacent constructor keeps the order it was given */
        for (int i = 0; i < 2; i++) {
            PX_CHECK(gs[i] == src[i] && gsw[i] == sw[i], "source %d: (%d, %d), want (%d, %d)", i,
                     gs[i], gsw[i], src[i], sw[i]);
            PX_CHECK(gd[i] == dst[i] && gdw[i] == dw[i], "dest %d: (%d, %d), want (%d, %d)", i,
                     gd[i], gdw[i], dst[i], dw[i]);
        }
        int rk, sz;
        MPI_Comm_rank(g, &rk);
        MPI_Comm_size(g, &sz);
        PX_CHECK(rk == r && sz == n, "rank/size (%d, %d) in the graph", rk, sz);
        /* not a Cartesian or graph communicator */
        int nd, nn, ne;
        MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
        PX_CHECK(MPI_Cartdim_get(g, &nd) != MPI_SUCCESS, "Cartdim_get accepted");
        PX_CHECK(MPI_Graphdims_get(g, &nn, &ne) != MPI_SUCCESS, "Graphdims_get accepted");
        MPI_Comm_free(&g);
        checks += 8;
    }

    /* adjacent, unweighted */
    {
        int src[1] = {(r + 1) % n}, dst[1] = {(r - 1 + n) % n};
        MPI_Comm g;
        PX_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 1, dst,
                                              MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &g));
        /* with reorder=1 this process may be another vertex of the ring:
         * its lists are those rank gr gave */
        int gr;
        MPI_Comm_rank(g, &gr);
        src[0] = (gr + 1) % n;
        dst[0] = (gr - 1 + n) % n;
        int indeg, outdeg, weighted = -1, gs[1] = {-5}, gd[1] = {-5};
        PX_MPI(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
        PX_CHECK(indeg == 1 && outdeg == 1 && !weighted, "unweighted counts (%d, %d, %d)", indeg,
                 outdeg, weighted);
        PX_MPI(MPI_Dist_graph_neighbors(g, 1, gs, MPI_UNWEIGHTED, 1, gd, MPI_UNWEIGHTED));
        PX_CHECK(gs[0] == src[0] && gd[0] == dst[0], "unweighted neighbours (%d, %d)", gs[0],
                 gd[0]);
        MPI_Comm_free(&g);
        checks += 2;
    }

    /* adjacent, no edges, MPI_WEIGHTS_EMPTY */
    {
        MPI_Comm g;
        PX_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL,
                                              MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
        int indeg = -1, outdeg = -1, weighted = -1;
        PX_MPI(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
        PX_CHECK(indeg == 0 && outdeg == 0, "empty graph counts (%d, %d)", indeg, outdeg);
        MPI_Comm_free(&g);
        checks++;
    }

    /* general, weighted: rank q gives edges (q+1)->q and (q+1)->(q+3) with
     * weights 1000q and 1000q+1; so v sends to v-1 and v+2, and receives
     * from v+1 and v-2 */
    {
        int s[1] = {(r + 1) % n}, deg[1] = {2}, d[2] = {r, (r + 3) % n};
        int w[2] = {1000 * r, 1000 * r + 1};
        MPI_Comm g;
        PX_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, s, deg, d, w, MPI_INFO_NULL, 0, &g));
        int indeg, outdeg, weighted, gs[8], gsw[8], gd[8], gdw[8];
        PX_MPI(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
        PX_CHECK(weighted, "general weighted graph reports unweighted");
        PX_REQUIRE(indeg <= 8 && outdeg <= 8, "degrees (%d, %d)", indeg, outdeg);
        PX_MPI(MPI_Dist_graph_neighbors(g, indeg, gs, gsw, outdeg, gd, gdw));
        int qa = (r - 1 + n) % n; /* gave both my out-edges */
        int wout[2] = {(r - 1 + n) % n, (r + 2) % n}, wow[2] = {1000 * qa, 1000 * qa + 1};
        int qc = r, qd = (r - 3 + 3 * n) % n; /* givers of my in-edges */
        int win[2] = {(r + 1) % n, (r - 2 + 2 * n) % n}, wiw[2] = {1000 * qc, 1000 * qd + 1};
        check_multiset("general out", outdeg, gd, gdw, 2, wout, wow);
        check_multiset("general in", indeg, gs, gsw, 2, win, wiw);
        MPI_Comm_free(&g);
        checks += 3;
    }

    /* general, unweighted, all edges given by rank 0: s->s+1 and s->0 */
    {
        int *s = NULL, *deg = NULL, *d = NULL, m = 0;
        if (r == 0) {
            m = n;
            s = malloc(sizeof(int) * (size_t)n);
            deg = malloc(sizeof(int) * (size_t)n);
            d = malloc(sizeof(int) * 2 * (size_t)n);
            for (int i = 0; i < n; i++) {
                s[i] = i;
                deg[i] = 2;
                d[2 * i] = (i + 1) % n;
                d[2 * i + 1] = 0;
            }
        }
        MPI_Comm g;
        PX_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, m, s, deg, d, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                     &g));
        int indeg, outdeg, weighted = -1;
        PX_MPI(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
        PX_CHECK(!weighted, "unweighted general graph reports weighted");
        int *gs = malloc(sizeof(int) * (size_t)(indeg + 1)), gd[2];
        PX_REQUIRE(outdeg == 2, "out-degree %d, want 2", outdeg);
        PX_MPI(MPI_Dist_graph_neighbors(g, indeg, gs, MPI_UNWEIGHTED, 2, gd, MPI_UNWEIGHTED));
        int wout[2] = {(r + 1) % n, 0};
        check_multiset("star out", 2, gd, NULL, 2, wout, NULL);
        int *win = malloc(sizeof(int) * (size_t)(n + 1)), nin = 0;
        win[nin++] = (r - 1 + n) % n;
        if (r == 0)
            for (int i = 0; i < n; i++)
                win[nin++] = i;
        check_multiset("star in", indeg, gs, NULL, nin, win, NULL);
        free(win);
        free(gs);
        free(s);
        free(deg);
        free(d);
        MPI_Comm_free(&g);
        checks += 3;
    }

    return px_test_finish("%d checks", checks);
}
