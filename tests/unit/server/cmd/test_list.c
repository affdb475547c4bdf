/* tests/unit/server/cmd/test_list.c - server/cmd/list.c through the socketless client: the exact
 * RESP2 and RESP3 bytes of every non-blocking list command, option and error (texts and the order
 * in which Redis checks arguments, key and type were taken from redis-server 7.0.15), deletion of
 * lists that become empty, keyspace hit/miss counting, change counting, and the helpers exported
 * for the blocking commands (reply shapes with the key, LMPOP parsing and key positions). */
#include "common/alloc.h"
#include "common/util.h"
#include "server/client.h"
#include "server/cmd/list.h"
#include "server/command.h"
#include "server/server.h"
#include "storage/db.h"
#include "storage/object.h"
#include "storage/t_list.h"

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

TestSuite(cmd_list, .init = setup, .fini = teardown);

/* Sends a command written as words separated by spaces; a word in double quotes may hold
 * spaces or be empty (""). */
static void run(const char *line)
{
    harness_send(C, line);
}

static void expect_n(const char *line, const char *want, size_t n)
{
    harness_expect_n(C, line, want, n);
}

#define EXPECT(line, lit) expect_n(line, lit, sizeof(lit) - 1)
/* The same command in RESP2 then RESP3 (state must not change between the two). */
#define EXPECT23(line, lit2, lit3)                                                                 \
    do {                                                                                           \
        int saved_resp_ = C->resp;                                                                 \
        C->resp = 2;                                                                               \
        EXPECT(line, lit2);                                                                        \
        C->resp = 3;                                                                               \
        EXPECT(line, lit3);                                                                        \
        C->resp = saved_resp_;                                                                     \
    } while (0)
/* Same bytes in both protocols. */
#define EXPECT2(line, lit) EXPECT23(line, lit, lit)

#define WRONGTYPE "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
#define NOT_INT "-ERR value is not an integer or out of range\r\n"
#define SYNTAX "-ERR syntax error\r\n"

static kv_t *find(const char *key)
{
    return db_find(C->db, key, strlen(key));
}

static void make_expired(const char *key)
{
    kv_t *kv = find(key);
    cr_assert(kv);
    db_set_expire(C->db, kv, time_ms() - 1000);
}

/* ---- push and pop ---- */

Test(cmd_list, push_and_pop_in_both_protocols)
{
    EXPECT("RPUSH l a b c", ":3\r\n");
    EXPECT("LPUSH l z", ":4\r\n");
    EXPECT2("LRANGE l 0 -1", "*4\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n");
    EXPECT("LPOP l", "$1\r\nz\r\n");
    EXPECT("RPOP l", "$1\r\nc\r\n");
    EXPECT("LPUSH l 3 2 1", ":5\r\n");
    EXPECT2("LRANGE l 0 -1", "*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\na\r\n$1\r\nb\r\n");
    EXPECT("LPOP l 2", "*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
    EXPECT("RPOP l 2", "*2\r\n$1\r\nb\r\n$1\r\na\r\n");
    EXPECT("RPOP l 10", "*1\r\n$1\r\n3\r\n");
    cr_assert_null(find("l"));
    EXPECT23("LPOP l", "$-1\r\n", "_\r\n");
    EXPECT23("RPOP l", "$-1\r\n", "_\r\n");
    /* with a count, a missing key is a null array */
    EXPECT23("LPOP l 2", "*-1\r\n", "_\r\n");
    EXPECT23("RPOP l 0", "*-1\r\n", "_\r\n");
    EXPECT("RPUSH l x", ":1\r\n");
    EXPECT2("LPOP l 0", "*0\r\n");
    EXPECT2("LLEN l", ":1\r\n");
}

Test(cmd_list, pop_count_errors)
{
    EXPECT("RPUSH l a", ":1\r\n");
    EXPECT("LPOP l abc", "-ERR value is out of range, must be positive\r\n");
    EXPECT("LPOP l -1", "-ERR value is out of range, must be positive\r\n");
    EXPECT("RPOP nokey -1", "-ERR value is out of range, must be positive\r\n");
    EXPECT("LPOP l 1 2", "-ERR wrong number of arguments for 'lpop' command\r\n");
    EXPECT("RPOP l 1 2", "-ERR wrong number of arguments for 'rpop' command\r\n");
    EXPECT("LPOP", "-ERR wrong number of arguments for 'lpop' command\r\n");
    EXPECT("SET s x", "+OK\r\n");
    EXPECT("LPOP s x", "-ERR value is out of range, must be positive\r\n");
    EXPECT("LPOP s 0", WRONGTYPE);
    EXPECT("LPOP s", WRONGTYPE);
}

Test(cmd_list, pushx_only_touches_existing_lists)
{
    EXPECT("LPUSHX l a", ":0\r\n");
    EXPECT("RPUSHX l a b", ":0\r\n");
    cr_assert_null(find("l"));
    EXPECT("RPUSH l m", ":1\r\n");
    EXPECT("LPUSHX l x y", ":3\r\n");
    EXPECT("RPUSHX l z", ":4\r\n");
    EXPECT("LRANGE l 0 -1", "*4\r\n$1\r\ny\r\n$1\r\nx\r\n$1\r\nm\r\n$1\r\nz\r\n");
    EXPECT("SET s x", "+OK\r\n");
    EXPECT("LPUSHX s a", WRONGTYPE);
    EXPECT("RPUSH s a", WRONGTYPE);
    EXPECT("LPUSH", "-ERR wrong number of arguments for 'lpush' command\r\n");
    EXPECT("LPUSHX l", "-ERR wrong number of arguments for 'lpushx' command\r\n");
    EXPECT("RPUSH l", "-ERR wrong number of arguments for 'rpush' command\r\n");
}

Test(cmd_list, type_and_encoding)
{
    EXPECT("RPUSH l 1 2 3", ":3\r\n");
    EXPECT("TYPE l", "+list\r\n");
    EXPECT("OBJECT ENCODING l", "$9\r\nquicklist\r\n");
}

/* ---- reads ---- */

Test(cmd_list, llen_lindex_lrange)
{
    EXPECT("RPUSH l a b c 1 2 3", ":6\r\n");
    EXPECT2("LLEN l", ":6\r\n");
    EXPECT2("LLEN nokey", ":0\r\n");
    EXPECT23("LINDEX nokey x", "$-1\r\n", "_\r\n");
    EXPECT("LINDEX l x", NOT_INT);
    EXPECT23("LINDEX l 10", "$-1\r\n", "_\r\n");
    EXPECT23("LINDEX l -7", "$-1\r\n", "_\r\n");
    EXPECT2("LINDEX l -1", "$1\r\n3\r\n");
    EXPECT2("LINDEX l -6", "$1\r\na\r\n");
    EXPECT2("LINDEX l 3", "$1\r\n1\r\n");
    EXPECT23("LINDEX l 9223372036854775807", "$-1\r\n", "_\r\n");
    EXPECT23("LINDEX l -9223372036854775808", "$-1\r\n", "_\r\n");
    EXPECT("LRANGE nokey x 1", NOT_INT);
    EXPECT("LRANGE l 0 x", NOT_INT);
    EXPECT2("LRANGE nokey 0 -1", "*0\r\n");
    EXPECT2("LRANGE l 5 1", "*0\r\n");
    EXPECT2("LRANGE l 6 10", "*0\r\n");
    EXPECT2("LRANGE l -3 -1", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n");
    EXPECT2("LRANGE l -100 1", "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    EXPECT2("LRANGE l 4 100", "*2\r\n$1\r\n2\r\n$1\r\n3\r\n");
    EXPECT2("LRANGE l -9223372036854775808 9223372036854775807",
            "*6\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n");
    EXPECT2("LRANGE l 9223372036854775807 -9223372036854775808", "*0\r\n");
    EXPECT("SET s x", "+OK\r\n");
    EXPECT("LLEN s", WRONGTYPE);
    EXPECT("LINDEX s x", WRONGTYPE); /* the type is checked before the index */
    EXPECT("LRANGE s x 1", NOT_INT); /* the range is parsed before the lookup */
    EXPECT("LRANGE s 0 1", WRONGTYPE);
    EXPECT("LINDEX l", "-ERR wrong number of arguments for 'lindex' command\r\n");
    EXPECT("LRANGE l 0", "-ERR wrong number of arguments for 'lrange' command\r\n");
}

Test(cmd_list, numbers_keep_their_exact_spelling)
{
    EXPECT("RPUSH l 0 -1 01 1 00 -0 +1 9223372036854775807 9223372036854775808 "
           "-9223372036854775808 1.5",
           ":11\r\n");
    EXPECT("LRANGE l 0 -1",
           "*11\r\n$1\r\n0\r\n$2\r\n-1\r\n$2\r\n01\r\n$1\r\n1\r\n$2\r\n00\r\n$2\r\n-0\r\n"
           "$2\r\n+1\r\n$19\r\n9223372036854775807\r\n$19\r\n9223372036854775808\r\n"
           "$20\r\n-9223372036854775808\r\n$3\r\n1.5\r\n");
    EXPECT("LPOS l 1", ":3\r\n");
    EXPECT("LPOS l 01", ":2\r\n");
    EXPECT("LPOS l -0", ":5\r\n");
    EXPECT("LREM l 0 1", ":1\r\n");
    EXPECT("LPOS l +1", ":5\r\n");
    EXPECT("LINDEX l 8", "$20\r\n-9223372036854775808\r\n");
}

Test(cmd_list, large_and_binary_elements)
{
    size_t big = 200000;
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "*3\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n$%zu\r\n", big);
    size_t at = b.len;
    buf_reserve(&b, big + 2);
    for (size_t i = 0; i < big; i++) b.data[at + i] = (char)(i * 31);
    b.len += big;
    buf_append(&b, "\r\n", 2);
    client_feed(C, b.data, b.len);
    cr_assert(C->out.len == 4 && memcmp(C->out.data, ":1\r\n", 4) == 0);
    buf_clear(&C->out);
    EXPECT("RPUSH l a \"\" \"b c\"", ":4\r\n");
    run("LINDEX l 0");
    char hdr[32];
    int hl = snprintf(hdr, sizeof(hdr), "$%zu\r\n", big);
    cr_assert_eq(C->out.len, (size_t)hl + big + 2);
    cr_assert(memcmp(C->out.data, hdr, (size_t)hl) == 0);
    cr_assert(memcmp(C->out.data + hl, b.data + at, big) == 0);
    buf_clear(&C->out);
    EXPECT("LRANGE l 1 -1", "*3\r\n$1\r\na\r\n$0\r\n\r\n$3\r\nb c\r\n");
    EXPECT("LPOS l \"\"", ":2\r\n");
    buf_deinit(&b);
}

/* ---- LSET LREM LTRIM LINSERT ---- */

Test(cmd_list, lset)
{
    EXPECT("LSET nokey x y", "-ERR no such key\r\n");
    EXPECT("LSET nokey 0 y", "-ERR no such key\r\n");
    EXPECT("RPUSH l a b c", ":3\r\n");
    EXPECT("LSET l x y", NOT_INT);
    EXPECT("LSET l 3 y", "-ERR index out of range\r\n");
    EXPECT("LSET l -4 y", "-ERR index out of range\r\n");
    EXPECT("LSET l -3 A", "+OK\r\n");
    EXPECT("LSET l 2 123456", "+OK\r\n");
    EXPECT("LSET l 1 \"\"", "+OK\r\n");
    EXPECT("LRANGE l 0 -1", "*3\r\n$1\r\nA\r\n$0\r\n\r\n$6\r\n123456\r\n");
    EXPECT("SET s x", "+OK\r\n");
    EXPECT("LSET s x a", WRONGTYPE);
}

Test(cmd_list, lrem_counts_from_either_end)
{
    EXPECT("LREM nokey x a", NOT_INT);
    EXPECT("LREM nokey 0 a", ":0\r\n");
    EXPECT("RPUSH t a b a c a b a", ":7\r\n");
    EXPECT("LREM t 2 a", ":2\r\n");
    EXPECT("LRANGE t 0 -1", "*5\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\na\r\n");
    EXPECT("LREM t -1 b", ":1\r\n");
    EXPECT("LRANGE t 0 -1", "*4\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\na\r\n");
    EXPECT("LREM t 0 a", ":2\r\n");
    EXPECT("LREM t 0 zz", ":0\r\n");
    EXPECT("LREM t -9223372036854775808 b", ":1\r\n");
    EXPECT("LREM t 0 c", ":1\r\n");
    cr_assert_null(find("t"));
    EXPECT("SET s x", "+OK\r\n");
    EXPECT("LREM s x a", NOT_INT);
    EXPECT("LREM s 0 a", WRONGTYPE);
}

Test(cmd_list, ltrim_keeps_a_range_and_deletes_empty_lists)
{
    EXPECT("LTRIM nokey x 1", NOT_INT);
    EXPECT("LTRIM nokey 0 1", "+OK\r\n");
    EXPECT("RPUSH t 1 2 3 4 5 6 7 8 9 10", ":10\r\n");
    EXPECT("LTRIM t 2 -3", "+OK\r\n");
    EXPECT("LRANGE t 0 -1",
           "*6\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n$1\r\n7\r\n$1\r\n8\r\n");
    EXPECT("LTRIM t -2 100", "+OK\r\n");
    EXPECT("LRANGE t 0 -1", "*2\r\n$1\r\n7\r\n$1\r\n8\r\n");
    EXPECT("LTRIM t 1 0", "+OK\r\n");
    cr_assert_null(find("t"));
    EXPECT("RPUSH t a", ":1\r\n");
    EXPECT("LTRIM t 100 200", "+OK\r\n");
    cr_assert_null(find("t"));
    EXPECT("SET s x", "+OK\r\n");
    EXPECT("LTRIM s x 1", NOT_INT);
    EXPECT("LTRIM s 0 1", WRONGTYPE);
}

Test(cmd_list, linsert)
{
    EXPECT("LINSERT nokey middle a b", SYNTAX);
    EXPECT("LINSERT nokey before a b", ":0\r\n");
    EXPECT("RPUSH l a b c", ":3\r\n");
    EXPECT("LINSERT l before zz x", ":-1\r\n");
    EXPECT("LINSERT l BEFORE b x", ":4\r\n");
    EXPECT("LINSERT l After c y", ":5\r\n");
    EXPECT("LINSERT l after a 42", ":6\r\n");
    EXPECT("LRANGE l 0 -1",
           "*6\r\n$1\r\na\r\n$2\r\n42\r\n$1\r\nx\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\ny\r\n");
    EXPECT("LINSERT l after 42 \"\"", ":7\r\n");
    EXPECT("LINDEX l 2", "$0\r\n\r\n");
    EXPECT("SET s x", "+OK\r\n");
    EXPECT("LINSERT s before a b", WRONGTYPE);
    EXPECT("LINSERT s bad a b", SYNTAX);
}

/* ---- LPOS ---- */

Test(cmd_list, lpos_options_and_errors)
{
    EXPECT("LPOS nokey a rank 0",
           "-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
           "or use negative to start from the end of the list\r\n");
    EXPECT23("LPOS nokey a", "$-1\r\n", "_\r\n");
    EXPECT2("LPOS nokey a count 0", "*0\r\n");
    EXPECT("RPUSH l a b a c a", ":5\r\n");
    EXPECT("LPOS l a rank x", NOT_INT);
    EXPECT("LPOS l a rank -9223372036854775809", NOT_INT);
    EXPECT("LPOS l a count -1", "-ERR COUNT can't be negative\r\n");
    EXPECT("LPOS l a count x", "-ERR COUNT can't be negative\r\n");
    EXPECT("LPOS l a count 9223372036854775808", "-ERR COUNT can't be negative\r\n");
    EXPECT("LPOS l a maxlen -1", "-ERR MAXLEN can't be negative\r\n");
    EXPECT("LPOS l a maxlen x", "-ERR MAXLEN can't be negative\r\n");
    EXPECT("LPOS l a foo", SYNTAX);
    EXPECT("LPOS l a rank", SYNTAX);
    EXPECT("LPOS l", "-ERR wrong number of arguments for 'lpos' command\r\n");

    EXPECT2("LPOS l a", ":0\r\n");
    EXPECT2("LPOS l c", ":3\r\n");
    EXPECT23("LPOS l zz", "$-1\r\n", "_\r\n");
    EXPECT2("LPOS l zz count 2", "*0\r\n");
    EXPECT23("LPOS l A", "$-1\r\n", "_\r\n");
    EXPECT2("LPOS l a rank 2", ":2\r\n");
    EXPECT2("LPOS l a rank 3", ":4\r\n");
    EXPECT23("LPOS l a rank 4", "$-1\r\n", "_\r\n");
    EXPECT2("LPOS l a rank -1", ":4\r\n");
    EXPECT2("LPOS l a rank -3 count 5", "*1\r\n:0\r\n");
    EXPECT2("LPOS l a count 0", "*3\r\n:0\r\n:2\r\n:4\r\n");
    EXPECT2("LPOS l a count 0 count 1", "*1\r\n:0\r\n");
    EXPECT2("LPOS l a rank -2 count 0", "*2\r\n:2\r\n:0\r\n");
    EXPECT2("LPOS l a rank 2 count 0 maxlen 3", "*1\r\n:2\r\n");
    EXPECT2("LPOS l a rank 1 count 1 maxlen 1", "*1\r\n:0\r\n");
    EXPECT2("LPOS l a maxlen 2 rank -1", ":4\r\n");
    EXPECT23("LPOS l a rank -1 maxlen 0", ":4\r\n", ":4\r\n");
    EXPECT2("LPOS l a rank 2 count 0 rank 1", "*3\r\n:0\r\n:2\r\n:4\r\n");
    EXPECT2("LPOS l a maxlen 0 count 0", "*3\r\n:0\r\n:2\r\n:4\r\n");
    EXPECT2("LPOS l c count 1 rank -1", "*1\r\n:3\r\n");
    EXPECT23("LPOS l c maxlen 3", "$-1\r\n", "_\r\n");
    EXPECT2("LPOS l a rank 9223372036854775807 count 0", "*0\r\n");
    /* Redis 7.0 accepts the smallest rank and wraps: every match, from the tail */
    EXPECT2("LPOS l a rank -9223372036854775808", ":4\r\n");
    EXPECT2("LPOS l a rank -9223372036854775808 count 2", "*3\r\n:4\r\n:2\r\n:0\r\n");
    EXPECT("SET s x", "+OK\r\n");
    EXPECT("LPOS s a", WRONGTYPE);
    EXPECT("LPOS s a rank 0",
           "-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
           "or use negative to start from the end of the list\r\n");
}

/* ---- LMOVE RPOPLPUSH ---- */

Test(cmd_list, lmove_and_rpoplpush)
{
    EXPECT("SET s x", "+OK\r\n");
    EXPECT23("LMOVE nokey s left right", "$-1\r\n", "_\r\n"); /* dst type not looked at */
    EXPECT23("RPOPLPUSH nokey s", "$-1\r\n", "_\r\n");
    EXPECT("LMOVE nokey l up right", SYNTAX);
    EXPECT("LMOVE l l left up", SYNTAX);
    EXPECT("RPUSH l a b c", ":3\r\n");
    EXPECT("LMOVE l s left right", WRONGTYPE);
    EXPECT("RPOPLPUSH l s", WRONGTYPE);
    EXPECT("LMOVE s l left right", WRONGTYPE);
    EXPECT("LLEN l", ":3\r\n"); /* nothing moved */
    EXPECT("RPOPLPUSH l l", "$1\r\nc\r\n");
    EXPECT("LRANGE l 0 -1", "*3\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nb\r\n");
    EXPECT("LMOVE l l LEFT right", "$1\r\nc\r\n");
    EXPECT("LMOVE l l left left", "$1\r\na\r\n");
    EXPECT("LMOVE l l right right", "$1\r\nc\r\n");
    EXPECT("LRANGE l 0 -1", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n");
    EXPECT("LMOVE l d right left", "$1\r\nc\r\n");
    EXPECT("LMOVE l d Left Right", "$1\r\na\r\n");
    EXPECT("RPOPLPUSH l d", "$1\r\nb\r\n");
    cr_assert_null(find("l"));
    EXPECT("LRANGE d 0 -1", "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n");
    /* a one-element list moved onto itself stays */
    EXPECT("RPUSH one x", ":1\r\n");
    EXPECT("LMOVE one one right left", "$1\r\nx\r\n");
    EXPECT("LRANGE one 0 -1", "*1\r\n$1\r\nx\r\n");
    EXPECT("LMOVE", "-ERR wrong number of arguments for 'lmove' command\r\n");
    EXPECT("RPOPLPUSH a", "-ERR wrong number of arguments for 'rpoplpush' command\r\n");
}

Test(cmd_list, lmove_of_long_elements_between_and_within_lists)
{
    char line[600];
    char v[301];
    memset(v, 'q', 300);
    v[300] = '\0';
    snprintf(line, sizeof(line), "RPUSH l %s b", v);
    EXPECT("RPUSH l a", ":1\r\n");
    run(line);
    buf_clear(&C->out);
    EXPECT("LMOVE l l left right", "$1\r\na\r\n");
    char want[400];
    int n = snprintf(want, sizeof(want), "$300\r\n%s\r\n", v);
    expect_n("LMOVE l l left right", want, (size_t)n);
    expect_n("LMOVE l m right left", want, (size_t)n);
    expect_n("LMOVE l m right left", "$1\r\na\r\n", 7);
    EXPECT("LRANGE l 0 -1", "*1\r\n$1\r\nb\r\n");
}

/* ---- LMPOP ---- */

Test(cmd_list, lmpop_parsing_errors)
{
    EXPECT("RPUSH l a b c", ":3\r\n");
    EXPECT("LMPOP 0 l left", "-ERR numkeys should be greater than 0\r\n");
    EXPECT("LMPOP x l left", "-ERR numkeys should be greater than 0\r\n");
    EXPECT("LMPOP -1 l left", "-ERR numkeys should be greater than 0\r\n");
    EXPECT("LMPOP 2 l left", SYNTAX);
    EXPECT("LMPOP 9223372036854775807 l left", SYNTAX);
    EXPECT("LMPOP 1 l", "-ERR wrong number of arguments for 'lmpop' command\r\n");
    EXPECT("LMPOP 1 l up", SYNTAX);
    EXPECT("LMPOP 1 l left count 0", "-ERR count should be greater than 0\r\n");
    EXPECT("LMPOP 1 l left count x", "-ERR count should be greater than 0\r\n");
    EXPECT("LMPOP 1 l left count 9223372036854775808", "-ERR count should be greater than 0\r\n");
    EXPECT("LMPOP 1 l left count 1 count 1", SYNTAX);
    EXPECT("LMPOP 1 l left foo", SYNTAX);
    EXPECT("LMPOP 1 l left count", SYNTAX);
    EXPECT("LLEN l", ":3\r\n");
}

Test(cmd_list, lmpop_pops_from_the_first_non_empty_list)
{
    EXPECT("SET s x", "+OK\r\n");
    EXPECT23("LMPOP 1 nokey left", "*-1\r\n", "_\r\n");
    EXPECT("RPUSH l a b c", ":3\r\n");
    EXPECT("LMPOP 2 nokey l right count 2", "*2\r\n$1\r\nl\r\n*2\r\n$1\r\nc\r\n$1\r\nb\r\n");
    EXPECT("LMPOP 2 s l left", WRONGTYPE);
    C->resp = 3;
    EXPECT("LMPOP 2 nokey l right count 5", "*2\r\n$1\r\nl\r\n*1\r\n$1\r\na\r\n");
    C->resp = 2;
    cr_assert_null(find("l"));
    EXPECT("RPUSH l a b", ":2\r\n");
    EXPECT("LMPOP 2 l s LEFT", "*2\r\n$1\r\nl\r\n*1\r\n$1\r\na\r\n");
    EXPECT("LMPOP 3 nokey nokey2 s left", WRONGTYPE);
    EXPECT("LMPOP 1", "-ERR wrong number of arguments for 'lmpop' command\r\n");
}

Test(cmd_list, lmpop_key_positions)
{
    EXPECT("COMMAND GETKEYS LMPOP 2 a b left count 3", "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    resp_arg_t argv[5] = {{"lmpop", 5}, {"2", 1}, {"a", 1}, {"b", 1}, {"left", 4}};
    int pos[8];
    cr_assert_eq(list_mpop_getkeys(5, argv, pos, 8, 1), 2);
    cr_assert(pos[0] == 2 && pos[1] == 3);
    argv[1].ptr = "4";
    cr_assert_eq(list_mpop_getkeys(5, argv, pos, 8, 1), 0);
    argv[1].ptr = "0";
    cr_assert_eq(list_mpop_getkeys(5, argv, pos, 8, 1), 0);
    /* the BLMPOP form: numkeys after the timeout */
    resp_arg_t bargv[5] = {{"blmpop", 6}, {"0", 1}, {"1", 1}, {"k", 1}, {"left", 4}};
    cr_assert_eq(list_mpop_getkeys(5, bargv, pos, 8, 2), 1);
    cr_assert_eq(pos[0], 3);
}

/* ---- helpers for the blocking commands ---- */

Test(cmd_list, pop_helper_reply_shapes)
{
    EXPECT("RPUSH k a b c d e", ":5\r\n");
    resp_arg_t key = {"k", 1};
    kv_t *kv = find("k");
    cr_assert_eq(list_pop_and_reply(C, kv, &key, LIST_HEAD, -1, 1), 0);
    cr_assert_eq(C->out.len, 18);
    cr_assert(memcmp(C->out.data, "*2\r\n$1\r\nk\r\n$1\r\na\r\n", 18) == 0);
    buf_clear(&C->out);
    cr_assert_eq(list_pop_and_reply(C, kv, &key, LIST_TAIL, 2, 1), 0);
    const char *w = "*2\r\n$1\r\nk\r\n*2\r\n$1\r\ne\r\n$1\r\nd\r\n";
    cr_assert(C->out.len == strlen(w) && memcmp(C->out.data, w, strlen(w)) == 0);
    buf_clear(&C->out);
    cr_assert_eq(list_pop_and_reply(C, kv, &key, LIST_TAIL, -1, 0), 0);
    cr_assert(C->out.len == 7 && memcmp(C->out.data, "$1\r\nc\r\n", 7) == 0);
    buf_clear(&C->out);
    cr_assert_eq(list_pop_and_reply(C, kv, &key, LIST_HEAD, 5, 0), 1);
    cr_assert(C->out.len == 11 && memcmp(C->out.data, "*1\r\n$1\r\nb\r\n", 11) == 0);
    buf_clear(&C->out);
    cr_assert_null(find("k"));
}

Test(cmd_list, mpop_helpers_parse_and_serve)
{
    EXPECT("RPUSH k2 x y", ":2\r\n");
    /* parse "BLMPOP 0 2 k1 k2 RIGHT COUNT 5" as the blocking command will, from c->argv */
    resp_arg_t argv[8] = {{"blmpop", 6}, {"0", 1},     {"2", 1},     {"k1", 2},
                          {"k2", 2},     {"RIGHT", 5}, {"COUNT", 5}, {"5", 1}};
    resp_arg_t *saved = C->argv;
    int saved_argc = C->argc;
    C->argv = argv;
    C->argc = 8;
    long long numkeys, count;
    int where;
    cr_assert_eq(list_mpop_parse_or_reply(C, 2, &numkeys, &where, &count), 0);
    cr_assert(numkeys == 2 && where == LIST_TAIL && count == 5);
    C->argc = 6;
    cr_assert_eq(list_mpop_parse_or_reply(C, 2, &numkeys, &where, &count), 0);
    cr_assert_eq(count, 1);
    cr_assert_eq(C->out.len, 0);
    cr_assert_eq(list_mpop_serve(C, &argv[3], 1, LIST_HEAD, 1), 0); /* k1 missing */
    cr_assert_eq(C->out.len, 0);
    cr_assert_eq(list_mpop_serve(C, &argv[3], 2, LIST_HEAD, 1), 1);
    const char *w = "*2\r\n$2\r\nk2\r\n*1\r\n$1\r\nx\r\n";
    cr_assert(C->out.len == strlen(w) && memcmp(C->out.data, w, strlen(w)) == 0);
    buf_clear(&C->out);
    C->argv = saved;
    C->argc = saved_argc;
}

/* ---- keyspace effects ---- */

Test(cmd_list, emptied_lists_are_deleted)
{
    EXPECT("RPUSH a x", ":1\r\n");
    EXPECT("LPOP a", "$1\r\nx\r\n");
    EXPECT("EXISTS a", ":0\r\n");
    EXPECT("RPUSH a x y", ":2\r\n");
    EXPECT("RPOP a 5", "*2\r\n$1\r\ny\r\n$1\r\nx\r\n");
    EXPECT("EXISTS a", ":0\r\n");
    EXPECT("RPUSH a x x", ":2\r\n");
    EXPECT("LREM a 0 x", ":2\r\n");
    EXPECT("EXISTS a", ":0\r\n");
    EXPECT("RPUSH a x", ":1\r\n");
    EXPECT("LMOVE a b left left", "$1\r\nx\r\n");
    EXPECT("EXISTS a", ":0\r\n");
    EXPECT("LMPOP 1 b left", "*2\r\n$1\r\nb\r\n*1\r\n$1\r\nx\r\n");
    EXPECT("EXISTS b", ":0\r\n");
    cr_assert_eq(db_size(C->db), 0);
}

Test(cmd_list, expired_lists_are_gone)
{
    EXPECT("RPUSH l a b", ":2\r\n");
    make_expired("l");
    EXPECT("LLEN l", ":0\r\n");
    EXPECT("RPUSH l a b", ":2\r\n");
    make_expired("l");
    EXPECT("LPUSHX l c", ":0\r\n");
    EXPECT("RPUSH l c", ":1\r\n");
    EXPECT("LRANGE l 0 -1", "*1\r\n$1\r\nc\r\n");
    EXPECT("TTL l", ":-1\r\n");
}

Test(cmd_list, reads_count_keyspace_hits_and_misses)
{
    EXPECT("RPUSH l a b", ":2\r\n");
    uint64_t h = srv.stat.keyspace_hits, m = srv.stat.keyspace_misses;
    run("LLEN l");
    run("LLEN nokey");
    run("LRANGE l 0 -1");
    run("LINDEX nokey 0");
    run("LPOS l a");
    run("LPOS nokey a");
    cr_assert_eq(srv.stat.keyspace_hits - h, 3);
    cr_assert_eq(srv.stat.keyspace_misses - m, 3);
    h = srv.stat.keyspace_hits, m = srv.stat.keyspace_misses;
    run("RPUSH l c");
    run("LPOP l");
    run("LSET l 0 z");
    run("LREM nokey 0 a");
    run("LMOVE l x left left");
    run("LMPOP 1 nokey left");
    run("LINSERT l before z y");
    run("LTRIM l 0 -1");
    cr_assert_eq(srv.stat.keyspace_hits, h);
    cr_assert_eq(srv.stat.keyspace_misses, m);
    buf_clear(&C->out);
}

Test(cmd_list, changes_are_counted_and_no_ops_are_not)
{
    long long d = srv.dirty;
    run("RPUSH l a b c");
    cr_assert_gt(srv.dirty, d);
    d = srv.dirty;
    run("LPUSHX nokey a");
    run("LREM l 0 zz");
    run("LINSERT l before zz x");
    run("LSET l 10 x");
    run("LPOP nokey");
    run("LPOP l 0");
    run("LMOVE nokey l left left");
    run("LMPOP 1 nokey left");
    run("LRANGE l 0 -1");
    cr_assert_eq(srv.dirty, d);
    run("LSET l 0 x");
    cr_assert_gt(srv.dirty, d);
    d = srv.dirty;
    run("LINSERT l before x w");
    cr_assert_gt(srv.dirty, d);
    d = srv.dirty;
    run("LMOVE l l left right");
    cr_assert_gt(srv.dirty, d);
    buf_clear(&C->out);
}

Test(cmd_list, many_elements_span_nodes)
{
    /* 3000 pushes of 20-byte elements make several nodes; every index reads back */
    char cmd[64];
    for (int i = 0; i < 3000; i++) {
        snprintf(cmd, sizeof(cmd), "%s l element-%013d", i % 2 ? "LPUSH" : "RPUSH", i);
        run(cmd);
    }
    buf_clear(&C->out);
    EXPECT("LLEN l", ":3000\r\n");
    kv_t *kv = find("l");
    cr_assert(list_node_count(list_of(kv->val)) > 3);
    cr_assert_eq(list_verify(list_of(kv->val)), 0);
    EXPECT("LINDEX l 0", "$21\r\nelement-0000000002999\r\n");
    EXPECT("LINDEX l -1", "$21\r\nelement-0000000002998\r\n");
    EXPECT("LINDEX l 1500", "$21\r\nelement-0000000000000\r\n");
    EXPECT("LPOS l element-0000000000001 rank -1", ":1499\r\n");
    EXPECT("LINSERT l after element-0000000000000 mid", ":3001\r\n");
    EXPECT("LINDEX l 1501", "$3\r\nmid\r\n");
    EXPECT("LTRIM l 1000 -1000", "+OK\r\n");
    EXPECT("LLEN l", ":1002\r\n");
    EXPECT("LINDEX l 501", "$3\r\nmid\r\n");
    cr_assert_eq(list_verify(list_of(find("l")->val)), 0);
}

/* A range whose reply could never fit in max-reply-bytes is refused before it is built. */
Test(cmd_list, lrange_past_max_reply_bytes_is_refused)
{
    static char line[4 * 4000 + 16];
    int n = snprintf(line, sizeof(line), "RPUSH l");
    for (int i = 0; i < 4000; i++) n += snprintf(line + n, sizeof(line) - (size_t)n, " x");
    for (int i = 0; i < 50; i++) harness_send(C, line);
    buf_clear(&C->out);
    EXPECT("LLEN l", ":200000\r\n");
    EXPECT("CONFIG SET max-reply-bytes 1mb", "+OK\r\n");
    EXPECT("LRANGE l -9223372036854775808 9223372036854775807",
           "-ERR reply of at least 1200000 bytes would exceed max-reply-bytes (1048576 bytes)\r\n");
    EXPECT("LRANGE l 0 -25000", "-ERR reply of at least 1050006 bytes would exceed "
                                "max-reply-bytes (1048576 bytes)\r\n");
    /* 169999 elements: 1.02 MB at least, but 7 bytes each really: 1.19 MB, closed */
    harness_send(C, "LRANGE l 0 -30002");
    cr_assert(C->flags & CLIENT_CLOSE_ASAP);
    cr_assert_eq(C->out.len, 0);
}
