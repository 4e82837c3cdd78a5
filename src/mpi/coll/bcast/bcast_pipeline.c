/* Pipelined chain broadcast: the message is cut into segments of
 * PX_BCAST_PIPELINE_SEGMENT bytes and flows down the chain of relative
 * ranks 0 -> 1 -> ... -> n-1; a rank forwards segment i while it receives
 * segment i+1. Every link carries the message once, so for large messages
 * between nodes the time is about bytes/bandwidth plus n-2 segments,
 * against twice the message per link for scatter + ring allgather. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_bcast_pipeline)
{
    int n = c->size, vr = (c->rank - a->root + n) % n;
    char *buf = a->rbuf;
    size_t seg = px_params.bcast_pipeline_segment ? px_params.bcast_pipeline_segment : a->bytes;
    if (n == 1 || a->bytes == 0)
        return MPI_SUCCESS;
    if (n == 2)
        seg = a->bytes; /* nobody forwards: one message, one handshake, one write */
    size_t nseg = (a->bytes + seg - 1) / seg;
    int parent = (vr - 1 + a->root + n) % n, child = (vr + 1 + a->root) % n;
#define PX_SEG_LEN(i) ((MPI_Aint)((i) + 1 < nseg ? seg : a->bytes - (i)*seg))
    if (vr == 0) {
        /* the root hands every segment over at once, in order */
        for (size_t i = 0; i < nseg; i++)
            px_coll_sched_send(s, c, buf + i * seg, PX_SEG_LEN(i), MPI_BYTE, child);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    if (vr == n - 1) {
        /* the end of the chain forwards nothing: every receive is posted */
        for (size_t i = 0; i < nseg; i++)
            px_coll_sched_recv(s, c, buf + i * seg, PX_SEG_LEN(i), MPI_BYTE, parent);
        px_coll_sched_round(s);
        return MPI_SUCCESS;
    }
    /* segment i arrives in round i while segment i-1 goes on */
    for (size_t i = 0; i <= nseg; i++) {
        if (i < nseg)
            px_coll_sched_recv(s, c, buf + i * seg, PX_SEG_LEN(i), MPI_BYTE, parent);
        if (i > 0)
            px_coll_sched_send(s, c, buf + (i - 1) * seg, PX_SEG_LEN(i - 1), MPI_BYTE, child);
        px_coll_sched_round(s);
    }
#undef PX_SEG_LEN
    return MPI_SUCCESS;
}
