/* MPI_File_sync calls fsync only at a process that wrote through the file
 * (or changed its size) since its last sync, counted by the MPI_T counter
 * io_fsyncs: after each kind of write (independent, at an offset, shared
 * pointer, collective, nonblocking) the writer's next sync makes one fsync
 * and a second sync none; a process that only read, or wrote zero bytes,
 * makes none; MPI_File_set_size makes one at the process that changed the
 * size. The data written is read back after each sync-barrier-sync. */
#include "io_test.h"

static MPI_T_pvar_session ses;
static MPI_T_pvar_handle pv;

static unsigned long long fsyncs(void)
{
    unsigned long long v = 0;
    MPI_T_pvar_read(ses, pv, &v);
    return v;
}

/* Syncs twice with a barrier between, and checks the fsyncs this process
 * made in the first (want) and in the second (none). */
static void sync_expect(MPI_File fh, int want, const char *what)
{
    unsigned long long a = fsyncs();
    PX_MPI(MPI_File_sync(fh));
    unsigned long long b = fsyncs();
    MPI_Barrier(MPI_COMM_WORLD);
    PX_MPI(MPI_File_sync(fh));
    unsigned long long c = fsyncs();
    PX_CHECK(b - a == (unsigned long long)want, "%s: first sync made %llu fsyncs, want %d", what,
             b - a, want);
    PX_CHECK(c == b, "%s: second sync made %llu fsyncs, want 0", what, c - b);
}

/* Rank r's 64 bytes at 64 * r (+ base), read back by the next rank. */
static void check_block(MPI_File fh, MPI_Offset base, int salt, const char *what)
{
    int np = px_test_size, other = (px_test_rank + 1) % np;
    unsigned char b[64];
    MPI_Status st;
    PX_MPI(MPI_File_read_at(fh, base + 64 * other, b, 64, MPI_BYTE, &st));
    for (int i = 0; i < 64; i++)
        if (b[i] != io_byte(other + salt, base + 64 * other + i)) {
            PX_CHECK(0, "%s: byte %d of rank %d's block is %u", what, i, other, b[i]);
            break;
        }
}

static void fill(unsigned char *b, int salt, MPI_Offset off)
{
    for (int i = 0; i < 64; i++)
        b[i] = io_byte(px_test_rank + salt, off + i);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "io_sync");
    int me = px_test_rank, np = px_test_size, provided, idx, count;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&ses);
    PX_REQUIRE(MPI_T_pvar_get_index("io_fsyncs", MPI_T_PVAR_CLASS_COUNTER, &idx) == MPI_SUCCESS,
               "no io_fsyncs counter");
    MPI_T_pvar_handle_alloc(ses, idx, NULL, &pv, &count);
    MPI_T_pvar_start(ses, pv);

    char path[512];
    io_path(path, sizeof(path), "data");
    MPI_File fh;
    PX_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    unsigned char b[64];
    MPI_Status st;

    /* nothing written yet: no fsync anywhere */
    sync_expect(fh, 0, "fresh file");

    /* an independent write at an offset by every rank */
    fill(b, 0, 64 * me);
    PX_MPI(MPI_File_write_at(fh, 64 * me, b, 64, MPI_BYTE, &st));
    sync_expect(fh, 1, "write_at");
    check_block(fh, 0, 0, "write_at");

    /* only rank 0 writes (through its file pointer); reads elsewhere */
    MPI_Offset base = 64 * np;
    if (me == 0) {
        for (int r = 0; r < np; r++) {
            unsigned char c[64];
            for (int i = 0; i < 64; i++)
                c[i] = io_byte(r + 1, base + 64 * r + i);
            PX_MPI(MPI_File_seek(fh, base + 64 * r, MPI_SEEK_SET));
            PX_MPI(MPI_File_write(fh, c, 64, MPI_BYTE, &st));
        }
    } else {
        PX_MPI(MPI_File_read_at(fh, 0, b, 64, MPI_BYTE, &st));
    }
    sync_expect(fh, me == 0, "rank 0's writes");
    check_block(fh, base, 1, "rank 0's writes");

    /* zero bytes written, and reads: no fsync */
    PX_MPI(MPI_File_write_at(fh, 0, b, 0, MPI_BYTE, &st));
    PX_MPI(MPI_File_read_at(fh, 0, b, 64, MPI_BYTE, &st));
    sync_expect(fh, 0, "zero-byte write and reads");

    /* a collective write, each rank its block (two-phase or direct: every
     * process whose data went through its own writes, or an aggregator's) */
    base = 128 * np;
    fill(b, 2, base + 64 * me);
    unsigned long long a = fsyncs();
    PX_MPI(MPI_File_write_at_all(fh, base + 64 * me, b, 64, MPI_BYTE, &st));
    PX_MPI(MPI_File_sync(fh));
    unsigned long long n = fsyncs() - a, total = 0;
    PX_CHECK(n <= 1, "write_at_all: %llu fsyncs in one sync", n);
    MPI_Allreduce(&n, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    PX_CHECK(total >= 1, "write_at_all: no process made an fsync");
    MPI_Barrier(MPI_COMM_WORLD);
    sync_expect(fh, 0, "after the collective write's sync");
    check_block(fh, base, 2, "write_at_all");

    /* a nonblocking write, and one through the shared file pointer */
    base = 192 * np;
    fill(b, 3, base + 64 * me);
    MPI_Request rq;
    PX_MPI(MPI_File_iwrite_at(fh, base + 64 * me, b, 64, MPI_BYTE, &rq));
    PX_MPI(MPI_Wait(&rq, &st));
    sync_expect(fh, 1, "iwrite_at");
    check_block(fh, base, 3, "iwrite_at");
    if (me == np - 1)
        PX_MPI(MPI_File_write_shared(fh, b, 8, MPI_BYTE, &st));
    sync_expect(fh, me == np - 1, "write_shared");

    /* a size change: rank 0 makes it */
    PX_MPI(MPI_File_set_size(fh, 4096 * np));
    sync_expect(fh, me == 0, "set_size");
    MPI_Offset size = 0;
    PX_MPI(MPI_File_get_size(fh, &size));
    PX_CHECK(size == 4096 * np, "size %lld", (long long)size);

    PX_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_T_pvar_handle_free(ses, &pv);
    MPI_T_pvar_session_free(&ses);
    MPI_T_finalize();
    return px_test_finish("fsyncs only after writes");
}
