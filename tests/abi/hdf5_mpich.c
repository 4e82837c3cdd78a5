/* Parallel HDF5 as Debian builds it for MPICH (libhdf5-mpich-dev), run on
 * Plexus through the MPICH ABI: this program is compiled with h5pcc.mpich,
 * so it and libhdf5_mpich.so are linked against MPICH's libmpich.so.12, and
 * the test puts Plexus's first on LD_LIBRARY_PATH.
 *
 * One file, written by every rank through HDF5's MPI-IO driver, then read
 * back with another decomposition and checked value by value:
 *   - "rows": contiguous 2-D ints, a block of rows per rank, collective;
 *   - "cols": chunked 2-D doubles, a block of columns per rank (a strided
 *     selection in the file: derived datatypes and file views), collective,
 *     then extended by one row block that rank 0 alone writes independently;
 *   - "every": 1-D longs, rank r writes elements r, r + P, r + 2P, ...
 *     (a point selection), independent transfers;
 *   - an attribute and a group, created collectively;
 * then rank 0 reads every dataset again with HDF5's serial POSIX driver.
 * Argument: the directory to write in. Prints "PASS hdf5_mpich np=P". */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NR 24  /* rows per rank in "rows" */
#define NC 40  /* columns */
#define CR 16  /* "cols": rows */
#define CPR 12 /* "cols": columns per rank */
#define EPR 50 /* "every": elements per rank */

static int rank, size;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "hdf5_mpich rank %d: line %d: ", rank, __LINE__);                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)
#define H5OK(x) CHECK((x) >= 0, "%s failed", #x)

static int v_rows(long i, long j) { return (int)(i * 1000 + j); }
static double v_cols(long i, long j) { return (double)i + (double)j / 1024.0; }
static long v_every(long k) { return k * 7 + 3; }

static hid_t open_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5OK(fapl);
    H5OK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    return fapl;
}

static hid_t xfer(H5FD_mpio_xfer_t mode)
{
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5OK(dxpl);
    H5OK(H5Pset_dxpl_mpio(dxpl, mode));
    return dxpl;
}

static void write_file(const char *path)
{
    hid_t fapl = open_fapl();
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5OK(f);
    hid_t coll = xfer(H5FD_MPIO_COLLECTIVE), ind = xfer(H5FD_MPIO_INDEPENDENT);

    /* rows: rank r owns rows [r*NR, (r+1)*NR) */
    hsize_t rdims[2] = {(hsize_t)size * NR, NC};
    hid_t fs = H5Screate_simple(2, rdims, NULL);
    hid_t d = H5Dcreate2(f, "rows", H5T_NATIVE_INT, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5OK(d);
    int *ib = malloc(sizeof(int) * NR * NC);
    for (int i = 0; i < NR; i++)
        for (int j = 0; j < NC; j++)
            ib[i * NC + j] = v_rows((long)rank * NR + i, j);
    hsize_t start[2] = {(hsize_t)rank * NR, 0}, count[2] = {NR, NC};
    H5OK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
    hid_t ms = H5Screate_simple(2, count, NULL);
    H5OK(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, coll, ib));
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    free(ib);

    /* cols: chunked, extendible in rows; rank r owns columns [r*CPR, (r+1)*CPR) */
    hsize_t cdims[2] = {CR, (hsize_t)size * CPR}, cmax[2] = {H5S_UNLIMITED, (hsize_t)size * CPR};
    hsize_t chunk[2] = {5, 7};
    fs = H5Screate_simple(2, cdims, cmax);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5OK(H5Pset_chunk(dcpl, 2, chunk));
    H5OK(H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &(double){-1.0}));
    d = H5Dcreate2(f, "cols", H5T_NATIVE_DOUBLE, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5OK(d);
    double *db = malloc(sizeof(double) * CR * CPR);
    for (int i = 0; i < CR; i++)
        for (int j = 0; j < CPR; j++)
            db[i * CPR + j] = v_cols(i, (long)rank * CPR + j);
    hsize_t cstart[2] = {0, (hsize_t)rank * CPR}, ccount[2] = {CR, CPR};
    H5OK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, cstart, NULL, ccount, NULL));
    ms = H5Screate_simple(2, ccount, NULL);
    H5OK(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, coll, db));
    H5Sclose(ms);
    H5Sclose(fs);
    /* every rank extends (collective), rank 0 alone fills the new rows */
    hsize_t ext[2] = {2 * CR, (hsize_t)size * CPR};
    H5OK(H5Dset_extent(d, ext));
    fs = H5Dget_space(d);
    if (rank == 0) {
        hsize_t nstart[2] = {CR, 0}, ncount[2] = {CR, (hsize_t)size * CPR};
        double *nb = malloc(sizeof(double) * CR * size * CPR);
        for (int i = 0; i < CR; i++)
            for (int j = 0; j < size * CPR; j++)
                nb[i * size * CPR + j] = v_cols(CR + i, j);
        H5OK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, nstart, NULL, ncount, NULL));
        ms = H5Screate_simple(2, ncount, NULL);
        H5OK(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, ind, nb));
        H5Sclose(ms);
        free(nb);
    }
    H5Sclose(fs);
    H5Dclose(d);
    H5Pclose(dcpl);
    free(db);

    /* every: rank r writes elements r, r+P, ... (a point selection) */
    hsize_t edim = (hsize_t)size * EPR;
    fs = H5Screate_simple(1, &edim, NULL);
    d = H5Dcreate2(f, "every", H5T_NATIVE_LONG, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5OK(d);
    hsize_t *pts = malloc(sizeof(hsize_t) * EPR);
    long *lb = malloc(sizeof(long) * EPR);
    for (int k = 0; k < EPR; k++) {
        pts[k] = (hsize_t)k * size + rank;
        lb[k] = v_every((long)pts[k]);
    }
    H5OK(H5Sselect_elements(fs, H5S_SELECT_SET, EPR, pts));
    hsize_t n = EPR;
    ms = H5Screate_simple(1, &n, NULL);
    H5OK(H5Dwrite(d, H5T_NATIVE_LONG, ms, fs, ind, lb));
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    free(pts);
    free(lb);

    /* metadata: a group with an attribute holding the job's size */
    hid_t g = H5Gcreate2(f, "meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5OK(g);
    hid_t as = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(g, "nprocs", H5T_NATIVE_INT, as, H5P_DEFAULT, H5P_DEFAULT);
    H5OK(a);
    H5OK(H5Awrite(a, H5T_NATIVE_INT, &size));
    H5Aclose(a);
    H5Sclose(as);
    H5Gclose(g);

    H5Pclose(coll);
    H5Pclose(ind);
    H5OK(H5Fclose(f));
    H5Pclose(fapl);
}

static void read_file(const char *path)
{
    hid_t fapl = open_fapl();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5OK(f);
    hid_t coll = xfer(H5FD_MPIO_COLLECTIVE);
    int peer = (rank + 1) % size; /* read what the next rank wrote */

    hid_t d = H5Dopen2(f, "rows", H5P_DEFAULT);
    H5OK(d);
    hid_t fs = H5Dget_space(d);
    hsize_t start[2] = {(hsize_t)peer * NR, 0}, count[2] = {NR, NC};
    H5OK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
    hid_t ms = H5Screate_simple(2, count, NULL);
    int *ib = malloc(sizeof(int) * NR * NC);
    H5OK(H5Dread(d, H5T_NATIVE_INT, ms, fs, coll, ib));
    for (int i = 0; i < NR; i++)
        for (int j = 0; j < NC; j++)
            CHECK(ib[i * NC + j] == v_rows((long)peer * NR + i, j), "rows[%ld][%d] = %d",
                  (long)peer * NR + i, j, ib[i * NC + j]);
    free(ib);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);

    /* cols: the whole extended dataset on every rank */
    d = H5Dopen2(f, "cols", H5P_DEFAULT);
    H5OK(d);
    fs = H5Dget_space(d);
    hsize_t dims[2];
    CHECK(H5Sget_simple_extent_dims(fs, dims, NULL) == 2, "cols is not 2-D");
    CHECK(dims[0] == 2 * CR && dims[1] == (hsize_t)size * CPR, "cols is %llux%llu",
          (unsigned long long)dims[0], (unsigned long long)dims[1]);
    double *db = malloc(sizeof(double) * dims[0] * dims[1]);
    H5OK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, coll, db));
    for (hsize_t i = 0; i < dims[0]; i++)
        for (hsize_t j = 0; j < dims[1]; j++)
            CHECK(db[i * dims[1] + j] == v_cols((long)i, (long)j), "cols[%llu][%llu] = %g",
                  (unsigned long long)i, (unsigned long long)j, db[i * dims[1] + j]);
    free(db);
    H5Sclose(fs);
    H5Dclose(d);

    /* every: the peer's strided elements */
    d = H5Dopen2(f, "every", H5P_DEFAULT);
    H5OK(d);
    fs = H5Dget_space(d);
    hsize_t es = (hsize_t)peer, estride = (hsize_t)size, ecount = EPR;
    H5OK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &es, &estride, &ecount, NULL));
    ms = H5Screate_simple(1, &ecount, NULL);
    long *lb = malloc(sizeof(long) * EPR);
    H5OK(H5Dread(d, H5T_NATIVE_LONG, ms, fs, coll, lb));
    for (int k = 0; k < EPR; k++)
        CHECK(lb[k] == v_every((long)k * size + peer), "every[%ld] = %ld", (long)k * size + peer,
              lb[k]);
    free(lb);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);

    hid_t a = H5Aopen_by_name(f, "meta", "nprocs", H5P_DEFAULT, H5P_DEFAULT);
    H5OK(a);
    int np = -1;
    H5OK(H5Aread(a, H5T_NATIVE_INT, &np));
    CHECK(np == size, "attribute nprocs = %d", np);
    H5Aclose(a);

    H5Pclose(coll);
    H5OK(H5Fclose(f));
    H5Pclose(fapl);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc == 2, "usage: hdf5_mpich DIR");
    char path[4096];
    snprintf(path, sizeof(path), "%s/hdf5_mpich_np%d.h5", argv[1], size);

    write_file(path);
    MPI_Barrier(MPI_COMM_WORLD);
    read_file(path);

    /* rank 0 reads it again through HDF5's own POSIX driver, without MPI-IO:
     * what the views put in the file is where HDF5 expects it */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        H5OK(f);
        hsize_t nr = (hsize_t)size * NR, nc = (hsize_t)size * CPR;
        int *ib = malloc(sizeof(int) * nr * NC);
        hid_t d = H5Dopen2(f, "rows", H5P_DEFAULT);
        H5OK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ib));
        for (hsize_t i = 0; i < nr; i++)
            for (int j = 0; j < NC; j++)
                CHECK(ib[i * NC + j] == v_rows((long)i, j), "serial rows[%llu][%d] = %d",
                      (unsigned long long)i, j, ib[i * NC + j]);
        H5Dclose(d);
        free(ib);
        double *db = malloc(sizeof(double) * 2 * CR * nc);
        d = H5Dopen2(f, "cols", H5P_DEFAULT);
        H5OK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, db));
        for (hsize_t i = 0; i < 2 * CR; i++)
            for (hsize_t j = 0; j < nc; j++)
                CHECK(db[i * nc + j] == v_cols((long)i, (long)j), "serial cols[%llu][%llu] = %g",
                      (unsigned long long)i, (unsigned long long)j, db[i * nc + j]);
        H5Dclose(d);
        free(db);
        long *lb = malloc(sizeof(long) * size * EPR);
        d = H5Dopen2(f, "every", H5P_DEFAULT);
        H5OK(H5Dread(d, H5T_NATIVE_LONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, lb));
        for (long k = 0; k < (long)size * EPR; k++)
            CHECK(lb[k] == v_every(k), "serial every[%ld] = %ld", k, lb[k]);
        H5Dclose(d);
        free(lb);
        H5Fclose(f);
        remove(path);
        printf("PASS hdf5_mpich np=%d\n", size);
    }
    MPI_Finalize();
    return 0;
}
