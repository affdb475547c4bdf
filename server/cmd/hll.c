/* server/cmd/hll.c - the HyperLogLog commands: PFADD PFCOUNT PFMERGE PFDEBUG PFSELFTEST.
 *
 * A HyperLogLog is a string value in Redis's exact representation (storage/hll.h): these
 * commands check the header of the string they find (a string that is not a HyperLogLog
 * answers "WRONGTYPE Key is not a valid HyperLogLog string value.", corrupted sparse opcodes
 * "INVALIDOBJ Corrupted HLL object detected") and change it in place; the storage functions
 * may move the block, so kv->val is assigned after each call (see db_replace_value).
 *
 * Replies, errors, lookups and events as Redis 7.0 (hyperloglog.c): PFADD and PFMERGE notify
 * "pfadd" (PFMERGE too: a merge is a mass add); PFCOUNT of one key refreshes the cached
 * cardinality in the value, which Redis treats as a change (WATCH, tracking and the
 * append-only file see it, no keyspace event) although the command is flagged read-only;
 * PFDEBUG GETREG and TODENSE convert the value to dense and are logged, without an event.
 * Every command marks the value it touches raw, as Redis's dbUnshareStringValue does (OBJECT
 * ENCODING then says "raw"). Runs on the loop thread. */
#include "common/alloc.h"
#include "server/cmd/cmd.h"
#include "server/command.h"
#include "server/hooks.h"
#include "server/reply.h"
#include "server/server.h"
#include "storage/hll.h"

#include <string.h>

#define ERR_HLL_TYPE "WRONGTYPE Key is not a valid HyperLogLog string value."
#define ERR_HLL_INVALID "INVALIDOBJ Corrupted HLL object detected"
#define ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."

static inline str_obj_t *as_str(kv_t *kv)
{
    return (str_obj_t *)kv->val;
}

static inline size_t sparse_max(void)
{
    return (size_t)srv.cfg.hll_sparse_max_bytes;
}

/* Redis's isHLLObjectOrReply: 0 when kv holds a HyperLogLog string, else -1 with the error
 * replied (the standard WRONGTYPE for another type). */
static int hll_value_or_reply(client_t *c, kv_t *kv)
{
    if (kv->val->type != OBJ_STRING) {
        reply_wrongtype(c);
        return -1;
    }
    const str_obj_t *s = as_str(kv);
    if (!hll_is_valid(s->data, s->len)) {
        reply_error(c, ERR_HLL_TYPE);
        return -1;
    }
    return 0;
}

/* The value of kv marked raw (dbUnshareStringValue). */
static str_obj_t *unshare(kv_t *kv)
{
    str_obj_t *s = as_str(kv);
    s->h.flags = (uint16_t)((s->h.flags & ~STR_FLAGS_ENC) | STR_FLAG_RAW);
    return s;
}

/* Replies the error of a failed storage call (HLL_ERR_*). */
static void reply_hll_error(client_t *c, int rc)
{
    reply_error(c, rc == HLL_ERR_NOMEM ? ERR_OOM : ERR_HLL_INVALID);
}

/* A new empty HyperLogLog added at key (PFADD and PFMERGE on a missing key). */
static kv_t *add_new(client_t *c, const resp_arg_t *key)
{
    str_obj_t *s = hll_new();
    s->h.flags |= STR_FLAG_RAW;
    return db_add(c->db, key->ptr, key->len, &s->h);
}

/* PFADD key [element ...] -> 1 if a register changed (or the key was created), else 0. */
static void pfadd_cmd(client_t *c)
{
    const resp_arg_t *key = &c->argv[1];
    kv_t *kv = lookup_write(c, key);
    long long updated = 0;
    if (!kv) {
        kv = add_new(c, key);
        updated++;
    } else if (hll_value_or_reply(c, kv) != 0) {
        return;
    }
    str_obj_t *s = unshare(kv);
    for (int j = 2; j < c->argc; j++) {
        int rc = hll_add(&s, c->argv[j].ptr, c->argv[j].len, sparse_max());
        kv->val = &s->h;
        if (rc < 0) {
            reply_hll_error(c, rc); /* what was added so far stays, unlogged, as in Redis */
            return;
        }
        updated += rc;
    }
    if (updated) {
        hll_cache_invalidate((uint8_t *)s->data);
        server_key_changed(c, c->db, key->ptr, key->len, NOTIFY_STRING, "pfadd");
        srv.dirty += updated - 1;
    }
    reply_int(c, updated ? 1 : 0);
}

/* PFCOUNT of several keys: the estimate of the union, computed in a scratch array. */
static void pfcount_union(client_t *c)
{
    uint8_t max[HLL_REGISTERS];
    memset(max, 0, sizeof(max));
    for (int j = 1; j < c->argc; j++) {
        kv_t *kv = lookup_read(c, &c->argv[j]);
        if (!kv) continue; /* a missing key is an empty HyperLogLog */
        if (hll_value_or_reply(c, kv) != 0) return;
        const str_obj_t *s = as_str(kv);
        if (hll_merge(max, (const uint8_t *)s->data, s->len) != 0) {
            reply_error(c, ERR_HLL_INVALID);
            return;
        }
    }
    reply_int(c, (long long)hll_count_registers(max));
}

/* PFCOUNT key [key ...] -> the estimated cardinality. One key: the cached value, or a fresh
 * estimate written back into the value's cache (a change: logged as the command itself). */
static void pfcount_cmd(client_t *c)
{
    if (c->argc > 2) {
        pfcount_union(c);
        return;
    }
    const resp_arg_t *key = &c->argv[1];
    kv_t *kv = lookup_read(c, key);
    if (!kv) {
        reply_int(c, 0);
        return;
    }
    if (hll_value_or_reply(c, kv) != 0) return;
    str_obj_t *s = unshare(kv);
    uint8_t *p = (uint8_t *)s->data;
    uint64_t card;
    if (!hll_cache_get(p, &card)) {
        int invalid = 0;
        card = hll_count(p, s->len, &invalid);
        if (invalid) {
            reply_error(c, ERR_HLL_INVALID);
            return;
        }
        hll_cache_set(p, card);
        /* class 0: WATCH, tracking and dirty as Redis's signalModifiedKey, no event */
        server_key_changed(c, c->db, key->ptr, key->len, 0, "pfcount");
        /* read-only commands are not logged by command_call: this one changed the value */
        if (!(c->flags & CLIENT_NO_PROPAGATE)) server_log_propagate(c, c->dbid, c->argc, c->argv);
    }
    reply_int(c, (long long)card);
}

/* PFMERGE destkey [sourcekey ...] -> OK. The destination is a source too; it becomes dense
 * when a source is dense, else stays sparse while it fits hll-sparse-max-bytes. */
static void pfmerge_cmd(client_t *c)
{
    uint8_t max[HLL_REGISTERS];
    int use_dense = 0;
    memset(max, 0, sizeof(max));
    for (int j = 1; j < c->argc; j++) {
        kv_t *kv = lookup_read(c, &c->argv[j]);
        if (!kv) continue;
        if (hll_value_or_reply(c, kv) != 0) return;
        const str_obj_t *s = as_str(kv);
        if (hll_encoding_of(s->data) == HLL_DENSE) use_dense = 1;
        if (hll_merge(max, (const uint8_t *)s->data, s->len) != 0) {
            reply_error(c, ERR_HLL_INVALID);
            return;
        }
    }
    const resp_arg_t *key = &c->argv[1];
    kv_t *kv = lookup_write(c, key);
    if (!kv) kv = add_new(c, key);
    str_obj_t *s = unshare(kv);
    int rc = use_dense ? hll_to_dense(&s) : 0;
    kv->val = &s->h;
    for (uint32_t j = 0; j < HLL_REGISTERS && rc >= 0; j++) {
        if (!max[j]) continue;
        rc = hll_set(&s, j, max[j], sparse_max());
        kv->val = &s->h;
    }
    if (rc < 0) {
        reply_hll_error(c, rc);
        return;
    }
    hll_cache_invalidate((uint8_t *)s->data);
    server_key_changed(c, c->db, key->ptr, key->len, NOTIFY_STRING, "pfadd");
    reply_ok(c);
}

/* PFSELFTEST -> OK, or the first failed check. */
static void pfselftest_cmd(client_t *c)
{
    char err[256];
    if (hll_selftest(sparse_max(), err, sizeof(err)) != 0)
        reply_error(c, err);
    else
        reply_ok(c);
}

/* ---- PFDEBUG <subcommand> <key> ---- */

static void pfdebug_getreg(client_t *c, kv_t *kv)
{
    str_obj_t *s = as_str(kv);
    if (hll_encoding_of(s->data) == HLL_SPARSE) {
        int rc = hll_to_dense(&s);
        kv->val = &s->h;
        if (rc < 0) {
            reply_hll_error(c, rc);
            return;
        }
        srv.dirty++; /* logged: the replay converts too */
    }
    const uint8_t *regs = (const uint8_t *)s->data + HLL_HDR_SIZE;
    reply_array(c, HLL_REGISTERS);
    for (uint32_t j = 0; j < HLL_REGISTERS; j++) reply_int(c, hll_dense_get(regs, j));
}

static void pfdebug_decode(client_t *c, kv_t *kv)
{
    const str_obj_t *s = as_str(kv);
    const uint8_t *p = (const uint8_t *)s->data;
    if (hll_encoding_of(p) != HLL_SPARSE) {
        reply_error(c, "ERR HLL encoding is not sparse");
        return;
    }
    size_t n = hll_sparse_decode(p, s->len, NULL, 0);
    if (reply_fits_or_reply(c, 1, n) != 0) return;
    int muted;
    char *dst = reply_bulk_begin(c, n, &muted);
    if (dst)
        hll_sparse_decode(p, s->len, dst, n);
    else if (!muted)
        reply_error(c, ERR_OOM);
}

static void pfdebug_todense(client_t *c, kv_t *kv)
{
    str_obj_t *s = as_str(kv);
    if (hll_encoding_of(s->data) != HLL_SPARSE) {
        reply_int(c, 0);
        return;
    }
    int rc = hll_to_dense(&s);
    kv->val = &s->h;
    if (rc < 0) {
        reply_hll_error(c, rc);
        return;
    }
    srv.dirty++;
    reply_int(c, 1);
}

static void pfdebug_cmd(client_t *c)
{
    const resp_arg_t *sub = &c->argv[1];
    kv_t *kv = lookup_write(c, &c->argv[2]);
    if (!kv) {
        reply_error(c, "ERR The specified key does not exist");
        return;
    }
    if (hll_value_or_reply(c, kv) != 0) return;
    unshare(kv);
    if (arg_is(sub, "getreg")) {
        pfdebug_getreg(c, kv);
    } else if (arg_is(sub, "decode")) {
        pfdebug_decode(c, kv);
    } else if (arg_is(sub, "encoding")) {
        reply_simple(c, hll_encoding_of(as_str(kv)->data) == HLL_DENSE ? "dense" : "sparse");
    } else if (arg_is(sub, "todense")) {
        pfdebug_todense(c, kv);
    } else {
        reply_errorf(c, "ERR Unknown PFDEBUG subcommand '%.*s'", (int)strnlen(sub->ptr, sub->len),
                     sub->ptr);
    }
}

/* ---- table ---- */

command_t cmds_hll[] = {
    {"pfadd", pfadd_cmd, -2, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "hyperloglog", "2.8.9",
     "Adds the specified elements to the specified HyperLogLog.", "O(1) to add every element.",
     .key_flags = "RW insert"},
    {"pfcount", pfcount_cmd, -2, CMD_READONLY | CMD_MAY_REPLICATE, 1, -1, 1, "hyperloglog", "2.8.9",
     "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
     "O(1) with a very small average constant time when called with a single key. O(N) with N "
     "being the number of keys, and much bigger constant times, when called with multiple "
     "keys.",
     .key_flags = "RW access"},
    {"pfmerge", pfmerge_cmd, -2, CMD_WRITE | CMD_DENYOOM, 1, -1, 1, "hyperloglog", "2.8.9",
     "Merge N different HyperLogLogs into a single one.",
     "O(N) to merge N HyperLogLogs, but with high constant times.",
     .key_flags = "RW access insert|RO access"},
    {"pfdebug", pfdebug_cmd, 3, CMD_WRITE | CMD_DENYOOM | CMD_ADMIN, 2, 2, 1, "hyperloglog",
     "2.8.9", "Internal commands for debugging HyperLogLog values", "N/A",
     .key_flags = "RW access"},
    {"pfselftest", pfselftest_cmd, 1, CMD_ADMIN, 0, 0, 0, "hyperloglog", "2.8.9",
     "An internal command for testing HyperLogLog values", "N/A"},
    {NULL},
};
