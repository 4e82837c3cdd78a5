/* MPI_Comm_join on a TCP connection the program made itself: world rank 0
 * listens on every address of its host and sends its IPv4 addresses and
 * the port to world rank n-1 in a message, which connects to the first that
 * answers (the two may be on different hosts); both call MPI_Comm_join on their end of the
 * connection. The inter-communicator has one rank on each side, whose
 * remote group is the other process's world rank; it carries messages both
 * ways (checked), an Allreduce across, and a merge in world-rank order; the
 * program's socket still works afterwards (a byte each way). The other
 * ranks only take part in the final checks. Needs np >= 2. */
#include "px_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#define NADDR 16

/* This host's IPv4 addresses, loopback last; returns how many. */
static int my_addrs(uint32_t *a)
{
    struct ifaddrs *ifs, *i;
    int n = 0;
    if (getifaddrs(&ifs) == 0) {
        for (int lo = 0; lo < 2; lo++)
            for (i = ifs; i; i = i->ifa_next)
                if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && n < NADDR - 1) {
                    uint32_t v = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
                    if ((ntohl(v) >> 24 == 127) == lo)
                        a[n++] = v;
                }
        freeifaddrs(ifs);
    }
    if (n == 0)
        a[n++] = htonl(INADDR_LOOPBACK);
    return n;
}

/* A connection to one of the n addresses at port, each tried for 8 s (a
 * lost SYN is sent again after 1 and 3 s). */
static int connect_any(const uint32_t *a, int n, int port)
{
    for (int k = 0; k < n; k++) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
        sa.sin_addr.s_addr = a[k];
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), err = 0;
        socklen_t el = sizeof(err);
        struct pollfd p = {fd, POLLOUT, 0};
        if (fd < 0)
            continue;
        if ((connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ||
             (errno == EINPROGRESS && poll(&p, 1, 8000) == 1 &&
              getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0)) &&
            fcntl(fd, F_SETFL, 0) == 0)
            return fd;
        close(fd);
    }
    return -1;
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "dyn_join");
    int me = px_test_rank, n = px_test_size;
    if (n < 2)
        return px_test_skip("needs 2 ranks");
    int other = me == 0 ? n - 1 : 0;
    if (me == 0 || me == n - 1) {
        int fd = -1;
        /* the port, the number of addresses, the addresses */
        uint32_t msg[2 + NADDR] = {0};
        if (me == 0) {
            struct sockaddr_in sa = {.sin_family = AF_INET};
            sa.sin_addr.s_addr = htonl(INADDR_ANY);
            int ls = socket(AF_INET, SOCK_STREAM, 0);
            socklen_t sl = sizeof(sa);
            PX_REQUIRE(ls >= 0 && bind(ls, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
                           listen(ls, 1) == 0 && getsockname(ls, (struct sockaddr *)&sa, &sl) == 0,
                       "listening socket");
            msg[0] = ntohs(sa.sin_port);
            msg[1] = (uint32_t)my_addrs(msg + 2);
            /* synchronous: accept(2) below makes no MPI progress */
            MPI_Ssend(msg, 2 + NADDR, MPI_UINT32_T, n - 1, 1, MPI_COMM_WORLD);
            fd = accept(ls, NULL, NULL);
            close(ls);
        } else {
            MPI_Recv(msg, 2 + NADDR, MPI_UINT32_T, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            fd = connect_any(msg + 2, (int)msg[1], (int)msg[0]);
            PX_REQUIRE(fd >= 0, "connect to rank 0 on none of its %u addresses", msg[1]);
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
