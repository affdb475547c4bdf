/* Tests for server/persist/rdb_save.c and rdb_load.c: the bytes of Redis's string forms, DUMP
 * payloads of every type that decode to the same value in the same encoding, and hostile
 * payloads (counts and lengths that lie, LZF strings that claim too much, every single-bit
 * flip of real payloads with the CRC fixed) that end in an error, never in a crash or a huge
 * allocation. */
#include "common/buf.h"
#include "common/crc64.h"
#include "server/persist/rdb.h"
#include "storage/t_hash.h"
#include "storage/t_list.h"
#include "storage/t_set.h"
#include "storage/t_stream.h"
#include "storage/t_zset.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static void expect_string_bytes(const char *s, size_t len, const char *want, size_t wlen)
{
    buf_t b;
    buf_init(&b);
    rdb_write_string(&b, s, len, 1);
    cr_assert_eq(b.len, wlen, "'%.*s': %zu bytes, want %zu", (int)len, s, b.len, wlen);
    cr_assert(memcmp(b.data, want, wlen) == 0);
    buf_deinit(&b);
}

Test(rdb, string_forms_are_redis_s)
{
    expect_string_bytes("hello", 5, "\x05hello", 6);
    expect_string_bytes("-12", 3, "\xc0\xf4", 2);
    expect_string_bytes("12345", 5, "\xc1\x39\x30", 3);
    expect_string_bytes("-2147483648", 11, "\xc2\x00\x00\x00\x80", 5);
    expect_string_bytes("2147483648", 10,
                        "\x0a"
                        "2147483648",
                        11);
    expect_string_bytes("0123", 4,
                        "\x04"
                        "0123",
                        5);
    char x[21];
    memset(x, 'x', sizeof x);
    expect_string_bytes(x, 21, "\xc3\x06\x15\x01\x78\x78\xe0\x0a\x00", 9);
    expect_string_bytes(x, 20, "\x14xxxxxxxxxxxxxxxxxxxx", 21);
}

Test(rdb, lengths_use_the_shortest_form)
{
    buf_t b;
    buf_init(&b);
    rdb_write_len(&b, 63);
    rdb_write_len(&b, 64);
    rdb_write_len(&b, 16383);
    rdb_write_len(&b, 16384);
    rdb_write_len(&b, 1ULL << 32);
    cr_assert_eq(b.len, 1 + 2 + 2 + 5 + 9);
    cr_assert(memcmp(b.data, "\x3f\x40\x40\x7f\xff\x80\x00\x00\x40\x00\x81\x00\x00\x00\x01", 15) ==
              0);
    rdb_reader_t r = {.p = (unsigned char *)b.data, .end = (unsigned char *)b.data + b.len};
    uint64_t v[5];
    for (int i = 0; i < 5; i++) cr_assert_eq(rdbw_len(&r, &v[i]), RDB_OK);
    cr_assert(v[0] == 63 && v[1] == 64 && v[2] == 16383 && v[3] == 16384 && v[4] == 1ULL << 32);
    buf_deinit(&b);
}

/* A payload of o, decoded again: the copy, checked for type and encoding. */
static obj_t *round_trip(obj_t *o)
{
    buf_t b;
    int version;
    obj_t *back = NULL;
    buf_init(&b);
    rdb_dump(&b, o, 1);
    cr_assert(rdb_dump_verify(b.data, b.len, &version));
    cr_assert_eq(version, RDB_VERSION);
    cr_assert_eq(rdb_dump_decode(b.data, b.len, version, &back), RDB_OK);
    cr_assert_eq(back->type, o->type);
    cr_assert_eq(back->enc, o->enc, "encoding %d became %d", o->enc, back->enc);
    buf_t again;
    buf_init(&again);
    rdb_dump(&again, back, 1);
    if (o->enc != ENC_HT && o->enc != ENC_SKIPLIST) /* dict order may differ */
        cr_assert(again.len == b.len && memcmp(again.data, b.data, b.len) == 0);
    buf_deinit(&again);
    buf_deinit(&b);
    return back;
}

Test(rdb, hashes_round_trip_in_both_encodings)
{
    for (int n = 1; n <= 1000; n *= 10) {
        hash_t *h = hash_new();
        char f[32], v[64];
        for (int i = 0; i < n; i++)
            hash_set(&h, f, (size_t)snprintf(f, sizeof f, "f%d", i), v,
                     (size_t)snprintf(v, sizeof v, "%d", i * 7919));
        hash_t *back = (hash_t *)round_trip(&h->h);
        cr_assert_eq(hash_len(back), (size_t)n);
        const char *got;
        size_t glen;
        cr_assert(hash_get(back, "f0", 2, &got, &glen) && glen == 1 && got[0] == '0');
        hash_free(h);
        hash_free(back);
    }
}

Test(rdb, sets_zsets_and_lists_round_trip)
{
    set_t *s = set_new(ENC_INTSET), *t = set_new(ENC_HT);
    zset_t *z = zset_new(), *zs = zset_new();
    list_t *l = list_new();
    char m[32];
    for (int i = 0; i < 300; i++) {
        size_t n = (size_t)snprintf(m, sizeof m, "%d", i * (i % 2 ? -100003 : 3));
        set_add(s, m, n);
        char tm[40];
        set_add(t, tm, (size_t)snprintf(tm, sizeof tm, "m%s", m)); /* not an integer: stays HT */
        int out;
        zset_add(z, m, n, i / 7.0, 0, &out, NULL);
        if (i < 50) zset_add(zs, m, n, i % 5 ? i : -i * 1e300, 0, &out, NULL);
        list_push(l, LIST_TAIL, m, n);
    }
    obj_t *o[] = {&s->h, &t->h, &z->h, &zs->h, list_obj(l)};
    for (size_t i = 0; i < sizeof o / sizeof o[0]; i++) {
        obj_t *back = round_trip(o[i]);
        cr_assert_eq(obj_length(back), obj_length(o[i]));
        obj_free(back);
        obj_free(o[i]);
    }
}

/* A stream of two nodes with a tombstone and a group with two consumers, one of them idle. */
static obj_t *small_stream(void)
{
    storage_params.stream_node_max_entries = 3;
    stream_t *st = stream_new();
    stream_str_t fv[2] = {{"field", 5}, {"value", 5}};
    stream_id_t id;
    for (int i = 0; i < 5; i++) stream_append(st, fv, 1, NULL, 0, 1000 + i, &id);
    stream_delete(st, &(stream_id_t){1001, 0});
    stream_cg_t *cg = stream_cg_create(st, "grp", 3, &id, 4);
    stream_consumer_t *c = stream_consumer_create(cg, "alice", 5, 2000);
    stream_consumer_create(cg, "bob", 3, 2001);
    stream_pel_deliver(cg, c, &(stream_id_t){1002, 0}, 2002);
    stream_pel_deliver(cg, c, &(stream_id_t){1004, 0}, 2003);
    storage_params.stream_node_max_entries = 100;
    return &st->h;
}

static int decode_body(const char *body, size_t len)
{
    buf_t b;
    obj_t *o = NULL;
    buf_init(&b);
    buf_append(&b, body, len);
    buf_append(&b, "\x0a\x00", 2);
    uint64_t crc = crc64(0, b.data, b.len);
    buf_append(&b, &crc, 8); /* little endian host */
    cr_assert(rdb_dump_verify(b.data, b.len, NULL));
    int rc = rdb_dump_decode(b.data, b.len, 10, &o);
    if (o) obj_free(o);
    buf_deinit(&b);
    return rc;
}

Test(rdb, hostile_counts_and_lengths_are_errors)
{
    /* a set of 2^32 members in 3 bytes */
    cr_assert_eq(decode_body("\x02\x80\xff\xff\xff\xff\x01"
                             "a",
                             8),
                 RDB_ERR);
    /* a string longer than the payload */
    cr_assert_eq(decode_body("\x00\x40\xff"
                             "abc",
                             6),
                 RDB_ERR);
    /* an LZF string that claims 1 GiB from 6 bytes */
    cr_assert_eq(decode_body("\x00\xc3\x06\x80\x40\x00\x00\x00\x01\x78\x78\xe0\x0a\x00", 14),
                 RDB_ERR);
    /* an LZF string whose bytes expand to less than claimed */
    cr_assert_eq(decode_body("\x00\xc3\x06\x16\x01\x78\x78\xe0\x0a\x00", 10), RDB_ERR);
    /* empty collections */
    cr_assert_eq(decode_body("\x02\x00", 2), RDB_ERR_EMPTY);
    cr_assert_eq(decode_body("\x12\x00", 2), RDB_ERR_EMPTY);
    /* a duplicate hash field, a NaN score */
    cr_assert_eq(decode_body("\x04\x02\x01"
                             "a\x01"
                             "b\x01"
                             "a\x01"
                             "c",
                             10),
                 RDB_ERR);
    cr_assert_eq(decode_body("\x05\x01\x01"
                             "a\x00\x00\x00\x00\x00\x00\xf8\x7f",
                             12),
                 RDB_ERR);
    /* an intset whose size does not match its count */
    cr_assert_eq(decode_body("\x0b\x0c\x02\x00\x00\x00\x03\x00\x00\x00\x01\x00\x02\x00", 14),
                 RDB_ERR);
    /* a module value is not supported: a distinct answer */
    cr_assert_eq(decode_body("\x07\x00", 2), RDB_ERR_UNSUPPORTED);
    /* a stream cut after its nodes; one whose node count exceeds the bytes */
    cr_assert_eq(decode_body("\x13\x00", 2), RDB_ERR);
    cr_assert_eq(decode_body("\x13\x80\x7f\xff\xff\xff\x00", 7), RDB_ERR);
    /* a type byte Redis does not have */
    cr_assert_eq(decode_body("\x08\x00", 2), RDB_ERR);
}

/* Every single-bit flip of a payload, CRC fixed: decoded or refused, never a crash. */
static void flip_every_bit(obj_t *o)
{
    buf_t b;
    buf_init(&b);
    rdb_dump(&b, o, 1);
    size_t body = b.len - 10;
    for (size_t i = 0; i < body * 8; i++) {
        b.data[i / 8] ^= (char)(1 << (i % 8));
        int rc = decode_body(b.data, body);
        cr_assert(rc == RDB_OK || rc == RDB_ERR || rc == RDB_ERR_EMPTY ||
                  rc == RDB_ERR_UNSUPPORTED);
        b.data[i / 8] ^= (char)(1 << (i % 8));
    }
    buf_deinit(&b);
}

Test(rdb, every_bit_flip_of_real_payloads_is_handled)
{
    hash_t *h = hash_new();
    hash_set(&h, "field", 5, "value", 5);
    hash_set(&h, "n", 1, "123456", 6);
    zset_t *z = zset_new();
    int out;
    zset_add(z, "a", 1, 1.5, 0, &out, NULL);
    zset_add(z, "b", 1, -3, 0, &out, NULL);
    list_t *l = list_new();
    for (int i = 0; i < 30; i++) list_push(l, LIST_TAIL, "element", 7);
    set_t *s = set_new(ENC_INTSET);
    set_add(s, "1", 1);
    set_add(s, "70000", 5);
    obj_t *o[] = {&h->h, &z->h, list_obj(l), &s->h, small_stream()};
    for (size_t i = 0; i < sizeof o / sizeof o[0]; i++) {
        flip_every_bit(o[i]);
        obj_free(o[i]);
    }
}

Test(rdb, the_walker_skips_each_value_to_its_end)
{
    hash_t *h = hash_new(), *hh = hash_new();
    hash_set(&h, "f", 1, "v", 1);
    char f[16];
    for (int i = 0; i < 200; i++) hash_set(&hh, f, (size_t)snprintf(f, sizeof f, "%d", i), "x", 1);
    list_t *l = list_new();
    for (int i = 0; i < 2000; i++) list_push(l, LIST_TAIL, "abcdefghijklmnopqrstuvwxyz", 26);
    zset_t *z = zset_new();
    int out;
    for (int i = 0; i < 200; i++)
        zset_add(z, f, (size_t)snprintf(f, sizeof f, "m%d", i), i, 0, &out, NULL);
    str_obj_t *s =
        str_new("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 70);
    obj_t *o[] = {&h->h, &hh->h, list_obj(l), &z->h, &s->h, small_stream()};
    for (size_t i = 0; i < sizeof o / sizeof o[0]; i++) {
        buf_t b;
        buf_init(&b);
        rdb_dump(&b, o[i], 1);
        rdb_reader_t r = {.p = (unsigned char *)b.data + 1, .end = (unsigned char *)b.data + b.len};
        cr_assert_eq(rdbw_skip_value(&r, (unsigned char)b.data[0]), RDB_OK);
        cr_assert_eq(r.p, (unsigned char *)b.data + b.len - 10, "value %zu", i);
        buf_deinit(&b);
        obj_free(o[i]);
    }
}

Test(rdb, a_stream_round_trips_to_the_same_bytes)
{
    obj_t *o = small_stream(), *back = NULL;
    buf_t a, b;
    buf_init(&a);
    buf_init(&b);
    rdb_dump(&a, o, 1);
    cr_assert_eq((unsigned char)a.data[0], RDB_TYPE_STREAM_LISTPACKS_2);
    cr_assert_eq(rdb_dump_decode(a.data, a.len, 10, &back), RDB_OK);
    rdb_dump(&b, back, 1);
    cr_assert_eq(a.len, b.len);
    cr_assert_eq(memcmp(a.data, b.data, a.len), 0);
    const stream_t *s = (const stream_t *)(const void *)back;
    cr_assert_eq(s->length, 4);
    cr_assert_eq(s->ngroups, 1);
    cr_assert_eq(s->groups[0]->nconsumers, 2);
    cr_assert_eq(stream_idx_size(&s->groups[0]->pel), 2);
    buf_deinit(&a);
    buf_deinit(&b);
    obj_free(o);
    obj_free(back);
}
