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
/* Bytes currently allocated through this module, and mapped ones counted with
 * alloc_count_add. */
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

/* Memory a module maps for itself rather than allocates here (a RAM tier's region): n bytes
 * more (alloc_count_add) or fewer (alloc_count_sub) in alloc_used_memory(), which counts them
 * as it counts allocated blocks. The caller subtracts no more than it added. */
void alloc_count_add(size_t n);
void alloc_count_sub(size_t n);

#endif
