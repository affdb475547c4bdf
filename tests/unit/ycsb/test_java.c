/* Tests for ycsb/java.c: the Java behaviours YCSB's keys, scores and report depend on. The
 * expected values were printed by OpenJDK 17 (String.hashCode, String.valueOf(double),
 * DecimalFormat("#.##"), HashSet and ConcurrentHashMap iteration). */
#include "java.h"

#include "tests/leak.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int32_t h(const char *s)
{
    return java_string_hash(s, strlen(s));
}

Test(java_string_hash, matches_java_for_ycsb_keys)
{
    cr_assert_eq(h("user6284781860667377211"), -594971599);
    cr_assert_eq(h("user8517097267634966620"), -314243905);
    cr_assert_eq(h("user1820151046732198393"), -338223234);
    cr_assert_eq(h(""), 0);
    cr_assert_eq(h("hello"), 99162322);
    cr_assert_eq(h("READ-MODIFY-WRITE"), -356482109);
}

Test(java_string_hash, counts_utf16_code_units)
{
    cr_assert_eq(h("\xC3\xA9t\xC3\xA9"), 227742);   /* "été" */
    cr_assert_eq(h("\xF0\x9F\x98\x80x"), 54959989); /* U+1F600 is a surrogate pair */
    cr_assert_eq(h("\xFF"), 0xFFFD, "a malformed byte counts as U+FFFD");
}

Test(java_string_hash, continues_a_prefix_hash)
{
    int32_t a = h("user1:");
    cr_assert_eq(java_string_hash_more(a, "field0", 6), h("user1:field0"));
}

static void dbl(double d, const char *want)
{
    char out[JAVA_DOUBLE_STR_MAX];
    size_t n = java_double_str(d, out);
    cr_assert_str_eq(out, want, "%.17g", d);
    cr_assert_eq(n, strlen(want));
}

Test(java_double_str, writes_scores_as_jedis_sends_them)
{
    dbl(-594971599.0, "-5.94971599E8");
    dbl(1.0E7, "1.0E7");
    dbl(123456.0, "123456.0");
    dbl(2147483647.0, "2.147483647E9");
    dbl(-2147483648.0, "-2.147483648E9");
    dbl(9999999.0, "9999999.0");
    dbl(1234567.0, "1234567.0");
    dbl(100.0, "100.0");
}

Test(java_double_str, writes_fractions_and_extremes_as_java_does)
{
    dbl(0.001, "0.001");
    dbl(0.00123, "0.00123");
    dbl(1.0E-4, "1.0E-4");
    dbl(0.1, "0.1");
    dbl(0.1 + 0.2, "0.30000000000000004");
    dbl(1.0 / 3, "0.3333333333333333");
    dbl(2.0 / 3, "0.6666666666666666");
    dbl(1e21, "1.0E21");
    dbl(123456789.0, "1.23456789E8");
    dbl(4.9e-324, "4.9E-324");
    dbl(1e-323, "1.0E-323");
    dbl(1.7976931348623157e308, "1.7976931348623157E308");
    dbl(1000.0 * 1000 / 81, "12345.67901234568");
    dbl(1000.0 * 12345 / 7, "1763571.4285714286");
    dbl(9999999.999999998, "9999999.999999998");
    dbl(1e7 - 0.5, "9999999.5");
    dbl(NAN, "NaN");
    dbl(INFINITY, "Infinity");
    dbl(-INFINITY, "-Infinity");
    dbl(-0.0, "-0.0");
    dbl(0.0, "0.0");
}

static void fmt(double d, const char *want)
{
    char out[JAVA_DOUBLE_STR_MAX];
    java_decimal2(d, out);
    cr_assert_str_eq(out, want, "%.17g", d);
}

Test(java_decimal2, rounds_half_even_on_the_binary_value)
{
    fmt(1234.5678, "1234.57");
    fmt(0.125, "0.12");
    fmt(0.375, "0.38");
    fmt(0.005, "0.01"); /* the double lies above the tie */
    fmt(0.015, "0.01"); /* and this one below */
    fmt(1.005, "1");
    fmt(2.0, "2");
    fmt(2.5, "2.5");
    fmt(0, "0");
    fmt(-0.001, "-0");
    fmt(12345678.905, "12345678.9");
    fmt(34482.758620689655, "34482.76");
    fmt(NAN, "NaN");
    fmt(INFINITY, "\xE2\x88\x9E");
}

Test(java_casts, saturate_and_send_nan_to_zero)
{
    cr_assert_eq(java_d2i(1e10), INT32_MAX);
    cr_assert_eq(java_d2i(-1e20), INT32_MIN);
    cr_assert_eq(java_d2l(NAN), 0);
    cr_assert_eq(java_d2l(1e30), INT64_MAX);
    cr_assert_eq(java_d2i(-2.9), -2);
    cr_assert_eq(java_labs(INT64_MIN), INT64_MIN);
    cr_assert_eq(java_labs(-5), 5);
}

/* The names in Java's iteration order, given in insertion order. */
static void order_of(const char *const *names, size_t n, size_t cap, const char *const *want)
{
    int32_t hash[128];
    size_t order[128];
    for (size_t i = 0; i < n; i++) hash[i] = h(names[i]);
    java_hash_order(hash, n, cap, order);
    for (size_t i = 0; i < n; i++) cr_assert_str_eq(names[order[i]], want[i], "position %zu", i);
}

Test(java_hash_order, iterates_a_hashset_of_field_names_as_java)
{
    const char *f10[] = {"field0", "field1", "field2", "field3", "field4",
                         "field5", "field6", "field7", "field8", "field9"};
    const char *w10[] = {"field1", "field0", "field7", "field6", "field9",
                         "field8", "field3", "field2", "field5", "field4"};
    cr_assert_eq(java_hashset_capacity(10), 16);
    order_of(f10, 10, java_hashset_capacity(10), w10);

    char names[20][8];
    const char *f20[20];
    for (int i = 0; i < 20; i++) {
        snprintf(names[i], sizeof names[i], "field%d", i);
        f20[i] = names[i];
    }
    const char *w20[] = {"field19", "field17", "field18", "field11", "field12", "field1", "field0",
                         "field10", "field15", "field16", "field13", "field14", "field7", "field6",
                         "field9",  "field8",  "field3",  "field2",  "field5",  "field4"};
    order_of(f20, 20, java_hashset_capacity(20), w20);
}

Test(java_hash_order, iterates_ycsb_measurement_names_as_concurrenthashmap)
{
    const char *in[] = {"READ", "UPDATE", "CLEANUP"}, *want[] = {"READ", "CLEANUP", "UPDATE"};
    order_of(in, 3, java_chm_capacity(3), want);
    const char *in2[] = {
        "INSERT", "READ", "SCAN", "CLEANUP", "READ-FAILED", "UPDATE", "READ-MODIFY-WRITE",
        "VERIFY"};
    const char *want2[] = {
        "READ", "READ-MODIFY-WRITE", "CLEANUP", "INSERT", "READ-FAILED", "UPDATE", "VERIFY",
        "SCAN"};
    order_of(in2, 8, java_chm_capacity(8), want2);
}

Test(java_capacity, follows_javas_resize_rules)
{
    cr_assert_eq(java_hashmap_capacity(12), 16);
    cr_assert_eq(java_hashmap_capacity(13), 32);
    cr_assert_eq(java_hashset_capacity(100), 256);
    cr_assert_eq(java_chm_capacity(11), 16);
    cr_assert_eq(java_chm_capacity(12), 32);
}

Test(java_hash_order, iterates_a_larger_hashset_as_java)
{
    char names[100][8];
    const char *in[100];
    for (int i = 0; i < 100; i++) {
        snprintf(names[i], sizeof names[i], "f%d", i);
        in[i] = names[i];
    }
    static const int want[100] = {
        94, 93, 96, 95, 10, 98, 97, 12, 11, 99, 14, 13, 16, 15, 18, 17, 19, 21, 20, 23,
        22, 25, 24, 27, 26, 29, 28, 30, 32, 31, 34, 33, 36, 35, 38, 37, 39, 41, 40, 43,
        42, 45, 44, 47, 46, 49, 48, 50, 52, 51, 54, 53, 56, 55, 58, 57, 0,  1,  59, 2,
        3,  4,  5,  6,  7,  8,  9,  61, 60, 63, 62, 65, 64, 67, 66, 69, 68, 70, 72, 71,
        74, 73, 76, 75, 78, 77, 79, 81, 80, 83, 82, 85, 84, 87, 86, 89, 88, 90, 92, 91};
    const char *w[100];
    for (int i = 0; i < 100; i++) w[i] = names[want[i]];
    order_of(in, 100, java_hashset_capacity(100), w);
}
