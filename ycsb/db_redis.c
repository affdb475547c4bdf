/* db_redis.c - the redis binding: what YCSB's RedisClient (Jedis 2.9) sends, over libcte.
 *
 *   insert  HMSET key f1 v1 ... fn vn; if the reply is OK, ZADD _indices <score> key
 *   read    HGETALL key, or HMGET key f... for chosen fields
 *   update  HMSET key f v ...
 *   scan    ZRANGEBYSCORE _indices <score of startkey> +inf limit 0 <count>, then a read of
 *           each key returned
 *   delete  DEL key; if it removed nothing, ZREM _indices key
 *
 * <score> is the key's Java String.hashCode() as a double, written as String.valueOf(double)
 * writes it ("-5.94971599E8"), which is what Jedis puts on the wire. Jedis orders an HMSET's
 * fields by identity hash codes, i.e. arbitrarily; we send them in field order. One
 * synchronous connection per client thread (RESP2, no pipelining), like one Jedis per DB
 * instance. Properties: redis.host (default localhost), redis.port (6379), redis.password
 * (AUTH after connecting), redis.timeout (ms, Jedis's default 2000; 0 waits for ever),
 * redis.cluster (false): true sends each command to the cluster node serving its key's slot,
 * as RedisClient does through JedisCluster (route.h: slot map, MOVED, ASK, retries), the
 * node given by redis.host and redis.port being the seed; `_indices` is one key, so every
 * insert's ZADD, every scan's ZRANGEBYSCORE and the ZREM of a delete go to the one node that
 * serves its slot, as with JedisCluster. Reads return OK when the server returned any field,
 * ERROR when none (a missing key), as RedisClient decides. */
#include "db.h"

#include "java.h"
#include "route.h"

#include "cte/cte.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INDEX_KEY "_indices"

typedef struct redis_db {
    route_t *r;
    const db_schema_t *s;
    const char **argv;
    size_t *lens;
    cte_reply_t *reply, *scan_reply;
    char broken[384];
    char score[JAVA_DOUBLE_STR_MAX];
} redis_db_t;

static int redis_check(const props_t *p, util_err_t *e)
{
    int64_t v;
    int rc;
    if ((rc = props_long(p, "redis.port", 6379, 1, 65535, &v, e)) ||
        (rc = props_long(p, "redis.timeout", 2000, 0, INT32_MAX, &v, e)))
        return rc;
    const char *host = props_get_or(p, "redis.host", "localhost");
    if (!route_host_ok(host, strlen(host)))
        return util_fail(e, "redis.host: '%s' is not a host name or address", host);
    return 0;
}

static void redis_close(void *db)
{
    redis_db_t *d = db;
    if (!d) return;
    cte_reply_free(d->reply);
    cte_reply_free(d->scan_reply);
    route_free(d->r);
    free(d->argv);
    free(d->lens);
    free(d);
}

static int redis_open(void **out, const props_t *p, const db_schema_t *s, util_err_t *e)
{
    int64_t port, timeout;
    int rc;
    *out = NULL;
    if ((rc = redis_check(p, e))) return rc;
    props_long(p, "redis.port", 6379, 1, 65535, &port, NULL);
    props_long(p, "redis.timeout", 2000, 0, INT32_MAX, &timeout, NULL);
    redis_db_t *d = util_xcalloc(1, sizeof *d);
    d->s = s;
    d->argv = util_xcalloc(2 + 2 * s->fieldcount, sizeof *d->argv);
    d->lens = util_xcalloc(2 + 2 * s->fieldcount, sizeof *d->lens);
    if ((rc = route_open(&d->r, props_get_or(p, "redis.host", "localhost"), (int)port,
                         props_get(p, "redis.password"), (int)timeout,
                         props_bool(p, "redis.cluster", false), e)) < 0) {
        redis_close(d);
        return rc;
    }
    *out = d;
    return 0;
}

/* Sends argv[0..argc) and keeps the reply in *slot (freeing the previous one). 0, or -1 when
 * the server answered with an error or the connection failed (then d->broken says why). */
static int call(redis_db_t *d, int argc, cte_reply_t **slot)
{
    cte_reply_free(*slot);
    *slot = NULL;
    int rc = route_command(d->r, slot, argc, d->argv, d->lens);
    if (rc == 0) return 0;
    if (rc != CTE_E_SERVER && !d->broken[0])
        snprintf(d->broken, sizeof d->broken, "redis: %s", route_errmsg(d->r));
    return -1;
}

static void arg(redis_db_t *d, int i, const char *s, size_t len)
{
    d->argv[i] = s;
    d->lens[i] = len;
}

static const char *score_of(redis_db_t *d, const char *key, size_t klen, size_t *len)
{
    *len = java_double_str((double)java_string_hash(key, klen), d->score);
    return d->score;
}

static int is_ok(const cte_reply_t *r)
{
    size_t n;
    const char *s = cte_reply_kind(r) == CTE_REPLY_STRING ? cte_reply_str(r, &n) : NULL;
    return s && n == 2 && memcmp(s, "OK", 2) == 0;
}

static int hmset(redis_db_t *d, const char *key, size_t klen, const db_value_t *v, size_t n)
{
    int argc = 0;
    arg(d, argc++, "HMSET", 5);
    arg(d, argc++, key, klen);
    for (size_t i = 0; i < n; i++) {
        arg(d, argc++, d->s->field[v[i].field], d->s->field_len[v[i].field]);
        arg(d, argc++, v[i].data, v[i].len);
    }
    return call(d, argc, &d->reply) == 0 && is_ok(d->reply);
}

static db_status_t redis_insert(void *db, const char *key, size_t klen, const db_value_t *v,
                                size_t n)
{
    redis_db_t *d = db;
    size_t slen;
    if (!hmset(d, key, klen, v, n)) return DB_ERROR;
    const char *score = score_of(d, key, klen, &slen);
    arg(d, 0, "ZADD", 4);
    arg(d, 1, INDEX_KEY, strlen(INDEX_KEY));
    arg(d, 2, score, slen);
    arg(d, 3, key, klen);
    return call(d, 4, &d->reply) == 0 ? DB_OK : DB_ERROR;
}

static db_status_t redis_update(void *db, const char *key, size_t klen, const db_value_t *v,
                                size_t n)
{
    return hmset(db, key, klen, v, n) ? DB_OK : DB_ERROR;
}

/* Adds the reply's fields to out: a flat array of name, value (or a RESP3 map). */
static void add_pairs(const cte_reply_t *r, db_result_t *out)
{
    size_t n = cte_reply_len(r);
    for (size_t i = 0; i + 1 < n; i += 2) {
        size_t nl, vl;
        const char *name = cte_reply_str(cte_reply_elem(r, i), &nl);
        const char *val = cte_reply_str(cte_reply_elem(r, i + 1), &vl);
        if (name) db_result_add(out, name, nl, val, val ? vl : 0);
    }
}

static db_status_t read_into(redis_db_t *d, const char *key, size_t klen, const size_t *fields,
                             size_t nf, db_result_t *out, cte_reply_t **slot)
{
    int argc = 0;
    arg(d, argc++, fields ? "HMGET" : "HGETALL", fields ? 5 : 7);
    arg(d, argc++, key, klen);
    for (size_t i = 0; fields && i < nf; i++)
        arg(d, argc++, d->s->field[fields[i]], d->s->field_len[fields[i]]);
    if (call(d, argc, slot) < 0) return DB_ERROR;
    const cte_reply_t *r = *slot;
    if (!fields) {
        add_pairs(r, out);
    } else {
        for (size_t i = 0; i < nf && i < cte_reply_len(r); i++) {
            size_t vl = 0;
            const char *val = cte_reply_str(cte_reply_elem(r, i), &vl);
            db_result_add(out, d->s->field[fields[i]], d->s->field_len[fields[i]], val,
                          val ? vl : 0);
        }
    }
    return out->n ? DB_OK : DB_ERROR;
}

static db_status_t redis_read(void *db, const char *key, size_t klen, const size_t *fields,
                              size_t nf, db_result_t *out)
{
    return read_into(db, key, klen, fields, nf, out, &((redis_db_t *)db)->reply);
}

static db_status_t redis_scan(void *db, const char *startkey, size_t klen, int count,
                              const size_t *fields, size_t nf, size_t *nrec)
{
    redis_db_t *d = db;
    size_t slen;
    char cnt[16];
    const char *score = score_of(d, startkey, klen, &slen);
    arg(d, 0, "ZRANGEBYSCORE", 13);
    arg(d, 1, INDEX_KEY, strlen(INDEX_KEY));
    arg(d, 2, score, slen);
    arg(d, 3, "+inf", 4);
    arg(d, 4, "limit", 5);
    arg(d, 5, "0", 1);
    arg(d, 6, cnt, (size_t)snprintf(cnt, sizeof cnt, "%d", count));
    *nrec = 0;
    if (call(d, 7, &d->scan_reply) < 0) return DB_ERROR;
    db_result_t rec = {0};
    for (size_t i = 0; i < cte_reply_len(d->scan_reply); i++) {
        size_t kl;
        const char *k = cte_reply_str(cte_reply_elem(d->scan_reply, i), &kl);
        if (!k) continue;
        rec.n = 0;
        read_into(d, k, kl, fields, nf, &rec, &d->reply);
        if (d->broken[0]) break;
        (*nrec)++;
    }
    db_result_free(&rec);
    return DB_OK;
}

static db_status_t redis_remove(void *db, const char *key, size_t klen)
{
    redis_db_t *d = db;
    arg(d, 0, "DEL", 3);
    arg(d, 1, key, klen);
    if (call(d, 2, &d->reply) < 0) return DB_ERROR;
    if (cte_reply_int(d->reply) != 0) return DB_OK;
    arg(d, 0, "ZREM", 4);
    arg(d, 1, INDEX_KEY, strlen(INDEX_KEY));
    arg(d, 2, key, klen);
    if (call(d, 3, &d->reply) < 0) return DB_ERROR;
    return cte_reply_int(d->reply) == 0 ? DB_ERROR : DB_OK;
}

static const char *redis_broken(void *db)
{
    redis_db_t *d = db;
    return d->broken[0] ? d->broken : NULL;
}

const db_binding_t db_redis_binding = {
    .name = "redis",
    .check = redis_check,
    .open = redis_open,
    .close = redis_close,
    .read = redis_read,
    .scan = redis_scan,
    .update = redis_update,
    .insert = redis_insert,
    .remove = redis_remove,
    .broken = redis_broken,
};
