/* tests/unit/server/cmd/test_zset.c - server/cmd/zset.c through the socketless client.
 *
 * Most tests are scenarios: a sequence of commands, each with the exact reply bytes that
 * redis-server 7.0.15 gave for it in RESP2 and in RESP3 (NULL: the same bytes). A scenario
 * runs twice on a fresh keyspace with the default encoding limits, once per protocol. They
 * cover every option and error of each command, score formatting, conversions between the
 * listpack and skiplist encodings (OBJECT ENCODING) and key deletion when a set empties.
 * The hand-written tests at the end check what is random (ZRANDMEMBER, ZSCAN over a
 * skiplist) by its properties, plus keyspace hit/miss counting. */
#include "common/alloc.h"
#include "common/util.h"
#include "server/client.h"
#include "server/command.h"
#include "server/server.h"
#include "storage/db.h"
#include "storage/object.h"
#include "storage/t_zset.h"

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

TestSuite(cmd_zset, .init = setup, .fini = teardown);

/* Sends a command written as words separated by spaces; a word in double quotes may hold
 * spaces or be empty (""). */
static void run(const char *line)
{
    harness_send(C, line);
}

static char *escaped(const char *p, size_t n)
{
    return harness_escaped(p, n);
}

/* The reply of a command as a NUL-terminated copy (caller frees). */
static char *reply_of(const char *line)
{
    buf_clear(&C->out);
    run(line);
    char *r = xmemdup(C->out.data ? C->out.data : "", C->out.len);
    buf_clear(&C->out);
    return r;
}

static void expect(const char *line, const char *want)
{
    harness_expect(C, line, want);
}

typedef harness_step_t step_t;

static void run_steps(const step_t *steps, size_t n)
{
    static const char *const prelude[] = {"CONFIG SET zset-max-listpack-entries 128", "CONFIG SET zset-max-listpack-value 64", NULL};
    harness_run_steps(C, steps, n, prelude);
}

/* ---- scenarios (expected bytes from redis-server 7.0.15) ---- */

Test(cmd_zset, zadd_counts_added_and_changed)
{
    static const step_t steps[] = {
        {"ZADD z 1 a 2 b 3 c", ":3\r\n", NULL},
        {"ZADD z 1 a", ":0\r\n", NULL},
        {"ZADD z CH 5 a 1 d", ":2\r\n", NULL},
        {"ZADD z ch 5 a", ":0\r\n", NULL},
        {"ZCARD z", ":4\r\n", NULL},
        {"ZRANGE z 0 -1 WITHSCORES",
         "*8\r\n$1\r\nd\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\na\r\n$"
         "1\r\n5\r\n",
         "*4\r\n*2\r\n$1\r\nd\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n*2\r\n$1\r\nc\r\n,3\r\n*2\r\n$"
         "1\r\na\r\n,5\r\n"},
        {"ZADD z 1 nx", ":1\r\n", NULL},
        {"ZSCORE z nx", "$1\r\n1\r\n", ",1\r\n"},
        {"ZADD z 2 \"\"", ":1\r\n", NULL},
        {"ZSCORE z \"\"", "$1\r\n2\r\n", ",2\r\n"},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, zadd_nx_xx_gt_lt)
{
    static const step_t steps[] = {
        {"ZADD z 10 a", ":1\r\n", NULL},
        {"ZADD z NX 20 a 5 b", ":1\r\n", NULL},
        {"ZADD z XX 30 a 5 c", ":0\r\n", NULL},
        {"ZADD z XX CH 31 a 5 c", ":1\r\n", NULL},
        {"ZADD z GT CH 1 a 40 b", ":1\r\n", NULL},
        {"ZADD z LT CH 50 a 1 b 7 new", ":2\r\n", NULL},
        {"ZADD z GT CH 31 a", ":0\r\n", NULL},
        {"ZRANGE z 0 -1 WITHSCORES",
         "*6\r\n$1\r\nb\r\n$1\r\n1\r\n$3\r\nnew\r\n$1\r\n7\r\n$1\r\na\r\n$2\r\n31\r\n",
         "*3\r\n*2\r\n$1\r\nb\r\n,1\r\n*2\r\n$3\r\nnew\r\n,7\r\n*2\r\n$1\r\na\r\n,31\r\n"},
        {"ZADD nokey XX 1 a", ":0\r\n", NULL},
        {"EXISTS nokey", ":0\r\n", NULL},
        {"ZADD nokey GT 1 a", ":1\r\n", NULL},
        {"ZSCORE nokey a", "$1\r\n1\r\n", ",1\r\n"},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, zadd_incr_option)
{
    static const step_t steps[] = {
        {"ZADD z INCR 5 a", "$1\r\n5\r\n", ",5\r\n"},
        {"ZADD z INCR 2.5 a", "$3\r\n7.5\r\n", ",7.5\r\n"},
        {"ZADD z INCR XX 1 b", "$-1\r\n", "_\r\n"},
        {"ZADD z INCR NX 1 a", "$-1\r\n", "_\r\n"},
        {"ZADD z INCR GT -1 a", "$-1\r\n", "_\r\n"},
        {"ZADD z INCR LT -1 a", "$3\r\n6.5\r\n", ",6.5\r\n"},
        {"ZADD z INCR LT 1 a", "$-1\r\n", "_\r\n"},
        {"ZADD nokey INCR XX 1 a", "$-1\r\n", "_\r\n"},
        {"EXISTS nokey", ":0\r\n", NULL},
        {"ZADD z INCR inf c", "$3\r\ninf\r\n", ",inf\r\n"},
        {"ZADD z INCR -inf c", "-ERR resulting score is not a number (NaN)\r\n", NULL},
        {"ZSCORE z c", "$3\r\ninf\r\n", ",inf\r\n"},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, zadd_errors_in_redis_order)
{
    static const step_t steps[] = {
        {"SET s v", "+OK\r\n", NULL},
        {"ZADD z 1", "-ERR wrong number of arguments for 'zadd' command\r\n", NULL},
        {"ZADD z 1 a 2", "-ERR syntax error\r\n", NULL},
        {"ZADD z NX XX 1 a", "-ERR XX and NX options at the same time are not compatible\r\n",
         NULL},
        {"ZADD z GT LT 1 a",
         "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n", NULL},
        {"ZADD z GT NX 1 a",
         "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n", NULL},
        {"ZADD z LT NX 1 a",
         "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n", NULL},
        {"ZADD z INCR 1 a 2 b", "-ERR INCR option supports a single increment-element pair\r\n",
         NULL},
        {"ZADD z abc a", "-ERR value is not a valid float\r\n", NULL},
        {"ZADD z nan a", "-ERR value is not a valid float\r\n", NULL},
        {"ZADD z 1 a x b", "-ERR value is not a valid float\r\n", NULL},
        {"ZADD s x a", "-ERR value is not a valid float\r\n", NULL},
        {"ZADD s 1 a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZADD s NX XX 1 a", "-ERR XX and NX options at the same time are not compatible\r\n",
         NULL},
        {"ZADD z XX", "-ERR wrong number of arguments for 'zadd' command\r\n", NULL},
        {"ZADD z xx nx", "-ERR syntax error\r\n", NULL},
        {"ZADD z CH", "-ERR wrong number of arguments for 'zadd' command\r\n", NULL},
        {"EXISTS z", ":0\r\n", NULL},
        {"ZADD z \"1 \" a", "-ERR value is not a valid float\r\n", NULL},
        {"ZADD z \" 1\" a", "-ERR value is not a valid float\r\n", NULL},
        {"ZADD z 0x10 a", ":1\r\n", NULL},
        {"ZADD z 1e400 a", "-ERR value is not a valid float\r\n", NULL},
        {"ZADD z 1e-400 a", "-ERR value is not a valid float\r\n", NULL},
        {"ZADD z +inf a", ":0\r\n", NULL},
        {"ZSCORE z a", "$3\r\ninf\r\n", ",inf\r\n"},
        {"ZADD z \"\" a", "-ERR value is not a valid float\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, zincrby_replies_the_new_score)
{
    static const step_t steps[] = {
        {"SET s v", "+OK\r\n", NULL},
        {"ZINCRBY z 1 a", "$1\r\n1\r\n", ",1\r\n"},
        {"ZINCRBY z 2.5 a", "$3\r\n3.5\r\n", ",3.5\r\n"},
        {"ZINCRBY z -10 a", "$4\r\n-6.5\r\n", ",-6.5\r\n"},
        {"ZINCRBY z abc a", "-ERR value is not a valid float\r\n", NULL},
        {"ZINCRBY z inf a", "$3\r\ninf\r\n", ",inf\r\n"},
        {"ZINCRBY z -inf a", "-ERR resulting score is not a number (NaN)\r\n", NULL},
        {"ZSCORE z a", "$3\r\ninf\r\n", ",inf\r\n"},
        {"ZINCRBY z nx a", "-ERR syntax error\r\n", NULL},
        {"ZINCRBY s 1 a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZINCRBY z 1", "-ERR wrong number of arguments for 'zincrby' command\r\n", NULL},
        {"ZINCRBY z 0.1 b", "$19\r\n0.10000000000000001\r\n", ",0.10000000000000001\r\n"},
        {"ZINCRBY z 0.2 b", "$19\r\n0.30000000000000004\r\n", ",0.30000000000000004\r\n"},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, scores_are_formatted_as_redis)
{
    static const step_t steps[] = {
        {"ZADD z -5.94971599E8 a 1.0E7 b 0.1 c 1e300 d -0 e 3.0 f 1e17 g 123456789012345678 h",
         ":8\r\n", NULL},
        {"ZADD z 2.2250738585072014e-308 i -1.5e-10 j 9007199254740993 k inf l -inf m", ":5\r\n",
         NULL},
        {"ZRANGE z 0 -1 WITHSCORES",
         "*26\r\n$1\r\nm\r\n$4\r\n-inf\r\n$1\r\na\r\n$10\r\n-594971599\r\n$1\r\nj\r\n$8\r\n-1.5e-"
         "10\r\n$1\r\ne\r\n$1\r\n0\r\n$1\r\ni\r\n$23\r\n2.2250738585072014e-308\r\n$1\r\nc\r\n$"
         "19\r\n0.10000000000000001\r\n$1\r\nf\r\n$1\r\n3\r\n$1\r\nb\r\n$8\r\n10000000\r\n$"
         "1\r\nk\r\n$16\r\n9007199254740992\r\n$1\r\ng\r\n$5\r\n1e+17\r\n$1\r\nh\r\n$22\r\n1."
         "2345678901234568e+17\r\n$1\r\nd\r\n$23\r\n1.0000000000000001e+300\r\n$1\r\nl\r\n$"
         "3\r\ninf\r\n",
         "*13\r\n*2\r\n$1\r\nm\r\n,-inf\r\n*2\r\n$1\r\na\r\n,-594971599\r\n*2\r\n$1\r\nj\r\n,-1.5e-"
         "10\r\n*2\r\n$1\r\ne\r\n,0\r\n*2\r\n$1\r\ni\r\n,2.2250738585072014e-308\r\n*2\r\n$"
         "1\r\nc\r\n,0.10000000000000001\r\n*2\r\n$1\r\nf\r\n,3\r\n*2\r\n$1\r\nb\r\n,10000000\r\n*"
         "2\r\n$1\r\nk\r\n,9007199254740992\r\n*2\r\n$1\r\ng\r\n,1e+17\r\n*2\r\n$1\r\nh\r\n,1."
         "2345678901234568e+17\r\n*2\r\n$1\r\nd\r\n,1.0000000000000001e+300\r\n*2\r\n$1\r\nl\r\n,"
         "inf\r\n"},
        {"ZSCORE z a", "$10\r\n-594971599\r\n", ",-594971599\r\n"},
        {"ZSCORE z e", "$1\r\n0\r\n", ",0\r\n"},
        {"ZMSCORE z a b nosuch c",
         "*4\r\n$10\r\n-594971599\r\n$8\r\n10000000\r\n$-1\r\n$19\r\n0.10000000000000001\r\n",
         "*4\r\n,-594971599\r\n,10000000\r\n_\r\n,0.10000000000000001\r\n"},
        {"ZMSCORE nokey a b", "*2\r\n$-1\r\n$-1\r\n", "*2\r\n_\r\n_\r\n"},
        {"ZSCAN z 0",
         "*2\r\n$1\r\n0\r\n*26\r\n$1\r\nm\r\n$4\r\n-inf\r\n$1\r\na\r\n$10\r\n-594971599\r\n$"
         "1\r\nj\r\n$8\r\n-1.5e-10\r\n$1\r\ne\r\n$1\r\n0\r\n$1\r\ni\r\n$23\r\n2.2250738585072014e-"
         "308\r\n$1\r\nc\r\n$19\r\n0.10000000000000001\r\n$1\r\nf\r\n$1\r\n3\r\n$1\r\nb\r\n$"
         "8\r\n10000000\r\n$1\r\nk\r\n$16\r\n9007199254740992\r\n$1\r\ng\r\n$"
         "18\r\n100000000000000000\r\n$1\r\nh\r\n$18\r\n123456789012345680\r\n$1\r\nd\r\n$23\r\n1."
         "0000000000000001e+300\r\n$1\r\nl\r\n$3\r\ninf\r\n",
         NULL},
        {"CONFIG SET zset-max-listpack-entries 0", "+OK\r\n", NULL},
        {"ZADD s -0 a 0.1 b", ":2\r\n", NULL},
        {"OBJECT ENCODING s", "$8\r\nskiplist\r\n", NULL},
        {"ZSCORE s a", "$2\r\n-0\r\n", ",-0\r\n"},
        {"ZRANGE s 0 -1 WITHSCORES",
         "*4\r\n$1\r\na\r\n$2\r\n-0\r\n$1\r\nb\r\n$19\r\n0.10000000000000001\r\n",
         "*2\r\n*2\r\n$1\r\na\r\n,-0\r\n*2\r\n$1\r\nb\r\n,0.10000000000000001\r\n"},
        {"ZSCAN s 0 MATCH a", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$2\r\n-0\r\n", NULL},
        {"ZINCRBY s 0 a", "$1\r\n0\r\n", ",0\r\n"},
        {"ZUNIONSTORE d 1 s", ":2\r\n", NULL},
        {"OBJECT ENCODING d", "$8\r\nskiplist\r\n", NULL},
        {"ZSCORE d a", "$2\r\n-0\r\n", ",-0\r\n"},
        {"ZUNION 1 s WITHSCORES",
         "*4\r\n$1\r\na\r\n$2\r\n-0\r\n$1\r\nb\r\n$19\r\n0.10000000000000001\r\n",
         "*2\r\n*2\r\n$1\r\na\r\n,-0\r\n*2\r\n$1\r\nb\r\n,0.10000000000000001\r\n"},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, zrangebyscore_bounds_and_limit)
{
    static const step_t steps[] = {
        {"ZADD z 1 a 2 b 3 c 4 d 5 e", ":5\r\n", NULL},
        {"ZRANGEBYSCORE z -inf +inf",
         "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n", NULL},
        {"ZRANGEBYSCORE z (1 3", "*2\r\n$1\r\nb\r\n$1\r\nc\r\n", NULL},
        {"ZRANGEBYSCORE z (1 (3", "*1\r\n$1\r\nb\r\n", NULL},
        {"ZRANGEBYSCORE z 2 2 WITHSCORES", "*2\r\n$1\r\nb\r\n$1\r\n2\r\n",
         "*1\r\n*2\r\n$1\r\nb\r\n,2\r\n"},
        {"ZRANGEBYSCORE z (2 2", "*0\r\n", NULL},
        {"ZRANGEBYSCORE z 3 1", "*0\r\n", NULL},
        {"ZRANGEBYSCORE z -inf +inf LIMIT 1 2", "*2\r\n$1\r\nb\r\n$1\r\nc\r\n", NULL},
        {"ZRANGEBYSCORE z -inf +inf limit 1 2 withscores",
         "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n",
         "*2\r\n*2\r\n$1\r\nb\r\n,2\r\n*2\r\n$1\r\nc\r\n,3\r\n"},
        {"ZRANGEBYSCORE z -inf +inf Limit 0 -1",
         "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n", NULL},
        {"ZRANGEBYSCORE z -inf +inf LIMIT 10 2", "*0\r\n", NULL},
        {"ZRANGEBYSCORE z -inf +inf LIMIT -1 2", "*0\r\n", NULL},
        {"ZRANGEBYSCORE z -inf +inf LIMIT 1 0", "*0\r\n", NULL},
        {"ZRANGEBYSCORE z -inf +inf LIMIT 4 5", "*1\r\n$1\r\ne\r\n", NULL},
        {"ZRANGEBYSCORE z -5.94971599E8 1.0E7",
         "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n", NULL},
        {"ZRANGEBYSCORE z \"\" (", "*0\r\n", NULL},
        {"ZRANGEBYSCORE z \"\" 2", "*2\r\n$1\r\na\r\n$1\r\nb\r\n", NULL},
        {"ZRANGEBYSCORE z a 2", "-ERR min or max is not a float\r\n", NULL},
        {"ZRANGEBYSCORE z 1 nan", "-ERR min or max is not a float\r\n", NULL},
        {"ZRANGEBYSCORE z 1 2 LIMIT 1", "-ERR syntax error\r\n", NULL},
        {"ZRANGEBYSCORE z 1 2 LIMIT a 1", "-ERR value is not an integer or out of range\r\n", NULL},
        {"ZRANGEBYSCORE z 1 2 BYSCORE", "-ERR syntax error\r\n", NULL},
        {"ZRANGEBYSCORE z 1 2 REV", "-ERR syntax error\r\n", NULL},
        {"ZRANGEBYSCORE z 1 2 foo", "-ERR syntax error\r\n", NULL},
        {"ZREVRANGEBYSCORE z +inf -inf",
         "*5\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n", NULL},
        {"ZREVRANGEBYSCORE z (5 2 WITHSCORES",
         "*6\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nb\r\n$1\r\n2\r\n",
         "*3\r\n*2\r\n$1\r\nd\r\n,4\r\n*2\r\n$1\r\nc\r\n,3\r\n*2\r\n$1\r\nb\r\n,2\r\n"},
        {"ZREVRANGEBYSCORE z +inf -inf WITHSCORES LIMIT 1 2",
         "*4\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\nc\r\n$1\r\n3\r\n",
         "*2\r\n*2\r\n$1\r\nd\r\n,4\r\n*2\r\n$1\r\nc\r\n,3\r\n"},
        {"ZREVRANGEBYSCORE z 2 5", "*0\r\n", NULL},
        {"ZRANGEBYSCORE nokey -inf +inf", "*0\r\n", NULL},
        {"ZCOUNT z -inf +inf", ":5\r\n", NULL},
        {"ZCOUNT z (1 (5", ":3\r\n", NULL},
        {"ZCOUNT z 3 3", ":1\r\n", NULL},
        {"ZCOUNT z 5 1", ":0\r\n", NULL},
        {"ZCOUNT z x 1", "-ERR min or max is not a float\r\n", NULL},
        {"ZCOUNT nokey 1 2", ":0\r\n", NULL},
        {"ZCOUNT nokey x 2", "-ERR min or max is not a float\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, zrange_options)
{
    static const step_t steps[] = {
        {"ZADD z 1 a 2 b 3 c 4 d 5 e", ":5\r\n", NULL},
        {"ZRANGE z 0 -1", "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n", NULL},
        {"ZRANGE z -2 -1 WITHSCORES", "*4\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\ne\r\n$1\r\n5\r\n",
         "*2\r\n*2\r\n$1\r\nd\r\n,4\r\n*2\r\n$1\r\ne\r\n,5\r\n"},
        {"ZRANGE z 0 -1 REV", "*5\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n",
         NULL},
        {"ZRANGE z 1 2 rev withscores", "*4\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\nc\r\n$1\r\n3\r\n",
         "*2\r\n*2\r\n$1\r\nd\r\n,4\r\n*2\r\n$1\r\nc\r\n,3\r\n"},
        {"ZRANGE z -100 100", "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n",
         NULL},
        {"ZRANGE z 3 1", "*0\r\n", NULL},
        {"ZRANGE z 5 10", "*0\r\n", NULL},
        {"ZRANGE z -1 -100", "*0\r\n", NULL},
        {"ZRANGE z (1 +inf BYSCORE LIMIT 0 2", "*2\r\n$1\r\nb\r\n$1\r\nc\r\n", NULL},
        {"ZRANGE z +inf -inf BYSCORE REV",
         "*5\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n", NULL},
        {"ZRANGE z 4 (2 BYSCORE REV WITHSCORES",
         "*4\r\n$1\r\nd\r\n$1\r\n4\r\n$1\r\nc\r\n$1\r\n3\r\n",
         "*2\r\n*2\r\n$1\r\nd\r\n,4\r\n*2\r\n$1\r\nc\r\n,3\r\n"},
        {"ZRANGE z [a [c BYLEX", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", NULL},
        {"ZRANGE z + - BYLEX REV LIMIT 1 2", "*2\r\n$1\r\nd\r\n$1\r\nc\r\n", NULL},
        {"ZRANGE z 0 -1 LIMIT 0 1",
         "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
         "BYLEX\r\n",
         NULL},
        {"ZRANGE z - + BYLEX WITHSCORES",
         "-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n", NULL},
        {"ZRANGE z a b", "-ERR value is not an integer or out of range\r\n", NULL},
        {"ZRANGE z 0 1 BYSCORE BYLEX", "-ERR syntax error\r\n", NULL},
        {"ZRANGE z 0 1 REV REV", "-ERR syntax error\r\n", NULL},
        {"ZRANGE z 0 1 WITHSCORES WITHSCORES", "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n",
         "*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n"},
        {"ZRANGE z a b BYSCORE", "-ERR min or max is not a float\r\n", NULL},
        {"ZRANGE z 1 2 BYLEX", "-ERR min or max not valid string range item\r\n", NULL},
        {"ZRANGE nokey 0 -1", "*0\r\n", NULL},
        {"ZRANGE nokey 0 -1 WITHSCORES", "*0\r\n", NULL},
        {"ZRANGE z 0 9223372036854775807",
         "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n", NULL},
        {"ZRANGE z 0 9223372036854775808", "-ERR value is not an integer or out of range\r\n",
         NULL},
        {"ZREVRANGE z 0 1 WITHSCORES", "*4\r\n$1\r\ne\r\n$1\r\n5\r\n$1\r\nd\r\n$1\r\n4\r\n",
         "*2\r\n*2\r\n$1\r\ne\r\n,5\r\n*2\r\n$1\r\nd\r\n,4\r\n"},
        {"ZREVRANGE z 0 -1 LIMIT 0 1",
         "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
         "BYLEX\r\n",
         NULL},
        {"ZREVRANGE z 0 1 REV", "-ERR syntax error\r\n", NULL},
        {"ZREVRANGE z 0 1 BYSCORE", "-ERR syntax error\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, lex_commands)
{
    static const step_t steps[] = {
        {"ZADD l 0 a 0 b 0 c 0 d 0 e 0 ab", ":6\r\n", NULL},
        {"ZRANGEBYLEX l - +",
         "*6\r\n$1\r\na\r\n$2\r\nab\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n", NULL},
        {"ZRANGEBYLEX l [b (d", "*2\r\n$1\r\nb\r\n$1\r\nc\r\n", NULL},
        {"ZRANGEBYLEX l (a [b", "*2\r\n$2\r\nab\r\n$1\r\nb\r\n", NULL},
        {"ZRANGEBYLEX l - + LIMIT 1 2", "*2\r\n$2\r\nab\r\n$1\r\nb\r\n", NULL},
        {"ZRANGEBYLEX l - + LIMIT -1 2", "*0\r\n", NULL},
        {"ZRANGEBYLEX l + -", "*0\r\n", NULL},
        {"ZRANGEBYLEX l [c [c", "*1\r\n$1\r\nc\r\n", NULL},
        {"ZRANGEBYLEX l (c [c", "*0\r\n", NULL},
        {"ZRANGEBYLEX l [ (", "*0\r\n", NULL},
        {"ZREVRANGEBYLEX l + -",
         "*6\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$2\r\nab\r\n$1\r\na\r\n", NULL},
        {"ZREVRANGEBYLEX l + - LIMIT 1 2", "*2\r\n$1\r\nd\r\n$1\r\nc\r\n", NULL},
        {"ZREVRANGEBYLEX l (d [a", "*4\r\n$1\r\nc\r\n$1\r\nb\r\n$2\r\nab\r\n$1\r\na\r\n", NULL},
        {"ZRANGEBYLEX l a b", "-ERR min or max not valid string range item\r\n", NULL},
        {"ZRANGEBYLEX l - ++", "-ERR min or max not valid string range item\r\n", NULL},
        {"ZRANGEBYLEX l \"\" +", "-ERR min or max not valid string range item\r\n", NULL},
        {"ZRANGEBYLEX l - + WITHSCORES",
         "-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n", NULL},
        {"ZLEXCOUNT l - +", ":6\r\n", NULL},
        {"ZLEXCOUNT l [b [d", ":3\r\n", NULL},
        {"ZLEXCOUNT l (b (d", ":1\r\n", NULL},
        {"ZLEXCOUNT l + -", ":0\r\n", NULL},
        {"ZLEXCOUNT l a b", "-ERR min or max not valid string range item\r\n", NULL},
        {"ZLEXCOUNT nokey - +", ":0\r\n", NULL},
        {"ZREMRANGEBYLEX l [a (c", ":3\r\n", NULL},
        {"ZRANGE l 0 -1", "*3\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n", NULL},
        {"ZREMRANGEBYLEX l x y", "-ERR min or max not valid string range item\r\n", NULL},
        {"ZREMRANGEBYLEX nokey - +", ":0\r\n", NULL},
        {"ZREMRANGEBYLEX l - +", ":3\r\n", NULL},
        {"EXISTS l", ":0\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, rank_card_score_on_missing_and_present)
{
    static const step_t steps[] = {
        {"ZADD z 1 a 2 b 3 c", ":3\r\n", NULL},
        {"ZRANK z a", ":0\r\n", NULL},
        {"ZRANK z c", ":2\r\n", NULL},
        {"ZREVRANK z a", ":2\r\n", NULL},
        {"ZREVRANK z c", ":0\r\n", NULL},
        {"ZRANK z x", "$-1\r\n", "_\r\n"},
        {"ZRANK nokey a", "$-1\r\n", "_\r\n"},
        {"ZREVRANK nokey a", "$-1\r\n", "_\r\n"},
        {"ZCARD z", ":3\r\n", NULL},
        {"ZCARD nokey", ":0\r\n", NULL},
        {"ZSCORE z b", "$1\r\n2\r\n", ",2\r\n"},
        {"ZSCORE z x", "$-1\r\n", "_\r\n"},
        {"ZSCORE nokey a", "$-1\r\n", "_\r\n"},
        {"ZRANK z", "-ERR wrong number of arguments for 'zrank' command\r\n", NULL},
        {"ZRANK z a b", "-ERR wrong number of arguments for 'zrank' command\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, zrem_deletes_the_emptied_key)
{
    static const step_t steps[] = {
        {"ZADD z 1 a 2 b 3 c", ":3\r\n", NULL},
        {"ZREM z a x", ":1\r\n", NULL},
        {"ZREM z x", ":0\r\n", NULL},
        {"ZREM nokey a", ":0\r\n", NULL},
        {"ZREM z b c d", ":2\r\n", NULL},
        {"EXISTS z", ":0\r\n", NULL},
        {"ZREM z", "-ERR wrong number of arguments for 'zrem' command\r\n", NULL},
        {"SET s v", "+OK\r\n", NULL},
        {"ZREM s a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, zremrange_by_rank_and_score)
{
    static const step_t steps[] = {
        {"ZADD z 1 a 2 b 3 c 4 d 5 e", ":5\r\n", NULL},
        {"ZREMRANGEBYRANK z 0 0", ":1\r\n", NULL},
        {"ZREMRANGEBYRANK z -1 -1", ":1\r\n", NULL},
        {"ZREMRANGEBYRANK z 5 10", ":0\r\n", NULL},
        {"ZREMRANGEBYRANK z 2 1", ":0\r\n", NULL},
        {"ZRANGE z 0 -1", "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n", NULL},
        {"ZREMRANGEBYRANK z a 1", "-ERR value is not an integer or out of range\r\n", NULL},
        {"ZREMRANGEBYRANK nokey 0 1", ":0\r\n", NULL},
        {"ZREMRANGEBYRANK nokey a 1", "-ERR value is not an integer or out of range\r\n", NULL},
        {"ZREMRANGEBYSCORE z (2 3", ":1\r\n", NULL},
        {"ZREMRANGEBYSCORE z x 3", "-ERR min or max is not a float\r\n", NULL},
        {"ZREMRANGEBYSCORE z 10 20", ":0\r\n", NULL},
        {"ZRANGE z 0 -1 WITHSCORES", "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nd\r\n$1\r\n4\r\n",
         "*2\r\n*2\r\n$1\r\nb\r\n,2\r\n*2\r\n$1\r\nd\r\n,4\r\n"},
        {"ZREMRANGEBYSCORE z -inf +inf", ":2\r\n", NULL},
        {"EXISTS z", ":0\r\n", NULL},
        {"ZADD z 1 a 2 b", ":2\r\n", NULL},
        {"ZREMRANGEBYRANK z -100 100", ":2\r\n", NULL},
        {"EXISTS z", ":0\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, zpop_min_and_max)
{
    static const step_t steps[] = {
        {"ZADD z 1 a 2 b 3 c 4 d", ":4\r\n", NULL},
        {"ZPOPMIN z", "*2\r\n$1\r\na\r\n$1\r\n1\r\n", "*2\r\n$1\r\na\r\n,1\r\n"},
        {"ZPOPMAX z", "*2\r\n$1\r\nd\r\n$1\r\n4\r\n", "*2\r\n$1\r\nd\r\n,4\r\n"},
        {"ZPOPMIN z 0", "*0\r\n", NULL},
        {"ZPOPMIN z 1", "*2\r\n$1\r\nb\r\n$1\r\n2\r\n", "*1\r\n*2\r\n$1\r\nb\r\n,2\r\n"},
        {"ZADD z 5 e 6 f", ":2\r\n", NULL},
        {"ZPOPMAX z 2", "*4\r\n$1\r\nf\r\n$1\r\n6\r\n$1\r\ne\r\n$1\r\n5\r\n",
         "*2\r\n*2\r\n$1\r\nf\r\n,6\r\n*2\r\n$1\r\ne\r\n,5\r\n"},
        {"ZPOPMIN z 10", "*2\r\n$1\r\nc\r\n$1\r\n3\r\n", "*1\r\n*2\r\n$1\r\nc\r\n,3\r\n"},
        {"EXISTS z", ":0\r\n", NULL},
        {"ZPOPMIN z", "*0\r\n", NULL},
        {"ZPOPMIN z 3", "*0\r\n", NULL},
        {"ZPOPMIN z -1", "-ERR value is out of range, must be positive\r\n", NULL},
        {"ZPOPMIN z abc", "-ERR value is out of range, must be positive\r\n", NULL},
        {"ZPOPMIN z 1 2", "-ERR syntax error\r\n", NULL},
        {"ZPOPMAX nokey", "*0\r\n", NULL},
        {"ZPOPMAX nokey 0", "*0\r\n", NULL},
        {"SET s v", "+OK\r\n", NULL},
        {"ZPOPMIN s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZPOPMIN s -1", "-ERR value is out of range, must be positive\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, zmpop_pops_from_the_first_nonempty_key)
{
    static const step_t steps[] = {
        {"ZADD b 1 x 2 y 3 z", ":3\r\n", NULL},
        {"ZMPOP 2 a b MIN", "*2\r\n$1\r\nb\r\n*1\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n",
         "*2\r\n$1\r\nb\r\n*1\r\n*2\r\n$1\r\nx\r\n,1\r\n"},
        {"ZMPOP 2 a b MAX COUNT 10",
         "*2\r\n$1\r\nb\r\n*2\r\n*2\r\n$1\r\nz\r\n$1\r\n3\r\n*2\r\n$1\r\ny\r\n$1\r\n2\r\n",
         "*2\r\n$1\r\nb\r\n*2\r\n*2\r\n$1\r\nz\r\n,3\r\n*2\r\n$1\r\ny\r\n,2\r\n"},
        {"EXISTS b", ":0\r\n", NULL},
        {"ZMPOP 2 a b MIN", "*-1\r\n", "_\r\n"},
        {"ZMPOP 0 a MIN", "-ERR numkeys should be greater than 0\r\n", NULL},
        {"ZMPOP -1 a MIN", "-ERR numkeys should be greater than 0\r\n", NULL},
        {"ZMPOP abc a MIN", "-ERR numkeys should be greater than 0\r\n", NULL},
        {"ZMPOP 2 a MIN", "-ERR syntax error\r\n", NULL},
        {"ZMPOP 1 a FOO", "-ERR syntax error\r\n", NULL},
        {"ZMPOP 1 a MIN COUNT 0", "-ERR count should be greater than 0\r\n", NULL},
        {"ZMPOP 1 a MIN COUNT -1", "-ERR count should be greater than 0\r\n", NULL},
        {"ZMPOP 1 a MIN COUNT", "-ERR syntax error\r\n", NULL},
        {"ZMPOP 1 a MIN COUNT 1 COUNT 2", "-ERR syntax error\r\n", NULL},
        {"ZMPOP 1 a MIN foo", "-ERR syntax error\r\n", NULL},
        {"ZMPOP 1 a", "-ERR wrong number of arguments for 'zmpop' command\r\n", NULL},
        {"SET s v", "+OK\r\n", NULL},
        {"ZMPOP 2 s a MIN",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZMPOP 2 a s max",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZADD c 1 m", ":1\r\n", NULL},
        {"ZMPOP 1 c min count 5", "*2\r\n$1\r\nc\r\n*1\r\n*2\r\n$1\r\nm\r\n$1\r\n1\r\n",
         "*2\r\n$1\r\nc\r\n*1\r\n*2\r\n$1\r\nm\r\n,1\r\n"},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, set_operations)
{
    static const step_t steps[] = {
        {"ZADD a 1 x 2 y 3 z", ":3\r\n", NULL},
        {"ZADD b 10 y 20 z 30 w", ":3\r\n", NULL},
        {"ZUNION 2 a b", "*4\r\n$1\r\nx\r\n$1\r\ny\r\n$1\r\nz\r\n$1\r\nw\r\n", NULL},
        {"ZUNION 2 a b WITHSCORES",
         "*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n23\r\n$1\r\nw\r\n$"
         "2\r\n30\r\n",
         "*4\r\n*2\r\n$1\r\nx\r\n,1\r\n*2\r\n$1\r\ny\r\n,12\r\n*2\r\n$1\r\nz\r\n,23\r\n*2\r\n$"
         "1\r\nw\r\n,30\r\n"},
        {"ZUNION 2 a b WEIGHTS 2 0.5 WITHSCORES",
         "*8\r\n$1\r\nx\r\n$1\r\n2\r\n$1\r\ny\r\n$1\r\n9\r\n$1\r\nw\r\n$2\r\n15\r\n$1\r\nz\r\n$"
         "2\r\n16\r\n",
         "*4\r\n*2\r\n$1\r\nx\r\n,2\r\n*2\r\n$1\r\ny\r\n,9\r\n*2\r\n$1\r\nw\r\n,15\r\n*2\r\n$"
         "1\r\nz\r\n,16\r\n"},
        {"ZUNION 2 a b AGGREGATE MIN WITHSCORES",
         "*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n3\r\n$1\r\nw\r\n$"
         "2\r\n30\r\n",
         "*4\r\n*2\r\n$1\r\nx\r\n,1\r\n*2\r\n$1\r\ny\r\n,2\r\n*2\r\n$1\r\nz\r\n,3\r\n*2\r\n$"
         "1\r\nw\r\n,30\r\n"},
        {"ZUNION 2 a b aggregate max withscores",
         "*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$2\r\n10\r\n$1\r\nz\r\n$2\r\n20\r\n$1\r\nw\r\n$"
         "2\r\n30\r\n",
         "*4\r\n*2\r\n$1\r\nx\r\n,1\r\n*2\r\n$1\r\ny\r\n,10\r\n*2\r\n$1\r\nz\r\n,20\r\n*2\r\n$"
         "1\r\nw\r\n,30\r\n"},
        {"ZUNION 3 a b nokey WITHSCORES",
         "*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n23\r\n$1\r\nw\r\n$"
         "2\r\n30\r\n",
         "*4\r\n*2\r\n$1\r\nx\r\n,1\r\n*2\r\n$1\r\ny\r\n,12\r\n*2\r\n$1\r\nz\r\n,23\r\n*2\r\n$"
         "1\r\nw\r\n,30\r\n"},
        {"ZINTER 2 a b WITHSCORES", "*4\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n23\r\n",
         "*2\r\n*2\r\n$1\r\ny\r\n,12\r\n*2\r\n$1\r\nz\r\n,23\r\n"},
        {"ZINTER 2 a b WEIGHTS 1 -1 AGGREGATE SUM WITHSCORES",
         "*4\r\n$1\r\nz\r\n$3\r\n-17\r\n$1\r\ny\r\n$2\r\n-8\r\n",
         "*2\r\n*2\r\n$1\r\nz\r\n,-17\r\n*2\r\n$1\r\ny\r\n,-8\r\n"},
        {"ZINTER 2 a nokey", "*0\r\n", NULL},
        {"ZINTER 2 a a WITHSCORES",
         "*6\r\n$1\r\nx\r\n$1\r\n2\r\n$1\r\ny\r\n$1\r\n4\r\n$1\r\nz\r\n$1\r\n6\r\n",
         "*3\r\n*2\r\n$1\r\nx\r\n,2\r\n*2\r\n$1\r\ny\r\n,4\r\n*2\r\n$1\r\nz\r\n,6\r\n"},
        {"ZDIFF 2 a b WITHSCORES", "*2\r\n$1\r\nx\r\n$1\r\n1\r\n", "*1\r\n*2\r\n$1\r\nx\r\n,1\r\n"},
        {"ZDIFF 2 b a", "*1\r\n$1\r\nw\r\n", NULL},
        {"ZDIFF 1 a", "*3\r\n$1\r\nx\r\n$1\r\ny\r\n$1\r\nz\r\n", NULL},
        {"ZDIFF 2 a a", "*0\r\n", NULL},
        {"ZDIFF 2 nokey a", "*0\r\n", NULL},
        {"ZINTERCARD 2 a b", ":2\r\n", NULL},
        {"ZINTERCARD 2 a b LIMIT 1", ":1\r\n", NULL},
        {"ZINTERCARD 2 a b LIMIT 0", ":2\r\n", NULL},
        {"ZINTERCARD 1 a limit 2", ":2\r\n", NULL},
        {"ZUNION 2 a b WEIGHTS 1", "-ERR syntax error\r\n", NULL},
        {"ZUNION 2 a b WEIGHTS 1 x", "-ERR weight value is not a float\r\n", NULL},
        {"ZUNION 2 a b AGGREGATE foo", "-ERR syntax error\r\n", NULL},
        {"ZUNION 2 a b AGGREGATE", "-ERR syntax error\r\n", NULL},
        {"ZDIFF 2 a b WEIGHTS 1 1", "-ERR syntax error\r\n", NULL},
        {"ZDIFF 2 a b AGGREGATE SUM", "-ERR syntax error\r\n", NULL},
        {"ZINTERCARD 2 a b WITHSCORES", "-ERR syntax error\r\n", NULL},
        {"ZINTERCARD 2 a b LIMIT -1", "-ERR LIMIT can't be negative\r\n", NULL},
        {"ZINTERCARD 2 a b LIMIT x", "-ERR LIMIT can't be negative\r\n", NULL},
        {"ZUNION 0 a", "-ERR at least 1 input key is needed for 'zunion' command\r\n", NULL},
        {"ZUNION -1 a", "-ERR at least 1 input key is needed for 'zunion' command\r\n", NULL},
        {"ZUNION x a", "-ERR value is not an integer or out of range\r\n", NULL},
        {"ZUNION 3 a b", "-ERR syntax error\r\n", NULL},
        {"ZINTER 0 a", "-ERR at least 1 input key is needed for 'zinter' command\r\n", NULL},
        {"ZINTERCARD 0 a", "-ERR at least 1 input key is needed for 'zintercard' command\r\n",
         NULL},
        {"ZDIFF 0 a", "-ERR at least 1 input key is needed for 'zdiff' command\r\n", NULL},
        {"SET s v", "+OK\r\n", NULL},
        {"ZUNION 2 a s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZUNION 2 a s WEIGHTS x",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZUNION 1 a WITHSCORES foo", "-ERR syntax error\r\n", NULL},
        {"ZADD inf 1 x", ":1\r\n", NULL},
        {"ZADD inf2 inf x", ":1\r\n", NULL},
        {"ZUNION 2 inf2 inf2 WEIGHTS 0 1 WITHSCORES", "*2\r\n$1\r\nx\r\n$3\r\ninf\r\n",
         "*1\r\n*2\r\n$1\r\nx\r\n,inf\r\n"},
        {"ZUNION 2 inf2 inf2 WEIGHTS 1 -1 WITHSCORES", "*2\r\n$1\r\nx\r\n$1\r\n0\r\n",
         "*1\r\n*2\r\n$1\r\nx\r\n,0\r\n"},
        {"ZINTER 2 inf2 inf WEIGHTS 0 0 AGGREGATE MAX WITHSCORES", "*2\r\n$1\r\nx\r\n$1\r\n0\r\n",
         "*1\r\n*2\r\n$1\r\nx\r\n,0\r\n"},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, store_operations)
{
    static const step_t steps[] = {
        {"ZADD a 1 x 2 y 3 z", ":3\r\n", NULL},
        {"ZADD b 10 y 20 z 30 w", ":3\r\n", NULL},
        {"ZUNIONSTORE d 2 a b", ":4\r\n", NULL},
        {"ZRANGE d 0 -1 WITHSCORES",
         "*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n23\r\n$1\r\nw\r\n$"
         "2\r\n30\r\n",
         "*4\r\n*2\r\n$1\r\nx\r\n,1\r\n*2\r\n$1\r\ny\r\n,12\r\n*2\r\n$1\r\nz\r\n,23\r\n*2\r\n$"
         "1\r\nw\r\n,30\r\n"},
        {"OBJECT ENCODING d", "$8\r\nlistpack\r\n", NULL},
        {"ZINTERSTORE d 2 a b WEIGHTS 2 3 AGGREGATE MAX", ":2\r\n", NULL},
        {"ZRANGE d 0 -1 WITHSCORES", "*4\r\n$1\r\ny\r\n$2\r\n30\r\n$1\r\nz\r\n$2\r\n60\r\n",
         "*2\r\n*2\r\n$1\r\ny\r\n,30\r\n*2\r\n$1\r\nz\r\n,60\r\n"},
        {"ZDIFFSTORE d 2 a b", ":1\r\n", NULL},
        {"ZRANGE d 0 -1 WITHSCORES", "*2\r\n$1\r\nx\r\n$1\r\n1\r\n",
         "*1\r\n*2\r\n$1\r\nx\r\n,1\r\n"},
        {"ZINTERSTORE d 2 a nokey", ":0\r\n", NULL},
        {"EXISTS d", ":0\r\n", NULL},
        {"ZINTERSTORE d 2 a nokey", ":0\r\n", NULL},
        {"ZUNIONSTORE d 2 a b WITHSCORES", "-ERR syntax error\r\n", NULL},
        {"ZDIFFSTORE d 1 a WEIGHTS 1", "-ERR syntax error\r\n", NULL},
        {"SET d v", "+OK\r\n", NULL},
        {"EXPIRE d 100", ":1\r\n", NULL},
        {"ZUNIONSTORE d 1 a", ":3\r\n", NULL},
        {"TTL d", ":-1\r\n", NULL},
        {"TYPE d", "+zset\r\n", NULL},
        {"ZUNIONSTORE a 2 a b", ":4\r\n", NULL},
        {"ZRANGE a 0 -1 WITHSCORES",
         "*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n23\r\n$1\r\nw\r\n$"
         "2\r\n30\r\n",
         "*4\r\n*2\r\n$1\r\nx\r\n,1\r\n*2\r\n$1\r\ny\r\n,12\r\n*2\r\n$1\r\nz\r\n,23\r\n*2\r\n$"
         "1\r\nw\r\n,30\r\n"},
        {"ZUNIONSTORE d 0 a", "-ERR at least 1 input key is needed for 'zunionstore' command\r\n",
         NULL},
        {"ZDIFFSTORE d 3 a b", "-ERR syntax error\r\n", NULL},
        {"SET s v", "+OK\r\n", NULL},
        {"ZINTERSTORE d 2 a s",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"CONFIG SET zset-max-listpack-entries 2", "+OK\r\n", NULL},
        {"ZUNIONSTORE d 2 a b", ":4\r\n", NULL},
        {"OBJECT ENCODING d", "$8\r\nskiplist\r\n", NULL},
        {"ZINTERSTORE d 2 a b", ":3\r\n", NULL},
        {"OBJECT ENCODING d", "$8\r\nskiplist\r\n", NULL},
        {"CONFIG SET zset-max-listpack-entries 128", "+OK\r\n", NULL},
        {"CONFIG SET zset-max-listpack-value 3", "+OK\r\n", NULL},
        {"ZADD long 1 abcd", ":1\r\n", NULL},
        {"OBJECT ENCODING long", "$8\r\nskiplist\r\n", NULL},
        {"ZUNIONSTORE d 2 long a", ":5\r\n", NULL},
        {"OBJECT ENCODING d", "$8\r\nskiplist\r\n", NULL},
        {"ZDIFFSTORE d 2 long a", ":1\r\n", NULL},
        {"OBJECT ENCODING d", "$8\r\nskiplist\r\n", NULL},
        {"ZDIFFSTORE d 2 a long", ":4\r\n", NULL},
        {"OBJECT ENCODING d", "$8\r\nlistpack\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, zrangestore_stores_and_converts)
{
    static const step_t steps[] = {
        {"ZADD z 1 a 2 b 3 c 4 d 5 e", ":5\r\n", NULL},
        {"ZRANGESTORE d z 0 1", ":2\r\n", NULL},
        {"ZRANGE d 0 -1 WITHSCORES", "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n",
         "*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n"},
        {"OBJECT ENCODING d", "$8\r\nlistpack\r\n", NULL},
        {"ZRANGESTORE d z 4 (1 BYSCORE REV LIMIT 1 2", ":2\r\n", NULL},
        {"ZRANGE d 0 -1 WITHSCORES", "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n",
         "*2\r\n*2\r\n$1\r\nb\r\n,2\r\n*2\r\n$1\r\nc\r\n,3\r\n"},
        {"ZRANGESTORE d z [b [d BYLEX", ":3\r\n", NULL},
        {"ZRANGE d 0 -1", "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n", NULL},
        {"ZRANGESTORE d z 5 10", ":0\r\n", NULL},
        {"EXISTS d", ":0\r\n", NULL},
        {"ZRANGESTORE d z 0 -1", ":5\r\n", NULL},
        {"ZRANGESTORE d nokey 0 -1", ":0\r\n", NULL},
        {"EXISTS d", ":0\r\n", NULL},
        {"ZRANGESTORE d z 0 -1 WITHSCORES", "-ERR syntax error\r\n", NULL},
        {"ZRANGESTORE d z 0 -1 LIMIT 0 1",
         "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
         "BYLEX\r\n",
         NULL},
        {"ZRANGESTORE d z a b", "-ERR value is not an integer or out of range\r\n", NULL},
        {"ZRANGESTORE z z 1 2", ":2\r\n", NULL},
        {"ZRANGE z 0 -1", "*2\r\n$1\r\nb\r\n$1\r\nc\r\n", NULL},
        {"CONFIG SET zset-max-listpack-entries 1", "+OK\r\n", NULL},
        {"ZADD big 1 a 2 b 3 c", ":3\r\n", NULL},
        {"OBJECT ENCODING big", "$8\r\nskiplist\r\n", NULL},
        {"ZRANGESTORE d big 0 0", ":1\r\n", NULL},
        {"OBJECT ENCODING d", "$8\r\nlistpack\r\n", NULL},
        {"ZRANGESTORE d big 0 1", ":2\r\n", NULL},
        {"OBJECT ENCODING d", "$8\r\nskiplist\r\n", NULL},
        {"ZRANGESTORE d big -inf +inf BYSCORE LIMIT 0 1", ":1\r\n", NULL},
        {"OBJECT ENCODING d", "$8\r\nlistpack\r\n", NULL},
        {"SET s v", "+OK\r\n", NULL},
        {"ZRANGESTORE d s 0 1",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZRANGESTORE s z 0 1", ":2\r\n", NULL},
        {"TYPE s", "+zset\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, encoding_follows_the_limits)
{
    static const step_t steps[] = {
        {"CONFIG SET zset-max-listpack-entries 3", "+OK\r\n", NULL},
        {"ZADD z 1 a 2 b 3 c", ":3\r\n", NULL},
        {"OBJECT ENCODING z", "$8\r\nlistpack\r\n", NULL},
        {"ZADD z 4 d", ":1\r\n", NULL},
        {"OBJECT ENCODING z", "$8\r\nskiplist\r\n", NULL},
        {"ZREM z d c", ":2\r\n", NULL},
        {"OBJECT ENCODING z", "$8\r\nskiplist\r\n", NULL},
        {"ZRANGE z 0 -1 WITHSCORES", "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n",
         "*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n"},
        {"CONFIG SET zset-max-listpack-value 4", "+OK\r\n", NULL},
        {"ZADD v 1 abcd", ":1\r\n", NULL},
        {"OBJECT ENCODING v", "$8\r\nlistpack\r\n", NULL},
        {"ZADD v 2 abcde", ":1\r\n", NULL},
        {"OBJECT ENCODING v", "$8\r\nskiplist\r\n", NULL},
        {"ZADD w 1 abcde", ":1\r\n", NULL},
        {"OBJECT ENCODING w", "$8\r\nskiplist\r\n", NULL},
        {"CONFIG SET zset-max-listpack-entries 0", "+OK\r\n", NULL},
        {"ZADD x 1 a", ":1\r\n", NULL},
        {"OBJECT ENCODING x", "$8\r\nskiplist\r\n", NULL},
        {"ZRANK x a", ":0\r\n", NULL},
        {"ZRANGE x 0 -1 WITHSCORES", "*2\r\n$1\r\na\r\n$1\r\n1\r\n",
         "*1\r\n*2\r\n$1\r\na\r\n,1\r\n"},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, zscan_on_listpack)
{
    static const step_t steps[] = {
        {"ZADD z 1 a 2 b 3 ab 4.5 c", ":4\r\n", NULL},
        {"ZSCAN z 0",
         "*2\r\n$1\r\n0\r\n*8\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$2\r\nab\r\n$"
         "1\r\n3\r\n$1\r\nc\r\n$3\r\n4.5\r\n",
         NULL},
        {"ZSCAN z 0 MATCH a*",
         "*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$1\r\n1\r\n$2\r\nab\r\n$1\r\n3\r\n", NULL},
        {"ZSCAN z 0 match *b COUNT 1",
         "*2\r\n$1\r\n0\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$2\r\nab\r\n$1\r\n3\r\n", NULL},
        {"ZSCAN z 0 MATCH *",
         "*2\r\n$1\r\n0\r\n*8\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$2\r\nab\r\n$"
         "1\r\n3\r\n$1\r\nc\r\n$3\r\n4.5\r\n",
         NULL},
        {"ZSCAN z 0 COUNT 0", "-ERR syntax error\r\n", NULL},
        {"ZSCAN z 0 COUNT x", "-ERR value is not an integer or out of range\r\n", NULL},
        {"ZSCAN z 0 COUNT", "-ERR syntax error\r\n", NULL},
        {"ZSCAN z 0 TYPE zset", "-ERR syntax error\r\n", NULL},
        {"ZSCAN z x", "-ERR invalid cursor\r\n", NULL},
        {"ZSCAN z \" 0\"", "-ERR invalid cursor\r\n", NULL},
        {"ZSCAN z -1",
         "*2\r\n$1\r\n0\r\n*8\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$2\r\nab\r\n$"
         "1\r\n3\r\n$1\r\nc\r\n$3\r\n4.5\r\n",
         NULL},
        {"ZSCAN z 18446744073709551616", "-ERR invalid cursor\r\n", NULL},
        {"ZSCAN z \"\"",
         "*2\r\n$1\r\n0\r\n*8\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$2\r\nab\r\n$"
         "1\r\n3\r\n$1\r\nc\r\n$3\r\n4.5\r\n",
         NULL},
        {"ZSCAN nokey 0", "*2\r\n$1\r\n0\r\n*0\r\n", NULL},
        {"ZSCAN nokey x", "-ERR invalid cursor\r\n", NULL},
        {"ZSCAN nokey 0 FOO", "*2\r\n$1\r\n0\r\n*0\r\n", NULL},
        {"SET s v", "+OK\r\n", NULL},
        {"ZSCAN s 0", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, zrandmember_deterministic_cases)
{
    static const step_t steps[] = {
        {"ZADD z 1 a 2 b 3 c", ":3\r\n", NULL},
        {"ZRANDMEMBER nokey", "$-1\r\n", "_\r\n"},
        {"ZRANDMEMBER nokey 5", "*0\r\n", NULL},
        {"ZRANDMEMBER nokey 5 WITHSCORES", "*0\r\n", NULL},
        {"ZRANDMEMBER z 0", "*0\r\n", NULL},
        {"ZRANDMEMBER z 0 WITHSCORES", "*0\r\n", NULL},
        {"ZRANDMEMBER z 3", "*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n", NULL},
        {"ZRANDMEMBER z 10 WITHSCORES",
         "*6\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n",
         "*3\r\n*2\r\n$1\r\nc\r\n,3\r\n*2\r\n$1\r\nb\r\n,2\r\n*2\r\n$1\r\na\r\n,1\r\n"},
        {"ZRANDMEMBER z x", "-ERR value is not an integer or out of range\r\n", NULL},
        {"ZRANDMEMBER z 1 foo", "-ERR syntax error\r\n", NULL},
        {"ZRANDMEMBER z 1 WITHSCORES x", "-ERR syntax error\r\n", NULL},
        {"ZRANDMEMBER z 5000000000000000000 WITHSCORES", "-ERR value is out of range\r\n", NULL},
        {"ZRANDMEMBER z -5000000000000000000 WITHSCORES", "-ERR value is out of range\r\n", NULL},
        {"ZRANDMEMBER nokey x", "-ERR value is not an integer or out of range\r\n", NULL},
        {"SET s v", "+OK\r\n", NULL},
        {"ZRANDMEMBER s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZRANDMEMBER s 1",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"CONFIG SET zset-max-listpack-entries 0", "+OK\r\n", NULL},
        {"ZADD k 1 a 2 b", ":2\r\n", NULL},
        {"ZRANDMEMBER k 5 WITHSCORES", "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n",
         "*2\r\n*2\r\n$1\r\nb\r\n,2\r\n*2\r\n$1\r\na\r\n,1\r\n"},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

/* Redis's ranges for the count ([-LONG_MAX, LONG_MAX], halved with WITHSCORES), and a reply
 * that could never fit refused before anything is built: Redis 7.0 aborts on the first and
 * runs out of memory on the second. */
Test(cmd_zset, zrandmember_extreme_counts)
{
    static const step_t steps[] = {
        {"ZADD z 0 a", ":1\r\n", NULL},
        {"ZRANDMEMBER z -9223372036854775808",
         "-ERR value is out of range, value must between -9223372036854775807 and "
         "9223372036854775807\r\n",
         NULL},
        {"ZRANDMEMBER nokey -9223372036854775808",
         "-ERR value is out of range, value must between -9223372036854775807 and "
         "9223372036854775807\r\n",
         NULL},
        {"ZRANDMEMBER z -9223372036854775808 WITHSCORES",
         "-ERR value is out of range, value must between -9223372036854775807 and "
         "9223372036854775807\r\n",
         NULL},
        {"ZRANDMEMBER z -4611686018427387904 WITHSCORES", "-ERR value is out of range\r\n", NULL},
        {"ZRANDMEMBER z 4611686018427387904 WITHSCORES", "-ERR value is out of range\r\n", NULL},
        {"ZRANDMEMBER z -4611686018427387903 WITHSCORES",
         "-ERR reply of at least 55340232221128654836 bytes would exceed max-reply-bytes "
         "(1073741824 bytes)\r\n",
         "-ERR reply of at least 64563604257983430642 bytes would exceed max-reply-bytes "
         "(1073741824 bytes)\r\n"},
        {"ZRANDMEMBER z -9223372036854775807",
         "-ERR reply of at least 55340232221128654842 bytes would exceed max-reply-bytes "
         "(1073741824 bytes)\r\n",
         NULL},
        {"ZRANDMEMBER z -100000000000 WITHSCORES",
         "-ERR reply of at least 1200000000000 bytes would exceed max-reply-bytes "
         "(1073741824 bytes)\r\n",
         "-ERR reply of at least 1400000000000 bytes would exceed max-reply-bytes "
         "(1073741824 bytes)\r\n"},
        {"ZRANDMEMBER z 9223372036854775807", "*1\r\n$1\r\na\r\n", NULL},
        {"ZRANDMEMBER z 4611686018427387903 WITHSCORES", "*2\r\n$1\r\na\r\n$1\r\n0\r\n",
         "*1\r\n*2\r\n$1\r\na\r\n,0\r\n"},
        {"ZRANDMEMBER nokey -9223372036854775807", "*0\r\n", NULL},
        {"ZRANDMEMBER z -3", "*3\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n", NULL},
        {"CONFIG SET client-output-buffer-limit \"normal 1mb 0 0\"", "+OK\r\n", NULL},
        {"ZRANDMEMBER z -1000000",
         "-ERR reply of at least 6000000 bytes would exceed client-output-buffer-limit "
         "(1048576 bytes)\r\n",
         NULL},
        {"CONFIG SET client-output-buffer-limit \"normal 0 0 0\"", "+OK\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, wrongtype_for_every_command)
{
    static const step_t steps[] = {
        {"SET s v", "+OK\r\n", NULL},
        {"ZSCORE s a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZMSCORE s a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZCARD s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZCOUNT s 1 2", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZLEXCOUNT s - +",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZRANK s a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZREVRANK s a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZRANGE s 0 1", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZRANGEBYSCORE s 1 2",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZREVRANGEBYSCORE s 1 2",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZRANGEBYLEX s - +",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZREVRANGEBYLEX s + -",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZREVRANGE s 0 1",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZPOPMAX s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZINTER 1 s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZINTERCARD 1 s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZDIFF 1 s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"ZDIFFSTORE d 1 s",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZUNIONSTORE d 1 s",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZREMRANGEBYSCORE s 1 2",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZREMRANGEBYRANK s 0 1",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZREMRANGEBYLEX s - +",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"ZRANGEBYSCORE s x 2", "-ERR min or max is not a float\r\n", NULL},
        {"ZREMRANGEBYSCORE s x 2", "-ERR min or max is not a float\r\n", NULL},
        {"ZREMRANGEBYRANK s x 2", "-ERR value is not an integer or out of range\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, arity_errors)
{
    static const step_t steps[] = {
        {"ZADD z", "-ERR wrong number of arguments for 'zadd' command\r\n", NULL},
        {"ZADD z 1", "-ERR wrong number of arguments for 'zadd' command\r\n", NULL},
        {"ZINCRBY z 1", "-ERR wrong number of arguments for 'zincrby' command\r\n", NULL},
        {"ZINCRBY z 1 a b", "-ERR wrong number of arguments for 'zincrby' command\r\n", NULL},
        {"ZREM z", "-ERR wrong number of arguments for 'zrem' command\r\n", NULL},
        {"ZSCORE z", "-ERR wrong number of arguments for 'zscore' command\r\n", NULL},
        {"ZMSCORE z", "-ERR wrong number of arguments for 'zmscore' command\r\n", NULL},
        {"ZCARD", "-ERR wrong number of arguments for 'zcard' command\r\n", NULL},
        {"ZCARD a b", "-ERR wrong number of arguments for 'zcard' command\r\n", NULL},
        {"ZCOUNT z 1", "-ERR wrong number of arguments for 'zcount' command\r\n", NULL},
        {"ZLEXCOUNT z -", "-ERR wrong number of arguments for 'zlexcount' command\r\n", NULL},
        {"ZRANK z", "-ERR wrong number of arguments for 'zrank' command\r\n", NULL},
        {"ZREVRANK z", "-ERR wrong number of arguments for 'zrevrank' command\r\n", NULL},
        {"ZRANGE z 0", "-ERR wrong number of arguments for 'zrange' command\r\n", NULL},
        {"ZRANGESTORE d z 0", "-ERR wrong number of arguments for 'zrangestore' command\r\n", NULL},
        {"ZRANGEBYSCORE z 0", "-ERR wrong number of arguments for 'zrangebyscore' command\r\n",
         NULL},
        {"ZREVRANGEBYSCORE z 0",
         "-ERR wrong number of arguments for 'zrevrangebyscore' command\r\n", NULL},
        {"ZRANGEBYLEX z -", "-ERR wrong number of arguments for 'zrangebylex' command\r\n", NULL},
        {"ZREVRANGEBYLEX z -", "-ERR wrong number of arguments for 'zrevrangebylex' command\r\n",
         NULL},
        {"ZREVRANGE z 0", "-ERR wrong number of arguments for 'zrevrange' command\r\n", NULL},
        {"ZPOPMIN", "-ERR wrong number of arguments for 'zpopmin' command\r\n", NULL},
        {"ZPOPMAX", "-ERR wrong number of arguments for 'zpopmax' command\r\n", NULL},
        {"ZMPOP 1 z", "-ERR wrong number of arguments for 'zmpop' command\r\n", NULL},
        {"ZRANDMEMBER", "-ERR wrong number of arguments for 'zrandmember' command\r\n", NULL},
        {"ZUNION 1", "-ERR wrong number of arguments for 'zunion' command\r\n", NULL},
        {"ZINTER 1", "-ERR wrong number of arguments for 'zinter' command\r\n", NULL},
        {"ZINTERCARD 1", "-ERR wrong number of arguments for 'zintercard' command\r\n", NULL},
        {"ZDIFF 1", "-ERR wrong number of arguments for 'zdiff' command\r\n", NULL},
        {"ZUNIONSTORE d 1", "-ERR wrong number of arguments for 'zunionstore' command\r\n", NULL},
        {"ZINTERSTORE d 1", "-ERR wrong number of arguments for 'zinterstore' command\r\n", NULL},
        {"ZDIFFSTORE d 1", "-ERR wrong number of arguments for 'zdiffstore' command\r\n", NULL},
        {"ZREMRANGEBYSCORE z 1",
         "-ERR wrong number of arguments for 'zremrangebyscore' command\r\n", NULL},
        {"ZREMRANGEBYRANK z 1", "-ERR wrong number of arguments for 'zremrangebyrank' command\r\n",
         NULL},
        {"ZREMRANGEBYLEX z -", "-ERR wrong number of arguments for 'zremrangebylex' command\r\n",
         NULL},
        {"ZSCAN z", "-ERR wrong number of arguments for 'zscan' command\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, mixed_score_lex_ranges_follow_listpack_order)
{
    static const step_t steps[] = {
        {"ZADD m 1 d 2 a 3 c 4 b", ":4\r\n", NULL},
        {"ZRANGEBYLEX m - +", "*4\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nc\r\n$1\r\nb\r\n", NULL},
        {"ZRANGEBYLEX m [b [c", "*0\r\n", NULL},
        {"ZRANGEBYLEX m [a +", "*4\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nc\r\n$1\r\nb\r\n", NULL},
        {"ZREVRANGEBYLEX m + [b", "*2\r\n$1\r\nb\r\n$1\r\nc\r\n", NULL},
        {"ZLEXCOUNT m [a [d", ":4\r\n", NULL},
        {"ZLEXCOUNT m - [c", ":0\r\n", NULL},
        {"ZREMRANGEBYLEX m [c +", ":0\r\n", NULL},
        {"ZRANGE m 0 -1", "*4\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nc\r\n$1\r\nb\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_zset, command_getkeys_for_numkeys_commands)
{
    static const step_t steps[] = {
        {"COMMAND GETKEYS ZUNIONSTORE d 2 a b WEIGHTS 1 2",
         "*3\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nb\r\n", NULL},
        {"COMMAND GETKEYS ZINTER 2 a b", "*2\r\n$1\r\na\r\n$1\r\nb\r\n", NULL},
        {"COMMAND GETKEYS ZDIFF 1 a", "*1\r\n$1\r\na\r\n", NULL},
        {"COMMAND GETKEYS ZMPOP 2 a b MIN", "*2\r\n$1\r\na\r\n$1\r\nb\r\n", NULL},
        {"COMMAND GETKEYS ZRANGESTORE d s 0 1", "*2\r\n$1\r\nd\r\n$1\r\ns\r\n", NULL},
        {"COMMAND GETKEYS ZINTERCARD 3 a b c LIMIT 1", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n",
         NULL},
        {"COMMAND GETKEYS ZADD z 1 a", "*1\r\n$1\r\nz\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

/* ---- random replies, checked by their properties ---- */

/* Parses a flat RESP2 array of bulk strings into a NUL-separated list; returns the count. */
static int parse_bulks(const char *r, char out[][64], int max)
{
    int n = 0;
    cr_assert_eq(r[0], '*', "not an array: %s", r);
    int count = atoi(r + 1);
    const char *p = strstr(r, "\r\n") + 2;
    for (int i = 0; i < count; i++) {
        cr_assert_eq(*p, '$');
        int len = atoi(p + 1);
        p = strstr(p, "\r\n") + 2;
        cr_assert(n < max && len < 64);
        memcpy(out[n], p, (size_t)len);
        out[n++][len] = '\0';
        p += len + 2;
    }
    return n;
}

static void fill(const char *key, int n)
{
    for (int i = 0; i < n; i++) {
        char cmd[64];
        snprintf(cmd, sizeof(cmd), "ZADD %s %d m%d", key, i, i);
        expect(cmd, ":1\r\n");
    }
}

/* Checks one ZRANDMEMBER reply with count l over a set of n members m0.. with score i. */
static void check_randmember(const char *key, int n, int l, int withscores)
{
    char cmd[64], items[1200][64];
    snprintf(cmd, sizeof(cmd), "ZRANDMEMBER %s %d%s", key, l, withscores ? " WITHSCORES" : "");
    char *r = reply_of(cmd);
    int got = parse_bulks(r, items, 1200), step = withscores ? 2 : 1;
    int want = l < 0 ? -l : (l < n ? l : n);
    cr_assert_eq(got, want * step, "%s: %d items", cmd, got);
    char seen[600] = {0};
    for (int i = 0; i < got; i += step) {
        cr_assert_eq(items[i][0], 'm');
        int idx = atoi(items[i] + 1);
        cr_assert(idx >= 0 && idx < n);
        if (withscores) cr_assert_eq(atoi(items[i + 1]), idx);
        if (l > 0) cr_assert(!seen[idx], "%s repeated %s", cmd, items[i]);
        seen[idx] = 1;
    }
    xfree(r);
}

Test(cmd_zset, zrandmember_counts_in_both_encodings)
{
    fill("small", 20);
    expect("OBJECT ENCODING small", "$8\r\nlistpack\r\n");
    fill("big", 300);
    expect("OBJECT ENCODING big", "$8\r\nskiplist\r\n");
    int counts[] = {1, 2, 5, 10, 19, 20, 25, -1, -7, -50};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        check_randmember("small", 20, counts[i], 0);
        check_randmember("small", 20, counts[i], 1);
    }
    int bigcounts[] = {1, 10, 99, 101, 250, 299, 300, 301, -3, -500};
    for (size_t i = 0; i < sizeof(bigcounts) / sizeof(bigcounts[0]); i++) {
        check_randmember("big", 300, bigcounts[i], 0);
        check_randmember("big", 300, bigcounts[i], 1);
    }
    /* a single member: a bulk string of one of them */
    char *r = reply_of("ZRANDMEMBER big");
    cr_assert(strncmp(r, "$", 1) == 0 && strstr(r, "m"));
    xfree(r);
    /* RESP3 with scores: nested pairs */
    C->resp = 3;
    r = reply_of("ZRANDMEMBER small -2 WITHSCORES");
    cr_assert(strncmp(r, "*2\r\n*2\r\n$", 9) == 0, "%s", escaped(r, strlen(r)));
    xfree(r);
}

Test(cmd_zset, zscan_over_a_skiplist_returns_every_member)
{
    fill("z", 500);
    expect("OBJECT ENCODING z", "$8\r\nskiplist\r\n");
    for (int pass = 0; pass < 2; pass++) {
        char seen[500] = {0}, items[2000][64];
        unsigned long long cursor = 0;
        int calls = 0;
        do {
            char cmd[96];
            snprintf(cmd, sizeof(cmd), "ZSCAN z %llu COUNT 20%s", cursor, pass ? " MATCH m1*" : "");
            char *r = reply_of(cmd);
            cr_assert(strncmp(r, "*2\r\n$", 5) == 0);
            const char *p = strstr(r + 4, "\r\n") + 2;
            cursor = strtoull(p, NULL, 10);
            p = strstr(p, "\r\n") + 2;
            int n = parse_bulks(p, items, 2000);
            cr_assert_eq(n % 2, 0);
            for (int i = 0; i < n; i += 2) {
                int idx = atoi(items[i] + 1);
                cr_assert_eq(atoi(items[i + 1]), idx);
                if (pass) cr_assert_eq(items[i][1], '1');
                seen[idx] = 1;
            }
            xfree(r);
            calls++;
        } while (cursor);
        cr_assert_gt(calls, 5);
        for (int i = 0; i < 500; i++) {
            char name[16];
            snprintf(name, sizeof(name), "m%d", i);
            int want = !pass || name[1] == '1';
            cr_assert_eq(seen[i], want, "m%d seen=%d", i, seen[i]);
        }
    }
}

Test(cmd_zset, reads_count_keyspace_hits_and_misses)
{
    expect("ZADD z 1 a", ":1\r\n");
    uint64_t hits = srv.stat.keyspace_hits, misses = srv.stat.keyspace_misses;
    expect("ZSCORE z a", "$1\r\n1\r\n");
    expect("ZSCORE nokey a", "$-1\r\n");
    expect("ZRANGE z 0 -1", "*1\r\n$1\r\na\r\n");
    expect("ZUNION 2 z nokey", "*1\r\n$1\r\na\r\n");
    cr_assert_eq(srv.stat.keyspace_hits, hits + 3);
    cr_assert_eq(srv.stat.keyspace_misses, misses + 2);
    /* writes do not count */
    expect("ZADD z 2 b", ":1\r\n");
    expect("ZREM nokey a", ":0\r\n");
    cr_assert_eq(srv.stat.keyspace_hits, hits + 3);
    cr_assert_eq(srv.stat.keyspace_misses, misses + 2);
}

Test(cmd_zset, writes_mark_the_keyspace_dirty_only_when_they_change_it)
{
    long long d = srv.dirty;
    expect("ZADD z 1 a", ":1\r\n");
    cr_assert_gt(srv.dirty, d);
    d = srv.dirty;
    expect("ZADD z 1 a", ":0\r\n");
    expect("ZADD z XX 5 nope", ":0\r\n");
    expect("ZREM z nope", ":0\r\n");
    expect("ZREMRANGEBYSCORE z 5 10", ":0\r\n");
    expect("ZPOPMIN nokey", "*0\r\n");
    cr_assert_eq(srv.dirty, d);
    expect("ZPOPMIN z", "*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    cr_assert_gt(srv.dirty, d);
    cr_assert_null(db_find(C->db, "z", 1));
}

Test(cmd_zset, large_sets_keep_order_through_commands)
{
    /* 2000 members with scores in reverse insertion order, over the skiplist encoding */
    for (int i = 0; i < 2000; i++) {
        char cmd[64];
        snprintf(cmd, sizeof(cmd), "ZADD z %d m%04d", 2000 - i, i);
        expect(cmd, ":1\r\n");
    }
    expect("ZCARD z", ":2000\r\n");
    expect("ZRANK z m1999", ":0\r\n");
    expect("ZREVRANK z m1999", ":1999\r\n");
    expect("ZRANGE z 0 1", "*2\r\n$5\r\nm1999\r\n$5\r\nm1998\r\n");
    expect("ZRANGEBYSCORE z (1000 1002", "*2\r\n$5\r\nm0999\r\n$5\r\nm0998\r\n");
    expect("ZRANGEBYSCORE z -inf +inf LIMIT 1500 2", "*2\r\n$5\r\nm0499\r\n$5\r\nm0498\r\n");
    expect("ZREVRANGEBYSCORE z +inf -inf LIMIT 1500 1", "*1\r\n$5\r\nm1500\r\n");
    expect("ZCOUNT z 100 (200", ":100\r\n");
    expect("ZREMRANGEBYRANK z 0 999", ":1000\r\n");
    expect("ZRANGE z 0 0 WITHSCORES", "*2\r\n$5\r\nm0999\r\n$4\r\n1001\r\n");
    expect("ZREMRANGEBYSCORE z (1500 +inf", ":500\r\n");
    expect("ZCARD z", ":500\r\n");
    expect("ZPOPMAX z 2", "*4\r\n$5\r\nm0500\r\n$4\r\n1500\r\n$5\r\nm0501\r\n$4\r\n1499\r\n");
    expect("ZRANGESTORE d z 0 -1", ":498\r\n");
    expect("OBJECT ENCODING d", "$8\r\nskiplist\r\n");
    expect("ZRANGESTORE d z 0 9", ":10\r\n");
    expect("OBJECT ENCODING d", "$8\r\nlistpack\r\n");
    expect("ZRANGE d 0 -1 REV", "*10\r\n$5\r\nm0990\r\n$5\r\nm0991\r\n$5\r\nm0992\r\n"
                                "$5\r\nm0993\r\n$5\r\nm0994\r\n$5\r\nm0995\r\n$5\r\nm0996\r\n"
                                "$5\r\nm0997\r\n$5\r\nm0998\r\n$5\r\nm0999\r\n");
}

/* Redis fills ZRANGESTORE's destination through a listpack until an entry breaks the limits;
 * a listpack keeps -0 as 0, so only the entries inserted after the conversion keep -0 (found
 * by the differential test, seed 1227918838). */
Test(cmd_zset, zrangestore_keeps_redis_signed_zeros)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "ZADD src 3 %070d", 0); /* a 70-byte member: a skiplist */
    run(cmd);
    run("ZADD src -0 f 5 g");
    run("ZINCRBY src -0 h"); /* h = -0, f = -0, both before the long member */
    expect("ZSCORE src f", "$2\r\n-0\r\n");
    run("ZRANGESTORE dst src 0 -1");
    expect("ZSCORE dst f", "$1\r\n0\r\n");
    expect("ZSCORE dst h", "$1\r\n0\r\n");
    expect("OBJECT ENCODING dst", "$8\r\nskiplist\r\n");
    run("ZRANGESTORE rev src 0 -1 REV"); /* g and the long member come first: -0 stays */
    expect("ZSCORE rev f", "$2\r\n-0\r\n");
}

/* ZRANGE by rank of a set whose reply could never fit in max-reply-bytes is refused; a range
 * that starts but grows past it closes the client. */
Test(cmd_zset, zrange_past_max_reply_bytes_is_refused)
{
    static char line[24 * 2000 + 16];
    for (int b = 0; b < 100; b++) {
        int n = snprintf(line, sizeof(line), "ZADD z");
        for (int i = 0; i < 2000; i++)
            n += snprintf(line + n, sizeof(line) - (size_t)n, " 0 m%d", b * 2000 + i);
        harness_send(C, line);
    }
    buf_clear(&C->out);
    expect("ZCARD z", ":200000\r\n");
    expect("CONFIG SET max-reply-bytes 1mb", "+OK\r\n");
    expect("ZRANGE z -9223372036854775808 9223372036854775807",
           "-ERR reply of at least 1200000 bytes would exceed max-reply-bytes (1048576 bytes)\r\n");
    expect("ZRANGE z 0 99999 WITHSCORES",
           "-ERR reply of at least 1200000 bytes would exceed max-reply-bytes (1048576 bytes)\r\n");
    expect("ZRANGE z 0 9 WITHSCORES LIMIT 0 1",
           "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
           "BYLEX\r\n");
    harness_send(C, "ZRANGE z 0 99999"); /* 600 KB at least, 1.1 MB really */
    cr_assert(C->flags & CLIENT_CLOSE_ASAP);
    cr_assert_eq(C->out.len, 0);
}

/* A transaction whose client was closed for its output limits by an earlier command: the
 * ZRANGESTORE after it still stores the whole range, as the append-only file replays it. */
Test(cmd_zset, zrangestore_stores_everything_after_the_client_was_closed_for_its_limits)
{
    static char line[24 * 2000 + 16];
    int n = snprintf(line, sizeof(line), "RPUSH big");
    for (int i = 0; i < 2000; i++) n += snprintf(line + n, sizeof(line) - (size_t)n, " e%06d", i);
    harness_send(C, line);
    harness_send(C, "ZADD src 1 a 2 b 3 c");
    expect("CONFIG SET max-reply-bytes 1mb", "+OK\r\n");
    expect("CONFIG SET client-output-buffer-limit \"normal 1mb 1mb 0\"", "+OK\r\n");
    harness_send(C, "MULTI");
    for (int i = 0; i < 120; i++) harness_send(C, "LRANGE big 0 -1"); /* ~2 MB of replies */
    harness_send(C, "ZRANGESTORE dst src 0 -1");
    harness_send(C, "EXEC");
    cr_assert(C->flags & CLIENT_CLOSE_ASAP, "the transaction's replies passed the limit");
    client_t *other = client_new(NULL, NULL, -1);
    harness_send(other, "ZRANGE dst 0 -1");
    cr_assert_str_eq(escaped(other->out.data, other->out.len),
                     "*3\\r\\n$1\\r\\na\\r\\n$1\\r\\nb\\r\\n$1\\r\\nc\\r\\n");
    client_free(other);
}
