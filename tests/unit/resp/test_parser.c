/* test_parser.c - resp/parser.c: requests split at every byte with the buffer moved between
 * reads, binary bulks, inline quoting, each protocol error, limits, memory bounds on hostile
 * declarations, and fuzzing: random bytes must never crash or read out of bounds (run under
 * ASan), and random streams must parse exactly as a direct model of Redis 7.0's read path
 * (networking.c, sdssplitargs, string2ll) parses them, for any split into reads. */
#include "resp/resp.h"

#include "common/alloc.h"
#include "common/buf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define S(lit) lit, sizeof(lit) - 1

static resp_parser_t P;
static char *HB; /* heap copy of the last input, exactly sized so ASan sees overreads */

static void setup(void)
{
    resp_parser_init(&P);
}

static void teardown(void)
{
    resp_parser_deinit(&P);
    free(HB);
    HB = NULL;
}

TestSuite(resp_parser, .init = setup, .fini = teardown);

/* Parses s[0..n) from a fresh exact-size heap block (the previous one is freed, as a realloc
 * that moves would). Views from a RESP_OK stay valid until the next call. */
static int parse(const char *s, size_t n, size_t *consumed)
{
    free(HB);
    HB = malloc(n ? n : 1);
    if (n) memcpy(HB, s, n);
    return resp_parse(&P, HB, n, consumed);
}

static int parse_str(const char *s, size_t *consumed)
{
    return parse(s, strlen(s), consumed);
}

static void expect_arg(int i, const char *s, size_t n)
{
    cr_assert_lt(i, P.argc);
    cr_assert_eq(P.argv[i].len, n, "argv[%d] has length %zu, want %zu", i, P.argv[i].len, n);
    cr_assert(memcmp(P.argv[i].ptr, s, n) == 0, "argv[%d] is '%.*s', want '%.*s'", i,
              (int)P.argv[i].len, P.argv[i].ptr, (int)n, s);
}

/* Checks argc and each argument against NUL-terminated strings. */
static void expect_args(int argc, ...)
{
    cr_assert_eq(P.argc, argc, "argc is %d, want %d", P.argc, argc);
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc; i++) {
        const char *s = va_arg(ap, const char *);
        expect_arg(i, s, strlen(s));
    }
    va_end(ap);
}

static void expect_error(const char *in, size_t n, const char *msg)
{
    size_t used = 99;
    int rc = parse(in, n, &used);
    cr_assert_eq(rc, RESP_ERROR, "'%.*s' gave %d, want an error", (int)n, in, rc);
    cr_assert_eq(used, 0);
    cr_assert_str_eq(P.error, msg);
}

/* ---- transcripts: what a connection sees, for comparing runs ---- */

/* Appends a printable form of an argument: bytes outside '!'..'~' and '\\' as \xHH. */
static void put_arg(buf_t *t, const char *s, size_t n)
{
    buf_push(t, ' ');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c > ' ' && c < 127 && c != '\\')
            buf_push(t, (char)c);
        else
            buf_printf(t, "\\x%02x", c);
    }
}

typedef struct limits {
    size_t max_bulk, max_args, max_inline;
} limits_t;

/* Runs data through a fresh parser as a server would: each read (chunk ends at cuts[], then at
 * len) is appended to a query buffer moved to a new exact-size block, requests are parsed until
 * RESP_AGAIN, and consumed bytes are dropped. Returns the transcript (caller frees). */
static char *drive(const limits_t *lim, const char *data, size_t len, const size_t *cuts,
                   size_t ncuts)
{
    resp_parser_t p;
    resp_parser_init(&p);
    if (lim) {
        p.max_bulk = lim->max_bulk;
        p.max_args = lim->max_args;
        p.max_inline = lim->max_inline;
    }
    buf_t t;
    buf_init(&t);
    buf_append(&t, "", 0);
    char *q = NULL;
    size_t qlen = 0, at = 0;
    int dead = 0;
    for (size_t c = 0; c <= ncuts && !dead; c++) {
        size_t end = c < ncuts ? cuts[c] : len;
        cr_assert(end >= at && end <= len);
        char *nq = malloc(qlen + (end - at) ? qlen + (end - at) : 1);
        if (qlen) memcpy(nq, q, qlen);
        if (end > at) memcpy(nq + qlen, data + at, end - at);
        free(q);
        q = nq;
        qlen += end - at;
        at = end;
        for (;;) {
            size_t used = 12345;
            int rc = resp_parse(&p, q, qlen, &used);
            if (rc == RESP_AGAIN) {
                cr_assert_eq(used, 0);
                break;
            }
            if (rc == RESP_ERROR) {
                cr_assert_eq(used, 0);
                buf_append_str(&t, "ERROR");
                put_arg(&t, p.error, strlen(p.error));
                buf_push(&t, '\n');
                dead = 1;
                break;
            }
            cr_assert(used > 0 && used <= qlen, "consumed %zu of %zu", used, qlen);
            if (rc == RESP_OK) {
                cr_assert_gt(p.argc, 0);
                buf_append_str(&t, "OK");
                for (int i = 0; i < p.argc; i++) {
                    const char *a = p.argv[i].ptr;
                    size_t n = p.argv[i].len;
                    int in_q = a >= q && a + n <= q + used;
                    int in_copy = a >= p.inline_copy && a + n <= p.inline_copy + p.inline_cap;
                    cr_assert(in_q || in_copy, "argv[%d] points outside its buffers", i);
                    put_arg(&t, a, n);
                }
                buf_push(&t, '\n');
            } else {
                cr_assert_eq(rc, RESP_EMPTY);
                buf_append_str(&t, "EMPTY\n");
            }
            memmove(q, q + used, qlen - used);
            qlen -= used;
        }
    }
    if (!dead && qlen) buf_append_str(&t, "PENDING\n");
    free(q);
    resp_parser_deinit(&p);
    return t.data;
}

static char *drive_once(const char *data, size_t len)
{
    return drive(NULL, data, len, NULL, 0);
}

/* ---- multibulk ---- */

Test(resp_parser, multibulk_command_becomes_views_into_the_buffer)
{
    size_t used;
    const char in[] = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n";
    cr_assert_eq(parse(S(in), &used), RESP_OK);
    cr_assert_eq(used, sizeof in - 1);
    expect_args(3, "SET", "key", "value");
    cr_assert_eq(P.argv[0].ptr, HB + 8);
    cr_assert_eq(P.argv[2].ptr, HB + sizeof in - 1 - 7);
}

Test(resp_parser, pipelined_commands_come_out_one_at_a_time)
{
    size_t used;
    const char in[] = "*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
    cr_assert_eq(parse(S(in), &used), RESP_OK);
    cr_assert_eq(used, 14);
    expect_args(1, "PING");
    cr_assert_eq(parse(in + used, sizeof in - 1 - used, &used), RESP_OK);
    cr_assert_eq(used, sizeof in - 1 - 14);
    expect_args(2, "GET", "k");
}

Test(resp_parser, bulk_split_across_reads)
{
    size_t used;
    cr_assert_eq(parse_str("*2\r\n$3\r\nGET\r\n$5\r\nhel", &used), RESP_AGAIN);
    cr_assert_eq(used, 0);
    cr_assert_eq(parse_str("*2\r\n$3\r\nGET\r\n$5\r\nhello\r", &used), RESP_AGAIN);
    cr_assert_eq(parse_str("*2\r\n$3\r\nGET\r\n$5\r\nhello\r\n", &used), RESP_OK);
    cr_assert_eq(used, 24);
    expect_args(2, "GET", "hello");
}

Test(resp_parser, header_line_waits_for_the_byte_after_its_cr)
{
    size_t used;
    cr_assert_eq(parse_str("*1\r", &used), RESP_AGAIN);
    cr_assert_eq(parse_str("*1\r\n$3\r", &used), RESP_AGAIN);
    cr_assert_eq(parse_str("*1\r\n$3\r\nabc\r\n", &used), RESP_OK);
    expect_args(1, "abc");
}

Test(resp_parser, binary_bulk_keeps_crlf_and_nul_bytes)
{
    size_t used;
    const char in[] = "*2\r\n$8\r\na\r\nb\0c\r\n\r\n$0\r\n\r\n";
    cr_assert_eq(parse(S(in), &used), RESP_OK);
    cr_assert_eq(used, sizeof in - 1);
    cr_assert_eq(P.argc, 2);
    expect_arg(0, "a\r\nb\0c\r\n", 8);
    expect_arg(1, "", 0);
}

Test(resp_parser, bytes_after_a_line_cr_and_a_payload_go_unchecked_as_in_redis)
{
    size_t used;
    cr_assert_eq(parse_str("*1\rX$3\rYfooZZ", &used), RESP_OK);
    cr_assert_eq(used, 13);
    expect_args(1, "foo");
}

Test(resp_parser, zero_and_negative_counts_are_empty_requests)
{
    size_t used;
    cr_assert_eq(parse_str("*0\r\n*1\r\n", &used), RESP_EMPTY);
    cr_assert_eq(used, 4);
    cr_assert_eq(parse_str("*-1\r\n", &used), RESP_EMPTY);
    cr_assert_eq(used, 5);
    cr_assert_eq(parse_str("*-9223372036854775808\r\n", &used), RESP_EMPTY);
    cr_assert_eq(used, 23);
}

Test(resp_parser, line_search_resumes_where_it_stopped)
{
    size_t used;
    cr_assert_eq(parse_str("*12", &used), RESP_AGAIN);
    cr_assert_eq(P.scan, 3);
    cr_assert_eq(parse_str("*12\r", &used), RESP_AGAIN);
    cr_assert_eq(P.scan, 3);
    resp_parser_reset(&P);
    cr_assert_eq(parse_str("GET some", &used), RESP_AGAIN);
    cr_assert_eq(P.scan, 8);
}

Test(resp_parser, reset_forgets_a_partial_request)
{
    size_t used;
    cr_assert_eq(parse_str("*2\r\n$3\r\nGET\r\n", &used), RESP_AGAIN);
    resp_parser_reset(&P);
    cr_assert_eq(parse_str("PING\r\n", &used), RESP_OK);
    expect_args(1, "PING");
}

Test(resp_parser, empty_buffer_needs_more)
{
    size_t used = 7;
    cr_assert_eq(resp_parse(&P, NULL, 0, &used), RESP_AGAIN);
    cr_assert_eq(used, 0);
}

/* ---- inline ---- */

Test(resp_parser, inline_command_splits_on_whitespace)
{
    size_t used;
    cr_assert_eq(parse_str("PING\r\n", &used), RESP_OK);
    cr_assert_eq(used, 6);
    expect_args(1, "PING");
    cr_assert_eq(parse_str(" SET \t a   b\nGET", &used), RESP_OK);
    cr_assert_eq(used, 13);
    expect_args(3, "SET", "a", "b");
    cr_assert(P.argv[0].ptr >= P.inline_copy && P.argv[0].ptr < P.inline_copy + P.inline_cap);
}

Test(resp_parser, inline_quotes_and_escapes_unescape_as_sdssplitargs)
{
    size_t used;
    cr_assert_eq(parse_str("SET \"a b\" 'c d' \"\" ''\r\n", &used), RESP_OK);
    expect_args(5, "SET", "a b", "c d", "", "");
    cr_assert_eq(parse_str("\"\\n\\r\\t\\b\\a\\\\\\\"\\x41\\x4a\\xzz\\q\"\n", &used), RESP_OK);
    expect_args(1, "\n\r\t\b\a\\\"AJxzzq");
    cr_assert_eq(parse_str("'it\\'s' 'a\\nb\"'\n", &used), RESP_OK);
    expect_args(2, "it's", "a\\nb\"");
    cr_assert_eq(parse_str("foo\"bar\"  x'y'\n", &used), RESP_OK);
    expect_args(2, "foobar", "xy");
    cr_assert_eq(parse_str("\"\\x00\\xff\"\n", &used), RESP_OK);
    cr_assert_eq(P.argc, 1);
    expect_arg(0, "\0\xff", 2);
}

Test(resp_parser, inline_blanks_follow_redis_exactly)
{
    size_t used;
    cr_assert_eq(parse_str("a\rb\n", &used), RESP_OK); /* a lone \r splits */
    expect_args(2, "a", "b");
    cr_assert_eq(parse_str("\va\f\n", &used), RESP_OK); /* \v \f skip between tokens */
    expect_args(1, "a\f");                              /* ... but do not end one */
    cr_assert_eq(parse_str("\"a\"\vb\n", &used), RESP_OK);
    expect_args(2, "a", "b");
    cr_assert_eq(parse_str("x\r\r\n", &used), RESP_OK);
    expect_args(1, "x");
}

Test(resp_parser, blank_inline_lines_are_empty_requests)
{
    size_t used;
    cr_assert_eq(parse_str("\r\nPING\r\n", &used), RESP_EMPTY);
    cr_assert_eq(used, 2);
    cr_assert_eq(parse_str("\n", &used), RESP_EMPTY);
    cr_assert_eq(used, 1);
    cr_assert_eq(parse_str("  \t \v\r\n", &used), RESP_EMPTY);
    cr_assert_eq(used, 7);
}

Test(resp_parser, inline_waits_for_its_newline)
{
    size_t used;
    cr_assert_eq(parse_str("GET key\r", &used), RESP_AGAIN);
    cr_assert_eq(parse_str("GET key\r\n", &used), RESP_OK);
    expect_args(2, "GET", "key");
}

Test(resp_parser, nul_before_a_line_end_hides_it_as_strchr_does_in_redis)
{
    size_t used;
    P.max_inline = 16;
    cr_assert_eq(parse(S("GET a\0b\r\n"), &used), RESP_AGAIN);
    cr_assert_eq(parse(S("GET a\0b\r\nPING\r\n"), &used), RESP_AGAIN);
    expect_error(S("GET a\0b\r\nPING\r\nPING\r\n"), "Protocol error: too big inline request");
    resp_parser_reset(&P);
    cr_assert_eq(parse(S("*1\0\r\n"), &used), RESP_AGAIN);
    resp_parser_reset(&P);
    cr_assert_eq(parse(S("*1\r\n$1\0\r\na\r\n"), &used), RESP_AGAIN);
}

/* ---- errors ---- */

Test(resp_parser, bad_multibulk_counts_are_invalid)
{
    const char *msg = "Protocol error: invalid multibulk length";
    expect_error(S("*abc\r\n"), msg);
    expect_error(S("*\r\n"), msg);
    expect_error(S("*01\r\n"), msg);
    expect_error(S("*+1\r\n"), msg);
    expect_error(S("*-0\r\n"), msg);
    expect_error(S("*-\r\n"), msg);
    expect_error(S("*1 \r\n"), msg);
    expect_error(S("*1\n\r\n"), msg);
    expect_error(S("*1048577\r\n"), msg);
    expect_error(S("*-9223372036854775809\r\n"), msg);
    expect_error(S("*100000000000000000000\r\n"), msg);
    P.max_args = SIZE_MAX;
    expect_error(S("*2147483648\r\n"), msg);
}

Test(resp_parser, missing_dollar_names_the_byte_it_got)
{
    expect_error(S("*1\r\nX\r\n"), "Protocol error: expected '$', got 'X'");
    expect_error(S("*2\r\n$1\r\na\r\n:1\r\n"), "Protocol error: expected '$', got ':'");
    expect_error(S("*1\r\n\r\n"), "Protocol error: expected '$', got ' '");
    expect_error(S("*1\r\n\n\r\n"), "Protocol error: expected '$', got ' '");
}

Test(resp_parser, bad_bulk_lengths_are_invalid)
{
    const char *msg = "Protocol error: invalid bulk length";
    expect_error(S("*1\r\n$-1\r\n"), msg);
    expect_error(S("*1\r\n$\r\n"), msg);
    expect_error(S("*1\r\n$abc\r\n"), msg);
    expect_error(S("*1\r\n$03\r\nabc\r\n"), msg);
    expect_error(S("*1\r\n$536870913\r\n"), msg);
    expect_error(S("*1\r\n$9223372036854775807\r\n"), msg);
    expect_error(S("*1\r\n$9223372036854775808\r\n"), msg);
}

Test(resp_parser, long_header_lines_without_cr_are_too_big)
{
    size_t used;
    P.max_inline = 16;
    cr_assert_eq(parse_str("*111111111111111", &used), RESP_AGAIN); /* 16 bytes */
    expect_error(S("*1111111111111111"), "Protocol error: too big mbulk count string");
    resp_parser_reset(&P);
    cr_assert_eq(parse_str("*1\r\n$222222222222222", &used), RESP_AGAIN); /* 16 after *1 */
    expect_error(S("*1\r\n$2222222222222222"), "Protocol error: too big bulk count string");
}

Test(resp_parser, long_lines_at_the_default_limit_are_too_big)
{
    size_t n = 64 * 1024 + 1;
    char *s = malloc(n);
    memset(s, 'a', n);
    expect_error(s, n, "Protocol error: too big inline request");
    resp_parser_reset(&P);
    s[0] = '*';
    expect_error(s, n, "Protocol error: too big mbulk count string");
    resp_parser_reset(&P);
    size_t used;
    cr_assert_eq(parse(s, n - 1, &used), RESP_AGAIN);
    free(s);
}

Test(resp_parser, long_inline_line_is_too_big)
{
    size_t used;
    P.max_inline = 8;
    cr_assert_eq(parse_str("GET abcd", &used), RESP_AGAIN);
    expect_error(S("GET abcde"), "Protocol error: too big inline request");
    resp_parser_reset(&P);
    cr_assert_eq(parse_str("GET abcdefghijk\n", &used), RESP_OK); /* whole line in one read */
}

Test(resp_parser, unbalanced_quotes_are_an_error)
{
    const char *msg = "Protocol error: unbalanced quotes in request";
    expect_error(S("SET \"abc\r\n"), msg);
    expect_error(S("SET 'abc\n"), msg);
    expect_error(S("SET \"a\"b\n"), msg);
    expect_error(S("SET 'a'b\n"), msg);
    expect_error(S("SET \"a\\\"\n"), msg);
}

/* ---- limits and memory ---- */

Test(resp_parser, limits_are_inclusive)
{
    size_t used;
    P.max_args = 3;
    P.max_bulk = 5;
    cr_assert_eq(parse_str("*3\r\n$1\r\na\r\n$5\r\nabcde\r\n$0\r\n\r\n", &used), RESP_OK);
    expect_args(3, "a", "abcde", "");
    expect_error(S("*4\r\n"), "Protocol error: invalid multibulk length");
    expect_error(S("*1\r\n$6\r\n"), "Protocol error: invalid bulk length");
}

Test(resp_parser, huge_declared_count_allocates_only_for_arguments_received)
{
    size_t used;
    size_t before = alloc_used_memory();
    cr_assert_eq(parse_str("*1000000\r\n$1\r\na\r\n$1\r\nb\r\n", &used), RESP_AGAIN);
    cr_assert_leq(P.offs_cap, 16);
    cr_assert_lt(alloc_used_memory() - before, 4096);
}

Test(resp_parser, huge_declared_length_allocates_nothing_and_reports_need)
{
    size_t used;
    size_t before = alloc_used_memory();
    cr_assert_eq(parse_str("*1\r\n$536870912\r\nabc", &used), RESP_AGAIN);
    cr_assert_eq(resp_parser_need(&P), 16 + (size_t)536870912 + 2);
    cr_assert_lt(alloc_used_memory() - before, 4096);
    resp_parser_reset(&P);
    P.max_bulk = (size_t)1 << 40;
    cr_assert_eq(parse_str("*2\r\n$1\r\nx\r\n$1099511627776\r\n", &used), RESP_AGAIN);
    cr_assert_eq(resp_parser_need(&P), 27 + ((size_t)1 << 40) + 2);
    resp_parser_reset(&P);
    expect_error(S("*1\r\n$1099511627777\r\n"), "Protocol error: invalid bulk length");
}

Test(resp_parser, need_is_known_only_for_large_bulks)
{
    size_t used;
    cr_assert_eq(resp_parser_need(&P), 0);
    cr_assert_eq(parse_str("*1\r\n$32767\r\nab", &used), RESP_AGAIN);
    cr_assert_eq(resp_parser_need(&P), 0);
    resp_parser_reset(&P);
    cr_assert_eq(parse_str("*1\r\n$32768\r\nab", &used), RESP_AGAIN);
    cr_assert_eq(resp_parser_need(&P), 12 + 32768 + 2);
}

Test(resp_parser, large_bulk_arrives_in_many_reads)
{
    size_t n = 100000;
    char *in = malloc(n + 64);
    int h = sprintf(in, "*2\r\n$3\r\nSET\r\n$%zu\r\n", n);
    for (size_t i = 0; i < n; i++) in[h + i] = (char)(i * 7);
    memcpy(in + h + n, "\r\n", 2);
    size_t len = (size_t)h + n + 2, used;
    for (size_t k = 1; k < len; k += 997) cr_assert_eq(parse(in, k, &used), RESP_AGAIN);
    cr_assert_eq(resp_parser_need(&P), len);
    cr_assert_eq(parse(in, len, &used), RESP_OK);
    cr_assert_eq(used, len);
    expect_arg(1, in + h, n);
    free(in);
}

Test(resp_parser, many_arguments_parse_and_their_arrays_shrink_afterwards)
{
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "*5000\r\n");
    for (int i = 0; i < 5000; i++)
        buf_printf(&b, "$%d\r\n%d\r\n", i < 10 ? 1 : i < 100 ? 2 : i < 1000 ? 3 : 4, i);
    size_t used;
    cr_assert_eq(parse(b.data, b.len, &used), RESP_OK);
    cr_assert_eq(P.argc, 5000);
    expect_arg(4321, "4321", 4);
    cr_assert_eq(parse_str("*1\r\n$4\r\nPING\r\n", &used), RESP_OK);
    cr_assert_leq(P.offs_cap, 1024);
    buf_deinit(&b);
}

/* ---- every split ---- */

static const char PIPE[] = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n"
                           "\r\n"
                           "*0\r\n"
                           "GET 'key' \"\\x41\\n\"\r\n"
                           "*2\r\n$3\r\nGET\r\n$7\r\na\r\n\0b\r\n\r\n"
                           "*-1\r\n"
                           "PING\n"
                           "*1\r\n$4\r\nPING\r\n"
                           "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n"
                           "*2\r\n$1\r\nx\r\n";

static const char PIPE_WANT[] = "OK SET key value\n"
                                "EMPTY\n"
                                "EMPTY\n"
                                "OK GET key A\\x0a\n"
                                "OK GET a\\x0d\\x0a\\x00b\\x0d\\x0a\n"
                                "EMPTY\n"
                                "OK PING\n"
                                "OK PING\n"
                                "OK ECHO \n"
                                "PENDING\n";

Test(resp_parser, pipelined_stream_parses_as_expected)
{
    char *t = drive_once(S(PIPE));
    cr_assert_str_eq(t, PIPE_WANT);
    xfree(t);
}

Test(resp_parser, every_split_of_a_pipelined_stream_gives_the_same_commands)
{
    size_t len = sizeof PIPE - 1;
    for (size_t k = 0; k <= len; k++) {
        char *t = drive(NULL, PIPE, len, &k, 1);
        cr_assert_str_eq(t, PIPE_WANT, "split at %zu", k);
        xfree(t);
    }
    for (size_t k = 0; k + 7 <= len; k++) {
        size_t cuts[2] = {k, k + 7};
        char *t = drive(NULL, PIPE, len, cuts, 2);
        cr_assert_str_eq(t, PIPE_WANT, "splits at %zu and %zu", k, k + 7);
        xfree(t);
    }
}

Test(resp_parser, growing_prefixes_one_byte_at_a_time_give_the_same_commands)
{
    size_t len = sizeof PIPE - 1;
    size_t cuts[sizeof PIPE];
    for (size_t k = 0; k < len; k++) cuts[k] = k + 1;
    char *t = drive(NULL, PIPE, len, cuts, len);
    cr_assert_str_eq(t, PIPE_WANT);
    xfree(t);
}

/* ---- a direct model of Redis 7.0's read path, for differential fuzzing ----
 * Written in Redis's own shape (strchr over a NUL-terminated query buffer, multibulklen and
 * bulklen counters, sdssplitargs over a copy of the line), independently of parser.c. */

typedef struct model {
    char *q; /* query buffer, NUL-terminated as an sds is */
    size_t len, pos;
    int reqtype; /* 0, 'i' inline, 'm' multibulk */
    long long mbl, bl;
    int argc, dead;
    buf_t cur; /* printed arguments of the current request */
    buf_t *t;
    limits_t lim;
} model_t;

static int m_isspace(int c)
{
    return c && strchr(" \t\n\v\f\r", c) != NULL;
}

static int m_ishex(int c)
{
    return c && strchr("0123456789abcdefABCDEF", c) != NULL;
}

static int m_hex(int c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* string2ll by another route: the shape by hand, the value and overflow by strtoll. */
static int m_string2ll(const char *s, size_t n, long long *v)
{
    if (n == 0 || n > 20) return 0;
    char tmp[32];
    memcpy(tmp, s, n);
    tmp[n] = 0;
    const char *d = tmp[0] == '-' ? tmp + 1 : tmp;
    if (!(strcmp(tmp, "0") == 0 || (d[0] >= '1' && d[0] <= '9'))) return 0;
    for (const char *c = d; *c; c++)
        if (*c < '0' || *c > '9') return 0;
    if (strlen(d) != n - (size_t)(d - tmp)) return 0;
    errno = 0;
    *v = strtoll(tmp, NULL, 10);
    return errno == 0;
}

static void m_error(model_t *m, const char *msg)
{
    buf_append_str(m->t, "ERROR");
    put_arg(m->t, msg, strlen(msg));
    buf_push(m->t, '\n');
    m->dead = 1;
}

/* sdssplitargs, printing tokens to m->cur. Returns 0 on unbalanced quotes. */
static int m_splitargs(model_t *m, const char *line)
{
    const char *p = line;
    buf_t tok;
    buf_init(&tok);
    for (;;) {
        while (*p && m_isspace((unsigned char)*p)) p++;
        if (!*p) break;
        int inq = 0, insq = 0, done = 0;
        buf_clear(&tok);
        while (!done) {
            if (inq) {
                if (*p == '\\' && p[1] == 'x' && m_ishex(p[2]) && m_ishex(p[3])) {
                    buf_push(&tok, (char)(m_hex(p[2]) * 16 + m_hex(p[3])));
                    p += 3;
                } else if (*p == '\\' && p[1]) {
                    p++;
                    char c = *p == 'n'   ? '\n'
                             : *p == 'r' ? '\r'
                             : *p == 't' ? '\t'
                             : *p == 'b' ? '\b'
                             : *p == 'a' ? '\a'
                                         : *p;
                    buf_push(&tok, c);
                } else if (*p == '"') {
                    if (p[1] && !m_isspace((unsigned char)p[1])) goto err;
                    done = 1;
                } else if (!*p) {
                    goto err;
                } else {
                    buf_push(&tok, *p);
                }
            } else if (insq) {
                if (*p == '\\' && p[1] == '\'') {
                    p++;
                    buf_push(&tok, '\'');
                } else if (*p == '\'') {
                    if (p[1] && !m_isspace((unsigned char)p[1])) goto err;
                    done = 1;
                } else if (!*p) {
                    goto err;
                } else {
                    buf_push(&tok, *p);
                }
            } else {
                switch (*p) {
                case ' ':
                case '\n':
                case '\r':
                case '\t':
                case '\0':
                    done = 1;
                    break;
                case '"':
                    inq = 1;
                    break;
                case '\'':
                    insq = 1;
                    break;
                default:
                    buf_push(&tok, *p);
                    break;
                }
            }
            if (*p) p++;
        }
        put_arg(&m->cur, tok.data ? tok.data : "", tok.len);
        m->argc++;
    }
    buf_deinit(&tok);
    return 1;
err:
    buf_deinit(&tok);
    return 0;
}

static int m_inline(model_t *m)
{
    char *nl = strchr(m->q + m->pos, '\n');
    if (!nl) {
        if (m->len - m->pos > m->lim.max_inline)
            m_error(m, "Protocol error: too big inline request");
        return 0;
    }
    int lf = 1;
    if (nl != m->q + m->pos && nl[-1] == '\r') nl--, lf++;
    size_t qlen = (size_t)(nl - (m->q + m->pos));
    char *aux = strndup(m->q + m->pos, qlen);
    int ok = m_splitargs(m, aux);
    free(aux);
    if (!ok) {
        m_error(m, "Protocol error: unbalanced quotes in request");
        return 0;
    }
    m->pos += qlen + lf;
    return 1;
}

static int m_multibulk(model_t *m)
{
    char *nl;
    long long ll;
    if (m->mbl == 0) {
        nl = strchr(m->q + m->pos, '\r');
        if (!nl) {
            if (m->len - m->pos > m->lim.max_inline)
                m_error(m, "Protocol error: too big mbulk count string");
            return 0;
        }
        if (nl - (m->q + m->pos) > (ssize_t)(m->len - m->pos - 2)) return 0;
        int ok = m_string2ll(m->q + 1 + m->pos, (size_t)(nl - (m->q + 1 + m->pos)), &ll);
        if (!ok || ll > INT_MAX || (ll > 0 && (size_t)ll > m->lim.max_args)) {
            m_error(m, "Protocol error: invalid multibulk length");
            return 0;
        }
        m->pos = (size_t)(nl - m->q) + 2;
        if (ll <= 0) return 1;
        m->mbl = ll;
    }
    while (m->mbl) {
        if (m->bl == -1) {
            nl = strchr(m->q + m->pos, '\r');
            if (!nl) {
                if (m->len - m->pos > m->lim.max_inline)
                    m_error(m, "Protocol error: too big bulk count string");
                return 0;
            }
            if (nl - (m->q + m->pos) > (ssize_t)(m->len - m->pos - 2)) return 0;
            if (m->q[m->pos] != '$') {
                char msg[64];
                snprintf(msg, sizeof msg, "Protocol error: expected '$', got '%c'", m->q[m->pos]);
                for (char *c = msg; *c; c++)
                    if (*c == '\r' || *c == '\n') *c = ' ';
                m_error(m, msg);
                return 0;
            }
            int ok = m_string2ll(m->q + m->pos + 1, (size_t)(nl - (m->q + m->pos + 1)), &ll);
            if (!ok || ll < 0 || (size_t)ll > m->lim.max_bulk) {
                m_error(m, "Protocol error: invalid bulk length");
                return 0;
            }
            m->pos = (size_t)(nl - m->q) + 2;
            m->bl = ll;
        }
        if (m->len - m->pos < (size_t)(m->bl + 2)) return 0;
        put_arg(&m->cur, m->q + m->pos, (size_t)m->bl);
        m->argc++;
        m->pos += (size_t)m->bl + 2;
        m->bl = -1;
        m->mbl--;
    }
    return 1;
}

/* readQueryFromClient + processInputBuffer: append one read, run whole requests. */
static void m_feed(model_t *m, const char *p, size_t n)
{
    m->q = realloc(m->q, m->len + n + 1);
    if (n) memcpy(m->q + m->len, p, n);
    m->len += n;
    m->q[m->len] = 0;
    while (!m->dead && m->pos < m->len) {
        if (!m->reqtype) m->reqtype = m->q[m->pos] == '*' ? 'm' : 'i';
        if (!(m->reqtype == 'i' ? m_inline(m) : m_multibulk(m))) break;
        if (m->argc == 0) {
            buf_append_str(m->t, "EMPTY\n");
        } else {
            buf_append_str(m->t, "OK");
            buf_append(m->t, m->cur.data, m->cur.len);
            buf_push(m->t, '\n');
        }
        buf_clear(&m->cur);
        m->argc = 0;
        m->reqtype = 0;
        m->mbl = 0;
        m->bl = -1;
    }
}

static char *model_run(const limits_t *lim, const char *data, size_t len, const size_t *cuts,
                       size_t ncuts)
{
    buf_t t;
    buf_init(&t);
    buf_append(&t, "", 0);
    model_t m = {.bl = -1, .t = &t, .lim = *lim};
    buf_init(&m.cur);
    size_t at = 0;
    for (size_t c = 0; c <= ncuts && !m.dead; c++) {
        size_t end = c < ncuts ? cuts[c] : len;
        m_feed(&m, data + at, end - at);
        at = end;
    }
    if (!m.dead && (m.mbl > 0 || m.pos < m.len)) buf_append_str(&t, "PENDING\n");
    free(m.q);
    buf_deinit(&m.cur);
    return t.data;
}

/* ---- fuzz ---- */

static uint64_t rng_state;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

static size_t rnd_below(size_t n)
{
    return n ? rnd() % n : 0;
}

static void gen_bytes(buf_t *b, size_t n, const char *alphabet, size_t alen)
{
    for (size_t i = 0; i < n; i++) buf_push(b, alphabet ? alphabet[rnd_below(alen)] : (char)rnd());
}

static const char NOISE[] = "*$\r\n0123456789-+ \t\v\"'\\xaZf\0";
static const char INLINE_CH[] = "ab \t\v\f\"'\\xnA0f\r";

/* A random stream: valid requests of both kinds, empty ones, noise, then a few mutations. */
static void gen_stream(buf_t *b)
{
    int pieces = 1 + (int)rnd_below(6);
    for (int i = 0; i < pieces; i++) {
        switch (rnd_below(6)) {
        case 0:
        case 1: {
            int argc = (int)rnd_below(5);
            buf_printf(b, "*%d\r\n", argc);
            for (int a = 0; a < argc; a++) {
                size_t n = rnd_below(12);
                buf_printf(b, "$%zu\r\n", n);
                gen_bytes(b, n, rnd() & 1 ? NULL : NOISE, sizeof NOISE - 1);
                buf_append(b, "\r\n", 2);
            }
            break;
        }
        case 2:
            gen_bytes(b, rnd_below(16), INLINE_CH, sizeof INLINE_CH - 1);
            buf_append_str(b, rnd() & 1 ? "\r\n" : "\n");
            break;
        case 3:
            buf_append_str(b, rnd() & 1 ? "*0\r\n" : rnd() & 1 ? "*-1\r\n" : "\r\n");
            break;
        default:
            gen_bytes(b, 1 + rnd_below(8), NOISE, sizeof NOISE - 1);
            break;
        }
    }
    int muts = rnd() & 1 ? 0 : (int)rnd_below(4);
    for (int i = 0; i < muts && b->len; i++) {
        size_t at = rnd_below(b->len);
        char c = NOISE[rnd_below(sizeof NOISE - 1)];
        if (rnd() & 1)
            b->data[at] = c;
        else
            buf_insert(b, at, &c, 1);
    }
}

static size_t gen_cuts(size_t len, size_t *cuts, size_t max)
{
    if (rnd_below(8) == 0 && len <= max) { /* one byte per read */
        for (size_t k = 0; k < len; k++) cuts[k] = k + 1;
        return len;
    }
    size_t n = rnd_below(6);
    for (size_t i = 0; i < n; i++) cuts[i] = rnd_below(len + 1);
    for (size_t i = 1; i < n; i++) /* insertion sort */
        for (size_t j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
            size_t x = cuts[j];
            cuts[j] = cuts[j - 1];
            cuts[j - 1] = x;
        }
    return n;
}

static limits_t gen_limits(void)
{
    static const size_t inl[] = {3, 8, 16, 40, 64 * 1024};
    static const size_t bulk[] = {0, 3, 8, 512u << 20};
    static const size_t args[] = {0, 1, 3, 1024 * 1024};
    limits_t l = {bulk[rnd_below(4)], args[rnd_below(4)], inl[rnd_below(5)]};
    if (rnd() & 1) l = (limits_t){512u << 20, 1024 * 1024, 64 * 1024};
    return l;
}

Test(resp_parser, random_streams_parse_exactly_as_redis_for_any_split)
{
    rng_state = 0x9e3779b97f4a7c15ull;
    size_t cuts[1024];
    for (int iter = 0; iter < 20000; iter++) {
        buf_t in;
        buf_init(&in);
        gen_stream(&in);
        limits_t lim = gen_limits();
        size_t ncuts = gen_cuts(in.len, cuts, 1024);
        char *want = model_run(&lim, in.data, in.len, cuts, ncuts);
        char *got = drive(&lim, in.data, in.len, cuts, ncuts);
        cr_assert_str_eq(got, want, "iteration %d", iter);
        xfree(want);
        xfree(got);
        buf_deinit(&in);
    }
}

Test(resp_parser, random_bytes_never_crash_or_overread)
{
    rng_state = 0x2545f4914f6cdd1dull;
    size_t cuts[1024];
    for (int iter = 0; iter < 20000; iter++) {
        buf_t in;
        buf_init(&in);
        size_t n = rnd_below(96);
        if (rnd() & 1)
            gen_bytes(&in, n, NULL, 0);
        else
            gen_bytes(&in, n, NOISE, sizeof NOISE - 1);
        limits_t lim = gen_limits();
        size_t ncuts = gen_cuts(in.len, cuts, 1024);
        xfree(drive(&lim, in.data ? in.data : "", in.len, cuts, ncuts));
        buf_deinit(&in);
    }
}

/* ---- shared-memory data-area references (resp_parser_t.area) ---- */

Test(resp_parser, area_refs_become_views_into_the_area_at_every_split)
{
    static char area[64] = "0123456789abcdefghij";
    const char in[] = "*3\r\n$3\r\nSET\r\n&3,10\r\n&0,64\r\n";
    P.area = area;
    P.area_size = sizeof area;
    for (size_t cut = 0; cut < sizeof in - 1; cut++) {
        size_t used;
        if (cut) cr_assert_eq(parse(in, cut, &used), RESP_AGAIN, "cut %zu", cut);
        cr_assert_eq(parse(S(in), &used), RESP_OK, "cut %zu", cut);
        cr_assert_eq(used, sizeof in - 1);
        cr_assert_eq(P.nrefs, 2);
        expect_arg(0, S("SET"));
        cr_assert_eq(P.argv[1].ptr, area + 10);
        cr_assert_eq(P.argv[1].len, 3);
        cr_assert_eq(P.argv[2].ptr, area + 64);
        cr_assert_eq(P.argv[2].len, 0);
    }
    /* the next request, without refs, counts none */
    size_t used;
    cr_assert_eq(parse_str("*1\r\n$4\r\nPING\r\n", &used), RESP_OK);
    cr_assert_eq(P.nrefs, 0);
}

Test(resp_parser, area_refs_out_of_bounds_or_malformed_are_protocol_errors)
{
    static char area[4096];
    const char *bad[] = {"&5,4092", "&4097,0", "&1,4097", "&-1,0", "&1,-1", "&1", "&,1",
                         "&1,", "&x,1", "&1,1x", "&18446744073709551615,0",
                         "&1,9223372036854775807", "&01,1"};
    P.area = area;
    P.area_size = sizeof area;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char in[128];
        size_t used;
        int n = snprintf(in, sizeof in, "*2\r\n$3\r\nGET\r\n%s\r\n", bad[i]);
        cr_assert_eq(parse(in, (size_t)n, &used), RESP_ERROR, "%s", bad[i]);
        cr_assert_str_eq(P.error, "Protocol error: invalid data area reference", "%s", bad[i]);
    }
    P.area = NULL; /* a socket client: '&' is just a wrong type byte */
    size_t used;
    cr_assert_eq(parse_str("*2\r\n$3\r\nGET\r\n&1,0\r\n", &used), RESP_ERROR);
    cr_assert_str_eq(P.error, "Protocol error: expected '$', got '&'");
}
