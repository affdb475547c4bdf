/* rdb.h - values in Redis 7.0's RDB format: DUMP payloads, RESTORE, and reading RDB files.
 *
 * A value is written as Redis 7.0 writes it (RDB version 10): strings with Redis's integer
 * and LZF encodings (same choices, same bytes), lists as quicklist 2 nodes cut where
 * quicklistPushTail cuts them (so a list built by RPUSH has Redis's bytes), intsets, listpack
 * hashes and sorted sets, hashtable hashes and sets and skiplist sorted sets as counted
 * sequences, and streams as RDB_TYPE_STREAM_LISTPACKS_2 with their node listpacks verbatim
 * (our nodes are Redis's bytes, so a stream's payload is Redis's but for delivery and seen
 * times). Our other storage encodings are not Redis's bytes: the writer walks each value and
 * re-encodes it, the reader builds values through the storage APIs, so a restored value ends
 * in the encoding Redis would give it after loading.
 *
 * The reader accepts every value type of RDB versions 1 to 10 (and tags) but module values
 * (RDB_ERR_UNSUPPORTED); streams of both stream types go through the validating stream
 * builder (storage/t_stream.h). It checks every byte it reads: lengths and counts against
 * the bytes left (nothing is allocated by an unchecked count), listpacks with lp_validate,
 * ziplists and intsets field by field, duplicate members and NaN scores refused, stream nodes,
 * PELs and consumers as the builder checks them. Bad input is an error, never a crash.
 *
 * DUMP payload:  type (1) | value | RDB version (2, LE) | CRC-64 of all before it (8, LE).
 *
 * Tags have a payload type of our own, RDB_TYPE_CTE_TAG (200, a byte Redis 7.0 does not use,
 * so Redis refuses the payload with "Bad data format"); its layout is in rdb_tag.c.
 * Loop thread (the storage APIs are); the functions keep no state of their own. */
#ifndef CTE_SERVER_PERSIST_RDB_H
#define CTE_SERVER_PERSIST_RDB_H

#include "common/buf.h"
#include "common/rdb_walk.h"
#include "storage/object.h"

#include <stddef.h>
#include <stdint.h>

/* Results of the reader, beside rdb_walk.h's RDB_OK (0) and RDB_ERR (-1, malformed or
 * truncated input). */
enum rdb_status {
    RDB_ERR_EMPTY = -2,       /* a well-formed empty collection (Redis refuses these too) */
    RDB_ERR_UNSUPPORTED = -3, /* a module value: rdbw_skip_value moves past it */
};

/* ---- writing ---- */

/* Appends a length in RDB form (6, 14, 32 or 64 bits). */
void rdb_write_len(buf_t *b, uint64_t len);
/* Appends a string as rdbSaveRawString does: an 8/16/32-bit integer form when the bytes are
 * a canonical integer of at most 11 characters, LZF when compress and len > 20 and it saves
 * at least 4 bytes, else length and bytes. */
void rdb_write_string(buf_t *b, const void *p, size_t len, int compress);
/* The RDB type byte Redis 7.0 writes for o. */
int rdb_value_type(const obj_t *o);
/* Appends o's value (without its type byte). Returns 0, or -1 for a tag whose bytes cannot be
 * read now (a blob with a write in flight, no memory for a file-tier read): b then holds a
 * partial value. */
int rdb_write_value(buf_t *b, const obj_t *o, int compress);
/* Appends a whole DUMP payload of o: type, value, version, CRC. Returns 0, or -1 as
 * rdb_write_value (b is then as it was). */
int rdb_dump(buf_t *b, const obj_t *o, int compress);

/* ---- reading ---- */

/* 1 if p[0..len) ends with a footer of RDB version <= RDB_VERSION and a matching CRC-64 (a
 * CRC of 0 is not special for payloads, as Redis). *version, when not NULL, gets the
 * version. */
int rdb_dump_verify(const void *p, size_t len, int *version);
/* Decodes a verified DUMP payload into a new value (*out, owned by the caller). Returns
 * RDB_OK, or RDB_ERR, RDB_ERR_EMPTY, RDB_ERR_UNSUPPORTED, RDB_ERR_NOMEM: RESTORE answers "Bad
 * data format" to any of them. Bytes left between the value and the footer are ignored, as
 * Redis ignores them. */
int rdb_dump_decode(const void *p, size_t len, int version, obj_t **out);

/* Reads a value of type type into *out (owned by the caller): RDB_OK or an error as
 * rdb_dump_decode's (the reader's position is then undefined). */
int rdb_read_value(rdb_reader_t *r, int type, obj_t **out);

/* Reads a string into a new allocation (try_malloc'd, NUL-terminated, the caller frees it
 * with xfree), *len its length. NULL on error, with *err set to RDB_ERR or RDB_ERR_NOMEM. */
char *rdb_read_string_alloc(rdb_reader_t *r, size_t *len, int *err);

/* Tags' own payload type (rdb_tag.c): the value of RDB_TYPE_CTE_TAG. */
int rdb__write_tag(buf_t *b, const obj_t *o, int compress);
int rdb__read_tag(rdb_reader_t *r, obj_t **out);

#endif
