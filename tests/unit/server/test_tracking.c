/* tests/unit/server/test_tracking.c - server/tracking.c through socketless clients: CLIENT
 * TRACKING's options and every error Redis 7.0 gives, CACHING, GETREDIR, TRACKINGINFO, the
 * RESP3 pushes and the RESP2 redirect over __redis__:invalidate, broken redirects, BCAST
 * prefixes and NOLOOP, OPTIN/OPTOUT, invalidations that wait for the writer's own reply (a
 * command, EXEC), FLUSHDB/FLUSHALL, expiry, tag keys, the key-table limit, INFO's tracking
 * fields, CLIENT LIST's flags and RESET.
 *
 * Client t tracks, w writes, r receives redirected messages. BCAST messages leave before the
 * loop sleeps: tests call tracking_before_sleep() where the loop would. */
#include "common/buf.h"
#include "server/client.h"
#include "server/server.h"
#include "server/tracking.h"
#include "tests/unit/server/harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static client_t *t, *w, *r;

static void setup(void)
{
    char *argv[] = {"cte-server", "--tier", "ram:ram:64kb"};
    t = harness_server_start(3, argv);
    w = client_new(NULL, NULL, -1);
    r = client_new(NULL, NULL, -1);
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(tracking, .init = setup, .fini = teardown);

/* What c received so far (and forgets it). */
static const char *got(client_t *c)
{
    static char out[4][65536];
    static int k;
    char *o = out[k++ % 4];
    size_t n = c->out.len < 65535 ? c->out.len : 65535;
    memcpy(o, c->out.data ? c->out.data : "", n);
    o[n] = '\0';
    buf_clear(&c->out);
    return o;
}

/* Sends line from c and returns everything c received. */
static const char *run(client_t *c, const char *line)
{
    buf_clear(&c->out);
    harness_send(c, line);
    return got(c);
}

static void ok(client_t *c, const char *line)
{
    cr_assert_str_eq(run(c, line), "+OK\r\n", "%s", line);
}

static char *redirect_cmd(const char *fmt, client_t *to)
{
    static char line[256];
    snprintf(line, sizeof(line), fmt, (unsigned long long)to->id);
    return line;
}

#define PUSH(key) ">2\r\n$10\r\ninvalidate\r\n*1\r\n$" key
#define MSG2 "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"

Test(tracking, resp3_client_gets_a_push_when_a_key_it_read_changes)
{
    run(t, "HELLO 3");
    ok(t, "CLIENT TRACKING on");
    run(w, "SET k 1");
    cr_assert_str_eq(run(t, "GET k"), "$1\r\n1\r\n");
    ok(w, "SET k 2");
    cr_assert_str_eq(got(t), PUSH("1\r\nk\r\n"));
    /* the key was forgotten: a second change says nothing until it is read again */
    ok(w, "SET k 3");
    cr_assert_str_eq(got(t), "");
    /* keys of every database are one table, as Redis's */
    run(t, "GET k");
    ok(w, "SELECT 1");
    ok(w, "SET k x");
    cr_assert_str_eq(got(t), PUSH("1\r\nk\r\n"));
}

Test(tracking, only_read_only_commands_with_keys_are_remembered)
{
    run(t, "HELLO 3");
    ok(t, "CLIENT TRACKING on");
    run(t, "SET a 1");     /* a write: not remembered */
    run(t, "MGET b c");    /* both keys */
    run(t, "PUBLISH b x"); /* pub/sub: no keys */
    run(t, "HGET h f");
    ok(w, "SET a 2");
    cr_assert_str_eq(got(t), "");
    ok(w, "MSET b 1 c 1");
    cr_assert_str_eq(got(t), PUSH("1\r\nb\r\n") PUSH("1\r\nc\r\n"));
    run(w, "HSET h f 1");
    cr_assert_str_eq(got(t), PUSH("1\r\nh\r\n"));
}

Test(tracking, own_writes_are_told_after_the_reply_and_noloop_skips_them)
{
    run(t, "HELLO 3");
    ok(t, "CLIENT TRACKING on");
    run(t, "HSET h f 1");
    run(t, "HGET h f");
    cr_assert_str_eq(run(t, "HDEL h f"), ":1\r\n" PUSH("1\r\nh\r\n"));
    ok(t, "CLIENT TRACKING on NOLOOP");
    run(t, "GET k");
    cr_assert_str_eq(run(t, "SET k 1"), "+OK\r\n");
}

Test(tracking, invalidations_of_a_transaction_follow_exec)
{
    run(t, "HELLO 3");
    ok(t, "CLIENT TRACKING on");
    run(t, "MSET a 1 b 2");
    run(t, "GET a");
    ok(t, "MULTI");
    run(t, "INCR a");
    run(t, "GET b");
    cr_assert_str_eq(run(t, "EXEC"), "*2\r\n:2\r\n$1\r\n2\r\n" PUSH("1\r\na\r\n"));
    ok(t, "MULTI");
    run(t, "FLUSHDB");
    cr_assert_str_eq(run(t, "EXEC"), "*1\r\n+OK\r\n>2\r\n$10\r\ninvalidate\r\n_\r\n");
}

Test(tracking, resp2_redirect_goes_to_a_subscribed_client_on_the_channel)
{
    run(r, "SUBSCRIBE __redis__:invalidate");
    ok(t, redirect_cmd("CLIENT TRACKING on REDIRECT %llu", r));
    run(t, "GET k");
    ok(w, "SET k 1");
    cr_assert_str_eq(got(r), MSG2 "*1\r\n$1\r\nk\r\n");
    cr_assert_str_eq(got(t), "");
    /* a flush sends the null */
    ok(w, "FLUSHALL");
    cr_assert_str_eq(got(r), MSG2 "$-1\r\n");
    /* a RESP3 target gets a push instead */
    run(r, "UNSUBSCRIBE");
    run(r, "HELLO 3");
    run(t, "GET k");
    ok(w, "SET k 2");
    cr_assert_str_eq(got(r), PUSH("1\r\nk\r\n"));
}

Test(tracking, resp2_without_redirect_or_unsubscribed_target_gets_nothing)
{
    ok(t, "CLIENT TRACKING on");
    run(t, "GET k");
    ok(w, "SET k 1");
    cr_assert_str_eq(got(t), "");
    ok(t, redirect_cmd("CLIENT TRACKING on REDIRECT %llu", r));
    run(t, "GET k");
    ok(w, "SET k 2");
    cr_assert_str_eq(got(r), "");
}

Test(tracking, a_redirect_target_that_went_away_is_reported_broken)
{
    run(t, "HELLO 3");
    uint64_t gone = r->id;
    ok(t, redirect_cmd("CLIENT TRACKING on REDIRECT %llu", r));
    run(t, "GET k");
    client_free(r);
    r = client_new(NULL, NULL, -1);
    ok(w, "SET k 1");
    char want[128];
    snprintf(want, sizeof(want), ">2\r\n$21\r\ntracking-redir-broken\r\n:%llu\r\n",
             (unsigned long long)gone);
    cr_assert_str_eq(got(t), want);
    snprintf(want, sizeof(want),
             "%%3\r\n$5\r\nflags\r\n~2\r\n$2\r\non\r\n$15\r\nbroken_redirect\r\n$8\r\nredirect\r\n"
             ":%llu\r\n$8\r\nprefixes\r\n*0\r\n",
             (unsigned long long)gone);
    cr_assert_str_eq(run(t, "CLIENT TRACKINGINFO"), want);
    cr_assert(strstr(run(t, "CLIENT INFO"), "flags=tR "));
    ok(t, "CLIENT TRACKING off");
    cr_assert(strstr(run(t, "CLIENT INFO"), "flags=N "));
}

Test(tracking, redirect_errors)
{
    cr_assert_str_eq(run(t, "CLIENT TRACKING on REDIRECT 99999"),
                     "-ERR The client ID you want redirect to does not exist\r\n");
    cr_assert_str_eq(run(t, "CLIENT TRACKING on REDIRECT 0"),
                     "-ERR The client ID you want redirect to does not exist\r\n");
    cr_assert_str_eq(run(t, "CLIENT TRACKING on REDIRECT x"),
                     "-ERR value is not an integer or out of range\r\n");
    char line[128];
    snprintf(line, sizeof(line), "CLIENT TRACKING on REDIRECT %llu REDIRECT %llu",
             (unsigned long long)r->id, (unsigned long long)r->id);
    cr_assert_str_eq(run(t, line), "-ERR A client can only redirect to a single other client\r\n");
    cr_assert_str_eq(run(t, "CLIENT GETREDIR"), ":-1\r\n");
}

Test(tracking, option_errors_change_nothing)
{
    static const struct {
        const char *cmd, *err;
    } cases[] = {
        {"CLIENT TRACKING maybe", "-ERR syntax error\r\n"},
        {"CLIENT TRACKING on FOO", "-ERR syntax error\r\n"},
        {"CLIENT TRACKING on PREFIX", "-ERR syntax error\r\n"},
        {"CLIENT TRACKING on REDIRECT", "-ERR syntax error\r\n"},
        {"CLIENT TRACKING on PREFIX a", "-ERR PREFIX option requires BCAST mode to be enabled\r\n"},
        {"CLIENT TRACKING on BCAST OPTIN",
         "-ERR OPTIN and OPTOUT are not compatible with BCAST\r\n"},
        {"CLIENT TRACKING on BCAST OPTOUT",
         "-ERR OPTIN and OPTOUT are not compatible with BCAST\r\n"},
        {"CLIENT TRACKING on OPTIN OPTOUT",
         "-ERR You can't specify both OPTIN mode and OPTOUT mode\r\n"},
        {"CLIENT TRACKING on BCAST PREFIX FOOBAR PREFIX FOO",
         "-ERR Prefix 'FOOBAR' overlaps with another provided prefix 'FOO'. Prefixes for a single "
         "client must not overlap.\r\n"},
        {"CLIENT TRACKING on BCAST PREFIX x PREFIX FOO PREFIX FOOBAR",
         "-ERR Prefix 'FOO' overlaps with another provided prefix 'FOOBAR'. Prefixes for a single "
         "client must not overlap.\r\n"},
        {"CLIENT TRACKING", "-ERR wrong number of arguments for 'client|tracking' command\r\n"},
        {"CLIENT CACHING yes",
         "-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN "
         "or OPTOUT mode enabled\r\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_assert_str_eq(run(t, cases[i].cmd), cases[i].err, "%s", cases[i].cmd);
    cr_assert_str_eq(run(t, "CLIENT GETREDIR"), ":-1\r\n");
    cr_assert(strstr(run(t, "INFO"), "tracking_clients:0\r\n"));
    /* off takes (and ignores) the options */
    ok(t, "CLIENT TRACKING off PREFIX a NOLOOP");
}

Test(tracking, mode_switches_while_on_are_refused)
{
    ok(t, "CLIENT TRACKING on");
    cr_assert_str_eq(run(t, "CLIENT TRACKING on BCAST"),
                     "-ERR You can't switch BCAST mode on/off before disabling tracking for this "
                     "client, and then re-enabling it with a different mode.\r\n");
    ok(t, "CLIENT TRACKING on OPTIN");
    cr_assert_str_eq(run(t, "CLIENT TRACKING on OPTOUT"),
                     "-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this "
                     "client, and then re-enabling it with a different mode.\r\n");
    ok(t, "CLIENT TRACKING off");
    ok(t, "CLIENT TRACKING on BCAST PREFIX FOO PREFIX BAR");
    cr_assert_str_eq(run(t, "CLIENT TRACKING on"),
                     "-ERR You can't switch BCAST mode on/off before disabling tracking for this "
                     "client, and then re-enabling it with a different mode.\r\n");
    cr_assert_str_eq(run(t, "CLIENT TRACKING on BCAST PREFIX FO"),
                     "-ERR Prefix 'FO' overlaps with an existing prefix 'FOO'. Prefixes for a "
                     "single client must not overlap.\r\n");
    cr_assert_str_eq(run(t, "CLIENT TRACKING on BCAST PREFIX BARB"),
                     "-ERR Prefix 'BARB' overlaps with an existing prefix 'BAR'. Prefixes for a "
                     "single client must not overlap.\r\n");
    ok(t, "CLIENT TRACKING on BCAST PREFIX baz");
    cr_assert_str_eq(
        run(t, "CLIENT TRACKINGINFO"),
        "*6\r\n$5\r\nflags\r\n*2\r\n$2\r\non\r\n$5\r\nbcast\r\n$8\r\nredirect\r\n:0\r\n"
        "$8\r\nprefixes\r\n*3\r\n$3\r\nBAR\r\n$3\r\nFOO\r\n$3\r\nbaz\r\n");
}

Test(tracking, caching_yes_and_no_follow_optin_and_optout_for_one_command)
{
    run(t, "HELLO 3");
    ok(t, "CLIENT TRACKING on OPTIN");
    cr_assert_str_eq(run(t, "CLIENT CACHING no"),
                     "-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT "
                     "mode.\r\n");
    cr_assert_str_eq(run(t, "CLIENT CACHING maybe"), "-ERR syntax error\r\n");
    run(t, "GET a"); /* not remembered */
    ok(t, "CLIENT CACHING yes");
    cr_assert_str_eq(run(t, "CLIENT TRACKINGINFO"),
                     "%3\r\n$5\r\nflags\r\n~3\r\n$2\r\non\r\n$5\r\noptin\r\n$11\r\ncaching-yes\r\n"
                     "$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*0\r\n");
    run(t, "GET b"); /* remembered; the flag ends with it */
    run(t, "GET c");
    ok(w, "MSET a 1 b 1 c 1");
    cr_assert_str_eq(got(t), PUSH("1\r\nb\r\n"));
    /* in a transaction the flag lasts until EXEC */
    ok(t, "CLIENT CACHING yes");
    ok(t, "MULTI");
    run(t, "GET a");
    run(t, "GET c");
    run(t, "EXEC");
    ok(w, "MSET a 2 c 2");
    cr_assert_str_eq(got(t), PUSH("1\r\na\r\n") PUSH("1\r\nc\r\n"));

    ok(t, "CLIENT TRACKING off");
    ok(t, "CLIENT TRACKING on OPTOUT");
    cr_assert_str_eq(run(t, "CLIENT CACHING yes"),
                     "-ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN "
                     "mode.\r\n");
    ok(t, "CLIENT CACHING no");
    run(t, "GET a"); /* not remembered */
    run(t, "GET b");
    ok(w, "MSET a 3 b 3");
    cr_assert_str_eq(got(t), PUSH("1\r\nb\r\n"));
}

Test(tracking, bcast_sends_changes_under_the_prefixes_once_per_prefix)
{
    run(t, "HELLO 3");
    ok(t, "CLIENT TRACKING on BCAST PREFIX a: PREFIX b:");
    ok(w, "MSET a:1 1 c:1 1");
    run(w, "INCR b:1");
    run(w, "INCR b:1");
    cr_assert_str_eq(got(t), "");
    tracking_before_sleep();
    const char *out = got(t);
    cr_assert(strstr(out, PUSH("3\r\na:1\r\n")), "%s", out);
    cr_assert(strstr(out, PUSH("3\r\nb:1\r\n")), "%s", out);
    cr_assert_eq(strlen(out), 2 * strlen(PUSH("3\r\na:1\r\n")), "%s", out);
    tracking_before_sleep();
    cr_assert_str_eq(got(t), "");
    cr_assert(strstr(run(t, "INFO stats"), "tracking_total_prefixes:2\r\n"));
    cr_assert(strstr(run(t, "CLIENT INFO"), "flags=tB "));
    /* the empty prefix matches every key; NOLOOP leaves out the client's own writes */
    ok(r, "CLIENT TRACKING on BCAST NOLOOP");
    run(r, "HELLO 3");
    ok(r, "SET mine 1");
    ok(w, "SET theirs 1");
    tracking_before_sleep();
    cr_assert_str_eq(got(r), PUSH("6\r\ntheirs\r\n"));
    ok(r, "SET mine 2");
    tracking_before_sleep();
    cr_assert_str_eq(got(r), "");
    ok(r, "CLIENT TRACKING off");
    ok(t, "CLIENT TRACKING off");
    cr_assert(strstr(run(t, "INFO stats"), "tracking_total_prefixes:0\r\n"));
}

Test(tracking, switching_to_bcast_drops_what_was_read_before)
{
    run(t, "HELLO 3");
    ok(t, "CLIENT TRACKING on");
    run(t, "GET key1");
    ok(t, "CLIENT TRACKING off");
    ok(t, "CLIENT TRACKING on BCAST");
    run(w, "INCR key1");
    cr_assert_str_eq(got(t), "");
    tracking_before_sleep();
    cr_assert_str_eq(got(t), PUSH("4\r\nkey1\r\n"));
}

Test(tracking, flushes_send_the_null_and_empty_the_table)
{
    run(t, "HELLO 3");
    ok(t, "CLIENT TRACKING on");
    run(t, "MGET a b");
    cr_assert(strstr(run(t, "INFO"), "tracking_total_keys:2\r\ntracking_total_items:2\r\n"));
    ok(w, "FLUSHALL ASYNC");
    cr_assert_str_eq(got(t), ">2\r\n$10\r\ninvalidate\r\n_\r\n");
    cr_assert(strstr(run(t, "INFO"), "tracking_total_keys:0\r\ntracking_total_items:0\r\n"));
    ok(w, "FLUSHDB");
    cr_assert_str_eq(got(t), ">2\r\n$10\r\ninvalidate\r\n_\r\n");
}

Test(tracking, expired_keys_are_invalidated_lazily_and_actively)
{
    run(t, "HELLO 3");
    ok(t, "CLIENT TRACKING on");
    ok(w, "SET lazy v PX 100");
    ok(w, "SET active v PX 100");
    run(t, "MGET lazy active");
    usleep(150 * 1000);
    cr_assert_str_eq(run(w, "GET lazy"), "$-1\r\n");
    cr_assert_str_eq(got(t), PUSH("4\r\nlazy\r\n"));
    server_cron();
    cr_assert_str_eq(got(t), PUSH("6\r\nactive\r\n"));
}

Test(tracking, tag_writes_invalidate_the_tag_key)
{
    run(t, "HELLO 3");
    ok(t, "CLIENT TRACKING on");
    cr_assert_str_eq(run(w, "TPUT tg b1 0 hello"), ":5\r\n");
    run(t, "TGET tg b1 0");
    run(w, "TPUT tg b1 0 HELLO");
    cr_assert_str_eq(got(t), PUSH("2\r\ntg\r\n"));
    run(t, "TSIZE tg b1");
    run(w, "TTRUNCATE tg b1 2");
    cr_assert_str_eq(got(t), PUSH("2\r\ntg\r\n"));
    run(t, "TLEN tg");
    run(w, "TDEL tg b1");
    cr_assert_str_eq(got(t), PUSH("2\r\ntg\r\n"));
}

Test(tracking, the_table_limit_invalidates_keys_before_the_next_command)
{
    ok(t, redirect_cmd("CLIENT TRACKING on REDIRECT %llu", r));
    run(r, "SUBSCRIBE __redis__:invalidate");
    for (int i = 0; i < 250; i++) {
        char line[32];
        snprintf(line, sizeof(line), "GET key%d", i);
        run(t, line);
    }
    ok(w, "CONFIG SET tracking-table-max-keys 1");
    /* effort 100, then 200 */
    run(w, "PING");
    run(w, "PING");
    const char *out = got(r);
    int n = 0;
    for (const char *p = out; (p = strstr(p, "__redis__:invalidate")); p++) n++;
    cr_assert_eq(n, 249, "%d messages", n);
    cr_assert(strstr(run(t, "INFO"), "tracking_total_keys:1\r\ntracking_total_items:1\r\n"));
    ok(w, "CONFIG SET tracking-table-max-keys 0");
    cr_assert_str_eq(run(w, "CONFIG GET tracking-table-max-keys"),
                     "*2\r\n$23\r\ntracking-table-max-keys\r\n$1\r\n0\r\n");
}

Test(tracking, pushes_bypass_client_reply_off)
{
    run(t, "HELLO 3");
    ok(t, "CLIENT TRACKING on");
    run(t, "GET foo");
    run(t, "CLIENT REPLY OFF");
    ok(w, "SET foo bar");
    cr_assert_str_eq(got(t), PUSH("3\r\nfoo\r\n"));
    cr_assert_str_eq(run(t, "CLIENT REPLY ON"), "+OK\r\n");
}

Test(tracking, getredir_trackinginfo_list_and_reset)
{
    cr_assert_str_eq(run(t, "CLIENT TRACKINGINFO"),
                     "*6\r\n$5\r\nflags\r\n*1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n"
                     "$8\r\nprefixes\r\n*0\r\n");
    ok(t, redirect_cmd("CLIENT TRACKING on REDIRECT %llu NOLOOP", r));
    char want[64];
    snprintf(want, sizeof(want), ":%llu\r\n", (unsigned long long)r->id);
    cr_assert_str_eq(run(t, "CLIENT GETREDIR"), want);
    snprintf(want, sizeof(want), " redir=%llu ", (unsigned long long)r->id);
    cr_assert(strstr(run(t, "CLIENT INFO"), want));
    cr_assert(strstr(run(t, "CLIENT INFO"), "flags=t "));
    cr_assert(strstr(run(w, "INFO clients"), "tracking_clients:1\r\n"));
    cr_assert_str_eq(run(t, "RESET"), "+RESET\r\n");
    cr_assert_str_eq(run(t, "CLIENT GETREDIR"), ":-1\r\n");
    cr_assert(strstr(run(w, "INFO clients"), "tracking_clients:0\r\n"));
    ok(t, "CLIENT TRACKING on");
    cr_assert_str_eq(run(t, "CLIENT GETREDIR"), ":0\r\n");
    client_free(t);
    t = client_new(NULL, NULL, -1);
    cr_assert(strstr(run(w, "INFO clients"), "tracking_clients:0\r\n"));
}

Test(tracking, a_push_to_a_redirect_target_running_a_transaction_follows_its_reply)
{
    run(r, "HELLO 3");
    ok(t, redirect_cmd("CLIENT TRACKING on REDIRECT %llu", r));
    run(t, "GET k");
    ok(r, "MULTI");
    run(r, "SET k 1");
    cr_assert_str_eq(run(r, "EXEC"), "*1\r\n+OK\r\n" PUSH("1\r\nk\r\n"));
}
