/* alloc.h - libcte internal: every allocation of the library goes through these, so that
 * tests can make the n-th one fail (cte__alloc_fail_after) and check that each failure turns
 * into CTE_E_NOMEM with nothing leaked or half-done. The countdown is per thread. */
#ifndef CTE_CLIENT_ALLOC_H
#define CTE_CLIENT_ALLOC_H

#include <stddef.h>

void *cte__malloc(size_t n);
void *cte__calloc(size_t n, size_t size);
void *cte__realloc(void *p, size_t n);
/* Tests only: after n more successful allocations on this thread, every one fails; -1 (the
 * default) never fails. */
void cte__alloc_fail_after(long n);

#endif
