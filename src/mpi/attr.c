/* Keyvals and communicator attributes, including the predefined ones. */
#include "mpi_impl.h"

#include <limits.h>
#include <stdlib.h>

/* A keyval serves one kind of object. Communicator, datatype and window
 * handles are all ints in this ABI, so one pair of callback types serves
 * the three (the program's callbacks take MPI_Comm, MPI_Datatype or
 * MPI_Win, each an int). */
enum { PX_KV_COMM, PX_KV_TYPE, PX_KV_WIN };
static const char *const px_kv_kind_name[] = {"communicator", "datatype", "window"};
typedef int(px_attr_copy_fn)(int obj, int kv, void *extra, void *in, void *out, int *flag);
typedef int(px_attr_delete_fn)(int obj, int kv, void *val, void *extra);

/* Freed by the program (MPI_*_free_keyval), a keyval lives on while
 * attributes use it: their callbacks still run. */
typedef struct px_keyval {
    px_attr_copy_fn *copy;
    px_attr_delete_fn *del;
    void *extra;
    int kind;
    int refs;
    int freed;
} px_keyval_t;

/* fortran: set by a Fortran program, value is the integer it gave */
struct px_mpi_attr {
    px_mpi_attr_t *next;
    int keyval;
    int fortran;
    void *value;
};

/* A Fortran program's attribute values are integers (MPI-4.0 §19.3.7): C
 * reads one set in Fortran through a pointer to where it is kept, Fortran
 * reads back what it set, and reads a value set in C as the pointer's
 * integer. The Fortran bindings say so before calling MPI_*_set_attr or
 * MPI_*_get_attr; each of those takes the mark and clears it first thing,
 * so that callbacks which run within see C's view again. */
static __thread int px_attr_fortran;
void px_mpi_attr_fortran(void) { px_attr_fortran = 1; }

static int px_attr_take_fortran(void)
{
    int f = px_attr_fortran;
    px_attr_fortran = 0;
    return f;
}

/* Attributes of datatypes and windows, by handle (communicators keep
 * theirs); few objects carry any. */
typedef struct px_attr_obj {
    struct px_attr_obj *next;
    int kind, handle;
    px_mpi_attr_t *attrs;
} px_attr_obj_t;
static px_attr_obj_t *px_attr_objs;

static px_htab_t px_keyval_tab;
#define PX_KEYVAL_DYN 0xa4000000u

static int px_attr_tag_ub = INT_MAX, px_attr_host = MPI_PROC_NULL, px_attr_io = MPI_ANY_SOURCE,
           px_attr_wtime_global = 0, px_attr_universe, px_attr_appnum = 0;

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

static int px_keyval_create(int kind, px_attr_copy_fn *copy, px_attr_delete_fn *del, int *keyval,
                            void *extra, const char *fn)
{
    if (!keyval)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null keyval argument");
    px_keyval_t *k = calloc(1, sizeof(*k));
    if (!k)
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    *k = (px_keyval_t){.copy = copy, .del = del, .extra = extra, .kind = kind, .refs = 1};
    int idx = px_htab_add(&px_keyval_tab, k);
    *keyval = (int)(PX_KEYVAL_DYN | (unsigned)idx);
    return MPI_SUCCESS;
}

static int px_keyval_free(int kind, int *keyval, const char *fn)
{
    px_keyval_t *k = keyval ? px_keyval_get(*keyval) : NULL;
    if (!k || k->kind != kind)
        return px_mpi_error(NULL, MPI_ERR_KEYVAL, fn, "not a valid %s keyval",
                            px_kv_kind_name[kind]);
    /* Freed already, and kept for the attributes that still use it: the
     * handle is still that keyval, so freeing it again does nothing (as in
     * MPICH; a delete callback may free its own keyval). */
    if (k->freed) {
        *keyval = MPI_KEYVAL_INVALID;
        return MPI_SUCCESS;
    }
    k->freed = 1;
    px_keyval_release(*keyval, k);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* The attribute list of a datatype or window (create: make an empty one). */
static px_mpi_attr_t **px_attr_list(int kind, int handle, int create)
{
    for (px_attr_obj_t *o = px_attr_objs; o; o = o->next)
        if (o->kind == kind && o->handle == handle)
            return &o->attrs;
    if (!create)
        return NULL;
    px_attr_obj_t *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    o->kind = kind;
    o->handle = handle;
    o->next = px_attr_objs;
    px_attr_objs = o;
    return &o->attrs;
}

static void px_attr_list_drop(int kind, int handle)
{
    for (px_attr_obj_t **o = &px_attr_objs; *o; o = &(*o)->next)
        if ((*o)->kind == kind && (*o)->handle == handle) {
            px_attr_obj_t *x = *o;
            *o = x->next;
            free(x);
            return;
        }
}

static px_mpi_attr_t **px_attr_find(px_mpi_attr_t **list, int kv)
{
    while (*list && (*list)->keyval != kv)
        list = &(*list)->next;
    return list;
}

/* Runs the delete callback of kv's attribute on obj and removes it. */
static int px_attr_delete(int obj, px_mpi_attr_t **list, int kv, px_keyval_t *k)
{
    px_mpi_attr_t **a = px_attr_find(list, kv);
    if (!*a)
        return MPI_ERR_KEYVAL;
    px_mpi_attr_t *x = *a;
    if (k->del) {
        int rc = k->del(obj, kv, x->value, k->extra);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    *a = x->next;
    free(x);
    px_keyval_release(kv, k);
    return MPI_SUCCESS;
}

static int px_attr_set(int kind, int obj, px_mpi_attr_t **list, int keyval, void *val, int fortran)
{
    px_keyval_t *k = px_keyval_get(keyval);
    if (!k || k->freed || k->kind != kind)
        return MPI_ERR_KEYVAL;
    if (*px_attr_find(list, keyval)) {
        int rc = px_attr_delete(obj, list, keyval, k);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    px_mpi_attr_t *x = malloc(sizeof(*x));
    if (!x)
        return MPI_ERR_NO_MEM;
    x->keyval = keyval;
    x->fortran = fortran;
    x->value = val;
    x->next = *list;
    *list = x;
    k->refs++;
    return MPI_SUCCESS;
}

static int px_attr_get(int kind, px_mpi_attr_t **list, int keyval, void *val, int *flag,
                       int fortran)
{
    px_keyval_t *k = px_keyval_get(keyval);
    if (!k || k->kind != kind)
        return MPI_ERR_KEYVAL;
    px_mpi_attr_t **a = list ? px_attr_find(list, keyval) : NULL;
    *flag = a && *a;
    if (*flag)
        *(void **)val = (*a)->fortran && !fortran ? (void *)&(*a)->value : (*a)->value;
    return MPI_SUCCESS;
}

static int px_attr_del(int kind, int obj, px_mpi_attr_t **list, int keyval)
{
    px_keyval_t *k = px_keyval_get(keyval);
    if (!k || k->kind != kind || !list)
        return MPI_ERR_KEYVAL;
    return px_attr_delete(obj, list, keyval, k);
}

/* The attributes of old that their copy callbacks pass on, into *nlist;
 * on a failing callback its code, with what was copied deleted again. */
static int px_attr_copy(int old, px_mpi_attr_t *olist, int nobj, px_mpi_attr_t **nlist);

static void px_attr_delete_list(int obj, px_mpi_attr_t **list)
{
    while (*list) {
        int kv = (*list)->keyval;
        px_keyval_t *k = px_keyval_get(kv);
        if (!k || px_attr_delete(obj, list, kv, k) != MPI_SUCCESS) {
            px_mpi_attr_t *x = *list;
            *list = x->next;
            free(x);
            if (k)
                px_keyval_release(kv, k);
        }
    }
}

static int px_attr_copy(int old, px_mpi_attr_t *olist, int nobj, px_mpi_attr_t **nlist)
{
    for (px_mpi_attr_t *a = olist; a; a = a->next) {
        px_keyval_t *k = px_keyval_get(a->keyval);
        void *val = NULL;
        int flag = 0;
        if (!k || !k->copy)
            continue;
        int rc = k->copy(old, a->keyval, k->extra, a->value, &val, &flag);
        if (rc == MPI_SUCCESS && flag) {
            px_mpi_attr_t *x = malloc(sizeof(*x));
            if (!x) {
                rc = MPI_ERR_NO_MEM;
            } else {
                /* kept in the order of the original */
                px_mpi_attr_t **end = nlist;
                while (*end)
                    end = &(*end)->next;
                *x = (px_mpi_attr_t){.keyval = a->keyval, .fortran = a->fortran, .value = val};
                *end = x;
                k->refs++;
            }
        }
        if (rc != MPI_SUCCESS) {
            px_attr_delete_list(nobj, nlist);
            return rc;
        }
    }
    return MPI_SUCCESS;
}

/* ---------- communicators ---------- */

PX_PMPI(MPI_Comm_create_keyval)
(MPI_Comm_copy_attr_function *copy_fn, MPI_Comm_delete_attr_function *delete_fn, int *keyval,
 void *extra_state)
{
    PX_CS_ENTER();
    return px_keyval_create(PX_KV_COMM, (px_attr_copy_fn *)copy_fn, (px_attr_delete_fn *)delete_fn,
                            keyval, extra_state, "MPI_Comm_create_keyval");
}
PX_WEAK(MPI_Comm_create_keyval)

PX_PMPI(MPI_Comm_free_keyval)(int *keyval)
{
    PX_CS_ENTER();
    return px_keyval_free(PX_KV_COMM, keyval, "MPI_Comm_free_keyval");
}
PX_WEAK(MPI_Comm_free_keyval)

PX_PMPI(MPI_Comm_set_attr)(MPI_Comm comm, int keyval, void *attribute_val)
{
    PX_CS_ENTER();
    int fortran = px_attr_take_fortran();
    PX_GET_COMM(c, comm, "MPI_Comm_set_attr");
    int rc = px_attr_set(PX_KV_COMM, comm, &c->attrs, keyval, attribute_val, fortran);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Comm_set_attr",
                            rc == MPI_ERR_KEYVAL ? "invalid keyval"
                                                 : "the delete callback of the old value failed");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_set_attr)

PX_PMPI(MPI_Comm_get_attr)(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    PX_CS_ENTER();
    int fortran = px_attr_take_fortran();
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
        /* the slots the launcher was given, at least the job's size */
        px_attr_universe = px_mpi_boot_info()->universe_size > px_mpi_comm_world->size
                               ? px_mpi_boot_info()->universe_size
                               : px_mpi_comm_world->size;
        *out = &px_attr_universe;
        return MPI_SUCCESS;
    case MPI_APPNUM: {
        /* the index of this process's command (pxrun's ':' list, spawn_multiple) */
        const char *a = getenv("PX_APPNUM");
        px_attr_appnum = a ? atoi(a) : 0;
        *out = &px_attr_appnum;
        return MPI_SUCCESS;
    }
    case MPI_LASTUSEDCODE:
        *out = &px_mpi_lastusedcode;
        return MPI_SUCCESS;
    default:
        break;
    }
    if (px_attr_get(PX_KV_COMM, &c->attrs, keyval, attribute_val, flag, fortran) != MPI_SUCCESS)
        return px_mpi_error(c, MPI_ERR_KEYVAL, "MPI_Comm_get_attr", "invalid keyval");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_get_attr)

PX_PMPI(MPI_Comm_delete_attr)(MPI_Comm comm, int keyval)
{
    PX_CS_ENTER();
    PX_GET_COMM(c, comm, "MPI_Comm_delete_attr");
    int rc = px_attr_del(PX_KV_COMM, comm, &c->attrs, keyval);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(c, rc, "MPI_Comm_delete_attr", "no such attribute or callback failed");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Comm_delete_attr)

int px_mpi_attr_copy_all(px_mpi_comm_t *old, px_mpi_comm_t *nc)
{
    return px_attr_copy(old->handle, old->attrs, nc->handle, &nc->attrs);
}

void px_mpi_attr_delete_all(px_mpi_comm_t *c) { px_attr_delete_list(c->handle, &c->attrs); }

/* ---------- datatypes ---------- */

PX_PMPI(MPI_Type_create_keyval)
(MPI_Type_copy_attr_function *copy_fn, MPI_Type_delete_attr_function *delete_fn, int *keyval,
 void *extra_state)
{
    PX_CS_ENTER();
    return px_keyval_create(PX_KV_TYPE, (px_attr_copy_fn *)copy_fn, (px_attr_delete_fn *)delete_fn,
                            keyval, extra_state, "MPI_Type_create_keyval");
}
PX_WEAK(MPI_Type_create_keyval)

PX_PMPI(MPI_Type_free_keyval)(int *keyval)
{
    PX_CS_ENTER();
    return px_keyval_free(PX_KV_TYPE, keyval, "MPI_Type_free_keyval");
}
PX_WEAK(MPI_Type_free_keyval)

static int px_type_valid(MPI_Datatype t)
{
    return t != MPI_DATATYPE_NULL && px_mpi_dt_get(t) != NULL;
}

PX_PMPI(MPI_Type_set_attr)(MPI_Datatype type, int keyval, void *attribute_val)
{
    PX_CS_ENTER();
    int fortran = px_attr_take_fortran();
    const char *fn = "MPI_Type_set_attr";
    if (!px_type_valid(type))
        return px_mpi_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype");
    px_mpi_attr_t **list = px_attr_list(PX_KV_TYPE, type, 1);
    if (!list)
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    int rc = px_attr_set(PX_KV_TYPE, type, list, keyval, attribute_val, fortran);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(NULL, rc, fn,
                            rc == MPI_ERR_KEYVAL ? "invalid keyval" : "callback failed");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_set_attr)

PX_PMPI(MPI_Type_get_attr)(MPI_Datatype type, int keyval, void *attribute_val, int *flag)
{
    PX_CS_ENTER();
    int fortran = px_attr_take_fortran();
    const char *fn = "MPI_Type_get_attr";
    if (!px_type_valid(type))
        return px_mpi_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype");
    if (!attribute_val || !flag)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    if (px_attr_get(PX_KV_TYPE, px_attr_list(PX_KV_TYPE, type, 0), keyval, attribute_val, flag,
                    fortran))
        return px_mpi_error(NULL, MPI_ERR_KEYVAL, fn, "invalid keyval");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_get_attr)

PX_PMPI(MPI_Type_delete_attr)(MPI_Datatype type, int keyval)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Type_delete_attr";
    if (!px_type_valid(type))
        return px_mpi_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype");
    int rc = px_attr_del(PX_KV_TYPE, type, px_attr_list(PX_KV_TYPE, type, 0), keyval);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(NULL, rc, fn, "no such attribute or callback failed");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Type_delete_attr)

int px_mpi_type_attr_copy(MPI_Datatype old, MPI_Datatype nt)
{
    px_mpi_attr_t **olist = px_attr_list(PX_KV_TYPE, old, 0);
    if (!olist || !*olist)
        return MPI_SUCCESS;
    px_mpi_attr_t **nlist = px_attr_list(PX_KV_TYPE, nt, 1);
    if (!nlist)
        return MPI_ERR_NO_MEM;
    int rc = px_attr_copy(old, *olist, nt, nlist);
    if (rc != MPI_SUCCESS)
        px_attr_list_drop(PX_KV_TYPE, nt);
    return rc;
}

void px_mpi_type_attr_delete_all(MPI_Datatype t)
{
    px_mpi_attr_t **list = px_attr_list(PX_KV_TYPE, t, 0);
    if (!list)
        return;
    px_attr_delete_list(t, list);
    px_attr_list_drop(PX_KV_TYPE, t);
}

/* ---------- windows (windows themselves: rma/win.c) ---------- */

PX_PMPI(MPI_Win_create_keyval)
(MPI_Win_copy_attr_function *copy_fn, MPI_Win_delete_attr_function *delete_fn, int *keyval,
 void *extra_state)
{
    PX_CS_ENTER();
    return px_keyval_create(PX_KV_WIN, (px_attr_copy_fn *)copy_fn, (px_attr_delete_fn *)delete_fn,
                            keyval, extra_state, "MPI_Win_create_keyval");
}
PX_WEAK(MPI_Win_create_keyval)

PX_PMPI(MPI_Win_free_keyval)(int *keyval)
{
    PX_CS_ENTER();
    return px_keyval_free(PX_KV_WIN, keyval, "MPI_Win_free_keyval");
}
PX_WEAK(MPI_Win_free_keyval)

PX_PMPI(MPI_Win_set_attr)(MPI_Win win, int keyval, void *attribute_val)
{
    PX_CS_ENTER();
    int fortran = px_attr_take_fortran();
    const char *fn = "MPI_Win_set_attr";
    if (!px_mpi_win_valid(win))
        return px_mpi_error(NULL, MPI_ERR_WIN, fn, "invalid window");
    if (px_mpi_win_predef_attr(win, keyval, NULL, NULL))
        return px_mpi_win_raise(win, MPI_ERR_KEYVAL, fn, "predefined attributes cannot be set");
    px_mpi_attr_t **list = px_attr_list(PX_KV_WIN, win, 1);
    if (!list)
        return px_mpi_win_raise(win, MPI_ERR_NO_MEM, fn, "out of memory");
    int rc = px_attr_set(PX_KV_WIN, win, list, keyval, attribute_val, fortran);
    if (rc != MPI_SUCCESS)
        return px_mpi_win_raise(win, rc, fn,
                                rc == MPI_ERR_KEYVAL ? "invalid keyval" : "callback failed");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_set_attr)

PX_PMPI(MPI_Win_get_attr)(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    PX_CS_ENTER();
    int fortran = px_attr_take_fortran();
    const char *fn = "MPI_Win_get_attr";
    if (!px_mpi_win_valid(win))
        return px_mpi_error(NULL, MPI_ERR_WIN, fn, "invalid window");
    if (!attribute_val || !flag)
        return px_mpi_win_raise(win, MPI_ERR_ARG, fn, "null argument");
    if (px_mpi_win_predef_attr(win, keyval, attribute_val, flag))
        return MPI_SUCCESS;
    if (px_attr_get(PX_KV_WIN, px_attr_list(PX_KV_WIN, win, 0), keyval, attribute_val, flag,
                    fortran))
        return px_mpi_win_raise(win, MPI_ERR_KEYVAL, fn, "invalid keyval");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_get_attr)

PX_PMPI(MPI_Win_delete_attr)(MPI_Win win, int keyval)
{
    PX_CS_ENTER();
    const char *fn = "MPI_Win_delete_attr";
    if (!px_mpi_win_valid(win))
        return px_mpi_error(NULL, MPI_ERR_WIN, fn, "invalid window");
    int rc = px_attr_del(PX_KV_WIN, win, px_attr_list(PX_KV_WIN, win, 0), keyval);
    if (rc != MPI_SUCCESS)
        return px_mpi_win_raise(win, rc, fn, "no such attribute or callback failed");
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Win_delete_attr)

void px_mpi_win_attr_delete_all(MPI_Win win)
{
    px_mpi_attr_t **list = px_attr_list(PX_KV_WIN, win, 0);
    if (!list)
        return;
    px_attr_delete_list(win, list);
    px_attr_list_drop(PX_KV_WIN, win);
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
