/* bm25.h - an incremental inverted index over documents, ranked by Okapi BM25.
 *
 * Documents are texts handed in whole (bm25_add) and taken out by id (bm25_remove); a changed
 * document is removed and added again. Tokens are those of search/token.h. Ranking follows
 * COMMANDS.md section 4: k1 = 1.5, b = 0.75, idf = ln((N - df + 0.5) / (df + 0.5) + 1), with N,
 * df and the average document length over every document in the index (a filter never changes
 * a score). A query's terms are its distinct tokens; a document's score is the sum over the
 * query terms it holds, added in the order the terms first appear in the query. Only
 * documents holding at least one query term are hits. Equal scores are ordered by the
 * caller's tie order.
 *
 * The index owns its memory; owners are the caller's pointers, handed back in hits. Not
 * thread-safe: loop thread only. */
#ifndef CTE_SEARCH_BM25_H
#define CTE_SEARCH_BM25_H

#include <stddef.h>
#include <stdint.h>

#define BM25_K1 1.5
#define BM25_B 0.75

typedef struct bm25 bm25_t;

typedef struct bm25_stats {
    uint64_t docs;          /* N */
    uint64_t tokens;        /* sum of document lengths */
    uint64_t terms;         /* distinct terms in the dictionary (see bm25_compact_step) */
    uint64_t postings;      /* live (term, document) pairs */
    uint64_t dead_postings; /* left by removed documents, until compaction drops them */
    size_t memory;          /* bytes the index holds */
} bm25_stats_t;

typedef struct bm25_hit {
    void *owner;
    double score;
} bm25_hit_t;

/* Statistics of a larger corpus this index is one shard of (a cluster's nodes): a query given
 * them scores as if every shard's documents were in one index. docs (N) and tokens (the sum of
 * document lengths) are the corpus's; df(ud, term, len) gives a query term's document
 * frequency over the corpus, or UINT64_MAX when unknown (then this index's df is used). */
typedef struct bm25_global {
    uint64_t docs, tokens;
    uint64_t (*df)(void *ud, const char *term, size_t len);
    void *ud;
} bm25_global_t;

/* A query's shape: at most k hits; accept (may be NULL) keeps a document out of the results
 * without changing any score; order ranks equal scores (< 0: a first; required); global (may
 * be NULL: this index's) the statistics scores are computed with. */
typedef struct bm25_query {
    size_t k;
    int (*accept)(void *ud, void *owner);
    int (*order)(void *ud, const void *a, const void *b);
    void *ud;
    const bm25_global_t *global;
} bm25_query_t;

/* A new, empty index. Never fails (aborts on out-of-memory). */
bm25_t *bm25_new(void);
void bm25_free(bm25_t *ix);

/* Indexes text[0..len) as a new document of owner (not NULL); returns its id (>= 1), which
 * stays valid until bm25_remove. */
uint32_t bm25_add(bm25_t *ix, const char *text, size_t len, void *owner);
/* Removes a document (id from bm25_add, not yet removed). O(1): its postings are dropped
 * later by compaction, and are skipped by queries meanwhile. */
void bm25_remove(bm25_t *ix, uint32_t id);
/* The number of tokens of a document. */
uint32_t bm25_doc_len(const bm25_t *ix, uint32_t id);

/* Runs query q[0..qlen) and writes up to opt->k hits into out (room for min(k, documents)
 * hits), best first; returns their number. */
size_t bm25_search(bm25_t *ix, const char *q, size_t qlen, const bm25_query_t *opt,
                   bm25_hit_t *out);

/* One bounded step of compaction: rewrites posting lists without the entries of removed
 * documents, visiting about budget bytes of postings, and frees terms left without any.
 * Starts a pass only when dead postings reach half the live ones. Returns 1 while a pass is
 * under way. Document ids are reused only after a pass has removed every trace of them. */
int bm25_compact_step(bm25_t *ix, size_t budget);

void bm25_get_stats(const bm25_t *ix, bm25_stats_t *out);

/* The statistics a shard contributes to a query's global ones: fn(ud, term, len, df) for each
 * distinct query term this index knows, in query order, with its df here (live documents).
 * N and the token sum are bm25_get_stats's docs and tokens. */
void bm25_term_stats(bm25_t *ix, const char *q, size_t qlen,
                     void (*fn)(void *ud, const char *term, size_t len, uint64_t df), void *ud);

#endif
