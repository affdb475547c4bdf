/* t_hash.h - hashes: a map from fields to values, both byte strings.
 *
 * Two encodings, as Redis 7.0 has:
 *   ENC_LISTPACK  the fields and values in one allocation with the object header, searched
 *                 linearly. Used while the hash has at most
 *                 storage_params.hash_max_listpack_entries fields and, once Redis would have
 *                 converted it (HASH_FLAG_HT below), its entries take at most
 *                 HASH_LP_MAX_BYTES.
 *   ENC_HT        a dict whose entries are one allocation each (dict node, field, value), with
 *                 a bucket array sized tighter than Redis's.
 * A hash converts from listpack to hashtable when one of those two limits is passed and never
 * converts back. What clients see is Redis's encoding, not this one: when Redis would convert
 * (hash_set() writing a field or value longer than hash-max-listpack-value, hash_prepare()
 * seeing such an argument), the hash gets HASH_FLAG_HT (object.h) and OBJECT ENCODING, DUMP and
 * RDB say "hashtable" from then on (obj_redis_enc()), whatever the bytes are.
 *
 * Values move: a write to a listpack hash may reallocate it, and a conversion replaces it. So
 * every function that may change a hash takes hash_t **hp and updates *hp; the caller stores
 * the new pointer where it keeps the value (the keyspace entry's val). Functions that take a
 * plain hash_t * never move it. An empty hash never lives in the keyspace: callers delete the
 * key when hash_len() drops to 0.
 *
 * Views handed out (hash_entry_t, hash_get's value) point into the hash and stay valid until
 * the next change to that hash. Nothing here fails except by aborting on out-of-memory.
 * Not thread-safe: owned by the loop thread. */
#ifndef CTE_STORAGE_T_HASH_H
#define CTE_STORAGE_T_HASH_H

#include "common/dict.h"
#include "storage/object.h"

#include <stddef.h>
#include <stdint.h>

/* Most bytes of entries a listpack hash with HASH_FLAG_HT holds (a YCSB record of 10 fields of
 * 100 bytes takes about 1.1 KB). Measured on 20000 hashes (lookups of random fields in random
 * hashes, caches cold): up to about 2 KB the listpack is as fast as the hashtable or faster for
 * a lookup, a rewrite and a full iteration; at 4 KB a lookup in a hash of 20-40 fields is
 * 20-30% slower while iterating (HGETALL) is still faster; at 8 KB a lookup is 30-50%
 * slower. */
#define HASH_LP_MAX_BYTES 4096

/* A hash value. It starts with obj_t, so a keyspace value of type OBJ_HASH can be cast to
 * hash_t * and back (&h->h). What follows the header is private to t_hash.c and its size
 * depends on the encoding. */
typedef struct hash {
    obj_t h;
} hash_t;

/* One field and its value, views into the hash (see above). */
typedef struct hash_entry {
    const char *field;
    size_t flen;
    const char *value;
    size_t vlen;
} hash_entry_t;

/* ---- lifecycle, registered in obj_types[OBJ_HASH] ---- */

/* A new empty hash (listpack). The caller sets at least one field before storing it. */
hash_t *hash_new(void);
void hash_free(hash_t *h);
/* A deep copy in the same encoding (COPY). */
hash_t *hash_dup(const hash_t *h);
/* Number of fields. */
size_t hash_len(const hash_t *h);
/* Bytes held, from the allocator's sizes: exact up to 128 fields, estimated from a sample of
 * the fields above that (as MEMORY USAGE samples). */
size_t hash_memory(const hash_t *h);
/* Converts a listpack hash to a hashtable whatever the limits say (tests, DEBUG); a hashtable
 * stays as it is. May move *hp. */
void hash_convert(hash_t **hp);

/* For a hash loaded from a listpack or ziplist payload (RDB, RESTORE) with at most
 * hash-max-listpack-entries fields, which Redis keeps a listpack whatever its value lengths:
 * clears HASH_FLAG_HT and turns a hashtable back into a listpack. May move *hp. */
void hash_report_listpack(hash_t **hp);

/* ---- fields ---- */

/* Called by a command before it sets fields, with the largest and the summed length of the
 * fields and values it is about to write and how many pairs. Where Redis's
 * hashTypeTryConversion converts (an argument longer than hash-max-listpack-value) it sets
 * HASH_FLAG_HT; it converts a listpack whose entries would pass its byte limit (t_hash.c), sizes a new
 * listpack for every pair at once, and pre-sizes an empty hashtable for npairs fields.
 * May move *hp. */
void hash_prepare(hash_t **hp, size_t npairs, size_t maxlen, size_t sumlen);
/* Sets field to value. Returns 1 if the field is new, 0 if an existing value was replaced.
 * Sets HASH_FLAG_HT when field or value is longer than hash-max-listpack-value (where Redis's
 * hashTypeSet converts); converts to a hashtable first when the entries would pass the
 * listpack's byte limit (t_hash.c), and after adding when the hash has more than hash-max-listpack-entries
 * fields. May move *hp. */
int hash_set(hash_t **hp, const void *field, size_t flen, const void *value, size_t vlen);
/* 1 and the value's view in *value, *vlen if field is present, else 0. value and vlen may be
 * NULL (an existence test). Does not move h, though it may advance a rehash. */
int hash_get(hash_t *h, const void *field, size_t flen, const char **value, size_t *vlen);
/* Removes field; returns 1 if it was present. May move *hp (a listpack shrinks). */
int hash_del(hash_t **hp, const void *field, size_t flen);

/* ---- iteration ---- */

/* Visits every field once, in storage order. The hash must not change while an iterator is
 * in use. Embedded by the caller; nothing to release. */
typedef struct hash_iter {
    hash_t *h;
    size_t off;     /* listpack: offset of the next entry */
    dict_iter_t di; /* hashtable: an unsafe dict iterator */
} hash_iter_t;

void hash_iter_init(hash_iter_t *it, hash_t *h);
/* 1 and the next entry in *e, or 0 when every field was visited. */
int hash_iter_next(hash_iter_t *it, hash_entry_t *e);

/* ---- random fields (HRANDFIELD) ---- */

/* One field chosen at random from a non-empty hash (uniformly for a listpack, as the dict's
 * bucket sampling allows for a hashtable). */
void hash_random(hash_t *h, hash_entry_t *e);
/* n fields chosen independently (repetitions possible) from a non-empty hash, into out[0..n).
 * Costs one pass over a listpack plus O(n), or n dict samples. */
void hash_random_pairs(hash_t *h, size_t n, hash_entry_t *out);
/* n distinct fields, n < hash_len(h), into out[0..n), in no particular order. */
void hash_random_unique(hash_t *h, size_t n, hash_entry_t *out);

/* ---- HSCAN ---- */

/* One scan step: calls fn for the fields of one cursor step and returns the next cursor
 * (0 when done). A listpack hands out every field at once and returns 0 whatever the cursor,
 * as Redis does; a hashtable follows its dict's reverse-binary cursor, so a field present for
 * the whole scan is returned at least once. fn must not change h. */
typedef void hash_scan_fn(void *ud, const hash_entry_t *e);
uint64_t hash_scan(hash_t *h, uint64_t cursor, hash_scan_fn *fn, void *ud);

#endif
