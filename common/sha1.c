/* sha1.c - SHA-1 (FIPS 180-4), one call over a whole buffer (see sha1.h).
 *
 * Scripts are hashed once when they are cached, so this is written for clarity: 64-byte
 * blocks, the padding built in a final one or two blocks on the stack. */
#include "common/sha1.h"

#include <stdint.h>
#include <string.h>

static uint32_t rol(uint32_t v, int n)
{
    return (v << n) | (v >> (32 - n));
}

static void block(uint32_t h[5], const unsigned char *p)
{
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 80; i++) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20)
            f = (b & c) | (~b & d), k = 0x5A827999;
        else if (i < 40)
            f = b ^ c ^ d, k = 0x6ED9EBA1;
        else if (i < 60)
            f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
        else
            f = b ^ c ^ d, k = 0xCA62C1D6;
        uint32_t t = rol(a, 5) + f + e + k + w[i];
        e = d, d = c, c = rol(b, 30), b = a, a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

void sha1_hex(const void *data, size_t len, char hex[41])
{
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    const unsigned char *p = data;
    size_t full = len / 64 * 64;
    for (size_t i = 0; i < full; i += 64) block(h, p + i);
    unsigned char tail[128] = {0};
    size_t rest = len - full, n = rest < 56 ? 64 : 128;
    memcpy(tail, p + full, rest);
    tail[rest] = 0x80;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++) tail[n - 1 - i] = (unsigned char)(bits >> (8 * i));
    block(h, tail);
    if (n == 128) block(h, tail + 64);
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 20; i++) {
        unsigned char byte = (unsigned char)(h[i / 4] >> (24 - 8 * (i % 4)));
        hex[2 * i] = digits[byte >> 4];
        hex[2 * i + 1] = digits[byte & 15];
    }
    hex[40] = '\0';
}
