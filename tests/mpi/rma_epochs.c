/* One-sided communication, every window kind under every synchronisation:
 * windows made by MPI_Win_create, MPI_Win_allocate, MPI_Win_allocate_shared
 * (when every rank shares the machine) and MPI_Win_create_dynamic (memory
 * attached, addresses exchanged), each synchronised by fence,
 * post/start/complete/wait, lock/unlock and lock_all/unlock_all. In each
 * epoch every rank puts a pattern into its right neighbour's window, then
 * gets it back and accumulates into every rank's counter; the data and the
 * sum are checked. Small (one frame) and large (1.2 MB: striped frames,
 * direct copies on one machine) transfers. MPI_Win_shared_query on each
 * kind (a part not reachable by loads is empty with a null address). */
#include "px_test.h"

enum { K_CREATE, K_ALLOCATE, K_SHARED, K_DYNAMIC, K_N };
enum { S_FENCE, S_PSCW, S_LOCK, S_LOCKALL, S_N };
static const char *const kname[] = {"create", "allocate", "shared", "dynamic"};
static const char *const sname[] = {"fence", "pscw", "lock", "lock_all"};

typedef struct {
    MPI_Win win;
    int *mem;        /* this rank's part: n ints of data, then the counter */
    MPI_Aint *where; /* dynamic: every rank's address of mem */
    int *own;        /* memory to free (create, dynamic) */
} win_t;

static int value(int rank, int round, int i) { return rank * 1000003 + round * 7919 + i; }

static void open_epoch(win_t *w, int sync, int target, int excl)
{
    MPI_Group g;
    switch (sync) {
    case S_FENCE:
        PX_MPI(MPI_Win_fence(0, w->win));
        break;
    case S_PSCW:
        MPI_Comm_group(MPI_COMM_WORLD, &g);
        PX_MPI(MPI_Win_post(g, 0, w->win));
        PX_MPI(MPI_Win_start(g, 0, w->win));
        MPI_Group_free(&g);
        break;
    case S_LOCK:
        PX_MPI(MPI_Win_lock(excl ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, target, 0, w->win));
        break;
    default:
        PX_MPI(MPI_Win_lock_all(0, w->win));
    }
}

static void close_epoch(win_t *w, int sync, int target)
{
    switch (sync) {
    case S_FENCE:
        PX_MPI(MPI_Win_fence(0, w->win));
        break;
    case S_PSCW:
        PX_MPI(MPI_Win_complete(w->win));
        PX_MPI(MPI_Win_wait(w->win));
        break;
    case S_LOCK:
        PX_MPI(MPI_Win_unlock(target, w->win));
        break;
    default:
        PX_MPI(MPI_Win_unlock_all(w->win));
    }
}

static void make(win_t *w, int kind, int n)
{
    MPI_Aint bytes = (MPI_Aint)(n + 1) * (MPI_Aint)sizeof(int);
    w->own = NULL;
    w->where = NULL;
    switch (kind) {
    case K_CREATE:
        w->own = w->mem = malloc((size_t)bytes);
        PX_MPI(MPI_Win_create(w->mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
        break;
    case K_ALLOCATE:
        PX_MPI(
            MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem, &w->win));
        break;
    case K_SHARED:
        PX_MPI(MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem,
                                       &w->win));
        break;
    default:
        PX_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
        w->own = w->mem = malloc((size_t)bytes);
        PX_MPI(MPI_Win_attach(w->win, w->mem, bytes));
        w->where = malloc(sizeof(MPI_Aint) * (size_t)px_test_size);
        MPI_Aint a;
        MPI_Get_address(w->mem, &a);
        MPI_Allgather(&a, 1, MPI_AINT, w->where, 1, MPI_AINT, MPI_COMM_WORLD);
    }
    PX_REQUIRE(w->mem != NULL, "no window memory");
    memset(w->mem, 0, (size_t)bytes);
    int flavor = 0, *fp, flag = 0;
    PX_MPI(MPI_Win_get_attr(w->win, MPI_WIN_CREATE_FLAVOR, &fp, &flag));
    if (flag)
        flavor = *fp;
    static const int want[] = {MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE,
                               MPI_WIN_FLAVOR_SHARED, MPI_WIN_FLAVOR_DYNAMIC};
    PX_CHECK(flag && flavor == want[kind], "%s: flavor %d", kname[kind], flavor);
    /* MPI_Win_shared_query answers for every flavor (MPI-4.0): a part this
     * process cannot load from is empty with a null address */
    for (int r = 0; r < px_test_size; r++) {
        MPI_Aint size = -1;
        int unit = 0;
        int *base = NULL;
        PX_MPI(MPI_Win_shared_query(w->win, r, &size, &unit, &base));
        int mine = r == px_test_rank, empty = size == 0 && base == NULL;
        int whole = size == bytes && base != NULL && unit == (int)sizeof(int);
        if (kind == K_SHARED || (kind == K_CREATE && mine))
            PX_CHECK(whole && (!mine || base == w->mem), "%s: rank %d's part %p, %ld bytes",
                     kname[kind], r, (void *)base, (long)size);
        else if (kind == K_ALLOCATE)
            PX_CHECK(mine ? whole && base == w->mem : whole || empty,
                     "%s: rank %d's part %p, %ld bytes", kname[kind], r, (void *)base, (long)size);
        else
            PX_CHECK(empty, "%s: rank %d's part %p, %ld bytes", kname[kind], r, (void *)base,
                     (long)size);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Displacement of int i of rank r's part. */
static MPI_Aint disp(win_t *w, int r, int i)
{
    if (w->where)
        return w->where[r] + (MPI_Aint)i * (MPI_Aint)sizeof(int);
    return i;
}

static void destroy(win_t *w)
{
    if (w->where)
        PX_MPI(MPI_Win_detach(w->win, w->mem));
    PX_MPI(MPI_Win_free(&w->win));
    PX_CHECK(w->win == MPI_WIN_NULL, "MPI_Win_free left the handle");
    free(w->own);
    free(w->where);
}

static int round_no;

static void run(int kind, int sync, int n)
{
    int me = px_test_rank, np = px_test_size, right = (me + 1) % np, left = (me + np - 1) % np;
    int round = ++round_no;
    win_t w;
    make(&w, kind, n);
    int *src = malloc(sizeof(int) * (size_t)n), *got = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        src[i] = value(me, round, i);

    /* put into the right neighbour */
    open_epoch(&w, sync, right, 1);
    PX_MPI(MPI_Put(src, n, MPI_INT, right, disp(&w, right, 0), n, MPI_INT, w.win));
    close_epoch(&w, sync, right);
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += w.mem[i] != value(left, round, i);
    PX_CHECK(!bad, "%s/%s n=%d: %d ints of the put wrong (first %d, want %d)", kname[kind],
             sname[sync], n, bad, w.mem[0], value(left, round, 0));

    /* get it back; add me + 1 to every rank's counter */
    memset(got, 0xff, sizeof(int) * (size_t)n);
    int one = me + 1;
    if (sync == S_LOCK) {
        open_epoch(&w, sync, right, 0);
        PX_MPI(MPI_Get(got, n, MPI_INT, right, disp(&w, right, 0), n, MPI_INT, w.win));
        close_epoch(&w, sync, right);
        for (int t = 0; t < np; t++) {
            open_epoch(&w, sync, t, 0);
            PX_MPI(MPI_Accumulate(&one, 1, MPI_INT, t, disp(&w, t, n), 1, MPI_INT, MPI_SUM, w.win));
            close_epoch(&w, sync, t);
        }
    } else {
        open_epoch(&w, sync, right, 0);
        PX_MPI(MPI_Get(got, n, MPI_INT, right, disp(&w, right, 0), n, MPI_INT, w.win));
        for (int t = 0; t < np; t++)
            PX_MPI(MPI_Accumulate(&one, 1, MPI_INT, t, disp(&w, t, n), 1, MPI_INT, MPI_SUM, w.win));
        close_epoch(&w, sync, right);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += got[i] != src[i];
    PX_CHECK(!bad, "%s/%s n=%d: %d ints of the get wrong (first %d, want %d)", kname[kind],
             sname[sync], n, bad, got[0], src[0]);
    PX_CHECK(w.mem[n] == np * (np + 1) / 2, "%s/%s n=%d: counter %d, want %d", kname[kind],
             sname[sync], n, w.mem[n], np * (np + 1) / 2);
    if (sync == S_FENCE)
        PX_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
    destroy(&w);
    free(src);
    free(got);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "rma_epochs");
    MPI_Comm node;
    int nsize;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    int kinds = 0;
    static const int sizes[] = {100, 300000};
    for (int k = 0; k < K_N; k++) {
        if (k == K_SHARED && nsize != px_test_size)
            continue; /* the ranks do not share a machine */
        kinds++;
        for (int s = 0; s < S_N; s++)
            for (int z = 0; z < 2; z++)
                run(k, s, sizes[z]);
    }
    if (nsize == px_test_size) { /* a shared window whose odd ranks give no memory */
        MPI_Win win;
        int *mem;
        MPI_Aint mine = px_test_rank % 2 ? 0 : 64;
        PX_MPI(MPI_Win_allocate_shared(mine, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        for (int r = 0; r < px_test_size; r++) {
            MPI_Aint size = -1;
            int unit;
            void *base;
            PX_MPI(MPI_Win_shared_query(win, r, &size, &unit, &base));
            PX_CHECK(r % 2 ? size == 0 && base == NULL : size == 64 && base != NULL,
                     "rank %d's part of a shared window: %p, %ld bytes", r, base, (long)size);
        }
        PX_MPI(MPI_Win_free(&win));
    }
    return px_test_finish("%d window kinds x %d synchronisations x 2 sizes", kinds, S_N);
}
