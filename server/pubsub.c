/* pubsub.c - publish/subscribe and keyspace notifications (see pubsub.h).
 *
 * Tables: name -> array of subscribed clients (channels and patterns apart). A client's own
 * subscriptions are a small dict of names, so unsubscribing everything is O(subscriptions). */
#include "server/pubsub.h"

#include "common/alloc.h"
#include "common/dict.h"
#include "common/glob.h"
#include "common/util.h"
#include "server/clientmap.h"
#include "server/cluster/cluster.h"
#include "server/reply.h"
#include "server/server.h"

#include <stdio.h>
#include <string.h>

/* A client's own subscriptions: a set of names. */
typedef struct name_node {
    dict_node_t node;
    char name[];
} name_node_t;

struct sub_state {
    dict_t channels;
    dict_t patterns;
};

static const void *name_key(const dict_node_t *n, size_t *len)
{
    *len = n->aux;
    return ((const name_node_t *)n)->name;
}

static void name_free(dict_node_t *n, void *ud)
{
    xfree(n);
}

static const dict_type_t name_type = {name_key, name_free};
static clientmap_t channels, patterns; /* name -> subscribers, in subscription order */
static int ready;

static void init_tables(void)
{
    if (ready) return;
    clientmap_init(&channels);
    clientmap_init(&patterns);
    ready = 1;
}

static struct sub_state *state_of(client_t *c)
{
    if (!c->sub) {
        c->sub = xcalloc(1, sizeof(*c->sub));
        dict_init(&c->sub->channels, &name_type);
        dict_init(&c->sub->patterns, &name_type);
    }
    return c->sub;
}

long long pubsub_client_count(const client_t *c)
{
    return c->sub ? (long long)(dict_size(&c->sub->channels) + dict_size(&c->sub->patterns)) : 0;
}

static void update_flag(client_t *c)
{
    if (pubsub_client_count(c) > 0) c->flags |= CLIENT_PUBSUB;
    else c->flags &= ~(uint32_t)CLIENT_PUBSUB;
}

/* Adds c to table[name]; returns 1 if it was not subscribed yet. */
static int subscribe(clientmap_t *table, dict_t *mine, client_t *c, const char *name, size_t len)
{
    uint32_t h = dict_hash(name, len);
    if (dict_find(mine, name, len, h)) return 0;
    name_node_t *nn = xmalloc(sizeof(*nn) + len + 1);
    memcpy(nn->name, name, len);
    nn->name[len] = '\0';
    nn->node.hash = h;
    nn->node.aux = (uint32_t)len;
    dict_insert(mine, &nn->node);
    clientmap_add(table, name, len, c);
    return 1;
}

/* Removes c from table[name]; returns 1 if it was subscribed. */
static int unsubscribe(clientmap_t *table, dict_t *mine, client_t *c, const char *name,
                       size_t len)
{
    dict_node_t *nn = dict_unlink(mine, name, len, dict_hash(name, len));
    if (!nn) return 0;
    xfree(nn);
    clientmap_remove(table, name, len, c);
    return 1;
}

static void reply_sub_event(client_t *c, const char *kind, const char *name, size_t len)
{
    uint32_t was = c->flags & CLIENT_PUSHING;
    c->flags |= CLIENT_PUSHING;
    if (c->resp >= 3) reply_proto(c, ">3\r\n", 4);
    else reply_array(c, 3);
    reply_bulk_cstr(c, kind);
    if (name) reply_bulk(c, name, len);
    else reply_null(c);
    reply_int(c, pubsub_client_count(c));
    if (!was) c->flags &= ~(uint32_t)CLIENT_PUSHING;
}

static void subscribe_cmd(client_t *c)
{
    init_tables();
    struct sub_state *st = state_of(c);
    for (int j = 1; j < c->argc; j++) {
        subscribe(&channels, &st->channels, c, c->argv[j].ptr, c->argv[j].len);
        update_flag(c);
        reply_sub_event(c, "subscribe", c->argv[j].ptr, c->argv[j].len);
    }
}

static void psubscribe_cmd(client_t *c)
{
    init_tables();
    struct sub_state *st = state_of(c);
    for (int j = 1; j < c->argc; j++) {
        subscribe(&patterns, &st->patterns, c, c->argv[j].ptr, c->argv[j].len);
        update_flag(c);
        reply_sub_event(c, "psubscribe", c->argv[j].ptr, c->argv[j].len);
    }
}

/* Unsubscribes from every name in mine, replying for each when reply_kind is set. */
static int unsubscribe_all(clientmap_t *table, dict_t *mine, client_t *c, const char *reply_kind)
{
    int count = 0;
    dict_iter_t it;
    dict_iter_init(&it, mine, 1);
    for (dict_node_t *n; (n = dict_iter_next(&it));) {
        name_node_t *nn = (name_node_t *)n;
        size_t len = n->aux;
        char *name = xmemdup(nn->name, len);
        unsubscribe(table, mine, c, name, len);
        update_flag(c);
        if (reply_kind) reply_sub_event(c, reply_kind, name, len);
        xfree(name);
        count++;
    }
    dict_iter_deinit(&it);
    return count;
}

static void unsub_generic(client_t *c, int pattern)
{
    init_tables();
    struct sub_state *st = state_of(c);
    clientmap_t *table = pattern ? &patterns : &channels;
    dict_t *mine = pattern ? &st->patterns : &st->channels;
    const char *kind = pattern ? "punsubscribe" : "unsubscribe";
    if (c->argc == 1) {
        if (unsubscribe_all(table, mine, c, kind) == 0) reply_sub_event(c, kind, NULL, 0);
        return;
    }
    for (int j = 1; j < c->argc; j++) {
        unsubscribe(table, mine, c, c->argv[j].ptr, c->argv[j].len);
        update_flag(c);
        reply_sub_event(c, kind, c->argv[j].ptr, c->argv[j].len);
    }
}

static void unsubscribe_cmd(client_t *c)
{
    unsub_generic(c, 0);
}

static void punsubscribe_cmd(client_t *c)
{
    unsub_generic(c, 1);
}

static void foreach_name(dict_t *d, int pattern,
                         void (*fn)(void *ud, const char *name, size_t len, int pattern), void *ud)
{
    dict_iter_t it;
    dict_iter_init(&it, d, 0);
    for (dict_node_t *n; (n = dict_iter_next(&it));)
        fn(ud, ((name_node_t *)n)->name, n->aux, pattern);
    dict_iter_deinit(&it);
}

void pubsub_client_foreach(client_t *c, void (*fn)(void *ud, const char *name, size_t len,
                                                   int pattern),
                           void *ud)
{
    if (!c->sub) return;
    foreach_name(&c->sub->patterns, 1, fn, ud);
    foreach_name(&c->sub->channels, 0, fn, ud);
}

void pubsub_client_reset(client_t *c)
{
    if (!c->sub) return;
    unsubscribe_all(&channels, &c->sub->channels, c, NULL);
    unsubscribe_all(&patterns, &c->sub->patterns, c, NULL);
    dict_clear(&c->sub->channels, NULL);
    dict_clear(&c->sub->patterns, NULL);
    xfree(c->sub);
    c->sub = NULL;
    c->flags &= ~(uint32_t)CLIENT_PUBSUB;
}

static void deliver(client_t *c, const char *pat, size_t plen, const char *ch, size_t clen,
                    const char *msg, size_t mlen)
{
    int n = pat ? 4 : 3;
    uint32_t was = c->flags & CLIENT_PUSHING;
    c->flags |= CLIENT_PUSHING;
    if (c->resp >= 3) reply_proto(c, pat ? ">4\r\n" : ">3\r\n", 4);
    else reply_array(c, n);
    reply_bulk_cstr(c, pat ? "pmessage" : "message");
    if (pat) reply_bulk(c, pat, plen);
    reply_bulk(c, ch, clen);
    reply_bulk(c, msg, mlen);
    if (!was) c->flags &= ~(uint32_t)CLIENT_PUSHING;
}

long long pubsub_publish(const char *channel, size_t clen, const char *msg, size_t mlen)
{
    long long receivers = 0;
    if (!ready) return 0;
    clientmap_entry_t *s = clientmap_find(&channels, channel, clen);
    for (int i = 0; s && i < s->n; i++) {
        deliver(s->clients[i], NULL, 0, channel, clen, msg, mlen);
        receivers++;
    }
    if (clientmap_size(&patterns) == 0) return receivers;
    dict_iter_t it;
    dict_iter_init(&it, &patterns.d, 0);
    for (dict_node_t *n; (n = dict_iter_next(&it));) {
        clientmap_entry_t *p = (clientmap_entry_t *)n;
        if (!strglob_match(p->name, n->aux, channel, clen, 0)) continue;
        for (int i = 0; i < p->n; i++) {
            deliver(p->clients[i], p->name, n->aux, channel, clen, msg, mlen);
            receivers++;
        }
    }
    dict_iter_deinit(&it);
    return receivers;
}

static void publish_cmd(client_t *c)
{
    const resp_arg_t *ch = &c->argv[1], *msg = &c->argv[2];
    reply_int(c, pubsub_publish(ch->ptr, ch->len, msg->ptr, msg->len));
    /* the reply counts this node's receivers only, as Redis's */
    if (cluster) cluster_bus_publish(ch->ptr, ch->len, msg->ptr, msg->len);
}

struct chan_ctx {
    client_t *c;
    const resp_arg_t *pattern;
    long long n;
};

static void pubsub_channels_cmd(client_t *c)
{
    const resp_arg_t *pat = c->argc == 3 ? &c->argv[2] : NULL;
    if (c->argc > 3) {
        reply_arity_error(c);
        return;
    }
    size_t h = reply_defer(c);
    long long n = 0;
    if (ready) {
        dict_iter_t it;
        dict_iter_init(&it, &channels.d, 0);
        for (dict_node_t *x; (x = dict_iter_next(&it));) {
            clientmap_entry_t *s = (clientmap_entry_t *)x;
            if (pat && !strglob_match(pat->ptr, pat->len, s->name, x->aux, 0)) continue;
            reply_bulk(c, s->name, x->aux);
            n++;
        }
        dict_iter_deinit(&it);
    }
    reply_defer_finish(c, h, '*', n);
}

static void pubsub_numsub_cmd(client_t *c)
{
    reply_map(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        clientmap_entry_t *s = ready ? clientmap_find(&channels, c->argv[j].ptr, c->argv[j].len)
                                     : NULL;
        reply_bulk(c, c->argv[j].ptr, c->argv[j].len);
        reply_int(c, s ? s->n : 0);
    }
}

static void pubsub_numpat_cmd(client_t *c)
{
    reply_int(c, ready ? (long long)clientmap_size(&patterns) : 0);
}

static void pubsub_help_cmd(client_t *c)
{
    static const char *const lines[] = {
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "HELP",
        "    Print this help.",
    };
    reply_array(c, (long long)(sizeof(lines) / sizeof(lines[0])));
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) reply_simple(c, lines[i]);
}

void pubsub_counts(uint64_t *nch, uint64_t *npat)
{
    *nch = ready ? clientmap_size(&channels) : 0;
    *npat = ready ? clientmap_size(&patterns) : 0;
}

void pubsub_deinit(void)
{
    if (!ready) return;
    clientmap_clear(&channels);
    clientmap_clear(&patterns);
    ready = 0;
}

int pubsub_reject_or_reply(client_t *c, const command_t *cmd)
{
    if (!(c->flags & CLIENT_PUBSUB) || c->resp > 2) return 0;
    const command_t *top = cmd->parent ? cmd->parent : cmd;
    static const char *const ok[] = {"subscribe", "psubscribe", "unsubscribe", "punsubscribe",
                                     "ping",      "quit",       "reset"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (strcmp(top->name, ok[i]) == 0) return 0;
    reply_errorf(c,
                 "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
                 "RESET are allowed in this context",
                 cmd->fullname);
    return 1;
}

void notify_keyspace_event(int klass, const char *event, const char *key, size_t len, int dbid)
{
    int flags = srv.cfg.notify_keyspace_events;
    if (!(flags & klass) || !ready) return;
    char chan[128];
    if (flags & NOTIFY_KEYSPACE) {
        int n = snprintf(chan, sizeof(chan), "__keyspace@%d__:", dbid);
        char *full = xmalloc((size_t)n + len);
        memcpy(full, chan, (size_t)n);
        memcpy(full + n, key, len);
        pubsub_publish(full, (size_t)n + len, event, strlen(event));
        xfree(full);
    }
    if (flags & NOTIFY_KEYEVENT) {
        int n = snprintf(chan, sizeof(chan), "__keyevent@%d__:%s", dbid, event);
        pubsub_publish(chan, (size_t)n, key, len);
    }
}

static command_t pubsub_subcommands[] = {
    {"channels", pubsub_channels_cmd, -2, CMD_PUBSUB | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "pubsub", "2.8.0", "Returns the active channels.",
     "O(N) where N is the number of active channels, and assuming constant time pattern matching "
     "(relatively short channels and patterns)"},
    {"numsub", pubsub_numsub_cmd, -2, CMD_PUBSUB | CMD_LOADING | CMD_STALE, 0, 0, 0, "pubsub",
     "2.8.0", "Returns a count of subscribers to channels.",
     "O(N) for the NUMSUB subcommand, where N is the number of requested channels"},
    {"numpat", pubsub_numpat_cmd, 2, CMD_PUBSUB | CMD_LOADING | CMD_STALE, 0, 0, 0, "pubsub",
     "2.8.0", "Returns a count of unique pattern subscriptions.", "O(1)"},
    {"help", pubsub_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "pubsub", "6.2.0",
     "Returns helpful text about the different subcommands.", "O(1)"},
    {NULL},
};

static void pubsub_container_cmd(client_t *c)
{
    reply_arity_error(c);
}

command_t cmds_pubsub[] = {
    {"subscribe", subscribe_cmd, -2, CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0,
     0, "pubsub", "2.0.0", "Listens for messages published to channels.",
     "O(N) where N is the number of channels to subscribe to."},
    {"psubscribe", psubscribe_cmd, -2, CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0,
     0, "pubsub", "2.0.0", "Listens for messages published to channels that match one or more "
                           "patterns.",
     "O(N) where N is the number of patterns the client is already subscribed to."},
    {"unsubscribe", unsubscribe_cmd, -1, CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0,
     0, 0, "pubsub", "2.0.0", "Stops listening to messages posted to channels.",
     "O(N) where N is the number of clients already subscribed to a channel."},
    {"punsubscribe", punsubscribe_cmd, -1, CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     0, 0, 0, "pubsub", "2.0.0",
     "Stops listening to messages published to channels that match one or more patterns.",
     "O(N+M) where N is the number of patterns the client is already subscribed and M is the "
     "number of total patterns subscribed in the system (by any client)."},
    {"publish", publish_cmd, 3, CMD_PUBSUB | CMD_LOADING | CMD_STALE | CMD_FAST |
                                    CMD_MAY_REPLICATE,
     0, 0, 0, "pubsub", "2.0.0", "Posts a message to a channel.",
     "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the "
     "total number of subscribed patterns (by any client)."},
    {"pubsub", pubsub_container_cmd, -2, 0, 0, 0, 0, "pubsub", "2.8.0",
     "A container for Pub/Sub commands.", "Depends on subcommand.", NULL, pubsub_subcommands},
    {NULL},
};
