/* writer.c - reply encoding, RESP2 and RESP3, appended to a buf_t.
 *
 * Each function reserves its worst case once, writes straight into b->data and then restores
 * buf_t's invariant (data[len] == '\0'). Integers are formatted with a two-digit table, never
 * snprintf; a header under 10 ("*2\r\n", "$3\r\n") is four stores. Doubles follow Redis 7.0's
 * addReplyDouble: "%.17g", with "inf"/"-inf" spelled out (and "nan" for any NaN). In RESP2 the
 * RESP3-only types degrade as Redis degrades them: maps to flat arrays of 2n, sets and pushes to
 * arrays, doubles and verbatim strings to bulk strings, booleans to 1/0, nulls to "$-1"/"*-1".
 *
 * Thread: any; functions touch only the buffer they are given. */
#include "resp/resp.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define HDR_MAX 24 /* prefix, 20 digits with sign, "\r\n", NUL */

static const char DIGITS2[] = "00010203040506070809"
                              "10111213141516171819"
                              "20212223242526272829"
                              "30313233343536373839"
                              "40414243444546474849"
                              "50515253545556575859"
                              "60616263646566676869"
                              "70717273747576777879"
                              "80818283848586878889"
                              "90919293949596979899";

/* buf_reserve without the call when the room is already there (the usual case). */
static inline void reserve(buf_t *b, size_t n)
{
    if (b->cap - b->len <= n) buf_reserve(b, n);
}

/* Writes v in decimal at dst (no NUL); returns the length, at most 20. */
static size_t fmt_u64(char *dst, uint64_t v)
{
    char tmp[20];
    char *end = tmp + sizeof tmp, *s = end;
    while (v >= 100) {
        size_t i = (size_t)(v % 100) * 2;
        v /= 100;
        s -= 2;
        memcpy(s, DIGITS2 + i, 2);
    }
    if (v >= 10) {
        s -= 2;
        memcpy(s, DIGITS2 + v * 2, 2);
    } else {
        *--s = (char)('0' + v);
    }
    size_t n = (size_t)(end - s);
    memcpy(dst, s, n);
    return n;
}

static size_t fmt_i64(char *dst, long long v)
{
    if (v >= 0) return fmt_u64(dst, (uint64_t)v);
    *dst = '-';
    return 1 + fmt_u64(dst + 1, 0 - (uint64_t)v);
}

/* Writes "<prefix><v>\r\n" at d, which has HDR_MAX bytes; returns the length. */
static size_t fmt_hdr(char *d, char prefix, long long v)
{
    d[0] = prefix;
    size_t n;
    if (v >= 0 && v < 10) {
        d[1] = (char)('0' + v);
        n = 2;
    } else {
        n = 1 + fmt_i64(d + 1, v);
    }
    d[n] = '\r';
    d[n + 1] = '\n';
    return n + 2;
}

/* Appends "<prefix><v>\r\n". */
static void put_hdr(buf_t *b, char prefix, long long v)
{
    reserve(b, HDR_MAX);
    b->len += fmt_hdr(b->data + b->len, prefix, v);
    b->data[b->len] = '\0';
}

/* Appends "<prefix><s>\r\n" in one reservation. */
static void put_line(buf_t *b, char prefix, const char *s, size_t len)
{
    reserve(b, len + 3);
    char *d = b->data + b->len;
    d[0] = prefix;
    if (len) memcpy(d + 1, s, len);
    d[len + 1] = '\r';
    d[len + 2] = '\n';
    b->len += len + 3;
    b->data[b->len] = '\0';
}

void resp_w_simple(buf_t *b, const char *s, size_t len)
{
    put_line(b, '+', s, len);
}

void resp_w_error(buf_t *b, const char *s, size_t len)
{
    size_t start = b->len + 1;
    put_line(b, '-', s, len);
    for (char *c = b->data + start, *e = c + len; c < e; c++)
        if (*c == '\r' || *c == '\n') *c = ' ';
}

void resp_w_int(buf_t *b, long long v)
{
    put_hdr(b, ':', v);
}

void resp_w_bulk(buf_t *b, const void *p, size_t len)
{
    reserve(b, HDR_MAX + len + 2);
    char *d = b->data + b->len;
    size_t n = fmt_hdr(d, '$', (long long)len);
    if (len) memcpy(d + n, p, len);
    d[n + len] = '\r';
    d[n + len + 1] = '\n';
    b->len += n + len + 2;
    b->data[b->len] = '\0';
}

void resp_w_null(buf_t *b, int proto)
{
    if (proto >= 3)
        buf_append(b, "_\r\n", 3);
    else
        buf_append(b, "$-1\r\n", 5);
}

void resp_w_null_array(buf_t *b, int proto)
{
    if (proto >= 3)
        buf_append(b, "_\r\n", 3);
    else
        buf_append(b, "*-1\r\n", 5);
}

/* The wire prefix and count of an aggregate header after RESP2 degradation. */
static char agg_kind(int proto, char kind, long long *n)
{
    assert(kind == '*' || kind == '%' || kind == '~' || kind == '>');
    if (proto >= 3) return kind;
    if (kind == '%') *n *= 2;
    return '*';
}

void resp_w_agg(buf_t *b, int proto, char kind, long long n)
{
    char k = agg_kind(proto, kind, &n);
    put_hdr(b, k, n);
}

void resp_w_double(buf_t *b, int proto, double d)
{
    char tmp[64];
    int n;
    if (isinf(d))
        n = (int)strlen(strcpy(tmp, d > 0 ? "inf" : "-inf"));
    else if (isnan(d))
        n = (int)strlen(strcpy(tmp, "nan"));
    else
        n = snprintf(tmp, sizeof tmp, "%.17g", d);
    assert(n > 0 && (size_t)n < sizeof tmp);
    if (proto >= 3)
        put_line(b, ',', tmp, (size_t)n);
    else
        resp_w_bulk(b, tmp, (size_t)n);
}

void resp_w_bool(buf_t *b, int proto, int v)
{
    if (proto >= 3)
        buf_append(b, v ? "#t\r\n" : "#f\r\n", 4);
    else
        buf_append(b, v ? ":1\r\n" : ":0\r\n", 4);
}

void resp_w_verbatim(buf_t *b, int proto, const char *ext, const char *p, size_t len)
{
    if (proto < 3) {
        resp_w_bulk(b, p, len);
        return;
    }
    reserve(b, HDR_MAX + 4 + len + 2);
    char *d = b->data + b->len;
    size_t n = fmt_hdr(d, '=', (long long)(len + 4));
    memcpy(d + n, ext, 3);
    d[n + 3] = ':';
    if (len) memcpy(d + n + 4, p, len);
    d[n + 4 + len] = '\r';
    d[n + 5 + len] = '\n';
    b->len += n + len + 6;
    b->data[b->len] = '\0';
}

size_t resp_w_agg_defer(buf_t *b)
{
    return b->len;
}

void resp_w_agg_finish(buf_t *b, size_t off, int proto, char kind, long long n)
{
    assert(off <= b->len);
    char hdr[HDR_MAX];
    char k = agg_kind(proto, kind, &n);
    buf_insert(b, off, hdr, fmt_hdr(hdr, k, n));
}
