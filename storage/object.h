/* object.h - typed values of the keyspace.
 *
 * Every value starts with obj_t (8 bytes: type, encoding, access clock). A string is one
 * allocation: header, length, capacity and the bytes (NUL-terminated). Containers embed obj_t
 * at the start of their own struct (storage/t_hash.h, storage/t_zset.h ...). Values are owned
 * by the keyspace entry that points at them; obj_free() releases any type.
 *
 * Storage knows nothing of clients or config files: the server copies the encoding limits it
 * reads from its config into storage_params. Runs on the loop thread. */
#ifndef CTE_STORAGE_OBJECT_H
#define CTE_STORAGE_OBJECT_H

#include <stddef.h>
#include <stdint.h>

enum obj_type { OBJ_STRING = 0, OBJ_LIST = 1, OBJ_SET = 2, OBJ_ZSET = 3, OBJ_HASH = 4, OBJ_TAG = 5,
               OBJ_STREAM = 6 };

enum obj_enc {
    ENC_RAW = 0,      /* string */
    ENC_LISTPACK = 1, /* compact contiguous encoding of small containers */
    ENC_HT = 2,       /* dict */
    ENC_SKIPLIST = 3, /* zset: skiplist + dict */
    ENC_INTSET = 4,
    ENC_QUICKLIST = 5,
    ENC_STREAM = 6, /* stream: listpack nodes in an ordered index (storage/t_stream.h) */
};

typedef struct obj {
    uint8_t type;
    uint8_t enc;
    uint16_t flags;
    uint32_t lru; /* seconds clock (low 24 bits) of the last access, for OBJECT IDLETIME */
} obj_t;

/* obj_t.flags bits of strings whose Redis encoding does not follow from their bytes: RAW for a
 * value changed in place by APPEND or SETRANGE (Redis unshares it into a raw sds), NOINT for an
 * INCRBYFLOAT result (embstr or raw by length, never int). Writes that replace the bytes clear
 * them. */
#define STR_FLAG_RAW 0x8000
#define STR_FLAG_NOINT 0x4000
#define STR_FLAGS_ENC (STR_FLAG_RAW | STR_FLAG_NOINT)

/* obj_t.flags bit of hashes: Redis would have converted this hash to a hashtable (a field or
 * value longer than hash-max-listpack-value was written), so OBJECT ENCODING, DUMP and RDB say
 * "hashtable" while storage/t_hash.c may still keep the bytes as a listpack. Never cleared,
 * as Redis never converts back; copied with the header (COPY, conversion). */
#define HASH_FLAG_HT 0x8000

/* data[len] is 0, but for a corrupted HyperLogLog, where it may hold the byte Redis leaves
 * past the end of such a value (storage/hll.c explains). */
typedef struct str_obj {
    obj_t h;
    uint32_t len;
    uint32_t cap; /* bytes available for data, not counting the NUL */
    char data[];
} str_obj_t;

/* Encoding limits, copied from the config by the server (Redis's names in comments). */
typedef struct storage_params {
    uint32_t hash_max_listpack_entries; /* hash-max-listpack-entries */
    uint32_t hash_max_listpack_value;   /* hash-max-listpack-value */
    uint32_t zset_max_listpack_entries;
    uint32_t zset_max_listpack_value;
    uint32_t set_max_intset_entries;
    uint32_t set_max_listpack_entries;
    uint32_t set_max_listpack_value;
    int32_t list_max_listpack_size;
    uint64_t stream_node_max_bytes;   /* stream-node-max-bytes (0: no limit) */
    uint64_t stream_node_max_entries; /* stream-node-max-entries (0: no limit) */
    /* access tracking: obj_t.lru holds an LRU clock, or with an LFU maxmemory policy Redis's
     * 16-bit minutes and 8-bit logarithmic counter */
    int lfu;
    int lfu_log_factor;
    int lfu_decay_time;
} storage_params_t;

extern storage_params_t storage_params;

/* The LRU clock (seconds, 24 bits), refreshed by the server's cron. */
extern uint32_t storage_lru_clock;

/* The access field of a new object: the LRU clock, or (LFU) now with the initial counter. */
uint32_t obj_clock_new(void);
/* Records an access (db_lookup): the LRU clock, or (LFU) the decayed, maybe incremented
 * counter. */
void obj_touch(obj_t *o);
/* The LFU counter after decay (OBJECT FREQ). */
uint32_t obj_lfu_freq(const obj_t *o);

/* ---- strings ---- */
/* A new string object holding p[0..len) (p may be NULL: zero bytes). Aborts on OOM. */
str_obj_t *str_new(const void *p, size_t len);
/* Like str_new but returns NULL when memory is short (client-sized values). */
str_obj_t *str_try_new(const void *p, size_t len, size_t cap);
str_obj_t *str_from_ll(long long v);
/* Grows s so it holds at least len bytes (new bytes zeroed) and sets s->len = len when larger.
 * May move s: returns the new pointer, NULL on OOM (s untouched). */
str_obj_t *str_grow(str_obj_t *s, size_t len);
/* 1 and *v if the string is a canonical int64 (as Redis's "int" encoding). */
int str_get_ll(const str_obj_t *s, long long *v);
/* "int", "embstr" or "raw", as Redis would report OBJECT ENCODING for this value. */
const char *str_encoding_name(const str_obj_t *s);

/* ---- any type ---- */
void obj_free(obj_t *o);
/* A deep copy (COPY command), or NULL for a type that cannot be copied (tags). */
obj_t *obj_dup(const obj_t *o);
/* Name for TYPE: "string", "hash" ... */
const char *obj_type_name(int type);
/* The encoding Redis would report for o: o->enc, but ENC_HT for a hash with HASH_FLAG_HT.
 * OBJECT ENCODING and the RDB writer go by this one. */
int obj_redis_enc(const obj_t *o);
/* Name for OBJECT ENCODING. */
const char *obj_encoding_name(const obj_t *o);
/* Bytes the value holds in memory (MEMORY USAGE), approximate for containers. */
size_t obj_memory(const obj_t *o);
/* Number of elements (1 for strings) - used to decide lazy freeing. */
size_t obj_length(const obj_t *o);

/* Per-type hooks, so object.c needs no knowledge of each encoding. Each type module fills
 * its row in obj_types at link time via a constructor function. */
typedef struct obj_ops {
    void (*free)(obj_t *o);
    obj_t *(*dup)(const obj_t *o);
    size_t (*memory)(const obj_t *o);
    size_t (*length)(const obj_t *o);
} obj_ops_t;
extern const obj_ops_t *obj_types[8];

#endif
