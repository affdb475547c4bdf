/* psort.h - partial sort with Redis 7.0's element order.
 *
 * Redis sorts only the ranks it will return when a command asks for a slice of a sorted
 * result (GEORADIUS/GEOSEARCH with COUNT, SORT with LIMIT): a quicksort that skips the parts
 * lying wholly outside the wanted ranks (its pqsort.c, Bentley and McIlroy's "Engineering a
 * Sort Function" with that pruning). It is not stable, so elements that compare equal end up
 * in an order of its own. psort() follows the same steps, so that ties come out in Redis's
 * order too: insertion sort below 7 elements, the median of three (of nine above 40) as pivot,
 * a three-way partition that parks equal elements at both ends and swaps them to the middle.
 *
 * Pure function, no allocation, any thread. */
#ifndef CTE_COMMON_PSORT_H
#define CTE_COMMON_PSORT_H

#include <stddef.h>

/* Reorders the n elements of size es at base so that ranks lo..hi (0-based, lo <= hi < n)
 * hold what a full sort by cmp puts there, in the order Redis 7.0's pqsort leaves them
 * (elements outside lo..hi are in no particular order). */
void psort(void *base, size_t n, size_t es, int (*cmp)(const void *, const void *), size_t lo,
           size_t hi);

#endif
