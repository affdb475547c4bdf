/* server/cmd/dump.c - DUMP, RESTORE and RESTORE-ASKING, as Redis 7.0's cluster.c has them.
 *
 * DUMP answers a payload in Redis 7.0's format (server/persist/rdb.h), so a payload moves
 * between redis-server and cte-server in both directions. RESTORE checks its options, the
 * target key, the TTL, then the payload's version and CRC, then decodes it: each failure has
 * Redis's error text and changes nothing. A relative TTL is logged to the AOF as an absolute
 * one with ABSTTL, as Redis propagates it; a TTL already in the past deletes the target (with
 * REPLACE) and is logged as DEL. IDLETIME sets the LRU clock and FREQ the LFU counter, each
 * only under the policy that reads it, as Redis's objectSetLRUOrLFU. Loop thread. */
#include "common/buf.h"
#include "common/util.h"
#include "server/command.h"
#include "server/persist/aof.h"
#include "server/persist/rdb.h"
#include "server/reply.h"
#include "server/server.h"

#include <limits.h>
#include <string.h>

#define LRU_CLOCK_MAX ((1u << 24) - 1)

static void dump_cmd(client_t *c)
{
    kv_t *kv = lookup_read(c, &c->argv[1]);
    if (!kv) {
        reply_null(c);
        return;
    }
    buf_t b;
    buf_init(&b);
    if (rdb_dump(&b, kv->val, srv.cfg.inert.rdbcompression) < 0)
        reply_error(c, "ERR a blob of this tag is being written or cannot be read now, try again");
    else
        reply_bulk(c, b.data, b.len);
    buf_deinit(&b);
}

typedef struct restore_opts {
    int replace, absttl;
    long long idle, freq; /* -1: not given */
} restore_opts_t;

static int restore_opts_or_reply(client_t *c, restore_opts_t *o)
{
    o->replace = o->absttl = 0;
    o->idle = o->freq = -1;
    for (int j = 4; j < c->argc; j++) {
        const resp_arg_t *a = &c->argv[j];
        int more = j + 1 < c->argc;
        if (arg_is(a, "replace")) {
            o->replace = 1;
        } else if (arg_is(a, "absttl")) {
            o->absttl = 1;
        } else if (arg_is(a, "idletime") && more && o->freq == -1) {
            if (arg_ll_or_reply(c, &c->argv[++j], &o->idle, NULL)) return -1;
            if (o->idle < 0) {
                reply_error(c, "ERR Invalid IDLETIME value, must be >= 0");
                return -1;
            }
        } else if (arg_is(a, "freq") && more && o->idle == -1) {
            if (arg_ll_or_reply(c, &c->argv[++j], &o->freq, NULL)) return -1;
            if (o->freq < 0 || o->freq > 255) {
                reply_error(c, "ERR Invalid FREQ value, must be >= 0 and <= 255");
                return -1;
            }
        } else {
            reply_syntax_error(c);
            return -1;
        }
    }
    return 0;
}

/* objectSetLRUOrLFU: FREQ under an LFU policy, IDLETIME under any other. */
static void set_access(obj_t *o, const restore_opts_t *opt)
{
    if (storage_params.lfu) {
        if (opt->freq >= 0)
            o->lru = ((uint32_t)((time_ms() / 60000) & 0xffff) << 8) | (uint32_t)opt->freq;
        return;
    }
    if (opt->idle < 0) return;
    long long abs = (long long)(storage_lru_clock & LRU_CLOCK_MAX) - opt->idle;
    if (abs < 0) abs += LRU_CLOCK_MAX;
    o->lru = (uint32_t)abs & LRU_CLOCK_MAX;
}

/* What the AOF gets for a relative TTL: the arguments with the absolute time and ABSTTL. */
static void log_absolute(client_t *c, long long when)
{
    resp_arg_t argv[16];
    char t[24];
    if (c->argc + 1 > (int)(sizeof argv / sizeof argv[0])) return; /* logged as given */
    memcpy(argv, c->argv, (size_t)c->argc * sizeof argv[0]);
    argv[2].ptr = t;
    argv[2].len = ll_to_str(t, when);
    argv[c->argc].ptr = "ABSTTL";
    argv[c->argc].len = 6;
    aof_replace_argv(c, c->argc + 1, argv);
}

static void restore_cmd(client_t *c)
{
    const resp_arg_t *key = &c->argv[1], *payload = &c->argv[3];
    restore_opts_t opt;
    long long ttl;
    int version;
    obj_t *val;

    if (restore_opts_or_reply(c, &opt)) return;
    if (!opt.replace && lookup_write(c, key)) {
        reply_error(c, "BUSYKEY Target key name already exists.");
        return;
    }
    if (arg_ll_or_reply(c, &c->argv[2], &ttl, NULL)) return;
    if (ttl < 0) {
        reply_error(c, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    if (!rdb_dump_verify(payload->ptr, payload->len, &version)) {
        reply_error(c, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    if (rdb_dump_decode(payload->ptr, payload->len, version, &val) != RDB_OK) {
        reply_error(c, "ERR Bad data format");
        return;
    }
    kv_t *old = opt.replace ? lookup_write(c, key) : NULL;
    if (old) db_delete_kv(c->db, old);
    long long now = db_now_ms ? db_now_ms : time_ms();
    if (ttl && !opt.absttl) ttl = ttl > LLONG_MAX - now ? LLONG_MAX : ttl + now;
    if (ttl && ttl <= now && !srv.loading) {
        obj_free(val);
        if (old) {
            aof_replace_argv(c, 2, (resp_arg_t[]){{"DEL", 3}, *key});
            server_key_changed(c, c->db, key->ptr, key->len, NOTIFY_GENERIC, "del");
        }
        reply_ok(c);
        return;
    }
    set_access(val, &opt);
    kv_t *kv = db_add(c->db, key->ptr, key->len, val);
    if (ttl) {
        db_set_expire(c->db, kv, ttl);
        if (!opt.absttl) log_absolute(c, ttl);
    }
    server_key_changed(c, c->db, key->ptr, key->len, NOTIFY_GENERIC, "restore");
    reply_ok(c);
}

#define RESTORE_COMPLEXITY                                                                         \
    "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, "       \
    "where N is the number of Redis objects composing the value and M their average size. For "    \
    "small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply "     \
    "O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting "       \
    "values into sorted sets is O(log(N))."

command_t cmds_dump[] = {
    {"dump", dump_cmd, 2, CMD_READONLY, 1, 1, 1, "generic", "2.6.0",
     "Return a serialized version of the value stored at the specified key.",
     "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of "
     "Redis objects composing the value and M their average size. For small string values the "
     "time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
     .key_flags = "RO access"},
    {"restore", restore_cmd, -4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "generic", "2.6.0",
     "Create a key using the provided serialized value, previously obtained using DUMP.",
     RESTORE_COMPLEXITY, .acl = "@dangerous", .key_flags = "OW update"},
    {"restore-asking", restore_cmd, -4, CMD_WRITE | CMD_DENYOOM | CMD_ASKING, 1, 1, 1, "server",
     "3.0.0", "An internal command for migrating keys in a cluster", RESTORE_COMPLEXITY,
     .acl = "@dangerous", .key_flags = "OW update"},
    {NULL},
};
