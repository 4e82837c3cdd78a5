/* Categories: one per layer of Plexus (util < boot < net < rail < chan <
 * proto < mpi) and one per group of the parameter table inside a layer
 * ("net.tcp" is a category of its own inside "net"). Each holds the
 * control variables of its group, the performance variables and the
 * events of its layer. They are made while the variables are set up and
 * never change afterwards, so MPI_T_category_changed always returns the
 * same number. */
#include "tool_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct px_t_list {
    int *v;
    int n, cap;
} px_t_list_t;

typedef struct px_t_cat {
    char name[32];
    const char *desc;
    px_t_list_t cvars, pvars, events, cats;
} px_t_cat_t;

static px_t_cat_t *px_t_cats;
static int px_t_ncat, px_t_capcat;

static const struct {
    const char *name, *desc;
} px_t_cat_known[] = {
    {"util", "Logging and profiling (src/util)"},
    {"boot", "How the processes of a job meet (src/boot)"},
    {"net", "Transports, and which one carries each message (src/net)"},
    {"rail", "Network peers over every rail and path: subchannels, striping, failure detection "
             "and failover (src/rail)"},
    {"chan", "Channels: what carries each message to each peer (src/chan)"},
    {"proto", "Eager and rendezvous protocols, matching, one-sided operations (src/proto)"},
    {"mpi", "The MPI layer (src/mpi)"},
    {"net.shm", "Shared memory between the processes of a machine (src/net/shm)"},
    {"net.tcp", "TCP connections (src/net/tcp)"},
    {"net.udp", "UDP datagrams made reliable by the rail layer (src/net/udp)"},
    {"progress", "How a waiting process polls, and where each process runs"},
    {"mpi.coll", "Collective algorithms and their selection (src/mpi/coll)"},
    {"mpi.io", "MPI-IO: how collective file accesses went (src/mpi/io)"},
};
#define PX_T_NKNOWN ((int)(sizeof(px_t_cat_known) / sizeof(px_t_cat_known[0])))

static void px_t_list_add(px_t_list_t *l, int x)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        int *v = realloc(l->v, sizeof(int) * (size_t)cap);
        if (!v)
            return; /* the variable stays out of its category */
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
}

static const char *px_t_cat_name(int i) { return px_t_cats[i].name; }

static int px_t_cat_new(const char *name)
{
    const char *dot = strrchr(name, '.');
    int parent = -1;
    if (dot) {
        char up[32];
        snprintf(up, sizeof(up), "%.*s", (int)(dot - name), name);
        parent = px_t_cat_of(up);
    }
    if (px_t_ncat == px_t_capcat) {
        int cap = px_t_capcat ? 2 * px_t_capcat : 16;
        px_t_cat_t *c = realloc(px_t_cats, sizeof(*c) * (size_t)cap);
        if (!c)
            return -1;
        px_t_cats = c;
        px_t_capcat = cap;
    }
    px_t_cat_t *c = &px_t_cats[px_t_ncat];
    memset(c, 0, sizeof(*c));
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->desc = "Parameters of this group (docs/params.md)";
    for (int k = 0; k < PX_T_NKNOWN; k++)
        if (!strcmp(name, px_t_cat_known[k].name))
            c->desc = px_t_cat_known[k].desc;
    if (parent >= 0)
        px_t_list_add(&px_t_cats[parent].cats, px_t_ncat);
    return px_t_ncat++;
}

int px_t_cat_of(const char *name)
{
    if (!px_t_ncat) /* the layers first, in their order */
        for (int k = 0; k < PX_T_NKNOWN && !strchr(px_t_cat_known[k].name, '.'); k++)
            px_t_cat_new(px_t_cat_known[k].name);
    int i;
    return px_t_lookup(name, &i, px_t_ncat, px_t_cat_name) == MPI_SUCCESS ? i : px_t_cat_new(name);
}

void px_t_cat_add_cvar(int cat, int cvar)
{
    if (cat >= 0)
        px_t_list_add(&px_t_cats[cat].cvars, cvar);
}

void px_t_cat_add_pvar(int cat, int pvar)
{
    if (cat >= 0)
        px_t_list_add(&px_t_cats[cat].pvars, pvar);
}

void px_t_cat_add_event(int cat, int event)
{
    if (cat >= 0)
        px_t_list_add(&px_t_cats[cat].events, event);
}

PX_PMPI(MPI_T_category_get_num)(int *num_cat)
{
    PX_T_BEGIN();
    if (!num_cat)
        return MPI_T_ERR_INVALID;
    *num_cat = px_t_ncat;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_category_get_num)

PX_PMPI(MPI_T_category_get_info)
(int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
 int *num_pvars, int *num_categories)
{
    PX_T_BEGIN();
    if (cat_index < 0 || cat_index >= px_t_ncat)
        return MPI_T_ERR_INVALID_INDEX;
    const px_t_cat_t *c = &px_t_cats[cat_index];
    px_t_str(name, name_len, c->name);
    px_t_str(desc, desc_len, c->desc);
    if (num_cvars)
        *num_cvars = c->cvars.n;
    if (num_pvars)
        *num_pvars = c->pvars.n;
    if (num_categories)
        *num_categories = c->cats.n;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_category_get_info)

PX_PMPI(MPI_T_category_get_index)(const char *name, int *cat_index)
{
    PX_T_BEGIN();
    return px_t_lookup(name, cat_index, px_t_ncat, px_t_cat_name);
}
PX_WEAK(MPI_T_category_get_index)

/* The first len entries of one list of category cat_index into indices. */
static int px_t_cat_list(int cat_index, int len, int indices[], size_t which)
{
    if (cat_index < 0 || cat_index >= px_t_ncat)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    const px_t_list_t *l = (const px_t_list_t *)((const char *)&px_t_cats[cat_index] + which);
    for (int i = 0; i < len && i < l->n; i++)
        indices[i] = l->v[i];
    return MPI_SUCCESS;
}

PX_PMPI(MPI_T_category_get_cvars)(int cat_index, int len, int indices[])
{
    PX_T_BEGIN();
    return px_t_cat_list(cat_index, len, indices, offsetof(px_t_cat_t, cvars));
}
PX_WEAK(MPI_T_category_get_cvars)

PX_PMPI(MPI_T_category_get_pvars)(int cat_index, int len, int indices[])
{
    PX_T_BEGIN();
    return px_t_cat_list(cat_index, len, indices, offsetof(px_t_cat_t, pvars));
}
PX_WEAK(MPI_T_category_get_pvars)

PX_PMPI(MPI_T_category_get_categories)(int cat_index, int len, int indices[])
{
    PX_T_BEGIN();
    return px_t_cat_list(cat_index, len, indices, offsetof(px_t_cat_t, cats));
}
PX_WEAK(MPI_T_category_get_categories)

PX_PMPI(MPI_T_category_get_events)(int cat_index, int len, int indices[])
{
    PX_T_BEGIN();
    return px_t_cat_list(cat_index, len, indices, offsetof(px_t_cat_t, events));
}
PX_WEAK(MPI_T_category_get_events)

PX_PMPI(MPI_T_category_get_num_events)(int cat_index, int *num_events)
{
    PX_T_BEGIN();
    if (cat_index < 0 || cat_index >= px_t_ncat)
        return MPI_T_ERR_INVALID_INDEX;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = px_t_cats[cat_index].events.n;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_category_get_num_events)

PX_PMPI(MPI_T_category_changed)(int *update_number)
{
    PX_T_BEGIN();
    if (!update_number)
        return MPI_T_ERR_INVALID;
    *update_number = 1; /* set up once, never changed since */
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_category_changed)
