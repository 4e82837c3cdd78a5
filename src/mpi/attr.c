/* Keyvals and communicator attributes, including the predefined ones. */
#include "mpi_impl.h"

#include <limits.h>
#include <stdlib.h>

typedef struct px_keyval {
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra;
    int refs;
    int freed;
} px_keyval_t;

struct px_mpi_attr {
    px_mpi_attr_t *next;
    int keyval;
    void *value;
};

static px_htab_t px_keyval_tab;
#define PX_KEYVAL_DYN 0xa4000000u

static int px_attr_tag_ub = INT_MAX, px_attr_host = MPI_PROC_NULL, px_attr_io = MPI_ANY_SOURCE,
           px_attr_wtime_global = 0, px_attr_universe, px_attr_appnum = 0, px_attr_lastcode = 79;

static px_keyval_t *px_keyval_get(int kv)
{
    if (PX_HANDLE_HI(kv) != PX_KEYVAL_DYN)
        return NULL;
    return px_htab_get(&px_keyval_tab, PX_HANDLE_IDX(kv));
}

static void px_keyval_release(int kv, px_keyval_t *k)
{
    if (--k->refs == 0) {
        px_htab_del(&px_keyval_tab, PX_HANDLE_IDX(kv));
        free(k);
    }
}

PX_PMPI(MPI_Comm_create_keyval)
(MPI_Comm_copy_attr_function *copy_fn, MPI_Comm_delete_attr_function *delete_fn, int *keyval,
 void *extra_state)
{
    PX_CS_ENTER();
    px_keyval_t *k = calloc(1, sizeof(*k));
    if (!k || !keyval) {
        free(k);
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Comm_create_keyval", "invalid arguments");
    }
    k->copy = copy_fn;
    k->del = delete_fn;
    k->extra = extra_state;
    k->refs = 1;
    int idx = px_htab_add(&px_keyval_tab, k);
    *keyval = (int)(PX_KEYVAL_DYN | (unsigned)idx);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_create_keyval)

PX_PMPI(MPI_Comm_free_keyval)(int *keyval)
{
    PX_CS_ENTER();
    px_keyval_t *k = keyval ? px_keyval_get(*keyval) : NULL;
    if (!k || k->freed)
        return px_mpi_error(NULL, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval", "invalid keyval");
    k->freed = 1;
    px_keyval_release(*keyval, k);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_free_keyval)

static px_mpi_attr_t **px_attr_find(px_mpi_comm_t *c, int kv)
{
    px_mpi_attr_t **a = &c->attrs;
    while (*a && (*a)->keyval != kv)
        a = &(*a)->next;
    return a;
}

static int px_attr_delete(px_mpi_comm_t *c, int kv, px_keyval_t *k)
{
    px_mpi_attr_t **a = px_attr_find(c, kv);
    if (!*a)
        return MPI_ERR_KEYVAL;
    px_mpi_attr_t *x = *a;
    if (k->del) {
        int rc = k->del(c->handle, kv, x->value, k->extra);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    *a = x->next;
    free(x);
    px_keyval_release(kv, k);
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Comm_set_attr)(MPI_Comm comm, int keyval, void *attribute_val)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_set_attr");
    px_keyval_t *k = px_keyval_get(keyval);
    if (!k || k->freed)
        return px_mpi_error(c, MPI_ERR_KEYVAL, "MPI_Comm_set_attr", "invalid keyval");
    px_mpi_attr_t **a = px_attr_find(c, keyval);
    if (*a) {
        int rc = px_attr_delete(c, keyval, k);
        if (rc != MPI_SUCCESS)
            return px_mpi_error(c, rc, "MPI_Comm_set_attr", "delete callback failed");
    }
    px_mpi_attr_t *x = malloc(sizeof(*x));
    if (!x)
        return px_mpi_error(c, MPI_ERR_NO_MEM, "MPI_Comm_set_attr", "out of memory");
    x->keyval = keyval;
    x->value = attribute_val;
    x->next = c->attrs;
    c->attrs = x;
    k->refs++;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_set_attr)

PX_PMPI(MPI_Comm_get_attr)(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_get_attr");
    void **out = attribute_val;
    if (!attribute_val || !flag)
        return px_mpi_error(c, MPI_ERR_ARG, "MPI_Comm_get_attr", "null argument");
    *flag = 1;
    switch (keyval) {
    case MPI_TAG_UB:
        *out = &px_attr_tag_ub;
        return MPI_SUCCESS;
    case MPI_HOST:
        *out = &px_attr_host;
        return MPI_SUCCESS;
    case MPI_IO:
        *out = &px_attr_io;
        return MPI_SUCCESS;
    case MPI_WTIME_IS_GLOBAL:
        *out = &px_attr_wtime_global;
        return MPI_SUCCESS;
    case MPI_UNIVERSE_SIZE:
        px_attr_universe = px_mpi_comm_world->size;
        *out = &px_attr_universe;
        return MPI_SUCCESS;
    case MPI_APPNUM:
        *out = &px_attr_appnum;
        return MPI_SUCCESS;
    case MPI_LASTUSEDCODE:
        *out = &px_attr_lastcode;
        return MPI_SUCCESS;
    default:
        break;
    }
    px_keyval_t *k = px_keyval_get(keyval);
    if (!k)
        return px_mpi_error(c, MPI_ERR_KEYVAL, "MPI_Comm_get_attr", "invalid keyval");
    px_mpi_attr_t **a = px_attr_find(c, keyval);
    *flag = *a != NULL;
    if (*a)
        *out = (*a)->value;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_get_attr)

PX_PMPI(MPI_Comm_delete_attr)(MPI_Comm comm, int keyval)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_delete_attr");
    px_keyval_t *k = px_keyval_get(keyval);
    if (!k)
        return px_mpi_error(c, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr", "invalid keyval");
    int rc = px_attr_delete(c, keyval, k);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Comm_delete_attr", "no such attribute or callback failed");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_delete_attr)

int px_mpi_attr_copy_all(px_mpi_comm_t *old, px_mpi_comm_t *nc)
{
    for (px_mpi_attr_t *a = old->attrs; a; a = a->next) {
        px_keyval_t *k = px_keyval_get(a->keyval);
        void *val = NULL;
        int flag = 0;
        if (!k || !k->copy)
            continue;
        int rc = k->copy(old->handle, a->keyval, k->extra, a->value, &val, &flag);
        if (rc != MPI_SUCCESS)
            return rc;
        if (flag) {
            px_mpi_attr_t *x = malloc(sizeof(*x));
            if (!x)
                return MPI_ERR_NO_MEM;
            x->keyval = a->keyval;
            x->value = val;
            x->next = nc->attrs;
            nc->attrs = x;
            k->refs++;
        }
    }
    return MPI_SUCCESS;
}

void px_mpi_attr_delete_all(px_mpi_comm_t *c)
{
    while (c->attrs) {
        int kv = c->attrs->keyval;
        px_keyval_t *k = px_keyval_get(kv);
        if (!k || px_attr_delete(c, kv, k) != MPI_SUCCESS) {
            px_mpi_attr_t *x = c->attrs;
            c->attrs = x->next;
            free(x);
        }
    }
}

/* MPI-1 names */
PX_PMPI(MPI_Keyval_create)
(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state)
{
    PX_CS_ENTER();
    return PMPI_Comm_create_keyval((MPI_Comm_copy_attr_function *)copy_fn,
                                   (MPI_Comm_delete_attr_function *)delete_fn, keyval, extra_state);
}
PX_WEAK(MPI_Keyval_create)
PX_PMPI(MPI_Keyval_free)(int *keyval) { return PMPI_Comm_free_keyval(keyval); }
PX_WEAK(MPI_Keyval_free)
PX_PMPI(MPI_Attr_put)(MPI_Comm comm, int keyval, void *v)
{
    return PMPI_Comm_set_attr(comm, keyval, v);
}
PX_WEAK(MPI_Attr_put)
PX_PMPI(MPI_Attr_get)(MPI_Comm comm, int keyval, void *v, int *flag)
{
    PX_CS_ENTER();
    return PMPI_Comm_get_attr(comm, keyval, v, flag);
}
PX_WEAK(MPI_Attr_get)
PX_PMPI(MPI_Attr_delete)(MPI_Comm comm, int keyval) { return PMPI_Comm_delete_attr(comm, keyval); }
PX_WEAK(MPI_Attr_delete)
