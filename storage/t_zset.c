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
 * Tree (ENC_SKIPLIST, the name Redis reports): an order-statistic B+ tree keyed by (score,
 * member) plus a dict from member to node. A member node is one allocation:
 *
 *   dict_node_t (next, hash, aux = member length) | score | member bytes
 *
 * Leaves hold sorted arrays of scores and node pointers and are linked both ways, so a descent
 * compares scores read from the node it is in and touches a member only on equal scores.
 * Inner nodes hold per child its first entry (score and node: the separator), the number of
 * entries under it (rank, by-rank and range counts in O(log n)) and the pointer. Invariants:
 * separator i >= 1 of an inner node is exactly the first entry of child i's subtree (slot 0
 * is never read), so a separator always names a live node; every inner node but the root has
 * at least two children and the root either is a leaf or has two; only the root leaf can be
 * empty. A full leaf spreads into a sibling with room or splits together with a full sibling
 * into three (B*-tree), so random insertion fills leaves to ~87%; a leaf or inner node below
 * half full after a deletion merges with or borrows from a sibling, and emptied nodes are
 * freed. Sorted input (conversion, dup, zset_from_sorted) is built bottom-up in linear time
 * with evenly full nodes; ascending or descending insertion (RDB loading) keeps full nodes.
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
 * B+ tree encoding
 * ------------------------------------------------------------------------------------------ */

typedef struct znode {
    dict_node_t dn; /* dn.aux: member length */
    double score;
    char member[];
} znode_t;

/* Sizes measured with 100k random inserts: 62 (a 1 KiB leaf) used 2 bytes a member less than
 * 30 at the same speed; an inner node fills a 512-byte jemalloc class. */
#define LEAF_CAP 62
#define LEAF_MIN (LEAF_CAP / 2)
#define INNER_CAP 15
#define INNER_MIN ((INNER_CAP + 1) / 2)
#define BT_MAXDEPTH 48

typedef struct leaf {
    struct leaf *prev, *next;
    uint32_t n;
    double score[LEAF_CAP];
    znode_t *node[LEAF_CAP];
} leaf_t;

/* score[i]/key[i] (i >= 1) is exactly the first entry of child i's subtree; slot 0 is not
 * read. count[i] is the number of entries under child i. */
typedef struct inner {
    uint32_t n;
    double score[INNER_CAP];
    znode_t *key[INNER_CAP];
    size_t count[INNER_CAP];
    void *child[INNER_CAP];
} inner_t;

typedef struct zbt {
    dict_t dict;
    void *root;   /* a leaf when height is 0 */
    leaf_t *head; /* first and last leaf */
    leaf_t *tail;
    size_t length;
    size_t leaves, inners; /* node counts, for zset_memory */
    int height;            /* inner levels above the leaves */
} zbt_t;

_Static_assert(sizeof(leaf_t) <= 1024 && sizeof(leaf_t) > 1024 - 16, "a leaf fills 1 KiB");
_Static_assert(sizeof(inner_t) <= 512 && sizeof(inner_t) > 512 - 32, "an inner node fills 512");

/* The inner nodes crossed by a descent and the child index taken in each (0 is the root). */
typedef struct bt_path {
    inner_t *in[BT_MAXDEPTH];
    unsigned idx[BT_MAXDEPTH];
} bt_path_t;

static inline size_t nlen(const znode_t *n)
{
    return n->dn.aux;
}

static const void *zbt_dict_key(const dict_node_t *n, size_t *len)
{
    *len = n->aux;
    return ((const znode_t *)n)->member;
}

static void zbt_dict_free(dict_node_t *n, void *ud)
{
    (void)ud;
    xfree(n);
}

/* The dict owns the member nodes for freeing: zbt_free() clears it. */
static const dict_type_t zbt_dict_type = {zbt_dict_key, zbt_dict_free};

/* A member node; h is dict_hash(m, len). */
static znode_t *znode_new(double score, const void *m, size_t len, uint32_t h)
{
    assert(len <= UINT32_MAX);
    znode_t *n = xmalloc(sizeof(znode_t) + len);
    n->dn.next = NULL;
    n->dn.hash = h;
    n->dn.aux = (uint32_t)len;
    n->score = score;
    if (len) memcpy(n->member, m, len);
    return n;
}

static leaf_t *leaf_new(zbt_t *t)
{
    leaf_t *l = xmalloc(sizeof(leaf_t));
    l->prev = l->next = NULL;
    l->n = 0;
    t->leaves++;
    return l;
}

static inner_t *inner_new(zbt_t *t)
{
    inner_t *in = xmalloc(sizeof(inner_t));
    in->n = 0;
    in->key[0] = NULL;
    in->score[0] = 0;
    t->inners++;
    return in;
}

static zbt_t *zbt_new(void)
{
    zbt_t *t = xmalloc(sizeof(zbt_t));
    dict_init(&t->dict, &zbt_dict_type);
    t->length = 0;
    t->leaves = t->inners = 0;
    t->height = 0;
    t->root = t->head = t->tail = leaf_new(t);
    return t;
}

static void free_subtree(void *x, int height)
{
    if (height) {
        inner_t *in = x;
        for (unsigned i = 0; i < in->n; i++) free_subtree(in->child[i], height - 1);
    }
    xfree(x);
}

static void zbt_free(zbt_t *t)
{
    free_subtree(t->root, t->height);
    dict_clear(&t->dict, NULL);
    xfree(t);
}

/* ---- probes: monotone predicates over (score, member), false then true in set order ---- */

enum { P_KEY_GT, P_KEY_GE, P_SCORE_GE_MIN, P_SCORE_GT_MAX, P_LEX_GE_MIN, P_LEX_GT_MAX };

typedef struct probe {
    int kind;
    double s; /* P_KEY_*: the key */
    const char *m;
    size_t len;
    const zset_range_t *r;
    const zset_lex_range_t *lr;
} probe_t;

static inline probe_t probe_key(int kind, double s, const char *m, size_t len)
{
    return (probe_t){.kind = kind, .s = s, .m = m, .len = len};
}

static inline int probe_hit(const probe_t *p, double s, const znode_t *x)
{
    switch (p->kind) {
    case P_KEY_GT:
        return s > p->s || (s == p->s && mem_cmp(x->member, nlen(x), p->m, p->len) > 0);
    case P_KEY_GE:
        return s > p->s || (s == p->s && mem_cmp(x->member, nlen(x), p->m, p->len) >= 0);
    case P_SCORE_GE_MIN:
        return zset_score_gte_min(s, p->r);
    case P_SCORE_GT_MAX:
        return !zset_score_lte_max(s, p->r);
    case P_LEX_GE_MIN:
        return zset_lex_gte_min(x->member, nlen(x), p->lr);
    default:
        return !zset_lex_lte_max(x->member, nlen(x), p->lr);
    }
}

/* lo plus the number of scores in sc[lo, hi) below s (at most s if incl), counted without
 * branches: a node's scores are a few contiguous cache lines, cheaper to scan than to bisect
 * with mispredicted jumps. */
static inline unsigned count_below(const double *sc, unsigned lo, unsigned hi, double s, int incl)
{
    unsigned c = lo;
    if (incl)
        for (unsigned j = lo; j < hi; j++) c += sc[j] <= s;
    else
        for (unsigned j = lo; j < hi; j++) c += sc[j] < s;
    return c;
}

/* First index in [lo, hi) where p hits (hi if none). Score probes and key probes with distinct
 * scores read only the scores; members are compared by bisection among equal scores. */
static inline unsigned first_hit(const probe_t *p, const double *sc, znode_t *const *nd,
                                 unsigned lo, unsigned hi)
{
    switch (p->kind) {
    case P_KEY_GT:
    case P_KEY_GE:
        lo = count_below(sc, lo, hi, p->s, 0);
        if (lo == hi || sc[lo] != p->s) return lo;
        hi = count_below(sc, lo, hi, p->s, 1);
        break;
    case P_SCORE_GE_MIN:
        return count_below(sc, lo, hi, p->r->min, p->r->minex);
    case P_SCORE_GT_MAX:
        return count_below(sc, lo, hi, p->r->max, !p->r->maxex);
    }
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (probe_hit(p, sc[mid], nd[mid]))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Descends to the first entry where p hits and returns its 0-based rank (the length if none).
 * *lf and *idx name the entry; *idx may be (*lf)->n, meaning the next leaf's first entry
 * (both may be NULL when only the rank is wanted). path, when not NULL, gets the inner nodes
 * crossed. */
static size_t bt_seek(const zbt_t *t, const probe_t *p, bt_path_t *path, leaf_t **lf, unsigned *idx)
{
    void *x = t->root;
    size_t rank = 0;
    for (int d = 0; d < t->height; d++) {
        inner_t *in = x;
        unsigned i = first_hit(p, in->score, in->key, 1, in->n) - 1;
        for (unsigned j = 0; j < i; j++) rank += in->count[j];
        if (path) {
            path->in[d] = in;
            path->idx[d] = i;
        }
        x = in->child[i];
    }
    leaf_t *l = x;
    unsigned i = first_hit(p, l->score, l->node, 0, l->n);
    if (lf) *lf = l;
    if (idx) *idx = i;
    return rank + i;
}

/* The leaf holding 0-based rank (< length) and the index there; path as bt_seek's. */
static leaf_t *bt_at(const zbt_t *t, size_t rank, bt_path_t *path, unsigned *idx)
{
    assert(rank < t->length);
    void *x = t->root;
    for (int d = 0; d < t->height; d++) {
        inner_t *in = x;
        unsigned i = 0;
        while (rank >= in->count[i]) rank -= in->count[i++];
        assert(i < in->n);
        if (path) {
            path->in[d] = in;
            path->idx[d] = i;
        }
        x = in->child[i];
    }
    *idx = (unsigned)rank;
    return x;
}

/* Moves (l, i) with i == l->n on to the next leaf's first entry; NULL at the end. */
static inline leaf_t *pos_norm(leaf_t *l, unsigned *i)
{
    if (*i < l->n) return l;
    *i = 0;
    return l->next;
}

/* The entry before (l, i), i <= l->n; NULL if none. */
static inline leaf_t *pos_prev(leaf_t *l, unsigned *i)
{
    if (*i > 0) {
        (*i)--;
        return l;
    }
    l = l->prev;
    if (l) *i = l->n - 1;
    return l;
}

/* 0-based rank of x, which is in the tree. */
static size_t bt_rank(const zbt_t *t, const znode_t *x)
{
    probe_t p = probe_key(P_KEY_GE, x->score, x->member, nlen(x));
    return bt_seek(t, &p, NULL, NULL, NULL);
}

/* Finds x: fills path, returns its leaf and *idx. */
static leaf_t *bt_find(const zbt_t *t, const znode_t *x, bt_path_t *path, unsigned *idx)
{
    probe_t p = probe_key(P_KEY_GT, x->score, x->member, nlen(x));
    leaf_t *l;
    bt_seek(t, &p, path, &l, idx);
    assert(*idx > 0 && l->node[*idx - 1] == x);
    (*idx)--;
    return l;
}

/* After the first entry under path's node at depth depth changed to (s, k), updates the one
 * separator that names it: the first ancestor slot that is not a child 0. */
static void fix_min(bt_path_t *path, int depth, double s, znode_t *k)
{
    for (int d = depth - 1; d >= 0; d--) {
        unsigned i = path->idx[d];
        if (i > 0) {
            path->in[d]->score[i] = s;
            path->in[d]->key[i] = k;
            return;
        }
    }
}

/* ---- insertion ---- */

static void inner_put(inner_t *in, unsigned i, double s, znode_t *k, size_t count, void *child)
{
    unsigned tail = in->n - i;
    memmove(in->score + i + 1, in->score + i, tail * sizeof(double));
    memmove(in->key + i + 1, in->key + i, tail * sizeof(znode_t *));
    memmove(in->count + i + 1, in->count + i, tail * sizeof(size_t));
    memmove(in->child + i + 1, in->child + i, tail * sizeof(void *));
    in->score[i] = s;
    in->key[i] = k;
    in->count[i] = count;
    in->child[i] = child;
    in->n++;
}

static size_t inner_total(const inner_t *in)
{
    size_t n = 0;
    for (unsigned i = 0; i < in->n; i++) n += in->count[i];
    return n;
}

/* Splits a full inner node that takes a new child at slot i; returns the new right node.
 * A node on the tree's right (left) edge taking a child at its end (slot 1) keeps its full
 * side, so ascending (descending) insertion, as RDB loading does, fills nodes. */
static inner_t *inner_split(zbt_t *t, inner_t *in, unsigned i, double s, znode_t *k, size_t count,
                            void *child, int right_edge, int left_edge)
{
    double ts[INNER_CAP + 1];
    znode_t *tk[INNER_CAP + 1];
    size_t tc[INNER_CAP + 1];
    void *tp[INNER_CAP + 1];
    for (unsigned j = 0, o = 0; j <= INNER_CAP; j++) {
        if (j == i) {
            ts[j] = s, tk[j] = k, tc[j] = count, tp[j] = child;
            continue;
        }
        ts[j] = in->score[o], tk[j] = in->key[o], tc[j] = in->count[o], tp[j] = in->child[o];
        o++;
    }
    unsigned total = INNER_CAP + 1, keep = total / 2;
    if (right_edge && i == INNER_CAP) keep = INNER_CAP - 1;
    if (left_edge && i == 1) keep = 2;
    inner_t *r = inner_new(t);
    memcpy(in->score, ts, keep * sizeof(double));
    memcpy(in->key, tk, keep * sizeof(znode_t *));
    memcpy(in->count, tc, keep * sizeof(size_t));
    memcpy(in->child, tp, keep * sizeof(void *));
    in->n = keep;
    r->n = total - keep;
    memcpy(r->score, ts + keep, r->n * sizeof(double));
    memcpy(r->key, tk + keep, r->n * sizeof(znode_t *));
    memcpy(r->count, tc + keep, r->n * sizeof(size_t));
    memcpy(r->child, tp + keep, r->n * sizeof(void *));
    return r;
}

/* The child at path depth d's slot was split into left (lcount entries) and right (whose
 * first entry is (s, k)); links right into the parents, splitting them as needed. */
static void bt_grow(zbt_t *t, bt_path_t *path, int d, void *left, size_t lcount, void *right,
                    double s, znode_t *k, size_t rcount)
{
    for (;; d--) {
        if (d < 0) {
            inner_t *root = inner_new(t);
            inner_put(root, 0, 0, NULL, lcount, left);
            inner_put(root, 1, s, k, rcount, right);
            t->root = root;
            t->height++;
            assert(t->height < BT_MAXDEPTH);
            return;
        }
        inner_t *in = path->in[d];
        unsigned i = path->idx[d];
        in->count[i] = lcount;
        if (in->n < INNER_CAP) {
            inner_put(in, i + 1, s, k, rcount, right);
            return;
        }
        int right_edge = 1, left_edge = 1;
        for (int e = 0; e < d; e++) {
            right_edge &= path->idx[e] == path->in[e]->n - 1;
            left_edge &= path->idx[e] == 0;
        }
        inner_t *r = inner_split(t, in, i + 1, s, k, rcount, right, right_edge, left_edge);
        left = in;
        right = r;
        lcount = inner_total(in);
        rcount = inner_total(r);
        s = r->score[0];
        k = r->key[0];
    }
}

static void leaf_put(leaf_t *l, unsigned i, double s, znode_t *x)
{
    memmove(l->score + i + 1, l->score + i, (l->n - i) * sizeof(double));
    memmove(l->node + i + 1, l->node + i, (l->n - i) * sizeof(znode_t *));
    l->score[i] = s;
    l->node[i] = x;
    l->n++;
}

/* The entries of leaf a, then of b (NULL: none), with x inserted at index i of that
 * concatenation, into ts/tn (room for a->n + b->n + 1); returns how many. */
static unsigned leaf_gather(double *ts, znode_t **tn, const leaf_t *a, const leaf_t *b,
                            unsigned i, znode_t *x)
{
    unsigned n = 0;
    for (const leaf_t *l = a; l; l = l == a ? b : NULL) {
        memcpy(ts + n, l->score, l->n * sizeof(double));
        memcpy(tn + n, l->node, l->n * sizeof(znode_t *));
        n += l->n;
    }
    memmove(ts + i + 1, ts + i, (n - i) * sizeof(double));
    memmove(tn + i + 1, tn + i, (n - i) * sizeof(znode_t *));
    ts[i] = x->score;
    tn[i] = x;
    return n + 1;
}

/* Leaf l holds ts/tn[0..n) from now on. */
static void leaf_fill(leaf_t *l, const double *ts, znode_t *const *tn, unsigned n)
{
    memcpy(l->score, ts, n * sizeof(double));
    memcpy(l->node, tn, n * sizeof(znode_t *));
    l->n = n;
}

/* Links new leaf r after l. */
static void leaf_link_after(zbt_t *t, leaf_t *l, leaf_t *r)
{
    r->prev = l;
    r->next = l->next;
    if (l->next)
        l->next->prev = r;
    else
        t->tail = r;
    l->next = r;
}

/* par's children j and j + 1 are now leaves a and b as they are: their counts and b's key. */
static void par_note_pair(inner_t *par, unsigned j, const leaf_t *a, const leaf_t *b)
{
    par->count[j] = a->n;
    par->count[j + 1] = b->n;
    par->score[j + 1] = b->score[0];
    par->key[j + 1] = b->node[0];
}

/* Splits full leaf l taking x at i; returns the new right leaf, linked after l. */
static leaf_t *leaf_split(zbt_t *t, leaf_t *l, unsigned i, znode_t *x)
{
    double ts[LEAF_CAP + 1];
    znode_t *tn[LEAF_CAP + 1];
    unsigned total = leaf_gather(ts, tn, l, NULL, i, x), keep = total / 2;
    if (!l->next && i == LEAF_CAP) keep = LEAF_CAP; /* appending */
    if (!l->prev && i == 0) keep = 1;               /* prepending */
    leaf_t *r = leaf_new(t);
    leaf_fill(l, ts, tn, keep);
    leaf_fill(r, ts + keep, tn + keep, total - keep);
    leaf_link_after(t, l, r);
    return r;
}

/* Spreads the entries of siblings a and b (par's children j and j + 1) plus x, at index i of
 * their concatenation, evenly over both (a->n + b->n < 2 * LEAF_CAP). */
static void leaf_spread(inner_t *par, unsigned j, leaf_t *a, leaf_t *b, unsigned i, znode_t *x)
{
    double ts[2 * LEAF_CAP];
    znode_t *tn[2 * LEAF_CAP];
    assert(a->n + b->n + 1 <= 2 * LEAF_CAP);
    unsigned total = leaf_gather(ts, tn, a, b, i, x), keep = (total + 1) / 2;
    leaf_fill(a, ts, tn, keep);
    leaf_fill(b, ts + keep, tn + keep, total - keep);
    par_note_pair(par, j, a, b);
}

/* Siblings a and b (par's children j and j + 1), both full, and x at index i of their
 * concatenation become three leaves of about 2/3 each: a, b and a new leaf after b, which is
 * returned (the caller links it into par as child j + 2). */
static leaf_t *leaf_split3(zbt_t *t, inner_t *par, unsigned j, leaf_t *a, leaf_t *b, unsigned i,
                           znode_t *x)
{
    double ts[2 * LEAF_CAP + 1];
    znode_t *tn[2 * LEAF_CAP + 1];
    unsigned total = leaf_gather(ts, tn, a, b, i, x), third = total / 3;
    leaf_t *c = leaf_new(t);
    leaf_fill(a, ts, tn, third);
    leaf_fill(b, ts + third, tn + third, third);
    leaf_fill(c, ts + 2 * third, tn + 2 * third, total - 2 * third);
    leaf_link_after(t, b, c);
    par_note_pair(par, j, a, b);
    return c;
}

/* Full leaf l (child pi of the last inner node on path) takes x at index i: spreads into the
 * sibling with the most room, or splits l and a full sibling into three (B*-tree style:
 * random insertion then fills leaves to about 80% instead of 69%). Returns 0 if l has no
 * sibling. */
static int leaf_overflow(zbt_t *t, bt_path_t *path, leaf_t *l, unsigned i, znode_t *x)
{
    int d = t->height - 1;
    inner_t *par = path->in[d];
    unsigned pi = path->idx[d];
    leaf_t *a = pi > 0 ? par->child[pi - 1] : NULL;
    leaf_t *b = pi + 1 < par->n ? par->child[pi + 1] : NULL;
    unsigned an = a ? a->n : LEAF_CAP, bn = b ? b->n : LEAF_CAP;
    if (bn < LEAF_CAP && bn <= an) {
        leaf_spread(par, pi, l, b, i, x);
    } else if (an < LEAF_CAP) {
        leaf_spread(par, pi - 1, a, l, a->n + i, x);
    } else if (b || a) {
        unsigned j = b ? pi : pi - 1;
        leaf_t *c =
            b ? leaf_split3(t, par, j, l, b, i, x) : leaf_split3(t, par, j, a, l, a->n + i, x);
        b = par->child[j + 1];
        path->idx[d] = j + 1;
        bt_grow(t, path, d, b, b->n, c, c->score[0], c->node[0], c->n);
    } else {
        return 0;
    }
    return 1;
}

/* Links x (not in the tree; x->score set) at its place. */
static void bt_insert(zbt_t *t, znode_t *x)
{
    bt_path_t path;
    leaf_t *l;
    unsigned i;
    probe_t p = probe_key(P_KEY_GT, x->score, x->member, nlen(x));
    bt_seek(t, &p, &path, &l, &i);
    assert(i > 0 || !l->prev); /* a separator never needs to change on insertion */
    for (int d = 0; d < t->height; d++) path.in[d]->count[path.idx[d]]++;
    t->length++;
    if (l->n < LEAF_CAP) {
        leaf_put(l, i, x->score, x);
        return;
    }
    int edge = (!l->next && i == LEAF_CAP) || (!l->prev && i == 0);
    if (!edge && t->height && leaf_overflow(t, &path, l, i, x)) return;
    leaf_t *r = leaf_split(t, l, i, x);
    bt_grow(t, &path, t->height - 1, l, l->n, r, r->score[0], r->node[0], r->n);
}

/* ---- deletion ---- */

static void inner_cut(inner_t *in, unsigned i)
{
    unsigned tail = in->n - i - 1;
    memmove(in->score + i, in->score + i + 1, tail * sizeof(double));
    memmove(in->key + i, in->key + i + 1, tail * sizeof(znode_t *));
    memmove(in->count + i, in->count + i + 1, tail * sizeof(size_t));
    memmove(in->child + i, in->child + i + 1, tail * sizeof(void *));
    in->n--;
}

/* Moves k children from the front of b to the end of a (siblings; (s, sk) is b's separator
 * in their parent, which becomes the moved first child's key); returns the entries moved. */
static size_t inner_shift_left(inner_t *a, inner_t *b, unsigned k, double s, znode_t *sk)
{
    b->score[0] = s;
    b->key[0] = sk;
    size_t moved = 0;
    for (unsigned j = 0; j < k; j++) {
        a->score[a->n + j] = b->score[j];
        a->key[a->n + j] = b->key[j];
        a->count[a->n + j] = b->count[j];
        a->child[a->n + j] = b->child[j];
        moved += b->count[j];
    }
    a->n += k;
    b->n -= k;
    memmove(b->score, b->score + k, b->n * sizeof(double));
    memmove(b->key, b->key + k, b->n * sizeof(znode_t *));
    memmove(b->count, b->count + k, b->n * sizeof(size_t));
    memmove(b->child, b->child + k, b->n * sizeof(void *));
    return moved;
}

/* Moves k children from the end of a to the front of b; (s, sk) as above. */
static size_t inner_shift_right(inner_t *a, inner_t *b, unsigned k, double s, znode_t *sk)
{
    b->score[0] = s;
    b->key[0] = sk;
    memmove(b->score + k, b->score, b->n * sizeof(double));
    memmove(b->key + k, b->key, b->n * sizeof(znode_t *));
    memmove(b->count + k, b->count, b->n * sizeof(size_t));
    memmove(b->child + k, b->child, b->n * sizeof(void *));
    size_t moved = 0;
    a->n -= k;
    for (unsigned j = 0; j < k; j++) {
        b->score[j] = a->score[a->n + j];
        b->key[j] = a->key[a->n + j];
        b->count[j] = a->count[a->n + j];
        b->child[j] = a->child[a->n + j];
        moved += b->count[j];
    }
    b->n += k;
    return moved;
}

static void bt_shrink_root(zbt_t *t)
{
    while (t->height > 0 && ((inner_t *)t->root)->n == 1) {
        inner_t *old = t->root;
        t->root = old->child[0];
        t->height--;
        t->inners--;
        xfree(old);
    }
}

/* The inner node at path depth d (>= 1) has fewer than INNER_MIN children: merges it with or
 * borrows from a sibling, then goes on up if the parent lost a child. */
static void inner_rebalance(zbt_t *t, bt_path_t *path, int d)
{
    while (d > 0 && path->in[d]->n < INNER_MIN) {
        inner_t *gp = path->in[d - 1];
        unsigned i = path->idx[d - 1], j = i + 1 < gp->n ? i + 1 : i; /* j: right's slot */
        inner_t *a = gp->child[j - 1], *b = gp->child[j];
        if (a->n + b->n <= INNER_CAP) {
            inner_shift_left(a, b, b->n, gp->score[j], gp->key[j]);
            gp->count[j - 1] += gp->count[j];
            inner_cut(gp, j);
            xfree(b);
            t->inners--;
            d--;
            continue;
        }
        unsigned want = (a->n + b->n) / 2;
        if (a->n < want) {
            size_t m = inner_shift_left(a, b, want - a->n, gp->score[j], gp->key[j]);
            gp->count[j - 1] += m;
            gp->count[j] -= m;
        } else {
            size_t m = inner_shift_right(a, b, a->n - want, gp->score[j], gp->key[j]);
            gp->count[j - 1] -= m;
            gp->count[j] += m;
        }
        gp->score[j] = b->score[0];
        gp->key[j] = b->key[0];
        return;
    }
    if (d == 0) bt_shrink_root(t);
}

/* Leaf l (reached through path) has fewer than LEAF_MIN entries: merges it with or borrows
 * from a sibling under the same parent. */
static void leaf_rebalance(zbt_t *t, bt_path_t *path, leaf_t *l)
{
    int d = t->height - 1;
    inner_t *par = path->in[d];
    unsigned i = path->idx[d], j = i + 1 < par->n ? i + 1 : i;
    leaf_t *a = par->child[j - 1], *b = par->child[j];
    assert(j > 0 && (a == l || b == l));
    if (a->n + b->n <= LEAF_CAP) {
        memcpy(a->score + a->n, b->score, b->n * sizeof(double));
        memcpy(a->node + a->n, b->node, b->n * sizeof(znode_t *));
        a->n += b->n;
        a->next = b->next;
        if (b->next)
            b->next->prev = a;
        else
            t->tail = a;
        xfree(b);
        t->leaves--;
        par->count[j - 1] += par->count[j];
        inner_cut(par, j);
        if (d == 0)
            bt_shrink_root(t);
        else
            inner_rebalance(t, path, d);
        return;
    }
    unsigned want = (a->n + b->n) / 2;
    if (a->n < want) {
        unsigned k = want - a->n;
        memcpy(a->score + a->n, b->score, k * sizeof(double));
        memcpy(a->node + a->n, b->node, k * sizeof(znode_t *));
        memmove(b->score, b->score + k, (b->n - k) * sizeof(double));
        memmove(b->node, b->node + k, (b->n - k) * sizeof(znode_t *));
        a->n += k;
        b->n -= k;
    } else {
        unsigned k = a->n - want;
        memmove(b->score + k, b->score, b->n * sizeof(double));
        memmove(b->node + k, b->node, b->n * sizeof(znode_t *));
        memcpy(b->score, a->score + want, k * sizeof(double));
        memcpy(b->node, a->node + want, k * sizeof(znode_t *));
        a->n -= k;
        b->n += k;
    }
    par_note_pair(par, j - 1, a, b);
}

/* Unlinks the m entries of l from index i on (path from the descent that found l); does not
 * free their nodes. */
static void bt_remove_at(zbt_t *t, bt_path_t *path, leaf_t *l, unsigned i, unsigned m)
{
    assert(i + m <= l->n);
    memmove(l->score + i, l->score + i + m, (l->n - i - m) * sizeof(double));
    memmove(l->node + i, l->node + i + m, (l->n - i - m) * sizeof(znode_t *));
    l->n -= m;
    t->length -= m;
    for (int d = 0; d < t->height; d++) path->in[d]->count[path->idx[d]] -= m;
    if (i == 0) {
        /* an emptied leaf takes its successor's first entry, which it gets by the merge */
        leaf_t *f = l->n ? l : l->next;
        if (f) fix_min(path, t->height, f->score[0], f->node[0]);
    }
    if (l->n < LEAF_MIN && t->height) leaf_rebalance(t, path, l);
}

static void bt_delete(zbt_t *t, znode_t *x)
{
    bt_path_t path;
    unsigned i;
    leaf_t *l = bt_find(t, x, &path, &i);
    bt_remove_at(t, &path, l, i, 1);
}

/* 1 if (s1, a) sorts before (s2, b). */
static inline int key_before(double s1, const znode_t *a, double s2, const znode_t *b)
{
    return s1 < s2 || (s1 == s2 && mem_cmp(a->member, nlen(a), b->member, nlen(b)) < 0);
}

/* Moves x, at index i of l, to its place for a new score when that place is inside l: the new
 * key lies between l's other first and last entries, or beyond them on the tree's edge. So a
 * small increment (a leaderboard's ZINCRBY) costs one descent and no rebalancing. Returns 0,
 * changing nothing, when the place may be in another leaf. */
static int leaf_move(zbt_t *t, bt_path_t *path, leaf_t *l, unsigned i, znode_t *x, double score)
{
    if (l->n < 2) return 0;
    unsigned f = i == 0 ? 1 : 0, g = i == l->n - 1 ? l->n - 2 : l->n - 1;
    if (l->prev && !key_before(l->score[f], l->node[f], score, x)) return 0;
    if (l->next && !key_before(score, x, l->score[g], l->node[g])) return 0;
    memmove(l->score + i, l->score + i + 1, (l->n - i - 1) * sizeof(double));
    memmove(l->node + i, l->node + i + 1, (l->n - i - 1) * sizeof(znode_t *));
    l->n--;
    probe_t p = probe_key(P_KEY_GT, score, x->member, nlen(x));
    unsigned j = first_hit(&p, l->score, l->node, 0, l->n);
    x->score = score;
    leaf_put(l, j, score, x);
    if (i == 0 || j == 0) fix_min(path, t->height, l->score[0], l->node[0]);
    return 1;
}

/* Gives x (in the tree) a new score: in place when its neighbours allow, else within its
 * leaf when it can, else by deletion and insertion. */
static void bt_update_score(zbt_t *t, znode_t *x, double score)
{
    bt_path_t path;
    unsigned i, pi, ni;
    leaf_t *l = bt_find(t, x, &path, &i);
    pi = i;
    ni = i + 1;
    leaf_t *pl = pos_prev(l, &pi), *nl = pos_norm(l, &ni);
    if ((!pl || key_before(pl->score[pi], pl->node[pi], score, x)) &&
        (!nl || key_before(score, x, nl->score[ni], nl->node[ni]))) {
        x->score = score;
        l->score[i] = score;
        if (i == 0) fix_min(&path, t->height, score, x);
        return;
    }
    if (leaf_move(t, &path, l, i, x, score)) return;
    bt_remove_at(t, &path, l, i, 1);
    x->score = score;
    bt_insert(t, x);
}

static znode_t *zbt_find(const zbt_t *t, const void *m, size_t len)
{
    return (znode_t *)dict_find((dict_t *)&t->dict, m, len, dict_hash(m, len));
}

/* ---- bulk building from sorted input, bottom-up in linear time ---- */

typedef struct bt_builder {
    zbt_t *t;
    leaf_t *cur;
    size_t n, groups, group; /* entries, leaves and the leaf being filled */
} bt_builder_t;

/* Entries of group g when n items are spread evenly over groups. */
static inline size_t group_size(size_t n, size_t groups, size_t g)
{
    return n / groups + (g < n % groups);
}

static void bt_build_begin(bt_builder_t *b, zbt_t *t, size_t n)
{
    assert(t->length == 0);
    b->t = t;
    b->cur = t->head;
    b->n = n;
    b->groups = n ? (n + LEAF_CAP - 1) / LEAF_CAP : 1;
    b->group = 0;
    dict_expand(&t->dict, n);
}

static void bt_build_push(bt_builder_t *b, double score, const void *m, size_t len)
{
    zbt_t *t = b->t;
    leaf_t *l = b->cur;
    if (l->n == group_size(b->n, b->groups, b->group)) {
        leaf_t *r = leaf_new(t);
        r->prev = l;
        l->next = r;
        t->tail = b->cur = l = r;
        b->group++;
    }
    znode_t *x = znode_new(score, m, len, dict_hash(m, len));
    l->score[l->n] = score;
    l->node[l->n++] = x;
    t->length++;
    dict_insert(&t->dict, &x->dn);
}

/* Builds the inner levels over the leaves, each level's nodes filled evenly. */
static void bt_build_end(bt_builder_t *b)
{
    zbt_t *t = b->t;
    assert(t->length == b->n);
    size_t cnt = t->leaves;
    if (cnt == 1) return;
    void **child = xmalloc(cnt * sizeof(void *));
    size_t *count = xmalloc(cnt * sizeof(size_t));
    double *score = xmalloc(cnt * sizeof(double));
    znode_t **key = xmalloc(cnt * sizeof(znode_t *));
    size_t k = 0;
    for (leaf_t *l = t->head; l; l = l->next, k++) {
        child[k] = l;
        count[k] = l->n;
        score[k] = l->score[0];
        key[k] = l->node[0];
    }
    while (cnt > 1) {
        size_t groups = (cnt + INNER_CAP - 1) / INNER_CAP, o = 0;
        for (size_t g = 0; g < groups; g++) {
            inner_t *in = inner_new(t);
            size_t sz = group_size(cnt, groups, g);
            for (size_t j = 0; j < sz; j++, o++)
                inner_put(in, (unsigned)j, score[o], key[o], count[o], child[o]);
            child[g] = in;
            count[g] = inner_total(in);
            score[g] = in->score[0];
            key[g] = in->key[0];
        }
        cnt = groups;
        t->height++;
    }
    t->root = child[0];
    xfree(child);
    xfree(count);
    xfree(score);
    xfree(key);
}

/* ---- range deletion ---- */

/* Deletes entries from 0-based rank on, at most max, while they pass the bound (r or lr when
 * not NULL), one leaf run at a time: O(k + k / LEAF_CAP * log n). */
static size_t bt_delete_run(zbt_t *t, size_t rank, size_t max, const zset_range_t *r,
                            const zset_lex_range_t *lr)
{
    size_t total = 0;
    while (total < max && rank < t->length) {
        bt_path_t path;
        unsigned i, m = 0;
        leaf_t *l = bt_at(t, rank, &path, &i);
        while (i + m < l->n && total + m < max) {
            const znode_t *x = l->node[i + m];
            if (r && !zset_score_lte_max(l->score[i + m], r)) break;
            if (lr && !zset_lex_lte_max(x->member, nlen(x), lr)) break;
            m++;
        }
        if (!m) break;
        for (unsigned j = 0; j < m; j++) {
            znode_t *x = l->node[i + j];
            dict_node_t *dn = dict_unlink(&t->dict, x->member, nlen(x), x->dn.hash);
            assert(dn == &x->dn);
            (void)dn;
            xfree(x);
        }
        bt_remove_at(t, &path, l, i, m);
        total += m;
    }
    dict_try_shrink(&t->dict);
    return total;
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

static zbt_t *lp_to_zbt(const lp_t *lp)
{
    zbt_t *t = zbt_new();
    bt_builder_t b;
    bt_build_begin(&b, t, lp->count);
    const uint8_t *p = lp->data, *end = lp_end(lp);
    while (p < end) {
        zset_entry_t e;
        p = lp_decode(p, &e);
        bt_build_push(&b, e.score, e.member, e.len);
    }
    bt_build_end(&b);
    return t;
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

static lp_t *zbt_to_lp(const zbt_t *t)
{
    size_t total = 0, body;
    for (const leaf_t *l = t->head; l; l = l->next)
        for (unsigned i = 0; i < l->n; i++)
            total += lp_entry_size(nlen(l->node[i]), score_kind(l->score[i]), &body);
    lp_t *lp = lp_new(total);
    uint8_t *p = lp->data;
    for (const leaf_t *l = t->head; l; l = l->next) {
        for (unsigned i = 0; i < l->n; i++) {
            const znode_t *x = l->node[i];
            int kind = score_kind(x->score);
            size_t size = lp_entry_size(nlen(x), kind, &body);
            lp_write(p, x->member, nlen(x), x->score, kind, body);
            p += size;
        }
    }
    lp->count = (uint32_t)t->length;
    lp->bytes = (uint32_t)total;
    return lp;
}

void zset_convert(zset_t *z, int enc)
{
    if (z->h.enc == enc) return;
    if (enc == ENC_SKIPLIST) {
        lp_t *lp = z->p;
        z->p = lp_to_zbt(lp);
        xfree(lp);
    } else {
        assert(enc == ENC_LISTPACK);
        zbt_t *t = z->p;
        z->p = zbt_to_lp(t);
        zbt_free(t);
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
    zbt_t *t = zbt_new();
    bt_builder_t b;
    bt_build_begin(&b, t, n);
    for (size_t i = 0; i < n; i++) bt_build_push(&b, v[i].score, v[i].member, v[i].len);
    bt_build_end(&b);
    return zset_alloc(ENC_SKIPLIST, t);
}

void zset_free(zset_t *z)
{
    if (!z) return;
    if (z->h.enc == ENC_LISTPACK)
        xfree(z->p);
    else
        zbt_free(z->p);
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
    const zbt_t *src = z->p;
    zbt_t *t = zbt_new();
    bt_builder_t b;
    bt_build_begin(&b, t, src->length);
    for (const leaf_t *l = src->head; l; l = l->next)
        for (unsigned i = 0; i < l->n; i++)
            bt_build_push(&b, l->score[i], l->node[i]->member, nlen(l->node[i]));
    bt_build_end(&b);
    return zset_alloc(ENC_SKIPLIST, t);
}

size_t zset_length(const zset_t *z)
{
    if (z->h.enc == ENC_LISTPACK) return ((const lp_t *)z->p)->count;
    return ((const zbt_t *)z->p)->length;
}

/* Tree nodes are counted exactly (all leaves share one size class, all inner nodes another);
 * member nodes are sampled from the first leaves when there are more than MEMORY_SAMPLES. */
size_t zset_memory(const zset_t *z)
{
    size_t total = alloc_size(z) + alloc_size(z->p);
    if (z->h.enc == ENC_LISTPACK) return total;
    const zbt_t *t = z->p;
    total += dict_buckets_bytes(&t->dict);
    total += t->leaves * alloc_size(t->head);
    if (t->height) total += t->inners * alloc_size(t->root);
    size_t nodes = 0, seen = 0;
    for (const leaf_t *l = t->head; l && seen < MEMORY_SAMPLES; l = l->next)
        for (unsigned i = 0; i < l->n && seen < MEMORY_SAMPLES; i++, seen++)
            nodes += alloc_size(l->node[i]);
    if (seen && seen < t->length) nodes = nodes / seen * t->length;
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

static int zbt_add(zset_t *z, const void *m, size_t len, double score, int flags, int *out,
                   double *newscore)
{
    zbt_t *t = z->p;
    uint32_t h = dict_hash(m, len);
    znode_t *x = (znode_t *)dict_find(&t->dict, m, len, h);
    if (x) {
        int rc = existing_rules(x->score, &score, flags, out);
        if (rc <= 0) return rc;
        if (newscore) *newscore = score;
        if (score != x->score) {
            bt_update_score(t, x, score);
            *out |= ZSET_OUT_UPDATED;
        }
        return 0;
    }
    if (flags & ZSET_IN_XX) {
        *out |= ZSET_OUT_NOP;
        return 0;
    }
    x = znode_new(score, m, len, h);
    bt_insert(t, x);
    dict_insert(&t->dict, &x->dn);
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
    return zbt_add(z, member, len, score, flags, out, newscore);
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
    zbt_t *t = z->p;
    znode_t *x = (znode_t *)dict_unlink(&t->dict, member, len, dict_hash(member, len));
    if (!x) return 0;
    bt_delete(t, x);
    xfree(x);
    dict_try_shrink(&t->dict);
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
    znode_t *x = zbt_find(z->p, member, len);
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
    } else {
        const zbt_t *t = z->p;
        znode_t *x = zbt_find(t, member, len);
        if (!x) return -1;
        rank = bt_rank(t, x);
    }
    return reverse ? (long long)(n - 1 - rank) : (long long)rank;
}

static void leaf_entry(const leaf_t *l, unsigned i, zset_entry_t *e)
{
    const znode_t *x = l->node[i];
    e->member = x->member;
    e->len = nlen(x);
    e->score = l->score[i];
}

void zset_entry_at(const zset_t *z, size_t rank, zset_entry_t *e)
{
    assert(rank < zset_length(z));
    if (z->h.enc == ENC_LISTPACK) {
        lp_decode(lp_seek(z->p, rank), e);
        return;
    }
    unsigned i;
    const leaf_t *l = bt_at(z->p, rank, NULL, &i);
    leaf_entry(l, i, e);
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
    it->idx = 0;
    it->reverse = reverse;
    it->bound = bound;
}

void zset_iter_rank(zset_iter_t *it, const zset_t *z, size_t rank, int reverse)
{
    iter_init(it, z, reverse, 0);
    size_t n = zset_length(z);
    if (rank >= n) return;
    size_t idx = reverse ? n - 1 - rank : rank;
    if (z->h.enc == ENC_LISTPACK) {
        it->pos = lp_seek(z->p, idx);
    } else {
        unsigned i;
        it->pos = bt_at(z->p, idx, NULL, &i);
        it->idx = i;
    }
}

/* Positions a tree iterator at the first entry where p hits (forward) or at the entry before
 * it (reverse); the caller checks the range's other end there. */
static void iter_seek(zset_iter_t *it, const probe_t *p)
{
    leaf_t *l;
    unsigned i;
    bt_seek(it->z->p, p, NULL, &l, &i);
    l = it->reverse ? pos_prev(l, &i) : pos_norm(l, &i);
    it->pos = l;
    it->idx = i;
}

void zset_iter_score(zset_iter_t *it, const zset_t *z, const zset_range_t *r, int reverse)
{
    iter_init(it, z, reverse, 1);
    it->range = *r;
    if (z->h.enc == ENC_LISTPACK) {
        it->pos = reverse ? lp_last_in_range(z->p, r) : lp_first_in_range(z->p, r);
        return;
    }
    if (range_empty(r)) return;
    probe_t p = {.kind = reverse ? P_SCORE_GT_MAX : P_SCORE_GE_MIN, .r = &it->range};
    iter_seek(it, &p);
    if (!it->pos) return;
    double s = ((const leaf_t *)it->pos)->score[it->idx];
    if (!(reverse ? zset_score_gte_min(s, r) : zset_score_lte_max(s, r))) it->pos = NULL;
}

void zset_iter_lex(zset_iter_t *it, const zset_t *z, const zset_lex_range_t *r, int reverse)
{
    iter_init(it, z, reverse, 2);
    it->lex = *r;
    if (z->h.enc == ENC_LISTPACK) {
        it->pos = reverse ? lp_last_in_lex(z->p, r) : lp_first_in_lex(z->p, r);
        return;
    }
    if (lex_range_empty(r)) return;
    probe_t p = {.kind = reverse ? P_LEX_GT_MAX : P_LEX_GE_MIN, .lr = &it->lex};
    iter_seek(it, &p);
    if (!it->pos) return;
    const znode_t *x = ((const leaf_t *)it->pos)->node[it->idx];
    if (!(reverse ? zset_lex_gte_min(x->member, nlen(x), r)
                  : zset_lex_lte_max(x->member, nlen(x), r)))
        it->pos = NULL;
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
    const zbt_t *t = it->z->p;
    const leaf_t *l = it->pos;
    if (it->reverse ? n <= it->idx : n < l->n - it->idx) { /* within the leaf */
        it->idx = it->reverse ? it->idx - n : it->idx + n;
        return;
    }
    size_t rank = bt_rank(t, l->node[it->idx]); /* jump by rank: O(log n) */
    unsigned i = 0;
    if (it->reverse)
        it->pos = n > rank ? NULL : bt_at(t, rank - n, NULL, &i);
    else
        it->pos = n >= t->length - rank ? NULL : bt_at(t, rank + n, NULL, &i);
    it->idx = i;
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
    unsigned i = it->idx;
    if (it->z->h.enc == ENC_LISTPACK) {
        const uint8_t *p = it->pos;
        next = lp_step(it->z->p, p, lp_decode(p, e), it->reverse);
    } else {
        leaf_t *l = (leaf_t *)it->pos;
        leaf_entry(l, i, e);
        if (it->reverse) {
            next = pos_prev(l, &i);
        } else {
            i++;
            next = pos_norm(l, &i);
        }
    }
    if (!iter_in_bound(it, e)) {
        it->pos = NULL;
        return 0;
    }
    it->pos = next;
    it->idx = i;
    return 1;
}

/* Entries of a tree within a score range (r) or lex range (lr): the difference of two ranks,
 * each found in one descent. */
static size_t zbt_count(const zbt_t *t, const zset_range_t *r, const zset_lex_range_t *lr)
{
    if (r ? range_empty(r) : lex_range_empty(lr)) return 0;
    probe_t lo = {.kind = r ? P_SCORE_GE_MIN : P_LEX_GE_MIN, .r = r, .lr = lr};
    probe_t hi = {.kind = r ? P_SCORE_GT_MAX : P_LEX_GT_MAX, .r = r, .lr = lr};
    size_t a = bt_seek(t, &lo, NULL, NULL, NULL), b = bt_seek(t, &hi, NULL, NULL, NULL);
    return b > a ? b - a : 0;
}

size_t zset_count_range(const zset_t *z, const zset_range_t *r)
{
    if (z->h.enc == ENC_SKIPLIST) return zbt_count(z->p, r, NULL);
    zset_iter_t it;
    zset_entry_t e;
    size_t n = 0;
    zset_iter_score(&it, z, r, 0);
    while (zset_iter_next(&it, &e)) n++;
    return n;
}

size_t zset_count_lex(const zset_t *z, const zset_lex_range_t *r)
{
    if (z->h.enc == ENC_SKIPLIST) return zbt_count(z->p, NULL, r);
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
    return bt_delete_run(z->p, start, end - start + 1, NULL, NULL);
}

size_t zset_delete_range(zset_t *z, const zset_range_t *r)
{
    if (z->h.enc == ENC_LISTPACK) return lp_delete_run(z, lp_first_in_range(z->p, r), r, NULL);
    if (range_empty(r)) return 0;
    probe_t p = {.kind = P_SCORE_GE_MIN, .r = r};
    return bt_delete_run(z->p, bt_seek(z->p, &p, NULL, NULL, NULL), SIZE_MAX, r, NULL);
}

size_t zset_delete_lex(zset_t *z, const zset_lex_range_t *r)
{
    if (z->h.enc == ENC_LISTPACK) return lp_delete_run(z, lp_first_in_lex(z->p, r), NULL, r);
    if (lex_range_empty(r)) return 0;
    probe_t p = {.kind = P_LEX_GE_MIN, .lr = r};
    return bt_delete_run(z->p, bt_seek(z->p, &p, NULL, NULL, NULL), SIZE_MAX, NULL, r);
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
    const znode_t *x = (const znode_t *)n;
    zset_entry_t e = {x->member, nlen(x), x->score};
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
    zbt_t *t = z->p;
    return dict_scan(&t->dict, cursor, scan_node, &ctx);
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
