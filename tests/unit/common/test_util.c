/* Tests for common/util.c and common/buf.c: Redis's number rules and the byte buffer. */
#include "common/buf.h"
#include "common/util.h"

#include <criterion/criterion.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ll(const char *s, long long *v)
{
    return str_to_ll(s, strlen(s), v);
}

Test(util, str_to_ll_accepts_only_canonical_integers)
{
    long long v;
    cr_assert(ll("0", &v) && v == 0);
    cr_assert(ll("-1", &v) && v == -1);
    cr_assert(ll("9223372036854775807", &v) && v == 9223372036854775807LL);
    cr_assert(ll("-9223372036854775808", &v) && v == (-9223372036854775807LL - 1));
    cr_assert_not(ll("9223372036854775808", &v));
    cr_assert_not(ll("-9223372036854775809", &v));
    cr_assert_not(ll("01", &v));
    cr_assert_not(ll("+1", &v));
    cr_assert_not(ll(" 1", &v));
    cr_assert_not(ll("1 ", &v));
    cr_assert_not(ll("-0", &v));
    cr_assert_not(ll("", &v));
    cr_assert_not(ll("-", &v));
    cr_assert_not(ll("1e3", &v));
}

Test(util, ll_to_str_round_trips_extremes)
{
    char buf[32];
    long long vals[] = {0, 1, -1, 10, -10, 9223372036854775807LL, -9223372036854775807LL - 1};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        size_t n = ll_to_str(buf, vals[i]);
        long long back;
        cr_assert(str_to_ll(buf, n, &back));
        cr_assert_eq(back, vals[i]);
    }
}

Test(util, str_to_d_follows_redis_rules)
{
    double d;
    cr_assert(str_to_d("1.5", 3, &d) && d == 1.5);
    cr_assert(str_to_d("-5.94971599E8", 13, &d) && d == -594971599.0);
    cr_assert(str_to_d("inf", 3, &d) && d > 1e308);
    cr_assert(str_to_d("-inf", 4, &d) && d < -1e308);
    cr_assert_not(str_to_d("nan", 3, &d));
    cr_assert_not(str_to_d(" 1", 2, &d));
    cr_assert_not(str_to_d("1x", 2, &d));
    cr_assert_not(str_to_d("", 0, &d));
}

/* Redis's TCL test "zset score double range": DBL_MAX written out in full (309 digits and a
 * fraction) is a valid score. */
Test(util, str_to_d_takes_dbl_max_written_in_full)
{
    char big[400];
    double d;
    int n = snprintf(big, sizeof(big), "%.17f", DBL_MAX);
    cr_assert_gt(n, 300);
    cr_assert(str_to_d(big, (size_t)n, &d) && d == DBL_MAX);
    big[n - 1] = 'x';
    cr_assert_not(str_to_d(big, (size_t)n, &d));
}

Test(util, ld_to_str_is_human_friendly_like_incrbyfloat)
{
    char buf[64];
    cr_assert_str_eq((ld_to_str(buf, sizeof(buf), 10.5L), buf), "10.5");
    cr_assert_str_eq((ld_to_str(buf, sizeof(buf), 3.0L), buf), "3");
    cr_assert_str_eq((ld_to_str(buf, sizeof(buf), -0.0L), buf), "0");
    cr_assert_str_eq((ld_to_str(buf, sizeof(buf), 5000.0L), buf), "5000");
}

Test(buf, append_insert_consume_keep_the_nul_invariant)
{
    buf_t b;
    buf_init(&b);
    buf_append_str(&b, "world");
    buf_insert(&b, 0, "hello ", 6);
    cr_assert_str_eq(b.data, "hello world");
    buf_printf(&b, " %d", 42);
    cr_assert_str_eq(b.data, "hello world 42");
    buf_consume(&b, 6);
    cr_assert_str_eq(b.data, "world 42");
    cr_assert_eq(b.len, 8);
    for (int i = 0; i < 100000; i++) buf_push(&b, 'x');
    cr_assert_eq(b.len, 100008);
    cr_assert_eq(b.data[b.len], '\0');
    buf_clear(&b);
    cr_assert_eq(b.len, 0);
    buf_deinit(&b);
}

Test(util, copy_stream_copies_every_size_and_alignment)
{
    size_t sizes[] = {0, 1, 63, 4096, COPY_STREAM_MIN - 1, COPY_STREAM_MIN, COPY_STREAM_MIN + 77,
                      3 * COPY_STREAM_MIN + 5};
    size_t max = 3 * COPY_STREAM_MIN + 5 + 64;
    unsigned char *src = malloc(max), *dst = malloc(max);
    for (size_t i = 0; i < max; i++) src[i] = (unsigned char)(i * 7 + (i >> 9));
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (size_t da = 0; da < 17; da += 3) {
            for (size_t sa = 0; sa < 17; sa += 5) {
                size_t n = sizes[k];
                memset(dst, 0xEE, max);
                copy_stream(dst + da, src + sa, n);
                cr_assert(memcmp(dst + da, src + sa, n) == 0, "n %zu da %zu sa %zu", n, da, sa);
                for (size_t i = 0; i < da; i++) cr_assert_eq(dst[i], 0xEE, "nothing before");
                for (size_t i = da + n; i < da + n + 32 && i < max; i++)
                    cr_assert_eq(dst[i], 0xEE, "nothing after");
            }
        }
    }
    free(src);
    free(dst);
}
