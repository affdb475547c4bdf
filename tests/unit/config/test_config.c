/* test_config.c - tests of config/: defaults, every value type, YAML files, the command line,
 * CONFIG SET / GET / REWRITE and the generated reference. */
#include "config/config.h"
#include "config/config_int.h"

#include "common/buf.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static config_t cfg;
static char err[512];

static void setup(void)
{
    config_init(&cfg);
    err[0] = '\0';
}

static void teardown(void)
{
    config_deinit(&cfg);
}

TestSuite(config, .init = setup, .fini = teardown);

/* The CONFIG GET value of name (static buffer, valid until the next call). */
static const char *get(const config_t *c, const char *name)
{
    static char out[1024];
    buf_t b;
    buf_init(&b);
    cr_assert_eq(config_get_value(c, name, &b), 0, "no key %s", name);
    snprintf(out, sizeof out, "%s", b.data);
    buf_deinit(&b);
    return out;
}

static int set(const char *name, const char *value)
{
    return config_set(&cfg, name, value, err, sizeof err);
}

static int yaml(const char *text)
{
    return config_load_yaml(&cfg, text, strlen(text), "t.yaml", err, sizeof err);
}

/* Runs config_apply_args on cfg with argv = {"cte-server", args..., NULL}. */
static int args(const char *first, ...)
{
    char *argv[64];
    int argc = 0;
    va_list ap;

    argv[argc++] = "cte-server";
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *)) argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    return config_apply_args(&cfg, argc, argv, err, sizeof err);
}

static char *write_temp(const char *text)
{
    static char path[64];
    strcpy(path, "/tmp/cte-config-test-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* ---- defaults --------------------------------------------------------------------------- */

Test(config, defaults_come_from_the_table)
{
    cr_assert_eq(cfg.port, 6379);
    cr_assert_eq(cfg.bind.count, 1);
    cr_assert_str_eq(cfg.bind.items[0], "127.0.0.1");
    cr_assert_str_eq(cfg.unixsocket, "");
    cr_assert_eq(cfg.unixsocketperm, 0700);
    cr_assert_eq(cfg.protected_mode, 1);
    cr_assert_str_eq(cfg.requirepass, "");
    cr_assert_eq(cfg.maxclients, 10000);
    cr_assert_eq(cfg.timeout, 0);
    cr_assert_eq(cfg.tcp_keepalive, 300);
    cr_assert_eq(cfg.tcp_backlog, 511);
    cr_assert_str_eq(cfg.dir, ".");
    cr_assert_eq(cfg.databases, 16);
    cr_assert_eq(cfg.proto_max_bulk_len, 512LL << 20);
    cr_assert_eq(cfg.client_query_buffer_limit, 1LL << 30);
    cr_assert_eq(cfg.enable_debug_command, CONFIG_DEBUG_CMD_NO);
    cr_assert_eq(cfg.maxmemory, 0);
    cr_assert_eq(cfg.maxmemory_policy, CONFIG_MAXMEMORY_NOEVICTION);
    cr_assert_eq(cfg.appendonly, 0);
    cr_assert_eq(cfg.appendfsync, CONFIG_FSYNC_EVERYSEC);
    cr_assert_str_eq(cfg.appendfilename, "appendonly.aof");
    cr_assert_eq(cfg.aof_load_truncated, 1);
    cr_assert_eq(cfg.auto_aof_rewrite_percentage, 100);
    cr_assert_eq(cfg.auto_aof_rewrite_min_size, 64LL << 20);
    cr_assert_eq(cfg.hz, 10);
    cr_assert_eq(cfg.loglevel, CONFIG_LOG_NOTICE);
    cr_assert_str_eq(cfg.logfile, "");
    cr_assert_str_eq(cfg.pidfile, "");
    cr_assert_eq(cfg.daemonize, 0);
    cr_assert_eq(cfg.supervised, CONFIG_SUPERVISED_NO);
    cr_assert_eq(cfg.lazyfree_lazy_user_del, 0);
    cr_assert_eq(cfg.slowlog_log_slower_than, 10000);
    cr_assert_eq(cfg.slowlog_max_len, 128);
    cr_assert_eq(cfg.latency_monitor_threshold, 0);
    cr_assert_eq(cfg.notify_keyspace_events, 0);
    cr_assert_eq(cfg.hash_max_listpack_entries, 512); /* Debian redis 7.0.15 default */
    cr_assert_eq(cfg.hash_max_listpack_value, 64);
    cr_assert_eq(cfg.zset_max_listpack_entries, 128);
    cr_assert_eq(cfg.zset_max_listpack_value, 64);
    cr_assert_eq(cfg.set_max_intset_entries, 512);
    cr_assert_eq(cfg.set_max_listpack_entries, 128);
    cr_assert_eq(cfg.set_max_listpack_value, 64);
    cr_assert_eq(cfg.list_max_listpack_size, -2);
    cr_assert_eq(cfg.list_compress_depth, 0);
    cr_assert_eq(cfg.active_expire_enabled, 1);
    cr_assert_eq(cfg.io_threads, 1);
    cr_assert_str_eq(cfg.save, "");
    cr_assert_eq(cfg.activerehashing, 1);
    cr_assert_eq(cfg.search_enabled, 1);
    cr_assert_eq(cfg.search_max_bytes_per_blob, 1 << 20);
    cr_assert_eq(cfg.search_skip_binary, 1);
    cr_assert_eq(cfg.shm_enabled, 1);
    cr_assert_eq(cfg.shm_ring_size, 1 << 20);
    cr_assert_eq(cfg.ntiers, 1);
    cr_assert_str_eq(cfg.tiers[0].name, "ram");
    cr_assert_eq(cfg.tiers[0].kind, CONFIG_TIER_RAM);
    cr_assert_eq(cfg.tiers[0].capacity, 1LL << 30);
    cr_assert_eq(cfg.tiers[0].score, -1);
    cr_assert_null(cfg.config_file);
}

Test(config, default_output_buffer_limits_are_redis_s)
{
    const config_obuf_limit_t *l = cfg.client_obuf_limits;
    cr_assert_eq(l[CONFIG_CLIENT_NORMAL].hard_bytes, 0);
    cr_assert_eq(l[CONFIG_CLIENT_REPLICA].hard_bytes, 256 << 20);
    cr_assert_eq(l[CONFIG_CLIENT_REPLICA].soft_bytes, 64 << 20);
    cr_assert_eq(l[CONFIG_CLIENT_REPLICA].soft_seconds, 60);
    cr_assert_eq(l[CONFIG_CLIENT_PUBSUB].hard_bytes, 32 << 20);
    cr_assert_eq(l[CONFIG_CLIENT_PUBSUB].soft_bytes, 8 << 20);
    cr_assert_eq(l[CONFIG_CLIENT_PUBSUB].soft_seconds, 60);
    cr_assert_str_eq(get(&cfg, "client-output-buffer-limit"),
                     "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
}

Test(config, every_key_set_to_its_default_string_reads_back_identically)
{
    for (size_t i = 0; i < config__nrows; i++) {
        const config__row_t *r = &config__rows[i];
        char before[1024];
        config_t c;

        snprintf(before, sizeof before, "%s", get(&cfg, r->name));
        config_init(&c);
        if (r->flags & CONFIG__IMMUTABLE) {
            char *argv[] = {"cte-server", "--", (char *)r->def, NULL};
            char opt[128];
            snprintf(opt, sizeof opt, "--%s", r->name);
            argv[1] = opt;
            cr_assert_eq(config_apply_args(&c, 3, argv, err, sizeof err), 0, "%s: %s", r->name,
                         err);
        } else {
            cr_assert_eq(config_set(&c, r->name, r->def, err, sizeof err), 0, "%s: %s", r->name,
                         err);
        }
        cr_assert_str_eq(get(&c, r->name), before, "key %s", r->name);
        config_deinit(&c);
    }
}

Test(config, every_mutable_key_accepts_the_value_config_get_shows)
{
    for (size_t i = 0; i < config__nrows; i++) {
        const config__row_t *r = &config__rows[i];
        char shown[1024];

        if (r->flags & CONFIG__IMMUTABLE) continue;
        snprintf(shown, sizeof shown, "%s", get(&cfg, r->name));
        cr_assert_eq(set(r->name, shown), 0, "%s '%s': %s", r->name, shown, err);
        cr_assert_str_eq(get(&cfg, r->name), shown, "key %s", r->name);
    }
}

Test(config, every_row_has_a_doc_line_and_a_unique_name)
{
    for (size_t i = 0; i < config__nrows; i++) {
        const config__row_t *r = &config__rows[i];
        cr_assert(r->doc && r->doc[0] && !strchr(r->doc, '\n'), "%s", r->name);
        cr_assert_eq(config__lookup(r->name), r, "%s", r->name);
        if (r->alias) cr_assert_eq(config__lookup(r->alias), r, "%s", r->alias);
    }
}

/* ---- types ------------------------------------------------------------------------------ */

Test(config, bools_take_yes_and_no_in_any_case)
{
    cr_assert_eq(set("appendonly", "yes"), 0);
    cr_assert_eq(cfg.appendonly, 1);
    cr_assert_eq(set("appendonly", "NO"), 0);
    cr_assert_eq(cfg.appendonly, 0);
    cr_assert_str_eq(get(&cfg, "appendonly"), "no");
    cr_assert_eq(set("appendonly", "true"), -1);
    cr_assert_str_eq(err, "ERR CONFIG SET failed (possibly related to argument 'appendonly') - "
                          "argument must be 'yes' or 'no'");
}

Test(config, yaml_bools_may_also_be_true_and_false)
{
    cr_assert_eq(yaml("appendonly: true\nprotected-mode: off\n"), 0, "%s", err);
    cr_assert_eq(cfg.appendonly, 1);
    cr_assert_eq(cfg.protected_mode, 0);
}

Test(config, integers_are_checked_against_their_bounds)
{
    cr_assert_eq(set("port", "0"), 0);
    cr_assert_eq(set("port", "65535"), 0);
    cr_assert_eq(cfg.port, 65535);
    cr_assert_eq(set("port", "65536"), -1);
    cr_assert_str_eq(err, "ERR CONFIG SET failed (possibly related to argument 'port') - "
                          "argument must be between 0 and 65535 inclusive");
    cr_assert_eq(set("port", "-1"), -1);
    cr_assert_eq(cfg.port, 65535);
    cr_assert_eq(set("hz", "0"), -1);
    cr_assert_eq(set("hz", "500"), 0);
    cr_assert_eq(set("hz", "501"), -1);
    cr_assert_eq(set("maxclients", "0"), -1);
}

Test(config, integers_must_be_plain_decimal)
{
    const char *bad[] = {"abc", "12abc", " 12",  "12 ", "+1",
                         "",    "1.5",   "0x10", "1k",  "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(set("timeout", bad[i]), -1, "'%s' was taken", bad[i]);
        cr_assert(strstr(err, "argument couldn't be parsed into an integer"), "%s", err);
    }
}

Test(config, negative_integers_work_where_the_range_allows)
{
    cr_assert_eq(set("list-max-listpack-size", "-5"), 0);
    cr_assert_eq(cfg.list_max_listpack_size, -5);
    cr_assert_eq(set("slowlog-log-slower-than", "-1"), 0);
    cr_assert_eq(cfg.slowlog_log_slower_than, -1);
    cr_assert_eq(set("slowlog-log-slower-than", "-2"), -1);
    cr_assert_eq(set("slowlog-max-len", "9223372036854775807"), 0);
    cr_assert_eq(cfg.slowlog_max_len, 9223372036854775807LL);
}

Test(config, memory_values_take_redis_units)
{
    static const struct {
        const char *in;
        long long bytes;
    } cases[] = {
        {"0", 0},           {"100", 100},       {"5b", 5},          {"1k", 1000},
        {"1kb", 1024},      {"1K", 1000},       {"1Kb", 1024},      {"1m", 1000000},
        {"1mb", 1048576},   {"1MB", 1048576},   {"1g", 1000000000}, {"1gb", 1073741824},
        {"3GB", 3LL << 30}, {"2tb", 2LL << 40},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(set("maxmemory", cases[i].in), 0, "%s: %s", cases[i].in, err);
        cr_assert_eq(cfg.maxmemory, cases[i].bytes, "%s", cases[i].in);
    }
}

Test(config, config_get_shows_memory_in_bytes)
{
    cr_assert_eq(set("maxmemory", "1mb"), 0);
    cr_assert_str_eq(get(&cfg, "maxmemory"), "1048576");
    cr_assert_str_eq(get(&cfg, "proto-max-bulk-len"), "536870912");
}

Test(config, bad_memory_values_are_refused)
{
    const char *bad[] = {
        "1x", "kb", "-1", "1.5mb", "1 mb", "", "mb1", "99999999999gb", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(set("maxmemory", bad[i]), -1, "'%s' was taken", bad[i]);
        cr_assert(strstr(err, "argument must be a memory value"), "%s", err);
    }
}

Test(config, memory_minimums_apply)
{
    cr_assert_eq(set("proto-max-bulk-len", "1000"), -1);
    cr_assert(strstr(err, "argument must be between 1048576 and"), "%s", err);
    cr_assert_eq(set("proto-max-bulk-len", "1mb"), 0);
    cr_assert_eq(set("client-query-buffer-limit", "1kb"), -1);
    cr_assert_eq(set("shm-ring-size", "2gb"), -1);
}

Test(config, octal_permissions_parse_and_print_in_octal)
{
    cr_assert_eq(args("--unixsocketperm", "755", NULL), 0, "%s", err);
    cr_assert_eq(cfg.unixsocketperm, 0755);
    cr_assert_str_eq(get(&cfg, "unixsocketperm"), "755");
    cr_assert_eq(args("--unixsocketperm", "0600", NULL), 0, "%s", err);
    cr_assert_eq(cfg.unixsocketperm, 0600);
    cr_assert_eq(args("--unixsocketperm", "800", NULL), -1);
    cr_assert(strstr(err, "expected an octal file mode in 0..777"), "%s", err);
    cr_assert_eq(args("--unixsocketperm", "1000", NULL), -1);
}

Test(config, enums_match_names_in_any_case)
{
    cr_assert_eq(set("maxmemory-policy", "ALLKEYS-LRU"), 0);
    cr_assert_eq(cfg.maxmemory_policy, CONFIG_MAXMEMORY_ALLKEYS_LRU);
    cr_assert_str_eq(get(&cfg, "maxmemory-policy"), "allkeys-lru");
    cr_assert_eq(set("appendfsync", "always"), 0);
    cr_assert_eq(cfg.appendfsync, CONFIG_FSYNC_ALWAYS);
    cr_assert_eq(set("loglevel", "warning"), 0);
    cr_assert_eq(cfg.loglevel, CONFIG_LOG_WARNING);
}

Test(config, bad_enum_values_list_the_choices)
{
    cr_assert_eq(set("maxmemory-policy", "lru"), -1);
    cr_assert_str_eq(err, "ERR CONFIG SET failed (possibly related to argument "
                          "'maxmemory-policy') - argument(s) must be one of the following: "
                          "volatile-lru, volatile-lfu, volatile-random, volatile-ttl, "
                          "allkeys-lru, allkeys-lfu, allkeys-random, noeviction");
    cr_assert_eq(set("loglevel", "loud"), -1);
    cr_assert(strstr(err, "debug, verbose, notice, warning"), "%s", err);
}

Test(config, strings_are_copied_and_checked)
{
    char value[] = "s3cret";
    cr_assert_eq(set("requirepass", value), 0);
    value[0] = 'X';
    cr_assert_str_eq(cfg.requirepass, "s3cret");
    cr_assert_eq(set("requirepass", ""), 0);
    cr_assert_str_eq(cfg.requirepass, "");
    cr_assert_eq(args("--appendfilename", "a/b.aof", NULL), -1);
    cr_assert(strstr(err, "appendfilename can't be a path, just a filename"), "%s", err);
    cr_assert_eq(args("--dir", "", NULL), -1);
    cr_assert(strstr(err, "dir can't be empty"), "%s", err);
}

Test(config, save_is_accepted_when_well_formed_and_ignored)
{
    cr_assert_eq(set("save", "3600 1 300 100"), 0);
    cr_assert_str_eq(get(&cfg, "save"), "3600 1 300 100");
    cr_assert_eq(set("save", ""), 0);
    cr_assert_eq(set("save", "3600"), -1);
    cr_assert(strstr(err, "Invalid save parameters"), "%s", err);
    cr_assert_eq(set("save", "a b"), -1);
}

Test(config, bind_is_a_space_separated_list)
{
    cr_assert_eq(set("bind", "127.0.0.1  -::1"), 0);
    cr_assert_eq(cfg.bind.count, 2);
    cr_assert_str_eq(cfg.bind.items[1], "-::1");
    cr_assert_str_eq(get(&cfg, "bind"), "127.0.0.1 -::1");
    cr_assert_eq(set("bind", "a b c d e f g h i j k l m n o p q"), -1);
    cr_assert_eq(cfg.bind.count, 2);
}

Test(config, output_buffer_limits_change_only_the_classes_given)
{
    cr_assert_eq(set("client-output-buffer-limit", "pubsub 1mb 512kb 10"), 0, "%s", err);
    cr_assert_eq(cfg.client_obuf_limits[CONFIG_CLIENT_PUBSUB].hard_bytes, 1 << 20);
    cr_assert_eq(cfg.client_obuf_limits[CONFIG_CLIENT_PUBSUB].soft_bytes, 512 << 10);
    cr_assert_eq(cfg.client_obuf_limits[CONFIG_CLIENT_PUBSUB].soft_seconds, 10);
    cr_assert_eq(cfg.client_obuf_limits[CONFIG_CLIENT_REPLICA].hard_bytes, 256 << 20);
    cr_assert_eq(set("client-output-buffer-limit", "replica 1 2 3 normal 4 5 6"), 0);
    cr_assert_str_eq(get(&cfg, "client-output-buffer-limit"),
                     "normal 4 5 6 slave 1 2 3 pubsub 1048576 524288 10");
    cr_assert_eq(set("client-output-buffer-limit", "slave 7 8 9"), 0);
    cr_assert_eq(cfg.client_obuf_limits[CONFIG_CLIENT_REPLICA].hard_bytes, 7);
}

Test(config, bad_output_buffer_limits_change_nothing)
{
    char before[256];
    snprintf(before, sizeof before, "%s", get(&cfg, "client-output-buffer-limit"));
    cr_assert_eq(set("client-output-buffer-limit", "normal 1 2"), -1);
    cr_assert(strstr(err, "Wrong number of arguments in buffer limit configuration."), "%s", err);
    cr_assert_eq(set("client-output-buffer-limit", "normal 1 2 3 master 0 0 0"), -1);
    cr_assert(strstr(err, "Invalid client class specified"), "%s", err);
    cr_assert_eq(set("client-output-buffer-limit", "normal 1 2 3 pubsub 1x 0 0"), -1);
    cr_assert(strstr(err, "Error in hard, soft or soft_seconds"), "%s", err);
    cr_assert_eq(set("client-output-buffer-limit", "normal 1 2 -3"), -1);
    cr_assert_str_eq(get(&cfg, "client-output-buffer-limit"), before);
}

Test(config, keyspace_events_read_back_in_redis_s_canonical_form)
{
    cr_assert_eq(set("notify-keyspace-events", "KEA"), 0);
    cr_assert_eq(cfg.notify_keyspace_events,
                 CONFIG_NOTIFY_ALL | CONFIG_NOTIFY_KEYSPACE | CONFIG_NOTIFY_KEYEVENT);
    cr_assert_str_eq(get(&cfg, "notify-keyspace-events"), "AKE");
    cr_assert_eq(set("notify-keyspace-events", "Ex"), 0);
    cr_assert_str_eq(get(&cfg, "notify-keyspace-events"), "xE");
    cr_assert_eq(set("notify-keyspace-events", "Anm"), 0);
    cr_assert_str_eq(get(&cfg, "notify-keyspace-events"), "Anm");
    cr_assert_eq(set("notify-keyspace-events", "g$lshzxetd"), 0);
    cr_assert_str_eq(get(&cfg, "notify-keyspace-events"), "A");
    cr_assert_eq(set("notify-keyspace-events", ""), 0);
    cr_assert_eq(cfg.notify_keyspace_events, 0);
    cr_assert_eq(set("notify-keyspace-events", "KQ"), -1);
    cr_assert(strstr(err, "Invalid event class character"), "%s", err);
}

/* ---- CONFIG SET / GET ------------------------------------------------------------------- */

Test(config, immutable_keys_are_refused_with_redis_s_message)
{
    cr_assert_eq(set("daemonize", "yes"), -1);
    cr_assert_str_eq(err, "ERR CONFIG SET failed (possibly related to argument 'daemonize') - "
                          "can't set immutable config");
    cr_assert_eq(cfg.daemonize, 0);
    cr_assert_eq(set("DATABASES", "4"), -1);
    cr_assert(strstr(err, "argument 'DATABASES') - can't set immutable config"), "%s", err);
    cr_assert_eq(set("tiers", "a:ram:1gb"), -1);
    cr_assert_eq(set("io-threads", "4"), -1);
    cr_assert_eq(set("unixsocket", "/tmp/x"), -1);
    /* our own start-up-only key, worded as Redis words its immutable ones */
    cr_assert_eq(set("tiers", "ram:ram:2gb"), -1);
    cr_assert_str_eq(err, "ERR CONFIG SET failed (possibly related to argument 'tiers') - "
                          "can't set immutable config");
}

Test(config, our_immutable_keys_may_be_set_to_the_value_they_have)
{
    /* as CONFIG GET * then CONFIG SET of each pair (Redis's "CONFIG sanity") needs; Redis's
     * own immutable keys are refused even so, as Redis refuses them */
    char tiers[256], daemonize[16];
    snprintf(tiers, sizeof(tiers), "%s", get(&cfg, "tiers"));
    cr_assert_eq(set("tiers", tiers), 0, "%s", err);
    cr_assert_str_eq(get(&cfg, "tiers"), tiers);
    cr_assert_eq(set("users", get(&cfg, "users")), 0, "%s", err);
    snprintf(daemonize, sizeof(daemonize), "%s", get(&cfg, "daemonize"));
    cr_assert_eq(set("daemonize", daemonize), -1);
    cr_assert(strstr(err, "can't set immutable config"), "%s", err);
    /* in one CONFIG SET with others, it changes nothing and the others apply */
    const char *names[] = {"tiers", "maxclients"}, *values[] = {tiers, "77"};
    cr_assert_eq(config_set_many(&cfg, 2, names, values, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(cfg.maxclients, 77);
    values[0] = "ram:ram:3gb";
    values[1] = "78";
    cr_assert_eq(config_set_many(&cfg, 2, names, values, err, sizeof(err)), -1);
    cr_assert_eq(cfg.maxclients, 77);
}

Test(config, unknown_keys_are_refused_with_redis_s_message)
{
    cr_assert_eq(set("prot", "1"), -1);
    cr_assert_str_eq(err, "ERR Unknown option or number of arguments for CONFIG SET - 'prot'");
}

Test(config, names_are_case_insensitive)
{
    cr_assert_eq(set("MaxMemory", "10"), 0);
    cr_assert_eq(cfg.maxmemory, 10);
    cr_assert_str_eq(get(&cfg, "MAXMEMORY"), "10");
}

static int calls;
static char last_name[64];
static void on_change(const char *name, void *ud)
{
    calls++;
    snprintf(last_name, sizeof last_name, "%s", name);
    cr_assert_eq(ud, &calls);
}

Test(config, the_change_hook_runs_after_a_successful_set_with_the_canonical_name)
{
    calls = 0;
    config_on_change(&cfg, on_change, &calls);
    cr_assert_eq(set("HASH-MAX-ZIPLIST-ENTRIES", "7"), 0);
    cr_assert_eq(calls, 1);
    cr_assert_str_eq(last_name, "hash-max-listpack-entries");
    cr_assert_eq(set("port", "x"), -1);
    cr_assert_eq(set("daemonize", "yes"), -1);
    cr_assert_eq(calls, 1);
}

Test(config, set_many_applies_all_or_nothing)
{
    const char *names[] = {"port", "maxmemory", "timeout"};
    const char *good[] = {"7000", "1mb", "5"};
    const char *bad[] = {"7001", "2mb", "never"};

    calls = 0;
    config_on_change(&cfg, on_change, &calls);
    cr_assert_eq(config_set_many(&cfg, 3, names, bad, err, sizeof err), -1);
    cr_assert(strstr(err, "argument 'timeout') - argument couldn't be parsed"), "%s", err);
    cr_assert_eq(cfg.port, 6379);
    cr_assert_eq(cfg.maxmemory, 0);
    cr_assert_eq(calls, 0);
    cr_assert_eq(config_set_many(&cfg, 3, names, good, err, sizeof err), 0);
    cr_assert_eq(cfg.port, 7000);
    cr_assert_eq(cfg.maxmemory, 1 << 20);
    cr_assert_eq(cfg.timeout, 5);
    cr_assert_eq(calls, 3);
}

Test(config, set_many_refuses_a_key_named_twice)
{
    const char *names[] = {"hash-max-listpack-entries", "hash-max-ziplist-entries"};
    const char *values[] = {"1", "2"};
    cr_assert_eq(config_set_many(&cfg, 2, names, values, err, sizeof err), -1);
    cr_assert_str_eq(err, "ERR CONFIG SET failed (possibly related to argument "
                          "'hash-max-ziplist-entries') - duplicate parameter");
    cr_assert_eq(cfg.hash_max_listpack_entries, 512); /* Debian redis 7.0.15 default */
}

typedef struct seen {
    char names[512][64];
    char values[512][256];
    int n;
} seen_t;

static void collect(void *ud, const char *name, const char *value)
{
    seen_t *s = ud;
    cr_assert_lt(s->n, 512);
    snprintf(s->names[s->n], 64, "%s", name);
    snprintf(s->values[s->n], 256, "%s", value);
    s->n++;
}

static int seen_has(const seen_t *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->names[i], name)) return 1;
    return 0;
}

Test(config, config_get_with_a_plain_name_returns_that_key)
{
    seen_t s = {.n = 0};
    config_get(&cfg, "port", collect, &s);
    cr_assert_eq(s.n, 1);
    cr_assert_str_eq(s.names[0], "port");
    cr_assert_str_eq(s.values[0], "6379");
    s.n = 0;
    config_get(&cfg, "nosuchkey", collect, &s);
    cr_assert_eq(s.n, 0);
}

Test(config, config_get_star_lists_every_name_and_alias_once)
{
    seen_t s = {.n = 0};
    size_t want = 0;
    for (size_t i = 0; i < config__nrows; i++)
        if (!(config__rows[i].flags & CONFIG__HIDDEN)) want += 1 + (config__rows[i].alias != NULL);
    config_get(&cfg, "*", collect, &s);
    cr_assert_eq((size_t)s.n, want);
    cr_assert(seen_has(&s, "hash-max-ziplist-entries"));
    cr_assert(seen_has(&s, "hash-max-listpack-entries"));
}

/* Redis's TCL test "CONFIG GET hidden configs". */
Test(config, hidden_keys_answer_only_to_their_own_name)
{
    seen_t s = {.n = 0};
    config_get(&cfg, "*", collect, &s);
    cr_assert_not(seen_has(&s, "key-load-delay"));
    s.n = 0;
    config_get(&cfg, "key-*-delay", collect, &s);
    cr_assert_eq(s.n, 0);
    config_get(&cfg, "KEY-LOAD-DELAY", collect, &s);
    cr_assert_eq(s.n, 1);
    cr_assert_str_eq(s.values[0], "0");
}

Test(config, maxmemory_clients_takes_bytes_or_a_percentage_as_redis)
{
    char err[256];
    buf_t v;
    buf_init(&v);
    cr_assert_eq(config_set(&cfg, "maxmemory-clients", "10%", err, sizeof(err)), 0);
    config_get_value(&cfg, "maxmemory-clients", &v);
    cr_assert_str_eq(v.data, "10%");
    cr_assert_eq(config_set(&cfg, "maxmemory-clients", "1mb", err, sizeof(err)), 0);
    buf_clear(&v);
    config_get_value(&cfg, "maxmemory-clients", &v);
    cr_assert_str_eq(v.data, "1048576");
    const char *names[] = {"maxmemory", "maxmemory-clients", "client-query-buffer-limit"};
    const char *values[] = {"10000001", "200%", "invalid"};
    cr_assert_eq(config_set_many(&cfg, 3, names, values, err, sizeof(err)), -1);
    cr_assert_str_eq(err,
                     "ERR CONFIG SET failed (possibly related to argument "
                     "'maxmemory-clients') - percentage argument must be less or equal to 100");
    cr_assert_eq(config_set(&cfg, "maxmemory-clients", "x%", err, sizeof(err)), -1);
    buf_clear(&v);
    config_get_value(&cfg, "maxmemory-clients", &v);
    cr_assert_str_eq(v.data, "1048576");
    buf_deinit(&v);
}

Test(config, shutdown_signal_flags_are_checked_as_redis)
{
    char err[256];
    cr_assert_eq(config_set(&cfg, "shutdown-on-sigterm", "nosave now", err, sizeof(err)), 0);
    cr_assert_eq(config_set(&cfg, "shutdown-on-sigint", "save", err, sizeof(err)), 0);
    cr_assert_eq(config_set(&cfg, "shutdown-on-sigint", "save nosave", err, sizeof(err)), -1);
    cr_assert_str_eq(err, "ERR CONFIG SET failed (possibly related to argument "
                          "'shutdown-on-sigint') - shutdown options SAVE and NOSAVE can't be "
                          "used simultaneously");
    cr_assert_eq(config_set(&cfg, "shutdown-on-sigint", "", err, sizeof(err)), -1);
    cr_assert_eq(config_set(&cfg, "shutdown-on-sigint", "bogus", err, sizeof(err)), -1);
    /* kept as flags and shown in Redis's order */
    cr_assert_eq(config_set(&cfg, "shutdown-on-sigint", "force NOW nosave", err, sizeof(err)), 0);
    buf_t v;
    buf_init(&v);
    config_get_value(&cfg, "shutdown-on-sigint", &v);
    cr_assert_str_eq(v.data, "nosave now force");
    buf_deinit(&v);
    cr_assert_eq(config_set(&cfg, "repl-backlog-size", "10000002", err, sizeof(err)), 0);
    cr_assert_eq(config_set(&cfg, "slave-read-only", "no", err, sizeof(err)), 0);
    cr_assert_eq(cfg.inert.replica_read_only, 0);
}

Test(config, config_get_globs_are_case_insensitive)
{
    seen_t s = {.n = 0};
    config_get(&cfg, "MAXMEMORY*", collect, &s);
    cr_assert_eq(s.n, 5);
    cr_assert(seen_has(&s, "maxmemory"));
    cr_assert(seen_has(&s, "maxmemory-clients"));
    cr_assert(seen_has(&s, "maxmemory-policy"));
    cr_assert(seen_has(&s, "maxmemory-samples"));
    cr_assert(seen_has(&s, "maxmemory-eviction-tenacity"));
    s.n = 0;
    config_get(&cfg, "*-max-z?plist-*", collect, &s);
    cr_assert_eq(s.n, 5); /* hash and zset entries and value, list size */
    s.n = 0;
    config_get(&cfg, "[pt]ort", collect, &s);
    cr_assert_eq(s.n, 1);
}

Test(config, config_get_many_names_each_key_once)
{
    const char *pats[] = {"port", "p*", "port"};
    seen_t s = {.n = 0};
    config_get_many(&cfg, 3, pats, collect, &s);
    int ports = 0;
    for (int i = 0; i < s.n; i++) ports += !strcmp(s.names[i], "port");
    cr_assert_eq(ports, 1);
    cr_assert(seen_has(&s, "pidfile"));
    cr_assert(seen_has(&s, "protected-mode"));
}

Test(config, aliases_set_and_get_the_same_field)
{
    cr_assert_eq(set("hash-max-ziplist-entries", "10"), 0);
    cr_assert_eq(cfg.hash_max_listpack_entries, 10);
    cr_assert_str_eq(get(&cfg, "hash-max-listpack-entries"), "10");
    cr_assert_eq(set("list-max-ziplist-size", "-3"), 0);
    cr_assert_eq(cfg.list_max_listpack_size, -3);
    cr_assert_eq(set("zset-max-ziplist-value", "32"), 0);
    cr_assert_eq(cfg.zset_max_listpack_value, 32);
    seen_t s = {.n = 0};
    config_get(&cfg, "hash-max-ziplist-entries", collect, &s);
    cr_assert_eq(s.n, 1);
    cr_assert_str_eq(s.names[0], "hash-max-ziplist-entries");
    cr_assert_str_eq(s.values[0], "10");
}

/* ---- YAML ------------------------------------------------------------------------------- */

Test(config, yaml_sets_keys_and_leaves_the_others)
{
    cr_assert_eq(yaml("# comment\nport: 7000\nmaxmemory: 2gb\nrequirepass: \"p w\"\n"), 0, "%s",
                 err);
    cr_assert_eq(cfg.port, 7000);
    cr_assert_eq(cfg.maxmemory, 2LL << 30);
    cr_assert_str_eq(cfg.requirepass, "p w");
    cr_assert_eq(cfg.hz, 10);
}

Test(config, an_empty_yaml_file_changes_nothing)
{
    cr_assert_eq(yaml(""), 0, "%s", err);
    cr_assert_eq(yaml("# only comments\n"), 0, "%s", err);
    cr_assert_eq(cfg.port, 6379);
}

Test(config, yaml_unknown_keys_name_the_line)
{
    cr_assert_eq(yaml("port: 1\nbind: 127.0.0.1\nprot: 5\n"), -1);
    cr_assert_str_eq(err, "t.yaml:3: unknown key 'prot'");
    cr_assert_eq(cfg.port, 6379, "a failed load changed the config");
}

Test(config, yaml_bad_values_name_the_line_key_value_and_expectation)
{
    cr_assert_eq(yaml("\n\nport: abc\n"), -1);
    cr_assert_str_eq(err, "t.yaml:3: bad value for 'port': 'abc' (expected an integer in "
                          "0..65535)");
    cr_assert_eq(yaml("maxmemory: 10x\n"), -1);
    cr_assert_str_eq(err, "t.yaml:1: bad value for 'maxmemory': '10x' (expected a size like "
                          "64mb (units k kb m mb g gb) >= 0)");
    cr_assert_eq(yaml("appendfsync: sometimes\n"), -1);
    cr_assert_str_eq(err, "t.yaml:1: bad value for 'appendfsync': 'sometimes' (expected one of "
                          "always, everysec, no)");
    cr_assert_eq(yaml("appendfilename: a/b\n"), -1);
    cr_assert_str_eq(err, "t.yaml:1: bad value for 'appendfilename': 'a/b' (appendfilename can't "
                          "be a path, just a filename)");
}

/* Found by tests/fuzz/fuzz_config (corpus/config/regress_multiline_error): a folded scalar
 * with blank lines put line feeds into the message, which is documented as one line. */
Test(config, load_errors_are_one_line_even_when_the_value_spans_lines)
{
    cr_assert_eq(yaml("client-output-buffer-limit: normal 0 0 fil\n\n\n 1mb\n"), -1);
    cr_assert_str_eq(err, "t.yaml:1: bad value for 'client-output-buffer-limit': 'normal 0 0 fil "
                          " 1mb' (Wrong number of arguments in buffer limit configuration.)");
    cr_assert_eq(yaml("\"a\\r\\nb\": 1\n"), -1);
    cr_assert_str_eq(err, "t.yaml:1: unknown key 'a  b'");
    cr_assert_eq(args("--maxmemory", "1\nx", NULL), -1);
    cr_assert(!strpbrk(err, "\r\n"), "%s", err);
}

Test(config, yaml_syntax_errors_name_the_line)
{
    cr_assert_eq(yaml("port: 1\nbind: [a, b\nhz: 3\n"), -1);
    cr_assert(strncmp(err, "t.yaml:", 7) == 0 && strstr(err, "YAML syntax error"), "%s", err);
    cr_assert_eq(yaml("port: 1\n  hz: 3\n"), -1);
    cr_assert(strstr(err, "t.yaml:2: YAML syntax error"), "%s", err);
}

Test(config, yaml_top_level_must_be_a_mapping)
{
    cr_assert_eq(yaml("- port\n- 1\n"), -1);
    cr_assert(strstr(err, "t.yaml:1: expected a mapping"), "%s", err);
}

Test(config, yaml_keys_set_twice_are_refused)
{
    cr_assert_eq(yaml("port: 1\nhash-max-ziplist-entries: 3\nhash-max-listpack-entries: 4\n"), -1);
    cr_assert_str_eq(err, "t.yaml:3: 'hash-max-listpack-entries' is set twice (first on line 2)");
}

Test(config, yaml_lists_are_only_for_keys_that_take_several_words)
{
    cr_assert_eq(yaml("bind:\n  - 127.0.0.1\n  - ::1\nsave: [\"3600 1\", \"60 10000\"]\n"), 0, "%s",
                 err);
    cr_assert_eq(cfg.bind.count, 2);
    cr_assert_str_eq(cfg.bind.items[1], "::1");
    cr_assert_str_eq(cfg.save, "3600 1 60 10000");
    cr_assert_eq(yaml("port: [1, 2]\n"), -1);
    cr_assert_str_eq(err, "t.yaml:1: 'port' takes one value, not a list");
    cr_assert_eq(yaml("port:\n  a: 1\n"), -1);
    cr_assert_str_eq(err, "t.yaml:2: 'port' takes a value, not a mapping");
}

Test(config, yaml_nulls_are_empty_strings)
{
    cr_assert_eq(set("requirepass", "x"), 0);
    cr_assert_eq(yaml("requirepass:\nlogfile: ~\n"), 0, "%s", err);
    cr_assert_str_eq(cfg.requirepass, "");
    cr_assert_str_eq(cfg.logfile, "");
}

Test(config, yaml_sections_flatten_to_prefixed_names)
{
    cr_assert_eq(
        yaml("search:\n  enabled: no\n  max-bytes-per-blob: 4kb\nshm:\n  ring-size: 64kb\n"), 0,
        "%s", err);
    cr_assert_eq(cfg.search_enabled, 0);
    cr_assert_eq(cfg.search_max_bytes_per_blob, 4096);
    cr_assert_eq(cfg.shm_ring_size, 65536);
    cr_assert_eq(yaml("search:\n  enabled: yes\n  bogus: 1\n"), -1);
    cr_assert_str_eq(err, "t.yaml:3: unknown key 'search-bogus'");
    cr_assert_eq(cfg.search_enabled, 0);
    cr_assert_eq(yaml("search-skip-binary: no\n"), 0, "%s", err);
    cr_assert_eq(cfg.search_skip_binary, 0);
    cr_assert_eq(yaml("nosection:\n  a: 1\n"), -1);
    cr_assert_str_eq(err, "t.yaml:1: unknown key 'nosection'");
}

Test(config, yaml_aliases_work)
{
    cr_assert_eq(yaml("zset-max-ziplist-entries: 99\n"), 0, "%s", err);
    cr_assert_eq(cfg.zset_max_listpack_entries, 99);
}

Test(config, yaml_tiers_are_a_list_of_mappings)
{
    cr_assert_eq(yaml("tiers:\n"
                      "  - name: hot\n    kind: ram\n    capacity: 512mb\n    score: 1\n"
                      "  - {name: ssd, kind: file, capacity: 100gb, path: /mnt/ssd}\n"
                      "  - cold:file:1tb:/mnt/hdd:0\n"),
                 0, "%s", err);
    cr_assert_eq(cfg.ntiers, 3);
    cr_assert_str_eq(cfg.tiers[0].name, "hot");
    cr_assert_eq(cfg.tiers[0].kind, CONFIG_TIER_RAM);
    cr_assert_eq(cfg.tiers[0].capacity, 512LL << 20);
    cr_assert_eq(cfg.tiers[0].score, 1.0);
    cr_assert_str_eq(cfg.tiers[0].path, "");
    cr_assert_str_eq(cfg.tiers[1].path, "/mnt/ssd");
    cr_assert_eq(cfg.tiers[1].kind, CONFIG_TIER_FILE);
    cr_assert_eq(cfg.tiers[1].score, -1);
    cr_assert_eq(cfg.tiers[2].capacity, 1LL << 40);
    cr_assert_eq(cfg.tiers[2].score, 0.0);
    cr_assert_str_eq(get(&cfg, "tiers"), "hot:ram:536870912::1 ssd:file:107374182400:/mnt/ssd "
                                         "cold:file:1099511627776:/mnt/hdd:0");
}

Test(config, yaml_tier_errors_name_the_line)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"tiers:\n  - name: a\n    kind: ram\n    size: 1gb\n",
         "t.yaml:4: unknown tier key 'size' (expected name, kind, capacity, path, score)"},
        {"tiers:\n  - name: a\n    kind: ram\n",
         "t.yaml:2: a tier needs a name, a kind and a capacity"},
        {"tiers:\n  - {name: a, kind: tape, capacity: 1gb}\n",
         "t.yaml:2: bad tier kind 'tape' (expected ram or file)"},
        {"tiers:\n  - {name: a, kind: ram, capacity: lots}\n",
         "t.yaml:2: bad tier capacity 'lots' (expected a size like 8gb)"},
        {"tiers:\n  - {name: a, kind: ram, capacity: 1gb, path: /x}\n",
         "t.yaml:2: RAM tier 'a' takes no path"},
        {"tiers:\n  - {name: a, kind: file, capacity: 1gb}\n",
         "t.yaml:2: file tier 'a' needs a path"},
        {"tiers:\n  - {name: a, kind: ram, capacity: 1gb, score: 2}\n",
         "t.yaml:2: score of tier 'a' must be in [0, 1]"},
        {"tiers:\n  - {name: a, kind: ram, capacity: 1gb}\n  - {name: a, kind: ram, capacity: "
         "1gb}\n",
         "t.yaml:2: two tiers are named 'a'"},
        {"tiers: []\n", "t.yaml:1: between 1 and 16 tiers are needed, not 0"},
        {"tiers:\n  - {name: 'a b', kind: ram, capacity: 1gb}\n",
         "t.yaml:2: tier name 'a b' must be letters, digits, '_', '-' or '.'"},
        /* found by fuzz_config: such a path did not come back through CONFIG GET tiers */
        {"tiers:\n  - {name: a, kind: file, capacity: 1gb, path: /tm 0.5}\n",
         "t.yaml:2: path of tier 'a' must not hold spaces, ':' or control characters"},
        {"tiers:\n  - {name: a, kind: file, capacity: 1gb, path: '/x:y'}\n",
         "t.yaml:2: path of tier 'a' must not hold spaces, ':' or control characters"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(yaml(cases[i].text), -1, "case %zu was taken", i);
        cr_assert_str_eq(err, cases[i].msg, "case %zu", i);
        cr_assert_eq(cfg.ntiers, 1);
    }
}

Test(config, yaml_refuses_more_than_sixteen_tiers)
{
    buf_t b;
    buf_init(&b);
    buf_append_str(&b, "tiers:\n");
    for (int i = 0; i < 17; i++) buf_printf(&b, "  - t%d:ram:1mb\n", i);
    cr_assert_eq(yaml(b.data), -1);
    cr_assert(strstr(err, "at most 16 tiers"), "%s", err);
    buf_deinit(&b);
}

Test(config, config_load_file_names_the_file)
{
    char *path = write_temp("port: 7001\nbogus: 1\n");
    cr_assert_eq(config_load_file(&cfg, path, err, sizeof err), -1);
    char want[256];
    snprintf(want, sizeof want, "%s:2: unknown key 'bogus'", path);
    cr_assert_str_eq(err, want);
    unlink(path);
    cr_assert_eq(config_load_file(&cfg, "/nonexistent/cte.yaml", err, sizeof err), -1);
    cr_assert(strstr(err, "cannot open '/nonexistent/cte.yaml'"), "%s", err);
}

/* ---- the embedded default --------------------------------------------------------------- */

Test(config, the_embedded_default_loads_cleanly)
{
    cr_assert_eq(config_load_default(&cfg, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cfg.port, 6379);
    cr_assert_str_eq(cfg.bind.items[0], "127.0.0.1");
    cr_assert_str_eq(cfg.unixsocket, "/tmp/cte-server.sock");
    cr_assert_str_eq(cfg.dir, "./cte-data");
    cr_assert_eq(cfg.appendonly, 1);
    cr_assert_eq(cfg.appendfsync, CONFIG_FSYNC_EVERYSEC);
    cr_assert_eq(cfg.ntiers, 2);
    cr_assert_str_eq(cfg.tiers[0].name, "ram");
    cr_assert_eq(cfg.tiers[0].kind, CONFIG_TIER_RAM);
    cr_assert_eq(cfg.tiers[0].capacity, 1LL << 30);
    cr_assert_str_eq(cfg.tiers[1].name, "disk");
    cr_assert_eq(cfg.tiers[1].kind, CONFIG_TIER_FILE);
    cr_assert_eq(cfg.tiers[1].capacity, 8LL << 30);
    cr_assert_str_eq(cfg.tiers[1].path, "tiers/disk");
    cr_assert_eq(cfg.search_enabled, 1);
    cr_assert_eq(cfg.shm_ring_size, 1 << 20);
}

Test(config, the_embedded_default_is_tools_cte_server_yaml)
{
    const char *paths[] = {"tools/cte-server.yaml", "../tools/cte-server.yaml",
                           "../../tools/cte-server.yaml"};
    FILE *f = NULL;
    for (size_t i = 0; !f && i < 3; i++) f = fopen(paths[i], "rb");
    if (!f) cr_skip_test("tools/cte-server.yaml not found from the working directory");
    buf_t text;
    char chunk[4096];
    size_t n;
    buf_init(&text);
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_append(&text, chunk, n);
    fclose(f);
    cr_assert_str_eq(text.data, config_default_yaml());
    buf_deinit(&text);
}

/* ---- the command line ------------------------------------------------------------------- */

Test(config, no_arguments_load_the_embedded_default)
{
    cr_assert_eq(args(NULL), 0, "%s", err);
    cr_assert_eq(cfg.appendonly, 1);
    cr_assert_eq(cfg.ntiers, 2);
    cr_assert_null(cfg.config_file);
}

Test(config, options_override_the_default)
{
    cr_assert_eq(args("--port", "7000", "--dir", "/var/lib/cte", "--maxmemory", "1gb", NULL), 0,
                 "%s", err);
    cr_assert_eq(cfg.port, 7000);
    cr_assert_str_eq(cfg.dir, "/var/lib/cte");
    cr_assert_eq(cfg.maxmemory, 1LL << 30);
    cr_assert_eq(cfg.appendonly, 1);
}

Test(config, option_values_run_to_the_next_option_and_are_joined)
{
    cr_assert_eq(args("--bind", "127.0.0.1", "::1", "--save", "3600", "1", "300", "100",
                      "--client-output-buffer-limit", "pubsub", "1mb", "1mb", "0", NULL),
                 0, "%s", err);
    cr_assert_eq(cfg.bind.count, 2);
    cr_assert_str_eq(cfg.save, "3600 1 300 100");
    cr_assert_eq(cfg.client_obuf_limits[CONFIG_CLIENT_PUBSUB].soft_seconds, 0);
}

Test(config, an_option_and_its_value_may_come_in_one_argument)
{
    cr_assert_eq(args("--port 7002", NULL), 0, "%s", err);
    cr_assert_eq(cfg.port, 7002);
}

Test(config, an_empty_value_is_allowed)
{
    cr_assert_eq(args("--save", "", "--requirepass", "", "--port", "7003", NULL), 0, "%s", err);
    cr_assert_str_eq(cfg.save, "");
    cr_assert_str_eq(cfg.requirepass, "");
    cr_assert_eq(cfg.port, 7003);
    cr_assert_eq(args("--save", "--port", "7004", NULL), 0, "%s", err);
    cr_assert_str_eq(cfg.save, "", "--save alone means save \"\", as in redis-server");
}

Test(config, import_rdb_takes_one_file_made_absolute)
{
    char cwd[4096], want[4200];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(args("--import-rdb", "dump.rdb", "--port", "7006", NULL), 0, "%s", err);
    snprintf(want, sizeof want, "%s/dump.rdb", cwd);
    cr_assert_str_eq(cfg.import_rdb, want, "the server chdirs to dir before it reads the file");
    cr_assert_eq(cfg.port, 7006);
    cr_assert_eq(args("--import-rdb", NULL), -1);
    cr_assert(strstr(err, "'--import-rdb' needs a value"), "%s", err);
    cr_assert_eq(args("--import-rdb", "/abs/x.rdb", NULL), 0, "%s", err);
    cr_assert_str_eq(cfg.import_rdb, "/abs/x.rdb");
}

Test(config, an_option_without_a_value_is_refused_by_name)
{
    cr_assert_eq(args("--port", NULL), -1);
    cr_assert_str_eq(err, "command line: '--port' needs a value (give \"\" for an empty one)");
    cr_assert_eq(args("--requirepass", "--port", "7005", NULL), -1);
    cr_assert(strstr(err, "'--requirepass' needs a value"), "%s", err);
    cr_assert_eq(cfg.port, 6379);
}

Test(config, a_config_file_after_one_value_options_is_the_config_file)
{
    char *path = write_temp("port: 7400\nhz: 30\n");
    cr_assert_eq(args("--appendonly", "no", path, NULL), 0, "%s", err);
    cr_assert_eq(cfg.hz, 30, "the file was read");
    cr_assert_eq(cfg.appendonly, 0);
    cr_assert_eq(args("--port", "7401", path, "--hz", "40", NULL), 0, "%s", err);
    cr_assert_eq(cfg.port, 7401, "options apply after the file wherever it is");
    cr_assert_eq(cfg.hz, 40);
    cr_assert_eq(args(path, "--port", "7402", path, NULL), -1);
    cr_assert(strstr(err, "('--port' takes one value): the config file is already"), "%s", err);
    unlink(path);
}

Test(config, list_valued_options_take_every_argument_up_to_the_next_option)
{
    cr_assert_eq(args("--bind", "127.0.0.1", "::1", "--port", "7403", NULL), 0, "%s", err);
    cr_assert_eq(cfg.bind.count, 2);
    cr_assert_eq(cfg.port, 7403);
}

Test(config, options_may_set_immutable_keys_and_aliases)
{
    cr_assert_eq(args("--databases", "4", "--daemonize", "yes", "--hash-max-ziplist-value", "9",
                      "--LOGLEVEL", "debug", NULL),
                 0, "%s", err);
    cr_assert_eq(cfg.databases, 4);
    cr_assert_eq(cfg.daemonize, 1);
    cr_assert_eq(cfg.hash_max_listpack_value, 9);
    cr_assert_eq(cfg.loglevel, CONFIG_LOG_DEBUG);
}

Test(config, unknown_options_and_bad_values_are_named)
{
    cr_assert_eq(args("--prot", "1", NULL), -1);
    cr_assert_str_eq(err, "command line: unknown option '--prot'");
    cr_assert_eq(args("--port", "abc", NULL), -1);
    cr_assert_str_eq(err, "command line: bad value for 'port': 'abc' (expected an integer in "
                          "0..65535)");
    cr_assert_eq(args("--port", "1", "stray", "--hz", "5", NULL), -1);
    cr_assert(strstr(err, "cannot open 'stray'"), "%s", err);
    cr_assert_eq(args("--port", "1", "-x", NULL), -1);
    cr_assert_eq(args("--", NULL), -1);
    cr_assert(strstr(err, "unexpected argument '--'"), "%s", err);
    cr_assert_eq(cfg.port, 6379, "a failed command line changed the config");
}

Test(config, a_first_positional_argument_is_the_config_file)
{
    char *path = write_temp("port: 7100\nappendonly: no\n");
    cr_assert_eq(args(path, "--hz", "20", NULL), 0, "%s", err);
    cr_assert_eq(cfg.port, 7100);
    cr_assert_eq(cfg.hz, 20);
    cr_assert_eq(cfg.ntiers, 1, "a file starts from the table, not the embedded default");
    cr_assert_not_null(cfg.config_file);
    cr_assert_eq(cfg.config_file[0], '/');
    unlink(path);
}

Test(config, dash_dash_config_names_the_file_too)
{
    char *path = write_temp("port: 7200\n");
    cr_assert_eq(args("--port", "7201", "--config", path, NULL), 0, "%s", err);
    cr_assert_eq(cfg.port, 7201, "options apply after the file wherever --config is");
    cr_assert_eq(args(path, "--config", path, NULL), -1);
    cr_assert(strstr(err, "two config files given"), "%s", err);
    unlink(path);
}

Test(config, a_bad_config_file_is_reported_and_changes_nothing)
{
    char *path = write_temp("port: 7300\nport: 1\n");
    cr_assert_eq(args(path, NULL), -1);
    cr_assert(strstr(err, ":2: 'port' is set twice (first on line 1)"), "%s", err);
    cr_assert_eq(cfg.port, 6379);
    unlink(path);
    cr_assert_eq(args("/nonexistent.yaml", NULL), -1);
    cr_assert(strstr(err, "cannot open '/nonexistent.yaml'"), "%s", err);
}

Test(config, the_first_tier_option_replaces_the_configured_tiers)
{
    cr_assert_eq(args("--tier", "fast:ram:2gb", "--tier", "slow:file:1tb:/data/slow:0.25", NULL), 0,
                 "%s", err);
    cr_assert_eq(cfg.ntiers, 2);
    cr_assert_str_eq(cfg.tiers[0].name, "fast");
    cr_assert_eq(cfg.tiers[0].capacity, 2LL << 30);
    cr_assert_str_eq(cfg.tiers[1].name, "slow");
    cr_assert_eq(cfg.tiers[1].kind, CONFIG_TIER_FILE);
    cr_assert_str_eq(cfg.tiers[1].path, "/data/slow");
    cr_assert_eq(cfg.tiers[1].score, 0.25);
}

Test(config, tier_options_are_checked)
{
    static const struct {
        const char *spec, *msg;
    } cases[] = {
        {"a:ram", "command line: bad value for '--tier': 'a:ram' (tier 'a:ram' is not "
                  "NAME:KIND:CAPACITY[:PATH[:SCORE]])"},
        {"a:tape:1gb", "command line: bad value for '--tier': 'a:tape:1gb' (tier kind 'tape' is "
                       "not ram or file)"},
        {"a:ram:big", "command line: bad value for '--tier': 'a:ram:big' (tier capacity 'big' is "
                      "not a memory value)"},
        {"a:file:1gb", "command line: bad value for '--tier': 'a:file:1gb' (file tier 'a' needs a "
                       "path)"},
        {"a:ram:1gb::x", "command line: bad value for '--tier': 'a:ram:1gb::x' (tier score 'x' is "
                         "not a number)"},
        {"a:ram:1gb:::",
         "command line: bad value for '--tier': 'a:ram:1gb:::' (tier 'a:ram:1gb:::' "
         "is not NAME:KIND:CAPACITY[:PATH[:SCORE]])"},
        {"a:ram:0", "command line: bad value for '--tier': 'a:ram:0' (tier 'a' needs a capacity "
                    "above 0)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(args("--tier", cases[i].spec, NULL), -1, "%s was taken", cases[i].spec);
        cr_assert_str_eq(err, cases[i].msg);
    }
    cr_assert_eq(args("--tier", "a:ram:1gb", "--tier", "a:ram:1gb", NULL), -1);
    cr_assert_str_eq(err, "command line: bad --tier options: two tiers are named 'a'");
    cr_assert_eq(args("--tier", NULL), -1);
    cr_assert_eq(cfg.ntiers, 1);
}

Test(config, the_tiers_key_takes_specs_on_the_command_line)
{
    cr_assert_eq(args("--tiers", "r:ram:1mb", "f:file:1gb:dir", NULL), 0, "%s", err);
    cr_assert_eq(cfg.ntiers, 2);
    cr_assert_str_eq(get(&cfg, "tiers"), "r:ram:1048576 f:file:1073741824:dir");
}

/* ---- CONFIG REWRITE --------------------------------------------------------------------- */

static void assert_same_config(const config_t *a, const config_t *b)
{
    for (size_t i = 0; i < config__nrows; i++) {
        char va[1024];
        snprintf(va, sizeof va, "%s", get(a, config__rows[i].name));
        cr_assert_str_eq(get(b, config__rows[i].name), va, "key %s", config__rows[i].name);
    }
}

Test(config, rewrite_writes_yaml_that_loads_back_to_the_same_values)
{
    char path[] = "/tmp/cte-rewrite-test-XXXXXX";
    int fd = mkstemp(path);
    config_t back;

    close(fd);
    cr_assert_eq(yaml("tiers:\n  - {name: hot, kind: ram, capacity: 64mb, score: 1}\n"
                      "  - {name: cold, kind: file, capacity: 1tb, path: '/d-1/x', score: 0.3}\n"),
                 0, "%s", err);
    cr_assert_eq(set("requirepass", "q\"uo\\te\ttab"), 0);
    cr_assert_eq(set("bind", "127.0.0.1 -::1"), 0);
    cr_assert_eq(set("notify-keyspace-events", "KEA"), 0);
    cr_assert_eq(set("client-output-buffer-limit", "pubsub 0 0 0"), 0);
    cr_assert_eq(set("search-max-bytes-per-blob", "3000"), 0);
    cr_assert_eq(set("shm-enabled", "no"), 0);
    cr_assert_eq(set("list-max-ziplist-size", "-4"), 0);
    cr_assert_eq(config_rewrite(&cfg, path, err, sizeof err), 0, "%s", err);

    config_init(&back);
    cr_assert_eq(config_load_file(&back, path, err, sizeof err), 0, "%s", err);
    assert_same_config(&cfg, &back);
    config_deinit(&back);
    unlink(path);
}

Test(config, rewrite_of_a_default_config_writes_no_keys)
{
    char path[] = "/tmp/cte-rewrite-test-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    cr_assert_eq(config_rewrite(&cfg, path, err, sizeof err), 0, "%s", err);
    FILE *f = fopen(path, "r");
    char line[256];
    while (fgets(line, sizeof line, f)) cr_assert_eq(line[0], '#', "unexpected line %s", line);
    fclose(f);
    unlink(path);
}

Test(config, rewrite_reports_a_directory_that_cannot_be_written)
{
    cr_assert_eq(config_rewrite(&cfg, "/nonexistent-dir/cte.yaml", err, sizeof err), -1);
    cr_assert(strstr(err, "cannot open '/nonexistent-dir/cte.yaml.tmp'"), "%s", err);
}

/* ---- the reference ---------------------------------------------------------------------- */

Test(config, the_markdown_reference_has_a_row_per_key)
{
    buf_t md;
    buf_init(&md);
    config_doc_markdown(&md);
    cr_assert(strstr(md.data, "| Key | Type | Default | Values | CONFIG SET | Description |"));
    cr_assert(strstr(md.data, "| `port` | int | `6379` | 0..65535 | yes | "), "%s", md.data);
    cr_assert(strstr(md.data, "| `daemonize` | bool | `no` | yes, no | no | "));
    cr_assert(strstr(md.data, "| `requirepass` | string | `\"\"` |  | yes | "));
    cr_assert(strstr(md.data, "Alias: `hash-max-ziplist-entries`."));
    for (size_t i = 0; i < config__nrows; i++) {
        char cell[128];
        snprintf(cell, sizeof cell, "| `%s` |", config__rows[i].name);
        cr_assert(strstr(md.data, cell), "no row for %s", config__rows[i].name);
    }
    cr_assert(strstr(md.data, "- `appendonly`: `yes`"), "%s", md.data);
    cr_assert(strstr(md.data, "- `tiers`: `ram:ram:1gb disk:file:8gb:tiers/disk`"));
    buf_deinit(&md);
}

Test(config, users_are_a_list_of_rule_strings_that_may_hold_spaces)
{
    cr_assert_eq(yaml("users:\n  - \"alice on >p w ~* +@all\"\n  - bob off\n"), 0, "%s", err);
    cr_assert_eq(cfg.users.count, 2);
    cr_assert_str_eq(cfg.users.items[0], "alice on >p w ~* +@all");
    cr_assert_str_eq(cfg.users.items[1], "bob off");
    cr_assert_eq(args("--user", "carol on nopass", NULL), 0, "%s", err);
    cr_assert_eq(cfg.users.count, 1);
    cr_assert_str_eq(cfg.users.items[0], "carol on nopass");
    /* repeated, as redis-server's --user: every one counts */
    cr_assert_eq(args("--user", "a on", "--port", "7000", "--user", "b off", NULL), 0, "%s", err);
    cr_assert_eq(cfg.users.count, 2);
    cr_assert_str_eq(cfg.users.items[1], "b off");
    /* under its other name, a later option replaces the values, as any key's (so a dump of
     * every name, alias included, gives the same users back) */
    cr_assert_eq(args("--user", "a on", "--users", "b off", NULL), 0, "%s", err);
    cr_assert_eq(cfg.users.count, 1);
    cr_assert_str_eq(cfg.users.items[0], "b off");
    cr_assert_neq(set("users", "x"), 0); /* immutable, as Redis's user lines */
    cr_assert_eq(yaml("aclfile: users.acl\nacl-pubsub-default: allchannels\n"
                      "acllog-max-len: 5\n"),
                 0, "%s", err);
    cr_assert_str_eq(cfg.aclfile, "users.acl");
    cr_assert_eq(cfg.acl_pubsub_default, 1);
    cr_assert_eq(cfg.acllog_max_len, 5);
    cr_assert_neq(set("acl-pubsub-default", "some"), 0);
}
