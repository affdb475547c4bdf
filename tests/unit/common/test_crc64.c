/* Tests for common/crc64.c: Redis's check value, and the slice-by-8 path against a bit-at-a-time
 * reference on every length and alignment. */
#include "common/crc64.h"

#include <criterion/criterion.h>
#include <string.h>

static uint64_t crc64_bitwise(uint64_t crc, const unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ 0x95ac9329ac4bc9b5ULL : crc >> 1;
    }
    return crc;
}

Test(crc64, redis_check_value)
{
    cr_assert_eq(crc64(0, "123456789", 9), 0xe9c6d914c4b8d9caULL);
    cr_assert_eq(crc64(0, "", 0), 0);
}

Test(crc64, slices_match_the_bitwise_reference_at_every_length_and_offset)
{
    unsigned char buf[300];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 131 + 7);
    for (size_t off = 0; off < 9; off++)
        for (size_t len = 0; len + off <= sizeof buf; len += 13)
            cr_assert_eq(crc64(0, buf + off, len), crc64_bitwise(0, buf + off, len),
                         "off %zu len %zu", off, len);
}

Test(crc64, continues_across_pieces)
{
    unsigned char buf[1000];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i ^ (i >> 3));
    uint64_t whole = crc64(0, buf, sizeof buf), parts = 0;
    for (size_t at = 0; at < sizeof buf; at += 37) {
        size_t n = sizeof buf - at < 37 ? sizeof buf - at : 37;
        parts = crc64(parts, buf + at, n);
    }
    cr_assert_eq(parts, whole);
}
