/* Large non-contiguous messages are packed piece by piece as their frames
 * go and unpacked piece by piece as they land (src/proto:
 * px_proto_isend_fill, px_proto_irecv_drain): pieces end at any byte,
 * inside an item and inside a basic element. Rank 0 sends rank 1
 * messages of several types, each of a few MB (many pieces), rank 1
 * receives them with the same type, with a larger count (the message is
 * shorter than the receive), and as bytes; every byte is checked, and the
 * gaps of the receive buffer must keep their sentinel. Types: a vector of
 * 13-byte blocks, an indexed type of irregular blocks, a struct with gaps
 * (double, char, int), MPI_DOUBLE_INT (a predefined pair with a gap), a
 * vector resized to leave room between items. */
#include "px_test.h"

#include <stddef.h>

enum { NTYPES = 5, SENTINEL = 0xa5 };

static MPI_Datatype make(int k, const char **name)
{
    MPI_Datatype t, t2;
    switch (k) {
    case 0:
        *name = "vector13";
        MPI_Type_vector(8, 13, 20, MPI_BYTE, &t);
        break;
    case 1: {
        *name = "indexed";
        int len[5] = {1, 7, 3, 29, 2}, disp[5] = {0, 3, 17, 24, 60};
        MPI_Type_indexed(5, len, disp, MPI_BYTE, &t);
        break;
    }
    case 2: {
        *name = "struct";
        struct s {
            double d;
            char c;
            int i;
        };
        int len[3] = {1, 1, 1};
        MPI_Aint disp[3] = {offsetof(struct s, d), offsetof(struct s, c), offsetof(struct s, i)};
        MPI_Datatype ty[3] = {MPI_DOUBLE, MPI_CHAR, MPI_INT};
        MPI_Type_create_struct(3, len, disp, ty, &t2);
        MPI_Type_create_resized(t2, 0, sizeof(struct s), &t);
        MPI_Type_free(&t2);
        break;
    }
    case 3:
        *name = "double_int";
        return MPI_DOUBLE_INT;
    default:
        *name = "resized";
        /* 3 blocks of 5 bytes, 16 apart, items every 41 bytes */
        MPI_Type_vector(3, 5, 16, MPI_BYTE, &t2);
        MPI_Type_create_resized(t2, 0, 41, &t);
        MPI_Type_free(&t2);
        break;
    }
    MPI_Type_commit(&t);
    return t;
}

/* The value a byte of the packed stream has in message m. */
static unsigned char val(size_t i, int m) { return (unsigned char)(i * 131 + i / 977 + m * 7 + 1); }

int main(int argc, char **argv)
{
    px_test_init(&argc, &argv, "p2p_ddt_stream");
    PX_REQUIRE(px_test_size >= 2, "needs 2 ranks");
    int checked = 0;
    if (px_test_rank < 2) {
        for (int k = 0; k < NTYPES; k++) {
            const char *name;
            MPI_Datatype t = make(k, &name);
            int size;
            MPI_Aint lb, extent, tlb, textent;
            MPI_Type_size(t, &size);
            MPI_Type_get_extent(t, &lb, &extent);
            MPI_Type_get_true_extent(t, &tlb, &textent);
            int count = (int)((3u << 20) / (unsigned)size) + 3; /* ~3 MB */
            size_t span = (size_t)(count + 8) * (size_t)extent + (size_t)textent;
            size_t bytes = (size_t)count * (size_t)size;
            unsigned char *buf = malloc(span), *packed = malloc(bytes + 64), *ref = malloc(span);
            PX_REQUIRE(buf && packed && ref, "out of memory");
            for (int m = 0; m < 3; m++) {
                /* the reference: a sentinel everywhere, then the stream unpacked */
                for (size_t i = 0; i < bytes; i++)
                    packed[i] = val(i, m);
                memset(ref, SENTINEL, span);
                int pos = 0;
                MPI_Unpack(packed, (int)bytes, &pos, ref, count, t, MPI_COMM_SELF);
                if (px_test_rank == 0) {
                    MPI_Send(ref, count, t, 1, m, MPI_COMM_WORLD);
                    continue;
                }
                memset(buf, SENTINEL, span);
                MPI_Status st;
                int got = -1;
                if (m == 2) { /* as bytes */
                    MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, m, MPI_COMM_WORLD, &st);
                    MPI_Get_count(&st, MPI_BYTE, &got);
                    PX_CHECK(got == (int)bytes, "%s as bytes: count %d, want %zu", name, got,
                             bytes);
                    PX_CHECK(!memcmp(buf, packed, bytes), "%s as bytes: wrong data", name);
                    checked++;
                    continue;
                }
                /* m 1: a receive of more items than come */
                MPI_Recv(buf, count + (m ? 5 : 0), t, 0, m, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, t, &got);
                PX_CHECK(got == count, "%s message %d: count %d, want %d", name, m, got, count);
                size_t bad = 0, first = 0;
                for (size_t i = 0; i < span; i++)
                    if (buf[i] != ref[i] && !bad++)
                        first = i;
                PX_CHECK(!bad, "%s message %d: %zu wrong bytes, the first at %zu", name, m, bad,
                         first);
                checked++;
            }
            if (t != MPI_DOUBLE_INT)
                MPI_Type_free(&t);
            free(buf);
            free(packed);
            free(ref);
        }
    }
    return px_test_finish("%d messages of %d types checked", checked, NTYPES);
}
