/* Tests for server/client.c: when replies are handed to the transport during a pipeline. */
#include "tests/unit/server/harness.h"
#include "common/buf.h"
#include "server/client.h"
#include "server/server.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static int writes;       /* want_write calls while the pipeline runs */
static size_t sent[64];  /* bytes pending at each */

static void record_write(client_t *c)
{
    if (writes < 64) sent[writes] = c->out.len;
    writes++;
    buf_clear(&c->out); /* as if the socket took it all */
}

static const transport_ops_t recording = {record_write, NULL, NULL};

static client_t *c;

static void setup(void)
{
    harness_server_start(0, NULL);
    c = client_new(&recording, NULL, -1);
    writes = 0;
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(client, .init = setup, .fini = teardown);

/* SET k <n bytes>, then n_gets pipelined GET k in one read. */
static void pipeline_gets(size_t n, int n_gets)
{
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%zu\r\n", n);
    for (size_t i = 0; i < n; i++) buf_append(&b, "x", 1);
    buf_append(&b, "\r\n", 2);
    client_feed(c, b.data, b.len);
    buf_clear(&c->out);
    buf_clear(&b);
    static const char get[] = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
    for (int i = 0; i < n_gets; i++) buf_append(&b, get, sizeof(get) - 1);
    writes = 0;
    cr_assert_eq(client_feed(c, b.data, b.len), 0);
    buf_deinit(&b);
}

Test(client, replies_of_64k_gather_into_few_writes_during_a_pipeline)
{
    pipeline_gets(65536, 8);
    /* 8 x 64 KiB: handed over after every 4th reply at most, not after each */
    cr_assert_leq(writes, 2, "%d writes during the pipeline", writes);
    cr_assert_geq(writes, 1, "a large pipeline's replies start leaving before it ends");
    for (int i = 0; i < writes; i++) cr_assert_geq(sent[i], 4 * 65536, "write %d: %zu", i, sent[i]);
    cr_assert_eq(c->out.len, (8 - 4 * (size_t)writes) * (65536 + 9 + 2));
}

Test(client, a_1m_reply_leaves_before_the_next_command_runs)
{
    pipeline_gets(1 << 20, 3);
    cr_assert_eq(writes, 3);
    for (int i = 0; i < 3; i++) cr_assert_eq(sent[i], (1 << 20) + 10 + 2);
}

Test(client, small_replies_wait_for_the_end_of_the_turn)
{
    pipeline_gets(100, 64);
    cr_assert_eq(writes, 0);
    cr_assert_eq(c->out.len, 64 * (100 + 6 + 2));
}
