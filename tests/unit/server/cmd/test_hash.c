/* tests/unit/server/cmd/test_hash.c - server/cmd/hash.c through the socketless client: the exact
 * RESP2 and RESP3 bytes of every hash command, its errors (texts taken from redis-server 7.0.15),
 * WRONGTYPE, arity errors from the dispatcher, the listpack/hashtable conversions Redis makes, key
 * deletion when the last field goes, HRANDFIELD's shapes and HSCAN's cursor, MATCH and COUNT,
 * keyspace hit/miss counting and dirty counting. */
#include "common/alloc.h"
#include "common/util.h"
#include "server/client.h"
#include "server/command.h"
#include "server/server.h"
#include "storage/db.h"
#include "storage/object.h"
#include "storage/t_hash.h"

#include "tests/unit/server/harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

TestSuite(cmd_hash, .init = setup, .fini = teardown);

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

static kv_t *find(const char *key)
{
    return db_find(C->db, key, strlen(key));
}

static const char *encoding(const char *key)
{
    kv_t *kv = find(key);
    cr_assert(kv, "no key %s", key);
    return obj_encoding_name(kv->val);
}

/* ---- a small RESP reader for replies whose order is random ---- */

typedef struct reply {
    char *str[4096]; /* bulk strings and integers, flattened, in order */
    size_t len[4096];
    int n;
    int arrays; /* aggregate headers met, the outer one included */
} reply_t;

static const char *read_one(reply_t *r, const char *p)
{
    char t = *p++;
    long long n = strtoll(p, NULL, 10);
    p = strstr(p, "\r\n") + 2;
    if (t == '*' || t == '%') {
        r->arrays++;
        for (long long i = 0; i < (t == '%' ? 2 * n : n); i++) p = read_one(r, p);
        return p;
    }
    cr_assert(r->n < 4096);
    if (t == '$') {
        r->str[r->n] = xmemdup(p, (size_t)n);
        r->len[r->n++] = (size_t)n;
        return p + n + 2;
    }
    cr_assert(t == ':', "unexpected reply type %c", t);
    r->str[r->n] = xmemdup("int", 3);
    r->len[r->n++] = 3;
    return p;
}

static void reply_free(reply_t *r)
{
    for (int i = 0; i < r->n; i++) xfree(r->str[i]);
    xfree(r);
}

static reply_t *reply_read(const char *line)
{
    buf_clear(&C->out);
    run(line);
    cr_assert(C->out.len > 0);
    cr_assert(C->out.data[0] != '-', "%s: %s", line, escaped(C->out.data, C->out.len));
    reply_t *r = xcalloc(1, sizeof(*r));
    const char *end = read_one(r, C->out.data);
    cr_assert_eq((size_t)(end - C->out.data), C->out.len, "%s: trailing bytes", line);
    buf_clear(&C->out);
    return r;
}

/* ---- WRONGTYPE: a string key ---- */

#define WT "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"

Test(cmd_hash, every_command_refuses_a_string_key)
{
    static const char *cmds[] = {
        "HSET s f v",
        "HSETNX s f v",
        "HMSET s f v",
        "HGET s f",
        "HMGET s f g",
        "HGETALL s",
        "HDEL s f",
        "HLEN s",
        "HEXISTS s f",
        "HKEYS s",
        "HVALS s",
        "HSTRLEN s f",
        "HINCRBY s f 1",
        "HINCRBYFLOAT s f 1",
        "HRANDFIELD s",
        "HRANDFIELD s 2",
        "HRANDFIELD s -2 WITHVALUES",
        "HSCAN s 0",
        "HSCAN s 0 COUNT 5",
    };
    EXPECT("SET s v", "+OK\r\n");
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) expect_n(cmds[i], WT, strlen(WT));
    EXPECT("GET s", "$1\r\nv\r\n");
}

/* ---- arity ---- */

Test(cmd_hash, arity_errors)
{
    EXPECT("HSET h", "-ERR wrong number of arguments for 'hset' command\r\n");
    EXPECT("HSET h a", "-ERR wrong number of arguments for 'hset' command\r\n");
    EXPECT("HSET h a 1 b", "-ERR wrong number of arguments for 'hset' command\r\n");
    EXPECT("HMSET h a 1 b", "-ERR wrong number of arguments for 'hmset' command\r\n");
    EXPECT("HSETNX h a", "-ERR wrong number of arguments for 'hsetnx' command\r\n");
    EXPECT("HGET h", "-ERR wrong number of arguments for 'hget' command\r\n");
    EXPECT("HMGET h", "-ERR wrong number of arguments for 'hmget' command\r\n");
    EXPECT("HGETALL h x", "-ERR wrong number of arguments for 'hgetall' command\r\n");
    EXPECT("HDEL h", "-ERR wrong number of arguments for 'hdel' command\r\n");
    EXPECT("HLEN", "-ERR wrong number of arguments for 'hlen' command\r\n");
    EXPECT("HEXISTS h", "-ERR wrong number of arguments for 'hexists' command\r\n");
    EXPECT("HKEYS", "-ERR wrong number of arguments for 'hkeys' command\r\n");
    EXPECT("HVALS h h", "-ERR wrong number of arguments for 'hvals' command\r\n");
    EXPECT("HSTRLEN h", "-ERR wrong number of arguments for 'hstrlen' command\r\n");
    EXPECT("HINCRBY h f", "-ERR wrong number of arguments for 'hincrby' command\r\n");
    EXPECT("HINCRBYFLOAT h f 1 2", "-ERR wrong number of arguments for 'hincrbyfloat' command\r\n");
    EXPECT("HRANDFIELD", "-ERR wrong number of arguments for 'hrandfield' command\r\n");
    EXPECT("HSCAN h", "-ERR wrong number of arguments for 'hscan' command\r\n");
    cr_assert_null(find("h"));
}

/* ---- HSET HMSET HSETNX HGET HMGET ---- */

Test(cmd_hash, hset_counts_new_fields_and_hget_reads_them)
{
    EXPECT("HSET h a 1 b 2", ":2\r\n");
    EXPECT("HSET h a 10 c 3", ":1\r\n");
    EXPECT("HSET h a 11 a 12", ":0\r\n");
    EXPECT23("HGET h a", "$2\r\n12\r\n", "$2\r\n12\r\n");
    EXPECT23("HGET h zz", "$-1\r\n", "_\r\n");
    EXPECT23("HGET nokey a", "$-1\r\n", "_\r\n");
    EXPECT("HSET h \"\" \"\"", ":1\r\n");
    EXPECT("HGET h \"\"", "$0\r\n\r\n");
    EXPECT("HSET h \"a b\" \"x y\"", ":1\r\n");
    EXPECT("HGET h \"a b\"", "$3\r\nx y\r\n");
    EXPECT("HMSET h a 1 d 4", "+OK\r\n");
    EXPECT("HGET h d", "$1\r\n4\r\n");
    EXPECT("HLEN h", ":6\r\n");
}

Test(cmd_hash, hsetnx_sets_only_missing_fields)
{
    EXPECT("HSETNX h a 1", ":1\r\n");
    EXPECT("HSETNX h a 2", ":0\r\n");
    EXPECT("HGET h a", "$1\r\n1\r\n");
    EXPECT("HSETNX h b 2", ":1\r\n");
    EXPECT("HLEN h", ":2\r\n");
}

Test(cmd_hash, hmget_replies_null_for_missing_fields_and_keys)
{
    EXPECT("HSET h a 1 b 2", ":2\r\n");
    EXPECT23("HMGET h a x b", "*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n",
             "*3\r\n$1\r\n1\r\n_\r\n$1\r\n2\r\n");
    EXPECT23("HMGET nokey a b", "*2\r\n$-1\r\n$-1\r\n", "*2\r\n_\r\n_\r\n");
}

/* ---- HLEN HSTRLEN HEXISTS ---- */

Test(cmd_hash, hlen_hstrlen_hexists)
{
    EXPECT("HSET h a hello b \"\"", ":2\r\n");
    EXPECT23("HLEN h", ":2\r\n", ":2\r\n");
    EXPECT("HLEN nokey", ":0\r\n");
    EXPECT("HSTRLEN h a", ":5\r\n");
    EXPECT("HSTRLEN h b", ":0\r\n");
    EXPECT("HSTRLEN h zz", ":0\r\n");
    EXPECT("HSTRLEN nokey a", ":0\r\n");
    EXPECT23("HEXISTS h a", ":1\r\n", ":1\r\n");
    EXPECT("HEXISTS h b", ":1\r\n");
    EXPECT("HEXISTS h zz", ":0\r\n");
    EXPECT("HEXISTS nokey a", ":0\r\n");
}

/* ---- HGETALL HKEYS HVALS ---- */

Test(cmd_hash, hgetall_is_a_map_in_resp3)
{
    EXPECT("HSET h a 1 b 2", ":2\r\n");
    EXPECT23("HGETALL h", "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n",
             "%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n");
    EXPECT23("HKEYS h", "*2\r\n$1\r\na\r\n$1\r\nb\r\n", "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    EXPECT23("HVALS h", "*2\r\n$1\r\n1\r\n$1\r\n2\r\n", "*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
    EXPECT23("HGETALL nokey", "*0\r\n", "%0\r\n");
    EXPECT23("HKEYS nokey", "*0\r\n", "*0\r\n");
    EXPECT23("HVALS nokey", "*0\r\n", "*0\r\n");
}

Test(cmd_hash, hgetall_of_a_hashtable_returns_every_field)
{
    EXPECT("CONFIG SET hash-max-listpack-entries 4", "+OK\r\n");
    EXPECT("HSET h f1 v1 f2 v2 f3 v3 f4 v4 f5 v5 f6 v6", ":6\r\n");
    cr_assert_str_eq(encoding("h"), "hashtable");
    C->resp = 3;
    reply_t *r = reply_read("HGETALL h");
    cr_assert_eq(r->n, 12);
    int seen = 0;
    for (int i = 0; i < r->n; i += 2) {
        int a, b;
        cr_assert(sscanf(r->str[i], "f%d", &a) == 1 && sscanf(r->str[i + 1], "v%d", &b) == 1);
        cr_assert_eq(a, b);
        seen |= 1 << a;
    }
    cr_assert_eq(seen, 0x7e);
    reply_free(r);
}

/* ---- HDEL ---- */

Test(cmd_hash, hdel_counts_and_deletes_the_emptied_key)
{
    EXPECT("HSET h a 1 b 2 c 3", ":3\r\n");
    EXPECT("HDEL h a x", ":1\r\n");
    EXPECT("HDEL h a", ":0\r\n");
    EXPECT("HDEL nokey a", ":0\r\n");
    long long dirty = srv.dirty;
    EXPECT("HDEL h b c b", ":2\r\n");
    cr_assert_null(find("h"));
    cr_assert_eq(srv.dirty - dirty, 2, "dirty grows by the fields removed, as in Redis");
    EXPECT("HLEN h", ":0\r\n");
    EXPECT("HGETALL h", "*0\r\n");
}

Test(cmd_hash, hdel_empties_a_hashtable_too)
{
    EXPECT("CONFIG SET hash-max-listpack-entries 1", "+OK\r\n");
    EXPECT("HSET h a 1 b 2", ":2\r\n");
    cr_assert_str_eq(encoding("h"), "hashtable");
    EXPECT("HDEL h a b", ":2\r\n");
    cr_assert_null(find("h"));
}

Test(cmd_hash, hset_dirty_counts_every_pair)
{
    long long dirty = srv.dirty;
    EXPECT("HSET h a 1 b 2 a 3", ":2\r\n");
    cr_assert_eq(srv.dirty - dirty, 3);
    dirty = srv.dirty;
    EXPECT("HSETNX h a 1", ":0\r\n");
    cr_assert_eq(srv.dirty, dirty);
}

/* ---- HINCRBY HINCRBYFLOAT ---- */

Test(cmd_hash, hincrby)
{
    EXPECT("HINCRBY h f 5", ":5\r\n");
    EXPECT("HINCRBY h f -7", ":-2\r\n");
    EXPECT("HGET h f", "$2\r\n-2\r\n");
    EXPECT("HSET h big 9223372036854775807 small -9223372036854775808 s abc d 1.5", ":4\r\n");
    EXPECT("HINCRBY h big 1", "-ERR increment or decrement would overflow\r\n");
    EXPECT("HINCRBY h small -1", "-ERR increment or decrement would overflow\r\n");
    EXPECT("HINCRBY h big -1", ":9223372036854775806\r\n");
    EXPECT("HINCRBY h s 1", "-ERR hash value is not an integer\r\n");
    EXPECT("HINCRBY h d 1", "-ERR hash value is not an integer\r\n");
    EXPECT("HINCRBY h f x", "-ERR value is not an integer or out of range\r\n");
    EXPECT("HINCRBY h f 1.0", "-ERR value is not an integer or out of range\r\n");
    /* the increment is checked before the key's type, as Redis does */
    EXPECT("SET str v", "+OK\r\n");
    EXPECT("HINCRBY str f x", "-ERR value is not an integer or out of range\r\n");
    EXPECT("HINCRBY nokey f x", "-ERR value is not an integer or out of range\r\n");
    cr_assert_null(find("nokey"));
}

Test(cmd_hash, hincrbyfloat_formats_as_redis)
{
    EXPECT("HSET h f 10.50", ":1\r\n");
    EXPECT("HINCRBYFLOAT h f 0.1", "$4\r\n10.6\r\n");
    EXPECT("HINCRBYFLOAT h f -5", "$3\r\n5.6\r\n");
    EXPECT("HSET h f 5.0e3", ":0\r\n");
    EXPECT("HINCRBYFLOAT h f 2.0e2", "$4\r\n5200\r\n");
    EXPECT("HGET h f", "$4\r\n5200\r\n");
    EXPECT("HINCRBYFLOAT h new 1.5", "$3\r\n1.5\r\n");
    EXPECT("HINCRBYFLOAT h new -1.5", "$1\r\n0\r\n");
    EXPECT("HINCRBYFLOAT nk f 3", "$1\r\n3\r\n");
    EXPECT("HSET h x 1.1e4932", ":1\r\n");
    EXPECT("HINCRBYFLOAT h x 1.1e4932", "-ERR increment would produce NaN or Infinity\r\n");
    EXPECT("HSET h s abc", ":1\r\n");
    EXPECT("HINCRBYFLOAT h s 1", "-ERR hash value is not a float\r\n");
    EXPECT("HINCRBYFLOAT h f abc", "-ERR value is not a valid float\r\n");
    EXPECT("HINCRBYFLOAT h f nan", "-ERR value is not a valid float\r\n");
    EXPECT("HINCRBYFLOAT h f inf", "-ERR value is NaN or Infinity\r\n");
    EXPECT("HINCRBYFLOAT nokey f -inf", "-ERR value is NaN or Infinity\r\n");
    cr_assert_null(find("nokey"));
}

Test(cmd_hash, hincrbyfloat_prints_every_digit_of_large_results)
{
    EXPECT("HSET h a 2.5", ":1\r\n");
    EXPECT("HINCRBYFLOAT h a 1e400",
           "$401\r\n1000000000000000000028188068394758651458645343362905203862591069353968553400862"
           "98620393639948483241605220940539273176162002958227772592557340238289765933406610177974"
           "47434546173917862448116674971723778943824391593338047470675026246684401359237513603830"
           "34373548550524495596497902182503828009106841494740245689865304095101751265809261582758"
           "8920183472511643316591362664138176309734806343732497430221946880\r\n");
}

/* ---- conversions, as OBJECT ENCODING would report them ---- */

Test(cmd_hash, encodings_follow_redis_rules)
{
    EXPECT("HSET h a 1", ":1\r\n");
    cr_assert_str_eq(encoding("h"), "listpack");
    EXPECT("CONFIG SET hash-max-listpack-value 5", "+OK\r\n");
    EXPECT("HSETNX h a 123456", ":0\r\n"); /* nothing set: no conversion */
    cr_assert_str_eq(encoding("h"), "listpack");
    EXPECT("HSET h b 12345", ":1\r\n");
    cr_assert_str_eq(encoding("h"), "listpack");
    EXPECT("HSET h b 123456", ":0\r\n"); /* an update converts */
    cr_assert_str_eq(encoding("h"), "hashtable");

    EXPECT("HSET h2 a 1", ":1\r\n");
    EXPECT("HINCRBY h2 a 99999", ":100000\r\n"); /* a 6-byte result */
    cr_assert_str_eq(encoding("h2"), "hashtable");
    EXPECT("HSET h3 a 1", ":1\r\n");
    EXPECT("HINCRBYFLOAT h3 a 1000000", "$7\r\n1000001\r\n");
    cr_assert_str_eq(encoding("h3"), "hashtable");
    EXPECT("HSET h4 a 1", ":1\r\n");
    EXPECT("HINCRBY h4 longfieldname 1", ":1\r\n");
    cr_assert_str_eq(encoding("h4"), "hashtable");
    /* any long argument of HSET converts before setting, even when another field is set */
    EXPECT("HSET h5 a 1", ":1\r\n");
    EXPECT("HSET h5 b 2 longfield 3", ":2\r\n");
    cr_assert_str_eq(encoding("h5"), "hashtable");

    EXPECT("CONFIG SET hash-max-listpack-value 64", "+OK\r\n");
    EXPECT("CONFIG SET hash-max-listpack-entries 3", "+OK\r\n");
    EXPECT("HSET h6 a 1 b 2 c 3", ":3\r\n");
    cr_assert_str_eq(encoding("h6"), "listpack");
    EXPECT("HSET h6 a 4", ":0\r\n");
    cr_assert_str_eq(encoding("h6"), "listpack");
    EXPECT("HSET h6 d 4", ":1\r\n");
    cr_assert_str_eq(encoding("h6"), "hashtable");
    EXPECT("HDEL h6 a b c", ":3\r\n");
    cr_assert_str_eq(encoding("h6"), "hashtable"); /* never converts back */
    EXPECT("HGETALL h6", "*2\r\n$1\r\nd\r\n$1\r\n4\r\n");
}

/* ---- HRANDFIELD ---- */

Test(cmd_hash, hrandfield_on_missing_keys_and_argument_errors)
{
    EXPECT23("HRANDFIELD nokey", "$-1\r\n", "_\r\n");
    EXPECT23("HRANDFIELD nokey 2", "*0\r\n", "*0\r\n");
    EXPECT("HRANDFIELD nokey 2 WITHVALUES", "*0\r\n");
    EXPECT("HSET h a 1 b 2 c 3", ":3\r\n");
    EXPECT("HRANDFIELD h 0", "*0\r\n");
    EXPECT("HRANDFIELD h 0 WITHVALUES", "*0\r\n");
    EXPECT("HRANDFIELD h 5 withvaluesx", "-ERR syntax error\r\n");
    EXPECT("HRANDFIELD h 1 WITHVALUES extra", "-ERR syntax error\r\n");
    EXPECT("HRANDFIELD h x", "-ERR value is not an integer or out of range\r\n");
    EXPECT("HRANDFIELD h -9223372036854775808",
           "-ERR value is out of range, value must between -9223372036854775807 and "
           "9223372036854775807\r\n");
    EXPECT("HRANDFIELD h -9223372036854775807 WITHVALUES", "-ERR value is out of range\r\n");
    EXPECT("HRANDFIELD h -4611686018427387904 WITHVALUES", "-ERR value is out of range\r\n");
    EXPECT("HRANDFIELD h 4611686018427387904 WITHVALUES", "-ERR value is out of range\r\n");
    /* arguments are checked before the key */
    EXPECT("HRANDFIELD nokey -5 withvaluesx", "-ERR syntax error\r\n");
    EXPECT("HRANDFIELD nokey x", "-ERR value is not an integer or out of range\r\n");
}

/* A count whose reply could never fit is refused before anything is built (Redis itself
 * builds it and runs out of memory); a huge positive count is the whole hash. */
Test(cmd_hash, hrandfield_reply_past_max_reply_bytes_is_refused)
{
    EXPECT("HSET h a 1", ":1\r\n");
    EXPECT23("HRANDFIELD h -4611686018427387903 WITHVALUES",
             "-ERR reply of at least 55340232221128654836 bytes would exceed max-reply-bytes "
             "(1073741824 bytes)\r\n",
             "-ERR reply of at least 73786976294838206448 bytes would exceed max-reply-bytes "
             "(1073741824 bytes)\r\n");
    EXPECT("HRANDFIELD h -9223372036854775807",
           "-ERR reply of at least 55340232221128654842 bytes would exceed max-reply-bytes "
           "(1073741824 bytes)\r\n");
    EXPECT23("HRANDFIELD h -100000000000 WITHVALUES",
             "-ERR reply of at least 1200000000000 bytes would exceed max-reply-bytes "
             "(1073741824 bytes)\r\n",
             "-ERR reply of at least 1600000000000 bytes would exceed max-reply-bytes "
             "(1073741824 bytes)\r\n");
    EXPECT("HRANDFIELD h 9223372036854775807", "*1\r\n$1\r\na\r\n");
    EXPECT("HRANDFIELD h 4611686018427387903 WITHVALUES", "*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    EXPECT("HRANDFIELD nokey -9223372036854775807 WITHVALUES", "-ERR value is out of range\r\n");
    EXPECT("HRANDFIELD nokey -9223372036854775807", "*0\r\n");
    EXPECT("CONFIG SET maxmemory 10mb", "+OK\r\n");
    EXPECT("HRANDFIELD h -2000000",
           "-ERR reply of at least 12000000 bytes would exceed maxmemory (10485760 bytes)\r\n");
    EXPECT("CONFIG SET maxmemory 0", "+OK\r\n");
}

Test(cmd_hash, hrandfield_shapes_in_both_protocols)
{
    EXPECT("HSET one a 1", ":1\r\n");
    EXPECT23("HRANDFIELD one", "$1\r\na\r\n", "$1\r\na\r\n");
    EXPECT23("HRANDFIELD one 1", "*1\r\n$1\r\na\r\n", "*1\r\n$1\r\na\r\n");
    EXPECT23("HRANDFIELD one -3", "*3\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n",
             "*3\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n");
    EXPECT23("HRANDFIELD one -2 WITHVALUES", "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\na\r\n$1\r\n1\r\n",
             "*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    EXPECT23("HRANDFIELD one 1 WITHVALUES", "*2\r\n$1\r\na\r\n$1\r\n1\r\n",
             "*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    /* a count >= the length returns the whole hash, in its order */
    EXPECT("HSET h a 1 b 2", ":2\r\n");
    EXPECT23("HRANDFIELD h 5 WITHVALUES", "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n",
             "*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n");
    EXPECT23("HRANDFIELD h 2", "*2\r\n$1\r\na\r\n$1\r\nb\r\n", "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
}

/* Checks an HRANDFIELD reply of fields fN (with values vN when withvalues): n entries, all
 * members, distinct when uniq; returns the bitmask of fields seen. */
static unsigned long long check_rand(const char *line, int n, int withvalues, int uniq, int size)
{
    reply_t *r = reply_read(line);
    cr_assert_eq(r->n, n * (withvalues ? 2 : 1), "%s: %d strings", line, r->n);
    cr_assert_eq(r->arrays, 1 + (withvalues && C->resp == 3 ? n : 0), "%s", line);
    unsigned long long seen = 0;
    for (int i = 0; i < r->n; i += withvalues ? 2 : 1) {
        int a;
        cr_assert(sscanf(r->str[i], "f%d", &a) == 1 && a >= 0 && a < size, "%s", line);
        if (uniq) cr_assert(!(seen & (1ull << a)), "%s: f%d twice", line, a);
        seen |= 1ull << a;
        if (withvalues) {
            int b;
            cr_assert(sscanf(r->str[i + 1], "v%d", &b) == 1 && a == b);
        }
    }
    reply_free(r);
    return seen;
}

static void hrandfield_counts(int ht)
{
    if (ht) EXPECT("CONFIG SET hash-max-listpack-entries 10", "+OK\r\n");
    char cmd[2048] = "HSET h";
    for (int i = 0; i < 40; i++) sprintf(cmd + strlen(cmd), " f%d v%d", i, i);
    run(cmd);
    buf_clear(&C->out);
    cr_assert_str_eq(encoding("h"), ht ? "hashtable" : "listpack");
    for (int resp = 2; resp <= 3; resp++) {
        C->resp = resp;
        unsigned long long all = 0;
        for (int k = 0; k < 50; k++) all |= check_rand("HRANDFIELD h -30", 30, 0, 0, 40);
        cr_assert_eq(all, (1ull << 40) - 1, "repeated draws return every field");
        check_rand("HRANDFIELD h -100 WITHVALUES", 100, 1, 0, 40);
        check_rand("HRANDFIELD h 5", 5, 0, 1, 40);   /* a few distinct */
        check_rand("HRANDFIELD h 30", 30, 0, 1, 40); /* most of the hash */
        check_rand("HRANDFIELD h 39 WITHVALUES", 39, 1, 1, 40);
        cr_assert_eq(check_rand("HRANDFIELD h 40", 40, 0, 1, 40), (1ull << 40) - 1);
        cr_assert_eq(check_rand("HRANDFIELD h 1000 WITHVALUES", 40, 1, 1, 40), (1ull << 40) - 1);
        check_rand("HRANDFIELD h -2500", 2500, 0, 0, 40); /* several batches */
    }
}

Test(cmd_hash, hrandfield_counts_on_a_listpack)
{
    hrandfield_counts(0);
}

Test(cmd_hash, hrandfield_counts_on_a_hashtable)
{
    hrandfield_counts(1);
}

/* ---- HSCAN ---- */

Test(cmd_hash, hscan_of_a_listpack_returns_everything_with_cursor_zero)
{
    EXPECT("HSET h a 1 b 2", ":2\r\n");
    EXPECT23("HSCAN h 0", "*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n",
             "*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n");
    EXPECT("HSCAN h 12345 COUNT 1",
           "*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n");
    EXPECT("HSCAN h 0 MATCH a", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    EXPECT("HSCAN h 0 match [ab] count 100 MATCH b",
           "*2\r\n$1\r\n0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n");
    EXPECT("HSCAN h 0 MATCH *",
           "*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n");
    EXPECT("HSCAN h 0 MATCH z*", "*2\r\n$1\r\n0\r\n*0\r\n");
}

Test(cmd_hash, hscan_cursor_and_option_errors)
{
    EXPECT("HSET h a 1", ":1\r\n");
    EXPECT("HSCAN h abc", "-ERR invalid cursor\r\n");
    EXPECT("HSCAN h \" 1\"", "-ERR invalid cursor\r\n");
    EXPECT("HSCAN h 1x", "-ERR invalid cursor\r\n");
    EXPECT("HSCAN h +", "-ERR invalid cursor\r\n");
    EXPECT("HSCAN h 18446744073709551616", "-ERR invalid cursor\r\n");
    EXPECT("HSCAN h \"\"", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    EXPECT("HSCAN h -1", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    EXPECT("HSCAN h +1", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    EXPECT("HSCAN h 18446744073709551615", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    EXPECT("HSCAN h 0 COUNT 0", "-ERR syntax error\r\n");
    EXPECT("HSCAN h 0 COUNT -1", "-ERR syntax error\r\n");
    EXPECT("HSCAN h 0 COUNT x", "-ERR value is not an integer or out of range\r\n");
    EXPECT("HSCAN h 0 TYPE string", "-ERR syntax error\r\n");
    EXPECT("HSCAN h 0 MATCH", "-ERR syntax error\r\n");
    EXPECT("HSCAN h 0 MATCH a COUNT", "-ERR syntax error\r\n");
    EXPECT("HSCAN h 0 FOO bar", "-ERR syntax error\r\n");
    /* a missing key: the cursor is checked, the options are not */
    EXPECT23("HSCAN nokey 0 COUNT 0", "*2\r\n$1\r\n0\r\n*0\r\n", "*2\r\n$1\r\n0\r\n*0\r\n");
    EXPECT("HSCAN nokey x", "-ERR invalid cursor\r\n");
}

/* Scans h to the end with the given options, returns the bitmask-like hit counts in hits. */
static int scan_all(const char *opts, int *hits, int n)
{
    char cmd[256];
    unsigned long long cursor = 0;
    int calls = 0;
    do {
        snprintf(cmd, sizeof(cmd), "HSCAN h %llu %s", cursor, opts);
        reply_t *r = reply_read(cmd);
        cr_assert_geq(r->n, 1);
        cursor = strtoull(r->str[0], NULL, 10);
        cr_assert_eq((r->n - 1) % 2, 0);
        for (int i = 1; i < r->n; i += 2) {
            int a, b;
            cr_assert(sscanf(r->str[i], "f%d", &a) == 1 && a >= 0 && a < n);
            cr_assert(sscanf(r->str[i + 1], "v%d", &b) == 1 && a == b);
            hits[a]++;
        }
        reply_free(r);
        calls++;
    } while (cursor);
    return calls;
}

Test(cmd_hash, hscan_of_a_hashtable_covers_every_field)
{
    enum { N = 1000 };
    for (int i = 0; i < N; i += 50) {
        char cmd[4096] = "HSET h";
        for (int j = i; j < i + 50; j++) sprintf(cmd + strlen(cmd), " f%d v%d", j, j);
        run(cmd);
    }
    buf_clear(&C->out);
    cr_assert_str_eq(encoding("h"), "hashtable");
    static int hits[N];
    memset(hits, 0, sizeof(hits));
    int calls = scan_all("", hits, N);
    cr_assert_gt(calls, 10, "COUNT 10 takes many calls (%d)", calls);
    for (int i = 0; i < N; i++) cr_assert_geq(hits[i], 1, "f%d missed", i);

    memset(hits, 0, sizeof(hits));
    int big = scan_all("COUNT 100000", hits, N);
    cr_assert_eq(big, 1);
    for (int i = 0; i < N; i++) cr_assert_eq(hits[i], 1);

    /* MATCH filters after collecting: only f1, f1x, f1xx fields come back */
    memset(hits, 0, sizeof(hits));
    C->resp = 3;
    scan_all("MATCH f1* COUNT 50", hits, N);
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof(name), "%d", i);
        cr_assert_eq(hits[i] > 0, name[0] == '1', "f%d", i);
    }
}

/* ---- keyspace statistics ---- */

Test(cmd_hash, reads_count_hits_and_misses)
{
    EXPECT("HSET h a 1", ":1\r\n");
    EXPECT("SET s v", "+OK\r\n");
    uint64_t hits = srv.stat.keyspace_hits, misses = srv.stat.keyspace_misses;
    EXPECT("HGET h a", "$1\r\n1\r\n");
    EXPECT("HGET h zz", "$-1\r\n"); /* the key exists: a hit */
    EXPECT("HLEN nokey", ":0\r\n");
    EXPECT("HGETALL nokey", "*0\r\n");
    run("HGET s a"); /* the wrong type still counts as a hit */
    buf_clear(&C->out);
    cr_assert_eq(srv.stat.keyspace_hits - hits, 3);
    cr_assert_eq(srv.stat.keyspace_misses - misses, 2);
    hits = srv.stat.keyspace_hits;
    misses = srv.stat.keyspace_misses;
    EXPECT("HSET h b 2", ":1\r\n");
    EXPECT("HDEL nokey a", ":0\r\n");
    EXPECT("HINCRBY h c 1", ":1\r\n");
    cr_assert_eq(srv.stat.keyspace_hits, hits, "writes do not count");
    cr_assert_eq(srv.stat.keyspace_misses, misses);
}

Test(cmd_hash, expired_hash_is_gone_for_reads_and_writes)
{
    EXPECT("HSET h a 1", ":1\r\n");
    kv_t *kv = find("h");
    db_set_expire(C->db, kv, time_ms() - 1000);
    EXPECT("HGET h a", "$-1\r\n");
    EXPECT("HSET h b 2", ":1\r\n");
    EXPECT("HGETALL h", "*2\r\n$1\r\nb\r\n$1\r\n2\r\n");
}

/* HGETALL, HKEYS and HVALS of a hash whose reply could never fit are refused. */
Test(cmd_hash, getall_past_max_reply_bytes_is_refused)
{
    static char line[16 * 2000 + 16];
    for (int b = 0; b < 50; b++) {
        int n = snprintf(line, sizeof(line), "HSET h");
        for (int i = 0; i < 2000; i++)
            n += snprintf(line + n, sizeof(line) - (size_t)n, " f%d v", b * 2000 + i);
        harness_send(C, line);
    }
    buf_clear(&C->out);
    EXPECT("HLEN h", ":100000\r\n");
    EXPECT("CONFIG SET max-reply-bytes 1mb", "+OK\r\n");
    EXPECT("HGETALL h",
           "-ERR reply of at least 1200000 bytes would exceed max-reply-bytes (1048576 bytes)\r\n");
    harness_send(C, "HVALS h"); /* 600 KB at least, 700 KB really: fits */
    cr_assert(!(C->flags & CLIENT_CLOSE_ASAP));
    cr_assert_eq(C->out.len, strlen("*100000\r\n") + 100000 * strlen("$1\r\nv\r\n"));
    buf_clear(&C->out);
}
