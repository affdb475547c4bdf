/* Tests for DEBUG RELOAD (server/persist/rewrite.c, server/persist/aof.c): every type and TTL survive the save
 * to the append-only file and its replay. Each test runs in its own temp directory. */
#include "tests/unit/server/harness.h"

#include "common/buf.h"
#include "server/client.h"
#include "server/server.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static client_t *c;

static void setup(void)
{
    cr_assert_eq(chdir(harness_tmpdir_make("cte-reload")), 0);
    char *argv[] = {"cte-server", "--enable-debug-command", "yes"};
    c = harness_server_start(3, argv);
}

static void teardown(void)
{
    harness_server_stop();
    harness_tmpdir_remove();
}

TestSuite(reload, .init = setup, .fini = teardown);

static const char *run(const char *line)
{
    static char out[8192];
    buf_clear(&c->out);
    client_feed(c, line, strlen(line));
    client_feed(c, "\r\n", 2);
    size_t n = c->out.len < sizeof(out) - 1 ? c->out.len : sizeof(out) - 1;
    memcpy(out, c->out.data ? c->out.data : "", n);
    out[n] = '\0';
    return out;
}

Test(reload, every_type_and_ttl_survive_debug_reload)
{
    run("SET s hello");
    run("SET n 12345");
    run("PEXPIRE n 100000");
    run("HSET h f1 v1 f2 v2");
    run("RPUSH l a b c");
    run("SADD si 3 1 2");
    run("SADD ss x y");
    run("ZADD z 1.5 a -2 b inf c");
    run("TPUT t b1 0 \"blob bytes\" 0.25");
    run("TPUT t b2 0 \"\"");
    run("SELECT 3");
    run("SET other db3");
    run("SELECT 0");
    char big[600];
    memset(big, 'q', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    for (int i = 0; i < 150; i++) { /* more than one batch of 64 */
        char cmd[700];
        snprintf(cmd, sizeof(cmd), "RPUSH big %d", i);
        run(cmd);
    }
    cr_assert_str_eq(run("DEBUG RELOAD"), "+OK\r\n");
    cr_assert_str_eq(run("GET s"), "$5\r\nhello\r\n");
    cr_assert_str_eq(run("OBJECT ENCODING n"), "$3\r\nint\r\n");
    const char *ttl = run("PTTL n");
    cr_assert(ttl[0] == ':' && atoll(ttl + 1) > 90000, "%s", ttl);
    cr_assert_str_eq(run("HGET h f2"), "$2\r\nv2\r\n");
    cr_assert_str_eq(run("LRANGE l 0 -1"), "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n");
    cr_assert_str_eq(run("SMEMBERS si"), "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n");
    cr_assert_str_eq(run("SCARD ss"), ":2\r\n");
    cr_assert_str_eq(run("ZRANGE z 0 -1 WITHSCORES"),
                     "*6\r\n$1\r\nb\r\n$2\r\n-2\r\n$1\r\na\r\n$3\r\n1.5\r\n$1\r\nc\r\n$3\r\ninf\r\n");
    cr_assert_str_eq(run("TGET t b1"), "$10\r\nblob bytes\r\n");
    cr_assert_str_eq(run("TSCORE t b1"), "$4\r\n0.25\r\n");
    cr_assert_str_eq(run("TSIZE t b2"), ":0\r\n");
    cr_assert_str_eq(run("LLEN big"), ":150\r\n");
    cr_assert_str_eq(run("LINDEX big 149"), "$3\r\n149\r\n");
    cr_assert_str_eq(run("DBSIZE"), ":9\r\n");
    run("SELECT 3");
    cr_assert_str_eq(run("GET other"), "$3\r\ndb3\r\n");
}

Test(reload, expired_keys_are_left_out)
{
    run("SET gone v");
    run("PEXPIREAT gone 1");
    run("SET kept v");
    cr_assert_str_eq(run("DEBUG RELOAD"), "+OK\r\n");
    cr_assert_str_eq(run("DBSIZE"), ":1\r\n");
}
