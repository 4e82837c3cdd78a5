/* One call each of the collectives whose algorithm depends on where the
 * ranks are (one node or several), with checked data; run by
 * coll_choice_test.py, which reads the algorithms chosen from the trace. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fails++;                                                                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Barrier(MPI_COMM_WORLD);

    enum { BC = 65536, AA = 16, AG = 64 };
    unsigned char *b = malloc(BC);
    for (int i = 0; i < BC; i++)
        b[i] = r == 1 ? (unsigned char)(i * 7 + 3) : 0;
    MPI_Bcast(b, BC, MPI_BYTE, 1 % n, MPI_COMM_WORLD);
    for (int i = 0; i < BC; i++)
        if (b[i] != (unsigned char)(i * 7 + 3)) {
            CHECK(0, "rank %d: bcast byte %d is %u\n", r, i, b[i]);
            break;
        }

    /* a large broadcast from rank 0 */
    enum { BL = 1 << 20 };
    unsigned char *bl = malloc(BL);
    for (int i = 0; i < BL; i++)
        bl[i] = r == 0 ? (unsigned char)(i * 13 + 5) : 0;
    MPI_Bcast(bl, BL, MPI_BYTE, 0, MPI_COMM_WORLD);
    for (int i = 0; i < BL; i++)
        if (bl[i] != (unsigned char)(i * 13 + 5)) {
            CHECK(0, "rank %d: large bcast byte %d is %u\n", r, i, bl[i]);
            break;
        }
    free(bl);

    int *s = malloc(sizeof(int) * (size_t)n * AA), *d = malloc(sizeof(int) * (size_t)n * AA);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < AA; i++)
            s[p * AA + i] = r * 1000000 + p * 1000 + i;
    MPI_Alltoall(s, AA, MPI_INT, d, AA, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < AA; i++)
            CHECK(d[p * AA + i] == p * 1000000 + r * 1000 + i, "rank %d: alltoall from %d [%d]\n",
                  r, p, i);

    /* blocks of 128, 256 and 512 KB, then 512 KB again on a communicator
     * whose ranks are in reverse order (the staggered alltoall orders them
     * node by node itself) */
    enum { AL = 131072 };
    int *ls = malloc(sizeof(int) * (size_t)n * AL), *ld = malloc(sizeof(int) * (size_t)n * AL);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, n - r, &rev);
    for (int k = AL / 4, pass = 0; pass < 4; k = k < AL ? k * 2 : k, pass++) {
        MPI_Comm cm = pass < 3 ? MPI_COMM_WORLD : rev;
        int me;
        MPI_Comm_rank(cm, &me);
        for (int p = 0; p < n; p++)
            for (int i = 0; i < k; i++)
                ls[p * k + i] = me * 1000000 + p * 100000 + (i + k) % 99991;
        memset(ld, 0, sizeof(int) * (size_t)n * k);
        MPI_Alltoall(ls, k, MPI_INT, ld, k, MPI_INT, cm);
        for (int p = 0; p < n; p++)
            for (int i = 0; i < k; i++)
                if (ld[p * k + i] != p * 1000000 + me * 100000 + (i + k) % 99991) {
                    CHECK(0, "rank %d: alltoall of %d ints from %d [%d] (pass %d)\n", r, k, p, i,
                          pass);
                    break;
                }
    }
    MPI_Comm_free(&rev);
    free(ls);
    free(ld);

    /* rank p sends p+q+1 ints to rank q */
    int *sc = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n);
    int *rc = malloc(sizeof(int) * (size_t)n), *rd = malloc(sizeof(int) * (size_t)n);
    int so = 0, ro = 0;
    for (int p = 0; p < n; p++) {
        sc[p] = r + p + 1;
        sd[p] = so;
        so += sc[p];
        rc[p] = p + r + 1;
        rd[p] = ro;
        ro += rc[p];
    }
    int *vs = malloc(sizeof(int) * (size_t)so), *vr = malloc(sizeof(int) * (size_t)ro);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < sc[p]; i++)
            vs[sd[p] + i] = r * 1000 + p * 100 + i;
    MPI_Alltoallv(vs, sc, sd, MPI_INT, vr, rc, rd, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < rc[p]; i++)
            CHECK(vr[rd[p] + i] == p * 1000 + r * 100 + i, "rank %d: alltoallv from %d [%d]\n", r,
                  p, i);

    double *g = malloc(sizeof(double) * (size_t)n * AG), mine[AG];
    for (int i = 0; i < AG; i++)
        mine[i] = r + i / 128.0;
    MPI_Allgather(mine, AG, MPI_DOUBLE, g, AG, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < AG; i++)
            CHECK(g[p * AG + i] == p + i / 128.0, "rank %d: allgather from %d [%d]\n", r, p, i);

    /* blocks of 128 KB */
    enum { GM = 16384 };
    double *gm = malloc(sizeof(double) * (size_t)n * GM), *mm = malloc(sizeof(double) * GM);
    for (int i = 0; i < GM; i++)
        mm[i] = r * 100000.0 - i;
    MPI_Allgather(mm, GM, MPI_DOUBLE, gm, GM, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < GM; i++)
            if (gm[p * GM + i] != p * 100000.0 - i) {
                CHECK(0, "rank %d: 128 KB allgather from %d [%d]\n", r, p, i);
                break;
            }
    free(gm);
    free(mm);

    /* blocks of 384 KB */
    enum { GL = 49152 };
    double *gl = malloc(sizeof(double) * (size_t)n * GL), *ml = malloc(sizeof(double) * GL);
    for (int i = 0; i < GL; i++)
        ml[i] = r * 100000.0 + i;
    MPI_Allgather(ml, GL, MPI_DOUBLE, gl, GL, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < GL; i++)
            if (gl[p * GL + i] != p * 100000.0 + i) {
                CHECK(0, "rank %d: large allgather from %d [%d]\n", r, p, i);
                break;
            }
    free(gl);
    free(ml);

    enum { AR = 131072 }; /* 1 MB */
    double *x = malloc(sizeof(double) * AR), *y = malloc(sizeof(double) * AR);
    for (int i = 0; i < AR; i++)
        x[i] = r + i;
    MPI_Allreduce(x, y, AR, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < AR; i++)
        if (y[i] != n * (n - 1) / 2 + (double)n * i) {
            CHECK(0, "rank %d: allreduce [%d] = %g\n", r, i, y[i]);
            break;
        }
    free(x);
    free(y);

    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (r == 0)
        printf(all ? "FAIL coll_choice np=%d: %d errors\n" : "PASS coll_choice np=%d\n", n, all);
    free(b);
    free(s);
    free(d);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(vs);
    free(vr);
    free(g);
    MPI_Finalize();
    return all != 0;
}
