/* test_ordset.c - search/ordset.c: the skip list behind the name and time indexes, checked
 * against a sorted array under random inserts, deletes and seeks. */
#include "search/ordset.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define KEYS 3000

static char keys[KEYS][8];
static size_t lens[KEYS];
static int present[KEYS];

static int by_key(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    return ordset_cmp(keys[i], lens[i], keys[j], lens[j]);
}

/* The index of the first present key >= key[0..len) in bytewise order, or -1. */
static int ref_seek(const char *key, size_t len)
{
    int best = -1;
    for (int i = 0; i < KEYS; i++) {
        if (!present[i] || ordset_cmp(keys[i], lens[i], key, len) < 0) continue;
        if (best < 0 || ordset_cmp(keys[i], lens[i], keys[best], lens[best]) < 0) best = i;
    }
    return best;
}

Test(ordset, compare_is_bytewise_with_prefixes_first)
{
    cr_assert_lt(ordset_cmp("ab", 2, "abc", 3), 0);
    cr_assert_gt(ordset_cmp("b", 1, "abc", 3), 0);
    cr_assert_eq(ordset_cmp("", 0, "", 0), 0);
    cr_assert_lt(ordset_cmp("a\x01", 2, "a\xff", 2), 0); /* unsigned bytes */
}

Test(ordset, random_operations_match_a_sorted_reference)
{
    srand(7);
    for (int i = 0; i < KEYS; i++) { /* distinct short keys over a small alphabet, some empty */
        do {
            lens[i] = (size_t)(rand() % 8);
            for (size_t k = 0; k < lens[i]; k++) keys[i][k] = "ab\x00\xff"[rand() % 4];
        } while (({
            int dup = 0;
            for (int j = 0; j < i && !dup; j++)
                dup = lens[j] == lens[i] && memcmp(keys[j], keys[i], lens[i]) == 0;
            dup;
        }));
    }
    ordset_t s;
    ordset_init(&s);
    for (int round = 0; round < 20000; round++) {
        int i = rand() % KEYS;
        if (present[i]) {
            cr_assert_eq(ordset_delete(&s, keys[i], lens[i]), &present[i]);
            present[i] = 0;
        } else {
            ordset_insert(&s, keys[i], lens[i], &present[i]);
            present[i] = 1;
        }
        int j = rand() % KEYS, want = ref_seek(keys[j], lens[j]);
        ordset_node_t *n = ordset_seek(&s, keys[j], lens[j]);
        cr_assert_eq(n ? (int *)ordset_val(n) - present : -1, want);
        cr_assert_eq(ordset_get(&s, keys[j], lens[j]), present[j] ? &present[j] : NULL);
    }
    /* a full walk lists exactly the present keys in order */
    int order[KEYS], n = 0;
    for (int i = 0; i < KEYS; i++)
        if (present[i]) order[n++] = i;
    qsort(order, (size_t)n, sizeof(int), by_key);
    int k = 0;
    for (ordset_node_t *x = ordset_seek(&s, NULL, 0); x; x = ordset_next(x), k++) {
        size_t len;
        const char *key = ordset_key(x, &len);
        cr_assert_lt(k, n);
        cr_assert(len == lens[order[k]] && memcmp(key, keys[order[k]], len) == 0);
        cr_assert_eq(key, keys[order[k]], "the set keeps the caller's key, not a copy");
    }
    cr_assert_eq(k, n);
    cr_assert_eq(ordset_size(&s), (uint64_t)n);
    ordset_deinit(&s);
}

Test(ordset, an_emptied_set_holds_no_memory)
{
    ordset_t s;
    ordset_init(&s);
    ordset_insert(&s, "x", 1, &s);
    cr_assert_gt(ordset_memory(&s), 0);
    cr_assert_eq(ordset_delete(&s, "x", 1), &s);
    cr_assert_eq(ordset_memory(&s), 0);
    cr_assert_null(ordset_seek(&s, NULL, 0));
    cr_assert_null(ordset_delete(&s, "x", 1));
    ordset_deinit(&s);
}
