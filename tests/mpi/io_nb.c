/* Nonblocking and split collective access: every rank writes its block
 * with iwrite_at, iwrite (individual pointer), iwrite_shared and the
 * collective iwrite_at_all / iwrite_all, waited with MPI_Wait, MPI_Waitall
 * and MPI_Test loops; reads them back with the matching nonblocking reads
 * and the split collectives (_begin/_end of read_all, read_at_all,
 * read_ordered, and their write forms); each status gives the count of the
 * memory type (MPI_Get_count, MPI_Get_elements), a read past the end a
 * smaller one; a second _begin before the _end is refused. */
#include "io_test.h"

enum { N = 256 };

static void fill(int *b, int rank, int tag)
{
    for (int i = 0; i < N; i++)
        b[i] = rank * 1000000 + tag * 10000 + i;
}

static int check(const int *b, int rank, int tag, const char *what)
{
    for (int i = 0; i < N; i++)
        if (b[i] != rank * 1000000 + tag * 10000 + i) {
            PX_CHECK(0, "%s: int %d is %d, want %d", what, i, b[i],
                     rank * 1000000 + tag * 10000 + i);
            return 0;
        }
    return 1;
}

static void wait_test(MPI_Request *r, MPI_Status *st)
{
    int done = 0;
    for (int i = 0; i < 1000000 && !done; i++)
        MPI_Test(r, &done, st);
    PX_CHECK(done && *r == MPI_REQUEST_NULL, "MPI_Test never completed the request");
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "io_nb");
    int me = px_test_rank, np = px_test_size;
    char path[512];
    io_path(path, sizeof(path), "dat");
    MPI_File fh;
    MPI_Status st, sts[3];
    MPI_Request rq[3];
    PX_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    PX_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    /* five regions of np blocks: at, ptr, at_all, all, shared */
    MPI_Offset blk = N, reg = (MPI_Offset)N * np;
    int w[5][N], r[N];
    for (int t = 0; t < 5; t++)
        fill(w[t], me, t);
    PX_MPI(MPI_File_iwrite_at(fh, 0 * reg + me * blk, w[0], N, MPI_INT, &rq[0]));
    PX_MPI(MPI_File_seek(fh, 1 * reg + me * blk, MPI_SEEK_SET));
    PX_MPI(MPI_File_iwrite(fh, w[1], N, MPI_INT, &rq[1]));
    PX_MPI(MPI_File_iwrite_at_all(fh, 2 * reg + me * blk, w[2], N, MPI_INT, &rq[2]));
    PX_MPI(MPI_Waitall(3, rq, sts));
    for (int i = 0; i < 3; i++)
        PX_CHECK(io_count(&sts[i], MPI_INT) == N, "write %d: count %d", i,
                 io_count(&sts[i], MPI_INT));
    PX_MPI(MPI_File_seek(fh, 3 * reg + me * blk, MPI_SEEK_SET));
    PX_MPI(MPI_File_iwrite_all(fh, w[3], N, MPI_INT, &rq[0]));
    wait_test(&rq[0], &st);
    PX_CHECK(io_count(&st, MPI_INT) == N, "iwrite_all: count %d", io_count(&st, MPI_INT));
    MPI_Offset pos = -1;
    PX_MPI(MPI_File_get_position(fh, &pos));
    PX_CHECK(pos == 3 * reg + me * blk + N, "position %lld after iwrite_all", (long long)pos);
    PX_MPI(MPI_File_seek_shared(fh, 4 * reg, MPI_SEEK_SET));
    PX_MPI(MPI_File_iwrite_shared(fh, w[4], N, MPI_INT, &rq[0]));
    PX_MPI(MPI_Wait(&rq[0], &st));
    PX_CHECK(rq[0] == MPI_REQUEST_NULL && io_count(&st, MPI_INT) == N, "iwrite_shared: %d",
             io_count(&st, MPI_INT));
    PX_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PX_MPI(MPI_File_sync(fh));

    /* the same blocks read back, nonblocking */
    int other = (me + 1) % np;
    PX_MPI(MPI_File_iread_at(fh, 0 * reg + other * blk, r, N, MPI_INT, &rq[0]));
    PX_MPI(MPI_Wait(&rq[0], &st));
    check(r, other, 0, "iread_at");
    int elems = -1;
    MPI_Get_elements(&st, MPI_INT, &elems);
    PX_CHECK(elems == N, "iread_at: %d elements", elems);
    PX_MPI(MPI_File_seek(fh, 1 * reg + other * blk, MPI_SEEK_SET));
    PX_MPI(MPI_File_iread(fh, r, N, MPI_INT, &rq[0]));
    wait_test(&rq[0], &st);
    check(r, other, 1, "iread");
    PX_MPI(MPI_File_iread_at_all(fh, 2 * reg + other * blk, r, N, MPI_INT, &rq[0]));
    PX_MPI(MPI_Wait(&rq[0], &st));
    check(r, other, 2, "iread_at_all");
    PX_MPI(MPI_File_seek(fh, 3 * reg + other * blk, MPI_SEEK_SET));
    PX_MPI(MPI_File_iread_all(fh, r, N, MPI_INT, &rq[0]));
    PX_MPI(MPI_Wait(&rq[0], &st));
    check(r, other, 3, "iread_all");
    /* the shared region holds every rank's block once, in some order */
    int found = 0;
    for (int b = 0; b < np; b++) {
        PX_MPI(MPI_File_iread_at(fh, 4 * reg + b * blk, r, N, MPI_INT, &rq[0]));
        PX_MPI(MPI_Wait(&rq[0], &st));
        found += r[0] == other * 1000000 + 4 * 10000 && r[N - 1] == r[0] + N - 1;
    }
    PX_CHECK(found == 1, "rank %d's shared block found %d times", other, found);
    /* past the end: fewer ints */
    PX_MPI(MPI_File_iread_at(fh, 5 * reg - 10, r, N, MPI_INT, &rq[0]));
    PX_MPI(MPI_Wait(&rq[0], &st));
    PX_CHECK(io_count(&st, MPI_INT) == 10, "iread_at past the end: %d ints",
             io_count(&st, MPI_INT));
    MPI_Barrier(MPI_COMM_WORLD);

    /* split collectives: writes into a sixth region, then reads */
    int sw[N];
    fill(sw, me, 6);
    PX_MPI(MPI_File_write_at_all_begin(fh, 5 * reg + me * blk, sw, N, MPI_INT));
    EXPECT_CLASS(MPI_File_read_all_begin(fh, r, N, MPI_INT), MPI_ERR_IO);
    PX_MPI(MPI_File_write_at_all_end(fh, sw, &st));
    PX_CHECK(io_count(&st, MPI_INT) == N, "write_at_all_end: count %d", io_count(&st, MPI_INT));
    EXPECT_CLASS(MPI_File_write_at_all_end(fh, sw, &st), MPI_ERR_IO);
    fill(sw, me, 7);
    PX_MPI(MPI_File_seek(fh, 6 * reg + me * blk, MPI_SEEK_SET));
    PX_MPI(MPI_File_write_all_begin(fh, sw, N, MPI_INT));
    PX_MPI(MPI_File_write_all_end(fh, sw, &st));
    PX_MPI(MPI_File_seek_shared(fh, 7 * reg, MPI_SEEK_SET));
    fill(sw, me, 8);
    PX_MPI(MPI_File_write_ordered_begin(fh, sw, N, MPI_INT));
    PX_MPI(MPI_File_write_ordered_end(fh, sw, &st));
    PX_CHECK(io_count(&st, MPI_INT) == N, "write_ordered_end: count %d", io_count(&st, MPI_INT));
    MPI_Barrier(MPI_COMM_WORLD);

    PX_MPI(MPI_File_read_at_all_begin(fh, 5 * reg + other * blk, r, N, MPI_INT));
    PX_MPI(MPI_File_read_at_all_end(fh, r, &st));
    check(r, other, 6, "read_at_all_begin/end");
    PX_MPI(MPI_File_seek(fh, 6 * reg + other * blk, MPI_SEEK_SET));
    PX_MPI(MPI_File_read_all_begin(fh, r, N, MPI_INT));
    PX_MPI(MPI_File_read_all_end(fh, r, &st));
    check(r, other, 7, "read_all_begin/end");
    PX_CHECK(io_count(&st, MPI_INT) == N, "read_all_end: count %d", io_count(&st, MPI_INT));
    PX_MPI(MPI_File_seek_shared(fh, 7 * reg, MPI_SEEK_SET));
    PX_MPI(MPI_File_read_ordered_begin(fh, r, N, MPI_INT));
    PX_MPI(MPI_File_read_ordered_end(fh, r, &st));
    check(r, me, 8, "read_ordered_begin/end");
    MPI_Count cnt = -1;
    MPI_Get_elements_x(&st, MPI_INT, &cnt);
    PX_CHECK(cnt == N, "read_ordered_end: %lld elements", (long long)cnt);
    PX_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    return px_test_finish("nonblocking and split collective access, %d ints a call", N);
}
