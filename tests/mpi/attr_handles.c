/* Handles as the standard says:
 *   - error classes and codes a program adds: above MPI_ERR_LASTCODE,
 *     MPI_LASTUSEDCODE follows them, a code's class (also a predefined
 *     one), their strings; MPI_ERRORS_ABORT is an error handler;
 *   - a keyval freed while attributes use it: nothing fails, freeing it
 *     again does nothing, the delete callback still runs when the
 *     communicator goes; once gone, freeing it is MPI_ERR_KEYVAL;
 *   - MPI_Comm_dup whose copy callback fails: the callback's error,
 *     MPI_COMM_NULL, and what was copied before deleted again;
 *   - datatype keyvals and attributes: MPI_Type_dup copies them as the copy
 *     callback says, MPI_Type_free and MPI_Type_delete_attr delete them;
 *   - MPI_Op_free and MPI_Type_free right after starting nonblocking
 *     collectives that use them: the collectives complete with the right
 *     results;
 *   - attributes on MPI_COMM_SELF deleted at the start of MPI_Finalize, in
 *     the reverse order of setting, while MPI calls still work (checked
 *     after MPI_Finalize: the exit code says). */
#include "px_test.h"

static int deletes, copies;

static int count_delete(MPI_Comm c, int kv, void *val, void *extra)
{
    (void)c, (void)kv, (void)val, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static int failing_copy(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)kv, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

static int counting_copy(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)kv, (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void added_errors(void)
{
    int cls, code, code2, c, len, flag, *last;
    char s[MPI_MAX_ERROR_STRING];
    PX_MPI(MPI_Add_error_class(&cls));
    PX_CHECK(cls > MPI_ERR_LASTCODE, "added class %d not above MPI_ERR_LASTCODE", cls);
    PX_MPI(MPI_Add_error_code(cls, &code));
    PX_MPI(MPI_Add_error_code(MPI_ERR_ARG, &code2));
    PX_CHECK(code > MPI_ERR_LASTCODE && code2 > MPI_ERR_LASTCODE && code != code2 && code != cls,
             "codes %d %d class %d", code, code2, cls);
    PX_MPI(MPI_Error_class(code, &c));
    PX_CHECK(c == cls, "class of an added code: %d, want %d", c, cls);
    PX_MPI(MPI_Error_class(code2, &c));
    PX_CHECK(c == MPI_ERR_ARG, "class of a code added to MPI_ERR_ARG: %d", c);
    PX_MPI(MPI_Error_class(cls, &c));
    PX_CHECK(c == cls, "class of an added class: %d", c);
    PX_MPI(MPI_Add_error_string(cls, "a class of this test"));
    PX_MPI(MPI_Add_error_string(code, "a code of this test"));
    PX_MPI(MPI_Error_string(cls, s, &len));
    PX_CHECK(!strcmp(s, "a class of this test") && len == (int)strlen(s), "class string '%s'", s);
    PX_MPI(MPI_Error_string(code, s, &len));
    PX_CHECK(!strcmp(s, "a code of this test"), "code string '%s'", s);
    PX_MPI(MPI_Error_string(code2, s, &len));
    PX_CHECK(len == 0, "string of a code without one: '%s'", s);
    PX_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    PX_CHECK(flag && *last >= MPI_ERR_LASTCODE && *last >= code && *last >= code2 && *last >= cls,
             "MPI_LASTUSEDCODE %d (class %d codes %d %d)", flag ? *last : -1, cls, code, code2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PX_CHECK(MPI_Add_error_string(MPI_ERR_ARG, "no") != MPI_SUCCESS,
             "a string for a predefined class was accepted");
    PX_CHECK(MPI_Add_error_code(code, &c) != MPI_SUCCESS, "a code used as a class was accepted");
    MPI_Errhandler eh;
    PX_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT));
    PX_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    PX_CHECK(eh == MPI_ERRORS_ABORT, "MPI_ERRORS_ABORT not set");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

static void keyvals(void)
{
    MPI_Comm dup, dup2 = MPI_COMM_WORLD;
    int kv, kv_fail, kv_copy, val = 7, *got, flag;

    /* freed while in use */
    deletes = 0;
    PX_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &kv, NULL));
    PX_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    PX_MPI(MPI_Comm_set_attr(dup, kv, &val));
    int saved = kv;
    PX_MPI(MPI_Comm_free_keyval(&kv));
    PX_CHECK(kv == MPI_KEYVAL_INVALID, "keyval not reset by MPI_Comm_free_keyval");
    PX_MPI(MPI_Comm_get_attr(dup, saved, &got, &flag));
    PX_CHECK(flag && got == &val, "the attribute of a freed keyval is gone");
    int again = saved;
    PX_MPI(MPI_Comm_free_keyval(&again));
    PX_CHECK(again == MPI_KEYVAL_INVALID, "keyval not reset by a second MPI_Comm_free_keyval");
    PX_MPI(MPI_Comm_get_attr(dup, saved, &got, &flag));
    PX_CHECK(flag && got == &val, "a second free removed the attribute");
    PX_MPI(MPI_Comm_free(&dup));
    PX_CHECK(deletes == 1, "delete callback of a freed keyval ran %d times", deletes);
    again = saved;
    int frc = MPI_Comm_free_keyval(&again), fcls = -1;
    MPI_Error_class(frc, &fcls);
    PX_CHECK(fcls == MPI_ERR_KEYVAL, "freeing a keyval that is gone: class %d", fcls);

    /* a copy callback that fails, after one that copied */
    deletes = copies = 0;
    PX_MPI(MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &kv_fail, NULL));
    PX_MPI(MPI_Comm_create_keyval(counting_copy, count_delete, &kv_copy, NULL));
    PX_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    PX_MPI(MPI_Comm_set_attr(dup, kv_fail, &val));
    PX_MPI(MPI_Comm_set_attr(dup, kv_copy, &val));
    int rc = MPI_Comm_dup(dup, &dup2);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    PX_CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_OTHER, "dup with a failing copy: rc %d class %d",
             rc, cls);
    PX_CHECK(dup2 == MPI_COMM_NULL, "dup with a failing copy did not give MPI_COMM_NULL");
    PX_CHECK(copies == 1 && deletes == 1, "copied %d, deleted %d (want 1 and 1)", copies, deletes);
    PX_MPI(MPI_Comm_free(&dup));
    PX_CHECK(deletes == 2, "delete callbacks at free: %d", deletes);
    PX_MPI(MPI_Comm_free_keyval(&kv_fail));
    PX_MPI(MPI_Comm_free_keyval(&kv_copy));
}

static int type_deletes;

static int type_delete(MPI_Datatype t, int kv, void *val, void *extra)
{
    (void)t, (void)kv, (void)val, (void)extra;
    type_deletes++;
    return MPI_SUCCESS;
}

static void type_attrs(void)
{
    MPI_Datatype t, d;
    int kv, kv_nocopy, a = 1, b = 2, *got, flag;
    PX_MPI(MPI_Type_contiguous(3, MPI_INT, &t));
    PX_MPI(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete, &kv, NULL));
    PX_MPI(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete, &kv_nocopy, NULL));
    PX_MPI(MPI_Type_set_attr(t, kv, &a));
    PX_MPI(MPI_Type_set_attr(t, kv_nocopy, &b));
    PX_MPI(MPI_Type_get_attr(t, kv, &got, &flag));
    PX_CHECK(flag && got == &a, "datatype attribute not found");
    PX_MPI(MPI_Type_dup(t, &d));
    PX_MPI(MPI_Type_get_attr(d, kv, &got, &flag));
    PX_CHECK(flag && got == &a, "MPI_TYPE_DUP_FN attribute not copied by MPI_Type_dup");
    PX_MPI(MPI_Type_get_attr(d, kv_nocopy, &got, &flag));
    PX_CHECK(!flag, "MPI_TYPE_NULL_COPY_FN attribute copied");
    type_deletes = 0;
    PX_MPI(MPI_Type_delete_attr(t, kv_nocopy));
    PX_CHECK(type_deletes == 1, "MPI_Type_delete_attr: %d delete calls", type_deletes);
    PX_MPI(MPI_Type_free(&d));
    PX_CHECK(type_deletes == 2, "MPI_Type_free of the copy: %d delete calls", type_deletes);
    PX_MPI(MPI_Type_free(&t));
    PX_CHECK(type_deletes == 3, "MPI_Type_free: %d delete calls", type_deletes);
    /* a communicator keyval is not a datatype keyval */
    int ckv;
    PX_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckv, NULL));
    PX_CHECK(MPI_Type_set_attr(MPI_INT, ckv, &a) != MPI_SUCCESS,
             "a communicator keyval set a datatype attribute");
    PX_MPI(MPI_Comm_free_keyval(&ckv));
    PX_MPI(MPI_Type_free_keyval(&kv));
    PX_MPI(MPI_Type_free_keyval(&kv_nocopy));
}

static void sum_pairs(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < 2 * *len; i++)
        b[i] += a[i];
}

/* Handles freed while nonblocking collectives use them. */
static void freed_in_flight(void)
{
    enum { N = 1000, ROUNDS = 5 };
    int n = px_test_size, me = px_test_rank;
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Datatype pair, pair2;
        MPI_Op op;
        MPI_Request req[3];
        static int in[2 * N], out[2 * N], bc[2 * N];
        for (int i = 0; i < 2 * N; i++) {
            in[i] = me + i + round;
            out[i] = -1;
            bc[i] = me == 0 ? 3 * i + round : -1;
        }
        PX_MPI(MPI_Type_contiguous(2, MPI_INT, &pair));
        PX_MPI(MPI_Type_commit(&pair));
        PX_MPI(MPI_Type_dup(pair, &pair2));
        PX_MPI(MPI_Op_create(sum_pairs, 1, &op));
        PX_MPI(MPI_Iallreduce(in, out, N, pair, op, MPI_COMM_WORLD, &req[0]));
        PX_MPI(MPI_Ibcast(bc, N, pair2, 0, MPI_COMM_WORLD, &req[1]));
        PX_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &req[2]));
        PX_MPI(MPI_Op_free(&op));
        PX_MPI(MPI_Type_free(&pair));
        PX_MPI(MPI_Type_free(&pair2));
        PX_CHECK(op == MPI_OP_NULL && pair == MPI_DATATYPE_NULL, "handles not reset by free");
        PX_MPI(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
        int bad = 0;
        for (int i = 0; i < 2 * N; i++) {
            bad += out[i] != n * (i + round) + n * (n - 1) / 2;
            bad += bc[i] != 3 * i + round;
        }
        PX_CHECK(!bad, "round %d: %d wrong values", round, bad);
    }
}

/* MPI_COMM_SELF's attributes at MPI_Finalize */
enum { SELF_ATTRS = 3 };
static int self_kv[SELF_ATTRS], self_order[SELF_ATTRS], self_seen, self_mpi_ok = 1;

static int self_delete(MPI_Comm c, int kv, void *val, void *extra)
{
    (void)c, (void)val, (void)extra;
    int flag = 1, rank = -1;
    MPI_Finalized(&flag);
    if (flag || MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS || rank != px_test_rank)
        self_mpi_ok = 0;
    if (self_seen < SELF_ATTRS)
        self_order[self_seen] = kv;
    self_seen++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "attr_handles");
    added_errors();
    keyvals();
    type_attrs();
    freed_in_flight();
    for (int i = 0; i < SELF_ATTRS; i++) {
        PX_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &self_kv[i], NULL));
        PX_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, self_kv[i], NULL));
    }
    int rc = px_test_finish("added errors, keyvals, datatype attributes, handles freed in flight");
    int ok = self_seen == SELF_ATTRS && self_mpi_ok;
    for (int i = 0; ok && i < SELF_ATTRS; i++)
        ok = self_order[i] == self_kv[SELF_ATTRS - 1 - i];
    if (!ok) {
        fprintf(stderr,
                "FAIL attr_handles rank %d: MPI_COMM_SELF attributes at MPI_Finalize: %d of %d "
                "deleted, MPI usable %d, order %s\n",
                px_test_rank, self_seen, SELF_ATTRS, self_mpi_ok,
                self_seen == SELF_ATTRS ? "wrong" : "-");
        return 1;
    }
    return rc;
}
