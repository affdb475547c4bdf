/* lzf.c - LZF as Redis's bundled liblzf 3.6 writes it (see lzf.h).
 *
 * The compressor walks the input keeping a 3-byte rolling value h (really 4 bytes: the byte
 * before the three stays in the top of the 32-bit word, as in liblzf, and it feeds the hash)
 * and a table from hash to the last position with that hash. A candidate is used when it is
 * within 8192 bytes back, is not position 0, and its first three bytes equal the current ones.
 * A match extends at most 264 bytes and never into the last two bytes of the input. After a
 * match the two positions before its end are hashed into the table (VERY_FAST).
 *
 * The table holds positions relative to a base that grows with each call, so entries left by
 * earlier calls read as empty without clearing 256 KiB per call (Redis compresses every string
 * over 20 bytes). Redis leaves its table uninitialised: entries that happen to point into the
 * current input make a different (still valid) choice there; with a clean stack, and in every
 * case we compared, the outputs are identical. */
#include "common/lzf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HLOG 16
#define HSIZE (1u << HLOG)
#define MAX_LIT 32
#define MAX_OFF 8192
#define MAX_REF 264

static __thread uint32_t *htab;
static __thread uint32_t hbase; /* entries <= hbase belong to earlier calls */

static inline uint32_t first2(const unsigned char *p)
{
    return ((uint32_t)p[0] << 8) | p[1];
}

static inline uint32_t next3(uint32_t h, const unsigned char *p)
{
    return (h << 8) | p[2];
}

static inline uint32_t slot(uint32_t h)
{
    return ((h >> (24 - HLOG)) - h * 5) & (HSIZE - 1);
}

/* Starts a call over n bytes: 0, or -1 if the table cannot be allocated. */
static int table_begin(size_t n)
{
    if (!htab) {
        htab = calloc(HSIZE, sizeof *htab);
        if (!htab) return -1;
        hbase = 0;
    }
    if (n >= UINT32_MAX / 2 || (uint64_t)hbase + n + 1 >= UINT32_MAX) {
        memset(htab, 0, HSIZE * sizeof *htab);
        hbase = 0;
    }
    return 0;
}

/* The length of the match between in+ref and in+ip, known to cover 3 bytes, as liblzf's loop
 * counts it: when maxlen > 16 the first 16 steps do not look at maxlen (and may pass it by a
 * byte or two, which the caller's input bounds allow), then one step at a time up to maxlen. */
static size_t match_len(const unsigned char *in, size_t ref, size_t ip, size_t maxlen)
{
    size_t len = 2;
    if (maxlen > 16) {
        for (int k = 0; k < 16; k++) {
            len++;
            if (in[ref + len] != in[ip + len]) return len;
        }
    }
    do len++;
    while (len < maxlen && in[ref + len] == in[ip + len]);
    return len;
}

size_t lzf_compress(const void *in_data, size_t n, void *out_data, size_t out_len)
{
    const unsigned char *in = in_data;
    unsigned char *out = out_data;
    size_t ip = 0, op = 0;
    int lit = 0;

    if (!n || !out_len || n >= UINT32_MAX / 2 || table_begin(n) < 0) return 0;
    uint32_t base = hbase + 1; /* table value of position p: base + p */
    hbase += (uint32_t)n + 1;
    op++; /* the length byte of the first literal run */
    uint32_t h = n >= 2 ? first2(in) : 0;
    while (n >= 3 && ip < n - 2) {
        h = next3(h, in + ip);
        uint32_t *hs = &htab[slot(h)];
        uint32_t v = *hs;
        *hs = base + (uint32_t)ip;
        size_t ref = v >= base ? v - base : 0; /* 0: no usable candidate */
        size_t off;
        if (ref > 0 && (off = ip - ref - 1) < MAX_OFF && in[ref + 2] == in[ip + 2] &&
            in[ref] == in[ip] && in[ref + 1] == in[ip + 1]) {
            size_t maxlen = n - ip - 2;
            if (maxlen > MAX_REF) maxlen = MAX_REF;
            if (op + 4 >= out_len && op - !lit + 4 >= out_len) return 0;
            out[op - lit - 1] = (unsigned char)(lit - 1); /* close the literal run */
            op -= !lit;                                   /* or drop it when empty */
            size_t len = match_len(in, ref, ip, maxlen) - 2;
            ip++;
            if (len < 7) {
                out[op++] = (unsigned char)((off >> 8) + (len << 5));
            } else {
                out[op++] = (unsigned char)((off >> 8) + (7 << 5));
                out[op++] = (unsigned char)(len - 7);
            }
            out[op++] = (unsigned char)off;
            lit = 0;
            op++;
            ip += len + 1;
            if (ip >= n - 2) break;
            ip -= 2;
            h = first2(in + ip);
            h = next3(h, in + ip);
            htab[slot(h)] = base + (uint32_t)ip;
            ip++;
            h = next3(h, in + ip);
            htab[slot(h)] = base + (uint32_t)ip;
            ip++;
        } else {
            if (op >= out_len) return 0;
            lit++;
            out[op++] = in[ip++];
            if (lit == MAX_LIT) {
                out[op - lit - 1] = (unsigned char)(lit - 1);
                lit = 0;
                op++;
            }
        }
    }
    if (op + 3 > out_len) return 0;
    while (ip < n) {
        lit++;
        out[op++] = in[ip++];
        if (lit == MAX_LIT) {
            out[op - lit - 1] = (unsigned char)(lit - 1);
            lit = 0;
            op++;
        }
    }
    out[op - lit - 1] = (unsigned char)(lit - 1);
    op -= !lit;
    return op;
}

size_t lzf_decompress(const void *in_data, size_t in_len, void *out_data, size_t out_len)
{
    const unsigned char *in = in_data;
    unsigned char *out = out_data;
    size_t ip = 0, op = 0;

    while (ip < in_len) {
        unsigned ctrl = in[ip++];
        if (ctrl < 32) {
            size_t run = (size_t)ctrl + 1;
            if (run > in_len - ip || run > out_len - op) return 0;
            memcpy(out + op, in + ip, run);
            ip += run;
            op += run;
            continue;
        }
        size_t len = ctrl >> 5;
        size_t back = (size_t)(ctrl & 0x1f) << 8;
        if (len == 7) {
            if (ip >= in_len) return 0;
            len += in[ip++];
        }
        if (ip >= in_len) return 0;
        back += in[ip++];
        len += 2;
        if (back + 1 > op || len > out_len - op) return 0;
        size_t ref = op - back - 1;
        for (size_t k = 0; k < len; k++) out[op + k] = out[ref + k];
        op += len;
    }
    return op;
}
