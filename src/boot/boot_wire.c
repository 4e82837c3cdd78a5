#include "boot_wire.h"
#include "boot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

void px_boot_buf_reserve(px_boot_buf_t *b, size_t extra)
{
    if (b->oom || b->len + extra <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra)
        cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return;
    }
    b->p = p;
    b->cap = cap;
}

void px_boot_buf_put(px_boot_buf_t *b, const void *data, size_t len)
{
    px_boot_buf_reserve(b, len);
    if (b->oom)
        return;
    if (len)
        memcpy(b->p + b->len, data, len);
    b->len += len;
}

void px_boot_buf_put_u16(px_boot_buf_t *b, uint16_t v)
{
    uint8_t x[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    px_boot_buf_put(b, x, 2);
}

void px_boot_buf_put_u32(px_boot_buf_t *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    px_boot_buf_put(b, x, 4);
}

void px_boot_buf_put_u64(px_boot_buf_t *b, uint64_t v)
{
    px_boot_buf_put_u32(b, (uint32_t)(v >> 32));
    px_boot_buf_put_u32(b, (uint32_t)v);
}

void px_boot_buf_put_hdr(px_boot_buf_t *b, px_boot_msg_t type, uint32_t len)
{
    px_boot_buf_reserve(b, PX_BOOT_HDR_LEN + len);
    px_boot_buf_put_u32(b, len);
    px_boot_buf_put_u16(b, (uint16_t)type);
    px_boot_buf_put_u16(b, 0);
}

void px_boot_buf_free(px_boot_buf_t *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

const uint8_t *px_boot_rd_bytes(px_boot_rd_t *r, size_t len)
{
    if (r->err || len > r->len - r->off) {
        r->err = 1;
        return NULL;
    }
    const uint8_t *p = r->p + r->off;
    r->off += len;
    return p;
}

uint16_t px_boot_rd_u16(px_boot_rd_t *r)
{
    const uint8_t *p = px_boot_rd_bytes(r, 2);
    return p ? (uint16_t)(p[0] << 8 | p[1]) : 0;
}

uint32_t px_boot_rd_u32(px_boot_rd_t *r)
{
    const uint8_t *p = px_boot_rd_bytes(r, 4);
    return p ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3] : 0;
}

uint64_t px_boot_rd_u64(px_boot_rd_t *r)
{
    uint64_t hi = px_boot_rd_u32(r);
    return hi << 32 | px_boot_rd_u32(r);
}

void px_boot_hdr_decode(const uint8_t hdr[PX_BOOT_HDR_LEN], uint32_t *type_p, uint32_t *len_p)
{
    px_boot_rd_t r = px_boot_rd_make(hdr, PX_BOOT_HDR_LEN);
    *len_p = px_boot_rd_u32(&r);
    *type_p = px_boot_rd_u16(&r);
}

void px_boot_auth_mac(const uint8_t secret[PX_BOOT_SECRET_LEN],
                      const uint8_t nonce[PX_BOOT_NONCE_LEN], uint32_t rank, uint32_t role,
                      uint8_t out[PX_BOOT_MAC_LEN])
{
    uint8_t msg[PX_BOOT_NONCE_LEN + 8];
    memcpy(msg, nonce, PX_BOOT_NONCE_LEN);
    for (int i = 0; i < 4; i++) {
        msg[PX_BOOT_NONCE_LEN + i] = (uint8_t)(rank >> (24 - 8 * i));
        msg[PX_BOOT_NONCE_LEN + 4 + i] = (uint8_t)(role >> (24 - 8 * i));
    }
    px_hmac_sha256(secret, PX_BOOT_SECRET_LEN, msg, sizeof(msg), out);
}

int px_boot_put_valid(size_t klen, const uint8_t *key, size_t vlen)
{
    if (klen == 0 || klen >= PX_BOOT_KEY_MAX || vlen > PX_BOOT_VAL_MAX)
        return 0;
    return memchr(key, 0, klen) == NULL;
}

px_status_t px_boot_random(void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        p += n;
        len -= (size_t)n;
    }
    if (!len)
        return PX_OK;
    /* kernels without getrandom(2) */
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return PX_ERR_IO;
    while (len) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close(fd);
            return PX_ERR_IO;
        }
        p += n;
        len -= (size_t)n;
    }
    close(fd);
    return PX_OK;
}
