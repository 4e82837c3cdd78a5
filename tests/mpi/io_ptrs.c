/* File pointers:
 * - the individual pointer: seek with SEEK_SET, SEEK_CUR, SEEK_END (in
 *   etypes of a view with a displacement), get_position, reads and
 *   writes advancing it, a negative position refused;
 * - the shared pointer: every rank writes records with write_shared; the
 *   file then holds every record exactly once, whole; get_position_shared
 *   says where it ended; read_shared hands each record to exactly one rank;
 * - ordered access: rank r writes r + 1 ints of value r, the file holds
 *   them in rank order; read back with read_ordered; seek_shared with SET,
 *   CUR and END;
 * - MPI_MODE_APPEND starts both pointers at the end of the file. */
#include "io_test.h"

enum { N = 100, K = 200, R = 12 };

static int rec_word(int rank, int seq, int i) { return rank * 100000 + seq * 100 + i; }

static void individual(const char *path, int me, int np)
{
    MPI_File fh;
    MPI_Status st;
    PX_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    /* ints after an 8-byte header */
    PX_MPI(MPI_File_set_view(fh, 8, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int buf[N], in[N];
    for (int i = 0; i < N; i++)
        buf[i] = me * N + i;
    MPI_Offset pos = -1;
    PX_MPI(MPI_File_seek(fh, (MPI_Offset)me * N, MPI_SEEK_SET));
    PX_MPI(MPI_File_get_position(fh, &pos));
    PX_CHECK(pos == (MPI_Offset)me * N, "position %lld after SEEK_SET", (long long)pos);
    PX_MPI(MPI_File_write(fh, buf, N / 2, MPI_INT, &st));
    PX_MPI(MPI_File_write(fh, buf + N / 2, N - N / 2, MPI_INT, &st));
    PX_MPI(MPI_File_get_position(fh, &pos));
    PX_CHECK(pos == (MPI_Offset)me * N + N, "position %lld after writing", (long long)pos);
    PX_MPI(MPI_File_seek(fh, -N, MPI_SEEK_CUR));
    PX_MPI(MPI_File_read(fh, in, N, MPI_INT, &st));
    PX_CHECK(io_count(&st, MPI_INT) == N && !memcmp(in, buf, sizeof(buf)),
             "read back %d ints after SEEK_CUR", io_count(&st, MPI_INT));
    MPI_Barrier(MPI_COMM_WORLD);
    PX_MPI(MPI_File_seek(fh, 0, MPI_SEEK_END));
    PX_MPI(MPI_File_get_position(fh, &pos));
    PX_CHECK(pos == (MPI_Offset)np * N, "SEEK_END at %lld, want %d", (long long)pos, np * N);
    PX_MPI(MPI_File_seek(fh, -3, MPI_SEEK_END));
    PX_MPI(MPI_File_read(fh, in, 10, MPI_INT, &st));
    PX_CHECK(io_count(&st, MPI_INT) == 3 && in[0] == np * N - 3 && in[2] == np * N - 1,
             "read %d ints before the end: %d", io_count(&st, MPI_INT), in[0]);
    PX_MPI(MPI_File_get_position(fh, &pos));
    PX_CHECK(pos == (MPI_Offset)np * N, "position %lld after the last read", (long long)pos);
    EXPECT_CLASS(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
    /* the byte offset of the pointer */
    MPI_Offset b = -1;
    PX_MPI(MPI_File_get_byte_offset(fh, pos, &b));
    PX_CHECK(b == 8 + (MPI_Offset)np * N * 4, "byte offset %lld", (long long)b);
    PX_MPI(MPI_File_close(&fh));
}

static void shared(const char *path, int me, int np)
{
    MPI_File fh;
    MPI_Status st;
    PX_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PX_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int rec[R];
    for (int s = 0; s < K; s++) {
        for (int i = 0; i < R; i++)
            rec[i] = rec_word(me, s, i);
        PX_MPI(MPI_File_write_shared(fh, rec, R, MPI_INT, &st));
        PX_CHECK(io_count(&st, MPI_INT) == R, "write_shared wrote %d", io_count(&st, MPI_INT));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset pos = -1;
    PX_MPI(MPI_File_get_position_shared(fh, &pos));
    PX_CHECK(pos == (MPI_Offset)np * K * R, "shared position %lld, want %d", (long long)pos,
             np * K * R);
    /* every record once, whole */
    int total = np * K, *seen = calloc((size_t)total, sizeof(int));
    int *all = malloc(sizeof(int) * (size_t)total * R);
    PX_MPI(MPI_File_read_at(fh, 0, all, total * R, MPI_INT, &st));
    PX_CHECK(io_count(&st, MPI_INT) == total * R, "file holds %d ints", io_count(&st, MPI_INT));
    for (int j = 0; j < total; j++) {
        int r = all[j * R] / 100000, s = all[j * R] / 100 % 1000, whole = r >= 0 && r < np && s < K;
        for (int i = 0; i < R && whole; i++)
            whole = all[j * R + i] == rec_word(r, s, i);
        PX_CHECK(whole, "record %d is torn or foreign (%d)", j, all[j * R]);
        if (whole)
            seen[r * K + s]++;
    }
    for (int j = 0; j < total; j++)
        PX_CHECK(seen[j] == 1, "record of rank %d seq %d found %d times", j / K, j % K, seen[j]);

    /* read_shared hands every record to one rank */
    PX_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(seen, 0, sizeof(int) * (size_t)total);
    for (;;) {
        PX_MPI(MPI_File_read_shared(fh, rec, R, MPI_INT, &st));
        int got = io_count(&st, MPI_INT);
        if (got == 0)
            break;
        PX_CHECK(got == R, "read_shared got %d ints", got);
        int r = rec[0] / 100000, s = rec[0] / 100 % 1000;
        if (r >= 0 && r < np && s >= 0 && s < K && rec[R - 1] == rec_word(r, s, R - 1))
            seen[r * K + s]++;
        else
            PX_CHECK(0, "read_shared got a bad record (%d)", rec[0]);
    }
    int *sum = calloc((size_t)total, sizeof(int));
    MPI_Allreduce(seen, sum, total, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int j = 0; j < total; j++)
        PX_CHECK(sum[j] == 1, "record %d read %d times by read_shared", j, sum[j]);
    free(sum);
    free(seen);
    free(all);
    PX_MPI(MPI_File_close(&fh));
}

static void ordered(const char *path, int me, int np)
{
    MPI_File fh;
    MPI_Status st;
    PX_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PX_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int total = np * (np + 1) / 2, buf[64];
    for (int i = 0; i <= me; i++)
        buf[i] = me;
    for (int round = 0; round < 2; round++) {
        PX_MPI(MPI_File_write_ordered(fh, buf, me + 1, MPI_INT, &st));
        PX_CHECK(io_count(&st, MPI_INT) == me + 1, "write_ordered wrote %d",
                 io_count(&st, MPI_INT));
    }
    MPI_Offset pos = -1;
    PX_MPI(MPI_File_get_position_shared(fh, &pos));
    PX_CHECK(pos == 2 * total, "shared position %lld after ordered writes", (long long)pos);
    int *all = malloc(sizeof(int) * 2 * (size_t)total);
    PX_MPI(MPI_File_read_at_all(fh, 0, all, 2 * total, MPI_INT, &st));
    for (int round = 0, j = 0; round < 2; round++)
        for (int r = 0; r < np; r++)
            for (int i = 0; i <= r; i++, j++)
                PX_CHECK(all[j] == r, "int %d is %d, want %d (rank order)", j, all[j], r);
    free(all);
    /* seek_shared: END, then back with CUR */
    PX_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    PX_MPI(MPI_File_get_position_shared(fh, &pos));
    PX_CHECK(pos == 2 * total, "SEEK_END of the shared pointer: %lld", (long long)pos);
    PX_MPI(MPI_File_seek_shared(fh, -2 * total, MPI_SEEK_CUR));
    PX_MPI(MPI_File_get_position_shared(fh, &pos));
    PX_CHECK(pos == 0, "SEEK_CUR back to %lld", (long long)pos);
    memset(buf, 0xff, sizeof(buf));
    PX_MPI(MPI_File_read_ordered(fh, buf, me + 1, MPI_INT, &st));
    PX_CHECK(io_count(&st, MPI_INT) == me + 1, "read_ordered read %d", io_count(&st, MPI_INT));
    for (int i = 0; i <= me; i++)
        PX_CHECK(buf[i] == me, "read_ordered int %d is %d", i, buf[i]);
    PX_MPI(MPI_File_get_position_shared(fh, &pos));
    PX_CHECK(pos == total, "shared position %lld after read_ordered", (long long)pos);
    PX_MPI(MPI_File_close(&fh));

    /* append: both pointers at the end (bytes: the default view) */
    PX_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    MPI_Offset ind = -1, sh = -1;
    PX_MPI(MPI_File_get_position(fh, &ind));
    PX_MPI(MPI_File_get_position_shared(fh, &sh));
    PX_CHECK(ind == 2 * total * 4 && sh == 2 * total * 4, "append: pointers at %lld and %lld",
             (long long)ind, (long long)sh);
    int one = 7;
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        PX_MPI(MPI_File_write_shared(fh, &one, sizeof(one), MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset size = 0;
    PX_MPI(MPI_File_get_size(fh, &size));
    PX_CHECK(size == 2 * total * 4 + 4, "size %lld after appending", (long long)size);
    PX_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "io_ptrs");
    int me = px_test_rank, np = px_test_size;
    char p1[512], p2[512], p3[512];
    io_path(p1, sizeof(p1), "ind");
    io_path(p2, sizeof(p2), "shared");
    io_path(p3, sizeof(p3), "ordered");
    individual(p1, me, np);
    shared(p2, me, np);
    ordered(p3, me, np);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        MPI_File_delete(p1, MPI_INFO_NULL);
        MPI_File_delete(p2, MPI_INFO_NULL);
        MPI_File_delete(p3, MPI_INFO_NULL);
        /* no shared pointer file is left next to them */
        char dir[512], cmd[1200];
        snprintf(dir, sizeof(dir), "%s", p2);
        char *base = strrchr(dir, '/');
        *base++ = 0;
        *strrchr(base, '.') = 0; /* io_ptrs.<id> */
        snprintf(cmd, sizeof(cmd), "ls -a %s | grep -F '%s.' | grep -q shfp", dir, base);
        PX_CHECK(system(cmd) != 0, "a shared file pointer file is left in %s", dir);
    }
    return px_test_finish("%d records through the shared pointer, ordered, seeks", np * K);
}
