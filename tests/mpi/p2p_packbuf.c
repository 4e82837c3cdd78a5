/* A large non-contiguous message goes through a packed copy at each end.
 * Sent again and again, it must not pay for fresh memory each time: a
 * buffer of 40 MB from malloc is a mapping of its own, given back to the
 * kernel when freed, so every message would fault in 10,240 pages at each
 * end again. Ranks 0 and 1 exchange a vector type (64-byte blocks, every
 * other one) of 40 MB and of 1 MB back and forth (MPI_Send/MPI_Recv,
 * MPI_Isend/MPI_Irecv, MPI_Sendrecv_replace), the data checked each time;
 * after a first warm-up round, the minor page faults of the next rounds
 * of sends and receives must stay well below one buffer's pages (not those
 * of MPI_Sendrecv_replace: its two copies of 40 MB at once are more than
 * the 64 MB a process keeps, src/util/scratch.h). */
#include "px_test.h"

#include <sys/resource.h>

enum { BLOCK = 64, ROUNDS = 3 };

static long faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

static void fill(unsigned char *buf, size_t span, int who, int round)
{
    for (size_t i = 0; i < span; i += 2 * BLOCK)
        for (size_t j = 0; j < BLOCK; j++)
            buf[i + j] = (unsigned char)(i / 7 + j * 3 + who * 11 + round);
}

static int check(const unsigned char *buf, size_t span, int who, int round)
{
    for (size_t i = 0; i < span; i += 2 * BLOCK)
        for (size_t j = 0; j < BLOCK; j++)
            if (buf[i + j] != (unsigned char)(i / 7 + j * 3 + who * 11 + round))
                return 0;
    return 1;
}

/* One round trip of kind k (0 send/recv, 1 isend/irecv, 2 sendrecv_replace). */
static void round_trip(unsigned char *buf, size_t span, MPI_Datatype t, int k, int round)
{
    int me = px_test_rank, peer = 1 - me;
    for (int leg = 0; leg < 2; leg++) {
        int sender = leg; /* rank 0 sends first */
        if (k == 2) {
            fill(buf, span, me, round);
            MPI_Sendrecv_replace(buf, 1, t, peer, 0, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            PX_CHECK(check(buf, span, peer, round), "sendrecv_replace round %d: wrong data", round);
            return;
        }
        MPI_Request req;
        if (me == sender) {
            fill(buf, span, me, round);
            if (k == 0)
                MPI_Send(buf, 1, t, peer, 0, MPI_COMM_WORLD);
            else {
                MPI_Isend(buf, 1, t, peer, 0, MPI_COMM_WORLD, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
        } else {
            memset(buf, 0, span);
            if (k == 0)
                MPI_Recv(buf, 1, t, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else {
                MPI_Irecv(buf, 1, t, peer, 0, MPI_COMM_WORLD, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            PX_CHECK(check(buf, span, peer, round), "kind %d round %d: wrong data", k, round);
        }
    }
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "p2p_packbuf");
    PX_REQUIRE(px_test_size >= 2, "needs 2 ranks");
    const size_t sizes[] = {(size_t)1 << 20, (size_t)40 << 20};
    long worst = 0;
    if (px_test_rank < 2) {
        for (int s = 0; s < 2; s++) {
            size_t bytes = sizes[s], span = 2 * bytes;
            unsigned char *buf = malloc(span);
            PX_REQUIRE(buf, "out of memory");
            memset(buf, 0, span);
            MPI_Datatype t;
            MPI_Type_vector((int)(bytes / BLOCK), BLOCK, 2 * BLOCK, MPI_BYTE, &t);
            MPI_Type_commit(&t);
            for (int k = 0; k < 3; k++) {
                round_trip(buf, span, t, k, 0); /* warm-up: buffers are made */
                long f0 = faults();
                for (int r = 1; r <= ROUNDS; r++)
                    round_trip(buf, span, t, k, r);
                long per = (faults() - f0) / ROUNDS;
                if (k < 2 && per > worst)
                    worst = per;
                /* a pack buffer made anew costs bytes / 4096 faults */
                PX_CHECK(k == 2 || per < (long)(bytes / 4096 / 4),
                         "%zu bytes, kind %d: %ld page faults per round trip", bytes, k, per);
            }
            MPI_Type_free(&t);
            free(buf);
        }
    }
    return px_test_finish("1 MB and 40 MB vectors, at most %ld page faults per round trip", worst);
}
