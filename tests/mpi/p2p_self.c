/* Messages to oneself, on MPI_COMM_WORLD and MPI_COMM_SELF: small and large
 * (8 MB), ordering, wildcards, probe, synchronous mode, Sendrecv and
 * Sendrecv_replace with oneself. Every rank does this independently. */
#include "px_test.h"

#define BIG (8 << 20)
#define NORDER 50

static uint64_t seed_of(int what, int i)
{
    return (uint64_t)px_test_rank << 40 | (uint64_t)what << 20 | (uint64_t)i;
}

static void self_comm(MPI_Comm comm, int me, const char *cname)
{
    char *s = malloc(BIG), *r = malloc(BIG);
    const int sizes[] = {0, 1, 4000, 70000, BIG};
    MPI_Request req[NORDER];
    MPI_Status st;
    int count = -1;

    /* Nonblocking send to self then blocking receive, each size. */
    for (int k = 0; k < 5; k++) {
        int n = sizes[k];
        px_fill(s, n, seed_of(1, k));
        memset(r, 0, n);
        MPI_Isend(s, n, MPI_BYTE, me, 1, comm, &req[0]);
        MPI_Recv(r, BIG, MPI_BYTE, me, 1, comm, &st);
        MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        MPI_Get_count(&st, MPI_BYTE, &count);
        PX_CHECK(count == n && st.MPI_SOURCE == me && st.MPI_TAG == 1 &&
                     px_verify(r, n, seed_of(1, k)) == (size_t)n,
                 "%s Isend/Recv self %d B: count %d source %d", cname, n, count, st.MPI_SOURCE);
    }

    /* Receive posted first, then a blocking send (allowed: it matches). */
    px_fill(s, BIG, seed_of(2, 0));
    memset(r, 0, BIG);
    MPI_Irecv(r, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &req[0]);
    MPI_Send(s, BIG, MPI_BYTE, me, 2, comm);
    MPI_Wait(&req[0], &st);
    PX_CHECK(st.MPI_SOURCE == me && st.MPI_TAG == 2 && px_verify(r, BIG, seed_of(2, 0)) == BIG,
             "%s Irecv(ANY)/Send self 8 MB: source %d tag %d", cname, st.MPI_SOURCE, st.MPI_TAG);

    /* Order of many self messages, mixed sizes, one tag. */
    static int vals[NORDER][300];
    for (int i = 0; i < NORDER; i++) {
        int n = i % 5 == 4 ? 300 : 1;
        for (int j = 0; j < n; j++)
            vals[i][j] = i * 1000 + j;
        MPI_Isend(vals[i], n, MPI_INT, me, 3, comm, &req[i]);
    }
    for (int i = 0; i < NORDER; i++) {
        int got[300];
        MPI_Recv(got, 300, MPI_INT, me, 3, comm, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        PX_CHECK(got[0] == i * 1000 && count == (i % 5 == 4 ? 300 : 1),
                 "%s self order: message %d has %d (count %d)", cname, i, got[0], count);
    }
    MPI_Waitall(NORDER, req, MPI_STATUSES_IGNORE);

    /* Probe a self message, then Issend to self completes only when received. */
    {
        int v = 41, w = 0, flag = 0;
        MPI_Issend(&v, 1, MPI_INT, me, 4, comm, &req[0]);
        MPI_Probe(me, 4, comm, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        PX_CHECK(count == 1 && st.MPI_TAG == 4, "%s Probe of self Issend", cname);
        MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
        PX_CHECK(!flag, "%s self Issend complete before the receive", cname);
        MPI_Recv(&w, 1, MPI_INT, me, 4, comm, MPI_STATUS_IGNORE);
        MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        PX_CHECK(w == 41, "%s self Issend data %d", cname, w);
    }

    /* Sendrecv and Sendrecv_replace with oneself, large. */
    px_fill(s, BIG, seed_of(5, 0));
    memset(r, 0, BIG);
    MPI_Sendrecv(s, BIG, MPI_BYTE, me, 5, r, BIG, MPI_BYTE, me, 5, comm, &st);
    PX_CHECK(px_verify(r, BIG, seed_of(5, 0)) == BIG && st.MPI_SOURCE == me,
             "%s Sendrecv self 8 MB", cname);
    px_fill(s, BIG, seed_of(6, 0));
    MPI_Sendrecv_replace(s, BIG / 8, MPI_DOUBLE, me, 6, me, 6, comm, &st);
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    PX_CHECK(px_verify(s, BIG, seed_of(6, 0)) == BIG && count == BIG / 8,
             "%s Sendrecv_replace self 8 MB: count %d", cname, count);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    int sr = -1, ss = -1;
    px_test_init(&argc, &argv, "p2p_self");
    MPI_Comm_rank(MPI_COMM_SELF, &sr);
    MPI_Comm_size(MPI_COMM_SELF, &ss);
    PX_CHECK(sr == 0 && ss == 1, "MPI_COMM_SELF rank %d size %d", sr, ss);

    self_comm(MPI_COMM_WORLD, px_test_rank, "COMM_WORLD");
    self_comm(MPI_COMM_SELF, 0, "COMM_SELF");
    return px_test_finish("self messages 0 B..8 MB on COMM_WORLD and COMM_SELF");
}
