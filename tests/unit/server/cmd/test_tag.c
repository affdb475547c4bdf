/* tests/unit/server/cmd/test_tag.c - server/cmd/tag.c through the socketless client: the exact
 * RESP2 and RESP3 replies of TPUT TGET TSIZE TTRUNCATE TDEL TSCORE REORG TINFO TLIST TSCAN TLEN
 * TIERS, their argument errors, WRONGTYPE both ways, the generic key commands on tags (TYPE DEL
 * EXISTS EXPIRE TTL RENAME MOVE SCAN TYPE KEYS COPY), a tag disappearing with its last blob, TSCAN
 * with full-match regexes, and tier accounting seen through TIERS and INFO tiers.
 *
 * The server runs without a loop, so file-tier plans run inline and replies come at once.
 * Tiers: "ram" (64 KiB, score 0.1) and "disk" (a 192 KiB file tier in a temp dir, score 0). */
#define _GNU_SOURCE
#include "common/alloc.h"
#include "common/buf.h"
#include "config/config.h"
#include "server/client.h"
#include "server/command.h"
#include "server/server.h"

#include "storage/t_tag.h"
#include "tests/unit/server/harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static client_t *C;

static void start(const char *const *tiers, int ntiers)
{
    const char *dir = harness_tmpdir_make("cte-cmdtag");
    char *argv[32];
    char specs[8][256];
    int argc = 0;
    argv[argc++] = "cte-server";
    for (int i = 0; i < ntiers; i++) {
        snprintf(specs[i], sizeof(specs[i]), tiers[i], dir);
        argv[argc++] = "--tier";
        argv[argc++] = specs[i];
    }
    argv[argc++] = "--max-blob-size";
    argv[argc++] = "1mb";
    C = harness_server_start(argc, argv);
}

static void setup(void)
{
    static const char *const tiers[] = {"ram:ram:64kb::0.1", "disk:file:192kb:%s/disk:0"};
    start(tiers, 2);
}

static void setup3(void)
{
    static const char *const tiers[] = {"ram:ram:16kb", "ssd:file:64kb:%s/ssd",
                                        "disk:file:64kb:%s/disk"};
    start(tiers, 3);
}

static void teardown(void)
{
    harness_server_stop();
    harness_tmpdir_remove();
}

TestSuite(cmd_tag, .init = setup, .fini = teardown, .timeout = 20);
TestSuite(cmd_tag3, .init = setup3, .fini = teardown, .timeout = 20);

/* ---- sending commands, reading replies ---- */

/* Sends argv as one multibulk request; returns the reply bytes (C->out, until the next call). */
static const char *sendv(int argc, const char *const *argv, const size_t *lens, size_t *outlen)
{
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        buf_printf(&b, "$%zu\r\n", lens[i]);
        buf_append(&b, argv[i], lens[i]);
        buf_append(&b, "\r\n", 2);
    }
    buf_clear(&C->out);
    client_feed(C, b.data, b.len);
    buf_deinit(&b);
    buf_append(&C->out, "", 1); /* NUL for string compares; not counted below */
    C->out.len--;
    *outlen = C->out.len;
    return C->out.data ? C->out.data : "";
}

/* Splits a line into words (a word in double quotes may hold spaces or be empty) and sends it. */
static const char *cmdn(const char *line, size_t *outlen)
{
    const char *argv[64];
    size_t lens[64];
    int argc = 0;
    for (const char *p = line; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        cr_assert(argc < 64);
        if (*p == '"') {
            const char *e = strchr(p + 1, '"');
            cr_assert(e, "unterminated quote in %s", line);
            argv[argc] = p + 1;
            lens[argc++] = (size_t)(e - p - 1);
            p = e + 1;
        } else {
            size_t n = strcspn(p, " ");
            argv[argc] = p;
            lens[argc++] = n;
            p += n;
        }
    }
    return sendv(argc, argv, lens, outlen);
}

static char *escaped(const char *p, size_t n)
{
    return harness_escaped(p, n);
}

/* Length of one well-formed RESP2/RESP3 reply at p[0..len), or -1 if it is not one. */
static long resp_len(const char *p, size_t len)
{
    const char *e = memchr(p, '\r', len);
    if (!e || (size_t)(e - p) + 2 > len || e[1] != '\n' || e == p) return -1;
    long head = (long)(e - p) + 2;
    char t = p[0];
    long long n = strtoll(p + 1, NULL, 10);
    switch (t) {
    case '+':
    case '-':
    case ':':
    case ',':
    case '#':
    case '_':
    case '(':
        return head;
    case '$':
    case '=':
    case '!':
        if (n < 0) return head;
        if ((size_t)(head + n + 2) > len || p[head + n] != '\r' || p[head + n + 1] != '\n')
            return -1;
        return head + (long)n + 2;
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {
        if (n < 0) return head;
        long pos = head, items = t == '%' || t == '|' ? 2 * n : n;
        for (long i = 0; i < items; i++) {
            long k = resp_len(p + pos, len - (size_t)pos);
            if (k < 0) return -1;
            pos += k;
        }
        return pos;
    }
    default:
        return -1;
    }
}

/* Sends line and checks the reply bytes are exactly want. */
static void expect(const char *line, const char *want)
{
    size_t n;
    const char *got = cmdn(line, &n);
    cr_assert(n == strlen(want) && memcmp(got, want, n) == 0, "%s: got '%s', want '%s'", line,
              escaped(got, n), escaped(want, strlen(want)));
}

static void expect_n(const char *line, const char *want, size_t wn)
{
    size_t n;
    const char *got = cmdn(line, &n);
    cr_assert(n == wn && memcmp(got, want, n) == 0, "%s: got '%s', want '%s'", line,
              escaped(got, n), escaped(want, wn));
}

/* Sends line and checks the reply is exactly one well-formed RESP reply; returns it. */
static const char *one(const char *line)
{
    size_t n;
    const char *got = cmdn(line, &n);
    long k = resp_len(got, n);
    cr_assert(k >= 0 && (size_t)k == n, "%s: not exactly one reply (%ld of %zu bytes): '%s'", line,
              k, n, escaped(got, n));
    return got;
}

static void expect_prefix(const char *line, const char *prefix)
{
    size_t n;
    const char *got = cmdn(line, &n);
    cr_assert(n >= strlen(prefix) && memcmp(got, prefix, strlen(prefix)) == 0,
              "%s: got '%s', want '%s...'", line, escaped(got, n), escaped(prefix, strlen(prefix)));
    cr_assert_eq(resp_len(got, n), (long)n, "%s: not one reply: '%s'", line, escaped(got, n));
}

/* An error reply that starts with prefix and mentions word (NULL: any). */
static void expect_err(const char *line, const char *prefix, const char *word)
{
    size_t n;
    const char *got = cmdn(line, &n);
    cr_assert(n >= 3 && got[0] == '-' && strncmp(got, prefix, strlen(prefix)) == 0 &&
                  got[n - 2] == '\r' && memchr(got, '\n', n) == got + n - 1,
              "%s: got '%s', want an error '%s...'", line, escaped(got, n), prefix);
    if (word)
        cr_assert(memmem(got, n, word, strlen(word)) != NULL, "%s: error '%s' does not name '%s'",
                  line, escaped(got, n), word);
}

/* TPUT of n bytes (pattern by seed) at offset off, with an optional score. */
static const char *tput_bytes(const char *tag, const char *blob, uint64_t off, const char *data,
                              size_t n, const char *score)
{
    char offs[32];
    snprintf(offs, sizeof(offs), "%llu", (unsigned long long)off);
    const char *argv[6] = {"TPUT", tag, blob, offs, data, score};
    size_t lens[6] = {4, strlen(tag), strlen(blob), strlen(offs), n, score ? strlen(score) : 0};
    size_t outn;
    return sendv(score ? 6 : 5, argv, lens, &outn);
}

static char *pattern(size_t n, int seed)
{
    char *p = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) p[i] = (char)(seed * 13 + i * 7 + (i >> 9));
    return p;
}

/* TGET tag blob as raw bulk payload; checks it equals want[0..n). */
static void expect_blob(const char *tag, const char *blob, const char *want, size_t n)
{
    const char *argv[3] = {"TGET", tag, blob};
    size_t lens[3] = {4, strlen(tag), strlen(blob)}, outn;
    const char *got = sendv(3, argv, lens, &outn);
    char head[32];
    int h = snprintf(head, sizeof(head), "$%zu\r\n", n);
    cr_assert(outn == (size_t)h + n + 2 && memcmp(got, head, (size_t)h) == 0 &&
                  memcmp(got + h, want, n) == 0 && memcmp(got + h + n, "\r\n", 2) == 0,
              "TGET %s %s: %zu reply bytes, want %zu bytes of payload ('%.60s')", tag, blob, outn,
              n, escaped(got, outn < 60 ? outn : 60));
}

/* A field of TIERS (RESP2) for tier i, or -1. Parses "$<len>\r\n<name>\r\n:<n>\r\n". */
static long long tiers_field(int i, const char *field)
{
    size_t n;
    const char *r = cmdn("TIERS", &n);
    cr_assert_eq(resp_len(r, n), (long)n, "TIERS is not one reply: '%s'", escaped(r, n));
    /* skip to the i-th map */
    const char *p = strchr(r, '\n') + 1;
    for (int k = 0; k < i; k++) p += resp_len(p, n - (size_t)(p - r));
    long maplen = resp_len(p, n - (size_t)(p - r));
    char key[64];
    int kl = snprintf(key, sizeof(key), "$%zu\r\n%s\r\n", strlen(field), field);
    const char *f = memmem(p, (size_t)maplen, key, (size_t)kl);
    if (!f) return -1;
    f += kl;
    if (*f != ':') return -2;
    return strtoll(f + 1, NULL, 10);
}

/* ---- TPUT TGET TSIZE TSCORE ---- */

Test(cmd_tag, tput_and_tget_replies_resp2)
{
    expect("TPUT t b 0 hello", ":5\r\n");
    expect("TGET t b", "$5\r\nhello\r\n");
    expect("TGET t b 1", "$4\r\nello\r\n");
    expect("TGET t b 1 3", "$3\r\nell\r\n");
    expect("TGET t b 1 0", "$0\r\n\r\n");
    expect("TGET t b 5", "$0\r\n\r\n");
    expect("TGET t b 100 10", "$0\r\n\r\n");
    expect("TGET t b 0 1000", "$5\r\nhello\r\n");
    expect("TGET t nope", "$-1\r\n");
    expect("TGET nosuchtag b", "$-1\r\n");
    expect("TSIZE t b", ":5\r\n");
    expect("TSIZE t nope", "$-1\r\n");
    expect("TSIZE nosuchtag b", "$-1\r\n");
    expect("TSCORE t b", "$1\r\n1\r\n");
    expect("TSCORE t nope", "$-1\r\n");
    expect("TPUT t b 7 xy", ":9\r\n");
    expect_n("TGET t b", "$9\r\nhello\0\0xy\r\n", 15);
    expect("TPUT t b 1 EL", ":9\r\n");
    expect_n("TGET t b", "$9\r\nhELlo\0\0xy\r\n", 15);
    expect("TPUT t c 0 v 0.25", ":1\r\n");
    expect("TSCORE t c", "$4\r\n0.25\r\n");
    expect("TPUT t c 0 w 0", ":1\r\n");
    expect("TSCORE t c", "$1\r\n0\r\n");
    expect("TPUT t e 0 \"\"", ":0\r\n");
    expect("TSIZE t e", ":0\r\n");
    expect("TGET t e", "$0\r\n\r\n");
    expect("TLEN t", ":3\r\n");
}

Test(cmd_tag, tget_edge_ranges_on_the_file_tier)
{
    expect("TPUT t f 0 0123456789 0", ":10\r\n");
    cr_assert(strstr(one("TINFO t f"), "$4\r\ndisk\r\n") != NULL);
    expect("TGET t f 0 0", "$0\r\n\r\n");
    expect("TGET t f 2 0", "$0\r\n\r\n");
    expect("TGET t f 9 0", "$0\r\n\r\n");
    expect("TGET t f 10", "$0\r\n\r\n");
    expect("TGET t f 11 5", "$0\r\n\r\n");
    expect("TGET t f 9", "$1\r\n9\r\n");
    expect("TGET t f 3 4", "$4\r\n3456\r\n");
    expect("TGET t f 0 100", "$10\r\n0123456789\r\n");
    expect("PING", "+PONG\r\n");
}

Test(cmd_tag, tput_and_tget_replies_resp3)
{
    one("HELLO 3");
    expect("TPUT t b 0 hello", ":5\r\n");
    expect("TGET t b", "$5\r\nhello\r\n");
    expect("TGET t nope", "_\r\n");
    expect("TGET nosuchtag b", "_\r\n");
    expect("TSIZE t nope", "_\r\n");
    expect("TSCORE t b", ",1\r\n");
    expect("TSCORE t nope", "_\r\n");
    expect("TPUT t c 0 v 0.5", ":1\r\n");
    expect("TSCORE t c", ",0.5\r\n");
    expect("REORG t nope 0.5", "_\r\n");
    expect("TINFO t nope", "_\r\n");
}

Test(cmd_tag, an_empty_tput_past_the_end_writes_nothing)
{
    /* "An empty data creates the blob if it is missing and writes nothing." */
    expect("TPUT t b 0 abc", ":3\r\n");
    expect("TPUT t b 100 \"\"", ":3\r\n");
    expect("TSIZE t b", ":3\r\n");
    expect("TPUT t n 50 \"\"", ":0\r\n");
    expect("TSIZE t n", ":0\r\n");
}

Test(cmd_tag, binary_blobs_round_trip)
{
    static const char data[] = "a\r\nb\0c\r\n$3\r\n*1\r\n\xff\x00\x01";
    size_t n = sizeof(data) - 1;
    expect_n("TLEN t", ":0\r\n", 4);
    const char *r = tput_bytes("t", "bin", 0, data, n, NULL);
    char want[16];
    snprintf(want, sizeof(want), ":%zu\r\n", n);
    cr_assert_str_eq(r, want);
    expect_blob("t", "bin", data, n);
    /* the same on the file tier */
    r = tput_bytes("t", "fbin", 0, data, n, "0");
    cr_assert_str_eq(r, want);
    expect_blob("t", "fbin", data, n);
    /* binary blob names */
    const char *argv[5] = {"TPUT", "t", "n\r\n\0x", "0", "v"};
    size_t lens[5] = {4, 1, 5, 1, 1}, outn;
    cr_assert_str_eq(sendv(5, argv, lens, &outn), ":1\r\n");
    const char *gv[3] = {"TGET", "t", "n\r\n\0x"};
    size_t gl[3] = {4, 1, 5};
    cr_assert_str_eq(sendv(3, gv, gl, &outn), "$1\r\nv\r\n");
    expect("TLEN t", ":3\r\n");
}

Test(cmd_tag, big_blobs_on_the_file_tier_and_split_across_tiers)
{
    size_t n = 150 * 1024; /* fits neither the 64 KiB RAM tier nor the 192 KiB file tier half */
    char *d = pattern(n, 3);
    cr_assert_str_eq(tput_bytes("t", "f", 0, d, 100 * 1024, "0"), ":102400\r\n");
    expect_blob("t", "f", d, 100 * 1024);
    expect_prefix("TINFO t f", "*16\r\n");
    cr_assert_eq(tiers_field(1, "used"), 100 * 1024);
    cr_assert_str_eq(tput_bytes("t", "split", 0, d, 150 * 1024, NULL), ":153600\r\n");
    expect_blob("t", "split", d, 150 * 1024);
    /* the split blob lists both tiers */
    const char *r = one("TINFO t split");
    cr_assert(strncmp(r, "*18\r\n", 5) == 0, "TINFO of a split blob: '%s'", escaped(r, strlen(r)));
    cr_assert(strstr(r, "$5\r\ntiers\r\n*2\r\n$3\r\nram\r\n$4\r\ndisk\r\n") != NULL, "%s",
              escaped(r, strlen(r)));
    one("HELLO 3");
    r = one("TINFO t split");
    cr_assert(strncmp(r, "%9\r\n", 4) == 0, "%s", escaped(r, strlen(r)));
    free(d);
}

/* ---- TTRUNCATE TDEL TLEN, tags come and go with their blobs ---- */

Test(cmd_tag, ttruncate_shrinks_grows_and_creates)
{
    expect("TPUT t b 0 hello", ":5\r\n");
    expect("TTRUNCATE t b 3", ":3\r\n");
    expect("TGET t b", "$3\r\nhel\r\n");
    expect("TTRUNCATE t b 6", ":6\r\n");
    expect_n("TGET t b", "$6\r\nhel\0\0\0\r\n", 12);
    expect("TTRUNCATE t b 0", ":0\r\n");
    expect("TGET t b", "$0\r\n\r\n");
    expect("TTRUNCATE t new 4", ":4\r\n");
    expect_n("TGET t new", "$4\r\n\0\0\0\0\r\n", 10);
    expect("TTRUNCATE u x 0", ":0\r\n");
    expect("TYPE u", "+tag\r\n");
    expect("TLEN u", ":1\r\n");
    /* on the file tier */
    expect("TPUT t f 0 0123456789 0", ":10\r\n");
    expect("TTRUNCATE t f 4", ":4\r\n");
    expect("TTRUNCATE t f 8", ":8\r\n");
    expect_n("TGET t f", "$8\r\n0123\0\0\0\0\r\n", 14);
    expect_err("TTRUNCATE t b -1", "-ERR", "size");
    expect_err("TTRUNCATE t b x", "-ERR value is not an integer or out of range", NULL);
    expect_err("TTRUNCATE t b 1048577", "-ERR", "max");
    expect("TSIZE t b", ":0\r\n");
}

Test(cmd_tag, tdel_counts_and_the_last_blob_takes_the_tag_with_it)
{
    expect("TPUT t a 0 1", ":1\r\n");
    expect("TPUT t b 0 2", ":1\r\n");
    expect("TPUT t c 0 3 0", ":1\r\n");
    expect("TLEN t", ":3\r\n");
    expect("TDEL t a nope a", ":1\r\n");
    expect("TLEN t", ":2\r\n");
    expect("EXISTS t", ":1\r\n");
    expect("TDEL t b c", ":2\r\n");
    expect("EXISTS t", ":0\r\n");
    expect("TYPE t", "+none\r\n");
    expect("TLEN t", ":0\r\n");
    expect("TLIST t", "*0\r\n");
    expect("TDEL t a", ":0\r\n");
    expect("TDEL nosuch a b", ":0\r\n");
    expect("DBSIZE", ":0\r\n");
    cr_assert_eq(tiers_field(0, "used"), 0);
    cr_assert_eq(tiers_field(1, "used"), 0);
    cr_assert_eq(tiers_field(0, "blobs"), 0);
    cr_assert_eq(tiers_field(1, "blobs"), 0);
}

Test(cmd_tag, refused_writes_leave_no_empty_tag)
{
    expect_err("TPUT t b 1048576 x", "-ERR", "max");
    expect("EXISTS t", ":0\r\n");
    expect_err("TTRUNCATE t b 2000000", "-ERR", "max");
    expect("EXISTS t", ":0\r\n");
    /* OOM: 64 KiB RAM + 192 KiB file = 256 KiB in all */
    size_t n = 300 * 1024;
    char *d = pattern(n, 1);
    const char *r = tput_bytes("t", "b", 0, d, n, NULL);
    cr_assert(strncmp(r, "-OOM ", 5) == 0, "%s", escaped(r, strlen(r)));
    expect("EXISTS t", ":0\r\n");
    expect("DBSIZE", ":0\r\n");
    cr_assert_eq(tiers_field(0, "used"), 0);
    cr_assert_eq(tiers_field(1, "used"), 0);
    /* an OOM on an existing tag leaves it and its blobs alone */
    expect("TPUT t keep 0 abc", ":3\r\n");
    r = tput_bytes("t", "b", 0, d, n, NULL);
    cr_assert(strncmp(r, "-OOM ", 5) == 0, "%s", escaped(r, strlen(r)));
    expect("TLEN t", ":1\r\n");
    expect("TSIZE t b", "$-1\r\n");
    expect("TGET t keep", "$3\r\nabc\r\n");
    free(d);
}

/* ---- REORG, TINFO ---- */

Test(cmd_tag, reorg_replies_the_tier_and_moves_the_bytes)
{
    char *d = pattern(20000, 5);
    cr_assert_str_eq(tput_bytes("t", "b", 0, d, 20000, NULL), ":20000\r\n");
    cr_assert(strstr(one("TINFO t b"), "$4\r\ntier\r\n$3\r\nram\r\n") != NULL);
    expect("REORG t b 0", "$4\r\ndisk\r\n");
    expect("TSCORE t b", "$1\r\n0\r\n");
    cr_assert(strstr(one("TINFO t b"), "$4\r\ntier\r\n$4\r\ndisk\r\n") != NULL);
    expect_blob("t", "b", d, 20000);
    cr_assert_eq(tiers_field(0, "used"), 0);
    cr_assert_eq(tiers_field(1, "used"), 20480);
    cr_assert_eq(tiers_field(1, "blobs"), 1);
    expect("REORG t b 0.5", "$3\r\nram\r\n");
    expect_blob("t", "b", d, 20000);
    cr_assert_eq(tiers_field(0, "used"), 20000);
    cr_assert_eq(tiers_field(1, "used"), 0);
    expect("REORG t b 0.5", "$3\r\nram\r\n"); /* no move needed */
    expect("REORG t nope 0.5", "$-1\r\n");
    expect("REORG nosuch b 0.5", "$-1\r\n");
    expect_err("REORG t b 1.5", "-ERR", "score");
    expect_err("REORG t b -0.1", "-ERR", "score");
    expect_err("REORG t b x", "-ERR", "score");
    expect_err("REORG t b nan", "-ERR", "score");
    /* an empty blob */
    expect("TPUT t e 0 \"\"", ":0\r\n");
    one("REORG t e 0");
    expect("TSCORE t e", "$1\r\n0\r\n");
    free(d);
}

Test(cmd_tag3, reorg_reply_names_the_tier_the_blob_really_went_to)
{
    /* ram 16 KiB (score 1), ssd 64 KiB (0.5), disk 64 KiB (0). RAM is full of a blob as hot,
     * so REORG 1.0 of a disk blob cannot go to RAM and lands on ssd, the next tier in
     * placement order: the reply must name the tier the blob is on. */
    char *d = pattern(16 * 1024, 1);
    cr_assert_str_eq(tput_bytes("t", "hot", 0, d, 16 * 1024, "1"), ":16384\r\n");
    cr_assert_str_eq(tput_bytes("t", "x", 0, d, 8000, "0"), ":8000\r\n");
    cr_assert(strstr(one("TINFO t x"), "$4\r\ndisk\r\n") != NULL);
    const char *r = one("REORG t x 1");
    char got[64];
    snprintf(got, sizeof(got), "%s", r);
    const char *info = one("TINFO t x");
    const char *where = strstr(info, "$4\r\ntier\r\n") + 10;
    cr_assert(strncmp(got, where, strlen(got)) == 0, "REORG replied '%s' but TINFO says '%.12s'",
              escaped(got, strlen(got)), escaped(where, 12));
    expect_blob("t", "x", d, 8000);
    free(d);
}

Test(cmd_tag, tinfo_map_in_resp3_and_flat_array_in_resp2)
{
    expect("TPUT t b 0 hello", ":5\r\n");
    expect("TGET t b", "$5\r\nhello\r\n");
    const char *r = one("TINFO t b");
    /* *16 size 5 score 1 tier ram ctime mtime atime reads 1 writes 1 */
    cr_assert(strncmp(r,
                      "*16\r\n$4\r\nsize\r\n:5\r\n$5\r\nscore\r\n$1\r\n1\r\n$4\r\ntier\r\n$3\r\n"
                      "ram\r\n$5\r\nctime\r\n:",
                      strlen("*16\r\n$4\r\nsize\r\n:5\r\n$5\r\nscore\r\n$1\r\n1\r\n$4\r\ntier\r\n$3"
                             "\r\nram\r\n$5\r\nctime\r\n:")) == 0,
              "%s", escaped(r, strlen(r)));
    cr_assert(strstr(r, "$5\r\nreads\r\n:1\r\n$6\r\nwrites\r\n:1\r\n") != NULL, "%s",
              escaped(r, strlen(r)));
    cr_assert(strstr(r, "$5\r\nmtime\r\n:") && strstr(r, "$5\r\natime\r\n:"));
    long long ctime = strtoll(strstr(r, "ctime\r\n:") + 8, NULL, 10);
    cr_assert_gt(ctime, 1600000000000LL, "ctime %lld is not Unix ms", ctime);
    one("HELLO 3");
    r = one("TINFO t b");
    cr_assert(strncmp(r,
                      "%8\r\n$4\r\nsize\r\n:5\r\n$5\r\nscore\r\n,1\r\n$4\r\ntier\r\n$3\r\nram\r\n",
                      strlen("%8\r\n$4\r\nsize\r\n:5\r\n$5\r\nscore\r\n,1\r\n$4\r\ntier\r\n$3\r\n"
                             "ram\r\n")) == 0,
              "%s", escaped(r, strlen(r)));
    expect_err("TINFO t", "-ERR wrong number of arguments for 'tinfo' command", NULL);
}

Test(cmd_tag, tmeta_keeps_times_up_to_2_47_ms_and_counters_saturate_at_2_32)
{
    expect("TPUT t b 0 x", ":1\r\n");
    expect("TMETA t b 1 2 140737488355327 4294967295 5000000000", "+OK\r\n");
    const char *r = one("TINFO t b");
    cr_assert(strstr(r, "$5\r\nctime\r\n:1\r\n$5\r\nmtime\r\n:2\r\n$5\r\natime\r\n"
                        ":140737488355327\r\n$5\r\nreads\r\n:4294967295\r\n$6\r\nwrites\r\n"
                        ":4294967295\r\n"),
              "%s", escaped(r, strlen(r)));
    /* at the top a counter stays there; reads and writes still set the times */
    expect("TGET t b", "$1\r\nx\r\n");
    expect("TPUT t b 0 y", ":1\r\n");
    r = one("TINFO t b");
    cr_assert(strstr(r, "$5\r\nreads\r\n:4294967295\r\n$6\r\nwrites\r\n:4294967295\r\n"),
              "%s", escaped(r, strlen(r)));
    cr_assert(!strstr(r, ":140737488355327\r\n"), "%s", escaped(r, strlen(r)));
    for (int i = 0; i < 3; i++) {
        char cmd[128];
        long long v[3] = {5, 5, 5};
        v[i] = 140737488355328LL;
        snprintf(cmd, sizeof cmd, "TMETA t b %lld %lld %lld 1 1", v[0], v[1], v[2]);
        expect_err(cmd, "-ERR time is out of range", NULL);
    }
    r = one("TINFO t b");
    cr_assert(strstr(r, "$5\r\nctime\r\n:1\r\n"), "%s", escaped(r, strlen(r)));
}

/* ---- TLIST TSCAN TLEN ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The bulk strings of a flat array reply (after skipping skip bulk items), sorted; count in *n. */
static char **bulks(const char *r, int skip_header_items, int *n)
{
    size_t len = strlen(r);
    const char *p = r;
    for (int k = 0; k < skip_header_items; k++) p += resp_len(p, len - (size_t)(p - r));
    cr_assert(*p == '*', "%s", escaped(p, strlen(p)));
    int cnt = atoi(p + 1);
    p = strchr(p, '\n') + 1;
    char **v = calloc((size_t)cnt + 1, sizeof(char *));
    for (int i = 0; i < cnt; i++) {
        cr_assert(*p == '$');
        int l = atoi(p + 1);
        p = strchr(p, '\n') + 1;
        v[i] = strndup(p, (size_t)l);
        p += l + 2;
    }
    qsort(v, (size_t)cnt, sizeof(char *), cmp_str);
    *n = cnt;
    return v;
}

static void free_bulks(char **v, int n)
{
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

Test(cmd_tag, tlist_names_every_blob)
{
    expect("TLIST t", "*0\r\n");
    expect("TPUT t b2 0 x", ":1\r\n");
    expect("TPUT t b1 0 x 0", ":1\r\n");
    expect("TPUT t b3 0 \"\"", ":0\r\n");
    int n;
    char **v = bulks(one("TLIST t"), 0, &n);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(v[0], "b1");
    cr_assert_str_eq(v[1], "b2");
    cr_assert_str_eq(v[2], "b3");
    free_bulks(v, n);
    expect("TLEN t", ":3\r\n");
    expect("TLEN nosuch", ":0\r\n");
    expect_err("TLIST", "-ERR wrong number of arguments for 'tlist' command", NULL);
    expect_err("TLEN t x", "-ERR wrong number of arguments for 'tlen' command", NULL);
}

/* Runs TSCAN to the end with extra arguments; returns every name seen (sorted, with
 * duplicates) and checks each reply's shape. */
static char **tscan_all(const char *tag, const char *extra, int *total, int *calls)
{
    char **all = NULL;
    int nall = 0;
    char cursor[32] = "0";
    *calls = 0;
    do {
        char line[512];
        snprintf(line, sizeof(line), "TSCAN %s %s %s", tag, cursor, extra);
        const char *r = one(line);
        cr_assert(strncmp(r, "*2\r\n$", 5) == 0, "%s: %s", line, escaped(r, strlen(r)));
        const char *c = strchr(r + 4, '\n') + 1;
        int cl = atoi(r + 5);
        snprintf(cursor, sizeof(cursor), "%.*s", cl, c);
        int n;
        /* names: the array after the cursor bulk */
        const char *arr = c + cl + 2;
        char **names = bulks(arr, 0, &n);
        all = realloc(all, sizeof(char *) * (size_t)(nall + n + 1));
        for (int i = 0; i < n; i++) all[nall++] = names[i];
        free(names);
        (*calls)++;
        cr_assert_lt(*calls, 10000, "TSCAN never returns cursor 0");
    } while (strcmp(cursor, "0") != 0);
    qsort(all, (size_t)nall, sizeof(char *), cmp_str);
    *total = nall;
    return all;
}

Test(cmd_tag, tscan_covers_every_blob_with_count_and_full_match_regex)
{
    char line[128];
    for (int i = 0; i < 300; i++) {
        snprintf(line, sizeof(line), "TPUT big %s%d 0 x", i % 3 == 0 ? "a" : "ba", i);
        one(line);
    }
    expect("TLEN big", ":300\r\n");
    int n, calls;
    char **all = tscan_all("big", "COUNT 7", &n, &calls);
    /* every blob at least once (SCAN's guarantee); no changes meanwhile: exactly once */
    cr_assert_eq(n, 300, "TSCAN saw %d names", n);
    for (int i = 1; i < n; i++) cr_assert_str_neq(all[i - 1], all[i], "%s twice", all[i]);
    cr_assert_gt(calls, 5, "COUNT 7 over 300 blobs took %d calls", calls);
    free_bulks(all, n);
    /* MATCH is a full-match PCRE2 regex: a\d+ matches a0 a3 ... but not ba1 */
    all = tscan_all("big", "MATCH a\\d+ COUNT 50", &n, &calls);
    cr_assert_eq(n, 100, "MATCH a\\d+ gave %d names", n);
    for (int i = 0; i < n; i++) cr_assert_eq(all[i][0], 'a', "%s", all[i]);
    free_bulks(all, n);
    all = tscan_all("big", "MATCH a1", &n, &calls);
    cr_assert_eq(n, 0, "MATCH a1 must not match a12, a15 ... (full match): %d", n);
    free_bulks(all, n);
    all = tscan_all("big", "MATCH b?a1.*", &n, &calls);
    cr_assert_gt(n, 10);
    free_bulks(all, n);
    all = tscan_all("big", "MATCH a12|a15 COUNT 1000", &n, &calls);
    cr_assert_eq(n, 2, "alternation must be anchored as a whole: %d", n);
    free_bulks(all, n);
    /* one call with a big COUNT returns everything and cursor 0 */
    const char *r = one("TSCAN big 0 COUNT 1000");
    cr_assert(strncmp(r, "*2\r\n$1\r\n0\r\n*300\r\n", 17) == 0, "%.40s", escaped(r, 40));
}

Test(cmd_tag, tscan_returns_every_stable_blob_while_the_tag_grows_and_shrinks)
{
    char line[128];
    for (int i = 0; i < 60; i++) {
        snprintf(line, sizeof(line), "TPUT t s%d 0 x", i);
        one(line);
    }
    int seen[60] = {0}, added = 0, calls = 0;
    char cursor[32] = "0";
    do {
        snprintf(line, sizeof(line), "TSCAN t %s COUNT 4", cursor);
        const char *r = one(line);
        const char *c = strchr(r + 4, '\n') + 1;
        int cl = atoi(r + 5);
        snprintf(cursor, sizeof(cursor), "%.*s", cl, c);
        int n;
        char **v = bulks(c + cl + 2, 0, &n);
        for (int i = 0; i < n; i++)
            if (v[i][0] == 's') seen[atoi(v[i] + 1)]++;
        free_bulks(v, n);
        /* the table grows (rehashes) and shrinks between the calls */
        for (int k = 0; k < 25; k++, added++) {
            snprintf(line, sizeof(line), "TPUT t x%d 0 y", added);
            one(line);
        }
        if (added > 100)
            for (int k = added - 100; k < added - 75; k++) {
                snprintf(line, sizeof(line), "TDEL t x%d", k);
                one(line);
            }
        cr_assert_lt(++calls, 2000);
    } while (strcmp(cursor, "0") != 0);
    for (int i = 0; i < 60; i++) cr_assert_geq(seen[i], 1, "s%d was never returned", i);
}

Test(cmd_tag, tscan_errors_and_missing_tag)
{
    expect("TPUT t a 0 x", ":1\r\n");
    expect("TSCAN nosuch 0", "*2\r\n$1\r\n0\r\n*0\r\n");
    expect_err("TSCAN t 0 MATCH (", "-ERR invalid regex: ", NULL);
    expect_err("TSCAN t 0 MATCH [a", "-ERR invalid regex: ", NULL);
    expect_err("TSCAN t x", "-ERR invalid cursor", NULL);
    expect_err("TSCAN t 0 COUNT x", "-ERR value is not an integer or out of range", NULL);
    expect_err("TSCAN t 0 COUNT 0", "-ERR syntax error", NULL);
    expect_err("TSCAN t 0 COUNT", "-ERR syntax error", NULL);
    expect_err("TSCAN t 0 FOO 1", "-ERR syntax error", NULL);
    expect_err("TSCAN t", "-ERR wrong number of arguments for 'tscan' command", NULL);
    expect("TSCAN t 0 MATCH a", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n");
    expect("SET s v", "+OK\r\n");
    expect_err("TSCAN s 0", "-WRONGTYPE", NULL);
}

/* ---- argument errors ---- */

Test(cmd_tag, argument_errors_follow_redis)
{
    const char *notint = "-ERR value is not an integer or out of range\r\n";
    expect("TPUT t b abc x", notint);
    expect("TPUT t b 1.5 x", notint);
    expect("TPUT t b \"\" x", notint);
    expect("TPUT t b 99999999999999999999 x", notint);
    expect("TGET t b x", notint);
    expect("TGET t b 0 x", notint);
    expect_err("TPUT t b -1 x", "-ERR", "offset");
    expect_err("TGET t b -1", "-ERR", "offset");
    expect_err("TGET t b 0 -1", "-ERR", "count");
    expect_err("TPUT t b 0 x 1.01", "-ERR", "score");
    expect_err("TPUT t b 0 x -0.5", "-ERR", "score");
    expect_err("TPUT t b 0 x abc", "-ERR", "score");
    expect_err("TPUT t b 0 x inf", "-ERR", "score");
    expect_err("TPUT t b 0 x nan", "-ERR", "score");
    expect_err("TPUT t b 0 x \"\"", "-ERR", "score");
    expect_err("TPUT t b 0 x 0.5 extra", "-ERR syntax error", NULL);
    expect_err("TGET t b 0 1 extra", "-ERR syntax error", NULL);
    expect_err("TPUT t b 1048576 x", "-ERR", "max");
    expect_err("TPUT t b 9223372036854775807 x", "-ERR", "max");
    expect_err("TPUT t b 9223372036854775806 xy", "-ERR", "max"); /* offset + length overflows */
    expect("TPUT t b 18446744073709551615 x", notint);
    expect("TPUT t b -9223372036854775808 x", "-ERR offset is negative\r\n");
    expect("TTRUNCATE t b -9223372036854775808", "-ERR size is negative\r\n");
    expect_err("TTRUNCATE t b 9223372036854775807", "-ERR", "max");
    expect("EXISTS t", ":0\r\n");
    /* edge values that are fine */
    expect("TPUT t b 0 x 1", ":1\r\n");
    expect("TPUT t b 0 x 0", ":1\r\n");
    expect("TPUT t b 200000 y", ":200001\r\n"); /* split over both tiers */
    expect("TGET t b 9223372036854775807", "$0\r\n\r\n");
    expect("TGET t b 200000 9223372036854775807", "$1\r\ny\r\n");
    expect("TGET t b 9223372036854775807 9223372036854775807", "$0\r\n\r\n");
    expect("TGET t b -9223372036854775808", "-ERR offset is negative\r\n");
    expect("TGET t b 0 -9223372036854775808", "-ERR count is negative\r\n");
    expect_n("TGET t b 199999 2", "$2\r\n\0y\r\n", 8);
    expect_n("TGET t b 65535 2", "$2\r\n\0\0\r\n", 8);
}

Test(cmd_tag, arity_errors_name_the_command)
{
    const char *cases[][2] = {
        {"TPUT t b 0", "tput"},     {"TPUT t", "tput"},       {"TGET t", "tget"},
        {"TSIZE t", "tsize"},       {"TSIZE t b c", "tsize"}, {"TTRUNCATE t b", "ttruncate"},
        {"TDEL t", "tdel"},         {"TSCORE t", "tscore"},   {"REORG t b", "reorg"},
        {"REORG t b 1 2", "reorg"}, {"TINFO t b c", "tinfo"}, {"TLIST", "tlist"},
        {"TSCAN t", "tscan"},       {"TLEN", "tlen"},         {"TIERS x", "tiers"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char want[128];
        snprintf(want, sizeof(want), "-ERR wrong number of arguments for '%s' command\r\n",
                 cases[i][1]);
        expect(cases[i][0], want);
    }
}

Test(cmd_tag, wrongtype_both_ways)
{
    const char *wt = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
    expect("SET s v", "+OK\r\n");
    const char *tagcmds[] = {"TPUT s b 0 x", "TGET s b",   "TSIZE s b",     "TTRUNCATE s b 1",
                             "TDEL s b",     "TSCORE s b", "REORG s b 0.5", "TINFO s b",
                             "TLIST s",      "TSCAN s 0",  "TLEN s"};
    for (size_t i = 0; i < sizeof(tagcmds) / sizeof(tagcmds[0]); i++) expect(tagcmds[i], wt);
    expect("GET s", "$1\r\nv\r\n");
    expect("HSET h f v", ":1\r\n");
    expect("TPUT h b 0 x", wt);
    expect("TPUT t b 0 x", ":1\r\n");
    const char *others[] = {"GET t",          "APPEND t x",     "STRLEN t", "INCR t",
                            "SETRANGE t 0 x", "GETRANGE t 0 1", "HGET t f", "HSET t f v",
                            "LPUSH t x",      "LLEN t",         "SADD t x", "SMEMBERS t",
                            "ZADD t 1 x",     "ZCARD t",        "GETDEL t", "BITCOUNT t",
                            "LRANGE t 0 1",   "HGETALL t",      "SCARD t",  "SUNION t",
                            "ZRANGE t 0 1",   "SINTERSTORE x t"};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) expect(others[i], wt);
    expect("TGET t b", "$1\r\nx\r\n");
    expect("TYPE t", "+tag\r\n");
    expect("EXISTS x", ":0\r\n");
    /* RENAME of a string onto a tag replaces it */
    expect("TPUT t2 b 0 0123456789 0", ":10\r\n");
    expect("RENAME s t2", "+OK\r\n");
    expect("TYPE t2", "+string\r\n");
    cr_assert_eq(tiers_field(1, "used"), 0);
    cr_assert_eq(tiers_field(1, "blobs"), 0);
    /* SET overwrites any type, as in Redis; the blob bytes go back to their tier */
    expect("SET t v", "+OK\r\n");
    expect("TYPE t", "+string\r\n");
    cr_assert_eq(tiers_field(0, "used"), 0);
    cr_assert_eq(tiers_field(0, "blobs"), 0);
}

/* ---- the generic key commands on tags ---- */

Test(cmd_tag, key_commands_work_on_tags)
{
    expect("TPUT t b 0 hello", ":5\r\n");
    expect("TPUT t f 0 filedata 0", ":8\r\n");
    expect("TYPE t", "+tag\r\n");
    expect("EXISTS t", ":1\r\n");
    expect("EXPIRE t 100", ":1\r\n");
    expect("TTL t", ":100\r\n");
    expect("TPUT t g 0 x", ":1\r\n"); /* writes keep the TTL, as HSET does */
    expect("TTRUNCATE t g 0", ":0\r\n");
    expect("TDEL t g", ":1\r\n");
    expect("TTL t", ":100\r\n");
    expect("PERSIST t", ":1\r\n");
    expect("TTL t", ":-1\r\n");
    expect("RENAME t u", "+OK\r\n");
    expect("TGET t b", "$-1\r\n");
    expect("TGET u b", "$5\r\nhello\r\n");
    expect("TGET u f", "$8\r\nfiledata\r\n");
    expect("TPUT u b 5 !", ":6\r\n");
    expect("MOVE u 1", ":1\r\n");
    expect("EXISTS u", ":0\r\n");
    expect("SELECT 1", "+OK\r\n");
    expect("TGET u b", "$6\r\nhello!\r\n");
    expect("TGET u f", "$8\r\nfiledata\r\n");
    expect("SET s v", "+OK\r\n");
    expect("SCAN 0 TYPE tag", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\nu\r\n");
    expect("SCAN 0 TYPE string", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\ns\r\n");
    int n;
    char **v = bulks(one("KEYS *"), 0, &n);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(v[0], "s");
    cr_assert_str_eq(v[1], "u");
    free_bulks(v, n);
    expect("RENAMENX u s", ":0\r\n");
    expect_prefix("COPY u c", "-ERR");
    expect("EXISTS c", ":0\r\n");
    expect("TGET u b", "$6\r\nhello!\r\n");
    expect_prefix("OBJECT ENCODING u", "$");
    expect_prefix("MEMORY USAGE u", ":");
    expect("UNLINK u", ":1\r\n");
    cr_assert_eq(tiers_field(0, "used"), 0);
    cr_assert_eq(tiers_field(1, "used"), 0);
    cr_assert_eq(tiers_field(1, "blobs"), 0);
}

Test(cmd_tag, del_expire_and_flush_free_the_tiers)
{
    char *d = pattern(30000, 2);
    cr_assert_str_eq(tput_bytes("a", "r", 0, d, 30000, NULL), ":30000\r\n");
    cr_assert_str_eq(tput_bytes("a", "f", 0, d, 30000, "0"), ":30000\r\n");
    cr_assert_eq(tiers_field(0, "used"), 30000);
    cr_assert_eq(tiers_field(1, "used"), 32768);
    expect("DEL a", ":1\r\n");
    cr_assert_eq(tiers_field(0, "used"), 0);
    cr_assert_eq(tiers_field(1, "used"), 0);
    cr_assert_str_eq(tput_bytes("b", "f", 0, d, 30000, "0"), ":30000\r\n");
    expect("PEXPIREAT b 1", ":1\r\n"); /* in the past: deleted now */
    expect("EXISTS b", ":0\r\n");
    cr_assert_eq(tiers_field(1, "used"), 0);
    cr_assert_eq(tiers_field(1, "blobs"), 0);
    cr_assert_str_eq(tput_bytes("c", "f", 0, d, 30000, "0"), ":30000\r\n");
    cr_assert_str_eq(tput_bytes("c", "r", 0, d, 30000, NULL), ":30000\r\n");
    expect("SELECT 3", "+OK\r\n");
    cr_assert_str_eq(tput_bytes("c", "r", 0, d, 1000, NULL), ":1000\r\n");
    expect("FLUSHALL", "+OK\r\n");
    cr_assert_eq(tiers_field(0, "used"), 0);
    cr_assert_eq(tiers_field(1, "used"), 0);
    cr_assert_eq(tiers_field(0, "blobs"), 0);
    free(d);
}

Test(cmd_tag, watch_sees_tag_writes)
{
    expect("TPUT t b 0 x", ":1\r\n");
    client_t *me = C, *other = client_new(NULL, NULL, -1);
    expect("WATCH t", "+OK\r\n");
    C = other;
    expect("TPUT t b 0 y", ":1\r\n");
    C = me;
    expect("MULTI", "+OK\r\n");
    expect("TGET t b", "+QUEUED\r\n");
    expect("EXEC", "*-1\r\n");
    expect("MULTI", "+OK\r\n");
    expect("TPUT t b 1 z 0", "+QUEUED\r\n");
    expect("TGET t b", "+QUEUED\r\n");
    expect("TSIZE t b", "+QUEUED\r\n");
    expect("EXEC", "*3\r\n:2\r\n$2\r\nyz\r\n:2\r\n");
}

/* ---- TIERS and INFO tiers ---- */

Test(cmd_tag, tiers_reply_shape_and_accounting)
{
    const char *r = one("TIERS");
    cr_assert(strncmp(r, "*2\r\n*", 5) == 0, "%s", escaped(r, 60));
    cr_assert(strstr(r, "$4\r\nname\r\n$3\r\nram\r\n$4\r\nkind\r\n$3\r\nram\r\n") != NULL);
    cr_assert(strstr(r, "$4\r\nname\r\n$4\r\ndisk\r\n$4\r\nkind\r\n$4\r\nfile\r\n") != NULL);
    const char *fields[] = {"name", "kind",  "path",  "score",  "capacity",   "used",
                            "free", "blobs", "reads", "writes", "bytes_read", "bytes_written"};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        char key[64];
        snprintf(key, sizeof(key), "\r\n$%zu\r\n%s\r\n", strlen(fields[i]), fields[i]);
        cr_assert(strstr(r, key) != NULL, "TIERS lacks %s", fields[i]);
    }
    cr_assert_eq(tiers_field(0, "capacity"), 65536);
    cr_assert_eq(tiers_field(1, "capacity"), 196608);
    one("HELLO 3");
    r = one("TIERS");
    cr_assert(strncmp(r, "*2\r\n%", 5) == 0, "%s", escaped(r, 60));
    one("HELLO 2");
    char *d = pattern(10000, 9);
    cr_assert_str_eq(tput_bytes("t", "r1", 0, d, 10000, NULL), ":10000\r\n");
    cr_assert_str_eq(tput_bytes("t", "r2", 0, d, 100, NULL), ":100\r\n");
    cr_assert_str_eq(tput_bytes("t", "f1", 0, d, 5000, "0"), ":5000\r\n");
    cr_assert_eq(tiers_field(0, "used"), 10000 + 112, "RAM counts 16-byte blocks");
    cr_assert_eq(tiers_field(0, "free"), 65536 - 10112);
    cr_assert_eq(tiers_field(0, "blobs"), 2);
    cr_assert_eq(tiers_field(1, "used"), 8192);
    cr_assert_eq(tiers_field(1, "blobs"), 1);
    long long bw = tiers_field(1, "bytes_written"), br = tiers_field(1, "bytes_read");
    cr_assert_eq(bw, 5000);
    expect_blob("t", "f1", d, 5000);
    cr_assert_eq(tiers_field(1, "bytes_read"), br + 5000);
    cr_assert_eq(tiers_field(1, "reads"), 1);
    /* INFO tiers agrees */
    r = one("INFO tiers");
    cr_assert(strstr(r, "# Tiers\r\n") != NULL, "%s", r);
    cr_assert(strstr(r, "tier_ram:kind=ram,") != NULL, "%s", r);
    cr_assert(strstr(r, "capacity=65536,used=10112,free=55424,blobs=2,") != NULL, "%s", r);
    cr_assert(strstr(r, "tier_disk:kind=file,") != NULL, "%s", r);
    cr_assert(strstr(r, "capacity=196608,used=8192,free=188416,blobs=1,") != NULL, "%s", r);
    cr_assert(strstr(one("INFO"), "# Tiers\r\n") != NULL, "plain INFO lacks the tiers section");
    free(d);
}

Test(cmd_tag, tiers_counts_the_reads_and_writes_of_moves_between_tiers)
{
    char *d = pattern(10000, 3);
    cr_assert_str_eq(tput_bytes("t", "m", 0, d, 10000, NULL), ":10000\r\n");
    long long ram_r = tiers_field(0, "reads"), ram_br = tiers_field(0, "bytes_read");
    long long ram_w = tiers_field(0, "writes"), ram_bw = tiers_field(0, "bytes_written");
    long long disk_r = tiers_field(1, "reads"), disk_br = tiers_field(1, "bytes_read");
    long long disk_w = tiers_field(1, "writes"), disk_bw = tiers_field(1, "bytes_written");
    expect("REORG t m 0", "$4\r\ndisk\r\n"); /* RAM -> disk: read from RAM, written to disk */
    cr_assert_eq(tiers_field(0, "reads"), ram_r + 1);
    cr_assert_eq(tiers_field(0, "bytes_read"), ram_br + 10000);
    cr_assert_eq(tiers_field(1, "writes"), disk_w + 1);
    cr_assert_eq(tiers_field(1, "bytes_written"), disk_bw + 10000);
    expect("REORG t m 1", "$3\r\nram\r\n"); /* and back */
    cr_assert_eq(tiers_field(1, "reads"), disk_r + 1);
    cr_assert_eq(tiers_field(1, "bytes_read"), disk_br + 10000);
    cr_assert_eq(tiers_field(0, "writes"), ram_w + 1);
    cr_assert_eq(tiers_field(0, "bytes_written"), ram_bw + 10000);
    expect("REORG t m 1", "$3\r\nram\r\n"); /* already there: nothing moves */
    cr_assert_eq(tiers_field(0, "writes"), ram_w + 1);
    cr_assert_eq(tiers_field(1, "reads"), disk_r + 1);
    expect_blob("t", "m", d, 10000);
    free(d);
}

/* ---- placement through commands ---- */

Test(cmd_tag, a_hot_write_into_full_ram_demotes_and_replies)
{
    /* RAM (score 0.1) full of 0.2 blobs: a 0.9 write demotes the coldest to disk. Without a
     * loop the demotion runs inline, so the reply must come at once. */
    char *d = pattern(32 * 1024, 4);
    cr_assert_str_eq(tput_bytes("t", "c1", 0, d, 32 * 1024, "0.2"), ":32768\r\n");
    cr_assert_str_eq(tput_bytes("t", "c2", 0, d, 32 * 1024, "0.3"), ":32768\r\n");
    cr_assert(strstr(one("TINFO t c1"), "$3\r\nram\r\n") != NULL);
    cr_assert_eq(tiers_field(0, "free"), 0);
    const char *r = tput_bytes("t", "hot", 0, d, 4096, "0.9");
    cr_assert_str_eq(r, ":4096\r\n", "the hot TPUT got '%s' (no reply: the client is stuck)",
                     escaped(r, strlen(r)));
    cr_assert(strstr(one("TINFO t hot"), "$3\r\nram\r\n") != NULL);
    cr_assert(strstr(one("TINFO t c1"), "$4\r\ndisk\r\n") != NULL);
    expect_blob("t", "c1", d, 32 * 1024);
    free(d);
}

Test(cmd_tag, tput_with_a_score_moves_the_blob)
{
    expect("TPUT t b 0 hello", ":5\r\n");
    cr_assert(strstr(one("TINFO t b"), "$4\r\ntier\r\n$3\r\nram\r\n") != NULL);
    expect("TPUT t b 0 H 0", ":5\r\n");
    const char *r = one("TINFO t b");
    cr_assert(strstr(r, "$4\r\ntier\r\n$4\r\ndisk\r\n") != NULL,
              "TPUT with score 0 must move the blob to disk: %s", escaped(r, strlen(r)));
    expect("TGET t b", "$5\r\nHello\r\n");
}

/* A TGET built whole (no transport to stream to here, as inside MULTI) is bounded like any
 * reply built in memory: past max-reply-bytes it is refused before anything is read. */
static void setup_big(void)
{
    static const char *const tiers[] = {"ram:ram:16mb"};
    teardown(); /* the suite's init started a server first */
    start(tiers, 1);
    tag_store.max_blob_size = 8u << 20;
}

Test(cmd_tag, a_tget_built_whole_past_max_reply_bytes_is_refused, .init = setup_big)
{
    size_t n = 3u << 20;
    char *data = pattern(n, 3);
    cr_assert_str_eq(tput_bytes("t", "big", 0, data, n, NULL), ":3145728\r\n");
    expect("CONFIG SET max-reply-bytes 2mb", "+OK\r\n");
    expect_prefix("TGET t big",
                  "-ERR reply of at least 3145728 bytes would exceed max-reply-bytes");
    expect_prefix("TGET t big 0 5", "$5\r\n");
    expect("CONFIG SET max-reply-bytes 1gb", "+OK\r\n");
    expect_blob("t", "big", data, n);
    free(data);
}
