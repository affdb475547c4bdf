/* Tests for transactions (server/multi.c) and pub/sub (server/pubsub.c) through socketless
 * clients. */
#include "tests/unit/server/harness.h"
#include "common/buf.h"
#include "server/client.h"
#include "server/server.h"

#include <criterion/criterion.h>
#include <string.h>

static client_t *a, *b;

static void setup(void)
{
    a = harness_server_start(0, NULL);
    b = client_new(NULL, NULL, -1);
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(multi_pubsub, .init = setup, .fini = teardown);

/* Sends an inline command from c; returns everything c received since the last call. */
static const char *run(client_t *c, const char *line)
{
    static char out[4096];
    client_feed(c, line, strlen(line));
    client_feed(c, "\r\n", 2);
    size_t n = c->out.len < sizeof(out) - 1 ? c->out.len : sizeof(out) - 1;
    memcpy(out, c->out.data ? c->out.data : "", n);
    out[n] = '\0';
    buf_clear(&c->out);
    return out;
}

static const char *pending(client_t *c)
{
    static char out[4096];
    size_t n = c->out.len < sizeof(out) - 1 ? c->out.len : sizeof(out) - 1;
    memcpy(out, c->out.data ? c->out.data : "", n);
    out[n] = '\0';
    buf_clear(&c->out);
    return out;
}

Test(multi_pubsub, exec_runs_the_queued_commands_in_order)
{
    cr_assert_str_eq(run(a, "MULTI"), "+OK\r\n");
    cr_assert_str_eq(run(a, "SET k 1"), "+QUEUED\r\n");
    cr_assert_str_eq(run(a, "INCR k"), "+QUEUED\r\n");
    cr_assert_str_eq(run(a, "GET k"), "+QUEUED\r\n");
    cr_assert_str_eq(run(b, "GET k"), "$-1\r\n");
    cr_assert_str_eq(run(a, "EXEC"), "*3\r\n+OK\r\n:2\r\n$1\r\n2\r\n");
    cr_assert_str_eq(run(a, "EXEC"), "-ERR EXEC without MULTI\r\n");
}

Test(multi_pubsub, errors_while_queueing_abort_exec)
{
    run(a, "MULTI");
    cr_assert_str_eq(run(a, "SET k"), "-ERR wrong number of arguments for 'set' command\r\n");
    cr_assert_str_eq(run(a, "SET k 1"), "+QUEUED\r\n");
    cr_assert_str_eq(run(a, "EXEC"),
                     "-EXECABORT Transaction discarded because of previous errors.\r\n");
    cr_assert_str_eq(run(a, "GET k"), "$-1\r\n");
}

Test(multi_pubsub, runtime_errors_do_not_stop_the_transaction)
{
    run(a, "SET s x");
    run(a, "MULTI");
    run(a, "INCR s");
    run(a, "SET t 1");
    cr_assert_str_eq(run(a, "EXEC"),
                     "*2\r\n-ERR value is not an integer or out of range\r\n+OK\r\n");
}

Test(multi_pubsub, nesting_discard_and_watch_inside_multi_are_refused)
{
    run(a, "MULTI");
    cr_assert_str_eq(run(a, "MULTI"), "-ERR MULTI calls can not be nested\r\n");
    cr_assert_str_eq(run(a, "WATCH k"), "-ERR WATCH inside MULTI is not allowed\r\n");
    cr_assert_str_eq(run(a, "DISCARD"), "+OK\r\n");
    cr_assert_str_eq(run(a, "DISCARD"), "-ERR DISCARD without MULTI\r\n");
}

Test(multi_pubsub, a_write_to_a_watched_key_fails_exec)
{
    run(a, "SET k 1");
    cr_assert_str_eq(run(a, "WATCH k"), "+OK\r\n");
    run(b, "SET k 2");
    run(a, "MULTI");
    run(a, "SET k 3");
    cr_assert_str_eq(run(a, "EXEC"), "*-1\r\n");
    cr_assert_str_eq(run(a, "GET k"), "$1\r\n2\r\n");
    /* the watch is gone after EXEC */
    run(b, "SET k 4");
    run(a, "MULTI");
    run(a, "SET k 5");
    cr_assert_str_eq(run(a, "EXEC"), "*1\r\n+OK\r\n");
}

Test(multi_pubsub, unwatch_and_untouched_keys_let_exec_run)
{
    run(a, "WATCH k other");
    run(b, "SET unrelated 1");
    run(a, "MULTI");
    run(a, "PING");
    cr_assert_str_eq(run(a, "EXEC"), "*1\r\n+PONG\r\n");
    run(a, "WATCH k");
    run(a, "UNWATCH");
    run(b, "SET k 1");
    run(a, "MULTI");
    run(a, "PING");
    cr_assert_str_eq(run(a, "EXEC"), "*1\r\n+PONG\r\n");
}

Test(multi_pubsub, flushall_breaks_watches_on_existing_keys)
{
    run(a, "SET k 1");
    run(a, "WATCH k");
    run(b, "FLUSHALL");
    run(a, "MULTI");
    run(a, "PING");
    cr_assert_str_eq(run(a, "EXEC"), "*-1\r\n");
}

Test(multi_pubsub, exec_in_resp3_fails_with_null)
{
    run(a, "HELLO 3");
    run(a, "WATCH k");
    run(b, "SET k 1");
    run(a, "MULTI");
    run(a, "PING");
    cr_assert_str_eq(run(a, "EXEC"), "_\r\n");
}

Test(multi_pubsub, publish_reaches_channel_and_pattern_subscribers)
{
    cr_assert_str_eq(run(a, "SUBSCRIBE news"), "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n");
    cr_assert_str_eq(run(b, "PSUBSCRIBE n*"), "*3\r\n$10\r\npsubscribe\r\n$2\r\nn*\r\n:1\r\n");
    client_t *p = client_new(NULL, NULL, -1);
    cr_assert_str_eq(run(p, "PUBLISH news hi"), ":2\r\n");
    cr_assert_str_eq(pending(a), "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
    cr_assert_str_eq(pending(b),
                     "*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
    cr_assert_str_eq(run(p, "PUBSUB NUMSUB news other"),
                     "*4\r\n$4\r\nnews\r\n:1\r\n$5\r\nother\r\n:0\r\n");
    cr_assert_str_eq(run(p, "PUBSUB NUMPAT"), ":1\r\n");
    cr_assert_str_eq(run(p, "PUBSUB CHANNELS"), "*1\r\n$4\r\nnews\r\n");
}

Test(multi_pubsub, resp2_subscribed_clients_may_only_run_pubsub_commands)
{
    run(a, "SUBSCRIBE c");
    cr_assert_str_eq(run(a, "GET k"),
                     "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
                     "QUIT / RESET are allowed in this context\r\n");
    cr_assert_str_eq(run(a, "PING"), "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
    cr_assert_str_eq(run(a, "UNSUBSCRIBE"), "*3\r\n$11\r\nunsubscribe\r\n$1\r\nc\r\n:0\r\n");
    cr_assert_str_eq(run(a, "UNSUBSCRIBE"), "*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n");
    cr_assert_str_eq(run(a, "GET k"), "$-1\r\n");
}

Test(multi_pubsub, resp3_subscribers_get_pushes_and_may_run_anything)
{
    run(a, "HELLO 3");
    cr_assert_str_eq(run(a, "SUBSCRIBE c"), ">3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n");
    cr_assert_str_eq(run(a, "GET k"), "_\r\n");
    run(b, "PUBLISH c m");
    cr_assert_str_eq(pending(a), ">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n");
}

Test(multi_pubsub, keyspace_notifications_follow_the_config)
{
    run(a, "PSUBSCRIBE __key*__:*");
    run(b, "SET k v");
    cr_assert_str_eq(pending(a), "");
    run(b, "CONFIG SET notify-keyspace-events KEA");
    run(b, "SET k v");
    cr_assert_str_eq(pending(a),
                     "*4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$16\r\n__keyspace@0__:k\r\n"
                     "$3\r\nset\r\n"
                     "*4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$18\r\n__keyevent@0__:set\r\n"
                     "$1\r\nk\r\n");
    run(b, "CONFIG SET notify-keyspace-events Eg");
    run(b, "SET k v");
    cr_assert_str_eq(pending(a), "");
    run(b, "DEL k");
    cr_assert_str_eq(pending(a),
                     "*4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$18\r\n__keyevent@0__:del\r\n"
                     "$1\r\nk\r\n");
}

/* Redis 7.0's TCL test "Keyspace notifications: new key test": class n, not part of A. */
Test(multi_pubsub, new_keys_send_the_new_event_once)
{
    run(a, "PSUBSCRIBE *");
    pending(a);
    run(b, "CONFIG SET notify-keyspace-events En");
    run(b, "SET foo bar");
    run(b, "SET foo baz");
    run(b, "SET bar bar");
    cr_assert_str_eq(pending(a),
                     "*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$18\r\n__keyevent@0__:new\r\n"
                     "$3\r\nfoo\r\n"
                     "*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$18\r\n__keyevent@0__:new\r\n"
                     "$3\r\nbar\r\n");
    run(b, "CONFIG SET notify-keyspace-events EA");
    run(b, "SET baz 1");
    cr_assert_null(strstr(pending(a), ":new"));
}

Test(multi_pubsub, reset_leaves_subscriptions_and_transactions)
{
    run(a, "SUBSCRIBE c");
    cr_assert_str_eq(run(a, "RESET"), "+RESET\r\n");
    cr_assert_str_eq(run(b, "PUBLISH c m"), ":0\r\n");
    run(a, "MULTI");
    run(a, "RESET");
    cr_assert_str_eq(run(a, "PING"), "+PONG\r\n");
}

/* Where each of the words appears in s, in order; 1 if they all do. */
static int in_order(const char *s, const char *const *words, int n)
{
    for (int i = 0; i < n; i++) {
        const char *p = strstr(s, words[i]);
        if (!p) return 0;
        s = p + strlen(words[i]);
    }
    return 1;
}

Test(multi_pubsub, monitor_shows_a_transaction_in_redis_order)
{
    cr_assert_str_eq(run(b, "MONITOR"), "+OK\r\n");
    run(a, "multi");
    run(a, "set foo bar");
    run(a, "exec");
    const char *fed = pending(b);
    static const char *const order[] = {"\"multi\"", "\"set\" \"foo\" \"bar\"", "\"exec\""};
    cr_assert(in_order(fed, order, 3), "%s", fed);
    cr_assert_null(strstr(strstr(fed, "\"exec\""), "\"set\""));
    /* a rejected command inside MULTI is not shown; the EXEC that fails is */
    run(a, "multi");
    run(a, "nosuchcmd x");
    cr_assert_eq(strncmp(run(a, "exec"), "-EXECABORT", 10), 0);
    fed = pending(b);
    static const char *const aborted[] = {"\"multi\"", "\"exec\""};
    cr_assert(in_order(fed, aborted, 2) && !strstr(fed, "nosuchcmd"), "%s", fed);
}

Test(multi_pubsub, monitor_shows_a_blocked_command_once)
{
    cr_assert_str_eq(run(b, "MONITOR"), "+OK\r\n");
    client_t *w = client_new(NULL, NULL, -1);
    run(w, "blpop list 0");
    run(a, "RPUSH list x");
    const char *fed = pending(b);
    const char *first = strstr(fed, "\"blpop\"");
    cr_assert(first && !strstr(first + 1, "\"blpop\""), "%s", fed);
    cr_assert_str_eq(pending(w), "*2\r\n$4\r\nlist\r\n$1\r\nx\r\n");
}
