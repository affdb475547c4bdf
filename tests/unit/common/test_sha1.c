/* Tests for common/sha1.c against the FIPS 180-4 / NIST example vectors, and the hex names Redis
 * gives scripts. */
#include "common/sha1.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static const char *hex_of(const void *p, size_t len)
{
    static char hex[41];
    sha1_hex(p, len, hex);
    return hex;
}

Test(sha1, fips_vectors)
{
    cr_assert_str_eq(hex_of("", 0), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    cr_assert_str_eq(hex_of("abc", 3), "a9993e364706816aba3e25717850c26c9cd0d89d");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    cr_assert_str_eq(hex_of(two, strlen(two)), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    char *million = malloc(1000000);
    memset(million, 'a', 1000000);
    cr_assert_str_eq(hex_of(million, 1000000), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    free(million);
}

Test(sha1, padding_edges_and_binary_bytes)
{
    /* 55, 56 and 64 bytes: the length fits in the last block, or needs one more */
    char buf[64];
    memset(buf, 'a', sizeof(buf));
    cr_assert_str_eq(hex_of(buf, 55), "c1c8bbdc22796e28c0e15163d20899b65621d65a");
    cr_assert_str_eq(hex_of(buf, 56), "c2db330f6083854c99d4b5bfb6e8f29f201be699");
    cr_assert_str_eq(hex_of(buf, 64), "0098ba824b5c16427bd7a1122a5a442a25ec644d");
    /* as Redis names a script: SCRIPT LOAD "return 'loaded'" */
    cr_assert_str_eq(hex_of("return 'loaded'", 15), "b534286061d4b9e4026607613b95c06c06015ae8");
    const unsigned char bin[4] = {0, 0xff, 0x80, 0x7f};
    cr_assert_str_eq(hex_of(bin, 4), "20e828176973e578f91799f8cf0f41514b3355e9");
}
