/* Placement of a 3-D stencil (MPI_Cart_create, MPI_Graph_create and
 * MPI_Dist_graph_create(_adjacent) with reorder=1; MPI_Cart_map and
 * MPI_Graph_map must give the ranks reorder=1 gave). Each new communicator
 * must be a permutation of the old ranks that every rank sees the same,
 * its neighbours must be the stencil's, and messages over it must arrive
 * from the right ranks. Then each rank classifies its messages to its
 * neighbours (same host, 1 hop, farther or unknown under PX_TOPO) and
 * rank 0 prints the job's totals per communicator:
 *   <name>: intra N 1hop N far N
 * With MIN_INTRA and MAX_FAR given, every reordered communicator must keep
 * at least MIN_INTRA messages on one host and at most MAX_FAR farther than
 * one hop; reorder=0 must be the identity.
 *   topo_place [MIN_INTRA MAX_FAR]
 * 32 ranks make the 2x4x4 grid of the topology dissertation's placement
 * example; other counts a grid from MPI_Dims_create. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/topo.h"

static int dims[3], nprocs, myrank, errors;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "rank %d: ", myrank);                                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            errors++;                                                                              \
        }                                                                                          \
    } while (0)

/* The stencil's neighbours of vertex v (row-major, non-periodic), in the
 * order Cartesian topologies list them without the missing ones. */
static int stencil(int v, int *nb)
{
    int c[3] = {v / (dims[1] * dims[2]), v / dims[2] % dims[1], v % dims[2]}, k = 0;
    for (int d = 0; d < 3; d++)
        for (int s = -1; s <= 1; s += 2) {
            int x[3] = {c[0], c[1], c[2]};
            x[d] += s;
            if (x[d] >= 0 && x[d] < dims[d])
                nb[k++] = (x[0] * dims[1] + x[1]) * dims[2] + x[2];
        }
    return k;
}

/* Checks comm and counts its neighbour messages by hop class. */
static void check(MPI_Comm comm, const char *name, int reordered, int min_intra, int max_far)
{
    int me, n, world[64], ref[64], nb[6], got[6];
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    CHECK(n == nprocs, "%s: size %d", name, n);
    MPI_Allgather(&myrank, 1, MPI_INT, world, 1, MPI_INT, comm);
    int seen[64] = {0};
    for (int i = 0; i < n; i++) {
        CHECK(world[i] >= 0 && world[i] < n && !seen[world[i]]++, "%s: not a permutation", name);
        CHECK(reordered || world[i] == i, "%s: reorder=0 moved rank %d", name, i);
    }
    memcpy(ref, world, sizeof(int) * (size_t)n);
    MPI_Bcast(ref, n, MPI_INT, 0, comm);
    CHECK(!memcmp(ref, world, sizeof(int) * (size_t)n), "%s: ranks disagree on the order", name);
    int deg = stencil(me, nb);
    /* the topology's neighbours are the stencil's, and data comes from them */
    int status;
    MPI_Topo_test(comm, &status);
    if (status == MPI_CART) {
        for (int d = 0, k = 0; d < 3; d++) {
            int lo, hi, from = -1;
            MPI_Cart_shift(comm, d, 1, &lo, &hi);
            if (lo != MPI_PROC_NULL)
                CHECK(lo == nb[k++], "%s: Cart_shift dim %d", name, d);
            if (hi != MPI_PROC_NULL)
                CHECK(hi == nb[k++], "%s: Cart_shift dim %d", name, d);
            MPI_Sendrecv(&me, 1, MPI_INT, hi, d, &from, 1, MPI_INT, lo, d, comm, MPI_STATUS_IGNORE);
            CHECK(lo == MPI_PROC_NULL || from == lo, "%s: Sendrecv dim %d got %d from %d", name, d,
                  from, lo);
        }
        MPI_Comm sub;
        int keep[3] = {0, 1, 1}, subsize = 0;
        MPI_Cart_sub(comm, keep, &sub);
        MPI_Allreduce(&me, &subsize, 1, MPI_INT, MPI_MAX, sub);
        CHECK(subsize % (dims[1] * dims[2]) == dims[1] * dims[2] - 1, "%s: Cart_sub", name);
        MPI_Comm_free(&sub);
    } else if (status == MPI_GRAPH) {
        int cnt;
        MPI_Graph_neighbors_count(comm, me, &cnt);
        CHECK(cnt == deg, "%s: %d neighbours, want %d", name, cnt, deg);
    } else {
        int in, out, w;
        MPI_Dist_graph_neighbors_count(comm, &in, &out, &w);
        CHECK(in == deg && out == deg, "%s: degrees %d %d, want %d", name, in, out, deg);
    }
    if (status == MPI_CART) {
        int full[6], k = 0;
        for (int d = 0; d < 3; d++)
            for (int s = -1; s <= 1; s += 2) {
                int src, dst;
                MPI_Cart_shift(comm, d, s, &src, &dst);
                full[k++] = dst;
            }
        for (int i = 0; i < 6; i++)
            got[i] = -7;
        MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, comm);
        for (int i = 0; i < 6; i++)
            CHECK(got[i] == (full[i] == MPI_PROC_NULL ? -7 : full[i]),
                  "%s: Neighbor_allgather block %d: %d", name, i, got[i]);
    } else {
        MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, comm);
        /* MPI_Dist_graph_create chooses the order of the lists */
        for (int i = 1; status == MPI_DIST_GRAPH && i < deg; i++)
            for (int j = i; j > 0; j--) {
                int t = got[j];
                if (got[j - 1] > t) {
                    got[j] = got[j - 1];
                    got[j - 1] = t;
                }
                t = nb[j];
                if (nb[j - 1] > t) {
                    nb[j] = nb[j - 1];
                    nb[j - 1] = t;
                }
            }
        for (int i = 0; i < deg; i++)
            CHECK(got[i] == nb[i], "%s: Neighbor_allgather block %d: %d, want %d", name, i, got[i],
                  nb[i]);
    }
    /* hop classes of my messages to my neighbours */
    char host[MPI_MAX_PROCESSOR_NAME], *hosts = malloc((size_t)n * MPI_MAX_PROCESSOR_NAME);
    int len, cnt[3] = {0, 0, 0}, tot[3];
    memset(host, 0, sizeof(host));
    MPI_Get_processor_name(host, &len);
    MPI_Allgather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  comm);
    for (int i = 0; i < deg; i++) {
        int h = px_topo_job_hops(world[me], world[nb[i]]);
        if (!strcmp(hosts + (size_t)me * MPI_MAX_PROCESSOR_NAME,
                    hosts + (size_t)nb[i] * MPI_MAX_PROCESSOR_NAME))
            cnt[0]++;
        else
            cnt[h == 1 ? 1 : 2]++;
    }
    free(hosts);
    MPI_Allreduce(cnt, tot, 3, MPI_INT, MPI_SUM, comm);
    if (me == 0)
        printf("%s: intra %d 1hop %d far %d\n", name, tot[0], tot[1], tot[2]);
    if (reordered && min_intra >= 0) {
        CHECK(tot[0] >= min_intra, "%s: %d messages on one host, want at least %d", name, tot[0],
              min_intra);
        CHECK(tot[2] <= max_far, "%s: %d messages beyond one hop, want at most %d", name, tot[2],
              max_far);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &myrank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int min_intra = argc > 2 ? atoi(argv[1]) : -1, max_far = argc > 2 ? atoi(argv[2]) : 0;
    if (nprocs > 64) {
        if (!myrank)
            printf("FAIL topo_place: at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (nprocs == 32) {
        dims[0] = 2;
        dims[1] = dims[2] = 4;
    } else
        MPI_Dims_create(nprocs, 3, dims);
    int periods[3] = {0, 0, 0};
    MPI_Comm comm;
    for (int reorder = 0; reorder <= 1; reorder++) {
        MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, reorder, &comm);
        check(comm, reorder ? "cart reorder=1" : "cart reorder=0", reorder, min_intra, max_far);
        if (reorder) {
            /* MPI_Cart_map (local) gives the rank reorder=1 gave */
            int cr = -1, mr = -2;
            MPI_Comm_rank(comm, &cr);
            MPI_Cart_map(MPI_COMM_WORLD, 3, dims, periods, &mr);
            CHECK(mr == cr, "Cart_map gave %d, reorder=1 %d", mr, cr);
        }
        MPI_Comm_free(&comm);
    }
    /* the same stencil as a graph */
    int index[64], edges[64 * 6], ne = 0;
    for (int v = 0; v < nprocs; v++) {
        ne += stencil(v, edges + ne);
        index[v] = ne;
    }
    MPI_Graph_create(MPI_COMM_WORLD, nprocs, index, edges, 1, &comm);
    check(comm, "graph reorder=1", 1, min_intra, max_far);
    {
        int gr = -1, mr = -2;
        MPI_Comm_rank(comm, &gr);
        MPI_Graph_map(MPI_COMM_WORLD, nprocs, index, edges, &mr);
        CHECK(mr == gr, "Graph_map gave %d, reorder=1 %d", mr, gr);
    }
    MPI_Comm_free(&comm);
    int nb[6], deg = stencil(myrank, nb);
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, deg, nb, MPI_UNWEIGHTED, deg, nb, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 1, &comm);
    check(comm, "dist_graph_adjacent reorder=1", 1, min_intra, max_far);
    MPI_Comm_free(&comm);
    /* weighted: heavier along the first dimension; a process's lists after
     * reordering must be those of the vertex it became, weights included */
    int wt[6];
    for (int i = 0; i < deg; i++)
        wt[i] = 1 + 1000 * (nb[i] / (dims[1] * dims[2]) != myrank / (dims[1] * dims[2])) + nb[i] +
                myrank;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, deg, nb, wt, deg, nb, wt, MPI_INFO_NULL, 1,
                                   &comm);
    {
        int gr, in, out, wtd, gs[6], gsw[6], gd[6], gdw[6], gnb[6];
        MPI_Comm_rank(comm, &gr);
        MPI_Dist_graph_neighbors_count(comm, &in, &out, &wtd);
        int gdeg = stencil(gr, gnb);
        CHECK(in == gdeg && out == gdeg && wtd, "weighted: degrees %d %d of %d", in, out, gdeg);
        MPI_Dist_graph_neighbors(comm, 6, gs, gsw, 6, gd, gdw);
        for (int i = 0; i < gdeg && in == gdeg; i++) {
            int want =
                1 + 1000 * (gnb[i] / (dims[1] * dims[2]) != gr / (dims[1] * dims[2])) + gnb[i] + gr;
            CHECK(gs[i] == gnb[i] && gd[i] == gnb[i] && gsw[i] == want && gdw[i] == want,
                  "weighted: edge %d of %d: %d (%d)", i, gr, gs[i], gsw[i]);
        }
    }
    check(comm, "dist_graph_adjacent weighted reorder=1", 1, -1, 0); /* other figures */
    MPI_Comm_free(&comm);
    /* each rank gives its outgoing edges */
    int src = myrank, degrees = deg;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &degrees, nb, MPI_UNWEIGHTED, MPI_INFO_NULL, 1,
                          &comm);
    check(comm, "dist_graph reorder=1", 1, min_intra, max_far);
    MPI_Comm_free(&comm);
    int total = 0;
    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (!myrank)
        printf("%s topo_place np=%d: %d errors\n", total ? "FAIL" : "PASS", nprocs, total);
    MPI_Finalize();
    return total ? 1 : 0;
}
