/* MPI-4.0 calls: MPI_Isendrecv and MPI_Isendrecv_replace around a ring
 * (contiguous and strided data, several in flight, MPI_PROC_NULL ends),
 * MPI_Info_get_string (buflen in and out, a short buffer), and
 * MPI_Comm_idup_with_info (the hints given replace the original's). */
#include "px_test.h"

static void isendrecv(void)
{
    enum { N = 5000, K = 4 };
    int n = px_test_size, me = px_test_rank, right = (me + 1) % n, left = (me + n - 1) % n;
    static int sbuf[K][N], rbuf[K][N];
    MPI_Request req[K];
    for (int k = 0; k < K; k++)
        for (int i = 0; i < N; i++) {
            sbuf[k][i] = me * 100000 + k * N + i;
            rbuf[k][i] = -1;
        }
    for (int k = 0; k < K; k++)
        PX_MPI(MPI_Isendrecv(sbuf[k], N, MPI_INT, right, k, rbuf[k], N, MPI_INT, left, k,
                             MPI_COMM_WORLD, &req[k]));
    MPI_Status st[K];
    PX_MPI(MPI_Waitall(K, req, st));
    for (int k = 0; k < K; k++) {
        int bad = 0, cnt = -1;
        for (int i = 0; i < N; i++)
            bad += rbuf[k][i] != left * 100000 + k * N + i;
        MPI_Get_count(&st[k], MPI_INT, &cnt);
        PX_CHECK(!bad, "isendrecv %d: %d wrong values", k, bad);
        PX_CHECK(st[k].MPI_SOURCE == left && st[k].MPI_TAG == k && cnt == N,
                 "isendrecv %d: status source %d tag %d count %d", k, st[k].MPI_SOURCE,
                 st[k].MPI_TAG, cnt);
    }

    /* in place, strided: every other int of a 2N array */
    static int buf[2 * N];
    MPI_Datatype every_other;
    PX_MPI(MPI_Type_vector(N, 1, 2, MPI_INT, &every_other));
    PX_MPI(MPI_Type_commit(&every_other));
    for (int i = 0; i < 2 * N; i++)
        buf[i] = i % 2 ? -7 : me * 100000 + i;
    MPI_Request r;
    MPI_Status s;
    PX_MPI(MPI_Isendrecv_replace(buf, 1, every_other, right, 9, left, 9, MPI_COMM_WORLD, &r));
    PX_MPI(MPI_Wait(&r, &s));
    int bad = 0;
    for (int i = 0; i < 2 * N; i++)
        bad += buf[i] != (i % 2 ? -7 : left * 100000 + i);
    PX_CHECK(!bad, "isendrecv_replace: %d wrong values", bad);
    PX_CHECK(s.MPI_SOURCE == left && s.MPI_TAG == 9, "isendrecv_replace status %d %d", s.MPI_SOURCE,
             s.MPI_TAG);
    MPI_Type_free(&every_other);

    /* to and from nobody */
    int x = 5, y = 6;
    PX_MPI(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, &y, 1, MPI_INT, MPI_PROC_NULL, 0,
                         MPI_COMM_WORLD, &r));
    PX_MPI(MPI_Wait(&r, &s));
    PX_CHECK(y == 6 && s.MPI_SOURCE == MPI_PROC_NULL, "isendrecv with MPI_PROC_NULL: %d %d", y,
             s.MPI_SOURCE);
}

static void info_get_string(void)
{
    MPI_Info info;
    char v[64];
    int len, flag;
    PX_MPI(MPI_Info_create(&info));
    PX_MPI(MPI_Info_set(info, "color", "ultramarine"));
    len = sizeof(v);
    PX_MPI(MPI_Info_get_string(info, "color", &len, v, &flag));
    PX_CHECK(flag && !strcmp(v, "ultramarine") && len == 12, "get_string: %d '%s' %d", flag, v,
             len);
    len = 0;
    PX_MPI(MPI_Info_get_string(info, "color", &len, NULL, &flag));
    PX_CHECK(flag && len == 12, "get_string for the length: %d %d", flag, len);
    len = 5;
    PX_MPI(MPI_Info_get_string(info, "color", &len, v, &flag));
    PX_CHECK(flag && !strcmp(v, "ultr") && len == 12, "get_string, short buffer: '%s' %d", v, len);
    len = sizeof(v);
    PX_MPI(MPI_Info_get_string(info, "size", &len, v, &flag));
    PX_CHECK(!flag, "get_string of a missing key");
    MPI_Info_free(&info);
}

static void idup_with_info(void)
{
    MPI_Info info, got;
    MPI_Comm dup;
    MPI_Request r;
    char v[MPI_MAX_INFO_VAL];
    int flag, sum = 0, one = 1;
    PX_MPI(MPI_Info_create(&info));
    PX_MPI(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    PX_MPI(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &dup, &r));
    MPI_Info_free(&info); /* the duplicate keeps its own copy */
    PX_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    PX_MPI(MPI_Comm_get_info(dup, &got));
    PX_MPI(MPI_Info_get(got, "mpi_assert_no_any_tag", sizeof(v) - 1, v, &flag));
    PX_CHECK(flag && !strcmp(v, "true"), "hint of idup_with_info: %d '%s'", flag, v);
    MPI_Info_free(&got);
    PX_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup));
    PX_CHECK(sum == px_test_size, "allreduce on the duplicate: %d", sum);
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "mpi4_calls");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    isendrecv();
    info_get_string();
    idup_with_info();
    return px_test_finish("isendrecv, isendrecv_replace, info_get_string, idup_with_info");
}
