/* tier.h - storage tiers: where blob bytes live (RAM, or files on NVMe/SSD/disk).
 *
 * A tier has a name, a kind, a capacity in bytes, a score in [0, 1] (a blob whose score is at
 * least the tier's score belongs there, fastest tier first) and exact accounting of the bytes
 * allocated on it. Space is handed out as extents: contiguous runs on one tier, found by a
 * free-space allocator in blocks of the tier (16 bytes in RAM, 4 KiB in a file). A RAM extent
 * is memory of the tier's own region (mapped at open, used only as far as it is touched); a
 * file extent is a byte range of the tier's data file. The metadata (allocation, accounting)
 * belongs to the loop thread; tier_pread/tier_pwrite on file extents are safe to call from worker
 * threads (they touch only the file descriptor) and are what the server runs off the loop.
 *
 * This module knows nothing of blobs, keys or clients: storage/ builds blobs from extents, and
 * decides placement with tier_set_pick() and the per-tier free space. */
#ifndef CTE_TIERS_TIER_H
#define CTE_TIERS_TIER_H

#include <stddef.h>
#include <stdint.h>

enum tier_kind { TIER_RAM = 0, TIER_FILE = 1 };

#define TIER_MAX 16

/* A RAM tier's block, and a file tier's: what a tier hands out and counts in whole units. */
#define TIER_RAM_BLOCK 16
#define TIER_FILE_BLOCK 4096

/* One extent: len bytes on tier `tier`. For RAM, mem points at the bytes; for a file tier,
 * off is the byte offset in the tier's data file. 16 bytes: a blob of one extent holds it in
 * place of its size and list pointer. */
typedef struct tier_extent {
    uint64_t tier : 8;
    uint64_t len : 56; /* at most TIER_EXTENT_MAX */
    union {
        char *mem;    /* TIER_RAM */
        uint64_t off; /* TIER_FILE */
    } at;
} tier_extent_t;
_Static_assert(sizeof(tier_extent_t) == 16, "tier_extent_t is 16 bytes");

/* The longest extent (64 PiB - 1): longer allocations and growth fail with -ENOSPC, as they
 * would for want of memory or disk. */
#define TIER_EXTENT_MAX ((1ull << 56) - 1)

typedef struct tier_stats {
    uint64_t reads, writes; /* operations */
    uint64_t bytes_read, bytes_written;
    uint64_t blobs; /* maintained by storage/ (tier_blobs_add) */
} tier_stats_t;

typedef struct tier tier_t; /* opaque */

typedef struct tier_set {
    tier_t *t[TIER_MAX];
    int n;
} tier_set_t;

/* Describes one tier to open. path is the directory of a file tier (created if missing),
 * ignored for RAM. score < 0 means "unset": tier_set_open spreads unset scores evenly from 1.0
 * (first tier) down to 0.0 (last), as the config contract says. */
typedef struct tier_spec {
    const char *name;
    int kind;
    uint64_t capacity;
    const char *path;
    double score;
} tier_spec_t;

/* Opens n tiers (fastest first) into set. File tiers create their data file
 * (<path>/<name>.data), lock it (flock) and truncate it to start empty, sized up to capacity
 * lazily. Returns 0, or -errno with a message in err (e.g. "tier 'disk': cannot create /x/y:
 * Permission denied"); a data file that another open tier holds (another process, or another
 * set in this one) gives -EWOULDBLOCK, "tier 'disk': /x/disk.data is in use by another process
 * (pid 4711)", and is left untouched. RAM tiers map their capacity (rounded down to 16-byte
 * blocks) as address space without reserving memory; a capacity the system cannot map is
 * halved until it can, and tier_capacity() reports what was mapped. On failure nothing stays
 * open. */
int tier_set_open(tier_set_t *set, const tier_spec_t *specs, int n, char *err, size_t errlen);
/* Closes every tier, unmapping RAM regions (extents still allocated go with them: their
 * pointers dangle) and closing files (data files are removed). */
void tier_set_close(tier_set_t *set);

/* The tier's properties. */
const char *tier_name(const tier_t *t);
int tier_kind(const tier_t *t);
const char *tier_path(const tier_t *t); /* "" for RAM */
double tier_score(const tier_t *t);
uint64_t tier_capacity(const tier_t *t);
uint64_t tier_used(const tier_t *t);
uint64_t tier_free(const tier_t *t);
/* What the tier can really hand out now: tier_free(), bounded for a file tier by the free
 * space of the file system under it (a capacity may exceed it). One fstatvfs; loop thread. */
uint64_t tier_room(const tier_t *t);
/* Process memory counted for the tier's bytes: for RAM tier_used(), which alloc_used_memory
 * includes; 0 for a file tier. */
uint64_t tier_mem(const tier_t *t);
tier_stats_t *tier_stats(tier_t *t);

/* The tier a blob of score s should live on when all have room: the fastest tier whose score
 * is <= s (the last tier if none). */
int tier_set_pick(const tier_set_t *set, double s);

/* Accounting: a tier allocates whole blocks (16 bytes in RAM, 4 KiB in a file) and counts
 * them, so tier_used() is what the tier really holds.
 *
 * Allocates len bytes on tier i as one or more extents (several runs when no free run is
 * large enough). Writes up to max extents into out and returns how many, or -ENOSPC when the
 * tier has less than len free or (file tier) the file system under it cannot reserve the
 * blocks (nothing allocated), or -E2BIG when more than max extents would be needed. File
 * blocks handed out are reserved on disk (fallocate), so writes into them do not fail for lack
 * of space; freed ones are given back, as freed RAM pages are (in batches). Space is not
 * zeroed. Loop thread only. */
int tier_alloc(tier_set_t *set, int i, uint64_t len, tier_extent_t *out, int max);
/* Returns an extent's space to its tier (the bytes are gone). Loop thread only. */
void tier_free_extent(tier_set_t *set, const tier_extent_t *e);
/* While on, space freed on file tiers is not handed out again (it stays counted as used):
 * a forked child reading file extents of a snapshot (the append-only-file rewrite) must not
 * see them reused. Turning it off frees what was held. Loop thread only. */
void tier_set_hold_frees(tier_set_t *set, int on);
/* Shrinks an extent to new_len (< e->len) from its end, returning the tail's whole blocks.
 * The extent does not move. */
void tier_shrink_extent(tier_set_t *set, tier_extent_t *e, uint64_t new_len);
/* Grows an extent in place by extra bytes if its last block has the room or the blocks right
 * after it are free (file: and the file system can reserve them); returns 0, or -ENOSPC (e
 * unchanged). */
int tier_grow_extent(tier_set_t *set, tier_extent_t *e, uint64_t extra);

/* Data access, any thread for file tiers (RAM extents are plain memory: memcpy).
 * off is relative to the extent. Return 0 or -errno. Short reads/writes are retried. Stats are
 * counted by the caller on the loop thread with tier_count_io. */
int tier_pread(const tier_set_t *set, const tier_extent_t *e, uint64_t off, void *dst,
               uint64_t len);
int tier_pwrite(const tier_set_t *set, const tier_extent_t *e, uint64_t off, const void *src,
                uint64_t len);
/* Writes zeros over [off, off+len) of the extent. */
int tier_zero(const tier_set_t *set, const tier_extent_t *e, uint64_t off, uint64_t len);
void tier_count_io(tier_set_t *set, int i, int is_write, uint64_t bytes);

/* Test hook: every file-tier pread/pwrite of tier i sleeps delay_us first (0 = off). Used by
 * tests to check that a slow tier does not delay other clients. Also settable by config. */
void tier_set_delay(tier_set_t *set, int i, uint64_t delay_us);

#endif
