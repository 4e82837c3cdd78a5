/* Plexus active messages: the public interface to the layer that Plexus's
 * own MPI protocols are built on (docs/am.md).
 *
 * A job's processes reach each other through endpoints, one per peer,
 * made from the same bootstrap as MPI. A message is a handler id, a small
 * header and a payload (contiguous or an I/O vector); at the target the
 * handler registered under that id runs in the progress context (inside
 * plexus_am_progress or a blocking wait, on the thread that called it) and
 * may reply. One-sided put and get address memory that the target has
 * registered. Completion is told by counters or callbacks: local (the
 * sender's buffers may be reused) and remote (the target's handler has run,
 * or the put's data is in place).
 *
 * The symbols live in libmpi (link with -lmpi, or build with mpicc): the
 * interface shares the channels, progress and bootstrap of an MPI job, so
 * it can be used inside one (after MPI_Init) or alone in a program started
 * by pxrun. Calls return PLEXUS_AM_OK (0) or a negative PLEXUS_AM_ERR_*. */
#ifndef PLEXUS_AM_H
#define PLEXUS_AM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The interface's version: a program compiled against MAJOR.MINOR runs on
 * a library of the same MAJOR and a MINOR at least as large. */
#define PLEXUS_AM_VERSION_MAJOR 1
#define PLEXUS_AM_VERSION_MINOR 1
#define PLEXUS_AM_VERSION ((PLEXUS_AM_VERSION_MAJOR << 16) | PLEXUS_AM_VERSION_MINOR)

/* Handler ids are 0 .. PLEXUS_AM_HANDLERS_MAX - 1. */
#define PLEXUS_AM_HANDLERS_MAX 32
/* The largest header of a message, in bytes. */
#define PLEXUS_AM_HDR_MAX 48
/* The most pieces of an I/O vector in one message. */
#define PLEXUS_AM_IOV_MAX 8

enum {
    PLEXUS_AM_OK = 0,
    PLEXUS_AM_ERR_NOT_INIT = -1,       /* plexus_am_init has not been called */
    PLEXUS_AM_ERR_BAD_ID = -2,         /* handler id out of range */
    PLEXUS_AM_ERR_NO_HANDLER = -3,     /* the target has no handler under that id */
    PLEXUS_AM_ERR_BAD_EP = -4,         /* no such peer */
    PLEXUS_AM_ERR_TOO_BIG = -5,        /* header or payload larger than allowed */
    PLEXUS_AM_ERR_NOT_REGISTERED = -6, /* the region is not (or no longer) registered */
    PLEXUS_AM_ERR_RANGE = -7,          /* outside the registered region */
    PLEXUS_AM_ERR_INVALID = -8,        /* a bad argument (NULL, iovcnt) */
    PLEXUS_AM_ERR_IN_HANDLER = -9,     /* a blocking call inside a handler */
    PLEXUS_AM_ERR_NO_MEMORY = -10,
    PLEXUS_AM_ERR_PEER = -11, /* the peer is unreachable (failed) */
    PLEXUS_AM_ERR_INIT = -12, /* the job could not be set up */
};

/* A peer's endpoint, valid from plexus_am_init to plexus_am_finalize. */
typedef struct plexus_am_ep *plexus_am_ep_t;

/* Counts completions: count grows by one for each operation completed
 * (successfully or not); error holds the first failure's code (0: none). */
typedef struct plexus_am_counter {
    volatile uint64_t count;
    volatile int error;
} plexus_am_counter_t;

/* status: PLEXUS_AM_OK or the failure's code. */
typedef void (*plexus_am_cb_t)(void *arg, int status);

/* How an operation tells its completions; any field may be NULL. Copied
 * at the call. local: the operation's buffers may be reused (a get's data
 * is in place). remote: the target has run its handler (send) or has the
 * data in place (put); a get's remote completion is its local one.
 * Without a local completion the payload is copied at the call. */
typedef struct plexus_am_cmpl {
    plexus_am_counter_t *local;
    plexus_am_counter_t *remote;
    plexus_am_cb_t local_cb;
    plexus_am_cb_t remote_cb;
    void *arg; /* for both callbacks */
} plexus_am_cmpl_t;

/* What a handler is given about its message: valid while it runs. */
typedef struct plexus_am_token plexus_am_token_t;

/* Runs once the message's payload is in place (data, len; NULL, 0 when
 * there is none), in the progress context: it must not block (no
 * plexus_am_wait*, no MPI call that waits), but it may send and reply.
 * data belongs to the library after it returns unless place gave it. */
typedef void (*plexus_am_handler_t)(plexus_am_token_t *tok, const void *hdr, size_t hdr_len,
                                    void *data, size_t len, void *arg);
/* Optional, runs when the header arrives: returns where the len bytes of
 * payload go (at least len bytes the program owns), or NULL for a buffer
 * of the library's. The handler then runs with data at that address. */
typedef void *(*plexus_am_place_t)(plexus_am_token_t *tok, const void *hdr, size_t hdr_len,
                                   size_t len, void *arg);

/* ---------- set-up ---------- */

/* Joins the job. Inside an MPI job (after MPI_Init) it uses MPI's
 * channels; in a program without MPI it bootstraps them itself
 * (collective over the job then; the program is started by pxrun, or is a
 * job of one). Calls nest: each needs its plexus_am_finalize. */
int plexus_am_init(void);
/* Leaves. Alone (without MPI) the last call is collective: it waits until
 * every process has sent everything, then closes the channels. Operations
 * of this process must have completed. */
int plexus_am_finalize(void);
/* The library's interface version (PLEXUS_AM_VERSION of its build); major
 * and minor may be NULL. Callable before init. */
int plexus_am_version(int *major_p, int *minor_p);
const char *plexus_am_strerror(int code);

int plexus_am_rank(void);
int plexus_am_size(void);
/* The endpoint to rank (this process itself included). */
int plexus_am_ep(int rank, plexus_am_ep_t *ep_p);
int plexus_am_ep_rank(plexus_am_ep_t ep);
/* The largest payload of one message to ep (put and get have no limit). */
size_t plexus_am_max_data(plexus_am_ep_t ep);
/* The channel that carries messages to ep now: "self", "shm", "tcp",
 * "udp", "udp+tcp" (a hybrid channel once its connection is in use) or
 * "ofi"; NULL for a bad endpoint. Since 1.1. */
const char *plexus_am_ep_channel(plexus_am_ep_t ep);

/* ---------- handlers ---------- */

/* Registers handler (with place, optional) under id; a NULL handler
 * removes it. A message for an id with no handler is dropped, and its
 * sender's remote completion fails with PLEXUS_AM_ERR_NO_HANDLER. Register
 * before peers send (e.g. before a plexus_am_barrier). */
int plexus_am_register(unsigned id, plexus_am_handler_t handler, plexus_am_place_t place,
                       void *arg);

/* ---------- messages ---------- */

/* hdr (hdr_len <= PLEXUS_AM_HDR_MAX, copied at the call) and len bytes of
 * data to handler id at ep. cmpl may be NULL. Never blocks: the message is
 * queued when the channel is busy. */
int plexus_am_send(plexus_am_ep_t ep, unsigned id, const void *hdr, size_t hdr_len,
                   const void *data, size_t len, const plexus_am_cmpl_t *cmpl);
/* The same with a payload in iovcnt <= PLEXUS_AM_IOV_MAX pieces. */
int plexus_am_sendv(plexus_am_ep_t ep, unsigned id, const void *hdr, size_t hdr_len,
                    const struct iovec *iov, int iovcnt, const plexus_am_cmpl_t *cmpl);
/* Inside a handler: a message back to the sender of tok. */
int plexus_am_reply(plexus_am_token_t *tok, unsigned id, const void *hdr, size_t hdr_len,
                    const void *data, size_t len, const plexus_am_cmpl_t *cmpl);
/* The rank and endpoint of the message's sender. */
int plexus_am_token_rank(const plexus_am_token_t *tok);
plexus_am_ep_t plexus_am_token_ep(const plexus_am_token_t *tok);

/* ---------- one-sided: registered memory ---------- */

typedef struct plexus_am_mem *plexus_am_mem_t;
/* What a peer needs to address a region: sent to it by any means (a
 * message, MPI); plain data. */
typedef struct plexus_am_rkey {
    uint64_t w[3];
} plexus_am_rkey_t;

int plexus_am_mem_register(void *base, size_t len, plexus_am_mem_t *mem_p);
/* Put and get naming the region fail from then on; those under way must
 * have completed. The handle is gone with the region: using it again, or
 * deregistering it twice, is an error the library cannot detect (as with
 * free). */
int plexus_am_mem_deregister(plexus_am_mem_t mem);
int plexus_am_mem_rkey(plexus_am_mem_t mem, plexus_am_rkey_t *rkey_p);

/* len bytes at src into the region of rkey at ep, from offset off. */
int plexus_am_put(plexus_am_ep_t ep, const void *src, size_t len, const plexus_am_rkey_t *rkey,
                  uint64_t off, const plexus_am_cmpl_t *cmpl);
/* len bytes of the region of rkey at ep, from offset off, into dst. */
int plexus_am_get(plexus_am_ep_t ep, void *dst, size_t len, const plexus_am_rkey_t *rkey,
                  uint64_t off, const plexus_am_cmpl_t *cmpl);

/* ---------- progress ---------- */

/* Polls every channel once, running the handlers of what arrived;
 * returns the number of events (0: nothing happened). */
int plexus_am_progress(void);
/* Progresses until counter->count >= value (PLEXUS_AM_OK), spinning,
 * yielding or sleeping as PX_PROGRESS_MODE says; then the counter's error. */
int plexus_am_wait_counter(plexus_am_counter_t *counter, uint64_t value);
/* Progresses until *flag is non-zero (set by a handler or callback). */
int plexus_am_wait_flag(volatile int *flag);
/* Every process of the job reaches it before any leaves; progresses
 * (handlers run) meanwhile. */
int plexus_am_barrier(void);

#ifdef __cplusplus
}
#endif

#endif
