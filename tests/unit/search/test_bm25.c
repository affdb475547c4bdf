/* test_bm25.c - search/bm25.c against a straightforward reference of COMMANDS.md section 4:
 * on random corpora under adds, removals, re-adds and compaction (with id reuse), every
 * ranking equals the reference's (same documents, same order, scores within 1e-9), filters
 * leave scores alone, and the statistics add up. */
#include "search/bm25.h"

#include "common/alloc.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDOCS 400
#define MAXTOK 80

/* ---- the reference: documents as token lists, scores by the formula ---- */

typedef struct rdoc {
    int live;
    uint32_t id; /* in the index under test */
    char text[1024];
    char tok[MAXTOK][24];
    int ntok;
} rdoc_t;

static rdoc_t docs[MAXDOCS];

static int ref_tokens(const char *s, char out[][24], int max)
{
    int n = 0;
    for (size_t i = 0; s[i];) {
        if (!(isascii((unsigned char)s[i]) && isalnum((unsigned char)s[i]))) {
            i++;
            continue;
        }
        size_t j = i;
        while (s[j] && isascii((unsigned char)s[j]) && isalnum((unsigned char)s[j])) j++;
        if (j - i >= 2 && n < max) {
            for (size_t k = i; k < j; k++) out[n][k - i] = (char)tolower((unsigned char)s[k]);
            out[n][j - i] = '\0';
            n++;
        }
        i = j;
    }
    return n;
}

/* The collection statistics of the reference: N, the average length, and df per query term. */
typedef struct ref_stats {
    double N, avgdl, df[16];
} ref_stats_t;

static void ref_stats(char q[][24], int nq, ref_stats_t *st)
{
    double total = 0;
    memset(st, 0, sizeof(*st));
    for (int i = 0; i < MAXDOCS; i++) {
        if (!docs[i].live) continue;
        st->N++;
        total += docs[i].ntok;
        for (int t = 0; t < nq; t++) {
            int has = 0;
            for (int k = 0; k < docs[i].ntok; k++) has |= !strcmp(docs[i].tok[k], q[t]);
            st->df[t] += has;
        }
    }
    st->avgdl = total / st->N;
}

/* Reference score of document d for the distinct query terms q[0..nq); -1 if it holds none. */
static double ref_score(const rdoc_t *d, char q[][24], int nq, const ref_stats_t *st)
{
    double score = 0;
    int held = 0;
    for (int t = 0; t < nq; t++) {
        double tf = 0;
        for (int k = 0; k < d->ntok; k++) tf += !strcmp(d->tok[k], q[t]);
        if (tf == 0) continue;
        held = 1;
        double idf = log((st->N - st->df[t] + 0.5) / (st->df[t] + 0.5) + 1.0);
        score += idf * (tf * 2.5) / (tf + 1.5 * (1.0 - 0.75 + 0.75 * d->ntok / st->avgdl));
    }
    return held ? score : -1;
}

static int distinct_query(const char *q, char out[][24])
{
    char all[16][24];
    int n = ref_tokens(q, all, 16), m = 0;
    for (int i = 0; i < n; i++) {
        int dup = 0;
        for (int j = 0; j < m; j++) dup |= !strcmp(out[j], all[i]);
        if (!dup) strcpy(out[m++], all[i]);
    }
    return m;
}

/* ---- random corpora ---- */

static const char *const vocab[] = {
    "alpha", "Beta", "GAMMA", "delta", "x",     "y2",   "z",    "epsilon", "data",  "Data",
    "node",  "42",   "7",     "blob",  "tag",   "tier", "ssd",  "nvme",    "ram",   "cache",
    "score", "hot",  "cold",  "a1b2",  "q",     "lazy", "fox",  "dog",     "jump",  "over",
    "the",   "of",   "and",   "query", "index", "term", "bm25", "k1",      "okapi", "rank"};
static const char *const seps[] = {" ", ", ", ". ", "\n", "-", "_", " \xc3\xa9 ", "::", "  "};

static void random_text(char *out, size_t cap)
{
    size_t n = 0, words = (size_t)(rand() % 60);
    out[0] = '\0';
    for (size_t i = 0; i < words; i++) {
        /* skewed: early words are common, as in real text */
        size_t nv = sizeof(vocab) / sizeof(vocab[0]);
        const char *w = vocab[(size_t)(rand() % (int)nv) * (size_t)(rand() % (int)nv) / nv];
        const char *s = seps[rand() % (int)(sizeof(seps) / sizeof(seps[0]))];
        n += (size_t)snprintf(out + n, cap - n, "%s%s", w, s);
    }
}

static bm25_t *ix;

static void put_doc(int i)
{
    random_text(docs[i].text, sizeof(docs[i].text));
    docs[i].ntok = ref_tokens(docs[i].text, docs[i].tok, MAXTOK);
    docs[i].id = bm25_add(ix, docs[i].text, strlen(docs[i].text), &docs[i]);
    docs[i].live = 1;
}

static void drop_doc(int i)
{
    bm25_remove(ix, docs[i].id);
    docs[i].live = 0;
}

/* Ties by position in docs[], standing for (tag, blob) order. */
static int by_index(void *ud, const void *a, const void *b)
{
    const rdoc_t *x = a, *y = b;
    return (x > y) - (x < y);
}

static int odd_only(void *ud, void *owner)
{
    return ((rdoc_t *)owner - docs) % 2 == 1;
}

struct ref_hit {
    int doc;
    double score;
};

static int ref_order(const void *a, const void *b)
{
    const struct ref_hit *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? 1 : -1;
    return x->doc - y->doc;
}

/* Runs query q through both and compares the whole ranking (k = every document). */
static void check_query(const char *q, int filtered)
{
    char terms[16][24];
    int nq = distinct_query(q, terms);
    static struct ref_hit want[MAXDOCS];
    int nw = 0;
    ref_stats_t st;
    ref_stats(terms, nq, &st);
    for (int i = 0; i < MAXDOCS; i++) {
        if (!docs[i].live || (filtered && i % 2 == 0)) continue;
        double s = ref_score(&docs[i], terms, nq, &st);
        if (s >= 0) want[nw++] = (struct ref_hit){i, s};
    }
    qsort(want, (size_t)nw, sizeof(want[0]), ref_order);
    static bm25_hit_t got[MAXDOCS];
    size_t k = (size_t)(rand() % 3 == 0 ? 1 + rand() % 5 : MAXDOCS);
    bm25_query_t opt = {k, filtered ? odd_only : NULL, by_index, NULL};
    size_t n = bm25_search(ix, q, strlen(q), &opt, got);
    size_t expect = (size_t)nw < k ? (size_t)nw : k;
    cr_assert_eq(n, expect, "query '%s': %zu hits, want %zu", q, n, expect);
    for (size_t i = 0; i < n; i++) {
        /* equal reference scores may differ in the last bit from ours: compare by score, and
         * require the same document where the reference has no near tie */
        cr_assert(fabs(got[i].score - want[i].score) < 1e-9, "query '%s' hit %zu: %.17g vs %.17g",
                  q, i, got[i].score, want[i].score);
        int doc = (int)((rdoc_t *)got[i].owner - docs);
        int near_tie = (i > 0 && fabs(want[i].score - want[i - 1].score) < 1e-9) ||
                       (i + 1 < (size_t)nw && fabs(want[i].score - want[i + 1].score) < 1e-9);
        if (!near_tie) cr_assert_eq(doc, want[i].doc, "query '%s' hit %zu", q, i);
    }
}

static void random_query(char *q, size_t cap)
{
    int words = 1 + rand() % 3;
    size_t n = 0;
    q[0] = '\0';
    for (int i = 0; i < words; i++) {
        size_t nv = sizeof(vocab) / sizeof(vocab[0]);
        const char *w = rand() % 10 == 0 ? "absent" : vocab[rand() % (int)nv];
        n += (size_t)snprintf(q + n, cap - n, "%s%s", i ? " " : "", w);
    }
}

static void check_stats(void)
{
    bm25_stats_t st;
    bm25_get_stats(ix, &st);
    uint64_t n = 0, tokens = 0;
    for (int i = 0; i < MAXDOCS; i++) {
        if (!docs[i].live) continue;
        n++;
        tokens += (uint64_t)docs[i].ntok;
        cr_assert_eq(bm25_doc_len(ix, docs[i].id), (uint32_t)docs[i].ntok);
    }
    cr_assert_eq(st.docs, n);
    cr_assert_eq(st.tokens, tokens);
}

static void setup(void)
{
    memset(docs, 0, sizeof(docs));
    ix = bm25_new();
}

static void teardown(void)
{
    bm25_free(ix);
}

TestSuite(bm25, .init = setup, .fini = teardown, .timeout = 60);

Test(bm25, rankings_equal_the_reference_on_random_corpora_under_change)
{
    for (int seed = 1; seed <= 6; seed++) {
        srand((unsigned)seed);
        for (int round = 0; round < 60; round++) {
            for (int op = 0; op < 25; op++) {
                int i = rand() % MAXDOCS;
                if (docs[i].live) drop_doc(i);
                if (rand() % 4) put_doc(i); /* a re-add is a changed document */
            }
            if (rand() % 3 == 0) bm25_compact_step(ix, (size_t)(rand() % 20000));
            check_stats();
            char q[128];
            for (int k = 0; k < 4; k++) {
                random_query(q, sizeof(q));
                check_query(q, rand() % 4 == 0);
            }
        }
        for (int i = 0; i < MAXDOCS; i++)
            if (docs[i].live) drop_doc(i);
        check_stats();
    }
}

Test(bm25, a_worked_example_by_hand)
{
    /* N = 2, avgdl = 3; "fox" is in one document with tf 1, dl 2 */
    static rdoc_t a, b;
    bm25_add(ix, "quick fox", 9, &a);
    bm25_add(ix, "lazy lazy dog", 13, &b);
    bm25_hit_t h[2];
    bm25_query_t opt = {10, NULL, by_index, NULL};
    cr_assert_eq(bm25_search(ix, "FOX!", 4, &opt, h), 1);
    double idf = log((2 - 1 + 0.5) / (1 + 0.5) + 1), dl = 2, avg = 2.5;
    double want = idf * 2.5 / (1 + 1.5 * (0.25 + 0.75 * dl / avg));
    cr_assert_eq(h[0].owner, &a);
    cr_assert_float_eq(h[0].score, want, 1e-12);
    /* one-letter words are no tokens; repeated query words count once */
    cr_assert_eq(bm25_search(ix, "a fox fox", 9, &opt, h), 1);
    cr_assert_float_eq(h[0].score, want, 1e-12);
    cr_assert_eq(bm25_search(ix, "cat", 3, &opt, h), 0);
}

Test(bm25, equal_scores_follow_the_tie_order)
{
    static rdoc_t d[5];
    for (int i = 4; i >= 0; i--) bm25_add(ix, "same words here", 15, &d[i]);
    bm25_hit_t h[5];
    bm25_query_t opt = {5, NULL, by_index, NULL};
    cr_assert_eq(bm25_search(ix, "words", 5, &opt, h), 5);
    for (int i = 0; i < 5; i++) cr_assert_eq(h[i].owner, &d[i]);
    opt.k = 2;
    cr_assert_eq(bm25_search(ix, "words", 5, &opt, h), 2);
    cr_assert_eq(h[0].owner, &d[0]);
    cr_assert_eq(h[1].owner, &d[1]);
}

Test(bm25, compaction_drops_dead_postings_and_empty_terms)
{
    static rdoc_t d[100];
    char text[64];
    for (int i = 0; i < 100; i++) {
        snprintf(text, sizeof(text), "common unique%d", i);
        d[i].id = bm25_add(ix, text, strlen(text), &d[i]);
    }
    for (int i = 0; i < 90; i++) bm25_remove(ix, d[i].id);
    bm25_stats_t st;
    bm25_get_stats(ix, &st);
    cr_assert_eq(st.docs, 10);
    cr_assert_eq(st.postings, 20);
    while (bm25_compact_step(ix, 64)) {
    }
    bm25_get_stats(ix, &st);
    cr_assert_eq(st.dead_postings, 0);
    cr_assert_eq(st.terms, 11); /* common + unique90..99 */
    /* removed ids are reused after the pass, and scores stay right */
    static rdoc_t e;
    uint32_t id = bm25_add(ix, "fresh common", 12, &e);
    cr_assert_leq(id, 90);
    bm25_hit_t h[20];
    bm25_query_t opt = {20, NULL, by_index, NULL};
    cr_assert_eq(bm25_search(ix, "unique5", 7, &opt, h), 0);
    cr_assert_eq(bm25_search(ix, "common", 6, &opt, h), 11);
}

Test(bm25, removing_the_last_document_frees_everything)
{
    static rdoc_t a;
    uint32_t id = bm25_add(ix, "some text to index", 18, &a);
    bm25_remove(ix, id);
    bm25_stats_t st;
    bm25_get_stats(ix, &st);
    cr_assert_eq(st.docs, 0);
    cr_assert_eq(st.terms, 0);
    cr_assert_eq(st.dead_postings, 0);
    cr_assert_eq(st.memory, 0);
}

/* ---- shards scored with the corpus's statistics (a cluster's two-phase TSEARCH) ---- */

typedef struct gstats {
    char term[64][24];
    uint64_t df[64];
    int n;
} gstats_t;

static void add_term_df(void *ud, const char *term, size_t len, uint64_t df)
{
    gstats_t *g = ud;
    for (int i = 0; i < g->n; i++)
        if (strlen(g->term[i]) == len && !memcmp(g->term[i], term, len)) {
            g->df[i] += df;
            return;
        }
    cr_assert_lt(g->n, 64);
    memcpy(g->term[g->n], term, len);
    g->term[g->n][len] = '\0';
    g->df[g->n++] = df;
}

static uint64_t lookup_df(void *ud, const char *term, size_t len)
{
    gstats_t *g = ud;
    for (int i = 0; i < g->n; i++)
        if (strlen(g->term[i]) == len && !memcmp(g->term[i], term, len)) return g->df[i];
    return UINT64_MAX;
}

Test(bm25, shards_given_the_corpus_statistics_score_as_one_index)
{
    static const char *words[] = {"alpha", "beta", "gamma", "delta", "omega", "kappa", "rho"};
    static rdoc_t d[120];
    bm25_t *shard[3] = {bm25_new(), bm25_new(), bm25_new()};
    srand(11);
    for (int i = 0; i < 120; i++) {
        int n = 1 + rand() % 20, len = 0;
        for (int w = 0; w < n; w++)
            len += snprintf(d[i].text + len, sizeof d[i].text - len, "%s ", words[rand() % 7]);
        bm25_add(ix, d[i].text, (size_t)len, &d[i]); /* the whole corpus */
        bm25_add(shard[i % 3], d[i].text, (size_t)len, &d[i]);
    }
    const char *q = "gamma omega nothere rho";
    gstats_t g = {0};
    bm25_global_t glob = {0, 0, lookup_df, &g};
    for (int s = 0; s < 3; s++) {
        bm25_stats_t st;
        bm25_get_stats(shard[s], &st);
        glob.docs += st.docs;
        glob.tokens += st.tokens;
        bm25_term_stats(shard[s], q, strlen(q), add_term_df, &g);
    }
    cr_assert_eq(g.n, 3); /* known terms only, each once */
    bm25_hit_t all[120], part[120];
    bm25_query_t opt = {120, NULL, by_index, NULL};
    size_t n = bm25_search(ix, q, strlen(q), &opt, all), seen = 0;
    opt.global = &glob;
    for (int s = 0; s < 3; s++) {
        size_t m = bm25_search(shard[s], q, strlen(q), &opt, part);
        for (size_t j = 0; j < m; j++, seen++)
            for (size_t k = 0; k < n; k++)
                if (all[k].owner == part[j].owner)
                    cr_assert_float_eq(part[j].score, all[k].score, 1e-12 * all[k].score);
        bm25_free(shard[s]);
    }
    cr_assert_eq(seen, n);
}
