/* tests/unit/server/cmd/test_keys.c - server/cmd/keys.c through the socketless client: the exact
 * RESP2 and RESP3 bytes of the generic key commands and their errors (texts taken from
 * redis-server 7.0.15), expiry rules (NX XX GT LT, times in the past, overflow), RENAME onto
 * itself, MOVE to the same db, COPY with REPLACE and DB, KEYS patterns, SCAN covering every key
 * also while the table grows, OBJECT subcommands, keyspace hit/miss counting and key positions. */
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

/* ---- a non-string value (slot 7 of obj_types is unused by the real types) ---- */

#define FAKE_TYPE HARNESS_FAKE_TYPE

static client_t *C;

static obj_t *add_fake(const char *key)
{
    return harness_add_fake(C->db, key);
}

/* ---- the client ---- */

static void setup(void)
{
    C = harness_server_start(0, NULL);
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(cmd_keys, .init = setup, .fini = teardown);

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

/* The integer of a ":n\r\n" reply. */
static long long int_of(const char *line)
{
    buf_clear(&C->out);
    run(line);
    cr_assert(C->out.len > 0 && C->out.data[0] == ':', "%s: not an integer reply: %s", line,
              escaped(C->out.data ? C->out.data : "", C->out.len));
    long long v = atoll(C->out.data + 1);
    buf_clear(&C->out);
    return v;
}

static kv_t *find_in(int db, const char *key)
{
    return db_find(&srv.db[db], key, strlen(key));
}

static kv_t *find(const char *key)
{
    return find_in(C->dbid, key);
}

static void make_expired(const char *key)
{
    kv_t *kv = find(key);
    cr_assert(kv, "no key %s", key);
    db_set_expire(C->db, kv, time_ms() - 1000);
}

static void set_key(int db, const char *key, const char *val)
{
    str_obj_t *s = str_new(val, strlen(val));
    db_set(&srv.db[db], key, strlen(key), &s->h, 0);
}

static const char *str_val(int db, const char *key)
{
    kv_t *kv = find_in(db, key);
    cr_assert(kv && kv->val->type == OBJ_STRING, "no string at %s", key);
    return ((str_obj_t *)kv->val)->data;
}

/* ---- a small reader for array replies of bulk strings (KEYS, SCAN) ---- */

typedef struct strs {
    char **v;
    size_t n;
} strs_t;

static const char *read_line(const char *p, long long *n, char type)
{
    cr_assert_eq(*p, type, "expected '%c' at '%s'", type, escaped(p, 20));
    *n = atoll(p + 1);
    return strstr(p, "\r\n") + 2;
}

/* Reads an array of bulk strings at p; returns the position after it. */
static const char *read_bulks(const char *p, strs_t *out)
{
    long long n;
    p = read_line(p, &n, '*');
    out->v = xcalloc((size_t)n + 1, sizeof(char *));
    out->n = (size_t)n;
    for (long long i = 0; i < n; i++) {
        long long len;
        p = read_line(p, &len, '$');
        out->v[i] = xmemdup(p, (size_t)len);
        p += len + 2;
    }
    return p;
}

static void strs_free(strs_t *s)
{
    for (size_t i = 0; i < s->n; i++) xfree(s->v[i]);
    xfree(s->v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* KEYS pattern, sorted and joined with spaces. */
static char *keys_of(const char *pattern)
{
    static char joined[4096];
    char line[256];
    snprintf(line, sizeof(line), "KEYS %s", pattern);
    buf_clear(&C->out);
    run(line);
    buf_push(&C->out, '\0');
    strs_t s;
    read_bulks(C->out.data, &s);
    qsort(s.v, s.n, sizeof(char *), cmp_str);
    joined[0] = '\0';
    for (size_t i = 0; i < s.n; i++) {
        if (i) strcat(joined, " ");
        strcat(joined, s.v[i]);
    }
    strs_free(&s);
    buf_clear(&C->out);
    return joined;
}

/* One SCAN call: returns the next cursor and the keys. */
static unsigned long long scan_once(const char *args, strs_t *keys)
{
    char line[256];
    snprintf(line, sizeof(line), "SCAN %s", args);
    buf_clear(&C->out);
    run(line);
    buf_push(&C->out, '\0');
    const char *p = C->out.data;
    long long n, len;
    p = read_line(p, &n, '*');
    cr_assert_eq(n, 2, "%s: %s", line, escaped(C->out.data, C->out.len));
    p = read_line(p, &len, '$');
    unsigned long long cursor = strtoull(p, NULL, 10);
    p += len + 2;
    p = read_bulks(p, keys);
    cr_assert_eq(*p, '\0', "trailing bytes after SCAN reply");
    buf_clear(&C->out);
    return cursor;
}

/* ---- DEL UNLINK EXISTS TOUCH TYPE RANDOMKEY ---- */

Test(cmd_keys, del_unlink_exists_touch_count_keys)
{
    EXPECT("MSET a 1 b 2 c 3", "+OK\r\n");
    EXPECT23("EXISTS a a nokey b", ":3\r\n", ":3\r\n");
    EXPECT("TOUCH a a nokey", ":2\r\n");
    EXPECT("DEL a a nokey", ":1\r\n");
    EXPECT("UNLINK b nokey", ":1\r\n");
    EXPECT("EXISTS a b c", ":1\r\n");
    EXPECT("DEL a", ":0\r\n");
    EXPECT("DEL", "-ERR wrong number of arguments for 'del' command\r\n");
    EXPECT("EXISTS", "-ERR wrong number of arguments for 'exists' command\r\n");
    add_fake("h");
    EXPECT("EXISTS h", ":1\r\n");
    EXPECT("DEL h c", ":2\r\n");
    cr_assert_eq(db_size(C->db), 0);
}

Test(cmd_keys, expired_keys_do_not_exist)
{
    EXPECT("MSET a 1 b 2", "+OK\r\n");
    make_expired("a");
    EXPECT("EXISTS a b", ":1\r\n");
    cr_assert_null(find("a"));
    make_expired("b");
    EXPECT("DEL b", ":0\r\n");
    EXPECT("SET c 1", "+OK\r\n");
    make_expired("c");
    EXPECT("TYPE c", "+none\r\n");
    EXPECT("SET d 1", "+OK\r\n");
    make_expired("d");
    EXPECT("TTL d", ":-2\r\n");
    EXPECT("SET e 1", "+OK\r\n");
    make_expired("e");
    EXPECT("RENAME e f", "-ERR no such key\r\n");
    EXPECT("SET e 1", "+OK\r\n");
    make_expired("e");
    EXPECT("KEYS *", "*0\r\n");
    cr_assert_not_null(find("e")); /* KEYS skips it without deleting */
    EXPECT("RANDOMKEY", "$-1\r\n");
    cr_assert_null(find("e"));
}

Test(cmd_keys, type_names)
{
    EXPECT("SET s v", "+OK\r\n");
    EXPECT23("TYPE s", "+string\r\n", "+string\r\n");
    EXPECT23("TYPE nokey", "+none\r\n", "+none\r\n");
    resp_arg_t hset = {"hset", 4};
    if (!command_lookup(&hset)) cr_skip_test("no hash commands in this build");
    EXPECT("HSET h f v", ":1\r\n");
    EXPECT("TYPE h", "+hash\r\n");
}

Test(cmd_keys, randomkey)
{
    EXPECT23("RANDOMKEY", "$-1\r\n", "_\r\n");
    EXPECT("SET only v", "+OK\r\n");
    EXPECT23("RANDOMKEY", "$4\r\nonly\r\n", "$4\r\nonly\r\n");
    EXPECT("RANDOMKEY x", "-ERR wrong number of arguments for 'randomkey' command\r\n");
}

/* ---- KEYS SCAN ---- */

Test(cmd_keys, keys_patterns)
{
    EXPECT("MSET hello 1 hallo 2 hxllo 3 hllo 4 heeello 5 h*llo 6 other 7", "+OK\r\n");
    cr_assert_str_eq(keys_of("*"), "h*llo hallo heeello hello hllo hxllo other");
    cr_assert_str_eq(keys_of("h?llo"), "h*llo hallo hello hxllo");
    cr_assert_str_eq(keys_of("h*llo"), "h*llo hallo heeello hello hllo hxllo");
    cr_assert_str_eq(keys_of("h[ae]llo"), "hallo hello");
    cr_assert_str_eq(keys_of("h[^e]llo"), "h*llo hallo hxllo");
    cr_assert_str_eq(keys_of("h[a-e]llo"), "hallo hello");
    cr_assert_str_eq(keys_of("h\\*llo"), "h*llo");
    cr_assert_str_eq(keys_of("nomatch*"), "");
    cr_assert_str_eq(keys_of("other"), "other");
    C->resp = 3;
    EXPECT("KEYS oth*", "*1\r\n$5\r\nother\r\n");
    EXPECT("KEYS", "-ERR wrong number of arguments for 'keys' command\r\n");
}

Test(cmd_keys, scan_argument_errors)
{
    EXPECT("SCAN abc", "-ERR invalid cursor\r\n");
    EXPECT("SCAN \" 0\"", "-ERR invalid cursor\r\n");
    EXPECT("SCAN 0x", "-ERR invalid cursor\r\n");
    EXPECT("SCAN 18446744073709551616", "-ERR invalid cursor\r\n");
    EXPECT("SCAN 0 COUNT 0", "-ERR syntax error\r\n");
    EXPECT("SCAN 0 COUNT -1", "-ERR syntax error\r\n");
    EXPECT("SCAN 0 COUNT abc", "-ERR value is not an integer or out of range\r\n");
    EXPECT("SCAN 0 MATCH", "-ERR syntax error\r\n");
    EXPECT("SCAN 0 TYPE", "-ERR syntax error\r\n");
    EXPECT("SCAN 0 foo bar", "-ERR syntax error\r\n");
    EXPECT("SCAN", "-ERR wrong number of arguments for 'scan' command\r\n");
    /* strtoul's syntax: a sign, leading zeros and the empty string are cursors */
    EXPECT23("SCAN 0", "*2\r\n$1\r\n0\r\n*0\r\n", "*2\r\n$1\r\n0\r\n*0\r\n");
    EXPECT("SCAN +0", "*2\r\n$1\r\n0\r\n*0\r\n");
    EXPECT("SCAN \"\"", "*2\r\n$1\r\n0\r\n*0\r\n");
    EXPECT("SCAN 000", "*2\r\n$1\r\n0\r\n*0\r\n");
    EXPECT("SCAN 18446744073709551615", "*2\r\n$1\r\n0\r\n*0\r\n");
}

Test(cmd_keys, scan_one_key_and_options)
{
    EXPECT("SET k v", "+OK\r\n");
    EXPECT23("SCAN 0", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n");
    EXPECT("SCAN 0 MATCH x*", "*2\r\n$1\r\n0\r\n*0\r\n");
    EXPECT("SCAN 0 match k COUNT 100 type STRING", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n");
    EXPECT("SCAN 0 TYPE hash", "*2\r\n$1\r\n0\r\n*0\r\n");
    EXPECT("SCAN 0 MATCH * MATCH k*", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n");
}

/* Scans the whole db with the given options; marks seen[i] for key "key:i". */
static void scan_all(const char *opts, int *seen, int n, int *calls)
{
    unsigned long long cursor = 0;
    *calls = 0;
    do {
        char args[128];
        strs_t keys;
        snprintf(args, sizeof(args), "%llu %s", cursor, opts);
        cursor = scan_once(args, &keys);
        for (size_t i = 0; i < keys.n; i++) {
            int id = -1;
            if (sscanf(keys.v[i], "key:%d", &id) == 1 && id >= 0 && id < n)
                seen[id]++;
            else
                seen[n]++;
        }
        strs_free(&keys);
        (*calls)++;
        cr_assert_lt(*calls, 100000);
    } while (cursor != 0);
}

Test(cmd_keys, scan_returns_every_key)
{
    enum { N = 1000 };
    for (int i = 0; i < N; i++) {
        char k[32];
        snprintf(k, sizeof(k), "key:%d", i);
        set_key(0, k, "v");
    }
    static int seen[N + 1];
    int calls;
    memset(seen, 0, sizeof(seen));
    scan_all("COUNT 7", seen, N, &calls);
    for (int i = 0; i < N; i++) cr_assert_geq(seen[i], 1, "key:%d missed", i);
    cr_assert_eq(seen[N], 0);
    cr_assert_gt(calls, 10);

    memset(seen, 0, sizeof(seen));
    scan_all("MATCH key:1?? COUNT 50", seen, N, &calls);
    for (int i = 0; i < N; i++)
        cr_assert_eq(seen[i] > 0, i >= 100 && i <= 199, "key:%d seen %d times", i, seen[i]);
}

Test(cmd_keys, scan_returns_every_key_while_the_table_grows)
{
    enum { N = 500 };
    for (int i = 0; i < N; i++) {
        char k[32];
        snprintf(k, sizeof(k), "key:%d", i);
        set_key(0, k, "v");
    }
    static int seen[N + 1];
    memset(seen, 0, sizeof(seen));
    unsigned long long cursor = 0;
    int added = 0;
    do {
        char args[64];
        strs_t keys;
        snprintf(args, sizeof(args), "%llu COUNT 5", cursor);
        cursor = scan_once(args, &keys);
        for (size_t i = 0; i < keys.n; i++) {
            int id;
            if (sscanf(keys.v[i], "key:%d", &id) == 1 && id < N) seen[id]++;
        }
        strs_free(&keys);
        /* new keys between calls force the table to grow and rehash */
        for (int j = 0; j < 20; j++, added++) {
            char k[32];
            snprintf(k, sizeof(k), "new:%d", added);
            set_key(0, k, "v");
        }
    } while (cursor != 0);
    for (int i = 0; i < N; i++) cr_assert_geq(seen[i], 1, "key:%d missed", i);
}

Test(cmd_keys, scan_filters_type_and_expired_keys)
{
    EXPECT("MSET a 1 b 2", "+OK\r\n");
    add_fake("f");
    make_expired("b");
    strs_t keys;
    cr_assert_eq(scan_once("0 COUNT 100 TYPE string", &keys), 0);
    cr_assert_eq(keys.n, 1);
    cr_assert_str_eq(keys.v[0], "a");
    strs_free(&keys);
    cr_assert_null(find("b")); /* the expired key met by the scan was deleted */
    cr_assert_eq(scan_once("0 COUNT 100", &keys), 0);
    cr_assert_eq(keys.n, 2);
    strs_free(&keys);
}

/* ---- RENAME MOVE COPY ---- */

Test(cmd_keys, rename_and_renamenx)
{
    EXPECT("RENAME nokey a", "-ERR no such key\r\n");
    EXPECT("RENAME nokey nokey", "-ERR no such key\r\n");
    EXPECT("RENAMENX nokey b", "-ERR no such key\r\n");
    EXPECT("SET a 1", "+OK\r\n");
    EXPECT("EXPIRE a 100", ":1\r\n");
    long long when = db_get_expire(C->db, find("a"));
    /* onto itself: nothing happens, the TTL stays */
    EXPECT("RENAME a a", "+OK\r\n");
    EXPECT("RENAMENX a a", ":0\r\n");
    cr_assert_eq(db_get_expire(C->db, find("a")), when);
    /* the value and its TTL move */
    obj_t *val = find("a")->val;
    EXPECT("RENAME a b", "+OK\r\n");
    cr_assert_null(find("a"));
    cr_assert_eq(find("b")->val, val);
    cr_assert_eq(db_get_expire(C->db, find("b")), when);
    EXPECT("SET c 3", "+OK\r\n");
    EXPECT("RENAMENX b c", ":0\r\n");
    EXPECT("GET b", "$1\r\n1\r\n");
    EXPECT("RENAMENX b d", ":1\r\n");
    EXPECT("EXISTS b", ":0\r\n");
    /* overwriting drops the destination's TTL when the source has none */
    EXPECT("EXPIRE d 200", ":1\r\n");
    EXPECT("PERSIST d", ":1\r\n");
    EXPECT("EXPIRE c 300", ":1\r\n");
    EXPECT("RENAME d c", "+OK\r\n");
    EXPECT("GET c", "$1\r\n1\r\n");
    EXPECT("TTL c", ":-1\r\n");
    add_fake("f");
    EXPECT("RENAME f g", "+OK\r\n");
    cr_assert_eq(find("g")->val->type, FAKE_TYPE);
}

Test(cmd_keys, move_between_databases)
{
    EXPECT("SET k v", "+OK\r\n");
    EXPECT("MOVE k 0", "-ERR source and destination objects are the same\r\n");
    EXPECT("MOVE nokey 0", "-ERR source and destination objects are the same\r\n");
    EXPECT("MOVE k 16", "-ERR DB index is out of range\r\n");
    EXPECT("MOVE k -1", "-ERR DB index is out of range\r\n");
    EXPECT("MOVE k abc", "-ERR value is not an integer or out of range\r\n");
    EXPECT("MOVE k 4294967296", "-ERR value is not an integer or out of range\r\n");
    EXPECT("MOVE nokey 1", ":0\r\n");
    set_key(1, "k", "other");
    EXPECT("MOVE k 1", ":0\r\n");
    cr_assert_str_eq(str_val(0, "k"), "v");
    cr_assert_str_eq(str_val(1, "k"), "other");
    EXPECT("PEXPIREAT k 99999999999999", ":1\r\n");
    EXPECT("MOVE k 2", ":1\r\n");
    cr_assert_null(find_in(0, "k"));
    kv_t *kv = find_in(2, "k");
    cr_assert_not_null(kv);
    cr_assert_eq(db_get_expire(&srv.db[2], kv), 99999999999999LL);
    cr_assert_str_eq(str_val(2, "k"), "v");
}

Test(cmd_keys, copy_with_replace_and_db)
{
    EXPECT("SET c 0", "+OK\r\n");
    EXPECT("COPY c c", "-ERR source and destination objects are the same\r\n");
    EXPECT("COPY c c REPLACE", "-ERR source and destination objects are the same\r\n");
    EXPECT("COPY c c DB 0", "-ERR source and destination objects are the same\r\n");
    EXPECT("COPY c c DB 16", "-ERR DB index is out of range\r\n");
    EXPECT("COPY c c DB abc", "-ERR value is not an integer or out of range\r\n");
    EXPECT("COPY c c foo", "-ERR syntax error\r\n");
    EXPECT("COPY c c DB", "-ERR syntax error\r\n");
    EXPECT("COPY c", "-ERR wrong number of arguments for 'copy' command\r\n");
    EXPECT("COPY nokey x", ":0\r\n");
    EXPECT("COPY c d", ":1\r\n");
    cr_assert_neq(find("c")->val, find("d")->val);
    EXPECT("SET d 1", "+OK\r\n");
    EXPECT("COPY c d", ":0\r\n");
    EXPECT("GET d", "$1\r\n1\r\n");
    EXPECT("PEXPIREAT c 99999999999999", ":1\r\n");
    EXPECT("COPY c d REPLACE", ":1\r\n");
    EXPECT("GET d", "$1\r\n0\r\n");
    EXPECT("PEXPIRETIME d", ":99999999999999\r\n");
    EXPECT("COPY c c DB 1", ":1\r\n");
    cr_assert_str_eq(str_val(1, "c"), "0");
    cr_assert_eq(db_get_expire(&srv.db[1], find_in(1, "c")), 99999999999999LL);
    EXPECT("COPY c c DB 1", ":0\r\n");
    EXPECT("COPY c c db 1 replace", ":1\r\n");
    EXPECT("COPY c e REPLACE REPLACE DB 3 DB 2", ":1\r\n");
    cr_assert_str_eq(str_val(2, "e"), "0");
    cr_assert_str_eq(str_val(0, "c"), "0"); /* the source is untouched */
    add_fake("f");
    EXPECT("COPY f g", ":1\r\n");
    cr_assert_eq(find("g")->val->type, FAKE_TYPE);
    cr_assert_neq(find("g")->val, find("f")->val);
}

/* ---- expiry ---- */

Test(cmd_keys, expire_ttl_persist)
{
    EXPECT23("TTL nokey", ":-2\r\n", ":-2\r\n");
    EXPECT("PTTL nokey", ":-2\r\n");
    EXPECT("EXPIRETIME nokey", ":-2\r\n");
    EXPECT("PEXPIRETIME nokey", ":-2\r\n");
    EXPECT("EXPIRE nokey 10", ":0\r\n");
    EXPECT("PERSIST nokey", ":0\r\n");
    EXPECT("SET k v", "+OK\r\n");
    EXPECT("TTL k", ":-1\r\n");
    EXPECT("PTTL k", ":-1\r\n");
    EXPECT("EXPIRETIME k", ":-1\r\n");
    EXPECT("PEXPIRETIME k", ":-1\r\n");
    EXPECT("PERSIST k", ":0\r\n");
    EXPECT("EXPIRE k 100", ":1\r\n");
    EXPECT("TTL k", ":100\r\n");
    long long pttl = int_of("PTTL k");
    cr_assert(pttl > 99000 && pttl <= 100000, "pttl %lld", pttl);
    EXPECT("PEXPIRE k 1700", ":1\r\n");
    EXPECT("TTL k", ":2\r\n"); /* rounded to the nearest second */
    EXPECT("EXPIREAT k 99999999999", ":1\r\n");
    EXPECT("EXPIRETIME k", ":99999999999\r\n");
    EXPECT("PEXPIRETIME k", ":99999999999000\r\n");
    EXPECT("PEXPIREAT k 99999999999499", ":1\r\n");
    EXPECT("EXPIRETIME k", ":99999999999\r\n");
    EXPECT("PEXPIREAT k 99999999999500", ":1\r\n");
    EXPECT("EXPIRETIME k", ":100000000000\r\n");
    EXPECT("PERSIST k", ":1\r\n");
    EXPECT("TTL k", ":-1\r\n");
    EXPECT("EXPIRE k abc", "-ERR value is not an integer or out of range\r\n");
    EXPECT("EXPIRE k", "-ERR wrong number of arguments for 'expire' command\r\n");
    EXPECT("TTL", "-ERR wrong number of arguments for 'ttl' command\r\n");
}

Test(cmd_keys, expire_in_the_past_deletes)
{
    long long d;
    EXPECT("SET k v", "+OK\r\n");
    d = srv.dirty;
    EXPECT("EXPIRE k -1", ":1\r\n");
    cr_assert_gt(srv.dirty, d);
    cr_assert_null(find("k"));
    EXPECT("SET k v", "+OK\r\n");
    EXPECT("EXPIRE k 0", ":1\r\n");
    EXPECT("EXISTS k", ":0\r\n");
    EXPECT("SET k v", "+OK\r\n");
    EXPECT("EXPIREAT k 1", ":1\r\n");
    EXPECT("EXISTS k", ":0\r\n");
    EXPECT("SET k v", "+OK\r\n");
    EXPECT("PEXPIREAT k 0", ":1\r\n");
    EXPECT("EXISTS k", ":0\r\n");
    EXPECT("SET k v", "+OK\r\n");
    EXPECT("PEXPIRE k -9223372036854775808", ":1\r\n");
    EXPECT("EXISTS k", ":0\r\n");
    EXPECT("EXPIREAT k 1", ":0\r\n");
}

Test(cmd_keys, expire_time_overflow_errors)
{
    EXPECT("SET k v", "+OK\r\n");
    EXPECT("EXPIRE k 9223372036854775", "-ERR invalid expire time in 'expire' command\r\n");
    EXPECT("EXPIRE k 9223372036854776", "-ERR invalid expire time in 'expire' command\r\n");
    EXPECT("EXPIRE k -9223372036854776", "-ERR invalid expire time in 'expire' command\r\n");
    EXPECT("EXPIRE k -9223372036854775808", "-ERR invalid expire time in 'expire' command\r\n");
    EXPECT("PEXPIRE k 9223372036854775807", "-ERR invalid expire time in 'pexpire' command\r\n");
    EXPECT("EXPIREAT k 9223372036854775807", "-ERR invalid expire time in 'expireat' command\r\n");
    EXPECT("EXPIREAT k 9223372036854776", "-ERR invalid expire time in 'expireat' command\r\n");
    /* errors come before the key lookup */
    EXPECT("EXPIRE nokey 9223372036854775", "-ERR invalid expire time in 'expire' command\r\n");
    EXPECT("TTL k", ":-1\r\n");
    EXPECT("PEXPIREAT k 9223372036854775807", ":1\r\n");
    EXPECT("PEXPIRETIME k", ":9223372036854775807\r\n");
    EXPECT("EXPIREAT k 9223372036854775", ":1\r\n");
    EXPECT("PEXPIRETIME k", ":9223372036854775000\r\n");
}

Test(cmd_keys, expire_nx_xx_gt_lt)
{
    db_now_ms = time_ms(); /* frozen: TTL replies are exact whatever the machine's load */
    EXPECT("SET e 1", "+OK\r\n");
    EXPECT("EXPIRE e 100 XX", ":0\r\n");
    EXPECT("EXPIRE e 100 GT", ":0\r\n"); /* no TTL counts as infinite */
    EXPECT("EXPIRE e 100 NX", ":1\r\n");
    EXPECT("EXPIRE e 100 NX", ":0\r\n");
    EXPECT("EXPIRE e 200 XX", ":1\r\n");
    EXPECT("EXPIRE e 300 GT", ":1\r\n");
    EXPECT("EXPIRE e 200 GT", ":0\r\n");
    EXPECT("EXPIRE e 300 gt", ":0\r\n");
    EXPECT("EXPIRE e 100 LT", ":1\r\n");
    EXPECT("EXPIRE e 200 lt", ":0\r\n");
    EXPECT("TTL e", ":100\r\n");
    EXPECT("PEXPIRE e 5000 Lt", ":1\r\n");
    EXPECT("EXPIRE e 10 XX GT", ":1\r\n");
    EXPECT("EXPIRE e 10 XX LT", ":0\r\n");
    EXPECT("TTL e", ":10\r\n");
    EXPECT("EXPIRE e 5 XX LT", ":1\r\n");
    EXPECT("TTL e", ":5\r\n");
    EXPECT("EXPIRE e 10 NX XX",
           "-ERR NX and XX, GT or LT options at the same time are not compatible\r\n");
    EXPECT("EXPIRE e 10 NX GT",
           "-ERR NX and XX, GT or LT options at the same time are not compatible\r\n");
    EXPECT("EXPIRE e 10 LT NX",
           "-ERR NX and XX, GT or LT options at the same time are not compatible\r\n");
    EXPECT("EXPIRE e 10 LT GT", "-ERR GT and LT options at the same time are not compatible\r\n");
    EXPECT("EXPIRE e 10 foo", "-ERR Unsupported option foo\r\n");
    EXPECT("EXPIRE e abc foo", "-ERR Unsupported option foo\r\n");
    EXPECT("EXPIRE e -1 GT", ":0\r\n");
    EXPECT("EXISTS e", ":1\r\n");
    EXPECT("EXPIRE e -1 LT", ":1\r\n");
    EXPECT("EXISTS e", ":0\r\n");
    EXPECT("SET e 1", "+OK\r\n");
    EXPECT("EXPIRE e -1 LT", ":1\r\n"); /* LT with no TTL: the new one is always lower */
    EXPECT("EXISTS e", ":0\r\n");
}

/* ---- OBJECT ---- */

Test(cmd_keys, object_encoding_and_refcount)
{
    EXPECT("MSET i 123 e abc n 10000 z -1", "+OK\r\n");
    EXPECT("SET r 123456789012345678901234567890123456789012345", "+OK\r\n");
    EXPECT23("OBJECT ENCODING i", "$3\r\nint\r\n", "$3\r\nint\r\n");
    EXPECT("OBJECT ENCODING e", "$6\r\nembstr\r\n");
    EXPECT("OBJECT encoding r", "$3\r\nraw\r\n");
    EXPECT23("OBJECT ENCODING nokey", "$-1\r\n", "_\r\n");
    EXPECT("OBJECT REFCOUNT i", ":2147483647\r\n");
    EXPECT("OBJECT REFCOUNT n", ":1\r\n");
    EXPECT("OBJECT REFCOUNT z", ":1\r\n");
    EXPECT("OBJECT REFCOUNT e", ":1\r\n");
    EXPECT23("OBJECT REFCOUNT nokey", "$-1\r\n", "_\r\n");
    srv.cfg.maxmemory = 1 << 30;
    srv.cfg.maxmemory_policy = CONFIG_MAXMEMORY_ALLKEYS_LRU;
    EXPECT("OBJECT REFCOUNT i", ":1\r\n");
}

Test(cmd_keys, object_encoding_follows_how_redis_built_the_string)
{
    EXPECT("SET n 123", "+OK\r\n");
    EXPECT("APPEND n 4", ":4\r\n");
    EXPECT("OBJECT ENCODING n", "$3\r\nraw\r\n"); /* APPEND makes it raw */
    EXPECT("OBJECT REFCOUNT n", ":1\r\n");
    EXPECT("COPY n m", ":1\r\n");
    EXPECT("OBJECT ENCODING m", "$3\r\nraw\r\n");
    EXPECT("INCR n", ":1235\r\n");
    EXPECT("OBJECT ENCODING n", "$3\r\nint\r\n");
    EXPECT("SETRANGE n 0 9", ":4\r\n");
    EXPECT("OBJECT ENCODING n", "$3\r\nraw\r\n");
    EXPECT("SET n 12", "+OK\r\n");
    EXPECT("OBJECT ENCODING n", "$3\r\nint\r\n");
    EXPECT("SETRANGE new 1 x", ":2\r\n");
    EXPECT("OBJECT ENCODING new", "$3\r\nraw\r\n");
    EXPECT("APPEND app 5", ":1\r\n"); /* a new key: encoded as SET would */
    EXPECT("OBJECT ENCODING app", "$3\r\nint\r\n");
    EXPECT("INCRBYFLOAT f 1", "$1\r\n1\r\n"); /* never int */
    EXPECT("OBJECT ENCODING f", "$6\r\nembstr\r\n");
    EXPECT("OBJECT REFCOUNT f", ":1\r\n");
    EXPECT("INCR f", ":2\r\n");
    EXPECT("OBJECT ENCODING f", "$3\r\nint\r\n");
    EXPECT("OBJECT REFCOUNT f", ":2147483647\r\n");
}

Test(cmd_keys, object_idletime_does_not_touch)
{
    EXPECT("SET k v", "+OK\r\n");
    kv_t *kv = find("k");
    kv->val->lru = (storage_lru_clock - 5) & 0xffffff;
    EXPECT("OBJECT IDLETIME k", ":5\r\n");
    EXPECT("OBJECT IDLETIME k", ":5\r\n");
    EXPECT("TYPE k", "+string\r\n");
    EXPECT("EXISTS k", ":1\r\n");
    EXPECT("TTL k", ":-1\r\n");
    EXPECT("OBJECT IDLETIME k", ":5\r\n");
    EXPECT("GET k", "$1\r\nv\r\n");
    EXPECT("OBJECT IDLETIME k", ":0\r\n");
    EXPECT23("OBJECT IDLETIME nokey", "$-1\r\n", "_\r\n");
    srv.cfg.maxmemory_policy = CONFIG_MAXMEMORY_VOLATILE_LFU;
    EXPECT("OBJECT IDLETIME k",
           "-ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that "
           "when switching between policies at runtime LRU and LFU data will take some time to "
           "adjust.\r\n");
}

Test(cmd_keys, object_freq_needs_an_lfu_policy)
{
    EXPECT("SET k v", "+OK\r\n");
    EXPECT("OBJECT FREQ k",
           "-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please "
           "note that when switching between policies at runtime LRU and LFU data will take "
           "some time to adjust.\r\n");
    EXPECT23("OBJECT FREQ nokey", "$-1\r\n", "_\r\n");
    EXPECT("CONFIG SET maxmemory-policy allkeys-lfu", "+OK\r\n");
    EXPECT("SET n v", "+OK\r\n");
    EXPECT("OBJECT FREQ n", ":5\r\n"); /* Redis's LFU_INIT_VAL: OBJECT itself does not count */
    for (int i = 0; i < 300; i++) EXPECT("GET n", "$1\r\nv\r\n");
    long long freq = int_of("OBJECT FREQ n");
    cr_assert(freq > 5 && freq < 255, "OBJECT FREQ after 300 reads: %lld", freq);
}

Test(cmd_keys, object_help_and_errors)
{
    static const char help[] =
        "*15\r\n+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"
        "+ENCODING <key>\r\n"
        "+    Return the kind of internal representation used in order to store the value\r\n"
        "+    associated with a <key>.\r\n"
        "+FREQ <key>\r\n"
        "+    Return the access frequency index of the <key>. The returned integer is\r\n"
        "+    proportional to the logarithm of the recent access frequency of the key.\r\n"
        "+IDLETIME <key>\r\n"
        "+    Return the idle time of the <key>, that is the approximated number of\r\n"
        "+    seconds elapsed since the last access to the key.\r\n"
        "+REFCOUNT <key>\r\n"
        "+    Return the number of references of the value associated with the specified\r\n"
        "+    <key>.\r\n"
        "+HELP\r\n"
        "+    Prints this help.\r\n";
    EXPECT23("OBJECT HELP", help, help);
    EXPECT("OBJECT help", help);
    EXPECT("OBJECT foo", "-ERR unknown subcommand 'foo'. Try OBJECT HELP.\r\n");
    EXPECT("OBJECT", "-ERR wrong number of arguments for 'object' command\r\n");
    EXPECT("OBJECT ENCODING", "-ERR wrong number of arguments for 'object|encoding' command\r\n");
    EXPECT("OBJECT ENCODING a b",
           "-ERR wrong number of arguments for 'object|encoding' command\r\n");
    EXPECT("OBJECT HELP x", "-ERR wrong number of arguments for 'object|help' command\r\n");
}

/* ---- stats and key positions ---- */

Test(cmd_keys, reads_count_keyspace_hits_and_misses)
{
    EXPECT("SET a 1", "+OK\r\n");
    uint64_t h = srv.stat.keyspace_hits, m = srv.stat.keyspace_misses;
    run("EXISTS a b");
    run("TYPE a");
    run("TTL b");
    run("PEXPIRETIME a");
    run("TOUCH a b");
    run("OBJECT ENCODING a");
    run("COPY a c");
    cr_assert_eq(srv.stat.keyspace_hits - h, 6);
    cr_assert_eq(srv.stat.keyspace_misses - m, 3);
    h = srv.stat.keyspace_hits, m = srv.stat.keyspace_misses;
    run("DEL c x");
    run("EXPIRE a 100");
    run("PERSIST a");
    run("RENAME a b");
    run("MOVE b 1");
    run("KEYS *");
    run("SCAN 0");
    run("RANDOMKEY");
    cr_assert_eq(srv.stat.keyspace_hits, h);
    cr_assert_eq(srv.stat.keyspace_misses, m);
    buf_clear(&C->out);
}

Test(cmd_keys, no_op_commands_change_nothing)
{
    EXPECT("SET a 1", "+OK\r\n");
    long long d = srv.dirty;
    run("DEL nokey");
    run("EXPIRE nokey 10");
    run("EXPIRE a 10 XX");
    run("PERSIST a");
    run("RENAME a a");
    run("RENAMENX a a");
    run("MOVE nokey 1");
    run("COPY nokey b");
    run("EXISTS a");
    run("TOUCH a");
    cr_assert_eq(srv.dirty, d);
    buf_clear(&C->out);
}

static void check_keys(const char *line, int want_n, const int *want)
{
    resp_arg_t argv[16];
    int argc = 0;
    char copy[256];
    snprintf(copy, sizeof(copy), "%s", line);
    for (char *t = strtok(copy, " "); t; t = strtok(NULL, " ")) {
        argv[argc].ptr = t;
        argv[argc++].len = strlen(t);
    }
    const command_t *cmd = command_lookup(&argv[0]);
    cr_assert_not_null(cmd, "%s", line);
    if (cmd->subcommands) cmd = command_lookup_sub(cmd, &argv[1]);
    int pos[16];
    int n = command_get_keys(cmd, argc, argv, pos, 16);
    cr_assert_eq(n, want_n, "%s: %d keys", line, n);
    for (int i = 0; i < n; i++) cr_assert_eq(pos[i], want[i], "%s: key %d", line, i);
}

Test(cmd_keys, key_positions_for_command_getkeys)
{
    check_keys("DEL a b c", 3, (int[]){1, 2, 3});
    check_keys("EXISTS a", 1, (int[]){1});
    check_keys("RENAME a b", 2, (int[]){1, 2});
    check_keys("COPY a b DB 1 REPLACE", 2, (int[]){1, 2});
    check_keys("MOVE a 1", 1, (int[]){1});
    check_keys("EXPIRE a 10 NX", 1, (int[]){1});
    check_keys("OBJECT ENCODING a", 1, (int[]){2});
    check_keys("KEYS *", 0, NULL);
    check_keys("SCAN 0", 0, NULL);
}

/* SCAN's COUNT at LONG_MAX walks the (small) keyspace once; 0 and negatives are refused. */
Test(cmd_keys, scan_count_extremes)
{
    EXPECT("SET a 1", "+OK\r\n");
    EXPECT("SCAN 0 COUNT 9223372036854775807", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n");
    EXPECT("SCAN 0 COUNT 0", "-ERR syntax error\r\n");
    EXPECT("SCAN 0 COUNT -1", "-ERR syntax error\r\n");
    EXPECT("SCAN 0 COUNT -9223372036854775808", "-ERR syntax error\r\n");
}

/* KEYS over a keyspace whose names pass max-reply-bytes closes the client and stops walking
 * the keyspace (it does not go on matching names for a reply no one will get). */
Test(cmd_keys, keys_past_max_reply_bytes_closes_the_client)
{
    srv.cfg.enable_debug_command = CONFIG_DEBUG_CMD_YES;
    EXPECT("DEBUG POPULATE 100000 somewhatlongprefixforkeys", "+OK\r\n");
    EXPECT("CONFIG SET max-reply-bytes 1mb", "+OK\r\n");
    harness_send(C, "KEYS *");
    cr_assert(C->flags & CLIENT_CLOSE_ASAP);
    cr_assert_eq(C->out.len, 0);
}
