/* Tests for common/listpack.c: the bytes equal Redis 7.0's for the same entries (REDIS_LP_HEX
 * is the listpack inside a DUMP of "RPUSH l <VALUES...>" taken from redis-server 7.0.15 with
 * rdbcompression off), iteration both ways, mutation, and validation of hostile bytes. */
#include "common/listpack.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *VALUES[] = {
    "a", "1", "-1", "127", "128", "-4096", "4095", "4096", "-4097", "32767", "-32769",
    "8388607", "8388608", "-8388609", "2147483647", "2147483648", "-9223372036854775808",
    "9223372036854775807", "01", "-0", "+5", "12345678901234567890",
    NULL, NULL, NULL, /* 63 x, 64 y, 200 v: filled by values() */
    "",
};
#define NVALUES (sizeof VALUES / sizeof VALUES[0])

static const char *REDIS_LP_HEX =
    "d40100001a008161020101dfff027f01c08002d00002cfff02f1001003f1ffef03f1ff7f03f2ff7fff04f2ffff7f04f3"
    "0000800005f3ffff7fff05f3ffffff7f05f4000000800000000009f4000000000000008009f4ffffffffffffff7f0982"
    "303103822d3003822b350394313233343536373839303132333435363738393015bf7878787878787878787878787878"
    "787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878"
    "7840e0407979797979797979797979797979797979797979797979797979797979797979797979797979797979797979"
    "797979797979797979797979797979797979797942e0c876767676767676767676767676767676767676767676767676"
    "767676767676767676767676767676767676767676767676767676767676767676767676767676767676767676767676"
    "767676767676767676767676767676767676767676767676767676767676767676767676767676767676767676767676"
    "767676767676767676767676767676767676767676767676767676767676767676767676767676767676767676767676"
    "7676767676767676767676767676767676767676767676767676767676767601ca8001ff";

static char xs[64], ys[65], vs[201];

static void values(void)
{
    memset(xs, 'x', 63);
    memset(ys, 'y', 64);
    memset(vs, 'v', 200);
    VALUES[22] = xs;
    VALUES[23] = ys;
    VALUES[24] = vs;
}

static unsigned char *from_hex(const char *h, size_t *n)
{
    *n = strlen(h) / 2;
    unsigned char *b = malloc(*n);
    for (size_t i = 0; i < *n; i++)
        sscanf(h + 2 * i, "%2hhx", &b[i]);
    return b;
}

static unsigned char *build(void)
{
    values();
    unsigned char *lp = lp_new(0);
    for (size_t i = 0; i < NVALUES; i++)
        lp = lp_append(lp, VALUES[i], strlen(VALUES[i]));
    return lp;
}

Test(listpack, bytes_equal_redis)
{
    size_t n;
    unsigned char *want = from_hex(REDIS_LP_HEX, &n);
    unsigned char *lp = build();
    cr_assert_eq(lp_bytes(lp), n);
    cr_assert(memcmp(lp, want, n) == 0, "listpack bytes differ from Redis's");
    uint32_t count;
    cr_assert(lp_validate(want, n, &count));
    cr_assert_eq(count, NVALUES);
    lp_free(lp);
    free(want);
}

Test(listpack, iterates_both_ways)
{
    unsigned char *lp = build();
    cr_assert_eq(lp_length(lp), NVALUES);
    char buf[24];
    uint32_t len;
    size_t i = 0;
    for (unsigned char *p = lp_first(lp); p; p = lp_next(lp, p), i++) {
        const unsigned char *t = lp_get_text(p, &len, buf);
        cr_assert_eq(len, strlen(VALUES[i]));
        cr_assert(memcmp(t, VALUES[i], len) == 0, "entry %zu", i);
        cr_assert(lp_equals(p, VALUES[i], strlen(VALUES[i])));
    }
    cr_assert_eq(i, NVALUES);
    for (unsigned char *p = lp_last(lp); p; p = lp_prev(lp, p)) {
        i--;
        cr_assert(lp_equals(p, VALUES[i], strlen(VALUES[i])), "backwards %zu", i);
    }
    cr_assert_eq(i, 0);
    cr_assert(lp_equals(lp_seek(lp, -1), "", 0));
    cr_assert(lp_equals(lp_seek(lp, 3), "127", 3));
    cr_assert_null(lp_seek(lp, (long)NVALUES));
    cr_assert_null(lp_seek(lp, -(long)NVALUES - 1));
    lp_free(lp);
}

Test(listpack, integers_round_trip_at_every_width)
{
    static const long long edges[] = {0, 127, 128, -1, -4096, 4095, -4097, 4096, 32767, -32768,
                                      32768, -32769, 8388607, -8388608, 8388608, 2147483647,
                                      -2147483648LL, 2147483648LL, INT64_MAX, INT64_MIN};
    unsigned char *lp = lp_new(0);
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++)
        lp = lp_append_int(lp, edges[i]);
    size_t i = 0;
    for (unsigned char *p = lp_first(lp); p; p = lp_next(lp, p), i++) {
        long long v;
        uint32_t len;
        cr_assert_null(lp_get(p, &len, &v));
        cr_assert_eq(v, edges[i]);
    }
    cr_assert(lp_validate(lp, lp_bytes(lp), NULL));
    lp_free(lp);
}

Test(listpack, insert_replace_delete)
{
    unsigned char *lp = lp_new(0), *p;
    lp = lp_append(lp, "b", 1);
    lp = lp_append(lp, "d", 1);
    lp = lp_insert(lp, lp_first(lp), "a", 1, &p);
    cr_assert(lp_equals(p, "a", 1));
    lp = lp_insert(lp, lp_seek(lp, 2), "c", 1, NULL);
    lp = lp_insert_int(lp, lp + lp_bytes(lp) - 1, 5, NULL); /* at the terminator: appends */
    cr_assert_eq(lp_length(lp), 5);
    const char *want = "abcd5";
    for (int i = 0; i < 5; i++)
        cr_assert(lp_equals(lp_seek(lp, i), want + i, 1));
    char big[5000];
    memset(big, 'q', sizeof big);
    lp = lp_replace(lp, lp_seek(lp, 1), big, sizeof big, &p);
    cr_assert(lp_equals(p, big, sizeof big));
    cr_assert(lp_equals(lp_next(lp, p), "c", 1));
    cr_assert(lp_equals(lp_prev(lp, p), "a", 1));
    lp = lp_replace_int(lp, p, -70000, &p);
    long long v;
    uint32_t len;
    cr_assert_null(lp_get(p, &len, &v));
    cr_assert_eq(v, -70000);
    lp = lp_delete(lp, lp_seek(lp, 1), 2, &p);
    cr_assert(lp_equals(p, "d", 1));
    cr_assert_eq(lp_length(lp), 3);
    lp = lp_delete(lp, lp_seek(lp, 1), 10, &p);
    cr_assert_null(p);
    cr_assert_eq(lp_length(lp), 1);
    cr_assert_eq(lp_bytes(lp), 7 + 3);
    cr_assert(lp_validate(lp, lp_bytes(lp), NULL));
    lp_free(lp);
}

Test(listpack, long_strings_use_wider_headers_and_backlens)
{
    static char s[70000];
    memset(s, 's', sizeof s);
    size_t sizes[] = {4095, 4096, 16383, 70000};
    for (size_t i = 0; i < 4; i++) {
        unsigned char *lp = lp_append(lp_new(0), s, sizes[i]);
        lp = lp_append(lp, "z", 1);
        unsigned char *p = lp_first(lp);
        cr_assert_eq(p[0], sizes[i] < 4096 ? 0xE0 | (sizes[i] >> 8) : 0xF0);
        cr_assert(lp_equals(p, s, sizes[i]));
        cr_assert_eq(lp_prev(lp, lp_last(lp)), p, "backlen of a %zu-byte string", sizes[i]);
        cr_assert(lp_validate(lp, lp_bytes(lp), NULL));
        lp_free(lp);
    }
}

Test(listpack, count_saturates_at_65535)
{
    unsigned char *lp = lp_new(0);
    for (int i = 0; i < 70000; i++)
        lp = lp_append_int(lp, i);
    cr_assert_eq(lp[4] | lp[5] << 8, 65535);
    cr_assert_eq(lp_length(lp), 70000);
    long long v;
    uint32_t len;
    lp_get(lp_seek(lp, 69999), &len, &v);
    cr_assert_eq(v, 69999);
    uint32_t n;
    cr_assert(lp_validate(lp, lp_bytes(lp), &n));
    cr_assert_eq(n, 70000);
    lp_free(lp);
}

Test(listpack, validate_rejects_every_truncation_and_corruption)
{
    unsigned char *lp = build();
    size_t n = lp_bytes(lp);
    unsigned char *copy = malloc(n);
    for (size_t cut = 0; cut < n; cut++) { /* a shorter buffer with a patched total */
        memcpy(copy, lp, cut);
        if (cut >= 4) {
            copy[0] = cut & 0xff, copy[1] = (cut >> 8) & 0xff, copy[2] = 0, copy[3] = 0;
            if (cut > 0)
                copy[cut - 1] = LP_EOF;
        }
        cr_assert_not(lp_validate(copy, cut, NULL), "truncated to %zu", cut);
    }
    /* every single-byte change is either rejected or still walks inside the buffer */
    for (size_t i = 0; i < n; i++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(copy, lp, n);
            copy[i] ^= (unsigned char)(1 << bit);
            uint32_t count;
            if (lp_validate(copy, n, &count)) {
                uint32_t walked = 0;
                for (unsigned char *p = lp_first(copy); p; p = lp_next(copy, p))
                    walked++;
                cr_assert_eq(walked, count);
            }
        }
    }
    free(copy);
    lp_free(lp);
    static const unsigned char bad_enc[] = {8, 0, 0, 0, 1, 0, 0xF5, 0xFF};
    cr_assert_not(lp_validate(bad_enc, sizeof bad_enc, NULL));
    static const unsigned char bad_count[] = {9, 0, 0, 0, 2, 0, 0x05, 0x01, 0xFF};
    cr_assert_not(lp_validate(bad_count, sizeof bad_count, NULL));
    static const unsigned char ok[] = {9, 0, 0, 0, 1, 0, 0x05, 0x01, 0xFF};
    cr_assert(lp_validate(ok, sizeof ok, NULL));
}
