/* hist.c - HdrHistogram's bucket layout and read-outs, as version 2.1.4 computes them (see
 * hist.h).
 *
 * Layout for 3 significant digits, unit 1: subBucketCount 2048 (magnitude 11), half count
 * 1024; a value's bucket is 53 - clz64(v | 2047), its sub-bucket v >> bucket, and its counts
 * index (bucket + 1) * 1024 + sub - 1024. Bucket 0 holds 0..2047 exactly; bucket k >= 1 holds
 * [1024 << k, 2048 << k) in steps of 1 << k. */
#include "hist.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#define SUB_HALF_MAG 10
#define SUB_HALF (1 << SUB_HALF_MAG)
#define SUB_MASK 2047
#define LZC_BASE 53

static int bucket_of(int64_t v)
{
    return LZC_BASE - __builtin_clzll((uint64_t)v | SUB_MASK);
}

int hist_index(int64_t v)
{
    int b = bucket_of(v);
    int sub = (int)(v >> b);
    return ((b + 1) << SUB_HALF_MAG) + sub - SUB_HALF;
}

/* valueFromIndex */
static int64_t value_at(int index)
{
    int b = (index >> SUB_HALF_MAG) - 1, sub = (index & (SUB_HALF - 1)) + SUB_HALF;
    if (b < 0) {
        sub -= SUB_HALF;
        b = 0;
    }
    return (int64_t)sub << b;
}

int64_t hist_lowest_equivalent(int64_t v)
{
    int b = bucket_of(v);
    return (v >> b) << b;
}

static int64_t range_size(int64_t v)
{
    int b = bucket_of(v);
    int64_t sub = v >> b;
    return (int64_t)1 << (sub >= 2 * SUB_HALF ? b + 1 : b);
}

int64_t hist_highest_equivalent(int64_t v)
{
    return hist_lowest_equivalent(v) + range_size(v) - 1;
}

static int64_t median_equivalent(int64_t v)
{
    return hist_lowest_equivalent(v) + (range_size(v) >> 1);
}

void hist_init(hist_t *h)
{
    _Static_assert(HIST_LEN == (LZC_BASE - 33 + 2) << SUB_HALF_MAG, "HIST_LEN covers INT32_MAX");
    memset(h, 0, sizeof *h);
    h->min_nonzero = INT64_MAX;
    h->lo = HIST_LEN;
}

void hist_reset(hist_t *h)
{
    if (h->lo < h->hi) memset(h->count + h->lo, 0, (size_t)(h->hi - h->lo) * sizeof h->count[0]);
    h->total = 0;
    h->max = 0;
    h->min_nonzero = INT64_MAX;
    h->lo = HIST_LEN;
    h->hi = 0;
}

void hist_record(hist_t *h, int64_t v)
{
    if (v < 0) v = 0;
    if (v > HIST_MAX) v = HIST_MAX;
    int i = hist_index(v);
    assert(i >= 0 && i < HIST_LEN);
    h->count[i]++;
    h->total++;
    if (i < h->lo) h->lo = i;
    if (i >= h->hi) h->hi = i + 1;
    if (v > h->max) h->max = v;
    if (v != 0 && v < h->min_nonzero) h->min_nonzero = v;
}

void hist_add(hist_t *dst, const hist_t *src)
{
    for (int i = src->lo; i < src->hi; i++) dst->count[i] += src->count[i];
    if (src->lo < dst->lo) dst->lo = src->lo;
    if (src->hi > dst->hi) dst->hi = src->hi;
    dst->total += src->total;
    if (src->max > dst->max) dst->max = src->max;
    if (src->min_nonzero < dst->min_nonzero) dst->min_nonzero = src->min_nonzero;
}

uint64_t hist_count(const hist_t *h)
{
    return h->total;
}

int64_t hist_max(const hist_t *h)
{
    return h->max == 0 ? 0 : hist_highest_equivalent(h->max);
}

int64_t hist_min(const hist_t *h)
{
    if (h->count[0] > 0) return 0;
    return h->min_nonzero == INT64_MAX ? INT64_MAX : hist_lowest_equivalent(h->min_nonzero);
}

double hist_mean(const hist_t *h)
{
    double total = 0;
    for (int i = h->lo; i < h->hi; i++)
        if (h->count[i]) total += (double)median_equivalent(value_at(i)) * (double)h->count[i];
    return total * 1.0 / (double)h->total;
}

int64_t hist_percentile(const hist_t *h, double p)
{
    double req = p < 100.0 ? p : 100.0;
    int64_t want = (int64_t)(req / 100.0 * (double)h->total + 0.5); /* round to nearest */
    if (want < 1) want = 1;
    uint64_t sum = 0;
    for (int i = h->lo; i < h->hi; i++) {
        sum += h->count[i];
        if (sum >= (uint64_t)want)
            return p == 0.0 ? hist_lowest_equivalent(value_at(i))
                            : hist_highest_equivalent(value_at(i));
    }
    return 0;
}
