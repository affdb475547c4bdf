/* tracking.c - client-side caching (see tracking.h).
 *
 * Tables, all server-wide and created on first use:
 *   keys     key bytes -> sorted ids of the clients that read it (default mode). An id may
 *            outlive tracking or its client: it is skipped when the key is invalidated, and
 *            counted in tracking_total_items until then (Redis does no id clean-up either).
 *   by_id    id -> client, for every client with tracking state: a tracking client, and a
 *            client another one redirects to (indexed when CLIENT TRACKING names it), so that
 *            a message finds its client in O(1) and a redirect target that went away is seen.
 *   prefixes prefix -> the BCAST clients of that prefix and the keys under it changed since
 *            the loop last slept (key -> id of the client that changed it last, 0: the server).
 * Per client (c->trk): its mode flags, redirect id, its prefixes (sorted, as TRACKINGINFO
 * lists them) and the invalidations that wait for the reply of the command it is running.
 * Invariant: a client is in a prefix's client list iff the prefix is in its own list.
 * Loop thread only. */
#include "server/tracking.h"

#include "common/alloc.h"
#include "common/buf.h"
#include "common/dict.h"
#include "common/util.h"
#include "server/reply.h"
#include "server/server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum track_flag {
    TRK_ON = 1 << 0,
    TRK_BCAST = 1 << 1,
    TRK_OPTIN = 1 << 2,
    TRK_OPTOUT = 1 << 3,
    TRK_CACHING = 1 << 4, /* CLIENT CACHING YES (OPTIN) or NO (OPTOUT) for the next command */
    TRK_NOLOOP = 1 << 5,
    TRK_BROKEN = 1 << 6, /* the redirect target went away */
};

typedef struct prefix {
    char *p;
    size_t len;
} prefix_t;

struct track_state {
    dict_node_t node; /* in by_id, keyed by id */
    uint64_t id;
    client_t *c;
    uint32_t flags;
    uint64_t redirect; /* 0: none */
    prefix_t *prefixes;
    int nprefixes;
    buf_t pending; /* push frames for after the reply of the command it runs */
};

typedef struct key_entry {
    dict_node_t node; /* aux: key length */
    uint64_t *ids;    /* sorted */
    uint32_t n, cap;
    char key[];
} key_entry_t;

typedef struct bcast_key {
    dict_node_t node; /* aux: key length */
    uint64_t writer;
    char key[];
} bcast_key_t;

typedef struct bcast {
    dict_node_t node; /* aux: prefix length */
    client_t **clients;
    int n, cap;
    dict_t keys; /* bcast_key_t */
    char prefix[];
} bcast_t;

static const void *key_entry_key(const dict_node_t *n, size_t *len)
{
    *len = n->aux;
    return ((const key_entry_t *)n)->key;
}

static void key_entry_free(dict_node_t *n, void *ud)
{
    xfree(((key_entry_t *)n)->ids);
    xfree(n);
}

static const void *bcast_key_key(const dict_node_t *n, size_t *len)
{
    *len = n->aux;
    return ((const bcast_key_t *)n)->key;
}

static void plain_free(dict_node_t *n, void *ud)
{
    xfree(n);
}

static const void *bcast_prefix(const dict_node_t *n, size_t *len)
{
    *len = n->aux;
    return ((const bcast_t *)n)->prefix;
}

static void bcast_free(dict_node_t *n, void *ud)
{
    bcast_t *b = (bcast_t *)n;
    dict_clear(&b->keys, NULL);
    xfree(b->clients);
    xfree(b);
}

static const void *state_id(const dict_node_t *n, size_t *len)
{
    *len = sizeof(uint64_t);
    return &((const struct track_state *)n)->id;
}

static const dict_type_t key_type = {key_entry_key, key_entry_free};
static const dict_type_t bcast_key_type = {bcast_key_key, plain_free};
static const dict_type_t bcast_type = {bcast_prefix, bcast_free};
static const dict_type_t id_type = {state_id, NULL};

static dict_t keys, prefixes, by_id;
static int ready;
static uint64_t nclients, nitems; /* clients with tracking on; (key, id) pairs in keys */
/* The client whose command runs now, or NULL: the outermost one when calls nest (the client
 * of a transaction, or of a script when its commands run as another client), as Redis's
 * current_client. Its own changes are the ones NOLOOP leaves out. */
static client_t *running;

static void init_tables(void)
{
    if (ready) return;
    dict_init(&keys, &key_type);
    dict_init(&prefixes, &bcast_type);
    dict_init(&by_id, &id_type);
    ready = 1;
}

static struct track_state *state_of(client_t *c)
{
    if (c->trk) return c->trk;
    init_tables();
    struct track_state *st = xcalloc(1, sizeof(*st));
    st->id = c->id;
    st->c = c;
    buf_init(&st->pending);
    st->node.hash = dict_hash(&st->id, sizeof(st->id));
    dict_insert(&by_id, &st->node);
    c->trk = st;
    return st;
}

static uint32_t flags_of(const client_t *c)
{
    return c->trk ? c->trk->flags : 0;
}

/* The client with that id, or NULL. Clients without tracking state are found by a walk of
 * every client and indexed then. */
static client_t *client_by_id(uint64_t id, int walk)
{
    if (ready) {
        struct track_state *st =
            (struct track_state *)dict_find(&by_id, &id, sizeof(id), dict_hash(&id, sizeof(id)));
        if (st) return st->c;
    }
    if (!walk) return NULL;
    for (client_t *x = srv.clients; x; x = x->next)
        if (x->id == id) return state_of(x)->c;
    return NULL;
}

/* ---- messages ---- */

/* Appends the push frame p to c even under CLIENT REPLY OFF/SKIP (as Redis's pushes), or, while
 * c runs a command (a transaction, a served blocking command), keeps it for after that
 * command's reply: a push never lands inside a reply. */
static void push(client_t *c, const char *p, size_t len)
{
    if (c->flags & CLIENT_IN_CALL) {
        buf_append(&state_of(c)->pending, p, len);
        return;
    }
    uint32_t quiet = c->flags & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP);
    c->flags &= ~quiet;
    reply_proto(c, p, len);
    c->flags |= quiet;
}

/* Sends t's invalidation of the keys in payload (a RESP array; NULL: the null of a flush) to
 * t, or to the client it redirects to, as Redis's sendTrackingMessage. */
static void send_message(client_t *t, const char *payload, size_t plen)
{
    struct track_state *st = t->trk;
    client_t *dst = t;
    int redirected = 0;
    char head[96];
    if (st && st->redirect) {
        dst = client_by_id(st->redirect, 0);
        if (!dst) {
            st->flags |= TRK_BROKEN;
            if (t->resp > 2) {
                int n =
                    snprintf(head, sizeof(head), ">2\r\n$21\r\ntracking-redir-broken\r\n:%llu\r\n",
                             (unsigned long long)st->redirect);
                push(t, head, (size_t)n);
            }
            return;
        }
        redirected = 1;
    }
    const char *kind;
    if (dst->resp > 2)
        kind = ">2\r\n$10\r\ninvalidate\r\n";
    else if (redirected && (dst->flags & CLIENT_PUBSUB))
        kind = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n";
    else
        return; /* RESP2 without a subscribed redirect: nowhere to say it */
    buf_t b;
    buf_init(&b);
    buf_append(&b, kind, strlen(kind));
    if (payload)
        buf_append(&b, payload, plen);
    else
        resp_w_null(&b, dst->resp);
    push(dst, b.data, b.len);
    buf_deinit(&b);
}

static void send_key(client_t *t, const char *key, size_t len)
{
    buf_t p;
    buf_init(&p);
    resp_w_agg(&p, 3, '*', 1);
    resp_w_bulk(&p, key, len);
    send_message(t, p.data, p.len);
    buf_deinit(&p);
}

/* Sends what waited for c's command to reply. */
static void send_deferred(client_t *c)
{
    struct track_state *st = c->trk;
    if (!st || !st->pending.len) return;
    buf_t todo = st->pending;
    buf_init(&st->pending);
    push(c, todo.data, todo.len);
    buf_deinit(&todo);
}

/* ---- the key table ---- */

static key_entry_t *entry_find(const char *key, size_t len)
{
    return (key_entry_t *)dict_find(&keys, key, len, dict_hash(key, len));
}

static void entry_add_id(key_entry_t *e, uint64_t id)
{
    uint32_t lo = 0, hi = e->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (e->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < e->n && e->ids[lo] == id) return;
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 2;
        e->ids = xrealloc(e->ids, e->cap * sizeof(*e->ids));
    }
    memmove(e->ids + lo + 1, e->ids + lo, (e->n - lo) * sizeof(*e->ids));
    e->ids[lo] = id;
    e->n++;
    nitems++;
}

static void remember_key(const char *key, size_t len, uint64_t id)
{
    key_entry_t *e = entry_find(key, len);
    if (!e) {
        e = xcalloc(1, sizeof(*e) + len + 1);
        memcpy(e->key, key, len);
        e->node.aux = (uint32_t)len;
        e->node.hash = dict_hash(key, len);
        dict_insert(&keys, &e->node);
    }
    entry_add_id(e, id);
}

/* Records key as changed by writer (0: the server) for every BCAST prefix it falls under. */
static void collect_for_broadcast(const char *key, size_t len, uint64_t writer)
{
    dict_iter_t it;
    dict_iter_init(&it, &prefixes, 0);
    for (dict_node_t *n; (n = dict_iter_next(&it));) {
        bcast_t *b = (bcast_t *)n;
        if (n->aux > len || memcmp(b->prefix, key, n->aux) != 0) continue;
        uint32_t h = dict_hash(key, len);
        bcast_key_t *k = (bcast_key_t *)dict_find(&b->keys, key, len, h);
        if (!k) {
            k = xmalloc(sizeof(*k) + len);
            memcpy(k->key, key, len);
            k->node.aux = (uint32_t)len;
            k->node.hash = h;
            dict_insert(&b->keys, &k->node);
        }
        k->writer = writer;
    }
    dict_iter_deinit(&it);
}

/* Redis's trackingInvalidateKey: key changed (writer: who changed it, NULL for the server);
 * bcast also collects it for the BCAST clients. */
static void invalidate_key(const char *key, size_t len, client_t *writer, int bcast)
{
    if (bcast && dict_size(&prefixes)) collect_for_broadcast(key, len, writer ? writer->id : 0);
    key_entry_t *e = (key_entry_t *)dict_unlink(&keys, key, len, dict_hash(key, len));
    if (!e) return;
    for (uint32_t i = 0; i < e->n; i++) {
        client_t *t = client_by_id(e->ids[i], 0);
        uint32_t f = t ? flags_of(t) : 0;
        /* a client that switched to BCAST gets nothing about keys it read before */
        if (!(f & TRK_ON) || (f & TRK_BCAST)) continue;
        if ((f & TRK_NOLOOP) && t == running) continue;
        send_key(t, e->key, len);
    }
    nitems -= e->n;
    key_entry_free(&e->node, NULL);
}

/* Redis's trackingLimitUsedSlots: random keys go (with their invalidations) until the table
 * is back under tracking-table-max-keys, with an effort that grows while it stays over. */
static void limit_keys(void)
{
    static unsigned timeouts;
    uint64_t max = (uint64_t)srv.cfg.tracking_table_max_keys;
    if (!ready || !max) return;
    if (dict_size(&keys) <= max) {
        timeouts = 0;
        return;
    }
    for (int effort = 100 * (int)(timeouts + 1); effort > 0; effort--) {
        key_entry_t *e = (key_entry_t *)dict_random(&keys, rand_u64());
        if (!e) break;
        char small[128];
        size_t len = e->node.aux;
        char *key = len <= sizeof(small) ? small : xmalloc(len);
        memcpy(key, e->key, len);
        invalidate_key(key, len, NULL, 0);
        if (key != small) xfree(key);
        if (dict_size(&keys) <= max) {
            timeouts = 0;
            return;
        }
    }
    timeouts++;
}

/* Redis's trackingRememberKeys: the keys of c's read-only command, unless OPTIN/OPTOUT and
 * CLIENT CACHING say otherwise. */
static void remember_keys(client_t *c)
{
    uint32_t f = flags_of(c);
    if (!(f & TRK_ON) || (f & TRK_BCAST)) return;
    if ((f & TRK_OPTIN) && !(f & TRK_CACHING)) return;
    if ((f & TRK_OPTOUT) && (f & TRK_CACHING)) return;
    const command_t *cmd = c->cmd;
    if (!cmd || !(cmd->flags & CMD_READONLY) || (cmd->flags & CMD_PUBSUB) || c->argc < 2) return;
    int small[16];
    int *pos = c->argc <= 16 ? small : xmalloc(sizeof(int) * (size_t)c->argc);
    int n = command_get_keys(cmd, c->argc, c->argv, pos, c->argc);
    for (int i = 0; i < n; i++) remember_key(c->argv[pos[i]].ptr, c->argv[pos[i]].len, c->id);
    if (pos != small) xfree(pos);
}

/* ---- BCAST ---- */

static int prefix_cmp(const void *a, const void *b)
{
    const prefix_t *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int r = memcmp(x->p, y->p, n);
    return r ? r : (x->len > y->len) - (x->len < y->len);
}

/* c subscribes to prefix p (nothing when it already has); c's own list is sorted by the caller. */
static void bcast_add(client_t *c, const char *p, size_t len)
{
    uint32_t h = dict_hash(p, len);
    bcast_t *b = (bcast_t *)dict_find(&prefixes, p, len, h);
    if (!b) {
        b = xcalloc(1, sizeof(*b) + len + 1);
        memcpy(b->prefix, p, len);
        b->node.aux = (uint32_t)len;
        b->node.hash = h;
        dict_init(&b->keys, &bcast_key_type);
        dict_insert(&prefixes, &b->node);
    }
    for (int i = 0; i < b->n; i++)
        if (b->clients[i] == c) return;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 4;
        b->clients = xrealloc(b->clients, sizeof(*b->clients) * (size_t)b->cap);
    }
    b->clients[b->n++] = c;
    struct track_state *st = c->trk;
    st->prefixes = xrealloc(st->prefixes, sizeof(*st->prefixes) * (size_t)(st->nprefixes + 1));
    st->prefixes[st->nprefixes].p = xmemdup(p, len);
    st->prefixes[st->nprefixes].len = len;
    st->nprefixes++;
}

static void bcast_remove(client_t *c, const prefix_t *p)
{
    bcast_t *b = (bcast_t *)dict_find(&prefixes, p->p, p->len, dict_hash(p->p, p->len));
    if (!b) return;
    for (int i = 0; i < b->n; i++) {
        if (b->clients[i] != c) continue;
        memmove(b->clients + i, b->clients + i + 1, sizeof(*b->clients) * (size_t)(b->n - i - 1));
        b->n--;
        break;
    }
    if (b->n == 0) {
        dict_unlink(&prefixes, p->p, p->len, b->node.hash);
        bcast_free(&b->node, NULL);
    }
}

/* The keys of b as a RESP array, but those changed last by skip (when not 0); 0 if none. */
static long long bcast_payload(bcast_t *b, uint64_t skip, buf_t *out)
{
    long long n = 0;
    size_t head = resp_w_agg_defer(out);
    dict_iter_t it;
    dict_iter_init(&it, &b->keys, 0);
    for (dict_node_t *x; (x = dict_iter_next(&it));) {
        bcast_key_t *k = (bcast_key_t *)x;
        if (skip && k->writer == skip) continue;
        resp_w_bulk(out, k->key, x->aux);
        n++;
    }
    dict_iter_deinit(&it);
    resp_w_agg_finish(out, head, 3, '*', n);
    return n;
}

static void bcast_send(bcast_t *b)
{
    if (!dict_size(&b->keys)) return;
    buf_t all;
    buf_init(&all);
    bcast_payload(b, 0, &all);
    for (int i = 0; i < b->n; i++) {
        client_t *t = b->clients[i];
        if (!(flags_of(t) & TRK_NOLOOP)) {
            send_message(t, all.data, all.len);
            continue;
        }
        buf_t mine;
        buf_init(&mine);
        if (bcast_payload(b, t->id, &mine)) send_message(t, mine.data, mine.len);
        buf_deinit(&mine);
    }
    buf_deinit(&all);
    dict_clear(&b->keys, NULL);
}

void tracking_before_sleep(void)
{
    if (!ready || !nclients || !dict_size(&prefixes)) return;
    dict_iter_t it;
    dict_iter_init(&it, &prefixes, 0);
    for (dict_node_t *n; (n = dict_iter_next(&it));) bcast_send((bcast_t *)n);
    dict_iter_deinit(&it);
}

/* ---- on / off ---- */

static void disable(client_t *c)
{
    struct track_state *st = c->trk;
    if (!st) return;
    for (int i = 0; i < st->nprefixes; i++) {
        bcast_remove(c, &st->prefixes[i]);
        xfree(st->prefixes[i].p);
    }
    xfree(st->prefixes);
    st->prefixes = NULL;
    st->nprefixes = 0;
    if (st->flags & TRK_ON) nclients--;
    st->flags = 0;
}

static void enable(client_t *c, uint64_t redirect, uint32_t options, const resp_arg_t **pfx,
                   int npfx)
{
    struct track_state *st = state_of(c);
    if (!(st->flags & TRK_ON)) nclients++;
    st->flags |= TRK_ON;
    st->flags &= ~(uint32_t)(TRK_BROKEN | TRK_BCAST | TRK_OPTIN | TRK_OPTOUT | TRK_NOLOOP);
    st->redirect = redirect;
    if (options & TRK_BCAST) {
        st->flags |= TRK_BCAST;
        if (npfx == 0) bcast_add(c, "", 0);
        for (int i = 0; i < npfx; i++) bcast_add(c, pfx[i]->ptr, pfx[i]->len);
        qsort(st->prefixes, (size_t)st->nprefixes, sizeof(*st->prefixes), prefix_cmp);
    }
    st->flags |= options & (TRK_OPTIN | TRK_OPTOUT | TRK_NOLOOP);
}

static int overlaps(const char *a, size_t alen, const char *b, size_t blen)
{
    return memcmp(a, b, alen < blen ? alen : blen) == 0;
}

/* 0, or -1 after the error when two new prefixes, or a new and an old one, overlap. */
static int prefixes_ok_or_reply(client_t *c, const resp_arg_t **pfx, int npfx)
{
    const struct track_state *st = c->trk;
    for (int i = 0; i < npfx; i++) {
        for (int k = 0; st && k < st->nprefixes; k++) {
            if (!overlaps(st->prefixes[k].p, st->prefixes[k].len, pfx[i]->ptr, pfx[i]->len))
                continue;
            reply_errorf(c,
                         "ERR Prefix '%.*s' overlaps with an existing prefix '%.*s'. Prefixes "
                         "for a single client must not overlap.",
                         (int)pfx[i]->len, pfx[i]->ptr, (int)st->prefixes[k].len,
                         st->prefixes[k].p);
            return -1;
        }
        for (int j = i + 1; j < npfx; j++) {
            if (!overlaps(pfx[i]->ptr, pfx[i]->len, pfx[j]->ptr, pfx[j]->len)) continue;
            reply_errorf(c,
                         "ERR Prefix '%.*s' overlaps with another provided prefix '%.*s'. "
                         "Prefixes for a single client must not overlap.",
                         (int)pfx[i]->len, pfx[i]->ptr, (int)pfx[j]->len, pfx[j]->ptr);
            return -1;
        }
    }
    return 0;
}

/* The checks of CLIENT TRACKING ON, in Redis's order: 0, or -1 after the error. */
static int on_ok_or_reply(client_t *c, uint32_t options, const resp_arg_t **pfx, int npfx)
{
    uint32_t f = flags_of(c);
    const char *err = NULL;
    if (!(options & TRK_BCAST) && npfx)
        err = "ERR PREFIX option requires BCAST mode to be enabled";
    else if ((f & TRK_ON) && !!(f & TRK_BCAST) != !!(options & TRK_BCAST))
        err = "ERR You can't switch BCAST mode on/off before disabling tracking for this "
              "client, and then re-enabling it with a different mode.";
    else if ((options & TRK_BCAST) && (options & (TRK_OPTIN | TRK_OPTOUT)))
        err = "ERR OPTIN and OPTOUT are not compatible with BCAST";
    else if ((options & TRK_OPTIN) && (options & TRK_OPTOUT))
        err = "ERR You can't specify both OPTIN mode and OPTOUT mode";
    else if (((options & TRK_OPTIN) && (f & TRK_OPTOUT)) ||
             ((options & TRK_OPTOUT) && (f & TRK_OPTIN)))
        err = "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this "
              "client, and then re-enabling it with a different mode.";
    if (err) {
        reply_error(c, err);
        return -1;
    }
    return (options & TRK_BCAST) ? prefixes_ok_or_reply(c, pfx, npfx) : 0;
}

/* The option words of CLIENT TRACKING, as Redis: a flag, or what takes a value (0). */
static const struct {
    const char *word;
    uint32_t flag;
} option_words[] = {
    {"bcast", TRK_BCAST},
    {"optin", TRK_OPTIN},
    {"optout", TRK_OPTOUT},
    {"noloop", TRK_NOLOOP},
};

static uint32_t option_flag(const resp_arg_t *a)
{
    for (size_t i = 0; i < sizeof(option_words) / sizeof(option_words[0]); i++)
        if (arg_is(a, option_words[i].word)) return option_words[i].flag;
    return 0;
}

/* REDIRECT's value: 0 and the id, or -1 after the error. */
static int redirect_or_reply(client_t *c, const resp_arg_t *a, uint64_t *redirect)
{
    long long id;
    if (*redirect) {
        reply_error(c, "ERR A client can only redirect to a single other client");
        return -1;
    }
    if (arg_ll_or_reply(c, a, &id, NULL) < 0) return -1;
    if (id <= 0 || !client_by_id((uint64_t)id, 1)) {
        reply_error(c, "ERR The client ID you want redirect to does not exist");
        return -1;
    }
    *redirect = (uint64_t)id;
    return 0;
}

void tracking_client_tracking_cmd(client_t *c)
{
    uint64_t redirect = 0;
    uint32_t options = 0;
    int npfx = 0;
    const resp_arg_t **pfx = xmalloc(sizeof(*pfx) * (size_t)c->argc);
    for (int j = 3; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        uint32_t f = option_flag(&c->argv[j]);
        if (f) {
            options |= f;
        } else if (arg_is(&c->argv[j], "redirect") && more) {
            if (redirect_or_reply(c, &c->argv[++j], &redirect) < 0) goto done;
        } else if (arg_is(&c->argv[j], "prefix") && more) {
            pfx[npfx++] = &c->argv[++j];
        } else {
            reply_syntax_error(c);
            goto done;
        }
    }
    if (arg_is(&c->argv[2], "on")) {
        if (on_ok_or_reply(c, options, pfx, npfx) < 0) goto done;
        enable(c, redirect, options, pfx, npfx);
    } else if (arg_is(&c->argv[2], "off")) {
        disable(c);
    } else {
        reply_syntax_error(c);
        goto done;
    }
    reply_ok(c);
done:
    xfree(pfx);
}

void tracking_client_caching_cmd(client_t *c)
{
    uint32_t f = flags_of(c);
    if (!(f & TRK_ON)) {
        reply_error(c, "ERR CLIENT CACHING can be called only when the client is in tracking "
                       "mode with OPTIN or OPTOUT mode enabled");
        return;
    }
    if (arg_is(&c->argv[2], "yes")) {
        if (!(f & TRK_OPTIN)) {
            reply_error(c, "ERR CLIENT CACHING YES is only valid when tracking is enabled in "
                           "OPTIN mode.");
            return;
        }
    } else if (arg_is(&c->argv[2], "no")) {
        if (!(f & TRK_OPTOUT)) {
            reply_error(c, "ERR CLIENT CACHING NO is only valid when tracking is enabled in "
                           "OPTOUT mode.");
            return;
        }
    } else {
        reply_syntax_error(c);
        return;
    }
    c->trk->flags |= TRK_CACHING;
    reply_ok(c);
}

void tracking_client_getredir_cmd(client_t *c)
{
    reply_int(c, (flags_of(c) & TRK_ON) ? (long long)c->trk->redirect : -1);
}

/* TRACKINGINFO's flag words, in Redis's order: a word is listed when the client's flags
 * hold all of need. */
static const struct {
    uint32_t need;
    const char *word;
} info_words[] = {
    {TRK_BCAST, "bcast"},
    {TRK_OPTIN, "optin"},
    {TRK_OPTIN | TRK_CACHING, "caching-yes"},
    {TRK_OPTOUT, "optout"},
    {TRK_OPTOUT | TRK_CACHING, "caching-no"},
    {TRK_NOLOOP, "noloop"},
    {TRK_BROKEN, "broken_redirect"},
};

void tracking_client_trackinginfo_cmd(client_t *c)
{
    uint32_t f = flags_of(c);
    size_t nwords = sizeof(info_words) / sizeof(info_words[0]);
    long long n = 1;
    for (size_t i = 0; i < nwords; i++) n += (f & info_words[i].need) == info_words[i].need;
    reply_map(c, 3);
    reply_bulk_cstr(c, "flags");
    reply_set(c, n);
    reply_bulk_cstr(c, (f & TRK_ON) ? "on" : "off");
    for (size_t i = 0; i < nwords; i++)
        if ((f & info_words[i].need) == info_words[i].need) reply_bulk_cstr(c, info_words[i].word);
    reply_bulk_cstr(c, "redirect");
    reply_int(c, tracking_redir_field(c));
    reply_bulk_cstr(c, "prefixes");
    int np = c->trk ? c->trk->nprefixes : 0;
    reply_array(c, np);
    for (int i = 0; i < np; i++) reply_bulk(c, c->trk->prefixes[i].p, c->trk->prefixes[i].len);
}

/* ---- hooks ---- */

client_t *tracking_call_begin(client_t *c)
{
    client_t *prev = running;
    if (!prev) running = c;
    return prev;
}

void tracking_call_end(client_t *c, client_t *prev)
{
    running = prev;
    if (!c->trk) return;
    remember_keys(c);
    if (!(c->flags & CLIENT_IN_CALL)) send_deferred(c);
}

void tracking_before_command(client_t *c)
{
    if (nclients) limit_keys();
}

void tracking_after_command(client_t *c, const command_t *cmd)
{
    if (!c->trk || (c->flags & CLIENT_MULTI)) return;
    const command_t *top = cmd && cmd->parent ? cmd->parent : cmd;
    if (!top || strcmp(top->name, "client") != 0) c->trk->flags &= ~(uint32_t)TRK_CACHING;
}

void tracking_key_event(db_t *db, const char *key, size_t len, int klass, const char *event)
{
    if (!ready || (!dict_size(&keys) && !dict_size(&prefixes))) return;
    client_t *writer = (klass & (NOTIFY_EXPIRED | NOTIFY_EVICTED)) ? NULL : running;
    invalidate_key(key, len, writer, 1);
}

void tracking_invalidate_all(void)
{
    if (!ready) return;
    for (client_t *x = srv.clients; nclients && x; x = x->next) {
        if (flags_of(x) & TRK_ON) send_message(x, NULL, 0);
    }
    dict_clear(&keys, NULL);
    nitems = 0;
}

void tracking_cron(long long now_ms)
{
    limit_keys();
}

void tracking_client_reset(client_t *c)
{
    disable(c);
}

void tracking_client_free(client_t *c)
{
    struct track_state *st = c->trk;
    if (!st) return;
    disable(c);
    dict_unlink(&by_id, &st->id, sizeof(st->id), st->node.hash);
    buf_deinit(&st->pending);
    xfree(st);
    c->trk = NULL;
    if (running == c) running = NULL;
}

char *tracking_flag_letters(const client_t *c, char *p)
{
    uint32_t f = flags_of(c);
    if (f & TRK_ON) *p++ = 't';
    if (f & TRK_BROKEN) *p++ = 'R';
    if (f & TRK_BCAST) *p++ = 'B';
    return p;
}

long long tracking_redir_field(const client_t *c)
{
    return (flags_of(c) & TRK_ON) ? (long long)c->trk->redirect : -1;
}

void tracking_stats(tracking_stats_t *st)
{
    st->clients = nclients;
    st->keys = ready ? dict_size(&keys) : 0;
    st->items = nitems;
    st->prefixes = ready ? dict_size(&prefixes) : 0;
}

void tracking_deinit(void)
{
    if (!ready) return;
    for (client_t *x = srv.clients; x; x = x->next) tracking_client_free(x);
    dict_clear(&keys, NULL);
    dict_clear(&prefixes, NULL);
    dict_clear(&by_id, NULL);
    nclients = nitems = 0;
    running = NULL;
    ready = 0;
}
