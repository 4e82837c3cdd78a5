/* Wire format of the pxrun bootstrap protocol, shared by client and server.
 *
 * Every frame: u32 payload length, u16 type, u16 zero, then the payload; all
 * integers big-endian. A connection starts with the server's HELLO (nonce);
 * the client answers AUTH(rank, role, HMAC-SHA256(secret, nonce|rank|role)),
 * so the secret never crosses the wire; the server answers WELCOME (job
 * geometry and node map) or REJECT and closes. Each rank opens a "kv"
 * connection (request/response: FENCE, FINALIZE) and a "ctl" connection
 * (ABORT in both directions). Receivers check every length and count. */
#ifndef PX_BOOT_WIRE_H
#define PX_BOOT_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include "../util/px_status.h"

#define PX_BOOT_MAGIC 0x50584231u /* "PXB1" */
#define PX_BOOT_PROTO_VERSION 1u
#define PX_BOOT_NONCE_LEN 32
#define PX_BOOT_SECRET_LEN 32
#define PX_BOOT_MAC_LEN 32
#define PX_BOOT_HDR_LEN 8

/* Largest frame a server accepts from an authenticated rank (one fence's puts). */
#define PX_BOOT_MAX_CLIENT_FRAME (16u << 20)
/* Largest frame a client accepts (a fence's puts of every rank). */
#define PX_BOOT_MAX_SERVER_FRAME (256u << 20)
#define PX_BOOT_MAX_RANKS (1 << 20)
#define PX_BOOT_ABORT_MSG_MAX 1024

/* Sizes of fixed payloads. */
#define PX_BOOT_HELLO_LEN (4 + 4 + PX_BOOT_NONCE_LEN)
#define PX_BOOT_AUTH_LEN (4 + 4 + PX_BOOT_MAC_LEN)
#define PX_BOOT_WELCOME_FIXED_LEN (4 + 4 + 4 + 8)
/* Per put inside FENCE: u16 klen, u32 vlen, key, value. */
#define PX_BOOT_PUT_HDR_LEN 6

typedef enum px_boot_msg {
    PX_BOOT_MSG_HELLO = 1,       /* S->C magic, version, nonce[32] */
    PX_BOOT_MSG_AUTH = 2,        /* C->S rank, role, mac[32] */
    PX_BOOT_MSG_WELCOME = 3,     /* S->C size, num_nodes, universe, job_id, node_of[size] */
    PX_BOOT_MSG_REJECT = 4,      /* S->C reason text; connection closed after it */
    PX_BOOT_MSG_FENCE = 5,       /* C->S count, puts */
    PX_BOOT_MSG_FENCE_DONE = 6,  /* S->C count, (rank, put)... from every rank */
    PX_BOOT_MSG_FINALIZE = 7,    /* C->S empty */
    PX_BOOT_MSG_FINALIZE_OK = 8, /* S->C empty */
    PX_BOOT_MSG_ABORT = 9,       /* both ways on ctl: i32 code, u16 msglen, msg */
    PX_BOOT_MSG_DUMP = 10,       /* S->C on ctl, empty: print what you wait for */
} px_boot_msg_t;

enum { PX_BOOT_ROLE_KV = 1, PX_BOOT_ROLE_CTL = 2 };

/* Growable output buffer; an allocation failure sets `oom` and later puts are ignored. */
typedef struct px_boot_buf {
    uint8_t *p;
    size_t len, cap;
    int oom;
} px_boot_buf_t;

void px_boot_buf_reserve(px_boot_buf_t *b, size_t extra);
void px_boot_buf_put(px_boot_buf_t *b, const void *data, size_t len);
void px_boot_buf_put_u16(px_boot_buf_t *b, uint16_t v);
void px_boot_buf_put_u32(px_boot_buf_t *b, uint32_t v);
void px_boot_buf_put_u64(px_boot_buf_t *b, uint64_t v);
/* Appends a frame header; the payload follows with the put functions. */
void px_boot_buf_put_hdr(px_boot_buf_t *b, px_boot_msg_t type, uint32_t len);
void px_boot_buf_free(px_boot_buf_t *b);

/* Bounds-checked reader; a read past the end sets `err` and yields zeros. */
typedef struct px_boot_rd {
    const uint8_t *p;
    size_t len, off;
    int err;
} px_boot_rd_t;

static inline px_boot_rd_t px_boot_rd_make(const void *p, size_t len)
{
    px_boot_rd_t r = {(const uint8_t *)p, len, 0, 0};
    return r;
}
uint16_t px_boot_rd_u16(px_boot_rd_t *r);
uint32_t px_boot_rd_u32(px_boot_rd_t *r);
uint64_t px_boot_rd_u64(px_boot_rd_t *r);
/* Returns a pointer to the next len bytes, or NULL (and err) when short. */
const uint8_t *px_boot_rd_bytes(px_boot_rd_t *r, size_t len);
static inline size_t px_boot_rd_left(const px_boot_rd_t *r) { return r->len - r->off; }

/* Decodes a frame header. */
void px_boot_hdr_decode(const uint8_t hdr[PX_BOOT_HDR_LEN], uint32_t *type_p, uint32_t *len_p);

/* HMAC-SHA256(secret, nonce | be32(rank) | be32(role)). */
void px_boot_auth_mac(const uint8_t secret[PX_BOOT_SECRET_LEN],
                      const uint8_t nonce[PX_BOOT_NONCE_LEN], uint32_t rank, uint32_t role,
                      uint8_t out[PX_BOOT_MAC_LEN]);

/* Checks one put (key length, NUL-free key, value length); 1 when valid. */
int px_boot_put_valid(size_t klen, const uint8_t *key, size_t vlen);

/* px_boot_random: boot.h */

#endif
