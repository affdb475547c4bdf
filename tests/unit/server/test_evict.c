/* test_evict.c - server/evict.c through the socketless client: which keys each maxmemory
 * policy evicts (volatile-* never a key without TTL, volatile-ttl the nearest expiry, LRU the
 * idle keys, LFU not the hot ones), -OOM under noeviction with reads and DEL still served,
 * DENYOOM versus other commands, transactions (queueing and EXEC) over the limit, the
 * `evicted` event and evicted_keys, tags freeing their RAM-tier blobs, RAM-tier bytes not
 * counted, and the time limit handing the rest to the cron.
 *
 * The limit is set relative to what evict_counted_memory() says after filling, so the tests
 * do not depend on the process's baseline. One RAM tier of 4 MiB, no file tier. */
#include "common/alloc.h"
#include "config/config.h"
#include "server/client.h"
#include "server/evict.h"
#include "server/server.h"
#include "storage/db.h"
#include "storage/object.h"
#include "storage/t_tag.h"
#include "tiers/tier.h"

#include "tests/unit/server/harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#define OOM_REPLY "-" EVICT_ERR_OOM "\r\n"
#define VALUE_LEN 1000
/* How far over the limit the "over" tests start: more than an incremental rehash that ends
 * between two commands gives back (it frees the old bucket array). */
#define OVER (16 * 1024)

static client_t *C;

static void setup(void)
{
    char *argv[] = {"cte-server", "--tier", "ram:ram:4mb::1"};
    C = harness_server_start(3, argv);
    /* no time limit: a loaded machine must not leave evictions to a cron that never runs here */
    srv.cfg.maxmemory_eviction_tenacity = 100;
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(evict, .init = setup, .fini = teardown);

/* Sends line from C and returns its reply (a static copy); C->out is emptied. */
static const char *run(const char *line)
{
    static char out[8192];
    buf_clear(&C->out);
    harness_send(C, line);
    size_t n = C->out.len < sizeof(out) - 1 ? C->out.len : sizeof(out) - 1;
    memcpy(out, C->out.data ? C->out.data : "", n);
    out[n] = '\0';
    buf_clear(&C->out);
    return out;
}

static const char *runf(const char *fmt, int i)
{
    char line[256];
    snprintf(line, sizeof(line), fmt, i);
    return run(line);
}

/* SETs prefix0..prefix(n-1) to VALUE_LEN-byte values, with EX ttl (ttl > 0) or none. */
static void fill(const char *prefix, int n, int ttl)
{
    static char value[VALUE_LEN + 1];
    memset(value, 'v', VALUE_LEN);
    char line[VALUE_LEN + 128];
    for (int i = 0; i < n; i++) {
        if (ttl > 0)
            snprintf(line, sizeof(line), "SET %s%d %s EX %d", prefix, i, value, ttl);
        else
            snprintf(line, sizeof(line), "SET %s%d %s", prefix, i, value);
        cr_assert_str_eq(run(line), "+OK\r\n", "%s", line);
    }
}

static int exists(const char *prefix, int i)
{
    char key[64];
    snprintf(key, sizeof(key), "%s%d", prefix, i);
    return db_find(&srv.db[0], key, strlen(key)) != NULL;
}

static int count(const char *prefix, int n)
{
    int have = 0;
    for (int i = 0; i < n; i++) have += exists(prefix, i);
    return have;
}

static void policy(const char *name)
{
    char line[96];
    snprintf(line, sizeof(line), "CONFIG SET maxmemory-policy %s", name);
    cr_assert_str_eq(run(line), "+OK\r\n");
}

/* Sets maxmemory to the memory counted now minus less bytes, minus one. */
static void limit_below_now(size_t less)
{
    srv.cfg.maxmemory = (long long)(evict_counted_memory() - less - 1);
}

/* ---- noeviction ---- */

Test(evict, noeviction_refuses_writes_and_serves_reads)
{
    fill("k", 50, 0);
    limit_below_now(OVER);
    harness_expect(C, "SET new 1", OOM_REPLY);
    harness_expect(C, "INCR k0", OOM_REPLY);
    harness_expect(C, "LPUSH l a", OOM_REPLY);
    cr_assert_eq(db_size(&srv.db[0]), 50);
    cr_assert(strncmp(run("GET k1"), "$1000\r\nvvv", 10) == 0);
    harness_expect(C, "EXISTS k2", ":1\r\n");
    harness_expect(C, "DBSIZE", ":50\r\n");
    cr_assert_eq(srv.stat.evicted_keys, 0);
}

Test(evict, non_denyoom_writes_go_on_over_the_limit)
{
    fill("k", 50, 0);
    limit_below_now(OVER);
    harness_expect(C, "SET new 1", OOM_REPLY);
    harness_expect(C, "EXPIRE k3 100", ":1\r\n");
    harness_expect(C, "PERSIST k3", ":1\r\n");
    harness_expect(C, "DEL k0 k1 k2 k3 k4 k5 k6 k7 k8 k9 k10 k11 k12 k13 k14", ":15\r\n");
    harness_expect(C, "UNLINK k15 k16 k17 k18 k19", ":5\r\n");
    /* deleting freed more than we were over: writes work again */
    harness_expect(C, "SET new 1", "+OK\r\n");
    harness_expect(C, "GET new", "$1\r\n1\r\n");
}

Test(evict, no_limit_means_no_refusal)
{
    fill("k", 20, 0);
    srv.cfg.maxmemory = 0;
    harness_expect(C, "SET new 1", "+OK\r\n");
}

Test(evict, rejected_commands_count_as_rejected_and_as_oom_errors)
{
    fill("k", 10, 0);
    limit_below_now(OVER);
    harness_expect(C, "SET a 1", OOM_REPLY);
    srv.cfg.maxmemory = 0;
    const char *info = run("INFO commandstats");
    cr_assert(strstr(info, "cmdstat_set:calls=10,") != NULL, "%s", info);
    cr_assert(strstr(info, "rejected_calls=1,") != NULL, "%s", info);
    info = run("INFO errorstats");
    cr_assert(strstr(info, "errorstat_OOM:count=1") != NULL, "%s", info);
}

/* ---- transactions ---- */

Test(evict, queueing_in_multi_over_the_limit_aborts_the_transaction)
{
    fill("k", 20, 0);
    harness_expect(C, "MULTI", "+OK\r\n");
    limit_below_now(OVER);
    /* even a read may not be queued: the queue itself costs memory (as Redis) */
    harness_expect(C, "GET k1", OOM_REPLY);
    srv.cfg.maxmemory = 0;
    harness_expect(C, "SET a 1", "+QUEUED\r\n");
    harness_expect(C, "EXEC", "-EXECABORT Transaction discarded because of previous errors.\r\n");
    harness_expect(C, "EXISTS a", ":0\r\n");
}

Test(evict, exec_of_a_denyoom_command_over_the_limit_is_refused)
{
    fill("k", 20, 0);
    harness_expect(C, "MULTI", "+OK\r\n");
    harness_expect(C, "SET a 1", "+QUEUED\r\n");
    limit_below_now(OVER);
    harness_expect(C, "EXEC", "-EXECABORT Transaction discarded because of: " EVICT_ERR_OOM "\r\n");
    /* the transaction is gone */
    harness_expect(C, "EXEC", "-ERR EXEC without MULTI\r\n");
    harness_expect(C, "EXISTS a", ":0\r\n");
}

Test(evict, exec_of_reads_and_discard_go_on_over_the_limit)
{
    fill("k", 20, 0);
    harness_expect(C, "MULTI", "+OK\r\n");
    harness_expect(C, "EXISTS k1", "+QUEUED\r\n");
    harness_expect(C, "DEL k2", "+QUEUED\r\n");
    limit_below_now(OVER);
    harness_expect(C, "EXEC", "*2\r\n:1\r\n:1\r\n");
    srv.cfg.maxmemory = 0;
    harness_expect(C, "MULTI", "+OK\r\n");
    harness_expect(C, "SET a 1", "+QUEUED\r\n");
    limit_below_now(OVER);
    harness_expect(C, "DISCARD", "+OK\r\n");
}

/* ---- what goes, per policy ---- */

Test(evict, allkeys_random_evicts_until_under_the_limit)
{
    fill("k", 200, 0);
    policy("allkeys-random");
    limit_below_now(50 * VALUE_LEN);
    harness_expect(C, "GET nothing", "$-1\r\n");
    cr_assert_leq(evict_counted_memory(), (size_t)srv.cfg.maxmemory);
    uint64_t gone = srv.stat.evicted_keys;
    cr_assert_geq(gone, 40, "evicted %llu", (unsigned long long)gone);
    cr_assert_lt(gone, 100, "evicted %llu", (unsigned long long)gone);
    cr_assert_eq(db_size(&srv.db[0]), 200 - gone);
    harness_expect(C, "SET new 1", "+OK\r\n");
}

/* Redis 7.0 evicts nothing while clients are paused (its TCL unit/pause). */
Test(evict, nothing_is_evicted_during_a_client_pause)
{
    fill("k", 200, 0);
    policy("allkeys-random");
    harness_expect(C, "CLIENT PAUSE 100000 WRITE", "+OK\r\n");
    limit_below_now(50 * VALUE_LEN);
    harness_expect(C, "GET nothing", "$-1\r\n");
    cr_assert_eq(srv.stat.evicted_keys, 0);
    cr_assert_eq(db_size(&srv.db[0]), 200);
    harness_expect(C, "CLIENT UNPAUSE", "+OK\r\n");
    harness_expect(C, "GET nothing", "$-1\r\n");
    cr_assert_geq(srv.stat.evicted_keys, 40);
}

/* Keys without TTL ("p") and with ("v"): policy p evicts only v keys, and when only p keys
 * are left and memory is still over, writes get -OOM. */
static void volatile_keeps_persistent_keys(const char *p)
{
    fill("p", 100, 0);
    fill("v", 100, 1000);
    policy(p);
    limit_below_now(30 * VALUE_LEN);
    harness_expect(C, "SET new 1", "+OK\r\n");
    cr_assert_eq(count("p", 100), 100, "%s evicted a key without TTL", p);
    int left = count("v", 100);
    cr_assert_lt(left, 75, "%s: %d volatile keys left", p, left);
    cr_assert_eq(srv.stat.evicted_keys, (uint64_t)(100 - left));
    /* below what the persistent keys alone take: every volatile key goes, then -OOM */
    limit_below_now((size_t)left * VALUE_LEN * 11 / 10 + OVER);
    harness_expect(C, "SET other 1", OOM_REPLY);
    cr_assert_eq(count("v", 100), 0, "%s", p);
    cr_assert_eq(count("p", 100), 100, "%s", p);
    cr_assert(strncmp(run("GET p7"), "$1000\r\n", 7) == 0, "%s: reads must go on", p);
}

Test(evict, volatile_lru_never_evicts_keys_without_ttl)
{
    volatile_keeps_persistent_keys("volatile-lru");
}

Test(evict, volatile_lfu_never_evicts_keys_without_ttl)
{
    volatile_keeps_persistent_keys("volatile-lfu");
}

Test(evict, volatile_random_never_evicts_keys_without_ttl)
{
    volatile_keeps_persistent_keys("volatile-random");
}

Test(evict, volatile_ttl_never_evicts_keys_without_ttl)
{
    volatile_keeps_persistent_keys("volatile-ttl");
}

Test(evict, volatile_ttl_evicts_the_nearest_expiry_first)
{
    policy("volatile-ttl");
    harness_expect(C, "CONFIG SET maxmemory-samples 64", "+OK\r\n");
    char value[VALUE_LEN + 1];
    memset(value, 'v', VALUE_LEN);
    value[VALUE_LEN] = '\0';
    char line[VALUE_LEN + 64];
    /* 40 keys, so that 64 samples a round (with replacement) see each key with probability
     * 0.8: with 100 keys a near key went unsampled for every round about once in 100 runs */
    for (int i = 0; i < 40; i++) {
        snprintf(line, sizeof(line), "SET t%d %s EX %d", i, value, 1000 + 10 * i);
        cr_assert_str_eq(run(line), "+OK\r\n");
    }
    limit_below_now(12 * VALUE_LEN);
    harness_expect(C, "SET new 1", "+OK\r\n");
    uint64_t gone = srv.stat.evicted_keys;
    cr_assert_geq(gone, 10);
    for (int i = 25; i < 40; i++) cr_assert(exists("t", i), "t%d (far expiry) was evicted", i);
    for (int i = 0; i < 10; i++) cr_assert(!exists("t", i), "t%d (nearest expiry) was kept", i);
}

Test(evict, allkeys_lru_evicts_idle_keys_before_recently_used_ones)
{
    policy("allkeys-lru");
    harness_expect(C, "CONFIG SET maxmemory-samples 20", "+OK\r\n");
    storage_lru_clock = 1000;
    fill("k", 200, 0);
    storage_lru_clock = 5000; /* an hour later the even keys are read */
    for (int i = 0; i < 200; i += 2) cr_assert_neq(runf("GET k%d", i)[0], '-');
    storage_lru_clock = 5010;
    limit_below_now(50 * VALUE_LEN);
    harness_expect(C, "SET new 1", "+OK\r\n");
    cr_assert_geq(srv.stat.evicted_keys, 40);
    for (int i = 0; i < 200; i += 2) cr_assert(exists("k", i), "recently read k%d was evicted", i);
}

Test(evict, allkeys_lfu_keeps_hot_keys)
{
    policy("allkeys-lfu");
    harness_expect(C, "CONFIG SET lfu-log-factor 0", "+OK\r\n"); /* every access counts */
    harness_expect(C, "CONFIG SET lfu-decay-time 0", "+OK\r\n");
    harness_expect(C, "CONFIG SET maxmemory-samples 20", "+OK\r\n");
    fill("k", 200, 0);
    for (int r = 0; r < 10; r++)
        for (int i = 0; i < 200; i += 2) cr_assert_neq(runf("GET k%d", i)[0], '-');
    harness_expect(C, "OBJECT FREQ k0", ":15\r\n");
    harness_expect(C, "OBJECT FREQ k1", ":5\r\n");
    limit_below_now(50 * VALUE_LEN);
    harness_expect(C, "SET new 1", "+OK\r\n");
    cr_assert_geq(srv.stat.evicted_keys, 40);
    for (int i = 0; i < 200; i += 2) cr_assert(exists("k", i), "hot k%d was evicted", i);
}

Test(evict, every_database_is_a_candidate)
{
    policy("allkeys-lru");
    harness_expect(C, "SELECT 3", "+OK\r\n");
    fill("k", 100, 0);
    harness_expect(C, "SELECT 0", "+OK\r\n");
    limit_below_now(30 * VALUE_LEN);
    harness_expect(C, "SET new 1", "+OK\r\n");
    cr_assert_lt(db_size(&srv.db[3]), 80);
}

/* ---- what an eviction does ---- */

Test(evict, an_eviction_sends_the_evicted_event_and_counts)
{
    client_t *sub = client_new(NULL, NULL, -1);
    harness_expect(C, "CONFIG SET notify-keyspace-events Ee", "+OK\r\n");
    buf_clear(&sub->out);
    harness_send(sub, "SUBSCRIBE __keyevent@0__:evicted");
    buf_clear(&sub->out);
    fill("k", 1, 0);
    policy("allkeys-random");
    limit_below_now(VALUE_LEN / 2); /* less than the one key holds */
    harness_expect(C, "PING", "+PONG\r\n");
    cr_assert_eq(srv.stat.evicted_keys, 1);
    cr_assert_eq(db_size(&srv.db[0]), 0);
    const char *want = "*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:evicted\r\n$2\r\nk0\r\n";
    cr_assert(sub->out.len == strlen(want) && memcmp(sub->out.data, want, sub->out.len) == 0,
              "got '%s'", harness_escaped(sub->out.data, sub->out.len));
    srv.cfg.maxmemory = 0;
    cr_assert(strstr(run("INFO stats"), "\r\nevicted_keys:1\r\n") != NULL);
    client_free(sub);
}

Test(evict, an_evicted_watched_key_fails_exec)
{
    client_t *w = client_new(NULL, NULL, -1);
    fill("k", 1, 0);
    harness_expect(w, "WATCH k0", "+OK\r\n");
    harness_expect(w, "MULTI", "+OK\r\n");
    harness_expect(w, "PING", "+QUEUED\r\n");
    policy("allkeys-lru");
    limit_below_now(VALUE_LEN / 2);
    harness_expect(C, "PING", "+PONG\r\n");
    cr_assert_eq(srv.stat.evicted_keys, 1);
    srv.cfg.maxmemory = 0;
    harness_expect(w, "EXEC", "*-1\r\n");
    client_free(w);
}

Test(evict, evicting_a_tag_frees_its_blobs_and_ram_tier_bytes_are_not_counted)
{
    tier_t *ram = tag_store.tiers->t[0];
    static char data[60001];
    memset(data, 'b', 60000);
    char line[60100];
    snprintf(line, sizeof(line), "TPUT t b1 0 %s", data);
    harness_expect(C, line, ":60000\r\n");
    snprintf(line, sizeof(line), "TPUT t b2 0 %s", data);
    harness_expect(C, line, ":60000\r\n");
    cr_assert_eq(tier_used(ram), 120000);
    cr_assert_geq(tier_mem(ram), 120000);
    size_t counted = evict_counted_memory();
    cr_assert_eq(counted, alloc_used_memory() - tier_mem(ram));
    /* a limit just above what is counted: the 120 KB on the RAM tier do not make it over */
    srv.cfg.maxmemory = (long long)counted + 4096;
    harness_expect(C, "SET s 1", "+OK\r\n");
    policy("allkeys-random");
    limit_below_now(VALUE_LEN / 2);
    harness_expect(C, "PING", "+PONG\r\n");
    cr_assert_geq(srv.stat.evicted_keys, 1);
    /* the tag is gone only if it was picked; make sure by evicting everything */
    srv.cfg.maxmemory = 1;
    harness_expect(C, "SET x 1", OOM_REPLY);
    cr_assert_eq(db_size(&srv.db[0]), 0);
    cr_assert_eq(tier_used(ram), 0);
    cr_assert_eq(tier_mem(ram), 0);
    harness_expect(C, "TGET t b1", "$-1\r\n");
}

/* ---- time limit ---- */

Test(evict, a_time_limit_stops_after_sixteen_keys_and_the_cron_finishes)
{
    fill("k", 300, 0);
    policy("allkeys-random");
    limit_below_now(200 * VALUE_LEN);
    srv.cfg.maxmemory_eviction_tenacity = 0;
    int r = evict_perform(0);
    cr_assert_geq(srv.stat.evicted_keys, 16);
    if (r == EVICT_RUNNING) cr_assert_gt(evict_counted_memory(), (size_t)srv.cfg.maxmemory);
    cr_assert_neq(r, EVICT_FAIL);
    evict_cron();
    cr_assert_leq(evict_counted_memory(), (size_t)srv.cfg.maxmemory);
    cr_assert_eq(evict_perform(0), EVICT_OK);
}

Test(evict, config_knows_samples_and_tenacity)
{
    harness_expect(C, "CONFIG GET maxmemory-samples",
                   "*2\r\n$17\r\nmaxmemory-samples\r\n$1\r\n5\r\n");
    config_t defaults;
    config_init(&defaults);
    cr_assert_eq(defaults.maxmemory_eviction_tenacity, 10);
    cr_assert_eq(defaults.maxmemory_policy, CONFIG_MAXMEMORY_NOEVICTION);
    config_deinit(&defaults);
    harness_expect(C, "CONFIG GET maxmemory-eviction-tenacity",
                   "*2\r\n$27\r\nmaxmemory-eviction-tenacity\r\n$3\r\n100\r\n");
    cr_assert_eq(run("CONFIG SET maxmemory-samples 0")[0], '-');
    cr_assert_eq(run("CONFIG SET maxmemory-eviction-tenacity 101")[0], '-');
    harness_expect(C, "CONFIG SET maxmemory-eviction-tenacity 100", "+OK\r\n");
}
