/* tests/unit/server/cmd/test_migrate.c - server/cmd/migrate.c through the socketless client:
 * MIGRATE's argument errors (Redis 7.0's texts, nothing changed, no connection made), +NOKEY,
 * its key positions, and MIGRATE-COMMIT (the target's last step of a streamed tag): the checks
 * of the temporary key, BUSYKEY, REPLACE, the TTL, and the temporary key dropped on refusal.
 * The transfers themselves need two servers: tests/integration/test_migrate.py. */
#include "server/client.h"
#include "server/command.h"
#include "server/server.h"

#include "tests/unit/server/harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static client_t *C;

static void setup(void)
{
    char *argv[] = {"cte-server", "--tier", "ram:ram:16mb"};
    C = harness_server_start(3, argv);
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(migrate, .init = setup, .fini = teardown);

#define SYNTAX "-ERR syntax error\r\n"
#define NOT_INT "-ERR value is not an integer or out of range\r\n"

Test(migrate, argument_errors_change_nothing)
{
    harness_expect(C, "SET k v", "+OK\r\n");
    harness_expect(C, "MIGRATE 127.0.0.1 1 k 0 100 FOO", SYNTAX);
    harness_expect(C, "MIGRATE 127.0.0.1 1 k 0 100 AUTH", SYNTAX);
    harness_expect(C, "MIGRATE 127.0.0.1 1 k 0 100 AUTH2 user", SYNTAX);
    harness_expect(C, "MIGRATE 127.0.0.1 1 k 0 100 COPY REPLACE KEYS a",
                   "-ERR When using MIGRATE KEYS option, the key argument must be set to the "
                   "empty string\r\n");
    harness_expect(C, "MIGRATE 127.0.0.1 1 k 0 soon", NOT_INT);
    harness_expect(C, "MIGRATE 127.0.0.1 1 k db 100", NOT_INT);
    harness_expect(C, "MIGRATE 127.0.0.1 1 k 0",
                   "-ERR wrong number of arguments for 'migrate' command\r\n");
    harness_expect(C, "MIGRATE 127.0.0.1 notaport k 0 100",
                   "-IOERR error or timeout connecting to the client\r\n");
    harness_expect(C, "MIGRATE 127.0.0.1 70000 k 0 100",
                   "-IOERR error or timeout connecting to the client\r\n");
    harness_expect(C, "GET k", "$1\r\nv\r\n");
}

Test(migrate, nokey_when_no_key_exists)
{
    harness_expect(C, "MIGRATE 127.0.0.1 1 nothere 0 100", "+NOKEY\r\n");
    harness_expect(C, "MIGRATE 127.0.0.1 1 \"\" 0 100 REPLACE KEYS a b c", "+NOKEY\r\n");
    harness_expect(C, "MIGRATE 127.0.0.1 1 \"\" 0 100 AUTH2 u p KEYS a", "+NOKEY\r\n");
}

Test(migrate, refused_inside_multi)
{
    harness_expect(C, "SET k v", "+OK\r\n");
    harness_expect(C, "MULTI", "+OK\r\n");
    harness_expect(C, "MIGRATE 127.0.0.1 1 k 0 100", "+QUEUED\r\n");
    harness_expect(C, "EXEC",
                   "*1\r\n-ERR MIGRATE cannot run inside MULTI/EXEC or a script on this "
                   "server\r\n");
    harness_expect(C, "GET k", "$1\r\nv\r\n");
}

Test(migrate, key_positions_as_redis)
{
    harness_expect(C, "COMMAND GETKEYS MIGRATE h 1 k 0 10", "*1\r\n$1\r\nk\r\n");
    harness_expect(C, "COMMAND GETKEYS MIGRATE h 1 \"\" 0 10 COPY AUTH keys AUTH2 u p KEYS a b",
                   "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    harness_expect(C, "COMMAND GETKEYS MIGRATE h 1 k 0 10 KEYS a",
                   "-ERR Invalid arguments specified for command\r\n");
    harness_expect(C, "COMMAND GETKEYS MIGRATE-COMMIT tmp k 0 1 3", "*1\r\n$1\r\nk\r\n");
}

#define INCOMPLETE "-ERR the tag being migrated is missing or incomplete on the target\r\n"

Test(migrate, commit_checks_the_temporary_tag)
{
    harness_expect(C, "MIGRATE-COMMIT tmp k 0 1 3", INCOMPLETE);
    harness_expect(C, "TPUT tmp b 0 abc", ":3\r\n");
    harness_expect(C, "MIGRATE-COMMIT tmp k 0 2 3", INCOMPLETE);
    harness_expect(C, "EXISTS tmp k", ":0\r\n"); /* the refused transfer left nothing */
    harness_expect(C, "TPUT tmp b 0 abc", ":3\r\n");
    harness_expect(C, "MIGRATE-COMMIT tmp k 0 1 4", INCOMPLETE);
    harness_expect(C, "SET tmp str", "+OK\r\n");
    harness_expect(C, "MIGRATE-COMMIT tmp k 0 1 3",
                   "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    harness_expect(C, "MIGRATE-COMMIT tmp k -1 1 3", "-ERR Invalid TTL value, must be >= 0\r\n");
    harness_expect(C, "MIGRATE-COMMIT tmp k x 1 3", NOT_INT);
    harness_expect(C, "MIGRATE-COMMIT tmp k 0 1 3 NOW", SYNTAX);
    harness_expect(C, "GET tmp", "$3\r\nstr\r\n");
}

Test(migrate, commit_puts_the_tag_in_place)
{
    harness_expect(C, "TPUT tmp b 0 abc", ":3\r\n");
    harness_expect(C, "TPUT tmp e 0 \"\"", ":0\r\n");
    harness_expect(C, "PEXPIRE tmp 60000", ":1\r\n");
    harness_expect(C, "MIGRATE-COMMIT tmp k 0 2 3", "+OK\r\n");
    harness_expect(C, "EXISTS tmp", ":0\r\n");
    harness_expect(C, "TGET k b", "$3\r\nabc\r\n");
    harness_expect(C, "TTL k", ":-1\r\n"); /* the temporary key's TTL does not follow */
    harness_expect(C, "TPUT tmp b 0 xyz", ":3\r\n");
    harness_expect(C, "MIGRATE-COMMIT tmp k 5000 1 3",
                   "-BUSYKEY Target key name already exists.\r\n");
    harness_expect(C, "EXISTS tmp", ":0\r\n");
    harness_expect(C, "TGET k b", "$3\r\nabc\r\n");
    harness_expect(C, "TPUT tmp b 0 xyz", ":3\r\n");
    harness_expect(C, "MIGRATE-COMMIT tmp k 5000 1 3 REPLACE", "+OK\r\n");
    harness_expect(C, "TGET k b", "$3\r\nxyz\r\n");
    harness_send(C, "PTTL k");
    long long pttl = strtoll(C->out.data + 1, NULL, 10);
    cr_assert(pttl > 4000 && pttl <= 5000, "pttl %lld", pttl);
    C->out.len = 0;
    harness_expect(C, "TLEN k", ":1\r\n");
}
