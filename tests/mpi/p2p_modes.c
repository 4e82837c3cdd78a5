/* All send modes. Standard; synchronous (Issend stays incomplete while the
 * receive is provably not posted; blocking Ssend lasts until it is); ready
 * (receive known posted through a handshake); buffered (Bsend/Ibsend
 * complete locally while the receiver is busy, the user buffer is reusable
 * at once, Buffer_detach returns the attached buffer; too small a buffer is
 * MPI_ERR_BUFFER under MPI_ERRORS_RETURN). Small and large messages. */
#include "px_test.h"

#define T_DATA 10
#define T_GO 11
#define T_NONE 12
#define NSIZE 2
static const int sizes[NSIZE] = {8, 1 << 20};
#define SSEND_DELAY_MS 200
#define NBUF 6

static uint64_t seed_of(int src, int mode, int i)
{
    return (uint64_t)src << 32 | (uint64_t)mode << 16 | (uint64_t)i;
}

static void recv_check(int src, int n, int mode, int i, const char *what)
{
    MPI_Status st;
    int count = -1;
    char *buf = malloc(n);
    memset(buf, 0, n);
    MPI_Recv(buf, n, MPI_BYTE, src, T_DATA, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    PX_CHECK(count == n && px_verify(buf, n, seed_of(src, mode, i)) == (size_t)n,
             "%s %d B from %d: count %d or data wrong", what, n, src, count);
    free(buf);
}

static char *make(int n, int mode, int i)
{
    char *b = malloc(n);
    px_fill(b, n, seed_of(px_test_rank, mode, i));
    return b;
}

static void standard(int peer, int sender)
{
    for (int s = 0; s < NSIZE; s++) {
        if (sender) {
            char *b = make(sizes[s], 0, s);
            MPI_Send(b, sizes[s], MPI_BYTE, peer, T_DATA, MPI_COMM_WORLD);
            free(b);
        } else {
            recv_check(peer, sizes[s], 0, s, "standard");
        }
    }
}

/* The receiver posts the data receive only after the go message, which the
 * sender sends only after polling its Issend for a while. */
static void issend_flag(int peer, int sender)
{
    for (int s = 0; s < NSIZE; s++) {
        if (sender) {
            MPI_Request r;
            int flag = 0, polls = 0;
            char *b = make(sizes[s], 1, s);
            MPI_Issend(b, sizes[s], MPI_BYTE, peer, T_DATA, MPI_COMM_WORLD, &r);
            double end = MPI_Wtime() + 0.05;
            while (MPI_Wtime() < end && !flag) {
                MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
                polls++;
                px_sleep_ms(1);
            }
            PX_CHECK(!flag,
                     "Issend of %d B completed before the receive was "
                     "posted (after %d polls)",
                     sizes[s], polls);
            MPI_Send(NULL, 0, MPI_BYTE, peer, T_GO, MPI_COMM_WORLD);
            if (!flag)
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            free(b);
        } else {
            MPI_Recv(NULL, 0, MPI_BYTE, peer, T_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            recv_check(peer, sizes[s], 1, s, "Issend");
        }
    }
}

/* t0 is taken before the start message exists, and the receive is posted
 * at least SSEND_DELAY_MS after that message arrived, so Ssend cannot end
 * earlier than t0 + delay on any correct MPI. */
static void ssend_timed(int peer, int sender)
{
    for (int s = 0; s < NSIZE; s++) {
        if (sender) {
            char *b = make(sizes[s], 2, s);
            double t0 = MPI_Wtime();
            MPI_Send(NULL, 0, MPI_BYTE, peer, T_GO, MPI_COMM_WORLD);
            MPI_Ssend(b, sizes[s], MPI_BYTE, peer, T_DATA, MPI_COMM_WORLD);
            double dt = MPI_Wtime() - t0;
            PX_CHECK(dt >= SSEND_DELAY_MS * 1e-3 * 0.99,
                     "Ssend of %d B returned after %.3f s, before the receive "
                     "was posted (>= %.3f s)",
                     sizes[s], dt, SSEND_DELAY_MS * 1e-3);
            free(b);
        } else {
            MPI_Recv(NULL, 0, MPI_BYTE, peer, T_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            px_sleep_ms(SSEND_DELAY_MS);
            recv_check(peer, sizes[s], 2, s, "Ssend");
        }
    }
}

static void ready(int peer, int sender)
{
    for (int s = 0; s < NSIZE; s++) {
        int n = sizes[s];
        if (sender) {
            char *b = make(n, 3, s);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, T_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Rsend(b, n, MPI_BYTE, peer, T_DATA, MPI_COMM_WORLD);
            free(b);
        } else {
            MPI_Request r;
            MPI_Status st;
            int count = -1;
            char *buf = calloc(1, n);
            MPI_Irecv(buf, n, MPI_BYTE, peer, T_DATA, MPI_COMM_WORLD, &r);
            MPI_Send(NULL, 0, MPI_BYTE, peer, T_GO, MPI_COMM_WORLD);
            MPI_Wait(&r, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            PX_CHECK(count == n && px_verify(buf, n, seed_of(peer, 3, s)) == (size_t)n,
                     "Rsend %d B: count %d or data wrong", n, count);
            free(buf);
        }
    }
}

/* Message i of the buffered run: sizes alternate small and large. */
static int bsize(int i) { return i % 3 == 2 ? 300000 : 64 + i; }

static void buffered(int peer, int sender, int self)
{
    if (sender) {
        int total = 0;
        for (int i = 0; i < NBUF; i++)
            total += bsize(i) + MPI_BSEND_OVERHEAD;
        char *att = malloc(total), *user = malloc(300000);
        void *det = NULL;
        int detsize = -1;
        PX_MPI(MPI_Buffer_attach(att, total));
        for (int i = 0; i < NBUF; i++) {
            px_fill(user, bsize(i), seed_of(px_test_rank, 4, i));
            if (i % 2 == 0) {
                PX_MPI(MPI_Bsend(user, bsize(i), MPI_BYTE, peer, T_DATA, MPI_COMM_WORLD));
            } else {
                MPI_Request r;
                int flag = 0;
                PX_MPI(MPI_Ibsend(user, bsize(i), MPI_BYTE, peer, T_DATA, MPI_COMM_WORLD, &r));
                /* Local completion: no help from the receiver needed. */
                double end = MPI_Wtime() + 5.0;
                while (!flag && MPI_Wtime() < end)
                    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
                PX_REQUIRE(flag, "Ibsend %d did not complete locally", i);
            }
            /* The data was copied; the user buffer is free again. */
            memset(user, 0xee, bsize(i));
        }
        if (!self)
            MPI_Send(NULL, 0, MPI_BYTE, peer, T_GO, MPI_COMM_WORLD);
        else
            for (int i = 0; i < NBUF; i++)
                recv_check(peer, bsize(i), 4, i, "self Bsend");
        PX_MPI(MPI_Buffer_detach(&det, &detsize));
        PX_CHECK(det == att && detsize == total, "Buffer_detach gave %p/%d, attached %p/%d", det,
                 detsize, (void *)att, total);
        free(att);
        free(user);
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, peer, T_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < NBUF; i++)
            recv_check(peer, bsize(i), 4, i, "Bsend");
    }
}

static int err_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* Errors are local to the sender: to itself, so nothing can leak to others. */
static void buffered_errors(void)
{
    char data[1000], small[MPI_BSEND_OVERHEAD + 24];
    void *det = NULL;
    int detsize = -1, rc, flag = 1, me = px_test_rank;
    MPI_Request r = MPI_REQUEST_NULL;

    memset(data, 1, sizeof(data));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Bsend(data, sizeof(data), MPI_BYTE, me, T_NONE, MPI_COMM_WORLD);
    PX_CHECK(err_class(rc) == MPI_ERR_BUFFER,
             "Bsend without a buffer: class %d, expected MPI_ERR_BUFFER", err_class(rc));
    PX_MPI(MPI_Buffer_attach(small, sizeof(small)));
    rc = MPI_Bsend(data, sizeof(data), MPI_BYTE, me, T_NONE, MPI_COMM_WORLD);
    PX_CHECK(err_class(rc) == MPI_ERR_BUFFER, "Bsend of 1000 B into a %d B buffer: class %d",
             (int)sizeof(small), err_class(rc));
    rc = MPI_Ibsend(data, sizeof(data), MPI_BYTE, me, T_NONE, MPI_COMM_WORLD, &r);
    if (rc == MPI_SUCCESS && r != MPI_REQUEST_NULL)
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    PX_CHECK(err_class(rc) == MPI_ERR_BUFFER, "Ibsend too large: class %d", err_class(rc));
    /* What fits still goes. */
    rc = MPI_Bsend(data, 16, MPI_BYTE, me, T_NONE + 1, MPI_COMM_WORLD);
    PX_CHECK(rc == MPI_SUCCESS, "Bsend that fits failed: %d", rc);
    if (rc == MPI_SUCCESS)
        MPI_Recv(data, 16, MPI_BYTE, me, T_NONE + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    PX_MPI(MPI_Buffer_detach(&det, &detsize));
    PX_CHECK(det == small && detsize == (int)sizeof(small), "Buffer_detach gave %p/%d", det,
             detsize);
    MPI_Iprobe(me, T_NONE, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    PX_CHECK(flag == 0, "a failed Bsend was delivered anyway");
    /* a buffer of exactly size + MPI_BSEND_OVERHEAD holds its message, at
     * any size and any alignment of the buffer */
    for (int n = 0; n <= 17; n++)
        for (int shift = 0; shift < 3; shift++) {
            PX_MPI(MPI_Buffer_attach(small + shift, n + MPI_BSEND_OVERHEAD));
            rc = MPI_Bsend(data, n, MPI_BYTE, me, T_NONE + 2, MPI_COMM_WORLD);
            PX_CHECK(rc == MPI_SUCCESS, "Bsend of %d B into %d + MPI_BSEND_OVERHEAD: class %d", n,
                     n, err_class(rc));
            if (rc == MPI_SUCCESS)
                MPI_Recv(data, n, MPI_BYTE, me, T_NONE + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            PX_MPI(MPI_Buffer_detach(&det, &detsize));
        }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Self versions for a rank without a partner. */
static void self_modes(void)
{
    int me = px_test_rank;
    for (int s = 0; s < NSIZE; s++) {
        MPI_Request r, rr;
        int flag = 0, n = sizes[s];
        char *b = make(n, 1, s);
        MPI_Issend(b, n, MPI_BYTE, me, T_DATA, MPI_COMM_WORLD, &r);
        for (int k = 0; k < 20 && !flag; k++) {
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            px_sleep_ms(1);
        }
        PX_CHECK(!flag, "Issend to self of %d B completed with no receive", n);
        recv_check(me, n, 1, s, "self Issend");
        if (!flag)
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        free(b);

        char *rb = calloc(1, n);
        b = make(n, 3, s);
        MPI_Irecv(rb, n, MPI_BYTE, me, T_DATA, MPI_COMM_WORLD, &rr);
        MPI_Rsend(b, n, MPI_BYTE, me, T_DATA, MPI_COMM_WORLD);
        MPI_Wait(&rr, MPI_STATUS_IGNORE);
        PX_CHECK(px_verify(rb, n, seed_of(me, 3, s)) == (size_t)n, "self Rsend %d B data wrong", n);
        free(rb);
        free(b);
    }
    buffered(me, 1, 1);
}

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "p2p_modes");
    int peer = px_pair_peer(px_test_rank, px_test_size);

    if (peer >= 0) {
        for (int dir = 0; dir < 2; dir++) {
            int sender = px_test_rank % 2 == dir;
            standard(peer, sender);
            issend_flag(peer, sender);
            ssend_timed(peer, sender);
            ready(peer, sender);
            buffered(peer, sender, 0);
        }
    } else {
        self_modes();
    }
    buffered_errors();
    return px_test_finish("standard, synchronous, ready, buffered; %s",
                          px_test_size > 1 ? "both directions per pair" : "self");
}
