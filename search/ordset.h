/* ordset.h - an ordered set of the caller's values by byte-string keys (a B+ tree of pointers).
 *
 * Keys compare bytewise (memcmp, a shorter key first when one is a prefix of the other), so
 * every name index of the search module (tag names of a database, blob names of a tag, and
 * the modification-time index, whose keys are big-endian numbers) lists its entries in the
 * order TQUERY replies them, and a literal prefix is one contiguous range: ordset_seek() to
 * the prefix, then ordset_next() while keys start with it.
 *
 * The set holds only the values' pointers: a value's key is what the set's key function
 * answers for it, so its bytes must stay as they are while the value is in the set (the
 * search module's keys live in the entries they index: a blob's name, a tag's name, a time
 * key). A value in a full leaf costs 8.1 bytes (a skip list node cost 32 and more); leaves
 * are kept nearly full for keys that only grow or shrink and about 89% full for random ones;
 * insert, delete and seek are O(log n). Not thread-safe: loop thread only. */
#ifndef CTE_SEARCH_ORDSET_H
#define CTE_SEARCH_ORDSET_H

#include <stddef.h>
#include <stdint.h>

/* The key of a value of the set: its bytes and length. */
typedef const char *ordset_key_fn(const void *val, size_t *len);

/* Levels of inner nodes a set may have: every inner node but the root holds at least a quarter
 * of its room (9 of 39 children), so 12 levels hold more than 2 * 9^11 leaves. */
#define ORDSET_MAX_DEPTH 12

/* Embedded by its owner (ordset_init/ordset_deinit). Fields are private. */
typedef struct ordset {
    void *root; /* a leaf when depth is 0, else an inner node; NULL when empty */
    int depth;  /* levels of inner nodes above the leaves */
    uint64_t size;
    size_t bytes; /* allocated by the nodes */
    ordset_key_fn *key;
} ordset_t;

/* A position in a set: valid until the set changes (then seek again). Fields are private. */
typedef struct ordset_iter {
    const ordset_t *s;
    void *node[ORDSET_MAX_DEPTH + 1]; /* the path from the root down to a leaf */
    uint16_t idx[ORDSET_MAX_DEPTH + 1];
} ordset_iter_t;

void ordset_init(ordset_t *s, ordset_key_fn *key);
/* Frees every node (not the values). */
void ordset_deinit(ordset_t *s);

/* Adds val under its key, which must not be present (asserted). */
void ordset_insert(ordset_t *s, void *val);
/* Removes the value of key[0..len); returns it, or NULL if the key was not present. The
 * value's key must still be what it was when it was inserted. */
void *ordset_delete(ordset_t *s, const void *key, size_t len);
/* The value of key, or NULL. */
void *ordset_get(const ordset_t *s, const void *key, size_t len);

/* Points it at the first value whose key is >= key[0..len) (len 0: the first value); returns
 * 1, or 0 when there is none (it is then at the end). */
int ordset_seek(const ordset_t *s, const void *key, size_t len, ordset_iter_t *it);
/* Moves it to the next value: 1, or 0 at the end. */
int ordset_next(ordset_iter_t *it);
/* The value it is at, and its key. */
void *ordset_iter_val(const ordset_iter_t *it);
const char *ordset_iter_key(const ordset_iter_t *it, size_t *len);

static inline uint64_t ordset_size(const ordset_t *s)
{
    return s->size;
}
/* Bytes the set's nodes hold (allocator sizes). */
static inline size_t ordset_memory(const ordset_t *s)
{
    return s->bytes;
}

/* Tests: 0 when every invariant of ordset.c holds (keys in order within their separators'
 * bounds, leaves at one depth, no node below its minimum, the size), else -1. O(n). */
int ordset__check(const ordset_t *s);

/* Bytewise comparison as the set orders keys: <0, 0, >0. */
int ordset_cmp(const void *a, size_t alen, const void *b, size_t blen);

#endif
