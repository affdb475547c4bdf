/* hist.h - a latency histogram that answers as YCSB's does: HdrHistogram 2.1.4 (the version
 * YCSB 0.17 ships) with 3 significant digits and a lowest discernible value of 1, over values
 * 0..HIST_MAX (microseconds; YCSB records them as Java ints).
 *
 * Values are counted in buckets of HdrHistogram's layout: exact up to 2047, then 1024
 * sub-buckets per power of two, so a value is known to 1 part in 1024. The read-outs are
 * HdrHistogram's: max is the highest value of the top bucket, min the lowest of the bottom one
 * (Long.MAX_VALUE when empty), the mean weights each bucket's middle, a percentile is the
 * highest value of the bucket where the count reaches round(p% of the total). A hist_t is
 * plain memory (about 180 KiB): one thread at a time. */
#ifndef YCSB_HIST_H
#define YCSB_HIST_H

#include <stdint.h>

#define HIST_MAX INT32_MAX
#define HIST_LEN 22528 /* counts array length for HIST_MAX (checked in hist.c) */

typedef struct hist {
    uint64_t total;
    int64_t max;         /* raw, 0 when empty */
    int64_t min_nonzero; /* raw, INT64_MAX when empty */
    int lo, hi;          /* indexes holding counts lie in [lo, hi) */
    uint64_t count[HIST_LEN];
} hist_t;

void hist_init(hist_t *h);
/* Empties h, clearing only the counts it used. */
void hist_reset(hist_t *h);
/* Counts v (clamped to [0, HIST_MAX]). */
void hist_record(hist_t *h, int64_t v);
/* dst += src. */
void hist_add(hist_t *dst, const hist_t *src);

uint64_t hist_count(const hist_t *h);
int64_t hist_max(const hist_t *h);
int64_t hist_min(const hist_t *h);
/* NaN when empty (0/0, as Java computes it). */
double hist_mean(const hist_t *h);
/* p in [0, 100]; 0 when empty. */
int64_t hist_percentile(const hist_t *h, double p);

/* The bucket arithmetic, exported for the tests. */
int hist_index(int64_t v);
int64_t hist_lowest_equivalent(int64_t v);
int64_t hist_highest_equivalent(int64_t v);

#endif
