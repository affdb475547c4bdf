/* test_cluster_client.c - libcte's cluster client (cte_cluster_t) against a running 3-node
 * cluster whose seeds come in CTE_CLUSTER_SEEDS (comma-separated tcp:// addresses), started by
 * tests/integration/test_cluster_client.py: a Redis Cluster (CTE_CLUSTER_KIND=redis: generic
 * routing, asynchronous requests, a reshard followed through -MOVED) or cte-server nodes
 * (CTE_CLUSTER_KIND=cte: also the tag calls and the merged queries). Without CTE_CLUSTER_SEEDS
 * every test skips. Run with --jobs 1. */
#include <cte/cte.h>

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/leak.h" /* LTest: a leak fails the test that caused it */

static char seedbuf[1024];
static const char *seeds[8];
static size_t nseeds;

/* The seeds, or a skipped test. */
static int cluster_open(cte_cluster_t **cl)
{
    const char *env = getenv("CTE_CLUSTER_SEEDS");
    if (!env || !*env) return 0;
    snprintf(seedbuf, sizeof seedbuf, "%s", env);
    nseeds = 0;
    for (char *p = strtok(seedbuf, ","); p && nseeds < 8; p = strtok(NULL, ","))
        seeds[nseeds++] = p;
    int rc = cte_cluster_connect(seeds, nseeds, 0, cl);
    cr_assert_eq(rc, 0, "connect: %s", cte_strerror(rc));
    return 1;
}

static int is_cte(void)
{
    const char *k = getenv("CTE_CLUSTER_KIND");
    return k && !strcmp(k, "cte");
}

#define OPEN_OR_SKIP(cl)                                                                           \
    if (!cluster_open(&(cl))) {                                                                    \
        cr_skip_test("CTE_CLUSTER_SEEDS is not set (run by test_cluster_client.py)");              \
        return;                                                                                    \
    }

LTest(cluster, generic_calls_route_by_the_first_key)
{
    cte_cluster_t *cl;
    cte_reply_t *r;
    char key[32], val[32];
    OPEN_OR_SKIP(cl);
    cr_assert_eq(cte_cluster_primaries(cl), 3);
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof key, "c:key:%d", i);
        snprintf(val, sizeof val, "v%d", i);
        cr_assert_eq(cte_cluster_call(cl, &r, "SET", key, val, NULL), 0, "%s",
                     cte_cluster_errmsg(cl));
        cte_reply_free(r);
    }
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof key, "c:key:%d", i);
        snprintf(val, sizeof val, "v%d", i);
        cr_assert_eq(cte_cluster_call(cl, &r, "GET", key, NULL), 0);
        cr_assert_str_eq(cte_reply_str(r, NULL), val);
        cte_reply_free(r);
    }
    /* the key named explicitly: EVAL's key is its 4th argument */
    const char *eval[] = {"EVAL", "return redis.call('GET', KEYS[1])", "1", "c:key:5"};
    cr_assert_eq(cte_cluster_command_key(cl, "c:key:5", 7, &r, 4, eval, NULL), 0, "%s",
                 cte_cluster_errmsg(cl));
    cr_assert_str_eq(cte_reply_str(r, NULL), "v5");
    cte_reply_free(r);
    /* an error reply: CTE_E_SERVER, the message, the reply is the caller's */
    cr_assert_eq(cte_cluster_call(cl, &r, "LPUSH", "c:key:1", "x", NULL), CTE_E_SERVER);
    cr_assert(!strncmp(cte_cluster_errmsg(cl), "WRONGTYPE", 9), "%s", cte_cluster_errmsg(cl));
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_ERROR);
    cte_reply_free(r);
    cr_assert_eq(cte_cluster_call(cl, &r, "PING", NULL), 0);
    cte_reply_free(r);
    cte_cluster_free(cl);
}

typedef struct tally {
    int ok, fail, calls;
    long long sum;
} tally_t;

static void count_done(cte_cluster_t *cl, int status, const cte_reply_t *r, void *ud)
{
    tally_t *t = ud;
    (void)cl;
    t->calls++;
    if (status == 0) {
        t->ok++;
        if (cte_reply_kind(r) == CTE_REPLY_INTEGER) t->sum += cte_reply_int(r);
    } else {
        t->fail++;
    }
}

LTest(cluster, async_requests_in_flight_on_every_node)
{
    cte_cluster_t *cl;
    tally_t t = {0};
    char key[32];
    OPEN_OR_SKIP(cl);
    for (int i = 0; i < 2000; i++) {
        snprintf(key, sizeof key, "c:ctr:%d", i % 500);
        const char *argv[] = {"INCRBY", key, "2"};
        cr_assert_eq(cte_cluster_command_async(cl, key, strlen(key), 3, argv, NULL, count_done, &t),
                     0);
    }
    cr_assert_gt(cte_cluster_pending(cl), 0);
    cr_assert_eq(cte_cluster_wait_all(cl), 0);
    cr_assert_eq(cte_cluster_pending(cl), 0);
    cr_assert_eq(t.calls, 2000);
    cr_assert_eq(t.ok, 2000);
    /* sum over INCRBY replies: each counter saw 2, 4, 6, 8 */
    cr_assert_eq(t.sum, 500LL * (2 + 4 + 6 + 8));
    cte_cluster_free(cl);
}

LTest(cluster, free_with_requests_pending_runs_their_callbacks)
{
    cte_cluster_t *cl;
    tally_t t = {0};
    OPEN_OR_SKIP(cl);
    for (int i = 0; i < 50; i++) {
        const char *argv[] = {"PING"};
        cr_assert_eq(cte_cluster_command_async(cl, NULL, 0, 1, argv, NULL, count_done, &t), 0);
    }
    cte_cluster_free(cl);
    cr_assert_eq(t.calls, 50);
}

LTest(cluster, bad_seeds_fail_cleanly)
{
    cte_cluster_t *cl;
    const char *bad[] = {"unix:/tmp/none.sock"};
    const char *junk[] = {"tcp://"};
    cr_assert_eq(cte_cluster_connect(bad, 1, 0, &cl), CTE_E_ADDRESS);
    cr_assert_null(cl);
    cr_assert_eq(cte_cluster_connect(junk, 1, 0, &cl), CTE_E_ADDRESS);
    cr_assert_eq(cte_cluster_connect(bad, 0, 0, &cl), CTE_E_INVAL);
}

/* ---- cte-server nodes only ---- */

LTest(cluster, tag_calls_and_async_puts)
{
    cte_cluster_t *cl;
    tally_t t = {0};
    char tag[32], buf[64];
    uint64_t size;
    size_t len;
    OPEN_OR_SKIP(cl);
    if (!is_cte()) {
        cte_cluster_free(cl);
        cr_skip_test("the tag commands need cte-server nodes");
        return;
    }
    for (int i = 0; i < 60; i++) {
        snprintf(tag, sizeof tag, "ct%d", i);
        cr_assert_eq(cte_cluster_put_async(cl, tag, "b", 0, "hello", 5, -1, count_done, &t), 0);
    }
    cr_assert_eq(cte_cluster_wait_all(cl), 0);
    cr_assert_eq(t.ok, 60);
    for (int i = 0; i < 60; i++) {
        snprintf(tag, sizeof tag, "ct%d", i);
        cr_assert_eq(cte_cluster_put(cl, tag, "b", 5, " world", 6, -1, &size), 0);
        cr_assert_eq(size, 11);
        cr_assert_eq(cte_cluster_get(cl, tag, "b", 0, -1, buf, sizeof buf, &len), 0);
        cr_assert_eq(len, 11);
        cr_assert(!memcmp(buf, "hello world", 11));
    }
    cr_assert_eq(cte_cluster_get(cl, "ct1", "missing", 0, -1, buf, sizeof buf, &len),
                 CTE_E_NOTFOUND);
    cte_reply_t *out;
    uint64_t total;
    cr_assert_eq(cte_cluster_query_tags(cl, "ct.*", 0, &total, &out), 0, "%s",
                 cte_cluster_errmsg(cl));
    cr_assert_eq(total, 60);
    cr_assert_eq(cte_reply_len(out), 61);
    for (size_t i = 2; i < cte_reply_len(out); i++) /* byte order over the whole cluster */
        cr_assert_lt(strcmp(cte_reply_str(cte_reply_elem(out, i - 1), NULL),
                            cte_reply_str(cte_reply_elem(out, i), NULL)),
                     0);
    cte_reply_free(out);
    cr_assert_eq(cte_cluster_query_blobs(cl, "ct.*", "b", 0, -1, 7, &total, &out), 0);
    cr_assert_eq(total, 60);
    cr_assert_eq(cte_reply_len(out), 8);
    cte_reply_free(out);
    cr_assert_eq(cte_cluster_search(cl, "hello", NULL, NULL, 5, 1, &out), 0);
    cr_assert_eq(cte_reply_len(out), 5);
    cr_assert_eq(cte_reply_len(cte_reply_elem(out, 0)), 3);
    cte_reply_free(out);
    cr_assert_eq(cte_cluster_query_tags(cl, "(", 0, &total, &out), CTE_E_SERVER);
    cr_assert_null(out);
    cte_cluster_free(cl);
}
