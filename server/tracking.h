/* tracking.h - client-side caching: CLIENT TRACKING and the invalidation messages it asks for.
 *
 * As Redis 7.0. A client with tracking on is told when a key it may have cached changes:
 *   - default mode: the keys of the read-only commands it runs are remembered in a server-wide
 *     table (key -> ids of the clients that read it, keys of every database together); the
 *     first change of such a key sends "invalidate [key]" to each of them and forgets the key.
 *     OPTIN remembers only after CLIENT CACHING YES, OPTOUT all but after CLIENT CACHING NO
 *     (the flag lasts one command, or one transaction).
 *   - BCAST: nothing is remembered; every change of a key under one of the client's prefixes
 *     ("" matches all) is collected and sent, one message per prefix, before the loop sleeps.
 * A RESP3 client gets push frames (>2 invalidate [keys]; a null for FLUSHDB/FLUSHALL); with
 * REDIRECT id they go to that client instead: a push in RESP3, or, to a RESP2 client
 * subscribed to anything, a message on __redis__:invalidate. A redirect target that went
 * away makes the next message a tracking-redir-broken push to the tracking client (RESP3).
 * NOLOOP leaves out what the client changed itself. A push for a client that is running a
 * command (the tracking client, or the one it redirects to) waits until that command (or
 * transaction) has replied: no push lands inside a reply. The key table holds at most
 * tracking-table-max-keys keys: past it, keys are invalidated at random, before each command
 * and from the cron, as Redis does. Pushes bypass CLIENT REPLY OFF, as Redis's do.
 *
 * The core calls the hooks below; changes arrive through the key-event hook (server/hooks.h),
 * flushes through tracking_invalidate_all. Loop thread only. */
#ifndef CTE_SERVER_TRACKING_H
#define CTE_SERVER_TRACKING_H

#include "server/client.h"
#include "server/command.h"
#include "storage/db.h"

#include <stdint.h>

/* CLIENT TRACKING / CACHING / GETREDIR / TRACKINGINFO (rows of CLIENT's subcommand table). */
void tracking_client_tracking_cmd(client_t *c);
void tracking_client_caching_cmd(client_t *c);
void tracking_client_getredir_cmd(client_t *c);
void tracking_client_trackinginfo_cmd(client_t *c);

/* command_call: around one run of c->cmd. begin returns what end needs back (the client that
 * was running a command already, for nested runs such as EXEC's: it stays the one whose
 * changes NOLOOP leaves out). end remembers the keys of a
 * read-only command and, once c's outermost call is over (CLIENT_IN_CALL clear again), sends
 * the invalidations that waited for its reply. */
client_t *tracking_call_begin(client_t *c);
void tracking_call_end(client_t *c, client_t *prev);
/* command_dispatch: before a command that passed its checks runs or is queued (the key table
 * is brought back under its limit), and after every command (cmd: the one resolved, or NULL;
 * CLIENT CACHING's flag ends unless cmd is a CLIENT subcommand or c is in MULTI). */
void tracking_before_command(client_t *c);
void tracking_after_command(client_t *c, const command_t *cmd);

/* The key-event hook: key changed (expired and evicted keys count as changed by no client). */
void tracking_key_event(db_t *db, const char *key, size_t len, int klass, const char *event);
/* FLUSHDB / FLUSHALL (either mode): every tracking client gets the null invalidation and the
 * key table empties. */
void tracking_invalidate_all(void);
/* Before the loop sleeps: sends what BCAST clients collected. */
void tracking_before_sleep(void);
/* The cron: the key-table limit. */
void tracking_cron(long long now_ms);

/* RESET: tracking off. client_free: tracking off and c's state freed. */
void tracking_client_reset(client_t *c);
void tracking_client_free(client_t *c);

/* CLIENT LIST: appends c's tracking flag letters (t, R, B) at p and returns the new end;
 * its redir= value (-1 when tracking is off). */
char *tracking_flag_letters(const client_t *c, char *p);
long long tracking_redir_field(const client_t *c);

/* INFO: clients with tracking on, keys and (key, client) items in the table, BCAST prefixes. */
typedef struct tracking_stats {
    uint64_t clients, keys, items, prefixes;
} tracking_stats_t;
void tracking_stats(tracking_stats_t *st);

/* Frees the tables (server_deinit). */
void tracking_deinit(void);

#endif
