/* MPI_Comm_join on a TCP connection the program made itself: world rank 0
 * listens on loopback and sends the port number to world rank n-1 in a
 * message, which connects; both call MPI_Comm_join on their end of the
 * connection. The inter-communicator has one rank on each side, whose
 * remote group is the other process's world rank; it carries messages both
 * ways (checked), an Allreduce across, and a merge in world-rank order; the
 * program's socket still works afterwards (a byte each way). The other
 * ranks only take part in the final checks. Needs np >= 2. */
#include "px_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "dyn_join");
    int me = px_test_rank, n = px_test_size;
    if (n < 2)
        return px_test_skip("needs 2 ranks");
    int other = me == 0 ? n - 1 : 0;
    if (me == 0 || me == n - 1) {
        int fd = -1;
        struct sockaddr_in sa = {.sin_family = AF_INET};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (me == 0) {
            int ls = socket(AF_INET, SOCK_STREAM, 0);
            socklen_t sl = sizeof(sa);
            PX_REQUIRE(ls >= 0 && bind(ls, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
                           listen(ls, 1) == 0 && getsockname(ls, (struct sockaddr *)&sa, &sl) == 0,
                       "listening socket");
            int port = ntohs(sa.sin_port);
            /* synchronous: accept(2) below makes no MPI progress */
            MPI_Ssend(&port, 1, MPI_INT, n - 1, 1, MPI_COMM_WORLD);
            fd = accept(ls, NULL, NULL);
            close(ls);
        } else {
            int port = 0;
            MPI_Recv(&port, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            sa.sin_port = htons((unsigned short)port);
            fd = socket(AF_INET, SOCK_STREAM, 0);
            PX_REQUIRE(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect");
        }
        PX_REQUIRE(fd >= 0, "accept");
        MPI_Comm ic;
        PX_MPI(MPI_Comm_join(fd, &ic));
        int flag = 0, rs = -1, s = -1;
        MPI_Comm_test_inter(ic, &flag);
        MPI_Comm_remote_size(ic, &rs);
        MPI_Comm_size(ic, &s);
        PX_CHECK(flag && rs == 1 && s == 1, "inter %d size %d remote %d", flag, s, rs);
        MPI_Group wg, rg;
        int zero = 0, w = -1;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Comm_remote_group(ic, &rg);
        MPI_Group_translate_ranks(rg, 1, &zero, wg, &w);
        PX_CHECK(w == other, "remote is world %d, want %d", w, other);
        MPI_Group_free(&wg);
        MPI_Group_free(&rg);
        int buf[100], got[100];
        for (int i = 0; i < 100; i++)
            buf[i] = me * 1000 + i;
        MPI_Status st;
        MPI_Sendrecv(buf, 100, MPI_INT, 0, 5, got, 100, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st);
        int bad = 0;
        for (int i = 0; i < 100; i++)
            bad += got[i] != other * 1000 + i;
        PX_CHECK(bad == 0 && st.MPI_SOURCE == 0, "%d wrong values, source %d", bad, st.MPI_SOURCE);
        int v = me + 5, sum = -1;
        MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, ic);
        PX_CHECK(sum == other + 5, "allreduce %d", sum);
        MPI_Comm m;
        int mr = -1;
        MPI_Intercomm_merge(ic, 0, &m);
        MPI_Comm_rank(m, &mr);
        PX_CHECK(mr == (me == 0 ? 0 : 1), "merged rank %d", mr);
        MPI_Comm_free(&m);
        PX_MPI(MPI_Comm_disconnect(&ic));
        /* the socket is still the program's */
        char c = (char)('a' + me % 26), d = 0;
        PX_CHECK(write(fd, &c, 1) == 1 && read(fd, &d, 1) == 1 && d == (char)('a' + other % 26),
                 "socket after join: got %d", d);
        close(fd);
    }
    return px_test_finish("join between world 0 and %d", n - 1);
}
