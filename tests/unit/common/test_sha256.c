/* Tests for common/sha256.c against the FIPS 180-4 / NIST example vectors. */
#include "common/sha256.h"

#include <criterion/criterion.h>
#include <string.h>

static const char *hex_of(const char *s)
{
    static char hex[SHA256_HEX_LEN + 1];
    sha256_hex(s, strlen(s), hex);
    return hex;
}

Test(sha256, empty_string)
{
    cr_assert_str_eq(hex_of(""),
                     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

Test(sha256, abc)
{
    cr_assert_str_eq(hex_of("abc"),
                     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

Test(sha256, two_block_message)
{
    cr_assert_str_eq(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    cr_assert_str_eq(
        hex_of("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnop"
               "jklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

Test(sha256, a_million_a_fed_in_odd_pieces)
{
    char chunk[997];
    memset(chunk, 'a', sizeof(chunk));
    sha256_t s;
    sha256_init(&s);
    size_t left = 1000000;
    while (left) {
        size_t n = left < sizeof(chunk) ? left : sizeof(chunk);
        sha256_update(&s, chunk, n);
        left -= n;
    }
    uint8_t d[32];
    sha256_final(&s, d);
    static const uint8_t want[32] = {0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92,
                                     0x81, 0xa1, 0xc7, 0xe2, 0x84, 0xd7, 0x3e, 0x67,
                                     0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97, 0x20, 0x0e,
                                     0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0};
    cr_assert_arr_eq(d, want, 32);
}

Test(sha256, lengths_around_the_padding_boundary)
{
    /* 55 bytes fits the length in one block, 56 needs a second one */
    char buf[64];
    memset(buf, 'a', sizeof(buf));
    char h55[65], h56[65], h64[65];
    sha256_hex(buf, 55, h55);
    sha256_hex(buf, 56, h56);
    sha256_hex(buf, 64, h64);
    cr_assert_str_eq(h55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    cr_assert_str_eq(h56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
    cr_assert_str_eq(h64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

Test(sha256, redis_password_hash)
{
    /* the hash Redis's own ACL tests use for "passwd4" */
    cr_assert_str_eq(hex_of("passwd4"),
                     "34344e4d60c2b6d639b7bd22e18f2b0b91bc34bf0ac5f9952744435093cfb4e6");
}
