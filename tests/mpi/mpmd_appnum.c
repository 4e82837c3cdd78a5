/* pxrun's several programs in one job ("pxrun -n 2 prog 0 : -n 1 prog 1 :
 * -n 2 prog 2"): every rank checks that MPI_APPNUM is the number its
 * program was given, and that the ranks of each program come in the order
 * of the list (the appnums over the ranks never decrease, each program has
 * the ranks it was given). Rank 0 prints "PASS mpmd_appnum np=N:". */
#include "px_test.h"

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "mpmd_appnum");
    PX_REQUIRE(argc >= 2, "usage: mpmd_appnum APPNUM [COUNTS...] (rank 0: the count of each)");
    int *appnum = NULL, flag = 0, want = atoi(argv[1]);
    PX_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
    PX_CHECK(flag && *appnum == want, "MPI_APPNUM %d, want %d", flag ? *appnum : -1, want);
    int *all = malloc(sizeof(int) * (size_t)px_test_size);
    PX_REQUIRE(all, "out of memory");
    PX_MPI(MPI_Allgather(&want, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (int r = 1; r < px_test_size; r++)
        PX_CHECK(all[r] >= all[r - 1], "rank %d runs program %d after rank %d's %d", r, all[r],
                 r - 1, all[r - 1]);
    /* the first program's arguments give each program's count */
    if (px_test_rank == 0)
        for (int k = 2; k < argc; k++) {
            int n = 0;
            for (int r = 0; r < px_test_size; r++)
                n += all[r] == k - 2;
            PX_CHECK(n == atoi(argv[k]), "program %d has %d ranks, want %s", k - 2, n, argv[k]);
        }
    free(all);
    return px_test_finish("%d programs in one job", argc - 2);
}
