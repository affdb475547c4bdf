/* server/cmd/stream.c - the stream commands: XADD XRANGE XREVRANGE XLEN XDEL XTRIM XREAD
 * XREADGROUP XGROUP XACK XPENDING XCLAIM XAUTOCLAIM XINFO XSETID.
 *
 * Replies, errors, argument checking order, keyspace events and what touches WATCH as Redis
 * 7.0's t_stream.c: only XADD, XDEL, XTRIM and XGROUP CREATE MKSTREAM signal the key as
 * modified; group commands send their events without it. srv.dirty grows as Redis's
 * server.dirty does. The stream itself is storage/t_stream.c.
 *
 * The append-only file gets each write's exact effect: XADD with the id it generated and an
 * approximate trim turned exact ("=" and the resulting length or first id), XREADGROUP, XCLAIM
 * and XAUTOCLAIM as one "XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID
 * LASTID id" per pending entry they changed, plus XGROUP SETID / CREATECONSUMER where Redis
 * propagates them (aof_replace_argv). One addition: a read that advances a group also logs
 * XGROUP SETID ... ENTRIESREAD (Redis does for NOACK reads only), so the group's entries-read
 * counter survives a restart as well.
 *
 * Blocking XREAD / XREADGROUP wait through server/block.c: the command runs again whenever a
 * key it waits on changes. "$" is resolved when the client blocks and written into the kept
 * arguments (block_replace_arg), so the retry waits for entries after that id. A retry serves a
 * stream whose last id passed the awaited one (for XREADGROUP ">" the group's), as Redis
 * serves blocked readers: with an empty list when the added entries were deleted since. A retried
 * XREADGROUP whose key is gone or no longer a stream fails with -UNBLOCKED, one whose group is
 * gone with -NOGROUP, as Redis 7.0 unblocks them. Runs on the loop thread. */
#include "common/alloc.h"
#include "common/util.h"
#include "server/block.h"
#include "server/command.h"
#include "server/persist/aof.h"
#include "server/pubsub.h"
#include "server/reply.h"
#include "server/server.h"
#include "storage/t_stream.h"

#include <limits.h>
#include <string.h>

#define ERR_INVALID_ID "ERR Invalid stream ID specified as stream command argument"
#define XREAD_BLOCKED_DEFAULT_COUNT 1000
#define RWR_NOACK 1
#define RWR_RAW 2
#define RWR_HISTORY 4

static inline stream_t *as_stream(kv_t *kv)
{
    return (stream_t *)(void *)kv->val;
}

static inline long long now_ms(void)
{
    return db_now_ms ? db_now_ms : time_ms();
}

static void reply_id(client_t *c, const stream_id_t *id)
{
    char buf[STREAM_ID_STR];
    reply_bulk(c, buf, stream_id_fmt(buf, id));
}

static int id_or_reply(client_t *c, const resp_arg_t *a, stream_id_t *id, uint64_t missing_seq,
                       int strict, int *seq_given)
{
    if (stream_id_parse(a->ptr, a->len, id, missing_seq, strict, seq_given) == 0) return 0;
    reply_error(c, ERR_INVALID_ID);
    return -1;
}

/* A range bound: "(" makes it exclusive (then "-" and "+" are refused). */
static int interval_id_or_reply(client_t *c, const resp_arg_t *a, stream_id_t *id, int *excl,
                                uint64_t missing_seq)
{
    *excl = a->len > 1 && a->ptr[0] == '(';
    if (*excl) {
        resp_arg_t t = {a->ptr + 1, a->len - 1};
        return id_or_reply(c, &t, id, missing_seq, 1, NULL);
    }
    return id_or_reply(c, a, id, missing_seq, 0, NULL);
}

/* The key was modified (WATCH, tracking, blocked clients) without a keyspace event. */
static void signal_modified(client_t *c, const resp_arg_t *key)
{
    server_key_changed(c, c->db, key->ptr, key->len, 0, "");
    srv.dirty--;
}

static void notify(client_t *c, const resp_arg_t *key, const char *event)
{
    notify_keyspace_event(NOTIFY_STREAM, event, key->ptr, key->len, c->dbid);
}

/* A consumer created as a side effect (XREADGROUP, XCLAIM): counted and announced. */
static stream_consumer_t *consumer_get(client_t *c, stream_cg_t *cg, const resp_arg_t *key,
                                       const resp_arg_t *name, int *created)
{
    stream_consumer_t *co = stream_consumer_find(cg, name->ptr, name->len);
    if (co) {
        co->seen_time = now_ms();
        if (created) *created = 0;
        return co;
    }
    co = stream_consumer_create(cg, name->ptr, name->len, now_ms());
    srv.dirty++;
    notify(c, key, "xgroup-createconsumer");
    if (created) *created = 1;
    return co;
}

/* ---- propagation ---- */

static void propagate_xclaim(client_t *c, const resp_arg_t *key, const stream_cg_t *cg,
                             const stream_id_t *id, const stream_nack_t *nack)
{
    char idb[STREAM_ID_STR], lastb[STREAM_ID_STR], timeb[24], countb[24];
    resp_arg_t a[14] = {
        {"XCLAIM", 6},
        *key,
        {cg->name, cg->namelen},
        {nack->consumer->name, nack->consumer->namelen},
        {"0", 1},
        {idb, stream_id_fmt(idb, id)},
        {"TIME", 4},
        {timeb, ll_to_str(timeb, nack->delivery_time)},
        {"RETRYCOUNT", 10},
        {countb, ull_to_str(countb, nack->delivery_count)},
        {"FORCE", 5},
        {"JUSTID", 6},
        {"LASTID", 6},
        {lastb, stream_id_fmt(lastb, &cg->last_id)},
    };
    aof_replace_argv(c, 14, a);
}

static void propagate_group_id(client_t *c, const resp_arg_t *key, const stream_cg_t *cg)
{
    char idb[STREAM_ID_STR], readb[24];
    resp_arg_t a[7] = {
        {"XGROUP", 6},          {"SETID", 5},
        *key,                   {cg->name, cg->namelen},
        {idb, stream_id_fmt(idb, &cg->last_id)}, {"ENTRIESREAD", 11},
        {readb, ll_to_str(readb, cg->entries_read)},
    };
    aof_replace_argv(c, 7, a);
}

static void propagate_consumer_creation(client_t *c, const resp_arg_t *key, const stream_cg_t *cg,
                                        const stream_consumer_t *co)
{
    resp_arg_t a[5] = {{"XGROUP", 6}, {"CREATECONSUMER", 14}, *key, {cg->name, cg->namelen},
                       {co->name, co->namelen}};
    aof_replace_argv(c, 5, a);
}

/* ---- replying with entries ---- */

static void reply_entry_fields(client_t *c, stream_iter_t *it, int64_t nf)
{
    reply_array(c, nf * 2);
    while (nf--) {
        const char *f, *v;
        size_t fl, vl;
        stream_iter_field(it, &f, &fl, &v, &vl);
        reply_bulk(c, f, fl);
        reply_bulk(c, v, vl);
    }
}

static size_t reply_range(client_t *c, stream_t *s, const stream_id_t *start,
                          const stream_id_t *end, size_t count, int rev, stream_cg_t *cg,
                          stream_consumer_t *co, int flags, const resp_arg_t *key);

/* XREADGROUP with an id other than ">": the consumer's own pending entries from start. */
static size_t reply_history(client_t *c, stream_t *s, const stream_id_t *start, size_t count,
                            stream_consumer_t *co)
{
    size_t h = reply_defer(c), n = 0;
    for (stream_idx_node_t *x = stream_idx_seek_ge(&co->pel, start); x && (!count || n < count);
         x = stream_idx_next(x)) {
        if (reply_range(c, s, &x->id, &x->id, 1, 0, NULL, NULL, RWR_RAW, NULL) == 0) {
            reply_array(c, 2);
            reply_id(c, &x->id);
            reply_null_array(c);
        } else {
            stream_nack_t *nack = x->val;
            nack->delivery_time = now_ms();
            nack->delivery_count++;
        }
        n++;
        if (reply_stopped(c)) break;
    }
    reply_defer_finish(c, h, '*', (long long)n);
    return n;
}

/* Replies with the entries of [start, end] (at most count, 0: all), as Redis's
 * streamReplyWithRange: with a group, delivered entries advance it and (without NOACK) enter
 * the PELs, each propagated as XCLAIM. */
static size_t reply_range(client_t *c, stream_t *s, const stream_id_t *start,
                          const stream_id_t *end, size_t count, int rev, stream_cg_t *cg,
                          stream_consumer_t *co, int flags, const resp_arg_t *key)
{
    if (cg && (flags & RWR_HISTORY)) return reply_history(c, s, start, count, co);
    size_t h = (flags & RWR_RAW) ? (size_t)-1 : reply_defer(c), n = 0;
    int noack = flags & RWR_NOACK, propagate_last = 0;
    stream_iter_t it;
    stream_id_t id;
    int64_t nf;
    stream_iter_start(&it, s, start, end, rev);
    while (stream_iter_next(&it, &id, &nf)) {
        /* Redis logs the group's new last id with XGROUP SETID for NOACK reads only (XCLAIM's
         * LASTID carries it otherwise); we log it always, so that entries-read survives too */
        if (cg && stream_cg_advance(s, cg, &id)) propagate_last = 1;
        reply_array(c, 2);
        reply_id(c, &id);
        reply_entry_fields(c, &it, nf);
        if (cg && !noack) {
            stream_nack_t *nack = stream_pel_deliver(cg, co, &id, now_ms());
            if (key) propagate_xclaim(c, key, cg, &id, nack);
        }
        n++;
        if ((count && n == count) || reply_stopped(c)) break;
    }
    if (key && propagate_last) propagate_group_id(c, key, cg);
    if (!(flags & RWR_RAW)) reply_defer_finish(c, h, '*', (long long)n);
    return n;
}

/* ---- XADD XTRIM ---- */

typedef struct add_args {
    stream_id_t id;
    int id_given, seq_given, no_mkstream;
    stream_trim_args_t trim;
    int trim_arg; /* argv index of the MAXLEN/MINID value */
} add_args_t;

static int limit_or_reply(client_t *c, const resp_arg_t *a, long long *out, const char *neg)
{
    if (arg_ll_or_reply(c, a, out, NULL) < 0) return -1;
    if (*out < 0) {
        reply_error(c, neg);
        return -1;
    }
    return 0;
}

/* A trim strategy at argv[i] ("MAXLEN"/"MINID" [=|~] value); returns the next index or -1. */
static int parse_strategy(client_t *c, int i, int strategy, add_args_t *a)
{
    int more = c->argc - 1 - i;
    if (a->trim.strategy != STREAM_TRIM_NONE) {
        reply_error(c, "ERR syntax error, MAXLEN and MINID options at the same time are not "
                       "compatible");
        return -1;
    }
    a->trim.approx = 0;
    const resp_arg_t *next = &c->argv[i + 1];
    if (more >= 2 && next->len == 1 && (next->ptr[0] == '~' || next->ptr[0] == '=')) {
        a->trim.approx = next->ptr[0] == '~';
        i++;
    }
    if (strategy == STREAM_TRIM_MAXLEN) {
        if (arg_ll_or_reply(c, &c->argv[i + 1], &a->trim.maxlen, NULL) < 0) return -1;
        if (a->trim.maxlen < 0) {
            reply_error(c, "ERR The MAXLEN argument must be >= 0.");
            return -1;
        }
    } else if (id_or_reply(c, &c->argv[i + 1], &a->trim.minid, 0, 1, NULL) < 0) {
        return -1;
    }
    a->trim.strategy = strategy;
    a->trim_arg = i + 1;
    return i + 1;
}

/* Redis's streamParseAddOrTrimArgsOrReply: returns the id's index (XADD) or argc, -1 after
 * an error reply. */
static int parse_add_trim(client_t *c, add_args_t *a, int xadd)
{
    memset(a, 0, sizeof(*a));
    int i = 2, limit_given = 0;
    for (; i < c->argc; i++) {
        int more = c->argc - 1 - i;
        const resp_arg_t *o = &c->argv[i];
        if (xadd && o->len == 1 && o->ptr[0] == '*') break;
        if (arg_is(o, "maxlen") && more) {
            if ((i = parse_strategy(c, i, STREAM_TRIM_MAXLEN, a)) < 0) return -1;
        } else if (arg_is(o, "minid") && more) {
            if ((i = parse_strategy(c, i, STREAM_TRIM_MINID, a)) < 0) return -1;
        } else if (arg_is(o, "limit") && more) {
            if (limit_or_reply(c, &c->argv[i + 1], &a->trim.limit,
                               "ERR The LIMIT argument must be >= 0.") < 0)
                return -1;
            limit_given = 1;
            i++;
        } else if (xadd && arg_is(o, "nomkstream")) {
            a->no_mkstream = 1;
        } else if (xadd) {
            if (id_or_reply(c, o, &a->id, 0, 1, &a->seq_given) < 0) return -1;
            a->id_given = 1;
            break;
        } else {
            reply_syntax_error(c);
            return -1;
        }
    }
    if (a->trim.limit && a->trim.strategy == STREAM_TRIM_NONE) {
        reply_error(c, "ERR syntax error, LIMIT cannot be used without specifying a trimming "
                       "strategy");
        return -1;
    }
    if (!xadd && a->trim.strategy == STREAM_TRIM_NONE) {
        reply_error(c, "ERR syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if (c->flags & CLIENT_FAKE) { /* replaying the AOF: trims were logged exact */
        a->trim.limit = 0;
    } else if (limit_given) {
        if (!a->trim.approx) {
            reply_error(c, "ERR syntax error, LIMIT cannot be used without the special ~ option");
            return -1;
        }
    } else if (a->trim.approx) {
        a->trim.limit = 100 * (long long)srv.cfg.stream_node_max_entries;
        if (a->trim.limit <= 0) a->trim.limit = 10000;
        if (a->trim.limit > 1000000) a->trim.limit = 1000000;
    } else {
        a->trim.limit = 0;
    }
    return i;
}

/* The argv to log for an approximate trim: "=" and the exact resulting length / first id.
 * Writes into av (a copy of argv) using buf for the value. */
static void exact_trim_args(stream_t *s, const add_args_t *a, resp_arg_t *av, char *buf)
{
    av[a->trim_arg - 1] = (resp_arg_t){"=", 1};
    if (a->trim.strategy == STREAM_TRIM_MAXLEN) {
        av[a->trim_arg] = (resp_arg_t){buf, ull_to_str(buf, s->length)};
    } else {
        stream_id_t first;
        stream_edge_id(s, 1, 0, &first);
        av[a->trim_arg] = (resp_arg_t){buf, stream_id_fmt(buf, &first)};
    }
}

static void xadd_cmd(client_t *c)
{
    add_args_t a;
    int idpos = parse_add_trim(c, &a, 1);
    if (idpos < 0) return;
    int fpos = idpos + 1;
    if (c->argc - fpos < 2 || (c->argc - fpos) % 2 == 1) {
        reply_arity_error(c);
        return;
    }
    if (a.id_given && a.seq_given && a.id.ms == 0 && a.id.seq == 0) {
        reply_error(c, "ERR The ID specified in XADD must be greater than 0-0");
        return;
    }
    int err;
    kv_t *kv = lookup_write_type(c, &c->argv[1], OBJ_STREAM, &err);
    if (err) return;
    if (!kv && a.no_mkstream) {
        reply_null(c);
        return;
    }
    stream_t *s = kv ? as_stream(kv) : stream_new();
    if (s->last_id.ms == UINT64_MAX && s->last_id.seq == UINT64_MAX) {
        reply_error(c, "ERR The stream has exhausted the last possible ID, unable to add more "
                       "items");
        return; /* only reachable with an existing key */
    }
    size_t npairs = (size_t)(c->argc - fpos) / 2;
    stream_str_t fixed[32], *fv = npairs * 2 <= 32 ? fixed : xmalloc(sizeof(*fv) * npairs * 2);
    for (size_t i = 0; i < npairs * 2; i++) fv[i] = (stream_str_t){c->argv[fpos + i].ptr,
                                                                   c->argv[fpos + i].len};
    stream_id_t id;
    int rc = stream_append(s, fv, npairs, a.id_given ? &a.id : NULL, a.seq_given, now_ms(), &id);
    if (fv != fixed) xfree(fv);
    if (rc < 0) {
        if (!kv) stream_free(s);
        reply_error(c, rc == STREAM_ERR_ID ? "ERR The ID specified in XADD is equal or smaller "
                                             "than the target stream top item"
                                           : "ERR Elements are too large to be stored");
        return;
    }
    if (!kv) db_add(c->db, c->argv[1].ptr, c->argv[1].len, &s->h);
    char idb[STREAM_ID_STR];
    size_t idlen = stream_id_fmt(idb, &id);
    reply_bulk(c, idb, idlen);
    server_key_changed(c, c->db, c->argv[1].ptr, c->argv[1].len, NOTIFY_STREAM, "xadd");
    int rewrite_trim = 0;
    if (a.trim.strategy != STREAM_TRIM_NONE) {
        if (stream_trim(s, &a.trim)) notify(c, &c->argv[1], "xtrim");
        rewrite_trim = a.trim.approx;
    }
    if (!rewrite_trim && a.id_given && a.seq_given) return; /* logged as it came */
    resp_arg_t fixedv[64], *av = c->argc <= 64 ? fixedv : xmalloc(sizeof(*av) * (size_t)c->argc);
    memcpy(av, c->argv, sizeof(*av) * (size_t)c->argc);
    char trimb[STREAM_ID_STR];
    av[idpos] = (resp_arg_t){idb, idlen};
    if (rewrite_trim) exact_trim_args(s, &a, av, trimb);
    aof_replace_argv(c, c->argc, av);
    if (av != fixedv) xfree(av);
}

static void xtrim_cmd(client_t *c)
{
    add_args_t a;
    if (parse_add_trim(c, &a, 0) < 0) return;
    int err;
    kv_t *kv = lookup_write_type(c, &c->argv[1], OBJ_STREAM, &err);
    if (err) return;
    if (!kv) {
        reply_int(c, 0);
        return;
    }
    stream_t *s = as_stream(kv);
    int64_t deleted = stream_trim(s, &a.trim);
    if (deleted) {
        notify(c, &c->argv[1], "xtrim");
        if (a.trim.approx) {
            resp_arg_t fixedv[16],
                *av = c->argc <= 16 ? fixedv : xmalloc(sizeof(*av) * (size_t)c->argc);
            memcpy(av, c->argv, sizeof(*av) * (size_t)c->argc);
            char buf[STREAM_ID_STR];
            exact_trim_args(s, &a, av, buf);
            aof_replace_argv(c, c->argc, av);
            if (av != fixedv) xfree(av);
        }
        signal_modified(c, &c->argv[1]);
        srv.dirty += deleted;
    }
    reply_int(c, deleted);
}

/* ---- XRANGE XREVRANGE XLEN XDEL ---- */

static void range_generic(client_t *c, int rev)
{
    const resp_arg_t *sa = rev ? &c->argv[3] : &c->argv[2], *ea = rev ? &c->argv[2] : &c->argv[3];
    stream_id_t start, end;
    int sx, ex;
    long long count = -1;
    if (interval_id_or_reply(c, sa, &start, &sx, 0) < 0) return;
    if (sx && stream_id_incr(&start) < 0) {
        reply_error(c, "ERR invalid start ID for the interval");
        return;
    }
    if (interval_id_or_reply(c, ea, &end, &ex, UINT64_MAX) < 0) return;
    if (ex && stream_id_decr(&end) < 0) {
        reply_error(c, "ERR invalid end ID for the interval");
        return;
    }
    for (int j = 4; j < c->argc; j++) {
        if (arg_is(&c->argv[j], "count") && c->argc - j - 1 >= 1) {
            if (arg_ll_or_reply(c, &c->argv[j + 1], &count, NULL) < 0) return;
            if (count < 0) count = 0;
            j++;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_STREAM, &err);
    if (err) return;
    if (!kv) {
        reply_array(c, 0);
        return;
    }
    if (count == 0) {
        reply_null_array(c);
        return;
    }
    reply_range(c, as_stream(kv), &start, &end, count == -1 ? 0 : (size_t)count, rev, NULL,
                NULL, 0, NULL);
}

static void xrange_cmd(client_t *c)
{
    range_generic(c, 0);
}

static void xrevrange_cmd(client_t *c)
{
    range_generic(c, 1);
}

static void xlen_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_STREAM, &err);
    if (err) return;
    reply_int(c, kv ? (long long)as_stream(kv)->length : 0);
}

/* Parses argv[first..argc) as strict ids into a new array (caller frees), or NULL after the
 * error reply. */
static stream_id_t *ids_or_reply(client_t *c, int first)
{
    stream_id_t *ids = xmalloc(sizeof(*ids) * (size_t)(c->argc - first + 1));
    for (int j = first; j < c->argc; j++) {
        if (id_or_reply(c, &c->argv[j], &ids[j - first], 0, 1, NULL) < 0) {
            xfree(ids);
            return NULL;
        }
    }
    return ids;
}

static void xdel_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_write_type(c, &c->argv[1], OBJ_STREAM, &err);
    if (err) return;
    if (!kv) {
        reply_int(c, 0);
        return;
    }
    stream_t *s = as_stream(kv);
    stream_id_t *ids = ids_or_reply(c, 2);
    if (!ids) return;
    long long deleted = 0;
    int first_entry = 0;
    for (int j = 2; j < c->argc; j++) {
        const stream_id_t *id = &ids[j - 2];
        if (!stream_delete(s, id)) continue;
        if (stream_id_cmp(id, &s->first_id) == 0) first_entry = 1;
        if (stream_id_cmp(id, &s->max_deleted_id) > 0) s->max_deleted_id = *id;
        deleted++;
    }
    xfree(ids);
    if (deleted) {
        if (s->length == 0) s->first_id = (stream_id_t){0, 0};
        else if (first_entry) stream_edge_id(s, 1, 1, &s->first_id);
        server_key_changed(c, c->db, c->argv[1].ptr, c->argv[1].len, NOTIFY_STREAM, "xdel");
        srv.dirty += deleted - 1;
    }
    reply_int(c, deleted);
}

/* ---- XREAD XREADGROUP ---- */

static int xread_getkeys(int argc, const resp_arg_t *argv, int *pos, int max)
{
    int streams = 0;
    for (int i = 1; i < argc; i++) {
        if (arg_is(&argv[i], "block") || arg_is(&argv[i], "count")) {
            i++;
        } else if (arg_is(&argv[i], "group")) {
            i += 2;
        } else if (arg_is(&argv[i], "noack")) {
            continue;
        } else if (arg_is(&argv[i], "streams")) {
            streams = i;
            break;
        } else {
            break;
        }
    }
    int num = streams ? argc - streams - 1 : 0;
    if (num == 0 || num % 2) return 0;
    num /= 2;
    int n = 0;
    for (int i = streams + 1; i < streams + 1 + num && n < max; i++) pos[n++] = i;
    return n;
}

typedef struct xread_args {
    long long timeout; /* -1: no BLOCK; else absolute ms deadline, 0 forever */
    long long count;
    int streams_arg, nstreams, noack;
    const resp_arg_t *group, *consumer;
} xread_args_t;

static int xread_parse(client_t *c, int xreadgroup, xread_args_t *a)
{
    memset(a, 0, sizeof(*a));
    a->timeout = -1;
    for (int i = 1; i < c->argc; i++) {
        int more = c->argc - i - 1;
        const resp_arg_t *o = &c->argv[i];
        if (arg_is(o, "block") && more) {
            if (c->flags & CLIENT_SCRIPT) {
                reply_errorf(c, "ERR %.*s command is not allowed with BLOCK option from scripts",
                             (int)c->argv[0].len, c->argv[0].ptr);
                return -1;
            }
            i++;
            long long ms;
            if (arg_ll_or_reply(c, &c->argv[i], &ms,
                                "ERR timeout is not an integer or out of range") < 0)
                return -1;
            if (ms < 0) {
                reply_error(c, "ERR timeout is negative");
                return -1;
            }
            a->timeout = ms > 0 ? block_deadline(now_ms(), ms) : 0;
        } else if (arg_is(o, "count") && more) {
            i++;
            if (arg_ll_or_reply(c, &c->argv[i], &a->count, NULL) < 0) return -1;
            if (a->count < 0) a->count = 0;
        } else if (arg_is(o, "streams") && more) {
            a->streams_arg = i + 1;
            int n = c->argc - a->streams_arg;
            if (n % 2) {
                reply_error(c, "ERR Unbalanced XREAD list of streams: for each stream key an ID "
                               "or '$' must be specified.");
                return -1;
            }
            a->nstreams = n / 2;
            break;
        } else if (arg_is(o, "group") && more >= 2) {
            if (!xreadgroup) {
                reply_error(c, "ERR The GROUP option is only supported by XREADGROUP. You "
                               "called XREAD instead.");
                return -1;
            }
            a->group = &c->argv[i + 1];
            a->consumer = &c->argv[i + 2];
            i += 2;
        } else if (arg_is(o, "noack")) {
            if (!xreadgroup) {
                reply_error(c, "ERR The NOACK option is only supported by XREADGROUP. You "
                               "called XREAD instead.");
                return -1;
            }
            a->noack = 1;
        } else {
            reply_syntax_error(c);
            return -1;
        }
    }
    if (a->streams_arg == 0) {
        reply_syntax_error(c);
        return -1;
    }
    if (xreadgroup && !a->group) {
        reply_error(c, "ERR Missing GROUP option for XREADGROUP");
        return -1;
    }
    return 0;
}

/* Resolves each stream's id (and group): 0, or -1 after the error reply. */
static int xread_resolve(client_t *c, const xread_args_t *a, int xreadgroup, stream_id_t *ids,
                         stream_cg_t **groups)
{
    int retry = block_is_retry(c);
    for (int k = 0; k < a->nstreams; k++) {
        const resp_arg_t *key = &c->argv[a->streams_arg + k];
        const resp_arg_t *ida = &c->argv[a->streams_arg + a->nstreams + k];
        /* Redis looks each key up here and again to serve it, counting hits both times */
        kv_t *kv = retry ? db_lookup(c->db, key->ptr, key->len) : lookup_read(c, key);
        if (kv && kv->val->type != OBJ_STREAM) {
            if (retry && !xreadgroup) {
                kv = NULL;
            } else if (retry) {
                reply_error(c, "UNBLOCKED the stream key no longer exists");
                return -1;
            } else {
                reply_wrongtype(c);
                return -1;
            }
        }
        if (a->group) {
            stream_cg_t *cg = kv ? stream_cg_find(as_stream(kv), a->group->ptr, a->group->len)
                                 : NULL;
            if (!cg) {
                if (retry && !kv)
                    reply_error(c, "UNBLOCKED the stream key no longer exists");
                else if (retry)
                    reply_error(c, "NOGROUP the consumer group this client was blocked on no "
                                   "longer exists");
                else
                    reply_errorf(c, "NOGROUP No such key '%.*s' or consumer group '%.*s' in "
                                    "XREADGROUP with GROUP option",
                                 (int)key->len, key->ptr, (int)a->group->len, a->group->ptr);
                return -1;
            }
            groups[k] = cg;
        }
        if (ida->len == 1 && ida->ptr[0] == '$') {
            if (xreadgroup) {
                reply_error(c, "ERR The $ ID is meaningless in the context of XREADGROUP: you "
                               "want to read the history of this consumer by specifying a "
                               "proper ID, or use the > ID to get new messages. The $ ID would "
                               "just return an empty result set.");
                return -1;
            }
            ids[k] = kv ? as_stream(kv)->last_id : (stream_id_t){0, 0};
            continue;
        }
        if (ida->len == 1 && ida->ptr[0] == '>') {
            if (!xreadgroup) {
                reply_error(c, "ERR The > ID can be specified only when calling XREADGROUP "
                               "using the GROUP <group> <consumer> option.");
                return -1;
            }
            ids[k] = (stream_id_t){UINT64_MAX, UINT64_MAX};
            continue;
        }
        if (id_or_reply(c, ida, &ids[k], 0, 1, NULL) < 0) return -1;
    }
    return 0;
}

static void xread_generic(client_t *c, int xreadgroup)
{
    xread_args_t a;
    if (xread_parse(c, xreadgroup, &a) < 0) return;
    stream_id_t *ids = xmalloc(sizeof(*ids) * (size_t)(a.nstreams + 1));
    stream_cg_t **groups = a.group ? xcalloc((size_t)a.nstreams + 1, sizeof(*groups)) : NULL;
    if (xread_resolve(c, &a, xreadgroup, ids, groups) < 0) goto done;
    size_t count = (size_t)a.count;
    if (!count && block_is_retry(c)) count = XREAD_BLOCKED_DEFAULT_COUNT;
    long long served = 0;
    size_t h = 0;
    for (int k = 0; k < a.nstreams; k++) {
        const resp_arg_t *key = &c->argv[a.streams_arg + k];
        kv_t *kv = block_is_retry(c) ? db_find(c->db, key->ptr, key->len) : lookup_read(c, key);
        if (!kv || kv->val->type != OBJ_STREAM) continue;
        stream_t *s = as_stream(kv);
        stream_id_t gt = ids[k];
        int serve = 0, history = 0;
        if (groups && (gt.ms != UINT64_MAX || gt.seq != UINT64_MAX)) {
            serve = history = 1;
        } else if (block_is_retry(c)) {
            /* a blocked reader is served once the stream's last id passed the one it waits
             * after, as Redis serves it: even when what was added is gone again (an empty
             * reply) */
            if (groups) gt = groups[k]->last_id;
            serve = stream_id_cmp(&s->last_id, &gt) > 0;
        } else if (groups) {
            if (s->length) {
                stream_id_t maxid;
                stream_edge_id(s, 0, 1, &maxid);
                if (stream_id_cmp(&maxid, &groups[k]->last_id) > 0) {
                    serve = 1;
                    gt = groups[k]->last_id;
                }
            }
        } else if (s->length) {
            stream_id_t maxid;
            stream_edge_id(s, 0, 1, &maxid);
            serve = stream_id_cmp(&maxid, &gt) > 0;
        }
        if (!serve) continue;
        if (served++ == 0) h = reply_defer(c);
        stream_id_t start = gt;
        stream_id_incr(&start);
        if (c->resp == 2) reply_array(c, 2);
        reply_bulk(c, key->ptr, key->len);
        stream_consumer_t *co = NULL;
        if (groups) {
            int created;
            co = consumer_get(c, groups[k], key, a.consumer, &created);
            if (created && a.noack) propagate_consumer_creation(c, key, groups[k], co);
        }
        int flags = (a.noack ? RWR_NOACK : 0) | (history ? RWR_HISTORY : 0);
        reply_range(c, s, &start, NULL, count, 0, groups ? groups[k] : NULL, co, flags, key);
        if (groups) srv.dirty++;
    }
    if (served) {
        reply_defer_finish(c, h, c->resp == 2 ? '*' : '%', served);
        goto done;
    }
    if (a.timeout != -1 && !(c->flags & (CLIENT_MULTI | CLIENT_SCRIPT))) {
        int retry = block_is_retry(c);
        block_on_key_range(c, a.streams_arg, a.nstreams, a.timeout, BLOCK_REPLY_NULL_ARRAY);
        if (!retry && !xreadgroup) {
            /* "$" waits for what comes after the last id of now. So does an older id: no entry
             * lies between the two (it would have been served), and the retry then serves once
             * an id was added, not on a deletion that leaves the last id past the given one */
            for (int k = 0; k < a.nstreams; k++) {
                const resp_arg_t *key = &c->argv[a.streams_arg + k];
                const resp_arg_t *ida = &c->argv[a.streams_arg + a.nstreams + k];
                kv_t *kv = db_find(c->db, key->ptr, key->len);
                int dollar = ida->len == 1 && ida->ptr[0] == '$';
                if (kv && kv->val->type == OBJ_STREAM &&
                    stream_id_cmp(&as_stream(kv)->last_id, &ids[k]) > 0) {
                    ids[k] = as_stream(kv)->last_id;
                } else if (!dollar) {
                    continue;
                }
                char buf[STREAM_ID_STR];
                block_replace_arg(c, a.streams_arg + a.nstreams + k, buf,
                                  stream_id_fmt(buf, &ids[k]));
            }
        }
        goto done;
    }
    reply_null_array(c);
done:
    xfree(ids);
    xfree(groups);
}

static void xread_cmd(client_t *c)
{
    xread_generic(c, 0);
}

static void xreadgroup_cmd(client_t *c)
{
    xread_generic(c, 1);
}

/* ---- XGROUP ---- */

/* The stream at argv[2] for XGROUP subcommands, or NULL after replying (missing key unless
 * mkstream, which then makes *sp NULL with 0 returned). */
static int xgroup_stream(client_t *c, int mkstream, stream_t **sp)
{
    int err;
    kv_t *kv = lookup_write_type(c, &c->argv[2], OBJ_STREAM, &err);
    if (err) return -1;
    *sp = kv ? as_stream(kv) : NULL;
    if (!kv && !mkstream) {
        reply_error(c, "ERR The XGROUP subcommand requires the key to exist. Note that for "
                       "CREATE you may want to use the MKSTREAM option to create an empty "
                       "stream automatically.");
        return -1;
    }
    return 0;
}

static stream_cg_t *xgroup_group(client_t *c, stream_t *s)
{
    stream_cg_t *cg = stream_cg_find(s, c->argv[3].ptr, c->argv[3].len);
    if (!cg)
        reply_errorf(c, "NOGROUP No such consumer group '%.*s' for key name '%.*s'",
                     (int)c->argv[3].len, c->argv[3].ptr, (int)c->argv[2].len, c->argv[2].ptr);
    return cg;
}

static void reply_subcommand_syntax(client_t *c)
{
    const command_t *p = c->cmd && c->cmd->parent ? c->cmd->parent : c->cmd;
    char up[16];
    size_t i = 0;
    for (; p && p->name[i] && i < sizeof(up) - 1; i++)
        up[i] = (char)(p->name[i] >= 'a' && p->name[i] <= 'z' ? p->name[i] - 32 : p->name[i]);
    up[i] = '\0';
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try %s HELP.",
                 (int)(c->argv[1].len > 128 ? 128 : c->argv[1].len), c->argv[1].ptr, up);
}

/* CREATE and SETID options from argv[5]: MKSTREAM (CREATE) and ENTRIESREAD n. */
static int xgroup_options(client_t *c, int create, int *mkstream, long long *entries_read)
{
    *mkstream = 0;
    *entries_read = STREAM_ENTRIES_READ_INVALID;
    for (int i = 5; i < c->argc;) {
        if (create && arg_is(&c->argv[i], "mkstream")) {
            *mkstream = 1;
            i++;
        } else if (arg_is(&c->argv[i], "entriesread") && i + 1 < c->argc) {
            if (arg_ll_or_reply(c, &c->argv[i + 1], entries_read, NULL) < 0) return -1;
            if (*entries_read < 0 && *entries_read != STREAM_ENTRIES_READ_INVALID) {
                reply_error(c, "ERR value for ENTRIESREAD must be positive or -1");
                return -1;
            }
            i += 2;
        } else {
            reply_subcommand_syntax(c);
            return -1;
        }
    }
    return 0;
}

static void xgroup_create_cmd(client_t *c)
{
    int mkstream;
    long long entries_read;
    stream_t *s;
    if (xgroup_options(c, 1, &mkstream, &entries_read) < 0) return;
    if (xgroup_stream(c, mkstream, &s) < 0) return;
    if (c->argc > 8) {
        reply_subcommand_syntax(c);
        return;
    }
    stream_id_t id;
    if (c->argv[4].len == 1 && c->argv[4].ptr[0] == '$') {
        id = s ? s->last_id : (stream_id_t){0, 0};
    } else if (id_or_reply(c, &c->argv[4], &id, 0, 1, NULL) < 0) {
        return;
    }
    if (!s) {
        s = stream_new();
        db_add(c->db, c->argv[2].ptr, c->argv[2].len, &s->h);
        signal_modified(c, &c->argv[2]);
    }
    if (!stream_cg_create(s, c->argv[3].ptr, c->argv[3].len, &id, entries_read)) {
        reply_error(c, "BUSYGROUP Consumer Group name already exists");
        return;
    }
    reply_ok(c);
    srv.dirty++;
    notify(c, &c->argv[2], "xgroup-create");
}

static void xgroup_setid_cmd(client_t *c)
{
    int mkstream;
    long long entries_read;
    stream_t *s;
    if (xgroup_options(c, 0, &mkstream, &entries_read) < 0) return;
    if (xgroup_stream(c, 0, &s) < 0) return;
    stream_cg_t *cg = xgroup_group(c, s);
    if (!cg) return;
    if (c->argc != 5 && c->argc != 7) {
        reply_subcommand_syntax(c);
        return;
    }
    stream_id_t id;
    if (c->argv[4].len == 1 && c->argv[4].ptr[0] == '$') id = s->last_id;
    else if (id_or_reply(c, &c->argv[4], &id, 0, 0, NULL) < 0) return;
    cg->last_id = id;
    cg->entries_read = entries_read;
    reply_ok(c);
    srv.dirty++;
    notify(c, &c->argv[2], "xgroup-setid");
}

static void xgroup_destroy_cmd(client_t *c)
{
    stream_t *s;
    if (xgroup_stream(c, 0, &s) < 0) return;
    stream_cg_t *cg = stream_cg_find(s, c->argv[3].ptr, c->argv[3].len);
    if (!cg) {
        reply_int(c, 0);
        return;
    }
    stream_cg_destroy(s, cg);
    reply_int(c, 1);
    srv.dirty++;
    notify(c, &c->argv[2], "xgroup-destroy");
    block_signal_key(c->db, c->argv[2].ptr, c->argv[2].len); /* blocked readers get -NOGROUP */
}

static void xgroup_createconsumer_cmd(client_t *c)
{
    stream_t *s;
    if (xgroup_stream(c, 0, &s) < 0) return;
    stream_cg_t *cg = xgroup_group(c, s);
    if (!cg) return;
    if (stream_consumer_find(cg, c->argv[4].ptr, c->argv[4].len)) {
        reply_int(c, 0);
        return;
    }
    stream_consumer_create(cg, c->argv[4].ptr, c->argv[4].len, now_ms());
    srv.dirty++;
    notify(c, &c->argv[2], "xgroup-createconsumer");
    reply_int(c, 1);
}

static void xgroup_delconsumer_cmd(client_t *c)
{
    stream_t *s;
    if (xgroup_stream(c, 0, &s) < 0) return;
    stream_cg_t *cg = xgroup_group(c, s);
    if (!cg) return;
    long long pending = 0;
    stream_consumer_t *co = stream_consumer_find(cg, c->argv[4].ptr, c->argv[4].len);
    if (co) {
        pending = (long long)stream_idx_size(&co->pel);
        stream_consumer_delete(cg, co);
        srv.dirty++;
        notify(c, &c->argv[2], "xgroup-delconsumer");
    }
    reply_int(c, pending);
}

static void xgroup_help_cmd(client_t *c)
{
    static const char *const lines[] = {
        "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
        "HELP",
        "    Prints this help.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

static void container_cmd(client_t *c)
{
    reply_arity_error(c); /* only reached without a subcommand */
}

/* ---- XSETID ---- */

static void xsetid_cmd(client_t *c)
{
    stream_id_t id, maxdel = {0, 0};
    long long added = -1;
    if (id_or_reply(c, &c->argv[2], &id, 0, 1, NULL) < 0) return;
    for (int i = 3; i < c->argc; i += 2) {
        int more = c->argc - 1 - i;
        if (arg_is(&c->argv[i], "entriesadded") && more) {
            if (arg_ll_or_reply(c, &c->argv[i + 1], &added, NULL) < 0) return;
            if (added < 0) {
                reply_error(c, "ERR entries_added must be positive");
                return;
            }
        } else if (arg_is(&c->argv[i], "maxdeletedid") && more) {
            if (id_or_reply(c, &c->argv[i + 1], &maxdel, 0, 1, NULL) < 0) return;
            if (stream_id_cmp(&id, &maxdel) < 0) {
                reply_error(c, "ERR The ID specified in XSETID is smaller than the provided "
                               "max_deleted_entry_id");
                return;
            }
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    int err;
    kv_t *kv = lookup_write_type(c, &c->argv[1], OBJ_STREAM, &err);
    if (err) return;
    if (!kv) {
        reply_error(c, ERR_NO_KEY);
        return;
    }
    stream_t *s = as_stream(kv);
    if (s->length > 0) {
        stream_id_t maxid;
        stream_edge_id(s, 0, 1, &maxid);
        if (stream_id_cmp(&id, &maxid) < 0) {
            reply_error(c, "ERR The ID specified in XSETID is smaller than the target stream top "
                           "item");
            return;
        }
        if (added != -1 && s->length > (uint64_t)added) {
            reply_error(c, "ERR The entries_added specified in XSETID is smaller than the target "
                           "stream length");
            return;
        }
    }
    s->last_id = id;
    if (added != -1) s->entries_added = (uint64_t)added;
    if (maxdel.ms || maxdel.seq) s->max_deleted_id = maxdel;
    reply_ok(c);
    srv.dirty++;
    notify(c, &c->argv[1], "xsetid");
}

/* ---- XACK XPENDING ---- */

static void xack_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_STREAM, &err);
    if (err) return;
    stream_cg_t *cg = kv ? stream_cg_find(as_stream(kv), c->argv[2].ptr, c->argv[2].len) : NULL;
    if (!cg) {
        reply_int(c, 0);
        return;
    }
    stream_id_t *ids = ids_or_reply(c, 3);
    if (!ids) return;
    long long acked = 0;
    for (int j = 3; j < c->argc; j++) acked += stream_pel_ack(cg, &ids[j - 3]);
    xfree(ids);
    srv.dirty += acked;
    reply_int(c, acked);
}

static void xpending_summary(client_t *c, stream_cg_t *cg)
{
    reply_array(c, 4);
    reply_int(c, (long long)stream_idx_size(&cg->pel));
    if (stream_idx_size(&cg->pel) == 0) {
        reply_null(c);
        reply_null(c);
        reply_null_array(c);
        return;
    }
    reply_id(c, &stream_idx_first(&cg->pel)->id);
    reply_id(c, &stream_idx_last(&cg->pel)->id);
    size_t h = reply_defer(c);
    long long n = 0;
    for (size_t i = 0; i < cg->nconsumers; i++) {
        stream_consumer_t *co = cg->consumers[i];
        if (!stream_idx_size(&co->pel)) continue;
        reply_array(c, 2);
        reply_bulk(c, co->name, co->namelen);
        reply_bulk_ll(c, (long long)stream_idx_size(&co->pel));
        n++;
    }
    reply_defer_finish(c, h, '*', n);
}

static void xpending_cmd(client_t *c)
{
    const resp_arg_t *key = &c->argv[1], *group = &c->argv[2], *consumer = NULL;
    stream_id_t start, end;
    long long count = 0, minidle = 0;
    int sx, ex;
    if (c->argc != 3 && (c->argc < 6 || c->argc > 9)) {
        reply_syntax_error(c);
        return;
    }
    if (c->argc >= 6) {
        int si = 3;
        if (arg_is(&c->argv[3], "idle")) {
            if (arg_ll_or_reply(c, &c->argv[4], &minidle, NULL) < 0) return;
            if (c->argc < 8) {
                reply_syntax_error(c);
                return;
            }
            si += 2;
        }
        if (arg_ll_or_reply(c, &c->argv[si + 2], &count, NULL) < 0) return;
        if (count < 0) count = 0;
        if (interval_id_or_reply(c, &c->argv[si], &start, &sx, 0) < 0) return;
        if (sx && stream_id_incr(&start) < 0) {
            reply_error(c, "ERR invalid start ID for the interval");
            return;
        }
        if (interval_id_or_reply(c, &c->argv[si + 1], &end, &ex, UINT64_MAX) < 0) return;
        if (ex && stream_id_decr(&end) < 0) {
            reply_error(c, "ERR invalid end ID for the interval");
            return;
        }
        if (si + 3 < c->argc) consumer = &c->argv[si + 3];
    }
    int err;
    kv_t *kv = lookup_read_type(c, key, OBJ_STREAM, &err);
    if (err) return;
    stream_cg_t *cg = kv ? stream_cg_find(as_stream(kv), group->ptr, group->len) : NULL;
    if (!cg) {
        reply_errorf(c, "NOGROUP No such key '%.*s' or consumer group '%.*s'", (int)key->len,
                     key->ptr, (int)group->len, group->ptr);
        return;
    }
    if (c->argc == 3) {
        xpending_summary(c, cg);
        return;
    }
    stream_idx_t *pel = &cg->pel;
    if (consumer) {
        stream_consumer_t *co = stream_consumer_find(cg, consumer->ptr, consumer->len);
        if (!co) {
            reply_array(c, 0);
            return;
        }
        pel = &co->pel;
    }
    long long now = now_ms(), n = 0;
    size_t h = reply_defer(c);
    for (stream_idx_node_t *x = stream_idx_seek_ge(pel, &start);
         count && x && stream_id_cmp(&x->id, &end) <= 0; x = stream_idx_next(x)) {
        stream_nack_t *nack = x->val;
        if (minidle && now - nack->delivery_time < minidle) continue;
        n++;
        count--;
        long long elapsed = now - nack->delivery_time;
        reply_array(c, 4);
        reply_id(c, &x->id);
        reply_bulk(c, nack->consumer->name, nack->consumer->namelen);
        reply_int(c, elapsed < 0 ? 0 : elapsed);
        reply_int(c, (long long)nack->delivery_count);
    }
    reply_defer_finish(c, h, '*', n);
}

/* ---- XCLAIM XAUTOCLAIM ---- */

static stream_cg_t *claim_group_or_reply(client_t *c, stream_t **sp)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_STREAM, &err);
    if (err) return NULL;
    stream_cg_t *cg = kv ? stream_cg_find(as_stream(kv), c->argv[2].ptr, c->argv[2].len) : NULL;
    if (!cg) {
        reply_errorf(c, "NOGROUP No such key '%.*s' or consumer group '%.*s'", (int)c->argv[1].len,
                     c->argv[1].ptr, (int)c->argv[2].len, c->argv[2].ptr);
        return NULL;
    }
    *sp = as_stream(kv);
    return cg;
}

typedef struct claim_opts {
    long long retrycount, deliverytime;
    int force, justid, restore;
    stream_id_t last_id;
} claim_opts_t;

/* XCLAIM's options from argv[j]; 0 or -1 after the error reply. */
static int claim_options(client_t *c, int j, long long now, claim_opts_t *o)
{
    for (; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        const resp_arg_t *a = &c->argv[j];
        if (arg_is(a, "force")) {
            o->force = 1;
        } else if (arg_is(a, "justid")) {
            o->justid = 1;
        } else if (arg_is(a, "aofrestore") && (c->flags & CLIENT_FAKE)) {
            o->restore = 1; /* see xclaim_cmd; unknown to clients, as to Redis */
        } else if (arg_is(a, "idle") && more) {
            j++;
            if (arg_ll_or_reply(c, &c->argv[j], &o->deliverytime,
                                "ERR Invalid IDLE option argument for XCLAIM") < 0)
                return -1;
            /* past what a long long holds: now, as Redis's wrapped value gets clamped */
            if (__builtin_sub_overflow(now, o->deliverytime, &o->deliverytime))
                o->deliverytime = now;
        } else if (arg_is(a, "time") && more) {
            j++;
            if (arg_ll_or_reply(c, &c->argv[j], &o->deliverytime,
                                "ERR Invalid TIME option argument for XCLAIM") < 0)
                return -1;
        } else if (arg_is(a, "retrycount") && more) {
            j++;
            if (arg_ll_or_reply(c, &c->argv[j], &o->retrycount,
                                "ERR Invalid RETRYCOUNT option argument for XCLAIM") < 0)
                return -1;
        } else if (arg_is(a, "lastid") && more) {
            j++;
            if (id_or_reply(c, &c->argv[j], &o->last_id, 0, 1, NULL) < 0) return -1;
        } else {
            reply_errorf(c, "ERR Unrecognized XCLAIM option '%.*s'", (int)a->len, a->ptr);
            return -1;
        }
    }
    return 0;
}

/* Drops a pending entry whose stream entry is gone, propagating the change. */
static void claim_drop(client_t *c, stream_cg_t *cg, const stream_id_t *id, stream_nack_t *nack)
{
    if (!nack->consumer) { /* made by FORCE just now: cannot happen for a missing entry */
        stream_pel_ack(cg, id);
        return;
    }
    propagate_xclaim(c, &c->argv[1], cg, id, nack);
    srv.dirty++;
    stream_pel_ack(cg, id);
}

/* XCLAIM. One option only the AOF loader's client may give (server/persist/rewrite.c writes it):
 * AOFRESTORE puts the entry in the consumer's PEL even when the stream entry is gone (as a
 * rewrite keeps pending entries of deleted messages, which FORCE drops), and leaves the
 * consumer's seen time as XGROUP CREATECONSUMER restored it. */
static void xclaim_cmd(client_t *c)
{
    stream_t *s;
    stream_cg_t *cg = claim_group_or_reply(c, &s);
    if (!cg) return;
    long long minidle;
    if (arg_ll_or_reply(c, &c->argv[4], &minidle, "ERR Invalid min-idle-time argument for XCLAIM") <
        0)
        return;
    if (minidle < 0) minidle = 0;
    stream_id_t *ids = xmalloc(sizeof(*ids) * (size_t)(c->argc - 4));
    int j = 5;
    for (; j < c->argc; j++)
        if (stream_id_parse(c->argv[j].ptr, c->argv[j].len, &ids[j - 5], 0, 1, NULL) < 0) break;
    int last_id_arg = j - 1;
    long long now = now_ms();
    claim_opts_t o = {.retrycount = -1, .deliverytime = -1};
    if (claim_options(c, j, now, &o) < 0) {
        xfree(ids);
        return;
    }
    int propagate_last = 0;
    if (stream_id_cmp(&o.last_id, &cg->last_id) > 0) {
        cg->last_id = o.last_id;
        propagate_last = 1;
    }
    if (o.deliverytime != -1) {
        if (o.deliverytime < 0 || o.deliverytime > now) o.deliverytime = now;
    } else {
        o.deliverytime = now;
    }
    stream_consumer_t *co = NULL;
    size_t h = reply_defer(c);
    long long n = 0;
    for (j = 5; j <= last_id_arg; j++) {
        const stream_id_t *id = &ids[j - 5];
        stream_nack_t *nack = stream_pel_find(cg, id);
        if (!o.restore && !stream_entry_exists(s, id)) {
            if (nack) {
                claim_drop(c, cg, id, nack);
                propagate_last = 0;
            }
            continue;
        }
        if ((o.force || o.restore) && !nack) nack = stream_pel_add_unowned(cg, id);
        if (!nack) continue;
        if (nack->consumer && minidle && now - nack->delivery_time < minidle) continue;
        if (!co && o.restore) co = stream_consumer_find(cg, c->argv[3].ptr, c->argv[3].len);
        if (!co) co = consumer_get(c, cg, &c->argv[1], &c->argv[3], NULL);
        nack->delivery_time = o.deliverytime;
        if (o.retrycount >= 0) nack->delivery_count = (uint64_t)o.retrycount;
        else if (!o.justid) nack->delivery_count++;
        stream_nack_assign(cg, nack, id, co);
        if (o.justid || o.restore) reply_id(c, id);
        else reply_range(c, s, id, id, 1, 0, NULL, NULL, RWR_RAW, NULL);
        n++;
        propagate_xclaim(c, &c->argv[1], cg, id, nack);
        propagate_last = 0;
        srv.dirty++;
    }
    if (propagate_last) {
        propagate_group_id(c, &c->argv[1], cg);
        srv.dirty++;
    }
    reply_defer_finish(c, h, '*', n);
    xfree(ids);
}

static void xautoclaim_cmd(client_t *c)
{
    long long minidle, count = 100;
    stream_id_t start;
    int sx, justid = 0;
    if (arg_ll_or_reply(c, &c->argv[4], &minidle,
                        "ERR Invalid min-idle-time argument for XAUTOCLAIM") < 0)
        return;
    if (minidle < 0) minidle = 0;
    if (interval_id_or_reply(c, &c->argv[5], &start, &sx, 0) < 0) return;
    if (sx && stream_id_incr(&start) < 0) {
        reply_error(c, "ERR invalid start ID for the interval");
        return;
    }
    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(&c->argv[j], "count") && more) {
            long long max_count = LONG_MAX / 16;
            if (arg_range_or_reply(c, &c->argv[j + 1], 1, max_count, &count,
                                   "ERR COUNT must be > 0") < 0)
                return;
            j++;
        } else if (arg_is(&c->argv[j], "justid")) {
            justid = 1;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    stream_t *s;
    stream_cg_t *cg = claim_group_or_reply(c, &s);
    if (!cg) return;
    stream_id_t *deleted = try_malloc(sizeof(*deleted) * (size_t)count);
    if (!deleted) {
        reply_error(c, "ERR Insufficient memory, failed allocating transient memory, COUNT too "
                       "high.");
        return;
    }
    long long attempts = count * 10, now = now_ms(), n = 0, ndeleted = 0;
    stream_consumer_t *co = NULL;
    reply_array(c, 3);
    /* the cursor comes first but is known last: collect the claimed entries, then reply */
    stream_id_t *claimed = xmalloc(sizeof(*claimed) * (size_t)(count < 1024 ? count : 1024));
    size_t capclaimed = (size_t)(count < 1024 ? count : 1024);
    stream_idx_node_t *x = stream_idx_seek_ge(&cg->pel, &start);
    while (attempts-- && count && x) {
        stream_idx_node_t *next = stream_idx_next(x);
        stream_id_t id = x->id;
        stream_nack_t *nack = x->val;
        if (!stream_entry_exists(s, &id)) {
            propagate_xclaim(c, &c->argv[1], cg, &id, nack);
            srv.dirty++;
            stream_pel_ack(cg, &id);
            deleted[ndeleted++] = id;
            count--;
            x = next;
            continue;
        }
        if (minidle && now - nack->delivery_time < minidle) {
            x = next;
            continue;
        }
        if (!co) co = consumer_get(c, cg, &c->argv[1], &c->argv[3], NULL);
        nack->delivery_time = now;
        if (!justid) nack->delivery_count++;
        stream_nack_assign(cg, nack, &id, co);
        if ((size_t)n == capclaimed) {
            capclaimed *= 2;
            claimed = xrealloc(claimed, sizeof(*claimed) * capclaimed);
        }
        claimed[n++] = id;
        count--;
        propagate_xclaim(c, &c->argv[1], cg, &id, nack);
        srv.dirty++;
        x = next;
    }
    stream_id_t cursor = x ? x->id : (stream_id_t){0, 0};
    reply_id(c, &cursor);
    reply_array(c, n);
    for (long long i = 0; i < n; i++) {
        if (justid) reply_id(c, &claimed[i]);
        else reply_range(c, s, &claimed[i], &claimed[i], 1, 0, NULL, NULL, RWR_RAW, NULL);
    }
    reply_array(c, ndeleted);
    for (long long i = 0; i < ndeleted; i++) reply_id(c, &deleted[i]);
    xfree(claimed);
    xfree(deleted);
}

/* ---- XINFO ---- */

static stream_t *xinfo_stream_or_reply(client_t *c)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[2], OBJ_STREAM, &err);
    if (err) return NULL;
    if (!kv) {
        reply_error(c, ERR_NO_KEY);
        return NULL;
    }
    return as_stream(kv);
}

static void reply_entries_read(client_t *c, const stream_cg_t *cg)
{
    if (cg->entries_read != STREAM_ENTRIES_READ_INVALID) reply_int(c, cg->entries_read);
    else reply_null(c);
}

static void reply_lag(client_t *c, const stream_t *s, const stream_cg_t *cg)
{
    long long lag;
    if (stream_cg_lag(s, cg, &lag)) reply_int(c, lag);
    else reply_null(c);
}

static void xinfo_full_group(client_t *c, stream_t *s, stream_cg_t *cg, long long count)
{
    reply_map(c, 7);
    reply_bulk_cstr(c, "name");
    reply_bulk(c, cg->name, cg->namelen);
    reply_bulk_cstr(c, "last-delivered-id");
    reply_id(c, &cg->last_id);
    reply_bulk_cstr(c, "entries-read");
    reply_entries_read(c, cg);
    reply_bulk_cstr(c, "lag");
    reply_lag(c, s, cg);
    reply_bulk_cstr(c, "pel-count");
    reply_int(c, (long long)stream_idx_size(&cg->pel));
    reply_bulk_cstr(c, "pending");
    size_t h = reply_defer(c);
    long long n = 0;
    for (stream_idx_node_t *x = stream_idx_first(&cg->pel); x && (!count || n < count);
         x = stream_idx_next(x), n++) {
        stream_nack_t *nack = x->val;
        reply_array(c, 4);
        reply_id(c, &x->id);
        reply_bulk(c, nack->consumer->name, nack->consumer->namelen);
        reply_int(c, nack->delivery_time);
        reply_int(c, (long long)nack->delivery_count);
    }
    reply_defer_finish(c, h, '*', n);
    reply_bulk_cstr(c, "consumers");
    reply_array(c, (long long)cg->nconsumers);
    for (size_t i = 0; i < cg->nconsumers; i++) {
        stream_consumer_t *co = cg->consumers[i];
        reply_map(c, 4);
        reply_bulk_cstr(c, "name");
        reply_bulk(c, co->name, co->namelen);
        reply_bulk_cstr(c, "seen-time");
        reply_int(c, co->seen_time);
        reply_bulk_cstr(c, "pel-count");
        reply_int(c, (long long)stream_idx_size(&co->pel));
        reply_bulk_cstr(c, "pending");
        h = reply_defer(c);
        n = 0;
        for (stream_idx_node_t *x = stream_idx_first(&co->pel); x && (!count || n < count);
             x = stream_idx_next(x), n++) {
            stream_nack_t *nack = x->val;
            reply_array(c, 3);
            reply_id(c, &x->id);
            reply_int(c, nack->delivery_time);
            reply_int(c, (long long)nack->delivery_count);
        }
        reply_defer_finish(c, h, '*', n);
    }
}

static void xinfo_stream_cmd(client_t *c)
{
    int full = 0;
    long long count = 10;
    int optc = c->argc - 3;
    stream_t *s = xinfo_stream_or_reply(c);
    if (!s) return;
    if (optc) {
        if ((optc != 1 && optc != 3) || !arg_is(&c->argv[3], "full")) {
            reply_subcommand_syntax(c);
            return;
        }
        if (optc == 3) {
            if (!arg_is(&c->argv[4], "count")) {
                reply_subcommand_syntax(c);
                return;
            }
            if (arg_ll_or_reply(c, &c->argv[5], &count, NULL) < 0) return;
            if (count < 0) count = 10;
        }
        full = 1;
    }
    reply_map(c, full ? 9 : 10);
    reply_bulk_cstr(c, "length");
    reply_int(c, (long long)s->length);
    reply_bulk_cstr(c, "radix-tree-keys");
    reply_int(c, (long long)stream_idx_size(&s->nodes));
    reply_bulk_cstr(c, "radix-tree-nodes");
    reply_int(c, (long long)stream_rax_nodes(s));
    reply_bulk_cstr(c, "last-generated-id");
    reply_id(c, &s->last_id);
    reply_bulk_cstr(c, "max-deleted-entry-id");
    reply_id(c, &s->max_deleted_id);
    reply_bulk_cstr(c, "entries-added");
    reply_int(c, (long long)s->entries_added);
    reply_bulk_cstr(c, "recorded-first-entry-id");
    reply_id(c, &s->first_id);
    if (!full) {
        const stream_id_t lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
        reply_bulk_cstr(c, "groups");
        reply_int(c, (long long)s->ngroups);
        reply_bulk_cstr(c, "first-entry");
        if (!reply_range(c, s, &lo, &hi, 1, 0, NULL, NULL, RWR_RAW, NULL)) reply_null(c);
        reply_bulk_cstr(c, "last-entry");
        if (!reply_range(c, s, &lo, &hi, 1, 1, NULL, NULL, RWR_RAW, NULL)) reply_null(c);
        return;
    }
    reply_bulk_cstr(c, "entries");
    reply_range(c, s, NULL, NULL, (size_t)count, 0, NULL, NULL, 0, NULL);
    reply_bulk_cstr(c, "groups");
    reply_array(c, (long long)s->ngroups);
    for (size_t i = 0; i < s->ngroups && !reply_stopped(c); i++)
        xinfo_full_group(c, s, s->groups[i], count);
}

static void xinfo_groups_cmd(client_t *c)
{
    stream_t *s = xinfo_stream_or_reply(c);
    if (!s) return;
    reply_array(c, (long long)s->ngroups);
    for (size_t i = 0; i < s->ngroups; i++) {
        stream_cg_t *cg = s->groups[i];
        reply_map(c, 6);
        reply_bulk_cstr(c, "name");
        reply_bulk(c, cg->name, cg->namelen);
        reply_bulk_cstr(c, "consumers");
        reply_int(c, (long long)cg->nconsumers);
        reply_bulk_cstr(c, "pending");
        reply_int(c, (long long)stream_idx_size(&cg->pel));
        reply_bulk_cstr(c, "last-delivered-id");
        reply_id(c, &cg->last_id);
        reply_bulk_cstr(c, "entries-read");
        reply_entries_read(c, cg);
        reply_bulk_cstr(c, "lag");
        reply_lag(c, s, cg);
    }
}

static void xinfo_consumers_cmd(client_t *c)
{
    stream_t *s = xinfo_stream_or_reply(c);
    if (!s) return;
    stream_cg_t *cg = stream_cg_find(s, c->argv[3].ptr, c->argv[3].len);
    if (!cg) {
        reply_errorf(c, "NOGROUP No such consumer group '%.*s' for key name '%.*s'",
                     (int)c->argv[3].len, c->argv[3].ptr, (int)c->argv[2].len, c->argv[2].ptr);
        return;
    }
    long long now = now_ms();
    reply_array(c, (long long)cg->nconsumers);
    for (size_t i = 0; i < cg->nconsumers; i++) {
        stream_consumer_t *co = cg->consumers[i];
        long long idle = now - co->seen_time;
        reply_map(c, 3);
        reply_bulk_cstr(c, "name");
        reply_bulk(c, co->name, co->namelen);
        reply_bulk_cstr(c, "pending");
        reply_int(c, (long long)stream_idx_size(&co->pel));
        reply_bulk_cstr(c, "idle");
        reply_int(c, idle < 0 ? 0 : idle);
    }
}

static void xinfo_help_cmd(client_t *c)
{
    static const char *const lines[] = {
        "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        "HELP",
        "    Prints this help.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

/* ---- tables ---- */

/* XREAD and XREADGROUP: the keys are the first half of what follows STREAMS. */
static const cmd_key_spec_t xread_specs[] = {{1, "STREAMS", -1, 1, 2}, {0}};
static const cmd_key_spec_t xreadgroup_specs[] = {{4, "STREAMS", -1, 1, 2}, {0}};

#define XROW(n, p, a, f, fk, since_, sum, cx, ...)                                                 \
    {                                                                                              \
        .name = n, .proc = p, .arity = a, .flags = f, .first_key = fk, .last_key = fk,             \
        .key_step = fk ? 1 : 0, .group = "stream", .since = since_, .summary = sum,                \
        .complexity = cx, __VA_ARGS__                                                              \
    }

static command_t xgroup_subcommands[] = {
    XROW("create", xgroup_create_cmd, -5, CMD_WRITE | CMD_DENYOOM, 2, "5.0.0",
         "Create a consumer group.", "O(1)", .key_flags = "RW insert"),
    XROW("createconsumer", xgroup_createconsumer_cmd, 5, CMD_WRITE | CMD_DENYOOM, 2, "6.2.0",
         "Create a consumer in a consumer group.", "O(1)", .key_flags = "RW insert"),
    XROW("delconsumer", xgroup_delconsumer_cmd, 5, CMD_WRITE, 2, "5.0.0",
         "Delete a consumer from a consumer group.", "O(1)", .key_flags = "RW delete"),
    XROW("destroy", xgroup_destroy_cmd, 4, CMD_WRITE, 2, "5.0.0", "Destroy a consumer group.",
         "O(N) where N is the number of entries in the group's pending entries list (PEL).",
         .key_flags = "RW delete"),
    XROW("setid", xgroup_setid_cmd, -5, CMD_WRITE, 2, "5.0.0",
         "Set a consumer group to an arbitrary last delivered ID value.", "O(1)",
         .key_flags = "RW update"),
    XROW("help", xgroup_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, "5.0.0",
         "Show helpful text about the different subcommands", "O(1)"),
    {NULL},
};

static command_t xinfo_subcommands[] = {
    XROW("stream", xinfo_stream_cmd, -3, CMD_READONLY, 2, "5.0.0",
         "Get information about a stream", "O(1)", .key_flags = "RO access"),
    XROW("groups", xinfo_groups_cmd, 3, CMD_READONLY, 2, "5.0.0",
         "List the consumer groups of a stream", "O(1)", .key_flags = "RO access"),
    XROW("consumers", xinfo_consumers_cmd, 4, CMD_READONLY, 2, "5.0.0",
         "List the consumers in a consumer group", "O(1)", .key_flags = "RO access"),
    XROW("help", xinfo_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, "5.0.0",
         "Show helpful text about the different subcommands", "O(1)"),
    {NULL},
};

command_t cmds_stream[] = {
    XROW("xadd", xadd_cmd, -5, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, "5.0.0",
         "Appends a new entry to a stream",
         "O(1) when adding a new entry, O(N) when trimming where N being the number of entries "
         "evicted.",
         .key_flags = "RW update"),
    XROW("xrange", xrange_cmd, -4, CMD_READONLY, 1, "5.0.0",
         "Return a range of elements in a stream, with IDs matching the specified IDs interval",
         "O(N) with N being the number of elements being returned. If N is constant (e.g. always "
         "asking for the first 10 elements with COUNT), you can consider it O(1).",
         .key_flags = "RO access"),
    XROW("xrevrange", xrevrange_cmd, -4, CMD_READONLY, 1, "5.0.0",
         "Return a range of elements in a stream, with IDs matching the specified IDs interval, "
         "in reverse order (from greater to smaller IDs) compared to XRANGE",
         "O(N) with N being the number of elements returned. If N is constant (e.g. always asking "
         "for the first 10 elements with COUNT), you can consider it O(1).",
         .key_flags = "RO access"),
    XROW("xlen", xlen_cmd, 2, CMD_READONLY | CMD_FAST, 1, "5.0.0",
         "Return the number of entries in a stream", "O(1)", .key_flags = "RO"),
    XROW("xdel", xdel_cmd, -3, CMD_WRITE | CMD_FAST, 1, "5.0.0",
         "Removes the specified entries from the stream. Returns the number of items actually "
         "deleted, that may be different from the number of IDs passed in case certain IDs do "
         "not exist.",
         "O(1) for each single item to delete in the stream, regardless of the stream size.",
         .key_flags = "RW delete"),
    XROW("xtrim", xtrim_cmd, -4, CMD_WRITE, 1, "5.0.0",
         "Trims the stream to (approximately if '~' is passed) a certain size",
         "O(N), with N being the number of evicted entries. Constant times are very small "
         "however, since entries are organized in macro nodes containing multiple entries that "
         "can be released with a single deallocation.",
         .key_flags = "RW delete"),
    XROW("xread", xread_cmd, -4, CMD_READONLY | CMD_BLOCKING | CMD_MOVABLE_KEYS, 0, "5.0.0",
         "Return never seen elements in multiple streams, with IDs greater than the ones reported "
         "by the caller for each stream. Can block.",
         "For each stream mentioned: O(N) with N being the number of elements being returned, it "
         "means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is "
         "used, XADD will pay O(M) time in order to serve the M clients blocked on the stream "
         "getting new data.",
         .getkeys = xread_getkeys, .key_flags = "RO access", .key_specs = xread_specs),
    XROW("xreadgroup", xreadgroup_cmd, -7, CMD_WRITE | CMD_BLOCKING | CMD_MOVABLE_KEYS, 0,
         "5.0.0",
         "Return new entries from a stream using a consumer group, or access the history of the "
         "pending entries for a given consumer. Can block.",
         "For each stream mentioned: O(M) with M being the number of elements returned. If M is "
         "constant (e.g. always asking for the first 10 elements with COUNT), you can consider "
         "it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in "
         "order to serve the N clients blocked on the stream getting new data.",
         .getkeys = xread_getkeys, .key_flags = "RO access", .key_specs = xreadgroup_specs),
    XROW("xgroup", container_cmd, -2, 0, 0, "5.0.0", "A container for consumer groups commands",
         "Depends on subcommand.", .subcommands = xgroup_subcommands),
    XROW("xack", xack_cmd, -4, CMD_WRITE | CMD_FAST, 1, "5.0.0",
         "Marks a pending message as correctly processed, effectively removing it from the "
         "pending entries list of the consumer group. Return value of the command is the number "
         "of messages successfully acknowledged, that is, the IDs we were actually able to "
         "resolve in the PEL.",
         "O(1) for each message ID processed.", .key_flags = "RW update"),
    XROW("xpending", xpending_cmd, -3, CMD_READONLY, 1, "5.0.0",
         "Return information and entries from a stream consumer group pending entries list, that "
         "are messages fetched but never acknowledged.",
         "O(N) with N being the number of elements returned, so asking for a small fixed number "
         "of entries per call is O(1). O(M), where M is the total number of entries scanned when "
         "used with the IDLE filter. When the command returns just the summary and the list of "
         "consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for "
         "iterating every consumer.",
         .key_flags = "RO access"),
    XROW("xclaim", xclaim_cmd, -6, CMD_WRITE | CMD_FAST, 1, "5.0.0",
         "Changes (or acquires) ownership of a message in a consumer group, as if the message was "
         "delivered to the specified consumer.",
         "O(log N) with N being the number of messages in the PEL of the consumer group.",
         .key_flags = "RW update"),
    XROW("xautoclaim", xautoclaim_cmd, -6, CMD_WRITE | CMD_FAST, 1, "6.2.0",
         "Changes (or acquires) ownership of messages in a consumer group, as if the messages were "
         "delivered to the specified consumer.",
         "O(1) if COUNT is small.", .key_flags = "RW delete"),
    XROW("xinfo", container_cmd, -2, 0, 0, "5.0.0", "A container for stream introspection commands",
         "Depends on subcommand.", .subcommands = xinfo_subcommands),
    XROW("xsetid", xsetid_cmd, -3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, "5.0.0",
         "An internal command for replicating stream values", "O(1)", .key_flags = "RW update"),
    {NULL},
};
