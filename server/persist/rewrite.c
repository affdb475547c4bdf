/* server/persist/rewrite.c - the dataset as a stream of commands, and its replay (see rewrite.h).
 *
 * Each key becomes the fewest commands that rebuild it, as Redis's AOF rewrite writes them:
 * SET for strings, RPUSH/SADD/HSET/ZADD in batches of REWRITE_BATCH elements for containers,
 * XADD/XSETID/XGROUP/XCLAIM for streams (rewrite_stream),
 * TPUTs per blob (bytes from file tiers are read synchronously: in the forked child of an AOF
 * rewrite, or on the loop thread for SAVE and DEBUG RELOAD, which stop the server as Redis's
 * do) and TMETA for its times and counters, then PEXPIREAT for a TTL. Keys already
 * expired are left out. server/persist/aof.c writes the stream to a file and replays it. */
#include "server/persist/rewrite.h"

#include "common/alloc.h"
#include "common/util.h"
#include "server/client.h"
#include "server/command.h"
#include "server/server.h"
#include "storage/t_hash.h"
#include "storage/t_list.h"
#include "storage/t_set.h"
#include "storage/t_stream.h"
#include "storage/t_tag.h"
#include "storage/t_zset.h"

#include <stdio.h>
#include <string.h>

#define REWRITE_BATCH 64
#define REWRITE_FLUSH (4u << 20)    /* bytes collected before the sink gets them */
#define REWRITE_BLOB_CHUNK (8u << 20) /* blob bytes per TPUT */

/* One command under construction: its arguments are appended, then the header is put in
 * front when the command is closed. */
typedef struct cmdbuf {
    buf_t *out;
    size_t start; /* where the command begins in out */
    buf_t args;
    int argc;
    rewrite_sink_fn *sink; /* NULL: everything stays in out */
    void *ud;
    int failed; /* the sink failed: stop */
} cmdbuf_t;

/* Hands what out holds to the sink once it is past REWRITE_FLUSH bytes (or always with
 * force). */
static void drain(cmdbuf_t *cb, int force)
{
    if (!cb->sink || cb->failed || (!force && cb->out->len < REWRITE_FLUSH)) return;
    if (cb->sink(cb->ud, cb->out->data, cb->out->len) < 0) cb->failed = 1;
    buf_clear(cb->out);
}

static void arg(cmdbuf_t *cb, const void *p, size_t len)
{
    buf_printf(&cb->args, "$%zu\r\n", len);
    buf_append(&cb->args, p, len);
    buf_append(&cb->args, "\r\n", 2);
    cb->argc++;
}

static void arg_str(cmdbuf_t *cb, const char *s)
{
    arg(cb, s, strlen(s));
}

static void arg_ll(cmdbuf_t *cb, long long v)
{
    char tmp[24];
    arg(cb, tmp, ll_to_str(tmp, v));
}

static void arg_double(cmdbuf_t *cb, double d)
{
    char tmp[64];
    arg(cb, tmp, d_to_str(tmp, sizeof(tmp), d));
}

static void cmd_open(cmdbuf_t *cb, const char *name, const kv_t *kv)
{
    buf_clear(&cb->args);
    cb->argc = 0;
    arg_str(cb, name);
    if (kv) arg(cb, kv_key(kv), kv_keylen(kv));
}

static void cmd_close(cmdbuf_t *cb)
{
    buf_printf(cb->out, "*%d\r\n", cb->argc);
    buf_append(cb->out, cb->args.data, cb->args.len);
    cb->argc = 0;
    buf_clear(&cb->args);
}

/* Closes the command once it holds REWRITE_BATCH elements, and opens the next. Returns 1 if it
 * did. */
static void batch_step(cmdbuf_t *cb, const char *name, const kv_t *kv, int *n)
{
    if (++*n < REWRITE_BATCH) return;
    cmd_close(cb);
    cmd_open(cb, name, kv);
    *n = 0;
}

static void batch_end(cmdbuf_t *cb, int n)
{
    if (n > 0) cmd_close(cb);
    else buf_clear(&cb->args);
}

static void rewrite_hash(cmdbuf_t *cb, const kv_t *kv)
{
    hash_iter_t it;
    hash_entry_t e;
    int n = 0;
    cmd_open(cb, "HSET", kv);
    hash_iter_init(&it, (hash_t *)kv->val);
    while (hash_iter_next(&it, &e)) {
        arg(cb, e.field, e.flen);
        arg(cb, e.value, e.vlen);
        batch_step(cb, "HSET", kv, &n);
    }
    batch_end(cb, n);
}

static void rewrite_list(cmdbuf_t *cb, const kv_t *kv)
{
    list_iter_t it;
    list_entry_t e;
    int n = 0;
    cmd_open(cb, "RPUSH", kv);
    list_iter_init(&it, list_of(kv->val), 0, LIST_TAIL);
    while (list_iter_next(&it, &e)) {
        arg(cb, e.p, e.len);
        batch_step(cb, "RPUSH", kv, &n);
    }
    batch_end(cb, n);
}

static void rewrite_set(cmdbuf_t *cb, const kv_t *kv)
{
    set_iter_t it;
    set_elem_t e;
    int n = 0;
    cmd_open(cb, "SADD", kv);
    set_iter_init(&it, (const set_t *)(const void *)kv->val);
    while (set_iter_next(&it, &e)) {
        arg(cb, e.p, e.len);
        batch_step(cb, "SADD", kv, &n);
    }
    set_iter_deinit(&it);
    batch_end(cb, n);
}

static void rewrite_zset(cmdbuf_t *cb, const kv_t *kv)
{
    zset_iter_t it;
    zset_entry_t e;
    int n = 0;
    cmd_open(cb, "ZADD", kv);
    zset_iter_rank(&it, (const zset_t *)kv->val, 0, 0);
    while (zset_iter_next(&it, &e)) {
        arg_double(cb, e.score);
        arg(cb, e.member, e.len);
        batch_step(cb, "ZADD", kv, &n);
    }
    batch_end(cb, n);
}

struct tag_ctx {
    cmdbuf_t *cb;
    const kv_t *kv;
    tag_obj_t *t;
    long long skipped;
};

/* One TPUT of blob bytes [off, off+len) (read without counting an access), or 0 after
 * counting the blob as left out. */
static int rewrite_blob_chunk(struct tag_ctx *x, blob_t *b, const char *name, size_t nlen,
                              uint64_t off, uint64_t len, double score)
{
    char *data = try_malloc(len ? len : 1);
    tag_plan_t *plan = NULL;
    int rc = data ? blob_peek(b, off, len, data, &plan) : ST_OOM;
    if (rc == ST_PENDING) rc = tag_plan_run(plan) < 0 ? ST_OOM : ST_OK;
    if (plan) tag_plan_finish(plan, 0, NULL, NULL);
    if (rc != ST_OK) { /* busy with a write, or no memory: left out, and counted */
        xfree(data);
        x->skipped++;
        return 0;
    }
    cmd_open(x->cb, "TPUT", x->kv);
    arg(x->cb, name, nlen);
    arg_ll(x->cb, (long long)off);
    arg(x->cb, data, len);
    arg_double(x->cb, score);
    cmd_close(x->cb);
    xfree(data);
    drain(x->cb, 0);
    return 1;
}

/* A blob: its bytes in TPUTs of at most REWRITE_BLOB_CHUNK (so no buffer holds a whole big
 * blob), then TMETA with its times and counters. */
static void rewrite_blob(void *ud, blob_t *b)
{
    struct tag_ctx *x = ud;
    size_t nlen;
    const char *name = blob_name(b, &nlen);
    blob_info_t info;
    blob_get_info(b, &info);
    uint64_t off = 0;
    do {
        uint64_t n = info.size - off < REWRITE_BLOB_CHUNK ? info.size - off : REWRITE_BLOB_CHUNK;
        if (!rewrite_blob_chunk(x, b, name, nlen, off, n, info.score)) return;
        off += n;
    } while (off < info.size && !x->cb->failed);
    cmd_open(x->cb, "TMETA", x->kv);
    arg(x->cb, name, nlen);
    arg_ll(x->cb, info.ctime);
    arg_ll(x->cb, info.mtime);
    arg_ll(x->cb, info.atime);
    arg_ll(x->cb, (long long)info.reads);
    arg_ll(x->cb, (long long)info.writes);
    cmd_close(x->cb);
}

static long long rewrite_tag(cmdbuf_t *cb, const kv_t *kv)
{
    struct tag_ctx x = {cb, kv, (tag_obj_t *)kv->val, 0};
    tag_foreach(x.t, rewrite_blob, &x);
    return x.skipped;
}

struct db_ctx {
    cmdbuf_t *cb;
    db_t *db;
    long long now, skipped;
};

static void arg_id(cmdbuf_t *cb, const stream_id_t *id)
{
    char tmp[STREAM_ID_STR];
    arg(cb, tmp, stream_id_fmt(tmp, id));
}

/* A stream as Redis's rewriteStreamObject writes it: XADD per entry (an empty stream as XADD
 * MAXLEN 0 of a dummy entry), XSETID with the last id, entries added and max deleted id, then
 * per group XGROUP CREATE ... ENTRIESREAD. Then, unlike Redis (whose RDB preamble keeps them),
 * every consumer gets XGROUP CREATECONSUMER run at its seen time (a "#MS:" line before it,
 * "#MS:0" after: the loader's clock again), and each pending entry an XCLAIM ... TIME RETRYCOUNT
 * JUSTID AOFRESTORE, which the loader's client alone may send: it keeps entries whose message
 * was deleted, and their consumer's seen time. */
static void rewrite_stream(cmdbuf_t *cb, const kv_t *kv)
{
    const stream_t *s = (const stream_t *)(const void *)kv->val;
    if (s->length) {
        stream_iter_t it;
        stream_id_t id;
        int64_t nf;
        stream_iter_start(&it, s, NULL, NULL, 0);
        while (stream_iter_next(&it, &id, &nf)) {
            cmd_open(cb, "XADD", kv);
            arg_id(cb, &id);
            while (nf--) {
                const char *f, *v;
                size_t fl, vl;
                stream_iter_field(&it, &f, &fl, &v, &vl);
                arg(cb, f, fl);
                arg(cb, v, vl);
            }
            cmd_close(cb);
            drain(cb, 0);
        }
    } else {
        cmd_open(cb, "XADD", kv);
        arg_str(cb, "MAXLEN");
        arg_str(cb, "0");
        arg_str(cb, "0-1");
        arg_str(cb, "x");
        arg_str(cb, "y");
        cmd_close(cb);
    }
    cmd_open(cb, "XSETID", kv);
    arg_id(cb, &s->last_id);
    arg_str(cb, "ENTRIESADDED");
    arg_ll(cb, (long long)s->entries_added);
    arg_str(cb, "MAXDELETEDID");
    arg_id(cb, &s->max_deleted_id);
    cmd_close(cb);
    for (size_t i = 0; i < s->ngroups; i++) {
        const stream_cg_t *g = s->groups[i];
        cmd_open(cb, "XGROUP", NULL);
        arg_str(cb, "CREATE");
        arg(cb, kv_key(kv), kv_keylen(kv));
        arg(cb, g->name, g->namelen);
        arg_id(cb, &g->last_id);
        arg_str(cb, "ENTRIESREAD");
        arg_ll(cb, g->entries_read);
        cmd_close(cb);
        for (size_t j = 0; j < g->nconsumers; j++) {
            const stream_consumer_t *co = g->consumers[j];
            if (co->seen_time > 0) buf_printf(cb->out, "#MS:%lld\r\n", co->seen_time);
            cmd_open(cb, "XGROUP", NULL);
            arg_str(cb, "CREATECONSUMER");
            arg(cb, kv_key(kv), kv_keylen(kv));
            arg(cb, g->name, g->namelen);
            arg(cb, co->name, co->namelen);
            cmd_close(cb);
            if (co->seen_time > 0) buf_printf(cb->out, "#MS:0\r\n");
        }
        for (size_t j = 0; j < g->nconsumers; j++) {
            const stream_consumer_t *co = g->consumers[j];
            for (stream_idx_node_t *n = stream_idx_first(&co->pel); n; n = stream_idx_next(n)) {
                const stream_nack_t *nack = n->val;
                cmd_open(cb, "XCLAIM", kv);
                arg(cb, g->name, g->namelen);
                arg(cb, co->name, co->namelen);
                arg_str(cb, "0");
                arg_id(cb, &n->id);
                arg_str(cb, "TIME");
                arg_ll(cb, nack->delivery_time);
                arg_str(cb, "RETRYCOUNT");
                arg_ll(cb, (long long)nack->delivery_count);
                arg_str(cb, "JUSTID");
                arg_str(cb, "AOFRESTORE");
                cmd_close(cb);
                drain(cb, 0);
            }
        }
    }
}

static void rewrite_key(void *ud, kv_t *kv)
{
    struct db_ctx *x = ud;
    long long when = db_get_expire(x->db, kv);
    if (when != -1 && when <= x->now) return;
    cmdbuf_t *cb = x->cb;
    switch (kv->val->type) {
    case OBJ_STRING:
        cmd_open(cb, "SET", kv);
        arg(cb, ((str_obj_t *)kv->val)->data, ((str_obj_t *)kv->val)->len);
        cmd_close(cb);
        break;
    case OBJ_HASH: rewrite_hash(cb, kv); break;
    case OBJ_LIST: rewrite_list(cb, kv); break;
    case OBJ_SET: rewrite_set(cb, kv); break;
    case OBJ_ZSET: rewrite_zset(cb, kv); break;
    case OBJ_TAG: x->skipped += rewrite_tag(cb, kv); break;
    case OBJ_STREAM: rewrite_stream(cb, kv); break;
    }
    if (when != -1) {
        cmd_open(cb, "PEXPIREAT", kv);
        arg_ll(cb, when);
        cmd_close(cb);
    }
    drain(cb, 0);
}

static void (*prelude)(buf_t *out);

void rewrite_set_prelude(void (*fn)(buf_t *out))
{
    prelude = fn;
}

long long rewrite_dataset(buf_t *out, rewrite_sink_fn *sink, void *ud)
{
    cmdbuf_t cb = {out, 0, {0}, 0, sink, ud, 0};
    buf_init(&cb.args);
    long long skipped = 0;
    if (prelude) prelude(out);
    for (int i = 0; i < srv.ndb; i++) {
        db_t *db = &srv.db[i];
        if (db_size(db) == 0) continue;
        cmd_open(&cb, "SELECT", NULL);
        arg_ll(&cb, i);
        cmd_close(&cb);
        struct db_ctx x = {&cb, db, time_ms(), 0};
        dict_iter_t it;
        dict_iter_init(&it, &db->keys, 1);
        for (dict_node_t *n; !cb.failed && (n = dict_iter_next(&it));) rewrite_key(&x, (kv_t *)n);
        dict_iter_deinit(&it);
        skipped += x.skipped;
    }
    drain(&cb, 1);
    buf_deinit(&cb.args);
    return cb.failed ? -1 : skipped;
}
