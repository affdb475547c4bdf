/* server/cmd/migrate.c - MIGRATE (as Redis 7.0's cluster.c has it, without blocking the loop)
 * and MIGRATE-COMMIT, the target's last step of a streamed tag. Design: docs/migrate.md.
 *
 * A MIGRATE is a job: the client waits (block_for_io) while the job connects to the target
 * (server/net/outconn.h; connections are cached per host:port for 10 s, as Redis's), sends
 * AUTH and SELECT when needed, then one command per key, and reads the replies as they come.
 * Keys of the standard types (and tags of at most MIGRATE_DUMP_MAX bytes) go as RESTORE (or
 * RESTORE-ASKING in cluster mode) with their DUMP payload, made when the job starts, as Redis
 * sends them. Larger tags are streamed: TPUT of pieces of MIGRATE_PIECE bytes (read from RAM
 * on the loop, from file tiers on the thread pool) and TMETA per blob into a temporary key of
 * the same hash slot, which carries a TTL so that an interrupted transfer leaves nothing for
 * long; once every piece was acknowledged, MIGRATE-COMMIT checks the blob count and bytes and
 * renames it to the key in one step (BUSYKEY without REPLACE). At most MIGRATE_AHEAD bytes of
 * pieces are unacknowledged at once, so the job holds a few MiB whatever the tag's size.
 *
 * Every key of a job is "in flight" until the job ends: writes to it wait (migrate_call_gate),
 * reads are served. A key acknowledged by the target is deleted (without COPY) when the job
 * ends, and logged as DEL. Replies and errors are Redis's: +OK, +NOKEY, "IOERR error or timeout
 * connecting to the client", "IOERR error or timeout writing/reading to target instance",
 * "ERR Target instance replied with error: ...". Loop thread. */
#include "server/cmd/migrate.h"

#include "common/alloc.h"
#include "common/dict.h"
#include "common/keyslot.h"
#include "common/status.h"
#include "common/util.h"
#include "server/block.h"
#include "server/executor.h"
#include "server/hooks.h"
#include "server/net/outconn.h"
#include "server/persist/aof.h"
#include "server/persist/rdb.h"
#include "server/reply.h"
#include "server/server.h"
#include "storage/t_tag.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define MIGRATE_CACHE_MAX 64        /* cached connections, as Redis's */
#define MIGRATE_CACHE_TTL_MS 10000  /* closed after 10 s unused, as Redis's */
#define MIGRATE_DUMP_MAX (1u << 20) /* tags up to this many bytes go as one RESTORE */
#define MIGRATE_PIECE (1u << 20)    /* bytes per TPUT of a streamed tag */
#define MIGRATE_AHEAD (4u << 20)    /* piece bytes sent and not yet acknowledged */
#define MIGRATE_EXPECT_MAX 1024     /* replies awaited before the job stops sending */
#define MIGRATE_TMP_TTL_MS 60000    /* TTL of a streamed tag's temporary key on the target */
#define MIGRATE_REFRESH_PIECES 16   /* pieces between refreshes of that TTL */
#define MIGRATE_LINE_MAX 4096       /* bytes kept of a reply line */

static int cluster_mode(void)
{
    return srv.cfg.cluster_enabled;
}

/* ---- keys in flight ---- */

typedef struct flight {
    dict_node_t node; /* aux: jobs holding it */
    size_t len;       /* of name: dbid (4 bytes) then the key */
    char name[];
} flight_t;

static const void *flight_key(const dict_node_t *n, size_t *len)
{
    const flight_t *f = (const flight_t *)n;
    *len = f->len;
    return f->name;
}

static const dict_type_t flight_type = {flight_key, NULL};
static dict_t flights;
static int flights_ready;

/* The wait name of key in db dbid: "migrate:" dbid key, into a new allocation. */
static char *wait_name(int dbid, const char *key, size_t len, size_t *out)
{
    char *n = xmalloc(len + 24);
    size_t h = (size_t)snprintf(n, 24, "migrate:%d:", dbid);
    memcpy(n + h, key, len);
    *out = h + len;
    return n;
}

static char *flight_name(int dbid, const char *key, size_t len, size_t *out)
{
    char *n = xmalloc(len + 4);
    memcpy(n, &dbid, 4);
    memcpy(n + 4, key, len);
    *out = len + 4;
    return n;
}

static void flight_add(int dbid, const char *key, size_t len)
{
    if (!flights_ready) {
        dict_init(&flights, &flight_type);
        flights_ready = 1;
    }
    size_t n;
    char *name = flight_name(dbid, key, len, &n);
    uint32_t h = dict_hash(name, n);
    flight_t *f = (flight_t *)dict_find(&flights, name, n, h);
    if (!f) {
        f = xmalloc(sizeof(*f) + n);
        f->node.hash = h;
        f->node.aux = 0;
        f->len = n;
        memcpy(f->name, name, n);
        dict_insert(&flights, &f->node);
    }
    f->node.aux++;
    xfree(name);
}

static void flight_del(int dbid, const char *key, size_t len)
{
    size_t n;
    char *name = flight_name(dbid, key, len, &n);
    uint32_t h = dict_hash(name, n);
    flight_t *f = (flight_t *)dict_find(&flights, name, n, h);
    if (f && --f->node.aux == 0) {
        dict_unlink(&flights, name, n, h);
        xfree(f);
        size_t wn;
        char *w = wait_name(dbid, key, len, &wn);
        block_signal_name(w, wn);
        xfree(w);
    }
    xfree(name);
}

static int flight_has(int dbid, const char *key, size_t len)
{
    size_t n;
    char *name = flight_name(dbid, key, len, &n);
    int found = dict_find(&flights, name, n, dict_hash(name, n)) != NULL;
    xfree(name);
    return found;
}

int migrate_call_gate(client_t *c, const command_t *cmd)
{
    if (!flights_ready || dict_size(&flights) == 0) return 0;
    if (!(command_call_flags(c, cmd) & CMD_WRITE)) return 0;
    int stack[16], *pos = c->argc <= 16 ? stack : xmalloc(sizeof(int) * (size_t)c->argc);
    int n = command_get_keys(cmd, c->argc, c->argv, pos, c->argc), held = 0;
    for (int i = 0; i < n && !held; i++) {
        const resp_arg_t *k = &c->argv[pos[i]];
        if (!flight_has(c->dbid, k->ptr, k->len)) continue;
        held = 1;
        /* in cluster mode the retry must go through the slot routing again (the key may have
         * moved): cluster clients retry TRYAGAIN */
        if ((c->flags & (CLIENT_MULTI | CLIENT_SCRIPT | CLIENT_FAKE)) || cluster_mode()) {
            reply_error(c, "TRYAGAIN the key is being migrated (MIGRATE in flight), try again");
        } else {
            size_t wn;
            char *w = wait_name(c->dbid, k->ptr, k->len, &wn);
            block_on_name(c, w, wn);
            xfree(w);
        }
    }
    if (pos != stack) xfree(pos);
    return held;
}

/* ---- cached connections ---- */

typedef struct mconn {
    char *name; /* "host:port" */
    outconn_t *oc;
    long long last_dbid; /* -1: SELECT next time */
    long long last_use_ms;
    int cached;       /* in the cache (else closed when its job ends) */
    struct mjob *job; /* the job using it, or NULL */
    struct mconn *next;
} mconn_t;

static mconn_t *cache;
static int ncached;

static void conn_free(mconn_t *m)
{
    if (m->cached) {
        mconn_t **p = &cache;
        while (*p != m) p = &(*p)->next;
        *p = m->next;
        ncached--;
    }
    outconn_close(m->oc);
    xfree(m->name);
    xfree(m);
}

/* An idle cached connection failed (the peer closed it): it goes. */
static void idle_failed(void *ud, int status)
{
    (void)status;
    conn_free(ud);
}

static const outconn_ops_t idle_ops = {NULL, NULL, idle_failed, NULL};

int migrate_cached_sockets(void)
{
    return ncached;
}

/* ---- jobs ---- */

enum key_state { K_PENDING, K_SENT, K_OK, K_FAILED, K_SKIPPED };
enum expect_kind { E_AUTH, E_SELECT, E_KEY, E_STEP, E_IGNORE };

typedef struct mkey {
    char *name;
    size_t len;
    tag_obj_t *tag; /* streamed (compared with what the key holds, never followed unchecked) */
    buf_t payload;  /* RESTORE's payload otherwise */
    char *tmp;      /* a streamed tag's temporary key once committed (dropped if refused) */
    size_t tmplen;
    int state;
    int steps; /* replies of its steps still to come */
} mkey_t;

typedef struct expect {
    int key;
    int kind;
    uint64_t bytes; /* piece bytes the reply acknowledges */
} expect_t;

typedef struct mjob {
    client_t *c; /* NULL once the client went away */
    int dbid;
    long long dbid_target, timeout;
    int copy, replace;
    char *user, *pass; /* AUTH's (binary-safe: userlen, passlen bytes) */
    size_t userlen, passlen;
    char *host;
    int port;
    mconn_t *m;
    mkey_t *keys;
    int nkeys, cur;
    int greeted, got_reply, may_retry, write_error, socket_error;
    char *error; /* the first error reply (without '-') */
    expect_t *exp;
    int nexp, exphead, expcap;
    uint64_t unacked;
    char line[MIGRATE_LINE_MAX];
    size_t linelen;
    int line_over;
    /* the tag being streamed */
    int streaming;
    char *tmp;
    size_t tmplen;
    char **blobs;
    size_t *blens;
    uint64_t nblobs, bi, total, pieces;
    blob_t *held;
    blob_info_t info;
    uint64_t off;
    int reading;  /* a piece is read on the thread pool */
    int busy;     /* the blob had a write in flight: the cron tries again */
    int finished; /* replied; freed once no piece is read */
    char *piece;
    uint64_t piece_len;
    struct mjob *next; /* every job, for the cron and shutdown */
} mjob_t;

static mjob_t *jobs;
static uint64_t job_seq;

static void pump(mjob_t *j);
static void job_end(mjob_t *j);

static void expect_push(mjob_t *j, int key, int kind, uint64_t bytes)
{
    if (j->nexp == j->expcap) {
        int cap = j->expcap ? j->expcap * 2 : 16;
        expect_t *e = xmalloc(sizeof(*e) * (size_t)cap);
        for (int i = 0; i < j->nexp; i++) e[i] = j->exp[(j->exphead + i) % j->expcap];
        xfree(j->exp);
        j->exp = e;
        j->exphead = 0;
        j->expcap = cap;
    }
    j->exp[(j->exphead + j->nexp) % j->expcap] = (expect_t){key, kind, bytes};
    j->nexp++;
    if (key >= 0 && kind == E_STEP) j->keys[key].steps++;
}

/* Sends one command; argv[i] has len[i] bytes. */
static void send_cmd(mjob_t *j, int argc, const char *const *argv, const size_t *len)
{
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        buf_printf(&b, "$%zu\r\n", len[i]);
        buf_append(&b, argv[i], len[i]);
        buf_append(&b, "\r\n", 2);
    }
    outconn_write_take(j->m->oc, b.data, b.len);
}

static void send_strs(mjob_t *j, int argc, const char *const *argv)
{
    size_t len[8];
    for (int i = 0; i < argc; i++) len[i] = strlen(argv[i]);
    send_cmd(j, argc, argv, len);
}

static void set_error(mjob_t *j, const char *msg)
{
    if (!j->error) j->error = xstrdup(msg);
}

/* ---- streamed tags ---- */

/* In cluster mode the target imports the slot: each command on its keys needs ASKING first. */
static void asking(mjob_t *j, int k)
{
    if (!cluster_mode()) return;
    send_strs(j, 1, (const char *[]){"ASKING"});
    expect_push(j, k, E_STEP, 0);
}

/* The temporary key of key: key.cte-migrate.<id>, in key's hash slot (a key without a hash
 * tag gets two more bytes, without braces, that bring the name's CRC16 to the key's slot). */
static char *tmp_name(const char *key, size_t len, size_t *out)
{
    char suffix[64];
    int n = snprintf(suffix, sizeof(suffix), ".cte-migrate.%.8s.%llu", srv.run_id,
                     (unsigned long long)++job_seq);
    char *t = xmalloc(len + (size_t)n + 3);
    memcpy(t, key, len);
    memcpy(t + len, suffix, (size_t)n);
    size_t tl = len + (size_t)n;
    unsigned slot = keyslot(key, len);
    if (keyslot(t, tl) != slot) {
        for (unsigned v = 0; v < 65536; v++) {
            unsigned char a = (unsigned char)(v >> 8), b = (unsigned char)v;
            if (a == '{' || a == '}' || b == '{' || b == '}') continue;
            t[tl] = (char)a;
            t[tl + 1] = (char)b;
            if (keyslot(t, tl + 2) == slot) break;
        }
        tl += 2;
    }
    *out = tl;
    return t;
}

static void collect(void *ud, blob_t *b)
{
    mjob_t *j = ud;
    size_t n;
    const char *name = blob_name(b, &n);
    j->blobs[j->nblobs] = xmemdup(name, n);
    j->blens[j->nblobs++] = n;
}

static void stream_reset(mjob_t *j)
{
    tag_blob_release(j->held);
    j->held = NULL;
    for (uint64_t i = 0; i < j->nblobs; i++) xfree(j->blobs[i]);
    xfree(j->blobs);
    xfree(j->blens);
    xfree(j->tmp);
    xfree(j->piece);
    j->piece = NULL;
    j->blobs = NULL;
    j->blens = NULL;
    j->tmp = NULL;
    j->nblobs = j->bi = j->total = j->pieces = 0;
    j->streaming = 0;
}

/* 1 if key k still holds the tag the job streams. */
static int tag_current(mjob_t *j, int k)
{
    kv_t *kv = db_find(&srv.db[j->dbid], j->keys[k].name, j->keys[k].len);
    return kv && kv->val == (obj_t *)j->keys[k].tag;
}

static void stream_begin(mjob_t *j, int k)
{
    tag_obj_t *t = j->keys[k].tag;
    uint64_t n = tag_len(t);
    j->blobs = xmalloc(sizeof(char *) * (n ? n : 1));
    j->blens = xmalloc(sizeof(size_t) * (n ? n : 1));
    j->nblobs = 0;
    tag_foreach(t, collect, j);
    j->tmp = tmp_name(j->keys[k].name, j->keys[k].len, &j->tmplen);
    j->bi = j->total = j->pieces = 0;
    j->streaming = 1;
}

static void send_tput(mjob_t *j, int k, const char *data, uint64_t len, int take)
{
    char off[24], score[40];
    size_t offl = ull_to_str(off, j->off);
    size_t scl = (size_t)snprintf(score, sizeof(score), "%.17g", j->info.score);
    size_t nlen = j->blens[j->bi];
    asking(j, k);
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "*6\r\n$4\r\nTPUT\r\n$%zu\r\n", j->tmplen);
    buf_append(&b, j->tmp, j->tmplen);
    buf_printf(&b, "\r\n$%zu\r\n", nlen);
    buf_append(&b, j->blobs[j->bi], nlen);
    buf_printf(&b, "\r\n$%zu\r\n%.*s\r\n$%llu\r\n", offl, (int)offl, off, (unsigned long long)len);
    outconn_write_take(j->m->oc, b.data, b.len);
    if (take)
        outconn_write_take(j->m->oc, (char *)data, len);
    else
        outconn_write(j->m->oc, data, len);
    buf_init(&b);
    buf_printf(&b, "\r\n$%zu\r\n%s\r\n", scl, score);
    outconn_write_take(j->m->oc, b.data, b.len);
    expect_push(j, k, E_STEP, len);
    j->unacked += len;
    j->off += len;
    j->total += len;
    if (++j->pieces % MIGRATE_REFRESH_PIECES == 1) { /* from the first piece on */
        char ttl[24];
        size_t tl = ll_to_str(ttl, MIGRATE_TMP_TTL_MS);
        asking(j, k);
        send_cmd(j, 3, (const char *[]){"PEXPIRE", j->tmp, ttl}, (size_t[]){7, j->tmplen, tl});
        expect_push(j, k, E_STEP, 0);
    }
}

static void send_meta(mjob_t *j, int k)
{
    char v[5][24];
    const char *argv[8] = {"TMETA", j->tmp, j->blobs[j->bi]};
    size_t len[8] = {5, j->tmplen, j->blens[j->bi]};
    long long vals[5] = {j->info.ctime, j->info.mtime, j->info.atime, (long long)j->info.reads,
                         (long long)j->info.writes};
    for (int i = 0; i < 5; i++) {
        len[3 + i] = ll_to_str(v[i], vals[i] < 0 ? 0 : vals[i]);
        argv[3 + i] = v[i];
    }
    asking(j, k);
    send_cmd(j, 8, argv, len);
    expect_push(j, k, E_STEP, 0);
}

static void piece_done(void *ud, int status)
{
    mjob_t *j = ud;
    j->reading = 0;
    char *p = j->piece;
    j->piece = NULL;
    if (j->finished) {
        xfree(p);
        job_end(j);
        return;
    }
    if (status < 0) {
        xfree(p);
        char msg[128];
        snprintf(msg, sizeof(msg), "ERR tier I/O failed while reading the tag: %s",
                 status_str(status));
        set_error(j, msg);
        j->keys[j->cur].state = K_FAILED;
    } else {
        send_tput(j, j->cur, p, j->piece_len, 1);
    }
    pump(j);
}

/* The temporary key goes (a failed or abandoned transfer); its reply is not awaited for. */
static void send_drop(mjob_t *j, int k)
{
    asking(j, k);
    send_cmd(j, 2, (const char *[]){"DEL", j->tmp}, (size_t[]){3, j->tmplen});
    expect_push(j, -1, E_IGNORE, 0);
}

/* One step of streaming key k: 1 when the key is done (committed or given up), 0 when it
 * must wait (a piece being read, the window full, replies to come before the commit). */
static int stream_step(mjob_t *j, int k)
{
    mkey_t *key = &j->keys[k];
    if (!j->streaming) stream_begin(j, k);
    for (;;) {
        if (j->reading || j->busy) return 0;
        if (key->state == K_FAILED || key->state == K_SKIPPED || !tag_current(j, k)) {
            if (key->state != K_FAILED) key->state = K_SKIPPED; /* deleted or expired meanwhile */
            send_drop(j, k);
            stream_reset(j);
            return 1;
        }
        if (j->unacked >= MIGRATE_AHEAD || outconn_pending(j->m->oc) >= MIGRATE_AHEAD ||
            j->nexp >= MIGRATE_EXPECT_MAX)
            return 0;
        if (!j->held) {
            if (j->bi == j->nblobs) {
                if (key->steps > 0) return 0; /* every piece acknowledged before the commit */
                return -1;
            }
            j->held = tag_blob_hold(key->tag, j->blobs[j->bi], j->blens[j->bi]);
            if (!j->held) {
                key->state = K_SKIPPED; /* cannot happen while writes wait: give up the key */
                continue;
            }
            blob_get_info(j->held, &j->info);
            j->off = 0;
            if (j->info.size == 0) send_tput(j, k, "", 0, 0);
        }
        if (j->off < j->info.size) {
            uint64_t n = j->info.size - j->off;
            if (n > MIGRATE_PIECE) n = MIGRATE_PIECE;
            const char *view = blob_ram_view(j->held, j->off, n);
            if (view) {
                send_tput(j, k, view, n, 0);
                continue;
            }
            char *buf = xmalloc(n);
            tag_plan_t *plan = NULL;
            int rc = blob_peek(j->held, j->off, n, buf, &plan);
            if (rc == ST_OK) {
                send_tput(j, k, buf, n, 1);
                continue;
            }
            if (rc == ST_PENDING) {
                j->reading = 1;
                j->piece = buf;
                j->piece_len = n;
                executor_run(plan, 0, piece_done, j);
                return 0;
            }
            xfree(buf);
            j->busy = 1; /* a write plan of the blob is in flight: try again from the cron */
            return 0;
        }
        send_meta(j, k);
        tag_blob_release(j->held);
        j->held = NULL;
        j->bi++;
    }
}

/* The commit of a streamed tag: every piece was acknowledged. */
static void send_commit(mjob_t *j, int k, long long ttl)
{
    char t[24], nb[24], by[24];
    const char *argv[7] = {"MIGRATE-COMMIT", j->tmp, j->keys[k].name, t, nb, by, "REPLACE"};
    size_t len[7] = {14,
                     j->tmplen,
                     j->keys[k].len,
                     ll_to_str(t, ttl),
                     ull_to_str(nb, j->nblobs),
                     ull_to_str(by, j->total),
                     7};
    asking(j, k);
    send_cmd(j, j->replace ? 7 : 6, argv, len);
    expect_push(j, k, E_KEY, 0);
}

/* ---- sending ---- */

/* The TTL to send for key k: 0 for none, -1 if it expired (the key is skipped). */
static long long key_ttl(mjob_t *j, int k)
{
    kv_t *kv = db_find(&srv.db[j->dbid], j->keys[k].name, j->keys[k].len);
    long long when = kv ? db_get_expire(&srv.db[j->dbid], kv) : -1;
    if (when == -1) return 0;
    long long ttl = when - time_ms();
    if (ttl < 0) return -1;
    return ttl < 1 ? 1 : ttl;
}

static void greet(mjob_t *j)
{
    if (j->pass) {
        if (j->user)
            send_cmd(j, 3, (const char *[]){"AUTH", j->user, j->pass},
                     (size_t[]){4, j->userlen, j->passlen});
        else
            send_cmd(j, 2, (const char *[]){"AUTH", j->pass}, (size_t[]){4, j->passlen});
        expect_push(j, -1, E_AUTH, 0);
    }
    if (j->m->last_dbid != j->dbid_target) {
        char db[24];
        size_t dl = ll_to_str(db, j->dbid_target);
        send_cmd(j, 2, (const char *[]){"SELECT", db}, (size_t[]){6, dl});
        expect_push(j, -1, E_SELECT, 0);
    }
    j->greeted = 1;
}

static void send_restore(mjob_t *j, int k, long long ttl)
{
    char t[24];
    const char *argv[5] = {cluster_mode() ? "RESTORE-ASKING" : "RESTORE", j->keys[k].name, t,
                           j->keys[k].payload.data, "REPLACE"};
    size_t len[5] = {strlen(argv[0]), j->keys[k].len, ll_to_str(t, ttl), j->keys[k].payload.len, 7};
    send_cmd(j, j->replace ? 5 : 4, argv, len);
    expect_push(j, k, E_KEY, 0);
}

/* Sends what can be sent now; ends the job when everything was answered. */
static void pump(mjob_t *j)
{
    if (j->finished || !j->m || !outconn_ok(j->m->oc)) return;
    if (!j->greeted) greet(j);
    while (j->cur < j->nkeys) {
        int k = j->cur;
        mkey_t *key = &j->keys[k];
        if (key->tag) {
            int rc = stream_step(j, k);
            if (rc == 0) break;
            if (rc < 0) {
                long long ttl = key_ttl(j, k);
                if (ttl < 0) {
                    key->state = K_SKIPPED;
                    send_drop(j, k);
                } else {
                    send_commit(j, k, ttl);
                    if (key->state != K_FAILED) key->state = K_SENT; /* AUTH/SELECT failed */
                    key->tmp = j->tmp;
                    key->tmplen = j->tmplen;
                    j->tmp = NULL;
                }
                stream_reset(j);
            }
        } else {
            long long ttl = key_ttl(j, k);
            if (ttl < 0)
                key->state = K_SKIPPED;
            else {
                send_restore(j, k, ttl);
                if (key->state != K_FAILED) key->state = K_SENT; /* AUTH/SELECT failed */
            }
        }
        j->cur++;
    }
    int waiting = j->nexp > 0 || outconn_pending(j->m->oc) > 0;
    outconn_set_timeout(j->m->oc, waiting && !j->reading ? j->timeout : 0);
    if (j->cur == j->nkeys && !waiting && !j->reading) job_end(j);
}

/* ---- replies ---- */

static void on_line(mjob_t *j, const char *line, size_t len)
{
    if (j->nexp == 0) return; /* nothing asked for: ignore */
    expect_t e = j->exp[j->exphead];
    j->exphead = (j->exphead + 1) % j->expcap;
    j->nexp--;
    j->got_reply = 1;
    int err = len > 0 && line[0] == '-';
    if (e.kind == E_STEP) {
        j->keys[e.key].steps--;
        j->unacked -= e.bytes;
    }
    if (err && e.kind != E_IGNORE) {
        if (!j->error) {
            char *msg = xmalloc(len + 48);
            snprintf(msg, len + 48, "ERR Target instance replied with error: %.*s", (int)(len - 1),
                     line + 1);
            j->error = msg;
        }
        if (e.kind == E_KEY && j->keys[e.key].tmp) {
            /* a commit refused before it ran (cluster routing): its temporary key goes */
            mkey_t *k = &j->keys[e.key];
            if (cluster_mode()) {
                send_strs(j, 1, (const char *[]){"ASKING"});
                expect_push(j, -1, E_IGNORE, 0);
            }
            send_cmd(j, 2, (const char *[]){"DEL", k->tmp}, (size_t[]){3, k->tmplen});
            expect_push(j, -1, E_IGNORE, 0);
        }
        if (e.key >= 0)
            j->keys[e.key].state = K_FAILED;
        else
            for (int i = 0; i < j->nkeys; i++) j->keys[i].state = K_FAILED;
    } else if (e.kind == E_KEY && j->keys[e.key].state == K_SENT) {
        j->keys[e.key].state = K_OK;
    }
}

static void on_data(void *ud, const char *p, size_t n)
{
    mjob_t *j = ud;
    for (size_t i = 0; i < n && !j->finished; i++) {
        char ch = p[i];
        if (ch == '\n' && j->linelen > 0 && j->line[j->linelen - 1] == '\r') {
            on_line(j, j->line, j->linelen - 1);
            j->linelen = 0;
            continue;
        }
        if (j->linelen < sizeof(j->line))
            j->line[j->linelen++] = ch;
        else
            j->line[sizeof(j->line) - 1] = '\r'; /* keep the end marker checkable */
    }
    pump(j);
}

static void on_written(void *ud)
{
    pump(ud);
}

static void restart(mjob_t *j);

static void on_failed(void *ud, int status)
{
    mjob_t *j = ud;
    int pending = outconn_pending(j->m->oc) > 0;
    j->m->job = NULL;
    conn_free(j->m);
    j->m = NULL;
    if (!j->got_reply && j->may_retry && status != -ETIMEDOUT && !j->reading) {
        j->may_retry = 0; /* a cached connection the peer closed: once more, as Redis */
        restart(j);
        return;
    }
    j->socket_error = 1;
    j->write_error = pending;
    job_end(j);
}

static void on_connected(void *ud, int status)
{
    mjob_t *j = ud;
    if (status < 0) {
        j->m->job = NULL;
        conn_free(j->m);
        j->m = NULL;
        set_error(j, "IOERR error or timeout connecting to the client");
        job_end(j);
        return;
    }
    pump(j);
}

static const outconn_ops_t job_ops = {on_connected, on_data, on_failed, on_written};

/* Takes the cached connection to the job's target, or opens one (cached when there is room
 * and no other job holds the cached one). */
static void attach(mjob_t *j)
{
    char name[300];
    snprintf(name, sizeof(name), "%s:%d", j->host, j->port);
    mconn_t *m = cache;
    while (m && strcmp(m->name, name) != 0) m = m->next;
    if (m && !m->job && outconn_ok(m->oc)) {
        m->job = j;
        m->last_use_ms = time_ms();
        j->m = m;
        outconn_set_owner(m->oc, &job_ops, j);
        pump(j);
        return;
    }
    int cached = !m;
    if (cached && ncached == MIGRATE_CACHE_MAX) {
        /* too many: drop an idle one, or keep this one out of the cache */
        mconn_t *idle = cache;
        while (idle && idle->job) idle = idle->next;
        if (idle) conn_free(idle);
        else cached = 0;
    }
    m = xcalloc(1, sizeof(*m));
    m->name = xstrdup(name);
    m->last_dbid = -1;
    m->last_use_ms = time_ms();
    m->job = j;
    m->cached = cached;
    if (cached) {
        m->next = cache;
        cache = m;
        ncached++;
    }
    j->m = m;
    m->oc = outconn_open(j->host, j->port, &job_ops, j);
    outconn_set_timeout(m->oc, j->timeout);
}

/* Sends everything again on a new connection (nothing was answered yet). */
static void restart(mjob_t *j)
{
    stream_reset(j);
    j->cur = j->nexp = j->exphead = 0;
    j->unacked = 0;
    j->greeted = 0;
    j->linelen = 0;
    for (int i = 0; i < j->nkeys; i++) {
        mkey_t *k = &j->keys[i];
        k->steps = 0;
        k->state = K_PENDING;
        xfree(k->tmp);
        k->tmp = NULL;
    }
    attach(j);
}

static void detach_client(void *job)
{
    ((mjob_t *)job)->c = NULL;
}

static void job_free(mjob_t *j)
{
    mjob_t **p = &jobs;
    while (*p && *p != j) p = &(*p)->next;
    if (*p) *p = j->next;
    stream_reset(j);
    for (int i = 0; i < j->nkeys; i++) {
        flight_del(j->dbid, j->keys[i].name, j->keys[i].len);
        xfree(j->keys[i].name);
        xfree(j->keys[i].tmp);
        buf_deinit(&j->keys[i].payload);
    }
    xfree(j->keys);
    xfree(j->exp);
    xfree(j->user);
    xfree(j->pass);
    xfree(j->host);
    xfree(j->error);
    xfree(j);
}

/* Deletes the keys the target acknowledged (without COPY) and logs them as one DEL. */
static void delete_acked(mjob_t *j)
{
    db_t *db = &srv.db[j->dbid];
    resp_arg_t *argv = xmalloc(sizeof(resp_arg_t) * (size_t)(j->nkeys + 1));
    int argc = 1;
    argv[0] = (resp_arg_t){"DEL", 3};
    for (int i = 0; i < j->nkeys; i++) {
        mkey_t *k = &j->keys[i];
        if (k->state != K_OK) continue;
        kv_t *kv = db_find(db, k->name, k->len);
        if (!kv || (k->tag && kv->val != (obj_t *)k->tag)) continue;
        db_delete_kv(db, kv);
        server_key_changed(j->c, db, k->name, k->len, NOTIFY_GENERIC, "del");
        argv[argc++] = (resp_arg_t){k->name, k->len};
    }
    if (argc > 1) server_log_propagate(NULL, j->dbid, argc, argv);
    xfree(argv);
}

/* Ends the job: deletes what was acknowledged, replies, gives the connection back. Freed now,
 * or when the piece being read comes back. */
static void job_end(mjob_t *j)
{
    if (!j->finished) {
        j->finished = 1;
        if (!j->copy) delete_acked(j);
        if (j->m) {
            if (j->socket_error || !outconn_ok(j->m->oc)) {
                j->m->job = NULL;
                conn_free(j->m);
            } else {
                j->m->last_dbid = j->error ? -1 : j->dbid_target;
                j->m->last_use_ms = time_ms();
                j->m->job = NULL;
                outconn_set_timeout(j->m->oc, 0);
                if (j->m->cached)
                    outconn_set_owner(j->m->oc, &idle_ops, j->m);
                else
                    conn_free(j->m);
            }
            j->m = NULL;
        }
        if (j->c) {
            if (j->error)
                reply_error(j->c, j->error);
            else if (j->socket_error)
                reply_errorf(j->c, "IOERR error or timeout %s to target instance",
                             j->write_error ? "writing" : "reading");
            else
                reply_ok(j->c);
            block_io_done(j->c);
        }
    }
    if (!j->reading) job_free(j); /* the writes that waited on its keys may run */
    executor_serve_ready_soon();  /* from a callback of the loop, where they cannot run now */
}

/* ---- MIGRATE ---- */

typedef struct margs {
    int copy, replace, first, nkeys;
    const resp_arg_t *user, *pass;
    long long timeout, dbid;
} margs_t;

static int args_or_reply(client_t *c, margs_t *a)
{
    memset(a, 0, sizeof(*a));
    a->first = 3;
    a->nkeys = 1;
    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        const resp_arg_t *o = &c->argv[j];
        if (arg_is(o, "copy")) {
            a->copy = 1;
        } else if (arg_is(o, "replace")) {
            a->replace = 1;
        } else if (arg_is(o, "auth") && more) {
            a->user = NULL;
            a->pass = &c->argv[++j];
        } else if (arg_is(o, "auth2") && more >= 2) {
            a->user = &c->argv[++j];
            a->pass = &c->argv[++j];
        } else if (arg_is(o, "keys")) {
            if (c->argv[3].len != 0) {
                reply_error(c, "ERR When using MIGRATE KEYS option, the key argument must be set "
                               "to the empty string");
                return -1;
            }
            a->first = j + 1;
            a->nkeys = c->argc - j - 1;
            break;
        } else {
            reply_syntax_error(c);
            return -1;
        }
    }
    if (arg_ll_or_reply(c, &c->argv[5], &a->timeout, NULL) < 0) return -1;
    if (arg_ll_or_reply(c, &c->argv[4], &a->dbid, NULL) < 0) return -1;
    if (a->timeout <= 0) a->timeout = 1000;
    return 0;
}

/* Sums the sizes of a tag's blobs. */
static void add_size(void *ud, blob_t *b)
{
    blob_info_t info;
    blob_get_info(b, &info);
    *(uint64_t *)ud += info.size;
}

/* The port as Redis reads it (atoi: leading digits, else 0), -1 outside 1..65535: the
 * connection then fails as Redis's does. */
static int port_of(const resp_arg_t *a)
{
    long long p = 0;
    size_t i = 0;
    int neg = i < a->len && a->ptr[i] == '-';
    if (neg || (i < a->len && a->ptr[i] == '+')) i++;
    for (; i < a->len && a->ptr[i] >= '0' && a->ptr[i] <= '9' && p <= 65535; i++)
        p = p * 10 + (a->ptr[i] - '0');
    return !neg && p >= 1 && p <= 65535 ? (int)p : -1;
}

/* Fills key i of j from kv: a payload now, or a tag to stream. */
static void key_init(mjob_t *j, int i, const resp_arg_t *name, kv_t *kv)
{
    mkey_t *k = &j->keys[i];
    k->name = xmemdup(name->ptr, name->len);
    k->len = name->len;
    buf_init(&k->payload);
    flight_add(j->dbid, name->ptr, name->len);
    if (kv->val->type == OBJ_TAG) {
        uint64_t size = 0;
        tag_foreach((tag_obj_t *)kv->val, add_size, &size);
        if (size <= MIGRATE_DUMP_MAX &&
            rdb_dump(&k->payload, kv->val, srv.cfg.inert.rdbcompression) == 0)
            return;
        buf_deinit(&k->payload);
        buf_init(&k->payload);
        k->tag = (tag_obj_t *)kv->val;
        return;
    }
    rdb_dump(&k->payload, kv->val, srv.cfg.inert.rdbcompression);
}

static void migrate_cmd(client_t *c)
{
    margs_t a;
    if (args_or_reply(c, &a) < 0) return;
    int port = port_of(&c->argv[2]);
    kv_t **found = xmalloc(sizeof(kv_t *) * (size_t)(a.nkeys ? a.nkeys : 1));
    int n = 0;
    for (int i = 0; i < a.nkeys; i++)
        if ((found[n] = lookup_read(c, &c->argv[a.first + i]))) n++;
    if (n == 0) {
        xfree(found);
        reply_simple(c, "NOKEY");
        return;
    }
    if (port < 0) {
        xfree(found);
        reply_error(c, "IOERR error or timeout connecting to the client");
        return;
    }
    if (c->flags & (CLIENT_MULTI | CLIENT_SCRIPT)) {
        xfree(found);
        reply_error(c, "ERR MIGRATE cannot run inside MULTI/EXEC or a script on this server");
        return;
    }
    mjob_t *j = xcalloc(1, sizeof(*j));
    j->c = c;
    j->dbid = c->dbid;
    j->dbid_target = a.dbid;
    j->timeout = a.timeout;
    j->copy = a.copy;
    j->replace = a.replace;
    j->may_retry = 1;
    if (a.pass) j->pass = xmemdup(a.pass->ptr, j->passlen = a.pass->len);
    if (a.user) j->user = xmemdup(a.user->ptr, j->userlen = a.user->len);
    j->host = xmemdup(c->argv[1].ptr, c->argv[1].len);
    j->port = port;
    j->keys = xcalloc((size_t)n, sizeof(mkey_t));
    for (int i = 0, f = 0; i < a.nkeys && f < n; i++) {
        const resp_arg_t *name = &c->argv[a.first + i];
        kv_t *kv = db_find(c->db, name->ptr, name->len);
        if (kv && kv == found[f]) key_init(j, f++, name, kv);
    }
    j->nkeys = n;
    xfree(found);
    j->next = jobs;
    jobs = j;
    block_for_io(c, detach_client, j);
    attach(j);
}

/* Redis's migrateGetKeys: the key argument, or what follows KEYS (none when KEYS comes with
 * a key argument that is not empty: MIGRATE answers the syntax error). */
static int migrate_getkeys(int argc, const resp_arg_t *argv, int *pos, int max)
{
    int first = 3, num = 1;
    static const struct {
        const char *name;
        int skip;
    } skip[] = {{"copy", 0}, {"replace", 0}, {"auth", 1}, {"auth2", 2}};
    for (int i = 6; i < argc; i++) {
        if (arg_is(&argv[i], "keys")) {
            if (argv[3].len > 0)
                num = 0;
            else {
                first = i + 1;
                num = argc - first;
            }
            break;
        }
        for (size_t s = 0; s < sizeof(skip) / sizeof(skip[0]); s++)
            if (arg_is(&argv[i], skip[s].name)) {
                i += skip[s].skip;
                break;
            }
    }
    if (argc <= 3) num = 0;
    int n = 0;
    for (int i = 0; i < num && n < max; i++) pos[n++] = first + i;
    return n;
}

/* ---- MIGRATE-COMMIT tmp key ttl blobs bytes [REPLACE] [ABSTTL] ---- */

/* A commit that fails deletes the temporary key (logged as DEL): nothing of the transfer is
 * left behind. */
static void drop_tmp(client_t *c, kv_t *kv)
{
    if (!kv) return;
    const resp_arg_t *tmp = &c->argv[1];
    db_delete_kv(c->db, kv);
    server_key_changed(c, c->db, tmp->ptr, tmp->len, NOTIFY_GENERIC, "del");
    aof_replace_argv(c, 2, (resp_arg_t[]){{"DEL", 3}, *tmp});
}

static void commit_cmd(client_t *c)
{
    const resp_arg_t *tmp = &c->argv[1], *key = &c->argv[2];
    long long ttl, nblobs, nbytes;
    int replace = 0, absttl = 0;
    for (int i = 6; i < c->argc; i++) {
        if (arg_is(&c->argv[i], "replace"))
            replace = 1;
        else if (arg_is(&c->argv[i], "absttl"))
            absttl = 1;
        else {
            reply_syntax_error(c);
            return;
        }
    }
    if (arg_ll_or_reply(c, &c->argv[3], &ttl, NULL) < 0 ||
        arg_ll_or_reply(c, &c->argv[4], &nblobs, NULL) < 0 ||
        arg_ll_or_reply(c, &c->argv[5], &nbytes, NULL) < 0)
        return;
    if (ttl < 0) {
        reply_error(c, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    int err = 0;
    /* replaying the append-only file, the temporary key's TTL may lie in the past: the
     * commit found it alive when it ran */
    kv_t *kv =
        srv.loading ? db_find(c->db, tmp->ptr, tmp->len) : lookup_write_type(c, tmp, OBJ_TAG, &err);
    if (err) return;
    if (kv && kv->val->type != OBJ_TAG) kv = NULL;
    uint64_t size = 0;
    if (kv) tag_foreach((tag_obj_t *)kv->val, add_size, &size);
    if (!kv || tag_len((tag_obj_t *)kv->val) != (uint64_t)nblobs || size != (uint64_t)nbytes) {
        drop_tmp(c, kv);
        reply_error(c, "ERR the tag being migrated is missing or incomplete on the target");
        return;
    }
    kv_t *old = srv.loading ? db_find(c->db, key->ptr, key->len) : lookup_write(c, key);
    if (old && !replace && !srv.loading) {
        drop_tmp(c, kv);
        reply_error(c, "BUSYKEY Target key name already exists.");
        return;
    }
    if (old) db_delete_kv(c->db, old);
    long long now = db_now_ms ? db_now_ms : time_ms();
    if (ttl && !absttl) ttl = ttl > LLONG_MAX - now ? LLONG_MAX : ttl + now;
    obj_t *val = db_take_value(c->db, kv);
    server_key_changed(c, c->db, tmp->ptr, tmp->len, NOTIFY_GENERIC, "rename_from");
    if (ttl && ttl <= now && !srv.loading) {
        obj_free(val);
        if (old) server_key_changed(c, c->db, key->ptr, key->len, NOTIFY_GENERIC, "del");
        reply_ok(c);
        return;
    }
    kv = db_add(c->db, key->ptr, key->len, val);
    if (ttl) db_set_expire(c->db, kv, ttl);
    server_key_changed(c, c->db, key->ptr, key->len, NOTIFY_GENERIC, "rename_to");
    if (ttl && !absttl) {
        char t[24];
        resp_arg_t argv[8];
        memcpy(argv, c->argv, sizeof(resp_arg_t) * 6);
        argv[3] = (resp_arg_t){t, ll_to_str(t, ttl)};
        int argc = 6;
        if (replace) argv[argc++] = (resp_arg_t){"REPLACE", 7};
        argv[argc++] = (resp_arg_t){"ABSTTL", 6};
        aof_replace_argv(c, argc, argv);
    }
    reply_ok(c);
}

/* ---- periodic work ---- */

void migrate_cron(long long now_ms)
{
    for (mjob_t *j = jobs, *next; j; j = next) {
        next = j->next; /* pump may end and free j */
        if (j->busy && !j->finished) {
            j->busy = 0;
            pump(j);
        }
    }
    for (mconn_t *m = cache, *next; m; m = next) {
        next = m->next;
        if (!m->job && now_ms - m->last_use_ms > MIGRATE_CACHE_TTL_MS) conn_free(m);
    }
}

void migrate_deinit(void)
{
    while (cache) {
        if (cache->job) cache->job->m = NULL;
        cache->job = NULL;
        conn_free(cache);
    }
}

static const cmd_key_spec_t migrate_specs[] = {
    {.index = 3, .lastkey = 0, .keystep = 1},
    {.index = -2, .keyword = "KEYS", .lastkey = -1, .keystep = 1},
    {0},
};

command_t cmds_migrate[] = {
    {"migrate", migrate_cmd, -6, CMD_WRITE | CMD_MOVABLE_KEYS, 3, 3, 1, "generic", "2.6.0",
     "Atomically transfer a key from a Redis instance to another one.",
     "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the "
     "target instance. See the pages of these commands for time complexity. Also an O(N) data "
     "transfer between the two instances is performed.",
     .acl = "@dangerous", .getkeys = migrate_getkeys,
     .key_flags = "RW access delete|RW access delete incomplete", .key_specs = migrate_specs},
    /* its one declared key is the key: the temporary key shares its slot by construction, and
     * cluster routing serves a single-key command on a slot being imported after ASKING */
    {"migrate-commit", commit_cmd, -6, CMD_WRITE | CMD_DENYOOM, 2, 2, 1, "generic", "7.0.0",
     "Puts a tag streamed by MIGRATE under its key (cte-server's last step of a streamed tag).",
     "O(N) where N is the number of blobs of the tag.", .acl = "@dangerous",
     .key_flags = "OW update"},
    {NULL},
};
