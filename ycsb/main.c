/* main.c - cte-ycsb: YCSB's command line (site.ycsb.Client) over CoreWorkload and the redis and
 * cte bindings.
 *
 *   cte-ycsb load|run [-P file]... [-p name=value]... -db redis|cte [-threads n] [-target n]
 *                     [-s] [-l label]
 *
 * Properties come from the -P files in order, then from -p (and -threads, -target, -db, -s,
 * which set threadcount, target, db, status), which win over every file; a later -p wins over
 * an earlier one. The run: one client thread per threadcount, each with its own binding
 * instance (connection) and share of the operations (ClientThread), throttled to
 * target / threadcount operations per second when a target is set; with -s a status thread
 * prints YCSB's status line to stderr every status.interval seconds (10); maxexecutiontime
 * (seconds) stops the run early. The report goes to stdout (or exportfile) in YCSB's text
 * format. Exit status: 0; 1 when a client thread could not connect or hit a fatal error (its
 * reason on stderr, the report still printed); 2 for a bad command line or property. */
#include "cli.h"
#include "core.h"
#include "db.h"
#include "java.h"
#include "measure.h"
#include "props.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define THREADS_MAX 4096

typedef struct run run_t;

typedef struct client {
    run_t *run;
    int id;
    int64_t opcount;
    _Atomic int64_t opsdone;
    core_thread_t *ct;
    meas_thread_t *meas;
    pthread_t tid;
} client_t;

struct run {
    props_t *props;
    bool dotransactions;
    const db_binding_t *binding;
    core_t *core;
    meas_t *meas;
    int threads;
    double target_per_ms; /* per thread; <= 0: unthrottled */
    client_t *client;
    atomic_bool stop;
    atomic_int failed;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done; /* client threads that ended */
};

/* ---- client threads ---- */

static void client_end(client_t *c)
{
    run_t *r = c->run;
    pthread_mutex_lock(&r->lock);
    r->done++;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

static void client_loop(client_t *c, core_db_t *db)
{
    run_t *r = c->run;
    int64_t tick = r->target_per_ms > 0 ? (int64_t)(1000000 / r->target_per_ms) : 0;
    if (tick > 0 && r->target_per_ms <= 1.0) {
        gen_rng_t rng;
        gen_rng_seed(&rng, (uint64_t)c->id * 7919 + (uint64_t)util_now_ns());
        util_sleep_until(util_now_ns() +
                         gen_rng_int_bound(&rng, (int32_t)(tick > INT32_MAX ? INT32_MAX : tick)));
    }
    int64_t start = util_now_ns(), done = 0;
    while ((c->opcount == 0 || done < c->opcount) && !atomic_load(&r->stop)) {
        int rc = r->dotransactions ? core_do_transaction(c->ct, db) : core_do_insert(c->ct, db);
        if (rc < 0) {
            fprintf(stderr, "cte-ycsb: client thread %d: %s\n", c->id, core_thread_error(c->ct));
            atomic_store(&r->failed, 1);
        }
        if (rc <= 0) break;
        atomic_store(&c->opsdone, ++done);
        if (tick > 0) {
            int64_t deadline = start + done * tick;
            util_sleep_until(deadline);
            meas_set_intended(c->meas, deadline);
        }
    }
}

static void *client_main(void *arg)
{
    client_t *c = arg;
    run_t *r = c->run;
    util_err_t e;
    core_db_t db = {r->binding, NULL, c->meas};
    if (r->binding->open(&db.db, r->props, core_schema(r->core), &e) < 0) {
        fprintf(stderr, "cte-ycsb: client thread %d: %s\n", c->id, e.msg);
        atomic_store(&r->failed, 1);
        client_end(c);
        return NULL;
    }
    client_loop(c, &db);
    meas_set_intended(c->meas, 0);
    int64_t ist = meas_intended_start(c->meas), st = util_now_ns();
    r->binding->close(db.db);
    meas_latency_only(c->meas, MEAS_CLEANUP, DB_OK, ist, st, util_now_ns());
    client_end(c);
    return NULL;
}

/* ---- status ---- */

/* RemainingFormatter.format, including its arithmetic slip in the minutes. */
static void remaining(int64_t s, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    int64_t days = s / 86400;
    if (days > 0) {
        n += (size_t)snprintf(out + n, cap - n, "%" PRId64 "%s", days,
                              days == 1 ? " day " : " days ");
        s -= days * 86400;
    }
    int64_t hours = s / 3600;
    if (hours > 0) {
        n += (size_t)snprintf(out + n, cap - n, "%" PRId64 "%s", hours,
                              hours == 1 ? " hour " : " hours ");
        s -= hours * 3600;
    }
    if (days < 1) {
        int64_t minutes = s / 60;
        if (minutes > 0)
            n += (size_t)snprintf(out + n, cap - n, "%" PRId64 "%s", minutes,
                                  minutes == 1 ? " minute " : " minutes ");
    }
    if (n == 0) snprintf(out, cap, "%" PRId64 " seconds ", s);
}

static int64_t compute_stats(run_t *r, const char *label, int64_t start_ms, int64_t start_iv_ms,
                             int64_t end_ms, int64_t last_total)
{
    int64_t total = 0, todo = 0;
    for (int i = 0; i < r->threads; i++) {
        int64_t d = atomic_load(&r->client[i].opsdone), left = r->client[i].opcount - d;
        total += d;
        todo += left < 0 ? 0 : left;
    }
    int64_t interval = end_ms - start_ms;
    double tput = 1000.0 * ((double)total / (double)interval);
    double cur = 1000.0 * ((double)(total - last_total) / (double)(end_ms - start_iv_ms));
    int64_t est = java_d2l(ceil((double)todo / tput));
    char date[64], d[JAVA_DOUBLE_STR_MAX], rem[160];
    time_t now = (time_t)(util_wall_ms() / 1000);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &tm);
    char *summary = meas_summary(r->meas);
    fprintf(stderr, "%s%s:%03d %" PRId64 " sec: %" PRId64 " operations; ", label, date,
            (int)(util_wall_ms() % 1000), interval / 1000, total);
    if (total != 0) {
        java_decimal2(cur, d);
        fprintf(stderr, "%s current ops/sec; ", d);
    }
    if (todo != 0) {
        remaining(est, rem, sizeof rem);
        fprintf(stderr, "est completion in %s", rem);
    }
    fprintf(stderr, "%s\n", summary);
    free(summary);
    return total;
}

typedef struct status_arg {
    run_t *run;
    int64_t interval_ns;
    const char *label;
    bool quit;
} status_arg_t;

/* Waits until every client thread ended (true) or the deadline passed (false). */
static bool wait_clients(run_t *r, status_arg_t *s, int64_t deadline_ns)
{
    pthread_mutex_lock(&r->lock);
    while (r->done < r->threads && !s->quit && util_now_ns() < deadline_ns) {
        int64_t wait = deadline_ns - util_now_ns();
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t ns = ts.tv_nsec + (wait > 0 ? wait : 0);
        ts.tv_sec += ns / 1000000000;
        ts.tv_nsec = ns % 1000000000;
        pthread_cond_timedwait(&r->cond, &r->lock, &ts);
    }
    bool all = r->done >= r->threads || s->quit;
    pthread_mutex_unlock(&r->lock);
    return all;
}

static void *status_main(void *arg)
{
    status_arg_t *s = arg;
    run_t *r = s->run;
    int64_t start_ms = util_wall_ms(), deadline = util_now_ns() + s->interval_ns,
            start_iv = start_ms, last = 0;
    bool all;
    do {
        int64_t now_ms = util_wall_ms();
        last = compute_stats(r, s->label, start_ms, start_iv, now_ms, last);
        all = wait_clients(r, s, deadline);
        start_iv = now_ms;
        deadline += s->interval_ns;
    } while (!all);
    compute_stats(r, s->label, start_ms, start_iv, util_wall_ms(), last);
    return NULL;
}

/* ---- the run ---- */

static int read_settings(run_t *r, int64_t *opcount, int64_t *maxtime, util_err_t *e)
{
    const props_t *p = r->props;
    int64_t threads, target;
    int rc;
    const char *wl = props_get(p, "workload");
    if (wl && strcmp(wl, "site.ycsb.workloads.CoreWorkload") != 0 &&
        strcmp(wl, "com.yahoo.ycsb.workloads.CoreWorkload") != 0)
        return util_fail(
            e, "workload=%s: cte-ycsb implements site.ycsb.workloads.CoreWorkload only", wl);
    const char *db = props_get(p, "db");
    if (!db) return util_fail(e, "no binding: say -db redis or -db cte");
    if (!(r->binding = db_find(db))) return util_fail(e, "Unknown DB %s (redis or cte)", db);
    if ((rc = props_long(p, "threadcount", 1, 1, THREADS_MAX, &threads, e)) ||
        (rc = props_long(p, "target", 0, 0, INT32_MAX, &target, e)) ||
        (rc = props_long(p, "maxexecutiontime", 0, 0, INT32_MAX, maxtime, e)))
        return rc;
    const char *countprop = r->dotransactions             ? "operationcount"
                            : props_get(p, "insertcount") ? "insertcount"
                                                          : "recordcount";
    if ((rc = props_long(p, countprop, 0, 0, INT32_MAX, opcount, e))) return rc;
    if (threads > *opcount && *opcount > 0) {
        threads = *opcount;
        printf("Warning: the threadcount is bigger than recordcount, the threadcount will be "
               "recordcount!\n");
    }
    r->threads = (int)threads;
    r->target_per_ms = target > 0 ? (double)target / (double)threads / 1000.0 : -1;
    return r->binding->check(p, e);
}

static void start_clients(run_t *r, int64_t opcount)
{
    uint64_t seed;
    if (getrandom(&seed, sizeof seed, 0) != sizeof seed) seed = (uint64_t)util_now_ns();
    r->client = util_xcalloc((size_t)r->threads, sizeof *r->client);
    for (int i = 0; i < r->threads; i++) {
        client_t *c = &r->client[i];
        c->run = r;
        c->id = i;
        c->opcount = opcount / r->threads + (i < opcount % r->threads ? 1 : 0);
        c->ct = core_thread_new(r->core, seed + (uint64_t)i * 0x9E3779B97F4A7C15ull);
        c->meas = meas_thread_new(r->meas);
    }
}

/* Starts the client threads, waits for them (or for maxexecutiontime), returns the run time
 * in ms and the operations done. */
static int64_t run_clients(run_t *r, int64_t maxtime, int64_t *opsdone)
{
    int64_t st = util_wall_ms();
    for (int i = 0; i < r->threads; i++) {
        if (pthread_create(&r->client[i].tid, NULL, client_main, &r->client[i]) != 0) {
            fprintf(stderr, "cte-ycsb: cannot start client thread %d\n", i);
            abort();
        }
    }
    if (maxtime > 0) {
        status_arg_t waiter = {.run = r};
        wait_clients(r, &waiter, util_now_ns() + maxtime * 1000000000);
        atomic_store(&r->stop, true);
    }
    *opsdone = 0;
    for (int i = 0; i < r->threads; i++) {
        pthread_join(r->client[i].tid, NULL);
        *opsdone += atomic_load(&r->client[i].opsdone);
    }
    return util_wall_ms() - st;
}

static int export_report(run_t *r, int64_t runtime, int64_t opsdone)
{
    const char *exporter = props_get(r->props, "exporter"),
               *file = props_get(r->props, "exportfile");
    if (exporter &&
        strcmp(exporter, "site.ycsb.measurements.exporter.TextMeasurementsExporter") != 0)
        fprintf(stderr, "Could not find exporter %s, will use default text reporter.\n", exporter);
    FILE *out = file ? fopen(file, "w") : stdout;
    if (!out) {
        fprintf(stderr, "Could not export measurements, error: %s: %s\n", file, strerror(errno));
        return -1;
    }
    meas_export(r->meas, out, runtime, opsdone);
    if (file) fclose(out);
    fflush(stdout);
    return 0;
}

static int run(run_t *r)
{
    util_err_t e;
    int64_t opcount, maxtime, opsdone;
    int rc;
    fprintf(stderr, "Loading workload...\n");
    if ((rc = read_settings(r, &opcount, &maxtime, &e)) ||
        (rc = meas_new(r->props, &r->meas, &e)) ||
        (rc = core_new(r->props, r->dotransactions, &r->core, &e))) {
        fprintf(stderr, "cte-ycsb: %s\n", e.msg);
        return 2;
    }
    fprintf(stderr, "Starting test.\n");
    start_clients(r, opcount);
    int64_t interval;
    if ((rc = props_long(r->props, "status.interval", 10, 1, 86400, &interval, &e))) {
        fprintf(stderr, "cte-ycsb: %s\n", e.msg);
        return 2;
    }
    status_arg_t sa = {r, interval * 1000000000, props_get_or(r->props, "label", ""), false};
    pthread_t status;
    bool with_status = props_bool(r->props, "status", false);
    if (with_status) pthread_create(&status, NULL, status_main, &sa);
    int64_t runtime = run_clients(r, maxtime, &opsdone);
    if (with_status) {
        pthread_mutex_lock(&r->lock);
        sa.quit = true;
        pthread_cond_broadcast(&r->cond);
        pthread_mutex_unlock(&r->lock);
        pthread_join(status, NULL);
    }
    if (export_report(r, runtime, opsdone) < 0) return 1;
    return atomic_load(&r->failed) ? 1 : 0;
}

int main(int argc, char **argv)
{
    fprintf(stderr, "Command line:");
    for (int i = 1; i < argc; i++) fprintf(stderr, " %s", argv[i]);
    fprintf(stderr, "\n");
    run_t r = {.props = props_new()};
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.cond, NULL);
    atomic_init(&r.stop, false);
    atomic_init(&r.failed, 0);
    int rc = cli_parse(argc, argv, r.props, &r.dotransactions);
    if (rc == 0)
        rc = run(&r);
    else if (rc == 3) /* -h */
        rc = 0;
    for (int i = 0; r.client && i < r.threads; i++) core_thread_free(r.client[i].ct);
    free(r.client);
    core_free(r.core);
    meas_free(r.meas);
    props_free(r.props);
    return rc;
}
