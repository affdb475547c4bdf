/* command.h - the command table: one row per command (and per subcommand).
 *
 * Each group of commands lives in its own file (server/cmd/<group>.c, or the core's
 * MULTI, pub/sub and introspection files) and exports one table ending with a row whose
 * name is NULL; the core's tables and those of the registered rooms (server/hooks.h) are
 * looked up. COMMAND INFO/DOCS/COUNT/LIST and
 * key extraction read the rows. Arity as Redis: N means exactly N arguments counting the name,
 * -N at least N. */
#ifndef CTE_SERVER_COMMAND_H
#define CTE_SERVER_COMMAND_H

#include "server/client.h"

#include <stdint.h>

enum cmd_flag {
    CMD_WRITE = 1 << 0,
    CMD_READONLY = 1 << 1,
    CMD_DENYOOM = 1 << 2,
    CMD_ADMIN = 1 << 3,
    CMD_PUBSUB = 1 << 4,
    CMD_NOSCRIPT = 1 << 5,
    CMD_BLOCKING = 1 << 6,
    CMD_LOADING = 1 << 7,
    CMD_STALE = 1 << 8,
    CMD_SKIP_MONITOR = 1 << 9,
    CMD_FAST = 1 << 10,
    CMD_NO_AUTH = 1 << 11,
    CMD_MAY_REPLICATE = 1 << 12,
    CMD_NO_MULTI = 1 << 13,
    CMD_ALLOW_BUSY = 1 << 14,
    CMD_MOVABLE_KEYS = 1 << 15, /* key positions depend on arguments (getkeys callback) */
    CMD_SENTINEL = 1 << 16,
    CMD_NO_MANDATORY_KEYS = 1 << 17, /* may have no keys (EVAL with numkeys 0): COMMAND GETKEYS
                                        then answers an empty array */
    CMD_ASKING = 1 << 18, /* served for a slot being imported without ASKING (RESTORE-ASKING) */
    CMD_SKIP_SLOWLOG = 1 << 19,     /* never in the slow log (EXEC: its commands are) */
    CMD_NO_ASYNC_LOADING = 1 << 20, /* Redis's flag for what a replica's async loading refuses:
                                       shown by COMMAND INFO, nothing loads asynchronously here */
};

typedef void cmd_proc_t(client_t *c);
/* For CMD_MOVABLE_KEYS: writes the argv indexes of keys into pos (up to max), returns count. */
typedef int cmd_getkeys_t(int argc, const resp_arg_t *argv, int *pos, int max);

/* For commands that may have to wait on something that is not a key (a blob with I/O in
 * flight): the wait name the command would wait on now, written to name (64 bytes), or 0.
 * EXEC asks before it starts, so that a transaction waits as a whole instead of failing. */
typedef size_t cmd_waitname_t(client_t *c, int argc, const resp_arg_t *argv, char *name);

/* A key spec as COMMAND INFO shows it, for commands whose keys the first/last/step range does
 * not describe (a STORE keyword, two separate keys): the search begins at argument `index`,
 * or, with keyword set, at the argument after the first `keyword` found from `index` on
 * (Redis's "startfrom"); then a range of lastkey (relative to the first key) and keystep, or
 * a key count (keynum). The i-th spec's flags are key_flags' i-th part, its notes (if any) in
 * server/cmd_docs.c. A list ends with a spec whose index is 0 and that is not unknown. */
typedef struct cmd_key_spec {
    int index;
    const char *keyword;
    int lastkey, keystep;
    int limit; /* Redis's range limit: with lastkey -1, the keys are 1/limit of what is left */
    /* keynum instead of range (EVAL, ZUNION): the number of keys is at keynumidx after the
     * search's start, the keys begin firstkey after it, keystep apart (lastkey and limit
     * unused). Written with designated initializers. */
    int keynum, keynumidx, firstkey;
    int unknown; /* Redis's "unknown" search (SORT's BY/GET and STORE keys): no position */
} cmd_key_spec_t;

/* For commands whose key flags depend on the call (Redis's variable_flags: SET with GET,
 * BITFIELD with SET or INCRBY; SORT's STORE key): the flags of the i-th key that getkeys (or
 * the key range) finds in argv, space separated, into out (64 bytes). COMMAND GETKEYSANDFLAGS
 * uses it; COMMAND INFO's key specs keep key_flags. */
typedef void cmd_keyflags_t(int argc, const resp_arg_t *argv, int i, char *out);

/* A keynum spec: the number of keys at argument idx, the keys right after it (EVAL: 2). */
#define CMD_KEYNUM_SPEC(idx)                                                                       \
    {                                                                                              \
        .index = (idx), .keystep = 1, .keynum = 1, .keynumidx = 0, .firstkey = 1                   \
    }

/* For commands whose flags depend on the call (EVAL and FCALL take the flags the script
 * declares, EXEC those of the commands it queued): the flags of c's call (c->argv), made from
 * the row's static flags. Never fails; a call it cannot place (an unknown script) keeps them. */
typedef uint32_t cmd_getflags_t(const client_t *c, uint32_t flags);

typedef struct command {
    const char *name; /* lower case */
    cmd_proc_t *proc;
    int arity;
    uint32_t flags;
    int first_key, last_key, key_step; /* 0,0,0 for no keys; last -1 means the last arg */
    const char *group;                 /* "string", "generic", "hash", "sorted-set", ... */
    const char *since;
    const char *summary;
    const char *complexity;
    const char *acl; /* ACL categories besides the group's, e.g. "@fast" — informative */
    const struct command *subcommands; /* NULL-name terminated, or NULL */
    cmd_getkeys_t *getkeys;
    cmd_waitname_t *waitname;
    cmd_getflags_t *getflags; /* NULL: every call has the row's flags */
    cmd_keyflags_t *keyflags; /* NULL: the i-th key has key_flags' part i */
    /* The argument (index) the command reads once, by its length, as bytes to store: from a
     * shared-memory client it may stay a view into the client's data area (server/net/shm.c);
     * every other argument is copied first. 0: none. */
    int value_arg;
    /* The flags of the command's key specs, as Redis 7.0 names them ("OW update", "RO access",
     * "RW access delete"), one spec per '|'-separated part: the i-th key found gets part
     * min(i, parts - 1) (LMOVE: "RW access delete|RW insert"; ZUNIONSTORE: "OW update|RO
     * access"). NULL: "RO access" for read-only commands, "RW update" for the others.
     * COMMAND GETKEYSANDFLAGS and COMMAND INFO's key specs read it. */
    const char *key_flags;
    /* COMMAND INFO's key specs when set; NULL: one spec made of first_key/last_key/key_step. */
    const cmd_key_spec_t *key_specs;
    /* filled at start-up */
    struct command *parent;
    char fullname[48];
    uint64_t calls, usec, rejected_calls, failed_calls;
    int acl_id; /* the command's number in ACL bitmaps (server/acl.c) */
    struct latency_hist *latency; /* per-call latencies (latency-tracking), NULL until the first
                                    call after start or CONFIG RESETSTAT (server/introspect.c) */
} command_t;

/* One row of a command table, with designated initializers so the fields filled at start-up
 * stay zero; optional members (.getkeys, .waitname, .subcommands, .acl) follow as
 * designated initializers too (and .value_arg): CMD_ROW("get", get_cmd, 2, CMD_READONLY, 1, 1, 1, "string",
 * "1.0.0", "Returns the value of a key.", "O(1)"). */
#define CMD_ROW(name_, proc_, arity_, flags_, first_, last_, step_, group_, since_, summary_,      \
                complexity_, ...)                                                                  \
    {                                                                                              \
        .name = name_, .proc = proc_, .arity = arity_, .flags = flags_, .first_key = first_,       \
        .last_key = last_, .key_step = step_, .group = group_, .since = since_,                    \
        .summary = summary_, .complexity = complexity_, __VA_ARGS__                                \
    }

/* The core's own tables (multi.c, pubsub.c, introspect.c); the command groups' are in
 * server/cmd/cmd.h. */
extern command_t cmds_multi[], cmds_pubsub[], cmds_introspect[];

/* Builds the lookup table; call once at start. */
void command_table_init(void);
/* The command (or subcommand, when argv[1] names one) for argv, or NULL. */
const command_t *command_lookup(const resp_arg_t *name);
const command_t *command_lookup_sub(const command_t *parent, const resp_arg_t *name);
/* Calls fn for every top-level command. */
void command_foreach(void (*fn)(void *ud, const command_t *cmd), void *ud);
size_t command_count(void);
/* The key-spec flags of the i-th key cmd finds (see key_flags) into out (64 bytes), space
 * separated. Returns out. */
char *command_key_flags(const command_t *cmd, int i, char *out);
/* The same for the i-th key of a call of cmd with argv (its keyflags when it has one). */
char *command_call_key_flags(const command_t *cmd, int argc, const resp_arg_t *argv, int i,
                             char *out);
/* The flags of c's call of cmd (c->argv), as its getflags makes them, else cmd->flags: what
 * decides per call whether CLIENT PAUSE WRITE holds it, OOM refuses it, a failing AOF refuses
 * it, EXEC's transaction writes. The static flags stay what COMMAND INFO, ACL categories and
 * propagation read. */
uint32_t command_call_flags(const client_t *c, const command_t *cmd);
/* Key positions of argv for cmd (static ranges or getkeys); returns the count. */
int command_get_keys(const command_t *cmd, int argc, const resp_arg_t *argv, int *pos, int max);

/* Runs c->cmd with c->argv now, keeping its statistics (the dispatcher and EXEC use it). */
void command_call(client_t *c);
/* client_process_input's batch of one client's commands is over: the next call reads the clock
 * for its start (within a batch a call starts at the previous one's end). */
void command_batch_end(void);

/* Parses and checks the command in c->argv (lookup, arity, auth) and runs it, with stats.
 * Replies with the error and returns -1 if the command was rejected. */
int command_dispatch(client_t *c);

#endif
