/* Tests for server/persist/aof.c: what write commands log (SELECT, the #MS time line, argv, or what a
 * command is logged as instead), and loading: a replay gives the same data, a torn tail is cut,
 * corruption in the middle stops the load. Each test runs in its own temp directory with a
 * socketless client; aof_flush() stands in for the loop's flush before replies. */
#include "tests/unit/server/harness.h"

#include "common/buf.h"
#include "server/persist/aof.h"
#include "server/client.h"
#include "server/rooms.h"
#include "server/server.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static client_t *c;

static void start(int appendonly)
{
    char *argv[] = {"cte-server", "--appendonly", appendonly ? "yes" : "no", "--appendfsync",
                    "always"};
    c = harness_server_start(5, argv);
    cr_assert_eq(aof_load(NULL), 0);
    cr_assert_eq(aof_open(), 0);
}

static void stop(void)
{
    aof_shutdown();
    harness_server_stop();
}

static void setup(void)
{
    cr_assert_eq(chdir(harness_tmpdir_make("cte-aof")), 0);
    start(1);
}

static void teardown(void)
{
    stop();
    harness_tmpdir_remove();
}

TestSuite(aof, .init = setup, .fini = teardown);

/* The file as a string (it holds no NUL in these tests). */
static char *file_text(void)
{
    static char text[65536];
    aof_flush();
    FILE *f = fopen("appendonly.aof", "rb");
    cr_assert_not_null(f);
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

static void ok(const char *line)
{
    harness_send(c, line);
    buf_clear(&c->out);
}

/* Restarts the server on the same directory (the file is loaded again). */
static void restart(void)
{
    stop();
    start(1);
}

Test(aof, write_is_logged_after_select_and_time_reads_are_not)
{
    ok("SET a 1");
    ok("GET a");
    ok("SET a 1 NX"); /* changed nothing: not logged */
    const char *t = file_text();
    cr_assert(strstr(t, "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n#MS:") == t, "%s", harness_escaped(t, strlen(t)));
    cr_assert_not_null(strstr(t, "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n"));
    cr_assert_null(strstr(t, "GET"));
    cr_assert_null(strstr(t, "NX"));
}

Test(aof, relative_times_and_random_picks_are_logged_as_what_they_did)
{
    ok("SADD s x");
    ok("SPOP s");
    ok("SET f 1.5");
    ok("INCRBYFLOAT f 1");
    ok("SET k v EX 100");
    ok("EXPIRE f 50");
    ok("RPUSH l a");
    ok("BLPOP nothing l 0");
    const char *t = file_text();
    cr_assert_not_null(strstr(t, "$4\r\nSREM\r\n$1\r\ns\r\n$1\r\nx\r\n"), "%s", harness_escaped(t, strlen(t)));
    cr_assert_null(strstr(t, "SPOP"));
    cr_assert_not_null(strstr(t, "$3\r\nSET\r\n$1\r\nf\r\n$3\r\n2.5\r\n$7\r\nKEEPTTL\r\n"));
    cr_assert_not_null(strstr(t, "$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$4\r\nPXAT\r\n"));
    cr_assert_not_null(strstr(t, "$9\r\nPEXPIREAT\r\n$1\r\nf\r\n"));
    cr_assert_not_null(strstr(t, "$5\r\nLMPOP\r\n$1\r\n2\r\n$7\r\nnothing\r\n$1\r\nl\r\n$4\r\nLEFT\r\n"));
    cr_assert_null(strstr(t, "BLPOP"));
}

Test(aof, transaction_writes_are_wrapped_in_multi_exec)
{
    ok("MULTI");
    ok("SET a 1");
    ok("GET a");
    ok("INCR a");
    ok("EXEC");
    const char *t = file_text(), *m = strstr(t, "MULTI"), *e = strstr(t, "EXEC");
    cr_assert(m && e && m < strstr(t, "INCR") && strstr(t, "INCR") < e, "%s",
              harness_escaped(t, strlen(t)));
}

Test(aof, an_open_transaction_is_written_only_when_it_ends)
{
    /* what a script past busy-reply-threshold does: its writes so far are flushed while it
     * still runs; none may reach the file before EXEC */
    ok("SET before 1");
    aof_exec_begin();
    resp_arg_t argv[3] = {{"SET", 3}, {"inside", 6}, {"1", 1}};
    aof_propagate(NULL, 0, 3, argv);
    const char *t = file_text();
    cr_assert(strstr(t, "before") && !strstr(t, "MULTI") && !strstr(t, "inside"), "%s",
              harness_escaped(t, strlen(t)));
    aof_exec_end();
    t = file_text();
    cr_assert(strstr(t, "MULTI") && strstr(t, "inside") && strstr(t, "EXEC"), "%s",
              harness_escaped(t, strlen(t)));
}

Test(aof, a_discarded_transaction_never_reaches_the_file)
{
    aof_exec_begin();
    resp_arg_t set[3] = {{"SET", 3}, {"dropped", 7}, {"1", 1}};
    aof_propagate(NULL, 3, 3, set); /* in db 3: SELECT 3 is logged with it */
    aof_flush();
    aof_exec_discard();
    ok("SET kept 1"); /* db 0 again: the SELECT 3 of the dropped records is stated again */
    const char *t = file_text();
    cr_assert(!strstr(t, "dropped") && !strstr(t, "MULTI") && strstr(t, "kept"), "%s",
              harness_escaped(t, strlen(t)));
    restart();
    harness_expect(c, "GET kept", "$1\r\n1\r\n");
    harness_expect(c, "EXISTS dropped", ":0\r\n");
}

Test(aof, replay_gives_the_same_data_and_blob_times)
{
    ok("SELECT 2");
    ok("HSET h f v");
    ok("ZADD z 1.5 m");
    ok("TPUT t b 0 hello 0.5");
    ok("TPUT t b 10 world");
    harness_send(c, "TINFO t b");
    buf_t before;
    buf_init(&before);
    buf_append(&before, c->out.data, c->out.len);
    buf_clear(&c->out);
    restart();
    ok("SELECT 2");
    harness_expect(c, "HGET h f", "$1\r\nv\r\n");
    harness_expect(c, "ZSCORE z m", "$3\r\n1.5\r\n");
    harness_send(c, "TINFO t b"); /* before TGET, which changes atime and reads */
    cr_assert(c->out.len == before.len && !memcmp(c->out.data, before.data, before.len),
              "%s vs %s", harness_escaped(c->out.data, c->out.len),
              harness_escaped(before.data, before.len));
    buf_clear(&c->out);
    buf_deinit(&before);
    harness_expect(c, "TGET t b 0 5", "$5\r\nhello\r\n");
}

Test(aof, save_compacts_and_the_compact_file_loads)
{
    for (int i = 0; i < 50; i++) ok("INCR n");
    ok("TPUT t b 0 data 0.25");
    harness_expect(c, "SAVE", "+OK\r\n");
    const char *t = file_text();
    cr_assert_null(strstr(t, "INCR"), "%s", harness_escaped(t, strlen(t)));
    cr_assert_not_null(strstr(t, "TMETA"));
    restart();
    harness_expect(c, "GET n", "$2\r\n50\r\n");
    harness_expect(c, "TSCORE t b", "$4\r\n0.25\r\n");
}

static void append_raw(const char *bytes)
{
    aof_flush();
    FILE *f = fopen("appendonly.aof", "ab");
    fputs(bytes, f);
    fclose(f);
}

static long long size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

Test(aof, torn_tail_is_cut_and_the_rest_loads)
{
    ok("SET a 1");
    aof_flush();
    long long good = size_of("appendonly.aof");
    append_raw("*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1");
    restart();
    harness_expect(c, "GET a", "$1\r\n1\r\n");
    harness_expect(c, "EXISTS b", ":0\r\n");
    cr_assert_eq(size_of("appendonly.aof"), good);
}

Test(aof, open_transaction_at_the_end_is_dropped)
{
    ok("SET a 1");
    append_raw("*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n2\r\n");
    restart();
    harness_expect(c, "GET a", "$1\r\n1\r\n");
}

Test(aof, corruption_in_the_middle_stops_the_load)
{
    ok("SET a 1");
    append_raw("*2\r\n$x\r\n*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n");
    long long size = size_of("appendonly.aof");
    stop();
    config_init(&srv.cfg);
    server_rooms_register();
    server_init();
    cr_assert_eq(aof_load(NULL), -1);
    cr_assert_eq(size_of("appendonly.aof"), size, "a corrupt file must not be cut");
    server_deinit();
    config_deinit(&srv.cfg);
    unlink("appendonly.aof");
    start(0); /* for teardown */
}
