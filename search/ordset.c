/* ordset.c - a skip list of byte-string keys (see ordset.h).
 *
 * Node layout, one allocation:
 *   | val (8) | key (8) | len (4) | level (1) | pad | next[level] (8 each) |
 * The key bytes are the caller's (a blob's name, a tag's name, a time key in its entry), so a
 * node of one link is a 32-byte block whatever the key: copying the keys in cost 16 bytes and
 * more an entry.
 * The head node has no key and as many links as the set's tallest node (at least 4); an empty
 * set has no head at all. Levels are drawn with p = 1/4 (Redis's
 * zset skip list uses the same), so a node has 1.33 links on average. Invariant: at every
 * level the links visit keys in strictly increasing ordset_cmp order. Loop thread only. */
#include "search/ordset.h"

#include "common/alloc.h"

#include <assert.h>
#include <string.h>

struct ordset_node {
    void *val;
    const char *key;
    uint32_t len;
    uint8_t level;
    ordset_node_t *next[];
};

static ordset_node_t *node_new(ordset_t *s, int level, const void *key, size_t len, void *val)
{
    ordset_node_t *n = xmalloc(sizeof(*n) + sizeof(ordset_node_t *) * (size_t)level);
    n->val = val;
    n->key = key;
    n->len = (uint32_t)len;
    n->level = (uint8_t)level;
    memset(n->next, 0, sizeof(ordset_node_t *) * (size_t)level);
    s->bytes += alloc_size(n);
    return n;
}

static void node_free(ordset_t *s, ordset_node_t *n)
{
    s->bytes -= alloc_size(n);
    xfree(n);
}

void ordset_init(ordset_t *s)
{
    memset(s, 0, sizeof(*s));
    s->rng = 0x9e3779b97f4a7c15ull;
    s->level = 1;
}

/* The head has as many links as the tallest node needs (grown on demand), so an empty or small
 * set costs little: a tag with a few blobs holds one of these. */
static void head_reserve(ordset_t *s, int level)
{
    if (s->head && s->head->level >= level) return;
    int old = s->head ? s->head->level : 0;
    if (s->head) s->bytes -= alloc_size(s->head);
    s->head = xrealloc(s->head, sizeof(ordset_node_t) + sizeof(ordset_node_t *) * (size_t)level);
    s->bytes += alloc_size(s->head);
    memset(&s->head->next[old], 0, sizeof(ordset_node_t *) * (size_t)(level - old));
    s->head->val = NULL;
    s->head->key = NULL;
    s->head->len = 0;
    s->head->level = (uint8_t)level;
}

void ordset_deinit(ordset_t *s)
{
    ordset_node_t *n = s->head;
    while (n) {
        ordset_node_t *next = n->next[0];
        node_free(s, n);
        n = next;
    }
    s->head = NULL;
    s->size = 0;
}

int ordset_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    size_t m = alen < blen ? alen : blen;
    int c = m ? memcmp(a, b, m) : 0;
    if (c) return c;
    return alen < blen ? -1 : alen > blen;
}

static int random_level(ordset_t *s)
{
    /* xorshift64: two bits per level give p = 1/4 */
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    uint64_t r = s->rng;
    int level = 1;
    while (level < ORDSET_MAX_LEVEL && (r & 3) == 0) {
        level++;
        r >>= 2;
    }
    return level;
}

/* Fills update[i] with the last node at level i whose key is < key; returns the node after
 * update[0] (the first >= key), or NULL. */
static ordset_node_t *find_before(const ordset_t *s, const void *key, size_t len,
                                  ordset_node_t **update)
{
    ordset_node_t *x = s->head;
    if (!x) return NULL;
    for (int i = s->level - 1; i >= 0; i--) {
        while (x->next[i] && ordset_cmp(x->next[i]->key, x->next[i]->len, key, len) < 0)
            x = x->next[i];
        if (update) update[i] = x;
    }
    return x->next[0];
}

void ordset_insert(ordset_t *s, const void *key, size_t len, void *val)
{
    ordset_node_t *update[ORDSET_MAX_LEVEL];
    int level = random_level(s);
    head_reserve(s, level > 4 ? level : 4);
    ordset_node_t *at = find_before(s, key, len, update);
    assert(!at || ordset_cmp(at->key, at->len, key, len) != 0);
    (void)at;
    for (int i = s->level; i < level; i++) update[i] = s->head;
    if (level > s->level) s->level = level;
    ordset_node_t *n = node_new(s, level, key, len, val);
    for (int i = 0; i < level; i++) {
        n->next[i] = update[i]->next[i];
        update[i]->next[i] = n;
    }
    s->size++;
}

void *ordset_delete(ordset_t *s, const void *key, size_t len)
{
    ordset_node_t *update[ORDSET_MAX_LEVEL];
    ordset_node_t *n = find_before(s, key, len, update);
    if (!n || ordset_cmp(n->key, n->len, key, len) != 0) return NULL;
    for (int i = 0; i < n->level; i++) update[i]->next[i] = n->next[i];
    while (s->level > 1 && !s->head->next[s->level - 1]) s->level--;
    void *val = n->val;
    node_free(s, n);
    if (--s->size == 0) { /* an empty set holds nothing */
        node_free(s, s->head);
        s->head = NULL;
        s->level = 1;
    }
    return val;
}

void *ordset_get(const ordset_t *s, const void *key, size_t len)
{
    ordset_node_t *n = find_before(s, key, len, NULL);
    if (!n || ordset_cmp(n->key, n->len, key, len) != 0) return NULL;
    return n->val;
}

ordset_node_t *ordset_seek(const ordset_t *s, const void *key, size_t len)
{
    return find_before(s, key, len, NULL);
}

ordset_node_t *ordset_next(const ordset_node_t *n)
{
    return n->next[0];
}

const char *ordset_key(const ordset_node_t *n, size_t *len)
{
    *len = n->len;
    return n->key;
}

void *ordset_val(const ordset_node_t *n)
{
    return n->val;
}
