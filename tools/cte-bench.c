/* cte-bench.c - a load generator for cte-server and any other Redis-protocol server, on libcte.
 *
 *   cte-bench --uri tcp://HOST:PORT     TPUT bench b<n> 0 <value> [score]
 *                                       / TGET bench b<n> 0 <size>
 *   cte-bench --uri unix:PATH           the same TPUT/TGET over a Unix socket
 *   cte-bench --uri shm:PATH            the same over shared memory (PATH: the Unix socket)
 *   cte-bench --uri redis://HOST:PORT   SET key:<n> <value> / GET key:<n> over TCP
 *   cte-bench --uri redis+unix:PATH     SET/GET over a Unix socket (redis+shm:PATH: over shm)
 *   cte-bench --memcpy                  memcpy of --size bytes per operation, no server
 *
 * Every address is handed to libcte as it is (redis:// becomes tcp://, redis+unix: unix:,
 * redis+shm: shm:), so options such as tcp://:pass@host:port/2 or unix:PATH?db=3 work too.
 * Each of --threads threads owns one connection with libcte's window set to --depth and keeps
 * that many asynchronous requests in flight: a request's completion callback checks the reply
 * and queues the next request in the same slot, and the thread drives its connection with
 * cte_wait_all until its share of the phase is done (no timeout inside libcte, so a reply is one
 * send and one blocking receive; the progress thread is the watchdog instead). A request is
 * timestamped just before it is queued and again when its callback runs; the difference goes
 * into the thread's latency histogram, and the histograms are merged at the end. A get's value
 * is compared byte for byte with the value the puts write, wherever libcte leaves it (its read
 * buffer, or the shm segment), so every byte really reaches the client. A TGET asks for --size
 * bytes, since a TPUT at offset 0 leaves a longer blob of an earlier run as long as it was. For
 * --op get the keys are loaded first (unmeasured) unless --no-load.
 *
 * --memcpy measures the limit of a one-copy path instead: each thread copies --size bytes per
 * operation from its source buffer to its destination buffer, rotating through 64 MiB of each
 * (at least two values), so neither sits in the caches; every copy is timed like a request.
 *
 * Output: at most one progress line a second on stderr while stderr is a terminal, then exactly
 * one line on stdout: `ops/s=<n> MB/s=<n> avg_us=<n> p99_us=<n>` (MB = 10^6 bytes of values
 * sent by puts, received by gets, or copied). Exit status: 0 on success, 1 on an error reply, a
 * connection or protocol error, a timeout, or a get that found no value or a wrong one, 2 on
 * usage errors (a malformed --uri included). The first error is printed on stderr.
 *
 * Threads: main parses options, connects, starts the workers for each phase and the progress
 * and watchdog thread, and merges results; each connection is used by one worker at a time;
 * workers touch only their own worker_t plus the shared stop flag and first-error slot (under a
 * mutex). This file links libcte only (the static cte_client target), never hiredis or the
 * server. */
#define _GNU_SOURCE
#include <cte/cte.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define BENCH_TAG "bench"
#define BENCH_MAX_DEPTH 4096
#define BENCH_MAX_THREADS 1024
#define BENCH_ADDR_MAX 1024
#define BENCH_COPY_REGION (64u << 20) /* --memcpy: bytes of each source and destination buffer */

/* ---- options ---- */

enum bench_proto { PROTO_REDIS, PROTO_CTE, PROTO_MEMCPY };
enum bench_op { OP_PUT, OP_GET };

typedef struct {
    enum bench_proto proto;
    char addr[BENCH_ADDR_MAX]; /* libcte's address */
    const char *uri;           /* as given */
    enum bench_op op;
    int threads;
    int depth;
    size_t size;
    uint64_t count;
    double seconds; /* > 0: the measured phase runs this long instead of count requests */
    bool count_set;
    uint64_t keys;
    bool random;
    bool no_load;
    bool quiet;
    double score;   /* < 0: TPUT without a score */
    double timeout; /* seconds without a reply before the run fails */
    uint64_t seed;
} bench_opts_t;

/* ---- latency histogram: log-linear over nanoseconds, 1/64 relative precision ---- */

#define HIST_SUB_BITS 6
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS ((64 - HIST_SUB_BITS - 1) * HIST_SUB + 2 * HIST_SUB)

typedef struct {
    uint64_t n[HIST_BUCKETS];
    uint64_t count;
    uint64_t sum_ns;
    uint64_t max_ns;
} bench_hist_t;

/* Values below 2*HIST_SUB have a bucket each; above, each power of two has HIST_SUB buckets. */
static unsigned hist_index(uint64_t v)
{
    if (v < 2 * HIST_SUB) return (unsigned)v;
    unsigned e = 63 - (unsigned)__builtin_clzll(v);
    unsigned k = e - HIST_SUB_BITS;
    return k * HIST_SUB + (unsigned)(v >> k);
}

/* The middle of bucket i, in nanoseconds. */
static double hist_value(unsigned i)
{
    if (i < 2 * HIST_SUB) return i;
    unsigned k = i / HIST_SUB - 1;
    uint64_t low = (uint64_t)(i - k * HIST_SUB) << k;
    return (double)low + (double)((uint64_t)1 << k) / 2.0;
}

static void hist_add(bench_hist_t *h, uint64_t ns)
{
    h->n[hist_index(ns)]++;
    h->count++;
    h->sum_ns += ns;
    if (ns > h->max_ns) h->max_ns = ns;
}

static void hist_merge(bench_hist_t *into, const bench_hist_t *from)
{
    for (unsigned i = 0; i < HIST_BUCKETS; i++) into->n[i] += from->n[i];
    into->count += from->count;
    into->sum_ns += from->sum_ns;
    if (from->max_ns > into->max_ns) into->max_ns = from->max_ns;
}

/* The value at quantile q in (0, 1], in nanoseconds; 0 for an empty histogram. */
static double hist_quantile(const bench_hist_t *h, double q)
{
    if (h->count == 0) return 0;
    uint64_t want = (uint64_t)((double)h->count * q + 0.999999);
    if (want < 1) want = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        seen += h->n[i];
        if (seen >= want) {
            double v = hist_value(i);
            return v > (double)h->max_ns ? (double)h->max_ns : v;
        }
    }
    return (double)h->max_ns;
}

/* ---- shared state ---- */

static atomic_bool stop_all;
static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
static char first_err[1024];

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Records the first error of the run (later ones are dropped) and stops every thread. */
static void bench_fail(const char *fmt, ...)
{
    pthread_mutex_lock(&err_lock);
    if (!first_err[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(first_err, sizeof first_err, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&err_lock);
    atomic_store(&stop_all, true);
}

/* ---- workers ---- */

struct bench_worker;

/* One request in flight: its slot stays the callback's ud until the callback has run. */
typedef struct {
    struct bench_worker *w;
    uint64_t key;
    uint64_t sent_ns;
    char name[32]; /* b<n> or key:<n>, NUL-terminated */
    size_t name_len;
} bench_slot_t;

typedef struct bench_worker {
    int id;
    const bench_opts_t *o;
    cte_conn_t *c;       /* NULL with --memcpy */
    const char *value;   /* o->size bytes, shared read-only by all workers */
    bench_slot_t *slots; /* o->depth of them */
    char *src, *dst;     /* --memcpy: nbuf values each */
    size_t nbuf;
    uint64_t rng;
    /* the current phase */
    enum bench_op op;
    uint64_t nops; /* requests to issue; UINT64_MAX with a deadline */
    uint64_t deadline_ns;
    bool randomize;
    bool measure;
    uint64_t issued;
    /* results of the current phase */
    bench_hist_t hist;
    uint64_t bytes;
    uint64_t misses;
    uint64_t mismatches;
    uint64_t t_start;
    uint64_t t_end;
    _Atomic uint64_t done;    /* completed requests (progress) */
    _Atomic uint64_t last_ns; /* when the last one completed (watchdog) */
    atomic_bool finished;
} bench_worker_t;

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static const char *op_name(const bench_worker_t *w)
{
    if (w->o->proto == PROTO_CTE) return w->op == OP_PUT ? "TPUT" : "TGET";
    return w->op == OP_PUT ? "SET" : "GET";
}

/* Server text is echoed into messages: our binary values become dots. */
static void printable(char *dst, size_t cap, const char *s, size_t len)
{
    size_t n = len < cap - 1 ? len : cap - 1;
    for (size_t i = 0; i < n; i++) dst[i] = s[i] < 0x20 || s[i] > 0x7e ? '.' : s[i];
    dst[n] = 0;
}

static void fail_reply(bench_worker_t *w, const bench_slot_t *s, const char *what,
                       const cte_reply_t *r)
{
    char text[200];
    size_t len = 0;
    const char *str = cte_reply_str(r, &len);
    switch (cte_reply_kind(r)) {
    case CTE_REPLY_ERROR:
    case CTE_REPLY_STRING:
        printable(text, sizeof text, str, len);
        break;
    case CTE_REPLY_INTEGER:
        snprintf(text, sizeof text, "(integer) %lld", cte_reply_int(r));
        break;
    case CTE_REPLY_NULL:
        snprintf(text, sizeof text, "(nil)");
        break;
    case CTE_REPLY_BULK:
        snprintf(text, sizeof text, "a bulk string of %zu bytes", len);
        break;
    default:
        snprintf(text, sizeof text, "a reply of kind %d", (int)cte_reply_kind(r));
    }
    bench_fail("%s reply to %s %s: %s", what, op_name(w), s->name, text);
}

/* Checks one reply against its request and counts it. 0, or -1 after bench_fail. */
static int check_reply(bench_worker_t *w, const bench_slot_t *s, const cte_reply_t *r)
{
    const bench_opts_t *o = w->o;
    cte_reply_kind_t k = cte_reply_kind(r);
    if (k == CTE_REPLY_ERROR) {
        fail_reply(w, s, "error", r);
        return -1;
    }
    if (w->op == OP_PUT) {
        const char *str = cte_reply_str(r, NULL);
        bool ok = o->proto == PROTO_REDIS
                      ? k == CTE_REPLY_STRING && !strcmp(str, "OK")
                      : k == CTE_REPLY_INTEGER && cte_reply_int(r) >= (long long)o->size;
        if (!ok) {
            fail_reply(w, s, "unexpected", r);
            return -1;
        }
        w->bytes += o->size;
        return 0;
    }
    if (k == CTE_REPLY_NULL) {
        w->misses++;
        return 0;
    }
    if (k != CTE_REPLY_BULK) {
        fail_reply(w, s, "unexpected", r);
        return -1;
    }
    size_t len;
    const char *data = cte_reply_str(r, &len);
    w->bytes += len;
    if (len != o->size || memcmp(data, w->value, len) != 0) w->mismatches++;
    return 0;
}

/* "<status text>" or "<status text> (<the connection's message>)" into buf. */
static const char *status_text(char *buf, size_t cap, int rc, const cte_conn_t *c)
{
    const char *e = cte_strerror(rc), *m = c ? cte_conn_errmsg(c) : "";
    if (*m && strcmp(m, e))
        snprintf(buf, cap, "%s (%s)", e, m);
    else
        snprintf(buf, cap, "%s", e);
    return buf;
}

static void on_done(cte_conn_t *c, int status, const cte_reply_t *r, void *ud);

/* prefix and the decimal key into out (32 bytes); its length. No printf: this runs per request. */
static size_t key_name(char *out, const char *prefix, uint64_t key)
{
    char digits[20], *p = digits + sizeof digits;
    do *--p = (char)('0' + key % 10);
    while (key /= 10);
    size_t plen = strlen(prefix), dlen = (size_t)(digits + sizeof digits - p);
    memcpy(out, prefix, plen);
    memcpy(out + plen, p, dlen);
    out[plen + dlen] = 0;
    return plen + dlen;
}

/* Queues the phase's next request in slot s, unless the phase is over. 1 when queued, 0 when
 * nothing is left to do, -1 after bench_fail. */
static int issue(bench_worker_t *w, bench_slot_t *s)
{
    const bench_opts_t *o = w->o;
    if (w->issued >= w->nops || atomic_load_explicit(&stop_all, memory_order_relaxed)) return 0;
    uint64_t g = (uint64_t)w->id + w->issued * (uint64_t)o->threads;
    s->key = w->randomize ? rng_next(&w->rng) % o->keys : g % o->keys;
    s->name_len = key_name(s->name, o->proto == PROTO_CTE ? "b" : "key:", s->key);
    uint64_t t = now_ns();
    if (w->deadline_ns && t >= w->deadline_ns) return 0;
    w->issued++;
    s->sent_ns = t;
    int rc;
    if (o->proto == PROTO_CTE && w->op == OP_PUT)
        rc = cte_put_async(w->c, BENCH_TAG, s->name, 0, w->value, o->size, o->score, on_done, s);
    else if (o->proto == PROTO_CTE)
        rc = cte_get_async(w->c, BENCH_TAG, s->name, 0, (int64_t)o->size, on_done, s);
    else {
        const char *argv[3] = {w->op == OP_PUT ? "SET" : "GET", s->name, w->value};
        size_t lens[3] = {3, s->name_len, o->size};
        rc = cte_command_async(w->c, w->op == OP_PUT ? 3 : 2, argv, lens, on_done, s);
    }
    if (rc) {
        char why[700];
        bench_fail("thread %d: %s %s: %s", w->id, op_name(w), s->name,
                   status_text(why, sizeof why, rc, w->c));
        return -1;
    }
    return 1;
}

/* A request completed: time it, check it, and queue the next one in its slot. */
static void on_done(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    bench_slot_t *s = ud;
    bench_worker_t *w = s->w;
    uint64_t t = now_ns();
    if (!r) {
        char why[700];
        bench_fail("thread %d: %s %s: %s", w->id, op_name(w), s->name,
                   status_text(why, sizeof why, status, c));
        return;
    }
    if (w->measure) hist_add(&w->hist, t - s->sent_ns);
    if (check_reply(w, s, r) < 0) return;
    atomic_store_explicit(&w->done, atomic_load_explicit(&w->done, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&w->last_ns, t, memory_order_relaxed);
    issue(w, s);
}

/* One phase over the thread's connection: fills the window, then drives the connection until
 * the callbacks have nothing left to queue. */
static void net_phase(bench_worker_t *w)
{
    for (int d = 0; d < w->o->depth; d++)
        if (issue(w, &w->slots[d]) <= 0) break;
    int rc = cte_wait_all(w->c);
    char why[700];
    if (rc < 0)
        bench_fail("thread %d: %s: %s", w->id, op_name(w), status_text(why, sizeof why, rc, w->c));
}

/* One phase of --memcpy: copies value i of the source ring to value i of the destination. */
static void copy_phase(bench_worker_t *w)
{
    size_t size = w->o->size;
    uint64_t t = now_ns(), i = 0;
    for (; i < w->nops && !atomic_load_explicit(&stop_all, memory_order_relaxed); i++) {
        if (w->deadline_ns && t >= w->deadline_ns) break;
        char *d = w->dst + (size_t)(i % w->nbuf) * size;
        memcpy(d, w->src + (size_t)(i % w->nbuf) * size, size);
        __asm__ volatile("" : : "r"(d) : "memory"); /* the copy is observable: never elided */
        uint64_t t2 = now_ns();
        hist_add(&w->hist, t2 - t);
        t = t2;
        w->bytes += size;
        atomic_store_explicit(&w->done, i + 1, memory_order_relaxed);
        atomic_store_explicit(&w->last_ns, t, memory_order_relaxed);
    }
}

static void *worker_main(void *arg)
{
    bench_worker_t *w = arg;
    w->t_start = now_ns();
    atomic_store(&w->last_ns, w->t_start);
    if (w->c)
        net_phase(w);
    else
        copy_phase(w);
    w->t_end = now_ns();
    atomic_store(&w->finished, true);
    return NULL;
}

/* ---- progress and watchdog ---- */

typedef struct {
    bench_worker_t *w;
    int n;
    const char *label;
    uint64_t total; /* 0: the phase runs for a time */
    size_t size;
    double timeout;
    bool show;
    atomic_bool stop;
    bool shown;
} bench_progress_t;

static uint64_t progress_done(bench_progress_t *p)
{
    uint64_t d = 0;
    for (int i = 0; i < p->n; i++) d += atomic_load_explicit(&p->w[i].done, memory_order_relaxed);
    return d;
}

/* A worker that has waited longer than --timeout for a reply ends the process: libcte blocks
 * without a timeout in the measured loop, so nothing else could interrupt it. */
static void watchdog(bench_progress_t *p, uint64_t t)
{
    for (int i = 0; i < p->n; i++) {
        bench_worker_t *w = &p->w[i];
        uint64_t last = atomic_load_explicit(&w->last_ns, memory_order_relaxed);
        if (atomic_load(&w->finished) || !last || last >= t) continue;
        if ((double)(t - last) < p->timeout * 1e9) continue;
        if (p->shown) fputs("\r\033[K", stderr);
        fprintf(stderr, "cte-bench: thread %d: timed out: no reply for %.0f s\n", i, p->timeout);
        _exit(1);
    }
}

static void *progress_main(void *arg)
{
    bench_progress_t *p = arg;
    uint64_t last = 0, t_last = now_ns(), t0 = t_last;
    while (!atomic_load(&p->stop)) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        uint64_t t = now_ns();
        watchdog(p, t);
        if (!p->show || t - t_last < 1000000000u) continue;
        uint64_t d = progress_done(p);
        double rate = (double)(d - last) * 1e9 / (double)(t - t_last);
        char total[32] = "";
        if (p->total) snprintf(total, sizeof total, "/%" PRIu64, p->total);
        fprintf(stderr, "\r%s: %" PRIu64 "%s ops, %.0f ops/s, %.1f MB/s, %.0fs\033[K", p->label, d,
                total, rate, rate * (double)p->size / 1e6, (t - t0) / 1e9);
        p->shown = true;
        last = d;
        t_last = t;
    }
    if (p->shown) fputs("\r\033[K", stderr);
    return NULL;
}

/* ---- phases ---- */

/* Runs one phase on every worker (each with its share of count requests, or for secs seconds
 * when secs > 0) and waits for it. 0, or -1 when a thread could not start or a request failed. */
static int run_phase(bench_worker_t *ws, const bench_opts_t *o, enum bench_op op, uint64_t count,
                     double secs, bool randomize, bool measure, const char *label)
{
    pthread_t tid[o->threads];
    uint64_t deadline = secs > 0 ? now_ns() + (uint64_t)(secs * 1e9) : 0;
    for (int i = 0; i < o->threads; i++) {
        bench_worker_t *w = &ws[i];
        w->op = op;
        w->nops = deadline
                      ? UINT64_MAX
                      : count / (uint64_t)o->threads + ((uint64_t)i < count % (uint64_t)o->threads);
        w->deadline_ns = deadline;
        w->randomize = randomize;
        w->measure = measure;
        w->issued = 0;
        memset(&w->hist, 0, sizeof w->hist);
        w->bytes = w->misses = w->mismatches = 0;
        atomic_store(&w->done, 0);
        atomic_store(&w->last_ns, 0);
        atomic_store(&w->finished, false);
    }
    bench_progress_t prog = {.w = ws,
                             .n = o->threads,
                             .label = label,
                             .total = deadline ? 0 : count,
                             .size = o->size,
                             .timeout = o->timeout,
                             .show = !o->quiet && isatty(2)};
    pthread_t ptid;
    bool watching = pthread_create(&ptid, NULL, progress_main, &prog) == 0;
    int started = 0;
    for (; started < o->threads; started++)
        if (pthread_create(&tid[started], NULL, worker_main, &ws[started])) {
            bench_fail("cannot start thread %d", started);
            break;
        }
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
    if (watching) {
        atomic_store(&prog.stop, true);
        pthread_join(ptid, NULL);
    }
    return atomic_load(&stop_all) ? -1 : 0;
}

/* Merges the workers' results of the measured phase and prints the result line; *missing is
 * set when a get found no value or a wrong one. */
static void report(const bench_worker_t *ws, const bench_opts_t *o, bool *missing)
{
    static bench_hist_t h; /* once per process; static because it is 30 KB */
    uint64_t t0 = UINT64_MAX, t1 = 0, bytes = 0, misses = 0, mism = 0;
    for (int i = 0; i < o->threads; i++) {
        hist_merge(&h, &ws[i].hist);
        if (ws[i].t_start < t0) t0 = ws[i].t_start;
        if (ws[i].t_end > t1) t1 = ws[i].t_end;
        bytes += ws[i].bytes;
        misses += ws[i].misses;
        mism += ws[i].mismatches;
    }
    double secs = t1 > t0 ? (double)(t1 - t0) / 1e9 : 1e-9;
    double avg = h.count ? (double)h.sum_ns / (double)h.count / 1e3 : 0;
    if (misses) fprintf(stderr, "cte-bench: %" PRIu64 " gets found no value\n", misses);
    if (mism)
        fprintf(stderr,
                "cte-bench: %" PRIu64 " gets returned a value of the wrong size or contents\n",
                mism);
    if (!o->quiet)
        fprintf(stderr, "cte-bench: %" PRIu64 " ops in %.2fs, %d threads x depth %d, max %.0f us\n",
                h.count, secs, o->threads, o->proto == PROTO_MEMCPY ? 1 : o->depth,
                (double)h.max_ns / 1e3);
    printf("ops/s=%.0f MB/s=%.1f avg_us=%.1f p99_us=%.1f\n", (double)h.count / secs,
           (double)bytes / secs / 1e6, avg, hist_quantile(&h, 0.99) / 1e3);
    fflush(stdout);
    *missing = misses > 0 || mism > 0;
}

/* ---- setup ---- */

static void usage(FILE *f)
{
    fputs("usage: cte-bench [options]\n"
          "  --uri URI       tcp://HOST:PORT     TPUT/TGET bench b<n> against cte-server\n"
          "                  unix:PATH           TPUT/TGET over a Unix socket\n"
          "                  shm:PATH            TPUT/TGET over shared memory (PATH: the socket)\n"
          "                  redis://HOST:PORT   SET/GET key:<n> (any Redis-protocol server)\n"
          "                  redis+unix:PATH     SET/GET over a Unix socket\n"
          "                  redis+shm:PATH      SET/GET over shared memory (cte-server)\n"
          "                  (default redis://127.0.0.1:6379; libcte's options such as\n"
          "                  tcp://:PASS@HOST:PORT/DB or unix:PATH?db=N work too)\n"
          "  --memcpy        no server: each thread copies --size bytes per op between\n"
          "                  64 MiB buffers (the memory's copy bandwidth; --depth ignored)\n"
          "  --op put|get    put = SET/TPUT, get = GET/TGET (default put)\n"
          "  --threads N     connections, one thread each (default 1)\n"
          "  --depth D       requests in flight per connection (default 1)\n"
          "  --size BYTES    value size; suffixes k, m, g (default 4k)\n"
          "  --count N       total operations (default 100000)\n"
          "  --seconds S     run the measured phase for S seconds instead of --count\n"
          "  --keys K        key space (default 10000)\n"
          "  --random        pick keys at random (default: round-robin)\n"
          "  --seed N        seed of --random (default: from the clock)\n"
          "  --score S       score argument of TPUT, 0..1 (default: none)\n"
          "  --no-load       get: do not load the keys first (they must exist)\n"
          "  --verify        accepted for old scripts: every get is compared in full\n"
          "  --timeout SECS  longest wait for a reply (default 60)\n"
          "  --quiet         no progress or summary on stderr (errors still)\n"
          "output: ops/s=<n> MB/s=<n> avg_us=<n> p99_us=<n> on stdout (MB = 10^6 bytes)\n"
          "exit: 0 ok, 1 error reply, connection error, timeout, missing or wrong value, 2 usage\n",
          f);
}

/* Parses "4096", "4k", "64KiB", "1m", "1g": 0 with *out set, -1 if malformed. */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-') return -1;
    uint64_t mul = 1;
    const char *unit = *end ? strchr("kmg", *end | 0x20) : NULL;
    if (unit) {
        mul = 1ull << (10 * (unit - "kmg" + 1));
        end++;
    }
    if (!strcasecmp(end, "ib") && unit)
        end += 2;
    else if ((*end | 0x20) == 'b')
        end++;
    if (*end) return -1;
    if (v > UINT64_MAX / mul) return -1;
    *out = v * mul;
    return 0;
}

static int parse_count(const char *s, uint64_t *out, uint64_t min)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || v < min) return -1;
    *out = v;
    return 0;
}

/* A positive number of seconds, at most a day: 0 with *out set, or -1. */
static int parse_seconds(const char *s, double *out)
{
    char *end;
    double d = strtod(s, &end);
    if (end == s || *end || !(d > 0 && d <= 86400)) return -1;
    *out = d;
    return 0;
}

/* Maps --uri onto the protocol and libcte's address. 0, or -1 for an unknown scheme, an empty
 * address or one too long; libcte checks the rest when connecting. */
static int parse_uri(const char *u, bench_opts_t *o)
{
    static const struct {
        const char *scheme, *as;
        enum bench_proto proto;
    } map[] = {{"redis://", "tcp://", PROTO_REDIS}, {"redis+unix:", "unix:", PROTO_REDIS},
               {"redis+shm:", "shm:", PROTO_REDIS}, {"tcp://", "tcp://", PROTO_CTE},
               {"unix:", "unix:", PROTO_CTE},       {"shm:", "shm:", PROTO_CTE}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        size_t n = strlen(map[i].scheme);
        if (strncmp(u, map[i].scheme, n)) continue;
        const char *rest = u + n;
        if (!*rest || !strcmp(rest, "//")) return -1;
        if (snprintf(o->addr, sizeof o->addr, "%s%s", map[i].as, rest) >= (int)sizeof o->addr)
            return -1;
        o->proto = map[i].proto;
        o->uri = u;
        return 0;
    }
    return -1;
}

static int bad_option(const char *name, const char *val)
{
    fprintf(stderr, "cte-bench: bad value for --%s: '%s'%s\n", name, val,
            strcmp(name, "uri") ? ""
                                : " (tcp://H:P, unix:PATH, shm:PATH, redis://H:P, "
                                  "redis+unix:PATH or redis+shm:PATH)");
    return -1;
}

/* Applies one long option with a value; 0 or -1 (message printed). */
static int apply_option(bench_opts_t *o, const char *name, const char *v)
{
    uint64_t n;
    if (!strcmp(name, "uri")) return parse_uri(v, o) ? bad_option(name, v) : 0;
    if (!strcmp(name, "op")) {
        if (strcmp(v, "put") && strcmp(v, "get")) return bad_option(name, v);
        o->op = strcmp(v, "put") ? OP_GET : OP_PUT;
    } else if (!strcmp(name, "threads")) {
        if (parse_count(v, &n, 1) || n > BENCH_MAX_THREADS) return bad_option(name, v);
        o->threads = (int)n;
    } else if (!strcmp(name, "depth")) {
        if (parse_count(v, &n, 1) || n > BENCH_MAX_DEPTH) return bad_option(name, v);
        o->depth = (int)n;
    } else if (!strcmp(name, "size")) {
        if (parse_size(v, &n) || n > SIZE_MAX / 4) return bad_option(name, v);
        o->size = (size_t)n;
    } else if (!strcmp(name, "count")) {
        if (parse_count(v, &o->count, 1)) return bad_option(name, v);
        o->count_set = true;
    } else if (!strcmp(name, "seconds")) {
        if (parse_seconds(v, &o->seconds)) return bad_option(name, v);
    } else if (!strcmp(name, "keys")) {
        if (parse_count(v, &o->keys, 1)) return bad_option(name, v);
    } else if (!strcmp(name, "seed")) {
        if (parse_count(v, &o->seed, 0)) return bad_option(name, v);
    } else if (!strcmp(name, "score")) {
        char *end;
        double d = strtod(v, &end);
        if (end == v || *end || !(d >= 0 && d <= 1)) return bad_option(name, v);
        o->score = d;
    } else if (!strcmp(name, "timeout")) {
        if (parse_seconds(v, &o->timeout)) return bad_option(name, v);
    }
    return 0;
}

/* Fills o from argv. 0 to run, 1 after --help, -1 on a usage error (message printed). */
static int parse_args(int argc, char **argv, bench_opts_t *o)
{
    static const struct option longopts[] = {
        {"uri", 1, 0, 0},       {"op", 1, 0, 0},       {"threads", 1, 0, 0},  {"depth", 1, 0, 0},
        {"size", 1, 0, 0},      {"count", 1, 0, 0},    {"seconds", 1, 0, 0},  {"keys", 1, 0, 0},
        {"score", 1, 0, 0},     {"seed", 1, 0, 0},     {"timeout", 1, 0, 0},  {"random", 0, 0, 'r'},
        {"no-load", 0, 0, 'n'}, {"verify", 0, 0, 'v'}, {"memcpy", 0, 0, 'm'}, {"quiet", 0, 0, 'q'},
        {"help", 0, 0, 'h'},    {0, 0, 0, 0}};
    *o = (bench_opts_t){.proto = PROTO_REDIS,
                        .addr = "tcp://127.0.0.1:6379",
                        .uri = "redis://127.0.0.1:6379",
                        .op = OP_PUT,
                        .threads = 1,
                        .depth = 1,
                        .size = 4096,
                        .count = 100000,
                        .keys = 10000,
                        .score = -1,
                        .timeout = 60};
    o->seed = now_ns() ^ ((uint64_t)getpid() << 32);
    bool memcpy_mode = false;
    int c, idx;
    while ((c = getopt_long(argc, argv, "q", longopts, &idx)) != -1) {
        switch (c) {
        case 0:
            if (apply_option(o, longopts[idx].name, optarg) < 0) return -1;
            break;
        case 'r':
            o->random = true;
            break;
        case 'n':
            o->no_load = true;
            break;
        case 'v':
            break; /* gets are always verified */
        case 'm':
            memcpy_mode = true;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'h':
            usage(stdout);
            return 1;
        default:
            usage(stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cte-bench: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (o->count_set && o->seconds > 0) {
        fprintf(stderr, "cte-bench: give --count or --seconds, not both\n");
        return -1;
    }
    if (memcpy_mode) o->proto = PROTO_MEMCPY;
    if (o->score >= 0 && o->proto == PROTO_REDIS)
        fprintf(stderr, "cte-bench: --score is ignored with redis:// (SET has no score)\n");
    return 0;
}

/* Opens one connection: 0, 1 on a connection failure, 2 on a malformed address (message
 * printed either way). */
static int connect_one(const bench_opts_t *o, cte_conn_t **out)
{
    cte_conn_t *c = cte_conn_new();
    if (!c) {
        fprintf(stderr, "cte-bench: out of memory\n");
        return 1;
    }
    cte_conn_set_timeout(c, (int)(o->timeout * 1000)); /* bounds connecting and the handshake */
    int rc = cte_conn_open(c, o->addr, 0);
    if (rc == 0) rc = cte_conn_set_window(c, (unsigned)o->depth);
    if (rc) {
        char why[700];
        if (rc == CTE_E_ADDRESS)
            fprintf(stderr, "cte-bench: bad value for --uri: '%s': %s\n", o->uri,
                    cte_conn_errmsg(c));
        else
            fprintf(stderr, "cte-bench: cannot connect to %s: %s\n", o->uri,
                    status_text(why, sizeof why, rc, c));
        cte_conn_free(c);
        return rc == CTE_E_ADDRESS ? 2 : 1;
    }
    cte_conn_set_timeout(c, 0); /* the watchdog bounds the measured loop instead */
    *out = c;
    return 0;
}

/* The value every put sends: pseudo-random bytes (not UTF-8 text, so not indexed as text). */
static char *make_value(size_t size)
{
    char *v = malloc(size ? size : 1);
    if (!v) return NULL;
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < size; i += 8) {
        uint64_t x = rng_next(&s);
        memcpy(v + i, &x, size - i < 8 ? size - i : 8);
    }
    return v;
}

/* --memcpy: a source and a destination ring of nbuf values each, every page touched (so no
 * page fault is timed). 0 or -1 (message printed). */
static int copy_buffers_init(bench_worker_t *w, const char *value)
{
    size_t size = w->o->size;
    w->nbuf = size && size < BENCH_COPY_REGION / 2 ? BENCH_COPY_REGION / size : 2;
    w->src = malloc(w->nbuf * (size ? size : 1));
    w->dst = malloc(w->nbuf * (size ? size : 1));
    if (!w->src || !w->dst) {
        fprintf(stderr, "cte-bench: out of memory for the copy buffers\n");
        return -1;
    }
    for (size_t i = 0; i < w->nbuf; i++) memcpy(w->src + i * size, value, size);
    memset(w->dst, 0, w->nbuf * size);
    return 0;
}

/* Sets up every worker. 0, or the exit status of the failure (message printed). */
static int workers_init(bench_worker_t *ws, const bench_opts_t *o, const char *value)
{
    for (int i = 0; i < o->threads; i++) {
        bench_worker_t *w = &ws[i];
        w->id = i;
        w->o = o;
        w->value = value;
        w->rng = (o->seed + 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1)) | 1;
        if (o->proto == PROTO_MEMCPY) {
            if (copy_buffers_init(w, value) < 0) return 1;
            continue;
        }
        w->slots = calloc((size_t)o->depth, sizeof *w->slots);
        if (!w->slots) {
            fprintf(stderr, "cte-bench: out of memory\n");
            return 1;
        }
        for (int d = 0; d < o->depth; d++) w->slots[d].w = w;
        int rc = connect_one(o, &w->c);
        if (rc) return rc;
    }
    return 0;
}

static void workers_deinit(bench_worker_t *ws, int n)
{
    for (int i = 0; i < n; i++) {
        cte_conn_free(ws[i].c);
        free(ws[i].slots);
        free(ws[i].src);
        free(ws[i].dst);
    }
}

/* Loads (for gets, unless --no-load) and measures. 0 on success, 1 on any failure. */
static int bench_run(bench_worker_t *ws, const bench_opts_t *o)
{
    if (o->proto != PROTO_MEMCPY && o->op == OP_GET && !o->no_load) {
        if (!o->quiet)
            fprintf(stderr, "cte-bench: loading %" PRIu64 " keys of %zu bytes\n", o->keys, o->size);
        if (run_phase(ws, o, OP_PUT, o->keys, 0, false, false, "load") < 0) return 1;
    }
    const char *label = o->proto == PROTO_MEMCPY ? "memcpy" : o->op == OP_PUT ? "put" : "get";
    if (run_phase(ws, o, o->op, o->count, o->seconds, o->random, true, label) < 0) return 1;
    bool missing;
    report(ws, o, &missing);
    return missing ? 1 : 0;
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc > 0 ? 0 : 2;
    signal(SIGPIPE, SIG_IGN);
    char *value = make_value(o.size);
    bench_worker_t *ws = calloc((size_t)o.threads, sizeof *ws);
    rc = 1;
    if (!value || !ws) {
        fprintf(stderr, "cte-bench: out of memory\n");
        goto out;
    }
    if ((rc = workers_init(ws, &o, value)) != 0) goto out;
    rc = bench_run(ws, &o);
    if (first_err[0]) fprintf(stderr, "cte-bench: %s\n", first_err);
out:
    if (ws) workers_deinit(ws, o.threads);
    free(ws);
    free(value);
    return rc;
}
