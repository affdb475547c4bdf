/* Tests for the dispatcher, connection and server commands through the socketless client. */
#include "tests/unit/server/harness.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "server/client.h"
#include "server/command.h"
#include "server/server.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static client_t *c;

static void setup(void)
{
    c = harness_server_start(0, NULL);
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(server_cmds, .init = setup, .fini = teardown);

/* Sends an inline command and returns the reply bytes (valid until the next call). */
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

Test(server_cmds, ping_and_echo)
{
    cr_assert_str_eq(run("PING"), "+PONG\r\n");
    cr_assert_str_eq(run("ping hello"), "$5\r\nhello\r\n");
    cr_assert_str_eq(run("PING a b"), "-ERR wrong number of arguments for 'ping' command\r\n");
    cr_assert_str_eq(run("ECHO \"a b\""), "$3\r\na b\r\n");
}

Test(server_cmds, unknown_command_names_its_arguments_as_redis)
{
    cr_assert_str_eq(run("FOO a b"),
                     "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n");
    cr_assert_str_eq(run("FOO"), "-ERR unknown command 'FOO', with args beginning with: \r\n");
}

Test(server_cmds, pipelined_requests_reply_in_order)
{
    const char *req = "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$1\r\nx\r\nPING\r\n";
    buf_clear(&c->out);
    client_feed(c, req, strlen(req));
    cr_assert_eq(c->out.len, strlen("+PONG\r\n$1\r\nx\r\n+PONG\r\n"));
    cr_assert(memcmp(c->out.data, "+PONG\r\n$1\r\nx\r\n+PONG\r\n", c->out.len) == 0);
}

Test(server_cmds, protocol_error_replies_and_marks_close)
{
    buf_clear(&c->out);
    client_feed(c, "*abc\r\n", 6);
    cr_assert(strstr(c->out.data, "-ERR Protocol error: invalid multibulk length") != NULL);
    cr_assert(c->flags & CLIENT_CLOSE_AFTER_REPLY);
}

Test(server_cmds, hello_switches_protocol_and_replies_a_map)
{
    const char *r = run("HELLO 3");
    cr_assert(strncmp(r, "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n", 27) == 0, "%s", r);
    cr_assert_eq(c->resp, 3);
    cr_assert_str_eq(run("HELLO 4"), "-NOPROTO unsupported protocol version\r\n");
    cr_assert_str_eq(run("HELLO x"),
                     "-ERR Protocol version is not an integer or out of range\r\n");
    r = run("HELLO 2");
    cr_assert(strncmp(r, "*14\r\n", 5) == 0);
    cr_assert_eq(c->resp, 2);
}

Test(server_cmds, select_checks_range)
{
    cr_assert_str_eq(run("SELECT 15"), "+OK\r\n");
    cr_assert_eq(c->dbid, 15);
    cr_assert_str_eq(run("SELECT 16"), "-ERR DB index is out of range\r\n");
    cr_assert_str_eq(run("SELECT x"), "-ERR value is not an integer or out of range\r\n");
    cr_assert_eq(c->dbid, 15);
}

Test(server_cmds, auth_without_password_is_an_error)
{
    cr_assert(strncmp(run("AUTH x"), "-ERR AUTH <password> called without any password", 48) == 0);
}

Test(server_cmds, requirepass_gates_commands_until_auth)
{
    cr_assert_str_eq(run("CONFIG SET requirepass secret"), "+OK\r\n");
    client_t *other = client_new(NULL, NULL, -1);
    client_t *saved = c;
    c = other;
    cr_assert_str_eq(run("PING"), "-NOAUTH Authentication required.\r\n");
    cr_assert_str_eq(run("AUTH wrong"),
                     "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    cr_assert_str_eq(run("AUTH secret"), "+OK\r\n");
    cr_assert_str_eq(run("PING"), "+PONG\r\n");
    c = saved;
}

Test(server_cmds, config_get_and_set_use_the_table)
{
    cr_assert_str_eq(run("CONFIG GET maxclients"), "*2\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n");
    cr_assert_str_eq(run("CONFIG SET maxclients 50"), "+OK\r\n");
    cr_assert_eq(srv.cfg.maxclients, 50);
    cr_assert_str_eq(run("CONFIG SET hash-max-listpack-entries 7"), "+OK\r\n");
    cr_assert_eq(storage_params.hash_max_listpack_entries, 7);
    const char *r = run("CONFIG SET port abc");
    cr_assert(strncmp(r, "-ERR CONFIG SET failed (possibly related to argument 'port')", 59) == 0,
              "%s", r);
    cr_assert_str_eq(run("CONFIG FOO"), "-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n");
    cr_assert_str_eq(run("CONFIG"), "-ERR wrong number of arguments for 'config' command\r\n");
    cr_assert_str_eq(run("CONFIG GET"),
                     "-ERR wrong number of arguments for 'config|get' command\r\n");
}

Test(server_cmds, command_count_info_and_getkeys)
{
    const char *r = run("COMMAND COUNT");
    cr_assert_eq(r[0], ':');
    cr_assert_gt(atoi(r + 1), 10);
    r = run("COMMAND INFO ping nosuch");
    cr_assert(strncmp(r, "*2\r\n*10\r\n$4\r\nping\r\n:-1\r\n", 23) == 0, "%s", r);
    cr_assert(strstr(r, "$-1\r\n") != NULL); /* Redis 7.0: a null bulk for an unknown name */
    cr_assert_str_eq(run("COMMAND GETKEYS ping x"), "-ERR The command has no key arguments\r\n");
    /* as Redis 7.0: the command and at least one argument; EVAL may have no keys */
    cr_assert_str_eq(run("COMMAND GETKEYS ping"),
                     "-ERR wrong number of arguments for 'command|getkeys' command\r\n");
    cr_assert_str_eq(run("COMMAND GETKEYS eval x 0 k"), "*0\r\n");
    cr_assert_str_eq(run("COMMAND GETKEYS nosuch a"), "-ERR Invalid command specified\r\n");
}

Test(server_cmds, command_list_names_subcommands_and_filters)
{
    const char *r = run("COMMAND LIST");
    cr_assert(strstr(r, "$3\r\nset\r\n") && strstr(r, "$10\r\nconfig|get\r\n"));
    cr_assert_str_eq(run("COMMAND LIST FILTERBY PATTERN set"), "*1\r\n$3\r\nset\r\n");
    r = run("COMMAND LIST FILTERBY PATTERN config|*re*");
    cr_assert(strstr(r, "config|resetstat") && !strstr(r, "config|get"), "%s", r);
    r = run("COMMAND LIST FILTERBY PATTERN cl*help");
    cr_assert(strstr(r, "client|help") && strstr(r, "cluster|help"), "%s", r);
    r = run("COMMAND LIST FILTERBY ACLCAT sortedset");
    cr_assert(strstr(r, "\r\nzadd\r\n") && !strstr(r, "\r\nset\r\n"), "%s", r);
    cr_assert_str_eq(run("COMMAND LIST FILTERBY ACLCAT nosuch"), "*0\r\n");
    cr_assert_str_eq(run("COMMAND LIST FILTERBY MODULE nosuch"), "*0\r\n");
    cr_assert_str_eq(run("COMMAND LIST bad"), "-ERR syntax error\r\n");
    cr_assert_str_eq(run("COMMAND LIST FILTERBY bad x"), "-ERR syntax error\r\n");
}

Test(server_cmds, command_getkeys_past_256_keys)
{
    char line[4096] = "COMMAND GETKEYS ZUNIONSTORE target 260";
    for (int i = 1; i <= 260; i++) snprintf(line + strlen(line), 16, " k%d", i);
    const char *r = run(line);
    const char *head = "*261\r\n$6\r\ntarget\r\n$2\r\nk1\r\n";
    cr_assert(strncmp(r, head, strlen(head)) == 0, "%.40s", r);
    cr_assert(strstr(r, "$4\r\nk260\r\n") != NULL);
}

Test(server_cmds, command_getkeysandflags_names_each_key_spec)
{
    cr_assert_str_eq(run("COMMAND GETKEYSANDFLAGS set k1 v1"),
                     "*1\r\n*2\r\n$2\r\nk1\r\n*2\r\n+OW\r\n+update\r\n");
    cr_assert_str_eq(run("COMMAND GETKEYSANDFLAGS lmove k1 k2 left right"),
                     "*2\r\n*2\r\n$2\r\nk1\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n"
                     "*2\r\n$2\r\nk2\r\n*2\r\n+RW\r\n+insert\r\n");
    cr_assert_str_eq(run("COMMAND GETKEYSANDFLAGS sort k1 store k2"),
                     "*2\r\n*2\r\n$2\r\nk1\r\n*2\r\n+RO\r\n+access\r\n"
                     "*2\r\n$2\r\nk2\r\n*2\r\n+OW\r\n+update\r\n");
    cr_assert_str_eq(run("COMMAND GETKEYSANDFLAGS get k"),
                     "*1\r\n*2\r\n$1\r\nk\r\n*2\r\n+RO\r\n+access\r\n");
}

Test(server_cmds, info_has_the_requested_sections)
{
    const char *r = run("INFO server");
    cr_assert(strstr(r, "redis_version:") && strstr(r, "# Server"));
    cr_assert_null(strstr(r, "# Keyspace"));
    r = run("INFO");
    cr_assert(strstr(r, "# Memory") && strstr(r, "used_memory:") && strstr(r, "# Stats"));
    r = run("INFO commandstats");
    cr_assert(strstr(r, "cmdstat_info:calls=") != NULL, "%s", r);
}

Test(server_cmds, client_names_are_checked)
{
    cr_assert_str_eq(run("CLIENT SETNAME app1"), "+OK\r\n");
    cr_assert_str_eq(run("CLIENT GETNAME"), "$4\r\napp1\r\n");
    cr_assert_str_eq(
        run("CLIENT SETNAME \"a b\""),
        "-ERR Client names cannot contain spaces, newlines or special characters.\r\n");
    cr_assert_str_eq(run("CLIENT GETNAME"), "$4\r\napp1\r\n");
    char want[32];
    snprintf(want, sizeof(want), ":%llu\r\n", (unsigned long long)c->id);
    cr_assert_str_eq(run("CLIENT ID"), want);
}

Test(server_cmds, debug_is_refused_unless_enabled)
{
    cr_assert(strncmp(run("DEBUG SLEEP 0"), "-ERR DEBUG command not allowed.", 31) == 0);
    srv.cfg.enable_debug_command = CONFIG_DEBUG_CMD_YES;
    cr_assert_str_eq(run("DEBUG SLEEP 0"), "+OK\r\n");
    cr_assert_str_eq(run("DEBUG PROTOCOL integer"), ":12345\r\n");
}

Test(server_cmds, while_loading_commands_without_the_loading_flag_get_loading)
{
    static const char loading[] = "-LOADING Redis is loading the dataset in memory\r\n";
    cr_assert_str_eq(run("SET k v"), "+OK\r\n");
    srv.cfg.enable_debug_command = CONFIG_DEBUG_CMD_YES;
    srv.loading = 1;
    cr_assert_str_eq(run("GET k"), loading);
    cr_assert_str_eq(run("PING"), loading, "Redis 7.0's PING has no loading flag");
    cr_assert_str_eq(run("SELECT 0"), "+OK\r\n");
    cr_assert(strstr(run("INFO persistence"), "loading:1\r\n") != NULL);
    cr_assert_str_eq(run("CONFIG GET hz"), "*2\r\n$2\r\nhz\r\n$2\r\n10\r\n");
    cr_assert_str_eq(run("MULTI"), "+OK\r\n");
    cr_assert_str_eq(run("SET k w"), loading);
    cr_assert(strncmp(run("EXEC"), "-EXECABORT", 10) == 0);
    cr_assert_str_eq(run("DEBUG RELOAD"), loading, "a reload inside the load");
    srv.loading = 0;
    cr_assert_str_eq(run("GET k"), "$1\r\nv\r\n", "nothing changed while loading");
}

/* Redis's errors for negative counts and sizes; keys that could never fit are refused before
 * any is made (Redis makes them until the kernel kills it). */
Test(server_cmds, debug_populate_extreme_counts)
{
    srv.cfg.enable_debug_command = CONFIG_DEBUG_CMD_YES;
    cr_assert_str_eq(run("DEBUG POPULATE -1"), "-ERR value is out of range, must be positive\r\n");
    cr_assert_str_eq(run("DEBUG POPULATE -9223372036854775808"),
                     "-ERR value is out of range, must be positive\r\n");
    cr_assert_str_eq(run("DEBUG POPULATE 1 k -1"),
                     "-ERR value is out of range, must be positive\r\n");
    cr_assert_str_eq(run("DEBUG POPULATE 9223372036854775807 k 9223372036854775807"),
                     "-ERR DEBUG POPULATE needs more than the machine's memory\r\n");
    cr_assert_str_eq(run("DEBUG POPULATE 9223372036854775807"),
                     "-ERR DEBUG POPULATE needs more than the machine's memory\r\n");
    cr_assert_eq(db_size(c->db), 0, "nothing was made");
    cr_assert_str_eq(run("CONFIG SET maxmemory 10mb"), "+OK\r\n");
    cr_assert_str_eq(run("DEBUG POPULATE 1000 k 100000"),
                     "-ERR DEBUG POPULATE needs more than maxmemory (10485760 bytes)\r\n");
    cr_assert_str_eq(run("DEBUG POPULATE 10 k 100"), "+OK\r\n");
    cr_assert_eq(db_size(c->db), 10);
    cr_assert_str_eq(run("CONFIG SET maxmemory 0"), "+OK\r\n");
}

Test(server_cmds, client_reply_off_mutes_until_on)
{
    cr_assert_str_eq(run("CLIENT REPLY OFF"), "");
    cr_assert_str_eq(run("PING"), "");
    cr_assert_str_eq(run("CLIENT REPLY SKIP"), "");
    cr_assert_str_eq(run("CLIENT REPLY ON"), "+OK\r\n");
    cr_assert_str_eq(run("CLIENT REPLY SKIP"), "");
    cr_assert_str_eq(run("PING"), "");
    cr_assert_str_eq(run("PING"), "+PONG\r\n");
}

Test(server_cmds, client_reply_on_after_skip_answers_ok)
{
    /* both in one read, as a pipelining client sends them */
    cr_assert_str_eq(run("CLIENT REPLY SKIP\r\nCLIENT REPLY ON"), "+OK\r\n");
    cr_assert_str_eq(run("PING"), "+PONG\r\n");
}

Test(server_cmds, client_reply_off_still_delivers_pubsub_pushes)
{
    client_t *pub = client_new(NULL, NULL, -1);
    cr_assert_str_eq(run("CLIENT REPLY OFF"), "");
    cr_assert_str_eq(run("SUBSCRIBE ch"), "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n");
    buf_clear(&c->out);
    client_feed(pub, "PUBLISH ch hi\r\n", 15);
    cr_assert_eq(c->out.len, strlen("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"));
    cr_assert_str_eq(run("PING"), ""); /* a reply, not a push: still muted */
    cr_assert_str_eq(run("UNSUBSCRIBE ch"),
                     "*3\r\n$11\r\nunsubscribe\r\n$2\r\nch\r\n:0\r\n");
    cr_assert_str_eq(run("CLIENT REPLY SKIP\r\nPSUBSCRIBE p*"),
                     "*3\r\n$10\r\npsubscribe\r\n$2\r\np*\r\n:1\r\n");
}

Test(server_cmds, client_list_shows_no_output_memory_on_an_idle_client)
{
    run("PING");
    const char *r = run("CLIENT INFO");
    cr_assert(strstr(r, " obl=0 oll=0 omem=0 ") != NULL, "%s", r);
}

Test(server_cmds, role_answers_as_a_master_without_replicas)
{
    cr_assert_str_eq(run("ROLE"), "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n");
}

Test(server_cmds, replicaof_no_one_is_ok_and_module_list_is_empty)
{
    cr_assert_str_eq(run("REPLICAOF NO ONE"), "+OK\r\n");
    cr_assert_str_eq(run("SLAVEOF no one"), "+OK\r\n");
    cr_assert_str_eq(run("REPLICAOF NO"),
                     "-ERR wrong number of arguments for 'replicaof' command\r\n");
    cr_assert_str_eq(run("REPLICAOF localhost x"), "-ERR Invalid master port\r\n");
    cr_assert_eq(strncmp(run("REPLICAOF localhost 6380"), "-ERR", 4), 0);
    cr_assert_str_eq(run("MODULE LIST"), "*0\r\n");
    cr_assert_eq(strncmp(run("MODULE LOAD /x.so"), "-ERR MODULE command not allowed", 31), 0);
    cr_assert_str_eq(run("MODULE foo"), "-ERR unknown subcommand 'foo'. Try MODULE HELP.\r\n");
    cr_assert_str_eq(run("CLUSTER INFO"), "-ERR This instance has cluster support disabled\r\n");
    cr_assert_str_eq(run("READONLY"), "-ERR This instance has cluster support disabled\r\n");
    cr_assert_str_eq(run("FAILOVER"), "-ERR FAILOVER requires connected replicas.\r\n");
    cr_assert_str_eq(run("FAILOVER ABORT"), "-ERR No failover in progress.\r\n");
    cr_assert_str_eq(run("CLUSTER INFO x"),
                     "-ERR wrong number of arguments for 'cluster|info' command\r\n");
}

Test(server_cmds, lolwut_prints_the_version_and_version_5_draws_within_bounds)
{
    cr_assert_str_eq(run("LOLWUT"), "$18\r\nRedis ver. 7.0.15\n\r\n");
    cr_assert_str_eq(run("LOLWUT VERSION 6"), "$18\r\nRedis ver. 7.0.15\n\r\n");
    const char *r = run("LOLWUT VERSION 5 20 4 4");
    cr_assert(strstr(r, "\xe2\xa0") && strstr(r, "Georg Nees - schotter, plotter on paper, 1968. "
                                                "Redis ver. 7.0.15\n"), "%s", r);
    cr_assert_str_eq(run("LOLWUT VERSION x"), "-ERR value is not an integer or out of range\r\n");
    cr_assert_str_eq(run("LOLWUT VERSION 5 20 x"),
                     "-ERR value is not an integer or out of range\r\n");
    cr_assert(strncmp(run("LOLWUT VERSION 5 100000 1 100000"), "-ERR LOLWUT picture too large", 29) == 0);
}

Test(server_cmds, memory_stats_doctor_and_malloc_stats_answer_as_redis)
{
    run("SET foo bar");
    const char *r = run("MEMORY STATS");
    cr_assert(strncmp(r, "*", 1) == 0 && strstr(r, "$14\r\npeak.allocated\r\n:") &&
                  strstr(r, "$10\r\nkeys.count\r\n:1\r\n") && strstr(r, "$4\r\ndb.0\r\n*4\r\n") &&
                  strstr(r, "$13\r\nfragmentation\r\n$"),
              "%s", r);
    r = run("MEMORY DOCTOR");
    cr_assert(strstr(r, "Sam") != NULL, "%s", r);
    r = run("MEMORY MALLOC-STATS");
    cr_assert_eq(r[0], '$');
    cr_assert_str_eq(run("MEMORY STATS x"),
                     "-ERR wrong number of arguments for 'memory|stats' command\r\n");
}

Test(server_cmds, info_has_a_cluster_section_that_says_disabled)
{
    const char *r = run("INFO");
    cr_assert(strstr(r, "# Cluster\r\ncluster_enabled:0\r\n") != NULL, "%s", r);
    r = run("INFO cluster");
    cr_assert(strstr(r, "cluster_enabled:0") && !strstr(r, "# Server"), "%s", r);
}

/* An ASan build puts its own malloc ahead of jemalloc: the allocator tests do not apply. */
#if defined(__SANITIZE_ADDRESS__)
#define NEED_JEMALLOC() cr_skip_test("an ASan build allocates with ASan's malloc")
#else
#define NEED_JEMALLOC() (void)0
#endif

/* The value of field name in an INFO reply, as a double (-1 when absent). */
static double info_field(const char *info, const char *name)
{
    char key[64];
    snprintf(key, sizeof(key), "\r\n%s:", name);
    const char *p = strstr(info, key);
    return p ? atof(p + strlen(key)) : -1;
}

Test(server_cmds, info_memory_reports_jemalloc_stats_as_redis_does)
{
    NEED_JEMALLOC();
    static char info[8192];
    snprintf(info, sizeof(info), "%s", run("INFO memory"));
    double used = info_field(info, "used_memory"), rss = info_field(info, "used_memory_rss");
    double allocated = info_field(info, "allocator_allocated"),
           active = info_field(info, "allocator_active"),
           resident = info_field(info, "allocator_resident");
    cr_assert_gt(allocated, 0, "%s", info);
    cr_assert_geq(active, allocated);
    cr_assert_geq(resident, active);
    cr_assert_float_eq(info_field(info, "allocator_frag_ratio"), active / allocated, 0.006);
    cr_assert_float_eq(info_field(info, "allocator_frag_bytes"), active - allocated, 0.5);
    cr_assert_float_eq(info_field(info, "allocator_rss_ratio"), resident / active, 0.006);
    cr_assert_float_eq(info_field(info, "allocator_rss_bytes"), resident - active, 0.5);
    cr_assert_gt(info_field(info, "rss_overhead_ratio"), 0);
    cr_assert_float_eq(info_field(info, "mem_fragmentation_ratio"), rss / used, 0.1);
    cr_assert_neq(info_field(info, "mem_fragmentation_bytes"), -1);
    cr_assert(strstr(info, "\r\nmem_allocator:jemalloc-5.") != NULL, "%s", info);
}

static size_t resident_now(void)
{
    alloc_stats_t st;
    cr_assert_eq(alloc_stats(&st), 0);
    return st.resident;
}

static void set_many(int n)
{
    char line[1200], val[1025];
    memset(val, 'v', 1024);
    val[1024] = '\0';
    for (int i = 0; i < n; i++) {
        snprintf(line, sizeof(line), "SET key:%d %s", i, val);
        cr_assert_str_eq(run(line), "+OK\r\n");
    }
}

Test(server_cmds, flushall_and_flushdb_give_freed_pages_back_at_once)
{
    NEED_JEMALLOC();
    set_many(48000); /* about 64 MB with the keys and objects */
    size_t before = resident_now();
    cr_assert_str_eq(run("FLUSHALL"), "+OK\r\n");
    size_t after = resident_now();
    cr_assert_lt(after + (40u << 20), before, "resident %zu -> %zu", before, after);
    set_many(48000);
    before = resident_now();
    cr_assert_str_eq(run("FLUSHDB SYNC"), "+OK\r\n");
    cr_assert_lt(resident_now() + (40u << 20), before);
}

Test(server_cmds, memory_purge_gives_freed_pages_back)
{
    NEED_JEMALLOC();
    set_many(48000);
    for (int i = 0; i < 48000; i++) {
        char line[32];
        snprintf(line, sizeof(line), "DEL key:%d", i);
        cr_assert_str_eq(run(line), ":1\r\n");
    }
    size_t before = resident_now();
    cr_assert_str_eq(run("MEMORY PURGE"), "+OK\r\n");
    cr_assert_lt(resident_now() + (40u << 20), before);
    cr_assert_str_eq(run("MEMORY PURGE now"),
                     "-ERR wrong number of arguments for 'memory|purge' command\r\n");
}

Test(server_cmds, debug_pause_cron_stops_the_periodic_work)
{
    srv.cfg.enable_debug_command = CONFIG_DEBUG_CMD_YES;
    cr_assert_str_eq(run("DEBUG PAUSE-CRON 1"), "+OK\r\n");
    cr_assert_str_eq(run("SET k v PX 1"), "+OK\r\n");
    usleep(5000);
    for (int i = 0; i < 5; i++) server_cron();
    cr_assert_eq(db_size(c->db), 1); /* expired, but the active cycle did not run */
    cr_assert_str_eq(run("DEBUG PAUSE-CRON 0"), "+OK\r\n");
    for (int i = 0; i < 5 && db_size(c->db); i++) server_cron();
    cr_assert_eq(db_size(c->db), 0);
    cr_assert_str_eq(run("DEBUG PAUSE-CRON x"), "+OK\r\n"); /* atoi: 0 */
    cr_assert_eq(srv.pause_cron, 0);
}
