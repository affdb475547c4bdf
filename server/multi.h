/* multi.h - transactions (MULTI/EXEC/DISCARD) and optimistic locking (WATCH/UNWATCH).
 *
 * A client in MULTI gets its commands queued (argv copied out of the query buffer) instead of
 * run; EXEC runs them back to back, which is atomic because one thread runs every command.
 * WATCH records (db, key) pairs in a server-wide table; any change to such a key
 * (server_key_changed, flushes, swaps, expiry) marks the watching clients dirty, and their
 * EXEC then fails with a null reply. Runs on the loop thread. */
#ifndef CTE_SERVER_MULTI_H
#define CTE_SERVER_MULTI_H

#include "server/client.h"
#include "server/command.h"

extern command_t cmds_multi[];

/* 1 if the dispatcher must queue cmd for c instead of running it (c is in MULTI and cmd is
 * not one of EXEC DISCARD MULTI WATCH QUIT RESET). */
int multi_should_queue(const client_t *c, const command_t *cmd);
/* Queues c's current command (c->cmd, c->argv) and replies +QUEUED, or replies an error and
 * flags the transaction when cmd is not allowed in MULTI. */
void multi_queue(client_t *c);
/* The call flags (CMD_*, command_call_flags) of every command c queued, or-ed when each was
 * queued; 0 outside MULTI. EXEC's call flags add them. */
uint32_t multi_queued_flags(const client_t *c);
/* The number of commands c queued (0 outside MULTI), and the i-th of them (0 <= i < count):
 * its command, with its arguments through *argc and *argv (valid until EXEC or DISCARD). For
 * cluster routing, which checks a transaction's keys together at EXEC. */
int multi_queued_count(const client_t *c);
const command_t *multi_queued_get(const client_t *c, int i, int *argc, const resp_arg_t **argv);
/* The dispatcher rejected c->cmd with err (an error line without '-'): when that command is
 * EXEC, the transaction (and WATCH) is discarded and c gets Redis's "EXECABORT Transaction
 * discarded because of: <err>", returning 1; else 0 and the caller replies err itself. */
int multi_exec_rejected(client_t *c, const char *err);
/* Marks c's transaction as failed because a command was rejected while queueing. */
void multi_flag_error(client_t *c);
/* Drops c's transaction and watched keys (RESET, disconnect). */
void multi_reset(client_t *c);

/* The key changed: clients watching it will fail their EXEC. */
void multi_touch_key(db_t *db, const char *key, size_t len);
/* Every watched key of db that exists (or, with other, exists in other) is touched: before
 * FLUSHDB/FLUSHALL (other NULL) and SWAPDB. */
void multi_touch_db(db_t *db, db_t *other);
/* Frees the server-wide watch table (server_deinit). */
void multi_deinit(void);

#endif
