/* test_uri.c - client/uri.c: the forms of a connection address, with auth, db and options,
 * and the malformed ones, each refused with a reason. */
#include "uri.h"

#include "cte/cte.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/leak.h" /* LTest: a leak fails the test that caused it */

static cte_addr_t parse_ok(const char *s)
{
    cte_addr_t a;
    char why[128];
    int rc = cte__addr_parse(s, &a, why, sizeof why);
    cr_assert_eq(rc, 0, "%s: %s", s, why);
    return a;
}

LTest(client_uri, tcp_host_and_port)
{
    cte_addr_t a = parse_ok("tcp://127.0.0.1:7000");
    cr_assert_eq(a.kind, CTE_ADDR_TCP);
    cr_assert_str_eq(a.host, "127.0.0.1");
    cr_assert_eq(a.port, 7000);
    cr_assert_eq(a.db, 0);
    cr_assert_eq(a.resp, 2);
    cr_assert_eq(a.has_pass, 0);
    a = parse_ok("tcp://localhost");
    cr_assert_eq(a.port, 6379);
    a = parse_ok("tcp://[::1]:6380");
    cr_assert_str_eq(a.host, "::1");
    cr_assert_eq(a.port, 6380);
}

LTest(client_uri, password_user_and_db)
{
    cte_addr_t a = parse_ok("tcp://:s3cret@h:1/2");
    cr_assert_str_eq(a.user, "");
    cr_assert_str_eq(a.pass, "s3cret");
    cr_assert(a.has_pass);
    cr_assert_eq(a.db, 2);
    a = parse_ok("tcp://alice:pw@h:1/15?resp=3");
    cr_assert_str_eq(a.user, "alice");
    cr_assert_str_eq(a.pass, "pw");
    cr_assert_eq(a.db, 15);
    cr_assert_eq(a.resp, 3);
    a = parse_ok("tcp://bob:p%40ss%3Aw@h:1");
    cr_assert_str_eq(a.pass, "p@ss:w");
    a = parse_ok("tcp://only@h:1");
    cr_assert_str_eq(a.user, "");
    cr_assert_str_eq(a.pass, "only");
    a = parse_ok("tcp://:@h:1/");
    cr_assert(a.has_pass);
    cr_assert_str_eq(a.pass, "");
}

LTest(client_uri, unix_and_shm_paths_with_options)
{
    cte_addr_t a = parse_ok("unix:/run/cte/cte.sock");
    cr_assert_eq(a.kind, CTE_ADDR_UNIX);
    cr_assert_str_eq(a.path, "/run/cte/cte.sock");
    a = parse_ok("unix:///tmp/x.sock?db=3&password=pw&user=default&resp=3");
    cr_assert_str_eq(a.path, "/tmp/x.sock");
    cr_assert_eq(a.db, 3);
    cr_assert_str_eq(a.pass, "pw");
    cr_assert_str_eq(a.user, "default");
    cr_assert_eq(a.resp, 3);
    a = parse_ok("shm:/tmp/x.sock");
    cr_assert_eq(a.kind, CTE_ADDR_SHM);
    cr_assert_str_eq(a.path, "/tmp/x.sock");
}

static void parse_bad(const char *s, const char *reason)
{
    cte_addr_t a;
    char why[128];
    cr_assert_eq(cte__addr_parse(s, &a, why, sizeof why), CTE_E_ADDRESS, "%s was accepted", s);
    cr_assert(strstr(why, reason), "%s: reason '%s' lacks '%s'", s, why, reason);
}

LTest(client_uri, malformed_addresses_are_refused_with_a_reason)
{
    parse_bad("", "scheme");
    parse_bad("redis://h:1", "scheme");
    parse_bad("tcp://", "host");
    parse_bad("tcp://:1", "host");
    parse_bad("tcp://h:", "port");
    parse_bad("tcp://h:0", "port");
    parse_bad("tcp://h:65536", "port");
    parse_bad("tcp://h:12ab", "port");
    parse_bad("tcp://h:1/x", "db");
    parse_bad("tcp://h:1/-1", "db");
    parse_bad("tcp://h:1/99999999999", "db");
    parse_bad("tcp://[::1:1", "']'");
    parse_bad("tcp://u:p%4@h:1", "password");
    parse_bad("tcp://u:p%zz@h:1", "password");
    parse_bad("tcp://u:p%00@h:1", "password");
    parse_bad("tcp://h:1?resp=4", "resp");
    parse_bad("tcp://h:1?speed=fast", "unknown option");
    parse_bad("tcp://h:1?resp", "without '='");
    parse_bad("unix:", "path");
    parse_bad("unix:?db=1", "path");
    char longp[200] = "unix:/";
    memset(longp + 6, 'a', 150);
    longp[156] = '\0';
    parse_bad(longp, "longer");
    cr_assert_eq(cte__addr_parse(NULL, &(cte_addr_t){0}, NULL, 0), CTE_E_ADDRESS);
}

LTest(client_uri, every_status_has_a_message)
{
    cr_assert_str_eq(cte_strerror(0), "success");
    cr_assert_str_eq(cte_strerror(CTE_E_UNSUPPORTED), "transport not supported yet");
    cr_assert_str_eq(cte_strerror(-ECONNREFUSED), strerror(ECONNREFUSED));
    cr_assert_str_eq(cte_strerror(-5000), "unknown status");
}
