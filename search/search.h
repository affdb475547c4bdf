/* search.h - the search catalogue: which blobs exist under which tag names, when they were
 * last modified, and what their contents say (TQUERY and TSEARCH of COMMANDS.md).
 *
 * The catalogue follows storage through calls the server makes from the observers it
 * registers (storage never includes this header):
 *  - search_blob_touch() when a blob was created or written (storage's on_blob_change), then
 *    search_blob_text() with its first bytes once the server has them (at once for RAM, after
 *    a read plan for file tiers);
 *  - search_blob_deleted() and search_tag_freed() when storage drops a blob or a tag object;
 *  - search_tag_bind() when a tag object is (now) the key `name` of database db (a write to a
 *    new tag, RENAME, MOVE), and search_swapdb() for SWAPDB.
 * Tags and blobs are identified by their storage objects, which survive RENAME and MOVE, so
 * those commands re-file one name and touch no blob. A tag object not yet bound to a key (a
 * new tag during the command that creates it) is invisible to queries.
 *
 * Indexes: per database an ordered set of tag names; per tag an ordered set of blob names;
 * one modification-time index over all blobs; one BM25 index (search/bm25.h) over the
 * contents of all indexed blobs of every database, so N, df and the average length are
 * server-wide. Queries answer for one database. Loop thread only. */
#ifndef CTE_SEARCH_SEARCH_H
#define CTE_SEARCH_SEARCH_H

#include "common/buf.h"
#include "search/bm25.h"
#include "search/regex.h"
#include "storage/t_tag.h"

#include <stddef.h>
#include <stdint.h>

typedef struct search search_t;

/* A new, empty catalogue for databases 0..ndb-1. Never fails. */
search_t *search_new(int ndb);
void search_free(search_t *s);

/* ---- following storage ---- */

/* Tag object t is now the key name[0..len) of database db. */
void search_tag_bind(search_t *s, const tag_obj_t *t, int db, const char *name, size_t len);
/* The tag object is being freed (its blobs were reported deleted before). */
void search_tag_freed(search_t *s, const tag_obj_t *t);
/* SWAPDB a b. O(1). */
void search_swapdb(search_t *s, int a, int b);
/* Blob b of tag t was created or written: its name and modification time are filed at once.
 * Returns a generation number that search_blob_text wants with the contents. */
uint64_t search_blob_touch(search_t *s, const tag_obj_t *t, const blob_t *b);
/* The contents of b to index: its first len bytes (truncated: the blob is longer), read after
 * the touch that returned gen. Ignored when b changed again since (a newer touch) or is gone.
 * With text NULL the blob's contents are not indexed (binary, or indexing is off). */
void search_blob_text(search_t *s, const blob_t *b, uint64_t gen, const char *text, size_t len);
/* Blob b is gone (TDEL, a write that failed, its tag deleted or expired). */
void search_blob_deleted(search_t *s, const blob_t *b);

/* Periodic work: a step of BM25 compaction of about budget bytes. */
void search_cron(search_t *s, size_t budget);

/* ---- queries ---- */

/* Called with each match: the tag name, and the blob name (NULL for TQUERY TAGS). The bytes
 * are valid during the call. */
typedef void search_emit_fn(void *ud, const char *tag, size_t tlen, const char *blob, size_t blen);

/* Where a stepped query stopped; zero it (or search_cursor_init) before the first step and
 * search_cursor_deinit after the last. */
typedef struct search_cursor {
    int phase;    /* 0: not started; 1: inside tag `tag`; 2: after tag `tag` (or time key) */
    int has_blob; /* phase 1: blob `blob` was the last one seen (else none yet) */
    buf_t tag, blob;
    uint64_t visited; /* names visited so far (tests check that prefixes narrow the walk) */
} search_cursor_t;

void search_cursor_init(search_cursor_t *cur);
void search_cursor_deinit(search_cursor_t *cur);

/* TQUERY TAGS: names of database db's tags matching rx, in bytewise order, visiting at most
 * budget names in this call (only names under rx's literal prefix are visited). Returns 1
 * when done, 0 when the cursor holds where to go on. Changes between steps: a name present
 * for the whole query is reported exactly once. */
int search_tags_step(search_t *s, int db, rx_t *rx, search_cursor_t *cur, uint64_t budget,
                     search_emit_fn *emit, void *ud);
/* TLIST tag FROM/COUNT: the names of tag object t's blobs from the first one >= from[0..flen)
 * on (flen 0: from the first), in bytewise order, at most count of them: emit(ud, name, len)
 * for each (the bytes are valid during the call). Returns how many were emitted.
 * O(log n + count). */
uint64_t search_tag_range(search_t *s, const tag_obj_t *t, const char *from, size_t flen,
                          uint64_t count, void (*emit)(void *ud, const char *name, size_t len),
                          void *ud);
/* TQUERY BLOBS without a window: (tag, blob) pairs matching both patterns, by tag then blob. */
int search_blobs_step(search_t *s, int db, rx_t *trx, rx_t *brx, search_cursor_t *cur,
                      uint64_t budget, search_emit_fn *emit, void *ud);
/* TQUERY BLOBS with a window: pairs whose modification time lies in [since, until], oldest
 * first (equal times in the order the blobs were created), from the time index. */
int search_window_step(search_t *s, int db, rx_t *trx, rx_t *brx, long long since, long long until,
                       search_cursor_t *cur, uint64_t budget, search_emit_fn *emit, void *ud);

typedef struct search_hit {
    const char *tag, *blob; /* valid until the catalogue changes */
    size_t tlen, blen;
    double score;
} search_hit_t;

/* What TSEARCH keeps: blobs whose names match trx and brx (each may be NULL: any), of tags
 * for which visible(ud, tag, tlen) says 1 (NULL: all; the server hides expired keys); and the
 * statistics scores use: global (NULL: this index's; a cluster node is given the whole
 * cluster's, see bm25_global_t). */
typedef struct search_filter {
    rx_t *trx, *brx;
    int (*visible)(void *ud, const char *tag, size_t tlen);
    void *ud;
    const bm25_global_t *global;
} search_filter_t;

/* TSEARCH: the k best blobs of database db for query q[0..qlen) that the filter keeps (f may
 * be NULL), best first, equal scores by tag then blob name. Returns a new array of *n hits
 * (NULL when none) that the caller frees with xfree. */
search_hit_t *search_query(search_t *s, int db, const char *q, size_t qlen,
                           const search_filter_t *f, size_t k, size_t *n);
/* A shard's part of a query's global statistics (TSEARCH ... STATS): *docs and *tokens get N
 * and the sum of document lengths, fn each distinct query term the index knows with its df. */
void search_term_stats(search_t *s, const char *q, size_t qlen,
                       void (*fn)(void *ud, const char *term, size_t len, uint64_t df), void *ud,
                       uint64_t *docs, uint64_t *tokens);
/* Blobs whose contents are indexed (N). */
uint64_t search_docs(const search_t *s);

typedef struct search_stats {
    uint64_t tags, blobs;   /* names filed (bound or not) */
    uint64_t docs;          /* blobs whose contents are indexed (N) */
    uint64_t terms, tokens; /* see bm25_stats_t */
    uint64_t postings, dead_postings;
    uint64_t bytes;      /* bytes of contents indexed, over live documents */
    size_t index_memory; /* the BM25 index */
    size_t names_memory; /* name and time indexes */
} search_stats_t;

void search_get_stats(const search_t *s, search_stats_t *out);

#endif
