/* Memory and connections per process for an all-to-all job.
 *
 * Every rank runs MPI_Alltoall of SIZE bytes per pair ITERS times (after a
 * warm-up that makes every pair talk), then reports, gathered on rank 0:
 * the mean and largest resident set (VmRSS, and VmHWM its peak), the heap
 * the process has in use (glibc's mallinfo2, less the benchmark's own two
 * buffers) after MPI_Init and at the end, the socket
 * descriptors each process holds, the host's kernel socket memory from
 * /proc/net/sockstat (all of this job's sockets: one job on the host), the
 * host's socket slab memory (bench/scale.py subtracts what it was before the
 * job), and the time per alltoall.
 *
 * usage: alltoall_mem [SIZE [ITERS]] */
#include <mpi.h>
#include <dirent.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, key, n) && line[n] == ':')
            v = atol(line + n + 1);
    if (f)
        fclose(f);
    return v;
}

static long sockets_held(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char path[64], target[128];
    long n = 0;
    while (d && (e = readdir(d))) {
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(path, target, sizeof(target) - 1);
        if (k > 0) {
            target[k] = 0;
            n += !strncmp(target, "socket:", 7);
        }
    }
    if (d)
        closedir(d);
    return n;
}

/* kernel memory (pages) of TCP and UDP sockets on the host */
static void sockstat(long *tcp_pages, long *udp_pages)
{
    FILE *f = fopen("/proc/net/sockstat", "r");
    char line[256];
    *tcp_pages = *udp_pages = -1;
    while (f && fgets(line, sizeof(line), f)) {
        char *m = strstr(line, " mem ");
        if (!m)
            continue;
        if (!strncmp(line, "TCP:", 4))
            *tcp_pages = atol(m + 5);
        else if (!strncmp(line, "UDP:", 4))
            *udp_pages = atol(m + 5);
    }
    if (f)
        fclose(f);
}

/* kernel memory (KB) of the slab caches behind sockets: TCP and UDP
 * sockets and their inodes (host-wide; readable by root) */
static long slab_kb(void)
{
    FILE *f = fopen("/proc/slabinfo", "r");
    char line[512], name[64];
    long active, total, objsize, kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "%63s %ld %ld %ld", name, &active, &total, &objsize) == 4 &&
            (!strcmp(name, "TCP") || !strcmp(name, "UDP") || !strcmp(name, "sock_inode_cache")))
            kb = (kb < 0 ? 0 : kb) + active * objsize / 1024;
    if (f)
        fclose(f);
    return kb;
}

/* bytes of heap in use: small blocks and mmap-ed large ones */
static long heap_bytes(void)
{
    struct mallinfo2 m = mallinfo2();
    return (long)(m.uordblks + m.hblkhd);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bytes = argc > 1 ? atoi(argv[1]) : 1024;
    int iters = argc > 2 ? atoi(argv[2]) : 50;
    long heap_init = heap_bytes();
    char *sb = malloc((size_t)bytes * size), *rb = malloc((size_t)bytes * size);
    for (size_t i = 0; i < (size_t)bytes * size; i++)
        sb[i] = (char)(rank + i);
    for (int i = 0; i < 3; i++)
        MPI_Alltoall(sb, bytes, MPI_BYTE, rb, bytes, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Alltoall(sb, bytes, MPI_BYTE, rb, bytes, MPI_BYTE, MPI_COMM_WORLD);
    double t = (MPI_Wtime() - t0) / iters, tmax;
    int bad = 0;
    for (int p = 0; p < size; p++)
        for (int i = 0; i < bytes; i++)
            bad |= rb[(size_t)p * bytes + i] != (char)(p + (size_t)rank * bytes + i);
    long mine[5] = {status_kb("VmRSS"), status_kb("VmHWM"), sockets_held(), heap_init / 1024,
                    (heap_bytes() - 2 * (long)bytes * size) / 1024};
    long *all = rank == 0 ? malloc(sizeof(mine) * size) : NULL;
    MPI_Gather(mine, 5, MPI_LONG, all, 5, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        long tcp_pages, udp_pages;
        sockstat(&tcp_pages, &udp_pages); /* every rank's sockets are still open */
        long slab = slab_kb();
        double rss = 0, hwm = 0, socks = 0, heap0 = 0, heap1 = 0;
        long rss_max = 0;
        for (int p = 0; p < size; p++) {
            rss += all[5 * p];
            hwm += all[5 * p + 1];
            socks += all[5 * p + 2];
            heap0 += all[5 * p + 3];
            heap1 += all[5 * p + 4];
            if (all[5 * p] > rss_max)
                rss_max = all[5 * p];
        }
        long page_kb = sysconf(_SC_PAGESIZE) / 1024;
        printf("ranks %d bytes %d rss_kb %.0f rss_max_kb %ld hwm_kb %.0f heap_init_kb %.0f "
               "heap_kb %.0f sockets %.1f "
               "kernel_tcp_kb %.0f kernel_udp_kb %.0f host_sock_slab_kb %ld alltoall_us %.1f %s\n",
               size, bytes, rss / size, rss_max, hwm / size, heap0 / size, heap1 / size,
               socks / size, (double)tcp_pages * page_kb / size, (double)udp_pages * page_kb / size,
               slab, tmax * 1e6, anybad ? "WRONG" : "ok");
        free(all);
    }
    free(sb);
    free(rb);
    MPI_Finalize();
    return anybad;
}
