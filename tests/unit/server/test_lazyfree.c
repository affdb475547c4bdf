/* Tests for the background freeing of large values (server/lazyfree.c) through UNLINK and DEL
 * on a socketless client. */
#include "tests/unit/server/harness.h"
#include "common/alloc.h"
#include "server/lazyfree.h"
#include "server/server.h"
#include "storage/t_tag.h"

#include <criterion/criterion.h>
#include <stdio.h>
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

TestSuite(lazyfree, .init = setup, .fini = teardown);

/* SADD key with members 0..n-1 in one command. */
static void fill_set(const char *key, int n)
{
    static char line[64 * 1024];
    int len = snprintf(line, sizeof(line), "SADD %s", key);
    for (int i = 0; i < n; i++) len += snprintf(line + len, sizeof(line) - (size_t)len, " m%d", i);
    harness_send(c, line);
    buf_clear(&c->out);
}

Test(lazyfree, unlink_of_a_large_set_is_freed_by_the_thread)
{
    uint64_t before = lazyfree_freed();
    size_t empty = alloc_used_memory();
    fill_set("big", 2000);
    size_t peak = alloc_used_memory();
    cr_assert_gt(peak, empty + 50000);
    harness_expect(c, "UNLINK big", ":1\r\n");
    harness_expect(c, "EXISTS big", ":0\r\n");
    lazyfree_drain();
    cr_assert_eq(lazyfree_pending(), 0);
    cr_assert_eq(lazyfree_freed(), before + 1);
    cr_assert_lt(alloc_used_memory(), peak - 50000);
}

Test(lazyfree, small_values_and_plain_del_are_freed_at_once)
{
    uint64_t before = lazyfree_freed();
    fill_set("small", 10);
    harness_expect(c, "UNLINK small", ":1\r\n");
    fill_set("big", 2000);
    harness_expect(c, "DEL big", ":1\r\n");
    lazyfree_drain();
    cr_assert_eq(lazyfree_freed(), before);
    harness_expect(c, "CONFIG SET lazyfree-lazy-user-del yes", "+OK\r\n");
    fill_set("big", 2000);
    harness_expect(c, "DEL big", ":1\r\n");
    lazyfree_drain();
    cr_assert_eq(lazyfree_freed(), before + 1);
    harness_expect(c, "CONFIG RESETSTAT", "+OK\r\n");
    cr_assert_eq(lazyfree_freed(), 0);
}

Test(lazyfree, flushall_async_empties_at_once_and_the_thread_frees)
{
    uint64_t before = lazyfree_freed();
    fill_set("big", 2000);
    harness_expect(c, "SET s v", "+OK\r\n");
    harness_expect(c, "SELECT 2", "+OK\r\n");
    harness_expect(c, "SET other v", "+OK\r\n");
    harness_expect(c, "EXPIRE other 100", ":1\r\n");
    size_t peak = alloc_used_memory();
    harness_expect(c, "FLUSHALL ASYNC", "+OK\r\n");
    harness_expect(c, "DBSIZE", ":0\r\n");
    harness_expect(c, "SELECT 0", "+OK\r\n");
    harness_expect(c, "DBSIZE", ":0\r\n");
    harness_expect(c, "SET s new", "+OK\r\n"); /* the emptied database takes keys again */
    lazyfree_drain();
    cr_assert_eq(lazyfree_pending(), 0);
    cr_assert_eq(lazyfree_freed(), before + 3); /* a database counts its keys */
    cr_assert_lt(alloc_used_memory(), peak - 50000);
    harness_expect(c, "FLUSHDB ASYNC", "+OK\r\n");
    lazyfree_drain();
    cr_assert_eq(lazyfree_freed(), before + 4);
    harness_expect(c, "FLUSHDB ASYNC x", "-ERR syntax error\r\n");
}

Test(lazyfree, flush_async_is_at_once_while_a_tag_lives)
{
    uint64_t before = lazyfree_freed();
    fill_set("big", 2000);
    harness_expect(c, "TPUT t b 0 data", ":4\r\n");
    harness_expect(c, "FLUSHALL ASYNC", "+OK\r\n");
    harness_expect(c, "DBSIZE", ":0\r\n");
    cr_assert_eq(lazyfree_pending(), 0); /* freed by the command itself */
    cr_assert_eq(lazyfree_freed(), before);
    cr_assert_eq(tag_live(), 0);
}
