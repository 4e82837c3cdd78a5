/* MPI_Comm_spawn and MPI_Comm_spawn_multiple, the program spawning itself.
 *
 * Parent (no parent communicator):
 *   1. spawns 4 children (root: the last rank; other ranks pass another
 *      maxprocs, which does not count); every errcode MPI_SUCCESS; every
 *      parent rank exchanges checked payloads (8 B, 64 KB, 1 MB) with every
 *      child both ways; inter allreduce; merge (parents first) and an
 *      allreduce there; the children report their failed checks;
 *      disconnect;
 *   2. spawn_multiple of two commands (1 process with argument B, 2 with
 *      C): the children form one MPI_COMM_WORLD of 3, MPI_APPNUM 0 and 1;
 *      a bcast from the parents' root and a reduce back;
 *   3. spawning /bin/true (a program that never calls MPI_Init, as one
 *      that uses only sessions) and a command that does not exist fail at
 *      every rank with MPI_ERR_SPAWN, every errcode MPI_ERR_SPAWN,
 *      MPI_COMM_NULL, within the bound, and an error string that says why.
 * Children: the same steps from the other side, with MPI_Comm_get_parent.
 *
 * With DYN_SPAWN_ABORT=1 in the environment: the parents spawn 2 children
 * that wait for a message that never comes, and rank 0 calls MPI_Abort:
 * the children's job must end with the parents' (the test runner checks
 * that no process of the program is left). */
#include "px_test.h"

static const size_t sizes[] = {8, 65536, 1u << 20};
#define NS (sizeof(sizes) / sizeof(sizes[0]))

static uint64_t seed_of(int dir, int p, int c, int k)
{
    return (uint64_t)dir << 40 ^ p << 20 ^ c << 4 ^ k;
}

/* Parent rank (side 0) or child (side 1) `me` with every remote rank. */
static void exchange(MPI_Comm ic, int side)
{
    int me, rn;
    MPI_Comm_rank(ic, &me);
    MPI_Comm_remote_size(ic, &rn);
    for (int r = 0; r < rn; r++)
        for (int k = 0; k < (int)NS; k++) {
            char *s = malloc(sizes[k]), *b = malloc(sizes[k]);
            PX_REQUIRE(s && b, "out of memory");
            int p = side ? r : me, c = side ? me : r;
            px_fill(s, sizes[k], seed_of(side, p, c, k));
            PX_MPI(MPI_Sendrecv(s, (int)sizes[k], MPI_BYTE, r, k, b, (int)sizes[k], MPI_BYTE, r, k,
                                ic, MPI_STATUS_IGNORE));
            size_t bad = px_verify(b, sizes[k], seed_of(!side, p, c, k));
            PX_CHECK(bad == sizes[k], "side %d: %zu bytes from remote %d bad at %zu", side,
                     sizes[k], r, bad);
            free(s);
            free(b);
        }
}

/* How many hosts the children ran on (MPI_Get_processor_name), at the parents. */
static int child_hosts;

/* Step 1 on either side; returns the sum of the children's failed checks. */
static int step1(MPI_Comm ic, int side, int np_parent, int np_child)
{
    exchange(ic, side);
    long mine = side ? 1000 : 1, sum = 0;
    PX_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, ic));
    long want = side ? np_parent : 1000L * np_child;
    PX_CHECK(sum == want, "side %d: inter allreduce %ld, want %ld", side, sum, want);
    MPI_Comm m;
    PX_MPI(MPI_Intercomm_merge(ic, side, &m));
    int mr, ms, lr;
    MPI_Comm_rank(m, &mr);
    MPI_Comm_size(m, &ms);
    MPI_Comm_rank(ic, &lr);
    PX_CHECK(ms == np_parent + np_child && mr == (side ? np_parent + lr : lr),
             "merged rank %d of %d", mr, ms);
    /* where everyone runs */
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    int nl = 0;
    MPI_Get_processor_name(name, &nl);
    char *names = calloc((size_t)ms, MPI_MAX_PROCESSOR_NAME);
    PX_REQUIRE(names, "out of memory");
    PX_MPI(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME,
                         MPI_CHAR, m));
    child_hosts = 0;
    for (int i = np_parent; i < ms; i++) {
        int seen = 0;
        for (int j = np_parent; j < i && !seen; j++)
            seen = !strcmp(names + (size_t)i * MPI_MAX_PROCESSOR_NAME,
                           names + (size_t)j * MPI_MAX_PROCESSOR_NAME);
        child_hosts += !seen;
    }
    free(names);
    /* the children's failed checks reach every member */
    int errs = side ? px_test_errors : 0, all = -1;
    PX_MPI(MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, m));
    PX_MPI(MPI_Comm_free(&m));
    return all;
}

static int child(int argc, char **argv)
{
    MPI_Comm parent;
    PX_MPI(MPI_Comm_get_parent(&parent));
    PX_REQUIRE(parent != MPI_COMM_NULL, "a spawned process without a parent");
    if (!strcmp(argv[2], "wait")) { /* until the parents' end ends this job */
        int x;
        MPI_Recv(&x, 1, MPI_INT, 0, 0, parent, MPI_STATUS_IGNORE);
        return 1;
    }
    int np_parent, np;
    MPI_Comm_remote_size(parent, &np_parent);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (!strcmp(argv[2], "A")) {
        step1(parent, 1, np_parent, np);
    } else {
        int *appnum, flag = 0;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
        int want = !strcmp(argv[2], "B") ? 0 : 1;
        PX_CHECK(flag && *appnum == want, "%s: MPI_APPNUM %d", argv[2], flag ? *appnum : -1);
        PX_CHECK(np == 3, "spawn_multiple: a world of %d", np);
        uint64_t v = 0;
        PX_MPI(MPI_Bcast(&v, 1, MPI_UINT64_T, 0, parent));
        PX_CHECK(v == 0x5eed5eed, "bcast from the parents: %llx", (unsigned long long)v);
        int bad = px_test_errors;
        PX_MPI(MPI_Reduce(&bad, NULL, 1, MPI_INT, MPI_SUM, 0, parent));
    }
    PX_MPI(MPI_Comm_disconnect(&parent));
    MPI_Comm_get_parent(&parent);
    PX_CHECK(parent == MPI_COMM_NULL, "a parent after disconnect");
    (void)argc;
    MPI_Finalize();
    return px_test_errors ? 1 : 0;
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "dyn_spawn");
    if (argc > 2 && !strcmp(argv[1], "child"))
        return child(argc, argv);
    int me = px_test_rank, n = px_test_size, root = n - 1, codes[8];
    MPI_Comm parent = MPI_COMM_WORLD, ic = MPI_COMM_NULL;
    MPI_Comm_get_parent(&parent);
    PX_CHECK(parent == MPI_COMM_NULL, "a parent communicator");
    if (getenv("DYN_SPAWN_ABORT")) {
        char *wargs[] = {"child", "wait", NULL};
        PX_MPI(MPI_Comm_spawn(argv[0], wargs, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic,
                              MPI_ERRCODES_IGNORE));
        if (me == 0) {
            printf("PX_FAULT_MARK rank=%d t=%.6f: MPI_Abort with 2 spawned children waiting\n", me,
                   px_epoch_now());
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        for (;;)
            px_sleep_ms(100);
    }

    /* 1 */
    for (int i = 0; i < 8; i++)
        codes[i] = -7;
    char *args[] = {"child", "A", NULL};
    double t0 = MPI_Wtime();
    PX_MPI(MPI_Comm_spawn(argv[0], args, me == root ? 4 : 1, MPI_INFO_NULL, root, MPI_COMM_WORLD,
                          &ic, codes));
    double t_spawn = MPI_Wtime() - t0;
    for (int i = 0; i < 8; i++)
        PX_CHECK(codes[i] == (i < 4 ? MPI_SUCCESS : -7), "spawn: errcode %d is %d", i, codes[i]);
    int rn = 0;
    MPI_Comm_remote_size(ic, &rn);
    PX_REQUIRE(rn == 4, "spawn: %d children", rn);
    int child_errs = step1(ic, 0, n, 4);
    PX_CHECK(child_errs == 0, "the children failed %d checks", child_errs);
    PX_MPI(MPI_Comm_disconnect(&ic));

    /* 2 */
    char *cmds[] = {argv[0], argv[0]};
    char *a_b[] = {"child", "B", NULL}, *a_c[] = {"child", "C", NULL};
    char **argvs[] = {a_b, a_c};
    int maxp[] = {1, 2};
    MPI_Info infos[] = {MPI_INFO_NULL, MPI_INFO_NULL};
    PX_MPI(MPI_Comm_spawn_multiple(2, cmds, argvs, maxp, infos, 0, MPI_COMM_WORLD, &ic, codes));
    MPI_Comm_remote_size(ic, &rn);
    PX_CHECK(rn == 3, "spawn_multiple: %d children", rn);
    uint64_t v = 0x5eed5eed;
    PX_MPI(MPI_Bcast(&v, 1, MPI_UINT64_T, me == 0 ? MPI_ROOT : MPI_PROC_NULL, ic));
    int errs = -1;
    PX_MPI(MPI_Reduce(NULL, &errs, 1, MPI_INT, MPI_SUM, me == 0 ? MPI_ROOT : MPI_PROC_NULL, ic));
    if (me == 0)
        PX_CHECK(errs == 0, "spawn_multiple: the children failed %d checks", errs);
    PX_MPI(MPI_Comm_disconnect(&ic));

    /* 3 */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *bad[] = {"/bin/true", "/nonexistent/plexus-program"};
    for (int b = 0; b < 2; b++) {
        for (int i = 0; i < 8; i++)
            codes[i] = -7;
        int cls = -1;
        t0 = MPI_Wtime();
        int rc = MPI_Comm_spawn(bad[b], MPI_ARGV_NULL, 2, MPI_INFO_NULL, root, MPI_COMM_WORLD, &ic,
                                codes);
        MPI_Error_class(rc, &cls);
        PX_CHECK(cls == MPI_ERR_SPAWN && ic == MPI_COMM_NULL, "spawn %s: class %d", bad[b], cls);
        /* the error string says why at every rank, not only the class */
        char why[MPI_MAX_ERROR_STRING];
        int wlen = 0;
        MPI_Error_string(rc, why, &wlen);
        PX_CHECK(strstr(why, b == 0 ? "must call MPI_Init" : "launcher ended") != NULL,
                 "spawn %s: the error string does not say why: %s", bad[b], why);
        for (int i = 0; i < 8; i++)
            PX_CHECK(codes[i] == (i < 2 ? MPI_ERR_SPAWN : -7), "spawn %s: errcode %d is %d", bad[b],
                     i, codes[i]);
        PX_CHECK(MPI_Wtime() - t0 < 30, "spawn %s failed only after %.1f s", bad[b],
                 MPI_Wtime() - t0);
    }
    /* the communicator still works */
    int sum = 0;
    PX_MPI(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    PX_CHECK(sum == n * (n - 1) / 2, "allreduce after the failures: %d", sum);
    return px_test_finish("4 children spawned in %.2f s on %d host(s), data checked both ways; "
                          "spawn_multiple; failures reported",
                          t_spawn, child_hosts);
}
