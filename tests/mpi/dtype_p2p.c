/* Point-to-point with non-contiguous datatypes: derived on both sides,
 * derived against basic types and MPI_BYTE, large (rendezvous) messages,
 * negative strides, Sendrecv_replace, and types freed while a request still
 * uses them. Every received buffer is compared with a hand-computed one. */
#include "px_test.h"

#include <stddef.h>

static int rank, size, peer, nchecks;

/* Receives from peer while sending to it (works with peer == self too). */
static void exchange(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, MPI_Status *st)
{
    MPI_Request r;
    PX_MPI(MPI_Irecv(rbuf, rcount, rtype, peer, 7, MPI_COMM_WORLD, &r));
    PX_MPI(MPI_Send(sbuf, scount, stype, peer, 7, MPI_COMM_WORLD));
    PX_MPI(MPI_Wait(&r, st));
}

static int val(int who, int i) { return who * 100000 + i; }

/* rbuf[ridx[k]] must be the peer's element sidx[k]; the rest stays -1. */
static void verify_ints(const char *what, const int *rbuf, int rlen, const int *ridx,
                        const int *sidx, int n)
{
    int *exp = malloc(sizeof(int) * rlen);
    for (int i = 0; i < rlen; i++)
        exp[i] = -1;
    for (int k = 0; k < n; k++)
        exp[ridx[k]] = val(peer, sidx[k]);
    nchecks++;
    for (int i = 0; i < rlen; i++)
        if (rbuf[i] != exp[i]) {
            PX_CHECK(0, "%s: element %d is %d expected %d", what, i, rbuf[i], exp[i]);
            break;
        }
    free(exp);
}

static void small_cases(void)
{
    int sbuf[80], rbuf[80], sidx[30], ridx[30], n;
    MPI_Datatype vec, ind, sub;
    MPI_Status st;
    for (int i = 0; i < 80; i++)
        sbuf[i] = val(rank, i);

    PX_MPI(MPI_Type_vector(10, 3, 7, MPI_INT, &vec));
    PX_MPI(MPI_Type_commit(&vec));
    n = 0;
    for (int j = 0; j < 10; j++)
        for (int k = 0; k < 3; k++)
            sidx[n++] = 7 * j + k;
    int bl[3] = {5, 10, 15}, dp[3] = {40, 0, 20};
    PX_MPI(MPI_Type_indexed(3, bl, dp, MPI_INT, &ind));
    PX_MPI(MPI_Type_commit(&ind));
    int m = 0;
    for (int b = 0; b < 3; b++)
        for (int k = 0; k < bl[b]; k++)
            ridx[m++] = dp[b] + k;

    /* derived to derived */
    for (int i = 0; i < 80; i++)
        rbuf[i] = -1;
    exchange(sbuf, 1, vec, rbuf, 1, ind, &st);
    verify_ints("vector -> indexed", rbuf, 80, ridx, sidx, 30);

    /* derived to basic */
    for (int i = 0; i < 80; i++)
        rbuf[i] = -1;
    exchange(sbuf, 1, vec, rbuf, 30, MPI_INT, &st);
    for (int k = 0; k < 30; k++)
        ridx[k] = k;
    verify_ints("vector -> MPI_INT", rbuf, 80, ridx, sidx, 30);

    /* basic to derived (C-order subarray) */
    int sizes[2] = {6, 8}, subs[2] = {5, 6}, starts[2] = {1, 2};
    PX_MPI(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub));
    PX_MPI(MPI_Type_commit(&sub));
    for (int i = 0; i < 80; i++)
        rbuf[i] = -1;
    exchange(sbuf + 3, 30, MPI_INT, rbuf, 1, sub, &st);
    n = 0;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 6; j++) {
            ridx[n] = (1 + i) * 8 + 2 + j;
            sidx[n] = 3 + n;
            n++;
        }
    verify_ints("MPI_INT -> subarray", rbuf, 80, ridx, sidx, 30);

    /* Sendrecv_replace through a derived type: only the described ints move */
    int rep[80];
    for (int i = 0; i < 80; i++)
        rep[i] = val(rank, i);
    PX_MPI(MPI_Sendrecv_replace(rep, 1, vec, peer, 8, peer, 8, MPI_COMM_WORLD, &st));
    nchecks++;
    for (int i = 0; i < 80; i++) {
        int in = i < 70 && i % 7 < 3;
        int want = in ? val(peer, i) : val(rank, i);
        if (rep[i] != want) {
            PX_CHECK(0, "Sendrecv_replace element %d is %d expected %d", i, rep[i], want);
            break;
        }
    }
    PX_MPI(MPI_Type_free(&vec));
    PX_MPI(MPI_Type_free(&ind));
    PX_MPI(MPI_Type_free(&sub));
}

/* struct { int i; double d; } on one side, MPI_BYTE on the other */
struct rec {
    int i;
    double d;
};

static void bytes_cases(void)
{
    MPI_Datatype st_t;
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {offsetof(struct rec, i), offsetof(struct rec, d)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Status st;
    PX_MPI(MPI_Type_create_struct(2, bl, dp, ty, &st_t));
    PX_MPI(MPI_Type_commit(&st_t));
    struct rec s[4], r[4];
    unsigned char raw[48], exp[48];
    for (int k = 0; k < 4; k++) {
        s[k].i = val(rank, k);
        s[k].d = rank + k * 0.5;
    }
    exchange(s, 4, st_t, raw, 48, MPI_BYTE, &st);
    for (int k = 0; k < 4; k++) {
        int iv = val(peer, k);
        double dv = peer + k * 0.5;
        memcpy(exp + 12 * k, &iv, 4);
        memcpy(exp + 12 * k + 4, &dv, 8);
    }
    int cnt;
    PX_MPI(MPI_Get_count(&st, MPI_BYTE, &cnt));
    nchecks++;
    PX_CHECK(cnt == 48 && memcmp(raw, exp, 48) == 0, "struct -> MPI_BYTE: %d bytes, data %s", cnt,
             memcmp(raw, exp, 48) ? "differs" : "ok");

    /* and back: packed bytes scatter into the padded structs */
    memset(r, 0x5a, sizeof(r));
    for (int k = 0; k < 4; k++) {
        int iv = val(rank, k);
        double dv = rank + k * 0.5;
        memcpy(raw + 12 * k, &iv, 4);
        memcpy(raw + 12 * k + 4, &dv, 8);
    }
    exchange(raw, 48, MPI_BYTE, r, 4, st_t, &st);
    nchecks++;
    for (int k = 0; k < 4; k++) {
        unsigned char padding[4];
        memcpy(padding, (unsigned char *)&r[k] + 4, 4);
        PX_CHECK(r[k].i == val(peer, k) && r[k].d == peer + k * 0.5,
                 "MPI_BYTE -> struct item %d: %d %g", k, r[k].i, r[k].d);
        PX_CHECK(padding[0] == 0x5a && padding[3] == 0x5a, "padding of item %d written", k);
    }
    PX_MPI(MPI_Get_count(&st, st_t, &cnt));
    PX_CHECK(cnt == 4, "Get_count(struct) %d", cnt);
    PX_MPI(MPI_Type_free(&st_t));
}

/* Large message with a negative stride on the receive side */
static void large_case(void)
{
    const int n = 200000;
    MPI_Datatype sv, rv;
    MPI_Status st;
    double *s = malloc(sizeof(double) * 2 * n), *r = malloc(sizeof(double) * 3 * n);
    for (int i = 0; i < 2 * n; i++)
        s[i] = rank * 1e7 + i;
    for (int i = 0; i < 3 * n; i++)
        r[i] = -1;
    PX_MPI(MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &sv));
    PX_MPI(MPI_Type_commit(&sv));
    PX_MPI(MPI_Type_create_hvector(n, 1, -3 * (MPI_Aint)sizeof(double), MPI_DOUBLE, &rv));
    PX_MPI(MPI_Type_commit(&rv));
    /* element k lands at r[3n - 3 - 3k] */
    exchange(s, 1, sv, r + 3 * n - 3, 1, rv, &st);
    nchecks++;
    for (int i = 0; i < 3 * n; i++) {
        double want = -1;
        if (i % 3 == 0) {
            int k = (3 * n - 3 - i) / 3;
            want = peer * 1e7 + 2.0 * k;
        }
        if (r[i] != want) {
            PX_CHECK(0, "large negative-stride element %d is %g expected %g", i, r[i], want);
            break;
        }
    }
    PX_MPI(MPI_Type_free(&sv));
    PX_MPI(MPI_Type_free(&rv));
    free(s);
    free(r);
}

/* MPI_Type_free while a request or another type still uses the type */
static void free_while_used(void)
{
    int s[64], r[64], big[4096], rbig[4096];
    MPI_Datatype t, u, inner, outer;
    MPI_Request rr, sr;
    MPI_Status st;
    for (int i = 0; i < 64; i++)
        s[i] = val(rank, i);
    for (int i = 0; i < 64; i++)
        r[i] = -1;
    PX_MPI(MPI_Type_vector(8, 2, 4, MPI_INT, &t));
    PX_MPI(MPI_Type_commit(&t));
    PX_MPI(MPI_Type_vector(4, 4, 8, MPI_INT, &u));
    PX_MPI(MPI_Type_commit(&u));
    PX_MPI(MPI_Irecv(r, 1, u, peer, 9, MPI_COMM_WORLD, &rr));
    PX_MPI(MPI_Isend(s, 1, t, peer, 9, MPI_COMM_WORLD, &sr));
    PX_MPI(MPI_Type_free(&u));
    PX_MPI(MPI_Type_free(&t));
    PX_CHECK(u == MPI_DATATYPE_NULL && t == MPI_DATATYPE_NULL, "Type_free sets the handle null");
    /* other types come and go meanwhile */
    for (int k = 0; k < 50; k++) {
        MPI_Datatype x;
        PX_MPI(MPI_Type_vector(3, 1, 5, MPI_DOUBLE, &x));
        PX_MPI(MPI_Type_commit(&x));
        PX_MPI(MPI_Type_free(&x));
    }
    PX_MPI(MPI_Wait(&rr, &st));
    PX_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    int sidx[16], ridx[16], n = 0;
    for (int j = 0; j < 8; j++)
        for (int k = 0; k < 2; k++)
            sidx[n++] = 4 * j + k;
    n = 0;
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < 4; k++)
            ridx[n++] = 8 * j + k;
    verify_ints("types freed while requests pending", r, 64, ridx, sidx, 16);

    /* outer type built on a freed inner type */
    PX_MPI(MPI_Type_vector(2, 1, 3, MPI_INT, &inner));
    PX_MPI(MPI_Type_contiguous(3, inner, &outer));
    PX_MPI(MPI_Type_free(&inner));
    PX_MPI(MPI_Type_commit(&outer));
    for (int i = 0; i < 64; i++)
        r[i] = -1;
    exchange(s, 2, outer, r, 2, outer, &st);
    /* inner: ints 0 and 3, extent 4 ints; outer: 3 of them, extent 12 ints */
    n = 0;
    for (int c = 0; c < 2; c++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 2; k++) {
                sidx[n] = ridx[n] = 12 * c + 4 * j + 3 * k;
                n++;
            }
    verify_ints("outer type after inner freed", r, 64, ridx, sidx, 12);
    PX_MPI(MPI_Type_free(&outer));

    /* a large (rendezvous) receive whose type is freed before the data arrives */
    for (int i = 0; i < 4096; i++) {
        big[i] = val(rank, i);
        rbig[i] = -1;
    }
    PX_MPI(MPI_Type_vector(2048, 1, 2, MPI_INT, &t));
    PX_MPI(MPI_Type_commit(&t));
    PX_MPI(MPI_Irecv(rbig, 1, t, peer, 10, MPI_COMM_WORLD, &rr));
    PX_MPI(MPI_Type_free(&t));
    PX_MPI(MPI_Barrier(MPI_COMM_WORLD));
    PX_MPI(MPI_Send(big, 2048, MPI_INT, peer, 10, MPI_COMM_WORLD));
    PX_MPI(MPI_Wait(&rr, &st));
    nchecks++;
    for (int i = 0; i < 4096; i++) {
        int want = i % 2 ? -1 : val(peer, i / 2);
        if (rbig[i] != want) {
            PX_CHECK(0, "freed rendezvous type: element %d is %d expected %d", i, rbig[i], want);
            break;
        }
    }
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "dtype_p2p");
    rank = px_test_rank;
    size = px_test_size;
    peer = px_pair_peer(rank, size);
    if (peer < 0)
        peer = rank; /* odd one out talks to itself */
    small_cases();
    bytes_cases();
    large_case();
    free_while_used();
    return px_test_finish("%d exchanges checked with peer rank %d", nchecks, peer);
}
