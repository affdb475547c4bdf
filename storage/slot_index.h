/* slot_index.h - the keys of a db by cluster hash slot (common/keyslot.h), for CLUSTER
 * COUNTKEYSINSLOT / GETKEYSINSLOT and migrations: O(keys in the slot), never a scan of the
 * keyspace.
 *
 * Only a db that cluster mode asked for has one (db_slot_index_enable): then db.c keeps it
 * equal to the keyspace at its two doors (db_add, db_take_value) and at flush/detach; db_swap
 * moves it with the keys. Without it the keyspace pays one NULL test per key added or
 * deleted. Each entry is a small node pointing at the kv_t (which owns the key bytes), in a
 * dict per slot. Loop thread only. */
#ifndef CTE_STORAGE_SLOT_INDEX_H
#define CTE_STORAGE_SLOT_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct kv;
typedef struct slot_index slot_index_t;

/* An empty index. Never fails (aborts on out of memory). Freed with slot_index_free. */
slot_index_t *slot_index_new(void);
void slot_index_free(slot_index_t *si);
/* kv was added to the keyspace / is about to leave it (kv still valid during the call). */
void slot_index_add(slot_index_t *si, struct kv *kv);
void slot_index_del(slot_index_t *si, struct kv *kv);
/* Forgets every key (the keyspace was flushed or detached). */
void slot_index_clear(slot_index_t *si);
/* The number of keys in slot (0..16383). */
uint64_t slot_index_count(const slot_index_t *si, int slot);
/* Up to max keys of slot into out (in no particular order); returns how many. The pointers
 * are valid until the keyspace next changes. */
size_t slot_index_keys(slot_index_t *si, int slot, struct kv **out, size_t max);

#endif
