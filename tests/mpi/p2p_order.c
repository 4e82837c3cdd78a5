/* Message ordering: for one (source, tag, communicator) messages are matched
 * in the order they were sent, also when small (eager) and large
 * (rendezvous) messages are mixed, and receives select tags out of order. */
#include "px_test.h"

#define NMSG 240
#define NTAG 4
#define SMALL 24
#define LARGE 200000 /* above any eager threshold */
#define HDR 16

static size_t msg_size(int seq) { return seq % 8 == 5 ? LARGE : SMALL + (size_t)(seq % 3) * 8; }

/* Header: global sequence, per-tag sequence; then a pattern keyed by both. */
static void make_msg(unsigned char *buf, int seq, int tagseq, int src)
{
    int64_t h[2] = {seq, tagseq};
    size_t n = msg_size(seq);
    memcpy(buf, h, HDR);
    px_fill(buf + HDR, n - HDR, (uint64_t)src << 32 | (uint64_t)seq);
}

static void check_msg(const unsigned char *buf, const MPI_Status *st, int src, int want_seq,
                      int want_tagseq, const char *what)
{
    int64_t h[2];
    int count = -1;
    memcpy(h, buf, HDR);
    PX_CHECK(h[0] == want_seq && h[1] == want_tagseq,
             "%s from %d: got seq %lld/tagseq %lld, expected %d/%d", what, src, (long long)h[0],
             (long long)h[1], want_seq, want_tagseq);
    MPI_Get_count(st, MPI_BYTE, &count);
    PX_CHECK(count == (int)msg_size(want_seq), "%s seq %d: count %d, expected %zu", what, want_seq,
             count, msg_size(want_seq));
    PX_CHECK(st->MPI_SOURCE == src, "%s seq %d: source %d", what, want_seq, st->MPI_SOURCE);
    if (h[0] == want_seq && count == (int)msg_size(want_seq))
        PX_CHECK(px_verify(buf + HDR, count - HDR, (uint64_t)src << 32 | (uint64_t)want_seq) ==
                     (size_t)count - HDR,
                 "%s seq %d: payload corrupt", what, want_seq);
}

/* Phase 1: sender cycles tags; receiver drains one tag at a time, last tag
 * first, so most messages wait in the unexpected queue. */
static void pair_by_tag(int peer, int sender)
{
    static unsigned char *bufs[NMSG];
    MPI_Request reqs[NMSG];
    int tagseq[NTAG] = {0};

    if (sender) {
        for (int i = 0; i < NMSG; i++) {
            bufs[i] = malloc(msg_size(i));
            make_msg(bufs[i], i, tagseq[i % NTAG]++, px_test_rank);
            MPI_Isend(bufs[i], (int)msg_size(i), MPI_BYTE, peer, i % NTAG, MPI_COMM_WORLD,
                      &reqs[i]);
        }
        MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < NMSG; i++)
            free(bufs[i]);
    } else {
        unsigned char *buf = malloc(LARGE);
        for (int tag = NTAG - 1; tag >= 0; tag--) {
            int k = 0;
            for (int i = tag; i < NMSG; i += NTAG, k++) {
                MPI_Status st;
                MPI_Recv(buf, LARGE, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
                PX_CHECK(st.MPI_TAG == tag, "tag %d got status tag %d", tag, st.MPI_TAG);
                check_msg(buf, &st, peer, i, k, "by-tag");
            }
        }
        free(buf);
    }
}

/* Phase 2: one tag, all receives pre-posted with ANY_TAG, mixed sizes. */
static void pair_posted(int peer, int sender)
{
    static unsigned char *bufs[NMSG];
    MPI_Request reqs[NMSG];
    MPI_Status sts[NMSG];

    if (sender) {
        /* Wait until the receiver has posted everything. */
        MPI_Recv(NULL, 0, MPI_BYTE, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < NMSG; i++) {
            bufs[i] = malloc(msg_size(i));
            make_msg(bufs[i], i, i, px_test_rank);
            MPI_Isend(bufs[i], (int)msg_size(i), MPI_BYTE, peer, 11, MPI_COMM_WORLD, &reqs[i]);
        }
        MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < NMSG; i++)
            free(bufs[i]);
    } else {
        for (int i = 0; i < NMSG; i++) {
            bufs[i] = malloc(LARGE);
            MPI_Irecv(bufs[i], LARGE, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[i]);
        }
        MPI_Send(NULL, 0, MPI_BYTE, peer, 99, MPI_COMM_WORLD);
        MPI_Waitall(NMSG, reqs, sts);
        for (int i = 0; i < NMSG; i++) {
            PX_CHECK(sts[i].MPI_TAG == 11, "posted: tag %d", sts[i].MPI_TAG);
            check_msg(bufs[i], &sts[i], peer, i, i, "posted");
            free(bufs[i]);
        }
    }
}

/* Phase 3: every rank (rank 0 included, to itself) sends to rank 0, which
 * receives with ANY_SOURCE: per-source order must hold. */
static void all_to_root(void)
{
    const int m = 60;
    int size = px_test_size;

    if (px_test_rank != 0) {
        MPI_Request reqs[60];
        unsigned char *bufs[60];
        for (int i = 0; i < m; i++) {
            bufs[i] = malloc(msg_size(i));
            make_msg(bufs[i], i, i, px_test_rank);
            MPI_Isend(bufs[i], (int)msg_size(i), MPI_BYTE, 0, 7, MPI_COMM_WORLD, &reqs[i]);
        }
        MPI_Waitall(m, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < m; i++)
            free(bufs[i]);
    } else {
        MPI_Request self[60];
        unsigned char *sbufs[60];
        unsigned char *buf = malloc(LARGE);
        int *next = calloc((size_t)size, sizeof(int));
        for (int i = 0; i < m; i++) {
            sbufs[i] = malloc(msg_size(i));
            make_msg(sbufs[i], i, i, 0);
            MPI_Isend(sbufs[i], (int)msg_size(i), MPI_BYTE, 0, 7, MPI_COMM_WORLD, &self[i]);
        }
        for (int k = 0; k < m * size; k++) {
            MPI_Status st;
            MPI_Recv(buf, LARGE, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st);
            int src = st.MPI_SOURCE;
            PX_REQUIRE(src >= 0 && src < size, "ANY_SOURCE gave source %d", src);
            PX_CHECK(next[src] < m, "too many messages from %d", src);
            check_msg(buf, &st, src, next[src], next[src], "to-root");
            next[src]++;
        }
        MPI_Waitall(m, self, MPI_STATUSES_IGNORE);
        for (int i = 0; i < m; i++)
            free(sbufs[i]);
        free(next);
        free(buf);
    }
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "p2p_order");
    int peer = px_pair_peer(px_test_rank, px_test_size);
    int sender = px_test_rank % 2 == 0;

    if (peer >= 0) {
        pair_by_tag(peer, sender);
        pair_posted(peer, sender);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    all_to_root();
    return px_test_finish("%d msgs per pair x 2 phases over %d tags, %d to root", NMSG, NTAG,
                          60 * px_test_size);
}
