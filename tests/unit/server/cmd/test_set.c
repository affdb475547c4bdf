/* tests/unit/server/cmd/test_set.c - server/cmd/set.c through the socketless client.
 *
 * Most tests are scenarios: a sequence of commands, each with the exact reply bytes that
 * redis-server 7.0.15 gave for it in RESP2 and in RESP3 (NULL: the same bytes). A scenario
 * runs twice on a fresh keyspace with set-max-intset-entries 512, once per protocol. Their
 * replies have an order Redis defines (intsets are sorted; results of SUNION and SDIFF are
 * built as new intsets), or a single member: the order of a hashtable comes from the hash
 * function and is not compared byte for byte. They cover every option and error of each
 * command, the intset widths, conversions to hashtable and key deletion when a set empties.
 * The hand-written tests at the end check what is random (SPOP and SRANDMEMBER with counts,
 * SSCAN over a hashtable) by its properties, plus keyspace events, srv.dirty, WATCH and
 * keyspace hit/miss counting. */
#include "common/alloc.h"
#include "common/util.h"
#include "server/client.h"
#include "server/command.h"
#include "server/server.h"
#include "storage/db.h"
#include "storage/object.h"
#include "storage/t_set.h"

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

TestSuite(cmd_set, .init = setup, .fini = teardown);

/* Sends a command written as words separated by spaces from client c; a word in double quotes
 * may hold spaces or be empty (""). */
static void run_on(client_t *c, const char *line)
{
    harness_send(c, line);
}

static char *escaped(const char *p, size_t n)
{
    return harness_escaped(p, n);
}

/* What client c has received so far, as a NUL-terminated copy (caller frees); clears it. */
static char *take_out(client_t *c)
{
    char *r = xmemdup(c->out.data ? c->out.data : "", c->out.len);
    buf_clear(&c->out);
    return r;
}

/* The reply of a command as a NUL-terminated copy (caller frees). */
static char *reply_of(const char *line)
{
    buf_clear(&C->out);
    run_on(C, line);
    return take_out(C);
}

static void expect(const char *line, const char *want)
{
    harness_expect(C, line, want);
}

typedef harness_step_t step_t;

static void run_steps(const step_t *steps, size_t n)
{
    static const char *const prelude[] = {"CONFIG SET set-max-intset-entries 512", NULL};
    harness_run_steps(C, steps, n, prelude);
}

/* ---- scenarios (expected bytes from redis-server 7.0.15) ---- */

Test(cmd_set, sadd_srem_scard_sismember)
{
    static const step_t steps[] = {
        {"SADD s 3 1 2", ":3\r\n", NULL},
        {"SADD s 3 2 4", ":1\r\n", NULL},
        {"SADD s 4", ":0\r\n", NULL},
        {"SCARD s", ":4\r\n", NULL},
        {"SMEMBERS s", "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n",
         "~4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
        {"SISMEMBER s 1", ":1\r\n", NULL},
        {"SISMEMBER s 9", ":0\r\n", NULL},
        {"SISMEMBER s a", ":0\r\n", NULL},
        {"SISMEMBER nokey 1", ":0\r\n", NULL},
        {"SMISMEMBER s 1 9 a 4", "*4\r\n:1\r\n:0\r\n:0\r\n:1\r\n", NULL},
        {"SMISMEMBER nokey a b", "*2\r\n:0\r\n:0\r\n", NULL},
        {"SREM s 9 a", ":0\r\n", NULL},
        {"SREM s 1 1 3", ":2\r\n", NULL},
        {"SMEMBERS s", "*2\r\n$1\r\n2\r\n$1\r\n4\r\n", "~2\r\n$1\r\n2\r\n$1\r\n4\r\n"},
        {"SREM nokey a", ":0\r\n", NULL},
        {"SREM s 2 4 5", ":2\r\n", NULL},
        {"EXISTS s", ":0\r\n", NULL},
        {"SCARD s", ":0\r\n", NULL},
        {"SMEMBERS s", "*0\r\n", "~0\r\n"},
        {"SADD h \"\"", ":1\r\n", NULL},
        {"SISMEMBER h \"\"", ":1\r\n", NULL},
        {"SMEMBERS h", "*1\r\n$0\r\n\r\n", "~1\r\n$0\r\n\r\n"},
        {"SCARD h", ":1\r\n", NULL},
        {"SREM h \"\"", ":1\r\n", NULL},
        {"EXISTS h", ":0\r\n", NULL},
        {"SADD h a", ":1\r\n", NULL},
        {"SREM h a b c", ":1\r\n", NULL},
        {"EXISTS h", ":0\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_set, intset_widths_keep_sorted_order)
{
    static const step_t steps[] = {
        {"SADD s 5 -1", ":2\r\n", NULL},
        {"OBJECT ENCODING s", "$6\r\nintset\r\n", NULL},
        {"SADD s 32767 -32768", ":2\r\n", NULL},
        {"SMEMBERS s", "*4\r\n$6\r\n-32768\r\n$2\r\n-1\r\n$1\r\n5\r\n$5\r\n32767\r\n",
         "~4\r\n$6\r\n-32768\r\n$2\r\n-1\r\n$1\r\n5\r\n$5\r\n32767\r\n"},
        {"SADD s 32768", ":1\r\n", NULL},
        {"SMEMBERS s",
         "*5\r\n$6\r\n-32768\r\n$2\r\n-1\r\n$1\r\n5\r\n$5\r\n32767\r\n$5\r\n32768\r\n",
         "~5\r\n$6\r\n-32768\r\n$2\r\n-1\r\n$1\r\n5\r\n$5\r\n32767\r\n$5\r\n32768\r\n"},
        {"SADD s -2147483649", ":1\r\n", NULL},
        {"SMEMBERS s",
         "*6\r\n$11\r\n-2147483649\r\n$6\r\n-32768\r\n$2\r\n-1\r\n$1\r\n5\r\n$5\r\n32767\r\n$"
         "5\r\n32768\r\n",
         "~6\r\n$11\r\n-2147483649\r\n$6\r\n-32768\r\n$2\r\n-1\r\n$1\r\n5\r\n$5\r\n32767\r\n$"
         "5\r\n32768\r\n"},
        {"SADD s 9223372036854775807 -9223372036854775808", ":2\r\n", NULL},
        {"SMEMBERS s",
         "*8\r\n$20\r\n-9223372036854775808\r\n$11\r\n-2147483649\r\n$6\r\n-32768\r\n$2\r\n-1\r\n$"
         "1\r\n5\r\n$5\r\n32767\r\n$5\r\n32768\r\n$19\r\n9223372036854775807\r\n",
         "~8\r\n$20\r\n-9223372036854775808\r\n$11\r\n-2147483649\r\n$6\r\n-32768\r\n$2\r\n-1\r\n$"
         "1\r\n5\r\n$5\r\n32767\r\n$5\r\n32768\r\n$19\r\n9223372036854775807\r\n"},
        {"OBJECT ENCODING s", "$6\r\nintset\r\n", NULL},
        {"SISMEMBER s 32768", ":1\r\n", NULL},
        {"SISMEMBER s 2147483648", ":0\r\n", NULL},
        {"SISMEMBER s -9223372036854775808", ":1\r\n", NULL},
        {"SREM s -9223372036854775808 32768 7", ":2\r\n", NULL},
        {"SMEMBERS s",
         "*6\r\n$11\r\n-2147483649\r\n$6\r\n-32768\r\n$2\r\n-1\r\n$1\r\n5\r\n$5\r\n32767\r\n$"
         "19\r\n9223372036854775807\r\n",
         "~6\r\n$11\r\n-2147483649\r\n$6\r\n-32768\r\n$2\r\n-1\r\n$1\r\n5\r\n$5\r\n32767\r\n$"
         "19\r\n9223372036854775807\r\n"},
        {"SCARD s", ":6\r\n", NULL},
        {"SADD s 0 -0", ":2\r\n", NULL},
        {"OBJECT ENCODING s", "$9\r\nhashtable\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_set, non_canonical_integers_need_a_hashtable)
{
    static const step_t steps[] = {
        {"SADD a 01", ":1\r\n", NULL},
        {"OBJECT ENCODING a", "$9\r\nhashtable\r\n", NULL},
        {"SADD b +1", ":1\r\n", NULL},
        {"OBJECT ENCODING b", "$9\r\nhashtable\r\n", NULL},
        {"SADD c \" 1\"", ":1\r\n", NULL},
        {"OBJECT ENCODING c", "$9\r\nhashtable\r\n", NULL},
        {"SADD d 9223372036854775808", ":1\r\n", NULL},
        {"OBJECT ENCODING d", "$9\r\nhashtable\r\n", NULL},
        {"SADD e -0", ":1\r\n", NULL},
        {"OBJECT ENCODING e", "$9\r\nhashtable\r\n", NULL},
        {"SADD f \"\"", ":1\r\n", NULL},
        {"OBJECT ENCODING f", "$9\r\nhashtable\r\n", NULL},
        {"SADD g 1.0", ":1\r\n", NULL},
        {"OBJECT ENCODING g", "$9\r\nhashtable\r\n", NULL},
        {"SADD i 1 2", ":2\r\n", NULL},
        {"SADD i x", ":1\r\n", NULL},
        {"OBJECT ENCODING i", "$9\r\nhashtable\r\n", NULL},
        {"SREM i x", ":1\r\n", NULL},
        {"OBJECT ENCODING i", "$9\r\nhashtable\r\n", NULL},
        {"SCARD i", ":2\r\n", NULL},
        {"SISMEMBER i 1", ":1\r\n", NULL},
        {"SISMEMBER i 01", ":0\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_set, encoding_follows_set_max_intset_entries)
{
    static const step_t steps[] = {
        {"CONFIG SET set-max-intset-entries 4", "+OK\r\n", NULL},
        {"SADD s 4 3 2 1", ":4\r\n", NULL},
        {"OBJECT ENCODING s", "$6\r\nintset\r\n", NULL},
        {"SADD s 1 2", ":0\r\n", NULL},
        {"OBJECT ENCODING s", "$6\r\nintset\r\n", NULL},
        {"SADD s 5", ":1\r\n", NULL},
        {"OBJECT ENCODING s", "$9\r\nhashtable\r\n", NULL},
        {"SREM s 5 4", ":2\r\n", NULL},
        {"OBJECT ENCODING s", "$9\r\nhashtable\r\n", NULL},
        {"SCARD s", ":3\r\n", NULL},
        {"SUNION s", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"SDIFF s nokey", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"SUNIONSTORE d s", ":3\r\n", NULL},
        {"OBJECT ENCODING d", "$6\r\nintset\r\n", NULL},
        {"SMEMBERS d", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"SADD b 1 2 3 4", ":4\r\n", NULL},
        {"SADD c 5 6", ":2\r\n", NULL},
        {"SUNIONSTORE u b c", ":6\r\n", NULL},
        {"OBJECT ENCODING u", "$9\r\nhashtable\r\n", NULL},
        {"SCARD u", ":6\r\n", NULL},
        {"SINTERSTORE i b d", ":3\r\n", NULL},
        {"OBJECT ENCODING i", "$6\r\nintset\r\n", NULL},
        {"SMEMBERS i", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"CONFIG SET set-max-intset-entries 0", "+OK\r\n", NULL},
        {"SADD z 1", ":1\r\n", NULL},
        {"OBJECT ENCODING z", "$9\r\nhashtable\r\n", NULL},
        {"SUNIONSTORE z2 b", ":4\r\n", NULL},
        {"OBJECT ENCODING z2", "$9\r\nhashtable\r\n", NULL},
        {"CONFIG SET set-max-intset-entries 512", "+OK\r\n", NULL},
        {"SADD n x 1", ":2\r\n", NULL},
        {"OBJECT ENCODING n", "$9\r\nhashtable\r\n", NULL},
        {"SADD m 1 x", ":2\r\n", NULL},
        {"OBJECT ENCODING m", "$9\r\nhashtable\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_set, smove_moves_and_creates)
{
    static const step_t steps[] = {
        {"SADD a 1 2 3", ":3\r\n", NULL},
        {"SMOVE a b 1", ":1\r\n", NULL},
        {"SMEMBERS a", "*2\r\n$1\r\n2\r\n$1\r\n3\r\n", "~2\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"SMEMBERS b", "*1\r\n$1\r\n1\r\n", "~1\r\n$1\r\n1\r\n"},
        {"OBJECT ENCODING b", "$6\r\nintset\r\n", NULL},
        {"SMOVE a b 1", ":0\r\n", NULL},
        {"SMOVE a b 9", ":0\r\n", NULL},
        {"SMOVE nokey b 1", ":0\r\n", NULL},
        {"SMOVE a a 2", ":1\r\n", NULL},
        {"SMOVE a a 9", ":0\r\n", NULL},
        {"SMEMBERS a", "*2\r\n$1\r\n2\r\n$1\r\n3\r\n", "~2\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"SADD b 2", ":1\r\n", NULL},
        {"SMOVE a b 2", ":1\r\n", NULL},
        {"SMEMBERS a", "*1\r\n$1\r\n3\r\n", "~1\r\n$1\r\n3\r\n"},
        {"SMEMBERS b", "*2\r\n$1\r\n1\r\n$1\r\n2\r\n", "~2\r\n$1\r\n1\r\n$1\r\n2\r\n"},
        {"SMOVE a b 3", ":1\r\n", NULL},
        {"EXISTS a", ":0\r\n", NULL},
        {"SMEMBERS b", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"SADD h x", ":1\r\n", NULL},
        {"SMOVE h b x", ":1\r\n", NULL},
        {"OBJECT ENCODING b", "$9\r\nhashtable\r\n", NULL},
        {"EXISTS h", ":0\r\n", NULL},
        {"SMOVE b h x", ":1\r\n", NULL},
        {"OBJECT ENCODING h", "$9\r\nhashtable\r\n", NULL},
        {"SMEMBERS h", "*1\r\n$1\r\nx\r\n", "~1\r\n$1\r\nx\r\n"},
        {"SET str v", "+OK\r\n", NULL},
        {"SMOVE nokey str a", ":0\r\n", NULL},
        {"SMOVE str b 1", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SMOVE b str 1", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SMOVE str str 1",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SCARD b", ":3\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_set, sinter_sunion_sdiff)
{
    static const step_t steps[] = {
        {"SADD a 1 2 3 4 5 6", ":6\r\n", NULL},
        {"SADD b 4 5 6 7 8", ":5\r\n", NULL},
        {"SADD c 6 7 8 9 10", ":5\r\n", NULL},
        {"SADD d 5", ":1\r\n", NULL},
        {"SINTER a b", "*3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n",
         "~3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n"},
        {"SINTER a b c", "*1\r\n$1\r\n6\r\n", "~1\r\n$1\r\n6\r\n"},
        {"SINTER c b a", "*1\r\n$1\r\n6\r\n", "~1\r\n$1\r\n6\r\n"},
        {"SINTER a", "*6\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n",
         "~6\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n"},
        {"SINTER a a", "*6\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n",
         "~6\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n"},
        {"SINTER a nokey", "*0\r\n", "~0\r\n"},
        {"SINTER nokey", "*0\r\n", "~0\r\n"},
        {"SINTER a d", "*1\r\n$1\r\n5\r\n", "~1\r\n$1\r\n5\r\n"},
        {"SUNION a b c",
         "*10\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n$1\r\n7\r\n$"
         "1\r\n8\r\n$1\r\n9\r\n$2\r\n10\r\n",
         "~10\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n$1\r\n7\r\n$"
         "1\r\n8\r\n$1\r\n9\r\n$2\r\n10\r\n"},
        {"SUNION c nokey b",
         "*7\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n$1\r\n7\r\n$1\r\n8\r\n$1\r\n9\r\n$2\r\n10\r\n",
         "~7\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n$1\r\n7\r\n$1\r\n8\r\n$1\r\n9\r\n$2\r\n10\r\n"},
        {"SUNION nokey", "*0\r\n", "~0\r\n"},
        {"SUNION a a", "*6\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n",
         "~6\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n"},
        {"SDIFF a b", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"SDIFF a b c", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"SDIFF c a", "*4\r\n$1\r\n7\r\n$1\r\n8\r\n$1\r\n9\r\n$2\r\n10\r\n",
         "~4\r\n$1\r\n7\r\n$1\r\n8\r\n$1\r\n9\r\n$2\r\n10\r\n"},
        {"SDIFF a nokey",
         "*6\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n",
         "~6\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n"},
        {"SDIFF nokey a", "*0\r\n", "~0\r\n"},
        {"SDIFF a a", "*0\r\n", "~0\r\n"},
        {"SDIFF a b a", "*0\r\n", "~0\r\n"},
        {"SDIFF a d nokey b", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"SDIFF b a c", "*0\r\n", "~0\r\n"},
        {"SADD big 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", ":20\r\n", NULL},
        {"SDIFF d big", "*0\r\n", "~0\r\n"},
        {"SDIFF big a b",
         "*12\r\n$1\r\n9\r\n$2\r\n10\r\n$2\r\n11\r\n$2\r\n12\r\n$2\r\n13\r\n$2\r\n14\r\n$"
         "2\r\n15\r\n$2\r\n16\r\n$2\r\n17\r\n$2\r\n18\r\n$2\r\n19\r\n$2\r\n20\r\n",
         "~12\r\n$1\r\n9\r\n$2\r\n10\r\n$2\r\n11\r\n$2\r\n12\r\n$2\r\n13\r\n$2\r\n14\r\n$"
         "2\r\n15\r\n$2\r\n16\r\n$2\r\n17\r\n$2\r\n18\r\n$2\r\n19\r\n$2\r\n20\r\n"},
        {"SDIFF big d",
         "*19\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n6\r\n$1\r\n7\r\n$1\r\n8\r\n$"
         "1\r\n9\r\n$2\r\n10\r\n$2\r\n11\r\n$2\r\n12\r\n$2\r\n13\r\n$2\r\n14\r\n$2\r\n15\r\n$"
         "2\r\n16\r\n$2\r\n17\r\n$2\r\n18\r\n$2\r\n19\r\n$2\r\n20\r\n",
         "~19\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n6\r\n$1\r\n7\r\n$1\r\n8\r\n$"
         "1\r\n9\r\n$2\r\n10\r\n$2\r\n11\r\n$2\r\n12\r\n$2\r\n13\r\n$2\r\n14\r\n$2\r\n15\r\n$"
         "2\r\n16\r\n$2\r\n17\r\n$2\r\n18\r\n$2\r\n19\r\n$2\r\n20\r\n"},
        {"SINTERCARD 2 a b", ":3\r\n", NULL},
        {"SINTERCARD 3 a b c", ":1\r\n", NULL},
        {"SINTERCARD 2 a b LIMIT 0", ":3\r\n", NULL},
        {"SINTERCARD 2 a b LIMIT 2", ":2\r\n", NULL},
        {"SINTERCARD 1 a LIMIT 4", ":4\r\n", NULL},
        {"SINTERCARD 1 a limit 100", ":6\r\n", NULL},
        {"SINTERCARD 2 a nokey", ":0\r\n", NULL},
        {"SINTERCARD 1 nokey", ":0\r\n", NULL},
        {"SINTERCARD 2 a b LIMIT 1 LIMIT 0", ":3\r\n", NULL},
        {"SADD h a 5", ":2\r\n", NULL},
        {"SINTER h a", "*1\r\n$1\r\n5\r\n", "~1\r\n$1\r\n5\r\n"},
        {"SUNIONSTORE u d h", ":2\r\n", NULL},
        {"SCARD u", ":2\r\n", NULL},
        {"SISMEMBER u a", ":1\r\n", NULL},
        {"SDIFF h a", "*1\r\n$1\r\na\r\n", "~1\r\n$1\r\na\r\n"},
        {"SINTERCARD 2 h a", ":1\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_set, set_operation_errors)
{
    static const step_t steps[] = {
        {"SADD a 1", ":1\r\n", NULL},
        {"SET str v", "+OK\r\n", NULL},
        {"SINTER a str", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SINTER nokey str",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SUNION a str", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SDIFF str a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SDIFF nokey str",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SINTERSTORE d a str",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SUNIONSTORE d str",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SDIFFSTORE d a str",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"EXISTS d", ":0\r\n", NULL},
        {"SINTERCARD 0 a", "-ERR numkeys should be greater than 0\r\n", NULL},
        {"SINTERCARD -1 a", "-ERR numkeys should be greater than 0\r\n", NULL},
        {"SINTERCARD x a", "-ERR numkeys should be greater than 0\r\n", NULL},
        {"SINTERCARD 3 a str", "-ERR Number of keys can't be greater than number of args\r\n",
         NULL},
        {"SINTERCARD 1 a LIMIT -1", "-ERR LIMIT can't be negative\r\n", NULL},
        {"SINTERCARD 1 a LIMIT x", "-ERR LIMIT can't be negative\r\n", NULL},
        {"SINTERCARD 1 a LIMIT", "-ERR syntax error\r\n", NULL},
        {"SINTERCARD 1 a FOO 1", "-ERR syntax error\r\n", NULL},
        {"SINTERCARD 1 str",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SINTERCARD 2 nokey str",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SINTERCARD 2 a a b", "-ERR syntax error\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_set, store_operations_overwrite_or_delete)
{
    static const step_t steps[] = {
        {"SADD a 1 2 3", ":3\r\n", NULL},
        {"SADD b 2 3 4", ":3\r\n", NULL},
        {"SET d string", "+OK\r\n", NULL},
        {"SINTERSTORE d a b", ":2\r\n", NULL},
        {"TYPE d", "+set\r\n", NULL},
        {"SMEMBERS d", "*2\r\n$1\r\n2\r\n$1\r\n3\r\n", "~2\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"OBJECT ENCODING d", "$6\r\nintset\r\n", NULL},
        {"EXPIRE d 100", ":1\r\n", NULL},
        {"SUNIONSTORE d a b", ":4\r\n", NULL},
        {"TTL d", ":-1\r\n", NULL},
        {"SMEMBERS d", "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n",
         "~4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
        {"SDIFFSTORE d a b", ":1\r\n", NULL},
        {"SMEMBERS d", "*1\r\n$1\r\n1\r\n", "~1\r\n$1\r\n1\r\n"},
        {"SDIFFSTORE d b a", ":1\r\n", NULL},
        {"SMEMBERS d", "*1\r\n$1\r\n4\r\n", "~1\r\n$1\r\n4\r\n"},
        {"SINTERSTORE d a nokey", ":0\r\n", NULL},
        {"EXISTS d", ":0\r\n", NULL},
        {"SUNIONSTORE d a", ":3\r\n", NULL},
        {"SDIFFSTORE d a a", ":0\r\n", NULL},
        {"EXISTS d", ":0\r\n", NULL},
        {"SUNIONSTORE d nokey", ":0\r\n", NULL},
        {"EXISTS d", ":0\r\n", NULL},
        {"SINTERSTORE a a b", ":2\r\n", NULL},
        {"SMEMBERS a", "*2\r\n$1\r\n2\r\n$1\r\n3\r\n", "~2\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"SDIFFSTORE a a b", ":0\r\n", NULL},
        {"EXISTS a", ":0\r\n", NULL},
        {"SADD h x y", ":2\r\n", NULL},
        {"SUNIONSTORE d h", ":2\r\n", NULL},
        {"OBJECT ENCODING d", "$9\r\nhashtable\r\n", NULL},
        {"SCARD d", ":2\r\n", NULL},
        {"SDIFFSTORE d h b", ":2\r\n", NULL},
        {"SCARD d", ":2\r\n", NULL},
        {"SINTERSTORE d b", ":3\r\n", NULL},
        {"OBJECT ENCODING d", "$6\r\nintset\r\n", NULL},
        {"SMEMBERS d", "*3\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n",
         "~3\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_set, integer_hashtables_come_back_sorted_from_sunion_and_sdiff)
{
    static const step_t steps[] = {
        {"SADD s 1 2 3 x", ":4\r\n", NULL},
        {"SREM s x", ":1\r\n", NULL},
        {"OBJECT ENCODING s", "$9\r\nhashtable\r\n", NULL},
        {"SUNION s", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"SDIFF s", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"SDIFF s nokey", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"SUNIONSTORE d s", ":3\r\n", NULL},
        {"OBJECT ENCODING d", "$6\r\nintset\r\n", NULL},
        {"SMEMBERS d", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"SPOP s 10", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"EXISTS s", ":0\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_set, spop_and_srandmember_replies)
{
    static const step_t steps[] = {
        {"SPOP nokey", "$-1\r\n", "_\r\n"},
        {"SPOP nokey 0", "*0\r\n", "~0\r\n"},
        {"SPOP nokey 3", "*0\r\n", "~0\r\n"},
        {"SRANDMEMBER nokey", "$-1\r\n", "_\r\n"},
        {"SRANDMEMBER nokey 0", "*0\r\n", NULL},
        {"SRANDMEMBER nokey 3", "*0\r\n", NULL},
        {"SRANDMEMBER nokey -3", "*0\r\n", NULL},
        {"SADD s 3 1 2", ":3\r\n", NULL},
        {"SPOP s 0", "*0\r\n", "~0\r\n"},
        {"SRANDMEMBER s 0", "*0\r\n", NULL},
        {"SRANDMEMBER s 3", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n", NULL},
        {"SRANDMEMBER s 100", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n", NULL},
        {"SPOP s 3", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"EXISTS s", ":0\r\n", NULL},
        {"SADD s 3 1 2", ":3\r\n", NULL},
        {"SPOP s 100", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
         "~3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
        {"EXISTS s", ":0\r\n", NULL},
        {"SADD one x", ":1\r\n", NULL},
        {"SRANDMEMBER one", "$1\r\nx\r\n", NULL},
        {"SRANDMEMBER one 1", "*1\r\n$1\r\nx\r\n", NULL},
        {"SRANDMEMBER one -3", "*3\r\n$1\r\nx\r\n$1\r\nx\r\n$1\r\nx\r\n", NULL},
        {"SRANDMEMBER one 5", "*1\r\n$1\r\nx\r\n", NULL},
        {"SPOP one 1", "*1\r\n$1\r\nx\r\n", "~1\r\n$1\r\nx\r\n"},
        {"EXISTS one", ":0\r\n", NULL},
        {"SADD one 7", ":1\r\n", NULL},
        {"SPOP one", "$1\r\n7\r\n", NULL},
        {"EXISTS one", ":0\r\n", NULL},
        {"SPOP one", "$-1\r\n", "_\r\n"},
        {"SADD s 1", ":1\r\n", NULL},
        {"SPOP s -1", "-ERR value is out of range, must be positive\r\n", NULL},
        {"SPOP s x", "-ERR value is out of range, must be positive\r\n", NULL},
        {"SPOP s 1 2", "-ERR syntax error\r\n", NULL},
        {"SRANDMEMBER s x", "-ERR value is not an integer or out of range\r\n", NULL},
        {"SRANDMEMBER s 1 2", "-ERR syntax error\r\n", NULL},
        {"SRANDMEMBER s -9223372036854775808",
         "-ERR value is out of range, value must between -9223372036854775807 and "
         "9223372036854775807\r\n",
         NULL},
        {"SRANDMEMBER s 9223372036854775807", "*1\r\n$1\r\n1\r\n", NULL},
        {"SPOP s 9223372036854775807", "*1\r\n$1\r\n1\r\n", "~1\r\n$1\r\n1\r\n"},
        {"EXISTS s", ":0\r\n", NULL},
        {"SET str v", "+OK\r\n", NULL},
        {"SPOP str", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SPOP str 0", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SPOP nokey -1", "-ERR value is out of range, must be positive\r\n", NULL},
        {"SRANDMEMBER str",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SRANDMEMBER str -1",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_set, sscan_on_an_intset)
{
    static const step_t steps[] = {
        {"SADD s 5 10 15 20 25 100 150", ":7\r\n", NULL},
        {"SSCAN s 0",
         "*2\r\n$1\r\n0\r\n*7\r\n$1\r\n5\r\n$2\r\n10\r\n$2\r\n15\r\n$2\r\n20\r\n$2\r\n25\r\n$"
         "3\r\n100\r\n$3\r\n150\r\n",
         NULL},
        {"SSCAN s 0 COUNT 1",
         "*2\r\n$1\r\n0\r\n*7\r\n$1\r\n5\r\n$2\r\n10\r\n$2\r\n15\r\n$2\r\n20\r\n$2\r\n25\r\n$"
         "3\r\n100\r\n$3\r\n150\r\n",
         NULL},
        {"SSCAN s 0 MATCH 1*",
         "*2\r\n$1\r\n0\r\n*4\r\n$2\r\n10\r\n$2\r\n15\r\n$3\r\n100\r\n$3\r\n150\r\n", NULL},
        {"SSCAN s 0 match *5 count 2", "*2\r\n$1\r\n0\r\n*3\r\n$1\r\n5\r\n$2\r\n15\r\n$2\r\n25\r\n",
         NULL},
        {"SSCAN s 0 MATCH x*", "*2\r\n$1\r\n0\r\n*0\r\n", NULL},
        {"SSCAN s 7",
         "*2\r\n$1\r\n0\r\n*7\r\n$1\r\n5\r\n$2\r\n10\r\n$2\r\n15\r\n$2\r\n20\r\n$2\r\n25\r\n$"
         "3\r\n100\r\n$3\r\n150\r\n",
         NULL},
        {"SSCAN s -1",
         "*2\r\n$1\r\n0\r\n*7\r\n$1\r\n5\r\n$2\r\n10\r\n$2\r\n15\r\n$2\r\n20\r\n$2\r\n25\r\n$"
         "3\r\n100\r\n$3\r\n150\r\n",
         NULL},
        {"SSCAN s 18446744073709551615",
         "*2\r\n$1\r\n0\r\n*7\r\n$1\r\n5\r\n$2\r\n10\r\n$2\r\n15\r\n$2\r\n20\r\n$2\r\n25\r\n$"
         "3\r\n100\r\n$3\r\n150\r\n",
         NULL},
        {"SSCAN s 0 COUNT 0", "-ERR syntax error\r\n", NULL},
        {"SSCAN s 0 COUNT -1", "-ERR syntax error\r\n", NULL},
        {"SSCAN s 0 COUNT x", "-ERR value is not an integer or out of range\r\n", NULL},
        {"SSCAN s 0 MATCH", "-ERR syntax error\r\n", NULL},
        {"SSCAN s 0 TYPE set", "-ERR syntax error\r\n", NULL},
        {"SSCAN s abc", "-ERR invalid cursor\r\n", NULL},
        {"SSCAN s 18446744073709551616", "-ERR invalid cursor\r\n", NULL},
        {"SSCAN s \" 0\"", "-ERR invalid cursor\r\n", NULL},
        {"SSCAN s \"\"",
         "*2\r\n$1\r\n0\r\n*7\r\n$1\r\n5\r\n$2\r\n10\r\n$2\r\n15\r\n$2\r\n20\r\n$2\r\n25\r\n$"
         "3\r\n100\r\n$3\r\n150\r\n",
         NULL},
        {"SSCAN nokey 0", "*2\r\n$1\r\n0\r\n*0\r\n", NULL},
        {"SSCAN nokey 0 COUNT 0", "*2\r\n$1\r\n0\r\n*0\r\n", NULL},
        {"SSCAN nokey x", "-ERR invalid cursor\r\n", NULL},
        {"SADD h a", ":1\r\n", NULL},
        {"SSCAN h 0", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n", NULL},
        {"SSCAN h 0 MATCH b", "*2\r\n$1\r\n0\r\n*0\r\n", NULL},
        {"SET str v", "+OK\r\n", NULL},
        {"SSCAN str 0", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SSCAN str x", "-ERR invalid cursor\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_set, wrongtype_for_every_command)
{
    static const step_t steps[] = {
        {"SET k v", "+OK\r\n", NULL},
        {"SADD k a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SREM k a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SMEMBERS k", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SISMEMBER k a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SMISMEMBER k a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SCARD k", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SPOP k", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SPOP k 1", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SRANDMEMBER k", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SRANDMEMBER k 1",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SMOVE k d a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SINTER k", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SINTERCARD 1 k", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SUNION k", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SDIFF k", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SINTERSTORE d k",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SUNIONSTORE d k",
         "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
        {"SDIFFSTORE d k", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"SSCAN k 0", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         NULL},
        {"GET k", "$1\r\nv\r\n", NULL},
        {"SADD s a", ":1\r\n", NULL},
        {"GET s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_set, arity_errors)
{
    static const step_t steps[] = {
        {"SADD", "-ERR wrong number of arguments for 'sadd' command\r\n", NULL},
        {"SADD s", "-ERR wrong number of arguments for 'sadd' command\r\n", NULL},
        {"SREM s", "-ERR wrong number of arguments for 'srem' command\r\n", NULL},
        {"SMEMBERS", "-ERR wrong number of arguments for 'smembers' command\r\n", NULL},
        {"SMEMBERS a b", "-ERR wrong number of arguments for 'smembers' command\r\n", NULL},
        {"SISMEMBER s", "-ERR wrong number of arguments for 'sismember' command\r\n", NULL},
        {"SISMEMBER s a b", "-ERR wrong number of arguments for 'sismember' command\r\n", NULL},
        {"SMISMEMBER s", "-ERR wrong number of arguments for 'smismember' command\r\n", NULL},
        {"SCARD", "-ERR wrong number of arguments for 'scard' command\r\n", NULL},
        {"SCARD a b", "-ERR wrong number of arguments for 'scard' command\r\n", NULL},
        {"SPOP", "-ERR wrong number of arguments for 'spop' command\r\n", NULL},
        {"SRANDMEMBER", "-ERR wrong number of arguments for 'srandmember' command\r\n", NULL},
        {"SMOVE a b", "-ERR wrong number of arguments for 'smove' command\r\n", NULL},
        {"SMOVE a b c d", "-ERR wrong number of arguments for 'smove' command\r\n", NULL},
        {"SINTER", "-ERR wrong number of arguments for 'sinter' command\r\n", NULL},
        {"SINTERCARD 1", "-ERR wrong number of arguments for 'sintercard' command\r\n", NULL},
        {"SINTERSTORE d", "-ERR wrong number of arguments for 'sinterstore' command\r\n", NULL},
        {"SUNION", "-ERR wrong number of arguments for 'sunion' command\r\n", NULL},
        {"SUNIONSTORE d", "-ERR wrong number of arguments for 'sunionstore' command\r\n", NULL},
        {"SDIFF", "-ERR wrong number of arguments for 'sdiff' command\r\n", NULL},
        {"SDIFFSTORE d", "-ERR wrong number of arguments for 'sdiffstore' command\r\n", NULL},
        {"SSCAN s", "-ERR wrong number of arguments for 'sscan' command\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_set, command_getkeys_and_info)
{
    static const step_t steps[] = {
        {"COMMAND GETKEYS SINTERCARD 3 a b c LIMIT 1", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n",
         NULL},
        {"COMMAND GETKEYS SINTERSTORE d a b", "*3\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nb\r\n", NULL},
        {"COMMAND GETKEYS SMOVE a b m", "*2\r\n$1\r\na\r\n$1\r\nb\r\n", NULL},
        {"COMMAND GETKEYS SUNION a b c", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", NULL},
        {"COMMAND GETKEYS SADD s m", "*1\r\n$1\r\ns\r\n", NULL},
        {"COMMAND GETKEYS SDIFFSTORE d a", "*2\r\n$1\r\nd\r\n$1\r\na\r\n", NULL},
    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

/* ---- random replies, checked by their properties ---- */

#define MAXITEMS 1200

/* Parses a flat array or set of bulk strings; returns the count and the aggregate's type. */
static int parse_bulks(const char *r, char out[][32], int max, char *kind)
{
    int n = 0;
    cr_assert(r[0] == '*' || r[0] == '~', "not an array: %s", escaped(r, strlen(r)));
    *kind = r[0];
    int count = atoi(r + 1);
    const char *p = strstr(r, "\r\n") + 2;
    for (int i = 0; i < count; i++) {
        cr_assert_eq(*p, '$');
        int len = atoi(p + 1);
        p = strstr(p, "\r\n") + 2;
        cr_assert(n < max && len < 32);
        memcpy(out[n], p, (size_t)len);
        out[n++][len] = '\0';
        p += len + 2;
    }
    cr_assert_eq(*p, '\0', "trailing bytes after %d items", count);
    return n;
}

/* Members of the test sets: "i" (integers 0..n-1, an intset while n <= 512) or "m<i>"
 * (strings, a hashtable). */
static void fill(const char *key, int n, int ints)
{
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "SADD %s", key);
    for (int i = 0; i < n; i++) buf_printf(&b, ints ? " %d" : " m%d", i);
    char want[32];
    snprintf(want, sizeof(want), ":%d\r\n", n);
    expect(b.data, want);
    buf_deinit(&b);
}

static int member_index(const char *m, int ints)
{
    if (!ints) {
        cr_assert_eq(m[0], 'm', "stray member %s", m);
        m++;
    }
    return atoi(m);
}

/* Checks one SRANDMEMBER key l reply over a set of n members. */
static void check_srandmember(const char *key, int n, int ints, long l)
{
    static char items[MAXITEMS][32];
    char cmd[64], kind, seen[MAXITEMS] = {0};
    snprintf(cmd, sizeof(cmd), "SRANDMEMBER %s %ld", key, l);
    char *r = reply_of(cmd);
    int got = parse_bulks(r, items, MAXITEMS, &kind);
    long want = l < 0 ? -l : (l < n ? l : n);
    cr_assert_eq(kind, '*', "%s: SRANDMEMBER replies an array in RESP%d", cmd, C->resp);
    cr_assert_eq(got, want, "%s: %d items", cmd, got);
    for (int i = 0; i < got; i++) {
        int idx = member_index(items[i], ints);
        cr_assert(idx >= 0 && idx < n, "%s: %s is not a member", cmd, items[i]);
        if (l > 0) cr_assert(!seen[idx], "%s repeated %s", cmd, items[i]);
        seen[idx] = 1;
    }
    xfree(r);
}

Test(cmd_set, srandmember_counts_in_both_encodings)
{
    for (int resp = 2; resp <= 3; resp++) {
        C->resp = resp;
        for (int ints = 0; ints <= 1; ints++) {
            db_flush(&srv.db[0]);
            fill("s", 300, ints);
            expect("OBJECT ENCODING s", ints ? "$6\r\nintset\r\n" : "$9\r\nhashtable\r\n");
            long counts[] = {1, 2, 50, 99, 100, 101, 250, 299, 300, 301, 1000, -1, -5, -1000};
            for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
                check_srandmember("s", 300, ints, counts[i]);
            expect("SCARD s", ":300\r\n");
        }
    }
}

/* LONG_MIN is out of Redis's range; a count whose reply could never fit is refused before
 * anything is built (Redis builds it until the kernel kills it). */
Test(cmd_set, srandmember_extreme_counts)
{
    expect("SADD s a", ":1\r\n");
    expect("SRANDMEMBER s -9223372036854775808",
           "-ERR value is out of range, value must between -9223372036854775807 and "
           "9223372036854775807\r\n");
    expect("SRANDMEMBER s -9223372036854775807",
           "-ERR reply of at least 55340232221128654842 bytes would exceed max-reply-bytes "
           "(1073741824 bytes)\r\n");
    expect("SRANDMEMBER s -100000000000",
           "-ERR reply of at least 600000000000 bytes would exceed max-reply-bytes "
           "(1073741824 bytes)\r\n");
    expect("SRANDMEMBER s 9223372036854775807", "*1\r\n$1\r\na\r\n");
    expect("SRANDMEMBER nokey -9223372036854775807", "*0\r\n");
    expect("SPOP s -9223372036854775808", "-ERR value is out of range, must be positive\r\n");
    expect("SPOP s 9223372036854775807", "*1\r\n$1\r\na\r\n");
    expect("SADD s a", ":1\r\n");
    expect("CONFIG SET max-reply-bytes 1mb", "+OK\r\n");
    expect("SRANDMEMBER s -200000",
           "-ERR reply of at least 1200000 bytes would exceed max-reply-bytes (1048576 bytes)\r\n");
    expect("CONFIG SET max-reply-bytes 1gb", "+OK\r\n");
}

Test(cmd_set, srandmember_without_count_picks_every_member_eventually)
{
    fill("s", 5, 0);
    int seen[5] = {0};
    for (int i = 0; i < 400; i++) {
        char *r = reply_of("SRANDMEMBER s");
        cr_assert(strncmp(r, "$2\r\nm", 5) == 0, "%s", r);
        seen[r[5] - '0']++;
        xfree(r);
    }
    for (int i = 0; i < 5; i++) cr_assert_gt(seen[i], 20, "member %d picked %d times", i, seen[i]);
}

/* Pops count members from a fresh set of n, checks the reply and what is left. */
static void check_spop(int n, int ints, int count, const char *enc_after)
{
    static char items[MAXITEMS][32];
    char cmd[64], kind, seen[MAXITEMS] = {0};
    db_flush(&srv.db[0]);
    fill("s", n, ints);
    snprintf(cmd, sizeof(cmd), "SPOP s %d", count);
    char *r = reply_of(cmd);
    int got = parse_bulks(r, items, MAXITEMS, &kind);
    cr_assert_eq(kind, C->resp == 3 ? '~' : '*');
    cr_assert_eq(got, count < n ? count : n, "%s: %d items", cmd, got);
    for (int i = 0; i < got; i++) {
        int idx = member_index(items[i], ints);
        cr_assert(idx >= 0 && idx < n && !seen[idx], "%s: bad or repeated %s", cmd, items[i]);
        seen[idx] = 1;
    }
    xfree(r);
    kv_t *kv = db_find(C->db, "s", 1);
    if (count >= n) {
        cr_assert_null(kv);
        return;
    }
    cr_assert_not_null(kv);
    set_t *s = (set_t *)kv->val;
    cr_assert_eq(set_length(s), (size_t)(n - count));
    for (int i = 0; i < n; i++) {
        char m[16];
        int len = snprintf(m, sizeof(m), ints ? "%d" : "m%d", i);
        cr_assert_eq(set_contains(s, m, (size_t)len), !seen[i], "member %s", m);
    }
    cr_assert_str_eq(obj_encoding_name(&s->h), enc_after);
}

Test(cmd_set, spop_with_count_removes_what_it_returns)
{
    for (int resp = 2; resp <= 3; resp++) {
        C->resp = resp;
        check_spop(100, 1, 1, "intset");
        check_spop(100, 1, 10, "intset"); /* picks members one by one */
        check_spop(100, 1, 90, "intset"); /* keeps the 10 left in a new set */
        check_spop(100, 0, 10, "hashtable");
        check_spop(100, 0, 95, "hashtable");
        check_spop(100, 0, 100, NULL); /* everything: the key goes */
        check_spop(100, 1, 1000, NULL);
        /* a hashtable of integers whose survivors fit an intset comes back as one, as Redis */
        check_spop(600, 1, 590, "intset");
        check_spop(600, 1, 100, "hashtable");
    }
}

Test(cmd_set, spop_without_count_empties_the_set)
{
    fill("s", 20, 0);
    char seen[20] = {0};
    for (int i = 0; i < 20; i++) {
        char *r = reply_of("SPOP s");
        const char *m = strstr(r, "\r\nm");
        cr_assert(r[0] == '$' && m, "%s", r);
        int idx = atoi(m + 3);
        cr_assert(idx >= 0 && idx < 20 && !seen[idx]);
        seen[idx] = 1;
        xfree(r);
    }
    expect("EXISTS s", ":0\r\n");
    expect("SPOP s", "$-1\r\n");
}

/* Follows SSCAN's cursor to 0 and checks every member came back at least once. */
static void scan_all(int n, int ints, const char *extra, int every)
{
    static char items[MAXITEMS][32];
    char seen[MAXITEMS] = {0};
    unsigned long long cursor = 0;
    int rounds = 0;
    do {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "SSCAN s %llu%s", cursor, extra);
        char *r = reply_of(cmd);
        cr_assert(strncmp(r, "*2\r\n$", 5) == 0, "%s", r);
        const char *p = strstr(r, "\r\n") + 2;
        p = strstr(p, "\r\n") + 2;
        cursor = strtoull(p, NULL, 10);
        p = strstr(p, "\r\n") + 2;
        char kind;
        int got = parse_bulks(p, items, MAXITEMS, &kind);
        cr_assert_eq(kind, '*');
        for (int i = 0; i < got; i++) seen[member_index(items[i], ints)] = 1;
        xfree(r);
        cr_assert_lt(++rounds, 10000);
    } while (cursor);
    for (int i = 0; i < n; i++)
        if (every || i % 10 == 7)
            cr_assert(seen[i], "member %d not returned", i);
        else
            cr_assert(!seen[i], "member %d should not match", i);
}

Test(cmd_set, sscan_over_a_hashtable_returns_every_member)
{
    for (int resp = 2; resp <= 3; resp++) {
        C->resp = resp;
        db_flush(&srv.db[0]);
        fill("s", 1000, 0);
        scan_all(1000, 0, "", 1);
        scan_all(1000, 0, " COUNT 100", 1);
        scan_all(1000, 0, " MATCH *7", 0);
    }
}

Test(cmd_set, keyspace_events_match_redis)
{
    client_t *sub = client_new(NULL, NULL, -1);
    run_on(sub, "PSUBSCRIBE __keyev*");
    xfree(take_out(sub));
    expect("CONFIG SET notify-keyspace-events KEAm", "+OK\r\n");
    static const struct {
        const char *cmd, *events;
    } steps[] = {
        {"SADD a 1 2", "sadd:a "},
        {"SADD a 1", ""},
        {"SREM a 9", ""},
        {"SREM a 1 2", "srem:a del:a "},
        {"SADD a 1 2", "sadd:a "},
        {"SMOVE a b 1", "srem:a sadd:b "},
        {"SADD a 1", "sadd:a "},
        {"SMOVE a b 1", "srem:a "},
        {"SMOVE a b 2", "srem:a del:a sadd:b "},
        {"SMOVE b b 2", ""},
        {"SPOP b 0", ""},
        {"SPOP b 1", "spop:b "},
        {"SPOP b 5", "spop:b del:b "},
        {"SADD c x", "sadd:c "},
        {"SPOP c", "spop:c del:c "},
        {"SADD c x y", "sadd:c "},
        {"SINTERSTORE d c", "sinterstore:d "},
        {"SINTERSTORE d c nokey", "keymiss:nokey del:d "},
        {"SUNIONSTORE d c", "sunionstore:d "},
        {"SDIFFSTORE d c c", "del:d "},
        {"SDIFFSTORE d c c", ""},
        {"SDIFFSTORE d c nokey", "keymiss:nokey sdiffstore:d "},
        {"SINTERSTORE e c nokey", "keymiss:nokey "},
        {"SMEMBERS nokey", "keymiss:nokey "},
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        xfree(reply_of(steps[i].cmd));
        char *out = take_out(sub), got[512] = "";
        /* each message: *4 $8 pmessage $n pattern $n __keyevent@0__:<event> $n <key> */
        for (char *p = out; (p = strstr(p, "__keyevent@0__:")) && p;) {
            p += strlen("__keyevent@0__:");
            char *e = strstr(p, "\r\n");
            char *k = strstr(e + 2, "\r\n") + 2;
            char *ke = strstr(k, "\r\n");
            size_t n = strlen(got);
            snprintf(got + n, sizeof(got) - n, "%.*s:%.*s ", (int)(e - p), p, (int)(ke - k), k);
            p = ke;
        }
        cr_assert_str_eq(got, steps[i].events, "%s", steps[i].cmd);
        xfree(out);
    }
}

Test(cmd_set, dirty_counts_as_redis_counts)
{
    static const struct {
        const char *cmd;
        long long delta;
    } steps[] = {
        {"SADD a 1 2 3", 3},
        {"SADD a 1", 0},
        {"SREM a 9", 0},
        {"SREM a 1 2 3", 3},
        {"SADD a 1 2", 2},
        {"SMOVE a b 1", 2},
        {"SADD b 2", 1},
        {"SMOVE a b 2", 1},
        {"SMOVE b b 2", 0},
        {"SPOP b 0", 0},
        {"SADD b 3 4 5", 3},
        {"SPOP b 2", 2},
        {"SPOP b 10", 3},
        {"SADD c x y", 2},
        {"SPOP c", 1},
        {"SINTERSTORE d c", 1},
        {"SINTERSTORE d nokey", 1},
        {"SINTERSTORE d nokey", 0},
        {"SUNIONSTORE d c", 1},
        {"SDIFFSTORE d c c", 1},
        {"SMEMBERS c", 0},
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        long long d = srv.dirty;
        xfree(reply_of(steps[i].cmd));
        cr_assert_eq(srv.dirty - d, steps[i].delta, "%s: dirty +%lld", steps[i].cmd, srv.dirty - d);
    }
}

/* Redis 7.0.15 signals the destination only when the member was added to it (its TCL test
 * "SMOVE only notify dstset when the addition is successful"); the source always changes. */
Test(cmd_set, smove_leaves_a_watched_destination_alone_when_the_member_is_there)
{
    client_t *w = client_new(NULL, NULL, -1);
    expect("SADD a 1 2", ":2\r\n");
    expect("SADD b 1", ":1\r\n");
    run_on(w, "WATCH b");
    run_on(w, "MULTI");
    run_on(w, "SADD b 3");
    xfree(take_out(w));
    expect("SMOVE a b 1", ":1\r\n");
    run_on(w, "EXEC");
    char *r = take_out(w);
    cr_assert_str_eq(r, "*1\r\n:1\r\n");
    xfree(r);
    run_on(w, "WATCH a");
    run_on(w, "MULTI");
    run_on(w, "PING");
    xfree(take_out(w));
    expect("SMOVE a b 2", ":1\r\n");
    run_on(w, "EXEC");
    r = take_out(w);
    cr_assert_str_eq(r, "*-1\r\n");
    xfree(r);
}

Test(cmd_set, reads_count_keyspace_hits_and_misses)
{
    expect("SADD s 1", ":1\r\n");
    uint64_t hits = srv.stat.keyspace_hits, misses = srv.stat.keyspace_misses;
    expect("SISMEMBER s 1", ":1\r\n");
    expect("SCARD nokey", ":0\r\n");
    expect("SMEMBERS s", "*1\r\n$1\r\n1\r\n");
    expect("SUNION s nokey", "*1\r\n$1\r\n1\r\n");
    cr_assert_eq(srv.stat.keyspace_hits, hits + 3);
    cr_assert_eq(srv.stat.keyspace_misses, misses + 2);
    /* writes do not count */
    expect("SADD s 2", ":1\r\n");
    expect("SREM nokey a", ":0\r\n");
    expect("SPOP nokey", "$-1\r\n");
    cr_assert_eq(srv.stat.keyspace_hits, hits + 3);
    cr_assert_eq(srv.stat.keyspace_misses, misses + 2);
}

Test(cmd_set, large_set_operations_agree_with_their_definitions)
{
    /* a: 0..1999, b: even numbers as strings "e<i>" plus 1000..2999: hashtables */
    buf_t cmd;
    buf_init(&cmd);
    buf_append_str(&cmd, "SADD a");
    for (int i = 0; i < 2000; i++) buf_printf(&cmd, " %d", i);
    expect(cmd.data, ":2000\r\n");
    buf_clear(&cmd);
    buf_append_str(&cmd, "SADD b x");
    for (int i = 1000; i < 3000; i++) buf_printf(&cmd, " %d", i);
    expect(cmd.data, ":2001\r\n");
    buf_deinit(&cmd);
    expect("OBJECT ENCODING a", "$9\r\nhashtable\r\n");
    expect("SINTERCARD 2 a b", ":1000\r\n");
    expect("SINTERCARD 2 a b LIMIT 10", ":10\r\n");
    expect("SINTERSTORE i a b", ":1000\r\n");
    expect("SUNIONSTORE u a b", ":3001\r\n");
    expect("SDIFFSTORE d a b", ":1000\r\n");
    expect("SDIFFSTORE d2 b a", ":1001\r\n");
    expect("SISMEMBER i 1000", ":1\r\n");
    expect("SISMEMBER i 999", ":0\r\n");
    expect("SISMEMBER d 999", ":1\r\n");
    expect("SISMEMBER d 1000", ":0\r\n");
    expect("SISMEMBER d2 x", ":1\r\n");
    expect("SISMEMBER u x", ":1\r\n");
    expect("SMISMEMBER u 0 2999 3000", "*3\r\n:1\r\n:1\r\n:0\r\n");
    /* the small side of a difference drives it: a 10-member first set against a big one */
    expect("SADD small 1 2 3 4 5 6 7 8 9 5000", ":10\r\n");
    expect("SDIFF small a b", "*1\r\n$4\r\n5000\r\n");
    expect("SINTER small a",
           "*9\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n"
           "$1\r\n7\r\n$1\r\n8\r\n$1\r\n9\r\n");
}

/* SMEMBERS of a set whose reply could never fit in max-reply-bytes is refused. */
Test(cmd_set, smembers_past_max_reply_bytes_is_refused)
{
    for (int b = 0; b < 50; b++) {
        buf_t line;
        buf_init(&line);
        buf_printf(&line, "SADD s");
        for (int i = 0; i < 4000; i++) buf_printf(&line, " m%d", b * 4000 + i);
        harness_send(C, line.data);
        buf_deinit(&line);
    }
    buf_clear(&C->out);
    expect("CONFIG SET max-reply-bytes 1mb", "+OK\r\n");
    expect("SMEMBERS s",
           "-ERR reply of at least 1200000 bytes would exceed max-reply-bytes (1048576 bytes)\r\n");
    expect("SCARD s", ":200000\r\n");
}
