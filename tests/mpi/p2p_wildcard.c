/* Wildcard matching: MPI_ANY_SOURCE / MPI_ANY_TAG receive the right
 * messages, and status source, tag and count describe them exactly. */
#include "px_test.h"

#define PER_RANK 5

/* Content identifies sender and index; the length varies with both. */
static int msg_len(int src, int k) { return 2 + (src * 7 + k * 3) % 11; }

static int msg_tag(int src, int k) { return 100 + src * PER_RANK + k; }

static void send_msgs(int dest, MPI_Request *reqs, int (*bufs)[16])
{
    for (int k = 0; k < PER_RANK; k++) {
        int n = msg_len(px_test_rank, k);
        for (int i = 0; i < n; i++)
            bufs[k][i] = px_test_rank * 1000 + k * 20 + i;
        MPI_Isend(bufs[k], n, MPI_INT, dest, msg_tag(px_test_rank, k), MPI_COMM_WORLD, &reqs[k]);
    }
}

static void check_msg(const int *buf, const MPI_Status *st, const char *what)
{
    int src = st->MPI_SOURCE, tag = st->MPI_TAG, count = -1;
    PX_CHECK(src >= 0 && src < px_test_size, "%s: status source %d", what, src);
    if (src < 0 || src >= px_test_size)
        return;
    int k = tag - 100 - src * PER_RANK;
    PX_CHECK(k >= 0 && k < PER_RANK, "%s: status tag %d from source %d", what, tag, src);
    if (k < 0 || k >= PER_RANK)
        return;
    MPI_Get_count(st, MPI_INT, &count);
    PX_CHECK(count == msg_len(src, k), "%s: count %d, expected %d", what, count, msg_len(src, k));
    for (int i = 0; i < count && i < 16; i++)
        PX_CHECK(buf[i] == src * 1000 + k * 20 + i,
                 "%s: element %d is %d, status says src %d tag %d", what, i, buf[i], src, tag);
}

/* Everyone (rank 0 too, to itself) sends PER_RANK messages to rank 0, which
 * receives them all with ANY_SOURCE + ANY_TAG. */
static void any_any(void)
{
    MPI_Request reqs[PER_RANK];
    int bufs[PER_RANK][16];

    send_msgs(0, reqs, bufs);
    if (px_test_rank == 0) {
        int total = PER_RANK * px_test_size;
        char *seen = calloc((size_t)total, 1);
        for (int m = 0; m < total; m++) {
            int buf[16];
            MPI_Status st;
            memset(buf, 0xff, sizeof(buf));
            MPI_Recv(buf, 16, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            check_msg(buf, &st, "any/any");
            int id = st.MPI_TAG - 100;
            if (id >= 0 && id < total) {
                PX_CHECK(!seen[id], "message tag %d received twice", st.MPI_TAG);
                seen[id] = 1;
            }
        }
        free(seen);
    }
    MPI_Waitall(PER_RANK, reqs, MPI_STATUSES_IGNORE);
}

/* Each rank receives from its left neighbour, mixing ANY_SOURCE with a
 * specific tag and a specific source with ANY_TAG; the latter must take the
 * oldest message still unreceived (non-overtaking). */
static void half_wild(void)
{
    int n = px_test_size, right = (px_test_rank + 1) % n;
    int left = (px_test_rank + n - 1) % n;
    MPI_Request reqs[PER_RANK];
    int bufs[PER_RANK][16];
    /* -1: ANY_TAG from left; else ANY_SOURCE with the tag of that message. */
    const int plan[PER_RANK] = {4, -1, 3, -1, -1};
    const int expect[PER_RANK] = {4, 0, 3, 1, 2};

    send_msgs(right, reqs, bufs);
    for (int s = 0; s < PER_RANK; s++) {
        int buf[16];
        MPI_Status st;
        if (plan[s] >= 0)
            MPI_Recv(buf, 16, MPI_INT, MPI_ANY_SOURCE, msg_tag(left, plan[s]), MPI_COMM_WORLD, &st);
        else
            MPI_Recv(buf, 16, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        check_msg(buf, &st, plan[s] >= 0 ? "any-source" : "any-tag");
        PX_CHECK(st.MPI_SOURCE == left, "step %d: expected source %d, got %d", s, left,
                 st.MPI_SOURCE);
        PX_CHECK(st.MPI_TAG == msg_tag(left, expect[s]), "step %d: expected tag %d, got %d", s,
                 msg_tag(left, expect[s]), st.MPI_TAG);
    }
    MPI_Waitall(PER_RANK, reqs, MPI_STATUSES_IGNORE);
}

/* A receive for a specific source must not take another rank's message even
 * when it was posted first; a wildcard posted after it takes that one. */
static void specific_before_wild(void)
{
    int size = px_test_size;
    if (size < 3)
        return;
    if (px_test_rank == 0) {
        int a = -1, b = -1, c = -1, d = -1;
        MPI_Request r[4];
        MPI_Status st[4];
        MPI_Irecv(&a, 1, MPI_INT, 1, 50, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &r[1]);
        MPI_Irecv(&c, 1, MPI_INT, MPI_ANY_SOURCE, 51, MPI_COMM_WORLD, &r[2]);
        MPI_Irecv(&d, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[3]);
        /* Rank 2 sends first (tags 50 and 52), then rank 1 (tags 50, 51). */
        MPI_Send(NULL, 0, MPI_BYTE, 2, 49, MPI_COMM_WORLD);
        MPI_Waitall(4, r, st);
        PX_CHECK(a == 1001 && st[0].MPI_SOURCE == 1, "source-1 recv got %d from %d", a,
                 st[0].MPI_SOURCE);
        PX_CHECK(b == 2001 && st[1].MPI_SOURCE == 2, "wild recv got %d from %d", b,
                 st[1].MPI_SOURCE);
        PX_CHECK(c == 1002 && st[2].MPI_TAG == 51, "tag-51 recv got %d tag %d", c, st[2].MPI_TAG);
        PX_CHECK(d == 2002 && st[3].MPI_TAG == 52 && st[3].MPI_SOURCE == 2,
                 "any/any recv got %d tag %d from %d", d, st[3].MPI_TAG, st[3].MPI_SOURCE);
    } else if (px_test_rank == 2) {
        int v1 = 2001, v2 = 2002;
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 49, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&v1, 1, MPI_INT, 0, 50, MPI_COMM_WORLD);
        MPI_Send(&v2, 1, MPI_INT, 0, 52, MPI_COMM_WORLD);
        MPI_Send(NULL, 0, MPI_BYTE, 1, 49, MPI_COMM_WORLD);
    } else if (px_test_rank == 1) {
        int v1 = 1001, v2 = 1002;
        MPI_Recv(NULL, 0, MPI_BYTE, 2, 49, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&v1, 1, MPI_INT, 0, 50, MPI_COMM_WORLD);
        MPI_Send(&v2, 1, MPI_INT, 0, 51, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "p2p_wildcard");
    any_any();
    MPI_Barrier(MPI_COMM_WORLD);
    half_wild();
    MPI_Barrier(MPI_COMM_WORLD);
    specific_before_wild();
    return px_test_finish("%d wildcard receives at root, ring, specific-vs-wild",
                          PER_RANK * px_test_size);
}
