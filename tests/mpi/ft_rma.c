/* A stream of one-sided epochs between the ranks, for rail faults.
 *
 * Every epoch (fence to fence) each rank puts a numbered, checksummable
 * block (1 KiB, 48 KiB or 1 MiB by turn) into its right neighbour's
 * window, gets a block its left neighbour wrote at the start, and
 * accumulates 1 and the epoch number into counters of every rank. After
 * each fence every rank checks what arrived: the put block (corrupt when
 * wrong), the get block, and the counters, which must equal the number of
 * epochs and the sum of their numbers exactly (an accumulate applied twice
 * is "dup", one missing "lost").
 *
 *   ft_rma --seconds S [--fault-at T]
 *
 * Output: "FT_START epoch=<wall clock>" (rank 0, when the epochs start),
 * one JSON line {"ok", "lost", "dup", "corrupt", "epochs", "bytes",
 * "max_stall_s", "stall_after_fault_s"} (stall: the longest time between
 * two completed epochs; after the fault: from T on), and
 * "PASS ft_rma np=<N>: ..." when all is well. Also a regular test at 2
 * ranks (a few seconds, no fault). */
#include "px_test.h"

#include <sys/time.h>

enum { BLK = 1 << 20 };
static const int sizes[] = {1024, 48 * 1024, BLK};

static double wall(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec + tv.tv_usec / 1e6;
}

static unsigned char pat(int rank, int epoch, size_t i)
{
    return (unsigned char)(px_mix64(((uint64_t)rank << 40) ^ ((uint64_t)epoch << 20) ^ i) >> 7);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "ft_rma");
    double seconds = 3, fault_at = -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--fault-at"))
            fault_at = atof(argv[i + 1]);
    }
    int me = px_test_rank, np = px_test_size, right = (me + 1) % np, left = (me + np - 1) % np;
    /* window: [0, BLK) put block, [BLK, 2 BLK) get block, then counters */
    MPI_Aint wbytes = 2 * (MPI_Aint)BLK + 16;
    unsigned char *mem;
    MPI_Win win;
    PX_MPI(MPI_Win_allocate(wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, (size_t)wbytes);
    for (size_t i = 0; i < BLK; i++)
        mem[BLK + i] = pat(me, -1, i);
    int64_t *cnt = (int64_t *)(mem + 2 * BLK);
    unsigned char *src = malloc(BLK), *got = malloc(BLK);
    uint64_t lost = 0, dup = 0, corrupt = 0, bytes = 0;
    double t0 = 0, last, max_stall = 0, stall_after = 0;
    int stop = 0, epoch = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = wall();
    MPI_Bcast(&t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (me == 0) {
        printf("FT_START epoch=%.6f np=%d\n", t0, np);
        fflush(stdout);
    }
    last = t0;
    PX_MPI(MPI_Win_fence(0, win));
    while (!stop) {
        int sz = sizes[epoch % 3];
        for (int i = 0; i < sz; i++)
            src[i] = pat(me, epoch, (size_t)i);
        static const int64_t one = 1;
        static int64_t e;
        e = epoch;
        PX_MPI(MPI_Put(src, sz, MPI_BYTE, right, 0, sz, MPI_BYTE, win));
        PX_MPI(MPI_Get(got, sz, MPI_BYTE, left, BLK, sz, MPI_BYTE, win));
        for (int t = 0; t < np; t++) {
            PX_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, t, 2 * BLK, 1, MPI_INT64_T, MPI_SUM, win));
            PX_MPI(
                MPI_Accumulate(&e, 1, MPI_INT64_T, t, 2 * BLK + 8, 1, MPI_INT64_T, MPI_SUM, win));
        }
        PX_MPI(MPI_Win_fence(0, win));
        epoch++;
        bytes += 2 * (uint64_t)sz;
        for (int i = 0; i < sz; i++) {
            if (mem[i] != pat(left, epoch - 1, (size_t)i) || got[i] != pat(left, -1, (size_t)i)) {
                corrupt++;
                break;
            }
        }
        int64_t want_n = (int64_t)epoch * np, want_s = (int64_t)epoch * (epoch - 1) / 2 * np;
        if (cnt[0] != want_n || cnt[1] != want_s) {
            if (cnt[0] > want_n || cnt[1] > want_s)
                dup++;
            else
                lost++;
        }
        double now = wall();
        if (now - last > max_stall)
            max_stall = now - last;
        if (fault_at >= 0 && now - t0 >= fault_at && now - last > stall_after)
            stall_after = now - last;
        last = now;
        /* every rank agrees on when to stop (no operation in flight then) */
        int done = now - t0 >= seconds;
        MPI_Allreduce(&done, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        /* the next epoch writes the put block again: all have checked it */
        PX_MPI(MPI_Win_fence(0, win));
    }
    uint64_t mine[3] = {lost, dup, corrupt}, tot[3];
    MPI_Reduce(mine, tot, 3, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    double stalls[2] = {max_stall, stall_after}, smax[2];
    MPI_Reduce(stalls, smax, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int ok = 1;
    if (me == 0) {
        ok = !tot[0] && !tot[1] && !tot[2];
        printf("{\"ok\":%s,\"lost\":%llu,\"dup\":%llu,\"corrupt\":%llu,\"epochs\":%d,"
               "\"bytes\":%llu,\"max_stall_s\":%.3f,\"stall_after_fault_s\":%.3f}\n",
               ok ? "true" : "false", (unsigned long long)tot[0], (unsigned long long)tot[1],
               (unsigned long long)tot[2], epoch, (unsigned long long)bytes, smax[0], smax[1]);
        fflush(stdout);
    }
    PX_CHECK(!lost && !dup && !corrupt, "lost %llu dup %llu corrupt %llu", (unsigned long long)lost,
             (unsigned long long)dup, (unsigned long long)corrupt);
    PX_MPI(MPI_Win_free(&win));
    free(src);
    free(got);
    return px_test_finish("%d one-sided epochs checked", epoch);
}
