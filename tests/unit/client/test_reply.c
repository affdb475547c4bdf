/* test_reply.c - client/reply.c: the incremental RESP2/RESP3 reply parser. Every type, every
 * split of a reply into two feeds (and byte by byte), pipelined replies, and hostile input
 * (huge lengths, deep nesting, bad bytes, overflow) that must give an error, not a crash or a
 * big allocation. */
#include "alloc.h"
#include "reply.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/leak.h" /* LTest: a leak fails the test that caused it */

/* Feeds s in pieces: first cut bytes, then the rest (cut 0: byte by byte). Returns the status
 * of the last feed and the reply; *used_total gets the bytes consumed. */
static int feed_split(cte_parser_t *p, const char *s, size_t n, size_t cut, cte_reply_t **out,
                      size_t *used_total)
{
    size_t pos = 0;
    int rc = 0;
    *out = NULL;
    while (pos < n) {
        size_t chunk = cut ? (pos < cut ? cut - pos : n - pos) : 1;
        size_t used = 0;
        rc = cte__parser_feed(p, s + pos, chunk, &used, out);
        if (rc < 0) break;
        pos += used;
        if (rc == 1) break;
        cr_assert_eq(used, chunk, "need-more must take every byte");
    }
    if (used_total) *used_total = pos;
    return rc;
}

static cte_reply_t *parse_all_splits(const char *s, size_t n)
{
    cte_reply_t *first = NULL;
    for (size_t cut = 0; cut < n; cut++) {
        cte_parser_t p;
        cte_reply_t *r;
        size_t used;
        cte__parser_init(&p, NULL);
        int rc = feed_split(&p, s, n, cut, &r, &used);
        cr_assert_eq(rc, 1, "cut %zu: status %d", cut, rc);
        cr_assert_eq(used, n, "cut %zu: used %zu of %zu", cut, used, n);
        cte__parser_deinit(&p);
        if (!first)
            first = r;
        else
            cte_reply_free(r);
    }
    return first;
}

#define PARSE(lit) parse_all_splits(lit, sizeof(lit) - 1)

static int parse_status(const char *s, size_t n, const cte_parser_limits_t *lim)
{
    cte_parser_t p;
    cte_reply_t *r;
    size_t used;
    cte__parser_init(&p, lim);
    int rc = feed_split(&p, s, n, n, &r, &used);
    cte_reply_free(r);
    cte__parser_deinit(&p);
    return rc;
}

#define STATUS(lit) parse_status(lit, sizeof(lit) - 1, NULL)

LTest(client_reply, simple_string_error_integer)
{
    cte_reply_t *r = PARSE("+OK\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_STRING);
    cr_assert_str_eq(cte_reply_str(r, NULL), "OK");
    cte_reply_free(r);
    r = PARSE("-ERR bad thing\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_ERROR);
    cr_assert_str_eq(cte_reply_str(r, NULL), "ERR bad thing");
    cte_reply_free(r);
    r = PARSE(":-9223372036854775808\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_INTEGER);
    cr_assert_eq(cte_reply_int(r), INT64_MIN);
    cte_reply_free(r);
}

LTest(client_reply, bulk_binary_and_empty_and_null)
{
    size_t len;
    cte_reply_t *r = PARSE("$5\r\na\r\n\0b\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_BULK);
    const char *s = cte_reply_str(r, &len);
    cr_assert_eq(len, 5);
    cr_assert(memcmp(s, "a\r\n\0b", 5) == 0);
    cr_assert_eq(s[5], '\0');
    cte_reply_free(r);
    r = PARSE("$0\r\n\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_BULK);
    cr_assert_str_eq(cte_reply_str(r, &len), "");
    cte_reply_free(r);
    r = PARSE("$-1\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_NULL);
    cte_reply_free(r);
    r = PARSE("*-1\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_NULL);
    cte_reply_free(r);
    r = PARSE("_\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_NULL);
    cte_reply_free(r);
}

LTest(client_reply, nested_array_with_every_scalar)
{
    cte_reply_t *r = PARSE("*3\r\n:1\r\n*2\r\n$3\r\nfoo\r\n+bar\r\n*0\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_ARRAY);
    cr_assert_eq(cte_reply_len(r), 3);
    cr_assert_eq(cte_reply_int(cte_reply_elem(r, 0)), 1);
    const cte_reply_t *in = cte_reply_elem(r, 1);
    cr_assert_eq(cte_reply_len(in), 2);
    cr_assert_str_eq(cte_reply_str(cte_reply_elem(in, 0), NULL), "foo");
    cr_assert_str_eq(cte_reply_str(cte_reply_elem(in, 1), NULL), "bar");
    cr_assert_eq(cte_reply_kind(cte_reply_elem(r, 2)), CTE_REPLY_ARRAY);
    cr_assert_eq(cte_reply_len(cte_reply_elem(r, 2)), 0);
    cr_assert_null(cte_reply_elem(r, 3));
    cte_reply_free(r);
}

LTest(client_reply, resp3_map_set_push)
{
    cte_reply_t *r = PARSE("%2\r\n+a\r\n:1\r\n+b\r\n~2\r\n#t\r\n#f\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_MAP);
    cr_assert_eq(cte_reply_len(r), 4);
    cr_assert_str_eq(cte_reply_str(cte_reply_elem(r, 2), NULL), "b");
    const cte_reply_t *set = cte_reply_elem(r, 3);
    cr_assert_eq(cte_reply_kind(set), CTE_REPLY_SET);
    cr_assert_eq(cte_reply_kind(cte_reply_elem(set, 0)), CTE_REPLY_BOOL);
    cr_assert_eq(cte_reply_int(cte_reply_elem(set, 0)), 1);
    cr_assert_eq(cte_reply_int(cte_reply_elem(set, 1)), 0);
    cte_reply_free(r);
    r = PARSE(">2\r\n$7\r\nmessage\r\n$2\r\nhi\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_PUSH);
    cr_assert_eq(cte_reply_len(r), 2);
    cte_reply_free(r);
}

LTest(client_reply, resp3_double_bignum_verbatim_blob_error)
{
    cte_reply_t *r = PARSE(",3.25\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_DOUBLE);
    cr_assert_float_eq(cte_reply_double(r), 3.25, 1e-12);
    cte_reply_free(r);
    r = PARSE(",-inf\r\n");
    cr_assert(cte_reply_double(r) < -1e308);
    cte_reply_free(r);
    r = PARSE("(-3492890328409238509324850943850943825024385\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_BIGNUM);
    cr_assert_str_eq(cte_reply_str(r, NULL), "-3492890328409238509324850943850943825024385");
    cte_reply_free(r);
    r = PARSE("=15\r\ntxt:Some string\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_VERBATIM);
    cr_assert_str_eq(cte_reply_format(r), "txt");
    cr_assert_str_eq(cte_reply_str(r, NULL), "Some string");
    cte_reply_free(r);
    r = PARSE("!21\r\nSYNTAX invalid syntax\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_ERROR);
    cr_assert_str_eq(cte_reply_str(r, NULL), "SYNTAX invalid syntax");
    cte_reply_free(r);
}

LTest(client_reply, attributes_are_dropped_at_root_and_inside)
{
    cte_reply_t *r = PARSE("|1\r\n+key\r\n*1\r\n:9\r\n*2\r\n|1\r\n+k\r\n+v\r\n:1\r\n:2\r\n");
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_ARRAY);
    cr_assert_eq(cte_reply_len(r), 2);
    cr_assert_eq(cte_reply_int(cte_reply_elem(r, 0)), 1);
    cr_assert_eq(cte_reply_int(cte_reply_elem(r, 1)), 2);
    cte_reply_free(r);
}

LTest(client_reply, pipelined_replies_come_out_one_at_a_time)
{
    const char s[] = "+A\r\n:2\r\n$1\r\nc\r\n";
    cte_parser_t p;
    cte_reply_t *r;
    size_t used, pos = 0;
    const char *want[] = {"A", NULL, "c"};
    cte__parser_init(&p, NULL);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(cte__parser_feed(&p, s + pos, sizeof s - 1 - pos, &used, &r), 1);
        pos += used;
        if (want[i])
            cr_assert_str_eq(cte_reply_str(r, NULL), want[i]);
        else
            cr_assert_eq(cte_reply_int(r), 2);
        cte_reply_free(r);
    }
    cr_assert_eq(pos, sizeof s - 1);
    cte__parser_deinit(&p);
}

LTest(client_reply, a_large_bulk_arrives_in_small_pieces)
{
    size_t n = 300000;
    char *s = malloc(n + 32);
    int h = sprintf(s, "$%zu\r\n", n);
    for (size_t i = 0; i < n; i++) s[h + i] = (char)(i * 7);
    memcpy(s + h + n, "\r\n", 2);
    cte_parser_t p;
    cte_reply_t *r;
    size_t used;
    cte__parser_init(&p, NULL);
    cr_assert_eq(feed_split(&p, s, h + n + 2, 7, &r, &used), 1);
    size_t len;
    const char *b = cte_reply_str(r, &len);
    cr_assert_eq(len, n);
    cr_assert(memcmp(b, s + h, n) == 0);
    cte_reply_free(r);
    cte__parser_deinit(&p);
    free(s);
}

LTest(client_reply, huge_announced_lengths_are_refused_before_allocating)
{
    cr_assert_eq(STATUS("$9999999999999\r\n"), CTE_E_LIMIT);
    cr_assert_eq(STATUS("*9999999999999\r\n"), CTE_E_LIMIT);
    cr_assert_eq(STATUS("%9223372036854775807\r\n"), CTE_E_LIMIT);
    cr_assert_eq(STATUS("$99999999999999999999999\r\n"), CTE_E_PROTOCOL);
    cte_parser_limits_t lim = {.max_bulk = 10, .max_line = 16, .max_elems = 4};
    cr_assert_eq(parse_status("$11\r\n", 5, &lim), CTE_E_LIMIT);
    cr_assert_eq(parse_status("*5\r\n", 4, &lim), CTE_E_LIMIT);
    cr_assert_eq(parse_status("%3\r\n", 4, &lim), CTE_E_LIMIT);
    cr_assert_eq(parse_status("+0123456789abcdefg\r\n", 20, &lim), CTE_E_LIMIT);
    /* an endless line without CRLF, fed byte by byte, stops at the limit */
    char line[64];
    memset(line, 'x', sizeof line);
    line[0] = '+';
    cte_parser_t p;
    cte_reply_t *r;
    size_t used;
    cte__parser_init(&p, &lim);
    cr_assert_eq(feed_split(&p, line, sizeof line, 0, &r, &used), CTE_E_LIMIT);
    cte__parser_deinit(&p);
}

LTest(client_reply, an_array_announcing_millions_costs_only_what_arrives)
{
    /* a hostile *16000000 followed by one element: no 128 MB pointer array up front */
    cte_parser_t p;
    cte_reply_t *r;
    size_t used;
    const char s[] = "*16000000\r\n:1\r\n";
    cte__parser_init(&p, NULL);
    cr_assert_eq(cte__parser_feed(&p, s, sizeof s - 1, &used, &r), 0);
    cr_assert_eq(p.depth, 1);
    cr_assert_leq(p.stack[0].node->cap, 8);
    cte__parser_deinit(&p);
}

LTest(client_reply, deep_nesting_is_an_error)
{
    char s[40 * 4 + 8];
    size_t n = 0;
    for (int i = 0; i < 40; i++) n += (size_t)sprintf(s + n, "*1\r\n");
    n += (size_t)sprintf(s + n, ":1\r\n");
    cr_assert_eq(parse_status(s, n, NULL), CTE_E_LIMIT);
    n = 0; /* 32 levels is fine */
    for (int i = 0; i < 31; i++) n += (size_t)sprintf(s + n, "*1\r\n");
    n += (size_t)sprintf(s + n, ":1\r\n");
    cr_assert_eq(parse_status(s, n, NULL), 1);
}

LTest(client_reply, bad_bytes_are_protocol_errors)
{
    cr_assert_eq(STATUS("?what\r\n"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS("+OK\n"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS("\r\n"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS(":12a\r\n"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS(":\r\n"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS(":99999999999999999999\r\n"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS("$3\r\nabcXY"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS("$-2\r\n"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS("%-1\r\n"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS("#x\r\n"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS(",1.5x\r\n"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS(", 1\r\n"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS("(12-3\r\n"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS("_x\r\n"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS("=3\r\ntxt\r\n"), CTE_E_PROTOCOL);
    cr_assert_eq(STATUS("*2\r\n:1\r\n?\r\n"), CTE_E_PROTOCOL);
}

LTest(client_reply, an_error_is_sticky_and_deinit_frees_a_half_tree)
{
    cte_parser_t p;
    cte_reply_t *r;
    size_t used;
    cte__parser_init(&p, NULL);
    cr_assert_eq(cte__parser_feed(&p, "*3\r\n*2\r\n$5\r\nab", 14, &used, &r), 0);
    cr_assert_eq(cte__parser_feed(&p, "cX", 2, &used, &r), 0);
    cr_assert_eq(cte__parser_feed(&p, "YZ\r\n", 4, &used, &r), CTE_E_PROTOCOL);
    cr_assert_eq(cte__parser_feed(&p, "+OK\r\n", 5, &used, &r), CTE_E_PROTOCOL);
    cte__parser_deinit(&p); /* ASan builds check that nothing leaks */
}

/* Random garbage must never crash the parser or hand out a reply with bad pointers. */
LTest(client_reply, random_garbage_never_crashes)
{
    const char alphabet[] = "+-:$*%~>_,#(=!|0123456789-\r\nabc";
    unsigned seed = 12345;
    for (int round = 0; round < 20000; round++) {
        char s[48];
        size_t n = 1 + (seed = seed * 1103515245u + 12345u) % sizeof s;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            s[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
        }
        cte_parser_t p;
        cte_reply_t *r;
        size_t used;
        cte__parser_init(&p, NULL);
        int rc = cte__parser_feed(&p, s, n, &used, &r);
        cr_assert(rc == 0 || rc == 1 || rc == CTE_E_PROTOCOL || rc == CTE_E_LIMIT);
        if (rc == 1) {
            cr_assert_leq(used, n);
            cte_reply_free(r);
        }
        cte__parser_deinit(&p);
    }
}

/* Every allocation the parser makes may fail: each failure must come back as CTE_E_NOMEM
 * (sticky), and deinit must free the half-built tree (ASan builds check for leaks). */
LTest(client_reply, every_allocation_failure_is_nomem_and_leaks_nothing)
{
    const char s[] = "*4\r\n%1\r\n+k\r\n$5\r\nvalue\r\n~2\r\n,1.5\r\n(123\r\n"
                     "|1\r\n+a\r\n+b\r\n=7\r\ntxt:abc\r\n-ERR x\r\n";
    int succeeded = 0;
    for (long n = 0; n < 200 && !succeeded; n++) {
        cte_parser_t p;
        cte_reply_t *r;
        size_t used;
        cte__parser_init(&p, NULL);
        cte__alloc_fail_after(n);
        int rc = feed_split(&p, s, sizeof s - 1, 3, &r, &used);
        cte__alloc_fail_after(-1);
        cr_assert(rc == 1 || rc == CTE_E_NOMEM, "failing allocation %ld: status %d", n, rc);
        if (rc == 1) {
            succeeded = 1;
            cr_assert_eq(cte_reply_len(r), 4);
            cr_assert_str_eq(cte_reply_str(cte_reply_elem(r, 3), NULL), "ERR x");
            cte_reply_free(r);
        } else {
            cr_assert_eq(cte__parser_feed(&p, "+OK\r\n", 5, &used, &r), CTE_E_NOMEM);
        }
        cte__parser_deinit(&p);
    }
    cr_assert(succeeded, "200 allocations were not enough");
}

/* A top-level bulk goes straight into the sink (cte_get's buffer), at every split; the part
 * past the sink's size is dropped but counted; bulks inside aggregates are not sunk. */
LTest(client_reply, a_top_level_bulk_is_written_into_the_sink)
{
    const char s[] = "|1\r\n+a\r\n+b\r\n$10\r\n0123456789\r\n";
    for (size_t cut = 0; cut < sizeof s - 1; cut++) {
        char sink[4] = {0};
        cte_parser_t p;
        cte_reply_t *r;
        size_t used;
        cte__parser_init(&p, NULL);
        p.sink = sink;
        p.sink_cap = sizeof sink;
        cr_assert_eq(feed_split(&p, s, sizeof s - 1, cut, &r, &used), 1);
        cr_assert_eq(cte_reply_kind(r), CTE_REPLY_BULK);
        cr_assert_eq(r->len, 10, "the full length is counted");
        cr_assert_null(r->str, "no copy of the payload was kept");
        cr_assert(memcmp(sink, "0123", 4) == 0);
        cte_reply_free(r);
        cte__parser_deinit(&p);
    }
    char sink[8] = {0};
    cte_parser_t p;
    cte_reply_t *r;
    size_t used;
    cte__parser_init(&p, NULL);
    p.sink = sink;
    p.sink_cap = sizeof sink;
    cr_assert_eq(cte__parser_feed(&p, "*1\r\n$2\r\nab\r\n", 12, &used, &r), 1);
    cr_assert_str_eq(cte_reply_str(cte_reply_elem(r, 0), NULL), "ab");
    cr_assert_eq(sink[0], 0, "a bulk inside an array is not sunk");
    cte_reply_free(r);
    cte__parser_deinit(&p);
}

/* The connection reads a big sunk payload straight into the sink: sink_room says where and
 * how much, sunk reports it, and the parser carries on with the CRLF and what follows. */
LTest(client_reply, a_sunk_payload_can_be_read_into_the_sink_directly)
{
    char sink[8] = {0}, *dst;
    cte_parser_t p;
    cte_reply_t *r;
    size_t used;
    cte__parser_init(&p, NULL);
    cr_assert_eq(cte__parser_sink_room(&p, &dst), 0, "nothing to sink yet");
    p.sink = sink;
    p.sink_cap = sizeof sink;
    cr_assert_eq(cte__parser_feed(&p, "$12\r\nab", 7, &used, &r), 0);
    cr_assert_eq(cte__parser_sink_room(&p, &dst), 6, "8 bytes of sink, 2 used");
    cr_assert_eq(dst, sink + 2);
    memcpy(dst, "cdefgh", 6);
    cte__parser_sunk(&p, 6);
    cr_assert_eq(cte__parser_sink_room(&p, &dst), 0, "the sink is full: the rest is dropped");
    cr_assert_eq(cte__parser_feed(&p, "ijkl\r\n+OK\r\n", 11, &used, &r), 1);
    cr_assert_eq(used, 6);
    cr_assert_eq(r->len, 12);
    cr_assert(memcmp(sink, "abcdefgh", 8) == 0);
    cte_reply_free(r);
    cte__parser_deinit(&p);
}

/* ---- shared-memory reply data area ("&<len>,<index>") ---- */

Test(reply, area_bulks_borrow_the_area_and_move_its_end)
{
    static char area[64];
    cte_parser_t p;
    cte_reply_t *r;
    size_t used;
    memcpy(area + 8, "hello", 5);
    memcpy(area, "wrap!", 5);
    cte__parser_init(&p, NULL);
    p.area = area;
    p.area_size = sizeof area;
    const char in[] = "*2\r\n&5,8\r\n&5,64\r\n";
    cr_assert_eq(cte__parser_feed(&p, in, sizeof in - 1, &used, &r), 1);
    cr_assert_eq(used, sizeof in - 1);
    cr_assert_str_eq(cte_reply_str(cte_reply_elem(r, 0), NULL), "hello"); /* NUL set after it */
    cr_assert_eq(cte_reply_str(cte_reply_elem(r, 0), NULL), area + 8, "no copy");
    cr_assert_str_eq(cte_reply_str(cte_reply_elem(r, 1), NULL), "wrap!", "index 64 is position 0");
    cr_assert_eq(p.area_end, 70);
    cte_reply_free(r); /* frees the nodes, not the area */
    /* a sunk top-level one is copied into the sink */
    char sink[3];
    p.sink = sink;
    p.sink_cap = sizeof sink;
    cr_assert_eq(cte__parser_feed(&p, "&5,8\r\n", 6, &used, &r), 1);
    cr_assert_eq(r->len, 5, "the payload's full length");
    cr_assert_null(cte_reply_str(r, NULL));
    cr_assert(memcmp(sink, "hel", 3) == 0);
    cte_reply_free(r);
    cte__parser_deinit(&p);
}

Test(reply, area_bulks_past_the_area_or_without_one_are_protocol_errors)
{
    static char area[64];
    const char *bad[] = {"&64,0\r\n", "&1,63\r\n", "&-1,0\r\n", "&1\r\n", "&1,x\r\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cte_parser_t p;
        cte_reply_t *r;
        size_t used;
        cte__parser_init(&p, NULL);
        p.area = area;
        p.area_size = sizeof area;
        cr_assert_lt(cte__parser_feed(&p, bad[i], strlen(bad[i]), &used, &r), 0, "%s", bad[i]);
        cte__parser_deinit(&p);
    }
    cte_parser_t p;
    cte_reply_t *r;
    size_t used;
    cte__parser_init(&p, NULL); /* a socket: no area */
    cr_assert_eq(cte__parser_feed(&p, "&1,0\r\n", 6, &used, &r), CTE_E_PROTOCOL);
    cte__parser_deinit(&p);
}
