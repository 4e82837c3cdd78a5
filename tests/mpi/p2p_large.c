/* A 64 MB message each way between pair partners (blocking one way,
 * nonblocking with a different datatype the other way), verified byte by
 * byte against the pattern and against the sender's checksum. A rank
 * without a partner sends 64 MB to itself. */
#include "px_test.h"

#define LARGE_BYTES ((size_t)64 << 20)

static void check_large(const unsigned char *buf, const MPI_Status *st, MPI_Datatype type,
                        int tsize, uint64_t seed, uint64_t sent_sum, const char *what)
{
    int count = -1;
    MPI_Get_count(st, type, &count);
    PX_CHECK((size_t)count * (size_t)tsize == LARGE_BYTES, "%s: count %d x %d bytes", what, count,
             tsize);
    size_t bad = px_verify(buf, LARGE_BYTES, seed);
    PX_CHECK(bad == LARGE_BYTES, "%s: first wrong byte at offset %zu", what, bad);
    uint64_t sum = px_checksum(buf, LARGE_BYTES);
    PX_CHECK(sum == sent_sum, "%s: checksum %016llx, sender's %016llx", what,
             (unsigned long long)sum, (unsigned long long)sent_sum);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "p2p_large");
    int peer = px_pair_peer(px_test_rank, px_test_size);
    int even = px_test_rank % 2 == 0;
    unsigned char *buf = malloc(LARGE_BYTES);
    MPI_Status st;
    uint64_t sum = 0;
    PX_REQUIRE(buf != NULL, "cannot allocate %zu bytes", LARGE_BYTES);

    if (peer < 0) {
        unsigned char *rbuf = malloc(LARGE_BYTES);
        MPI_Request r[2];
        PX_REQUIRE(rbuf != NULL, "cannot allocate %zu bytes", LARGE_BYTES);
        px_fill(buf, LARGE_BYTES, 77);
        sum = px_checksum(buf, LARGE_BYTES);
        memset(rbuf, 0, LARGE_BYTES);
        MPI_Irecv(rbuf, (int)(LARGE_BYTES / 4), MPI_INT, px_test_rank, 1, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(buf, (int)(LARGE_BYTES / 4), MPI_INT, px_test_rank, 1, MPI_COMM_WORLD, &r[1]);
        MPI_Status sts[2];
        MPI_Waitall(2, r, sts);
        check_large(rbuf, &sts[0], MPI_INT, 4, 77, sum, "self nonblocking");
        memset(rbuf, 0, LARGE_BYTES);
        MPI_Sendrecv(buf, (int)LARGE_BYTES, MPI_BYTE, px_test_rank, 2, rbuf, (int)LARGE_BYTES,
                     MPI_BYTE, px_test_rank, 2, MPI_COMM_WORLD, &st);
        check_large(rbuf, &st, MPI_BYTE, 1, 77, sum, "self Sendrecv");
        free(rbuf);
    } else {
        /* Even to odd, blocking, as bytes. */
        if (even) {
            px_fill(buf, LARGE_BYTES, 1000 + px_test_rank);
            sum = px_checksum(buf, LARGE_BYTES);
            MPI_Send(buf, (int)LARGE_BYTES, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Send(&sum, 1, MPI_UINT64_T, peer, 2, MPI_COMM_WORLD);
        } else {
            memset(buf, 0, LARGE_BYTES);
            MPI_Recv(buf, (int)LARGE_BYTES, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st);
            MPI_Recv(&sum, 1, MPI_UINT64_T, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check_large(buf, &st, MPI_BYTE, 1, 1000 + peer, sum, "blocking");
        }
        /* Odd to even, nonblocking, as doubles; receive posted first. */
        MPI_Request r;
        if (even) {
            memset(buf, 0, LARGE_BYTES);
            MPI_Irecv(buf, (int)(LARGE_BYTES / 8), MPI_DOUBLE, peer, 3, MPI_COMM_WORLD, &r);
            MPI_Send(NULL, 0, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
            MPI_Wait(&r, &st);
            MPI_Recv(&sum, 1, MPI_UINT64_T, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check_large(buf, &st, MPI_DOUBLE, 8, 2000 + peer, sum, "nonblocking");
        } else {
            px_fill(buf, LARGE_BYTES, 2000 + px_test_rank);
            sum = px_checksum(buf, LARGE_BYTES);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Isend(buf, (int)(LARGE_BYTES / 8), MPI_DOUBLE, peer, 3, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            MPI_Send(&sum, 1, MPI_UINT64_T, peer, 2, MPI_COMM_WORLD);
        }
    }
    free(buf);
    return px_test_finish("64 MB each way per pair, checksummed");
}
