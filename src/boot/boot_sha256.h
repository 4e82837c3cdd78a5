/* Incremental SHA-256 / HMAC-SHA256 (private to boot; net handshakes use
 * px_hmac_sha256 from boot.h). */
#ifndef PX_BOOT_SHA256_H
#define PX_BOOT_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct px_sha256_ctx {
    uint32_t h[8];
    uint64_t nbytes;
    uint8_t buf[64];
    size_t buflen;
} px_sha256_ctx_t;

typedef struct px_hmac_sha256_ctx {
    px_sha256_ctx_t inner;
    uint8_t opad[64];
} px_hmac_sha256_ctx_t;

void px_sha256_init(px_sha256_ctx_t *c);
void px_sha256_update(px_sha256_ctx_t *c, const void *data, size_t len);
void px_sha256_final(px_sha256_ctx_t *c, uint8_t out[32]);
void px_sha256(const void *data, size_t len, uint8_t out[32]);

void px_hmac_sha256_init(px_hmac_sha256_ctx_t *c, const uint8_t *key, size_t keylen);
void px_hmac_sha256_update(px_hmac_sha256_ctx_t *c, const void *data, size_t len);
void px_hmac_sha256_final(px_hmac_sha256_ctx_t *c, uint8_t out[32]);

/* Constant-time comparison; 1 when equal. */
int px_boot_mac_equal(const uint8_t *a, const uint8_t *b, size_t len);

#endif
