/* Nonblocking collectives: all seventeen started back to back on one
 * communicator (so several are in flight at once and must be kept apart),
 * overlapped with point-to-point ring traffic and with a collective on a
 * second communicator, driven by MPI_Test polling and completed with
 * MPI_Waitall; every result checked against a locally computed reference.
 * Also MPI_IN_PLACE and a non-commutative user operation. */
#include "px_test.h"

static int rank, size;

static int val(int r, int i, int salt)
{
    return (int)((r * 97 + i * 13 + salt * 29) % 2000) - 1000;
}

typedef px_aff_t aff_t; /* the non-commutative operation (px_test.h) */
#define aff_val px_aff_val

static aff_t aff_fold(int hi, int i) { return px_aff_fold(0, hi, i); }

/* Reports the first mismatch of a loop and leaves the loop (no do/while
 * wrapper on purpose: the break belongs to the caller's loop). */
#define CHECK_EQ(got, want, ...)                                                                   \
    if ((got) != (want)) {                                                                         \
        PX_CHECK(0, __VA_ARGS__);                                                                  \
        break;                                                                                     \
    }

static int sum_val(int i, int salt, int upto)
{
    int s = 0;
    for (int q = 0; q < upto; q++)
        s += val(q, i, salt);
    return s;
}

enum { NREQ = 24 };

static void round_all(int count, int root, MPI_Comm dup, MPI_Op aff_op, MPI_Datatype aff_type)
{
    MPI_Request req[NREQ];
    int nr = 0;
    size_t all = (size_t)count * size;
    int *bc = malloc(sizeof(int) * (count + 1));
    int *ars = malloc(sizeof(int) * (count + 1)), *arr = malloc(sizeof(int) * (count + 1));
    int *ip = malloc(sizeof(int) * (count + 1)), *rd = malloc(sizeof(int) * (count + 1));
    int *gs = malloc(sizeof(int) * (count + 1)), *ga = malloc(sizeof(int) * (all + 1));
    int *sa = malloc(sizeof(int) * (all + 1)), *sr = malloc(sizeof(int) * (count + 1));
    int *ag = malloc(sizeof(int) * (all + 1)), *agv = malloc(sizeof(int) * (all + 1));
    int *ats = malloc(sizeof(int) * (all + 1)), *atr = malloc(sizeof(int) * (all + 1));
    int *atvr = malloc(sizeof(int) * (all + 1)), *atwr = malloc(sizeof(int) * (all + 1));
    int *rsb = malloc(sizeof(int) * (count + 1)), *rsv = malloc(sizeof(int) * (count + 1));
    int *sc = malloc(sizeof(int) * (count + 1)), *ex = malloc(sizeof(int) * (count + 1));
    int *gvr = malloc(sizeof(int) * (all + 1)), *svr = malloc(sizeof(int) * (count + 1));
    int *dupr = malloc(sizeof(int) * (count + 1));
    aff_t *aff = malloc(sizeof(aff_t) * (count + 1)), *affs = malloc(sizeof(aff_t) * (count + 1));
    int *cnt = malloc(sizeof(int) * size), *dsp = malloc(sizeof(int) * size);
    MPI_Datatype *tys = malloc(sizeof(MPI_Datatype) * size);
    int *bdsp = malloc(sizeof(int) * size), *rsc = malloc(sizeof(int) * size);
    /* point-to-point ring traffic in flight across all the collectives */
    int pn = count + 1000;
    int *ps = malloc(sizeof(int) * pn), *pr = malloc(sizeof(int) * pn);
    MPI_Request preq[2];

    for (int q = 0; q < size; q++) {
        cnt[q] = count;
        dsp[q] = q * count;
        tys[q] = MPI_INT;
        bdsp[q] = q * count * (int)sizeof(int);
        rsc[q] = count / size + (q < count % size);
    }
    for (int i = 0; i < pn; i++)
        ps[i] = val(rank, i, 99);
    MPI_Irecv(pr, pn, MPI_INT, (rank - 1 + size) % size, 7, MPI_COMM_WORLD, &preq[0]);
    MPI_Isend(ps, pn, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, &preq[1]);

    for (int i = 0; i < count; i++) {
        bc[i] = rank == root ? val(root, i, 1) : 0;
        ars[i] = val(rank, i, 2);
        ip[i] = val(rank, i, 3);
        gs[i] = val(rank, i, 4);
        sr[i] = 0;
        affs[i] = aff_val(rank, i);
        aff[i] = aff_val(rank, i);
    }
    for (size_t k = 0; k < all; k++) {
        sa[k] = val((int)(k / count), (int)(k % count), 5);
        ats[k] = val(rank, (int)k, 6);
    }
    PX_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(MPI_Ibcast(bc, count, MPI_INT, root, MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(MPI_Iallreduce(ars, arr, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(MPI_Iallreduce(MPI_IN_PLACE, ip, count, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(MPI_Ireduce(ars, rd, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &req[nr++]));
    /* a collective on another communicator interleaved with these */
    PX_MPI(MPI_Iallreduce(ars, dupr, count, MPI_INT, MPI_MIN, dup, &req[nr++]));
    PX_MPI(MPI_Igather(gs, count, MPI_INT, ga, count, MPI_INT, root, MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(MPI_Iscatter(sa, count, MPI_INT, sr, count, MPI_INT, root, MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(
        MPI_Igatherv(gs, count, MPI_INT, gvr, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(MPI_Iscatterv(sa, cnt, dsp, MPI_INT, svr, count, MPI_INT, root, MPI_COMM_WORLD,
                         &req[nr++]));
    PX_MPI(MPI_Iallgather(gs, count, MPI_INT, ag, count, MPI_INT, MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(MPI_Iallgatherv(gs, count, MPI_INT, agv, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(MPI_Ialltoall(ats, count, MPI_INT, atr, count, MPI_INT, MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(MPI_Ialltoallv(ats, cnt, dsp, MPI_INT, atvr, cnt, dsp, MPI_INT, MPI_COMM_WORLD,
                          &req[nr++]));
    PX_MPI(MPI_Ialltoallw(ats, cnt, bdsp, tys, atwr, cnt, bdsp, tys, MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(MPI_Ireduce_scatter_block(ats, rsb, count / size, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                     &req[nr++]));
    PX_MPI(MPI_Ireduce_scatter(ats, rsv, rsc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(MPI_Iscan(ars, sc, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(MPI_Iexscan(ars, ex, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(MPI_Iallreduce(MPI_IN_PLACE, aff, count, aff_type, aff_op, MPI_COMM_WORLD, &req[nr++]));
    PX_MPI(MPI_Iscan(MPI_IN_PLACE, affs, count, aff_type, aff_op, MPI_COMM_WORLD, &req[nr++]));

    /* drive progress by testing, newest first */
    for (int spin = 0; spin < 50; spin++) {
        int flag;
        PX_MPI(MPI_Test(&req[nr - 1 - spin % nr], &flag, MPI_STATUS_IGNORE));
    }
    PX_MPI(MPI_Waitall(nr, req, MPI_STATUSES_IGNORE));
    PX_MPI(MPI_Waitall(2, preq, MPI_STATUSES_IGNORE));

    for (int i = 0; i < pn; i++)
        CHECK_EQ(pr[i], val((rank - 1 + size) % size, i, 99), "p2p elem %d", i);
    for (int i = 0; i < count; i++)
        CHECK_EQ(bc[i], val(root, i, 1), "Ibcast count %d root %d elem %d", count, root, i);
    for (int i = 0; i < count; i++)
        CHECK_EQ(arr[i], sum_val(i, 2, size), "Iallreduce count %d elem %d", count, i);
    for (int i = 0; i < count; i++) {
        int m = val(0, i, 3);
        for (int q = 1; q < size; q++)
            m = val(q, i, 3) > m ? val(q, i, 3) : m;
        CHECK_EQ(ip[i], m, "Iallreduce IN_PLACE MAX count %d elem %d", count, i);
    }
    for (int i = 0; i < count && rank == root; i++)
        CHECK_EQ(rd[i], sum_val(i, 2, size), "Ireduce count %d elem %d", count, i);
    for (int i = 0; i < count; i++) {
        int m = val(0, i, 2);
        for (int q = 1; q < size; q++)
            m = val(q, i, 2) < m ? val(q, i, 2) : m;
        CHECK_EQ(dupr[i], m, "Iallreduce on dup count %d elem %d", count, i);
    }
    for (size_t k = 0; k < all && rank == root; k++)
        CHECK_EQ(ga[k], val((int)(k / count), (int)(k % count), 4), "Igather elem %zu", k);
    for (size_t k = 0; k < all && rank == root; k++)
        CHECK_EQ(gvr[k], val((int)(k / count), (int)(k % count), 4), "Igatherv elem %zu", k);
    for (int i = 0; i < count; i++)
        CHECK_EQ(sr[i], val(rank, i, 5), "Iscatter elem %d", i);
    for (int i = 0; i < count; i++)
        CHECK_EQ(svr[i], val(rank, i, 5), "Iscatterv elem %d", i);
    for (size_t k = 0; k < all; k++)
        CHECK_EQ(ag[k], val((int)(k / count), (int)(k % count), 4), "Iallgather elem %zu", k);
    for (size_t k = 0; k < all; k++)
        CHECK_EQ(agv[k], val((int)(k / count), (int)(k % count), 4), "Iallgatherv elem %zu", k);
    for (size_t k = 0; k < all; k++) {
        int q = (int)(k / count), want = val(q, rank * count + (int)(k % count), 6);
        CHECK_EQ(atr[k], want, "Ialltoall elem %zu", k);
        CHECK_EQ(atvr[k], want, "Ialltoallv elem %zu", k);
        CHECK_EQ(atwr[k], want, "Ialltoallw elem %zu", k);
    }
    for (int i = 0; i < count / size; i++)
        CHECK_EQ(rsb[i], sum_val(rank * (count / size) + i, 6, size),
                 "Ireduce_scatter_block elem %d", i);
    {
        int off = 0;
        for (int q = 0; q < rank; q++)
            off += rsc[q];
        for (int i = 0; i < rsc[rank]; i++)
            CHECK_EQ(rsv[i], sum_val(off + i, 6, size), "Ireduce_scatter elem %d", i);
    }
    for (int i = 0; i < count; i++)
        CHECK_EQ(sc[i], sum_val(i, 2, rank + 1), "Iscan elem %d", i);
    for (int i = 0; i < count && rank > 0; i++)
        CHECK_EQ(ex[i], sum_val(i, 2, rank), "Iexscan elem %d", i);
    for (int i = 0; i < count; i++) {
        aff_t w = aff_fold(size - 1, i);
        CHECK_EQ(aff[i].m == w.m && aff[i].c == w.c, 1, "Iallreduce(user op) elem %d", i);
        w = aff_fold(rank, i);
        CHECK_EQ(affs[i].m == w.m && affs[i].c == w.c, 1, "Iscan(user op) elem %d", i);
    }
    free(bc);
    free(ars);
    free(arr);
    free(ip);
    free(rd);
    free(gs);
    free(ga);
    free(sa);
    free(sr);
    free(ag);
    free(agv);
    free(ats);
    free(atr);
    free(atvr);
    free(atwr);
    free(rsb);
    free(rsv);
    free(sc);
    free(ex);
    free(gvr);
    free(svr);
    free(dupr);
    free(aff);
    free(affs);
    free(cnt);
    free(dsp);
    free(tys);
    free(bdsp);
    free(rsc);
    free(ps);
    free(pr);
}

/* The datatype of a nonblocking bcast may be freed before the bcast completes. */
static void freed_type_bcast(void)
{
    int v[12];
    MPI_Datatype every_third;
    MPI_Request req;
    for (int i = 0; i < 12; i++)
        v[i] = rank == 0 ? i : -1;
    MPI_Type_vector(4, 1, 3, MPI_INT, &every_third);
    MPI_Type_commit(&every_third);
    PX_MPI(MPI_Ibcast(v, 1, every_third, 0, MPI_COMM_WORLD, &req));
    MPI_Type_free(&every_third);
    PX_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < 12; i++)
        CHECK_EQ(v[i], rank == 0 || i % 3 == 0 ? i : -1, "ibcast with a freed type: v[%d]", i);
}

int main(int argc, char **argv)
{
    static const int counts[] = {0, 1, 5, 1000, 20000, 70000};
    MPI_Comm dup;
    MPI_Datatype aff_type;
    MPI_Op aff_op;
    px_test_init(&argc, &argv, "coll_nb");
    rank = px_test_rank;
    size = px_test_size;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    /* a blocking collective first on each communicator: implementations may
     * set up per-communicator state there (node-aware schedules) */
    PX_MPI(MPI_Barrier(MPI_COMM_WORLD));
    PX_MPI(MPI_Barrier(dup));
    MPI_Type_contiguous(2, MPI_UNSIGNED, &aff_type);
    MPI_Type_commit(&aff_type);
    MPI_Op_create(px_aff_fn, 0, &aff_op);
    for (int k = 0; k < (int)(sizeof(counts) / sizeof(counts[0])); k++)
        for (int root = 0; root<size; root += size> 2 ? size / 2 + 1 : 1)
            round_all(counts[k] / (counts[k] > 5000 ? size : 1), root, dup, aff_op, aff_type);
    freed_type_bcast();
    MPI_Op_free(&aff_op);
    MPI_Type_free(&aff_type);
    MPI_Comm_free(&dup);
    return px_test_finish("17 nonblocking collectives in flight together with p2p, IN_PLACE, "
                          "user op");
}
