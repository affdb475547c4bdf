/* test_hll.c - storage/hll.c: the exact bytes and counts redis-server 7.0.15 produces for the
 * same elements (sparse and dense, before and after the cardinality cache is filled; digests
 * taken from Debian's redis-server), register packing, the sparse update against a model of
 * plain registers (including the promotion to dense at the size limit and for values over 32),
 * merging, PFDEBUG DECODE's text, and hostile values: random opcode bytes after a valid header
 * must give an answer or HLL_ERR_INVALID, never a read or write out of bounds (run it under
 * the ASan build), and a cut XZERO behaves as in Redis, byte past the end included. */
#include "storage/hll.h"

#include "common/sha256.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BYTES HLL_SPARSE_MAX_BYTES_DEFAULT

static void setup(void)
{
    srand(20261202);
}

TestSuite(hll, .init = setup);

static const uint8_t *bytes(const str_obj_t *s)
{
    return (const uint8_t *)s->data;
}

static void add_str(str_obj_t **s, const char *ele, size_t max)
{
    cr_assert_geq(hll_add(s, ele, strlen(ele), max), 0);
}

/* PFADD of the decimal strings 0..n-1, in batches as a client would send them. */
static str_obj_t *hll_of_numbers(int n)
{
    str_obj_t *s = hll_new();
    char buf[24];
    for (int i = 0; i < n; i++) {
        snprintf(buf, sizeof(buf), "%d", i);
        add_str(&s, buf, MAX_BYTES);
    }
    hll_cache_invalidate((uint8_t *)s->data); /* PFADD invalidates once it changed anything */
    return s;
}

static void assert_digest(const str_obj_t *s, const char *want)
{
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex(s->data, s->len, hex);
    cr_assert_str_eq(hex, want);
}

/* Counts as PFCOUNT does: the cache if valid, else a fresh estimate written into it. */
static uint64_t pfcount(str_obj_t *s)
{
    uint64_t card;
    if (hll_cache_get(bytes(s), &card)) return card;
    int invalid = 0;
    card = hll_count(bytes(s), s->len, &invalid);
    cr_assert_eq(invalid, 0);
    hll_cache_set((uint8_t *)s->data, card);
    return card;
}

Test(hll, new_value_is_the_empty_sparse_redis_creates)
{
    str_obj_t *s = hll_new();
    static const uint8_t want[] = {'H', 'Y', 'L', 'L', 1, 0, 0, 0,    0,
                                   0,   0,   0,   0,   0, 0, 0, 0x7f, 0xff};
    cr_assert_eq(s->len, sizeof(want));
    cr_assert_arr_eq(s->data, want, sizeof(want));
    cr_assert(hll_is_valid(s->data, s->len));
    cr_assert_eq(pfcount(s), 0);
    obj_free(&s->h);
}

Test(hll, pfadd_a_b_c_gives_redis_bytes)
{
    str_obj_t *s = hll_new();
    add_str(&s, "a", MAX_BYTES);
    add_str(&s, "b", MAX_BYTES);
    add_str(&s, "c", MAX_BYTES);
    static const uint8_t want[] = {'H',  'Y',  'L',  'L',  1,    0,    0,    0,    0,
                                   0,    0,    0,    0,    0,    0,    0x80, 0x60, 0xf3,
                                   0x80, 0x50, 0xb1, 0x84, 0x4b, 0xfb, 0x80, 0x42, 0x5a};
    cr_assert_eq(s->len, sizeof(want));
    cr_assert_arr_eq(s->data, want, sizeof(want));
    char text[128];
    size_t n = hll_sparse_decode(bytes(s), s->len, text, sizeof(text));
    cr_assert_eq(n, strlen("Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603"));
    text[n] = '\0';
    cr_assert_str_eq(text, "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603");
    cr_assert_eq(pfcount(s), 3);
    cr_assert_eq(s->data[8], 3); /* the cache, little endian, valid */
    cr_assert_eq((uint8_t)s->data[15], 0);
    obj_free(&s->h);
}

Test(hll, sparse_values_match_redis_byte_for_byte)
{
    str_obj_t *s = hll_of_numbers(100);
    cr_assert_eq(s->len, 287);
    assert_digest(s, "43eee32ce3b8490b151c1dc654be64efd0f0cd1bee86729a396766af39d27501");
    cr_assert_eq(pfcount(s), 100);
    assert_digest(s, "2473556c4cfaa6e01dd62571918dbd2270532e03c2f4b564f0a5124a7ed229c0");
    obj_free(&s->h);

    s = hll_of_numbers(1000);
    cr_assert_eq(s->len, 1923);
    assert_digest(s, "69f56acb25eb29c671c402490a3f48ced31626444549899df85500aa1545d08f");
    cr_assert_eq(pfcount(s), 1001);
    assert_digest(s, "7aba7a1e51e42bb6394317e057e944f80a42330cb58e14380ab40e4ba864bc39");
    obj_free(&s->h);
}

Test(hll, dense_values_match_redis_byte_for_byte)
{
    str_obj_t *s = hll_of_numbers(20000);
    cr_assert_eq(s->len, HLL_DENSE_SIZE);
    cr_assert_eq(hll_encoding_of(s->data), HLL_DENSE);
    assert_digest(s, "a01c9c22ff29b51accaf3c8817e7093e2cd93b58f84587be6018535431ebee56");
    cr_assert_eq(pfcount(s), 19891);
    assert_digest(s, "a6e72e9a6cbb19d903126e72ed8ced1a0777787e8c85898ea8d78eacf90980ab");
    obj_free(&s->h);
}

Test(hll, header_checks_follow_redis)
{
    str_obj_t *s = hll_new();
    cr_assert_not(hll_is_valid(s->data, 15));
    s->data[0] = 'h';
    cr_assert_not(hll_is_valid(s->data, s->len));
    s->data[0] = 'H';
    s->data[4] = 2;
    cr_assert_not(hll_is_valid(s->data, s->len));
    s->data[4] = HLL_DENSE; /* a dense value must be exactly 12304 bytes */
    cr_assert_not(hll_is_valid(s->data, s->len));
    s->data[4] = HLL_SPARSE;
    cr_assert(hll_is_valid(s->data, HLL_HDR_SIZE)); /* opcodes are checked when used */
    obj_free(&s->h);
}

Test(hll, dense_registers_keep_their_neighbours)
{
    uint8_t regs[HLL_DENSE_SIZE - HLL_HDR_SIZE + 1];
    uint8_t model[HLL_REGISTERS];
    memset(regs, 0, sizeof(regs));
    regs[sizeof(regs) - 1] = 0xa5; /* a canary past the registers */
    for (int round = 0; round < 20; round++) {
        for (uint32_t i = 0; i < HLL_REGISTERS; i++) {
            model[i] = (uint8_t)(rand() & HLL_REGISTER_MAX);
            hll_dense_set(regs, i, model[i]);
        }
        for (uint32_t i = 0; i < HLL_REGISTERS; i++) cr_assert_eq(hll_dense_get(regs, i), model[i]);
    }
    cr_assert_eq(regs[sizeof(regs) - 1], 0xa5);
}

/* The registers of any valid value, one byte each. */
static void registers_of(const str_obj_t *s, uint8_t out[HLL_REGISTERS])
{
    memset(out, 0, HLL_REGISTERS);
    cr_assert_eq(hll_merge(out, bytes(s), s->len), 0);
}

Test(hll, sparse_updates_agree_with_a_register_model)
{
    for (int round = 0; round < 30; round++) {
        size_t max = round % 3 == 0 ? 300 : MAX_BYTES;
        uint8_t model[HLL_REGISTERS], got[HLL_REGISTERS];
        memset(model, 0, sizeof(model));
        str_obj_t *s = hll_new();
        int n = rand() % 4000;
        for (int j = 0; j < n; j++) {
            uint32_t index = (uint32_t)rand() % HLL_REGISTERS;
            uint8_t count = (uint8_t)(1 + (rand() % 100 == 0 ? rand() % 51 : rand() % 5));
            int rc = hll_set(&s, index, count, max);
            cr_assert_eq(rc, count > model[index], "set %u to %u", index, count);
            if (count > model[index]) model[index] = count;
            if (hll_encoding_of(s->data) == HLL_SPARSE) cr_assert_leq(s->len, max);
            cr_assert_eq(s->data[s->len], '\0');
        }
        registers_of(s, got);
        cr_assert_arr_eq(got, model, sizeof(model));
        /* the estimate depends on the registers only, not on the encoding */
        uint64_t before = hll_count(bytes(s), s->len, NULL);
        cr_assert_eq(hll_to_dense(&s), 0);
        cr_assert_eq(hll_count(bytes(s), s->len, NULL), before);
        cr_assert_eq(hll_count_registers(model), before);
        obj_free(&s->h);
    }
}

Test(hll, a_value_over_32_makes_the_value_dense)
{
    str_obj_t *s = hll_new();
    cr_assert_eq(hll_set(&s, 7, 32, MAX_BYTES), 1);
    cr_assert_eq(hll_encoding_of(s->data), HLL_SPARSE);
    cr_assert_eq(hll_set(&s, 9, 33, MAX_BYTES), 1);
    cr_assert_eq(hll_encoding_of(s->data), HLL_DENSE);
    cr_assert_eq(s->len, HLL_DENSE_SIZE);
    const uint8_t *regs = bytes(s) + HLL_HDR_SIZE;
    cr_assert_eq(hll_dense_get(regs, 7), 32);
    cr_assert_eq(hll_dense_get(regs, 9), 33);
    cr_assert_eq(hll_set(&s, 9, 20, MAX_BYTES), 0);
    obj_free(&s->h);
}

Test(hll, merging_takes_the_maximum_of_each_register)
{
    str_obj_t *a = hll_new(), *b = hll_new();
    hll_set(&a, 1, 5, MAX_BYTES);
    hll_set(&a, 2, 1, MAX_BYTES);
    hll_set(&b, 2, 7, MAX_BYTES);
    cr_assert_eq(hll_to_dense(&b), 0);
    uint8_t max[HLL_REGISTERS];
    memset(max, 0, sizeof(max));
    cr_assert_eq(hll_merge(max, bytes(a), a->len), 0);
    cr_assert_eq(hll_merge(max, bytes(b), b->len), 0);
    cr_assert_eq(max[1], 5);
    cr_assert_eq(max[2], 7);
    cr_assert_eq(max[3], 0);
    obj_free(&a->h);
    obj_free(&b->h);
}

/* A header followed by the given opcode bytes. */
static str_obj_t *with_opcodes(const uint8_t *ops, size_t n)
{
    str_obj_t *s = str_new(NULL, HLL_HDR_SIZE + n);
    memcpy(s->data, "HYLL\x01", 5);
    s->data[15] = (char)0x80;
    if (n) memcpy(s->data + HLL_HDR_SIZE, ops, n);
    return s;
}

Test(hll, corrupted_runs_are_reported)
{
    static const struct {
        uint8_t ops[6];
        size_t n;
    } bad[] = {
        {{0}, 0},                      /* no opcodes */
        {{0x7f, 0xff, 0x00}, 3},       /* XZERO:16384 ZERO:1 */
        {{0x7f, 0xff, 0x80}, 3},       /* XZERO:16384 VAL:1,1 */
        {{0x80, 0x7f, 0xff}, 3},       /* VAL:1,1 XZERO:16384 */
        {{0x7f, 0xfe, 0x81}, 3},       /* XZERO:16383 VAL:1,2 */
        {{0x7f}, 1},                   /* XZERO cut by the end: reads 0x7f00 + 1 */
        {{0x7f, 0xfb, 0x03, 0x84}, 4}, /* XZERO:16380 ZERO:4 VAL:2,1 */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        str_obj_t *s = with_opcodes(bad[i].ops, bad[i].n);
        uint8_t max[HLL_REGISTERS] = {0};
        int invalid = 0;
        uint64_t card = hll_count(bytes(s), s->len, &invalid);
        cr_assert_eq(invalid, 1, "case %zu", i);
        if (bad[i].n == 0) cr_assert_eq(card, 0); /* no register at all: defined, never shown */
        cr_assert_eq(hll_merge(max, bytes(s), s->len), HLL_ERR_INVALID, "case %zu", i);
        cr_assert_eq(hll_to_dense(&s), HLL_ERR_INVALID, "case %zu", i);
        cr_assert_eq(hll_encoding_of(s->data), HLL_SPARSE);
        obj_free(&s->h);
    }
}

Test(hll, xzero_cut_by_the_end_decodes_as_redis_reads_it)
{
    static const uint8_t ops[] = {0x7f};
    str_obj_t *s = with_opcodes(ops, 1);
    char text[32];
    size_t n = hll_sparse_decode(bytes(s), s->len, text, sizeof(text));
    text[n] = '\0';
    cr_assert_str_eq(text, "Z:16129");
    /* an index inside the cut run is updated like Redis does; past it the value is invalid */
    cr_assert_eq(hll_set(&s, 16200, 1, MAX_BYTES), HLL_ERR_INVALID);
    cr_assert_eq(hll_set(&s, 5, 1, MAX_BYTES), 1);
    obj_free(&s->h);
}

/* Splitting an XZERO cut by the end writes its last byte into the slot past the end, where
 * Redis leaves it too (it sets the terminator, then copies the opcodes over it): later reads of
 * the cut opcode see that byte. */
Test(hll, a_split_cut_xzero_leaves_its_low_byte_past_the_end)
{
    static const uint8_t ops[] = {0x43, 0xe7, 0x4b}; /* Z:1000, then XZERO 0x4b cut: Z:2817 */
    str_obj_t *s = with_opcodes(ops, sizeof(ops));
    cr_assert_eq(hll_set(&s, 1005, 1, MAX_BYTES), 1);
    static const uint8_t want[] = {0x43, 0xe7, 0x04, 0x80, 0x4a}; /* Z:1000 z:5 v:1,1 + cut */
    cr_assert_eq(s->len, HLL_HDR_SIZE + sizeof(want));
    cr_assert_arr_eq(s->data + HLL_HDR_SIZE, want, sizeof(want));
    cr_assert_eq((uint8_t)s->data[s->len], 0xfa); /* (3816 - 1005 - 1) & 0xff */
    char text[64];
    size_t n = hll_sparse_decode(bytes(s), s->len, text, sizeof(text));
    text[n] = '\0';
    cr_assert_str_eq(text, "Z:1000 z:5 v:1,1 Z:2811");
    obj_free(&s->h);
}

/* Random opcode bytes, then every operation: answers or HLL_ERR_INVALID, no crash; a dense
 * result has its exact size. ASan checks the bounds. */
Test(hll, random_opcodes_never_escape_the_value)
{
    for (int round = 0; round < 3000; round++) {
        size_t n = (size_t)(rand() % 64);
        uint8_t ops[64];
        for (size_t i = 0; i < n; i++) ops[i] = (uint8_t)rand();
        if (round % 4 == 0 && n >= 2) { /* mostly-valid runs with one damaged byte */
            ops[0] = 0x7f;
            ops[1] = 0xff;
        }
        str_obj_t *s = with_opcodes(ops, n);
        uint8_t max[HLL_REGISTERS] = {0};
        hll_count(bytes(s), s->len, NULL);
        hll_merge(max, bytes(s), s->len);
        char text[64 * 8];
        cr_assert_leq(hll_sparse_decode(bytes(s), s->len, text, sizeof(text)), n * 8);
        for (int k = 0; k < 20; k++) {
            int rc = hll_set(&s, (uint32_t)rand() % HLL_REGISTERS, (uint8_t)(1 + rand() % 40),
                             k % 2 ? 40 : MAX_BYTES);
            cr_assert(rc == 0 || rc == 1 || rc == HLL_ERR_INVALID, "rc %d", rc);
            if (hll_encoding_of(s->data) == HLL_DENSE) cr_assert_eq(s->len, HLL_DENSE_SIZE);
        }
        obj_free(&s->h);
    }
}

Test(hll, estimates_stay_close_and_the_self_test_passes)
{
    char err[256] = "";
    cr_assert_eq(hll_selftest(MAX_BYTES, err, sizeof(err)), 0, "%s", err);
    uint8_t none[HLL_REGISTERS] = {0};
    cr_assert_eq(hll_count_registers(none), 0);
}

Test(hll, murmur_is_redis_murmur64a)
{
    /* the registers "a", "b" and "c" land in (see the decode above) */
    uint32_t ia, ib, ic;
    int ca = hll_pattern("a", 1, &ia), cb = hll_pattern("b", 1, &ib), cc = hll_pattern("c", 1, &ic);
    uint32_t idx[3] = {ia, ib, ic};
    int cnt[3] = {ca, cb, cc};
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        if (idx[i] == 8436 && cnt[i] == 1) seen |= 1;
        if (idx[i] == 12711 && cnt[i] == 2) seen |= 2;
        if (idx[i] == 15780 && cnt[i] == 1) seen |= 4;
    }
    cr_assert_eq(seen, 7);
    cr_assert_eq(hll_murmur64a("", 0, 0), 0);
}
