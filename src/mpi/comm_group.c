/* Communicators made from a group: MPI_Comm_create_group (its members
 * agree on a context id among themselves, with point-to-point messages on
 * the parent's collective context), and MPI_Comm_create_from_group and the
 * helpers the sessions' constructors share (agreement among the group's
 * members only, keyed by a string tag). */
#include "mpi_impl.h"

#include <stdlib.h>
#include <string.h>

/* Internal tags for MPI_Comm_create_group on the parent's collective context:
 * above the range of collective schedules (0..0x3fffffff), derived from the
 * user's tag so that concurrent calls over overlapping groups stay apart. */
#define PX_CREATE_GROUP_TAG(t) (0x40000000 | ((t)&0x0fffffff))

/* Maximum of *val over the members of g (a subset of parent's group, this
 * process included) by recursive doubling; only members take part. */
static int px_group_allreduce_max(px_mpi_comm_t *parent, const px_mpi_group_t *g, int *val, int tag)
{
    int n = g->size, me = g->rank, rc = MPI_SUCCESS;
    int *prank = malloc(sizeof(int) * (size_t)n);
    if (!prank)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) { /* member i -> rank in parent */
        prank[i] = -1;
        for (int j = 0; j < parent->size; j++)
            if (parent->group->world[j] == g->world[i]) {
                prank[i] = j;
                break;
            }
    }
    uint32_t ctx = parent->ctx + 1;
    int pof2 = 1;
    while (pof2 * 2 <= n)
        pof2 *= 2;
    int rem = n - pof2, newrank, other;
    px_mpi_req_t *sr, *rr;
    /* fold the members beyond a power of two into their neighbours */
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            rc = px_mpi_isend_internal(&sr, val, 1, MPI_INT, prank[me + 1], tag, parent, ctx,
                                       PX_PROTO_MODE_STD);
            if (rc == MPI_SUCCESS) {
                px_mpi_req_wait(sr);
                rc = px_mpi_req_complete(sr, MPI_STATUS_IGNORE);
                px_mpi_req_free(sr);
            }
            newrank = -1;
        } else {
            rc = px_mpi_irecv_internal(&rr, &other, 1, MPI_INT, prank[me - 1], tag, parent, ctx);
            if (rc == MPI_SUCCESS) {
                px_mpi_req_wait(rr);
                rc = px_mpi_req_complete(rr, MPI_STATUS_IGNORE);
                px_mpi_req_free(rr);
            }
            if (other > *val)
                *val = other;
            newrank = me / 2;
        }
    } else {
        newrank = me - rem;
    }
    for (int mask = 1; rc == MPI_SUCCESS && newrank >= 0 && mask < pof2; mask <<= 1) {
        int nd = newrank ^ mask;
        int dst = prank[nd < rem ? nd * 2 + 1 : nd + rem];
        rc = px_mpi_irecv_internal(&rr, &other, 1, MPI_INT, dst, tag, parent, ctx);
        if (rc != MPI_SUCCESS)
            break;
        rc = px_mpi_isend_internal(&sr, val, 1, MPI_INT, dst, tag, parent, ctx, PX_PROTO_MODE_STD);
        if (rc != MPI_SUCCESS) {
            px_mpi_req_wait(rr);
            px_mpi_req_free(rr);
            break;
        }
        px_mpi_req_wait(sr);
        px_mpi_req_wait(rr);
        int rs = px_mpi_req_complete(sr, MPI_STATUS_IGNORE);
        rc = px_mpi_req_complete(rr, MPI_STATUS_IGNORE);
        px_mpi_req_free(sr);
        px_mpi_req_free(rr);
        if (rc == MPI_SUCCESS)
            rc = rs;
        if (other > *val)
            *val = other;
    }
    /* hand the result back to the folded members */
    if (rc == MPI_SUCCESS && me < 2 * rem) {
        if (me % 2 == 1) {
            rc = px_mpi_isend_internal(&sr, val, 1, MPI_INT, prank[me - 1], tag, parent, ctx,
                                       PX_PROTO_MODE_STD);
            if (rc == MPI_SUCCESS) {
                px_mpi_req_wait(sr);
                rc = px_mpi_req_complete(sr, MPI_STATUS_IGNORE);
                px_mpi_req_free(sr);
            }
        } else {
            rc = px_mpi_irecv_internal(&rr, val, 1, MPI_INT, prank[me + 1], tag, parent, ctx);
            if (rc == MPI_SUCCESS) {
                px_mpi_req_wait(rr);
                rc = px_mpi_req_complete(rr, MPI_STATUS_IGNORE);
                px_mpi_req_free(rr);
            }
        }
    }
    free(prank);
    return rc;
}

typedef struct {
    px_mpi_comm_t *parent;
    const px_mpi_group_t *g;
    int tag;
} px_group_max_t;

static int px_ctx_max_group(void *arg, int *val)
{
    px_group_max_t *a = arg;
    return px_group_allreduce_max(a->parent, a->g, val, a->tag);
}

PX_PMPI(MPI_Comm_create_group)(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    PX_CS_ENTER();
    PX_OUT_COMM_NULL(newcomm);
    static const char fn[] = "MPI_Comm_create_group";
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    px_mpi_group_t *g = px_mpi_group_get(group);
    if (!g)
        return px_mpi_error(c, MPI_ERR_GROUP, fn, "invalid group");
    if (!newcomm)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null argument");
    if (c->is_inter)
        return px_mpi_error(c, MPI_ERR_COMM, fn, "not defined on inter-communicators");
    if (tag < 0)
        return px_mpi_error(c, MPI_ERR_TAG, fn, "invalid tag %d", tag);
    for (int i = 0; i < g->size; i++) {
        int found = 0;
        for (int j = 0; j < c->size && !found; j++)
            found = c->group->world[j] == g->world[i];
        if (!found)
            return px_mpi_error(c, MPI_ERR_GROUP, fn,
                                "group is not a subset of the communicator's group");
    }
    /* a process outside the group takes no part and gets MPI_COMM_NULL */
    if (g->rank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    px_group_max_t gm = {c, g, PX_CREATE_GROUP_TAG(tag)};
    uint32_t agreed;
    int rc = px_mpi_comm_agree_ctx(2, px_ctx_max_group, &gm, &agreed);
    if (rc == MPI_ERR_INTERN)
        return px_mpi_error(c, rc, fn, "context ids exhausted");
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, fn, "communication failed");
    px_mpi_group_t *ng = px_mpi_group_new(g->size);
    if (!ng)
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    memcpy(ng->world, g->world, sizeof(int) * (size_t)g->size);
    ng->rank = g->rank;
    px_mpi_comm_t *nc;
    rc = px_mpi_comm_create_from_group(c, ng, (uint32_t)agreed, &nc);
    if (rc != MPI_SUCCESS) {
        px_mpi_group_release(ng);
        return px_mpi_error(c, rc, fn, "out of memory");
    }
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_create_group)

/* A tag for the agreement of MPI_Comm_create_from_group (salt 0) or
 * MPI_Intercomm_create_from_groups (salt 1) on the sessions' world: a hash
 * of the string tag (FNV-1a), so that concurrent creations over groups
 * that overlap stay apart; its own range above every other internal tag. */
static int px_stringtag_tag(const char *stringtag, int salt)
{
    uint32_t h = 2166136261u ^ (uint32_t)salt;
    for (const unsigned char *p = (const unsigned char *)stringtag; *p; p++) {
        h ^= *p;
        h *= 16777619u;
    }
    return (int)(0x70000000u | (h & 0x0fffffffu));
}

int px_mpi_group_agree_ctx(const px_mpi_group_t *g, uint32_t n, const char *stringtag, int salt,
                           uint32_t *ctx_p)
{
    px_group_max_t gm = {px_mpi_comm_sworld, g, px_stringtag_tag(stringtag, salt)};
    return px_mpi_comm_agree_ctx(n, px_ctx_max_group, &gm, ctx_p);
}

int px_mpi_from_group_check(MPI_Errhandler errhandler, const char *stringtag, MPI_Info info,
                            const void *out, MPI_Errhandler *eh_p, const char *fn)
{
    if (errhandler != MPI_ERRHANDLER_NULL && !px_mpi_errh_valid(errhandler))
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid error handler");
    MPI_Errhandler eh = errhandler == MPI_ERRHANDLER_NULL ? MPI_ERRORS_ARE_FATAL : errhandler;
    *eh_p = eh;
    if (!out || !stringtag)
        return px_mpi_error_obj(eh, MPI_COMM_NULL, MPI_ERR_ARG, fn, "null argument");
    if (strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return px_mpi_error_obj(eh, MPI_COMM_NULL, MPI_ERR_ARG, fn,
                                "string tag longer than MPI_MAX_STRINGTAG_LEN");
    if (info != MPI_INFO_NULL && !px_mpi_info_valid(info))
        return px_mpi_error_obj(eh, MPI_COMM_NULL, MPI_ERR_INFO, fn, "invalid info object");
    return MPI_SUCCESS;
}

int px_mpi_from_group_finish(px_mpi_comm_t *nc, MPI_Errhandler eh, MPI_Info info, MPI_Comm *out,
                             const char *fn)
{
    int rc;
    nc->errh = eh;
    if (info != MPI_INFO_NULL && (rc = px_mpi_info_set_comm(nc, info)) != MPI_SUCCESS) {
        px_mpi_comm_release(nc);
        return px_mpi_error_obj(eh, MPI_COMM_NULL, rc, fn, "cannot copy the info hints");
    }
    *out = nc->handle;
    return MPI_SUCCESS;
}

/* MPI-4.0 7.4.2: collective over the group only; no parent communicator.
 * Errors before the communicator exists go to the handler given for it. */
PX_PMPI(MPI_Comm_create_from_group)
(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
 MPI_Comm *newcomm)
{
    PX_CS_ENTER();
    static const char fn[] = "MPI_Comm_create_from_group";
    PX_CHECK_INIT(fn);
    MPI_Errhandler eh;
    int rc = px_mpi_from_group_check(errhandler, stringtag, info, newcomm, &eh, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    px_mpi_group_t *g = px_mpi_group_get(group);
    if (!g)
        return px_mpi_error_obj(eh, MPI_COMM_NULL, MPI_ERR_GROUP, fn, "invalid group");
    if (!g->size) { /* MPI_GROUP_EMPTY: nobody to agree with */
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if (g->rank == MPI_UNDEFINED)
        return px_mpi_error_obj(eh, MPI_COMM_NULL, MPI_ERR_GROUP, fn,
                                "the calling process is not a member of the group");
    uint32_t ctx;
    rc = px_mpi_group_agree_ctx(g, 2, stringtag, 0, &ctx);
    if (rc != MPI_SUCCESS)
        return px_mpi_error_obj(eh, MPI_COMM_NULL, rc, fn,
                                rc == MPI_ERR_INTERN ? "context ids exhausted"
                                                     : "communication failed");
    px_mpi_group_t *ng = px_mpi_group_new(g->size);
    if (!ng)
        return px_mpi_error_obj(eh, MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    memcpy(ng->world, g->world, sizeof(int) * (size_t)g->size);
    ng->rank = g->rank;
    px_mpi_comm_t *nc;
    rc = px_mpi_comm_create_from_group(NULL, ng, ctx, &nc);
    if (rc != MPI_SUCCESS) {
        px_mpi_group_release(ng);
        return px_mpi_error_obj(eh, MPI_COMM_NULL, rc, fn, "out of memory");
    }
    return px_mpi_from_group_finish(nc, eh, info, newcomm, fn);
}
PX_WEAK(MPI_Comm_create_from_group)
