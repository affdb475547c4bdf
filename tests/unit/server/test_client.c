/* Tests for server/client.c: late-reply places and streamed late replies (a large TGET sent in
 * pieces), through a socketless client whose output stays in c->out; and when replies are
 * handed to the transport during a pipeline, through a client whose transport records it. */
#include "tests/unit/server/harness.h"
#include "common/buf.h"
#include "server/client.h"
#include "server/reply.h"
#include "server/server.h"

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
    cr_assert(n == 0 || memcmp(c->out.data, want, n) == 0, "out differs from %s", want);
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

/* The output limit counts what waits in late-reply places too: replies queued behind
 * several late replies could otherwise pile up past it, one place at a time. */
Test(client_reply, replies_queued_behind_late_replies_count_in_the_output_limit)
{
    harness_expect(c, "CONFIG SET client-output-buffer-limit \"normal 1mb 1mb 0\"", "+OK\r\n");
    static char big[600 * 1024];
    memset(big, 'x', sizeof(big));
    struct reply_seg *l1 = client_reply_later(c, NULL, NULL);
    reply_bulk(c, big, sizeof(big)); /* 600 KB behind the first late reply */
    struct reply_seg *l2 = client_reply_later(c, NULL, NULL);
    cr_assert_not(c->flags & CLIENT_CLOSE_ASAP);
    reply_bulk(c, big, sizeof(big)); /* 1.2 MB pending in all: past the hard limit */
    cr_assert(c->flags & CLIENT_CLOSE_ASAP, "closed for its output limit");
    (void)l1;
    (void)l2;
}

/* Filling the places in order moves them to c->out, and the count follows. */
Test(client_reply, late_reply_places_leave_the_count_as_they_leave)
{
    harness_expect(c, "CONFIG SET client-output-buffer-limit \"normal 1mb 1mb 0\"", "+OK\r\n");
    static char big[400 * 1024];
    memset(big, 'y', sizeof(big));
    for (int round = 0; round < 4; round++) {
        struct reply_seg *l = client_reply_later(c, NULL, NULL);
        reply_bulk(c, big, sizeof(big));
        client_reply_fill(c, l, 1);
        reply_int(c, round);
        client_reply_fill(c, l, 0);
        cr_assert_eq(c->seg_bytes, 0, "round %d: %zu bytes counted in places", round, c->seg_bytes);
        buf_clear(&c->out); /* the transport sent it */
    }
    cr_assert_not(c->flags & CLIENT_CLOSE_ASAP, "1.6 MB went through, never more than 0.4 MB held");
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

/* ---- replies handed to the transport during a pipeline ---- */

static int writes;       /* want_write calls while the pipeline runs */
static size_t sent[64];  /* bytes pending at each */

static void record_write(client_t *c)
{
    if (writes < 64) sent[writes] = c->out.len;
    writes++;
    buf_clear(&c->out); /* as if the socket took it all */
}

static const transport_ops_t recording = {record_write, NULL, NULL};

static client_t *pc; /* the pipeline suite's client, with a recording transport */

static void pipeline_setup(void)
{
    harness_server_start(0, NULL);
    pc = client_new(&recording, NULL, -1);
    writes = 0;
}

static void pipeline_teardown(void)
{
    harness_server_stop();
}

TestSuite(client, .init = pipeline_setup, .fini = pipeline_teardown);

/* SET k <n bytes>, then n_gets pipelined GET k in one read. */
static void pipeline_gets(size_t n, int n_gets)
{
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%zu\r\n", n);
    for (size_t i = 0; i < n; i++) buf_append(&b, "x", 1);
    buf_append(&b, "\r\n", 2);
    client_feed(pc, b.data, b.len);
    buf_clear(&pc->out);
    buf_clear(&b);
    static const char get[] = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
    for (int i = 0; i < n_gets; i++) buf_append(&b, get, sizeof(get) - 1);
    writes = 0;
    cr_assert_eq(client_feed(pc, b.data, b.len), 0);
    buf_deinit(&b);
}

Test(client, replies_of_64k_gather_into_few_writes_during_a_pipeline)
{
    pipeline_gets(65536, 8);
    /* 8 x 64 KiB: handed over after every 4th reply at most, not after each */
    cr_assert_leq(writes, 2, "%d writes during the pipeline", writes);
    cr_assert_geq(writes, 1, "a large pipeline's replies start leaving before it ends");
    for (int i = 0; i < writes; i++) cr_assert_geq(sent[i], 4 * 65536, "write %d: %zu", i, sent[i]);
    cr_assert_eq(pc->out.len, (8 - 4 * (size_t)writes) * (65536 + 9 + 2));
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
    cr_assert_eq(pc->out.len, 64 * (100 + 6 + 2));
}

/* ---- shm data-area arguments (client_settle_refs) ---- */

static char area[4096];

/* argv[i] = bytes at area+off (ref) or the literal s. */
static void set_args(resp_arg_t *argv, int argc)
{
    c->argc = argc;
    c->argv = argv;
    c->parser.area = area;
    c->parser.area_size = sizeof area;
}

static int in_area(const resp_arg_t *a)
{
    return a->ptr >= area && a->ptr <= area + sizeof area;
}

Test(client_reply, data_area_arguments_are_copied_but_the_value_a_command_stores)
{
    memcpy(area, "SETkey", 6);
    memcpy(area + 100, "value", 5);
    resp_arg_t argv[5] = {{area, 3}, {area + 3, 3}, {area + 100, 5}, {"PX", 2}, {area + 4096, 0}};
    /* the command name a ref: nothing is kept, everything is copied and terminated */
    set_args(argv, 3);
    cr_assert_eq(client_settle_refs(c), 0);
    for (int i = 0; i < 3; i++) {
        cr_assert(!in_area(&argv[i]), "arg %d copied", i);
        cr_assert_eq(argv[i].ptr[argv[i].len], '\0');
    }
    cr_assert_str_eq(argv[0].ptr, "SET");
    cr_assert_str_eq(argv[2].ptr, "value");
    /* a plain name: SET's value (argv[2]) stays a view, the key and a zero-length ref at the
     * area's very end are copied */
    resp_arg_t b[5] = {{"SET", 3}, {area + 3, 3}, {area + 100, 5}, {"PX", 2}, {area + 4096, 0}};
    set_args(b, 5);
    cr_assert_eq(client_settle_refs(c), 0);
    cr_assert_eq(b[2].ptr, area + 100, "the value is read once, in place");
    cr_assert(!in_area(&b[1]) && !strcmp(b[1].ptr, "key"));
    cr_assert(!in_area(&b[4]) && b[4].ptr[0] == '\0');
    cr_assert_str_eq(b[3].ptr, "PX", "ordinary arguments untouched");
    /* with the append-only file on, the log reads the value again: copied too */
    srv.cfg.appendonly = 1;
    resp_arg_t d[3] = {{"SET", 3}, {area + 3, 3}, {area + 100, 5}};
    set_args(d, 3);
    cr_assert_eq(client_settle_refs(c), 0);
    cr_assert(!in_area(&d[2]) && !strcmp(d[2].ptr, "value"));
    srv.cfg.appendonly = 0;
    c->argc = 0;
    c->argv = NULL;
}

Test(client_reply, data_area_copies_are_bounded_by_the_area_per_request_and_transaction)
{
    resp_arg_t argv[3] = {{"MGET", 4}, {area, 4096}, {area, 4096}};
    set_args(argv, 3); /* 8 KiB of copies from a 4 KiB area */
    cr_assert_eq(client_settle_refs(c), -1);
    cr_assert(c->flags & CLIENT_CLOSE_AFTER_REPLY);
    cr_assert(strstr(c->out.data, "data area references exceed"), "%s", c->out.data);
    c->flags &= ~(uint32_t)CLIENT_CLOSE_AFTER_REPLY;
    buf_clear(&c->out);
    /* inside MULTI the copies of every queued command add up */
    harness_send(c, "MULTI"); /* resets the transaction's count */
    buf_clear(&c->out);
    c->multi_ref_bytes = 9999; /* as a transaction before left it */
    harness_send(c, "DISCARD");
    harness_send(c, "MULTI");
    cr_assert_eq(c->multi_ref_bytes, 0);
    resp_arg_t one[2] = {{"GET", 3}, {area, 1500}};
    set_args(one, 2);
    cr_assert_eq(client_settle_refs(c), 0);
    set_args(one, 2);
    one[1].ptr = area;
    cr_assert_eq(client_settle_refs(c), 0);
    one[1].ptr = area;
    cr_assert_eq(client_settle_refs(c), -1, "a third 1500-byte copy passes the 4 KiB area");
    c->flags &= ~(uint32_t)CLIENT_CLOSE_AFTER_REPLY;
    c->argc = 0;
    c->argv = NULL;
    harness_send(c, "DISCARD");
}
