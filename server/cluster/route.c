/* route.c - which node serves a command (cluster.h's cluster_route_or_reply), as Redis 7.0's
 * getNodeByQuery and clusterRedirectClient.
 *
 * Every key of the call (the command table's key positions; for EXEC, of every queued
 * command) must hash to one slot: else CROSSSLOT. An unassigned slot is CLUSTERDOWN "Hash
 * slot not served"; a cluster in the fail state refuses keyed commands (or only writes, with
 * cluster-allow-reads-when-down). A slot another node owns is MOVED. A slot this node is
 * migrating: served while every key is still here, ASK to the target when none is, TRYAGAIN
 * for some. A slot this node imports: served to a client that sent ASKING (TRYAGAIN for a
 * multi-key call with keys missing), MOVED to the owner otherwise. MIGRATE always runs on an
 * open slot. Commands without keys are never redirected. Loop thread only. */
#include "server/cluster/cluster.h"

#include "common/alloc.h"
#include "server/block.h"
#include "server/command.h"
#include "server/multi.h"
#include "server/reply.h"
#include "server/server.h"

#include <stdio.h>
#include <string.h>

#define ROUTE_SMALL_KEYS 256 /* key positions on the stack; more are allocated */

enum redir {
    REDIR_NONE,
    REDIR_CROSS_SLOT,
    REDIR_UNSTABLE,
    REDIR_ASK,
    REDIR_MOVED,
    REDIR_DOWN_STATE,
    REDIR_DOWN_RO_STATE,
    REDIR_DOWN_UNBOUND
};

typedef struct query {
    const resp_arg_t *first; /* the first key seen, or NULL */
    int slot;
    cluster_node_t *owner;
    int migrating, importing, multiple_keys, missing, existing;
} query_t;

static int key_here(const resp_arg_t *k)
{
    db_t *db = &srv.db[0];
    kv_t *kv = db_find(db, k->ptr, k->len);
    return kv && !(kv_has_expire(kv) && db_is_expired(db, kv));
}

/* Adds the key at k to q; returns REDIR_NONE or the error found. */
static int add_key(query_t *q, const resp_arg_t *k)
{
    int slot = (int)keyslot(k->ptr, k->len);
    if (!q->first) {
        q->first = k;
        q->slot = slot;
        q->owner = cluster->slots[slot];
        if (!q->owner) return REDIR_DOWN_UNBOUND;
        if (q->owner == cluster->myself && cluster->migrating_to[slot])
            q->migrating = 1;
        else if (cluster->importing_from[slot])
            q->importing = 1;
    } else if (k->len != q->first->len || memcmp(k->ptr, q->first->ptr, k->len)) {
        if (slot != q->slot) return REDIR_CROSS_SLOT;
        q->multiple_keys = 1;
    }
    if (q->migrating || q->importing) {
        if (key_here(k))
            q->existing++;
        else
            q->missing++;
    }
    return REDIR_NONE;
}

/* Adds the keys of one call to q (every one: a call has at most argc keys); returns
 * REDIR_NONE or the error found. */
static int add_call(query_t *q, const command_t *cmd, int argc, const resp_arg_t *argv)
{
    int small[ROUTE_SMALL_KEYS];
    int *pos = argc > ROUTE_SMALL_KEYS ? xmalloc(sizeof(*pos) * (size_t)argc) : small;
    int n =
        command_get_keys(cmd, argc, argv, pos, argc > ROUTE_SMALL_KEYS ? argc : ROUTE_SMALL_KEYS);
    int err = REDIR_NONE;
    for (int j = 0; j < n && err == REDIR_NONE; j++) err = add_key(q, &argv[pos[j]]);
    if (pos != small) xfree(pos);
    return err;
}

static int is_exec(const command_t *cmd)
{
    return !strcmp(cmd->name, "exec") && !cmd->parent;
}

static int is_migrate(const command_t *cmd)
{
    return !strcmp(cmd->name, "migrate") && !cmd->parent;
}

/* Redis's getNodeByQuery once q holds the call's keys: the node to serve it, *err the
 * redirection (REDIR_NONE when the node is myself). cflags: the client's flags (ASKING). */
static cluster_node_t *decide(const query_t *q, const command_t *cmd, uint32_t cflags, int write,
                              int *err)
{
    if (!q->owner) return cluster->myself; /* no key: served anywhere */
    if (cluster->state != CLUSTER_OK) {
        if (!srv.cfg.cluster_allow_reads_when_down)
            *err = REDIR_DOWN_STATE;
        else if (write)
            *err = REDIR_DOWN_RO_STATE;
        if (*err != REDIR_NONE) return NULL;
    }
    if ((q->migrating || q->importing) && is_migrate(cmd)) return cluster->myself;
    if (q->migrating && q->missing) {
        if (q->existing) {
            *err = REDIR_UNSTABLE;
            return NULL;
        }
        *err = REDIR_ASK;
        return cluster->migrating_to[q->slot];
    }
    if (q->importing && ((cflags & CLIENT_ASKING) || (cmd->flags & CMD_ASKING))) {
        if (q->multiple_keys && q->missing) {
            *err = REDIR_UNSTABLE;
            return NULL;
        }
        return cluster->myself;
    }
    if (q->owner != cluster->myself) *err = REDIR_MOVED;
    return q->owner;
}

/* The node for c's call (for EXEC: of every queued command together). */
static cluster_node_t *node_for(client_t *c, query_t *q, int *err)
{
    const command_t *cmd = c->cmd;
    *err = REDIR_NONE;
    if (is_exec(cmd)) {
        if (!(c->flags & CLIENT_MULTI)) return cluster->myself;
        for (int i = 0, nq = multi_queued_count(c); i < nq; i++) {
            int argc;
            const resp_arg_t *argv;
            const command_t *qc = multi_queued_get(c, i, &argc, &argv);
            if ((*err = add_call(q, qc, argc, argv)) != REDIR_NONE) return NULL;
        }
    } else if ((*err = add_call(q, cmd, c->argc, c->argv)) != REDIR_NONE) {
        return NULL;
    }
    int write = (command_call_flags(c, cmd) & CMD_WRITE) != 0;
    return decide(q, cmd, c->flags, write, err);
}

static void redirect(client_t *c, const cluster_node_t *n, int slot, int err)
{
    switch (err) {
    case REDIR_CROSS_SLOT:
        reply_error(c, "CROSSSLOT Keys in request don't hash to the same slot");
        break;
    case REDIR_UNSTABLE:
        reply_error(c, "TRYAGAIN Multiple keys request during rehashing of slot");
        break;
    case REDIR_DOWN_STATE:
        reply_error(c, "CLUSTERDOWN The cluster is down");
        break;
    case REDIR_DOWN_RO_STATE:
        reply_error(c, "CLUSTERDOWN The cluster is down and only accepts read commands");
        break;
    case REDIR_DOWN_UNBOUND:
        reply_error(c, "CLUSTERDOWN Hash slot not served");
        break;
    default:
        reply_errorf(c, "%s %d %s:%d", err == REDIR_ASK ? "ASK" : "MOVED", slot,
                     cluster_node_endpoint(n), n->port);
    }
}

int cluster_route_or_reply(client_t *c)
{
    const command_t *cmd = c->cmd;
    if (!cmd->first_key && !cmd->getkeys && !is_exec(cmd)) return 0;
    if (c->flags & CLIENT_FAKE) return 0; /* the AOF replays what this node accepted */
    query_t q = {0};
    int err;
    cluster_node_t *n = node_for(c, &q, &err);
    if (n == cluster->myself && err == REDIR_NONE) return 0;
    if (is_exec(cmd))
        multi_reset(c);
    else
        multi_flag_error(c);
    redirect(c, n, q.slot, err);
    return -1;
}

const char *cluster_script_refusal(const client_t *caller, const command_t *cmd, int argc,
                                   const resp_arg_t *argv, int *slot)
{
    if (caller->flags & CLIENT_FAKE) return NULL;
    if (!cmd->first_key && !cmd->getkeys) return NULL;
    query_t q = {0};
    int err = add_call(&q, cmd, argc, argv);
    cluster_node_t *n = NULL;
    if (err == REDIR_NONE) n = decide(&q, cmd, caller->flags, (cmd->flags & CMD_WRITE) != 0, &err);
    if (err == REDIR_DOWN_RO_STATE)
        return "Script attempted to execute a write command while the cluster is down and "
               "readonly";
    if (err == REDIR_DOWN_STATE)
        return "Script attempted to execute a command while the cluster is down";
    if (n != cluster->myself || err != REDIR_NONE)
        return "Script attempted to access a non local key in a cluster node";
    if (q.first && slot) {
        if (*slot == -1)
            *slot = q.slot;
        else if (*slot != q.slot)
            return "Script attempted to access keys that do not hash to the same slot";
    }
    return NULL;
}

/* Redis's clusterRedirectBlockedClientIfNeeded for one client: 1 when it was unblocked. */
static int redirect_blocked(client_t *c)
{
    int argc, key;
    const resp_arg_t *argv;
    if (!block_keys_of(c, &argc, &argv, &key)) return 0;
    /* a write that would unblock it may never come while the cluster is down */
    if (cluster->state != CLUSTER_OK)
        return block_unblock_error(c, "CLUSTERDOWN The cluster is down");
    int slot = (int)keyslot(argv[key].ptr, argv[key].len);
    const cluster_node_t *n = cluster->slots[slot];
    if (n == cluster->myself || cluster->importing_from[slot]) return 0;
    if (!n) return block_unblock_error(c, "CLUSTERDOWN Hash slot not served");
    char msg[128];
    snprintf(msg, sizeof(msg), "MOVED %d %s:%d", slot, cluster_node_endpoint(n), n->port);
    return block_unblock_error(c, msg);
}

void cluster_redirect_blocked(void)
{
    if (!block_count()) return;
    for (client_t *c = srv.clients; c; c = c->next)
        if (c->flags & CLIENT_BLOCKED) redirect_blocked(c);
}

void cluster_after_command(client_t *c, const command_t *cmd)
{
    if ((c->flags & CLIENT_ASKING) && !(c->flags & CLIENT_MULTI) &&
        (!cmd || strcmp(cmd->name, "asking")))
        c->flags &= ~(uint32_t)CLIENT_ASKING;
}
