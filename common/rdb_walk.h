/* rdb_walk.h - walking the bytes of Redis's RDB format without building anything: lengths,
 * strings and whole values skipped, for readers that only need to find where a value ends
 * (the importer's skipped keys, tools/cte-import-rdb re-wrapping values as DUMP payloads).
 *
 * Lengths:  00xxxxxx (6 bits) | 01xxxxxx yyyyyyyy (14 bits, big endian) | 0x80 + 4 bytes BE |
 *           0x81 + 8 bytes BE | 11xxxxxx: an encoded string follows (xxxxxx: 0 int8, 1 int16,
 *           2 int32, 3 LZF: compressed length, length, bytes).
 * Every function checks each byte against the end of the input and returns RDB_ERR rather
 * than read past it; nothing allocates. The value types are Redis's numbering. Pure functions
 * on caller-owned memory: any thread. */
#ifndef CTE_COMMON_RDB_WALK_H
#define CTE_COMMON_RDB_WALK_H

#include <stddef.h>
#include <stdint.h>

#define RDB_VERSION 10

/* Value types (Redis's numbering). */
enum rdb_type {
    RDB_TYPE_STRING = 0,
    RDB_TYPE_LIST = 1,
    RDB_TYPE_SET = 2,
    RDB_TYPE_ZSET = 3,
    RDB_TYPE_HASH = 4,
    RDB_TYPE_ZSET_2 = 5,
    RDB_TYPE_MODULE = 6,
    RDB_TYPE_MODULE_2 = 7,
    RDB_TYPE_HASH_ZIPMAP = 9,
    RDB_TYPE_LIST_ZIPLIST = 10,
    RDB_TYPE_SET_INTSET = 11,
    RDB_TYPE_ZSET_ZIPLIST = 12,
    RDB_TYPE_HASH_ZIPLIST = 13,
    RDB_TYPE_LIST_QUICKLIST = 14,
    RDB_TYPE_STREAM_LISTPACKS = 15,
    RDB_TYPE_HASH_LISTPACK = 16,
    RDB_TYPE_ZSET_LISTPACK = 17,
    RDB_TYPE_LIST_QUICKLIST_2 = 18,
    RDB_TYPE_STREAM_LISTPACKS_2 = 19,
    RDB_TYPE_CTE_TAG = 200, /* ours (server/persist/rdb.h): unused by Redis */
};

/* File opcodes (records that are not keys). */
enum rdb_opcode {
    RDB_OP_FUNCTION2 = 245,
    RDB_OP_FUNCTION = 246,
    RDB_OP_MODULE_AUX = 247,
    RDB_OP_IDLE = 248,
    RDB_OP_FREQ = 249,
    RDB_OP_AUX = 250,
    RDB_OP_RESIZEDB = 251,
    RDB_OP_EXPIRETIME_MS = 252,
    RDB_OP_EXPIRETIME = 253,
    RDB_OP_SELECTDB = 254,
    RDB_OP_EOF = 255,
};

enum {
    RDB_OK = 0,
    RDB_ERR = -1,
    RDB_ERR_NOMEM = -4 /* a string larger than the memory there is */
};

/* A cursor over input bytes. */
typedef struct rdb_reader {
    const unsigned char *p, *end;
    int version; /* RDB version of the input: decides old encodings (ZSET text scores) */
} rdb_reader_t;

static inline size_t rdbw_left(const rdb_reader_t *r)
{
    return (size_t)(r->end - r->p);
}

/* n (<= 8) bytes as an unsigned integer, little / big endian. */
uint64_t rdbw_load_le(const unsigned char *p, int n);
uint64_t rdbw_load_be(const unsigned char *p, int n);

/* Reads a length, or when the top bits are 11 the encoding number into *enc (-1 for a plain
 * length). RDB_OK or RDB_ERR. */
int rdbw_len_or_enc(rdb_reader_t *r, uint64_t *len, int *enc);
/* Reads a plain length: RDB_ERR when truncated or when an encoded string starts here. */
int rdbw_len(rdb_reader_t *r, uint64_t *len);
/* Reads a count of items that each take at least min_bytes: RDB_ERR when more would not fit
 * in what is left, so that callers can size by it. */
int rdbw_count(rdb_reader_t *r, uint64_t *n, size_t min_bytes);
/* A string read from the input: a view into it, or into num (integer forms), or into owned
 * (LZF: malloc'd, released by rdbw_str_release). */
typedef struct rdbw_str {
    const char *p;
    size_t len;
    char *owned;
    char num[24];
} rdbw_str_t;

/* Reads a string in any encoding: RDB_OK, RDB_ERR, or RDB_ERR_NOMEM when an LZF string's
 * stated length cannot be allocated (it is checked first against what its compressed bytes
 * can produce, 264 bytes per 3). */
int rdbw_string(rdb_reader_t *r, rdbw_str_t *s);
void rdbw_str_release(rdbw_str_t *s);

/* Moves past n bytes / one string in any encoding. */
int rdbw_skip(rdb_reader_t *r, size_t n);
int rdbw_skip_string(rdb_reader_t *r);
/* Moves past a value of type type (every type but RDB_TYPE_MODULE, which cannot be skipped,
 * and RDB_TYPE_CTE_TAG). */
int rdbw_skip_value(rdb_reader_t *r, int type);
/* Moves past the body of an RDB_OP_MODULE_AUX record (module id, when opcode, when, then the
 * module's annotated data). */
int rdbw_skip_module_aux(rdb_reader_t *r);
/* 1 if type is one of Redis's value types (0-7, 9-19). */
int rdbw_is_value_type(int type);
/* A text score of RDB_TYPE_ZSET: RDB_OK and *d, RDB_ERR when malformed or NaN. */
int rdbw_text_score(rdb_reader_t *r, double *d);

#endif
