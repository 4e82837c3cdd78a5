/* SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104). Small and portable: used
 * only for handshakes, never on a data path. */
#include "boot.h"
#include "boot_sha256.h"

#include <string.h>

static const uint32_t px_sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static inline uint32_t px_rotr32(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static void px_sha256_block(px_sha256_ctx_t *c, const uint8_t *p)
{
    uint32_t w[64], a, b, cc, d, e, f, g, h;
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = px_rotr32(w[i - 15], 7) ^ px_rotr32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = px_rotr32(w[i - 2], 17) ^ px_rotr32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = c->h[0];
    b = c->h[1];
    cc = c->h[2];
    d = c->h[3];
    e = c->h[4];
    f = c->h[5];
    g = c->h[6];
    h = c->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t s1 = px_rotr32(e, 6) ^ px_rotr32(e, 11) ^ px_rotr32(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = h + s1 + ch + px_sha256_k[i] + w[i];
        uint32_t s0 = px_rotr32(a, 2) ^ px_rotr32(a, 13) ^ px_rotr32(a, 22);
        uint32_t maj = (a & b) ^ (a & cc) ^ (b & cc);
        uint32_t t2 = s0 + maj;
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = cc;
        cc = b;
        b = a;
        a = t1 + t2;
    }
    c->h[0] += a;
    c->h[1] += b;
    c->h[2] += cc;
    c->h[3] += d;
    c->h[4] += e;
    c->h[5] += f;
    c->h[6] += g;
    c->h[7] += h;
}

void px_sha256_init(px_sha256_ctx_t *c)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, iv, sizeof(iv));
    c->nbytes = 0;
    c->buflen = 0;
}

void px_sha256_update(px_sha256_ctx_t *c, const void *data, size_t len)
{
    const uint8_t *p = data;
    c->nbytes += len;
    if (c->buflen) {
        size_t n = 64 - c->buflen;
        if (n > len)
            n = len;
        memcpy(c->buf + c->buflen, p, n);
        c->buflen += n;
        p += n;
        len -= n;
        if (c->buflen < 64)
            return;
        px_sha256_block(c, c->buf);
        c->buflen = 0;
    }
    for (; len >= 64; p += 64, len -= 64)
        px_sha256_block(c, p);
    memcpy(c->buf, p, len);
    c->buflen = len;
}

void px_sha256_final(px_sha256_ctx_t *c, uint8_t out[32])
{
    uint64_t bits = c->nbytes * 8;
    uint8_t pad[72] = {0x80};
    /* pad to 56 mod 64, then the 64-bit big-endian bit length */
    size_t padlen = (c->buflen < 56) ? 56 - c->buflen : 120 - c->buflen;
    for (int i = 0; i < 8; i++)
        pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    px_sha256_update(c, pad, padlen + 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(c->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)c->h[i];
    }
    memset(c, 0, sizeof(*c));
}

void px_sha256(const void *data, size_t len, uint8_t out[32])
{
    px_sha256_ctx_t c;
    px_sha256_init(&c);
    px_sha256_update(&c, data, len);
    px_sha256_final(&c, out);
}

void px_hmac_sha256_init(px_hmac_sha256_ctx_t *c, const uint8_t *key, size_t keylen)
{
    uint8_t k[64] = {0}, ipad[64];
    if (keylen > 64)
        px_sha256(key, keylen, k); /* long keys are hashed first (RFC 2104) */
    else if (keylen)
        memcpy(k, key, keylen);
    for (int i = 0; i < 64; i++) {
        ipad[i] = k[i] ^ 0x36;
        c->opad[i] = k[i] ^ 0x5c;
    }
    px_sha256_init(&c->inner);
    px_sha256_update(&c->inner, ipad, 64);
    memset(k, 0, sizeof(k));
    memset(ipad, 0, sizeof(ipad));
}

void px_hmac_sha256_update(px_hmac_sha256_ctx_t *c, const void *data, size_t len)
{
    px_sha256_update(&c->inner, data, len);
}

void px_hmac_sha256_final(px_hmac_sha256_ctx_t *c, uint8_t out[32])
{
    uint8_t ih[32];
    px_sha256_ctx_t outer;
    px_sha256_final(&c->inner, ih);
    px_sha256_init(&outer);
    px_sha256_update(&outer, c->opad, 64);
    px_sha256_update(&outer, ih, 32);
    px_sha256_final(&outer, out);
    memset(c, 0, sizeof(*c));
    memset(ih, 0, sizeof(ih));
}

void px_hmac_sha256(const uint8_t *key, size_t keylen, const uint8_t *msg, size_t msglen,
                    uint8_t out[32])
{
    px_hmac_sha256_ctx_t c;
    px_hmac_sha256_init(&c, key, keylen);
    px_hmac_sha256_update(&c, msg, msglen);
    px_hmac_sha256_final(&c, out);
}

int px_boot_mac_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
    /* constant time: the comparison must not leak how many bytes matched */
    volatile uint8_t d = 0;
    for (size_t i = 0; i < len; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}
