/* tests/unit/server/cmd/test_search.c - server/cmd/search.c through the socketless client: the
 * exact RESP2 and RESP3 replies of TQUERY and TSEARCH and their errors, INFO search, and the index
 * kept consistent by every kind of change (TPUT at any offset, TTRUNCATE, TDEL, DEL, RENAME, MOVE,
 * SWAPDB, expiry, FLUSHDB, FLUSHALL, file-tier blobs, binary blobs, the per-blob byte limit):
 * after each change, TSEARCH ranks exactly as an index built from scratch over what storage
 * holds then (read straight from storage, not through the search module).
 *
 * The server runs without a loop, so file-tier plans (and the index's reads) run inline.
 * Tiers: "ram" (64 KiB, score 0.1) and "disk" (a 1 MiB file tier in a temp dir, score 0). */
#define _GNU_SOURCE
#include "common/alloc.h"
#include "common/buf.h"
#include "config/config.h"
#include "search/bm25.h"
#include "search/ordset.h"
#include "search/token.h"
#include "server/client.h"
#include "server/server.h"
#include "storage/t_tag.h"

#include "tests/unit/server/harness.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static client_t *C;

static void setup(void)
{
    char disk[128];
    snprintf(disk, sizeof(disk), "disk:file:1mb:%s/disk:0", harness_tmpdir_make("cte-cmdsearch"));
    char *argv[] = {"cte-server", "--tier", "ram:ram:64kb::0.1", "--tier", disk};
    C = harness_server_start(5, argv);
}

static void teardown(void)
{
    harness_server_stop();
    harness_tmpdir_remove();
}

TestSuite(cmd_search, .init = setup, .fini = teardown, .timeout = 60);

static void ok(const char *line)
{
    harness_expect(C, line, "+OK\r\n");
}

/* Sends line and returns the reply bytes (valid until the next command). */
static const char *send(const char *line)
{
    buf_clear(&C->out);
    harness_send(C, line);
    buf_append(&C->out, "", 1);
    C->out.len--;
    return C->out.data;
}

/* ---- exact replies ---- */

Test(cmd_search, tquery_tags_lists_full_matches_with_the_total_first)
{
    send("TPUT logs a 0 x");
    send("TPUT logs2 a 0 x");
    send("TPUT metrics a 0 x");
    harness_expect(C, "TQUERY TAGS log.*", "*3\r\n:2\r\n$4\r\nlogs\r\n$5\r\nlogs2\r\n");
    harness_expect(C, "TQUERY TAGS log", "*1\r\n:0\r\n"); /* whole-name match */
    harness_expect(C, "TQUERY TAGS .* LIMIT 1", "*2\r\n:3\r\n$4\r\nlogs\r\n");
    harness_expect(C, "TQUERY TAGS .* LIMIT 0", "*1\r\n:3\r\n");
    harness_expect(C, "TQUERY tags m.*|l.*s", "*3\r\n:2\r\n$4\r\nlogs\r\n$7\r\nmetrics\r\n");
}

Test(cmd_search, tquery_blobs_pairs_by_tag_then_blob)
{
    send("TPUT b y 0 x");
    send("TPUT a z 0 x");
    send("TPUT a y 0 x");
    harness_expect(C, "TQUERY BLOBS .* .*",
                   "*4\r\n:3\r\n*2\r\n$1\r\na\r\n$1\r\ny\r\n*2\r\n$1\r\na\r\n$1\r\nz\r\n"
                   "*2\r\n$1\r\nb\r\n$1\r\ny\r\n");
    harness_expect(C, "TQUERY BLOBS a|b y LIMIT 1", "*2\r\n:2\r\n*2\r\n$1\r\na\r\n$1\r\ny\r\n");
}

Test(cmd_search, tlist_from_count_reads_the_name_index_in_byte_order)
{
    ok("CONFIG SET search-enabled no"); /* the names are filed all the same */
    send("TPUT t b 0 x");
    send("TPUT t a 0 x 0"); /* on the file tier */
    send("TPUT t ab 0 x");
    send("TPUT t c 0 x");
    harness_expect(C, "TLIST t FROM ab", "*3\r\n$2\r\nab\r\n$1\r\nb\r\n$1\r\nc\r\n");
    harness_expect(C, "TLIST t FROM aa COUNT 2", "*2\r\n$2\r\nab\r\n$1\r\nb\r\n");
    harness_expect(C, "TLIST t COUNT 1", "*1\r\n$1\r\na\r\n");
    harness_expect(C, "TLIST t FROM d", "*0\r\n");
    harness_expect(C, "TLIST t FROM a COUNT 0", "*0\r\n");
    harness_expect(C, "TLIST nope FROM a", "*0\r\n");
    harness_expect(C, "TLIST t COUNT -1", "-ERR value is out of range, must be positive\r\n");
    harness_expect(C, "TLIST t FROM a LIMIT 1", "-ERR syntax error\r\n");
    send("TDEL t ab");
    send("RENAME t u");
    harness_expect(C, "TLIST u FROM a", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n");
}

Test(cmd_search, tquery_window_is_inclusive_and_oldest_first)
{
    /* mtimes come from the command clock: set them by writing at chosen times */
    long long t0 = 1700000000000LL;
    const char *names[] = {"w3", "w1", "w2", "w0"};
    long long times[] = {t0 + 3, t0 + 1, t0 + 2, t0};
    for (int i = 0; i < 4; i++) {
        tag_obj_t *t;
        char line[64];
        snprintf(line, sizeof(line), "TPUT win %s 0 x", names[i]);
        send(line);
        t = (tag_obj_t *)db_find(&srv.db[0], "win", 3)->val;
        blob_t *b = tag_blob(t, names[i], 2);
        cr_assert_not_null(b);
        /* rewrite with a fixed clock */
        uint64_t size;
        tag_plan_t *plan;
        db_now_ms = times[i];
        cr_assert_eq(
            tag_put(t, &(tag_write_t){names[i], 2, 0, "y", 1, 0, 0, times[i]}, &size, &plan),
            ST_OK);
        db_now_ms = 0;
    }
    char line[128];
    snprintf(line, sizeof(line), "TQUERY BLOBS win .* SINCE %lld UNTIL %lld", t0 + 1, t0 + 2);
    harness_expect(C, line,
                   "*3\r\n:2\r\n*2\r\n$3\r\nwin\r\n$2\r\nw1\r\n*2\r\n$3\r\nwin\r\n$2\r\nw2\r\n");
    snprintf(line, sizeof(line), "TQUERY BLOBS .* .* SINCE %lld", t0 + 3);
    harness_expect(C, line, "*2\r\n:1\r\n*2\r\n$3\r\nwin\r\n$2\r\nw3\r\n");
    snprintf(line, sizeof(line), "TQUERY BLOBS .* w[03] UNTIL %lld", t0 + 3);
    harness_expect(C, line,
                   "*3\r\n:2\r\n*2\r\n$3\r\nwin\r\n$2\r\nw0\r\n*2\r\n$3\r\nwin\r\n$2\r\nw3\r\n");
    snprintf(line, sizeof(line), "TQUERY BLOBS .* .* SINCE %lld UNTIL %lld", t0 + 2, t0 + 1);
    harness_expect(C, line, "*1\r\n:0\r\n");
}

Test(cmd_search, tquery_errors)
{
    harness_expect(C, "TQUERY TAGS (",
                   "-ERR invalid regex: missing closing parenthesis at offset 1\r\n");
    harness_expect(C, "TQUERY BLOBS .* [",
                   "-ERR invalid regex: missing terminating ] for character class at offset 1\r\n");
    harness_expect(C, "TQUERY NAMES .*", "-ERR syntax error\r\n");
    harness_expect(C, "TQUERY BLOBS .*", "-ERR syntax error\r\n");
    harness_expect(C, "TQUERY TAGS .* SINCE 1", "-ERR syntax error\r\n");
    harness_expect(C, "TQUERY TAGS .* LIMIT", "-ERR syntax error\r\n");
    harness_expect(C, "TQUERY TAGS .* LIMIT x", "-ERR value is not an integer or out of range\r\n");
    harness_expect(C, "TQUERY TAGS .* LIMIT -1", "-ERR LIMIT is negative\r\n");
    harness_expect(C, "TQUERY BLOBS .* .* SINCE 1.5",
                   "-ERR value is not an integer or out of range\r\n");
    harness_expect(C, "TQUERY TAGS", "-ERR wrong number of arguments for 'tquery' command\r\n");
}

Test(cmd_search, tsearch_replies_in_resp2_and_resp3)
{
    send("TPUT docs a 0 \"lazy dog\"");
    send("TPUT docs b 0 \"lazy lazy cat\"");
    send("TPUT other c 0 \"no match here\"");
    harness_expect(C, "TSEARCH lazy",
                   "*2\r\n*2\r\n$4\r\ndocs\r\n$1\r\nb\r\n*2\r\n$4\r\ndocs\r\n$1\r\na\r\n");
    harness_expect(C, "TSEARCH LAZY LIMIT 1", "*1\r\n*2\r\n$4\r\ndocs\r\n$1\r\nb\r\n");
    harness_expect(C, "TSEARCH zebra", "*0\r\n");
    harness_expect(C, "TSEARCH dog BLOB b", "*0\r\n");
    harness_expect(C, "TSEARCH dog TAG doc.* BLOB a WITHSCORES",
                   "*1\r\n*3\r\n$4\r\ndocs\r\n$1\r\na\r\n$18\r\n1.1051597217033537\r\n");
    send("HELLO 3");
    harness_expect(C, "TSEARCH dog WITHSCORES",
                   "*1\r\n*3\r\n$4\r\ndocs\r\n$1\r\na\r\n,1.1051597217033537\r\n");
}

Test(cmd_search, tsearch_errors)
{
    harness_expect(C, "TSEARCH x TAG (",
                   "-ERR invalid regex: missing closing parenthesis at offset 1\r\n");
    harness_expect(C, "TSEARCH x LIMIT -2", "-ERR LIMIT is negative\r\n");
    harness_expect(C, "TSEARCH x LIMIT", "-ERR syntax error\r\n");
    harness_expect(C, "TSEARCH x FOO", "-ERR syntax error\r\n");
    harness_expect(C, "TSEARCH", "-ERR wrong number of arguments for 'tsearch' command\r\n");
}

Test(cmd_search, info_search_counts_documents_terms_and_bytes)
{
    send("TPUT t a 0 \"one two three\"");
    send("TPUT t b 0 \"two three\"");
    const char *r = send("INFO search");
    cr_assert(strstr(r, "# Search\r\n"), "%s", r);
    cr_assert(strstr(r, "search_documents:2\r\n"), "%s", r);
    cr_assert(strstr(r, "search_terms:3\r\n"), "%s", r);
    cr_assert(strstr(r, "search_bytes:22\r\n"), "%s", r);
    cr_assert(strstr(r, "search_index_memory:"), "%s", r);
    send("DEL t");
    r = send("INFO search");
    cr_assert(strstr(r, "search_documents:0\r\n"), "%s", r);
    cr_assert(strstr(r, "search_terms:0\r\n"), "%s", r);
    cr_assert(strstr(r, "search_bytes:0\r\n"), "%s", r);
}

/* search-enabled at run time: no drops every blob's contents from the index (TSEARCH is
 * refused, TQUERY goes on), yes indexes every blob again, file-tier ones too. */
Test(cmd_search, search_enabled_can_be_switched_at_run_time)
{
    send("TPUT docs a 0 \"lazy dog\"");
    send("TPUT docs b 0 \"lazy lazy cat\" 0");
    ok("CONFIG SET search-enabled no");
    harness_expect(C, "TSEARCH lazy", "-ERR search is disabled (search-enabled no)\r\n");
    cr_assert(strstr(send("INFO search"), "search_documents:0\r\n"));
    send("TPUT docs c 0 \"lazy fox\"");
    harness_expect(C, "TQUERY BLOBS docs c", "*2\r\n:1\r\n*2\r\n$4\r\ndocs\r\n$1\r\nc\r\n");
    ok("CONFIG SET search-enabled yes");
    cr_assert(strstr(send("INFO search"), "search_documents:3\r\n"));
    harness_expect(C, "TSEARCH cat", "*1\r\n*2\r\n$4\r\ndocs\r\n$1\r\nb\r\n");
    harness_expect(C, "TSEARCH fox", "*1\r\n*2\r\n$4\r\ndocs\r\n$1\r\nc\r\n");
}

Test(cmd_search, tquery_inside_multi_runs_to_the_end)
{
    send("TPUT q a 0 x");
    ok("MULTI");
    harness_expect(C, "TQUERY TAGS q", "+QUEUED\r\n");
    harness_expect(C, "EXEC", "*1\r\n*2\r\n:1\r\n$1\r\nq\r\n");
}

/* ---- consistency with an index built from scratch ---- */

typedef struct owner {
    int db, expired;
    char tag[32], blob[32];
    size_t tlen, blen;
} owner_t;

static owner_t owners[512];
static int nowners;
static bm25_t *fresh;

static void add_blob(void *ud, blob_t *b)
{
    owner_t *o = &owners[nowners++];
    const kv_t *kv = ud;
    cr_assert_lt(nowners, 512);
    o->db = -1;
    o->tlen = kv_keylen(kv);
    memcpy(o->tag, kv_key(kv), o->tlen);
    const char *name = blob_name(b, &o->blen);
    memcpy(o->blob, name, o->blen);
    blob_info_t in;
    blob_get_info(b, &in);
    uint64_t max = (uint64_t)srv.cfg.search_max_bytes_per_blob;
    uint64_t n = in.size < max ? in.size : max;
    char *text = xmalloc(n + 1);
    tag_plan_t *plan;
    if (blob_peek(b, 0, n, text, &plan) == ST_PENDING) {
        cr_assert_eq(tag_plan_run(plan), 0);
        tag_plan_finish(plan, 0, NULL, NULL);
    }
    if (!srv.cfg.search_skip_binary || token_is_utf8(text, n, in.size > n))
        bm25_add(fresh, text, n, o);
    xfree(text);
}

/* Rebuilds the reference index from every live blob of every database. */
static void rebuild(void)
{
    bm25_free(fresh);
    fresh = bm25_new();
    nowners = 0;
    for (int d = 0; d < srv.ndb; d++) {
        dict_iter_t it;
        dict_iter_init(&it, &srv.db[d].keys, 0);
        for (dict_node_t *n; (n = dict_iter_next(&it));) {
            kv_t *kv = (kv_t *)n;
            if (kv->val->type != OBJ_TAG) continue;
            int first = nowners;
            tag_foreach((tag_obj_t *)kv->val, add_blob, kv);
            for (int i = first; i < nowners; i++) {
                owners[i].db = d;
                owners[i].expired = db_is_expired(&srv.db[d], kv);
            }
        }
        dict_iter_deinit(&it);
    }
}

static int by_names(void *ud, const void *a, const void *b)
{
    const owner_t *x = a, *y = b;
    int c = ordset_cmp(x->tag, x->tlen, y->tag, y->tlen);
    return c ? c : ordset_cmp(x->blob, x->blen, y->blob, y->blen);
}

/* Blobs of a tag that expired but was not deleted yet still count in N, df and the average
 * length (until expiry deletes them), but are never results. */
static int in_db(void *ud, void *owner)
{
    const owner_t *o = owner;
    return o->db == *(int *)ud && !o->expired;
}

/* Reads one bulk string of a RESP2 reply at *p. */
static size_t bulk(const char **p, char *out, size_t cap)
{
    cr_assert_eq(**p, '$');
    size_t n = strtoul(*p + 1, (char **)p, 10);
    cr_assert(n < cap);
    *p += 2;
    memcpy(out, *p, n);
    out[n] = '\0';
    *p += n + 2;
    return n;
}

/* TSEARCH q in the current database equals the fresh index's ranking. */
static const char *stage; /* the change just made, for messages */

static void check_query(const char *q)
{
    char line[256];
    snprintf(line, sizeof(line), "TSEARCH \"%s\" LIMIT 600 WITHSCORES", q);
    const char *p = send(line);
    int db = C->db->id;
    static bm25_hit_t want[600];
    bm25_query_t opt = {600, in_db, by_names, &db};
    size_t nw = bm25_search(fresh, q, strlen(q), &opt, want);
    cr_assert_eq(*p, '*', "%s: %s", line, p);
    size_t n = strtoul(p + 1, (char **)&p, 10);
    p += 2;
    cr_assert_eq(n, nw, "after %s, %s: %zu hits, want %zu", stage, line, n, nw);
    for (size_t i = 0; i < n; i++) {
        char tag[64], blob[64], score[64];
        cr_assert(!strncmp(p, "*3\r\n", 4));
        p += 4;
        size_t tl = bulk(&p, tag, sizeof(tag)), bl = bulk(&p, blob, sizeof(blob));
        bulk(&p, score, sizeof(score));
        const owner_t *o = want[i].owner;
        cr_assert(tl == o->tlen && !memcmp(tag, o->tag, tl) && bl == o->blen &&
                      !memcmp(blob, o->blob, bl),
                  "after %s, %s hit %zu: %s/%s, want %.*s/%.*s", stage, line, i, tag, blob,
                  (int)o->tlen, o->tag, (int)o->blen, o->blob);
        cr_assert(fabs(strtod(score, NULL) - want[i].score) < 1e-9,
                  "after %s, %s hit %zu: %s, want %.17g", stage, line, i, score, want[i].score);
    }
}

static const char *const queries[] = {
    "alpha", "beta gamma", "delta alpha omega", "zz9", "gamma gamma", "x", "fresh", "zero"};

static void check_all(const char *after)
{
    stage = after;
    rebuild();
    for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) check_query(queries[i]);
}

Test(cmd_search, the_index_follows_every_kind_of_change)
{
    send("TPUT t1 a 0 \"alpha beta gamma\"");
    send("TPUT t1 b 0 \"beta beta delta\"");
    send("TPUT t2 c 0 \"gamma zz9 alpha alpha\"");
    check_all("writes");
    send("TPUT t1 a 6 \"omega\""); /* overwrite in the middle: "alpha omegagamma" */
    check_all("overwrite");
    send("TPUT t1 b 15 \" fresh alpha\""); /* append */
    check_all("append");
    send("TPUT t1 g 30 \"alpha\""); /* a gap of zero bytes */
    check_all("gap");
    send("TTRUNCATE t1 b 4"); /* "beta" */
    check_all("shrink");
    send("TTRUNCATE t1 b 40"); /* zeros after */
    check_all("grow");
    send("TDEL t1 g");
    check_all("tdel");
    send("TPUT t3 d 0 \"delta delta alpha\" 0"); /* score 0: the file tier */
    check_all("file tier");
    send("TPUT t3 d 3 \"ZERO\""); /* partial write of a file-tier blob */
    check_all("file tier overwrite");
    send("RENAME t1 t9");
    check_all("rename");
    send("RENAME t9 t2"); /* onto an existing tag */
    check_all("rename over");
    send("MOVE t3 1");
    check_all("move");
    ok("SELECT 1");
    check_all("move, db 1");
    send("TPUT t4 e 0 \"gamma beta\"");
    ok("SWAPDB 0 1");
    check_all("swapdb, db 1");
    ok("SELECT 0");
    check_all("swapdb, db 0");
    send("PEXPIRE t4 1");
    usleep(5000);
    check_all("expired, not yet deleted");
    send("EXISTS t4"); /* lazy expiry deletes it */
    check_all("expired");
    send("DEL t3");
    check_all("del");
    ok("FLUSHDB");
    check_all("flushdb");
    ok("SELECT 1");
    check_all("flushdb, db 1");
    send("TPUT u a 0 \"alpha beta\"");
    ok("FLUSHALL");
    check_all("flushall");
    bm25_free(fresh);
    fresh = NULL;
}

Test(cmd_search, binary_blobs_and_the_byte_limit)
{
    send("TPUT t text 0 \"alpha beta\"");
    send("TPUT t bin 0 \"alpha \xff\xfe beta\"");
    check_all("binary skipped");
    harness_expect(C, "TSEARCH alpha", "*1\r\n*2\r\n$1\r\nt\r\n$4\r\ntext\r\n");
    ok("CONFIG SET search-skip-binary no");
    send("TPUT t bin 0 \"alpha \xff\xfe beta\"");
    check_all("binary indexed");
    ok("CONFIG SET search-max-bytes-per-blob 7"); /* for blobs written from now on */
    harness_expect(C, "TSEARCH beta",
                   "*2\r\n*2\r\n$1\r\nt\r\n$3\r\nbin\r\n*2\r\n$1\r\nt\r\n$4\r\ntext\r\n");
    send("TPUT t long 0 \"zero alpha beta\""); /* indexed: "zero al" */
    send("TPUT t text 0 \"alpha beta\"");
    send("TPUT t bin 0 \"alpha \xff\xfe beta\"");
    check_all("limit");
    harness_expect(C, "TSEARCH beta BLOB long", "*0\r\n");
    harness_expect(C, "TSEARCH al", "*1\r\n*2\r\n$1\r\nt\r\n$4\r\nlong\r\n");
    bm25_free(fresh);
    fresh = NULL;
}

Test(cmd_search, random_changes_keep_the_index_exact)
{
    static const char *const words[] = {"alpha", "beta",  "gamma", "delta", "omega",
                                        "zz9",   "fresh", "zero",  "x",     "The"};
    srand(5);
    for (int step = 0; step < 300; step++) {
        char line[256], text[128];
        int tag = rand() % 4, blob = rand() % 6, op = rand() % 10;
        size_t n = 0;
        for (int w = rand() % 6; w >= 0; w--)
            n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s", words[rand() % 10],
                                  rand() % 3 ? " " : ".");
        if (op < 5)
            snprintf(line, sizeof(line), "TPUT k%d b%d %d \"%s\" %s", tag, blob, rand() % 20, text,
                     rand() % 3 ? "" : "0");
        else if (op < 7)
            snprintf(line, sizeof(line), "TTRUNCATE k%d b%d %d", tag, blob, rand() % 30);
        else if (op < 8)
            snprintf(line, sizeof(line), "TDEL k%d b%d", tag, blob);
        else if (op < 9)
            snprintf(line, sizeof(line), "RENAME k%d k%d", tag, rand() % 4);
        else
            snprintf(line, sizeof(line), "DEL k%d", tag);
        send(line);
        if (step % 10 == 0) check_all(line);
    }
    check_all("end");
    bm25_free(fresh);
    fresh = NULL;
}
