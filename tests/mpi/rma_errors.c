/* Windows as objects, and the errors of one-sided communication:
 * - predefined attributes (base, size, displacement unit, flavor, model),
 *   a user attribute whose delete callback runs at MPI_Win_free, the
 *   group, the name, the hints in use, error handlers set and got;
 * - each erroneous call returns its class through MPI_ERRORS_RETURN, and a
 *   handler of the program's is called with the window and the code:
 *   displacement outside the window (MPI_ERR_RMA_RANGE), operation outside
 *   an epoch and mismatched synchronisation (MPI_ERR_RMA_SYNC), a second
 *   lock on a locked rank (MPI_ERR_RMA_SYNC, as MPICH), a user operation in an
 *   accumulate (MPI_ERR_OP), a bad rank (MPI_ERR_RANK), the wrong window
 *   kind (MPI_ERR_RMA_FLAVOR), detaching what is not attached
 *   (MPI_ERR_RMA_ATTACH), a window freed inside an epoch, and a get from
 *   memory the target never attached (reported at the origin's unlock),
 *   while a put through two regions attached one after the other works;
 * - after all of it the window still works. */
#include "px_test.h"

static int handler_calls, handler_code;
static MPI_Win handler_win;

static void on_error(MPI_Win *win, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_win = *win;
}

static int deletes;
static int del_fn(MPI_Win win, int kv, void *val, void *extra)
{
    (void)win, (void)kv, (void)extra;
    deletes += *(int *)val;
    return MPI_SUCCESS;
}

static void user_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)len, (void)dt;
}

#define EXPECT PX_EXPECT_CLASS

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "rma_errors");
    int me = px_test_rank, np = px_test_size, right = (me + 1) % np;
    enum { N = 16 };
    int *mem, buf[N] = {0};
    MPI_Win win;
    PX_MPI(
        MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < N; i++)
        mem[i] = me;
    MPI_Barrier(MPI_COMM_WORLD);

    /* the window as an object */
    void *base;
    MPI_Aint *size;
    int *du, *flavor, *model, flag;
    PX_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    PX_CHECK(flag && base == mem, "MPI_WIN_BASE %p, want %p", base, (void *)mem);
    PX_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
    PX_CHECK(flag && *size == N * (MPI_Aint)sizeof(int), "MPI_WIN_SIZE %ld", (long)*size);
    PX_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag));
    PX_CHECK(flag && *du == (int)sizeof(int), "MPI_WIN_DISP_UNIT %d", *du);
    PX_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    PX_CHECK(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "flavor %d", *flavor);
    PX_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    PX_CHECK(flag && *model == MPI_WIN_UNIFIED, "model %d", *model);
    int kv;
    static int three = 3;
    PX_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &kv, NULL));
    PX_MPI(MPI_Win_set_attr(win, kv, &three));
    int *got;
    PX_MPI(MPI_Win_get_attr(win, kv, &got, &flag));
    PX_CHECK(flag && got == &three, "user attribute not found");
    MPI_Group wg, cg;
    int cmp;
    PX_MPI(MPI_Win_get_group(win, &wg));
    MPI_Comm_group(MPI_COMM_WORLD, &cg);
    MPI_Group_compare(wg, cg, &cmp);
    PX_CHECK(cmp == MPI_IDENT, "window group compares %d", cmp);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    PX_MPI(MPI_Win_set_name(win, "halo"));
    PX_MPI(MPI_Win_get_name(win, name, &len));
    PX_CHECK(!strcmp(name, "halo") && len == 4, "name '%s'", name);
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL];
    PX_MPI(MPI_Win_get_info(win, &info));
    MPI_Info_get(info, "accumulate_ordering", MPI_MAX_INFO_VAL - 1, v, &flag);
    PX_CHECK(flag && !strcmp(v, "rar,raw,war,waw"), "accumulate_ordering '%s'", flag ? v : "");
    MPI_Info_free(&info);

    /* errors, returned */
    PX_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Errhandler eh;
    PX_MPI(MPI_Win_get_errhandler(win, &eh));
    PX_CHECK(eh == MPI_ERRORS_RETURN, "error handler not kept");
    EXPECT(MPI_Put(buf, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    /* operations without data are checked as the others */
    EXPECT(MPI_Get(buf, 0, MPI_INT, right, 0, 0, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Accumulate(buf, 0, MPI_INT, right, 0, 0, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_shared_query(win, np, size, &flag, &base), MPI_ERR_RANK);
    EXPECT(MPI_Win_attach(win, buf, 4), MPI_ERR_RMA_FLAVOR);
    EXPECT(MPI_Win_lock(99, right, 0, win), MPI_ERR_LOCKTYPE);
    PX_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    EXPECT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    /* compare-and-swap: integer, logical and byte types; not floating point */
    {
        /* the target's byte swapped for itself: the window stays as it was */
        unsigned char o = (unsigned char)right, c = o, r = 0xff, r2 = 0xff;
        float fo = 1, fc = 0, fr = 0;
        PX_MPI(MPI_Compare_and_swap(&o, &c, &r, MPI_C_BOOL, right, N - 1, win));
        PX_MPI(MPI_Compare_and_swap(&o, &c, &r2, MPI_CHAR, right, N - 1, win));
        EXPECT(MPI_Compare_and_swap(&fo, &fc, &fr, MPI_FLOAT, right, N - 1, win), MPI_ERR_TYPE);
        PX_MPI(MPI_Win_flush(right, win));
        PX_CHECK(r == (unsigned char)right && r2 == r, "compare-and-swap fetched %d and %d", r, r2);
    }
    EXPECT(MPI_Put(buf, 1, MPI_INT, right, N, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Put(buf, 2, MPI_INT, right, N - 1, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Get(buf, 1, MPI_INT, right, -1, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Put(buf, 1, MPI_INT, np, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    MPI_Op op;
    MPI_Op_create(user_op, 1, &op);
    EXPECT(MPI_Accumulate(buf, 1, MPI_INT, right, 0, 1, MPI_INT, op, win), MPI_ERR_OP);
    EXPECT(MPI_Accumulate(buf, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_NO_OP, win), MPI_ERR_OP);
    MPI_Op_free(&op);
    EXPECT(MPI_Put(buf, 0, MPI_INT, np, 0, 0, MPI_INT, win), MPI_ERR_RANK);
    EXPECT(MPI_Get(buf, 0, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_ARG);
    EXPECT(MPI_Get_accumulate(buf, 0, MPI_INT, buf, 0, MPI_INT, right, 0, 0, MPI_DATATYPE_NULL,
                              MPI_SUM, win),
           MPI_ERR_TYPE);
    /* without data: done at once, the request-based ones complete at their start */
    PX_MPI(MPI_Put(buf, 0, MPI_INT, right, 0, 0, MPI_INT, win));
    PX_MPI(MPI_Get(buf, 0, MPI_INT, right, N, 0, MPI_INT, win));
    PX_MPI(MPI_Accumulate(buf, 0, MPI_INT, right, 0, 0, MPI_INT, MPI_SUM, win));
    /* and with a type of no data, derived ones included, on any side */
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    PX_MPI(MPI_Accumulate(buf, 1, empty, right, 0, 2, empty, MPI_SUM, win));
    PX_MPI(MPI_Accumulate(buf, 0, MPI_DOUBLE, right, 0, 1, empty, MPI_SUM, win));
    PX_MPI(MPI_Get_accumulate(buf, 2, empty, buf, 0, MPI_INT, right, 0, 1, empty, MPI_SUM, win));
    EXPECT(MPI_Accumulate(buf, 1, MPI_INT, right, 0, 1, empty, MPI_SUM, win), MPI_ERR_TYPE);
    MPI_Type_free(&empty);
    MPI_Request zr[3];
    PX_MPI(MPI_Rget(buf, 0, MPI_INT, right, 0, 0, MPI_INT, win, &zr[0]));
    PX_MPI(MPI_Rput(buf, 0, MPI_INT, right, 0, 0, MPI_INT, win, &zr[1]));
    PX_MPI(MPI_Rget_accumulate(buf, 0, MPI_INT, buf, 0, MPI_INT, right, 0, 0, MPI_INT, MPI_SUM, win,
                               &zr[2]));
    int zdone = 0;
    PX_MPI(MPI_Testall(3, zr, &zdone, MPI_STATUSES_IGNORE));
    PX_CHECK(zdone, "request-based operations without data not complete at once");
    if (!zdone)
        PX_MPI(MPI_Waitall(3, zr, MPI_STATUSES_IGNORE));
    EXPECT(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
    /* a valid operation in the same epoch still works */
    PX_MPI(MPI_Get(buf, N, MPI_INT, right, 0, N, MPI_INT, win));
    PX_MPI(MPI_Win_unlock(right, win));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += buf[i] != right;
    PX_CHECK(!bad, "get after the errors: %d wrong", bad);

    /* the program's handler, with the window and the code */
    MPI_Errhandler mine;
    PX_MPI(MPI_Win_create_errhandler(on_error, &mine));
    PX_MPI(MPI_Win_set_errhandler(win, mine));
    int rc = MPI_Put(buf, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    int cls = -1;
    MPI_Error_class(handler_code, &cls);
    PX_CHECK(handler_calls == 1 && cls == MPI_ERR_RMA_SYNC && handler_win == win && rc == cls,
             "handler called %d times, class %d, returned %d", handler_calls, cls, rc);
    PX_MPI(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    PX_CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "call_errhandler: %d calls",
             handler_calls);
    PX_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&mine);
    MPI_Barrier(MPI_COMM_WORLD);
    PX_MPI(MPI_Win_free(&win));
    PX_CHECK(deletes == 3, "delete callback ran %d times' worth", deletes);
    PX_MPI(MPI_Win_free_keyval(&kv));

    /* dynamic window: detach of nothing, get from memory never attached */
    PX_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    PX_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT(MPI_Win_detach(win, buf), MPI_ERR_RMA_ATTACH);
    static int attached[N];
    /* two regions, one right after the other: an access may run through both */
    PX_MPI(MPI_Win_attach(win, attached, sizeof(attached) / 2));
    PX_MPI(MPI_Win_attach(win, attached + N / 2, sizeof(attached) / 2));
    MPI_Aint addr, raddr;
    MPI_Get_address(attached, &addr);
    int left = (me + np - 1) % np, whole[N];
    MPI_Sendrecv(&addr, 1, MPI_AINT, left, 0, &raddr, 1, MPI_AINT, right, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++)
        whole[i] = me * 100 + i;
    PX_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    PX_MPI(MPI_Put(whole, N, MPI_INT, right, raddr, N, MPI_INT, win));
    PX_MPI(MPI_Win_unlock(right, win));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        PX_CHECK(attached[i] == left * 100 + i, "put through two regions: [%d] = %d", i,
                 attached[i]);
    PX_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MPI_Get(buf, 1, MPI_INT, right, raddr + (MPI_Aint)sizeof(attached), 1, MPI_INT, win);
    EXPECT(MPI_Win_unlock(right, win), MPI_ERR_RMA_RANGE);
    PX_CHECK(MPI_Win_unlock(right, win) != MPI_SUCCESS, "the failed unlock left the lock");
    PX_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    PX_MPI(MPI_Get(buf, 1, MPI_INT, right, raddr, 1, MPI_INT, win));
    PX_MPI(MPI_Win_unlock(right, win));
    MPI_Barrier(MPI_COMM_WORLD);
    PX_MPI(MPI_Win_detach(win, attached));
    PX_MPI(MPI_Win_detach(win, attached + N / 2));
    PX_MPI(MPI_Win_free(&win));
    return px_test_finish("window attributes, names, hints, handlers and %d error cases", 20);
}
