/* t_tag.h - tags of blobs: the key type "tag" and its blobs, placed on tiers by score.
 *
 * A tag is a value (OBJ_TAG) holding named blobs. A blob's bytes are a list of extents on
 * tiers (tiers/tier.h) that cover [0, size) in order; its metadata (size, score, times,
 * counters) stays in RAM. Operations run on the loop thread and touch RAM extents directly;
 * what they need from file extents comes back as a plan of reads and writes that the server
 * runs on a worker thread (tag_plan_run is thread-safe) and then hands back to
 * tag_plan_finish on the loop thread.
 *
 * Concurrency between in-flight plans and new operations, per blob:
 *  - a write plan makes the blob busy: every other operation on it answers ST_BUSY until the
 *    plan finishes (the caller waits and retries; tag_blob_waitname names what to wait on);
 *  - read plans may overlap each other; a write arriving while reads are in flight is BUSY;
 *    so is a read (TGET, a reader) while 32000 references to the blob are taken
 *    (its references are 16-bit counters);
 *  - a move (REORG, demotion) copies the bytes to new extents while readers keep reading the
 *    old ones, then swaps; writes wait for it;
 *  - deleting a blob (TDEL, DEL, FLUSHALL, expiry) is never BUSY: the extents of a deleted
 *    blob go back to their tiers when the last plan that uses them finishes.
 * Placement follows COMMANDS.md section 3: the fastest tier whose score is <= the blob's score
 * that has room, else the slowest hotter tier that has room, else split across tiers; when the
 * preferred tier is full, lower-score idle blobs on it are moved one tier down to make room
 * (the write waits for those moves); only when nothing can make room does a write fail with
 * ST_OOM, having changed nothing. */
#ifndef CTE_STORAGE_T_TAG_H
#define CTE_STORAGE_T_TAG_H

#include "common/dict.h"
#include "common/status.h"
#include "storage/object.h"
#include "tiers/tier.h"

#include <stddef.h>
#include <stdint.h>

/* Operations answer with the project's status codes (common/status.h):
 *  ST_OK;
 *  ST_PENDING  a plan must run before the result is complete;
 *  ST_MISSING  no such blob;
 *  ST_BUSY     wait on tag_blob_waitname(), then retry;
 *  ST_NOSPACE  room is being made (moves started): wait on tag_space_waitname();
 *  ST_OOM      no tier can hold the bytes: nothing changed;
 *  ST_TOO_BIG  past the configured maximum blob size. */

typedef struct blob blob_t;
typedef struct tag_obj tag_obj_t;
typedef struct tag_plan tag_plan_t;

/* The tier set and limits every tag uses; set once by the server before any tag exists. */
typedef struct tag_store {
    tier_set_t *tiers;
    uint64_t max_blob_size;
    /* told about blob changes (search index, notifications): may be NULL */
    void (*on_blob_change)(void *ud, const tag_obj_t *tag, const blob_t *b, int deleted);
    /* told that a tag object is being freed, after its blobs were reported deleted: may be
     * NULL */
    void (*on_tag_free)(void *ud, const tag_obj_t *tag);
    void *ud;
} tag_store_t;

extern tag_store_t tag_store;

/* Blob metadata, read-only for callers. */
typedef struct blob_info {
    uint64_t size;
    double score;
    long long ctime, mtime, atime; /* Unix ms */
    uint64_t reads, writes;
    int tier;   /* tier of the first extent, -1 for an empty blob */
    int ntiers; /* distinct tiers holding extents */
    int tiers[TIER_MAX];
} blob_info_t;

tag_obj_t *tag_new(void);
uint64_t tag_len(const tag_obj_t *t);
/* Tag objects alive (made and not yet freed), in any database or none. */
uint64_t tag_live(void);
blob_t *tag_blob(tag_obj_t *t, const char *name, size_t len);
const char *blob_name(const blob_t *b, size_t *len);
void blob_get_info(const blob_t *b, blob_info_t *out);
/* One 32-bit id per blob that belongs to tag_store's observer (the search catalogue keeps the
 * number of its entry for the blob there, so it needs no table keyed by blob): 0 for a new
 * blob, never read or changed by storage, not part of the blob's state (hence settable
 * through the const pointer the observer is handed). The observer sets it back to 0 when it
 * forgets the blob; it must forget every blob before the blob is freed (it is told:
 * on_blob_change with deleted). */
uint32_t blob_observer(const blob_t *b);
void blob_set_observer(const blob_t *b, uint32_t id);
/* The blob of t named name with a reference the caller holds (NULL if missing): it stays
 * readable after a TDEL, DEL or FLUSHALL until tag_blob_release (which takes NULL too). */
blob_t *tag_blob_hold(tag_obj_t *t, const char *name, size_t nlen);
/* The same for a blob the caller has: b stays readable (its observer slot included) until
 * tag_blob_release, also when a plan on it ends and it was deleted meanwhile. */
void blob_hold(blob_t *b);
void tag_blob_release(blob_t *b);
/* 1 if b's last write plan failed and tag_plan_finish undid it while b was still a blob of
 * its tag; 0 if it did not fail, or b had been deleted meanwhile (nothing was undone). */
int tag_blob_undone(const blob_t *b);

/* One write to a blob (TPUT): which blob, which bytes where, the score and the time. The
 * pointers are the caller's and need only live through the tag_put call. */
typedef struct tag_write {
    const char *name; /* the blob's name, nlen bytes */
    size_t nlen;
    uint64_t off;     /* where data goes */
    const char *data; /* len bytes (len 0: create the blob if missing, write nothing) */
    size_t len;
    int has_score; /* set the blob's score to score (a new blob gets 1.0 otherwise) */
    double score;
    long long now; /* the modification time */
} tag_write_t;

/* TPUT: writes w->data at w->off, creating the blob and growing it as needed (a gap reads as
 * zeros). Returns ST_OK (done), ST_PENDING (*plan must run; the write is visible to nobody
 * else until it finishes), ST_BUSY / ST_NOSPACE (nothing changed: wait and retry), ST_OOM,
 * ST_TOO_BIG. *size_out is the blob size after the write. The data is copied when the plan
 * needs it. */
int tag_put(tag_obj_t *t, const tag_write_t *w, uint64_t *size_out, tag_plan_t **plan);
/* TGET: reads up to count bytes from off (count UINT64_MAX: to the end) into a new buffer
 * (*out, *outlen; the caller frees it with xfree after the plan finished). Returns ST_OK,
 * ST_PENDING, ST_MISSING, ST_BUSY, ST_OOM (no memory for the buffer). */
int tag_get(tag_obj_t *t, const char *name, size_t nlen, uint64_t off, uint64_t count,
            long long now, char **out, uint64_t *outlen, tag_plan_t **plan);
/* TGET in two steps, so the caller can read straight into its reply: tag_read_prepare gives
 * the length a read of count bytes from off returns (ST_OK, ST_MISSING, ST_BUSY), whether
 * file extents are involved and (ST_OK) the blob; tag_read_into then reads that many bytes of
 * it into dst (RAM now, files through *plan: ST_OK or ST_PENDING). Nothing may change the
 * blob between the two calls. */
int tag_read_prepare(tag_obj_t *t, const char *name, size_t nlen, uint64_t off, uint64_t count,
                     uint64_t *len, int *needs_io, blob_t **blob);
int tag_read_into(blob_t *b, uint64_t off, uint64_t len, long long now, char *dst,
                  tag_plan_t **plan);
/* A TGET too large to hold in memory at once, read in pieces: tag_reader_open takes the blob's
 * extents as they are (*len: the bytes a read of count from off returns) and counts one read
 * access; until tag_reader_close the blob counts as read in flight (writes and moves answer
 * ST_BUSY; a TDEL frees its extents only after the close). tag_reader_read copies [pos,
 * pos+n) of the reader's range into dst: RAM now (ST_OK), file extents through *plan
 * (ST_PENDING) that the caller runs and finishes like any other. tag_reader_close frees the
 * reader and names the blob's waiters through wake (may be NULL). open returns ST_OK,
 * ST_MISSING or ST_BUSY (a write or a move in flight: wait on tag_blob_waitname). Loop
 * thread. */
typedef struct tag_reader tag_reader_t;
int tag_reader_open(tag_obj_t *t, const char *name, size_t nlen, uint64_t off, uint64_t count,
                    long long now, tag_reader_t **r, uint64_t *len);
int tag_reader_read(tag_reader_t *r, uint64_t pos, uint64_t n, char *dst, tag_plan_t **plan);
void tag_reader_close(tag_reader_t *r, void (*wake)(void *ud, const char *name, size_t len),
                      void *ud);
/* Reads [off, off+len) of b (within its size) into dst without counting an access (atime,
 * reads and tier counters stay as they are): for the search index, which reads what it
 * indexes. RAM extents are copied now (ST_OK); file extents come back as a read *plan
 * (ST_PENDING) that the caller runs and finishes like any other. Returns ST_BUSY (nothing
 * done) while a write plan is in flight or the blob's references are within 16 of their
 * bound (65535, which takes more than 32000 TGETs of it in flight). */
int blob_peek(blob_t *b, uint64_t off, uint64_t len, char *dst, tag_plan_t **plan);
/* The bytes [off, off+len) of b in place when they lie in one RAM extent (len > 0), else NULL
 * (then blob_peek copies them). Valid until b next changes; no access is counted. */
const char *blob_ram_view(const blob_t *b, uint64_t off, uint64_t len);
/* TTRUNCATE: sets the size (zeros when growing), creating the blob if missing. */
int tag_truncate(tag_obj_t *t, const char *name, size_t nlen, uint64_t size, long long now,
                 tag_plan_t **plan);
/* TDEL one blob: 1 if it existed. */
int tag_del(tag_obj_t *t, const char *name, size_t nlen);
/* REORG: sets the score and moves the blob to the tier placement picks for it. Returns ST_OK
 * (no move needed, or moved at once within RAM), ST_PENDING, ST_MISSING, ST_BUSY,
 * ST_OOM (no room on any tier: score set, blob left where it was). */
int tag_reorg(tag_obj_t *t, const char *name, size_t nlen, double score, tag_plan_t **plan);

/* 1 if an operation on the blob would answer ST_BUSY now (for_write: TPUT, TTRUNCATE, REORG;
 * else TGET). */
int tag_blob_busy(tag_obj_t *t, const char *name, size_t nlen, int for_write);
/* Names a caller waits on (block_on_name) after ST_BUSY / ST_NOSPACE. Returns the length
 * written into buf (>= 32 bytes). */
size_t tag_blob_waitname(const tag_obj_t *t, const char *name, size_t nlen, char *buf);
size_t tag_space_waitname(char *buf);

/* Write plans (TPUT, TTRUNCATE) handed out whose tag_plan_finish has not run yet. While it
 * is 0 every blob's bytes on file tiers are what its metadata says (a snapshot can read them). */
uint64_t tag_writes_in_flight(void);

/* The latest time a blob can hold (Unix ms, 2^47 - 1: the year 6429): times are 48 bits. */
#define TAG_TIME_MAX ((1LL << 47) - 1)

/* Sets a blob's times (Unix ms, 0..TAG_TIME_MAX: asserted) and counters (each kept up to
 * UINT32_MAX: counters saturate there), as the append-only file restores them. Returns ST_OK
 * or ST_MISSING. */
int tag_set_meta(tag_obj_t *t, const char *name, size_t nlen, long long ctime, long long mtime,
                 long long atime, uint64_t reads, uint64_t writes);

/* The tier a move plan writes to (REORG's reply), -1 for other plans. */
int tag_plan_dest_tier(const tag_plan_t *p);
/* Runs the plan's file reads and writes. Thread-safe; returns 0 or -errno. */
int tag_plan_run(tag_plan_t *p);
/* Back on the loop thread: releases what the plan held and completes its effects (a move
 * swaps extents). status is what tag_plan_run returned; a failed write plan is undone (a blob
 * it created is deleted, one it grew goes back to its old size, score, mtime and counters;
 * bytes it overwrote within the old size may hold part of the new data). Fills names of
 * things that became free for waiters (blob wait name, space) through wake(ud, name, len).
 * Frees the plan. */
void tag_plan_finish(tag_plan_t *p, int status,
                     void (*wake)(void *ud, const char *name, size_t len), void *ud);

/* Plans that storage started on its own (demotions that make room): the server runs each
 * like any other and finishes it with tag_plan_finish. NULL when there are none. */
tag_plan_t *tag_pending_pop(void);

/* The organizer's score of a blob: 0.5 * 2^(-idle/half_life) + 0.5 * n / (n + 10), where idle
 * is the time since its last access and n its reads and writes. */
double tag_access_score(uint64_t accesses, long long idle_ms, double half_life_s);
/* Rescores up to budget blobs (a cursor goes round every tier's blobs across calls) and starts
 * moves for those whose new score picks another tier: their plans are queued for
 * tag_pending_pop. Returns the number of moves started. */
int tag_organize_step(long long now, int budget, double half_life_s);

/* Iteration over blob names (TLIST, rewrite: fn may read blobs, which pauses rehashing for
 * the iteration), and a scan step (TSCAN) with dict cursor semantics. */
typedef void tag_blob_fn(void *ud, blob_t *b);
void tag_foreach(tag_obj_t *t, tag_blob_fn *fn, void *ud);
uint64_t tag_scan(tag_obj_t *t, uint64_t cursor, tag_blob_fn *fn, void *ud);

#endif
