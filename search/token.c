/* token.c - tokens and UTF-8 validation (see token.h).
 *
 * Tokens are folded through a 256-entry table in the same pass that finds them; a token
 * longer than the stack buffer continues in a heap buffer, so there is no length limit. The UTF-8
 * check follows RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF. Any thread. */
#include "search/token.h"

#include "common/alloc.h"

#include <stdint.h>
#include <string.h>

/* Byte -> its lower-case form for ASCII letters and digits, 0 for separators. */
static uint8_t fold[256];

__attribute__((constructor)) static void fold_init(void)
{
    for (int c = '0'; c <= '9'; c++) fold[c] = (uint8_t)c;
    for (int c = 'a'; c <= 'z'; c++) fold[c] = (uint8_t)c;
    for (int c = 'A'; c <= 'Z'; c++) fold[c] = (uint8_t)(c + 32);
}

/* One pass: each run is folded into buf while it is scanned (a run longer than buf goes to
 * the heap, so there is no length limit). */
size_t token_each(const char *text, size_t len, token_fn *fn, void *ud)
{
    const uint8_t *s = (const uint8_t *)text;
    char stack[128], *buf = stack;
    size_t cap = sizeof(stack), i = 0, count = 0;
    while (i < len) {
        while (i < len && !fold[s[i]]) i++;
        size_t n = 0;
        for (; i < len && fold[s[i]]; i++) {
            if (n == cap) {
                char *big = xmalloc(cap * 2);
                memcpy(big, buf, n);
                if (buf != stack) xfree(buf);
                buf = big;
                cap *= 2;
            }
            buf[n++] = (char)fold[s[i]];
        }
        if (n >= 2) {
            fn(ud, buf, n);
            count++;
        }
    }
    if (buf != stack) xfree(buf);
    return count;
}

/* Length of the sequence a lead byte starts (0: invalid lead), and the allowed range of the
 * second byte (which rules out overlong forms, surrogates and code points past U+10FFFF). */
static int utf8_lead(unsigned char c, unsigned char *lo, unsigned char *hi)
{
    *lo = 0x80;
    *hi = 0xbf;
    if (c < 0x80) return 1;
    if (c < 0xc2) return 0;
    if (c < 0xe0) return 2;
    if (c == 0xe0) *lo = 0xa0;
    if (c == 0xed) *hi = 0x9f;
    if (c < 0xf0) return 3;
    if (c == 0xf0) *lo = 0x90;
    if (c == 0xf4) *hi = 0x8f;
    if (c < 0xf5) return 4;
    return 0;
}

int token_is_utf8(const char *text, size_t len, int truncated)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < len) {
        /* ASCII eight bytes at a time */
        while (i + 8 <= len) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ull) break;
            i += 8;
        }
        if (i >= len) break;
        unsigned char lo, hi;
        int n = utf8_lead(s[i], &lo, &hi);
        if (n == 0) return 0;
        for (int k = 1; k < n; k++) {
            if (i + (size_t)k >= len) return truncated;
            unsigned char c = s[i + (size_t)k];
            if (k == 1 ? (c < lo || c > hi) : (c & 0xc0) != 0x80) return 0;
        }
        i += (size_t)n;
    }
    return 1;
}
