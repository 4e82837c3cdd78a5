/* Broadcast for large messages (van de Geijn): binomial scatter of n chunks
 * from the root, then a ring allgather of the chunks; about 2x the message
 * crosses each link instead of log2 n times. */
#include "../coll_impl.h"

static void px_chunk(size_t bytes, int n, int i, size_t *off, size_t *len)
{
    size_t chunk = (bytes + (size_t)n - 1) / (size_t)n;
    size_t o = chunk * (size_t)i;
    *off = o < bytes ? o : bytes;
    size_t e = o + chunk < bytes ? o + chunk : bytes;
    *len = e > *off ? e - *off : 0;
}

/* bytes of chunks [first, first + cnt) */
static void px_chunks(size_t bytes, int n, int first, int cnt, size_t *off, size_t *len)
{
    size_t o2, l2;
    px_chunk(bytes, n, first, off, len);
    px_chunk(bytes, n, first + cnt - 1, &o2, &l2);
    *len = o2 + l2 > *off ? o2 + l2 - *off : 0;
}

PX_COLL_BUILDER(px_coll_bcast_scatter_ring)
{
    int n = c->size, vr = (c->rank - a->root + n) % n, mask = 1;
    char *buf = a->rbuf;
    size_t off, len;
    if (n == 1)
        return MPI_SUCCESS;
    /* scatter: vr receives chunks [vr, vr + subtree) from its parent */
    while (mask < n) {
        if (vr & mask) {
            int cnt = mask < n - vr ? mask : n - vr;
            px_chunks(a->bytes, n, vr, cnt, &off, &len);
            px_coll_sched_recv(s, c, buf + off, (MPI_Aint)len, MPI_BYTE, (vr - mask + a->root) % n);
            px_coll_sched_round(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < n) {
            int cnt = mask < n - vr - mask ? mask : n - vr - mask;
            px_chunks(a->bytes, n, vr + mask, cnt, &off, &len);
            px_coll_sched_send(s, c, buf + off, (MPI_Aint)len, MPI_BYTE, (vr + mask + a->root) % n);
        }
    }
    px_coll_sched_round(s);
    /* ring allgather over relative ranks */
    int right = (c->rank + 1) % n, left = (c->rank - 1 + n) % n;
    for (int i = 0; i < n - 1; i++) {
        int sblk = (vr - i + n) % n, rblk = (vr - i - 1 + n) % n;
        px_chunk(a->bytes, n, rblk, &off, &len);
        px_coll_sched_recv(s, c, buf + off, (MPI_Aint)len, MPI_BYTE, left);
        px_chunk(a->bytes, n, sblk, &off, &len);
        px_coll_sched_send(s, c, buf + off, (MPI_Aint)len, MPI_BYTE, right);
        px_coll_sched_round(s);
    }
    return MPI_SUCCESS;
}
