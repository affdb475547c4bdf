/* test_zset.c - storage/t_zset.c: range parsing, both encodings and the conversions between
 * them, and a model test: random adds (with every flag), removals, increments and range
 * deletions checked after each step against a sorted array, for ranks, scores, iteration in
 * both directions, score and lex ranges with offsets, counts, random sampling, scan and dup.
 * The big-set model tests do the same on trees of several levels that grow and shrink to
 * empty repeatedly (ties, infinities, members that are prefixes of each other, rank, score
 * and lex range deletions, offsets past a leaf), and on sets built by ascending, descending
 * and bulk insertion. */
#include "storage/t_zset.h"

#include "common/alloc.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S(lit) lit, sizeof(lit) - 1

static storage_params_t saved;

static void setup(void)
{
    saved = storage_params;
    srand(12345);
}

static void teardown(void)
{
    storage_params = saved;
}

TestSuite(zset, .init = setup, .fini = teardown);

/* ---- a sorted-array model ---- */

typedef struct mentry {
    char *m;
    size_t len;
    double s;
} mentry_t;

typedef struct model {
    mentry_t *v;
    size_t n, cap;
} model_t;

static int mcmp(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c;
    return alen < blen ? -1 : alen > blen;
}

static int entry_cmp(double s1, const char *m1, size_t l1, double s2, const char *m2, size_t l2)
{
    if (s1 < s2) return -1;
    if (s1 > s2) return 1;
    return mcmp(m1, l1, m2, l2);
}

static long model_find(const model_t *md, const char *m, size_t len)
{
    for (size_t i = 0; i < md->n; i++)
        if (md->v[i].len == len && !mcmp(md->v[i].m, len, m, len)) return (long)i;
    return -1;
}

static void model_del(model_t *md, size_t i)
{
    free(md->v[i].m);
    memmove(md->v + i, md->v + i + 1, (md->n - i - 1) * sizeof(mentry_t));
    md->n--;
}

static void model_put(model_t *md, const char *m, size_t len, double s)
{
    long i = model_find(md, m, len);
    if (i >= 0) model_del(md, (size_t)i);
    if (md->n == md->cap) {
        md->cap = md->cap ? md->cap * 2 : 16;
        md->v = realloc(md->v, md->cap * sizeof(mentry_t));
    }
    size_t k = 0;
    while (k < md->n && entry_cmp(md->v[k].s, md->v[k].m, md->v[k].len, s, m, len) < 0) k++;
    memmove(md->v + k + 1, md->v + k, (md->n - k) * sizeof(mentry_t));
    md->v[k].m = malloc(len + 1);
    memcpy(md->v[k].m, m, len);
    md->v[k].len = len;
    md->v[k].s = s;
    md->n++;
}

static void model_free(model_t *md)
{
    for (size_t i = 0; i < md->n; i++) free(md->v[i].m);
    free(md->v);
    memset(md, 0, sizeof(*md));
}

static int same_score(double a, double b)
{
    return a == b && signbit(a) == signbit(b);
}

/* Every observable property of z against md. */
static void check_equal(const zset_t *z, const model_t *md)
{
    cr_assert_eq(zset_length(z), md->n);
    zset_iter_t it;
    zset_entry_t e;
    size_t i = 0;
    zset_iter_rank(&it, z, 0, 0);
    while (zset_iter_next(&it, &e)) {
        cr_assert_lt(i, md->n);
        cr_assert_eq(e.len, md->v[i].len);
        cr_assert(!mcmp(e.member, e.len, md->v[i].m, md->v[i].len), "member at rank %zu", i);
        cr_assert_eq(e.score, md->v[i].s, "score at rank %zu", i);
        i++;
    }
    cr_assert_eq(i, md->n);
    zset_iter_rank(&it, z, 0, 1);
    while (zset_iter_next(&it, &e)) {
        cr_assert_gt(i, 0);
        i--;
        cr_assert(!mcmp(e.member, e.len, md->v[i].m, md->v[i].len), "reverse at %zu", i);
    }
    cr_assert_eq(i, 0);
    for (i = 0; i < md->n; i++) {
        double s;
        cr_assert_eq(zset_rank(z, md->v[i].m, md->v[i].len, 0), (long long)i);
        cr_assert_eq(zset_rank(z, md->v[i].m, md->v[i].len, 1), (long long)(md->n - 1 - i));
        cr_assert(zset_score(z, md->v[i].m, md->v[i].len, &s));
        cr_assert_eq(s, md->v[i].s);
        zset_entry_at(z, i, &e);
        cr_assert(!mcmp(e.member, e.len, md->v[i].m, md->v[i].len));
    }
}

/* Checks score-range iteration (both directions, with offsets) and counts against md. */
static void check_score_range(const zset_t *z, const model_t *md, const zset_range_t *r)
{
    size_t want[4096], nw = 0;
    for (size_t i = 0; i < md->n; i++)
        if (zset_score_gte_min(md->v[i].s, r) && zset_score_lte_max(md->v[i].s, r)) want[nw++] = i;
    cr_assert_eq(zset_count_range(z, r), nw);
    for (int rev = 0; rev < 2; rev++) {
        for (size_t off = 0; off < 3; off++) {
            zset_iter_t it;
            zset_entry_t e;
            zset_iter_score(&it, z, r, rev);
            zset_iter_skip(&it, off);
            size_t k = off;
            while (zset_iter_next(&it, &e)) {
                cr_assert_lt(k, nw);
                size_t idx = rev ? want[nw - 1 - k] : want[k];
                cr_assert(!mcmp(e.member, e.len, md->v[idx].m, md->v[idx].len));
                k++;
            }
            cr_assert_eq(k, nw > off ? nw : off, "range count rev=%d off=%zu", rev, off);
        }
    }
}

static void check_lex_range(const zset_t *z, const model_t *md, const zset_lex_range_t *r)
{
    size_t nw = 0, first = 0;
    for (size_t i = 0; i < md->n; i++) {
        if (zset_lex_gte_min(md->v[i].m, md->v[i].len, r) &&
            zset_lex_lte_max(md->v[i].m, md->v[i].len, r)) {
            if (!nw) first = i;
            nw++;
        }
    }
    cr_assert_eq(zset_count_lex(z, r), nw);
    for (int rev = 0; rev < 2; rev++) {
        zset_iter_t it;
        zset_entry_t e;
        size_t k = 0;
        zset_iter_lex(&it, z, r, rev);
        while (zset_iter_next(&it, &e)) {
            size_t idx = rev ? first + nw - 1 - k : first + k;
            cr_assert_lt(k, nw);
            cr_assert(!mcmp(e.member, e.len, md->v[idx].m, md->v[idx].len));
            k++;
        }
        cr_assert_eq(k, nw);
    }
}

/* ---- range parsing ---- */

Test(zset, parses_score_ranges_as_redis)
{
    zset_range_t r;
    cr_assert_eq(zset_parse_range(S("1"), S("(2.5"), &r), 0);
    cr_assert(r.min == 1 && !r.minex && r.max == 2.5 && r.maxex);
    cr_assert_eq(zset_parse_range(S("-inf"), S("+inf"), &r), 0);
    cr_assert(isinf(r.min) && r.min < 0 && isinf(r.max) && r.max > 0);
    cr_assert_eq(zset_parse_range(S("(-5.94971599E8"), S("1.0E7"), &r), 0);
    cr_assert(r.min == -594971599.0 && r.minex && r.max == 1e7);
    /* strtod over the whole string: empty means 0, leading space is skipped */
    cr_assert_eq(zset_parse_range(S(""), S("("), &r), 0);
    cr_assert(r.min == 0 && !r.minex && r.max == 0 && r.maxex);
    cr_assert_eq(zset_parse_range(S(" 1"), S("0x10"), &r), 0);
    cr_assert(r.min == 1 && r.max == 16);
    cr_assert_eq(zset_parse_range(S("1 "), S("2"), &r), -1);
    cr_assert_eq(zset_parse_range(S("1"), S("abc"), &r), -1);
    cr_assert_eq(zset_parse_range(S("nan"), S("1"), &r), -1);
    cr_assert_eq(zset_parse_range(S("(("), S("1"), &r), -1);
    cr_assert_eq(zset_parse_range("1\0x", 3, S("2"), &r), 0); /* stops at NUL, as an sds */
}

Test(zset, parses_lex_ranges_as_redis)
{
    zset_lex_range_t r;
    cr_assert_eq(zset_parse_lex_range(S("-"), S("+"), &r), 0);
    cr_assert(r.min.kind == ZLEX_MIN && r.max.kind == ZLEX_MAX);
    cr_assert_eq(zset_parse_lex_range(S("[a"), S("(bc"), &r), 0);
    cr_assert(r.min.kind == ZLEX_VALUE && !r.min.ex && r.min.len == 1 && r.min.p[0] == 'a');
    cr_assert(r.max.ex && r.max.len == 2 && !memcmp(r.max.p, "bc", 2));
    cr_assert_eq(zset_parse_lex_range(S("["), S("("), &r), 0);
    cr_assert_eq(r.min.len, 0);
    cr_assert_eq(zset_parse_lex_range(S("a"), S("+"), &r), -1);
    cr_assert_eq(zset_parse_lex_range(S("-"), S("++"), &r), -1);
    cr_assert_eq(zset_parse_lex_range(S(""), S("+"), &r), -1);
    cr_assert_eq(zset_parse_lex_range(S("-"), S(""), &r), -1);
}

/* ---- encodings ---- */

Test(zset, starts_as_listpack_and_converts_on_entry_count)
{
    storage_params.zset_max_listpack_entries = 4;
    zset_t *z = zset_new();
    int out;
    char m[16];
    for (int i = 0; i < 4; i++) {
        snprintf(m, sizeof(m), "m%d", i);
        cr_assert_eq(zset_add(z, m, 2, i, 0, &out, NULL), 0);
        cr_assert_eq(out, ZSET_OUT_ADDED);
    }
    cr_assert_str_eq(obj_encoding_name(&z->h), "listpack");
    zset_add(z, "m4", 2, 4, 0, &out, NULL);
    cr_assert_str_eq(obj_encoding_name(&z->h), "skiplist");
    cr_assert_eq(zset_length(z), 5);
    cr_assert_eq(zset_rank(z, "m3", 2, 0), 3);
    /* removing does not convert back */
    zset_remove(z, "m4", 2);
    zset_remove(z, "m3", 2);
    cr_assert_eq(z->h.enc, ENC_SKIPLIST);
    cr_assert_eq(obj_length(&z->h), 3);
    obj_free(&z->h);
}

Test(zset, converts_on_member_length)
{
    storage_params.zset_max_listpack_value = 8;
    zset_t *z = zset_new();
    int out;
    zset_add(z, "12345678", 8, 1, 0, &out, NULL);
    cr_assert_eq(z->h.enc, ENC_LISTPACK);
    zset_add(z, "123456789", 9, 2, 0, &out, NULL);
    cr_assert_eq(z->h.enc, ENC_SKIPLIST);
    double s;
    cr_assert(zset_score(z, "12345678", 8, &s) && s == 1);
    zset_free(z);
}

Test(zset, listpack_stores_negative_zero_as_zero_skiplist_keeps_it)
{
    int out;
    zset_t *z = zset_new();
    zset_add(z, "a", 1, -0.0, 0, &out, NULL);
    double s;
    zset_score(z, "a", 1, &s);
    cr_assert(s == 0 && !signbit(s));
    zset_free(z);
    storage_params.zset_max_listpack_entries = 0;
    z = zset_new();
    zset_add(z, "a", 1, -0.0, 0, &out, NULL);
    cr_assert_eq(z->h.enc, ENC_SKIPLIST);
    zset_score(z, "a", 1, &s);
    cr_assert(s == 0 && signbit(s));
    zset_free(z);
}

Test(zset, add_flags_behave_as_zadd)
{
    int out;
    double ns = 0;
    for (int enc = 0; enc < 2; enc++) {
        zset_t *z = zset_new();
        if (enc) zset_convert(z, ENC_SKIPLIST);
        cr_assert_eq(zset_add(z, "a", 1, 5, ZSET_IN_XX, &out, &ns), 0);
        cr_assert_eq(out, ZSET_OUT_NOP);
        cr_assert_eq(zset_length(z), 0);
        zset_add(z, "a", 1, 5, ZSET_IN_NX, &out, &ns);
        cr_assert_eq(out, ZSET_OUT_ADDED);
        zset_add(z, "a", 1, 7, ZSET_IN_NX, &out, &ns);
        cr_assert_eq(out, ZSET_OUT_NOP);
        zset_add(z, "a", 1, 3, ZSET_IN_GT, &out, &ns);
        cr_assert_eq(out, ZSET_OUT_NOP);
        zset_add(z, "a", 1, 9, ZSET_IN_GT, &out, &ns);
        cr_assert(out == ZSET_OUT_UPDATED && ns == 9);
        zset_add(z, "a", 1, 10, ZSET_IN_LT, &out, &ns);
        cr_assert_eq(out, ZSET_OUT_NOP);
        zset_add(z, "a", 1, 9, 0, &out, &ns); /* same score: neither updated nor NOP */
        cr_assert(out == 0 && ns == 9);
        zset_add(z, "a", 1, -2, ZSET_IN_INCR | ZSET_IN_XX, &out, &ns);
        cr_assert(out == ZSET_OUT_UPDATED && ns == 7);
        zset_add(z, "a", 1, 1, ZSET_IN_INCR | ZSET_IN_LT, &out, &ns);
        cr_assert_eq(out, ZSET_OUT_NOP);
        zset_add(z, "b", 1, 2.5, ZSET_IN_INCR | ZSET_IN_GT, &out, &ns);
        cr_assert(out == ZSET_OUT_ADDED && ns == 2.5);
        zset_add(z, "c", 1, INFINITY, 0, &out, &ns);
        cr_assert_eq(zset_add(z, "c", 1, -INFINITY, ZSET_IN_INCR, &out, &ns), -1);
        cr_assert_eq(zset_add(z, "d", 1, NAN, 0, &out, &ns), -1);
        double s;
        cr_assert(zset_score(z, "c", 1, &s) && isinf(s));
        cr_assert_eq(zset_rank(z, "b", 1, 0), 0);
        cr_assert_eq(zset_rank(z, "c", 1, 1), 0);
        cr_assert_eq(zset_rank(z, "zz", 2, 0), -1);
        zset_free(z);
    }
}

Test(zset, long_members_round_trip_in_listpack)
{
    storage_params.zset_max_listpack_value = 1 << 20;
    size_t lens[] = {0, 30, 31, 32, 127, 128, 200, 16383, 16384, 70000};
    zset_t *z = zset_new();
    model_t md = {0};
    int out;
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        char *m = malloc(lens[i] + 1);
        memset(m, 'a' + (int)i, lens[i]);
        double score = i % 2 ? 0.5 + i : (double)(i * 100000);
        zset_add(z, m, lens[i], score, 0, &out, NULL);
        model_put(&md, m, lens[i], score);
        free(m);
    }
    cr_assert_eq(z->h.enc, ENC_LISTPACK);
    check_equal(z, &md);
    zset_convert(z, ENC_SKIPLIST);
    check_equal(z, &md);
    zset_convert(z, ENC_LISTPACK);
    check_equal(z, &md);
    model_free(&md);
    zset_free(z);
}

Test(zset, score_kinds_are_exact)
{
    double scores[] = {0,
                       1,
                       -1,
                       127,
                       128,
                       -128,
                       -129,
                       32767,
                       32768,
                       -32769,
                       2147483647.0,
                       -2147483648.0,
                       2147483648.0,
                       0.1,
                       1e300,
                       -1e-300,
                       INFINITY,
                       -INFINITY,
                       4503599627370496.0,
                       1.5};
    zset_t *z = zset_new();
    int out;
    char m[16];
    for (size_t i = 0; i < sizeof(scores) / sizeof(scores[0]); i++) {
        int n = snprintf(m, sizeof(m), "m%zu", i);
        zset_add(z, m, (size_t)n, scores[i], 0, &out, NULL);
    }
    for (size_t i = 0; i < sizeof(scores) / sizeof(scores[0]); i++) {
        int n = snprintf(m, sizeof(m), "m%zu", i);
        double s;
        cr_assert(zset_score(z, m, (size_t)n, &s));
        cr_assert(same_score(s, scores[i]), "score %zu: %.17g", i, s);
    }
    zset_free(z);
}

Test(zset, from_sorted_picks_redis_encoding)
{
    zset_entry_t v[3] = {{"a", 1, 1}, {"b", 1, 2}, {"c", 1, -0.0}};
    v[2].score = 3;
    zset_t *z = zset_from_sorted(v, 3);
    cr_assert_eq(z->h.enc, ENC_LISTPACK);
    zset_free(z);
    storage_params.zset_max_listpack_entries = 2;
    z = zset_from_sorted(v, 3);
    cr_assert_eq(z->h.enc, ENC_SKIPLIST);
    cr_assert_eq(zset_rank(z, "c", 1, 0), 2);
    zset_t *d = zset_dup(z);
    cr_assert_eq(d->h.enc, ENC_SKIPLIST);
    cr_assert_eq(zset_rank(d, "a", 1, 1), 2);
    zset_free(d);
    zset_free(z);
    storage_params.zset_max_listpack_entries = 128;
    storage_params.zset_max_listpack_value = 0;
    z = zset_from_sorted(v, 1);
    cr_assert_eq(z->h.enc, ENC_SKIPLIST);
    zset_free(z);
}

Test(zset, lex_ranges_on_equal_scores)
{
    const char *ms[] = {"a", "b", "c", "d", "e", "f", "g"};
    for (int enc = 0; enc < 2; enc++) {
        zset_t *z = zset_new();
        model_t md = {0};
        int out;
        for (int i = 0; i < 7; i++) {
            zset_add(z, ms[i], 1, 0, 0, &out, NULL);
            model_put(&md, ms[i], 1, 0);
        }
        if (enc) zset_convert(z, ENC_SKIPLIST);
        const char *bounds[][2] = {{"-", "+"},   {"[b", "[d"}, {"(b", "(d"}, {"[aa", "(g"},
                                   {"+", "-"},   {"[d", "[b"}, {"-", "[a"},  {"(g", "+"},
                                   {"[c", "[c"}, {"(c", "[c"}, {"-", "-"},   {"+", "+"}};
        for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
            zset_lex_range_t r;
            cr_assert_eq(zset_parse_lex_range(bounds[i][0], strlen(bounds[i][0]), bounds[i][1],
                                              strlen(bounds[i][1]), &r),
                         0);
            check_lex_range(z, &md, &r);
        }
        zset_lex_range_t r;
        zset_parse_lex_range(S("(b"), S("[e"), &r);
        cr_assert_eq(zset_delete_lex(z, &r), 3);
        cr_assert_eq(zset_length(z), 4);
        cr_assert_eq(zset_rank(z, "f", 1, 0), 2);
        zset_parse_lex_range(S("-"), S("+"), &r);
        cr_assert_eq(zset_delete_lex(z, &r), 4);
        cr_assert_eq(zset_length(z), 0);
        model_free(&md);
        zset_free(z);
    }
}

static void scan_mark(void *ud, const zset_entry_t *e)
{
    char *seen = ud, num[16];
    cr_assert(e->len > 1 && e->len < sizeof(num));
    memcpy(num, e->member + 1, e->len - 1); /* members are not NUL-terminated */
    num[e->len - 1] = '\0';
    int i = atoi(num);
    cr_assert_eq((double)i, e->score);
    seen[i] = 1;
}

Test(zset, scan_returns_every_member)
{
    for (int enc = 0; enc < 2; enc++) {
        zset_t *z = zset_new();
        if (enc) zset_convert(z, ENC_SKIPLIST);
        int out;
        char m[16];
        for (int i = 0; i < (enc ? 500 : 50); i++) {
            int n = snprintf(m, sizeof(m), "k%d", i);
            zset_add(z, m, (size_t)n, i, 0, &out, NULL);
        }
        char *seen = calloc(500, 1);
        uint64_t cursor = 0;
        int steps = 0;
        do {
            cursor = zset_scan(z, cursor, scan_mark, seen);
            steps++;
        } while (cursor);
        if (!enc)
            cr_assert_eq(steps, 1);
        else
            cr_assert_gt(steps, 1);
        size_t count = 0;
        for (int i = 0; i < 500; i++) count += seen[i] != 0;
        cr_assert_eq(count, zset_length(z));
        free(seen);
        zset_free(z);
    }
}

Test(zset, random_sampling_is_roughly_uniform)
{
    for (int enc = 0; enc < 2; enc++) {
        zset_t *z = zset_new();
        if (enc) zset_convert(z, ENC_SKIPLIST);
        int out;
        char m[8];
        for (int i = 0; i < 10; i++) {
            m[0] = (char)('a' + i);
            zset_add(z, m, 1, i, 0, &out, NULL);
        }
        int hits[10] = {0};
        for (int i = 0; i < 20000; i++) {
            zset_entry_t e;
            zset_random(z, &e);
            cr_assert_eq(e.len, 1);
            hits[e.member[0] - 'a']++;
            cr_assert_eq(e.score, e.member[0] - 'a');
        }
        for (int i = 0; i < 10; i++) cr_assert(hits[i] > 1500 && hits[i] < 2500, "%d", hits[i]);
        zset_free(z);
    }
}

/* ---- the model test ---- */

static size_t rand_member(char *buf)
{
    int r = rand() % 100;
    size_t len = r < 5 ? 0 : r < 90 ? 1 + (size_t)(rand() % 4) : r < 98 ? 30 + rand() % 5 : 300;
    for (size_t i = 0; i < len; i++) buf[i] = (char)('a' + rand() % (r < 50 ? 3 : 26));
    return len;
}

static double rand_score(void)
{
    int r = rand() % 100;
    if (r < 50) return rand() % 10;
    if (r < 70) return (rand() % 1000) / 8.0 - 60;
    if (r < 75) return r % 2 ? INFINITY : -INFINITY;
    if (r < 80) return -0.0;
    if (r < 90) return 1e9 + rand();
    return (rand() - RAND_MAX / 2) * 1e-3;
}

static void rand_range(zset_range_t *r)
{
    r->min = rand_score();
    r->max = rand() % 4 ? r->min + rand() % 50 : rand_score();
    if (isnan(r->max)) r->max = INFINITY;
    r->minex = rand() % 3 == 0;
    r->maxex = rand() % 3 == 0;
}

static void model_run(int skiplist_from_start, size_t entries_limit, unsigned seed)
{
    srand(seed);
    storage_params.zset_max_listpack_entries = (uint32_t)entries_limit;
    storage_params.zset_max_listpack_value = 64;
    zset_t *z = zset_new();
    if (skiplist_from_start) zset_convert(z, ENC_SKIPLIST);
    model_t md = {0};
    char m[400];
    for (int step = 0; step < 3000; step++) {
        int op = rand() % 100, out;
        size_t len = rand_member(m);
        if (op < 55) {
            double s = rand_score(), ns;
            int flags = (int[]){0,          0,          0,          ZSET_IN_NX,
                                ZSET_IN_XX, ZSET_IN_GT, ZSET_IN_LT, ZSET_IN_INCR}[rand() % 8];
            long i = model_find(&md, m, len);
            int rc = zset_add(z, m, len, s, flags, &out, &ns);
            double cur = i >= 0 ? md.v[i].s : 0;
            double want = (flags & ZSET_IN_INCR) && i >= 0 ? cur + s : s;
            if (isnan(want)) {
                cr_assert_eq(rc, -1);
                continue;
            }
            cr_assert_eq(rc, 0);
            int nop = (i >= 0 && (flags & ZSET_IN_NX)) || (i < 0 && (flags & ZSET_IN_XX)) ||
                      (i >= 0 && (flags & ZSET_IN_GT) && want <= cur) ||
                      (i >= 0 && (flags & ZSET_IN_LT) && want >= cur);
            cr_assert_eq((out & ZSET_OUT_NOP) != 0, nop);
            if (!nop) {
                cr_assert_eq(ns, want);
                cr_assert_eq((out & ZSET_OUT_ADDED) != 0, i < 0);
                cr_assert_eq((out & ZSET_OUT_UPDATED) != 0, i >= 0 && want != cur);
                /* the listpack keeps an integral score as an integer: -0 becomes 0 */
                if (i < 0 || want != cur) {
                    if (z->h.enc == ENC_LISTPACK && want == 0) want = 0.0;
                    model_put(&md, m, len, want);
                }
            }
        } else if (op < 75) {
            long i = model_find(&md, m, len);
            cr_assert_eq(zset_remove(z, m, len), i >= 0);
            if (i >= 0) model_del(&md, (size_t)i);
        } else if (op < 80 && md.n) {
            size_t a = (size_t)rand() % md.n, b = a + (size_t)rand() % 4;
            if (b >= md.n) b = md.n - 1;
            cr_assert_eq(zset_delete_rank(z, a, b), b - a + 1);
            for (size_t k = a; k <= b; k++) model_del(&md, a);
        } else if (op < 83) {
            zset_range_t r;
            rand_range(&r);
            size_t want = 0;
            for (size_t k = 0; k < md.n;) {
                if (zset_score_gte_min(md.v[k].s, &r) && zset_score_lte_max(md.v[k].s, &r)) {
                    model_del(&md, k);
                    want++;
                } else {
                    k++;
                }
            }
            cr_assert_eq(zset_delete_range(z, &r), want);
        } else if (op < 95) {
            zset_range_t r;
            rand_range(&r);
            check_score_range(z, &md, &r);
        } else if (md.n) {
            zset_entry_t e;
            zset_random(z, &e);
            cr_assert_geq(model_find(&md, e.member, e.len), 0);
        }
        if (step % 50 == 0 || md.n < 10) check_equal(z, &md);
    }
    check_equal(z, &md);
    zset_t *d = zset_dup(z);
    check_equal(d, &md);
    zset_free(d);
    model_free(&md);
    zset_free(z);
}

Test(zset, model_listpack_only)
{
    model_run(0, 1 << 20, 1);
}

Test(zset, model_skiplist_only)
{
    model_run(1, 1 << 20, 2);
}

Test(zset, model_with_conversions)
{
    for (unsigned seed = 3; seed < 8; seed++) model_run(0, 16, seed);
}

Test(zset, memory_grows_with_members)
{
    zset_t *z = zset_new();
    size_t before = zset_memory(z);
    int out;
    char m[16];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(m, sizeof(m), "member:%d", i);
        zset_add(z, m, (size_t)n, i, 0, &out, NULL);
    }
    cr_assert_eq(z->h.enc, ENC_SKIPLIST);
    size_t after = zset_memory(z);
    cr_assert_gt(after, before + 1000 * 40);
    cr_assert_lt(after, before + 1000 * 200);
    zset_free(z);
}

/* ---- the big-set model: a tree of several levels that grows and shrinks ---- */

/* First model index whose entry is not below (s, m), by bisection. */
static size_t model_lower(const model_t *md, double s, const char *m, size_t len)
{
    size_t lo = 0, hi = md->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (entry_cmp(md->v[mid].s, md->v[mid].m, md->v[mid].len, s, m, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The model index of member m, found through the set's own score (checked against the
 * model entry it leads to), so big models need no linear scans. */
static long big_find(const zset_t *z, const model_t *md, const char *m, size_t len)
{
    double s;
    if (!zset_score(z, m, len, &s)) return -1;
    size_t i = model_lower(md, s, m, len);
    cr_assert_lt(i, md->n, "member in set but not in model");
    cr_assert(md->v[i].len == len && !mcmp(md->v[i].m, len, m, len) && md->v[i].s == s);
    return (long)i;
}

static void big_put(model_t *md, const char *m, size_t len, double s)
{
    if (md->n == md->cap) {
        md->cap = md->cap ? md->cap * 2 : 16;
        md->v = realloc(md->v, md->cap * sizeof(mentry_t));
    }
    size_t k = model_lower(md, s, m, len);
    memmove(md->v + k + 1, md->v + k, (md->n - k) * sizeof(mentry_t));
    md->v[k].m = malloc(len + 1);
    memcpy(md->v[k].m, m, len);
    md->v[k].len = len;
    md->v[k].s = s;
    md->n++;
}

/* The model indices [*a, *b) of the entries within r, by bisection. */
static void model_score_span(const model_t *md, const zset_range_t *r, size_t *a, size_t *b)
{
    size_t lo = 0, hi = md->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (zset_score_gte_min(md->v[mid].s, r))
            hi = mid;
        else
            lo = mid + 1;
    }
    *a = lo;
    hi = md->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (zset_score_lte_max(md->v[mid].s, r))
            lo = mid + 1;
        else
            hi = mid;
    }
    *b = lo;
}

/* Deletes model entries [a, b). */
static void big_del_run(model_t *md, size_t a, size_t b)
{
    for (size_t k = a; k < b; k++) free(md->v[k].m);
    if (b < md->n) memmove(md->v + a, md->v + b, (md->n - b) * sizeof(mentry_t));
    md->n -= b - a;
}

/* Members with shared prefixes ("", "a", "ab", "aba", ...) and unique numbered ones. */
static size_t big_member(char *buf, unsigned *serial)
{
    if (rand() % 3) return (size_t)snprintf(buf, 32, "k%07u", (*serial)++ * 7919u % 10000000u);
    size_t len = (size_t)(rand() % 9);
    for (size_t i = 0; i < len; i++) buf[i] = "ab\xff"[rand() % (i % 3 ? 2 : 3)];
    return len;
}

/* Scores with many ties, infinities and both zeros. */
static double big_score(void)
{
    int r = rand() % 100;
    if (r < 30) return rand() % 8;
    if (r < 34) return r % 2 ? INFINITY : -INFINITY;
    if (r < 37) return r % 2 ? -0.0 : 0.0;
    return (rand() % 2000000) / 16.0 - 60000;
}

static void big_member_of(const model_t *md, size_t i, zset_entry_t *e)
{
    e->member = md->v[i].m;
    e->len = md->v[i].len;
    e->score = md->v[i].s;
}

static void expect_entry(const zset_entry_t *e, const model_t *md, size_t i, const char *what)
{
    cr_assert_lt(i, md->n, "%s: past the model", what);
    cr_assert(e->len == md->v[i].len && !mcmp(e->member, e->len, md->v[i].m, md->v[i].len),
              "%s: member at %zu", what, i);
    cr_assert(same_score(e->score, md->v[i].s), "%s: score at %zu", what, i);
}

/* A few ranks, by rank and back. */
static void big_spot_check(const zset_t *z, const model_t *md)
{
    cr_assert_eq(zset_length(z), md->n);
    for (int k = 0; k < 3 && md->n; k++) {
        size_t i = (size_t)rand() % md->n;
        zset_entry_t e;
        zset_entry_at(z, i, &e);
        expect_entry(&e, md, i, "entry_at");
        cr_assert_eq(zset_rank(z, md->v[i].m, md->v[i].len, 0), (long long)i);
        cr_assert_eq(zset_rank(z, md->v[i].m, md->v[i].len, 1), (long long)(md->n - 1 - i));
    }
}

/* Iteration by rank and by score range from a random start or offset, both directions, over
 * at most 80 entries, and the range's count. Offsets reach past leaves (the rank jump). */
static void big_range_check(const zset_t *z, const model_t *md)
{
    zset_iter_t it;
    zset_entry_t e;
    size_t n = md->n, k;
    for (int rev = 0; rev < 2; rev++) {
        size_t start = n ? (size_t)rand() % (n + 2) : 0;
        zset_iter_rank(&it, z, start, rev);
        for (k = 0; k < 80 && zset_iter_next(&it, &e); k++)
            expect_entry(&e, md, rev ? n - 1 - start - k : start + k, "by rank");
        cr_assert_eq(k, start >= n ? 0 : (n - start < 80 ? n - start : 80));
    }
    zset_range_t r;
    r.min = big_score();
    r.max = rand() % 5 ? r.min + rand() % 3000 : big_score();
    r.minex = rand() % 3 == 0;
    r.maxex = rand() % 3 == 0;
    size_t a, b;
    model_score_span(md, &r, &a, &b);
    cr_assert_eq(zset_count_range(z, &r), b - a, "count [%g %g]", r.min, r.max);
    for (int rev = 0; rev < 2; rev++) {
        size_t off = rand() % 2 ? (size_t)rand() % 4 : (size_t)rand() % (n + 100);
        zset_iter_score(&it, z, &r, rev);
        zset_iter_skip(&it, off);
        for (k = 0; k < 80 && zset_iter_next(&it, &e); k++) {
            cr_assert_lt(off + k, b - a, "score range past its end rev=%d", rev);
            expect_entry(&e, md, rev ? b - 1 - off - k : a + off + k, "score range");
        }
        size_t left = b - a > off ? b - a - off : 0;
        cr_assert_eq(k, left < 80 ? left : 80, "score range length rev=%d off=%zu", rev, off);
    }
}

/* One random operation on z and md; grow says whether additions dominate. */
static void big_step(zset_t *z, model_t *md, int grow, unsigned *serial)
{
    char m[32];
    int op = rand() % 100, out;
    if (op < (grow ? 60 : 25)) { /* add a member, new or not */
        size_t len = big_member(m, serial);
        double s = big_score();
        long i = big_find(z, md, m, len);
        cr_assert_eq(zset_add(z, m, len, s, 0, &out, NULL), 0);
        if (i >= 0 && md->v[i].s == s) {
            cr_assert_eq(out, 0);
            return;
        }
        cr_assert_eq(out, i >= 0 ? ZSET_OUT_UPDATED : ZSET_OUT_ADDED);
        if (i >= 0) big_del_run(md, (size_t)i, (size_t)i + 1);
        big_put(md, m, len, s);
    } else if (op < (grow ? 75 : 45)) { /* update an existing member's score, often slightly */
        if (!md->n) return;
        size_t i = (size_t)rand() % md->n;
        char *mm = md->v[i].m;
        size_t len = md->v[i].len;
        double cur = md->v[i].s, s = rand() % 2 ? big_score() : rand() % 3 - 1.0, ns;
        int flags = rand() % 2 ? ZSET_IN_INCR : 0;
        double want = flags ? cur + s : s;
        if (isnan(want)) {
            cr_assert_eq(zset_add(z, mm, len, s, flags, &out, &ns), -1);
            return;
        }
        cr_assert_eq(zset_add(z, mm, len, s, flags, &out, &ns), 0);
        cr_assert(same_score(ns, want) || want == cur);
        if (want == cur) return;
        char copy[32];
        memcpy(copy, mm, len);
        big_del_run(md, i, i + 1);
        big_put(md, copy, len, want);
    } else if (op < (grow ? 88 : 70)) { /* remove an existing member, or an absent one */
        if (md->n && rand() % 4) {
            size_t i = (size_t)rand() % md->n;
            cr_assert_eq(zset_remove(z, md->v[i].m, md->v[i].len), 1);
            big_del_run(md, i, i + 1);
        } else {
            size_t len = (size_t)snprintf(m, sizeof(m), "absent%d", rand());
            cr_assert_eq(zset_remove(z, m, len), 0);
        }
    } else if (op < (grow ? 91 : 82)) { /* delete a rank range */
        if (!md->n) return;
        size_t a = (size_t)rand() % md->n, w = (size_t)rand() % (grow ? 8 : 300);
        size_t b = a + w < md->n ? a + w : md->n - 1;
        cr_assert_eq(zset_delete_rank(z, a, b), b - a + 1);
        big_del_run(md, a, b + 1);
    } else if (op < (grow ? 93 : 90)) { /* delete a score range */
        zset_range_t r;
        r.min = big_score();
        r.max = r.min + rand() % (grow ? 3 : 4000);
        r.minex = rand() % 2;
        r.maxex = rand() % 2;
        size_t a, b;
        model_score_span(md, &r, &a, &b);
        cr_assert_eq(zset_delete_range(z, &r), b - a);
        big_del_run(md, a, b);
    } else if (op < 97) {
        big_range_check(z, md);
    } else if (md->n) {
        zset_entry_t e;
        zset_random(z, &e);
        cr_assert_geq(big_find(z, md, e.member, e.len), 0);
    }
}

static void big_run(unsigned seed, size_t target, int cycles)
{
    srand(seed);
    zset_t *z = zset_new();
    zset_convert(z, ENC_SKIPLIST);
    model_t md = {0};
    unsigned serial = 0;
    long steps = 0;
    for (int c = 0; c < cycles; c++) {
        for (int grow = 1; grow >= 0; grow--) {
            while (grow ? md.n < target : md.n > 0) {
                big_step(z, &md, grow, &serial);
                big_spot_check(z, &md);
                if (++steps % 4000 == 0) check_equal(z, &md);
            }
            check_equal(z, &md);
            if (grow) {
                zset_t *d = zset_dup(z);
                check_equal(d, &md);
                zset_free(d);
            }
        }
    }
    cr_assert_eq(zset_length(z), 0);
    cr_assert_geq(steps, (long)(target * (size_t)cycles));
    model_free(&md);
    zset_free(z);
}

Test(zset, big_model_grows_and_shrinks_through_tree_levels)
{
    big_run(11, 12000, 1);
    big_run(12, 2500, 3);
}

Test(zset, big_model_small_sets_around_one_leaf)
{
    for (unsigned seed = 20; seed < 26; seed++) big_run(seed, 40 + seed * 12, 3);
}

/* Ascending and descending insertion (what RDB loading does) and a bulk build, each followed
 * by random deletions and checks. */
Test(zset, big_model_sequential_and_bulk_built)
{
    for (int kind = 0; kind < 3; kind++) {
        srand(40 + kind);
        model_t md = {0};
        int n = 9000, out;
        char m[32];
        for (int i = 0; i < n; i++) {
            size_t len = (size_t)snprintf(m, sizeof(m), "s%05d", i);
            big_put(&md, m, len, i / 3);
        }
        zset_t *z;
        if (kind == 2) {
            zset_entry_t *v = malloc((size_t)n * sizeof(zset_entry_t));
            for (int i = 0; i < n; i++) big_member_of(&md, (size_t)i, &v[i]);
            z = zset_from_sorted(v, (size_t)n);
            free(v);
        } else {
            z = zset_new();
            for (int i = 0; i < n; i++) {
                size_t k = kind == 0 ? (size_t)i : (size_t)(n - 1 - i);
                zset_add(z, md.v[k].m, md.v[k].len, md.v[k].s, 0, &out, NULL);
                cr_assert_eq(out, ZSET_OUT_ADDED);
            }
        }
        cr_assert_eq(z->h.enc, ENC_SKIPLIST);
        check_equal(z, &md);
        unsigned serial = 0;
        for (int i = 0; i < 6000; i++) {
            big_step(z, &md, 0, &serial);
            big_spot_check(z, &md);
        }
        check_equal(z, &md);
        zset_convert(z, ENC_LISTPACK);
        check_equal(z, &md);
        model_free(&md);
        zset_free(z);
    }
}

/* Lex ranges need equal scores: counts, iteration with offsets and deletion by lex range on a
 * set of members that are prefixes of each other, all at one score. */
Test(zset, big_model_lex_ranges)
{
    srand(77);
    zset_t *z = zset_new();
    zset_convert(z, ENC_SKIPLIST);
    model_t md = {0};
    char m[32], lo[32], hi[32];
    int out;
    for (int step = 0; step < 12000; step++) {
        size_t len = (size_t)(rand() % 7);
        for (size_t i = 0; i < len; i++) m[i] = "abc"[rand() % 3];
        if (rand() % 10 < 7) {
            zset_add(z, m, len, 5, 0, &out, NULL);
            if (out == ZSET_OUT_ADDED) big_put(&md, m, len, 5);
        }
        if (rand() % 10) continue;
        zset_lex_range_t r;
        size_t ll = (size_t)(rand() % 4), hl = (size_t)(rand() % 4);
        for (size_t i = 0; i < ll; i++) lo[i] = "abc"[rand() % 3];
        for (size_t i = 0; i < hl; i++) hi[i] = "abc"[rand() % 3];
        r.min = (zset_lex_bound_t){lo, ll, rand() % 8 ? ZLEX_VALUE : ZLEX_MIN, rand() % 2};
        r.max = (zset_lex_bound_t){hi, hl, rand() % 8 ? ZLEX_VALUE : ZLEX_MAX, rand() % 2};
        size_t a = 0, b;
        while (a < md.n && !zset_lex_gte_min(md.v[a].m, md.v[a].len, &r)) a++;
        for (b = a; b < md.n && zset_lex_lte_max(md.v[b].m, md.v[b].len, &r);) b++;
        cr_assert_eq(zset_count_lex(z, &r), b - a);
        for (int rev = 0; rev < 2; rev++) {
            zset_iter_t it;
            zset_entry_t e;
            size_t off = (size_t)rand() % 200, k = 0;
            zset_iter_lex(&it, z, &r, rev);
            zset_iter_skip(&it, off);
            while (zset_iter_next(&it, &e)) {
                expect_entry(&e, &md, rev ? b - 1 - off - k : a + off + k, "lex range");
                k++;
            }
            cr_assert_eq(k, b - a > off ? b - a - off : 0);
        }
        if (rand() % 3 == 0) {
            cr_assert_eq(zset_delete_lex(z, &r), b - a);
            big_del_run(&md, a, b);
            big_spot_check(z, &md);
        }
    }
    check_equal(z, &md);
    model_free(&md);
    zset_free(z);
}
