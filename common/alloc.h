/* alloc.h - allocation wrappers that count the bytes in use.
 *
 * x* functions abort the process on out-of-memory: use them for our own structures.
 * try_* functions return NULL instead: use them for sizes a client controls and turn the
 * failure into an error reply. Every function counts the allocator's usable size of each
 * block, so alloc_used_memory() is what INFO reports as used_memory. Thread-safe. */
#ifndef CTE_COMMON_ALLOC_H
#define CTE_COMMON_ALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
void xfree(void *p);
char *xstrdup(const char *s);
/* Copies len bytes into a new block of len+1 bytes that ends with a NUL. */
char *xmemdup(const void *p, size_t len);

void *try_malloc(size_t n);
void *try_realloc(void *p, size_t n);

/* Usable size of a block returned by the functions above. */
size_t alloc_size(const void *p);
/* Bytes currently allocated through this module. */
size_t alloc_used_memory(void);
/* Resident set size of the process in bytes, 0 when unknown. */
size_t alloc_rss(void);
/* Allocator name and version for INFO, e.g. "jemalloc-5.3.0" ("libc" when the process
 * malloc is not jemalloc). The string is static. */
const char *alloc_name(void);

/* jemalloc's own view of the heap, in bytes (its stats.* after an epoch refresh): allocated
 * (what the application holds), active (the pages of those allocations), resident (pages
 * the allocator holds in RAM, its metadata included), mapped (its mapped chunks) and retained
 * (virtual memory kept without RAM behind it). */
typedef struct alloc_stats {
    size_t allocated, active, resident, mapped, retained;
} alloc_stats_t;

/* Fills st (zeroed first). Returns 0, or -ENOTSUP when the process malloc is not jemalloc
 * (not linked, or a sanitizer's allocator in its place); the functions below likewise. */
int alloc_stats(alloc_stats_t *st);
/* Returns every arena's unused dirty pages to the OS at once (arena.<all>.purge): RSS drops
 * to about what is allocated. Costs about a millisecond per 100 MB purged on the calling
 * thread. Returns 0, or -ENOTSUP without jemalloc. */
int alloc_purge(void);
/* Starts (on != 0) or stops jemalloc's background threads, which return dirty pages to the
 * OS on their own as they decay (after dirty_decay_ms, 10 s), also while the process is idle;
 * without them jemalloc purges only when it allocates or frees. Returns 0, or a negative errno
 * (-ENOTSUP without jemalloc). */
int alloc_background_purge(int on);
/* jemalloc's whole statistics report (malloc_stats_print), handed to write in pieces of text
 * on the calling thread. Returns 0, or -ENOTSUP without jemalloc. */
int alloc_stats_report(void (*write)(void *ud, const char *text), void *ud);
/* For a periodic caller (the server cron): purges when the bytes in use fell by at least
 * min_drop (and by an eighth) below the highest count seen since the last purge, as after
 * FLUSHALL or a DEL of a large value. Returns 1 if it purged, else 0. Not thread-safe: one
 * caller. */
int alloc_purge_after_drop(size_t min_drop);

/* Arenas: blocks a module allocates apart from the rest of the heap, counted in
 * alloc_used_memory like any other, that can all be freed at once (alloc_arena_destroy) with
 * no list of them kept. With jemalloc an arena is one of its arenas, used without a thread
 * cache; otherwise (ASan builds) it is the process malloc under id 0, and destroying it frees
 * nothing: the owner must then free every block itself. Not thread-safe per arena: one thread
 * allocates and frees a given arena's blocks. */

/* Creates an arena. Returns its id (> 0), or 0 when the process malloc is not jemalloc (the
 * functions below take 0 as "the process malloc"). */
unsigned alloc_arena_new(void);
/* Like try_malloc / try_realloc / xfree, in arena (p must be a block of arena). */
void *alloc_arena_try_malloc(unsigned arena, size_t n);
void *alloc_arena_try_realloc(unsigned arena, void *p, size_t n);
void alloc_arena_free(unsigned arena, void *p);
/* 1 if p lies in memory of arena (jemalloc's arenas.lookup, about as dear as a free), else
 * 0; always 1 for arena 0. */
int alloc_arena_owns(unsigned arena, const void *p);
/* Usable bytes of arena's live blocks, from jemalloc's statistics (0 for arena 0). */
size_t alloc_arena_bytes(unsigned arena);
/* Frees every block left in arena, and the arena (nothing for arena 0). */
void alloc_arena_destroy(unsigned arena);

#endif
