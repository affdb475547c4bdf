/* block.h - clients blocked on keys (BLPOP, BLMOVE, BZPOPMIN ...) and their wake-ups.
 *
 * A blocking command that finds nothing to serve calls block_on_keys(); the client then stops
 * reading commands. Whenever a key a client waits on changes (server_key_changed), the key is
 * marked ready; after the current command (or EXEC) finishes, block_handle_ready() runs each
 * waiting client's command again, oldest first: a command that now replies unblocks its client,
 * one that still finds nothing stays blocked in its place. A timeout, CLIENT UNBLOCK or a
 * disconnect ends the wait. Runs on the loop thread. */
#ifndef CTE_SERVER_BLOCK_H
#define CTE_SERVER_BLOCK_H

#include "server/client.h"

enum block_timeout_reply { BLOCK_REPLY_NULL_ARRAY, BLOCK_REPLY_NULL, BLOCK_REPLY_ZERO /* WAIT */ };

/* Parses a blocking timeout in seconds (a double, >= 0) into absolute Unix ms (0 = forever).
 * Replies with Redis's error and returns -1 on bad input. */
int block_timeout_or_reply(client_t *c, const resp_arg_t *a, long long *deadline_ms);

/* The absolute deadline of a timeout of ms > 0 from now (Unix ms); 0 (forever) when it lies
 * past what a long long holds, as Redis's wrapped deadline never comes. */
long long block_deadline(long long now, long long ms);
/* Blocks c on keys (argv indexes in pos[0..n)) until deadline_ms (0 = forever). The current
 * command and its arguments are kept to run again. When c is already blocked (its command is
 * running again and still found nothing), keeps it where it is. */
void block_on_keys(client_t *c, const int *pos, int n, long long deadline_ms, int timeout_reply);
/* block_on_keys on the n consecutive arguments argv[first..first+n). */
void block_on_key_range(client_t *c, int first, int n, long long deadline_ms, int timeout_reply);
/* Replaces argument idx of the command c just blocked with (kept by block_on_keys) by a copy
 * of p[0..len): the retries see it instead (XREAD resolves "$" to the id of the moment it
 * blocked). Does nothing when c is not blocked. */
void block_replace_arg(client_t *c, int idx, const void *p, size_t len);
/* 1 while c's blocked command is running again (the command must not re-parse a timeout). */
int block_is_retry(const client_t *c);
/* 1 if c's command just left it waiting on keys (it blocked, or its retry found nothing
 * again): such a run is not counted in the command's calls, as Redis counts a blocking command
 * once, when it is served. */
int block_waiting(const client_t *c);
/* A key changed: clients blocked on it will retry after the current command. */
void block_signal_key(db_t *db, const char *key, size_t len);
/* Runs the retries for every ready key (after each top-level command). */
void block_handle_ready(void);
/* Unblocks clients whose deadline passed, replying the timeout reply (server cron / timer). */
void block_check_timeouts(long long now_ms);
/* The earliest deadline of any blocked client, 0 if none. */
long long block_next_deadline(void);
/* Ends c's wait with the timeout reply, or with an UNBLOCKED error when err is set
 * (CLIENT UNBLOCK). Returns 0 if c was not blocked. */
int block_unblock(client_t *c, int err);
/* Ends c's wait on keys with the error msg (without '-'; cluster mode: the slot moved).
 * Returns 0 if c was not blocked on keys. */
int block_unblock_error(client_t *c, const char *msg);
/* When c waits on keys: its command, and through *argc, *argv its arguments and through *key
 * the argv index of the first key waited on; else NULL. */
struct command;
const struct command *block_keys_of(const client_t *c, int *argc, const resp_arg_t **argv, int *key);
/* Frees c's blocking state without replying (disconnect). */
void block_client_reset(client_t *c);
/* Blocks c until the raw name is signalled (block_signal_name), then runs its command again:
 * for waits on things that are not keys (a busy blob, room on a tier). No timeout. */
void block_on_name(client_t *c, const char *name, size_t len);
/* Marks a raw name ready: its waiters retry after the current command, or at the next
 * block_handle_ready(). */
void block_signal_name(const char *name, size_t len);

/* c waits for an operation running off the loop (file-tier I/O) that will reply and then
 * call block_io_done(c); c reads no commands meanwhile, so replies stay in order. If c goes
 * away first, detach(job) is called so the operation forgets it. */
void block_for_io(client_t *c, void (*detach)(void *job), void *job);
void block_io_done(client_t *c);

/* Holds c's current command back until block_release_postponed() (CLIENT PAUSE). */
void block_postpone(client_t *c);
/* Runs every postponed command, oldest first, and lets those clients read again. */
void block_release_postponed(void);
/* Number of blocked clients (INFO blocked_clients). */
uint64_t block_count(void);
/* SWAPDB changed the contents of dbs a and b (FLUSHDB/FLUSHALL: a == b): retry every wait on
 * them. */
void block_swap_db(int a, int b);
void block_deinit(void);

#endif
