/* Ports and the name service of MPI's dynamic processes (port.h). */
#include "port.h"
#include "boot.h"
#include "boot_wire.h"
#include "../util/clock.h"
#include "../util/log.h"
#include "../util/param.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define PX_PORT_TOKEN_LEN 16
#define PX_PORT_MAGIC 0x50585031u  /* "PXP1" */
#define PX_PORT_HANDSHAKE_MS 10000 /* a connection that has begun proves itself within this */

struct px_port {
    int fd;
    uint8_t key[32]; /* HMAC-SHA256(token, "plexus port") */
    char name[PX_PORT_NAME_MAX];
};

static void px_port_key(const uint8_t token[PX_PORT_TOKEN_LEN], uint8_t key[32])
{
    static const char label[] = "plexus port";
    px_hmac_sha256(token, PX_PORT_TOKEN_LEN, (const uint8_t *)label, sizeof(label) - 1, key);
}

/* HMAC(key, role | nonce): what one end answers to the other's nonce. */
static void px_port_mac(const uint8_t *key, size_t klen, uint8_t role,
                        const uint8_t nonce[PX_BOOT_NONCE_LEN], uint8_t out[32])
{
    uint8_t msg[1 + PX_BOOT_NONCE_LEN];
    msg[0] = role;
    memcpy(msg + 1, nonce, PX_BOOT_NONCE_LEN);
    px_hmac_sha256(key, klen, msg, sizeof(msg), out);
}

static int px_port_ct_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint8_t d = 0;
    for (size_t i = 0; i < n; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}

static uint64_t px_port_deadline(int timeout_ms)
{
    return timeout_ms < 0 ? UINT64_MAX : px_time_ns() + (uint64_t)timeout_ms * 1000000ull;
}

/* Waits up to 1 ms for events on fd, calling idle between polls, until
 * the deadline: 1 ready, 0 timed out, -1 error. */
static int px_port_wait(int fd, short events, uint64_t deadline, px_port_idle_fn idle, void *arg)
{
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = events};
        int r = poll(&pfd, 1, idle ? 1 : 10);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r > 0)
            return 1;
        if (px_time_ns() >= deadline)
            return 0;
        if (idle)
            idle(arg);
    }
}

px_status_t px_port_swap(int fd, const void *out, size_t olen, void *in, size_t ilen,
                         int timeout_ms, px_port_idle_fn idle, void *arg)
{
    const uint8_t *op = out;
    uint8_t *ip = in;
    uint64_t deadline = px_port_deadline(timeout_ms);
    while (olen || ilen) {
        short ev = (short)((olen ? POLLOUT : 0) | (ilen ? POLLIN : 0));
        int r = px_port_wait(fd, ev, deadline, idle, arg);
        if (r <= 0)
            return r ? PX_ERR_IO : PX_ERR_TIMEOUT;
        if (olen) {
            ssize_t n = send(fd, op, olen, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                return PX_ERR_IO;
            if (n > 0)
                op += n, olen -= (size_t)n;
        }
        if (ilen) {
            ssize_t n = recv(fd, ip, ilen, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
                return PX_ERR_IO;
            if (n > 0)
                ip += n, ilen -= (size_t)n;
        }
    }
    return PX_OK;
}

/* ---------- names of ports ---------- */

static int px_port_hex(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "plexus:<32 hex>:<port>:<host>" -> its parts; 0 when valid. */
static int px_port_parse(const char *name, uint8_t token[PX_PORT_TOKEN_LEN], char *port,
                         size_t pcap, char *host, size_t hcap)
{
    static const char pre[] = "plexus:";
    if (!name || strncmp(name, pre, sizeof(pre) - 1))
        return -1;
    const char *p = name + sizeof(pre) - 1;
    for (int i = 0; i < PX_PORT_TOKEN_LEN; i++) {
        int hi = px_port_hex(p[2 * i]), lo = hi < 0 ? -1 : px_port_hex(p[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        token[i] = (uint8_t)(hi << 4 | lo);
    }
    p += 2 * PX_PORT_TOKEN_LEN;
    if (*p++ != ':')
        return -1;
    size_t n = strspn(p, "0123456789");
    if (n == 0 || n >= pcap || n > 5 || p[n] != ':')
        return -1;
    memcpy(port, p, n);
    port[n] = 0;
    p += n + 1;
    if (!*p || strlen(p) >= hcap)
        return -1;
    strcpy(host, p);
    return atoi(port) > 0 && atoi(port) < 65536 ? 0 : -1;
}

px_status_t px_port_derive(const char *name, const uint8_t *salt, size_t slen, uint8_t out[32])
{
    uint8_t token[PX_PORT_TOKEN_LEN], key[32], msg[64];
    char port[8], host[PX_PORT_NAME_MAX];
    static const char label[] = "plexus peers";
    if (px_port_parse(name, token, port, sizeof(port), host, sizeof(host)) ||
        slen > sizeof(msg) - (sizeof(label) - 1))
        return PX_ERR_INVALID_PARAM;
    px_port_key(token, key);
    memcpy(msg, label, sizeof(label) - 1);
    memcpy(msg + sizeof(label) - 1, salt, slen);
    px_hmac_sha256(key, sizeof(key), msg, sizeof(label) - 1 + slen, out);
    return PX_OK;
}

px_status_t px_port_open(const char *host, px_port_t **port_p, char name[PX_PORT_NAME_MAX])
{
    if (!host || !*host)
        host = "127.0.0.1";
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_PASSIVE},
                    *ai;
    if (getaddrinfo(host, "0", &hints, &ai) != 0)
        return PX_ERR_INVALID_PARAM;
    px_port_t *p = calloc(1, sizeof(*p));
    uint8_t token[PX_PORT_TOKEN_LEN];
    px_status_t st = p ? px_boot_random(token, sizeof(token)) : PX_ERR_NO_MEMORY;
    int fd = -1;
    if (st == PX_OK) {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0)
            st = PX_ERR_IO;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char serv[16];
    if (st == PX_OK &&
        (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0 ||
         getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, serv, sizeof(serv), NI_NUMERICSERV) != 0))
        st = PX_ERR_IO;
    if (st != PX_OK) {
        if (fd >= 0)
            close(fd);
        free(p);
        return st;
    }
    p->fd = fd;
    px_port_key(token, p->key);
    int o = snprintf(p->name, sizeof(p->name), "plexus:");
    for (int i = 0; i < PX_PORT_TOKEN_LEN; i++)
        o += snprintf(p->name + o, sizeof(p->name) - (size_t)o, "%02x", token[i]);
    snprintf(p->name + o, sizeof(p->name) - (size_t)o, ":%s:%s", serv, host);
    memset(token, 0, sizeof(token));
    snprintf(name, PX_PORT_NAME_MAX, "%s", p->name);
    *port_p = p;
    return PX_OK;
}

void px_port_close(px_port_t *p)
{
    if (!p)
        return;
    close(p->fd);
    memset(p->key, 0, sizeof(p->key));
    free(p);
}

const char *px_port_name(const px_port_t *p) { return p->name; }

/* The handshake, from the accepting end A and the connecting end C:
 *   A -> C  magic, nonce_a
 *   C -> A  magic, nonce_c, HMAC(key, 'C' | nonce_a)
 *   A -> C  HMAC(key, 'A' | nonce_c)
 * Each end checks the other's answer before anything else is exchanged. */
#define PX_PORT_HELLO_LEN (4 + PX_BOOT_NONCE_LEN)

static void px_port_put_u32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24), b[1] = (uint8_t)(v >> 16), b[2] = (uint8_t)(v >> 8),
    b[3] = (uint8_t)v;
}

static uint32_t px_port_get_u32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static px_status_t px_port_hs_accept(int fd, const uint8_t key[32])
{
    uint8_t hello[PX_PORT_HELLO_LEN], in[PX_PORT_HELLO_LEN + 32], mac[32];
    px_port_put_u32(hello, PX_PORT_MAGIC);
    px_status_t st = px_boot_random(hello + 4, PX_BOOT_NONCE_LEN);
    if (st == PX_OK)
        st = px_port_swap(fd, hello, sizeof(hello), in, sizeof(in), PX_PORT_HANDSHAKE_MS, NULL,
                          NULL);
    if (st != PX_OK)
        return st;
    px_port_mac(key, 32, 'C', hello + 4, mac);
    if (px_port_get_u32(in) != PX_PORT_MAGIC || !px_port_ct_equal(mac, in + PX_PORT_HELLO_LEN, 32))
        return PX_ERR_AUTH;
    px_port_mac(key, 32, 'A', in + 4, mac);
    return px_port_swap(fd, mac, sizeof(mac), NULL, 0, PX_PORT_HANDSHAKE_MS, NULL, NULL);
}

px_status_t px_port_accept(px_port_t *p, int timeout_ms, px_port_idle_fn idle, void *arg, int *fd_p)
{
    uint64_t deadline = px_port_deadline(timeout_ms);
    for (;;) {
        int r = px_port_wait(p->fd, POLLIN, deadline, idle, arg);
        if (r <= 0)
            return r ? PX_ERR_IO : PX_ERR_TIMEOUT;
        int fd = accept4(p->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
                continue;
            return PX_ERR_IO;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        px_status_t st = px_port_hs_accept(fd, p->key);
        if (st == PX_OK) {
            *fd_p = fd;
            return PX_OK;
        }
        px_warn("boot", "port %s: a connection that did not prove the port's token was closed (%s)",
                p->name, px_status_string(st));
        close(fd);
    }
}

px_status_t px_port_connect(const char *name, int timeout_ms, px_port_idle_fn idle, void *arg,
                            int *fd_p)
{
    uint8_t token[PX_PORT_TOKEN_LEN], key[32];
    char port[8], host[PX_PORT_NAME_MAX];
    if (px_port_parse(name, token, port, sizeof(port), host, sizeof(host)))
        return PX_ERR_INVALID_PARAM;
    px_port_key(token, key);
    memset(token, 0, sizeof(token));
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST}, *ai;
    if (getaddrinfo(host, port, &hints, &ai) != 0)
        return PX_ERR_INVALID_PARAM;
    uint64_t deadline = px_port_deadline(timeout_ms);
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    px_status_t st = fd < 0 ? PX_ERR_IO : PX_OK;
    if (st == PX_OK && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        if (errno != EINPROGRESS)
            st = errno == ECONNREFUSED ? PX_ERR_NOT_FOUND : PX_ERR_IO;
        else {
            int r = px_port_wait(fd, POLLOUT, deadline, idle, arg), soerr = 0;
            socklen_t sl = sizeof(soerr);
            if (r == 0)
                st = PX_ERR_TIMEOUT;
            else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
                st = PX_ERR_IO;
            else if (soerr)
                st = soerr == ECONNREFUSED ? PX_ERR_NOT_FOUND : PX_ERR_IO;
        }
    }
    freeaddrinfo(ai);
    if (st == PX_OK) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        /* the acceptor speaks first, once its MPI_Comm_accept takes us */
        uint8_t in[PX_PORT_HELLO_LEN], out[PX_PORT_HELLO_LEN + 32], mac[32];
        uint64_t now = px_time_ns();
        int left = timeout_ms < 0    ? -1
                   : now >= deadline ? 1
                                     : (int)((deadline - now) / 1000000ull) + 1;
        st = px_port_swap(fd, NULL, 0, in, sizeof(in), left, idle, arg);
        if (st == PX_ERR_IO)
            st = PX_ERR_AUTH; /* closed on us: the token was not the port's */
        if (st == PX_OK && px_port_get_u32(in) != PX_PORT_MAGIC)
            st = PX_ERR_PROTOCOL;
        if (st == PX_OK) {
            px_port_put_u32(out, PX_PORT_MAGIC);
            st = px_boot_random(out + 4, PX_BOOT_NONCE_LEN);
            px_port_mac(key, 32, 'C', in + 4, out + PX_PORT_HELLO_LEN);
        }
        if (st == PX_OK)
            st = px_port_swap(fd, out, sizeof(out), mac, sizeof(mac), PX_PORT_HANDSHAKE_MS, idle,
                              arg);
        if (st == PX_ERR_IO)
            st = PX_ERR_AUTH;
        if (st == PX_OK) {
            uint8_t want[32];
            px_port_mac(key, 32, 'A', out + 4, want);
            if (!px_port_ct_equal(want, mac, 32))
                st = PX_ERR_AUTH;
        }
    }
    memset(key, 0, sizeof(key));
    if (st != PX_OK) {
        if (fd >= 0)
            close(fd);
        return st;
    }
    *fd_p = fd;
    return PX_OK;
}

/* Both ends at once: magic, id, nonce; then HMAC(secret, 'J' | other's
 * nonce | own id) each way. */
px_status_t px_port_join(int fd, const uint8_t *secret, size_t slen, const uint8_t id[12],
                         uint8_t peer_id[12], int timeout_ms, px_port_idle_fn idle, void *arg)
{
    uint8_t out[4 + 12 + PX_BOOT_NONCE_LEN], in[sizeof(out)], mac[32], pmac[32];
    px_port_put_u32(out, PX_PORT_MAGIC + 1);
    memcpy(out + 4, id, 12);
    px_status_t st = px_boot_random(out + 16, PX_BOOT_NONCE_LEN);
    if (st == PX_OK)
        st = px_port_swap(fd, out, sizeof(out), in, sizeof(in), timeout_ms, idle, arg);
    if (st != PX_OK)
        return st;
    if (px_port_get_u32(in) != PX_PORT_MAGIC + 1)
        return PX_ERR_PROTOCOL;
    memcpy(peer_id, in + 4, 12);
    /* the answer binds the nonce to the answering end's id */
    uint8_t k2[32], want[32];
    px_hmac_sha256(secret, slen, out + 4, 12, k2);
    px_port_mac(k2, 32, 'J', in + 16, mac);
    st = px_port_swap(fd, mac, sizeof(mac), pmac, sizeof(pmac), timeout_ms, idle, arg);
    if (st != PX_OK)
        return st;
    px_hmac_sha256(secret, slen, in + 4, 12, k2);
    px_port_mac(k2, 32, 'J', out + 16, want);
    memset(k2, 0, sizeof(k2));
    if (!px_port_ct_equal(want, pmac, 32))
        return PX_ERR_AUTH;
    return PX_OK;
}

/* ---------- the name service ---------- */

/* The directory, created 0700 when missing; refused when it is not a
 * directory of this user's that only this user may enter. */
static px_status_t px_name_dir(char *dir, size_t cap)
{
    const char *rt = getenv("XDG_RUNTIME_DIR");
    if (px_params.name_dir && *px_params.name_dir)
        snprintf(dir, cap, "%s", px_params.name_dir);
    else if (rt && *rt == '/')
        snprintf(dir, cap, "%s/plexus-names", rt);
    else
        snprintf(dir, cap, "/tmp/plexus-names-%u", (unsigned)getuid());
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        px_error("boot", "name service: cannot create %s: %s", dir, strerror(errno));
        return PX_ERR_IO;
    }
    struct stat sb;
    if (lstat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode) || sb.st_uid != getuid() ||
        (sb.st_mode & 077)) {
        px_error("boot",
                 "name service: %s is not a directory of this user's with mode 0700; "
                 "refusing to use it (PX_NAME_DIR names another)",
                 dir);
        return PX_ERR_AUTH;
    }
    return PX_OK;
}

/* dir/<service in hex>: any service name becomes a safe file name. */
static px_status_t px_name_path(const char *service, char *path, size_t cap)
{
    size_t n = service ? strlen(service) : 0;
    if (n == 0 || n > 100)
        return PX_ERR_INVALID_PARAM;
    px_status_t st = px_name_dir(path, cap);
    if (st != PX_OK)
        return st;
    size_t o = strlen(path);
    o += (size_t)snprintf(path + o, cap - o, "/s-");
    for (size_t i = 0; i < n && o + 3 < cap; i++)
        o += (size_t)snprintf(path + o, cap - o, "%02x", (unsigned char)service[i]);
    return o + 3 < cap ? PX_OK : PX_ERR_INVALID_PARAM;
}

px_status_t px_name_publish(const char *service, const char *port)
{
    char path[512], tmp[600];
    size_t plen = port ? strlen(port) : 0;
    if (plen == 0 || plen >= PX_PORT_NAME_MAX)
        return PX_ERR_INVALID_PARAM;
    px_status_t st = px_name_path(service, path, sizeof(path));
    if (st != PX_OK)
        return st;
    uint32_t rnd = 0;
    px_boot_random(&rnd, sizeof(rnd));
    snprintf(tmp, sizeof(tmp), "%s.%d.%08x", path, (int)getpid(), rnd);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return PX_ERR_IO;
    int ok = write(fd, port, plen) == (ssize_t)plen;
    ok = close(fd) == 0 && ok;
    /* link(2) makes the name appear whole, and only if nobody has it */
    st = !ok                    ? PX_ERR_IO
         : link(tmp, path) == 0 ? PX_OK
         : errno == EEXIST      ? PX_ERR_EXISTS
                                : PX_ERR_IO;
    unlink(tmp);
    return st;
}

px_status_t px_name_lookup(const char *service, char port[PX_PORT_NAME_MAX])
{
    char path[512];
    px_status_t st = px_name_path(service, path, sizeof(path));
    if (st != PX_OK)
        return st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? PX_ERR_NOT_FOUND : PX_ERR_IO;
    ssize_t n = read(fd, port, PX_PORT_NAME_MAX - 1);
    close(fd);
    if (n <= 0 || memchr(port, 0, (size_t)n))
        return PX_ERR_PROTOCOL;
    port[n] = 0;
    return PX_OK;
}

px_status_t px_name_unpublish(const char *service)
{
    char path[512];
    px_status_t st = px_name_path(service, path, sizeof(path));
    if (st != PX_OK)
        return st;
    if (unlink(path) < 0)
        return errno == ENOENT ? PX_ERR_NOT_FOUND : PX_ERR_IO;
    return PX_OK;
}
