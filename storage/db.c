/* db.c - the keyspace of one database (see db.h).
 *
 * kv_t entries are allocated once with their key and never move, so the expires dict can point
 * at them. An expire entry is a small node holding the kv pointer and the deadline. */
#include "storage/db.h"

#include "common/alloc.h"
#include "common/util.h"
#include "storage/slot_index.h"

#include <assert.h>
#include <string.h>

typedef struct exp_node {
    dict_node_t node;
    kv_t *kv;
    long long when;
} exp_node_t;

int db_expire_paused;
long long db_now_ms;
static db_deleted_fn *observer;
static void *observer_ud;
static db_added_fn *add_observer;
static void *add_observer_ud;

void db_set_add_observer(db_added_fn *fn, void *ud)
{
    add_observer = fn;
    add_observer_ud = ud;
}

void db_set_observer(db_deleted_fn *fn, void *ud)
{
    observer = fn;
    observer_ud = ud;
}

static const void *kv_key_of(const dict_node_t *n, size_t *len)
{
    const kv_t *kv = (const kv_t *)n;
    *len = kv_keylen(kv);
    return kv->key;
}

static void kv_free_node(dict_node_t *n, void *ud)
{
    kv_t *kv = (kv_t *)n;
    obj_free(kv->val);
    xfree(kv);
}

static const void *exp_key_of(const dict_node_t *n, size_t *len)
{
    const exp_node_t *e = (const exp_node_t *)n;
    *len = kv_keylen(e->kv);
    return e->kv->key;
}

static void exp_free_node(dict_node_t *n, void *ud)
{
    xfree(n);
}

static const dict_type_t kv_type = {kv_key_of, kv_free_node};
static const dict_type_t exp_type = {exp_key_of, exp_free_node};

void db_init(db_t *db, int id)
{
    memset(db, 0, sizeof(*db));
    dict_init(&db->keys, &kv_type);
    dict_init(&db->expires, &exp_type);
    db->id = id;
}

void db_deinit(db_t *db)
{
    slot_index_free(db->slots);
    db->slots = NULL;
    dict_clear(&db->expires, NULL);
    dict_clear(&db->keys, NULL);
}

void db_slot_index_enable(db_t *db)
{
    if (db->slots) return;
    db->slots = slot_index_new();
    dict_iter_t it;
    dict_iter_init(&it, &db->keys, 0);
    for (dict_node_t *n; (n = dict_iter_next(&it));) slot_index_add(db->slots, (kv_t *)n);
    dict_iter_deinit(&it);
}

static inline long long now(void)
{
    return db_now_ms ? db_now_ms : time_ms();
}

kv_t *db_find(db_t *db, const void *key, size_t len)
{
    return (kv_t *)dict_find(&db->keys, key, len, dict_hash(key, len));
}

static exp_node_t *exp_find(db_t *db, const kv_t *kv)
{
    return (exp_node_t *)dict_find(&db->expires, kv->key, kv_keylen(kv), kv->node.hash);
}

int db_is_expired(db_t *db, const kv_t *kv)
{
    if (!kv_has_expire(kv)) return 0;
    exp_node_t *e = exp_find(db, kv);
    return e && e->when <= now();
}

static void expire_now(db_t *db, kv_t *kv, int reason)
{
    if (observer) observer(observer_ud, db, kv, reason);
    db_delete_kv(db, kv);
}

void db_evict(db_t *db, kv_t *kv)
{
    expire_now(db, kv, DB_DEL_EVICTED);
}

kv_t *db_lookup(db_t *db, const void *key, size_t len)
{
    kv_t *kv = db_find(db, key, len);
    if (!kv) return NULL;
    if (kv_has_expire(kv) && db_is_expired(db, kv)) {
        if (!db_expire_paused) expire_now(db, kv, DB_DEL_EXPIRED);
        return NULL;
    }
    obj_touch(kv->val);
    return kv;
}

kv_t *db_add(db_t *db, const void *key, size_t len, obj_t *val)
{
    assert(len <= KV_LEN_MASK);
    kv_t *kv = xmalloc(sizeof(*kv) + len + 1);
    memcpy(kv->key, key, len);
    kv->key[len] = '\0';
    kv->node.aux = (uint32_t)len;
    kv->node.hash = dict_hash(key, len);
    kv->val = val;
    dict_insert(&db->keys, &kv->node);
    if (db->slots) slot_index_add(db->slots, kv);
    if (add_observer) add_observer(add_observer_ud, db, kv);
    return kv;
}

kv_t *db_set(db_t *db, const void *key, size_t len, obj_t *val, int keep_ttl)
{
    kv_t *kv = db_find(db, key, len);
    if (!kv) return db_add(db, key, len, val);
    if (!keep_ttl) db_remove_expire(db, kv);
    db_replace_value(db, kv, val);
    return kv;
}

void db_replace_value(db_t *db, kv_t *kv, obj_t *val)
{
    if (kv->val != val) obj_free(kv->val);
    kv->val = val;
}

obj_t *db_take_value(db_t *db, kv_t *kv)
{
    obj_t *val = kv->val;
    db_remove_expire(db, kv);
    if (db->slots) slot_index_del(db->slots, kv);
    dict_node_t *n = dict_unlink(&db->keys, kv->key, kv_keylen(kv), kv->node.hash);
    assert(n == &kv->node);
    xfree(kv);
    return val;
}

void db_delete_kv(db_t *db, kv_t *kv)
{
    obj_free(db_take_value(db, kv));
}

int db_delete(db_t *db, const void *key, size_t len)
{
    kv_t *kv = db_find(db, key, len);
    if (!kv) return 0;
    db_delete_kv(db, kv);
    return 1;
}

void db_set_expire(db_t *db, kv_t *kv, long long when_ms)
{
    if (kv_has_expire(kv)) {
        exp_node_t *e = exp_find(db, kv);
        assert(e);
        e->when = when_ms;
        return;
    }
    exp_node_t *e = xmalloc(sizeof(*e));
    e->kv = kv;
    e->when = when_ms;
    e->node.hash = kv->node.hash;
    e->node.aux = 0;
    dict_insert(&db->expires, &e->node);
    kv->node.aux |= KV_HAS_EXPIRE;
}

long long db_get_expire(db_t *db, const kv_t *kv)
{
    if (!kv_has_expire(kv)) return -1;
    exp_node_t *e = exp_find(db, kv);
    return e ? e->when : -1;
}

int db_remove_expire(db_t *db, kv_t *kv)
{
    if (!kv_has_expire(kv)) return 0;
    dict_node_t *n = dict_unlink(&db->expires, kv->key, kv_keylen(kv), kv->node.hash);
    xfree(n);
    kv->node.aux &= KV_LEN_MASK;
    return 1;
}

uint64_t db_flush(db_t *db)
{
    uint64_t n = db_size(db);
    if (db->slots) slot_index_clear(db->slots);
    dict_clear(&db->expires, NULL);
    dict_clear(&db->keys, NULL);
    db->avg_ttl = 0;
    db->expire_cursor = 0;
    return n;
}

uint64_t db_detach(db_t *db, dict_t *keys, dict_t *expires)
{
    uint64_t n = db_size(db);
    if (db->slots) slot_index_clear(db->slots);
    *keys = db->keys;
    *expires = db->expires;
    dict_init(&db->keys, &kv_type);
    dict_init(&db->expires, &exp_type);
    db->avg_ttl = 0;
    db->expire_cursor = 0;
    return n;
}

void db_swap(db_t *a, db_t *b)
{
    db_t tmp = *a;
    int ida = a->id, idb = b->id;
    *a = *b;
    *b = tmp;
    a->id = ida;
    b->id = idb;
}

kv_t *db_random(db_t *db)
{
    for (int tries = 0; db_size(db) > 0; tries++) {
        kv_t *kv = (kv_t *)dict_random(&db->keys, rand_u64());
        if (!kv_has_expire(kv) || !db_is_expired(db, kv)) return kv;
        if (db_expire_paused) {
            /* every key may be expired but not deletable: give up after a while, as Redis */
            if (tries > 100) return kv;
            continue;
        }
        expire_now(db, kv, DB_DEL_EXPIRED);
    }
    return NULL;
}

int db_sample(db_t *db, int volatile_only, kv_t **out, long long *when, int n)
{
    dict_t *d = volatile_only ? &db->expires : &db->keys;
    int got = 0;
    for (; got < n; got++) {
        dict_node_t *node = dict_random(d, rand_u64());
        if (!node) break;
        if (volatile_only) {
            exp_node_t *e = (exp_node_t *)node;
            out[got] = e->kv;
            if (when) when[got] = e->when;
        } else {
            out[got] = (kv_t *)node;
            if (when) when[got] = db_get_expire(db, out[got]);
        }
    }
    return got;
}

struct scan_ctx {
    db_scan_fn *fn;
    void *ud;
};

static void scan_one(void *ud, dict_node_t *n)
{
    struct scan_ctx *ctx = ud;
    ctx->fn(ctx->ud, (kv_t *)n);
}

uint64_t db_scan(db_t *db, uint64_t cursor, db_scan_fn *fn, void *ud)
{
    struct scan_ctx ctx = {fn, ud};
    return dict_scan(&db->keys, cursor, scan_one, &ctx);
}

struct expire_ctx {
    long long now;
    exp_node_t *hits[64];
    int nhits;
    int sampled;
};

static void sample_one(void *ud, dict_node_t *n)
{
    struct expire_ctx *ctx = ud;
    exp_node_t *e = (exp_node_t *)n;
    ctx->sampled++;
    if (e->when <= ctx->now && ctx->nhits < 64) ctx->hits[ctx->nhits++] = e;
}

/* Scans buckets of db's expires dict until about 20 keys were sampled; deletes the expired
 * ones. Returns the count deleted, and the sampled count through *sampled. */
static int expire_step(db_t *db, int *sampled)
{
    struct expire_ctx ctx = {.now = now()};
    int buckets = 0;
    do {
        db->expire_cursor = dict_scan(&db->expires, db->expire_cursor, sample_one, &ctx);
        buckets++;
    } while (db->expire_cursor && ctx.sampled < 20 && ctx.nhits < 48 && buckets < 400);
    for (int i = 0; i < ctx.nhits; i++) expire_now(db, ctx.hits[i]->kv, DB_DEL_EXPIRED);
    *sampled = ctx.sampled;
    return ctx.nhits;
}

uint64_t db_active_expire(db_t *dbs, int ndb, uint64_t budget_us)
{
    static int next_db;
    uint64_t start = mono_us(), deleted = 0;
    if (db_expire_paused) return 0;
    for (int i = 0; i < ndb; i++) {
        db_t *db = &dbs[(next_db + i) % ndb];
        for (;;) {
            if (db_expires_size(db) == 0) break;
            int sampled = 0, hit = expire_step(db, &sampled);
            deleted += (uint64_t)hit;
            /* go on in this db while more than 10% of the sample was expired */
            if (sampled == 0 || hit * 10 <= sampled) break;
            if (mono_us() - start > budget_us) {
                next_db = (next_db + i) % ndb;
                return deleted;
            }
        }
        if (mono_us() - start > budget_us) break;
    }
    next_db = (next_db + 1) % ndb;
    return deleted;
}

void db_rehash(db_t *db, int ms)
{
    if (dict_is_rehashing(&db->keys)) dict_rehash_ms(&db->keys, ms);
    if (dict_is_rehashing(&db->expires)) dict_rehash_ms(&db->expires, ms);
}

void db_try_shrink(db_t *db)
{
    dict_try_shrink(&db->keys);
    dict_try_shrink(&db->expires);
}
