/* Bootstrap client. Backends behind one small ops table (boot_impl.h):
 * "pxrun" (TCP to the launcher's server, challenge-response
 * authentication), "pmi2" and "pmix" (a resource manager's process
 * management interface, boot_pmi2.c and boot_pmix.c) and "singleton" (no
 * launcher: a job of one with a local key-value store). Every backend
 * feeds the same local store, which px_boot_get reads. */
#include "boot.h"
#include "boot_impl.h"
#include "boot_wire.h"
#include "../util/clock.h"
#include "../util/log.h"
#include "../util/param.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PX_BOOT_CONNECT_TIMEOUT_MS 30000 /* total, including retries */
#define PX_BOOT_HANDSHAKE_TIMEOUT_MS 10000
#define PX_BOOT_ABORT_WAIT_MS 3000 /* px_boot_abort: time for pxrun to end us */

typedef struct px_boot_kv {
    struct px_boot_kv *next;
    int rank;
    uint32_t vlen;
    char key[PX_BOOT_KEY_MAX];
    uint8_t val[];
} px_boot_kv_t;

static struct {
    int initialized;
    const px_boot_backend_ops_t *ops;
    px_boot_info_t info;
    int *node_of;
    uint8_t secret[PX_BOOT_SECRET_LEN];
    char boot_host[80];
    char boot_addr[96];
    char local_addr[INET6_ADDRSTRLEN];
    int kv_fd, ctl_fd;
    pthread_mutex_t ctl_lock;
    atomic_int finalized;
    px_boot_buf_t pending; /* puts since the last fence, wire form */
    uint32_t npending;
    px_boot_kv_t **buckets;
    size_t nbuckets, nkv;
} px_boot = {.kv_fd = -1, .ctl_fd = -1, .ctl_lock = PTHREAD_MUTEX_INITIALIZER};

/* ---------------------------------------------------------------- store */

static size_t px_boot_hash(int rank, const char *key)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(unsigned)rank;
    for (; *key; key++)
        h = (h ^ (uint8_t)*key) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

static px_boot_kv_t **px_boot_store_find(int rank, const char *key)
{
    if (!px_boot.nbuckets)
        return NULL;
    px_boot_kv_t **pp = &px_boot.buckets[px_boot_hash(rank, key) & (px_boot.nbuckets - 1)];
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->rank == rank && !strcmp((*pp)->key, key))
            return pp;
    return pp;
}

static px_status_t px_boot_store_grow(void)
{
    size_t n = px_boot.nbuckets ? px_boot.nbuckets * 2 : 256;
    px_boot_kv_t **b = calloc(n, sizeof(*b));
    if (!b)
        return PX_ERR_NO_MEMORY;
    for (size_t i = 0; i < px_boot.nbuckets; i++) {
        px_boot_kv_t *e = px_boot.buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            size_t h = px_boot_hash(e->rank, e->key) & (n - 1);
            e->next = b[h];
            b[h] = e;
        }
    }
    free(px_boot.buckets);
    px_boot.buckets = b;
    px_boot.nbuckets = n;
    return PX_OK;
}

/* Inserts or replaces (rank, key); a later put of the same key wins. */
px_status_t px_boot_store_insert(int rank, const uint8_t *key, size_t klen, const uint8_t *val,
                                 size_t vlen)
{
    if (px_boot.nkv >= px_boot.nbuckets * 2 && px_boot_store_grow() != PX_OK)
        return PX_ERR_NO_MEMORY;
    px_boot_kv_t *e = malloc(sizeof(*e) + vlen);
    if (!e)
        return PX_ERR_NO_MEMORY;
    e->rank = rank;
    e->vlen = (uint32_t)vlen;
    memcpy(e->key, key, klen);
    e->key[klen] = 0;
    if (vlen)
        memcpy(e->val, val, vlen);
    px_boot_kv_t **pp = px_boot_store_find(rank, e->key);
    if (*pp) {
        e->next = (*pp)->next;
        free(*pp);
    } else {
        e->next = NULL;
        px_boot.nkv++;
    }
    *pp = e;
    return PX_OK;
}

static void px_boot_store_clear(void)
{
    for (size_t i = 0; i < px_boot.nbuckets; i++) {
        px_boot_kv_t *e = px_boot.buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            free(e);
        }
        px_boot.buckets[i] = NULL;
    }
    px_boot.nkv = 0;
}

void px_boot_hex(char *dst, const uint8_t *src, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        dst[2 * i] = digits[src[i] >> 4];
        dst[2 * i + 1] = digits[src[i] & 15];
    }
    dst[2 * len] = 0;
}

static int px_boot_hexval(char c);

long px_boot_unhex(uint8_t *dst, size_t max, const char *src, size_t srclen)
{
    if (srclen % 2 || srclen / 2 > max)
        return -1;
    for (size_t i = 0; i < srclen / 2; i++) {
        int hi = px_boot_hexval(src[2 * i]), lo = px_boot_hexval(src[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        dst[i] = (uint8_t)(hi << 4 | lo);
    }
    return (long)(srclen / 2);
}

int px_boot_parse_mapping(const char *s, int size, int *node_of)
{
    /* (vector,(0,2,4),(2,1,3)): block of 4 ranks on each of nodes 0 and 1,
     * then 3 on node 2; the blocks repeat until every rank is placed */
    const char *p = strstr(s, "(vector");
    int blocks[64][3], nb = 0, max_node = -1;
    if (!p || size < 1)
        return -1;
    p += 7;
    while (*p == ',') {
        int a, b, c, n = 0;
        if (nb == 64 || sscanf(p, ",(%d,%d,%d)%n", &a, &b, &c, &n) != 3 || n == 0 || a < 0 ||
            b < 1 || c < 1 || a > PX_BOOT_MAX_RANKS || b > PX_BOOT_MAX_RANKS ||
            c > PX_BOOT_MAX_RANKS)
            return -1;
        blocks[nb][0] = a;
        blocks[nb][1] = b;
        blocks[nb][2] = c;
        nb++;
        p += n;
    }
    if (*p != ')' || nb == 0)
        return -1;
    int r = 0;
    while (r < size) {
        int before = r;
        for (int i = 0; i < nb && r < size; i++)
            for (int n = 0; n < blocks[i][1] && r < size; n++)
                for (int k = 0; k < blocks[i][2] && r < size; k++) {
                    int node = blocks[i][0] + n;
                    node_of[r++] = node;
                    if (node > max_node)
                        max_node = node;
                }
        if (r == before)
            return -1;
    }
    /* nodes must be numbered densely */
    if (max_node >= size)
        return -1;
    uint8_t *seen = calloc((size_t)max_node + 1, 1);
    int nodes = 0;
    if (!seen)
        return -1;
    for (int k = 0; k < size; k++)
        if (!seen[node_of[k]]) {
            seen[node_of[k]] = 1;
            nodes++;
        }
    free(seen);
    return nodes == max_node + 1 ? nodes : -1;
}

/* --------------------------------------------------------------- network */

static px_status_t px_boot_write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return PX_ERR_IO;
        p += n;
        len -= (size_t)n;
    }
    return PX_OK;
}

/* Reads exactly len bytes; timeout_ms < 0 waits forever. */
static px_status_t px_boot_read_all(int fd, void *buf, size_t len, int timeout_ms)
{
    uint8_t *p = buf;
    uint64_t deadline = timeout_ms < 0 ? 0 : px_time_ns() + (uint64_t)timeout_ms * 1000000ull;
    while (len) {
        if (timeout_ms >= 0) {
            uint64_t now = px_time_ns();
            if (now >= deadline)
                return PX_ERR_TIMEOUT;
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            int r = poll(&pfd, 1, (int)((deadline - now) / 1000000ull) + 1);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                return PX_ERR_IO;
            if (r == 0)
                continue;
        }
        ssize_t n = recv(fd, p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return PX_ERR_IO;
        p += n;
        len -= (size_t)n;
    }
    return PX_OK;
}

/* Reads one frame whose payload is at most maxlen; *payload_p is malloc'ed. */
static px_status_t px_boot_read_frame(int fd, uint32_t *type_p, uint8_t **payload_p,
                                      uint32_t *len_p, uint32_t maxlen, int timeout_ms)
{
    uint8_t hdr[PX_BOOT_HDR_LEN];
    uint32_t type, len;
    px_status_t st = px_boot_read_all(fd, hdr, sizeof(hdr), timeout_ms);
    if (st != PX_OK)
        return st;
    px_boot_hdr_decode(hdr, &type, &len);
    if (len > maxlen)
        return PX_ERR_PROTOCOL;
    uint8_t *p = malloc(len ? len : 1);
    if (!p)
        return PX_ERR_NO_MEMORY;
    st = px_boot_read_all(fd, p, len, timeout_ms);
    if (st != PX_OK) {
        free(p);
        return st;
    }
    *type_p = type;
    *payload_p = p;
    *len_p = len;
    return PX_OK;
}

static int px_boot_connect_once(const struct addrinfo *ai, int timeout_ms, int *err_p)
{
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *err_p = errno;
        return -1;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        if (errno != EINPROGRESS) {
            *err_p = errno;
            close(fd);
            return -1;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int r;
        do
            r = poll(&pfd, 1, timeout_ms);
        while (r < 0 && errno == EINTR);
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        if (r == 0)
            soerr = ETIMEDOUT;
        else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
            soerr = errno;
        if (soerr) {
            *err_p = soerr;
            close(fd);
            return -1;
        }
    }
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* Connects with retries (the server may not be reachable yet, e.g. while a
 * node's network comes up), bounded by PX_BOOT_CONNECT_TIMEOUT_MS. */
static px_status_t px_boot_connect(int *fd_p)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    const char *port = strrchr(px_boot.boot_addr, ':') + 1;
    int gai = getaddrinfo(px_boot.boot_host, port, &hints, &res);
    if (gai) {
        px_error("boot", "cannot resolve bootstrap server address '%s': %s", px_boot.boot_addr,
                 gai_strerror(gai));
        return PX_ERR_INVALID_PARAM;
    }
    uint64_t t0 = px_time_ns();
    uint64_t deadline = t0 + (uint64_t)PX_BOOT_CONNECT_TIMEOUT_MS * 1000000ull;
    int delay_ms = 20, err = 0, fd = -1;
    for (;;) {
        for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
            fd = px_boot_connect_once(ai, 5000, &err);
        if (fd >= 0 || px_time_ns() >= deadline)
            break;
        px_debug("boot", "connect to %s failed (%s); retrying", px_boot.boot_addr, strerror(err));
        usleep((useconds_t)delay_ms * 1000);
        delay_ms = delay_ms * 2 > 1000 ? 1000 : delay_ms * 2;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        px_error("boot",
                 "cannot connect to the bootstrap server %s (PX_BOOT_ADDR) within %.0f s: %s "
                 "(pxrun --bootstrap-iface selects an address every node reaches)",
                 px_boot.boot_addr, (double)(px_time_ns() - t0) * 1e-9, strerror(err));
        return PX_ERR_TIMEOUT;
    }
    *fd_p = fd;
    return PX_OK;
}

/* Parses WELCOME and checks it against what the environment said. */
static px_status_t px_boot_parse_welcome(const uint8_t *p, uint32_t len, int want_size,
                                         uint64_t want_job, int fill)
{
    px_boot_rd_t rd = px_boot_rd_make(p, len);
    uint32_t size = px_boot_rd_u32(&rd);
    uint32_t num_nodes = px_boot_rd_u32(&rd);
    uint32_t universe = px_boot_rd_u32(&rd);
    uint64_t job = px_boot_rd_u64(&rd);
    if (rd.err || size != (uint32_t)want_size || num_nodes == 0 || num_nodes > size ||
        universe > PX_BOOT_MAX_RANKS || px_boot_rd_left(&rd) != 4 * (size_t)size) {
        px_error("boot", "bootstrap server sent an invalid job description (size %u, PX_SIZE %d)",
                 size, want_size);
        return PX_ERR_PROTOCOL;
    }
    if (job != want_job) {
        px_error("boot", "bootstrap server belongs to job %016llx, not PX_JOB_ID %016llx",
                 (unsigned long long)job, (unsigned long long)want_job);
        return PX_ERR_PROTOCOL;
    }
    if (!fill)
        return PX_OK;
    int *node_of = malloc(sizeof(int) * size);
    if (!node_of)
        return PX_ERR_NO_MEMORY;
    for (uint32_t r = 0; r < size; r++) {
        uint32_t n = px_boot_rd_u32(&rd);
        if (n >= num_nodes) {
            px_error("boot", "bootstrap server sent node %u for rank %u (of %u nodes)", n, r,
                     num_nodes);
            free(node_of);
            return PX_ERR_PROTOCOL;
        }
        node_of[r] = (int)n;
    }
    px_boot_info_t *info = &px_boot.info;
    info->num_nodes = (int)num_nodes;
    info->universe_size = universe ? (int)universe : (int)size;
    info->node_id = node_of[info->rank];
    info->local_rank = 0;
    info->local_size = 0;
    for (int r = 0; r < (int)size; r++) {
        if (node_of[r] != info->node_id)
            continue;
        if (r < info->rank)
            info->local_rank++;
        info->local_size++;
    }
    px_boot.node_of = node_of;
    info->node_of = node_of;
    return PX_OK;
}

static px_status_t px_boot_handshake(int fd, uint32_t role)
{
    uint32_t type, len;
    uint8_t *p = NULL;
    px_status_t st;
    const px_boot_info_t *info = &px_boot.info;

    st = px_boot_read_frame(fd, &type, &p, &len, PX_BOOT_HELLO_LEN, PX_BOOT_HANDSHAKE_TIMEOUT_MS);
    if (st != PX_OK || type != PX_BOOT_MSG_HELLO || len != PX_BOOT_HELLO_LEN) {
        px_error("boot", "no valid greeting from the bootstrap server %s (%s)", px_boot.boot_addr,
                 st == PX_OK ? "unexpected message" : px_status_string(st));
        free(p);
        return st == PX_OK ? PX_ERR_PROTOCOL : st;
    }
    px_boot_rd_t rd = px_boot_rd_make(p, len);
    uint32_t magic = px_boot_rd_u32(&rd);
    uint32_t version = px_boot_rd_u32(&rd);
    const uint8_t *nonce = px_boot_rd_bytes(&rd, PX_BOOT_NONCE_LEN);
    if (magic != PX_BOOT_MAGIC || version != PX_BOOT_PROTO_VERSION) {
        px_error("boot", "%s is not a compatible Plexus bootstrap server (magic %08x, version %u)",
                 px_boot.boot_addr, magic, version);
        free(p);
        return PX_ERR_PROTOCOL;
    }
    px_boot_buf_t f = {0};
    uint8_t mac[PX_BOOT_MAC_LEN];
    px_boot_auth_mac(px_boot.secret, nonce, (uint32_t)info->rank, role, mac);
    free(p);
    px_boot_buf_put_hdr(&f, PX_BOOT_MSG_AUTH, PX_BOOT_AUTH_LEN);
    px_boot_buf_put_u32(&f, (uint32_t)info->rank);
    px_boot_buf_put_u32(&f, role);
    px_boot_buf_put(&f, mac, sizeof(mac));
    st = f.oom ? PX_ERR_NO_MEMORY : px_boot_write_all(fd, f.p, f.len);
    px_boot_buf_free(&f);
    if (st != PX_OK) {
        px_error("boot", "cannot send authentication to %s", px_boot.boot_addr);
        return st;
    }

    uint32_t maxlen = PX_BOOT_WELCOME_FIXED_LEN + 4u * (uint32_t)info->size;
    if (maxlen < 256)
        maxlen = 256; /* room for a REJECT reason */
    st = px_boot_read_frame(fd, &type, &p, &len, maxlen, PX_BOOT_HANDSHAKE_TIMEOUT_MS);
    if (st != PX_OK) {
        px_error("boot",
                 "bootstrap server %s closed the connection during authentication of rank %d "
                 "(%s; is PX_JOB_SECRET this job's secret?)",
                 px_boot.boot_addr, info->rank, px_status_string(st));
        return PX_ERR_AUTH;
    }
    if (type == PX_BOOT_MSG_REJECT) {
        char why[257];
        size_t n = len < 256 ? len : 256;
        for (size_t i = 0; i < n; i++)
            why[i] = (p[i] < 0x20 || p[i] == 0x7f) ? '?' : (char)p[i];
        why[n] = 0;
        free(p);
        px_error("boot", "bootstrap server %s rejected rank %d: %s", px_boot.boot_addr, info->rank,
                 why);
        return PX_ERR_AUTH;
    }
    if (type != PX_BOOT_MSG_WELCOME) {
        free(p);
        px_error("boot", "unexpected reply %u from the bootstrap server", type);
        return PX_ERR_PROTOCOL;
    }
    st = px_boot_parse_welcome(p, len, info->size, info->job_id, role == PX_BOOT_ROLE_KV);
    free(p);
    return st;
}

void px_boot_die(const char *why, int code)
{
    char line[PX_BOOT_ABORT_MSG_MAX + 128];
    int n = snprintf(line, sizeof(line), "plexus rank %d: %s\n", px_boot.info.rank, why);
    if (n > (int)sizeof(line) - 1)
        n = (int)sizeof(line) - 1;
    if (write(STDERR_FILENO, line, (size_t)n) < 0) {
        /* nothing left to tell */
    }
    _exit(code);
}

_Atomic int px_boot_dump_req;

/* Reads the ctl connection: an ABORT from pxrun or losing pxrun ends the
 * process; a DUMP asks the progress engine to print its state. */
static void *px_boot_watcher(void *arg)
{
    (void)arg;
    for (;;) {
        uint32_t type, len;
        uint8_t *p = NULL;
        px_status_t st =
            px_boot_read_frame(px_boot.ctl_fd, &type, &p, &len, 6 + PX_BOOT_ABORT_MSG_MAX, -1);
        if (st != PX_OK) {
            if (atomic_load(&px_boot.finalized))
                return NULL; /* pxrun may go first once we are done */
            char why[200];
            snprintf(why, sizeof(why),
                     "lost the connection to pxrun (bootstrap server %s); exiting",
                     px_boot.boot_addr);
            px_boot_die(why, 1);
        }
        if (type == PX_BOOT_MSG_DUMP)
            atomic_store_explicit(&px_boot_dump_req, 1, memory_order_relaxed);
        if (type != PX_BOOT_MSG_ABORT) {
            free(p);
            continue;
        }
        px_boot_rd_t rd = px_boot_rd_make(p, len);
        int code = (int32_t)px_boot_rd_u32(&rd);
        uint16_t n = px_boot_rd_u16(&rd);
        const uint8_t *m = px_boot_rd_bytes(&rd, n);
        char why[PX_BOOT_ABORT_MSG_MAX + 40];
        int k = snprintf(why, sizeof(why), "job aborted: ");
        for (size_t i = 0; m && i < n && k < (int)sizeof(why) - 1; i++)
            why[k++] = (m[i] < 0x20 || m[i] == 0x7f) ? '?' : (char)m[i];
        why[k] = 0;
        free(p);
        /* an abort is never success, whatever code was asked for */
        px_boot_die(why, (code & 0xff) ? (code & 0xff) : 1);
    }
}

static int px_boot_env_int(const char *name, int *v_p)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return 0;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0 || v > PX_BOOT_MAX_RANKS)
        return 0;
    *v_p = (int)v;
    return 1;
}

static int px_boot_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* ----------------------------------------------------- pxrun backend ops */

static px_status_t px_boot_pxrun_fence(const px_boot_buf_t *pending, uint32_t npending)
{
    px_boot_buf_t f = {0};
    px_status_t st;
    px_boot_buf_put_hdr(&f, PX_BOOT_MSG_FENCE, (uint32_t)(4 + pending->len));
    px_boot_buf_put_u32(&f, npending);
    px_boot_buf_put(&f, pending->p, pending->len);
    st = f.oom ? PX_ERR_NO_MEMORY : px_boot_write_all(px_boot.kv_fd, f.p, f.len);
    px_boot_buf_free(&f);
    if (st != PX_OK) {
        px_error("boot", "fence: lost the connection to the bootstrap server");
        return PX_ERR_JOB_ABORTED;
    }

    uint32_t type, len;
    uint8_t *p;
    st = px_boot_read_frame(px_boot.kv_fd, &type, &p, &len, PX_BOOT_MAX_SERVER_FRAME, -1);
    if (st != PX_OK) {
        px_error("boot", "fence: %s from the bootstrap server",
                 st == PX_ERR_PROTOCOL ? "oversized reply" : "no reply");
        return st == PX_ERR_PROTOCOL ? st : PX_ERR_JOB_ABORTED;
    }
    if (type != PX_BOOT_MSG_FENCE_DONE) {
        free(p);
        px_error("boot", "fence: unexpected reply %u", type);
        return PX_ERR_PROTOCOL;
    }
    px_boot_rd_t rd = px_boot_rd_make(p, len);
    uint32_t count = px_boot_rd_u32(&rd);
    if (rd.err || count > px_boot_rd_left(&rd) / (4 + PX_BOOT_PUT_HDR_LEN))
        st = PX_ERR_PROTOCOL;
    for (uint32_t i = 0; i < count && st == PX_OK; i++) {
        uint32_t rank = px_boot_rd_u32(&rd);
        uint16_t klen = px_boot_rd_u16(&rd);
        uint32_t vlen = px_boot_rd_u32(&rd);
        const uint8_t *key = px_boot_rd_bytes(&rd, klen);
        const uint8_t *val = px_boot_rd_bytes(&rd, vlen);
        if (rd.err || rank >= (uint32_t)px_boot.info.size || !px_boot_put_valid(klen, key, vlen))
            st = PX_ERR_PROTOCOL;
        else
            st = px_boot_store_insert((int)rank, key, klen, val, vlen);
    }
    if (st == PX_OK && px_boot_rd_left(&rd))
        st = PX_ERR_PROTOCOL;
    free(p);
    if (st != PX_OK)
        px_error("boot", "fence: invalid reply from the bootstrap server (%s)",
                 px_status_string(st));
    return st;
}

static px_status_t px_boot_pxrun_finalize(void)
{
    px_boot_buf_t f = {0};
    uint32_t type, len;
    uint8_t *p = NULL;
    px_boot_buf_put_hdr(&f, PX_BOOT_MSG_FINALIZE, 0);
    px_status_t st = f.oom ? PX_ERR_NO_MEMORY : px_boot_write_all(px_boot.kv_fd, f.p, f.len);
    px_boot_buf_free(&f);
    if (st == PX_OK)
        st = px_boot_read_frame(px_boot.kv_fd, &type, &p, &len, 0, PX_BOOT_HANDSHAKE_TIMEOUT_MS);
    free(p);
    if (st == PX_OK && type != PX_BOOT_MSG_FINALIZE_OK)
        st = PX_ERR_PROTOCOL;
    if (st != PX_OK) {
        px_error("boot", "finalize: no acknowledgement from the bootstrap server (%s)",
                 px_status_string(st));
        return st;
    }
    /* ctl stays open: a later job abort still reaches this process */
    atomic_store(&px_boot.finalized, 1);
    close(px_boot.kv_fd);
    px_boot.kv_fd = -1;
    return PX_OK;
}

static void px_boot_pxrun_abort(int code, const char *msg) __attribute__((noreturn));
static void px_boot_pxrun_abort(int code, const char *msg)
{
    px_boot_buf_t f = {0};
    size_t n = msg ? strlen(msg) : 0;
    if (n > PX_BOOT_ABORT_MSG_MAX)
        n = PX_BOOT_ABORT_MSG_MAX;
    px_boot_buf_put_hdr(&f, PX_BOOT_MSG_ABORT, (uint32_t)(6 + n));
    px_boot_buf_put_u32(&f, (uint32_t)code);
    px_boot_buf_put_u16(&f, (uint16_t)n);
    px_boot_buf_put(&f, msg, n);
    pthread_mutex_lock(&px_boot.ctl_lock);
    px_status_t st = f.oom ? PX_ERR_NO_MEMORY : px_boot_write_all(px_boot.ctl_fd, f.p, f.len);
    pthread_mutex_unlock(&px_boot.ctl_lock);
    px_boot_buf_free(&f);
    if (st == PX_OK) {
        /* pxrun reports the abort and ends every rank, this one included */
        uint64_t deadline = px_time_ns() + (uint64_t)PX_BOOT_ABORT_WAIT_MS * 1000000ull;
        while (px_time_ns() < deadline)
            usleep(10000);
        _exit(code & 0xff ? code & 0xff : 1);
    }
    char why[PX_BOOT_ABORT_MSG_MAX + 64];
    snprintf(why, sizeof(why), "abort with code %d: %s", code, msg ? msg : "");
    px_boot_die(why, code & 0xff ? code & 0xff : 1);
}

static const px_boot_backend_ops_t px_boot_pxrun_ops = {
    .name = "pxrun",
    .fence = px_boot_pxrun_fence,
    .finalize = px_boot_pxrun_finalize,
    .abort = px_boot_pxrun_abort,
};

static px_status_t px_boot_pxrun_init(const char *addr)
{
    px_boot_info_t *info = &px_boot.info;
    const char *sec = getenv("PX_JOB_SECRET");
    const char *job = getenv("PX_JOB_ID");
    px_status_t st;

    if (!px_boot_env_int("PX_RANK", &info->rank) || !px_boot_env_int("PX_SIZE", &info->size) ||
        info->size < 1 || info->rank >= info->size) {
        px_error("boot",
                 "PX_BOOT_ADDR is set but PX_RANK/PX_SIZE are missing or invalid "
                 "(PX_RANK=%s PX_SIZE=%s)",
                 getenv("PX_RANK") ? getenv("PX_RANK") : "unset",
                 getenv("PX_SIZE") ? getenv("PX_SIZE") : "unset");
        return PX_ERR_INVALID_PARAM;
    }
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "rank %d", info->rank);
    px_log_set_prefix(prefix);
    if (!sec || strlen(sec) != 2 * PX_BOOT_SECRET_LEN) {
        px_error("boot", "PX_JOB_SECRET must hold %d hex digits", 2 * PX_BOOT_SECRET_LEN);
        return PX_ERR_INVALID_PARAM;
    }
    for (int i = 0; i < PX_BOOT_SECRET_LEN; i++) {
        int hi = px_boot_hexval(sec[2 * i]), lo = px_boot_hexval(sec[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            px_error("boot", "PX_JOB_SECRET must hold %d hex digits", 2 * PX_BOOT_SECRET_LEN);
            return PX_ERR_INVALID_PARAM;
        }
        px_boot.secret[i] = (uint8_t)(hi << 4 | lo);
    }
    char *end;
    errno = 0;
    info->job_id = job ? strtoull(job, &end, 16) : 0;
    if (!job || !*job || *end || errno) {
        px_error("boot", "PX_JOB_ID must be a hexadecimal job id");
        return PX_ERR_INVALID_PARAM;
    }

    /* "host:port" or "[v6addr]:port" */
    const char *colon = strrchr(addr, ':');
    size_t hl = colon ? (size_t)(colon - addr) : 0;
    if (!colon || !hl || !colon[1] || hl >= sizeof(px_boot.boot_host) ||
        strlen(addr) >= sizeof(px_boot.boot_addr)) {
        px_error("boot", "PX_BOOT_ADDR '%s' is not host:port", addr);
        return PX_ERR_INVALID_PARAM;
    }
    if (addr[0] == '[' && addr[hl - 1] == ']') {
        memcpy(px_boot.boot_host, addr + 1, hl - 2);
        px_boot.boot_host[hl - 2] = 0;
    } else {
        memcpy(px_boot.boot_host, addr, hl);
        px_boot.boot_host[hl] = 0;
    }
    snprintf(px_boot.boot_addr, sizeof(px_boot.boot_addr), "%s", addr);

    st = px_boot_connect(&px_boot.kv_fd);
    if (st != PX_OK)
        return st;
    st = px_boot_handshake(px_boot.kv_fd, PX_BOOT_ROLE_KV);
    if (st != PX_OK)
        goto err_close_kv;
    st = px_boot_connect(&px_boot.ctl_fd);
    if (st != PX_OK)
        goto err_free_map;
    st = px_boot_handshake(px_boot.ctl_fd, PX_BOOT_ROLE_CTL);
    if (st != PX_OK)
        goto err_close_ctl;

    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getsockname(px_boot.kv_fd, (struct sockaddr *)&ss, &sl) == 0)
        getnameinfo((struct sockaddr *)&ss, sl, px_boot.local_addr, sizeof(px_boot.local_addr),
                    NULL, 0, NI_NUMERICHOST);

    /* The watcher blocks all signals so they keep going to the application's threads. */
    pthread_t tid;
    pthread_attr_t attr;
    sigset_t all, old;
    sigfillset(&all);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&tid, &attr, px_boot_watcher, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc) {
        px_error("boot", "cannot start the bootstrap watcher thread: %s", strerror(rc));
        st = PX_ERR_NO_MEMORY;
        goto err_close_ctl;
    }
    info->boot_host = px_boot.boot_host;
    info->singleton = 0;
    px_boot.ops = &px_boot_pxrun_ops;
    return PX_OK;

err_close_ctl:
    close(px_boot.ctl_fd);
    px_boot.ctl_fd = -1;
err_free_map:
    free(px_boot.node_of);
    px_boot.node_of = NULL;
err_close_kv:
    close(px_boot.kv_fd);
    px_boot.kv_fd = -1;
    return st;
}

/* ------------------------------------------------- singleton backend ops */

static px_status_t px_boot_singleton_fence(const px_boot_buf_t *pending, uint32_t npending)
{
    px_boot_rd_t rd = px_boot_rd_make(pending->p, pending->len);
    for (uint32_t i = 0; i < npending; i++) {
        uint16_t klen = px_boot_rd_u16(&rd);
        uint32_t vlen = px_boot_rd_u32(&rd);
        const uint8_t *key = px_boot_rd_bytes(&rd, klen);
        const uint8_t *val = px_boot_rd_bytes(&rd, vlen);
        px_status_t st = px_boot_store_insert(0, key, klen, val, vlen);
        if (st != PX_OK)
            return st;
    }
    return PX_OK;
}

static px_status_t px_boot_singleton_finalize(void)
{
    atomic_store(&px_boot.finalized, 1);
    return PX_OK;
}

static void px_boot_singleton_abort(int code, const char *msg) __attribute__((noreturn));
static void px_boot_singleton_abort(int code, const char *msg)
{
    char why[PX_BOOT_ABORT_MSG_MAX + 64];
    snprintf(why, sizeof(why), "abort with code %d: %s", code, msg ? msg : "");
    px_boot_die(why, code & 0xff ? code & 0xff : 1);
}

static const px_boot_backend_ops_t px_boot_singleton_ops = {
    .name = "singleton",
    .fence = px_boot_singleton_fence,
    .finalize = px_boot_singleton_finalize,
    .abort = px_boot_singleton_abort,
};

static px_status_t px_boot_singleton_init(void)
{
    px_boot_info_t *info = &px_boot.info;
    px_status_t st = px_boot_random(px_boot.secret, sizeof(px_boot.secret));
    if (st == PX_OK)
        st = px_boot_random(&info->job_id, sizeof(info->job_id));
    px_boot.node_of = calloc(1, sizeof(int));
    if (st != PX_OK || !px_boot.node_of) {
        free(px_boot.node_of);
        px_boot.node_of = NULL;
        return st != PX_OK ? st : PX_ERR_NO_MEMORY;
    }
    info->rank = 0;
    info->size = 1;
    info->node_id = 0;
    info->num_nodes = 1;
    info->local_rank = 0;
    info->local_size = 1;
    info->universe_size = 1;
    info->node_of = px_boot.node_of;
    info->boot_host = "";
    info->singleton = 1;
    px_boot.ops = &px_boot_singleton_ops;
    return PX_OK;
}

/* ---------------------------------------- resource-manager backends */

#define PX_BOOT_SECRET_KEY "px.secret"
#define PX_BOOT_NODE_KEY "px.node"

static uint64_t px_boot_fnv(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ull;
    return h;
}

/* The rest of a start under a resource manager, whichever interface it
 * offers: the node map's derived fields, the address that reaches the
 * launching host, and the per-job secret. */
/* node_of from every rank's node label (published before the fence):
 * nodes numbered in order of first appearance. */
static px_status_t px_boot_rm_node_map(px_boot_rm_job_t *job)
{
    char label[sizeof(job->node_label)];
    char(*names)[sizeof(job->node_label)] = malloc(sizeof(*names) * (size_t)job->size);
    job->node_of = malloc(sizeof(int) * (size_t)job->size);
    if (!names || !job->node_of) {
        free(names);
        return PX_ERR_NO_MEMORY;
    }
    int nodes = 0;
    for (int r = 0; r < job->size; r++) {
        size_t len = 0;
        px_status_t st = px_boot_get(r, PX_BOOT_NODE_KEY, label, sizeof(label), &len);
        if (st == PX_OK && (len == 0 || label[len - 1]))
            st = PX_ERR_PROTOCOL;
        if (st != PX_OK) {
            free(names);
            return st;
        }
        int n = 0;
        while (n < nodes && strcmp(names[n], label))
            n++;
        if (n == nodes)
            memcpy(names[nodes++], label, len);
        job->node_of[r] = n;
    }
    free(names);
    job->num_nodes = nodes;
    return PX_OK;
}

static px_status_t px_boot_rm_init(px_boot_rm_job_t *job, const px_boot_backend_ops_t *ops)
{
    px_boot_info_t *info = &px_boot.info;
    px_status_t st = PX_OK;
    info->rank = job->rank;
    info->size = job->size;
    info->universe_size = job->universe_size > job->size ? job->universe_size : job->size;
    info->singleton = 0;
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "rank %d", info->rank);
    px_log_set_prefix(prefix);
    px_boot.ops = ops;
    px_boot.initialized = 1; /* for put, fence and get below */

    /* The per-job secret that authenticates data connections: rank 0 draws
     * it and hands it out through the manager's key-value space, which only
     * the job's own processes reach. The same fence carries each rank's
     * node when the manager gave no map. */
    char hex[2 * PX_BOOT_SECRET_LEN + 1];
    size_t len = 0;
    if (info->rank == 0) {
        st = px_boot_random(px_boot.secret, sizeof(px_boot.secret));
        px_boot_hex(hex, px_boot.secret, sizeof(px_boot.secret));
        if (st == PX_OK)
            st = px_boot_put(PX_BOOT_SECRET_KEY, hex, sizeof(hex));
    }
    if (st == PX_OK && !job->node_of)
        st = px_boot_put(PX_BOOT_NODE_KEY, job->node_label, strlen(job->node_label) + 1);
    if (st == PX_OK)
        st = px_boot_fence();
    if (st == PX_OK)
        st = px_boot_get(0, PX_BOOT_SECRET_KEY, hex, sizeof(hex), &len);
    if (st == PX_OK &&
        (len != sizeof(hex) || hex[len - 1] ||
         px_boot_unhex(px_boot.secret, sizeof(px_boot.secret), hex, len - 1) != PX_BOOT_SECRET_LEN))
        st = PX_ERR_PROTOCOL;
    if (st == PX_OK && !job->node_of)
        st = px_boot_rm_node_map(job);
    px_boot.initialized = 0;
    if (st != PX_OK) {
        px_error("boot", "%s: cannot share the job's secret and node map through %s: %s", ops->name,
                 job->via, px_status_string(st));
        return st;
    }
    info->num_nodes = job->num_nodes;
    px_boot.node_of = job->node_of;
    info->node_of = job->node_of;
    info->node_id = job->node_of[job->rank];
    for (int r = 0; r < job->size; r++) {
        if (job->node_of[r] != info->node_id)
            continue;
        if (r < job->rank)
            info->local_rank++;
        info->local_size++;
    }
    /* The host srun runs on plays the part of pxrun's: the interface that
     * reaches it is the management network (src/net/addr.c). A job on one
     * node stays on loopback. */
    const char *launch = getenv("SLURM_LAUNCH_NODE_IPADDR");
    snprintf(px_boot.boot_host, sizeof(px_boot.boot_host), "%s", launch ? launch : "");
    info->boot_host = px_boot.boot_host;
    if (job->num_nodes == 1)
        snprintf(px_boot.local_addr, sizeof(px_boot.local_addr), "127.0.0.1");
    /* the manager's job name makes it unique, the secret keeps a reused
     * name (a job id wraps) from meeting an old job's segments */
    info->job_id = px_boot_fnv(px_boot_fnv(1469598103934665603ull, job->id, strlen(job->id)),
                               px_boot.secret, 8);
    return PX_OK;
}

/* Which backend: PX_BOOT, else the first whose variables are set. */
static px_status_t px_boot_choose(void)
{
    const char *want = px_params.boot;
    const char *addr = getenv("PX_BOOT_ADDR");
    int any = !strcmp(want, "auto");
    px_boot_rm_job_t job = {0};
    const px_boot_backend_ops_t *ops = NULL;
    px_status_t st;

    if ((any && addr && *addr) || !strcmp(want, "pxrun")) {
        if (!addr || !*addr) {
            px_error("boot", "PX_BOOT=pxrun but PX_BOOT_ADDR is not set: start the job with pxrun");
            return PX_ERR_INVALID_PARAM;
        }
        return px_boot_pxrun_init(addr);
    }
    static const struct {
        const char *name;
        px_status_t (*open)(px_boot_rm_job_t *, const px_boot_backend_ops_t **);
        const char *vars;
    } rm[] = {
        {"pmix", px_boot_pmix_open, "PMIX_NAMESPACE and PMIX_RANK"},
        {"pmi2", px_boot_pmi2_open, "PMI_FD, PMI_RANK and PMI_SIZE"},
    };
    for (size_t i = 0; i < sizeof(rm) / sizeof(rm[0]); i++) {
        if (!any && strcmp(want, rm[i].name))
            continue;
        st = rm[i].open(&job, &ops);
        if (st == PX_OK) {
            st = px_boot_rm_init(&job, ops);
            if (st != PX_OK) {
                free(job.node_of);
                px_boot.node_of = NULL;
            }
            return st;
        }
        if (st != PX_ERR_NOT_FOUND)
            return st;
        if (!any) {
            px_error("boot",
                     "PX_BOOT=%s but %s are not set: start the job with a launcher that "
                     "offers %s (srun --mpi=%s under Slurm)",
                     want, rm[i].vars, rm[i].name, rm[i].name);
            return PX_ERR_INVALID_PARAM;
        }
    }
    /* srun without --mpi (and no MpiDefault) starts each task alone: say
     * so rather than run that many jobs of one */
    const char *ntasks = getenv("SLURM_STEP_NUM_TASKS");
    if (any && ntasks && atoi(ntasks) > 1 && getenv("SLURM_PROCID")) {
        px_error("boot",
                 "started by srun as one of %s tasks, but without a process-management "
                 "interface, so the tasks cannot meet: run srun --mpi=pmi2 (or --mpi=pmix), or "
                 "set MpiDefault=pmi2 in slurm.conf; PX_BOOT=singleton runs each task on its own",
                 ntasks);
        return PX_ERR_INVALID_PARAM;
    }
    return px_boot_singleton_init();
}

void px_boot_print_backends(FILE *f)
{
    const char *pmi2 = px_boot_pmi2_missing(), *pmix = px_boot_pmix_missing();
    const char *addr = getenv("PX_BOOT_ADDR"), *ntasks = getenv("SLURM_STEP_NUM_TASKS");
    const char *now;
    if (strcmp(px_params.boot, "auto"))
        now = px_params.boot;
    else if (addr && *addr)
        now = "pxrun";
    else if (getenv("PMIX_NAMESPACE") && getenv("PMIX_RANK"))
        now = "pmix";
    else if (getenv("PMI_FD") || getenv("PMI_PORT"))
        now = "pmi2";
    else if (ntasks && atoi(ntasks) > 1 && getenv("SLURM_PROCID"))
        now = "none: a task of srun without --mpi (MPI_Init refuses)";
    else
        now = "singleton";
    fprintf(f, "Bootstrap: PX_BOOT=%s; here: %s\n", px_params.boot, now);
    fprintf(f, "  pxrun      built in (pxrun, also inside a Slurm allocation)\n");
    fprintf(f, "  pmi2       %s\n", *pmi2 ? pmi2 : "libpmi2.so.0 loads (srun --mpi=pmi2)");
    fprintf(f, "  pmix       %s\n", *pmix ? pmix : "libpmix.so.2 loads (srun --mpi=pmix)");
}

/* ------------------------------------------------------------ public API */

px_status_t px_boot_init(px_boot_info_t *info_p)
{
    px_status_t st;
    if (px_boot.initialized) {
        *info_p = px_boot.info;
        return PX_OK;
    }
    /* for the log level; a bad parameter is MPI_Init's to report */
    (void)px_param_init();
    memset(&px_boot.info, 0, sizeof(px_boot.info));
    atomic_store(&px_boot.finalized, 0);
    st = px_boot_choose();
    if (st != PX_OK)
        return st;
    const char *node = getenv("PX_NODE_NAME");
    if (!node)
        node = getenv("SLURMD_NODENAME");
    px_boot.info.node_name = node ? node : "";
    px_debug("boot", "%s: rank %d of %d, node %d of %d, local rank %d of %d, job %016llx",
             px_boot.ops->name, px_boot.info.rank, px_boot.info.size, px_boot.info.node_id,
             px_boot.info.num_nodes, px_boot.info.local_rank, px_boot.info.local_size,
             (unsigned long long)px_boot.info.job_id);
    px_boot.initialized = 1;
    *info_p = px_boot.info;
    return PX_OK;
}

px_status_t px_boot_put(const char *key, const void *val, size_t len)
{
    if (!px_boot.initialized || atomic_load(&px_boot.finalized))
        return PX_ERR_INVALID_PARAM;
    if (!key || (!val && len) || !px_boot_put_valid(strlen(key), (const uint8_t *)key, len))
        return PX_ERR_INVALID_PARAM;
    size_t klen = strlen(key);
    size_t before = px_boot.pending.len;
    if (px_boot.pending.len + PX_BOOT_PUT_HDR_LEN + klen + len + 4 > PX_BOOT_MAX_CLIENT_FRAME)
        return PX_ERR_NO_MEMORY; /* too much for one fence: fence more often */
    px_boot_buf_put_u16(&px_boot.pending, (uint16_t)klen);
    px_boot_buf_put_u32(&px_boot.pending, (uint32_t)len);
    px_boot_buf_put(&px_boot.pending, key, klen);
    px_boot_buf_put(&px_boot.pending, val, len);
    if (px_boot.pending.oom) {
        px_boot.pending.oom = 0;
        px_boot.pending.len = before;
        return PX_ERR_NO_MEMORY;
    }
    px_boot.npending++;
    return PX_OK;
}

px_status_t px_boot_fence(void)
{
    if (!px_boot.initialized || atomic_load(&px_boot.finalized))
        return PX_ERR_INVALID_PARAM;
    px_status_t st = px_boot.ops->fence(&px_boot.pending, px_boot.npending);
    px_boot.pending.len = 0;
    px_boot.npending = 0;
    if (px_boot.ops->get)
        px_boot_store_clear(); /* fetched values may have been put again */
    return st;
}

/* val == NULL only reports the length. A too small buffer gives
 * PX_ERR_TRUNCATED and copies nothing. */
px_status_t px_boot_get(int rank, const char *key, void *val, size_t maxlen, size_t *len_p)
{
    if (!px_boot.initialized || !key || rank < 0 || rank >= px_boot.info.size)
        return PX_ERR_INVALID_PARAM;
    px_boot_kv_t **pp = px_boot_store_find(rank, key);
    if ((!pp || !*pp) && px_boot.ops->get) {
        px_status_t st = px_boot.ops->get(rank, key);
        if (st != PX_OK)
            return st;
        pp = px_boot_store_find(rank, key);
    }
    if (!pp || !*pp)
        return PX_ERR_NOT_FOUND;
    if (val) {
        if ((*pp)->vlen > maxlen)
            return PX_ERR_TRUNCATED;
        memcpy(val, (*pp)->val, (*pp)->vlen);
    }
    if (len_p)
        *len_p = (*pp)->vlen;
    return PX_OK;
}

px_status_t px_boot_barrier(void)
{
    px_boot_buf_t none = {0};
    if (!px_boot.initialized || atomic_load(&px_boot.finalized))
        return PX_ERR_INVALID_PARAM;
    return px_boot.ops->fence(&none, 0);
}

void px_boot_abort(int code, const char *msg)
{
    if (!px_boot.initialized) {
        char why[PX_BOOT_ABORT_MSG_MAX + 64];
        snprintf(why, sizeof(why), "abort with code %d: %s", code, msg ? msg : "");
        px_boot_die(why, code & 0xff ? code & 0xff : 1);
    }
    px_boot.ops->abort(code, msg);
}

px_status_t px_boot_finalize(void)
{
    if (!px_boot.initialized)
        return PX_ERR_INVALID_PARAM;
    if (atomic_load(&px_boot.finalized))
        return PX_OK;
    return px_boot.ops->finalize();
}

const uint8_t *px_boot_secret(size_t *len_p)
{
    if (len_p)
        *len_p = px_boot.initialized ? PX_BOOT_SECRET_LEN : 0;
    return px_boot.initialized ? px_boot.secret : NULL;
}

const char *px_boot_local_addr(void) { return px_boot.local_addr; }

int px_boot_self_rank(void) { return px_boot.info.rank; }
