/* test_writer.c - resp/writer.c: the exact bytes of every reply type in RESP2 and RESP3,
 * integer and double formatting edge cases, and deferred aggregate headers. */
#include "resp/resp.h"

#include "common/buf.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static buf_t B;

static void setup(void)
{
    buf_init(&B);
}

static void teardown(void)
{
    buf_deinit(&B);
}

TestSuite(resp_writer, .init = setup, .fini = teardown);

/* Checks that B holds exactly want[0..n) (NUL-terminated after it), then empties B. */
static void expect_n(const char *want, size_t n)
{
    cr_assert_eq(B.len, n, "got %zu bytes '%.*s', want %zu bytes '%.*s'", B.len, (int)B.len,
                 B.data ? B.data : "", n, (int)n, want);
    cr_assert(memcmp(B.data, want, n) == 0, "got '%.*s', want '%.*s'", (int)B.len, B.data, (int)n,
              want);
    cr_assert_eq(B.data[B.len], '\0');
    buf_clear(&B);
}

#define EXPECT(lit) expect_n(lit, sizeof(lit) - 1)

Test(resp_writer, simple_string_is_a_plus_line)
{
    resp_w_simple(&B, "OK", 2);
    EXPECT("+OK\r\n");
    resp_w_simple(&B, "", 0);
    EXPECT("+\r\n");
}

Test(resp_writer, error_keeps_its_prefix_and_turns_newlines_into_spaces)
{
    resp_w_error(&B, "ERR unknown command", 19);
    EXPECT("-ERR unknown command\r\n");
    resp_w_error(&B, "WRONGTYPE a\r\nb\nc\r", 17);
    EXPECT("-WRONGTYPE a  b c \r\n");
}

Test(resp_writer, integers_cover_the_whole_range)
{
    static const struct {
        long long v;
        const char *s;
    } cases[] = {
        {0, ":0\r\n"},
        {9, ":9\r\n"},
        {10, ":10\r\n"},
        {99, ":99\r\n"},
        {100, ":100\r\n"},
        {-1, ":-1\r\n"},
        {-10, ":-10\r\n"},
        {1234567890123LL, ":1234567890123\r\n"},
        {LLONG_MAX, ":9223372036854775807\r\n"},
        {LLONG_MIN, ":-9223372036854775808\r\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        resp_w_int(&B, cases[i].v);
        expect_n(cases[i].s, strlen(cases[i].s));
    }
}

Test(resp_writer, integers_match_printf_across_magnitudes)
{
    char want[32];
    for (long long v = 1; v > 0 && v < LLONG_MAX / 3; v = v * 3 + 1) {
        long long vs[2] = {v, -v};
        for (int k = 0; k < 2; k++) {
            int n = snprintf(want, sizeof want, ":%lld\r\n", vs[k]);
            resp_w_int(&B, vs[k]);
            expect_n(want, (size_t)n);
        }
    }
}

Test(resp_writer, bulk_string_is_binary_safe)
{
    resp_w_bulk(&B, "foobar", 6);
    EXPECT("$6\r\nfoobar\r\n");
    resp_w_bulk(&B, "", 0);
    EXPECT("$0\r\n\r\n");
    resp_w_bulk(&B, "a\r\n\0b", 5);
    EXPECT("$5\r\na\r\n\0b\r\n");
    char big[1000];
    memset(big, 'x', sizeof big);
    resp_w_bulk(&B, big, sizeof big);
    cr_assert_eq(B.len, 7 + 1000 + 2);
    cr_assert(memcmp(B.data, "$1000\r\nxx", 9) == 0);
    cr_assert(memcmp(B.data + B.len - 3, "x\r\n", 3) == 0);
}

Test(resp_writer, nulls_depend_on_the_protocol)
{
    resp_w_null(&B, 2);
    EXPECT("$-1\r\n");
    resp_w_null(&B, 3);
    EXPECT("_\r\n");
    resp_w_null_array(&B, 2);
    EXPECT("*-1\r\n");
    resp_w_null_array(&B, 3);
    EXPECT("_\r\n");
}

Test(resp_writer, aggregates_keep_their_type_in_resp3)
{
    resp_w_agg(&B, 3, '*', 2);
    EXPECT("*2\r\n");
    resp_w_agg(&B, 3, '%', 2);
    EXPECT("%2\r\n");
    resp_w_agg(&B, 3, '~', 12);
    EXPECT("~12\r\n");
    resp_w_agg(&B, 3, '>', 3);
    EXPECT(">3\r\n");
    resp_w_agg(&B, 3, '*', 0);
    EXPECT("*0\r\n");
}

Test(resp_writer, aggregates_become_arrays_in_resp2)
{
    resp_w_agg(&B, 2, '*', 2);
    EXPECT("*2\r\n");
    resp_w_agg(&B, 2, '%', 2);
    EXPECT("*4\r\n");
    resp_w_agg(&B, 2, '~', 12);
    EXPECT("*12\r\n");
    resp_w_agg(&B, 2, '>', 3);
    EXPECT("*3\r\n");
    resp_w_agg(&B, 2, '%', 0);
    EXPECT("*0\r\n");
}

Test(resp_writer, doubles_print_as_redis_does)
{
    resp_w_double(&B, 2, 1.5);
    EXPECT("$3\r\n1.5\r\n");
    resp_w_double(&B, 3, 1.5);
    EXPECT(",1.5\r\n");
    resp_w_double(&B, 2, 0.1);
    EXPECT("$19\r\n0.10000000000000001\r\n");
    resp_w_double(&B, 3, 0.1);
    EXPECT(",0.10000000000000001\r\n");
    resp_w_double(&B, 3, 3.0);
    EXPECT(",3\r\n");
    resp_w_double(&B, 3, -0.0);
    EXPECT(",-0\r\n");
    resp_w_double(&B, 3, 1e300);
    EXPECT(",1.0000000000000001e+300\r\n");
    resp_w_double(&B, 2, -2.5e-10);
    EXPECT("$23\r\n-2.5000000000000002e-10\r\n");
}

Test(resp_writer, infinities_and_nan_are_spelled_out)
{
    resp_w_double(&B, 2, INFINITY);
    EXPECT("$3\r\ninf\r\n");
    resp_w_double(&B, 2, -INFINITY);
    EXPECT("$4\r\n-inf\r\n");
    resp_w_double(&B, 3, INFINITY);
    EXPECT(",inf\r\n");
    resp_w_double(&B, 3, -INFINITY);
    EXPECT(",-inf\r\n");
    resp_w_double(&B, 3, NAN);
    EXPECT(",nan\r\n");
    resp_w_double(&B, 3, -NAN);
    EXPECT(",nan\r\n");
    resp_w_double(&B, 2, NAN);
    EXPECT("$3\r\nnan\r\n");
}

Test(resp_writer, booleans_are_integers_in_resp2)
{
    resp_w_bool(&B, 3, 1);
    EXPECT("#t\r\n");
    resp_w_bool(&B, 3, 0);
    EXPECT("#f\r\n");
    resp_w_bool(&B, 2, 7);
    EXPECT(":1\r\n");
    resp_w_bool(&B, 2, 0);
    EXPECT(":0\r\n");
}

Test(resp_writer, verbatim_string_carries_its_format_in_resp3_only)
{
    resp_w_verbatim(&B, 3, "txt", "Some string", 11);
    EXPECT("=15\r\ntxt:Some string\r\n");
    resp_w_verbatim(&B, 3, "mkd", "", 0);
    EXPECT("=4\r\nmkd:\r\n");
    resp_w_verbatim(&B, 2, "txt", "Some string", 11);
    EXPECT("$11\r\nSome string\r\n");
}

Test(resp_writer, deferred_aggregate_header_lands_before_its_elements)
{
    resp_w_simple(&B, "x", 1);
    size_t off = resp_w_agg_defer(&B);
    resp_w_bulk(&B, "a", 1);
    resp_w_int(&B, 5);
    resp_w_agg_finish(&B, off, 2, '*', 2);
    EXPECT("+x\r\n*2\r\n$1\r\na\r\n:5\r\n");

    off = resp_w_agg_defer(&B);
    resp_w_bulk(&B, "k", 1);
    resp_w_bulk(&B, "v", 1);
    resp_w_agg_finish(&B, off, 2, '%', 1);
    EXPECT("*2\r\n$1\r\nk\r\n$1\r\nv\r\n");

    off = resp_w_agg_defer(&B);
    resp_w_bulk(&B, "k", 1);
    resp_w_bulk(&B, "v", 1);
    resp_w_agg_finish(&B, off, 3, '%', 1);
    EXPECT("%1\r\n$1\r\nk\r\n$1\r\nv\r\n");
}

Test(resp_writer, deferred_aggregates_nest_and_may_be_empty)
{
    size_t outer = resp_w_agg_defer(&B);
    size_t inner = resp_w_agg_defer(&B);
    resp_w_agg_finish(&B, inner, 3, '~', 0);
    resp_w_int(&B, 1);
    resp_w_agg_finish(&B, outer, 3, '*', 2);
    EXPECT("*2\r\n~0\r\n:1\r\n");
    size_t off = resp_w_agg_defer(&B);
    for (int i = 0; i < 123; i++) resp_w_int(&B, i);
    resp_w_agg_finish(&B, off, 2, '*', 123);
    cr_assert(memcmp(B.data, "*123\r\n:0\r\n:1\r\n", 14) == 0);
}

Test(resp_writer, replies_append_to_what_is_there)
{
    resp_w_agg(&B, 2, '*', 3);
    resp_w_bulk(&B, "GET", 3);
    resp_w_null(&B, 2);
    resp_w_int(&B, -42);
    EXPECT("*3\r\n$3\r\nGET\r\n$-1\r\n:-42\r\n");
}
