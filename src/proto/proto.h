/* proto: the MPI point-to-point protocols, on the active messages of the
 * channel layer (src/chan: one channel per peer, self, shm or the network).
 * Each message kind is an active message whose header handler runs on
 * arrival and says where the payload goes; the completion handler runs when
 * it is there. The protocols: eager (data with the envelope), rendezvous (RTS; then a direct read of the
 * sender's buffer where the channel can, or CTS + DATA), synchronous mode
 * (an acknowledgement at match time) and the matching of envelopes
 * (context, source, tag) against posted receives and unexpected messages. */
#ifndef PX_PROTO_H
#define PX_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "../boot/boot.h"
#include "../util/list.h"
#include "../util/px_status.h"

#define PX_ANY_SOURCE (-2) /* MPI_ANY_SOURCE's value in the MPICH ABI */
#define PX_ANY_TAG (-1)

typedef enum {
    PX_PROTO_MODE_STD = 0,
    PX_PROTO_MODE_SYNC = 1,
    PX_PROTO_MODE_READY = 2,
    PX_PROTO_MODE_BLOCKING = 0x10, /* or'ed in by blocking calls: the caller waits for the send */
    PX_PROTO_MODE_COLL = 0x40,     /* or'ed in for a collective's traffic (PX_CHANNELS class=coll);
                                    * its caller waits for the send too */
    PX_PROTO_MODE_RELEASE = 0x20,  /* or'ed in by a collective's round that only sends: over a
                                    * connection the send is done once written (rail release) */
    PX_PROTO_MODE_CLASS = 0x100,   /* or'ed in with a lane class (PX_LANE_*) at
                                    * PX_PROTO_MODE_CLASS_SHIFT: every frame of the message takes
                                    * that class's lane whatever its size (a communicator's hint) */
} px_proto_mode_t;
#define PX_PROTO_MODE_CLASS_SHIFT 9

enum {
    PX_PROTO_REQ_SEND = 1,
    PX_PROTO_REQ_RECV = 2,
};

typedef struct px_proto_req px_proto_req_t;
typedef void (*px_proto_cmpl_cb_t)(px_proto_req_t *req);
/* A receive's bytes [from, to) of its message have come, at `at`
 * (px_proto_irecv_drain). */
typedef void (*px_proto_drain_fn)(px_proto_req_t *req, const void *at, size_t from, size_t to);
/* A send's bytes [from, to) of its message are wanted, at `at`
 * (px_proto_isend_fill). */
typedef void (*px_proto_fill_fn)(px_proto_req_t *req, void *at, size_t from, size_t to);

struct px_proto_req {
    uint8_t kind;
    uint8_t mode;
    uint8_t rflags; /* PX_CHAN_F_* hints of a send */
    volatile uint8_t done;
    uint8_t cancelled;
    uint8_t bulk; /* receive: its data arrives by a bulk transfer (udp-zcopy) */
    int pending;  /* events still needed before done (send side) */
    uint32_t ctx;
    int rank; /* send: own rank in the communicator; recv: source or ANY */
    int tag;
    int peer; /* world rank of the destination (send) or matched source (recv) */
    void *buf;
    size_t len;
    /* results (receives) */
    int st_source, st_tag, st_error;
    size_t st_count;
    /* rendezvous */
    size_t rndv_total, rndv_got;
    uint64_t peer_id;          /* udp-zcopy receive: the sender's wire identifier */
    uint64_t id;               /* wire identifier while a peer may refer to it */
    void *tmp;                 /* truncation scratch */
    struct px_chan_route *dvc; /* rendezvous send to a network peer: the data's route */
    size_t head;               /* rendezvous send: bytes that went with the request */
    /* send: buf is written on demand (px_proto_isend_fill); bytes below
     * filled are there */
    px_proto_fill_fn fill;
    size_t filled;
    /* DATA frames to a shared-memory peer are filled in the ring's cells
     * (px_chan_send_fill): the bytes below filled are packed or handed to
     * such frames, the next cell gets byte fill_at on; fill_copy: frames
     * go from buf instead */
    size_t fill_at;
    uint8_t fill_copy;
    /* DATA frames to a shared-memory peer, sent as the ring takes them
     * (proto_am.c): the next from fill_off, up to fill_end; fill_busy of
     * them wait for room */
    size_t fill_off, fill_end;
    int fill_busy;
    /* send: frames to a network peer go from fill_off up to fill_end too
     * (px_proto_data_pump) */
    /* receive: the bytes that have landed in buf, from its start on, are
     * handed over as they come (px_proto_irecv_drain): drain(req, at, from, to),
     * bytes below drained so far; rx_expect: the end of the pieces given
     * out in order */
    px_proto_drain_fn drain;
    size_t drained, rx_expect;
    /* buf holds ring bytes, a larger message goes through them window by
     * window (px_proto_ring_size; proto_ring.c); rs, ss: the state of a
     * receive's or a send's ring then */
    size_t ring;
    struct px_proto_ring *rs;
    struct px_proto_sring *ss;
    px_list_t link;        /* posted queue */
    px_proto_cmpl_cb_t cb; /* optional, runs at completion */
};

/* A message that arrived before its receive was posted (also for Mprobe). */
typedef struct px_proto_unexp px_proto_unexp_t;

px_status_t px_proto_init(const px_boot_info_t *boot);
/* How far px_proto_flush waits. */
enum {
    PX_FLUSH_SENT,  /* nothing is queued to any peer */
    PX_FLUSH_ACKED, /* every peer has acknowledged everything sent to it */
    /* the last flush of a job: over a lossy transport, acknowledged and
     * every peer talked to has said it is done too (it may still need our
     * acknowledgements until then); elsewhere the same as PX_FLUSH_SENT */
    PX_FLUSH_LAST,
};
px_status_t px_proto_flush(int mode);
/* MPI_Comm_disconnect: what this process and the n peers sent each other
 * is acknowledged both ways (src/chan: px_chan_flush_peers); collective
 * over them. */
px_status_t px_proto_flush_peers(const int *peers, int n);
void px_proto_finalize(void);

/* Processes of other jobs (dynamic processes; boot.h and chan.h):
 * px_proto_card gives this process's address card, px_proto_peer_add makes
 * the channel to rank `rank` of job `job_id` from its card and the key both
 * jobs derived, and gives its peer number (from the job's size up). */
px_status_t px_proto_card(char *card, size_t len);
/* Forgets a process of another job no communicator names any more
 * (PX_ERR_BUSY while its channel still has traffic). */
px_status_t px_proto_peer_remove(int peer);
px_status_t px_proto_peer_add(uint64_t job_id, uint32_t rank, const uint8_t key[32],
                              const char *card, const char *node, int *peer_p);

px_status_t px_proto_isend(px_proto_req_t *req, int peer, uint32_t ctx, int my_rank, int tag,
                           const void *buf, size_t len, px_proto_mode_t mode);
/* The same, but buf is written on demand: fill(req, from, to) writes bytes
 * [from, to) of it (a non-contiguous type packed piece by piece), each
 * before they are first read. A message that goes as DATA frames after
 * the receiver's clear-to-send is filled frame by frame as they are sent,
 * so that the receiver takes the first while the next are packed;
 * otherwise whole at once. */
/* ring: 0, or the bytes of buf when px_proto_ring_size gave them: byte o
 * is then written at buf + o % ring, each [from, to) in one piece, once
 * the frames that held its place before are sent. */
px_status_t px_proto_isend_fill(px_proto_req_t *req, int peer, uint32_t ctx, int my_rank, int tag,
                                void *buf, size_t len, px_proto_mode_t mode, px_proto_fill_fn fill,
                                size_t ring);
px_status_t px_proto_irecv(px_proto_req_t *req, int src_peer, uint32_t ctx, int src_rank, int tag,
                           void *buf, size_t len);
/* The same, with drain(req, at, from, to) called as a message that comes
 * as DATA frames after a clear-to-send lands in buf in order, every
 * PX_PROTO_DRAIN_STEP bytes or more, so that the caller can unpack it
 * while the rest travels; req->drained says how far it went (what lies
 * beyond, up to st_count, is the caller's at completion). Frames from a
 * shared-memory peer that come in order are drained from the ring's cells
 * themselves, each as it arrives, without landing in buf. */
#define PX_PROTO_DRAIN_STEP ((size_t)256 << 10)
/* ring: 0, or the bytes of buf when px_proto_ring_size gave them: a
 * rendezvous message larger than that comes window by window, each asked
 * for once the one before it in buf is drained (bytes [from, to) of the
 * message at buf + from % ring, a window at a time); every byte is
 * drained before it completes. */
px_status_t px_proto_irecv_drain(px_proto_req_t *req, int src_peer, uint32_t ctx, int src_rank,
                                 int tag, void *buf, size_t len, px_proto_drain_fn drain,
                                 size_t ring);
/* The buffer a receive of len bytes drained as it lands, or a send of
 * len bytes filled as it goes, needs: len, or PX_PROTO_RING_WIN * 2 for a
 * larger message than that when no eager message can be larger than a
 * window. */
#define PX_PROTO_RING_WIN ((size_t)4 << 20)
size_t px_proto_ring_size(size_t len);
/* Removes a posted receive that has not matched yet; 1 when cancelled. */
int px_proto_cancel_recv(px_proto_req_t *req);

/* Probe: finds (without receiving) the first unexpected message matching. */
int px_proto_iprobe(uint32_t ctx, int src_rank, int tag, int *src_p, int *tag_p, size_t *len_p);
/* Matched probe: removes the message from the unexpected queue. */
px_proto_unexp_t *px_proto_improbe(uint32_t ctx, int src_rank, int tag, int *src_p, int *tag_p,
                                   size_t *len_p);
/* drain and ring: as px_proto_irecv_drain's */
px_status_t px_proto_mrecv(px_proto_req_t *req, px_proto_unexp_t *msg, void *buf, size_t len,
                           px_proto_drain_fn drain, size_t ring);

/* Polls every channel once; returns the number of events. */
int px_proto_progress(void);
/* The layer above's own progress (operations it runs in steps, such as
 * nonblocking collectives), called by every px_proto_progress while set;
 * returns its number of events. NULL while it has nothing under way, so
 * that the polling loop pays one branch. */
void px_proto_set_progress_hook(int (*hook)(void));
/* The progress thread (PX_ASYNC_PROGRESS, proto_async.c): needs the
 * library's lock on (px_cs_on); stopped before px_proto_finalize. */
px_status_t px_proto_async_start(void);
void px_proto_async_stop(void);
/* With MPI_THREAD_MULTIPLE, after completing something outside a request
 * of this layer (a generalized request): wakes the threads that wait for
 * another's progress, the one asleep in the kernel included. This layer's
 * requests do it themselves when they complete. */
void px_proto_wake(void);
/* One step of a wait loop: progress, then spin, yield or block by policy. */
void px_proto_wait_step(unsigned *idle);
/* The same for a wait on a store a peer makes into memory shared with it
 * (not a message), which the peer follows with px_proto_peer_wake: the
 * caller must look at that memory between two calls, as a loop does. */
void px_proto_wait_step_shared(unsigned *idle);
/* Requests under way that complete on such stores (persistent collectives
 * on shared memory): while there are any (delta +1 at a start, -1 when
 * done), every wait step looks at memory once more before it sleeps, as
 * px_proto_wait_step_shared does. */
void px_proto_shared_pending(int delta);
static inline void px_proto_wait(px_proto_req_t *req)
{
    unsigned idle = 0;
    while (!req->done)
        px_proto_wait_step(&idle);
}

/* Peers that failed (connection lost): operations to them fail. */
int px_proto_peer_failed(int peer);
int px_proto_oversubscribed(void);
/* Whether peer runs on this machine (reached through shared memory or self). */
int px_proto_peer_local(int peer);
/* Copies len bytes at raddr in peer's address space into local, through its
 * channel's single-copy read (shared memory: process_vm_readv);
 * PX_ERR_UNSUPPORTED when the channel has none or the kernel forbids it. */
px_status_t px_proto_peer_read(int peer, void *local, uint64_t raddr, size_t len);
/* The other way: len bytes at local into the peer's memory at raddr. */
px_status_t px_proto_peer_write(int peer, const void *local, uint64_t raddr, size_t len);
/* After storing into memory shared with a local peer that the peer waits on
 * (px_proto_wait_step may sleep in the kernel, where only the channel's
 * signals reach it): wakes it if it sleeps. px_proto_peers_wake: whether
 * any peer may need it; 0 (no peer sleeps), the calls can be skipped. */
int px_proto_peers_wake(void);
void px_proto_peer_wake(int peer);
/* The job's identifier (names shared-memory segments). */
uint64_t px_proto_job_id(void);
const char *px_proto_channel_name(int peer);
void px_proto_print_stats(void);

/* ---------- sections of the topology profile (proto_prof.c) ---------- */

/* Counts what this process sends to each peer (messages and bytes) from
 * now (signo 0), or only between a first and a second signo, a third and
 * a fourth, ... (a handler is installed for it). */
px_status_t px_proto_prof_start(int signo);
/* Begins or ends a section (the progress engine calls it after a signal). */
void px_proto_prof_toggle(void);
/* Ends the open section; out[2 * peer] = messages, out[2 * peer + 1] =
 * bytes sent to each world rank in every section; returns the number of
 * sections, or -1 when not started. */
int px_proto_prof_take(uint64_t *out);
void px_proto_prof_stop(void);
/* Set by the profile's signal; px_proto_progress toggles and clears it. */
extern _Atomic int px_proto_prof_req;

/* ---------- the tool interface (proto_stats.c, src/mpi/tool) ---------- */

/* Every counter of this layer and those below it, into c[PX_CTR_N]
 * (src/util/tool.h); zeros before px_proto_init and after finalize. */
void px_proto_counters(uint64_t *c);
/* Unexpected messages and posted receives now whose context id is in
 * [ctx, ctx + nctx) (a communicator's). */
void px_proto_queue_len(uint32_t ctx, uint32_t nctx, uint64_t *unexp_p, uint64_t *posted_p);
/* Bytes sent to and received from peer so far; 0, or -1 when there is no
 * such peer (or no job). */
int px_proto_peer_traffic(int peer, uint64_t *sent_p, uint64_t *received_p);
/* A SIZE parameter a lower layer resolves when its row says "auto": 1 and
 * the value taken, or 0 when not resolved (yet). */
int px_proto_size_in_effect(const char *param, uint64_t *value_p);

/* ---------- one-sided communication (proto_rma.c) ----------
 *
 * A window is registered here under an id its members agreed on; every
 * operation is an active message written at the target by the target's
 * progress: puts land in the window as they arrive (striped when large),
 * accumulates are applied in order of arrival from one origin, gets and
 * fetching operations answer with DATA frames into the origin's request.
 * Puts and gets to this process itself, and large ones to a peer on this
 * node whose memory can be read (CMA), are copied directly.
 *
 * Completion is proved by counting: an origin counts the payload bytes it
 * sent to each target, a target those it has applied from each origin;
 * a flush, unlock or complete carries the origin's count and the target
 * answers once it has applied that much. Nothing here knows datatypes or
 * operations: the layer above applies accumulates (apply). */
typedef struct px_proto_win px_proto_win_t;

/* Applies operation op on n bytes of elements of type `type` at dst, with
 * src (both the layer above's codes, carried as they are); 0, or -1 when
 * they are not valid. */
typedef int (*px_proto_rma_apply_fn)(uint32_t op, uint32_t type, void *dst, const void *src,
                                     size_t n);

enum {
    PX_RMA_CAS = 1, /* accumulate: compare-and-swap (payload: compare, then value) */
};

/* A window of `size` members (world rank of each in peers, copied) whose
 * local part is [base, base + len) (dynamic: the attached regions). NULL
 * when out of memory or the id is taken. */
px_proto_win_t *px_proto_win_new(uint32_t id, int me, int size, const int *peers, void *base,
                                 size_t len, int dynamic, px_proto_rma_apply_fn apply);
/* Every member's part (address and length), for direct copies; 0, or -1
 * when out of memory (then there are none). */
int px_proto_win_parts(px_proto_win_t *w, const uint64_t *rbase, const uint64_t *rlen);
void px_proto_win_free(px_proto_win_t *w);
/* Dynamic windows: memory that remote operations may address (absolute
 * addresses); 0, -1 when out of memory or (detach) not attached. */
int px_proto_win_attach(px_proto_win_t *w, void *base, size_t len);
int px_proto_win_detach(px_proto_win_t *w, const void *base);

/* Operations. A send-side request (req, may be NULL) counts their frames
 * in req->pending (px_proto_rma_req_init sets it to 1 for the caller's own
 * token, given back with px_proto_rma_req_issued); without one the
 * window counts them (px_proto_rma_local_done). A fetching operation's
 * result goes to its receive-side request at offset `at`. */
void px_proto_rma_req_init(px_proto_req_t *req, int kind, void *buf, size_t total);
/* The caller has issued everything of a send-side request (its token). */
void px_proto_rma_req_issued(px_proto_req_t *req);
/* Ends a result request that will not be answered (its operation failed). */
void px_proto_rma_req_fail(px_proto_req_t *req, px_status_t st);
px_status_t px_proto_rma_put(px_proto_win_t *w, int target, uint64_t off, const void *buf,
                             size_t len, px_proto_req_t *req);
px_status_t px_proto_rma_get(px_proto_win_t *w, int target, uint64_t off, size_t len,
                             px_proto_req_t *res, size_t at);
/* Accumulate (res NULL) or fetch-and-accumulate of len bytes of elements
 * of `unit` bytes (each applied whole); flags PX_RMA_*. */
px_status_t px_proto_rma_acc(px_proto_win_t *w, int target, uint64_t off, const void *buf,
                             size_t len, size_t unit, uint32_t op, uint32_t type, unsigned flags,
                             px_proto_req_t *req, px_proto_req_t *res, size_t at);

/* Synchronisation, each the start of an exchange whose end the caller
 * waits for with the matching test. */
px_status_t px_proto_rma_lock(px_proto_win_t *w, int target, int exclusive);
int px_proto_rma_locked(px_proto_win_t *w, int target);
/* Flush (and unlock: release the lock once everything is applied). */
px_status_t px_proto_rma_flush(px_proto_win_t *w, int target, int unlock);
int px_proto_rma_flushed(px_proto_win_t *w, int target);
/* Frames sent without a request have all completed at this side. */
int px_proto_rma_local_done(px_proto_win_t *w);
/* The last small operation to each target may wait, for a flush or unlock
 * to ride on it: sends them (before waiting for an operation's completion). */
void px_proto_rma_push(px_proto_win_t *w);
/* Post/start/complete/wait: a target posts to each origin; an origin
 * consumes one post per target; complete carries the origin's count; the
 * target consumes one completion per origin once it has applied it. */
px_status_t px_proto_rma_post(px_proto_win_t *w, int origin);
int px_proto_rma_take_post(px_proto_win_t *w, int target);
px_status_t px_proto_rma_complete(px_proto_win_t *w, int target);
int px_proto_rma_take_complete(px_proto_win_t *w, int origin);
/* Fence: bytes sent to each target so far, gets' included (the caller
 * exchanges them), and whether those from origin have all been applied
 * (gets answered, their answers no longer reading the window). */
uint64_t px_proto_rma_sent(px_proto_win_t *w, int target);
int px_proto_rma_applied(px_proto_win_t *w, int origin, uint64_t bytes);
/* Of those, the bytes of puts and accumulates: what only a flush at the
 * target can complete (a get is complete once its answer has arrived). */
uint64_t px_proto_rma_sent_updates(px_proto_win_t *w, int target);

#endif
