/* alloc.c - libcte's allocation wrappers: libc's malloc family, plus a per-thread countdown
 * with which tests inject failures. No failure is ever turned into an abort: callers check
 * and return CTE_E_NOMEM. Any thread. */
#include "alloc.h"

#include <stdlib.h>

static _Thread_local long fail_after = -1;

static int should_fail(void)
{
    if (fail_after < 0) return 0;
    if (fail_after == 0) return 1;
    fail_after--;
    return 0;
}

void cte__alloc_fail_after(long n)
{
    fail_after = n;
}

void *cte__malloc(size_t n)
{
    return should_fail() ? NULL : malloc(n);
}

void *cte__calloc(size_t n, size_t size)
{
    return should_fail() ? NULL : calloc(n, size);
}

void *cte__realloc(void *p, size_t n)
{
    return should_fail() ? NULL : realloc(p, n);
}
