/* Completion calls: Waitany/Testany return exactly the request that could
 * complete (the sender releases one message at a time, in a scrambled
 * order), Waitsome/Testsome report each completion once, Testall is false
 * until all are done, and MPI_REQUEST_NULL entries and all-null arrays give
 * MPI_UNDEFINED / flag true as the standard says. */
#include "px_test.h"

#define NREQ 8
#define T_TOKEN 1000

static int perm(int k) { return (k * 5 + 3) % NREQ; /* 5 is coprime with 8: a permutation */ }

static void null_arrays(void)
{
    MPI_Request r[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st;
    int idx = 7, flag = 0, outcount = 7, idxs[3];

    MPI_Waitany(3, r, &idx, &st);
    PX_CHECK(idx == MPI_UNDEFINED, "Waitany on null requests: index %d", idx);
    MPI_Testany(3, r, &idx, &flag, &st);
    PX_CHECK(flag == 1 && idx == MPI_UNDEFINED, "Testany on null requests: flag %d index %d", flag,
             idx);
    MPI_Waitsome(3, r, &outcount, idxs, MPI_STATUSES_IGNORE);
    PX_CHECK(outcount == MPI_UNDEFINED, "Waitsome on null requests: %d", outcount);
    outcount = 7;
    MPI_Testsome(3, r, &outcount, idxs, MPI_STATUSES_IGNORE);
    PX_CHECK(outcount == MPI_UNDEFINED, "Testsome on null requests: %d", outcount);
    flag = 0;
    MPI_Testall(3, r, &flag, MPI_STATUSES_IGNORE);
    PX_CHECK(flag == 1, "Testall on null requests: flag %d", flag);
    MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
    flag = 0;
    MPI_Test(&r[0], &flag, &st);
    PX_CHECK(flag == 1, "Test on MPI_REQUEST_NULL: flag %d", flag);
    /* Zero-length arrays are legal too. */
    MPI_Waitany(0, r, &idx, MPI_STATUS_IGNORE);
    PX_CHECK(idx == MPI_UNDEFINED, "Waitany(0): index %d", idx);
}

static void post(int peer, MPI_Request *r, int *vals)
{
    for (int i = 0; i < NREQ; i++) {
        vals[i] = -1;
        if (i % 3 == 1)
            r[i] = MPI_REQUEST_NULL; /* holes in the array */
        else
            MPI_Irecv(&vals[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, &r[i]);
    }
}

static int live(int i) { return i % 3 != 1; }

static void receiver(int peer)
{
    MPI_Request r[NREQ];
    int vals[NREQ], idx, flag, outcount, idxs[NREQ], seen[NREQ];
    MPI_Status st, sts[NREQ];

    /* Waitany / Testany, one message released at a time. */
    for (int pass = 0; pass < 2; pass++) {
        post(peer, r, vals);
        flag = 1;
        MPI_Testany(NREQ, r, &idx, &flag, &st);
        PX_CHECK(flag == 0 && idx == MPI_UNDEFINED, "Testany before any send: flag %d index %d",
                 flag, idx);
        for (int k = 0; k < NREQ; k++) {
            int want = perm(k);
            if (!live(want))
                continue;
            MPI_Send(&want, 1, MPI_INT, peer, T_TOKEN, MPI_COMM_WORLD);
            if (pass == 0) {
                MPI_Waitany(NREQ, r, &idx, &st);
            } else {
                flag = 0;
                while (!flag)
                    MPI_Testany(NREQ, r, &idx, &flag, &st);
            }
            PX_CHECK(idx == want && st.MPI_TAG == want && vals[want] == 100 + want,
                     "%s: index %d tag %d, expected %d", pass ? "Testany" : "Waitany", idx,
                     st.MPI_TAG, want);
            if (idx >= 0 && idx < NREQ)
                PX_CHECK(r[idx] == MPI_REQUEST_NULL, "completed request not nulled");
        }
        MPI_Waitany(NREQ, r, &idx, &st);
        PX_CHECK(idx == MPI_UNDEFINED, "Waitany after all done: %d", idx);
    }

    /* Waitsome / Testsome: released in two batches. */
    for (int pass = 0; pass < 2; pass++) {
        int done = 0, nlive = 0;
        post(peer, r, vals);
        memset(seen, 0, sizeof(seen));
        for (int i = 0; i < NREQ; i++)
            nlive += live(i);
        outcount = -5;
        MPI_Testsome(NREQ, r, &outcount, idxs, sts);
        PX_CHECK(outcount == 0, "Testsome before any send: %d", outcount);
        flag = 1;
        MPI_Testall(NREQ, r, &flag, sts);
        PX_CHECK(flag == 0, "Testall true before any send");
        MPI_Send(&pass, 1, MPI_INT, peer, T_TOKEN + 1, MPI_COMM_WORLD);
        while (done < nlive) {
            if (pass == 0)
                MPI_Waitsome(NREQ, r, &outcount, idxs, sts);
            else
                MPI_Testsome(NREQ, r, &outcount, idxs, sts);
            PX_REQUIRE(outcount >= 0 && outcount <= nlive - done,
                       "Waitsome/Testsome outcount %d with %d pending", outcount, nlive - done);
            for (int j = 0; j < outcount; j++) {
                int i = idxs[j];
                PX_REQUIRE(i >= 0 && i < NREQ && live(i) && !seen[i],
                           "index %d reported twice or for a null request", i);
                seen[i] = 1;
                PX_CHECK(sts[j].MPI_TAG == i && vals[i] == 100 + i && r[i] == MPI_REQUEST_NULL,
                         "some: index %d status tag %d value %d", i, sts[j].MPI_TAG, vals[i]);
            }
            done += outcount;
        }
        MPI_Waitsome(NREQ, r, &outcount, idxs, sts);
        PX_CHECK(outcount == MPI_UNDEFINED, "Waitsome after all done: %d", outcount);
    }

    /* Testall becomes true exactly when the last one is in. */
    post(peer, r, vals);
    MPI_Send(&idx, 1, MPI_INT, peer, T_TOKEN + 2, MPI_COMM_WORLD);
    flag = 0;
    while (!flag)
        MPI_Testall(NREQ, r, &flag, sts);
    for (int i = 0; i < NREQ; i++)
        if (live(i))
            PX_CHECK(vals[i] == 100 + i && sts[i].MPI_TAG == i && r[i] == MPI_REQUEST_NULL,
                     "Testall: request %d value %d tag %d", i, vals[i], sts[i].MPI_TAG);
}

static void sender(int peer)
{
    int v[NREQ];
    for (int i = 0; i < NREQ; i++)
        v[i] = 100 + i;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < NREQ; k++) {
            int want;
            if (!live(perm(k)))
                continue;
            MPI_Recv(&want, 1, MPI_INT, peer, T_TOKEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&v[want], 1, MPI_INT, peer, want, MPI_COMM_WORLD);
        }
    for (int pass = 0; pass < 2; pass++) {
        int dummy;
        MPI_Recv(&dummy, 1, MPI_INT, peer, T_TOKEN + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = NREQ - 1; i >= 0; i--)
            if (live(i)) {
                MPI_Send(&v[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD);
                if (i == NREQ / 2)
                    px_sleep_ms(5); /* two batches, likely seen separately */
            }
    }
    int dummy;
    MPI_Recv(&dummy, 1, MPI_INT, peer, T_TOKEN + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < NREQ; i++)
        if (live(i))
            MPI_Send(&v[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "p2p_completion");
    int peer = px_pair_peer(px_test_rank, px_test_size);
    null_arrays();
    if (peer >= 0) {
        if (px_test_rank % 2)
            receiver(peer);
        else
            sender(peer);
    }
    return px_test_finish("Waitany/Testany/Waitsome/Testsome/Testall over %d "
                          "requests with null holes",
                          NREQ);
}
