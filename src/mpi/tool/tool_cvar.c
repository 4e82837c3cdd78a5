/* Control variables: one per row of the parameter table
 * (src/util/params.def), named as its environment variable (PX_NET), in
 * the table's order, so that `pxinfo --params` and MPI_T list the same
 * variables. A read returns the value in effect: the field the layers read
 * (or, for a size left "auto", the size the layer chose once it has).
 *
 * Most parameters are read once, while MPI_Init sets a layer up: those
 * are MPI_T_SCOPE_READONLY, set through the environment only. The few the
 * layers read again at every use can be written, any time (before MPI_Init
 * too); see px_t_writable. */
#include "tool_impl.h"
#include "../coll/coll_impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- what may be written ---------- */

enum { PX_T_AFTER_NONE, PX_T_AFTER_LOG, PX_T_AFTER_COLL };

/* Parameters read at every use, so that a new value takes effect at the
 * next one (the rows' own limits still apply). LOCAL: this process alone;
 * ALL_EQ: every process of the job must set the same value before the next
 * collective (each algorithm assumes the others run it alike). The
 * collective algorithms (every mpi.coll row named *_algorithm) are ALL_EQ
 * too. */
static const struct {
    const char *name;
    int scope;
    int after;
} px_t_writable[] = {
    {"log_level", MPI_T_SCOPE_LOCAL, PX_T_AFTER_LOG},
    {"log_subsys", MPI_T_SCOPE_LOCAL, PX_T_AFTER_LOG},
    {"profile", MPI_T_SCOPE_LOCAL, PX_T_AFTER_NONE}, /* read in MPI_Finalize */
    {"rail_stripe_min", MPI_T_SCOPE_LOCAL, PX_T_AFTER_NONE},
    {"rail_inflight", MPI_T_SCOPE_LOCAL, PX_T_AFTER_NONE},
    {"rail_stripe_unit", MPI_T_SCOPE_LOCAL, PX_T_AFTER_NONE},
    {"rail_alpha", MPI_T_SCOPE_LOCAL, PX_T_AFTER_NONE},
    {"rail_min_share", MPI_T_SCOPE_LOCAL, PX_T_AFTER_NONE},
    {"rail_window", MPI_T_SCOPE_LOCAL, PX_T_AFTER_NONE},
    {"rail_bss_batch", MPI_T_SCOPE_LOCAL, PX_T_AFTER_NONE},
    {"rail_retry", MPI_T_SCOPE_LOCAL, PX_T_AFTER_NONE},
    {"rail_ack_every", MPI_T_SCOPE_LOCAL, PX_T_AFTER_NONE},
    {"rail_probe_max", MPI_T_SCOPE_LOCAL, PX_T_AFTER_NONE},
    {"partition_timeout", MPI_T_SCOPE_LOCAL, PX_T_AFTER_NONE},
    {"bcast_knomial_radix", MPI_T_SCOPE_ALL_EQ, PX_T_AFTER_NONE},
    {"bcast_pipeline_segment", MPI_T_SCOPE_ALL_EQ, PX_T_AFTER_NONE},
};
#define PX_T_NWRITABLE ((int)(sizeof(px_t_writable) / sizeof(px_t_writable[0])))

/* The verbosity of a group's parameters: what a user sets first, what a
 * tuner sets. */
static const struct {
    const char *group;
    int verbosity;
} px_t_group_verbosity[] = {
    {"util", MPI_T_VERBOSITY_USER_BASIC},      {"boot", MPI_T_VERBOSITY_USER_BASIC},
    {"net", MPI_T_VERBOSITY_USER_BASIC},       {"rail", MPI_T_VERBOSITY_TUNER_BASIC},
    {"progress", MPI_T_VERBOSITY_TUNER_BASIC}, {"mpi.coll", MPI_T_VERBOSITY_TUNER_BASIC},
};

typedef struct px_t_cvar {
    char name[64];
    char *desc;
    int verbosity;
    int scope;
    int after;
    MPI_Datatype type;
    struct MPIR_T_enum_s *en; /* ENUM rows */
    char *owned;              /* STRING rows written through MPI_T: the value */
} px_t_cvar_t;

static px_t_cvar_t *px_t_cvars;
static int px_t_ncvar;
static struct MPIR_T_enum_s *px_t_enums;
static int px_t_nenum;

/* Longest string a writable STRING variable takes through MPI_T. */
#define PX_T_STRING_MAX 256

static const char *const px_t_sub_state_items[] = {"UP", "SUSPECT", "DOWN"};
struct MPIR_T_enum_s px_t_enum_sub_state = {"rail_subchannel_state", -1, 3, px_t_sub_state_items};

const struct MPIR_T_enum_s *px_t_enum_get(MPI_T_enum e)
{
    if (e == &px_t_enum_sub_state)
        return e;
    for (int i = 0; i < px_t_nenum; i++)
        if (e == &px_t_enums[i])
            return e;
    return NULL;
}

static MPI_Datatype px_t_cvar_type(px_param_type_t t)
{
    switch (t) {
    case PX_PT_SIZE:
        return MPI_UNSIGNED_LONG_LONG;
    case PX_PT_DOUBLE:
    case PX_PT_DURATION:
        return MPI_DOUBLE;
    case PX_PT_STRING:
        return MPI_CHAR;
    default: /* BOOL, INT, ENUM */
        return MPI_INT;
    }
}

static int px_t_ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

/* What MPI_T adds to a row's description: how its values read. */
static char *px_t_cvar_desc(const px_param_desc_t *d)
{
    char extra[160] = "";
    if (d->type == PX_PT_DURATION) {
        const char *u = strstr(d->values, "unit=");
        snprintf(extra, sizeof(extra), " (MPI_T: a number of %.*s)",
                 u ? (int)strcspn(u + 5, " ") : 1, u ? u + 5 : "s");
    } else if (d->type == PX_PT_SIZE && !strcmp(d->def, "auto")) {
        snprintf(extra, sizeof(extra),
                 " (MPI_T: %llu stands for auto until the layer that uses it has chosen)",
                 (unsigned long long)PX_PARAM_SIZE_AUTO);
    } else if (d->type == PX_PT_BOOL) {
        snprintf(extra, sizeof(extra), " (MPI_T: 1 or 0)");
    }
    size_t n = strlen(d->doc) + strlen(extra) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s", d->doc, extra);
    return s;
}

void px_t_cvar_setup(void)
{
    size_t n = px_param_count(), ne = 1;
    for (size_t i = 0; i < n; i++)
        ne += px_param_row(i)->type == PX_PT_ENUM;
    px_t_cvars = calloc(n, sizeof(*px_t_cvars));
    px_t_enums = calloc(ne, sizeof(*px_t_enums));
    if (!px_t_cvars || !px_t_enums) {
        free(px_t_cvars);
        free(px_t_enums);
        px_t_cvars = NULL;
        px_t_enums = NULL;
        return; /* no variables rather than no interface */
    }
    for (int i = 0; i < (int)n; i++) {
        const px_param_desc_t *d = px_param_row((size_t)i);
        px_t_cvar_t *v = &px_t_cvars[i];
        px_param_env_name(d->name, v->name, sizeof(v->name));
        v->desc = px_t_cvar_desc(d);
        v->type = px_t_cvar_type(d->type);
        v->verbosity = MPI_T_VERBOSITY_TUNER_DETAIL;
        for (size_t g = 0; g < sizeof(px_t_group_verbosity) / sizeof(px_t_group_verbosity[0]); g++)
            if (!strcmp(d->group, px_t_group_verbosity[g].group))
                v->verbosity = px_t_group_verbosity[g].verbosity;
        v->scope = MPI_T_SCOPE_READONLY;
        for (int w = 0; w < PX_T_NWRITABLE; w++)
            if (!strcmp(d->name, px_t_writable[w].name)) {
                v->scope = px_t_writable[w].scope;
                v->after = px_t_writable[w].after;
            }
        if (!strcmp(d->group, "mpi.coll") && px_t_ends_with(d->name, "_algorithm")) {
            v->scope = MPI_T_SCOPE_ALL_EQ;
            v->after = PX_T_AFTER_COLL;
        }
        if (d->type == PX_PT_ENUM) {
            v->en = &px_t_enums[px_t_nenum++];
            *v->en = (struct MPIR_T_enum_s){v->name, i, px_param_enum_count((size_t)i), NULL};
        }
        px_t_cat_add_cvar(px_t_cat_of(d->group), i);
    }
    px_t_ncvar = (int)n;
}

/* ---------- queries ---------- */

PX_PMPI(MPI_T_enum_get_info)(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    PX_T_BEGIN();
    const struct MPIR_T_enum_s *e = px_t_enum_get(enumtype);
    if (!e)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!num)
        return MPI_T_ERR_INVALID;
    *num = e->n;
    px_t_str(name, name_len, e->name);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_enum_get_info)

PX_PMPI(MPI_T_enum_get_item)(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len)
{
    PX_T_BEGIN();
    const struct MPIR_T_enum_s *e = px_t_enum_get(enumtype);
    char item[64];
    if (!e)
        return MPI_T_ERR_INVALID_HANDLE;
    if (indx < 0 || indx >= e->n)
        return MPI_T_ERR_INVALID_INDEX;
    if (!value)
        return MPI_T_ERR_INVALID;
    if (e->param >= 0)
        px_param_enum_item((size_t)e->param, indx, item, sizeof(item));
    else
        snprintf(item, sizeof(item), "%s", e->items[indx]);
    *value = indx;
    px_t_str(name, name_len, item);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_enum_get_item)

PX_PMPI(MPI_T_cvar_get_num)(int *num_cvar)
{
    PX_T_BEGIN();
    if (!num_cvar)
        return MPI_T_ERR_INVALID;
    *num_cvar = px_t_ncvar;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_cvar_get_num)

PX_PMPI(MPI_T_cvar_get_info)
(int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
 MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope)
{
    PX_T_BEGIN();
    if (cvar_index < 0 || cvar_index >= px_t_ncvar)
        return MPI_T_ERR_INVALID_INDEX;
    const px_t_cvar_t *v = &px_t_cvars[cvar_index];
    px_t_str(name, name_len, v->name);
    px_t_str(desc, desc_len, v->desc);
    if (verbosity)
        *verbosity = v->verbosity;
    if (datatype)
        *datatype = v->type;
    if (enumtype)
        *enumtype = v->en ? v->en : MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = v->scope;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_cvar_get_info)

static const char *px_t_cvar_name(int i) { return px_t_cvars[i].name; }

PX_PMPI(MPI_T_cvar_get_index)(const char *name, int *cvar_index)
{
    PX_T_BEGIN();
    return px_t_lookup(name, cvar_index, px_t_ncvar, px_t_cvar_name);
}
PX_WEAK(MPI_T_cvar_get_index)

/* ---------- handles ---------- */

struct MPIR_T_cvar_handle_s {
    px_t_link_t link;
    int idx;
    int count;
};

static px_t_link_t *px_t_cvar_handles;

static const char *px_t_cvar_string(int i)
{
    const char *s =
        *(const char *const *)((const char *)&px_params + px_param_row((size_t)i)->offset);
    return s ? s : "";
}

PX_PMPI(MPI_T_cvar_handle_alloc)
(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    PX_T_BEGIN();
    (void)obj_handle; /* every variable is bound to no object */
    if (cvar_index < 0 || cvar_index >= px_t_ncvar)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    struct MPIR_T_cvar_handle_s *h = malloc(sizeof(*h));
    if (!h)
        return MPI_T_ERR_MEMORY;
    h->idx = cvar_index;
    h->count = 1;
    if (px_t_cvars[cvar_index].type == MPI_CHAR) {
        /* room for any value it may take: the present one, or what a
         * write may store */
        h->count = (int)strlen(px_t_cvar_string(cvar_index)) + 1;
        if (px_t_cvars[cvar_index].scope != MPI_T_SCOPE_READONLY && h->count < PX_T_STRING_MAX)
            h->count = PX_T_STRING_MAX;
    }
    px_t_list_push(&px_t_cvar_handles, h);
    *handle = h;
    *count = h->count;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_cvar_handle_alloc)

PX_PMPI(MPI_T_cvar_handle_free)(MPI_T_cvar_handle *handle)
{
    PX_T_BEGIN();
    if (!handle || px_t_list_remove(&px_t_cvar_handles, *handle) != 0)
        return MPI_T_ERR_INVALID_HANDLE;
    free(*handle);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_cvar_handle_free)

void px_t_cvar_release_all(void)
{
    void *h;
    while ((h = px_t_list_pop(&px_t_cvar_handles)))
        free(h);
}

PX_PMPI(MPI_T_cvar_read)(MPI_T_cvar_handle handle, void *buf)
{
    PX_T_BEGIN();
    const struct MPIR_T_cvar_handle_s *h = px_t_list_find(px_t_cvar_handles, handle);
    if (!h)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    const px_param_desc_t *d = px_param_row((size_t)h->idx);
    const void *f = (const char *)&px_params + d->offset;
    switch (d->type) {
    case PX_PT_BOOL:
        *(int *)buf = *(const int *)f;
        break;
    case PX_PT_INT: {
        long v = *(const long *)f;
        *(int *)buf = v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : (int)v;
        break;
    }
    case PX_PT_SIZE: {
        uint64_t v = *(const size_t *)f, chosen;
        if (v == PX_PARAM_SIZE_AUTO && px_proto_size_in_effect(d->name, &chosen))
            v = chosen;
        *(unsigned long long *)buf = v;
        break;
    }
    case PX_PT_DOUBLE:
    case PX_PT_DURATION:
        *(double *)buf = *(const double *)f;
        break;
    case PX_PT_ENUM:
        *(int *)buf = px_param_enum_current((size_t)h->idx);
        break;
    case PX_PT_STRING: {
        int len = h->count;
        px_t_str(buf, &len, px_t_cvar_string(h->idx));
        break;
    }
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_cvar_read)

PX_PMPI(MPI_T_cvar_write)(MPI_T_cvar_handle handle, const void *buf)
{
    PX_T_BEGIN();
    const struct MPIR_T_cvar_handle_s *h = px_t_list_find(px_t_cvar_handles, handle);
    if (!h)
        return MPI_T_ERR_INVALID_HANDLE;
    px_t_cvar_t *v = &px_t_cvars[h->idx];
    if (v->scope == MPI_T_SCOPE_READONLY)
        return MPI_T_ERR_CVAR_SET_NEVER;
    if (!buf)
        return MPI_T_ERR_INVALID;
    const px_param_desc_t *d = px_param_row((size_t)h->idx);
    char text[PX_T_STRING_MAX], err[600];
    char *owned = NULL;
    const char *value = text;
    switch (d->type) {
    case PX_PT_BOOL:
    case PX_PT_INT:
        snprintf(text, sizeof(text), "%d", *(const int *)buf);
        break;
    case PX_PT_SIZE: {
        unsigned long long z = *(const unsigned long long *)buf;
        if (z == (unsigned long long)PX_PARAM_SIZE_AUTO)
            snprintf(text, sizeof(text), "auto");
        else
            snprintf(text, sizeof(text), "%llu", z);
        break;
    }
    case PX_PT_DOUBLE:
    case PX_PT_DURATION:
        snprintf(text, sizeof(text), "%.17g", *(const double *)buf);
        break;
    case PX_PT_ENUM:
        if (px_param_enum_item((size_t)h->idx, *(const int *)buf, text, sizeof(text)) != 0)
            return MPI_T_ERR_INVALID;
        break;
    case PX_PT_STRING:
        /* the field keeps the pointer: the value lives here until replaced */
        owned = strndup(buf, (size_t)h->count);
        if (!owned)
            return MPI_T_ERR_MEMORY;
        value = owned;
        break;
    }
    if (px_param_set_row((size_t)h->idx, value, err, sizeof(err)) != PX_OK) {
        free(owned);
        return MPI_T_ERR_INVALID;
    }
    if (owned) {
        free(v->owned);
        v->owned = owned;
    }
    if (v->after == PX_T_AFTER_LOG)
        px_log_init();
    else if (v->after == PX_T_AFTER_COLL)
        px_coll_forced_reset();
    return MPI_SUCCESS;
}
PX_WEAK(MPI_T_cvar_write)
