/* gen.c - YCSB's generators (see gen.h): xoshiro256** as the random source, FNV-64, the
 * counters, the zipfian family and the other number generators.
 *
 * Every formula follows its site.ycsb.generator class step by step, including the quirks the
 * distributions depend on: ScrambledZipfianGenerator draws from a zipfian over 10^10 + 1
 * items with the zeta of 10^10; ZipfianGenerator's eta keeps the item count it was built
 * with even after its zeta grew; Math.abs(Long.MIN_VALUE) stays negative. Any thread; a
 * gen_num_t is used by one thread at a time, the counters by all. */
#include "gen.h"

#include "java.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- random source ---- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void gen_rng_seed(gen_rng_t *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t gen_rng_u64(gen_rng_t *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

int64_t gen_rng_long(gen_rng_t *r)
{
    return (int64_t)gen_rng_u64(r);
}

int32_t gen_rng_int(gen_rng_t *r)
{
    return (int32_t)(uint32_t)(gen_rng_u64(r) >> 32);
}

double gen_rng_double(gen_rng_t *r)
{
    return (double)(gen_rng_u64(r) >> 11) * 0x1.0p-53;
}

int32_t gen_rng_int_bound(gen_rng_t *r, int32_t bound)
{
    assert(bound > 0);
    uint32_t b = (uint32_t)bound, lim = UINT32_MAX - UINT32_MAX % b, v;
    do v = (uint32_t)(gen_rng_u64(r) >> 32);
    while (v >= lim);
    return (int32_t)(v % b);
}

/* ---- FNV-64 ---- */

int64_t gen_fnv64(int64_t val)
{
    uint64_t h = 0xCBF29CE484222325ull, v = (uint64_t)val;
    for (int i = 0; i < 8; i++) {
        h ^= v & 0xFF;
        h *= 1099511628211ull;
        v = (v >> 8) | (val < 0 ? 0xFF00000000000000ull : 0); /* Java's signed >> */
    }
    return java_labs((int64_t)h);
}

/* ---- counters ---- */

void gen_counter_init(gen_counter_t *c, int64_t start)
{
    atomic_init(&c->next, start);
}

int64_t gen_counter_next(gen_counter_t *c)
{
    return atomic_fetch_add(&c->next, 1);
}

int64_t gen_counter_last(gen_counter_t *c)
{
    return atomic_load(&c->next) - 1;
}

int gen_acked_init(gen_acked_t *a, int64_t start)
{
    a->window = calloc(GEN_ACK_WINDOW, sizeof *a->window);
    if (!a->window) return -ENOMEM;
    for (size_t i = 0; i < GEN_ACK_WINDOW; i++) atomic_init(&a->window[i], false);
    gen_counter_init(&a->counter, start);
    atomic_init(&a->limit, start - 1);
    pthread_mutex_init(&a->lock, NULL);
    return 0;
}

void gen_acked_deinit(gen_acked_t *a)
{
    free(a->window);
    a->window = NULL;
    pthread_mutex_destroy(&a->lock);
}

int64_t gen_acked_next(gen_acked_t *a)
{
    return gen_counter_next(&a->counter);
}

int64_t gen_acked_last(gen_acked_t *a)
{
    return atomic_load(&a->limit);
}

int gen_acked_ack(gen_acked_t *a, int64_t value)
{
    const int64_t mask = GEN_ACK_WINDOW - 1;
    if (atomic_exchange(&a->window[value & mask], true)) return -EOVERFLOW;
    if (pthread_mutex_trylock(&a->lock) != 0) return 0; /* the holder (or a later ack) moves on */
    /* As YCSB writes it: the loop stops at the first slot not yet acknowledged (its end test
     * compares an index with a slot number, so in practice that is the only stop). */
    int64_t limit = atomic_load(&a->limit), before_first = limit & mask, index;
    for (index = limit + 1; index != before_first; ++index) {
        atomic_bool *slot = &a->window[index & mask];
        if (!atomic_load(slot)) break;
        atomic_store(slot, false);
    }
    atomic_store(&a->limit, index - 1);
    pthread_mutex_unlock(&a->lock);
    return 0;
}

/* ---- zipfian ---- */

double gen_zeta(int64_t st, int64_t n, double theta, double initial)
{
    double sum = initial;
    for (int64_t i = st; i < n; i++) sum += 1 / pow((double)(i + 1), theta);
    return sum;
}

static double zipf_eta(const gen_zipf_t *z)
{
    return (1 - pow(2.0 / (double)z->items, 1 - z->theta)) / (1 - z->zeta2theta / z->zetan);
}

void gen_zipf_init(gen_zipf_t *z, int64_t min, int64_t max, double theta, double zetan)
{
    z->items = max - min + 1;
    z->base = min;
    z->theta = theta;
    z->zeta2theta = gen_zeta(0, 2, theta, 0);
    z->alpha = 1.0 / (1.0 - theta);
    z->zetan = zetan >= 0 ? zetan : gen_zeta(0, z->items, theta, 0);
    z->countforzeta = z->items;
    z->eta = zipf_eta(z);
}

int64_t gen_zipf_next(gen_zipf_t *z, gen_rng_t *r, int64_t itemcount)
{
    if (itemcount > z->countforzeta) { /* a smaller count keeps the larger zeta, as in YCSB */
        z->zetan = gen_zeta(z->countforzeta, itemcount, z->theta, z->zetan);
        z->countforzeta = itemcount;
        z->eta = zipf_eta(z);
    }
    double u = gen_rng_double(r), uz = u * z->zetan;
    if (uz < 1.0) return z->base;
    if (uz < 1.0 + pow(0.5, z->theta)) return z->base + 1;
    return z->base + java_d2l((double)itemcount * pow(z->eta * u - z->eta + 1, z->alpha));
}

/* ---- number generators ---- */

static void gen_clear(gen_num_t *g, gen_kind_t kind)
{
    *g = (gen_num_t){.kind = kind};
}

void gen_constant(gen_num_t *g, int64_t value)
{
    gen_clear(g, GEN_CONSTANT);
    g->a = value;
}

void gen_uniform(gen_num_t *g, int64_t lb, int64_t ub)
{
    gen_clear(g, GEN_UNIFORM);
    g->a = lb;
    g->b = ub - lb + 1;
}

void gen_zipfian(gen_num_t *g, int64_t min, int64_t max)
{
    gen_clear(g, GEN_ZIPFIAN);
    gen_zipf_init(&g->zipf, min, max, GEN_ZIPFIAN_CONSTANT, -1);
}

void gen_scrambled(gen_num_t *g, int64_t min, int64_t max)
{
    gen_clear(g, GEN_SCRAMBLED);
    g->a = min;
    g->b = max - min + 1;
    gen_zipf_init(&g->zipf, 0, GEN_SCRAMBLED_ITEM_COUNT, GEN_ZIPFIAN_CONSTANT, GEN_SCRAMBLED_ZETAN);
}

void gen_latest(gen_num_t *g, gen_acked_t *basis)
{
    gen_clear(g, GEN_LATEST);
    g->basis = basis;
    gen_zipf_init(&g->zipf, 0, gen_acked_last(basis) - 1, GEN_ZIPFIAN_CONSTANT, -1);
}

void gen_hotspot(gen_num_t *g, int64_t lb, int64_t ub, double hotset, double hotopn)
{
    gen_clear(g, GEN_HOTSPOT);
    if (hotset < 0.0 || hotset > 1.0) {
        fprintf(stderr, "Hotset fraction out of range. Setting to 0.0\n");
        hotset = 0.0;
    }
    if (hotopn < 0.0 || hotopn > 1.0) {
        fprintf(stderr, "Hot operation fraction out of range. Setting to 0.0\n");
        hotopn = 0.0;
    }
    if (lb > ub) {
        fprintf(stderr, "Upper bound of Hotspot generator smaller than the lower bound. "
                        "Swapping the values.\n");
        int64_t t = lb;
        lb = ub;
        ub = t;
    }
    int64_t interval = ub - lb + 1;
    g->a = lb;
    g->b = java_d2i((double)interval * hotset); /* (int) (interval * hotsetFraction) */
    g->c = interval - g->b;
    g->x = hotopn;
}

void gen_sequential(gen_num_t *g, _Atomic int64_t *counter, int64_t start, int64_t end)
{
    gen_clear(g, GEN_SEQUENTIAL);
    g->seq = counter;
    g->a = start;
    g->b = end - start + 1;
}

void gen_exponential(gen_num_t *g, double percentile, double range)
{
    gen_clear(g, GEN_EXPONENTIAL);
    g->x = -log(1.0 - percentile / 100.0) / range;
}

void gen_histogram(gen_num_t *g, int64_t blocksize, const int64_t *bucket, int64_t n)
{
    gen_clear(g, GEN_HISTOGRAM);
    g->a = blocksize;
    g->bucket = bucket;
    g->c = n;
    for (int64_t i = 0; i < n; i++) g->b += bucket[i]; /* area */
}

static int64_t histogram_next(gen_num_t *g, gen_rng_t *r)
{
    int64_t number = gen_rng_int_bound(r, (int32_t)g->b), i;
    for (i = 0; i < g->c - 1; i++) {
        number -= g->bucket[i];
        if (number <= 0) return (i + 1) * g->a;
    }
    return i * g->a;
}

static double exponential_next(gen_num_t *g, gen_rng_t *r)
{
    return -log(gen_rng_double(r)) / g->x;
}

int64_t gen_next_long(gen_num_t *g, gen_rng_t *r)
{
    switch (g->kind) {
    case GEN_CONSTANT:
        return g->a;
    case GEN_UNIFORM:
        return java_labs(gen_rng_long(r)) % g->b + g->a;
    case GEN_ZIPFIAN:
        return gen_zipf_next(&g->zipf, r, g->zipf.items);
    case GEN_SCRAMBLED:
        return g->a + gen_fnv64(gen_zipf_next(&g->zipf, r, g->zipf.items)) % g->b;
    case GEN_LATEST: {
        int64_t max = gen_acked_last(g->basis);
        return max - gen_zipf_next(&g->zipf, r, max);
    }
    case GEN_HOTSPOT:
        if (gen_rng_double(r) < g->x) return g->a + java_labs(gen_rng_long(r)) % g->b;
        return g->a + g->b + java_labs(gen_rng_long(r)) % g->c;
    case GEN_SEQUENTIAL:
        return g->a + atomic_fetch_add(g->seq, 1) % g->b;
    case GEN_EXPONENTIAL:
        return java_d2l(exponential_next(g, r));
    case GEN_HISTOGRAM:
        return histogram_next(g, r);
    }
    assert(!"unknown generator kind");
    return 0;
}

int32_t gen_next_int(gen_num_t *g, gen_rng_t *r)
{
    if (g->kind == GEN_EXPONENTIAL) return java_d2i(exponential_next(g, r));
    return (int32_t)(uint32_t)(uint64_t)gen_next_long(g, r);
}

/* ---- discrete ---- */

void gen_discrete_init(gen_discrete_t *d)
{
    d->n = 0;
}

void gen_discrete_add(gen_discrete_t *d, double weight, int value)
{
    assert(d->n < 8 && weight > 0);
    d->weight[d->n] = weight;
    d->value[d->n++] = value;
}

int gen_discrete_next(const gen_discrete_t *d, gen_rng_t *r)
{
    if (d->n == 0) return -1;
    double sum = 0;
    for (int i = 0; i < d->n; i++) sum += d->weight[i];
    double val = gen_rng_double(r);
    for (int i = 0; i < d->n; i++) {
        double pw = d->weight[i] / sum;
        if (val < pw) return d->value[i];
        val -= pw;
    }
    return d->value[d->n - 1]; /* rounding left val just past the last share */
}
