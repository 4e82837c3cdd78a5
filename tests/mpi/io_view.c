/* Views with holes: every rank writes its blocks of B ints, round robin
 * with the others (a vector filetype resized to the whole round), and
 *  - the file written independently (data sieving in small windows), the
 *    one written collectively through several aggregators in rounds of a
 *    few KB, and the one written collectively with collective buffering
 *    disabled are byte for byte the same, and each byte is what its owner
 *    wrote;
 *  - every rank reads another rank's blocks through a view of its own,
 *    independently (sieving on and off) and collectively (two-phase on and
 *    off), from a noncontiguous memory type too;
 *  - a filetype whose copies leave holes (an indexed type, resized) over a
 *    file filled beforehand: written collectively (read-modify-write of
 *    the aggregators' windows) and independently, the holes keep the old
 *    bytes;
 *  - a filetype whose copies overlap (its extent smaller than its data's
 *    span, as parallel HDF5 builds them): accepted on a writable file,
 *    each copy where the tiling puts it, the later copy's bytes last, and
 *    the end of file counted over the copies. */
#include "io_test.h"

enum { B = 16, NB = 96, HOLE_FILL = 0xEE };

static MPI_Datatype round_robin(int np)
{
    MPI_Datatype v, t;
    MPI_Type_vector(1, B, B * np, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)B * np * sizeof(int), &t);
    MPI_Type_commit(&t);
    MPI_Type_free(&v);
    return t;
}

/* The int rank r writes as its k-th. */
static int value(int r, int k) { return r * 1000003 + k * 7 + 1; }

static MPI_Info hints(const char *cb_write, const char *cb_read, int np)
{
    MPI_Info info;
    char v[16];
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", cb_write);
    MPI_Info_set(info, "romio_cb_read", cb_read);
    MPI_Info_set(info, "cb_config_list", "*:*");
    snprintf(v, sizeof(v), "%d", np < 3 ? np : 3);
    MPI_Info_set(info, "cb_nodes", v);
    MPI_Info_set(info, "cb_buffer_size", "1024");
    MPI_Info_set(info, "cb_block_size", "256");
    MPI_Info_set(info, "ind_wr_buffer_size", "1000");
    MPI_Info_set(info, "ind_rd_buffer_size", "1000");
    return info;
}

static void write_file(const char *path, int mode, int me, int np)
{
    /* mode 0: independent, 1: collective buffering, 2: _all without it */
    MPI_Info info = hints(mode == 1 ? "enable" : "disable", "automatic", np);
    MPI_File fh;
    MPI_Status st;
    PX_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
    MPI_Info_free(&info);
    MPI_Datatype ft = round_robin(np);
    PX_MPI(MPI_File_set_view(fh, (MPI_Offset)me * B * sizeof(int), MPI_INT, ft, "native",
                             MPI_INFO_NULL));
    int *buf = malloc(sizeof(int) * B * NB);
    for (int k = 0; k < B * NB; k++)
        buf[k] = value(me, k);
    /* in two calls, so that the file pointer carries over */
    int half = B * NB / 2 + 3;
    for (int part = 0; part < 2; part++) {
        int *p = part ? buf + half : buf, n = part ? B * NB - half : half;
        if (mode == 0)
            PX_MPI(MPI_File_write(fh, p, n, MPI_INT, &st));
        else
            PX_MPI(MPI_File_write_all(fh, p, n, MPI_INT, &st));
        PX_CHECK(io_count(&st, MPI_INT) == n, "mode %d wrote %d ints, want %d", mode,
                 io_count(&st, MPI_INT), n);
    }
    MPI_Offset pos = -1;
    PX_MPI(MPI_File_get_position(fh, &pos));
    PX_CHECK(pos == B * NB, "position %lld after the writes", (long long)pos);
    free(buf);
    MPI_Type_free(&ft);
    PX_MPI(MPI_File_close(&fh));
}

static char *slurp(const char *path, long *n)
{
    FILE *fp = fopen(path, "rb");
    PX_REQUIRE(fp != NULL, "cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    *n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *b = malloc(*n ? (size_t)*n : 1);
    PX_REQUIRE(fread(b, 1, (size_t)*n, fp) == (size_t)*n, "short read of %s", path);
    fclose(fp);
    return b;
}

/* Rank `other`'s blocks read through this rank's own view. */
static void read_other(const char *path, int how, int me, int np)
{
    int other = (me + 1) % np;
    MPI_Info info = hints("automatic", how == 3 ? "enable" : "disable", np);
    if (how == 1)
        MPI_Info_set(info, "romio_ds_read", "disable");
    MPI_File fh;
    MPI_Status st;
    PX_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
    MPI_Info_free(&info);
    MPI_Datatype ft = round_robin(np);
    PX_MPI(MPI_File_set_view(fh, (MPI_Offset)other * B * sizeof(int), MPI_INT, ft, "native",
                             MPI_INFO_NULL));
    int n = B * NB, *buf = calloc(2 * (size_t)n + 2, sizeof(int));
    if (how == 0 || how == 1) {
        PX_MPI(MPI_File_read(fh, buf, n, MPI_INT, &st));
    } else if (how == 2 || how == 3) {
        PX_MPI(MPI_File_read_all(fh, buf, n, MPI_INT, &st));
    }
    PX_CHECK(io_count(&st, MPI_INT) == n, "read %d ints (how %d)", io_count(&st, MPI_INT), how);
    int bad = 0;
    for (int k = 0; k < n && bad < 3; k++)
        if (buf[k] != value(other, k)) {
            PX_CHECK(0, "how %d: int %d of rank %d is %d, want %d", how, k, other, buf[k],
                     value(other, k));
            bad++;
        }
    /* into every other int of memory, collectively, and past the end:
     * fewer ints, the count says how many */
    MPI_Datatype strided;
    MPI_Type_vector(n, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    memset(buf, 0, sizeof(int) * (2 * (size_t)n + 2));
    PX_MPI(MPI_File_read_at_all(fh, 0, buf, 1, strided, &st));
    int elems = -1;
    MPI_Get_elements(&st, MPI_INT, &elems);
    PX_CHECK(elems == n, "strided read: %d elements", elems);
    for (int k = 0; k < n && bad < 6; k++)
        if (buf[2 * k] != value(other, k) || buf[2 * k + 1] != 0) {
            PX_CHECK(0, "how %d strided: int %d of rank %d is %d", how, k, other, buf[2 * k]);
            bad++;
        }
    PX_MPI(MPI_File_read_at_all(fh, n - 5, buf, 10, MPI_INT, &st));
    PX_CHECK(io_count(&st, MPI_INT) == 5, "read past the end of the blocks: %d ints, want 5",
             io_count(&st, MPI_INT));
    for (int k = 0; k < 5; k++)
        PX_CHECK(buf[k] == value(other, n - 5 + k), "int %d before the end: %d", k, buf[k]);
    MPI_Type_free(&strided);
    free(buf);
    MPI_Type_free(&ft);
    PX_MPI(MPI_File_close(&fh));
}

/* Three ints of every five (0, 1 and 3), resized to five: a filetype with
 * holes between and inside its copies. */
static void holes(const char *path, int coll, int me, int np)
{
    MPI_File fh;
    MPI_Status st;
    enum { H = 200 }; /* ints each rank writes */
    long region = (long)H / 3 * 5 * sizeof(int) + 64;
    if (me == 0) {
        FILE *fp = fopen(path, "wb");
        PX_REQUIRE(fp != NULL, "cannot make %s", path);
        char *fill = malloc((size_t)region * np);
        memset(fill, HOLE_FILL, (size_t)region * np);
        fwrite(fill, 1, (size_t)region * np, fp);
        fclose(fp);
        free(fill);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info info = hints(coll ? "enable" : "disable", "automatic", np);
    PX_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    int bl[3] = {1, 1, 1}, dsp[3] = {0, 1, 3};
    MPI_Datatype idx, ft;
    MPI_Type_indexed(3, bl, dsp, MPI_INT, &idx);
    MPI_Type_create_resized(idx, 0, 5 * sizeof(int), &ft);
    MPI_Type_commit(&ft);
    PX_MPI(MPI_File_set_view(fh, (MPI_Offset)me * region, MPI_INT, ft, "native", MPI_INFO_NULL));
    int *buf = malloc(sizeof(int) * H);
    for (int k = 0; k < H - 2; k++)
        buf[k] = value(me, k);
    if (coll)
        PX_MPI(MPI_File_write_all(fh, buf, H - 2, MPI_INT, &st));
    else
        PX_MPI(MPI_File_write(fh, buf, H - 2, MPI_INT, &st));
    /* the end of the file (filled beforehand to its full size) through the
     * view: 3 ints of every 5 from this rank's displacement on */
    long rest = (region * np - (long)me * region) / (long)sizeof(int), r = rest % 5;
    MPI_Offset pos = -1, want = rest / 5 * 3 + (r > 0) + (r > 1) + (r > 3);
    PX_MPI(MPI_File_seek(fh, 0, MPI_SEEK_END));
    PX_MPI(MPI_File_get_position(fh, &pos));
    PX_CHECK(pos == want, "coll %d: the end of file through the view at int %lld, want %lld", coll,
             (long long)pos, (long long)want);
    PX_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    /* every rank checks its region with plain reads */
    long n;
    char *all = slurp(path, &n);
    PX_CHECK(n == region * np, "file of %ld bytes, want %ld", n, region * np);
    const char *mine = all + me * region;
    int bad = 0;
    for (long i = 0; i < region / (long)sizeof(int) && bad < 5; i++) {
        long copy = i / 5, at = i % 5, k = copy * 3 + (at == 0 ? 0 : at == 1 ? 1 : 2);
        int is_data = (at == 0 || at == 1 || at == 3) && k < H - 2;
        int v;
        memcpy(&v, mine + i * sizeof(int), sizeof(int));
        unsigned char first = (unsigned char)mine[i * sizeof(int)];
        if (is_data ? v != value(me, (int)k) : first != HOLE_FILL) {
            PX_CHECK(0, "coll %d: int %ld of rank %d's region: %d (%s)", coll, i, me, v,
                     is_data ? "data" : "hole");
            bad++;
        }
    }
    free(all);
    free(buf);
    MPI_Type_free(&ft);
}

/* Two blocks of 2 ints at bytes 0 and 16, resized to 16 bytes: copy t
 * covers [16t, 16t + 8) and [16t + 16, 16t + 24), so each copy's second
 * block is the next copy's first. A file of this rank's own. */
static void overlapping_copies(int me)
{
    char path[512], tag[32];
    snprintf(tag, sizeof(tag), "overlap%d", me);
    io_path(path, sizeof(path), tag);
    MPI_File fh;
    MPI_Status st;
    PX_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    int bl[2] = {2, 2};
    MPI_Aint dsp[2] = {0, 16};
    MPI_Datatype hi, ft;
    MPI_Type_create_hindexed(2, bl, dsp, MPI_INT, &hi);
    MPI_Type_create_resized(hi, 0, 16, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&hi);
    PX_MPI(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
    /* one copy, collectively */
    int one[4] = {11, 12, 13, 14}, two[8], got[10];
    PX_MPI(MPI_File_write_all(fh, one, 4, MPI_INT, &st));
    PX_MPI(MPI_File_sync(fh));
    long n;
    char *raw = slurp(path, &n);
    PX_CHECK(n == 24, "one copy: a file of %ld bytes, want 24", n);
    if (n == 24) {
        memcpy(got, raw, 24);
        PX_CHECK(got[0] == 11 && got[1] == 12 && got[2] == 0 && got[3] == 0 && got[4] == 13 &&
                     got[5] == 14,
                 "one copy: file ints %d %d %d %d %d %d", got[0], got[1], got[2], got[3], got[4],
                 got[5]);
    }
    free(raw);
    /* two copies, independently: ints 16..24 written twice, the later last */
    for (int k = 0; k < 8; k++)
        two[k] = 100 + me * 10 + k;
    PX_MPI(MPI_File_write_at(fh, 0, two, 8, MPI_INT, &st));
    PX_CHECK(io_count(&st, MPI_INT) == 8, "two copies: %d ints written", io_count(&st, MPI_INT));
    PX_MPI(MPI_File_sync(fh));
    raw = slurp(path, &n);
    PX_CHECK(n == 40, "two copies: a file of %ld bytes, want 40", n);
    if (n == 40) {
        memcpy(got, raw, 40);
        int want[10] = {two[0], two[1], 0, 0, two[4], two[5], 0, 0, two[6], two[7]};
        for (int i = 0; i < 10; i++)
            PX_CHECK(got[i] == want[i], "two copies: file int %d is %d, want %d", i, got[i],
                     want[i]);
    }
    free(raw);
    /* reads map the same way: copy 0's second block is copy 1's first */
    memset(got, 0, sizeof(got));
    PX_MPI(MPI_File_read_at(fh, 0, got, 8, MPI_INT, &st));
    int wantr[8] = {two[0], two[1], two[4], two[5], two[4], two[5], two[6], two[7]};
    for (int i = 0; i < 8; i++)
        PX_CHECK(got[i] == wantr[i], "read through the view: int %d is %d, want %d", i, got[i],
                 wantr[i]);
    /* 40 bytes hold copy 0 and copy 1 whole and copy 2's first block */
    MPI_Offset pos = -1;
    PX_MPI(MPI_File_seek(fh, 0, MPI_SEEK_END));
    PX_MPI(MPI_File_get_position(fh, &pos));
    PX_CHECK(pos == 10, "the end of file through the view is at int %lld, want 10", (long long)pos);
    PX_MPI(MPI_File_close(&fh));
    MPI_Type_free(&ft);
    MPI_File_delete(path, MPI_INFO_NULL);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "io_view");
    int me = px_test_rank, np = px_test_size;
    char path[3][512], hp[512];
    io_path(path[0], sizeof(path[0]), "indep");
    io_path(path[1], sizeof(path[1]), "coll");
    io_path(path[2], sizeof(path[2]), "nocb");
    io_path(hp, sizeof(hp), "holes");
    for (int m = 0; m < 3; m++)
        write_file(path[m], m, me, np);
    MPI_Barrier(MPI_COMM_WORLD);

    long n0, n;
    char *ref = slurp(path[0], &n0);
    PX_CHECK(n0 == (long)B * NB * np * (long)sizeof(int), "file of %ld bytes", n0);
    for (int m = 1; m < 3; m++) {
        char *other = slurp(path[m], &n);
        PX_CHECK(n == n0 && !memcmp(ref, other, (size_t)n0),
                 "file written by mode %d differs from the independent one", m);
        free(other);
    }
    int bad = 0;
    for (long i = 0; i < n0 / (long)sizeof(int) && bad < 5; i++) {
        int owner = (int)(i / B % np), k = (int)(i / (B * np) * B + i % B), v;
        memcpy(&v, ref + i * sizeof(int), sizeof(int));
        if (v != value(owner, k)) {
            PX_CHECK(0, "int %ld of the file is %d, want rank %d's %d", i, v, owner,
                     value(owner, k));
            bad++;
        }
    }
    free(ref);

    for (int how = 0; how < 4; how++)
        read_other(path[how % 3], how, me, np);

    holes(hp, 1, me, np);
    MPI_Barrier(MPI_COMM_WORLD);
    holes(hp, 0, me, np);
    MPI_Barrier(MPI_COMM_WORLD);
    overlapping_copies(me);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        for (int m = 0; m < 3; m++)
            MPI_File_delete(path[m], MPI_INFO_NULL);
        MPI_File_delete(hp, MPI_INFO_NULL);
    }
    return px_test_finish("strided views, %d ints a rank, independent == collective", B * NB);
}
