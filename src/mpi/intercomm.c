/* Inter-communicators: Intercomm_create, Intercomm_merge, remote size and
 * group, and duplication, splitting and Comm_create of one.
 *
 * An inter-communicator keeps its local group in `group` (rank, size,
 * Comm_group) and the other side in `remote`: point-to-point ranks are
 * translated through `remote`, while the envelope carries the sender's rank
 * in its own group, which is the rank the receiver knows it by. Both groups
 * share the context ids ctx (point-to-point) and ctx + 1 (internal
 * agreements between the leaders); each side's `local_comm` uses ctx + 2 and
 * ctx + 3 (the groups are disjoint, so they never meet there). */
#include "mpi_impl.h"

#include <stdio.h>
#include <stdlib.h>

/* Internal tags. Between the leaders on the peer communicator's collective
 * context: above the collective schedules' range, derived from the user tag. */
#define PX_INTER_PEER_TAG(t) (0x50000000 | ((t)&0x0fffffff))

/* Exchanges n ints with `peer` of c on context ctx (blocking). */
static int px_inter_swap(px_mpi_comm_t *c, uint32_t ctx, int peer, int tag, const int *out, int *in,
                         int n)
{
    px_mpi_req_t *rr, *sr;
    int rc = px_mpi_irecv_internal(&rr, in, n, MPI_INT, peer, tag, c, ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = px_mpi_isend_internal(&sr, out, n, MPI_INT, peer, tag, c, ctx, PX_PROTO_MODE_STD);
    if (rc != MPI_SUCCESS) {
        px_mpi_req_wait(rr);
        px_mpi_req_free(rr);
        return rc;
    }
    px_mpi_req_wait(sr);
    px_mpi_req_wait(rr);
    int rs = px_mpi_req_complete(sr, MPI_STATUS_IGNORE);
    rc = px_mpi_req_complete(rr, MPI_STATUS_IGNORE);
    px_mpi_req_free(sr);
    px_mpi_req_free(rr);
    return rc != MPI_SUCCESS ? rc : rs;
}

/* The largest value over both groups of inter-communicator c (each group
 * reduces, the leaders swap, each leader tells its group); also brings the
 * remote group's `mine`. */
typedef struct {
    px_mpi_comm_t *c;
    int mine, theirs;
} px_inter_max_t;

static int px_inter_max(void *arg, int *val)
{
    px_inter_max_t *a = arg;
    px_mpi_comm_t *c = a->c;
    int v = *val, lmax = 0;
    int rc = px_mpi_coll_allreduce(&v, &lmax, 1, MPI_INT, MPI_MAX, c->local_comm);
    if (rc != MPI_SUCCESS)
        return rc;
    int out[2] = {lmax, a->mine}, in[2] = {0, 0};
    if (c->rank == 0)
        rc = px_inter_swap(c, c->ctx + 1, 0, PX_INTER_AGREE_TAG, out, in, 2);
    int rc2 = px_mpi_coll_bcast(in, 2, MPI_INT, 0, c->local_comm);
    if (rc != MPI_SUCCESS || rc2 != MPI_SUCCESS)
        return rc != MPI_SUCCESS ? rc : rc2;
    *val = lmax > in[0] ? lmax : in[0];
    a->theirs = in[1];
    return MPI_SUCCESS;
}

/* Fresh context ids agreed by both groups of inter-communicator c, and the
 * remote group's value of `mine` (which must be equal at the local members).
 * Collective over both groups. */
static int px_inter_agree(px_mpi_comm_t *c, int nids, int mine, int *remote_val, uint32_t *ctx_p)
{
    px_inter_max_t a = {c, mine, 0};
    int rc = px_mpi_comm_agree_ctx((uint32_t)nids, px_inter_max, &a, ctx_p);
    *remote_val = a.theirs;
    return rc;
}

/* The same for MPI_Intercomm_create: the groups meet through their leaders
 * on the peer communicator (significant at the leaders only). */
typedef struct {
    px_mpi_comm_t *lc, *pc;
    int leader, remote_leader, tag;
} px_icc_max_t;

static int px_icc_max(void *arg, int *val)
{
    px_icc_max_t *a = arg;
    int v = *val, lmax = 0;
    int rc = px_mpi_coll_allreduce(&v, &lmax, 1, MPI_INT, MPI_MAX, a->lc);
    if (rc != MPI_SUCCESS)
        return rc;
    int res[2] = {lmax, MPI_SUCCESS};
    if (a->lc->rank == a->leader) {
        int in = 0;
        res[1] = px_inter_swap(a->pc, a->pc->ctx + 1, a->remote_leader, a->tag, &lmax, &in, 1);
        if (in > res[0])
            res[0] = in;
    }
    rc = px_mpi_coll_bcast(res, 2, MPI_INT, a->leader, a->lc);
    *val = res[0];
    return rc != MPI_SUCCESS ? rc : res[1];
}

/* Inter-communicator over the local group `lg` and remote group `rg` (one
 * reference of each is taken over), with contexts ctx .. ctx + 3. */
static int px_inter_build(px_mpi_comm_t *parent, px_mpi_group_t *lg, px_mpi_group_t *rg,
                          uint32_t ctx, int low, px_mpi_comm_t **newc_p)
{
    px_mpi_comm_t *nc, *lc;
    int rc = px_mpi_comm_create_from_group(parent, lg, ctx, &nc);
    if (rc != MPI_SUCCESS) {
        px_mpi_group_release(lg);
        px_mpi_group_release(rg);
        return rc;
    }
    nc->is_inter = 1;
    nc->inter_low = low;
    nc->remote = rg;
    lg->refs++;
    rc = px_mpi_comm_create_from_group(parent, lg, ctx + 2, &lc);
    if (rc != MPI_SUCCESS) {
        lg->refs--;
        px_mpi_comm_release(nc);
        return rc;
    }
    lc->errh = MPI_ERRORS_RETURN; /* failures are reported on the inter-communicator */
    snprintf(lc->name, sizeof(lc->name), "local group of inter-communicator");
    nc->local_comm = lc;
    *newc_p = nc;
    return MPI_SUCCESS;
}

int px_mpi_intercomm_build(px_mpi_comm_t *parent, px_mpi_group_t *lg, px_mpi_group_t *rg,
                           uint32_t ctx, int low, px_mpi_comm_t **newc_p)
{
    return px_inter_build(parent, lg, rg, ctx, low, newc_p);
}

int px_mpi_intercomm_dup(px_mpi_comm_t *c, px_mpi_comm_t **newc_p, const char *fn)
{
    uint32_t ctx;
    int dummy;
    int rc = px_inter_agree(c, 4, 0, &dummy, &ctx);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, fn, "cannot agree on a context id");
    c->group->refs++;
    c->remote->refs++;
    rc = px_inter_build(c, c->group, c->remote, ctx, c->inter_low, newc_p);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, fn, "out of memory");
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Intercomm_create)
(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
 MPI_Comm *newintercomm)
{
    PX_CS_ENTER();
    PX_OUT_COMM_NULL(newintercomm);
    static const char fn[] = "MPI_Intercomm_create";
    PX_CHECK_INIT(fn);
    PX_GET_COMM(lc, local_comm, fn);
    if (!newintercomm)
        return px_mpi_error(lc, MPI_ERR_ARG, fn, "null argument");
    if (lc->is_inter)
        return px_mpi_error(lc, MPI_ERR_COMM, fn, "local_comm must be an intra-communicator");
    if (local_leader < 0 || local_leader >= lc->size)
        return px_mpi_error(lc, MPI_ERR_RANK, fn, "invalid local leader %d (size %d)", local_leader,
                            lc->size);
    if (tag < 0)
        return px_mpi_error(lc, MPI_ERR_TAG, fn, "invalid tag %d", tag);

    /* the leader learns the other side's size and members */
    int rc, lmax = 0;
    int leader_world = lc->group->world[local_leader];
    /* hdr: remote size, (unused), remote leader's world rank, status */
    int hdr[4] = {0, 0, 0, MPI_SUCCESS};
    int *rworld = NULL;
    if (lc->rank == local_leader) {
        px_mpi_comm_t *pc = px_mpi_comm_get(peer_comm);
        if (!pc || pc->is_inter) {
            hdr[3] = MPI_ERR_COMM;
        } else if (remote_leader < 0 || remote_leader >= pc->size ||
                   pc->group->world[remote_leader] == leader_world) {
            hdr[3] = MPI_ERR_RANK;
        } else {
            int out[3] = {lc->size, lmax, leader_world}, in[3];
            int t = PX_INTER_PEER_TAG(tag);
            rc = px_inter_swap(pc, pc->ctx + 1, remote_leader, t, out, in, 3);
            if (rc == MPI_SUCCESS && in[0] <= 0)
                rc = MPI_ERR_INTERN;
            if (rc == MPI_SUCCESS && !(rworld = malloc(sizeof(int) * (size_t)in[0])))
                rc = MPI_ERR_NO_MEM;
            if (rc == MPI_SUCCESS) {
                /* sizes are known on both sides now: swap the member lists */
                px_mpi_req_t *rr, *sr;
                rc = px_mpi_irecv_internal(&rr, rworld, in[0], MPI_INT, remote_leader, t, pc,
                                           pc->ctx + 1);
                if (rc == MPI_SUCCESS) {
                    rc =
                        px_mpi_isend_internal(&sr, lc->group->world, lc->size, MPI_INT,
                                              remote_leader, t, pc, pc->ctx + 1, PX_PROTO_MODE_STD);
                    if (rc == MPI_SUCCESS) {
                        px_mpi_req_wait(sr);
                        rc = px_mpi_req_complete(sr, MPI_STATUS_IGNORE);
                        px_mpi_req_free(sr);
                    }
                    px_mpi_req_wait(rr);
                    int rv = px_mpi_req_complete(rr, MPI_STATUS_IGNORE);
                    px_mpi_req_free(rr);
                    if (rc == MPI_SUCCESS)
                        rc = rv;
                }
            }
            hdr[0] = in[0];
            hdr[1] = lmax > in[1] ? lmax : in[1];
            hdr[2] = in[2];
            hdr[3] = rc;
        }
    }
    /* everyone in the local group learns the outcome, also of a failure */
    rc = px_mpi_coll_bcast(hdr, 4, MPI_INT, local_leader, lc);
    if (rc == MPI_SUCCESS && hdr[3] != MPI_SUCCESS)
        rc = hdr[3];
    if (rc != MPI_SUCCESS) {
        free(rworld);
        return px_mpi_error(lc, rc, fn,
                            rc == MPI_ERR_COMM   ? "invalid peer communicator at the leader"
                            : rc == MPI_ERR_RANK ? "invalid remote leader"
                                                 : "exchange between the leaders failed");
    }
    px_mpi_group_t *rg = px_mpi_group_new(hdr[0]);
    if (!rg) {
        free(rworld);
        return px_mpi_error(lc, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    if (lc->rank == local_leader)
        memcpy(rg->world, rworld, sizeof(int) * (size_t)hdr[0]);
    free(rworld);
    rc = px_mpi_coll_bcast(rg->world, hdr[0], MPI_INT, local_leader, lc);
    if (rc != MPI_SUCCESS) {
        px_mpi_group_release(rg);
        return px_mpi_error(lc, rc, fn, "communication failed in the local group");
    }
    px_icc_max_t icc = {lc, lc->rank == local_leader ? px_mpi_comm_get(peer_comm) : NULL,
                        local_leader, remote_leader, PX_INTER_PEER_TAG(tag)};
    uint32_t ctx;
    rc = px_mpi_comm_agree_ctx(4, px_icc_max, &icc, &ctx);
    if (rc != MPI_SUCCESS) {
        px_mpi_group_release(rg);
        return px_mpi_error(
            lc, rc, fn, rc == MPI_ERR_INTERN ? "context ids exhausted" : "communication failed");
    }
    /* the side whose leader has the lower world rank goes first in a merge
     * where both sides pass the same `high` */
    int low = leader_world < hdr[2];
    px_mpi_comm_t *nc;
    lc->group->refs++;
    rc = px_inter_build(lc, lc->group, rg, ctx, low, &nc);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(lc, rc, fn, "out of memory");
    *newintercomm = nc->handle;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Intercomm_create)

/* MPI-4.0 7.6.2: collective over both groups, which every member names
 * (they must be disjoint); no peer communicator: the members of both agree
 * on the context ids over the sessions' world (comm.c). The side whose
 * leader has the lower world rank comes first in the agreement's group and
 * in a merge where both pass the same `high`. Errors before the
 * inter-communicator exists go to the handler given for it. */
PX_PMPI(MPI_Intercomm_create_from_groups)
(MPI_Group local_group, int local_leader, MPI_Group remote_group, int remote_leader,
 const char *stringtag, MPI_Info info, MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    PX_CS_ENTER();
    PX_OUT_COMM_NULL(newintercomm);
    static const char fn[] = "MPI_Intercomm_create_from_groups";
    PX_CHECK_INIT(fn);
    MPI_Errhandler eh;
    int rc = px_mpi_from_group_check(errhandler, stringtag, info, newintercomm, &eh, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    px_mpi_group_t *lg = px_mpi_group_get(local_group), *rg = px_mpi_group_get(remote_group);
    if (!lg || !rg)
        return px_mpi_error_obj(eh, MPI_COMM_NULL, MPI_ERR_GROUP, fn, "invalid group");
    if (lg->rank == MPI_UNDEFINED)
        return px_mpi_error_obj(eh, MPI_COMM_NULL, MPI_ERR_GROUP, fn,
                                "the calling process is not a member of the local group");
    if (local_leader < 0 || local_leader >= lg->size || remote_leader < 0 ||
        remote_leader >= rg->size)
        return px_mpi_error_obj(eh, MPI_COMM_NULL, MPI_ERR_RANK, fn,
                                "invalid leader (local %d of %d, remote %d of %d)", local_leader,
                                lg->size, remote_leader, rg->size);
    for (int i = 0; i < rg->size; i++)
        for (int j = 0; j < lg->size; j++)
            if (rg->world[i] == lg->world[j])
                return px_mpi_error_obj(eh, MPI_COMM_NULL, MPI_ERR_GROUP, fn,
                                        "the local and remote groups overlap");
    int low = lg->world[local_leader] < rg->world[remote_leader];
    const px_mpi_group_t *a = low ? lg : rg, *b = low ? rg : lg;
    px_mpi_group_t *u = px_mpi_group_new(lg->size + rg->size);
    px_mpi_group_t *nl = px_mpi_group_new(lg->size), *nr = px_mpi_group_new(rg->size);
    if (!u || !nl || !nr) {
        px_mpi_group_release(u);
        px_mpi_group_release(nl);
        px_mpi_group_release(nr);
        return px_mpi_error_obj(eh, MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    memcpy(u->world, a->world, sizeof(int) * (size_t)a->size);
    memcpy(u->world + a->size, b->world, sizeof(int) * (size_t)b->size);
    u->rank = low ? lg->rank : rg->size + lg->rank;
    memcpy(nl->world, lg->world, sizeof(int) * (size_t)lg->size);
    nl->rank = lg->rank;
    memcpy(nr->world, rg->world, sizeof(int) * (size_t)rg->size);
    uint32_t ctx;
    rc = px_mpi_group_agree_ctx(u, 4, stringtag, 1, &ctx);
    px_mpi_group_release(u);
    if (rc != MPI_SUCCESS) {
        px_mpi_group_release(nl);
        px_mpi_group_release(nr);
        return px_mpi_error_obj(eh, MPI_COMM_NULL, rc, fn,
                                rc == MPI_ERR_INTERN ? "context ids exhausted"
                                                     : "communication failed");
    }
    px_mpi_comm_t *nc;
    rc = px_inter_build(NULL, nl, nr, ctx, low, &nc);
    if (rc != MPI_SUCCESS)
        return px_mpi_error_obj(eh, MPI_COMM_NULL, rc, fn, "out of memory");
    return px_mpi_from_group_finish(nc, eh, info, newintercomm, fn);
}
PX_WEAK(MPI_Intercomm_create_from_groups)

PX_PMPI(MPI_Intercomm_merge)(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    PX_CS_ENTER();
    PX_OUT_COMM_NULL(newintracomm);
    static const char fn[] = "MPI_Intercomm_merge";
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, intercomm, fn);
    if (!c->is_inter)
        return px_mpi_error(c, MPI_ERR_COMM, fn, "not an inter-communicator");
    if (!newintracomm)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null argument");
    /* the local leader's flag stands for the group (the standard asks all
     * members of a group to pass the same value) */
    int mine = high ? 1 : 0, theirs = 0;
    int rc = px_mpi_coll_bcast(&mine, 1, MPI_INT, 0, c->local_comm);
    uint32_t ctx;
    if (rc == MPI_SUCCESS)
        rc = px_inter_agree(c, 2, mine, &theirs, &ctx);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, fn, "communication between the groups failed");
    int first = mine != theirs ? !mine : c->inter_low;
    int ls = c->group->size, rs = c->remote->size;
    px_mpi_group_t *g = px_mpi_group_new(ls + rs);
    if (!g)
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    const px_mpi_group_t *a = first ? c->group : c->remote, *b = first ? c->remote : c->group;
    memcpy(g->world, a->world, sizeof(int) * (size_t)a->size);
    memcpy(g->world + a->size, b->world, sizeof(int) * (size_t)b->size);
    g->rank = first ? c->rank : rs + c->rank;
    px_mpi_comm_t *nc;
    rc = px_mpi_comm_create_from_group(c, g, ctx, &nc);
    if (rc != MPI_SUCCESS) {
        px_mpi_group_release(g);
        return px_mpi_error(c, rc, fn, "out of memory");
    }
    *newintracomm = nc->handle;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Intercomm_merge)

/* Swaps an array of ints between the two groups: the local leaders trade
 * `n` and `mine` (equal at every local member), the leader then broadcasts
 * the remote array in the local group. *theirs_p is malloc'ed. */
static int px_inter_swap_array(px_mpi_comm_t *c, const int *mine, int n, int **theirs_p, int *tn_p)
{
    int tn = 0, rc = MPI_SUCCESS;
    int *theirs = NULL;
    if (c->rank == 0)
        rc = px_inter_swap(c, c->ctx + 1, 0, PX_INTER_AGREE_TAG + 1, &n, &tn, 1);
    int rc2 = px_mpi_coll_bcast(&tn, 1, MPI_INT, 0, c->local_comm);
    if (rc != MPI_SUCCESS || rc2 != MPI_SUCCESS)
        return rc != MPI_SUCCESS ? rc : rc2;
    if (!(theirs = malloc(sizeof(int) * (size_t)(tn > 0 ? tn : 1))))
        return MPI_ERR_NO_MEM;
    if (c->rank == 0) {
        px_mpi_req_t *rr, *sr;
        rc = px_mpi_irecv_internal(&rr, theirs, tn, MPI_INT, 0, PX_INTER_AGREE_TAG + 2, c,
                                   c->ctx + 1);
        if (rc == MPI_SUCCESS) {
            rc = px_mpi_isend_internal(&sr, mine, n, MPI_INT, 0, PX_INTER_AGREE_TAG + 2, c,
                                       c->ctx + 1, PX_PROTO_MODE_STD);
            if (rc == MPI_SUCCESS) {
                px_mpi_req_wait(sr);
                rc = px_mpi_req_complete(sr, MPI_STATUS_IGNORE);
                px_mpi_req_free(sr);
            }
            px_mpi_req_wait(rr);
            rc2 = px_mpi_req_complete(rr, MPI_STATUS_IGNORE);
            px_mpi_req_free(rr);
            if (rc == MPI_SUCCESS)
                rc = rc2;
        }
    }
    rc2 = px_mpi_coll_bcast(theirs, tn, MPI_INT, 0, c->local_comm);
    if (rc != MPI_SUCCESS || rc2 != MPI_SUCCESS) {
        free(theirs);
        return rc != MPI_SUCCESS ? rc : rc2;
    }
    *theirs_p = theirs;
    *tn_p = tn;
    return MPI_SUCCESS;
}

typedef struct {
    int key, idx, world;
} px_inter_split_t;

static int px_inter_split_cmp(const void *a, const void *b)
{
    const px_inter_split_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->idx - y->idx;
}

/* Members of (color, key, world) triples `t` with the given color, ordered by
 * (key, position); NULL when there are none (or, with *err set, no memory). */
static px_mpi_group_t *px_inter_split_group(const int *t, int count, int color, int *err)
{
    px_inter_split_t *m = malloc(sizeof(*m) * (size_t)(count > 0 ? count : 1));
    int n = 0;
    *err = MPI_SUCCESS;
    if (!m) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    for (int i = 0; i < count; i++)
        if (t[3 * i] == color)
            m[n++] = (px_inter_split_t){t[3 * i + 1], i, t[3 * i + 2]};
    if (n == 0) {
        free(m);
        return NULL;
    }
    qsort(m, (size_t)n, sizeof(*m), px_inter_split_cmp);
    px_mpi_group_t *g = px_mpi_group_new(n);
    if (!g) {
        *err = MPI_ERR_NO_MEM;
        free(m);
        return NULL;
    }
    int me = px_mpi_comm_world->rank;
    for (int i = 0; i < n; i++) {
        g->world[i] = m[i].world;
        if (m[i].world == me)
            g->rank = i;
    }
    free(m);
    return g;
}

/* MPI_Comm_split on an inter-communicator (called from comm.c): processes
 * of one color form an inter-communicator between the local members and the
 * remote members of that color, each side ordered by key; MPI_COMM_NULL when
 * either side has no member of the color. */
int px_mpi_intercomm_split(px_mpi_comm_t *c, int color, int key, MPI_Comm *newcomm, const char *fn)
{
    int trip[3] = {color, key, px_mpi_comm_world->rank};
    int *loc = malloc(sizeof(int) * 3 * (size_t)c->size), *rem = NULL, rn = 0, dummy, rc;
    uint32_t ctx;
    if (!loc)
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    rc = px_mpi_coll_allgather_bytes(trip, loc, sizeof(trip), c->local_comm);
    if (rc == MPI_SUCCESS)
        rc = px_inter_swap_array(c, loc, 3 * c->size, &rem, &rn);
    if (rc == MPI_SUCCESS)
        rc = px_inter_agree(c, 4, 0, &dummy, &ctx);
    if (rc != MPI_SUCCESS) {
        free(loc);
        free(rem);
        return px_mpi_error(c, rc, fn, "communication between the groups failed");
    }
    *newcomm = MPI_COMM_NULL;
    px_mpi_group_t *lg = NULL, *rg = NULL;
    int e1 = MPI_SUCCESS, e2 = MPI_SUCCESS;
    if (color != MPI_UNDEFINED) {
        lg = px_inter_split_group(loc, c->size, color, &e1);
        rg = px_inter_split_group(rem, rn / 3, color, &e2);
    }
    free(loc);
    free(rem);
    if (e1 != MPI_SUCCESS || e2 != MPI_SUCCESS || !lg || !rg) {
        px_mpi_group_release(lg);
        px_mpi_group_release(rg);
        if (e1 != MPI_SUCCESS || e2 != MPI_SUCCESS)
            return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
        return MPI_SUCCESS;
    }
    rg->rank = MPI_UNDEFINED;
    px_mpi_comm_t *nc;
    rc = px_inter_build(c, lg, rg, ctx, c->inter_low, &nc);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, fn, "out of memory");
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

/* MPI_Comm_create on an inter-communicator (called from comm.c, `g` a
 * subset of the local group, the same at every local member): the result
 * joins the members of g with the members the other group chose;
 * MPI_COMM_NULL when either choice is empty or excludes the caller. */
int px_mpi_intercomm_create_sub(px_mpi_comm_t *c, const px_mpi_group_t *g, MPI_Comm *newcomm,
                                const char *fn)
{
    int *rem = NULL, rn = 0, dummy;
    uint32_t ctx;
    int rc = px_inter_swap_array(c, g->world, g->size, &rem, &rn);
    if (rc == MPI_SUCCESS)
        rc = px_inter_agree(c, 4, 0, &dummy, &ctx);
    if (rc != MPI_SUCCESS) {
        free(rem);
        return px_mpi_error(c, rc, fn, "communication between the groups failed");
    }
    *newcomm = MPI_COMM_NULL;
    if (g->size == 0 || rn == 0 || g->rank == MPI_UNDEFINED) {
        free(rem);
        return MPI_SUCCESS;
    }
    px_mpi_group_t *lg = px_mpi_group_new(g->size), *rg = px_mpi_group_new(rn);
    if (!lg || !rg) {
        free(rem);
        px_mpi_group_release(lg);
        px_mpi_group_release(rg);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    memcpy(lg->world, g->world, sizeof(int) * (size_t)g->size);
    lg->rank = g->rank;
    memcpy(rg->world, rem, sizeof(int) * (size_t)rn);
    rg->rank = MPI_UNDEFINED;
    free(rem);
    px_mpi_comm_t *nc;
    rc = px_inter_build(c, lg, rg, ctx, c->inter_low, &nc);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, fn, "out of memory");
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Comm_remote_size)(MPI_Comm comm, int *size)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_remote_size");
    if (!c->is_inter)
        return px_mpi_error(c, MPI_ERR_COMM, "MPI_Comm_remote_size", "not an inter-communicator");
    if (!size)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Comm_remote_size", "null argument");
    *size = c->remote->size;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_remote_size)

PX_PMPI(MPI_Comm_remote_group)(MPI_Comm comm, MPI_Group *group)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_remote_group");
    if (!c->is_inter)
        return px_mpi_error(c, MPI_ERR_COMM, "MPI_Comm_remote_group", "not an inter-communicator");
    if (!group)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Comm_remote_group", "null argument");
    c->remote->refs++;
    *group = px_mpi_group_handle(c->remote);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_remote_group)
