/* One-sided synchronisation: fence, post/start/complete/wait, locks and
 * flushes. Every epoch that ends proves its operations complete at their
 * targets through the protocol layer's byte counts (proto.h). */
#include "rma_impl.h"

#include <stdlib.h>

int px_rma_access_ok(px_mpi_win_t *w, int target)
{
    return w->fence || w->lock_all || w->locked[target] || w->started[target];
}

/* ---------- direct windows: the locks in the shared segment ---------- */

static void px_rma_shm_lock(px_mpi_win_t *w, int t, int excl)
{
    uint32_t *l = &px_rma_ctl(w, t)->lock;
    unsigned n = 0;
    for (;;) {
        uint32_t v = __atomic_load_n(l, __ATOMIC_RELAXED);
        if (excl ? v == 0 : !(v & PX_WIN_WRITER)) {
            uint32_t nv = excl ? PX_WIN_WRITER : v + 1;
            if (__atomic_compare_exchange_n(l, &v, nv, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                return;
            continue;
        }
        if (n % 256 == 0)
            px_proto_progress(); /* the holder may wait for a message of ours */
        px_rma_spin(&n);
    }
}

/* held: what locked[] says (MPI_LOCK_EXCLUSIVE is 1, shared 2). */
static void px_rma_shm_unlock(px_mpi_win_t *w, int t, int held)
{
    if (held & PX_WIN_LOCK_NOCHECK)
        return;
    uint32_t *l = &px_rma_ctl(w, t)->lock;
    if ((held & 3) == 1)
        __atomic_store_n(l, 0, __ATOMIC_RELEASE);
    else
        __atomic_fetch_sub(l, 1, __ATOMIC_RELEASE);
}

/* Progresses until cond(target) holds; an error when the target is lost. */
static int px_rma_until(px_mpi_win_t *w, int (*cond)(px_proto_win_t *, int), int target,
                        const char *fn)
{
    unsigned idle = 0;
    while (!cond(w->pw, target)) {
        if (px_proto_peer_failed(w->comm->group->world[target]))
            return px_mpi_win_error(w, MPI_ERR_OTHER, fn, "rank %d of the window is lost", target);
        px_proto_wait_step(&idle);
    }
    return MPI_SUCCESS;
}

static int px_rma_sent_unflushed(px_mpi_win_t *w, int t)
{
    return px_proto_rma_sent_updates(w->pw, t) != w->flushed[t];
}

/* Completes everything sent to targets [lo, hi) at those targets; unlock:
 * releases their locks too (those taken without MPI_MODE_NOCHECK). */
static int px_rma_flush_range(px_mpi_win_t *w, int lo, int hi, int unlock, const char *fn)
{
    if (w->direct) { /* loads and stores: done; ordered for the others */
        int err = px_rma_wait_local(w);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        for (int t = lo; t < hi && unlock; t++)
            px_rma_shm_unlock(w, t, unlock == 2 ? w->lock_all : w->locked[t]);
        return err ? px_mpi_win_error(w, err, fn, "an operation of the epoch failed") : 0;
    }
    /* one pass of progress even when nothing is awaited (operations on
     * this process's own part complete at once): a process that polls its
     * own part in a loop still serves the others' operations on it */
    px_proto_progress();
    /* the requests go first, behind the operations on each channel: the
     * operations' own completion here is awaited meanwhile */
    for (int t = lo; t < hi; t++) {
        int release = unlock && !((unlock == 2 ? w->lock_all : w->locked[t]) & PX_WIN_LOCK_NOCHECK);
        if (release || px_rma_sent_unflushed(w, t))
            px_proto_rma_flush(w->pw, t, release);
    }
    /* an operation that failed is reported after the epoch has ended */
    int err = px_rma_wait_local(w);
    for (int t = lo; t < hi; t++) {
        int rc = px_rma_until(w, px_proto_rma_flushed, t, fn);
        if (rc)
            return rc;
        w->flushed[t] = px_proto_rma_sent_updates(w->pw, t);
    }
    return err ? px_mpi_win_error(w, err, fn, "an operation of the epoch failed") : MPI_SUCCESS;
}

/* ---------- fence ---------- */

PX_PMPI(MPI_Win_fence)(int assertion, MPI_Win win)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Win_fence";
    PX_GET_WIN(w, win, fn);
    int n = w->comm->size;
    if (w->lock_all || w->start_list || w->post_list)
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn,
                                "a lock or post/start epoch is open on this window");
    for (int t = 0; t < n; t++)
        if (w->locked[t])
            return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn, "rank %d is locked", t);
    int rc = w->direct ? px_rma_wait_local(w) : MPI_SUCCESS, err = MPI_SUCCESS;
    if (rc)
        return px_mpi_win_error(w, rc, fn, "an operation failed");
    if (w->direct) { /* every operation is done: order them, meet */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        rc = px_mpi_coll_barrier(w->comm);
    } else if (assertion & MPI_MODE_NOPRECEDE) {
        err = px_rma_wait_local(w);
        rc = px_mpi_coll_barrier(w->comm);
    } else {
        /* each member learns how many bytes every other sent it, and waits
         * until it has applied them all */
        uint64_t *out = malloc(sizeof(uint64_t) * 2 * (size_t)n);
        if (!out)
            return px_mpi_win_error(w, MPI_ERR_NO_MEM, fn, "out of memory");
        uint64_t *in = out + n;
        for (int t = 0; t < n; t++)
            out[t] = px_proto_rma_sent(w->pw, t);
        rc = PMPI_Alltoall(out, 1, MPI_UINT64_T, in, 1, MPI_UINT64_T, w->comm->handle);
        err = px_rma_wait_local(w); /* meanwhile the operations went on */
        unsigned idle = 0;
        for (int o = 0; o < n && rc == MPI_SUCCESS; o++)
            while (!px_proto_rma_applied(w->pw, o, in[o])) {
                if (px_proto_peer_failed(w->comm->group->world[o])) {
                    rc = MPI_ERR_OTHER;
                    break;
                }
                px_proto_wait_step(&idle);
            }
        for (int t = 0; t < n; t++)
            w->flushed[t] = px_proto_rma_sent_updates(w->pw, t);
        free(out);
    }
    if (rc)
        return px_mpi_win_error(w, rc, fn, "a member of the window is lost");
    w->fence = !(assertion & MPI_MODE_NOSUCCEED);
    return err ? px_mpi_win_error(w, err, fn, "an operation of the epoch failed") : MPI_SUCCESS;
}
PX_WEAK(MPI_Win_fence)

/* ---------- post / start / complete / wait ---------- */

/* The window ranks of g's members, or NULL (an error reported in *rc). */
static int *px_rma_group_ranks(px_mpi_win_t *w, MPI_Group group, int *n_p, int *rc, const char *fn)
{
    px_mpi_group_t *g = px_mpi_group_get(group);
    if (!g) {
        *rc = px_mpi_win_error(w, MPI_ERR_GROUP, fn, "invalid group");
        return NULL;
    }
    int *r = malloc(sizeof(int) * (size_t)(g->size ? g->size : 1));
    if (!r) {
        *rc = px_mpi_win_error(w, MPI_ERR_NO_MEM, fn, "out of memory");
        return NULL;
    }
    px_mpi_group_t *wg = w->comm->group;
    for (int i = 0; i < g->size; i++) {
        r[i] = -1;
        for (int j = 0; j < wg->size; j++)
            if (wg->world[j] == g->world[i])
                r[i] = j;
        if (r[i] < 0) {
            free(r);
            *rc = px_mpi_win_error(w, MPI_ERR_GROUP, fn,
                                   "member %d of the group is not in the window", i);
            return NULL;
        }
    }
    *n_p = g->size;
    return r;
}

PX_PMPI(MPI_Win_post)(MPI_Group group, int assertion, MPI_Win win)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Win_post";
    PX_GET_WIN(w, win, fn);
    if (w->post_list)
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn, "an exposure epoch is already open");
    int n, rc = MPI_SUCCESS;
    int *r = px_rma_group_ranks(w, group, &n, &rc, fn);
    if (!r)
        return rc;
    w->post_done = calloc((size_t)(n ? n : 1), 1);
    if (!w->post_done) {
        free(r);
        return px_mpi_win_error(w, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    w->post_list = r;
    w->npost = n;
    if (!(assertion & MPI_MODE_NOCHECK))
        for (int i = 0; i < n; i++)
            px_proto_rma_post(w->pw, r[i]);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_post)

PX_PMPI(MPI_Win_start)(MPI_Group group, int assertion, MPI_Win win)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Win_start";
    PX_GET_WIN(w, win, fn);
    if (w->start_list)
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn, "an access epoch is already open");
    int n, rc = MPI_SUCCESS;
    int *r = px_rma_group_ranks(w, group, &n, &rc, fn);
    if (!r)
        return rc;
    /* the targets' exposure epochs must be open before anything goes */
    for (int i = 0; i < n && !(assertion & MPI_MODE_NOCHECK); i++)
        if ((rc = px_rma_until(w, px_proto_rma_take_post, r[i], fn))) {
            free(r);
            return rc;
        }
    for (int i = 0; i < n; i++)
        w->started[r[i]] = 1;
    w->start_list = r;
    w->nstart = n;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_start)

PX_PMPI(MPI_Win_complete)(MPI_Win win)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Win_complete";
    PX_GET_WIN(w, win, fn);
    if (!w->start_list)
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn, "no access epoch of MPI_Win_start");
    for (int i = 0; i < w->nstart; i++) {
        int t = w->start_list[i];
        px_proto_rma_complete(w->pw, t);
        w->flushed[t] = px_proto_rma_sent_updates(w->pw, t);
        w->started[t] = 0;
    }
    int rc = px_rma_wait_local(w);
    free(w->start_list);
    w->start_list = NULL;
    w->nstart = 0;
    return rc ? px_mpi_win_error(w, rc, fn, "an operation failed") : MPI_SUCCESS;
}
PX_WEAK(MPI_Win_complete)

static void px_rma_post_end(px_mpi_win_t *w)
{
    free(w->post_list);
    free(w->post_done);
    w->post_list = NULL;
    w->post_done = NULL;
    w->npost = 0;
}

PX_PMPI(MPI_Win_wait)(MPI_Win win)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Win_wait";
    PX_GET_WIN(w, win, fn);
    if (!w->post_list)
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn, "no exposure epoch of MPI_Win_post");
    for (int i = 0; i < w->npost; i++) {
        if (w->post_done[i])
            continue;
        int rc = px_rma_until(w, px_proto_rma_take_complete, w->post_list[i], fn);
        if (rc)
            return rc;
        w->post_done[i] = 1;
    }
    px_rma_post_end(w);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_wait)

PX_PMPI(MPI_Win_test)(MPI_Win win, int *flag)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Win_test";
    PX_GET_WIN(w, win, fn);
    if (!flag)
        return px_mpi_win_error(w, MPI_ERR_ARG, fn, "null argument");
    if (!w->post_list)
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn, "no exposure epoch of MPI_Win_post");
    px_proto_progress();
    int all = 1;
    for (int i = 0; i < w->npost; i++) {
        if (!w->post_done[i] && px_proto_rma_take_complete(w->pw, w->post_list[i]))
            w->post_done[i] = 1;
        all &= w->post_done[i];
    }
    if (all)
        px_rma_post_end(w);
    *flag = all;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_test)

/* ---------- locks ---------- */

static int px_rma_lock_args(px_mpi_win_t *w, int rank, const char *fn)
{
    if (rank < 0 || rank >= w->comm->size)
        return px_mpi_win_error(w, MPI_ERR_RANK, fn, "invalid rank %d", rank);
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Win_lock)(int lock_type, int rank, int assertion, MPI_Win win)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Win_lock";
    PX_GET_WIN(w, win, fn);
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return px_mpi_win_error(w, MPI_ERR_LOCKTYPE, fn, "invalid lock type %d", lock_type);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = px_rma_lock_args(w, rank, fn);
    if (rc)
        return rc;
    if (w->lock_all || w->locked[rank])
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn,
                                "rank %d is already locked by this process", rank);
    if (w->start_list)
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn,
                                "a post/start epoch is open on this window");
    if (!(assertion & MPI_MODE_NOCHECK) && w->direct) {
        px_rma_shm_lock(w, rank, lock_type == MPI_LOCK_EXCLUSIVE);
    } else if (!(assertion & MPI_MODE_NOCHECK)) {
        px_proto_rma_lock(w->pw, rank, lock_type == MPI_LOCK_EXCLUSIVE);
        if ((rc = px_rma_until(w, px_proto_rma_locked, rank, fn)))
            return rc;
    }
    w->locked[rank] = (uint8_t)(lock_type == MPI_LOCK_EXCLUSIVE ? 1 : 2);
    if (assertion & MPI_MODE_NOCHECK)
        w->locked[rank] |= PX_WIN_LOCK_NOCHECK;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_lock)

PX_PMPI(MPI_Win_unlock)(int rank, MPI_Win win)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Win_unlock";
    PX_GET_WIN(w, win, fn);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = px_rma_lock_args(w, rank, fn);
    if (rc)
        return rc;
    if (!w->locked[rank])
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn, "rank %d is not locked", rank);
    rc = px_rma_flush_range(w, rank, rank + 1, 1, fn);
    w->locked[rank] = 0;
    return rc;
}
PX_WEAK(MPI_Win_unlock)

PX_PMPI(MPI_Win_lock_all)(int assertion, MPI_Win win)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Win_lock_all";
    PX_GET_WIN(w, win, fn);
    int n = w->comm->size;
    if (w->lock_all)
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn, "the window is already locked");
    for (int t = 0; t < n; t++)
        if (w->locked[t])
            return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn, "rank %d is locked", t);
    if (w->start_list)
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn,
                                "a post/start epoch is open on this window");
    if (!(assertion & MPI_MODE_NOCHECK) && w->direct) {
        for (int t = 0; t < n; t++)
            px_rma_shm_lock(w, t, 0);
    } else if (!(assertion & MPI_MODE_NOCHECK)) {
        for (int t = 0; t < n; t++)
            px_proto_rma_lock(w->pw, t, 0);
        for (int t = 0; t < n; t++) {
            int rc = px_rma_until(w, px_proto_rma_locked, t, fn);
            if (rc)
                return rc;
        }
    }
    w->lock_all = 2 | (assertion & MPI_MODE_NOCHECK ? PX_WIN_LOCK_NOCHECK : 0);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_lock_all)

PX_PMPI(MPI_Win_unlock_all)(MPI_Win win)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Win_unlock_all";
    PX_GET_WIN(w, win, fn);
    if (!w->lock_all)
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn, "the window is not locked");
    int rc = px_rma_flush_range(w, 0, w->comm->size, 2, fn);
    w->lock_all = 0;
    return rc;
}
PX_WEAK(MPI_Win_unlock_all)

/* ---------- flushes ---------- */

static int px_rma_passive_epoch(px_mpi_win_t *w, int rank, const char *fn)
{
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->comm->size))
        return px_mpi_win_error(w, MPI_ERR_RANK, fn, "invalid rank %d", rank);
    if (!w->lock_all && (rank < 0 || !w->locked[rank]) && rank != MPI_PROC_NULL)
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, fn, "rank %d is not locked", rank);
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Win_flush)(int rank, MPI_Win win)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_flush");
    int rc = px_rma_passive_epoch(w, rank, "MPI_Win_flush");
    if (rc || rank == MPI_PROC_NULL)
        return rc;
    return px_rma_flush_range(w, rank, rank + 1, 0, "MPI_Win_flush");
}
PX_WEAK(MPI_Win_flush)

PX_PMPI(MPI_Win_flush_all)(MPI_Win win)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_flush_all");
    int n = w->comm->size, any = w->lock_all;
    for (int t = 0; t < n; t++)
        any |= w->locked[t];
    if (!any)
        return px_mpi_win_error(w, MPI_ERR_RMA_SYNC, "MPI_Win_flush_all",
                                "no passive-target epoch is open");
    return px_rma_flush_range(w, 0, n, 0, "MPI_Win_flush_all");
}
PX_WEAK(MPI_Win_flush_all)

/* Local completion: results in place, origin buffers free. */
PX_PMPI(MPI_Win_flush_local)(int rank, MPI_Win win)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_flush_local");
    int rc = px_rma_passive_epoch(w, rank, "MPI_Win_flush_local");
    if (rc)
        return rc;
    rc = px_rma_wait_local(w);
    return rc ? px_mpi_win_error(w, rc, "MPI_Win_flush_local", "an operation failed") : rc;
}
PX_WEAK(MPI_Win_flush_local)

PX_PMPI(MPI_Win_flush_local_all)(MPI_Win win)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_flush_local_all");
    int rc = px_rma_wait_local(w);
    return rc ? px_mpi_win_error(w, rc, "MPI_Win_flush_local_all", "an operation failed") : rc;
}
PX_WEAK(MPI_Win_flush_local_all)

/* The unified model: a memory barrier orders this process's loads and
 * stores with what the window's other processes see. */
PX_PMPI(MPI_Win_sync)(MPI_Win win)
{
    PX_CS_ENTER();
    PX_GET_WIN(w, win, "MPI_Win_sync");
    (void)w;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    px_proto_progress();
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_sync)
