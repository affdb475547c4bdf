/* state.c - cluster mode's state: the node table, the slot map, epochs, failure reports, the
 * FORGET ban list and the config file (see cluster.h).
 *
 * The table is an array of node pointers in creation order (CLUSTER NODES's order) plus a
 * dict by id for the bus's lookups (each node's by_id member). The
 * slot map is an array of 16384 owner pointers plus each node's bitmap, kept equal by
 * cluster_slot_add/del. Every change that must survive a restart asks for
 * CLUSTER_TODO_SAVE_CONFIG; cluster_before_sleep writes the file once however many changes
 * came (tmp file, fsync, rename, fsync of dir). A lock file beside it (<file>.lock, common/
 * flock.h) keeps a second process off the same config. The config file is Redis's nodes.conf:
 * one CLUSTER NODES line per node, then `vars currentEpoch N lastVoteEpoch N`.
 * Loop thread only. */
#include "server/cluster/cluster.h"

#include "common/alloc.h"
#include "common/flock.h"
#include "common/log.h"
#include "common/util.h"
#include "server/cluster/state_int.h"
#include "server/hooks.h"
#include "server/server.h"
#include "storage/slot_index.h"

#include <arpa/inet.h>
#include <assert.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

cluster_state_t *cluster;

static int lock_fd = -1;
static int data_verified; /* verify_config_with_data ran after the load */

typedef struct ban {
    char id[CLUSTER_NAMELEN];
    long long until_ms;
} ban_t;
static ban_t *bans;
static int num_bans, cap_bans;

/* ---- config ---- */

long long cluster_node_timeout(void)
{
    return srv.cfg.cluster_node_timeout;
}

static int listen_port; /* fixed at start: CONFIG SET port does not move the bus */

int cluster_bus_listen_port(void)
{
    if (!listen_port)
        listen_port = srv.cfg.cluster_port ? srv.cfg.cluster_port : srv.cfg.port + 10000;
    return listen_port;
}

void cluster_todo(uint32_t flags)
{
    if (cluster) cluster->todo |= flags;
}

/* ---- ids and flags ---- */

int cluster_id_valid(const char *id, size_t len)
{
    if (len != CLUSTER_NAMELEN) return 0;
    for (size_t i = 0; i < len; i++)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f'))) return 0;
    return 1;
}

void cluster_random_id(char *id)
{
    unsigned char raw[CLUSTER_NAMELEN / 2];
    random_bytes(raw, sizeof(raw));
    for (size_t i = 0; i < sizeof(raw); i++) {
        id[2 * i] = "0123456789abcdef"[raw[i] >> 4];
        id[2 * i + 1] = "0123456789abcdef"[raw[i] & 15];
    }
}

static const struct {
    uint32_t flag;
    const char *name;
} flag_names[] = {
    {CLUSTER_NODE_MYSELF, "myself"}, {CLUSTER_NODE_MASTER, "master"},
    {CLUSTER_NODE_SLAVE, "slave"},   {CLUSTER_NODE_PFAIL, "fail?"},
    {CLUSTER_NODE_FAIL, "fail"},     {CLUSTER_NODE_HANDSHAKE, "handshake"},
    {CLUSTER_NODE_NOADDR, "noaddr"}, {CLUSTER_NODE_NOFAILOVER, "nofailover"},
};
#define NFLAGS (sizeof(flag_names) / sizeof(flag_names[0]))

char *cluster_node_flags_str(uint32_t flags, char *out)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < NFLAGS; i++)
        if (flags & flag_names[i].flag)
            len +=
                (size_t)snprintf(out + len, 128 - len, "%s%s", len ? "," : "", flag_names[i].name);
    if (!len) snprintf(out, 128, "noflags");
    return out;
}

const char *cluster_node_endpoint(const cluster_node_t *n)
{
    switch (srv.cfg.cluster_preferred_endpoint_type) {
    case CONFIG_ENDPOINT_HOSTNAME:
        return n->hostname[0] ? n->hostname : "?";
    case CONFIG_ENDPOINT_UNKNOWN:
        return "";
    default:
        return n->ip;
    }
}

/* The flag named by len bytes at p, or 0 (unknown words, "noflags"). */
uint32_t cluster__flag_by_name(const char *p, size_t len)
{
    for (size_t i = 0; i < NFLAGS; i++)
        if (strlen(flag_names[i].name) == len && !memcmp(flag_names[i].name, p, len))
            return flag_names[i].flag;
    return 0;
}

/* ---- nodes ---- */

/* The nodes by id (each node's by_id), so that the bus's lookups stay O(1) in large
 * clusters; cluster->nodes keeps the order. */
static dict_t by_id;

static cluster_node_t *node_of(dict_node_t *d)
{
    return (cluster_node_t *)((char *)d - offsetof(cluster_node_t, by_id));
}

static const void *id_key(const dict_node_t *d, size_t *len)
{
    *len = CLUSTER_NAMELEN;
    return node_of((dict_node_t *)d)->id;
}

static const dict_type_t by_id_type = {id_key, NULL};

static void index_node(cluster_node_t *n)
{
    n->by_id.hash = dict_hash(n->id, CLUSTER_NAMELEN);
    n->by_id.aux = 0;
    dict_insert(&by_id, &n->by_id);
}

static void unindex_node(cluster_node_t *n)
{
    dict_node_t *d = dict_unlink(&by_id, n->id, CLUSTER_NAMELEN, n->by_id.hash);
    assert(d == &n->by_id);
}

cluster_node_t *cluster_node_lookup(const char *id, size_t len)
{
    if (len != CLUSTER_NAMELEN) return NULL;
    dict_node_t *d = dict_find(&by_id, id, len, dict_hash(id, len));
    return d ? node_of(d) : NULL;
}

cluster_node_t *cluster_node_add(const char *id, uint32_t flags)
{
    cluster_node_t *n = xcalloc(1, sizeof(*n));
    if (id)
        memcpy(n->id, id, CLUSTER_NAMELEN);
    else
        cluster_random_id(n->id);
    n->id[CLUSTER_NAMELEN] = '\0';
    n->flags = flags;
    n->ctime = time_ms();
    index_node(n);
    if (cluster->num_nodes == cluster->cap_nodes) {
        cluster->cap_nodes = cluster->cap_nodes ? cluster->cap_nodes * 2 : 8;
        cluster->nodes = xrealloc(cluster->nodes, sizeof(*cluster->nodes) * cluster->cap_nodes);
    }
    cluster->nodes[cluster->num_nodes++] = n;
    cluster_todo(CLUSTER_TODO_UPDATE_STATE);
    return n;
}

static void node_free(cluster_node_t *n)
{
    xfree(n->reports);
    xfree(n->replicas);
    xfree(n);
}

void cluster_node_delete(cluster_node_t *n)
{
    assert(n != cluster->myself);
    cluster_bus_node_freed(n);
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (cluster->importing_from[s] == n) cluster->importing_from[s] = NULL;
        if (cluster->migrating_to[s] == n) cluster->migrating_to[s] = NULL;
        if (cluster->slots[s] == n) cluster_slot_del(s);
    }
    for (int i = 0; i < cluster->num_nodes; i++) {
        cluster_node_t *o = cluster->nodes[i];
        cluster_node_del_failure_report(o, n);
        if (o->replicaof == n) o->replicaof = NULL;
    }
    for (int i = 0; i < cluster->num_nodes; i++)
        if (cluster->nodes[i] == n) {
            memmove(&cluster->nodes[i], &cluster->nodes[i + 1],
                    sizeof(*cluster->nodes) * (size_t)(cluster->num_nodes - i - 1));
            cluster->num_nodes--;
            break;
        }
    unindex_node(n);
    node_free(n);
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
}

void cluster_node_rename(cluster_node_t *n, const char *id)
{
    unindex_node(n);
    memcpy(n->id, id, CLUSTER_NAMELEN);
    index_node(n);
    n->id[CLUSTER_NAMELEN] = '\0';
    n->flags &= ~(uint32_t)CLUSTER_NODE_HANDSHAKE;
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
}

int cluster_node_set_addr(cluster_node_t *n, const char *ip, int port, int bus_port)
{
    int changed = strcmp(n->ip, ip) || n->port != port || n->bus_port != bus_port ||
                  (n->flags & CLUSTER_NODE_NOADDR);
    if (!changed) return 0;
    snprintf(n->ip, sizeof(n->ip), "%s", ip);
    n->port = port;
    n->bus_port = bus_port;
    n->flags &= ~(uint32_t)CLUSTER_NODE_NOADDR;
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
    return 1;
}

int cluster_node_set_hostname(cluster_node_t *n, const char *host, size_t len)
{
    if (len > CLUSTER_HOSTNAMELEN) len = CLUSTER_HOSTNAMELEN;
    if (strlen(n->hostname) == len && !memcmp(n->hostname, host, len)) return 0;
    memcpy(n->hostname, host, len);
    n->hostname[len] = '\0';
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
    return 1;
}

/* Normalizes ip (v4 or v6) into out (CLUSTER_IPLEN); 0 or -1 when it is not an address. */
static int normalize_ip(const char *ip, char *out)
{
    unsigned char addr[sizeof(struct in6_addr)];
    if (inet_pton(AF_INET, ip, addr) == 1)
        return inet_ntop(AF_INET, addr, out, CLUSTER_IPLEN) ? 0 : -1;
    if (inet_pton(AF_INET6, ip, addr) == 1)
        return inet_ntop(AF_INET6, addr, out, CLUSTER_IPLEN) ? 0 : -1;
    return -1;
}

int cluster_handshake_in_progress(const char *ip, int port, int bus_port)
{
    for (int i = 0; i < cluster->num_nodes; i++) {
        const cluster_node_t *n = cluster->nodes[i];
        if ((n->flags & CLUSTER_NODE_HANDSHAKE) && !strcasecmp(n->ip, ip) && n->port == port &&
            n->bus_port == bus_port)
            return 1;
    }
    return 0;
}

int cluster_start_handshake(const char *ip, int port, int bus_port)
{
    char norm[CLUSTER_IPLEN];
    if (normalize_ip(ip, norm) < 0) return -EINVAL;
    if (port <= 0 || port > 65535 || bus_port <= 0 || bus_port > 65535) return -EINVAL;
    if (cluster_handshake_in_progress(norm, port, bus_port)) return -EALREADY;
    cluster_node_t *n = cluster_node_add(NULL, CLUSTER_NODE_HANDSHAKE | CLUSTER_NODE_MEET);
    snprintf(n->ip, sizeof(n->ip), "%s", norm);
    n->port = port;
    n->bus_port = bus_port;
    return 0;
}

/* ---- failure reports ---- */

int cluster_node_add_failure_report(cluster_node_t *n, cluster_node_t *reporter)
{
    long long now = time_ms();
    for (int i = 0; i < n->num_reports; i++)
        if (n->reports[i].reporter == reporter) {
            n->reports[i].time_ms = now;
            return 0;
        }
    if (n->num_reports == n->cap_reports) {
        n->cap_reports = n->cap_reports ? n->cap_reports * 2 : 4;
        n->reports = xrealloc(n->reports, sizeof(*n->reports) * n->cap_reports);
    }
    n->reports[n->num_reports++] = (cluster_fail_report_t){reporter, now};
    return 1;
}

int cluster_node_del_failure_report(cluster_node_t *n, cluster_node_t *reporter)
{
    for (int i = 0; i < n->num_reports; i++)
        if (n->reports[i].reporter == reporter) {
            n->reports[i] = n->reports[--n->num_reports];
            return 1;
        }
    return 0;
}

int cluster_node_failure_reports(cluster_node_t *n)
{
    long long oldest = time_ms() - cluster_node_timeout() * CLUSTER_FAIL_REPORT_VALIDITY_MULT;
    for (int i = 0; i < n->num_reports;)
        if (n->reports[i].time_ms < oldest)
            n->reports[i] = n->reports[--n->num_reports];
        else
            i++;
    return n->num_reports;
}

void cluster_node_mark_pfail(cluster_node_t *n)
{
    if (n->flags & (CLUSTER_NODE_PFAIL | CLUSTER_NODE_FAIL)) return;
    n->flags |= CLUSTER_NODE_PFAIL;
    cluster_todo(CLUSTER_TODO_UPDATE_STATE);
}

void cluster_node_mark_fail(cluster_node_t *n, long long now_ms)
{
    if (n->flags & CLUSTER_NODE_FAIL) return;
    n->flags = (n->flags & ~(uint32_t)CLUSTER_NODE_PFAIL) | CLUSTER_NODE_FAIL;
    n->fail_time = now_ms;
    cluster_todo(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
}

void cluster_node_clear_fail(cluster_node_t *n)
{
    if (!(n->flags & (CLUSTER_NODE_PFAIL | CLUSTER_NODE_FAIL))) return;
    n->flags &= ~(uint32_t)(CLUSTER_NODE_PFAIL | CLUSTER_NODE_FAIL);
    n->fail_time = 0;
    cluster_todo(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
}

int cluster_masters_with_slots(void)
{
    int size = 0;
    for (int i = 0; i < cluster->num_nodes; i++) {
        const cluster_node_t *n = cluster->nodes[i];
        if ((n->flags & CLUSTER_NODE_MASTER) && n->num_slots) size++;
    }
    return size;
}

/* ---- slots ---- */

static int not_claiming(int slot)
{
    return (cluster->owner_not_claiming[slot >> 3] >> (slot & 7)) & 1;
}

static void not_claiming_set(int slot, int on)
{
    unsigned char bit = (unsigned char)(1u << (slot & 7));
    if (on)
        cluster->owner_not_claiming[slot >> 3] |= bit;
    else
        cluster->owner_not_claiming[slot >> 3] &= (unsigned char)~bit;
}

int cluster_slot_add(cluster_node_t *n, int slot)
{
    cluster_node_t *old = cluster->slots[slot];
    if (old == n) return -1;
    if (old) cluster_slot_del(slot);
    n->slots[slot >> 3] |= (unsigned char)(1u << (slot & 7));
    n->num_slots++;
    not_claiming_set(slot, 0);
    cluster->slots[slot] = n;
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
    return 0;
}

int cluster_slot_del(int slot)
{
    cluster_node_t *n = cluster->slots[slot];
    cluster->migrating_to[slot] = cluster->importing_from[slot] = NULL;
    not_claiming_set(slot, 0);
    if (!n) return -1;
    n->slots[slot >> 3] &= (unsigned char)~(1u << (slot & 7));
    n->num_slots--;
    cluster->slots[slot] = NULL;
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
    return 0;
}

int cluster_node_del_slots(cluster_node_t *n)
{
    int deleted = 0;
    for (int s = 0; s < CLUSTER_SLOTS; s++)
        if (cluster->slots[s] == n) {
            cluster_slot_del(s);
            deleted++;
        }
    return deleted;
}

uint64_t cluster_del_keys_in_slot(int slot)
{
    db_t *db = &srv.db[0];
    if (!db->slots) return 0;
    uint64_t deleted = 0;
    kv_t *batch[64];
    size_t n;
    while ((n = slot_index_keys(db->slots, slot, batch, 64)) > 0)
        for (size_t i = 0; i < n; i++) {
            size_t len = kv_keylen(batch[i]);
            char *key = xmalloc(len + 1);
            memcpy(key, kv_key(batch[i]), len);
            server_log_propagate_del(db->id, key, len);
            db_delete_kv(db, batch[i]);
            server_key_changed(NULL, db, key, len, NOTIFY_GENERIC, "del");
            xfree(key);
            deleted++;
        }
    return deleted;
}

void cluster_apply_slots(cluster_node_t *sender, uint64_t sender_epoch,
                         const unsigned char *claimed)
{
    cluster_node_t *myself = cluster->myself;
    if (sender == myself) return;
    int lost = 0;
    uint16_t *dirty = NULL;
    int ndirty = 0;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        cluster_node_t *owner = cluster->slots[s];
        if (!((claimed[s >> 3] >> (s & 7)) & 1)) {
            /* its owner gave it up: keep routing to it, but let any claim take it */
            if (owner == sender) not_claiming_set(s, 1);
            continue;
        }
        if (owner == sender) {
            not_claiming_set(s, 0);
            continue;
        }
        /* a slot we import is ours to settle (SETSLOT NODE at the end of the migration) */
        if (cluster->importing_from[s]) continue;
        if (owner && !not_claiming(s) && owner->config_epoch >= sender_epoch) continue;
        if (owner == myself) {
            lost++;
            if (srv.db[0].slots && slot_index_count(srv.db[0].slots, s)) {
                if (!dirty) dirty = xmalloc(sizeof(*dirty) * CLUSTER_SLOTS);
                dirty[ndirty++] = (uint16_t)s;
            }
        }
        cluster_slot_add(sender, s);
        cluster_todo(CLUSTER_TODO_FSYNC_CONFIG);
    }
    if (lost)
        log_notice("Cluster: %d slot(s) of this node are now served by %.40s (config epoch "
                   "%llu)",
                   lost, sender->id, (unsigned long long)sender_epoch);
    /* no replication to turn into a replica of the new owner: the keys of the slots we lost
     * go, so that keys and slots agree (Redis's dirty slots) */
    for (int i = 0; i < ndirty; i++) {
        uint64_t n = cluster_del_keys_in_slot(dirty[i]);
        log_notice("Cluster: deleted %llu key(s) of slot %d, now served by %.40s",
                   (unsigned long long)n, dirty[i], sender->id);
    }
    xfree(dirty);
}

void cluster_handle_epoch_collision(cluster_node_t *sender)
{
    cluster_node_t *myself = cluster->myself;
    if (sender->config_epoch != myself->config_epoch) return;
    if (!(sender->flags & CLUSTER_NODE_MASTER) || !(myself->flags & CLUSTER_NODE_MASTER)) return;
    if (memcmp(sender->id, myself->id, CLUSTER_NAMELEN) <= 0) return;
    myself->config_epoch = ++cluster->current_epoch;
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
    log_notice("Cluster: config epoch collision with node %.40s: this node's config epoch is "
               "now %llu",
               sender->id, (unsigned long long)myself->config_epoch);
}

uint64_t cluster_max_epoch(void)
{
    uint64_t max = cluster->current_epoch;
    for (int i = 0; i < cluster->num_nodes; i++)
        if (cluster->nodes[i]->config_epoch > max) max = cluster->nodes[i]->config_epoch;
    return max;
}

int cluster_bump_epoch_without_consensus(void)
{
    uint64_t max = cluster_max_epoch();
    cluster_node_t *myself = cluster->myself;
    if (myself->config_epoch != 0 && myself->config_epoch == max) return 0;
    cluster->current_epoch++;
    myself->config_epoch = cluster->current_epoch;
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
    log_notice("Cluster: new config epoch %llu set without agreement",
               (unsigned long long)myself->config_epoch);
    return 1;
}

void cluster_update_state(void)
{
    int state = CLUSTER_OK;
    if (srv.cfg.cluster_require_full_coverage)
        for (int s = 0; s < CLUSTER_SLOTS; s++) {
            const cluster_node_t *n = cluster->slots[s];
            if (!n || (n->flags & CLUSTER_NODE_FAIL)) {
                state = CLUSTER_FAIL;
                break;
            }
        }
    int size = 0, reachable = 0;
    uint64_t pfail = 0;
    for (int i = 0; i < cluster->num_nodes; i++) {
        const cluster_node_t *n = cluster->nodes[i];
        if (n->flags & CLUSTER_NODE_PFAIL) pfail++;
        if (!(n->flags & CLUSTER_NODE_MASTER) || !n->num_slots) continue;
        size++;
        if (!(n->flags & (CLUSTER_NODE_FAIL | CLUSTER_NODE_PFAIL))) reachable++;
    }
    cluster->size = size;
    cluster->stats_pfail_nodes = pfail;
    /* in the minority partition: stop serving (Redis's rule, with its quorum) */
    if (size && reachable < size / 2 + 1) state = CLUSTER_FAIL;
    if (state != cluster->state)
        log_notice("Cluster state changed: %s", state == CLUSTER_OK ? "ok" : "fail");
    cluster->state = state;
}

/* ---- bans ---- */

static void bans_expire(long long now)
{
    for (int i = 0; i < num_bans;)
        if (bans[i].until_ms <= now)
            bans[i] = bans[--num_bans];
        else
            i++;
}

void cluster_ban_add(const char *id)
{
    long long until = time_ms() + CLUSTER_FORGET_BAN_MS;
    for (int i = 0; i < num_bans; i++)
        if (!memcmp(bans[i].id, id, CLUSTER_NAMELEN)) {
            bans[i].until_ms = until;
            return;
        }
    if (num_bans == cap_bans) {
        cap_bans = cap_bans ? cap_bans * 2 : 4;
        bans = xrealloc(bans, sizeof(*bans) * cap_bans);
    }
    memcpy(bans[num_bans].id, id, CLUSTER_NAMELEN);
    bans[num_bans++].until_ms = until;
}

int cluster_ban_contains(const char *id)
{
    bans_expire(time_ms());
    for (int i = 0; i < num_bans; i++)
        if (!memcmp(bans[i].id, id, CLUSTER_NAMELEN)) return 1;
    return 0;
}

/* ---- life cycle ---- */

/* The lock file beside the config file: "<file>.lock" into out (PATH_MAX). */
static void lock_path(char *out, size_t cap)
{
    snprintf(out, cap, "%s.lock", srv.cfg.cluster_config_file);
}

static int lock_config(char *err, size_t errlen)
{
    char path[4096];
    long holder = 0;
    lock_path(path, sizeof(path));
    int rc = flock_pidfile_open(path, &lock_fd, &holder);
    if (rc == 0) return 0;
    if (rc == -EWOULDBLOCK)
        snprintf(err, errlen,
                 "Sorry, the cluster configuration file %s is already used by a different Redis "
                 "Cluster node (pid %ld). Please make sure that different nodes use different "
                 "cluster configuration files.",
                 srv.cfg.cluster_config_file, holder);
    else
        snprintf(err, errlen, "Can't lock the cluster configuration file %s: %s",
                 srv.cfg.cluster_config_file, strerror(-rc));
    return -1;
}

int cluster_init(char *err, size_t errlen)
{
    if (!srv.cfg.cluster_enabled) return 0;
    if (lock_config(err, errlen) < 0) return -1;
    listen_port = 0;
    cluster_bus_listen_port();
    data_verified = 0;
    cluster = xcalloc(1, sizeof(*cluster));
    cluster->state = CLUSTER_FAIL;
    dict_init(&by_id, &by_id_type);
    int rc = cluster__load_config(err, errlen);
    if (rc < 0) goto fail;
    int fresh = rc == 0;
    if (fresh) cluster->myself = cluster_node_add(NULL, CLUSTER_NODE_MYSELF | CLUSTER_NODE_MASTER);
    cluster__apply_announced();
    if (fresh) {
        log_notice("No cluster configuration found, I'm %.40s", cluster->myself->id);
        if (cluster_save_config(1) < 0) {
            snprintf(err, errlen, "Can't write the cluster configuration file %s",
                     srv.cfg.cluster_config_file);
            goto fail;
        }
    }
    cluster_update_state();
    if (cluster_bus_start(err, errlen) < 0) goto fail;
    return 0;
fail:
    cluster__free();
    return -1;
}

void cluster__apply_announced(void)
{
    cluster_node_t *me = cluster->myself;
    me->port = srv.cfg.cluster_announce_port ? srv.cfg.cluster_announce_port : srv.cfg.port;
    me->bus_port = srv.cfg.cluster_announce_bus_port ? srv.cfg.cluster_announce_bus_port
                                                     : cluster_bus_listen_port();
    if (srv.cfg.cluster_announce_ip && *srv.cfg.cluster_announce_ip)
        snprintf(me->ip, sizeof(me->ip), "%s", srv.cfg.cluster_announce_ip);
    const char *h = srv.cfg.cluster_announce_hostname ? srv.cfg.cluster_announce_hostname : "";
    cluster_node_set_hostname(me, h, strlen(h));
}

void cluster__free(void)
{
    if (cluster) {
        dict_clear(&by_id, NULL);
        for (int i = 0; i < cluster->num_nodes; i++) node_free(cluster->nodes[i]);
        xfree(cluster->nodes);
        xfree(cluster);
        cluster = NULL;
    }
    xfree(bans);
    bans = NULL;
    num_bans = cap_bans = 0;
    if (lock_fd >= 0) close(lock_fd);
    lock_fd = -1;
}

void cluster_deinit(void)
{
    if (!cluster) return;
    cluster_bus_stop();
    if (cluster->todo & CLUSTER_TODO_SAVE_CONFIG) cluster_save_config(1);
    cluster__free();
}

int cluster_config_changed(const char *name, char *err, size_t errlen)
{
    if (!cluster) return 0;
    if (!strncmp(name, "cluster-announce-", 17) || !strcmp(name, "port")) {
        cluster__apply_announced();
        cluster_todo(CLUSTER_TODO_SAVE_CONFIG);
    } else if (!strcmp(name, "cluster-require-full-coverage")) {
        cluster_todo(CLUSTER_TODO_UPDATE_STATE);
    }
    return 0;
}

void cluster_before_sleep(void)
{
    if (!cluster || !cluster->todo) return;
    uint32_t todo = cluster->todo;
    cluster->todo = 0;
    if (todo & CLUSTER_TODO_UPDATE_STATE) cluster_update_state();
    /* Redis exits when it cannot save; we keep serving and try again at the next tick */
    if ((todo & CLUSTER_TODO_SAVE_CONFIG) &&
        cluster_save_config((todo & CLUSTER_TODO_FSYNC_CONFIG) != 0) < 0)
        cluster->todo |= todo & (CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
}

/* Redis's verifyClusterConfigWithData, once the keyspace is loaded: a slot that holds keys but
 * is not ours is taken when nobody serves it, else marked as importing from its owner (a
 * migration cut short by a crash), so the keys stay reachable with ASKING and can be moved. */
static void verify_config_with_data(void)
{
    const slot_index_t *si = srv.db[0].slots;
    int changed = 0;
    for (int s = 0; si && s < CLUSTER_SLOTS; s++) {
        if (!slot_index_count(si, s)) continue;
        cluster_node_t *owner = cluster->slots[s];
        if (owner == cluster->myself || cluster->importing_from[s]) continue;
        changed = 1;
        if (!owner) {
            log_notice("Cluster: I have keys for unassigned slot %d. Taking responsibility for "
                       "it.",
                       s);
            cluster_slot_add(cluster->myself, s);
        } else {
            log_notice("Cluster: I have keys for slot %d, but the slot is assigned to another "
                       "node (%.40s). Setting it to importing state.",
                       s, owner->id);
            cluster->importing_from[s] = owner;
        }
    }
    for (int i = 1; i < srv.ndb; i++)
        if (db_size(&srv.db[i]))
            log_warning("Cluster: database %d holds keys; cluster mode serves database 0 only", i);
    if (changed) cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
}

void cluster_cron(long long now_ms)
{
    if (!cluster) return;
    if (!data_verified && !srv.loading) {
        data_verified = 1;
        verify_config_with_data();
    }
    bans_expire(now_ms);
    cluster_bus_cron(now_ms);
    cluster_todo(CLUSTER_TODO_UPDATE_STATE);
    cluster_before_sleep();
    cluster_redirect_blocked();
}
