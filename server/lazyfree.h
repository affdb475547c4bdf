/* lazyfree.h - values freed on a background thread (UNLINK, and DEL with
 * lazyfree-lazy-user-del yes), as Redis's lazyfree: a value whose freeing costs more than
 * LAZYFREE_THRESHOLD elements leaves the keyspace at once and is freed by one worker thread,
 * so the command does not hold the loop for it; smaller values are freed at once.
 *
 * Only lists, sets, sorted sets and hashes go to the thread: freeing them touches nothing but
 * their own memory (the allocator and its counter are thread-safe). Tags stay on the loop
 * thread (their blobs hold tier extents and search entries). INFO reports
 * lazyfree_pending_objects (queued, not yet freed) and lazyfreed_objects (freed by the thread
 * since the start or CONFIG RESETSTAT). Functions are called on the loop thread. */
#ifndef CTE_SERVER_LAZYFREE_H
#define CTE_SERVER_LAZYFREE_H

#include "storage/db.h"
#include "storage/object.h"

#include <stdint.h>

#define LAZYFREE_THRESHOLD 64

/* Takes o (already out of the keyspace): frees it now, or queues it for the thread (started on
 * first use). Never fails: if the thread cannot start, o is freed now. */
void lazyfree_value(obj_t *o);
/* FLUSHDB/FLUSHALL ASYNC: empties db at once and frees its keys and values on the thread
 * (Redis's emptyDbAsync), unless a tag is alive in any database: tags are the loop thread's
 * (tier space, search entries), and then db is emptied and freed now. Returns the number of
 * keys db held. Never fails. */
uint64_t lazyfree_db(db_t *db);
/* Values queued and not yet freed (a flushed database counts its keys). */
uint64_t lazyfree_pending(void);
/* Values the thread freed since the start or the last lazyfree_reset_stats. */
uint64_t lazyfree_freed(void);
void lazyfree_reset_stats(void);
/* Waits until the queue is empty (tests, shutdown). */
void lazyfree_drain(void);
/* Drains the queue and stops the thread (server_deinit); lazyfree_value starts it again. */
void lazyfree_stop(void);

#endif
