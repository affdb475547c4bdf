/* server/cmd/keys.c - the generic key commands: DEL UNLINK EXISTS TYPE KEYS SCAN RANDOMKEY RENAME
 * RENAMENX MOVE COPY EXPIRE PEXPIRE EXPIREAT PEXPIREAT EXPIRETIME PEXPIRETIME TTL PTTL PERSIST
 * TOUCH OBJECT (ENCODING FREQ IDLETIME REFCOUNT HELP).
 *
 * Replies, errors and keyspace events as Redis 7.0 (db.c, expire.c, object.c). Values move
 * between keys and databases without copies: RENAME and MOVE take the value out of its entry
 * (db_take_value) and add it under the new name, keeping the TTL; only COPY duplicates.
 * Setting an expire time that is already past deletes the key at once and reports "del", as
 * Redis's expireGenericCommand does.
 *
 * SCAN walks the keys dict with dict_scan's reverse-binary cursor, so every key present for
 * the whole iteration is returned at least once, also across rehashing. Entries met in one
 * call are collected first and filtered afterwards (pattern, type, expiry), because expired
 * keys may only be deleted once the walk is over.
 *
 * Read lookups count keyspace hits/misses where Redis's lookupKeyRead does; the NOTOUCH ones
 * (EXISTS, TYPE, TTL, OBJECT) leave the access clock alone. Runs on the loop thread. */
#include "common/alloc.h"
#include "common/glob.h"
#include "common/util.h"
#include "server/cluster/cluster.h"
#include "server/command.h"
#include "server/lazyfree.h"
#include "server/reply.h"
#include "server/server.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define ERR_SAME_OBJECT "ERR source and destination objects are the same"
#define LRU_CLOCK_MAX ((1u << 24) - 1)
#define SHARED_INTEGERS 10000
#define SHARED_REFCOUNT 2147483647

/* ---- lookups ---- */

static inline long long now_ms(void)
{
    return db_now_ms ? db_now_ms : time_ms();
}

static inline void count_lookup(const kv_t *kv)
{
    if (kv)
        srv.stat.keyspace_hits++;
    else
        srv.stat.keyspace_misses++;
}

/* lookupKeyReadWithFlags(LOOKUP_NOTOUCH): stats, an expired key deleted, access clock kept. */
static kv_t *lookup_notouch(client_t *c, db_t *db, const void *key, size_t len)
{
    kv_t *kv = db_find(db, key, len);
    if (kv && kv_has_expire(kv) && db_is_expired(db, kv)) {
        db_lookup(db, key, len); /* deletes it (unless expiry is paused) and tells the observer */
        kv = NULL;
    }
    count_lookup(kv);
    return kv;
}

static inline void changed(client_t *c, db_t *db, const resp_arg_t *key, const char *event)
{
    server_key_changed(c, db, key->ptr, key->len, NOTIFY_GENERIC, event);
}

static inline int same_bytes(const resp_arg_t *a, const resp_arg_t *b)
{
    return a->len == b->len && memcmp(a->ptr, b->ptr, a->len) == 0;
}

/* A database index argument (Redis's getIntFromObjectOrReply then selectDb). */
static db_t *db_arg_or_reply(client_t *c, const resp_arg_t *a)
{
    long long id;
    if (arg_range_or_reply(c, a, INT_MIN, INT_MAX, &id, NULL)) return NULL;
    if (id < 0 || id >= srv.ndb) {
        reply_error(c, ERR_DB_INDEX);
        return NULL;
    }
    return &srv.db[id];
}

/* ---- DEL UNLINK EXISTS TOUCH TYPE RANDOMKEY ---- */

/* DEL and UNLINK: UNLINK (and DEL with lazyfree-lazy-user-del yes) leaves large values to
 * the lazyfree thread. */
static void del_cmd(client_t *c)
{
    long long n = 0;
    int lazy = c->cmd->name[0] == 'u' || srv.cfg.lazyfree_lazy_user_del;
    for (int j = 1; j < c->argc; j++) {
        kv_t *kv = lookup_write_db(c->db, c->argv[j].ptr, c->argv[j].len);
        if (!kv) continue;
        if (lazy) lazyfree_value(db_take_value(c->db, kv));
        else db_delete_kv(c->db, kv);
        changed(c, c->db, &c->argv[j], "del");
        n++;
    }
    reply_int(c, n);
}

static void exists_cmd(client_t *c)
{
    long long n = 0;
    for (int j = 1; j < c->argc; j++)
        if (lookup_notouch(c, c->db, c->argv[j].ptr, c->argv[j].len)) n++;
    reply_int(c, n);
}

static void touch_cmd(client_t *c)
{
    long long n = 0;
    for (int j = 1; j < c->argc; j++)
        if (lookup_read(c, &c->argv[j])) n++;
    reply_int(c, n);
}

static void type_cmd(client_t *c)
{
    kv_t *kv = lookup_notouch(c, c->db, c->argv[1].ptr, c->argv[1].len);
    reply_simple(c, kv ? obj_type_name(kv->val->type) : "none");
}

static void randomkey_cmd(client_t *c)
{
    kv_t *kv = db_random(c->db);
    if (kv)
        reply_bulk(c, kv_key(kv), kv_keylen(kv));
    else
        reply_null(c);
}

/* ---- KEYS SCAN ---- */

static void keys_cmd(client_t *c)
{
    const resp_arg_t *pat = &c->argv[1];
    int all = pat->len == 1 && pat->ptr[0] == '*';
    size_t handle = reply_defer(c);
    long long n = 0;
    dict_iter_t it;
    dict_iter_init(&it, &c->db->keys, 0);
    /* ends early once the client is closed for its output limit */
    for (dict_node_t *node; !reply_stopped(c) && (node = dict_iter_next(&it));) {
        kv_t *kv = (kv_t *)node;
        if (!all && !strglob_match(pat->ptr, pat->len, kv_key(kv), kv_keylen(kv), 0)) continue;
        if (kv_has_expire(kv) && db_is_expired(c->db, kv)) continue;
        reply_bulk(c, kv_key(kv), kv_keylen(kv));
        n++;
    }
    dict_iter_deinit(&it);
    reply_defer_finish(c, handle, '*', n);
}

typedef struct scan_keys {
    kv_t **v;
    size_t n, cap;
} scan_keys_t;

static void scan_collect(void *ud, kv_t *kv)
{
    scan_keys_t *k = ud;
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 16;
        k->v = xrealloc(k->v, k->cap * sizeof(*k->v));
    }
    k->v[k->n++] = kv;
}

typedef struct scan_opts {
    long long count;
    const resp_arg_t *match; /* NULL: no pattern (also for "*") */
    const resp_arg_t *type;  /* NULL: any type */
} scan_opts_t;

static int scan_opts_or_reply(client_t *c, scan_opts_t *o)
{
    o->count = 10;
    o->match = o->type = NULL;
    for (int i = 2; i < c->argc; i += 2) {
        const resp_arg_t *a = &c->argv[i];
        if (i + 1 >= c->argc) goto syntax;
        if (arg_is(a, "count")) {
            if (arg_ll_or_reply(c, &c->argv[i + 1], &o->count, NULL)) return -1;
            if (o->count < 1) goto syntax;
        } else if (arg_is(a, "match")) {
            const resp_arg_t *p = &c->argv[i + 1];
            o->match = p->len == 1 && p->ptr[0] == '*' ? NULL : p;
        } else if (arg_is(a, "type")) {
            o->type = &c->argv[i + 1];
        } else {
            goto syntax;
        }
    }
    return 0;
syntax:
    reply_syntax_error(c);
    return -1;
}

/* Whether a collected key passes the filters; an expired key is deleted (it is never
 * collected twice in one call, so its pointer is not used again). */
static int scan_keep(client_t *c, const scan_opts_t *o, kv_t *kv)
{
    if (o->match && !strglob_match(o->match->ptr, o->match->len, kv_key(kv), kv_keylen(kv), 0))
        return 0;
    int expired = kv_has_expire(kv) && db_is_expired(c->db, kv);
    if (o->type) {
        /* as Redis: a NOTOUCH read lookup, so it counts in the keyspace stats */
        count_lookup(expired ? NULL : kv);
        const char *name = expired ? "none" : obj_type_name(kv->val->type);
        if (!str_eq_nocase(o->type->ptr, o->type->len, name)) {
            if (expired) db_lookup(c->db, kv_key(kv), kv_keylen(kv));
            return 0;
        }
    }
    if (expired) {
        db_lookup(c->db, kv_key(kv), kv_keylen(kv));
        return 0;
    }
    return 1;
}

static void scan_cmd(client_t *c)
{
    uint64_t cursor;
    scan_opts_t o;
    if (scan_cursor_or_reply(c, &c->argv[1], &cursor)) return;
    if (scan_opts_or_reply(c, &o)) return;
    scan_keys_t keys = {0};
    long long maxiter = o.count > LLONG_MAX / 10 ? LLONG_MAX : o.count * 10;
    do {
        cursor = db_scan(c->db, cursor, scan_collect, &keys);
    } while (cursor && maxiter-- && keys.n < (unsigned long long)o.count);
    char buf[24];
    reply_array(c, 2);
    reply_bulk(c, buf, ull_to_str(buf, cursor));
    size_t handle = reply_defer(c);
    long long n = 0;
    for (size_t i = 0; i < keys.n; i++) {
        kv_t *kv = keys.v[i];
        if (!scan_keep(c, &o, kv)) continue;
        reply_bulk(c, kv_key(kv), kv_keylen(kv));
        n++;
    }
    reply_defer_finish(c, handle, '*', n);
    xfree(keys.v);
}

/* ---- RENAME MOVE COPY ---- */

static void rename_generic(client_t *c, int nx)
{
    const resp_arg_t *src = &c->argv[1], *dst = &c->argv[2];
    kv_t *kv = lookup_write_db(c->db, src->ptr, src->len);
    if (!kv) {
        reply_error(c, ERR_NO_KEY);
        return;
    }
    if (same_bytes(src, dst)) {
        if (nx)
            reply_int(c, 0);
        else
            reply_ok(c);
        return;
    }
    kv_t *old = lookup_write_db(c->db, dst->ptr, dst->len);
    if (old) {
        if (nx) {
            reply_int(c, 0);
            return;
        }
        db_delete_kv(c->db, old);
    }
    long long when = db_get_expire(c->db, kv);
    obj_t *val = db_take_value(c->db, kv);
    kv = db_add(c->db, dst->ptr, dst->len, val);
    if (when != -1) db_set_expire(c->db, kv, when);
    changed(c, c->db, src, "rename_from");
    changed(c, c->db, dst, "rename_to");
    if (nx)
        reply_int(c, 1);
    else
        reply_ok(c);
}

static void rename_cmd(client_t *c)
{
    rename_generic(c, 0);
}

static void renamenx_cmd(client_t *c)
{
    rename_generic(c, 1);
}

static void move_cmd(client_t *c)
{
    if (cluster) {
        reply_error(c, "ERR MOVE is not allowed in cluster mode");
        return;
    }
    const resp_arg_t *key = &c->argv[1];
    db_t *src = c->db, *dst = db_arg_or_reply(c, &c->argv[2]);
    if (!dst) return;
    if (dst == src) {
        reply_error(c, ERR_SAME_OBJECT);
        return;
    }
    kv_t *kv = lookup_write_db(src, key->ptr, key->len);
    if (!kv || lookup_write_db(dst, key->ptr, key->len)) {
        reply_int(c, 0);
        return;
    }
    long long when = db_get_expire(src, kv);
    obj_t *val = db_take_value(src, kv);
    kv = db_add(dst, key->ptr, key->len, val);
    if (when != -1) db_set_expire(dst, kv, when);
    changed(c, src, key, "move_from");
    changed(c, dst, key, "move_to");
    reply_int(c, 1);
}

static void copy_cmd(client_t *c)
{
    const resp_arg_t *key = &c->argv[1], *newkey = &c->argv[2];
    db_t *src = c->db, *dst = c->db;
    int replace = 0;
    for (int j = 3; j < c->argc; j++) {
        if (arg_is(&c->argv[j], "replace")) {
            replace = 1;
        } else if (arg_is(&c->argv[j], "db") && j + 1 < c->argc) {
            if (!(dst = db_arg_or_reply(c, &c->argv[++j]))) return;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    if (cluster && (src != &srv.db[0] || dst != &srv.db[0])) {
        reply_error(c, "ERR Copying to another database is not allowed in cluster mode");
        return;
    }
    if (src == dst && same_bytes(key, newkey)) {
        reply_error(c, ERR_SAME_OBJECT);
        return;
    }
    kv_t *kv = lookup_read(c, key);
    if (!kv) {
        reply_int(c, 0);
        return;
    }
    kv_t *old = lookup_write_db(dst, newkey->ptr, newkey->len);
    if (old && !replace) {
        reply_int(c, 0);
        return;
    }
    long long when = db_get_expire(src, kv);
    obj_t *val = obj_dup(kv->val);
    if (!val) { /* a tag: its blobs may live on file tiers */
        reply_error(c, "ERR COPY does not support tags");
        return;
    }
    if (val->type == OBJ_STRING) val->flags |= kv->val->flags & STR_FLAGS_ENC; /* as Redis */
    if (old) db_delete_kv(dst, old);
    kv_t *nkv = db_add(dst, newkey->ptr, newkey->len, val);
    if (when != -1) db_set_expire(dst, nkv, when);
    changed(c, dst, newkey, "copy_to");
    reply_int(c, 1);
}

/* ---- expiry ---- */

enum { EXP_NX = 1, EXP_XX = 2, EXP_GT = 4, EXP_LT = 8 };

static int expire_flags_or_reply(client_t *c, int *flags)
{
    int f = 0;
    for (int j = 3; j < c->argc; j++) {
        const resp_arg_t *a = &c->argv[j];
        if (arg_is(a, "nx"))
            f |= EXP_NX;
        else if (arg_is(a, "xx"))
            f |= EXP_XX;
        else if (arg_is(a, "gt"))
            f |= EXP_GT;
        else if (arg_is(a, "lt"))
            f |= EXP_LT;
        else {
            reply_errorf(c, "ERR Unsupported option %.*s", (int)(a->len > 128 ? 128 : a->len),
                         a->ptr);
            return -1;
        }
    }
    if ((f & EXP_NX) && (f & (EXP_XX | EXP_GT | EXP_LT))) {
        reply_error(c, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return -1;
    }
    if ((f & EXP_GT) && (f & EXP_LT)) {
        reply_error(c, "ERR GT and LT options at the same time are not compatible");
        return -1;
    }
    *flags = f;
    return 0;
}

/* Whether NX/XX/GT/LT let a key whose TTL is cur (-1: none) take the new time when. */
static int expire_allowed(int flags, long long cur, long long when)
{
    if ((flags & EXP_NX) && cur != -1) return 0;
    if ((flags & EXP_XX) && cur == -1) return 0;
    if ((flags & EXP_GT) && (cur == -1 || when <= cur)) return 0;
    if ((flags & EXP_LT) && cur != -1 && when >= cur) return 0;
    return 1;
}

static void expire_time_error(client_t *c)
{
    reply_errorf(c, "ERR invalid expire time in '%s' command",
                 c->cmd ? c->cmd->fullname : "expire");
}

/* Redis's expireGenericCommand: basetime is now (EXPIRE, PEXPIRE) or 0 (the AT forms). */
static void expire_generic(client_t *c, long long basetime, int seconds)
{
    const resp_arg_t *key = &c->argv[1];
    int flags;
    long long when;
    if (expire_flags_or_reply(c, &flags)) return;
    if (arg_ll_or_reply(c, &c->argv[2], &when, NULL)) return;
    if (seconds) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) goto bad_time;
        when *= 1000;
    }
    if (when > LLONG_MAX - basetime) goto bad_time;
    when += basetime;
    kv_t *kv = lookup_write_db(c->db, key->ptr, key->len);
    if (!kv || !expire_allowed(flags, db_get_expire(c->db, kv), when)) {
        reply_int(c, 0);
        return;
    }
    if (when <= now_ms() && !srv.loading) {
        db_delete_kv(c->db, kv);
        changed(c, c->db, key, "del");
    } else {
        db_set_expire(c->db, kv, when);
        changed(c, c->db, key, "expire");
    }
    reply_int(c, 1);
    return;
bad_time:
    expire_time_error(c);
}

static void expire_cmd(client_t *c)
{
    expire_generic(c, now_ms(), 1);
}

static void pexpire_cmd(client_t *c)
{
    expire_generic(c, now_ms(), 0);
}

static void expireat_cmd(client_t *c)
{
    expire_generic(c, 0, 1);
}

static void pexpireat_cmd(client_t *c)
{
    expire_generic(c, 0, 0);
}

/* Redis's ttlGenericCommand: -2 no key, -1 no TTL, else the time left (or the deadline). */
static void ttl_generic(client_t *c, int ms, int absolute)
{
    kv_t *kv = lookup_notouch(c, c->db, c->argv[1].ptr, c->argv[1].len);
    if (!kv) {
        reply_int(c, -2);
        return;
    }
    long long when = db_get_expire(c->db, kv);
    if (when == -1) {
        reply_int(c, -1);
        return;
    }
    long long ttl = absolute ? when : when - now_ms();
    if (ttl < 0) ttl = 0;
    /* rounded to the nearest second without overflowing near LLONG_MAX */
    reply_int(c, ms ? ttl : ttl / 1000 + (ttl % 1000 >= 500));
}

static void ttl_cmd(client_t *c)
{
    ttl_generic(c, 0, 0);
}

static void pttl_cmd(client_t *c)
{
    ttl_generic(c, 1, 0);
}

static void expiretime_cmd(client_t *c)
{
    ttl_generic(c, 0, 1);
}

static void pexpiretime_cmd(client_t *c)
{
    ttl_generic(c, 1, 1);
}

static void persist_cmd(client_t *c)
{
    kv_t *kv = lookup_write_db(c->db, c->argv[1].ptr, c->argv[1].len);
    if (kv && db_remove_expire(c->db, kv)) {
        changed(c, c->db, &c->argv[1], "persist");
        reply_int(c, 1);
    } else {
        reply_int(c, 0);
    }
}

/* ---- OBJECT ---- */

static int policy_is_lfu(void)
{
    int p = srv.cfg.maxmemory_policy;
    return p == CONFIG_MAXMEMORY_VOLATILE_LFU || p == CONFIG_MAXMEMORY_ALLKEYS_LFU;
}

static int policy_is_lru_or_lfu(void)
{
    int p = srv.cfg.maxmemory_policy;
    return policy_is_lfu() || p == CONFIG_MAXMEMORY_VOLATILE_LRU ||
           p == CONFIG_MAXMEMORY_ALLKEYS_LRU;
}

/* The value of argv[2] without touching its access clock, or NULL with a null reply. */
static kv_t *object_lookup_or_reply(client_t *c)
{
    kv_t *kv = lookup_notouch(c, c->db, c->argv[2].ptr, c->argv[2].len);
    if (!kv) reply_null(c);
    return kv;
}

static void object_encoding_cmd(client_t *c)
{
    kv_t *kv = object_lookup_or_reply(c);
    if (!kv) return;
    reply_bulk_cstr(c, obj_encoding_name(kv->val));
}

/* Redis shares the objects of the integers 0..9999 (refcount INT_MAX) unless maxmemory with
 * an LRU/LFU policy needs per-key access data. */
static void object_refcount_cmd(client_t *c)
{
    kv_t *kv = object_lookup_or_reply(c);
    if (!kv) return;
    long long v;
    int shared = kv->val->type == OBJ_STRING && !(kv->val->flags & STR_FLAGS_ENC) &&
                 str_get_ll((str_obj_t *)kv->val, &v) && v >= 0 && v < SHARED_INTEGERS &&
                 (srv.cfg.maxmemory == 0 || !policy_is_lru_or_lfu());
    reply_int(c, shared ? SHARED_REFCOUNT : 1);
}

static void object_idletime_cmd(client_t *c)
{
    kv_t *kv = object_lookup_or_reply(c);
    if (!kv) return;
    if (policy_is_lfu()) {
        reply_error(c, "ERR An LFU maxmemory policy is selected, idle time not tracked. Please "
                       "note that when switching between policies at runtime LRU and LFU data "
                       "will take some time to adjust.");
        return;
    }
    uint32_t now = storage_lru_clock & LRU_CLOCK_MAX, then = kv->val->lru & LRU_CLOCK_MAX;
    uint32_t idle = now >= then ? now - then : now + (LRU_CLOCK_MAX - then);
    reply_int(c, idle);
}

static void object_freq_cmd(client_t *c)
{
    kv_t *kv = object_lookup_or_reply(c);
    if (!kv) return;
    if (!policy_is_lfu()) {
        reply_error(c, "ERR An LFU maxmemory policy is not selected, access frequency not "
                       "tracked. Please note that when switching between policies at runtime "
                       "LRU and LFU data will take some time to adjust.");
        return;
    }
    reply_int(c, obj_lfu_freq(kv->val));
}

static void object_help_cmd(client_t *c)
{
    static const char *lines[] = {
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help.",
    };
    size_t n = sizeof(lines) / sizeof(lines[0]);
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++) reply_simple(c, lines[i]);
}

static void object_cmd(client_t *c)
{
    /* only reached with no subcommand: the dispatcher resolves subcommands */
    reply_arity_error(c);
}

/* ---- table ---- */

static command_t object_subcommands[] = {
    {"encoding", object_encoding_cmd, 3, CMD_READONLY, 2, 2, 1, "generic", "2.2.3",
     "Returns the internal encoding of a Redis object.", "O(1)", .key_flags = "RO"},
    {"freq", object_freq_cmd, 3, CMD_READONLY, 2, 2, 1, "generic", "4.0.0",
     "Returns the logarithmic access frequency counter of a Redis object.", "O(1)",
     .key_flags = "RO"},
    {"idletime", object_idletime_cmd, 3, CMD_READONLY, 2, 2, 1, "generic", "2.2.3",
     "Returns the time since the last access to a Redis object.", "O(1)", .key_flags = "RO"},
    {"refcount", object_refcount_cmd, 3, CMD_READONLY, 2, 2, 1, "generic", "2.2.3",
     "Returns the reference count of a value of a key.", "O(1)", .key_flags = "RO"},
    {"help", object_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "generic", "6.2.0",
     "Returns helpful text about the different subcommands.", "O(1)"},
    {NULL},
};

#define EXPIRE_ROW(name, proc, since, summary)                                                     \
    {                                                                                              \
        name, proc, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, "generic", since, summary, "O(1)"           \
    }
#define TTL_ROW(name, proc, since, summary)                                                        \
    {                                                                                              \
        name, proc, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "generic", since, summary, "O(1)"         \
    }

command_t cmds_keys[] = {
    {"del", del_cmd, -2, CMD_WRITE, 1, -1, 1, "generic", "1.0.0", "Deletes one or more keys.",
     "O(N) where N is the number of keys that will be removed. When a key to remove holds a "
     "value other than a string, the individual complexity for this key is O(M) where M is the "
     "number of elements in the list, set, sorted set or hash. Removing a single key that holds "
     "a string value is O(1).", .key_flags = "RM delete"},
    {"unlink", del_cmd, -2, CMD_WRITE | CMD_FAST, 1, -1, 1, "generic", "4.0.0",
     "Asynchronously deletes one or more keys.",
     "O(1) for each key removed regardless of its size. Then the command does O(N) work in a "
     "different thread in order to reclaim memory, where N is the number of allocations the "
     "deleted objects where composed of.", .key_flags = "RM delete"},
    {"exists", exists_cmd, -2, CMD_READONLY | CMD_FAST, 1, -1, 1, "generic", "1.0.0",
     "Determines whether one or more keys exist.", "O(N) where N is the number of keys to check.",
     .key_flags = "RO"},
    {"type", type_cmd, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "generic", "1.0.0",
     "Determines the type of value stored at a key.", "O(1)", .key_flags = "RO"},
    {"keys", keys_cmd, 2, CMD_READONLY, 0, 0, 0, "generic", "1.0.0",
     "Returns all key names that match a pattern.",
     "O(N) with N being the number of keys in the database, under the assumption that the key "
     "names in the database and the given pattern have limited length."},
    {"scan", scan_cmd, -2, CMD_READONLY, 0, 0, 0, "generic", "2.8.0",
     "Iterates over the key names in the database.",
     "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
     "the cursor to return back to 0. N is the number of elements inside the collection."},
    {"randomkey", randomkey_cmd, 1, CMD_READONLY, 0, 0, 0, "generic", "1.0.0",
     "Returns a random key name from the database.", "O(1)"},
    {"rename", rename_cmd, 3, CMD_WRITE, 1, 2, 1, "generic", "1.0.0",
     "Renames a key and overwrites the destination.", "O(1)",
     .key_flags = "RW access delete|OW update"},
    {"renamenx", renamenx_cmd, 3, CMD_WRITE | CMD_FAST, 1, 2, 1, "generic", "1.0.0",
     "Renames a key only when the target key name doesn't exist.", "O(1)",
     .key_flags = "RW access delete|OW insert"},
    {"move", move_cmd, 3, CMD_WRITE | CMD_FAST, 1, 1, 1, "generic", "1.0.0",
     "Moves a key to another database.", "O(1)", .key_flags = "RW access update"},
    {"copy", copy_cmd, -3, CMD_WRITE | CMD_DENYOOM, 1, 2, 1, "generic", "6.2.0",
     "Copies the value of a key to a new key.",
     "O(N) worst case for collections, where N is the number of nested items. O(1) for string "
     "values.", .key_flags = "RO access|OW update"},
    EXPIRE_ROW("expire", expire_cmd, "1.0.0", "Sets the expiration time of a key in seconds."),
    EXPIRE_ROW("pexpire", pexpire_cmd, "2.6.0",
               "Sets the expiration time of a key in milliseconds."),
    EXPIRE_ROW("expireat", expireat_cmd, "1.2.0",
               "Sets the expiration time of a key to a Unix timestamp."),
    EXPIRE_ROW("pexpireat", pexpireat_cmd, "2.6.0",
               "Sets the expiration time of a key to a Unix milliseconds timestamp."),
    TTL_ROW("expiretime", expiretime_cmd, "7.0.0",
            "Returns the expiration time of a key as a Unix timestamp."),
    TTL_ROW("pexpiretime", pexpiretime_cmd, "7.0.0",
            "Returns the expiration time of a key as a Unix milliseconds timestamp."),
    TTL_ROW("ttl", ttl_cmd, "1.0.0", "Returns the expiration time in seconds of a key."),
    TTL_ROW("pttl", pttl_cmd, "2.6.0", "Returns the expiration time in milliseconds of a key."),
    {"persist", persist_cmd, 2, CMD_WRITE | CMD_FAST, 1, 1, 1, "generic", "2.2.0",
     "Removes the expiration time of a key.", "O(1)"},
    {"touch", touch_cmd, -2, CMD_READONLY | CMD_FAST, 1, -1, 1, "generic", "3.2.1",
     "Returns the number of existing keys out of those specified after updating the time they "
     "were last accessed.",
     "O(N) where N is the number of keys that will be touched.", .key_flags = "RO"},
    {"object", object_cmd, -2, 0, 0, 0, 0, "generic", "2.2.3",
     "A container for object introspection commands.", "Depends on subcommand.", NULL,
     object_subcommands},
    {NULL},
};
