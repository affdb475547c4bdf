/* test_hiredis.c - the real cte-server binary driven by hiredis (Debian's 0.14, RESP2 only):
 * a realistic synchronous session over TCP and the Unix socket (strings, counters, hashes,
 * sorted sets, errors, binary-safe and large values, 1000 pipelined commands), and the
 * asynchronous API on libuv through hiredis's own adapter.
 *
 * Each test fork/execs its own server (path from env CTE_SERVER, else ./cte-server or
 * build/cte-server) on a free loopback port with its own temp dir and Unix socket, waits for
 * PING, and stops it with SIGTERM, requiring exit status 0. The server child gets
 * PR_SET_PDEATHSIG, so that it dies with the test process even if the test crashes; its log is
 * copied to stderr when it does not stop cleanly, and its temp dir removed with all it holds.
 * Run with --jobs 1 (ctest does): one server at a time. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <hiredis/adapters/libuv.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <uv.h>

#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/itest_server.h"

/* ---- the server under test (itest_server.h) ---- */

static void exec_server(void)
{
    const char *extra[] = {"--appendonly", "no", NULL};
    itest_exec(NULL, extra);
}

/* Waits until the server answers PING; returns 0, or -1 if it exited or timed out. */
static int wait_ready(void)
{
    double deadline = now_s() + start_timeout();
    struct timeval tv = {1, 0};

    while (now_s() < deadline) {
        int status;
        if (waitpid(S.pid, &status, WNOHANG) == S.pid) {
            S.pid = 0;
            return -1;
        }
        redisContext *c = redisConnectWithTimeout("127.0.0.1", S.port, tv);
        if (c && !c->err) {
            redisReply *r = redisCommand(c, "PING");
            int ok = r && r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "PONG");
            if (r) freeReplyObject(r);
            redisFree(c);
            if (ok) return 0;
        } else if (c) {
            redisFree(c);
        }
        usleep(20000);
    }
    return -1;
}

/* Stops the server with SIGTERM; returns its exit status (or -1 if it had to be killed). */
static void setup(void)
{
    itest_start("cte-hiredis-", exec_server, wait_ready);
}

static void teardown(void)
{
    itest_stop();
}

/* ---- helpers for replies ---- */

static redisReply *cmd(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    cr_assert_not_null(r, "no reply to %s: %s", fmt, c->errstr);
    return r;
}

static void expect_status(redisContext *c, const char *want, redisReply *r)
{
    (void)c;
    cr_assert_eq(r->type, REDIS_REPLY_STATUS, "type %d (%s)", r->type, r->str ? r->str : "");
    cr_assert_str_eq(r->str, want);
    freeReplyObject(r);
}

static void expect_int(long long want, redisReply *r)
{
    cr_assert_eq(r->type, REDIS_REPLY_INTEGER, "type %d (%s)", r->type, r->str ? r->str : "");
    cr_assert_eq(r->integer, want, "%lld, not %lld", r->integer, want);
    freeReplyObject(r);
}

static void expect_str(const char *want, redisReply *r)
{
    cr_assert_eq(r->type, REDIS_REPLY_STRING, "type %d (%s)", r->type, r->str ? r->str : "");
    cr_assert_eq(r->len, strlen(want));
    cr_assert_str_eq(r->str, want);
    freeReplyObject(r);
}

static void expect_element(redisReply *arr, size_t i, const char *want)
{
    cr_assert_lt(i, arr->elements);
    cr_assert_eq(arr->element[i]->type, REDIS_REPLY_STRING);
    cr_assert_str_eq(arr->element[i]->str, want, "element %zu", i);
}

static redisContext *connect_tcp(void)
{
    struct timeval tv = {10, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", S.port, tv);
    cr_assert(c && !c->err, "connect: %s", c ? c->errstr : "out of memory");
    redisSetTimeout(c, tv);
    return c;
}

static redisContext *connect_unix(void)
{
    struct timeval tv = {10, 0};
    redisContext *c = redisConnectUnixWithTimeout(S.sock, tv);
    cr_assert(c && !c->err, "connect %s: %s", S.sock, c ? c->errstr : "out of memory");
    redisSetTimeout(c, tv);
    return c;
}

/* ---- the synchronous session ---- */

static void strings_and_counters(redisContext *c)
{
    expect_status(c, "OK", cmd(c, "SET %s %s", "greeting", "hello world"));
    expect_str("hello world", cmd(c, "GET greeting"));
    redisReply *r = cmd(c, "GET nokey");
    cr_assert_eq(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    for (int i = 1; i <= 3; i++) expect_int(i, cmd(c, "INCR counter"));
    expect_int(13, cmd(c, "INCRBY counter %d", 10));
    expect_int(-7, cmd(c, "DECRBY counter 20"));
    expect_str("-7", cmd(c, "GET counter"));
    expect_int(11, cmd(c, "APPEND greeting %s", ""));
    r = cmd(c, "INCR greeting");
    cr_assert_eq(r->type, REDIS_REPLY_ERROR);
    cr_assert_str_eq(r->str, "ERR value is not an integer or out of range");
    freeReplyObject(r);
    r = cmd(c, "MGET greeting nokey counter");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(r->elements, 3);
    expect_element(r, 0, "hello world");
    cr_assert_eq(r->element[1]->type, REDIS_REPLY_NIL);
    expect_element(r, 2, "-7");
    freeReplyObject(r);
}

static void hashes(redisContext *c)
{
    expect_int(2, cmd(c, "HSET user:1 name %s age %d", "Ada Lovelace", 36));
    expect_int(0, cmd(c, "HSET user:1 age %d", 37));
    expect_str("37", cmd(c, "HGET user:1 age"));
    expect_int(40, cmd(c, "HINCRBY user:1 age 3"));
    redisReply *r = cmd(c, "HGETALL user:1");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(r->elements, 4);
    expect_element(r, 0, "name"); /* a small hash keeps insertion order, as in Redis */
    expect_element(r, 1, "Ada Lovelace");
    expect_element(r, 2, "age");
    expect_element(r, 3, "40");
    freeReplyObject(r);
    r = cmd(c, "HGETALL nokey");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(r->elements, 0);
    freeReplyObject(r);
    r = cmd(c, "GET user:1");
    cr_assert_eq(r->type, REDIS_REPLY_ERROR);
    cr_assert_str_eq(r->str, "WRONGTYPE Operation against a key holding the wrong kind of value");
    freeReplyObject(r);
}

static void sorted_sets(redisContext *c)
{
    expect_int(4, cmd(c, "ZADD board 1 ada 2.5 bob -1 cy 1e10 dee"));
    expect_str("3.5", cmd(c, "ZINCRBY board 1 bob"));
    redisReply *r = cmd(c, "ZRANGE board 0 -1 WITHSCORES");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(r->elements, 8);
    const char *want[] = {"cy", "-1", "ada", "1", "bob", "3.5", "dee", "10000000000"};
    for (size_t i = 0; i < 8; i++) expect_element(r, i, want[i]);
    freeReplyObject(r);
    r = cmd(c, "ZRANGE board (1 +inf BYSCORE LIMIT 0 1");
    cr_assert_eq(r->elements, 1);
    expect_element(r, 0, "bob");
    freeReplyObject(r);
    expect_int(2, cmd(c, "ZRANK board bob"));
    r = cmd(c, "ZSCORE board nobody");
    cr_assert_eq(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
}

static void binary_values(redisContext *c)
{
    const char key[] = "bin\0key\r\n";
    const char val[] = "a\0b\r\nc\r\n\0$3\r\n*1\r\n";
    size_t klen = sizeof key - 1, vlen = sizeof val - 1;

    expect_status(c, "OK", cmd(c, "SET %b %b", key, klen, val, vlen));
    redisReply *r = cmd(c, "GET %b", key, klen);
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_eq(r->len, vlen);
    cr_assert_eq(memcmp(r->str, val, vlen), 0);
    freeReplyObject(r);
    expect_int((long long)vlen, cmd(c, "STRLEN %b", key, klen));
    expect_int(1, cmd(c, "HSET binhash %b %b", val, vlen, val, vlen));
    r = cmd(c, "HGET binhash %b", val, vlen);
    cr_assert_eq(r->len, vlen);
    cr_assert_eq(memcmp(r->str, val, vlen), 0);
    freeReplyObject(r);

    size_t big = 4u << 20; /* 4 MB of every byte value */
    char *data = malloc(big);
    cr_assert_not_null(data);
    for (size_t i = 0; i < big; i++) data[i] = (char)(i * 131 + (i >> 13));
    expect_status(c, "OK", cmd(c, "SET big %b", data, big));
    r = cmd(c, "GET big");
    cr_assert_eq(r->type, REDIS_REPLY_STRING);
    cr_assert_eq(r->len, big);
    cr_assert_eq(memcmp(r->str, data, big), 0, "4 MB value came back different");
    freeReplyObject(r);
    free(data);
}

static void pipeline(redisContext *c)
{
    enum { N = 1000 };
    for (int i = 0; i < N; i++)
        cr_assert_eq(redisAppendCommand(c, "SET pipe:%d value-%d", i, i), REDIS_OK);
    for (int i = 0; i < N; i++) {
        redisReply *r = NULL;
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK, "reply %d: %s", i, c->errstr);
        expect_status(c, "OK", r);
    }
    for (int i = 0; i < N; i++) {
        cr_assert_eq(redisAppendCommand(c, "GET pipe:%d", i), REDIS_OK);
        cr_assert_eq(redisAppendCommand(c, "INCR pipecount"), REDIS_OK);
    }
    for (int i = 0; i < N; i++) {
        char want[32];
        redisReply *r = NULL;
        snprintf(want, sizeof want, "value-%d", i);
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
        expect_str(want, r);
        cr_assert_eq(redisGetReply(c, (void **)&r), REDIS_OK);
        expect_int(i + 1, r);
    }
    redisReply *r = cmd(c, "DBSIZE");
    cr_assert_eq(r->type, REDIS_REPLY_INTEGER);
    cr_assert_geq(r->integer, N + 1);
    freeReplyObject(r);
}

static void transaction(redisContext *c)
{
    expect_status(c, "OK", cmd(c, "MULTI"));
    expect_status(c, "QUEUED", cmd(c, "SET tx 1"));
    expect_status(c, "QUEUED", cmd(c, "INCR tx"));
    expect_status(c, "QUEUED", cmd(c, "HSET tx f v"));
    redisReply *r = cmd(c, "EXEC");
    cr_assert_eq(r->type, REDIS_REPLY_ARRAY);
    cr_assert_eq(r->elements, 3);
    cr_assert_eq(r->element[0]->type, REDIS_REPLY_STATUS);
    cr_assert_eq(r->element[1]->integer, 2);
    cr_assert_eq(r->element[2]->type, REDIS_REPLY_ERROR);
    cr_assert_eq(strncmp(r->element[2]->str, "WRONGTYPE", 9), 0);
    freeReplyObject(r);
}

TestSuite(hiredis_sync, .init = setup, .fini = teardown, .timeout = 120);

Test(hiredis_sync, realistic_session_over_tcp_gets_the_replies_redis_would_send)
{
    redisContext *c = connect_tcp();
    expect_status(c, "PONG", cmd(c, "PING"));
    strings_and_counters(c);
    hashes(c);
    sorted_sets(c);
    binary_values(c);
    pipeline(c);
    transaction(c);
    redisFree(c);
}

Test(hiredis_sync, the_unix_socket_serves_the_same_keyspace)
{
    redisContext *t = connect_tcp();
    redisContext *u = connect_unix();
    expect_status(t, "OK", cmd(t, "SET shared %s", "via-tcp"));
    expect_str("via-tcp", cmd(u, "GET shared"));
    pipeline(u);
    expect_str("value-999", cmd(t, "GET pipe:999"));
    redisFree(t);
    redisFree(u);
}

/* ---- the asynchronous API on libuv ---- */

enum { ASYNC_N = 100 };

typedef struct async_state {
    uv_loop_t *loop;
    uv_timer_t watchdog;
    redisAsyncContext *ac;
    int connected, disconnected, timed_out;
    int sets_ok, gets_ok, replies, bad;
    char first_bad[200];
} async_state_t;

static async_state_t A;

static void note_bad(const char *what, int i, redisReply *r)
{
    if (A.bad++ == 0)
        snprintf(A.first_bad, sizeof A.first_bad, "%s #%d: type %d '%s'", what, i, r ? r->type : -1,
                 r && r->str ? r->str : "(none)");
}

static void maybe_finish(void)
{
    if (A.timed_out) return; /* redisAsyncFree is calling back with NULL replies */
    if (++A.replies == 2 * ASYNC_N) {
        redisAsyncDisconnect(A.ac); /* the loop ends once the adapter's handles close */
        uv_timer_stop(&A.watchdog);
        uv_close((uv_handle_t *)&A.watchdog, NULL);
    }
}

static void on_set(redisAsyncContext *ac, void *reply, void *privdata)
{
    redisReply *r = reply;
    int i = (int)(intptr_t)privdata;
    (void)ac;
    if (r && r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "OK") && A.gets_ok == 0 &&
        A.sets_ok == i)
        A.sets_ok++; /* in order, and before any GET */
    else
        note_bad("SET", i, r);
    maybe_finish();
}

static void on_get(redisAsyncContext *ac, void *reply, void *privdata)
{
    redisReply *r = reply;
    int i = (int)(intptr_t)privdata;
    char want[32];
    (void)ac;
    snprintf(want, sizeof want, "val:%d", i);
    if (r && r->type == REDIS_REPLY_STRING && !strcmp(r->str, want) && A.gets_ok == i)
        A.gets_ok++;
    else
        note_bad("GET", i, r);
    maybe_finish();
}

static void on_connect(const redisAsyncContext *ac, int status)
{
    (void)ac;
    A.connected = status == REDIS_OK ? 1 : -1;
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    (void)ac;
    (void)status;
    A.disconnected = 1;
}

static void on_watchdog(uv_timer_t *t)
{
    A.timed_out = 1;
    uv_close((uv_handle_t *)t, NULL);
    redisAsyncFree(A.ac); /* not Disconnect: that would wait for the missing replies */
}

TestSuite(hiredis_async, .init = setup, .fini = teardown, .timeout = 120);

Test(hiredis_async, hundred_sets_then_gets_on_libuv_all_answered_in_order)
{
    uv_loop_t loop;
    memset(&A, 0, sizeof A);
    cr_assert_eq(uv_loop_init(&loop), 0);
    A.loop = &loop;
    A.ac = redisAsyncConnect("127.0.0.1", S.port);
    cr_assert(A.ac && !A.ac->err, "redisAsyncConnect: %s", A.ac ? A.ac->errstr : "no memory");
    cr_assert_eq(redisLibuvAttach(A.ac, &loop), REDIS_OK);
    redisAsyncSetConnectCallback(A.ac, on_connect);
    redisAsyncSetDisconnectCallback(A.ac, on_disconnect);
    uv_timer_init(&loop, &A.watchdog);
    uv_timer_start(&A.watchdog, on_watchdog, 20000, 0);

    for (int i = 0; i < ASYNC_N; i++)
        cr_assert_eq(
            redisAsyncCommand(A.ac, on_set, (void *)(intptr_t)i, "SET akey:%d val:%d", i, i),
            REDIS_OK);
    for (int i = 0; i < ASYNC_N; i++)
        cr_assert_eq(redisAsyncCommand(A.ac, on_get, (void *)(intptr_t)i, "GET akey:%d", i),
                     REDIS_OK);
    uv_run(&loop, UV_RUN_DEFAULT);

    cr_expect_eq(A.connected, 1);
    cr_expect_eq(A.timed_out, 0, "no complete answer within 20 s (%d replies)", A.replies);
    cr_expect_eq(A.bad, 0, "%d bad replies; first: %s", A.bad, A.first_bad);
    cr_expect_eq(A.sets_ok, ASYNC_N);
    cr_expect_eq(A.gets_ok, ASYNC_N);
    cr_expect_eq(A.disconnected, 1);
    uv_run(&loop, UV_RUN_NOWAIT);
    cr_expect_eq(uv_loop_close(&loop), 0, "handles left open on the loop");
}
