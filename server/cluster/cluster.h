/* cluster.h - cluster mode's state: the node table, the slot map, epochs and nodes.conf.
 *
 * With cluster-enabled yes the server is a node of a Redis Cluster (16384 hash slots,
 * common/keyslot.h). This header is the contract between three parts:
 *   - the state (server/cluster/state.c): nodes, slots, epochs, failure reports, the FORGET
 *     ban list, cluster_state ok/fail, and the config file (Redis's nodes.conf format);
 *   - the commands and routing (server/cmd/cluster.c, cluster_route_or_reply below);
 *   - the cluster bus (server/cluster/bus.c): links between nodes, MEET, PING/PONG gossip,
 *     PFAIL/FAIL. The bus reads and changes the state only through the functions and fields
 *     documented here, and implements the cluster_bus_* hooks at the end.
 *
 * Everything runs on the loop thread. `cluster` is NULL when cluster-enabled is no: every
 * entry point below may then be skipped by testing it (the dispatcher's one branch).
 * Node pointers stay valid until cluster_node_delete (the bus is told first, through
 * cluster_bus_node_freed, so it can drop its links and any pointer it keeps).
 *
 * Replicas: the table already has replicaof/replicas and the slave flag so that replication
 * fits later; nothing sets them yet (every node is a master). */
#ifndef CTE_SERVER_CLUSTER_H
#define CTE_SERVER_CLUSTER_H

#include "common/buf.h"
#include "common/dict.h"
#include "common/keyslot.h"
#include "server/client.h"

#include <stddef.h>
#include <stdint.h>

#define CLUSTER_SLOTS KEYSLOT_COUNT
#define CLUSTER_NAMELEN 40          /* a node id: 40 lower-case hex digits */
#define CLUSTER_IPLEN 46            /* INET6_ADDRSTRLEN */
#define CLUSTER_HOSTNAMELEN 255     /* cluster-announce-hostname, gossiped */
#define CLUSTER_FORGET_BAN_MS 60000 /* CLUSTER FORGET keeps a node out this long */
/* a failure report counts for node-timeout * this (Redis's CLUSTER_FAIL_REPORT_VALIDITY_MULT) */
#define CLUSTER_FAIL_REPORT_VALIDITY_MULT 2
/* a FAIL flag of a master without slots is cleared after node-timeout * this */
#define CLUSTER_FAIL_UNDO_TIME_MULT 2

/* Node flags, in CLUSTER NODES's order and words (cluster_node_flags_str). */
enum cluster_node_flag {
    CLUSTER_NODE_MYSELF = 1 << 0,
    CLUSTER_NODE_MASTER = 1 << 1,
    CLUSTER_NODE_SLAVE = 1 << 2,     /* replicas: not used yet */
    CLUSTER_NODE_PFAIL = 1 << 3,     /* we cannot reach it (possible failure) */
    CLUSTER_NODE_FAIL = 1 << 4,      /* the majority of masters agrees it failed */
    CLUSTER_NODE_HANDSHAKE = 1 << 5, /* met, first PONG not yet received: random id for now */
    CLUSTER_NODE_NOADDR = 1 << 6,    /* address unknown */
    CLUSTER_NODE_MEET = 1 << 7,      /* send a MEET (not a PING) on the first link */
    CLUSTER_NODE_MIGRATE_TO = 1 << 8,
    CLUSTER_NODE_NOFAILOVER = 1 << 9,
};

enum cluster_health { CLUSTER_OK = 0, CLUSTER_FAIL = 1 };

struct cluster_link; /* the bus's (server/cluster/bus.c); opaque here */
struct cluster_node;

/* One failure report: `reporter` said (in gossip) that the node is PFAIL or FAIL, at time_ms. */
typedef struct cluster_fail_report {
    struct cluster_node *reporter;
    long long time_ms;
} cluster_fail_report_t;

typedef struct cluster_node {
    char id[CLUSTER_NAMELEN + 1]; /* NUL-terminated; change only with cluster_node_rename */
    uint32_t flags;               /* enum cluster_node_flag */
    uint64_t config_epoch;
    char ip[CLUSTER_IPLEN]; /* "" when unknown (myself until a peer or announce-ip says) */
    int port;               /* client port */
    int bus_port;           /* cluster bus port */
    char hostname[CLUSTER_HOSTNAMELEN + 1]; /* "" when none announced */
    /* replicas (later): the master this node replicates, and its replicas */
    struct cluster_node *replicaof;
    struct cluster_node **replicas;
    int num_replicas;
    /* slots this node serves (bitmap, bit i = slot i) and how many */
    unsigned char slots[CLUSTER_SLOTS / 8];
    int num_slots;
    /* times in Unix ms, kept by the bus; 0 = never / not waiting */
    long long ctime;         /* created (handshake timeout) */
    long long ping_sent;     /* a PING is unanswered since then */
    long long pong_received; /* last PONG */
    long long data_received; /* last byte from it on any link */
    long long fail_time;     /* FAIL set at */
    long long voted_time;    /* failover votes (later) */
    uint64_t repl_offset;    /* replication (later) */
    /* links, owned by the bus: outbound (we connected) and inbound (it connected); CLUSTER
     * NODES says "connected" while `link` is set */
    struct cluster_link *link;
    struct cluster_link *inbound_link;
    /* failure reports about this node from other masters (cluster_node_add_failure_report) */
    cluster_fail_report_t *reports;
    int num_reports, cap_reports;
    dict_node_t by_id; /* state.c's index of nodes by id: not for the bus */
} cluster_node_t;

typedef struct cluster_state {
    cluster_node_t *myself;
    uint64_t current_epoch;
    uint64_t last_vote_epoch;
    int state; /* enum cluster_health, as cluster_update_state last computed it */
    int size;  /* masters that serve at least one slot */
    /* every known node, myself included, in creation order (CLUSTER NODES's order) */
    cluster_node_t **nodes;
    int num_nodes, cap_nodes;
    /* per slot: owner, and the target / source of a migration in progress (or NULL) */
    cluster_node_t *slots[CLUSTER_SLOTS];
    cluster_node_t *migrating_to[CLUSTER_SLOTS];
    cluster_node_t *importing_from[CLUSTER_SLOTS];
    /* slots whose owner no longer claims them in its messages (Redis's
     * owner_not_claiming_slot): any claim takes them, whatever its epoch */
    unsigned char owner_not_claiming[CLUSTER_SLOTS / 8];
    /* pending work for cluster_before_sleep (enum cluster_todo) */
    uint32_t todo;
    /* stats the bus keeps, one counter per message type (CLUSTER INFO prints the non-zero
     * ones as cluster_stats_messages_<name>_sent/received; names from cluster_bus_msg_name) */
#define CLUSTER_MSG_TYPES 16
    uint64_t stats_msg_sent[CLUSTER_MSG_TYPES];
    uint64_t stats_msg_received[CLUSTER_MSG_TYPES];
    uint64_t stats_pfail_nodes; /* nodes in PFAIL, as cluster_update_state counted them */
    uint64_t stats_links_buffer_limit_exceeded; /* links the bus closed for their buffers */
} cluster_state_t;

/* NULL when cluster-enabled is no; set by cluster_init, which runs at start-up. */
extern cluster_state_t *cluster;

/* Work coalesced until the loop is about to sleep (and the cron). */
enum cluster_todo {
    CLUSTER_TODO_SAVE_CONFIG = 1 << 0,
    CLUSTER_TODO_UPDATE_STATE = 1 << 1,
    CLUSTER_TODO_FSYNC_CONFIG = 1 << 2,
};

/* ---- life cycle (server/cluster/state.c; a room of server/rooms.c) ---- */

/* With cluster-enabled yes: locks and loads cluster-config-file (inside dir), or makes a fresh
 * node with a random id and saves it; starts the bus (cluster_bus_start). 0, or -1 with a
 * message in err (the file is locked by another process, unreadable, malformed, the bus port is
 * taken). With cluster-enabled no: does nothing, returns 0. */
int cluster_init(char *err, size_t errlen);
/* Stops the bus, saves a pending config, frees the state, unlocks the file. */
void cluster_deinit(void);
/* Every server cron tick: runs the bus's cron, forgets expired bans, does pending work. */
void cluster_cron(long long now_ms);
/* A setting changed (CONFIG SET): the announced address and ports of myself follow
 * cluster-announce-* and port, the state cluster-require-full-coverage. Returns 0. */
int cluster_config_changed(const char *name, char *err, size_t errlen);
/* Does the todo work now (save the config, recompute the state); the cron and the commands
 * that change the config call it; cheap when there is nothing to do. */
void cluster_before_sleep(void);
/* Asks for work at the next cluster_before_sleep (flags of enum cluster_todo). */
void cluster_todo(uint32_t flags);

/* ---- config ---- */

/* The node timeout (cluster-node-timeout), ms. */
long long cluster_node_timeout(void);
/* The port the bus listens on: cluster-port, or port + 10000 when it is 0, as they were at
 * start (CONFIG SET port does not move it). */
int cluster_bus_listen_port(void);
/* Writes the config file now (tmp file, rename; with do_fsync the file and the directory are
 * fsynced first and after, as Redis fsyncs for epoch changes, votes and SAVECONFIG but not for
 * SETSLOT and gossip). 0, or -errno (logged once per streak of failures; cluster_before_sleep
 * tries again every tick). */
int cluster_save_config(int do_fsync);

/* ---- nodes ---- */

/* The node with this id (len bytes, case-sensitive as Redis), or NULL. */
cluster_node_t *cluster_node_lookup(const char *id, size_t len);
/* Makes a node and adds it to the table: id (CLUSTER_NAMELEN bytes) or NULL for a random one;
 * flags as enum cluster_node_flag. Never fails (aborts on out of memory). The caller must not
 * add an id that exists. Owned by the table until cluster_node_delete. */
cluster_node_t *cluster_node_add(const char *id, uint32_t flags);
/* Removes n from the table and frees it: its slots become unassigned, migrations to/from it
 * stop, its failure reports on other nodes go; cluster_bus_node_freed(n) runs first. n must
 * not be myself. */
void cluster_node_delete(cluster_node_t *n);
/* Gives n its new id (CLUSTER_NAMELEN bytes, not in use): a handshake node its real one
 * (HANDSHAKE is cleared), myself a fresh one (CLUSTER RESET HARD). */
void cluster_node_rename(cluster_node_t *n, const char *id);
/* Sets n's address (ip NUL-terminated, shorter than CLUSTER_IPLEN) and clears NOADDR. Returns 1
 * when something changed (the config is then saved later), else 0. */
int cluster_node_set_addr(cluster_node_t *n, const char *ip, int port, int bus_port);
/* Sets n's announced hostname (len bytes, 0: none), truncated to CLUSTER_HOSTNAMELEN. 1 when
 * it changed. */
int cluster_node_set_hostname(cluster_node_t *n, const char *host, size_t len);
/* The flags as CLUSTER NODES shows them ("myself,master", "master,fail?", "noflags") into out
 * (128 bytes); returns out. */
char *cluster_node_flags_str(uint32_t flags, char *out);
/* How clients are told to reach n (cluster-preferred-endpoint-type): its ip, its hostname ("?"
 * when it has none), or "" (unknown-endpoint). Valid while n is. */
const char *cluster_node_endpoint(const cluster_node_t *n);
/* Whether a node id is well formed: CLUSTER_NAMELEN bytes of [0-9a-f]. */
int cluster_id_valid(const char *id, size_t len);
/* Fills id (CLUSTER_NAMELEN bytes, no NUL) with a random id. */
void cluster_random_id(char *id);
/* Starts a handshake with ip:port (bus port bus_port): validates and normalizes ip, and unless
 * a handshake with that address is already in progress, adds a node with a random id and
 * HANDSHAKE|MEET; the bus connects it in its cron and sends MEET. Returns 0, or -EINVAL for a
 * bad address or port (MEET's "Invalid node address specified"), -EALREADY when a handshake
 * is already in progress (not an error for MEET). */
int cluster_start_handshake(const char *ip, int port, int bus_port);
/* Whether a handshake node for ip:port exists. */
int cluster_handshake_in_progress(const char *ip, int port, int bus_port);

/* ---- failure detection (the bus decides; these keep the books) ---- */

/* Adds or refreshes reporter's report that n failed. 1 when it is a new report, else 0. */
int cluster_node_add_failure_report(cluster_node_t *n, cluster_node_t *reporter);
/* Removes reporter's report on n (it sees n working again). 1 when there was one. */
int cluster_node_del_failure_report(cluster_node_t *n, cluster_node_t *reporter);
/* Drops reports older than node-timeout * CLUSTER_FAIL_REPORT_VALIDITY_MULT; returns how many
 * remain (CLUSTER COUNT-FAILURE-REPORTS). */
int cluster_node_failure_reports(cluster_node_t *n);
/* Flags: PFAIL set (from the bus's ping timeout), FAIL set (majority agreed or a FAIL message
 * came: clears PFAIL, sets fail_time), FAIL/PFAIL cleared. Each asks for a state update and a
 * config save when it changed something. */
void cluster_node_mark_pfail(cluster_node_t *n);
void cluster_node_mark_fail(cluster_node_t *n, long long now_ms);
void cluster_node_clear_fail(cluster_node_t *n);
/* The number of masters that serve slots (the quorum is size / 2 + 1). */
int cluster_masters_with_slots(void);

/* ---- slots ---- */

static inline int cluster_node_has_slot(const cluster_node_t *n, int slot)
{
    return (n->slots[slot >> 3] >> (slot & 7)) & 1;
}
/* Assigns slot to n (freeing it from its old owner). 0, or -1 if it already is n's. */
int cluster_slot_add(cluster_node_t *n, int slot);
/* Unassigns slot (and ends a migration of it). 0, or -1 if it was unassigned. */
int cluster_slot_del(int slot);
/* Deletes every key of slot in db 0 (logged as DEL, keyspace events); returns how many. */
uint64_t cluster_del_keys_in_slot(int slot);
/* Unassigns every slot of n; returns how many. */
int cluster_node_del_slots(cluster_node_t *n);
/* Redis's clusterUpdateSlotsConfigWith: sender (a master) claims the slots set in `claimed`
 * (a CLUSTER_SLOTS bitmap) with config epoch sender_epoch. A claimed slot that is unassigned,
 * whose owner has a lower config epoch or no longer claims it (owner_not_claiming: a slot
 * sender owns here but left out of `claimed` is marked so), becomes sender's (a slot we are
 * importing stays ours to decide). When myself loses slots that still hold keys, those keys are
 * deleted (logged as DEL), as Redis does for its "dirty slots" (a master that cannot become a
 * replica of the new owner). Saves and updates the state later (cluster_before_sleep). */
void cluster_apply_slots(cluster_node_t *sender, uint64_t sender_epoch,
                         const unsigned char *claimed);
/* Redis's clusterHandleConfigEpochCollision: when sender and myself are masters with the same
 * config epoch and sender's id sorts after ours (memcmp; the node with the smaller id moves),
 * myself takes ++current_epoch as its config epoch and saves. Call when a PING/PONG shows
 * the same epoch. */
void cluster_handle_epoch_collision(cluster_node_t *sender);
/* Redis's clusterBumpConfigEpochWithoutConsensus: when myself's config epoch is 0 or not the
 * greatest, takes current_epoch + 1. Returns 1 if bumped, 0 if it already was the greatest. */
int cluster_bump_epoch_without_consensus(void);
/* The greatest config epoch of any node (and current_epoch), as Redis's clusterGetMaxEpoch. */
uint64_t cluster_max_epoch(void);
/* Recomputes cluster->state and size now: fail when cluster-require-full-coverage is yes and
 * a slot is unassigned or its owner is in FAIL, or myself is in the minority partition. */
void cluster_update_state(void);

/* ---- FORGET ban list ---- */

/* Keeps id (CLUSTER_NAMELEN bytes) out for CLUSTER_FORGET_BAN_MS: gossip about it is ignored. */
void cluster_ban_add(const char *id);
/* Whether id is banned now. */
int cluster_ban_contains(const char *id);

/* ---- routing (server/cluster/route.c) ---- */

/* For the dispatcher, only when `cluster` is set: whether c's command (c->cmd, c->argv) may
 * run here. Replies MOVED/ASK/CROSSSLOT/TRYAGAIN/CLUSTERDOWN and returns -1 when not; 0 when
 * it may. Reads and clears the one-shot ASKING flag. EXEC checks its queued commands together. */
int cluster_route_or_reply(client_t *c);
/* For a command a script (EVAL, FCALL) calls on behalf of caller, as Redis's
 * scriptVerifyClusterState: NULL when it may run here, else the error (without "-"/"ERR"): a key
 * of another node, the cluster down, or (slot not NULL) a key of another slot than the
 * script's earlier commands used (*slot: -1 before the first key, then that slot). */
const char *cluster_script_refusal(const client_t *caller, const struct command *cmd, int argc,
                                   const resp_arg_t *argv, int *slot);
/* Clients blocked on keys (BLPOP...) of a slot this node no longer serves get MOVED (or
 * CLUSTERDOWN: slot unassigned, cluster down) instead of waiting for ever, as Redis's
 * clusterRedirectBlockedClientIfNeeded. The cron calls it. */
void cluster_redirect_blocked(void);
/* After every dispatched command (cmd may be NULL when it was unknown): ASKING holds for one
 * command only (inside MULTI, until EXEC). The dispatcher calls it only while CLIENT_ASKING
 * is set. */
struct command;
void cluster_after_command(client_t *c, const struct command *cmd);

/* ---- the bus's hooks: server/cluster/bus.c implements them (bus_stub.c until then) ---- */

/* Listens on the bus port (cluster_bus_listen_port). 0, or -1 with a message in err. */
int cluster_bus_start(char *err, size_t errlen);
/* Closes every link and the listener. */
void cluster_bus_stop(void);
/* Every cron tick: connects nodes without a link (MEET to those flagged MEET), pings, expires
 * handshakes, marks PFAIL/FAIL. */
void cluster_bus_cron(long long now_ms);
/* n is about to be freed: drop its links and any pointer to it. */
void cluster_bus_node_freed(cluster_node_t *n);
/* Tells every node of a change of myself's slots or epoch now (a PONG to all), as Redis does
 * after CLUSTER SETSLOT NODE / BUMPEPOCH. */
void cluster_bus_broadcast_pong(void);
/* After a PUBLISH delivered here: sends it to every other node (Redis's
 * clusterPropagatePublish), each of which delivers it to its own subscribers only. A channel
 * and message of more than BUS_PUBLISH_DATA_MAX bytes together stay on this node (a warning
 * is logged). */
void cluster_bus_publish(const char *channel, size_t clen, const char *msg, size_t mlen);
/* Replies CLUSTER LINKS (Redis 7.0's array of maps). */
void cluster_bus_links_reply(client_t *c);
/* The name of message type t (< CLUSTER_MSG_TYPES) for the stats lines, or NULL if unused. */
const char *cluster_bus_msg_name(int t);

#endif
