/* evict.c - maxmemory and the eviction policies (see evict.h).
 *
 * The approximated LRU/LFU/TTL of Redis: each round samples maxmemory-samples keys of every
 * database (dict_random, from all keys or from the keys with a TTL for volatile-*) and merges
 * them into a pool of the EVPOOL best candidates, kept sorted by ascending score, where the
 * score is the LRU idle time in ms, 255 minus the decayed LFU counter, or UINT64_MAX minus the
 * expiry time: the last entry is evicted first. The pool lives across calls, so good
 * candidates found earlier are kept; an entry holds a copy of its key and is looked up again
 * before eviction (the key may be gone, or without a TTL under a volatile policy). The random
 * policies take one random key, visiting the databases in turn.
 *
 * A key is deleted through db_evict, as an expired key is: the keyspace observer (server.c)
 * hands DEL to the append-only file, counts evicted_keys and reports the change (WATCH,
 * blocked clients, the `evicted` event) while the key is still in place; then it is deleted as
 * a DEL would (a tag frees its blobs).
 * The memory is measured again after every key, so a value whose freeing is deferred (blob
 * I/O in flight) just makes eviction go on. Loop thread only. */
#include "server/evict.h"

#include "common/alloc.h"
#include "common/util.h"
#include "server/introspect.h"
#include "server/multi.h"
#include "server/reply.h"
#include "server/server.h"
#include "storage/t_tag.h"
#include "tiers/tier.h"

#include <math.h>
#include <string.h>

#define EVPOOL 16
#define KEY_INLINE 48

typedef struct pool_entry {
    uint64_t score; /* higher: evicted first */
    int dbid;
    size_t len;
    char *heap; /* the key when longer than KEY_INLINE, else NULL */
    char inl[KEY_INLINE];
} pool_entry_t;

static pool_entry_t pool[EVPOOL];
static int pool_n;
static int next_db; /* the random policies' turn */

size_t evict_counted_memory(void)
{
    size_t used = alloc_used_memory();
    const tier_set_t *set = tag_store.tiers;
    for (int i = 0; set && i < set->n; i++) {
        uint64_t m = tier_mem(set->t[i]);
        used = m < used ? used - (size_t)m : 0;
    }
    return used;
}

static int over_limit(void)
{
    return srv.cfg.maxmemory > 0 && evict_counted_memory() > (size_t)srv.cfg.maxmemory;
}

/* ---- the pool ---------------------------------------------------------------------------- */

static const char *entry_key(const pool_entry_t *e)
{
    return e->heap ? e->heap : e->inl;
}

static void entry_drop(pool_entry_t *e)
{
    xfree(e->heap);
    e->heap = NULL;
}

static void entry_set(pool_entry_t *e, uint64_t score, int dbid, const char *key, size_t len)
{
    e->score = score;
    e->dbid = dbid;
    e->len = len;
    if (len < KEY_INLINE) {
        memcpy(e->inl, key, len);
        e->heap = NULL;
    } else {
        e->heap = xmemdup(key, len);
    }
}

static int pool_has(int dbid, const char *key, size_t len)
{
    for (int i = 0; i < pool_n; i++)
        if (pool[i].dbid == dbid && pool[i].len == len &&
            memcmp(entry_key(&pool[i]), key, len) == 0)
            return 1;
    return 0;
}

/* Inserts a candidate keeping the pool sorted by ascending score; when full, the weakest
 * entry makes room, and a candidate weaker than all of them is not taken. */
static void pool_insert(uint64_t score, int dbid, const char *key, size_t len)
{
    if (pool_n == EVPOOL && score <= pool[0].score) return;
    if (pool_has(dbid, key, len)) return;
    int k = 0;
    while (k < pool_n && pool[k].score < score) k++;
    if (pool_n < EVPOOL) {
        memmove(&pool[k + 1], &pool[k], sizeof(pool[0]) * (size_t)(pool_n - k));
        pool_n++;
    } else {
        entry_drop(&pool[0]);
        k--;
        memmove(&pool[0], &pool[1], sizeof(pool[0]) * (size_t)k);
    }
    entry_set(&pool[k], score, dbid, key, len);
}

void evict_deinit(void)
{
    for (int i = 0; i < pool_n; i++) entry_drop(&pool[i]);
    pool_n = 0;
}

/* ---- choosing a key ---------------------------------------------------------------------- */

static int policy_volatile(int p)
{
    return p == CONFIG_MAXMEMORY_VOLATILE_LRU || p == CONFIG_MAXMEMORY_VOLATILE_LFU ||
           p == CONFIG_MAXMEMORY_VOLATILE_RANDOM || p == CONFIG_MAXMEMORY_VOLATILE_TTL;
}

static int policy_random(int p)
{
    return p == CONFIG_MAXMEMORY_ALLKEYS_RANDOM || p == CONFIG_MAXMEMORY_VOLATILE_RANDOM;
}

/* The eviction score of a key: how good a candidate it is under policy p. */
static uint64_t score_of(int p, const kv_t *kv, long long when)
{
    if (p == CONFIG_MAXMEMORY_VOLATILE_TTL) return UINT64_MAX - (uint64_t)when;
    if (p == CONFIG_MAXMEMORY_ALLKEYS_LFU || p == CONFIG_MAXMEMORY_VOLATILE_LFU)
        return 255 - obj_lfu_freq(kv->val);
    uint32_t now = storage_lru_clock & 0xffffff, then = kv->val->lru & 0xffffff;
    uint64_t idle = now >= then ? now - then : (uint64_t)now + (0xffffff - then);
    return idle * 1000;
}

/* Samples every database into the pool; returns how many keys the sampled dicts hold. */
static uint64_t pool_populate(int p)
{
    int vol = policy_volatile(p), n = srv.cfg.maxmemory_samples;
    kv_t *kvs[64];
    long long when[64];
    uint64_t total = 0;
    if (n > 64) n = 64;
    for (int i = 0; i < srv.ndb; i++) {
        db_t *db = &srv.db[i];
        uint64_t size = vol ? db_expires_size(db) : db_size(db);
        if (!size) continue;
        total += size;
        int got = db_sample(db, vol, kvs, p == CONFIG_MAXMEMORY_VOLATILE_TTL ? when : NULL, n);
        for (int j = 0; j < got; j++) {
            long long w = p == CONFIG_MAXMEMORY_VOLATILE_TTL ? when[j] : -1;
            pool_insert(score_of(p, kvs[j], w), i, kv_key(kvs[j]), kv_keylen(kvs[j]));
        }
    }
    return total;
}

/* The best pool candidate that still exists (and has a TTL under a volatile policy), taken
 * out of the pool; NULL when the pool ran dry. */
static kv_t *pool_pop(int p, db_t **dbp)
{
    while (pool_n > 0) {
        pool_entry_t *e = &pool[--pool_n];
        db_t *db = e->dbid < srv.ndb ? &srv.db[e->dbid] : NULL;
        kv_t *kv = db ? db_find(db, entry_key(e), e->len) : NULL;
        entry_drop(e);
        if (kv && (!policy_volatile(p) || kv_has_expire(kv))) {
            *dbp = db;
            return kv;
        }
    }
    return NULL;
}

static kv_t *pick_random(int p, db_t **dbp)
{
    int vol = policy_volatile(p);
    for (int i = 0; i < srv.ndb; i++) {
        db_t *db = &srv.db[next_db = (next_db + 1) % srv.ndb];
        kv_t *kv;
        if (db_sample(db, vol, &kv, NULL, 1) == 1) {
            *dbp = db;
            return kv;
        }
    }
    return NULL;
}

/* The key policy p evicts next, or NULL when no key can be evicted. */
static kv_t *pick(int p, db_t **dbp)
{
    if (policy_random(p)) return pick_random(p, dbp);
    /* entries found stale are dropped; each round samples anew, as Redis loops until a key */
    for (int round = 0; round < 64; round++) {
        if (pool_populate(p) == 0) return NULL;
        kv_t *kv = pool_pop(p, dbp);
        if (kv) return kv;
    }
    return NULL;
}

/* ---- evicting ---------------------------------------------------------------------------- */

int evict_perform(uint64_t budget_us)
{
    /* nothing is evicted while clients are paused, as Redis (a pretended success) */
    if (!over_limit() || introspect_pause_active()) return EVICT_OK;
    int p = srv.cfg.maxmemory_policy;
    if (p == CONFIG_MAXMEMORY_NOEVICTION) return EVICT_FAIL;
    uint64_t start = mono_us(), freed = 0;
    do {
        db_t *db = NULL;
        kv_t *kv = pick(p, &db);
        if (!kv) return EVICT_FAIL;
        db_evict(db, kv); /* the observer (server.c) logs DEL, counts it and sends "evicted" */
        if (++freed % 16 == 0 && mono_us() - start > budget_us)
            return over_limit() ? EVICT_RUNNING : EVICT_OK;
    } while (over_limit());
    return EVICT_OK;
}

/* Redis's evictionTimeLimitUs: linear up to 500 us at tenacity 10, then 15% more per step,
 * no limit at 100. */
static uint64_t time_limit_us(void)
{
    int t = srv.cfg.maxmemory_eviction_tenacity;
    if (t <= 10) return 50u * (uint64_t)t;
    if (t < 100) return (uint64_t)(500.0 * pow(1.15, t - 10.0));
    return UINT64_MAX;
}

static int is_exec(const command_t *cmd)
{
    return strcmp(cmd->parent ? cmd->parent->name : cmd->name, "exec") == 0;
}

/* 1 if running cmd may make c use more memory: what is refused when eviction failed. */
static int may_grow(const client_t *c, const command_t *cmd)
{
    static const char *const go_on[] = {"exec", "discard", "quit", "reset"};
    /* the call's flags: EXEC's hold its queued commands', a script's say allow-oom */
    if (command_call_flags(c, cmd) & CMD_DENYOOM) return 1;
    if (is_exec(cmd) || !(c->flags & CLIENT_MULTI)) return 0;
    /* queueing in MULTI costs memory too: only those four go on (as Redis) */
    const char *name = cmd->parent ? cmd->parent->name : cmd->name;
    for (size_t i = 0; i < sizeof(go_on) / sizeof(go_on[0]); i++)
        if (strcmp(name, go_on[i]) == 0) return 0;
    return 1;
}

int evict_reject_or_reply(client_t *c, const command_t *cmd)
{
    if (srv.cfg.maxmemory <= 0 || srv.loading) return 0;
    if (evict_perform(time_limit_us()) != EVICT_FAIL || !may_grow(c, cmd)) return 0;
    if (is_exec(cmd) && (c->flags & CLIENT_MULTI)) {
        multi_reset(c);
        reply_error(c, "EXECABORT Transaction discarded because of: " EVICT_ERR_OOM);
        return 1;
    }
    reply_error(c, EVICT_ERR_OOM);
    return 1;
}

void evict_cron(void)
{
    if (srv.cfg.maxmemory <= 0 || srv.loading) return;
    uint64_t budget = (uint64_t)(1000000 / srv.cfg.hz) / 4, limit = time_limit_us();
    evict_perform(limit > budget ? limit : budget);
}
