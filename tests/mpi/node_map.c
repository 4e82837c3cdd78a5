/* The node map the launcher or resource manager gives: MPI_Comm_split_type
 * (MPI_COMM_TYPE_SHARED) groups exactly the ranks that its name for the
 * node puts together (PX_NODE_NAME under pxrun, SLURMD_NODENAME under
 * srun), in rank order, and MPI_UNIVERSE_SIZE and MPI_Get_processor_name
 * agree. */
#include "px_test.h"

#define NAME_MAX_LEN 128

static void node_name(char *out)
{
    const char *v = getenv("SLURMD_NODENAME");
    if (!v || !*v)
        v = getenv("PX_NODE_NAME");
    snprintf(out, NAME_MAX_LEN, "%s", v && *v ? v : "?");
}

int main(int argc, char **argv)
{
    int rank, size, lrank, lsize, univ = 0;
    char me[NAME_MAX_LEN], *all;
    MPI_Comm shm;

    px_test_init(&argc, &argv, "node_map");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    memset(me, 0, sizeof(me));
    node_name(me);
    all = calloc((size_t)size, NAME_MAX_LEN);
    PX_REQUIRE(all != NULL, "out of memory");
    MPI_Allgather(me, NAME_MAX_LEN, MPI_CHAR, all, NAME_MAX_LEN, MPI_CHAR, MPI_COMM_WORLD);

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
    MPI_Comm_rank(shm, &lrank);
    MPI_Comm_size(shm, &lsize);
    /* which world ranks share my node, as MPI sees it */
    int *members = malloc(sizeof(int) * (size_t)lsize);
    PX_REQUIRE(members != NULL, "out of memory");
    MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, shm);
    int expect = 0, pos = -1;
    for (int r = 0; r < size; r++) {
        if (strcmp(all + (size_t)r * NAME_MAX_LEN, me))
            continue;
        if (r == rank)
            pos = expect;
        if (expect < lsize)
            PX_CHECK(members[expect] == r,
                     "member %d of my node's communicator is rank %d, "
                     "the node '%s' has rank %d there",
                     expect, members[expect], me, r);
        expect++;
    }
    PX_CHECK(lsize == expect, "my node's communicator has %d ranks, node '%s' has %d", lsize, me,
             expect);
    PX_CHECK(lrank == pos, "rank %d on its node, %d by the node's name", lrank, pos);

    /* MPI_UNIVERSE_SIZE: at least the job */
    int *u = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &u, &univ);
    PX_CHECK(univ && u && *u >= size, "MPI_UNIVERSE_SIZE %d for a job of %d", univ && u ? *u : -1,
             size);

    int nodes = 0;
    for (int r = 0; r < size; r++) {
        int first = 1;
        for (int q = 0; q < r && first; q++)
            first = strcmp(all + (size_t)q * NAME_MAX_LEN, all + (size_t)r * NAME_MAX_LEN) != 0;
        nodes += first;
    }
    free(members);
    free(all);
    MPI_Comm_free(&shm);
    return px_test_finish("%d ranks on %d nodes", size, nodes);
}
