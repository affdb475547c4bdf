/* tests/unit/server/cmd/test_string.c - server/cmd/string.c through the socketless client: the
 * exact RESP2 and RESP3 bytes of every string command, option and error (texts taken from
 * redis-server 7.0.15), expiry, in-place reuse of string blocks, proto-max-bulk-len, keyspace
 * hit/miss counting. */
#include "common/alloc.h"
#include "common/util.h"
#include "server/client.h"
#include "server/command.h"
#include "server/server.h"
#include "storage/db.h"
#include "storage/object.h"

#include "tests/unit/server/harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a value of a type no command of this file handles, for WRONGTYPE (slot 7 is unused) ---- */


static void add_fake(const char *key)
{
    harness_add_fake(&srv.db[0], key);
}

/* ---- the client ---- */

static client_t *C;

static void setup(void)
{
    C = harness_server_start(0, NULL);
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(cmd_string, .init = setup, .fini = teardown);

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

static void expect_n(const char *line, const char *want, size_t n)
{
    harness_expect_n(C, line, want, n);
}

#define EXPECT(line, lit) expect_n(line, lit, sizeof(lit) - 1)
/* A read-only command, in RESP2 then RESP3. */
#define EXPECT23(line, lit2, lit3)                                                                 \
    do {                                                                                           \
        int saved_resp_ = C->resp;                                                                 \
        C->resp = 2;                                                                               \
        EXPECT(line, lit2);                                                                        \
        C->resp = 3;                                                                               \
        EXPECT(line, lit3);                                                                        \
        C->resp = saved_resp_;                                                                     \
    } while (0)

/* The reply of a command as a NUL-terminated copy (caller frees). */
static char *reply_of(const char *line)
{
    buf_clear(&C->out);
    run(line);
    char *r = xmemdup(C->out.data ? C->out.data : "", C->out.len);
    buf_clear(&C->out);
    return r;
}

static kv_t *find(const char *key)
{
    return db_find(C->db, key, strlen(key));
}

static long long expire_of(const char *key)
{
    kv_t *kv = find(key);
    cr_assert(kv, "no key %s", key);
    return db_get_expire(C->db, kv);
}

/* Makes key expired without deleting it (a deadline in the past). */
static void make_expired(const char *key)
{
    kv_t *kv = find(key);
    cr_assert(kv);
    db_set_expire(C->db, kv, time_ms() - 1000);
}

/* ---- GET / SET ---- */

Test(cmd_string, get_and_set_in_both_protocols)
{
    EXPECT("SET k v", "+OK\r\n");
    EXPECT23("GET k", "$1\r\nv\r\n", "$1\r\nv\r\n");
    EXPECT23("GET nokey", "$-1\r\n", "_\r\n");
    EXPECT("SET k \"\"", "+OK\r\n");
    EXPECT23("GET k", "$0\r\n\r\n", "$0\r\n\r\n");
    EXPECT("set K \"a b\"", "+OK\r\n");
    EXPECT("GET K", "$3\r\na b\r\n");
}

Test(cmd_string, arity_errors_name_the_command)
{
    EXPECT("GET", "-ERR wrong number of arguments for 'get' command\r\n");
    EXPECT("GET a b", "-ERR wrong number of arguments for 'get' command\r\n");
    EXPECT("SET k", "-ERR wrong number of arguments for 'set' command\r\n");
    EXPECT("SETEX k 10", "-ERR wrong number of arguments for 'setex' command\r\n");
    EXPECT("MSET a", "-ERR wrong number of arguments for 'mset' command\r\n");
    EXPECT("MSET a 1 b", "-ERR wrong number of arguments for 'mset' command\r\n");
    EXPECT("MSETNX a 1 b", "-ERR wrong number of arguments for 'msetnx' command\r\n");
    EXPECT("INCRBYFLOAT k", "-ERR wrong number of arguments for 'incrbyfloat' command\r\n");
    EXPECT("GETRANGE k 0", "-ERR wrong number of arguments for 'getrange' command\r\n");
}

#define WRONGTYPE "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"

Test(cmd_string, wrongtype_on_every_command_but_mget_and_set)
{
    add_fake("h");
    static const char *cmds[] = {
        "GET h",          "SET h v GET",  "GETSET h v",     "GETDEL h",
        "GETEX h",        "GETEX h EX 5", "APPEND h x",     "STRLEN h",
        "GETRANGE h 0 1", "SUBSTR h 0 1", "SETRANGE h 0 x", "INCR h",
        "DECR h",         "INCRBY h 2",   "DECRBY h 2",     "INCRBYFLOAT h 1.5",
    };
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        expect_n(cmds[i], WRONGTYPE, sizeof(WRONGTYPE) - 1);
    EXPECT23("MGET h", "*1\r\n$-1\r\n", "*1\r\n_\r\n");
    EXPECT("SET h v", "+OK\r\n");
    EXPECT("GET h", "$1\r\nv\r\n");
}

Test(cmd_string, set_nx_xx)
{
    EXPECT("SET k v XX", "$-1\r\n");
    EXPECT("GET k", "$-1\r\n");
    EXPECT("SET k v NX", "+OK\r\n");
    EXPECT("SET k w NX", "$-1\r\n");
    C->resp = 3;
    EXPECT("SET k w NX", "_\r\n");
    EXPECT("SET q w XX", "_\r\n");
    C->resp = 2;
    EXPECT("SET k w xx", "+OK\r\n");
    EXPECT("GET k", "$1\r\nw\r\n");
    EXPECT("SET k v NX NX", "$-1\r\n");
    EXPECT("SET k v XX XX", "+OK\r\n");
    EXPECT("SET k v NX XX", "-ERR syntax error\r\n");
    EXPECT("SET k v XX NX", "-ERR syntax error\r\n");
}

Test(cmd_string, set_get_returns_the_old_value)
{
    EXPECT("SET k v GET", "$-1\r\n");
    EXPECT("GET k", "$1\r\nv\r\n");
    EXPECT("SET k w GET", "$1\r\nv\r\n");
    EXPECT("SET k x GET GET", "$1\r\nw\r\n");
    /* 7.0: NX and GET together; the reply is the old value, the set does not happen */
    EXPECT("SET k y NX GET", "$1\r\nx\r\n");
    EXPECT("GET k", "$1\r\nx\r\n");
    EXPECT("SET n y NX GET", "$-1\r\n");
    EXPECT("GET n", "$1\r\ny\r\n");
    C->resp = 3;
    EXPECT("SET z y XX GET", "_\r\n");
    EXPECT("GET z", "_\r\n");
    EXPECT("SET k z XX GET", "$1\r\nx\r\n");
    EXPECT("GET k", "$1\r\nz\r\n");
}

Test(cmd_string, set_option_conflicts_are_syntax_errors)
{
    static const char *bad[] = {
        "SET k v EX 10 PX 10",
        "SET k v EX 10 EXAT 10",
        "SET k v PX 10 PXAT 10",
        "SET k v EXAT 10 PXAT 10",
        "SET k v KEEPTTL EX 10",
        "SET k v EX 10 KEEPTTL",
        "SET k v PERSIST",
        "SET k v EX",
        "SET k v PX",
        "SET k v FOO",
        "SET k v NX XX",
        "SET k v EXAT",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_n(bad[i], "-ERR syntax error\r\n", 19);
    EXPECT("GET k", "$-1\r\n");
    /* repeating the same option is allowed */
    EXPECT("SET k v EX 10 EX 20", "+OK\r\n");
    EXPECT("SET k v KEEPTTL KEEPTTL", "+OK\r\n");
}

Test(cmd_string, set_expire_times)
{
    long long t0 = time_ms();
    EXPECT("SET k v EX 100", "+OK\r\n");
    long long e = expire_of("k");
    cr_assert(e >= t0 + 100000 && e <= time_ms() + 100000);
    EXPECT("TTL k", ":100\r\n");
    EXPECT("SET k v PX 5000", "+OK\r\n");
    e = expire_of("k");
    cr_assert(e >= t0 + 5000 && e <= time_ms() + 5000);
    EXPECT("SET k v EXAT 99999999999", "+OK\r\n");
    cr_assert_eq(expire_of("k"), 99999999999000LL);
    EXPECT("SET k v PXAT 99999999999999", "+OK\r\n");
    cr_assert_eq(expire_of("k"), 99999999999999LL);
    EXPECT("SET k w KEEPTTL", "+OK\r\n");
    cr_assert_eq(expire_of("k"), 99999999999999LL);
    EXPECT("SET k w", "+OK\r\n");
    cr_assert_eq(expire_of("k"), -1);
    EXPECT("SET k v GET PX 100000", "$1\r\nw\r\n");
    cr_assert(expire_of("k") > t0);
}

Test(cmd_string, set_invalid_expire_times)
{
    EXPECT("SET k v EX 0", "-ERR invalid expire time in 'set' command\r\n");
    EXPECT("SET k v EX -1", "-ERR invalid expire time in 'set' command\r\n");
    EXPECT("SET k v PX 0", "-ERR invalid expire time in 'set' command\r\n");
    EXPECT("SET k v EXAT 0", "-ERR invalid expire time in 'set' command\r\n");
    EXPECT("SET k v PXAT -5", "-ERR invalid expire time in 'set' command\r\n");
    EXPECT("SET k v EX 9223372036854775", "-ERR invalid expire time in 'set' command\r\n");
    EXPECT("SET k v PX 9223372036854775807", "-ERR invalid expire time in 'set' command\r\n");
    EXPECT("SET k v EX 9223372036854776", "-ERR invalid expire time in 'set' command\r\n");
    EXPECT("SET k v EX abc", "-ERR value is not an integer or out of range\r\n");
    EXPECT("SET k v PX 1.5", "-ERR value is not an integer or out of range\r\n");
    EXPECT("SET k v EXAT 9223372036854775", "+OK\r\n");
    cr_assert_eq(expire_of("k"), 9223372036854775000LL);
    EXPECT("SETEX k 0 v", "-ERR invalid expire time in 'setex' command\r\n");
    EXPECT("PSETEX k -1 v", "-ERR invalid expire time in 'psetex' command\r\n");
    /* the GET part does not run when the expire time is bad */
    EXPECT("SET k v EX 0 GET", "-ERR invalid expire time in 'set' command\r\n");
}

Test(cmd_string, set_reuses_a_fitting_block_in_place)
{
    EXPECT("SET k abcdef", "+OK\r\n");
    obj_t *before = find("k")->val;
    EXPECT("SET k uvwxyz", "+OK\r\n");
    cr_assert_eq(find("k")->val, before);
    EXPECT("GET k", "$6\r\nuvwxyz\r\n");
    EXPECT("SET k ab", "+OK\r\n");
    EXPECT("GET k", "$2\r\nab\r\n");
    cr_assert_eq(((str_obj_t *)find("k")->val)->data[2], '\0');
    char line[300] = "SET k ";
    memset(line + 6, 'x', 250);
    line[256] = '\0';
    run(line);
    buf_clear(&C->out);
    str_obj_t *big = (str_obj_t *)find("k")->val;
    cr_assert_eq(big->len, 250);
    /* a much shorter value does not keep the large block */
    EXPECT("SET k a", "+OK\r\n");
    str_obj_t *small = (str_obj_t *)find("k")->val;
    cr_assert_eq(small->len, 1);
    cr_assert(small->cap < 100, "cap %u", small->cap);
}

Test(cmd_string, setnx_setex_psetex)
{
    EXPECT("SETNX k v", ":1\r\n");
    EXPECT("SETNX k w", ":0\r\n");
    EXPECT("GET k", "$1\r\nv\r\n");
    EXPECT("SETEX k 10 w", "+OK\r\n");
    EXPECT("TTL k", ":10\r\n");
    EXPECT("GET k", "$1\r\nw\r\n");
    EXPECT("PSETEX k 100000 x", "+OK\r\n");
    EXPECT("TTL k", ":100\r\n");
    EXPECT("SETEX k abc v", "-ERR value is not an integer or out of range\r\n");
    EXPECT("SETNX k y", ":0\r\n");
    EXPECT("GET k", "$1\r\nx\r\n");
}

Test(cmd_string, mget_mset_msetnx)
{
    EXPECT("MSET a 1 b 2 a 3", "+OK\r\n");
    EXPECT23("MGET a b c", "*3\r\n$1\r\n3\r\n$1\r\n2\r\n$-1\r\n",
             "*3\r\n$1\r\n3\r\n$1\r\n2\r\n_\r\n");
    EXPECT("MSETNX c 1 a 9", ":0\r\n");
    EXPECT("GET c", "$-1\r\n");
    EXPECT("MSETNX c 1 d 2", ":1\r\n");
    EXPECT("MGET c d", "*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
    EXPECT("MSETNX e 1 e 2", ":1\r\n");
    EXPECT("GET e", "$1\r\n2\r\n");
    EXPECT("EXPIRE a 100", ":1\r\n");
    EXPECT("MSET a 4", "+OK\r\n");
    EXPECT("TTL a", ":-1\r\n");
}

Test(cmd_string, getset_getdel)
{
    EXPECT23("GETSET k v", "$-1\r\n", "$1\r\nv\r\n");
    EXPECT("EXPIRE k 100", ":1\r\n");
    EXPECT("GETSET k w", "$1\r\nv\r\n");
    EXPECT("TTL k", ":-1\r\n");
    EXPECT("GETDEL k", "$1\r\nw\r\n");
    EXPECT("EXISTS k", ":0\r\n");
    EXPECT("GETDEL k", "$-1\r\n");
    C->resp = 3;
    EXPECT("GETDEL k", "_\r\n");
}

Test(cmd_string, getex_options)
{
    EXPECT23("GETEX k", "$-1\r\n", "_\r\n");
    EXPECT("GETEX k EX abc", "$-1\r\n"); /* the key is looked up before the time is read */
    EXPECT("SET k v", "+OK\r\n");
    EXPECT("GETEX k", "$1\r\nv\r\n");
    EXPECT("TTL k", ":-1\r\n");
    EXPECT("GETEX k EX 100", "$1\r\nv\r\n");
    EXPECT("TTL k", ":100\r\n");
    EXPECT("GETEX k PX 50000", "$1\r\nv\r\n");
    EXPECT("TTL k", ":50\r\n");
    EXPECT("GETEX k EXAT 99999999999", "$1\r\nv\r\n");
    EXPECT("PEXPIRETIME k", ":99999999999000\r\n");
    EXPECT("GETEX k PXAT 99999999999999", "$1\r\nv\r\n");
    EXPECT("PEXPIRETIME k", ":99999999999999\r\n");
    EXPECT("GETEX k PERSIST", "$1\r\nv\r\n");
    EXPECT("TTL k", ":-1\r\n");
    EXPECT("GETEX k PERSIST", "$1\r\nv\r\n");
    EXPECT("GETEX k EX 10 EX 10", "$1\r\nv\r\n");
    EXPECT("GETEX k EX abc", "-ERR value is not an integer or out of range\r\n");
    EXPECT("GETEX k EX 0", "-ERR invalid expire time in 'getex' command\r\n");
    EXPECT("GETEX k PXAT -1", "-ERR invalid expire time in 'getex' command\r\n");
    static const char *bad[] = {"GETEX k PERSIST EX 10", "GETEX k EX 10 PERSIST",
                                "GETEX k KEEPTTL",       "GETEX k NX",
                                "GETEX k GET",           "GETEX k EX",
                                "GETEX k EX 10 PX 10"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_n(bad[i], "-ERR syntax error\r\n", 19);
    /* an absolute time in the past deletes the key, after replying with its value */
    EXPECT("GETEX k EXAT 1", "$1\r\nv\r\n");
    EXPECT("EXISTS k", ":0\r\n");
    EXPECT("SET k v", "+OK\r\n");
    EXPECT("GETEX k PXAT 1", "$1\r\nv\r\n");
    EXPECT("GET k", "$-1\r\n");
}

/* ---- APPEND STRLEN GETRANGE SETRANGE ---- */

Test(cmd_string, append_and_strlen)
{
    EXPECT("APPEND k abc", ":3\r\n");
    EXPECT("APPEND k \"\"", ":3\r\n");
    EXPECT("APPEND k defg", ":7\r\n");
    EXPECT("GET k", "$7\r\nabcdefg\r\n");
    EXPECT("STRLEN k", ":7\r\n");
    EXPECT("STRLEN nokey", ":0\r\n");
    EXPECT("EXPIRE k 100", ":1\r\n");
    for (int i = 0; i < 100; i++) run("APPEND k 0123456789");
    buf_clear(&C->out);
    EXPECT("STRLEN k", ":1007\r\n");
    EXPECT("TTL k", ":100\r\n"); /* APPEND keeps the TTL */
    EXPECT("GETRANGE k 1000 -1", "$7\r\n3456789\r\n");
    EXPECT("APPEND e \"\"", ":0\r\n");
    EXPECT("EXISTS e", ":1\r\n");
}

Test(cmd_string, append_and_setrange_respect_proto_max_bulk_len)
{
    srv.cfg.proto_max_bulk_len = 10;
    EXPECT("SET k 12345", "+OK\r\n");
    EXPECT("APPEND k 67890", ":10\r\n");
    EXPECT("APPEND k x", "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n");
    EXPECT("SETRANGE k 9 x", ":10\r\n");
    EXPECT("SETRANGE k 10 x", "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n");
    EXPECT("SETRANGE n 9 x", ":10\r\n");
    EXPECT("SETRANGE m 8 xyz", "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n");
    EXPECT("SETRANGE m 9223372036854775807 x",
           "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n");
    EXPECT("EXISTS m", ":0\r\n");
    EXPECT("GET k", "$10\r\n123456789x\r\n");
}

Test(cmd_string, getrange_edges)
{
    EXPECT("SET s hello", "+OK\r\n");
    EXPECT("GETRANGE s 0 -1", "$5\r\nhello\r\n");
    EXPECT("GETRANGE s 0 -100", "$1\r\nh\r\n");
    EXPECT("GETRANGE s -100 -200", "$0\r\n\r\n");
    EXPECT("GETRANGE s -1 -100", "$0\r\n\r\n");
    EXPECT("GETRANGE s 3 1", "$0\r\n\r\n");
    EXPECT("GETRANGE s -3 -1", "$3\r\nllo\r\n");
    EXPECT("GETRANGE s 1 3", "$3\r\nell\r\n");
    EXPECT("GETRANGE s 10 20", "$0\r\n\r\n");
    EXPECT("GETRANGE s 2 100", "$3\r\nllo\r\n");
    EXPECT("GETRANGE s -100 1", "$2\r\nhe\r\n");
    EXPECT("SUBSTR s 1 2", "$2\r\nel\r\n");
    EXPECT23("GETRANGE nokey 0 1", "$0\r\n\r\n", "$0\r\n\r\n");
    EXPECT("GETRANGE s a 1", "-ERR value is not an integer or out of range\r\n");
    EXPECT("GETRANGE s 0 99999999999999999999", "-ERR value is not an integer or out of range\r\n");
    EXPECT("GETRANGE nokey x 1", "-ERR value is not an integer or out of range\r\n");
    EXPECT("SET e \"\"", "+OK\r\n");
    EXPECT("GETRANGE e 0 -1", "$0\r\n\r\n");
    EXPECT("GETRANGE e -1 0", "$0\r\n\r\n");
    EXPECT("SET n 12345", "+OK\r\n");
    EXPECT("GETRANGE n 1 2", "$2\r\n23\r\n");
}

Test(cmd_string, setrange_pads_with_zero_bytes)
{
    EXPECT("SETRANGE k -1 x", "-ERR offset is out of range\r\n");
    EXPECT("SETRANGE k abc x", "-ERR value is not an integer or out of range\r\n");
    EXPECT("SETRANGE k 5 \"\"", ":0\r\n");
    EXPECT("EXISTS k", ":0\r\n");
    EXPECT("SETRANGE k 3 ab", ":5\r\n");
    EXPECT("GET k", "$5\r\n\0\0\0ab\r\n");
    EXPECT("SETRANGE k 0 xyz", ":5\r\n");
    EXPECT("GET k", "$5\r\nxyzab\r\n");
    EXPECT("SETRANGE k 1 \"\"", ":5\r\n");
    EXPECT("SETRANGE k 7 Q", ":8\r\n");
    EXPECT("GET k", "$8\r\nxyzab\0\0Q\r\n");
    EXPECT("EXPIRE k 100", ":1\r\n");
    EXPECT("SETRANGE k 0 A", ":8\r\n");
    EXPECT("TTL k", ":100\r\n");
}

/* ---- counters ---- */

Test(cmd_string, incr_decr_family)
{
    EXPECT("INCR n", ":1\r\n");
    EXPECT("DECR n", ":0\r\n");
    EXPECT("DECR n", ":-1\r\n");
    EXPECT("INCRBY n 10", ":9\r\n");
    EXPECT("DECRBY n 3", ":6\r\n");
    EXPECT("INCRBY n -7", ":-1\r\n");
    EXPECT("GET n", "$2\r\n-1\r\n");
    EXPECT("INCRBY n abc", "-ERR value is not an integer or out of range\r\n");
    EXPECT("INCRBY n 1.5", "-ERR value is not an integer or out of range\r\n");
    EXPECT("DECRBY n -9223372036854775808", "-ERR decrement would overflow\r\n");
    EXPECT("SET n 9223372036854775807", "+OK\r\n");
    EXPECT("INCR n", "-ERR increment or decrement would overflow\r\n");
    EXPECT("DECR n", ":9223372036854775806\r\n");
    EXPECT("SET n -9223372036854775808", "+OK\r\n");
    EXPECT("DECR n", "-ERR increment or decrement would overflow\r\n");
    EXPECT("INCRBY n -1", "-ERR increment or decrement would overflow\r\n");
    EXPECT("INCRBY n 9223372036854775807", ":-1\r\n");
    static const char *notint[] = {"\" 1\"", "01", "1.0", "abc",
                                   "\"\"",   "+1", "-0",  "99999999999999999999"};
    for (size_t i = 0; i < sizeof(notint) / sizeof(notint[0]); i++) {
        char line[64];
        snprintf(line, sizeof(line), "SET n %s", notint[i]);
        EXPECT(line, "+OK\r\n");
        EXPECT("INCR n", "-ERR value is not an integer or out of range\r\n");
    }
}

Test(cmd_string, incr_keeps_the_ttl_and_the_block)
{
    EXPECT("SET n 1000", "+OK\r\n");
    EXPECT("EXPIRE n 100", ":1\r\n");
    obj_t *before = find("n")->val;
    EXPECT("INCR n", ":1001\r\n");
    EXPECT("INCRBY n 5", ":1006\r\n");
    cr_assert_eq(find("n")->val, before); /* same length: rewritten in place */
    EXPECT("TTL n", ":100\r\n");
    EXPECT("INCRBYFLOAT n 1.5", "$6\r\n1007.5\r\n");
    EXPECT("TTL n", ":100\r\n");
}

Test(cmd_string, incrbyfloat)
{
    EXPECT("INCRBYFLOAT f 1.5", "$3\r\n1.5\r\n");
    EXPECT("INCRBYFLOAT f 1", "$3\r\n2.5\r\n");
    EXPECT("INCRBYFLOAT f -2.5", "$1\r\n0\r\n");
    EXPECT("SET f 10.50", "+OK\r\n");
    EXPECT("INCRBYFLOAT f 0.1", "$4\r\n10.6\r\n");
    EXPECT("INCRBYFLOAT f 5.0e3", "$22\r\n5010.60000000000000009\r\n");
    EXPECT("GET f", "$22\r\n5010.60000000000000009\r\n");
    EXPECT("INCRBYFLOAT f abc", "-ERR value is not a valid float\r\n");
    EXPECT("INCRBYFLOAT f \" 1\"", "-ERR value is not a valid float\r\n");
    EXPECT("INCRBYFLOAT f 1.0e", "-ERR value is not a valid float\r\n");
    EXPECT("INCRBYFLOAT f inf", "-ERR increment would produce NaN or Infinity\r\n");
    EXPECT("INCRBYFLOAT g 0.0000000000000000001", "$1\r\n0\r\n");
    EXPECT("SET s hello", "+OK\r\n");
    EXPECT("INCRBYFLOAT s 1", "-ERR value is not a valid float\r\n");
    EXPECT("SET s 1e308", "+OK\r\n");
    char *r = reply_of("INCRBYFLOAT s 1e308");
    cr_assert(strncmp(r, "$309\r\n19999999999999999999", 26) == 0, "%s", escaped(r, 40));
    xfree(r);
}

/* ---- expiry and stats ---- */

Test(cmd_string, expired_keys_read_as_absent_and_are_deleted)
{
    EXPECT("SET k v", "+OK\r\n");
    make_expired("k");
    uint64_t expired = srv.stat.expired_keys;
    EXPECT("GET k", "$-1\r\n");
    cr_assert_null(find("k"));
    cr_assert_eq(srv.stat.expired_keys, expired + 1);

    EXPECT("SET k v", "+OK\r\n");
    make_expired("k");
    EXPECT("SET k w NX", "+OK\r\n"); /* an expired key does not exist for NX */
    cr_assert_eq(expire_of("k"), -1);

    make_expired("k");
    EXPECT("INCR k", ":1\r\n");
    make_expired("k");
    EXPECT("APPEND k ab", ":2\r\n");
    make_expired("k");
    EXPECT("SETRANGE k 1 x", ":2\r\n");
    EXPECT("GET k", "$2\r\n\0x\r\n");
    make_expired("k");
    EXPECT("STRLEN k", ":0\r\n");
    EXPECT("SET k v", "+OK\r\n");
    make_expired("k");
    EXPECT("MGET k", "*1\r\n$-1\r\n");
    EXPECT("SET k v", "+OK\r\n");
    make_expired("k");
    EXPECT("SET k w KEEPTTL", "+OK\r\n");
    EXPECT("TTL k", ":-1\r\n");
}

Test(cmd_string, reads_count_keyspace_hits_and_misses)
{
    EXPECT("SET a 1", "+OK\r\n");
    uint64_t h = srv.stat.keyspace_hits, m = srv.stat.keyspace_misses;
    run("GET a");
    run("GET b");
    run("MGET a b a");
    run("STRLEN a");
    run("GETRANGE b 0 1");
    cr_assert_eq(srv.stat.keyspace_hits - h, 4);
    cr_assert_eq(srv.stat.keyspace_misses - m, 3);
    /* writes do not count */
    h = srv.stat.keyspace_hits, m = srv.stat.keyspace_misses;
    run("SET c 1");
    run("INCR a");
    run("APPEND d x");
    run("SETNX a 2");
    cr_assert_eq(srv.stat.keyspace_hits, h);
    cr_assert_eq(srv.stat.keyspace_misses, m);
    /* the GET part of a write does */
    run("SET a 5 GET");
    run("GETSET z 1");
    cr_assert_eq(srv.stat.keyspace_hits - h, 1);
    cr_assert_eq(srv.stat.keyspace_misses - m, 1);
    buf_clear(&C->out);
}

Test(cmd_string, changes_are_counted_and_no_ops_are_not)
{
    long long d = srv.dirty;
    run("SET k v");
    cr_assert_gt(srv.dirty, d);
    d = srv.dirty;
    run("SET k v NX");
    run("SET q v XX");
    run("GET k");
    run("SETRANGE k 0 \"\"");
    run("APPEND x");
    run("INCR k");
    run("GETEX k");
    run("GETEX k PERSIST");
    run("GETDEL nokey");
    run("MSETNX k 1 j 2");
    cr_assert_eq(srv.dirty, d);
    run("GETEX k EX 100");
    cr_assert_gt(srv.dirty, d);
    d = srv.dirty;
    run("GETEX k PERSIST");
    cr_assert_gt(srv.dirty, d);
    buf_clear(&C->out);
}

Test(cmd_string, key_positions_for_command_getkeys)
{
    int pos[8];
    resp_arg_t argv[5] = {{"MSET", 4}, {"a", 1}, {"1", 1}, {"b", 1}, {"2", 1}};
    const command_t *cmd = command_lookup(&argv[0]);
    cr_assert_not_null(cmd);
    cr_assert_eq(command_get_keys(cmd, 5, argv, pos, 8), 2);
    cr_assert_eq(pos[0], 1);
    cr_assert_eq(pos[1], 3);
    resp_arg_t mget[3] = {{"mget", 4}, {"a", 1}, {"b", 1}};
    cr_assert_eq(command_get_keys(command_lookup(&mget[0]), 3, mget, pos, 8), 2);
    cr_assert_eq(pos[1], 2);
}

/* Ranges and offsets at LONG_MIN and LONG_MAX, with redis-server 7.0's replies: nothing is
 * allocated for an offset past proto-max-bulk-len. */
Test(cmd_string, extreme_ranges_and_offsets)
{
    EXPECT("SET s hello", "+OK\r\n");
    EXPECT("GETRANGE s -9223372036854775808 9223372036854775807", "$5\r\nhello\r\n");
    EXPECT("GETRANGE s 9223372036854775807 -9223372036854775808", "$0\r\n\r\n");
    EXPECT("SUBSTR s -9223372036854775808 9223372036854775807", "$5\r\nhello\r\n");
    EXPECT("SETRANGE k 9223372036854775807 x",
           "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n");
    EXPECT("SETRANGE k 536870912 x",
           "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n");
    EXPECT("SETRANGE k -1 x", "-ERR offset is out of range\r\n");
    EXPECT("SETRANGE k -9223372036854775808 x", "-ERR offset is out of range\r\n");
    EXPECT("EXISTS k", ":0\r\n");
}
