/* evict.h - maxmemory: the memory limit on RAM that is not a tier, and Redis's eviction
 * policies (noeviction, allkeys-/volatile- lru, lfu, random, and volatile-ttl).
 *
 * What is counted: used_memory (every block from common/alloc.c: keys, values, metadata,
 * client buffers) minus the blocks that hold RAM tiers' blob bytes, which have their own
 * capacity. Before a command runs, the dispatcher asks evict_reject_or_reply(): keys are evicted
 * per maxmemory-policy until the count is under maxmemory; a command that may grow memory is
 * refused with Redis's -OOM error when that is not possible. Reads always go on. Each evicted
 * key is logged to the append-only file as DEL, sends the `evicted` keyspace event and counts in
 * INFO's evicted_keys. Loop thread only. */
#ifndef CTE_SERVER_EVICT_H
#define CTE_SERVER_EVICT_H

#include "server/client.h"
#include "server/command.h"

#include <stddef.h>
#include <stdint.h>

#define EVICT_ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."

/* Results of evict_perform, as Redis's performEvictions. */
enum evict_result {
    EVICT_OK = 0,      /* under the limit (or no limit) */
    EVICT_RUNNING = 1, /* still over, the time limit stopped eviction: the cron goes on */
    EVICT_FAIL = 2,    /* over, and nothing can be evicted (or the policy is noeviction) */
};

/* The memory maxmemory limits: alloc_used_memory() minus RAM tiers' blocks. */
size_t evict_counted_memory(void);

/* Evicts keys until the counted memory is at most maxmemory, for at most budget_us
 * microseconds (checked every 16 keys; UINT64_MAX: no limit). Returns an evict_result. */
int evict_perform(uint64_t budget_us);

/* Before c runs cmd (the dispatcher, after arity and authentication checks): when maxmemory
 * is set, evicts within maxmemory-eviction-tenacity's time limit; then if eviction failed and
 * cmd may grow memory (CMD_DENYOOM, EXEC of a transaction that queued one, or any command to
 * be queued in MULTI) replies -OOM (EXEC: -EXECABORT, and the transaction is dropped) and
 * returns 1: cmd must not run. Returns 0 otherwise. */
int evict_reject_or_reply(client_t *c, const command_t *cmd);

/* Server cron: goes on evicting while over the limit (after a command's eviction ran out of
 * time, or maxmemory was lowered), for at most a quarter of a cron period. */
void evict_cron(void);

/* Forgets the sampled candidates (server_deinit, FLUSHALL is not needed: they are checked). */
void evict_deinit(void);

#endif
