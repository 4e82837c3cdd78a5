/* Graph topologies: MPI_Graph_create and its queries on hand-made graphs
 * (the example graph of the MPI standard, a ring with repeated neighbours
 * at small sizes), Graph_map, Topo_test and errors. */
#include "px_test.h"

static int is_class(int rc, int cls_want)
{
    int cls = -1;
    if (rc == MPI_SUCCESS)
        return 0;
    MPI_Error_class(rc, &cls);
    return cls == cls_want;
}

/* Checks all queries against (nnodes, index, edges). */
static int check_graph(MPI_Comm g, int nnodes, const int *index, const int *edges)
{
    int checks = 0, status, nn, ne, rank;
    MPI_Comm_rank(g, &rank);
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    PX_MPI(MPI_Topo_test(g, &status));
    PX_CHECK(status == MPI_GRAPH, "Topo_test = %d", status);
    PX_MPI(MPI_Graphdims_get(g, &nn, &ne));
    PX_CHECK(nn == nnodes && ne == index[nnodes - 1], "Graphdims_get = (%d, %d), want (%d, %d)", nn,
             ne, nnodes, index[nnodes - 1]);
    int gi[16], ge[64];
    PX_MPI(MPI_Graph_get(g, 16, 64, gi, ge));
    for (int i = 0; i < nnodes; i++)
        PX_CHECK(gi[i] == index[i], "Graph_get index[%d] = %d, want %d", i, gi[i], index[i]);
    for (int i = 0; i < index[nnodes - 1]; i++)
        PX_CHECK(ge[i] == edges[i], "Graph_get edges[%d] = %d, want %d", i, ge[i], edges[i]);
    for (int r = 0; r < nnodes; r++) {
        int first = r ? index[r - 1] : 0, deg = index[r] - first, cnt = -1, nb[64];
        PX_MPI(MPI_Graph_neighbors_count(g, r, &cnt));
        PX_CHECK(cnt == deg, "Graph_neighbors_count(%d) = %d, want %d", r, cnt, deg);
        PX_MPI(MPI_Graph_neighbors(g, r, 64, nb));
        for (int i = 0; i < deg; i++)
            PX_CHECK(nb[i] == edges[first + i], "Graph_neighbors(%d)[%d] = %d, want %d", r, i,
                     nb[i], edges[first + i]);
        checks += 2;
    }
    int cnt, nd;
    PX_CHECK(MPI_Graph_neighbors_count(g, nnodes, &cnt) != MPI_SUCCESS,
             "neighbours of rank %d (outside the graph) accepted", nnodes);
    PX_CHECK(is_class(MPI_Cartdim_get(g, &nd), MPI_ERR_TOPOLOGY),
             "Cartdim_get on a graph communicator accepted");
    int sum = 0;
    PX_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, g));
    PX_CHECK(sum == nnodes * (nnodes - 1) / 2, "Allreduce on the graph gave %d", sum);
    return checks + 6;
}

int main(int argc, char **argv)
{
    int checks = 0;
    px_test_init(&argc, &argv, "topo_graph");
    int size = px_test_size, rank = px_test_rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* the example of the standard: 0-1, 0-3, 2-3 */
    if (size >= 4) {
        static const int index[4] = {2, 3, 4, 6}, edges[6] = {1, 3, 0, 3, 0, 2};
        MPI_Comm g;
        int nr = -2;
        PX_MPI(MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 0, &g));
        PX_MPI(MPI_Graph_map(MPI_COMM_WORLD, 4, index, edges, &nr));
        if (rank < 4) {
            PX_REQUIRE(g != MPI_COMM_NULL, "member of the graph got MPI_COMM_NULL");
            int r;
            MPI_Comm_rank(g, &r);
            PX_CHECK(r == rank, "graph rank %d without reordering", r);
            PX_CHECK(nr == rank, "Graph_map gave %d", nr);
            checks += check_graph(g, 4, index, edges);
            MPI_Comm_free(&g);
        } else {
            PX_CHECK(g == MPI_COMM_NULL, "rank outside the graph got a communicator");
            PX_CHECK(nr == MPI_UNDEFINED, "Graph_map gave %d outside the graph", nr);
        }
        checks += 2;
    }

    /* a ring over every rank: node i lists i+1 then i-1 (at 1 and 2 ranks
     * the same neighbour appears twice) */
    {
        int *index = malloc(sizeof(int) * (size_t)size);
        int *edges = malloc(sizeof(int) * 2 * (size_t)size);
        for (int i = 0; i < size; i++) {
            index[i] = 2 * (i + 1);
            edges[2 * i] = (i + 1) % size;
            edges[2 * i + 1] = (i - 1 + size) % size;
        }
        MPI_Comm g;
        PX_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &g));
        PX_REQUIRE(g != MPI_COMM_NULL, "ring graph gave MPI_COMM_NULL");
        checks += check_graph(g, size, index, edges);
        /* the graph's neighbours talk to each other; reorder=1 may have
         * given this process another rank in g */
        int nb[2], got[2] = {-1, -1}, gr;
        MPI_Comm_rank(g, &gr);
        PX_MPI(MPI_Graph_neighbors(g, gr, 2, nb));
        MPI_Request rq[4];
        PX_MPI(MPI_Irecv(&got[0], 1, MPI_INT, nb[0], 1, g, &rq[0]));
        PX_MPI(MPI_Irecv(&got[1], 1, MPI_INT, nb[1], 2, g, &rq[1]));
        PX_MPI(MPI_Isend(&gr, 1, MPI_INT, nb[1], 1, g, &rq[2]));
        PX_MPI(MPI_Isend(&gr, 1, MPI_INT, nb[0], 2, g, &rq[3]));
        MPI_Status sts[4];
        PX_MPI(MPI_Waitall(4, rq, sts));
        PX_CHECK(got[0] == nb[0] && got[1] == nb[1], "ring exchange got (%d,%d), want (%d,%d)",
                 got[0], got[1], nb[0], nb[1]);
        MPI_Comm_free(&g);
        free(index);
        free(edges);
        checks++;
    }

    /* errors: more nodes than ranks */
    {
        int index2[2] = {1, 2}, edges2[2] = {0, 0}, rc;
        MPI_Comm g = MPI_COMM_NULL;
        if (size == 1) {
            rc = MPI_Graph_create(MPI_COMM_WORLD, 2, index2, edges2, 0, &g);
            PX_CHECK(rc != MPI_SUCCESS, "2-node graph on 1 process accepted");
        }
        int st;
        PX_MPI(MPI_Topo_test(MPI_COMM_WORLD, &st));
        PX_CHECK(st == MPI_UNDEFINED, "Topo_test(world) = %d", st);
        checks += 2;
    }
    return px_test_finish("%d checks", checks);
}
