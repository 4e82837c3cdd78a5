/* SHA-256 (FIPS 180-4 examples) and HMAC-SHA256 (RFC 4231 test cases 1-7). */
#include "boot/boot.h"
#include "boot/boot_sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void hex(const uint8_t *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
}

static void expect(const char *name, const uint8_t *got, size_t n, const char *want)
{
    char buf[65];
    hex(got, n, buf);
    if (strcmp(buf, want)) {
        printf("FAIL %s\n  got  %s\n  want %s\n", name, buf, want);
        failures++;
    } else {
        printf("ok   %s\n", name);
    }
}

static void fill(uint8_t *p, uint8_t v, size_t n) { memset(p, v, n); }

int main(void)
{
    uint8_t out[32], key[131], data[160];

    /* SHA-256 */
    px_sha256("", 0, out);
    expect("sha256 empty", out, 32,
           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    px_sha256("abc", 3, out);
    expect("sha256 abc", out, 32,
           "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    px_sha256(m448, strlen(m448), out);
    expect("sha256 448 bits", out, 32,
           "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    {
        /* one million 'a', fed in uneven pieces to exercise the block buffer */
        px_sha256_ctx_t c;
        uint8_t chunk[997];
        memset(chunk, 'a', sizeof(chunk));
        px_sha256_init(&c);
        size_t left = 1000000, step = 1;
        while (left) {
            size_t n = step < left ? step : left;
            if (n > sizeof(chunk))
                n = sizeof(chunk);
            px_sha256_update(&c, chunk, n);
            left -= n;
            step = step * 3 + 1;
            if (step > sizeof(chunk))
                step = 7;
        }
        px_sha256_final(&c, out);
        expect("sha256 million a", out, 32,
               "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    }
    /* padding boundaries: 55, 56, 63, 64 bytes, one-shot equals byte-by-byte */
    for (size_t n = 54; n <= 65; n++) {
        uint8_t a[32], b[32];
        px_sha256_ctx_t c;
        memset(data, 'q', sizeof(data));
        px_sha256(data, n, a);
        px_sha256_init(&c);
        for (size_t i = 0; i < n; i++)
            px_sha256_update(&c, data + i, 1);
        px_sha256_final(&c, b);
        if (memcmp(a, b, 32)) {
            printf("FAIL sha256 incremental length %zu\n", n);
            failures++;
        }
    }

    /* RFC 4231 */
    fill(key, 0x0b, 20);
    px_hmac_sha256(key, 20, (const uint8_t *)"Hi There", 8, out);
    expect("rfc4231 case 1", out, 32,
           "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");

    const char *d2 = "what do ya want for nothing?";
    px_hmac_sha256((const uint8_t *)"Jefe", 4, (const uint8_t *)d2, strlen(d2), out);
    expect("rfc4231 case 2", out, 32,
           "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");

    fill(key, 0xaa, 20);
    fill(data, 0xdd, 50);
    px_hmac_sha256(key, 20, data, 50, out);
    expect("rfc4231 case 3", out, 32,
           "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");

    for (int i = 0; i < 25; i++)
        key[i] = (uint8_t)(i + 1);
    fill(data, 0xcd, 50);
    px_hmac_sha256(key, 25, data, 50, out);
    expect("rfc4231 case 4", out, 32,
           "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");

    fill(key, 0x0c, 20);
    px_hmac_sha256(key, 20, (const uint8_t *)"Test With Truncation", 20, out);
    expect("rfc4231 case 5 (128 bits)", out, 16, "a3b6167473100ee06e0c796c2955552b");

    fill(key, 0xaa, 131);
    const char *d6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    px_hmac_sha256(key, 131, (const uint8_t *)d6, strlen(d6), out);
    expect("rfc4231 case 6", out, 32,
           "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");

    const char *d7 =
        "This is a test using a larger than block-size key and a larger than block-size "
        "data. The key needs to be hashed before being used by the HMAC algorithm.";
    px_hmac_sha256(key, 131, (const uint8_t *)d7, strlen(d7), out);
    expect("rfc4231 case 7", out, 32,
           "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");

    /* constant-time compare */
    uint8_t x[32] = {0}, y[32] = {0};
    y[31] = 1;
    if (!px_boot_mac_equal(x, x, 32) || px_boot_mac_equal(x, y, 32)) {
        printf("FAIL px_boot_mac_equal\n");
        failures++;
    }

    printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
    return failures ? 1 : 0;
}
