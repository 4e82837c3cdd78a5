/* MPI_Publish_name, MPI_Lookup_name and MPI_Unpublish_name: world rank 0
 * opens a port and publishes it under a service name unique to this run;
 * every rank looks the name up and gets the same port name, and the last
 * rank connects through it to rank 0 (checked by a message). Publishing the
 * name again fails (MPI_ERR_SERVICE), unpublishing it with another port
 * fails, after MPI_Unpublish_name a lookup fails with MPI_ERR_NAME and a
 * second unpublish with MPI_ERR_SERVICE. */
#include "px_test.h"

#include <unistd.h>

static int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "dyn_names");
    int me = px_test_rank, n = px_test_size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char service[64], port[MPI_MAX_PORT_NAME] = "", got[MPI_MAX_PORT_NAME] = "";
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(service, sizeof(service), "plexus-test dyn_names %d/%d", pid, n);
    if (me == 0) {
        PX_MPI(MPI_Open_port(MPI_INFO_NULL, port));
        PX_MPI(MPI_Publish_name(service, MPI_INFO_NULL, port));
        int c = err_class(MPI_Publish_name(service, MPI_INFO_NULL, port));
        PX_CHECK(c == MPI_ERR_SERVICE, "publishing twice: class %d", c);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    PX_MPI(MPI_Lookup_name(service, MPI_INFO_NULL, got));
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    PX_CHECK(strcmp(got, port) == 0, "looked up '%s', published '%s'", got, port);
    if (n > 1 && (me == 0 || me == n - 1)) {
        MPI_Comm ic;
        int x = 0;
        if (me == 0) {
            PX_MPI(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
            MPI_Recv(&x, 1, MPI_INT, 0, 0, ic, MPI_STATUS_IGNORE);
            PX_CHECK(x == 77 + n, "through the looked-up port: %d", x);
        } else {
            PX_MPI(MPI_Comm_connect(got, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic));
            x = 77 + n;
            MPI_Send(&x, 1, MPI_INT, 0, 0, ic);
        }
        MPI_Comm_disconnect(&ic);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        int c = err_class(MPI_Unpublish_name(service, MPI_INFO_NULL, "plexus:other"));
        PX_CHECK(c == MPI_ERR_SERVICE, "unpublishing with another port: class %d", c);
        PX_MPI(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
        c = err_class(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
        PX_CHECK(c == MPI_ERR_SERVICE, "unpublishing twice: class %d", c);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int c = err_class(MPI_Lookup_name(service, MPI_INFO_NULL, got));
    PX_CHECK(c == MPI_ERR_NAME, "lookup after unpublish: class %d", c);
    if (me == 0)
        PX_MPI(MPI_Close_port(port));
    return px_test_finish("publish, lookup, connect through it, unpublish");
}
