/* Datatype decoding and utilities: get_envelope/get_contents round trips
 * (rebuilding every type from its contents gives the same layout), names,
 * dup, the _x queries, Pack_size bounds, external32 byte order, the error
 * classes for uncommitted, freed and invalid types, the Fortran kinds'
 * types (MPI_Type_create_f90_*: their combiner and integers, one handle
 * per kind, never freed), renaming a predefined type, and a generalized
 * request whose free function fails. */
#include "px_test.h"

static int nchecks;

/* Same envelope, bounds, size and packed bytes of 2 items. */
static void same_type(const char *what, MPI_Datatype a, MPI_Datatype b)
{
    MPI_Count sa, sb, la, lb_, ea, eb, tla, tlb, tea, teb;
    PX_MPI(MPI_Type_size_x(a, &sa));
    PX_MPI(MPI_Type_size_x(b, &sb));
    PX_MPI(MPI_Type_get_extent_x(a, &la, &ea));
    PX_MPI(MPI_Type_get_extent_x(b, &lb_, &eb));
    PX_MPI(MPI_Type_get_true_extent_x(a, &tla, &tea));
    PX_MPI(MPI_Type_get_true_extent_x(b, &tlb, &teb));
    nchecks++;
    PX_CHECK(sa == sb && la == lb_ && ea == eb && tla == tlb && tea == teb,
             "%s: size %lld/%lld lb %lld/%lld extent %lld/%lld true %lld+%lld / %lld+%lld", what,
             (long long)sa, (long long)sb, (long long)la, (long long)lb_, (long long)ea,
             (long long)eb, (long long)tla, (long long)tea, (long long)tlb, (long long)teb);
    if (ea != eb || sa != sb)
        return;
    long span = 2 * (long)ea + (long)tea + 64, off = 32 - (long)(la < tla ? la : tla);
    unsigned char *buf = malloc(span + 64), *pa = malloc(2 * sa + 1), *pb = malloc(2 * sa + 1);
    px_fill(buf, span + 64, 5);
    int p1 = 0, p2 = 0;
    PX_MPI(MPI_Pack(buf + off, 2, a, pa, (int)(2 * sa + 1), &p1, MPI_COMM_WORLD));
    PX_MPI(MPI_Pack(buf + off, 2, b, pb, (int)(2 * sa + 1), &p2, MPI_COMM_WORLD));
    PX_CHECK(p1 == p2 && memcmp(pa, pb, p1) == 0, "%s: packed data differs", what);
    free(buf);
    free(pa);
    free(pb);
}

/* Rebuilds t from its contents with the constructor its combiner names. */
static MPI_Datatype rebuild(MPI_Datatype t)
{
    int ni, na, nd, comb;
    PX_MPI(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    int *I = malloc(sizeof(int) * (ni + 1));
    MPI_Aint *A = malloc(sizeof(MPI_Aint) * (na + 1));
    MPI_Datatype *D = malloc(sizeof(MPI_Datatype) * (nd + 1)), n = MPI_DATATYPE_NULL;
    PX_MPI(MPI_Type_get_contents(t, ni, na, nd, I, A, D));
    switch (comb) {
    case MPI_COMBINER_DUP:
        PX_MPI(MPI_Type_dup(D[0], &n));
        break;
    case MPI_COMBINER_CONTIGUOUS:
        PX_MPI(MPI_Type_contiguous(I[0], D[0], &n));
        break;
    case MPI_COMBINER_VECTOR:
        PX_MPI(MPI_Type_vector(I[0], I[1], I[2], D[0], &n));
        break;
    case MPI_COMBINER_HVECTOR:
        PX_MPI(MPI_Type_create_hvector(I[0], I[1], A[0], D[0], &n));
        break;
    case MPI_COMBINER_INDEXED:
        PX_MPI(MPI_Type_indexed(I[0], I + 1, I + 1 + I[0], D[0], &n));
        break;
    case MPI_COMBINER_HINDEXED:
        PX_MPI(MPI_Type_create_hindexed(I[0], I + 1, A, D[0], &n));
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        PX_MPI(MPI_Type_create_indexed_block(I[0], I[1], I + 2, D[0], &n));
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        PX_MPI(MPI_Type_create_hindexed_block(I[0], I[1], A, D[0], &n));
        break;
    case MPI_COMBINER_STRUCT:
        PX_MPI(MPI_Type_create_struct(I[0], I + 1, A, D, &n));
        break;
    case MPI_COMBINER_SUBARRAY:
        PX_MPI(MPI_Type_create_subarray(I[0], I + 1, I + 1 + I[0], I + 1 + 2 * I[0],
                                        I[1 + 3 * I[0]], D[0], &n));
        break;
    case MPI_COMBINER_DARRAY: {
        int nd2 = I[2];
        PX_MPI(MPI_Type_create_darray(I[0], I[1], nd2, I + 3, I + 3 + nd2, I + 3 + 2 * nd2,
                                      I + 3 + 3 * nd2, I[3 + 4 * nd2], D[0], &n));
        break;
    }
    case MPI_COMBINER_RESIZED:
        PX_MPI(MPI_Type_create_resized(D[0], A[0], A[1], &n));
        break;
    default:
        PX_CHECK(0, "unexpected combiner %d", comb);
    }
    /* returned derived types are the caller's to free */
    for (int i = 0; i < nd; i++) {
        int a, b, c, k;
        PX_MPI(MPI_Type_get_envelope(D[i], &a, &b, &c, &k));
        if (k != MPI_COMBINER_NAMED)
            PX_MPI(MPI_Type_free(&D[i]));
    }
    if (n != MPI_DATATYPE_NULL)
        PX_MPI(MPI_Type_commit(&n));
    free(I);
    free(A);
    free(D);
    return n;
}

static void contents(void)
{
    MPI_Datatype t[16];
    int nt = 0;
    int bl[3] = {2, 1, 3}, dp[3] = {4, 0, -2};
    MPI_Aint adp[3] = {16, 0, -24};
    PX_MPI(MPI_Type_contiguous(3, MPI_INT, &t[nt++]));
    PX_MPI(MPI_Type_vector(3, 2, -5, t[0], &t[nt++]));
    PX_MPI(MPI_Type_create_hvector(2, 3, 100, MPI_SHORT, &t[nt++]));
    PX_MPI(MPI_Type_indexed(3, bl, dp, t[2], &t[nt++]));
    PX_MPI(MPI_Type_create_hindexed(3, bl, adp, MPI_DOUBLE, &t[nt++]));
    PX_MPI(MPI_Type_create_indexed_block(3, 2, dp, MPI_FLOAT, &t[nt++]));
    PX_MPI(MPI_Type_create_hindexed_block(3, 1, adp, t[1], &t[nt++]));
    MPI_Datatype sty[3] = {MPI_CHAR, t[3], MPI_DOUBLE_INT};
    PX_MPI(MPI_Type_create_struct(3, bl, adp, sty, &t[nt++]));
    int sz[2] = {5, 7}, sub[2] = {2, 3}, st[2] = {3, 1};
    PX_MPI(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, t[7], &t[nt++]));
    int gs[2] = {9, 4}, di[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
    int da[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2};
    PX_MPI(MPI_Type_create_darray(4, 3, 2, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t[nt++]));
    PX_MPI(MPI_Type_create_resized(t[4], -8, 200, &t[nt++]));
    PX_MPI(MPI_Type_dup(t[10], &t[nt++]));
    for (int i = 0; i < nt; i++) {
        char what[32];
        PX_MPI(MPI_Type_commit(&t[i]));
        MPI_Datatype r = rebuild(t[i]);
        snprintf(what, sizeof(what), "contents of type %d", i);
        same_type(what, t[i], r);
        PX_MPI(MPI_Type_free(&r));
    }
    /* predefined types are named and have no contents */
    int ni, na, nd, comb;
    PX_MPI(MPI_Type_get_envelope(MPI_DOUBLE, &ni, &na, &nd, &comb));
    nchecks++;
    PX_CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "MPI_DOUBLE envelope");
    PX_MPI(MPI_Type_get_envelope(t[7], &ni, &na, &nd, &comb));
    PX_CHECK(comb == MPI_COMBINER_STRUCT && ni == 4 && na == 3 && nd == 3,
             "struct envelope %d %d %d %d", comb, ni, na, nd);

    /* contents hand out usable handles even after the user freed them */
    MPI_Datatype inner, outer, got[1];
    int ii[1];
    PX_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &inner));
    PX_MPI(MPI_Type_contiguous(2, inner, &outer));
    MPI_Datatype keep = inner;
    PX_MPI(MPI_Type_free(&inner));
    PX_MPI(MPI_Type_get_contents(outer, 1, 0, 1, ii, NULL, got));
    PX_CHECK(ii[0] == 2, "contiguous count %d", ii[0]);
    int s1;
    PX_MPI(MPI_Type_size(got[0], &s1));
    PX_CHECK(s1 == 8, "size of the inner type from contents %d", s1);
    (void)keep;
    PX_MPI(MPI_Type_free(&got[0]));
    PX_MPI(MPI_Type_free(&outer));

    /* names */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    PX_MPI(MPI_Type_get_name(MPI_INT, name, &len));
    PX_CHECK(strcmp(name, "MPI_INT") == 0 && len == 7, "name of MPI_INT '%s'", name);
    PX_MPI(MPI_Type_get_name(t[1], name, &len));
    PX_CHECK(len == 0 && name[0] == 0, "unnamed derived type '%s'", name);
    PX_MPI(MPI_Type_set_name(t[1], "my vector"));
    PX_MPI(MPI_Type_get_name(t[1], name, &len));
    PX_CHECK(strcmp(name, "my vector") == 0 && len == 9, "named derived type '%s'", name);
    for (int i = nt - 1; i >= 0; i--)
        PX_MPI(MPI_Type_free(&t[i]));
}

static void pack_sizes(void)
{
    MPI_Datatype v;
    int ps, pos = 0;
    unsigned char buf[4096];
    double d[64];
    PX_MPI(MPI_Type_vector(4, 3, 8, MPI_DOUBLE, &v));
    PX_MPI(MPI_Type_commit(&v));
    for (int i = 0; i < 64; i++)
        d[i] = i;
    PX_MPI(MPI_Pack_size(2, v, MPI_COMM_WORLD, &ps));
    nchecks++;
    PX_CHECK(ps >= 2 * 12 * 8 && ps <= (int)sizeof(buf), "Pack_size %d", ps);
    int ps1, ps2;
    PX_MPI(MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &ps1));
    PX_MPI(MPI_Pack_size(1, v, MPI_COMM_WORLD, &ps2));
    PX_CHECK(ps1 >= 4 && ps2 >= 96, "Pack_size int %d vector %d", ps1, ps2);
    /* pack a vector, an int and the vector again; unpack in order */
    int x = 4242, y = 0;
    PX_MPI(MPI_Pack(d, 1, v, buf, ps2 + ps1 + ps2, &pos, MPI_COMM_WORLD));
    PX_MPI(MPI_Pack(&x, 1, MPI_INT, buf, ps2 + ps1 + ps2, &pos, MPI_COMM_WORLD));
    PX_MPI(MPI_Pack(d + 1, 1, v, buf, ps2 + ps1 + ps2, &pos, MPI_COMM_WORLD));
    PX_CHECK(pos <= ps2 + ps1 + ps2, "position %d beyond Pack_size sum", pos);
    double out[64], out2[64];
    for (int i = 0; i < 64; i++)
        out[i] = out2[i] = -1;
    int up = 0;
    PX_MPI(MPI_Unpack(buf, pos, &up, out, 1, v, MPI_COMM_WORLD));
    PX_MPI(MPI_Unpack(buf, pos, &up, &y, 1, MPI_INT, MPI_COMM_WORLD));
    PX_MPI(MPI_Unpack(buf, pos, &up, out2, 1, v, MPI_COMM_WORLD));
    PX_CHECK(up == pos && y == 4242, "unpack position %d/%d, int %d", up, pos, y);
    for (int i = 0; i < 64; i++) {
        int in = i < 32 && i % 8 < 3;
        PX_CHECK(out[i] == (in ? (double)i : -1.0), "unpacked vector element %d = %g", i, out[i]);
        PX_CHECK(out2[i] == (in ? (double)i + 1 : -1.0), "second vector element %d = %g", i,
                 out2[i]);
        if (px_test_errors)
            break;
    }
    PX_MPI(MPI_Type_free(&v));
}

static void external32(void)
{
    unsigned char b[256];
    MPI_Aint pos = 0, sz;
    int iv[2] = {0x01020304, -2};
    double dv = 1.0;
    short sv = 0x0a0b;
    long lv = -3;
    PX_MPI(MPI_Pack_external("external32", iv, 2, MPI_INT, b, sizeof(b), &pos));
    PX_MPI(MPI_Pack_external("external32", &dv, 1, MPI_DOUBLE, b, sizeof(b), &pos));
    PX_MPI(MPI_Pack_external("external32", &sv, 1, MPI_SHORT, b, sizeof(b), &pos));
    PX_MPI(MPI_Pack_external("external32", &lv, 1, MPI_LONG, b, sizeof(b), &pos));
    const unsigned char want[] = {1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe, 0x3f, 0xf0, 0,
                                  0, 0, 0, 0, 0,    0x0a, 0x0b, 0xff, 0xff, 0xff, 0xfd};
    nchecks++;
    PX_CHECK(pos == (MPI_Aint)sizeof(want) && memcmp(b, want, sizeof(want)) == 0,
             "external32 bytes (%ld packed)", (long)pos);
    PX_MPI(MPI_Pack_external_size("external32", 1, MPI_LONG, &sz));
    PX_CHECK(sz == 4, "external32 size of MPI_LONG %ld", (long)sz);
    MPI_Aint up = 0;
    int iv2[2];
    double dv2;
    short sv2;
    long lv2;
    PX_MPI(MPI_Unpack_external("external32", b, pos, &up, iv2, 2, MPI_INT));
    PX_MPI(MPI_Unpack_external("external32", b, pos, &up, &dv2, 1, MPI_DOUBLE));
    PX_MPI(MPI_Unpack_external("external32", b, pos, &up, &sv2, 1, MPI_SHORT));
    PX_MPI(MPI_Unpack_external("external32", b, pos, &up, &lv2, 1, MPI_LONG));
    PX_CHECK(up == pos && iv2[0] == iv[0] && iv2[1] == -2 && dv2 == 1.0 && sv2 == sv && lv2 == -3,
             "external32 round trip");

    /* long double travels as IEEE binary128 */
    long double ld = 1.5L, ld2 = 0;
    pos = 0;
    PX_MPI(MPI_Pack_external("external32", &ld, 1, MPI_LONG_DOUBLE, b, sizeof(b), &pos));
    const unsigned char wld[16] = {0x3f, 0xff, 0x80};
    PX_CHECK(pos == 16 && memcmp(b, wld, 16) == 0, "external32 long double");
    up = 0;
    PX_MPI(MPI_Unpack_external("external32", b, pos, &up, &ld2, 1, MPI_LONG_DOUBLE));
    PX_CHECK(ld2 == 1.5L, "external32 long double round trip %Lg", ld2);

    /* derived: a vector of shorts with a negative stride, in type-map order */
    short sh[6] = {0x0102, 0x0304, 0x0506, 0x0708, 0x090a, 0x0b0c}, sh2[6] = {0};
    MPI_Datatype vt;
    PX_MPI(MPI_Type_vector(3, 1, -2, MPI_SHORT, &vt));
    PX_MPI(MPI_Type_commit(&vt));
    PX_MPI(MPI_Pack_external_size("external32", 1, vt, &sz));
    PX_CHECK(sz == 6, "external32 size of the vector %ld", (long)sz);
    pos = 0;
    PX_MPI(MPI_Pack_external("external32", sh + 4, 1, vt, b, sizeof(b), &pos));
    const unsigned char wv[6] = {0x09, 0x0a, 0x05, 0x06, 0x01, 0x02};
    PX_CHECK(pos == 6 && memcmp(b, wv, 6) == 0, "external32 vector bytes %02x %02x", b[0], b[1]);
    up = 0;
    PX_MPI(MPI_Unpack_external("external32", b, pos, &up, sh2 + 4, 1, vt));
    PX_CHECK(sh2[0] == sh[0] && sh2[2] == sh[2] && sh2[4] == sh[4] && sh2[1] == 0 && sh2[3] == 0 &&
                 sh2[5] == 0,
             "external32 vector round trip");
    PX_MPI(MPI_Type_free(&vt));
}

static int cls_of(int rc)
{
    int c = -1;
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    MPI_Error_class(rc, &c);
    return c;
}

static void errors(void)
{
    MPI_Datatype t;
    int buf[16] = {0}, s;
    MPI_Request r;
    PX_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &t));
    int me = px_test_rank;
    nchecks++;
    /* uncommitted derived type in communication */
    int c = cls_of(MPI_Send(buf, 1, t, me, 0, MPI_COMM_WORLD));
    PX_CHECK(c == MPI_ERR_TYPE, "Send with uncommitted type: class %d", c);
    c = cls_of(MPI_Irecv(buf, 1, t, me, 0, MPI_COMM_WORLD, &r));
    PX_CHECK(c == MPI_ERR_TYPE, "Irecv with uncommitted type: class %d", c);
    /* queries work before commit */
    PX_MPI(MPI_Type_size(t, &s));
    PX_CHECK(s == 8, "size of uncommitted type %d", s);
    PX_MPI(MPI_Type_free(&t));
    /* null and invalid handles */
    c = cls_of(MPI_Send(buf, 1, MPI_DATATYPE_NULL, me, 0, MPI_COMM_WORLD));
    PX_CHECK(c == MPI_ERR_TYPE, "Send with MPI_DATATYPE_NULL: class %d", c);
    c = cls_of(MPI_Type_size(MPI_DATATYPE_NULL, &s));
    PX_CHECK(c == MPI_ERR_TYPE, "Type_size(MPI_DATATYPE_NULL): class %d", c);
    MPI_Datatype nul = MPI_DATATYPE_NULL, nt;
    c = cls_of(MPI_Type_commit(&nul));
    PX_CHECK(c == MPI_ERR_TYPE, "Type_commit(MPI_DATATYPE_NULL): class %d", c);
    c = cls_of(MPI_Type_free(&nul));
    PX_CHECK(c == MPI_ERR_TYPE, "Type_free(MPI_DATATYPE_NULL): class %d", c);
    MPI_Datatype pre = MPI_INT;
    c = cls_of(MPI_Type_free(&pre));
    PX_CHECK(c == MPI_ERR_TYPE, "Type_free(MPI_INT): class %d", c);
    c = cls_of(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &nt));
    PX_CHECK(c == MPI_ERR_TYPE, "Type_contiguous of MPI_DATATYPE_NULL: class %d", c);
    c = cls_of(MPI_Type_contiguous(-1, MPI_INT, &nt));
    PX_CHECK(c == MPI_ERR_COUNT, "Type_contiguous(-1): class %d", c);
    c = cls_of(MPI_Type_vector(-2, 1, 1, MPI_INT, &nt));
    PX_CHECK(c == MPI_ERR_COUNT, "Type_vector(-2): class %d", c);
    int gs[1] = {10};
    int di[1] = {MPI_DISTRIBUTE_BLOCK}, da[1] = {2}, ps[1] = {2};
    c = cls_of(MPI_Type_create_darray(2, 0, 1, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &nt));
    PX_CHECK(c == MPI_ERR_ARG, "darray block too small: class %d", c);
}

static void f90_kinds(void)
{
    static const struct {
        int comb, p, r, size;
    } k[] = {{MPI_COMBINER_F90_REAL, 6, 30, 4},    {MPI_COMBINER_F90_REAL, 15, 300, 8},
             {MPI_COMBINER_F90_COMPLEX, 6, 30, 8}, {MPI_COMBINER_F90_COMPLEX, 15, 300, 16},
             {MPI_COMBINER_F90_INTEGER, 0, 4, 2},  {MPI_COMBINER_F90_INTEGER, 0, 9, 4}};
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
        MPI_Datatype t, again;
        nchecks++;
        if (k[i].comb == MPI_COMBINER_F90_INTEGER) {
            PX_MPI(MPI_Type_create_f90_integer(k[i].r, &t));
            PX_MPI(MPI_Type_create_f90_integer(k[i].r, &again));
        } else if (k[i].comb == MPI_COMBINER_F90_REAL) {
            PX_MPI(MPI_Type_create_f90_real(k[i].p, k[i].r, &t));
            PX_MPI(MPI_Type_create_f90_real(k[i].p, k[i].r, &again));
        } else {
            PX_MPI(MPI_Type_create_f90_complex(k[i].p, k[i].r, &t));
            PX_MPI(MPI_Type_create_f90_complex(k[i].p, k[i].r, &again));
        }
        int ni, na, nd, comb, s, I[2] = {-1, -1};
        MPI_Aint A[1];
        MPI_Datatype D[1];
        PX_MPI(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
        int want_ni = k[i].comb == MPI_COMBINER_F90_INTEGER ? 1 : 2;
        PX_CHECK(comb == k[i].comb && ni == want_ni && na == 0 && nd == 0,
                 "f90 kind %zu: combiner %d, %d integers %d addresses %d types", i, comb, ni, na,
                 nd);
        PX_MPI(MPI_Type_get_contents(t, 2, 0, 0, I, A, D));
        PX_CHECK(want_ni == 1 ? I[0] == k[i].r : I[0] == k[i].p && I[1] == k[i].r,
                 "f90 kind %zu: contents %d %d", i, I[0], I[1]);
        PX_MPI(MPI_Type_size(t, &s));
        PX_CHECK(s == k[i].size && t == again, "f90 kind %zu: size %d, handles %s", i, s,
                 t == again ? "equal" : "differ");
        MPI_Datatype f = t;
        PX_CHECK(cls_of(MPI_Type_free(&f)) == MPI_ERR_TYPE, "f90 kind %zu could be freed", i);
    }
}

static void predefined_name(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    nchecks++;
    PX_MPI(MPI_Type_set_name(MPI_SHORT, "my short"));
    PX_MPI(MPI_Type_get_name(MPI_SHORT, name, &len));
    PX_CHECK(!strcmp(name, "my short") && len == 8, "renamed MPI_SHORT is '%s'", name);
    PX_MPI(MPI_Type_set_name(MPI_SHORT, "MPI_SHORT"));
}

static int greq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    return MPI_SUCCESS;
}
static int greq_free_fails(void *extra)
{
    ++*(int *)extra;
    return MPI_ERR_BUFFER;
}
static int greq_cancel(void *extra, int complete)
{
    (void)extra, (void)complete;
    return MPI_SUCCESS;
}

static void greq_free_error(void)
{
    MPI_Request r;
    int freed = 0;
    nchecks++;
    PX_MPI(MPI_Grequest_start(greq_query, greq_free_fails, greq_cancel, &freed, &r));
    PX_MPI(MPI_Grequest_complete(r));
    int c = cls_of(MPI_Wait(&r, MPI_STATUS_IGNORE));
    PX_CHECK(c == MPI_ERR_BUFFER && freed == 1 && r == MPI_REQUEST_NULL,
             "Wait of a request whose free function fails: class %d, freed %d times", c, freed);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "dtype_misc");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    contents();
    pack_sizes();
    external32();
    errors();
    f90_kinds();
    predefined_name();
    greq_free_error();
    return px_test_finish("%d groups of checks", nchecks);
}
