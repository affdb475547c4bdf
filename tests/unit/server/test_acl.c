/* Tests for server/acl.c and server/acl_users.c: rule parsing, descriptions (as ACL LIST and
 * GETUSER show them), matching of commands, keys and channels, passwords, and the ACL command
 * through the socketless client (NOPERM, ACL LOG, AUTH, DELUSER closing clients). */
#include "tests/unit/server/harness.h"
#include "common/buf.h"
#include "common/sha256.h"
#include "server/acl.h"
#include "server/client.h"
#include "server/command.h"
#include "server/server.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

static client_t *c;

static void setup(void)
{
    c = harness_server_start(0, NULL);
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(acl, .init = setup, .fini = teardown);

/* Applies the space-separated rules to u; returns the first error or NULL. */
static const char *apply(acl_user_t *u, const char *rules)
{
    char tmp[1024];
    snprintf(tmp, sizeof(tmp), "%s", rules);
    for (char *w = strtok(tmp, " "); w; w = strtok(NULL, " ")) {
        const char *why = NULL;
        if (acl_user_apply(u, w, strlen(w), &why) < 0) return why;
    }
    return NULL;
}

static const char *describe(const acl_user_t *u)
{
    static char out[2048];
    buf_t b;
    buf_init(&b);
    acl_user_describe(u, &b);
    snprintf(out, sizeof(out), "%s", b.data ? b.data : "");
    buf_deinit(&b);
    return out;
}

/* Checks words (a command line) against u: the acl_result, with the refused argument's index
 * in *pos. */
static int check(const acl_user_t *u, const char *line, int *pos)
{
    static char tmp[512];
    resp_arg_t argv[16];
    int argc = 0;
    snprintf(tmp, sizeof(tmp), "%s", line);
    for (char *w = strtok(tmp, " "); w && argc < 16; w = strtok(NULL, " "))
        argv[argc++] = (resp_arg_t){w, strlen(w)};
    const command_t *cmd = command_lookup(&argv[0]);
    cr_assert(cmd, "no command %s", line);
    if (cmd->subcommands && argc > 1) cmd = command_lookup_sub(cmd, &argv[1]);
    cr_assert(cmd);
    int p = 0, r = acl_check_user(u, cmd, argc, argv, &p);
    if (pos) *pos = p;
    return r;
}

static const char *run(const char *line)
{
    static char out[16384];
    buf_clear(&c->out);
    harness_send(c, line);
    size_t n = c->out.len < sizeof(out) - 1 ? c->out.len : sizeof(out) - 1;
    memcpy(out, c->out.data ? c->out.data : "", n);
    out[n] = '\0';
    return out;
}

Test(acl, a_new_user_is_off_and_allowed_nothing)
{
    acl_user_t *u = acl_user_new("bob", 3);
    cr_assert_str_eq(describe(u), "off resetchannels -@all");
    cr_assert_eq(check(u, "GET k", NULL), ACL_DENIED_CMD);
    acl_user_free(u);
}

Test(acl, rules_describe_back_as_redis_lists_them)
{
    acl_user_t *u = acl_user_new("u", 1);
    cr_assert_null(apply(u, "on >pw ~foo %R~bar &ch +get +select|0 nopass"));
    cr_assert_str_eq(describe(u), "on nopass ~foo %R~bar resetchannels &ch -@all +get +select|0");
    cr_assert_null(apply(u, "reset +@all ~* &*"));
    cr_assert_str_eq(describe(u), "off sanitize-payload ~* &* +@all");
    cr_assert_null(apply(u, "-@hash"));
    cr_assert_str_eq(describe(u), "off sanitize-payload ~* &* +@all -@hash");
    cr_assert(strstr(apply(u, "%RW~x"), "Try 'resetkeys'"));
    acl_user_free(u);
}

Test(acl, read_and_write_patterns_merge_into_one)
{
    acl_user_t *u = acl_user_new("u", 1);
    cr_assert_null(apply(u, "%R~foo %W~foo %RW~bar %W~baz ~ %R"));
    /* "~" and "%R" both name the empty pattern */
    cr_assert_str_eq(describe(u), "off ~foo ~bar %W~baz ~ resetchannels -@all");
    acl_user_free(u);
}

Test(acl, bad_rules_get_redis_reasons)
{
    acl_user_t *u = acl_user_new("u", 1);
    cr_assert_str_eq(apply(u, "bogus"), "Syntax error");
    cr_assert_str_eq(apply(u, "+nosuch"), "Unknown command or category name in ACL");
    cr_assert_str_eq(apply(u, "-@nosuch"), "Unknown command or category name in ACL");
    cr_assert_str_eq(apply(u, "+config|get|x"),
                     "Allowing first-arg of a subcommand is not supported");
    cr_assert_str_eq(apply(u, "+config|nosuch"), "Unknown command or category name in ACL");
    cr_assert_str_eq(apply(u, "+get|a|b"), "Unknown command or category name in ACL");
    cr_assert_str_eq(apply(u, "+select|"), "Syntax error");
    cr_assert_str_eq(apply(u, "%X~a"), "Syntax error");
    cr_assert_str_eq(apply(u, "%~a"), "Syntax error");
    cr_assert_str_eq(apply(u, "<never"),
                     "The password you are trying to remove from the user does not exist");
    cr_assert(strstr(apply(u, "#abc"), "exactly 64 characters"));
    cr_assert_null(apply(u, "allkeys"));
    cr_assert(strstr(apply(u, "~x"), "'allkeys' flag"));
    cr_assert_null(apply(u, "allchannels"));
    cr_assert(strstr(apply(u, "&x"), "'allchannels' flag"));
    acl_user_free(u);
}

Test(acl, passwords_are_stored_hashed_and_compared_whole)
{
    acl_user_t *u = acl_user_new("u", 1);
    cr_assert_null(apply(u, ">passwd4 >other"));
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex("passwd4", 7, hex);
    cr_assert(strstr(describe(u), hex));
    cr_assert_null(strstr(describe(u), "passwd4"));
    cr_assert(acl_user_password_ok(u, "passwd4", 7));
    cr_assert(acl_user_password_ok(u, "other", 5));
    cr_assert_not(acl_user_password_ok(u, "passwd", 6));
    cr_assert_not(acl_user_password_ok(u, "", 0));
    char rule[80];
    snprintf(rule, sizeof(rule), "!%s", hex);
    cr_assert_null(apply(u, rule));
    cr_assert_not(acl_user_password_ok(u, "passwd4", 7));
    cr_assert_null(apply(u, "nopass"));
    cr_assert(acl_user_password_ok(u, "anything", 8));
    acl_user_free(u);
}

Test(acl, commands_categories_subcommands_and_first_args)
{
    acl_user_t *u = acl_user_new("u", 1);
    cr_assert_null(apply(u, "allkeys +@hash -hset +client|id +select|0"));
    cr_assert_eq(check(u, "HGET h f", NULL), ACL_OK);
    cr_assert_eq(check(u, "HSET h f v", NULL), ACL_DENIED_CMD);
    cr_assert_eq(check(u, "CLIENT ID", NULL), ACL_OK);
    cr_assert_eq(check(u, "CLIENT KILL ID 1", NULL), ACL_DENIED_CMD);
    cr_assert_eq(check(u, "SELECT 0", NULL), ACL_OK);
    cr_assert_eq(check(u, "SELECT 1", NULL), ACL_DENIED_CMD);
    cr_assert_eq(check(u, "AUTH a b", NULL), ACL_OK); /* no-auth commands always run */
    cr_assert_null(apply(u, "+@all -client|kill"));
    cr_assert_eq(check(u, "CLIENT KILL ID 1", NULL), ACL_DENIED_CMD);
    cr_assert_eq(check(u, "SET k v", NULL), ACL_OK);
    cr_assert_str_eq(describe(u), "off ~* resetchannels +@all -client|kill");
    acl_user_free(u);
}

Test(acl, key_patterns_follow_read_and_write_access)
{
    acl_user_t *u = acl_user_new("u", 1);
    int pos;
    cr_assert_null(apply(u, "+@all %R~read* %W~write* ~rw*"));
    cr_assert_eq(check(u, "GET read1", NULL), ACL_OK);
    cr_assert_eq(check(u, "GET write1", &pos), ACL_DENIED_KEY);
    cr_assert_eq(pos, 1);
    cr_assert_eq(check(u, "LPUSH write1 v", NULL), ACL_OK); /* LPUSH only writes */
    cr_assert_eq(check(u, "SET write1 v", NULL), ACL_OK);   /* SET without GET only writes */
    cr_assert_eq(check(u, "SET write1 v GET", NULL), ACL_DENIED_KEY);
    cr_assert_eq(check(u, "SET rw1 v GET", NULL), ACL_OK);
    cr_assert_eq(check(u, "COPY read1 write1", NULL), ACL_OK);
    cr_assert_eq(check(u, "COPY write1 read1", &pos), ACL_DENIED_KEY);
    cr_assert_eq(pos, 1);
    cr_assert_eq(check(u, "EXISTS write1", NULL), ACL_OK); /* only looks */
    cr_assert_eq(check(u, "EXISTS other", NULL), ACL_DENIED_KEY);
    cr_assert_eq(check(u, "MGET read1 rw2 other", &pos), ACL_DENIED_KEY);
    cr_assert_eq(pos, 3);
    acl_user_free(u);
}

Test(acl, channels_and_patterns)
{
    acl_user_t *u = acl_user_new("u", 1);
    int pos;
    cr_assert_null(apply(u, "+@all resetchannels &news.* &chat"));
    cr_assert_eq(check(u, "PUBLISH news.1 m", NULL), ACL_OK);
    cr_assert_eq(check(u, "PUBLISH other m", &pos), ACL_DENIED_CHANNEL);
    cr_assert_eq(pos, 1);
    cr_assert_eq(check(u, "SUBSCRIBE chat news.x other", &pos), ACL_DENIED_CHANNEL);
    cr_assert_eq(pos, 3);
    /* a pattern subscription must name an allowed pattern literally */
    cr_assert_eq(check(u, "PSUBSCRIBE news.*", NULL), ACL_OK);
    cr_assert_eq(check(u, "PSUBSCRIBE news.1*", NULL), ACL_DENIED_CHANNEL);
    cr_assert_eq(check(u, "UNSUBSCRIBE other", NULL), ACL_OK);
    acl_user_free(u);
}

Test(acl, selectors_allow_when_any_one_allows_all_and_report_the_most_relevant_denial)
{
    acl_user_t *u = acl_user_new("u", 1);
    int pos;
    resp_arg_t rules[] = {
        {"resetkeys", 9}, {"(+@write ~write::*)", 19}, {"(+@read", 7}, {"~read::*)", 9}};
    buf_t err;
    buf_init(&err);
    cr_assert_eq(acl_user_setrules(u, 4, rules, &err), 0, "%s", err.data);
    cr_assert_eq(check(u, "SET write::a v", NULL), ACL_OK);
    cr_assert_eq(check(u, "GET read::a", NULL), ACL_OK);
    cr_assert_eq(check(u, "GET write::a", &pos), ACL_DENIED_KEY);
    cr_assert_eq(check(u, "PING", NULL), ACL_DENIED_CMD);
    cr_assert_str_eq(describe(u), "off resetchannels -@all (~write::* resetchannels -@all +@write) "
                                  "(~read::* resetchannels -@all +@read)");
    resp_arg_t bad[] = {{"(+get", 5}, {"~x", 2}};
    cr_assert_eq(acl_user_setrules(u, 2, bad, &err), -1);
    cr_assert_str_eq(err.data, "Unmatched parenthesis in acl selector starting at '(+get'.");
    buf_clear(&err);
    resp_arg_t half[] = {{"+get", 4}, {"nope", 4}};
    cr_assert_eq(acl_user_setrules(u, 2, half, &err), -1);
    cr_assert_str_eq(err.data, "Error in ACL SETUSER modifier 'nope': Syntax error");
    cr_assert_eq(check(u, "GET read::a", NULL), ACL_OK); /* nothing of the failed call stayed */
    cr_assert_null(apply(u, "clearselectors"));
    cr_assert_eq(check(u, "GET read::a", NULL), ACL_DENIED_CMD);
    buf_deinit(&err);
    acl_user_free(u);
}

Test(acl, default_user_and_commands_through_the_client)
{
    cr_assert_str_eq(run("ACL WHOAMI"), "$7\r\ndefault\r\n");
    cr_assert_str_eq(run("ACL LIST"), "*1\r\n$34\r\nuser default on nopass ~* &* +@all\r\n");
    cr_assert_str_eq(run("ACL SETUSER alice on >pw ~cache:* +get"), "+OK\r\n");
    cr_assert_str_eq(run("ACL USERS"), "*2\r\n$5\r\nalice\r\n$7\r\ndefault\r\n");
    cr_assert_str_eq(run("AUTH alice nope"),
                     "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    cr_assert_str_eq(run("AUTH alice pw"), "+OK\r\n");
    cr_assert_str_eq(run("ACL WHOAMI"),
                     "-NOPERM this user has no permissions to run the 'acl|whoami' command\r\n");
    cr_assert_str_eq(run("GET other"), "-NOPERM this user has no permissions to access one of "
                                       "the keys used as arguments\r\n");
    cr_assert_str_eq(run("GET cache:1"), "$-1\r\n");
    cr_assert_str_eq(run("AUTH default x"), "+OK\r\n");
    const char *log = run("ACL LOG");
    cr_assert(strstr(log, "$3\r\nkey\r\n$7\r\ncontext\r\n$8\r\ntoplevel\r\n$6\r\nobject\r\n"
                          "$5\r\nother\r\n$8\r\nusername\r\n$5\r\nalice\r\n"),
              "%s", harness_escaped(log, strlen(log)));
    cr_assert(strstr(log, "$4\r\nauth\r\n"));
    cr_assert_str_eq(run("ACL LOG RESET"), "+OK\r\n");
    cr_assert_str_eq(run("ACL LOG"), "*0\r\n");
}

Test(acl, deleting_a_user_closes_its_clients)
{
    cr_assert_str_eq(run("ACL SETUSER bob on nopass +@all ~*"), "+OK\r\n");
    client_t *other = client_new(NULL, NULL, -1);
    client_t *saved = c;
    c = other;
    cr_assert_str_eq(run("AUTH bob x"), "+OK\r\n");
    c = saved;
    cr_assert_str_eq(run("ACL DELUSER bob nobody"), ":1\r\n");
    cr_assert(other->flags & CLIENT_CLOSE_ASAP || other->flags & CLIENT_CLOSE_AFTER_REPLY ||
              other->user == acl_default_user());
    cr_assert_eq(other->user, acl_default_user());
    cr_assert_str_eq(run("ACL DELUSER default"), "-ERR The 'default' user cannot be removed\r\n");
}

Test(acl, requirepass_is_the_default_users_password)
{
    cr_assert_str_eq(run("CONFIG SET requirepass s3cret"), "+OK\r\n");
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex("s3cret", 6, hex);
    const char *l = run("ACL LIST");
    cr_assert(strstr(l, hex), "%s", l);
    client_t *other = client_new(NULL, NULL, -1);
    client_t *saved = c;
    c = other;
    cr_assert_str_eq(run("PING"), "-NOAUTH Authentication required.\r\n");
    cr_assert_str_eq(run("AUTH default s3cret"), "+OK\r\n");
    cr_assert_str_eq(run("PING"), "+PONG\r\n");
    c = saved;
    cr_assert_str_eq(run("CONFIG SET requirepass \"\""), "+OK\r\n");
    cr_assert_str_eq(run("ACL LIST"), "*1\r\n$34\r\nuser default on nopass ~* &* +@all\r\n");
}

Test(acl, transactions_check_again_at_exec)
{
    cr_assert_str_eq(run("ACL SETUSER t on nopass ~* +multi +exec +incr"), "+OK\r\n");
    cr_assert_str_eq(run("AUTH t x"), "+OK\r\n");
    cr_assert_str_eq(run("MULTI"), "+OK\r\n");
    cr_assert_str_eq(run("INCR n"), "+QUEUED\r\n");
    cr_assert_str_eq(run("GET n"), "-NOPERM this user has no permissions to run the 'get' "
                                   "command\r\n");
    cr_assert_str_eq(run("DISCARD"), "-NOPERM this user has no permissions to run the "
                                     "'discard' command\r\n");
    cr_assert(strncmp(run("EXEC"), "-EXECABORT", 10) == 0);
    cr_assert_str_eq(run("MULTI"), "+OK\r\n");
    cr_assert_str_eq(run("INCR n"), "+QUEUED\r\n");
    /* the rules change before EXEC: the queued INCR is refused then */
    acl_user_t *t = acl_user_find("t", 1);
    const char *why;
    cr_assert_eq(acl_user_apply(t, "-incr", 5, &why), 0);
    cr_assert_str_eq(run("EXEC"), "*1\r\n-NOPERM ACLs rules changed between the moment the "
                                  "transaction was accumulated and the EXEC call. This command "
                                  "is no longer allowed for the following reason: no permission "
                                  "to execute the command or subcommand\r\n");
}

Test(acl, categories_follow_flags_and_group)
{
    cr_assert_eq(acl_category_find("HASH", 4), acl_category_find("hash", 4));
    cr_assert_eq(acl_category_find("nosuch", 6), -1);
    const char *cat = run("ACL CAT tag");
    cr_assert(strstr(cat, "$4\r\ntput\r\n"), "%s", cat);
    cr_assert(strstr(run("ACL CAT search"), "$7\r\ntsearch\r\n"));
    cr_assert(strstr(run("ACL CAT read"), "$4\r\ntget\r\n"));
    cr_assert_null(strstr(run("ACL CAT keyspace"), "$3\r\nset\r\n"));
    cr_assert_str_eq(run("ACL CAT nope"), "-ERR Unknown category 'nope'\r\n");
}

Test(acl, scripts_get_redis_wording_for_denials)
{
    cr_assert_str_eq(acl_script_denial_message(ACL_DENIED_CMD),
                     "The user executing the script can't run this command or subcommand");
    cr_assert(strstr(acl_script_denial_message(ACL_DENIED_KEY), "at least one of the keys"));
    cr_assert(strstr(acl_script_denial_message(ACL_DENIED_CHANNEL), "publish to the channel"));
}

static double thread_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The CPU time of the cheapest of three failing AUTHs as user with the password big. */
static double auth_cost(const char *user, const resp_arg_t *big)
{
    resp_arg_t name = {user, strlen(user)};
    double best = 1e9;
    for (int i = 0; i < 3; i++) {
        double t0 = thread_cpu_seconds();
        cr_assert_eq(acl_authenticate(c, &name, big), -1);
        double t = thread_cpu_seconds() - t0;
        if (t < best) best = t;
    }
    return best;
}

Test(acl, a_missing_user_costs_auth_as_much_as_a_wrong_password)
{
    /* the password is hashed whether the user exists or not, the default user being nopass
     * (as it is here) included: AUTH's time does not tell which names exist */
    cr_assert_str_eq(run("ACL SETUSER known on >pw +@all"), "+OK\r\n");
    size_t n = 8u << 20;
    char *p = malloc(n);
    memset(p, 'p', n);
    resp_arg_t big = {p, n};
    c->argc = 1; /* the ACL LOG entry names argv[0] */
    c->argv = &(resp_arg_t){"AUTH", 4};
    double known = auth_cost("known", &big), missing = auth_cost("nobody-here", &big);
    cr_assert(missing > 0.5 * known, "missing %f known %f", missing, known);
    c->argc = 0;
    c->argv = NULL;
    free(p);
}

/* Applies op (a printf format with one %d) for i in [0, n); returns the first failure's
 * reason (and its i in *at), or NULL. */
static const char *apply_many(acl_user_t *u, const char *fmt, int n, int *at)
{
    char op[64];
    for (int i = 0; i < n; i++) {
        int len = snprintf(op, sizeof(op), fmt, i);
        const char *why = NULL;
        if (acl_user_apply(u, op, (size_t)len, &why) < 0) {
            *at = i;
            return why;
        }
    }
    return NULL;
}

Test(acl, rules_past_the_limits_are_refused_so_setuser_stays_fast)
{
    /* duplicates are found by comparing with every pattern: without a bound, 100000
     * patterns in one SETUSER took 20 s of the loop (first args 50 s) */
    acl_user_t *u = acl_user_new("many", 4);
    int at = -1;
    cr_assert_null(apply_many(u, "~k%d", 10000, &at));
    cr_assert_null(apply_many(u, "%%R~k%d", 10000, &at)); /* the same patterns: merged */
    cr_assert_str_eq(apply_many(u, "~more%d", 1, &at),
                     "Too many key patterns in one selector (the limit is 10000)");
    cr_assert_null(apply_many(u, "&c%d", 10000, &at));
    cr_assert_str_eq(apply_many(u, "&more%d", 1, &at),
                     "Too many channel patterns in one selector (the limit is 10000)");
    cr_assert_null(apply_many(u, "+select|%d", 1000, &at));
    cr_assert_str_eq(apply_many(u, "+select|x%d", 1, &at),
                     "Too many first-args for one command (the limit is 1000)");
    cr_assert_null(apply_many(u, "(~s%d)", 1000, &at));
    cr_assert_str_eq(apply_many(u, "(~t%d)", 1, &at), "Too many selectors (the limit is 1000)");
    cr_assert_null(apply(u, "clearselectors resetkeys"));
    cr_assert_null(apply_many(u, "(~s%d)", 1, &at));
    cr_assert_null(apply_many(u, "~k%d", 1, &at));
    acl_user_free(u);
}
