/* test_libcte.c - libcte (client/) against the real cte-server binary: every tag call over TCP,
 * the Unix socket and shared memory, many asynchronous puts in flight with their callbacks in
 * order, the generic call in RESP2 and RESP3, AUTH and SELECT from the address, the server's error
 * messages, and broken peers: a fake server (a forked child on its own port) that closes in
 * the middle of a reply, sends garbage, or never answers.
 *
 * Each test fork/execs its own server as test_hiredis.c does (CTE_SERVER, a free loopback
 * port, its own temp dir and Unix socket, PR_SET_PDEATHSIG, SIGTERM and exit status 0 at the
 * end). Run with --jobs 1 (ctest does). */
#define _GNU_SOURCE
#include <cte/cte.h>

#include "alloc.h" /* client/: the allocation-failure hook */

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/itest_server.h"
#include "tests/leak.h" /* LTest: a leak fails the test that caused it */

/* ---- the server under test (itest_server.h) ---- */

static void exec_server(void)
{
    const char *redis[] = {"--save", "",  "--appendonly", "no", "--enable-debug-command",
                           "yes",    NULL};
    const char *pass[] = {"--appendonly", "no", "--requirepass", S.pass, NULL};
    const char *plain[] = {"--appendonly", "no", "--enable-debug-command", "yes", NULL};
    if (S.redis) itest_exec("/usr/bin/redis-server", redis);
    itest_exec(NULL, S.pass ? pass : plain);
}

static void tcp_addr(char *buf, size_t n, const char *auth, const char *tail)
{
    snprintf(buf, n, "tcp://%s127.0.0.1:%d%s", auth ? auth : "", S.port, tail ? tail : "");
}

/* Waits until the server answers (PING, or NOAUTH with a password set); 0 or -1. */
static int wait_ready(void)
{
    double deadline = now_s() + start_timeout();
    char addr[128];

    tcp_addr(addr, sizeof addr, NULL, NULL);
    while (now_s() < deadline) {
        int status;
        if (waitpid(S.pid, &status, WNOHANG) == S.pid) {
            S.pid = 0;
            return -1;
        }
        cte_conn_t *c;
        if (cte_connect(addr, 0, &c) == 0) {
            cte_reply_t *r;
            int rc = cte_call(c, &r, "PING", NULL);
            cte_reply_free(r);
            cte_conn_free(c);
            if (rc == 0 || rc == CTE_E_SERVER) return 0;
        }
        usleep(20000);
    }
    return -1;
}

static void setup(void)
{
    itest_start("cte-libcte-", exec_server, wait_ready);
}

static void setup_redis(void)
{
    if (access("/usr/bin/redis-server", X_OK) != 0) cr_skip_test("no /usr/bin/redis-server");
    S.redis = 1;
    setup();
}

static void setup_auth(void)
{
    S.pass = "s3cret";
    setup();
}

static void teardown(void)
{
    itest_stop();
    S.pass = NULL;
    S.redis = 0;
}

static cte_conn_t *open_or_fail(const char *addr, unsigned flags)
{
    cte_conn_t *c = cte_conn_new();
    cr_assert_not_null(c);
    int rc = cte_conn_open(c, addr, flags);
    cr_assert_eq(rc, 0, "open %s: %s (%s)", addr, cte_strerror(rc), cte_conn_errmsg(c));
    return c;
}

static cte_conn_t *tcp_conn(unsigned flags)
{
    char addr[128];
    tcp_addr(addr, sizeof addr, NULL, NULL);
    return open_or_fail(addr, flags);
}

#define OK(call)                                                                                   \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        cr_assert_eq(rc_, 0, "%s: %s (%s)", #call, cte_strerror(rc_), cte_conn_errmsg(c));         \
    } while (0)

static int has_name(const cte_reply_t *arr, size_t from, const char *name)
{
    for (size_t i = from; i < cte_reply_len(arr); i++) {
        const char *s = cte_reply_str(cte_reply_elem(arr, i), NULL);
        if (s && !strcmp(s, name)) return 1;
    }
    return 0;
}

/* ---- every tag call, over either transport ---- */

static void blob_calls(cte_conn_t *c)
{
    uint64_t n;
    char buf[64];
    size_t len;
    const void *view;

    OK(cte_put(c, "t", "b1", 0, "hello world", 11, -1, &n));
    cr_assert_eq(n, 11);
    OK(cte_put(c, "t", "b1", 20, "tail", 4, 0.5, &n));
    cr_assert_eq(n, 24, "writing past the end grows the blob");
    OK(cte_get(c, "t", "b1", 0, 5, buf, sizeof buf, &len));
    cr_assert_eq(len, 5);
    cr_assert(memcmp(buf, "hello", 5) == 0);
    OK(cte_get(c, "t", "b1", 0, -1, buf, sizeof buf, &len));
    cr_assert_eq(len, 24);
    cr_assert(memcmp(buf + 11, "\0\0\0\0\0\0\0\0\0tail", 13) == 0, "the gap reads as zeros");
    cr_assert_eq(cte_get(c, "t", "b1", 0, -1, buf, 4, &len), CTE_E_TRUNCATED);
    cr_assert_eq(len, 24);
    cr_assert(memcmp(buf, "hell", 4) == 0);
    OK(cte_get_view(c, "t", "b1", 6, 5, &view, &len));
    cr_assert_eq(len, 5);
    cr_assert(memcmp(view, "world", 5) == 0);
    cr_assert_eq(cte_get(c, "t", "nope", 0, -1, buf, sizeof buf, &len), CTE_E_NOTFOUND);
    OK(cte_size(c, "t", "b1", &n));
    cr_assert_eq(n, 24);
    cr_assert_eq(cte_size(c, "t", "nope", &n), CTE_E_NOTFOUND);
    OK(cte_truncate(c, "t", "b1", 5, &n));
    cr_assert_eq(n, 5);
    double score;
    OK(cte_score(c, "t", "b1", &score));
    cr_assert_float_eq(score, 0.5, 1e-9);
    cr_assert_eq(cte_score(c, "t", "nope", &score), CTE_E_NOTFOUND);
    cte_blob_info_t info;
    OK(cte_info(c, "t", "b1", &info));
    cr_assert_eq(info.size, 5);
    cr_assert_float_eq(info.score, 0.5, 1e-9);
    cr_assert_neq(info.tier[0], '\0');
    cr_assert_gt(info.mtime, 1600000000000LL);
    cr_assert_geq(info.writes, 2);
    cr_assert_geq(info.reads, 1);
    cr_assert_eq(cte_info(c, "t", "nope", &info), CTE_E_NOTFOUND);
    const char *tier;
    char ram_tier[64];
    snprintf(ram_tier, sizeof ram_tier, "%s", info.tier);
    OK(cte_reorg(c, "t", "b1", 0.0, &tier));
    cr_assert_str_neq(tier, ram_tier, "score 0 moves the blob off the hot tier %s", ram_tier);
    OK(cte_score(c, "t", "b1", &score));
    cr_assert_float_eq(score, 0.0, 1e-9);
    OK(cte_get(c, "t", "b1", 0, -1, buf, sizeof buf, &len));
    cr_assert(len == 5 && memcmp(buf, "hello", 5) == 0, "a moved blob keeps its bytes");
}

static void large_blob(cte_conn_t *c)
{
    size_t n = 3u << 20, len;
    unsigned char *big = malloc(n);
    const void *view;
    uint64_t size;
    for (size_t i = 0; i < n; i++) big[i] = (unsigned char)(i * 31 + (i >> 12));
    OK(cte_put(c, "t", "big", 0, big, n, -1, &size)); /* written from big itself (writev) */
    cr_assert_eq(size, n);
    OK(cte_get_view(c, "t", "big", 0, -1, &view, &len));
    cr_assert_eq(len, n);
    cr_assert(memcmp(view, big, n) == 0);
    unsigned char *back = malloc(n);
    OK(cte_get(c, "t", "big", 0, -1, back, n, &len)); /* parsed straight into back */
    cr_assert_eq(len, n);
    cr_assert(memcmp(back, big, n) == 0);
    memset(back, 0, n);
    cr_assert_eq(cte_get(c, "t", "big", 1, -1, back, 1000, &len), CTE_E_TRUNCATED);
    cr_assert_eq(len, n - 1);
    cr_assert(memcmp(back, big + 1, 1000) == 0);
    cr_assert_eq(back[1000], 0, "nothing past cap was written");
    /* behind queued async requests, only the get's own reply goes into the buffer */
    OK(cte_put_async(c, "t2", "small", 0, "xyz", 3, -1, NULL, NULL));
    const char *get[] = {"GET", "nope"};
    OK(cte_command_async(c, 2, get, NULL, NULL, NULL));
    OK(cte_get(c, "t2", "small", 0, -1, back, n, &len));
    cr_assert(len == 3 && memcmp(back, "xyz", 3) == 0);
    free(back);
    free(big);
}

static void listing_calls(cte_conn_t *c)
{
    cte_reply_t *r;
    uint64_t n, total, cursor = 0;
    const char *gone[] = {"b3", "missing"};

    OK(cte_put(c, "t", "b2", 0, "the quick brown fox", 19, -1, NULL));
    OK(cte_put(c, "t", "b3", 0, "lazy dog", 8, -1, NULL));
    OK(cte_put(c, "u", "x", 0, "fox fox fox", 11, -1, NULL));
    OK(cte_len(c, "t", &n));
    cr_assert_eq(n, 4);
    OK(cte_list(c, "t", &r));
    cr_assert_eq(cte_reply_len(r), 4);
    cr_assert(has_name(r, 0, "b1") && has_name(r, 0, "big") && has_name(r, 0, "b3"));
    cte_reply_free(r);
    size_t seen = 0;
    do {
        OK(cte_scan(c, "t", cursor, "b[0-9]", 1, &cursor, &r));
        seen += cte_reply_len(r);
        cte_reply_free(r);
    } while (cursor != 0);
    cr_assert_geq(seen, 3, "TSCAN MATCH b[0-9] returns b1 b2 b3 (saw %zu)", seen);
    OK(cte_query_tags(c, "t|u", 0, &total, &r));
    cr_assert_eq(total, 2);
    cr_assert(has_name(r, 1, "t") && has_name(r, 1, "u"));
    cte_reply_free(r);
    OK(cte_query_tags(c, "[tu]", 1, &total, &r));
    cr_assert_eq(total, 2, "the total counts every match also under LIMIT");
    cr_assert_eq(cte_reply_len(r), 2);
    cte_reply_free(r);
    OK(cte_query_blobs(c, "t", "b.", -1, -1, 0, &total, &r));
    cr_assert_eq(total, 3);
    const cte_reply_t *pair = cte_reply_elem(r, 1);
    cr_assert_eq(cte_reply_len(pair), 2);
    cr_assert_str_eq(cte_reply_str(cte_reply_elem(pair, 0), NULL), "t");
    cte_reply_free(r);
    OK(cte_query_blobs(c, ".*", ".*", 0, 1, 0, &total, &r));
    cr_assert_eq(total, 0, "nothing was modified in 1970");
    cte_reply_free(r);
    OK(cte_search(c, "fox", NULL, NULL, 0, 1, &r));
    cr_assert_eq(cte_reply_len(r), 2);
    const cte_reply_t *best = cte_reply_elem(r, 0);
    cr_assert_eq(cte_reply_len(best), 3, "WITHSCORES adds the score");
    cr_assert_str_eq(cte_reply_str(cte_reply_elem(best, 0), NULL), "u", "fox x3 ranks first");
    cte_reply_free(r);
    OK(cte_search(c, "fox", "t", NULL, 5, 0, &r));
    cr_assert_eq(cte_reply_len(r), 1);
    cr_assert_eq(cte_reply_len(cte_reply_elem(r, 0)), 2);
    cte_reply_free(r);
    cr_assert_eq(cte_search(c, "fox", "(", NULL, 0, 0, &r), CTE_E_SERVER);
    cr_assert(strstr(cte_conn_errmsg(c), "invalid regex"), "%s", cte_conn_errmsg(c));
    cr_assert_null(r);
    OK(cte_delete(c, "t", gone, 2, &n));
    cr_assert_eq(n, 1);
    OK(cte_len(c, "t", &n));
    cr_assert_eq(n, 3);
}

static void every_tag_call(cte_conn_t *c)
{
    blob_calls(c);
    large_blob(c);
    listing_calls(c);
}

LTest(libcte, every_tag_call_over_tcp, .init = setup, .fini = teardown)
{
    cte_conn_t *c = tcp_conn(0);
    every_tag_call(c);
    cte_conn_free(c);
}

LTest(libcte, every_tag_call_over_the_unix_socket, .init = setup, .fini = teardown)
{
    char addr[160];
    snprintf(addr, sizeof addr, "unix:%s", S.sock);
    cte_conn_t *c = open_or_fail(addr, 0);
    every_tag_call(c);
    cte_conn_free(c);
}

static cte_conn_t *shm_conn(unsigned flags)
{
    char addr[160];
    snprintf(addr, sizeof addr, "shm:%s", S.sock);
    return open_or_fail(addr, flags);
}

LTest(libcte, every_tag_call_over_shared_memory, .init = setup, .fini = teardown)
{
    cte_conn_t *c = shm_conn(0);
    every_tag_call(c);
    cte_conn_free(c);
    c = shm_conn(CTE_RESP3);
    cr_assert_eq(cte_conn_protocol(c), 3);
    every_tag_call(c);
    cte_conn_free(c);
}

LTest(libcte, every_tag_call_in_resp3, .init = setup, .fini = teardown)
{
    cte_conn_t *c = tcp_conn(CTE_RESP3);
    cr_assert_eq(cte_conn_protocol(c), 3);
    every_tag_call(c);
    cte_conn_free(c);
}

/* ---- asynchronous puts ---- */

typedef struct async_log {
    int next; /* the index the next callback must carry */
    int fails;
    unsigned max_pending;
} async_log_t;

static async_log_t A;

static void put_done(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    int i = (int)(intptr_t)ud;
    if (i != A.next || status != 0 || cte_reply_kind(r) != CTE_REPLY_INTEGER ||
        cte_reply_int(r) != 4096)
        A.fails++;
    A.next = i + 1;
}

static void many_async_puts(cte_conn_t *c)
{
    enum { N = 3000 };
    char *data = malloc(4096), name[32];
    memset(data, 'z', 4096);
    memset(&A, 0, sizeof A);
    OK(cte_conn_set_window(c, 128));
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "b%d", i);
        OK(cte_put_async(c, "async", name, 0, data, 4096, -1, put_done, (void *)(intptr_t)i));
        if (cte_pending(c) > A.max_pending) A.max_pending = cte_pending(c);
        cr_assert_leq(cte_pending(c), 128, "the window bounds the requests in flight");
    }
    OK(cte_wait_all(c));
    cr_assert_eq(A.next, N);
    cr_assert_eq(A.fails, 0);
    cr_assert_geq(A.max_pending, 100, "requests were really in flight together");
    cr_assert_eq(cte_pending(c), 0);
    uint64_t n;
    OK(cte_len(c, "async", &n));
    cr_assert_eq(n, N);
    free(data);
}

LTest(libcte, many_async_puts_in_flight_complete_in_order, .init = setup, .fini = teardown)
{
    cte_conn_t *c = tcp_conn(0);
    many_async_puts(c);
    cte_conn_free(c);
}

LTest(libcte, many_async_puts_in_flight_over_shared_memory, .init = setup, .fini = teardown)
{
    cte_conn_t *c = shm_conn(0);
    many_async_puts(c);
    cte_conn_free(c);
}

static void count_done(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    int *seen = ud;
    seen[status == 0 ? 0 : status == CTE_E_SERVER ? 1 : 2]++;
    if (status == CTE_E_SERVER) cr_assert_eq(cte_reply_kind(r), CTE_REPLY_ERROR);
}

LTest(libcte, async_errors_and_a_sync_call_behind_async_ones, .init = setup, .fini = teardown)
{
    cte_conn_t *c = tcp_conn(0);
    int seen[3] = {0};
    cte_reply_t *r;
    const char *set[] = {"SET", "str", "v"};
    OK(cte_command_async(c, 3, set, NULL, count_done, seen));
    OK(cte_put_async(c, "str", "b", 0, "x", 1, -1, count_done, seen)); /* WRONGTYPE */
    OK(cte_get_async(c, "nope", "b", 0, -1, count_done, seen));
    cr_assert_eq(cte_pending(c), 3);
    OK(cte_call(c, &r, "PING", NULL)); /* waits for the three before it */
    cr_assert_eq(cte_pending(c), 0);
    cr_assert_eq(seen[0], 2);
    cr_assert_eq(seen[1], 1);
    cr_assert_str_eq(cte_reply_str(r, NULL), "PONG");
    cte_reply_free(r);
    /* cte_poll drives without blocking for ever */
    OK(cte_put_async(c, "t", "b", 0, "x", 1, -1, count_done, seen));
    int done = 0;
    for (int i = 0; i < 100 && !done; i++) done = cte_poll(c, 100);
    cr_assert_eq(done, 1);
    cr_assert_eq(seen[0], 3);
    cte_conn_free(c);
}

/* cte_flush sends and returns: a request whose reply cannot come yet (a BLPOP that waits a
 * second) is still pending after it, over every transport; cte_wait_all then completes it. */
static void flush_does_not_wait_for_replies(cte_conn_t *c)
{
    int seen[3] = {0};
    const char *blpop[] = {"BLPOP", "flush-nolist", "1"};
    OK(cte_command_async(c, 3, blpop, NULL, count_done, seen));
    OK(cte_flush(c));
    cr_assert_eq(cte_pending(c), 1, "cte_flush waited for the BLPOP's reply");
    OK(cte_wait_all(c));
    cr_assert_eq(cte_pending(c), 0);
    cr_assert_eq(seen[0], 1);
    cte_conn_free(c);
}

LTest(libcte, flush_sends_without_waiting_for_a_reply, .init = setup, .fini = teardown)
{
    char addr[160];
    flush_does_not_wait_for_replies(tcp_conn(0));
    snprintf(addr, sizeof addr, "unix:%s", S.sock);
    flush_does_not_wait_for_replies(open_or_fail(addr, 0));
    flush_does_not_wait_for_replies(shm_conn(0));
}

/* ---- the generic call ---- */

LTest(libcte, generic_call_in_resp2_and_resp3, .init = setup, .fini = teardown)
{
    cte_conn_t *c2 = tcp_conn(0), *c3 = tcp_conn(CTE_RESP3), *c = c2;
    cte_reply_t *r;
    OK(cte_call(c2, &r, "HSET", "h", "f1", "v1", "f2", "v2", NULL));
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_INTEGER);
    cr_assert_eq(cte_reply_int(r), 2);
    cte_reply_free(r);
    OK(cte_call(c2, &r, "HGETALL", "h", NULL));
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_ARRAY);
    cr_assert_eq(cte_reply_len(r), 4);
    cte_reply_free(r);
    c = c3;
    OK(cte_call(c3, &r, "HGETALL", "h", NULL));
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_MAP);
    cr_assert_eq(cte_reply_len(r), 4);
    cte_reply_free(r);
    OK(cte_call(c3, &r, "GET", "missing", NULL));
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_NULL);
    cte_reply_free(r);
    OK(cte_call(c3, &r, "SADD", "s", "a", "b", NULL));
    cte_reply_free(r);
    OK(cte_call(c3, &r, "SMEMBERS", "s", NULL));
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_SET);
    cte_reply_free(r);
    OK(cte_call(c3, &r, "ZADD", "z", "1.5", "m", NULL));
    cte_reply_free(r);
    OK(cte_call(c3, &r, "ZSCORE", "z", "m", NULL));
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_DOUBLE);
    cr_assert_float_eq(cte_reply_double(r), 1.5, 1e-12);
    cte_reply_free(r);
    c = c2;
    OK(cte_call(c2, &r, "ZSCORE", "z", "m", NULL));
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_BULK);
    cte_reply_free(r);
    const char *argv[] = {"SET", "bin", "a\0b"};
    const size_t lens[] = {3, 3, 3};
    OK(cte_command(c2, &r, 3, argv, lens));
    cte_reply_free(r);
    OK(cte_call(c2, &r, "GET", "bin", NULL));
    size_t len;
    const char *s = cte_reply_str(r, &len);
    cr_assert(len == 3 && memcmp(s, "a\0b", 3) == 0);
    cte_reply_free(r);
    cte_conn_free(c2);
    cte_conn_free(c3);
}

LTest(libcte, server_errors_come_back_with_their_message, .init = setup, .fini = teardown)
{
    cte_conn_t *c = tcp_conn(0);
    cte_reply_t *r;
    OK(cte_call(c, &r, "SET", "s", "v", NULL));
    cte_reply_free(r);
    cr_assert_eq(cte_put(c, "s", "b", 0, "x", 1, -1, NULL), CTE_E_SERVER);
    cr_assert(!strncmp(cte_conn_errmsg(c), "WRONGTYPE", 9), "[%s]", cte_conn_errmsg(c));
    cr_assert_eq(cte_call(c, &r, "NOSUCHCOMMAND", NULL), CTE_E_SERVER);
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_ERROR);
    cr_assert(strstr(cte_reply_str(r, NULL), "unknown command"), "%s", cte_reply_str(r, NULL));
    cte_reply_free(r);
    cr_assert_eq(cte_call(c, &r, "TPUT", "t", "b", "-1", "x", NULL), CTE_E_SERVER);
    cr_assert(strstr(cte_conn_errmsg(c), "negative"), "%s", cte_conn_errmsg(c));
    cte_reply_free(r);
    cr_assert_eq(cte_put(c, "t", "b", 0, "x", 1, 1.5, NULL), CTE_E_INVAL, "checked locally");
    OK(cte_call(c, &r, "PING", NULL)); /* the connection is still fine */
    cr_assert_str_eq(cte_conn_errmsg(c), "");
    cte_reply_free(r);
    cte_conn_free(c);
}

/* ---- AUTH and SELECT from the address ---- */

LTest(libcte, auth_and_select_come_from_the_address, .init = setup_auth, .fini = teardown)
{
    char addr[192];
    cte_reply_t *r;
    cte_conn_t *c = tcp_conn(0);
    cr_assert_eq(cte_call(c, &r, "GET", "k", NULL), CTE_E_SERVER);
    cr_assert(!strncmp(cte_conn_errmsg(c), "NOAUTH", 6), "%s", cte_conn_errmsg(c));
    cte_reply_free(r);
    cte_conn_free(c);

    tcp_addr(addr, sizeof addr, ":wrong@", NULL);
    c = cte_conn_new();
    cr_assert_eq(cte_conn_open(c, addr, 0), CTE_E_SERVER);
    cr_assert(!strncmp(cte_conn_errmsg(c), "WRONGPASS", 9), "%s", cte_conn_errmsg(c));
    cr_assert_eq(cte_call(c, &r, "PING", NULL), CTE_E_CLOSED, "a failed open leaves it closed");
    cte_conn_free(c);

    tcp_addr(addr, sizeof addr, ":s3cret@", "/2");
    c = open_or_fail(addr, 0);
    OK(cte_call(c, &r, "SET", "k", "in-db-2", NULL));
    cte_reply_free(r);
    cte_conn_free(c);

    tcp_addr(addr, sizeof addr, "default:s3cret@", "/2?resp=3");
    c = open_or_fail(addr, 0);
    cr_assert_eq(cte_conn_protocol(c), 3);
    OK(cte_call(c, &r, "GET", "k", NULL));
    cr_assert_str_eq(cte_reply_str(r, NULL), "in-db-2");
    cte_reply_free(r);
    cte_conn_free(c);

    snprintf(addr, sizeof addr, "unix:%s?password=s3cret", S.sock);
    c = open_or_fail(addr, 0);
    OK(cte_call(c, &r, "GET", "k", NULL));
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_NULL, "db 0 does not have it");
    cte_reply_free(r);
    cte_conn_free(c);

    tcp_addr(addr, sizeof addr, ":s3cret@", "/99");
    c = cte_conn_new();
    cr_assert_eq(cte_conn_open(c, addr, 0), CTE_E_SERVER);
    cr_assert(strstr(cte_conn_errmsg(c), "DB index is out of range"), "%s", cte_conn_errmsg(c));
    cte_conn_free(c);
}

/* ---- addresses that cannot connect ---- */

LTest(libcte, shm_to_a_missing_socket_and_bad_addresses_fail, .init = setup, .fini = teardown)
{
    cte_conn_t *c = cte_conn_new();
    char addr[160];
    cr_assert_eq(cte_conn_open(c, "shm:/nonexistent/cte.sock", 0), -ENOENT);
    cr_assert_eq(cte_conn_open(c, "tcp://127.0.0.1:0", 0), CTE_E_ADDRESS);
    cr_assert(strstr(cte_conn_errmsg(c), "port"), "%s", cte_conn_errmsg(c));
    snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", free_port());
    cr_assert_eq(cte_conn_open(c, addr, 0), -ECONNREFUSED);
    cr_assert_eq(cte_conn_open(c, "unix:/nonexistent/cte.sock", 0), -ENOENT);
    cte_conn_free(c);
    cte_conn_t *out = (cte_conn_t *)1;
    cr_assert_eq(cte_connect("bogus", 0, &out), CTE_E_ADDRESS);
    cr_assert_null(out);
}

/* ---- a fake server that misbehaves ---- */

/* Forks a child that accepts one connection, reads one request, writes reply[0..n) and then
 * closes (close_after) or sleeps. Returns the child's pid; *port gets its port. */
static pid_t fake_server(const char *reply, size_t n, int close_after, int *port)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof a;
    int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    cr_assert_eq(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(lfd, 4), 0);
    getsockname(lfd, (struct sockaddr *)&a, &len);
    *port = ntohs(a.sin_port);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        char buf[4096];
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0) _exit(1);
        if (read(fd, buf, sizeof buf) <= 0) _exit(1);
        if (n && write(fd, reply, n) != (ssize_t)n) _exit(1);
        if (!close_after) sleep(30);
        close(fd);
        _exit(0);
    }
    close(lfd);
    return pid;
}

static void reap(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void dropped(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    int *st = ud;
    *st = status;
}

LTest(libcte, a_server_that_closes_mid_reply_breaks_the_connection_cleanly)
{
    int port, st1 = 1, st2 = 1;
    char addr[64];
    pid_t pid = fake_server("*2\r\n$10\r\nabc", 13, 1, &port);
    snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", port);
    cte_conn_t *c = open_or_fail(addr, 0);
    const char *ping[] = {"PING"};
    OK(cte_command_async(c, 1, ping, NULL, dropped, &st1));
    OK(cte_command_async(c, 1, ping, NULL, dropped, &st2));
    cr_assert_eq(cte_wait_all(c), CTE_E_CLOSED);
    cr_assert_eq(st1, CTE_E_CLOSED, "every pending request hears of it");
    cr_assert_eq(st2, CTE_E_CLOSED);
    cte_reply_t *r;
    cr_assert_eq(cte_call(c, &r, "PING", NULL), CTE_E_CLOSED, "and later calls too");
    cr_assert_null(r);
    cte_conn_free(c);
    reap(pid);
}

LTest(libcte, garbage_from_the_server_is_a_protocol_error)
{
    int port;
    char addr[64];
    pid_t pid = fake_server("+OK\r\n?garbage\r\n", 16, 0, &port);
    snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", port);
    cte_conn_t *c = open_or_fail(addr, 0);
    cte_reply_t *r;
    const char *get[] = {"GET", "a"};
    OK(cte_command_async(c, 2, get, NULL, NULL, NULL));
    cr_assert_eq(cte_call(c, &r, "GET", "b", NULL), CTE_E_PROTOCOL);
    cte_conn_free(c);
    reap(pid);
    pid = fake_server("$99999999999\r\n", 14, 0, &port);
    snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", port);
    c = open_or_fail(addr, 0);
    cr_assert_eq(cte_call(c, &r, "GET", "b", NULL), CTE_E_LIMIT);
    cte_conn_free(c);
    reap(pid);
}

LTest(libcte, a_silent_server_times_out)
{
    int port;
    char addr[64];
    pid_t pid = fake_server("", 0, 0, &port);
    snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", port);
    cte_conn_t *c = open_or_fail(addr, 0);
    cte_conn_set_timeout(c, 200);
    cte_reply_t *r;
    double t0 = now_s();
    cr_assert_eq(cte_call(c, &r, "PING", NULL), CTE_E_TIMEOUT);
    cr_assert_lt(now_s() - t0, 5.0);
    cte_conn_free(c);
    reap(pid);
}

/* ---- callbacks, push messages, refused commands ---- */

typedef struct cb_probe {
    cte_conn_t *c;
    int sync_status, chained, chained_status, poll_status, wait_status;
} cb_probe_t;

static void chained_done(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    cb_probe_t *p = ud;
    p->chained_status = status;
    p->chained = 1;
}

static void probing_done(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    cb_probe_t *p = ud;
    cte_reply_t *rr;
    p->sync_status = cte_call(c, &rr, "PING", NULL); /* not allowed here */
    p->poll_status = cte_poll(c, 0);                 /* nor driving the connection */
    p->wait_status = cte_wait_all(c);
    const char *ping[] = {"PING"};
    if (cte_command_async(c, 1, ping, NULL, chained_done, p) != 0) p->chained_status = -1;
}

LTest(libcte, a_callback_may_queue_requests_but_not_wait, .init = setup, .fini = teardown)
{
    cte_conn_t *c = tcp_conn(0);
    cb_probe_t p = {c, 0, 0, 1, 0, 0};
    const char *ping[] = {"PING"};
    OK(cte_command_async(c, 1, ping, NULL, probing_done, &p));
    OK(cte_wait_all(c));
    cr_assert_eq(p.sync_status, CTE_E_BUSY);
    cr_assert_eq(p.poll_status, CTE_E_BUSY);
    cr_assert_eq(p.wait_status, CTE_E_BUSY);
    double t0 = now_s();
    cr_assert_eq(cte_poll(c, -1), 0, "nothing pending: cte_poll returns at once");
    cr_assert_lt(now_s() - t0, 1.0);
    cr_assert(p.chained, "the request queued from the callback completed in the same wait");
    cr_assert_eq(p.chained_status, 0);
    cte_conn_free(c);
}

LTest(libcte, pub_sub_commands_are_refused_not_hung, .init = setup, .fini = teardown)
{
    cte_conn_t *c = tcp_conn(CTE_RESP3);
    cte_reply_t *r;
    cr_assert_eq(cte_call(c, &r, "subscribe", "ch", NULL), CTE_E_INVAL);
    cr_assert(strstr(cte_conn_errmsg(c), "not supported"), "%s", cte_conn_errmsg(c));
    const char *mon[] = {"MONITOR"};
    cr_assert_eq(cte_command_async(c, 1, mon, NULL, NULL, NULL), CTE_E_INVAL);
    cr_assert_eq(cte_pending(c), 0);
    OK(cte_call(c, &r, "PING", NULL));
    cte_reply_free(r);
    cte_conn_free(c);
}

static void count_push(cte_conn_t *c, const cte_reply_t *push, void *ud)
{
    int *n = ud;
    if (cte_reply_kind(push) == CTE_REPLY_PUSH && cte_reply_len(push) == 2) (*n)++;
}

LTest(libcte, push_messages_go_to_the_push_callback)
{
    int port, pushes = 0;
    char addr[64];
    const char script[] = ">2\r\n+invalidate\r\n+k\r\n+OK\r\n";
    pid_t pid = fake_server(script, sizeof script - 1, 0, &port);
    snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", port);
    cte_conn_t *c = open_or_fail(addr, 0);
    cte_conn_set_push_cb(c, count_push, &pushes);
    cte_reply_t *r;
    OK(cte_call(c, &r, "GET", "k", NULL));
    cr_assert_str_eq(cte_reply_str(r, NULL), "OK", "the push did not take the reply's place");
    cr_assert_eq(pushes, 1);
    cte_reply_free(r);
    cte_conn_free(c);
    reap(pid);
}

/* Every allocation libcte makes during open and a few calls may fail: each must come back as
 * a status (never a crash), and ASan builds check that nothing leaks. */
LTest(libcte, allocation_failures_are_statuses, .init = setup, .fini = teardown)
{
    char addr[128], big[20000];
    int completed = 0;
    tcp_addr(addr, sizeof addr, NULL, "?resp=3");
    memset(big, 'q', sizeof big);
    for (long n = 0; n < 400 && !completed; n++) {
        cte__alloc_fail_after(n);
        cte_conn_t *c = cte_conn_new();
        int rc = c ? cte_conn_open(c, addr, 0) : CTE_E_NOMEM;
        uint64_t size;
        cte_reply_t *r = NULL;
        if (rc == 0) rc = cte_put(c, "oom", "b", 0, big, sizeof big, 0.5, &size);
        if (rc == 0) rc = cte_put_async(c, "oom", "b2", 0, "x", 1, -1, NULL, NULL);
        if (rc == 0) rc = cte_wait_all(c);
        if (rc == 0) rc = cte_call(c, &r, "HELLO", "3", NULL);
        cte__alloc_fail_after(-1);
        cr_assert(rc == 0 || rc == CTE_E_NOMEM, "failing allocation %ld: %s", n, cte_strerror(rc));
        if (rc == 0) {
            completed = 1;
            cr_assert_eq(size, sizeof big);
            cr_assert_eq(cte_reply_kind(r), CTE_REPLY_MAP);
        }
        cte_reply_free(r);
        cte_conn_free(c);
    }
    cr_assert(completed, "400 allocations were not enough");
}

/* A listener whose accept queue is full drops new SYNs, so connect() would hang for minutes
 * of SYN retries: with a timeout set before opening, the open gives up in time. */
LTest(libcte, connecting_gives_up_after_the_timeout)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof a;
    int lfd = socket(AF_INET, SOCK_STREAM, 0), fillers[8], nf = 0;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(lfd, 0), 0);
    getsockname(lfd, (struct sockaddr *)&a, &len);
    for (; nf < 8; nf++) { /* fill the accept queue (and the SYN queue behind it) */
        fillers[nf] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        connect(fillers[nf], (struct sockaddr *)&a, sizeof a);
    }
    usleep(100000);
    char addr[64];
    snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", ntohs(a.sin_port));
    cte_conn_t *c = cte_conn_new();
    cte_conn_set_timeout(c, 300);
    double t0 = now_s();
    cr_assert_eq(cte_conn_open(c, addr, 0), CTE_E_TIMEOUT, "%s", cte_conn_errmsg(c));
    cr_assert(strstr(cte_conn_errmsg(c), "connect to"), "%s", cte_conn_errmsg(c));
    cr_assert_lt(now_s() - t0, 3.0);
    cte_conn_free(c);
    for (int i = 0; i < nf; i++) close(fillers[i]);
    close(lfd);
}

/* ---- every RESP type from a real server: DEBUG PROTOCOL ---- */

typedef struct proto_case {
    const char *type;
    cte_reply_kind_t resp3, resp2;
    size_t len; /* elements of an aggregate */
} proto_case_t;

static const proto_case_t PROTO[] = {
    {"string", CTE_REPLY_BULK, CTE_REPLY_BULK, 0},
    {"integer", CTE_REPLY_INTEGER, CTE_REPLY_INTEGER, 0},
    {"double", CTE_REPLY_DOUBLE, CTE_REPLY_BULK, 0},
    {"bignum", CTE_REPLY_BIGNUM, CTE_REPLY_BULK, 0},
    {"null", CTE_REPLY_NULL, CTE_REPLY_NULL, 0},
    {"array", CTE_REPLY_ARRAY, CTE_REPLY_ARRAY, 3},
    {"set", CTE_REPLY_SET, CTE_REPLY_ARRAY, 3},
    {"map", CTE_REPLY_MAP, CTE_REPLY_ARRAY, 6},
    {"attrib", CTE_REPLY_BULK, CTE_REPLY_BULK, 0},
    {"true", CTE_REPLY_BOOL, CTE_REPLY_INTEGER, 0},
    {"false", CTE_REPLY_BOOL, CTE_REPLY_INTEGER, 0},
    {"verbatim", CTE_REPLY_VERBATIM, CTE_REPLY_BULK, 0},
};

static void every_resp_type(void)
{
    for (int proto = 2; proto <= 3; proto++) {
        cte_conn_t *c = tcp_conn(proto == 3 ? CTE_RESP3 : 0);
        int pushes = 0;
        cte_conn_set_push_cb(c, count_push, &pushes);
        for (size_t i = 0; i < sizeof PROTO / sizeof PROTO[0]; i++) {
            const proto_case_t *pc = &PROTO[i];
            cte_reply_t *r;
            OK(cte_call(c, &r, "DEBUG", "PROTOCOL", pc->type, NULL));
            cte_reply_kind_t want = proto == 3 ? pc->resp3 : pc->resp2;
            cr_assert_eq(cte_reply_kind(r), want, "RESP%d %s: kind %d, want %d", proto, pc->type,
                         cte_reply_kind(r), want);
            cr_assert_eq(cte_reply_len(r), pc->len, "RESP%d %s", proto, pc->type);
            if (!strcmp(pc->type, "attrib"))
                cr_assert_str_eq(cte_reply_str(r, NULL), "Some real reply following the attribute");
            if (!strcmp(pc->type, "double") && proto == 3)
                cr_assert_float_eq(cte_reply_double(r), 3.141, 1e-9);
            if (!strcmp(pc->type, "true") || !strcmp(pc->type, "false"))
                cr_assert_eq(cte_reply_int(r), pc->type[0] == 't');
            if (!strcmp(pc->type, "verbatim")) {
                cr_assert_str_eq(cte_reply_str(r, NULL), "This is a verbatim\nstring");
                cr_assert_str_eq(cte_reply_format(r), proto == 3 ? "txt" : "");
            }
            cte_reply_free(r);
        }
        if (proto == 3) {
            cte_reply_t *r;
            OK(cte_call(c, &r, "DEBUG", "PROTOCOL", "push", NULL));
            cr_assert_str_eq(cte_reply_str(r, NULL), "Some real reply following the push reply");
            cr_assert_eq(pushes, 1);
            cte_reply_free(r);
        }
        cte_conn_free(c);
    }
}

LTest(libcte, every_resp_type_from_cte_server, .init = setup, .fini = teardown)
{
    every_resp_type();
}

LTest(libcte, every_resp_type_from_redis_server, .init = setup_redis, .fini = teardown)
{
    every_resp_type();
}

/* Arguments of 16 KiB or more are sent from the caller's memory, smaller ones are copied when
 * queued: changing both buffers after queueing shows which is which (and why an async
 * payload must stay unchanged until its callback). */
LTest(libcte, large_payloads_are_sent_from_the_callers_buffer, .init = setup, .fini = teardown)
{
    cte_conn_t *c = tcp_conn(0);
    static char small[1024], large[20 * 1024];
    const void *view;
    size_t len;
    memset(small, 'a', sizeof small);
    memset(large, 'a', sizeof large);
    OK(cte_put_async(c, "zc", "small", 0, small, sizeof small, -1, NULL, NULL));
    OK(cte_put_async(c, "zc", "large", 0, large, sizeof large, -1, NULL, NULL));
    memset(small, 'b', sizeof small);
    memset(large, 'b', sizeof large);
    OK(cte_wait_all(c));
    OK(cte_get_view(c, "zc", "small", 0, 1, &view, &len));
    cr_assert_eq(*(const char *)view, 'a', "a small payload was copied when queued");
    OK(cte_get_view(c, "zc", "large", 0, -1, &view, &len));
    cr_assert_eq(len, sizeof large);
    cr_assert_eq(((const char *)view)[0], 'b', "a large one went from the caller's buffer");
    cr_assert_eq(((const char *)view)[len - 1], 'b');
    cte_conn_free(c);
}

/* One connection per thread: four threads, each with its own connection, mixing async puts
 * and sync reads at the same time; no state is shared between connections. */
typedef struct thread_job {
    char addr[160];
    int id, errors;
    char vals[500][48]; /* async payloads live until their callbacks ran */
} thread_job_t;

static void *thread_main(void *arg)
{
    thread_job_t *j = arg;
    cte_conn_t *c;
    char tag[16], name[16], buf[64], want[64];
    size_t len;
    if (cte_connect(j->addr, j->id % 2 ? CTE_RESP3 : 0, &c) != 0) {
        j->errors++;
        return NULL;
    }
    snprintf(tag, sizeof tag, "thr%d", j->id);
    for (int i = 0; i < 500; i++) {
        snprintf(name, sizeof name, "b%d", i);
        snprintf(j->vals[i], sizeof j->vals[i], "value %d of thread %d", i, j->id);
        if (cte_put_async(c, tag, name, 0, j->vals[i], strlen(j->vals[i]), -1, NULL, NULL) != 0)
            j->errors++;
    }
    if (cte_wait_all(c) != 0) j->errors++;
    for (int i = 0; i < 500; i += 7) {
        snprintf(name, sizeof name, "b%d", i);
        snprintf(want, sizeof want, "value %d of thread %d", i, j->id);
        if (cte_get(c, tag, name, 0, -1, buf, sizeof buf, &len) != 0 || len != strlen(want) ||
            memcmp(buf, want, len) != 0)
            j->errors++;
    }
    cte_conn_free(c);
    return NULL;
}

LTest(libcte, one_connection_per_thread_runs_in_parallel, .init = setup, .fini = teardown)
{
    pthread_t t[4];
    static thread_job_t jobs[4];
    for (int i = 0; i < 4; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].id = i;
        if (i % 2)
            snprintf(jobs[i].addr, sizeof jobs[i].addr, "unix:%s", S.sock);
        else
            tcp_addr(jobs[i].addr, sizeof jobs[i].addr, NULL, NULL);
        cr_assert_eq(pthread_create(&t[i], NULL, thread_main, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        cr_assert_eq(jobs[i].errors, 0, "thread %d had %d errors", i, jobs[i].errors);
    }
}

LTest(libcte, hello_and_reset_through_the_generic_call_are_followed, .init = setup,
      .fini = teardown)
{
    cte_conn_t *c = tcp_conn(0);
    cte_reply_t *r;
    cr_assert_eq(cte_conn_protocol(c), 2);
    OK(cte_call(c, &r, "hello", "3", NULL));
    cr_assert_eq(cte_reply_kind(r), CTE_REPLY_MAP);
    cr_assert_eq(cte_conn_protocol(c), 3);
    cte_reply_free(r);
    double score;
    OK(cte_put(c, "t", "b", 0, "x", 1, 0.25, NULL));
    OK(cte_score(c, "t", "b", &score)); /* a RESP3 double now */
    cr_assert_float_eq(score, 0.25, 1e-9);
    OK(cte_call(c, &r, "RESET", NULL));
    cr_assert_eq(cte_conn_protocol(c), 2);
    cte_reply_free(r);
    OK(cte_score(c, "t", "b", &score)); /* a RESP2 bulk again */
    cr_assert_float_eq(score, 0.25, 1e-9);
    cte_conn_free(c);
}
