/* ordset.c - a B+ tree of the caller's pointers ordered by their keys (see ordset.h).
 *
 * Leaves hold values only, in key order, one allocation each:
 *   | n (2) | cap (2) | pad (4) | v[cap] (8 each) |
 * (LEAF_MAX = 63: a 512-byte block; the separator and inner-node share of a leaf is spread
 * over twice the values of a 256-byte one). A set's only leaf starts with room for 2 values
 * (3: the allocator's 32-byte block) and doubles up to LEAF_MAX (7, 15, 31: what each block
 * holds), so a tag of one blob costs a 32-byte leaf; every other leaf has LEAF_MAX. Inner nodes
 * hold up to INNER_MAX children (39: a 632-byte node, the allocator's 640-byte block) and, for
 * every child but the first, a separator: a key that is <= every key below that child and > every
 * key below the one before it, copied (so deleting the value it came from leaves it valid) and as
 * short as the two leaves it was made between allow (sep_between: a few bytes for random names).
 * Fill: a full leaf that a value goes past the end of, at the right end of the tree (keys that
 * only grow: the time index), stays full and a new leaf starts with that value; likewise at the
 * left end (keys that only shrink). Elsewhere (random keys: the blob names) a full leaf first
 * shares evenly with a neighbour under the same parent that has room (the parent's separator
 * between them renewed), else it and its full neighbours (two, or one at an end of the parent)
 * spread over one leaf more (B*: 3 full leaves become 4 three-quarters full), so leaves stay
 * about 89% full instead of the 69% of half splits: 9.7 bytes a random 8-byte key, 8.7 a
 * growing or shrinking one (13.3 and 9.7, or 20.8 shrinking, with 256-byte leaves split in
 * halves). Inner nodes split in halves, or at the end that takes the appends
 * all but INNER_MIN + 1 on the side that is left behind.
 * Invariants: all leaves are at depth s->depth; no node but the root is empty; every inner
 * node but the root holds at least INNER_MIN (a quarter) children, so the depth is O(log n); a
 * node that drops below a quarter of its room after a delete is merged with a sibling or
 * shares its entries with it. Loop thread only. */
#include "search/ordset.h"

#include "common/alloc.h"

#include <assert.h>
#include <string.h>

#define LEAF_MAX 63
#define INNER_MAX 39
#define LEAF_MIN (LEAF_MAX / 4)
#define INNER_MIN (INNER_MAX / 4)

typedef struct leaf {
    uint16_t n, cap;
    uint32_t pad;
    void *v[];
} leaf_t;

typedef struct sep {
    uint32_t len;
    char key[];
} sep_t;

typedef struct inner {
    uint32_t n; /* children */
    void *child[INNER_MAX];
    sep_t *sep[INNER_MAX]; /* sep[0] is NULL */
} inner_t;

/* ---- allocation ---- */

/* The values l's block has room for (the allocator may round a block up), up to LEAF_MAX. */
static int leaf_cap(const leaf_t *l)
{
    size_t cap = (alloc_size(l) - sizeof(*l)) / sizeof(void *);
    return cap < LEAF_MAX ? (int)cap : LEAF_MAX;
}

static leaf_t *leaf_new(ordset_t *s, int cap)
{
    leaf_t *l = xmalloc(sizeof(*l) + sizeof(void *) * (size_t)cap);
    l->n = 0;
    l->cap = (uint16_t)leaf_cap(l);
    l->pad = 0;
    s->bytes += alloc_size(l);
    return l;
}

static inner_t *inner_new(ordset_t *s)
{
    inner_t *in = xcalloc(1, sizeof(*in));
    s->bytes += alloc_size(in);
    return in;
}

static void node_free(ordset_t *s, void *n)
{
    s->bytes -= alloc_size(n);
    xfree(n);
}

static sep_t *sep_new(ordset_t *s, const char *key, size_t len)
{
    sep_t *p = xmalloc(sizeof(*p) + len);
    p->len = (uint32_t)len;
    memcpy(p->key, key, len);
    s->bytes += alloc_size(p);
    return p;
}

/* A separator between neighbouring leaves whose keys meet at values a (the left one's last)
 * and b (the right one's first): the shortest prefix of b's key that is > a's, since any key
 * between them will do (a prefix of b is <= b; it is > a because it is one byte longer than
 * their common prefix, where b's key has the greater byte or a's ends). Random names share
 * only a few bytes with their neighbours, so separators fit small blocks. */
static sep_t *sep_between(ordset_t *s, const void *a, const void *b)
{
    size_t alen, blen, i = 0;
    const char *ak = s->key(a, &alen), *bk = s->key(b, &blen);
    while (i < alen && i < blen && ak[i] == bk[i]) i++;
    assert(i < blen); /* b's key is greater: not a prefix of a's */
    return sep_new(s, bk, i + 1);
}

void ordset_init(ordset_t *s, ordset_key_fn *key)
{
    memset(s, 0, sizeof(*s));
    s->key = key;
}

static void free_tree(ordset_t *s, void *n, int depth)
{
    if (depth > 0) {
        inner_t *in = n;
        for (uint32_t i = 0; i < in->n; i++) {
            free_tree(s, in->child[i], depth - 1);
            if (in->sep[i]) node_free(s, in->sep[i]);
        }
    }
    node_free(s, n);
}

void ordset_deinit(ordset_t *s)
{
    if (s->root) free_tree(s, s->root, s->depth);
    s->root = NULL;
    s->depth = 0;
    s->size = 0;
}

int ordset_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    size_t m = alen < blen ? alen : blen;
    int c = m ? memcmp(a, b, m) : 0;
    if (c) return c;
    return alen < blen ? -1 : alen > blen;
}

/* ---- search ---- */

/* The child of in whose keys may hold key: the last one whose separator is <= key. */
static uint32_t route(const inner_t *in, const void *key, size_t len)
{
    uint32_t lo = 1, hi = in->n; /* the first separator > key, in [1, n] */
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (ordset_cmp(in->sep[mid]->key, in->sep[mid]->len, key, len) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

/* The first position of l whose key is >= key; *eq says whether it is key. */
static uint32_t leaf_pos(const ordset_t *s, const leaf_t *l, const void *key, size_t len, int *eq)
{
    uint32_t lo = 0, hi = l->n;
    int c = 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        size_t kl;
        const char *k = s->key(l->v[mid], &kl);
        int m = ordset_cmp(k, kl, key, len);
        if (m < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
            c = m;
        }
    }
    *eq = lo < l->n && c == 0;
    return lo;
}

/* Fills it with the path from the root to the leaf that may hold key and the position there;
 * returns 1 when key is present. The set is not empty. */
static int descend(const ordset_t *s, const void *key, size_t len, ordset_iter_t *it)
{
    void *n = s->root;
    it->s = s;
    for (int k = 0; k < s->depth; k++) {
        inner_t *in = n;
        uint32_t i = route(in, key, len);
        it->node[k] = in;
        it->idx[k] = (uint16_t)i;
        n = in->child[i];
    }
    int eq;
    it->node[s->depth] = n;
    it->idx[s->depth] = (uint16_t)leaf_pos(s, n, key, len, &eq);
    return eq;
}

/* From a position one past a leaf's last value, the first value of the next leaf: 1, or 0
 * at the end of the set. */
static int settle(ordset_iter_t *it)
{
    int d = it->s->depth;
    const leaf_t *l = it->node[d];
    if (!l) return 0;
    if (it->idx[d] < l->n) return 1;
    int up = d - 1;
    while (up >= 0 && it->idx[up] + 1u >= ((inner_t *)it->node[up])->n) up--;
    if (up < 0) return 0;
    it->idx[up]++;
    for (int k = up; k < d; k++) {
        it->node[k + 1] = ((inner_t *)it->node[k])->child[it->idx[k]];
        it->idx[k + 1] = 0;
    }
    return 1;
}

int ordset_seek(const ordset_t *s, const void *key, size_t len, ordset_iter_t *it)
{
    if (!s->root) {
        it->s = s;
        it->node[s->depth] = NULL;
        return 0;
    }
    descend(s, key, len, it);
    return settle(it);
}

int ordset_next(ordset_iter_t *it)
{
    int d = it->s->depth;
    const leaf_t *l = it->node[d];
    if (!l) return 0;
    if (it->idx[d] < l->n) it->idx[d]++;
    return settle(it);
}

void *ordset_iter_val(const ordset_iter_t *it)
{
    int d = it->s->depth;
    return ((leaf_t *)it->node[d])->v[it->idx[d]];
}

const char *ordset_iter_key(const ordset_iter_t *it, size_t *len)
{
    return it->s->key(ordset_iter_val(it), len);
}

void *ordset_get(const ordset_t *s, const void *key, size_t len)
{
    ordset_iter_t it;
    if (!s->root || !descend(s, key, len, &it)) return NULL;
    return ordset_iter_val(&it);
}

/* ---- insert ---- */

/* 1 when the path goes down the last child (end 1) or the first child (end 0) at every level
 * above level `levels`. */
static int at_end(const ordset_iter_t *it, int levels, int end)
{
    for (int k = 0; k < levels; k++) {
        uint32_t last = ((inner_t *)it->node[k])->n - 1u;
        if (it->idx[k] != (end ? last : 0)) return 0;
    }
    return 1;
}

/* Puts child r with separator sp right after the child the path takes at level k (k -1: a
 * new root above the old one). */
static void insert_up(ordset_t *s, ordset_iter_t *it, int k, sep_t *sp, void *r)
{
    if (k < 0) {
        assert(s->depth < ORDSET_MAX_DEPTH);
        inner_t *root = inner_new(s);
        root->n = 2;
        root->child[0] = s->root;
        root->child[1] = r;
        root->sep[1] = sp;
        s->root = root;
        s->depth++;
        return;
    }
    inner_t *in = it->node[k];
    uint32_t at = it->idx[k] + 1u;
    if (in->n < INNER_MAX) {
        memmove(&in->child[at + 1], &in->child[at], sizeof(void *) * (in->n - at));
        memmove(&in->sep[at + 1], &in->sep[at], sizeof(sep_t *) * (in->n - at));
        in->child[at] = r;
        in->sep[at] = sp;
        in->n++;
        return;
    }
    /* full: the INNER_MAX + 1 entries split in two; the right one's first separator goes up */
    void *child[INNER_MAX + 1];
    sep_t *sep[INNER_MAX + 1];
    memcpy(child, in->child, sizeof(void *) * at);
    memcpy(sep, in->sep, sizeof(sep_t *) * at);
    child[at] = r;
    sep[at] = sp;
    memcpy(&child[at + 1], &in->child[at], sizeof(void *) * (INNER_MAX - at));
    memcpy(&sep[at + 1], &in->sep[at], sizeof(sep_t *) * (INNER_MAX - at));
    /* halves; at the end of the rightmost node (growing keys) all but INNER_MIN + 1 on the
     * left, at the start of the leftmost one (shrinking keys) INNER_MIN + 1 on the left: both
     * keep more than INNER_MIN, so no inner node but the root falls below it, and the one that
     * stays behind the appends is nearly full */
    uint32_t keep = (INNER_MAX + 1) / 2;
    if (at == INNER_MAX && at_end(it, k, 1))
        keep = INNER_MAX - INNER_MIN;
    else if (at == 1 && at_end(it, k, 0))
        keep = INNER_MIN + 1;
    inner_t *right = inner_new(s);
    right->n = INNER_MAX + 1 - keep;
    memcpy(right->child, &child[keep], sizeof(void *) * right->n);
    memcpy(right->sep, &sep[keep], sizeof(sep_t *) * right->n);
    sep_t *up = right->sep[0];
    right->sep[0] = NULL;
    in->n = keep;
    memcpy(in->child, child, sizeof(void *) * keep);
    memcpy(in->sep, sep, sizeof(sep_t *) * keep);
    memset(&in->child[keep], 0, sizeof(void *) * (INNER_MAX - keep));
    memset(&in->sep[keep], 0, sizeof(sep_t *) * (INNER_MAX - keep));
    insert_up(s, it, k - 1, up, right);
}

static void leaf_put(leaf_t *l, uint32_t pos, void *val)
{
    memmove(&l->v[pos + 1], &l->v[pos], sizeof(void *) * (l->n - pos));
    l->v[pos] = val;
    l->n++;
}

/* Spreads the values of the m full-capacity leaves p->child[a..a+m), with val put at position
 * pos of their concatenation, evenly over those leaves and `extra` (a new empty leaf that
 * comes after them, or NULL); renews the separators of p->child[a+1..a+m) and returns extra's
 * (the caller links extra in), else NULL. */
static sep_t *leaf_spread(ordset_t *s, inner_t *p, uint32_t a, uint32_t m, leaf_t *extra,
                          uint32_t pos, void *val)
{
    void *v[3 * LEAF_MAX + 1];
    leaf_t *ls[4];
    uint32_t total = 0;
    for (uint32_t j = 0; j < m; j++) {
        ls[j] = p->child[a + j];
        memcpy(&v[total], ls[j]->v, sizeof(void *) * ls[j]->n);
        total += ls[j]->n;
    }
    memmove(&v[pos + 1], &v[pos], sizeof(void *) * (total - pos));
    v[pos] = val;
    total++;
    uint32_t nl = m;
    if (extra) ls[nl++] = extra;
    assert(total <= nl * LEAF_MAX);
    sep_t *sp = NULL;
    for (uint32_t j = 0, from = 0; j < nl; j++) {
        uint32_t to = total * (j + 1) / nl;
        ls[j]->n = (uint16_t)(to - from);
        memcpy(ls[j]->v, &v[from], sizeof(void *) * (to - from));
        from = to;
        if (j == 0) continue;
        if (j < m) {
            node_free(s, p->sep[a + j]);
            p->sep[a + j] = sep_between(s, ls[j - 1]->v[ls[j - 1]->n - 1], ls[j]->v[0]);
        } else {
            sp = sep_between(s, ls[j - 1]->v[ls[j - 1]->n - 1], ls[j]->v[0]);
        }
    }
    return sp;
}

void ordset_insert(ordset_t *s, void *val)
{
    size_t len;
    const char *key = s->key(val, &len);
    if (!s->root) s->root = leaf_new(s, 2);
    ordset_iter_t it;
    int eq = descend(s, key, len, &it);
    assert(!eq);
    (void)eq;
    int d = s->depth;
    leaf_t *l = it.node[d];
    uint32_t pos = it.idx[d];
    s->size++;
    if (l->n < l->cap) {
        leaf_put(l, pos, val);
        return;
    }
    if (l->cap < LEAF_MAX) { /* the only leaf grows */
        assert(d == 0);
        int cap = l->cap * 2 < LEAF_MAX ? l->cap * 2 : LEAF_MAX;
        s->bytes -= alloc_size(l);
        l = xrealloc(l, sizeof(*l) + sizeof(void *) * (size_t)cap);
        s->bytes += alloc_size(l);
        l->cap = (uint16_t)leaf_cap(l);
        s->root = l;
        leaf_put(l, pos, val);
        return;
    }
    if (pos == LEAF_MAX && at_end(&it, d, 1)) { /* growing keys: l stays full, r starts */
        leaf_t *r = leaf_new(s, LEAF_MAX);
        leaf_put(r, 0, val);
        insert_up(s, &it, d - 1, sep_between(s, l->v[LEAF_MAX - 1], val), r);
        return;
    }
    if (pos == 0 && at_end(&it, d, 0)) { /* shrinking keys: l keeps val alone, r is full */
        leaf_t *r = leaf_new(s, LEAF_MAX);
        memcpy(r->v, l->v, sizeof(void *) * LEAF_MAX);
        r->n = LEAF_MAX;
        l->n = 0;
        leaf_put(l, 0, val);
        insert_up(s, &it, d - 1, sep_between(s, val, r->v[0]), r);
        return;
    }
    if (d == 0) { /* the root leaf splits in halves */
        leaf_t *r = leaf_new(s, LEAF_MAX);
        uint32_t keep = (LEAF_MAX + 1) / 2;
        r->n = (uint16_t)(LEAF_MAX - keep);
        memcpy(r->v, &l->v[keep], sizeof(void *) * r->n);
        l->n = (uint16_t)keep;
        if (pos <= keep)
            leaf_put(l, pos, val);
        else
            leaf_put(r, pos - keep, val);
        insert_up(s, &it, -1, sep_between(s, l->v[l->n - 1], r->v[0]), r);
        return;
    }
    /* B*: l and the neighbour with more room even out, else l and its full neighbours spread
     * over one leaf more (3 become 4 three-quarters full, or 2 become 3 two-thirds full at an
     * end of p) */
    inner_t *p = it.node[d - 1];
    uint32_t i = it.idx[d - 1];
    uint32_t room_l = i > 0 ? LEAF_MAX - ((leaf_t *)p->child[i - 1])->n : 0;
    uint32_t room_r = i + 1 < p->n ? LEAF_MAX - ((leaf_t *)p->child[i + 1])->n : 0;
    if (room_l || room_r) {
        if (room_l >= room_r)
            leaf_spread(s, p, i - 1, 2, NULL, ((leaf_t *)p->child[i - 1])->n + pos, val);
        else
            leaf_spread(s, p, i, 2, NULL, pos, val);
        return;
    }
    /* l and its full neighbours (one at an end of p, else two): p->child[a..a+m) */
    uint32_t a = i > 0 ? i - 1 : i, m = i > 0 && i + 1 < p->n ? 3 : 2;
    leaf_t *r = leaf_new(s, LEAF_MAX);
    sep_t *sp = leaf_spread(s, p, a, m, r, (i - a) * LEAF_MAX + pos, val);
    it.idx[d - 1] = (uint16_t)(a + m - 1);
    insert_up(s, &it, d - 1, sp, r);
}

/* ---- delete ---- */

static uint32_t node_n(const void *n, int is_leaf)
{
    return is_leaf ? ((const leaf_t *)n)->n : ((const inner_t *)n)->n;
}

/* Removes entry i (child and separator) of in; the separator is the caller's now. */
static sep_t *inner_remove(inner_t *in, uint32_t i)
{
    sep_t *sp = in->sep[i];
    memmove(&in->child[i], &in->child[i + 1], sizeof(void *) * (in->n - i - 1));
    memmove(&in->sep[i], &in->sep[i + 1], sizeof(sep_t *) * (in->n - i - 1));
    in->n--;
    in->child[in->n] = NULL;
    in->sep[in->n] = NULL;
    return sp;
}

/* Children a and a + 1 of p: merged when their entries fit one node, else shared evenly. */
static void rebalance_pair(ordset_t *s, inner_t *p, uint32_t a, int is_leaf)
{
    void *ln = p->child[a], *rn = p->child[a + 1];
    uint32_t nl = node_n(ln, is_leaf), nr = node_n(rn, is_leaf);
    uint32_t max = is_leaf ? LEAF_MAX : INNER_MAX, total = nl + nr, half = total / 2;
    if (is_leaf) {
        leaf_t *l = ln, *r = rn;
        assert(l->cap == LEAF_MAX && r->cap == LEAF_MAX);
        void *v[2 * LEAF_MAX];
        memcpy(v, l->v, sizeof(void *) * nl);
        memcpy(&v[nl], r->v, sizeof(void *) * nr);
        if (total <= max) {
            memcpy(l->v, v, sizeof(void *) * total);
            l->n = (uint16_t)total;
            node_free(s, inner_remove(p, a + 1));
            node_free(s, r);
            return;
        }
        memcpy(l->v, v, sizeof(void *) * half);
        memcpy(r->v, &v[half], sizeof(void *) * (total - half));
        l->n = (uint16_t)half;
        r->n = (uint16_t)(total - half);
        node_free(s, p->sep[a + 1]);
        p->sep[a + 1] = sep_between(s, l->v[l->n - 1], r->v[0]);
        return;
    }
    /* inner nodes: the parent's separator between them comes down between their entries */
    inner_t *l = ln, *r = rn;
    assert(nl > 0 && nr > 0); /* inner nodes are mended at a quarter, never empty */
    void *child[2 * INNER_MAX];
    sep_t *sep[2 * INNER_MAX];
    memcpy(child, l->child, sizeof(void *) * nl);
    memcpy(sep, l->sep, sizeof(sep_t *) * nl);
    memcpy(&child[nl], r->child, sizeof(void *) * nr);
    memcpy(&sep[nl], r->sep, sizeof(sep_t *) * nr);
    sep[nl] = p->sep[a + 1];
    if (total <= max) {
        memcpy(l->child, child, sizeof(void *) * total);
        memcpy(l->sep, sep, sizeof(sep_t *) * total);
        l->n = total;
        inner_remove(p, a + 1); /* its separator went down into l */
        node_free(s, r);
        return;
    }
    memset(l->child, 0, sizeof(l->child));
    memset(l->sep, 0, sizeof(l->sep));
    memset(r->child, 0, sizeof(r->child));
    memset(r->sep, 0, sizeof(r->sep));
    memcpy(l->child, child, sizeof(void *) * half);
    memcpy(l->sep, sep, sizeof(sep_t *) * half);
    l->n = half;
    r->n = total - half;
    memcpy(r->child, &child[half], sizeof(void *) * r->n);
    memcpy(r->sep, &sep[half], sizeof(sep_t *) * r->n);
    p->sep[a + 1] = r->sep[0];
    r->sep[0] = NULL;
}

/* After a delete below the path's node at level k: mends that node if it holds too little,
 * then its parent. */
static void mend(ordset_t *s, ordset_iter_t *it, int k)
{
    int is_leaf = k == s->depth;
    void *n = it->node[k];
    uint32_t cnt = node_n(n, is_leaf);
    if (k == 0) { /* the root: an empty leaf goes, an inner node of one child gives way */
        if (is_leaf && cnt == 0) {
            node_free(s, n);
            s->root = NULL;
        } else if (!is_leaf && cnt == 1) {
            s->root = ((inner_t *)n)->child[0];
            node_free(s, n);
            s->depth--;
        }
        return;
    }
    if (cnt >= (is_leaf ? LEAF_MIN : INNER_MIN)) return;
    inner_t *p = it->node[k - 1];
    uint32_t i = it->idx[k - 1];
    rebalance_pair(s, p, i + 1 < p->n ? i : i - 1, is_leaf);
    mend(s, it, k - 1);
}

void *ordset_delete(ordset_t *s, const void *key, size_t len)
{
    ordset_iter_t it;
    if (!s->root || !descend(s, key, len, &it)) return NULL;
    leaf_t *l = it.node[s->depth];
    uint32_t pos = it.idx[s->depth];
    void *val = l->v[pos];
    memmove(&l->v[pos], &l->v[pos + 1], sizeof(void *) * (l->n - pos - 1u));
    l->n--;
    s->size--;
    mend(s, &it, s->depth);
    return val;
}

/* ---- checking (tests) ---- */

/* Checks the subtree n at depth d whose keys must lie in [lo, hi) (NULL: unbounded); adds its
 * values to *count. Returns 0, or -1 at the first broken invariant. */
static int check_node(const ordset_t *s, const void *n, int d, const sep_t *lo, const sep_t *hi,
                      int root, uint64_t *count)
{
    if (d == s->depth) {
        const leaf_t *l = n;
        if (l->n > l->cap || (!root && (l->n == 0 || l->cap != LEAF_MAX))) return -1;
        for (uint32_t i = 0; i < l->n; i++) {
            size_t len, plen = 0;
            const char *k = s->key(l->v[i], &len), *prev = i ? s->key(l->v[i - 1], &plen) : NULL;
            if (lo && ordset_cmp(lo->key, lo->len, k, len) > 0) return -1;
            if (hi && ordset_cmp(k, len, hi->key, hi->len) >= 0) return -1;
            if (prev && ordset_cmp(prev, plen, k, len) >= 0) return -1;
        }
        *count += l->n;
        return 0;
    }
    const inner_t *in = n;
    if (in->n > INNER_MAX || in->n < (root ? 2u : (uint32_t)INNER_MIN) || in->sep[0]) return -1;
    for (uint32_t i = 0; i < in->n; i++) {
        const sep_t *a = i ? in->sep[i] : lo, *b = i + 1 < in->n ? in->sep[i + 1] : hi;
        if (i && !in->sep[i]) return -1;
        if (check_node(s, in->child[i], d + 1, a, b, 0, count) < 0) return -1;
    }
    return 0;
}

int ordset__check(const ordset_t *s)
{
    uint64_t count = 0;
    if (!s->root) return s->size == 0 && s->depth == 0 ? 0 : -1;
    if (check_node(s, s->root, 0, NULL, NULL, 1, &count) < 0) return -1;
    return count == s->size ? 0 : -1;
}
