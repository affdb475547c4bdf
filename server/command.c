/* command.c - the command table, lookup and dispatch (see command.h).
 *
 * Lookup: a dict keyed by lower-case name over every row of every group table. Dispatch
 * checks arity, authentication and ACL permissions (server/acl.h), routes in cluster mode
 * (MOVED, ASK, CROSSSLOT...: server/cluster/cluster.h), runs the command with time frozen
 * (db_now_ms) and keeps per-command statistics for INFO commandstats. Runs on the loop thread. */
#include "server/cmd_docs.h"
#include "server/command.h"

#include "common/alloc.h"
#include "common/buf.h"
#include "common/dict.h"
#include "common/util.h"
#include "server/acl.h"
#include "server/block.h"
#include "server/cluster/cluster.h"
#include "server/evict.h"
#include "server/hooks.h"
#include "server/introspect.h"
#include "server/multi.h"
#include "server/pubsub.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/tracking.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef struct cmd_node {
    dict_node_t node;
    command_t *cmd;
} cmd_node_t;

static const void *cmd_key(const dict_node_t *n, size_t *len)
{
    const cmd_node_t *c = (const cmd_node_t *)n;
    *len = strlen(c->cmd->name);
    return c->cmd->name;
}

static void cmd_free(dict_node_t *n, void *ud)
{
    xfree(n);
}

static const dict_type_t cmd_dict_type = {cmd_key, cmd_free};
static dict_t table;
static int table_ready;

static command_t *const core_tables[] = {cmds_multi, cmds_pubsub, cmds_introspect};

static void name_sub(command_t *parent)
{
    for (command_t *s = (command_t *)parent->subcommands; s && s->name; s++) {
        s->parent = parent;
        snprintf(s->fullname, sizeof(s->fullname), "%s|%s", parent->name, s->name);
    }
}

static void add_table(command_t *cmds)
{
    for (command_t *cmd = cmds; cmd->name; cmd++) {
        cmd_node_t *n = xmalloc(sizeof(*n));
        n->cmd = cmd;
        n->node.hash = dict_hash(cmd->name, strlen(cmd->name));
        snprintf(cmd->fullname, sizeof(cmd->fullname), "%s", cmd->name);
        name_sub(cmd);
        dict_insert(&table, &n->node);
    }
}

void command_table_init(void)
{
    if (table_ready) return;
    dict_init(&table, &cmd_dict_type);
    for (size_t g = 0; g < sizeof(core_tables) / sizeof(core_tables[0]); g++)
        add_table(core_tables[g]);
    const server_room_t *const *rooms;
    size_t n = server_rooms(&rooms);
    for (size_t i = 0; i < n; i++)
        if (rooms[i]->commands) add_table(rooms[i]->commands);
    /* finish growing now: a lookup that completes the rehash frees the old bucket array, and
     * used_memory would drop under a command (the eviction tests saw it) */
    while (dict_is_rehashing(&table)) dict_rehash(&table, 100);
    cmd_docs_init();
    table_ready = 1;
}

const command_t *command_lookup(const resp_arg_t *name)
{
    char low[64];
    if (name->len == 0 || name->len >= sizeof(low)) return NULL;
    for (size_t i = 0; i < name->len; i++) low[i] = (char)tolower((unsigned char)name->ptr[i]);
    cmd_node_t *n = (cmd_node_t *)dict_find(&table, low, name->len, dict_hash(low, name->len));
    return n ? n->cmd : NULL;
}

const command_t *command_lookup_sub(const command_t *parent, const resp_arg_t *name)
{
    for (const command_t *s = parent->subcommands; s && s->name; s++)
        if (strlen(s->name) == name->len && strncasecmp(s->name, name->ptr, name->len) == 0)
            return s;
    return NULL;
}

void command_foreach(void (*fn)(void *ud, const command_t *cmd), void *ud)
{
    dict_iter_t it;
    dict_iter_init(&it, &table, 0);
    for (dict_node_t *n; (n = dict_iter_next(&it));) fn(ud, ((cmd_node_t *)n)->cmd);
    dict_iter_deinit(&it);
}

size_t command_count(void)
{
    return dict_size(&table);
}

char *command_key_flags(const command_t *cmd, int i, char *out)
{
    const char *p = cmd->key_flags;
    if (!p) {
        snprintf(out, 64, "%s", (cmd->flags & CMD_READONLY) ? "RO access" : "RW update");
        return out;
    }
    for (; i > 0; i--) {
        const char *bar = strchr(p, '|');
        if (!bar) break;
        p = bar + 1;
    }
    snprintf(out, 64, "%.*s", (int)strcspn(p, "|"), p);
    return out;
}

char *command_call_key_flags(const command_t *cmd, int argc, const resp_arg_t *argv, int i,
                             char *out)
{
    if (!cmd->keyflags) return command_key_flags(cmd, i, out);
    cmd->keyflags(argc, argv, i, out);
    return out;
}

uint32_t command_call_flags(const client_t *c, const command_t *cmd)
{
    return cmd->getflags ? cmd->getflags(c, cmd->flags) : cmd->flags;
}

int command_get_keys(const command_t *cmd, int argc, const resp_arg_t *argv, int *pos, int max)
{
    if (cmd->getkeys) return cmd->getkeys(argc, argv, pos, max);
    if (cmd->first_key <= 0) return 0;
    int last = cmd->last_key < 0 ? argc + cmd->last_key : cmd->last_key;
    int step = cmd->key_step > 0 ? cmd->key_step : 1, n = 0;
    for (int i = cmd->first_key; i <= last && i < argc && n < max; i += step) pos[n++] = i;
    return n;
}

static void reject_unknown(client_t *c)
{
    buf_t args;
    buf_init(&args);
    for (int i = 1; i < c->argc && args.len < 128; i++)
        buf_printf(&args, "'%.*s' ", (int)(128 - args.len < c->argv[i].len ? 128 - args.len
                                                                            : c->argv[i].len),
                   c->argv[i].ptr);
    reply_errorf(c, "ERR unknown command '%.*s', with args beginning with: %s",
                 (int)(c->argv[0].len > 128 ? 128 : c->argv[0].len), c->argv[0].ptr,
                 args.data ? args.data : "");
    buf_deinit(&args);
}

static void reject_subcommand(client_t *c, const command_t *parent)
{
    char up[48];
    size_t i = 0;
    for (; parent->name[i] && i < sizeof(up) - 1; i++)
        up[i] = (char)toupper((unsigned char)parent->name[i]);
    up[i] = '\0';
    reply_errorf(c, "ERR unknown subcommand '%.*s'. Try %s HELP.",
                 (int)(c->argv[1].len > 128 ? 128 : c->argv[1].len), c->argv[1].ptr, up);
}

static int arity_ok(const command_t *cmd, int argc)
{
    return cmd->arity > 0 ? argc == cmd->arity : argc >= -cmd->arity;
}

/* Finds and checks the command; replies and returns NULL when it is rejected. */
static const command_t *resolve(client_t *c)
{
    const command_t *cmd = command_lookup(&c->argv[0]);
    if (!cmd) {
        reject_unknown(c);
        return NULL;
    }
    if (cmd->subcommands && c->argc >= 2) {
        const command_t *sub = command_lookup_sub(cmd, &c->argv[1]);
        if (!sub) {
            reject_subcommand(c, cmd);
            return NULL;
        }
        cmd = sub;
    }
    c->cmd = cmd;
    if (!arity_ok(cmd, c->argc)) {
        char msg[96]; /* EXEC rejected aborts the transaction (multi_exec_rejected) */
        snprintf(msg, sizeof(msg), "wrong number of arguments for '%s' command", cmd->fullname);
        if (!multi_exec_rejected(c, msg)) reply_arity_error(c);
        return NULL;
    }
    if (acl_auth_required(c) && !(cmd->flags & CMD_NO_AUTH)) {
        if (!multi_exec_rejected(c, "NOAUTH Authentication required."))
            reply_error(c, "NOAUTH Authentication required.");
        return NULL;
    }
    if (acl_reject_or_reply(c, (c->flags & CLIENT_MULTI) ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL))
        return NULL;
    if (cluster && cluster_route_or_reply(c)) return NULL; /* MOVED, ASK, CROSSSLOT... */
    if (srv.busy_error && !(cmd->flags & CMD_ALLOW_BUSY)) {
        if (!multi_exec_rejected(c, srv.busy_error)) reply_error(c, srv.busy_error);
        return NULL;
    }
    if (evict_reject_or_reply(c, cmd)) return NULL;
    if (pubsub_reject_or_reply(c, cmd)) return NULL;
    if (srv.loading && !(cmd->flags & CMD_LOADING) && !(c->flags & CLIENT_FAKE)) {
        reply_error(c, "LOADING Redis is loading the dataset in memory");
        return NULL;
    }
    return cmd;
}

/* The clock at the end of the last top-level call of client_process_input's current batch
 * (0 outside one): the next command of the batch starts there, one clock read a command instead
 * of two (its usec then includes the parsing of its own request, as a pipeline's does in
 * Redis's latency monitor). Nested calls (EXEC's queue, scripts) read the clock themselves. */
static long long batch_clock_us;
static int call_depth;

void command_batch_end(void)
{
    batch_clock_us = 0;
}

void command_call(client_t *c)
{
    const command_t *cmd = c->cmd;
    long long t0 = call_depth == 0 && batch_clock_us ? batch_clock_us : time_us();
    call_depth++;
    long long saved_now = db_now_ms;
    if (!saved_now) db_now_ms = t0 / 1000;
    c->last_cmd_ms = t0 / 1000;
    uint32_t in_call = c->flags & CLIENT_IN_CALL;
    c->flags |= CLIENT_IN_CALL;
    client_t *tracking_prev = tracking_call_begin(c);
    long long dirty = srv.dirty;
    server_call_gate_t *gate = server_call_gate();
    if (!gate || !gate(c, cmd)) cmd->proc(c);
    /* a write that changed something is logged (as argv, or what the command put instead) */
    if ((cmd->flags & CMD_WRITE) && srv.dirty != dirty && !(c->flags & CLIENT_NO_PROPAGATE))
        server_log_propagate(c, c->dbid, c->argc, c->argv);
    else server_log_replace_argv_drop();
    c->flags = (c->flags & ~(uint32_t)CLIENT_IN_CALL) | in_call;
    tracking_call_end(c, tracking_prev);
    db_now_ms = saved_now;
    long long t1 = time_us();
    long long us = t1 - t0;
    batch_clock_us = --call_depth == 0 && (c->flags & CLIENT_IN_INPUT) ? t1 : 0;
    introspect_after_call(c, us);
    command_t *m = (command_t *)cmd;
    if (!block_waiting(c)) { /* a blocking command counts once, when served */
        m->calls++;
        m->usec += (uint64_t)us;
        if (srv.cfg.latency_tracking) introspect_track_latency(m, us);
    }
    srv.stat.numcommands++;
}

int command_dispatch(client_t *c)
{
    c->cmd = NULL;
    const command_t *cmd = resolve(c);
    if (!cmd) {
        if (c->cmd) ((command_t *)c->cmd)->rejected_calls++;
        tracking_after_command(c, c->cmd);
        if (c->flags & CLIENT_ASKING) cluster_after_command(c, c->cmd);
        c->cmd = NULL;
        multi_flag_error(c);
        return -1;
    }
    tracking_before_command(c);
    /* in Redis's order: a failing AOF refuses writes and a pause holds them before MULTI
     * queues them; the flags are the call's (a script's own, EXEC's queued commands') */
    const char *log_err = server_write_refusal();
    if (log_err && (command_call_flags(c, cmd) & CMD_WRITE)) {
        if (!multi_exec_rejected(c, log_err)) reply_error(c, log_err);
        multi_flag_error(c);
    } else if (introspect_paused(c, cmd)) {
        block_postpone(c);
    } else if (multi_should_queue(c, cmd)) {
        multi_queue(c);
    } else {
        c->lastcmd = cmd;
        command_call(c);
        if (!srv.busy_error) block_handle_ready(); /* not in the middle of a busy script */
    }
    tracking_after_command(c, cmd);
    if (c->flags & CLIENT_ASKING) cluster_after_command(c, cmd);
    c->cmd = NULL;
    if (c->flags & CLIENT_REPLY_SKIP) c->flags &= ~(uint32_t)CLIENT_REPLY_SKIP;
    if (c->flags & CLIENT_REPLY_SKIP_NEXT) {
        c->flags &= ~(uint32_t)CLIENT_REPLY_SKIP_NEXT;
        c->flags |= CLIENT_REPLY_SKIP;
    }
    return 0;
}
