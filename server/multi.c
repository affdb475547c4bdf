/* multi.c - MULTI/EXEC/DISCARD/WATCH/UNWATCH (see multi.h).
 *
 * Queued commands own a copy of their arguments: one block per command holding the argv array
 * followed by the argument bytes. The watch table maps (db id, key) to the clients watching
 * it; each client keeps its own list of watched keys to unwatch in O(keys). */
#include "server/multi.h"

#include "common/alloc.h"
#include "common/dict.h"
#include "server/acl.h"
#include "server/clientmap.h"
#include "server/hooks.h"
#include "server/block.h"
#include "server/reply.h"
#include "server/server.h"

#include <string.h>

typedef struct queued {
    const command_t *cmd;
    int argc;
    resp_arg_t *argv; /* one allocation: argv[argc] then the bytes */
} queued_t;

typedef struct watched {
    int dbid;
    int expired; /* the key was already logically expired when watched */
    size_t len;
    char *key;
} watched_t;

struct tx_state {
    queued_t *q;
    int nq, capq;
    uint32_t flags; /* the call flags of the queued commands, or-ed */
    watched_t *w;
    int nw, capw;
};

/* watch table: (db id, key) -> watching clients */
static clientmap_t watch_map;
static int watch_ready;

static struct tx_state *tx_of(client_t *c)
{
    if (!c->tx) c->tx = xcalloc(1, sizeof(*c->tx));
    return c->tx;
}

static clientmap_entry_t *watch_find(int dbid, const char *key, size_t len)
{
    if (!watch_ready) return NULL;
    char buf[256];
    char *k = clientmap_dbkey(dbid, key, len, buf, sizeof(buf));
    clientmap_entry_t *e = clientmap_find(&watch_map, k, len + 4);
    clientmap_dbkey_free(k, buf);
    return e;
}

static void watch_add(client_t *c, int dbid, const char *key, size_t len)
{
    struct tx_state *tx = tx_of(c);
    for (int i = 0; i < tx->nw; i++)
        if (tx->w[i].dbid == dbid && tx->w[i].len == len && !memcmp(tx->w[i].key, key, len))
            return;
    if (!watch_ready) {
        clientmap_init(&watch_map);
        watch_ready = 1;
    }
    char buf[256];
    char *k = clientmap_dbkey(dbid, key, len, buf, sizeof(buf));
    clientmap_add(&watch_map, k, len + 4, c);
    clientmap_dbkey_free(k, buf);
    if (tx->nw == tx->capw) {
        tx->capw = tx->capw ? tx->capw * 2 : 4;
        tx->w = xrealloc(tx->w, sizeof(watched_t) * (size_t)tx->capw);
    }
    kv_t *kv = db_find(&srv.db[dbid], key, len);
    tx->w[tx->nw++] = (watched_t){dbid, kv && db_is_expired(&srv.db[dbid], kv), len,
                                  xmemdup(key, len)};
}

static void unwatch_all(client_t *c)
{
    struct tx_state *tx = c->tx;
    if (!tx) return;
    for (int i = 0; i < tx->nw; i++) {
        watched_t *x = &tx->w[i];
        char buf[256];
        char *k = clientmap_dbkey(x->dbid, x->key, x->len, buf, sizeof(buf));
        clientmap_remove(&watch_map, k, x->len + 4, c);
        clientmap_dbkey_free(k, buf);
        xfree(x->key);
    }
    tx->nw = 0;
    c->flags &= ~(uint32_t)CLIENT_DIRTY_CAS;
}

static void discard_queue(client_t *c)
{
    struct tx_state *tx = c->tx;
    if (tx) {
        for (int i = 0; i < tx->nq; i++) xfree(tx->q[i].argv);
        tx->nq = 0;
        tx->flags = 0;
        if (tx->capq > 64) {
            xfree(tx->q);
            tx->q = NULL;
            tx->capq = 0;
        }
    }
    c->flags &= ~(uint32_t)(CLIENT_MULTI | CLIENT_DIRTY_EXEC);
}

void multi_reset(client_t *c)
{
    discard_queue(c);
    unwatch_all(c);
    if (c->tx) {
        xfree(c->tx->q);
        xfree(c->tx->w);
        xfree(c->tx);
        c->tx = NULL;
    }
}

static void mark_dirty(clientmap_entry_t *w, db_t *db)
{
    size_t klen;
    const char *key = clientmap_entry_key(w, &klen);
    for (int j = 0; j < w->n; j++) {
        client_t *c = w->clients[j];
        struct tx_state *tx = c->tx;
        int skip = 0;
        for (int i = 0; tx && i < tx->nw; i++) {
            watched_t *x = &tx->w[i];
            /* a key already expired when watched, and now deleted, did not logically change */
            if (x->expired && x->dbid == db->id && x->len == klen && !memcmp(x->key, key, klen)) {
                if (!db_find(db, x->key, x->len)) {
                    x->expired = 0;
                    skip = 1;
                }
                break;
            }
        }
        if (!skip) c->flags |= CLIENT_DIRTY_CAS;
    }
}

void multi_touch_key(db_t *db, const char *key, size_t len)
{
    clientmap_entry_t *w = watch_find(db->id, key, len);
    if (w) mark_dirty(w, db);
}

void multi_touch_db(db_t *db, db_t *other)
{
    if (!watch_ready || clientmap_size(&watch_map) == 0) return;
    dict_iter_t it;
    dict_iter_init(&it, &watch_map.d, 0);
    for (dict_node_t *n; (n = dict_iter_next(&it));) {
        clientmap_entry_t *w = (clientmap_entry_t *)n;
        if (clientmap_entry_db(w) != db->id) continue;
        size_t len;
        const char *key = clientmap_entry_key(w, &len);
        if (db_find(db, key, len) || (other && db_find(other, key, len))) {
            for (int j = 0; j < w->n; j++) w->clients[j]->flags |= CLIENT_DIRTY_CAS;
        }
    }
    dict_iter_deinit(&it);
}

void multi_deinit(void)
{
    if (watch_ready) clientmap_clear(&watch_map);
}

int multi_should_queue(const client_t *c, const command_t *cmd)
{
    if (!(c->flags & CLIENT_MULTI)) return 0;
    const command_t *top = cmd->parent ? cmd->parent : cmd;
    static const char *const direct[] = {"exec", "discard", "multi", "watch", "quit", "reset"};
    for (size_t i = 0; i < sizeof(direct) / sizeof(direct[0]); i++)
        if (strcmp(top->name, direct[i]) == 0) return 0;
    return 1;
}

uint32_t multi_queued_flags(const client_t *c)
{
    return c->tx ? c->tx->flags : 0;
}

int multi_queued_count(const client_t *c)
{
    return c->tx ? c->tx->nq : 0;
}

const command_t *multi_queued_get(const client_t *c, int i, int *argc, const resp_arg_t **argv)
{
    const queued_t *q = &c->tx->q[i];
    *argc = q->argc;
    *argv = q->argv;
    return q->cmd;
}

void multi_flag_error(client_t *c)
{
    if (c->flags & CLIENT_MULTI) c->flags |= CLIENT_DIRTY_EXEC;
}

void multi_queue(client_t *c)
{
    if (c->cmd->flags & CMD_NO_MULTI) {
        reply_error(c, "ERR Command not allowed inside a transaction");
        multi_flag_error(c);
        return;
    }
    struct tx_state *tx = tx_of(c);
    size_t bytes = sizeof(resp_arg_t) * (size_t)c->argc;
    for (int i = 0; i < c->argc; i++) bytes += c->argv[i].len + 1;
    resp_arg_t *argv = xmalloc(bytes);
    char *p = (char *)(argv + c->argc);
    for (int i = 0; i < c->argc; i++) {
        memcpy(p, c->argv[i].ptr, c->argv[i].len);
        p[c->argv[i].len] = '\0';
        argv[i].ptr = p;
        argv[i].len = c->argv[i].len;
        p += c->argv[i].len + 1;
    }
    if (tx->nq == tx->capq) {
        tx->capq = tx->capq ? tx->capq * 2 : 8;
        tx->q = xrealloc(tx->q, sizeof(queued_t) * (size_t)tx->capq);
    }
    tx->q[tx->nq++] = (queued_t){c->cmd, c->argc, argv};
    tx->flags |= command_call_flags(c, c->cmd); /* as Redis: a script's flags when queued */
    reply_proto(c, "+QUEUED\r\n", 9);
}

static void multi_cmd(client_t *c)
{
    if (c->flags & CLIENT_MULTI) {
        reply_error(c, "ERR MULTI calls can not be nested");
        return;
    }
    tx_of(c);
    c->flags |= CLIENT_MULTI;
    c->multi_ref_bytes = 0; /* shm data-area copies of this transaction (client_settle_refs) */
    reply_ok(c);
}

static void discard_cmd(client_t *c)
{
    if (!(c->flags & CLIENT_MULTI)) {
        reply_error(c, "ERR DISCARD without MULTI");
        return;
    }
    discard_queue(c);
    unwatch_all(c);
    reply_ok(c);
}

/* 1 if a watched key has logically expired since it was watched. */
static int watched_key_expired(client_t *c)
{
    struct tx_state *tx = c->tx;
    for (int i = 0; tx && i < tx->nw; i++) {
        watched_t *x = &tx->w[i];
        if (x->expired) continue;
        db_t *db = &srv.db[x->dbid];
        kv_t *kv = db_find(db, x->key, x->len);
        if (kv && db_is_expired(db, kv)) return 1;
    }
    return 0;
}

/* ACL rules may have changed since the command was queued (Redis checks again at EXEC). */
static int exec_denied_or_reply(client_t *c)
{
    static const char *const why[] = {
        "", "no permission to execute the command or subcommand",
        "no permission to touch the specified keys", "no permission",
        "no permission to access one of the channels used as arguments"};
    int pos, r = acl_check_command(c, c->cmd, c->argc, c->argv, &pos);
    if (r == ACL_OK) return 0;
    const char *obj = r == ACL_DENIED_CMD ? c->cmd->fullname : c->argv[pos].ptr;
    size_t objlen = r == ACL_DENIED_CMD ? strlen(obj) : c->argv[pos].len;
    acl_log_add(c, r, ACL_CTX_MULTI, obj, objlen, NULL, 0);
    reply_errorf(c, "NOPERM ACLs rules changed between the moment the transaction was "
                    "accumulated and the EXEC call. This command is no longer allowed for the "
                    "following reason: %s", why[r]);
    return 1;
}

static void exec_cmd(client_t *c)
{
    if (!(c->flags & CLIENT_MULTI)) {
        reply_error(c, "ERR EXEC without MULTI");
        return;
    }
    if (watched_key_expired(c)) c->flags |= CLIENT_DIRTY_CAS;
    if (c->flags & CLIENT_DIRTY_EXEC) {
        reply_error(c, "EXECABORT Transaction discarded because of previous errors.");
        discard_queue(c);
        unwatch_all(c);
        return;
    }
    if (c->flags & CLIENT_DIRTY_CAS) {
        reply_null_array(c);
        discard_queue(c);
        unwatch_all(c);
        return;
    }
    /* a queued command that would have to wait (a blob with I/O in flight): the whole
     * transaction waits, and EXEC runs again once that is over */
    struct tx_state *tx = c->tx;
    for (int i = 0; i < tx->nq; i++) {
        char name[64];
        size_t n;
        if (tx->q[i].cmd->waitname &&
            (n = tx->q[i].cmd->waitname(c, tx->q[i].argc, tx->q[i].argv, name))) {
            block_on_name(c, name, n);
            return;
        }
    }
    unwatch_all(c);
    const command_t *exec = c->cmd;
    int argc = c->argc;
    resp_arg_t *argv = c->argv;
    reply_array(c, tx->nq);
    server_log_exec_begin(); /* the writes are logged between MULTI and EXEC */
    for (int i = 0; i < tx->nq; i++) {
        c->argc = tx->q[i].argc;
        c->argv = tx->q[i].argv;
        c->cmd = tx->q[i].cmd;
        if (exec_denied_or_reply(c)) continue;
        command_call(c);
    }
    server_log_exec_end();
    c->cmd = exec;
    c->argc = argc;
    c->argv = argv;
    discard_queue(c);
}

int multi_exec_rejected(client_t *c, const char *err)
{
    if (!c->cmd || c->cmd->proc != exec_cmd) return 0;
    discard_queue(c);
    unwatch_all(c);
    reply_errorf(c, "EXECABORT Transaction discarded because of: %s", err);
    return 1;
}

static void watch_cmd(client_t *c)
{
    if (c->flags & CLIENT_MULTI) {
        reply_error(c, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    for (int j = 1; j < c->argc; j++) watch_add(c, c->dbid, c->argv[j].ptr, c->argv[j].len);
    reply_ok(c);
}

static void unwatch_cmd(client_t *c)
{
    unwatch_all(c);
    reply_ok(c);
}

/* EXEC writes, may replicate, may grow memory when a command it queued does */
static uint32_t exec_getflags(const client_t *c, uint32_t flags)
{
    return flags | multi_queued_flags(c);
}

command_t cmds_multi[] = {
    {"multi", multi_cmd, 1, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOW_BUSY,
     0, 0, 0, "transactions", "1.2.0", "Starts a transaction.", "O(1)"},
    {"exec", exec_cmd, 1, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SKIP_SLOWLOG, 0, 0, 0,
     "transactions", "1.2.0", "Executes all commands in a transaction.",
     "Depends on commands in the transaction", .getflags = exec_getflags},
    {"discard", discard_cmd, 1,
     CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOW_BUSY, 0, 0, 0,
     "transactions", "2.0.0", "Discards a transaction.",
     "O(N), when N is the number of queued commands"},
    {"watch", watch_cmd, -2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOW_BUSY,
     1, -1, 1, "transactions", "2.2.0",
     "Monitors changes to keys to determine the execution of a transaction.",
     "O(1) for every key.", .key_flags = "RO"},
    {"unwatch", unwatch_cmd, 1,
     CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOW_BUSY, 0, 0, 0,
     "transactions", "2.2.0", "Forgets about watched keys of a transaction.", "O(1)"},
    {NULL},
};
