/* server/cmd/tag.c - the tiered-store commands: TPUT TGET TSIZE TTRUNCATE TDEL TSCORE REORG
 * TINFO TLIST TSCAN TLEN TIERS TMETA, and their replies when file-tier I/O comes back.
 *
 * A command calls storage (storage/t_tag.h). When storage answers with a plan (file-tier
 * reads or writes), the core's executor (server/executor.h) runs it off the loop thread while
 * the client waits (its later replies queue behind this one, so they stay in order) and other
 * clients are served; the reply goes out when the plan comes back. A busy blob, or a tier whose room is being made, makes
 * the command wait on a name and run again when that name is signalled. Plans storage starts
 * by itself (demotions) run the same way with nobody waiting. Without a loop (unit tests) plans
 * run inline. */
#include "common/alloc.h"
#include "common/log.h"
#include "common/status.h"
#include "common/util.h"
#include "search/regex.h"
#include "server/persist/aof.h"
#include "server/block.h"
#include "server/cmd/search.h"
#include "server/cmd/tag.h"
#include "server/command.h"
#include "server/executor.h"
#include "server/reply.h"
#include "server/server.h"
#include "storage/t_tag.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum reply_kind { R_SIZE, R_BULK, R_TIER };

/* Late replies a client may have pending before it stops reading more commands. */
#define MAX_LATE_REPLIES 64

typedef struct io_job {
    tag_plan_t *plan;
    int status;
    client_t *c; /* NULL: nobody waits (demotion), or the client went away */
    struct reply_seg *seg; /* where the reply goes (the client's late-reply place) */
    int blocked;           /* the client also stopped reading until this job is done */
    int muted;             /* CLIENT REPLY OFF/SKIP was in force for the command */
    int reply;
    char *buf; /* R_BULK: the bytes read */
    uint64_t len;
    uint64_t size;    /* R_SIZE */
    char tier[64];    /* R_TIER */
    /* TPUT/TTRUNCATE: what undoes the write in the append-only file if the plan fails */
    struct undo *undo;
    int inline_run; /* the plan ran inside its command (no loop, loading, MULTI) */
} io_job_t;

/* A write's key, blob and the blob's state before it (a failed plan is undone). */
typedef struct undo {
    int dbid;
    int existed;
    tag_obj_t *t; /* the tag written to, compared (never followed) with what the key holds */
    blob_t *b;    /* the blob written to, held until the job is done */
    uint64_t old_size, new_size;
    size_t klen, blen;
    char *key, *blob; /* one allocation: key then blob */
} undo_t;

static int streams_open;    /* streamed TGET replies not yet done */
static int streams_reading; /* of those, with a piece read on the executor (counted there) */

/* ---- replies of plans ---- */

static void wake(void *ud, const char *name, size_t len)
{
    block_signal_name(name, len);
}

static void detach_job(void *job)
{
    ((io_job_t *)job)->c = NULL;
}

/* A bulk reply of bytes read: with a try-allocation, since a client chooses the size (a short
 * memory gets an error, never an abort). */
static void reply_copy(client_t *c, const char *p, uint64_t len)
{
    int muted;
    char *dst = len <= SIZE_MAX ? reply_bulk_begin(c, (size_t)len, &muted) : NULL;
    if (dst) memcpy(dst, p, len);
    else if (!muted) reply_error(c, "OOM not enough memory to read the blob");
}

static void reply_job(io_job_t *j)
{
    client_t *c = j->c;
    if (j->status < 0 && srv.loading && !j->undo) {
        /* replaying the append-only file runs plans inline: a blob whose bytes could not be
         * written would come back wrong, so the start stops */
        log_warning("Can't load the append only file: tier I/O failed: %s",
                    status_str(j->status));
        aof_load_abort();
    }
    if (j->status < 0) {
        reply_errorf(c, "ERR tier I/O failed: %s", status_str(j->status));
        return;
    }
    switch (j->reply) {
    case R_SIZE: reply_int(c, (long long)j->size); break;
    case R_BULK: reply_copy(c, j->buf, j->len); break;
    case R_TIER: reply_bulk_cstr(c, j->tier); break;
    default: break;
    }
}

/* A write plan failed: storage put the blob back as it was (tag_plan_finish); here the key of
 * a tag left empty goes, and the append-only file gets what undoes the logged write: TDEL of a
 * blob the write created, TTRUNCATE back to the old size of one it grew (in place of the
 * command itself when the plan ran inside it). Only when storage undid it on the very blob
 * written to, still under the key it was written at: a blob deleted meanwhile (and perhaps
 * made anew by someone else) was undone by that deletion, which is logged already. */
static void undo_write(io_job_t *j)
{
    undo_t *u = j->undo;
    /* replaying: the file may undo it further on, else the load fails at its end */
    if (srv.loading)
        aof_load_write_failed(u->dbid, u->key, u->klen, u->blob, u->blen, status_str(j->status));
    if (!u->b || !tag_blob_undone(u->b)) return;
    db_t *db = &srv.db[u->dbid];
    kv_t *kv = db_lookup(db, u->key, u->klen);
    if (!kv || kv->val != (obj_t *)u->t) {
        /* its tag was renamed or moved while the write was in flight: the file names it by
         * its old key, and the undo cannot be logged under a name it would replay at */
        log_warning("A failed write to blob '%.*s' was undone, but its tag is no longer at key "
                    "'%.*s': the append-only file still holds the write",
                    (int)(u->blen > 200 ? 200 : u->blen), u->blob,
                    (int)(u->klen > 200 ? 200 : u->klen), u->key);
        return;
    }
    if (tag_len(u->t) == 0) {
        db_delete(db, u->key, u->klen);
        server_key_changed(NULL, db, u->key, u->klen, NOTIFY_GENERIC, "del");
    }
    char num[24];
    resp_arg_t a[4] = {{"TDEL", 4}, {u->key, u->klen}, {u->blob, u->blen}, {num, 0}};
    int argc = 3;
    if (u->existed) {
        if (u->old_size >= u->new_size) return; /* an overwrite in place: nothing to cut */
        a[0] = (resp_arg_t){"TTRUNCATE", 9};
        a[3].len = (size_t)snprintf(num, sizeof(num), "%llu", (unsigned long long)u->old_size);
        argc = 4;
    }
    if (j->inline_run && j->c) aof_replace_argv(j->c, argc, a);
    else aof_propagate(NULL, u->dbid, argc, a);
}

/* Back on the loop thread after the executor finished the plan: undo a failed write, then
 * the reply (straight away for a plan that ran inline, into the client's late-reply place
 * otherwise). */
static void job_done(void *ud, int status)
{
    io_job_t *j = ud;
    j->status = status;
    if (j->status < 0 && j->undo) undo_write(j);
    if (j->c && !j->seg) {
        reply_job(j);
    } else if (j->c) {
        /* the reply follows the CLIENT REPLY mode of its own command, not today's */
        uint32_t mute = CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP, saved = j->c->flags & mute;
        j->c->flags &= ~mute;
        client_reply_fill(j->c, j->seg, 1);
        if (!j->muted) reply_job(j);
        client_reply_fill(j->c, j->seg, 0);
        j->c->flags |= saved;
        if (j->blocked) block_io_done(j->c);
    }
    if (j->undo) tag_blob_release(j->undo->b);
    xfree(j->undo);
    xfree(j->buf);
    xfree(j);
}

/* Hands a plan to the executor; c waits for the reply. Inside EXEC, where the transaction's
 * replies must stay in order and nothing may interleave, the plan runs inline (as it does
 * without a loop and while loading). */
static void submit(tag_plan_t *plan, client_t *c, io_job_t *j)
{
    j->plan = plan;
    j->c = c;
    if (executor_inline() || (c->flags & CLIENT_MULTI)) {
        j->inline_run = 1;
        executor_run(plan, 1, job_done, j);
        return;
    }
    /* the client goes on with its next commands; their replies queue behind this one */
    j->muted = (c->flags & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP)) != 0;
    j->seg = client_reply_later(c, detach_job, j);
    if (c->nsegs >= 2 * MAX_LATE_REPLIES && !block_is_retry(c)) {
        j->blocked = 1; /* enough in flight: stop reading until this one is done */
        block_for_io(c, NULL, j);
    }
    executor_run(plan, 0, job_done, j);
}

/* ---- streamed reads: a large TGET sent in pieces ---- */

/* A TGET of at least STREAM_MIN bytes (outside MULTI, to a client on a transport) is not read
 * into one buffer: the bulk header goes out, then pieces of STREAM_PIECE bytes are read (RAM:
 * copied on the loop; file: on the thread pool) and appended to the client's output while
 * fewer than STREAM_AHEAD bytes of it wait to be sent, so one reply holds a few MiB however
 * large the blob (the piece buffer, c->out and what the socket write has in flight). The blob
 * counts as read in flight until the last piece left (writes to it wait). */
#define STREAM_MIN (4u << 20)
#define STREAM_PIECE (1u << 20)
#define STREAM_AHEAD (2u << 20)

typedef struct stream_job {
    tag_reader_t *r;
    tag_plan_t *plan; /* the piece being read on the thread pool */
    client_t *c;      /* NULL once the client went away */
    struct reply_seg *seg;
    uint64_t len, pos; /* the reply's bytes, and how many were appended */
    uint64_t piece;    /* bytes of the piece in buf */
    char *buf;
    int status;
    int reading; /* a piece is on the thread pool */
    int blocked; /* the client stopped reading commands until this reply is done */
    long long moved_ms; /* when bytes last went out to the client (tget-stall-timeout) */
    struct stream_job *prev, *next; /* open_streams */
} stream_job_t;

static stream_job_t *open_streams; /* every open stream, newest first */

static void stream_free(stream_job_t *j)
{
    if (j->prev) j->prev->next = j->next;
    else open_streams = j->next;
    if (j->next) j->next->prev = j->prev;
    tag_reader_close(j->r, wake, NULL);
    xfree(j->buf);
    xfree(j);
    streams_open--;
}

static void stream_detach(void *job)
{
    stream_job_t *j = job;
    j->c = NULL;
    if (!j->reading) stream_free(j);
}

/* I/O in flight for TIERS and INFO: the executor's plans, and the streams between pieces. */
static int io_in_flight(void)
{
    return executor_inflight() + streams_open - streams_reading;
}

static void stream_piece_done(void *ud, int status);

/* Appends pieces while the client's output has room; starts a file read and returns when a
 * piece needs one; completes the reply after the last piece. */
static void stream_next(stream_job_t *j)
{
    client_t *c = j->status < 0 ? NULL : j->c; /* a failed one waits for the close */
    if (c && !j->buf && j->pos < j->len && client_reply_room(c, j->seg, STREAM_AHEAD))
        j->buf = xmalloc(STREAM_PIECE); /* only once it reads: waiting streams hold none */
    while (!j->reading && c && j->pos < j->len && client_reply_room(c, j->seg, STREAM_AHEAD)) {
        uint64_t n = j->len - j->pos < STREAM_PIECE ? j->len - j->pos : STREAM_PIECE;
        if (tag_reader_read(j->r, j->pos, n, j->buf, &j->plan) == ST_OK) {
            client_reply_stream(c, j->seg, j->buf, n);
            j->pos += n;
            continue;
        }
        j->piece = n;
        j->reading = 1;
        streams_reading++;
        executor_run(j->plan, 0, stream_piece_done, j);
        return;
    }
    if (!c || j->reading || j->pos < j->len) return;
    client_reply_stream(c, j->seg, "\r\n", 2);
    client_reply_stream_end(c, j->seg);
    if (j->blocked) {
        /* the stream may end inside the transport's flush (a drain), where running the
         * client's next commands is not safe: they run from a loop callback of their own */
        block_io_done(c);
        executor_serve_ready_soon();
    }
    stream_free(j);
}

static void stream_drain(void *job)
{
    ((stream_job_t *)job)->moved_ms = time_ms(); /* the client took what waited */
    stream_next(job);
}

/* A streamed TGET holds writes to its blob off until its last byte left; a client that reads
 * none of it for tget-stall-timeout seconds is closed, so it cannot hold them off forever. */
void tagcmd_cron(long long now_ms)
{
    long long limit = (long long)srv.cfg.tget_stall_timeout * 1000;
    for (stream_job_t *j = open_streams; j; j = j->next) {
        client_t *c = j->c;
        if (!c || j->reading || (c->flags & CLIENT_CLOSE_ASAP) || now_ms - j->moved_ms <= limit)
            continue;
        log_notice("Closing client id=%llu: it read nothing of a streamed TGET reply for %d s "
                   "(tget-stall-timeout), and writes to the blob wait for it",
                   (unsigned long long)c->id, srv.cfg.tget_stall_timeout);
        client_close(c);
    }
}

/* The executor finished a piece's read plan. */
static void stream_piece_done(void *ud, int status)
{
    stream_job_t *j = ud;
    j->status = status;
    j->plan = NULL;
    j->reading = 0;
    streams_reading--;
    if (!j->c) {
        stream_free(j);
    } else if (j->status < 0) {
        /* the header is out: the only honest end is to drop the connection */
        log_warning("Closing client id=%llu: tier I/O failed in the middle of a TGET reply: %s",
                    (unsigned long long)j->c->id, status_str(j->status));
        client_t *c = j->c;
        client_close(c); /* the client's places are dropped when it is freed (detach) */
    } else {
        client_reply_stream(j->c, j->seg, j->buf, j->piece);
        j->pos += j->piece;
        stream_next(j);
    }
}

/* 1 if TGET of len bytes for c is streamed. */
static int streams(client_t *c, uint64_t len)
{
    return len >= STREAM_MIN && srv.loop && c->ops && c->ops->want_write &&
           !(c->flags & (CLIENT_MULTI | CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP | CLIENT_FAKE));
}

/* Starts streaming the reader's bytes to c as one bulk string. */
static void stream_start(client_t *c, tag_reader_t *r, uint64_t len)
{
    stream_job_t *j = xcalloc(1, sizeof(*j));
    j->r = r;
    j->c = c;
    j->len = len;
    j->moved_ms = time_ms();
    j->next = open_streams;
    if (open_streams) open_streams->prev = j;
    open_streams = j;
    streams_open++;
    j->seg = client_reply_stream_later(c, stream_detach, stream_drain, j);
    if (c->nsegs >= 2 * MAX_LATE_REPLIES && !block_is_retry(c)) {
        j->blocked = 1;
        block_for_io(c, NULL, j);
    }
    char hdr[32];
    int n = snprintf(hdr, sizeof(hdr), "$%llu\r\n", (unsigned long long)len);
    client_reply_stream(c, j->seg, hdr, (size_t)n);
    stream_next(j);
}



/* ---- argument helpers ---- */

static int offset_or_reply(client_t *c, const resp_arg_t *a, const char *what, uint64_t *out)
{
    long long v;
    if (arg_ll_or_reply(c, a, &v, NULL) < 0) return -1;
    if (v < 0) {
        reply_errorf(c, "ERR %s is negative", what);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

static int score_or_reply(client_t *c, const resp_arg_t *a, double *out)
{
    if (!str_to_d(a->ptr, a->len, out) || *out < 0 || *out > 1 || isnan(*out)) {
        reply_error(c, "ERR score is not a number in [0, 1]");
        return -1;
    }
    return 0;
}

/* The tag at key, or NULL (missing). Replies WRONGTYPE and sets *err for another type. */
static tag_obj_t *tag_at(client_t *c, const resp_arg_t *key, int *err)
{
    kv_t *kv = lookup_type_or_reply(c, key, OBJ_TAG, err);
    return kv ? (tag_obj_t *)kv->val : NULL;
}

static void changed(client_t *c, const resp_arg_t *key, const char *event)
{
    server_key_changed(c, c->db, key->ptr, key->len, NOTIFY_TAG, event);
}

/* Deletes the key of a tag left without blobs (a tag exists while it holds one). */
static void drop_if_empty(client_t *c, const resp_arg_t *key, tag_obj_t *t)
{
    if (tag_len(t) > 0) return;
    db_delete(c->db, key->ptr, key->len);
    server_key_changed(c, c->db, key->ptr, key->len, NOTIFY_GENERIC, "del");
}

/* Waits for what storage said (busy blob, room on a tier); the command runs again later.
 * Inside EXEC nothing can wait: the command fails with an error instead. */
static void wait_for(client_t *c, tag_obj_t *t, const resp_arg_t *blob, int status)
{
    if (c->flags & CLIENT_MULTI) {
        executor_start_pending();
        reply_error(c, status == ST_BUSY
                           ? "BUSY the blob has I/O in flight: retry outside MULTI"
                           : "BUSY room is being made on the tiers: retry outside MULTI");
        return;
    }
    char name[64];
    size_t n = status == ST_BUSY ? tag_blob_waitname(t, blob->ptr, blob->len, name)
                                 : tag_space_waitname(name);
    block_on_name(c, name, n); /* before the moves start: inline ones signal at once */
    executor_start_pending();
}

/* Replies the errors every mutating tag operation can give; 1 if it replied. */
static int status_error(client_t *c, int status)
{
    if (status == ST_OOM) {
        /* a tier whose disk ran out before its capacity: say so, TIERS shows it as free */
        for (int i = 0; i < tag_store.tiers->n; i++) {
            uint64_t room = tier_room(tag_store.tiers->t[i]);
            if (room >= tier_free(tag_store.tiers->t[i])) continue;
            reply_errorf(c, "OOM no tier has room for the blob (tier '%s': its file system has "
                            "%llu bytes free)",
                         tier_name(tag_store.tiers->t[i]), (unsigned long long)room);
            return 1;
        }
        reply_error(c, "OOM no tier has room for the blob");
        return 1;
    }
    if (status == ST_TOO_BIG) {
        reply_error(c, "ERR blob size would exceed max-blob-size");
        return 1;
    }
    return 0;
}

/* What undoes a write of argv[1], argv[2] (before: the blob as it was, size -1 if missing)
 * that leaves it size bytes long. */
static undo_t *undo_new(client_t *c, tag_obj_t *t, const blob_info_t *before, uint64_t size)
{
    const resp_arg_t *key = &c->argv[1], *blob = &c->argv[2];
    undo_t *u = xmalloc(sizeof(*u) + key->len + blob->len);
    u->dbid = c->dbid;
    u->t = t;
    u->b = tag_blob_hold(t, blob->ptr, blob->len);
    u->existed = before->size != UINT64_MAX;
    u->old_size = before->size;
    u->new_size = size;
    u->key = (char *)(u + 1);
    u->blob = u->key + key->len;
    u->klen = key->len;
    u->blen = blob->len;
    memcpy(u->key, key->ptr, key->len);
    memcpy(u->blob, blob->ptr, blob->len);
    return u;
}

/* The blob at argv[2] of t before a write: its info, size UINT64_MAX if missing. */
static void blob_before(client_t *c, tag_obj_t *t, blob_info_t *out)
{
    blob_t *b = tag_blob(t, c->argv[2].ptr, c->argv[2].len);
    if (b) blob_get_info(b, out);
    else out->size = UINT64_MAX;
}

/* Loading the append-only file, a write found no room for end - old more bytes: an
 * acknowledged blob cannot come back, so the start stops, naming the tier and the bytes
 * missing (the file stays as it is for a start with more room). */
static void load_no_room(client_t *c, tag_obj_t *t, uint64_t end)
{
    const resp_arg_t *key = &c->argv[1], *blob = &c->argv[2];
    blob_t *b = tag_blob(t, blob->ptr, blob->len);
    uint64_t old = 0, room = 0;
    if (b) {
        blob_info_t info;
        blob_get_info(b, &info);
        old = info.size;
    }
    char per[512] = "";
    size_t n = 0;
    for (int i = 0; i < tag_store.tiers->n && n < sizeof(per); i++) {
        uint64_t r = tier_room(tag_store.tiers->t[i]);
        room += r;
        n += (size_t)snprintf(per + n, sizeof(per) - n, "%stier '%s' %llu%s", i ? ", " : "",
                              tier_name(tag_store.tiers->t[i]), (unsigned long long)r,
                              r < tier_free(tag_store.tiers->t[i]) ? " (its file system is full)" : "");
    }
    uint64_t need = end > old ? end - old : 0, missing = need > room ? need - room : 0;
    log_warning("Can't load the append only file: blob '%.*s' of tag '%.*s' needs %llu more "
                "bytes and no tier can hold them (bytes of room: %s): %llu bytes missing. Give "
                "the tiers more room (capacity or disk space) and start again; the file is "
                "left as it is.",
                (int)(blob->len > 200 ? 200 : blob->len), blob->ptr,
                (int)(key->len > 200 ? 200 : key->len), key->ptr, (unsigned long long)need, per,
                (unsigned long long)missing);
    aof_load_abort();
}

/* Ends TPUT and TTRUNCATE after storage answered rc: waits, errors (dropping a tag made for
 * this write), adds a new tag to the keyspace, and replies the size now or after the plan.
 * end is the size the blob would have after the write (for the loading error). */
static void write_done(client_t *c, tag_obj_t *t, tag_obj_t *fresh, int rc, tag_plan_t *plan,
                       uint64_t size, uint64_t end, const blob_info_t *before, const char *event)
{
    const resp_arg_t *key = &c->argv[1];
    if (rc == ST_OOM && srv.loading) load_no_room(c, t, end);
    if (rc == ST_BUSY || rc == ST_NOSPACE || status_error(c, rc)) {
        if (rc == ST_BUSY || rc == ST_NOSPACE) wait_for(c, t, &c->argv[2], rc);
        if (fresh) obj_free((obj_t *)fresh);
        return;
    }
    if (fresh) db_add(c->db, key->ptr, key->len, (obj_t *)fresh);
    changed(c, key, event);
    if (rc == ST_PENDING) {
        io_job_t *j = xcalloc(1, sizeof(*j));
        j->reply = R_SIZE;
        j->size = size;
        j->undo = undo_new(c, t, before, size);
        submit(plan, c, j);
        return;
    }
    reply_int(c, (long long)size);
    executor_start_pending(); /* a TPUT with a new score may have queued a move */
}

/* While an append-only-file rewrite waits for file-tier writes to drain before it forks,
 * new writes wait too (so the drain ends). Returns 1 if c now waits. */
static int wait_for_fork(client_t *c)
{
    char name[64];
    size_t n = aof_fork_waitname(name);
    if (!n || (c->flags & CLIENT_MULTI)) return 0;
    block_on_name(c, name, n);
    return 1;
}

/* ---- commands ---- */

static void tput_cmd(client_t *c)
{
    const resp_arg_t *key = &c->argv[1], *blob = &c->argv[2], *data = &c->argv[4];
    uint64_t off, size = 0;
    double score = 1.0;
    int err, has_score = c->argc == 6;
    if (c->argc > 6) {
        reply_syntax_error(c);
        return;
    }
    if (offset_or_reply(c, &c->argv[3], "offset", &off) < 0) return;
    if (has_score && score_or_reply(c, &c->argv[5], &score) < 0) return;
    tag_obj_t *t = tag_at(c, key, &err), *fresh = NULL;
    if (err || wait_for_fork(c)) return;
    if (!t) t = fresh = tag_new();
    tag_plan_t *plan;
    blob_info_t before;
    blob_before(c, t, &before);
    tag_write_t w = {blob->ptr, blob->len, off, data->ptr, data->len, has_score, score, db_now_ms};
    int rc = tag_put(t, &w, &size, &plan);
    write_done(c, t, fresh, rc, plan, size, data->len ? off + data->len : 0, &before, "tput");
}

static void tget_cmd(client_t *c)
{
    const resp_arg_t *blob = &c->argv[2];
    uint64_t off = 0, count = UINT64_MAX;
    int err;
    if (c->argc > 5) {
        reply_syntax_error(c);
        return;
    }
    if (c->argc >= 4 && offset_or_reply(c, &c->argv[3], "offset", &off) < 0) return;
    if (c->argc == 5 && offset_or_reply(c, &c->argv[4], "count", &count) < 0) return;
    tag_obj_t *t = tag_at(c, &c->argv[1], &err);
    if (err) return;
    if (!t) {
        reply_null(c);
        return;
    }
    uint64_t len;
    int io, muted;
    blob_t *b;
    int rc = tag_read_prepare(t, blob->ptr, blob->len, off, count, &len, &io, &b);
    if (rc == ST_MISSING) {
        reply_null(c);
        return;
    }
    if (rc == ST_BUSY) {
        wait_for(c, t, blob, rc);
        return;
    }
    if (len >= STREAM_MIN && (c->flags & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP))) {
        tag_reader_t *r; /* nobody gets the bytes: count the access, read nothing */
        if (tag_reader_open(t, blob->ptr, blob->len, off, count, db_now_ms, &r, &len) == ST_OK)
            tag_reader_close(r, wake, NULL);
        return;
    }
    if (streams(c, len)) {
        tag_reader_t *r;
        rc = tag_reader_open(t, blob->ptr, blob->len, off, count, db_now_ms, &r, &len);
        if (rc == ST_BUSY) { /* a move in flight: the reader opens after it */
            wait_for(c, t, blob, rc);
            return;
        }
        stream_start(c, r, len);
        return;
    }
    /* built whole (inside MULTI, or small): bound like any reply built in memory */
    if (reply_fits_or_reply(c, 1, len) < 0) return;
    tag_plan_t *plan;
    if (!io) { /* RAM only: read straight into the reply */
        char *dst = reply_bulk_begin(c, len, &muted), *tmp = NULL;
        if (!dst && muted) dst = tmp = try_malloc(len ? len : 1);
        if (!dst) {
            reply_error(c, "OOM not enough memory to read the blob");
            return;
        }
        tag_read_into(b, off, len, db_now_ms, dst, &plan);
        xfree(tmp);
        return;
    }
    char *buf = try_malloc(len ? len : 1);
    if (!buf) {
        reply_error(c, "OOM not enough memory to read the blob");
        return;
    }
    if (tag_read_into(b, off, len, db_now_ms, buf, &plan) == ST_OK) {
        reply_copy(c, buf, len);
        xfree(buf);
        return;
    }
    io_job_t *j = xcalloc(1, sizeof(*j));
    j->reply = R_BULK;
    j->buf = buf;
    j->len = len;
    submit(plan, c, j);
}

static blob_t *blob_at(client_t *c, int *err)
{
    tag_obj_t *t = tag_at(c, &c->argv[1], err);
    return t ? tag_blob(t, c->argv[2].ptr, c->argv[2].len) : NULL;
}

/* The metadata of the blob named by argv[1], argv[2]: 1 with *info, or 0 after replying (a
 * null reply for a missing blob, WRONGTYPE for a key of another type). */
static int blob_info_or_reply(client_t *c, blob_info_t *info)
{
    int err;
    blob_t *b = blob_at(c, &err);
    if (err) return 0;
    if (!b) {
        reply_null(c);
        return 0;
    }
    blob_get_info(b, info);
    return 1;
}

static void tsize_cmd(client_t *c)
{
    blob_info_t info;
    if (blob_info_or_reply(c, &info)) reply_int(c, (long long)info.size);
}

static void tscore_cmd(client_t *c)
{
    blob_info_t info;
    if (blob_info_or_reply(c, &info)) reply_double(c, info.score);
}

static void ttruncate_cmd(client_t *c)
{
    const resp_arg_t *key = &c->argv[1], *blob = &c->argv[2];
    uint64_t size;
    int err;
    if (offset_or_reply(c, &c->argv[3], "size", &size) < 0) return;
    tag_obj_t *t = tag_at(c, key, &err), *fresh = NULL;
    if (err || wait_for_fork(c)) return;
    if (!t) t = fresh = tag_new();
    tag_plan_t *plan;
    blob_info_t before;
    blob_before(c, t, &before);
    if (srv.loading && before.size != UINT64_MAX && size <= before.size)
        aof_load_write_undone(c->dbid, key->ptr, key->len, blob->ptr, blob->len);
    int rc = tag_truncate(t, blob->ptr, blob->len, size, db_now_ms, &plan);
    write_done(c, t, fresh, rc, plan, size, size, &before, "ttruncate");
}

static void tdel_cmd(client_t *c)
{
    int err;
    tag_obj_t *t = tag_at(c, &c->argv[1], &err);
    if (err) return;
    long long n = 0;
    for (int j = 2; srv.loading && j < c->argc; j++)
        aof_load_write_undone(c->dbid, c->argv[1].ptr, c->argv[1].len, c->argv[j].ptr,
                              c->argv[j].len);
    for (int j = 2; t && j < c->argc; j++) n += tag_del(t, c->argv[j].ptr, c->argv[j].len);
    if (n) {
        changed(c, &c->argv[1], "tdel");
        drop_if_empty(c, &c->argv[1], t);
    }
    reply_int(c, n);
}

static void reorg_cmd(client_t *c)
{
    const resp_arg_t *blob = &c->argv[2];
    double score;
    int err;
    if (score_or_reply(c, &c->argv[3], &score) < 0) return;
    tag_obj_t *t = tag_at(c, &c->argv[1], &err);
    if (err) return;
    if (!t) {
        reply_null(c);
        return;
    }
    tag_plan_t *plan;
    int rc = tag_reorg(t, blob->ptr, blob->len, score, &plan);
    if (rc == ST_MISSING) {
        reply_null(c);
        return;
    }
    if (rc == ST_BUSY) {
        wait_for(c, t, blob, rc);
        return;
    }
    if (status_error(c, rc)) return;
    changed(c, &c->argv[1], "reorg");
    blob_t *b = tag_blob(t, blob->ptr, blob->len);
    blob_info_t info;
    blob_get_info(b, &info);
    if (rc == ST_PENDING) {
        /* the tier it lands on: the one the move writes to, known once it finished */
        io_job_t *j = xcalloc(1, sizeof(*j));
        j->reply = R_TIER;
        snprintf(j->tier, sizeof(j->tier), "%s", tier_name(tag_store.tiers->t[tag_plan_dest_tier(plan)]));
        submit(plan, c, j);
        return;
    }
    int tier = info.tier >= 0 ? info.tier : tier_set_pick(tag_store.tiers, score);
    reply_bulk_cstr(c, tier_name(tag_store.tiers->t[tier]));
}

/* TMETA tag blob ctime mtime atime reads writes: restores a blob's times and counters (the
 * append-only file's rewrite writes it after a blob's bytes). OK, or nil for a missing blob. */
static void tmeta_cmd(client_t *c)
{
    long long v[5];
    int err;
    for (int i = 0; i < 5; i++) {
        if (arg_ll_or_reply(c, &c->argv[3 + i], &v[i], NULL) < 0) return;
        if (v[i] < 0) {
            reply_error(c, i < 3 ? "ERR time is negative" : "ERR counter is negative");
            return;
        }
        if (i < 3 && v[i] > TAG_TIME_MAX) {
            reply_error(c, "ERR time is out of range");
            return;
        }
    }
    tag_obj_t *t = tag_at(c, &c->argv[1], &err);
    if (err) return;
    if (!t || tag_set_meta(t, c->argv[2].ptr, c->argv[2].len, v[0], v[1], v[2], (uint64_t)v[3],
                           (uint64_t)v[4]) != ST_OK) {
        reply_null(c);
        return;
    }
    changed(c, &c->argv[1], "tmeta");
    reply_ok(c);
}

static void tinfo_cmd(client_t *c)
{
    blob_info_t in;
    if (!blob_info_or_reply(c, &in)) return;
    int spans = in.ntiers > 1;
    reply_map(c, 8 + spans);
    reply_bulk_cstr(c, "size");
    reply_int(c, (long long)in.size);
    reply_bulk_cstr(c, "score");
    reply_double(c, in.score);
    reply_bulk_cstr(c, "tier");
    reply_bulk_cstr(c, tier_name(tag_store.tiers->t[in.tier >= 0 ? in.tier : tier_set_pick(tag_store.tiers, in.score)]));
    reply_bulk_cstr(c, "ctime");
    reply_int(c, in.ctime);
    reply_bulk_cstr(c, "mtime");
    reply_int(c, in.mtime);
    reply_bulk_cstr(c, "atime");
    reply_int(c, in.atime);
    reply_bulk_cstr(c, "reads");
    reply_int(c, (long long)in.reads);
    reply_bulk_cstr(c, "writes");
    reply_int(c, (long long)in.writes);
    if (spans) {
        reply_bulk_cstr(c, "tiers");
        reply_array(c, in.ntiers);
        for (int i = 0; i < in.ntiers; i++) reply_bulk_cstr(c, tier_name(tag_store.tiers->t[in.tiers[i]]));
    }
}

static void emit_name(void *ud, blob_t *b)
{
    size_t len;
    const char *name = blob_name(b, &len);
    reply_bulk(ud, name, len);
}

static void emit_range_name(void *ud, const char *name, size_t len)
{
    reply_bulk(ud, name, len);
}

/* TLIST tag [FROM blob] [COUNT n]: with either option, the names in bytewise order from the
 * first one >= FROM (inclusive), at most COUNT, from the search catalogue's per-tag name
 * index; without, every name in the tag's own (hash) order. */
static void tlist_cmd(client_t *c)
{
    const resp_arg_t *from = NULL;
    long long count = LLONG_MAX;
    int err;
    for (int j = 2; j < c->argc; j += 2) {
        if (j + 1 >= c->argc) {
            reply_syntax_error(c);
            return;
        }
        if (arg_is(&c->argv[j], "FROM")) {
            from = &c->argv[j + 1];
        } else if (arg_is(&c->argv[j], "COUNT")) {
            if (arg_ll_or_reply(c, &c->argv[j + 1], &count, NULL) < 0) return;
            if (count < 0) {
                reply_error(c, "ERR value is out of range, must be positive");
                return;
            }
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    tag_obj_t *t = tag_at(c, &c->argv[1], &err);
    if (err) return;
    if (!t) {
        reply_array(c, 0);
        return;
    }
    if (c->argc == 2) {
        reply_array(c, (long long)tag_len(t));
        tag_foreach(t, emit_name, c);
        return;
    }
    size_t h = reply_defer(c);
    uint64_t n = searchcmd_tag_range(t, from ? from->ptr : NULL, from ? from->len : 0,
                                     (uint64_t)count, emit_range_name, c);
    reply_defer_finish(c, h, '*', (long long)n);
}

static void tlen_cmd(client_t *c)
{
    int err;
    tag_obj_t *t = tag_at(c, &c->argv[1], &err);
    if (err) return;
    reply_int(c, t ? (long long)tag_len(t) : 0);
}

struct scan_acc {
    buf_t names; /* (uint32 length, bytes) records */
    long long n, visited;
    rx_t *match;
};

static void collect_name(void *ud, blob_t *b)
{
    struct scan_acc *x = ud;
    size_t len;
    const char *name = blob_name(b, &len);
    x->visited++;
    if (x->match && !rx_match(x->match, name, len)) return;
    uint32_t l = (uint32_t)len;
    buf_append(&x->names, &l, 4);
    buf_append(&x->names, name, len);
    x->n++;
}

static void tscan_cmd(client_t *c)
{
    long long count = 10;
    uint64_t cursor;
    rx_t *match = NULL;
    int err;
    if (scan_cursor_or_reply(c, &c->argv[2], &cursor) < 0) return;
    for (int j = 3; j < c->argc; j += 2) {
        if (j + 1 >= c->argc) {
            reply_syntax_error(c);
            return;
        }
        if (arg_is(&c->argv[j], "COUNT")) {
            if (arg_ll_or_reply(c, &c->argv[j + 1], &count, NULL) < 0) return;
            if (count < 1) {
                reply_syntax_error(c);
                return;
            }
        } else if (arg_is(&c->argv[j], "MATCH")) {
            char why[256];
            match = rx_get(c->argv[j + 1].ptr, c->argv[j + 1].len, why, sizeof(why));
            if (!match) {
                reply_errorf(c, "ERR invalid regex: %s", why);
                return;
            }
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    tag_obj_t *t = tag_at(c, &c->argv[1], &err);
    if (err) return;
    reply_array(c, 2);
    if (!t) {
        reply_bulk_cstr(c, "0");
        reply_array(c, 0);
        return;
    }
    /* collect names over dict steps until COUNT were visited, then reply: cursor first */
    struct scan_acc acc = {{0}, 0, 0, match};
    buf_init(&acc.names);
    uint64_t cur = cursor;
    long long visited = 0;
    do {
        long long before = acc.visited;
        cur = tag_scan(t, cur, collect_name, &acc);
        visited += acc.visited - before;
    } while (cur && visited < count);
    reply_bulk_ll(c, (long long)cur);
    reply_array(c, acc.n);
    for (size_t off = 0; off < acc.names.len;) {
        uint32_t len;
        memcpy(&len, acc.names.data + off, 4);
        reply_bulk(c, acc.names.data + off + 4, len);
        off += 4 + len;
    }
    buf_deinit(&acc.names);
}

static void tiers_cmd(client_t *c)
{
    reply_array(c, tag_store.tiers->n);
    for (int i = 0; i < tag_store.tiers->n; i++) {
        tier_t *t = tag_store.tiers->t[i];
        tier_stats_t *s = tier_stats(t);
        reply_map(c, 13);
        reply_bulk_cstr(c, "name");
        reply_bulk_cstr(c, tier_name(t));
        reply_bulk_cstr(c, "kind");
        reply_bulk_cstr(c, tier_kind(t) == TIER_RAM ? "ram" : "file");
        reply_bulk_cstr(c, "path");
        reply_bulk_cstr(c, tier_path(t));
        reply_bulk_cstr(c, "score");
        reply_double(c, tier_score(t));
        reply_bulk_cstr(c, "capacity");
        reply_int(c, (long long)tier_capacity(t));
        reply_bulk_cstr(c, "used");
        reply_int(c, (long long)tier_used(t));
        reply_bulk_cstr(c, "free");
        reply_int(c, (long long)tier_free(t));
        reply_bulk_cstr(c, "blobs");
        reply_int(c, (long long)s->blobs);
        reply_bulk_cstr(c, "reads");
        reply_int(c, (long long)s->reads);
        reply_bulk_cstr(c, "writes");
        reply_int(c, (long long)s->writes);
        reply_bulk_cstr(c, "bytes_read");
        reply_int(c, (long long)s->bytes_read);
        reply_bulk_cstr(c, "bytes_written");
        reply_int(c, (long long)s->bytes_written);
        reply_bulk_cstr(c, "inflight");
        reply_int(c, io_in_flight());
    }
}



void tagcmd_info_tiers(buf_t *b)
{
    buf_append_str(b, "# Tiers\r\n");
    for (int i = 0; i < tag_store.tiers->n; i++) {
        tier_t *t = tag_store.tiers->t[i];
        tier_stats_t *s = tier_stats(t);
        buf_printf(b,
                   "tier_%s:kind=%s,score=%.17g,capacity=%llu,used=%llu,free=%llu,blobs=%llu,"
                   "reads=%llu,writes=%llu,bytes_read=%llu,bytes_written=%llu\r\n",
                   tier_name(t), tier_kind(t) == TIER_RAM ? "ram" : "file", tier_score(t),
                   (unsigned long long)tier_capacity(t), (unsigned long long)tier_used(t),
                   (unsigned long long)tier_free(t), (unsigned long long)s->blobs,
                   (unsigned long long)s->reads, (unsigned long long)s->writes,
                   (unsigned long long)s->bytes_read, (unsigned long long)s->bytes_written);
    }
    buf_printf(b, "tier_io_inflight:%d\r\n\r\n", io_in_flight());
}

/* EXEC's question for queued tag commands (command.h): the blob's wait name while it is busy
 * for this command. */
static size_t busy_waitname(client_t *c, int argc, const resp_arg_t *argv, int for_write,
                            char *name)
{
    kv_t *kv = db_lookup(c->db, argv[1].ptr, argv[1].len);
    if (argc < 3 || !kv || kv->val->type != OBJ_TAG) return 0;
    tag_obj_t *t = (tag_obj_t *)kv->val;
    if (!tag_blob_busy(t, argv[2].ptr, argv[2].len, for_write)) return 0;
    return tag_blob_waitname(t, argv[2].ptr, argv[2].len, name);
}

static size_t write_waitname(client_t *c, int argc, const resp_arg_t *argv, char *name)
{
    return busy_waitname(c, argc, argv, 1, name);
}

static size_t read_waitname(client_t *c, int argc, const resp_arg_t *argv, char *name)
{
    return busy_waitname(c, argc, argv, 0, name);
}

#define W CMD_WRITE
#define R CMD_READONLY
#define TAG_CPLX "O(N) in the bytes moved"

command_t cmds_tag[] = {
    CMD_ROW("tput", tput_cmd, -5, W | CMD_DENYOOM, 1, 1, 1, "tag", "0.1.0",
            "Writes bytes into a blob of a tag at an offset, creating both as needed.", TAG_CPLX,
            .waitname = write_waitname, .value_arg = 4),
    CMD_ROW("tget", tget_cmd, -3, R, 1, 1, 1, "tag", "0.1.0",
            "Reads bytes of a blob from an offset.", TAG_CPLX, .waitname = read_waitname),
    CMD_ROW("tsize", tsize_cmd, 3, R | CMD_FAST, 1, 1, 1, "tag", "0.1.0",
            "Returns the size of a blob.", TAG_CPLX, .waitname = read_waitname),
    CMD_ROW("ttruncate", ttruncate_cmd, 4, W | CMD_DENYOOM, 1, 1, 1, "tag", "0.1.0",
            "Shrinks a blob, or grows it with zero bytes.", TAG_CPLX, .waitname = write_waitname),
    CMD_ROW("tdel", tdel_cmd, -3, W | CMD_FAST, 1, 1, 1, "tag", "0.1.0", "Deletes blobs of a tag.",
            TAG_CPLX, .waitname = write_waitname),
    CMD_ROW("tscore", tscore_cmd, 3, R | CMD_FAST, 1, 1, 1, "tag", "0.1.0",
            "Returns the score of a blob.", TAG_CPLX, .waitname = read_waitname),
    CMD_ROW("reorg", reorg_cmd, 4, W, 1, 1, 1, "tag", "0.1.0",
            "Sets the score of a blob and moves it to the tier placement picks.", TAG_CPLX,
            .waitname = write_waitname),
    CMD_ROW("tinfo", tinfo_cmd, 3, R | CMD_FAST, 1, 1, 1, "tag", "0.1.0",
            "Returns the metadata of a blob.", TAG_CPLX, .waitname = read_waitname),
    CMD_ROW("tmeta", tmeta_cmd, 8, W | CMD_FAST, 1, 1, 1, "tag", "0.1.0",
            "Sets the times and counters of a blob (as the append-only file restores them).",
            TAG_CPLX, .waitname = write_waitname),
    CMD_ROW("tlist", tlist_cmd, -2, R, 1, 1, 1, "tag", "0.1.0",
            "Returns the names of the blobs of a tag, every one, or in order from a name on.",
            "O(N) for every name, O(log N + COUNT) from a name on", .waitname = read_waitname),
    CMD_ROW("tscan", tscan_cmd, -3, R, 1, 1, 1, "tag", "0.1.0",
            "Incrementally lists the blobs of a tag.", TAG_CPLX, .waitname = read_waitname),
    CMD_ROW("tlen", tlen_cmd, 2, R | CMD_FAST, 1, 1, 1, "tag", "0.1.0",
            "Returns the number of blobs of a tag.", TAG_CPLX, .waitname = read_waitname),
    CMD_ROW("tiers", tiers_cmd, 1, R | CMD_LOADING | CMD_STALE, 0, 0, 0, "tag", "0.1.0",
            "Returns the tiers with their capacity and use.", TAG_CPLX, .waitname = read_waitname),
    /* search (server/cmd/search.c): no keys, nothing to wait on per blob */
    {.name = "tquery",
     .proc = tquery_cmd,
     .arity = -3,
     .flags = R,
     .group = "tag",
     .since = "0.1.0",
     .summary = "Lists tag names, or blob names by tag and time, matching regexes.",
     .complexity = "O(log N + M) with M the names under the patterns' literal prefixes"},
    {.name = "tsearch",
     .proc = tsearch_cmd,
     .arity = -2,
     .flags = R,
     .group = "tag",
     .since = "0.1.0",
     .summary = "Ranks blobs by keyword relevance of their contents (BM25).",
     .complexity = "O(P + M log K) with P the postings of the query terms"},
    {NULL},
};
