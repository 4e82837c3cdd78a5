/* Data representations:
 * - "external32": ints, shorts and doubles written through an external32
 *   view are big-endian in the file (checked byte by byte through a native
 *   view), and read back through the external32 view as they were, also
 *   into a noncontiguous memory type; "internal" is the native layout;
 * - MPI_Register_datarep: a representation whose conversions store each
 *   int XOR a mask; the file holds the masked ints, reads give the
 *   originals, and the program's read, write and extent functions were
 *   called; registering a name twice (or a predefined one) is refused;
 * - MPI_Register_datarep_c: the same with another mask, whose large-count
 *   conversions are the ones called. */
#include "io_test.h"

#include <stdint.h>

enum { N = 64 };
#define MASK 0x5a5a5a5a

static int calls_read, calls_write, calls_extent;

static int xor_write(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position,
                     void *extra)
{
    PX_CHECK(dt == MPI_INT && extra == &calls_write, "write conversion given another type");
    const int *u = (const int *)userbuf + position;
    int *f = filebuf;
    for (int i = 0; i < count; i++)
        f[i] = u[i] ^ MASK;
    calls_write++;
    return MPI_SUCCESS;
}

static int xor_read(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position,
                    void *extra)
{
    (void)extra;
    PX_CHECK(dt == MPI_INT, "read conversion given another type");
    int *u = (int *)userbuf + position;
    const int *f = filebuf;
    for (int i = 0; i < count; i++)
        u[i] = f[i] ^ MASK;
    calls_read++;
    return MPI_SUCCESS;
}

static int xor_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    (void)extra;
    int size;
    MPI_Type_size(dt, &size);
    *extent = size;
    calls_extent++;
    return MPI_SUCCESS;
}

/* The large-count conversions (MPI_Register_datarep_c): another mask. */
#define MASK_C 0x0f0f0f0f
static int calls_read_c, calls_write_c;

static int xor_write_c(void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf,
                       MPI_Offset position, void *extra)
{
    PX_CHECK(dt == MPI_INT && extra == &calls_write_c, "write_c conversion given another type");
    const int *u = (const int *)userbuf + position;
    int *f = filebuf;
    for (MPI_Count i = 0; i < count; i++)
        f[i] = u[i] ^ MASK_C;
    calls_write_c++;
    return MPI_SUCCESS;
}

static int xor_read_c(void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf,
                      MPI_Offset position, void *extra)
{
    PX_CHECK(dt == MPI_INT && extra == &calls_write_c, "read_c conversion given another type");
    int *u = (int *)userbuf + position;
    const int *f = filebuf;
    for (MPI_Count i = 0; i < count; i++)
        u[i] = f[i] ^ MASK_C;
    calls_read_c++;
    return MPI_SUCCESS;
}

/* Through the view of representation rep at xd (set by the caller): the
 * ints written are read back as they were, the conversions of the
 * representation (counted at writes, reads) were called, and the file
 * holds them XOR mask, as a native view shows. */
static void xor_roundtrip(MPI_File fh, MPI_Offset xd, const char *rep, const int *iv, int mask,
                          const int *writes, const int *reads)
{
    int ir[N], w0 = *writes, r0 = *reads;
    MPI_Status st;
    PX_MPI(MPI_File_write_at(fh, 0, iv, N, MPI_INT, &st));
    PX_CHECK(*writes > w0, "%s: the write conversion was not called", rep);
    memset(ir, 0, sizeof(ir));
    PX_MPI(MPI_File_read_at(fh, 0, ir, N, MPI_INT, &st));
    PX_CHECK(*reads > r0, "%s: the read conversion was not called", rep);
    PX_CHECK(io_count(&st, MPI_INT) == N && !memcmp(ir, iv, sizeof(ir)), "%s: read back differs",
             rep);
    PX_MPI(MPI_File_set_view(fh, xd, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    PX_MPI(MPI_File_read_at(fh, 0, ir, N, MPI_INT, &st));
    for (int i = 0; i < N; i++)
        if (ir[i] != (iv[i] ^ mask)) {
            PX_CHECK(0, "%s: int %d in the file is %x, want %x", rep, i, ir[i], iv[i] ^ mask);
            break;
        }
}

static void be_bytes(unsigned char *out, const void *v, int n)
{
    uint64_t x = 0;
    memcpy(&x, v, (size_t)n); /* little-endian host */
    for (int i = 0; i < n; i++)
        out[n - 1 - i] = (unsigned char)(x >> (8 * i));
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "io_datarep");
    int me = px_test_rank, np = px_test_size;
    char path[512];
    io_path(path, sizeof(path), "dat");
    MPI_File fh;
    MPI_Status st;
    PX_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));

    /* each rank: N ints, N shorts, N doubles, at its own displacement */
    MPI_Offset per = N * (4 + 2 + 8), disp = me * per;
    int iv[N], ir[2 * N];
    short sv[N], sr[N];
    double dv[N], dr[N];
    for (int i = 0; i < N; i++) {
        iv[i] = (me + 1) * 0x01020304 + i;
        sv[i] = (short)(me * 300 + i - 7);
        dv[i] = (me + 1) * 1.5e10 + i * 0.25;
    }
    PX_MPI(MPI_File_set_view(fh, disp, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    PX_MPI(MPI_File_write_at_all(fh, 0, iv, N, MPI_INT, &st));
    PX_MPI(MPI_File_write_at(fh, 4 * N, sv, N, MPI_SHORT, &st));
    PX_MPI(MPI_File_write_at(fh, 6 * N, dv, N, MPI_DOUBLE, &st));
    PX_CHECK(io_count(&st, MPI_DOUBLE) == N, "wrote %d doubles", io_count(&st, MPI_DOUBLE));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Datatype et, ft;
    MPI_Offset d;
    PX_MPI(MPI_File_get_view(fh, &d, &et, &ft, rep));
    PX_CHECK(!strcmp(rep, "external32") && d == disp, "view %s at %lld", rep, (long long)d);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the bytes of the next rank's part, through a native view */
    int other = (me + 1) % np;
    PX_MPI(MPI_File_set_view(fh, other * per, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char raw[N * 14], want[8];
    PX_MPI(MPI_File_read_at(fh, 0, raw, (int)per, MPI_BYTE, &st));
    PX_CHECK(io_count(&st, MPI_BYTE) == per, "read %d raw bytes", io_count(&st, MPI_BYTE));
    int bad = 0;
    for (int i = 0; i < N && bad < 3; i++) {
        int ov = (other + 1) * 0x01020304 + i;
        short os = (short)(other * 300 + i - 7);
        double od = (other + 1) * 1.5e10 + i * 0.25;
        be_bytes(want, &ov, 4);
        if (memcmp(raw + 4 * i, want, 4))
            PX_CHECK(++bad > 3, "int %d of rank %d is not big-endian: %02x%02x%02x%02x", i, other,
                     raw[4 * i], raw[4 * i + 1], raw[4 * i + 2], raw[4 * i + 3]);
        be_bytes(want, &os, 2);
        if (memcmp(raw + 4 * N + 2 * i, want, 2))
            PX_CHECK(++bad > 3, "short %d of rank %d is not big-endian", i, other);
        be_bytes(want, &od, 8);
        if (memcmp(raw + 6 * N + 8 * i, want, 8))
            PX_CHECK(++bad > 3, "double %d of rank %d is not big-endian", i, other);
    }
    if (other == 0)
        PX_CHECK(raw[0] == 0x01 && raw[1] == 0x02 && raw[2] == 0x03 && raw[3] == 0x04,
                 "rank 0's first int in the file: %02x %02x %02x %02x", raw[0], raw[1], raw[2],
                 raw[3]);

    /* and back through an external32 view, ints into every other int */
    PX_MPI(MPI_File_set_view(fh, other * per, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    MPI_Datatype strided;
    MPI_Type_vector(N, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    memset(ir, 0, sizeof(ir));
    PX_MPI(MPI_File_read_at_all(fh, 0, ir, 1, strided, &st));
    PX_MPI(MPI_File_read_at(fh, 4 * N, sr, N, MPI_SHORT, &st));
    PX_MPI(MPI_File_read_at(fh, 6 * N, dr, N, MPI_DOUBLE, &st));
    for (int i = 0; i < N; i++) {
        if (ir[2 * i] != (other + 1) * 0x01020304 + i || ir[2 * i + 1] != 0 ||
            sr[i] != (short)(other * 300 + i - 7) || dr[i] != (other + 1) * 1.5e10 + i * 0.25) {
            PX_CHECK(0, "external32 read back: item %d of rank %d differs", i, other);
            break;
        }
    }
    MPI_Type_free(&strided);
    /* "internal" is the native layout here */
    PX_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "internal", MPI_INFO_NULL));

    /* a representation of the program's own */
    PX_MPI(MPI_Register_datarep("px-xor", xor_read, xor_write, xor_extent, &calls_write));
    EXPECT_CLASS(MPI_Register_datarep("px-xor", xor_read, xor_write, xor_extent, NULL),
                 MPI_ERR_DUP_DATAREP);
    EXPECT_CLASS(MPI_Register_datarep("external32", xor_read, xor_write, xor_extent, NULL),
                 MPI_ERR_DUP_DATAREP);
    MPI_Offset xd = np * per + me * N * 4;
    PX_MPI(MPI_File_set_view(fh, xd, MPI_INT, MPI_INT, "px-xor", MPI_INFO_NULL));
    PX_CHECK(calls_extent > 0, "the extent function was not called");
    MPI_Aint ext = 0;
    int ext_calls = calls_extent;
    PX_MPI(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    PX_CHECK(ext == 4 && calls_extent > ext_calls, "type extent %ld through px-xor", (long)ext);
    xor_roundtrip(fh, xd, "px-xor", iv, MASK, &calls_write, &calls_read);

    /* the same through the large-count registration: its conversions, not
     * the int ones, are called */
    PX_MPI(MPI_Register_datarep_c("px-xor-c", xor_read_c, xor_write_c, xor_extent, &calls_write_c));
    EXPECT_CLASS(MPI_Register_datarep_c("px-xor", xor_read_c, xor_write_c, xor_extent, NULL),
                 MPI_ERR_DUP_DATAREP);
    EXPECT_CLASS(MPI_Register_datarep_c("px-no-extent", xor_read_c, xor_write_c, NULL, NULL),
                 MPI_ERR_ARG);
    int int_reads = calls_read, int_writes = calls_write;
    PX_MPI(MPI_File_set_view(fh, xd, MPI_INT, MPI_INT, "px-xor-c", MPI_INFO_NULL));
    xor_roundtrip(fh, xd, "px-xor-c", iv, MASK_C, &calls_write_c, &calls_read_c);
    PX_CHECK(calls_read == int_reads && calls_write == int_writes,
             "the int conversions were called for px-xor-c");
    PX_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    return px_test_finish("external32 and registered representations (int and _c), %d items", N);
}
