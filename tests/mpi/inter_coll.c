/* Collectives on an inter-communicator between uneven groups of
 * MPI_COMM_WORLD (group A: world ranks with rank % 3 == 0, group B: the
 * others): Barrier, Bcast, Reduce, Allreduce, Gather(v), Scatter(v),
 * Allgather(v), Alltoall(v,w), Reduce_scatter(_block), blocking and
 * nonblocking, with every root of both groups (MPI_ROOT / MPI_PROC_NULL /
 * remote rank), zero counts, a strided datatype and a non-commutative
 * operation. Every result is compared with a value computed from the world
 * ranks of the other group. Scan, Exscan and MPI_IN_PLACE must fail with
 * MPI_ERRORS_RETURN. Needs np >= 2. */
#include "px_test.h"

static int me, np, ina, lsize, rsize, lrank;
static int *rw; /* world rank of remote rank i */
static int nb;  /* use the nonblocking versions */

static int val(int world, int i) { return world * 1000 + i * 7 + 3; }

#define COLL(blocking, nonblocking, ...)                                                           \
    do {                                                                                           \
        if (nb) {                                                                                  \
            MPI_Request r_ = MPI_REQUEST_NULL;                                                     \
            PX_MPI(MPI_##nonblocking(__VA_ARGS__, &r_));                                           \
            PX_MPI(MPI_Wait(&r_, MPI_STATUS_IGNORE));                                              \
        } else {                                                                                   \
            PX_MPI(MPI_##blocking(__VA_ARGS__));                                                   \
        }                                                                                          \
    } while (0)

/* Keeps the left operand: the result of an ordered reduction is the value
 * of the group's rank 0. */
static void first_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, sizeof(int) * (size_t)*len);
}

static void test_barrier(MPI_Comm ic)
{
    /* group A's rank 0 arrives 400 ms late: nobody in group B may leave
     * before it arrived. The ranks share one monotonic clock (one host,
     * namespaces or not), so B compares its exit time with the arrival time
     * A's rank 0 sends afterwards: a rank that arrives late itself proves
     * nothing by the time it spent inside. */
    if (ina && lrank == 0)
        px_sleep_ms(400);
    double arrived = MPI_Wtime();
    if (nb) {
        MPI_Request r;
        PX_MPI(MPI_Ibarrier(ic, &r));
        PX_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        PX_MPI(MPI_Barrier(ic));
    }
    double left = MPI_Wtime();
    if (ina && lrank == 0) {
        for (int i = 0; i < rsize; i++)
            PX_MPI(MPI_Send(&arrived, 1, MPI_DOUBLE, rw[i], 77, MPI_COMM_WORLD));
    } else if (!ina) {
        double late;
        PX_MPI(
            MPI_Recv(&late, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        PX_CHECK(left >= late, "barrier left %.3f s before the last rank arrived", late - left);
    }
}

/* Roots of group `rg` (1: A) in turn. */
static void test_bcast(MPI_Comm ic, MPI_Datatype vec)
{
    int buf[16];
    for (int rootgrp = 0; rootgrp < 2; rootgrp++) {
        int rootside = (rootgrp == 1) == (ina == 1);
        int rootsize = rootside ? lsize : rsize;
        for (int r = 0; r < rootsize; r++) {
            for (int count = 0; count <= 5; count += 5) {
                int root, isroot = rootside && lrank == r;
                if (rootside)
                    root = isroot ? MPI_ROOT : MPI_PROC_NULL;
                else
                    root = r;
                int rootworld = rootside ? me : rw[r];
                for (int i = 0; i < 16; i++)
                    buf[i] = isroot ? val(me, i) : -1;
                COLL(Bcast, Ibcast, buf, count, MPI_INT, root, ic);
                for (int i = 0; i < 16; i++) {
                    int want = isroot                     ? val(me, i)
                               : (!rootside && i < count) ? val(rootworld, i)
                                                          : -1;
                    PX_CHECK(buf[i] == want, "bcast root %d/%d count %d: buf[%d] = %d, want %d",
                             rootgrp, r, count, i, buf[i], want);
                }
            }
            /* strided: 3 vectors of 2 ints every other int */
            for (int i = 0; i < 16; i++)
                buf[i] = (rootside && lrank == r) ? val(me, i) : -1;
            int root = rootside ? (lrank == r ? MPI_ROOT : MPI_PROC_NULL) : r;
            COLL(Bcast, Ibcast, buf, 2, vec, root, ic);
            if (!rootside)
                for (int i = 0; i < 16; i++) {
                    /* vec: 2 blocks of 1 int, stride 2, extent resized to 4 ints */
                    int in = i < 8 && (i % 4 == 0 || i % 4 == 2);
                    int want = in ? val(rw[r], i) : -1;
                    PX_CHECK(buf[i] == want, "bcast vec root %d: buf[%d] = %d, want %d", r, i,
                             buf[i], want);
                }
        }
    }
}

static void test_reduce(MPI_Comm ic, MPI_Op first)
{
    enum { N = 6 };
    int sbuf[N], rbuf[N];
    for (int rootgrp = 0; rootgrp < 2; rootgrp++) {
        int rootside = (rootgrp == 1) == (ina == 1);
        int rootsize = rootside ? lsize : rsize;
        for (int r = 0; r < rootsize; r++) {
            for (int o = 0; o < 2; o++) {
                MPI_Op op = o ? first : MPI_SUM;
                int isroot = rootside && lrank == r;
                int root = rootside ? (isroot ? MPI_ROOT : MPI_PROC_NULL) : r;
                for (int i = 0; i < N; i++) {
                    sbuf[i] = val(me, i);
                    rbuf[i] = -5;
                }
                COLL(Reduce, Ireduce, sbuf, rbuf, N, MPI_INT, op, root, ic);
                for (int i = 0; i < N; i++) {
                    int want = -5;
                    if (isroot) {
                        want = 0;
                        for (int k = 0; k < rsize; k++)
                            want += val(rw[k], i);
                        if (o)
                            want = val(rw[0], i);
                    }
                    PX_CHECK(rbuf[i] == want, "reduce op %d root %d/%d: rbuf[%d] = %d, want %d", o,
                             rootgrp, r, i, rbuf[i], want);
                }
            }
        }
    }
    /* zero count */
    int root = ina ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    COLL(Reduce, Ireduce, sbuf, rbuf, 0, MPI_INT, MPI_SUM, root, ic);
}

static void test_allreduce(MPI_Comm ic, MPI_Op first)
{
    enum { N = 1000 };
    static int sbuf[N], rbuf[N];
    for (int o = 0; o < 2; o++) {
        for (int i = 0; i < N; i++) {
            sbuf[i] = val(me, i);
            rbuf[i] = -5;
        }
        COLL(Allreduce, Iallreduce, sbuf, rbuf, N, MPI_INT, o ? first : MPI_SUM, ic);
        for (int i = 0; i < N; i++) {
            int want = 0;
            for (int k = 0; k < rsize; k++)
                want += val(rw[k], i);
            if (o)
                want = val(rw[0], i);
            PX_CHECK(rbuf[i] == want, "allreduce op %d: rbuf[%d] = %d, want %d", o, i, rbuf[i],
                     want);
        }
    }
    rbuf[0] = -5;
    COLL(Allreduce, Iallreduce, sbuf, rbuf, 0, MPI_INT, MPI_SUM, ic);
    PX_CHECK(rbuf[0] == -5, "allreduce count 0 wrote %d", rbuf[0]);
}

static int vcount(int remote_rank) { return remote_rank % 3; } /* zero counts included */

static void test_gather_scatter(MPI_Comm ic)
{
    enum { C = 3 };
    int sbuf[64 * C], rbuf[64 * C], counts[64], displs[64];
    for (int rootgrp = 0; rootgrp < 2; rootgrp++) {
        int rootside = (rootgrp == 1) == (ina == 1);
        int rootsize = rootside ? lsize : rsize;
        for (int r = 0; r < rootsize; r++) {
            int isroot = rootside && lrank == r;
            int root = rootside ? (isroot ? MPI_ROOT : MPI_PROC_NULL) : r;
            /* Gather */
            for (int i = 0; i < 64 * C; i++) {
                sbuf[i] = val(me, i);
                rbuf[i] = -5;
            }
            COLL(Gather, Igather, sbuf, C, MPI_INT, rbuf, C, MPI_INT, root, ic);
            if (isroot)
                for (int k = 0; k < rsize; k++)
                    for (int i = 0; i < C; i++)
                        PX_CHECK(rbuf[k * C + i] == val(rw[k], i), "gather: block %d item %d = %d",
                                 k, i, rbuf[k * C + i]);
            if (!isroot)
                PX_CHECK(rbuf[0] == -5, "gather: non-root buffer written");
            /* Gatherv: remote k sends vcount(k) items, stored in reverse order */
            int off = 0;
            for (int k = rsize - 1; k >= 0; k--) {
                counts[k] = vcount(k);
                displs[k] = off;
                off += counts[k] + 1;
            }
            for (int i = 0; i < 64 * C; i++)
                rbuf[i] = -5;
            COLL(Gatherv, Igatherv, sbuf, rootside ? 0 : vcount(lrank), MPI_INT, rbuf, counts,
                 displs, MPI_INT, root, ic);
            if (isroot)
                for (int k = 0; k < rsize; k++) {
                    for (int i = 0; i < counts[k]; i++)
                        PX_CHECK(rbuf[displs[k] + i] == val(rw[k], i),
                                 "gatherv: block %d item %d = %d", k, i, rbuf[displs[k] + i]);
                    PX_CHECK(rbuf[displs[k] + counts[k]] == -5, "gatherv: gap %d written", k);
                }
            /* Scatter: block k is for remote k */
            for (int i = 0; i < 64 * C; i++) {
                sbuf[i] = isroot ? val(me, i) : -7;
                rbuf[i] = -5;
            }
            COLL(Scatter, Iscatter, sbuf, C, MPI_INT, rbuf, C, MPI_INT, root, ic);
            for (int i = 0; i < C + 1; i++) {
                int want = (!rootside && i < C) ? val(rw[r], lrank * C + i) : -5;
                PX_CHECK(rbuf[i] == want, "scatter root %d/%d: rbuf[%d] = %d, want %d", rootgrp, r,
                         i, rbuf[i], want);
            }
            /* Scatterv with the gatherv layout */
            for (int i = 0; i < 64 * C; i++)
                rbuf[i] = -5;
            COLL(Scatterv, Iscatterv, sbuf, counts, displs, MPI_INT, rbuf,
                 rootside ? 0 : vcount(lrank), MPI_INT, root, ic);
            if (!rootside) {
                /* the root's displacements for me, computed from its view */
                int d = 0;
                for (int k = lsize - 1; k > lrank; k--)
                    d += vcount(k) + 1;
                for (int i = 0; i < vcount(lrank) + 1; i++) {
                    int want = i < vcount(lrank) ? val(rw[r], d + i) : -5;
                    PX_CHECK(rbuf[i] == want, "scatterv: rbuf[%d] = %d, want %d", i, rbuf[i], want);
                }
            }
        }
    }
}

static void test_allgather(MPI_Comm ic)
{
    enum { C = 2 };
    int sbuf[C], rbuf[64 * C + 64], counts[64], displs[64];
    for (int i = 0; i < C; i++)
        sbuf[i] = val(me, i);
    for (int i = 0; i < 64 * C + 64; i++)
        rbuf[i] = -5;
    COLL(Allgather, Iallgather, sbuf, C, MPI_INT, rbuf, C, MPI_INT, ic);
    for (int k = 0; k < rsize; k++)
        for (int i = 0; i < C; i++)
            PX_CHECK(rbuf[k * C + i] == val(rw[k], i), "allgather: block %d item %d = %d", k, i,
                     rbuf[k * C + i]);
    PX_CHECK(rbuf[rsize * C] == -5, "allgather wrote past the end");
    /* Allgatherv: remote k contributes vcount(k) items, one gap between */
    int off = 0;
    for (int k = 0; k < rsize; k++) {
        counts[k] = vcount(k);
        displs[k] = off;
        off += counts[k] + 1;
    }
    for (int i = 0; i < 64 * C + 64; i++)
        rbuf[i] = -5;
    COLL(Allgatherv, Iallgatherv, sbuf, vcount(lrank), MPI_INT, rbuf, counts, displs, MPI_INT, ic);
    for (int k = 0; k < rsize; k++) {
        for (int i = 0; i < counts[k]; i++)
            PX_CHECK(rbuf[displs[k] + i] == val(rw[k], i), "allgatherv: block %d item %d = %d", k,
                     i, rbuf[displs[k] + i]);
        PX_CHECK(rbuf[displs[k] + counts[k]] == -5, "allgatherv: gap %d written", k);
    }
    /* zero count */
    rbuf[0] = -5;
    COLL(Allgather, Iallgather, sbuf, 0, MPI_INT, rbuf, 0, MPI_INT, ic);
    PX_CHECK(rbuf[0] == -5, "allgather count 0 wrote");
}

/* Item i of the message from world rank s to world rank d. */
static int a2a(int s, int d, int i) { return s * 10000 + d * 100 + i; }
static int a2acount(int s, int d) { return (s + 2 * d) % 3; }

static void test_alltoall(MPI_Comm ic)
{
    enum { C = 3 };
    int sbuf[64 * C + 64], rbuf[64 * C + 64];
    int sc[64], sd[64], rc[64], rd[64], sdb[64], rdb[64];
    MPI_Datatype st[64], rt[64];
    /* group ranks -> world: my local rank order is world order, so my
     * world rank is what remote ranks name me by (lrank) */
    for (int k = 0; k < rsize; k++)
        for (int i = 0; i < C; i++)
            sbuf[k * C + i] = a2a(me, rw[k], i);
    for (int i = 0; i < 64 * C + 64; i++)
        rbuf[i] = -5;
    COLL(Alltoall, Ialltoall, sbuf, C, MPI_INT, rbuf, C, MPI_INT, ic);
    for (int k = 0; k < rsize; k++)
        for (int i = 0; i < C; i++)
            PX_CHECK(rbuf[k * C + i] == a2a(rw[k], me, i), "alltoall: from %d item %d = %d", k, i,
                     rbuf[k * C + i]);
    /* Alltoallv: sizes depend on both ends, receive blocks in reverse order */
    int so = 0, ro = 0;
    for (int k = 0; k < rsize; k++) {
        sc[k] = a2acount(me, rw[k]);
        sd[k] = so;
        for (int i = 0; i < sc[k]; i++)
            sbuf[so + i] = a2a(me, rw[k], i);
        so += sc[k];
    }
    for (int k = rsize - 1; k >= 0; k--) {
        rc[k] = a2acount(rw[k], me);
        rd[k] = ro;
        ro += rc[k] + 1;
    }
    for (int i = 0; i < 64 * C + 64; i++)
        rbuf[i] = -5;
    COLL(Alltoallv, Ialltoallv, sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, ic);
    for (int k = 0; k < rsize; k++) {
        for (int i = 0; i < rc[k]; i++)
            PX_CHECK(rbuf[rd[k] + i] == a2a(rw[k], me, i), "alltoallv: from %d item %d = %d", k, i,
                     rbuf[rd[k] + i]);
        PX_CHECK(rbuf[rd[k] + rc[k]] == -5, "alltoallv: gap %d written", k);
    }
    /* Alltoallw: the same layout with byte displacements, ints sent as
     * MPI_INT and received as pairs of shorts... kept to MPI_INT here */
    for (int k = 0; k < rsize; k++) {
        sdb[k] = sd[k] * (int)sizeof(int);
        rdb[k] = rd[k] * (int)sizeof(int);
        st[k] = MPI_INT;
        rt[k] = MPI_INT;
    }
    for (int i = 0; i < 64 * C + 64; i++)
        rbuf[i] = -5;
    COLL(Alltoallw, Ialltoallw, sbuf, sc, sdb, st, rbuf, rc, rdb, rt, ic);
    for (int k = 0; k < rsize; k++)
        for (int i = 0; i < rc[k]; i++)
            PX_CHECK(rbuf[rd[k] + i] == a2a(rw[k], me, i), "alltoallw: from %d item %d = %d", k, i,
                     rbuf[rd[k] + i]);
}

static void test_reduce_scatter(MPI_Comm ic)
{
    enum { T = 13 };
    int sbuf[1024], rbuf[1024], counts[64];
    int displ = 0;
    for (int i = 0; i < lsize; i++) {
        counts[i] = T / lsize + (i < T % lsize);
        if (i < lrank)
            displ += counts[i];
    }
    for (int i = 0; i < T; i++)
        sbuf[i] = val(me, i);
    for (int i = 0; i < 1024; i++)
        rbuf[i] = -5;
    COLL(Reduce_scatter, Ireduce_scatter, sbuf, rbuf, counts, MPI_INT, MPI_SUM, ic);
    for (int i = 0; i < counts[lrank] + 1; i++) {
        int want = -5;
        if (i < counts[lrank]) {
            want = 0;
            for (int k = 0; k < rsize; k++)
                want += val(rw[k], displ + i);
        }
        PX_CHECK(rbuf[i] == want, "reduce_scatter: rbuf[%d] = %d, want %d", i, rbuf[i], want);
    }
    /* block: the same total lsize * rc in both groups */
    int rc = 2 * rsize, total = rc * lsize;
    for (int i = 0; i < total; i++)
        sbuf[i] = val(me, i);
    for (int i = 0; i < 1024; i++)
        rbuf[i] = -5;
    COLL(Reduce_scatter_block, Ireduce_scatter_block, sbuf, rbuf, rc, MPI_INT, MPI_SUM, ic);
    for (int i = 0; i < rc + 1; i++) {
        int want = -5;
        if (i < rc) {
            want = 0;
            for (int k = 0; k < rsize; k++)
                want += val(rw[k], lrank * rc + i);
        }
        PX_CHECK(rbuf[i] == want, "reduce_scatter_block: rbuf[%d] = %d, want %d", i, rbuf[i], want);
    }
}

static void test_errors(MPI_Comm ic)
{
    int a = 1, b = 0, cls = 0, rc;
    rc = MPI_Scan(&a, &b, 1, MPI_INT, MPI_SUM, ic);
    MPI_Error_class(rc, &cls);
    PX_CHECK(cls == MPI_ERR_COMM, "Scan on an inter-communicator: class %d", cls);
    rc = MPI_Exscan(&a, &b, 1, MPI_INT, MPI_SUM, ic);
    MPI_Error_class(rc, &cls);
    PX_CHECK(cls == MPI_ERR_COMM, "Exscan on an inter-communicator: class %d", cls);
    MPI_Request r = MPI_REQUEST_NULL;
    rc = MPI_Iscan(&a, &b, 1, MPI_INT, MPI_SUM, ic, &r);
    MPI_Error_class(rc, &cls);
    PX_CHECK(cls == MPI_ERR_COMM, "Iscan on an inter-communicator: class %d", cls);
    /* in-place is for intra-communicators only (checked locally, no traffic) */
    rc = MPI_Allreduce(MPI_IN_PLACE, &b, 1, MPI_INT, MPI_SUM, ic);
    PX_CHECK(rc != MPI_SUCCESS, "Allreduce with MPI_IN_PLACE accepted");
    rc = MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, &b, 1, MPI_INT, ic);
    PX_CHECK(rc != MPI_SUCCESS, "Allgather with MPI_IN_PLACE accepted");
    rc = MPI_Bcast(&a, 1, MPI_INT, rsize, ic);
    MPI_Error_class(rc, &cls);
    PX_CHECK(cls == MPI_ERR_ROOT, "Bcast with root = remote size: class %d", cls);
}

/* Several nonblocking collectives in flight at once must not mix. */
static void test_overlap(MPI_Comm ic)
{
    enum { N = 64 };
    int b1[N], s2[N], r2[N], s3[N * 64], r3[N * 64];
    MPI_Request rq[3];
    for (int i = 0; i < N; i++) {
        b1[i] = ina && lrank == 0 ? val(me, i) : -1;
        s2[i] = val(me, i + 1);
    }
    for (int k = 0; k < rsize; k++)
        s3[k] = a2a(me, rw[k], 0);
    int root = ina ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    PX_MPI(MPI_Ibcast(b1, N, MPI_INT, root, ic, &rq[0]));
    PX_MPI(MPI_Iallreduce(s2, r2, N, MPI_INT, MPI_MAX, ic, &rq[1]));
    PX_MPI(MPI_Ialltoall(s3, 1, MPI_INT, r3, 1, MPI_INT, ic, &rq[2]));
    PX_MPI(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++) {
        if (!ina)
            PX_CHECK(b1[i] == val(rw[0], i), "overlap bcast [%d] = %d", i, b1[i]);
        int mx = val(rw[rsize - 1], i + 1);
        PX_CHECK(r2[i] == mx, "overlap allreduce [%d] = %d, want %d", i, r2[i], mx);
    }
    for (int k = 0; k < rsize; k++)
        PX_CHECK(r3[k] == a2a(rw[k], me, 0), "overlap alltoall from %d = %d", k, r3[k]);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "inter_coll");
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2)
        return px_test_skip("needs at least 2 ranks");
    if (np > 64)
        return px_test_skip("at most 64 ranks");
    ina = me % 3 == 0;
    MPI_Comm local, ic;
    PX_MPI(MPI_Comm_split(MPI_COMM_WORLD, ina, me, &local));
    MPI_Comm_size(local, &lsize);
    MPI_Comm_rank(local, &lrank);
    /* leaders: world 0 for group A, world 1 for group B */
    PX_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, ina ? 1 : 0, 77, &ic));
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    PX_MPI(MPI_Comm_remote_size(ic, &rsize));
    rw = malloc(sizeof(int) * (size_t)rsize);
    int k = 0;
    for (int w = 0; w < np; w++)
        if ((w % 3 == 0) != ina)
            rw[k++] = w;
    PX_REQUIRE(k == rsize, "remote size %d, expected %d", rsize, k);

    MPI_Op first;
    MPI_Op_create(first_op, 0, &first);
    MPI_Datatype v2, vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v2);
    MPI_Type_create_resized(v2, 0, 4 * (MPI_Aint)sizeof(int), &vec);
    MPI_Type_commit(&vec);

    for (nb = 0; nb < 2; nb++) {
        test_barrier(ic);
        test_bcast(ic, vec);
        test_reduce(ic, first);
        test_allreduce(ic, first);
        test_gather_scatter(ic);
        test_allgather(ic);
        test_alltoall(ic);
        test_reduce_scatter(ic);
    }
    test_overlap(ic);
    test_errors(ic);

    /* a duplicate works independently and the local group still works */
    MPI_Comm dup;
    PX_MPI(MPI_Comm_dup(ic, &dup));
    int one = me, sum = -1, want = 0, lsum = -1, lwant = 0;
    PX_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup));
    for (int i = 0; i < rsize; i++)
        want += rw[i];
    PX_CHECK(sum == want, "allreduce on the duplicate: %d, want %d", sum, want);
    PX_MPI(MPI_Allreduce(&one, &lsum, 1, MPI_INT, MPI_SUM, local));
    for (int w = 0; w < np; w++)
        if ((w % 3 == 0) == ina)
            lwant += w;
    PX_CHECK(lsum == lwant, "allreduce on the local group: %d, want %d", lsum, lwant);

    MPI_Comm_free(&dup);
    MPI_Type_free(&vec);
    MPI_Type_free(&v2);
    MPI_Op_free(&first);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    free(rw);
    return px_test_finish("groups %d+%d, 15 collectives blocking and nonblocking",
                          ina ? lsize : rsize, ina ? rsize : lsize);
}
