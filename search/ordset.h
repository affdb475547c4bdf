/* ordset.h - an ordered map from byte-string keys to pointers (a skip list).
 *
 * Keys compare bytewise (memcmp, a shorter key first when one is a prefix of the other), so
 * every name index of the search module (tag names of a database, blob names of a tag, and
 * the modification-time index, whose keys are big-endian numbers) lists its entries in the
 * order TQUERY replies them, and a literal prefix is one contiguous range: ordset_seek() to
 * the prefix, then ordset_next() while keys start with it.
 *
 * Keys and values are the caller's: the set keeps the key's address, so its bytes must stay
 * as they are, where they are, until the key is deleted (the search module's keys live in the
 * entries they index). Insert, delete and seek are O(log n) expected. Not thread-safe: loop
 * thread only. */
#ifndef CTE_SEARCH_ORDSET_H
#define CTE_SEARCH_ORDSET_H

#include <stddef.h>
#include <stdint.h>

#define ORDSET_MAX_LEVEL 32

typedef struct ordset_node ordset_node_t;

/* Embedded by its owner (ordset_init/ordset_deinit). Fields are private. */
typedef struct ordset {
    ordset_node_t *head;
    int level;
    uint64_t size;
    uint64_t rng;
    size_t bytes; /* allocated by the nodes */
} ordset_t;

void ordset_init(ordset_t *s);
/* Frees every node (not the values). */
void ordset_deinit(ordset_t *s);

/* Adds key -> val; key[0..len) must live unchanged until ordset_delete of it (or
 * ordset_deinit). The key must not be present (asserted). */
void ordset_insert(ordset_t *s, const void *key, size_t len, void *val);
/* Removes key; returns its value, or NULL if it was not present. */
void *ordset_delete(ordset_t *s, const void *key, size_t len);
/* The value of key, or NULL. */
void *ordset_get(const ordset_t *s, const void *key, size_t len);

/* The first node whose key is >= key[0..len) (len 0: the first node), or NULL. Valid until the
 * set changes. */
ordset_node_t *ordset_seek(const ordset_t *s, const void *key, size_t len);
/* The node after n, or NULL. */
ordset_node_t *ordset_next(const ordset_node_t *n);
/* A node's key (the caller's pointer given to ordset_insert) and value. */
const char *ordset_key(const ordset_node_t *n, size_t *len);
void *ordset_val(const ordset_node_t *n);

static inline uint64_t ordset_size(const ordset_t *s)
{
    return s->size;
}
/* Bytes the set's nodes hold (allocator sizes). */
static inline size_t ordset_memory(const ordset_t *s)
{
    return s->bytes;
}

/* Bytewise comparison as the set orders keys: <0, 0, >0. */
int ordset_cmp(const void *a, size_t alen, const void *b, size_t blen);

#endif
