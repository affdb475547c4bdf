/* util.h - number parsing and formatting with Redis's exact rules, time, randomness.
 *
 * The parsers are strict the way Redis's are: no leading or trailing space, no "+" sign on
 * integers, no leading zeros ("01" is not an integer), nothing past the number. */
#ifndef CTE_COMMON_UTIL_H
#define CTE_COMMON_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* 1 and *out on success, 0 if s[0..len) is not a base-10 int64 (Redis's string2ll). */
int str_to_ll(const char *s, size_t len, long long *out);
/* Writes v in base 10 into dst (>= 21 bytes), returns the length; no NUL. */
size_t ll_to_str(char *dst, long long v);
size_t ull_to_str(char *dst, unsigned long long v);
/* A double as Redis's string2d: strtod over the whole string, no spaces, NaN refused.
 * "inf", "+inf", "-inf" are accepted. */
int str_to_d(const char *s, size_t len, double *out);
/* A long double as Redis's string2ld (INCRBYFLOAT). */
int str_to_ld(const char *s, size_t len, long double *out);
/* Formats a long double as Redis's ld2string in human-friendly mode (INCRBYFLOAT's reply:
 * "%.17Lf" with trailing zeros and a trailing dot removed). Returns length, 0 on NaN/inf. */
size_t ld_to_str(char *dst, size_t cap, long double v);
/* Formats a double as "%.17g" (Redis 7.0's reply format for scores). */
size_t d_to_str(char *dst, size_t cap, double v);

/* Wall-clock Unix time in milliseconds and microseconds. */
/* memcpy for large copies whose destination will not be read soon (a blob written into the RAM
 * tier): at least COPY_STREAM_MIN bytes go with non-temporal stores where the CPU has them,
 * which skip reading the destination into the cache and evicting what is there. */
#define COPY_STREAM_MIN (256 * 1024)
void copy_stream(void *dst, const void *src, size_t n);

long long time_ms(void);
long long time_us(void);
/* Monotonic clock in microseconds. */
uint64_t mono_us(void);

/* Fills p with random bytes from the kernel (falls back to a time-seeded PRNG). */
void random_bytes(void *p, size_t n);
/* A fast PRNG for sampling (not for secrets). Thread-local state. */
uint64_t rand_u64(void);

/* Case-insensitive comparison of s[0..len) with the C string lit. */
int str_eq_nocase(const char *s, size_t len, const char *lit);

#endif
