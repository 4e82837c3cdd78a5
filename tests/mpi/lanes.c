/* QoS lanes (PX_LANES > 1, docs/lanes.md): messages of every class in
 * flight at once (small, medium and rendezvous point-to-point messages on
 * two tags, with collectives between posting and completing them) are
 * matched in the order they were sent, whatever lane carried each, and
 * every byte is checked.
 *
 * Over TCP, LANES_EXPECT="tos/prio,..." (one pair per lane) makes the test
 * read IP_TOS and SO_PRIORITY of this process's connected sockets: each
 * pair must be found on some connection, and no connection may carry a
 * mark outside the list (the unmarked one is the launcher's). */
#include "px_test.h"

#include <dirent.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>

#define ROUNDS 6
#define NMSG 36
#define HDR 16
#define MAXLEN 300000
#define NCOLL 4096

static size_t msg_size(int i)
{
    static const size_t s[] = {40, 3000, 24000, 70000, MAXLEN, HDR};
    return s[i % 6];
}

static int msg_tag(int i) { return i % 4 == 3 ? 9 : 7; }

static uint64_t seed_of(int src, int round, int i)
{
    return (uint64_t)src << 40 | (uint64_t)round << 20 | (uint64_t)i;
}

static void exchange(int round, unsigned char **sbuf, unsigned char **rbuf)
{
    int right = (px_test_rank + 1) % px_test_size;
    int left = (px_test_rank + px_test_size - 1) % px_test_size;
    MPI_Request req[2 * NMSG];
    MPI_Status st[2 * NMSG];
    /* receives posted by tag in the order sent, so a message matched out
     * of order lands in the buffer of another and fails its check */
    for (int i = 0; i < NMSG; i++)
        MPI_Irecv(rbuf[i], MAXLEN, MPI_BYTE, left, msg_tag(i), MPI_COMM_WORLD, &req[i]);
    for (int i = 0; i < NMSG; i++) {
        int64_t h[2] = {round, i};
        size_t n = msg_size(i);
        memcpy(sbuf[i], h, HDR);
        px_fill(sbuf[i] + HDR, n - HDR, seed_of(px_test_rank, round, i));
        MPI_Isend(sbuf[i], (int)n, MPI_BYTE, right, msg_tag(i), MPI_COMM_WORLD, &req[NMSG + i]);
    }
    /* collectives while the point-to-point messages are in flight */
    static double in[NCOLL], out[NCOLL];
    for (int k = 0; k < NCOLL; k++)
        in[k] = px_test_rank * 1000.0 + k + round;
    MPI_Allreduce(in, out, NCOLL, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double ranks = (double)px_test_size * (px_test_size - 1) / 2;
    for (int k = 0; k < NCOLL; k++)
        PX_CHECK(out[k] == ranks * 1000.0 + (double)px_test_size * (k + round),
                 "round %d allreduce[%d] = %g", round, k, out[k]);
    static unsigned char big[1 << 20];
    int root = round % px_test_size;
    if (px_test_rank == root)
        px_fill(big, sizeof(big), seed_of(root, round, 999));
    MPI_Bcast(big, sizeof(big), MPI_BYTE, root, MPI_COMM_WORLD);
    PX_CHECK(px_verify(big, sizeof(big), seed_of(root, round, 999)) == sizeof(big),
             "round %d bcast from %d corrupt", round, root);

    MPI_Waitall(2 * NMSG, req, st);
    for (int i = 0; i < NMSG; i++) {
        int64_t h[2];
        int count = -1;
        memcpy(h, rbuf[i], HDR);
        MPI_Get_count(&st[i], MPI_BYTE, &count);
        PX_CHECK(h[0] == round && h[1] == i, "round %d message %d: got round %lld message %lld",
                 round, i, (long long)h[0], (long long)h[1]);
        PX_CHECK(count == (int)msg_size(i), "round %d message %d: %d bytes", round, i, count);
        PX_CHECK(px_verify(rbuf[i] + HDR, msg_size(i) - HDR, seed_of(left, round, i)) ==
                     msg_size(i) - HDR,
                 "round %d message %d of %zu bytes corrupt", round, i, msg_size(i));
    }
}

/* The marks of this process's TCP connections against LANES_EXPECT. */
static void check_marks(const char *expect)
{
    int want_tos[16], want_prio[16], nwant = 0, found[16] = {0};
    for (const char *s = expect; *s && nwant < 16;) {
        char *e;
        want_tos[nwant] = (int)strtol(s, &e, 10);
        want_prio[nwant] = *e == '/' ? (int)strtol(e + 1, &e, 10) : -1;
        nwant++;
        s = *e ? e + 1 : e;
    }
    DIR *d = opendir("/proc/self/fd");
    PX_REQUIRE(d, "cannot list /proc/self/fd");
    struct dirent *de;
    int conns = 0;
    while ((de = readdir(d))) {
        int fd = atoi(de->d_name), type = 0, dom = 0, tos = -1, prio = -1;
        struct stat sb;
        struct sockaddr_in peer;
        socklen_t l = sizeof(type), ld = sizeof(dom), lt = sizeof(tos), lp = sizeof(prio),
                  la = sizeof(peer);
        if (de->d_name[0] == '.' || fstat(fd, &sb) < 0 || !S_ISSOCK(sb.st_mode) ||
            getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0 || type != SOCK_STREAM ||
            getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &ld) < 0 || dom != AF_INET ||
            getpeername(fd, (struct sockaddr *)&peer, &la) < 0)
            continue;
        getsockopt(fd, IPPROTO_IP, IP_TOS, &tos, &lt);
        getsockopt(fd, SOL_SOCKET, SO_PRIORITY, &prio, &lp);
        if (tos == 0 && prio == 0)
            continue; /* the launcher's connection, or one whose hello is not in yet */
        int k = 0;
        while (k < nwant && !(tos == want_tos[k] && (want_prio[k] < 0 || prio == want_prio[k])))
            k++;
        PX_CHECK(k < nwant, "a connection marked tos %d prio %d, not in LANES_EXPECT=%s", tos, prio,
                 expect);
        if (k < nwant)
            found[k]++;
        conns++;
    }
    closedir(d);
    for (int k = 0; k < nwant; k++)
        PX_CHECK(found[k] > 0, "no connection marked tos %d prio %d (%d marked connections)",
                 want_tos[k], want_prio[k], conns);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "lanes");
    unsigned char *sbuf[NMSG], *rbuf[NMSG];
    for (int i = 0; i < NMSG; i++) {
        sbuf[i] = malloc(MAXLEN);
        rbuf[i] = malloc(MAXLEN);
        PX_REQUIRE(sbuf[i] && rbuf[i], "out of memory");
    }
    for (int round = 0; round < ROUNDS; round++)
        exchange(round, sbuf, rbuf);
    MPI_Barrier(MPI_COMM_WORLD);

    const char *net = getenv("PX_NET"), *expect = getenv("LANES_EXPECT");
    int marks = px_test_size > 1 && expect && net && !strcmp(net, "tcp");
    if (marks)
        check_marks(expect);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < NMSG; i++) {
        free(sbuf[i]);
        free(rbuf[i]);
    }
    return px_test_finish("%d rounds of %d messages 8 B..300 KB on 2 tags with allreduce and "
                          "bcast in flight%s",
                          ROUNDS, NMSG, marks ? ", lane marks checked" : "");
}
