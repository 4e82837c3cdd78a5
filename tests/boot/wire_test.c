/* Bounds checks of the bootstrap wire reader and put validation. */
#include "boot/boot.h"
#include "boot/boot_wire.h"

#include <stdio.h>
#include <string.h>

static int failures;
#define T(cond)                                                                                    \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                                         \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

int main(void)
{
    px_boot_buf_t b = {0};
    px_boot_buf_put_hdr(&b, PX_BOOT_MSG_FENCE, 7);
    px_boot_buf_put_u16(&b, 0xBEEF);
    px_boot_buf_put_u32(&b, 0x01020304);
    px_boot_buf_put(&b, "z", 1);
    T(b.len == PX_BOOT_HDR_LEN + 7 && !b.oom);

    uint32_t type, len;
    px_boot_hdr_decode(b.p, &type, &len);
    T(type == PX_BOOT_MSG_FENCE && len == 7);

    px_boot_rd_t rd = px_boot_rd_make(b.p + PX_BOOT_HDR_LEN, len);
    T(px_boot_rd_u16(&rd) == 0xBEEF);
    T(px_boot_rd_u32(&rd) == 0x01020304);
    T(px_boot_rd_left(&rd) == 1 && !rd.err);
    /* reading past the end fails and keeps failing */
    T(px_boot_rd_u32(&rd) == 0 && rd.err);
    T(px_boot_rd_bytes(&rd, 1) == NULL);

    /* a huge length must not wrap around the bounds check */
    px_boot_rd_t r2 = px_boot_rd_make(b.p, b.len);
    px_boot_rd_u16(&r2);
    T(px_boot_rd_bytes(&r2, (size_t)-1) == NULL && r2.err);

    px_boot_rd_t r3 = px_boot_rd_make(b.p, 0);
    T(px_boot_rd_u64(&r3) == 0 && r3.err);

    /* puts */
    T(px_boot_put_valid(3, (const uint8_t *)"abc", 0));
    T(px_boot_put_valid(
        PX_BOOT_KEY_MAX - 1,
        (const uint8_t *)"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        PX_BOOT_VAL_MAX));
    T(!px_boot_put_valid(0, (const uint8_t *)"", 1));
    T(!px_boot_put_valid(
        PX_BOOT_KEY_MAX,
        (const uint8_t *)"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 1));
    T(!px_boot_put_valid(3, (const uint8_t *)"a\0c", 1));
    T(!px_boot_put_valid(3, (const uint8_t *)"abc", PX_BOOT_VAL_MAX + 1));

    /* the authentication code binds rank and role */
    uint8_t secret[32] = {1}, nonce[32] = {2}, m1[32], m2[32], m3[32];
    px_boot_auth_mac(secret, nonce, 1, PX_BOOT_ROLE_KV, m1);
    px_boot_auth_mac(secret, nonce, 2, PX_BOOT_ROLE_KV, m2);
    px_boot_auth_mac(secret, nonce, 1, PX_BOOT_ROLE_CTL, m3);
    T(memcmp(m1, m2, 32) && memcmp(m1, m3, 32));

    uint8_t r1[32] = {0}, rz[32] = {0};
    T(px_boot_random(r1, sizeof(r1)) == PX_OK && memcmp(r1, rz, 32));

    px_boot_buf_free(&b);
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
    return failures ? 1 : 0;
}
