/* Accept and connect between two separate pxrun jobs (started by
 * dyn_twojobs.sh): `dyn_twojobs accept FILE` opens a port at rank 0, writes
 * its name to FILE and accepts on MPI_COMM_WORLD; `dyn_twojobs connect FILE`
 * waits for FILE and connects on MPI_COMM_WORLD. The roots meet over the
 * port (the token is checked across jobs), find that they belong to
 * different jobs, and both sides fail with MPI_ERR_UNSUPPORTED_OPERATION at
 * every rank, promptly (well within the jobs' --timeout): connecting the processes of two jobs is not
 * implemented yet. Each job's rank 0 prints "PASS dyn_twojobs np=N:". */
#include "px_test.h"

#include <unistd.h>

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "dyn_twojobs");
    PX_REQUIRE(argc == 3 && (!strcmp(argv[1], "accept") || !strcmp(argv[1], "connect")),
               "usage: dyn_twojobs accept|connect FILE");
    int acc = !strcmp(argv[1], "accept"), me = px_test_rank;
    const char *file = argv[2];
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (me == 0 && acc) {
        char tmp[4096];
        PX_MPI(MPI_Open_port(MPI_INFO_NULL, port));
        snprintf(tmp, sizeof(tmp), "%s.tmp", file);
        FILE *f = fopen(tmp, "w");
        PX_REQUIRE(f && fprintf(f, "%s\n", port) > 0 && fclose(f) == 0, "writing %s", tmp);
        PX_REQUIRE(rename(tmp, file) == 0, "renaming to %s", file);
    } else if (me == 0) {
        FILE *f = NULL;
        for (int i = 0; i < 3000 && !(f = fopen(file, "r")); i++)
            px_sleep_ms(10);
        PX_REQUIRE(f && fgets(port, sizeof(port), f), "reading %s", file);
        fclose(f);
        port[strcspn(port, "\n")] = 0;
    }
    MPI_Comm ic = MPI_COMM_WORLD;
    double t0 = MPI_Wtime();
    int rc = acc ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic)
                 : MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    PX_CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "%s: class %d (%s)", argv[1], cls, msg);
    PX_CHECK(ic == MPI_COMM_NULL, "a communicator after a failure");
    if (me == 0 && acc)
        PX_MPI(MPI_Close_port(port));
    return px_test_finish("%s across jobs refused in %.2f s: %s", argv[1], MPI_Wtime() - t0, msg);
}
