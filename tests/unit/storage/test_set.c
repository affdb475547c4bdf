/* test_set.c - storage/t_set.c: how a set picks and changes its encoding (intset widths,
 * conversion to hashtable on a non-integer or past set_max_intset_entries, never back), the
 * element views across encodings, the obj_types hooks, and a model test: random adds and
 * removals of integers of every width and of strings, checked after each step against a plain
 * array for length and membership, and regularly for iteration (sorted while an intset), scan,
 * dup and random sampling. */
#include "storage/t_set.h"

#include "common/alloc.h"
#include "common/buf.h"
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
    storage_params.set_max_intset_entries = 512;
    srand(4242);
}

static void teardown(void)
{
    storage_params = saved;
}

TestSuite(set, .init = setup, .fini = teardown);

static const char *enc(const set_t *s)
{
    return obj_encoding_name(&s->h);
}

/* The members of s in iteration order, joined by spaces. */
static char *members(const set_t *s)
{
    buf_t b;
    buf_init(&b);
    buf_reserve(&b, 64);
    set_iter_t it;
    set_elem_t e;
    set_iter_init(&it, s);
    while (set_iter_next(&it, &e)) {
        if (b.len) buf_push(&b, ' ');
        buf_append(&b, e.p, e.len);
    }
    set_iter_deinit(&it);
    char *r = xstrdup(b.data);
    buf_deinit(&b);
    return r;
}

static void expect_members(const set_t *s, const char *want)
{
    char *got = members(s);
    cr_assert_str_eq(got, want);
    xfree(got);
}

Test(set, first_member_picks_the_encoding)
{
    static const struct {
        const char *m;
        const char *enc;
    } cases[] = {
        {"0", "intset"},
        {"-1", "intset"},
        {"9223372036854775807", "intset"},
        {"-9223372036854775808", "intset"},
        {"9223372036854775808", "hashtable"},
        {"01", "hashtable"},
        {"-0", "hashtable"},
        {"+1", "hashtable"},
        {" 1", "hashtable"},
        {"1 ", "hashtable"},
        {"", "hashtable"},
        {"1.5", "hashtable"},
        {"abc", "hashtable"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        set_t *s = set_new_for(cases[i].m, strlen(cases[i].m));
        cr_assert_str_eq(enc(s), cases[i].enc, "%s", cases[i].m);
        cr_assert_eq(set_add(s, cases[i].m, strlen(cases[i].m)), 1);
        cr_assert_str_eq(enc(s), cases[i].enc, "%s after the add", cases[i].m);
        cr_assert(set_contains(s, cases[i].m, strlen(cases[i].m)));
        cr_assert_eq(set_length(s), 1);
        set_free(s);
    }
}

Test(set, intset_widens_and_stays_sorted)
{
    set_t *s = set_new(ENC_INTSET);
    cr_assert_eq(set_add(s, S("5")), 1);
    cr_assert_eq(set_add(s, S("-3")), 1);
    cr_assert_eq(set_add(s, S("5")), 0);
    size_t small = set_memory(s);
    expect_members(s, "-3 5");
    /* 16 -> 32 bits, prepending a negative */
    cr_assert_eq(set_add(s, S("-40000")), 1);
    expect_members(s, "-40000 -3 5");
    cr_assert_geq(set_memory(s), small);
    cr_assert_geq(set_memory(s), sizeof(set_t) + 8 + 3 * 4);
    /* 32 -> 64 bits, appending a positive */
    cr_assert_eq(set_add(s, S("5000000000")), 1);
    cr_assert_eq(set_add(s, S("100")), 1);
    cr_assert_eq(set_add(s, S("-9223372036854775808")), 1);
    cr_assert_eq(set_add(s, S("9223372036854775807")), 1);
    expect_members(s, "-9223372036854775808 -40000 -3 5 100 5000000000 9223372036854775807");
    cr_assert_geq(set_memory(s), sizeof(set_t) + 8 + 7 * 8);
    cr_assert_str_eq(enc(s), "intset");
    cr_assert(set_contains(s, S("5000000000")));
    cr_assert(!set_contains(s, S("5000000001")));
    cr_assert(!set_contains(s, S("x")));
    cr_assert(!set_contains(s, S("05")));
    /* removals keep the width and the order */
    cr_assert_eq(set_remove(s, S("5000000000")), 1);
    cr_assert_eq(set_remove(s, S("5000000000")), 0);
    cr_assert_eq(set_remove(s, S("-9223372036854775808")), 1);
    cr_assert_eq(set_remove(s, S("nope")), 0);
    expect_members(s, "-40000 -3 5 100 9223372036854775807");
    cr_assert_eq(set_length(s), 5);
    set_free(s);
}

Test(set, a_value_wider_than_the_set_is_never_found)
{
    set_t *s = set_new(ENC_INTSET);
    set_add(s, S("1"));
    cr_assert(!set_contains(s, S("65537")));
    cr_assert(!set_contains(s, S("-4294967297")));
    cr_assert_eq(set_remove(s, S("4294967297")), 0);
    cr_assert_eq(set_length(s), 1);
    set_free(s);
}

Test(set, converts_to_hashtable_and_never_back)
{
    storage_params.set_max_intset_entries = 3;
    set_t *s = set_new(ENC_INTSET);
    set_add(s, S("3"));
    set_add(s, S("1"));
    set_add(s, S("2"));
    cr_assert_str_eq(enc(s), "intset");
    cr_assert_eq(set_add(s, S("2")), 0);
    cr_assert_str_eq(enc(s), "intset");
    cr_assert_eq(set_add(s, S("4")), 1);
    cr_assert_str_eq(enc(s), "hashtable");
    cr_assert_eq(set_length(s), 4);
    for (const char *m = "1234"; *m; m++) cr_assert(set_contains(s, m, 1));
    cr_assert_eq(set_remove(s, S("4")), 1);
    cr_assert_eq(set_remove(s, S("3")), 1);
    cr_assert_str_eq(enc(s), "hashtable");
    set_free(s);

    storage_params.set_max_intset_entries = 512;
    s = set_new(ENC_INTSET);
    set_add(s, S("7"));
    cr_assert_eq(set_add(s, S("seven")), 1);
    cr_assert_str_eq(enc(s), "hashtable");
    cr_assert(set_contains(s, S("7")) && set_contains(s, S("seven")));
    cr_assert_eq(set_add(s, S("7")), 0);
    cr_assert_eq(set_remove(s, S("seven")), 1);
    cr_assert_str_eq(enc(s), "hashtable");
    set_free(s);

    /* a limit of 0 converts at the first add, as in Redis */
    storage_params.set_max_intset_entries = 0;
    s = set_new_for(S("1"));
    set_add(s, S("1"));
    cr_assert_str_eq(enc(s), "hashtable");
    set_free(s);
}

Test(set, convert_is_a_no_op_on_a_hashtable)
{
    set_t *s = set_new(ENC_INTSET);
    for (int i = 0; i < 10; i++) {
        char m[8];
        set_add(s, m, (size_t)snprintf(m, sizeof(m), "%d", i * 3));
    }
    set_convert(s, ENC_HT);
    cr_assert_str_eq(enc(s), "hashtable");
    set_convert(s, ENC_HT);
    cr_assert_eq(set_length(s), 10);
    cr_assert(set_contains(s, S("27")));
    cr_assert(!set_contains(s, S("28")));
    set_free(s);
}

Test(set, elements_cross_encodings)
{
    set_t *ints = set_new(ENC_INTSET), *strs = set_new(ENC_HT);
    set_add(ints, S("42"));
    set_add(strs, S("17"));
    set_add(strs, S("x"));
    set_elem_t e;
    set_iter_t it;
    /* an intset element is an integer with its decimal bytes */
    set_iter_init(&it, ints);
    cr_assert(set_iter_next(&it, &e));
    cr_assert(e.isint && e.v == 42 && e.len == 2 && memcmp(e.p, "42", 2) == 0);
    cr_assert(!set_iter_next(&it, &e));
    set_iter_deinit(&it);
    cr_assert(!set_contains_elem(strs, &e));
    cr_assert_eq(set_add_elem(strs, &e), 1);
    cr_assert(set_contains(strs, S("42")));
    /* a hashtable element carries its hash; an integer string goes into an intset as one */
    set_t *dst = set_new(ENC_INTSET);
    set_iter_init(&it, strs);
    int n = 0;
    while (set_iter_next(&it, &e)) {
        cr_assert(e.hashed && !e.isint);
        cr_assert_eq(e.hash, dict_hash(e.p, e.len));
        if (e.len == 2 && memcmp(e.p, "17", 2) == 0) {
            cr_assert_eq(set_add_elem(dst, &e), 1);
            cr_assert_str_eq(enc(dst), "intset");
            cr_assert(set_contains_elem(ints, &e) == 0);
        }
        n++;
    }
    set_iter_deinit(&it);
    cr_assert_eq(n, 3);
    expect_members(dst, "17");
    set_free(ints);
    set_free(strs);
    set_free(dst);
}

Test(set, obj_hooks_are_registered)
{
    set_t *s = set_new(ENC_INTSET);
    set_add(s, S("1"));
    set_add(s, S("2"));
    cr_assert_str_eq(obj_type_name(s->h.type), "set");
    cr_assert_eq(obj_length(&s->h), 2);
    cr_assert_geq(obj_memory(&s->h), sizeof(set_t) + 8 + 4);
    set_t *d = (set_t *)obj_dup(&s->h);
    cr_assert_neq(d, s);
    cr_assert_str_eq(enc(d), "intset");
    set_add(d, S("x"));
    cr_assert_eq(set_length(s), 2);
    cr_assert_eq(obj_length(&d->h), 3);
    cr_assert_str_eq(obj_encoding_name(&d->h), "hashtable");
    obj_t *dd = obj_dup(&d->h);
    cr_assert_eq(obj_length(dd), 3);
    cr_assert(set_contains((set_t *)dd, S("x")));
    obj_free(dd);
    obj_free(&d->h);
    obj_free(&s->h);
}

Test(set, memory_counts_every_member)
{
    set_t *s = set_new(ENC_HT);
    for (int i = 0; i < 1000; i++) {
        char m[32];
        set_add(s, m, (size_t)snprintf(m, sizeof(m), "member:%06d", i));
        if (i % 100 == 99) {
            size_t now = set_memory(s), n = (size_t)i + 1;
            /* each member: one block of the 16-byte node and its 13 bytes (the estimate past
             * 128 members samples equal-sized blocks, so it is exact here too) */
            cr_assert_geq(now, n * 29 + n * sizeof(void *) / 2);
            cr_assert_leq(now, n * 64 + 4 * n * sizeof(void *) + 1024);
        }
    }
    set_free(s);
}

/* Scan callback: members must come in ascending order 1, 2, 3 ... */
static void count_ascending(void *ud, const set_elem_t *e)
{
    int *count = ud;
    cr_assert_eq(e->v, ++*count);
}

Test(set, scan_of_an_intset_is_one_step)
{
    set_t *s = set_new(ENC_INTSET);
    for (int i = 0; i < 100; i++) {
        char m[8];
        set_add(s, m, (size_t)snprintf(m, sizeof(m), "%d", 100 - i));
    }
    int count = 0;
    cr_assert_eq(set_scan(s, 0, count_ascending, &count), 0);
    cr_assert_eq(count, 100);
    set_free(s);
}

Test(set, random_members_of_an_intset_are_uniform)
{
    set_t *s = set_new(ENC_INTSET);
    for (int i = 0; i < 10; i++) {
        char m[4];
        set_add(s, m, (size_t)snprintf(m, sizeof(m), "%d", i));
    }
    int seen[10] = {0};
    for (int i = 0; i < 10000; i++) {
        set_elem_t e;
        set_random(s, &e);
        cr_assert(e.isint && e.v >= 0 && e.v < 10);
        seen[e.v]++;
    }
    for (int i = 0; i < 10; i++) cr_assert(seen[i] > 800 && seen[i] < 1200, "%d: %d", i, seen[i]);
    set_free(s);
}

/* ---- model test ---- */

typedef struct model {
    char **m;
    size_t *len;
    char *seen; /* scan marks */
    size_t n, cap;
} model_t;

static long model_find(const model_t *md, const char *m, size_t len)
{
    for (size_t i = 0; i < md->n; i++)
        if (md->len[i] == len && memcmp(md->m[i], m, len) == 0) return (long)i;
    return -1;
}

static int model_add(model_t *md, const char *m, size_t len)
{
    if (model_find(md, m, len) >= 0) return 0;
    if (md->n == md->cap) {
        md->cap = md->cap ? md->cap * 2 : 64;
        md->m = xrealloc(md->m, md->cap * sizeof(*md->m));
        md->len = xrealloc(md->len, md->cap * sizeof(*md->len));
        md->seen = xrealloc(md->seen, md->cap);
    }
    md->m[md->n] = xmemdup(m, len);
    md->len[md->n++] = len;
    return 1;
}

static int model_remove(model_t *md, const char *m, size_t len)
{
    long i = model_find(md, m, len);
    if (i < 0) return 0;
    xfree(md->m[i]);
    md->m[i] = md->m[md->n - 1];
    md->len[i] = md->len[md->n - 1];
    md->n--;
    return 1;
}

static void model_free(model_t *md)
{
    for (size_t i = 0; i < md->n; i++) xfree(md->m[i]);
    xfree(md->m);
    xfree(md->len);
    xfree(md->seen);
}

/* A member: mostly integers of every width, sometimes a string or a non-canonical integer. */
static size_t random_member(char *buf, int allow_strings)
{
    static const long long bounds[] = {100, 40000, 3000000000LL, 9000000000000000000LL};
    int r = rand() % 100;
    if (allow_strings && r < 4) return (size_t)snprintf(buf, 32, "s%d", rand() % 50);
    if (allow_strings && r < 5) return (size_t)snprintf(buf, 32, "0%d", rand() % 50);
    long long b = bounds[rand() % 4];
    long long v =
        (long long)(((unsigned long long)rand() << 31 | (unsigned)rand()) % (unsigned long long)b);
    if (rand() % 2) v = -v;
    if (rand() % 3 == 0) v = rand() % 300; /* collisions */
    return (size_t)snprintf(buf, 32, "%lld", v);
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static void mark(void *ud, const set_elem_t *e)
{
    model_t *md = ud;
    long i = model_find(md, e->p, e->len);
    cr_assert_geq(i, 0, "scan returned a stranger %.*s", (int)e->len, e->p);
    md->seen[i] = 1;
}

/* Iteration, scan, dup and random against the model. */
static void check_whole(set_t *s, model_t *md)
{
    set_iter_t it;
    set_elem_t e;
    size_t n = 0;
    long long prev = 0;
    set_iter_init(&it, s);
    while (set_iter_next(&it, &e)) {
        cr_assert_geq(model_find(md, e.p, e.len), 0, "stranger %.*s", (int)e.len, e.p);
        if (s->h.enc == ENC_INTSET) {
            cr_assert(e.isint);
            if (n) cr_assert_gt(e.v, prev, "intset out of order");
            prev = e.v;
        }
        n++;
    }
    set_iter_deinit(&it);
    cr_assert_eq(n, md->n);
    /* a full scan visits everything */
    uint64_t cursor = 0;
    if (md->n) memset(md->seen, 0, md->n);
    do cursor = set_scan(s, cursor, mark, md);
    while (cursor);
    for (size_t i = 0; i < md->n; i++) cr_assert(md->seen[i], "scan missed %s", md->m[i]);
    set_t *d = set_dup(s);
    cr_assert_eq(set_length(d), md->n);
    cr_assert_eq(d->h.enc, s->h.enc);
    for (size_t i = 0; i < md->n; i++) cr_assert(set_contains(d, md->m[i], md->len[i]));
    set_free(d);
    if (md->n) {
        set_random(s, &e);
        cr_assert_geq(model_find(md, e.p, e.len), 0);
    }
}

static void model_run(int allow_strings, uint32_t limit, int steps)
{
    storage_params.set_max_intset_entries = limit;
    model_t md = {0};
    set_t *s = set_new(ENC_INTSET);
    int was_ht = 0;
    for (int step = 0; step < steps; step++) {
        char m[32];
        size_t len = random_member(m, allow_strings);
        int op = rand() % 10;
        if (op < 6) {
            cr_assert_eq(set_add(s, m, len), model_add(&md, m, len), "add %s", m);
        } else if (op < 9) {
            cr_assert_eq(set_remove(s, m, len), model_remove(&md, m, len), "remove %s", m);
        } else if (md.n) {
            size_t i = (size_t)rand() % md.n;
            cr_assert(set_contains(s, md.m[i], md.len[i]));
        }
        cr_assert(set_contains(s, m, len) == (model_find(&md, m, len) >= 0), "contains %s", m);
        cr_assert_eq(set_length(s), md.n);
        if (s->h.enc == ENC_HT) was_ht = 1;
        cr_assert(!(was_ht && s->h.enc == ENC_INTSET), "converted back to intset");
        if (s->h.enc == ENC_INTSET) cr_assert_leq(set_length(s), limit);
        if (step % 500 == 0) check_whole(s, &md);
    }
    check_whole(s, &md);
    /* an intset model: the members sorted numerically */
    if (s->h.enc == ENC_INTSET && md.n) {
        long long *v = xmalloc(md.n * sizeof(*v));
        for (size_t i = 0; i < md.n; i++) cr_assert(str_to_ll(md.m[i], md.len[i], &v[i]));
        qsort(v, md.n, sizeof(*v), cmp_ll);
        set_iter_t it;
        set_elem_t e;
        size_t i = 0;
        set_iter_init(&it, s);
        while (set_iter_next(&it, &e)) cr_assert_eq(e.v, v[i++]);
        set_iter_deinit(&it);
        xfree(v);
    }
    set_free(s);
    model_free(&md);
}

Test(set, model_integers_stay_an_intset_under_the_limit)
{
    model_run(0, 100000, 6000);
}

Test(set, model_integers_past_a_small_limit)
{
    model_run(0, 64, 6000);
}

Test(set, model_mixed_members)
{
    model_run(1, 512, 8000);
}
