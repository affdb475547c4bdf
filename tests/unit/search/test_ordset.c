/* test_ordset.c - search/ordset.c: the B+ tree behind the name and time indexes, checked
 * against a sorted reference under random inserts, deletes and seeks (small keys over a small
 * alphabet, and enough of them for several levels), and its memory: under 9 bytes a value
 * for keys that only grow or only shrink, under 10 for random ones (B* sharing, short
 * separators), a small block for a set of one, nothing once emptied, and bounded after mass
 * deletes. */
#include "search/ordset.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEYS 30000

static char keys[KEYS][8];
static size_t lens[KEYS];
static int present[KEYS];

static const char *key_of(const void *v, size_t *len)
{
    int i = (int)((const int *)v - present);
    *len = lens[i];
    return keys[i];
}

static int by_key(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    return ordset_cmp(keys[i], lens[i], keys[j], lens[j]);
}

/* distinct keys of up to maxlen bytes over "ab\0\xff" (some empty) */
static void make_keys(int n, int maxlen)
{
    memset(present, 0, sizeof(present));
    for (int i = 0; i < n; i++) {
        int dup;
        do {
            lens[i] = (size_t)(rand() % (maxlen + 1));
            for (size_t k = 0; k < lens[i]; k++) keys[i][k] = "ab\x00\xff"[rand() % 4];
            dup = 0;
            for (int j = 0; j < i && !dup; j++)
                dup = lens[j] == lens[i] && memcmp(keys[j], keys[i], lens[i]) == 0;
        } while (dup);
    }
}

/* The present keys in order; returns how many. */
static int ref_order(int n, int *order)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (present[i]) order[m++] = i;
    qsort(order, (size_t)m, sizeof(int), by_key);
    return m;
}

/* A full walk lists exactly the present keys in order. */
static void check_walk(ordset_t *s, int n)
{
    static int order[KEYS];
    int m = ref_order(n, order), k = 0;
    ordset_iter_t it;
    for (int more = ordset_seek(s, NULL, 0, &it); more; more = ordset_next(&it), k++) {
        cr_assert_lt(k, m);
        cr_assert_eq(ordset_iter_val(&it), &present[order[k]]);
        size_t len;
        cr_assert_eq(ordset_iter_key(&it, &len), keys[order[k]]);
    }
    cr_assert_eq(k, m);
    cr_assert_eq(ordset_size(s), (uint64_t)m);
}

Test(ordset, compare_is_bytewise_with_prefixes_first)
{
    cr_assert_lt(ordset_cmp("ab", 2, "abc", 3), 0);
    cr_assert_gt(ordset_cmp("b", 1, "abc", 3), 0);
    cr_assert_eq(ordset_cmp("", 0, "", 0), 0);
    cr_assert_lt(ordset_cmp("a\x01", 2, "a\xff", 2), 0); /* unsigned bytes */
}

/* Random inserts and deletes of n keys, a seek and a get checked after each. */
static void random_rounds(int n, int maxlen, int rounds, int insert_pct)
{
    static int order[KEYS];
    make_keys(n, maxlen);
    ordset_t s;
    ordset_init(&s, key_of);
    for (int round = 0; round < rounds; round++) {
        int i = rand() % n;
        if (present[i] && rand() % 100 >= insert_pct) {
            cr_assert_eq(ordset_delete(&s, keys[i], lens[i]), &present[i]);
            present[i] = 0;
        } else if (!present[i]) {
            ordset_insert(&s, &present[i]);
            present[i] = 1;
        }
        if (round % 7) continue;
        int j = rand() % n, m = ref_order(n, order), want = -1;
        for (int k = 0; k < m && want < 0; k++)
            if (ordset_cmp(keys[order[k]], lens[order[k]], keys[j], lens[j]) >= 0) want = order[k];
        ordset_iter_t it;
        int more = ordset_seek(&s, keys[j], lens[j], &it);
        cr_assert_eq(more ? (int *)ordset_iter_val(&it) - present : -1, want);
        cr_assert_eq(ordset_get(&s, keys[j], lens[j]), present[j] ? &present[j] : NULL);
        if (round % 301 == 0) cr_assert_eq(ordset__check(&s), 0, "round %d", round);
    }
    check_walk(&s, n);
    cr_assert_eq(ordset__check(&s), 0);
    /* delete everything: nothing is left */
    for (int i = 0; i < n; i++)
        if (present[i]) {
            cr_assert_eq(ordset_delete(&s, keys[i], lens[i]), &present[i]);
            present[i] = 0;
            if (i % 97 == 0) {
                check_walk(&s, n);
                cr_assert_eq(ordset__check(&s), 0);
            }
        }
    cr_assert_eq(ordset_size(&s), 0);
    cr_assert_eq(ordset_memory(&s), 0);
    ordset_deinit(&s);
}

Test(ordset, random_operations_of_a_few_keys_match_a_sorted_reference)
{
    srand(7);
    random_rounds(300, 4, 20000, 50);
}

Test(ordset, random_operations_over_several_levels_match_a_sorted_reference, .timeout = 60)
{
    srand(8);
    random_rounds(3000, 7, 40000, 70); /* grows to thousands of keys: inner levels split */
}

static const char *u64_key(const void *v, size_t *len)
{
    *len = 8;
    return v;
}

static void put_u64(uint8_t *k, uint64_t v)
{
    for (int b = 0; b < 8; b++) k[b] = (uint8_t)(v >> (56 - 8 * b));
}

/* n keys inserted in increasing (dir 1) or decreasing (dir -1) order: the leaves behind the
 * appends stay full (63 values in 512 bytes: 8.1 bytes a value), the inner nodes nearly so */
static void monotone_keys_fill_their_leaves(int dir)
{
    enum { N = 100000 };
    uint8_t(*k)[8] = malloc(sizeof(*k) * N);
    ordset_t s;
    ordset_init(&s, u64_key);
    for (int i = 0; i < N; i++) put_u64(k[i], (uint64_t)i);
    for (int j = 0; j < N; j++) {
        int i = dir > 0 ? j : N - 1 - j;
        ordset_insert(&s, k[i]);
        if (j % 9973 == 0) cr_assert_eq(ordset__check(&s), 0, "insert %d", j);
    }
    cr_assert_lt(ordset_memory(&s), (size_t)N * 9, "%zu bytes", ordset_memory(&s));
    cr_assert_eq(ordset__check(&s), 0);
    ordset_iter_t it;
    int i = 0;
    for (int more = ordset_seek(&s, NULL, 0, &it); more; more = ordset_next(&it), i++)
        cr_assert_eq(ordset_iter_val(&it), k[i]);
    cr_assert_eq(i, N);
    /* delete nine in ten: nodes are merged or share, every leaf keeps a quarter (15 values) */
    for (i = 0; i < N; i++)
        if (i % 10) cr_assert_eq(ordset_delete(&s, k[i], 8), k[i]);
    cr_assert_lt(ordset_memory(&s), (size_t)(N / 10) * 48, "%zu bytes", ordset_memory(&s));
    cr_assert_eq(ordset__check(&s), 0);
    i = 0;
    for (int more = ordset_seek(&s, "\0\0\0\0\0\0\0\x05", 8, &it); more;
         more = ordset_next(&it), i += 10)
        cr_assert_eq(ordset_iter_val(&it), k[i + 10]);
    cr_assert_eq(i, N - 10);
    ordset_deinit(&s);
    cr_assert_eq(ordset_memory(&s), 0);
    free(k);
}

Test(ordset, growing_keys_fill_their_leaves)
{
    monotone_keys_fill_their_leaves(1);
}

Test(ordset, shrinking_keys_fill_their_leaves)
{
    monotone_keys_fill_their_leaves(-1);
}

/* Random keys: a full leaf first shares with a neighbour that has room, else it and its full
 * neighbours become one leaf more (B*), so leaves stay about 89% full, not 69% */
Test(ordset, random_keys_fill_their_leaves_mostly, .timeout = 60)
{
    enum { N = 100000 };
    uint8_t(*k)[8] = malloc(sizeof(*k) * N);
    ordset_t s;
    ordset_init(&s, u64_key);
    for (int i = 0; i < N; i++) {
        put_u64(k[i], (uint64_t)i * 0x9e3779b97f4a7c15ull); /* distinct, scattered */
        ordset_insert(&s, k[i]);
        if (i % 9973 == 0) cr_assert_eq(ordset__check(&s), 0, "insert %d", i);
    }
    cr_assert_lt(ordset_memory(&s), (size_t)N * 10, "%zu bytes", ordset_memory(&s));
    cr_assert_eq(ordset__check(&s), 0);
    for (int i = 0; i < N; i++) cr_assert_eq(ordset_get(&s, k[i], 8), k[i]);
    /* interleaved: a third deleted while new keys come, then refilled; checked as it goes */
    srand(11);
    uint8_t(*k2)[8] = malloc(sizeof(*k2) * N);
    for (int i = 0; i < N; i++) {
        put_u64(k2[i], ((uint64_t)i + N) * 0x9e3779b97f4a7c15ull);
        if (i % 3 == 0) cr_assert_eq(ordset_delete(&s, k[i], 8), k[i]);
        if (i % 3 != 2) ordset_insert(&s, k2[i]);
        if (i % 9973 == 0) cr_assert_eq(ordset__check(&s), 0, "round %d", i);
    }
    cr_assert_eq(ordset__check(&s), 0);
    uint64_t want = N - (N + 2) / 3 + (uint64_t)(N - N / 3);
    cr_assert_eq(ordset_size(&s), want);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(ordset_get(&s, k[i], 8), i % 3 ? k[i] : NULL);
        cr_assert_eq(ordset_get(&s, k2[i], 8), i % 3 != 2 ? k2[i] : NULL);
    }
    for (int i = 0; i < N; i++) {
        if (i % 3) cr_assert_eq(ordset_delete(&s, k[i], 8), k[i]);
        if (i % 3 != 2) cr_assert_eq(ordset_delete(&s, k2[i], 8), k2[i]);
        if (i % 9973 == 0) cr_assert_eq(ordset__check(&s), 0, "delete %d", i);
    }
    cr_assert_eq(ordset_size(&s), 0);
    cr_assert_eq(ordset_memory(&s), 0);
    ordset_deinit(&s);
    free(k2);
    free(k);
}

/* The time index's pattern: keys that only grow are appended while random ones leave (a
 * rightmost leaf of one value emptied again, under inner nodes split at the end). */
Test(ordset, appends_mixed_with_random_deletes_stay_ordered, .timeout = 60)
{
    enum { N = 60000 };
    uint8_t(*k)[8] = malloc(sizeof(*k) * N);
    int *live = malloc(sizeof(int) * N), nlive = 0, next = 0;
    ordset_t s;
    ordset_init(&s, u64_key);
    srand(10);
    for (int round = 0; next < N; round++) {
        if (rand() % 100 < 55 || nlive == 0) {
            for (int b = 0; b < 8; b++) k[next][b] = (uint8_t)((uint64_t)next >> (56 - 8 * b));
            ordset_insert(&s, k[next]);
            live[nlive++] = next++;
        } else {
            int j = rand() % 2 ? rand() % nlive : nlive - 1, i = live[j]; /* or a newest */
            cr_assert_eq(ordset_delete(&s, k[i], 8), k[i]);
            live[j] = live[--nlive];
        }
        if (round % 20000) continue;
        cr_assert_eq(ordset__check(&s), 0, "round %d", round);
        ordset_iter_t it;
        const char *prev = NULL;
        int n = 0;
        for (int more = ordset_seek(&s, NULL, 0, &it); more; more = ordset_next(&it), n++) {
            size_t len;
            const char *key = ordset_iter_key(&it, &len);
            cr_assert(!prev || memcmp(prev, key, 8) < 0);
            prev = key;
        }
        cr_assert_eq(n, nlive);
    }
    cr_assert_eq(ordset_size(&s), (uint64_t)nlive);
    for (int j = 0; j < nlive; j++) cr_assert_eq(ordset_delete(&s, k[live[j]], 8), k[live[j]]);
    cr_assert_eq(ordset_memory(&s), 0);
    ordset_deinit(&s);
    free(live);
    free(k);
}

static const char *str_key(const void *v, size_t *len)
{
    *len = strlen(v);
    return v;
}

Test(ordset, a_set_of_one_is_small_and_an_emptied_set_holds_no_memory)
{
    static char x[] = "x";
    ordset_t s;
    ordset_init(&s, str_key);
    ordset_insert(&s, x);
    cr_assert_gt(ordset_memory(&s), 0);
    cr_assert_leq(ordset_memory(&s), 32);
    cr_assert_eq(ordset_get(&s, "x", 1), x);
    cr_assert_eq(ordset_delete(&s, "x", 1), x);
    cr_assert_eq(ordset_memory(&s), 0);
    ordset_iter_t it;
    cr_assert_eq(ordset_seek(&s, NULL, 0, &it), 0);
    cr_assert_eq(ordset_next(&it), 0);
    cr_assert_null(ordset_delete(&s, "x", 1));
    cr_assert_null(ordset_get(&s, "x", 1));
    ordset_deinit(&s);
}
