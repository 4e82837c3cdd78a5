/* One-sided atomics, derived datatypes and request-based operations:
 * - every rank accumulates into one location of rank 0 at once (the exact
 *   sum, int and double), MINLOC on MPI_2INT, MAXLOC on MPI_SHORT_INT
 *   (whose gap is never written), and replaces through a strided type;
 * - MPI_Fetch_and_op as a ticket counter: every ticket handed out once;
 * - MPI_Compare_and_swap as a lock around a get/put read-modify-write
 *   counter: it ends at the exact count;
 * - MPI_Get_accumulate with MPI_REPLACE (swap) and MPI_NO_OP (atomic read);
 * - put, get and accumulate between a strided origin and an indexed target;
 * - MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate in a lock_all
 *   epoch, with flush_local and flush. */
#include <stddef.h>

#include "px_test.h"

enum { SLOTS = 64 };
/* rank 0's window: [0] int sum, [1] ticket, [2] lock, [3] guarded counter,
 * [4..5] minloc pair, [16..17] a double, [32..] per-rank slots */
static int *mem;
static MPI_Win win;

static void accumulate_all(void)
{
    int me = px_test_rank, np = px_test_size;
    enum { REPS = 300 };
    /* origin buffers stay untouched until the epoch ends */
    static int v;
    static double d;
    static int pair[2];
    v = me + 1;
    d = 0.5 * (me + 1);
    pair[0] = 1000 - me;
    pair[1] = me;
    PX_MPI(MPI_Win_lock_all(0, win));
    for (int k = 0; k < REPS; k++) {
        PX_MPI(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
        PX_MPI(MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, 16, 1, MPI_DOUBLE, MPI_SUM, win));
        if (k % 50 == 0)
            PX_MPI(MPI_Win_flush(0, win));
    }
    PX_MPI(MPI_Accumulate(pair, 1, MPI_2INT, 0, 4, 1, MPI_2INT, MPI_MINLOC, win));
    PX_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        double *dd = (double *)(mem + 16);
        PX_CHECK(mem[0] == REPS * np * (np + 1) / 2, "int sum %d, want %d", mem[0],
                 REPS * np * (np + 1) / 2);
        PX_CHECK(*dd == REPS * 0.5 * np * (np + 1) / 2, "double sum %g, want %g", *dd,
                 REPS * 0.5 * np * (np + 1) / 2);
        PX_CHECK(mem[4] == 1000 - (np - 1) && mem[5] == np - 1, "minloc (%d, %d)", mem[4], mem[5]);
    }
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static void tickets(void)
{
    int me = px_test_rank, np = px_test_size;
    enum { T = 100 };
    int mine[T], one = 1;
    PX_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    for (int k = 0; k < T; k++) {
        PX_MPI(MPI_Fetch_and_op(&one, &mine[k], MPI_INT, 0, 1, MPI_SUM, win));
        PX_MPI(MPI_Win_flush(0, win));
    }
    PX_MPI(MPI_Win_unlock(0, win));
    int *all = malloc(sizeof(int) * T * (size_t)np);
    MPI_Allgather(mine, T, MPI_INT, all, T, MPI_INT, MPI_COMM_WORLD);
    qsort(all, (size_t)T * (size_t)np, sizeof(int), cmp_int);
    int bad = 0;
    for (int i = 0; i < T * np; i++)
        bad += all[i] != i;
    PX_CHECK(!bad, "fetch_and_op tickets: %d not handed out exactly once", bad);
    free(all);
    (void)me;
}

static void cas_lock(void)
{
    int me = px_test_rank, np = px_test_size;
    enum { R = 40 };
    PX_MPI(MPI_Win_lock_all(0, win));
    for (int k = 0; k < R; k++) {
        int zero = 0, id = me + 1, prev = -1;
        do {
            PX_MPI(MPI_Compare_and_swap(&id, &zero, &prev, MPI_INT, 0, 2, win));
            PX_MPI(MPI_Win_flush(0, win));
        } while (prev != 0);
        int c;
        PX_MPI(MPI_Get(&c, 1, MPI_INT, 0, 3, 1, MPI_INT, win));
        PX_MPI(MPI_Win_flush(0, win));
        c++;
        PX_MPI(MPI_Put(&c, 1, MPI_INT, 0, 3, 1, MPI_INT, win));
        PX_MPI(MPI_Win_flush(0, win));
        int old;
        PX_MPI(MPI_Fetch_and_op(&zero, &old, MPI_INT, 0, 2, MPI_REPLACE, win));
        PX_MPI(MPI_Win_flush(0, win));
        PX_CHECK(old == id, "lock word %d while held by %d", old, id);
    }
    PX_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        PX_CHECK(mem[3] == R * np, "counter under the CAS lock %d, want %d", mem[3], R * np);
}

static void swap_and_read(void)
{
    int me = px_test_rank, np = px_test_size, right = (me + 1) % np;
    int slot = 32 + me, v = 100 + me, old = -1, now = -1;
    for (int i = 0; i < SLOTS - 32; i++)
        mem[32 + i] = 7;
    MPI_Barrier(MPI_COMM_WORLD);
    PX_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    PX_MPI(MPI_Get_accumulate(&v, 1, MPI_INT, &old, 1, MPI_INT, right, slot, 1, MPI_INT,
                              MPI_REPLACE, win));
    PX_MPI(MPI_Win_flush(right, win));
    PX_MPI(MPI_Get_accumulate(NULL, 0, MPI_INT, &now, 1, MPI_INT, right, slot, 1, MPI_INT,
                              MPI_NO_OP, win));
    PX_MPI(MPI_Win_unlock(right, win));
    PX_CHECK(old == 7 && now == v, "swap returned %d then read %d, want 7 then %d", old, now, v);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* origin: every other int of 2N; target: blocks of 1, 2, 3, ... ints with
 * one-int gaps, starting after a zero-length block. */
static void datatypes(void)
{
    int me = px_test_rank, np = px_test_size, right = (me + 1) % np, left = (me + np - 1) % np;
    enum { N = 2000, NB = 62 }; /* 1 + 2 + ... + 62 = 1953 */
    int total = NB * (NB + 1) / 2;
    int blen[NB + 1], bdisp[NB + 1], at = 0;
    blen[0] = 0, bdisp[0] = 0;
    for (int b = 1; b <= NB; b++) {
        blen[b] = b;
        bdisp[b] = at;
        at += b + 1;
    }
    MPI_Datatype strided, indexed;
    PX_MPI(MPI_Type_vector(total, 1, 2, MPI_INT, &strided));
    PX_MPI(MPI_Type_indexed(NB + 1, blen, bdisp, MPI_INT, &indexed));
    PX_MPI(MPI_Type_commit(&strided));
    PX_MPI(MPI_Type_commit(&indexed));
    int span = at;
    int *buf = malloc(sizeof(int) * 2 * N);
    int *wmem;
    MPI_Win w;
    PX_MPI(MPI_Win_allocate((MPI_Aint)sizeof(int) * span, sizeof(int), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &wmem, &w));
    for (int i = 0; i < span; i++)
        wmem[i] = -1;
    for (int i = 0; i < 2 * N; i++)
        buf[i] = me * 100000 + i;
    PX_MPI(MPI_Win_fence(0, w));
    PX_MPI(MPI_Put(buf, 1, strided, right, 0, 1, indexed, w));
    PX_MPI(MPI_Win_fence(0, w));
    int bad = 0, k = 0;
    for (int b = 1; b <= NB; b++) {
        for (int j = 0; j < b; j++, k++)
            bad += wmem[bdisp[b] + j] != left * 100000 + 2 * k;
        bad += bdisp[b] + b < span && wmem[bdisp[b] + b] != -1; /* the gaps stay */
    }
    PX_CHECK(!bad, "put strided -> indexed: %d ints wrong", bad);
    MPI_Barrier(MPI_COMM_WORLD); /* read before the next epoch writes */
    /* accumulate the same again: every element doubles */
    PX_MPI(MPI_Accumulate(buf, 1, strided, right, 0, 1, indexed, MPI_SUM, w));
    PX_MPI(MPI_Win_fence(0, w));
    bad = 0, k = 0;
    for (int b = 1; b <= NB; b++)
        for (int j = 0; j < b; j++, k++)
            bad += wmem[bdisp[b] + j] != 2 * (left * 100000 + 2 * k);
    PX_CHECK(!bad, "accumulate strided -> indexed: %d ints wrong", bad);
    /* get it back into the strided layout */
    for (int i = 0; i < 2 * N; i++)
        buf[i] = -5;
    PX_MPI(MPI_Get(buf, 1, strided, right, 0, 1, indexed, w));
    PX_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, w));
    bad = 0;
    for (int i = 0; i < 2 * total; i++)
        bad += buf[i] != (i % 2 ? -5 : 2 * (me * 100000 + i));
    PX_CHECK(!bad, "get indexed -> strided: %d ints wrong", bad);
    PX_MPI(MPI_Win_free(&w));
    MPI_Type_free(&strided);
    MPI_Type_free(&indexed);
    free(buf);
}

static void requests(void)
{
    int me = px_test_rank, np = px_test_size, right = (me + 1) % np;
    enum { N = 50000 };
    int *wmem, *src = malloc(sizeof(int) * N), *dst = malloc(sizeof(int) * N);
    MPI_Win w;
    PX_MPI(MPI_Win_allocate((MPI_Aint)sizeof(int) * (N + 1), sizeof(int), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &wmem, &w));
    memset(wmem, 0, sizeof(int) * (N + 1));
    for (int i = 0; i < N; i++)
        src[i] = me * 7 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    PX_MPI(MPI_Win_lock_all(0, w));
    MPI_Request r[4];
    PX_MPI(MPI_Rput(src, N, MPI_INT, right, 0, N, MPI_INT, w, &r[0]));
    PX_MPI(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        src[i] = -1; /* the put is complete at the origin: its buffer is free */
    PX_MPI(MPI_Win_flush(right, w));
    PX_MPI(MPI_Rget(dst, N, MPI_INT, right, 0, N, MPI_INT, w, &r[1]));
    int one = 1, old = -1, old2 = -1;
    PX_MPI(MPI_Raccumulate(&one, 1, MPI_INT, right, N, 1, MPI_INT, MPI_SUM, w, &r[2]));
    PX_MPI(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    PX_MPI(MPI_Win_flush(right, w));
    PX_MPI(MPI_Rget_accumulate(&one, 1, MPI_INT, &old, 1, MPI_INT, right, N, 1, MPI_INT, MPI_SUM, w,
                               &r[3]));
    int flag = 0;
    while (!flag)
        PX_MPI(MPI_Test(&r[3], &flag, MPI_STATUS_IGNORE));
    PX_MPI(MPI_Fetch_and_op(NULL, &old2, MPI_INT, right, N, MPI_NO_OP, w));
    PX_MPI(MPI_Win_flush_local(right, w));
    PX_MPI(MPI_Win_unlock_all(w));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += dst[i] != me * 7 + i;
    PX_CHECK(!bad, "rput/rget: %d ints wrong", bad);
    PX_CHECK(old == 1 && old2 == 2, "raccumulate/rget_accumulate: %d then %d, want 1 then 2", old,
             old2);
    MPI_Barrier(MPI_COMM_WORLD);
    PX_CHECK(wmem[N] == 2, "counter %d, want 2", wmem[N]);
    PX_MPI(MPI_Win_free(&w));
    free(src);
    free(dst);
}

/* MPI_SHORT_INT, whose index lies apart from its value: every rank's
 * MAXLOC into rank 0's pairs at once (contiguous), then MPI_REPLACE through
 * a strided target type with the old pairs fetched, and MPI_NO_OP reads;
 * the gap between value and index is never written. */
static void short_int_pairs(void)
{
    typedef struct {
        short v;
        int k;
    } si_t;
    enum { K = 12 };
    int me = px_test_rank, np = px_test_size;
    si_t *wm, mine[K], old[K], one = {-1, -1};
    MPI_Win w;
    PX_MPI(MPI_Win_allocate((MPI_Aint)sizeof(si_t) * K, sizeof(si_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &wm, &w));
    memset(wm, 0x5a, sizeof(si_t) * K);
    for (int i = 0; i < K; i++)
        wm[i].v = -1, wm[i].k = -1;
    for (int i = 0; i < K; i++) /* the largest value at rank i % np */
        mine[i].v = (short)(me == i % np ? 100 + i : (i + me) % 3), mine[i].k = me;
    MPI_Barrier(MPI_COMM_WORLD);
    PX_MPI(MPI_Win_lock_all(0, w));
    PX_MPI(MPI_Accumulate(mine, K, MPI_SHORT_INT, 0, 0, K, MPI_SHORT_INT, MPI_MAXLOC, w));
    PX_MPI(MPI_Win_unlock_all(w));
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    if (me == 0)
        for (int i = 0; i < K; i++)
            bad += wm[i].v != 100 + i || wm[i].k != i % np;
    PX_CHECK(!bad, "MAXLOC on MPI_SHORT_INT: %d pairs wrong (first %d:%d)", bad, wm[0].v, wm[0].k);
    MPI_Barrier(MPI_COMM_WORLD);
    /* every third pair of rank 0's, two at a time, replaced by rank np-1 */
    MPI_Datatype vec;
    PX_MPI(MPI_Type_vector(K / 3, 2, 3, MPI_SHORT_INT, &vec));
    PX_MPI(MPI_Type_commit(&vec));
    if (me == np - 1) {
        si_t nw[K];
        for (int i = 0; i < K; i++)
            nw[i].v = (short)(-i), nw[i].k = 1000 + i;
        memset(old, 0, sizeof old);
        PX_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w));
        PX_MPI(MPI_Get_accumulate(nw, 2 * (K / 3), MPI_SHORT_INT, old, 2 * (K / 3), MPI_SHORT_INT,
                                  0, 0, 1, vec, MPI_REPLACE, w));
        PX_MPI(MPI_Win_flush(0, w));
        PX_MPI(MPI_Fetch_and_op(NULL, &one, MPI_SHORT_INT, 0, 3, MPI_NO_OP, w));
        PX_MPI(MPI_Win_unlock(0, w));
        for (int j = 0, i = 0; i < K; i++) {
            if (i % 3 == 2)
                continue;
            bad += old[j].v != 100 + i || old[j].k != i % np;
            j++;
        }
        PX_CHECK(!bad, "MPI_Get_accumulate on a vector of MPI_SHORT_INT: %d old pairs wrong", bad);
        PX_CHECK(one.v == -2 && one.k == 1002, "MPI_NO_OP read %d:%d, want -2:1002", one.v, one.k);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        bad = 0;
        for (int j = 0, i = 0; i < K; i++) {
            int moved = i % 3 != 2;
            bad += moved ? wm[i].v != -j || wm[i].k != 1000 + j : wm[i].v != 100 + i;
            j += moved;
            const unsigned char *gap = (const unsigned char *)&wm[i] + sizeof(short);
            for (size_t g = 0; g < offsetof(si_t, k) - sizeof(short); g++)
                bad += gap[g] != 0x5a;
        }
        PX_CHECK(!bad, "pairs after the replace (or their gaps): %d wrong", bad);
    }
    PX_MPI(MPI_Type_free(&vec));
    PX_MPI(MPI_Win_free(&w));
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "rma_atomics");
    MPI_Aint bytes = SLOTS * sizeof(int);
    PX_MPI(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, (size_t)bytes);
    mem[4] = 1 << 30;
    MPI_Barrier(MPI_COMM_WORLD);
    accumulate_all();
    tickets();
    cas_lock();
    swap_and_read();
    datatypes();
    requests();
    short_int_pairs();
    PX_MPI(MPI_Win_free(&win));
    return px_test_finish("accumulates, fetch_and_op, compare_and_swap, datatypes, requests");
}
