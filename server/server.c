/* server.c - the server state, its periodic jobs and the write hooks (see server.h).
 *
 * No libuv here: main.c drives server_cron from a timer, so unit tests can run the same
 * initialisation without a loop. Runs on the loop thread. */
#include "server/server.h"

#include "common/alloc.h"
#include "server/lazyfree.h"
#include "common/dict.h"
#include "common/log.h"
#include "common/util.h"
#include "server/block.h"
#include "server/command.h"
#include "server/evict.h"
#include "server/hooks.h"
#include "server/introspect.h"
#include "server/multi.h"
#include "server/pubsub.h"
#include "server/store.h"

#include <stdio.h>
#include <string.h>

/* A fall of the bytes in use past which the cron purges jemalloc's dirty pages at once (a DEL
 * of a large value, expiry of many keys) instead of leaving them to the 10 s decay. */
#define SERVER_PURGE_DROP (32u << 20)

server_t srv;

/* errorstats: error prefix -> count */
typedef struct err_node {
    dict_node_t node;
    uint64_t count;
    char name[];
} err_node_t;

static const void *err_key(const dict_node_t *n, size_t *len)
{
    const err_node_t *e = (const err_node_t *)n;
    *len = n->aux;
    return e->name;
}

static void err_free(dict_node_t *n, void *ud)
{
    xfree(n);
}

static const dict_type_t err_type = {err_key, err_free};
static dict_t errors;

void server_count_error(const char *msg)
{
    size_t len = strcspn(msg, " ");
    if (len > 64) len = 64;
    srv.stat.total_error_replies++;
    uint32_t h = dict_hash(msg, len);
    err_node_t *e = (err_node_t *)dict_find(&errors, msg, len, h);
    if (!e) {
        if (dict_size(&errors) >= 128) return; /* as Redis: stop tracking new kinds */
        e = xmalloc(sizeof(*e) + len + 1);
        memcpy(e->name, msg, len);
        e->name[len] = '\0';
        e->node.hash = h;
        e->node.aux = (uint32_t)len;
        e->count = 0;
        dict_insert(&errors, &e->node);
    }
    e->count++;
}

void server_apply_config(void)
{
    const config_t *cfg = &srv.cfg;
    storage_params.hash_max_listpack_entries = (uint32_t)cfg->hash_max_listpack_entries;
    storage_params.hash_max_listpack_value = (uint32_t)cfg->hash_max_listpack_value;
    storage_params.zset_max_listpack_entries = (uint32_t)cfg->zset_max_listpack_entries;
    storage_params.zset_max_listpack_value = (uint32_t)cfg->zset_max_listpack_value;
    storage_params.set_max_intset_entries = (uint32_t)cfg->set_max_intset_entries;
    storage_params.set_max_listpack_entries = (uint32_t)cfg->set_max_listpack_entries;
    storage_params.set_max_listpack_value = (uint32_t)cfg->set_max_listpack_value;
    storage_params.list_max_listpack_size = (int32_t)cfg->list_max_listpack_size;
    storage_params.lfu = cfg->maxmemory_policy == CONFIG_MAXMEMORY_ALLKEYS_LFU ||
                         cfg->maxmemory_policy == CONFIG_MAXMEMORY_VOLATILE_LFU;
    storage_params.lfu_log_factor = cfg->lfu_log_factor;
    storage_params.lfu_decay_time = cfg->lfu_decay_time;
    for (client_t *c = srv.clients; c; c = c->next)
        c->parser.max_bulk = (size_t)cfg->proto_max_bulk_len;
    log_set_level(cfg->loglevel); /* CONFIG SET loglevel takes effect at once */
}

/* Keys storage deletes on its own (expiry) or on the server's behalf (eviction, db_evict):
 * logged as DEL, counted and reported as changes, before the key goes. */
static void on_key_deleted(void *ud, db_t *db, kv_t *kv, int reason)
{
    server_log_propagate_del(db->id, kv_key(kv), kv_keylen(kv));
    if (reason == DB_DEL_EXPIRED) {
        srv.stat.expired_keys++;
        server_key_changed(NULL, db, kv_key(kv), kv_keylen(kv), NOTIFY_EXPIRED, "expired");
    } else {
        srv.stat.evicted_keys++;
        server_key_changed(NULL, db, kv_key(kv), kv_keylen(kv), NOTIFY_EVICTED, "evicted");
    }
}

/* Redis 7.0's "new" event (class n, not in A): a key was created, before the event of the
 * command that created it. */
static void on_key_added(void *ud, db_t *db, kv_t *kv)
{
    notify_keyspace_event(NOTIFY_NEW, "new", kv_key(kv), kv_keylen(kv), db->id);
}

static void on_config_change(const char *name, void *ud)
{
    server_apply_config();
    char err[256];
    if (server_log_config_changed(name, err, sizeof(err)) < 0) log_warning("%s", err);
    const server_room_t *const *rooms;
    size_t n = server_rooms(&rooms);
    for (size_t i = 0; i < n; i++)
        if (rooms[i]->config_changed && rooms[i]->config_changed(name, err, sizeof(err)) < 0)
            log_warning("%s", err);
}

void server_init(void)
{
    static int seeded; /* once per process: the command table is hashed with it */
    if (!seeded) {
        uint8_t seed[16];
        random_bytes(seed, sizeof(seed));
        dict_set_seed(seed);
        seeded = 1;
    }
    uint8_t id[20];
    random_bytes(id, sizeof(id));
    for (int i = 0; i < 20; i++) snprintf(srv.run_id + 2 * i, 3, "%02x", id[i]);
    srv.ndb = srv.cfg.databases;
    srv.db = xcalloc((size_t)srv.ndb, sizeof(db_t));
    for (int i = 0; i < srv.ndb; i++) db_init(&srv.db[i], i);
    dict_init(&errors, &err_type);
    srv.errors = &errors;
    srv.start_ms = time_ms();
    storage_lru_clock = (uint32_t)(srv.start_ms / 1000) & 0xffffff;
    command_table_init();
    db_set_observer(on_key_deleted, NULL);
    db_set_add_observer(on_key_added, NULL);
    config_on_change(&srv.cfg, on_config_change, NULL);
    server_apply_config();
    srv.init_error[0] = '\0';
    if (store_open(srv.init_error, sizeof(srv.init_error)) < 0) return;
    const server_room_t *const *rooms;
    size_t n = server_rooms(&rooms);
    for (size_t i = 0; i < n && !srv.init_error[0]; i++)
        if (rooms[i]->init && rooms[i]->init(srv.init_error, sizeof(srv.init_error)) < 0 &&
            !srv.init_error[0])
            snprintf(srv.init_error, sizeof(srv.init_error), "%s: start-up failed", rooms[i]->name);
    srv.startup_memory = alloc_used_memory();
}

size_t server_memory_peak(void)
{
    size_t now = alloc_used_memory();
    if (now > srv.stat.peak_memory) srv.stat.peak_memory = now;
    return (size_t)srv.stat.peak_memory;
}

void server_deinit(void)
{
    lazyfree_stop();
    while (srv.clients) client_free(srv.clients);
    for (int i = 0; i < srv.ndb; i++) db_deinit(&srv.db[i]);
    const server_room_t *const *rooms;
    for (size_t i = server_rooms(&rooms); i-- > 0;)
        if (rooms[i]->deinit) rooms[i]->deinit();
    store_close();
    multi_deinit();
    evict_deinit();
    pubsub_deinit();
    block_deinit();
    introspect_deinit();
    xfree(srv.db);
    srv.db = NULL;
    srv.ndb = 0;
    dict_clear(&errors, NULL);
    srv.pending_write = NULL;
}

void server_key_changed(client_t *c, db_t *db, const char *key, size_t len, int klass,
                        const char *event)
{
    (void)c;
    srv.dirty++;
    multi_touch_key(db, key, len);
    block_signal_key(db, key, len);
    const server_room_t *const *rooms;
    size_t n = server_rooms(&rooms);
    for (size_t i = 0; i < n; i++)
        if (rooms[i]->key_event) rooms[i]->key_event(db, key, len, klass, event);
    notify_keyspace_event(klass, event, key, len, db->id);
}

static void sample_ops(long long now);

/* Frees the buffers of clients idle for 2 s, and an empty query buffer of more than 32 KiB
 * that is over twice what it held since the last look (as Redis's
 * clientsCronResizeQueryBuffer): a busy client keeps its buffers so large values do not pay
 * for a fresh allocation each time, and one large request (SADD of 100,000 members) does not
 * hold its buffer for as long as the client keeps sending small ones. */
static void shrink_idle_buffers(long long now)
{
    for (client_t *c = srv.clients; c; c = c->next) {
        int idle = now - c->last_cmd_ms >= 2000;
        if (c->qbuf.len == 0 && c->qbuf.cap > 32 * 1024 && (idle || c->qbuf.cap / 2 > c->qbuf_peak))
            buf_deinit(&c->qbuf);
        c->qbuf_peak = c->qbuf.len;
        if (idle && c->out.len == 0 && c->out.cap > 32 * 1024) buf_deinit(&c->out);
    }
}

static void close_idle_clients(long long now)
{
    if (srv.cfg.timeout <= 0) return;
    for (client_t *c = srv.clients; c; c = c->next) {
        if (c->flags & (CLIENT_PUBSUB | CLIENT_BLOCKED | CLIENT_CLOSE_ASAP) || !c->ops) continue;
        if (now - c->last_cmd_ms > (long long)srv.cfg.timeout * 1000) {
            log_verbose("Closing idle client id=%llu", (unsigned long long)c->id);
            client_close(c);
        }
    }
}

void server_cron(void)
{
    long long now = time_ms();
    storage_lru_clock = (uint32_t)(now / 1000) & 0xffffff;
    if (srv.cfg.active_expire_enabled) {
        /* Redis's slow cycle: at most 25% of one cron period */
        uint64_t budget = (uint64_t)(1000000 / srv.cfg.hz) / 4;
        long long t0 = time_us();
        db_active_expire(srv.db, srv.ndb, budget);
        introspect_latency_sample("expire-cycle", (time_us() - t0) / 1000);
    }
    for (int i = 0; i < srv.ndb; i++) {
        db_try_shrink(&srv.db[i]);
        if (srv.cfg.activerehashing) db_rehash(&srv.db[i], 1);
    }
    close_idle_clients(now);
    shrink_idle_buffers(now);
    block_check_timeouts(now);
    introspect_pause_check(now);
    store_cron(now);
    const server_room_t *const *rooms;
    size_t n = server_rooms(&rooms);
    for (size_t i = 0; i < n; i++)
        if (rooms[i]->cron) rooms[i]->cron(now);
    evict_cron();
    alloc_purge_after_drop(SERVER_PURGE_DROP);
    server_memory_peak();
    sample_ops(now);
}

void server_info_errorstats(buf_t *b)
{
    dict_iter_t it;
    dict_iter_init(&it, &errors, 0);
    for (dict_node_t *n; (n = dict_iter_next(&it));) {
        err_node_t *e = (err_node_t *)n;
        buf_printf(b, "errorstat_%s:count=%llu\r\n", e->name, (unsigned long long)e->count);
    }
    dict_iter_deinit(&it);
}

/* Samples of (time, commands processed) taken by the cron, for instantaneous_ops_per_sec. */
#define OPS_SAMPLES 16
static struct {
    long long ms;
    uint64_t ops;
} ops_samples[OPS_SAMPLES];
static int ops_idx;

static void sample_ops(long long now)
{
    int last = (ops_idx + OPS_SAMPLES - 1) % OPS_SAMPLES;
    if (now - ops_samples[last].ms < 100) return;
    ops_samples[ops_idx].ms = now;
    ops_samples[ops_idx].ops = srv.stat.numcommands;
    ops_idx = (ops_idx + 1) % OPS_SAMPLES;
}

uint64_t server_ops_per_sec(void)
{
    int newest = (ops_idx + OPS_SAMPLES - 1) % OPS_SAMPLES, oldest = ops_idx;
    if (ops_samples[oldest].ms == 0) oldest = 0;
    long long dt = ops_samples[newest].ms - ops_samples[oldest].ms;
    if (dt <= 0) return 0;
    return (ops_samples[newest].ops - ops_samples[oldest].ops) * 1000 / (uint64_t)dt;
}
