/* Persistent collectives on a communicator whose ranks share a machine,
 * made after its shared-memory segment is set up: barrier, broadcast of a
 * non-contiguous type, allreduce with a non-commutative operation, reduce
 * in place at the root, allgather (in place and not) and alltoall, each
 * started ROUNDS times with new data, in a different order on even and odd
 * ranks, with one rank late now and then, and completed in yet another
 * order; all data checked. Beside them, more persistent allreduces than
 * there are lanes, one too large for a lane: they go as messages and give
 * the same results. With Plexus, the tool interface's counters of the
 * "shm" algorithms show that each start of the first ones ran on the
 * segment (when blocking calls do) and the others did not. Then lanes
 * given back only once every rank has freed their requests and passed a
 * barrier (one rank keeping one request longer), writers running ahead of
 * readers, duplicates of the communicator freed and made again (the next
 * one takes over the segment and its lanes), and a request freed while
 * started. Gather, scatter and allgatherv on lanes too, with in-place
 * roots, a non-contiguous type and gaps between blocks; reduce_scatter
 * (uneven counts, the non-commutative operation, in place) and
 * reduce_scatter_block. */
#include "px_test.h"

#include <unistd.h>

enum { ROUNDS = 300, N = 16, BLK = 8, BIG = 2048, EXTRA = 3 };

static int me, np, bad;

/* the first wrong value of a kind is enough */
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        PX_CHECK(0, __VA_ARGS__);                                                                  \
        bad = 1;                                                                                   \
    } while (0)

/* affine maps x -> a x + b (mod 2^32) composed: associative, not commutative */
static void compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    unsigned *x = in, *y = inout;
    for (int i = 0; i < *len; i += 2) {
        unsigned a = x[i] * y[i], b = x[i] * y[i + 1] + x[i + 1];
        y[i] = a;
        y[i + 1] = b;
    }
}

static unsigned val(int r, int rank, int i)
{
    return (unsigned)(r * 7919 + rank * 104729 + i * 31 + 1);
}

static const char *colls[6] = {"barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall"};
static MPI_T_pvar_session ses;
static MPI_T_pvar_handle pv[6];

/* a started handle of the counter of coll's "shm" algorithm */
static void shm_pvar(const char *coll, MPI_T_pvar_handle *h)
{
    char name[64];
    int idx = -1, count = 0;
    snprintf(name, sizeof(name), "coll_%s_shm_calls", coll);
    PX_REQUIRE(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx) == MPI_SUCCESS,
               "no performance variable %s", name);
    MPI_T_pvar_handle_alloc(ses, idx, NULL, h, &count);
    MPI_T_pvar_start(ses, *h);
}

static void shm_calls(unsigned long long v[6])
{
    for (int i = 0; i < 6; i++)
        MPI_T_pvar_read(ses, pv[i], &v[i]);
}

/* Persistent requests on lanes: the counters of their collectives' "shm"
 * algorithms (read at the start), then the check that they moved by R
 * starts each (twice for the kinds in the mask doubled: they have two
 * requests; none without lanes), and the requests freed. */
enum { LANE_KINDS = 3 };
typedef struct {
    int n;
    const char *const *kinds;
    MPI_T_pvar_handle h[LANE_KINDS];
    unsigned long long v[LANE_KINDS];
} lanes_t;

static void lanes_open(lanes_t *l, int n, const char *const *kinds)
{
    l->n = n;
    l->kinds = kinds;
    for (int i = 0; i < n; i++) {
        shm_pvar(kinds[i], &l->h[i]);
        MPI_T_pvar_read(ses, l->h[i], &l->v[i]);
    }
}

static void lanes_close(lanes_t *l, int on, unsigned long long R, int doubled, int nq,
                        MPI_Request *rq)
{
    for (int i = 0; i < l->n; i++) {
        unsigned long long now, exp = on ? (doubled >> i & 1 ? 2 * R : R) : 0;
        MPI_T_pvar_read(ses, l->h[i], &now);
        PX_CHECK(now - l->v[i] == exp, "%llu starts of persistent %s on lanes, expected %llu",
                 now - l->v[i], l->kinds[i], exp);
        MPI_T_pvar_handle_free(ses, &l->h[i]);
    }
    for (int i = 0; i < nq; i++)
        PX_MPI(MPI_Request_free(&rq[i]));
    PX_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* lateness now and then, a different rank each time */
static void skew(int r)
{
    if (r % 13 == 0 && me == (r / 13) % np)
        usleep(300);
}

int main(int argc, char **argv)
{
    int provided;
    px_test_init(&argc, &argv, "coll_persist_shm");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    me = px_test_rank;
    np = px_test_size;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&ses);
    for (int i = 0; i < 6; i++)
        shm_pvar(colls[i], &pv[i]);

    /* blocking calls first (they set the segment up); do they use it? */
    unsigned long long c0[6], c1[6];
    int x = 1, sum = 0;
    PX_MPI(MPI_Barrier(MPI_COMM_WORLD));
    shm_calls(c0);
    PX_MPI(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    shm_calls(c1);
    int shm = c1[3] > c0[3];

    MPI_Op op;
    MPI_Datatype every_other;
    PX_MPI(MPI_Op_create(compose, 0, &op));
    PX_MPI(MPI_Type_vector(N, 1, 2, MPI_UNSIGNED, &every_other));
    PX_MPI(MPI_Type_commit(&every_other));
    unsigned bc[2 * N], ar_in[N], ar_out[N], red[N], ag_in[N], ag[N * 64], agp[N * 64];
    unsigned aa_in[BLK * 64], aa_out[BLK * 64];
    unsigned *big_in = malloc(sizeof(unsigned) * BIG), *big_out = malloc(sizeof(unsigned) * BIG);
    unsigned ex_in[EXTRA][N], ex_out[EXTRA][N];
    PX_REQUIRE(np <= 64, "at most 64 ranks");

    enum { BAR, BC, AR, RED, AG, AGP, AA, BIGR, EX0, NREQ = EX0 + EXTRA };
    MPI_Request q[NREQ];
    PX_MPI(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &q[BAR]));
    PX_MPI(MPI_Bcast_init(bc, 1, every_other, np - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &q[BC]));
    PX_MPI(MPI_Allreduce_init(ar_in, ar_out, N, MPI_UNSIGNED, op, MPI_COMM_WORLD, MPI_INFO_NULL,
                              &q[AR]));
    PX_MPI(MPI_Reduce_init(me == 0 ? MPI_IN_PLACE : red, red, N, MPI_UNSIGNED, MPI_SUM, 0,
                           MPI_COMM_WORLD, MPI_INFO_NULL, &q[RED]));
    PX_MPI(MPI_Allgather_init(ag_in, N, MPI_UNSIGNED, ag, N, MPI_UNSIGNED, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &q[AG]));
    PX_MPI(MPI_Allgather_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, agp, N, MPI_UNSIGNED,
                              MPI_COMM_WORLD, MPI_INFO_NULL, &q[AGP]));
    PX_MPI(MPI_Alltoall_init(aa_in, BLK, MPI_UNSIGNED, aa_out, BLK, MPI_UNSIGNED, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &q[AA]));
    PX_MPI(MPI_Allreduce_init(big_in, big_out, BIG, MPI_UNSIGNED, MPI_SUM, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &q[BIGR]));
    for (int e = 0; e < EXTRA; e++)
        PX_MPI(MPI_Allreduce_init(ex_in[e], ex_out[e], N, MPI_UNSIGNED, MPI_SUM, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, &q[EX0 + e]));
    /* the program may free its handles at once: the requests keep theirs */
    PX_MPI(MPI_Op_free(&op));
    PX_MPI(MPI_Type_free(&every_other));

    shm_calls(c0);
    for (int r = 0; r < ROUNDS && !bad; r++) {
        for (int i = 0; i < N; i++) {
            bc[2 * i] = me == np - 1 ? val(r, np - 1, i) : 0;
            bc[2 * i + 1] = 0xdead0000u + (unsigned)i; /* not in the type: stays */
            ar_in[i] = i % 2 ? val(r, me, i) : (val(r, me, i) | 1u);
            red[i] = val(r, me, i);
            ag_in[i] = val(r, me, i) ^ 0x55u;
            agp[me * N + i] = val(r, me, i) ^ 0xaau;
            for (int e = 0; e < EXTRA; e++)
                ex_in[e][i] = val(r + e, me, i);
        }
        for (int p = 0; p < np; p++)
            for (int i = 0; i < BLK; i++)
                aa_in[p * BLK + i] = val(r, me, p * BLK + i);
        for (int i = 0; i < BIG; i++)
            big_in[i] = val(r, me, i);
        skew(r);
        /* even ranks start in one order, odd ranks in the reverse, every
         * third round all at once; completed in a third order */
        if (r % 3 == 2) {
            PX_MPI(MPI_Startall(NREQ, q));
        } else {
            for (int k = 0; k < NREQ; k++)
                PX_MPI(MPI_Start(&q[me % 2 ? NREQ - 1 - k : k]));
        }
        for (int k = 0; k < NREQ; k++)
            PX_MPI(MPI_Wait(&q[(k * 5 + r) % NREQ], MPI_STATUS_IGNORE));

        for (int i = 0; i < N && !bad; i++) {
            if (bc[2 * i] != val(r, np - 1, i) || bc[2 * i + 1] != 0xdead0000u + (unsigned)i)
                FAIL("round %d bcast [%d] = %u %x", r, i, bc[2 * i], bc[2 * i + 1]);
        }
        for (int i = 0; i < N && !bad; i += 2) { /* x_0 o x_1 o ... o x_(n-1) */
            unsigned a = 1, b = 0;
            for (int p = np - 1; p >= 0; p--) {
                unsigned pa = val(r, p, i) | 1u, pb = val(r, p, i + 1);
                b = pa * b + pb;
                a = pa * a;
            }
            if (ar_out[i] != a || ar_out[i + 1] != b)
                FAIL("round %d allreduce [%d] = %u %u, expected %u %u", r, i, ar_out[i],
                     ar_out[i + 1], a, b);
        }
        for (int i = 0; i < N && me == 0 && !bad; i++) {
            unsigned e = 0;
            for (int p = 0; p < np; p++)
                e += val(r, p, i);
            if (red[i] != e)
                FAIL("round %d reduce [%d] = %u, expected %u", r, i, red[i], e);
        }
        for (int p = 0; p < np && !bad; p++)
            for (int i = 0; i < N && !bad; i++)
                if (ag[p * N + i] != (val(r, p, i) ^ 0x55u) ||
                    agp[p * N + i] != (val(r, p, i) ^ 0xaau))
                    FAIL("round %d allgather from %d [%d] = %u %u", r, p, i, ag[p * N + i],
                         agp[p * N + i]);
        for (int p = 0; p < np && !bad; p++)
            for (int i = 0; i < BLK && !bad; i++)
                if (aa_out[p * BLK + i] != val(r, p, me * BLK + i))
                    FAIL("round %d alltoall from %d [%d] = %u", r, p, i, aa_out[p * BLK + i]);
        for (int i = 0; i < BIG && !bad; i += 97) {
            unsigned e = 0;
            for (int p = 0; p < np; p++)
                e += val(r, p, i);
            if (big_out[i] != e)
                FAIL("round %d large allreduce [%d] = %u", r, i, big_out[i]);
        }
        for (int e = 0; e < EXTRA && !bad; e++)
            for (int i = 0; i < N && !bad; i++) {
                unsigned s = 0;
                for (int p = 0; p < np; p++)
                    s += val(r + e, p, i);
                if (ex_out[e][i] != s)
                    FAIL("round %d allreduce %d [%d] = %u", r, e, i, ex_out[e][i]);
            }
    }
    shm_calls(c1);
    /* seven requests on lanes; the large allreduce and those beyond the
     * lanes as messages */
    const unsigned long long want[6] = {1, 1, 1, 1, 2, 1};
    for (int i = 0; i < 6; i++) {
        unsigned long long got = c1[i] - c0[i], exp = shm && np > 1 ? want[i] * ROUNDS : 0;
        PX_CHECK(got == exp, "%llu starts of persistent %s on shared memory, expected %llu", got,
                 colls[i], exp);
    }
    for (int k = 0; k < NREQ; k++)
        PX_MPI(MPI_Request_free(&q[k]));

    /* lanes come back once every rank has freed their requests and passed
     * a barrier: eight new requests get lanes; rank 0 keeps one of them
     * past the next barrier, so of eight more only seven get lanes, the
     * same on every rank; once it has freed it too and a barrier passed,
     * eight get lanes again */
    PX_MPI(MPI_Barrier(MPI_COMM_WORLD));
    {
        enum { L = 8, R = 20 };
        MPI_Request lr[L], kept = MPI_REQUEST_NULL;
        unsigned in[L][N], out[L][N];
        for (int phase = 0; phase < 3; phase++) {
            for (int j = 0; j < L; j++)
                PX_MPI(MPI_Allreduce_init(in[j], out[j], N, MPI_UNSIGNED, MPI_SUM, MPI_COMM_WORLD,
                                          MPI_INFO_NULL, &lr[j]));
            shm_calls(c0);
            for (int r = 0; r < R && !bad; r++) {
                for (int j = 0; j < L; j++)
                    for (int i = 0; i < N; i++)
                        in[j][i] = val(r + j, me, i);
                for (int j = 0; j < L; j++)
                    PX_MPI(MPI_Start(&lr[me % 2 ? L - 1 - j : j]));
                PX_MPI(MPI_Waitall(L, lr, MPI_STATUSES_IGNORE));
                for (int j = 0; j < L && !bad; j++)
                    for (int i = 0; i < N && !bad; i++) {
                        unsigned e = 0;
                        for (int p = 0; p < np; p++)
                            e += val(r + j, p, i);
                        if (out[j][i] != e)
                            FAIL("lanes again, phase %d request %d [%d] = %u", phase, j, i,
                                 out[j][i]);
                    }
            }
            shm_calls(c1);
            unsigned long long exp = !shm || np < 2 ? 0 : (phase == 1 ? L - 1 : L) * R;
            PX_CHECK(c1[3] - c0[3] == exp,
                     "lanes again, phase %d: %llu starts on lanes, expected %llu", phase,
                     c1[3] - c0[3], exp);
            for (int j = 0; j < L; j++) {
                if (phase == 0 && j == 0 && me == 0)
                    kept = lr[0]; /* freed after the next phase */
                else
                    PX_MPI(MPI_Request_free(&lr[j]));
            }
            if (phase == 1 && me == 0)
                PX_MPI(MPI_Request_free(&kept));
            PX_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
    }

    /* a gather (in place at its root, a non-contiguous receive type), a
     * scatter (in place at its root) and an allgatherv with a different
     * count per rank and gaps between the blocks (also its large-count
     * form, whose start passes counts that do not outlive the call), on
     * lanes of their own, started in reverse orders on odd ranks, a root
     * late now and then */
    {
        enum { G, S, V, NR, VC = NR, NQ, R = 100, GAP = 2 };
        static const char *rooted[NR] = {"gather", "scatter", "allgatherv"};
        lanes_t lanes;
        lanes_open(&lanes, NR, rooted);
        int groot = np - 1, sroot = 0, vc[64], vd[64], vtot = 0;
        MPI_Count vcc[64];
        MPI_Aint vdc[64];
        for (int p = 0; p < np; p++) {
            vcc[p] = vc[p] = 1 + (p % 3) * 3;
            vdc[p] = vd[p] = vtot;
            vtot += vc[p] + GAP;
        }
        MPI_Datatype vec, evens;
        PX_MPI(MPI_Type_vector(BLK, 1, 2, MPI_UNSIGNED, &vec));
        PX_MPI(MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * BLK * sizeof(unsigned)), &evens));
        PX_MPI(MPI_Type_commit(&evens));
        PX_MPI(MPI_Type_free(&vec));
        unsigned gin[BLK], gall[2 * BLK * 64], sall[BLK * 64], sout[BLK], vin[8], vall[12 * 64];
        unsigned vallc[12 * 64];
        MPI_Request rq[NQ];
        PX_MPI(MPI_Gather_init(me == groot ? MPI_IN_PLACE : gin, BLK, MPI_UNSIGNED, gall, 1, evens,
                               groot, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[G]));
        PX_MPI(MPI_Scatter_init(sall, BLK, MPI_UNSIGNED, me == sroot ? MPI_IN_PLACE : sout, BLK,
                                MPI_UNSIGNED, sroot, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[S]));
        PX_MPI(MPI_Allgatherv_init(vin, vc[me], MPI_UNSIGNED, vall, vc, vd, MPI_UNSIGNED,
                                   MPI_COMM_WORLD, MPI_INFO_NULL, &rq[V]));
        PX_MPI(MPI_Allgatherv_init_c(vin, vcc[me], MPI_UNSIGNED, vallc, vcc, vdc, MPI_UNSIGNED,
                                     MPI_COMM_WORLD, MPI_INFO_NULL, &rq[VC]));
        PX_MPI(MPI_Type_free(&evens));
        for (int r = 0; r < R && !bad; r++) {
            for (int i = 0; i < 2 * BLK * np; i++)
                gall[i] = i % 2 ? 0xfeed0000u + (unsigned)i : 0;
            for (int i = 0; i < BLK; i++) {
                gin[i] = val(r, me, i) ^ 0x33u;
                if (me == groot)
                    gall[2 * (me * BLK + i)] = gin[i];
                sout[i] = 0;
            }
            for (int i = 0; i < BLK * np; i++)
                sall[i] = me == sroot ? val(r, i / BLK, i) ^ 0x77u : 0;
            for (int i = 0; i < vtot; i++)
                vallc[i] = vall[i] = 0xbeef0000u + (unsigned)i;
            for (int i = 0; i < vc[me]; i++)
                vin[i] = val(r, me, 100 + i);
            if (r % 7 == 0 && (me == groot || me == sroot))
                usleep(200);
            for (int k = 0; k < NQ; k++)
                PX_MPI(MPI_Start(&rq[me % 2 ? NQ - 1 - k : k]));
            PX_MPI(MPI_Waitall(NQ, rq, MPI_STATUSES_IGNORE));
            for (int i = 0; i < 2 * BLK * np && me == groot && !bad; i++) {
                unsigned e =
                    i % 2 ? 0xfeed0000u + (unsigned)i : val(r, i / 2 / BLK, i / 2 % BLK) ^ 0x33u;
                if (gall[i] != e)
                    FAIL("round %d gather [%d] = %x, expected %x", r, i, gall[i], e);
            }
            unsigned *mine = me == sroot ? sall + me * BLK : sout;
            for (int i = 0; i < BLK && !bad; i++)
                if (mine[i] != (val(r, me, me * BLK + i) ^ 0x77u))
                    FAIL("round %d scatter [%d] = %x", r, i, mine[i]);
            for (int p = 0; p < np && !bad; p++)
                for (int i = 0; i < vc[p] + GAP && !bad; i++) {
                    unsigned e =
                        i < vc[p] ? val(r, p, 100 + i) : 0xbeef0000u + (unsigned)(vd[p] + i);
                    if (vall[vd[p] + i] != e || vallc[vd[p] + i] != e)
                        FAIL("round %d allgatherv from %d [%d] = %x, large-count %x, expected %x",
                             r, p, i, vall[vd[p] + i], vallc[vd[p] + i], e);
                }
        }
        lanes_close(&lanes, shm && np > 1, R, 1 << V, NQ, rq);
    }

    /* reduce_scatter with a different count per rank and the
     * non-commutative operation (in place on odd ranks), its large-count
     * form (whose start passes counts that do not outlive the call) and
     * reduce_scatter_block, on lanes of their own, started in reverse
     * orders on odd ranks, a rank late now and then */
    {
        enum { RS, RB, NR, RSC = NR, NQ, R = 100 };
        static const char *kinds[NR] = {"reduce_scatter", "reduce_scatter_block"};
        lanes_t lanes;
        lanes_open(&lanes, NR, kinds);
        int rc[64], tot = 0, at = 0;
        MPI_Count rcc[64];
        for (int p = 0; p < np; p++) {
            rcc[p] = rc[p] = 2 * (p % 3); /* pairs: the operation works on maps */
            at += p < me ? rc[p] : 0;
            tot += rc[p];
        }
        unsigned in[64 * 4 + 2], out[64 * 4 + 2], inc[64 * 4 + 2], outc[64 * 4 + 2];
        unsigned bin[BLK * 64], bout[BLK];
        MPI_Request rq[NQ];
        int odd = me % 2;
        MPI_Op cop; /* freed once the requests hold it */
        PX_MPI(MPI_Op_create(compose, 0, &cop));
        PX_MPI(MPI_Reduce_scatter_init(odd ? MPI_IN_PLACE : in, odd ? in : out, rc, MPI_UNSIGNED,
                                       cop, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[RS]));
        PX_MPI(MPI_Reduce_scatter_block_init(bin, bout, BLK, MPI_UNSIGNED, MPI_SUM, MPI_COMM_WORLD,
                                             MPI_INFO_NULL, &rq[RB]));
        PX_MPI(MPI_Reduce_scatter_init_c(inc, outc, rcc, MPI_UNSIGNED, cop, MPI_COMM_WORLD,
                                         MPI_INFO_NULL, &rq[RSC]));
        PX_MPI(MPI_Op_free(&cop));
        for (int r = 0; r < R && !bad; r++) {
            for (int i = 0; i < tot; i++)
                inc[i] = in[i] = val(r, me, i) | (i % 2 ? 0 : 1u); /* odd factors */
            for (int i = 0; i < tot + 2; i++)
                outc[i] = out[i] = 0xabcd0000u + (unsigned)i;
            for (int i = 0; i < BLK * np; i++)
                bin[i] = val(r, me, 7 * i);
            skew(r);
            for (int k = 0; k < NQ; k++)
                PX_MPI(MPI_Start(&rq[odd ? NQ - 1 - k : k]));
            PX_MPI(MPI_Waitall(NQ, rq, MPI_STATUSES_IGNORE));
            const unsigned *res = odd ? in : out;
            for (int i = 0; i < rc[me] && !bad; i += 2) {
                unsigned e[2] = {1, 0}; /* the identity map, composed from the right */
                for (int p = np - 1; p >= 0; p--) {
                    unsigned x[2] = {val(r, p, at + i) | 1u, val(r, p, at + i + 1)};
                    int len = 2;
                    compose(x, e, &len, NULL);
                }
                if (res[i] != e[0] || res[i + 1] != e[1] || outc[i] != e[0] || outc[i + 1] != e[1])
                    FAIL("round %d reduce_scatter [%d] = %x %x, large-count %x %x, expected %x %x",
                         r, i, res[i], res[i + 1], outc[i], outc[i + 1], e[0], e[1]);
            }
            if (!odd && (out[rc[me]] != 0xabcd0000u + (unsigned)rc[me] ||
                         outc[rc[me]] != 0xabcd0000u + (unsigned)rc[me]))
                FAIL("round %d reduce_scatter wrote past its part", r);
            for (int i = 0; i < BLK && !bad; i++) {
                unsigned e = 0;
                for (int p = 0; p < np; p++)
                    e += val(r, p, 7 * (me * BLK + i));
                if (bout[i] != e)
                    FAIL("round %d reduce_scatter_block [%d] = %u, expected %u", r, i, bout[i], e);
            }
        }
        lanes_close(&lanes, shm && np > 1, R, 1 << RS, NQ, rq);
    }

    /* gatherv, scatterv and alltoallv whose blocks are some small (through
     * the lane's slots), some larger than a 4 KB slot (BIGV) or than its
     * n-th (MED: through the slot for the gatherv, whose blocks each have
     * a slot), as messages beside them, and some empty, the gatherv in place at its
     * root, a non-contiguous receive type for the scatterv, started in
     * reverse orders on odd ranks, a rank late now and then; beside them
     * each in its large-count form, on lanes of their own */
    {
        enum { GV, SV, AV, NR, GVC = NR, SVC, AVC, NQ, R = 60, BIGV = 1100, MED = 700 };
        static const char *kinds[NR] = {"gatherv", "scatterv", "alltoallv"};
        lanes_t lanes;
        lanes_open(&lanes, NR, kinds);
        int groot = np / 2, sroot = np - 1, gc[64], gd[64], gtot = 0, sc[64], sd[64], stot = 0;
        int ac[64], ad[64], rcv[64], rd[64], atot = 0, rtot = 0;
        MPI_Count acc[64], rcc[64], gcc[64], scc[64];
        MPI_Aint adc[64], rdc[64], gdc[64], sdc[64];
        for (int p = 0; p < np; p++) {
            gcc[p] = gc[p] = p % 4 == 1 ? BIGV : p % 4 == 2 ? 0 : p % 4 == 3 ? MED : 2 + p;
            gdc[p] = gd[p] = gtot;
            gtot += gc[p] + 1;
            scc[p] = sc[p] = p % 3 == 1 ? BIGV : p % 3 == 2 ? MED : 1 + p % 5; /* scatterv */
            sdc[p] = sd[p] = stot;
            stot += sc[p] + 1;
        }
#define A2A(p, q)                                                                                  \
    (((p) + 2 * (q)) % 4 == 1 ? BIGV : ((p) + 2 * (q)) % 4 == 3 ? MED : ((p) + (q)) % 5)
        for (int p = 0; p < np; p++) {
            acc[p] = ac[p] = A2A(me, p);
            adc[p] = ad[p] = atot;
            atot += ac[p] + 1;
            rcc[p] = rcv[p] = A2A(p, me);
            rdc[p] = rd[p] = rtot;
            rtot += rcv[p] + 1;
        }
        MPI_Datatype vec, evens; /* every other unsigned */
        PX_MPI(MPI_Type_vector(BIGV, 1, 2, MPI_UNSIGNED, &vec));
        PX_MPI(MPI_Type_create_resized(vec, 0, (MPI_Aint)sizeof(unsigned), &evens));
        PX_MPI(MPI_Type_commit(&evens));
        PX_MPI(MPI_Type_free(&vec));
        unsigned *gin = malloc(sizeof(unsigned) * BIGV), *gall = malloc(sizeof(unsigned) * gtot);
        unsigned *gallc = malloc(sizeof(unsigned) * gtot);
        unsigned *sall = malloc(sizeof(unsigned) * stot),
                 *sout = malloc(sizeof(unsigned) * 2 * BIGV);
        unsigned *soutc = malloc(sizeof(unsigned) * 2 * BIGV);
        unsigned *ain = malloc(sizeof(unsigned) * atot), *aout = malloc(sizeof(unsigned) * rtot);
        unsigned *aoutc = malloc(sizeof(unsigned) * rtot);
        /* the scatterv's block arrives as every other unsigned of sout:
         * one item of a vector of BIGV, or of the small count as single
         * unsigneds; its receive count and type match its block's size */
        int sbig = sc[me] == BIGV;
        MPI_Request rq[NQ];
        PX_MPI(MPI_Gatherv_init(me == groot ? MPI_IN_PLACE : gin, gc[me], MPI_UNSIGNED, gall, gc,
                                gd, MPI_UNSIGNED, groot, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[GV]));
        PX_MPI(MPI_Scatterv_init(sall, sc, sd, MPI_UNSIGNED, sout, sbig ? 1 : sc[me],
                                 sbig ? evens : MPI_UNSIGNED, sroot, MPI_COMM_WORLD, MPI_INFO_NULL,
                                 &rq[SV]));
        PX_MPI(MPI_Alltoallv_init(ain, ac, ad, MPI_UNSIGNED, aout, rcv, rd, MPI_UNSIGNED,
                                  MPI_COMM_WORLD, MPI_INFO_NULL, &rq[AV]));
        PX_MPI(MPI_Alltoallv_init_c(ain, acc, adc, MPI_UNSIGNED, aoutc, rcc, rdc, MPI_UNSIGNED,
                                    MPI_COMM_WORLD, MPI_INFO_NULL, &rq[AVC]));
        /* the large-count gatherv's root gives its own block in place too:
         * it is copied into gallc before each start */
        PX_MPI(MPI_Gatherv_init_c(me == groot ? MPI_IN_PLACE : gin, gc[me], MPI_UNSIGNED, gallc,
                                  gcc, gdc, MPI_UNSIGNED, groot, MPI_COMM_WORLD, MPI_INFO_NULL,
                                  &rq[GVC]));
        PX_MPI(MPI_Scatterv_init_c(sall, scc, sdc, MPI_UNSIGNED, soutc, sbig ? 1 : sc[me],
                                   sbig ? evens : MPI_UNSIGNED, sroot, MPI_COMM_WORLD,
                                   MPI_INFO_NULL, &rq[SVC]));
        PX_MPI(MPI_Type_free(&evens));
        for (int r = 0; r < R && !bad; r++) {
            for (int i = 0; i < gtot; i++)
                gallc[i] = gall[i] = 0xfeed0000u + (unsigned)i;
            for (int i = 0; i < gc[me]; i++) {
                gin[i] = val(r, me, i) ^ 0x33u;
                if (me == groot)
                    gallc[gd[me] + i] = gall[gd[me] + i] = gin[i];
            }
            for (int i = 0; i < stot; i++)
                sall[i] = me == sroot ? val(r, 1000, i) : 0;
            for (int i = 0; i < 2 * BIGV; i++)
                soutc[i] = sout[i] = 0xdead0000u + (unsigned)i;
            for (int i = 0; i < atot; i++)
                ain[i] = val(r, me, 3 * i);
            for (int i = 0; i < rtot; i++)
                aoutc[i] = aout[i] = 0xbeef0000u + (unsigned)i;
            skew(r);
            for (int k = 0; k < NQ; k++)
                PX_MPI(MPI_Start(&rq[me % 2 ? NQ - 1 - k : k]));
            PX_MPI(MPI_Waitall(NQ, rq, MPI_STATUSES_IGNORE));
            for (int p = 0; p < np && me == groot && !bad; p++)
                for (int i = 0; i <= gc[p] && !bad; i++) { /* and the gap after the block */
                    unsigned e =
                        i < gc[p] ? val(r, p, i) ^ 0x33u : 0xfeed0000u + (unsigned)(gd[p] + i);
                    if (gall[gd[p] + i] != e || gallc[gd[p] + i] != e)
                        FAIL("round %d gatherv from %d [%d] = %x, large-count %x, expected %x", r,
                             p, i, gall[gd[p] + i], gallc[gd[p] + i], e);
                }
            for (int i = 0; i < 2 * BIGV && !bad; i++) {
                int j = sbig ? i / 2 : i; /* the item of the block at i, if any */
                int has = sbig ? i % 2 == 0 : i < sc[me];
                unsigned e = has ? val(r, 1000, sd[me] + j) : 0xdead0000u + (unsigned)i;
                if (sout[i] != e || soutc[i] != e)
                    FAIL("round %d scatterv [%d] = %x, large-count %x, expected %x", r, i, sout[i],
                         soutc[i], e);
            }
            for (int p = 0; p < np && !bad; p++)
                for (int i = 0; i <= rcv[p] && !bad; i++) {
                    int sat = 0; /* where rank p's block for me starts in its send buffer */
                    for (int q = 0; q < me; q++)
                        sat += A2A(p, q) + 1;
                    unsigned e =
                        i < rcv[p] ? val(r, p, 3 * (sat + i)) : 0xbeef0000u + (unsigned)(rd[p] + i);
                    if (aout[rd[p] + i] != e || aoutc[rd[p] + i] != e)
                        FAIL("round %d alltoallv from %d [%d] = %x, large-count %x, expected %x", r,
                             p, i, aout[rd[p] + i], aoutc[rd[p] + i], e);
                }
        }
#undef A2A
        free(gin);
        free(gall);
        free(gallc);
        free(sall);
        free(sout);
        free(soutc);
        free(ain);
        free(aout);
        free(aoutc);
        lanes_close(&lanes, shm && np > 1, R, 1 << GV | 1 << SV | 1 << AV, NQ, rq);
    }

    /* ranks that only write (a broadcast's root, a reduction's leaves)
     * finish each start at once and may run ahead: they must not write a
     * slot again before every rank has read it */
    {
        MPI_Comm dup;
        MPI_Request b, rd;
        unsigned rv[N];
        PX_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        PX_MPI(MPI_Barrier(dup));
        PX_MPI(MPI_Bcast_init(ex_in[1], N, MPI_UNSIGNED, 0, dup, MPI_INFO_NULL, &b));
        PX_MPI(MPI_Reduce_init(ex_in[2], rv, N, MPI_UNSIGNED, MPI_SUM, 0, dup, MPI_INFO_NULL, &rd));
        for (int r = 0; r < 2 * ROUNDS && !bad; r++) { /* broadcasts, then reductions */
            int red = r >= ROUNDS;
            for (int i = 0; i < N; i++) {
                ex_in[1][i] = me == 0 ? val(r, 0, i) : 0;
                ex_in[2][i] = val(r, me, i);
            }
            if (r % 7 == 0 && me == (r / 7) % np) /* a reader or the root late */
                usleep(200);
            PX_MPI(MPI_Start(red ? &rd : &b));
            PX_MPI(MPI_Wait(red ? &rd : &b, MPI_STATUS_IGNORE));
            for (int i = 0; i < N && !bad; i++) {
                unsigned e = 0;
                for (int p = 0; p < np; p++)
                    e += val(r, p, i);
                if (red ? me == 0 && rv[i] != e : ex_in[1][i] != val(r, 0, i))
                    FAIL("run-ahead round %d [%d]: bcast %u, reduce %u", r, i, ex_in[1][i], rv[i]);
            }
        }
        PX_MPI(MPI_Request_free(&b));
        PX_MPI(MPI_Request_free(&rd));
        PX_MPI(MPI_Comm_free(&dup));
    }

    /* duplicates made and freed in turn: each takes the last one's segment
     * over, with lanes for its own persistent requests */
    for (int d = 0; d < 10; d++) {
        MPI_Comm dup;
        MPI_Request ar;
        PX_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        PX_MPI(MPI_Barrier(dup));
        PX_MPI(MPI_Allreduce_init(ex_in[0], ex_out[0], N, MPI_UNSIGNED, MPI_SUM, dup, MPI_INFO_NULL,
                                  &ar));
        shm_calls(c0);
        for (int r = 0; r < 20 && !bad; r++) {
            for (int i = 0; i < N; i++)
                ex_in[0][i] = val(r + d, me, i);
            skew(r);
            PX_MPI(MPI_Start(&ar));
            PX_MPI(MPI_Wait(&ar, MPI_STATUS_IGNORE));
            for (int i = 0; i < N && !bad; i++) {
                unsigned s = 0;
                for (int p = 0; p < np; p++)
                    s += val(r + d, p, i);
                if (ex_out[0][i] != s)
                    FAIL("duplicate %d round %d [%d] = %u", d, r, i, ex_out[0][i]);
            }
        }
        shm_calls(c1);
        PX_CHECK(c1[3] - c0[3] == (shm && np > 1 ? 20u : 0u),
                 "duplicate %d: %llu persistent allreduces on shared memory", d, c1[3] - c0[3]);
        /* freed while started: it ends first */
        PX_MPI(MPI_Start(&ar));
        PX_MPI(MPI_Request_free(&ar));
        PX_MPI(MPI_Comm_free(&dup));
    }
    PX_MPI(MPI_Barrier(MPI_COMM_WORLD));
    free(big_in);
    free(big_out);
    for (int i = 0; i < 6; i++)
        MPI_T_pvar_handle_free(ses, &pv[i]);
    MPI_T_pvar_session_free(&ses);
    MPI_T_finalize();
    return px_test_finish(
        "%d rounds of %d persistent collectives started in rank-dependent orders%s", ROUNDS, NREQ,
        shm ? ", 7 on shared-memory lanes; then 10 more on lanes (rooted, v, reduce_scatter)" : "");
}
