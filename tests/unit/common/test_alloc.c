/* Tests for common/alloc.c: counting, and jemalloc's statistics and purging (the unit tests
 * link jemalloc as the process malloc, as cte-server does). */
#include "common/alloc.h"

#include <criterion/criterion.h>
#include <string.h>

#define BIG (64u << 20)

/* An ASan build puts its own malloc ahead of jemalloc: then these tests do not apply. */
#if defined(__SANITIZE_ADDRESS__)
#define NEED_JEMALLOC() cr_skip_test("an ASan build allocates with ASan's malloc")
#else
#define NEED_JEMALLOC() (void)0
#endif

Test(alloc, name_is_the_linked_jemalloc_version)
{
    NEED_JEMALLOC();
    cr_assert(strncmp(alloc_name(), "jemalloc-5.", 11) == 0, "%s", alloc_name());
    cr_assert_null(strchr(alloc_name() + 9, '-'), "%s: no git suffix", alloc_name());
}

Test(alloc, stats_follow_a_large_allocation)
{
    NEED_JEMALLOC();
    alloc_stats_t before, during;
    cr_assert_eq(alloc_stats(&before), 0);
    char *p = xmalloc(BIG);
    memset(p, 1, BIG); /* touch every page */
    cr_assert_eq(alloc_stats(&during), 0);
    cr_assert_geq(during.allocated, before.allocated + BIG);
    cr_assert_geq(during.active, during.allocated);
    cr_assert_geq(during.resident, before.resident + BIG / 2);
    cr_assert_geq(during.mapped, during.active);
    xfree(p);
}

/* A freed block's pages stay resident in jemalloc's dirty pages until decay or a purge. */
static void fill_and_free(size_t n, size_t piece)
{
    char **v = xcalloc(n / piece, sizeof(*v));
    for (size_t i = 0; i < n / piece; i++) {
        v[i] = xmalloc(piece);
        memset(v[i], 2, piece);
    }
    for (size_t i = 0; i < n / piece; i++) xfree(v[i]);
    xfree(v);
}

Test(alloc, purge_returns_freed_pages)
{
    NEED_JEMALLOC();
    alloc_stats_t base, after_free, after_purge;
    alloc_purge();
    alloc_stats(&base);
    fill_and_free(BIG, 1024);
    alloc_stats(&after_free);
    cr_assert_geq(after_free.resident, base.resident + BIG / 2,
                  "freed small blocks should stay resident before a purge (%zu -> %zu)",
                  base.resident, after_free.resident);
    cr_assert_eq(alloc_purge(), 0);
    alloc_stats(&after_purge);
    cr_assert_lt(after_purge.resident, base.resident + BIG / 8, "%zu -> %zu", base.resident,
                 after_purge.resident);
}

Test(alloc, purge_after_drop_purges_once_after_a_large_fall)
{
    NEED_JEMALLOC();
    alloc_purge_after_drop(BIG / 2); /* sets the mark */
    char **v = xcalloc(BIG / 1024, sizeof(*v));
    for (size_t i = 0; i < BIG / 1024; i++) {
        v[i] = xmalloc(1024);
        memset(v[i], 3, 1024);
    }
    cr_assert_eq(alloc_purge_after_drop(BIG / 2), 0, "nothing was freed yet");
    for (size_t i = 0; i < BIG / 1024; i++) xfree(v[i]);
    xfree(v);
    alloc_stats_t before, after;
    alloc_stats(&before);
    cr_assert_eq(alloc_purge_after_drop(BIG / 2), 1);
    alloc_stats(&after);
    cr_assert_lt(after.resident + BIG / 2, before.resident, "%zu -> %zu", before.resident,
                 after.resident);
    cr_assert_eq(alloc_purge_after_drop(BIG / 2), 0, "the fall was purged already");
}

Test(alloc, purge_after_drop_ignores_a_small_fall)
{
    NEED_JEMALLOC();
    char *p = xmalloc(BIG / 4);
    alloc_purge_after_drop(BIG / 2);
    xfree(p);
    cr_assert_eq(alloc_purge_after_drop(BIG / 2), 0);
}

Test(alloc, background_purge_can_start_and_stop)
{
    NEED_JEMALLOC();
    cr_assert_eq(alloc_background_purge(1), 0);
    cr_assert_eq(alloc_background_purge(0), 0);
}
