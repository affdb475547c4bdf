/* bm25.c - the inverted index and its BM25 ranking (see bm25.h).
 *
 * Shapes:
 *  - terms: an open-addressing table of term_t, one per distinct token, each with its posting
 *    list, sparse (a byte string of (zigzag varint of id - previous id, varint tf) pairs in
 *    the order they were appended) or, for common terms, dense (a tf byte per id). A
 *    document adds one pair per distinct term it holds.
 *  - docs[id]: the owner (NULL once removed), the length in tokens and the number of distinct
 *    terms. Ids are small integers so a query accumulates scores in dense arrays.
 *  - Removal is O(1): the document's slot is cleared and its postings become dead; queries
 *    skip them (df counts live postings only, so scores stay exact). Compaction passes walk
 *    the term table in bounded steps, rewrite lists without dead pairs and free empty terms.
 *    A removed id waits in `dying` until a pass that started after its removal has finished,
 *    and only then is reused: a reused id can never meet a stale posting. Reused ids make
 *    lists unsorted, hence the signed (zigzag) deltas.
 *  - When the last document goes, everything is freed at once (FLUSHALL gives memory back).
 * Invariants: live_postings = sum of nterms over live docs; tokens = sum of their lengths;
 * every pair in a list names a live doc, a dying id, or an id dead since the current pass
 * started. Loop thread only. */
#include "search/bm25.h"

#include "common/alloc.h"
#include "common/dict.h"
#include "search/token.h"

#include <assert.h>
#include <math.h>
#include <string.h>

typedef struct over {
    uint32_t id, tf;
} over_t;

typedef struct term {
    uint32_t hash, tlen; /* of the text */
    uint8_t *p;          /* sparse form: the pairs (NULL in the dense form) */
    uint32_t len, cap;
    uint32_t last;  /* id of the last pair appended (the delta base) */
    uint32_t n;     /* pairs, live or dead, in either form */
    uint32_t tf;    /* scratch: occurrences in the document being added */
    uint64_t stamp; /* scratch: the add or query that last met this term */
    uint8_t *dense; /* dense form: tf by id (0: absent; 255: the exact tf is in over) */
    uint32_t dcap;  /* ids dense covers */
    uint32_t nover, capover;
    over_t *over; /* dense form: (id, tf) for tf >= 255 */
    char text[];
} term_t;

typedef struct term_slot {
    uint32_t hash, tlen;
    term_t *t; /* NULL: empty */
} term_slot_t;

typedef struct doc {
    void *owner;
    uint32_t len;    /* tokens */
    uint32_t nterms; /* distinct terms = pairs in the lists */
} doc_t;

typedef struct idvec {
    uint32_t *v;
    size_t n, cap;
} idvec_t;

struct bm25 {
    term_slot_t *slots; /* the terms: open addressing, linear probing, at most half full */
    uint32_t mask;      /* slots - 1 (slots is a power of two), 0 when there is no table */
    uint64_t nterms;
    term_t **gone; /* emptied terms the current pass found: freed when it ends */
    size_t ngone, capgone;
    doc_t *docs;
    uint32_t cap, next_id;
    idvec_t free_ids, dying;
    size_t dying_at_start; /* dying[0..this) died before the current pass started */
    uint64_t live_docs, tokens, live_postings, dead_postings;
    uint32_t min_len; /* no document added since the last reset was shorter (a bound) */
    size_t mem;       /* terms and postings (doc table and scratch are added in stats) */
    int pass;
    uint64_t cursor;
    uint64_t stamp;
    /* scratch of bm25_add */
    term_t **seen;
    size_t nseen, seencap;
    struct tok *toks;
    size_t ntoks, captoks;
    char *tbuf;
    size_t tbuf_len, tbuf_cap;
    /* scratch of queries */
    double *acc;
    uint32_t *mark, qmark, acccap;
    idvec_t touched; /* ids met by the current query (capacity: acccap) */
};

/* ---- small vectors and varints ---- */

static void idvec_push(idvec_t *v, uint32_t x)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 64;
        v->v = xrealloc(v->v, sizeof(uint32_t) * v->cap);
    }
    v->v[v->n++] = x;
}

static void idvec_free(idvec_t *v)
{
    xfree(v->v);
    memset(v, 0, sizeof(*v));
}

static inline size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static inline uint64_t get_varint(const uint8_t **pp)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    int shift = 0;
    while (*p & 0x80) {
        v |= (uint64_t)(*p++ & 0x7f) << shift;
        shift += 7;
    }
    v |= (uint64_t)*p++ << shift;
    *pp = p;
    return v;
}

static inline uint64_t zigzag(int64_t d)
{
    return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

static inline int64_t unzigzag(uint64_t z)
{
    return (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
}

/* ---- terms ---- */

static void mem_free(bm25_t *ix, void *p)
{
    if (!p) return;
    ix->mem -= alloc_size(p);
    xfree(p);
}

static void term_free(bm25_t *ix, term_t *t)
{
    mem_free(ix, t->p);
    mem_free(ix, t->dense);
    mem_free(ix, t->over);
    mem_free(ix, t);
}

/* The term table: the hot path of indexing (one lookup per token), so no callbacks and no
 * incremental rehash: a lookup compares the cached hash and length before the text. Slots
 * move only when the table doubles (a compaction pass then starts over) or when a pass that
 * is over frees its emptied terms (backward-shift deletion). */
static void slot_put(term_slot_t *slots, uint32_t mask, term_t *t)
{
    uint32_t i = t->hash & mask;
    while (slots[i].t) i = (i + 1) & mask;
    slots[i] = (term_slot_t){t->hash, t->tlen, t};
}

static void table_grow(bm25_t *ix)
{
    uint32_t old = ix->slots ? ix->mask + 1 : 0, size = old ? old * 2 : 1024;
    term_slot_t *slots = xcalloc(size, sizeof(term_slot_t));
    for (uint32_t i = 0; i < old; i++)
        if (ix->slots[i].t) slot_put(slots, size - 1, ix->slots[i].t);
    xfree(ix->slots);
    ix->slots = slots;
    ix->mask = size - 1;
    ix->cursor = 0; /* a pass under way starts over: slots moved */
}

static void slot_remove(bm25_t *ix, const term_t *t)
{
    uint32_t i = t->hash & ix->mask;
    while (ix->slots[i].t != t) i = (i + 1) & ix->mask;
    ix->slots[i].t = NULL;
    for (uint32_t j = (i + 1) & ix->mask; ix->slots[j].t; j = (j + 1) & ix->mask) {
        uint32_t home = ix->slots[j].hash & ix->mask;
        /* the entry at j may move to the hole at i unless its home lies in (i, j] */
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays) continue;
        ix->slots[i] = ix->slots[j];
        ix->slots[j].t = NULL;
        i = j;
    }
    ix->nterms--;
}

/* memcmp(a, b, n) == 0 without a library call for the short words most tokens are. */
static inline int same_text(const char *a, const char *b, size_t n)
{
    if (n > 16) return memcmp(a, b, n) == 0;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static term_t *term_find_h(bm25_t *ix, const char *tok, size_t len, uint32_t h, int create)
{
    if (ix->slots) {
        for (uint32_t i = h & ix->mask; ix->slots[i].t; i = (i + 1) & ix->mask) {
            const term_slot_t *s = &ix->slots[i];
            if (s->hash == h && s->tlen == len && same_text(s->t->text, tok, len)) return s->t;
        }
    }
    if (!create) return NULL;
    if (!ix->slots || (ix->nterms + 1) * 2 > (uint64_t)ix->mask + 1) table_grow(ix);
    term_t *t = xcalloc(1, sizeof(*t) + len);
    memcpy(t->text, tok, len);
    t->hash = h;
    t->tlen = (uint32_t)len;
    ix->mem += alloc_size(t);
    slot_put(ix->slots, ix->mask, t);
    ix->nterms++;
    return t;
}

static term_t *term_get(bm25_t *ix, const char *tok, size_t len, int create)
{
    return term_find_h(ix, tok, len, dict_hash(tok, len), create);
}

/* ---- the two forms of a posting list ----
 * Sparse: varint pairs, about 2-3 bytes each. Dense, for the common terms held by more than
 * an eighth of the ids: one byte per id, which answers "tf of document id" at once (the
 * query's pruning needs that) and costs at most about three times the sparse form (no more
 * than it for terms past a third). Lists turn dense as they grow past the share (and at least
 * DENSE_MIN pairs) and sparse again at compaction when they fall under a twentieth. */

#define DENSE_MIN 256
#define DENSE_SHARE 8   /* dense past 1/8 of the ids */
#define SPARSE_SHARE 20 /* sparse again under 1/20 */

static void *mem_realloc(bm25_t *ix, void *p, size_t n)
{
    if (p) ix->mem -= alloc_size(p);
    p = xrealloc(p, n);
    ix->mem += alloc_size(p);
    return p;
}

static void dense_reserve(bm25_t *ix, term_t *t, uint32_t ids)
{
    if (t->dcap >= ids) return;
    uint32_t cap = ix->cap > ids ? ix->cap : ids;
    t->dense = mem_realloc(ix, t->dense, cap);
    memset(t->dense + t->dcap, 0, cap - t->dcap);
    t->dcap = cap;
}

static void dense_set(bm25_t *ix, term_t *t, uint32_t id, uint32_t tf)
{
    dense_reserve(ix, t, id + 1);
    t->dense[id] = (uint8_t)(tf < 255 ? tf : 255);
    if (tf < 255) return;
    if (t->nover == t->capover) {
        t->capover = t->capover ? t->capover * 2 : 4;
        t->over = mem_realloc(ix, t->over, sizeof(over_t) * t->capover);
    }
    t->over[t->nover++] = (over_t){id, tf};
}

/* The tf of document id in a dense list, 0 if absent. */
static inline uint32_t dense_tf(const term_t *t, uint32_t id)
{
    uint32_t v = id < t->dcap ? t->dense[id] : 0;
    if (v < 255) return v;
    for (uint32_t i = 0; i < t->nover; i++)
        if (t->over[i].id == id) return t->over[i].tf;
    assert(0 && "dense tf 255 without an overflow entry");
    return v;
}

static void sparse_append(bm25_t *ix, term_t *t, uint32_t id, uint32_t tf)
{
    if (t->len + 16 > t->cap) {
        t->cap = t->cap ? t->cap + t->cap / 2 + 16 : 16;
        t->p = mem_realloc(ix, t->p, t->cap);
    }
    t->len += (uint32_t)put_varint(t->p + t->len, zigzag((int64_t)id - (int64_t)t->last));
    t->len += (uint32_t)put_varint(t->p + t->len, tf);
    t->last = id;
}

static void to_dense(bm25_t *ix, term_t *t)
{
    const uint8_t *p = t->p, *end = t->p + t->len;
    uint32_t prev = 0;
    dense_reserve(ix, t, ix->next_id);
    while (p < end) {
        uint32_t id = (uint32_t)((int64_t)prev + unzigzag(get_varint(&p)));
        dense_set(ix, t, id, (uint32_t)get_varint(&p));
        prev = id;
    }
    mem_free(ix, t->p);
    t->p = NULL;
    t->len = t->cap = t->last = 0;
}

static void to_sparse(bm25_t *ix, term_t *t)
{
    uint8_t *dense = t->dense;
    uint32_t dcap = t->dcap;
    t->dense = NULL;
    t->dcap = 0;
    for (uint32_t id = 1; id < dcap; id++)
        if (dense[id]) sparse_append(ix, t, id, dense[id] < 255 ? dense[id] : 0);
    /* the overflowed tfs: patched in a second pass is awkward in varints, so re-encode */
    if (t->nover) {
        mem_free(ix, t->p);
        t->p = NULL;
        t->len = t->cap = t->last = 0;
        t->dense = dense; /* dense_tf reads it */
        t->dcap = dcap;
        for (uint32_t id = 1; id < dcap; id++)
            if (dense[id]) sparse_append(ix, t, id, dense_tf(t, id));
        t->dense = NULL;
        t->dcap = 0;
    }
    mem_free(ix, dense);
    mem_free(ix, t->over);
    t->over = NULL;
    t->nover = t->capover = 0;
}

static void term_append(bm25_t *ix, term_t *t, uint32_t id, uint32_t tf)
{
    t->n++;
    if (t->dense) {
        dense_set(ix, t, id, tf);
        return;
    }
    sparse_append(ix, t, id, tf);
    if (t->n >= DENSE_MIN && (uint64_t)t->n * DENSE_SHARE > ix->next_id) to_dense(ix, t);
}

/* ---- the index ---- */

bm25_t *bm25_new(void)
{
    bm25_t *ix = xcalloc(1, sizeof(*ix));
    ix->next_id = 1;
    ix->min_len = UINT32_MAX;
    return ix;
}

static void free_scratch(bm25_t *ix)
{
    xfree(ix->acc);
    xfree(ix->mark);
    ix->acc = NULL;
    ix->mark = NULL;
    ix->acccap = 0;
    ix->qmark = 0;
    idvec_free(&ix->touched);
}

/* Drops every term and document: the state of a new index. */
static void reset(bm25_t *ix)
{
    for (uint32_t i = 0; ix->slots && i <= ix->mask; i++)
        if (ix->slots[i].t) term_free(ix, ix->slots[i].t);
    xfree(ix->slots);
    ix->slots = NULL;
    ix->mask = 0;
    ix->nterms = 0;
    xfree(ix->gone);
    ix->gone = NULL;
    ix->ngone = ix->capgone = 0;
    xfree(ix->docs);
    ix->docs = NULL;
    ix->cap = 0;
    ix->next_id = 1;
    idvec_free(&ix->free_ids);
    idvec_free(&ix->dying);
    ix->dying_at_start = 0;
    ix->live_docs = ix->tokens = ix->live_postings = ix->dead_postings = 0;
    ix->min_len = UINT32_MAX;
    ix->pass = 0;
    ix->cursor = 0;
    free_scratch(ix);
}

void bm25_free(bm25_t *ix)
{
    if (!ix) return;
    reset(ix);
    xfree(ix->seen);
    xfree(ix->toks);
    xfree(ix->tbuf);
    xfree(ix);
}

static uint32_t new_id(bm25_t *ix)
{
    if (ix->free_ids.n) return ix->free_ids.v[--ix->free_ids.n];
    assert(ix->next_id < UINT32_MAX);
    uint32_t id = ix->next_id++;
    if (id >= ix->cap) {
        ix->cap = ix->cap ? ix->cap * 2 : 1024;
        ix->docs = xrealloc(ix->docs, sizeof(doc_t) * ix->cap);
    }
    return id;
}

/* Adding a document takes two passes: the tokens are folded into a scratch buffer with their
 * hashes, then looked up with the slot of a token a few places ahead prefetched, which hides
 * most of the cache misses of a table far bigger than the caches. */
typedef struct tok {
    uint32_t off, len, hash;
} tok_t;

#define PREFETCH_AHEAD 8

static void collect_token(void *ud, const char *tok, size_t len)
{
    bm25_t *ix = ud;
    if (ix->ntoks == ix->captoks) {
        ix->captoks = ix->captoks ? ix->captoks * 2 : 256;
        ix->toks = xrealloc(ix->toks, sizeof(tok_t) * ix->captoks);
    }
    if (ix->tbuf_len + len > ix->tbuf_cap) {
        ix->tbuf_cap = (ix->tbuf_len + len) * 2;
        ix->tbuf = xrealloc(ix->tbuf, ix->tbuf_cap);
    }
    memcpy(ix->tbuf + ix->tbuf_len, tok, len);
    ix->toks[ix->ntoks++] = (tok_t){(uint32_t)ix->tbuf_len, (uint32_t)len, dict_hash(tok, len)};
    ix->tbuf_len += len;
}

static void count_token(bm25_t *ix, term_t *t)
{
    if (t->stamp == ix->stamp) {
        t->tf++;
        return;
    }
    t->stamp = ix->stamp;
    t->tf = 1;
    if (ix->nseen == ix->seencap) {
        ix->seencap = ix->seencap ? ix->seencap * 2 : 256;
        ix->seen = xrealloc(ix->seen, sizeof(term_t *) * ix->seencap);
    }
    ix->seen[ix->nseen++] = t;
}

uint32_t bm25_add(bm25_t *ix, const char *text, size_t len, void *owner)
{
    assert(owner);
    uint32_t id = new_id(ix);
    ix->stamp++;
    ix->nseen = ix->ntoks = ix->tbuf_len = 0;
    size_t ntok = token_each(text, len, collect_token, ix);
    for (size_t i = 0; i < ix->ntoks; i++) {
        /* two stages: the slot of a token 8 ahead, the term of a token 4 ahead (its slot was
         * fetched 4 tokens ago; a slot probed further on is only a missed hint) */
        if (i + PREFETCH_AHEAD < ix->ntoks && ix->slots)
            __builtin_prefetch(&ix->slots[ix->toks[i + PREFETCH_AHEAD].hash & ix->mask]);
        if (i + PREFETCH_AHEAD / 2 < ix->ntoks && ix->slots) {
            term_t *ahead = ix->slots[ix->toks[i + PREFETCH_AHEAD / 2].hash & ix->mask].t;
            if (ahead) __builtin_prefetch(ahead, 1);
        }
        const tok_t *k = &ix->toks[i];
        count_token(ix, term_find_h(ix, ix->tbuf + k->off, k->len, k->hash, 1));
    }
    for (size_t i = 0; i < ix->nseen; i++) term_append(ix, ix->seen[i], id, ix->seen[i]->tf);
    ix->docs[id] =
        (doc_t){owner, ntok > UINT32_MAX ? UINT32_MAX : (uint32_t)ntok, (uint32_t)ix->nseen};
    if (ix->docs[id].len < ix->min_len) ix->min_len = ix->docs[id].len;
    ix->live_docs++;
    ix->tokens += ix->docs[id].len;
    ix->live_postings += ix->nseen;
    /* reclaim garbage in proportion to what is written */
    bm25_compact_step(ix, 4 * len + 4096);
    return id;
}

void bm25_remove(bm25_t *ix, uint32_t id)
{
    assert(id > 0 && id < ix->next_id && ix->docs[id].owner);
    doc_t *d = &ix->docs[id];
    d->owner = NULL;
    ix->live_docs--;
    ix->tokens -= d->len;
    ix->live_postings -= d->nterms;
    ix->dead_postings += d->nterms;
    idvec_push(&ix->dying, id);
    if (ix->live_docs == 0) reset(ix);
}

uint32_t bm25_doc_len(const bm25_t *ix, uint32_t id)
{
    return ix->docs[id].len;
}

/* ---- compaction ---- */

/* Clears the dead ids of a dense list (and their overflow entries); returns the dropped. */
static uint64_t compact_dense(bm25_t *ix, term_t *t)
{
    uint64_t dropped = 0;
    for (uint32_t id = 1; id < t->dcap; id++) {
        if (!t->dense[id] || ix->docs[id].owner) continue;
        t->dense[id] = 0;
        dropped++;
    }
    uint32_t keep = 0;
    for (uint32_t i = 0; i < t->nover; i++)
        if (ix->docs[t->over[i].id].owner) t->over[keep++] = t->over[i];
    t->nover = keep;
    return dropped;
}

/* Rewrites a sparse list without dead pairs; returns the dropped. */
static uint64_t compact_sparse(bm25_t *ix, term_t *t)
{
    const uint8_t *p = t->p, *end = t->p + t->len;
    uint8_t *out = t->len ? xmalloc(t->len) : NULL;
    uint32_t n = 0, prev = 0, last_kept = 0;
    uint64_t dropped = 0;
    while (p < end) {
        uint32_t id = (uint32_t)((int64_t)prev + unzigzag(get_varint(&p)));
        uint32_t tf = (uint32_t)get_varint(&p);
        prev = id;
        if (!ix->docs[id].owner) {
            dropped++;
            continue;
        }
        n += (uint32_t)put_varint(out + n, zigzag((int64_t)id - (int64_t)last_kept));
        n += (uint32_t)put_varint(out + n, tf);
        last_kept = id;
    }
    if (!dropped) {
        xfree(out);
        return 0;
    }
    mem_free(ix, t->p);
    t->p = n ? xrealloc(out, n) : NULL;
    if (!n) xfree(out);
    if (t->p) ix->mem += alloc_size(t->p);
    t->len = t->cap = n;
    t->last = last_kept;
    return dropped;
}

/* Drops t's dead pairs (either form); returns the bytes visited. */
static size_t compact_term(bm25_t *ix, term_t *t)
{
    size_t visited = t->dense ? t->dcap : t->len;
    uint64_t dropped = t->dense ? compact_dense(ix, t) : compact_sparse(ix, t);
    t->n -= (uint32_t)dropped;
    ix->dead_postings -= dropped;
    if (t->dense && (uint64_t)t->n * SPARSE_SHARE < ix->next_id) to_sparse(ix, t);
    return visited + 64;
}

/* Queues an emptied term to be freed when the pass ends (once: marked by tf = UINT32_MAX;
 * a pass that starts over may meet it again). */
static void queue_gone(bm25_t *ix, term_t *t)
{
    if (t->tf == UINT32_MAX) return;
    t->tf = UINT32_MAX;
    if (ix->ngone == ix->capgone) {
        ix->capgone = ix->capgone ? ix->capgone * 2 : 64;
        ix->gone = xrealloc(ix->gone, sizeof(term_t *) * ix->capgone);
    }
    ix->gone[ix->ngone++] = t;
}

/* The pass is over: ids that died before it started are nowhere in the lists any more, and
 * the terms it emptied go (unless a document brought one back meanwhile). */
static void end_pass(bm25_t *ix)
{
    for (size_t i = 0; i < ix->dying_at_start; i++) idvec_push(&ix->free_ids, ix->dying.v[i]);
    memmove(ix->dying.v, ix->dying.v + ix->dying_at_start,
            sizeof(uint32_t) * (ix->dying.n - ix->dying_at_start));
    ix->dying.n -= ix->dying_at_start;
    ix->dying_at_start = 0;
    ix->pass = 0;
    for (size_t i = 0; i < ix->ngone; i++) {
        term_t *t = ix->gone[i];
        if (t->n) {
            t->tf = 0;
            continue;
        }
        slot_remove(ix, t);
        term_free(ix, t);
    }
    ix->ngone = 0;
}

int bm25_compact_step(bm25_t *ix, size_t budget)
{
    if (!ix->pass) {
        if (ix->dead_postings == 0 || ix->dead_postings * 2 < ix->live_postings) return 0;
        ix->pass = 1;
        ix->cursor = 0;
        ix->dying_at_start = ix->dying.n;
    }
    /* slots are visited by index: they do not move during a pass (see table_grow) */
    uint64_t end = ix->slots ? (uint64_t)ix->mask + 1 : 0;
    for (size_t spent = 0; ix->cursor < end && spent < budget; ix->cursor++) {
        term_t *t = ix->slots[ix->cursor].t;
        if (!t) continue;
        spent += compact_term(ix, t);
        if (!t->n) queue_gone(ix, t);
    }
    if (ix->cursor >= end) end_pass(ix);
    return ix->pass;
}

/* ---- queries ---- */

/* The live pairs of t's list (its df): t->n when no document is dead, else counted. */
static uint64_t live_df(const bm25_t *ix, const term_t *t)
{
    if (!ix->dead_postings) return t->n;
    uint64_t df = 0;
    if (t->dense) {
        for (uint32_t id = 1; id < t->dcap; id++) df += t->dense[id] && ix->docs[id].owner;
        return df;
    }
    const uint8_t *p = t->p, *end = t->p + t->len;
    uint32_t prev = 0;
    while (p < end) {
        uint32_t id = (uint32_t)((int64_t)prev + unzigzag(get_varint(&p)));
        get_varint(&p);
        prev = id;
        df += ix->docs[id].owner != NULL;
    }
    return df;
}

/* A query term with its idf and the most it adds to any score (tf/(tf + K) < 1). */
typedef struct qterm {
    const term_t *t;
    double idf, ub;
} qterm_t;

/* What one term adds to a document's score: section 4's formula. */
static inline double term_score(double idf, double tf, double dl, double avgdl)
{
    return idf * (tf * (BM25_K1 + 1.0)) / (tf + BM25_K1 * (1.0 - BM25_B + BM25_B * dl / avgdl));
}

/* Phase 1: a sparse term's contribution to every live document of its list, into the
 * accumulators (marking the documents touched). The loop where queries spend their time: one
 * pass, no calls. live (no dead document anywhere) is a constant in each copy. */
static inline __attribute__((always_inline)) void score_sparse(bm25_t *ix, const qterm_t *q,
                                                               double avgdl, int live)
{
    const term_t *t = q->t;
    const uint8_t *p = t->p, *end = t->p + t->len;
    const doc_t *docs = ix->docs;
    double *acc = ix->acc;
    uint32_t *mark = ix->mark, qmark = ix->qmark, *touched = ix->touched.v;
    size_t ntouched = ix->touched.n;
    uint32_t prev = 0;
    while (p < end) {
        uint32_t id = (uint32_t)((int64_t)prev + unzigzag(get_varint(&p)));
        double tf = (double)get_varint(&p);
        prev = id;
        if (!live && !docs[id].owner) continue;
        double s = term_score(q->idf, tf, (double)docs[id].len, avgdl);
        if (mark[id] != qmark) {
            mark[id] = qmark;
            acc[id] = 0.0;
            touched[ntouched++] = id;
        }
        acc[id] += s;
    }
    ix->touched.n = ntouched;
}

/* 1 if hit a ranks below hit b (lower score, or equal score and later in the tie order). */
static inline int worse(const bm25_query_t *q, const bm25_hit_t *a, const bm25_hit_t *b)
{
    if (a->score != b->score) return a->score < b->score;
    return q->order(q->ud, a->owner, b->owner) > 0;
}

/* A min-heap of hits with the worst at h[0]. */
static void heap_down(const bm25_query_t *q, bm25_hit_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && worse(q, &h[l], &h[m])) m = l;
        if (l + 1 < n && worse(q, &h[l + 1], &h[m])) m = l + 1;
        if (m == i) return;
        bm25_hit_t tmp = h[i];
        h[i] = h[m];
        h[m] = tmp;
        i = m;
    }
}

static void heap_up(const bm25_query_t *q, bm25_hit_t *h, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!worse(q, &h[i], &h[p])) return;
        bm25_hit_t tmp = h[i];
        h[i] = h[p];
        h[p] = tmp;
        i = p;
    }
}

/* Offers a candidate to the top-k heap h[0..*n); the filter runs only for candidates that
 * would enter. */
static inline void offer(const bm25_query_t *q, bm25_hit_t *h, size_t *n, bm25_hit_t c)
{
    if (*n == q->k && !worse(q, &h[0], &c)) return;
    if (q->accept && !q->accept(q->ud, c.owner)) return;
    if (*n < q->k) {
        h[*n] = c;
        heap_up(q, h, (*n)++);
    } else {
        h[0] = c;
        heap_down(q, h, *n, 0);
    }
}

/* Phase 3: documents that hold dense terms only (not touched by phase 1). Skipped as a whole
 * when even all dense terms together could not beat the k-th best so far; per document,
 * skipped before any division when the bounds of its terms at their tf cannot: no document is
 * shorter than min_len, so K >= k1 * (1 - b + b * min_len / avgdl) and a term adds at most
 * idf * tf * (k1 + 1) / (tf + K), tabulated per tf byte (255, an overflowed tf: the plain
 * bound idf * (k1 + 1)). */
static void scan_dense(bm25_t *ix, const bm25_query_t *q, const qterm_t *d, size_t nd, double avgdl,
                       bm25_hit_t *h, size_t *n)
{
    double bound = 0;
    for (size_t j = 0; j < nd; j++) bound += d[j].ub;
    if (*n == q->k && bound < h[0].score) return;
    double *ubtf = xmalloc(sizeof(double) * 256 * nd);
    double kmin = BM25_K1 * (1.0 - BM25_B + BM25_B * (double)ix->min_len / avgdl);
    for (size_t j = 0; j < nd; j++) {
        ubtf[256 * j] = 0;
        for (int tf = 1; tf < 255; tf++) /* a hair above the exact value: rounding */
            ubtf[256 * j + (size_t)tf] =
                d[j].idf * (tf * (BM25_K1 + 1.0)) / (tf + kmin) * (1 + 1e-12);
        ubtf[256 * j + 255] = d[j].ub;
    }
    const doc_t *docs = ix->docs;
    uint32_t end = 0;
    for (size_t j = 0; j < nd; j++) end = d[j].t->dcap > end ? d[j].t->dcap : end;
    if (end > ix->next_id) end = ix->next_id;
    /* below the k-th best score (no bound needed while the heap is not full) */
    double floor = *n == q->k ? h[0].score : -1.0;
    for (uint32_t id = 1; id < end; id++) {
        double ub = 0;
        for (size_t j = 0; j < nd; j++)
            ub += ubtf[256 * j + (id < d[j].t->dcap ? d[j].t->dense[id] : 0)];
        if (ub == 0 || ub < floor) continue;
        if (ix->mark[id] == ix->qmark || !docs[id].owner) continue; /* scored already, dead */
        double s = 0, dl = (double)docs[id].len;
        for (size_t j = 0; j < nd; j++) {
            uint32_t tf = id < d[j].t->dcap ? d[j].t->dense[id] : 0;
            if (tf) s += term_score(d[j].idf, (double)dense_tf(d[j].t, id), dl, avgdl);
        }
        offer(q, h, n, (bm25_hit_t){docs[id].owner, s});
        if (*n == q->k) floor = h[0].score;
    }
    xfree(ubtf);
}

/* The query terms: each known distinct token once, in query order. */
struct qctx {
    bm25_t *ix;
    qterm_t *terms;
    size_t n, cap;
};

static void query_token(void *ud, const char *tok, size_t len)
{
    struct qctx *q = ud;
    term_t *t = term_get(q->ix, tok, len, 0);
    if (!t || t->stamp == q->ix->stamp) return; /* unknown, or already a query term */
    t->stamp = q->ix->stamp;
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 8;
        q->terms = xrealloc(q->terms, sizeof(qterm_t) * q->cap);
    }
    q->terms[q->n++] = (qterm_t){t, 0, 0};
}

/* Sizes the accumulators (and the touched list) for every id handed out. */
static void ensure_acc(bm25_t *ix)
{
    if (ix->acccap >= ix->next_id) return;
    uint32_t old = ix->acccap;
    ix->acccap = ix->cap;
    ix->acc = xrealloc(ix->acc, sizeof(double) * ix->acccap);
    ix->mark = xrealloc(ix->mark, sizeof(uint32_t) * ix->acccap);
    memset(ix->mark + old, 0, sizeof(uint32_t) * (ix->acccap - old));
    ix->touched.cap = ix->acccap;
    ix->touched.v = xrealloc(ix->touched.v, sizeof(uint32_t) * ix->touched.cap);
}

/* Sorts the heap h[0..n) best first. */
static void heap_sort(const bm25_query_t *q, bm25_hit_t *h, size_t n)
{
    for (size_t m = n; m > 1; m--) {
        bm25_hit_t tmp = h[0];
        h[0] = h[m - 1];
        h[m - 1] = tmp;
        heap_down(q, h, m - 1, 0);
    }
}

/* Exact top-k in three phases (MaxScore over term-at-a-time):
 *  1. sparse (rarer) terms: every document of their lists gets its partial score;
 *  2. those documents get the dense terms' contributions by lookup: their scores are now
 *     complete, and the best k of them go into the heap;
 *  3. documents holding only dense terms are scanned only if the dense terms' bounds could
 *     still beat the k-th best (see scan_dense).
 * Every document's score is the sum of its sparse terms in query order, then its dense terms
 * in query order, whichever phase computes it, so equal documents get equal scores. */
size_t bm25_search(bm25_t *ix, const char *qtext, size_t qlen, const bm25_query_t *opt,
                   bm25_hit_t *out)
{
    bm25_query_t o = *opt;
    if (o.k > ix->live_docs) o.k = ix->live_docs;
    if (o.k == 0) return 0;
    struct qctx q = {ix, NULL, 0, 0};
    ix->stamp++;
    token_each(qtext, qlen, query_token, &q);
    ensure_acc(ix);
    if (++ix->qmark == 0) { /* wrapped: no stale mark may equal the new one */
        memset(ix->mark, 0, sizeof(uint32_t) * ix->acccap);
        ix->qmark = 1;
    }
    ix->touched.n = 0;
    const bm25_global_t *g = o.global;
    double N = (double)(g ? g->docs : ix->live_docs);
    double avgdl = (double)(g ? g->tokens : ix->tokens) / N;
    int live = ix->dead_postings == 0;
    qterm_t *dense = xmalloc(sizeof(qterm_t) * (q.n ? q.n : 1));
    size_t nd = 0;
    for (size_t i = 0; i < q.n; i++) {
        const term_t *t = q.terms[i].t;
        uint64_t gdf = g ? g->df(g->ud, t->text, t->tlen) : UINT64_MAX;
        double df = (double)(gdf != UINT64_MAX ? gdf : live_df(ix, t));
        q.terms[i].idf = log((N - df + 0.5) / (df + 0.5) + 1.0);
        q.terms[i].ub = q.terms[i].idf * (BM25_K1 + 1.0);
        if (q.terms[i].t->dense)
            dense[nd++] = q.terms[i];
        else if (live)
            score_sparse(ix, &q.terms[i], avgdl, 1);
        else
            score_sparse(ix, &q.terms[i], avgdl, 0);
    }
    size_t n = 0;
    for (size_t i = 0; i < ix->touched.n; i++) {
        uint32_t id = ix->touched.v[i];
        double s = ix->acc[id], dl = (double)ix->docs[id].len;
        for (size_t j = 0; j < nd; j++) {
            uint32_t tf = dense_tf(dense[j].t, id);
            if (tf) s += term_score(dense[j].idf, (double)tf, dl, avgdl);
        }
        offer(&o, out, &n, (bm25_hit_t){ix->docs[id].owner, s});
    }
    if (nd) scan_dense(ix, &o, dense, nd, avgdl, out, &n);
    xfree(dense);
    xfree(q.terms);
    heap_sort(&o, out, n);
    return n;
}

void bm25_get_stats(const bm25_t *ix, bm25_stats_t *out)
{
    out->docs = ix->live_docs;
    out->tokens = ix->tokens;
    out->terms = ix->nterms;
    out->postings = ix->live_postings;
    out->dead_postings = ix->dead_postings;
    out->memory = ix->mem + (ix->slots ? alloc_size(ix->slots) : 0) +
                  (ix->docs ? alloc_size(ix->docs) : 0) +
                  (ix->acc ? alloc_size(ix->acc) + alloc_size(ix->mark) : 0) +
                  sizeof(uint32_t) * (ix->free_ids.cap + ix->dying.cap);
}

void bm25_term_stats(bm25_t *ix, const char *qtext, size_t qlen,
                     void (*fn)(void *ud, const char *term, size_t len, uint64_t df), void *ud)
{
    struct qctx q = {ix, NULL, 0, 0};
    ix->stamp++;
    token_each(qtext, qlen, query_token, &q);
    for (size_t i = 0; i < q.n; i++)
        fn(ud, q.terms[i].t->text, q.terms[i].t->tlen, live_df(ix, q.terms[i].t));
    xfree(q.terms);
}
