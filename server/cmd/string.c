/* server/cmd/string.c - the string commands: GET SET SETNX SETEX PSETEX MGET MSET MSETNX GETSET
 * GETDEL GETEX APPEND STRLEN GETRANGE SETRANGE SUBSTR INCR DECR INCRBY DECRBY INCRBYFLOAT.
 *
 * Replies, errors and keyspace events as Redis 7.0 (t_string.c). A string value is one
 * str_obj_t allocation. GET and SET are the hot path of every benchmark: GET is one dict lookup
 * and one bulk reply; SET over an existing string whose block is large enough (and not more
 * than about twice too large) rewrites the bytes in place instead of allocating, which is
 * invisible to clients because nothing else references a value. INCR and friends reuse the
 * block the same way; APPEND and SETRANGE grow it with str_grow.
 *
 * Lookups count keyspace hits and misses where Redis's lookupKeyRead does (reads, and the GET
 * part of SET ... GET, GETSET, GETDEL, GETEX), not on the lookups of writes. Expired keys met by
 * a lookup are deleted by storage, which reports them through the server's observer.
 * Runs on the loop thread. */
#include "common/alloc.h"
#include "common/util.h"
#include "server/command.h"
#include "server/reply.h"
#include "server/server.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* SET / GETEX option flags, as Redis's OBJ_* flags. */
enum {
    SET_NX = 1 << 0,
    SET_XX = 1 << 1,
    SET_EX = 1 << 2,
    SET_PX = 1 << 3,
    SET_KEEPTTL = 1 << 4,
    SET_GET = 1 << 5,
    SET_EXAT = 1 << 6,
    SET_PXAT = 1 << 7,
    SET_PERSIST = 1 << 8,
};
#define SET_ANY_EXPIRE (SET_EX | SET_PX | SET_EXAT | SET_PXAT)


#define ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."
#define ERR_TOO_BIG "ERR string exceeds maximum allowed size (proto-max-bulk-len)"

/* Longest INCRBYFLOAT result: a long double printed with "%.17Lf" (as Redis's
 * MAX_LONG_DOUBLE_CHARS, 5 KiB). */
#define LD_STR_MAX 5120

/* ---- lookups ---- */

static inline long long now_ms(void)
{
    return db_now_ms ? db_now_ms : time_ms();
}

static inline str_obj_t *as_str(kv_t *kv)
{
    return (str_obj_t *)kv->val;
}

/* 1 if kv holds a value of another type than string (WRONGTYPE replied). kv may be NULL. */
static inline int wrongtype(client_t *c, kv_t *kv)
{
    if (kv && kv->val->type != OBJ_STRING) {
        reply_wrongtype(c);
        return 1;
    }
    return 0;
}

/* ---- storing ---- */

/* Whether an existing string block can take len bytes in place without wasting much memory. */
static inline int reusable(const str_obj_t *s, size_t len)
{
    return s->cap >= len && s->cap <= 2 * len + 32;
}

/* Makes key hold p[0..len) as a string: in place when kv is a string with a suitable block,
 * else with a new object (kv may be NULL: the key is added). Drops the TTL unless keep_ttl.
 * Returns the entry, or NULL (OOM replied, nothing changed) when memory is short. */
static kv_t *store_string(client_t *c, kv_t *kv, const resp_arg_t *key, const void *p, size_t len,
                          int keep_ttl)
{
    if (!kv && db_expire_paused) kv = db_find(c->db, key->ptr, key->len);
    if (kv && kv->val->type == OBJ_STRING && reusable(as_str(kv), len)) {
        str_obj_t *s = as_str(kv);
        memcpy(s->data, p, len);
        s->data[len] = '\0';
        s->len = (uint32_t)len;
        s->h.flags &= (uint16_t)~STR_FLAGS_ENC;
    } else {
        str_obj_t *s = str_try_new(p, len, len);
        if (!s) {
            reply_error(c, ERR_OOM);
            return NULL;
        }
        if (!kv) return db_add(c->db, key->ptr, key->len, &s->h);
        db_replace_value(c->db, kv, &s->h);
    }
    if (!keep_ttl) db_remove_expire(c->db, kv);
    return kv;
}

static inline void changed(client_t *c, const resp_arg_t *key, int klass, const char *event)
{
    server_key_changed(c, c->db, key->ptr, key->len, klass, event);
}

static void expire_time_error(client_t *c)
{
    reply_errorf(c, "ERR invalid expire time in '%s' command", c->cmd ? c->cmd->fullname : "set");
}

/* Puts the result of str_grow in kv's place. str_grow may have moved the block (realloc), so
 * the old pointer is already gone: kv->val is set first so that db_replace_value sees the
 * same value and frees nothing. */
static inline void replace_grown(client_t *c, kv_t *kv, str_obj_t *grown)
{
    grown->h.flags = (uint16_t)((grown->h.flags & ~STR_FLAGS_ENC) | STR_FLAG_RAW);
    kv->val = &grown->h;
    db_replace_value(c->db, kv, &grown->h);
}

/* Checks a would-be string length against proto-max-bulk-len (Redis's checkStringLength). */
static int check_length_or_reply(client_t *c, long long size, long long append)
{
    long long max = srv.cfg.proto_max_bulk_len;
    if (size > max || append > max - size) {
        reply_error(c, ERR_TOO_BIG);
        return -1;
    }
    return 0;
}

/* ---- SET family ---- */

/* Parses SET (is_get 0, options from argv[3]) or GETEX (is_get 1, from argv[2]) options with
 * Redis's conflict rules. *expire is the argument of EX/PX/EXAT/PXAT. Replies a syntax error
 * and returns -1 on a bad or conflicting option. */
static int parse_ext_args_or_reply(client_t *c, int is_get, int *flags, const resp_arg_t **expire)
{
    int f = 0;
    for (int j = is_get ? 2 : 3; j < c->argc; j++) {
        const resp_arg_t *a = &c->argv[j];
        int has_next = j + 1 < c->argc;
        if (!is_get && arg_is(a, "nx") && !(f & SET_XX)) {
            f |= SET_NX;
        } else if (!is_get && arg_is(a, "xx") && !(f & SET_NX)) {
            f |= SET_XX;
        } else if (!is_get && arg_is(a, "get")) {
            f |= SET_GET;
        } else if (!is_get && arg_is(a, "keepttl") && !(f & (SET_PERSIST | SET_ANY_EXPIRE))) {
            f |= SET_KEEPTTL;
        } else if (is_get && arg_is(a, "persist") && !(f & (SET_ANY_EXPIRE | SET_KEEPTTL))) {
            f |= SET_PERSIST;
        } else if (has_next &&
                   (arg_is(a, "ex") || arg_is(a, "px") || arg_is(a, "exat") || arg_is(a, "pxat"))) {
            int bit = arg_is(a, "ex")     ? SET_EX
                      : arg_is(a, "px")   ? SET_PX
                      : arg_is(a, "exat") ? SET_EXAT
                                          : SET_PXAT;
            /* the same option may repeat; any other expire option, KEEPTTL or PERSIST may not */
            if (f & ((SET_ANY_EXPIRE | SET_KEEPTTL | SET_PERSIST) & ~bit)) goto syntax;
            f |= bit;
            *expire = &c->argv[++j];
        } else {
            goto syntax;
        }
    }
    *flags = f;
    return 0;
syntax:
    reply_syntax_error(c);
    return -1;
}

/* The absolute Unix ms time an EX/PX/EXAT/PXAT argument stands for (Redis's
 * getExpireMillisecondsOrReply): positive, no overflow. Replies and returns -1 otherwise. */
static int expire_ms_or_reply(client_t *c, const resp_arg_t *arg, int flags, long long *out)
{
    long long v;
    int seconds = (flags & (SET_EX | SET_EXAT)) != 0;
    if (arg_ll_or_reply(c, arg, &v, NULL)) return -1;
    if (v <= 0 || (seconds && v > LLONG_MAX / 1000)) goto bad;
    if (seconds) v *= 1000;
    if (flags & (SET_EX | SET_PX)) {
        long long now = now_ms();
        if (v > LLONG_MAX - now) goto bad;
        v += now;
    }
    *out = v;
    return 0;
bad:
    expire_time_error(c);
    return -1;
}

/* Replies with the string value of argv[1] (null when absent) and returns its entry through
 * *out (NULL when absent). Returns -1 with WRONGTYPE replied for another type. */
static int get_generic(client_t *c, kv_t **out)
{
    kv_t *kv = lookup_read(c, &c->argv[1]);
    *out = kv;
    if (!kv) {
        reply_null(c);
        return 0;
    }
    if (wrongtype(c, kv)) return -1;
    reply_bulk(c, as_str(kv)->data, as_str(kv)->len);
    return 0;
}

/* Redis's setGenericCommand. int_replies: reply :1 / :0 (SETNX) instead of +OK / null. */
static void set_generic(client_t *c, int flags, const resp_arg_t *val, const resp_arg_t *expire,
                        int int_replies)
{
    const resp_arg_t *key = &c->argv[1];
    long long when = 0;
    kv_t *kv;
    if (expire && expire_ms_or_reply(c, expire, flags, &when)) return;
    if (flags & SET_GET) {
        if (get_generic(c, &kv)) return;
    } else {
        kv = lookup_write(c, key);
    }
    if (((flags & SET_NX) && kv) || ((flags & SET_XX) && !kv)) {
        if (flags & SET_GET) return; /* the GET reply was the reply */
        if (int_replies)
            reply_int(c, 0);
        else
            reply_null(c);
        return;
    }
    kv = store_string(c, kv, key, val->ptr, val->len, (flags & SET_KEEPTTL) || expire);
    if (!kv) return;
    changed(c, key, NOTIFY_STRING, "set");
    if (expire) {
        db_set_expire(c->db, kv, when);
        changed(c, key, NOTIFY_GENERIC, "expire");
    }
    if (flags & SET_GET) return;
    if (int_replies)
        reply_int(c, 1);
    else
        reply_ok(c);
}

static void get_cmd(client_t *c)
{
    kv_t *kv = lookup_read(c, &c->argv[1]);
    if (!kv) {
        reply_null(c);
        return;
    }
    if (wrongtype(c, kv)) return;
    reply_bulk(c, as_str(kv)->data, as_str(kv)->len);
}

static void set_cmd(client_t *c)
{
    const resp_arg_t *expire = NULL;
    int flags;
    if (parse_ext_args_or_reply(c, 0, &flags, &expire)) return;
    set_generic(c, flags, &c->argv[2], expire, 0);
}

static void setnx_cmd(client_t *c)
{
    set_generic(c, SET_NX, &c->argv[2], NULL, 1);
}

static void setex_cmd(client_t *c)
{
    set_generic(c, SET_EX, &c->argv[3], &c->argv[2], 0);
}

static void psetex_cmd(client_t *c)
{
    set_generic(c, SET_PX, &c->argv[3], &c->argv[2], 0);
}

static void getset_cmd(client_t *c)
{
    kv_t *kv;
    if (get_generic(c, &kv)) return;
    if (store_string(c, kv, &c->argv[1], c->argv[2].ptr, c->argv[2].len, 0))
        changed(c, &c->argv[1], NOTIFY_STRING, "set");
}

static void getdel_cmd(client_t *c)
{
    kv_t *kv;
    if (get_generic(c, &kv) || !kv) return;
    db_delete_kv(c->db, kv);
    changed(c, &c->argv[1], NOTIFY_GENERIC, "del");
}

static void getex_cmd(client_t *c)
{
    const resp_arg_t *expire = NULL;
    const resp_arg_t *key = &c->argv[1];
    int flags;
    long long when = 0;
    if (parse_ext_args_or_reply(c, 1, &flags, &expire)) return;
    kv_t *kv = lookup_read(c, key);
    if (!kv) {
        reply_null(c);
        return;
    }
    if (wrongtype(c, kv)) return;
    if (expire && expire_ms_or_reply(c, expire, flags, &when)) return;
    reply_bulk(c, as_str(kv)->data, as_str(kv)->len);
    if ((flags & (SET_EXAT | SET_PXAT)) && when <= now_ms() && !srv.loading) {
        db_delete_kv(c->db, kv);
        changed(c, key, NOTIFY_GENERIC, "del");
    } else if (expire) {
        db_set_expire(c->db, kv, when);
        changed(c, key, NOTIFY_GENERIC, "expire");
    } else if ((flags & SET_PERSIST) && db_remove_expire(c->db, kv)) {
        changed(c, key, NOTIFY_GENERIC, "persist");
    }
}

static void mget_cmd(client_t *c)
{
    reply_array(c, c->argc - 1);
    for (int j = 1; j < c->argc; j++) {
        kv_t *kv = lookup_read(c, &c->argv[j]);
        if (kv && kv->val->type == OBJ_STRING)
            reply_bulk(c, as_str(kv)->data, as_str(kv)->len);
        else
            reply_null(c);
    }
}

static void mset_generic(client_t *c, int nx)
{
    if (c->argc % 2 == 0) {
        reply_arity_error(c);
        return;
    }
    if (nx) {
        for (int j = 1; j < c->argc; j += 2) {
            if (lookup_write(c, &c->argv[j])) {
                reply_int(c, 0);
                return;
            }
        }
    }
    for (int j = 1; j < c->argc; j += 2) {
        const resp_arg_t *key = &c->argv[j], *val = &c->argv[j + 1];
        if (!store_string(c, lookup_write(c, key), key, val->ptr, val->len, 0)) return;
        changed(c, key, NOTIFY_STRING, "set");
    }
    if (nx)
        reply_int(c, 1);
    else
        reply_ok(c);
}

static void mset_cmd(client_t *c)
{
    mset_generic(c, 0);
}

static void msetnx_cmd(client_t *c)
{
    mset_generic(c, 1);
}

/* ---- APPEND, STRLEN, GETRANGE, SETRANGE ---- */

static void append_cmd(client_t *c)
{
    const resp_arg_t *key = &c->argv[1], *app = &c->argv[2];
    kv_t *kv = lookup_write(c, key);
    size_t total;
    if (!kv) {
        if (!store_string(c, NULL, key, app->ptr, app->len, 0)) return;
        total = app->len;
    } else {
        if (wrongtype(c, kv)) return;
        str_obj_t *s = as_str(kv);
        size_t old = s->len;
        if (check_length_or_reply(c, (long long)old, (long long)app->len)) return;
        str_obj_t *ns = str_grow(s, old + app->len);
        if (!ns) {
            reply_error(c, ERR_OOM);
            return;
        }
        memcpy(ns->data + old, app->ptr, app->len);
        replace_grown(c, kv, ns);
        total = ns->len;
    }
    changed(c, key, NOTIFY_STRING, "append");
    reply_int(c, (long long)total);
}

static void strlen_cmd(client_t *c)
{
    kv_t *kv = lookup_read(c, &c->argv[1]);
    if (!kv) {
        reply_int(c, 0);
        return;
    }
    if (wrongtype(c, kv)) return;
    reply_int(c, as_str(kv)->len);
}

static void getrange_cmd(client_t *c)
{
    long long start, end;
    if (arg_ll_or_reply(c, &c->argv[2], &start, NULL)) return;
    if (arg_ll_or_reply(c, &c->argv[3], &end, NULL)) return;
    kv_t *kv = lookup_read(c, &c->argv[1]);
    if (!kv) {
        reply_bulk(c, "", 0);
        return;
    }
    if (wrongtype(c, kv)) return;
    const str_obj_t *s = as_str(kv);
    long long len = s->len;
    if (start < 0 && end < 0 && start > end) {
        reply_bulk(c, "", 0);
        return;
    }
    if (start < 0) start += len;
    if (end < 0) end += len;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= len) end = len - 1;
    if (start > end || len == 0)
        reply_bulk(c, "", 0);
    else
        reply_bulk(c, s->data + start, (size_t)(end - start + 1));
}

static void setrange_cmd(client_t *c)
{
    const resp_arg_t *key = &c->argv[1], *val = &c->argv[3];
    long long offset;
    if (arg_ll_or_reply(c, &c->argv[2], &offset, NULL)) return;
    if (offset < 0) {
        reply_error(c, "ERR offset is out of range");
        return;
    }
    kv_t *kv = lookup_write(c, key);
    if (wrongtype(c, kv)) return;
    if (val->len == 0) {
        reply_int(c, kv ? as_str(kv)->len : 0);
        return;
    }
    if (check_length_or_reply(c, offset, (long long)val->len)) return;
    size_t need = (size_t)offset + val->len;
    str_obj_t *s;
    if (!kv) {
        s = str_try_new(NULL, need, need);
        if (!s) goto oom;
        memcpy(s->data + offset, val->ptr, val->len);
        s->h.flags |= STR_FLAG_RAW;
        db_add(c->db, key->ptr, key->len, &s->h);
    } else {
        s = str_grow(as_str(kv), need);
        if (!s) goto oom;
        memcpy(s->data + offset, val->ptr, val->len);
        replace_grown(c, kv, s);
    }
    changed(c, key, NOTIFY_STRING, "setrange");
    reply_int(c, s->len);
    return;
oom:
    reply_error(c, ERR_OOM);
}

/* ---- counters ---- */

static void incr_decr(client_t *c, long long incr)
{
    const resp_arg_t *key = &c->argv[1];
    kv_t *kv = lookup_write(c, key);
    long long value = 0;
    if (wrongtype(c, kv)) return;
    if (kv && !str_get_ll(as_str(kv), &value)) {
        reply_error(c, ERR_NOT_INT);
        return;
    }
    if ((incr < 0 && value < 0 && incr < LLONG_MIN - value) ||
        (incr > 0 && value > 0 && incr > LLONG_MAX - value)) {
        reply_error(c, ERR_OVERFLOW);
        return;
    }
    value += incr;
    char buf[24];
    /* the new value keeps the TTL, as Redis's dbOverwrite */
    if (!store_string(c, kv, key, buf, ll_to_str(buf, value), 1)) return;
    changed(c, key, NOTIFY_STRING, "incrby");
    reply_int(c, value);
}

static void incr_cmd(client_t *c)
{
    incr_decr(c, 1);
}

static void decr_cmd(client_t *c)
{
    incr_decr(c, -1);
}

static void incrby_cmd(client_t *c)
{
    long long incr;
    if (arg_ll_or_reply(c, &c->argv[2], &incr, NULL)) return;
    incr_decr(c, incr);
}

static void decrby_cmd(client_t *c)
{
    long long incr;
    if (arg_ll_or_reply(c, &c->argv[2], &incr, NULL)) return;
    if (incr == LLONG_MIN) {
        reply_error(c, "ERR decrement would overflow");
        return;
    }
    incr_decr(c, -incr);
}

static void incrbyfloat_cmd(client_t *c)
{
    const resp_arg_t *key = &c->argv[1];
    kv_t *kv = lookup_write(c, key);
    long double value = 0, incr;
    if (wrongtype(c, kv)) return;
    if (kv &&
        (as_str(kv)->len >= LD_STR_MAX || !str_to_ld(as_str(kv)->data, as_str(kv)->len, &value))) {
        reply_error(c, ERR_NOT_FLOAT);
        return;
    }
    if (c->argv[2].len >= LD_STR_MAX) {
        reply_error(c, ERR_NOT_FLOAT);
        return;
    }
    if (arg_long_double_or_reply(c, &c->argv[2], &incr, NULL)) return;
    value += incr;
    if (isnan(value) || isinf(value)) {
        reply_error(c, "ERR increment would produce NaN or Infinity");
        return;
    }
    char buf[LD_STR_MAX];
    size_t n = ld_to_str(buf, sizeof(buf), value);
    if (!(kv = store_string(c, kv, key, buf, n, 1))) return;
    kv->val->flags |= STR_FLAG_NOINT;
    changed(c, key, NOTIFY_STRING, "incrbyfloat");
    reply_bulk(c, buf, n);
}

/* ---- table ---- */

#define GETRANGE_COMPLEXITY                                                                        \
    "O(N) where N is the length of the returned string. The complexity is ultimately determined "  \
    "by the returned length, but because creating a substring from an existing string is very "    \
    "cheap, it can be considered O(1) for small strings."

/* SET overwrites its key, unless GET reads it first (Redis's variable_flags). */
static void set_keyflags(int argc, const resp_arg_t *argv, int i, char *out)
{
    (void)i;
    int get = 0;
    for (int j = 3; j < argc && !get; j++) get = arg_is(&argv[j], "get");
    strcpy(out, get ? "RW access update" : "OW update");
}

command_t cmds_string[] = {
    {"get", get_cmd, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "string", "1.0.0",
     "Returns the string value of a key.", "O(1)"},
    {"set", set_cmd, -3, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "string", "1.0.0",
     "Sets the string value of a key, ignoring its type. The key is created if it doesn't "
     "exist.",
     "O(1)", .value_arg = 2, .key_flags = "RW access update variable_flags",
     .keyflags = set_keyflags},
    {"setnx", setnx_cmd, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "1.0.0",
     "Set the string value of a key only when the key doesn't exist.", "O(1)", .value_arg = 2,
     .key_flags = "OW insert"},
    {"setex", setex_cmd, 4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "string", "2.0.0",
     "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.",
     "O(1)", .value_arg = 3, .key_flags = "OW update"},
    {"psetex", psetex_cmd, 4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "string", "2.6.0",
     "Sets both string value and expiration time in milliseconds of a key. The key is created "
     "if it doesn't exist.",
     "O(1)", .value_arg = 3, .key_flags = "OW update"},
    {"mget", mget_cmd, -2, CMD_READONLY | CMD_FAST, 1, -1, 1, "string", "1.0.0",
     "Atomically returns the string values of one or more keys.",
     "O(N) where N is the number of keys to retrieve."},
    {"mset", mset_cmd, -3, CMD_WRITE | CMD_DENYOOM, 1, -1, 2, "string", "1.0.1",
     "Atomically creates or modifies the string values of one or more keys.",
     "O(N) where N is the number of keys to set.", .key_flags = "OW update"},
    {"msetnx", msetnx_cmd, -3, CMD_WRITE | CMD_DENYOOM, 1, -1, 2, "string", "1.0.1",
     "Atomically modifies the string values of one or more keys only when all keys don't "
     "exist.",
     "O(N) where N is the number of keys to set.", .key_flags = "OW insert"},
    {"getset", getset_cmd, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "1.0.0",
     "Returns the previous string value of a key after setting it to a new value.", "O(1)",
     .value_arg = 2, .key_flags = "RW access update"},
    {"getdel", getdel_cmd, 2, CMD_WRITE | CMD_FAST, 1, 1, 1, "string", "6.2.0",
     "Returns the string value of a key after deleting the key.", "O(1)",
     .key_flags = "RW access delete"},
    {"getex", getex_cmd, -2, CMD_WRITE | CMD_FAST, 1, 1, 1, "string", "6.2.0",
     "Returns the string value of a key after setting its expiration time.", "O(1)",
     .key_flags = "RW access update"},
    {"append", append_cmd, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "2.0.0",
     "Appends a string to the value of a key. Creates the key if it doesn't exist.",
     "O(1). The amortized time complexity is O(1) assuming the appended value is small and the "
     "already present value is of any size, since the dynamic string library used by Redis "
     "will double the free space available on every reallocation.",
     .value_arg = 2, .key_flags = "RW insert"},
    {"strlen", strlen_cmd, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "string", "2.2.0",
     "Returns the length of a string value.", "O(1)", .key_flags = "RO"},
    {"getrange", getrange_cmd, 4, CMD_READONLY, 1, 1, 1, "string", "2.4.0",
     "Returns a substring of the string stored at a key.", GETRANGE_COMPLEXITY},
    {"setrange", setrange_cmd, 4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "string", "2.2.0",
     "Overwrites a part of a string value with another by an offset. Creates the key if it "
     "doesn't exist.",
     "O(1), not counting the time taken to copy the new string in place. Usually, this string "
     "is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M "
     "being the length of the value argument."},
    {"substr", getrange_cmd, 4, CMD_READONLY, 1, 1, 1, "string", "1.0.0",
     "Returns a substring from a string value.", GETRANGE_COMPLEXITY},
    {"incr", incr_cmd, 2, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "1.0.0",
     "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't "
     "exist.",
     "O(1)", .key_flags = "RW access update"},
    {"decr", decr_cmd, 2, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "1.0.0",
     "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't "
     "exist.",
     "O(1)", .key_flags = "RW access update"},
    {"incrby", incrby_cmd, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "1.0.0",
     "Increments the integer value of a key by a number. Uses 0 as initial value if the key "
     "doesn't exist.",
     "O(1)", .key_flags = "RW access update"},
    {"decrby", decrby_cmd, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "1.0.0",
     "Decrements a number from the integer value of a key. Uses 0 as initial value if the key "
     "doesn't exist.",
     "O(1)", .key_flags = "RW access update"},
    {"incrbyfloat", incrbyfloat_cmd, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string",
     "2.6.0",
     "Increment the floating point value of a key by a number. Uses 0 as initial value if the "
     "key doesn't exist.",
     "O(1)", .key_flags = "RW access update"},
    {NULL},
};
