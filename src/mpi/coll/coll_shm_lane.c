/* Persistent collectives' lanes in a communicator's shared-memory segment
 * (coll_shm_impl.h): taken at init, run as polled requests, given back at
 * blocking barriers (docs/collectives.md). */
#include "coll_shm_impl.h"
#include "../dtype_engine.h"

#include <stdlib.h>
#include <string.h>

/* Blocking barrier k, before this rank leaves it: the lanes every rank had
 * freed when it arrived are free again, on every rank alike. */
void px_cshm_lanes_recycle(struct px_coll_shm *m, uint64_t k)
{
    uint64_t all = ~0ull;
    if (m->me == 0) {
        for (int r = 0; r < m->n; r++)
            all &= px_cshm_ann(m, r, k)->lfreed;
        m->flags[0].land = all;
    } else {
        all = m->flags[0].land;
    }
    all &= m->lane_taken;
    m->lane_taken &= ~all;
    m->lane_freed &= ~all;
}

void px_coll_shm_lane_take(px_mpi_comm_t *c, px_cshm_lane_t *l)
{
    struct px_coll_shm *m = c->cshm;
    l->m = NULL;
    if (!m || m->state != 1 || m->lane_taken == (1u << PX_CSHM_LANES) - 1)
        return;
    /* a start's arrays may not outlive the call (an int start passes
     * widened copies made for it): the lane keeps its own */
    l->v = malloc(sizeof(*l->v) * 4 * (size_t)m->n);
    l->reqs = malloc(sizeof(*l->reqs) * 2 * (size_t)m->n);
    if (!l->v || !l->reqs) {
        free(l->v);
        free(l->reqs);
        return;
    }
    l->m = m;
    l->lane = __builtin_ctzll(~m->lane_taken);
    m->lane_taken |= 1ull << l->lane;
}

void px_coll_shm_lane_drop(px_cshm_lane_t *l)
{
    if (l->m)
        l->m->lane_freed |= 1ull << l->lane;
    l->m = NULL;
    free(l->v);
    free(l->reqs);
    l->v = NULL;
    l->reqs = NULL;
}

int px_coll_shm_lane_fits(px_coll_id_t id, const px_coll_args_t *a, px_mpi_comm_t *c)
{
    struct px_coll_shm *m = c->cshm;
    size_t slot = m ? m->lslot : 0;
    switch (id) {
    case PX_COLL_BARRIER:
        return 1;
    case PX_COLL_REDUCE: /* combined in place in the slots: contiguous data */
    case PX_COLL_ALLREDUCE:
    case PX_COLL_REDUCE_SCATTER:
    case PX_COLL_REDUCE_SCATTER_BLOCK:
        return a->bytes <= slot && px_mpi_dt_get(a->dt)->contig;
    case PX_COLL_BCAST:
    case PX_COLL_ALLGATHER:
    case PX_COLL_GATHER:
        return a->bytes <= slot;
    case PX_COLL_ALLTOALL:
    case PX_COLL_SCATTER:
        return a->bytes <= slot / (size_t)c->size;
    case PX_COLL_ALLGATHERV:
        return px_cshm_blocks_fit(a, c->size, slot);
    case PX_COLL_GATHERV: /* block by block (px_cshm_vfits) */
    case PX_COLL_SCATTERV:
        return 1;
    case PX_COLL_ALLTOALLV: /* in place, a block's messages would overwrite what others read */
        return a->sbuf != MPI_IN_PLACE;
    default:
        return 0;
    }
}

/* 1 when word `which` of rank who (every rank: who < 0) is at least val,
 * 0 not yet, -1 when a rank it waits for has failed. */
static int px_cshm_test(struct px_coll_shm *m, int which, int who, uint64_t val)
{
    int r = who < 0 ? 0 : who, end = who < 0 ? m->n : who + 1;
    for (; r < end; r++)
        if ((who >= 0 || r != m->me) &&
            atomic_load_explicit(px_cshm_word(m, r, which, val), memory_order_acquire) < val)
            return px_proto_peer_failed(m->world[r]) ? -1 : 0;
    return 1;
}

/* Advances l's start as px_coll_shm_run runs a blocking call, on the
 * lane's words and slots, without waiting: 1 once done (*rc set). */
static int px_cshm_lane_step(px_cshm_lane_t *l, int *rc)
{
    struct px_coll_shm v = *l->m; /* the lane seen as a segment of its own */
    v.flags = l->m->lflags + (size_t)l->lane * (size_t)v.n;
    v.data = l->m->ldata + (size_t)l->lane * (size_t)v.n * 2 * l->m->lslot;
    v.slot = l->m->lslot;
    v.ring = 0;   /* slot k % 2 */
    v.ann = NULL; /* seq in the lane's flags */
    v.kid = l->id;
    v.kroot = l->a.root;
    const px_coll_args_t *a = &l->a;
    uint64_t k = l->k;
    int t = 1, which, who;
    if (l->phase == 0) {
        int writes = px_cshm_writes(l->id, a, v.me);
        if (writes && k > 2 && (t = px_cshm_test(&v, 1, -1, k - 2)) <= 0) {
            if (!t)
                return 0;
            *rc = MPI_ERR_OTHER;
            return 1;
        }
        if (writes)
            px_cshm_write(&v, l->id, a, k);
        if (writes || l->id == PX_COLL_BARRIER)
            px_cshm_post(&v, 0, k);
        l->phase = 1;
    }
    if (px_cshm_waits(l->id, a, v.me, &which, &who) && !(t = px_cshm_test(&v, which, who, k)))
        return 0;
    int msgs = l->nreqs ? px_cshm_vmsgs_done(l->reqs, &l->nreqs) : 1;
    if (!msgs)
        return 0;
    if (t > 0)
        px_cshm_take(&v, l->id, a, k);
    *rc = l->err != MPI_SUCCESS ? l->err : t > 0 && msgs > 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
    px_cshm_post(&v, 1, k);
    return 1;
}

/* A start holds its datatypes until it ends: a large-count start's may
 * be made for it and freed when the start returns (px_mpi_big_of). */
static void px_cshm_lane_types(px_cshm_lane_t *l, int hold)
{
    MPI_Datatype t[3] = {l->a.stype, l->a.rtype, l->a.dt};
    for (int i = 0; i < 3; i++)
        if (t[i] && t[i] != MPI_DATATYPE_NULL) {
            if (hold)
                px_mpi_dt_retain(t[i]);
            else
                px_mpi_dt_release(t[i]);
        }
}

static int px_cshm_lane_poll(px_mpi_req_t *r)
{
    px_cshm_lane_t *l = r->sched;
    int rc;
    if (!l)
        return 1;
    if (!px_cshm_lane_step(l, &rc))
        return 0;
    r->st_error = rc;
    r->sched = NULL;
    px_cshm_lane_types(l, 0);
    px_proto_shared_pending(-1);
    return 1;
}

int px_coll_shm_lane_start(px_cshm_lane_t *l, px_coll_id_t id, const px_coll_args_t *a,
                           px_mpi_comm_t *c, px_mpi_req_t **req_p)
{
    px_trace("coll", "%s: shm lane %d (ranks %d, bytes %zu)", px_coll_name(id), l->lane, c->size,
             a->bytes);
    px_coll_count_shm(id, a->bytes);
    l->id = id;
    l->a = *a;
    px_cshm_lane_types(l, 1);
    /* the arrays this rank reads: the receive side's (gatherv: at the
     * root), the send side's (scatterv: at the root) */
    int n = l->m->n, me = l->m->me;
    MPI_Aint *v = l->v;
    int recvs = id == PX_COLL_ALLGATHERV || id == PX_COLL_REDUCE_SCATTER ||
                id == PX_COLL_REDUCE_SCATTER_BLOCK || id == PX_COLL_ALLTOALLV ||
                (id == PX_COLL_GATHERV && me == a->root);
    int sends = id == PX_COLL_ALLTOALLV || (id == PX_COLL_SCATTERV && me == a->root);
    if (recvs) {
        l->a.rcounts = memcpy(v, a->rcounts, sizeof(*v) * (size_t)n);
        if (a->rdispls)
            l->a.rdispls = memcpy(v + n, a->rdispls, sizeof(*v) * (size_t)n);
    }
    if (sends) {
        l->a.scounts = memcpy(v + 2 * n, a->scounts, sizeof(*v) * (size_t)n);
        l->a.sdispls = memcpy(v + 3 * n, a->sdispls, sizeof(*v) * (size_t)n);
    }
    l->tag = c->coll_tag_next - 1;
    l->nreqs = 0;
    l->err = MPI_SUCCESS;
    if (id == PX_COLL_GATHERV || id == PX_COLL_SCATTERV || id == PX_COLL_ALLTOALLV) {
        struct px_coll_shm v = *l->m; /* the lane seen as a segment of its own */
        v.slot = l->m->lslot;
        l->err = px_cshm_vmsgs(&v, id, &l->a, c, l->tag, l->reqs, &l->nreqs);
    }
    l->k = ++l->m->lane_op[l->lane];
    l->phase = 0;
    px_proto_shared_pending(1);
    *req_p = px_mpi_req_polled(c, px_cshm_lane_poll, l);
    if (!*req_p) { /* the start is counted on the lane: it runs to its end */
        int rc;
        unsigned idle = 0;
        while (!px_cshm_lane_step(l, &rc))
            px_proto_wait_step_shared(&idle);
        px_cshm_lane_types(l, 0);
        px_proto_shared_pending(-1);
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}
