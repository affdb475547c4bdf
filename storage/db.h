/* db.h - one numbered database of the keyspace: keys to typed values, with expiry.
 *
 * A key lives in a kv_t: one allocation holding the dict node, the value pointer and the key
 * bytes. Keys with a time to live are also in the expires dict, whose nodes point at the kv_t;
 * a flag bit in the kv_t says so, so lookups of keys without a TTL never touch the expires
 * dict. Expiry is lazy (db_lookup deletes an expired key it meets) plus an active cycle that
 * samples keys with a TTL in bounded steps. Storage reports deletions it decides itself
 * (expiry) through the observer; deletions by commands are the caller's to report.
 * Runs on the loop thread. */
#ifndef CTE_STORAGE_DB_H
#define CTE_STORAGE_DB_H

#include "common/dict.h"
#include "storage/object.h"

#include <stddef.h>
#include <stdint.h>

#define KV_HAS_EXPIRE 0x80000000u
#define KV_LEN_MASK 0x7fffffffu

typedef struct kv {
    dict_node_t node; /* node.aux: key length | KV_HAS_EXPIRE */
    obj_t *val;
    char key[]; /* NUL-terminated */
} kv_t;

static inline const char *kv_key(const kv_t *kv)
{
    return kv->key;
}
static inline size_t kv_keylen(const kv_t *kv)
{
    return kv->node.aux & KV_LEN_MASK;
}
static inline int kv_has_expire(const kv_t *kv)
{
    return (kv->node.aux & KV_HAS_EXPIRE) != 0;
}

typedef struct db {
    dict_t keys;
    dict_t expires;
    int id;
    long long avg_ttl;
    uint64_t expire_cursor;
    uint64_t expired_stale_perc; /* for INFO, percent x100 */
    struct slot_index *slots;    /* keys by hash slot (cluster mode), or NULL */
} db_t;

enum { DB_DEL_EXPIRED = 1, DB_DEL_EVICTED = 2 };

/* Called before storage deletes a key on its own (expiry, eviction): the key and its value are
 * still in place during the call. */
typedef void db_deleted_fn(void *ud, db_t *db, kv_t *kv, int reason);
void db_set_observer(db_deleted_fn *fn, void *ud);
/* Called after db_add put a new key in db (the server sends Redis's "new" keyspace event). */
typedef void db_added_fn(void *ud, db_t *db, kv_t *kv);
void db_set_add_observer(db_added_fn *fn, void *ud);

/* When set, lookups do not delete expired keys (loading, replicas); they still hide them. */
extern int db_expire_paused;
/* The time that expiry decisions use, in Unix ms; 0 means "read the clock". The server sets
 * it for the duration of each command, as Redis freezes time during a command. */
extern long long db_now_ms;

void db_init(db_t *db, int id);
/* Keeps db's keys indexed by cluster hash slot from now on (storage/slot_index.h), starting
 * with the keys it holds; db_deinit frees the index. Calling it again does nothing. */
void db_slot_index_enable(db_t *db);
/* Frees every key and value. */
void db_deinit(db_t *db);

/* The entry for key, ignoring TTLs. NULL if absent. */
kv_t *db_find(db_t *db, const void *key, size_t len);
/* The entry for key, or NULL if absent or expired (an expired key is deleted, with the
 * observer told). Updates the value's access clock. */
kv_t *db_lookup(db_t *db, const void *key, size_t len);
/* Adds a key that must not exist (it may exist expired: call db_lookup first). Takes val. */
kv_t *db_add(db_t *db, const void *key, size_t len, obj_t *val);
/* Adds or overwrites. An overwrite frees the old value and drops the TTL unless keep_ttl. */
kv_t *db_set(db_t *db, const void *key, size_t len, obj_t *val, int keep_ttl);
/* Puts val in kv's place (a new object for the key). Frees the old value unless it is val
 * itself. After a realloc that moved the value (str_grow), the old block is already gone:
 * assign kv->val directly instead. */
void db_replace_value(db_t *db, kv_t *kv, obj_t *val);
/* Removes a key with its TTL and frees its value. Returns 1 if it existed. */
int db_delete(db_t *db, const void *key, size_t len);
void db_delete_kv(db_t *db, kv_t *kv);
/* Deletes kv because the server chose to (eviction): the observer is told first, with
 * DB_DEL_EVICTED, as for an expired key. */
void db_evict(db_t *db, kv_t *kv);
/* Removes the key but hands its value to the caller (RENAME, MOVE). */
obj_t *db_take_value(db_t *db, kv_t *kv);

/* TTLs, absolute Unix ms. */
void db_set_expire(db_t *db, kv_t *kv, long long when_ms);
long long db_get_expire(db_t *db, const kv_t *kv); /* -1 if none */
int db_remove_expire(db_t *db, kv_t *kv);          /* 1 if there was one */
int db_is_expired(db_t *db, const kv_t *kv);

static inline uint64_t db_size(const db_t *db)
{
    return dict_size(&db->keys);
}
static inline uint64_t db_expires_size(const db_t *db)
{
    return dict_size(&db->expires);
}

/* Deletes every key; returns how many. */
uint64_t db_flush(db_t *db);
/* Swaps the contents of two databases (SWAPDB). */
/* Moves every key of db (its keys and expires dicts) into *keys and *expires, which the
 * caller frees with dict_clear (on any thread: the dicts' types free kv nodes and their
 * values), and leaves db empty. Returns the number of keys moved. O(1). */
uint64_t db_detach(db_t *db, dict_t *keys, dict_t *expires);
void db_swap(db_t *a, db_t *b);
/* A random live key, or NULL if none (expired keys met on the way are deleted). */
kv_t *db_random(db_t *db);
/* Picks up to n entries of db at random (dict_random; the same entry may come twice), from
 * every key or, with volatile_only, from the keys with a TTL. Writes them to out and, when when
 * is not NULL, their expiry times (absolute ms, -1 without TTL) to when; returns how many (0
 * when there is no such key). Expired keys are not skipped. For eviction sampling. */
int db_sample(db_t *db, int volatile_only, kv_t **out, long long *when, int n);
/* One SCAN step over the keys (expired keys are not skipped here: the caller checks). */
typedef void db_scan_fn(void *ud, kv_t *kv);
uint64_t db_scan(db_t *db, uint64_t cursor, db_scan_fn *fn, void *ud);

/* One bounded active expiry pass over the databases, as Redis's slow cycle: samples keys with
 * a TTL and deletes the expired ones, for at most budget_us microseconds. Returns the number
 * of keys deleted. */
uint64_t db_active_expire(db_t *dbs, int ndb, uint64_t budget_us);
/* Incremental rehash of both dicts for about ms (server cron). */
void db_rehash(db_t *db, int ms);
/* Shrinks dicts that became sparse (server cron). */
void db_try_shrink(db_t *db);

#endif
