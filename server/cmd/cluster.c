/* server/cmd/cluster.c - CLUSTER and its subcommands, READONLY, READWRITE and ASKING.
 *
 * With cluster-enabled no every one of them answers Redis's "This instance has cluster support
 * disabled" (after the table's arity check, as Redis). With yes they read and change the state
 * of server/cluster/cluster.h with Redis 7.0's arguments, checks and error wordings; a change
 * is saved to the config file and the state recomputed before the reply is sent
 * (cluster_before_sleep). Replication is not there yet: REPLICAS answers the (empty) list of a
 * master's replicas, REPLICATE refuses after Redis's own checks, FAILOVER answers as a master.
 * Runs on the loop thread. */
#include "common/alloc.h"
#include "common/buf.h"
#include "common/log.h"
#include "common/util.h"
#include "server/cluster/cluster.h"
#include "server/cluster/state_int.h"
#include "server/cmd/cmd.h"
#include "server/reply.h"
#include "server/server.h"
#include "storage/slot_index.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Replies the disabled error and returns 0 without cluster mode; 1 with it. */
static int enabled_or_reply(client_t *c)
{
    if (cluster) return 1;
    reply_error(c, "ERR This instance has cluster support disabled");
    return 0;
}

#define REQUIRE_CLUSTER(c)                                                                         \
    do {                                                                                           \
        if (!enabled_or_reply(c)) return;                                                          \
    } while (0)

/* The change is made: save and recompute before the reply leaves. */
static void changed(uint32_t todo)
{
    cluster_todo(todo);
    cluster_before_sleep();
}

static void reply_subcommand_syntax(client_t *c)
{
    reply_errorf(c,
                 "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try CLUSTER "
                 "HELP.",
                 (int)(c->argv[1].len > 128 ? 128 : c->argv[1].len), c->argv[1].ptr);
}

/* The node named by a, or NULL after replying "Unknown node <id>" (fmt lets SETSLOT use its
 * own wording). */
static cluster_node_t *node_or_reply(client_t *c, const resp_arg_t *a, const char *fmt)
{
    cluster_node_t *n = cluster_node_lookup(a->ptr, a->len);
    if (!n) reply_errorf(c, fmt, (int)(a->len > 128 ? 128 : a->len), a->ptr);
    return n;
}
#define UNKNOWN_NODE "ERR Unknown node %.*s"

/* A slot number, or -1 after replying Redis's "Invalid or out of range slot". */
static int slot_or_reply(client_t *c, const resp_arg_t *a)
{
    long long s;
    if (!str_to_ll(a->ptr, a->len, &s) || s < 0 || s >= CLUSTER_SLOTS) {
        reply_error(c, "ERR Invalid or out of range slot");
        return -1;
    }
    return (int)s;
}

static uint64_t keys_in_slot(int slot)
{
    return srv.db[0].slots ? slot_index_count(srv.db[0].slots, slot) : 0;
}

/* ---- HELP, INFO, MYID, NODES, SLOTS, SHARDS ---- */

static void help_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    static const char *const lines[] = {
        "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ADDSLOTS <slot> [<slot> ...]",
        "    Assign slots to current node.",
        "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
        "    Assign slots which are between <start-slot> and <end-slot> to current node.",
        "BUMPEPOCH",
        "    Advance the cluster config epoch.",
        "COUNT-FAILURE-REPORTS <node-id>",
        "    Return number of failure reports for <node-id>.",
        "COUNTKEYSINSLOT <slot>",
        "    Return the number of keys in <slot>.",
        "DELSLOTS <slot> [<slot> ...]",
        "    Delete slots information from current node.",
        "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
        "    Delete slots information which are between <start-slot> and <end-slot>.",
        "FAILOVER [FORCE|TAKEOVER]",
        "    Promote current replica node to being a master (no replicas on this server yet).",
        "FORGET <node-id>",
        "    Remove a node from the cluster.",
        "GETKEYSINSLOT <slot> <count>",
        "    Return key names stored by current node in a slot.",
        "FLUSHSLOTS",
        "    Delete current node own slots information.",
        "INFO",
        "    Return information about the cluster.",
        "KEYSLOT <key>",
        "    Return the hash slot for <key>.",
        "LINKS",
        "    Return information about all network links between this node and its peers.",
        "MEET <ip> <port> [<bus-port>]",
        "    Connect nodes into a working cluster.",
        "MYID",
        "    Return the node id.",
        "NODES",
        "    Return cluster configuration seen by node. Output format:",
        "    <id> <ip:port@bus-port[,hostname]> <flags> <master> <pings> <pongs> <epoch> "
        "<link> <slot> ...",
        "REPLICATE <node-id>",
        "    Configure current node as replica to <node-id> (not supported yet).",
        "RESET [HARD|SOFT]",
        "    Reset current node (default: soft).",
        "SET-CONFIG-EPOCH <epoch>",
        "    Set config epoch of current node.",
        "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
        "    Set slot state.",
        "REPLICAS <node-id>",
        "    Return <node-id> replicas.",
        "SAVECONFIG",
        "    Force saving cluster configuration on disk.",
        "SLOTS",
        "    Return information about slots range mappings. Each range is made of:",
        "    start, end, master and replicas IP addresses, ports and ids",
        "SHARDS",
        "    Return information about slot range mappings and the nodes associated with them.",
        "HELP",
        "    Print this help.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

static void info_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    int assigned = 0, ok = 0, pfail = 0, fail = 0;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        const cluster_node_t *n = cluster->slots[s];
        if (!n) continue;
        assigned++;
        if (n->flags & CLUSTER_NODE_FAIL)
            fail++;
        else if (n->flags & CLUSTER_NODE_PFAIL)
            pfail++;
        else
            ok++;
    }
    const cluster_node_t *me = cluster->myself;
    uint64_t my_epoch = me->replicaof ? me->replicaof->config_epoch : me->config_epoch;
    buf_t b;
    buf_init(&b);
    buf_printf(&b,
               "cluster_state:%s\r\ncluster_slots_assigned:%d\r\ncluster_slots_ok:%d\r\n"
               "cluster_slots_pfail:%d\r\ncluster_slots_fail:%d\r\ncluster_known_nodes:%d\r\n"
               "cluster_size:%d\r\ncluster_current_epoch:%llu\r\ncluster_my_epoch:%llu\r\n",
               cluster->state == CLUSTER_OK ? "ok" : "fail", assigned, ok, pfail, fail,
               cluster->num_nodes, cluster->size, (unsigned long long)cluster->current_epoch,
               (unsigned long long)my_epoch);
    for (int dir = 0; dir < 2; dir++) {
        const uint64_t *st = dir ? cluster->stats_msg_received : cluster->stats_msg_sent;
        const char *what = dir ? "received" : "sent";
        unsigned long long total = 0;
        for (int t = 0; t < CLUSTER_MSG_TYPES; t++) {
            const char *name = cluster_bus_msg_name(t);
            if (!st[t] || !name) continue;
            total += st[t];
            buf_printf(&b, "cluster_stats_messages_%s_%s:%llu\r\n", name, what,
                       (unsigned long long)st[t]);
        }
        buf_printf(&b, "cluster_stats_messages_%s:%llu\r\n", what, total);
    }
    buf_printf(&b, "total_cluster_links_buffer_limit_exceeded:%llu\r\n",
               (unsigned long long)cluster->stats_links_buffer_limit_exceeded);
    reply_verbatim(c, b.data, b.len, "txt");
    buf_deinit(&b);
}

static void myid_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    reply_bulk(c, cluster->myself->id, CLUSTER_NAMELEN);
}

static void nodes_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    buf_t b;
    buf_init(&b);
    for (int i = 0; i < cluster->num_nodes; i++) {
        cluster__node_line(&b, cluster->nodes[i]);
        buf_append_str(&b, "\n");
    }
    reply_verbatim(c, b.data, b.len, "txt");
    buf_deinit(&b);
}

/* [endpoint, port, id, {ip, hostname}] as CLUSTER SLOTS shows a node: the preferred endpoint
 * first (NULL for unknown-endpoint), then what else is known of its address. */
static void reply_slot_node(client_t *c, const cluster_node_t *n)
{
    int type = srv.cfg.cluster_preferred_endpoint_type;
    reply_array(c, 4);
    if (type == CONFIG_ENDPOINT_UNKNOWN)
        reply_null(c);
    else
        reply_bulk_cstr(c, cluster_node_endpoint(n));
    reply_int(c, n->port);
    reply_bulk(c, n->id, CLUSTER_NAMELEN);
    int with_ip = type != CONFIG_ENDPOINT_IP;
    int with_host = type != CONFIG_ENDPOINT_HOSTNAME && n->hostname[0];
    reply_map(c, with_ip + with_host);
    if (with_ip) {
        reply_bulk_cstr(c, "ip");
        reply_bulk_cstr(c, n->ip);
    }
    if (with_host) {
        reply_bulk_cstr(c, "hostname");
        reply_bulk_cstr(c, n->hostname);
    }
}

static void slots_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    size_t h = reply_defer(c);
    long long ranges = 0;
    for (int s = 0; s < CLUSTER_SLOTS;) {
        const cluster_node_t *n = cluster->slots[s];
        int e = s;
        while (e + 1 < CLUSTER_SLOTS && cluster->slots[e + 1] == n) e++;
        if (n) {
            reply_array(c, 3);
            reply_int(c, s);
            reply_int(c, e);
            reply_slot_node(c, n);
            ranges++;
        }
        s = e + 1;
    }
    reply_defer_finish(c, h, '*', ranges);
}

static void reply_shard_node(client_t *c, const cluster_node_t *n)
{
    int pairs = 7 + (n->hostname[0] ? 1 : 0);
    reply_map(c, pairs);
    reply_bulk_cstr(c, "id");
    reply_bulk(c, n->id, CLUSTER_NAMELEN);
    reply_bulk_cstr(c, "port");
    reply_int(c, n->port);
    reply_bulk_cstr(c, "ip");
    reply_bulk_cstr(c, n->ip);
    reply_bulk_cstr(c, "endpoint");
    reply_bulk_cstr(c, cluster_node_endpoint(n));
    if (n->hostname[0]) {
        reply_bulk_cstr(c, "hostname");
        reply_bulk_cstr(c, n->hostname);
    }
    reply_bulk_cstr(c, "role");
    reply_bulk_cstr(c, (n->flags & CLUSTER_NODE_SLAVE) ? "replica" : "master");
    reply_bulk_cstr(c, "replication-offset");
    reply_int(c, (long long)n->repl_offset);
    reply_bulk_cstr(c, "health");
    reply_bulk_cstr(c, (n->flags & CLUSTER_NODE_FAIL) ? "fail" : "online");
}

static void shards_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    size_t h = reply_defer(c);
    long long shards = 0;
    for (int i = 0; i < cluster->num_nodes; i++) {
        const cluster_node_t *n = cluster->nodes[i];
        if (!(n->flags & CLUSTER_NODE_MASTER)) continue;
        shards++;
        reply_map(c, 2);
        reply_bulk_cstr(c, "slots");
        size_t hs = reply_defer(c);
        long long bounds = 0;
        for (int s = 0; s < CLUSTER_SLOTS; s++) {
            if (!cluster_node_has_slot(n, s)) continue;
            int e = s;
            while (e + 1 < CLUSTER_SLOTS && cluster_node_has_slot(n, e + 1)) e++;
            reply_int(c, s);
            reply_int(c, e);
            bounds += 2;
            s = e;
        }
        reply_defer_finish(c, hs, '*', bounds);
        reply_bulk_cstr(c, "nodes");
        reply_array(c, 1 + n->num_replicas);
        reply_shard_node(c, n);
        for (int r = 0; r < n->num_replicas; r++) reply_shard_node(c, n->replicas[r]);
    }
    reply_defer_finish(c, h, '*', shards);
}

/* ---- slots: KEYSLOT, COUNTKEYSINSLOT, GETKEYSINSLOT, ADD/DEL(RANGE), FLUSHSLOTS ---- */

static void keyslot_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    reply_int(c, keyslot(c->argv[2].ptr, c->argv[2].len));
}

static void countkeysinslot_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    long long slot;
    if (arg_ll_or_reply(c, &c->argv[2], &slot, NULL) < 0) return;
    if (slot < 0 || slot >= CLUSTER_SLOTS) {
        reply_error(c, "ERR Invalid slot");
        return;
    }
    reply_int(c, (long long)keys_in_slot((int)slot));
}

static void getkeysinslot_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    long long slot, max;
    if (arg_ll_or_reply(c, &c->argv[2], &slot, NULL) < 0 ||
        arg_ll_or_reply(c, &c->argv[3], &max, NULL) < 0)
        return;
    if (slot < 0 || slot >= CLUSTER_SLOTS || max < 0) {
        reply_error(c, "ERR Invalid slot or number of keys");
        return;
    }
    uint64_t have = keys_in_slot((int)slot);
    size_t n = (uint64_t)max < have ? (size_t)max : (size_t)have;
    if (!n) {
        reply_array(c, 0);
        return;
    }
    kv_t **keys = xmalloc(sizeof(*keys) * n); /* n <= keys in the slot: bounded by memory */
    n = slot_index_keys(srv.db[0].slots, (int)slot, keys, n);
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n && !reply_stopped(c); i++)
        reply_bulk(c, kv_key(keys[i]), kv_keylen(keys[i]));
    xfree(keys);
}

/* Marks slots start..end in `want` (CLUSTER_SLOTS bytes) after Redis's checks: each must be
 * assigned (del) or free (add), and named once. 0, or -1 after replying. */
static int check_slots_or_reply(client_t *c, unsigned char *want, int del, int start, int end)
{
    for (int s = start; s <= end; s++) {
        if (del && !cluster->slots[s]) {
            reply_errorf(c, "ERR Slot %d is already unassigned", s);
            return -1;
        }
        if (!del && cluster->slots[s]) {
            reply_errorf(c, "ERR Slot %d is already busy", s);
            return -1;
        }
        if (want[s]++ == 1) {
            reply_errorf(c, "ERR Slot %d specified multiple times", s);
            return -1;
        }
    }
    return 0;
}

/* Applies want (slots checked by check_slots_or_reply) to myself, and replies +OK. */
static void update_slots(client_t *c, const unsigned char *want, int del)
{
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (!want[s]) continue;
        /* taking a slot we were importing: we own it now */
        if (cluster->importing_from[s]) cluster->importing_from[s] = NULL;
        if (del)
            cluster_slot_del(s);
        else
            cluster_slot_add(cluster->myself, s);
    }
    changed(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
    reply_ok(c);
}

static void addslots_generic(client_t *c, int del)
{
    REQUIRE_CLUSTER(c);
    unsigned char *want = xcalloc(1, CLUSTER_SLOTS);
    for (int j = 2; j < c->argc; j++)
        if (slot_or_reply(c, &c->argv[j]) < 0) goto out;
    for (int j = 2; j < c->argc; j++) {
        int s = slot_or_reply(c, &c->argv[j]);
        if (check_slots_or_reply(c, want, del, s, s) < 0) goto out;
    }
    update_slots(c, want, del);
out:
    xfree(want);
}

static void addslotsrange_generic(client_t *c, int del)
{
    REQUIRE_CLUSTER(c);
    if (c->argc % 2 == 1) {
        reply_arity_error(c);
        return;
    }
    unsigned char *want = xcalloc(1, CLUSTER_SLOTS);
    for (int j = 2; j < c->argc; j += 2) {
        int start = slot_or_reply(c, &c->argv[j]);
        if (start < 0) goto out;
        int end = slot_or_reply(c, &c->argv[j + 1]);
        if (end < 0) goto out;
        if (start > end) {
            reply_errorf(c, "ERR start slot number %d is greater than end slot number %d", start,
                         end);
            goto out;
        }
        if (check_slots_or_reply(c, want, del, start, end) < 0) goto out;
    }
    update_slots(c, want, del);
out:
    xfree(want);
}

static void addslots_cmd(client_t *c)
{
    addslots_generic(c, 0);
}
static void delslots_cmd(client_t *c)
{
    addslots_generic(c, 1);
}
static void addslotsrange_cmd(client_t *c)
{
    addslotsrange_generic(c, 0);
}
static void delslotsrange_cmd(client_t *c)
{
    addslotsrange_generic(c, 1);
}

static void flushslots_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    if (db_size(&srv.db[0]) != 0) {
        reply_error(c, "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
        return;
    }
    cluster_node_del_slots(cluster->myself);
    changed(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
    reply_ok(c);
}

/* ---- SETSLOT ---- */

/* SETSLOT <slot> NODE <id>, as Redis 7.0 (without the turn into a replica). */
static int setslot_node(client_t *c, int slot, const resp_arg_t *id)
{
    cluster_node_t *n = node_or_reply(c, id, UNKNOWN_NODE), *me = cluster->myself;
    if (!n) return -1;
    if (n->flags & CLUSTER_NODE_SLAVE) {
        reply_error(c, "ERR Target node is not a master");
        return -1;
    }
    uint64_t keys = keys_in_slot(slot);
    if (cluster->slots[slot] == me && n != me && keys) {
        reply_errorf(c,
                     "ERR Can't assign hashslot %d to a different node while I still hold keys "
                     "for this hash slot.",
                     slot);
        return -1;
    }
    /* a migration with no key left here is over once the slot has an owner */
    if (!keys && cluster->migrating_to[slot]) cluster->migrating_to[slot] = NULL;
    cluster_node_t *importing = cluster->importing_from[slot];
    cluster_node_t *migrating = cluster->migrating_to[slot];
    cluster_slot_del(slot); /* (clears both marks) */
    cluster_slot_add(n, slot);
    cluster->migrating_to[slot] = migrating;
    if (n == me && importing) {
        /* taken without agreement: a new epoch makes the new owner win everywhere */
        if (cluster_bump_epoch_without_consensus())
            log_notice("configEpoch updated after importing slot %d", slot);
        cluster_bus_broadcast_pong();
    } else {
        cluster->importing_from[slot] = importing;
    }
    return 0;
}

static void setslot_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    cluster_node_t *me = cluster->myself, *n;
    if (me->flags & CLUSTER_NODE_SLAVE) {
        reply_error(c, "ERR Please use SETSLOT only with masters.");
        return;
    }
    int slot = slot_or_reply(c, &c->argv[2]);
    if (slot < 0) return;
    const resp_arg_t *action = &c->argv[3];
    if (arg_is(action, "migrating") && c->argc == 5) {
        if (cluster->slots[slot] != me) {
            reply_errorf(c, "ERR I'm not the owner of hash slot %u", slot);
            return;
        }
        if (!(n = node_or_reply(c, &c->argv[4], "ERR I don't know about node %.*s"))) return;
        if (n->flags & CLUSTER_NODE_SLAVE) {
            reply_error(c, "ERR Target node is not a master");
            return;
        }
        cluster->migrating_to[slot] = n;
    } else if (arg_is(action, "importing") && c->argc == 5) {
        if (cluster->slots[slot] == me) {
            reply_errorf(c, "ERR I'm already the owner of hash slot %u", slot);
            return;
        }
        if (!(n = node_or_reply(c, &c->argv[4], "ERR I don't know about node %.*s"))) return;
        if (n->flags & CLUSTER_NODE_SLAVE) {
            reply_error(c, "ERR Target node is not a master");
            return;
        }
        cluster->importing_from[slot] = n;
    } else if (arg_is(action, "stable") && c->argc == 4) {
        cluster->importing_from[slot] = cluster->migrating_to[slot] = NULL;
    } else if (arg_is(action, "node") && c->argc == 5) {
        if (setslot_node(c, slot, &c->argv[4]) < 0) return;
    } else {
        reply_error(c, "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER "
                       "HELP");
        return;
    }
    changed(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
    reply_ok(c);
}

/* ---- epochs, config ---- */

static void bumpepoch_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    int bumped = cluster_bump_epoch_without_consensus();
    changed(CLUSTER_TODO_SAVE_CONFIG);
    char line[64];
    snprintf(line, sizeof(line), "%s %llu", bumped ? "BUMPED" : "STILL",
             (unsigned long long)cluster->myself->config_epoch);
    reply_simple(c, line);
}

static void set_config_epoch_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    long long epoch;
    if (arg_ll_or_reply(c, &c->argv[2], &epoch, NULL) < 0) return;
    if (epoch < 0) {
        reply_errorf(c, "ERR Invalid config epoch specified: %lld", epoch);
    } else if (cluster->num_nodes > 1) {
        reply_error(c, "ERR The user can assign a config epoch only when the node does not know "
                       "any other node.");
    } else if (cluster->myself->config_epoch != 0) {
        reply_error(c, "ERR Node config epoch is already non-zero");
    } else {
        cluster->myself->config_epoch = (uint64_t)epoch;
        log_notice("configEpoch set to %llu via CLUSTER SET-CONFIG-EPOCH",
                   (unsigned long long)epoch);
        if (cluster->current_epoch < (uint64_t)epoch) cluster->current_epoch = (uint64_t)epoch;
        changed(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
        reply_ok(c);
    }
}

static void saveconfig_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    int rc = cluster_save_config(1);
    if (rc == 0) {
        cluster->todo &= ~(uint32_t)(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
        reply_ok(c);
    } else {
        reply_errorf(c, "ERR error saving the cluster node config: %s", strerror(-rc));
    }
}

/* ---- membership: MEET, FORGET, RESET, COUNT-FAILURE-REPORTS, LINKS ---- */

static void meet_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    if (c->argc > 5) {
        reply_subcommand_syntax(c);
        return;
    }
    long long port, bus_port;
    if (!str_to_ll(c->argv[3].ptr, c->argv[3].len, &port)) {
        reply_errorf(c, "ERR Invalid TCP base port specified: %.*s",
                     (int)(c->argv[3].len > 64 ? 64 : c->argv[3].len), c->argv[3].ptr);
        return;
    }
    if (c->argc == 5) {
        if (!str_to_ll(c->argv[4].ptr, c->argv[4].len, &bus_port)) {
            reply_errorf(c, "ERR Invalid TCP bus port specified: %.*s",
                         (int)(c->argv[4].len > 64 ? 64 : c->argv[4].len), c->argv[4].ptr);
            return;
        }
    } else {
        bus_port = port + 10000;
    }
    char ip[CLUSTER_IPLEN + 1];
    int rc = -EINVAL;
    if (c->argv[2].len < sizeof(ip) && port >= 0 && port <= 65535 && bus_port >= 0 &&
        bus_port <= 65535) {
        memcpy(ip, c->argv[2].ptr, c->argv[2].len);
        ip[c->argv[2].len] = '\0';
        rc = cluster_start_handshake(ip, (int)port, (int)bus_port);
    }
    if (rc == -EINVAL) {
        reply_errorf(c, "ERR Invalid node address specified: %.*s:%.*s",
                     (int)(c->argv[2].len > 64 ? 64 : c->argv[2].len), c->argv[2].ptr,
                     (int)(c->argv[3].len > 64 ? 64 : c->argv[3].len), c->argv[3].ptr);
        return;
    }
    reply_ok(c);
}

static void forget_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    cluster_node_t *n = node_or_reply(c, &c->argv[2], UNKNOWN_NODE);
    if (!n) return;
    if (n == cluster->myself) {
        reply_error(c, "ERR I tried hard but I can't forget myself...");
        return;
    }
    if (cluster->myself->replicaof == n) {
        reply_error(c, "ERR Can't forget my master!");
        return;
    }
    cluster_ban_add(n->id);
    cluster_node_delete(n);
    changed(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
    reply_ok(c);
}

/* Redis's clusterReset: close and unassign every slot, forget every other node; hard: epochs
 * to 0 and a new id. */
static void reset_node(int hard)
{
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        cluster->importing_from[s] = cluster->migrating_to[s] = NULL;
        cluster_slot_del(s);
    }
    while (cluster->num_nodes > 1)
        cluster_node_delete(cluster->nodes[cluster->nodes[0] == cluster->myself ? 1 : 0]);
    if (hard) {
        cluster->current_epoch = cluster->last_vote_epoch = 0;
        cluster->myself->config_epoch = 0;
        char id[CLUSTER_NAMELEN];
        cluster_random_id(id);
        cluster_node_rename(cluster->myself, id);
        log_notice("Node hard reset, now I'm %.40s", cluster->myself->id);
    }
    changed(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_FSYNC_CONFIG);
}

static void reset_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    int hard = 0;
    if (c->argc > 3) {
        reply_subcommand_syntax(c);
        return;
    }
    if (c->argc == 3) {
        if (arg_is(&c->argv[2], "hard"))
            hard = 1;
        else if (!arg_is(&c->argv[2], "soft")) {
            reply_syntax_error(c);
            return;
        }
    }
    if (!(cluster->myself->flags & CLUSTER_NODE_SLAVE) && db_size(c->db) != 0) {
        reply_error(c, "ERR CLUSTER RESET can't be called with master nodes containing keys");
        return;
    }
    reset_node(hard);
    reply_ok(c);
}

static void count_failure_reports_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    cluster_node_t *n = node_or_reply(c, &c->argv[2], UNKNOWN_NODE);
    if (n) reply_int(c, cluster_node_failure_reports(n));
}

static void links_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    cluster_bus_links_reply(c);
}

/* ---- replicas (not yet): REPLICAS/SLAVES, REPLICATE, FAILOVER ---- */

static void replicas_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    cluster_node_t *n = node_or_reply(c, &c->argv[2], UNKNOWN_NODE);
    if (!n) return;
    if (n->flags & CLUSTER_NODE_SLAVE) {
        reply_error(c, "ERR The specified node is not a master");
        return;
    }
    reply_array(c, n->num_replicas);
    buf_t b;
    buf_init(&b);
    for (int i = 0; i < n->num_replicas; i++) {
        b.len = 0;
        cluster__node_line(&b, n->replicas[i]);
        reply_bulk(c, b.data, b.len);
    }
    buf_deinit(&b);
}

static void replicate_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    cluster_node_t *n = node_or_reply(c, &c->argv[2], UNKNOWN_NODE);
    if (!n) return;
    if (n == cluster->myself) {
        reply_error(c, "ERR Can't replicate myself");
        return;
    }
    if (n->flags & CLUSTER_NODE_SLAVE) {
        reply_error(c, "ERR I can only replicate a master, not a replica.");
        return;
    }
    if (cluster->myself->num_slots || db_size(&srv.db[0])) {
        reply_error(c, "ERR To set a master the node must be empty and without assigned slots.");
        return;
    }
    reply_error(c, "ERR Replication is not supported by this server yet: cluster nodes are "
                   "masters");
}

static void cluster_failover_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    if (c->argc > 3) {
        reply_subcommand_syntax(c);
        return;
    }
    if (c->argc == 3 && !arg_is(&c->argv[2], "force") && !arg_is(&c->argv[2], "takeover")) {
        reply_syntax_error(c);
        return;
    }
    reply_error(c, "ERR You should send CLUSTER FAILOVER to a replica");
}

/* ---- READONLY, READWRITE, ASKING ---- */

static void readonly_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    c->flags |= CLIENT_READONLY;
    reply_ok(c);
}

static void readwrite_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    c->flags &= ~(uint32_t)CLIENT_READONLY;
    reply_ok(c);
}

static void asking_cmd(client_t *c)
{
    REQUIRE_CLUSTER(c);
    c->flags |= CLIENT_ASKING;
    reply_ok(c);
}

static void container_cmd(client_t *c)
{
    reply_arity_error(c);
}

/* Redis 7.0's flags: every subcommand is stale; A: admin, N: noscript, L: loading */
#define SUB(name, proc, arity, fl, since, summary, complexity)                                     \
    {                                                                                              \
        name, proc, arity, CMD_STALE | (fl), 0, 0, 0, "cluster", since, summary, complexity        \
    }
#define A CMD_ADMIN
#define N CMD_NOSCRIPT
#define L CMD_LOADING
#define NAL CMD_NO_ASYNC_LOADING

static command_t cluster_subcommands[] = {
    SUB("addslots", addslots_cmd, -3, A | NAL, "3.0.0", "Assigns new hash slots to a node.",
        "O(N) where N is the total number of hash slot arguments"),
    SUB("addslotsrange", addslotsrange_cmd, -4, A | NAL, "7.0.0",
        "Assigns new hash slot ranges to a node.",
        "O(N) where N is the total number of the slots between the start slot and end slot "
        "arguments."),
    SUB("bumpepoch", bumpepoch_cmd, 2, A | NAL, "3.0.0", "Advances the cluster config epoch.",
        "O(1)"),
    SUB("count-failure-reports", count_failure_reports_cmd, 3, A, "3.0.0",
        "Returns the number of active failure reports active for a node.",
        "O(N) where N is the number of failure reports"),
    SUB("countkeysinslot", countkeysinslot_cmd, 3, 0, "3.0.0",
        "Returns the number of keys in a hash slot.", "O(1)"),
    SUB("delslots", delslots_cmd, -3, A | NAL, "3.0.0", "Sets hash slots as unbound for a node.",
        "O(N) where N is the total number of hash slot arguments"),
    SUB("delslotsrange", delslotsrange_cmd, -4, A | NAL, "7.0.0",
        "Sets hash slot ranges as unbound for a node.",
        "O(N) where N is the total number of the slots between the start slot and end slot "
        "arguments."),
    SUB("failover", cluster_failover_cmd, -2, A | NAL, "3.0.0",
        "Forces a replica to perform a manual failover of its master.", "O(1)"),
    SUB("flushslots", flushslots_cmd, 2, A | NAL, "3.0.0",
        "Deletes all slots information from a node.", "O(1)"),
    SUB("forget", forget_cmd, 3, A | NAL, "3.0.0", "Removes a node from the nodes table.", "O(1)"),
    SUB("getkeysinslot", getkeysinslot_cmd, 4, 0, "3.0.0", "Returns the key names in a hash slot.",
        "O(log(N)) where N is the number of requested keys"),
    SUB("help", help_cmd, 2, L, "5.0.0", "Returns helpful text about the different subcommands.",
        "O(1)"),
    SUB("info", info_cmd, 2, 0, "3.0.0", "Returns information about the state of a node.", "O(1)"),
    SUB("keyslot", keyslot_cmd, 3, 0, "3.0.0", "Returns the hash slot for a key.",
        "O(N) where N is the number of bytes in the key"),
    SUB("links", links_cmd, 2, 0, "7.0.0",
        "Returns a list of all TCP links to and from peer nodes.",
        "O(N) where N is the total number of Cluster nodes"),
    SUB("meet", meet_cmd, -4, A | NAL, "3.0.0", "Forces a node to handshake with another node.",
        "O(1)"),
    SUB("myid", myid_cmd, 2, 0, "3.0.0", "Returns the ID of a node.", "O(1)"),
    SUB("nodes", nodes_cmd, 2, 0, "3.0.0", "Returns the cluster configuration for a node.",
        "O(N) where N is the total number of Cluster nodes"),
    SUB("replicas", replicas_cmd, 3, A, "5.0.0", "Lists the replica nodes of a master node.",
        "O(1)"),
    SUB("replicate", replicate_cmd, 3, A | NAL, "3.0.0",
        "Configure a node as replica of a master node.", "O(1)"),
    SUB("reset", reset_cmd, -2, A | N, "3.0.0", "Resets a node.",
        "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a "
        "side effect."),
    SUB("saveconfig", saveconfig_cmd, 2, A | NAL, "3.0.0",
        "Forces a node to save the cluster configuration to disk.", "O(1)"),
    SUB("set-config-epoch", set_config_epoch_cmd, 3, A | NAL, "3.0.0",
        "Sets the configuration epoch for a new node.", "O(1)"),
    SUB("setslot", setslot_cmd, -4, A | NAL, "3.0.0", "Binds a hash slot to a node.", "O(1)"),
    SUB("shards", shards_cmd, 2, 0, "7.0.0", "Returns the mapping of cluster slots to shards.",
        "O(N) where N is the total number of cluster nodes"),
    SUB("slaves", replicas_cmd, 3, A, "3.0.0", "Lists the replica nodes of a master node.", "O(1)"),
    SUB("slots", slots_cmd, 2, 0, "3.0.0", "Returns the mapping of cluster slots to nodes.",
        "O(N) where N is the total number of Cluster nodes"),
    {NULL},
};
#undef A
#undef N
#undef L
#undef NAL
#undef SUB

command_t cmds_cluster[] = {
    {"cluster", container_cmd, -2, 0, 0, 0, 0, "cluster", "3.0.0",
     "A container for Redis Cluster commands.", "Depends on subcommand.", NULL,
     cluster_subcommands},
    {"readonly", readonly_cmd, 1, CMD_FAST | CMD_LOADING | CMD_STALE, 0, 0, 0, "cluster", "3.0.0",
     "Enables read-only queries for a connection to a Redis Cluster replica node.", "O(1)"},
    {"readwrite", readwrite_cmd, 1, CMD_FAST | CMD_LOADING | CMD_STALE, 0, 0, 0, "cluster", "3.0.0",
     "Enables read-write queries for a connection to a Redis Cluster replica node.", "O(1)"},
    {"asking", asking_cmd, 1, CMD_FAST, 0, 0, 0, "cluster", "3.0.0",
     "Signals that a cluster client is following an -ASK redirect.", "O(1)"},
    {NULL},
};
