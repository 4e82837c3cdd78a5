/* Rails and paths of the IP transports (tcp, udp): which local addresses
 * carry data, what a rank publishes, and how two ranks pair their addresses
 * into subchannels.
 *
 * Every rank publishes its data addresses under the transport's name ("tcp",
 * "udp") in the bootstrap store:
 *   "<ifname>,<a.b.c.d>,<prefix>,<port>,<flags>;..."
 * flags "r" = a rail address, "b" = the bootstrap-network address (used only
 * when the two ranks share no rail subnet). The subchannels between ranks A
 * < B are enumerated from A's list: for each of A's rail addresses in order,
 * the first of B's rail addresses on the same subnet (and not equal to it:
 * an identical address on two nodes is a local-only bridge) makes one
 * subchannel, at most PX_PATHS per interface of A. Both sides compute the
 * same list from the same published data, so subchannel k means the same
 * address pair at both ends, whichever of the two transports carries it. */
#ifndef PX_NET_ADDR_H
#define PX_NET_ADDR_H

#include "net.h"

#include <net/if.h>
#include <netinet/in.h>

#define PX_NET_MAX_ADDR 16

typedef struct px_net_addr {
    char ifname[IFNAMSIZ];
    struct in_addr addr;
    int prefix;
    uint16_t port;
    int rail; /* ordinal of the interface among this rank's rails, -1 bootstrap */
    int boot; /* the bootstrap-network address, not a rail */
} px_net_addr_t;

typedef struct px_net_addr_pair {
    int local;                 /* index into the local address list */
    struct sockaddr_in remote; /* where to connect or send */
    px_net_sub_info_t info;
} px_net_addr_pair_t;

/* The subchannels to one peer. An allocated one holds only its n pairs. */
typedef struct px_net_addr_peer {
    int n;
    px_net_addr_pair_t pair[PX_NET_MAX_SUB];
} px_net_addr_peer_t;

/* Local data addresses from PX_RAILS (or PX_IFACE), or discovered; `boot_addr`
 * is the address that routes to the launcher (loopback for a local job).
 * Returns the count, or a negative status with the reason logged. */
int px_net_addr_local(struct in_addr boot_addr, int *explicit_p, px_net_addr_t *out, int max);

/* The local address that reaches the launcher (loopback for a local job),
 * as px_net_addr_local wants it. */
struct in_addr px_net_addr_boot(const px_boot_info_t *boot);

/* Serialises / parses the published list. Parsing validates every field. */
int px_net_addr_format(const px_net_addr_t *a, int n, char *buf, size_t len);
int px_net_addr_parse(const char *s, px_net_addr_t *out, int max);

/* Pairs the lists of ranks lo < hi into subchannels, from the point of view
 * of rank lo when me_is_lo, else of rank hi. Ranks of one node may pair an
 * address with itself. Returns the count, its negation when only the
 * bootstrap network is shared, or 0. */
int px_net_addr_pair(const px_net_addr_t *lo, int nlo, const px_net_addr_t *hi, int nhi,
                     int me_is_lo, int same_node, int max_paths, px_net_addr_peer_t *out);

/* A path check of one subchannel (PX_NET_CAP_PATH_CHECK): a TCP connection
 * attempt from `local`, out of interface `ifname` only (another route would
 * answer for another path), to `remote`. The peer's kernel answers (a
 * connection, or a refusal when nothing listens there) whatever its process
 * is doing; a dead path answers nothing. Nothing is ever sent on the
 * connection. `chk` holds the attempt under way between calls (fd -1: none).
 * Returns 1 (the path works), 0 (not known yet: call again) or -1 (no
 * answer within timeout_ns, or the network refuses). */
typedef struct px_net_path_chk {
    int fd;
    uint64_t t0;
} px_net_path_chk_t;
int px_net_addr_path_check(px_net_path_chk_t *chk, const char *ifname, struct in_addr local,
                           const struct sockaddr_in *remote, uint64_t timeout_ns, const char *net,
                           int rank);
/* Ends an attempt under way. */
void px_net_addr_path_check_end(px_net_path_chk_t *chk);

/* Gives a socket of subchannel `info` its lane's marks (IP_TOS, then
 * SO_PRIORITY, which IP_TOS would otherwise overwrite); a mark the kernel
 * refuses is logged once and the socket works unmarked. */
void px_net_addr_mark(int fd, const px_net_sub_info_t *info, const char *net);

/* Makes the transport's endpoint of a subchannel, NULL when out of memory. */
typedef px_net_ep_t *(*px_net_addr_ep_new_t)(px_net_iface_t *iface, int rank, int sub,
                                             const px_net_addr_pair_t *pair);

/* What one IP transport's interface holds of addresses: its own, one
 * socket each (listening, for stream sockets) in one epoll set where
 * socket i is tagged (void *)(i + 1), the subchannels to every peer,
 * paired on first use from what the peer published under `net`, and the
 * transport's endpoint of each.
 *
 * The interface of tcp and udp begins with it, and their endpoint with
 * its owner (void *owner as first member): the px_net_addr_iface_* and
 * px_net_addr_ep_* functions below then serve in their ops tables as they
 * are. */
typedef struct px_net_addrs {
    const char *net; /* "tcp", "udp": the bootstrap key, and the tag of its messages */
    int me, nranks;
    int nlocal;
    px_net_addr_t local[PX_NET_MAX_ADDR];
    int fd[PX_NET_MAX_ADDR]; /* the socket of each local address */
    int epfd;
    int explicit_rails;         /* PX_RAILS (or PX_IFACE) named them */
    px_net_addr_peer_t **peers; /* per rank, NULL until paired */
    px_net_ep_t **eps;          /* [rank * PX_NET_MAX_SUB + sub], NULL until created */
    px_net_addr_ep_new_t ep_new;
} px_net_addrs_t;

/* Finds this rank's data addresses (from the route to the launcher) and
 * opens a socket of `type` (SOCK_STREAM, SOCK_DGRAM) on each, its port
 * recorded; nothing is published yet. ep_create makes endpoints with ep_new. */
px_status_t px_net_addr_open(px_net_addrs_t *a, const char *net, int type,
                             px_net_addr_ep_new_t ep_new, const px_boot_info_t *boot);
/* Closes the sockets and the epoll set, forgets the subchannels; the
 * transport has freed its endpoints. */
void px_net_addr_close(px_net_addrs_t *a);

/* Publishes the local addresses with their ports; `val` (len bytes) gets
 * the published text. */
px_status_t px_net_addr_publish(px_net_addrs_t *a, char *val, size_t len);

/* The ops of an IP transport (iface_reachable: every other rank). */
int px_net_addr_iface_reachable(px_net_iface_t *iface, int rank);
int px_net_addr_iface_fd(px_net_iface_t *iface);
int px_net_addr_ep_subs(px_net_iface_t *iface, int rank, px_net_sub_info_t *info, int max);
px_status_t px_net_addr_ep_create(px_net_iface_t *iface, int rank, int sub, void *owner,
                                  px_net_ep_t **ep_p);

#endif
