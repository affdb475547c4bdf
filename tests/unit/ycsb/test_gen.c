/* Tests for ycsb/gen.c: FNV-64 keys as YCSB names them, the zipfian zeta sums, and the
 * distributions of the generators (frequencies against YCSB's formulas), the counters. Known
 * values were printed by Java running YCSB's formulas. */
#include "core.h"
#include "gen.h"

#include "tests/leak.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void key(int64_t keynum, int pad, bool ordered, const char *want)
{
    char out[CORE_KEY_MAX + 1];
    size_t n = core_key_name(keynum, pad, ordered, out);
    cr_assert_str_eq(out, want);
    cr_assert_eq(n, strlen(want));
}

Test(gen_fnv64, names_keys_as_ycsb_does)
{
    key(0, 1, false, "user6284781860667377211");
    key(1, 1, false, "user8517097267634966620");
    key(2, 1, false, "user1820151046732198393");
    key(123456789, 1, false, "user2350796791908741607");
    key(1000000, 1, false, "user1011632231655643464");
}

Test(gen_fnv64, shifts_negative_values_arithmetically_and_keeps_javas_abs)
{
    cr_assert_eq(gen_fnv64(-1), 8289690350564177859LL);
    cr_assert_eq(gen_fnv64(INT64_MIN), 6284922598155788219LL);
}

Test(core_key_name, pads_ordered_keys_with_zeros)
{
    key(5, 10, true, "user0000000005");
    key(12345, 3, true, "user12345");
    key(0, 0, true, "user0");
    key(0, 25, false, "user0000006284781860667377211");
}

Test(gen_zeta, sums_as_zipfiangenerator_does)
{
    cr_assert_eq(gen_zeta(0, 2, 0.99, 0), 1.5034777750283594);
    cr_assert_eq(gen_zeta(0, 1000, 0.99, 0), 7.728953217284729);
    cr_assert_eq(gen_zeta(0, 100000, 0.99, 0), 12.778338062551246);
    /* grown in steps, it is the same sum term by term */
    double part = gen_zeta(0, 600, 0.99, 0);
    cr_assert_eq(gen_zeta(600, 1000, 0.99, part), gen_zeta(0, 1000, 0.99, 0));
}

/* Chi-square of counts against expected probabilities; true when below the 0.999 quantile
 * (Wilson-Hilferty) for k-1 degrees of freedom. */
static bool chi2_ok(const uint64_t *count, const double *p, int k, uint64_t n)
{
    double x = 0;
    for (int i = 0; i < k; i++) {
        double e = p[i] * (double)n;
        x += ((double)count[i] - e) * ((double)count[i] - e) / e;
    }
    double df = k - 1, z = 3.09, q = df * pow(1 - 2 / (9 * df) + z * sqrt(2 / (9 * df)), 3);
    return x < q;
}

Test(gen_uniform, spreads_evenly_over_its_bounds)
{
    gen_rng_t r;
    gen_num_t g;
    gen_rng_seed(&r, 1);
    gen_uniform(&g, 10, 29);
    uint64_t count[20] = {0};
    double p[20];
    for (int i = 0; i < 200000; i++) {
        int64_t v = gen_next_long(&g, &r);
        cr_assert(v >= 10 && v <= 29, "%lld", (long long)v);
        count[v - 10]++;
    }
    for (int i = 0; i < 20; i++) p[i] = 1.0 / 20;
    cr_assert(chi2_ok(count, p, 20, 200000));
}

Test(gen_zipfian, gives_the_first_items_their_zipf_share)
{
    /* YCSB's algorithm (Gray et al.) returns item 0 with probability 1/zeta(n) and item 1 with
     * 0.5^theta/zeta(n) exactly; the tail follows the approximation. */
    gen_rng_t r;
    gen_num_t g;
    gen_rng_seed(&r, 2);
    gen_zipfian(&g, 100, 1099);
    const int n = 400000;
    uint64_t c0 = 0, c1 = 0, below_mid = 0;
    for (int i = 0; i < n; i++) {
        int64_t v = gen_next_long(&g, &r);
        cr_assert(v >= 100 && v <= 1099, "%lld", (long long)v);
        c0 += v == 100;
        c1 += v == 101;
        below_mid += v < 600;
    }
    double z = gen_zeta(0, 1000, 0.99, 0);
    cr_assert_float_eq((double)c0 / n, 1 / z, 0.003);
    cr_assert_float_eq((double)c1 / n, pow(0.5, 0.99) / z, 0.003);
    /* P(v < 500th item) of the exact Zipf law is zeta(500)/zeta(1000) */
    cr_assert_float_eq((double)below_mid / n, gen_zeta(0, 500, 0.99, 0) / z, 0.01);
}

Test(gen_scrambled, spreads_zipfian_popularity_over_hashed_items)
{
    gen_rng_t r;
    gen_num_t g;
    gen_rng_seed(&r, 3);
    gen_scrambled(&g, 0, 999);
    cr_assert_eq(g.zipf.items, GEN_SCRAMBLED_ITEM_COUNT + 1);
    cr_assert_eq(g.zipf.zetan, GEN_SCRAMBLED_ZETAN);
    const int n = 300000;
    uint64_t *count = calloc(1000, sizeof *count);
    for (int i = 0; i < n; i++) {
        int64_t v = gen_next_long(&g, &r);
        cr_assert(v >= 0 && v <= 999);
        count[v]++;
    }
    /* the most popular item is fnv(0) % 1000, drawn with probability 1/ZETAN */
    int64_t top = gen_fnv64(0) % 1000;
    cr_assert_float_eq((double)count[top] / n, 1 / GEN_SCRAMBLED_ZETAN, 0.003);
    cr_assert_float_eq((double)count[gen_fnv64(1) % 1000] / n, pow(0.5, 0.99) / GEN_SCRAMBLED_ZETAN,
                       0.003);
    free(count);
}

Test(gen_latest, favours_the_last_acknowledged_insert)
{
    gen_acked_t a;
    gen_rng_t r;
    gen_num_t g;
    cr_assert_eq(gen_acked_init(&a, 1000), 0);
    gen_rng_seed(&r, 4);
    gen_latest(&g, &a);
    cr_assert_eq(g.zipf.items, 999);
    const int n = 200000;
    uint64_t last = 0;
    for (int i = 0; i < n; i++) {
        int64_t v = gen_next_long(&g, &r);
        cr_assert(v >= 0 && v <= 999, "%lld", (long long)v);
        last += v == 999;
    }
    cr_assert_float_eq((double)last / n, 1 / gen_zeta(0, 999, 0.99, 0), 0.004);
    /* after inserts, the newest key becomes the favourite and zeta grows to match */
    for (int i = 0; i < 50; i++) cr_assert_eq(gen_acked_ack(&a, gen_acked_next(&a)), 0);
    cr_assert_eq(gen_acked_last(&a), 1049);
    uint64_t newest = 0;
    for (int i = 0; i < n; i++) newest += gen_next_long(&g, &r) == 1049;
    cr_assert_eq(g.zipf.countforzeta, 1049);
    cr_assert_eq(g.zipf.zetan, gen_zeta(0, 1049, 0.99, 0));
    cr_assert_float_eq((double)newest / n, 1 / gen_zeta(0, 1049, 0.99, 0), 0.004);
    gen_acked_deinit(&a);
}

Test(gen_hotspot, sends_the_hot_fraction_of_operations_to_the_hot_set)
{
    gen_rng_t r;
    gen_num_t g;
    gen_rng_seed(&r, 5);
    gen_hotspot(&g, 0, 999, 0.2, 0.8);
    cr_assert_eq(g.b, 200);
    cr_assert_eq(g.c, 800);
    const int n = 200000;
    uint64_t hot = 0;
    for (int i = 0; i < n; i++) {
        int64_t v = gen_next_long(&g, &r);
        cr_assert(v >= 0 && v <= 999);
        hot += v < 200;
    }
    cr_assert_float_eq((double)hot / n, 0.8, 0.005);
}

Test(gen_sequential, counts_through_its_range_and_wraps)
{
    _Atomic int64_t c = 0;
    gen_rng_t r;
    gen_num_t g;
    gen_rng_seed(&r, 6);
    gen_sequential(&g, &c, 5, 7);
    int64_t want[] = {5, 6, 7, 5, 6};
    for (int i = 0; i < 5; i++) cr_assert_eq(gen_next_long(&g, &r), want[i]);
}

Test(gen_exponential, puts_the_percentile_within_the_range)
{
    gen_rng_t r;
    gen_num_t g;
    gen_rng_seed(&r, 7);
    gen_exponential(&g, 95, 1000);
    const int n = 200000;
    uint64_t within = 0;
    for (int i = 0; i < n; i++) within += gen_next_long(&g, &r) < 1000;
    cr_assert_float_eq((double)within / n, 0.95, 0.004);
}

Test(gen_histogram, draws_block_multiples_by_bucket_weight)
{
    static const int64_t bucket[] = {0, 3, 1};
    gen_rng_t r;
    gen_num_t g;
    gen_rng_seed(&r, 8);
    gen_histogram(&g, 10, bucket, 3);
    uint64_t c10 = 0, c20 = 0, c30 = 0;
    const int n = 100000;
    for (int i = 0; i < n; i++) {
        int64_t v = gen_next_long(&g, &r);
        c10 += v == 10, c20 += v == 20, c30 += v == 30;
    }
    /* HistogramGenerator: number in [0, 4); 0 -> 10 (bucket 0 leaves it at 0), 1..3 -> 20 */
    cr_assert_eq(c30, 0);
    cr_assert_float_eq((double)c10 / n, 0.25, 0.01);
    cr_assert_float_eq((double)c20 / n, 0.75, 0.01);
}

Test(gen_discrete, chooses_by_weight)
{
    gen_discrete_t d;
    gen_rng_t r;
    gen_rng_seed(&r, 9);
    gen_discrete_init(&d);
    cr_assert_eq(gen_discrete_next(&d, &r), -1);
    gen_discrete_add(&d, 0.95, 7);
    gen_discrete_add(&d, 0.05, 8);
    const int n = 100000;
    uint64_t eight = 0;
    for (int i = 0; i < n; i++) eight += gen_discrete_next(&d, &r) == 8;
    cr_assert_float_eq((double)eight / n, 0.05, 0.004);
}

Test(gen_acked, moves_its_limit_only_past_acknowledged_values)
{
    gen_acked_t a;
    cr_assert_eq(gen_acked_init(&a, 10), 0);
    cr_assert_eq(gen_acked_last(&a), 9);
    int64_t x = gen_acked_next(&a), y = gen_acked_next(&a);
    cr_assert_eq(x, 10);
    cr_assert_eq(y, 11);
    cr_assert_eq(gen_acked_ack(&a, y), 0);
    cr_assert_eq(gen_acked_last(&a), 9, "10 is still being inserted");
    cr_assert_eq(gen_acked_ack(&a, x), 0);
    cr_assert_eq(gen_acked_last(&a), 11);
    /* while another thread holds the lock, acknowledgements only mark their slots */
    pthread_mutex_lock(&a.lock);
    cr_assert_eq(gen_acked_ack(&a, 13), 0);
    cr_assert_eq(gen_acked_last(&a), 11);
    cr_assert_eq(gen_acked_ack(&a, 13 + GEN_ACK_WINDOW), -EOVERFLOW, "its slot is taken");
    pthread_mutex_unlock(&a.lock);
    gen_acked_deinit(&a);
}

Test(gen_rng, draws_doubles_in_the_unit_interval_and_bounded_ints)
{
    gen_rng_t r;
    gen_rng_seed(&r, 10);
    for (int i = 0; i < 100000; i++) {
        double d = gen_rng_double(&r);
        cr_assert(d >= 0 && d < 1);
        int32_t v = gen_rng_int_bound(&r, 7);
        cr_assert(v >= 0 && v < 7);
    }
}

Test(core_random_bytes, are_printable_ascii_as_randombyteiterator_makes_them)
{
    gen_rng_t r;
    gen_rng_seed(&r, 11);
    char buf[1003];
    int seen[128] = {0};
    for (int k = 0; k < 50; k++) {
        core_random_bytes(&r, buf, sizeof buf);
        for (size_t i = 0; i < sizeof buf; i++) {
            unsigned char c = (unsigned char)buf[i];
            cr_assert(c >= 32 && c <= 127, "byte %zu is %d", i, c);
            seen[c] = 1;
            /* the first of each 6 bytes takes 5 random bits: ' ' .. '?' */
            if (i % 6 == 0 || i % 6 == 3) cr_assert(c <= 32 + 31);
        }
    }
    cr_assert(seen[127] && seen[32], "the whole range occurs");
}

Test(core_deterministic_value, builds_what_dataintegrity_expects)
{
    char out[128];
    core_deterministic_value("user1", 5, "field0", 6, 40, out);
    cr_assert_eq(memcmp(out, "user1:field0:-1268391216:957204686:-1707", 40), 0, "%.40s", out);
    core_deterministic_value("user1", 5, "field0", 6, 5, out);
    cr_assert_eq(memcmp(out, "user1", 5), 0);
    const char *want = "user6284781860667377211:field9:-56807598:-1100440855:1189962510:701512652:"
                       "-166179663:2032990533:2915";
    core_deterministic_value("user6284781860667377211", 23, "field9", 6, 100, out);
    cr_assert_eq(memcmp(out, want, 100), 0, "%.100s", out);
}
