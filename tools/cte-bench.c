/* cte-bench.c - a load generator for cte-server and any other Redis-protocol server.
 *
 *   cte-bench --uri redis://HOST:PORT   SET key:<n> <value> / GET key:<n>
 *   cte-bench --uri tcp://HOST:PORT     TPUT bench b<n> 0 <value> [score] / TGET bench b<n>
 *   cte-bench --uri unix:PATH           the same TPUT/TGET over a Unix socket
 *
 * Each of --threads threads owns one connection and keeps up to --depth requests in flight
 * (pipelining). A thread formats its requests itself and sends a batch with one writev (the
 * value is referenced, never copied into a send buffer), then reads replies in large chunks
 * that feed the connection's hiredis reader. The reader builds our own small reply objects
 * (its redisReplyObjectFunctions hook), so a bulk reply is checked where it lies in the
 * reader's buffer and never copied out: at 1 MiB the client's copies would otherwise weigh as
 * much as the server's work. Every request is timestamped just before its batch is written and
 * again when its own reply has been parsed; the difference goes into the thread's latency
 * histogram, and the histograms are merged at the end. For --op get the keys are loaded first
 * (unmeasured) unless --no-load.
 *
 * Output: at most one progress line a second on stderr while stderr is a terminal, then exactly
 * one line on stdout: `ops/s=<n> MB/s=<n> avg_us=<n> p99_us=<n>` (MB = 10^6 bytes of values
 * sent by puts or received by gets). Exit status: 0 on success, 1 on an error reply, a
 * connection or protocol error, or (without --no-load) a get that found no value, 2 on usage
 * errors. The first error is printed on stderr.
 *
 * Threads: main parses options, connects, starts the workers for each phase and the progress
 * printer, and merges results; workers touch only their own worker_t plus the shared stop flag
 * and first-error slot (under a mutex). This file links hiredis only, never the server. */
#define _GNU_SOURCE
#include <hiredis/hiredis.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
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
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define BENCH_TAG "bench"
#define BENCH_MAX_DEPTH 4096
#define BENCH_READ_CHUNK (256 * 1024)
#define BENCH_HDR_MAX 160 /* one request's RESP up to its value bytes */

/* ---- options ---- */

enum bench_proto { PROTO_REDIS, PROTO_CTE };
enum bench_op { OP_PUT, OP_GET };

typedef struct {
    enum bench_proto proto;
    bool is_unix;
    char host[256];
    int port;
    char path[256];
    enum bench_op op;
    int threads;
    int depth;
    size_t size;
    uint64_t count;
    uint64_t keys;
    bool random;
    bool no_load;
    bool quiet;
    bool verify;
    const char *score; /* NULL: TPUT without a score */
    double timeout;    /* seconds a read or write may block */
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

typedef struct {
    char hdr[BENCH_HDR_MAX];
    size_t hlen;
    uint64_t key;
    uint64_t sent_ns;
} bench_slot_t;

typedef struct {
    int id;
    const bench_opts_t *o;
    redisContext *c;
    const char *value;   /* o->size bytes, shared read-only by all workers */
    const char *trailer; /* after a put's value: "\r\n" plus the score argument if any */
    size_t trailer_len;
    bench_slot_t *slots; /* o->depth of them: a ring indexed by request number */
    struct iovec *iov;
    char *rbuf;
    uint64_t rng;
    /* the current phase */
    enum bench_op op;
    uint64_t nops;
    bool randomize;
    bool measure;
    /* results of the current phase */
    bench_hist_t hist;
    uint64_t bytes;
    uint64_t misses;
    uint64_t mismatches;
    uint64_t t_start;
    uint64_t t_end;
    _Atomic uint64_t done;
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

static size_t put_bulk(char *p, const char *s, size_t len)
{
    int n = sprintf(p, "$%zu\r\n", len);
    memcpy(p + n, s, len);
    memcpy(p + n + len, "\r\n", 2);
    return (size_t)n + len + 2;
}

/* Formats request i of the phase into its slot: everything before the value for a put. */
static void slot_format(bench_worker_t *w, bench_slot_t *s, uint64_t i)
{
    const bench_opts_t *o = w->o;
    uint64_t g = (uint64_t)w->id + i * (uint64_t)o->threads;
    s->key = w->randomize ? rng_next(&w->rng) % o->keys : g % o->keys;
    char name[32];
    int nlen =
        snprintf(name, sizeof name, o->proto == PROTO_CTE ? "b%" PRIu64 : "key:%" PRIu64, s->key);
    bool put = w->op == OP_PUT;
    bool cte = o->proto == PROTO_CTE;
    int argc = cte ? (put ? 5 + (o->score != NULL) : 3) : (put ? 3 : 2);
    char *p = s->hdr;
    p += sprintf(p, "*%d\r\n", argc);
    const char *cmd = cte ? (put ? "TPUT" : "TGET") : (put ? "SET" : "GET");
    p += put_bulk(p, cmd, strlen(cmd));
    if (cte) p += put_bulk(p, BENCH_TAG, strlen(BENCH_TAG));
    p += put_bulk(p, name, (size_t)nlen);
    if (cte && put) p += put_bulk(p, "0", 1);
    if (put) p += sprintf(p, "$%zu\r\n", o->size);
    s->hlen = (size_t)(p - s->hdr);
}

static const char *op_name(const bench_worker_t *w)
{
    if (w->o->proto == PROTO_CTE) return w->op == OP_PUT ? "TPUT" : "TGET";
    return w->op == OP_PUT ? "SET" : "GET";
}

/* Writes all of iov[0..n), advancing over partial writes. 0, or -1 after bench_fail. */
static int write_all(bench_worker_t *w, struct iovec *iov, int n)
{
    while (n > 0) {
        int chunk = n > IOV_MAX ? IOV_MAX : n;
        ssize_t k = writev(w->c->fd, iov, chunk);
        if (k < 0) {
            if (errno == EINTR) continue;
            bench_fail("thread %d: write: %s", w->id,
                       errno == EAGAIN ? "timed out" : strerror(errno));
            return -1;
        }
        while (n > 0 && (size_t)k >= iov->iov_len) {
            k -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + k;
            iov->iov_len -= (size_t)k;
        }
    }
    return 0;
}

/* Formats requests [from, to) of the phase and sends them as one batch. 0 or -1. */
static int send_batch(bench_worker_t *w, uint64_t from, uint64_t to)
{
    int n = 0;
    for (uint64_t i = from; i < to; i++) {
        bench_slot_t *s = &w->slots[i % (uint64_t)w->o->depth];
        slot_format(w, s, i);
        w->iov[n++] = (struct iovec){s->hdr, s->hlen};
        if (w->op == OP_PUT) {
            w->iov[n++] = (struct iovec){(void *)w->value, w->o->size};
            w->iov[n++] = (struct iovec){(void *)w->trailer, w->trailer_len};
        }
    }
    uint64_t t = now_ns();
    for (uint64_t i = from; i < to; i++) w->slots[i % (uint64_t)w->o->depth].sent_ns = t;
    return write_all(w, w->iov, n);
}

/* ---- replies: hiredis parses them into our own small objects (its reader's extension
 * point), so a bulk reply is checked in the reader's buffer instead of being copied out ---- */

typedef struct {
    int type; /* REDIS_REPLY_* */
    long long integer;
    size_t len;   /* strings: the full length; str holds at most its first bytes */
    bool differs; /* --verify: a string that is not the value the puts write */
    char str[200];
} bench_reply_t;

static bench_reply_t reply_nested = {.type = REDIS_REPLY_ARRAY}; /* stands for array members */

static bench_reply_t *reply_new(const redisReadTask *t, int type)
{
    if (t->parent) return &reply_nested; /* only the top-level type matters here */
    bench_reply_t *r = calloc(1, sizeof *r);
    if (r) r->type = type;
    return r;
}

static void *reply_string(const redisReadTask *t, char *str, size_t len)
{
    bench_reply_t *r = reply_new(t, t->type);
    if (!r || r == &reply_nested) return r;
    const bench_worker_t *w = t->privdata;
    r->len = len;
    size_t keep = len < sizeof r->str - 1 ? len : sizeof r->str - 1;
    memcpy(r->str, str, keep);
    if (t->type == REDIS_REPLY_STRING && w->o->verify)
        r->differs = len != w->o->size || memcmp(str, w->value, len) != 0;
    return r;
}

static void *reply_array(const redisReadTask *t, int n)
{
    return reply_new(t, REDIS_REPLY_ARRAY);
}

static void *reply_integer(const redisReadTask *t, long long v)
{
    bench_reply_t *r = reply_new(t, REDIS_REPLY_INTEGER);
    if (r && r != &reply_nested) r->integer = v;
    return r;
}

static void *reply_nil(const redisReadTask *t)
{
    return reply_new(t, REDIS_REPLY_NIL);
}

static void reply_free(void *r)
{
    if (r != &reply_nested) free(r);
}

static redisReplyObjectFunctions reply_fns = {reply_string, reply_array, reply_integer, reply_nil,
                                              reply_free};

/* Next reply of the connection into *r (caller frees with reply_free). With block, reads
 * until one is there; without, returns 0 with *r NULL when none is buffered. 0, or -1 after
 * bench_fail. */
static int next_reply(bench_worker_t *w, bench_reply_t **r, bool block)
{
    for (;;) {
        void *rep = NULL;
        if (redisReaderGetReply(w->c->reader, &rep) != REDIS_OK) {
            bench_fail("thread %d: protocol error: %s", w->id, w->c->reader->errstr);
            return -1;
        }
        *r = rep;
        if (rep || !block) return 0;
        ssize_t k = read(w->c->fd, w->rbuf, BENCH_READ_CHUNK);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            bench_fail("thread %d: read: %s", w->id,
                       k == 0            ? "server closed the connection"
                       : errno == EAGAIN ? "timed out waiting for a reply"
                                         : strerror(errno));
            return -1;
        }
        if (redisReaderFeed(w->c->reader, w->rbuf, (size_t)k) != REDIS_OK) {
            bench_fail("thread %d: out of memory", w->id);
            return -1;
        }
    }
}

static void fail_reply(bench_worker_t *w, const bench_slot_t *s, const char *what,
                       const bench_reply_t *r)
{
    const char *name = w->o->proto == PROTO_CTE ? "b" : "key:";
    if (r->type == REDIS_REPLY_ERROR || r->type == REDIS_REPLY_STATUS) {
        char text[sizeof r->str];
        for (size_t i = 0; i < sizeof text; i++) /* servers echo our binary values back */
            text[i] = r->str[i] && (r->str[i] < 0x20 || r->str[i] > 0x7e) ? '.' : r->str[i];
        bench_fail("%s reply to %s %s%" PRIu64 ": %s", what, op_name(w), name, s->key, text);
    } else if (r->type == REDIS_REPLY_INTEGER)
        bench_fail("%s reply to %s %s%" PRIu64 ": (integer) %lld", what, op_name(w), name, s->key,
                   r->integer);
    else if (r->type == REDIS_REPLY_NIL)
        bench_fail("%s reply to %s %s%" PRIu64 ": (nil)", what, op_name(w), name, s->key);
    else
        bench_fail("%s reply to %s %s%" PRIu64 " (%s)", what, op_name(w), name, s->key,
                   r->type == REDIS_REPLY_ARRAY ? "an array" : "a bulk string");
}

/* Checks one reply against its request and counts it. 0, or -1 after bench_fail. */
static int check_reply(bench_worker_t *w, const bench_slot_t *s, const bench_reply_t *r)
{
    const bench_opts_t *o = w->o;
    if (r->type == REDIS_REPLY_ERROR) {
        fail_reply(w, s, "error", r);
        return -1;
    }
    if (w->op == OP_PUT) {
        bool ok = o->proto == PROTO_REDIS
                      ? r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "OK")
                      : r->type == REDIS_REPLY_INTEGER && r->integer >= (long long)o->size;
        if (!ok) {
            fail_reply(w, s, "unexpected", r);
            return -1;
        }
        w->bytes += o->size;
        return 0;
    }
    if (r->type == REDIS_REPLY_NIL) {
        w->misses++;
        return 0;
    }
    if (r->type != REDIS_REPLY_STRING) {
        fail_reply(w, s, "unexpected", r);
        return -1;
    }
    w->bytes += r->len;
    if (r->len != o->size || r->differs) w->mismatches++;
    return 0;
}

/* Handles the reply to request i: checks it, and times it if the phase is measured. */
static int take_reply(bench_worker_t *w, uint64_t i, bench_reply_t *r)
{
    bench_slot_t *s = &w->slots[i % (uint64_t)w->o->depth];
    if (w->measure) hist_add(&w->hist, now_ns() - s->sent_ns);
    int rc = check_reply(w, s, r);
    reply_free(r);
    atomic_store_explicit(&w->done, i + 1, memory_order_relaxed);
    return rc;
}

/* Runs the thread's part of one phase: keeps up to depth requests in flight; after each wait
 * for a reply, takes every reply already buffered, then refills the window in one batch. */
static void *worker_main(void *arg)
{
    bench_worker_t *w = arg;
    uint64_t sent = 0, recvd = 0, depth = (uint64_t)w->o->depth;
    w->t_start = now_ns();
    while (recvd < w->nops && !atomic_load_explicit(&stop_all, memory_order_relaxed)) {
        uint64_t to = w->nops < recvd + depth ? w->nops : recvd + depth;
        if (to > sent && send_batch(w, sent, to) < 0) break;
        sent = to;
        bench_reply_t *r;
        if (next_reply(w, &r, true) < 0 || take_reply(w, recvd++, r) < 0) break;
        while (recvd < sent) {
            if (next_reply(w, &r, false) < 0) goto out;
            if (!r) break;
            if (take_reply(w, recvd++, r) < 0) goto out;
        }
    }
out:
    w->t_end = now_ns();
    return NULL;
}

/* ---- progress ---- */

typedef struct {
    bench_worker_t *w;
    int n;
    const char *label;
    uint64_t total;
    size_t size;
    atomic_bool stop;
    bool shown;
} bench_progress_t;

static uint64_t progress_done(bench_progress_t *p)
{
    uint64_t d = 0;
    for (int i = 0; i < p->n; i++) d += atomic_load_explicit(&p->w[i].done, memory_order_relaxed);
    return d;
}

static void *progress_main(void *arg)
{
    bench_progress_t *p = arg;
    uint64_t last = 0, t_last = now_ns(), t0 = t_last;
    while (!atomic_load(&p->stop)) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        uint64_t t = now_ns();
        if (t - t_last < 1000000000u) continue;
        uint64_t d = progress_done(p);
        double rate = (double)(d - last) * 1e9 / (double)(t - t_last);
        fprintf(stderr, "\r%s: %" PRIu64 "/%" PRIu64 " ops, %.0f ops/s, %.1f MB/s, %.0fs\033[K",
                p->label, d, p->total, rate, rate * (double)p->size / 1e6, (t - t0) / 1e9);
        p->shown = true;
        last = d;
        t_last = t;
    }
    if (p->shown) fputs("\r\033[K", stderr);
    return NULL;
}

/* ---- phases ---- */

/* Runs one phase on every worker (each with its share of count requests) and waits for it.
 * 0, or -1 when a thread could not start or any request failed. */
static int run_phase(bench_worker_t *ws, const bench_opts_t *o, enum bench_op op, uint64_t count,
                     bool randomize, bool measure, const char *label)
{
    pthread_t tid[o->threads];
    for (int i = 0; i < o->threads; i++) {
        bench_worker_t *w = &ws[i];
        w->op = op;
        w->nops = count / (uint64_t)o->threads + ((uint64_t)i < count % (uint64_t)o->threads);
        w->randomize = randomize;
        w->measure = measure;
        memset(&w->hist, 0, sizeof w->hist);
        w->bytes = w->misses = w->mismatches = 0;
        atomic_store(&w->done, 0);
    }
    bench_progress_t prog = {
        .w = ws, .n = o->threads, .label = label, .total = count, .size = o->size};
    pthread_t ptid;
    bool show = !o->quiet && isatty(2);
    if (show && pthread_create(&ptid, NULL, progress_main, &prog)) show = false;
    int started = 0;
    for (; started < o->threads; started++)
        if (pthread_create(&tid[started], NULL, worker_main, &ws[started])) {
            bench_fail("cannot start thread %d", started);
            break;
        }
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
    if (show) {
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
    if (misses && !o->quiet)
        fprintf(stderr, "cte-bench: %" PRIu64 " gets found no value\n", misses);
    if (mism)
        fprintf(stderr, "cte-bench: %" PRIu64 " gets returned a value of the wrong %s\n", mism,
                o->verify ? "size or contents" : "size");
    if (!o->quiet)
        fprintf(stderr, "cte-bench: %" PRIu64 " ops in %.2fs, %d threads x depth %d, max %.0f us\n",
                h.count, secs, o->threads, o->depth, (double)h.max_ns / 1e3);
    printf("ops/s=%.0f MB/s=%.1f avg_us=%.1f p99_us=%.1f\n", (double)h.count / secs,
           (double)bytes / secs / 1e6, avg, hist_quantile(&h, 0.99) / 1e3);
    fflush(stdout);
    *missing = misses > 0 || mism > 0;
}

/* ---- setup ---- */

static void usage(FILE *f)
{
    fputs("usage: cte-bench [options]\n"
          "  --uri URI       redis://HOST:PORT   SET/GET key:<n> (any Redis-protocol server)\n"
          "                  tcp://HOST:PORT     TPUT/TGET bench b<n> against cte-server\n"
          "                  unix:PATH           TPUT/TGET over a Unix socket\n"
          "                  (default redis://127.0.0.1:6379)\n"
          "  --op put|get    put = SET/TPUT, get = GET/TGET (default put)\n"
          "  --threads N     connections, one thread each (default 1)\n"
          "  --depth D       requests in flight per connection, pipelined (default 1)\n"
          "  --size BYTES    value size; suffixes k, m, g (default 4k)\n"
          "  --count N       total operations (default 100000)\n"
          "  --keys K        key space (default 10000)\n"
          "  --random        pick keys at random (default: round-robin)\n"
          "  --seed N        seed of --random (default: from the clock)\n"
          "  --score S       score argument of TPUT (default: none)\n"
          "  --no-load       get: do not load the keys first\n"
          "  --verify        get: compare every value with what a load writes\n"
          "  --timeout SECS  longest wait for a reply (default 60)\n"
          "  --quiet         no progress or summary on stderr (errors still)\n"
          "output: ops/s=<n> MB/s=<n> avg_us=<n> p99_us=<n> on stdout (MB = 10^6 bytes)\n",
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

/* HOST:PORT or [V6]:PORT into o (port defaults to 6379). 0 or -1. */
static int parse_hostport(const char *s, bench_opts_t *o)
{
    const char *colon, *host = s;
    size_t hlen;
    if (*s == '[') {
        const char *close = strchr(s, ']');
        if (!close) return -1;
        host = s + 1;
        hlen = (size_t)(close - host);
        colon = close[1] == ':' ? close + 1 : NULL;
        if (!colon && close[1]) return -1;
    } else {
        colon = strrchr(s, ':');
        hlen = colon ? (size_t)(colon - s) : strlen(s);
    }
    if (hlen == 0 || hlen >= sizeof o->host) return -1;
    memcpy(o->host, host, hlen);
    o->host[hlen] = 0;
    uint64_t port = 6379;
    if (colon && (parse_count(colon + 1, &port, 1) < 0 || port > 65535)) return -1;
    o->port = (int)port;
    return 0;
}

static int parse_uri(const char *u, bench_opts_t *o)
{
    if (!strncmp(u, "redis://", 8)) {
        o->proto = PROTO_REDIS;
        return parse_hostport(u + 8, o);
    }
    if (!strncmp(u, "tcp://", 6)) {
        o->proto = PROTO_CTE;
        return parse_hostport(u + 6, o);
    }
    if (!strncmp(u, "unix:", 5)) {
        const char *p = u + 5;
        if (!strncmp(p, "//", 2)) p += 2;
        if (!*p || strlen(p) >= sizeof o->path) return -1;
        o->proto = PROTO_CTE;
        o->is_unix = true;
        strcpy(o->path, p);
        return 0;
    }
    return -1;
}

static int bad_option(const char *name, const char *val)
{
    fprintf(stderr, "cte-bench: bad value for --%s: '%s'\n", name, val);
    return -1;
}

/* Applies one long option; 0 or -1 (message printed). */
static int apply_option(bench_opts_t *o, const char *name, const char *v)
{
    uint64_t n;
    if (!strcmp(name, "uri")) return parse_uri(v, o) ? bad_option(name, v) : 0;
    if (!strcmp(name, "op")) {
        if (strcmp(v, "put") && strcmp(v, "get")) return bad_option(name, v);
        o->op = strcmp(v, "put") ? OP_GET : OP_PUT;
    } else if (!strcmp(name, "threads")) {
        if (parse_count(v, &n, 1) || n > 1024) return bad_option(name, v);
        o->threads = (int)n;
    } else if (!strcmp(name, "depth")) {
        if (parse_count(v, &n, 1) || n > BENCH_MAX_DEPTH) return bad_option(name, v);
        o->depth = (int)n;
    } else if (!strcmp(name, "size")) {
        if (parse_size(v, &n) || n > SIZE_MAX / 2) return bad_option(name, v);
        o->size = (size_t)n;
    } else if (!strcmp(name, "count")) {
        if (parse_count(v, &o->count, 1)) return bad_option(name, v);
    } else if (!strcmp(name, "keys")) {
        if (parse_count(v, &o->keys, 1)) return bad_option(name, v);
    } else if (!strcmp(name, "seed")) {
        if (parse_count(v, &o->seed, 0)) return bad_option(name, v);
    } else if (!strcmp(name, "score")) {
        char *end;
        double d = strtod(v, &end);
        if (end == v || *end || !(d >= 0 && d <= 1) || strlen(v) > 32) return bad_option(name, v);
        o->score = v;
    } else if (!strcmp(name, "timeout")) {
        char *end;
        o->timeout = strtod(v, &end);
        if (end == v || *end || !(o->timeout > 0)) return bad_option(name, v);
    }
    return 0;
}

/* Fills o from argv. 0 to run, 1 after --help, -1 on a usage error (message printed). */
static int parse_args(int argc, char **argv, bench_opts_t *o)
{
    static const struct option longopts[] = {
        {"uri", 1, 0, 0},      {"op", 1, 0, 0},      {"threads", 1, 0, 0},  {"depth", 1, 0, 0},
        {"size", 1, 0, 0},     {"count", 1, 0, 0},   {"keys", 1, 0, 0},     {"score", 1, 0, 0},
        {"seed", 1, 0, 0},     {"timeout", 1, 0, 0}, {"random", 0, 0, 'r'}, {"no-load", 0, 0, 'n'},
        {"verify", 0, 0, 'v'}, {"quiet", 0, 0, 'q'}, {"help", 0, 0, 'h'},   {0, 0, 0, 0}};
    *o = (bench_opts_t){.proto = PROTO_REDIS,
                        .host = "127.0.0.1",
                        .port = 6379,
                        .op = OP_PUT,
                        .threads = 1,
                        .depth = 1,
                        .size = 4096,
                        .count = 100000,
                        .keys = 10000,
                        .timeout = 60};
    o->seed = now_ns() ^ ((uint64_t)getpid() << 32);
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
            o->verify = true;
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
    if (o->score && o->proto != PROTO_CTE)
        fprintf(stderr, "cte-bench: --score is ignored with redis:// (SET has no score)\n");
    return 0;
}

static redisContext *connect_one(const bench_opts_t *o)
{
    struct timeval tv = {5, 0};
    redisContext *c = o->is_unix ? redisConnectUnixWithTimeout(o->path, tv)
                                 : redisConnectWithTimeout(o->host, o->port, tv);
    if (!c || c->err) {
        if (o->is_unix)
            fprintf(stderr, "cte-bench: cannot connect to unix:%s: %s\n", o->path,
                    c ? c->errstr : "out of memory");
        else
            fprintf(stderr, "cte-bench: cannot connect to %s:%d: %s\n", o->host, o->port,
                    c ? c->errstr : "out of memory");
        if (c) redisFree(c);
        return NULL;
    }
    tv.tv_sec = (time_t)o->timeout;
    tv.tv_usec = (suseconds_t)((o->timeout - (double)tv.tv_sec) * 1e6);
    redisSetTimeout(c, tv);
    c->reader->maxbuf = 0; /* keep the reader's buffer between replies */
    c->reader->fn = &reply_fns;
    return c;
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

static char *make_trailer(const bench_opts_t *o, size_t *len)
{
    char *t = malloc(64);
    if (!t) return NULL;
    int n = sprintf(t, "\r\n");
    if (o->proto == PROTO_CTE && o->score) n += (int)put_bulk(t + n, o->score, strlen(o->score));
    *len = (size_t)n;
    return t;
}

static int workers_init(bench_worker_t *ws, const bench_opts_t *o, const char *value,
                        const char *trailer, size_t tlen)
{
    for (int i = 0; i < o->threads; i++) {
        bench_worker_t *w = &ws[i];
        w->id = i;
        w->o = o;
        w->value = value;
        w->trailer = trailer;
        w->trailer_len = tlen;
        w->rng = (o->seed + 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1)) | 1;
        w->slots = calloc((size_t)o->depth, sizeof *w->slots);
        w->iov = calloc((size_t)o->depth * 3, sizeof *w->iov);
        w->rbuf = malloc(BENCH_READ_CHUNK);
        if (!w->slots || !w->iov || !w->rbuf) {
            fprintf(stderr, "cte-bench: out of memory\n");
            return -1;
        }
        if (!(w->c = connect_one(o))) return -1;
        w->c->reader->privdata = w;
    }
    return 0;
}

static void workers_deinit(bench_worker_t *ws, int n)
{
    for (int i = 0; i < n; i++) {
        if (ws[i].c) redisFree(ws[i].c);
        free(ws[i].slots);
        free(ws[i].iov);
        free(ws[i].rbuf);
    }
}

/* Loads (unless --no-load) and measures. 0 on success, 1 on any failure. */
static int bench_run(bench_worker_t *ws, const bench_opts_t *o)
{
    if (o->op == OP_GET && !o->no_load) {
        if (!o->quiet)
            fprintf(stderr, "cte-bench: loading %" PRIu64 " keys of %zu bytes\n", o->keys, o->size);
        if (run_phase(ws, o, OP_PUT, o->keys, false, false, "load") < 0) return 1;
    }
    if (run_phase(ws, o, o->op, o->count, o->random, true, o->op == OP_PUT ? "put" : "get") < 0)
        return 1;
    bool missing;
    report(ws, o, &missing);
    return missing && !o->no_load ? 1 : 0;
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc > 0 ? 0 : 2;
    signal(SIGPIPE, SIG_IGN);
    size_t tlen = 0;
    char *value = make_value(o.size), *trailer = make_trailer(&o, &tlen);
    bench_worker_t *ws = calloc((size_t)o.threads, sizeof *ws);
    rc = 1;
    if (!value || !trailer || !ws) {
        fprintf(stderr, "cte-bench: out of memory\n");
        goto out;
    }
    if (workers_init(ws, &o, value, trailer, tlen) < 0) goto out;
    rc = bench_run(ws, &o);
    if (first_err[0]) fprintf(stderr, "cte-bench: %s\n", first_err);
out:
    if (ws) workers_deinit(ws, o.threads);
    free(ws);
    free(value);
    free(trailer);
    return rc;
}
