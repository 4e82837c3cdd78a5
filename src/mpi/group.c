/* Groups: ordered sets of world ranks. */
#include "mpi_impl.h"

#include <stdlib.h>

static px_htab_t px_group_tab;
#define PX_GROUP_DYN 0x88000000u
static px_mpi_group_t *px_group_empty;

px_mpi_group_t *px_mpi_group_new(int size)
{
    px_mpi_group_t *g = calloc(1, sizeof(*g) + sizeof(int) * (size_t)(size > 0 ? size : 1));
    if (!g)
        return NULL;
    g->refs = 1;
    g->size = size;
    g->rank = MPI_UNDEFINED;
    g->handle = MPI_GROUP_NULL;
    return g;
}

static void px_group_set_rank(px_mpi_group_t *g)
{
    int me = px_mpi_comm_world ? px_mpi_comm_world->rank : 0;
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == me) {
            g->rank = i;
            break;
        }
}

px_mpi_group_t *px_mpi_group_get(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY) {
        if (!px_group_empty) {
            px_group_empty = px_mpi_group_new(0);
            if (px_group_empty) {
                px_group_empty->handle = MPI_GROUP_EMPTY;
                px_group_empty->refs = 1 << 30;
            }
        }
        return px_group_empty;
    }
    if (PX_HANDLE_HI(h) != PX_GROUP_DYN)
        return NULL;
    return px_htab_get(&px_group_tab, PX_HANDLE_IDX(h));
}

int px_mpi_group_handle(px_mpi_group_t *g)
{
    if (g->handle == MPI_GROUP_NULL) {
        int idx = px_htab_add(&px_group_tab, g);
        if (idx < 0)
            return MPI_GROUP_NULL;
        g->handle = (MPI_Group)(PX_GROUP_DYN | (unsigned)idx);
    }
    return g->handle;
}

void px_mpi_group_mark(const px_mpi_group_t *g, uint8_t *named, int base, int room)
{
    for (int i = 0; g && i < g->size; i++)
        if (g->world[i] >= base && g->world[i] < base + room)
            named[g->world[i] - base] = 1;
}

void px_mpi_groups_mark(uint8_t *named, int base, int room)
{
    for (int i = 0; i < px_group_tab.n; i++)
        px_mpi_group_mark(px_group_tab.obj[i], named, base, room);
}

void px_mpi_group_release(px_mpi_group_t *g)
{
    if (!g || g == px_group_empty || --g->refs > 0)
        return;
    if (g->handle != MPI_GROUP_NULL)
        px_htab_del(&px_group_tab, PX_HANDLE_IDX(g->handle));
    free(g);
}

/* New handle for a group built by a group constructor. */
static int px_group_out(px_mpi_group_t *g, MPI_Group *out)
{
    if (g->size == 0) {
        free(g);
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    px_group_set_rank(g);
    *out = px_mpi_group_handle(g);
    return MPI_SUCCESS;
}

#define PX_GET_GROUP(var, h, fn)                                                                   \
    px_mpi_group_t *var = px_mpi_group_get(h);                                                     \
    if (!var)                                                                                      \
    return px_mpi_error(NULL, MPI_ERR_GROUP, fn, "invalid group")

PX_PMPI(MPI_Group_size)(MPI_Group group, int *size)
{
    PX_CS_ENTER();
    PX_GET_GROUP(g, group, "MPI_Group_size");
    if (!size)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Group_size", "null argument");
    *size = g->size;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Group_size)

PX_PMPI(MPI_Group_rank)(MPI_Group group, int *rank)
{
    PX_CS_ENTER();
    PX_GET_GROUP(g, group, "MPI_Group_rank");
    if (!rank)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Group_rank", "null argument");
    *rank = g->rank;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Group_rank)

PX_PMPI(MPI_Group_free)(MPI_Group *group)
{
    PX_CS_ENTER();
    if (!group)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Group_free", "null argument");
    PX_GET_GROUP(g, *group, "MPI_Group_free");
    px_mpi_group_release(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Group_free)

PX_PMPI(MPI_Group_translate_ranks)
(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
    PX_CS_ENTER();
    PX_GET_GROUP(g1, group1, "MPI_Group_translate_ranks");
    PX_GET_GROUP(g2, group2, "MPI_Group_translate_ranks");
    if (n < 0 || (n > 0 && (!ranks1 || !ranks2)))
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Group_translate_ranks", "invalid arguments");
    for (int i = 0; i < n; i++) {
        int r = ranks1[i];
        if (r == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (r < 0 || r >= g1->size)
            return px_mpi_error(NULL, MPI_ERR_RANK, "MPI_Group_translate_ranks",
                                "rank %d is not in the group of size %d", r, g1->size);
        ranks2[i] = MPI_UNDEFINED;
        for (int j = 0; j < g2->size; j++)
            if (g2->world[j] == g1->world[r]) {
                ranks2[i] = j;
                break;
            }
    }
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Group_translate_ranks)

int px_mpi_group_compare(const px_mpi_group_t *a, const px_mpi_group_t *b)
{
    int same_order = a->size == b->size;
    if (a->size != b->size)
        return MPI_UNEQUAL;
    for (int i = 0; i < a->size && same_order; i++)
        same_order = a->world[i] == b->world[i];
    if (same_order)
        return MPI_IDENT;
    for (int i = 0; i < a->size; i++) {
        int found = 0;
        for (int j = 0; j < b->size && !found; j++)
            found = a->world[i] == b->world[j];
        if (!found)
            return MPI_UNEQUAL;
    }
    return MPI_SIMILAR;
}

PX_PMPI(MPI_Group_compare)(MPI_Group group1, MPI_Group group2, int *result)
{
    PX_CS_ENTER();
    PX_GET_GROUP(g1, group1, "MPI_Group_compare");
    PX_GET_GROUP(g2, group2, "MPI_Group_compare");
    if (!result)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Group_compare", "null argument");
    *result = px_mpi_group_compare(g1, g2);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Group_compare)

PX_PMPI(MPI_Group_incl)(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    PX_CS_ENTER();
    PX_GET_GROUP(g, group, "MPI_Group_incl");
    if (n < 0 || n > g->size || (n && !ranks) || !newgroup)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Group_incl", "invalid arguments");
    px_mpi_group_t *ng = px_mpi_group_new(n);
    if (!ng)
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, "MPI_Group_incl", "out of memory");
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size) {
            free(ng);
            return px_mpi_error(NULL, MPI_ERR_RANK, "MPI_Group_incl", "invalid rank %d", ranks[i]);
        }
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i]) {
                free(ng);
                return px_mpi_error(NULL, MPI_ERR_RANK, "MPI_Group_incl", "rank %d repeated",
                                    ranks[i]);
            }
        ng->world[i] = g->world[ranks[i]];
    }
    return px_group_out(ng, newgroup);
}
PX_WEAK(MPI_Group_incl)

PX_PMPI(MPI_Group_excl)(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    PX_CS_ENTER();
    PX_GET_GROUP(g, group, "MPI_Group_excl");
    if (n < 0 || n > g->size || (n && !ranks) || !newgroup)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Group_excl", "invalid arguments");
    char *drop = calloc((size_t)g->size + 1, 1);
    px_mpi_group_t *ng = px_mpi_group_new(g->size - n);
    if (!drop || !ng) {
        free(drop);
        free(ng);
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, "MPI_Group_excl", "out of memory");
    }
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size || drop[ranks[i]]) {
            free(drop);
            free(ng);
            return px_mpi_error(NULL, MPI_ERR_RANK, "MPI_Group_excl", "invalid rank %d", ranks[i]);
        }
        drop[ranks[i]] = 1;
    }
    for (int i = 0, k = 0; i < g->size; i++)
        if (!drop[i])
            ng->world[k++] = g->world[i];
    free(drop);
    return px_group_out(ng, newgroup);
}
PX_WEAK(MPI_Group_excl)

static int px_group_has(const px_mpi_group_t *g, int w)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == w)
            return 1;
    return 0;
}

/* op: 0 union, 1 intersection, 2 difference */
static int px_group_setop(MPI_Group a, MPI_Group b, MPI_Group *out, int op, const char *fn)
{
    PX_GET_GROUP(g1, a, fn);
    PX_GET_GROUP(g2, b, fn);
    if (!out)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    px_mpi_group_t *ng = px_mpi_group_new(g1->size + g2->size);
    if (!ng)
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    int k = 0;
    for (int i = 0; i < g1->size; i++) {
        int in2 = px_group_has(g2, g1->world[i]);
        if (op == 0 || (op == 1 && in2) || (op == 2 && !in2))
            ng->world[k++] = g1->world[i];
    }
    if (op == 0)
        for (int i = 0; i < g2->size; i++)
            if (!px_group_has(g1, g2->world[i]))
                ng->world[k++] = g2->world[i];
    ng->size = k;
    return px_group_out(ng, out);
}

PX_PMPI(MPI_Group_union)(MPI_Group g1, MPI_Group g2, MPI_Group *out)
{
    PX_CS_ENTER();
    return px_group_setop(g1, g2, out, 0, "MPI_Group_union");
}
PX_WEAK(MPI_Group_union)
PX_PMPI(MPI_Group_intersection)(MPI_Group g1, MPI_Group g2, MPI_Group *out)
{
    PX_CS_ENTER();
    return px_group_setop(g1, g2, out, 1, "MPI_Group_intersection");
}
PX_WEAK(MPI_Group_intersection)
PX_PMPI(MPI_Group_difference)(MPI_Group g1, MPI_Group g2, MPI_Group *out)
{
    PX_CS_ENTER();
    return px_group_setop(g1, g2, out, 2, "MPI_Group_difference");
}
PX_WEAK(MPI_Group_difference)

static int px_group_range(MPI_Group group, int n, int ranges[][3], MPI_Group *out, int excl,
                          const char *fn)
{
    PX_GET_GROUP(g, group, fn);
    if (n < 0 || (n && !ranges) || !out)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid arguments");
    char *sel = calloc((size_t)g->size + 1, 1);
    int *order = malloc(sizeof(int) * ((size_t)g->size + 1));
    int k = 0;
    if (!sel || !order) {
        free(sel);
        free(order);
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0 || first < 0 || first >= g->size || last < 0 || last >= g->size ||
            (stride > 0 && first > last) || (stride < 0 && first < last)) {
            free(sel);
            free(order);
            return px_mpi_error(NULL, MPI_ERR_ARG, fn, "invalid range (%d,%d,%d)", first, last,
                                stride);
        }
        for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if (sel[r]) {
                free(sel);
                free(order);
                return px_mpi_error(NULL, MPI_ERR_RANK, fn, "rank %d appears twice", r);
            }
            sel[r] = 1;
            order[k++] = r;
        }
    }
    px_mpi_group_t *ng = px_mpi_group_new(excl ? g->size - k : k);
    if (!ng) {
        free(sel);
        free(order);
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    if (excl) {
        for (int i = 0, j = 0; i < g->size; i++)
            if (!sel[i])
                ng->world[j++] = g->world[i];
    } else {
        for (int i = 0; i < k; i++)
            ng->world[i] = g->world[order[i]];
    }
    free(sel);
    free(order);
    return px_group_out(ng, out);
}

PX_PMPI(MPI_Group_range_incl)(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    PX_CS_ENTER();
    return px_group_range(group, n, ranges, newgroup, 0, "MPI_Group_range_incl");
}
PX_WEAK(MPI_Group_range_incl)
PX_PMPI(MPI_Group_range_excl)(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    PX_CS_ENTER();
    return px_group_range(group, n, ranges, newgroup, 1, "MPI_Group_range_excl");
}
PX_WEAK(MPI_Group_range_excl)
