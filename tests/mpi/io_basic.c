/* Files as objects, and the errors of MPI-IO:
 * - open, close, delete; size, preallocate, amode, group, hints in use,
 *   sync, atomicity, byte offsets and type extents through a view,
 *   get_view, DELETE_ON_CLOSE, a "ufs:" prefix, Fortran handles;
 * - each erroneous call returns its class through the default handler
 *   (MPI_ERRORS_RETURN): a missing file (NO_SUCH_FILE), bad access modes
 *   (AMODE), different modes on different ranks (NOT_SAME), EXCL on an
 *   existing file (FILE_EXISTS), a file of mode 0444 opened for writing
 *   (ACCESS; root is not stopped by modes, then only the next check),
 *   writes to a read-only file (READ_ONLY), reads of a write-only one
 *   (ACCESS), seeks on a sequential one (UNSUPPORTED_OPERATION), bad
 *   views (ARG, TYPE, UNSUPPORTED_DATAREP), an unknown prefix (IO);
 * - a program's handler is called with the file and the code, also as
 *   MPI_FILE_NULL's handler for a failing open; the message of a code
 *   names the file;
 * - a read past the end of the file returns fewer bytes. */
#include "io_test.h"

#include <sys/stat.h>

static int handler_calls, handler_class;
static MPI_File handler_file;

static void on_error(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
    handler_file = *fh;
}

static int file_exists(const char *p) { return access(p, F_OK) == 0; }

static void check_hint(MPI_File fh, const char *key, const char *want)
{
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    PX_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag);
    PX_CHECK(flag, "hint %s not reported", key);
    if (want)
        PX_CHECK(flag && !strcmp(v, want), "hint %s = \"%s\", want \"%s\"", key, v, want);
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "io_basic");
    int me = px_test_rank, np = px_test_size;
    char path[512], missing[512], ro[512], ufs[600];
    io_path(path, sizeof(path), "dat");
    io_path(missing, sizeof(missing), "missing");
    io_path(ro, sizeof(ro), "ro");
    MPI_File fh;

    /* a file that is not there */
    EXPECT_CLASS(MPI_File_delete(missing, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    int rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    EXPECT_CLASS(rc, MPI_ERR_NO_SUCH_FILE);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    PX_CHECK(strstr(msg, missing) != NULL, "message \"%s\" does not name the file", msg);

    /* access modes */
    EXPECT_CLASS(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
        MPI_ERR_AMODE);
    EXPECT_CLASS(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
        MPI_ERR_AMODE);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL,
                               MPI_INFO_NULL, &fh),
                 MPI_ERR_AMODE);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, 0, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    if (np > 1)
        EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path,
                                   MPI_MODE_RDWR | MPI_MODE_CREATE |
                                       (me == np - 1 ? MPI_MODE_DELETE_ON_CLOSE : 0),
                                   MPI_INFO_NULL, &fh),
                     MPI_ERR_NOT_SAME);
    PX_CHECK(!file_exists(path), "a refused open made the file");
    EXPECT_CLASS(
        MPI_File_open(MPI_COMM_WORLD, "zzfs:/tmp/nothing", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
        MPI_ERR_IO);

    /* the file as an object */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    MPI_Info_set(info, "romio_cb_write", "disable");
    MPI_Info_set(info, "some_unknown_hint", "42");
    PX_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL,
                         info, &fh));
    MPI_Info_free(&info);
    PX_CHECK(fh != MPI_FILE_NULL, "open gave MPI_FILE_NULL");
    PX_CHECK(MPI_File_f2c(MPI_File_c2f(fh)) == fh, "c2f/f2c do not round-trip");
    PX_CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0, "MPI_FILE_NULL is not 0 in Fortran");
    check_hint(fh, "cb_buffer_size", "1048576");
    check_hint(fh, "romio_cb_write", "disable");
    check_hint(fh, "romio_cb_read", "automatic");
    check_hint(fh, "cb_nodes", NULL);
    check_hint(fh, "romio_ds_read", NULL);
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_read", "disable");
    PX_MPI(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    check_hint(fh, "romio_ds_read", "disable");
    check_hint(fh, "cb_buffer_size", "1048576");

    int amode = 0;
    PX_MPI(MPI_File_get_amode(fh, &amode));
    PX_CHECK(amode == (MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL), "amode %d", amode);
    MPI_Group g, wg;
    int cmp = -1;
    PX_MPI(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    PX_CHECK(cmp == MPI_IDENT, "file group compares %d with the world's", cmp);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);

    MPI_Offset size = -1;
    PX_MPI(MPI_File_get_size(fh, &size));
    PX_CHECK(size == 0, "new file has size %lld", (long long)size);
    PX_MPI(MPI_File_set_size(fh, 1000));
    PX_MPI(MPI_File_get_size(fh, &size));
    PX_CHECK(size == 1000, "size %lld after set_size(1000)", (long long)size);
    PX_MPI(MPI_File_preallocate(fh, 5000));
    PX_MPI(MPI_File_get_size(fh, &size));
    PX_CHECK(size == 5000, "size %lld after preallocate(5000)", (long long)size);
    PX_MPI(MPI_File_preallocate(fh, 100));
    PX_MPI(MPI_File_get_size(fh, &size));
    PX_CHECK(size == 5000, "preallocate(100) shrank the file to %lld", (long long)size);
    PX_MPI(MPI_File_set_size(fh, 10));
    PX_MPI(MPI_File_get_size(fh, &size));
    PX_CHECK(size == 10, "size %lld after set_size(10)", (long long)size);
    EXPECT_CLASS(MPI_File_set_size(fh, -1), MPI_ERR_ARG);
    if (np > 1)
        EXPECT_CLASS(MPI_File_set_size(fh, 10 + me), MPI_ERR_NOT_SAME);
    PX_MPI(MPI_File_sync(fh));

    int flag = -1;
    PX_MPI(MPI_File_get_atomicity(fh, &flag));
    PX_CHECK(flag == 0, "atomicity %d at open", flag);
    PX_MPI(MPI_File_set_atomicity(fh, 1));
    PX_MPI(MPI_File_get_atomicity(fh, &flag));
    PX_CHECK(flag == 1, "atomicity %d after set 1", flag);
    PX_MPI(MPI_File_set_atomicity(fh, 0));

    /* a read past the end: fewer bytes, no error */
    unsigned char b[64];
    MPI_Status st;
    if (me == 0) {
        for (int i = 0; i < 10; i++)
            b[i] = (unsigned char)(i + 100);
        PX_MPI(MPI_File_write_at(fh, 0, b, 10, MPI_BYTE, &st));
        PX_CHECK(io_count(&st, MPI_BYTE) == 10, "wrote %d bytes", io_count(&st, MPI_BYTE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    memset(b, 0, sizeof(b));
    PX_MPI(MPI_File_read_at(fh, 5, b, 20, MPI_BYTE, &st));
    PX_CHECK(io_count(&st, MPI_BYTE) == 5, "read %d bytes past the end, want 5",
             io_count(&st, MPI_BYTE));
    PX_CHECK(b[0] == 105 && b[4] == 109, "read %d %d", b[0], b[4]);
    PX_MPI(MPI_File_read_at(fh, 50, b, 20, MPI_BYTE, &st));
    PX_CHECK(io_count(&st, MPI_BYTE) == 0, "read %d bytes beyond the end", io_count(&st, MPI_BYTE));
    MPI_Barrier(MPI_COMM_WORLD);

    /* offsets through a view: two ints 12 bytes apart in 16 */
    MPI_Offset disp = -1;
    PX_MPI(MPI_File_get_byte_offset(fh, 17, &disp));
    PX_CHECK(disp == 17, "byte offset %lld in the default view", (long long)disp);
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    PX_MPI(MPI_File_set_view(fh, 100, MPI_INT, vec, "native", MPI_INFO_NULL));
    MPI_Type_free(&vec); /* the view keeps its own */
    static const long want_off[] = {100, 112, 116, 128, 132};
    for (int i = 0; i < 5; i++) {
        PX_MPI(MPI_File_get_byte_offset(fh, i, &disp));
        PX_CHECK(disp == want_off[i], "byte offset of etype %d: %lld, want %ld", i, (long long)disp,
                 want_off[i]);
    }
    MPI_Aint ext = 0;
    PX_MPI(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
    PX_CHECK(ext == sizeof(double), "type extent %ld", (long)ext);
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    PX_MPI(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    int tsize = 0;
    MPI_Aint tlb = -1, text = 0;
    MPI_Type_size(ft, &tsize);
    MPI_Type_get_extent(ft, &tlb, &text);
    PX_CHECK(disp == 100 && et == MPI_INT && tsize == 8 && tlb == 0 && text == 16 &&
                 !strcmp(rep, "native"),
             "view %lld %d %d %ld %ld %s", (long long)disp, et == MPI_INT, tsize, (long)tlb,
             (long)text, rep);
    MPI_Type_free(&ft);

    /* bad views, each refused by every rank */
    EXPECT_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_SHORT, "native", MPI_INFO_NULL),
                 MPI_ERR_ARG);
    EXPECT_CLASS(MPI_File_set_view(fh, -5, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL),
                 MPI_ERR_UNSUPPORTED_DATAREP);
    int bl[2] = {1, 1};
    MPI_Aint dd[2] = {8, 0};
    MPI_Datatype back;
    MPI_Type_create_hindexed(2, bl, dd, MPI_INT, &back);
    MPI_Type_commit(&back);
    EXPECT_CLASS(MPI_File_set_view(fh, 0, MPI_INT, back, "native", MPI_INFO_NULL), MPI_ERR_IO);
    MPI_Type_free(&back);
    dd[0] = -8;
    dd[1] = 0;
    MPI_Type_create_hindexed(2, bl, dd, MPI_INT, &back);
    MPI_Type_commit(&back);
    EXPECT_CLASS(MPI_File_set_view(fh, 0, MPI_INT, back, "native", MPI_INFO_NULL), MPI_ERR_IO);
    MPI_Type_free(&back);
    /* the old view is still in place */
    PX_MPI(MPI_File_get_byte_offset(fh, 1, &disp));
    PX_CHECK(disp == 112, "view changed by a refused set_view: %lld", (long long)disp);

    /* a program's handler, with the file and the code */
    MPI_Errhandler eh, got;
    PX_MPI(MPI_File_create_errhandler(on_error, &eh));
    PX_MPI(MPI_File_set_errhandler(fh, eh));
    PX_MPI(MPI_File_get_errhandler(fh, &got));
    PX_CHECK(got == eh, "get_errhandler gave another handler");
    MPI_File_read_at(fh, -1, b, 1, MPI_BYTE, &st);
    PX_CHECK(handler_calls == 1 && handler_class == MPI_ERR_ARG && handler_file == fh,
             "handler calls %d class %d", handler_calls, handler_class);
    MPI_File_call_errhandler(fh, MPI_ERR_IO);
    PX_CHECK(handler_calls == 2 && handler_class == MPI_ERR_IO, "call_errhandler: %d %d",
             handler_calls, handler_class);
    PX_MPI(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    PX_MPI(MPI_File_close(&fh));
    PX_CHECK(fh == MPI_FILE_NULL, "close did not set MPI_FILE_NULL");

    /* MPI_FILE_NULL's handler: the default, and the one of failing opens */
    PX_MPI(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    PX_CHECK(got == MPI_ERRORS_RETURN, "default file handler is not MPI_ERRORS_RETURN");
    PX_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    PX_CHECK(handler_calls == 3 && handler_class == MPI_ERR_NO_SUCH_FILE &&
                 handler_file == MPI_FILE_NULL,
             "open's handler calls %d class %d", handler_calls, handler_class);
    PX_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&eh);

    /* EXCL on an existing file */
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path,
                               MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_INFO_NULL, &fh),
                 MPI_ERR_FILE_EXISTS);

    /* access rights: read-only and write-only files */
    PX_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    EXPECT_CLASS(MPI_File_write_at(fh, 0, b, 1, MPI_BYTE, &st), MPI_ERR_READ_ONLY);
    EXPECT_CLASS(MPI_File_write_all(fh, b, 1, MPI_BYTE, &st), MPI_ERR_READ_ONLY);
    EXPECT_CLASS(MPI_File_set_size(fh, 0), MPI_ERR_READ_ONLY);
    PX_MPI(MPI_File_close(&fh));
    PX_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    EXPECT_CLASS(MPI_File_read_at(fh, 0, b, 1, MPI_BYTE, &st), MPI_ERR_ACCESS);
    PX_MPI(MPI_File_close(&fh));
    if (me == 0) {
        FILE *fp = fopen(ro, "w");
        PX_REQUIRE(fp != NULL, "cannot make %s", ro);
        fclose(fp);
        chmod(ro, 0444);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int root = geteuid() == 0, anyroot = 0;
    MPI_Allreduce(&root, &anyroot, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!anyroot)
        EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, ro, MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                     MPI_ERR_ACCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        unlink(ro);

    /* sequential files: the shared pointer only */
    PX_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
                         &fh));
    EXPECT_CLASS(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION);
    EXPECT_CLASS(MPI_File_write_at(fh, 0, b, 1, MPI_BYTE, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    EXPECT_CLASS(MPI_File_write(fh, b, 1, MPI_BYTE, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    PX_MPI(MPI_File_close(&fh));

    /* the "ufs:" prefix names the same file; DELETE_ON_CLOSE removes it */
    snprintf(ufs, sizeof(ufs), "ufs:%s", path);
    PX_MPI(MPI_File_open(MPI_COMM_WORLD, ufs, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    PX_MPI(MPI_File_get_size(fh, &size));
    PX_CHECK(size == 10, "size %lld through ufs:", (long long)size);
    PX_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PX_CHECK(!file_exists(path), "DELETE_ON_CLOSE left %s", path);

    /* delete */
    PX_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    PX_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        PX_MPI(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    PX_CHECK(!file_exists(path), "MPI_File_delete left %s", path);
    /* a file left open: MPI_Finalize closes it (and deletes it, as asked) */
    PX_MPI(MPI_File_open(MPI_COMM_WORLD, path,
                         MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                         &fh));
    PX_MPI(MPI_File_write_shared(fh, b, 4, MPI_BYTE, &st));
    int rc_fin = px_test_finish("file object and %d error classes", 12);
    if (me == 0 && file_exists(path)) {
        fprintf(stderr, "FAIL io_basic: %s left after MPI_Finalize\n", path);
        rc_fin = 1;
    }
    return rc_fin;
}
