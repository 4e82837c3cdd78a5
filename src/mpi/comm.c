/* Communicators: world, self, dup, idup, split, create,
 * compare, names. Made from groups (create_group, create_from_group):
 * comm_group.c; inter-communicator construction: intercomm.c. */
#include "mpi_impl.h"

#include <sched.h>

#include <stdio.h>
#include <stdlib.h>

px_mpi_comm_t *px_mpi_comm_world, *px_mpi_comm_self, *px_mpi_comm_sworld;
px_htab_t px_mpi_comm_tab;
static uint32_t px_next_ctx = 6; /* 0/1 world, 2/3 self, 4/5 the sessions' world */
static const px_boot_info_t *px_comm_boot;
#define PX_COMM_BUILTIN 0x44000000u
#define PX_COMM_DYN 0x84000000u

int px_mpi_group_compare(const px_mpi_group_t *a, const px_mpi_group_t *b);

static px_mpi_comm_t *px_comm_new(px_mpi_group_t *group, uint32_t ctx, unsigned hi)
{
    px_mpi_comm_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    int idx = px_htab_add(&px_mpi_comm_tab, c);
    if (idx < 0) {
        free(c);
        return NULL;
    }
    c->handle = (MPI_Comm)(hi | (unsigned)idx);
    c->refs = 1;
    c->ctx = ctx;
    c->group = group;
    c->size = group->size;
    c->rank = group->rank;
    c->errh = MPI_ERRORS_ARE_FATAL;
    return c;
}

/* Context ids other threads of this process are agreeing on right now
 * (the agreement waits for other processes, which lets other threads in). */
typedef struct px_ctx_claim {
    struct px_ctx_claim *next;
    uint32_t lo, n;
} px_ctx_claim_t;
static px_ctx_claim_t *px_ctx_claims;

static const px_ctx_claim_t *px_ctx_overlap(uint32_t lo, uint32_t n)
{
    for (const px_ctx_claim_t *c = px_ctx_claims; c; c = c->next)
        if (lo < c->lo + c->n && c->lo < lo + n)
            return c;
    return NULL;
}

static void px_ctx_claim(px_ctx_claim_t *c, uint32_t lo, uint32_t n)
{
    c->lo = lo;
    c->n = n;
    c->next = px_ctx_claims;
    px_ctx_claims = c;
}

static void px_ctx_unclaim(px_ctx_claim_t *c)
{
    for (px_ctx_claim_t **p = &px_ctx_claims; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            return;
        }
}

/* Every member proposes ids free here (not below px_next_ctx, not claimed by
 * another thread) and the largest proposal is taken. With threads, another
 * agreement may have taken those ids at some member meanwhile: every member
 * says whether they are still free there, and all try again above them if
 * any says no. Single-threaded, the first proposal always holds. */
int px_mpi_comm_agree_ctx(uint32_t n, px_mpi_ctx_max_fn max, void *arg, uint32_t *ctx_p)
{
    px_ctx_claim_t claim;
    uint32_t from = px_next_ctx;
    for (;;) {
        uint32_t lo = from > px_next_ctx ? from : px_next_ctx;
        const px_ctx_claim_t *o;
        while ((o = px_ctx_overlap(lo, n)))
            lo = o->lo + o->n;
        if (lo > 0x7ffffff0u - n)
            return MPI_ERR_INTERN;
        px_ctx_claim(&claim, lo, n);
        int v = (int)lo;
        int rc = max(arg, &v);
        px_ctx_unclaim(&claim);
        if (rc != MPI_SUCCESS)
            return rc;
        if (v < 0 || (unsigned)v > 0x7ffffff0u - n)
            return MPI_ERR_INTERN;
        int clash = (uint32_t)v < px_next_ctx || px_ctx_overlap((uint32_t)v, n);
        if (!clash)
            px_ctx_claim(&claim, (uint32_t)v, n);
        int any = clash;
        rc = max(arg, &any);
        if (!clash)
            px_ctx_unclaim(&claim);
        if (rc != MPI_SUCCESS)
            return rc;
        if (!any) {
            if ((uint32_t)v + n > px_next_ctx)
                px_next_ctx = (uint32_t)v + n;
            *ctx_p = (uint32_t)v;
            return MPI_SUCCESS;
        }
        from = (uint32_t)v + n;
    }
}

const px_boot_info_t *px_mpi_boot_info(void) { return px_comm_boot; }

int px_mpi_comm_init_world(const px_boot_info_t *boot)
{
    px_comm_boot = boot;
    px_mpi_group_t *gw = px_mpi_group_new(boot->size);
    px_mpi_group_t *gs = px_mpi_group_new(1);
    if (!gw || !gs)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < boot->size; i++)
        gw->world[i] = i;
    gw->rank = boot->rank;
    gs->world[0] = boot->rank;
    gs->rank = 0;
    /* index 0 and 1 of the table are the builtin handles */
    px_mpi_comm_world = px_comm_new(gw, 0, PX_COMM_BUILTIN);
    px_mpi_comm_self = px_comm_new(gs, 2, PX_COMM_BUILTIN);
    if (!px_mpi_comm_world || !px_mpi_comm_self || px_mpi_comm_world->handle != MPI_COMM_WORLD ||
        px_mpi_comm_self->handle != MPI_COMM_SELF)
        return MPI_ERR_INTERN;
    strcpy(px_mpi_comm_world->name, "MPI_COMM_WORLD");
    strcpy(px_mpi_comm_self->name, "MPI_COMM_SELF");
    px_mpi_comm_world->local_rank = boot->local_rank;
    px_mpi_comm_world->local_size = boot->local_size;
    /* the same processes on contexts of their own, for the sessions: the
     * program never sees its handle */
    gw->refs++;
    px_mpi_comm_sworld = px_comm_new(gw, 4, PX_COMM_DYN);
    if (!px_mpi_comm_sworld)
        return MPI_ERR_NO_MEM;
    strcpy(px_mpi_comm_sworld->name, "mpi://WORLD");
    px_mpi_comm_sworld->errh = MPI_ERRORS_RETURN;
    px_mpi_comm_sworld->local_rank = boot->local_rank;
    px_mpi_comm_sworld->local_size = boot->local_size;
    return MPI_SUCCESS;
}

void px_mpi_comm_release(px_mpi_comm_t *c)
{
    if (!c || --c->refs > 0)
        return;
    if (c == px_mpi_comm_parent) /* freed or disconnected: no parent any more */
        px_mpi_comm_parent = NULL;
    px_htab_del(&px_mpi_comm_tab, PX_HANDLE_IDX(c->handle));
    if (c->topo && c->topo_free)
        c->topo_free(c->topo);
    px_coll_shm_free(c->cshm); /* a kept segment copies the members from c->group */
    px_mpi_group_release(c->group);
    px_mpi_group_release(c->remote);
    px_mpi_comm_release(c->local_comm);
    px_mpi_info_destroy(c->info);
    px_coll_hier_forget(c);
    px_coll_tclus_free(c->tclus);
    px_coll_ta2a_free(c->ta2a);
    free(c);
}

void px_mpi_comms_mark(uint8_t *named, int base, int room)
{
    for (int i = 0; i < px_mpi_comm_tab.n; i++) {
        const px_mpi_comm_t *c = px_mpi_comm_tab.obj[i];
        if (c) {
            px_mpi_group_mark(c->group, named, base, room);
            px_mpi_group_mark(c->remote, named, base, room);
        }
    }
}

void px_mpi_comm_finalize(void)
{
    /* handles stay valid for queries after finalize; nothing to release */
}

static int px_ctx_max_comm(void *arg, int *val)
{
    int in = *val;
    return px_mpi_coll_allreduce(&in, val, 1, MPI_INT, MPI_MAX, arg);
}

int px_mpi_comm_alloc_ctx(px_mpi_comm_t *parent, uint32_t *ctx_p)
{
    /* members of disjoint communicators never meet: ids need only be free
     * at the members */
    if (parent->is_inter) /* both groups must agree: see intercomm.c */
        return MPI_ERR_COMM;
    return px_mpi_comm_agree_ctx(2, px_ctx_max_comm, parent, ctx_p);
}

int px_mpi_comm_create_from_group(px_mpi_comm_t *parent, px_mpi_group_t *group, uint32_t ctx,
                                  px_mpi_comm_t **comm_p)
{
    (void)parent;
    px_mpi_comm_t *c = px_comm_new(group, ctx, PX_COMM_DYN);
    if (!c)
        return MPI_ERR_NO_MEM;
    c->errh = parent ? parent->errh : MPI_ERRORS_ARE_FATAL;
    /* ranks of this communicator on my node */
    if (px_comm_boot) {
        int me_node = px_comm_boot->node_id;
        for (int i = 0; i < group->size; i++)
            c->mixed |= group->world[i] >= px_comm_boot->size;
        c->local_rank = c->local_size = 0;
        for (int i = 0; i < group->size; i++)
            if (c->mixed ? i == group->rank : px_comm_boot->node_of[group->world[i]] == me_node) {
                if (i == group->rank)
                    c->local_rank = c->local_size;
                c->local_size++;
            }
    }
    *comm_p = c;
    return MPI_SUCCESS;
}

int px_mpi_comm_node_of(const px_mpi_comm_t *c, int rank)
{
    if (!px_comm_boot)
        return 0;
    return c->mixed ? px_comm_boot->num_nodes + rank : px_comm_boot->node_of[c->group->world[rank]];
}

PX_PMPI(MPI_Comm_rank)(MPI_Comm comm, int *rank)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_rank");
    if (!rank)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Comm_rank", "null argument");
    *rank = c->rank;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_rank)

PX_PMPI(MPI_Comm_size)(MPI_Comm comm, int *size)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_size");
    if (!size)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Comm_size", "null argument");
    *size = c->size;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_size)

int px_mpi_intercomm_create_sub(px_mpi_comm_t *c, const px_mpi_group_t *g, MPI_Comm *newcomm,
                                const char *fn); /* intercomm.c */

/* What a duplicate takes from the original besides its group: hints,
 * virtual topology, and the attributes whose copy callbacks say so. On
 * failure nc is gone and the error is reported. */
static int px_comm_dup_copy(px_mpi_comm_t *c, px_mpi_comm_t *nc, const char *fn)
{
    if (c->info) { /* MPI 3.1: the duplicate carries the hints of the original */
        nc->lane_mode = c->lane_mode;
        nc->info = px_mpi_info_copy(c->info);
        if (!nc->info) {
            px_mpi_comm_release(nc);
            return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "cannot copy the info hints");
        }
    }
    if (c->topo) { /* a duplicate keeps the virtual topology */
        nc->topo = px_mpi_topo_dup(c->topo);
        if (!nc->topo) {
            px_mpi_comm_release(nc);
            return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "cannot copy the topology");
        }
        nc->topo_free = c->topo_free;
    }
    int rc = px_mpi_attr_copy_all(c, nc);
    if (rc != MPI_SUCCESS) {
        /* the attributes copied so far are deleted, and there is no new
         * communicator */
        px_mpi_attr_delete_all(nc);
        px_mpi_comm_release(nc);
        return px_mpi_error(c, rc, fn, "attribute copy callback failed");
    }
    return MPI_SUCCESS;
}

/* An intra-communicator on c's group whose context id is set later. */
static int px_comm_dup_shell(px_mpi_comm_t *c, uint32_t ctx, px_mpi_comm_t **nc_p, const char *fn)
{
    c->group->refs++;
    int rc = px_mpi_comm_create_from_group(c, c->group, ctx, nc_p);
    if (rc != MPI_SUCCESS) {
        c->group->refs--;
        return px_mpi_error(c, rc, fn, "out of memory");
    }
    return MPI_SUCCESS;
}

static int px_comm_dup(px_mpi_comm_t *c, MPI_Comm *newcomm, const char *fn)
{
    uint32_t ctx;
    px_mpi_comm_t *nc;
    int rc;
    if (!newcomm)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null argument");
    *newcomm = MPI_COMM_NULL;
    if (c->is_inter) {
        rc = px_mpi_intercomm_dup(c, &nc, fn);
        if (rc != MPI_SUCCESS)
            return rc;
    } else {
        rc = px_mpi_comm_alloc_ctx(c, &ctx);
        if (rc != MPI_SUCCESS)
            return px_mpi_error(c, rc, fn, "cannot agree on a context id");
        rc = px_comm_dup_shell(c, ctx, &nc, fn);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    rc = px_comm_dup_copy(c, nc, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Comm_dup)(MPI_Comm comm, MPI_Comm *newcomm)
{
    PX_CS_ENTER();
    PX_OUT_COMM_NULL(newcomm);
    PX_CHECK_INIT("MPI_Comm_dup");
    PX_GET_COMM(c, comm, "MPI_Comm_dup");
    return px_comm_dup(c, newcomm, "MPI_Comm_dup");
}
PX_WEAK(MPI_Comm_dup)

PX_PMPI(MPI_Comm_dup_with_info)(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    PX_CS_ENTER();
    PX_OUT_COMM_NULL(newcomm);
    PX_CHECK_INIT("MPI_Comm_dup_with_info");
    PX_GET_COMM(c, comm, "MPI_Comm_dup_with_info");
    int rc = px_comm_dup(c, newcomm, "MPI_Comm_dup_with_info");
    if (rc != MPI_SUCCESS)
        return rc;
    /* the given hints replace those of the original */
    rc = px_mpi_info_set_comm(px_mpi_comm_get(*newcomm), info);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Comm_dup_with_info",
                            rc == MPI_ERR_INFO ? "invalid info object" : "out of memory");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_dup_with_info)

typedef struct {
    int color, key, rank;
} px_split_t;

static int px_split_cmp(const void *a, const void *b)
{
    const px_split_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank - y->rank;
}

static int px_comm_split(px_mpi_comm_t *c, int color, int key, MPI_Comm *newcomm, const char *fn)
{
    int pair[2] = {color, key};
    int *all;
    uint32_t ctx;
    int rc;

    if (!newcomm)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null argument");
    if (color < 0 && color != MPI_UNDEFINED)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "invalid color %d", color);
    if (c->is_inter)
        return px_mpi_intercomm_split(c, color, key, newcomm, fn);
    all = malloc(sizeof(int) * 2 * (size_t)c->size);
    if (!all)
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    rc = px_mpi_coll_allgather_bytes(pair, all, sizeof(pair), c);
    if (rc == MPI_SUCCESS)
        rc = px_mpi_comm_alloc_ctx(c, &ctx);
    if (rc != MPI_SUCCESS) {
        free(all);
        return px_mpi_error(c, rc, fn, "communication failed");
    }
    if (color == MPI_UNDEFINED) {
        free(all);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    px_split_t *m = malloc(sizeof(*m) * (size_t)c->size);
    int n = 0;
    if (!m) {
        free(all);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    for (int i = 0; i < c->size; i++)
        if (all[2 * i] == color)
            m[n++] = (px_split_t){color, all[2 * i + 1], i};
    qsort(m, (size_t)n, sizeof(*m), px_split_cmp);
    px_mpi_group_t *g = px_mpi_group_new(n);
    if (!g) {
        free(all);
        free(m);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        g->world[i] = c->group->world[m[i].rank];
        if (m[i].rank == c->rank)
            g->rank = i;
    }
    free(all);
    free(m);
    px_mpi_comm_t *nc;
    rc = px_mpi_comm_create_from_group(c, g, ctx, &nc);
    if (rc != MPI_SUCCESS) {
        px_mpi_group_release(g);
        return px_mpi_error(c, rc, fn, "out of memory");
    }
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Comm_split)(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    PX_CS_ENTER();
    PX_OUT_COMM_NULL(newcomm);
    PX_CHECK_INIT("MPI_Comm_split");
    PX_GET_COMM(c, comm, "MPI_Comm_split");
    return px_comm_split(c, color, key, newcomm, "MPI_Comm_split");
}
PX_WEAK(MPI_Comm_split)

/* The color of this process for a split by hardware resource (MPI-4.0
 * 7.4.2): "mpi_shared_memory" is the node (the launcher's; processes of
 * other jobs never share one, and on an inter-communicator with another
 * job nobody does), "PU" the processing unit it runs on now. -2: not a
 * resource type Plexus knows. */
static int px_comm_hw_color(px_mpi_comm_t *c, const char *type)
{
    if (!strcmp(type, "mpi_shared_memory")) {
        if (c->is_inter)
            for (int i = 0; i < c->remote->size; i++)
                if (c->remote->world[i] >= px_comm_boot->size)
                    return MPI_UNDEFINED;
        return px_mpi_comm_node_of(c, c->rank);
    }
    if (!strcmp(type, "PU")) {
        int cpu = sched_getcpu();
        return cpu < 0 ? c->rank : cpu;
    }
    return -2;
}

PX_PMPI(MPI_Comm_split_type)
(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    PX_CS_ENTER();
    PX_OUT_COMM_NULL(newcomm);
    static const char fn[] = "MPI_Comm_split_type";
    PX_CHECK_INIT(fn);
    PX_GET_COMM(c, comm, fn);
    if (info != MPI_INFO_NULL && !px_mpi_info_valid(info))
        return px_mpi_error(c, MPI_ERR_INFO, fn, "invalid info object");
    int color = MPI_UNDEFINED;
    const char *type = NULL;
    if (split_type == MPI_COMM_TYPE_SHARED) {
        type = "mpi_shared_memory";
    } else if (split_type == MPI_COMM_TYPE_HW_GUIDED) {
        /* the resource the info names; none, or one not known: no communicator */
        type = px_mpi_info_value(info, "mpi_hw_resource_type");
    } else if (split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        /* the largest resource that splits comm: its nodes, else the
         * processing units of its one node (alike at every member:
         * local_size == size holds everywhere or nowhere) */
        type = c->is_inter ? NULL : c->local_size < c->size ? "mpi_shared_memory" : "PU";
    } else if (split_type != MPI_UNDEFINED) {
        return px_mpi_error(c, MPI_ERR_ARG, fn, "unknown split type %d", split_type);
    }
    if (type && (color = px_comm_hw_color(c, type)) == -2)
        color = MPI_UNDEFINED, type = NULL;
    if (split_type == MPI_COMM_TYPE_HW_UNGUIDED && type) {
        /* only a strict subset will do: one group of everyone is none */
        int lo = color, hi = color, rc = px_mpi_coll_allreduce(&color, &lo, 1, MPI_INT, MPI_MIN, c);
        if (rc == MPI_SUCCESS)
            rc = px_mpi_coll_allreduce(&color, &hi, 1, MPI_INT, MPI_MAX, c);
        if (rc != MPI_SUCCESS)
            return px_mpi_error(c, rc, fn, "communication failed");
        if (lo == hi)
            color = MPI_UNDEFINED, type = NULL;
    }
    int rc = px_comm_split(c, color, key, newcomm, fn);
    /* which resource an unguided split took, in the caller's info object */
    if (rc == MPI_SUCCESS && split_type == MPI_COMM_TYPE_HW_UNGUIDED && type &&
        *newcomm != MPI_COMM_NULL) {
        if (info != MPI_INFO_NULL)
            PMPI_Info_set(info, "mpi_hw_resource_type", type);
    }
    return rc;
}
PX_WEAK(MPI_Comm_split_type)

PX_PMPI(MPI_Comm_create)(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    PX_CS_ENTER();
    PX_OUT_COMM_NULL(newcomm);
    PX_CHECK_INIT("MPI_Comm_create");
    PX_GET_COMM(c, comm, "MPI_Comm_create");
    px_mpi_group_t *g = px_mpi_group_get(group);
    uint32_t ctx;
    if (!g)
        return px_mpi_error(c, MPI_ERR_GROUP, "MPI_Comm_create", "invalid group");
    if (!newcomm)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Comm_create", "null argument");
    for (int i = 0; i < g->size; i++) {
        int found = 0;
        for (int j = 0; j < c->size && !found; j++)
            found = c->group->world[j] == g->world[i];
        if (!found)
            return px_mpi_error(c, MPI_ERR_GROUP, "MPI_Comm_create",
                                "group is not a subset of the communicator's group");
    }
    if (c->is_inter) /* MPI-3.1 6.4.2: a subset of the local group, see intercomm.c */
        return px_mpi_intercomm_create_sub(c, g, newcomm, "MPI_Comm_create");
    int rc = px_mpi_comm_alloc_ctx(c, &ctx);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Comm_create", "communication failed");
    if (g->rank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    px_mpi_group_t *ng = px_mpi_group_new(g->size);
    if (!ng)
        return px_mpi_error(c, MPI_ERR_NO_MEM, "MPI_Comm_create", "out of memory");
    memcpy(ng->world, g->world, sizeof(int) * (size_t)g->size);
    ng->rank = g->rank;
    px_mpi_comm_t *nc;
    rc = px_mpi_comm_create_from_group(c, ng, ctx, &nc);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Comm_create", "out of memory");
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_create)

PX_PMPI(MPI_Comm_free)(MPI_Comm *comm)
{
    PX_CS_ENTER();
    if (!comm)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Comm_free", "null argument");
    PX_GET_COMM(c, *comm, "MPI_Comm_free");
    if (c == px_mpi_comm_world || c == px_mpi_comm_self)
        return px_mpi_error(c, MPI_ERR_COMM, "MPI_Comm_free",
                            "cannot free a predefined communicator");
    px_mpi_attr_delete_all(c);
    px_mpi_comm_release(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_free)

/* Collective: every member has sent what it will send on comm (the
 * barrier), and what each received is acknowledged at once, so that a
 * process of another job can finalize without waiting for this one. */
PX_PMPI(MPI_Comm_disconnect)(MPI_Comm *comm)
{
    static const char fn[] = "MPI_Comm_disconnect";
    if (!comm)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return px_mpi_error(NULL, MPI_ERR_COMM, fn, "cannot disconnect a predefined communicator");
    int rc = PMPI_Barrier(*comm); /* checks the communicator too */
    if (rc != MPI_SUCCESS)
        return rc;
    {
        /* what the members sent each other has arrived and is acknowledged
         * both ways: nothing needs a member's progress once it returns,
         * even if it then waits outside MPI (on a socket of its own, say) */
        PX_CS_ENTER();
        px_mpi_comm_t *c = px_mpi_comm_get(*comm);
        const px_mpi_group_t *gs[2] = {c->group, c->is_inter ? c->remote : NULL};
        int n = c->group->size + (c->is_inter ? c->remote->size : 0), k = 0;
        int *peers = malloc(sizeof(int) * (size_t)n);
        for (int g = 0; g < 2 && peers; g++)
            for (int i = 0; gs[g] && i < gs[g]->size; i++)
                if (gs[g] != c->group || i != c->rank)
                    peers[k++] = gs[g]->world[i];
        if (peers)
            px_proto_flush_peers(peers, k);
        else
            px_proto_flush(PX_FLUSH_ACKED);
        free(peers);
    }
    rc = PMPI_Comm_free(comm);
    if (rc == MPI_SUCCESS) {
        PX_CS_ENTER();
        px_mpi_dyn_gc(); /* the processes of other jobs it named, if nothing else does */
    }
    return rc;
}
PX_WEAK(MPI_Comm_disconnect)

PX_PMPI(MPI_Comm_compare)(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    PX_CS_ENTER();
    PX_GET_COMM(a, comm1, "MPI_Comm_compare");
    PX_GET_COMM(b, comm2, "MPI_Comm_compare");
    if (!result)
        return px_mpi_error(a, MPI_ERR_ARG, "MPI_Comm_compare", "null argument");
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->is_inter != b->is_inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int g = px_mpi_group_compare(a->group, b->group);
    if (a->is_inter) { /* both the local and the remote groups must match */
        int r = px_mpi_group_compare(a->remote, b->remote);
        if (g == MPI_UNEQUAL || r == MPI_UNEQUAL)
            g = MPI_UNEQUAL;
        else if (g == MPI_SIMILAR || r == MPI_SIMILAR)
            g = MPI_SIMILAR;
    }
    *result = g == MPI_IDENT ? MPI_CONGRUENT : g;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_compare)

PX_PMPI(MPI_Comm_group)(MPI_Comm comm, MPI_Group *group)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_group");
    if (!group)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Comm_group", "null argument");
    c->group->refs++;
    *group = px_mpi_group_handle(c->group);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_group)

PX_PMPI(MPI_Comm_test_inter)(MPI_Comm comm, int *flag)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_test_inter");
    if (!flag)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Comm_test_inter", "null argument");
    *flag = c->is_inter;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_test_inter)

PX_PMPI(MPI_Comm_set_name)(MPI_Comm comm, const char *name)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_set_name");
    if (!name)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Comm_set_name", "null argument");
    snprintf(c->name, sizeof(c->name), "%s", name);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_set_name)

PX_PMPI(MPI_Comm_get_name)(MPI_Comm comm, char *name, int *resultlen)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_get_name");
    if (!name || !resultlen)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Comm_get_name", "null argument");
    *resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", c->name);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_get_name)

/* MPI_Comm_idup: the context id is agreed on in the background, as
 * px_mpi_comm_agree_ctx does it (proposals, then checks, again above the
 * agreed ids if a member found them taken), each step the largest value
 * over the members, on a collective tag taken when the call is made: an
 * allreduce, or over an inter-communicator's two groups, an allreduce in
 * each group, a swap between the leaders and a bcast in each group (as
 * px_mpi_intercomm_dup does it at once). The duplicate's hints, topology
 * and attributes are copied at the call, and the program gets the handle
 * when the request completes. Two duplications that overlap (each process
 * a member of both, started in different orders) both complete. */
typedef struct px_idup {
    px_mpi_comm_t *parent, *nc;
    MPI_Comm *out;
    int tag, tag_local; /* on parent (an inter-communicator's leaders: PX_INTER_BG_TAG),
                         * and on an inter-communicator's local group */
    uint32_t n;         /* context ids: 2, or 4 for an inter-communicator */
    int phase;          /* 0: proposals, 1: checks */
    uint32_t from, v;
    int send, recv, clash;
    /* inter-communicators: where the largest value is (0: local allreduce,
     * 1: leaders' swap, 2: local bcast), the group's largest, the other
     * group's, and the leaders' requests */
    int sub, lmax, rmax;
    px_mpi_req_t *sr, *rr;
    px_ctx_claim_t claim;
    int claimed;
    void *sched; /* the allreduce or bcast under way */
} px_idup_t;

static void px_idup_unclaim(px_idup_t *d)
{
    if (d->claimed)
        px_ctx_unclaim(&d->claim);
    d->claimed = 0;
}

/* Starts taking the largest d->send over the members into d->recv. */
static int px_idup_max_start(px_idup_t *d)
{
    px_mpi_comm_t *c = d->parent;
    if (c->is_inter) {
        d->sub = 0;
        d->sched = px_mpi_coll_iallreduce_tag(&d->send, &d->lmax, 1, MPI_INT, MPI_MAX,
                                              c->local_comm, d->tag_local);
    } else {
        d->sched = px_mpi_coll_iallreduce_tag(&d->send, &d->recv, 1, MPI_INT, MPI_MAX, c, d->tag);
    }
    return d->sched ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* The leaders' swap: 1 when both requests are done (*err their outcome). */
static int px_idup_swap_test(px_idup_t *d, int *err)
{
    if (!px_mpi_req_is_done(d->rr) || !px_mpi_req_is_done(d->sr))
        return 0;
    int rs = px_mpi_req_complete(d->sr, MPI_STATUS_IGNORE);
    int rc = px_mpi_req_complete(d->rr, MPI_STATUS_IGNORE);
    px_mpi_req_free(d->sr);
    px_mpi_req_free(d->rr);
    d->sr = d->rr = NULL;
    *err = rc != MPI_SUCCESS ? rc : rs;
    return 1;
}

/* Advances px_idup_max_start's work: 1 when d->recv holds the largest
 * value or *err an error, 0 while under way. */
static int px_idup_max_test(px_idup_t *d, int *err)
{
    px_mpi_comm_t *c = d->parent;
    *err = MPI_SUCCESS;
    for (;;) {
        if (d->sched) {
            if (!px_mpi_coll_sched_test(d->sched, err))
                return 0;
            d->sched = NULL;
            if (*err != MPI_SUCCESS || !c->is_inter)
                return 1;
            if (d->sub == 2) {
                d->recv = d->lmax > d->rmax ? d->lmax : d->rmax;
                return 1;
            }
            /* the group's largest is known: the leaders swap theirs */
            d->sub = 1;
            d->rmax = 0;
            if (c->rank == 0) {
                int tag = PX_INTER_BG_TAG(d->tag);
                *err = px_mpi_irecv_internal(&d->rr, &d->rmax, 1, MPI_INT, 0, tag, c, c->ctx + 1);
                if (*err != MPI_SUCCESS)
                    return 1;
                *err = px_mpi_isend_internal(&d->sr, &d->lmax, 1, MPI_INT, 0, tag, c, c->ctx + 1,
                                             PX_PROTO_MODE_STD);
                if (*err != MPI_SUCCESS) {
                    px_mpi_req_wait(d->rr);
                    px_mpi_req_free(d->rr);
                    d->rr = NULL;
                    return 1;
                }
            }
        }
        /* sub 1: the leader waits for the swap, then tells its group */
        if (d->rr && !px_idup_swap_test(d, err))
            return 0;
        if (*err != MPI_SUCCESS)
            return 1;
        d->sub = 2;
        d->sched = px_mpi_coll_ibcast_tag(&d->rmax, 1, MPI_INT, 0, c->local_comm, d->tag_local);
        if (!d->sched) {
            *err = MPI_ERR_NO_MEM;
            return 1;
        }
    }
}

/* Starts a round of proposals: ids free here, claimed meanwhile. */
static int px_idup_propose(px_idup_t *d)
{
    uint32_t lo = d->from > px_next_ctx ? d->from : px_next_ctx;
    const px_ctx_claim_t *o;
    while ((o = px_ctx_overlap(lo, d->n)))
        lo = o->lo + o->n;
    if (lo > 0x7ffffff0u - d->n)
        return MPI_ERR_INTERN;
    px_ctx_claim(&d->claim, lo, d->n);
    d->claimed = 1;
    d->send = (int)lo;
    d->phase = 0;
    return px_idup_max_start(d);
}

/* The largest value of the current round is known: the next step. 1 when
 * the duplicate is ready, 0 when another round is under way, or an error. */
static int px_idup_step(px_idup_t *d)
{
    px_idup_unclaim(d);
    if (d->phase == 0) {
        if (d->recv < 0 || (unsigned)d->recv > 0x7ffffff0u - d->n)
            return MPI_ERR_INTERN;
        d->v = (uint32_t)d->recv;
        d->clash = d->v < px_next_ctx || px_ctx_overlap(d->v, d->n);
        if (!d->clash) {
            px_ctx_claim(&d->claim, d->v, d->n);
            d->claimed = 1;
        }
        d->send = d->clash;
        d->phase = 1;
        int rc = px_idup_max_start(d);
        return rc == MPI_SUCCESS ? 0 : rc;
    }
    if (d->recv) { /* taken somewhere: again above */
        d->from = d->v + d->n;
        int rc = px_idup_propose(d);
        return rc == MPI_SUCCESS ? 0 : rc;
    }
    if (d->v + d->n > px_next_ctx)
        px_next_ctx = d->v + d->n;
    d->nc->ctx = d->v;
    if (d->nc->local_comm)
        d->nc->local_comm->ctx = d->v + 2;
    return 1;
}

static void px_idup_end(px_mpi_req_t *r, px_idup_t *d, int rc)
{
    px_idup_unclaim(d);
    if (rc == MPI_SUCCESS) {
        *d->out = d->nc->handle;
    } else {
        px_mpi_attr_delete_all(d->nc);
        px_mpi_comm_release(d->nc);
        *d->out = MPI_COMM_NULL;
    }
    px_mpi_comm_release(d->parent);
    r->st_error = rc;
    r->sched = NULL;
    free(d);
}

static int px_idup_poll(px_mpi_req_t *r)
{
    px_idup_t *d = r->sched;
    if (!d)
        return 1;
    for (;;) {
        int err;
        if (!px_idup_max_test(d, &err))
            return 0;
        int rc = err != MPI_SUCCESS ? err : px_idup_step(d);
        if (rc == 0)
            continue;
        px_idup_end(r, d, rc == 1 ? MPI_SUCCESS : rc);
        return 1;
    }
}

/* The duplicate of c without its context ids (set once agreed). */
static int px_idup_shell(px_mpi_comm_t *c, px_mpi_comm_t **nc_p, const char *fn)
{
    if (!c->is_inter)
        return px_comm_dup_shell(c, 0, nc_p, fn);
    c->group->refs++;
    c->remote->refs++;
    int rc = px_mpi_intercomm_build(c, c->group, c->remote, 0, c->inter_low, nc_p);
    return rc == MPI_SUCCESS ? rc : px_mpi_error(c, rc, fn, "out of memory");
}

/* info: MPI_INFO_NULL, or hints that replace the original's on the
 * duplicate (MPI_Comm_idup_with_info). */
static int px_comm_idup(px_mpi_comm_t *c, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request,
                        const char *fn)
{
    if (!request || !newcomm)
        return px_mpi_error(c, MPI_ERR_ARG, fn, "null argument");
    px_idup_t *d = calloc(1, sizeof(*d));
    px_mpi_req_t *r = d ? px_mpi_req_new(PX_MPI_REQ_COLL) : NULL;
    if (!r) {
        free(d);
        return px_mpi_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int rc = px_idup_shell(c, &d->nc, fn);
    if (rc == MPI_SUCCESS)
        rc = px_comm_dup_copy(c, d->nc, fn);
    if (rc == MPI_SUCCESS && info != MPI_INFO_NULL &&
        (rc = px_mpi_info_set_comm(d->nc, info)) != MPI_SUCCESS) {
        px_mpi_attr_delete_all(d->nc);
        px_mpi_comm_release(d->nc);
        rc = px_mpi_error(c, rc, fn, rc == MPI_ERR_INFO ? "invalid info object" : "out of memory");
    }
    if (rc != MPI_SUCCESS) {
        free(d);
        px_mpi_req_free(r);
        return rc;
    }
    d->parent = c;
    c->refs++;
    d->out = newcomm;
    d->n = c->is_inter ? 4 : 2;
    d->tag = px_mpi_coll_tag_take(c);
    if (c->is_inter)
        d->tag_local = px_mpi_coll_tag_take(c->local_comm);
    r->comm = c;
    c->refs++;
    r->sched = d;
    r->poll = px_idup_poll;
    r->st_source = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    r->dtype = MPI_DATATYPE_NULL;
    rc = px_idup_propose(d);
    if (rc != MPI_SUCCESS) {
        px_idup_end(r, d, rc);
        px_mpi_req_free(r);
        return px_mpi_error(c, rc, fn, "cannot start the agreement on a context id");
    }
    px_mpi_req_poll_start(r);
    *request = r->handle;
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Comm_idup)(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    PX_CS_ENTER();
    PX_CHECK_INIT("MPI_Comm_idup");
    PX_GET_COMM(c, comm, "MPI_Comm_idup");
    return px_comm_idup(c, MPI_INFO_NULL, newcomm, request, "MPI_Comm_idup");
}
PX_WEAK(MPI_Comm_idup)

PX_PMPI(MPI_Comm_idup_with_info)
(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    PX_CS_ENTER();
    PX_CHECK_INIT("MPI_Comm_idup_with_info");
    PX_GET_COMM(c, comm, "MPI_Comm_idup_with_info");
    return px_comm_idup(c, info, newcomm, request, "MPI_Comm_idup_with_info");
}
PX_WEAK(MPI_Comm_idup_with_info)
