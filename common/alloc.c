/* alloc.c - counted allocation over jemalloc (linked as the process malloc).
 *
 * The counter is a relaxed atomic because worker threads (file tier I/O) allocate too. */
#include "common/alloc.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Atomic size_t used;

static void oom(size_t n)
{
    fprintf(stderr, "cte-server: out of memory allocating %zu bytes\n", n);
    abort();
}

static void *count(void *p)
{
    if (p) atomic_fetch_add_explicit(&used, malloc_usable_size(p), memory_order_relaxed);
    return p;
}

void *try_malloc(size_t n)
{
    return count(malloc(n ? n : 1));
}

void *try_realloc(void *p, size_t n)
{
    size_t old = p ? malloc_usable_size(p) : 0;
    void *q = realloc(p, n ? n : 1);
    if (!q) return NULL;
    atomic_fetch_sub_explicit(&used, old, memory_order_relaxed);
    return count(q);
}

void *xmalloc(size_t n)
{
    void *p = try_malloc(n);
    if (!p) oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return count(p);
}

void *xrealloc(void *p, size_t n)
{
    void *q = try_realloc(p, n);
    if (!q) oom(n);
    return q;
}

void xfree(void *p)
{
    if (!p) return;
    atomic_fetch_sub_explicit(&used, malloc_usable_size(p), memory_order_relaxed);
    free(p);
}

char *xmemdup(const void *p, size_t len)
{
    char *s = xmalloc(len + 1);
    if (len) memcpy(s, p, len);
    s[len] = '\0';
    return s;
}

char *xstrdup(const char *s)
{
    return xmemdup(s, strlen(s));
}

size_t alloc_size(const void *p)
{
    return p ? malloc_usable_size((void *)p) : 0;
}

size_t alloc_used_memory(void)
{
    return atomic_load_explicit(&used, memory_order_relaxed);
}

size_t alloc_rss(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0, rss = 0;
    if (!f) return 0;
    if (fscanf(f, "%lu %lu", &pages, &rss) != 2) rss = 0;
    fclose(f);
    return (size_t)rss * (size_t)sysconf(_SC_PAGESIZE);
}

const char *alloc_name(void)
{
    return "jemalloc-5.3.0";
}
