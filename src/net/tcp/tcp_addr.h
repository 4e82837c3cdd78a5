/* tcp rails and paths: which local addresses carry data, what a rank
 * publishes, and how two ranks pair their addresses into subchannels.
 *
 * Every rank publishes its data addresses as "tcp" in the bootstrap store:
 *   "<ifname>,<a.b.c.d>,<prefix>,<port>,<flags>;..."
 * flags "r" = a rail address, "b" = the bootstrap-network address (used only
 * when the two ranks share no rail subnet). The subchannels between ranks A
 * < B are enumerated from A's list: for each of A's rail addresses in order,
 * the first of B's rail addresses on the same subnet (and not equal to it:
 * an identical address on two nodes is a local-only bridge) makes one
 * subchannel, at most PX_PATHS per interface of A. Both sides compute the
 * same list from the same published data, so subchannel k means the same
 * address pair at both ends. */
#ifndef PX_TCP_ADDR_H
#define PX_TCP_ADDR_H

#include "../net.h"

#include <net/if.h>
#include <netinet/in.h>

#define PX_TCP_MAX_ADDR 16

typedef struct px_tcp_addr {
    char ifname[IFNAMSIZ];
    struct in_addr addr;
    int prefix;
    uint16_t port;
    int rail; /* ordinal of the interface among this rank's rails, -1 bootstrap */
    int boot; /* the bootstrap-network address, not a rail */
} px_tcp_addr_t;

typedef struct px_tcp_pair {
    int local;                 /* index into the local address list */
    struct sockaddr_in remote; /* where to connect */
    px_net_sub_info_t info;
} px_tcp_pair_t;

/* The subchannels to one peer. An allocated one holds only its n pairs. */
typedef struct px_tcp_peer {
    int n;
    px_tcp_pair_t pair[PX_NET_MAX_SUB];
} px_tcp_peer_t;

/* Local data addresses from PX_RAILS (or PX_IFACE), or discovered; `boot_addr`
 * is the address that routes to the launcher (loopback for a local job).
 * Returns the count, or a negative status with the reason logged. */
int px_tcp_addr_local(struct in_addr boot_addr, int *explicit_p, px_tcp_addr_t *out, int max);

/* Serialises / parses the published list. Parsing validates every field. */
int px_tcp_addr_format(const px_tcp_addr_t *a, int n, char *buf, size_t len);
int px_tcp_addr_parse(const char *s, px_tcp_addr_t *out, int max);

/* Pairs the lists of ranks lo < hi into subchannels, from the point of view
 * of rank lo when me_is_lo, else of rank hi. Ranks of one node may pair an
 * address with itself. Returns the count, its negation when only the
 * bootstrap network is shared, or 0. */
int px_tcp_addr_pair(const px_tcp_addr_t *lo, int nlo, const px_tcp_addr_t *hi, int nhi,
                     int me_is_lo, int same_node, int max_paths, px_tcp_peer_t *out);

/* The subchannels from rank `me` to `rank`, whose address list it published
 * under the transport's name `net` ("tcp", "udp"): pairs of addresses on
 * shared subnets. NULL with *st_p set when there is none, the reason logged. */
px_tcp_peer_t *px_tcp_addr_peer(const char *net, const px_tcp_addr_t *local, int nlocal,
                                int explicit_rails, int me, int rank, const int *node_of,
                                px_status_t *st_p);

#endif
