/* aof.h - the append-only file: every change as RESP commands, fsynced as appendfsync says,
 * rewritten to a compact form in a forked child, replayed at start.
 *
 * Feeding: command_call() hands the argv of every write command that changed something to
 * aof_propagate() (a command may first replace what is logged with aof_replace_argv(), e.g.
 * SPOP as SREM); deletions the server makes itself (expiry, eviction) go through
 * aof_propagate_del(). Each record is preceded, when needed, by SELECT and by a "#MS:<unix
 * ms>" annotation line: the loader runs the commands that follow with that time frozen as
 * "now", so blob times and relative expiries come back as they were.
 *
 * Writing: records collect in memory during a loop turn; aof_flush() (called before replies
 * are handed to sockets) writes them, and with appendfsync always also fsyncs them, so a
 * reply never leaves before its write is on disk. With everysec a background thread fsyncs
 * once a second; with no, the kernel decides. Loop thread only. */
#ifndef CTE_SERVER_AOF_H
#define CTE_SERVER_AOF_H

#include "common/buf.h"
#include "resp/resp.h"
#include "server/client.h"
#include "server/command.h"

#include <stddef.h>

/* Opens (creating if needed) the AOF for appending when appendonly is on. Returns 0 or -1
 * with a message logged. */
int aof_open(void);
/* Loads the AOF (or the file SAVE wrote) at start. Every 10 ms or so of loading, between two
 * commands, it calls events() (NULL: never): main.c runs the loop there, so clients connect
 * and get -LOADING (srv.loading is set) and INFO shows the progress. Returns 0 (also when there
 * is no file), -1 when the start must stop (corruption, or a command that could not be
 * replayed in full; message logged), or AOF_LOAD_STOPPED when a shutdown (SIGTERM, SHUTDOWN)
 * arrived meanwhile: the load stopped part way, the file untouched. */
#define AOF_LOAD_STOPPED 1
int aof_load(void (*events)(void));
/* Called while loading by a command that could not be replayed in full (a blob no tier has
 * room for, a tier write that failed), after it logged why: the load stops after this command
 * and aof_load fails, so the start stops rather than serve a dataset missing acknowledged
 * writes. */
void aof_load_abort(void);
/* While loading, a replayed TPUT/TTRUNCATE of blob in key (db dbid) failed in its tier
 * write (why) and storage undid it. A write that failed when it first ran is followed in the
 * file by what undid it (TDEL or TTRUNCATE back, see aof_load_write_undone), so the load goes
 * on; a failed write the file never undoes was acknowledged, and the start stops at the end
 * of the file naming it. */
void aof_load_write_failed(int dbid, const char *key, size_t klen, const char *blob,
                           size_t blen, const char *why);
/* While loading, TDEL or a TTRUNCATE (to at most the blob's size) of blob in key replayed:
 * it undoes a failed write noted by aof_load_write_failed, if any. */
void aof_load_write_undone(int dbid, const char *key, size_t klen, const char *blob,
                           size_t blen);
/* DEBUG RELOAD: saves (aof_rewrite_now), empties every database and loads the file again.
 * Returns 0 or -1 with a message in err. */
int aof_reload(char *err, size_t errlen);
/* Flushes and fsyncs what is pending and stops the background thread (shutdown). */
void aof_shutdown(void);

/* A write command in db dbid changed something: log argv (or what the command put in its
 * place with aof_replace_argv). */
void aof_propagate(client_t *c, int dbid, int argc, const resp_arg_t *argv);
/* The server deleted a key by itself (expiry, eviction): logs DEL. */
void aof_propagate_del(int dbid, const char *key, size_t len);
/* Called by a command that must be logged as other commands (non-deterministic, relative
 * times, blocking forms): each call adds one command to log instead of the client's argv. */
void aof_replace_argv(client_t *c, int argc, const resp_arg_t *argv);
/* Forgets what aof_replace_argv collected (the command changed nothing after all). */
void aof_replace_argv_drop(void);
/* Starts / ends a transaction's records (EXEC wraps what it propagates in MULTI ... EXEC). */
void aof_exec_begin(void);
void aof_exec_end(void);
/* Drops the open transaction's records (none of them reaches the file) and ends it. */
void aof_exec_discard(void);

/* Writes pending records (and fsyncs them under appendfsync always). Before replies go out. */
void aof_flush(void);
/* A rewrite waiting for file-tier writes to drain forks now if they have (after each I/O). */
void aof_try_fork(void);
/* Periodic work: everysec fsync, reaping a rewrite child, automatic rewrites. */
void aof_cron(void);
/* After CONFIG SET appendonly / appendfsync. Returns 0 or -1 with a message in err. */
int aof_config_changed(char *err, size_t errlen);

/* Starts a background rewrite. Returns 0, 1 if one is already running (it is scheduled to
 * run again after), or -1 with a message in err. */
int aof_rewrite_background(char *err, size_t errlen);
/* Rewrites in the foreground (SAVE). Returns 0 or -1 with a message in err. */
int aof_rewrite_now(char *err, size_t errlen);
/* While a rewrite waits for file-tier writes in flight to finish before it forks, the name
 * that new tag writes wait on (block_on_name): its length, written into name (>= 16 bytes).
 * 0 when no rewrite waits. */
size_t aof_fork_waitname(char *name);
/* Non-zero while the last write to the AOF failed: write commands are refused with
 * aof_write_error_msg() (Redis's MISCONF). */
int aof_write_failing(void);
const char *aof_write_error_msg(void);
/* Unix seconds of the last successful save or rewrite (LASTSAVE). */
long long aof_last_save(void);
/* The "# Persistence" section of INFO. */
void aof_info(buf_t *b);

/* BGREWRITEAOF, SAVE and the other persistence commands. */
extern command_t cmds_aof[];

#endif
