/* gen.h - YCSB's generators: the random source, FNV-64 key hashing, and the number
 * generators CoreWorkload draws keys, fields, lengths and operations from.
 *
 * Each generator computes what its namesake in site.ycsb.generator computes, with the same
 * integer and floating-point steps (Java's casts and wrap-arounds included), so that the
 * distributions are YCSB's: only the random bits differ (Java's ThreadLocalRandom there,
 * xoshiro256** here, one per thread).
 *
 * Threads. A gen_num_t is a value: each thread works on its own copy (struct assignment), so the
 * state a generator changes as it runs (the zipfian zeta sums) is per thread. What YCSB shares
 * between threads is shared here too, behind pointers: the insert counters (gen_counter_t,
 * gen_acked_t) and the sequential generator's counter, all atomic. */
#ifndef YCSB_GEN_H
#define YCSB_GEN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- random source ---- */
typedef struct gen_rng {
    uint64_t s[4];
} gen_rng_t;

/* Seeds r from seed (any value, 0 included). */
void gen_rng_seed(gen_rng_t *r, uint64_t seed);
uint64_t gen_rng_u64(gen_rng_t *r);
/* Random.nextLong(), nextInt(), nextDouble() in [0, 1), nextInt(bound) in [0, bound)
 * (bound > 0). */
int64_t gen_rng_long(gen_rng_t *r);
int32_t gen_rng_int(gen_rng_t *r);
double gen_rng_double(gen_rng_t *r);
int32_t gen_rng_int_bound(gen_rng_t *r, int32_t bound);

/* ---- hashing: site.ycsb.Utils.fnvhash64 ---- */
/* FNV-1a over the 8 bytes of val (lowest first, arithmetic shifts), then Math.abs. */
int64_t gen_fnv64(int64_t val);

/* ---- counters ---- */
/* CounterGenerator: next() hands out start, start+1, ...; last() is the last handed out. */
typedef struct gen_counter {
    _Atomic int64_t next;
} gen_counter_t;
void gen_counter_init(gen_counter_t *c, int64_t start);
int64_t gen_counter_next(gen_counter_t *c);
int64_t gen_counter_last(gen_counter_t *c);

/* AcknowledgedCounterGenerator: next() as above; last() is the highest value below which every
 * value handed out was acknowledged, so readers never pick a key still being inserted. At most
 * GEN_ACK_WINDOW values may be outstanding. */
#define GEN_ACK_WINDOW (1 << 20)
typedef struct gen_acked {
    gen_counter_t counter;
    _Atomic int64_t limit;
    atomic_bool *window; /* GEN_ACK_WINDOW slots */
    pthread_mutex_t lock;
} gen_acked_t;
/* 0, or -ENOMEM. */
int gen_acked_init(gen_acked_t *a, int64_t start);
void gen_acked_deinit(gen_acked_t *a);
int64_t gen_acked_next(gen_acked_t *a);
int64_t gen_acked_last(gen_acked_t *a);
/* 0, or -EOVERFLOW when more than GEN_ACK_WINDOW values are outstanding ("Too many
 * unacknowledged insertion keys" in YCSB). */
int gen_acked_ack(gen_acked_t *a, int64_t value);

/* ---- zipfian ---- */
#define GEN_ZIPFIAN_CONSTANT 0.99
/* ScrambledZipfianGenerator's fixed item count and its precomputed zeta(ITEM_COUNT, 0.99). */
#define GEN_SCRAMBLED_ITEM_COUNT 10000000000LL
#define GEN_SCRAMBLED_ZETAN 26.46902820178302

typedef struct gen_zipf {
    int64_t items, base, countforzeta;
    double theta, zeta2theta, alpha, zetan, eta;
} gen_zipf_t;

/* zeta(st..n) = initial + sum over i in [st, n) of 1/(i+1)^theta (ZipfianGenerator.zetastatic). */
double gen_zeta(int64_t st, int64_t n, double theta, double initial);
/* ZipfianGenerator(min, max, constant[, zetan]): items = max - min + 1; zetan < 0 computes it. */
void gen_zipf_init(gen_zipf_t *z, int64_t min, int64_t max, double theta, double zetan);
/* ZipfianGenerator.nextLong(itemcount): grows zetan incrementally when itemcount grew. */
int64_t gen_zipf_next(gen_zipf_t *z, gen_rng_t *r, int64_t itemcount);

/* ---- number generators ---- */
typedef enum gen_kind {
    GEN_CONSTANT,    /* ConstantIntegerGenerator */
    GEN_UNIFORM,     /* UniformLongGenerator(lb, ub) */
    GEN_ZIPFIAN,     /* ZipfianGenerator(min, max) */
    GEN_SCRAMBLED,   /* ScrambledZipfianGenerator(min, max) */
    GEN_LATEST,      /* SkewedLatestGenerator over an acknowledged counter */
    GEN_HOTSPOT,     /* HotspotIntegerGenerator */
    GEN_SEQUENTIAL,  /* SequentialGenerator */
    GEN_EXPONENTIAL, /* ExponentialGenerator(percentile, range) */
    GEN_HISTOGRAM    /* HistogramGenerator (buckets from a file) */
} gen_kind_t;

typedef struct gen_num {
    gen_kind_t kind;
    int64_t a, b, c;       /* constant / lb, interval / min, itemcount / lower, hot, cold ... */
    double x;              /* hotspot operation fraction, exponential gamma */
    gen_zipf_t zipf;       /* GEN_ZIPFIAN, GEN_SCRAMBLED, GEN_LATEST */
    gen_acked_t *basis;    /* GEN_LATEST: the counter it follows (not owned) */
    _Atomic int64_t *seq;  /* GEN_SEQUENTIAL: the shared counter (owned by whoever made it) */
    const int64_t *bucket; /* GEN_HISTOGRAM: c buckets (not owned) */
} gen_num_t;

/* Constructors. They check nothing the caller has not: core.c validates the ranges first. */
void gen_constant(gen_num_t *g, int64_t value);
void gen_uniform(gen_num_t *g, int64_t lb, int64_t ub);
void gen_zipfian(gen_num_t *g, int64_t min, int64_t max);
void gen_scrambled(gen_num_t *g, int64_t min, int64_t max);
void gen_latest(gen_num_t *g, gen_acked_t *basis);
/* Fractions outside [0, 1] become 0 and bounds out of order are swapped, as YCSB does (it
 * prints why; so does this, on stderr). */
void gen_hotspot(gen_num_t *g, int64_t lb, int64_t ub, double hotset, double hotopn);
void gen_sequential(gen_num_t *g, _Atomic int64_t *counter, int64_t start, int64_t end);
void gen_exponential(gen_num_t *g, double percentile, double range);
/* blocksize and n buckets (weights); bucket must outlive g and sum to more than 0. */
void gen_histogram(gen_num_t *g, int64_t blocksize, const int64_t *bucket, int64_t n);

/* nextValue().longValue() and nextValue().intValue(): for every kind but the exponential the
 * value is a long and intValue() wraps it to 32 bits; the exponential's is a double, cast. */
int64_t gen_next_long(gen_num_t *g, gen_rng_t *r);
int32_t gen_next_int(gen_num_t *g, gen_rng_t *r);

/* ---- DiscreteGenerator: one of up to 8 weighted choices ---- */
typedef struct gen_discrete {
    int n;
    double weight[8];
    int value[8];
} gen_discrete_t;
void gen_discrete_init(gen_discrete_t *d);
/* Adds a choice; weight > 0; at most 8 (asserted). */
void gen_discrete_add(gen_discrete_t *d, double weight, int value);
/* A value with probability weight/sum; -1 when there are no choices. */
int gen_discrete_next(const gen_discrete_t *d, gen_rng_t *r);

#endif
