/* Ordering and integrity of mixed traffic between every pair of ranks:
 * checksummed payloads of mixed sizes (eager and rendezvous, striped and
 * not), nonblocking sends received through wildcard probes, blocking
 * pairwise exchanges, and collective traffic. Each message carries its
 * stream's sequence number: anything lost, duplicated, reordered within a
 * (source, tag) stream or corrupted is reported. Run on a multi-rail fabric
 * under every PX_RAIL_POLICY; also runs on one node. Usage: rail_check [rounds] */
#include "px_test.h"

static const size_t sizes[] = {0,           1,   17,    4096, 65536 + 1, 262144 + 5, 1048576 + 13,
                               3 * 1048576, 100, 200000};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define NTAGS 2

static uint64_t seed_of(int src, int dst, int tag, int seq)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ ((uint64_t)tag << 24) ^ (uint64_t)seq;
}

/* size of message number seq of a stream */
static size_t size_of(int src, int dst, int tag, int seq)
{
    return sizes[(size_t)(seq + src * 3 + dst * 5 + tag) % NSIZES];
}

/* A message: 8-byte sequence number, then the pattern. */
static void make(char *buf, size_t n, int src, int dst, int tag, int seq)
{
    int64_t s = seq;
    if (n >= 8) {
        memcpy(buf, &s, 8);
        px_fill(buf + 8, n - 8, seed_of(src, dst, tag, seq));
    } else {
        px_fill(buf, n, seed_of(src, dst, tag, seq));
    }
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "rail_check");
    int rank = px_test_rank, size = px_test_size;
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    size_t maxsz = 3 * 1048576;
    int *next_tx = calloc((size_t)size * NTAGS, sizeof(int)); /* per (dst, tag) */
    int *next_rx = calloc((size_t)size * NTAGS, sizeof(int)); /* per (src, tag) */
    char *rbuf = malloc(maxsz);
    uint64_t bytes = 0, msgs = 0;
    MPI_Comm other; /* blocking and collective traffic, apart from the wildcard receives */
    PX_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &other));

    for (int r = 0; r < rounds; r++) {
        /* 1. nonblocking sends to everyone, received through wildcard probes */
        int per_peer = 6, nsend = per_peer * (size - 1);
        MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(nsend ? nsend : 1));
        char **sbuf = malloc(sizeof(char *) * (size_t)(nsend ? nsend : 1));
        int k = 0;
        for (int i = 0; i < per_peer; i++)
            for (int d = 0; d < size; d++) {
                if (d == rank)
                    continue;
                int tag = (i + d) % NTAGS;
                int seq = next_tx[d * NTAGS + tag]++;
                size_t n = size_of(rank, d, tag, seq);
                sbuf[k] = malloc(n ? n : 1);
                make(sbuf[k], n, rank, d, tag, seq);
                PX_MPI(MPI_Isend(sbuf[k], (int)n, MPI_BYTE, d, tag, MPI_COMM_WORLD, &req[k]));
                k++;
            }
        for (int got = 0; got < nsend; got++) {
            MPI_Status st;
            int n;
            PX_MPI(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            MPI_Get_count(&st, MPI_BYTE, &n);
            int src = st.MPI_SOURCE, tag = st.MPI_TAG;
            PX_REQUIRE(src >= 0 && src < size && tag >= 0 && tag < NTAGS, "bad envelope %d/%d", src,
                       tag);
            int seq = next_rx[src * NTAGS + tag]++;
            size_t want = size_of(src, rank, tag, seq);
            PX_MPI(MPI_Recv(rbuf, (int)maxsz, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st));
            PX_CHECK((size_t)n == want, "from %d tag %d message %d: %d bytes, expected %zu", src,
                     tag, seq, n, want);
            if ((size_t)n != want)
                continue;
            if (n >= 8) {
                int64_t s;
                memcpy(&s, rbuf, 8);
                PX_CHECK(s == seq, "from %d tag %d: sequence %lld arrived where %d was due", src,
                         tag, (long long)s, seq);
                size_t bad = px_verify(rbuf + 8, (size_t)n - 8, seed_of(src, rank, tag, seq));
                PX_CHECK(bad == (size_t)n - 8,
                         "from %d tag %d message %d (%d bytes): wrong byte at %zu", src, tag, seq,
                         n, bad + 8);
            } else {
                PX_CHECK(px_verify(rbuf, (size_t)n, seed_of(src, rank, tag, seq)) == (size_t)n,
                         "from %d tag %d message %d (%d bytes) corrupted", src, tag, seq, n);
            }
            bytes += (uint64_t)n;
            msgs++;
        }
        PX_MPI(MPI_Waitall(nsend, req, MPI_STATUSES_IGNORE));
        for (int i = 0; i < nsend; i++)
            free(sbuf[i]);
        free(sbuf);
        free(req);

        /* 2. blocking pairwise exchanges (ordered so they cannot deadlock) */
        for (int dist = 1; dist < size; dist++) {
            int to = (rank + dist) % size, from = (rank - dist + size) % size;
            size_t n = sizes[(size_t)(r + dist) % NSIZES];
            char *s = malloc(n ? n : 1);
            px_fill(s, n, seed_of(rank, to, 7, r * 100 + dist));
            MPI_Status st;
            if (rank < to) {
                PX_MPI(MPI_Send(s, (int)n, MPI_BYTE, to, 7, other));
                PX_MPI(MPI_Recv(rbuf, (int)maxsz, MPI_BYTE, from, 7, other, &st));
            } else {
                PX_MPI(MPI_Sendrecv(s, (int)n, MPI_BYTE, to, 7, rbuf, (int)maxsz, MPI_BYTE, from, 7,
                                    other, &st));
            }
            int cnt;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            PX_CHECK((size_t)cnt == n &&
                         px_verify(rbuf, n, seed_of(from, rank, 7, r * 100 + dist)) == n,
                     "blocking exchange from %d (%zu bytes) wrong", from, n);
            free(s);
        }

        /* 3. collective traffic: alltoall of 256 KB per pair, checked */
        size_t blk = 262144;
        char *a = malloc(blk * (size_t)size), *b = malloc(blk * (size_t)size);
        for (int d = 0; d < size; d++)
            px_fill(a + blk * (size_t)d, blk, seed_of(rank, d, 9, r));
        PX_MPI(MPI_Alltoall(a, (int)blk, MPI_BYTE, b, (int)blk, MPI_BYTE, other));
        for (int s = 0; s < size; s++)
            PX_CHECK(px_verify(b + blk * (size_t)s, blk, seed_of(s, rank, 9, r)) == blk,
                     "alltoall block from %d wrong in round %d", s, r);
        free(a);
        free(b);
    }
    /* every stream delivered exactly what was sent */
    int *sent_to_me = malloc(sizeof(int) * (size_t)size * NTAGS);
    PX_MPI(MPI_Alltoall(next_tx, NTAGS, MPI_INT, sent_to_me, NTAGS, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size * NTAGS; i++)
        PX_CHECK(sent_to_me[i] == next_rx[i], "stream %d/%d: %d sent, %d received", i / NTAGS,
                 i % NTAGS, sent_to_me[i], next_rx[i]);
    free(sent_to_me);
    MPI_Comm_free(&other);
    free(next_tx);
    free(next_rx);
    free(rbuf);
    return px_test_finish("%d rounds, %llu messages, %llu bytes checked", rounds,
                          (unsigned long long)msgs, (unsigned long long)bytes);
}
