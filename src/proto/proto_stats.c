/* The protocols' counters and those of the layers below, for the tool
 * interface (src/util/tool.h, src/mpi/tool): read when asked, by walking
 * the peers and the queues (nothing is kept for it on the message path). */
#include "proto_impl.h"
#include "../util/tool.h"

#include <string.h>

void px_proto_counters(uint64_t *c)
{
    memset(c, 0, sizeof(uint64_t) * PX_CTR_N);
    if (!px_p.peers)
        return;
    for (int r = 0; r < px_p.boot.size; r++) {
        const px_proto_peer_t *p = &px_p.peers[r];
        c[PX_CTR_proto_msgs_sent] += p->msgs_tx;
        c[PX_CTR_proto_bytes_sent] += p->bytes_tx;
        c[PX_CTR_proto_msgs_received] += p->msgs_rx;
        c[PX_CTR_proto_bytes_received] += p->bytes_rx;
        c[PX_CTR_proto_rndv_sent] += p->rndv_tx;
    }
    c[PX_CTR_proto_eager_received] = px_p.n_eager;
    c[PX_CTR_proto_rndv_received] = px_p.n_rndv;
    c[PX_CTR_proto_unexpected] = px_p.n_unexp;
    for (const px_list_t *e = px_p.unexp.next; e != &px_p.unexp; e = e->next) {
        const px_proto_unexp_t *u = px_container_of(e, px_proto_unexp_t, link);
        c[PX_CTR_proto_unexpected_queue]++;
        c[PX_CTR_proto_unexpected_queue_bytes] += u->size;
    }
    for (const px_list_t *e = px_p.posted.next; e != &px_p.posted; e = e->next)
        c[PX_CTR_proto_posted_queue]++;
    c[PX_CTR_proto_rma_queued] = px_rma_queued;
    px_chan_counters_add(c);
}

void px_proto_queue_len(uint32_t ctx, uint32_t nctx, uint64_t *unexp_p, uint64_t *posted_p)
{
    uint64_t nu = 0, np = 0;
    if (px_p.peers) {
        for (const px_list_t *e = px_p.unexp.next; e != &px_p.unexp; e = e->next)
            nu += px_container_of(e, px_proto_unexp_t, link)->ctx - ctx < nctx;
        for (const px_list_t *e = px_p.posted.next; e != &px_p.posted; e = e->next)
            np += px_container_of(e, px_proto_req_t, link)->ctx - ctx < nctx;
    }
    *unexp_p = nu;
    *posted_p = np;
}

int px_proto_peer_traffic(int peer, uint64_t *sent_p, uint64_t *received_p)
{
    if (!px_p.peers || peer < 0 || peer >= px_p.boot.size)
        return -1;
    *sent_p = px_p.peers[peer].bytes_tx;
    *received_p = px_p.peers[peer].bytes_rx;
    return 0;
}

int px_proto_size_in_effect(const char *param, uint64_t *value_p)
{
    return px_chan_size_in_effect(param, value_p);
}
