/* server/cmd/zset.c - the sorted-set commands: ZADD ZINCRBY ZREM ZSCORE ZMSCORE ZCARD ZCOUNT
 * ZLEXCOUNT ZRANK ZREVRANK ZRANGE ZRANGESTORE ZRANGEBYSCORE ZREVRANGEBYSCORE ZRANGEBYLEX
 * ZREVRANGEBYLEX ZREVRANGE ZPOPMIN ZPOPMAX ZMPOP ZRANDMEMBER ZUNION ZINTER ZINTERCARD ZDIFF
 * ZUNIONSTORE ZINTERSTORE ZDIFFSTORE ZREMRANGEBYSCORE ZREMRANGEBYRANK ZREMRANGEBYLEX ZSCAN.
 *
 * Replies, errors, the order in which arguments are checked, and keyspace events are Redis
 * 7.0's (t_zset.c): scores are doubles (RESP3) or "%.17g" bulk strings (RESP2), WITHSCORES
 * pairs are nested arrays in RESP3 for the ZRANGE family, ZRANDMEMBER, ZPOP with a count and
 * ZUNION/ZINTER/ZDIFF. The data structure is storage/t_zset.h; this file parses arguments and
 * shapes replies. ZADD's core and result storing are shared with the GEO commands
 * (server/cmd/zset.h).
 *
 * Shape: all ZRANGE variants go through one option parser and one emitter that either writes
 * to the client or collects entries for ZRANGESTORE. Set operations collect their result as an
 * array of entries (views into the sources, or into a temporary member->score dict for ZUNION),
 * sort it once and then reply or build the destination in linear time (zset_from_sorted, which
 * also picks listpack or skiplist as Redis does for a stored result). Views stay valid because
 * no source changes until the destination is stored.
 *
 * Read lookups count keyspace hits/misses as Redis's lookupKeyRead; write lookups do not.
 * Sources of ZUNION/ZINTER/ZDIFF may be zsets only: plain sets are refused with WRONGTYPE
 * (Redis accepts them with score 1) until storage has a set type. Runs on the loop thread. */
#include "common/alloc.h"
#include "common/dict.h"
#include "common/glob.h"
#include "common/util.h"
#include "server/command.h"
#include "server/block.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/cmd/zset.h"
#include "storage/t_set.h"
#include "storage/t_zset.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ERR_NOT_FLOAT_RANGE "ERR min or max is not a float"
#define ERR_NOT_LEX_RANGE "ERR min or max not valid string range item"
#define ERR_NAN "ERR resulting score is not a number (NaN)"
#define ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."

/* ---- lookups, events, replies ---- */

/* Redis's lookupKeyRead + checkType: NULL when absent (*err 0) or of another type (*err 1,
 * WRONGTYPE sent). Counts a hit or a miss. */
static zset_t *zset_read(client_t *c, const resp_arg_t *key, int *err)
{
    kv_t *kv = lookup_read_type(c, key, OBJ_ZSET, err);
    return kv ? (zset_t *)kv->val : NULL;
}

/* lookupKeyWrite + checkType: no statistics. */
static kv_t *zset_write(client_t *c, const resp_arg_t *key, int *err)
{
    return lookup_write_type(c, key, OBJ_ZSET, err);
}

static void changed(client_t *c, const resp_arg_t *key, const char *event)
{
    server_key_changed(c, c->db, key->ptr, key->len, NOTIFY_ZSET, event);
}

static void deleted(client_t *c, const resp_arg_t *key)
{
    server_key_changed(c, c->db, key->ptr, key->len, NOTIFY_GENERIC, "del");
}

/* Stores a non-empty result under key (the old value and TTL go), or deletes the key when the
 * result is empty (z NULL); replies with the result's length as Redis's *STORE commands do. */
void zsetcmd_store_result(client_t *c, const resp_arg_t *key, zset_t *z, const char *event)
{
    if (z) {
        size_t n = zset_length(z);
        db_set(c->db, key->ptr, key->len, &z->h, 0);
        reply_int(c, (long long)n);
        changed(c, key, event);
        return;
    }
    reply_int(c, 0);
    if (db_delete(c->db, key->ptr, key->len)) deleted(c, key);
}

static void reply_entry(client_t *c, const zset_entry_t *e, int withscores)
{
    if (withscores && c->resp > 2) reply_array(c, 2);
    reply_bulk(c, e->member, e->len);
    if (withscores) reply_double(c, e->score);
}

int zsetcmd_entry_cmp(const void *pa, const void *pb)
{
    const zset_entry_t *a = pa, *b = pb;
    if (a->score < b->score) return -1;
    if (a->score > b->score) return 1;
    size_t n = a->len < b->len ? a->len : b->len;
    int r = n ? memcmp(a->member, b->member, n) : 0;
    if (r) return r;
    return a->len < b->len ? -1 : a->len > b->len;
}

/* A growable array of entries (views). */
typedef struct entries {
    zset_entry_t *v;
    size_t n, cap;
} entries_t;

static void entries_push(entries_t *a, const zset_entry_t *e)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->v = xrealloc(a->v, a->cap * sizeof(*a->v));
    }
    a->v[a->n++] = *e;
}

/* ---- ZADD ZINCRBY ---- */

/* Reads ZADD's options from argv[2] on; *idx ends at the first score. */
static int parse_zadd_flags(client_t *c, int *idx, int *flags, int *ch)
{
    for (; *idx < c->argc; (*idx)++) {
        const resp_arg_t *a = &c->argv[*idx];
        if (arg_is(a, "nx"))
            *flags |= ZSET_IN_NX;
        else if (arg_is(a, "xx"))
            *flags |= ZSET_IN_XX;
        else if (arg_is(a, "ch"))
            *ch = 1;
        else if (arg_is(a, "incr"))
            *flags |= ZSET_IN_INCR;
        else if (arg_is(a, "gt"))
            *flags |= ZSET_IN_GT;
        else if (arg_is(a, "lt"))
            *flags |= ZSET_IN_LT;
        else
            break;
    }
    int elements = c->argc - *idx;
    if (elements % 2 || !elements) {
        reply_syntax_error(c);
        return -1;
    }
    int nx = *flags & ZSET_IN_NX, xx = *flags & ZSET_IN_XX, gt = *flags & ZSET_IN_GT,
        lt = *flags & ZSET_IN_LT;
    if (nx && xx) {
        reply_error(c, "ERR XX and NX options at the same time are not compatible");
        return -1;
    }
    if ((gt && nx) || (lt && nx) || (gt && lt)) {
        reply_error(c, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return -1;
    }
    if ((*flags & ZSET_IN_INCR) && elements > 2) {
        reply_error(c, "ERR INCR option supports a single increment-element pair");
        return -1;
    }
    return 0;
}

static void zadd_generic(client_t *c, int flags)
{
    int idx = 2, ch = 0;
    if (parse_zadd_flags(c, &idx, &flags, &ch) < 0) return;
    int elements = (c->argc - idx) / 2;
    double stack[32], *scores = stack;
    if (elements > 32 && !(scores = try_malloc(sizeof(double) * (size_t)elements))) {
        reply_error(c, ERR_OOM);
        return;
    }
    for (int j = 0; j < elements; j++)
        if (arg_double_or_reply(c, &c->argv[idx + 2 * j], &scores[j], NULL) < 0) goto cleanup;
    zsetcmd_add(c, &c->argv[1], flags, ch, elements, scores, &c->argv[idx + 1], 2);
cleanup:
    if (scores != stack) xfree(scores);
}

void zsetcmd_add(client_t *c, const resp_arg_t *key, int flags, int ch, int n, const double *scores,
                 const resp_arg_t *members, int stride)
{
    int err, incr = (flags & ZSET_IN_INCR) != 0;
    long long added = 0, updated = 0, processed = 0;
    double score = 0;
    kv_t *kv = zset_write(c, key, &err);
    if (err) return;
    if (!kv) {
        if (flags & ZSET_IN_XX) goto reply;
        kv = db_add(c->db, key->ptr, key->len, &zset_new()->h);
    }
    zset_t *z = (zset_t *)kv->val;
    for (int j = 0; j < n; j++) {
        const resp_arg_t *m = &members[j * stride];
        int out;
        double newscore;
        if (zset_add(z, m->ptr, m->len, scores[j], flags, &out, &newscore) < 0) {
            reply_error(c, ERR_NAN);
            goto done;
        }
        if (out & ZSET_OUT_ADDED) added++;
        if (out & ZSET_OUT_UPDATED) updated++;
        if (!(out & ZSET_OUT_NOP)) {
            processed++;
            score = newscore;
        }
    }
reply:
    if (incr) {
        if (processed)
            reply_double(c, score);
        else
            reply_null(c);
    } else {
        reply_int(c, ch ? added + updated : added);
    }
done:
    if (added || updated) changed(c, key, incr ? "zincr" : "zadd");
}

static void zadd_cmd(client_t *c)
{
    zadd_generic(c, 0);
}

static void zincrby_cmd(client_t *c)
{
    zadd_generic(c, ZSET_IN_INCR);
}

/* ---- ZREM and the ZREMRANGEBY* commands ---- */

static void zrem_cmd(client_t *c)
{
    const resp_arg_t *key = &c->argv[1];
    int err, removed = 0;
    kv_t *kv = zset_write(c, key, &err);
    if (!kv) {
        if (!err) reply_int(c, 0);
        return;
    }
    long long n = 0;
    zset_t *z = (zset_t *)kv->val;
    for (int j = 2; j < c->argc; j++) {
        n += zset_remove(z, c->argv[j].ptr, c->argv[j].len);
        if (!zset_length(z)) {
            db_delete_kv(c->db, kv);
            removed = 1;
            break;
        }
    }
    if (n) {
        changed(c, key, "zrem");
        if (removed) deleted(c, key);
    }
    reply_int(c, n);
}

enum { RANGE_AUTO = 0, RANGE_RANK, RANGE_SCORE, RANGE_LEX };

/* Start and end of a rank range, clamped as Redis does; 0 when the range is empty. */
static int clamp_ranks(long long *start, long long *end, long long len)
{
    if (*start < 0) *start += len;
    if (*end < 0) *end += len;
    if (*start < 0) *start = 0;
    if (*start > *end || *start >= len) return 0;
    if (*end >= len) *end = len - 1;
    return 1;
}

/* Parses a score or lex range from two arguments, replying with Redis's error if bad. */
static int score_range_or_reply(client_t *c, const resp_arg_t *min, const resp_arg_t *max,
                                zset_range_t *r)
{
    if (zset_parse_range(min->ptr, min->len, max->ptr, max->len, r) == 0) return 0;
    reply_error(c, ERR_NOT_FLOAT_RANGE);
    return -1;
}

static int lex_range_or_reply(client_t *c, const resp_arg_t *min, const resp_arg_t *max,
                              zset_lex_range_t *r)
{
    if (zset_parse_lex_range(min->ptr, min->len, max->ptr, max->len, r) == 0) return 0;
    reply_error(c, ERR_NOT_LEX_RANGE);
    return -1;
}


static void zremrange_generic(client_t *c, int type)
{
    static const char *const events[] = {NULL, "zremrangebyrank", "zremrangebyscore",
                                         "zremrangebylex"};
    const resp_arg_t *key = &c->argv[1];
    long long start = 0, end = 0;
    zset_range_t r;
    zset_lex_range_t lr;
    int err;
    if (type == RANGE_RANK) {
        if (arg_ll_or_reply(c, &c->argv[2], &start, NULL) < 0 ||
            arg_ll_or_reply(c, &c->argv[3], &end, NULL) < 0)
            return;
    } else if (type == RANGE_SCORE) {
        if (score_range_or_reply(c, &c->argv[2], &c->argv[3], &r) < 0) return;
    } else if (lex_range_or_reply(c, &c->argv[2], &c->argv[3], &lr) < 0) {
        return;
    }
    kv_t *kv = zset_write(c, key, &err);
    if (!kv) {
        if (!err) reply_int(c, 0);
        return;
    }
    zset_t *z = (zset_t *)kv->val;
    size_t n;
    if (type == RANGE_RANK) {
        if (!clamp_ranks(&start, &end, (long long)zset_length(z))) {
            reply_int(c, 0);
            return;
        }
        n = zset_delete_rank(z, (size_t)start, (size_t)end);
    } else if (type == RANGE_SCORE) {
        n = zset_delete_range(z, &r);
    } else {
        n = zset_delete_lex(z, &lr);
    }
    if (n) {
        int gone = !zset_length(z);
        if (gone) db_delete_kv(c->db, kv);
        changed(c, key, events[type]);
        if (gone) deleted(c, key);
    }
    reply_int(c, (long long)n);
}

static void zremrangebyrank_cmd(client_t *c)
{
    zremrange_generic(c, RANGE_RANK);
}

static void zremrangebyscore_cmd(client_t *c)
{
    zremrange_generic(c, RANGE_SCORE);
}

static void zremrangebylex_cmd(client_t *c)
{
    zremrange_generic(c, RANGE_LEX);
}

/* ---- ZCARD ZSCORE ZMSCORE ZRANK ZREVRANK ZCOUNT ZLEXCOUNT ---- */

static void zcard_cmd(client_t *c)
{
    int err;
    zset_t *z = zset_read(c, &c->argv[1], &err);
    if (!err) reply_int(c, z ? (long long)zset_length(z) : 0);
}

static void zscore_cmd(client_t *c)
{
    int err;
    double s;
    zset_t *z = zset_read(c, &c->argv[1], &err);
    if (err) return;
    if (z && zset_score(z, c->argv[2].ptr, c->argv[2].len, &s))
        reply_double(c, s);
    else
        reply_null(c);
}

static void zmscore_cmd(client_t *c)
{
    int err;
    double s;
    zset_t *z = zset_read(c, &c->argv[1], &err);
    if (err) return;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        if (z && zset_score(z, c->argv[j].ptr, c->argv[j].len, &s))
            reply_double(c, s);
        else
            reply_null(c);
    }
}

static void zrank_generic(client_t *c, int reverse)
{
    int err;
    zset_t *z = zset_read(c, &c->argv[1], &err);
    if (err) return;
    long long rank = z ? zset_rank(z, c->argv[2].ptr, c->argv[2].len, reverse) : -1;
    if (rank >= 0)
        reply_int(c, rank);
    else
        reply_null(c);
}

static void zrank_cmd(client_t *c)
{
    zrank_generic(c, 0);
}

static void zrevrank_cmd(client_t *c)
{
    zrank_generic(c, 1);
}

static void zcount_cmd(client_t *c)
{
    zset_range_t r;
    int err;
    if (score_range_or_reply(c, &c->argv[2], &c->argv[3], &r) < 0) return;
    zset_t *z = zset_read(c, &c->argv[1], &err);
    if (!err) reply_int(c, z ? (long long)zset_count_range(z, &r) : 0);
}

static void zlexcount_cmd(client_t *c)
{
    zset_lex_range_t r;
    int err;
    if (lex_range_or_reply(c, &c->argv[2], &c->argv[3], &r) < 0) return;
    zset_t *z = zset_read(c, &c->argv[1], &err);
    if (!err) reply_int(c, z ? (long long)zset_count_lex(z, &r) : 0);
}

/* ---- the ZRANGE family ---- */

/* Where range results go: the client, or an array for ZRANGESTORE. */
typedef struct range_out {
    client_t *c;
    const resp_arg_t *dst; /* ZRANGESTORE's destination, NULL for a client reply */
    int withscores;
    size_t handle; /* deferred array header, (size_t)-1 when the length was known */
    entries_t store;
    long long hint; /* the length Redis sizes ZRANGESTORE's destination with (-1: unknown) */
} range_out_t;

/* 1 when a range being replied stops early: its client was closed for its output limits. A
 * range being stored (ZRANGESTORE) never stops, whatever became of the client's replies: what
 * it stores is what the append-only file replays. */
static int range_stopped(const range_out_t *o)
{
    return !o->dst && reply_stopped(o->c);
}

/* Least bytes of one entry in a reply: the member, and its score as a second bulk (RESP2) or
 * a double in a pair ("*2\r\n", RESP3). */
static unsigned long long entry_reply_min(const client_t *c, int withscores)
{
    if (!withscores) return REPLY_MIN_BULK;
    return REPLY_MIN_BULK + (c->resp == 2 ? REPLY_MIN_BULK : 4 + REPLY_MIN_DOUBLE);
}

/* Opens the reply; len <= 0 when the count is not known yet (Redis defers it then). */
static void range_begin(range_out_t *o, long long len)
{
    o->handle = (size_t)-1;
    o->hint = len;
    if (o->dst) return;
    if (len > 0)
        reply_array(o->c, o->withscores && o->c->resp == 2 ? len * 2 : len);
    else
        o->handle = reply_defer(o->c);
}

static void range_emit(range_out_t *o, const zset_entry_t *e)
{
    if (o->dst)
        entries_push(&o->store, e);
    else
        reply_entry(o->c, e, o->withscores);
}

/* Closes the reply, or stores what was collected (given in reverse order if reverse). */
static void range_finish(range_out_t *o, size_t n, int reverse)
{
    if (!o->dst) {
        if (o->handle != (size_t)-1)
            reply_defer_finish(o->c, o->handle, '*',
                               (long long)(o->withscores && o->c->resp == 2 ? n * 2 : n));
        return;
    }
    zset_t *z = NULL;
    zset_entry_t *v = o->store.v;
    /* Redis builds the destination by inserting in range order into a listpack when the
     * length hint allows, converting to a skiplist at the first entry that breaks the limits;
     * a listpack stores a score of -0 as the integer 0, so the entries inserted before the
     * conversion read back +0. The same here, for the same bytes on the wire. */
    if (o->hint <= (long long)storage_params.zset_max_listpack_entries) {
        for (size_t i = 0; i < n; i++) {
            if (i + 1 > storage_params.zset_max_listpack_entries ||
                v[i].len > storage_params.zset_max_listpack_value)
                break;
            if (v[i].score == 0) v[i].score = 0.0;
        }
    }
    if (reverse) {
        for (size_t i = 0; i < n / 2; i++) {
            zset_entry_t t = v[i];
            v[i] = v[n - 1 - i];
            v[n - 1 - i] = t;
        }
    }
    if (n) z = zset_from_sorted(v, n);
    zsetcmd_store_result(o->c, o->dst, z, "zrangestore");
    xfree(v);
}

static void range_by_rank(range_out_t *o, const zset_t *z, long long start, long long end,
                          int reverse)
{
    if (!clamp_ranks(&start, &end, (long long)zset_length(z))) {
        range_begin(o, 0);
        range_finish(o, 0, reverse);
        return;
    }
    size_t n = (size_t)(end - start + 1), i;
    zset_iter_t it;
    zset_entry_t e;
    if (!o->dst && reply_fits_or_reply(o->c, n, entry_reply_min(o->c, o->withscores)) < 0) return;
    range_begin(o, (long long)n);
    zset_iter_rank(&it, z, (size_t)start, reverse);
    for (i = 0; i < n && !range_stopped(o) && zset_iter_next(&it, &e); i++) range_emit(o, &e);
    range_finish(o, i, reverse);
}

/* LIMIT as Redis applies it: a negative offset skips everything, a negative count means no
 * limit. it is positioned at the first entry of the range. */
static void range_limited(range_out_t *o, zset_iter_t *it, long long offset, long long limit,
                          int reverse)
{
    size_t n = 0;
    zset_entry_t e;
    if (offset < 0)
        it->pos = NULL;
    else
        zset_iter_skip(it, (size_t)offset);
    while (limit-- && !range_stopped(o) && zset_iter_next(it, &e)) {
        range_emit(o, &e);
        n++;
    }
    range_finish(o, n, reverse);
}

typedef struct range_opts {
    int type, reverse, withscores;
    long long offset, limit;
} range_opts_t;

/* Parses the options from argv[first] on, as zrangeGenericCommand does. o->type is
 * RANGE_AUTO and o->reverse -1 where the command leaves them to the options. */
static int parse_range_opts(client_t *c, int first, int store, range_opts_t *o)
{
    for (int j = first; j < c->argc; j++) {
        int left = c->argc - j - 1;
        const resp_arg_t *a = &c->argv[j];
        if (!store && arg_is(a, "withscores")) {
            o->withscores = 1;
        } else if (arg_is(a, "limit") && left >= 2) {
            if (arg_ll_or_reply(c, &c->argv[j + 1], &o->offset, NULL) < 0 ||
                arg_ll_or_reply(c, &c->argv[j + 2], &o->limit, NULL) < 0)
                return -1;
            j += 2;
        } else if (o->reverse < 0 && arg_is(a, "rev")) {
            o->reverse = 1;
        } else if (o->type == RANGE_AUTO && arg_is(a, "bylex")) {
            o->type = RANGE_LEX;
        } else if (o->type == RANGE_AUTO && arg_is(a, "byscore")) {
            o->type = RANGE_SCORE;
        } else {
            reply_syntax_error(c);
            return -1;
        }
    }
    if (o->reverse < 0) o->reverse = 0;
    if (o->type == RANGE_AUTO) o->type = RANGE_RANK;
    if (o->limit != -1 && o->type == RANGE_RANK) {
        reply_error(c, "ERR syntax error, LIMIT is only supported in combination with either "
                       "BYSCORE or BYLEX");
        return -1;
    }
    if (o->withscores && o->type == RANGE_LEX) {
        reply_error(c, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return -1;
    }
    return 0;
}

/* ZRANGE and its variants. base is the index of the source key; dst is ZRANGESTORE's
 * destination or NULL; type and reverse are fixed by the command, or RANGE_AUTO and -1. */
static void zrange_generic(client_t *c, int base, const resp_arg_t *dst, int type, int reverse)
{
    range_opts_t opt = {type, reverse, 0, 0, -1};
    if (parse_range_opts(c, base + 3, dst != NULL, &opt) < 0) return;
    int swap = opt.reverse && opt.type != RANGE_RANK;
    const resp_arg_t *amin = &c->argv[base + (swap ? 2 : 1)];
    const resp_arg_t *amax = &c->argv[base + (swap ? 1 : 2)];
    long long start = 0, end = 0;
    zset_range_t r;
    zset_lex_range_t lr;
    int err;
    if (opt.type == RANGE_RANK) {
        if (arg_ll_or_reply(c, amin, &start, NULL) < 0 || arg_ll_or_reply(c, amax, &end, NULL) < 0)
            return;
    } else if (opt.type == RANGE_SCORE) {
        if (score_range_or_reply(c, amin, amax, &r) < 0) return;
    } else if (lex_range_or_reply(c, amin, amax, &lr) < 0) {
        return;
    }
    range_out_t o = {c, dst, opt.withscores || dst, (size_t)-1, {0}};
    zset_t *z = zset_read(c, &c->argv[base], &err);
    if (err) return;
    if (!z) {
        if (dst)
            range_finish(&o, 0, 0);
        else
            reply_array(c, 0);
        return;
    }
    zset_iter_t it;
    if (opt.type == RANGE_RANK) {
        range_by_rank(&o, z, start, end, opt.reverse);
        return;
    }
    range_begin(&o, -1);
    if (opt.type == RANGE_SCORE) {
        if (opt.offset > 0 && (unsigned long long)opt.offset >= zset_length(z)) {
            range_finish(&o, 0, opt.reverse);
            return;
        }
        zset_iter_score(&it, z, &r, opt.reverse);
    } else {
        zset_iter_lex(&it, z, &lr, opt.reverse);
    }
    range_limited(&o, &it, opt.offset, opt.limit, opt.reverse);
}

static void zrange_cmd(client_t *c)
{
    zrange_generic(c, 1, NULL, RANGE_AUTO, -1);
}

static void zrangestore_cmd(client_t *c)
{
    zrange_generic(c, 2, &c->argv[1], RANGE_AUTO, -1);
}

static void zrevrange_cmd(client_t *c)
{
    zrange_generic(c, 1, NULL, RANGE_RANK, 1);
}

static void zrangebyscore_cmd(client_t *c)
{
    zrange_generic(c, 1, NULL, RANGE_SCORE, 0);
}

static void zrevrangebyscore_cmd(client_t *c)
{
    zrange_generic(c, 1, NULL, RANGE_SCORE, 1);
}

static void zrangebylex_cmd(client_t *c)
{
    zrange_generic(c, 1, NULL, RANGE_LEX, 0);
}

static void zrevrangebylex_cmd(client_t *c)
{
    zrange_generic(c, 1, NULL, RANGE_LEX, 1);
}

/* ---- ZPOPMIN ZPOPMAX ZMPOP ---- */

/* Pops from the first existing key of keys. count -1: one member, no count given. nested:
 * [member, score] pairs as arrays; emitkey: the reply starts with the key (ZMPOP). */
static void zpop_generic(client_t *c, const resp_arg_t *keys, int nkeys, int max, int emitkey,
                         long long count, int nested, int nil_when_empty)
{
    kv_t *kv = NULL;
    const resp_arg_t *key = NULL;
    int err;
    for (int i = 0; i < nkeys && !kv; i++) {
        key = &keys[i];
        kv = zset_write(c, key, &err);
        if (err) return;
    }
    if (!kv) {
        if (nil_when_empty)
            reply_null_array(c);
        else
            reply_array(c, 0);
        return;
    }
    if (count == 0) {
        reply_array(c, 0);
        return;
    }
    if (count == -1) count = 1;
    zset_t *z = (zset_t *)kv->val;
    size_t len = zset_length(z), n = (unsigned long long)count > len ? len : (size_t)count;
    if (emitkey) {
        reply_array(c, nested ? 2 : (long long)n * 2 + 1);
        reply_bulk(c, key->ptr, key->len);
    }
    if (nested || !emitkey) reply_array(c, nested ? (long long)n : (long long)n * 2);
    zset_iter_t it;
    zset_entry_t e;
    zset_iter_rank(&it, z, 0, max);
    for (size_t i = 0; i < n && zset_iter_next(&it, &e); i++) {
        if (nested) reply_array(c, 2);
        reply_bulk(c, e.member, e.len);
        reply_double(c, e.score);
    }
    if (max)
        zset_delete_rank(z, len - n, len - 1);
    else
        zset_delete_rank(z, 0, n - 1);
    changed(c, key, max ? "zpopmax" : "zpopmin");
    if (!zset_length(z)) {
        db_delete_kv(c->db, kv);
        deleted(c, key);
    }
}

static void zpop_minmax(client_t *c, int max)
{
    long long count = -1;
    if (c->argc > 3) {
        reply_syntax_error(c);
        return;
    }
    if (c->argc == 3 &&
        arg_range_or_reply(c, &c->argv[2], 0, LONG_MAX, &count, ERR_NOT_POSITIVE) < 0)
        return;
    zpop_generic(c, &c->argv[1], 1, max, 0, count, c->resp > 2 && count != -1, 0);
}

static void zpopmin_cmd(client_t *c)
{
    zpop_minmax(c, 0);
}

static void zpopmax_cmd(client_t *c)
{
    zpop_minmax(c, 1);
}

/* Parses ZMPOP's arguments from argv[numidx] (numkeys key... MIN|MAX [COUNT n]). Returns 0
 * with the results, or -1 after replying the error. */
static int parse_mpop_or_reply(client_t *c, int numidx, long long *numkeys, int *max,
                               long long *count)
{
    *count = -1;
    if (arg_range_or_reply(c, &c->argv[numidx], 1, LONG_MAX, numkeys,
                           "ERR numkeys should be greater than 0") < 0)
        return -1;
    if (*numkeys >= c->argc - numidx - 1) {
        reply_syntax_error(c);
        return -1;
    }
    int where = numidx + 1 + (int)*numkeys;
    if (arg_is(&c->argv[where], "min")) {
        *max = 0;
    } else if (arg_is(&c->argv[where], "max")) {
        *max = 1;
    } else {
        reply_syntax_error(c);
        return -1;
    }
    for (int j = where + 1; j < c->argc; j++) {
        if (*count == -1 && arg_is(&c->argv[j], "count") && j + 1 < c->argc) {
            j++;
            if (arg_range_or_reply(c, &c->argv[j], 1, LONG_MAX, count,
                                   "ERR count should be greater than 0") < 0)
                return -1;
        } else {
            reply_syntax_error(c);
            return -1;
        }
    }
    if (*count == -1) *count = 1;
    return 0;
}

static void zmpop_cmd(client_t *c)
{
    long long numkeys, count;
    int max;
    if (parse_mpop_or_reply(c, 1, &numkeys, &max, &count) < 0) return;
    zpop_generic(c, &c->argv[2], (int)numkeys, max, 1, count, 1, 1);
}

/* ---- BZPOPMIN BZPOPMAX BZMPOP ---- */

/* 1 if one of keys holds a sorted set (replies WRONGTYPE and returns -1 on a wrong type).
 * A blocked client that runs again finds a key of another type as if it did not exist and
 * stays blocked, as Redis leaves it. */
static int any_zset_or_reply(client_t *c, const resp_arg_t *keys, int n)
{
    for (int i = 0; i < n; i++) {
        int err;
        kv_t *kv = block_is_retry(c) ? db_find(c->db, keys[i].ptr, keys[i].len) : NULL;
        if (kv && kv->val->type != OBJ_ZSET) continue;
        if (zset_write(c, &keys[i], &err)) return 1;
        if (err) return -1;
    }
    return 0;
}

/* Serves now if a key has members, else blocks on the keys (or replies nil inside MULTI). */
static void block_or_pop(client_t *c, int first, int nkeys, long long deadline, int max,
                         long long count, int mpop)
{
    int found = any_zset_or_reply(c, &c->argv[first], nkeys);
    if (found < 0) return;
    if (found) {
        zpop_generic(c, &c->argv[first], nkeys, max, 1, count, mpop, 1);
        return;
    }
    if (c->flags & CLIENT_MULTI) {
        reply_null_array(c);
        return;
    }
    block_on_key_range(c, first, nkeys, deadline, BLOCK_REPLY_NULL_ARRAY);
}

static void bzpop_minmax(client_t *c, int max)
{
    long long deadline;
    if (block_timeout_or_reply(c, &c->argv[c->argc - 1], &deadline) < 0) return;
    block_or_pop(c, 1, c->argc - 2, deadline, max, 1, 0);
}

static void bzpopmin_cmd(client_t *c)
{
    bzpop_minmax(c, 0);
}

static void bzpopmax_cmd(client_t *c)
{
    bzpop_minmax(c, 1);
}

static void bzmpop_cmd(client_t *c)
{
    long long deadline, numkeys, count;
    int max;
    if (block_timeout_or_reply(c, &c->argv[1], &deadline) < 0) return;
    if (parse_mpop_or_reply(c, 2, &numkeys, &max, &count) < 0) return;
    block_or_pop(c, 3, (int)numkeys, deadline, max, count, 1);
}

/* ---- ZRANDMEMBER ---- */

/* A set of ranks already drawn (open addressing; a slot holds rank + 1, 0 is empty). */
typedef struct rank_set {
    uint64_t *slot;
    size_t mask;
} rank_set_t;

static int rank_set_add(rank_set_t *s, uint64_t rank)
{
    size_t i = (size_t)(((rank + 1) * 0x9e3779b97f4a7c15ull) >> 17) & s->mask;
    while (s->slot[i]) {
        if (s->slot[i] == rank + 1) return 0;
        i = (i + 1) & s->mask;
    }
    s->slot[i] = rank + 1;
    return 1;
}

/* The n entries of z in order, as views (a listpack is walked once instead of once a pick);
 * NULL if memory is short. */
static zset_entry_t *snapshot(const zset_t *z, size_t n)
{
    zset_entry_t *v = try_malloc((n ? n : 1) * sizeof(*v));
    if (!v) return NULL;
    zset_iter_t it;
    zset_iter_rank(&it, z, 0, 0);
    for (size_t i = 0; i < n; i++) zset_iter_next(&it, &v[i]);
    return v;
}

/* count distinct entries, fewer than a third of size: random ranks, duplicates redrawn. */
static void reply_sparse_sample(client_t *c, const zset_t *z, size_t size, size_t count,
                                int withscores)
{
    size_t slots = 16;
    while (slots < count * 2) slots <<= 1;
    rank_set_t s = {xcalloc(slots, sizeof(uint64_t)), slots - 1};
    zset_entry_t e;
    for (size_t got = 0; got < count;) {
        uint64_t rank = rand_u64() % size;
        if (!rank_set_add(&s, rank)) continue;
        zset_entry_at(z, (size_t)rank, &e);
        reply_entry(c, &e, withscores);
        got++;
    }
    xfree(s.slot);
}

static void zrandmember_count(client_t *c, long long l, int withscores)
{
    int err;
    zset_t *z = zset_read(c, &c->argv[1], &err);
    if (err) return;
    if (!z || l == 0) {
        reply_array(c, 0);
        return;
    }
    size_t size = zset_length(z);
    int uniq = l > 0;
    unsigned long long count = uniq ? (unsigned long long)l : 0ull - (unsigned long long)l;
    int with_repeats = !uniq || count == 1, all = uniq && count >= size;
    int dense = !with_repeats && !all && count * 3 > size;
    if (reply_fits_or_reply(c, all ? size : count, entry_reply_min(c, withscores)) < 0) return;
    zset_entry_t e, *v = NULL;
    if ((dense || (with_repeats && z->h.enc == ENC_LISTPACK)) && !(v = snapshot(z, size))) {
        reply_error(c, ERR_OOM);
        return;
    }
    long long header = all ? (long long)size : (long long)count;
    reply_array(c, withscores && c->resp == 2 ? header * 2 : header);
    if (with_repeats) {
        while (count-- && !reply_stopped(c)) {
            if (v)
                e = v[rand_u64() % size];
            else
                zset_random(z, &e);
            reply_entry(c, &e, withscores);
        }
    } else if (all) {
        /* the whole set, from the highest score down, as Redis's iterator walks it */
        zset_iter_t it;
        zset_iter_rank(&it, z, 0, 1);
        while (zset_iter_next(&it, &e)) reply_entry(c, &e, withscores);
    } else if (dense) {
        /* a large share: a partial shuffle picks count distinct entries */
        for (size_t i = 0; i < count; i++) {
            size_t j = i + (size_t)(rand_u64() % (size - i));
            zset_entry_t t = v[i];
            v[i] = v[j];
            v[j] = t;
            reply_entry(c, &v[i], withscores);
        }
    } else {
        reply_sparse_sample(c, z, size, (size_t)count, withscores);
    }
    xfree(v);
}

static void zrandmember_cmd(client_t *c)
{
    long long l;
    int err;
    if (c->argc >= 3) {
        if (arg_ll_or_reply(c, &c->argv[2], &l, NULL) < 0) return;
        if (l == LLONG_MIN) { /* -count must exist: Redis's range is [-LONG_MAX, LONG_MAX] */
            reply_errorf(c, "ERR value is out of range, value must between %lld and %lld",
                         -LLONG_MAX, LLONG_MAX);
            return;
        }
        if (c->argc > 4 || (c->argc == 4 && !arg_is(&c->argv[3], "withscores"))) {
            reply_syntax_error(c);
            return;
        }
        if (c->argc == 4 && (l < -LLONG_MAX / 2 || l > LLONG_MAX / 2)) {
            reply_error(c, "ERR value is out of range");
            return;
        }
        zrandmember_count(c, l, c->argc == 4);
        return;
    }
    zset_t *z = zset_read(c, &c->argv[1], &err);
    if (err) return;
    if (!z) {
        reply_null(c);
        return;
    }
    zset_entry_t e;
    zset_random(z, &e);
    reply_bulk(c, e.member, e.len);
}

/* ---- ZSCAN ---- */

static void scan_collect(void *ud, const zset_entry_t *e)
{
    entries_push(ud, e);
}

/* A score as ZSCAN shows it: a listpack holds an integral score (within +-LLONG_MAX/2) as an
 * integer and Redis returns the stored form; otherwise "%.17g", as for a skiplist. */
static size_t scan_score(char *buf, size_t cap, double d, int listpack)
{
    if (listpack && d >= (double)(-LLONG_MAX / 2) && d <= (double)(LLONG_MAX / 2) &&
        (double)(long long)d == d)
        return ll_to_str(buf, (long long)d);
    return d_to_str(buf, cap, d);
}

static void zscan_cmd(client_t *c)
{
    uint64_t cursor;
    long long count = 10;
    const resp_arg_t *pat = NULL;
    int err;
    if (scan_cursor_or_reply(c, &c->argv[2], &cursor) < 0) return;
    zset_t *z = zset_read(c, &c->argv[1], &err);
    if (err) return;
    if (!z) {
        reply_proto(c, "*2\r\n$1\r\n0\r\n*0\r\n", 15);
        return;
    }
    if (scan_count_match_or_reply(c, 3, &count, &pat) < 0) return;
    entries_t got = {0};
    long long maxiter = count * 10;
    do {
        cursor = zset_scan(z, cursor, scan_collect, &got);
    } while (cursor && maxiter-- && got.n < (unsigned long long)count);
    size_t kept = 0;
    int lp = z->h.enc == ENC_LISTPACK;
    for (size_t i = 0; i < got.n; i++)
        if (!pat || strglob_match(pat->ptr, pat->len, got.v[i].member, got.v[i].len, 0))
            got.v[kept++] = got.v[i];
    char buf[32];
    reply_array(c, 2);
    reply_bulk(c, buf, ull_to_str(buf, cursor));
    reply_array(c, (long long)kept * 2);
    for (size_t i = 0; i < kept; i++) {
        reply_bulk(c, got.v[i].member, got.v[i].len);
        reply_bulk(c, buf, scan_score(buf, sizeof(buf), got.v[i].score, lp));
    }
    xfree(got.v);
}

/* ---- ZUNION ZINTER ZINTERCARD ZDIFF and their STORE forms ---- */

enum { OP_UNION, OP_INTER, OP_DIFF };
enum { AGG_SUM, AGG_MIN, AGG_MAX };

typedef struct src {
    const zset_t *z; /* NULL for a missing key */
    double weight;
    zset_t *owned; /* a plain set's members with score 1, built for this command */
} src_t;

/* A plain set as a sorted set whose members all score 1 (Redis accepts sets as inputs of the
 * ZUNION family). */
static zset_t *zset_of_set(const set_t *set)
{
    zset_t *z = zset_new();
    set_iter_t it;
    set_elem_t e;
    set_iter_init(&it, set);
    while (set_iter_next(&it, &e)) {
        int out;
        zset_add(z, e.p, e.len, 1.0, 0, &out, NULL);
    }
    set_iter_deinit(&it);
    return z;
}

static void free_sources(src_t *src, long long n)
{
    for (long long i = 0; i < n; i++)
        if (src[i].owned) zset_free(src[i].owned);
    xfree(src);
}

static size_t src_len(const src_t *s)
{
    return s->z ? zset_length(s->z) : 0;
}

static void aggregate(double *target, double v, int agg)
{
    if (agg == AGG_SUM) {
        *target += v;
        if (isnan(*target)) *target = 0.0;
    } else if (agg == AGG_MIN) {
        *target = v < *target ? v : *target;
    } else {
        *target = v > *target ? v : *target;
    }
}

/* Stable sort by cardinality (Redis's qsort keeps equal ones in order on glibc, and the order
 * in which scores are summed can change the last bit). */
static void sort_by_len(src_t *s, long long n)
{
    for (long long i = 1; i < n; i++) {
        src_t t = s[i];
        long long j = i;
        while (j > 0 && src_len(&s[j - 1]) > src_len(&t)) {
            s[j] = s[j - 1];
            j--;
        }
        s[j] = t;
    }
}

/* ZUNION's accumulator: member -> score, one allocation per member. */
typedef struct acc_node {
    dict_node_t dn; /* aux: member length */
    double score;
    char member[];
} acc_node_t;

static const void *acc_key(const dict_node_t *n, size_t *len)
{
    *len = n->aux;
    return ((const acc_node_t *)n)->member;
}

static void acc_free(dict_node_t *n, void *ud)
{
    xfree(n);
}

static const dict_type_t acc_type = {acc_key, acc_free};

static void acc_add(dict_t *acc, const zset_entry_t *e, double score, int agg)
{
    uint32_t h = dict_hash(e->member, e->len);
    acc_node_t *a = (acc_node_t *)dict_find(acc, e->member, e->len, h);
    if (a) {
        aggregate(&a->score, score, agg);
        return;
    }
    a = xmalloc(sizeof(*a) + e->len);
    a->dn.hash = h;
    a->dn.aux = (uint32_t)e->len;
    a->score = score;
    if (e->len) memcpy(a->member, e->member, e->len);
    dict_insert(acc, &a->dn);
}

/* Union into acc (initialized here; the caller clears it after using the views in out). */
static void op_union(src_t *src, long long n, int agg, dict_t *acc, entries_t *out)
{
    dict_init(acc, &acc_type);
    dict_expand(acc, src_len(&src[n - 1]));
    for (long long i = 0; i < n; i++) {
        zset_iter_t it;
        zset_entry_t e;
        if (!src[i].z) continue;
        zset_iter_rank(&it, src[i].z, 0, 0);
        while (zset_iter_next(&it, &e)) {
            double score = src[i].weight * e.score;
            acc_add(acc, &e, isnan(score) ? 0 : score, agg);
        }
    }
    dict_iter_t di;
    dict_node_t *d;
    dict_iter_init(&di, acc, 0);
    while ((d = dict_iter_next(&di))) {
        acc_node_t *a = (acc_node_t *)d;
        zset_entry_t e = {a->member, a->dn.aux, a->score};
        entries_push(out, &e);
    }
    dict_iter_deinit(&di);
}

/* Intersection walking the smallest source; returns the cardinality. When only counting (out
 * NULL) it stops at limit (0: no limit). */
static size_t op_inter(src_t *src, long long n, int agg, entries_t *out, long long limit)
{
    size_t card = 0;
    zset_iter_t it;
    zset_entry_t e;
    if (!src[0].z) return 0;
    zset_iter_rank(&it, src[0].z, 0, 0);
    while (zset_iter_next(&it, &e)) {
        double score = src[0].weight * e.score, v;
        if (isnan(score)) score = 0;
        long long j;
        for (j = 1; j < n; j++) {
            if (src[j].z == src[0].z)
                v = e.score;
            else if (!src[j].z || !zset_score(src[j].z, e.member, e.len, &v))
                break;
            aggregate(&score, v * src[j].weight, agg);
        }
        if (j < n) continue;
        card++;
        if (out) {
            zset_entry_t r = {e.member, e.len, score};
            entries_push(out, &r);
        } else if (limit && card >= (size_t)limit) {
            break;
        }
    }
    return card;
}

/* Members of the first source found in none of the others, in the first source's order
 * (which is already the result's order: DIFF keeps scores). */
static void op_diff(src_t *src, long long n, entries_t *out)
{
    zset_iter_t it;
    zset_entry_t e;
    double v;
    if (!src[0].z) return;
    for (long long j = 1; j < n; j++)
        if (src[j].z == src[0].z) return;
    zset_iter_rank(&it, src[0].z, 0, 0);
    while (zset_iter_next(&it, &e)) {
        long long j;
        for (j = 1; j < n; j++)
            if (src[j].z && zset_score(src[j].z, e.member, e.len, &v)) break;
        if (j == n) entries_push(out, &e);
    }
}

typedef struct setop_opts {
    int agg, withscores;
    long long limit;
} setop_opts_t;

/* Parses WEIGHTS/AGGREGATE/WITHSCORES/LIMIT from argv[j] on, as Redis does. */
static int parse_setop_opts(client_t *c, int j, src_t *src, long long n, int op, int store,
                            int card_only, setop_opts_t *o)
{
    while (j < c->argc) {
        int left = c->argc - j;
        const resp_arg_t *a = &c->argv[j];
        if (op != OP_DIFF && !card_only && left >= n + 1 && arg_is(a, "weights")) {
            j++;
            for (long long i = 0; i < n; i++, j++)
                if (arg_double_or_reply(c, &c->argv[j], &src[i].weight,
                                        "ERR weight value is not a float") < 0)
                    return -1;
        } else if (op != OP_DIFF && !card_only && left >= 2 && arg_is(a, "aggregate")) {
            const resp_arg_t *v = &c->argv[j + 1];
            if (arg_is(v, "sum"))
                o->agg = AGG_SUM;
            else if (arg_is(v, "min"))
                o->agg = AGG_MIN;
            else if (arg_is(v, "max"))
                o->agg = AGG_MAX;
            else {
                reply_syntax_error(c);
                return -1;
            }
            j += 2;
        } else if (!store && !card_only && arg_is(a, "withscores")) {
            o->withscores = 1;
            j++;
        } else if (card_only && left >= 2 && arg_is(a, "limit")) {
            if (arg_range_or_reply(c, &c->argv[j + 1], 0, LONG_MAX, &o->limit,
                                   "ERR LIMIT can't be negative") < 0)
                return -1;
            j += 2;
        } else {
            reply_syntax_error(c);
            return -1;
        }
    }
    return 0;
}

/* Reads numkeys and the source keys (as lookupKeyRead does); NULL after an error reply. */
static src_t *setop_sources(client_t *c, int numidx, long long *n)
{
    if (arg_ll_or_reply(c, &c->argv[numidx], n, NULL) < 0) return NULL;
    if (*n < 1) {
        reply_errorf(c, "ERR at least 1 input key is needed for '%s' command", c->cmd->fullname);
        return NULL;
    }
    if (*n > c->argc - (numidx + 1)) {
        reply_syntax_error(c);
        return NULL;
    }
    src_t *src = xcalloc((size_t)*n, sizeof(*src));
    for (long long i = 0; i < *n; i++) {
        const resp_arg_t *key = &c->argv[numidx + 1 + i];
        kv_t *kv = lookup_read(c, key);
        src[i].weight = 1.0;
        if (kv && kv->val->type == OBJ_SET) {
            src[i].z = src[i].owned = zset_of_set((const set_t *)(const void *)kv->val);
        } else if (kv && kv->val->type != OBJ_ZSET) {
            free_sources(src, i);
            reply_wrongtype(c);
            return NULL;
        } else {
            src[i].z = kv ? (const zset_t *)kv->val : NULL;
        }
    }
    return src;
}

static const char *const store_events[] = {"zunionstore", "zinterstore", "zdiffstore"};

static void setop_generic(client_t *c, const resp_arg_t *dst, int numidx, int op, int card_only)
{
    long long n;
    setop_opts_t o = {AGG_SUM, 0, 0};
    src_t *src = setop_sources(c, numidx, &n);
    if (!src) return;
    if (parse_setop_opts(c, numidx + 1 + (int)n, src, n, op, dst != NULL, card_only, &o) < 0) {
        free_sources(src, n);
        return;
    }
    if (op != OP_DIFF) sort_by_len(src, n);
    if (card_only) {
        reply_int(c, (long long)op_inter(src, n, o.agg, NULL, o.limit));
        free_sources(src, n);
        return;
    }
    entries_t res = {0};
    dict_t acc;
    if (op == OP_UNION)
        op_union(src, n, o.agg, &acc, &res);
    else if (op == OP_INTER)
        op_inter(src, n, o.agg, &res, 0);
    else
        op_diff(src, n, &res);
    if (op != OP_DIFF && res.n > 1) qsort(res.v, res.n, sizeof(*res.v), zsetcmd_entry_cmp);
    if (dst) {
        zsetcmd_store_result(c, dst, res.n ? zset_from_sorted(res.v, res.n) : NULL,
                             store_events[op]);
    } else {
        reply_array(c, o.withscores && c->resp == 2 ? (long long)res.n * 2 : (long long)res.n);
        for (size_t i = 0; i < res.n; i++) reply_entry(c, &res.v[i], o.withscores);
    }
    if (op == OP_UNION) dict_clear(&acc, NULL);
    xfree(res.v);
    free_sources(src, n);
}

static void zunion_cmd(client_t *c)
{
    setop_generic(c, NULL, 1, OP_UNION, 0);
}

static void zinter_cmd(client_t *c)
{
    setop_generic(c, NULL, 1, OP_INTER, 0);
}

static void zintercard_cmd(client_t *c)
{
    setop_generic(c, NULL, 1, OP_INTER, 1);
}

static void zdiff_cmd(client_t *c)
{
    setop_generic(c, NULL, 1, OP_DIFF, 0);
}

static void zunionstore_cmd(client_t *c)
{
    setop_generic(c, &c->argv[1], 2, OP_UNION, 0);
}

static void zinterstore_cmd(client_t *c)
{
    setop_generic(c, &c->argv[1], 2, OP_INTER, 0);
}

static void zdiffstore_cmd(client_t *c)
{
    setop_generic(c, &c->argv[1], 2, OP_DIFF, 0);
}

/* ---- key positions of the commands with a numkeys argument ---- */

/* atoi() of an argument, as Redis's getkeys procs read numkeys. */
static long long arg_atoi(const resp_arg_t *a)
{
    char buf[32];
    size_t n = a->len < sizeof(buf) - 1 ? a->len : sizeof(buf) - 1;
    memcpy(buf, a->ptr, n);
    buf[n] = '\0';
    return atoll(buf);
}

/* The keys counted by argv[numidx] that follow it, after argv[1] if store. */
static int numkeys_getkeys(int argc, const resp_arg_t *argv, int *pos, int max, int numidx,
                           int store)
{
    if (numidx >= argc) return 0;
    long long num = arg_atoi(&argv[numidx]);
    if (num < 1 || num > argc - numidx - 1) return 0;
    int n = 0;
    if (store && n < max) pos[n++] = 1;
    for (long long i = 0; i < num && n < max; i++) pos[n++] = numidx + 1 + (int)i;
    return n;
}

static int numkeys_at_1(int argc, const resp_arg_t *argv, int *pos, int max)
{
    return numkeys_getkeys(argc, argv, pos, max, 1, 0);
}

static int numkeys_at_2(int argc, const resp_arg_t *argv, int *pos, int max)
{
    return numkeys_getkeys(argc, argv, pos, max, 2, 0);
}

static int dst_and_numkeys_at_2(int argc, const resp_arg_t *argv, int *pos, int max)
{
    return numkeys_getkeys(argc, argv, pos, max, 2, 1);
}

/* ---- the table ---- */

#define RO CMD_READONLY
#define RW CMD_WRITE
#define MOVABLE CMD_MOVABLE_KEYS
#define GROUP "sorted-set"
#define LOGN "O(log(N)) where N is the number of elements in the sorted set."
#define RANGE_M                                                                                    \
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "       \
    "elements returned."
#define RANGE_LIMIT                                                                                \
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "       \
    "elements being returned. If M is constant (e.g. always asking for the first 10 elements "     \
    "with LIMIT), you can consider it O(log(N))."
#define REMRANGE                                                                                   \
    "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "       \
    "elements removed by the operation."
#define POP_CPLX                                                                                   \
    "O(log(N)*M) with N being the number of elements in the sorted set, and M being the "          \
    "number of elements popped."
#define UNION_CPLX                                                                                 \
    "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M "          \
    "being the number of elements in the resulting sorted set."
#define INTER_CPLX                                                                                 \
    "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the "       \
    "number of input sorted sets and M being the number of elements in the resulting sorted "      \
    "set."
#define DIFF_CPLX                                                                                  \
    "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, "      \
    "N is the size of the first set, and K is the size of the result set."

static const cmd_key_spec_t keynum_at_1[] = {CMD_KEYNUM_SPEC(1), {0}};
static const cmd_key_spec_t keynum_at_2[] = {CMD_KEYNUM_SPEC(2), {0}};
static const cmd_key_spec_t dst_keynum_at_2[] = {{1, NULL, 0, 1}, CMD_KEYNUM_SPEC(2), {0}};

command_t cmds_zset[] = {
    CMD_ROW(
        "zadd", zadd_cmd, -4, RW | CMD_DENYOOM | CMD_FAST, 1, 1, 1, GROUP, "1.2.0",
        "Adds one or more members to a sorted set, or updates their scores. Creates the key if it "
        "doesn't exist.",
        "O(log(N)) for each item added, where N is the number of elements in the sorted set."),
    CMD_ROW("zincrby", zincrby_cmd, 4, RW | CMD_DENYOOM | CMD_FAST, 1, 1, 1, GROUP, "1.2.0",
            "Increments the score of a member in a sorted set.", LOGN,
            .key_flags = "RW access update"),
    CMD_ROW("zrem", zrem_cmd, -3, RW | CMD_FAST, 1, 1, 1, GROUP, "1.2.0",
            "Removes one or more members from a sorted set. Deletes the sorted set if all members "
            "were removed.",
            "O(M*log(N)) with N being the number of elements in the sorted set and M the number of "
            "elements to be removed.", .key_flags = "RW delete"),
    CMD_ROW("zscore", zscore_cmd, 3, RO | CMD_FAST, 1, 1, 1, GROUP, "1.2.0",
            "Returns the score of a member in a sorted set.", "O(1)"),
    CMD_ROW("zmscore", zmscore_cmd, -3, RO | CMD_FAST, 1, 1, 1, GROUP, "6.2.0",
            "Returns the score of one or more members in a sorted set.",
            "O(N) where N is the number of members being requested."),
    CMD_ROW("zcard", zcard_cmd, 2, RO | CMD_FAST, 1, 1, 1, GROUP, "1.2.0",
            "Returns the number of members in a sorted set.", "O(1)", .key_flags = "RO"),
    CMD_ROW("zcount", zcount_cmd, 4, RO | CMD_FAST, 1, 1, 1, GROUP, "2.0.0",
            "Returns the count of members in a sorted set that have scores within a range.",
            "O(log(N)) with N being the number of elements in the sorted set."),
    CMD_ROW("zlexcount", zlexcount_cmd, 4, RO | CMD_FAST, 1, 1, 1, GROUP, "2.8.9",
            "Returns the number of members in a sorted set within a lexicographical range.",
            "O(log(N)) with N being the number of elements in the sorted set."),
    CMD_ROW("zrank", zrank_cmd, 3, RO | CMD_FAST, 1, 1, 1, GROUP, "2.0.0",
            "Returns the index of a member in a sorted set ordered by ascending scores.",
            "O(log(N))"),
    CMD_ROW("zrevrank", zrevrank_cmd, 3, RO | CMD_FAST, 1, 1, 1, GROUP, "2.0.0",
            "Returns the index of a member in a sorted set ordered by descending scores.",
            "O(log(N))"),
    CMD_ROW("zrange", zrange_cmd, -4, RO, 1, 1, 1, GROUP, "1.2.0",
            "Returns members in a sorted set within a range of indexes.", RANGE_M),
    CMD_ROW("zrangestore", zrangestore_cmd, -5, RW | CMD_DENYOOM, 1, 2, 1, GROUP, "6.2.0",
            "Stores a range of members from sorted set in a key.",
            "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
            "elements stored into the destination key.", .key_flags = "OW update|RO access"),
    CMD_ROW("zrangebyscore", zrangebyscore_cmd, -4, RO, 1, 1, 1, GROUP, "1.0.5",
            "Returns members in a sorted set within a range of scores.", RANGE_LIMIT),
    CMD_ROW("zrevrangebyscore", zrevrangebyscore_cmd, -4, RO, 1, 1, 1, GROUP, "2.2.0",
            "Returns members in a sorted set within a range of scores in reverse order.",
            RANGE_LIMIT),
    CMD_ROW("zrangebylex", zrangebylex_cmd, -4, RO, 1, 1, 1, GROUP, "2.8.9",
            "Returns members in a sorted set within a lexicographical range.", RANGE_LIMIT),
    CMD_ROW("zrevrangebylex", zrevrangebylex_cmd, -4, RO, 1, 1, 1, GROUP, "2.8.9",
            "Returns members in a sorted set within a lexicographical range in reverse order.",
            RANGE_LIMIT),
    CMD_ROW("zrevrange", zrevrange_cmd, -4, RO, 1, 1, 1, GROUP, "1.2.0",
            "Returns members in a sorted set within a range of indexes in reverse order.", RANGE_M),
    CMD_ROW("zpopmin", zpopmin_cmd, -2, RW | CMD_FAST, 1, 1, 1, GROUP, "5.0.0",
            "Returns the lowest-scoring members from a sorted set after removing them. Deletes the "
            "sorted set if the last member was popped.",
            POP_CPLX, .key_flags = "RW access delete"),
    CMD_ROW(
        "zpopmax", zpopmax_cmd, -2, RW | CMD_FAST, 1, 1, 1, GROUP, "5.0.0",
        "Returns the highest-scoring members from a sorted set after removing them. Deletes the "
        "sorted set if the last member was popped.",
        POP_CPLX, .key_flags = "RW access delete"),
    CMD_ROW("bzpopmin", bzpopmin_cmd, -3, RW | CMD_NOSCRIPT | CMD_FAST | CMD_BLOCKING, 1, -2, 1,
            GROUP, "5.0.0",
            "Removes and returns the member with the lowest score from one or more sorted sets. "
            "Blocks until a member is available otherwise. Deletes the sorted set if the last "
            "element was popped.",
            "O(log(N)) with N being the number of elements in the sorted set.",
            .key_flags = "RW access delete"),
    CMD_ROW(
        "bzpopmax", bzpopmax_cmd, -3, RW | CMD_NOSCRIPT | CMD_FAST | CMD_BLOCKING, 1, -2, 1, GROUP,
        "5.0.0",
        "Removes and returns the member with the highest score from one or more sorted sets. "
        "Blocks until a member available otherwise.  Deletes the sorted set if the last element "
        "was popped.",
        "O(log(N)) with N being the number of elements in the sorted set.",
        .key_flags = "RW access delete"),
    CMD_ROW("bzmpop", bzmpop_cmd, -5, RW | MOVABLE | CMD_BLOCKING, 0, 0, 0, GROUP, "7.0.0",
            "Removes and returns a member by score from one or more sorted sets. Blocks until a "
            "member is available otherwise. Deletes the sorted set if the last element was popped.",
            "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of "
            "elements in the sorted set, and M being the number of elements popped.",
            .getkeys = numkeys_at_2, .key_flags = "RW access delete", .key_specs = keynum_at_2),
    CMD_ROW("zmpop", zmpop_cmd, -4, RW | MOVABLE, 0, 0, 0, GROUP, "7.0.0",
            "Returns the highest- or lowest-scoring members from one or more sorted sets after "
            "removing them. Deletes the sorted set if the last member was popped.",
            "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of "
            "elements in the sorted set, and M being the number of elements popped.",
            .getkeys = numkeys_at_1, .key_flags = "RW access delete", .key_specs = keynum_at_1),
    CMD_ROW("zrandmember", zrandmember_cmd, -2, RO, 1, 1, 1, GROUP, "6.2.0",
            "Returns one or more random members from a sorted set.",
            "O(N) where N is the number of elements returned"),
    CMD_ROW("zunion", zunion_cmd, -3, RO | MOVABLE, 0, 0, 0, GROUP, "6.2.0",
            "Returns the union of multiple sorted sets.", UNION_CPLX, .getkeys = numkeys_at_1,
            .key_flags = "RO access", .key_specs = keynum_at_1),
    CMD_ROW("zinter", zinter_cmd, -3, RO | MOVABLE, 0, 0, 0, GROUP, "6.2.0",
            "Returns the intersect of multiple sorted sets.", INTER_CPLX, .getkeys = numkeys_at_1,
            .key_flags = "RO access", .key_specs = keynum_at_1),
    CMD_ROW("zintercard", zintercard_cmd, -3, RO | MOVABLE, 0, 0, 0, GROUP, "7.0.0",
            "Returns the number of members of the intersect of multiple sorted sets.",
            "O(N*K) worst case with N being the smallest input sorted set, K being the number of "
            "input sorted sets.",
            .getkeys = numkeys_at_1, .key_flags = "RO access", .key_specs = keynum_at_1),
    CMD_ROW("zdiff", zdiff_cmd, -3, RO | MOVABLE, 0, 0, 0, GROUP, "6.2.0",
            "Returns the difference between multiple sorted sets.", DIFF_CPLX,
            .getkeys = numkeys_at_1, .key_flags = "RO access", .key_specs = keynum_at_1),
    CMD_ROW("zunionstore", zunionstore_cmd, -4, RW | CMD_DENYOOM | MOVABLE, 1, 1, 1, GROUP, "2.0.0",
            "Stores the union of multiple sorted sets in a key.",
            "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M "
            "being the number of elements in the resulting sorted set.",
            .getkeys = dst_and_numkeys_at_2,
            .key_flags = "OW update|RO access", .key_specs = dst_keynum_at_2),
    CMD_ROW("zinterstore", zinterstore_cmd, -4, RW | CMD_DENYOOM | MOVABLE, 1, 1, 1, GROUP, "2.0.0",
            "Stores the intersect of multiple sorted sets in a key.", INTER_CPLX,
            .getkeys = dst_and_numkeys_at_2,
            .key_flags = "OW update|RO access", .key_specs = dst_keynum_at_2),
    CMD_ROW("zdiffstore", zdiffstore_cmd, -4, RW | CMD_DENYOOM | MOVABLE, 1, 1, 1, GROUP, "6.2.0",
            "Stores the difference of multiple sorted sets in a key.", DIFF_CPLX,
            .getkeys = dst_and_numkeys_at_2,
            .key_flags = "OW update|RO access", .key_specs = dst_keynum_at_2),
    CMD_ROW(
        "zremrangebyscore", zremrangebyscore_cmd, 4, RW, 1, 1, 1, GROUP, "1.2.0",
        "Removes members in a sorted set within a range of scores. Deletes the sorted set if all "
        "members were removed.",
        REMRANGE, .key_flags = "RW delete"),
    CMD_ROW(
        "zremrangebyrank", zremrangebyrank_cmd, 4, RW, 1, 1, 1, GROUP, "2.0.0",
        "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all "
        "members were removed.",
        REMRANGE, .key_flags = "RW delete"),
    CMD_ROW(
        "zremrangebylex", zremrangebylex_cmd, 4, RW, 1, 1, 1, GROUP, "2.8.9",
        "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if "
        "all members were removed.",
        REMRANGE, .key_flags = "RW delete"),
    CMD_ROW(
        "zscan", zscan_cmd, -3, RO, 1, 1, 1, GROUP, "2.8.0",
        "Iterates over members and scores of a sorted set.",
        "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
        "the cursor to return back to 0. N is the number of elements inside the collection.." /* sic,
        as Redis 7.0 */),
    {NULL},
};
