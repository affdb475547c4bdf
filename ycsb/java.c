/* java.c - Java's String.hashCode, Double.toString, DecimalFormat("#.##"), numeric casts and
 * hash-table iteration order, for YCSB's keys, scores and report (see java.h).
 *
 * Double.toString: Java prints the shortest decimal that reads back as the same double (JDK
 * 19 and later exactly; earlier JDKs agree on every value YCSB prints here: integral scores
 * and throughputs). We find it by asking printf for 1, 2, ... 17 significant digits until
 * strtod gives d back, then lay the digits out as Java does: plain notation for
 * 1e-3 <= |d| < 1e7 with at least one fractional digit, else d.dddE<exp>. Pure functions, any
 * thread. Subnormals other than Double.MIN_VALUE may get other digits than a given JDK gives
 * them (JDKs disagree there too). */
#include "java.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decodes one UTF-8 sequence at s[i..len); returns the code point (U+FFFD when malformed) and
 * advances *i past it. */
static uint32_t utf8_next(const unsigned char *s, size_t len, size_t *i)
{
    unsigned char c = s[*i];
    int need = c < 0x80             ? 0
               : (c & 0xE0) == 0xC0 ? 1
               : (c & 0xF0) == 0xE0 ? 2
               : (c & 0xF8) == 0xF0 ? 3
                                    : -1;
    uint32_t cp = need == 0 ? c : need == 1 ? (c & 0x1Fu) : need == 2 ? (c & 0x0Fu) : (c & 0x07u);
    (*i)++;
    if (need < 0) return 0xFFFD;
    for (int k = 0; k < need; k++) {
        if (*i >= len || (s[*i] & 0xC0) != 0x80) return 0xFFFD;
        cp = (cp << 6) | (s[(*i)++] & 0x3Fu);
    }
    static const uint32_t min_for[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_for[need] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0xFFFD;
    return cp;
}

int32_t java_string_hash(const char *s, size_t len)
{
    return java_string_hash_more(0, s, len);
}

int32_t java_string_hash_more(int32_t h0, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    uint32_t h = (uint32_t)h0;
    size_t i = 0;
    while (i < len) {
        uint32_t cp = u[i] < 0x80 ? u[i++] : utf8_next(u, len, &i);
        if (cp >= 0x10000) { /* a surrogate pair: two UTF-16 units */
            cp -= 0x10000;
            h = h * 31u + (0xD800u + (cp >> 10));
            h = h * 31u + (0xDC00u + (cp & 0x3FFu));
        } else {
            h = h * 31u + cp;
        }
    }
    return (int32_t)h;
}

/* The shortest significant digits of finite, non-zero |d| (no sign, no point) into digits,
 * and the decimal exponent of the first digit. Returns the digit count. */
static int shortest_digits(double d, char *digits, int *exp10)
{
    char tmp[48];
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, fabs(d));
        if (strtod(tmp, NULL) == fabs(d)) break;
    }
    int n = 0;
    const char *c = tmp;
    for (; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9') digits[n++] = *c;
    *exp10 = atoi(c + 1);
    while (n > 1 && digits[n - 1] == '0') n--;
    digits[n] = '\0';
    return n;
}

size_t java_double_str(double d, char *out)
{
    if (isnan(d)) return (size_t)sprintf(out, "NaN");
    if (isinf(d)) return (size_t)sprintf(out, d > 0 ? "Infinity" : "-Infinity");
    if (d == 0) return (size_t)sprintf(out, signbit(d) ? "-0.0" : "0.0");
    char dig[24];
    int e, n = shortest_digits(d, dig, &e);
    char *o = out;
    if (d < 0) *o++ = '-';
    if (e >= -3 && e < 7) {
        if (e < 0) {
            o += sprintf(o, "0.");
            for (int z = 0; z < -e - 1; z++) *o++ = '0';
            o += sprintf(o, "%s", dig);
        } else {
            for (int i = 0; i <= e; i++) *o++ = i < n ? dig[i] : '0';
            *o++ = '.';
            if (n > e + 1)
                o += sprintf(o, "%s", dig + e + 1);
            else
                *o++ = '0';
        }
    } else {
        if (fabs(d) == 4.9e-324) { /* Double.MIN_VALUE: Java writes two digits, 4.9 */
            strcpy(dig, "49");
            n = 2;
        }
        *o++ = dig[0];
        *o++ = '.';
        o += sprintf(o, "%s", n > 1 ? dig + 1 : "0");
        o += sprintf(o, "E%d", e);
    }
    *o = '\0';
    return (size_t)(o - out);
}

size_t java_decimal2(double d, char *out)
{
    if (isnan(d)) return (size_t)sprintf(out, "NaN");
    if (isinf(d)) return (size_t)sprintf(out, d > 0 ? "\xE2\x88\x9E" : "-\xE2\x88\x9E");
    /* glibc rounds the exact binary value, ties to even: DecimalFormat's HALF_EVEN. */
    int n = snprintf(out, JAVA_DOUBLE_STR_MAX, "%.2f", d);
    if (n < 0 || n >= JAVA_DOUBLE_STR_MAX) return (size_t)sprintf(out, "%.0e", d);
    while (out[n - 1] == '0') n--;
    if (out[n - 1] == '.') n--;
    out[n] = '\0';
    return (size_t)n;
}

int64_t java_labs(int64_t v)
{
    return v < 0 ? (int64_t)(0 - (uint64_t)v) : v;
}

int64_t java_d2l(double d)
{
    if (isnan(d)) return 0;
    if (d >= 9223372036854775807.0) return INT64_MAX;
    if (d <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)d;
}

int32_t java_d2i(double d)
{
    if (isnan(d)) return 0;
    if (d >= 2147483647.0) return INT32_MAX;
    if (d <= -2147483648.0) return INT32_MIN;
    return (int32_t)d;
}

void java_hash_order(const int32_t *hash, size_t n, size_t capacity, size_t *order)
{
    /* HashMap.hash() and ConcurrentHashMap.spread() both fold the high half into the low one;
     * the bucket is the low bits. A stable insertion sort by bucket keeps insertion order
     * within a bucket (n is a handful of keys). */
    size_t mask = capacity - 1;
    for (size_t i = 0; i < n; i++) {
        uint32_t bi = ((uint32_t)hash[i] ^ ((uint32_t)hash[i] >> 16)) & mask;
        size_t j = i;
        while (j > 0) {
            uint32_t h = (uint32_t)hash[order[j - 1]];
            if (((h ^ (h >> 16)) & mask) <= bi) break;
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
}

size_t java_hashmap_capacity(size_t n)
{
    size_t cap = 16;
    while (n > cap - cap / 4) cap *= 2; /* resize() when ++size > threshold */
    return cap;
}

size_t java_hashset_capacity(size_t n)
{
    size_t want = (size_t)((float)n / .75f) + 1, cap = 1;
    if (want < 16) want = 16;
    while (cap < want) cap *= 2; /* tableSizeFor */
    return cap;
}

size_t java_chm_capacity(size_t n)
{
    size_t cap = 16;
    while (n >= cap - cap / 4) cap *= 2; /* addCount: resize once size >= sizeCtl */
    return cap;
}
