/* test_reply.c - server/reply.c: the reply size limits, through the socketless client.
 *
 * reply_fits_or_reply refuses a reply estimated past max-reply-bytes, maxmemory or the hard
 * output limit, naming the smallest one passed; a reply that grows past the hard limit while
 * it is built closes the client, frees its output and mutes it, so the pending output never
 * passes the limit by more than one item. */
#include "server/client.h"
#include "server/reply.h"
#include "server/server.h"

#include "tests/unit/server/harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static client_t *C;

static void setup(void)
{
    C = harness_server_start(0, NULL);
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(reply, .init = setup, .fini = teardown);

static void expect(const char *line, const char *want)
{
    harness_expect(C, line, want);
}

/* "ERR reply ..." as c received it, for comparing. */
static int refused_with(const char *want)
{
    int ok = C->out.len == strlen(want) && memcmp(C->out.data, want, C->out.len) == 0;
    buf_clear(&C->out);
    return ok;
}

Test(reply, fits_names_the_smallest_limit_passed)
{
    cr_assert_eq(reply_fits_or_reply(C, 1000, 6), 0);
    cr_assert_eq(C->out.len, 0);
    cr_assert_eq(reply_fits_or_reply(C, 1ull << 40, 6), -1);
    cr_assert(refused_with("-ERR reply of at least 6597069766656 bytes would exceed "
                           "max-reply-bytes (1073741824 bytes)\r\n"));
    srv.cfg.maxmemory = 2 << 20;
    cr_assert_eq(reply_fits_or_reply(C, 1 << 20, 6), -1);
    cr_assert(refused_with("-ERR reply of at least 6291456 bytes would exceed maxmemory "
                           "(2097152 bytes)\r\n"));
    srv.cfg.client_obuf_limits[CONFIG_CLIENT_NORMAL].hard_bytes = 1 << 20;
    cr_assert_eq(reply_fits_or_reply(C, 1 << 20, 6), -1);
    cr_assert(refused_with("-ERR reply of at least 6291456 bytes would exceed "
                           "client-output-buffer-limit (1048576 bytes)\r\n"));
    cr_assert_eq(reply_fits_or_reply(C, 1000, 6), 0);
}

Test(reply, fits_never_overflows)
{
    cr_assert_eq(reply_fits_or_reply(C, ~0ull, ~0ull), -1);
    cr_assert(refused_with("-ERR reply of at least 340282366920938463426481119284349108225 "
                           "bytes would exceed max-reply-bytes (1073741824 bytes)\r\n"));
    cr_assert_eq(reply_fits_or_reply(C, 0, ~0ull), 0);
}

Test(reply, hard_limit_is_the_class_limit_or_max_reply_bytes)
{
    cr_assert_eq(reply_hard_limit(C), 1ull << 30);
    srv.cfg.client_obuf_limits[CONFIG_CLIENT_NORMAL].hard_bytes = 1 << 20;
    cr_assert_eq(reply_hard_limit(C), 1u << 20);
    srv.cfg.client_obuf_limits[CONFIG_CLIENT_PUBSUB].hard_bytes = 3 << 20;
    C->flags |= CLIENT_PUBSUB;
    cr_assert_eq(reply_hard_limit(C), 3u << 20);
    C->flags &= ~(uint32_t)CLIENT_PUBSUB;
}

/* Members of 1000 bytes: the estimate (6 bytes a member) lets SRANDMEMBER -100000 start, and
 * the limit stops it at 1 MB instead of 100 MB. */
Test(reply, a_reply_growing_past_the_hard_limit_closes_the_client)
{
    char cmd[1100];
    char big[1001];
    memset(big, 'x', 1000);
    big[1000] = '\0';
    for (int i = 0; i < 3; i++) {
        big[0] = (char)('a' + i);
        snprintf(cmd, sizeof(cmd), "SADD s %s", big);
        expect(cmd, ":1\r\n");
    }
    expect("CONFIG SET client-output-buffer-limit \"normal 1mb 0 0\"", "+OK\r\n");
    unsigned long long before = srv.stat.client_outbuf_limit_disconnections;
    harness_send(C, "SRANDMEMBER s -100000");
    cr_assert(reply_stopped(C));
    cr_assert(C->flags & CLIENT_CLOSE_ASAP);
    cr_assert_eq(srv.stat.client_outbuf_limit_disconnections, before + 1);
    cr_assert_eq(C->out.len, 0, "pending output of a closed client is dropped");
    cr_assert_lt(C->out.cap, 2 << 20);
    /* later replies are no-ops */
    reply_bulk(C, big, 1000);
    reply_int(C, 1);
    cr_assert_eq(C->out.len, 0);
    int mute;
    cr_assert_null(reply_bulk_begin(C, 10, &mute));
    cr_assert_eq(mute, 1);
}

Test(reply, a_reply_growing_past_max_reply_bytes_closes_the_client)
{
    expect("CONFIG SET max-reply-bytes 1mb", "+OK\r\n");
    for (int i = 0; i < 3000 && !reply_stopped(C); i++) reply_bulk(C, "0123456789", 10);
    cr_assert(!reply_stopped(C), "30 KB fit");
    char chunk[4096];
    memset(chunk, 'y', sizeof(chunk));
    int i = 0;
    for (; i < 1000 && !reply_stopped(C); i++) reply_bulk(C, chunk, sizeof(chunk));
    cr_assert(reply_stopped(C));
    cr_assert_lt(i, 270, "stopped after %d chunks", i);
}

/* The soft limit with its seconds holds inside one command too: past it for longer than the
 * seconds (here the clock is set back, as a command running that long would), the next append
 * closes the client. */
Test(reply, a_reply_past_the_soft_limit_for_too_long_closes_the_client)
{
    expect("CONFIG SET client-output-buffer-limit \"normal 0 64kb 1\"", "+OK\r\n");
    char chunk[4096];
    memset(chunk, 'z', sizeof(chunk));
    for (int i = 0; i < 20; i++) reply_bulk(C, chunk, sizeof(chunk)); /* 80 KB */
    reply_int(C, 1);
    cr_assert(!reply_stopped(C), "past the soft limit, but not for a second yet");
    cr_assert_neq(C->rbuf_soft_since_ms, 0);
    C->rbuf_soft_since_ms -= 1500;
    reply_int(C, 2);
    cr_assert(reply_stopped(C));
    cr_assert_eq(C->out.len, 0);
}

/* Output that drained below the soft limit in between stops the clock. */
Test(reply, the_soft_clock_stops_when_output_drains)
{
    expect("CONFIG SET client-output-buffer-limit \"normal 0 64kb 1\"", "+OK\r\n");
    char chunk[4096];
    memset(chunk, 'z', sizeof(chunk));
    for (int i = 0; i < 20; i++) reply_bulk(C, chunk, sizeof(chunk));
    reply_int(C, 1);
    C->rbuf_soft_since_ms -= 1500;
    buf_clear(&C->out); /* sent */
    reply_int(C, 2);
    cr_assert_eq(C->rbuf_soft_since_ms, 0);
    for (int i = 0; i < 20; i++) reply_bulk(C, chunk, sizeof(chunk));
    reply_int(C, 3);
    cr_assert(!reply_stopped(C));
}

/* A bulk string longer than the hard limit closes the client before it is copied. */
Test(reply, a_bulk_past_the_hard_limit_is_never_copied)
{
    expect("CONFIG SET client-output-buffer-limit \"normal 1mb 0 0\"", "+OK\r\n");
    static char big[(1 << 20) + 1];
    reply_bulk(C, big, sizeof(big));
    cr_assert(reply_stopped(C));
    cr_assert_eq(C->out.len, 0);
    cr_assert_lt(C->out.cap, 4096);
}

Test(reply, a_bulk_begun_past_the_hard_limit_is_refused)
{
    expect("CONFIG SET client-output-buffer-limit \"normal 1mb 0 0\"", "+OK\r\n");
    int mute = 0;
    cr_assert_null(reply_bulk_begin(C, 2 << 20, &mute));
    cr_assert_eq(mute, 1, "the caller skips the read: the client is gone");
    cr_assert(reply_stopped(C));
}
