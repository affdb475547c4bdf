/* search.c - the search catalogue over tags and blobs (see search.h).
 *
 * Shapes:
 *  - stag_t, one per tag object met (dict keyed by the object's address): its key name and
 *    database once bound, and an ordset of its blob names -> sdoc_t. It is also stags[idx],
 *    so a blob's entry names its tag in 4 bytes.
 *  - sdoc_t, one per blob met (32 bytes in a chunk of SDOC_CHUNK: chunks never move, since
 *    the ordsets and the index point at entries), found through the blob's observer slot,
 *    which holds its entry's number + 1 (blob_observer: no table keyed by blob, which cost 26
 *    bytes a blob, and 4 bytes in the blob); free entries chain by number: its tag's index, its
 *    time key (modification time and a serial number: creation order, the tie-break of the
 *    time index), the generation of its last change, and its BM25 document id (0 while its
 *    contents are not indexed). The bytes of an indexed text are kept by document id
 *    (text_bytes), so only indexed blobs pay for them.
 *  - sdb_t, one per database: the ordset of bound tag names -> stag_t. SWAPDB swaps two
 *    pointers of s->dbs and their ids; a stag points at its sdb_t, so it follows.
 *  - times: one ordset over every blob, keyed by 12 bytes: the modification time plus 2^47 (48
 *    bits, big-endian, so negative times sort first; storage's are 0..TAG_TIME_MAX) and the
 *    serial's low 48 bits (big-endian): a key repeats only if two blobs share a millisecond
 *    and 2^48 blobs were created between them.
 * Invariants: a bound stag is in its sdb's ordset under its name, and only there; every sdoc
 * is in its stag's ordset under its blob's name and in `times` under (mtime, serial), and is
 * numbered in its blob's observer slot; a blob not filed has 0 there. One catalogue at a time
 * uses the slots.
 * Loop thread only. */
#include "search/search.h"

#include "common/alloc.h"
#include "common/dict.h"
#include "search/bm25.h"
#include "search/ordset.h"

#include <assert.h>
#include <string.h>

typedef struct sdb {
    ordset_t tags;
    int id;
} sdb_t;

typedef struct stag {
    dict_node_t node; /* key: the address of obj */
    const tag_obj_t *obj;
    sdb_t *db; /* NULL while unbound */
    char *name;
    size_t nlen;
    ordset_t blobs;
    uint32_t idx; /* in s->stags */
} stag_t;

#define TKEY 12 /* bytes of a time key */

typedef struct sdoc {
    const blob_t *obj;
    uint8_t tkey[TKEY]; /* its key in `times` (time_key: mtime, serial), which holds it */
    uint32_t tag;       /* its stag's idx */
    /* the low 32 bits of s->gen at its last touch: contents read for an older touch could be
     * taken for new only after 2^32 touches while that read was in flight (a read takes
     * milliseconds); 32 bits keep the entry a 32-byte block */
    uint32_t gen;
    uint32_t id;
} sdoc_t;
_Static_assert(sizeof(sdoc_t) == 32, "sdoc_t is 32 bytes");

#define SDOC_CHUNK 256 /* entries: 8 KiB */

struct search {
    int ndb;
    sdb_t **dbs;
    dict_t tags;
    uint64_t ndocs; /* sdocs filed */
    ordset_t times;
    bm25_t *ix;
    uint64_t serial, gen, bytes;
    stag_t **stags; /* by idx; NULL at a free index */
    uint32_t nstags, stags_cap;
    uint32_t *free_idx; /* free indexes below nstags */
    uint32_t nfree, free_cap;
    sdoc_t **chunks; /* sdoc number n is chunks[n / SDOC_CHUNK][n % SDOC_CHUNK] */
    uint32_t nchunks, chunks_cap;
    uint32_t sdoc_top;  /* numbers handed out so far: entries below it are filed or free */
    uint32_t sdoc_free; /* a free entry's number + 1 (0: none); a free entry's gen is the next */
    uint64_t *text_bytes; /* by BM25 document id: the bytes of its text */
    uint32_t text_cap;
    size_t tag_names; /* bytes held by the tags' blob-name sets and names (kept as they change,
                         so INFO costs O(databases), not O(tags)) */
};

/* ---- identity dicts ---- */

static const void *stag_key(const dict_node_t *n, size_t *len)
{
    *len = sizeof(void *);
    return &((const stag_t *)n)->obj;
}

static const dict_type_t stag_type = {stag_key, NULL};

static stag_t *stag_find(search_t *s, const tag_obj_t *t)
{
    return (stag_t *)dict_find(&s->tags, &t, sizeof(t), dict_hash(&t, sizeof(t)));
}

/* The ordsets' keys: a tag's name, a blob's name, a time key (all in the values). */
static const char *tag_name_key(const void *v, size_t *len)
{
    const stag_t *st = v;
    *len = st->nlen;
    return st->name;
}

static const char *blob_name_key(const void *v, size_t *len)
{
    return blob_name(((const sdoc_t *)v)->obj, len);
}

static const char *time_key_of(const void *v, size_t *len)
{
    *len = TKEY;
    return (const char *)((const sdoc_t *)v)->tkey;
}

static sdoc_t *sdoc_at(const search_t *s, uint32_t no)
{
    return &s->chunks[no / SDOC_CHUNK][no % SDOC_CHUNK];
}

static sdoc_t *sdoc_find(const search_t *s, const blob_t *b)
{
    uint32_t id = blob_observer(b);
    return id ? sdoc_at(s, id - 1) : NULL;
}

/* A zeroed entry for b, numbered in its observer slot. */
static sdoc_t *sdoc_new(search_t *s, const blob_t *b)
{
    uint32_t no;
    if (s->sdoc_free) {
        no = s->sdoc_free - 1;
        s->sdoc_free = sdoc_at(s, no)->gen;
    } else {
        assert(s->sdoc_top < UINT32_MAX - 1); /* its number + 1 fits the slot */
        no = s->sdoc_top++;
        if (no % SDOC_CHUNK == 0) {
            if (s->nchunks == s->chunks_cap) {
                s->chunks_cap = s->chunks_cap ? 2 * s->chunks_cap : 16;
                s->chunks = xrealloc(s->chunks, sizeof(*s->chunks) * s->chunks_cap);
            }
            s->chunks[s->nchunks++] = xmalloc(sizeof(sdoc_t) * SDOC_CHUNK);
        }
    }
    sdoc_t *d = sdoc_at(s, no);
    memset(d, 0, sizeof(*d));
    d->obj = b;
    blob_set_observer(b, no + 1);
    return d;
}

/* Frees d's entry and clears its blob's slot (s->ndocs already counts it out). When no entry
 * is left in use (FLUSHALL, the last blob deleted), the chunks go too, so the catalogue does
 * not keep 32 bytes for every blob it once held. */
static void sdoc_release(search_t *s, sdoc_t *d)
{
    uint32_t id = blob_observer(d->obj);
    assert(id && sdoc_at(s, id - 1) == d);
    blob_set_observer(d->obj, 0);
    memset(d, 0, sizeof(*d));
    d->gen = s->sdoc_free;
    s->sdoc_free = id;
    if (s->ndocs) return;
    for (uint32_t i = 0; i < s->nchunks; i++) xfree(s->chunks[i]);
    xfree(s->chunks);
    s->chunks = NULL;
    s->nchunks = s->chunks_cap = s->sdoc_top = s->sdoc_free = 0;
}

static stag_t *doc_tag(const search_t *s, const sdoc_t *d)
{
    return s->stags[d->tag];
}

/* Files st under a free index. */
static void stag_index(search_t *s, stag_t *st)
{
    if (s->nfree) {
        st->idx = s->free_idx[--s->nfree];
    } else {
        if (s->nstags == s->stags_cap) {
            s->stags_cap = s->stags_cap ? 2 * s->stags_cap : 16;
            s->stags = xrealloc(s->stags, sizeof(*s->stags) * s->stags_cap);
        }
        st->idx = s->nstags++;
    }
    s->stags[st->idx] = st;
}

static void stag_unindex(search_t *s, stag_t *st)
{
    if (s->nfree == s->free_cap) {
        s->free_cap = s->free_cap ? 2 * s->free_cap : 16;
        s->free_idx = xrealloc(s->free_idx, sizeof(*s->free_idx) * s->free_cap);
    }
    s->stags[st->idx] = NULL;
    s->free_idx[s->nfree++] = st->idx;
}

static stag_t *stag_get(search_t *s, const tag_obj_t *t)
{
    stag_t *st = stag_find(s, t);
    if (st) return st;
    st = xcalloc(1, sizeof(*st));
    stag_index(s, st);
    st->obj = t;
    st->node.hash = dict_hash(&t, sizeof(t));
    ordset_init(&st->blobs, blob_name_key);
    dict_insert(&s->tags, &st->node);
    return st;
}

/* ---- lifecycle ---- */

search_t *search_new(int ndb)
{
    search_t *s = xcalloc(1, sizeof(*s));
    s->ndb = ndb;
    s->dbs = xcalloc((size_t)ndb, sizeof(sdb_t *));
    for (int i = 0; i < ndb; i++) {
        s->dbs[i] = xcalloc(1, sizeof(sdb_t));
        ordset_init(&s->dbs[i]->tags, tag_name_key);
        s->dbs[i]->id = i;
    }
    dict_init(&s->tags, &stag_type);
    ordset_init(&s->times, time_key_of);
    s->ix = bm25_new();
    return s;
}

static void free_tag(dict_node_t *n, void *ud)
{
    stag_t *st = (stag_t *)n;
    ordset_deinit(&st->blobs);
    xfree(st->name);
    xfree(st);
}

void search_free(search_t *s)
{
    if (!s) return;
    static const dict_type_t tag_free_type = {stag_key, free_tag};
    /* every sdoc is in `times`; its blob lives on (storage reports a blob before freeing it)
     * and may meet another catalogue later, so its slot is cleared */
    ordset_iter_t it;
    for (int more = ordset_seek(&s->times, NULL, 0, &it); more; more = ordset_next(&it)) {
        sdoc_t *d = ordset_iter_val(&it);
        blob_set_observer(d->obj, 0);
    }
    for (uint32_t i = 0; i < s->nchunks; i++) xfree(s->chunks[i]);
    xfree(s->chunks);
    s->tags.type = &tag_free_type;
    dict_clear(&s->tags, NULL);
    xfree(s->stags);
    xfree(s->free_idx);
    xfree(s->text_bytes);
    for (int i = 0; i < s->ndb; i++) {
        ordset_deinit(&s->dbs[i]->tags);
        xfree(s->dbs[i]);
    }
    xfree(s->dbs);
    ordset_deinit(&s->times);
    bm25_free(s->ix);
    xfree(s);
}

/* ---- names ---- */

static void unbind(stag_t *st)
{
    if (!st->db) return;
    void *was = ordset_delete(&st->db->tags, st->name, st->nlen);
    assert(was == st);
    (void)was;
    st->db = NULL;
}

void search_tag_bind(search_t *s, const tag_obj_t *t, int db, const char *name, size_t len)
{
    assert(db >= 0 && db < s->ndb);
    stag_t *st = stag_get(s, t);
    sdb_t *d = s->dbs[db];
    if (st->db == d && st->nlen == len && memcmp(st->name, name, len) == 0) return;
    unbind(st);
    /* a name still filed for another object (cannot happen while storage reports every
     * free): that object no longer owns the key */
    stag_t *other = ordset_get(&d->tags, name, len);
    if (other) unbind(other);
    s->tag_names -= st->nlen;
    xfree(st->name);
    st->name = xmemdup(name, len);
    s->tag_names += len;
    st->nlen = len;
    st->db = d;
    ordset_insert(&d->tags, st);
}

void search_swapdb(search_t *s, int a, int b)
{
    sdb_t *t = s->dbs[a];
    s->dbs[a] = s->dbs[b];
    s->dbs[b] = t;
    s->dbs[a]->id = a;
    s->dbs[b]->id = b;
}

/* ---- blobs ---- */

#define KEY_TIME_MIN (-(1ll << 47))
#define KEY_TIME_MAX ((1ll << 47) - 1)

/* The time key of (mtime, serial). Times -2^47..2^47-1 are kept as 48 bits from 0 up (so
 * negative ones sort first); a time outside (a query's bound) is clamped. */
static void time_key(long long mtime, uint64_t serial, uint8_t key[TKEY])
{
    long long c = mtime < KEY_TIME_MIN ? KEY_TIME_MIN : mtime > KEY_TIME_MAX ? KEY_TIME_MAX : mtime;
    uint64_t t = (uint64_t)(c - KEY_TIME_MIN);
    for (int i = 0; i < 6; i++) {
        key[i] = (uint8_t)(t >> (40 - 8 * i));
        key[6 + i] = (uint8_t)(serial >> (40 - 8 * i));
    }
}

static uint64_t key_u48(const void *at)
{
    const uint8_t *p = at;
    uint64_t v = 0;
    for (int i = 0; i < 6; i++) v = v << 8 | p[i];
    return v;
}

static long long key_time(const void *key)
{
    return (long long)key_u48(key) + KEY_TIME_MIN;
}

uint64_t search_blob_touch(search_t *s, const tag_obj_t *t, const blob_t *b)
{
    blob_info_t info;
    blob_get_info(b, &info);
    sdoc_t *d = sdoc_find(s, b);
    if (!d) {
        stag_t *st = stag_get(s, t);
        d = sdoc_new(s, b);
        d->tag = st->idx;
        time_key(info.mtime, ++s->serial, d->tkey);
        s->ndocs++;
        size_t before = ordset_memory(&st->blobs);
        ordset_insert(&st->blobs, d);
        s->tag_names += ordset_memory(&st->blobs) - before;
        ordset_insert(&s->times, d);
    } else if (key_time(d->tkey) != info.mtime) {
        ordset_delete(&s->times, d->tkey, TKEY);
        time_key(info.mtime, key_u48(d->tkey + 6), d->tkey);
        ordset_insert(&s->times, d);
    }
    d->gen = (uint32_t)++s->gen;
    return s->gen;
}

static void drop_text(search_t *s, sdoc_t *d)
{
    if (!d->id) return;
    bm25_remove(s->ix, d->id);
    s->bytes -= s->text_bytes[d->id];
    d->id = 0;
}

void search_blob_text(search_t *s, const blob_t *b, uint64_t gen, const char *text, size_t len)
{
    sdoc_t *d = sdoc_find(s, b);
    if (!d || d->gen != (uint32_t)gen) return;
    drop_text(s, d);
    if (!text) return;
    d->id = bm25_add(s->ix, text, len, d);
    if (d->id >= s->text_cap) {
        s->text_cap = d->id < 512 ? 1024 : 2 * d->id;
        s->text_bytes = xrealloc(s->text_bytes, sizeof(*s->text_bytes) * s->text_cap);
    }
    s->text_bytes[d->id] = len;
    s->bytes += len;
}

static void doc_remove(search_t *s, sdoc_t *d)
{
    size_t nlen;
    const char *name = blob_name(d->obj, &nlen);
    drop_text(s, d);
    stag_t *st = doc_tag(s, d);
    size_t before = ordset_memory(&st->blobs);
    void *was = ordset_delete(&st->blobs, name, nlen);
    s->tag_names -= before - ordset_memory(&st->blobs);
    assert(was == d);
    was = ordset_delete(&s->times, d->tkey, TKEY);
    assert(was == d);
    (void)was;
    s->ndocs--;
    sdoc_release(s, d);
}

void search_blob_deleted(search_t *s, const blob_t *b)
{
    sdoc_t *d = sdoc_find(s, b);
    if (d) doc_remove(s, d);
}

void search_tag_freed(search_t *s, const tag_obj_t *t)
{
    stag_t *st = stag_find(s, t);
    if (!st) return;
    /* storage reports every blob before the tag: any left are removed here all the same */
    for (ordset_iter_t it; ordset_seek(&st->blobs, NULL, 0, &it);)
        doc_remove(s, ordset_iter_val(&it));
    unbind(st);
    dict_unlink(&s->tags, &st->obj, sizeof(st->obj), st->node.hash);
    assert(ordset_memory(&st->blobs) == 0);
    s->tag_names -= st->nlen;
    stag_unindex(s, st);
    free_tag(&st->node, NULL);
}

void search_cron(search_t *s, size_t budget)
{
    bm25_compact_step(s->ix, budget);
}

/* ---- stepped name queries ---- */

void search_cursor_init(search_cursor_t *cur)
{
    memset(cur, 0, sizeof(*cur));
    buf_init(&cur->tag);
    buf_init(&cur->blob);
}

void search_cursor_deinit(search_cursor_t *cur)
{
    buf_deinit(&cur->tag);
    buf_deinit(&cur->blob);
}

static void cursor_set(buf_t *b, const char *p, size_t n)
{
    buf_clear(b);
    buf_append(b, p, n);
}

static inline int has_prefix(const char *k, size_t klen, const char *p, size_t plen)
{
    return klen >= plen && (plen == 0 || memcmp(k, p, plen) == 0);
}

/* Points it at the first entry of set at or after the cursor key (strictly after it when
 * after is set), or at the pattern's literal prefix when there is no cursor key; 0 when there
 * is none. */
static int resume_at(const ordset_t *set, const buf_t *at, int have, int after, const char *prefix,
                     size_t plen, ordset_iter_t *it)
{
    if (!have) return ordset_seek(set, prefix, plen, it);
    int more = ordset_seek(set, at->data, at->len, it);
    size_t klen;
    if (more && after) {
        const char *k = ordset_iter_key(it, &klen);
        if (klen == at->len && memcmp(k, at->data, klen) == 0) more = ordset_next(it);
    }
    return more;
}

int search_tags_step(search_t *s, int db, rx_t *rx, search_cursor_t *cur, uint64_t budget,
                     search_emit_fn *emit, void *ud)
{
    size_t plen;
    const char *prefix = rx_prefix(rx, &plen);
    ordset_iter_t it;
    int more = resume_at(&s->dbs[db]->tags, &cur->tag, cur->phase != 0, 1, prefix, plen, &it);
    for (uint64_t spent = 0; more; more = ordset_next(&it)) {
        size_t klen;
        const char *k = ordset_iter_key(&it, &klen);
        if (!has_prefix(k, klen, prefix, plen)) break;
        if (spent++ == budget) {
            cur->phase = 2; /* the tag before n was the last one seen */
            return 0;
        }
        cur->visited++;
        if (rx_match(rx, k, klen)) emit(ud, k, klen, NULL, 0);
        cursor_set(&cur->tag, k, klen);
        cur->phase = 2;
    }
    return 1;
}

uint64_t search_tag_range(search_t *s, const tag_obj_t *t, const char *from, size_t flen,
                          uint64_t count, void (*emit)(void *ud, const char *name, size_t len),
                          void *ud)
{
    stag_t *st = stag_find(s, t);
    if (!st) return 0;
    uint64_t n = 0;
    ordset_iter_t it;
    for (int more = ordset_seek(&st->blobs, from, flen, &it); more && n < count;
         more = ordset_next(&it), n++) {
        size_t klen;
        const char *k = ordset_iter_key(&it, &klen);
        emit(ud, k, klen);
    }
    return n;
}

/* Visits the blobs of one tag from the cursor; returns 0 when the budget ran out inside. */
static int blobs_of(stag_t *st, rx_t *brx, search_cursor_t *cur, int resume, uint64_t *spent,
                    uint64_t budget, search_emit_fn *emit, void *ud)
{
    size_t plen;
    const char *prefix = rx_prefix(brx, &plen);
    ordset_iter_t it;
    for (int more = resume_at(&st->blobs, &cur->blob, resume, 1, prefix, plen, &it); more;
         more = ordset_next(&it)) {
        size_t klen;
        const char *k = ordset_iter_key(&it, &klen);
        if (!has_prefix(k, klen, prefix, plen)) break;
        if ((*spent)++ >= budget) return 0;
        cur->visited++;
        if (rx_match(brx, k, klen)) emit(ud, st->name, st->nlen, k, klen);
        cursor_set(&cur->blob, k, klen);
        cur->has_blob = 1;
    }
    return 1;
}

int search_blobs_step(search_t *s, int db, rx_t *trx, rx_t *brx, search_cursor_t *cur,
                      uint64_t budget, search_emit_fn *emit, void *ud)
{
    size_t plen;
    const char *prefix = rx_prefix(trx, &plen);
    /* inside a tag: go on there (if the tag is still filed), else after the last tag */
    int inside = cur->phase == 1;
    ordset_iter_t it;
    int more = resume_at(&s->dbs[db]->tags, &cur->tag, cur->phase != 0, !inside, prefix, plen, &it);
    uint64_t spent = 0;
    for (; more; more = ordset_next(&it)) {
        size_t klen;
        const char *k = ordset_iter_key(&it, &klen);
        if (!has_prefix(k, klen, prefix, plen)) break;
        int same = inside && klen == cur->tag.len && memcmp(k, cur->tag.data, klen) == 0;
        inside = 0;
        if (!same) {
            if (spent++ >= budget) return 0; /* resumes after the last tag seen */
            cursor_set(&cur->tag, k, klen);
            cur->phase = 2;
            if (!rx_match(trx, k, klen)) continue;
            cur->phase = 1;
            cur->has_blob = 0;
        }
        if (!blobs_of(ordset_iter_val(&it), brx, cur, same && cur->has_blob, &spent, budget, emit,
                      ud))
            return 0;
        cur->phase = 2;
    }
    return 1;
}

int search_window_step(search_t *s, int db, rx_t *trx, rx_t *brx, long long since, long long until,
                       search_cursor_t *cur, uint64_t budget, search_emit_fn *emit, void *ud)
{
    uint8_t start[TKEY];
    time_key(since, 0, start);
    ordset_iter_t it;
    int more = cur->phase ? resume_at(&s->times, &cur->tag, 1, 1, NULL, 0, &it)
                          : ordset_seek(&s->times, start, TKEY, &it);
    sdb_t *d = s->dbs[db];
    for (uint64_t spent = 0; more; more = ordset_next(&it)) {
        size_t klen;
        const char *k = ordset_iter_key(&it, &klen);
        if (key_time(k) > until) break;
        if (spent++ == budget) return 0;
        cur->visited++;
        sdoc_t *doc = ordset_iter_val(&it);
        stag_t *st = doc_tag(s, doc);
        size_t blen;
        const char *bname = blob_name(doc->obj, &blen);
        if (st->db == d && rx_match(trx, st->name, st->nlen) && rx_match(brx, bname, blen))
            emit(ud, st->name, st->nlen, bname, blen);
        cursor_set(&cur->tag, k, klen);
        cur->phase = 2;
    }
    return 1;
}

/* ---- TSEARCH ---- */

struct qfilter {
    const search_t *s;
    sdb_t *db;
    search_filter_t f;
};

static int accept_doc(void *ud, void *owner)
{
    struct qfilter *q = ud;
    sdoc_t *d = owner;
    const stag_t *st = doc_tag(q->s, d);
    if (st->db != q->db) return 0;
    if (q->f.trx && !rx_match(q->f.trx, st->name, st->nlen)) return 0;
    size_t blen;
    const char *bname = blob_name(d->obj, &blen);
    if (q->f.brx && !rx_match(q->f.brx, bname, blen)) return 0;
    return !q->f.visible || q->f.visible(q->f.ud, st->name, st->nlen);
}

/* Equal scores: by tag name, then blob name, bytewise. */
static int order_docs(void *ud, const void *a, const void *b)
{
    const struct qfilter *q = ud;
    const sdoc_t *x = a, *y = b;
    const stag_t *xt = doc_tag(q->s, x), *yt = doc_tag(q->s, y);
    int c = ordset_cmp(xt->name, xt->nlen, yt->name, yt->nlen);
    if (c) return c;
    size_t xl, yl;
    const char *xn = blob_name(x->obj, &xl), *yn = blob_name(y->obj, &yl);
    return ordset_cmp(xn, xl, yn, yl);
}

search_hit_t *search_query(search_t *s, int db, const char *q, size_t qlen,
                           const search_filter_t *filter, size_t k, size_t *n)
{
    *n = 0;
    uint64_t docs = search_docs(s);
    if (k > docs) k = (size_t)docs;
    if (k == 0) return NULL;
    struct qfilter f = {s, s->dbs[db], {0}};
    if (filter) f.f = *filter;
    bm25_query_t opt = {k, accept_doc, order_docs, &f, f.f.global};
    bm25_hit_t *hits = xmalloc(sizeof(*hits) * k);
    size_t got = bm25_search(s->ix, q, qlen, &opt, hits);
    search_hit_t *out = got ? xmalloc(sizeof(*out) * got) : NULL;
    for (size_t i = 0; i < got; i++) {
        sdoc_t *d = hits[i].owner;
        out[i].tag = doc_tag(s, d)->name;
        out[i].tlen = doc_tag(s, d)->nlen;
        out[i].blob = blob_name(d->obj, &out[i].blen);
        out[i].score = hits[i].score;
    }
    xfree(hits);
    *n = got;
    return out;
}

void search_term_stats(search_t *s, const char *q, size_t qlen,
                       void (*fn)(void *ud, const char *term, size_t len, uint64_t df), void *ud,
                       uint64_t *docs, uint64_t *tokens)
{
    bm25_stats_t st;
    bm25_get_stats(s->ix, &st);
    *docs = st.docs;
    *tokens = st.tokens;
    bm25_term_stats(s->ix, q, qlen, fn, ud);
}

uint64_t search_docs(const search_t *s)
{
    bm25_stats_t st;
    bm25_get_stats(s->ix, &st);
    return st.docs;
}

/* ---- stats ---- */

void search_get_stats(const search_t *s, search_stats_t *out)
{
    bm25_stats_t b;
    bm25_get_stats(s->ix, &b);
    memset(out, 0, sizeof(*out));
    out->tags = dict_size(&s->tags);
    out->blobs = s->ndocs;
    out->docs = b.docs;
    out->terms = b.terms;
    out->tokens = b.tokens;
    out->postings = b.postings;
    out->dead_postings = b.dead_postings;
    out->bytes = s->bytes;
    out->index_memory = b.memory + alloc_size(s->text_bytes);
    size_t names = ordset_memory(&s->times) + dict_buckets_bytes(&s->tags) +
                   (size_t)s->nchunks * SDOC_CHUNK * sizeof(sdoc_t) + alloc_size(s->chunks) +
                   out->tags * sizeof(stag_t) + alloc_size(s->stags) + alloc_size(s->free_idx);
    for (int i = 0; i < s->ndb; i++) names += ordset_memory(&s->dbs[i]->tags);
    names += s->tag_names;
    out->names_memory = names;
}
