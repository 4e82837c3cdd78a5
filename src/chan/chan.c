/* The channel layer's set-up, the dispatch of arriving frames to their
 * active-message handlers, progress, flush and state. */
#include "chan_impl.h"
#include "../boot/machine.h"
#include "../util/clock.h"
#include "../util/log.h"
#include "../util/param.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct px_chan_state px_c;

/* ---------- active messages ---------- */

void px_chan_am_register(unsigned id, size_t hdr_len, unsigned flags, px_chan_am_fn fn)
{
    if (id == 0 || id >= PX_CHAN_AM_MAX || hdr_len < 1 || hdr_len > PX_CHAN_HDR_MAX) {
        px_error("chan", "active message %u: invalid registration", id);
        return;
    }
    px_c.am[id] = (px_chan_am_t){.fn = fn, .hdr_len = (uint8_t)hdr_len, .flags = (uint8_t)flags};
}

/* Every arriving frame: its header is checked against its id's
 * registration before its handler sees it. */
void *px_chan_rx_begin_at(void *owner, const void *hdr, size_t hdr_len, size_t off,
                          size_t payload_len, void **ctx_p)
{
    px_chan_t *c = owner;
    unsigned am = hdr_len ? ((const uint8_t *)hdr)[0] : 0;
    const px_chan_am_t *a = &px_c.am[am < PX_CHAN_AM_MAX ? am : 0];
    *ctx_p = NULL;
    if (__builtin_expect(!a->fn || hdr_len < a->hdr_len || hdr_len > PX_CHAN_HDR_MAX ||
                             (off && !(a->flags & PX_CHAN_AM_STRIPED)),
                         0)) {
        px_error("chan", "malformed message header from rank %d (%zu bytes)", c->rank, hdr_len);
        return NULL;
    }
    return a->fn(c->rank, hdr, hdr_len, off, payload_len, ctx_p);
}

void px_chan_rx_done_len(void *owner, void *ctx, size_t len)
{
    px_c.up->rx_done(((px_chan_t *)owner)->rank, ctx, len);
}

void px_chan_ep_failed(void *owner, px_status_t why)
{
    px_chan_t *c = owner;
    c->failed = 1;
    if (!px_c.finalizing)
        px_c.up->peer_failed(c->rank, why);
}

int px_chan_rx_can_stream(void) { return px_c.rx_stream; }

/* Shared memory and self deliver one frame at a time per peer. */
static void *px_chan_rx_begin(void *owner, const void *hdr, size_t hdr_len, size_t payload_len,
                              void **ctx_p)
{
    px_chan_t *c = owner;
    c->rx_len = payload_len;
    px_c.rx_stream = c->stream;
    void *at = px_chan_rx_begin_at(owner, hdr, hdr_len, 0, payload_len, ctx_p);
    px_c.rx_stream = 0;
    return at;
}

static void px_chan_rx_data(void *owner, void *ctx, const void *data, size_t len)
{
    px_c.up->rx_data(((px_chan_t *)owner)->rank, ctx, data, len);
}

static void px_chan_rx_done(void *owner, void *ctx)
{
    px_chan_rx_done_len(owner, ctx, ((px_chan_t *)owner)->rx_len);
}

static const px_net_rx_ops_t px_chan_net_rx_ops = {
    .rx_begin = px_chan_rx_begin,
    .rx_done = px_chan_rx_done,
    .rx_data = px_chan_rx_data,
    .ep_failed = px_chan_ep_failed,
};

static void px_chan_bulk_progress(void *owner, void *arg, uint64_t got)
{
    px_c.up->bulk_progress(((px_chan_t *)owner)->rank, arg, got);
}

static void px_chan_bulk_done(void *owner, void *arg, px_status_t st)
{
    px_c.up->bulk_done(((px_chan_t *)owner)->rank, arg, st);
}

static void px_chan_bulk_failed(void *owner, void *arg, uint64_t acked)
{
    px_c.up->bulk_failed(((px_chan_t *)owner)->rank, arg, acked);
}

/* The rail layer may have stripes of several frames in flight at once. */
static const px_rail_rx_ops_t px_chan_rail_rx_ops = {
    .rx_begin = px_chan_rx_begin_at,
    .rx_done = px_chan_rx_done_len,
    .ep_failed = px_chan_ep_failed,
    .bulk_progress = px_chan_bulk_progress,
    .bulk_done = px_chan_bulk_done,
    .bulk_failed = px_chan_bulk_failed,
};

void px_chan_ctrl(px_chan_t *c, uint64_t what)
{
    px_chan_ctrl_hdr_t h = {.am = PX_CHAN_AM_CTRL, .what = what};
    px_status_t st = px_chan_send(c->rank, NULL, &h, sizeof(h), NULL, 0, 0, NULL, NULL);
    if (st < 0)
        px_error("chan", "cannot send control message to rank %d: %s", c->rank,
                 px_status_string(st));
}

static void *px_chan_ctrl_in(int peer, const void *hdr, size_t hdr_len, size_t off, size_t len,
                             void **ctx_p)
{
    px_chan_ctrl_hdr_t h;
    (void)hdr_len, (void)off, (void)len, (void)ctx_p;
    memcpy(&h, hdr, sizeof(h));
    if (px_c.peers[peer].kind == PX_CHAN_RAIL)
        px_chan_rc_msg(&px_c.peers[peer], h.what);
    return NULL;
}

/* ---------- set-up ---------- */

static int px_net_enabled(const char *name)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", px_params.net);
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (!strcmp(t, name))
            return 1;
    return 0;
}

/* Every name in PX_NET is a transport of the registry. */
static px_status_t px_chan_check_net(void)
{
    char buf[128], names[128];
    size_t o = 0;
    const px_net_ops_t *const *all = px_net_all();
    for (int i = 0; all[i]; i++)
        if (strcmp(all[i]->name, "self"))
            o +=
                (size_t)snprintf(names + o, sizeof(names) - o, "%s%s", o ? ", " : "", all[i]->name);
    snprintf(buf, sizeof(buf), "%s", px_params.net);
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (!px_net_find(t)) {
            if (!strcmp(t, "ofi"))
                px_error("chan",
                         "PX_NET='%s': this Plexus was built without libfabric, so it has no ofi "
                         "transport (install libfabric-dev and build again; use %s meanwhile)",
                         px_params.net, names);
            else
                px_error("chan",
                         "PX_NET='%s': unknown transport '%s' (use %s, or a "
                         "comma-separated combination)",
                         px_params.net, t, names);
            return PX_ERR_INVALID_PARAM;
        }
    return PX_OK;
}

/* The connections beside the datagrams of rail: of hybrid channels, and to
 * processes of other jobs. */
static px_status_t px_chan_open_rc(const px_boot_info_t *boot)
{
    size_t chunk = px_params.rndv_chunk ? px_params.rndv_chunk : (1u << 20);
    px_status_t st = px_rail_init(boot, "tcp", &px_chan_rc_rx_ops, &px_c.rail_rc);
    if (st != PX_OK)
        return st;
    size_t eager = px_rail_eager_limit(px_c.rail_rc);
    int beside_ofi = px_c.vc_car == PX_CAR_TCP; /* ofi counts as a connection too */
    if (beside_ofi) {                           /* limits both take */
        if (eager > px_c.car_eager[PX_CAR_TCP])
            eager = px_c.car_eager[PX_CAR_TCP];
        if (chunk > px_c.car_chunk[PX_CAR_TCP])
            chunk = px_c.car_chunk[PX_CAR_TCP];
    }
    px_c.car_eager[PX_CAR_TCP] = eager;
    px_c.car_chunk[PX_CAR_TCP] = chunk;
    if (beside_ofi)
        return PX_OK; /* both rails polled in turn (px_chan_progress) */
    px_chan_rc_setup();
    /* data: which rail (px_chan_progress reads it) */
    px_c.epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 0};
    struct epoll_event ev_rc = {.events = EPOLLIN, .data.u32 = 1};
    if (px_c.epfd < 0 || epoll_ctl(px_c.epfd, EPOLL_CTL_ADD, px_c.rail_fd, &ev) ||
        epoll_ctl(px_c.epfd, EPOLL_CTL_ADD, px_rail_fd(px_c.rail_rc), &ev_rc)) {
        px_error("chan", "epoll: %s", strerror(errno));
        return PX_ERR_IO;
    }
    return PX_OK;
}

/* The network transports: one rail (ofi, udp or tcp), and with udp and tcp
 * both, a second for the connections of hybrid channels. ofi is reliable
 * like a connection: PX_CHANNELS calls its channel tcp. */
static px_status_t px_chan_open_rails(const px_boot_info_t *boot, int use_tcp, int use_udp,
                                      int use_ofi)
{
    px_status_t st = px_rail_init(boot,
                                  use_ofi   ? "ofi"
                                  : use_udp ? "udp"
                                            : "tcp",
                                  &px_chan_rail_rx_ops, &px_c.rail);
    if (st != PX_OK)
        return st;
    px_c.rail_fd = px_rail_fd(px_c.rail);
    size_t chunk = px_params.rndv_chunk ? px_params.rndv_chunk : (1u << 20);
    px_c.vc_car = use_udp ? PX_CAR_UDP : PX_CAR_TCP;
    px_c.car_eager[px_c.vc_car] = px_rail_eager_limit(px_c.rail);
    /* a lossy transport wants frames it can lose cheaply */
    size_t fm = px_rail_max_frame(px_c.rail);
    px_c.car_chunk[px_c.vc_car] = fm && fm < chunk ? fm : chunk;
    if (!(use_udp && use_tcp))
        return PX_OK;
    return px_chan_open_rc(boot);
}

/* Eager through the rings costs two copies and no round trip; the
 * rendezvous one copy (process_vm_readv) after a request and before a
 * completion notice: where the cores are the bottleneck (more ranks than
 * twice the cores), two copies cost more than the round trip from a
 * smaller size on (docs/transports.md). */
static size_t px_chan_shm_eager(void)
{
    const px_boot_machine_t *m = px_boot_machine();
    if (px_params.shm_eager_limit != PX_PARAM_SIZE_AUTO)
        return px_params.shm_eager_limit;
    return m->ranks <= 2 * m->cpus ? PX_SHM_EAGER_AUTO_HIGH : PX_SHM_EAGER_AUTO_LOW;
}

/* The channel to rank r: self, shared memory, or the network. */
static px_status_t px_chan_create(const px_boot_info_t *boot, int r)
{
    px_chan_t *c = &px_c.peers[r];
    px_net_attr_t attr;
    px_status_t st;
    c->rank = r;
    c->chunk = px_params.rndv_chunk ? px_params.rndv_chunk : (1u << 20);
    if (r == boot->rank) {
        c->kind = PX_CHAN_SELF;
        c->ops = px_c.self_ops;
        st = c->ops->ep_create(px_c.self_if, r, 0, c, &c->ep);
    } else if (px_c.shm_if && px_c.shm_ops->iface_reachable(px_c.shm_if, r)) {
        c->kind = PX_CHAN_SHM;
        c->ops = px_c.shm_ops;
        st = c->ops->ep_create(px_c.shm_if, r, 0, c, &c->ep);
    } else if (r >= boot->size && px_c.rail_rc && px_rail_reachable(px_c.rail_rc, r)) {
        /* a process of another job, in a job on datagrams or ofi: a
         * connection of the tcp rail beside */
        c->kind = PX_CHAN_RAIL;
        st = px_rail_vc_create(px_c.rail_rc, r, c, &c->vc);
        c->vc_rc = c->vc;
        c->rc = PX_RC_ACTIVE;
        c->car = PX_CAR_TCP;
        px_c.rc_active = 1;
    } else if (px_c.rail && px_rail_reachable(px_c.rail, r)) {
        c->kind = PX_CHAN_RAIL;
        st = px_rail_vc_create(px_c.rail, r, c, &c->vc);
        c->car = (uint8_t)px_c.vc_car;
        /* its connection is made only when wanted */
        c->hybrid = px_c.rail_rc && px_rail_reachable(px_c.rail_rc, r);
    } else {
        px_error("chan", "no transport in PX_NET='%s' reaches rank %d (node %d)", px_params.net, r,
                 r < boot->size ? boot->node_of[r] : -1);
        st = PX_ERR_PEER_UNREACHABLE;
    }
    if (st != PX_OK)
        return st;
    if (c->kind == PX_CHAN_RAIL) {
        px_c.rail_peers = 1;
        c->env_vc = c->vc;
        c->eager_limit = px_c.car_eager[c->car];
        c->chunk = px_c.car_chunk[c->car];
    } else {
        c->ops->iface_query(c->kind == PX_CHAN_SELF ? px_c.self_if : px_c.shm_if, &attr);
        c->eager_limit = px_c.shm_eager;
        c->can_get = !!(attr.caps & PX_NET_CAP_GET);
        c->wake = !!(attr.caps & PX_NET_CAP_WAKE);
        c->stream = !!(attr.caps & PX_NET_CAP_STREAM);
        px_c.wake_peers |= c->wake;
    }
    return PX_OK;
}

/* PX_PROGRESS_MODE=sleep and block: one epoll set over the shared-memory doorbell,
 * the network's descriptors and an eventfd by which another thread of the
 * process wakes the sleeper (px_chan_sleep_kick). Without a doorbell (no
 * socket for it) shared memory must be polled, and the process never
 * sleeps. */
static px_status_t px_chan_sleep_setup(void)
{
    int fds[3] = {px_c.shm_if ? px_c.shm_ops->iface_fd(px_c.shm_if) : -1,
                  !px_c.rail_peers ? -1
                  : px_c.epfd >= 0 ? px_c.epfd
                                   : px_c.rail_fd,
                  -1};
    if ((px_c.shm_if && fds[0] < 0) || (fds[0] < 0 && fds[1] < 0))
        return PX_OK;
    px_c.kick_fd = fds[2] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    px_c.sleep_fd = px_c.kick_fd < 0 ? -1 : epoll_create1(EPOLL_CLOEXEC);
    for (int i = 0; i < 3 && px_c.sleep_fd >= 0; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (fds[i] >= 0 && epoll_ctl(px_c.sleep_fd, EPOLL_CTL_ADD, fds[i], &ev)) {
            close(px_c.sleep_fd);
            px_c.sleep_fd = -1;
        }
    }
    if (px_c.sleep_fd < 0) {
        px_error("chan", "epoll for PX_PROGRESS_MODE=sleep: %s", strerror(errno));
        return PX_ERR_IO;
    }
    return PX_OK;
}

px_status_t px_chan_init(const px_boot_info_t *boot, const px_chan_up_t *up)
{
    px_status_t st;
    char err[256];
    int use_shm = px_net_enabled("shm"), use_tcp = px_net_enabled("tcp");
    int use_udp = px_net_enabled("udp"), use_ofi = px_net_enabled("ofi");

    px_c.boot = *boot;
    px_c.up = up;
    px_c.rail_fd = -1;
    px_c.epfd = -1;
    px_c.sleep_fd = px_c.kick_fd = -1;
    px_c.finalizing = 0;
    px_chan_am_register(PX_CHAN_AM_CTRL, sizeof(px_chan_ctrl_hdr_t), 0, px_chan_ctrl_in);
    /* the transports on this node, from the registry like the network ones */
    px_c.self_ops = px_net_find("self");
    px_c.shm_ops = px_net_find("shm");
    if (!px_c.self_ops || !px_c.shm_ops || px_chan_check_net() != PX_OK)
        return PX_ERR_INVALID_PARAM;
    if (!use_shm && !use_tcp && !use_udp && !use_ofi && boot->size > 1) {
        px_error("chan",
                 "PX_NET='%s' names no usable transport (use shm, tcp, udp, ofi or a "
                 "comma-separated combination)",
                 px_params.net);
        return PX_ERR_INVALID_PARAM;
    }
    if (use_ofi && (use_tcp || use_udp)) {
        px_error("chan",
                 "PX_NET='%s': ofi carries every network peer by itself; combine it with shm "
                 "only (PX_NET=shm,ofi)",
                 px_params.net);
        return PX_ERR_INVALID_PARAM;
    }
    /* empty: every message on the default */
    if (px_chr_parse(px_params.channels, &px_c.chr, err, sizeof(err))) {
        px_error("chan", "PX_CHANNELS='%s': %s", px_params.channels, err);
        return PX_ERR_INVALID_PARAM;
    }
    px_c.peers = calloc((size_t)px_boot_peer_room(boot), sizeof(*px_c.peers));
    if (!px_c.peers)
        return PX_ERR_NO_MEMORY;

    st = px_c.self_ops->iface_open(boot, &px_chan_net_rx_ops, NULL, &px_c.self_if);
    if (st != PX_OK)
        goto err;
    /* Opening shm is collective over the job (bootstrap barriers), so every
     * rank joins it, also one alone on its node, and then drops it. */
    if (use_shm && boot->size > 1) {
        st = px_c.shm_ops->iface_open(boot, &px_chan_net_rx_ops, NULL, &px_c.shm_if);
        if (st != PX_OK)
            goto err;
        if (boot->local_size < 2) {
            px_c.shm_ops->iface_close(px_c.shm_if);
            px_c.shm_if = NULL;
        }
    }
    if ((use_tcp || use_udp || use_ofi) && boot->size > 1 &&
        (st = px_chan_open_rails(boot, use_tcp, use_udp, use_ofi)) != PX_OK)
        goto err;
    st = px_boot_machine_detect(boot);
    if (st != PX_OK)
        goto err;
    px_c.shm_eager = px_chan_shm_eager();
    for (int r = 0; r < boot->size; r++)
        if ((st = px_chan_create(boot, r)) != PX_OK)
            goto err;
    px_c.npeers = boot->size;
    if ((!strcmp(px_params.progress_mode, "sleep") || !strcmp(px_params.progress_mode, "block")) &&
        (st = px_chan_sleep_setup()) != PX_OK)
        goto err;
    px_debug("chan", "ready: %d ranks, %s%s", boot->size, px_c.shm_if ? "shm " : "",
             px_c.rail ? px_rail_net_name(px_c.rail) : "");
    return PX_OK;

err:
    px_chan_finalize();
    return st;
}

void px_chan_finalize(void)
{
    px_c.finalizing = 1;
    if (px_c.rail)
        px_rail_finalize(px_c.rail);
    if (px_c.rail_rc)
        px_rail_finalize(px_c.rail_rc);
    if (px_c.epfd >= 0)
        close(px_c.epfd);
    if (px_c.sleep_fd >= 0)
        close(px_c.sleep_fd);
    if (px_c.kick_fd >= 0)
        close(px_c.kick_fd);
    px_c.epfd = px_c.sleep_fd = px_c.kick_fd = -1;
    px_c.rail = px_c.rail_rc = NULL;
    if (px_c.shm_if)
        px_c.shm_ops->iface_close(px_c.shm_if);
    if (px_c.self_if)
        px_c.self_ops->iface_close(px_c.self_if);
    px_c.shm_if = px_c.self_if = NULL;
    free(px_c.peers);
    px_c.peers = NULL;
    px_c.npeers = 0;
}

/* ---------- processes of other jobs ---------- */

/* They are reached over tcp only: over the job's tcp rail, over the
 * connections beside udp or ofi (rail_rc, opened now if the job has none),
 * or a tcp rail opened now when the job has no network (a singleton, a job
 * on one node with PX_NET=shm). Datagrams carry only the job's own ranks
 * (every packet carries the job's key), and so does ofi. */
static px_status_t px_chan_dyn_rail(void)
{
    if (!px_c.rail)
        return px_chan_open_rails(&px_c.boot, 1, 0, 0);
    if (!strcmp(px_rail_net_name(px_c.rail), "tcp"))
        return PX_OK;
    return px_c.rail_rc ? PX_OK : px_chan_open_rc(&px_c.boot);
}

px_status_t px_chan_card(char *card, size_t len)
{
    px_status_t st = px_chan_dyn_rail();
    size_t n;
    if (st == PX_OK)
        st = px_boot_own("tcp", card, len - 1, &n);
    if (st == PX_OK)
        card[n] = 0;
    return st;
}

px_status_t px_chan_peer_add(uint64_t job_id, uint32_t rank, const uint8_t key[32],
                             const char *card, const char *node, int *peer_p)
{
    px_status_t st = px_chan_dyn_rail();
    int p;
    if (st == PX_OK)
        st = px_boot_peer_add(job_id, rank, key, "tcp", card, node, &p);
    if (st != PX_OK)
        return st;
    if (!px_c.peers[p].vc) { /* new, or a number given back */
        if ((st = px_chan_create(&px_c.boot, p)) != PX_OK) {
            memset(&px_c.peers[p], 0, sizeof(px_c.peers[p]));
            px_boot_peer_remove(p);
            return st;
        }
        if (p >= px_c.npeers)
            px_c.npeers = p + 1;
    }
    *peer_p = p;
    return PX_OK;
}

px_status_t px_chan_peer_remove(int peer)
{
    px_chan_t *c = &px_c.peers[peer];
    if (peer < px_c.boot.size || peer >= px_c.npeers || !c->vc)
        return PX_ERR_INVALID_PARAM;
    px_status_t st = px_rail_vc_destroy(c->vc == c->vc_rc ? px_c.rail_rc : px_c.rail, c->vc);
    if (st != PX_OK)
        return st;
    memset(c, 0, sizeof(*c));
    px_boot_peer_remove(peer);
    return PX_OK;
}

/* ---------- progress ---------- */

/* Hybrid with connections in use: one look at both rails' descriptors
 * tells which to read (the other runs only its timers), instead of a
 * receive call on each every time. */
static int px_chan_progress_both(void)
{
    struct epoll_event ev[2];
    int ready[2] = {0, 0};
    int m = epoll_wait(px_c.epfd, ev, 2, 0);
    for (int i = 0; i < m; i++)
        ready[ev[i].data.u32 & 1] = 1;
    return px_rail_progress_ready(px_c.rail, ready[0]) +
           px_rail_progress_ready(px_c.rail_rc, ready[1]);
}

int px_chan_progress(void)
{
    int n = 0;
    if (px_c.self_active)
        n += px_c.self_ops->iface_progress(px_c.self_if);
    if (px_c.shm_if)
        n += px_c.shm_ops->iface_progress(px_c.shm_if);
    /* the network is polled every time once it carries traffic, and now
     * and then before that (to accept connections) */
    if (px_c.rail_peers && (px_c.rail_active || (++px_c.tick & 15) == 0 || !px_c.shm_if)) {
        if (px_c.rc_active && px_c.rail_active && px_c.epfd >= 0)
            return n + px_chan_progress_both();
        int k = px_rail_progress(px_c.rail);
        if (k)
            px_c.rail_active = 1;
        n += k;
        /* connections: accepted now and then, polled every time once in use */
        if (px_c.rail_rc && (px_c.rc_active || (++px_c.rc_tick & 15) == 0)) {
            k = px_rail_progress(px_c.rail_rc);
            if (k)
                px_c.rail_active = 1;
            n += k;
        }
    }
    return n;
}

int px_chan_sleep_arm(void)
{
    if (px_c.sleep_fd < 0 || px_chan_bulk_busy() ||
        (px_c.shm_if && !px_c.shm_ops->iface_quiet(px_c.shm_if)))
        return -1;
    if (px_c.shm_if)
        px_c.shm_ops->iface_sleep(px_c.shm_if, 1);
    int n = px_chan_progress();
    if (n)
        px_chan_sleep_disarm();
    return n;
}

void px_chan_sleep_wait(void)
{
    /* with network peers the rails' timers (acknowledgements,
     * retransmission, heartbeats) want a poll every millisecond, as
     * PX_PROGRESS_MODE=block gives them; shared memory has none, and the
     * bound only guards against a wake-up that never comes */
    struct epoll_event ev[3];
    epoll_wait(px_c.sleep_fd, ev, 3, px_c.rail_peers ? 1 : 100);
}

void px_chan_sleep_kick(void)
{
    uint64_t one = 1;
    if (write(px_c.kick_fd, &one, sizeof one) < 0 && errno != EAGAIN)
        px_warn("chan", "cannot wake the thread asleep for the process: %s", strerror(errno));
}

void px_chan_sleep_unkick(void)
{
    uint64_t n;
    if (read(px_c.kick_fd, &n, sizeof n) < 0 && errno != EAGAIN)
        px_warn("chan", "eventfd of the sleeping thread: %s", strerror(errno));
}

void px_chan_sleep_disarm(void)
{
    if (px_c.shm_if)
        px_c.shm_ops->iface_sleep(px_c.shm_if, 0);
}

/* ---------- flush ---------- */

/* Lossy transports at finalize (peers NULL: every peer talked to) and at
 * MPI_Comm_disconnect (the communicator's peers): every frame of ours is
 * acknowledged; stay (answering) until each of those peers says the same,
 * so none is left waiting for an acknowledgement we would no longer send. */
static px_status_t px_chan_quiesce(const int *peers, int n, void (*wait)(unsigned *idle))
{
    uint64_t t0 = px_time_ns(), next = 0, now;
    unsigned idle = 0;
    px_rail_done_begin(px_c.rail, peers, n);
    while (!px_rail_peers_done(px_c.rail, peers, n, NULL, 0)) {
        now = px_time_ns();
        if (now >= next) {
            px_rail_send_done(px_c.rail, peers, n);
            px_rail_ack_all(px_c.rail);
            next = now + 2000000ull;
        }
        if (now - t0 > 10000000000ull) {
            char who[256];
            px_rail_peers_done(px_c.rail, peers, n, who, sizeof(who));
            px_warn("chan", "%s: rank(s) %s did not confirm their traffic within 10 s",
                    peers ? "disconnect" : "finalize", who);
            return PX_ERR_TIMEOUT;
        }
        wait(&idle);
    }
    for (int i = 0; i < 3; i++) /* our last DONE may be lost: it costs nothing to repeat */
        px_rail_send_done(px_c.rail, peers, n);
    return PX_OK;
}

static int px_chan_busy(const px_chan_t *c, int acks)
{
    if (c->failed)
        return 0;
    if (c->kind == PX_CHAN_RAIL)
        return px_rail_vc_pending(c->vc) != 0 || (acks && px_rail_vc_unacked(c->vc)) ||
               (c->vc_rc &&
                (px_rail_vc_pending(c->vc_rc) != 0 || (acks && px_rail_vc_unacked(c->vc_rc))));
    if (c->kind == PX_CHAN_SHM)
        return c->ops->ep_pending(c->ep) != 0;
    return 0;
}

size_t px_chan_pending(int peer)
{
    const px_chan_t *c = &px_c.peers[peer];
    if (c->failed)
        return 0;
    if (c->kind == PX_CHAN_RAIL)
        return px_rail_vc_pending(c->vc) + (c->vc_rc ? px_rail_vc_pending(c->vc_rc) : 0);
    if (c->kind == PX_CHAN_SHM)
        return c->ops->ep_pending(c->ep);
    return 0;
}

/* Waits until nothing is queued to the n peers (peers NULL: every peer),
 * and with acks until they acknowledged everything; then, with quiesce,
 * the DONE handshake with them (px_chan_quiesce). `what` names the call in
 * warnings. */
static px_status_t px_chan_drain(const int *peers, int n, int acks, int quiesce, const char *what,
                                 void (*wait)(unsigned *idle))
{
    unsigned idle = 0;
    uint64_t deadline = px_time_ns() + 60000000000ull;
    /* what arrived is acknowledged now: a peer of another job may finalize
     * while this process goes on (or the other way round), and waits for
     * these acknowledgements in its own flush */
    if (px_c.rail)
        px_rail_ack_all(px_c.rail);
    if (px_c.rail_rc)
        px_rail_ack_all(px_c.rail_rc);
    for (;;) {
        int busy = 0;
        for (int i = 0; i < (peers ? n : px_c.npeers) && !busy; i++) {
            int r = peers ? peers[i] : i;
            busy = r >= 0 && r < px_c.npeers && px_chan_busy(&px_c.peers[r], acks);
        }
        if (!busy)
            return quiesce ? px_chan_quiesce(peers, n, wait) : PX_OK;
        if (acks && px_c.rail)
            px_rail_ack_all(px_c.rail); /* peers in the same loop wait for ours */
        if (acks && px_c.rail_rc)
            px_rail_ack_all(px_c.rail_rc);
        if (px_time_ns() > deadline) {
            px_warn("chan", "%s: data still queued or unacknowledged after 60 s", what);
            return PX_ERR_TIMEOUT;
        }
        wait(&idle);
    }
}

px_status_t px_chan_flush(int mode, void (*wait)(unsigned *idle))
{
    int lossy = px_c.rail && px_rail_lossy(px_c.rail);
    int last = mode == PX_CHAN_FLUSH_LAST && lossy;
    return px_chan_drain(NULL, 0, mode == PX_CHAN_FLUSH_ACKED || last, last, "finalize", wait);
}

/* The peers without a channel of the rail (shared memory, this process)
 * have none in the rail's quiescence either (px_rail_done_begin skips
 * them). */
px_status_t px_chan_flush_peers(const int *peers, int n, void (*wait)(unsigned *idle))
{
    int lossy = px_c.rail && px_rail_lossy(px_c.rail);
    return px_chan_drain(peers, n, 1, lossy, "disconnect", wait);
}

/* ---------- state ---------- */

int px_chan_failed(int peer) { return px_c.peers[peer].failed; }

const char *px_chan_name(int peer)
{
    static const char *const names[] = {"self", "shm", "tcp"};
    const px_chan_t *c = &px_c.peers[peer];
    if (c->kind == PX_CHAN_RAIL)
        return c->vc == c->vc_rc       ? "tcp"
               : c->rc == PX_RC_ACTIVE ? "udp+tcp"
                                       : px_rail_net_name(px_c.rail);
    return names[c->kind];
}

void px_chan_dump(int peer, int me, int talked)
{
    char line[2048];
    px_chan_t *c = &px_c.peers[peer];
    if (c->kind != PX_CHAN_RAIL || !c->vc || (!talked && !c->vc_rc))
        return;
    px_rail_vc_dump(c->vc, line, sizeof(line));
    fprintf(stderr, "[rank %d state] to %d: %s%s; %s\n", me, peer, px_rail_net_name(px_c.rail),
            c->failed ? " (failed)" : "", line);
    if (c->vc_rc) {
        static const char *const rc[] = {"none", "asked", "wanted", "in use"};
        px_rail_vc_dump(c->vc_rc, line, sizeof(line));
        fprintf(stderr, "[rank %d state] to %d: connection %s, messages now on %s; %s\n", me, peer,
                rc[c->rc & 3], c->env_vc == c->vc_rc ? "it" : "datagrams", line);
    }
}

void px_chan_print_stats(int me)
{
    /* channels allocated by type and what each carried (sent) */
    enum {
        SELF = PX_CAR_SELF,
        SHM = PX_CAR_SHM,
        DGRAM = PX_CAR_UDP,
        CONN = PX_CAR_TCP,
        NCH = PX_CAR_N
    };
    static const char *const chn[NCH] = {"self", "shm", "udp", "tcp"};
    unsigned long long nch[NCH] = {0}, msgs[NCH] = {0}, bytes[NCH] = {0}, fenced = 0;
    for (int r = 0; r < px_c.boot.size; r++) {
        px_chan_t *c = &px_c.peers[r];
        int k = c->kind == PX_CHAN_SELF ? SELF : c->kind == PX_CHAN_SHM ? SHM : px_c.vc_car;
        /* a datagram channel is there from the start; a connection once used */
        nch[k] += k != CONN || px_rail_vc_used(c->vc);
        if (c->vc_rc)
            nch[CONN] += c->rc != PX_RC_NONE;
        for (int i = 0; i < NCH; i++) {
            msgs[i] += c->car_msgs[i];
            bytes[i] += c->car_bytes[i];
        }
        fenced += c->fenced;
    }
    char vol[512];
    size_t off = 0;
    for (int k = 0; k < NCH; k++)
        off += (size_t)snprintf(vol + off, sizeof(vol) - off, "%s%s %llu msgs %llu bytes",
                                k ? ", " : "", chn[k], msgs[k], bytes[k]);
    char opened[96] = "";
    if (px_c.rail_rc)
        snprintf(opened, sizeof(opened), " (opened here %d, by peers %d; fastest path %d)",
                 px_c.rc_out, px_c.rc_in, px_c.rc_fast);
    fprintf(
        stderr,
        "[plexus profile] rank %d channels: self %llu shm %llu udp %llu tcp %llu%s | sent: %s\n",
        me, nch[SELF], nch[SHM], nch[DGRAM], nch[CONN], opened, vol);
    /* which PX_CHANNELS entry chose the channel of the messages sent */
    char hits[1024];
    off = 0;
    for (int i = 0; i <= px_c.chr.n && off < sizeof(hits); i++) {
        char rule[96] = "default";
        if (i < px_c.chr.n)
            px_chr_format(&px_c.chr.r[i], rule, sizeof(rule));
        off += (size_t)snprintf(hits + off, sizeof(hits) - off, "%s%d %s %llu", i ? ", " : "",
                                i + 1, rule, (unsigned long long)px_c.chr_hits[i]);
    }
    fprintf(stderr,
            "[plexus profile] rank %d channel rules: %s | kept in order on the "
            "previous channel %llu\n",
            me, hits, fenced);
}

/* The rails' own counters come after the protocols' (px_proto_print_stats). */
void px_chan_print_rail_stats(int me)
{
    if (px_c.rail)
        px_rail_print_stats(px_c.rail, me);
    if (px_c.rail_rc)
        px_rail_print_stats(px_c.rail_rc, me);
}
