/* Tests for blocking commands (server/block.c, cmd_blist.c, BZPOP* in cmd_zset.c) and CLIENT
 * PAUSE, through socketless clients. */
#include "tests/unit/server/harness.h"
#include "common/buf.h"
#include "common/util.h"
#include "server/block.h"
#include "server/client.h"
#include "server/server.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static client_t *a, *b, *p;

static void setup(void)
{
    a = harness_server_start(0, NULL);
    b = client_new(NULL, NULL, -1);
    p = client_new(NULL, NULL, -1);
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(block, .init = setup, .fini = teardown);

/* Sends an inline command from c; returns what c received since the last call. */
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
    return run(c, "");
}

Test(block, blpop_serves_at_once_when_a_list_has_elements)
{
    run(p, "RPUSH l2 x");
    cr_assert_str_eq(run(a, "BLPOP l1 l2 0"), "*2\r\n$2\r\nl2\r\n$1\r\nx\r\n");
    cr_assert_str_eq(run(a, "EXISTS l2"), ":0\r\n");
}

Test(block, a_push_wakes_the_oldest_waiter_first)
{
    cr_assert_str_eq(run(a, "BLPOP q 0"), "");
    cr_assert_str_eq(run(b, "BRPOP q 0"), "");
    cr_assert(a->flags & CLIENT_BLOCKED);
    cr_assert_str_eq(run(p, "RPUSH q 1"), ":1\r\n");
    cr_assert_str_eq(pending(a), "*2\r\n$1\r\nq\r\n$1\r\n1\r\n");
    cr_assert_str_eq(pending(b), "");
    cr_assert(b->flags & CLIENT_BLOCKED);
    run(p, "RPUSH q 2 3");
    cr_assert_str_eq(pending(b), "*2\r\n$1\r\nq\r\n$1\r\n3\r\n");
    cr_assert_str_eq(run(p, "LRANGE q 0 -1"), "*1\r\n$1\r\n2\r\n");
}

Test(block, commands_sent_while_blocked_run_after_the_wake_up)
{
    run(a, "BLPOP q 0");
    client_feed(a, "PING\r\n", 6);
    cr_assert_str_eq(pending(a), "");
    run(p, "LPUSH q v");
    cr_assert_str_eq(pending(a), "*2\r\n$1\r\nq\r\n$1\r\nv\r\n+PONG\r\n");
}

Test(block, pushes_inside_exec_wake_waiters_after_the_transaction)
{
    run(a, "BLPOP q 0");
    run(p, "MULTI");
    run(p, "RPUSH q a");
    run(p, "RPUSH q b");
    cr_assert_str_eq(run(p, "EXEC"), "*2\r\n:1\r\n:2\r\n");
    cr_assert_str_eq(pending(a), "*2\r\n$1\r\nq\r\n$1\r\na\r\n");
}

/* Redis leaves a waiter blocked when the key it was woken for holds another type by then
 * (its TCL list unit: "BLPOP, LPUSH + DEL + SET should not awake blocked client"). */
Test(block, a_key_that_became_another_type_leaves_the_waiter_blocked)
{
    cr_assert_str_eq(run(a, "BLPOP l 0"), "");
    run(p, "MULTI");
    run(p, "LPUSH l a");
    run(p, "DEL l");
    run(p, "SET l foo");
    cr_assert_str_eq(run(p, "EXEC"), "*3\r\n:1\r\n:1\r\n+OK\r\n");
    cr_assert_str_eq(pending(a), "", "no WRONGTYPE: still blocked");
    run(p, "DEL l");
    run(p, "LPUSH l b");
    cr_assert_str_eq(pending(a), "*2\r\n$1\r\nl\r\n$1\r\nb\r\n");
}

Test(block, a_sorted_set_key_that_became_another_type_leaves_the_waiter_blocked)
{
    cr_assert_str_eq(run(a, "BZPOPMIN z 0"), "");
    run(p, "MULTI");
    run(p, "ZADD z 1 a");
    run(p, "DEL z");
    run(p, "SET z foo");
    run(p, "EXEC");
    cr_assert_str_eq(pending(a), "", "no WRONGTYPE: still blocked");
    run(p, "DEL z");
    run(p, "ZADD z 2 b");
    cr_assert_str_eq(pending(a), "*3\r\n$1\r\nz\r\n$1\r\nb\r\n$1\r\n2\r\n");
}

Test(block, blmove_moves_when_woken)
{
    cr_assert_str_eq(run(a, "BLMOVE src dst LEFT RIGHT 0"), "");
    run(p, "RPUSH src e");
    cr_assert_str_eq(pending(a), "$1\r\ne\r\n");
    cr_assert_str_eq(run(p, "LRANGE dst 0 -1"), "*1\r\n$1\r\ne\r\n");
}

Test(block, timeouts_reply_null)
{
    run(a, "BLPOP q 0.05");
    run(b, "BRPOPLPUSH s d 0.05");
    block_check_timeouts(time_ms() + 1000);
    cr_assert_str_eq(pending(a), "*-1\r\n");
    cr_assert_str_eq(pending(b), "$-1\r\n");
    cr_assert_not(a->flags & CLIENT_BLOCKED);
}

Test(block, bad_timeouts_are_errors)
{
    cr_assert_str_eq(run(a, "BLPOP q -1"), "-ERR timeout is negative\r\n");
    cr_assert_str_eq(run(a, "BLPOP q x"), "-ERR timeout is not a float or out of range\r\n");
}

Test(block, inside_multi_blocking_commands_answer_at_once)
{
    run(a, "MULTI");
    run(a, "BLPOP q 0");
    run(a, "BZPOPMIN z 0");
    cr_assert_str_eq(run(a, "EXEC"), "*2\r\n*-1\r\n*-1\r\n");
}

Test(block, client_unblock_ends_the_wait)
{
    char cmd[64];
    run(a, "BLPOP q 0");
    snprintf(cmd, sizeof(cmd), "CLIENT UNBLOCK %llu", (unsigned long long)a->id);
    cr_assert_str_eq(run(p, cmd), ":1\r\n");
    cr_assert_str_eq(pending(a), "*-1\r\n");
    run(b, "BLPOP q 0");
    snprintf(cmd, sizeof(cmd), "CLIENT UNBLOCK %llu ERROR", (unsigned long long)b->id);
    cr_assert_str_eq(run(p, cmd), ":1\r\n");
    cr_assert_str_eq(pending(b), "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n");
    cr_assert_str_eq(run(p, cmd), ":0\r\n");
}

/* As redis-server 7.0 does (checked with it): SET on a key a client waits on leaves it
 * waiting, without an error. */
Test(block, a_wrong_type_on_a_waited_key_leaves_the_waiter_blocked)
{
    run(a, "BLPOP k 0");
    run(p, "SET k v");
    cr_assert_str_eq(pending(a), "");
    run(p, "DEL k");
    run(p, "RPUSH k x");
    cr_assert_str_eq(pending(a), "*2\r\n$1\r\nk\r\n$1\r\nx\r\n");
}

Test(block, bzpopmin_waits_for_a_zadd)
{
    cr_assert_str_eq(run(a, "BZPOPMIN z1 z2 0"), "");
    run(p, "ZADD z2 2 b 1 a");
    cr_assert_str_eq(pending(a), "*3\r\n$2\r\nz2\r\n$1\r\na\r\n$1\r\n1\r\n");
}

Test(block, swapdb_serves_waiters_of_the_swapped_database)
{
    run(a, "BLPOP q 0");
    run(p, "SELECT 1");
    run(p, "RPUSH q x");
    cr_assert_str_eq(pending(a), "");
    run(p, "SWAPDB 0 1");
    cr_assert_str_eq(pending(a), "*2\r\n$1\r\nq\r\n$1\r\nx\r\n");
}

Test(block, client_pause_write_holds_writes_until_unpause)
{
    cr_assert_str_eq(run(p, "CLIENT PAUSE 100000 WRITE"), "+OK\r\n");
    cr_assert_str_eq(run(a, "SET k v"), "");
    cr_assert_str_eq(run(b, "GET k"), "$-1\r\n");
    cr_assert_str_eq(run(p, "CLIENT UNPAUSE"), "+OK\r\n");
    cr_assert_str_eq(pending(a), "+OK\r\n");
    cr_assert_str_eq(run(b, "GET k"), "$1\r\nv\r\n");
}

Test(block, client_pause_write_holds_an_exec_of_writes_but_not_of_reads)
{
    cr_assert_str_eq(run(a, "MULTI"), "+OK\r\n");
    cr_assert_str_eq(run(a, "SET k v"), "+QUEUED\r\n");
    cr_assert_str_eq(run(b, "MULTI"), "+OK\r\n");
    cr_assert_str_eq(run(b, "GET k"), "+QUEUED\r\n");
    cr_assert_str_eq(run(p, "CLIENT PAUSE 100000 WRITE"), "+OK\r\n");
    cr_assert_str_eq(run(a, "EXEC"), "");
    cr_assert_str_eq(run(b, "EXEC"), "*1\r\n$-1\r\n");
    cr_assert_str_eq(run(p, "CLIENT UNPAUSE"), "+OK\r\n");
    cr_assert_str_eq(pending(a), "*1\r\n+OK\r\n");
}

Test(block, keys_whose_time_is_up_are_hidden_but_kept_during_a_pause)
{
    cr_assert_str_eq(run(a, "SET k v PX 1"), "+OK\r\n");
    cr_assert_str_eq(run(a, "SET k2 v PX 1"), "+OK\r\n");
    cr_assert_str_eq(run(p, "CLIENT PAUSE 100000 WRITE"), "+OK\r\n");
    unsigned long long expired = srv.stat.expired_keys;
    long long t0 = time_ms();
    while (time_ms() - t0 < 5) {
    }
    cr_assert_str_eq(run(b, "GET k"), "$-1\r\n");
    cr_assert_str_eq(run(b, "EXISTS k2"), ":0\r\n");
    db_active_expire(srv.db, srv.ndb, 1000);
    cr_assert_eq(srv.stat.expired_keys, expired);
    cr_assert_eq(db_size(&srv.db[0]), 2);
    cr_assert_str_eq(run(p, "CLIENT UNPAUSE"), "+OK\r\n");
    cr_assert_str_eq(run(b, "GET k"), "$-1\r\n");
    cr_assert_eq(srv.stat.expired_keys, expired + 1);
}

/* WAIT on a server without replicas: 0 at once when none are asked for or inside MULTI, else
 * 0 when the timeout ends; CLIENT UNBLOCK ends it too. */
Test(block, wait_answers_zero_replicas_when_its_timeout_ends)
{
    cr_assert_str_eq(run(a, "WAIT 0 0"), ":0\r\n");
    cr_assert_str_eq(run(a, "WAIT 1 -1"), "-ERR timeout is negative\r\n");
    cr_assert_str_eq(run(a, "WAIT x 1"), "-ERR value is not an integer or out of range\r\n");
    cr_assert_str_eq(run(a, "WAIT 1 20"), "");
    cr_assert_eq(block_count(), 1);
    long long t0 = time_ms();
    while (time_ms() - t0 < 30) {
    }
    block_check_timeouts(time_ms());
    cr_assert_str_eq(pending(a), ":0\r\n");
    cr_assert_str_eq(run(a, "MULTI"), "+OK\r\n");
    cr_assert_str_eq(run(a, "WAIT 1 0"), "+QUEUED\r\n");
    cr_assert_str_eq(run(a, "EXEC"), "*1\r\n:0\r\n");
    cr_assert_str_eq(run(a, "WAIT 1 0"), "");
    cr_assert_str_eq(run(b, "SWAPDB 0 1"), "+OK\r\n");
    cr_assert_str_eq(pending(a), "");
    char line[64];
    snprintf(line, sizeof(line), "CLIENT UNBLOCK %llu", (unsigned long long)a->id);
    cr_assert_str_eq(run(b, line), ":1\r\n");
    cr_assert_str_eq(pending(a), ":0\r\n");
}
