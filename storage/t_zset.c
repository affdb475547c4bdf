/* t_zset.c - sorted sets in two encodings (see t_zset.h).
 *
 * Listpack: one allocation, an 8-byte header then the entries in (score, member) order.
 *
 *   offset  size  field
 *   0       4     count    number of entries
 *   4       4     bytes    bytes of entries that follow the header
 *   8       ...   entries
 *
 *   entry:  tag      1 byte: bits 0-2 score kind, bits 3-7 member length (31: length - 31
 *                    follows as a LEB128 varint)
 *           score    kind 0: none (0), 1: int8, 2: int16, 3: int32, 4: IEEE double (8 bytes)
 *           member   the bytes
 *           backlen  the entry's size without backlen, 7 bits per byte, written so that it
 *                    reads backwards from its last byte (high bit: more bytes before)
 *
 * A small integral score costs 1-5 bytes and a member of up to 30 bytes one header byte, so an
 * entry is about as small as in Redis's listpack, while scores keep their exact double value
 * without a string round trip. Integral scores (0 included) are stored as integers, so -0
 * reads back as 0, which is what Redis 7.0's listpack does too.
 *
 * Skiplist: Pugh's skiplist with spans (Redis's variant: equal scores ordered by member, a
 * backward pointer at level 0) and a dict from member to node. A node is one allocation:
 *
 *   dict_node_t (next, hash, aux = member length) | score | backward | member bytes |
 *   padding to 8 | levels[height] {forward, span}
 *
 * so the dict entry, the skiplist node and the member share one block; the height is not
 * stored (deleting a node tells it: the levels whose update[] pointed at the node). Spans of a
 * level whose forward is NULL count the nodes after the node, as Redis's insert expects.
 * The skiplist header (a node with ZSL_MAXLEVEL levels) lives in the zsl_t allocation.
 *
 * Invariants: both encodings hold unique members in (score, member) order; no NaN scores; a
 * listpack's count and bytes match its entries. Runs on the loop thread. */
#include "storage/t_zset.h"

#include "common/alloc.h"
#include "common/dict.h"
#include "common/util.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ZSL_MAXLEVEL 32
#define LP_MAX_SAFE (1u << 30) /* listpack size limit, as Redis's LISTPACK_MAX_SAFETY_SIZE */
#define MEMORY_SAMPLES 64

/* ------------------------------------------------------------------------------------------
 * Comparisons and ranges
 * ------------------------------------------------------------------------------------------ */

static inline int mem_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c;
    return alen < blen ? -1 : (alen > blen);
}

int zset_score_gte_min(double s, const zset_range_t *r)
{
    return r->minex ? s > r->min : s >= r->min;
}

int zset_score_lte_max(double s, const zset_range_t *r)
{
    return r->maxex ? s < r->max : s <= r->max;
}

static int range_empty(const zset_range_t *r)
{
    return r->min > r->max || (r->min == r->max && (r->minex || r->maxex));
}

/* Sign of member - bound. */
static int lex_cmp(const char *m, size_t len, const zset_lex_bound_t *b)
{
    if (b->kind == ZLEX_MIN) return 1;
    if (b->kind == ZLEX_MAX) return -1;
    return mem_cmp(m, len, b->p, b->len);
}

int zset_lex_gte_min(const char *m, size_t len, const zset_lex_range_t *r)
{
    int c = lex_cmp(m, len, &r->min);
    return r->min.ex ? c > 0 : c >= 0;
}

int zset_lex_lte_max(const char *m, size_t len, const zset_lex_range_t *r)
{
    int c = lex_cmp(m, len, &r->max);
    return r->max.ex ? c < 0 : c <= 0;
}

/* Redis's sdscmplex on two bounds: "-" and "+" equal themselves only. */
static int lex_bound_cmp(const zset_lex_bound_t *a, const zset_lex_bound_t *b)
{
    if (a->kind != ZLEX_VALUE && a->kind == b->kind) return 0;
    if (a->kind == ZLEX_MIN || b->kind == ZLEX_MAX) return -1;
    if (a->kind == ZLEX_MAX || b->kind == ZLEX_MIN) return 1;
    return mem_cmp(a->p, a->len, b->p, b->len);
}

static int lex_range_empty(const zset_lex_range_t *r)
{
    int c = lex_bound_cmp(&r->min, &r->max);
    return c > 0 || (c == 0 && (r->min.ex || r->max.ex));
}

/* strtod over the bytes as a C string: stops at a NUL byte like Redis's sds-based parser. */
static int parse_score_bound(const char *s, size_t len, double *v, int *ex)
{
    char stack[128], *buf = stack;
    *ex = 0;
    if (len > 0 && s[0] == '(') {
        *ex = 1;
        s++;
        len--;
    }
    if (len >= sizeof(stack) && !(buf = try_malloc(len + 1))) return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    double d = strtod(buf, &end);
    int ok = *end == '\0' && !isnan(d);
    if (buf != stack) xfree(buf);
    if (!ok) return -1;
    *v = d;
    return 0;
}

int zset_parse_range(const char *min, size_t minlen, const char *max, size_t maxlen,
                     zset_range_t *r)
{
    if (parse_score_bound(min, minlen, &r->min, &r->minex) < 0) return -1;
    return parse_score_bound(max, maxlen, &r->max, &r->maxex);
}

static int parse_lex_bound(const char *s, size_t len, zset_lex_bound_t *b)
{
    if (len == 0) return -1;
    b->p = s + 1;
    b->len = len - 1;
    switch (s[0]) {
    case '+':
    case '-':
        if (len > 1 && s[1] != '\0') return -1;
        b->kind = s[0] == '+' ? ZLEX_MAX : ZLEX_MIN;
        b->ex = 1;
        b->len = 0;
        return 0;
    case '(':
        b->kind = ZLEX_VALUE;
        b->ex = 1;
        return 0;
    case '[':
        b->kind = ZLEX_VALUE;
        b->ex = 0;
        return 0;
    default:
        return -1;
    }
}

int zset_parse_lex_range(const char *min, size_t minlen, const char *max, size_t maxlen,
                         zset_lex_range_t *r)
{
    if (parse_lex_bound(min, minlen, &r->min) < 0) return -1;
    return parse_lex_bound(max, maxlen, &r->max);
}

/* ------------------------------------------------------------------------------------------
 * Listpack encoding
 * ------------------------------------------------------------------------------------------ */

typedef struct lp {
    uint32_t count;
    uint32_t bytes;
    uint8_t data[];
} lp_t;

static const uint8_t score_payload[5] = {0, 1, 2, 4, 8};

static inline size_t varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline size_t backlen_size(size_t n)
{
    return n < (1u << 7) ? 1 : n < (1u << 14) ? 2 : n < (1u << 21) ? 3 : n < (1u << 28) ? 4 : 5;
}

static int score_kind(double s)
{
    if (s == 0) return 0;
    if (s >= -2147483648.0 && s <= 2147483647.0) {
        int32_t i = (int32_t)s;
        if ((double)i == s)
            return (i >= -128 && i <= 127) ? 1 : (i >= -32768 && i <= 32767) ? 2 : 3;
    }
    return 4;
}

/* Size of an entry for a member of len bytes and a score of kind; *body excludes backlen. */
static size_t lp_entry_size(size_t len, int kind, size_t *body)
{
    size_t b = 1 + (len >= 31 ? varint_size(len - 31) : 0) + score_payload[kind] + len;
    *body = b;
    return b + backlen_size(b);
}

static void lp_write(uint8_t *p, const void *m, size_t len, double s, int kind, size_t body)
{
    uint8_t *q = p;
    *q++ = (uint8_t)(kind | ((len >= 31 ? 31 : len) << 3));
    if (len >= 31) {
        uint64_t v = len - 31;
        while (v >= 0x80) {
            *q++ = (uint8_t)(v | 0x80);
            v >>= 7;
        }
        *q++ = (uint8_t)v;
    }
    switch (kind) {
    case 0:
        break;
    case 1:
        *q++ = (uint8_t)(int8_t)s;
        break;
    case 2: {
        int16_t v = (int16_t)s;
        memcpy(q, &v, 2);
        q += 2;
        break;
    }
    case 3: {
        int32_t v = (int32_t)s;
        memcpy(q, &v, 4);
        q += 4;
        break;
    }
    default:
        memcpy(q, &s, 8);
        q += 8;
    }
    if (len) memcpy(q, m, len);
    q += len;
    size_t k = backlen_size(body);
    for (size_t i = 0; i < k; i++)
        q[k - 1 - i] = (uint8_t)(((body >> (7 * i)) & 0x7f) | (i + 1 < k ? 0x80 : 0));
}

/* Decodes the entry at p into e and returns the next entry. */
static inline const uint8_t *lp_decode(const uint8_t *p, zset_entry_t *e)
{
    unsigned tag = p[0];
    const uint8_t *q = p + 1;
    size_t len = tag >> 3;
    if (len == 31) {
        uint64_t v = 0;
        unsigned shift = 0;
        uint8_t b;
        do {
            b = *q++;
            v |= (uint64_t)(b & 0x7f) << shift;
            shift += 7;
        } while (b & 0x80);
        len += v;
    }
    switch (tag & 7) {
    case 0:
        e->score = 0;
        break;
    case 1:
        e->score = (int8_t)q[0];
        q += 1;
        break;
    case 2: {
        int16_t v;
        memcpy(&v, q, 2);
        e->score = v;
        q += 2;
        break;
    }
    case 3: {
        int32_t v;
        memcpy(&v, q, 4);
        e->score = v;
        q += 4;
        break;
    }
    default:
        memcpy(&e->score, q, 8);
        q += 8;
    }
    e->member = (const char *)q;
    e->len = len;
    q += len;
    return q + backlen_size((size_t)(q - p));
}

/* The entry before the one at p (p past the first entry). */
static inline const uint8_t *lp_prev(const uint8_t *p)
{
    size_t v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        b = *--p;
        v |= (size_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    return p - v;
}

static inline const uint8_t *lp_end(const lp_t *lp)
{
    return lp->data + lp->bytes;
}

static inline const uint8_t *lp_first(const lp_t *lp)
{
    return lp->count ? lp->data : NULL;
}

static inline const uint8_t *lp_last(const lp_t *lp)
{
    return lp->count ? lp_prev(lp_end(lp)) : NULL;
}

/* Next entry after the one at p that ends at next, or NULL at the end. */
static inline const uint8_t *lp_step(const lp_t *lp, const uint8_t *p, const uint8_t *next,
                                     int reverse)
{
    if (reverse) return p == lp->data ? NULL : lp_prev(p);
    return next == lp_end(lp) ? NULL : next;
}

static lp_t *lp_new(size_t bytes)
{
    lp_t *lp = xmalloc(sizeof(lp_t) + bytes);
    lp->count = 0;
    lp->bytes = 0;
    return lp;
}

/* The entry at index idx (< count), walking from the nearer end. */
static const uint8_t *lp_seek(const lp_t *lp, size_t idx)
{
    const uint8_t *p;
    if (idx <= lp->count / 2) {
        zset_entry_t e;
        for (p = lp->data; idx; idx--) p = lp_decode(p, &e);
    } else {
        p = lp_end(lp);
        for (size_t n = lp->count - idx; n; n--) p = lp_prev(p);
    }
    return p;
}

static const uint8_t *lp_find(const lp_t *lp, const void *m, size_t len, zset_entry_t *e)
{
    const uint8_t *p = lp->data, *end = lp_end(lp);
    while (p < end) {
        const uint8_t *next = lp_decode(p, e);
        if (e->len == len && (len == 0 || memcmp(e->member, m, len) == 0)) return p;
        p = next;
    }
    return NULL;
}

/* Makes room for extra more bytes of entries; may move the listpack. */
static lp_t *lp_reserve(zset_t *z, size_t extra)
{
    lp_t *lp = z->p;
    size_t need = sizeof(lp_t) + lp->bytes + extra;
    if (need > alloc_size(lp)) z->p = lp = xrealloc(lp, need);
    return lp;
}

/* Gives back memory after deletions when much of the block is unused. */
static void lp_trim(zset_t *z)
{
    lp_t *lp = z->p;
    size_t need = sizeof(lp_t) + lp->bytes, have = alloc_size(lp);
    if (have - need > 32 && have - need > need / 4) z->p = xrealloc(lp, need);
}

static void lp_insert(zset_t *z, const void *m, size_t len, double s)
{
    lp_t *lp = z->p;
    const uint8_t *p = lp->data, *end = lp_end(lp);
    while (p < end) {
        zset_entry_t e;
        const uint8_t *next = lp_decode(p, &e);
        if (e.score > s || (e.score == s && mem_cmp(e.member, e.len, m, len) > 0)) break;
        p = next;
    }
    size_t off = (size_t)(p - lp->data), body;
    int kind = score_kind(s);
    size_t size = lp_entry_size(len, kind, &body);
    lp = lp_reserve(z, size);
    memmove(lp->data + off + size, lp->data + off, lp->bytes - off);
    lp_write(lp->data + off, m, len, s, kind, body);
    lp->bytes += (uint32_t)size;
    lp->count++;
}

/* Deletes n entries starting with the one at offset off. */
static void lp_delete(zset_t *z, size_t off, size_t n)
{
    lp_t *lp = z->p;
    const uint8_t *p = lp->data + off;
    zset_entry_t e;
    for (size_t i = 0; i < n; i++) p = lp_decode(p, &e);
    size_t gone = (size_t)(p - (lp->data + off));
    memmove(lp->data + off, p, lp->bytes - off - gone);
    lp->bytes -= (uint32_t)gone;
    lp->count -= (uint32_t)n;
    lp_trim(z);
}

/* ---- listpack ranges, with Redis's zzl*InRange early checks ---- */

static const uint8_t *lp_first_in_range(const lp_t *lp, const zset_range_t *r)
{
    zset_entry_t e;
    if (range_empty(r) || !lp->count) return NULL;
    lp_decode(lp_last(lp), &e);
    if (!zset_score_gte_min(e.score, r)) return NULL;
    const uint8_t *p = lp->data, *end = lp_end(lp);
    while (p < end) {
        const uint8_t *next = lp_decode(p, &e);
        if (zset_score_gte_min(e.score, r)) return zset_score_lte_max(e.score, r) ? p : NULL;
        p = next;
    }
    return NULL;
}

static const uint8_t *lp_last_in_range(const lp_t *lp, const zset_range_t *r)
{
    zset_entry_t e;
    if (range_empty(r) || !lp->count) return NULL;
    lp_decode(lp->data, &e);
    if (!zset_score_lte_max(e.score, r)) return NULL;
    for (const uint8_t *p = lp_last(lp);; p = lp_prev(p)) {
        lp_decode(p, &e);
        if (zset_score_lte_max(e.score, r)) return zset_score_gte_min(e.score, r) ? p : NULL;
        if (p == lp->data) return NULL;
    }
}

static int lp_in_lex_range(const lp_t *lp, const zset_lex_range_t *r)
{
    zset_entry_t e;
    if (lex_range_empty(r) || !lp->count) return 0;
    lp_decode(lp_last(lp), &e);
    if (!zset_lex_gte_min(e.member, e.len, r)) return 0;
    lp_decode(lp->data, &e);
    return zset_lex_lte_max(e.member, e.len, r);
}

static const uint8_t *lp_first_in_lex(const lp_t *lp, const zset_lex_range_t *r)
{
    zset_entry_t e;
    if (!lp_in_lex_range(lp, r)) return NULL;
    const uint8_t *p = lp->data, *end = lp_end(lp);
    while (p < end) {
        const uint8_t *next = lp_decode(p, &e);
        if (zset_lex_gte_min(e.member, e.len, r))
            return zset_lex_lte_max(e.member, e.len, r) ? p : NULL;
        p = next;
    }
    return NULL;
}

static const uint8_t *lp_last_in_lex(const lp_t *lp, const zset_lex_range_t *r)
{
    zset_entry_t e;
    if (!lp_in_lex_range(lp, r)) return NULL;
    for (const uint8_t *p = lp_last(lp);; p = lp_prev(p)) {
        lp_decode(p, &e);
        if (zset_lex_lte_max(e.member, e.len, r))
            return zset_lex_gte_min(e.member, e.len, r) ? p : NULL;
        if (p == lp->data) return NULL;
    }
}

/* Deletes the run of entries from p on that pass the bound check; returns how many. */
static size_t lp_delete_run(zset_t *z, const uint8_t *p, const zset_range_t *r,
                            const zset_lex_range_t *lr)
{
    lp_t *lp = z->p;
    if (!p) return 0;
    const uint8_t *q = p, *end = lp_end(lp);
    size_t n = 0;
    while (q < end) {
        zset_entry_t e;
        const uint8_t *next = lp_decode(q, &e);
        if (r ? !zset_score_lte_max(e.score, r) : !zset_lex_lte_max(e.member, e.len, lr)) break;
        n++;
        q = next;
    }
    if (n) lp_delete(z, (size_t)(p - lp->data), n);
    return n;
}

/* ------------------------------------------------------------------------------------------
 * Skiplist encoding
 * ------------------------------------------------------------------------------------------ */

typedef struct zsl_node zsl_node_t;
typedef struct zsl_level {
    zsl_node_t *forward;
    size_t span;
} zsl_level_t;
struct zsl_node {
    dict_node_t dn; /* dn.aux: member length */
    double score;
    zsl_node_t *backward;
    char member[];
};
typedef struct zsl {
    dict_t dict;
    zsl_node_t *header, *tail;
    size_t length;
    int level;
} zsl_t;

_Static_assert(sizeof(zsl_node_t) % 8 == 0, "levels follow the node at 8-byte alignment");
_Static_assert(sizeof(zsl_t) % 8 == 0, "the header node follows zsl_t");

static inline size_t nlen(const zsl_node_t *n)
{
    return n->dn.aux;
}

static inline size_t lv_off(size_t len)
{
    return (sizeof(zsl_node_t) + len + 7) & ~(size_t)7;
}

static inline zsl_level_t *LV(const zsl_node_t *n)
{
    return (zsl_level_t *)((char *)n + lv_off(nlen(n)));
}

static inline zsl_node_t *fwd(const zsl_node_t *n, int i)
{
    return LV(n)[i].forward;
}

static const void *zsl_dict_key(const dict_node_t *n, size_t *len)
{
    *len = n->aux;
    return ((const zsl_node_t *)n)->member;
}

static void zsl_dict_free(dict_node_t *n, void *ud)
{
    xfree(n);
}

/* The dict owns the nodes for freeing: zsl_free() clears it, and the skiplist goes with it. */
static const dict_type_t zsl_dict_type = {zsl_dict_key, zsl_dict_free};

static int zsl_random_level(void)
{
    uint64_t r = rand_u64();
    int level = 1;
    /* P = 1/4 per level, from the high bits of the PRNG */
    while (level < ZSL_MAXLEVEL && (r >> 62) == 0) {
        level++;
        r <<= 2;
    }
    return level;
}

static zsl_node_t *zsl_node_new(int level, double score, const void *m, size_t len)
{
    assert(len <= UINT32_MAX);
    zsl_node_t *n = xmalloc(lv_off(len) + (size_t)level * sizeof(zsl_level_t));
    n->dn.next = NULL;
    n->dn.hash = dict_hash(m, len);
    n->dn.aux = (uint32_t)len;
    n->score = score;
    n->backward = NULL;
    if (len) memcpy(n->member, m, len);
    return n;
}

static zsl_t *zsl_new(void)
{
    zsl_t *sl = xmalloc(sizeof(zsl_t) + sizeof(zsl_node_t) + ZSL_MAXLEVEL * sizeof(zsl_level_t));
    dict_init(&sl->dict, &zsl_dict_type);
    sl->header = (zsl_node_t *)(sl + 1);
    memset(sl->header, 0, sizeof(zsl_node_t) + ZSL_MAXLEVEL * sizeof(zsl_level_t));
    sl->tail = NULL;
    sl->length = 0;
    sl->level = 1;
    return sl;
}

static void zsl_free(zsl_t *sl)
{
    dict_clear(&sl->dict, NULL);
    xfree(sl);
}

/* 1 if node x sorts before (s, m). */
static inline int node_before(const zsl_node_t *x, double s, const char *m, size_t len)
{
    return x->score < s || (x->score == s && mem_cmp(x->member, nlen(x), m, len) < 0);
}

/* Links x (of height level, not in the list) at its place. */
static void zsl_insert(zsl_t *sl, zsl_node_t *x, int level)
{
    zsl_node_t *update[ZSL_MAXLEVEL], *p = sl->header, *f;
    size_t rank[ZSL_MAXLEVEL];
    for (int i = sl->level - 1; i >= 0; i--) {
        rank[i] = i == sl->level - 1 ? 0 : rank[i + 1];
        while ((f = fwd(p, i)) && node_before(f, x->score, x->member, nlen(x))) {
            rank[i] += LV(p)[i].span;
            p = f;
        }
        update[i] = p;
    }
    if (level > sl->level) {
        for (int i = sl->level; i < level; i++) {
            rank[i] = 0;
            update[i] = sl->header;
            LV(sl->header)[i].span = sl->length;
        }
        sl->level = level;
    }
    zsl_level_t *xl = LV(x);
    for (int i = 0; i < level; i++) {
        zsl_level_t *ul = &LV(update[i])[i];
        xl[i].forward = ul->forward;
        ul->forward = x;
        xl[i].span = ul->span - (rank[0] - rank[i]);
        ul->span = rank[0] - rank[i] + 1;
    }
    for (int i = level; i < sl->level; i++) LV(update[i])[i].span++;
    x->backward = update[0] == sl->header ? NULL : update[0];
    if (xl[0].forward)
        xl[0].forward->backward = x;
    else
        sl->tail = x;
    sl->length++;
}

/* Unlinks x given its predecessors per level; returns x's height. */
static int zsl_unlink(zsl_t *sl, zsl_node_t *x, zsl_node_t **update)
{
    int height = 0;
    zsl_level_t *xl = LV(x);
    for (int i = 0; i < sl->level; i++) {
        zsl_level_t *ul = &LV(update[i])[i];
        if (ul->forward == x) {
            ul->span += xl[i].span - 1;
            ul->forward = xl[i].forward;
            height = i + 1;
        } else {
            ul->span -= 1;
        }
    }
    if (xl[0].forward)
        xl[0].forward->backward = x->backward;
    else
        sl->tail = x->backward;
    while (sl->level > 1 && !fwd(sl->header, sl->level - 1)) sl->level--;
    sl->length--;
    return height;
}

/* Fills update[] with the last node before (s, m) per level. */
static void zsl_seek(zsl_t *sl, double s, const char *m, size_t len, zsl_node_t **update)
{
    zsl_node_t *p = sl->header, *f;
    for (int i = sl->level - 1; i >= 0; i--) {
        while ((f = fwd(p, i)) && node_before(f, s, m, len)) p = f;
        update[i] = p;
    }
}

/* 1-based rank of node x, which is in the list. */
static size_t zsl_node_rank(const zsl_t *sl, const zsl_node_t *x)
{
    size_t rank = 0;
    const zsl_node_t *p = sl->header;
    const zsl_node_t *f;
    for (int i = sl->level - 1; i >= 0; i--) {
        while ((f = fwd(p, i)) &&
               (f->score < x->score ||
                (f->score == x->score && mem_cmp(f->member, nlen(f), x->member, nlen(x)) <= 0))) {
            rank += LV(p)[i].span;
            p = f;
        }
        if (p == x) return rank;
    }
    assert(0 && "node not in skiplist");
    return 0;
}

/* The node at 1-based rank, or NULL. */
static zsl_node_t *zsl_by_rank(const zsl_t *sl, size_t rank)
{
    size_t traversed = 0;
    zsl_node_t *p = sl->header, *f;
    for (int i = sl->level - 1; i >= 0; i--) {
        while ((f = fwd(p, i)) && traversed + LV(p)[i].span <= rank) {
            traversed += LV(p)[i].span;
            p = f;
        }
        if (traversed == rank) return p == sl->header ? NULL : p;
    }
    return NULL;
}

static zsl_node_t *zsl_first(const zsl_t *sl)
{
    return fwd(sl->header, 0);
}

static int zsl_in_range(const zsl_t *sl, const zset_range_t *r)
{
    if (range_empty(r) || !sl->tail) return 0;
    return zset_score_gte_min(sl->tail->score, r) && zset_score_lte_max(zsl_first(sl)->score, r);
}

static zsl_node_t *zsl_first_in_range(const zsl_t *sl, const zset_range_t *r)
{
    if (!zsl_in_range(sl, r)) return NULL;
    zsl_node_t *p = sl->header, *f;
    for (int i = sl->level - 1; i >= 0; i--)
        while ((f = fwd(p, i)) && !zset_score_gte_min(f->score, r)) p = f;
    p = fwd(p, 0);
    assert(p);
    return zset_score_lte_max(p->score, r) ? p : NULL;
}

static zsl_node_t *zsl_last_in_range(const zsl_t *sl, const zset_range_t *r)
{
    if (!zsl_in_range(sl, r)) return NULL;
    zsl_node_t *p = sl->header, *f;
    for (int i = sl->level - 1; i >= 0; i--)
        while ((f = fwd(p, i)) && zset_score_lte_max(f->score, r)) p = f;
    assert(p != sl->header);
    return zset_score_gte_min(p->score, r) ? p : NULL;
}

static int zsl_in_lex_range(const zsl_t *sl, const zset_lex_range_t *r)
{
    if (lex_range_empty(r) || !sl->tail) return 0;
    const zsl_node_t *h = zsl_first(sl);
    return zset_lex_gte_min(sl->tail->member, nlen(sl->tail), r) &&
           zset_lex_lte_max(h->member, nlen(h), r);
}

static zsl_node_t *zsl_first_in_lex(const zsl_t *sl, const zset_lex_range_t *r)
{
    if (!zsl_in_lex_range(sl, r)) return NULL;
    zsl_node_t *p = sl->header, *f;
    for (int i = sl->level - 1; i >= 0; i--)
        while ((f = fwd(p, i)) && !zset_lex_gte_min(f->member, nlen(f), r)) p = f;
    p = fwd(p, 0);
    assert(p);
    return zset_lex_lte_max(p->member, nlen(p), r) ? p : NULL;
}

static zsl_node_t *zsl_last_in_lex(const zsl_t *sl, const zset_lex_range_t *r)
{
    if (!zsl_in_lex_range(sl, r)) return NULL;
    zsl_node_t *p = sl->header, *f;
    for (int i = sl->level - 1; i >= 0; i--)
        while ((f = fwd(p, i)) && zset_lex_lte_max(f->member, nlen(f), r)) p = f;
    assert(p != sl->header);
    return zset_lex_gte_min(p->member, nlen(p), r) ? p : NULL;
}

/* Unlinks and frees x (dict included) given update[]. */
static void zsl_delete_node(zsl_t *sl, zsl_node_t *x, zsl_node_t **update)
{
    zsl_unlink(sl, x, update);
    dict_node_t *d = dict_unlink(&sl->dict, x->member, nlen(x), x->dn.hash);
    assert(d == &x->dn);
    (void)d;
    xfree(x);
}

/* Deletes nodes from the one after update[0] while they pass the bound check. */
static size_t zsl_delete_run(zsl_t *sl, zsl_node_t **update, const zset_range_t *r,
                             const zset_lex_range_t *lr, size_t max)
{
    size_t n = 0;
    zsl_node_t *x = fwd(update[0], 0);
    while (x && n < max) {
        if (r && !zset_score_lte_max(x->score, r)) break;
        if (lr && !zset_lex_lte_max(x->member, nlen(x), lr)) break;
        zsl_node_t *next = fwd(x, 0);
        zsl_delete_node(sl, x, update);
        n++;
        x = next;
    }
    dict_try_shrink(&sl->dict);
    return n;
}

static size_t zsl_delete_range(zsl_t *sl, const zset_range_t *r)
{
    zsl_node_t *update[ZSL_MAXLEVEL], *p = sl->header, *f;
    for (int i = sl->level - 1; i >= 0; i--) {
        while ((f = fwd(p, i)) && !zset_score_gte_min(f->score, r)) p = f;
        update[i] = p;
    }
    return zsl_delete_run(sl, update, r, NULL, SIZE_MAX);
}

static size_t zsl_delete_lex(zsl_t *sl, const zset_lex_range_t *r)
{
    zsl_node_t *update[ZSL_MAXLEVEL], *p = sl->header, *f;
    for (int i = sl->level - 1; i >= 0; i--) {
        while ((f = fwd(p, i)) && !zset_lex_gte_min(f->member, nlen(f), r)) p = f;
        update[i] = p;
    }
    return zsl_delete_run(sl, update, NULL, r, SIZE_MAX);
}

/* Ranks are 1-based here, start <= end. */
static size_t zsl_delete_rank(zsl_t *sl, size_t start, size_t end)
{
    zsl_node_t *update[ZSL_MAXLEVEL], *p = sl->header, *f;
    size_t traversed = 0;
    for (int i = sl->level - 1; i >= 0; i--) {
        while ((f = fwd(p, i)) && traversed + LV(p)[i].span < start) {
            traversed += LV(p)[i].span;
            p = f;
        }
        update[i] = p;
    }
    return zsl_delete_run(sl, update, NULL, NULL, end - start + 1);
}

/* Gives x (in the list) a new score, keeping its place when the order allows. */
static void zsl_update_score(zsl_t *sl, zsl_node_t *x, double score)
{
    zsl_node_t *next = fwd(x, 0);
    if ((!x->backward || x->backward->score < score) && (!next || next->score > score)) {
        x->score = score;
        return;
    }
    zsl_node_t *update[ZSL_MAXLEVEL];
    zsl_seek(sl, x->score, x->member, nlen(x), update);
    assert(fwd(update[0], 0) == x);
    int height = zsl_unlink(sl, x, update);
    x->score = score;
    zsl_insert(sl, x, height);
}

static zsl_node_t *zsl_find(const zsl_t *sl, const void *m, size_t len)
{
    return (zsl_node_t *)dict_find((dict_t *)&sl->dict, m, len, dict_hash(m, len));
}

/* Appends nodes in order in linear time: last[i] is the last node of level i so far. */
typedef struct zsl_builder {
    zsl_t *sl;
    zsl_node_t *last[ZSL_MAXLEVEL];
    size_t rank[ZSL_MAXLEVEL];
} zsl_builder_t;

static void zsl_build_begin(zsl_builder_t *b, zsl_t *sl, size_t n)
{
    b->sl = sl;
    for (int i = 0; i < ZSL_MAXLEVEL; i++) {
        b->last[i] = sl->header;
        b->rank[i] = 0;
    }
    dict_expand(&sl->dict, n);
}

static void zsl_build_push(zsl_builder_t *b, double score, const void *m, size_t len)
{
    zsl_t *sl = b->sl;
    int level = zsl_random_level();
    zsl_node_t *x = zsl_node_new(level, score, m, len);
    size_t r = ++sl->length;
    if (level > sl->level) sl->level = level;
    zsl_level_t *xl = LV(x);
    for (int i = 0; i < level; i++) {
        zsl_level_t *ll = &LV(b->last[i])[i];
        ll->forward = x;
        ll->span = r - b->rank[i];
        xl[i].forward = NULL;
        b->last[i] = x;
        b->rank[i] = r;
    }
    x->backward = sl->tail;
    sl->tail = x;
    dict_insert(&sl->dict, &x->dn);
}

static void zsl_build_end(zsl_builder_t *b)
{
    zsl_t *sl = b->sl;
    for (int i = 0; i < sl->level; i++) LV(b->last[i])[i].span = sl->length - b->rank[i];
}

/* ------------------------------------------------------------------------------------------
 * Encoding conversion and lifecycle
 * ------------------------------------------------------------------------------------------ */

static zset_t *zset_alloc(int enc, void *p)
{
    zset_t *z = xmalloc(sizeof(*z));
    z->h.type = OBJ_ZSET;
    z->h.enc = (uint8_t)enc;
    z->h.flags = 0;
    z->h.lru = obj_clock_new();
    z->p = p;
    return z;
}

zset_t *zset_new(void)
{
    return zset_alloc(ENC_LISTPACK, lp_new(0));
}

static zsl_t *lp_to_zsl(const lp_t *lp)
{
    zsl_t *sl = zsl_new();
    zsl_builder_t b;
    zsl_build_begin(&b, sl, lp->count);
    const uint8_t *p = lp->data, *end = lp_end(lp);
    while (p < end) {
        zset_entry_t e;
        p = lp_decode(p, &e);
        zsl_build_push(&b, e.score, e.member, e.len);
    }
    zsl_build_end(&b);
    return sl;
}

/* A listpack holding n entries given by an iterator function over ordered entries. */
static lp_t *lp_from_entries(const zset_entry_t *v, size_t n)
{
    size_t total = 0, body;
    for (size_t i = 0; i < n; i++) total += lp_entry_size(v[i].len, score_kind(v[i].score), &body);
    lp_t *lp = lp_new(total);
    uint8_t *p = lp->data;
    for (size_t i = 0; i < n; i++) {
        int kind = score_kind(v[i].score);
        size_t size = lp_entry_size(v[i].len, kind, &body);
        lp_write(p, v[i].member, v[i].len, v[i].score, kind, body);
        p += size;
    }
    lp->count = (uint32_t)n;
    lp->bytes = (uint32_t)total;
    return lp;
}

static lp_t *zsl_to_lp(zsl_t *sl)
{
    size_t total = 0, body;
    for (zsl_node_t *x = zsl_first(sl); x; x = fwd(x, 0))
        total += lp_entry_size(nlen(x), score_kind(x->score), &body);
    lp_t *lp = lp_new(total);
    uint8_t *p = lp->data;
    for (zsl_node_t *x = zsl_first(sl); x; x = fwd(x, 0)) {
        int kind = score_kind(x->score);
        size_t size = lp_entry_size(nlen(x), kind, &body);
        lp_write(p, x->member, nlen(x), x->score, kind, body);
        p += size;
    }
    lp->count = (uint32_t)sl->length;
    lp->bytes = (uint32_t)total;
    return lp;
}

void zset_convert(zset_t *z, int enc)
{
    if (z->h.enc == enc) return;
    if (enc == ENC_SKIPLIST) {
        lp_t *lp = z->p;
        z->p = lp_to_zsl(lp);
        xfree(lp);
    } else {
        assert(enc == ENC_LISTPACK);
        zsl_t *sl = z->p;
        z->p = zsl_to_lp(sl);
        zsl_free(sl);
    }
    z->h.enc = (uint8_t)enc;
}

zset_t *zset_from_sorted(const zset_entry_t *v, size_t n)
{
    size_t maxlen = 0, total = 0, body;
    for (size_t i = 0; i < n; i++) {
        if (v[i].len > maxlen) maxlen = v[i].len;
        total += lp_entry_size(v[i].len, score_kind(v[i].score), &body);
    }
    if (n <= storage_params.zset_max_listpack_entries &&
        maxlen <= storage_params.zset_max_listpack_value && total <= LP_MAX_SAFE)
        return zset_alloc(ENC_LISTPACK, lp_from_entries(v, n));
    zsl_t *sl = zsl_new();
    zsl_builder_t b;
    zsl_build_begin(&b, sl, n);
    for (size_t i = 0; i < n; i++) zsl_build_push(&b, v[i].score, v[i].member, v[i].len);
    zsl_build_end(&b);
    return zset_alloc(ENC_SKIPLIST, sl);
}

void zset_free(zset_t *z)
{
    if (!z) return;
    if (z->h.enc == ENC_LISTPACK)
        xfree(z->p);
    else
        zsl_free(z->p);
    xfree(z);
}

zset_t *zset_dup(const zset_t *z)
{
    if (z->h.enc == ENC_LISTPACK) {
        const lp_t *lp = z->p;
        lp_t *copy = xmalloc(sizeof(lp_t) + lp->bytes);
        memcpy(copy, lp, sizeof(lp_t) + lp->bytes);
        return zset_alloc(ENC_LISTPACK, copy);
    }
    const zsl_t *src = z->p;
    zsl_t *sl = zsl_new();
    zsl_builder_t b;
    zsl_build_begin(&b, sl, src->length);
    for (zsl_node_t *x = zsl_first(src); x; x = fwd(x, 0))
        zsl_build_push(&b, x->score, x->member, nlen(x));
    zsl_build_end(&b);
    return zset_alloc(ENC_SKIPLIST, sl);
}

size_t zset_length(const zset_t *z)
{
    if (z->h.enc == ENC_LISTPACK) return ((const lp_t *)z->p)->count;
    return ((const zsl_t *)z->p)->length;
}

size_t zset_memory(const zset_t *z)
{
    size_t total = alloc_size(z) + alloc_size(z->p);
    if (z->h.enc == ENC_LISTPACK) return total;
    const zsl_t *sl = z->p;
    total += dict_buckets_bytes(&sl->dict);
    size_t nodes = 0, seen = 0;
    for (zsl_node_t *x = zsl_first(sl); x && seen < MEMORY_SAMPLES; x = fwd(x, 0), seen++)
        nodes += alloc_size(x);
    if (seen && seen < sl->length) nodes = nodes / seen * sl->length;
    return total + nodes;
}

/* ------------------------------------------------------------------------------------------
 * Members
 * ------------------------------------------------------------------------------------------ */

static int needs_skiplist(const lp_t *lp, size_t len)
{
    size_t body;
    return lp->count + 1 > storage_params.zset_max_listpack_entries ||
           len > storage_params.zset_max_listpack_value ||
           lp->bytes + lp_entry_size(len, 4, &body) > LP_MAX_SAFE;
}

/* Applies NX/INCR/GT/LT to an existing member's score; returns 1 to go on with *score. */
static int existing_rules(double cur, double *score, int flags, int *out)
{
    if (flags & ZSET_IN_NX) {
        *out |= ZSET_OUT_NOP;
        return 0;
    }
    if (flags & ZSET_IN_INCR) *score += cur;
    if (isnan(*score)) return -1;
    if (((flags & ZSET_IN_LT) && *score >= cur) || ((flags & ZSET_IN_GT) && *score <= cur)) {
        *out |= ZSET_OUT_NOP;
        return 0;
    }
    return 1;
}

static int lp_add(zset_t *z, const void *m, size_t len, double score, int flags, int *out,
                  double *newscore)
{
    zset_entry_t e;
    lp_t *lp = z->p;
    const uint8_t *p = lp_find(lp, m, len, &e);
    if (p) {
        int rc = existing_rules(e.score, &score, flags, out);
        if (rc <= 0) return rc;
        if (newscore) *newscore = score;
        if (score != e.score) {
            lp_delete(z, (size_t)(p - lp->data), 1);
            lp_insert(z, m, len, score);
            *out |= ZSET_OUT_UPDATED;
        }
        return 0;
    }
    if (flags & ZSET_IN_XX) {
        *out |= ZSET_OUT_NOP;
        return 0;
    }
    if (needs_skiplist(lp, len)) return 1; /* caller converts and retries */
    lp_insert(z, m, len, score);
    if (newscore) *newscore = score;
    *out |= ZSET_OUT_ADDED;
    return 0;
}

static int zsl_add(zset_t *z, const void *m, size_t len, double score, int flags, int *out,
                   double *newscore)
{
    zsl_t *sl = z->p;
    uint32_t h = dict_hash(m, len);
    zsl_node_t *x = (zsl_node_t *)dict_find(&sl->dict, m, len, h);
    if (x) {
        int rc = existing_rules(x->score, &score, flags, out);
        if (rc <= 0) return rc;
        if (newscore) *newscore = score;
        if (score != x->score) {
            zsl_update_score(sl, x, score);
            *out |= ZSET_OUT_UPDATED;
        }
        return 0;
    }
    if (flags & ZSET_IN_XX) {
        *out |= ZSET_OUT_NOP;
        return 0;
    }
    int level = zsl_random_level();
    x = zsl_node_new(level, score, m, len);
    zsl_insert(sl, x, level);
    dict_insert(&sl->dict, &x->dn);
    if (newscore) *newscore = score;
    *out |= ZSET_OUT_ADDED;
    return 0;
}

int zset_add(zset_t *z, const void *member, size_t len, double score, int flags, int *out,
             double *newscore)
{
    *out = 0;
    if (isnan(score)) return -1;
    if (z->h.enc == ENC_LISTPACK) {
        int rc = lp_add(z, member, len, score, flags, out, newscore);
        if (rc <= 0) return rc;
        zset_convert(z, ENC_SKIPLIST);
    }
    return zsl_add(z, member, len, score, flags, out, newscore);
}

int zset_remove(zset_t *z, const void *member, size_t len)
{
    if (z->h.enc == ENC_LISTPACK) {
        zset_entry_t e;
        lp_t *lp = z->p;
        const uint8_t *p = lp_find(lp, member, len, &e);
        if (!p) return 0;
        lp_delete(z, (size_t)(p - lp->data), 1);
        return 1;
    }
    zsl_t *sl = z->p;
    zsl_node_t *x = (zsl_node_t *)dict_unlink(&sl->dict, member, len, dict_hash(member, len));
    if (!x) return 0;
    zsl_node_t *update[ZSL_MAXLEVEL];
    zsl_seek(sl, x->score, x->member, nlen(x), update);
    assert(fwd(update[0], 0) == x);
    zsl_unlink(sl, x, update);
    xfree(x);
    dict_try_shrink(&sl->dict);
    return 1;
}

int zset_score(const zset_t *z, const void *member, size_t len, double *score)
{
    if (z->h.enc == ENC_LISTPACK) {
        zset_entry_t e;
        if (!lp_find(z->p, member, len, &e)) return 0;
        *score = e.score;
        return 1;
    }
    zsl_node_t *x = zsl_find(z->p, member, len);
    if (!x) return 0;
    *score = x->score;
    return 1;
}

long long zset_rank(const zset_t *z, const void *member, size_t len, int reverse)
{
    size_t n = zset_length(z), rank;
    if (z->h.enc == ENC_LISTPACK) {
        const lp_t *lp = z->p;
        const uint8_t *p = lp->data, *end = lp_end(lp);
        for (rank = 0; p < end; rank++) {
            zset_entry_t e;
            const uint8_t *next = lp_decode(p, &e);
            if (e.len == len && (len == 0 || memcmp(e.member, member, len) == 0)) break;
            p = next;
        }
        if (p >= end) return -1;
        rank++;
    } else {
        const zsl_t *sl = z->p;
        zsl_node_t *x = zsl_find(sl, member, len);
        if (!x) return -1;
        rank = zsl_node_rank(sl, x);
    }
    return reverse ? (long long)(n - rank) : (long long)(rank - 1);
}

static void node_entry(const zsl_node_t *x, zset_entry_t *e)
{
    e->member = x->member;
    e->len = nlen(x);
    e->score = x->score;
}

void zset_entry_at(const zset_t *z, size_t rank, zset_entry_t *e)
{
    assert(rank < zset_length(z));
    if (z->h.enc == ENC_LISTPACK) {
        lp_decode(lp_seek(z->p, rank), e);
        return;
    }
    node_entry(zsl_by_rank(z->p, rank + 1), e);
}

void zset_random(const zset_t *z, zset_entry_t *e)
{
    size_t n = zset_length(z);
    assert(n > 0);
    zset_entry_at(z, (size_t)(rand_u64() % n), e);
}

/* ------------------------------------------------------------------------------------------
 * Iterators, counts and range deletion
 * ------------------------------------------------------------------------------------------ */

static void iter_init(zset_iter_t *it, const zset_t *z, int reverse, int bound)
{
    it->z = z;
    it->pos = NULL;
    it->reverse = reverse;
    it->bound = bound;
}

void zset_iter_rank(zset_iter_t *it, const zset_t *z, size_t rank, int reverse)
{
    iter_init(it, z, reverse, 0);
    size_t n = zset_length(z);
    if (rank >= n) return;
    size_t idx = reverse ? n - 1 - rank : rank;
    if (z->h.enc == ENC_LISTPACK)
        it->pos = lp_seek(z->p, idx);
    else
        it->pos = zsl_by_rank(z->p, idx + 1);
}

void zset_iter_score(zset_iter_t *it, const zset_t *z, const zset_range_t *r, int reverse)
{
    iter_init(it, z, reverse, 1);
    it->range = *r;
    if (z->h.enc == ENC_LISTPACK)
        it->pos = reverse ? lp_last_in_range(z->p, r) : lp_first_in_range(z->p, r);
    else
        it->pos = reverse ? zsl_last_in_range(z->p, r) : zsl_first_in_range(z->p, r);
}

void zset_iter_lex(zset_iter_t *it, const zset_t *z, const zset_lex_range_t *r, int reverse)
{
    iter_init(it, z, reverse, 2);
    it->lex = *r;
    if (z->h.enc == ENC_LISTPACK)
        it->pos = reverse ? lp_last_in_lex(z->p, r) : lp_first_in_lex(z->p, r);
    else
        it->pos = reverse ? zsl_last_in_lex(z->p, r) : zsl_first_in_lex(z->p, r);
}

void zset_iter_skip(zset_iter_t *it, size_t n)
{
    if (!it->pos || !n) return;
    if (it->z->h.enc == ENC_LISTPACK) {
        const lp_t *lp = it->z->p;
        const uint8_t *p = it->pos;
        zset_entry_t e;
        while (p && n--) p = lp_step(lp, p, lp_decode(p, &e), it->reverse);
        it->pos = p;
        return;
    }
    const zsl_t *sl = it->z->p;
    const zsl_node_t *x = it->pos;
    if (n <= 16) {
        while (x && n--) x = it->reverse ? x->backward : fwd(x, 0);
        it->pos = x;
        return;
    }
    size_t rank = zsl_node_rank(sl, x); /* jump by rank: O(log n) */
    if (it->reverse)
        it->pos = n >= rank ? NULL : zsl_by_rank(sl, rank - n);
    else
        it->pos = n > sl->length - rank ? NULL : zsl_by_rank(sl, rank + n);
}

static int iter_in_bound(const zset_iter_t *it, const zset_entry_t *e)
{
    if (it->bound == 1)
        return it->reverse ? zset_score_gte_min(e->score, &it->range)
                           : zset_score_lte_max(e->score, &it->range);
    if (it->bound == 2)
        return it->reverse ? zset_lex_gte_min(e->member, e->len, &it->lex)
                           : zset_lex_lte_max(e->member, e->len, &it->lex);
    return 1;
}

int zset_iter_next(zset_iter_t *it, zset_entry_t *e)
{
    if (!it->pos) return 0;
    const void *next;
    if (it->z->h.enc == ENC_LISTPACK) {
        const uint8_t *p = it->pos;
        next = lp_step(it->z->p, p, lp_decode(p, e), it->reverse);
    } else {
        const zsl_node_t *x = it->pos;
        node_entry(x, e);
        next = it->reverse ? (const void *)x->backward : (const void *)fwd(x, 0);
    }
    if (!iter_in_bound(it, e)) {
        it->pos = NULL;
        return 0;
    }
    it->pos = next;
    return 1;
}

/* Entries of a skiplist within a score range (r) or lex range (lr), by the ranks of the first
 * and last entries in range, each found in one descent that sums the spans it crosses. */
static size_t zsl_count(const zsl_t *sl, const zset_range_t *r, const zset_lex_range_t *lr)
{
#define GTE_MIN(x)                                                                                 \
    (r ? zset_score_gte_min((x)->score, r) : zset_lex_gte_min((x)->member, nlen(x), lr))
#define LTE_MAX(x)                                                                                 \
    (r ? zset_score_lte_max((x)->score, r) : zset_lex_lte_max((x)->member, nlen(x), lr))
    if (r ? !zsl_in_range(sl, r) : !zsl_in_lex_range(sl, lr)) return 0;
    const zsl_node_t *p = sl->header, *f;
    size_t before = 0, last = 0;
    for (int i = sl->level - 1; i >= 0; i--) {
        while ((f = fwd(p, i)) && !GTE_MIN(f)) {
            before += LV(p)[i].span;
            p = f;
        }
    }
    f = fwd(p, 0);
    if (!f || !LTE_MAX(f)) return 0;
    p = sl->header;
    for (int i = sl->level - 1; i >= 0; i--) {
        while ((f = fwd(p, i)) && LTE_MAX(f)) {
            last += LV(p)[i].span;
            p = f;
        }
    }
    if (p == sl->header || !GTE_MIN(p) || last <= before) return 0;
    return last - before;
#undef GTE_MIN
#undef LTE_MAX
}

size_t zset_count_range(const zset_t *z, const zset_range_t *r)
{
    if (z->h.enc == ENC_SKIPLIST) return zsl_count(z->p, r, NULL);
    zset_iter_t it;
    zset_entry_t e;
    size_t n = 0;
    zset_iter_score(&it, z, r, 0);
    while (zset_iter_next(&it, &e)) n++;
    return n;
}

size_t zset_count_lex(const zset_t *z, const zset_lex_range_t *r)
{
    if (z->h.enc == ENC_SKIPLIST) return zsl_count(z->p, NULL, r);
    zset_iter_t it;
    zset_entry_t e;
    size_t n = 0;
    zset_iter_lex(&it, z, r, 0);
    while (zset_iter_next(&it, &e)) n++;
    return n;
}

size_t zset_delete_rank(zset_t *z, size_t start, size_t end)
{
    assert(start <= end && end < zset_length(z));
    if (z->h.enc == ENC_LISTPACK) {
        const lp_t *lp = z->p;
        lp_delete(z, (size_t)(lp_seek(lp, start) - lp->data), end - start + 1);
        return end - start + 1;
    }
    return zsl_delete_rank(z->p, start + 1, end + 1);
}

size_t zset_delete_range(zset_t *z, const zset_range_t *r)
{
    if (z->h.enc == ENC_LISTPACK) return lp_delete_run(z, lp_first_in_range(z->p, r), r, NULL);
    return zsl_delete_range(z->p, r);
}

size_t zset_delete_lex(zset_t *z, const zset_lex_range_t *r)
{
    if (z->h.enc == ENC_LISTPACK) return lp_delete_run(z, lp_first_in_lex(z->p, r), NULL, r);
    return zsl_delete_lex(z->p, r);
}

/* ------------------------------------------------------------------------------------------
 * ZSCAN
 * ------------------------------------------------------------------------------------------ */

typedef struct scan_ctx {
    zset_scan_fn *fn;
    void *ud;
} scan_ctx_t;

static void scan_node(void *ud, dict_node_t *n)
{
    scan_ctx_t *ctx = ud;
    zset_entry_t e;
    node_entry((const zsl_node_t *)n, &e);
    ctx->fn(ctx->ud, &e);
}

uint64_t zset_scan(const zset_t *z, uint64_t cursor, zset_scan_fn *fn, void *ud)
{
    if (z->h.enc == ENC_LISTPACK) {
        const lp_t *lp = z->p;
        const uint8_t *p = lp->data, *end = lp_end(lp);
        while (p < end) {
            zset_entry_t e;
            p = lp_decode(p, &e);
            fn(ud, &e);
        }
        return 0;
    }
    scan_ctx_t ctx = {fn, ud};
    zsl_t *sl = z->p;
    return dict_scan(&sl->dict, cursor, scan_node, &ctx);
}

/* ------------------------------------------------------------------------------------------
 * obj_types registration
 * ------------------------------------------------------------------------------------------ */

static void ops_free(obj_t *o)
{
    zset_free((zset_t *)o);
}

static obj_t *ops_dup(const obj_t *o)
{
    return &zset_dup((const zset_t *)o)->h;
}

static size_t ops_memory(const obj_t *o)
{
    return zset_memory((const zset_t *)o);
}

static size_t ops_length(const obj_t *o)
{
    return zset_length((const zset_t *)o);
}

static const obj_ops_t zset_ops = {ops_free, ops_dup, ops_memory, ops_length};

__attribute__((constructor)) static void zset_register(void)
{
    obj_types[OBJ_ZSET] = &zset_ops;
}
