/* server/cmd/hash.c - the hash commands: HSET HSETNX HMSET HGET HMGET HGETALL HDEL HLEN HEXISTS
 * HKEYS HVALS HSTRLEN HINCRBY HINCRBYFLOAT HRANDFIELD HSCAN.
 *
 * Replies, errors, argument checking order and keyspace events as Redis 7.0 (t_hash.c): HGETALL
 * is a map in RESP3, HRANDFIELD ... WITHVALUES an array of [field, value] pairs in RESP3 and a
 * flat array in RESP2, HSCAN's COUNT counts fields and values as Redis's list does. The hash
 * itself (encodings, conversion thresholds) is storage/t_hash.c; writes may move the value, so
 * every write stores the hash pointer back into the keyspace entry.
 *
 * Reads count keyspace hits and misses (and publish "keymiss") where Redis's lookupKeyRead
 * does, a key of the wrong type counting as a hit; writes do not. A hash emptied by HDEL is
 * deleted, with "hdel" then "del" events. srv.dirty grows as Redis's server.dirty does (one
 * per pair for HSET, one per field for HDEL). Runs on the loop thread. */
#include "common/alloc.h"
#include "common/glob.h"
#include "common/util.h"
#include "server/command.h"
#include "server/pubsub.h"
#include "server/reply.h"
#include "server/server.h"
#include "storage/t_hash.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Longest HINCRBYFLOAT result: a long double printed with "%.17Lf" (Redis's
 * MAX_LONG_DOUBLE_CHARS). */
#define LD_STR_MAX 5120
/* HRANDFIELD with repetitions samples this many fields at a time (Redis's
 * HRANDFIELD_RANDOM_SAMPLE_LIMIT). */
#define RANDOM_BATCH 1000

/* ---- lookups ---- */

static inline hash_t *as_hash(kv_t *kv)
{
    return (hash_t *)(void *)kv->val;
}

/* The hash to write into: the key's, or a new empty one when kv is NULL. */
static inline hash_t *hash_for_write(kv_t *kv)
{
    return kv ? as_hash(kv) : hash_new();
}

/* Puts h (which a write may have moved) in the keyspace: in kv's place, or as a new key. */
static void store(client_t *c, kv_t *kv, const resp_arg_t *key, hash_t *h)
{
    if (kv)
        kv->val = &h->h;
    else
        db_add(c->db, key->ptr, key->len, &h->h);
}

static inline void changed(client_t *c, const resp_arg_t *key, int klass, const char *event)
{
    server_key_changed(c, c->db, key->ptr, key->len, klass, event);
}

/* Fields longer than 4 GiB cannot be stored (the length lives in 32 bits); only reachable with
 * proto-max-bulk-len raised past that. Returns -1 after replying. */
static int field_len_or_reply(client_t *c, const resp_arg_t *field)
{
    if (field->len <= UINT32_MAX) return 0;
    reply_error(c, "ERR hash field is too long");
    return -1;
}

/* ---- HSET HMSET HSETNX ---- */

static void hset_generic(client_t *c, int is_hmset)
{
    if (c->argc % 2 == 1) {
        reply_arity_error(c);
        return;
    }
    for (int i = 2; i < c->argc; i += 2)
        if (field_len_or_reply(c, &c->argv[i])) return;
    int err;
    kv_t *kv = lookup_write_type(c, &c->argv[1], OBJ_HASH, &err);
    if (err) return;
    hash_t *h = hash_for_write(kv);
    size_t maxlen = 0, sumlen = 0, npairs = (size_t)(c->argc - 2) / 2;
    for (int i = 2; i < c->argc; i++) {
        if (c->argv[i].len > maxlen) maxlen = c->argv[i].len;
        sumlen += c->argv[i].len;
    }
    hash_prepare(&h, npairs, maxlen, sumlen);
    long long created = 0;
    for (int i = 2; i < c->argc; i += 2) {
        const resp_arg_t *f = &c->argv[i], *v = &c->argv[i + 1];
        created += hash_set(&h, f->ptr, f->len, v->ptr, v->len);
    }
    store(c, kv, &c->argv[1], h);
    if (is_hmset)
        reply_ok(c);
    else
        reply_int(c, created);
    changed(c, &c->argv[1], NOTIFY_HASH, "hset");
    srv.dirty += (long long)npairs - 1; /* Redis counts every pair; changed() counted one */
}

static void hset_cmd(client_t *c)
{
    hset_generic(c, 0);
}

static void hmset_cmd(client_t *c)
{
    hset_generic(c, 1);
}

static void hsetnx_cmd(client_t *c)
{
    const resp_arg_t *f = &c->argv[2], *v = &c->argv[3];
    if (field_len_or_reply(c, f)) return;
    int err;
    kv_t *kv = lookup_write_type(c, &c->argv[1], OBJ_HASH, &err);
    if (err) return;
    if (kv && hash_get(as_hash(kv), f->ptr, f->len, NULL, NULL)) {
        reply_int(c, 0);
        return;
    }
    hash_t *h = hash_for_write(kv);
    hash_prepare(&h, 1, f->len > v->len ? f->len : v->len, f->len + v->len);
    hash_set(&h, f->ptr, f->len, v->ptr, v->len);
    store(c, kv, &c->argv[1], h);
    reply_int(c, 1);
    changed(c, &c->argv[1], NOTIFY_HASH, "hset");
}

/* ---- HGET HMGET HLEN HSTRLEN HEXISTS ---- */

static void hget_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_HASH, &err);
    if (err) return;
    const char *v;
    size_t vlen;
    if (kv && hash_get(as_hash(kv), c->argv[2].ptr, c->argv[2].len, &v, &vlen))
        reply_bulk(c, v, vlen);
    else
        reply_null(c);
}

static void hmget_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_HASH, &err);
    if (err) return;
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        const char *v;
        size_t vlen;
        if (kv && hash_get(as_hash(kv), c->argv[i].ptr, c->argv[i].len, &v, &vlen))
            reply_bulk(c, v, vlen);
        else
            reply_null(c);
    }
}

static void hlen_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_HASH, &err);
    if (err) return;
    reply_int(c, kv ? (long long)hash_len(as_hash(kv)) : 0);
}

static void hstrlen_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_HASH, &err);
    if (err) return;
    size_t vlen = 0;
    if (kv && !hash_get(as_hash(kv), c->argv[2].ptr, c->argv[2].len, NULL, &vlen)) vlen = 0;
    reply_int(c, (long long)vlen);
}

static void hexists_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_HASH, &err);
    if (err) return;
    reply_int(c, kv && hash_get(as_hash(kv), c->argv[2].ptr, c->argv[2].len, NULL, NULL));
}

/* ---- HGETALL HKEYS HVALS ---- */

enum { WANT_KEYS = 1, WANT_VALUES = 2 };

static void getall_generic(client_t *c, int want)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_HASH, &err);
    if (err) return;
    int both = want == (WANT_KEYS | WANT_VALUES);
    size_t n = kv ? hash_len(as_hash(kv)) : 0;
    if (reply_fits_or_reply(c, n, both ? 2 * REPLY_MIN_BULK : REPLY_MIN_BULK) < 0) return;
    if (both)
        reply_map(c, (long long)n);
    else
        reply_array(c, (long long)n);
    if (!kv) return;
    hash_iter_t it;
    hash_entry_t e;
    hash_iter_init(&it, as_hash(kv));
    while (!reply_stopped(c) && hash_iter_next(&it, &e)) {
        if (want & WANT_KEYS) reply_bulk(c, e.field, e.flen);
        if (want & WANT_VALUES) reply_bulk(c, e.value, e.vlen);
    }
}

static void hgetall_cmd(client_t *c)
{
    getall_generic(c, WANT_KEYS | WANT_VALUES);
}

static void hkeys_cmd(client_t *c)
{
    getall_generic(c, WANT_KEYS);
}

static void hvals_cmd(client_t *c)
{
    getall_generic(c, WANT_VALUES);
}

/* ---- HDEL ---- */

static void hdel_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_write_type(c, &c->argv[1], OBJ_HASH, &err);
    if (err) return;
    if (!kv) {
        reply_int(c, 0);
        return;
    }
    hash_t *h = as_hash(kv);
    long long deleted = 0;
    int removed = 0;
    for (int i = 2; i < c->argc; i++) {
        if (!hash_del(&h, c->argv[i].ptr, c->argv[i].len)) continue;
        deleted++;
        if (hash_len(h) == 0) {
            removed = 1;
            break;
        }
    }
    kv->val = &h->h;
    if (removed) db_delete_kv(c->db, kv);
    if (deleted) {
        changed(c, &c->argv[1], NOTIFY_HASH, "hdel");
        if (removed) changed(c, &c->argv[1], NOTIFY_GENERIC, "del");
        srv.dirty += deleted - 1 - removed; /* Redis counts every field removed */
    }
    reply_int(c, deleted);
}

/* ---- HINCRBY HINCRBYFLOAT ---- */

static void hincrby_cmd(client_t *c)
{
    const resp_arg_t *f = &c->argv[2];
    long long incr, value = 0;
    if (arg_ll_or_reply(c, &c->argv[3], &incr, NULL)) return;
    if (field_len_or_reply(c, f)) return;
    int err;
    kv_t *kv = lookup_write_type(c, &c->argv[1], OBJ_HASH, &err);
    if (err) return;
    const char *v;
    size_t vlen;
    if (kv && hash_get(as_hash(kv), f->ptr, f->len, &v, &vlen) && !str_to_ll(v, vlen, &value)) {
        reply_error(c, "ERR hash value is not an integer");
        return;
    }
    if ((incr < 0 && value < 0 && incr < LLONG_MIN - value) ||
        (incr > 0 && value > 0 && incr > LLONG_MAX - value)) {
        reply_error(c, ERR_OVERFLOW);
        return;
    }
    value += incr;
    char buf[24];
    size_t n = ll_to_str(buf, value);
    hash_t *h = hash_for_write(kv);
    hash_set(&h, f->ptr, f->len, buf, n);
    store(c, kv, &c->argv[1], h);
    reply_int(c, value);
    changed(c, &c->argv[1], NOTIFY_HASH, "hincrby");
}

static void hincrbyfloat_cmd(client_t *c)
{
    const resp_arg_t *f = &c->argv[2];
    long double incr, value = 0;
    if (arg_long_double_or_reply(c, &c->argv[3], &incr, NULL)) return;
    if (isnan(incr) || isinf(incr)) {
        reply_error(c, "ERR value is NaN or Infinity");
        return;
    }
    if (field_len_or_reply(c, f)) return;
    int err;
    kv_t *kv = lookup_write_type(c, &c->argv[1], OBJ_HASH, &err);
    if (err) return;
    const char *v;
    size_t vlen;
    if (kv && hash_get(as_hash(kv), f->ptr, f->len, &v, &vlen) && !str_to_ld(v, vlen, &value)) {
        reply_error(c, "ERR hash value is not a float");
        return;
    }
    value += incr;
    char buf[LD_STR_MAX];
    size_t n = isnan(value) || isinf(value) ? 0 : ld_to_str(buf, sizeof(buf), value);
    if (n == 0) {
        reply_error(c, "ERR increment would produce NaN or Infinity");
        return;
    }
    hash_t *h = hash_for_write(kv);
    hash_set(&h, f->ptr, f->len, buf, n);
    store(c, kv, &c->argv[1], h);
    reply_bulk(c, buf, n);
    changed(c, &c->argv[1], NOTIFY_HASH, "hincrbyfloat");
}

/* ---- HRANDFIELD ---- */

static void reply_entry(client_t *c, const hash_entry_t *e, int withvalues)
{
    if (withvalues && c->resp > 2) reply_array(c, 2);
    reply_bulk(c, e->field, e->flen);
    if (withvalues) reply_bulk(c, e->value, e->vlen);
}

/* HRANDFIELD key count [WITHVALUES], count already parsed (Redis's
 * hrandfieldWithCountCommand). A negative count allows repetitions and returns exactly -count
 * fields; a positive one returns distinct fields, the whole hash when count >= its length. */
static void hrandfield_count(client_t *c, long long l, int withvalues)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_HASH, &err);
    if (err) return;
    if (!kv) {
        reply_array(c, 0);
        return;
    }
    hash_t *h = as_hash(kv);
    size_t size = hash_len(h);
    int uniq = l >= 0;
    unsigned long long count = uniq ? (unsigned long long)l : (unsigned long long)-l;
    if (count == 0) {
        reply_array(c, 0);
        return;
    }
    int mult = withvalues && c->resp == 2 ? 2 : 1;
    /* field, and value: a second bulk, in a pair ("*2\r\n") in RESP3 */
    unsigned long long item =
        withvalues ? 2 * REPLY_MIN_BULK + (c->resp > 2 ? 4 : 0) : REPLY_MIN_BULK;
    if (reply_fits_or_reply(c, uniq && count > size ? size : count, item) < 0) return;
    if (!uniq || count == 1) {
        reply_array(c, (long long)count * mult);
        size_t batch = count < RANDOM_BATCH ? (size_t)count : RANDOM_BATCH;
        hash_entry_t *v = xmalloc(batch * sizeof(*v));
        while (count && !reply_stopped(c)) {
            size_t n = count < batch ? (size_t)count : batch;
            hash_random_pairs(h, n, v);
            for (size_t i = 0; i < n; i++) reply_entry(c, &v[i], withvalues);
            count -= n;
        }
        xfree(v);
        return;
    }
    if (count >= size) {
        reply_array(c, (long long)size * mult);
        hash_iter_t it;
        hash_entry_t e;
        hash_iter_init(&it, h);
        while (hash_iter_next(&it, &e)) reply_entry(c, &e, withvalues);
        return;
    }
    reply_array(c, (long long)count * mult);
    hash_entry_t *v = xmalloc((size_t)count * sizeof(*v));
    hash_random_unique(h, (size_t)count, v);
    for (size_t i = 0; i < count; i++) reply_entry(c, &v[i], withvalues);
    xfree(v);
}

static void hrandfield_cmd(client_t *c)
{
    if (c->argc >= 3) {
        long long l;
        if (arg_ll_or_reply(c, &c->argv[2], &l, NULL)) return;
        if (l == LLONG_MIN) {
            reply_error(c, "ERR value is out of range, value must between -9223372036854775807 "
                           "and 9223372036854775807");
            return;
        }
        int withvalues = 0;
        if (c->argc > 4 || (c->argc == 4 && !arg_is(&c->argv[3], "withvalues"))) {
            reply_syntax_error(c);
            return;
        }
        if (c->argc == 4) {
            withvalues = 1;
            if (l < -LLONG_MAX / 2 || l > LLONG_MAX / 2) {
                reply_error(c, "ERR value is out of range");
                return;
            }
        }
        hrandfield_count(c, l, withvalues);
        return;
    }
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_HASH, &err);
    if (err) return;
    if (!kv) {
        reply_null(c);
        return;
    }
    hash_entry_t e;
    hash_random(as_hash(kv), &e);
    reply_bulk(c, e.field, e.flen);
}

/* ---- HSCAN ---- */

typedef struct scan_buf {
    hash_entry_t *v;
    size_t n, cap;
} scan_buf_t;

static void scan_collect(void *ud, const hash_entry_t *e)
{
    scan_buf_t *b = ud;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->v = xrealloc(b->v, b->cap * sizeof(*b->v));
    }
    b->v[b->n++] = *e;
}

static void hscan_cmd(client_t *c)
{
    uint64_t cursor;
    if (scan_cursor_or_reply(c, &c->argv[2], &cursor)) return;
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_HASH, &err);
    if (err) return;
    if (!kv) {
        reply_array(c, 2);
        reply_bulk(c, "0", 1);
        reply_array(c, 0);
        return;
    }
    long long count = 10;
    const resp_arg_t *pat = NULL;
    if (scan_count_match_or_reply(c, 3, &count, &pat) < 0) return;
    hash_t *h = as_hash(kv);
    scan_buf_t b = {NULL, 0, 0};
    if (h->h.enc == ENC_LISTPACK) {
        cursor = hash_scan(h, cursor, scan_collect, &b);
    } else {
        /* As Redis: up to 10*count steps, until count fields and values are collected. */
        long long maxit = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
        do {
            cursor = hash_scan(h, cursor, scan_collect, &b);
        } while (cursor && maxit-- && (long long)b.n * 2 < count);
    }
    size_t kept = 0;
    for (size_t i = 0; i < b.n; i++) {
        if (pat && !strglob_match(pat->ptr, pat->len, b.v[i].field, b.v[i].flen, 0)) continue;
        b.v[kept++] = b.v[i];
    }
    char cbuf[24];
    reply_array(c, 2);
    reply_bulk(c, cbuf, ull_to_str(cbuf, cursor));
    reply_array(c, (long long)kept * 2);
    for (size_t i = 0; i < kept; i++) {
        reply_bulk(c, b.v[i].field, b.v[i].flen);
        reply_bulk(c, b.v[i].value, b.v[i].vlen);
    }
    xfree(b.v);
}

/* ---- the table ---- */

#define RO_FAST (CMD_READONLY | CMD_FAST)
#define WR_FAST (CMD_WRITE | CMD_DENYOOM | CMD_FAST)

command_t cmds_hash[] = {
    {"hset", hset_cmd, -4, WR_FAST, 1, 1, 1, "hash", "2.0.0",
     "Set the string value of a hash field",
     "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command "
     "is called with multiple field/value pairs."},
    {"hsetnx", hsetnx_cmd, 4, WR_FAST, 1, 1, 1, "hash", "2.0.0",
     "Set the value of a hash field, only if the field does not exist", "O(1)",
     .key_flags = "RW insert"},
    {"hmset", hmset_cmd, -4, WR_FAST, 1, 1, 1, "hash", "2.0.0",
     "Set multiple hash fields to multiple values",
     "O(N) where N is the number of fields being set."},
    {"hget", hget_cmd, 3, RO_FAST, 1, 1, 1, "hash", "2.0.0", "Get the value of a hash field",
     "O(1)"},
    {"hmget", hmget_cmd, -3, RO_FAST, 1, 1, 1, "hash", "2.0.0",
     "Get the values of all the given hash fields",
     "O(N) where N is the number of fields being requested."},
    {"hgetall", hgetall_cmd, 2, CMD_READONLY, 1, 1, 1, "hash", "2.0.0",
     "Get all the fields and values in a hash", "O(N) where N is the size of the hash."},
    {"hdel", hdel_cmd, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, "hash", "2.0.0",
     "Delete one or more hash fields", "O(N) where N is the number of fields to be removed.",
     .key_flags = "RW delete"},
    {"hlen", hlen_cmd, 2, RO_FAST, 1, 1, 1, "hash", "2.0.0", "Get the number of fields in a hash",
     "O(1)", .key_flags = "RO"},
    {"hexists", hexists_cmd, 3, RO_FAST, 1, 1, 1, "hash", "2.0.0",
     "Determine if a hash field exists", "O(1)", .key_flags = "RO"},
    {"hkeys", hkeys_cmd, 2, CMD_READONLY, 1, 1, 1, "hash", "2.0.0", "Get all the fields in a hash",
     "O(N) where N is the size of the hash."},
    {"hvals", hvals_cmd, 2, CMD_READONLY, 1, 1, 1, "hash", "2.0.0", "Get all the values in a hash",
     "O(N) where N is the size of the hash."},
    {"hstrlen", hstrlen_cmd, 3, RO_FAST, 1, 1, 1, "hash", "3.2.0",
     "Get the length of the value of a hash field", "O(1)", .key_flags = "RO"},
    {"hincrby", hincrby_cmd, 4, WR_FAST, 1, 1, 1, "hash", "2.0.0",
     "Increment the integer value of a hash field by the given number", "O(1)",
     .key_flags = "RW access update"},
    {"hincrbyfloat", hincrbyfloat_cmd, 4, WR_FAST, 1, 1, 1, "hash", "2.6.0",
     "Increment the float value of a hash field by the given amount", "O(1)",
     .key_flags = "RW access update"},
    {"hrandfield", hrandfield_cmd, -2, CMD_READONLY, 1, 1, 1, "hash", "6.2.0",
     "Get one or multiple random fields from a hash",
     "O(N) where N is the number of fields returned"},
    {"hscan", hscan_cmd, -3, CMD_READONLY, 1, 1, 1, "hash", "2.8.0",
     "Incrementally iterate hash fields and associated values",
     "O(1) for every call. O(N) for a complete iteration, including enough command calls for the "
     "cursor to return back to 0. N is the number of elements inside the collection.."},
    {NULL},
};
