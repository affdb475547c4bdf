/* Tests for common/lzf.c: outputs equal to what Redis's bundled liblzf 3.6 writes (vectors taken
 * from it with Redis's lzfP.h settings), round trips, the out_len bound Redis passes, and the
 * decompressor refusing malformed input. */
#include "common/lzf.h"

#include <criterion/criterion.h>
#include <string.h>

static void expect_redis_bytes(const char *in, size_t n, const char *want, size_t wlen)
{
    unsigned char out[512];
    size_t got = lzf_compress(in, n, out, n - 4);
    cr_assert_eq(got, wlen, "compressed size %zu, want %zu", got, wlen);
    cr_assert(memcmp(out, want, wlen) == 0);
    char back[512];
    cr_assert_eq(lzf_decompress(out, got, back, n), n);
    cr_assert(memcmp(back, in, n) == 0);
}

Test(lzf, same_bytes_as_redis_for_a_run)
{
    char x[21];
    memset(x, 'x', sizeof x);
    expect_redis_bytes(x, sizeof x, "\x01\x78\x78\xe0\x0a\x00", 6);
}

Test(lzf, same_bytes_as_redis_for_text)
{
    const char *t = "the quick brown fox jumps over the lazy dog, the quick brown fox jumps again";
    expect_redis_bytes(t, strlen(t),
                       "\x1f\x74\x68\x65\x20\x71\x75\x69\x63\x6b\x20\x62\x72\x6f\x77\x6e\x20\x66"
                       "\x6f\x78\x20\x6a\x75\x6d\x70\x73\x20\x6f\x76\x65\x72\x20\x74\x20\x1e\x08"
                       "\x6c\x61\x7a\x79\x20\x64\x6f\x67\x2c\x60\x0d\xe0\x0d\x2c\x04\x61\x67\x61"
                       "\x69\x6e",
                       56);
}

Test(lzf, same_bytes_as_redis_for_long_and_short_references)
{
    char b[300];
    for (int i = 0; i < 300; i++) b[i] = "abcab"[i % 5];
    expect_redis_bytes(b, 300, "\x05\x61\x62\x63\x61\x62\x61\xe0\xff\x04\xe1\x13\x08\x01\x61\x62",
                       16);
    for (int i = 0; i < 40; i++) b[i] = (char)('0' + (i * 7) % 10);
    expect_redis_bytes(
        b, 40, "\x0a\x30\x37\x34\x31\x38\x35\x32\x39\x36\x33\x30\xe0\x12\x09\x01\x36\x33", 18);
}

Test(lzf, incompressible_input_does_not_fit_the_bound)
{
    unsigned char in[200], out[200];
    for (int i = 0; i < 200; i++) in[i] = (unsigned char)(i * 97 + (i >> 2));
    cr_assert_eq(lzf_compress(in, sizeof in, out, sizeof in - 4), 0);
}

Test(lzf, round_trips_at_many_sizes)
{
    static unsigned char in[70000], out[72000], back[70000];
    unsigned s = 1;
    for (size_t i = 0; i < sizeof in; i++) {
        s = s * 1103515245 + 12345;
        in[i] = (s >> 16) % 3 ? (unsigned char)('a' + (s >> 20) % 4) : (unsigned char)(s >> 8);
    }
    for (size_t n = 1; n <= sizeof in; n = n * 3 + 1) {
        size_t c = lzf_compress(in, n, out, sizeof out);
        cr_assert(c > 0, "n %zu", n);
        cr_assert_eq(lzf_decompress(out, c, back, n), n);
        cr_assert(memcmp(back, in, n) == 0);
    }
}

Test(lzf, decompress_refuses_malformed_input)
{
    char out[64];
    /* a back-reference before the start */
    cr_assert_eq(lzf_decompress("\x20\x05", 2, out, sizeof out), 0);
    /* a literal run past the input */
    cr_assert_eq(lzf_decompress("\x05ab", 3, out, sizeof out), 0);
    /* output larger than the room given */
    cr_assert_eq(lzf_decompress("\x01\x78\x78\xe0\x0a\x00", 6, out, 10), 0);
    /* a long reference cut off */
    cr_assert_eq(lzf_decompress("\x00\x61\xe0", 3, out, sizeof out), 0);
}
