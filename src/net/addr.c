#include "addr.h"
#include "../boot/boot.h"
#include "../util/clock.h"
#include "../util/lanes.h"
#include "../util/log.h"
#include "../util/param.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <ifaddrs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static uint32_t px_net_addr_mask(int prefix)
{
    return prefix <= 0 ? 0 : prefix >= 32 ? 0xffffffffu : ~((1u << (32 - prefix)) - 1);
}

static int px_net_addr_prefix_of(const struct sockaddr *nm)
{
    uint32_t m = nm ? ntohl(((const struct sockaddr_in *)nm)->sin_addr.s_addr) : 0xffffffffu;
    int p = 0;
    while (p < 32 && (m & (0x80000000u >> p)))
        p++;
    return p;
}

/* Bridges that exist with the same address on every host and lead nowhere. */
static int px_net_addr_ifname_ignored(const char *name)
{
    static const char *const skip[] = {"docker", "virbr", "br-", "lxcbr", "cni", "flannel"};
    for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
        if (!strncmp(name, skip[i], strlen(skip[i])))
            return 1;
    return 0;
}

static int px_net_addr_rail_of(px_net_addr_t *out, int n, const char *ifname)
{
    int rails = 0;
    for (int i = 0; i < n; i++) {
        if (out[i].boot)
            continue;
        if (!strcmp(out[i].ifname, ifname))
            return out[i].rail;
        int seen = 0;
        for (int j = 0; j < i; j++)
            if (!out[j].boot && !strcmp(out[j].ifname, out[i].ifname))
                seen = 1;
        if (!seen)
            rails++;
    }
    return rails;
}

static int px_net_addr_add(px_net_addr_t *out, int n, int max, const char *ifname, struct in_addr a,
                           int prefix, int boot)
{
    for (int i = 0; i < n; i++)
        if (out[i].addr.s_addr == a.s_addr && out[i].boot == boot)
            return n;
    if (n >= max) {
        px_warn("tcp", "more than %d addresses; ignoring %s on %s", max, inet_ntoa(a), ifname);
        return n;
    }
    memset(&out[n], 0, sizeof(out[n]));
    snprintf(out[n].ifname, sizeof(out[n].ifname), "%s", ifname);
    out[n].addr = a;
    out[n].prefix = prefix;
    out[n].boot = boot;
    out[n].rail = boot ? -1 : px_net_addr_rail_of(out, n, ifname);
    return n + 1;
}

int px_net_addr_local(struct in_addr boot_addr, int *explicit_p, px_net_addr_t *out, int max)
{
    const char *spec = px_params.rails && px_params.rails[0] ? px_params.rails : px_params.iface;
    struct ifaddrs *ifa, *i;
    char boot_if[IFNAMSIZ] = "lo";
    int boot_prefix = 32, n = 0;
    int loopback_job = (ntohl(boot_addr.s_addr) >> 24) == 127;

    if (getifaddrs(&ifa) < 0) {
        px_error("tcp", "cannot list network interfaces");
        return PX_ERR_IO;
    }
    for (i = ifa; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
            ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == boot_addr.s_addr) {
            snprintf(boot_if, sizeof(boot_if), "%s", i->ifa_name);
            boot_prefix = px_net_addr_prefix_of(i->ifa_netmask);
        }

    *explicit_p = spec && spec[0];
    if (*explicit_p) {
        char *copy = strdup(spec), *save = NULL;
        int bad = 0;
        for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
            struct in_addr a;
            int found = 0;
            int is_addr = inet_pton(AF_INET, tok, &a) == 1;
            for (i = ifa; i; i = i->ifa_next) {
                if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
                    continue;
                struct in_addr ia = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
                if (is_addr ? ia.s_addr == a.s_addr : !strcmp(i->ifa_name, tok)) {
                    n = px_net_addr_add(out, n, max, i->ifa_name, ia,
                                        px_net_addr_prefix_of(i->ifa_netmask), 0);
                    found = 1;
                }
            }
            if (!found) {
                char have[512] = "";
                size_t len = 0;
                for (i = ifa; i; i = i->ifa_next)
                    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && len < sizeof(have) - 40)
                        len += (size_t)snprintf(
                            have + len, sizeof(have) - len, "%s%s(%s)", len ? " " : "", i->ifa_name,
                            inet_ntoa(((struct sockaddr_in *)i->ifa_addr)->sin_addr));
                px_error("tcp",
                         "%s=%s: no interface or address '%s' with IPv4 here; this host has: %s",
                         px_params.rails && px_params.rails[0] ? "PX_RAILS" : "PX_IFACE", spec, tok,
                         have);
                bad = 1;
            }
        }
        free(copy);
        if (bad || n == 0) {
            freeifaddrs(ifa);
            return PX_ERR_INVALID_PARAM;
        }
    } else if (loopback_job) {
        n = px_net_addr_add(out, n, max, boot_if, boot_addr, boot_prefix, 0);
    } else {
        for (i = ifa; i; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
                (i->ifa_flags & IFF_LOOPBACK) || !strcmp(i->ifa_name, boot_if) ||
                px_net_addr_ifname_ignored(i->ifa_name))
                continue;
            n = px_net_addr_add(out, n, max, i->ifa_name,
                                ((struct sockaddr_in *)i->ifa_addr)->sin_addr,
                                px_net_addr_prefix_of(i->ifa_netmask), 0);
        }
        if (n == 0) /* the launcher's network is the only one */
            n = px_net_addr_add(out, n, max, boot_if, boot_addr, boot_prefix, 0);
    }
    /* the bootstrap network, for peers that share no rail */
    if (!loopback_job && n < max)
        n = px_net_addr_add(out, n, max, boot_if, boot_addr, boot_prefix, 1);
    freeifaddrs(ifa);
    return n;
}

int px_net_addr_format(const px_net_addr_t *a, int n, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        int k = snprintf(buf + off, len - off, "%s%s,%s,%d,%u,%c", i ? ";" : "", a[i].ifname,
                         inet_ntoa(a[i].addr), a[i].prefix, a[i].port, a[i].boot ? 'b' : 'r');
        if (k < 0 || (size_t)k >= len - off)
            return PX_ERR_TRUNCATED;
        off += (size_t)k;
    }
    return PX_OK;
}

int px_net_addr_parse(const char *s, px_net_addr_t *out, int max)
{
    int n = 0;
    char copy[PX_BOOT_VAL_MAX], *save = NULL;
    snprintf(copy, sizeof(copy), "%s", s);
    for (char *ent = strtok_r(copy, ";", &save); ent; ent = strtok_r(NULL, ";", &save)) {
        char *f[5], *save2 = NULL;
        int k = 0;
        for (char *t = strtok_r(ent, ",", &save2); t && k < 5; t = strtok_r(NULL, ",", &save2))
            f[k++] = t;
        if (k != 5 || n >= max || strlen(f[0]) >= IFNAMSIZ)
            return PX_ERR_PROTOCOL;
        char *end;
        long prefix = strtol(f[2], &end, 10);
        if (*end || prefix < 0 || prefix > 32)
            return PX_ERR_PROTOCOL;
        long port = strtol(f[3], &end, 10);
        if (*end || port <= 0 || port > 65535 || (f[4][0] != 'r' && f[4][0] != 'b') || f[4][1])
            return PX_ERR_PROTOCOL;
        memset(&out[n], 0, sizeof(out[n]));
        if (inet_pton(AF_INET, f[1], &out[n].addr) != 1)
            return PX_ERR_PROTOCOL;
        snprintf(out[n].ifname, sizeof(out[n].ifname), "%s", f[0]);
        out[n].prefix = (int)prefix;
        out[n].port = (uint16_t)port;
        out[n].boot = f[4][0] == 'b';
        out[n].rail = out[n].boot ? -1 : px_net_addr_rail_of(out, n, f[0]);
        n++;
    }
    return n;
}

static double px_net_addr_if_speed(const char *ifname)
{
    char path[128];
    long mbit = 0;
    snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%ld", &mbit) != 1 || mbit < 0)
            mbit = 0;
        fclose(f);
    }
    return (double)mbit / 8.0; /* Mbit/s -> MB/s */
}

static void px_net_addr_pair_add(px_net_addr_peer_t *out, const px_net_addr_t *mine, int mi,
                                 const px_net_addr_t *theirs, int path)
{
    px_net_addr_pair_t *p = &out->pair[out->n++];
    char la[INET_ADDRSTRLEN], ra[INET_ADDRSTRLEN];
    memset(p, 0, sizeof(*p));
    p->local = mi;
    p->remote.sin_family = AF_INET;
    p->remote.sin_addr = theirs->addr;
    p->remote.sin_port = htons(theirs->port);
    p->info.rail = mine[mi].boot ? 0 : mine[mi].rail;
    p->info.path = path;
    p->info.speed_mbs = px_net_addr_if_speed(mine[mi].ifname);
    p->info.local_ip = mine[mi].addr.s_addr;
    p->info.remote_ip = theirs->addr.s_addr;
    inet_ntop(AF_INET, &mine[mi].addr, la, sizeof(la));
    inet_ntop(AF_INET, &theirs->addr, ra, sizeof(ra));
    snprintf(p->info.label, sizeof(p->info.label), "%s %s>%s", mine[mi].ifname, la, ra);
}

int px_net_addr_pair(const px_net_addr_t *lo, int nlo, const px_net_addr_t *hi, int nhi,
                     int me_is_lo, int same_node, int max_paths, px_net_addr_peer_t *out)
{
    int per_if[PX_NET_MAX_ADDR] = {0};
    out->n = 0;
    for (int a = 0; a < nlo && out->n < PX_NET_MAX_SUB; a++) {
        if (lo[a].boot)
            continue;
        uint32_t m = px_net_addr_mask(lo[a].prefix);
        for (int b = 0; b < nhi; b++) {
            if (hi[b].boot || hi[b].prefix != lo[a].prefix ||
                ((ntohl(lo[a].addr.s_addr) ^ ntohl(hi[b].addr.s_addr)) & m) ||
                (!same_node && lo[a].addr.s_addr == hi[b].addr.s_addr))
                continue;
            int r = lo[a].rail >= 0 && lo[a].rail < PX_NET_MAX_ADDR ? lo[a].rail : 0;
            if (max_paths <= 0 || per_if[r] < max_paths) {
                if (me_is_lo)
                    px_net_addr_pair_add(out, lo, a, &hi[b], per_if[r]);
                else
                    px_net_addr_pair_add(out, hi, b, &lo[a], per_if[r]);
                per_if[r]++;
            }
            break;
        }
    }
    if (out->n)
        return out->n;
    /* no common rail: the bootstrap network, if both published one */
    for (int a = 0; a < nlo; a++)
        for (int b = 0; b < nhi; b++)
            if (lo[a].boot && hi[b].boot) {
                if (me_is_lo)
                    px_net_addr_pair_add(out, lo, a, &hi[b], 0);
                else
                    px_net_addr_pair_add(out, hi, b, &lo[a], 0);
                return -out->n; /* negative: a fallback */
            }
    return 0;
}

/* Each address pair becomes px_lane_plan.n subchannels, lane-major (lane 0
 * of every pair first, so one lane is the subchannels as they were), each
 * with its lane's marks; pairs beyond PX_NET_MAX_SUB / lanes are left out. */
static void px_net_addr_lanes(px_net_addr_peer_t *p, const char *net, int rank)
{
    int nl = px_lane_plan.n, np = p->n;
    for (int i = 0; i < np; i++) {
        p->pair[i].info.lane = 0;
        p->pair[i].info.tos = px_lane_plan.tos[0];
        p->pair[i].info.prio = px_lane_plan.prio[0];
    }
    if (nl <= 1)
        return;
    if (np * nl > PX_NET_MAX_SUB) {
        static int warned;
        if (!warned++)
            px_warn(net,
                    "%d address pairs to rank %d times PX_LANES=%d exceed %d subchannels: %d "
                    "pairs used",
                    np, rank, nl, PX_NET_MAX_SUB, PX_NET_MAX_SUB / nl);
        np = PX_NET_MAX_SUB / nl;
    }
    for (int l = 1; l < nl; l++)
        for (int i = 0; i < np; i++) {
            px_net_addr_pair_t *q = &p->pair[l * np + i];
            *q = p->pair[i];
            q->info.lane = l;
            q->info.tos = px_lane_plan.tos[l];
            q->info.prio = px_lane_plan.prio[l];
            size_t o = strlen(q->info.label);
            if (o + 8 < sizeof(q->info.label))
                snprintf(q->info.label + o, sizeof(q->info.label) - o, " lane%d", l);
        }
    p->n = np * nl;
}

/* Pairs this rank's addresses with those `rank` published under `net`. */
static px_net_addr_peer_t *px_net_addr_peer_new(const char *net, const px_net_addr_t *local,
                                                int nlocal, int explicit_rails, int me, int rank,
                                                px_status_t *st_p)
{
    char val[PX_BOOT_VAL_MAX];
    size_t len;
    px_net_addr_t theirs[PX_NET_MAX_ADDR];
    *st_p = PX_ERR_PEER_UNREACHABLE;
    if (px_boot_get(rank, net, val, sizeof(val), &len) != PX_OK || len == 0 || val[len - 1] != 0) {
        px_error(net, "no %s address published by rank %d", net, rank);
        return NULL;
    }
    int nt = px_net_addr_parse(val, theirs, PX_NET_MAX_ADDR);
    if (nt <= 0) {
        px_error(net, "rank %d published an invalid address list", rank);
        *st_p = PX_ERR_PROTOCOL;
        return NULL;
    }
    /* paired on the stack, kept in an allocation of the pairs found: a job
     * holds one per peer it talks to */
    px_net_addr_peer_t full, *p = &full;
    memset(&full, 0, sizeof(full));
    int lo = px_boot_peer_before(me, rank);
    int same = px_boot_peer_same_node(me, rank);
    int n = lo ? px_net_addr_pair(local, nlocal, theirs, nt, 1, same, px_params.paths, p)
               : px_net_addr_pair(theirs, nt, local, nlocal, 0, same, px_params.paths, p);
    if (n < 0) {
        if (explicit_rails && !px_params.rail_fallback) {
            px_error(net,
                     "rank %d shares no rail subnet with this rank (PX_RAILS=%s); set "
                     "PX_RAIL_FALLBACK=1 to use the bootstrap network instead",
                     rank,
                     px_params.rails && px_params.rails[0] ? px_params.rails : px_params.iface);
            return NULL;
        }
        static int warned;
        if (explicit_rails && !warned++)
            px_warn(net,
                    "rank %d shares no rail subnet with this rank: using the bootstrap "
                    "network (%s)",
                    rank, p->pair[0].info.label);
        else
            px_debug(net, "rank %d shares no rail subnet: using the bootstrap network", rank);
    } else if (n == 0) {
        px_error(net, "rank %d shares no network with this rank (its addresses: %s)", rank, val);
        return NULL;
    }
    px_net_addr_lanes(p, net, rank);
    p = malloc(offsetof(px_net_addr_peer_t, pair) + (size_t)full.n * sizeof(full.pair[0]));
    if (!p) {
        *st_p = PX_ERR_NO_MEMORY;
        return NULL;
    }
    memcpy(p, &full, offsetof(px_net_addr_peer_t, pair) + (size_t)full.n * sizeof(full.pair[0]));
    if (strcmp(net, "tcp") != 0) /* labels say which transport when it is not the usual one */
        for (int i = 0; i < p->n; i++) {
            char l[sizeof(p->pair[i].info.label)];
            snprintf(l, sizeof(l), "%s:%s", net, p->pair[i].info.label);
            memcpy(p->pair[i].info.label, l, sizeof(l));
        }
    *st_p = PX_OK;
    return p;
}

void px_net_addr_mark(int fd, const px_net_sub_info_t *info, const char *net)
{
    static int warned;
    if (info->tos >= 0 && setsockopt(fd, IPPROTO_IP, IP_TOS, &info->tos, sizeof(info->tos)) < 0 &&
        !warned++)
        px_warn(net, "IP_TOS %d on %s: %s", info->tos, info->label, strerror(errno));
    if (info->prio >= 0 &&
        setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &info->prio, sizeof(info->prio)) < 0 && !warned++)
        px_warn(net, "SO_PRIORITY %d on %s: %s", info->prio, info->label, strerror(errno));
}

struct in_addr px_net_addr_boot(const px_boot_info_t *boot)
{
    struct in_addr a;
    const char *bl = px_boot_local_addr();
    if (!(bl && bl[0] && inet_pton(AF_INET, bl, &a) == 1) && px_boot_route(boot->boot_host, &a) < 0)
        a.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

/* A socket of `type` bound to local address i (listening when it is a
 * stream), its port recorded, in the epoll set. */
static px_status_t px_net_addr_socket(px_net_addrs_t *a, int i, int type)
{
    px_net_addr_t *l = &a->local[i];
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = l->addr};
    socklen_t len = sizeof(sa);
    int fd = a->fd[i] = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        (type == SOCK_STREAM && listen(fd, 1024) < 0) ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        px_error(a->net, "cannot %s %s (%s): %s",
                 type == SOCK_STREAM ? "listen on" : "bind a datagram socket to",
                 inet_ntoa(l->addr), l->ifname, strerror(errno));
        return PX_ERR_IO;
    }
    l->port = ntohs(sa.sin_port);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = (void *)(uintptr_t)(i + 1)};
    epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev);
    return PX_OK;
}

px_status_t px_net_addr_open(px_net_addrs_t *a, const char *net, int type,
                             px_net_addr_ep_new_t ep_new, const px_boot_info_t *boot)
{
    px_status_t st = PX_ERR_NO_MEMORY;
    memset(a, 0, sizeof(*a));
    a->net = net;
    a->ep_new = ep_new;
    a->me = boot->rank;
    a->nranks = px_boot_peer_room(boot);
    a->epfd = -1;
    for (int i = 0; i < PX_NET_MAX_ADDR; i++)
        a->fd[i] = -1;
    a->peers = calloc((size_t)px_boot_peer_room(boot), sizeof(*a->peers));
    a->eps = calloc((size_t)px_boot_peer_room(boot) * PX_NET_MAX_SUB, sizeof(*a->eps));
    if (!a->peers || !a->eps)
        goto err;
    int n =
        px_net_addr_local(px_net_addr_boot(boot), &a->explicit_rails, a->local, PX_NET_MAX_ADDR);
    if (n < 0) {
        st = (px_status_t)n;
        goto err;
    }
    a->nlocal = n;
    a->epfd = epoll_create1(EPOLL_CLOEXEC);
    st = a->epfd < 0 ? PX_ERR_IO : PX_OK;
    for (int i = 0; i < n && st == PX_OK; i++)
        st = px_net_addr_socket(a, i, type);
    if (st == PX_OK)
        return PX_OK;
err:
    px_net_addr_close(a);
    return st;
}

void px_net_addr_close(px_net_addrs_t *a)
{
    for (int i = 0; i < a->nlocal; i++)
        if (a->fd[i] >= 0)
            close(a->fd[i]);
    if (a->epfd >= 0)
        close(a->epfd);
    if (a->peers)
        for (int i = 0; i < a->nranks; i++)
            free(a->peers[i]);
    free(a->peers);
    free(a->eps);
    a->nlocal = 0;
    a->epfd = -1;
    a->peers = NULL;
    a->eps = NULL;
}

px_status_t px_net_addr_publish(px_net_addrs_t *a, char *val, size_t len)
{
    px_status_t st = px_net_addr_format(a->local, a->nlocal, val, len);
    if (st == PX_OK)
        st = px_boot_put(a->net, val, strlen(val) + 1);
    return st;
}

/* The interface's px_net_addrs_t, its first member. */
static inline px_net_addrs_t *px_net_addr_of(px_net_iface_t *iface)
{
    return (px_net_addrs_t *)(void *)iface;
}

int px_net_addr_iface_reachable(px_net_iface_t *iface, int rank)
{
    const px_net_addrs_t *a = px_net_addr_of(iface);
    uint64_t job;
    uint32_t r;
    return rank >= 0 && rank < a->nranks && rank != a->me && !px_boot_peer_ident(rank, &job, &r);
}

int px_net_addr_iface_fd(px_net_iface_t *iface) { return px_net_addr_of(iface)->epfd; }

/* The subchannels to `rank`, paired now if not yet. NULL with *st_p set when
 * there is none (the reason logged) or `rank` is not another rank. */
static px_net_addr_peer_t *px_net_addr_peer(px_net_iface_t *iface, int rank, px_status_t *st_p)
{
    px_net_addrs_t *a = px_net_addr_of(iface);
    *st_p = PX_ERR_INVALID_PARAM;
    if (!px_net_addr_iface_reachable(iface, rank))
        return NULL;
    if (!a->peers[rank])
        a->peers[rank] =
            px_net_addr_peer_new(a->net, a->local, a->nlocal, a->explicit_rails, a->me, rank, st_p);
    return a->peers[rank];
}

int px_net_addr_ep_subs(px_net_iface_t *iface, int rank, px_net_sub_info_t *info, int max)
{
    px_status_t st;
    px_net_addr_peer_t *p = px_net_addr_peer(iface, rank, &st);
    if (!p)
        return st;
    int n = p->n < max ? p->n : max;
    for (int i = 0; i < n; i++)
        info[i] = p->pair[i].info;
    return n;
}

px_status_t px_net_addr_ep_create(px_net_iface_t *iface, int rank, int sub, void *owner,
                                  px_net_ep_t **ep_p)
{
    px_net_addrs_t *a = px_net_addr_of(iface);
    px_status_t st;
    if (sub < 0 || sub >= PX_NET_MAX_SUB)
        return PX_ERR_INVALID_PARAM;
    px_net_addr_peer_t *p = px_net_addr_peer(iface, rank, &st);
    if (!p)
        return st;
    if (sub >= p->n)
        return PX_ERR_INVALID_PARAM;
    px_net_ep_t **slot = &a->eps[rank * PX_NET_MAX_SUB + sub];
    if (!*slot && !(*slot = a->ep_new(iface, rank, sub, &p->pair[sub])))
        return PX_ERR_NO_MEMORY;
    *(void **)(void *)*slot = owner; /* the endpoint's first member */
    *ep_p = *slot;
    return PX_OK;
}

int px_net_addr_path_check(px_net_path_chk_t *chk, const char *ifname, struct in_addr local,
                           const struct sockaddr_in *remote, uint64_t timeout_ns, const char *net,
                           int rank)
{
    uint64_t now = px_time_ns();
    if (chk->fd < 0) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return 0; /* out of descriptors: not known, try later */
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr = local};
        if ((ifname[0] &&
             setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname)) < 0 &&
             errno != EPERM) ||
            bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
            (connect(fd, (const struct sockaddr *)remote, sizeof(*remote)) < 0 &&
             errno != EINPROGRESS)) {
            int e = errno;
            close(fd);
            return e == ECONNREFUSED ? 1 : -1;
        }
        chk->fd = fd;
        chk->t0 = now;
    }
    struct pollfd pf = {.fd = chk->fd, .events = POLLOUT};
    int err = 0;
    socklen_t el = sizeof(err);
    if (poll(&pf, 1, 0) == 0) {
        if (now - chk->t0 < timeout_ns)
            return 0;
        err = ETIMEDOUT;
    } else if (getsockopt(chk->fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0) {
        err = errno;
    }
    px_net_addr_path_check_end(chk);
    if (err && err != ECONNREFUSED)
        px_debug(net, "path %s to rank %d: %s", inet_ntoa(remote->sin_addr), rank, strerror(err));
    return !err || err == ECONNREFUSED ? 1 : -1;
}

void px_net_addr_path_check_end(px_net_path_chk_t *chk)
{
    if (chk->fd >= 0)
        close(chk->fd);
    chk->fd = -1;
}
