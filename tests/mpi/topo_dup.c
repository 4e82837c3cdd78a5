/* MPI_Comm_dup of Cartesian, graph and distributed graph communicators
 * keeps the topology: the queries answer the same on the copy, the copy's
 * neighbour collectives work, and the copy outlives the original. */
#include "px_test.h"

int main(int argc, char **argv)
{
    int checks = 0, st;
    px_test_init(&argc, &argv, "topo_dup");
    int size = px_test_size, rank = px_test_rank;

    /* Cartesian: 2-D, periodic first dimension */
    {
        int dims[2] = {0, 0}, per[2] = {1, 0}, gd[2], gp[2], gc[2], od[2], op[2], oc[2];
        MPI_Comm cart, dup;
        MPI_Dims_create(size, 2, dims);
        PX_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &cart));
        PX_MPI(MPI_Comm_dup(cart, &dup));
        PX_MPI(MPI_Cart_get(cart, 2, od, op, oc));
        MPI_Comm_free(&cart); /* the copy must not depend on the original */
        PX_MPI(MPI_Topo_test(dup, &st));
        PX_CHECK(st == MPI_CART, "Topo_test(dup of cart) = %d", st);
        PX_REQUIRE(st == MPI_CART, "no topology on the duplicate");
        PX_MPI(MPI_Cart_get(dup, 2, gd, gp, gc));
        for (int i = 0; i < 2; i++)
            PX_CHECK(gd[i] == od[i] && !!gp[i] == !!op[i] && gc[i] == oc[i],
                     "dup Cart_get dim %d: (%d,%d,%d) want (%d,%d,%d)", i, gd[i], gp[i], gc[i],
                     od[i], op[i], oc[i]);
        int src, dst;
        PX_MPI(MPI_Cart_shift(dup, 0, 1, &src, &dst));
        int sb[4] = {rank, rank, rank, rank}, rb[4] = {-1, -1, -1, -1};
        PX_MPI(MPI_Neighbor_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, dup));
        PX_CHECK(rb[0] == src && rb[1] == dst, "dup allgather from (%d,%d), want (%d,%d)", rb[0],
                 rb[1], src, dst);
        MPI_Comm dup2;
        PX_MPI(MPI_Comm_dup(dup, &dup2)); /* a copy of a copy */
        int nd = -1;
        PX_MPI(MPI_Cartdim_get(dup2, &nd));
        PX_CHECK(nd == 2, "Cartdim_get(dup of dup) = %d", nd);
        MPI_Comm_free(&dup);
        MPI_Comm_free(&dup2);
        checks += 4;
    }

    /* graph: ring */
    {
        int *index = malloc(sizeof(int) * (size_t)size);
        int *edges = malloc(sizeof(int) * 2 * (size_t)size);
        for (int i = 0; i < size; i++) {
            index[i] = 2 * (i + 1);
            edges[2 * i] = (i + 1) % size;
            edges[2 * i + 1] = (i - 1 + size) % size;
        }
        MPI_Comm g, dup;
        PX_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
        PX_MPI(MPI_Comm_dup(g, &dup));
        MPI_Comm_free(&g);
        PX_MPI(MPI_Topo_test(dup, &st));
        PX_REQUIRE(st == MPI_GRAPH, "Topo_test(dup of graph) = %d", st);
        int nn, ne, nb[2];
        PX_MPI(MPI_Graphdims_get(dup, &nn, &ne));
        PX_CHECK(nn == size && ne == 2 * size, "dup Graphdims_get (%d, %d)", nn, ne);
        PX_MPI(MPI_Graph_neighbors(dup, rank, 2, nb));
        PX_CHECK(nb[0] == edges[2 * rank] && nb[1] == edges[2 * rank + 1],
                 "dup Graph_neighbors (%d, %d)", nb[0], nb[1]);
        MPI_Comm_free(&dup);
        free(index);
        free(edges);
        checks += 3;
    }

    /* distributed graph, weighted */
    {
        int src[1] = {(rank + 1) % size}, dst[1] = {(rank - 1 + size) % size};
        int sw[1] = {7 + rank}, dw[1] = {9 + rank};
        MPI_Comm g, dup;
        PX_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, sw, 1, dst, dw, MPI_INFO_NULL,
                                              0, &g));
        PX_MPI(MPI_Comm_dup(g, &dup));
        MPI_Comm_free(&g);
        PX_MPI(MPI_Topo_test(dup, &st));
        PX_REQUIRE(st == MPI_DIST_GRAPH, "Topo_test(dup of dist graph) = %d", st);
        int in, out, w, gs[1], gsw[1], gd[1], gdw[1];
        PX_MPI(MPI_Dist_graph_neighbors_count(dup, &in, &out, &w));
        PX_CHECK(in == 1 && out == 1 && w, "dup counts (%d, %d, %d)", in, out, w);
        PX_MPI(MPI_Dist_graph_neighbors(dup, 1, gs, gsw, 1, gd, gdw));
        PX_CHECK(gs[0] == src[0] && gsw[0] == sw[0] && gd[0] == dst[0] && gdw[0] == dw[0],
                 "dup neighbours (%d w%d, %d w%d)", gs[0], gsw[0], gd[0], gdw[0]);
        int v = rank, got = -1;
        PX_MPI(MPI_Neighbor_alltoall(&v, 1, MPI_INT, &got, 1, MPI_INT, dup));
        PX_CHECK(got == src[0], "dup alltoall got %d, want %d", got, src[0]);
        MPI_Comm_free(&dup);
        checks += 3;
    }

    /* a plain duplicate of MPI_COMM_WORLD still has none */
    {
        MPI_Comm dup;
        PX_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        PX_MPI(MPI_Topo_test(dup, &st));
        PX_CHECK(st == MPI_UNDEFINED, "Topo_test(dup of world) = %d", st);
        MPI_Comm_free(&dup);
        checks++;
    }
    return px_test_finish("%d checks", checks);
}
