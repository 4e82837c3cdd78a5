/* Internals of the channel layer:
 *   chan.c        set-up, dispatch of active messages, progress, flush, state
 *   chan_pick.c   the channel of each message (PX_CHANNELS) and sending
 *   chan_hybrid.c datagram peers promoted to connections by agreement
 *   chan_rules.c  the PX_CHANNELS parser */
#ifndef PX_CHAN_IMPL_H
#define PX_CHAN_IMPL_H

#include "chan.h"
#include "chan_rules.h"
#include "../net/net.h"
#include "../rail/rail.h"

enum { PX_CHAN_SELF, PX_CHAN_SHM, PX_CHAN_RAIL };

/* With datagrams and connections both enabled (hybrid), a network peer's
 * connection goes NONE -> ASKED (enough traffic: the peer is asked, over
 * datagrams, whether it has room for one more connection) -> WANTED (it
 * said yes, or it asked us and we had room) -> ACTIVE (once nothing sent
 * over datagrams is unacknowledged). A peer that says no is not asked
 * again. */
enum { PX_RC_NONE, PX_RC_ASKED, PX_RC_WANTED, PX_RC_ACTIVE };
enum { PX_RC_ASK = 1, PX_RC_YES = 2, PX_RC_NO = 3 };

/* The channel layer's own control message (PX_CHAN_AM_CTRL). */
typedef struct px_chan_ctrl_hdr {
    uint8_t am;
    uint8_t pad[15];
    uint64_t what; /* PX_RC_* */
} px_chan_ctrl_hdr_t;

typedef struct px_chan {
    int rank;
    int kind;
    int failed;
    int can_get;
    int wake;   /* PX_NET_CAP_WAKE: px_chan_wake signals it */
    int stream; /* PX_NET_CAP_STREAM: its frames' payloads may go to rx_data */
    size_t eager_limit;
    size_t chunk;            /* rendezvous data per frame */
    const px_net_ops_t *ops; /* self and shm */
    px_net_ep_t *ep;
    px_rail_vc_t *vc;
    px_rail_vc_t *vc_rc; /* hybrid: the connection, created when wanted */
    uint8_t hybrid;      /* a connection may be opened to it */
    uint8_t rc;
    uint8_t rc_in;     /* the peer asked for it */
    uint8_t rc_denied; /* the peer had no room: stay on datagrams */
    uint8_t car;       /* what carries frames sent on vc: px_c.vc_car, or PX_CAR_TCP for a
                        * process of another job in a job on datagrams (vc is then a
                        * connection of rail_rc, vc_rc the same one, rc ACTIVE) */
    uint32_t rc_qual;  /* messages that count towards opening it */
    /* self and shm deliver one frame at a time per peer */
    size_t rx_len;
    /* PX_CHANNELS: the channel the last matchable message (eager or
     * rendezvous request) took; another one is used only once everything
     * sent over this one is acknowledged, so no message overtakes another */
    px_rail_vc_t *env_vc;
    uint64_t car_msgs[PX_CAR_N], car_bytes[PX_CAR_N]; /* sent, by what carried the data */
    uint64_t fenced;                                  /* messages kept on env_vc to stay in order */
} px_chan_t;

typedef struct px_chan_am {
    px_chan_am_fn fn;
    uint8_t hdr_len;
    uint8_t flags;
} px_chan_am_t;

extern struct px_chan_state {
    px_boot_info_t boot;
    const px_chan_up_t *up;
    px_chan_t *peers; /* boot.peer_cap of them */
    int npeers;       /* made: the job's ranks, then processes of other jobs */
    const px_net_ops_t *self_ops, *shm_ops;
    px_net_iface_t *self_if, *shm_if;
    px_rail_t *rail;
    px_rail_t *rail_rc; /* hybrid: connections beside the datagrams of rail */
    int rc_active;      /* some connection is wanted or in use: poll rail_rc */
    int rc_out, rc_in;  /* connections we opened / the peers opened */
    int rc_fast;        /* ... of them on every rail and path (PX_RC_FAST_MAX) */
    size_t rc_size;     /* smallest message that counts towards one */
    size_t rc_unit;     /* bytes per count (0: one per message) */
    int epfd;           /* hybrid: both rails' descriptors, to sleep on */
    unsigned rc_tick;
    int self_active; /* something was ever sent to self: poll its queue */
    int rail_active;
    int rail_peers; /* some peer is reached over the network */
    int wake_peers; /* some peer's channel has wake */
    int rail_fd;
    int sleep_fd; /* PX_PROGRESS_MODE=sleep: every channel's descriptor, or -1 */
    int kick_fd;  /* eventfd in sleep_fd: px_chan_sleep_kick */
    int finalizing;
    int rx_stream; /* the frame whose handler runs may be taken piece by piece */
    unsigned tick;
    size_t shm_eager; /* PX_SHM_EAGER_LIMIT, 'auto' resolved */
    /* PX_CHANNELS */
    px_chr_table_t chr;
    uint64_t chr_hits[PX_CHR_MAX + 1]; /* the last one: no entry applied */
    int vc_car;                        /* what a peer's first rail is: PX_CAR_UDP or _TCP */
    size_t car_eager[PX_CAR_N], car_chunk[PX_CAR_N];
    /* last: a frame reads one entry of it, and the fields that progress
     * reads on every poll stay together before it */
    px_chan_am_t am[PX_CHAN_AM_MAX];
} px_c;

/* chan.c */
void *px_chan_rx_begin_at(void *owner, const void *hdr, size_t hdr_len, size_t off,
                          size_t payload_len, void **ctx_p);
void px_chan_rx_done_len(void *owner, void *ctx, size_t len);
void px_chan_ep_failed(void *owner, px_status_t why);
void px_chan_ctrl(px_chan_t *c, uint64_t what);

/* chan_hybrid.c */
extern const px_rail_rx_ops_t px_chan_rc_rx_ops;
void px_chan_rc_switch(px_chan_t *c);
void px_chan_rc_count(px_chan_t *c, size_t len);
void px_chan_rc_msg(px_chan_t *c, uint64_t what);
void px_chan_rc_setup(void);

/* The virtual channel of a network peer's next frame. */
static inline px_rail_vc_t *px_chan_vc(px_chan_t *c)
{
    if (__builtin_expect(c->rc == PX_RC_WANTED, 0))
        px_chan_rc_switch(c);
    return c->rc == PX_RC_ACTIVE ? c->vc_rc : c->vc;
}

/* What carries frames sent on vc to c. */
static inline int px_chan_car(const px_chan_t *c, const px_rail_vc_t *vc)
{
    return vc == c->vc ? c->car : PX_CAR_TCP;
}

#endif
