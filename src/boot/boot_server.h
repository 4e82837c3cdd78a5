/* The bootstrap server embedded in pxrun: accepts and authenticates rank
 * connections, runs fences, relays aborts. Single-threaded and non-blocking:
 * the caller polls px_boot_server_fd() and calls px_boot_server_progress(). */
#ifndef PX_BOOT_SERVER_H
#define PX_BOOT_SERVER_H

#include <stdint.h>
#include "../util/px_status.h"

typedef struct px_boot_server px_boot_server_t;

typedef struct px_boot_server_conf {
    const char *bind_addr; /* IPv4 address to listen on and advertise */
    int port;              /* 0 picks a free port */
    int size;
    int num_nodes;
    int universe_size;
    const int *node_of;    /* node_of[rank], copied */
    const uint8_t *secret; /* 32 bytes, copied */
    uint64_t job_id;
} px_boot_server_conf_t;

typedef void (*px_boot_server_rank_cb_t)(void *arg, int rank);
typedef void (*px_boot_server_lost_cb_t)(void *arg, int rank, const char *why);
typedef void (*px_boot_server_abort_cb_t)(void *arg, int rank, int code, const char *msg);
typedef void (*px_boot_server_msg_cb_t)(void *arg, const char *msg);

typedef struct px_boot_server_cbs {
    void *arg;
    px_boot_server_rank_cb_t connected; /* rank authenticated its kv connection */
    px_boot_server_rank_cb_t finalized; /* rank finished orderly */
    px_boot_server_lost_cb_t lost;      /* connection of a rank gone before finalize */
    px_boot_server_abort_cb_t aborted;  /* rank asked to abort the job */
    px_boot_server_msg_cb_t job_error;  /* job can no longer proceed (e.g. fence after finalize) */
    px_boot_server_msg_cb_t log;        /* informational: rejected connections, ... */
} px_boot_server_cbs_t;

px_status_t px_boot_server_create(const px_boot_server_conf_t *conf,
                                  const px_boot_server_cbs_t *cbs, px_boot_server_t **srv_p);
/* One descriptor (epoll) that becomes readable when progress has work. */
int px_boot_server_fd(const px_boot_server_t *srv);
/* "ip:port" to hand to the ranks in PX_BOOT_ADDR. */
const char *px_boot_server_addr(const px_boot_server_t *srv);
/* Handles every ready connection and expired handshakes; never blocks. */
void px_boot_server_progress(px_boot_server_t *srv);
/* Queues ABORT(code, msg) on every rank's ctl connection and tries to send it. */
void px_boot_server_abort_all(px_boot_server_t *srv, int code, const char *msg);
/* Asks every connected rank to print its communication state (a job that
 * seems stuck, before it is ended). */
void px_boot_server_dump_all(px_boot_server_t *srv);
/* Number of ranks with an authenticated kv connection so far (ever). */
int px_boot_server_num_connected(const px_boot_server_t *srv);
int px_boot_server_rank_connected(const px_boot_server_t *srv, int rank);
int px_boot_server_rank_finalized(const px_boot_server_t *srv, int rank);
void px_boot_server_destroy(px_boot_server_t *srv);

#endif
