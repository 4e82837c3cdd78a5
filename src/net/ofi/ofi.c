#include "ofi_impl.h"
#include "../../util/clock.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* The provider PX_OFI_PROVIDER leaves to us: the first of these libfabric
 * offers. shm and sockets are left out: Plexus has its own shared memory,
 * and sockets is the slow reference provider. */
static const char *const px_ofi_prefer[] = {
    "verbs;ofi_rxm", "efa", "cxi", "psm3", "opx", "psm2", "tcp;ofi_rxm", "udp;ofi_rxd", NULL};

px_status_t px_ofi_status(int fi_err)
{
    switch (fi_err < 0 ? -fi_err : fi_err) {
    case FI_ENOMEM:
        return PX_ERR_NO_MEMORY;
    case FI_ETIMEDOUT:
        return PX_ERR_TIMEOUT;
    case FI_EHOSTUNREACH:
    case FI_ENETUNREACH:
    case FI_ENETDOWN:
    case FI_EADDRNOTAVAIL:
        return PX_ERR_LINK_UNREACHABLE;
    case FI_ECONNREFUSED:
    case FI_ECONNRESET:
    case FI_ECONNABORTED:
    case FI_ENOTCONN:
    case FI_ESHUTDOWN:
    case FI_EIO:
    case FI_ECANCELED:
        return PX_ERR_LINK_RESET;
    case FI_ENOSYS:
    case FI_EOPNOTSUPP:
        return PX_ERR_UNSUPPORTED;
    default:
        return PX_ERR_IO;
    }
}

/* ---------- the library ---------- */

px_ofi_lib_t px_ofi_lib;

px_status_t px_ofi_load(void)
{
    static int done;
    static px_status_t st;
    if (done++)
        return st;
    st = PX_ERR_UNSUPPORTED;
    void *lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        px_error("ofi", "PX_NET=ofi: cannot load libfabric (%s); install libfabric1", dlerror());
        return st;
    }
    px_ofi_lib_t l;
    *(void **)&l.getinfo = dlsym(lib, "fi_getinfo");
    *(void **)&l.freeinfo = dlsym(lib, "fi_freeinfo");
    *(void **)&l.dupinfo = dlsym(lib, "fi_dupinfo");
    *(void **)&l.fabric = dlsym(lib, "fi_fabric");
    *(void **)&l.strerror = dlsym(lib, "fi_strerror");
    *(void **)&l.version = dlsym(lib, "fi_version");
    if (!l.getinfo || !l.freeinfo || !l.dupinfo || !l.fabric || !l.strerror || !l.version) {
        px_error("ofi", "PX_NET=ofi: the libfabric found lacks fi_getinfo and the like");
        dlclose(lib);
        return st;
    }
    if (l.version() < PX_OFI_VERSION) {
        px_error("ofi", "PX_NET=ofi: libfabric %u.%u is older than the 1.9 Plexus needs",
                 FI_MAJOR(l.version()), FI_MINOR(l.version()));
        dlclose(lib);
        return st;
    }
    px_ofi_lib = l;
    return st = PX_OK;
}

/* ---------- providers ---------- */

static struct fi_info *px_ofi_hints(const char *prov, int rma)
{
    struct fi_info *h = fi_dupinfo(NULL);
    if (!h)
        return NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FI_MSG | (rma ? FI_RMA | FI_READ | FI_REMOTE_READ : 0);
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    if (prov && prov[0])
        h->fabric_attr->prov_name = strdup(prov);
    return h;
}

/* What libfabric offers for node (NULL: anything) with our hints. */
static struct fi_info *px_ofi_getinfo(const char *prov, int rma, const char *node)
{
    struct fi_info *h = px_ofi_hints(prov, rma), *list = NULL;
    if (!h)
        return NULL;
    if (fi_getinfo(PX_OFI_VERSION, node, NULL, node ? FI_SOURCE : 0, h, &list) != 0)
        list = NULL;
    fi_freeinfo(h);
    return list;
}

static int px_ofi_has(const struct fi_info *list, const char *prov)
{
    for (const struct fi_info *i = list; i; i = i->next)
        if (!strcmp(i->fabric_attr->prov_name, prov))
            return 1;
    return 0;
}

/* The provider to use, into s->prov, and whether it has RMA. */
static px_status_t px_ofi_pick(struct px_net_iface *s)
{
    const char *want = px_params.ofi_provider;
    int rma = px_params.ofi_rma;
    if (!want || !want[0]) {
        struct fi_info *all = px_ofi_getinfo(NULL, 0, NULL);
        for (int i = 0; px_ofi_prefer[i] && !want; i++)
            if (px_ofi_has(all, px_ofi_prefer[i]))
                want = px_ofi_prefer[i];
        fi_freeinfo(all);
        if (!want) {
            px_error("ofi",
                     "PX_NET=ofi: libfabric offers none of the providers Plexus picks by itself "
                     "(verbs;ofi_rxm, efa, cxi, psm3, opx, psm2, tcp;ofi_rxm, udp;ofi_rxd) with "
                     "reliable datagram endpoints; name one with PX_OFI_PROVIDER (fi_info -t "
                     "FI_EP_RDM lists them)");
            return PX_ERR_UNSUPPORTED;
        }
    }
    struct fi_info *l = rma ? px_ofi_getinfo(want, 1, NULL) : NULL;
    if (!l) {
        rma = 0;
        l = px_ofi_getinfo(want, 0, NULL);
    }
    if (!l) {
        px_error("ofi",
                 "PX_OFI_PROVIDER=%s: libfabric offers no such provider with reliable datagram "
                 "endpoints and messages here (fi_info -p '%s' -t "
                 "FI_EP_RDM)",
                 want, want);
        return PX_ERR_UNSUPPORTED;
    }
    snprintf(s->prov, sizeof(s->prov), "%s", l->fabric_attr->prov_name);
    s->ip = l->addr_format == FI_SOCKADDR_IN;
    s->same_node = !strncmp(s->prov, "shm", 3);
    s->rma = rma;
    fi_freeinfo(l);
    return PX_OK;
}

/* ---------- rails ---------- */

static px_status_t px_ofi_rail_open(struct px_net_iface *s, px_ofi_rail_t *r, struct fi_info *info)
{
    const char *what = "fabric";
    int rc;
    r->s = s;
    r->wait_fd = -1;
    r->info = fi_dupinfo(info);
    if (!r->info)
        return PX_ERR_NO_MEMORY;
    snprintf(r->domain_name, sizeof(r->domain_name), "%s", info->domain_attr->name);
    uint64_t mm = (uint64_t)info->domain_attr->mr_mode;
    s->mr_local = !!(mm & FI_MR_LOCAL);
    s->mr_virt = !!(mm & FI_MR_VIRT_ADDR);
    s->mr_prov_key = !!(mm & FI_MR_PROV_KEY);
    s->mr_endpoint = !!(mm & FI_MR_ENDPOINT);
    rc = fi_fabric(info->fabric_attr, &r->fabric, NULL);
    if (!rc && (what = "domain", 1))
        rc = fi_domain(r->fabric, r->info, &r->domain, NULL);
    if (!rc) {
        struct fi_av_attr av = {.type = FI_AV_TABLE};
        what = "address vector";
        rc = fi_av_open(r->domain, &av, &r->av, NULL);
    }
    if (!rc) {
        /* a wait object costs every completion a system call: only when
         * a waiting process sleeps in the kernel */
        struct fi_cq_attr cq = {.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE};
        what = "completion queue";
        if (!strcmp(px_params.progress_mode, "block") ||
            !strcmp(px_params.progress_mode, "sleep")) {
            cq.wait_obj = FI_WAIT_FD;
            if (fi_cq_open(r->domain, &cq, &r->cq, NULL) == 0 &&
                fi_control(&r->cq->fid, FI_GETWAIT, &r->wait_fd) != 0)
                r->wait_fd = -1;
            if (!r->cq)
                cq.wait_obj = FI_WAIT_NONE;
        }
        rc = r->cq ? 0 : fi_cq_open(r->domain, &cq, &r->cq, NULL);
    }
    if (!rc && (what = "endpoint", 1))
        rc = fi_endpoint(r->domain, r->info, &r->ep, NULL);
    if (!rc)
        rc = fi_ep_bind(r->ep, &r->av->fid, 0);
    if (!rc)
        rc = fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV);
    if (!rc)
        rc = fi_enable(r->ep);
    if (!rc) {
        r->namelen = sizeof(r->name);
        what = "endpoint name";
        rc = fi_getname(&r->ep->fid, r->name, &r->namelen);
    }
    if (rc) {
        px_error("ofi", "%s on %s: cannot open the %s: %s", s->prov, r->domain_name, what,
                 fi_strerror(-rc));
        return px_ofi_status(rc);
    }
    if (info->tx_attr->inject_size < s->inject)
        s->inject = info->tx_attr->inject_size;
    return px_ofi_rail_bufs(r);
}

static void px_ofi_rail_close(px_ofi_rail_t *r)
{
    if (r->ep)
        fi_close(&r->ep->fid);
    px_ofi_rail_free_bufs(r);
    if (r->cq)
        fi_close(&r->cq->fid);
    if (r->av)
        fi_close(&r->av->fid);
    if (r->domain)
        fi_close(&r->domain->fid);
    if (r->fabric)
        fi_close(&r->fabric->fid);
    if (r->info)
        fi_freeinfo(r->info);
    memset(r, 0, sizeof(*r));
}

/* The local address `a` as a rail, when the provider can open it. */
static px_status_t px_ofi_rail_ip(struct px_net_iface *s, const px_net_addr_t *a)
{
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a->addr, ip, sizeof(ip));
    struct fi_info *list = px_ofi_getinfo(s->prov, s->rma, ip), *pick = NULL;
    for (struct fi_info *i = list; i && !pick; i = i->next)
        if (i->addr_format == FI_SOCKADDR_IN && i->src_addr &&
            ((struct sockaddr_in *)i->src_addr)->sin_addr.s_addr == a->addr.s_addr &&
            !strcmp(i->fabric_attr->prov_name, s->prov))
            pick = i;
    if (!pick) {
        px_debug("ofi", "%s cannot open %s (%s): not a rail", s->prov, ip, a->ifname);
        fi_freeinfo(list);
        return PX_ERR_NOT_FOUND;
    }
    px_ofi_rail_t *r = &s->rail[s->nrail];
    px_status_t st = px_ofi_rail_open(s, r, pick);
    fi_freeinfo(list);
    if (st != PX_OK) {
        px_ofi_rail_close(r);
        return st;
    }
    r->addr = *a;
    r->addr.port = ntohs(((struct sockaddr_in *)(void *)r->name)->sin_port);
    r->idx = s->nrail++;
    return PX_OK;
}

/* IP providers: a rail on every data address of the IP transports' choice
 * (PX_RAILS, or discovered) that the provider opens. */
static px_status_t px_ofi_rails_ip(struct px_net_iface *s, const px_boot_info_t *boot)
{
    px_net_addr_t local[PX_NET_MAX_ADDR];
    int n = px_net_addr_local(px_net_addr_boot(boot), &s->explicit_rails, local, PX_NET_MAX_ADDR);
    if (n < 0)
        return (px_status_t)n;
    for (int i = 0; i < n; i++) {
        px_status_t st = px_ofi_rail_ip(s, &local[i]);
        if (st != PX_OK && st != PX_ERR_NOT_FOUND)
            return st;
    }
    return PX_OK;
}

/* Other providers: a rail on each domain (NIC). */
static px_status_t px_ofi_rails_domains(struct px_net_iface *s)
{
    struct fi_info *list = px_ofi_getinfo(s->prov, s->rma, NULL);
    for (struct fi_info *i = list; i && s->nrail < PX_OFI_MAX_RAIL; i = i->next) {
        int seen = strcmp(i->fabric_attr->prov_name, s->prov) != 0;
        for (int k = 0; k < s->nrail && !seen; k++)
            seen = !strcmp(s->rail[k].domain_name, i->domain_attr->name);
        if (seen)
            continue;
        px_ofi_rail_t *r = &s->rail[s->nrail];
        px_status_t st = px_ofi_rail_open(s, r, i);
        if (st != PX_OK) {
            px_ofi_rail_close(r);
            fi_freeinfo(list);
            return st;
        }
        r->idx = s->nrail++;
    }
    fi_freeinfo(list);
    return PX_OK;
}

/* ---------- addresses ---------- */

static void px_ofi_hex(const uint8_t *b, size_t n, char *out)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = d[b[i] >> 4];
        out[2 * i + 1] = d[b[i] & 15];
    }
    out[2 * n] = 0;
}

static int px_ofi_unhex(const char *h, uint8_t *b, size_t max)
{
    size_t n = strlen(h);
    if (n % 2 || n / 2 > max)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(h + 2 * i, "%2x", &v) != 1)
            return -1;
        b[i] = (uint8_t)v;
    }
    return (int)(n / 2);
}

/* Publishes the provider and the rails' addresses:
 *   ofi.prov  the provider's name
 *   ofi       IP providers: the rails as addr.h formats them (the port is
 *             the endpoint's); others: the number of rails
 *   ofi.<i>   others: "<domain> <name in hex>" of rail i */
static px_status_t px_ofi_publish(struct px_net_iface *s)
{
    char val[PX_BOOT_VAL_MAX], key[32];
    px_status_t st = px_boot_put("ofi.prov", s->prov, strlen(s->prov) + 1);
    if (st != PX_OK)
        return st;
    if (s->ip) {
        px_net_addr_t a[PX_OFI_MAX_RAIL];
        for (int i = 0; i < s->nrail; i++)
            a[i] = s->rail[i].addr;
        st = px_net_addr_format(a, s->nrail, val, sizeof(val));
        return st == PX_OK ? px_boot_put("ofi", val, strlen(val) + 1) : st;
    }
    snprintf(val, sizeof(val), "%d", s->nrail);
    st = px_boot_put("ofi", val, strlen(val) + 1);
    for (int i = 0; i < s->nrail && st == PX_OK; i++) {
        px_ofi_rail_t *r = &s->rail[i];
        int o = snprintf(val, sizeof(val), "%s ", r->domain_name);
        if ((size_t)o + 2 * r->namelen + 1 > sizeof(val))
            return PX_ERR_TRUNCATED;
        px_ofi_hex(r->name, r->namelen, val + o);
        snprintf(key, sizeof(key), "ofi.%d", i);
        st = px_boot_put(key, val, strlen(val) + 1);
    }
    return st;
}

static int px_ofi_get(int rank, const char *key, char *val, size_t len)
{
    size_t got;
    return px_boot_get(rank, key, val, len, &got) == PX_OK && got > 0 && val[got - 1] == 0 ? 0 : -1;
}

/* IP providers: subchannels paired by subnet as tcp pairs them. */
static int px_ofi_pair_ip(struct px_net_iface *s, int rank, const char *val, px_ofi_peer_t *p)
{
    px_net_addr_t mine[PX_OFI_MAX_RAIL], theirs[PX_NET_MAX_ADDR];
    px_net_addr_peer_t pairs;
    for (int i = 0; i < s->nrail; i++)
        mine[i] = s->rail[i].addr;
    int nt = px_net_addr_parse(val, theirs, PX_NET_MAX_ADDR);
    if (nt <= 0) {
        px_error("ofi", "rank %d published an invalid address list", rank);
        return PX_ERR_PROTOCOL;
    }
    int lo = s->me < rank, same = s->node_of && s->node_of[rank] == s->node_of[s->me];
    int n = lo ? px_net_addr_pair(mine, s->nrail, theirs, nt, 1, same, px_params.paths, &pairs)
               : px_net_addr_pair(theirs, nt, mine, s->nrail, 0, same, px_params.paths, &pairs);
    if (n < 0 && s->explicit_rails && !px_params.rail_fallback) {
        px_error("ofi",
                 "rank %d shares no rail subnet with this rank (PX_RAILS); set PX_RAIL_FALLBACK=1 "
                 "to use the bootstrap network instead",
                 rank);
        return PX_ERR_PEER_UNREACHABLE;
    }
    if (n == 0) {
        px_error("ofi", "rank %d shares no network with this rank over %s (its addresses: %s)",
                 rank, s->prov, val);
        return PX_ERR_PEER_UNREACHABLE;
    }
    p->n = pairs.n;
    for (int i = 0; i < pairs.n; i++) {
        p->sub[i].local = pairs.pair[i].local;
        p->sub[i].info = pairs.pair[i].info;
        snprintf(p->sub[i].info.label, sizeof(p->sub[i].info.label), "ofi:%.59s",
                 pairs.pair[i].info.label);
        p->sub[i].namelen = sizeof(struct sockaddr_in);
        memcpy(p->sub[i].name, &pairs.pair[i].remote, sizeof(struct sockaddr_in));
    }
    return p->n;
}

/* Other providers: rail i to the peer's rail i. */
static int px_ofi_pair_domains(struct px_net_iface *s, int rank, const char *val, px_ofi_peer_t *p)
{
    char key[32], ent[PX_BOOT_VAL_MAX];
    int nt = atoi(val), n = nt < s->nrail ? nt : s->nrail;
    if (n > PX_NET_MAX_SUB)
        n = PX_NET_MAX_SUB;
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "ofi.%d", i);
        char *sp = NULL;
        int len = -1;
        if (px_ofi_get(rank, key, ent, sizeof(ent)) == 0 && (sp = strchr(ent, ' ')))
            len = px_ofi_unhex(sp + 1, p->sub[i].name, PX_OFI_NAME_MAX);
        if (len <= 0) {
            px_error("ofi", "rank %d published no valid address for its rail %d", rank, i);
            return PX_ERR_PROTOCOL;
        }
        *sp = 0;
        p->sub[i].namelen = (size_t)len;
        p->sub[i].local = i;
        px_net_sub_info_t *in = &p->sub[i].info;
        memset(in, 0, sizeof(*in));
        in->rail = i;
        const struct fi_info *fi = s->rail[i].info;
        if (fi->nic && fi->nic->link_attr && fi->nic->link_attr->speed)
            in->speed_mbs = (double)fi->nic->link_attr->speed / 8e6;
        snprintf(in->label, sizeof(in->label), "ofi:%.20s %.16s>%.16s", s->prov,
                 s->rail[i].domain_name, ent);
    }
    p->n = n;
    if (n == 0)
        px_error("ofi", "rank %d has no %s rail", rank, s->prov);
    return n ? n : PX_ERR_PEER_UNREACHABLE;
}

static int px_ofi_iface_reachable(px_net_iface_t *s, int rank)
{
    return rank >= 0 && rank < s->nranks && rank != s->me &&
           (!s->same_node || (s->node_of && s->node_of[rank] == s->node_of[s->me]));
}

/* The subchannels to rank, paired now if not yet. */
static px_ofi_peer_t *px_ofi_peer(struct px_net_iface *s, int rank, px_status_t *st_p)
{
    char val[PX_BOOT_VAL_MAX];
    *st_p = PX_ERR_INVALID_PARAM;
    if (!px_ofi_iface_reachable(s, rank))
        return NULL;
    if (s->peers[rank])
        return s->peers[rank];
    *st_p = PX_ERR_PEER_UNREACHABLE;
    if (px_ofi_get(rank, "ofi.prov", val, sizeof(val)) != 0) {
        px_error("ofi", "rank %d published no libfabric address", rank);
        return NULL;
    }
    if (strcmp(val, s->prov) != 0) {
        px_error("ofi", "rank %d uses provider %s, this rank %s (set PX_OFI_PROVIDER alike)", rank,
                 val, s->prov);
        return NULL;
    }
    px_ofi_peer_t *p = calloc(1, sizeof(*p));
    if (!p) {
        *st_p = PX_ERR_NO_MEMORY;
        return NULL;
    }
    int n = px_ofi_get(rank, "ofi", val, sizeof(val)) != 0 ? PX_ERR_PEER_UNREACHABLE
            : s->ip                                        ? px_ofi_pair_ip(s, rank, val, p)
                                                           : px_ofi_pair_domains(s, rank, val, p);
    if (n <= 0) {
        free(p);
        *st_p = n < 0 ? (px_status_t)n : PX_ERR_PEER_UNREACHABLE;
        return NULL;
    }
    *st_p = PX_OK;
    return s->peers[rank] = p;
}

static int px_ofi_ep_subs(px_net_iface_t *s, int rank, px_net_sub_info_t *info, int max)
{
    px_status_t st;
    px_ofi_peer_t *p = px_ofi_peer(s, rank, &st);
    if (!p)
        return st;
    int n = p->n < max ? p->n : max;
    for (int i = 0; i < n; i++)
        info[i] = p->sub[i].info;
    return n;
}

static px_status_t px_ofi_ep_create(px_net_iface_t *s, int rank, int sub, void *owner,
                                    px_net_ep_t **ep_p)
{
    px_status_t st;
    px_ofi_peer_t *p = px_ofi_peer(s, rank, &st);
    if (!p)
        return st;
    if (sub < 0 || sub >= p->n)
        return PX_ERR_INVALID_PARAM;
    struct px_net_ep **slot = &s->eps[rank * PX_NET_MAX_SUB + sub];
    if (!*slot) {
        struct px_net_ep *ep = calloc(1, sizeof(*ep));
        if (!ep)
            return PX_ERR_NO_MEMORY;
        ep->iface = s;
        ep->rank = rank;
        ep->sub = sub;
        ep->rail = &s->rail[p->sub[sub].local];
        px_list_init(&ep->sendq);
        px_list_init(&ep->rts);
        px_list_init(&ep->held);
        px_list_init(&ep->ooo);
        px_list_init(&ep->work);
        ep->rx.ep = ep;
        if (px_params.ofi_mr_cache > 0 &&
            !(ep->mrc = calloc((size_t)px_params.ofi_mr_cache, sizeof(*ep->mrc)))) {
            free(ep);
            return PX_ERR_NO_MEMORY;
        }
        int rc = fi_av_insert(ep->rail->av, p->sub[sub].name, 1, &ep->dest, 0, NULL);
        if (rc != 1) {
            px_error("ofi", "%s: the address of rank %d (%s) is refused: %s", s->prov, rank,
                     p->sub[sub].info.label, fi_strerror(rc < 0 ? -rc : FI_EINVAL));
            free(ep->mrc);
            free(ep);
            return PX_ERR_PEER_UNREACHABLE;
        }
        if (s->ip)
            memcpy(&ep->remote, p->sub[sub].name, sizeof(ep->remote));
        ep->chk.fd = -1;
        *slot = ep;
        s->eplist[s->neps++] = ep;
        s->early_check = !px_list_empty(&s->early); /* what came before it is its now */
    }
    (*slot)->owner = owner;
    *ep_p = *slot;
    return PX_OK;
}

/* ---------- the interface ---------- */

static void px_ofi_iface_close(px_net_iface_t *s);

static px_status_t px_ofi_iface_open(const px_boot_info_t *boot, const px_net_rx_ops_t *rx,
                                     void *owner, px_net_iface_t **iface_p)
{
    struct px_net_iface *s = calloc(1, sizeof(*s));
    px_status_t st;
    (void)owner; /* nothing connects to it: no ep_incoming */
    if (!s)
        return PX_ERR_NO_MEMORY;
    s->rx = rx;
    s->me = boot->rank;
    s->nranks = boot->size;
    s->node_of = boot->node_of;
    s->epfd = -1;
    s->inject = SIZE_MAX;
    s->bufsize = px_params.ofi_buffer;
    s->inline_max = s->bufsize - PX_NET_HDR_MAX - PX_OFI_OVERHEAD;
    px_list_init(&s->work);
    px_list_init(&s->early);
    px_list_init(&s->ctrl);
    s->next_cookie = 1;
    {
        /* job key: HMAC(secret, "plexus-ofi" || job id); the secret stays here */
        size_t slen;
        const uint8_t *secret = px_boot_secret(&slen);
        uint8_t msg[18], mac[32];
        memcpy(msg, "plexus-ofi", 10);
        memcpy(msg + 10, &boot->job_id, 8);
        px_hmac_sha256(secret, slen, msg, sizeof(msg), mac);
        memcpy(&s->key, mac, sizeof(s->key));
    }
    s->peers = calloc((size_t)boot->size, sizeof(*s->peers));
    s->eps = calloc((size_t)boot->size * PX_NET_MAX_SUB, sizeof(*s->eps));
    s->eplist = calloc((size_t)boot->size * PX_NET_MAX_SUB, sizeof(*s->eplist));
    st = s->peers && s->eps && s->eplist ? px_ofi_load() : PX_ERR_NO_MEMORY;
    if (st == PX_OK)
        st = px_ofi_pick(s);
    if (st == PX_OK)
        st = s->ip ? px_ofi_rails_ip(s, boot) : px_ofi_rails_domains(s);
    if (st == PX_OK && s->nrail == 0) {
        px_error("ofi", "%s opens none of this host's %s", s->prov,
                 s->ip ? "rail addresses (PX_RAILS, `pxinfo --rails`)" : "domains");
        st = PX_ERR_NOT_FOUND;
    }
    if (st == PX_OK) {
        if (s->inject > s->bufsize)
            s->inject = s->bufsize;
        for (int i = 0; i < s->nrail; i++)
            if (s->rail[i].wait_fd >= 0) {
                if (s->epfd < 0)
                    s->epfd = epoll_create1(EPOLL_CLOEXEC);
                struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
                if (s->epfd >= 0)
                    epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->rail[i].wait_fd, &ev);
            }
        st = px_ofi_publish(s);
    }
    if (st != PX_OK) {
        px_ofi_iface_close(s);
        return st;
    }
    if (PX_LOG_ON(PX_LOG_DEBUG))
        for (int i = 0; i < s->nrail; i++)
            px_debug("ofi", "rank %d rail %d: %s on %s%s", s->me, i, s->prov,
                     s->rail[i].domain_name, s->rma ? " (reads large frames)" : "");
    *iface_p = s;
    return PX_OK;
}

/* BYE on every endpoint that carried something, then polls until those
 * went (with manual progress the provider sends only while polled), the
 * peers said BYE too, or half a second passed: a peer still finishing drops
 * what it would send us instead of waiting for us to take it. */
static void px_ofi_bye(struct px_net_iface *s)
{
    int n = 0;
    s->closing = 1;
    for (int i = 0; s->eps && i < s->nranks * PX_NET_MAX_SUB; i++) {
        struct px_net_ep *ep = s->eps[i];
        if (ep && ep->used && !ep->peer_done) {
            px_ofi_ctrl(ep, PX_OFI_BYE, 0);
            n++;
        }
    }
    uint64_t end = px_time_ns() + 500000000ull;
    while (n && px_time_ns() < end) {
        px_ofi_iface_progress(s);
        n = !px_list_empty(&s->ctrl);
        for (int i = 0; i < s->nranks * PX_NET_MAX_SUB && !n; i++) {
            struct px_net_ep *ep = s->eps[i];
            n = ep && ep->used && !ep->peer_done && ep->posted;
        }
    }
}

static void px_ofi_iface_close(px_net_iface_t *s)
{
    px_ofi_bye(s);
    if (PX_LOG_ON(PX_LOG_DEBUG) || px_profile_counters()) {
        px_ofi_stats_t *t = &s->st;
        fprintf(
            stderr,
            "[plexus profile] rank %d ofi %s: tx inline %llu (inject %llu) rts %llu chunks %llu "
            "again %llu bytes read by peers %llu | rx inline %llu rts %llu long %llu held %llu "
            "early %llu overtaken %llu stale %llu bad %llu | reads %llu errors %llu nak tx %llu "
            "rx %llu late fin %llu | registrations %llu reused %llu | completion errors "
            "%llu\n",
            s->me, s->prov, (unsigned long long)t->tx_eager, (unsigned long long)t->tx_inject,
            (unsigned long long)t->tx_rts, (unsigned long long)t->tx_chunks,
            (unsigned long long)t->tx_again, (unsigned long long)t->tx_bytes_read,
            (unsigned long long)t->rx_eager, (unsigned long long)t->rx_rts,
            (unsigned long long)t->rx_long, (unsigned long long)t->rx_held,
            (unsigned long long)t->rx_early, (unsigned long long)t->rx_ooo,
            (unsigned long long)t->rx_stale, (unsigned long long)t->rx_bad,
            (unsigned long long)t->reads, (unsigned long long)t->read_errors,
            (unsigned long long)t->naks_tx, (unsigned long long)t->naks_rx,
            (unsigned long long)t->fins_late, (unsigned long long)t->mr_regs,
            (unsigned long long)t->mr_hits, (unsigned long long)t->cq_errors);
    }
    /* the endpoints first: closing them ends what the provider still holds.
     * One with a read out (on a path that failed: the others end before the
     * BYE) stays open with its rail: closing it crashed ofi_rxm 1.17, and
     * the process is about to end anyway. */
    for (int i = 0; i < s->nrail; i++)
        if (s->rail[i].ep && !s->rail[i].reads_out) {
            fi_close(&s->rail[i].ep->fid);
            s->rail[i].ep = NULL;
        } else if (s->rail[i].ep) {
            px_debug("ofi", "rail %d (%s) keeps a read on a failed path: left open", i,
                     s->rail[i].domain_name);
        }
    if (s->eps)
        for (int i = 0; i < s->nranks * PX_NET_MAX_SUB; i++)
            if (s->eps[i])
                px_ofi_ep_free(s->eps[i]);
    px_list_t *e, *t;
    px_list_for_each_safe(e, t, &s->early)
        free(px_container_of(e, px_ofi_held_t, link));
    px_list_for_each_safe(e, t, &s->ctrl)
        free(px_container_of(e, px_ofi_held_t, link));
    px_ofi_iface_free_reads(s);
    for (int i = 0; i < s->nrail; i++)
        if (!s->rail[i].ep)
            px_ofi_rail_close(&s->rail[i]);
    if (s->peers)
        for (int i = 0; i < s->nranks; i++)
            free(s->peers[i]);
    if (s->epfd >= 0)
        close(s->epfd);
    free(s->peers);
    free(s->eps);
    free(s->eplist);
    free(s);
}

static void px_ofi_iface_query(px_net_iface_t *s, px_net_attr_t *attr)
{
    memset(attr, 0, sizeof(*attr));
    attr->caps = PX_NET_CAP_RESET | (s->ip ? PX_NET_CAP_PATH_CHECK : 0);
    attr->max_frag = 1u << 20;
    /* a frame above PX_OFI_BUFFER is read by the receiver: one round
     * trip, where a rendezvous would take two before it */
    attr->eager_limit = px_params.ofi_eager_limit;
    /* the providers here emulate RDMA over sockets; hardware ones would
     * say less and more */
    attr->latency_us = s->same_node ? 2 : 10;
    attr->bandwidth_mbs = s->same_node ? 5000 : 1000;
}

static int px_ofi_iface_fd(px_net_iface_t *s) { return s->epfd; }

const px_net_ops_t px_net_ofi_ops = {
    .size = sizeof(px_net_ops_t),
    .name = "ofi",
    .iface_open = px_ofi_iface_open,
    .iface_close = px_ofi_iface_close,
    .iface_query = px_ofi_iface_query,
    .iface_reachable = px_ofi_iface_reachable,
    .ep_create = px_ofi_ep_create,
    .ep_subs = px_ofi_ep_subs,
    .ep_send = px_ofi_ep_send,
    .ep_send_bulk = px_ofi_ep_send,
    .ep_frame = px_net_stub_ep_frame,
    .ep_wake = px_net_stub_ep_wake,
    .ep_send_fill = px_net_stub_ep_send_fill,
    .ep_get = px_net_stub_ep_get,
    .ep_put = px_net_stub_ep_put,
    .ep_pending = px_ofi_ep_pending,
    .ep_reset = px_ofi_ep_reset,
    .ep_withdraw = px_net_stub_ep_withdraw,
    .ep_destroy = px_net_stub_ep_destroy,
    .ep_rx_cancel = px_ofi_ep_rx_cancel,
    .iface_progress = px_ofi_iface_progress,
    .iface_fd = px_ofi_iface_fd,
    .ep_path_check = px_ofi_ep_path_check,
    .ep_describe = px_ofi_ep_describe,
    .iface_quiet = px_ofi_iface_quiet,
    .ep_ready = px_net_stub_ep_ready,
    .ep_bulk_recv = px_net_stub_ep_bulk_recv,
    .ep_bulk_send = px_net_stub_ep_bulk_send,
    .ep_bulk_acked = px_net_stub_ep_bulk_acked,
    .ep_bulk_cancel = px_net_stub_ep_bulk_cancel,
    .iface_sleep = px_net_stub_iface_sleep,
};

/* ---------- for pxinfo ---------- */

static const char *px_ofi_addr_format(uint32_t fmt)
{
    switch (fmt) {
    case FI_SOCKADDR_IN:
        return "ipv4";
    case FI_SOCKADDR_IN6:
        return "ipv6";
    case FI_SOCKADDR_IB:
        return "ib";
    case FI_ADDR_STR:
        return "string";
    default:
        return "native";
    }
}

void px_net_ofi_print(FILE *f)
{
    if (px_ofi_load() != PX_OK)
        return;
    struct fi_info *all = px_ofi_getinfo(NULL, 0, NULL), *rma = px_ofi_getinfo(NULL, 1, NULL);
    fprintf(f,
            "libfabric %u.%u (Plexus built with %u.%u); providers with reliable datagram "
            "endpoints\nand messages, and their domains (NICs):\n",
            FI_MAJOR(fi_version()), FI_MINOR(fi_version()), FI_MAJOR_VERSION, FI_MINOR_VERSION);
    if (!all)
        fprintf(f, "  none\n");
    for (struct fi_info *i = all; i; i = i->next) {
        int dup = 0; /* one line per provider and domain (addresses of several families) */
        for (struct fi_info *j = all; j != i && !dup; j = j->next)
            dup = !strcmp(j->fabric_attr->prov_name, i->fabric_attr->prov_name) &&
                  !strcmp(j->domain_attr->name, i->domain_attr->name);
        if (dup)
            continue;
        char nic[96] = "";
        if (i->nic && i->nic->device_attr && i->nic->device_attr->name)
            snprintf(nic, sizeof(nic), " nic %s", i->nic->device_attr->name);
        if (i->nic && i->nic->link_attr && i->nic->link_attr->speed)
            snprintf(nic + strlen(nic), sizeof(nic) - strlen(nic), " %.0f Gb/s",
                     (double)i->nic->link_attr->speed / 1e9);
        int has_rma = 0;
        for (struct fi_info *j = rma; j && !has_rma; j = j->next)
            has_rma = !strcmp(j->fabric_attr->prov_name, i->fabric_attr->prov_name) &&
                      !strcmp(j->domain_attr->name, i->domain_attr->name);
        fprintf(f, "  %-14s domain %-10s %-6s%s%s\n", i->fabric_attr->prov_name,
                i->domain_attr->name, px_ofi_addr_format(i->addr_format), has_rma ? " rma" : "    ",
                nic);
    }
    fi_freeinfo(all);
    fi_freeinfo(rma);

    /* what PX_NET=ofi would open here */
    struct px_net_iface *s = calloc(1, sizeof(*s));
    if (!s || px_ofi_pick(s) != PX_OK) {
        free(s);
        return;
    }
    fprintf(f, "\nPX_NET=ofi uses %s%s, large frames %s; its rails here:\n", s->prov,
            px_params.ofi_provider && px_params.ofi_provider[0] ? " (PX_OFI_PROVIDER)"
                                                                : " (the first of its list)",
            s->rma ? "read by the receiver (fi_read)" : "sent as messages");
    if (s->ip) {
        px_net_addr_t a[PX_NET_MAX_ADDR];
        struct in_addr remote = {0}; /* as seen by a launcher on another host */
        int n = px_net_addr_local(remote, &s->explicit_rails, a, PX_NET_MAX_ADDR);
        for (int i = 0; i < n; i++) {
            char ip[INET_ADDRSTRLEN];
            if (a[i].boot)
                continue;
            inet_ntop(AF_INET, &a[i].addr, ip, sizeof(ip));
            struct fi_info *l = px_ofi_getinfo(s->prov, s->rma, ip);
            fprintf(f, "  rail %d  %-10s %s/%d%s\n", a[i].rail, a[i].ifname, ip, a[i].prefix,
                    l ? "" : "  (the provider does not open it)");
            fi_freeinfo(l);
        }
        fprintf(f, "  (PX_RAILS chooses them as for tcp: `pxinfo --rails`)\n");
    } else {
        struct fi_info *l = px_ofi_getinfo(s->prov, s->rma, NULL);
        int k = 0;
        for (struct fi_info *i = l; i; i = i->next) {
            int dup = 0;
            for (struct fi_info *j = l; j != i && !dup; j = j->next)
                dup = !strcmp(j->domain_attr->name, i->domain_attr->name);
            if (!dup && !strcmp(i->fabric_attr->prov_name, s->prov))
                fprintf(f, "  rail %d  domain %s\n", k++, i->domain_attr->name);
        }
        fi_freeinfo(l);
        if (s->same_node)
            fprintf(f, "  (ranks of one node only)\n");
    }
    free(s);
}
