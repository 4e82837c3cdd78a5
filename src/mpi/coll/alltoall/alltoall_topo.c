/* Topology-aware alltoall: pair exchanges in the steps of a schedule built
 * from the fabric (src/topo/sched.c), farthest partners first with a
 * conflict budget per link: TACS1 on a communicator of every rank of the
 * job, TACS2 (never longer than the normal schedule) on one of some of
 * them. DCSS decides first whether a schedule is worth building: not when
 * the allocation is sparse or no two hosts share a link above the leaf
 * level; the selection then moves on to pairwise.
 *
 * Every rank builds the same schedule from the shared model at the first
 * alltoall that asks, without communication, and keeps its own partners
 * with the communicator. */
#include "../coll_impl.h"
#include "../../../topo/topo.h"

#include <stdlib.h>
#include <string.h>

typedef struct px_coll_ta2a {
    int state; /* 1 usable, -1 not */
    int kind;
    int npeers;
    int *peers; /* this rank's partner in each step where it has one */
} px_coll_ta2a_t;

static px_coll_ta2a_t px_ta2a_none = {.state = -1};

void px_coll_ta2a_free(struct px_coll_ta2a *t)
{
    if (!t || t == &px_ta2a_none)
        return;
    free(t->peers);
    free(t);
}

static px_coll_ta2a_t *px_ta2a_build(px_mpi_comm_t *c)
{
    px_topo_t *topo = px_topo_job();
    int n = c->size;
    if (!topo || c->is_inter || n < 3)
        return &px_ta2a_none;
    int *hosts = malloc(sizeof(int) * (size_t)n);
    if (!hosts)
        return &px_ta2a_none;
    for (int r = 0; r < n; r++)
        hosts[r] = px_topo_job_host(px_mpi_comm_world_rank(c, r));
    px_coll_ta2a_t *t = NULL;
    px_topo_a2a_t *s = NULL;
    const char *want = px_params.alltoall_topo_schedule;
    px_topo_a2a_kind_t kind = !strcmp(want, "tacs1")         ? PX_TOPO_A2A_TACS1
                              : !strcmp(want, "tacs2")       ? PX_TOPO_A2A_TACS2
                              : n == px_mpi_comm_world->size ? PX_TOPO_A2A_TACS1
                                                             : PX_TOPO_A2A_TACS2;
    if (!px_topo_a2a_dcss(topo, hosts, n, (int)px_params.alltoall_topo_sparsity) ||
        px_topo_a2a_build(topo, hosts, n, kind, (int)px_params.alltoall_topo_conflicts, &s) !=
            PX_OK ||
        !(t = calloc(1, sizeof(*t))) ||
        !(t->peers = malloc(sizeof(int) * (size_t)px_topo_a2a_steps(s)))) {
        free(hosts);
        px_topo_a2a_free(s);
        px_coll_ta2a_free(t);
        return &px_ta2a_none;
    }
    for (int st = 0; st < px_topo_a2a_steps(s); st++) {
        int p = px_topo_a2a_dst(s, st, c->rank);
        if (p >= 0)
            t->peers[t->npeers++] = p;
    }
    px_debug("coll", "alltoall over %d ranks: %s schedule of %d steps%s", n, px_topo_a2a_name(kind),
             px_topo_a2a_steps(s), px_topo_a2a_fell_back(s) ? " (the round-robin rearranged)" : "");
    t->kind = (int)kind;
    t->state = t->npeers == n - 1 ? 1 : -1;
    free(hosts);
    px_topo_a2a_free(s);
    return t;
}

static px_coll_ta2a_t *px_coll_ta2a(px_mpi_comm_t *c)
{
    if (!c->ta2a)
        c->ta2a = px_ta2a_build(c);
    return c->ta2a;
}

int px_coll_ta2a_usable(px_mpi_comm_t *c) { return px_coll_ta2a(c)->state == 1; }

PX_COLL_BUILDER(px_coll_alltoall_topo)
{
    const px_coll_ta2a_t *t = px_coll_ta2a(c);
    px_coll_args_t b;
    MPI_Aint sblk, rblk;
    int rc = px_coll_alltoall_start(s, a, c, &b, &sblk, &rblk);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < t->npeers; i++) {
        int p = t->peers[i];
        px_coll_sched_recv(s, c, (char *)b.rbuf + p * rblk, b.rcount, b.rtype, p);
        px_coll_sched_send(s, c, (const char *)b.sbuf + p * sblk, b.scount, b.stype, p);
        px_coll_sched_round(s);
    }
    px_coll_sched_round(s);
    return MPI_SUCCESS;
}
