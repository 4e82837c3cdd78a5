/* Atomic mode: in every round all ranks write the same noncontiguous
 * region at once (64 blocks of 1 KB with 1 KB gaps, through a strided
 * view, written by data sieving in 4 KB windows), each rank its own byte
 * value; with MPI_File_set_atomicity(1) the region afterwards holds one
 * writer's bytes throughout, never a mix, the gaps stay zero, and a read
 * made while the others write sees one state throughout too. */
#include "io_test.h"

enum { BLK = 1024, NBLK = 64, ROUNDS = 6 };

static int uniform(const unsigned char *b, int n, unsigned char *v)
{
    for (int i = 1; i < n; i++)
        if (b[i] != b[0])
            return 0;
    *v = b[0];
    return 1;
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "io_atomic");
    int me = px_test_rank, np = px_test_size;
    char path[512];
    io_path(path, sizeof(path), "dat");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ind_wr_buffer_size", "4096");
    MPI_Info_set(info, "ind_rd_buffer_size", "4096");
    MPI_Info_set(info, "romio_ds_write", "enable");
    MPI_File fh;
    MPI_Status st;
    PX_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    PX_MPI(MPI_File_set_atomicity(fh, 1));
    int flag = 0;
    PX_MPI(MPI_File_get_atomicity(fh, &flag));
    PX_CHECK(flag == 1, "atomicity %d", flag);
    MPI_Datatype vec;
    MPI_Type_vector(NBLK, BLK, 2 * BLK, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    PX_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, vec, "native", MPI_INFO_NULL));
    unsigned char *w = malloc(BLK * NBLK), *r = malloc(BLK * NBLK), *raw = malloc(2 * BLK * NBLK);
    int mixed_reads = 0, reads = 0;
    for (int round = 0; round < ROUNDS; round++) {
        memset(w, 1 + round * 16 + me, BLK * NBLK);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int rep = 0; rep < 3; rep++) {
            PX_MPI(MPI_File_write_at(fh, 0, w, BLK * NBLK, MPI_BYTE, &st));
            if (me == 0 && np > 1) {
                /* while the others write */
                PX_MPI(MPI_File_read_at(fh, 0, r, BLK * NBLK, MPI_BYTE, &st));
                unsigned char v;
                int n = io_count(&st, MPI_BYTE);
                reads++;
                if (n > 0 && !uniform(r, n, &v))
                    mixed_reads++;
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        PX_MPI(MPI_File_read_at(fh, 0, r, BLK * NBLK, MPI_BYTE, &st));
        unsigned char v = 0;
        PX_CHECK(io_count(&st, MPI_BYTE) == BLK * NBLK, "round %d: read %d bytes", round,
                 io_count(&st, MPI_BYTE));
        int ok = uniform(r, BLK * NBLK, &v);
        int writer = v - 1 - round * 16;
        PX_CHECK(ok && writer >= 0 && writer < np, "round %d: the region mixes writers (%s)", round,
                 ok ? "foreign value" : "not uniform");
        MPI_Barrier(MPI_COMM_WORLD);
    }
    PX_CHECK(mixed_reads == 0, "%d of %d reads during writes saw a mix", mixed_reads, reads);
    /* the gaps between the blocks were never written */
    PX_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    PX_MPI(MPI_File_read_at(fh, 0, raw, 2 * BLK * NBLK, MPI_BYTE, &st));
    int gaps_ok = 1;
    for (int b = 0; b < NBLK - 1; b++)
        for (int i = 0; i < BLK; i++)
            gaps_ok &= raw[(2 * b + 1) * BLK + i] == 0;
    PX_CHECK(gaps_ok, "a gap between the blocks was written");
    free(w);
    free(r);
    free(raw);
    MPI_Type_free(&vec);
    PX_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    return px_test_finish("%d rounds of overlapping writes, each region from one writer", ROUNDS);
}
