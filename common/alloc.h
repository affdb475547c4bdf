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
/* Allocator name and version for INFO, e.g. "jemalloc-5.3.0". */
const char *alloc_name(void);

#endif
