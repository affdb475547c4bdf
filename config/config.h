/* config.h - the server's settings: loaded from YAML and the command line, read and changed by
 * CONFIG GET / SET / REWRITE.
 *
 * A config_t is a plain struct that the server reads directly (c->port, c->maxmemory). Every key
 * is one row of one table inside config/: its name (Redis's name where Redis has the setting),
 * an optional alias, type, default, range, flags and a one-line doc. YAML files, command-line
 * options, CONFIG SET and the defaults themselves all go through the same parser; CONFIG GET,
 * CONFIG REWRITE and the Markdown reference (`cte-server --config-doc`) through the same
 * formatter. Key names are case-insensitive everywhere.
 *
 * Values are written as in redis.conf:
 *   bool     yes | no (a YAML file may also say true/false/on/off)
 *   int      a decimal integer
 *   memory   a byte count with an optional unit, case-insensitive: b, k = 1000, kb = 1024,
 *            m, mb, g, gb, t, tb. CONFIG GET shows plain bytes, as Redis does.
 *   enum     one of the key's names
 *   list     space-separated words (in YAML also a list)
 *   special  client-output-buffer-limit, notify-keyspace-events and tiers: see their fields.
 *
 * YAML: a mapping of key: value. The nested mappings `search:` and `shm:` stand for the keys
 * search-<key> and shm-<key>; `tiers:` is a list of {name, kind, capacity, path, score}.
 *
 * Every function that can fail returns 0 on success or -1 with a one-line message in err (a
 * NUL-terminated string cut to errlen bytes; err may be NULL when errlen is 0).
 *
 * Not thread-safe: the loop thread owns the config_t; other threads get copies of what they
 * need. */
#ifndef CTE_CONFIG_CONFIG_H
#define CTE_CONFIG_CONFIG_H

#include "common/buf.h"

#include <stddef.h>

#define CONFIG_MAX_TIERS 16
#define CONFIG_MAX_BIND 16

/* client-output-buffer-limit classes, Redis's order. */
enum {
    CONFIG_CLIENT_NORMAL,
    CONFIG_CLIENT_REPLICA,
    CONFIG_CLIENT_PUBSUB,
    CONFIG_CLIENT_CLASSES,
};

/* appendfsync */
enum { CONFIG_FSYNC_ALWAYS, CONFIG_FSYNC_EVERYSEC, CONFIG_FSYNC_NO };

/* loglevel, least severe first: log a message when its level >= c->loglevel. */
enum {
    CONFIG_LOG_DEBUG,
    CONFIG_LOG_VERBOSE,
    CONFIG_LOG_NOTICE,
    CONFIG_LOG_WARNING,
    CONFIG_LOG_NOTHING,
};

/* maxmemory-policy */
enum {
    CONFIG_MAXMEMORY_VOLATILE_LRU,
    CONFIG_MAXMEMORY_VOLATILE_LFU,
    CONFIG_MAXMEMORY_VOLATILE_RANDOM,
    CONFIG_MAXMEMORY_VOLATILE_TTL,
    CONFIG_MAXMEMORY_ALLKEYS_LRU,
    CONFIG_MAXMEMORY_ALLKEYS_LFU,
    CONFIG_MAXMEMORY_ALLKEYS_RANDOM,
    CONFIG_MAXMEMORY_NOEVICTION,
};

/* supervised */
enum { CONFIG_SUPERVISED_NO, CONFIG_SUPERVISED_SYSTEMD, CONFIG_SUPERVISED_AUTO };

/* cluster-preferred-endpoint-type */
enum { CONFIG_ENDPOINT_IP, CONFIG_ENDPOINT_HOSTNAME, CONFIG_ENDPOINT_UNKNOWN };

/* enable-debug-command: LOCAL allows DEBUG from loopback and Unix-socket clients only. */
enum { CONFIG_DEBUG_CMD_NO, CONFIG_DEBUG_CMD_YES, CONFIG_DEBUG_CMD_LOCAL };

/* tier kinds */
enum { CONFIG_TIER_RAM, CONFIG_TIER_FILE };

/* notify-keyspace-events bits, with Redis's values and letters. */
#define CONFIG_NOTIFY_KEYSPACE (1 << 0)  /* K */
#define CONFIG_NOTIFY_KEYEVENT (1 << 1)  /* E */
#define CONFIG_NOTIFY_GENERIC (1 << 2)   /* g */
#define CONFIG_NOTIFY_STRING (1 << 3)    /* $ */
#define CONFIG_NOTIFY_LIST (1 << 4)      /* l */
#define CONFIG_NOTIFY_SET (1 << 5)       /* s */
#define CONFIG_NOTIFY_HASH (1 << 6)      /* h */
#define CONFIG_NOTIFY_ZSET (1 << 7)      /* z */
#define CONFIG_NOTIFY_EXPIRED (1 << 8)   /* x */
#define CONFIG_NOTIFY_EVICTED (1 << 9)   /* e */
#define CONFIG_NOTIFY_STREAM (1 << 10)   /* t */
#define CONFIG_NOTIFY_KEY_MISS (1 << 11) /* m, not part of A */
#define CONFIG_NOTIFY_MODULE (1 << 13)   /* d */
#define CONFIG_NOTIFY_NEW (1 << 14)      /* n, not part of A */
#define CONFIG_NOTIFY_TAG (1 << 15)      /* T: tag and blob commands (ours), not part of A */
#define CONFIG_NOTIFY_ALL                                                                          \
    (CONFIG_NOTIFY_GENERIC | CONFIG_NOTIFY_STRING | CONFIG_NOTIFY_LIST | CONFIG_NOTIFY_SET |       \
     CONFIG_NOTIFY_HASH | CONFIG_NOTIFY_ZSET | CONFIG_NOTIFY_EXPIRED | CONFIG_NOTIFY_EVICTED |     \
     CONFIG_NOTIFY_STREAM | CONFIG_NOTIFY_MODULE) /* A */

/* A list of strings (bind). items[0..count-1] are owned by the config_t. */
typedef struct config_strlist {
    char **items;
    int count;
} config_strlist_t;

/* One client-output-buffer-limit class. 0 means no limit. */
typedef struct config_obuf_limit {
    long long hard_bytes;
    long long soft_bytes;
    long long soft_seconds;
} config_obuf_limit_t;

/* One storage tier, as configured (fastest first). */
typedef struct config_tier {
    char *name;         /* unique, [A-Za-z0-9_.-]+ */
    int kind;           /* CONFIG_TIER_RAM or CONFIG_TIER_FILE */
    long long capacity; /* bytes, > 0 */
    char *path;         /* file tiers: directory, relative paths are relative to dir;
                           ram tiers: "" */
    double score;       /* in [0, 1], or -1 when unset (spread evenly by the tier module) */
} config_tier_t;

typedef void config_apply_fn(const char *name, void *ud);

/* The settings. Strings are never NULL (an unset string is ""), and are owned by the config_t:
 * a pointer read from it is valid until that key changes (config_set, config_set_many) or the
 * whole config is replaced (config_load_*, config_apply_args) or deinitialized. */
typedef struct config {
    /* network */
    int port;              /* port */
    config_strlist_t bind; /* bind: "-" prefix = optional address, as Redis */
    char *unixsocket;      /* unixsocket: "" = none */
    int unixsocketperm;    /* unixsocketperm: mode bits, e.g. 0700 */
    int protected_mode;    /* protected-mode */
    char *requirepass;     /* requirepass: "" = none */
    char *aclfile;             /* aclfile: "" = none */
    int acl_pubsub_default;    /* acl-pubsub-default: 0 resetchannels, 1 allchannels */
    long long acllog_max_len;  /* acllog-max-len */
    config_strlist_t users;    /* users: ACL rules, one user per item */
    int maxclients;        /* maxclients */
    int timeout;           /* timeout: idle seconds, 0 = never */
    int tcp_keepalive;     /* tcp-keepalive: seconds, 0 = off */
    int tcp_backlog;       /* tcp-backlog */
    int io_threads;        /* io-threads */
    int socket_spin_us;    /* socket-spin-us: 0 = never spin */
    /* general */
    char *dir;                /* dir */
    int databases;            /* databases */
    int daemonize;            /* daemonize */
    int supervised;           /* supervised: CONFIG_SUPERVISED_* */
    char *pidfile;            /* pidfile: "" = none */
    int loglevel;             /* loglevel: CONFIG_LOG_* */
    char *logfile;            /* logfile: "" = stdout */
    int hz;                   /* hz */
    int enable_debug_command; /* enable-debug-command: CONFIG_DEBUG_CMD_* */
    /* limits and memory */
    long long proto_max_bulk_len;                                  /* proto-max-bulk-len */
    long long client_query_buffer_limit;                           /* client-query-buffer-limit */
    config_obuf_limit_t client_obuf_limits[CONFIG_CLIENT_CLASSES]; /* client-output-buffer-limit */
    long long maxmemory;                                           /* maxmemory: 0 = none */
    long long max_reply_bytes;                                     /* max-reply-bytes */
    int tget_stall_timeout; /* tget-stall-timeout: seconds a streamed TGET may go unread */
    int maxmemory_policy; /* maxmemory-policy: CONFIG_MAXMEMORY_* */
    int maxmemory_samples; /* maxmemory-samples */
    int maxmemory_eviction_tenacity; /* maxmemory-eviction-tenacity: 0..100 */
    int busy_reply_threshold;        /* busy-reply-threshold (lua-time-limit): ms */
    int lfu_log_factor;   /* lfu-log-factor */
    int lfu_decay_time;   /* lfu-decay-time: minutes */
    int tracking_table_max_keys; /* tracking-table-max-keys: 0 = no limit */
    /* persistence */
    int appendonly;                      /* appendonly */
    char *appendfilename;                /* appendfilename: a name inside dir */
    int appendfsync;                     /* appendfsync: CONFIG_FSYNC_* */
    int aof_load_truncated;              /* aof-load-truncated */
    int auto_aof_rewrite_percentage;     /* auto-aof-rewrite-percentage */
    long long auto_aof_rewrite_min_size; /* auto-aof-rewrite-min-size */
    char *save;                          /* save: accepted, ignored */
    /* keyspace */
    int lazyfree_lazy_user_del;          /* lazyfree-lazy-user-del */
    int active_expire_enabled;           /* active-expire-enabled */
    int activerehashing;                 /* activerehashing */
    int notify_keyspace_events;          /* notify-keyspace-events: CONFIG_NOTIFY_* bits */
    long long hash_max_listpack_entries; /* hash-max-listpack-entries */
    long long hash_max_listpack_value;   /* hash-max-listpack-value */
    long long zset_max_listpack_entries; /* zset-max-listpack-entries */
    long long zset_max_listpack_value;   /* zset-max-listpack-value */
    long long set_max_intset_entries;    /* set-max-intset-entries */
    long long set_max_listpack_entries;  /* set-max-listpack-entries */
    long long set_max_listpack_value;    /* set-max-listpack-value */
    int list_max_listpack_size;          /* list-max-listpack-size */
    int list_compress_depth;             /* list-compress-depth */
    long long stream_node_max_bytes;     /* stream-node-max-bytes */
    long long stream_node_max_entries;   /* stream-node-max-entries */
    long long hll_sparse_max_bytes;      /* hll-sparse-max-bytes */
    /* introspection */
    long long slowlog_log_slower_than;   /* slowlog-log-slower-than: microseconds, -1 = off */
    long long slowlog_max_len;           /* slowlog-max-len */
    long long latency_monitor_threshold; /* latency-monitor-threshold: milliseconds */
    /* search: */
    int search_enabled;                  /* search-enabled */
    long long search_max_bytes_per_blob; /* search-max-bytes-per-blob */
    int search_skip_binary;              /* search-skip-binary */
    /* shm: */
    int shm_enabled;         /* shm-enabled */
    long long shm_ring_size; /* shm-ring-size */
    long long shm_data_size; /* shm-data-size */
    /* cluster (server/cluster/cluster.h): */
    int cluster_enabled;                       /* cluster-enabled */
    char *cluster_config_file;                 /* cluster-config-file: inside dir */
    long long cluster_node_timeout;            /* cluster-node-timeout: ms */
    int cluster_port;                          /* cluster-port: 0 = port + 10000 */
    char *cluster_announce_ip;                 /* cluster-announce-ip: "" = learned */
    int cluster_announce_port;                 /* cluster-announce-port: 0 = port */
    int cluster_announce_bus_port;             /* cluster-announce-bus-port: 0 = bus port */
    char *cluster_announce_hostname;           /* cluster-announce-hostname */
    int cluster_require_full_coverage;         /* cluster-require-full-coverage */
    int cluster_allow_reads_when_down;         /* cluster-allow-reads-when-down */
    int cluster_allow_pubsubshard_when_down;   /* cluster-allow-pubsubshard-when-down */
    int cluster_preferred_endpoint_type;       /* CONFIG_ENDPOINT_* */
    /* tiers: */
    long long max_blob_size;               /* max-blob-size */
    int organizer;                         /* organizer */
    int organizer_batch;                   /* organizer-batch */
    int organizer_half_life;               /* organizer-half-life: seconds */
    config_tier_t tiers[CONFIG_MAX_TIERS]; /* tiers[0..ntiers-1], fastest first */
    int ntiers;                            /* >= 1 */
    /* Redis 7.0 keys accepted for compatibility and inert here (CONFIG GET shows what CONFIG
     * SET stored; nothing reads them): replication, RDB, defragmentation, shutdown
     * signals. The README's configuration reference marks each row. */
    int latency_tracking;                    /* latency-tracking */
    int min_replicas_to_write;               /* min-replicas-to-write */
    int min_replicas_max_lag;                /* min-replicas-max-lag: seconds */
    char *latency_tracking_info_percentiles; /* latency-tracking-info-percentiles */
    struct {
        long long maxmemory_clients; /* maxmemory-clients: bytes, or -percent */
        long long repl_backlog_size, active_defrag_ignore_bytes;
        int repl_backlog_ttl, repl_timeout, repl_ping_replica_period, replica_priority;
        int repl_diskless_sync_delay, repl_diskless_load, shutdown_timeout;
        int active_defrag_threshold_lower, active_defrag_threshold_upper;
        int active_defrag_cycle_min, active_defrag_cycle_max, active_defrag_max_scan_fields;
        int active_expire_effort;
        int replica_read_only, replica_serve_stale_data, replica_ignore_maxmemory;
        int replica_lazy_flush, replica_announced, repl_diskless_sync, repl_disable_tcp_nodelay;
        int lazyfree_lazy_eviction, lazyfree_lazy_expire, lazyfree_lazy_server_del;
        int lazyfree_lazy_user_flush, activedefrag, stop_writes_on_bgsave_error;
        int rdbcompression, rdbchecksum, dynamic_hz, jemalloc_bg_thread, crash_log_enabled;
        int crash_memcheck_enabled, aof_use_rdb_preamble, aof_timestamp_enabled;
        int aof_rewrite_incremental_fsync, rdb_save_incremental_fsync;
        int no_appendfsync_on_rewrite, disable_thp;
        int key_load_delay;
        char *masterauth, *masteruser, *replica_announce_ip, *dbfilename, *replicaof;
        int shutdown_on_sigint, shutdown_on_sigterm; /* bits: save nosave now force */
    } inert;

    /* Not settings. */
    char *config_file; /* absolute path of the file config_apply_args loaded, NULL when the
                          server runs on the embedded default (CONFIG REWRITE then refuses) */
    char *import_rdb; /* --import-rdb FILE: a Redis RDB file loaded before serving, or NULL
                         (a start-up action, not a setting: CONFIG GET does not show it) */
    config_apply_fn *on_change;
    void *on_change_ud;
} config_t;

/* Fills c with every key's default from the table (no file is read). Never fails. */
void config_init(config_t *c);
/* Frees what c owns. c may be initialized again afterwards. */
void config_deinit(config_t *c);

/* Applies the YAML document text[0..len) on top of c. source_name names the text in messages:
 * "cte.yaml:12: unknown key 'prot'", "cte.yaml:3: bad value for 'port': 'abc' (expected an
 * integer in 0..65535)". Keys the text does not name keep their values. All or nothing: on
 * failure c is unchanged; on success every string pointer previously read from c is invalid. */
int config_load_yaml(config_t *c, const char *text, size_t len, const char *source_name, char *err,
                     size_t errlen);
/* Reads the file at path and applies it as config_load_yaml does (messages name path). */
int config_load_file(config_t *c, const char *path, char *err, size_t errlen);
/* Applies the embedded default configuration (the text of tools/cte-server.yaml). */
int config_load_default(config_t *c, char *err, size_t errlen);
/* The embedded default configuration as YAML text, a static NUL-terminated string. */
const char *config_default_yaml(void);

/* Implements the whole command line, as redis-server does, on top of c (normally fresh from
 * config_init). argv[0] is the program name and is skipped.
 *   cte-server [FILE] [--config FILE] [--KEY VALUE [VALUE...]]... [--tier SPEC]...
 * The file (first argument not starting with "-", or --config) is loaded first; without one,
 * the embedded default is. Then each --KEY option applies in order: its values run up to the
 * next argument that starts with "--" and are joined with spaces (`--bind 127.0.0.1 ::1`,
 * `--save ""`); any key of the table works, immutable ones too. `--tier
 * NAME:KIND:CAPACITY[:PATH[:SCORE]]` may repeat: the first one replaces the configured tiers,
 * later ones add to them. --help, --version and --config-doc are the caller's to handle before
 * this call. Sets c->config_file when a file was given. All or nothing, as config_load_yaml. */
int config_apply_args(config_t *c, int argc, char **argv, char *err, size_t errlen);

/* CONFIG SET name value. name is case-insensitive and may be an alias. On failure err holds
 * the whole Redis error line, ready to send after "-":
 *   "ERR Unknown option or number of arguments for CONFIG SET - 'x'"
 *   "ERR CONFIG SET failed (possibly related to argument 'x') - can't set immutable config"
 *   "ERR CONFIG SET failed (possibly related to argument 'port') - argument must be between 0
 *    and 65535 inclusive"
 * and c is unchanged. On success the on_change hook runs with the key's canonical name. */
int config_set(config_t *c, const char *name, const char *value, char *err, size_t errlen);
/* CONFIG SET name1 value1 name2 value2 ...: all pairs are checked first and applied only if
 * all are valid (Redis 7 semantics; a key named twice is refused with "duplicate parameter").
 * The hook runs once per pair, after all of them are applied. */
int config_set_many(config_t *c, int n, const char *const *names, const char *const *values,
                    char *err, size_t errlen);

/* CONFIG GET pattern: calls emit(ud, name, value) for every key whose name or alias matches
 * the Redis glob pattern (case-insensitive), each name at most once, in table order. An alias
 * that matches is emitted under the alias (as Redis 7 does: CONFIG GET * lists both names).
 * name and value are valid only during the call. */
void config_get(const config_t *c, const char *glob_pattern,
                void (*emit)(void *ud, const char *name, const char *value), void *ud);
/* CONFIG GET pattern1 pattern2 ...: like config_get, each name at most once over all. */
void config_get_many(const config_t *c, int npatterns, const char *const *patterns,
                     void (*emit)(void *ud, const char *name, const char *value), void *ud);
/* The value of one key as CONFIG GET shows it, appended to out. Returns -1 (out unchanged)
 * when there is no such key. */
int config_get_value(const config_t *c, const char *name, buf_t *out);

/* CONFIG REWRITE: writes c as YAML to path (a temporary file renamed over it, fsynced): every
 * key whose value differs from the table default, with its doc line as a comment. The file
 * loads back to the same values. */
int config_rewrite(const config_t *c, const char *path, char *err, size_t errlen);

/* Appends the Markdown reference of every key to out: a table of name, type, default, values,
 * whether CONFIG SET can change it, and doc; then the keys the embedded default file sets to
 * other values. The README's configuration section is this text. */
void config_doc_markdown(buf_t *out);

/* Registers fn to run after every successful config_set / config_set_many, with the canonical
 * key name (e.g. "hash-max-listpack-entries" also when set through its alias). One hook per
 * config; fn == NULL removes it. The hook cannot refuse the change. */
void config_on_change(config_t *c, config_apply_fn *fn, void *ud);

#endif
