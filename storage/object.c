/* object.c - string values and the type-independent object functions (see object.h).
 *
 * Container types register their obj_ops_t rows from their own files, so this file does not
 * grow with every encoding. */
#include "storage/object.h"

#include "common/alloc.h"
#include "common/util.h"

#include <assert.h>
#include <string.h>

storage_params_t storage_params = {
    .hash_max_listpack_entries = 512,
    .hash_max_listpack_value = 64,
    .zset_max_listpack_entries = 128,
    .zset_max_listpack_value = 64,
    .set_max_intset_entries = 512,
    .set_max_listpack_entries = 128,
    .set_max_listpack_value = 64,
    .list_max_listpack_size = -2,
    .stream_node_max_bytes = 4096,
    .stream_node_max_entries = 100,
    .lfu = 0,
    .lfu_log_factor = 10,
    .lfu_decay_time = 1,
};

uint32_t storage_lru_clock;

const obj_ops_t *obj_types[8];

/* ---- access tracking: Redis's LRU clock or LFU counter (evict.c) ---- */

#define LFU_INIT_VAL 5

static uint32_t minutes_now(void)
{
    return (uint32_t)(time_ms() / 60000) & 0xffff;
}

uint32_t obj_clock_new(void)
{
    return storage_params.lfu ? (minutes_now() << 8) | LFU_INIT_VAL : storage_lru_clock;
}

uint32_t obj_lfu_freq(const obj_t *o)
{
    uint32_t ldt = o->lru >> 8, counter = o->lru & 255, now = minutes_now();
    uint32_t elapsed = now >= ldt ? now - ldt : 65535 - ldt + now;
    uint32_t periods = storage_params.lfu_decay_time
                           ? elapsed / (uint32_t)storage_params.lfu_decay_time
                           : 0;
    return periods > counter ? 0 : counter - periods;
}

void obj_touch(obj_t *o)
{
    if (!storage_params.lfu) {
        o->lru = storage_lru_clock;
        return;
    }
    uint32_t counter = obj_lfu_freq(o);
    if (counter < 255) { /* logarithmic increment, as Redis's LFULogIncr */
        double r = (double)(rand_u64() >> 11) / 9007199254740992.0;
        double base = counter > LFU_INIT_VAL ? counter - LFU_INIT_VAL : 0;
        if (r < 1.0 / (base * storage_params.lfu_log_factor + 1)) counter++;
    }
    o->lru = (minutes_now() << 8) | counter;
}

str_obj_t *str_try_new(const void *p, size_t len, size_t cap)
{
    if (cap < len) cap = len;
    if (cap > UINT32_MAX - 1) return NULL;
    str_obj_t *s = try_malloc(sizeof(*s) + cap + 1);
    if (!s) return NULL;
    s->h.type = OBJ_STRING;
    s->h.enc = ENC_RAW;
    s->h.flags = 0;
    s->h.lru = obj_clock_new();
    s->len = (uint32_t)len;
    s->cap = (uint32_t)(alloc_size(s) - sizeof(*s) - 1);
    if (p && len) memcpy(s->data, p, len);
    else if (len) memset(s->data, 0, len);
    s->data[len] = '\0';
    return s;
}

str_obj_t *str_new(const void *p, size_t len)
{
    str_obj_t *s = str_try_new(p, len, len);
    assert(s);
    return s;
}

str_obj_t *str_from_ll(long long v)
{
    char buf[24];
    size_t n = ll_to_str(buf, v);
    return str_new(buf, n);
}

str_obj_t *str_grow(str_obj_t *s, size_t len)
{
    if (len <= s->len) return s;
    if (len > s->cap) {
        size_t cap = len < (1u << 20) ? len * 2 : len + (1u << 20);
        if (cap > UINT32_MAX - 1) cap = len;
        if (len > UINT32_MAX - 1) return NULL;
        str_obj_t *n = try_realloc(s, sizeof(*s) + cap + 1);
        if (!n) return NULL;
        s = n;
        s->cap = (uint32_t)(alloc_size(s) - sizeof(*s) - 1);
    }
    memset(s->data + s->len, 0, len - s->len);
    s->len = (uint32_t)len;
    s->data[len] = '\0';
    return s;
}

int str_get_ll(const str_obj_t *s, long long *v)
{
    return s->len <= 20 && str_to_ll(s->data, s->len, v);
}

const char *str_encoding_name(const str_obj_t *s)
{
    long long v;
    if (s->h.flags & STR_FLAG_RAW) return "raw";
    if (!(s->h.flags & STR_FLAG_NOINT) && str_get_ll(s, &v)) return "int";
    return s->len <= 44 ? "embstr" : "raw";
}

void obj_free(obj_t *o)
{
    if (!o) return;
    if (o->type == OBJ_STRING) {
        xfree(o);
        return;
    }
    assert(obj_types[o->type] && obj_types[o->type]->free);
    obj_types[o->type]->free(o);
}

obj_t *obj_dup(const obj_t *o)
{
    if (o->type == OBJ_STRING) {
        const str_obj_t *s = (const str_obj_t *)o;
        return &str_new(s->data, s->len)->h;
    }
    return obj_types[o->type]->dup(o);
}

const char *obj_type_name(int type)
{
    static const char *names[] = {"string", "list", "set", "zset", "hash", "tag", "stream"};
    return type >= 0 && type < 7 ? names[type] : "none";
}

int obj_redis_enc(const obj_t *o)
{
    if (o->type == OBJ_HASH && (o->flags & HASH_FLAG_HT)) return ENC_HT;
    return o->enc;
}

const char *obj_encoding_name(const obj_t *o)
{
    static const char *names[] = {"raw", "listpack", "hashtable", "skiplist", "intset",
                                  "quicklist", "stream"};
    if (o->type == OBJ_STRING) return str_encoding_name((const str_obj_t *)o);
    int enc = obj_redis_enc(o);
    return enc < 7 ? names[enc] : "unknown";
}

size_t obj_memory(const obj_t *o)
{
    if (o->type == OBJ_STRING) return alloc_size(o);
    return obj_types[o->type]->memory(o);
}

size_t obj_length(const obj_t *o)
{
    if (o->type == OBJ_STRING) return 1;
    return obj_types[o->type]->length(o);
}
