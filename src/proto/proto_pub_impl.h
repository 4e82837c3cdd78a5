/* The public active-message interface: what its two files share
 * (proto_pub.c: set-up, messages, progress; proto_pub_rma.c: the
 * one-sided operations on registered regions). Internal to proto. */
#ifndef PX_PROTO_PUB_IMPL_H
#define PX_PROTO_PUB_IMPL_H

#include "proto_impl.h"
#include "../util/cs.h"

#include <plexus/am.h>

/* The wire header of a message to a public id: the program's header
 * follows the first 16 bytes, in the channel's header. */
typedef struct px_pub_hdr {
    uint8_t am, flags, hlen, pad;
    uint32_t pad2;
    uint64_t op; /* the sender's operation to acknowledge; 0: none */
    char user[PLEXUS_AM_HDR_MAX];
} px_pub_hdr_t;
#define PX_PUB_HDR0 offsetof(px_pub_hdr_t, user)
_Static_assert(sizeof(px_pub_hdr_t) <= PX_CHAN_HDR_MAX, "a public header fits a channel's");

/* payloads up to this size are copied into the descriptors themselves */
#define PX_PUB_INLINE 256

struct plexus_am_ep {
    int rank;
};

struct plexus_am_token {
    int rank;
};

/* An operation whose completion is told (or whose payload is held). */
typedef struct px_pub_op {
    uint32_t idx, gen;
    struct px_pub_op *next_free;
    uint8_t busy, get;
    int peer;
    int status;     /* the first failure */
    unsigned lpend; /* local events still to come (1 while issuing) */
    unsigned rpend; /* acknowledgements still to come (1 while issuing) */
    plexus_am_cmpl_t c;
    char *dst; /* get: where the data goes */
    size_t len, got;
    void *bounce; /* a copy of a large payload (malloc) */
    char inl[PX_PUB_INLINE];
} px_pub_op_t;

/* A frame whose payload is arriving: the context of rx_done. */
enum { PX_PUB_RX_MSG, PX_PUB_RX_PUT, PX_PUB_RX_GETR };
typedef struct px_pub_rx {
    uint8_t rk; /* PX_PUB_RX, first: proto_am.c routes rx_done by it */
    uint8_t kind, id, hlen, own;
    uint64_t op; /* MSG, PUT: the sender's operation to acknowledge */
    px_pub_op_t *getop;
    void *data;
    size_t len;
    struct px_pub_rx *next_free;
    char hdr[PLEXUS_AM_HDR_MAX];
    char inl[PX_PUB_INLINE];
} px_pub_rx_t;

struct plexus_am_mem {
    void *base;
    size_t len;
    uint32_t idx;
};

typedef struct px_pub_state {
    int users;   /* plexus_am_init calls not yet finalized */
    int owner;   /* this file set the job up (no MPI) */
    int handler; /* depth of handlers running */
    struct plexus_am_ep *eps;
    struct {
        plexus_am_handler_t fn;
        plexus_am_place_t place;
        void *arg;
    } h[PX_AM_USER_N];
    px_pub_op_t **ops, *free_ops;
    uint32_t nops;
    px_pub_rx_t *free_rx;
    struct plexus_am_mem **mems;
    uint32_t *mgens, nmems;
    uint64_t bar_epoch, bar_released, bar_arrived[2];
} px_pub_state_t;

extern px_pub_state_t px_pub;

#define PX_PUB_ENTER()                                                                             \
    int px_held_ = px_cs_enter();                                                                  \
    if (!px_pub.users) {                                                                           \
        px_cs_leave(&px_held_);                                                                    \
        return PLEXUS_AM_ERR_NOT_INIT;                                                             \
    }
#define PX_PUB_RETURN(v)                                                                           \
    do {                                                                                           \
        int px_rv_ = (v);                                                                          \
        px_cs_leave(&px_held_);                                                                    \
        return px_rv_;                                                                             \
    } while (0)

int px_pub_err(px_status_t st);
px_pub_op_t *px_pub_op_get(int peer, const plexus_am_cmpl_t *c);
void px_pub_op_put(px_pub_op_t *op);
uint64_t px_pub_op_id(const px_pub_op_t *op);
px_pub_op_t *px_pub_op_lookup(uint64_t id);
void px_pub_fail(px_pub_op_t *op, int st);
void px_pub_get_done(px_pub_op_t *op, int st);
int px_pub_wants_local(const plexus_am_cmpl_t *c);
int px_pub_wants_remote(const plexus_am_cmpl_t *c);
px_status_t px_pub_frame(px_pub_op_t *op, const void *hdr, size_t hdr_len, const struct iovec *iov,
                         int iovcnt, int acked);
int px_pub_issued(px_pub_op_t *op, px_status_t st);
int px_pub_ep_ok(plexus_am_ep_t ep);
px_pub_rx_t *px_pub_rx_get(int kind);
void px_pub_ack(int peer, uint64_t op, int st);

/* proto_pub_rma.c */
void px_pub_rma_register(void);
void px_pub_rma_finalize(void);

#endif
