/* Tests for server/client.c: late-reply places and streamed late replies (a large TGET sent in
 * pieces), through a socketless client whose output stays in c->out. */
#include "tests/unit/server/harness.h"
#include "common/buf.h"
#include "server/client.h"
#include "server/reply.h"

#include <criterion/criterion.h>
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

TestSuite(client_reply, .init = setup, .fini = teardown);

typedef struct probe {
    int drains, detaches;
} probe_t;

static void on_drain(void *job)
{
    ((probe_t *)job)->drains++;
}

static void on_detach(void *job)
{
    ((probe_t *)job)->detaches++;
}

static void expect_out(const char *want)
{
    size_t n = strlen(want);
    cr_assert_eq(c->out.len, n, "out holds %zu bytes, want %zu (%s)", c->out.len, n, want);
    cr_assert(memcmp(c->out.data, want, n) == 0, "out differs from %s", want);
}

Test(client_reply, a_stream_waits_behind_an_earlier_late_reply_then_goes_straight_out)
{
    probe_t pr = {0, 0};
    struct reply_seg *late = client_reply_later(c, NULL, NULL);
    struct reply_seg *s = client_reply_stream_later(c, on_detach, on_drain, &pr);
    reply_simple(c, "AFTER"); /* a later command's reply queues behind the stream */
    client_reply_stream(c, s, "$6\r\nab", 6);
    client_reply_stream(c, s, "cd", 2);
    cr_assert_not(client_reply_room(c, s, 64)); /* behind another reply: it takes nothing */
    expect_out("");
    client_output_drained(c); /* not at the head: nothing happens */
    cr_assert_eq(pr.drains, 0);
    /* the earlier reply completes: it leaves, the stream's bytes follow, the stream is told */
    client_reply_fill(c, late, 1);
    reply_int(c, 1);
    client_reply_fill(c, late, 0);
    expect_out(":1\r\n$6\r\nabcd");
    cr_assert_eq(pr.drains, 1);
    /* at the head, room is what c->out holds */
    cr_assert_not(client_reply_room(c, s, 8));
    buf_clear(&c->out); /* the transport sent it */
    cr_assert(client_reply_room(c, s, 8));
    client_output_drained(c);
    cr_assert_eq(pr.drains, 2);
    client_reply_stream(c, s, "ef\r\n", 4);
    expect_out("ef\r\n");
    client_reply_stream_end(c, s);
    expect_out("ef\r\n+AFTER\r\n");
    cr_assert_null(c->seg_head);
    client_output_drained(c); /* done: never told again */
    cr_assert_eq(pr.drains, 2);
    cr_assert_eq(pr.detaches, 0);
}

Test(client_reply, a_stream_still_running_is_detached_when_the_client_goes)
{
    probe_t pr = {0, 0};
    struct reply_seg *s = client_reply_stream_later(c, on_detach, on_drain, &pr);
    client_reply_stream(c, s, "$3\r\nab", 6);
    expect_out("$3\r\nab"); /* at the head from the start */
    client_reply_drop(c);
    cr_assert_eq(pr.detaches, 1);
    cr_assert_null(c->seg_head);
    cr_assert_eq(c->nsegs, 0);
}
