/* The node map the launcher or resource manager gives: MPI_Comm_split_type
 * (MPI_COMM_TYPE_SHARED) groups exactly the ranks that its name for the
 * node puts together (PX_NODE_NAME under pxrun, SLURMD_NODENAME under
 * srun), in rank order, and MPI_UNIVERSE_SIZE and MPI_Get_processor_name
 * agree. MPI-4.0's split types: MPI_COMM_TYPE_HW_GUIDED with
 * "mpi_shared_memory" groups alike, with no or an unknown resource gives
 * MPI_COMM_NULL; MPI_COMM_TYPE_HW_UNGUIDED gives strict subsets, says
 * which resource in the info, and ends in MPI_COMM_NULL; on an
 * inter-communicator, MPI_UNDEFINED gives MPI_COMM_NULL. */
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
    /* guided by "mpi_shared_memory": the same groups; else none */
    MPI_Info info;
    MPI_Comm hw;
    MPI_Info_create(&info);
    PX_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &hw));
    PX_CHECK(hw == MPI_COMM_NULL, "HW_GUIDED without a resource gave a communicator");
    MPI_Info_set(info, "mpi_hw_resource_type", "no-such-resource");
    PX_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &hw));
    PX_CHECK(hw == MPI_COMM_NULL, "HW_GUIDED with an unknown resource gave a communicator");
    MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
    PX_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &hw));
    int result = MPI_UNEQUAL;
    if (hw != MPI_COMM_NULL)
        MPI_Comm_compare(hw, shm, &result);
    PX_CHECK(result == MPI_CONGRUENT, "HW_GUIDED mpi_shared_memory differs from SHARED (%d)",
             result);
    if (hw != MPI_COMM_NULL)
        MPI_Comm_free(&hw);
    MPI_Info_free(&info);
    /* unguided: strict subsets down to none */
    MPI_Comm cur = MPI_COMM_WORLD;
    int levels = 0;
    for (;;) {
        int csize, crank;
        char type[MPI_MAX_INFO_VAL] = "";
        MPI_Comm_size(cur, &csize);
        MPI_Comm_rank(cur, &crank);
        MPI_Info_create(&info);
        PX_MPI(MPI_Comm_split_type(cur, MPI_COMM_TYPE_HW_UNGUIDED, crank, info, &hw));
        int flag = 0, bl = sizeof(type);
        MPI_Info_get_string(info, "mpi_hw_resource_type", &bl, type, &flag);
        MPI_Info_free(&info);
        if (cur != MPI_COMM_WORLD)
            MPI_Comm_free(&cur);
        if (hw == MPI_COMM_NULL)
            break;
        int hsize;
        MPI_Comm_size(hw, &hsize);
        PX_CHECK(hsize < csize && flag && type[0], "unguided split of %d gave %d (resource '%s')",
                 csize, hsize, type);
        cur = hw;
        if (++levels > 8 || hsize >= csize)
            break;
    }
    PX_CHECK(size == 1 || levels >= 1, "no unguided split of %d ranks", size);
    if (cur != MPI_COMM_WORLD && cur != MPI_COMM_NULL && levels > 8)
        MPI_Comm_free(&cur);
    /* an inter-communicator between the halves */
    if (size >= 2) {
        MPI_Comm half, inter, out;
        MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
        PX_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank < size / 2 ? size / 2 : 0, 7,
                                    &inter));
        PX_MPI(MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &out));
        PX_CHECK(out == MPI_COMM_NULL, "inter-communicator split_type UNDEFINED gave one");
        PX_MPI(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &out));
        if (out != MPI_COMM_NULL)
            MPI_Comm_free(&out);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    free(members);
    free(all);
    MPI_Comm_free(&shm);
    return px_test_finish("%d ranks on %d nodes", size, nodes);
}
