/* test_search.c - search/search.c over real tags and blobs (storage on a RAM tier): TQUERY's
 * name queries equal a reference matcher (POSIX extended regexes, on patterns where ERE and
 * PCRE2 describe the same language) also when run in small steps with names changing between
 * steps, time windows are inclusive at both ends and oldest first, names follow RENAME, MOVE,
 * SWAPDB and frees, and TSEARCH answers for one database. The observers are wired as the
 * server wires them (touch, then the contents). */
#define _GNU_SOURCE
#include "search/search.h"

#include "common/alloc.h"
#include "storage/t_tag.h"

#include <criterion/criterion.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tier_set_t tiers;
static search_t *S;

static void observe(void *ud, const tag_obj_t *t, const blob_t *b, int deleted)
{
    if (deleted) {
        search_blob_deleted(S, b);
        return;
    }
    uint64_t gen = search_blob_touch(S, t, b);
    blob_info_t in;
    blob_get_info(b, &in);
    char *buf = xmalloc(in.size + 1);
    tag_plan_t *plan;
    cr_assert_eq(blob_peek((blob_t *)b, 0, in.size, buf, &plan), ST_OK);
    search_blob_text(S, b, gen, buf, in.size);
    xfree(buf);
}

static void freed(void *ud, const tag_obj_t *t)
{
    search_tag_freed(S, t);
}

static void setup(void)
{
    tier_spec_t spec = {"ram", TIER_RAM, 64 << 20, "", 1.0};
    char err[256];
    cr_assert_eq(tier_set_open(&tiers, &spec, 1, err, sizeof(err)), 0, "%s", err);
    tag_store.tiers = &tiers;
    tag_store.max_blob_size = 1 << 20;
    tag_store.on_blob_change = observe;
    tag_store.on_tag_free = freed;
    S = search_new(4);
}

#define MAXTAGS 400

static struct {
    tag_obj_t *t;
    char name[16];
    int db;
} tags[MAXTAGS];
static int ntags;

static void teardown(void)
{
    for (int i = 0; i < ntags; i++)
        if (tags[i].t) obj_free((obj_t *)tags[i].t);
    ntags = 0;
    search_stats_t st;
    search_get_stats(S, &st);
    cr_assert_eq(st.blobs, 0);
    cr_assert_eq(st.tags, 0);
    search_free(S);
    tier_set_close(&tiers);
    memset(&tag_store, 0, sizeof(tag_store));
}

TestSuite(search, .init = setup, .fini = teardown, .timeout = 60);

static int add_tag(const char *name, int db)
{
    int i = ntags++;
    tags[i].t = tag_new();
    snprintf(tags[i].name, sizeof(tags[i].name), "%s", name);
    tags[i].db = db;
    return i;
}

static void put(int tag, const char *blob, const char *data, long long now)
{
    uint64_t size;
    tag_plan_t *plan;
    int rc =
        tag_put(tags[tag].t, &(tag_write_t){blob, strlen(blob), 0, data, strlen(data), 0, 0, now},
                &size, &plan);
    cr_assert_eq(rc, ST_OK);
    if (tags[tag].db >= 0)
        search_tag_bind(S, tags[tag].t, tags[tag].db, tags[tag].name, strlen(tags[tag].name));
}

/* ---- collecting query results ---- */

typedef struct got {
    char items[4096][40];
    int n;
} got_t;

static void collect(void *ud, const char *tag, size_t tlen, const char *blob, size_t blen)
{
    got_t *g = ud;
    cr_assert_lt(g->n, 4096);
    if (blob)
        snprintf(g->items[g->n++], 40, "%.*s/%.*s", (int)tlen, tag, (int)blen, blob);
    else
        snprintf(g->items[g->n++], 40, "%.*s", (int)tlen, tag);
}

static rx_t *rx(const char *pat)
{
    char err[128];
    rx_t *r = rx_get(pat, strlen(pat), err, sizeof(err));
    cr_assert_not_null(r, "%s: %s", pat, err);
    return r;
}

/* Runs a query to the end in steps of a random small budget; between steps, calls churn. */
static void run_tags(int db, const char *pat, got_t *g, void (*churn)(void))
{
    search_cursor_t cur;
    search_cursor_init(&cur);
    g->n = 0;
    while (!search_tags_step(S, db, rx(pat), &cur, (uint64_t)(1 + rand() % 7), collect, g))
        if (churn) churn();
    search_cursor_deinit(&cur);
}

static void run_blobs(int db, const char *tp, const char *bp, got_t *g, void (*churn)(void))
{
    search_cursor_t cur;
    search_cursor_init(&cur);
    g->n = 0;
    for (;;) {
        rx_t *b = rx(bp), *t = rx(tp);
        if (search_blobs_step(S, db, t, b, &cur, (uint64_t)(1 + rand() % 7), collect, g)) break;
        if (churn) churn();
    }
    search_cursor_deinit(&cur);
}

static int posix_full_match(const char *pat, const char *s)
{
    char full[256];
    snprintf(full, sizeof(full), "^(%s)$", pat);
    regex_t re;
    cr_assert_eq(regcomp(&re, full, REG_EXTENDED | REG_NOSUB), 0, "%s", full);
    int m = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return m;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* ---- corpora ---- */

static const char alphabet[] = "ab/._-0";

static void random_name(char *out, int maxlen)
{
    int n = rand() % (maxlen + 1);
    for (int i = 0; i < n; i++) out[i] = alphabet[rand() % 7];
    out[n] = '\0';
}

/* Distinct random tag names in db 0, each with distinct random blob names. */
static void random_corpus(int ntag, int nblob)
{
    for (int i = 0; i < ntag; i++) {
        char name[16];
        int dup;
        do {
            random_name(name, 5);
            dup = 0;
            for (int j = 0; j < ntags; j++) dup |= !strcmp(tags[j].name, name);
        } while (dup);
        int t = add_tag(name, 0);
        for (int k = 0; k < nblob; k++) {
            char blob[16];
            random_name(blob, 4);
            put(t, blob, "x", 1000);
        }
    }
}

static const char *const patterns[] = {
    "a.*",     ".*",     "ab",         "a|b.*",     "(ab)+",      "[ab]*",    "a.b",
    "b?a.*",   "a/.*",   "[^a]*",      "ab{1,2}.*", "(a|b)(a|b)", "\\..*",    "0*",
    "a*b",     ".*_",    "[a0]+[b/]?", "b",         "ab/.*",      "(a.)*",    "-.*|.*-",
    "a[.]b.*", ".{2,3}", "(0|a)b.*",   "/",         "a(b|/)*0?",  ".*a.*b.*",
};

static void reference_tags(const char *pat, int db, got_t *want)
{
    want->n = 0;
    for (int i = 0; i < ntags; i++)
        if (tags[i].t && tags[i].db == db && posix_full_match(pat, tags[i].name))
            snprintf(want->items[want->n++], 40, "%s", tags[i].name);
    qsort(want->items, (size_t)want->n, 40, cmp_str);
}

static void name_of(void *ud, blob_t *b)
{
    char **out = ud;
    size_t len;
    const char *n = blob_name(b, &len);
    snprintf(*out, 16, "%.*s", (int)len, n);
    *out += 16;
}

static void reference_blobs(const char *tp, const char *bp, int db, got_t *want)
{
    want->n = 0;
    for (int i = 0; i < ntags; i++) {
        if (!tags[i].t || tags[i].db != db || !posix_full_match(tp, tags[i].name)) continue;
        char names[64][16], *p = names[0];
        tag_foreach(tags[i].t, name_of, &p);
        for (int k = 0; k < (int)tag_len(tags[i].t); k++)
            if (posix_full_match(bp, names[k]))
                snprintf(want->items[want->n++], 40, "%.15s/%.15s", tags[i].name, names[k]);
    }
    /* bytewise by tag then blob: '/' sorts before the alphabet's letters but after '.' and
     * '-', so sort pairs field by field */
    qsort(want->items, (size_t)want->n, 40, cmp_str);
}

static void sort_pairs_like_reference(got_t *g)
{
    qsort(g->items, (size_t)g->n, 40, cmp_str);
}

/* ---- tests ---- */

Test(search, tag_names_equal_a_reference_matcher)
{
    srand(11);
    random_corpus(38, 1);
    static got_t got, want;
    for (size_t p = 0; p < sizeof(patterns) / sizeof(patterns[0]); p++) {
        run_tags(0, patterns[p], &got, NULL);
        reference_tags(patterns[p], 0, &want);
        cr_assert_eq(got.n, want.n, "pattern %s: %d names, want %d", patterns[p], got.n, want.n);
        for (int i = 0; i < got.n; i++) /* already in bytewise order, as strcmp sorts */
            cr_assert_str_eq(got.items[i], want.items[i], "pattern %s", patterns[p]);
    }
}

Test(search, blob_pairs_equal_a_reference_matcher)
{
    srand(12);
    random_corpus(12, 30);
    static got_t got, want;
    for (size_t p = 0; p < sizeof(patterns) / sizeof(patterns[0]); p++) {
        const char *tp = patterns[p],
                   *bp = patterns[(p * 7 + 3) % (sizeof(patterns) / sizeof(patterns[0]))];
        run_blobs(0, tp, bp, &got, NULL);
        reference_blobs(tp, bp, 0, &want);
        /* pairs come by tag then blob; the flattened "tag/blob" strings may sort differently,
         * so both sides are compared as sorted sets, and the order is checked separately */
        got_t copy = got;
        sort_pairs_like_reference(&copy);
        cr_assert_eq(got.n, want.n, "%s %s: %d pairs, want %d", tp, bp, got.n, want.n);
        for (int i = 0; i < got.n; i++) cr_assert_str_eq(copy.items[i], want.items[i]);
    }
}

Test(search, pairs_come_by_tag_then_blob_bytewise)
{
    int a = add_tag("a", 0), ab = add_tag("a\x01", 0);
    put(ab, "z", "x", 1);
    put(a, "b", "x", 1);
    put(a, "a\xff", "x", 1);
    put(a, "a", "x", 1);
    static got_t got;
    run_blobs(0, ".*", ".*", &got, NULL);
    cr_assert_eq(got.n, 4);
    cr_assert_str_eq(got.items[0], "a/a");
    cr_assert_str_eq(got.items[1], "a/a\xff");
    cr_assert_str_eq(got.items[2], "a/b");
    cr_assert_str_eq(got.items[3], "a\x01/z");
}

static void collect_name(void *ud, const char *name, size_t len)
{
    got_t *g = ud;
    cr_assert_lt(g->n, 4096);
    snprintf(g->items[g->n++], 40, "%.*s", (int)len, name);
}

Test(search, a_tag_range_lists_its_names_bytewise_from_a_name_on)
{
    int a = add_tag("a", 0), unbound = add_tag("u", -1), other = add_tag("b", 0);
    const char *names[] = {"user9", "user10", "b", "user1", "a\xff", "a"};
    for (int i = 0; i < 6; i++) put(a, names[i], "x", i);
    put(unbound, "z", "x", 1);
    put(other, "user2", "x", 1);
    static got_t got;
    got.n = 0;
    cr_assert_eq(search_tag_range(S, tags[a].t, "user", 4, 100, collect_name, &got), 3);
    cr_assert_str_eq(got.items[0], "user1");
    cr_assert_str_eq(got.items[1], "user10");
    cr_assert_str_eq(got.items[2], "user9");
    got.n = 0; /* inclusive, bounded by count, and from the first name with no start */
    cr_assert_eq(search_tag_range(S, tags[a].t, "b", 1, 2, collect_name, &got), 2);
    cr_assert_str_eq(got.items[0], "b");
    cr_assert_str_eq(got.items[1], "user1");
    got.n = 0;
    cr_assert_eq(search_tag_range(S, tags[a].t, NULL, 0, 2, collect_name, &got), 2);
    cr_assert_str_eq(got.items[0], "a");
    cr_assert_str_eq(got.items[1], "a\xff");
    cr_assert_eq(search_tag_range(S, tags[a].t, "user", 4, 0, collect_name, &got), 0);
    cr_assert_eq(search_tag_range(S, tags[a].t, "v", 1, 9, collect_name, &got), 0);
    /* a tag not bound to a key yet lists its names too (the range is by object) */
    got.n = 0;
    cr_assert_eq(search_tag_range(S, tags[unbound].t, NULL, 0, 9, collect_name, &got), 1);
    cr_assert_str_eq(got.items[0], "z");
    /* deleted names leave the range */
    cr_assert_eq(tag_del(tags[a].t, "user10", 6), 1);
    got.n = 0;
    cr_assert_eq(search_tag_range(S, tags[a].t, "user1", 5, 9, collect_name, &got), 2);
    cr_assert_str_eq(got.items[1], "user9");
}

/* Churn between steps: names of tags 0..9 come and go; tags 10.. never change. */
static void churn(void)
{
    int i = rand() % 10;
    if (tags[i].t) {
        obj_free((obj_t *)tags[i].t);
        tags[i].t = NULL;
    } else {
        tags[i].t = tag_new();
        put(i, "b", "x", 5);
        put(i, "a.b", "x", 5);
    }
}

Test(search, a_stepped_query_reports_every_stable_name_exactly_once)
{
    srand(13);
    for (int i = 0; i < 10; i++) {
        char name[16];
        snprintf(name, sizeof(name), "c%d", i);
        put(add_tag(name, 0), "b", "x", 5);
    }
    random_corpus(20, 8);
    static got_t got, want;
    for (int round = 0; round < 40; round++) {
        const char *p = patterns[round % (sizeof(patterns) / sizeof(patterns[0]))];
        run_blobs(0, ".*", p, &got, churn);
        qsort(got.items, (size_t)got.n, 40, cmp_str);
        for (int i = 1; i < got.n; i++)
            cr_assert_str_neq(got.items[i - 1], got.items[i], "reported twice");
        /* every pair of a stable tag is there */
        reference_blobs("[^c].*|", p, 0, &want);
        for (int i = 0; i < want.n; i++)
            cr_assert(bsearch(want.items[i], got.items, (size_t)got.n, 40, cmp_str),
                      "%s missing for %s", want.items[i], p);
        run_tags(0, ".*", &got, churn);
        for (int i = 1; i < got.n; i++) cr_assert_lt(strcmp(got.items[i - 1], got.items[i]), 0);
    }
}

Test(search, a_literal_prefix_visits_only_names_under_it)
{
    char name[16];
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "%c%03d", i < 10 ? 'k' : 'z', i);
        put(add_tag(name, 0), "b", "x", 1);
    }
    int big = add_tag("big", 0);
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof(name), "%c%03d", i % 40 == 0 ? 'p' : 'q', i);
        put(big, name, "x", 1);
    }
    search_cursor_t cur;
    search_cursor_init(&cur);
    static got_t got;
    cr_assert(search_tags_step(S, 0, rx("k00[0-9]"), &cur, 1000, collect, &got));
    cr_assert_eq(got.n, 10);
    cr_assert_leq(cur.visited, 10);
    search_cursor_deinit(&cur);
    search_cursor_init(&cur);
    got.n = 0;
    cr_assert(search_blobs_step(S, 0, rx("big"), rx("p.*"), &cur, 1000, collect, &got));
    cr_assert_eq(got.n, 5);
    cr_assert_leq(cur.visited, 5); /* blob names visited: the tag lookup itself is a seek */
    search_cursor_deinit(&cur);
    /* without a prefix, everything is visited */
    search_cursor_init(&cur);
    got.n = 0;
    cr_assert(search_tags_step(S, 0, rx(".*0"), &cur, 1000, collect, &got));
    cr_assert_eq(cur.visited, 301);
    search_cursor_deinit(&cur);
}

/* ---- time windows ---- */

typedef struct wblob {
    int tag;
    char name[8];
    long long mtime;
    int order; /* creation order */
} wblob_t;

Test(search, windows_are_inclusive_at_both_ends_and_oldest_first)
{
    srand(21);
    static wblob_t w[120];
    int nw = 0;
    int t0 = add_tag("t0", 0), t1 = add_tag("t1", 0), other = add_tag("t0", 1);
    int tg[3] = {t0, t1, other};
    for (int i = 0; i < 120; i++) {
        wblob_t *b = &w[nw++];
        b->tag = tg[i % 3];
        snprintf(b->name, sizeof(b->name), "b%d", i);
        b->mtime = rand() % 25 - 5; /* duplicates, negatives */
        b->order = i;
        put(b->tag, b->name, "x", b->mtime);
    }
    for (int i = 0; i < 40; i++) { /* rewrites move blobs in time, keeping creation order */
        wblob_t *b = &w[rand() % nw];
        b->mtime = rand() % 25 - 5;
        put(b->tag, b->name, "y", b->mtime);
    }
    static got_t got;
    for (int round = 0; round < 200; round++) {
        long long since = rand() % 30 - 8, until = since + rand() % 8 - 1;
        const char *tp = round % 4 == 0 ? "t1" : "t.*";
        search_cursor_t cur;
        search_cursor_init(&cur);
        got.n = 0;
        while (!search_window_step(S, 0, rx(tp), rx("b.*"), since, until, &cur,
                                   (uint64_t)(1 + rand() % 9), collect, &got)) {
        }
        search_cursor_deinit(&cur);
        /* reference: db 0 blobs in [since, until], by (mtime, creation order) */
        int want = 0;
        for (long long t = since; t <= until; t++)
            for (int i = 0; i < nw; i++) {
                if (w[i].mtime != t || tags[w[i].tag].db != 0) continue;
                if (round % 4 == 0 && w[i].tag != t1) continue;
                char item[40];
                snprintf(item, sizeof(item), "%s/%s", tags[w[i].tag].name, w[i].name);
                cr_assert_lt(want, got.n, "[%lld, %lld]: missing %s", since, until, item);
                cr_assert_str_eq(got.items[want], item, "[%lld, %lld] item %d", since, until, want);
                want++;
            }
        cr_assert_eq(got.n, want, "[%lld, %lld]", since, until);
    }
}

/* ---- names follow the keyspace ---- */

static int tags_in(int db, const char *pat)
{
    static got_t got;
    run_tags(db, pat, &got, NULL);
    return got.n;
}

Test(search, names_follow_rename_move_swapdb_and_frees)
{
    int t = add_tag("one", 0);
    put(t, "b", "hello world", 1);
    cr_assert_eq(tags_in(0, "one"), 1);
    search_tag_bind(S, tags[t].t, 0, "two", 3); /* RENAME */
    cr_assert_eq(tags_in(0, "one"), 0);
    cr_assert_eq(tags_in(0, "two"), 1);
    search_tag_bind(S, tags[t].t, 2, "two", 3); /* MOVE */
    cr_assert_eq(tags_in(0, ".*"), 0);
    cr_assert_eq(tags_in(2, "two"), 1);
    search_swapdb(S, 2, 3);
    cr_assert_eq(tags_in(2, ".*"), 0);
    cr_assert_eq(tags_in(3, "two"), 1);
    size_t n;
    search_hit_t *h = search_query(S, 3, "hello", 5, NULL, 10, &n);
    cr_assert_eq(n, 1);
    cr_assert(h[0].tlen == 3 && memcmp(h[0].tag, "two", 3) == 0);
    xfree(h);
    cr_assert_null(search_query(S, 0, "hello", 5, NULL, 10, &n));
    cr_assert_eq(n, 0);
    /* a tag never bound to a key is invisible, though indexed */
    int u = add_tag("unbound", -1);
    put(u, "b", "hello again", 1);
    cr_assert_eq(tags_in(0, ".*"), 0);
    search_stats_t st;
    search_get_stats(S, &st);
    cr_assert_eq(st.docs, 2);
    obj_free((obj_t *)tags[t].t);
    tags[t].t = NULL;
    cr_assert_eq(tags_in(3, ".*"), 0);
    search_get_stats(S, &st);
    cr_assert_eq(st.docs, 1);
    cr_assert_eq(st.blobs, 1);
}

Test(search, tsearch_filters_by_tag_and_blob_without_changing_scores)
{
    int a = add_tag("alpha", 0), b = add_tag("beta", 0);
    put(a, "x1", "red green blue", 1);
    put(a, "y1", "red red", 1);
    put(b, "x2", "green red", 1);
    size_t n, m;
    search_hit_t *all = search_query(S, 0, "red", 3, NULL, 10, &n);
    cr_assert_eq(n, 3);
    search_filter_t flt = {rx("beta"), NULL, NULL, NULL};
    flt.brx = rx("x.*");
    search_hit_t *f = search_query(S, 0, "red", 3, &flt, 10, &m);
    cr_assert_eq(m, 1);
    for (size_t i = 0; i < n; i++)
        if (all[i].tlen == 4) cr_assert_eq(all[i].score, f[0].score);
    xfree(all);
    xfree(f);
}

Test(search, a_freed_tags_place_goes_to_the_next_tag_and_hits_name_their_own_tag)
{
    int a = add_tag("a", 0), b = add_tag("b", 0), c = add_tag("c", 0);
    put(a, "x", "apple pie", 5);
    put(b, "x", "apple tart", 6);
    put(c, "x", "apple cake", 7);
    search_stats_t st;
    search_get_stats(S, &st);
    cr_assert_eq(st.bytes, 9 + 10 + 10);
    obj_free((obj_t *)tags[b].t); /* b's blob and tag go: its index is free */
    tags[b].t = NULL;
    search_get_stats(S, &st);
    cr_assert_eq(st.bytes, 9 + 10, "the freed blob's text bytes are gone");
    int d = add_tag("d", 0);
    put(d, "y", "apple crumble", 6);
    put(d, "z", "plum", 6);
    search_get_stats(S, &st);
    cr_assert_eq(st.bytes, 9 + 10 + 13 + 4);
    size_t n;
    search_hit_t *h = search_query(S, 0, "apple", 5, NULL, 10, &n);
    cr_assert_eq(n, 3);
    int seen[4] = {0};
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(h[i].tlen, 1);
        cr_assert_neq(h[i].tag[0], 'b', "a hit names the freed tag");
        seen[h[i].tag[0] - 'a'] = 1;
        if (h[i].tag[0] == 'd') cr_assert(h[i].blen == 1 && h[i].blob[0] == 'y');
    }
    cr_assert(seen[0] && seen[2] && seen[3]);
    xfree(h);
    static got_t got;
    search_cursor_t cur;
    search_cursor_init(&cur);
    got.n = 0;
    while (!search_window_step(S, 0, rx(".*"), rx(".*"), 5, 7, &cur, 2, collect, &got)) {
    }
    search_cursor_deinit(&cur);
    cr_assert_eq(got.n, 4);
    cr_assert_str_eq(got.items[0], "a/x");
    cr_assert_str_eq(got.items[1], "d/y", "equal times: creation order");
    cr_assert_str_eq(got.items[2], "d/z");
    cr_assert_str_eq(got.items[3], "c/x");
    put(d, "y", "pear", 8); /* a rewrite moves it in time; its 13 bytes are indexed again */
    search_get_stats(S, &st);
    cr_assert_eq(st.bytes, 9 + 10 + 13 + 4);
    h = search_query(S, 0, "crumble", 7, NULL, 10, &n);
    cr_assert(n == 1 && h[0].tag[0] == 'd');
    xfree(h);
}

/* ---- entries: numbered in the blobs' observer slots ---- */

static void word_of(int i, char *out)
{
    int n = 0;
    out[n++] = 'w';
    do {
        out[n++] = (char)('a' + i % 26);
        i /= 26;
    } while (i);
    out[n] = '\0';
}

struct slots {
    uint32_t max;
    int n;
    uint8_t seen[4096];
    int dup;
};

static void slot_of(void *ud, blob_t *b)
{
    struct slots *s = ud;
    uint32_t id = blob_observer(b);
    cr_assert_neq(id, 0, "a filed blob has no entry number");
    if (id > s->max) s->max = id;
    if (id < 4096) {
        s->dup |= s->seen[id];
        s->seen[id] = 1;
    }
    s->n++;
}

Test(search, entry_numbers_are_reused_after_many_deletes_and_creates)
{
    enum { N = 1500, ROUNDS = 8, CHURN = 600 };
    int t = add_tag("churn", 0);
    static char live[4 * N]; /* by blob number: 1 while in the tag */
    int next = 0, nlive = 0;
    char name[16], word[16];
    for (; next < N; next++, nlive++) {
        snprintf(name, sizeof(name), "b%d", next);
        word_of(next, word);
        put(t, name, word, 1000 + next);
        live[next] = 1;
    }
    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < CHURN; k++) { /* delete some at random */
            int i = rand() % next;
            if (!live[i]) continue;
            snprintf(name, sizeof(name), "b%d", i);
            cr_assert_eq(tag_del(tags[t].t, name, strlen(name)), 1);
            live[i] = 0;
            nlive--;
        }
        while (nlive < N) { /* and make new ones */
            snprintf(name, sizeof(name), "b%d", next);
            word_of(next, word);
            put(t, name, word, 1000 + next);
            live[next++] = 1;
            nlive++;
        }
    }
    search_stats_t st;
    search_get_stats(S, &st);
    cr_assert_eq(st.blobs, N);
    cr_assert_eq(st.docs, N);
    struct slots sl = {0};
    tag_foreach(tags[t].t, slot_of, &sl);
    cr_assert_eq(sl.n, N);
    cr_assert_eq(sl.dup, 0, "two blobs share an entry");
    cr_assert_leq(sl.max, N, "freed entry numbers were not reused (%u)", sl.max);
    /* every blob's entry is its own: its word finds it, a deleted blob's word nothing */
    for (int i = 0; i < next; i++) {
        word_of(i, word);
        size_t n;
        search_hit_t *h = search_query(S, 0, word, strlen(word), NULL, 5, &n);
        if (!live[i]) {
            cr_assert_eq(n, 0, "deleted blob b%d still found", i);
            xfree(h);
            continue;
        }
        snprintf(name, sizeof(name), "b%d", i);
        cr_assert_eq(n, 1, "b%d: %zu hits", i, n);
        cr_assert(h[0].blen == strlen(name) && memcmp(h[0].blob, name, h[0].blen) == 0);
        xfree(h);
    }
    /* the time index holds every entry once, oldest first */
    static got_t got;
    search_cursor_t cur;
    search_cursor_init(&cur);
    got.n = 0;
    while (!search_window_step(S, 0, rx(".*"), rx(".*"), 0, 1LL << 40, &cur, 1000, collect, &got))
        ;
    search_cursor_deinit(&cur);
    cr_assert_eq(got.n, N);
}
