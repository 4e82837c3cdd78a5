/* A known pattern for the topology profile (PX_PROFILE=topo), checked by
 * profile_test.py against the JSON rank 0 writes:
 *   ring:  every rank sends RING_MSGS messages of 1000 + rank bytes to
 *          the next rank (n > 1);
 *   big:   rank 0 sends one message of BIG bytes to rank n - 1 (n > 1);
 *   bcast: one MPI_Bcast of BCAST bytes from rank 0 (with
 *          PX_BCAST_ALGORITHM=binomial each other rank receives it once).
 * Mode "run" (the whole run is counted): ring and big only, since the
 * first collective on a communicator that spans nodes sends a few setup
 * messages of its own.
 * Mode "coll" (PX_PROFILE_SIGNAL=usr2): a broadcast (the setup), then
 * in the counted section one MPI_Scatter and one MPI_Gather of COLL_BLK
 * bytes per rank from rank 0, data checked.
 * Mode "signal" (PX_PROFILE_SIGNAL=usr2): a ring and a first collective
 * (its setup) before the counted section; in it the ring, the big message
 * and a broadcast; after it a barrier and a ring again, not counted. Each
 * rank signals itself around the section.
 *   topo_prof run|signal */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING_MSGS 3
#define BIG ((1 << 20) + 7)
#define BCAST 256
#define COLL_BLK 100

static int rank, size;

static void ring(void)
{
    if (size < 2)
        return;
    int len = 1000 + rank, rlen = 1000 + (rank + size - 1) % size;
    MPI_Request req[2 * RING_MSGS];
    char *sbuf = malloc((size_t)len * RING_MSGS), *rbuf = malloc((size_t)rlen * RING_MSGS);
    memset(sbuf, rank, (size_t)len * RING_MSGS);
    for (int i = 0; i < RING_MSGS; i++) {
        MPI_Irecv(rbuf + (size_t)i * rlen, rlen, MPI_BYTE, (rank + size - 1) % size, i,
                  MPI_COMM_WORLD, &req[i]);
        MPI_Isend(sbuf + (size_t)i * len, len, MPI_BYTE, (rank + 1) % size, i, MPI_COMM_WORLD,
                  &req[RING_MSGS + i]);
    }
    MPI_Waitall(2 * RING_MSGS, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < RING_MSGS * rlen; i++)
        if (rbuf[i] != (char)((rank + size - 1) % size)) {
            fprintf(stderr, "FAIL topo_prof: rank %d: ring data wrong at %d\n", rank, i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    free(sbuf);
    free(rbuf);
}

static void big(void)
{
    if (size < 2 || (rank != 0 && rank != size - 1))
        return;
    char *buf = malloc(BIG);
    if (rank == 0) {
        memset(buf, 0x5a, BIG);
        MPI_Send(buf, BIG, MPI_BYTE, size - 1, 99, MPI_COMM_WORLD);
    } else {
        MPI_Recv(buf, BIG, MPI_BYTE, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (buf[0] != 0x5a || buf[BIG - 1] != 0x5a) {
            fprintf(stderr, "FAIL topo_prof: big message wrong\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    free(buf);
}

static void bcast(void)
{
    char buf[BCAST];
    memset(buf, rank == 0 ? 7 : 0, sizeof(buf));
    MPI_Bcast(buf, BCAST, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (buf[0] != 7 || buf[BCAST - 1] != 7) {
        fprintf(stderr, "FAIL topo_prof: rank %d: bcast data wrong\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* A scatter and a gather of COLL_BLK bytes per rank, rooted at rank 0,
 * data checked: with PX_TOPO their messages show the route groups. */
static void scatter_gather(void)
{
    char *all = malloc((size_t)COLL_BLK * size), mine[COLL_BLK];
    for (int i = 0; i < COLL_BLK * size; i++)
        all[i] = rank == 0 ? (char)(i / COLL_BLK * 3 + i % 7) : 0;
    MPI_Scatter(all, COLL_BLK, MPI_BYTE, mine, COLL_BLK, MPI_BYTE, 0, MPI_COMM_WORLD);
    for (int i = 0; i < COLL_BLK; i++)
        if (mine[i] != (char)(rank * 3 + (rank * COLL_BLK + i) % 7)) {
            fprintf(stderr, "FAIL topo_prof: rank %d: scatter data wrong at %d\n", rank, i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    for (int i = 0; i < COLL_BLK; i++)
        mine[i] = (char)(rank + i);
    MPI_Gather(mine, COLL_BLK, MPI_BYTE, all, COLL_BLK, MPI_BYTE, 0, MPI_COMM_WORLD);
    for (int i = 0; rank == 0 && i < COLL_BLK * size; i++)
        if (all[i] != (char)(i / COLL_BLK + i % COLL_BLK)) {
            fprintf(stderr, "FAIL topo_prof: gather data wrong at %d\n", i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    free(all);
}

/* Marks a section's edge: the signal's handler only sets a flag, taken by
 * the next pass of the progress engine (here an MPI_Iprobe). */
static void mark(void)
{
    int flag;
    raise(SIGUSR2);
    MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int signal_mode = argc > 1 && !strcmp(argv[1], "signal");
    const char *mode = argc > 1 ? argv[1] : "run";
    if (!strcmp(mode, "coll")) {
        bcast(); /* the collectives' setup, before the section */
        MPI_Barrier(MPI_COMM_WORLD);
        mark();
        scatter_gather();
        mark();
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!signal_mode) {
        ring();
        big();
    } else {
        ring();
        bcast();
        MPI_Barrier(MPI_COMM_WORLD);
        mark();
        ring();
        big();
        bcast();
        mark();
        MPI_Barrier(MPI_COMM_WORLD);
        ring();
    }
    if (rank == 0)
        printf("PASS topo_prof np=%d %s\n", size, mode);
    MPI_Finalize();
    return 0;
}
