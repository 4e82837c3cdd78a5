/* MPI_Comm_spawn and MPI_Comm_spawn_multiple are not implemented: both
 * fail at every rank with MPI_ERR_SPAWN under MPI_ERRORS_RETURN, set every
 * entry of array_of_errcodes (as many as the root's maxprocs, also at ranks
 * that pass another maxprocs) to MPI_ERR_SPAWN, leave the inter-communicator
 * MPI_COMM_NULL and start nothing; MPI_Comm_get_parent gives MPI_COMM_NULL.
 * The communicator still works afterwards. */
#include "px_test.h"

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "dyn_spawn");
    int me = px_test_rank, n = px_test_size;
    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_Comm_get_parent(&parent);
    PX_CHECK(parent == MPI_COMM_NULL, "a parent communicator");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int codes[8], cls = -1, root = n - 1;
    for (int i = 0; i < 8; i++)
        codes[i] = -7;
    MPI_Comm ic = MPI_COMM_WORLD;
    char *args[] = {"x", NULL};
    int rc = MPI_Comm_spawn("/bin/true", args, me == root ? 3 : 1, MPI_INFO_NULL, root,
                            MPI_COMM_WORLD, &ic, codes);
    MPI_Error_class(rc, &cls);
    PX_CHECK(cls == MPI_ERR_SPAWN && ic == MPI_COMM_NULL, "spawn: class %d", cls);
    for (int i = 0; i < 8; i++)
        PX_CHECK(codes[i] == (i < 3 ? MPI_ERR_SPAWN : -7), "spawn: errcode %d is %d", i, codes[i]);
    char *cmds[] = {"/bin/true", "/bin/true"};
    int maxp[] = {2, 1};
    MPI_Info infos[] = {MPI_INFO_NULL, MPI_INFO_NULL};
    ic = MPI_COMM_WORLD;
    rc = MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxp, infos, 0, MPI_COMM_WORLD, &ic,
                                 MPI_ERRCODES_IGNORE);
    MPI_Error_class(rc, &cls);
    PX_CHECK(cls == MPI_ERR_SPAWN && ic == MPI_COMM_NULL, "spawn_multiple: class %d", cls);
    int sum = 0;
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PX_CHECK(sum == n * (n - 1) / 2, "allreduce after the failures: %d", sum);
    return px_test_finish("spawn refused with MPI_ERR_SPAWN, no parent");
}
