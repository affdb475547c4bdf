/* t_set.h - sets: unordered collections of unique byte strings (members).
 *
 * Two encodings, as Redis 7.0 has (7.0 has no listpack sets), and OBJECT ENCODING names them
 * the same way:
 *   ENC_INTSET  "intset": a sorted array of integers, all stored with one width (16, 32 or 64
 *               bits: the smallest that holds every member). Used while every member is the
 *               canonical decimal form of an int64 (str_to_ll accepts it) and the set has at
 *               most storage_params.set_max_intset_entries members.
 *   ENC_HT      "hashtable": a dict whose entries are one allocation each, the dict node
 *               followed by the member bytes.
 * A set converts from intset to hashtable when an add breaks a rule and never converts back
 * on its own. set_new_for() picks the encoding Redis's setTypeCreate picks from the first
 * member; results of set operations start as an empty intset, as Redis's do.
 *
 * Elements handed out (set_elem_t) are views: into the set for a hashtable, into the
 * set_elem_t itself for an intset (its integer formatted in buf). They stay valid until the
 * set changes or the set_elem_t is filled again; a set_elem_t must not be copied by value.
 * Nothing here fails except by aborting on out-of-memory; a hashtable member must be shorter
 * than 4 GiB (asserted, as in t_zset). Loop thread. */
#ifndef CTE_STORAGE_T_SET_H
#define CTE_STORAGE_T_SET_H

#include "common/dict.h"
#include "storage/object.h"

#include <stddef.h>
#include <stdint.h>

/* A set value. It starts with obj_t, so a keyspace value of type OBJ_SET can be cast to
 * set_t * and back. p is private to t_set.c. The set_t itself never moves. */
typedef struct set {
    obj_t h;
    void *p;
} set_t;

/* One member. p/len are the bytes; isint says the member came from an intset (v holds it);
 * hashed says hash is dict_hash(p, len) already (members that come from a hashtable), which
 * saves hashing again when the element is looked up in or added to another hashtable. */
typedef struct set_elem {
    const char *p;
    size_t len;
    int64_t v;
    uint32_t hash;
    uint8_t isint;
    uint8_t hashed;
    char buf[21];
} set_elem_t;

/* ---- lifecycle, registered in obj_types[OBJ_SET] ---- */

/* A new empty set in enc (ENC_INTSET or ENC_HT). The caller adds at least one member before
 * storing it: an empty set never lives in the keyspace. */
set_t *set_new(int enc);
/* An empty set in the encoding Redis 7.0 creates for a set whose first member is m: intset
 * when m is an integer, hashtable otherwise. */
set_t *set_new_for(const void *m, size_t len);
void set_free(set_t *s);
set_t *set_dup(const set_t *s);
size_t set_length(const set_t *s);
/* Bytes held, from the allocator's sizes: exact for intsets and for hashtables up to 128
 * members, an estimate from a sample of members above that. */
size_t set_memory(const set_t *s);
/* Converts an intset to ENC_HT whatever the limits say (tests, DEBUG). No-op if already. */
void set_convert(set_t *s, int enc);

/* ---- members ---- */

/* Adds m; returns 1 if it was added, 0 if it was already there. Converts an intset to a
 * hashtable when m is not an integer or the set grows past set_max_intset_entries. */
int set_add(set_t *s, const void *m, size_t len);
int set_add_elem(set_t *s, const set_elem_t *e);
/* Removes m; returns 1 if it was there. A hashtable shrinks its buckets when mostly empty. */
int set_remove(set_t *s, const void *m, size_t len);
int set_remove_elem(set_t *s, const set_elem_t *e);
/* 1 if m is a member. */
int set_contains(const set_t *s, const void *m, size_t len);
int set_contains_elem(const set_t *s, const set_elem_t *e);
/* A member of a non-empty set chosen uniformly at random (dict_random_fair for a hashtable). */
void set_random(const set_t *s, set_elem_t *e);

/* ---- iteration ---- */

/* Visits every member once: an intset in ascending order, a hashtable in bucket order. The
 * set must not change while an iterator is in use. Embedded by the caller. */
typedef struct set_iter {
    const set_t *s;
    size_t i;
    dict_iter_t di;
} set_iter_t;

void set_iter_init(set_iter_t *it, const set_t *s);
/* 1 and the next member, or 0 at the end. */
int set_iter_next(set_iter_t *it, set_elem_t *e);
void set_iter_deinit(set_iter_t *it);

/* One SSCAN step: calls fn for the members of one cursor step and returns the next cursor
 * (0 when done). An intset returns everything at once with cursor 0, as Redis does; a
 * hashtable follows its dict's reverse-binary cursor. fn must not change s. */
typedef void set_scan_fn(void *ud, const set_elem_t *e);
uint64_t set_scan(const set_t *s, uint64_t cursor, set_scan_fn *fn, void *ud);

#endif
