/* tests/unit/server/cmd/test_sort.c - server/cmd/sort.c through the socketless client.
 *
 * The scenarios are sequences of commands, each with the exact reply bytes that redis-server
 * 7.0.15 gave for it in RESP2 and in RESP3 (NULL: the same bytes), generated with a script
 * that cleared Redis's errno before every command (Redis 7.0's SORT reads a stale errno; see
 * cmd_sort.c). A scenario runs twice on a fresh keyspace, once per protocol. Command words
 * are separated by spaces; a word in double quotes may hold spaces or be empty; \xHH, \r, \n
 * and \\ in a word are bytes (so elements and patterns can hold NULs). Replies are compared
 * by their RESP length, so they may hold NULs too. They cover every option, error and special
 * case of SORT and SORT_RO on lists, sets and sorted sets in an order Redis defines (sets come
 * sorted, or as intsets in order). The hand-written tests at the end check keyspace events,
 * srv.dirty, hit/miss counting, WATCH, and large inputs (many list nodes, skiplists and
 * hashtables) against the definitions. */
#include "common/alloc.h"
#include "server/client.h"
#include "server/command.h"
#include "server/server.h"
#include "storage/db.h"

#include "tests/unit/server/harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static client_t *C;

static void setup(void)
{
    C = harness_server_start(0, NULL);
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(cmd_sort, .init = setup, .fini = teardown);

/* Appends word w[0..n) to b with its escapes decoded. */
static void append_word(buf_t *b, const char *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (w[i] != '\\' || i + 1 >= n) {
            buf_push(b, w[i]);
        } else if (w[i + 1] == 'x') {
            char hex[3] = {w[i + 2], w[i + 3], 0};
            buf_push(b, (char)strtol(hex, NULL, 16));
            i += 3;
        } else {
            buf_push(b, w[i + 1] == 'r' ? '\r' : w[i + 1] == 'n' ? '\n' : w[i + 1]);
            i++;
        }
    }
}

/* Sends a command written as words (see above) from client c. */
static void run_on(client_t *c, const char *line)
{
    static buf_t words[6100];
    int argc = 0;
    for (const char *p = line; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        cr_assert(argc < 6100);
        buf_init(&words[argc]);
        size_t n;
        if (*p == '"') {
            const char *e = strchr(p + 1, '"');
            cr_assert(e, "unterminated quote in %s", line);
            n = (size_t)(e - p - 1);
            append_word(&words[argc++], p + 1, n);
            p = e + 1;
        } else {
            n = strcspn(p, " ");
            append_word(&words[argc++], p, n);
            p += n;
        }
    }
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        buf_printf(&b, "$%zu\r\n", words[i].len);
        buf_append(&b, words[i].data ? words[i].data : "", words[i].len);
        buf_append(&b, "\r\n", 2);
        buf_deinit(&words[i]);
    }
    client_feed(c, b.data, b.len);
    buf_deinit(&b);
}

/* Length of the one RESP reply at p (bulk payloads may hold NULs). */
static size_t resp_len(const char *p)
{
    const char *e = strstr(p, "\r\n");
    cr_assert(e, "bad expected reply");
    size_t n = (size_t)(e - p) + 2;
    long long v = atoll(p + 1);
    switch (p[0]) {
    case '$':
    case '=':
    case '!':
        return v < 0 ? n : n + (size_t)v + 2;
    case '*':
    case '~':
    case '>':
    case '%':
        for (long long i = 0; i < (p[0] == '%' ? 2 * v : v); i++) n += resp_len(p + n);
        return n;
    default:
        return n;
    }
}

static char *escaped(const char *p, size_t n)
{
    return harness_escaped(p, n);
}

/* The reply of a command from C as a NUL-terminated copy (caller frees), its length in *len. */
static char *reply_of(const char *line, size_t *len)
{
    buf_clear(&C->out);
    run_on(C, line);
    char *r = xmemdup(C->out.data ? C->out.data : "", C->out.len);
    if (len) *len = C->out.len;
    buf_clear(&C->out);
    return r;
}

static void expect(const char *line, const char *want)
{
    size_t n, wn = resp_len(want);
    char *got = reply_of(line, &n);
    cr_assert(n == wn && memcmp(got, want, n) == 0, "RESP%d %s: got '%s', want '%s'", C->resp, line,
              escaped(got, n), escaped(want, wn));
    xfree(got);
}

typedef struct step {
    const char *cmd;
    const char *resp2;
    const char *resp3; /* NULL: same as resp2 */
} step_t;

/* Runs the steps in RESP2, then again on a fresh keyspace in RESP3. */
static void run_steps(const step_t *steps, size_t n)
{
    for (int resp = 2; resp <= 3; resp++) {
        db_flush(&srv.db[0]);
        C->resp = resp;
        for (size_t i = 0; i < n; i++)
            expect(steps[i].cmd, resp == 3 && steps[i].resp3 ? steps[i].resp3 : steps[i].resp2);
    }
}

/* ---- scenarios (expected bytes from redis-server 7.0.15) ---- */

Test(cmd_sort, numeric_sort_of_a_list)
{
    static const step_t steps[] = {
        {"RPUSH l 3 1 2 10 -5 1.5 2", ":7\r\n", NULL},
        {"SORT l",
         "*7\r\n$2\r\n-5\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n2\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n",
         NULL},
        {"SORT l ASC",
         "*7\r\n$2\r\n-5\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n2\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n",
         NULL},
        {"SORT l DESC",
         "*7\r\n$2\r\n10\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n2\r\n$3\r\n1.5\r\n$1\r\n1\r\n$2\r\n-5\r\n",
         NULL},
        {"SORT l desc asc",
         "*7\r\n$2\r\n-5\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n2\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n",
         NULL},
        {"SORT_RO l",
         "*7\r\n$2\r\n-5\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n2\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n",
         NULL},
        {"SORT_RO l DESC",
         "*7\r\n$2\r\n10\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n2\r\n$3\r\n1.5\r\n$1\r\n1\r\n$2\r\n-5\r\n",
         NULL},
        {"RPUSH n \" 1\" \"\" 0x10 inf -inf 1e3 -0 0 +2", ":9\r\n", NULL},
        {"SORT n",
         "*9\r\n$4\r\n-inf\r\n$0\r\n\r\n$2\r\n-0\r\n$1\r\n0\r\n$2\r\n "
         "1\r\n$2\r\n+2\r\n$4\r\n0x10\r\n$3\r\n1e3\r\n$3\r\ninf\r\n",
         NULL},
        {"SORT n DESC",
         "*9\r\n$3\r\ninf\r\n$3\r\n1e3\r\n$4\r\n0x10\r\n$2\r\n+2\r\n$2\r\n "
         "1\r\n$1\r\n0\r\n$2\r\n-0\r\n$0\r\n\r\n$4\r\n-inf\r\n",
         NULL},
        {"SORT n LIMIT 2 3", "*3\r\n$2\r\n-0\r\n$1\r\n0\r\n$2\r\n 1\r\n", NULL},
        {"RPUSH big 9223372036854775807 9223372036854775806 -9223372036854775808 1e19", ":4\r\n",
         NULL},
        {"SORT big",
         "*4\r\n$20\r\n-9223372036854775808\r\n$19\r\n9223372036854775806\r\n$"
         "19\r\n9223372036854775807\r\n$4\r\n1e19\r\n",
         NULL},
        {"SORT nokey", "*0\r\n", NULL},
        {"SORT nokey DESC LIMIT 1 1", "*0\r\n", NULL},
        {"SORT_RO nokey", "*0\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_sort, numeric_weights_that_are_not_numbers)
{
    static const step_t steps[] = {
        {"RPUSH a 1 abc", ":2\r\n", NULL},
        {"SORT a", "-ERR One or more scores can't be converted into double\r\n", NULL},
        {"RPUSH b 1 nan", ":2\r\n", NULL},
        {"SORT b", "-ERR One or more scores can't be converted into double\r\n", NULL},
        {"RPUSH c 1 1e400", ":2\r\n", NULL},
        {"SORT c", "-ERR One or more scores can't be converted into double\r\n", NULL},
        {"RPUSH d 1 1e-400", ":2\r\n", NULL},
        {"SORT d", "-ERR One or more scores can't be converted into double\r\n", NULL},
        {"RPUSH e 1 1e", ":2\r\n", NULL},
        {"SORT e", "-ERR One or more scores can't be converted into double\r\n", NULL},
        {"RPUSH f 10 \"9 \"", ":2\r\n", NULL},
        {"SORT f", "-ERR One or more scores can't be converted into double\r\n", NULL},
        {"RPUSH g 2 1 \"3\\x00abc\"", ":3\r\n", NULL},
        {"SORT g",
         "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$5\r\n3\x00"
         "abc\r\n",
         NULL},
        {"RPUSH h 1 \"a\\x00\"", ":2\r\n", NULL},
        {"SORT h", "-ERR One or more scores can't be converted into double\r\n", NULL},
        {"RPUSH i infinity -INF", ":2\r\n", NULL},
        {"SORT i", "*2\r\n$4\r\n-INF\r\n$8\r\ninfinity\r\n", NULL},
        {"RPUSH j 1 NAN", ":2\r\n", NULL},
        {"SORT j", "-ERR One or more scores can't be converted into double\r\n", NULL},
        {"SORT a ALPHA", "*2\r\n$1\r\n1\r\n$3\r\nabc\r\n", NULL},
        {"SORT a LIMIT 0 0", "-ERR One or more scores can't be converted into double\r\n", NULL},
        {"SORT a BY nosort", "*2\r\n$1\r\n1\r\n$3\r\nabc\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_sort, alpha_sort_compares_bytes_and_stops_at_nul)
{
    static const step_t steps[] = {
        {"RPUSH l b a B 10 9 \"\" \"a\\x00c\" \"a\\x00b\" a\\x00 \\xff \\xfe", ":11\r\n", NULL},
        {"SORT l ALPHA",
         "*11\r\n$0\r\n\r\n$2\r\n10\r\n$1\r\n9\r\n$1\r\nB\r\n$1\r\na\r\n$3\r\na\x00"
         "c\r\n$3\r\na\x00"
         "b\r\n$2\r\na\x00"
         "\r\n$1\r\nb\r\n$1\r\n\xfe"
         "\r\n$1\r\n\xff"
         "\r\n",
         NULL},
        {"SORT l ALPHA DESC",
         "*11\r\n$1\r\n\xff"
         "\r\n$1\r\n\xfe"
         "\r\n$1\r\nb\r\n$1\r\na\r\n$3\r\na\x00"
         "c\r\n$3\r\na\x00"
         "b\r\n$2\r\na\x00"
         "\r\n$1\r\nB\r\n$1\r\n9\r\n$2\r\n10\r\n$0\r\n\r\n",
         NULL},
        {"SORT l ALPHA LIMIT 2 4",
         "*4\r\n$1\r\n9\r\n$1\r\nB\r\n$1\r\na\r\n$3\r\na\x00"
         "c\r\n",
         NULL},
        {"SORT l ALPHA STORE d", ":11\r\n", NULL},
        {"LRANGE d 0 -1",
         "*11\r\n$0\r\n\r\n$2\r\n10\r\n$1\r\n9\r\n$1\r\nB\r\n$1\r\na\r\n$2\r\na\x00"
         "\r\n$3\r\na\x00"
         "b\r\n$3\r\na\x00"
         "c\r\n$1\r\nb\r\n$1\r\n\xfe"
         "\r\n$1\r\n\xff"
         "\r\n",
         NULL},
        {"SORT l ALPHA DESC STORE d", ":11\r\n", NULL},
        {"LRANGE d 0 -1",
         "*11\r\n$1\r\n\xff"
         "\r\n$1\r\n\xfe"
         "\r\n$1\r\nb\r\n$3\r\na\x00"
         "c\r\n$3\r\na\x00"
         "b\r\n$2\r\na\x00"
         "\r\n$1\r\na\r\n$1\r\nB\r\n$1\r\n9\r\n$2\r\n10\r\n$0\r\n\r\n",
         NULL},
        {"RPUSH dup 2 1 2 1 b a b a 01 1.0", ":10\r\n", NULL},
        {"SORT dup ALPHA",
         "*10\r\n$2\r\n01\r\n$1\r\n1\r\n$1\r\n1\r\n$3\r\n1.0\r\n$1\r\n2\r\n$1\r\n2\r\n$1\r\na\r\n$"
         "1\r\na\r\n$1\r\nb\r\n$1\r\nb\r\n",
         NULL},
        {"SORT dup ALPHA DESC",
         "*10\r\n$1\r\nb\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\na\r\n$1\r\n2\r\n$1\r\n2\r\n$3\r\n1.0\r\n$"
         "1\r\n1\r\n$1\r\n1\r\n$2\r\n01\r\n",
         NULL},
        {"SORT dup", "-ERR One or more scores can't be converted into double\r\n", NULL},
        {"SORT dup DESC", "-ERR One or more scores can't be converted into double\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_sort, limit_is_clamped_to_the_elements)
{
    static const step_t steps[] = {
        {"RPUSH l 5 4 3 2 1", ":5\r\n", NULL},
        {"SORT l LIMIT 0 2", "*2\r\n$1\r\n1\r\n$1\r\n2\r\n", NULL},
        {"SORT l LIMIT 1 2", "*2\r\n$1\r\n2\r\n$1\r\n3\r\n", NULL},
        {"SORT l LIMIT 3 10", "*2\r\n$1\r\n4\r\n$1\r\n5\r\n", NULL},
        {"SORT l LIMIT 4 1", "*1\r\n$1\r\n5\r\n", NULL},
        {"SORT l LIMIT 5 1", "*0\r\n", NULL},
        {"SORT l LIMIT 100 100", "*0\r\n", NULL},
        {"SORT l LIMIT 0 0", "*0\r\n", NULL},
        {"SORT l LIMIT 2 0", "*0\r\n", NULL},
        {"SORT l LIMIT -1 2", "*2\r\n$1\r\n1\r\n$1\r\n2\r\n", NULL},
        {"SORT l LIMIT -100 -100", "*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n",
         NULL},
        {"SORT l LIMIT 2 -1", "*3\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n", NULL},
        {"SORT l LIMIT 2 -2", "*3\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n", NULL},
        {"SORT l LIMIT 9223372036854775807 9223372036854775807", "*0\r\n", NULL},
        {"SORT l LIMIT -9223372036854775808 9223372036854775807",
         "*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n", NULL},
        {"SORT l LIMIT 1 2 DESC", "*2\r\n$1\r\n4\r\n$1\r\n3\r\n", NULL},
        {"SORT l LIMIT 1 1 LIMIT 0 3", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n", NULL},
        {"SORT l LIMIT 1 2 STORE d", ":2\r\n", NULL},
        {"LRANGE d 0 -1", "*2\r\n$1\r\n2\r\n$1\r\n3\r\n", NULL},
        {"SORT l LIMIT 1 0 STORE d", ":0\r\n", NULL},
        {"EXISTS d", ":0\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_sort, syntax_errors_come_before_the_lookup)
{
    static const step_t steps[] = {
        {"SET s x", "+OK\r\n", NULL},
        {"RPUSH l 1", ":1\r\n", NULL},
        {"SORT l foo", "-ERR syntax error\r\n", NULL},
        {"SORT l BY", "-ERR syntax error\r\n", NULL},
        {"SORT l GET", "-ERR syntax error\r\n", NULL},
        {"SORT l STORE", "-ERR syntax error\r\n", NULL},
        {"SORT l LIMIT", "-ERR syntax error\r\n", NULL},
        {"SORT l LIMIT 1", "-ERR syntax error\r\n", NULL},
        {"SORT l LIMIT a 1", "-ERR value is not an integer or out of range\r\n", NULL},
        {"SORT l LIMIT 1 b", "-ERR value is not an integer or out of range\r\n", NULL},
        {"SORT l LIMIT 1.5 1", "-ERR value is not an integer or out of range\r\n", NULL},
        {"SORT l LIMIT 9223372036854775808 1", "-ERR value is not an integer or out of range\r\n",
         NULL},
        {"SORT l LIMIT \" 1\" 1", "-ERR value is not an integer or out of range\r\n", NULL},
        {"SORT l ASC foo DESC", "-ERR syntax error\r\n", NULL},
        {"SORT_RO l STORE d", "-ERR syntax error\r\n", NULL},
        {"SORT_RO l store", "-ERR syntax error\r\n", NULL},
        {"SORT s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SORT s foo", "-ERR syntax error\r\n", NULL},
        {"SORT s LIMIT a 1", "-ERR value is not an integer or out of range\r\n", NULL},
        {"SORT_RO s STORE d", "-ERR syntax error\r\n", NULL},
        {"SORT_RO s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SORT s STORE d", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SORT s BY nosort",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"HSET h f v", ":1\r\n", NULL},
        {"SORT h", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SORT", "-ERR wrong number of arguments for 'sort' command\r\n", NULL},
        {"SORT_RO", "-ERR wrong number of arguments for 'sort_ro' command\r\n", NULL},
        {"SORT l STORE", "-ERR syntax error\r\n", NULL},
        {"SORT l LIMIT 0 1 GET # BY w_* ALPHA DESC ASC STORE d", ":1\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_sort, nosort_keeps_the_order_of_a_list)
{
    static const step_t steps[] = {
        {"RPUSH l 3 1 2 10 -5 x", ":6\r\n", NULL},
        {"SORT l BY nosort",
         "*6\r\n$1\r\n3\r\n$1\r\n1\r\n$1\r\n2\r\n$2\r\n10\r\n$2\r\n-5\r\n$1\r\nx\r\n", NULL},
        {"SORT l BY nosort DESC",
         "*6\r\n$1\r\nx\r\n$2\r\n-5\r\n$2\r\n10\r\n$1\r\n2\r\n$1\r\n1\r\n$1\r\n3\r\n", NULL},
        {"SORT l BY nosort LIMIT 1 2", "*2\r\n$1\r\n1\r\n$1\r\n2\r\n", NULL},
        {"SORT l BY nosort DESC LIMIT 1 2", "*2\r\n$2\r\n-5\r\n$2\r\n10\r\n", NULL},
        {"SORT l BY nosort LIMIT 4 10", "*2\r\n$2\r\n-5\r\n$1\r\nx\r\n", NULL},
        {"SORT l BY nosort DESC LIMIT 4 10", "*2\r\n$1\r\n1\r\n$1\r\n3\r\n", NULL},
        {"SORT l BY nosort LIMIT 6 1", "*0\r\n", NULL},
        {"SORT l BY nosort DESC LIMIT 6 1", "*0\r\n", NULL},
        {"SORT l BY nosort LIMIT 0 0", "*0\r\n", NULL},
        {"SORT l BY nosort ALPHA",
         "*6\r\n$1\r\n3\r\n$1\r\n1\r\n$1\r\n2\r\n$2\r\n10\r\n$2\r\n-5\r\n$1\r\nx\r\n", NULL},
        {"SORT l BY nosort GET # GET w_*",
         "*12\r\n$1\r\n3\r\n$-1\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n$-1\r\n$2\r\n10\r\n$-1\r\n$2\r\n-"
         "5\r\n$-1\r\n$1\r\nx\r\n$-1\r\n",
         "*12\r\n$1\r\n3\r\n_\r\n$1\r\n1\r\n_\r\n$1\r\n2\r\n_\r\n$2\r\n10\r\n_\r\n$2\r\n-5\r\n_"
         "\r\n$1\r\nx\r\n_\r\n"},
        {"SORT l BY nosort DESC LIMIT 1 3 STORE d", ":3\r\n", NULL},
        {"LRANGE d 0 -1", "*3\r\n$2\r\n-5\r\n$2\r\n10\r\n$1\r\n2\r\n", NULL},
        {"SORT l BY # DESC",
         "*6\r\n$1\r\nx\r\n$2\r\n-5\r\n$2\r\n10\r\n$1\r\n2\r\n$1\r\n1\r\n$1\r\n3\r\n", NULL},
        {"SORT l BY \"\" LIMIT 5 1", "*1\r\n$1\r\nx\r\n", NULL},
        {"SORT l BY w_*->f BY nosort LIMIT 0 2", "*2\r\n$1\r\n3\r\n$1\r\n1\r\n", NULL},
        {"SORT l BY nosort BY w_* LIMIT 0 2", "*2\r\n$1\r\n3\r\n$1\r\n1\r\n", NULL},
        {"SORT nokey BY nosort LIMIT 1 1", "*0\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_sort, nosort_keeps_the_order_of_a_sorted_set_by_rank)
{
    static const step_t steps[] = {
        {"ZADD z 3 a 1 b 2 c 0 d 5 e", ":5\r\n", NULL},
        {"OBJECT ENCODING z", "$8\r\nlistpack\r\n", NULL},
        {"SORT z BY nosort", "*5\r\n$1\r\nd\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\ne\r\n", NULL},
        {"OBJECT ENCODING z", "$8\r\nskiplist\r\n", NULL},
        {"SORT z BY nosort DESC", "*5\r\n$1\r\ne\r\n$1\r\na\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\nd\r\n",
         NULL},
        {"SORT z BY nosort LIMIT 1 2", "*2\r\n$1\r\nb\r\n$1\r\nc\r\n", NULL},
        {"SORT z BY nosort DESC LIMIT 1 2", "*2\r\n$1\r\na\r\n$1\r\nc\r\n", NULL},
        {"SORT z BY nosort LIMIT 3 10", "*2\r\n$1\r\na\r\n$1\r\ne\r\n", NULL},
        {"SORT z BY nosort DESC LIMIT 3 10", "*2\r\n$1\r\nb\r\n$1\r\nd\r\n", NULL},
        {"SORT z BY nosort LIMIT 5 10", "*0\r\n", NULL},
        {"SORT z BY nosort DESC LIMIT 5 10", "*0\r\n", NULL},
        {"SORT z BY nosort LIMIT 0 0", "*0\r\n", NULL},
        {"SORT z BY nosort LIMIT -3 -3",
         "*5\r\n$1\r\nd\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\ne\r\n", NULL},
        {"SORT z BY nosort GET # GET nokey_*",
         "*10\r\n$1\r\nd\r\n$-1\r\n$1\r\nb\r\n$-1\r\n$1\r\nc\r\n$-1\r\n$1\r\na\r\n$-1\r\n$"
         "1\r\ne\r\n$-1\r\n",
         "*10\r\n$1\r\nd\r\n_\r\n$1\r\nb\r\n_\r\n$1\r\nc\r\n_\r\n$1\r\na\r\n_\r\n$1\r\ne\r\n_\r\n"},
        {"SORT z BY nosort DESC LIMIT 0 2 STORE d", ":2\r\n", NULL},
        {"LRANGE d 0 -1", "*2\r\n$1\r\ne\r\n$1\r\na\r\n", NULL},
        {"SORT z ALPHA", "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n", NULL},
        {"SORT z ALPHA DESC LIMIT 1 2", "*2\r\n$1\r\nd\r\n$1\r\nc\r\n", NULL},
        {"SORT z", "-ERR One or more scores can't be converted into double\r\n", NULL},
        {"ZADD n 1 10 2 5 3 7 4 -1.5", ":4\r\n", NULL},
        {"SORT n", "*4\r\n$4\r\n-1.5\r\n$1\r\n5\r\n$1\r\n7\r\n$2\r\n10\r\n", NULL},
        {"SORT n DESC LIMIT 0 2", "*2\r\n$2\r\n10\r\n$1\r\n7\r\n", NULL},
        {"SORT_RO n BY nosort DESC", "*4\r\n$4\r\n-1.5\r\n$1\r\n7\r\n$1\r\n5\r\n$2\r\n10\r\n",
         NULL},
        {"OBJECT ENCODING n", "$8\r\nskiplist\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_sort, sets_sort_and_nosort_with_store_sorts_alpha)
{
    static const step_t steps[] = {
        {"SADD si 5 3 -1 100 7", ":5\r\n", NULL},
        {"SORT si", "*5\r\n$2\r\n-1\r\n$1\r\n3\r\n$1\r\n5\r\n$1\r\n7\r\n$3\r\n100\r\n", NULL},
        {"SORT si DESC", "*5\r\n$3\r\n100\r\n$1\r\n7\r\n$1\r\n5\r\n$1\r\n3\r\n$2\r\n-1\r\n", NULL},
        {"SORT si ALPHA", "*5\r\n$2\r\n-1\r\n$3\r\n100\r\n$1\r\n3\r\n$1\r\n5\r\n$1\r\n7\r\n", NULL},
        {"SORT si BY nosort", "*5\r\n$2\r\n-1\r\n$1\r\n3\r\n$1\r\n5\r\n$1\r\n7\r\n$3\r\n100\r\n",
         NULL},
        {"SORT si BY nosort LIMIT 1 2", "*2\r\n$1\r\n3\r\n$1\r\n5\r\n", NULL},
        {"SORT si BY nosort STORE d", ":5\r\n", NULL},
        {"LRANGE d 0 -1", "*5\r\n$2\r\n-1\r\n$3\r\n100\r\n$1\r\n3\r\n$1\r\n5\r\n$1\r\n7\r\n", NULL},
        {"SORT si BY nosort DESC STORE d", ":5\r\n", NULL},
        {"LRANGE d 0 -1", "*5\r\n$1\r\n7\r\n$1\r\n5\r\n$1\r\n3\r\n$3\r\n100\r\n$2\r\n-1\r\n", NULL},
        {"SORT si BY nosort GET # GET nokey_* LIMIT 0 2 STORE d", ":4\r\n", NULL},
        {"LRANGE d 0 -1", "*4\r\n$2\r\n-1\r\n$0\r\n\r\n$3\r\n100\r\n$0\r\n\r\n", NULL},
        {"OBJECT ENCODING si", "$6\r\nintset\r\n", NULL},
        {"SADD sh a c b 10 2 B", ":6\r\n", NULL},
        {"SORT sh ALPHA",
         "*6\r\n$2\r\n10\r\n$1\r\n2\r\n$1\r\nB\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", NULL},
        {"SORT sh ALPHA DESC LIMIT 1 3", "*3\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\nB\r\n", NULL},
        {"SORT sh", "-ERR One or more scores can't be converted into double\r\n", NULL},
        {"SORT sh BY nosort STORE d", ":6\r\n", NULL},
        {"LRANGE d 0 -1",
         "*6\r\n$2\r\n10\r\n$1\r\n2\r\n$1\r\nB\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", NULL},
        {"SORT sh BY nosort DESC LIMIT 1 2 STORE d", ":2\r\n", NULL},
        {"LRANGE d 0 -1", "*2\r\n$1\r\nb\r\n$1\r\na\r\n", NULL},
        {"SORT_RO sh ALPHA LIMIT 0 2", "*2\r\n$2\r\n10\r\n$1\r\n2\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_sort, by_string_weights)
{
    static const step_t steps[] = {
        {"RPUSH l b a c d e", ":5\r\n", NULL},
        {"MSET w_a 3 w_b 1 w_c 2 w_d 1.5", "+OK\r\n", NULL},
        {"SORT l BY w_*", "*5\r\n$1\r\ne\r\n$1\r\nb\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\na\r\n", NULL},
        {"SORT l BY w_* DESC", "*5\r\n$1\r\na\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\nb\r\n$1\r\ne\r\n",
         NULL},
        {"SORT l BY w_* GET #", "*5\r\n$1\r\ne\r\n$1\r\nb\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\na\r\n",
         NULL},
        {"SORT l BY w_* GET # GET w_*",
         "*10\r\n$1\r\ne\r\n$-1\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\nd\r\n$3\r\n1.5\r\n$1\r\nc\r\n$"
         "1\r\n2\r\n$1\r\na\r\n$1\r\n3\r\n",
         "*10\r\n$1\r\ne\r\n_\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\nd\r\n$3\r\n1.5\r\n$1\r\nc\r\n$"
         "1\r\n2\r\n$1\r\na\r\n$1\r\n3\r\n"},
        {"SORT l BY w_* GET w_* GET # LIMIT 1 2",
         "*4\r\n$1\r\n1\r\n$1\r\nb\r\n$3\r\n1.5\r\n$1\r\nd\r\n", NULL},
        {"SORT l BY w_* LIMIT 1 3", "*3\r\n$1\r\nb\r\n$1\r\nd\r\n$1\r\nc\r\n", NULL},
        {"SORT l BY w_* ALPHA", "*5\r\n$1\r\ne\r\n$1\r\nb\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\na\r\n",
         NULL},
        {"SORT l BY w_* ALPHA DESC",
         "*5\r\n$1\r\na\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\nb\r\n$1\r\ne\r\n", NULL},
        {"SORT l BY x_*", "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n", NULL},
        {"SORT l BY x_* DESC", "*5\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n",
         NULL},
        {"SORT l BY x_* ALPHA", "*5\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n",
         NULL},
        {"SORT l BY x_* ALPHA DESC",
         "*5\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n", NULL},
        {"SORT l BY w_* STORE d", ":5\r\n", NULL},
        {"LRANGE d 0 -1", "*5\r\n$1\r\ne\r\n$1\r\nb\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\na\r\n", NULL},
        {"SORT l BY w_* ALPHA STORE d", ":5\r\n", NULL},
        {"LRANGE d 0 -1", "*5\r\n$1\r\ne\r\n$1\r\nb\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\na\r\n", NULL},
        {"SET w_c notanumber", "+OK\r\n", NULL},
        {"SORT l BY w_*", "-ERR One or more scores can't be converted into double\r\n", NULL},
        {"SORT l BY w_* ALPHA GET w_*",
         "*5\r\n$-1\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n3\r\n$10\r\nnotanumber\r\n",
         "*5\r\n_\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n3\r\n$10\r\nnotanumber\r\n"},
        {"RPUSH w_e 1", ":1\r\n", NULL},
        {"SORT l BY w_* ALPHA GET w_*",
         "*5\r\n$-1\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n3\r\n$10\r\nnotanumber\r\n",
         "*5\r\n_\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n3\r\n$10\r\nnotanumber\r\n"},
        {"MSET a 9 b 8 c 7 d 6 e 5", "+OK\r\n", NULL},
        {"SORT l BY *", "*5\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n", NULL},
        {"SORT l BY * GET *", "*5\r\n$1\r\n5\r\n$1\r\n6\r\n$1\r\n7\r\n$1\r\n8\r\n$1\r\n9\r\n",
         NULL},
        {"SORT l BY *w BY w_* ALPHA",
         "*5\r\n$1\r\ne\r\n$1\r\nb\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nc\r\n", NULL},
        {"SET w_ 1", "+OK\r\n", NULL},
        {"RPUSH emp \"\" x", ":2\r\n", NULL},
        {"SORT emp BY w_* GET w_*", "*2\r\n$-1\r\n$1\r\n1\r\n", "*2\r\n_\r\n$1\r\n1\r\n"},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_sort, by_and_get_hash_fields)
{
    static const step_t steps[] = {
        {"RPUSH l a b c d", ":4\r\n", NULL},
        {"HSET h_a f 5 g z", ":2\r\n", NULL},
        {"HSET h_b f 1 g y", ":2\r\n", NULL},
        {"HSET h_c f 3 g x", ":2\r\n", NULL},
        {"SET h_d plain", "+OK\r\n", NULL},
        {"SORT l BY h_*->f GET # GET h_*->g GET h_*->f",
         "*12\r\n$1\r\nd\r\n$-1\r\n$-1\r\n$1\r\nb\r\n$1\r\ny\r\n$1\r\n1\r\n$1\r\nc\r\n$1\r\nx\r\n$"
         "1\r\n3\r\n$1\r\na\r\n$1\r\nz\r\n$1\r\n5\r\n",
         "*12\r\n$1\r\nd\r\n_\r\n_\r\n$1\r\nb\r\n$1\r\ny\r\n$1\r\n1\r\n$1\r\nc\r\n$1\r\nx\r\n$"
         "1\r\n3\r\n$1\r\na\r\n$1\r\nz\r\n$1\r\n5\r\n"},
        {"SORT l BY h_*->f DESC GET h_*->f", "*4\r\n$1\r\n5\r\n$1\r\n3\r\n$1\r\n1\r\n$-1\r\n",
         "*4\r\n$1\r\n5\r\n$1\r\n3\r\n$1\r\n1\r\n_\r\n"},
        {"SORT l BY h_*->g ALPHA GET # GET h_*->nofield",
         "*8\r\n$1\r\nd\r\n$-1\r\n$1\r\nc\r\n$-1\r\n$1\r\nb\r\n$-1\r\n$1\r\na\r\n$-1\r\n",
         "*8\r\n$1\r\nd\r\n_\r\n$1\r\nc\r\n_\r\n$1\r\nb\r\n_\r\n$1\r\na\r\n_\r\n"},
        {"SORT l BY h_*->g ALPHA DESC LIMIT 0 2 GET h_*->g", "*2\r\n$1\r\nz\r\n$1\r\ny\r\n", NULL},
        {"SORT l BY h_*-> GET #", "*4\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n", NULL},
        {"SORT l BY h_* ALPHA GET #", "*4\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n", NULL},
        {"SORT l ALPHA GET h_*->", "*4\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n",
         "*4\r\n_\r\n_\r\n_\r\n_\r\n"},
        {"SORT l ALPHA GET *->f", "*4\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n",
         "*4\r\n_\r\n_\r\n_\r\n_\r\n"},
        {"SORT l ALPHA GET h_*->f->g", "*4\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n",
         "*4\r\n_\r\n_\r\n_\r\n_\r\n"},
        {"SORT l ALPHA GET h_*", "*4\r\n$-1\r\n$-1\r\n$-1\r\n$5\r\nplain\r\n",
         "*4\r\n_\r\n_\r\n_\r\n$5\r\nplain\r\n"},
        {"SORT l ALPHA GET h_*->f GET #",
         "*8\r\n$1\r\n5\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n3\r\n$1\r\nc\r\n$-1\r\n$"
         "1\r\nd\r\n",
         "*8\r\n$1\r\n5\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n3\r\n$1\r\nc\r\n_\r\n$"
         "1\r\nd\r\n"},
        {"HSET h_a f->g deep", ":1\r\n", NULL},
        {"SORT l ALPHA GET h_*->f->g", "*4\r\n$4\r\ndeep\r\n$-1\r\n$-1\r\n$-1\r\n",
         "*4\r\n$4\r\ndeep\r\n_\r\n_\r\n_\r\n"},
        {"SORT l ALPHA GET h-*->f", "*4\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n",
         "*4\r\n_\r\n_\r\n_\r\n_\r\n"},
        {"HSET hbig f 1 x 0123456789012345678901234567890123456789012345678901234567890123456789",
         ":2\r\n", NULL},
        {"OBJECT ENCODING hbig", "$9\r\nhashtable\r\n", NULL},
        {"RPUSH l2 big", ":1\r\n", NULL},
        {"SORT l2 BY h*->f GET h*->x GET h*->f",
         "*2\r\n$70\r\n0123456789012345678901234567890123456789012345678901234567890123456789\r\n$"
         "1\r\n1\r\n",
         NULL},
        {"SORT l2 ALPHA GET *->x", "*1\r\n$-1\r\n", "*1\r\n_\r\n"},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_sort, get_patterns)
{
    static const step_t steps[] = {
        {"RPUSH l b a c", ":3\r\n", NULL},
        {"MSET s_a 1 s_b 2", "+OK\r\n", NULL},
        {"SORT l ALPHA GET #", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", NULL},
        {"SORT l ALPHA GET # GET #",
         "*6\r\n$1\r\na\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nc\r\n", NULL},
        {"SORT l ALPHA GET ##", "*3\r\n$-1\r\n$-1\r\n$-1\r\n", "*3\r\n_\r\n_\r\n_\r\n"},
        {"SORT l ALPHA GET #*", "*3\r\n$-1\r\n$-1\r\n$-1\r\n", "*3\r\n_\r\n_\r\n_\r\n"},
        {"SORT l ALPHA GET nostar", "*3\r\n$-1\r\n$-1\r\n$-1\r\n", "*3\r\n_\r\n_\r\n_\r\n"},
        {"SORT l ALPHA GET s_*", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n",
         "*3\r\n$1\r\n1\r\n$1\r\n2\r\n_\r\n"},
        {"SORT l ALPHA GET s_* GET # GET nostar",
         "*9\r\n$1\r\n1\r\n$1\r\na\r\n$-1\r\n$1\r\n2\r\n$1\r\nb\r\n$-1\r\n$-1\r\n$1\r\nc\r\n$-"
         "1\r\n",
         "*9\r\n$1\r\n1\r\n$1\r\na\r\n_\r\n$1\r\n2\r\n$1\r\nb\r\n_\r\n_\r\n$1\r\nc\r\n_\r\n"},
        {"SORT l ALPHA GET *", "*3\r\n$-1\r\n$-1\r\n$-1\r\n", "*3\r\n_\r\n_\r\n_\r\n"},
        {"SORT l ALPHA GET s_*_x", "*3\r\n$-1\r\n$-1\r\n$-1\r\n", "*3\r\n_\r\n_\r\n_\r\n"},
        {"SORT l ALPHA GET s_*->", "*3\r\n$-1\r\n$-1\r\n$-1\r\n", "*3\r\n_\r\n_\r\n_\r\n"},
        {"SORT l ALPHA GET ** ", "*3\r\n$-1\r\n$-1\r\n$-1\r\n", "*3\r\n_\r\n_\r\n_\r\n"},
        {"SORT l ALPHA GET s_* STORE d", ":3\r\n", NULL},
        {"LRANGE d 0 -1", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$0\r\n\r\n", NULL},
        {"SORT l ALPHA GET nostar STORE d", ":3\r\n", NULL},
        {"LRANGE d 0 -1", "*3\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n", NULL},
        {"RPUSH l3 \"a->\" \"->\" \"-\"", ":3\r\n", NULL},
        {"SORT l3 ALPHA GET *->", "*3\r\n$-1\r\n$-1\r\n$-1\r\n", "*3\r\n_\r\n_\r\n_\r\n"},
        {"SORT l3 ALPHA GET \"*\"", "*3\r\n$-1\r\n$-1\r\n$-1\r\n", "*3\r\n_\r\n_\r\n_\r\n"},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_sort, patterns_are_c_strings)
{
    static const step_t steps[] = {
        {"RPUSH l a b", ":2\r\n", NULL},
        {"MSET s_a 1 s_b 2 \"s_a\\x00x\" 3", "+OK\r\n", NULL},
        {"SORT l ALPHA GET \"#\\x00x\"", "*2\r\n$1\r\na\r\n$1\r\nb\r\n", NULL},
        {"SORT l ALPHA GET \"s_*\\x00x\"", "*2\r\n$1\r\n3\r\n$-1\r\n", "*2\r\n$1\r\n3\r\n_\r\n"},
        {"SORT l ALPHA GET \"s_\\x00*\"", "*2\r\n$-1\r\n$-1\r\n", "*2\r\n_\r\n_\r\n"},
        {"SORT l BY \"x\\x00*\" GET #", "*2\r\n$1\r\na\r\n$1\r\nb\r\n", NULL},
        {"SORT l BY \"s_*\\x00x\" DESC", "*2\r\n$1\r\na\r\n$1\r\nb\r\n", NULL},
        {"HSET h_a f 1 \"f\\x00g\" 2", ":2\r\n", NULL},
        {"HSET h_b f 3 \"f\\x00g\" 0", ":2\r\n", NULL},
        {"SORT l BY \"h_*->f\\x00g\" GET \"h_*->f\\x00g\"", "*2\r\n$1\r\n0\r\n$1\r\n2\r\n", NULL},
        {"SORT l GET \"h_*->\\x00f\" ALPHA", "*2\r\n$-1\r\n$-1\r\n", "*2\r\n_\r\n_\r\n"},
        {"SORT l GET \"h_*\\x00->f\" ALPHA", "*2\r\n$-1\r\n$-1\r\n", "*2\r\n_\r\n_\r\n"},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_sort, store_replaces_or_deletes_the_destination)
{
    static const step_t steps[] = {
        {"RPUSH l 3 1 2", ":3\r\n", NULL},
        {"SET s x", "+OK\r\n", NULL},
        {"SORT l STORE s", ":3\r\n", NULL},
        {"TYPE s", "+list\r\n", NULL},
        {"LRANGE s 0 -1", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n", NULL},
        {"SADD st a", ":1\r\n", NULL},
        {"SORT l DESC STORE st", ":3\r\n", NULL},
        {"LRANGE st 0 -1", "*3\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n1\r\n", NULL},
        {"SORT nokey STORE st", ":0\r\n", NULL},
        {"EXISTS st", ":0\r\n", NULL},
        {"SORT nokey STORE st", ":0\r\n", NULL},
        {"SORT l LIMIT 0 0 STORE l", ":0\r\n", NULL},
        {"EXISTS l", ":0\r\n", NULL},
        {"RPUSH l 3 1 2", ":3\r\n", NULL},
        {"SORT l STORE l", ":3\r\n", NULL},
        {"LRANGE l 0 -1", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n", NULL},
        {"SORT l STORE a STORE b", ":3\r\n", NULL},
        {"EXISTS a", ":0\r\n", NULL},
        {"LRANGE b 0 -1", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n", NULL},
        {"SORT l GET # GET nokey_* STORE d", ":6\r\n", NULL},
        {"LRANGE d 0 -1", "*6\r\n$1\r\n1\r\n$0\r\n\r\n$1\r\n2\r\n$0\r\n\r\n$1\r\n3\r\n$0\r\n\r\n",
         NULL},
        {"SET t v", "+OK\r\n", NULL},
        {"EXPIRE t 100", ":1\r\n", NULL},
        {"SORT l STORE t", ":3\r\n", NULL},
        {"TTL t", ":-1\r\n", NULL},
        {"SORT l store d2 LIMIT 1 1", ":1\r\n", NULL},
        {"LRANGE d2 0 -1", "*1\r\n$1\r\n2\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_sort, command_getkeys)
{
    static const step_t steps[] = {
        {"COMMAND GETKEYS SORT a", "*1\r\n$1\r\na\r\n", NULL},
        {"COMMAND GETKEYS SORT a STORE b", "*2\r\n$1\r\na\r\n$1\r\nb\r\n", NULL},
        {"COMMAND GETKEYS SORT a STORE b LIMIT 1 2 STORE c", "*2\r\n$1\r\na\r\n$1\r\nc\r\n", NULL},
        {"COMMAND GETKEYS SORT a STORE", "*1\r\n$1\r\na\r\n", NULL},
        {"COMMAND GETKEYS SORT a GET store x", "*1\r\n$1\r\na\r\n", NULL},
        {"COMMAND GETKEYS SORT a BY store LIMIT store store STORE x",
         "*2\r\n$1\r\na\r\n$1\r\nx\r\n", NULL},
        {"COMMAND GETKEYS SORT a store limit 1 2", "*2\r\n$1\r\na\r\n$5\r\nlimit\r\n", NULL},
        {"COMMAND GETKEYS SORT a STORE STORE", "*2\r\n$1\r\na\r\n$5\r\nSTORE\r\n", NULL},
        {"COMMAND GETKEYS SORT_RO a BY x", "*1\r\n$1\r\na\r\n", NULL},
        {"COMMAND GETKEYS SORT_RO a STORE x", "*1\r\n$1\r\na\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_sort, option_words_end_at_a_nul)
{
    static const step_t steps[] = {
        {"RPUSH l b a c", ":3\r\n", NULL},
        {"SORT l \"alpha\\x00x\"", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", NULL},
        {"SORT l \"ALPHA\\x00\" \"desc\\x00asc\"", "*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n", NULL},
        {"SORT l \"limit\\x00\" 0 1 ALPHA", "*1\r\n$1\r\na\r\n", NULL},
        {"SORT l \"limi\\x00t\" 0 1 ALPHA", "-ERR syntax error\r\n", NULL},
        {"SORT l ALPHA \"store\\x00\" d", ":3\r\n", NULL},
        {"LRANGE d 0 -1", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", NULL},
        {"COMMAND GETKEYS SORT l \"store\\x00x\" d", "*2\r\n$1\r\nl\r\n$1\r\nd\r\n", NULL},
        {"COMMAND GETKEYS SORT l \"get\\x00\" store \"store\" d", "*2\r\n$1\r\nl\r\n$1\r\nd\r\n",
         NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

/* ---- events, statistics, large inputs ---- */

/* The keyevent notifications client sub received, as "event:key " words; clears them. */
static void take_events(client_t *sub, char *got, size_t cap)
{
    got[0] = '\0';
    char *out = xmemdup(sub->out.data ? sub->out.data : "", sub->out.len);
    buf_clear(&sub->out);
    /* each message: *4 $8 pmessage $n pattern $n __keyevent@0__:<event> $n <key> */
    for (char *p = out; (p = strstr(p, "__keyevent@0__:"));) {
        p += strlen("__keyevent@0__:");
        char *e = strstr(p, "\r\n");
        char *k = strstr(e + 2, "\r\n") + 2;
        char *ke = strstr(k, "\r\n");
        size_t n = strlen(got);
        snprintf(got + n, cap - n, "%.*s:%.*s ", (int)(e - p), p, (int)(ke - k), k);
        p = ke;
    }
    xfree(out);
}

Test(cmd_sort, keyspace_events_match_redis)
{
    client_t *sub = client_new(NULL, NULL, -1);
    run_on(sub, "PSUBSCRIBE __keyev*");
    buf_clear(&sub->out);
    expect("CONFIG SET notify-keyspace-events KEAm", "+OK\r\n");
    static const struct {
        const char *cmd, *events;
    } steps[] = {
        {"RPUSH l b a c", "rpush:l "},
        {"SET w_a 1", "set:w_a "},
        {"HSET h_b f 2", "hset:h_b "},
        {"SORT l ALPHA", ""},
        {"SORT l BY w_* GET h_*->f GET # ALPHA", "keymiss:w_b keymiss:w_c keymiss:h_c "
                                                 "keymiss:h_a "},
        {"SORT nokey", "keymiss:nokey "},
        {"SORT l ALPHA STORE d", "sortstore:d "},
        {"SORT l ALPHA LIMIT 0 0 STORE d", "del:d "},
        {"SORT l ALPHA LIMIT 0 0 STORE d", ""},
        {"SORT nokey STORE d", "keymiss:nokey "},
        {"SORT l BY nosort GET w_* STORE l", "keymiss:w_b keymiss:w_c sortstore:l "},
        {"SORT_RO l BY nosort", ""},
        {"SORT l foo", ""},
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        char got[512];
        xfree(reply_of(steps[i].cmd, NULL));
        take_events(sub, got, sizeof(got));
        cr_assert_str_eq(got, steps[i].events, "%s", steps[i].cmd);
    }
}

Test(cmd_sort, dirty_counts_every_stored_element)
{
    static const struct {
        const char *cmd;
        long long delta;
    } steps[] = {
        {"SORT l", 0},
        {"SORT l STORE d", 3},
        {"SORT l GET # GET w_* STORE d", 6},
        {"SORT l LIMIT 0 0 STORE d", 1},
        {"SORT l LIMIT 0 0 STORE d", 0},
        {"SORT nokey STORE d", 0},
        {"SORT_RO l", 0},
        {"SORT l foo STORE d", 0},
    };
    expect("RPUSH l 3 1 2", ":3\r\n");
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        long long d = srv.dirty;
        xfree(reply_of(steps[i].cmd, NULL));
        cr_assert_eq(srv.dirty - d, steps[i].delta, "%s: dirty +%lld", steps[i].cmd, srv.dirty - d);
    }
}

Test(cmd_sort, key_and_pattern_lookups_count_hits_and_misses)
{
    expect("RPUSH l a b c", ":3\r\n");
    expect("SET w_a 1", "+OK\r\n");
    expect("HSET h_b f 2", ":1\r\n");
    static const struct {
        const char *cmd;
        uint64_t hits, misses;
    } steps[] = {
        {"SORT l ALPHA", 1, 0},
        {"SORT nokey", 0, 1},
        {"SORT l BY w_* GET h_*->f GET # ALPHA", 3, 4}, /* BY: 1 hit; GET: h_b only */
        {"SORT l BY w_* GET h_*->g", 3, 4},             /* a field missing is a hit */
        {"SORT l BY nosort GET # GET nostar", 1, 0},
        {"SORT l BY w_* STORE d", 2, 2},
        {"SORT l foo", 0, 0},
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        uint64_t h = srv.stat.keyspace_hits, m = srv.stat.keyspace_misses;
        xfree(reply_of(steps[i].cmd, NULL));
        cr_assert_eq(srv.stat.keyspace_hits - h, steps[i].hits, "%s: hits", steps[i].cmd);
        cr_assert_eq(srv.stat.keyspace_misses - m, steps[i].misses, "%s: misses", steps[i].cmd);
    }
}

Test(cmd_sort, store_touches_a_watched_destination)
{
    client_t *w = client_new(NULL, NULL, -1);
    expect("RPUSH l 1", ":1\r\n");
    run_on(w, "WATCH d");
    run_on(w, "MULTI");
    run_on(w, "PING");
    buf_clear(&w->out);
    expect("SORT l STORE d", ":1\r\n");
    run_on(w, "EXEC");
    cr_assert(w->out.len == 5 && memcmp(w->out.data, "*-1\r\n", 5) == 0);
}

/* Reads a RESP2 array of bulk strings from r into out (each NUL-terminated, < 32 bytes). */
static long parse_bulks(const char *r, char (*out)[32], long max)
{
    cr_assert_eq(r[0], '*', "not an array: %.40s", r);
    long n = atol(r + 1);
    cr_assert(n <= max);
    const char *p = strstr(r, "\r\n") + 2;
    for (long i = 0; i < n; i++) {
        cr_assert_eq(p[0], '$');
        long len = atol(p + 1);
        p = strstr(p, "\r\n") + 2;
        cr_assert(len < 32);
        memcpy(out[i], p, (size_t)len);
        out[i][len] = '\0';
        p += len + 2;
    }
    return n;
}

static int cmp_ll_desc(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

Test(cmd_sort, a_long_list_of_integers_sorts_by_value)
{
    /* 5000 integers over many list nodes, each stored as an integer entry (its digits are
     * copied into several arena chunks). */
    enum { N = 5000 };
    static long long want[N];
    static char got[N][32];
    buf_t cmd;
    buf_init(&cmd);
    buf_append_str(&cmd, "RPUSH l");
    for (int i = 0; i < N; i++) {
        want[i] = (long long)((i * 7919L) % 10007) * 1000003LL - 4000000000LL;
        buf_printf(&cmd, " %lld", want[i]);
    }
    char *r = reply_of(cmd.data, NULL);
    xfree(r);
    buf_deinit(&cmd);
    qsort(want, N, sizeof(want[0]), cmp_ll_desc);
    r = reply_of("SORT l DESC", NULL);
    cr_assert_eq(parse_bulks(r, got, N), N);
    xfree(r);
    for (int i = 0; i < N; i++) cr_assert_eq(atoll(got[i]), want[i], "at %d", i);
    r = reply_of("SORT l DESC LIMIT 4990 100", NULL);
    cr_assert_eq(parse_bulks(r, got, N), 10);
    xfree(r);
    for (int i = 0; i < 10; i++) cr_assert_eq(atoll(got[i]), want[4990 + i]);
    r = reply_of("SORT l BY nosort DESC LIMIT 1 2", NULL);
    cr_assert_eq(parse_bulks(r, got, N), 2);
    xfree(r);
    char idx[64];
    snprintf(idx, sizeof(idx), "%lld",
             (long long)((4998L * 7919L) % 10007) * 1000003LL - 4000000000LL);
    cr_assert_str_eq(got[0], idx);
}

Test(cmd_sort, weights_order_a_long_set_and_ties_go_by_element)
{
    /* a hashtable set of 600 members; w_<m> = m mod 7, so every weight is shared and the
     * members break the ties bytewise */
    buf_t cmd;
    buf_init(&cmd);
    buf_append_str(&cmd, "SADD s");
    for (int i = 0; i < 600; i++) buf_printf(&cmd, " m%d", i);
    xfree(reply_of(cmd.data, NULL));
    for (int i = 0; i < 600; i++) {
        buf_clear(&cmd);
        buf_printf(&cmd, "SET w_m%d %d", i, i % 7);
        xfree(reply_of(cmd.data, NULL));
    }
    buf_deinit(&cmd);
    static char got[600][32];
    char *r = reply_of("SORT s BY w_*", NULL);
    cr_assert_eq(parse_bulks(r, got, 600), 600);
    xfree(r);
    for (int i = 1; i < 600; i++) {
        int a = atoi(got[i - 1] + 1) % 7, b = atoi(got[i] + 1) % 7;
        cr_assert(a < b || (a == b && strcmp(got[i - 1], got[i]) < 0), "%s before %s", got[i - 1],
                  got[i]);
    }
    /* the slice of a LIMIT is the same slice of the whole order */
    static char part[600][32];
    r = reply_of("SORT s BY w_* LIMIT 100 50", NULL);
    cr_assert_eq(parse_bulks(r, part, 600), 50);
    xfree(r);
    for (int i = 0; i < 50; i++) cr_assert_str_eq(part[i], got[100 + i]);
    /* nosort without STORE: every member once, in the set's own order */
    r = reply_of("SORT s BY nosort", NULL);
    cr_assert_eq(parse_bulks(r, part, 600), 600);
    xfree(r);
    static char seen[600];
    for (int i = 0; i < 600; i++) {
        int m = atoi(part[i] + 1);
        cr_assert(!seen[m]);
        seen[m] = 1;
    }
}

Test(cmd_sort, nosort_on_a_skiplist_walks_ranks)
{
    buf_t cmd;
    buf_init(&cmd);
    buf_append_str(&cmd, "ZADD z");
    for (int i = 0; i < 300; i++) buf_printf(&cmd, " %d e%d", (i * 37) % 300, i);
    xfree(reply_of(cmd.data, NULL));
    buf_deinit(&cmd);
    expect("OBJECT ENCODING z", "$8\r\nskiplist\r\n");
    static const char *pairs[][2] = {
        {"SORT z BY nosort LIMIT 10 20", "ZRANGE z 10 29"},
        {"SORT z BY nosort DESC LIMIT 10 20", "ZREVRANGE z 10 29"},
        {"SORT z BY nosort DESC LIMIT 290 20", "ZREVRANGE z 290 309"},
        {"SORT z BY nosort", "ZRANGE z 0 -1"},
        {"SORT_RO z BY nosort DESC", "ZREVRANGE z 0 -1"},
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        size_t n1, n2;
        char *a = reply_of(pairs[i][0], &n1), *b = reply_of(pairs[i][1], &n2);
        cr_assert(n1 == n2 && memcmp(a, b, n1) == 0, "%s", pairs[i][0]);
        xfree(a);
        xfree(b);
    }
}
