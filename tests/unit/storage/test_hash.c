/* test_hash.c - storage/t_hash.c: both encodings, the conversion thresholds (entries, the
 * listpack byte budget, hash_prepare), the reported encoding (HASH_FLAG_HT on a long field or
 * value, the bytes staying a listpack), value rewrites across varint sizes, iteration, random
 * sampling (membership, distinctness, rough uniformity), scan covering every element (also with
 * changes between steps), dup, memory accounting, and a model test with many fields. */
#include "storage/t_hash.h"

#include "common/alloc.h"
#include "common/util.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S(lit) lit, sizeof(lit) - 1

static storage_params_t saved;

static void setup(void)
{
    saved = storage_params;
    srand(4242);
}

static void teardown(void)
{
    storage_params = saved;
}

TestSuite(hash, .init = setup, .fini = teardown);

static void set_s(hash_t **hp, const char *f, const char *v)
{
    hash_set(hp, f, strlen(f), v, strlen(v));
}

/* The value of f as a NUL-terminated static copy, or NULL if absent. */
static const char *get_s(hash_t *h, const char *f)
{
    static char buf[1024];
    const char *v;
    size_t vlen;
    if (!hash_get(h, f, strlen(f), &v, &vlen)) return NULL;
    cr_assert(vlen < sizeof(buf));
    memcpy(buf, v, vlen);
    buf[vlen] = '\0';
    return buf;
}

static void fill(hash_t **hp, int n, size_t vlen)
{
    char f[32], v[4096];
    cr_assert(vlen < sizeof(v));
    for (int i = 0; i < n; i++) {
        int fl = snprintf(f, sizeof(f), "field%d", i);
        memset(v, 'a' + i % 26, vlen);
        hash_set(hp, f, (size_t)fl, v, vlen);
    }
}

/* ---- basics ---- */

Test(hash, new_hash_is_an_empty_listpack)
{
    hash_t *h = hash_new();
    cr_assert_eq(h->h.type, OBJ_HASH);
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    cr_assert_eq(hash_len(h), 0);
    cr_assert_str_eq(obj_encoding_name(&h->h), "listpack");
    cr_assert_eq(hash_get(h, S("x"), NULL, NULL), 0);
    cr_assert_eq(hash_del(&h, S("x")), 0);
    hash_free(h);
}

static void basic_ops(int ht)
{
    hash_t *h = hash_new();
    if (ht) hash_convert(&h);
    cr_assert_eq(hash_set(&h, S("a"), S("1")), 1);
    cr_assert_eq(hash_set(&h, S("b"), S("2")), 1);
    cr_assert_eq(hash_set(&h, S("a"), S("one")), 0);
    cr_assert_eq(hash_set(&h, S(""), S("")), 1);
    cr_assert_eq(hash_set(&h, "n\0l", 3, "v\0v", 3), 1);
    cr_assert_eq(hash_len(h), 4);
    cr_assert_str_eq(get_s(h, "a"), "one");
    cr_assert_str_eq(get_s(h, "b"), "2");
    cr_assert_str_eq(get_s(h, ""), "");
    const char *v;
    size_t vlen;
    cr_assert(hash_get(h, "n\0l", 3, &v, &vlen));
    cr_assert(vlen == 3 && memcmp(v, "v\0v", 3) == 0);
    cr_assert_null(get_s(h, "c"));
    cr_assert_null(get_s(h, "n"));
    cr_assert_eq(hash_del(&h, S("a")), 1);
    cr_assert_eq(hash_del(&h, S("a")), 0);
    cr_assert_eq(hash_len(h), 3);
    cr_assert_str_eq(get_s(h, "b"), "2");
    cr_assert_eq(hash_del(&h, S("")), 1);
    cr_assert_eq(hash_del(&h, "n\0l", 3), 1);
    cr_assert_eq(hash_del(&h, S("b")), 1);
    cr_assert_eq(hash_len(h), 0);
    cr_assert_eq(h->h.enc, ht ? ENC_HT : ENC_LISTPACK);
    hash_free(h);
}

Test(hash, set_get_del_in_listpack)
{
    basic_ops(0);
}

Test(hash, set_get_del_in_hashtable)
{
    basic_ops(1);
}

/* Rewrites one value through lengths whose varint size changes (127/128, 16383/16384), with
 * fields before and after it, and checks every field after each step. */
static void value_resizes(int ht, const size_t *lens, size_t nlens)
{
    storage_params.hash_max_listpack_value = ht ? 64 : 100000;
    hash_t *h = hash_new();
    if (ht) hash_convert(&h);
    set_s(&h, "before", "B");
    set_s(&h, "mid", "x");
    set_s(&h, "after", "A");
    char *buf = malloc(20000);
    for (size_t i = 0; i < nlens; i++) {
        memset(buf, 'a' + (int)i, lens[i]);
        cr_assert_eq(hash_set(&h, S("mid"), buf, lens[i]), 0);
        const char *v;
        size_t vlen;
        cr_assert(hash_get(h, S("mid"), &v, &vlen));
        cr_assert_eq(vlen, lens[i]);
        cr_assert(memcmp(v, buf, vlen) == 0);
        cr_assert_str_eq(get_s(h, "before"), "B");
        cr_assert_str_eq(get_s(h, "after"), "A");
        cr_assert_eq(hash_len(h), 3);
    }
    cr_assert_eq(h->h.enc, ht ? ENC_HT : ENC_LISTPACK);
    free(buf);
    hash_free(h);
}

static const size_t big_lens[] = {0, 1, 127, 128, 5, 16383, 16384, 20000, 3, 0, 128, 127};

Test(hash, value_rewrites_across_varint_sizes_listpack)
{
    /* within the byte budget (the 2-byte varint starts at 128) */
    static const size_t lens[] = {0, 1, 127, 128, 5, 8000, 3, 0, 128, 127, 4000, 127};
    value_resizes(0, lens, sizeof(lens) / sizeof(lens[0]));
}

Test(hash, value_rewrites_across_varint_sizes_hashtable)
{
    value_resizes(1, big_lens, sizeof(big_lens) / sizeof(big_lens[0]));
}

/* ---- conversion thresholds ---- */

Test(hash, converts_after_more_than_max_entries)
{
    storage_params.hash_max_listpack_entries = 128;
    hash_t *h = hash_new();
    fill(&h, 128, 10);
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    cr_assert_eq(hash_len(h), 128);
    set_s(&h, "field0", "update"); /* updates do not count */
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    set_s(&h, "one-more", "v");
    cr_assert_eq(h->h.enc, ENC_HT);
    cr_assert_str_eq(obj_encoding_name(&h->h), "hashtable");
    cr_assert_eq(hash_len(h), 129);
    cr_assert_str_eq(get_s(h, "field0"), "update");
    cr_assert_str_eq(get_s(h, "field127"), "xxxxxxxxxx"); /* 127 % 26 = 23 */
    hash_free(h);
}

Test(hash, conversion_keeps_every_field)
{
    storage_params.hash_max_listpack_entries = 1000;
    hash_t *h = hash_new();
    fill(&h, 250, 20); /* 250 * 29 bytes: within the budget */
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    hash_convert(&h);
    cr_assert_eq(h->h.enc, ENC_HT);
    cr_assert_eq(hash_len(h), 250);
    char f[32], want[21];
    for (int i = 0; i < 250; i++) {
        snprintf(f, sizeof(f), "field%d", i);
        memset(want, 'a' + i % 26, 20);
        want[20] = '\0';
        cr_assert_str_eq(get_s(h, f), want);
    }
    hash_free(h);
}

/* Physically a listpack, reported as Redis's hashtable. */
static void assert_reported_ht(hash_t *h)
{
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    cr_assert(h->h.flags & HASH_FLAG_HT);
    cr_assert_eq(obj_redis_enc(&h->h), ENC_HT);
    cr_assert_str_eq(obj_encoding_name(&h->h), "hashtable");
}

Test(hash, value_or_field_longer_than_the_limit_is_reported_as_hashtable)
{
    char big[66];
    memset(big, 'v', sizeof(big));
    hash_t *h = hash_new();
    hash_set(&h, S("f"), big, 64);
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    hash_set(&h, big, 64, S("v"));
    cr_assert_eq(h->h.flags, 0);
    cr_assert_str_eq(obj_encoding_name(&h->h), "listpack");
    hash_set(&h, S("f"), big, 65); /* an update counts too, as Redis's hashTypeSet */
    assert_reported_ht(h);
    cr_assert_eq(hash_len(h), 2);
    hash_set(&h, S("f"), S("short")); /* never goes back */
    hash_del(&h, big, 64);
    assert_reported_ht(h);
    hash_t *d = hash_dup(h); /* COPY keeps it */
    assert_reported_ht(d);
    hash_free(d);
    hash_convert(&h); /* and so does a real conversion */
    cr_assert_eq(h->h.enc, ENC_HT);
    cr_assert_str_eq(obj_encoding_name(&h->h), "hashtable");
    hash_free(h);

    h = hash_new();
    set_s(&h, "a", "1");
    hash_set(&h, big, 65, S("v"));
    assert_reported_ht(h);
    cr_assert_str_eq(get_s(h, "a"), "1");
    cr_assert_eq(hash_len(h), 2);
    hash_free(h);
}

Test(hash, converts_past_the_byte_budget)
{
    storage_params.hash_max_listpack_entries = 128;
    static char v[HASH_LP_MAX_BYTES];
    memset(v, 'v', sizeof(v));
    /* 1 + 1 + 2 + n bytes for field "f" and an n-byte value (n >= 128) */
    size_t fits = HASH_LP_MAX_BYTES - 4;
    hash_t *h = hash_new();
    cr_assert_eq(hash_set(&h, S("f"), v, fits), 1);
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    assert_reported_ht(h);
    cr_assert_eq(hash_set(&h, S("f"), v, fits + 1), 0); /* a rewrite one byte over */
    cr_assert_eq(h->h.enc, ENC_HT);
    cr_assert_str_eq(obj_encoding_name(&h->h), "hashtable");
    const char *got;
    size_t glen;
    cr_assert(hash_get(h, S("f"), &got, &glen));
    cr_assert_eq(glen, fits + 1);
    hash_free(h);

    /* an append that passes it */
    h = hash_new();
    hash_set(&h, S("f"), v, fits - 3);
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    cr_assert_eq(hash_set(&h, S(""), S("")), 1); /* 2 bytes: fits exactly */
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    cr_assert_eq(hash_set(&h, S("g"), S("")), 1);
    cr_assert_eq(h->h.enc, ENC_HT);
    cr_assert_eq(hash_len(h), 3);
    cr_assert(hash_get(h, S("f"), &got, &glen) && glen == fits - 3);
    hash_free(h);

    /* a hash Redis keeps as a listpack (no long field or value) stays one past the budget:
     * reporting a hashtable there would differ from Redis */
    storage_params.hash_max_listpack_entries = 1000;
    h = hash_new();
    fill(&h, 1000, 20);
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    cr_assert_str_eq(obj_encoding_name(&h->h), "listpack");
    cr_assert_eq(hash_len(h), 1000);
    hash_set(&h, S("long"), v, 65); /* now Redis converts, and so does the budget */
    cr_assert_eq(h->h.enc, ENC_HT);
    cr_assert_str_eq(obj_encoding_name(&h->h), "hashtable");
    cr_assert_eq(hash_len(h), 1001);
    hash_free(h);
}

Test(hash, report_listpack_undoes_the_flag_and_the_conversion)
{
    static char v[3000];
    memset(v, 'v', sizeof(v));
    hash_t *h = hash_new();
    hash_set(&h, S("a"), v, 100);
    hash_report_listpack(&h); /* a flagged listpack */
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    cr_assert_str_eq(obj_encoding_name(&h->h), "listpack");
    hash_set(&h, S("b"), v, 3000);
    hash_set(&h, S("c"), v, 3000);
    cr_assert_eq(h->h.enc, ENC_HT); /* past the budget once flagged */
    hash_report_listpack(&h); /* a physical hashtable goes back */
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    cr_assert_str_eq(obj_encoding_name(&h->h), "listpack");
    cr_assert_eq(hash_len(h), 3);
    const char *got;
    size_t glen;
    cr_assert(hash_get(h, S("c"), &got, &glen) && glen == 3000 && got[2999] == 'v');
    cr_assert(hash_get(h, S("a"), &got, &glen) && glen == 100);
    set_s(&h, "d", "short"); /* a short write keeps it, as in Redis */
    cr_assert_str_eq(obj_encoding_name(&h->h), "listpack");
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    hash_free(h);
}

Test(hash, limits_come_from_storage_params)
{
    storage_params.hash_max_listpack_entries = 0;
    hash_t *h = hash_new();
    set_s(&h, "a", "1");
    cr_assert_eq(h->h.enc, ENC_HT);
    hash_free(h);

    storage_params.hash_max_listpack_entries = 128;
    storage_params.hash_max_listpack_value = 0;
    h = hash_new();
    hash_set(&h, S(""), S(""));
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    cr_assert_str_eq(obj_encoding_name(&h->h), "listpack");
    set_s(&h, "a", "");
    assert_reported_ht(h);
    hash_free(h);
}

Test(hash, prepare_flags_long_arguments_and_converts_past_the_budget)
{
    hash_t *h = hash_new();
    set_s(&h, "a", "1");
    hash_prepare(&h, 3, 64, 200);
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    cr_assert_eq(h->h.flags, 0);
    hash_prepare(&h, 3, 65, 200);
    assert_reported_ht(h);
    cr_assert_str_eq(get_s(h, "a"), "1");
    hash_free(h);

    /* a flagged listpack whose entries would pass the budget converts */
    h = hash_new();
    hash_prepare(&h, 1, 65, HASH_LP_MAX_BYTES);
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    hash_prepare(&h, 1, 65, HASH_LP_MAX_BYTES + 1);
    cr_assert_eq(h->h.enc, ENC_HT);
    hash_free(h);
    /* one Redis keeps as a listpack, only past the 1 GiB safety size */
    h = hash_new();
    hash_prepare(&h, 1, 10, (size_t)1 << 30);
    cr_assert_eq(h->h.enc, ENC_LISTPACK);
    hash_prepare(&h, 1, 10, ((size_t)1 << 30) + 1);
    cr_assert_eq(h->h.enc, ENC_HT);
    cr_assert_eq(h->h.flags, 0);
    hash_free(h);
}

Test(hash, hashtable_never_converts_back)
{
    storage_params.hash_max_listpack_entries = 128;
    hash_t *h = hash_new();
    fill(&h, 200, 5);
    cr_assert_eq(h->h.enc, ENC_HT);
    char f[32];
    for (int i = 0; i < 199; i++) {
        int n = snprintf(f, sizeof(f), "field%d", i);
        cr_assert_eq(hash_del(&h, f, (size_t)n), 1);
    }
    cr_assert_eq(hash_len(h), 1);
    cr_assert_eq(h->h.enc, ENC_HT);
    cr_assert_str_eq(get_s(h, "field199"), "rrrrr");
    hash_free(h);
}

/* ---- memory ---- */

/* What the allocator gives for a request of n bytes. */
static size_t block(size_t n)
{
    void *p = xmalloc(n);
    size_t r = alloc_size(p);
    xfree(p);
    return r;
}


/* A YCSB record's 10 fields of 100 bytes set one HSET at a time, as a command would. */
static void set_fields_one_by_one(hash_t **hp)
{
    char v[100];
    memset(v, 'x', sizeof(v));
    for (int i = 0; i < 10; i++) {
        char f[16];
        int n = snprintf(f, sizeof(f), "field%d", i);
        hash_prepare(hp, 1, 100, 106);
        hash_set(hp, f, (size_t)n, v, sizeof(v));
    }
}

Test(hash, ycsb_record_is_one_block)
{
    /* 10 fields of 100 bytes, as HMSET writes them: one listpack of 16 + 10 * 108 bytes
     * (1280 with jemalloc), reported as Redis's hashtable */
    size_t want = block(16 + 1080);
    hash_t *h = hash_new();
    hash_prepare(&h, 10, 100, 1060);
    fill(&h, 10, 100);
    assert_reported_ht(h);
    cr_assert_eq(hash_memory(h), want, "got %zu", hash_memory(h));
    fill(&h, 10, 100); /* rewriting the values in place keeps the size */
    cr_assert_eq(hash_memory(h), want);
    hash_free(h);
    /* one HSET at a time ends the same */
    h = hash_new();
    set_fields_one_by_one(&h);
    cr_assert_eq(hash_memory(h), want, "got %zu", hash_memory(h));
    hash_free(h);
}

Test(hash, ycsb_record_is_compact_as_a_hashtable)
{
    /* 10 fields of 100 bytes: an 80-byte header, 4 buckets (32 bytes), ten fields of 123 bytes
     * (16 node + 6 field + 1 length + 100 value): 1392 bytes with jemalloc */
    size_t want = block(80) + block(32) + 10 * block(123);
    hash_t *h = hash_new();
    hash_convert(&h);
    hash_prepare(&h, 10, 100, 1060);
    fill(&h, 10, 100);
    cr_assert_eq(h->h.enc, ENC_HT);
    cr_assert_eq(hash_memory(h), want, "got %zu", hash_memory(h));
    /* rewriting the values in place keeps the size */
    fill(&h, 10, 100);
    cr_assert_eq(hash_memory(h), want);
    hash_free(h);

    /* the same record built one HSET at a time ends the same */
    h = hash_new();
    hash_convert(&h);
    set_fields_one_by_one(&h);
    cr_assert_eq(hash_memory(h), want, "got %zu", hash_memory(h));
    hash_free(h);
}

Test(hash, listpack_memory_follows_its_contents)
{
    hash_t *h = hash_new();
    size_t empty = hash_memory(h);
    fill(&h, 100, 30);
    size_t full = hash_memory(h);
    cr_assert_gt(full, 100 * 36);
    cr_assert_lt(full, 100 * 36 * 5 / 4 + 64);
    char f[32];
    for (int i = 0; i < 99; i++) {
        int n = snprintf(f, sizeof(f), "field%d", i);
        hash_del(&h, f, (size_t)n);
    }
    cr_assert_lt(hash_memory(h), 128, "a shrunk listpack gives memory back");
    cr_assert_geq(hash_memory(h), empty);
    hash_free(h);
}

Test(hash, deleting_most_fields_shrinks_the_table)
{
    hash_t *h = hash_new();
    fill(&h, 5000, 8);
    size_t big = hash_memory(h);
    char f[32];
    for (int i = 0; i < 4990; i++) {
        int n = snprintf(f, sizeof(f), "field%d", i);
        cr_assert_eq(hash_del(&h, f, (size_t)n), 1);
    }
    cr_assert_eq(hash_len(h), 10);
    /* the smaller table is filled incrementally, one bucket per operation, as in Redis */
    for (int i = 0; i < 200; i++) hash_get(h, S("nope"), NULL, NULL);
    cr_assert_lt(hash_memory(h), big / 100, "%zu vs %zu", hash_memory(h), big);
    for (int i = 4990; i < 5000; i++) {
        int n = snprintf(f, sizeof(f), "field%d", i);
        cr_assert(hash_get(h, f, (size_t)n, NULL, NULL));
    }
    hash_free(h);
}

/* ---- object hooks ---- */

Test(hash, registered_object_hooks)
{
    cr_assert_not_null(obj_types[OBJ_HASH]);
    for (int ht = 0; ht < 2; ht++) {
        hash_t *h = hash_new();
        fill(&h, ht ? 300 : 5, 10);
        cr_assert_eq(obj_length(&h->h), ht ? 300 : 5);
        cr_assert_eq(obj_memory(&h->h), hash_memory(h));
        hash_t *d = (hash_t *)(void *)obj_dup(&h->h);
        cr_assert_eq(d->h.enc, h->h.enc);
        cr_assert_eq(hash_len(d), hash_len(h));
        set_s(&d, "field0", "changed");
        cr_assert_str_eq(get_s(h, "field0"), "aaaaaaaaaa");
        cr_assert_str_eq(get_s(d, "field0"), "changed");
        hash_iter_t it;
        hash_entry_t e;
        hash_iter_init(&it, h);
        while (hash_iter_next(&it, &e)) {
            if (e.flen == 6 && memcmp(e.field, "field0", 6) == 0) continue;
            const char *v;
            size_t vlen;
            cr_assert(hash_get(d, e.field, e.flen, &v, &vlen));
            cr_assert(vlen == e.vlen && memcmp(v, e.value, vlen) == 0);
        }
        obj_free(&d->h);
        obj_free(&h->h);
    }
}

/* ---- iteration ---- */

static void iterate_all(int n)
{
    hash_t *h = hash_new();
    fill(&h, n, 7);
    char *seen = calloc((size_t)n, 1);
    hash_iter_t it;
    hash_entry_t e;
    hash_iter_init(&it, h);
    int count = 0;
    while (hash_iter_next(&it, &e)) {
        int i;
        cr_assert(e.flen > 5 && sscanf(e.field, "field%d", &i) == 1);
        cr_assert(i >= 0 && i < n && !seen[i]);
        seen[i] = 1;
        cr_assert_eq(e.vlen, 7);
        cr_assert_eq(e.value[0], 'a' + i % 26);
        count++;
    }
    cr_assert_eq(count, n);
    cr_assert_eq(hash_iter_next(&it, &e), 0);
    free(seen);
    hash_free(h);
}

Test(hash, iterator_visits_every_field_once)
{
    iterate_all(0);
    iterate_all(1);
    iterate_all(100);  /* listpack */
    iterate_all(1000); /* hashtable */
}

/* ---- random ---- */

/* Draws many single random fields and checks each is a member and each field's frequency is
 * within a loose bound of the mean. */
static void random_is_roughly_uniform(int n, int draws)
{
    hash_t *h = hash_new();
    fill(&h, n, 3);
    int *hits = calloc((size_t)n, sizeof(int));
    for (int k = 0; k < draws; k++) {
        hash_entry_t e;
        hash_random(h, &e);
        int i;
        cr_assert(sscanf(e.field, "field%d", &i) == 1 && i >= 0 && i < n);
        cr_assert_eq(e.vlen, 3);
        hits[i]++;
    }
    double mean = (double)draws / n;
    for (int i = 0; i < n; i++)
        cr_assert(hits[i] > mean * 0.5 && hits[i] < mean * 1.5, "field%d drawn %d times, mean %f",
                  i, hits[i], mean);
    free(hits);
    hash_free(h);
}

Test(hash, random_field_is_roughly_uniform)
{
    random_is_roughly_uniform(10, 20000);    /* listpack */
    random_is_roughly_uniform(200, 100000);  /* small hashtable: indexed walk */
    random_is_roughly_uniform(3000, 600000); /* larger hashtable: bucket sampling */
}

Test(hash, random_pairs_repeat_and_belong)
{
    for (int ht = 0; ht < 2; ht++) {
        int n = ht ? 2000 : 5;
        hash_t *h = hash_new();
        fill(&h, n, 4);
        hash_entry_t out[300];
        hash_random_pairs(h, 300, out);
        int dup = 0;
        for (int k = 0; k < 300; k++) {
            int i;
            cr_assert(sscanf(out[k].field, "field%d", &i) == 1 && i < n);
            cr_assert_eq(out[k].value[0], 'a' + i % 26);
            if (k && out[k].field == out[k - 1].field) dup++;
        }
        if (!ht) cr_assert_gt(dup, 0, "300 draws from 5 fields repeat");
        hash_free(h);
    }
}

static void unique_sample(int n, int count)
{
    hash_t *h = hash_new();
    fill(&h, n, 2);
    hash_entry_t *out = malloc((size_t)count * sizeof(*out));
    char *seen = calloc((size_t)n, 1);
    hash_random_unique(h, (size_t)count, out);
    for (int k = 0; k < count; k++) {
        int i;
        cr_assert(sscanf(out[k].field, "field%d", &i) == 1 && i >= 0 && i < n);
        cr_assert(!seen[i], "field%d twice (n %d count %d)", i, n, count);
        seen[i] = 1;
        cr_assert_eq(out[k].vlen, 2);
    }
    free(seen);
    free(out);
    hash_free(h);
}

Test(hash, random_unique_fields_are_distinct)
{
    unique_sample(10, 1);
    unique_sample(10, 9);
    unique_sample(128, 50);
    unique_sample(1000, 999); /* most of the hash: shuffle */
    unique_sample(1000, 400);
    unique_sample(5000, 100); /* a few of many: sampling with a seen-set */
    unique_sample(5000, 1666);
}

/* ---- scan ---- */

typedef struct seen_set {
    int n;
    int *hits;
} seen_set_t;

static void on_scan(void *ud, const hash_entry_t *e)
{
    seen_set_t *s = ud;
    int i;
    cr_assert(sscanf(e->field, "field%d", &i) == 1 && i >= 0 && i < s->n);
    s->hits[i]++;
}

Test(hash, listpack_scan_returns_everything_with_cursor_zero)
{
    hash_t *h = hash_new();
    fill(&h, 50, 3);
    seen_set_t s = {50, calloc(50, sizeof(int))};
    cr_assert_eq(hash_scan(h, 12345, on_scan, &s), 0);
    for (int i = 0; i < 50; i++) cr_assert_eq(s.hits[i], 1);
    free(s.hits);
    hash_free(h);
}

Test(hash, hashtable_scan_covers_every_field)
{
    hash_t *h = hash_new();
    fill(&h, 10000, 3);
    seen_set_t s = {10000, calloc(10000, sizeof(int))};
    uint64_t cursor = 0;
    int steps = 0;
    do {
        cursor = hash_scan(h, cursor, on_scan, &s);
        steps++;
    } while (cursor);
    cr_assert_gt(steps, 1);
    for (int i = 0; i < 10000; i++) cr_assert_geq(s.hits[i], 1, "field%d missed", i);
    free(s.hits);
    hash_free(h);
}

Test(hash, scan_survives_growth_and_deletes_between_steps)
{
    hash_t *h = hash_new();
    fill(&h, 300, 3); /* field0..299 stay the whole time */
    int total = 20000;
    seen_set_t s = {total, calloc((size_t)total, sizeof(int))};
    uint64_t cursor = 0;
    int next = 300;
    char f[32];
    do {
        cursor = hash_scan(h, cursor, on_scan, &s);
        for (int k = 0; k < 40 && next < total; k++, next++) { /* grows the table */
            int n = snprintf(f, sizeof(f), "field%d", next);
            hash_set(&h, f, (size_t)n, S("new"));
        }
        if (next > 1000) { /* and deletes some of the new ones */
            int n = snprintf(f, sizeof(f), "field%d", next - 500);
            hash_del(&h, f, (size_t)n);
        }
    } while (cursor);
    for (int i = 0; i < 300; i++) cr_assert_geq(s.hits[i], 1, "field%d missed", i);
    free(s.hits);
    hash_free(h);
}

/* ---- model test ---- */

Test(hash, many_fields_against_a_model)
{
    enum { N = 20000 };
    static char present[N];
    static int vals[N];
    memset(present, 0, sizeof(present));
    hash_t *h = hash_new();
    size_t len = 0;
    char f[32], v[32];
    for (int step = 0; step < 200000; step++) {
        int i = rand() % N;
        int fl = snprintf(f, sizeof(f), "k:%d", i);
        if (rand() % 3) {
            int x = rand();
            int vl = snprintf(v, sizeof(v), "%d", x);
            int r = hash_set(&h, f, (size_t)fl, v, (size_t)vl);
            cr_assert_eq(r, !present[i]);
            if (!present[i]) len++;
            present[i] = 1;
            vals[i] = x;
        } else {
            int r = hash_del(&h, f, (size_t)fl);
            cr_assert_eq(r, present[i]);
            if (present[i]) len--;
            present[i] = 0;
        }
        cr_assert_eq(hash_len(h), len);
    }
    for (int i = 0; i < N; i++) {
        int fl = snprintf(f, sizeof(f), "k:%d", i);
        const char *val;
        size_t vlen;
        int r = hash_get(h, f, (size_t)fl, &val, &vlen);
        cr_assert_eq(r, present[i]);
        if (r) {
            int vl = snprintf(v, sizeof(v), "%d", vals[i]);
            cr_assert(vlen == (size_t)vl && memcmp(val, v, vlen) == 0);
        }
    }
    hash_free(h);
}

/* Random writes of values around the limits to a few fields, over both physical encodings:
 * after each step the contents match a model, the reported encoding is "hashtable" exactly
 * when Redis would have converted (a long write so far, or more fields than the limit ever),
 * and the bytes stay a listpack while the entries fit the budget and the entry limit. */
Test(hash, long_values_against_a_model)
{
    enum { NF = 40 };
    static const size_t lens[] = {0, 1, 63, 64, 65, 100, 127, 128, 300, 1000, 3000};
    storage_params.hash_max_listpack_entries = 32;
    storage_params.hash_max_listpack_value = 64;
    static char vals[NF][3000];
    size_t vlen[NF];
    int present[NF];
    char buf[3000], f[16];
    for (int round = 0; round < 20; round++) {
        memset(present, 0, sizeof(present));
        hash_t *h = hash_new();
        int redis_ht = 0, was_ht = 0;
        size_t len = 0;
        for (int step = 0; step < 300; step++) {
            int i = rand() % NF;
            int fl = snprintf(f, sizeof(f), "f%d", i);
            if (rand() % 4) {
                size_t n = lens[rand() % (sizeof(lens) / sizeof(lens[0]))];
                memset(buf, 'a' + step % 26, n);
                hash_prepare(&h, 1, n > (size_t)fl ? n : (size_t)fl, n + (size_t)fl);
                cr_assert_eq(hash_set(&h, f, (size_t)fl, buf, n), !present[i]);
                if (!present[i]) len++;
                present[i] = 1;
                memcpy(vals[i], buf, n);
                vlen[i] = n;
                if (n > 64 || len > 32) redis_ht = 1;
            } else {
                cr_assert_eq(hash_del(&h, f, (size_t)fl), present[i]);
                if (present[i]) len--;
                present[i] = 0;
            }
            if (len == 0) { /* the key would be deleted: start a new hash */
                hash_free(h);
                h = hash_new();
                redis_ht = was_ht = 0;
                continue;
            }
            cr_assert_eq(hash_len(h), len);
            cr_assert_str_eq(obj_encoding_name(&h->h), redis_ht ? "hashtable" : "listpack");
            if (was_ht) cr_assert_eq(h->h.enc, ENC_HT, "never converts back");
            was_ht = h->h.enc == ENC_HT;
            size_t bytes = 0, seen = 0;
            hash_iter_t it;
            hash_entry_t e;
            hash_iter_init(&it, h);
            while (hash_iter_next(&it, &e)) {
                int k = atoi(e.field + 1);
                cr_assert(present[k]);
                cr_assert(e.vlen == vlen[k] && memcmp(e.value, vals[k], e.vlen) == 0);
                bytes += 1 + e.flen + (e.vlen < 128 ? 1 : 2) + e.vlen;
                seen++;
            }
            cr_assert_eq(seen, len);
            if (!was_ht && redis_ht) cr_assert_leq(bytes, HASH_LP_MAX_BYTES);
            if (!was_ht) cr_assert_leq(len, 32);
            for (int k = 0; k < NF; k++) {
                fl = snprintf(f, sizeof(f), "f%d", k);
                const char *v;
                size_t n;
                cr_assert_eq(hash_get(h, f, (size_t)fl, &v, &n), present[k]);
            }
        }
        hash_free(h);
    }
}
