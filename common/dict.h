/* dict.h - an intrusive chained hash table with incremental rehashing.
 *
 * The table stores dict_node_t headers that callers embed at the start of their own entries
 * (a keyspace entry, a hash field, a set member), so an entry is one allocation that holds its
 * key. The node caches the key's 32-bit hash. The caller computes the hash with dict_hash()
 * and the table finds the key through the type's key() callback.
 *
 * Growth doubles the bucket array when used >= buckets; shrinking happens when used falls
 * below an eighth. Moving entries to the new array is incremental: every lookup, insert and
 * delete moves one bucket, and dict_rehash_ms() can be called from a timer. Iteration with
 * dict_scan() is safe across rehashes (Redis's reverse-binary cursor: every element present
 * for the whole scan is returned at least once). Not thread-safe: owned by one thread. */
#ifndef CTE_COMMON_DICT_H
#define CTE_COMMON_DICT_H

#include <stddef.h>
#include <stdint.h>

typedef struct dict_node {
    struct dict_node *next;
    uint32_t hash;
    uint32_t aux; /* free for the owner (key length, flags...) */
} dict_node_t;

typedef struct dict_type {
    /* The key bytes of a node. Required. */
    const void *(*key)(const dict_node_t *n, size_t *len);
    /* Frees a node on dict_clear/dict_free. May be NULL. */
    void (*free_node)(dict_node_t *n, void *ud);
} dict_type_t;

typedef struct dict {
    const dict_type_t *type;
    dict_node_t **table[2];
    uint64_t size[2]; /* bucket counts, powers of two or 0 */
    uint64_t used[2];
    int64_t rehashidx; /* -1 when not rehashing */
    int pause_rehash;
    int no_resize; /* set while a child process shares memory, like Redis */
} dict_t;

/* Seeds the hash function; call once at start (tests may skip it). */
void dict_set_seed(const uint8_t seed[16]);
uint32_t dict_hash(const void *key, size_t len);
/* Case-insensitive hash, for tables keyed by command or config names. */
uint32_t dict_hash_nocase(const void *key, size_t len);

void dict_init(dict_t *d, const dict_type_t *type);
/* Frees every node through type->free_node and the bucket arrays; d is empty afterwards. */
void dict_clear(dict_t *d, void *ud);

static inline uint64_t dict_size(const dict_t *d)
{
    return d->used[0] + d->used[1];
}
static inline int dict_is_rehashing(const dict_t *d)
{
    return d->rehashidx != -1;
}
/* Memory held by the bucket arrays, in bytes. */
size_t dict_buckets_bytes(const dict_t *d);
uint64_t dict_buckets(const dict_t *d);

/* The node whose key equals key[0..len), or NULL. h must be dict_hash(key, len). */
dict_node_t *dict_find(dict_t *d, const void *key, size_t len, uint32_t h);
/* Adds n (n->hash set by the caller). The key must not be present. */
void dict_insert(dict_t *d, dict_node_t *n);
/* Removes and returns the node with that key, or NULL. Does not free it. */
dict_node_t *dict_unlink(dict_t *d, const void *key, size_t len, uint32_t h);
/* Puts repl in the place of old (same key, e.g. after a realloc of the entry). */
void dict_replace(dict_t *d, dict_node_t *old, dict_node_t *repl);
/* Pre-sizes for n elements. */
void dict_expand(dict_t *d, uint64_t n);
/* Shrinks the bucket array if it is mostly empty. */
void dict_try_shrink(dict_t *d);

/* Moves up to n buckets to the new table; returns 1 while rehashing goes on. */
int dict_rehash(dict_t *d, int n);
/* Rehashes for about ms milliseconds; returns the number of buckets moved. */
int dict_rehash_ms(dict_t *d, int ms);

/* Calls fn on every node of one cursor step and returns the next cursor (0: done).
 * fn must not insert or delete in d. */
typedef void dict_scan_fn(void *ud, dict_node_t *n);
uint64_t dict_scan(dict_t *d, uint64_t cursor, dict_scan_fn *fn, void *ud);

/* A node chosen at random, roughly uniform; NULL if empty. rnd is a caller PRNG value. */
dict_node_t *dict_random(dict_t *d, uint64_t rnd);
/* A node chosen uniformly at random (what SRANDMEMBER and HRANDFIELD need; NULL if empty),
 * from the caller PRNG value rnd. Tables of up to 64 nodes pick an index and walk to it
 * (exactly uniform); larger ones draw a bucket and a chain position below chain_bound,
 * retrying when the position is past the chain's end, so nodes in long chains are as likely
 * as others (the intent of Redis's dictGetFairRandomKey): chain_bound should be a few times
 * the table's fill limit. Mid-rehash, or after 256 misses, falls back to dict_random. */
dict_node_t *dict_random_fair(dict_t *d, uint64_t rnd, uint64_t chain_bound);

/* Unsafe fast iteration (no changes to d during it): for each node, in bucket order. */
typedef struct dict_iter {
    dict_t *d;
    int table;
    uint64_t index;
    dict_node_t *next;
    int safe;
} dict_iter_t;
/* A safe iterator pauses rehashing so the caller may delete the node it was given. */
void dict_iter_init(dict_iter_t *it, dict_t *d, int safe);
dict_node_t *dict_iter_next(dict_iter_t *it);
void dict_iter_deinit(dict_iter_t *it);

#endif
