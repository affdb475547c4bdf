/* tests/unit/server/cmd/test_bits.c - server/cmd/bits.c through the socketless client: the exact
 * RESP2 and RESP3 bytes of SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO and LCS, every
 * option and error (replies taken from redis-server 7.0.15), encodings, proto-max-bulk-len,
 * keyspace events, hit/miss and dirty counting, and random BITCOUNT/BITPOS/BITOP/BITFIELD results
 * checked against naive bit-by-bit models (the BITCOUNT/BITPOS model was checked against
 * redis-server 7.0.15 on thousands of random cases). */
#define _GNU_SOURCE /* memmem */
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

TestSuite(cmd_bits, .init = setup, .fini = teardown);

/* Sends argv as one RESP command through client c. */
static void send_argv(client_t *c, int argc, const char **argv, const size_t *lens)
{
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        buf_printf(&b, "$%zu\r\n", lens[i]);
        buf_append(&b, argv[i], lens[i]);
        buf_append(&b, "\r\n", 2);
    }
    client_feed(c, b.data, b.len);
    buf_deinit(&b);
}

/* Sends a command written as words separated by spaces through client c; a word in double
 * quotes may hold spaces or be empty (""), and \xHH in a word stands for that byte. */
static void run_on(client_t *c, const char *line)
{
    static char words[64][512];
    const char *argv[64];
    size_t lens[64];
    int argc = 0;
    const char *p = line;
    while (*p) {
        if (*p == ' ') {
            p++;
            continue;
        }
        cr_assert(argc < 64);
        const char *s = p, *e;
        if (*p == '"') {
            s = p + 1;
            e = strchr(s, '"');
            cr_assert(e, "unterminated quote in %s", line);
            p = e + 1;
        } else {
            e = p + strcspn(p, " ");
            p = e;
        }
        size_t n = 0;
        for (const char *q = s; q < e; q++) {
            cr_assert(n < sizeof(words[0]));
            if (q[0] == '\\' && e - q >= 4 && q[1] == 'x') {
                char hex[3] = {q[2], q[3], 0};
                words[argc][n++] = (char)strtol(hex, NULL, 16);
                q += 3;
            } else {
                words[argc][n++] = *q;
            }
        }
        argv[argc] = words[argc];
        lens[argc++] = n;
    }
    send_argv(c, argc, argv, lens);
}

static void run(const char *line)
{
    run_on(C, line);
}

static char *escaped(const char *p, size_t n)
{
    return harness_escaped(p, n);
}

/* As harness_expect_n, through this file's own sender (it decodes escapes). */
static void expect_n(const char *line, const char *want, size_t n)
{
    buf_clear(&C->out);
    run(line);
    cr_assert(C->out.len == n && memcmp(C->out.data, want, n) == 0, "%s: got '%s', want '%s'", line,
              escaped(C->out.data ? C->out.data : "", C->out.len), escaped(want, n));
    buf_clear(&C->out);
}

#define EXPECT(line, lit) expect_n(line, lit, sizeof(lit) - 1)
/* The same command in RESP2 then RESP3 (run twice: only for commands whose reply does not
 * depend on the first run). */
#define EXPECT23(line, lit2, lit3)                                                                 \
    do {                                                                                           \
        int saved_resp_ = C->resp;                                                                 \
        C->resp = 2;                                                                               \
        EXPECT(line, lit2);                                                                        \
        C->resp = 3;                                                                               \
        EXPECT(line, lit3);                                                                        \
        C->resp = saved_resp_;                                                                     \
    } while (0)
/* A reply that is the same in both protocols. */
#define EXPECT_BOTH(line, lit) EXPECT23(line, lit, lit)

static kv_t *find(const char *key)
{
    return db_find(C->db, key, strlen(key));
}

static const str_obj_t *str_of(const char *key)
{
    kv_t *kv = find(key);
    cr_assert(kv, "no key %s", key);
    cr_assert_eq(kv->val->type, OBJ_STRING);
    return (const str_obj_t *)kv->val;
}

/* Stores bytes p[0..n) under key with SET. */
static void set_bytes(const char *key, const void *p, size_t n)
{
    const char *argv[3] = {"SET", key, p};
    size_t lens[3] = {3, strlen(key), n};
    buf_clear(&C->out);
    send_argv(C, 3, argv, lens);
    cr_assert(C->out.len == 5 && memcmp(C->out.data, "+OK\r\n", 5) == 0);
    buf_clear(&C->out);
}

/* The integer reply of a command (asserts it is one). */
static long long int_reply(client_t *c)
{
    cr_assert(c->out.len > 3 && c->out.data[0] == ':', "not an integer: %s",
              escaped(c->out.data ? c->out.data : "", c->out.len));
    long long v = strtoll(c->out.data + 1, NULL, 10);
    buf_clear(&c->out);
    return v;
}

static long long int_of(const char *line)
{
    buf_clear(&C->out);
    run(line);
    return int_reply(C);
}

#define WRONGTYPE "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
#define ERR_OFFSET "-ERR bit offset is not an integer or out of range\r\n"
#define ERR_BITVAL "-ERR bit is not an integer or out of range\r\n"
#define ERR_NOTINT "-ERR value is not an integer or out of range\r\n"
#define ERR_SYNTAX "-ERR syntax error\r\n"
#define ERR_BFTYPE                                                                                 \
    "-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but "   \
    "i64 is.\r\n"

/* ---- SETBIT / GETBIT ---- */

Test(cmd_bits, setbit_and_getbit)
{
    EXPECT("SETBIT k 7 1", ":0\r\n");
    EXPECT("GET k", "$1\r\n\x01\r\n");
    EXPECT("SETBIT k 7 1", ":1\r\n");
    EXPECT("SETBIT k 7 0", ":1\r\n");
    EXPECT("SETBIT k 0 1", ":0\r\n");
    EXPECT("SETBIT k 17 1", ":0\r\n");
    EXPECT("GET k", "$3\r\n\x80\x00\x40\r\n");
    EXPECT_BOTH("GETBIT k 0", ":1\r\n");
    EXPECT_BOTH("GETBIT k 1", ":0\r\n");
    EXPECT_BOTH("GETBIT k 17", ":1\r\n");
    EXPECT_BOTH("GETBIT k 100000", ":0\r\n");
    EXPECT_BOTH("GETBIT nokey 3", ":0\r\n");
    EXPECT("getbit k 4294967295", ":0\r\n");
    EXPECT("SET s 12345", "+OK\r\n");
    EXPECT("GETBIT s 2", ":1\r\n"); /* '1' is 0x31 */
    EXPECT("GETBIT s 0", ":0\r\n");
}

Test(cmd_bits, setbit_and_getbit_errors)
{
    EXPECT("SETBIT k 7 2", ERR_BITVAL);
    EXPECT("SETBIT k 1 -1", ERR_BITVAL);
    EXPECT("SETBIT k 1 abc", ERR_BITVAL);
    EXPECT("SETBIT k 1 \"\"", ERR_BITVAL);
    EXPECT("SETBIT k -1 1", ERR_OFFSET);
    EXPECT("SETBIT k abc 1", ERR_OFFSET);
    EXPECT("SETBIT k #1 1", ERR_OFFSET);
    EXPECT("SETBIT k 4294967296 1", ERR_OFFSET);
    EXPECT("GETBIT k 4294967296", ERR_OFFSET);
    EXPECT("GETBIT k -1", ERR_OFFSET);
    EXPECT("GETBIT k x", ERR_OFFSET);
    EXPECT("GETBIT k 01", ERR_OFFSET);
    EXPECT("GETBIT k \" 1\"", ERR_OFFSET);
    EXPECT("GETBIT k +1", ERR_OFFSET);
    /* the offset is checked before the value */
    EXPECT("SETBIT k -1 5", ERR_OFFSET);
    EXPECT("EXISTS k", ":0\r\n");
    EXPECT("SETBIT k 1", "-ERR wrong number of arguments for 'setbit' command\r\n");
    EXPECT("GETBIT k", "-ERR wrong number of arguments for 'getbit' command\r\n");
    EXPECT("GETBIT k 1 2", "-ERR wrong number of arguments for 'getbit' command\r\n");
    add_fake("h");
    EXPECT("SETBIT h 1 1", WRONGTYPE);
    EXPECT("GETBIT h 1", WRONGTYPE);
    /* argument errors come before the type check */
    EXPECT("GETBIT h -1", ERR_OFFSET);
    EXPECT("SETBIT h 1 2", ERR_BITVAL);
}

Test(cmd_bits, offsets_are_bounded_by_proto_max_bulk_len)
{
    EXPECT("CONFIG SET proto-max-bulk-len 1mb", "+OK\r\n");
    EXPECT("SETBIT z 8388607 1", ":0\r\n");
    EXPECT("STRLEN z", ":1048576\r\n");
    EXPECT("SETBIT z 8388608 1", ERR_OFFSET);
    EXPECT("GETBIT z 8388608", ERR_OFFSET);
    EXPECT("GETBIT z 8388607", ":1\r\n");
    EXPECT("BITFIELD z GET u8 #1048575", "*1\r\n:1\r\n");
    EXPECT("BITFIELD z GET u8 #1048576", ERR_OFFSET);
    EXPECT("BITFIELD z GET u8 8388608", ERR_OFFSET);
    EXPECT("BITFIELD_RO z GET i64 #131071", "*1\r\n:1\r\n"); /* the last bit of z */
    EXPECT("BITFIELD_RO z GET i64 #131072", ERR_OFFSET);
}

Test(cmd_bits, setbit_grows_with_zeros_and_makes_the_value_raw)
{
    EXPECT("SET k 123", "+OK\r\n");
    EXPECT("OBJECT ENCODING k", "$3\r\nint\r\n");
    EXPECT("SETBIT k 0 0", ":0\r\n");
    EXPECT("OBJECT ENCODING k", "$3\r\nraw\r\n");
    EXPECT("GET k", "$3\r\n123\r\n");
    EXPECT("SETBIT k 47 1", ":0\r\n");
    EXPECT("GET k", "$6\r\n123\x00\x00\x01\r\n");
    EXPECT("SETBIT n 3 1", ":0\r\n");
    EXPECT("OBJECT ENCODING n", "$3\r\nraw\r\n");
    /* many small growths: the block may move, the bits stay */
    for (int i = 0; i < 4000; i += 7) {
        char line[64];
        snprintf(line, sizeof(line), "SETBIT g %d 1", i);
        cr_assert_eq(int_of(line), 0);
    }
    for (int i = 0; i < 4000; i++) {
        char line[64];
        snprintf(line, sizeof(line), "GETBIT g %d", i);
        cr_assert_eq(int_of(line), i % 7 == 0, "bit %d", i);
    }
    EXPECT("STRLEN g", ":500\r\n");
    EXPECT("BITCOUNT g", ":572\r\n");
}

Test(cmd_bits, setbit_keeps_the_ttl)
{
    EXPECT("SET k v EX 100", "+OK\r\n");
    EXPECT("SETBIT k 100 1", ":0\r\n");
    kv_t *kv = find("k");
    cr_assert(kv && db_get_expire(C->db, kv) > 0);
}

/* ---- keyspace events and dirty ---- */

/* A subscriber to every keyevent of db 0; returns its client. */
static client_t *subscriber(void)
{
    EXPECT("CONFIG SET notify-keyspace-events KEA", "+OK\r\n");
    client_t *s = client_new(NULL, NULL, -1);
    run_on(s, "PSUBSCRIBE __keyevent@0__:*");
    buf_clear(&s->out);
    return s;
}

/* The events s received since the last call, as "event:key event:key ". */
static char *events(client_t *s)
{
    static char out[1024];
    size_t j = 0;
    out[0] = '\0';
    const char *p = s->out.data ? s->out.data : "", *end = p + s->out.len;
    const char *tag = "__keyevent@0__:";
    while ((p = memmem(p, (size_t)(end - p), tag, strlen(tag))) != NULL) {
        p += strlen(tag);
        if (*p == '*') continue; /* the pattern of the pmessage */
        const char *e = strstr(p, "\r\n");
        j += (size_t)snprintf(out + j, sizeof(out) - j, "%.*s:", (int)(e - p), p);
        e += 2; /* $len\r\nkey\r\n */
        e = strstr(e, "\r\n") + 2;
        const char *ke = strstr(e, "\r\n");
        j += (size_t)snprintf(out + j, sizeof(out) - j, "%.*s ", (int)(ke - e), e);
        p = ke;
    }
    buf_clear(&s->out);
    return out;
}

Test(cmd_bits, setbit_notifies_only_real_changes)
{
    client_t *s = subscriber();
    long long d = srv.dirty;
    run("SETBIT k 7 1");
    cr_assert_str_eq(events(s), "setbit:k ");
    cr_assert_eq(srv.dirty - d, 1);
    run("SETBIT k 7 1"); /* same bit */
    run("SETBIT k 3 0");
    cr_assert_str_eq(events(s), "");
    cr_assert_eq(srv.dirty - d, 1);
    run("SETBIT k 7 0");
    cr_assert_str_eq(events(s), "setbit:k ");
    run("SETBIT k 30 0"); /* grows */
    cr_assert_str_eq(events(s), "setbit:k ");
    cr_assert_eq(srv.dirty - d, 3);
    buf_clear(&C->out);
}

Test(cmd_bits, bitfield_counts_each_change)
{
    client_t *s = subscriber();
    run("SETBIT k 7 1");
    events(s);
    long long d = srv.dirty;
    run("BITFIELD k SET u8 0 1");
    run("BITFIELD k SET u8 0 1 SET u8 0 1");
    run("BITFIELD k OVERFLOW FAIL SET u2 0 7");
    run("BITFIELD k GET u8 0");
    cr_assert_str_eq(events(s), "");
    cr_assert_eq(srv.dirty, d);
    run("BITFIELD k SET u8 0 5 SET u8 0 6 INCRBY u8 0 0");
    cr_assert_str_eq(events(s), "setbit:k ");
    cr_assert_eq(srv.dirty - d, 2);
    /* growing counts every write, even one that writes the old value */
    d = srv.dirty;
    run("BITFIELD k SET u8 100 0 SET u8 100 0");
    cr_assert_str_eq(events(s), "setbit:k ");
    cr_assert_eq(srv.dirty - d, 2);
    /* OVERFLOW FAIL on a new key creates it, zero filled, without an event */
    run("BITFIELD nk OVERFLOW FAIL SET u2 0 7");
    cr_assert_str_eq(events(s), "");
    EXPECT("GET nk", "$1\r\n\x00\r\n");
    EXPECT("OBJECT ENCODING nk", "$3\r\nraw\r\n");
    buf_clear(&C->out);
}

Test(cmd_bits, bitop_stores_with_set_and_deletes_with_del)
{
    client_t *s = subscriber();
    run("SET a x");
    events(s);
    run("BITOP OR d a");
    cr_assert_str_eq(events(s), "set:d ");
    run("BITOP AND d nokey");
    cr_assert_str_eq(events(s), "del:d ");
    EXPECT("EXISTS d", ":0\r\n");
    long long dd = srv.dirty;
    run("BITOP AND d nokey");
    cr_assert_str_eq(events(s), "");
    cr_assert_eq(srv.dirty, dd);
    buf_clear(&C->out);
}

Test(cmd_bits, reads_count_keyspace_hits_and_misses)
{
    EXPECT("SET a x", "+OK\r\n");
    srv.stat.keyspace_hits = srv.stat.keyspace_misses = 0;
    /* the sequence and counts of redis-server 7.0.15 */
    static const struct {
        const char *cmd;
        uint64_t hits, misses;
    } seq[] = {
        {"GETBIT a 1", 1, 0},
        {"GETBIT n 1", 1, 1},
        {"SETBIT a 1 1", 1, 1},
        {"BITCOUNT a", 2, 1},
        {"BITCOUNT n", 2, 2},
        {"BITPOS a 1", 3, 2},
        {"BITPOS n 1", 3, 3},
        {"BITOP OR d a n n", 4, 5},
        {"BITFIELD a GET u8 0", 5, 5},
        {"BITFIELD n GET u8 0", 5, 6},
        {"BITFIELD a SET u8 0 1", 5, 6},
        {"BITFIELD n", 5, 7},
        {"BITFIELD_RO a GET u8 0", 6, 7},
        {"LCS a n", 7, 8},
        {"BITPOS a 3", 7, 8},
        {"BITCOUNT a x y", 8, 8},
    };
    for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
        run(seq[i].cmd);
        cr_assert_eq(srv.stat.keyspace_hits, seq[i].hits, "%s", seq[i].cmd);
        cr_assert_eq(srv.stat.keyspace_misses, seq[i].misses, "%s", seq[i].cmd);
    }
    buf_clear(&C->out);
}

/* ---- BITCOUNT ---- */

Test(cmd_bits, bitcount_ranges)
{
    EXPECT("SET s foobar", "+OK\r\n");
    EXPECT_BOTH("BITCOUNT s", ":26\r\n");
    EXPECT_BOTH("BITCOUNT s 0 0", ":4\r\n");
    EXPECT("BITCOUNT s 1 1", ":6\r\n");
    EXPECT("BITCOUNT s 1 1 bit", ":1\r\n");
    EXPECT("BITCOUNT s 5 30 BIT", ":17\r\n");
    EXPECT("BITCOUNT s 1 1 byte", ":6\r\n");
    EXPECT("BITCOUNT s -2 -1", ":7\r\n");
    EXPECT("BITCOUNT s -100 100", ":26\r\n");
    EXPECT("BITCOUNT s -1 -2", ":0\r\n");
    EXPECT("BITCOUNT s 0 -1 bit", ":26\r\n");
    EXPECT("BITCOUNT s -5 -1 bit", ":2\r\n");
    EXPECT("BITCOUNT s 9223372036854775807 -9223372036854775808", ":0\r\n");
    EXPECT("BITCOUNT s -9223372036854775808 9223372036854775807 bit", ":26\r\n");
    EXPECT("SET e \"\"", "+OK\r\n");
    EXPECT("BITCOUNT e", ":0\r\n");
    EXPECT("BITCOUNT e 0 -1", ":0\r\n");
    EXPECT("BITCOUNT e 0 -1 bit", ":0\r\n");
    EXPECT("SET i 12345", "+OK\r\n");
    EXPECT("BITCOUNT i", ":17\r\n");
}

Test(cmd_bits, bitcount_errors_and_argument_order)
{
    EXPECT("SET s foobar", "+OK\r\n");
    EXPECT("BITCOUNT s 1", ERR_SYNTAX);
    EXPECT("BITCOUNT s a b", ERR_NOTINT);
    EXPECT("BITCOUNT s 0 b", ERR_NOTINT);
    EXPECT("BITCOUNT s 0 1 foo", ERR_SYNTAX);
    EXPECT("BITCOUNT s 0 1 bit x", ERR_SYNTAX);
    /* negative start > end answers 0 before the unit is read */
    EXPECT("BITCOUNT s -1 -2 foo", ":0\r\n");
    /* a missing key answers 0 whatever the arguments */
    EXPECT("BITCOUNT nokey 1", ":0\r\n");
    EXPECT("BITCOUNT nokey a b", ":0\r\n");
    EXPECT("BITCOUNT nokey 0 1 bit x", ":0\r\n");
    EXPECT("BITCOUNT", "-ERR wrong number of arguments for 'bitcount' command\r\n");
    add_fake("h");
    EXPECT("BITCOUNT h", WRONGTYPE);
    EXPECT("BITCOUNT h x", WRONGTYPE);
}

/* ---- BITPOS ---- */

Test(cmd_bits, bitpos_finds_bits)
{
    EXPECT("SET s \\xff\\xf0\\x00", "+OK\r\n");
    EXPECT_BOTH("BITPOS s 0", ":12\r\n");
    EXPECT_BOTH("BITPOS s 1", ":0\r\n");
    EXPECT("BITPOS s 0 2", ":16\r\n");
    EXPECT("BITPOS s 0 2 -1", ":16\r\n");
    EXPECT("BITPOS s 0 0 -1 bit", ":12\r\n");
    EXPECT("BITPOS s 1 7 15 bit", ":7\r\n");
    EXPECT("BITPOS s 0 7 15 bit", ":12\r\n");
    EXPECT("BITPOS s 0 12 20 bit", ":12\r\n");
    EXPECT("BITPOS s 1 12 20 bit", ":-1\r\n");
    EXPECT("BITPOS s 1 -1", ":-1\r\n");
    EXPECT("BITPOS s 0 -1 -1 bit", ":23\r\n");
    EXPECT("BITPOS s 0 -100", ":12\r\n");
    EXPECT("BITPOS s 1 -100 -50", ":0\r\n");
    EXPECT("BITPOS s 0 3", ":-1\r\n");
    EXPECT("BITPOS s 1 1 -1 BIT", ":1\r\n");
    EXPECT("BITPOS s 0 1 1 byte", ":12\r\n");
}

Test(cmd_bits, bitpos_not_found_and_end_of_string_rules)
{
    EXPECT("SET f \\xff\\xff\\xff", "+OK\r\n");
    /* looking for a 0 past an all-ones string: the right reads as zero padding... */
    EXPECT("BITPOS f 0", ":24\r\n");
    EXPECT("BITPOS f 0 1", ":24\r\n");
    /* ...unless the range has an explicit end */
    EXPECT("BITPOS f 0 1 2", ":-1\r\n");
    EXPECT("BITPOS f 0 0 -1", ":-1\r\n");
    EXPECT("BITPOS f 0 0 -1 bit", ":-1\r\n");
    EXPECT("BITPOS f 0 0 23 bit", ":-1\r\n");
    EXPECT("BITPOS f 0 100", ":-1\r\n");
    EXPECT("BITPOS f 1 0 -1 bit", ":0\r\n");
    EXPECT("SET z \\x00\\x00", "+OK\r\n");
    EXPECT("BITPOS z 1", ":-1\r\n");
    EXPECT("BITPOS z 0", ":0\r\n");
    EXPECT("BITPOS z 1 0 -1", ":-1\r\n");
    EXPECT("BITPOS z 0 1 0", ":-1\r\n");
    EXPECT("BITPOS z 0 5 3 bit", ":-1\r\n");
    EXPECT("BITPOS z 1 3 12 bit", ":-1\r\n");
    EXPECT("SET e \"\"", "+OK\r\n");
    EXPECT("BITPOS e 0", ":-1\r\n");
    EXPECT("BITPOS e 1", ":-1\r\n");
    EXPECT("BITPOS e 0 0 -1", ":-1\r\n");
    EXPECT("BITPOS e 0 0", ":-1\r\n");
    EXPECT("BITPOS e 0 0 0 bit", ":-1\r\n");
    /* a missing key is an endless run of zeros */
    EXPECT_BOTH("BITPOS nokey 1", ":-1\r\n");
    EXPECT_BOTH("BITPOS nokey 0", ":0\r\n");
    EXPECT("BITPOS nokey 1 x", ":-1\r\n");
}

Test(cmd_bits, bitpos_errors)
{
    EXPECT("SET s \\xff\\xf0\\x00", "+OK\r\n");
    EXPECT("BITPOS s 2", "-ERR The bit argument must be 1 or 0.\r\n");
    EXPECT("BITPOS s -1", "-ERR The bit argument must be 1 or 0.\r\n");
    EXPECT("BITPOS s x", ERR_NOTINT);
    EXPECT("BITPOS nokey 2", "-ERR The bit argument must be 1 or 0.\r\n");
    EXPECT("BITPOS s 1 x", ERR_NOTINT);
    EXPECT("BITPOS s 0 3 bit", ERR_NOTINT);
    EXPECT("BITPOS s 1 0 -1 foo", ERR_SYNTAX);
    EXPECT("BITPOS s 1 0 -1 bit x", ERR_SYNTAX);
    EXPECT("BITPOS s", "-ERR wrong number of arguments for 'bitpos' command\r\n");
    add_fake("h");
    EXPECT("BITPOS h 1", WRONGTYPE);
    EXPECT("BITPOS h 3", "-ERR The bit argument must be 1 or 0.\r\n");
}

Test(cmd_bits, bitpos_over_long_strings_uses_every_word_path)
{
    char buf[1000];
    for (int at = 0; at < 1000; at += 37) {
        memset(buf, 0, sizeof(buf));
        buf[at] = 0x10;
        set_bytes("z", buf, sizeof(buf));
        cr_assert_eq(int_of("BITPOS z 1"), at * 8 + 3);
        memset(buf, 0xff, sizeof(buf));
        buf[at] = (char)0xef;
        set_bytes("f", buf, sizeof(buf));
        cr_assert_eq(int_of("BITPOS f 0"), at * 8 + 3);
    }
    memset(buf, 0xff, sizeof(buf));
    set_bytes("f", buf, sizeof(buf));
    cr_assert_eq(int_of("BITPOS f 0"), 8000);
    cr_assert_eq(int_of("BITPOS f 0 0 -1"), -1);
    memset(buf, 0, sizeof(buf));
    set_bytes("z", buf, sizeof(buf));
    cr_assert_eq(int_of("BITPOS z 1"), -1);
    cr_assert_eq(int_of("BITPOS z 0 999"), 7992);
}

/* ---- BITOP ---- */

Test(cmd_bits, bitop_operations)
{
    EXPECT("SET a \\xf0\\x0f\\xaa", "+OK\r\n");
    EXPECT("SET b \\xff", "+OK\r\n");
    EXPECT_BOTH("BITOP AND d a b", ":3\r\n");
    EXPECT("GET d", "$3\r\n\xf0\x00\x00\r\n");
    EXPECT("OBJECT ENCODING d", "$3\r\nraw\r\n");
    EXPECT("BITOP OR d a b", ":3\r\n");
    EXPECT("GET d", "$3\r\n\xff\x0f\xaa\r\n");
    EXPECT("BITOP XOR d a b", ":3\r\n");
    EXPECT("GET d", "$3\r\n\x0f\x0f\xaa\r\n");
    EXPECT("BITOP NOT d a", ":3\r\n");
    EXPECT("GET d", "$3\r\n\x0f\xf0U\r\n");
    EXPECT("BITOP AnD d b", ":1\r\n");
    EXPECT("BITOP nOt d b", ":1\r\n");
    EXPECT("GET d", "$1\r\n\x00\r\n");
    /* the target may be a source */
    EXPECT("BITOP OR a a", ":3\r\n");
    EXPECT("GET a", "$3\r\n\xf0\x0f\xaa\r\n");
    EXPECT("BITOP XOR a a b", ":3\r\n");
    EXPECT("GET a", "$3\r\n\x0f\x0f\xaa\r\n");
    /* decimal strings are their digits */
    EXPECT("SET n 12", "+OK\r\n");
    EXPECT("BITOP AND d n n", ":2\r\n");
    EXPECT("GET d", "$2\r\n12\r\n");
    EXPECT("OBJECT ENCODING d", "$3\r\nraw\r\n");
}

Test(cmd_bits, bitop_targets_and_errors)
{
    EXPECT("SET a \\xf0\\x0f\\xaa", "+OK\r\n");
    EXPECT("BITOP NOT d a b", "-ERR BITOP NOT must be called with a single source key.\r\n");
    EXPECT("BITOP NOT d", "-ERR wrong number of arguments for 'bitop' command\r\n");
    EXPECT("BITOP NAND d a", ERR_SYNTAX);
    EXPECT("BITOP AND", "-ERR wrong number of arguments for 'bitop' command\r\n");
    EXPECT("BITOP AND d", "-ERR wrong number of arguments for 'bitop' command\r\n");
    EXPECT("BITOP AND d nokey", ":0\r\n");
    EXPECT("EXISTS d", ":0\r\n");
    EXPECT("BITOP OR d nokey1 nokey2", ":0\r\n");
    EXPECT("SET d x", "+OK\r\n");
    EXPECT("BITOP NOT d nokey", ":0\r\n");
    EXPECT("EXISTS d", ":0\r\n");
    add_fake("l");
    EXPECT("BITOP OR d a l", WRONGTYPE);
    EXPECT("EXISTS d", ":0\r\n");
    /* the target's type does not matter, nor its TTL */
    EXPECT("BITOP OR l a", ":3\r\n");
    EXPECT("TYPE l", "+string\r\n");
    EXPECT("SET t x EX 100", "+OK\r\n");
    EXPECT("BITOP OR t a", ":3\r\n");
    EXPECT("TTL t", ":-1\r\n");
    /* more sources than the stack array holds */
    EXPECT("SET b \\x01", "+OK\r\n");
    EXPECT("BITOP XOR d a a a a a a a a a a a a a a a a a a a b", ":3\r\n");
    EXPECT("GET d", "$3\r\n\xf1\x0f\xaa\r\n");
}

Test(cmd_bits, bitop_long_strings_of_unequal_length)
{
    char a[300], b[77];
    for (size_t i = 0; i < sizeof(a); i++) a[i] = (char)(i * 7 + 1);
    for (size_t i = 0; i < sizeof(b); i++) b[i] = (char)(i * 13 + 5);
    set_bytes("a", a, sizeof(a));
    set_bytes("b", b, sizeof(b));
    cr_assert_eq(int_of("BITOP AND r a b"), 300);
    const str_obj_t *r = str_of("r");
    for (size_t i = 0; i < 300; i++)
        cr_assert_eq((unsigned char)r->data[i], (unsigned char)(i < 77 ? a[i] & b[i] : 0));
    cr_assert_eq(int_of("BITOP OR r b a"), 300);
    r = str_of("r");
    for (size_t i = 0; i < 300; i++)
        cr_assert_eq((unsigned char)r->data[i], (unsigned char)(i < 77 ? a[i] | b[i] : a[i]));
}

/* ---- BITFIELD ---- */

Test(cmd_bits, bitfield_get_set_incrby)
{
    EXPECT("BITFIELD k", "*0\r\n");
    EXPECT("EXISTS k", ":0\r\n");
    EXPECT_BOTH("BITFIELD k GET u8 0", "*1\r\n:0\r\n");
    EXPECT("EXISTS k", ":0\r\n");
    EXPECT("BITFIELD k SET u8 0 255", "*1\r\n:0\r\n");
    EXPECT("GET k", "$1\r\n\xff\r\n");
    EXPECT("OBJECT ENCODING k", "$3\r\nraw\r\n");
    EXPECT_BOTH("BITFIELD k GET u8 0 GET i8 0 GET u4 4 GET i4 4",
                "*4\r\n:255\r\n:-1\r\n:15\r\n:-1\r\n");
    EXPECT("BITFIELD k INCRBY u8 0 1", "*1\r\n:0\r\n");
    EXPECT("BITFIELD k OVERFLOW SAT INCRBY u8 0 300", "*1\r\n:255\r\n");
    EXPECT("BITFIELD k OVERFLOW SAT INCRBY u8 0 -300", "*1\r\n:0\r\n");
    EXPECT("BITFIELD k OVERFLOW FAIL INCRBY u8 0 -1 INCRBY u8 0 1", "*2\r\n$-1\r\n:1\r\n");
    C->resp = 3;
    EXPECT("BITFIELD k OVERFLOW FAIL INCRBY u8 0 -2 INCRBY u8 0 1", "*2\r\n_\r\n:2\r\n");
    EXPECT("BITFIELD k INCRBY u8 0 -1", "*1\r\n:1\r\n");
    C->resp = 2;
    EXPECT("BITFIELD k OVERFLOW WRAP INCRBY i8 0 200", "*1\r\n:-55\r\n");
    EXPECT("BITFIELD k SET i8 0 -128 OVERFLOW SAT INCRBY i8 0 -1 OVERFLOW WRAP INCRBY i8 0 -1",
           "*3\r\n:-55\r\n:-128\r\n:127\r\n");
    EXPECT("BITFIELD k GET u63 0", "*1\r\n:4575657221408423936\r\n");
    EXPECT("BITFIELD k GET i64 0", "*1\r\n:9151314442816847872\r\n");
    EXPECT("BITFIELD k GET u8 #1", "*1\r\n:0\r\n");
    EXPECT("bitfield k get U8 0", ERR_BFTYPE);
    EXPECT("BITFIELD k GET u8 0 OVERFLOW SAT INCRBY u8 0 1", "*2\r\n:127\r\n:128\r\n");
    EXPECT("DEL k", ":1\r\n");
    EXPECT("BITFIELD k GET u8 #0 SET u8 #1 200 GET u8 #1 GET u4 #3",
           "*4\r\n:0\r\n:0\r\n:200\r\n:8\r\n");
    EXPECT("GET k", "$2\r\n\x00\xc8\r\n");
    /* more operations than the stack array holds */
    EXPECT("BITFIELD k GET u8 8 GET u8 8 GET u8 8 GET u8 8 GET u8 8 GET u8 8 GET u8 8 GET u8 8 "
           "GET u8 8 GET u8 8 GET u8 8 GET u8 8 GET u8 8 GET u8 8 GET u8 8 GET u8 8 GET u8 8 "
           "INCRBY u8 8 1",
           "*18\r\n:200\r\n:200\r\n:200\r\n:200\r\n:200\r\n:200\r\n:200\r\n:200\r\n:200\r\n"
           ":200\r\n:200\r\n:200\r\n:200\r\n:200\r\n:200\r\n:200\r\n:200\r\n:201\r\n");
}

Test(cmd_bits, bitfield_set_values_and_overflow_limits)
{
    EXPECT("BITFIELD k SET u8 0 -1", "*1\r\n:0\r\n");
    EXPECT("GET k", "$1\r\n\xff\r\n");
    EXPECT("BITFIELD k SET u8 0 256", "*1\r\n:255\r\n");
    EXPECT("GET k", "$1\r\n\x00\r\n");
    EXPECT("BITFIELD k OVERFLOW SAT SET u8 0 256", "*1\r\n:0\r\n");
    EXPECT("BITFIELD k OVERFLOW SAT SET u8 0 -5", "*1\r\n:255\r\n");
    EXPECT("BITFIELD k OVERFLOW FAIL SET u8 0 256", "*1\r\n$-1\r\n");
    EXPECT("BITFIELD k SET i64 0 -1", "*1\r\n:-72057594037927936\r\n");
    EXPECT("BITFIELD k INCRBY i64 0 -9223372036854775808", "*1\r\n:9223372036854775807\r\n");
    EXPECT("BITFIELD k OVERFLOW SAT INCRBY i64 0 -9223372036854775808", "*1\r\n:-1\r\n");
    EXPECT("BITFIELD k OVERFLOW SAT INCRBY i64 0 9223372036854775807",
           "*1\r\n:9223372036854775806\r\n");
    EXPECT("BITFIELD k OVERFLOW SAT INCRBY i64 0 1", "*1\r\n:9223372036854775807\r\n");
    EXPECT("BITFIELD k OVERFLOW FAIL INCRBY i64 0 1", "*1\r\n$-1\r\n");
    EXPECT("BITFIELD k SET u63 0 9223372036854775807", "*1\r\n:4611686018427387903\r\n");
    EXPECT("BITFIELD k OVERFLOW SAT SET u63 0 9223372036854775807",
           "*1\r\n:9223372036854775807\r\n");
    EXPECT("BITFIELD k OVERFLOW FAIL SET u63 0 -1", "*1\r\n$-1\r\n");
    EXPECT("BITFIELD k OVERFLOW SAT SET u63 0 -1", "*1\r\n:9223372036854775807\r\n");
    EXPECT("BITFIELD k SET u63 0 0 OVERFLOW SAT INCRBY u63 0 -1",
           "*2\r\n:9223372036854775807\r\n:0\r\n");
    /* a #N offset wraps like Redis's multiplication */
    EXPECT("BITFIELD k GET u8 #2305843009213693953", "*1\r\n:0\r\n");
    EXPECT("BITFIELD k GET u8 #536870911", "*1\r\n:0\r\n");
    EXPECT("BITFIELD k GET u8 #536870912", ERR_OFFSET);
    EXPECT("BITFIELD k GET u8 4294967295", "*1\r\n:0\r\n");
    EXPECT("BITFIELD k GET u8 4294967296", ERR_OFFSET);
    EXPECT("BITFIELD k GET i64 #67108863", "*1\r\n:0\r\n");
    EXPECT("BITFIELD k GET i64 #67108864", ERR_OFFSET);
}

Test(cmd_bits, bitfield_errors)
{
    static const char *bad_types[] = {"u64",  "i65", "u0",  "x8",  "u",
                                      "\"\"", "u+8", "u08", "i-1", "U8"};
    for (size_t i = 0; i < sizeof(bad_types) / sizeof(bad_types[0]); i++) {
        char line[64];
        snprintf(line, sizeof(line), "BITFIELD k GET %s 0", bad_types[i]);
        EXPECT(line, ERR_BFTYPE);
    }
    EXPECT("BITFIELD k GET u8 -1", ERR_OFFSET);
    EXPECT("BITFIELD k GET u8 x", ERR_OFFSET);
    EXPECT("BITFIELD k GET u8 #x", ERR_OFFSET);
    EXPECT("BITFIELD k GET u8 #", ERR_OFFSET);
    EXPECT("BITFIELD k GET u8 #-1", ERR_OFFSET);
    EXPECT("BITFIELD k GET u8 +1", ERR_OFFSET);
    EXPECT("BITFIELD k SET u8 0", ERR_SYNTAX);
    EXPECT("BITFIELD k SET u8 0 x", ERR_NOTINT);
    EXPECT("BITFIELD k INCRBY u8 0 x", ERR_NOTINT);
    EXPECT("BITFIELD k OVERFLOW", ERR_SYNTAX);
    EXPECT("BITFIELD k OVERFLOW foo GET u8 0", "-ERR Invalid OVERFLOW type specified\r\n");
    EXPECT("BITFIELD k FOO", ERR_SYNTAX);
    EXPECT("BITFIELD k GET", ERR_SYNTAX);
    EXPECT("BITFIELD k GET u8", ERR_SYNTAX);
    EXPECT("BITFIELD k OVERFLOW SAT", "*0\r\n");
    EXPECT("BITFIELD", "-ERR wrong number of arguments for 'bitfield' command\r\n");
    /* errors in a later op leave the key untouched */
    EXPECT("BITFIELD k SET u8 0 1 GET u99 0", ERR_BFTYPE);
    EXPECT("EXISTS k", ":0\r\n");
    add_fake("l");
    EXPECT("BITFIELD l GET u8 0", WRONGTYPE);
    EXPECT("BITFIELD l SET u8 0 1", WRONGTYPE);
    EXPECT("BITFIELD l", WRONGTYPE);
    EXPECT("BITFIELD l GET u8 -1", ERR_OFFSET);
}

Test(cmd_bits, bitfield_ro_only_gets)
{
    EXPECT("BITFIELD k SET u8 0 127", "*1\r\n:0\r\n");
    EXPECT_BOTH("BITFIELD_RO k GET u8 0", "*1\r\n:127\r\n");
    EXPECT("BITFIELD_RO k OVERFLOW SAT GET u8 0", "*1\r\n:127\r\n");
    EXPECT("BITFIELD_RO k SET u8 0 1", "-ERR BITFIELD_RO only supports the GET subcommand\r\n");
    EXPECT("BITFIELD_RO k INCRBY u8 0 1", "-ERR BITFIELD_RO only supports the GET subcommand\r\n");
    EXPECT("BITFIELD_RO k", "*0\r\n");
    EXPECT("BITFIELD_RO nokey GET i8 0", "*1\r\n:0\r\n");
    EXPECT("BITFIELD_RO k FOO", ERR_SYNTAX);
    EXPECT("BITFIELD_RO k OVERFLOW bad GET u8 0", "-ERR Invalid OVERFLOW type specified\r\n");
    EXPECT("BITFIELD_RO k GET u64 0", ERR_BFTYPE);
    add_fake("l");
    EXPECT("BITFIELD_RO l GET u8 0", WRONGTYPE);
    EXPECT("BITFIELD_RO l SET u8 0 1", "-ERR BITFIELD_RO only supports the GET subcommand\r\n");
    EXPECT("GET k", "$1\r\n\x7f\r\n");
}

/* ---- LCS ---- */

Test(cmd_bits, lcs_replies)
{
    EXPECT("MSET key1 ohmytext key2 mynewtext", "+OK\r\n");
    EXPECT_BOTH("LCS key1 key2", "$6\r\nmytext\r\n");
    EXPECT_BOTH("LCS key1 key2 LEN", ":6\r\n");
    EXPECT23("LCS key1 key2 IDX",
             "*4\r\n$7\r\nmatches\r\n*2\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n*2\r\n*2\r\n:"
             "2\r\n:3\r\n*2\r\n:0\r\n:1\r\n$3\r\nlen\r\n:6\r\n",
             "%2\r\n$7\r\nmatches\r\n*2\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n*2\r\n*2\r\n:"
             "2\r\n:3\r\n*2\r\n:0\r\n:1\r\n$3\r\nlen\r\n:6\r\n");
    EXPECT("LCS key1 key2 IDX MINMATCHLEN 4",
           "*4\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n$3\r\nlen\r\n:6"
           "\r\n");
    EXPECT23("LCS key1 key2 IDX MINMATCHLEN 4 WITHMATCHLEN",
             "*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n$3\r\nl"
             "en\r\n:6\r\n",
             "%2\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n$3\r\nl"
             "en\r\n:6\r\n");
    EXPECT("lcs key1 key2 minmatchlen -5 idx withmatchlen",
           "*4\r\n$7\r\nmatches\r\n*2\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n*3\r\n*2"
           "\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n$3\r\nlen\r\n:6\r\n");
    EXPECT("LCS key1 key1 IDX WITHMATCHLEN",
           "*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:0\r\n:7\r\n*2\r\n:0\r\n:7\r\n:8\r\n$3\r\nlen"
           "\r\n:8\r\n");
    EXPECT("LCS key1 key2 WITHMATCHLEN", "$6\r\nmytext\r\n");
    EXPECT("LCS key1 key2 LEN MINMATCHLEN 3", ":6\r\n");
    EXPECT("LCS key1 key2 LEN LEN", ":6\r\n");
    EXPECT("LCS key1 nokey", "$0\r\n\r\n");
    EXPECT("LCS nokey key1", "$0\r\n\r\n");
    EXPECT("LCS nokey nokey2 LEN", ":0\r\n");
    EXPECT23("LCS nokey nokey2 IDX", "*4\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n",
             "%2\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n");
    EXPECT("MSET a ABCBDAB b BDCABA", "+OK\r\n");
    EXPECT("LCS a b LEN", ":4\r\n");
    EXPECT("LCS a b", "$4\r\nBDAB\r\n");
    EXPECT("MSET a \"the quick brown fox\" b \"a quick brown dog\"", "+OK\r\n");
    EXPECT("LCS a b", "$14\r\n quick brown o\r\n");
    EXPECT("LCS a b IDX MINMATCHLEN 5 WITHMATCHLEN",
           "*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:3\r\n:15\r\n*2\r\n:1\r\n:13\r\n:13\r\n$3\r\nl"
           "en\r\n:14\r\n");
}

Test(cmd_bits, lcs_errors)
{
    EXPECT("MSET key1 ohmytext key2 mynewtext", "+OK\r\n");
    EXPECT("LCS key1 key2 LEN IDX",
           "-ERR If you want both the length and indexes, please just use IDX.\r\n");
    EXPECT("LCS key1 key2 IDX LEN",
           "-ERR If you want both the length and indexes, please just use IDX.\r\n");
    EXPECT("LCS key1 key2 MINMATCHLEN", ERR_SYNTAX);
    EXPECT("LCS key1 key2 MINMATCHLEN x", ERR_NOTINT);
    EXPECT("LCS key1 key2 FOO", ERR_SYNTAX);
    EXPECT("LCS key1", "-ERR wrong number of arguments for 'lcs' command\r\n");
    add_fake("l");
    EXPECT("LCS key1 l", "-ERR The specified keys must contain string values\r\n");
    EXPECT("LCS l key1", "-ERR The specified keys must contain string values\r\n");
    EXPECT("LCS l key1 FOO", "-ERR The specified keys must contain string values\r\n");
    /* the table (4 bytes a cell) may not exceed proto-max-bulk-len */
    EXPECT("CONFIG SET proto-max-bulk-len 1mb", "+OK\r\n");
    char a[600];
    memset(a, 'a', sizeof(a));
    set_bytes("x", a, sizeof(a));
    set_bytes("y", a, sizeof(a));
    EXPECT("LCS x y LEN",
           "-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len\r\n");
    set_bytes("y", a, 2);
    EXPECT("LCS x y LEN", ":2\r\n");
}

/* ---- command table ---- */

Test(cmd_bits, key_positions_for_command_getkeys)
{
    int pos[8];
    resp_arg_t bitop[5] = {{"bitop", 5}, {"and", 3}, {"d", 1}, {"a", 1}, {"b", 1}};
    const command_t *cmd = command_lookup(&bitop[0]);
    cr_assert_not_null(cmd);
    cr_assert_eq(command_get_keys(cmd, 5, bitop, pos, 8), 3);
    cr_assert_eq(pos[0], 2);
    cr_assert_eq(pos[1], 3);
    cr_assert_eq(pos[2], 4);
    resp_arg_t lcs[4] = {{"LCS", 3}, {"a", 1}, {"b", 1}, {"LEN", 3}};
    cr_assert_eq(command_get_keys(command_lookup(&lcs[0]), 4, lcs, pos, 8), 2);
    cr_assert_eq(pos[0], 1);
    cr_assert_eq(pos[1], 2);
    resp_arg_t bf[5] = {{"bitfield", 8}, {"k", 1}, {"GET", 3}, {"u8", 2}, {"0", 1}};
    cr_assert_eq(command_get_keys(command_lookup(&bf[0]), 5, bf, pos, 8), 1);
    cr_assert_eq(pos[0], 1);
    static const char *names[] = {"setbit",   "getbit",      "bitcount", "bitpos",
                                  "bitfield", "bitfield_ro", "lcs",      "bitop"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        resp_arg_t n = {names[i], strlen(names[i])};
        cr_assert_not_null(command_lookup(&n), "%s", names[i]);
    }
}

/* ---- random results against naive models ---- */

static int bit_at(const unsigned char *p, long long i)
{
    return (p[i >> 3] >> (7 - (i & 7))) & 1;
}

static void normalize(long long *start, long long *end, long long total)
{
    if (*start < 0) *start += total;
    if (*end < 0) *end += total;
    if (*start < 0) *start = 0;
    if (*end < 0) *end = 0;
    if (*end >= total) *end = total - 1;
}

/* BITCOUNT key [start end [unit]] (nargs 0 or 2), bit by bit. */
static long long bitcount_model(const unsigned char *p, long long len, int nargs, long long start,
                                long long end, int isbit)
{
    long long n = 0;
    if (nargs == 0) {
        for (long long i = 0; i < len * 8; i++) n += bit_at(p, i);
        return n;
    }
    if (start < 0 && end < 0 && start > end) return 0;
    normalize(&start, &end, isbit ? len * 8 : len);
    if (start > end) return 0;
    long long unit = isbit ? 1 : 8;
    for (long long i = start * unit; i < end * unit + unit; i++) n += bit_at(p, i);
    return n;
}

/* BITPOS key bit [start [end [unit]]], bit by bit, with the documented rules: with no explicit
 * end a missing clear bit is the first bit past the string. */
static long long bitpos_model(const unsigned char *p, long long len, int bit, int nargs,
                              long long start, long long end, int isbit)
{
    if (nargs == 0) {
        start = 0;
        end = len - 1;
        isbit = 0;
    } else if (nargs == 1) {
        end = isbit ? len * 8 + 7 : len - 1;
    }
    normalize(&start, &end, isbit ? len * 8 : len);
    if (start > end) return -1;
    long long unit = isbit ? 1 : 8, sb = start * unit, eb = end * unit + unit - 1;
    for (long long i = sb; i <= eb; i++)
        if (bit_at(p, i) == bit) return i;
    return bit == 1 || nargs == 2 ? -1 : eb + 1;
}

static size_t random_bytes_biased(unsigned char *p)
{
    static const size_t lens[] = {0, 1, 2, 3, 5, 8, 9, 16, 31, 33, 40, 70, 129, 300};
    size_t n = lens[rand_u64() % (sizeof(lens) / sizeof(lens[0]))];
    for (size_t i = 0; i < n; i++) {
        unsigned r = (unsigned)(rand_u64() % 100);
        p[i] = r < 35 ? 0 : r < 70 ? 0xff : (unsigned char)rand_u64();
    }
    return n;
}

static long long random_index(long long len)
{
    switch (rand_u64() % 4) {
    case 0:
        return (long long)(rand_u64() % (uint64_t)(len * 16 + 21)) - len * 8 - 10;
    case 1:
        return (long long)(rand_u64() % (uint64_t)(len * 2 + 7)) - len - 3;
    case 2:
        return 0;
    default:
        return -1;
    }
}

Test(cmd_bits, random_bitcount_and_bitpos_match_the_model)
{
    unsigned char p[300];
    char line[128];
    for (int it = 0; it < 3000; it++) {
        long long len = (long long)random_bytes_biased(p);
        set_bytes("k", p, (size_t)len);
        int unit = (int)(rand_u64() % 3); /* 0: none, 1: BYTE, 2: BIT */
        const char *uname = unit == 0 ? "" : unit == 1 ? " BYTE" : " BIT";
        long long s = random_index(len), e = random_index(len);
        if (rand_u64() % 5 == 0) {
            cr_assert_eq(int_of("BITCOUNT k"), bitcount_model(p, len, 0, 0, 0, 0));
        } else {
            snprintf(line, sizeof(line), "BITCOUNT k %lld %lld%s", s, e, uname);
            cr_assert_eq(int_of(line), bitcount_model(p, len, 2, s, e, unit == 2), "%s on %s", line,
                         escaped((char *)p, (size_t)len));
        }
        int bit = (int)(rand_u64() & 1), nargs = (int)(rand_u64() % 3);
        if (nargs == 0)
            snprintf(line, sizeof(line), "BITPOS k %d", bit);
        else if (nargs == 1)
            snprintf(line, sizeof(line), "BITPOS k %d %lld", bit, s);
        else
            snprintf(line, sizeof(line), "BITPOS k %d %lld %lld%s", bit, s, e, uname);
        long long want = bitpos_model(p, len, bit, nargs, s, e, nargs == 2 && unit == 2);
        cr_assert_eq(int_of(line), want, "%s on %s", line, escaped((char *)p, (size_t)len));
    }
}

Test(cmd_bits, random_bitop_matches_the_model)
{
    static unsigned char src[5][300];
    size_t lens[5];
    static const char *ops[] = {"AND", "OR", "XOR", "NOT"};
    char line[128];
    for (int it = 0; it < 500; it++) {
        int n = 1 + (int)(rand_u64() % 5), op = (int)(rand_u64() % 4);
        if (op == 3) n = 1;
        size_t maxlen = 0;
        int len = snprintf(line, sizeof(line), "BITOP %s dest", ops[op]);
        for (int k = 0; k < n; k++) {
            char key[8];
            lens[k] = random_bytes_biased(src[k]);
            if (rand_u64() % 8 == 0) {
                lens[k] = 0; /* a missing key reads as an empty string */
                snprintf(key, sizeof(key), "m%d", k);
            } else {
                snprintf(key, sizeof(key), "s%d", k);
                set_bytes(key, src[k], lens[k]);
            }
            if (lens[k] > maxlen) maxlen = lens[k];
            len += snprintf(line + len, sizeof(line) - (size_t)len, " %s", key);
        }
        cr_assert_eq(int_of(line), (long long)maxlen, "%s", line);
        if (maxlen == 0) {
            cr_assert_null(find("dest"));
            continue;
        }
        const str_obj_t *r = str_of("dest");
        cr_assert_eq(r->len, maxlen);
        for (size_t i = 0; i < maxlen; i++) {
            unsigned out = i < lens[0] ? src[0][i] : 0;
            if (op == 3) out = ~out & 0xff;
            for (int k = 1; k < n; k++) {
                unsigned b = i < lens[k] ? src[k][i] : 0;
                out = op == 0 ? out & b : op == 1 ? out | b : out ^ b;
            }
            cr_assert_eq((unsigned char)r->data[i], out, "%s byte %zu", line, i);
        }
    }
}

Test(cmd_bits, random_bitfield_matches_bit_by_bit_model)
{
    unsigned char model[64];
    char line[160];
    memset(model, 0, sizeof(model));
    EXPECT("SETBIT k 511 0", ":0\r\n");
    for (int it = 0; it < 3000; it++) {
        int sign = (int)(rand_u64() & 1);
        int bits = 1 + (int)(rand_u64() % (sign ? 64 : 63));
        long long off = (long long)(rand_u64() % (uint64_t)(512 - bits + 1));
        uint64_t old = 0;
        for (int b = 0; b < bits; b++) old = (old << 1) | (uint64_t)bit_at(model, off + b);
        long long oldv = (long long)old;
        if (sign && bits < 64 && (old >> (bits - 1)) & 1)
            oldv = (long long)(old | (UINT64_MAX << bits));
        /* GET */
        snprintf(line, sizeof(line), "BITFIELD_RO k GET %c%d %lld", sign ? 'i' : 'u', bits, off);
        buf_clear(&C->out);
        run(line);
        char want[64];
        int wn = snprintf(want, sizeof(want), "*1\r\n:%lld\r\n", oldv);
        cr_assert(C->out.len == (size_t)wn && memcmp(C->out.data, want, (size_t)wn) == 0, "%s",
                  line);
        /* SET a random value (WRAP): the low bits land, the old value is replied */
        uint64_t v = rand_u64();
        snprintf(line, sizeof(line), "BITFIELD k SET %c%d %lld %lld", sign ? 'i' : 'u', bits, off,
                 (long long)v);
        buf_clear(&C->out);
        run(line);
        snprintf(want, sizeof(want), "*1\r\n:%lld\r\n", oldv);
        cr_assert(C->out.len == strlen(want) && memcmp(C->out.data, want, strlen(want)) == 0,
                  "%s: %s", line, escaped(C->out.data, C->out.len));
        buf_clear(&C->out);
        for (int b = 0; b < bits; b++) {
            long long i = off + b;
            int bit = (int)((v >> (bits - 1 - b)) & 1);
            model[i >> 3] =
                (unsigned char)((model[i >> 3] & ~(1 << (7 - (i & 7)))) | (bit << (7 - (i & 7))));
        }
        const str_obj_t *s = str_of("k");
        cr_assert_eq(s->len, 64);
        cr_assert(memcmp(s->data, model, 64) == 0, "%s", line);
    }
}
