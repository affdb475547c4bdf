/* crc64.c - Redis's CRC-64 (Jones polynomial, reflected), slice-by-8 (see crc64.h).
 *
 * table[0] is the classic byte-at-a-time table of the reflected polynomial; table[k][b] is
 * the CRC of byte b followed by k zero bytes, so eight input bytes fold in with eight lookups
 * and no carried dependency between them. Little-endian loads; a big-endian host falls back
 * to the byte loop. */
#include "common/crc64.h"

#include <string.h>

#define POLY_REFLECTED 0x95ac9329ac4bc9b5ULL

static uint64_t table[8][256];
static int ready;

void crc64_init(void)
{
    if (ready) return;
    for (int b = 0; b < 256; b++) {
        uint64_t c = (uint64_t)b;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ POLY_REFLECTED : c >> 1;
        table[0][b] = c;
    }
    for (int b = 0; b < 256; b++)
        for (int k = 1; k < 8; k++)
            table[k][b] = (table[k - 1][b] >> 8) ^ table[0][table[k - 1][b] & 0xff];
    ready = 1;
}

uint64_t crc64(uint64_t crc, const void *p, size_t len)
{
    const unsigned char *s = p;
    if (!ready) crc64_init();
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        w ^= crc;
        crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
              table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
              table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        s += 8;
        len -= 8;
    }
#endif
    while (len--) crc = table[0][(crc ^ *s++) & 0xff] ^ (crc >> 8);
    return crc;
}
