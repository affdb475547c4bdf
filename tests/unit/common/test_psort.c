/* test_psort.c - common/psort.c: the wanted ranks hold what a full sort puts there, for every
 * size around the algorithm's thresholds (7 and 40 elements), many ties and random slices;
 * nothing is lost or duplicated; a whole-range call sorts everything. That ties come out in
 * Redis's own order is checked against redis-server in tests/integration/test_geo.py. */
#include "common/psort.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

typedef struct item {
    int key;
    int id;
} item_t;

static int by_key(const void *pa, const void *pb)
{
    const item_t *a = pa, *b = pb;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int by_key_then_id(const void *pa, const void *pb)
{
    const item_t *a = pa, *b = pb;
    int r = by_key(a, b);
    return r ? r : (a->id > b->id) - (a->id < b->id);
}

static void fill(item_t *v, size_t n, int distinct)
{
    for (size_t i = 0; i < n; i++) v[i] = (item_t){rand() % distinct, (int)i};
}

Test(psort, wanted_ranks_hold_the_full_sorts_keys)
{
    srand(42);
    item_t v[300], full[300];
    for (int round = 0; round < 3000; round++) {
        size_t n = 1 + (size_t)rand() % (round < 1000 ? 60 : 300);
        fill(v, n, 1 + rand() % 20);
        memcpy(full, v, n * sizeof(*v));
        qsort(full, n, sizeof(*full), by_key);
        size_t lo = (size_t)rand() % n, hi = lo + (size_t)rand() % (n - lo);
        if (rand() % 3 == 0) lo = 0;
        psort(v, n, sizeof(*v), by_key, lo, hi);
        for (size_t i = lo; i <= hi; i++)
            cr_assert_eq(v[i].key, full[i].key, "n %zu slice %zu..%zu rank %zu", n, lo, hi, i);
        /* the same elements, each once */
        qsort(v, n, sizeof(*v), by_key_then_id);
        qsort(full, n, sizeof(*full), by_key_then_id);
        cr_assert_eq(memcmp(v, full, n * sizeof(*v)), 0);
    }
}

Test(psort, whole_range_sorts_everything)
{
    srand(7);
    item_t v[500];
    for (size_t n = 1; n <= 500; n += 7) {
        fill(v, n, 1000);
        psort(v, n, sizeof(*v), by_key, 0, n - 1);
        for (size_t i = 1; i < n; i++) cr_assert_leq(v[i - 1].key, v[i].key);
    }
}

static int first_byte(const void *a, const void *b)
{
    return *(const unsigned char *)a - *(const unsigned char *)b;
}

Test(psort, odd_element_sizes)
{
    unsigned char v[41][3];
    for (int i = 0; i < 41; i++) {
        v[i][0] = (unsigned char)(40 - i);
        v[i][1] = 'x';
        v[i][2] = (unsigned char)i;
    }
    psort(v, 41, 3, first_byte, 0, 4);
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(v[i][0], i);
        cr_assert_eq(v[i][2], 40 - i); /* the whole element moved */
    }
}
