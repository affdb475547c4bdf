/* tests/unit/server/cmd/test_geo.c - server/cmd/geo.c through the socketless client.
 *
 * Scenarios: commands with the exact reply bytes redis-server 7.0.15 gave for them in RESP2
 * and in RESP3 (NULL: the same bytes), run once per protocol on a fresh keyspace: GEOADD's
 * options and errors, GEOPOS/GEOHASH/GEODIST formatting, and the searches with their options,
 * errors and stored results; and what the append-only file gets (GEOADD as the ZADD it did,
 * nothing when nothing changed, GEORADIUS ... STORE as itself). The math itself is tested in
 * tests/unit/storage/test_geohash.c; comparisons on random data are in
 * tests/integration/test_geo.py and the differential test. */
#include "common/buf.h"
#include "server/client.h"
#include "server/persist/aof.h"

#include "tests/unit/server/harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static client_t *C;

static void setup(void)
{
    C = harness_server_start(0, NULL);
}

static void teardown(void)
{
    harness_server_stop();
}

TestSuite(cmd_geo, .init = setup, .fini = teardown);

typedef harness_step_t step_t;

static void run_steps(const step_t *steps, size_t n)
{
    harness_run_steps(C, steps, n, NULL);
}

Test(cmd_geo, add_pos_hash_dist)
{
    static const step_t steps[] = {
        {"GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania", ":2\r\n", NULL},
        {"GEOADD Sicily CH XX 13.361389 38.115556 Palermo 15 37 Catania 1 1 none", ":1\r\n", NULL},
        {"GEOADD Sicily NX XX 1 1 x", "-ERR syntax error\r\n", NULL},
        {"GEOADD Sicily 1 1", "-ERR wrong number of arguments for 'geoadd' command\r\n", NULL},
        {"GEOADD Sicily 181 1 x", "-ERR invalid longitude,latitude pair 181.000000,1.000000\r\n",
         NULL},
        {"GEOADD Sicily 1 abc x", "-ERR value is not a valid float\r\n", NULL},
        {"ZSCORE Sicily Palermo", "$16\r\n3479099956230698\r\n", ",3479099956230698\r\n"},
        {"GEOPOS Sicily Palermo nosuch",
         "*2\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n*-1\r\n",
         "*2\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n_\r\n"},
        {"GEOHASH Sicily Palermo nosuch", "*2\r\n$11\r\nsqc8b49rny0\r\n$-1\r\n",
         "*2\r\n$11\r\nsqc8b49rny0\r\n_\r\n"},
        {"GEODIST Sicily Palermo Catania km", "$8\r\n190.4424\r\n", NULL},
        {"GEODIST Sicily Palermo nosuch", "$-1\r\n", "_\r\n"},
        {"GEODIST Sicily Palermo Catania parsec",
         "-ERR unsupported unit provided. please use M, KM, FT, MI\r\n", NULL},

    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

Test(cmd_geo, searches_and_stores)
{
    static const step_t steps[] = {
        {"GEOADD pts 13.361389 38.115556 Palermo 15.087269 37.502669 Catania 12.758489 38.788135 "
         "edge1 17.241510 38.788135 edge2",
         ":4\r\n", NULL},
        {"GEORADIUS pts 15 37 200 km WITHDIST WITHCOORD WITHHASH ASC",
         "*2\r\n*4\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n:3479447370796909\r\n*2\r\n$20\r\n15."
         "08726745843887329\r\n$20\r\n37.50266842333162032\r\n*4\r\n$7\r\nPalermo\r\n$8\r\n190."
         "4424\r\n:3479099956230698\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38."
         "11555639549629859\r\n",
         "*2\r\n*4\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n:3479447370796909\r\n*2\r\n,15."
         "08726745843887329\r\n,37.50266842333162032\r\n*4\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n:"
         "3479099956230698\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n"},
        {"GEORADIUS pts 15 37 200 km COUNT 1 DESC WITHDIST",
         "*1\r\n*2\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n", NULL},
        {"GEORADIUS pts 15 37 200 km COUNT 1 ANY", "*1\r\n$7\r\nPalermo\r\n", NULL},
        {"GEORADIUS pts 15 37 200 km ANY", "-ERR the ANY argument requires COUNT argument\r\n",
         NULL},
        {"GEORADIUS pts 15 37 200 km COUNT 0", "-ERR COUNT must be > 0\r\n", NULL},
        {"GEORADIUS pts 15 37 -200 km", "-ERR radius cannot be negative\r\n", NULL},
        {"GEORADIUS_RO pts 15 37 200 km STORE dst", "-ERR syntax error\r\n", NULL},
        {"GEORADIUS pts 15 37 200 km STORE dst WITHDIST",
         "-ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD "
         "options\r\n",
         NULL},
        {"GEORADIUS pts 15 37 200 km STOREDIST dst", ":2\r\n", NULL},
        {"ZRANGE dst 0 -1 WITHSCORES",
         "*4\r\n$7\r\nCatania\r\n$18\r\n56.441257870158204\r\n$7\r\nPalermo\r\n$18\r\n190."
         "44242984775784\r\n",
         "*2\r\n*2\r\n$7\r\nCatania\r\n,56.441257870158204\r\n*2\r\n$7\r\nPalermo\r\n,190."
         "44242984775784\r\n"},
        {"GEORADIUSBYMEMBER pts Palermo 200 km",
         "*3\r\n$7\r\nPalermo\r\n$5\r\nedge1\r\n$7\r\nCatania\r\n", NULL},
        {"GEORADIUSBYMEMBER pts nosuch 200 km", "-ERR could not decode requested zset member\r\n",
         NULL},
        {"GEORADIUSBYMEMBER nokey nosuch -1 parsec", "*0\r\n", NULL},
        {"GEOSEARCH pts FROMLONLAT 15 37 BYBOX 400 400 km ASC WITHDIST",
         "*4\r\n*2\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n*2\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n*"
         "2\r\n$5\r\nedge2\r\n$8\r\n279.7403\r\n*2\r\n$5\r\nedge1\r\n$8\r\n279.7405\r\n",
         NULL},
        {"GEOSEARCH pts FROMMEMBER Palermo FROMLONLAT 15 37 BYRADIUS 1 km", "-ERR syntax error\r\n",
         NULL},
        {"geosearch pts BYRADIUS 1 km ASC ASC",
         "-ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for geosearch\r\n", NULL},
        {"GEOSEARCH pts FROMMEMBER Palermo ASC ASC ASC",
         "-ERR exactly one of BYRADIUS and BYBOX can be specified for GEOSEARCH\r\n", NULL},
        {"GEOSEARCHSTORE dst pts FROMMEMBER Palermo BYRADIUS 200 km WITHDIST",
         "-ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options\r\n",
         NULL},
        {"GEOSEARCHSTORE dst pts FROMMEMBER Palermo BYRADIUS 200 km COUNT 2 DESC", ":2\r\n", NULL},
        {"ZRANGE dst 0 -1 WITHSCORES",
         "*4\r\n$5\r\nedge1\r\n$16\r\n3479273021651468\r\n$7\r\nCatania\r\n$"
         "16\r\n3479447370796909\r\n",
         "*2\r\n*2\r\n$5\r\nedge1\r\n,3479273021651468\r\n*2\r\n$7\r\nCatania\r\n,"
         "3479447370796909\r\n"},
        {"GEOSEARCHSTORE dst nokey FROMMEMBER Palermo BYRADIUS 200 km", ":0\r\n", NULL},
        {"EXISTS dst", ":0\r\n", NULL},

    };
    run_steps(steps, sizeof(steps) / sizeof(steps[0]));
}

/* ---- the append-only file ---- */

static void aof_setup(void)
{
    harness_server_stop(); /* the suite's init started one first */
    cr_assert_eq(chdir(harness_tmpdir_make("cte-geo-aof")), 0);
    char *argv[] = {"cte-server", "--appendonly", "yes", "--appendfsync", "always"};
    C = harness_server_start(5, argv);
    cr_assert_eq(aof_load(NULL), 0);
    cr_assert_eq(aof_open(), 0);
}

static void aof_teardown(void)
{
    aof_shutdown();
    harness_server_stop();
    harness_tmpdir_remove();
}

static const char *aof_text(void)
{
    static char text[16384];
    aof_flush();
    FILE *f = fopen("appendonly.aof", "rb");
    cr_assert_not_null(f);
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

Test(cmd_geo, aof_gets_the_zadd_geoadd_did, .init = aof_setup, .fini = aof_teardown)
{
    harness_send(C, "GEOADD Sicily CH 13.361389 38.115556 Palermo");
    harness_send(C, "GEOADD Sicily NX 13.361389 38.115556 Palermo"); /* no change: not logged */
    harness_send(C, "GEOADD Sicily 200 0 bad");                      /* an error: not logged */
    harness_send(C, "GEORADIUS Sicily 13 38 100 km STORE dst");
    buf_clear(&C->out);
    const char *t = aof_text();
    const char *zadd = "*5\r\n$4\r\nzadd\r\n$6\r\nSicily\r\n$2\r\nCH\r\n$16\r\n"
                       "3479099956230698\r\n$7\r\nPalermo\r\n";
    cr_assert_not_null(strstr(t, zadd), "%s", harness_escaped(t, strlen(t)));
    cr_assert_null(strstr(t, "GEOADD"));
    cr_assert_null(strstr(t, "NX"));
    cr_assert_not_null(strstr(t, "$9\r\nGEORADIUS\r\n"));
}
