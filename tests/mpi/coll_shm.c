/* Collectives on one machine through a shared segment: many calls in a row
 * whose ranks arrive skewed (a slot is only rewritten once everyone has
 * read it), rooted ones back to back (writers run ahead), sizes on both
 * sides of the slot size, a non-commutative operation (combined in rank
 * order), blocking calls between the start and the end of a nonblocking
 * one, and, with Plexus, that the segment exists exactly while its
 * communicator does and never stays in /dev/shm. */
#include "px_test.h"

#include <dirent.h>
#include <unistd.h>

#define ITERS 300

static int rank, size;

static unsigned val(int it, int r, int i) { return (unsigned)(it * 7919 + r * 104729 + i * 31); }

static void skew(int it)
{
    /* one rank late now and then, a different one each time */
    if (it % 17 == 0 && rank == (it / 17) % size)
        usleep(200);
}

static void check_allreduce(int it, int count, MPI_Comm comm)
{
    unsigned *s = malloc(sizeof(unsigned) * (size_t)(count ? count : 1));
    unsigned *r = malloc(sizeof(unsigned) * (size_t)(count ? count : 1));
    for (int i = 0; i < count; i++)
        s[i] = val(it, rank, i);
    skew(it);
    if (it % 4 == 1) { /* in place */
        memcpy(r, s, sizeof(unsigned) * (size_t)count);
        MPI_Allreduce(MPI_IN_PLACE, r, count, MPI_UNSIGNED, MPI_SUM, comm);
    } else {
        MPI_Allreduce(s, r, count, MPI_UNSIGNED, MPI_SUM, comm);
    }
    int bad = 0;
    for (int i = 0; i < count && !bad; i++) {
        unsigned e = 0;
        for (int q = 0; q < size; q++)
            e += val(it, q, i);
        if (r[i] != e) {
            PX_CHECK(0, "it %d Allreduce count %d: [%d] = %u, expected %u", it, count, i, r[i], e);
            bad = 1;
        }
    }
    free(s);
    free(r);
}

/* rotating roots: a root may run ahead of the readers of its last slot */
static void check_bcast(int it, int count)
{
    unsigned *b = malloc(sizeof(unsigned) * (size_t)(count ? count : 1));
    int root = it % size;
    for (int i = 0; i < count; i++)
        b[i] = rank == root ? val(it, root, i) : 0;
    skew(it + 3);
    MPI_Bcast(b, count, MPI_UNSIGNED, root, MPI_COMM_WORLD);
    for (int i = 0; i < count; i++)
        if (b[i] != val(it, root, i)) {
            PX_CHECK(0, "it %d Bcast count %d root %d: [%d] = %u, expected %u", it, count, root, i,
                     b[i], val(it, root, i));
            break;
        }
    free(b);
}

static void check_gathers(int it, int count)
{
    size_t n = (size_t)count * (size_t)size;
    unsigned *s = malloc(sizeof(unsigned) * (n ? n : 1));
    unsigned *r = malloc(sizeof(unsigned) * (n ? n : 1));
    for (int i = 0; i < count; i++)
        s[i] = val(it, rank, i);
    skew(it + 1);
    MPI_Allgather(s, count, MPI_UNSIGNED, r, count, MPI_UNSIGNED, MPI_COMM_WORLD);
    for (int q = 0, bad = 0; q < size && !bad; q++)
        for (int i = 0; i < count && !bad; i++)
            if (r[(size_t)q * count + i] != val(it, q, i)) {
                PX_CHECK(0, "it %d Allgather count %d: block %d [%d] = %u, expected %u", it, count,
                         q, i, r[(size_t)q * count + i], val(it, q, i));
                bad = 1;
            }
    /* alltoall: block for q holds val(it, rank * size + q, i) */
    for (int q = 0; q < size; q++)
        for (int i = 0; i < count; i++)
            s[(size_t)q * count + i] = val(it, rank * size + q, i);
    skew(it + 2);
    MPI_Alltoall(s, count, MPI_UNSIGNED, r, count, MPI_UNSIGNED, MPI_COMM_WORLD);
    for (int q = 0, bad = 0; q < size && !bad; q++)
        for (int i = 0; i < count && !bad; i++)
            if (r[(size_t)q * count + i] != val(it, q * size + rank, i)) {
                PX_CHECK(0, "it %d Alltoall count %d: block %d [%d] = %u, expected %u", it, count,
                         q, i, r[(size_t)q * count + i], val(it, q * size + rank, i));
                bad = 1;
            }
    free(s);
    free(r);
}

/* Rooted calls back to back, no barrier, rotating roots, sizes from one
 * element to a few slot units and beyond: a gather's senders and a
 * scatter's root run ahead of their readers by as many calls as their
 * data's place in the segment allows, and the ring of places wraps. */
static void check_rooted(int it)
{
    static const int bc[] = {1, 3000, 257, 60, 7000, 9000, 20, 33000, 2, 100, 8192};
    int count = bc[it % 11], root = (it / 2) % size;
    size_t n = (size_t)count * (size_t)size;
    unsigned *all = malloc(sizeof(unsigned) * n), *own = malloc(sizeof(unsigned) * (size_t)count);
    int *cnt = malloc(sizeof(int) * (size_t)size), *dsp = malloc(sizeof(int) * (size_t)size);
    for (int q = 0, at = 0; q < size; q++) { /* gatherv, scatterv: block q has count - q items */
        cnt[q] = count > q ? count - q : 0;
        dsp[q] = at;
        at += cnt[q];
    }
    for (int i = 0; i < count; i++)
        own[i] = val(it, rank, i);
    skew(it + 5);
    MPI_Gather(own, count, MPI_UNSIGNED, all, count, MPI_UNSIGNED, root, MPI_COMM_WORLD);
    for (size_t i = 0; rank == root && i < n; i++)
        if (all[i] != val(it, (int)(i / (size_t)count), (int)(i % (size_t)count))) {
            PX_CHECK(0, "it %d Gather count %d root %d: [%zu] = %u", it, count, root, i, all[i]);
            break;
        }
    MPI_Gatherv(own, cnt[rank], MPI_UNSIGNED, all, cnt, dsp, MPI_UNSIGNED, root, MPI_COMM_WORLD);
    for (int q = 0, bad = 0; rank == root && q < size && !bad; q++)
        for (int i = 0; i < cnt[q] && !bad; i++)
            if (all[dsp[q] + i] != val(it, q, i)) {
                PX_CHECK(0, "it %d Gatherv count %d root %d: block %d [%d] = %u", it, count, root,
                         q, i, all[dsp[q] + i]);
                bad = 1;
            }
    /* scatter: block q of the root holds val(it + 1, q, i); the readers
     * late now and then, so that the root writes the next call's data
     * (the scatterv's, right after it) before they have read this one's */
    for (size_t i = 0; rank == root && i < n; i++)
        all[i] = val(it + 1, (int)(i / (size_t)count), (int)(i % (size_t)count));
    if (it % 4 == 3 && rank != root)
        usleep(100);
    MPI_Scatter(all, count, MPI_UNSIGNED, own, count, MPI_UNSIGNED, root, MPI_COMM_WORLD);
    for (int i = 0; i < count; i++)
        if (own[i] != val(it + 1, rank, i)) {
            PX_CHECK(0, "it %d Scatter count %d root %d: [%d] = %u", it, count, root, i, own[i]);
            break;
        }
    for (int q = 0; rank == root && q < size; q++)
        for (int i = 0; i < cnt[q]; i++)
            all[dsp[q] + i] = val(it + 2, q, i);
    MPI_Scatterv(all, cnt, dsp, MPI_UNSIGNED, own, cnt[rank], MPI_UNSIGNED, root, MPI_COMM_WORLD);
    for (int i = 0; i < cnt[rank]; i++)
        if (own[i] != val(it + 2, rank, i)) {
            PX_CHECK(0, "it %d Scatterv count %d root %d: [%d] = %u", it, count, root, i, own[i]);
            break;
        }
    for (int i = 0; i < count; i++)
        own[i] = val(it + 3, rank, i);
    MPI_Reduce(own, all, count, MPI_UNSIGNED, MPI_SUM, root, MPI_COMM_WORLD);
    for (int i = 0; rank == root && i < count; i++) {
        unsigned e = 0;
        for (int q = 0; q < size; q++)
            e += val(it + 3, q, i);
        if (all[i] != e) {
            PX_CHECK(0, "it %d Reduce count %d root %d: [%d] = %u, expected %u", it, count, root, i,
                     all[i], e);
            break;
        }
    }
    /* a burst of reductions to a root that comes late, each followed by
     * a broadcast from the next rank: the others write further ahead than
     * the ring holds and wait for the late root there, and, as only every
     * other call of theirs writes, a place they take after the ring's
     * length of calls is not the one they took before */
    if (it % 10 == 0) {
        enum { BURST = 3 * 8 + 1 };
        unsigned in[BURST], out[BURST], bc[BURST];
        int from = (root + 1) % size;
        if (rank == root)
            usleep(300);
        for (int b = 0; b < BURST; b++) {
            in[b] = val(it + b, rank, 0);
            MPI_Reduce(&in[b], &out[b], 1, MPI_UNSIGNED, MPI_SUM, root, MPI_COMM_WORLD);
            bc[b] = rank == from ? val(it + b, from, 1) : 0;
            MPI_Bcast(&bc[b], 1, MPI_UNSIGNED, from, MPI_COMM_WORLD);
        }
        for (int b = 0; b < BURST; b++) {
            unsigned e = 0;
            for (int q = 0; q < size; q++)
                e += val(it + b, q, 0);
            if ((rank == root && out[b] != e) || bc[b] != val(it + b, from, 1)) {
                PX_CHECK(0, "it %d call %d of a burst, root %d: reduce %u (expected %u), bcast %u",
                         it, b, root, rank == root ? out[b] : e, e, bc[b]);
                break;
            }
        }
    }
    free(all);
    free(own);
    free(cnt);
    free(dsp);
}

/* reductions combine in rank order, also through shared slots */
static void check_noncommutative(int it, MPI_Op op, MPI_Datatype affty)
{
    /* small, split among the ranks, several chunks */
    enum { NMAX = 20001 };
    static px_aff_t s[NMAX], r[NMAX];
    const int N = it % 3 == 0 ? 5 : it % 3 == 1 ? 1501 : NMAX;
    for (int i = 0; i < N; i++)
        s[i] = px_aff_val(rank + it, i);
    int root = it % size;
    MPI_Reduce(s, r, N, affty, op, root, MPI_COMM_WORLD);
    for (int i = 0; i < N && rank == root; i++) {
        px_aff_t e = px_aff_fold(it, it + size - 1, i);
        PX_CHECK(r[i].m == e.m && r[i].c == e.c, "it %d Reduce [%d] = (%u,%u), expected (%u,%u)",
                 it, i, r[i].m, r[i].c, e.m, e.c);
    }
    MPI_Allreduce(s, r, N, affty, op, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++) {
        px_aff_t e = px_aff_fold(it, it + size - 1, i);
        PX_CHECK(r[i].m == e.m && r[i].c == e.c,
                 "it %d Allreduce [%d] = (%u,%u), expected "
                 "(%u,%u)",
                 it, i, r[i].m, r[i].c, e.m, e.c);
    }
}

/* 12-byte elements: a slot does not hold a whole number of them */
static void sum3(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < 3 * *len; i++)
        ((unsigned *)inout)[i] += ((unsigned *)in)[i];
}

static void check_triples(int it, MPI_Op op, MPI_Datatype t3)
{
    enum { N = 7001 };
    static unsigned s[3 * N], r[3 * N];
    for (int i = 0; i < 3 * N; i++)
        s[i] = val(it, rank, i);
    skew(it);
    MPI_Allreduce(s, r, N, t3, op, MPI_COMM_WORLD);
    for (int i = 0; i < 3 * N; i++) {
        unsigned e = 0;
        for (int q = 0; q < size; q++)
            e += val(it, q, i);
        if (r[i] != e) {
            PX_CHECK(0, "it %d Allreduce of 12-byte elements: [%d] = %u, expected %u", it, i, r[i],
                     e);
            break;
        }
    }
}

/* Mappings of Plexus collective segments in this process; sets *job to the
 * job id in their names. */
static int count_segments(char *job, size_t jobsz)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof(line), f)) {
        char *p = strstr(line, "/plexus-");
        if (p && strlen(p) > 25 && p[24] == '-' && p[25] == 'c') {
            n++;
            snprintf(job, jobsz, "%.16s", p + 8);
        }
    }
    if (f)
        fclose(f);
    return n;
}

static int count_dev_shm(const char *job)
{
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "plexus-%s-c", job);
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix)))
            n++;
    if (d)
        closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    px_test_begin("coll_shm");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* allreduce: whole vector per rank, split among the ranks (from 8 KB),
     * exactly one 64 KB chunk, two chunks, many chunks; counts not a
     * multiple of the ranks */
    static const int counts[] = {1, 7, 1000, 16384, 16385, 0, 2049, 90001};
    /* bcast: on both sides of the 128 KB slot */
    static const int bcounts[] = {1, 7, 1000, 16385, 32768, 32769, 0};
    for (int it = 0; it < ITERS; it++) {
        check_allreduce(it, counts[it % 8], MPI_COMM_WORLD);
        check_bcast(it, bcounts[(it + 1) % 7]);
        check_bcast(it + 1, bcounts[(it + 2) % 7]);
        /* alltoall blocks up to 128 KB / 8 ranks, and beyond (4 ranks
         * and more: 32 KB + 4 B blocks) */
        check_gathers(it, it % 5 == 4 ? (it % 10 == 4 ? 4096 : 8193) : 1 + it % 300);
        if (it % 3 == 0)
            MPI_Barrier(MPI_COMM_WORLD);
    }

    for (int it = 0; it < ITERS; it++)
        check_rooted(it);

    MPI_Op aff_op;
    MPI_Datatype affty;
    MPI_Type_contiguous(2, MPI_UNSIGNED, &affty);
    MPI_Type_commit(&affty);
    MPI_Op_create(px_aff_fn, 0, &aff_op);
    for (int it = 0; it < 50; it++)
        check_noncommutative(it, aff_op, affty);
    MPI_Op sum3_op;
    MPI_Datatype t3;
    MPI_Type_contiguous(3, MPI_UNSIGNED, &t3);
    MPI_Type_commit(&t3);
    MPI_Op_create(sum3, 1, &sum3_op);
    for (int it = 0; it < 10; it++)
        check_triples(it, sum3_op, t3);
    MPI_Op_free(&sum3_op);
    MPI_Type_free(&t3);

    /* blocking calls while a nonblocking one on the same communicator is open */
    {
        int a = rank + 1, b = 0, c = rank, d = 0;
        MPI_Request req;
        MPI_Iallreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
        for (int i = 0; i < 10; i++) {
            MPI_Allreduce(&c, &d, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            PX_CHECK(d == size - 1, "Allreduce(MAX) during Iallreduce: %d", d);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        PX_CHECK(b == size * (size + 1) / 2, "Iallreduce: %d, expected %d", b,
                 size * (size + 1) / 2);
    }

    /* Plexus: a segment per communicator whose ranks share a machine, while
     * shared memory carries its messages; gone from /dev/shm once mapped,
     * unmapped when the communicator is freed. */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    if (strstr(lib, "Plexus")) {
        MPI_Comm node;
        int nsize;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &nsize);
        MPI_Comm_free(&node);
        const char *net = getenv("PX_NET"), *sz = getenv("PX_COLL_SHM_SIZE");
        int expect =
            size > 1 && nsize == size && (!net || strstr(net, "shm")) && !(sz && !strcmp(sz, "0"));
        char job[32] = "";
        MPI_Barrier(MPI_COMM_WORLD);
        int before = count_segments(job, sizeof(job));
        PX_CHECK(before == expect, "%d collective segments mapped on MPI_COMM_WORLD, expected %d",
                 before, expect);
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        check_allreduce(0, 3, dup);
        int with = count_segments(job, sizeof(job));
        PX_CHECK(with == before + expect, "%d segments after using a duplicate, expected %d", with,
                 before + expect);
        MPI_Barrier(MPI_COMM_WORLD);
        if (expect)
            PX_CHECK(count_dev_shm(job) == 0, "collective segments of job %s left in /dev/shm",
                     job);
        /* a freed communicator's segment stays mapped for the next one of
         * the same members, which takes it over; at most 4 are kept */
        MPI_Comm_free(&dup);
        int after = count_segments(job, sizeof(job));
        PX_CHECK(after == with, "%d segments after MPI_Comm_free, expected %d", after, with);
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        check_allreduce(1, 3, dup);
        int again = count_segments(job, sizeof(job));
        PX_CHECK(again == with, "%d segments after using a new duplicate, expected %d", again,
                 with);
        MPI_Comm dups[6];
        for (int i = 0; i < 6; i++) {
            MPI_Comm_dup(MPI_COMM_WORLD, &dups[i]);
            check_allreduce(2 + i, 3, dups[i]);
        }
        int many = count_segments(job, sizeof(job));
        PX_CHECK(many == before + 7 * expect, "%d segments with 7 duplicates in use, expected %d",
                 many, before + 7 * expect);
        for (int i = 0; i < 6; i++)
            MPI_Comm_free(&dups[i]);
        MPI_Comm_free(&dup);
        int kept = count_segments(job, sizeof(job));
        PX_CHECK(kept == before + 4 * expect, "%d segments with 7 duplicates freed, expected %d",
                 kept, before + 4 * expect);
    }

    MPI_Op_free(&aff_op);
    MPI_Type_free(&affty);
    return px_test_finish("%d rounds of allreduce/bcast/allgather/alltoall, %d of rooted calls",
                          ITERS, ITERS);
}
