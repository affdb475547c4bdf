/* t_set.c - sets in two encodings (see t_set.h).
 *
 * Intset: one allocation, exactly as large as its members need (realloc on every add and
 * remove, as Redis's intset; jemalloc grows in place within a size class).
 *
 *   offset  size        field
 *   0       4           width   bytes per member: 2, 4 or 8
 *   4       4           len     number of members
 *   8       len*width   members, ascending, native byte order
 *
 * Adding a member wider than width first rewrites every member at the new width (from the
 * back, so in place); the new member then goes first (negative) or last (positive), as it
 * lies outside the old range. The width never shrinks.
 *
 * Hashtable: a dict_t (own allocation) of nodes that are one allocation each:
 *
 *   dict_node_t (next, hash, aux = member length) | member bytes (no NUL)
 *
 * so a member costs 16 bytes plus its length, against Redis's dictEntry + sds.
 *
 * Invariants: an intset is sorted with no duplicates and every member fits its width; a
 * hashtable holds unique members; the encoding is ENC_INTSET or ENC_HT. Loop thread. */
#include "storage/t_set.h"

#include "common/alloc.h"
#include "common/dict.h"
#include "common/util.h"

#include <assert.h>
#include <string.h>

#define MEMORY_SAMPLES 64
#define MEMORY_EXACT_MAX 128

/* ------------------------------------------------------------------------------------------
 * Intset
 * ------------------------------------------------------------------------------------------ */

typedef struct intset {
    uint32_t width;
    uint32_t len;
    unsigned char data[]; /* 8-aligned: the header is 8 bytes of a malloc'd block */
} intset_t;

static inline uint32_t width_for(int64_t v)
{
    if (v < INT32_MIN || v > INT32_MAX) return 8;
    if (v < INT16_MIN || v > INT16_MAX) return 4;
    return 2;
}

static inline int64_t is_get_w(const intset_t *is, size_t i, uint32_t w)
{
    if (w == 2) return ((const int16_t *)(const void *)is->data)[i];
    if (w == 4) return ((const int32_t *)(const void *)is->data)[i];
    return ((const int64_t *)(const void *)is->data)[i];
}

static inline int64_t is_get(const intset_t *is, size_t i)
{
    return is_get_w(is, i, is->width);
}

static inline void is_set(intset_t *is, size_t i, int64_t v)
{
    if (is->width == 2)
        ((int16_t *)(void *)is->data)[i] = (int16_t)v;
    else if (is->width == 4)
        ((int32_t *)(void *)is->data)[i] = (int32_t)v;
    else
        ((int64_t *)(void *)is->data)[i] = v;
}

static intset_t *is_new(void)
{
    intset_t *is = xmalloc(sizeof(*is));
    is->width = 2;
    is->len = 0;
    return is;
}

static intset_t *is_resize(intset_t *is, size_t len)
{
    return xrealloc(is, sizeof(*is) + len * is->width);
}

/* 1 and *pos if v is present; else 0 and *pos where it would go. */
static int is_search(const intset_t *is, int64_t v, size_t *pos)
{
    size_t lo = 0, hi = is->len;
    if (is->len && v > is_get(is, is->len - 1)) {
        *pos = is->len;
        return 0;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t cur = is_get(is, mid);
        if (cur == v) {
            *pos = mid;
            return 1;
        }
        if (cur < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    *pos = lo;
    return 0;
}

static int is_find(const intset_t *is, int64_t v)
{
    size_t pos;
    return width_for(v) <= is->width && is_search(is, v, &pos);
}

/* Widens every member to the width of v and adds v at an end. */
static intset_t *is_upgrade_add(intset_t *is, int64_t v)
{
    uint32_t old = is->width;
    size_t len = is->len;
    int prepend = v < 0;
    is->width = width_for(v);
    is = is_resize(is, len + 1);
    for (size_t i = len; i-- > 0;) is_set(is, i + (size_t)prepend, is_get_w(is, i, old));
    is_set(is, prepend ? 0 : len, v);
    is->len = (uint32_t)(len + 1);
    return is;
}

/* Adds v; *added says whether it was new. May move the intset. */
static intset_t *is_add(intset_t *is, int64_t v, int *added)
{
    size_t pos;
    *added = 1;
    if (width_for(v) > is->width) return is_upgrade_add(is, v);
    if (is_search(is, v, &pos)) {
        *added = 0;
        return is;
    }
    is = is_resize(is, is->len + 1u);
    memmove(is->data + (pos + 1) * is->width, is->data + pos * is->width,
            (is->len - pos) * is->width);
    is_set(is, pos, v);
    is->len++;
    return is;
}

static intset_t *is_remove(intset_t *is, int64_t v, int *removed)
{
    size_t pos;
    *removed = 0;
    if (width_for(v) > is->width || !is_search(is, v, &pos)) return is;
    memmove(is->data + pos * is->width, is->data + (pos + 1) * is->width,
            (is->len - pos - 1) * is->width);
    is->len--;
    *removed = 1;
    return is_resize(is, is->len);
}

/* ------------------------------------------------------------------------------------------
 * Hashtable nodes
 * ------------------------------------------------------------------------------------------ */

static inline const char *node_member(const dict_node_t *n)
{
    return (const char *)(n + 1);
}

static const void *node_key(const dict_node_t *n, size_t *len)
{
    *len = n->aux;
    return node_member(n);
}

static void node_free(dict_node_t *n, void *ud)
{
    (void)ud;
    xfree(n);
}

static const dict_type_t set_dict_type = {node_key, node_free};

static dict_node_t *node_new(const void *m, size_t len, uint32_t h)
{
    assert(len <= UINT32_MAX);
    dict_node_t *n = xmalloc(sizeof(*n) + len);
    n->next = NULL;
    n->hash = h;
    n->aux = (uint32_t)len;
    if (len) memcpy(n + 1, m, len);
    return n;
}

static dict_t *ht_new(uint64_t expect)
{
    dict_t *d = xmalloc(sizeof(*d));
    dict_init(d, &set_dict_type);
    if (expect) dict_expand(d, expect);
    return d;
}

/* Adds m (hash h) unless present; returns 1 if added. */
static int ht_add(dict_t *d, const void *m, size_t len, uint32_t h)
{
    if (dict_find(d, m, len, h)) return 0;
    dict_insert(d, node_new(m, len, h));
    return 1;
}

static int ht_remove(dict_t *d, const void *m, size_t len, uint32_t h)
{
    dict_node_t *n = dict_unlink(d, m, len, h);
    if (!n) return 0;
    xfree(n);
    dict_try_shrink(d);
    return 1;
}

/* ------------------------------------------------------------------------------------------
 * Elements
 * ------------------------------------------------------------------------------------------ */

static inline void elem_from_int(set_elem_t *e, int64_t v)
{
    e->v = v;
    e->isint = 1;
    e->hashed = 0;
    e->len = ll_to_str(e->buf, v);
    e->buf[e->len] = '\0';
    e->p = e->buf;
}

static inline void elem_from_node(set_elem_t *e, const dict_node_t *n)
{
    e->p = node_member(n);
    e->len = n->aux;
    e->hash = n->hash;
    e->hashed = 1;
    e->isint = 0;
    e->v = 0;
}

static inline uint32_t elem_hash(const set_elem_t *e)
{
    return e->hashed ? e->hash : dict_hash(e->p, e->len);
}

/* The integer value of an element, if it has one (str_to_ll, as Redis's string2ll). */
static inline int elem_ll(const set_elem_t *e, long long *v)
{
    if (e->isint) {
        *v = e->v;
        return 1;
    }
    return str_to_ll(e->p, e->len, v);
}

/* ------------------------------------------------------------------------------------------
 * Lifecycle
 * ------------------------------------------------------------------------------------------ */

static inline intset_t *as_is(const set_t *s)
{
    return s->p;
}

static inline dict_t *as_ht(const set_t *s)
{
    return s->p;
}

set_t *set_new(int enc)
{
    assert(enc == ENC_INTSET || enc == ENC_HT);
    set_t *s = xmalloc(sizeof(*s));
    s->h.type = OBJ_SET;
    s->h.enc = (uint8_t)enc;
    s->h.flags = 0;
    s->h.lru = obj_clock_new();
    s->p = enc == ENC_INTSET ? (void *)is_new() : (void *)ht_new(0);
    return s;
}

set_t *set_new_for(const void *m, size_t len)
{
    long long v;
    return set_new(str_to_ll(m, len, &v) ? ENC_INTSET : ENC_HT);
}

void set_free(set_t *s)
{
    if (!s) return;
    if (s->h.enc == ENC_HT) {
        dict_clear(as_ht(s), NULL);
        xfree(s->p);
    } else {
        xfree(s->p);
    }
    xfree(s);
}

set_t *set_dup(const set_t *s)
{
    set_t *d = xmalloc(sizeof(*d));
    d->h = s->h;
    if (s->h.enc == ENC_INTSET) {
        const intset_t *is = as_is(s);
        size_t bytes = sizeof(*is) + (size_t)is->len * is->width;
        d->p = xmalloc(bytes);
        memcpy(d->p, is, bytes);
        return d;
    }
    dict_t *src = as_ht(s), *dst = ht_new(dict_size(src));
    dict_iter_t it;
    dict_iter_init(&it, src, 0);
    for (dict_node_t *n; (n = dict_iter_next(&it));)
        dict_insert(dst, node_new(node_member(n), n->aux, n->hash));
    dict_iter_deinit(&it);
    d->p = dst;
    return d;
}

size_t set_length(const set_t *s)
{
    if (s->h.enc == ENC_INTSET) return as_is(s)->len;
    return (size_t)dict_size(as_ht(s));
}

size_t set_memory(const set_t *s)
{
    size_t total = alloc_size(s) + alloc_size(s->p);
    if (s->h.enc == ENC_INTSET) return total;
    dict_t *d = as_ht(s);
    total += dict_buckets_bytes(d);
    uint64_t n = dict_size(d), seen = 0;
    size_t sampled = 0;
    dict_iter_t it;
    dict_iter_init(&it, d, 0);
    for (dict_node_t *e; (e = dict_iter_next(&it));) {
        sampled += alloc_size(e);
        if (++seen >= MEMORY_SAMPLES && n > MEMORY_EXACT_MAX) break;
    }
    dict_iter_deinit(&it);
    if (seen && seen < n) sampled = (size_t)((double)sampled / (double)seen * (double)n);
    return total + sampled;
}

void set_convert(set_t *s, int enc)
{
    assert(enc == ENC_HT || enc == ENC_INTSET);
    if (s->h.enc == enc) return;
    assert(enc == ENC_HT); /* hashtable to intset is not a conversion Redis makes */
    intset_t *is = as_is(s);
    dict_t *d = ht_new(is->len);
    set_elem_t e;
    for (size_t i = 0; i < is->len; i++) {
        elem_from_int(&e, is_get(is, i));
        dict_insert(d, node_new(e.p, e.len, dict_hash(e.p, e.len)));
    }
    xfree(is);
    s->p = d;
    s->h.enc = ENC_HT;
}

static void free_obj(obj_t *o)
{
    set_free((set_t *)o);
}

static obj_t *dup_obj(const obj_t *o)
{
    return &set_dup((const set_t *)o)->h;
}

static size_t memory_obj(const obj_t *o)
{
    return set_memory((const set_t *)o);
}

static size_t length_obj(const obj_t *o)
{
    return set_length((const set_t *)o);
}

static const obj_ops_t set_ops = {free_obj, dup_obj, memory_obj, length_obj};

__attribute__((constructor)) static void reg(void)
{
    obj_types[OBJ_SET] = &set_ops;
}

/* ------------------------------------------------------------------------------------------
 * Members
 * ------------------------------------------------------------------------------------------ */

/* Adds an integer to an intset set, converting it when it grows past the limit. */
static int intset_add_ll(set_t *s, long long v)
{
    int added;
    s->p = is_add(as_is(s), v, &added);
    if (added && as_is(s)->len > storage_params.set_max_intset_entries) set_convert(s, ENC_HT);
    return added;
}

int set_add_elem(set_t *s, const set_elem_t *e)
{
    if (s->h.enc == ENC_INTSET) {
        long long v;
        if (elem_ll(e, &v)) return intset_add_ll(s, v);
        set_convert(s, ENC_HT);
        dict_insert(as_ht(s), node_new(e->p, e->len, elem_hash(e)));
        return 1;
    }
    return ht_add(as_ht(s), e->p, e->len, elem_hash(e));
}

int set_add(set_t *s, const void *m, size_t len)
{
    set_elem_t e = {.p = m, .len = len};
    return set_add_elem(s, &e);
}

int set_remove_elem(set_t *s, const set_elem_t *e)
{
    if (s->h.enc == ENC_INTSET) {
        long long v;
        int removed = 0;
        if (elem_ll(e, &v)) s->p = is_remove(as_is(s), v, &removed);
        return removed;
    }
    return ht_remove(as_ht(s), e->p, e->len, elem_hash(e));
}

int set_remove(set_t *s, const void *m, size_t len)
{
    set_elem_t e = {.p = m, .len = len};
    return set_remove_elem(s, &e);
}

int set_contains_elem(const set_t *s, const set_elem_t *e)
{
    if (s->h.enc == ENC_INTSET) {
        long long v;
        return elem_ll(e, &v) && is_find(as_is(s), v);
    }
    return dict_find(as_ht(s), e->p, e->len, elem_hash(e)) != NULL;
}

int set_contains(const set_t *s, const void *m, size_t len)
{
    set_elem_t e = {.p = m, .len = len};
    return set_contains_elem(s, &e);
}

void set_random(const set_t *s, set_elem_t *e)
{
    assert(set_length(s) > 0);
    if (s->h.enc == ENC_INTSET) {
        const intset_t *is = as_is(s);
        elem_from_int(e, is_get(is, rand_u64() % is->len));
        return;
    }
    /* uniform, as Redis's dictGetFairRandomKey: the table holds at most one member per bucket
     * on average, so chains past 8 are rare */
    elem_from_node(e, dict_random_fair(as_ht(s), rand_u64(), 8));
}

/* ------------------------------------------------------------------------------------------
 * Iteration and scan
 * ------------------------------------------------------------------------------------------ */

void set_iter_init(set_iter_t *it, const set_t *s)
{
    it->s = s;
    it->i = 0;
    if (s->h.enc == ENC_HT) dict_iter_init(&it->di, as_ht(s), 0);
}

int set_iter_next(set_iter_t *it, set_elem_t *e)
{
    if (it->s->h.enc == ENC_INTSET) {
        const intset_t *is = as_is(it->s);
        if (it->i >= is->len) return 0;
        elem_from_int(e, is_get(is, it->i++));
        return 1;
    }
    dict_node_t *n = dict_iter_next(&it->di);
    if (!n) return 0;
    elem_from_node(e, n);
    return 1;
}

void set_iter_deinit(set_iter_t *it)
{
    if (it->s->h.enc == ENC_HT) dict_iter_deinit(&it->di);
}

typedef struct scan_ctx {
    set_scan_fn *fn;
    void *ud;
} scan_ctx_t;

static void scan_node(void *ud, dict_node_t *n)
{
    scan_ctx_t *ctx = ud;
    set_elem_t e;
    elem_from_node(&e, n);
    ctx->fn(ctx->ud, &e);
}

uint64_t set_scan(const set_t *s, uint64_t cursor, set_scan_fn *fn, void *ud)
{
    if (s->h.enc == ENC_INTSET) {
        const intset_t *is = as_is(s);
        set_elem_t e;
        for (size_t i = 0; i < is->len; i++) {
            elem_from_int(&e, is_get(is, i));
            fn(ud, &e);
        }
        return 0;
    }
    scan_ctx_t ctx = {fn, ud};
    return dict_scan(as_ht(s), cursor, scan_node, &ctx);
}
