/* Which path a collective access takes when romio_cb_write/read are
 * "automatic", read from the mpi.io performance variables, and the data
 * each path leaves in the file:
 *  - ranks' pieces interleaved in the file, each smaller than a block of
 *    the file system (cb_block_size): two-phase collective buffering, and
 *    the aggregators (the first process of each node) write and read
 *    bytes for the others;
 *  - pieces of a block or more: each process does its own access;
 *  - pieces of a block or more with cb_block_size raised above them (as on
 *    a file system with large blocks): two-phase again;
 *  - collective buffering disabled: never two-phase;
 *  - ranges apart: each process its own access;
 *  - a range of many cb_buffer_size: every process of the node aggregates
 *    its share, unless cb_nodes or cb_config_list say otherwise.
 * In every case each rank reads back another rank's part, collectively and
 * independently, and checks every byte. cb_block_size defaults to the
 * block size the file system reports for the file (st_blksize). Also
 * cb_config_list with host names: every process of a named host aggregates
 * its share, and a list naming only another host leaves no aggregator. */
#include "io_test.h"

#include <sys/stat.h>

static MPI_T_pvar_session ses;
static MPI_T_pvar_handle pv[3];
static const char *pv_name[3] = {"io_coll_two_phase", "io_coll_direct", "io_aggregated_bytes"};

static void stats(unsigned long long v[3])
{
    for (int i = 0; i < 3; i++)
        MPI_T_pvar_read(ses, pv[i], &v[i]);
}

/* np pieces of `piece` bytes per round, round robin: rank r's k-th piece at
 * (k * np + r) * piece. */
static MPI_Datatype round_robin(int np, int piece)
{
    MPI_Datatype v, t;
    MPI_Type_vector(1, piece, piece * np, MPI_BYTE, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)piece * np, &t);
    MPI_Type_commit(&t);
    MPI_Type_free(&v);
    return t;
}

/* x summed over the ranks. */
static unsigned long long sum_all(unsigned long long x)
{
    unsigned long long t = 0;
    MPI_Allreduce(&x, &t, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return t;
}

/* File offset of byte i of rank r's part (its first at `start`). */
static long file_off(size_t i, int piece, int apart, MPI_Offset start, int r, int np)
{
    size_t k = i / (size_t)piece, j = i % (size_t)piece;
    return apart ? (long)(start + (MPI_Offset)i)
                 : (long)(((MPI_Offset)k * np + r) * piece + (MPI_Offset)j);
}

/* The first byte of rank r's part read back wrong, or -1. */
static int first_bad(const unsigned char *b, size_t len, int piece, int apart, MPI_Offset start,
                     int r, int np)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != io_byte(r, file_off(i, piece, apart, start, r, np)))
            return (int)i;
    return -1;
}

/* One case: every rank writes `pieces` pieces of `piece` bytes through a
 * round-robin view (apart: each rank one contiguous range instead), then
 * reads back rank (r+1)'s part collectively and independently. Returns
 * the change of the three variables at this rank. */
static void one_case(const char *what, int piece, int pieces, int apart, const char *cb,
                     const char *blk, const char *config, const char *cbs, unsigned long long d[3])
{
    int np = px_test_size, me = px_test_rank, other = (me + 1) % np;
    char path[512];
    io_path(path, sizeof(path), what);
    MPI_Info info;
    MPI_Info_create(&info);
    if (cb) {
        MPI_Info_set(info, "romio_cb_write", cb);
        MPI_Info_set(info, "romio_cb_read", cb);
    }
    if (blk)
        MPI_Info_set(info, "cb_block_size", blk);
    if (cbs)
        MPI_Info_set(info, "cb_buffer_size", cbs);
    if (config) {
        MPI_Info_set(info, "cb_config_list", config);
        MPI_Info_set(info, "cb_nodes", "64");
    }
    MPI_File fh;
    PX_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    size_t len = (size_t)piece * (size_t)pieces;
    unsigned char *buf = malloc(len), *back = malloc(len);
    PX_REQUIRE(buf && back, "out of memory");
    MPI_Datatype ft = round_robin(np, piece);
    MPI_Offset mine = apart ? (MPI_Offset)me * (MPI_Offset)len : (MPI_Offset)me * piece;
    MPI_Offset theirs = apart ? (MPI_Offset)other * (MPI_Offset)len : (MPI_Offset)other * piece;
    for (size_t i = 0; i < len; i++)
        buf[i] = io_byte(me, file_off(i, piece, apart, mine, me, np));
    unsigned long long before[3], after[3];
    stats(before);
    PX_MPI(MPI_File_set_view(fh, mine, MPI_BYTE, apart ? MPI_BYTE : ft, "native", MPI_INFO_NULL));
    MPI_Status st;
    PX_MPI(MPI_File_write_at_all(fh, 0, buf, (int)len, MPI_BYTE, &st));
    PX_CHECK(io_count(&st, MPI_BYTE) == (int)len, "%s: wrote %d of %zu", what,
             io_count(&st, MPI_BYTE), len);
    PX_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    PX_MPI(MPI_File_sync(fh));
    PX_MPI(MPI_File_set_view(fh, theirs, MPI_BYTE, apart ? MPI_BYTE : ft, "native", MPI_INFO_NULL));
    memset(back, 0, len);
    PX_MPI(MPI_File_read_at_all(fh, 0, back, (int)len, MPI_BYTE, &st));
    stats(after);
    int bad = first_bad(back, len, piece, apart, theirs, other, np);
    PX_CHECK(bad < 0, "%s: collective read of rank %d's part: byte %d differs", what, other, bad);
    memset(back, 0, len);
    PX_MPI(MPI_File_read_at(fh, 0, back, (int)len, MPI_BYTE, &st));
    bad = first_bad(back, len, piece, apart, theirs, other, np);
    PX_CHECK(bad < 0, "%s: independent read of rank %d's part: byte %d differs", what, other, bad);
    for (int i = 0; i < 3; i++)
        d[i] = after[i] - before[i];
    MPI_Type_free(&ft);
    free(buf);
    free(back);
    PX_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
}

int main(int argc, char **argv)
{
    int provided;
    px_test_init(&argc, &argv, "io_cbauto");
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&ses);
    for (int i = 0; i < 3; i++) {
        int idx = -1, count = 0;
        PX_REQUIRE(MPI_T_pvar_get_index(pv_name[i], MPI_T_PVAR_CLASS_COUNTER, &idx) == MPI_SUCCESS,
                   "no performance variable %s", pv_name[i]);
        MPI_T_pvar_handle_alloc(ses, idx, NULL, &pv[i], &count);
        MPI_T_pvar_start(ses, pv[i]);
    }
    int np = px_test_size, me = px_test_rank;

    /* the default block is the file system's */
    char path[512], v[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    io_path(path, sizeof(path), "blk");
    MPI_File fh;
    PX_MPI(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Info got;
    PX_MPI(MPI_File_get_info(fh, &got));
    MPI_Info_get(got, "cb_block_size", MPI_MAX_INFO_VAL, v, &flag);
    MPI_Info_free(&got);
    struct stat sb;
    PX_REQUIRE(stat(path, &sb) == 0, "stat %s", path);
    long blk = (long)sb.st_blksize;
    PX_CHECK(flag && atol(v) == blk, "cb_block_size %s, the file system's block %ld",
             flag ? v : "(none)", blk);
    PX_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    if (blk < 512 || blk > (1 << 20))
        blk = 4096; /* the cases below assume a usual block */

    /* each collective access above counts once per call: a write and a
     * collective read per case */
    unsigned long long d[3];
    int small = blk >= 64 ? (int)blk / 16 : 4, large = (int)blk * 4;
    /* every byte written and read once through some aggregator */
    unsigned long long want = 2ull * (unsigned long long)small * 64 * (unsigned long long)np;
    /* nodes as the launcher placed the ranks: the first process of each
     * aggregates by default */
    MPI_Comm node;
    int node_rank = 0, leader, nnodes = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_free(&node);
    leader = node_rank == 0;
    MPI_Allreduce(&leader, &nnodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    char big[32];
    snprintf(big, sizeof(big), "%d", large * 4);

    one_case("small", small, 64, 0, NULL, NULL, NULL, NULL, d);
    if (np > 1) {
        PX_CHECK(d[0] == 2 && d[1] == 0,
                 "pieces of %d bytes interleaved: %llu two-phase, %llu "
                 "direct accesses, want 2 and 0",
                 small, d[0], d[1]);
        /* the first process of each node aggregates, everyone's bytes
         * both ways between them (on one node: rank 0 all of them) */
        unsigned long long tot = sum_all(d[2]);
        PX_CHECK(tot == want, "aggregated %llu bytes in all, want %llu", tot, want);
        PX_CHECK(leader || d[2] == 0, "rank %d is not an aggregator but counted %llu bytes", me,
                 d[2]);
        PX_CHECK(nnodes > 1 || me != 0 || d[2] == want, "aggregator: %llu bytes, want %llu", d[2],
                 want);
    } else {
        PX_CHECK(d[0] == 0 && d[1] == 2, "one process: %llu two-phase, %llu direct", d[0], d[1]);
    }

    one_case("large", large, 8, 0, NULL, NULL, NULL, NULL, d);
    PX_CHECK(d[0] == 0 && d[1] == 2 && d[2] == 0,
             "pieces of %d bytes interleaved: %llu two-phase, %llu direct, %llu aggregated; "
             "want 0, 2, 0",
             large, d[0], d[1], d[2]);

    one_case("large-bigblock", large, 8, 0, NULL, big, NULL, NULL, d);
    PX_CHECK(np == 1 || (d[0] == 2 && d[1] == 0),
             "pieces of %d bytes with cb_block_size %s: %llu two-phase, %llu direct", large, big,
             d[0], d[1]);

    one_case("small-disabled", small, 64, 0, "disable", NULL, NULL, NULL, d);
    PX_CHECK(d[0] == 0 && d[1] == 2, "collective buffering disabled: %llu two-phase, %llu direct",
             d[0], d[1]);

    one_case("small-enabled", small, 64, 0, "enable", NULL, NULL, NULL, d);
    PX_CHECK(d[0] == 2 && d[1] == 0, "collective buffering enabled: %llu two-phase, %llu direct",
             d[0], d[1]);

    one_case("apart", small, 64, 1, NULL, NULL, NULL, NULL, d);
    PX_CHECK(d[0] == 0 && d[1] == 2, "ranges apart: %llu two-phase, %llu direct", d[0], d[1]);

    /* no cb_nodes nor cb_config_list: an access of many cb_buffer_size
     * (4 KB here) spreads over every process of the node */
    one_case("sized", small, 64, 0, "enable", NULL, NULL, "4096", d);
    PX_CHECK(d[0] == 2 && d[2] == 2ull * (unsigned long long)small * 64,
             "cb_buffer_size 4096: %llu two-phase accesses, %llu bytes aggregated, want 2 and %llu "
             "(every process its share)",
             d[0], d[2], 2ull * (unsigned long long)small * 64);

    /* cb_config_list naming this host: every process of it aggregates */
    char host[MPI_MAX_PROCESSOR_NAME + 8], list[2 * MPI_MAX_PROCESSOR_NAME + 32];
    int hl = 0;
    MPI_Get_processor_name(host, &hl);
    snprintf(list, sizeof(list), "elsewhere:1,%s:*,*:1", host);
    one_case("hostlist", small, 64, 0, "enable", NULL, list, NULL, d);
    /* rank 0's hints count: every process of its host, one per other node */
    unsigned long long tot = sum_all(d[2]);
    PX_CHECK(d[0] == 2 && tot == want,
             "cb_config_list %s: %llu two-phase accesses, %llu bytes aggregated in all, want 2 "
             "and %llu",
             list, d[0], tot, want);
    PX_CHECK(nnodes > 1 || d[2] == 2ull * (unsigned long long)small * 64,
             "cb_config_list %s: %llu bytes aggregated here, want %llu (every process its share)",
             list, d[2], 2ull * (unsigned long long)small * 64);
    /* a list that names only another host: no aggregator, never two-phase */
    one_case("otherhost", small, 64, 0, "enable", NULL, "elsewhere:4", NULL, d);
    PX_CHECK(d[0] == 0 && d[1] == 2, "cb_config_list elsewhere:4: %llu two-phase, %llu direct",
             d[0], d[1]);

    MPI_T_pvar_session_free(&ses);
    MPI_T_finalize();
    return px_test_finish("automatic collective buffering: small %d and large %d byte pieces, "
                          "block %ld",
                          small, large, blk);
}
