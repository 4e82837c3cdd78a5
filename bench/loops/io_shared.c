/* The shared file pointer's calls, timed and checked: for each record size,
 * every rank writes CALLS records with MPI_File_write_shared, then reads
 * them back with MPI_File_read_shared, then writes and reads as many with
 * MPI_File_write_ordered / MPI_File_read_ordered, then asks
 * MPI_File_get_position_shared CALLS times. Prints per call and size
 * "name bytes us wrong": the slowest rank's time per call (µs) and the
 * records found wrong (written other than once or torn, read by no rank or
 * by two, read out of rank order, a position that does not match).
 *
 *   mpiexec -n 2 io_shared CALLS SIZE... (the file in $PX_BENCH_DIR, else /dev/shm)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int me, np;

/* Byte i of record (rank, seq). */
static unsigned char rec_byte(int rank, int seq, int i)
{
    return (unsigned char)(rank * 131 + seq * 7 + i);
}

/* Fills a record; its first 8 bytes say whose it is. */
static void rec_fill(unsigned char *p, int size, int rank, int seq)
{
    for (int i = 0; i < size; i++)
        p[i] = rec_byte(rank, seq, i);
    if (size >= 8) {
        int32_t id[2] = {rank, seq};
        memcpy(p, id, 8);
    }
}

/* Whose record p holds (-1: torn or foreign). */
static int rec_who(const unsigned char *p, int size, int calls, int *seq_p)
{
    int32_t id[2];
    memcpy(id, p, 8);
    if (id[0] < 0 || id[0] >= np || id[1] < 0 || id[1] >= calls)
        return -1;
    for (int i = 8; i < size; i++)
        if (p[i] != rec_byte(id[0], id[1], i))
            return -1;
    *seq_p = id[1];
    return id[0];
}

static double t_max(double t0, int calls)
{
    double t = (MPI_Wtime() - t0) / calls * 1e6, m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static void report(const char *name, int size, double us, long wrong)
{
    long all;
    MPI_Reduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("%s %d %.3f %ld\n", name, size, us, all);
}

static void one_size(const char *path, int calls, int size)
{
    MPI_File fh;
    MPI_Status st;
    long total = (long)np * calls;
    unsigned char *rec = malloc((size_t)size);
    int *seen = calloc((size_t)total, sizeof(int)), *all = malloc(sizeof(int) * (size_t)total);
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                  MPI_INFO_NULL, &fh);

    /* write_shared, then every record checked once in the file */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < calls; i++) {
        rec_fill(rec, size, me, i);
        MPI_File_write_shared(fh, rec, size, MPI_BYTE, &st);
    }
    double us = t_max(t0, calls);
    long wrong = 0;
    for (long j = me; j < total; j += np) {
        int seq, who;
        MPI_File_read_at(fh, (MPI_Offset)j * size, rec, size, MPI_BYTE, &st);
        if ((who = rec_who(rec, size, calls, &seq)) < 0)
            wrong++;
        else
            seen[(long)who * calls + seq]++;
    }
    MPI_Allreduce(seen, all, (int)total, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (long j = me; j < total; j += np)
        wrong += all[j] != 1;
    report("write_shared", size, us, wrong);

    /* read_shared: every record to exactly one rank */
    MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    memset(seen, 0, sizeof(int) * (size_t)total);
    wrong = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < calls; i++) {
        int seq, who;
        MPI_File_read_shared(fh, rec, size, MPI_BYTE, &st);
        if ((who = rec_who(rec, size, calls, &seq)) < 0)
            wrong++;
        else
            seen[(long)who * calls + seq]++;
    }
    us = t_max(t0, calls);
    MPI_Allreduce(seen, all, (int)total, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (long j = me; j < total; j += np)
        wrong += all[j] != 1;
    report("read_shared", size, us, wrong);

    /* write_ordered, read_ordered: rank order within each call */
    MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < calls; i++) {
        rec_fill(rec, size, me, i);
        MPI_File_write_ordered(fh, rec, size, MPI_BYTE, &st);
    }
    report("write_ordered", size, t_max(t0, calls), 0);
    MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    wrong = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < calls; i++) {
        int seq;
        MPI_File_read_ordered(fh, rec, size, MPI_BYTE, &st);
        wrong += rec_who(rec, size, calls, &seq) != me || seq != i;
    }
    report("read_ordered", size, t_max(t0, calls), wrong);

    /* get_position_shared: where read_ordered left it */
    wrong = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < calls; i++) {
        MPI_Offset pos;
        MPI_File_get_position_shared(fh, &pos);
        wrong += pos != (MPI_Offset)total * size;
    }
    report("get_position_shared", size, t_max(t0, calls), wrong);

    MPI_File_close(&fh);
    free(rec);
    free(seen);
    free(all);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int calls = argc > 1 ? atoi(argv[1]) : 10000;
    const char *dir = getenv("PX_BENCH_DIR") ? getenv("PX_BENCH_DIR") : "/dev/shm";
    char path[4096];
    int pid = me == 0 ? (int)getpid() : 0;
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof(path), "%s/io_shared.%d", dir, pid);
    for (int a = 2; a < argc; a++) {
        int size = atoi(argv[a]);
        one_size(path, calls, size < 8 ? 8 : size);
    }
    MPI_Finalize();
    return 0;
}
