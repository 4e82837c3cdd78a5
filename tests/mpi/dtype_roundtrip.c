/* Derived datatypes: layouts and bounds against hand-computed type maps, and
 * pack -> unpack round trips (packed bytes in type-map order, unpack writes
 * exactly the described bytes) on nested types, negative strides, resized,
 * MPI_LB/MPI_UB markers, subarrays, darrays and MPI_BOTTOM. */
#include "px_test.h"

typedef struct {
    long off, len;
} seg_t;

static int ncases;

/* Checks size, bounds and a pack/unpack round trip of `count` items of t
 * whose one-item type map is the byte segments s[0..ns). */
static void check_layout(const char *what, MPI_Datatype t, int count, const seg_t *s, int ns,
                         long exp_lb, long exp_extent)
{
    MPI_Aint lb, ext;
    int size, psize, pos;
    long bytes = 0, lo = 0, hi = 0;

    ncases++;
    PX_MPI(MPI_Type_get_extent(t, &lb, &ext));
    PX_CHECK(lb == exp_lb && ext == exp_extent, "%s: lb %ld extent %ld, expected %ld %ld", what,
             (long)lb, (long)ext, exp_lb, exp_extent);
    for (int k = 0; k < ns; k++)
        bytes += s[k].len;
    PX_MPI(MPI_Type_size(t, &size));
    PX_CHECK(size == bytes, "%s: size %d expected %ld", what, size, bytes);
    for (int i = 0; i < count; i++)
        for (int k = 0; k < ns; k++) {
            long o = i * (long)ext + s[k].off;
            if (o < lo)
                lo = o;
            if (o + s[k].len > hi)
                hi = o + s[k].len;
        }
    long span = hi - lo + 64;
    unsigned char *src = malloc(span), *dst = malloc(span), *cov = calloc(span, 1);
    unsigned char *pk = malloc(bytes * count + 16), *exp = malloc(bytes * count + 16);
    PX_REQUIRE(src && dst && cov && pk && exp, "out of memory");
    unsigned char *so = src + 32 - lo, *dO = dst + 32 - lo;
    px_fill(src, span, 77 + ncases);
    memset(dst, 0xee, span);
    long e = 0;
    for (int i = 0; i < count; i++)
        for (int k = 0; k < ns; k++) {
            long o = i * (long)ext + s[k].off;
            memcpy(exp + e, so + o, s[k].len);
            memset(cov + 32 - lo + o, 1, s[k].len);
            e += s[k].len;
        }
    PX_MPI(MPI_Pack_size(count, t, MPI_COMM_WORLD, &psize));
    PX_CHECK(psize >= e, "%s: Pack_size %d < %ld", what, psize, e);
    pos = 0;
    PX_MPI(MPI_Pack(so, count, t, pk, (int)e + 16, &pos, MPI_COMM_WORLD));
    PX_CHECK(pos == e, "%s: pack position %d expected %ld", what, pos, e);
    for (long b = 0; b < e; b++)
        if (pk[b] != exp[b]) {
            PX_CHECK(0, "%s: packed byte %ld is %02x expected %02x", what, b, pk[b], exp[b]);
            break;
        }
    pos = 0;
    PX_MPI(MPI_Unpack(pk, (int)e, &pos, dO, count, t, MPI_COMM_WORLD));
    PX_CHECK(pos == e, "%s: unpack position %d expected %ld", what, pos, e);
    for (long b = 0; b < span; b++) {
        int want = cov[b] ? src[b] : 0xee;
        if (dst[b] != want) {
            PX_CHECK(0, "%s: byte %ld after unpack is %02x expected %02x (%s)", what, b + lo - 32,
                     dst[b], want, cov[b] ? "data" : "gap");
            break;
        }
    }
    free(src);
    free(dst);
    free(cov);
    free(pk);
    free(exp);
}

#define NSEG 4096
static seg_t segs[NSEG];

static void nested(void)
{
    /* indexed ints with a negative displacement */
    int bl[3] = {2, 1, 3}, dp[3] = {5, 0, -3};
    MPI_Datatype idx, st, vec, hv, neg, rs, rsv;
    PX_MPI(MPI_Type_indexed(3, bl, dp, MPI_INT, &idx));
    PX_MPI(MPI_Type_commit(&idx));
    seg_t si[3] = {{20, 8}, {0, 4}, {-12, 12}};
    check_layout("indexed", idx, 3, si, 3, -12, 40);

    /* struct { double; char; idx at 28 } */
    int sbl[3] = {1, 1, 1};
    MPI_Aint sdp[3] = {0, 8, 28};
    MPI_Datatype sty[3] = {MPI_DOUBLE, MPI_CHAR, idx};
    PX_MPI(MPI_Type_create_struct(3, sbl, sdp, sty, &st));
    PX_MPI(MPI_Type_commit(&st));
    seg_t ss[5] = {{0, 8}, {8, 1}, {48, 8}, {28, 4}, {16, 12}};
    check_layout("struct of indexed", st, 2, ss, 5, 0, 56);

    /* vector of struct of indexed: 3 blocks of 2, stride 3 structs */
    PX_MPI(MPI_Type_vector(3, 2, 3, st, &vec));
    PX_MPI(MPI_Type_commit(&vec));
    int n = 0;
    for (int j = 0; j < 3; j++)
        for (int k = 0; k < 2; k++)
            for (int q = 0; q < 5; q++)
                segs[n++] = (seg_t){(j * 3 + k) * 56 + ss[q].off, ss[q].len};
    check_layout("vector of struct of indexed", vec, 2, segs, n, 0, (2 * 3 + 2) * 56);

    /* negative strides */
    PX_MPI(MPI_Type_create_hvector(4, 1, -24, MPI_DOUBLE, &hv));
    PX_MPI(MPI_Type_commit(&hv));
    seg_t sh[4] = {{0, 8}, {-24, 8}, {-48, 8}, {-72, 8}};
    check_layout("hvector stride -24", hv, 3, sh, 4, -72, 80);
    PX_MPI(MPI_Type_vector(3, 2, -4, MPI_INT, &neg));
    PX_MPI(MPI_Type_commit(&neg));
    seg_t sn[3] = {{0, 8}, {-16, 8}, {-32, 8}};
    check_layout("vector stride -4", neg, 2, sn, 3, -32, 40);

    /* resized: the extent sets the item spacing */
    MPI_Datatype v3;
    PX_MPI(MPI_Type_vector(3, 1, 2, MPI_INT, &v3));
    PX_MPI(MPI_Type_create_resized(v3, -4, 32, &rs));
    PX_MPI(MPI_Type_commit(&rs));
    seg_t sr[3] = {{0, 4}, {8, 4}, {16, 4}};
    check_layout("resized vector", rs, 3, sr, 3, -4, 32);
    MPI_Aint tlb, text;
    PX_MPI(MPI_Type_get_true_extent(rs, &tlb, &text));
    PX_CHECK(tlb == 0 && text == 20, "resized true extent %ld %ld", (long)tlb, (long)text);
    /* contiguous of a resized type uses the new extent */
    PX_MPI(MPI_Type_contiguous(2, rs, &rsv));
    PX_MPI(MPI_Type_commit(&rsv));
    seg_t sc[6] = {{0, 4}, {8, 4}, {16, 4}, {32, 4}, {40, 4}, {48, 4}};
    check_layout("contiguous of resized", rsv, 2, sc, 6, -4, 64);

    /* struct padding follows the C layout of struct { int; char; } */
    MPI_Datatype pad;
    int pbl[2] = {1, 1};
    MPI_Aint pdp[2] = {0, 4};
    MPI_Datatype pty[2] = {MPI_INT, MPI_CHAR};
    PX_MPI(MPI_Type_create_struct(2, pbl, pdp, pty, &pad));
    PX_MPI(MPI_Type_commit(&pad));
    seg_t sp[2] = {{0, 4}, {4, 1}};
    check_layout("padded struct", pad, 3, sp, 2, 0, 8);

    /* MPI_LB / MPI_UB markers (MPI-1) are sticky through containing types */
    MPI_Datatype mk, mk2, mk3;
    int mbl[3] = {1, 1, 1};
    MPI_Aint mdp[3] = {-8, 0, 20};
    MPI_Datatype mty[3] = {MPI_LB, MPI_INT, MPI_UB};
    PX_MPI(MPI_Type_struct(3, mbl, mdp, mty, &mk));
    PX_MPI(MPI_Type_commit(&mk));
    seg_t sm[1] = {{0, 4}};
    check_layout("LB/UB markers", mk, 3, sm, 1, -8, 28);
    PX_MPI(MPI_Type_contiguous(2, mk, &mk2));
    PX_MPI(MPI_Type_commit(&mk2));
    seg_t sm2[2] = {{0, 4}, {28, 4}};
    check_layout("contiguous of markers", mk2, 2, sm2, 2, -8, 56);
    /* a marked type in a struct with data inside its bounds: markers win */
    int m3bl[2] = {1, 1};
    MPI_Aint m3dp[2] = {0, 10};
    MPI_Datatype m3ty[2] = {mk, MPI_CHAR};
    PX_MPI(MPI_Type_create_struct(2, m3bl, m3dp, m3ty, &mk3));
    PX_MPI(MPI_Type_commit(&mk3));
    seg_t sm3[2] = {{0, 4}, {10, 1}};
    check_layout("struct of marked type", mk3, 1, sm3, 2, -8, 28);
    MPI_Aint lb1, ub1;
    PX_MPI(MPI_Type_lb(mk, &lb1));
    PX_MPI(MPI_Type_ub(mk, &ub1));
    PX_CHECK(lb1 == -8 && ub1 == 20, "Type_lb/ub %ld %ld", (long)lb1, (long)ub1);

    /* hindexed_block and indexed_block */
    MPI_Datatype hb, ib;
    MPI_Aint hdp[3] = {40, 0, 17};
    PX_MPI(MPI_Type_create_hindexed_block(3, 2, hdp, MPI_SHORT, &hb));
    PX_MPI(MPI_Type_commit(&hb));
    seg_t shb[3] = {{40, 4}, {0, 4}, {17, 4}};
    check_layout("hindexed_block", hb, 2, shb, 3, 0, 44);
    int idp[2] = {3, 1};
    PX_MPI(MPI_Type_create_indexed_block(2, 2, idp, hb, &ib));
    PX_MPI(MPI_Type_commit(&ib));
    n = 0;
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < 2; k++)
            for (int q = 0; q < 3; q++)
                segs[n++] = (seg_t){(idp[j] + k) * 44 + shb[q].off, shb[q].len};
    check_layout("indexed_block of hindexed_block", ib, 2, segs, n, 44, 4 * 44);

    MPI_Datatype all[] = {idx, st, vec, hv, neg, v3, rs, rsv, pad, mk, mk2, mk3, hb, ib};
    for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        PX_MPI(MPI_Type_free(&all[i]));
}

static void subarrays(void)
{
    int sizes[3] = {4, 5, 6}, sub[3] = {2, 3, 2}, st[3] = {1, 1, 3};
    MPI_Datatype c, f;
    PX_MPI(MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_C, MPI_SHORT, &c));
    PX_MPI(MPI_Type_commit(&c));
    int n = 0;
    for (int i = 0; i < sub[0]; i++)
        for (int j = 0; j < sub[1]; j++)
            for (int k = 0; k < sub[2]; k++)
                segs[n++] =
                    (seg_t){2L * (((st[0] + i) * sizes[1] + st[1] + j) * sizes[2] + st[2] + k), 2};
    check_layout("subarray C order", c, 2, segs, n, 0, 2L * 4 * 5 * 6);
    PX_MPI(MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_FORTRAN, MPI_SHORT, &f));
    PX_MPI(MPI_Type_commit(&f));
    n = 0;
    for (int k = 0; k < sub[2]; k++)
        for (int j = 0; j < sub[1]; j++)
            for (int i = 0; i < sub[0]; i++)
                segs[n++] = (seg_t){
                    2L * ((st[0] + i) + sizes[0] * ((st[1] + j) + sizes[1] * (st[2] + k))), 2};
    check_layout("subarray Fortran order", f, 2, segs, n, 0, 2L * 4 * 5 * 6);
    PX_MPI(MPI_Type_free(&c));
    PX_MPI(MPI_Type_free(&f));
}

/* Owner coordinate of global index i in a dimension of size g over p processes. */
static int owner(int dist, int darg, int g, int p, int i)
{
    if (dist == MPI_DISTRIBUTE_NONE)
        return 0;
    if (dist == MPI_DISTRIBUTE_BLOCK)
        return i / (darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg);
    return (i / (darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg)) % p;
}

/* Every process's darray packs exactly the elements it owns, in array
 * order, and together the processes cover the array once. */
static void darray_case(const char *what, int ndims, const int *gs, const int *dist,
                        const int *darg, const int *ps, int order)
{
    int total = 1, P = 1;
    for (int d = 0; d < ndims; d++) {
        total *= gs[d];
        P *= ps[d];
    }
    int *glob = malloc(sizeof(int) * total), *seen = calloc(total, sizeof(int));
    int *pk = malloc(sizeof(int) * total), *back = malloc(sizeof(int) * total);
    for (int i = 0; i < total; i++)
        glob[i] = 1000 + i;
    ncases++;
    for (int r = 0; r < P; r++) {
        MPI_Datatype t;
        int coord[3], rest = r, procs = P;
        for (int d = 0; d < ndims; d++) {
            procs /= ps[d];
            coord[d] = rest / procs;
            rest %= procs;
        }
        PX_MPI(MPI_Type_create_darray(P, r, ndims, gs, dist, darg, ps, order, MPI_INT, &t));
        PX_MPI(MPI_Type_commit(&t));
        MPI_Aint lb, ext;
        PX_MPI(MPI_Type_get_extent(t, &lb, &ext));
        PX_CHECK(lb == 0 && ext == (MPI_Aint)sizeof(int) * total, "%s: lb %ld extent %ld", what,
                 (long)lb, (long)ext);
        int size, pos = 0;
        PX_MPI(MPI_Type_size(t, &size));
        PX_MPI(MPI_Pack(glob, 1, t, pk, (int)sizeof(int) * total, &pos, MPI_COMM_WORLD));
        /* walk the global array in its storage order */
        int n = 0, idx[3] = {0, 0, 0};
        for (int lin = 0; lin < total; lin++) {
            int rem = lin;
            if (order == MPI_ORDER_C)
                for (int d = ndims - 1; d >= 0; d--) {
                    idx[d] = rem % gs[d];
                    rem /= gs[d];
                }
            else
                for (int d = 0; d < ndims; d++) {
                    idx[d] = rem % gs[d];
                    rem /= gs[d];
                }
            int mine = 1;
            for (int d = 0; d < ndims; d++)
                if (owner(dist[d], darg[d], gs[d], ps[d], idx[d]) != coord[d])
                    mine = 0;
            if (!mine)
                continue;
            if (n < total && pos >= (int)sizeof(int) * (n + 1))
                PX_CHECK(pk[n] == glob[lin], "%s rank %d: element %d is %d expected %d", what, r, n,
                         pk[n], glob[lin]);
            n++;
            seen[lin]++;
        }
        PX_CHECK(pos == (int)sizeof(int) * n && size == pos,
                 "%s rank %d: packed %d size %d, owns %d", what, r, pos, size, n);
        /* round trip into an empty array touches only the owned elements */
        for (int i = 0; i < total; i++)
            back[i] = -1;
        pos = 0;
        PX_MPI(MPI_Unpack(pk, (int)sizeof(int) * n, &pos, back, 1, t, MPI_COMM_WORLD));
        for (int lin = 0; lin < total; lin++) {
            int rem = lin, mine = 1;
            for (int d = 0; d < ndims; d++) {
                int dd = order == MPI_ORDER_C ? ndims - 1 - d : d;
                idx[dd] = rem % gs[dd];
                rem /= gs[dd];
            }
            for (int d = 0; d < ndims; d++)
                if (owner(dist[d], darg[d], gs[d], ps[d], idx[d]) != coord[d])
                    mine = 0;
            if (back[lin] != (mine ? glob[lin] : -1)) {
                PX_CHECK(0, "%s rank %d: unpacked element %d is %d", what, r, lin, back[lin]);
                break;
            }
        }
        PX_MPI(MPI_Type_free(&t));
    }
    for (int i = 0; i < total; i++)
        if (seen[i] != 1) {
            PX_CHECK(0, "%s: element %d owned %d times", what, i, seen[i]);
            break;
        }
    free(glob);
    free(seen);
    free(pk);
    free(back);
}

static void darrays(void)
{
    int gs2[2] = {7, 5}, dist2[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int dflt2[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2};
    for (int P = 1; P <= 6; P++) {
        int ps[2] = {P % 2 == 0 ? 2 : 1, P % 2 == 0 ? P / 2 : P};
        darray_case("darray block/cyclic(2) C", 2, gs2, dist2, dflt2, ps, MPI_ORDER_C);
        darray_case("darray block/cyclic(2) Fortran", 2, gs2, dist2, dflt2, ps, MPI_ORDER_FORTRAN);
    }
    int gs3[3] = {5, 4, 6};
    int dist3[3] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK};
    int darg3[3] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, 4};
    int ps3[3] = {2, 1, 2};
    darray_case("darray 3d cyclic/none/block(4) C", 3, gs3, dist3, darg3, ps3, MPI_ORDER_C);
    darray_case("darray 3d cyclic/none/block(4) Fortran", 3, gs3, dist3, darg3, ps3,
                MPI_ORDER_FORTRAN);
    int dist3b[3] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
    int darg3b[3] = {2, 3, 1};
    int ps3b[3] = {3, 2, 2};
    darray_case("darray 3d cyclic C", 3, gs3, dist3b, darg3b, ps3b, MPI_ORDER_C);
    darray_case("darray 3d cyclic Fortran", 3, gs3, dist3b, darg3b, ps3b, MPI_ORDER_FORTRAN);
}

/* Absolute addresses with MPI_BOTTOM */
static void bottom(void)
{
    static int x = 0x11223344;
    static double y[3] = {1.5, -2.25, 3.0};
    MPI_Aint a[2];
    int bl[2] = {1, 3};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, t;
    PX_MPI(MPI_Get_address(&x, &a[0]));
    PX_MPI(MPI_Get_address(y, &a[1]));
    PX_MPI(MPI_Type_create_struct(2, bl, a, ty, &t));
    PX_MPI(MPI_Type_commit(&t));
    unsigned char pk[64];
    MPI_Status st;
    int cnt;
    ncases++;
    PX_MPI(
        MPI_Sendrecv(MPI_BOTTOM, 1, t, 0, 5, pk, sizeof(pk), MPI_BYTE, 0, 5, MPI_COMM_SELF, &st));
    PX_MPI(MPI_Get_count(&st, MPI_BYTE, &cnt));
    PX_CHECK(cnt == 28, "MPI_BOTTOM send of %d bytes", cnt);
    PX_CHECK(memcmp(pk, &x, 4) == 0 && memcmp(pk + 4, y, 24) == 0, "MPI_BOTTOM sent bytes");
    x = 0;
    memset(y, 0, sizeof(y));
    PX_MPI(MPI_Sendrecv(pk, 28, MPI_BYTE, 0, 6, MPI_BOTTOM, 1, t, 0, 6, MPI_COMM_SELF, &st));
    PX_CHECK(x == 0x11223344 && y[0] == 1.5 && y[1] == -2.25 && y[2] == 3.0,
             "MPI_BOTTOM unpack: %x %g %g %g", x, y[0], y[1], y[2]);
    PX_MPI(MPI_Type_free(&t));
}

/* A large vector: the common case must be right at scale too */
static void big_vector(void)
{
    const int n = 100000;
    MPI_Datatype v;
    PX_MPI(MPI_Type_vector(n, 3, 5, MPI_DOUBLE, &v));
    PX_MPI(MPI_Type_commit(&v));
    double *a = malloc(sizeof(double) * 5 * n), *p = malloc(sizeof(double) * 3 * n);
    double *b = malloc(sizeof(double) * 5 * n);
    for (int i = 0; i < 5 * n; i++) {
        a[i] = i;
        b[i] = -1;
    }
    int pos = 0;
    ncases++;
    PX_MPI(MPI_Pack(a, 1, v, p, (int)sizeof(double) * 3 * n, &pos, MPI_COMM_WORLD));
    int bad = 0;
    for (int i = 0; i < n && !bad; i++)
        for (int k = 0; k < 3; k++)
            if (p[3 * i + k] != 5.0 * i + k)
                bad = 1;
    PX_CHECK(!bad, "big vector packed data");
    pos = 0;
    PX_MPI(MPI_Unpack(p, (int)sizeof(double) * 3 * n, &pos, b, 1, v, MPI_COMM_WORLD));
    for (int i = 0; i < 5 * n && !bad; i++)
        if (b[i] != (i % 5 < 3 ? (double)i : -1.0))
            bad = 1;
    PX_CHECK(!bad, "big vector unpacked data");
    PX_MPI(MPI_Type_free(&v));
    free(a);
    free(p);
    free(b);
}

/* single blocks of every length from 1 to 20 bytes, gaps between them
 * (the short ones are copied in overlapping pairs) */
static void short_blocks(void)
{
    enum { NB = 20 };
    int bl[NB], dp[NB], at = 0;
    seg_t sb[NB];
    for (int i = 0; i < NB; i++) {
        bl[i] = NB - i; /* 20 .. 1 */
        dp[i] = at;
        sb[i] = (seg_t){at, bl[i]};
        at += bl[i] + 3;
    }
    MPI_Datatype t;
    PX_MPI(MPI_Type_indexed(NB, bl, dp, MPI_BYTE, &t));
    PX_MPI(MPI_Type_commit(&t));
    check_layout("byte blocks of 1 to 20", t, 3, sb, NB, 0, at - 3);
    MPI_Type_free(&t);
}

/* Vectors of byte blocks of every length from 1 to 300 (the lengths the
 * engine copies by constant-size moves, in line, and by a call), count
 * several and a stride that leaves a gap of 7: the bytes of every block,
 * its first and its last, packed in order and unpacked in place. */
static void block_lengths(void)
{
    for (int len = 1; len <= 300; len++) {
        MPI_Datatype t;
        PX_MPI(MPI_Type_vector(6, len, len + 7, MPI_BYTE, &t));
        PX_MPI(MPI_Type_commit(&t));
        seg_t sv[6];
        for (int k = 0; k < 6; k++)
            sv[k] = (seg_t){(long)k * (len + 7), len};
        char what[48];
        snprintf(what, sizeof what, "vector of %d-byte blocks", len);
        check_layout(what, t, 2, sv, 6, 0, 5L * (len + 7) + len);
        MPI_Type_free(&t);
    }
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "dtype_roundtrip");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    nested();
    subarrays();
    darrays();
    bottom();
    big_vector();
    short_blocks();
    block_lengths();
    return px_test_finish("%d layouts and round trips", ncases);
}
