/* util.c - number parsing/formatting with Redis's rules, clocks, randomness. */
#include "common/util.h"

#include "common/alloc.h"

#include <ctype.h>
#include <limits.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

int str_to_ll(const char *s, size_t len, long long *out)
{
    const char *p = s;
    size_t n = len;
    int neg = 0;
    unsigned long long v;
    if (n == 0 || n > 20) return 0;
    if (n == 1 && p[0] == '0') {
        *out = 0;
        return 1;
    }
    if (p[0] == '-') {
        neg = 1;
        p++;
        n--;
        if (n == 0) return 0;
    }
    if (p[0] < '1' || p[0] > '9') return 0;
    v = (unsigned long long)(p[0] - '0');
    for (size_t i = 1; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        if (v > ULLONG_MAX / 10) return 0;
        v *= 10;
        unsigned long long d = (unsigned long long)(p[i] - '0');
        if (v > ULLONG_MAX - d) return 0;
        v += d;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1) return 0;
        *out = (long long)(0 - v);
    } else {
        if (v > (unsigned long long)LLONG_MAX) return 0;
        *out = (long long)v;
    }
    return 1;
}

size_t ull_to_str(char *dst, unsigned long long v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) dst[i] = tmp[n - 1 - i];
    return n;
}

size_t ll_to_str(char *dst, long long v)
{
    if (v < 0) {
        dst[0] = '-';
        return 1 + ull_to_str(dst + 1, 0ull - (unsigned long long)v);
    }
    return ull_to_str(dst, (unsigned long long)v);
}

int str_to_d(const char *s, size_t len, double *out)
{
    /* any length, as Redis's strtod on the whole argument: DBL_MAX written out in full has
     * 309 digits; a copy of a long one is as large as the argument already in memory */
    char small[256], *buf = len < sizeof(small) ? small : xmalloc(len + 1);
    int ok = 0;
    if (len == 0 || isspace((unsigned char)s[0])) goto done;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if ((size_t)(end - buf) != len || isnan(v)) goto done;
    if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0)) goto done;
    *out = v;
    ok = 1;
done:
    if (buf != small) xfree(buf);
    return ok;
}

int str_to_ld(const char *s, size_t len, long double *out)
{
    char buf[5600];
    if (len == 0 || len >= sizeof(buf)) return 0;
    if (isspace((unsigned char)s[0])) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long double v = strtold(buf, &end);
    if ((size_t)(end - buf) != len || isnan(v)) return 0;
    if (errno == ERANGE) return 0;
    *out = v;
    return 1;
}

size_t ld_to_str(char *dst, size_t cap, long double v)
{
    if (isinf(v) || isnan(v)) return 0;
    int n = snprintf(dst, cap, "%.17Lf", v);
    if (n <= 0 || (size_t)n >= cap) return 0;
    if (strchr(dst, '.')) {
        while (n > 0 && dst[n - 1] == '0') n--;
        if (n > 0 && dst[n - 1] == '.') n--;
    }
    if (n == 2 && dst[0] == '-' && dst[1] == '0') {
        dst[0] = '0';
        n = 1;
    }
    dst[n] = '\0';
    return (size_t)n;
}

size_t d_to_str(char *dst, size_t cap, double v)
{
    int n;
    if (isinf(v)) n = snprintf(dst, cap, "%s", v > 0 ? "inf" : "-inf");
    else n = snprintf(dst, cap, "%.17g", v);
    return n < 0 ? 0 : (size_t)n;
}

long long time_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long time_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

uint64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

void random_bytes(void *p, size_t n)
{
    if (getrandom(p, n, 0) == (ssize_t)n) return;
    uint64_t s = (uint64_t)time_us() ^ (uint64_t)(uintptr_t)p;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        ((unsigned char *)p)[i] = (unsigned char)(s >> 56);
    }
}

uint64_t rand_u64(void)
{
    static _Thread_local uint64_t s;
    if (s == 0) {
        random_bytes(&s, sizeof(s));
        s |= 1;
    }
    uint64_t x = s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s = x;
    return x * 0x2545f4914f6cdd1dull;
}

int str_eq_nocase(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    return n == len && strncasecmp(s, lit, len) == 0;
}

#if defined(__x86_64__)
#include <emmintrin.h>

void copy_stream(void *dst, const void *src, size_t n)
{
    if (n < COPY_STREAM_MIN) {
        memcpy(dst, src, n);
        return;
    }
    char *d = dst;
    const char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15; /* stream stores need 16-byte alignment */
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s), b = _mm_loadu_si128((const __m128i *)(s + 16)),
                c = _mm_loadu_si128((const __m128i *)(s + 32)), e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    _mm_sfence(); /* the streamed bytes are visible before anything that follows */
    memcpy(d, s, n);
}
#else
void copy_stream(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}
#endif
