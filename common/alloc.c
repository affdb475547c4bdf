/* alloc.c - counted allocation over jemalloc (linked as the process malloc).
 *
 * Memory a module maps for itself (the RAM tier's region) is added to the same counter
 * (alloc_count_add/_sub), so used_memory is every byte the server holds for data.
 *
 * The counter is a relaxed atomic because worker threads (file tier I/O) allocate too.
 * jemalloc's statistics and purging go through mallctl, declared weak here: programs that
 * link without jemalloc (the fuzz targets) get NULL, and those whose malloc is not jemalloc's
 * (ASan builds) are told apart at the first call; the functions then report -ENOTSUP. */
#include "common/alloc.h"

#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* jemalloc's MALLCTL_ARENAS_ALL: "arena.4096.purge" means every arena */
#define ARENAS_ALL 4096

extern int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
    __attribute__((weak));

extern void malloc_stats_print(void (*write_cb)(void *, const char *), void *cbopaque,
                               const char *opts) __attribute__((weak));

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

/* 1 if malloc is jemalloc's: linked (mallctl found) and not replaced by a sanitizer's
 * allocator, which an ASan build links ahead of it. jemalloc counts what this thread
 * allocated; a malloc that leaves the count unchanged is someone else's. */
static int jemalloc_is_malloc(void)
{
    static int known = -1;
    if (known >= 0) return known;
    uint64_t before = 0, after = 0;
    size_t len = sizeof(before);
    known = 0;
    if (!mallctl || mallctl("thread.allocated", &before, &len, NULL, 0) != 0) return known;
    void *volatile p = malloc(4096);
    len = sizeof(after);
    if (mallctl("thread.allocated", &after, &len, NULL, 0) == 0 && after >= before + 4096)
        known = 1;
    free(p);
    return known;
}

const char *alloc_name(void)
{
    static char name[64];
    const char *ver = NULL;
    size_t len = sizeof(ver);
    if (name[0]) return name;
    if (!jemalloc_is_malloc() || mallctl("version", &ver, &len, NULL, 0) != 0 || !ver)
        return "libc";
    /* "5.3.0-0-g54eaed1d..." -> "jemalloc-5.3.0" */
    snprintf(name, sizeof(name), "jemalloc-%.*s", (int)strcspn(ver, "-"), ver);
    return name;
}

static size_t stat_size(const char *key)
{
    size_t v = 0, len = sizeof(v);
    if (mallctl(key, &v, &len, NULL, 0) != 0) return 0;
    return v;
}

int alloc_stats(alloc_stats_t *st)
{
    memset(st, 0, sizeof(*st));
    if (!jemalloc_is_malloc()) return -ENOTSUP;
    uint64_t epoch = 1;
    size_t len = sizeof(epoch);
    mallctl("epoch", &epoch, &len, &epoch, len); /* refreshes the stats.* snapshot */
    st->allocated = stat_size("stats.allocated");
    st->active = stat_size("stats.active");
    st->resident = stat_size("stats.resident");
    st->mapped = stat_size("stats.mapped");
    st->retained = stat_size("stats.retained");
    return 0;
}

int alloc_purge(void)
{
    char key[32];
    if (!jemalloc_is_malloc()) return -ENOTSUP;
    snprintf(key, sizeof(key), "arena.%d.purge", ARENAS_ALL);
    return mallctl(key, NULL, NULL, NULL, 0) == 0 ? 0 : -EINVAL;
}

int alloc_background_purge(int on)
{
    bool v = on != 0;
    if (!jemalloc_is_malloc()) return -ENOTSUP;
    int rc = mallctl("background_thread", NULL, NULL, &v, sizeof(v));
    return rc ? -rc : 0; /* mallctl returns a positive errno */
}

int alloc_stats_report(void (*write)(void *ud, const char *text), void *ud)
{
    if (!jemalloc_is_malloc() || !malloc_stats_print) return -ENOTSUP;
    malloc_stats_print(write, ud, NULL);
    return 0;
}

int alloc_purge_after_drop(size_t min_drop)
{
    static size_t mark; /* highest count since the last purge */
    size_t now = alloc_used_memory();
    if (now >= mark) {
        mark = now;
        return 0;
    }
    size_t drop = mark - now;
    if (drop < min_drop || drop < mark / 8) return 0;
    mark = now;
    return alloc_purge() == 0;
}

void alloc_count_add(size_t n)
{
    atomic_fetch_add_explicit(&used, n, memory_order_relaxed);
}

void alloc_count_sub(size_t n)
{
    atomic_fetch_sub_explicit(&used, n, memory_order_relaxed);
}
