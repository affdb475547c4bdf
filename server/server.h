/* server.h - the process-wide server state and the hooks every write goes through.
 *
 * One server_t, owned by the loop thread. Commands reach the keyspace through srv.db, the
 * settings through srv.cfg (read directly; CONFIG SET changes them in place). Every command
 * that changes a key calls server_key_changed(): it counts the change (dirty), and is the one
 * place where WATCH, keyspace notifications and later the search index learn about it. The
 * append-only log is fed from command_dispatch by the argv of write commands that changed
 * something. This header does not include uv.h: only net.c and main.c touch libuv. */
#ifndef CTE_SERVER_SERVER_H
#define CTE_SERVER_SERVER_H

#include "config/config.h"
#include "server/client.h"
#include "storage/db.h"

#include <stdint.h>

/* The Redis version HELLO, INFO and LOLWUT report, so that client libraries enable the
 * features of the Redis that cte-server behaves as. */
#define COMPAT_REDIS_VERSION "7.0.15"

/* Keyspace event classes: the notify-keyspace-events bits of config.h, Redis's letters. */
enum notify_class {
    NOTIFY_KEYSPACE = CONFIG_NOTIFY_KEYSPACE, /* K */
    NOTIFY_KEYEVENT = CONFIG_NOTIFY_KEYEVENT, /* E */
    NOTIFY_GENERIC = CONFIG_NOTIFY_GENERIC,   /* g */
    NOTIFY_STRING = CONFIG_NOTIFY_STRING,     /* $ */
    NOTIFY_LIST = CONFIG_NOTIFY_LIST,         /* l */
    NOTIFY_SET = CONFIG_NOTIFY_SET,           /* s */
    NOTIFY_HASH = CONFIG_NOTIFY_HASH,         /* h */
    NOTIFY_ZSET = CONFIG_NOTIFY_ZSET,         /* z */
    NOTIFY_EXPIRED = CONFIG_NOTIFY_EXPIRED,   /* x */
    NOTIFY_EVICTED = CONFIG_NOTIFY_EVICTED,   /* e */
    NOTIFY_STREAM = CONFIG_NOTIFY_STREAM,     /* t */
    NOTIFY_KEY_MISS = CONFIG_NOTIFY_KEY_MISS, /* m */
    NOTIFY_NEW = CONFIG_NOTIFY_NEW,           /* n */
    NOTIFY_TAG = CONFIG_NOTIFY_TAG,           /* T: tag and blob commands (ours) */
};

typedef struct server_stats {
    uint64_t numcommands, numconnections, rejected_conn;
    uint64_t expired_keys, evicted_keys, keyspace_hits, keyspace_misses;
    uint64_t net_input_bytes, net_output_bytes;
    uint64_t shm_data_in_bytes, shm_data_out_bytes; /* through shm data areas (INFO clients) */
    /* socket-spin-us (net.c): spins begun, reads they caught; yields that found the core
     * crowded and stopped every spin for a while (spin.c) */
    uint64_t socket_spins, socket_spin_hits, spin_crowded;
    uint64_t total_error_replies, unexpected_error_replies;
    uint64_t client_qbuf_limit_disconnections, client_outbuf_limit_disconnections;
    uint64_t peak_memory; /* highest used_memory seen by the cron, INFO and MEMORY STATS */
} server_stats_t;

typedef struct server {
    config_t cfg;
    db_t *db;
    int ndb;
    client_t *clients; /* all clients, newest first */
    uint64_t nclients;
    uint64_t nshm_clients; /* of them, on the shared-memory transport (INFO clients) */
    uint64_t next_client_id;
    client_t *pending_write; /* clients with output not yet handed to their transport */
    long long dirty;         /* changes since the last save */
    long long start_ms;
    char run_id[41];
    int shutdown_asap;
    int pause_cron; /* DEBUG PAUSE-CRON 1: server_cron does no periodic work */
    /* while a script runs past busy-reply-threshold: the -BUSY error other clients get for
     * commands not flagged CMD_ALLOW_BUSY (server/script), else NULL */
    const char *busy_error;
    int loading;
    server_stats_t stat;
    void *errors; /* errorstats: dict of error prefix -> count (server/stats.c) */
    void *loop;   /* uv_loop_t *, for net.c and main.c */
    int tcp_port;    /* the port actually bound (port 0 picks one) */
    const char *executable;
    char init_error[256]; /* set by server_init when the start must fail */
    size_t startup_memory; /* used_memory when server_init was done (MEMORY STATS) */
} server_t;

extern server_t srv;

/* Sets up databases, tables and tiers from srv.cfg (no sockets). Used by main and by unit
 * tests. When a tier cannot be opened, srv.init_error says why (main then stops). */
void server_init(void);
/* Frees what server_init made. */
void server_deinit(void);
/* Copies encoding limits and other settings from srv.cfg to storage (after CONFIG SET). */
void server_apply_config(void);

/* A key was changed by client c (c may be NULL for changes the server makes itself).
 * event is the keyspace event name ("set", "hset", "del"...), class a NOTIFY_* bit. */
void server_key_changed(client_t *c, db_t *db, const char *key, size_t len, int klass,
                        const char *event);
/* Runs the periodic jobs (active expiry, rehashing, timeouts); the loop calls it hz times a
 * second. */
void server_cron(void);
/* Counts an error reply by its prefix ("ERR", "WRONGTYPE"...), for INFO errorstats. */
void server_count_error(const char *msg);
/* Appends the errorstat_<prefix>:count=N lines of INFO errorstats. */
void server_info_errorstats(buf_t *b);
/* Commands per second over the last ~1.6 s (INFO instantaneous_ops_per_sec). */
uint64_t server_ops_per_sec(void);
/* The highest used_memory seen (srv.stat.peak_memory, raised to now's first); CONFIG RESETSTAT
 * starts it again, as Redis. */
size_t server_memory_peak(void);

#endif
