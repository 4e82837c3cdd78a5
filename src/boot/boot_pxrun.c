/* The "pxrun" bootstrap backend: TCP to the launcher's server (two
 * connections: key-value exchange and control), challenge-response
 * authentication with the job's secret from the environment, and a
 * watcher thread that ends the process when pxrun aborts the job or goes
 * away. */
#include "boot.h"
#include "boot_impl.h"
#include "boot_wire.h"
#include "../util/clock.h"
#include "../util/log.h"

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

px_status_t px_boot_pxrun_init(const char *addr)
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
    if (!sec || px_boot_unhex(px_boot.secret, sizeof(px_boot.secret), sec, strlen(sec)) !=
                    PX_BOOT_SECRET_LEN) {
        px_error("boot", "PX_JOB_SECRET must hold %d hex digits", 2 * PX_BOOT_SECRET_LEN);
        return PX_ERR_INVALID_PARAM;
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
