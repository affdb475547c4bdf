/* t_zset.h - sorted sets: unique members (byte strings) ordered by (score, member).
 *
 * Two encodings, as Redis 7.0 has, and OBJECT ENCODING names them the same way:
 *   ENC_LISTPACK  "listpack": one buffer holding the entries sorted by (score, member). Used
 *                 while the set has at most storage_params.zset_max_listpack_entries members
 *                 and none is longer than storage_params.zset_max_listpack_value bytes.
 *   ENC_SKIPLIST  "skiplist" (the name Redis reports; the structure is an order-statistic
 *                 B+ tree): leaves of (score, node) arrays, inner nodes with per-child counts
 *                 (rank in O(log n)), plus a dict from member to node (score in O(1)); node and
 *                 dict entry are one allocation.
 * A set converts from listpack to skiplist when an add breaks a limit and never converts back
 * on its own; zset_from_sorted() picks the encoding Redis picks for a stored result.
 *
 * Order: scores compare as doubles (so -0 == 0), equal scores by member bytes (memcmp, the
 * shorter of two prefixes first). Scores are never NaN. The listpack stores an integral score
 * as an integer, so -0 reads back as 0 there, exactly as Redis 7.0's listpack does.
 *
 * Members handed out (zset_entry_t.member) point into the set: they stay valid until the next
 * change to that set. Nothing here fails except by aborting on out-of-memory. Loop thread. */
#ifndef CTE_STORAGE_T_ZSET_H
#define CTE_STORAGE_T_ZSET_H

#include "storage/object.h"

#include <stddef.h>
#include <stdint.h>

/* A sorted set value. It starts with obj_t, so a keyspace value of type OBJ_ZSET can be cast
 * to zset_t * and back. p is private to t_zset.c. The zset_t itself never moves. */
typedef struct zset {
    obj_t h;
    void *p;
} zset_t;

/* One member with its score; member is a view into the set (see above). */
typedef struct zset_entry {
    const char *member;
    size_t len;
    double score;
} zset_entry_t;

/* A score interval; minex/maxex make a bound exclusive ("(1.5"). */
typedef struct zset_range {
    double min, max;
    int minex, maxex;
} zset_range_t;

/* A lex interval bound: "-" (ZLEX_MIN, below every string), "+" (ZLEX_MAX, above every
 * string), "[abc" (inclusive value) or "(abc" (exclusive value). p points into the argument
 * the bound was parsed from. */
enum zset_lex_kind { ZLEX_VALUE = 0, ZLEX_MIN = 1, ZLEX_MAX = 2 };
typedef struct zset_lex_bound {
    const char *p;
    size_t len;
    int kind;
    int ex;
} zset_lex_bound_t;
typedef struct zset_lex_range {
    zset_lex_bound_t min, max;
} zset_lex_range_t;

/* ---- range parsing (pure functions over argument bytes) ---- */

/* Parses min and max as Redis's zslParseRange: an optional "(" for an exclusive bound, then
 * what strtod accepts up to the end (or a NUL byte); "inf", "-inf", "+inf" work, NaN does not.
 * Returns 0, or -1 if either is not a float ("min or max is not a float"). */
int zset_parse_range(const char *min, size_t minlen, const char *max, size_t maxlen,
                     zset_range_t *r);
/* Parses lex bounds as Redis's zslParseLexRange: "-", "+", "[value" or "(value". The bounds
 * point into min/max. Returns 0, or -1 ("min or max not valid string range item"). */
int zset_parse_lex_range(const char *min, size_t minlen, const char *max, size_t maxlen,
                         zset_lex_range_t *r);

/* ---- lifecycle, registered in obj_types[OBJ_ZSET] ---- */

/* A new empty set (listpack). The caller adds at least one member before storing it: an empty
 * sorted set never lives in the keyspace. */
zset_t *zset_new(void);
void zset_free(zset_t *z);
zset_t *zset_dup(const zset_t *z);
/* Builds a set from n >= 1 entries sorted by (score, member) with no member twice, in linear
 * time, in the encoding Redis 7.0 gives a stored result (listpack if n and every member length
 * are within the limits, else skiplist). Copies the members. */
zset_t *zset_from_sorted(const zset_entry_t *v, size_t n);
/* Converts to enc (ENC_LISTPACK or ENC_SKIPLIST) whatever the limits say (tests, DEBUG). */
void zset_convert(zset_t *z, int enc);
size_t zset_length(const zset_t *z);
/* Bytes held, from the allocator's sizes: exact for listpacks and sets up to 128 members, a
 * sample-based estimate above that. */
size_t zset_memory(const zset_t *z);

/* ---- members ---- */

/* Flags in for zset_add (ZADD's options), and what happened, out. */
enum {
    ZSET_IN_NX = 1 << 0,
    ZSET_IN_XX = 1 << 1,
    ZSET_IN_GT = 1 << 2,
    ZSET_IN_LT = 1 << 3,
    ZSET_IN_INCR = 1 << 4, /* score is an increment */
};
enum {
    ZSET_OUT_NOP = 1 << 0,     /* nothing done because of NX, XX, GT or LT */
    ZSET_OUT_ADDED = 1 << 1,   /* a new member */
    ZSET_OUT_UPDATED = 1 << 2, /* an existing member got a different score */
};
/* Adds or updates member with score under the flags (the caller rejects NX with XX and GT/LT
 * with NX or each other). Sets *out to ZSET_OUT_* bits and, unless NOP, *newscore to the
 * member's score afterwards (newscore may be NULL). Converts to skiplist when a new member
 * breaks the listpack limits. Returns 0, or -1 when the score (or score + increment) is NaN:
 * then nothing changed. */
int zset_add(zset_t *z, const void *member, size_t len, double score, int flags, int *out,
             double *newscore);
/* Removes member; returns 1 if it was there. */
int zset_remove(zset_t *z, const void *member, size_t len);
/* 1 and *score if member is present, else 0. */
int zset_score(const zset_t *z, const void *member, size_t len, double *score);
/* 0-based rank of member (from the highest score if reverse), -1 if absent. */
long long zset_rank(const zset_t *z, const void *member, size_t len, int reverse);
/* The entry at 0-based rank (from the lowest score), rank < length. */
void zset_entry_at(const zset_t *z, size_t rank, zset_entry_t *e);
/* A uniformly chosen entry of a non-empty set. */
void zset_random(const zset_t *z, zset_entry_t *e);

/* ---- ranges ---- */

/* Iterates a set in one direction, by rank or within a score or lex range. The set must not
 * change while an iterator is in use. Embedded by the caller; nothing to free. */
typedef struct zset_iter {
    const zset_t *z;
    const void *pos; /* next entry (listpack) or its tree leaf; NULL at the end */
    uint32_t idx;    /* the entry's index in that leaf */
    int reverse;
    int bound; /* which range next() checks: 0 none, 1 score, 2 lex */
    zset_range_t range;
    zset_lex_range_t lex;
} zset_iter_t;

/* Starts at rank (counted from the lowest score, or from the highest if reverse); an
 * iterator past the end yields nothing. */
void zset_iter_rank(zset_iter_t *it, const zset_t *z, size_t rank, int reverse);
/* Starts at the first entry within r (the last if reverse) and stops at the range's end. */
void zset_iter_score(zset_iter_t *it, const zset_t *z, const zset_range_t *r, int reverse);
void zset_iter_lex(zset_iter_t *it, const zset_t *z, const zset_lex_range_t *r, int reverse);
/* Moves past up to n entries without checking the range (LIMIT's offset, as Redis does). */
void zset_iter_skip(zset_iter_t *it, size_t n);
/* 1 and the next entry, or 0 when done. */
int zset_iter_next(zset_iter_t *it, zset_entry_t *e);

/* Number of entries within a range. */
size_t zset_count_range(const zset_t *z, const zset_range_t *r);
size_t zset_count_lex(const zset_t *z, const zset_lex_range_t *r);
/* Delete entries and return how many went: ranks start..end (0-based, inclusive,
 * start <= end < length), a score range, a lex range. The caller deletes an emptied key. */
size_t zset_delete_rank(zset_t *z, size_t start, size_t end);
size_t zset_delete_range(zset_t *z, const zset_range_t *r);
size_t zset_delete_lex(zset_t *z, const zset_lex_range_t *r);

/* Score and lex bound tests, as the iterators apply them. */
int zset_score_gte_min(double s, const zset_range_t *r);
int zset_score_lte_max(double s, const zset_range_t *r);
int zset_lex_gte_min(const char *m, size_t len, const zset_lex_range_t *r);
int zset_lex_lte_max(const char *m, size_t len, const zset_lex_range_t *r);

/* ---- ZSCAN ---- */

/* One scan step: calls fn for the entries of one cursor step and returns the next cursor
 * (0 when done). A listpack returns everything at once with cursor 0, as Redis does; a
 * skiplist follows its dict's reverse-binary cursor. fn must not change z. */
typedef void zset_scan_fn(void *ud, const zset_entry_t *e);
uint64_t zset_scan(const zset_t *z, uint64_t cursor, zset_scan_fn *fn, void *ud);

#endif
