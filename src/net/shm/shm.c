/* shm: per-node shared memory. One single-producer/single-consumer ring of
 * fixed cells per ordered pair of local ranks; messages larger than a cell
 * are fragmented over consecutive cells. Large transfers read the sender's
 * buffer directly with process_vm_readv (ep_get); collectives may also
 * write a peer's buffer (ep_put, process_vm_writev). The segment is created
 * 0600 and unlinked as soon as every local rank has mapped it, so nothing is
 * left behind even if the job dies.
 *
 * PX_PROGRESS_MODE=sleep or block: a process about to sleep raises its doorbell word
 * in the segment; a sender that finds it raised lowers it and sends one
 * datagram to the sleeper's abstract Unix socket (its iface_fd), which
 * wakes its epoll. Senders look at the word only when some local rank runs
 * in that mode, and make the system call only when the peer sleeps. */
#include "../net.h"
#include "../../util/list.h"
#include "../../util/log.h"
#include "../../util/param.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#define PX_SHM_MAGIC 0x706c7873686d3031ull /* "plxshm01" */
#define PX_SHM_FIRST 1u
#define PX_SHM_LAST 2u
#define PX_SHM_HELP 4u  /* a shared copy to help with (px_shm_help), not a message */
#define PX_SHM_APART 8u /* the payload starts at the cell's third line */

/* A large ep_get shared by the two processes: the reader copies chunks from
 * the front, the owner of the memory (asked by a HELP cell on the ring,
 * answered from its progress) writes chunks from the back with
 * process_vm_writev, until they meet (each takes half when both are there,
 * the reader all of it when the owner is busy elsewhere).
 * claim: gen (16 bits) | lo (24) | hi (24), the chunks [lo, hi) not yet
 * taken; done: bytes copied. The reader sets it up and returns only when
 * done covers everything, so the owner never writes into a buffer the
 * reader has given back; a HELP that comes late finds another gen or
 * nothing left, and does nothing. */
typedef struct px_shm_share {
    _Atomic uint64_t claim;
    _Atomic uint64_t done;
    uint64_t src, dst, len, chunk; /* owner's memory, reader's buffer */
} px_shm_share_t;

/* The producer's count of cells written is its own (px_net_ep.out_head):
 * each cell carries its stamp, the low 32 bits of its number from 1, so
 * the consumer polls the cell it expects next, not a shared index that
 * the producer would have to write again after every cell (a cache line
 * more to move between the cores per message). The consumer's count of
 * cells read is shared (tail): the producer reads it when the ring looks
 * full. */
typedef struct px_shm_ring_ctl {
    _Alignas(64) _Atomic uint64_t tail; /* written by the consumer */
    _Alignas(64) px_shm_share_t share;  /* the producer's shared ep_get from the consumer */
} px_shm_ring_ctl_t;

typedef struct px_shm_cell {
    uint32_t hdr_len;  /* upper-layer header bytes (first fragment) */
    uint32_t frag_len; /* payload bytes in this cell */
    uint32_t flags;
    _Atomic uint32_t stamp; /* written last: (uint32_t)(cell number + 1) */
    uint64_t total;         /* payload bytes of the whole message */
} px_shm_cell_t;

typedef struct px_shm_seg_hdr {
    uint64_t magic;
    uint32_t local_size, slots;
    uint64_t cell_size;
    _Atomic uint32_t sleepers; /* some local rank may sleep: senders ring doorbells */
    uint32_t pad;
    /* local_size entries of each: pids, then the doorbells (1: asleep, a
     * sender must wake it) */
    _Atomic int32_t pids[];
} px_shm_seg_hdr_t;

/* A send that could not go out at once. */
typedef struct px_shm_sop {
    px_list_t link;
    uint8_t hdr[PX_NET_HDR_MAX];
    uint32_t hdr_len;
    int started; /* first fragment written */
    struct iovec iov[4];
    struct iovec *iovp;
    int iovcnt, iov_idx;
    size_t iov_off, total, sent;
    px_net_fill_fn fill; /* writes the payload (ep_send_fill), else iov holds it */
    px_net_send_cb_t cb;
    void *arg;
} px_shm_sop_t;

struct px_net_ep {
    struct px_net_iface *iface;
    void *owner;
    int rank, local;
    pid_t pid;
    px_shm_ring_ctl_t *out, *in;
    char *out_cells, *in_cells;
    uint64_t out_head, out_tail_cache, in_tail;
    /* reassembly of a fragmented message */
    char *rx_dest;
    void *rx_ctx;
    size_t rx_off;
    int rx_active;
    px_list_t sendq;
    px_list_t pending_link; /* on iface->pending when sendq is not empty */
    int ring;               /* the peer may sleep: look at its doorbell after a send */
    _Atomic uint32_t *bell; /* the peer's doorbell */
    uint16_t share_gen;     /* of this process's last shared ep_get from the peer */
};

struct px_net_iface {
    const px_net_rx_ops_t *rx;
    void *base;
    size_t seg_size;
    int me, L;
    uint32_t slots;
    size_t cell;
    int *local_of; /* world rank -> local index or -1 */
    int nranks;
    struct px_net_ep **eps;    /* by local index; NULL for self */
    struct px_net_ep **active; /* eps with an owner, polled */
    int nactive;
    px_list_t pending;
    int cma_ok;
    int ring;    /* some local rank may sleep (segment's sleepers) */
    int bell_fd; /* sleeping here: bound socket peers signal, else -1 */
    int tx_fd;   /* ringing others: unbound socket, else -1 */
    uint64_t job_id;
    int node_id;
};

static inline _Atomic uint32_t *px_shm_bells(struct px_net_iface *s)
{
    return (_Atomic uint32_t *)&((px_shm_seg_hdr_t *)s->base)->pids[s->L];
}

/* The abstract socket name of local rank l's doorbell. */
static socklen_t px_shm_bell_addr(struct px_net_iface *s, int l, struct sockaddr_un *a)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "plexus-%016llx-n%d-l%d",
                     (unsigned long long)s->job_id, s->node_id, l);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* Where the ring controls start: after the header, its pids and doorbells. */
static inline size_t px_shm_ctl_off(int L)
{
    size_t off = sizeof(px_shm_seg_hdr_t) + 2 * sizeof(int32_t) * (size_t)L;
    return (off + 63) & ~(size_t)63;
}

static inline px_shm_ring_ctl_t *px_shm_ring(struct px_net_iface *s, int from, int to)
{
    return (px_shm_ring_ctl_t *)((char *)s->base + px_shm_ctl_off(s->L)) +
           (size_t)from * (size_t)s->L + (size_t)to;
}

static inline char *px_shm_cells(struct px_net_iface *s, int from, int to)
{
    char *rings_end = (char *)px_shm_ring(s, s->L - 1, s->L - 1) + sizeof(px_shm_ring_ctl_t);
    size_t off = (size_t)(rings_end - (char *)s->base);
    off = (off + 4095) & ~(size_t)4095;
    return (char *)s->base + off + ((size_t)from * (size_t)s->L + (size_t)to) * s->slots * s->cell;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Maps now the pages of the cells this rank writes or reads. Left to first
 * use, the first trip round each ring takes a page fault per page, which
 * made a job's first few dozen small messages several times slower than the
 * rest, and still showed in short runs of medium ones (docs/transports.md,
 * "Shared memory"). Up to 8 ranks per node whole cells are mapped (the
 * segment is then at most 64 MiB); up to 16 the first page of each, which is
 * what small messages touch; beyond, a rank usually talks to a few of its
 * neighbours, and mapping every ring would cost more than it saves. Contents
 * are left alone (nothing is sent yet). */
static void px_shm_prefault(struct px_net_iface *s)
{
    if (s->L > 16)
        return;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t span = s->L <= 8 ? s->cell : pg; /* bytes of each cell to map */
    int populate = 1;
    for (int peer = 0; peer < s->L; peer++) {
        if (peer == s->me)
            continue;
        for (int dir = 0; dir < 2; dir++) {
            char *cells = dir ? px_shm_cells(s, s->me, peer) : px_shm_cells(s, peer, s->me);
            if (populate && span == s->cell &&
                madvise(cells, (size_t)s->slots * s->cell, MADV_POPULATE_WRITE) == 0)
                continue;
            for (uint32_t i = 0; i < s->slots; i++) {
                volatile char *c = cells + (size_t)i * s->cell;
                if (populate && madvise((void *)c, span, MADV_POPULATE_WRITE) == 0)
                    continue;
                populate = 0; /* an older kernel: a read maps the page too */
                for (size_t o = 0; o < span; o += pg)
                    (void)c[o];
            }
        }
    }
}

static size_t px_shm_seg_size(int L, uint32_t slots, size_t cell)
{
    size_t off = px_shm_ctl_off(L);
    off += sizeof(px_shm_ring_ctl_t) * (size_t)L * (size_t)L;
    off = (off + 4095) & ~(size_t)4095;
    return off + (size_t)L * (size_t)L * slots * cell;
}

/* This process sleeps when idle: the socket its peers wake it through.
 * Failing, it still works, by polling (px_shm_iface_fd answers -1). */
static px_status_t px_shm_bell_open(struct px_net_iface *s)
{
    struct sockaddr_un a;
    socklen_t alen = px_shm_bell_addr(s, s->me, &a);
    s->bell_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->bell_fd >= 0 && bind(s->bell_fd, (struct sockaddr *)&a, alen) == 0)
        return PX_OK;
    px_warn("shm", "no doorbell socket (%s): waiting processes poll instead of sleeping",
            strerror(errno));
    if (s->bell_fd >= 0)
        close(s->bell_fd);
    s->bell_fd = -1;
    return PX_ERR_IO;
}

static px_status_t px_shm_iface_open(const px_boot_info_t *boot, const px_net_rx_ops_t *rx,
                                     void *owner, px_net_iface_t **iface_p)
{
    struct px_net_iface *s = calloc(1, sizeof(*s));
    char name[96];
    int fd = -1;
    px_status_t st;

    if (!s)
        return PX_ERR_NO_MEMORY;
    s->rx = rx;
    (void)owner; /* it never calls ep_incoming */
    s->nranks = boot->size;
    s->local_of = malloc(sizeof(int) * (size_t)boot->size);
    if (!s->local_of) {
        free(s);
        return PX_ERR_NO_MEMORY;
    }
    for (int r = 0, l = 0; r < boot->size; r++)
        s->local_of[r] = boot->node_of[r] == boot->node_id ? l++ : -1;
    s->me = boot->local_rank;
    s->L = boot->local_size;
    /* a power of two of at least 4, and a multiple of 64 of at least 4096:
     * the parameter table checked both */
    s->slots = (uint32_t)px_params.shm_ring_slots;
    s->cell = px_params.shm_cell_size;
    /* Keep the segment reasonable for many local ranks. */
    while (s->L > 16 && s->slots > 8 && (size_t)s->L * s->L * s->slots * s->cell > (1ul << 31))
        s->slots >>= 1;
    s->cma_ok = px_params.shm_cma;
    s->bell_fd = s->tx_fd = -1;
    s->job_id = boot->job_id;
    s->node_id = boot->node_id;
    px_list_init(&s->pending);
    s->eps = calloc((size_t)s->L, sizeof(*s->eps));
    s->active = calloc((size_t)s->L, sizeof(*s->active));
    if (!s->eps || !s->active) {
        st = PX_ERR_NO_MEMORY;
        goto err_free;
    }

    s->seg_size = px_shm_seg_size(s->L, s->slots, s->cell);
    snprintf(name, sizeof(name), "/plexus-%016llx-n%d", (unsigned long long)boot->job_id,
             boot->node_id);
    if (s->L > 1 && boot->local_rank == 0) {
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 || ftruncate(fd, (off_t)s->seg_size) < 0) {
            px_error("shm", "cannot create shared-memory segment %s (%zu bytes): %s", name,
                     s->seg_size, strerror(errno));
            if (fd >= 0) {
                close(fd);
                shm_unlink(name);
            }
            fd = -1;
        }
    }
    /* Everyone waits for the creator, maps, then the creator unlinks. */
    st = px_boot_barrier();
    if (st != PX_OK)
        goto err_fd;
    if (s->L > 1) {
        if (fd < 0)
            fd = shm_open(name, O_RDWR, 0600);
        if (fd < 0) {
            px_error("shm", "cannot open shared-memory segment %s: %s", name, strerror(errno));
            st = PX_ERR_IO;
            /* still join the barrier below so the others do not wait forever */
        } else {
            s->base = mmap(NULL, s->seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            close(fd);
            fd = -1;
            if (s->base == MAP_FAILED) {
                px_error("shm", "mmap of %zu bytes failed: %s", s->seg_size, strerror(errno));
                s->base = NULL;
                st = PX_ERR_NO_MEMORY;
            } else {
                px_shm_seg_hdr_t *h = s->base;
                if (boot->local_rank == 0) {
                    h->magic = PX_SHM_MAGIC;
                    h->local_size = (uint32_t)s->L;
                    h->slots = s->slots;
                    h->cell_size = s->cell;
                }
                atomic_store(&h->pids[s->me], (int32_t)getpid());
                if ((!strcmp(px_params.progress_mode, "sleep") ||
                     !strcmp(px_params.progress_mode, "block")) &&
                    px_shm_bell_open(s) == PX_OK)
                    atomic_store(&h->sleepers, 1);
                px_shm_prefault(s);
            }
        }
    }
    {
        px_status_t bst = px_boot_barrier();
        if (s->L > 1 && boot->local_rank == 0)
            shm_unlink(name);
        if (st == PX_OK)
            st = bst;
    }
    if (st != PX_OK)
        goto err_map;
    if (s->L > 1 && atomic_load(&((px_shm_seg_hdr_t *)s->base)->sleepers)) {
        s->tx_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        s->ring = s->tx_fd >= 0;
    }
    *iface_p = s;
    return PX_OK;

err_fd:
    if (fd >= 0) {
        close(fd);
        shm_unlink(name);
    }
err_map:
    if (s->bell_fd >= 0)
        close(s->bell_fd);
    if (s->base)
        munmap(s->base, s->seg_size);
err_free:
    free(s->eps);
    free(s->active);
    free(s->local_of);
    free(s);
    return st;
}

static void px_shm_iface_close(px_net_iface_t *s)
{
    for (int i = 0; i < s->L; i++) {
        if (!s->eps[i])
            continue;
        px_list_t *e, *t;
        px_list_for_each_safe(e, t, &s->eps[i]->sendq) {
            px_shm_sop_t *op = px_container_of(e, px_shm_sop_t, link);
            if (op->iovp != op->iov)
                free(op->iovp);
            free(op);
        }
        free(s->eps[i]);
    }
    if (s->bell_fd >= 0)
        close(s->bell_fd);
    if (s->tx_fd >= 0)
        close(s->tx_fd);
    if (s->base)
        munmap(s->base, s->seg_size);
    free(s->eps);
    free(s->active);
    free(s->local_of);
    free(s);
}

static void px_shm_iface_query(px_net_iface_t *s, px_net_attr_t *attr)
{
    memset(attr, 0, sizeof(*attr));
    attr->caps =
        (s->cma_ok ? PX_NET_CAP_GET : 0) | (s->ring ? PX_NET_CAP_WAKE : 0) | PX_NET_CAP_STREAM;
    attr->max_frag = s->cell - sizeof(px_shm_cell_t) - PX_NET_HDR_MAX;
    /* 'auto' is resolved by proto, which knows how many ranks share the cores */
    attr->eager_limit = px_params.shm_eager_limit == PX_PARAM_SIZE_AUTO ? PX_SHM_EAGER_AUTO_LOW
                                                                        : px_params.shm_eager_limit;
    attr->latency_us = 0.2;
    attr->bandwidth_mbs = 10000;
}

static int px_shm_iface_reachable(px_net_iface_t *s, int rank)
{
    return s->base && rank >= 0 && rank < s->nranks && s->local_of[rank] >= 0 &&
           s->local_of[rank] != s->me;
}

static px_status_t px_shm_ep_create(px_net_iface_t *s, int rank, int sub, void *owner,
                                    px_net_ep_t **ep_p)
{
    if (!px_shm_iface_reachable(s, rank))
        return PX_ERR_UNSUPPORTED;
    if (sub != 0) /* one subchannel (px_net_stub_ep_subs) */
        return PX_ERR_INVALID_PARAM;
    int l = s->local_of[rank];
    struct px_net_ep *ep = s->eps[l];
    if (!ep) {
        ep = calloc(1, sizeof(*ep));
        if (!ep)
            return PX_ERR_NO_MEMORY;
        ep->iface = s;
        ep->rank = rank;
        ep->local = l;
        ep->out = px_shm_ring(s, s->me, l);
        ep->in = px_shm_ring(s, l, s->me);
        ep->out_cells = px_shm_cells(s, s->me, l);
        ep->in_cells = px_shm_cells(s, l, s->me);
        /* out_head and in_tail start at 0, as the fresh segment's rings */
        ep->pid = atomic_load(&((px_shm_seg_hdr_t *)s->base)->pids[l]);
        ep->ring = s->ring;
        ep->bell = &px_shm_bells(s)[l];
        px_list_init(&ep->sendq);
        px_list_init(&ep->pending_link);
        s->eps[l] = ep;
        s->active[s->nactive++] = ep;
    }
    ep->owner = owner;
    *ep_p = ep;
    return PX_OK;
}

static inline int px_shm_out_space(struct px_net_ep *ep)
{
    uint32_t slots = ep->iface->slots;
    if (ep->out_head - ep->out_tail_cache < slots)
        return 1;
    ep->out_tail_cache = atomic_load_explicit(&ep->out->tail, memory_order_acquire);
    return ep->out_head - ep->out_tail_cache < slots;
}

static inline px_shm_cell_t *px_shm_out_cell(struct px_net_ep *ep)
{
    struct px_net_iface *s = ep->iface;
    return (px_shm_cell_t *)(ep->out_cells + (ep->out_head & (s->slots - 1)) * s->cell);
}

/* The peer announced it sleeps: wake it, once (the first sender to lower
 * the doorbell sends the datagram). The fence orders our stamp store before
 * the doorbell load, as the sleeper's orders its doorbell store before its
 * last poll: one of the two sees the other's. A full socket buffer already
 * holds a wake-up. */
static __attribute__((noinline)) void px_shm_wake(struct px_net_ep *ep)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load_explicit(ep->bell, memory_order_relaxed) ||
        !atomic_exchange_explicit(ep->bell, 0, memory_order_relaxed))
        return;
    struct sockaddr_un a;
    socklen_t alen = px_shm_bell_addr(ep->iface, ep->local, &a);
    char b = 0;
    (void)sendto(ep->iface->tx_fd, &b, 1, MSG_DONTWAIT, (struct sockaddr *)&a, alen);
}

static void px_shm_ep_wake(px_net_ep_t *ep)
{
    if (ep->ring)
        px_shm_wake(ep);
}

/* Asks for the lines the cell after the next one will be written in
 * (its first and third: header, then a payload that does not fit the
 * first), in exclusive state, while this message goes. The consumer read
 * them last time round the ring, so without it each message waits for the
 * other core to give them up at its first store. Not the very next cell,
 * which a consumer that keeps up already polls, nor one the consumer may
 * not have read yet. */
static inline void px_shm_prefetch_next(struct px_net_ep *ep)
{
    struct px_net_iface *s = ep->iface;
    uint64_t i = ep->out_head + 1; /* out_head: the next cell */
    if (i - ep->out_tail_cache >= s->slots)
        return;
    char *n = ep->out_cells + (i & (s->slots - 1)) * s->cell;
#if defined(__x86_64__) || defined(__i386__)
    /* what __builtin_prefetch(p, 1) gives only with -mprfchw; a no-op on
     * processors without it */
    __asm__ volatile("prefetchw %0" ::"m"(*n));
    __asm__ volatile("prefetchw %0" ::"m"(*(n + 128)));
#else
    __builtin_prefetch(n, 1);
    __builtin_prefetch(n + 128, 1);
#endif
}

/* c, the cell at out_head, is written: the consumer may take it. */
static inline void px_shm_publish(struct px_net_ep *ep, px_shm_cell_t *c)
{
    ep->out_head++;
    atomic_store_explicit(&c->stamp, (uint32_t)ep->out_head, memory_order_release);
    px_shm_prefetch_next(ep);
    if (__builtin_expect(ep->ring, 0))
        px_shm_wake(ep);
}

/* Writes as many cells of op as the ring takes; returns 1 when all is out. */
static int px_shm_sop_push(struct px_net_ep *ep, px_shm_sop_t *op)
{
    size_t cap_total = ep->iface->cell - sizeof(px_shm_cell_t);
    while ((!op->started || op->sent < op->total) && px_shm_out_space(ep)) {
        px_shm_cell_t *c = px_shm_out_cell(ep);
        char *p = (char *)(c + 1);
        size_t cap = cap_total;
        c->flags = 0;
        c->hdr_len = 0;
        if (!op->started) {
            c->flags = PX_SHM_FIRST;
            c->hdr_len = op->hdr_len;
            c->total = op->total;
            memcpy(p, op->hdr, op->hdr_len);
            p += (op->hdr_len + 7) & ~7u;
            cap -= (op->hdr_len + 7) & ~7u;
            op->started = 1;
        }
        size_t n = 0;
        if (op->fill) {
            n = op->total - op->sent < cap ? op->total - op->sent : cap;
            if (n)
                op->fill(op->arg, p, op->sent, n);
        }
        while (n < cap && op->iov_idx < op->iovcnt) {
            struct iovec *v = &op->iovp[op->iov_idx];
            size_t k = v->iov_len - op->iov_off;
            if (k > cap - n)
                k = cap - n;
            if (k)
                memcpy(p + n, (char *)v->iov_base + op->iov_off, k);
            n += k;
            op->iov_off += k;
            if (op->iov_off == v->iov_len) {
                op->iov_idx++;
                op->iov_off = 0;
            }
        }
        c->frag_len = (uint32_t)n;
        op->sent += n;
        if (op->sent == op->total)
            c->flags |= PX_SHM_LAST;
        px_shm_publish(ep, c);
    }
    return op->started && op->sent == op->total;
}

static px_status_t px_shm_sop_start(struct px_net_ep *ep, px_shm_sop_t *op_stack,
                                    const struct iovec *iov, int iovcnt);

static px_status_t px_shm_ep_send(px_net_ep_t *ep, const void *hdr, size_t hdr_len,
                                  const struct iovec *iov, int iovcnt, px_net_send_cb_t cb,
                                  void *arg)
{
    struct px_net_iface *s = ep->iface;
    size_t total = px_net_iov_len(iov, iovcnt);

    if (hdr_len > PX_NET_HDR_MAX)
        return PX_ERR_INVALID_PARAM;
    /* Fast path: one cell, nothing queued before it. */
    if (px_list_empty(&ep->sendq) &&
        sizeof(px_shm_cell_t) + ((hdr_len + 7) & ~7u) + total <= s->cell && px_shm_out_space(ep)) {
        px_shm_cell_t *c = px_shm_out_cell(ep);
        char *p = (char *)(c + 1) + ((hdr_len + 7) & ~7u);
        /* The consumer polls the cell's first line. A payload that does not
         * fit there goes first, from the third line (the second would go to
         * the consumer with the first, its prefetch pair, while being
         * filled); the first line is written last, stamp and all, so that
         * it moves to the consumer once. */
        const char *src = iovcnt == 1 ? iov[0].iov_base : NULL;
        size_t first = 0; /* payload bytes written after the header */
        uint32_t apart = 0;
        if (src) {
            size_t n = iov[0].iov_len;
            if ((size_t)(p - (char *)c) + n > 64 && 128 + n <= s->cell) {
                memcpy((char *)c + 128, src, n);
                apart = PX_SHM_APART;
            } else {
                first = n;
            }
        } else {
            char *q = p;
            for (int i = 0; i < iovcnt; i++) {
                if (iov[i].iov_len)
                    memcpy(q, iov[i].iov_base, iov[i].iov_len);
                q += iov[i].iov_len;
            }
        }
        c->hdr_len = (uint32_t)hdr_len;
        c->frag_len = (uint32_t)total;
        c->flags = PX_SHM_FIRST | PX_SHM_LAST | apart;
        c->total = total;
        /* headers are 16..48 bytes: copy whole 8-byte words inline */
        char *h = (char *)(c + 1);
        for (size_t k = 0; k + 8 <= hdr_len; k += 8)
            memcpy(h + k, (const char *)hdr + k, 8);
        if (hdr_len & 7)
            memcpy(h + (hdr_len & ~(size_t)7), (const char *)hdr + (hdr_len & ~(size_t)7),
                   hdr_len & 7);
        if (first >= 8 && first <= 16) {
            /* tiny payloads: two overlapping word moves, no call into libc */
            memcpy(p, src, 8);
            memcpy(p + first - 8, src + first - 8, 8);
        } else if (first) {
            memcpy(p, src, first);
        }
        px_shm_publish(ep, c);
        return PX_OK;
    }

    px_shm_sop_t op_stack, *op = &op_stack;
    memset(op, 0, offsetof(px_shm_sop_t, iov));
    memcpy(op->hdr, hdr, hdr_len);
    op->hdr_len = (uint32_t)hdr_len;
    op->iovp = (struct iovec *)iov;
    op->iovcnt = iovcnt;
    op->iov_idx = 0;
    op->iov_off = 0;
    op->total = total;
    op->sent = 0;
    op->fill = NULL;
    op->cb = cb;
    op->arg = arg;
    return px_shm_sop_start(ep, op, iov, iovcnt);
}

/* A send that is not one cell of the fast path, on the stack: written as
 * far as the ring takes it, the rest queued (a copy of op). */
static px_status_t px_shm_sop_start(struct px_net_ep *ep, px_shm_sop_t *op_stack,
                                    const struct iovec *iov, int iovcnt)
{
    struct px_net_iface *s = ep->iface;
    px_shm_sop_t *op = op_stack;
    if (px_list_empty(&ep->sendq) && px_shm_sop_push(ep, op))
        return PX_OK;

    op = malloc(sizeof(*op));
    if (!op)
        return PX_ERR_NO_MEMORY;
    *op = *op_stack;
    if (iovcnt <= 4) {
        if (iovcnt)
            memcpy(op->iov, iov, sizeof(*iov) * (size_t)iovcnt);
        op->iovp = op->iov;
    } else {
        op->iovp = malloc(sizeof(*iov) * (size_t)iovcnt);
        if (!op->iovp) {
            free(op);
            return PX_ERR_NO_MEMORY;
        }
        memcpy(op->iovp, iov, sizeof(*iov) * (size_t)iovcnt);
    }
    /* not already there: a send from the completion callback of the
     * last queued one finds the queue empty while px_shm_push_pending
     * still holds the endpoint on the list */
    if (px_list_empty(&ep->pending_link))
        px_list_insert_tail(&s->pending, &ep->pending_link);
    px_list_insert_tail(&ep->sendq, &op->link);
    return PX_INPROGRESS;
}

static px_status_t px_shm_ep_send_fill(px_net_ep_t *ep, const void *hdr, size_t hdr_len, size_t len,
                                       px_net_fill_fn fill, px_net_send_cb_t cb, void *arg)
{
    if (hdr_len > PX_NET_HDR_MAX)
        return PX_ERR_INVALID_PARAM;
    px_shm_sop_t op = {0};
    memcpy(op.hdr, hdr, hdr_len);
    op.hdr_len = (uint32_t)hdr_len;
    op.iovp = op.iov;
    op.total = len;
    op.fill = fill;
    op.cb = cb;
    op.arg = arg;
    return px_shm_sop_start(ep, &op, NULL, 0);
}

/* len bytes between local and the peer's raddr, in the direction `put`
 * says (process_vm_writev or process_vm_readv). */
static px_status_t px_shm_cma(px_net_ep_t *ep, void *local, uint64_t raddr, size_t len, int put)
{
    size_t done = 0;
    if (!ep->iface->cma_ok)
        return PX_ERR_UNSUPPORTED;
    while (done < len) {
        struct iovec l = {(char *)local + done, len - done};
        struct iovec r = {(void *)(uintptr_t)(raddr + done), len - done};
        ssize_t n = put ? process_vm_writev(ep->pid, &l, 1, &r, 1, 0)
                        : process_vm_readv(ep->pid, &l, 1, &r, 1, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EPERM || errno == ENOSYS || errno == EACCES) {
                px_info("shm", "%s not permitted (%s); copying through rings",
                        put ? "process_vm_writev" : "process_vm_readv", strerror(errno));
                ep->iface->cma_ok = 0;
                return PX_ERR_UNSUPPORTED;
            }
            px_error("shm", "%s rank %d failed: %s",
                     put ? "process_vm_writev to" : "process_vm_readv from", ep->rank,
                     strerror(errno));
            return PX_ERR_IO;
        }
        done += (size_t)n;
    }
    return PX_OK;
}

/* ---------- shared copies ---------- */

#define PX_SHM_SHARE_CHUNK ((size_t)64 << 10)
#define PX_SHM_SHARE_MIN (2 * PX_SHM_SHARE_CHUNK)
#define PX_SHM_W_LO(w) (((w) >> 24) & 0xffffffu)
#define PX_SHM_W_HI(w) ((w)&0xffffffu)

/* Takes a chunk of gen's copy: the first one left (front) or the last;
 * 1 and its index, or 0 when none is left (or gen is over). */
static int px_shm_claim(px_shm_share_t *sh, uint16_t gen, int front, uint32_t *idx)
{
    uint64_t w = atomic_load_explicit(&sh->claim, memory_order_acquire);
    for (;;) {
        uint32_t lo = PX_SHM_W_LO(w), hi = PX_SHM_W_HI(w);
        if ((uint16_t)(w >> 48) != gen || lo >= hi)
            return 0;
        uint64_t nw = front ? w + (1ull << 24) : w - 1;
        if (atomic_compare_exchange_weak_explicit(&sh->claim, &w, nw, memory_order_acq_rel,
                                                  memory_order_acquire)) {
            *idx = front ? lo : hi - 1;
            return 1;
        }
    }
}

/* The owner of the memory: chunks from the back of the reader's copy gen,
 * written into its buffer, until none is left. */
static void px_shm_help(struct px_net_iface *s, struct px_net_ep *ep, uint16_t gen)
{
    px_shm_share_t *sh = &ep->in->share;
    uint32_t i;
    while (s->cma_ok && px_shm_claim(sh, gen, 0, &i)) {
        size_t off = (size_t)i * sh->chunk,
               k = sh->len - off < sh->chunk ? sh->len - off : sh->chunk;
        if (px_shm_cma(ep, (void *)(uintptr_t)(sh->src + off), sh->dst + off, k, 1) != PX_OK) {
            /* give it back: only this side lowers hi, so it is still i + 1's */
            uint64_t w = atomic_load_explicit(&sh->claim, memory_order_relaxed);
            while ((uint16_t)(w >> 48) == gen && PX_SHM_W_HI(w) == i &&
                   !atomic_compare_exchange_weak_explicit(
                       &sh->claim, &w, w + 1, memory_order_acq_rel, memory_order_relaxed))
                ;
            return;
        }
        atomic_fetch_add_explicit(&sh->done, k, memory_order_release);
    }
}

/* A large read shared with the peer when it polls: a HELP cell on the
 * ring (only between whole messages, and not to a peer that may sleep),
 * then chunks from the front until the two meet; waits for the peer's. */
static px_status_t px_shm_get_shared(px_net_ep_t *ep, void *local, uint64_t raddr, size_t len)
{
    px_shm_share_t *sh = &ep->out->share;
    size_t chunk = (len / 2 + 4095) & ~(size_t)4095; /* halves: more took longer */
    if (chunk < PX_SHM_SHARE_CHUNK)
        chunk = PX_SHM_SHARE_CHUNK;
    uint16_t gen = ++ep->share_gen;
    uint32_t n = (uint32_t)((len + chunk - 1) / chunk), i;
    sh->src = raddr;
    sh->dst = (uint64_t)(uintptr_t)local;
    sh->len = len;
    sh->chunk = chunk;
    atomic_store_explicit(&sh->done, 0, memory_order_relaxed);
    atomic_store_explicit(&sh->claim, (uint64_t)gen << 48 | n, memory_order_release);
    px_shm_cell_t *c = px_shm_out_cell(ep);
    c->hdr_len = c->frag_len = 0;
    c->flags = PX_SHM_FIRST | PX_SHM_LAST | PX_SHM_HELP;
    c->total = gen;
    px_shm_publish(ep, c);
    px_status_t st = PX_OK;
    size_t skipped = 0; /* chunks taken after a failure, not copied */
    unsigned spins = 0;
    for (;;) {
        if (px_shm_claim(sh, gen, 1, &i)) {
            size_t off = (size_t)i * chunk, k = len - off < chunk ? len - off : chunk;
            if (st == PX_OK)
                st = px_shm_cma(ep, (char *)local + off, raddr + off, k, 0);
            if (st == PX_OK)
                atomic_fetch_add_explicit(&sh->done, k, memory_order_release);
            else
                skipped += k;
            continue;
        }
        /* the peer's chunks: a few microseconds each, unless it lost its core */
        if (atomic_load_explicit(&sh->done, memory_order_acquire) + skipped >= len)
            return st;
        if (++spins % 256 == 0) {
            sched_yield();
            /* a peer that died holding a chunk: the job has lost it anyway */
            if (spins % (1u << 20) == 0 && kill(ep->pid, 0) < 0 && errno == ESRCH) {
                px_error("shm", "rank %d exited during a shared copy", ep->rank);
                return PX_ERR_IO;
            }
        }
    }
}

static px_status_t px_shm_ep_get(px_net_ep_t *ep, void *local, uint64_t raddr, size_t len)
{
    if (len >= PX_SHM_SHARE_MIN && ep->iface->cma_ok && !ep->ring && px_list_empty(&ep->sendq) &&
        px_shm_out_space(ep))
        return px_shm_get_shared(ep, local, raddr, len);
    return px_shm_cma(ep, local, raddr, len, 0);
}

static px_status_t px_shm_ep_put(px_net_ep_t *ep, const void *local, uint64_t raddr, size_t len)
{
    return px_shm_cma(ep, (void *)(uintptr_t)local, raddr, len, 1);
}

static size_t px_shm_ep_pending(px_net_ep_t *ep)
{
    size_t n = 0;
    px_list_t *e, *t;
    px_list_for_each_safe(e, t, &ep->sendq) {
        px_shm_sop_t *op = px_container_of(e, px_shm_sop_t, link);
        n += op->total - op->sent + 1;
    }
    return n;
}

/* The cell the consumer takes next, if the producer has written it. */
static inline px_shm_cell_t *px_shm_in_ready(struct px_net_iface *s, struct px_net_ep *ep)
{
    px_shm_cell_t *c = (px_shm_cell_t *)(ep->in_cells + (ep->in_tail & (s->slots - 1)) * s->cell);
    return atomic_load_explicit(&c->stamp, memory_order_acquire) == (uint32_t)(ep->in_tail + 1)
               ? c
               : NULL;
}

/* Delivers the cells written, from c on; kept out of line so that polling
 * an empty ring stays a handful of instructions. */
static __attribute__((noinline)) int px_shm_drain(struct px_net_iface *s, struct px_net_ep *ep,
                                                  px_shm_cell_t *c)
{
    int events = 0;
    for (; c; c = px_shm_in_ready(s, ep)) {
        char *p = (char *)(c + 1);
        if (__builtin_expect(c->flags & PX_SHM_HELP, 0)) {
            uint16_t gen = (uint16_t)c->total;
            ep->in_tail++;
            atomic_store_explicit(&ep->in->tail, ep->in_tail, memory_order_release);
            px_shm_help(s, ep, gen);
            events++;
            continue;
        }
        if (c->flags & PX_SHM_FIRST) {
            ep->rx_dest = s->rx->rx_begin(ep->owner, p, c->hdr_len, c->total, &ep->rx_ctx);
            ep->rx_off = 0;
            ep->rx_active = 1;
            p += (c->hdr_len + 7) & ~7u;
            if (c->flags & PX_SHM_APART)
                p = (char *)c + 128;
        }
        if (ep->rx_dest == PX_NET_RX_STREAM) {
            if (c->frag_len)
                s->rx->rx_data(ep->owner, ep->rx_ctx, p, c->frag_len);
        } else if (ep->rx_dest && c->frag_len) {
            memcpy(ep->rx_dest + ep->rx_off, p, c->frag_len);
        }
        ep->rx_off += c->frag_len;
        uint32_t last = c->flags & PX_SHM_LAST;
        ep->in_tail++;
        atomic_store_explicit(&ep->in->tail, ep->in_tail, memory_order_release);
        if (last) {
            ep->rx_active = 0;
            s->rx->rx_done(ep->owner, ep->rx_ctx);
        }
        events++;
    }
    return events;
}

static inline int px_shm_poll_ep(struct px_net_iface *s, struct px_net_ep *ep)
{
    px_shm_cell_t *c = px_shm_in_ready(s, ep);
    return c ? px_shm_drain(s, ep, c) : 0;
}

static __attribute__((noinline)) int px_shm_push_pending(struct px_net_iface *s)
{
    int events = 0;
    {
        px_list_t *e, *t;
        px_list_for_each_safe(e, t, &s->pending) {
            struct px_net_ep *ep = px_container_of(e, struct px_net_ep, pending_link);
            while (!px_list_empty(&ep->sendq)) {
                px_shm_sop_t *op = px_container_of(ep->sendq.next, px_shm_sop_t, link);
                if (!px_shm_sop_push(ep, op))
                    break;
                px_list_del(&op->link);
                if (op->cb)
                    op->cb(op->arg, PX_OK);
                if (op->iovp != op->iov)
                    free(op->iovp);
                free(op);
                events++;
            }
            if (px_list_empty(&ep->sendq))
                px_list_del(&ep->pending_link);
        }
    }
    return events;
}

static int px_shm_iface_progress(px_net_iface_t *s)
{
    int events = 0;
    for (int i = 0; i < s->nactive; i++)
        events += px_shm_poll_ep(s, s->active[i]);
    if (__builtin_expect(!px_list_empty(&s->pending), 0))
        events += px_shm_push_pending(s);
    return events;
}

static int px_shm_iface_fd(px_net_iface_t *s) { return s->bell_fd; }

/* Sends waiting for ring space: the peer that frees it does not wake us. */
static int px_shm_iface_quiet(px_net_iface_t *s) { return px_list_empty(&s->pending); }

static void px_shm_iface_sleep(px_net_iface_t *s, int on)
{
    _Atomic uint32_t *bell = &px_shm_bells(s)[s->me];
    if (on) {
        atomic_store_explicit(bell, 1, memory_order_relaxed);
        atomic_thread_fence(memory_order_seq_cst);
        return;
    }
    atomic_store_explicit(bell, 0, memory_order_relaxed);
    char b[16];
    while (recv(s->bell_fd, b, sizeof(b), MSG_DONTWAIT) > 0)
        ;
}

const px_net_ops_t px_net_shm_ops = {
    .size = sizeof(px_net_ops_t),
    .name = "shm",
    .iface_open = px_shm_iface_open,
    .iface_close = px_shm_iface_close,
    .iface_query = px_shm_iface_query,
    .iface_reachable = px_shm_iface_reachable,
    .ep_create = px_shm_ep_create,
    .ep_subs = px_net_stub_ep_subs,
    .ep_send = px_shm_ep_send,
    .ep_send_bulk = px_shm_ep_send,
    .ep_frame = px_net_stub_ep_frame,
    .ep_wake = px_shm_ep_wake,
    .ep_send_fill = px_shm_ep_send_fill,
    .ep_get = px_shm_ep_get,
    .ep_put = px_shm_ep_put,
    .ep_pending = px_shm_ep_pending,
    .ep_reset = px_net_stub_ep_reset,
    .ep_withdraw = px_net_stub_ep_withdraw,
    .ep_destroy = px_net_stub_ep_destroy,
    .ep_rx_cancel = px_net_stub_ep_rx_cancel,
    .iface_progress = px_shm_iface_progress,
    .iface_fd = px_shm_iface_fd,
    .ep_path_check = px_net_stub_ep_path_check,
    .ep_describe = px_net_stub_ep_describe,
    .iface_quiet = px_shm_iface_quiet,
    .ep_ready = px_net_stub_ep_ready,
    .ep_bulk_recv = px_net_stub_ep_bulk_recv,
    .ep_bulk_send = px_net_stub_ep_bulk_send,
    .ep_bulk_acked = px_net_stub_ep_bulk_acked,
    .ep_bulk_cancel = px_net_stub_ep_bulk_cancel,
    .iface_sleep = px_shm_iface_sleep,
};
