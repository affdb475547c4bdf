/* t_list.c - lists as a doubly linked list of packed nodes (see t_list.h).
 *
 * A node is one allocation: a 32-byte header, then a buffer whose entries occupy
 * data[off .. off + bytes). Free space may lie on both sides of the entries, so pushing or
 * popping at either end of a node moves nothing most of the time (a plain listpack, as in Redis,
 * moves the whole node on every head push or pop). When one side runs out, the node is laid out
 * again with the free space split towards the side that ran out, or grown (about doubling, up to
 * the node bound): every end operation is O(1) amortized.
 *
 *   node:   prev next (16) | count (4) bytes (4) off (4) cap (4) | data[cap]
 *
 *   entry:  header, payload, backlen, in the spirit of Redis's listpack:
 *     0xxxxxxx                       integer 0..127, no payload
 *     10xxxxxx                       string of 0..63 bytes
 *     110xxxxx b                     13-bit signed integer (two's complement)
 *     1110xxxx b                     string of 64..4095 bytes (12-bit length, high bits first)
 *     0xF0 len32                     string, 32-bit little-endian length
 *     0xF1 / 0xF2 / 0xF3 / 0xF4      integer in 2 / 3 / 4 / 8 little-endian bytes
 *   then backlen: the size of header + payload, 7 bits per byte, most significant group first;
 *   every byte but the first has the high bit set, so it reads backwards from its last byte.
 *
 * An element that is a canonical int64 (Redis's string2ll rules) is stored as the smallest
 * integer form, any other element as the smallest string form: the encoding of an element is
 * unique, so two entries are equal exactly when their encoded bytes are (list_needle_t).
 *
 * Node bounds follow Redis 7.0's _quicklistNodeAllowInsert: with a negative fill the whole node
 * (header and entries) fits the size class, with a positive fill the count is at most fill and
 * the node at most 8 KiB. An entry that fits no node on its own gets a node alone.
 * Deleting inside the list (LREM, LTRIM, LSET, LINSERT splits) merges neighbours that fit
 * together again, and nodes that shrank a lot give memory back.
 *
 * Invariants (list_verify): no empty node; counts and byte sizes match the entries; len is the
 * sum of the counts; a node holding two or more entries fits the bound. Loop thread only. */
#include "storage/t_list.h"

#include "common/alloc.h"
#include "common/util.h"

#include <assert.h>
#include <string.h>

typedef struct lnode {
    struct lnode *prev, *next;
    uint32_t count; /* entries, >= 1 */
    uint32_t bytes; /* bytes of entries, at data + off */
    uint32_t off;
    uint32_t cap; /* usable bytes of data */
    unsigned char data[];
} lnode_t;
_Static_assert(sizeof(lnode_t) == 32, "node header size");

struct list {
    obj_t h;
    lnode_t *head, *tail;
    uint64_t len;
    uint32_t nodes;
    int32_t fill;
};

#define SIZE_SAFETY 8192 /* Redis's SIZE_SAFETY_LIMIT for count-bounded nodes */
/* Node bounds count the node header where Redis counts a listpack's framing: a full node then
 * fills its allocator size class exactly (8 KiB for the default -2). */
#define NODE_FRAMING 32
#define FILL_MAX 32767
static const uint32_t size_class[5] = {4096, 8192, 16384, 32768, 65536};

enum {
    T_STR6 = 0x80,
    T_INT13 = 0xC0,
    T_STR12 = 0xE0,
    T_STR32 = 0xF0,
    T_INT16 = 0xF1,
    T_INT24 = 0xF2,
    T_INT32 = 0xF3,
    T_INT64 = 0xF4,
};

/* ------------------------------------------------------------------------------------------
 * Entry codec
 * ------------------------------------------------------------------------------------------ */

static inline void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static inline uint32_t backlen_size(uint64_t c)
{
    return c < 128 ? 1 : c < 16384 ? 2 : c < (1u << 21) ? 3 : c < (1u << 28) ? 4 : 5;
}

static void backlen_put(unsigned char *d, uint64_t c)
{
    uint32_t k = backlen_size(c);
    for (uint32_t i = 0; i < k; i++) {
        unsigned char b = (unsigned char)((c >> (7 * (k - 1 - i))) & 0x7f);
        d[i] = i ? (unsigned char)(b | 0x80) : b;
    }
}

/* The start of the entry that ends just before end. */
static inline const unsigned char *entry_before(const unsigned char *end)
{
    uint64_t c = 0;
    unsigned shift = 0, k = 0;
    unsigned char b;
    do {
        b = end[-1 - (int)k];
        c |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        k++;
    } while (b & 0x80);
    return end - k - c;
}

/* Size of header + payload of the entry at p. */
static inline uint32_t entry_csize(const unsigned char *p)
{
    unsigned char b = p[0];
    if (b < 0x80) return 1;
    if (b < 0xC0) return 1 + (b & 0x3f);
    if (b < 0xE0) return 2;
    if (b < 0xF0) return 2 + (((uint32_t)(b & 0x0f) << 8) | p[1]);
    switch (b) {
    case T_STR32:
        return 5 + (uint32_t)get_le(p + 1, 4);
    case T_INT16:
        return 3;
    case T_INT24:
        return 4;
    case T_INT32:
        return 5;
    default:
        assert(b == T_INT64);
        return 9;
    }
}

static inline uint32_t entry_size(const unsigned char *p)
{
    uint32_t c = entry_csize(p);
    return c + backlen_size(c);
}

/* Decodes the entry at p into e (integers are formatted into e->buf). */
static void entry_get(const unsigned char *p, list_entry_t *e)
{
    unsigned char b = p[0];
    long long v;
    if (b < 0x80) {
        v = b;
    } else if (b < 0xC0) {
        e->p = (const char *)p + 1;
        e->len = b & 0x3f;
        return;
    } else if (b < 0xE0) {
        uint32_t u = ((uint32_t)(b & 0x1f) << 8) | p[1];
        v = (u & 0x1000) ? (long long)u - 0x2000 : (long long)u;
    } else if (b < 0xF0) {
        e->p = (const char *)p + 2;
        e->len = ((size_t)(b & 0x0f) << 8) | p[1];
        return;
    } else {
        switch (b) {
        case T_STR32:
            e->p = (const char *)p + 5;
            e->len = (size_t)get_le(p + 1, 4);
            return;
        case T_INT16:
            v = (int16_t)get_le(p + 1, 2);
            break;
        case T_INT24:
            v = ((int32_t)((uint32_t)get_le(p + 1, 3) << 8)) >> 8;
            break;
        case T_INT32:
            v = (int32_t)get_le(p + 1, 4);
            break;
        default:
            v = (int64_t)get_le(p + 1, 8);
            break;
        }
    }
    e->len = ll_to_str(e->buf, v);
    e->p = e->buf;
}

static void encode_int(list_needle_t *e, long long v)
{
    unsigned char *h = e->hdr;
    if (v >= 0 && v <= 127) {
        h[0] = (unsigned char)v;
        e->hlen = 1;
    } else if (v >= -4096 && v <= 4095) {
        uint32_t u = (uint32_t)v & 0x1fff;
        h[0] = (unsigned char)(T_INT13 | (u >> 8));
        h[1] = (unsigned char)(u & 0xff);
        e->hlen = 2;
    } else if (v >= INT16_MIN && v <= INT16_MAX) {
        h[0] = T_INT16;
        put_le(h + 1, (uint64_t)v, 2);
        e->hlen = 3;
    } else if (v >= -(1 << 23) && v < (1 << 23)) {
        h[0] = T_INT24;
        put_le(h + 1, (uint64_t)v, 3);
        e->hlen = 4;
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        h[0] = T_INT32;
        put_le(h + 1, (uint64_t)v, 4);
        e->hlen = 5;
    } else {
        h[0] = T_INT64;
        put_le(h + 1, (uint64_t)v, 8);
        e->hlen = 9;
    }
}

void list_needle_init(list_needle_t *e, const void *p, size_t len)
{
    long long v;
    e->data = p;
    e->dlen = len;
    if (len && len <= 20 && str_to_ll(p, len, &v)) {
        encode_int(e, v);
        e->data = NULL;
        e->dlen = 0;
    } else if (len < 64) {
        e->hdr[0] = (unsigned char)(T_STR6 | len);
        e->hlen = 1;
    } else if (len < 4096) {
        e->hdr[0] = (unsigned char)(T_STR12 | (len >> 8));
        e->hdr[1] = (unsigned char)(len & 0xff);
        e->hlen = 2;
    } else {
        assert(len <= LIST_MAX_ELEMENT);
        e->hdr[0] = T_STR32;
        put_le(e->hdr + 1, len, 4);
        e->hlen = 5;
    }
}

static inline size_t enc_size(const list_needle_t *e)
{
    size_t c = e->hlen + e->dlen;
    return c + backlen_size(c);
}

static void entry_write(unsigned char *d, const list_needle_t *e)
{
    memcpy(d, e->hdr, e->hlen);
    if (e->dlen) memcpy(d + e->hlen, e->data, e->dlen);
    backlen_put(d + e->hlen + e->dlen, e->hlen + e->dlen);
}

/* 1 if the entry at p is the element of n. The first byte fixes the header length, so no
 * byte past the entry is read. */
static inline int entry_eq(const unsigned char *p, const list_needle_t *n)
{
    if (p[0] != n->hdr[0]) return 0;
    if (n->hlen > 1 && memcmp(p + 1, n->hdr + 1, n->hlen - 1) != 0) return 0;
    return n->dlen == 0 || memcmp(p + n->hlen, n->data, n->dlen) == 0;
}

/* ------------------------------------------------------------------------------------------
 * Nodes
 * ------------------------------------------------------------------------------------------ */

static inline unsigned char *nbeg(const lnode_t *n)
{
    return (unsigned char *)n->data + n->off;
}

/* 1 if a node of bytes/count entries respects the list's bound. */
static inline int fits(const list_t *l, uint64_t bytes, uint64_t count)
{
    bytes += NODE_FRAMING;
    if (l->fill < 0) return bytes <= size_class[-l->fill - 1];
    return bytes <= SIZE_SAFETY && count <= (uint64_t)l->fill;
}

static inline int allow_insert(const list_t *l, const lnode_t *n, size_t sz)
{
    return n && fits(l, (uint64_t)n->bytes + sz, (uint64_t)n->count + 1);
}

/* Largest buffer a shared node needs. */
static inline size_t bound_bytes(const list_t *l)
{
    return (l->fill < 0 ? size_class[-l->fill - 1] : SIZE_SAFETY) - NODE_FRAMING;
}

static lnode_t *node_alloc(size_t cap, int may_fail)
{
    size_t want = sizeof(lnode_t) + cap;
    lnode_t *n = may_fail ? try_malloc(want) : xmalloc(want);
    if (!n) return NULL;
    size_t usable = alloc_size(n) - sizeof(lnode_t);
    n->cap = usable > UINT32_MAX ? UINT32_MAX : (uint32_t)usable;
    n->prev = n->next = NULL;
    n->count = n->bytes = n->off = 0;
    return n;
}

/* Links n after at (at NULL: as the new head). */
static void link_after(list_t *l, lnode_t *at, lnode_t *n)
{
    n->prev = at;
    n->next = at ? at->next : l->head;
    if (n->next)
        n->next->prev = n;
    else
        l->tail = n;
    if (at)
        at->next = n;
    else
        l->head = n;
    l->nodes++;
}

static void link_before(list_t *l, lnode_t *at, lnode_t *n)
{
    link_after(l, at ? at->prev : l->tail, n);
}

static void unlink_free(list_t *l, lnode_t *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        l->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        l->tail = n->prev;
    l->nodes--;
    xfree(n);
}

/* m takes n's place in the list; n is freed. */
static void swap_in(list_t *l, lnode_t *n, lnode_t *m)
{
    m->prev = n->prev;
    m->next = n->next;
    if (m->prev)
        m->prev->next = m;
    else
        l->head = m;
    if (m->next)
        m->next->prev = m;
    else
        l->tail = m;
    xfree(n);
}

/* Where the entries start in a buffer of cap bytes that holds need bytes after a gap was
 * opened at pos: the free space goes mostly to the end being pushed at. */
static inline uint32_t place(size_t cap, size_t need, uint32_t pos, uint32_t bytes)
{
    size_t free = cap - need;
    if (pos == 0 && bytes > 0) return (uint32_t)(free - free / 4);
    if (pos == bytes) return (uint32_t)(free / 4);
    return (uint32_t)(free / 2);
}

/* Copies n's entries into a new buffer of at least cap bytes at newoff (computed by place()
 * when newoff is -1), leaving a gap of extra bytes at pos. The count is kept, bytes grows by
 * extra. Returns the new node (links fixed, n freed), or NULL when may_fail and memory is
 * short (n untouched). */
static lnode_t *node_move(list_t *l, lnode_t *n, size_t cap, long long newoff, uint32_t pos,
                          size_t extra, int may_fail)
{
    size_t need = (size_t)n->bytes + extra;
    lnode_t *m = node_alloc(cap < need ? need : cap, may_fail);
    if (!m) return NULL;
    uint32_t off = newoff < 0 ? place(m->cap, need, pos, n->bytes) : (uint32_t)newoff;
    memcpy(m->data + off, nbeg(n), pos);
    memcpy(m->data + off + pos + extra, nbeg(n) + pos, n->bytes - pos);
    m->off = off;
    m->bytes = (uint32_t)need;
    m->count = n->count;
    swap_in(l, n, m);
    return m;
}

/* Lays the entries out again inside n's own buffer, with a gap of extra bytes at pos. */
static void node_relayout(lnode_t *n, uint32_t newoff, uint32_t pos, size_t extra)
{
    unsigned char *a = nbeg(n), *b = a + pos;
    unsigned char *na = n->data + newoff, *nb = na + pos + extra;
    size_t blen = n->bytes - pos;
    if (nb > b) { /* B moves right: move it first, A never overtakes it */
        memmove(nb, b, blen);
        memmove(na, a, pos);
    } else {
        memmove(na, a, pos);
        memmove(nb, b, blen);
    }
    n->off = newoff;
    n->bytes += (uint32_t)extra;
}

/* Opens a gap of extra bytes at pos (0..bytes) among n's entries; bytes grows by extra and the
 * caller writes the gap at nbeg(result) + pos (the count is the caller's). Returns n or the
 * node that replaced it, NULL when may_fail and memory is short (n untouched). */
static lnode_t *node_open(list_t *l, lnode_t *n, uint32_t pos, size_t extra, int may_fail)
{
    uint32_t a = pos, b = n->bytes - pos;
    size_t need = (size_t)n->bytes + extra;
    int left_ok = n->off >= extra, right_ok = (size_t)n->off + n->bytes + extra <= n->cap;
    int edge = pos == 0 || pos == n->bytes;
    if ((left_ok && a == 0) || (left_ok && !edge && (!right_ok || a <= b))) {
        memmove(nbeg(n) - extra, nbeg(n), a);
        n->off -= (uint32_t)extra;
        n->bytes += (uint32_t)extra;
        return n;
    }
    if ((right_ok && b == 0) || (right_ok && !edge)) {
        memmove(nbeg(n) + pos + extra, nbeg(n) + pos, b);
        n->bytes += (uint32_t)extra;
        return n;
    }
    /* An end without room: lay out again when that leaves a useful amount of slack at the
     * end being pushed at, else grow; a node that cannot grow any more gets all its slack at
     * that end (it fills up without further moves). A middle gap with room left but on
     * neither side in one piece: lay out again. */
    if (need <= n->cap && (!edge || n->cap - need >= need / 8 + 8)) {
        node_relayout(n, place(n->cap, need, pos, n->bytes), pos, extra);
        return n;
    }
    if (need <= n->cap && n->cap >= bound_bytes(l)) {
        node_relayout(n, pos == 0 ? (uint32_t)(n->cap - need) : 0, pos, extra);
        return n;
    }
    size_t cap = need;
    if (need <= bound_bytes(l)) {
        cap = 2 * need < 64 ? 64 : 2 * need;
        if (cap > bound_bytes(l)) cap = bound_bytes(l);
    }
    return node_move(l, n, cap, -1, pos, extra, may_fail);
}

/* Removes nbytes bytes holding nent entries at pos. A node left with no entries is the
 * caller's to unlink. Returns n or the smaller node that replaced it. */
static lnode_t *node_cut(list_t *l, lnode_t *n, uint32_t pos, uint32_t nbytes, uint32_t nent)
{
    uint32_t a = pos, b = n->bytes - pos - nbytes;
    if (a < b) {
        memmove(nbeg(n) + nbytes, nbeg(n), a);
        n->off += nbytes;
    } else {
        memmove(nbeg(n) + pos, nbeg(n) + pos + nbytes, b);
    }
    n->bytes -= nbytes;
    n->count -= nent;
    if (n->count && n->cap >= 1024 && n->bytes < n->cap / 4) {
        size_t cap = 2 * (size_t)n->bytes;
        n = node_move(l, n, cap, (long long)((cap - n->bytes) / 2), n->bytes, 0, 0);
    }
    return n;
}

/* Gives back the free space of a node that will not grow soon. */
static lnode_t *node_fit(list_t *l, lnode_t *n)
{
    if (n->cap - n->bytes <= n->bytes / 8 + 16) return n;
    return node_move(l, n, n->bytes, 0, n->bytes, 0, 0);
}

/* A new node holding one entry; its free space on the side of where. */
static lnode_t *node_with(const list_needle_t *e, size_t sz, int where, int may_fail)
{
    lnode_t *m = node_alloc(sz, may_fail);
    if (!m) return NULL;
    m->off = where == LIST_HEAD ? (uint32_t)(m->cap - sz) : 0;
    entry_write(m->data + m->off, e);
    m->bytes = (uint32_t)sz;
    m->count = 1;
    return m;
}

/* Byte offset of entry i (0 <= i <= count) of n, walking from the nearer end. */
static uint32_t entry_pos(const lnode_t *n, uint32_t i)
{
    const unsigned char *s = nbeg(n), *p;
    if (i <= n->count / 2) {
        p = s;
        for (uint32_t k = 0; k < i; k++) p += entry_size(p);
    } else {
        p = s + n->bytes;
        for (uint32_t k = n->count; k > i; k--) p = entry_before(p);
    }
    return (uint32_t)(p - s);
}

/* Bytes of k entries of n from byte offset pos on. */
static uint32_t span_fwd(const lnode_t *n, uint32_t pos, uint32_t k)
{
    const unsigned char *s = nbeg(n) + pos, *p = s;
    while (k--) p += entry_size(p);
    return (uint32_t)(p - s);
}

/* Bytes of the last k entries of n. */
static uint32_t span_bwd(const lnode_t *n, uint32_t k)
{
    const unsigned char *e = nbeg(n) + n->bytes, *p = e;
    while (k--) p = entry_before(p);
    return (uint32_t)(e - p);
}

/* The node holding index idx (< len), with the entry's index in it and its byte offset. */
static lnode_t *locate(const list_t *l, uint64_t idx, uint32_t *ni, uint32_t *pos)
{
    lnode_t *n;
    uint64_t base;
    if (idx < l->len / 2) {
        n = l->head;
        base = 0;
        while (base + n->count <= idx) {
            base += n->count;
            n = n->next;
        }
    } else {
        n = l->tail;
        base = l->len - n->count;
        while (base > idx) {
            n = n->prev;
            base -= n->count;
        }
    }
    *ni = (uint32_t)(idx - base);
    *pos = entry_pos(n, *ni);
    return n;
}

/* Merges b into a or a into b (a->next == b) when both fit one node. Returns the node that
 * holds them, or NULL if they were left apart. */
static lnode_t *try_merge(list_t *l, lnode_t *a, lnode_t *b)
{
    if (!a || !b || !fits(l, (uint64_t)a->bytes + b->bytes, (uint64_t)a->count + b->count))
        return NULL;
    if (a->bytes >= b->bytes) {
        uint32_t pos = a->bytes;
        a = node_open(l, a, pos, b->bytes, 0);
        memcpy(nbeg(a) + pos, nbeg(b), b->bytes);
        a->count += b->count;
        unlink_free(l, b);
        return a;
    }
    uint32_t ab = a->bytes;
    b = node_open(l, b, 0, ab, 0);
    memcpy(nbeg(b), nbeg(a), ab);
    b->count += a->count;
    unlink_free(l, a);
    return b;
}

/* ------------------------------------------------------------------------------------------
 * Lifecycle
 * ------------------------------------------------------------------------------------------ */

list_t *list_new(void)
{
    list_t *l = xcalloc(1, sizeof(*l));
    l->h.type = OBJ_LIST;
    l->h.enc = ENC_QUICKLIST;
    l->h.lru = obj_clock_new();
    int32_t fill = storage_params.list_max_listpack_size;
    l->fill = fill < -5 ? -5 : fill > FILL_MAX ? FILL_MAX : fill;
    return l;
}

void list_free(list_t *l)
{
    if (!l) return;
    for (lnode_t *n = l->head, *next; n; n = next) {
        next = n->next;
        xfree(n);
    }
    xfree(l);
}

list_t *list_dup(const list_t *l)
{
    list_t *d = xcalloc(1, sizeof(*d));
    d->h = l->h;
    d->fill = l->fill;
    for (const lnode_t *n = l->head; n; n = n->next) {
        lnode_t *m = node_alloc(n->bytes, 0);
        memcpy(m->data, nbeg(n), n->bytes);
        m->bytes = n->bytes;
        m->count = n->count;
        link_after(d, d->tail, m);
    }
    d->len = l->len;
    return d;
}

size_t list_len(const list_t *l)
{
    return (size_t)l->len;
}

size_t list_memory(const list_t *l)
{
    size_t total = alloc_size(l);
    for (const lnode_t *n = l->head; n; n = n->next) total += alloc_size(n);
    return total;
}

size_t list_node_count(const list_t *l)
{
    return l->nodes;
}

/* ------------------------------------------------------------------------------------------
 * Ends
 * ------------------------------------------------------------------------------------------ */

int list_push(list_t *l, int where, const void *p, size_t len)
{
    list_needle_t e;
    list_needle_init(&e, p, len);
    size_t sz = enc_size(&e);
    lnode_t *n = where == LIST_HEAD ? l->head : l->tail;
    if (allow_insert(l, n, sz)) {
        uint32_t pos = where == LIST_HEAD ? 0 : n->bytes;
        n = node_open(l, n, pos, sz, 0);
        entry_write(nbeg(n) + pos, &e);
        n->count++;
    } else {
        lnode_t *m = node_with(&e, sz, where, !fits(l, sz, 1));
        if (!m) return -1;
        if (where == LIST_HEAD)
            link_before(l, l->head, m);
        else
            link_after(l, l->tail, m);
        if (n) node_fit(l, n);
    }
    l->len++;
    return 0;
}

int list_peek(const list_t *l, int where, list_entry_t *e)
{
    const lnode_t *n = where == LIST_HEAD ? l->head : l->tail;
    if (!n) return 0;
    entry_get(where == LIST_HEAD ? nbeg(n) : entry_before(nbeg(n) + n->bytes), e);
    return 1;
}

void list_drop(list_t *l, int where, size_t n)
{
    assert(n <= l->len);
    while (n) {
        lnode_t *node = where == LIST_HEAD ? l->head : l->tail;
        if (node->count <= n) {
            n -= node->count;
            l->len -= node->count;
            unlink_free(l, node);
            continue;
        }
        uint32_t k = (uint32_t)n;
        if (where == LIST_HEAD) {
            node_cut(l, node, 0, span_fwd(node, 0, k), k);
        } else {
            uint32_t nb = span_bwd(node, k);
            node_cut(l, node, node->bytes - nb, nb, k);
        }
        l->len -= k;
        n = 0;
    }
}

char *list_pop(list_t *l, int where, size_t *len)
{
    list_entry_t e;
    if (!list_peek(l, where, &e)) return NULL;
    char *copy = xmemdup(e.p, e.len);
    *len = e.len;
    list_drop(l, where, 1);
    return copy;
}

/* ------------------------------------------------------------------------------------------
 * By index
 * ------------------------------------------------------------------------------------------ */

static inline int norm_index(const list_t *l, long long index, uint64_t *out)
{
    if (index < 0) {
        if ((unsigned long long)-(index + 1) >= l->len) return 0;
        *out = l->len - (uint64_t) - (index + 1) - 1;
    } else {
        if ((unsigned long long)index >= l->len) return 0;
        *out = (uint64_t)index;
    }
    return 1;
}

int list_index(const list_t *l, long long index, list_entry_t *e)
{
    uint64_t idx;
    uint32_t ni, pos;
    if (!norm_index(l, index, &idx)) return 0;
    const lnode_t *n = locate(l, idx, &ni, &pos);
    entry_get(nbeg(n) + pos, e);
    return 1;
}

/* Inserts the entry e of sz bytes at byte pos of n, before the node's entry idx: into n when
 * it has room, else into a neighbour at an edge, else into a node of its own (splitting n when
 * pos is inside it), as Redis's _quicklistInsert. An entry that fits no shared node comes
 * already in its own node, fresh (allocated by the caller, who can still back out). */
static void insert_at(list_t *l, lnode_t *n, uint32_t pos, uint32_t idx, const list_needle_t *e,
                      size_t sz, lnode_t *fresh)
{
    if (!fresh && allow_insert(l, n, sz)) {
        n = node_open(l, n, pos, sz, 0);
        entry_write(nbeg(n) + pos, e);
        n->count++;
    } else if (!fresh && pos == 0 && allow_insert(l, n->prev, sz)) {
        lnode_t *p = n->prev;
        uint32_t at = p->bytes;
        p = node_open(l, p, at, sz, 0);
        entry_write(nbeg(p) + at, e);
        p->count++;
    } else if (!fresh && pos == n->bytes && allow_insert(l, n->next, sz)) {
        lnode_t *q = node_open(l, n->next, 0, sz, 0);
        entry_write(nbeg(q), e);
        q->count++;
    } else if (pos == 0 || pos == n->bytes) {
        lnode_t *m = fresh ? fresh : node_with(e, sz, LIST_TAIL, 0);
        if (pos == 0)
            link_before(l, n, m);
        else
            link_after(l, n, m);
    } else {
        /* split: n keeps entries [0, idx), m takes [idx, count) */
        lnode_t *m = node_alloc(n->bytes - pos, 0);
        memcpy(m->data, nbeg(n) + pos, n->bytes - pos);
        m->bytes = n->bytes - pos;
        m->count = n->count - idx;
        n->bytes = pos;
        n->count = idx;
        link_after(l, n, m);
        if (!fresh && allow_insert(l, n, sz)) {
            n = node_open(l, n, n->bytes, sz, 0);
            entry_write(nbeg(n) + n->bytes - sz, e);
            n->count++;
        } else if (!fresh && allow_insert(l, m, sz)) {
            m = node_open(l, m, 0, sz, 0);
            entry_write(nbeg(m), e);
            m->count++;
        } else {
            link_after(l, n, fresh ? fresh : node_with(e, sz, LIST_TAIL, 0));
        }
        try_merge(l, n->prev, n);
        try_merge(l, m, m->next);
    }
    l->len++;
}

/* For an entry that fits no shared node: its node, allocated before anything changes. Returns
 * 0 with *fresh (NULL for a small entry), or -1 on out-of-memory. */
static int fresh_for(const list_t *l, const list_needle_t *e, size_t sz, lnode_t **fresh)
{
    *fresh = NULL;
    if (fits(l, sz, 1)) return 0;
    *fresh = node_with(e, sz, LIST_TAIL, 1);
    return *fresh ? 0 : -1;
}

int list_set(list_t *l, long long index, const void *p, size_t len)
{
    uint64_t idx;
    uint32_t ni, pos;
    if (!norm_index(l, index, &idx)) return 0;
    lnode_t *n = locate(l, idx, &ni, &pos);
    list_needle_t e;
    list_needle_init(&e, p, len);
    size_t sz = enc_size(&e);
    uint32_t old = entry_size(nbeg(n) + pos);
    if (sz == old) {
        entry_write(nbeg(n) + pos, &e);
    } else if (n->count == 1 || fits(l, (uint64_t)n->bytes - old + sz, n->count)) {
        if (sz > old) {
            lnode_t *m = node_open(l, n, pos + old, sz - old, !fits(l, sz, 1));
            if (!m) return -1;
            n = m;
        } else {
            n = node_cut(l, n, pos + (uint32_t)sz, old - (uint32_t)sz, 0);
        }
        entry_write(nbeg(n) + pos, &e);
    } else {
        /* Too big to stay here: take the old entry out, insert the new one in its place. */
        lnode_t *fresh;
        if (fresh_for(l, &e, sz, &fresh) != 0) return -1;
        n = node_cut(l, n, pos, old, 1);
        l->len--;
        insert_at(l, n, pos, ni, &e, sz, fresh);
    }
    return 1;
}

void list_del_range(list_t *l, size_t start, size_t n)
{
    assert(start + n <= l->len);
    if (!n) return;
    if (start == 0) {
        list_drop(l, LIST_HEAD, n);
        return;
    }
    if (start + n == l->len) {
        list_drop(l, LIST_TAIL, n);
        return;
    }
    uint32_t i, pos;
    lnode_t *node = locate(l, start, &i, &pos);
    lnode_t *before = i > 0 ? node : node->prev; /* survives: start > 0 */
    while (n) {
        lnode_t *next = node->next;
        uint32_t k = node->count - i < n ? node->count - i : (uint32_t)n;
        if (k == node->count) {
            unlink_free(l, node);
        } else {
            lnode_t *m = node_cut(l, node, pos, span_fwd(node, pos, k), k);
            if (node == before) before = m;
        }
        n -= k;
        l->len -= k;
        node = next;
        i = 0;
        pos = 0;
    }
    if (before) try_merge(l, before, before->next);
}

/* ------------------------------------------------------------------------------------------
 * By value
 * ------------------------------------------------------------------------------------------ */

int list_insert(list_t *l, const list_needle_t *pivot, int after, const void *p, size_t len)
{
    list_needle_t e;
    list_needle_init(&e, p, len);
    size_t sz = enc_size(&e);
    for (lnode_t *n = l->head; n; n = n->next) {
        const unsigned char *s = nbeg(n);
        uint32_t pos = 0;
        for (uint32_t i = 0; i < n->count; i++) {
            uint32_t esz = entry_size(s + pos);
            if (entry_eq(s + pos, pivot)) {
                lnode_t *fresh;
                if (fresh_for(l, &e, sz, &fresh) != 0) return -1;
                if (after)
                    insert_at(l, n, pos + esz, i + 1, &e, sz, fresh);
                else
                    insert_at(l, n, pos, i, &e, sz, fresh);
                return 1;
            }
            pos += esz;
        }
    }
    return 0;
}

/* Removes up to max entries equal to nd from n, scanning from its head (one pass that slides
 * the kept entries down). Returns how many were removed. */
static uint32_t node_remove_fwd(lnode_t *n, const list_needle_t *nd, uint64_t max)
{
    unsigned char *s = nbeg(n), *end = s + n->bytes, *r = s, *w = s;
    uint32_t k = 0;
    while (r < end) {
        if (k == max) {
            if (w != r) memmove(w, r, (size_t)(end - r));
            w += end - r;
            break;
        }
        uint32_t sz = entry_size(r);
        if (entry_eq(r, nd)) {
            k++;
        } else {
            if (w != r) memmove(w, r, sz);
            w += sz;
        }
        r += sz;
    }
    n->bytes = (uint32_t)(w - s);
    n->count -= k;
    return k;
}

/* The same from the tail: kept entries slide up, the node's start moves right. */
static uint32_t node_remove_bwd(lnode_t *n, const list_needle_t *nd, uint64_t max)
{
    unsigned char *s = nbeg(n), *end = s + n->bytes, *r = end, *w = end;
    uint32_t k = 0;
    while (r > s) {
        if (k == max) {
            size_t rest = (size_t)(r - s);
            if (w != r) memmove(w - rest, s, rest);
            w -= rest;
            break;
        }
        unsigned char *p = (unsigned char *)entry_before(r);
        size_t sz = (size_t)(r - p);
        if (entry_eq(p, nd)) {
            k++;
        } else {
            w -= sz;
            if (w != p) memmove(w, p, sz);
        }
        r = p;
    }
    n->off += (uint32_t)(w - s);
    n->bytes = (uint32_t)(end - w);
    n->count -= k;
    return k;
}

long long list_remove(list_t *l, const list_needle_t *nd, long long count)
{
    uint64_t limit = count == 0  ? UINT64_MAX
                     : count > 0 ? (uint64_t)count
                                 : (uint64_t)0 - (uint64_t)count;
    int fwd = count >= 0;
    uint64_t removed = 0;
    lnode_t *n = fwd ? l->head : l->tail;
    while (n && removed < limit) {
        lnode_t *next = fwd ? n->next : n->prev;
        uint32_t k =
            fwd ? node_remove_fwd(n, nd, limit - removed) : node_remove_bwd(n, nd, limit - removed);
        if (k) {
            removed += k;
            l->len -= k;
            if (n->count == 0) {
                unlink_free(l, n);
            } else {
                if (n->cap >= 1024 && n->bytes < n->cap / 4) n = node_fit(l, n);
                if (fwd)
                    try_merge(l, n->prev, n);
                else
                    try_merge(l, n, n->next);
            }
        }
        n = next;
    }
    return (long long)removed;
}

/* ------------------------------------------------------------------------------------------
 * Iteration
 * ------------------------------------------------------------------------------------------ */

void list_iter_init(list_iter_t *it, const list_t *l, long long start, int dir)
{
    uint64_t idx;
    uint32_t ni, pos;
    it->dir = dir;
    it->node = NULL;
    it->left = 0;
    it->index = -1;
    if (!norm_index(l, start, &idx)) return;
    const lnode_t *n = locate(l, idx, &ni, &pos);
    it->node = n;
    if (dir == LIST_TAIL) {
        it->pos = pos;
        it->left = n->count - ni;
        it->index = (long long)idx - 1;
    } else {
        it->pos = pos + entry_size(nbeg(n) + pos);
        it->left = ni + 1;
        it->index = (long long)idx + 1;
    }
}

/* Steps to the next entry and returns it, NULL at the end. */
static inline const unsigned char *iter_step(list_iter_t *it)
{
    const lnode_t *n = it->node;
    if (!n) return NULL;
    if (it->left == 0) {
        n = it->dir == LIST_TAIL ? n->next : n->prev;
        it->node = n;
        if (!n) return NULL;
        it->left = n->count;
        it->pos = it->dir == LIST_TAIL ? 0 : n->bytes;
    }
    const unsigned char *s = nbeg(n), *p;
    if (it->dir == LIST_TAIL) {
        p = s + it->pos;
        it->pos += entry_size(p);
        it->index++;
    } else {
        p = entry_before(s + it->pos);
        it->pos = (uint32_t)(p - s);
        it->index--;
    }
    it->left--;
    return p;
}

int list_iter_next(list_iter_t *it, list_entry_t *e)
{
    const unsigned char *p = iter_step(it);
    if (!p) return 0;
    entry_get(p, e);
    return 1;
}

int list_iter_match(list_iter_t *it, const list_needle_t *n)
{
    const unsigned char *p = iter_step(it);
    if (!p) return -1;
    return entry_eq(p, n);
}

/* ------------------------------------------------------------------------------------------
 * Checks and registration
 * ------------------------------------------------------------------------------------------ */

int list_verify(const list_t *l)
{
    uint64_t len = 0;
    uint32_t nodes = 0;
    const lnode_t *prev = NULL;
    for (const lnode_t *n = l->head; n; prev = n, n = n->next) {
        if (n->prev != prev) return -1;
        if (n->count == 0) return -2;
        if ((uint64_t)n->off + n->bytes > n->cap) return -3;
        if (n->count > 1 && !fits(l, n->bytes, n->count)) return -4;
        const unsigned char *s = nbeg(n), *p = s;
        for (uint32_t i = 0; i < n->count; i++) {
            if (p >= s + n->bytes) return -5;
            uint32_t sz = entry_size(p);
            if (entry_before(p + sz) != p) return -6;
            p += sz;
        }
        if (p != s + n->bytes) return -7;
        len += n->count;
        nodes++;
    }
    if (prev != l->tail) return -8;
    if (len != l->len) return -9;
    if (nodes != l->nodes) return -10;
    return 0;
}

static void ops_free(obj_t *o)
{
    list_free(list_of(o));
}

static obj_t *ops_dup(const obj_t *o)
{
    return list_obj(list_dup((const list_t *)o));
}

static size_t ops_memory(const obj_t *o)
{
    return list_memory((const list_t *)o);
}

static size_t ops_length(const obj_t *o)
{
    return list_len((const list_t *)o);
}

static const obj_ops_t list_ops = {ops_free, ops_dup, ops_memory, ops_length};

__attribute__((constructor)) static void list_register(void)
{
    obj_types[OBJ_LIST] = &list_ops;
}
