/* server/cmd/set.c - the set commands: SADD SREM SMEMBERS SISMEMBER SMISMEMBER SCARD SPOP
 * SRANDMEMBER SMOVE SINTER SINTERCARD SUNION SDIFF SINTERSTORE SUNIONSTORE SDIFFSTORE SSCAN.
 *
 * Replies, errors, the order in which arguments are checked, keyspace events and srv.dirty
 * are Redis 7.0's (t_set.c): SMEMBERS, SINTER, SUNION, SDIFF and SPOP with a count reply a set
 * ('~' in RESP3), SRANDMEMBER with a count and SMISMEMBER an array. The data structure is
 * storage/t_set.h; this file parses arguments and shapes replies.
 *
 * Shape: the algorithms are Redis's, step for step, because they decide the reply order where
 * Redis defines one: results of SUNION/SDIFF (and SPOP taking the whole set) are built in a
 * new set that starts as an intset, so integer results come back sorted exactly when Redis's
 * do; SINTER replies in the order of the smallest source; SPOP with a count keeps the
 * remaining members in a new set when it takes most of them (which can turn a hashtable set
 * back into an intset, as in Redis). Where Redis's order comes from its own hash function, the
 * members are the same but the order is ours.
 *
 * Reads count keyspace hits and misses (and publish "keymiss") where Redis's lookupKeyRead
 * does, a key of the wrong type counting as a hit; writes do not. Every change goes through
 * server_key_changed(); commands that Redis counts more than once in server.dirty set
 * srv.dirty to Redis's total. SPOP is logged to the append-only file as SREM of the members it
 * took (or DEL), as Redis propagates it, since a replayed SPOP would pick others. Runs on the
 * loop thread. */
#include "common/alloc.h"
#include "common/glob.h"
#include "common/util.h"
#include "server/persist/aof.h"
#include "server/command.h"
#include "server/multi.h"
#include "server/pubsub.h"
#include "server/reply.h"
#include "server/server.h"
#include "storage/t_set.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* SPOP keeps the remaining members in a new set when at most count/5 remain (Redis's
 * SPOP_MOVE_STRATEGY_MUL); SRANDMEMBER copies the set and removes members when count is
 * more than a third of it (SRANDMEMBER_SUB_STRATEGY_MUL). */
#define SPOP_MOVE_MUL 5
#define SRANDMEMBER_SUB_MUL 3

/* ---- lookups, events, replies ---- */

static inline set_t *as_set(kv_t *kv)
{
    return (set_t *)(void *)kv->val;
}

static void changed(client_t *c, const resp_arg_t *key, const char *event)
{
    server_key_changed(c, c->db, key->ptr, key->len, NOTIFY_SET, event);
}

static void deleted(client_t *c, const resp_arg_t *key)
{
    server_key_changed(c, c->db, key->ptr, key->len, NOTIFY_GENERIC, "del");
}

static inline void reply_elem(client_t *c, const set_elem_t *e)
{
    reply_bulk(c, e->p, e->len);
}

/* Replies every member of s as a set ('~' in RESP3), in iteration order. */
static void reply_members(client_t *c, const set_t *s)
{
    set_iter_t it;
    set_elem_t e;
    reply_set(c, (long long)set_length(s));
    set_iter_init(&it, s);
    while (!reply_stopped(c) && set_iter_next(&it, &e)) reply_elem(c, &e);
    set_iter_deinit(&it);
}

/* Stores a non-empty result under key (the old value of any type and its TTL go), or deletes
 * the key when the result is empty; replies with the result's size, as Redis's *STORE do. */
static void store_result(client_t *c, const resp_arg_t *key, set_t *s, const char *event)
{
    size_t n = set_length(s);
    if (n) {
        db_set(c->db, key->ptr, key->len, &s->h, 0);
        reply_int(c, (long long)n);
        changed(c, key, event);
        return;
    }
    set_free(s);
    reply_int(c, 0);
    if (db_delete(c->db, key->ptr, key->len)) deleted(c, key);
}

/* ---- SADD SREM SMOVE ---- */

static void sadd_cmd(client_t *c)
{
    const resp_arg_t *key = &c->argv[1];
    long long added = 0, dirty = srv.dirty;
    int err;
    kv_t *kv = lookup_write_type(c, key, OBJ_SET, &err);
    if (err) return;
    if (!kv) {
        set_t *s = set_new_for(c->argv[2].ptr, c->argv[2].len);
        kv = db_add(c->db, key->ptr, key->len, &s->h);
    }
    set_t *s = as_set(kv);
    for (int j = 2; j < c->argc; j++) added += set_add(s, c->argv[j].ptr, c->argv[j].len);
    if (added) changed(c, key, "sadd");
    srv.dirty = dirty + added;
    reply_int(c, added);
}

static void srem_cmd(client_t *c)
{
    const resp_arg_t *key = &c->argv[1];
    long long removed = 0, dirty = srv.dirty;
    int err, key_removed = 0;
    kv_t *kv = lookup_write_type(c, key, OBJ_SET, &err);
    if (err) return;
    if (!kv) {
        reply_int(c, 0);
        return;
    }
    set_t *s = as_set(kv);
    for (int j = 2; j < c->argc; j++) {
        if (!set_remove(s, c->argv[j].ptr, c->argv[j].len)) continue;
        removed++;
        if (set_length(s) == 0) {
            db_delete_kv(c->db, kv);
            key_removed = 1;
            break;
        }
    }
    if (removed) {
        changed(c, key, "srem");
        if (key_removed) deleted(c, key);
        srv.dirty = dirty + removed;
    }
    reply_int(c, removed);
}

static void smove_cmd(client_t *c)
{
    const resp_arg_t *src = &c->argv[1], *dst = &c->argv[2], *m = &c->argv[3];
    kv_t *skv = lookup_write(c, src), *dkv = lookup_write(c, dst);
    long long dirty = srv.dirty;
    if (!skv) {
        reply_int(c, 0);
        return;
    }
    if (skv->val->type != OBJ_SET || (dkv && dkv->val->type != OBJ_SET)) {
        reply_wrongtype(c);
        return;
    }
    if (skv == dkv) {
        reply_int(c, set_contains(as_set(skv), m->ptr, m->len));
        return;
    }
    if (!set_remove(as_set(skv), m->ptr, m->len)) {
        reply_int(c, 0);
        return;
    }
    changed(c, src, "srem");
    if (set_length(as_set(skv)) == 0) {
        db_delete_kv(c->db, skv);
        deleted(c, src);
    }
    if (!dkv) dkv = db_add(c->db, dst->ptr, dst->len, &set_new_for(m->ptr, m->len)->h);
    if (set_add(as_set(dkv), m->ptr, m->len)) {
        changed(c, dst, "sadd");
        srv.dirty = dirty + 2;
    } else {
        srv.dirty = dirty + 1; /* dst already had it: unchanged, WATCH on it holds (Redis 7.0) */
    }
    reply_int(c, 1);
}

/* ---- SISMEMBER SMISMEMBER SCARD SMEMBERS ---- */

static void sismember_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_SET, &err);
    if (err) return;
    reply_int(c, kv && set_contains(as_set(kv), c->argv[2].ptr, c->argv[2].len));
}

static void smismember_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_SET, &err);
    if (err) return;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++)
        reply_int(c, kv && set_contains(as_set(kv), c->argv[j].ptr, c->argv[j].len));
}

static void scard_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_SET, &err);
    if (err) return;
    reply_int(c, kv ? (long long)set_length(as_set(kv)) : 0);
}

static void smembers_cmd(client_t *c)
{
    int err;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_SET, &err);
    if (err) return;
    if (!kv) {
        reply_set(c, 0);
        return;
    }
    if (reply_fits_or_reply(c, set_length(as_set(kv)), REPLY_MIN_BULK) < 0) return;
    reply_members(c, as_set(kv));
}

/* ---- set operations ---- */

enum { OP_UNION, OP_DIFF };

typedef struct src {
    set_t *s; /* NULL for a missing key */
    size_t idx;
} src_t;

/* Reads n source keys as lookupKeyRead does; a missing key is NULL. Returns -1 after replying
 * WRONGTYPE for the first key of another type. */
static int read_sources(client_t *c, const resp_arg_t *keys, long long n, src_t *src)
{
    for (long long j = 0; j < n; j++) {
        int err;
        kv_t *kv = lookup_read_type(c, &keys[j], OBJ_SET, &err);
        if (err) return -1;
        src[j].s = kv ? as_set(kv) : NULL;
        src[j].idx = (size_t)j;
    }
    return 0;
}

static size_t src_len(const src_t *a)
{
    return a->s ? set_length(a->s) : 0;
}

/* Ascending size, ties in argument order (glibc's qsort, which Redis uses, is stable here). */
static int by_size(const void *pa, const void *pb)
{
    const src_t *a = pa, *b = pb;
    size_t la = src_len(a), lb = src_len(b);
    if (la != lb) return la < lb ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Descending size with missing keys last, ties in argument order. */
static int by_size_desc(const void *pa, const void *pb)
{
    const src_t *a = pa, *b = pb;
    if (!a->s || !b->s) {
        if (a->s || b->s) return a->s ? -1 : 1;
        return a->idx < b->idx ? -1 : a->idx > b->idx;
    }
    size_t la = set_length(a->s), lb = set_length(b->s);
    if (la != lb) return la > lb ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Redis's sinterGenericCommand once every source exists: iterates the smallest set and keeps
 * the members that every other set has. */
static void inter_run(client_t *c, src_t *src, long long n, const resp_arg_t *dst, int card_only,
                      unsigned long long limit)
{
    qsort(src, (size_t)n, sizeof(*src), by_size);
    set_t *out = dst ? set_new(ENC_INTSET) : NULL, *first = src[0].s;
    size_t handle = (!dst && !card_only) ? reply_defer(c) : 0;
    unsigned long long card = 0;
    set_iter_t it;
    set_elem_t e;
    set_iter_init(&it, first);
    while (set_iter_next(&it, &e)) {
        long long j;
        for (j = 1; j < n; j++) {
            if (src[j].s == first) continue;
            if (!set_contains_elem(src[j].s, &e)) break;
        }
        if (j < n) continue;
        if (card_only) {
            if (++card >= limit && limit) break;
        } else if (!dst) {
            reply_elem(c, &e);
            card++;
        } else {
            set_add_elem(out, &e);
        }
    }
    set_iter_deinit(&it);
    if (card_only)
        reply_int(c, (long long)card);
    else if (dst)
        store_result(c, dst, out, "sinterstore");
    else
        reply_defer_finish(c, handle, '~', (long long)card);
}

/* Replies the intersection (dst NULL, !card_only), its size (card_only, stopping at limit
 * when limit > 0), or stores it in dst. A missing source makes the result empty at once. */
static void inter_generic(client_t *c, const resp_arg_t *keys, long long n, const resp_arg_t *dst,
                          int card_only, unsigned long long limit)
{
    src_t *src = xmalloc((size_t)n * sizeof(*src));
    int missing = 0;
    if (read_sources(c, keys, n, src) < 0) {
        xfree(src);
        return;
    }
    for (long long j = 0; j < n; j++) missing |= !src[j].s;
    if (!missing) {
        inter_run(c, src, n, dst, card_only, limit);
    } else if (dst) {
        reply_int(c, 0);
        if (db_delete(c->db, dst->ptr, dst->len)) deleted(c, dst);
    } else if (card_only) {
        reply_int(c, 0);
    } else {
        reply_set(c, 0);
    }
    xfree(src);
}

/* DIFF as Redis's algorithm 1: members of the first set found in none of the others. */
static void diff_by_lookup(src_t *src, long long n, set_t *out)
{
    set_iter_t it;
    set_elem_t e;
    set_iter_init(&it, src[0].s);
    while (set_iter_next(&it, &e)) {
        long long j;
        for (j = 1; j < n; j++) {
            if (!src[j].s) continue;
            if (src[j].s == src[0].s || set_contains_elem(src[j].s, &e)) break;
        }
        if (j == n) set_add_elem(out, &e);
    }
    set_iter_deinit(&it);
}

/* DIFF as Redis's algorithm 2: the first set, minus every member of the others. */
static void diff_by_removal(src_t *src, long long n, set_t *out)
{
    size_t card = 0;
    for (long long j = 0; j < n; j++) {
        if (!src[j].s) continue;
        set_iter_t it;
        set_elem_t e;
        set_iter_init(&it, src[j].s);
        while (set_iter_next(&it, &e)) {
            if (j == 0)
                card += (size_t)set_add_elem(out, &e);
            else
                card -= (size_t)set_remove_elem(out, &e);
        }
        set_iter_deinit(&it);
        if (card == 0) break;
    }
}

static void diff_into(src_t *src, long long n, set_t *out)
{
    if (!src[0].s) return;
    long long one = 0, two = 0;
    for (long long j = 1; j < n; j++)
        if (src[j].s == src[0].s) return; /* a set minus itself: empty */
    for (long long j = 0; j < n; j++) {
        if (!src[j].s) continue;
        one += (long long)set_length(src[0].s);
        two += (long long)set_length(src[j].s);
    }
    if (one / 2 > two) {
        diff_by_removal(src, n, out);
        return;
    }
    if (n > 1) qsort(src + 1, (size_t)n - 1, sizeof(*src), by_size_desc);
    diff_by_lookup(src, n, out);
}

/* The union or difference of n sets, built as Redis builds it (a new intset set that
 * converts as members come), so that the result's order is Redis's where Redis's is
 * defined. */
static set_t *union_diff_build(src_t *src, long long n, int op)
{
    set_t *out = set_new(ENC_INTSET);
    if (op == OP_DIFF) {
        diff_into(src, n, out);
        return out;
    }
    for (long long j = 0; j < n; j++) {
        if (!src[j].s) continue;
        set_iter_t it;
        set_elem_t e;
        set_iter_init(&it, src[j].s);
        while (set_iter_next(&it, &e)) set_add_elem(out, &e);
        set_iter_deinit(&it);
    }
    return out;
}

/* Redis's sunionDiffGenericCommand. */
static void union_diff_generic(client_t *c, const resp_arg_t *keys, long long n,
                               const resp_arg_t *dst, int op)
{
    src_t *src = xmalloc((size_t)n * sizeof(*src));
    if (read_sources(c, keys, n, src) == 0) {
        set_t *out = union_diff_build(src, n, op);
        if (dst) {
            store_result(c, dst, out, op == OP_UNION ? "sunionstore" : "sdiffstore");
        } else {
            reply_members(c, out);
            set_free(out);
        }
    }
    xfree(src);
}

static void sinter_cmd(client_t *c)
{
    inter_generic(c, &c->argv[1], c->argc - 1, NULL, 0, 0);
}

static void sinterstore_cmd(client_t *c)
{
    inter_generic(c, &c->argv[2], c->argc - 2, &c->argv[1], 0, 0);
}

static void sunion_cmd(client_t *c)
{
    union_diff_generic(c, &c->argv[1], c->argc - 1, NULL, OP_UNION);
}

static void sunionstore_cmd(client_t *c)
{
    union_diff_generic(c, &c->argv[2], c->argc - 2, &c->argv[1], OP_UNION);
}

static void sdiff_cmd(client_t *c)
{
    union_diff_generic(c, &c->argv[1], c->argc - 1, NULL, OP_DIFF);
}

static void sdiffstore_cmd(client_t *c)
{
    union_diff_generic(c, &c->argv[2], c->argc - 2, &c->argv[1], OP_DIFF);
}

static void sintercard_cmd(client_t *c)
{
    long long numkeys, limit = 0;
    if (arg_range_or_reply(c, &c->argv[1], 1, LLONG_MAX, &numkeys,
                           "ERR numkeys should be greater than 0") < 0)
        return;
    if (numkeys > c->argc - 2) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)numkeys; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(&c->argv[j], "limit") && more) {
            j++;
            if (arg_range_or_reply(c, &c->argv[j], 0, LLONG_MAX, &limit,
                                   "ERR LIMIT can't be negative") < 0)
                return;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    inter_generic(c, &c->argv[2], numkeys, NULL, 1, (unsigned long long)limit);
}

/* ---- SPOP SRANDMEMBER ---- */

/* SPOP's reply when it takes the whole set: Redis replies the union of the set alone, a new
 * set whose order can differ from the source's (a hashtable of few integers comes back as a
 * sorted intset). A larger hashtable stays a hashtable, whose order is ours anyway. */
static void reply_whole_set(client_t *c, set_t *s)
{
    if (s->h.enc == ENC_HT && set_length(s) > storage_params.set_max_intset_entries) {
        reply_members(c, s);
        return;
    }
    src_t one = {s, 0};
    set_t *copy = union_diff_build(&one, 1, OP_UNION);
    reply_members(c, copy);
    set_free(copy);
}

/* What SPOP logs: SREM key member... in batches of SREM_BATCH members. */
#define SREM_BATCH 512
typedef struct srem_log {
    const resp_arg_t *key;
    buf_t bytes;
    size_t off[SREM_BATCH], len[SREM_BATCH];
    int n;
} srem_log_t;

static void srem_flush(client_t *c, srem_log_t *l)
{
    if (!l->n) return;
    resp_arg_t argv[SREM_BATCH + 2] = {{"SREM", 4}, *l->key};
    for (int i = 0; i < l->n; i++) argv[2 + i] = (resp_arg_t){l->bytes.data + l->off[i], l->len[i]};
    aof_replace_argv(c, l->n + 2, argv);
    buf_clear(&l->bytes);
    l->n = 0;
}

static void srem_add(client_t *c, srem_log_t *l, const set_elem_t *e)
{
    l->off[l->n] = l->bytes.len;
    l->len[l->n++] = e->len;
    buf_append(&l->bytes, e->p, e->len);
    if (l->n == SREM_BATCH) srem_flush(c, l);
}

/* SPOP key count, for count < size: pops count members into the reply. */
static void spop_some(client_t *c, kv_t *kv, unsigned long long count)
{
    set_t *s = as_set(kv);
    unsigned long long remaining = set_length(s) - count;
    set_elem_t e;
    srem_log_t *log = xmalloc(sizeof(*log));
    log->key = &c->argv[1];
    log->n = 0;
    buf_init(&log->bytes);
    reply_set(c, (long long)count);
    if (remaining * SPOP_MOVE_MUL > count) {
        while (count--) {
            set_random(s, &e);
            reply_elem(c, &e);
            srem_add(c, log, &e);
            set_remove_elem(s, &e);
        }
        goto done;
    }
    /* Most members go: move the few that stay to a new set and reply the old one. */
    set_t *keep = NULL;
    while (remaining--) {
        set_random(s, &e);
        if (!keep) keep = set_new_for(e.p, e.len);
        set_add_elem(keep, &e);
        set_remove_elem(s, &e);
    }
    set_iter_t it;
    set_iter_init(&it, s);
    while (set_iter_next(&it, &e)) {
        reply_elem(c, &e);
        srem_add(c, log, &e);
    }
    set_iter_deinit(&it);
    db_replace_value(c->db, kv, &keep->h);
done:
    srem_flush(c, log);
    buf_deinit(&log->bytes);
    xfree(log);
}

static void spop_count(client_t *c)
{
    const resp_arg_t *key = &c->argv[1];
    long long count, dirty = srv.dirty;
    int err;
    if (arg_range_or_reply(c, &c->argv[2], 0, LLONG_MAX, &count, ERR_NOT_POSITIVE) < 0) return;
    kv_t *kv = lookup_write_type(c, key, OBJ_SET, &err);
    if (err) return;
    if (!kv || count == 0) {
        reply_set(c, 0);
        return;
    }
    set_t *s = as_set(kv);
    size_t size = set_length(s);
    if ((unsigned long long)count >= size) {
        reply_whole_set(c, s);
        aof_replace_argv(c, 2, (resp_arg_t[]){{"DEL", 3}, *key});
        db_delete_kv(c->db, kv);
        changed(c, key, "spop");
        deleted(c, key);
        srv.dirty = dirty + (long long)size; /* Redis counts the members popped */
        return;
    }
    spop_some(c, kv, (unsigned long long)count);
    changed(c, key, "spop");
    srv.dirty = dirty + count;
}

static void spop_cmd(client_t *c)
{
    const resp_arg_t *key = &c->argv[1];
    long long dirty = srv.dirty;
    int err;
    if (c->argc == 3) {
        spop_count(c);
        return;
    }
    if (c->argc > 3) {
        reply_syntax_error(c);
        return;
    }
    kv_t *kv = lookup_write_type(c, key, OBJ_SET, &err);
    if (err) return;
    if (!kv) {
        reply_null(c);
        return;
    }
    set_t *s = as_set(kv);
    set_elem_t e;
    set_random(s, &e);
    reply_elem(c, &e);
    aof_replace_argv(c, 3, (resp_arg_t[]){{"SREM", 4}, *key, {e.p, e.len}});
    set_remove_elem(s, &e);
    changed(c, key, "spop");
    if (set_length(s) == 0) {
        db_delete_kv(c->db, kv);
        deleted(c, key);
    }
    srv.dirty = dirty + 1;
}

/* Replies the members of s as an array. */
static void reply_members_array(client_t *c, const set_t *s, size_t n)
{
    set_iter_t it;
    set_elem_t e;
    reply_array(c, (long long)n);
    set_iter_init(&it, s);
    while (set_iter_next(&it, &e)) reply_elem(c, &e);
    set_iter_deinit(&it);
}

/* SRANDMEMBER key count for 1 < count < size: count distinct members, in no set order. */
static void srandmember_distinct(client_t *c, const set_t *s, unsigned long long count)
{
    size_t size = set_length(s);
    set_elem_t e;
    set_t *pick;
    if (count * SRANDMEMBER_SUB_MUL > size) {
        /* Close to the whole set: copy it and drop members at random. */
        pick = set_dup(s);
        for (; size > count; size--) {
            set_random(pick, &e);
            set_remove_elem(pick, &e);
        }
    } else {
        pick = set_new(s->h.enc);
        for (unsigned long long added = 0; added < count;) {
            set_random(s, &e);
            added += (unsigned long long)set_add_elem(pick, &e);
        }
    }
    reply_members_array(c, pick, (size_t)count);
    set_free(pick);
}

static void srandmember_count(client_t *c)
{
    long long l;
    int err;
    if (arg_ll_or_reply(c, &c->argv[2], &l, NULL) < 0) return;
    if (l == LLONG_MIN) {
        reply_errorf(c, "ERR value is out of range, value must between %lld and %lld", -LLONG_MAX,
                     LLONG_MAX);
        return;
    }
    int uniq = l >= 0;
    unsigned long long count = (unsigned long long)(l >= 0 ? l : -l);
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_SET, &err);
    if (err) return;
    if (!kv || count == 0) {
        reply_array(c, 0);
        return;
    }
    set_t *s = as_set(kv);
    set_elem_t e;
    size_t size = set_length(s);
    if (reply_fits_or_reply(c, uniq && count > size ? size : count, REPLY_MIN_BULK) < 0) return;
    if (!uniq || count == 1) {
        reply_array(c, (long long)count);
        while (count-- && !reply_stopped(c)) {
            set_random(s, &e);
            reply_elem(c, &e);
        }
        return;
    }
    if (count >= set_length(s)) {
        reply_members_array(c, s, set_length(s));
        return;
    }
    srandmember_distinct(c, s, count);
}

static void srandmember_cmd(client_t *c)
{
    int err;
    if (c->argc == 3) {
        srandmember_count(c);
        return;
    }
    if (c->argc > 3) {
        reply_syntax_error(c);
        return;
    }
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_SET, &err);
    if (err) return;
    if (!kv) {
        reply_null(c);
        return;
    }
    set_elem_t e;
    set_random(as_set(kv), &e);
    reply_elem(c, &e);
}

/* ---- SSCAN ---- */

typedef struct scan_out {
    const char **p;
    size_t *len;
    size_t n, cap;
} scan_out_t;

/* Keeps a hashtable member (a view into the set) that matches the pattern. */
static void scan_collect(void *ud, const set_elem_t *e)
{
    scan_out_t *o = ud;
    if (o->n == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 16;
        o->p = xrealloc(o->p, o->cap * sizeof(*o->p));
        o->len = xrealloc(o->len, o->cap * sizeof(*o->len));
    }
    o->p[o->n] = e->p;
    o->len[o->n++] = e->len;
}

static int scan_match(const resp_arg_t *pat, const set_elem_t *e)
{
    return !pat || strglob_match(pat->ptr, pat->len, e->p, e->len, 0);
}

/* An intset comes back whole, with cursor 0, as Redis returns it. */
static void sscan_intset(client_t *c, const set_t *s, const resp_arg_t *pat)
{
    set_iter_t it;
    set_elem_t e;
    long long n = 0;
    reply_array(c, 2);
    reply_bulk(c, "0", 1);
    size_t handle = reply_defer(c);
    set_iter_init(&it, s);
    while (set_iter_next(&it, &e)) {
        if (!scan_match(pat, &e)) continue;
        reply_elem(c, &e);
        n++;
    }
    set_iter_deinit(&it);
    reply_defer_finish(c, handle, '*', n);
}

static void sscan_cmd(client_t *c)
{
    uint64_t cursor;
    long long count = 10;
    const resp_arg_t *pat = NULL;
    int err;
    if (scan_cursor_or_reply(c, &c->argv[2], &cursor) < 0) return;
    kv_t *kv = lookup_read_type(c, &c->argv[1], OBJ_SET, &err);
    if (err) return;
    if (!kv) {
        reply_proto(c, "*2\r\n$1\r\n0\r\n*0\r\n", 15);
        return;
    }
    if (scan_count_match_or_reply(c, 3, &count, &pat) < 0) return;
    set_t *s = as_set(kv);
    if (s->h.enc == ENC_INTSET) {
        sscan_intset(c, s, pat);
        return;
    }
    scan_out_t got = {0};
    long long maxiter = count > LLONG_MAX / 10 ? LLONG_MAX : count * 10;
    do {
        cursor = set_scan(s, cursor, scan_collect, &got);
    } while (cursor && maxiter-- && got.n < (unsigned long long)count);
    size_t kept = 0;
    for (size_t i = 0; i < got.n; i++) {
        if (pat && !strglob_match(pat->ptr, pat->len, got.p[i], got.len[i], 0)) continue;
        got.p[kept] = got.p[i];
        got.len[kept++] = got.len[i];
    }
    char buf[24];
    reply_array(c, 2);
    reply_bulk(c, buf, ull_to_str(buf, cursor));
    reply_array(c, (long long)kept);
    for (size_t i = 0; i < kept; i++) reply_bulk(c, got.p[i], got.len[i]);
    xfree(got.p);
    xfree(got.len);
}

/* ---- key positions of SINTERCARD ---- */

/* atoi() of an argument, as Redis's getkeys procs read numkeys. */
static long long arg_atoi(const resp_arg_t *a)
{
    char buf[32];
    size_t n = a->len < sizeof(buf) - 1 ? a->len : sizeof(buf) - 1;
    memcpy(buf, a->ptr, n);
    buf[n] = '\0';
    return atoll(buf);
}

static int numkeys_at_1(int argc, const resp_arg_t *argv, int *pos, int max)
{
    if (argc < 2) return 0;
    long long num = arg_atoi(&argv[1]);
    if (num < 1 || num > argc - 2) return 0;
    int n = 0;
    for (long long i = 0; i < num && n < max; i++) pos[n++] = 2 + (int)i;
    return n;
}

/* ---- the table ---- */

#define RO CMD_READONLY
#define RW CMD_WRITE
#define GROUP "set"
#define ALL_SETS "O(N) where N is the total number of elements in all given sets."
#define INTER_CPLX                                                                                 \
    "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of "     \
    "sets."

static const cmd_key_spec_t keynum_at_1[] = {CMD_KEYNUM_SPEC(1), {0}};

command_t cmds_set[] = {
    CMD_ROW(
        "sadd", sadd_cmd, -3, RW | CMD_DENYOOM | CMD_FAST, 1, 1, 1, GROUP, "1.0.0",
        "Add one or more members to a set",
        "O(1) for each element added, so O(N) to add N elements when the command is called with "
        "multiple arguments.", .key_flags = "RW insert"),
    CMD_ROW("srem", srem_cmd, -3, RW | CMD_FAST, 1, 1, 1, GROUP, "1.0.0",
            "Remove one or more members from a set",
            "O(N) where N is the number of members to be removed.", .key_flags = "RW delete"),
    CMD_ROW("smove", smove_cmd, 4, RW | CMD_FAST, 1, 2, 1, GROUP, "1.0.0",
            "Move a member from one set to another", "O(1)",
            .key_flags = "RW access delete|RW insert"),
    CMD_ROW("sismember", sismember_cmd, 3, RO | CMD_FAST, 1, 1, 1, GROUP, "1.0.0",
            "Determine if a given value is a member of a set", "O(1)", .key_flags = "RO"),
    CMD_ROW("smismember", smismember_cmd, -3, RO | CMD_FAST, 1, 1, 1, GROUP, "6.2.0",
            "Returns the membership associated with the given elements for a set",
            "O(N) where N is the number of elements being checked for membership"),
    CMD_ROW("scard", scard_cmd, 2, RO | CMD_FAST, 1, 1, 1, GROUP, "1.0.0",
            "Get the number of members in a set", "O(1)", .key_flags = "RO"),
    CMD_ROW("smembers", smembers_cmd, 2, RO, 1, 1, 1, GROUP, "1.0.0",
            "Get all the members in a set", "O(N) where N is the set cardinality."),
    CMD_ROW("spop", spop_cmd, -2, RW | CMD_FAST, 1, 1, 1, GROUP, "1.0.0",
            "Remove and return one or multiple random members from a set",
            "Without the count argument O(1), otherwise O(N) where N is the value of the passed "
            "count.", .key_flags = "RW access delete"),
    CMD_ROW("srandmember", srandmember_cmd, -2, RO, 1, 1, 1, GROUP, "1.0.0",
            "Get one or multiple random members from a set",
            "Without the count argument O(1), otherwise O(N) where N is the absolute value of the "
            "passed count."),
    CMD_ROW("sinter", sinter_cmd, -2, RO, 1, -1, 1, GROUP, "1.0.0", "Intersect multiple sets",
            INTER_CPLX),
    CMD_ROW("sintercard", sintercard_cmd, -3, RO | CMD_MOVABLE_KEYS, 0, 0, 0, GROUP, "7.0.0",
            "Intersect multiple sets and return the cardinality of the result", INTER_CPLX,
            .getkeys = numkeys_at_1, .key_flags = "RO access", .key_specs = keynum_at_1),
    CMD_ROW("sinterstore", sinterstore_cmd, -3, RW | CMD_DENYOOM, 1, -1, 1, GROUP, "1.0.0",
            "Intersect multiple sets and store the resulting set in a key", INTER_CPLX,
            .key_flags = "RW update|RO access"),
    CMD_ROW("sunion", sunion_cmd, -2, RO, 1, -1, 1, GROUP, "1.0.0", "Add multiple sets", ALL_SETS),
    CMD_ROW("sunionstore", sunionstore_cmd, -3, RW | CMD_DENYOOM, 1, -1, 1, GROUP, "1.0.0",
            "Add multiple sets and store the resulting set in a key", ALL_SETS,
            .key_flags = "OW update|RO access"),
    CMD_ROW("sdiff", sdiff_cmd, -2, RO, 1, -1, 1, GROUP, "1.0.0", "Subtract multiple sets",
            ALL_SETS),
    CMD_ROW("sdiffstore", sdiffstore_cmd, -3, RW | CMD_DENYOOM, 1, -1, 1, GROUP, "1.0.0",
            "Subtract multiple sets and store the resulting set in a key", ALL_SETS,
            .key_flags = "OW update|RO access"),
    CMD_ROW(
        "sscan", sscan_cmd, -3, RO, 1, 1, 1, GROUP, "2.8.0", "Incrementally iterate Set elements",
        "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
        "the cursor to return back to 0. N is the number of elements inside the collection.."),
    {NULL},
};
