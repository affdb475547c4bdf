/* bench-libcte.c - libcte's TCP path against hiredis (Debian's 0.14) on the same server, in
 * the same run, rounds interleaved so that a noisy machine affects both alike:
 *
 *   bench-libcte [--host H] [--port P] [--rounds R] [--n N] [--depth D]
 *
 *   get-100B    synchronous GET of a 100-byte value: cte_call vs redisCommandArgv
 *   tget-1MiB   synchronous TGET of a 1 MiB blob: cte_get into a buffer vs redisCommandArgv
 *               (N/50 requests a round)
 *   put-4KiB    4 KiB TPUTs with D in flight: cte_put_async in a window of D vs
 *               redisAppendCommandArgv keeping D appended before each redisGetReply
 *
 * For each workload it prints the median ops/s of each client over R rounds of N requests, the
 * ratio libcte/hiredis (>= 1.0: libcte is at least as fast) and each client's own CPU time
 * per request (thread CPU clock), which the noise of a shared machine disturbs less. Exit status 0,
 * or 1 when a request fails (the first error is printed). Single-threaded; links libcte and
 * hiredis. */
#define _GNU_SOURCE
#include <cte/cte.h>
#include <hiredis/hiredis.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct bench_opts {
    const char *host;
    int port, rounds, n, depth;
} bench_opts_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The client's CPU time per request of the last measurement, in microseconds. */
static double last_cpu_us;
static double cpu_t0;

static void cpu_start(void)
{
    cpu_t0 = cpu_s();
}

static void cpu_stop(int n)
{
    last_cpu_us = (cpu_s() - cpu_t0) * 1e6 / n;
}

static void die(const char *what, const char *why)
{
    fprintf(stderr, "bench-libcte: %s: %s\n", what, why);
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
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- get-100B ---- */

static double libcte_get(cte_conn_t *c, int n)
{
    const char *argv[] = {"GET", "bench:100"};
    double t0 = now_s();
    cpu_start();
    for (int i = 0; i < n; i++) {
        cte_reply_t *r;
        int rc = cte_command(c, &r, 2, argv, NULL);
        if (rc || cte_reply_kind(r) != CTE_REPLY_BULK) die("libcte GET", cte_strerror(rc));
        cte_reply_free(r);
    }
    cpu_stop(n);
    return n / (now_s() - t0);
}

static double hiredis_get(redisContext *h, int n)
{
    const char *argv[] = {"GET", "bench:100"};
    double t0 = now_s();
    cpu_start();
    for (int i = 0; i < n; i++) {
        redisReply *r = redisCommandArgv(h, 2, argv, NULL);
        if (!r || r->type != REDIS_REPLY_STRING) die("hiredis GET", h->errstr);
        freeReplyObject(r);
    }
    cpu_stop(n);
    return n / (now_s() - t0);
}

/* ---- tget-1MiB ---- */

#define BIG (1u << 20)
static char big_out[BIG];

static double libcte_tget(cte_conn_t *c, int n)
{
    size_t len;
    double t0 = now_s();
    cpu_start();
    for (int i = 0; i < n; i++) {
        int rc = cte_get(c, "bench", "big", 0, -1, big_out, BIG, &len);
        if (rc || len != BIG) die("libcte TGET", cte_strerror(rc));
    }
    cpu_stop(n);
    return n / (now_s() - t0);
}

static double hiredis_tget(redisContext *h, int n)
{
    const char *argv[] = {"TGET", "bench", "big"};
    double t0 = now_s();
    cpu_start();
    for (int i = 0; i < n; i++) {
        redisReply *r = redisCommandArgv(h, 3, argv, NULL);
        if (!r || r->type != REDIS_REPLY_STRING || r->len != BIG) die("hiredis TGET", h->errstr);
        memcpy(big_out, r->str, BIG); /* into the caller's buffer, as cte_get delivers it */
        freeReplyObject(r);
    }
    cpu_stop(n);
    return n / (now_s() - t0);
}

/* ---- put-4KiB ---- */

static char value4k[4096];
static int put_failures;

static void put_done(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    if (status) put_failures++;
}

static double libcte_put(cte_conn_t *c, int n, int depth)
{
    char name[32];
    double t0 = now_s();
    cpu_start();
    cte_conn_set_window(c, (unsigned)depth);
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "b%d", i % 1000);
        int rc = cte_put_async(c, "bench", name, 0, value4k, sizeof value4k, -1, put_done, NULL);
        if (rc) die("libcte TPUT", cte_strerror(rc));
    }
    int rc = cte_wait_all(c);
    if (rc || put_failures) die("libcte TPUT", rc ? cte_strerror(rc) : cte_conn_errmsg(c));
    cpu_stop(n);
    return n / (now_s() - t0);
}

static void hiredis_reply(redisContext *h)
{
    redisReply *r;
    if (redisGetReply(h, (void **)&r) != REDIS_OK || r->type != REDIS_REPLY_INTEGER)
        die("hiredis TPUT", r && r->str ? r->str : h->errstr);
    freeReplyObject(r);
}

static double hiredis_put(redisContext *h, int n, int depth)
{
    char name[32];
    const char *argv[5] = {"TPUT", "bench", name, "0", value4k};
    size_t lens[5] = {4, 5, 0, 1, sizeof value4k};
    int inflight = 0;
    double t0 = now_s();
    cpu_start();
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "b%d", i % 1000);
        lens[2] = strlen(name);
        if (redisAppendCommandArgv(h, 5, argv, lens) != REDIS_OK) die("hiredis", h->errstr);
        if (++inflight == depth) {
            hiredis_reply(h);
            inflight--;
        }
    }
    while (inflight--) hiredis_reply(h);
    cpu_stop(n);
    return n / (now_s() - t0);
}

static void parse_opts(int argc, char **argv, bench_opts_t *o)
{
    *o = (bench_opts_t){"127.0.0.1", 6379, 5, 20000, 64};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--host"))
            o->host = argv[i + 1];
        else if (!strcmp(argv[i], "--port"))
            o->port = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds"))
            o->rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--n"))
            o->n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--depth"))
            o->depth = atoi(argv[i + 1]);
        else
            die("usage", "bench-libcte [--host H] [--port P] [--rounds R] [--n N] [--depth D]");
    }
    if (o->rounds < 1 || o->rounds > 100 || o->n < 1 || o->depth < 1) die("usage", "bad value");
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    char addr[300], v100[101];
    cte_conn_t *c;
    cte_reply_t *r;

    parse_opts(argc, argv, &o);
    snprintf(addr, sizeof addr, "tcp://%s:%d", o.host, o.port);
    int rc = cte_connect(addr, 0, &c);
    if (rc) die(addr, cte_strerror(rc));
    redisContext *h = redisConnect(o.host, o.port);
    if (!h || h->err) die("hiredis connect", h ? h->errstr : "out of memory");
    memset(v100, 'v', 100);
    v100[100] = '\0';
    memset(value4k, 'p', sizeof value4k);
    if (cte_call(c, &r, "SET", "bench:100", v100, NULL) != 0) die("SET", cte_conn_errmsg(c));
    cte_reply_free(r);
    memset(big_out, 'g', BIG);
    if (cte_put(c, "bench", "big", 0, big_out, BIG, -1, NULL) != 0) die("TPUT", cte_conn_errmsg(c));
    int nbig = o.n / 50 > 0 ? o.n / 50 : 1;
    double *g = calloc((size_t)o.rounds * 4, sizeof *g), *gh = g + o.rounds, *cg = gh + o.rounds,
           *cgh = cg + o.rounds;

    double *a = calloc((size_t)o.rounds * 8, sizeof *a), *b = a + o.rounds, *p = b + o.rounds,
           *q = p + o.rounds, *ca = q + o.rounds, *cb = ca + o.rounds, *cp = cb + o.rounds,
           *cq = cp + o.rounds;
    libcte_get(c, o.n / 10 + 1); /* warm up both */
    hiredis_get(h, o.n / 10 + 1);
    for (int i = 0; i < o.rounds; i++) {
        a[i] = libcte_get(c, o.n);
        ca[i] = last_cpu_us;
        b[i] = hiredis_get(h, o.n);
        cb[i] = last_cpu_us;
        p[i] = libcte_put(c, o.n, o.depth);
        cp[i] = last_cpu_us;
        q[i] = hiredis_put(h, o.n, o.depth);
        cq[i] = last_cpu_us;
        g[i] = libcte_tget(c, nbig);
        cg[i] = last_cpu_us;
        gh[i] = hiredis_tget(h, nbig);
        cgh[i] = last_cpu_us;
    }
    double ma = median(a, o.rounds), mb = median(b, o.rounds), mp = median(p, o.rounds),
           mq = median(q, o.rounds);
    printf("get-100B sync:     libcte %.0f ops/s  hiredis %.0f ops/s  ratio %.2fx"
           "  (client CPU %.2f vs %.2f us/op)\n",
           ma, mb, ma / mb, median(ca, o.rounds), median(cb, o.rounds));
    printf("put-4KiB depth %-3d libcte %.0f ops/s  hiredis %.0f ops/s  ratio %.2fx"
           "  (client CPU %.2f vs %.2f us/op)\n",
           o.depth, mp, mq, mp / mq, median(cp, o.rounds), median(cq, o.rounds));
    double mg = median(g, o.rounds), mgh = median(gh, o.rounds);
    printf("tget-1MiB sync:    libcte %.0f ops/s  hiredis %.0f ops/s  ratio %.2fx"
           "  (client CPU %.2f vs %.2f us/op)\n",
           mg, mgh, mg / mgh, median(cg, o.rounds), median(cgh, o.rounds));
    free(g);
    free(a);
    cte_conn_free(c);
    redisFree(h);
    return 0;
}
