/* Link state from the kernel (rtnetlink): a local interface that loses its
 * carrier or is taken down, or an address removed from it, ends every
 * subchannel that uses one of its addresses at once, instead of after the
 * transport's timeout; the peers hear of it over a working subchannel
 * (PX_RAIL_SUBDOWN). The subchannels come back as usual, through probes. */
#include "rail_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

void px_rail_link_open(px_rail_t *r)
{
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK,
                             .nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR};
    r->link_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (r->link_fd >= 0 && bind(r->link_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(r->link_fd);
        r->link_fd = -1;
    }
    if (r->link_fd < 0)
        px_debug("rail", "no link-state events (netlink: %s); failures show by timeouts",
                 strerror(errno));
}

void px_rail_link_close(px_rail_t *r)
{
    if (r->link_fd >= 0)
        close(r->link_fd);
    r->link_fd = -1;
}

/* Every subchannel whose local address is addr (IPv4, network order). */
static void px_rail_link_lost(px_rail_t *r, uint32_t addr, const char *ifname)
{
    for (int i = 0; i < r->nvc; i++) {
        px_rail_vc_t *vc = r->vlist[i];
        for (int k = 0; k < vc->nsub && !vc->failed; k++) {
            px_rail_sub_t *s = &vc->sub[k];
            if (s->info.local_ip != addr || s->state == PX_SUB_DOWN)
                continue;
            px_info("rail", "%s lost its link: subchannel %s to rank %d down", ifname,
                    s->info.label, vc->rank);
            px_rail_sub_down(s, PX_ERR_LINK_UNREACHABLE);
        }
    }
}

/* Interface ifindex went down: its IPv4 addresses, from the kernel's list. */
static void px_rail_link_down(px_rail_t *r, int ifindex)
{
    char name[IF_NAMESIZE] = "";
    struct ifaddrs *ifa, *i;
    if (!if_indextoname((unsigned)ifindex, name) || getifaddrs(&ifa) < 0)
        return;
    for (i = ifa; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, name))
            px_rail_link_lost(r, ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr, name);
    freeifaddrs(ifa);
}

/* Reads what the kernel reported since the last call (from the timers: at
 * most every PX_RAIL_TICK_NS, one system call when nothing happened). */
void px_rail_link_poll(px_rail_t *r)
{
    char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
    for (;;) {
        ssize_t n = recv(r->link_fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n <= 0)
            return; /* nothing more (or ENOBUFS: events lost; the timeouts remain) */
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
             h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type == RTM_NEWLINK &&
                h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifinfomsg))) {
                struct ifinfomsg *ifi = NLMSG_DATA(h);
                if (!(ifi->ifi_flags & IFF_UP) || !(ifi->ifi_flags & IFF_RUNNING))
                    px_rail_link_down(r, ifi->ifi_index);
            } else if (h->nlmsg_type == RTM_DELADDR &&
                       h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifaddrmsg))) {
                struct ifaddrmsg *ifa = NLMSG_DATA(h);
                int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa)));
                if (ifa->ifa_family != AF_INET)
                    continue;
                for (struct rtattr *a = IFA_RTA(ifa); RTA_OK(a, len); a = RTA_NEXT(a, len))
                    if (a->rta_type == IFA_LOCAL && RTA_PAYLOAD(a) == 4) {
                        uint32_t addr;
                        memcpy(&addr, RTA_DATA(a), 4);
                        char name[IF_NAMESIZE] = "?";
                        if_indextoname(ifa->ifa_index, name);
                        px_rail_link_lost(r, addr, name);
                    }
            }
        }
    }
}
