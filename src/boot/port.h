/* Ports and names for MPI's dynamic processes (MPI_Open_port,
 * MPI_Comm_accept, MPI_Comm_connect, MPI_Comm_join, MPI_Publish_name ...):
 * the sockets over which the roots of two groups meet, how they prove to
 * each other that they may, and the name service.
 *
 * A port is a listening TCP socket on the address through which the
 * launcher reaches this process (loopback for a singleton), named
 *     plexus:<token>:<tcp port>:<host>
 * where token is 16 random bytes in hex. The name is the capability: both
 * ends derive a key from the token (HMAC-SHA256(token, "plexus port")) and
 * prove it to each other by challenge and response, so the token never
 * crosses the wire and a connection that cannot prove it is closed without
 * disturbing the accept. After that the two ends exchange bytes with
 * px_port_swap, which checks nothing itself: the caller validates. */
#ifndef PX_BOOT_PORT_H
#define PX_BOOT_PORT_H

#include <stddef.h>
#include <stdint.h>
#include "../util/px_status.h"

#define PX_PORT_NAME_MAX 256 /* MPI_MAX_PORT_NAME */

typedef struct px_port px_port_t;

/* Called between polls while a call waits (progress of the layers above). */
typedef void (*px_port_idle_fn)(void *arg);

/* Opens a port on host ("" or NULL: 127.0.0.1); its name goes to name. */
px_status_t px_port_open(const char *host, px_port_t **port_p, char name[PX_PORT_NAME_MAX]);
void px_port_close(px_port_t *p);
const char *px_port_name(const px_port_t *p);

/* Waits for a connection that proves the port's token (others are closed
 * and waiting goes on); timeout_ms < 0 waits for ever. *fd_p: the socket. */
px_status_t px_port_accept(px_port_t *p, int timeout_ms, px_port_idle_fn idle, void *arg,
                           int *fd_p);
/* Connects to the port `name` and proves the token; PX_ERR_INVALID_PARAM
 * for a name that is not a port's, PX_ERR_NOT_FOUND when nobody listens
 * there, PX_ERR_TIMEOUT when nobody accepts within timeout_ms. */
px_status_t px_port_connect(const char *name, int timeout_ms, px_port_idle_fn idle, void *arg,
                            int *fd_p);
/* MPI_Comm_join: both ends of a connected socket prove `secret` to each
 * other (the same job's) and learn the other's id (job id and world rank,
 * 12 bytes, sent as given; filled also when the proof fails). PX_ERR_AUTH
 * when the other cannot prove it. idle(arg), when given, runs while it
 * waits (as in px_port_swap). */
px_status_t px_port_join(int fd, const uint8_t *secret, size_t slen, const uint8_t id[12],
                         uint8_t peer_id[12], int timeout_ms, px_port_idle_fn idle, void *arg);
/* Sends olen bytes and receives ilen at once (neither end blocks the
 * other, whatever the sizes); PX_ERR_IO when the other end has gone. */
px_status_t px_port_swap(int fd, const void *out, size_t olen, void *in, size_t ilen,
                         int timeout_ms, px_port_idle_fn idle, void *arg);

/* A key for the two groups that met through port `name`, known to both
 * roots and never sent: HMAC-SHA256(the port's key, "plexus peers" || salt),
 * salt (at most 52 bytes) what the roots swapped. */
px_status_t px_port_derive(const char *name, const uint8_t *salt, size_t slen, uint8_t out[32]);

/* The name service: one file per name in a directory of this user's
 * (PX_NAME_DIR, else $XDG_RUNTIME_DIR/plexus-names, else
 * /tmp/plexus-names-<uid>), mode 0700, refused when another user owns it or
 * others may enter it. PX_ERR_EXISTS: published already; PX_ERR_NOT_FOUND:
 * not published; PX_ERR_INVALID_PARAM: a name too long or empty. */
px_status_t px_name_publish(const char *service, const char *port);
px_status_t px_name_lookup(const char *service, char port[PX_PORT_NAME_MAX]);
px_status_t px_name_unpublish(const char *service);

#endif
