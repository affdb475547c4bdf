/* psort.c - partial quicksort (psort.h): the steps of Redis 7.0's pqsort, written over byte
 * pointers because the element size is the caller's. Its shape (recursion into the left part,
 * a loop over the right one, parts outside the wanted ranks skipped) decides where equal
 * elements end up, so it is kept as is. Any thread. */
#include "common/psort.h"

#include <stdint.h>

typedef int cmp_fn(const void *, const void *);

/* Exchanges n bytes at a and b (the regions do not overlap). */
static void swap_bytes(char *a, char *b, size_t n)
{
    if (a == b) return;
    for (; n >= sizeof(uint64_t); n -= sizeof(uint64_t), a += 8, b += 8) {
        uint64_t t;
        __builtin_memcpy(&t, a, 8);
        __builtin_memcpy(a, b, 8);
        __builtin_memcpy(b, &t, 8);
    }
    for (; n; n--, a++, b++) {
        char t = *a;
        *a = *b;
        *b = t;
    }
}

/* The middle one of a, b, c; which of two equal ones it returns matters for ties. */
static char *median3(char *a, char *b, char *c, cmp_fn *cmp)
{
    if (cmp(a, b) < 0) return cmp(b, c) < 0 ? b : cmp(a, c) < 0 ? c : a;
    return cmp(b, c) > 0 ? b : cmp(a, c) < 0 ? a : c;
}

static void insertion_sort(char *base, size_t n, size_t es, cmp_fn *cmp)
{
    for (char *m = base + es; m < base + n * es; m += es)
        for (char *p = m; p > base && cmp(p - es, p) > 0; p -= es) swap_bytes(p, p - es, es);
}

static char *pick_pivot(char *base, size_t n, size_t es, cmp_fn *cmp)
{
    char *mid = base + (n / 2) * es;
    if (n == 7) return mid;
    char *first = base, *last = base + (n - 1) * es;
    if (n > 40) { /* the ninther: medians of three spread thirds */
        size_t d = (n / 8) * es;
        first = median3(first, first + d, first + 2 * d, cmp);
        mid = median3(mid - d, mid, mid + d, cmp);
        last = median3(last - 2 * d, last - d, last, cmp);
    }
    return median3(first, mid, last, cmp);
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* 1 if bytes [l, r] of the array meet the wanted bytes [want_l, want_r]. */
static int wanted(const char *l, const char *r, const char *want_l, const char *want_r)
{
    return !(want_r < l || want_l > r);
}

/* Sorts n elements at base, skipping parts that hold none of the bytes [want_l, want_r]. The
 * pivot goes to base; scanning from both sides, elements equal to it are parked at the two
 * ends (up to eq_l, from eq_r), smaller ones end left of the meeting point, larger ones right;
 * then the parked ones are swapped into the middle. Recurses left, loops right. */
static void sort_part(char *base, size_t n, size_t es, cmp_fn *cmp, const char *want_l,
                      const char *want_r)
{
    for (;;) {
        if (n < 7) {
            insertion_sort(base, n, es, cmp);
            return;
        }
        swap_bytes(base, pick_pivot(base, n, es, cmp), es);
        char *eq_l = base + es, *lo = base + es;
        char *hi = base + (n - 1) * es, *eq_r = hi;
        for (;;) {
            int r;
            for (; lo <= hi && (r = cmp(lo, base)) <= 0; lo += es)
                if (r == 0) swap_bytes(eq_l, lo, es), eq_l += es;
            for (; lo <= hi && (r = cmp(hi, base)) >= 0; hi -= es)
                if (r == 0) swap_bytes(hi, eq_r, es), eq_r -= es;
            if (lo > hi) break;
            swap_bytes(lo, hi, es);
            lo += es;
            hi -= es;
        }
        char *end = base + n * es;
        size_t k = min_size((size_t)(eq_l - base), (size_t)(lo - eq_l));
        if (k) swap_bytes(base, lo - k, k);
        k = min_size((size_t)(eq_r - hi), (size_t)(end - eq_r) - es);
        if (k) swap_bytes(lo, end - k, k);
        size_t left = (size_t)(lo - eq_l), right = (size_t)(eq_r - hi); /* bytes */
        if (left > es && wanted(base, base + left - 1, want_l, want_r))
            sort_part(base, left / es, es, cmp, want_l, want_r);
        if (right <= es || !wanted(end - right, end - 1, want_l, want_r)) return;
        base = end - right;
        n = right / es;
    }
}

void psort(void *base, size_t n, size_t es, int (*cmp)(const void *, const void *), size_t lo,
           size_t hi)
{
    char *b = base;
    sort_part(b, n, es, cmp, b + lo * es, b + (hi + 1) * es - 1);
}
