/* hooks.h - how the core reaches the rooms above it without including them.
 *
 * The core (dispatch, transactions, the cron, server_key_changed, the transports' flush)
 * calls persistence, the tag store and search only through what they register here before
 * server_init(): one log of writes (the append-only file) and a list of rooms, each with its
 * command table and its start-up, periodic and key-event work. server/rooms.c registers them;
 * it and main.c are the only files that include every room, so includes inside server/ point
 * one way: cmd/, persist/ and net/ -> the core. Loop thread only. */
#ifndef CTE_SERVER_HOOKS_H
#define CTE_SERVER_HOOKS_H

#include "resp/resp.h"
#include "server/client.h"
#include "server/command.h"
#include "storage/db.h"

#include <stddef.h>

/* The log of writes. Every member may be NULL (nothing to do). */
typedef struct server_log_ops {
    /* a write command in db dbid changed something: log argv (or what replaced it) */
    void (*propagate)(client_t *c, int dbid, int argc, const resp_arg_t *argv);
    /* the server deleted a key by itself (expiry, eviction) */
    void (*propagate_del)(int dbid, const char *key, size_t len);
    /* the command changed nothing: forget what it asked to log instead of its argv */
    void (*replace_argv_drop)(void);
    /* a transaction's writes start / end (EXEC) */
    void (*exec_begin)(void);
    void (*exec_end)(void);
    /* the open transaction ends without being logged: none of its writes reach the log */
    void (*exec_discard)(void);
    /* replies are about to leave: write (and, as configured, sync) what is pending */
    void (*flush)(void);
    /* the error message writes are refused with while the log cannot be written, or NULL */
    const char *(*write_error)(void);
    /* a setting changed (CONFIG SET): returns 0, or -1 with a message in err */
    int (*config_changed)(const char *name, char *err, size_t errlen);
    /* a plan that ran off the loop came back (server/executor.h): a rewrite waiting for
     * file-tier writes in flight to drain may start */
    void (*io_settled)(void);
} server_log_ops_t;

/* A part of the server above the core. Every member but name may be NULL. */
typedef struct server_room {
    const char *name;
    command_t *commands; /* its command table (NULL-name terminated) */
    /* server_init, in registration order: 0, or -1 with a message in err (the start stops) */
    int (*init)(char *err, size_t errlen);
    /* server_deinit, in reverse order */
    void (*deinit)(void);
    /* server_cron */
    void (*cron)(long long now_ms);
    /* server_key_changed, after WATCH and blocked clients were told */
    void (*key_event)(db_t *db, const char *key, size_t len, int klass, const char *event);
    /* a storage plan finished (server/executor.h), inline or off the loop */
    void (*plan_done)(void);
    /* a setting changed (CONFIG SET): 0, or -1 with a message in err (logged) */
    int (*config_changed)(const char *name, char *err, size_t errlen);
} server_room_t;

/* Sets the log of writes (NULL: none). ops must outlive the server. */
void server_set_log(const server_log_ops_t *ops);
/* Adds a room; room must outlive the server. At most SERVER_ROOMS_MAX rooms. */
#define SERVER_ROOMS_MAX 32
void server_add_room(const server_room_t *room);
/* The rooms in registration order, for server.c and command.c; returns the count. */
size_t server_rooms(const server_room_t *const **rooms);

/* A gate every command call passes before the command runs (MIGRATE's keys in flight): it
 * returns 1 when it replied or made c wait instead of running the command, 0 to let it run.
 * NULL (the default): none. */
typedef int server_call_gate_t(client_t *c, const command_t *cmd);
void server_set_call_gate(server_call_gate_t *gate);
/* The gate set, or NULL. */
server_call_gate_t *server_call_gate(void);

/* The core's calls into the log: each does nothing when no log is set. */
void server_log_propagate(client_t *c, int dbid, int argc, const resp_arg_t *argv);
void server_log_propagate_del(int dbid, const char *key, size_t len);
void server_log_replace_argv_drop(void);
void server_log_exec_begin(void);
void server_log_exec_end(void);
void server_log_exec_discard(void);
void server_log_flush(void);
/* NULL while writes may go on, else the error to refuse them with. */
const char *server_log_write_error(void);
/* Every reason to refuse a write now, in Redis's order: the log's error (MISCONF), then too
 * few good replicas (min-replicas-to-write: this server has none). NULL when writes may go. */
const char *server_write_refusal(void);
int server_log_config_changed(const char *name, char *err, size_t errlen);
void server_log_io_settled(void);

#endif
