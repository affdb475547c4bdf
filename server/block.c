/* block.c - blocking commands' waits and wake-ups (see block.h).
 *
 * State: a clientmap from (db, key) to the clients waiting on it, in arrival order; a set of
 * ready keys filled by block_signal_key; per client, a copy of the blocked command's arguments
 * and its deadline. A retry runs the command's proc again with the copied arguments; the proc
 * either replies (then the client is unblocked here) or calls block_on_keys again, which only
 * records that the client is still waiting. Clients unblocked get their pending input processed
 * from block_handle_ready, once the command that woke them has finished. */
#include "server/block.h"

#include "common/alloc.h"
#include "common/util.h"
#include "server/acl.h"
#include "server/clientmap.h"
#include "server/command.h"
#include "server/reply.h"
#include "server/server.h"

#include <math.h>
#include <string.h>

struct block_state {
    const command_t *cmd;
    int argc;
    resp_arg_t *argv; /* one block: argv then bytes */
    int *keys;        /* argv indexes of the keys waited on */
    int nkeys;
    int dbid;
    long long deadline_ms;
    int timeout_reply;
    int retrying;
    int still_blocked;
    int postponed; /* CLIENT PAUSE: run the command when the pause ends */
    char *name;    /* block_on_name: the raw name waited on */
    size_t namelen;
    char **extra; /* block_replace_arg's copies */
    int nextra;
    void (*detach)(void *job); /* block_for_io */
    void *job;
};

static clientmap_t waits;   /* (db, key) -> blocked clients */
static clientmap_t ready;   /* (db, key) -> (unused list); the set of keys to retry */
static int inited;
static uint64_t nblocked;
static int handling;

static void free_state(client_t *c);
static void resume(client_t *c);

/* Clients unblocked from inside another client's command (CLIENT UNBLOCK, an I/O completion,
 * a timeout) read their pending input only after that command: never in the middle of it (it
 * may be an EXEC). block_handle_ready runs them. */
static client_t **to_resume;
static int nresume, capresume;

static void resume_later(client_t *c)
{
    for (int i = 0; i < nresume; i++)
        if (to_resume[i] == c) return;
    if (nresume == capresume) {
        capresume = capresume ? capresume * 2 : 8;
        to_resume = xrealloc(to_resume, sizeof(client_t *) * (size_t)capresume);
    }
    to_resume[nresume++] = c;
}

static void forget_resume(client_t *c)
{
    for (int i = 0; i < nresume; i++) {
        if (to_resume[i] == c) {
            to_resume[i] = to_resume[--nresume];
            return;
        }
    }
}

static void init(void)
{
    if (inited) return;
    clientmap_init(&waits);
    clientmap_init(&ready);
    inited = 1;
}

int block_timeout_or_reply(client_t *c, const resp_arg_t *a, long long *deadline_ms)
{
    long double secs; /* parsed and scaled as Redis does, so the limits fall where its do */
    if (!str_to_ld(a->ptr, a->len, &secs)) {
        reply_error(c, "ERR timeout is not a float or out of range");
        return -1;
    }
    long double msd = ceill(secs * 1000.0L);
    /* Redis's conversion of what a long long cannot hold (infinities too) gives LLONG_MIN */
    if (msd < 0 || !(msd < 9223372036854775808.0L)) {
        reply_error(c, "ERR timeout is negative");
        return -1;
    }
    long long ms = (long long)msd;
    *deadline_ms = ms > 0 ? block_deadline(time_ms(), ms) : 0;
    return 0;
}

long long block_deadline(long long now, long long ms)
{
    long long at;
    return __builtin_add_overflow(now, ms, &at) ? 0 : at;
}

void block_replace_arg(client_t *c, int idx, const void *p, size_t len)
{
    struct block_state *b = c->blk;
    if (!b || idx < 0 || idx >= b->argc) return;
    char *copy = xmemdup(p, len);
    b->extra = xrealloc(b->extra, sizeof(char *) * (size_t)(b->nextra + 1));
    b->extra[b->nextra++] = copy;
    b->argv[idx] = (resp_arg_t){copy, len};
}

int block_waiting(const client_t *c)
{
    const struct block_state *b = c->blk;
    return b && b->nkeys > 0 && !b->job && !b->postponed && (!b->retrying || b->still_blocked);
}

int block_is_retry(const client_t *c)
{
    return c->blk && c->blk->retrying;
}

static void for_each_key(client_t *c, int add)
{
    struct block_state *b = c->blk;
    for (int i = 0; i < b->nkeys; i++) {
        const resp_arg_t *k = &b->argv[b->keys[i]];
        char buf[256];
        char *name = clientmap_dbkey(b->dbid, k->ptr, k->len, buf, sizeof(buf));
        if (add) clientmap_add(&waits, name, k->len + 4, c);
        else clientmap_remove(&waits, name, k->len + 4, c);
        clientmap_dbkey_free(name, buf);
    }
}

/* A new wait for c: its command and arguments copied, keys waited on recorded. */
static struct block_state *new_state(client_t *c, const int *pos, int n)
{
    struct block_state *b = xcalloc(1, sizeof(*b));
    size_t bytes = sizeof(resp_arg_t) * (size_t)c->argc;
    for (int i = 0; i < c->argc; i++) bytes += c->argv[i].len + 1;
    b->argv = xmalloc(bytes);
    char *p = (char *)(b->argv + c->argc);
    for (int i = 0; i < c->argc; i++) {
        memcpy(p, c->argv[i].ptr, c->argv[i].len);
        p[c->argv[i].len] = '\0';
        b->argv[i] = (resp_arg_t){p, c->argv[i].len};
        p += c->argv[i].len + 1;
    }
    b->argc = c->argc;
    b->cmd = c->cmd;
    b->keys = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
    if (n) memcpy(b->keys, pos, sizeof(int) * (size_t)n);
    b->nkeys = n;
    b->dbid = c->dbid;
    c->blk = b;
    c->flags |= CLIENT_BLOCKED;
    nblocked++;
    return b;
}

void block_on_keys(client_t *c, const int *pos, int n, long long deadline_ms, int timeout_reply)
{
    init();
    if (c->blk && c->blk->retrying) {
        struct block_state *b = c->blk;
        b->still_blocked = 1;
        if (b->nkeys == 0 && n > 0) { /* a postponed command that now blocks for real */
            b->keys = xrealloc(b->keys, sizeof(int) * (size_t)n);
            memcpy(b->keys, pos, sizeof(int) * (size_t)n);
            b->nkeys = n;
            b->deadline_ms = deadline_ms;
            b->timeout_reply = timeout_reply;
            for_each_key(c, 1);
        }
        return;
    }
    struct block_state *b = new_state(c, pos, n);
    b->deadline_ms = deadline_ms;
    b->timeout_reply = timeout_reply;
    for_each_key(c, 1);
}

void block_on_key_range(client_t *c, int first, int n, long long deadline_ms, int timeout_reply)
{
    int *pos = xmalloc(sizeof(int) * (size_t)(n > 0 ? n : 1)); /* n < argc: already in memory */
    for (int i = 0; i < n; i++) pos[i] = first + i;
    block_on_keys(c, pos, n, deadline_ms, timeout_reply);
    xfree(pos);
}

void block_on_name(client_t *c, const char *name, size_t len)
{
    init();
    if (c->blk && c->blk->retrying) {
        struct block_state *b = c->blk;
        b->still_blocked = 1;
        if (b->name && (b->namelen != len || memcmp(b->name, name, len))) {
            clientmap_remove(&waits, b->name, b->namelen, c);
            xfree(b->name);
            b->name = NULL;
        }
        if (!b->name) {
            b->name = xmemdup(name, len);
            b->namelen = len;
            clientmap_add(&waits, name, len, c);
        }
        return;
    }
    struct block_state *b = new_state(c, NULL, 0);
    b->name = xmemdup(name, len);
    b->namelen = len;
    clientmap_add(&waits, name, len, c);
}

void block_signal_name(const char *name, size_t len)
{
    if (!nblocked) return;
    if (clientmap_find(&waits, name, len) && !clientmap_find(&ready, name, len))
        clientmap_add(&ready, name, len, NULL);
}

void block_for_io(client_t *c, void (*detach)(void *job), void *job)
{
    init();
    struct block_state *b;
    if (c->blk && c->blk->retrying) {
        /* a retried command (it waited on a name) now runs its I/O */
        b = c->blk;
        b->still_blocked = 1;
        if (b->name) {
            clientmap_remove(&waits, b->name, b->namelen, c);
            xfree(b->name);
            b->name = NULL;
        }
    } else {
        b = new_state(c, NULL, 0);
    }
    b->detach = detach;
    b->job = job;
}

void block_io_done(client_t *c)
{
    if (!c->blk) return;
    c->blk->job = NULL;
    c->blk->detach = NULL;
    free_state(c);
    resume_later(c);
}

void block_postpone(client_t *c)
{
    init();
    new_state(c, NULL, 0)->postponed = 1;
}

static void free_state(client_t *c)
{
    struct block_state *b = c->blk;
    if (!b) return;
    for_each_key(c, 0);
    if (b->name) {
        clientmap_remove(&waits, b->name, b->namelen, c);
        xfree(b->name);
    }
    xfree(b->argv);
    for (int i = 0; i < b->nextra; i++) xfree(b->extra[i]);
    xfree(b->extra);
    xfree(b->keys);
    xfree(b);
    c->blk = NULL;
    c->flags &= ~(uint32_t)CLIENT_BLOCKED;
    nblocked--;
}

void block_client_reset(client_t *c)
{
    if (c->blk && c->blk->detach) c->blk->detach(c->blk->job);
    free_state(c);
    forget_resume(c);
}

/* The client can read commands again: run what it sent while it waited. */
static void resume(client_t *c)
{
    if (c->qbuf.len && !(c->flags & (CLIENT_CLOSE_ASAP | CLIENT_CLOSE_AFTER_REPLY)))
        client_process_input(c);
}

int block_unblock(client_t *c, int err)
{
    return block_unblock_error(c, err ? "UNBLOCKED client unblocked via CLIENT UNBLOCK" : NULL);
}

const command_t *block_keys_of(const client_t *c, int *argc, const resp_arg_t **argv, int *key)
{
    const struct block_state *b = c->blk;
    if (!b || b->retrying || b->postponed || b->job || b->name || b->nkeys <= 0) return NULL;
    *argc = b->argc;
    *argv = b->argv;
    *key = b->keys[0];
    return b->cmd;
}

int block_unblock_error(client_t *c, const char *msg)
{
    struct block_state *b = c->blk;
    if (!b || b->retrying || b->postponed || b->job || b->name) return 0;
    if (b->nkeys > 0 && b->cmd) ((command_t *)b->cmd)->calls++; /* counted once, now */
    if (msg) reply_error(c, msg);
    else if (b->timeout_reply == BLOCK_REPLY_NULL) reply_null(c);
    else if (b->timeout_reply == BLOCK_REPLY_ZERO) reply_int(c, 0);
    else reply_null_array(c);
    free_state(c);
    resume_later(c);
    return 1;
}

void block_signal_key(db_t *db, const char *key, size_t len)
{
    if (!nblocked) return;
    char buf[256];
    char *name = clientmap_dbkey(db->id, key, len, buf, sizeof(buf));
    if (clientmap_find(&waits, name, len + 4) && !clientmap_find(&ready, name, len + 4))
        clientmap_add(&ready, name, len + 4, NULL);
    clientmap_dbkey_free(name, buf);
}

/* Runs c's blocked command again. Returns 1 if it was served (and c unblocked), 2 if it went
 * on to wait for I/O (no longer waiting here), 0 if it still waits. */
static int retry(client_t *c)
{
    struct block_state *b = c->blk;
    int argc = c->argc;
    resp_arg_t *argv = c->argv;
    const command_t *cmd = c->cmd;
    db_t *db = c->db;
    int dbid = c->dbid;
    client_select(c, b->dbid);
    c->argc = b->argc;
    c->argv = b->argv;
    c->cmd = b->cmd;
    b->retrying = 1;
    b->still_blocked = 0;
    command_call(c);
    b->retrying = 0;
    c->argc = argc;
    c->argv = argv;
    c->cmd = cmd;
    c->db = db;
    c->dbid = dbid;
    if (b->still_blocked) return b->job ? 2 : 0;
    free_state(c);
    return 1;
}

void block_handle_ready(void)
{
    if (!inited || handling) return;
    handling = 1;
    client_t **served = NULL;
    int nserved = 0, cap = 0;
    while (clientmap_size(&ready) > 0) {
        dict_iter_t it;
        dict_iter_init(&it, &ready.d, 0);
        clientmap_entry_t *r = (clientmap_entry_t *)dict_iter_next(&it);
        dict_iter_deinit(&it);
        size_t len = r->node.aux;
        char *name = xmemdup(r->name, len);
        clientmap_remove(&ready, name, len, NULL);
        /* Every waiter retries once, oldest first: a push of three elements serves the first
         * three, the others wait on. The waiters are copied first: a retry may move its
         * client to another name (and free this entry). */
        clientmap_entry_t *w = clientmap_find(&waits, name, len);
        int nw = w ? w->n : 0;
        client_t **list = nw ? xmalloc(sizeof(client_t *) * (size_t)nw) : NULL;
        if (nw) memcpy(list, w->clients, sizeof(client_t *) * (size_t)nw);
        for (int i = 0; i < nw; i++) {
            client_t *c = list[i];
            if (!c->blk || c->blk->retrying || c->blk->job) continue; /* already served */
            if (retry(c) == 1) {
                if (nserved == cap) {
                    cap = cap ? cap * 2 : 8;
                    served = xrealloc(served, sizeof(client_t *) * (size_t)cap);
                }
                served[nserved++] = c;
            }
        }
        xfree(list);
        xfree(name);
    }
    handling = 0;
    for (int i = 0; i < nserved; i++) resume_later(served[i]);
    xfree(served);
    /* resumed clients' commands may wake others in turn: each pass takes the list as it is */
    while (nresume) {
        client_t *c = to_resume[--nresume];
        resume(c);
    }
}

/* A command CLIENT PAUSE held back is checked against its user's rules again before it runs
 * (they may have changed during the pause, as Redis re-processes it): 1 after the -NOPERM
 * reply (and ACL LOG entry) when it may no longer run. */
static int postponed_denied(client_t *c)
{
    struct block_state *b = c->blk;
    const command_t *cmd = c->cmd;
    int argc = c->argc;
    resp_arg_t *argv = c->argv;
    c->cmd = b->cmd;
    c->argc = b->argc;
    c->argv = b->argv;
    int denied = acl_reject_or_reply(c, ACL_CTX_TOPLEVEL) != 0;
    c->cmd = cmd;
    c->argc = argc;
    c->argv = argv;
    return denied;
}

void block_release_postponed(void)
{
    client_t **list = NULL;
    int n = 0, cap = 0;
    /* oldest first: the client list is newest first, so collect then walk backwards */
    for (client_t *c = srv.clients; c; c = c->next) {
        if (!c->blk || !c->blk->postponed) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            list = xrealloc(list, sizeof(client_t *) * (size_t)cap);
        }
        list[n++] = c;
    }
    for (int i = n - 1; i >= 0; i--) {
        client_t *c = list[i];
        c->blk->postponed = 0;
        if (postponed_denied(c))
            free_state(c);
        else
            retry(c);
        if (!c->blk) resume_later(c);
    }
    xfree(list);
    block_handle_ready();
}

void block_check_timeouts(long long now_ms)
{
    if (!nblocked) return;
    for (client_t *c = srv.clients, *next; c; c = next) {
        next = c->next;
        if (c->blk && c->blk->deadline_ms && c->blk->deadline_ms <= now_ms) block_unblock(c, 0);
    }
    block_handle_ready(); /* runs what the unblocked clients sent meanwhile */
}

long long block_next_deadline(void)
{
    long long best = 0;
    if (!nblocked) return 0;
    for (client_t *c = srv.clients; c; c = c->next)
        if (c->blk && c->blk->deadline_ms && (!best || c->blk->deadline_ms < best))
            best = c->blk->deadline_ms;
    return best;
}

uint64_t block_count(void)
{
    return nblocked;
}

void block_swap_db(int a, int b)
{
    /* waits stay on their db number, whose contents changed: retry every one of them */
    if (!nblocked) return;
    for (client_t *c = srv.clients; c; c = c->next) {
        struct block_state *s = c->blk;
        if (!s || (s->dbid != a && s->dbid != b)) continue;
        for (int i = 0; i < s->nkeys; i++) {
            const resp_arg_t *k = &s->argv[s->keys[i]];
            block_signal_key(&srv.db[s->dbid], k->ptr, k->len);
        }
    }
}

void block_deinit(void)
{
    xfree(to_resume);
    to_resume = NULL;
    nresume = capresume = 0;
    if (!inited) return;
    clientmap_clear(&waits);
    clientmap_clear(&ready);
    inited = 0;
    nblocked = 0;
}
