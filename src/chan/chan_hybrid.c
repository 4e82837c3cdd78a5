/* Hybrid channels (PX_NET with both udp and tcp): every network peer starts
 * on datagrams; a connection is opened, by agreement of both sides, to the
 * few peers that carry the most (PX_RC_PROMOTE_AFTER, PX_MAX_RC_CONN). */
#include "chan_impl.h"
#include "../util/log.h"
#include "../util/param.h"

/* The connection is used once it is established (the side that asked for
 * it opens it in the background while datagrams carry on; the other side
 * waits for it to arrive) and nothing sent over datagrams is
 * unacknowledged, so that nothing sent over it overtakes them. */
void px_chan_rc_switch(px_chan_t *c)
{
    if (px_rail_vc_ready(c->vc_rc) < (c->rc_in ? 1 : 2) || px_rail_vc_pending(c->vc) ||
        px_rail_vc_unacked(c->vc))
        return;
    c->rc = PX_RC_ACTIVE;
    px_debug("chan", "rank %d: connection in use (%s)", c->rank,
             c->rc_in ? "opened by the peer" : "opened after enough traffic");
}

/* The connection's channel (connected on first use): the first
 * PX_RC_FAST_MAX get the fastest path, every rail and path to the peer;
 * the others one subchannel and one socket. */
static int px_chan_rc_vc(px_chan_t *c)
{
    if (px_rail_vc_create(px_c.rail_rc, c->rank, c, &c->vc_rc) != PX_OK)
        return -1;
    if (px_c.rc_fast < px_params.rc_fast_max)
        px_c.rc_fast++;
    else
        px_rail_vc_set_single(c->vc_rc);
    px_debug("chan", "rank %d: connection on %s", c->rank,
             px_rail_vc_single(c->vc_rc) ? "one subchannel" : "every subchannel");
    return 0;
}

static int px_chan_rc_want(px_chan_t *c)
{
    if (!c->vc_rc && px_chan_rc_vc(c) != 0)
        return -1;
    c->rc = PX_RC_WANTED;
    px_c.rc_active = 1;
    return 0;
}

static void px_chan_rc_ask(px_chan_t *c)
{
    c->rc = PX_RC_ASKED;
    px_c.rc_out++;
    px_chan_ctrl(c, PX_RC_ASK);
}

/* One more message to c; asks for a connection once enough of them were
 * large enough and this process holds fewer than PX_MAX_RC_CONN. A message
 * counts once per PX_RC_PROMOTE_SIZE it holds: a peer sent a few large
 * messages carries as much as one sent many medium ones, and bulk data is
 * what a connection carries best. */
void px_chan_rc_count(px_chan_t *c, size_t len)
{
    if (c->rc != PX_RC_NONE || c->rc_denied || len < px_c.rc_size)
        return;
    size_t units = px_c.rc_unit ? len / px_c.rc_unit : 1;
    c->rc_qual = units >= UINT32_MAX - c->rc_qual ? UINT32_MAX : c->rc_qual + (uint32_t)units;
    if (c->rc_qual >= (uint32_t)px_params.rc_promote_after &&
        px_c.rc_out + px_c.rc_in < px_params.max_rc_conn)
        px_chan_rc_ask(c);
}

/* A connection request or the answer to ours. Counts stay within
 * PX_MAX_RC_CONN on both sides (two requests crossing each other are one
 * connection that both count as theirs). */
void px_chan_rc_msg(px_chan_t *c, uint64_t what)
{
    switch (what) {
    case PX_RC_ASK:
        if (c->hybrid && c->rc == PX_RC_NONE && px_c.rc_out + px_c.rc_in < px_params.max_rc_conn &&
            px_chan_rc_want(c) == 0) {
            c->rc_in = 1;
            px_c.rc_in++;
        }
        px_chan_ctrl(c, c->rc == PX_RC_NONE ? PX_RC_NO : PX_RC_YES);
        break;
    case PX_RC_YES:
        if (c->rc != PX_RC_ASKED)
            break;
        if (px_chan_rc_want(c) != 0) {
            c->rc = PX_RC_NONE;
            c->rc_denied = 1;
            px_c.rc_out--;
            break;
        }
        /* connected now, while messages still go as datagrams; they move
         * over once it is established (px_chan_rc_switch) */
        px_rail_vc_connect(c->vc_rc);
        break;
    case PX_RC_NO:
        if (c->rc == PX_RC_ASKED) {
            c->rc = PX_RC_NONE;
            c->rc_denied = 1;
            px_c.rc_out--;
        }
        break;
    default:
        px_error("chan", "invalid connection message %llu from rank %d", (unsigned long long)what,
                 c->rank);
    }
}

/* A frame over a connection the peer opened; answer over it too. */
static void *px_chan_rc_rx_begin(void *owner, const void *hdr, size_t hdr_len, size_t off,
                                 size_t payload_len, void **ctx_p)
{
    px_chan_t *c = owner;
    if (__builtin_expect(c->rc == PX_RC_NONE, 0)) {
        c->rc = PX_RC_WANTED;
        c->rc_in = 1;
        px_c.rc_in++;
        px_c.rc_active = 1;
    }
    return px_chan_rx_begin_at(owner, hdr, hdr_len, off, payload_len, ctx_p);
}

/* A peer connects before we wanted a connection to it. */
static int px_chan_rc_incoming(px_rail_t *rail, int rank)
{
    px_chan_t *c = &px_c.peers[rank];
    if (rail != px_c.rail_rc || !c->hybrid || c->vc_rc)
        return -1;
    return px_chan_rc_vc(c);
}

const px_rail_rx_ops_t px_chan_rc_rx_ops = {
    .rx_begin = px_chan_rc_rx_begin,
    .rx_done = px_chan_rx_done_len,
    .ep_failed = px_chan_ep_failed,
    .vc_incoming = px_chan_rc_incoming,
};

/* auto: the messages datagrams carry by rendezvous count, one per datagram
 * eager limit they hold (what datagrams send eagerly, they send about as
 * well as a connection) */
void px_chan_rc_setup(void)
{
    px_c.rc_size = px_params.rc_promote_size;
    px_c.rc_unit = px_params.rc_promote_size;
    if (px_params.rc_promote_size == PX_PARAM_SIZE_AUTO) {
        px_c.rc_unit = px_c.car_eager[PX_CAR_UDP];
        px_c.rc_size = px_c.rc_unit + 1;
    }
}
