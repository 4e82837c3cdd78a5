/* Size sweep across eager/rendezvous thresholds (1 B .. 4 MB): each size in
 * both directions with the receive posted before the send, posted after the
 * message arrived, plain blocking, nonblocking exchange and Sendrecv. Every
 * payload is checked byte by byte, plus its count and the bytes after it. */
#include "px_test.h"

static const int sizes[] = {1,     7,     1023,  4096,          16383,  16384,
                            16385, 65535, 65537, (1 << 20) + 3, 4 << 20};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))
#define SLACK 64
#define SENTINEL 0xa5

enum { MODE_PREPOSTED, MODE_LATE, MODE_BLOCKING, MODE_EXCHANGE, MODE_SENDRECV, NMODES };
static const char *mode_names[NMODES] = {"pre-posted", "late-posted", "blocking",
                                         "Isend/Irecv exchange", "Sendrecv"};

static unsigned char *sbuf, *rbuf;

static uint64_t seed_of(int src, int size, int mode)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)mode << 40) ^ (uint64_t)size;
}

static void prep_recv(int n) { memset(rbuf, SENTINEL, (size_t)n + SLACK); }

static void check_recv(int n, const MPI_Status *st, int src, int mode)
{
    int count = -1, tail_ok = 1;
    MPI_Get_count(st, MPI_BYTE, &count);
    PX_CHECK(count == n, "%s %d B from %d: count %d", mode_names[mode], n, src, count);
    size_t bad = px_verify(rbuf, n, seed_of(src, n, mode));
    PX_CHECK(bad == (size_t)n, "%s %d B from %d: first wrong byte at %zu", mode_names[mode], n, src,
             bad);
    for (int i = 0; i < SLACK; i++)
        tail_ok &= rbuf[n + i] == SENTINEL;
    PX_CHECK(tail_ok, "%s %d B from %d: bytes after the message written", mode_names[mode], n, src);
}

/* One-directional modes: 'me' sends to 'peer' when sending is set. */
static void one_way(int peer, int sending, int n, int mode)
{
    MPI_Request r;
    MPI_Status st;
    int tag = 100 + mode;

    if (sending)
        px_fill(sbuf, n, seed_of(px_test_rank, n, mode));
    else
        prep_recv(n);

    switch (mode) {
    case MODE_PREPOSTED:
        if (sending) {
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
        } else {
            MPI_Irecv(rbuf, n + SLACK, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r);
            MPI_Send(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Wait(&r, &st);
        }
        break;
    case MODE_LATE:
        if (sending) {
            MPI_Isend(sbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            /* Post only once the message (or its announcement) is here. */
            int flag = 0, pc = -1;
            while (!flag)
                MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, &st);
            MPI_Get_count(&st, MPI_BYTE, &pc);
            PX_CHECK(pc == n, "late-posted %d B: probe count %d", n, pc);
            MPI_Recv(rbuf, n + SLACK, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
        }
        break;
    default:
        if (sending)
            MPI_Send(sbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
        else
            MPI_Recv(rbuf, n + SLACK, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
        break;
    }
    if (!sending)
        check_recv(n, &st, peer, mode);
}

static void both_ways(int peer, int n, int mode)
{
    MPI_Status st;
    int tag = 100 + mode;

    px_fill(sbuf, n, seed_of(px_test_rank, n, mode));
    prep_recv(n);
    if (mode == MODE_EXCHANGE) {
        MPI_Request r[2];
        MPI_Status sts[2];
        MPI_Irecv(rbuf, n + SLACK, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(sbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, sts);
        st = sts[0];
    } else {
        MPI_Sendrecv(sbuf, n, MPI_BYTE, peer, tag, rbuf, n + SLACK, MPI_BYTE, peer, tag,
                     MPI_COMM_WORLD, &st);
    }
    check_recv(n, &st, peer, mode);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "p2p_sizes");
    int peer = px_pair_peer(px_test_rank, px_test_size);
    int maxn = sizes[NSIZES - 1];
    long long moved = 0;

    sbuf = malloc((size_t)maxn + SLACK);
    rbuf = malloc((size_t)maxn + SLACK);
    for (int i = 0; i < NSIZES; i++) {
        int n = sizes[i];
        if (peer >= 0) {
            for (int mode = MODE_PREPOSTED; mode <= MODE_BLOCKING; mode++) {
                one_way(peer, px_test_rank % 2 == 0, n, mode);
                one_way(peer, px_test_rank % 2 == 1, n, mode);
                moved += n;
            }
        }
        /* Exchanges also run with oneself when there is no partner. */
        both_ways(peer >= 0 ? peer : px_test_rank, n, MODE_EXCHANGE);
        both_ways(peer >= 0 ? peer : px_test_rank, n, MODE_SENDRECV);
        moved += 2LL * n;
    }
    free(sbuf);
    free(rbuf);
    return px_test_finish("%d sizes x %d modes, %.1f MB received per rank", NSIZES, NMODES,
                          moved / 1048576.0);
}
