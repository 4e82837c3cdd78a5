/* Reduction operations: predefined ones and MPI_Op_create. */
#include "mpi_impl.h"

#include <stdint.h>
#include <stdlib.h>

#include "dtype_builtin.h"
#include "dtype_engine.h"

/* A user operation lives while its handle does or an operation under way
 * (a nonblocking collective) uses it: MPI_Op_free only marks it. */
typedef struct px_user_op {
    MPI_User_function *fn;
    MPI_User_function_c *fn_c; /* MPI_Op_create_c: takes an MPI_Count */
    int commute;
    int refs;  /* the handle (until MPI_Op_free) and operations using it */
    int freed; /* MPI_Op_free was called: the handle is no longer valid */
} px_user_op_t;

static px_htab_t px_op_tab;
#define PX_OP_DYN 0x98000000u

/* The operation of a handle, also one freed but still in use. */
static px_user_op_t *px_user_op_any(MPI_Op op)
{
    if (PX_HANDLE_HI(op) != PX_OP_DYN)
        return NULL;
    return px_htab_get(&px_op_tab, PX_HANDLE_IDX(op));
}

/* The operation of a valid handle (not freed). */
static px_user_op_t *px_user_op_get(MPI_Op op)
{
    px_user_op_t *u = px_user_op_any(op);
    return u && !u->freed ? u : NULL;
}

static void px_user_op_unref(MPI_Op op, px_user_op_t *u)
{
    if (--u->refs == 0) {
        px_htab_del(&px_op_tab, PX_HANDLE_IDX(op));
        free(u);
    }
}

void px_mpi_op_retain(MPI_Op op)
{
    px_user_op_t *u = px_user_op_any(op);
    if (u)
        u->refs++;
}

void px_mpi_op_release(MPI_Op op)
{
    px_user_op_t *u = px_user_op_any(op);
    if (u)
        px_user_op_unref(op, u);
}

int px_mpi_op_check(MPI_Op op, MPI_Datatype dt, int *commutative_p)
{
    if (px_mpi_op_is_builtin(op)) {
        if (op == MPI_REPLACE || op == MPI_NO_OP)
            return MPI_ERR_OP;
        *commutative_p = 1;
        px_mpi_dt_t *d = px_mpi_dt_get(dt);
        if (!d)
            return MPI_ERR_TYPE;
        if (!d->builtin) {
            /* a derived type made of one predefined type: element by element */
            const px_dt_obj_t *o = px_dt_obj(d);
            if (d->size == 0)
                return MPI_SUCCESS;
            if (o->elem == MPI_DATATYPE_NULL)
                return MPI_ERR_OP;
            return px_mpi_op_builtin_check(op, o->elem);
        }
        return px_mpi_op_builtin_check(op, dt);
    }
    /* also one freed while an operation that holds it (a persistent
     * collective) still uses it */
    px_user_op_t *u = px_user_op_any(op);
    if (!u)
        return MPI_ERR_OP;
    *commutative_p = u->commute;
    return MPI_SUCCESS;
}

const char *px_mpi_op_check_msg(MPI_Op op, MPI_Datatype dt)
{
    const px_dt_obj_t *o = px_dt_obj(px_mpi_dt_get(dt));
    if (px_mpi_op_is_builtin(op) && op != MPI_REPLACE && op != MPI_NO_OP && o && o->d.size > 0 &&
        o->elem == MPI_DATATYPE_NULL)
        return "a predefined operation needs a datatype made of one predefined type, and this "
               "one mixes several";
    return "invalid operation or not defined for the datatype";
}

/* A predefined operation on count items of a derived type whose type map is
 * made of the one predefined type o->elem: applied to those elements in
 * type-map order, leaving the bytes between them alone. */
static void px_op_apply_derived(MPI_Op op, const void *in, void *inout, MPI_Aint count,
                                const px_dt_obj_t *o)
{
    const px_dtype_builtin_t *e = px_mpi_dtype_builtin(o->elem);
    /* MPI_BOTTOM plus absolute displacements: integer arithmetic */
    uintptr_t ib = (uintptr_t)in, ob = (uintptr_t)inout, ext = (uintptr_t)o->d.extent;
    if (!e || o->d.size == 0 || count <= 0)
        return;
    if (o->d.contig && o->d.size == o->d.extent && (!e->is_pair || e->size == e->extent)) {
        uintptr_t at = (uintptr_t)o->d.true_lb;
        px_mpi_op_builtin_apply(op, (const void *)(ib + at), (void *)(ob + at),
                                count * o->d.elements / (e->is_pair ? 2 : 1), o->elem);
        return;
    }
    if (!e->is_pair) {
        for (MPI_Aint i = 0; i < count; i++, ib += ext, ob += ext)
            for (MPI_Aint k = 0; k < o->nsegs; k++) {
                const px_dt_seg_t *g = &o->segs[k];
                for (MPI_Aint j = 0; j < g->reps; j++) {
                    uintptr_t at = (uintptr_t)(g->off + j * g->stride);
                    px_mpi_op_builtin_apply(op, (const void *)(ib + at), (void *)(ob + at), g->n,
                                            o->elem);
                }
            }
        return;
    }
    /* pairs: the runs list their values and indices apart (value first);
     * pairs one pair extent apart go to the loop together */
    for (MPI_Aint i = 0; i < count; i++, ib += ext, ob += ext) {
        MPI_Aint start = 0, n = 0;
        int second = 0;
        px_dt_run_t run;
        for (px_dt_runit_t it = px_dt_runs(o->segs, o->nsegs); px_dt_runit_next(&it, &run);) {
            const px_dt_run_t *r = &run;
            MPI_Aint bs = px_mpi_dtype_builtin(r->basic)->size;
            for (MPI_Aint j = 0; j < r->n; j++) {
                if ((second = !second) == 0)
                    continue; /* the index of the pair just counted */
                MPI_Aint at = r->off + j * bs;
                if (n && at == start + n * e->extent) {
                    n++;
                    continue;
                }
                if (n)
                    px_mpi_op_builtin_apply(op, (const void *)(ib + (uintptr_t)start),
                                            (void *)(ob + (uintptr_t)start), n, o->elem);
                start = at;
                n = 1;
            }
        }
        if (n)
            px_mpi_op_builtin_apply(op, (const void *)(ib + (uintptr_t)start),
                                    (void *)(ob + (uintptr_t)start), n, o->elem);
    }
}

void px_mpi_op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt)
{
    if (px_mpi_op_is_builtin(op)) {
        if (PX_HANDLE_HI(dt) != PX_DT_DYN)
            px_mpi_op_builtin_apply(op, in, inout, count, dt);
        else
            px_op_apply_derived(op, in, inout, count, px_dt_obj(px_mpi_dt_get(dt)));
        return;
    }
    px_user_op_t *u = px_user_op_any(op);
    int n = count;
    MPI_Count nc = count;
    MPI_Datatype t = dt;
    if (u->fn_c)
        u->fn_c((void *)in, inout, &nc, &t);
    else
        u->fn((void *)in, inout, &n, &t);
}

static int px_op_create(MPI_User_function *user_fn, MPI_User_function_c *user_fn_c, int commute,
                        MPI_Op *op, const char *fn)
{
    if ((!user_fn && !user_fn_c) || !op)
        return px_mpi_error(NULL, MPI_ERR_ARG, fn, "null argument");
    px_user_op_t *u = malloc(sizeof(*u));
    if (!u)
        return px_mpi_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    u->fn = user_fn;
    u->fn_c = user_fn_c;
    u->commute = commute != 0;
    u->refs = 1;
    u->freed = 0;
    int idx = px_htab_add(&px_op_tab, u);
    *op = (MPI_Op)(PX_OP_DYN | (unsigned)idx);
    return MPI_SUCCESS;
}

PX_PMPI(MPI_Op_create)(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    PX_CS_ENTER();
    return px_op_create(user_fn, NULL, commute, op, "MPI_Op_create");
}
PX_WEAK(MPI_Op_create)

PX_PMPI(MPI_Op_create_c)(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    PX_CS_ENTER();
    return px_op_create(NULL, user_fn, commute, op, "MPI_Op_create_c");
}
PX_WEAK(MPI_Op_create_c)

PX_PMPI(MPI_Op_free)(MPI_Op *op)
{
    PX_CS_ENTER();
    px_user_op_t *u = op ? px_user_op_get(*op) : NULL;
    if (!u)
        return px_mpi_error(NULL, MPI_ERR_OP, "MPI_Op_free", "not a user-defined operation");
    u->freed = 1;
    px_user_op_unref(*op, u);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Op_free)

PX_PMPI(MPI_Op_commutative)(MPI_Op op, int *commute)
{
    PX_CS_ENTER();
    if (!commute)
        return px_mpi_error(NULL, MPI_ERR_ARG, "MPI_Op_commutative", "null argument");
    if (px_mpi_op_is_builtin(op)) {
        *commute = 1;
        return MPI_SUCCESS;
    }
    px_user_op_t *u = px_user_op_get(op);
    if (!u)
        return px_mpi_error(NULL, MPI_ERR_OP, "MPI_Op_commutative", "invalid operation");
    *commute = u->commute;
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Op_commutative)

PX_PMPI(MPI_Reduce_local)
(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)
{
    PX_CS_ENTER();
    int commute;
    if (count < 0)
        return px_mpi_error(NULL, MPI_ERR_COUNT, "MPI_Reduce_local", "negative count");
    if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
        return px_mpi_error(NULL, MPI_ERR_BUFFER, "MPI_Reduce_local",
                            "MPI_IN_PLACE is not a buffer here");
    if (count && inbuf == inoutbuf)
        return px_mpi_error(NULL, MPI_ERR_BUFFER, "MPI_Reduce_local",
                            "the two buffers are the same");
    int rc = px_mpi_op_check(op, datatype, &commute);
    if (rc != MPI_SUCCESS)
        return px_mpi_error(NULL, rc, "MPI_Reduce_local", "%s", px_mpi_op_check_msg(op, datatype));
    px_mpi_op_apply(op, inbuf, inoutbuf, count, datatype);
    return MPI_SUCCESS;
}
PX_WEAK(MPI_Reduce_local)
