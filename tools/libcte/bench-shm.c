/* bench-shm.c - libcte over shared memory (cte-server) against hiredis over TCP (redis-server),
 * in the same run, rounds alternating between the two so a noisy machine affects both alike:
 *
 *   bench-shm --shm PATH --redis-port P [--rounds R] [--n N] [--depth D]
 *
 *   get-100B   synchronous GET of a 100-byte value: mean latency (us) of each
 *   get-4KiB   GETs of a 4 KiB value with D in flight: cte_command_async in a window of D over
 *              shm vs redisAppendCommandArgv keeping D appended over TCP: ops/s of each
 *
 * For each workload it prints the median over R rounds of N requests of each side and the
 * ratio (shm's advantage: Redis's latency / shm's, shm's ops/s / Redis's). Exit status 0, or 1
 * when a request fails. Single-threaded; links libcte and hiredis. */
#define _GNU_SOURCE
#include <cte/cte.h>
#include <hiredis/hiredis.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct bench_opts {
    const char *shm;
    int port, rounds, n, depth;
} bench_opts_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *who, const char *msg)
{
    fprintf(stderr, "bench-shm: %s: %s\n", who, msg);
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static void set_values(cte_conn_t *c, redisContext *h)
{
    static char v100[100], v4k[4096];
    memset(v100, 'a', sizeof v100);
    memset(v4k, 'b', sizeof v4k);
    const char *a100[] = {"SET", "bench:100", v100}, *a4k[] = {"SET", "bench:4k", v4k};
    size_t l100[] = {3, 9, sizeof v100}, l4k[] = {3, 8, sizeof v4k};
    cte_reply_t *r;
    if (cte_command(c, &r, 3, a100, l100) || cte_command(c, &r, 3, a4k, l4k))
        die("cte", cte_conn_errmsg(c));
    cte_reply_free(r);
    freeReplyObject(redisCommandArgv(h, 3, a100, l100));
    freeReplyObject(redisCommandArgv(h, 3, a4k, l4k));
}

/* Seconds for n synchronous GETs of key. */
static double cte_sync(cte_conn_t *c, const char *key, int n)
{
    const char *argv[] = {"GET", key};
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        cte_reply_t *r;
        if (cte_command(c, &r, 2, argv, NULL) != 0) die("cte", cte_conn_errmsg(c));
        cte_reply_free(r);
    }
    return now_s() - t0;
}

static double hiredis_sync(redisContext *h, const char *key, int n)
{
    const char *argv[] = {"GET", key};
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        redisReply *r = redisCommandArgv(h, 2, argv, NULL);
        if (!r || r->type != REDIS_REPLY_STRING) die("hiredis", h->errstr);
        freeReplyObject(r);
    }
    return now_s() - t0;
}

static int fails;

static void got(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    if (status != 0 || cte_reply_kind(r) != CTE_REPLY_BULK) fails++;
}

static double cte_depth(cte_conn_t *c, const char *key, int n, int depth)
{
    const char *argv[] = {"GET", key};
    double t0 = now_s();
    cte_conn_set_window(c, (unsigned)depth);
    for (int i = 0; i < n; i++)
        if (cte_command_async(c, 2, argv, NULL, got, NULL) != 0) die("cte", cte_conn_errmsg(c));
    if (cte_wait_all(c) != 0 || fails) die("cte", "an asynchronous GET failed");
    return now_s() - t0;
}

static double hiredis_depth(redisContext *h, const char *key, int n, int depth)
{
    const char *argv[] = {"GET", key};
    int sent = 0, done = 0;
    double t0 = now_s();
    while (done < n) {
        while (sent < n && sent - done < depth) {
            redisAppendCommandArgv(h, 2, argv, NULL);
            sent++;
        }
        redisReply *r;
        if (redisGetReply(h, (void **)&r) != REDIS_OK) die("hiredis", h->errstr);
        freeReplyObject(r);
        done++;
    }
    return now_s() - t0;
}

static void parse_opts(int argc, char **argv, bench_opts_t *o)
{
    *o = (bench_opts_t){NULL, 6379, 5, 20000, 8};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--shm"))
            o->shm = argv[i + 1];
        else if (!strcmp(argv[i], "--redis-port"))
            o->port = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds"))
            o->rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--n"))
            o->n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--depth"))
            o->depth = atoi(argv[i + 1]);
        else
            die("usage", "bench-shm --shm PATH --redis-port P [--rounds R] [--n N] [--depth D]");
    }
    if (!o->shm || o->rounds < 1 || o->rounds > 100 || o->n < 1 || o->depth < 1)
        die("usage", "bench-shm --shm PATH --redis-port P [--rounds R] [--n N] [--depth D]");
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    char addr[256];
    double a[100], b[100];
    cte_conn_t *c;
    parse_opts(argc, argv, &o);
    snprintf(addr, sizeof addr, "shm:%s", o.shm);
    if (cte_connect(addr, 0, &c) != 0) die("cte connect", addr);
    redisContext *h = redisConnect("127.0.0.1", o.port);
    if (!h || h->err) die("hiredis connect", h ? h->errstr : "?");
    set_values(c, h);
    for (int r = 0; r < o.rounds; r++) {
        a[r] = cte_sync(c, "bench:100", o.n) / o.n * 1e6;
        b[r] = hiredis_sync(h, "bench:100", o.n) / o.n * 1e6;
    }
    double ma = median(a, o.rounds), mb = median(b, o.rounds);
    printf("get-100B sync   shm %.2f us   redis-tcp %.2f us   latency ratio %.1fx\n", ma, mb,
           mb / ma);
    for (int r = 0; r < o.rounds; r++) {
        a[r] = o.n / cte_depth(c, "bench:4k", o.n, o.depth);
        b[r] = o.n / hiredis_depth(h, "bench:4k", o.n, o.depth);
    }
    ma = median(a, o.rounds);
    mb = median(b, o.rounds);
    printf("get-4KiB depth %d shm %.0f ops/s   redis-tcp %.0f ops/s   ratio %.2fx\n", o.depth, ma,
           mb, ma / mb);
    cte_conn_free(c);
    redisFree(h);
    return 0;
}
