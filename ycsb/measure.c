/* measure.c - YCSB's Measurements over HdrHistogram-compatible histograms (see measure.h).
 *
 * A measurement is a slot: (map, op, variant), where map 0 holds latencies from the actual
 * start and map 1 those from the intended start, and variant is 0 (<op>), 1 (<op>-FAILED) or
 * 2 + status (<op>-<STATUS>). A slot exists once something was measured or reported under its
 * name; m->seq records the order slots came to exist (the insertion order Java's map sees).
 * Each client thread keeps its own histogram per slot (allocated on first use) under its own
 * lock, and its own return-code counts (read only after it ended). meas_summary and
 * meas_export move the threads' histograms into per-slot totals, as YCSB's Recorder does with
 * its interval histograms. */
#include "measure.h"

#include "hist.h"
#include "java.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NVARIANT (2 + DB_STATUS_COUNT)
#define NSLOT (2 * MEAS_OP_COUNT * NVARIANT)
#define MAX_PCT 16

enum { INTERVAL_OP, INTERVAL_INTENDED, INTERVAL_BOTH };

static const char *const op_name[MEAS_OP_COUNT] = {
    "READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE", "CLEANUP", "VERIFY"};

struct meas_thread {
    meas_t *m;
    pthread_mutex_t lock;
    hist_t *h[NSLOT];
    uint64_t ret[2][MEAS_OP_COUNT][DB_STATUS_COUNT];
    int64_t intended;
};

struct meas {
    int interval;
    double pct[MAX_PCT];
    int npct;
    bool each_error, tracked[DB_STATUS_COUNT];
    pthread_mutex_t lock; /* slot creation, totals, the thread list */
    _Atomic int seq[NSLOT];
    _Atomic int ret_seq[2][MEAS_OP_COUNT][DB_STATUS_COUNT];
    int nextseq;
    hist_t *total[NSLOT];
    meas_thread_t **thread;
    size_t nthread, cap;
};

static int slot_of(int map, meas_op_t op, int variant)
{
    return (map * MEAS_OP_COUNT + (int)op) * NVARIANT + variant;
}

static void slot_name(const meas_t *m, int slot, char *out, size_t cap)
{
    int map = slot / (MEAS_OP_COUNT * NVARIANT), op = slot / NVARIANT % MEAS_OP_COUNT,
        variant = slot % NVARIANT;
    const char *pre = map == 1 && m->interval == INTERVAL_BOTH ? "Intended-" : "";
    if (variant == 0)
        snprintf(out, cap, "%s%s", pre, op_name[op]);
    else if (variant == 1)
        snprintf(out, cap, "%s%s-FAILED", pre, op_name[op]);
    else
        snprintf(out, cap, "%s%s-%s", pre, op_name[op], db_status_name(variant - 2));
}

/* ---- setup ---- */

static int parse_percentiles(meas_t *m, const char *s)
{
    m->npct = 0;
    const char *c = s;
    for (;;) {
        const char *comma = strchr(c, ',');
        size_t n = comma ? (size_t)(comma - c) : strlen(c);
        char item[64];
        double v;
        if (n >= sizeof item || m->npct == MAX_PCT) return -1;
        memcpy(item, c, n);
        item[n] = '\0';
        if (props_parse_double(item, &v) < 0 || !(v >= 0 && v <= 100)) return -1;
        m->pct[m->npct++] = v;
        if (!comma) return 0;
        c = comma + 1;
    }
}

static int parse_tracked(meas_t *m, const char *s, util_err_t *e)
{
    const char *c = s;
    while (*c) {
        const char *comma = strchr(c, ',');
        size_t n = comma ? (size_t)(comma - c) : strlen(c);
        int found = 0;
        for (int st = 0; st < DB_STATUS_COUNT; st++) {
            if (strlen(db_status_name(st)) == n && memcmp(db_status_name(st), c, n) == 0) {
                m->tracked[st] = true;
                found = 1;
            }
        }
        if (!found && n)
            return util_fail(e, "latencytrackederrors: unknown status '%.*s'", (int)n, c);
        if (!comma) break;
        c = comma + 1;
    }
    return 0;
}

int meas_new(const props_t *p, meas_t **out, util_err_t *e)
{
    *out = NULL;
    const char *type = props_get_or(p, "measurementtype", "hdrhistogram");
    if (strcmp(type, "hdrhistogram") != 0)
        return util_fail(e, "measurementtype=%s is not supported (cte-ycsb measures hdrhistogram)",
                         type);
    const char *iv = props_get_or(p, "measurement.interval", "op");
    int interval = strcmp(iv, "op") == 0         ? INTERVAL_OP
                   : strcmp(iv, "intended") == 0 ? INTERVAL_INTENDED
                   : strcmp(iv, "both") == 0     ? INTERVAL_BOTH
                                                 : -1;
    if (interval < 0)
        return util_fail(e, "unknown measurement.interval=%s (op, intended or both)", iv);
    meas_t *m = util_xcalloc(1, sizeof *m);
    m->interval = interval;
    const char *pct = props_get_or(p, "hdrhistogram.percentiles", "95,99");
    if (parse_percentiles(m, pct) < 0) {
        fprintf(stderr,
                "[WARN] Couldn't read hdrhistogram.percentiles value: '%s', the default of "
                "'95,99' will be used.\n",
                pct);
        parse_percentiles(m, "95,99");
    }
    m->each_error = props_bool(p, "reportlatencyforeacherror", false);
    const char *tracked = props_get(p, "latencytrackederrors");
    if (!m->each_error && tracked && parse_tracked(m, tracked, e) < 0) {
        free(m);
        return -EINVAL;
    }
    pthread_mutex_init(&m->lock, NULL);
    *out = m;
    return 0;
}

void meas_free(meas_t *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->nthread; i++) {
        for (int s = 0; s < NSLOT; s++) free(m->thread[i]->h[s]);
        pthread_mutex_destroy(&m->thread[i]->lock);
        free(m->thread[i]);
    }
    for (int s = 0; s < NSLOT; s++) free(m->total[s]);
    free(m->thread);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

meas_thread_t *meas_thread_new(meas_t *m)
{
    meas_thread_t *t = util_xcalloc(1, sizeof *t);
    t->m = m;
    pthread_mutex_init(&t->lock, NULL);
    pthread_mutex_lock(&m->lock);
    if (m->nthread == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->thread = util_xrealloc(m->thread, m->cap * sizeof *m->thread);
    }
    m->thread[m->nthread++] = t;
    pthread_mutex_unlock(&m->lock);
    return t;
}

/* ---- recording ---- */

static void ensure_slot(meas_t *m, int slot)
{
    if (atomic_load_explicit(&m->seq[slot], memory_order_acquire)) return;
    pthread_mutex_lock(&m->lock);
    if (!atomic_load(&m->seq[slot])) atomic_store(&m->seq[slot], ++m->nextseq);
    pthread_mutex_unlock(&m->lock);
}

static void record(meas_thread_t *t, int slot, int64_t us)
{
    ensure_slot(t->m, slot);
    pthread_mutex_lock(&t->lock);
    if (!t->h[slot]) {
        t->h[slot] = util_xmalloc(sizeof(hist_t));
        hist_init(t->h[slot]);
    }
    /* (int) of the microseconds, as Java casts; a negative one is dropped (HdrHistogram
     * refuses it, YCSB prints an error and goes on). */
    int32_t v = (int32_t)(uint32_t)(uint64_t)us;
    if (v >= 0) hist_record(t->h[slot], v);
    pthread_mutex_unlock(&t->lock);
}

void meas_set_intended(meas_thread_t *t, int64_t ns)
{
    if (t->m->interval != INTERVAL_OP) t->intended = ns;
}

int64_t meas_intended_start(meas_thread_t *t)
{
    if (t->m->interval == INTERVAL_OP) return 0;
    return t->intended ? t->intended : util_now_ns();
}

static int variant_of(const meas_t *m, db_status_t s)
{
    if (db_status_ok(s)) return 0;
    return (m->each_error || m->tracked[s]) ? 2 + (int)s : 1;
}

void meas_latency_only(meas_thread_t *t, meas_op_t op, db_status_t status, int64_t ist_ns,
                       int64_t st_ns, int64_t en_ns)
{
    int v = variant_of(t->m, status);
    if (t->m->interval != INTERVAL_INTENDED) record(t, slot_of(0, op, v), (en_ns - st_ns) / 1000);
    if (t->m->interval != INTERVAL_OP) record(t, slot_of(1, op, v), (en_ns - ist_ns) / 1000);
}

void meas_status(meas_thread_t *t, meas_op_t op, db_status_t status)
{
    meas_t *m = t->m;
    int map = m->interval == INTERVAL_INTENDED ? 1 : 0;
    ensure_slot(m, slot_of(map, op, 0));
    if (t->ret[map][op][status]++ == 0 && !atomic_load(&m->ret_seq[map][op][status])) {
        pthread_mutex_lock(&m->lock);
        if (!atomic_load(&m->ret_seq[map][op][status]))
            atomic_store(&m->ret_seq[map][op][status], ++m->nextseq);
        pthread_mutex_unlock(&m->lock);
    }
}

void meas_operation(meas_thread_t *t, meas_op_t op, db_status_t status, int64_t ist_ns,
                    int64_t st_ns, int64_t en_ns)
{
    meas_latency_only(t, op, status, ist_ns, st_ns, en_ns);
    meas_status(t, op, status);
}

void meas_latency(meas_thread_t *t, meas_op_t op, int64_t us)
{
    if (t->m->interval != INTERVAL_INTENDED) record(t, slot_of(0, op, 0), us);
}

void meas_latency_intended(meas_thread_t *t, meas_op_t op, int64_t us)
{
    if (t->m->interval != INTERVAL_OP) record(t, slot_of(1, op, 0), us);
}

/* ---- gathering ---- */

/* Moves every thread's counts for slot into interval (emptied first) and into the total. */
static void harvest(meas_t *m, int slot, hist_t *interval)
{
    hist_reset(interval);
    for (size_t i = 0; i < m->nthread; i++) {
        meas_thread_t *t = m->thread[i];
        pthread_mutex_lock(&t->lock);
        if (t->h[slot]) {
            hist_add(interval, t->h[slot]);
            hist_reset(t->h[slot]);
        }
        pthread_mutex_unlock(&t->lock);
    }
    if (!m->total[slot]) {
        m->total[slot] = util_xmalloc(sizeof(hist_t));
        hist_init(m->total[slot]);
    }
    hist_add(m->total[slot], interval);
}

/* The existing slots of map in the order Java's ConcurrentHashMap iterates their names.
 * Returns how many. */
static int slots_in_order(meas_t *m, int map, int *out)
{
    int n = 0, first = map * MEAS_OP_COUNT * NVARIANT, end = first + MEAS_OP_COUNT * NVARIANT;
    for (int s = first; s < end; s++) {
        if (!atomic_load(&m->seq[s])) continue;
        int j = n++;
        while (j > 0 && atomic_load(&m->seq[out[j - 1]]) > atomic_load(&m->seq[s])) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = s;
    }
    int32_t hash[NSLOT];
    size_t order[NSLOT];
    int copy[NSLOT];
    for (int i = 0; i < n; i++) {
        char name[96];
        slot_name(m, out[i], name, sizeof name);
        hash[i] = java_string_hash(name, strlen(name));
        copy[i] = out[i];
    }
    java_hash_order(hash, (size_t)n, java_chm_capacity((size_t)n), order);
    for (int i = 0; i < n; i++) out[i] = copy[order[i]];
    return n;
}

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf_t;

static void sb_printf(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf_t *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k >= 0 && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = b->cap * 2 + (size_t)(k > 0 ? k : 0) + 256;
        b->s = util_xrealloc(b->s, b->cap);
    }
}

char *meas_summary(meas_t *m)
{
    sbuf_t b = {util_xmalloc(256), 0, 256};
    b.s[0] = '\0';
    hist_t *iv = util_xmalloc(sizeof(hist_t));
    hist_init(iv);
    pthread_mutex_lock(&m->lock);
    for (int map = 0; map < 2; map++) {
        int slot[NSLOT], n = slots_in_order(m, map, slot);
        for (int i = 0; i < n; i++) {
            char name[96], avg[JAVA_DOUBLE_STR_MAX];
            slot_name(m, slot[i], name, sizeof name);
            harvest(m, slot[i], iv);
            java_decimal2(hist_mean(iv), avg);
            sb_printf(&b,
                      "[%s: Count=%llu, Max=%lld, Min=%lld, Avg=%s, 90=%lld, 99=%lld, 99.9=%lld, "
                      "99.99=%lld] ",
                      name, (unsigned long long)hist_count(iv), (long long)hist_max(iv),
                      (long long)hist_min(iv), avg, (long long)hist_percentile(iv, 90),
                      (long long)hist_percentile(iv, 99), (long long)hist_percentile(iv, 99.9),
                      (long long)hist_percentile(iv, 99.99));
        }
    }
    pthread_mutex_unlock(&m->lock);
    free(iv);
    return b.s;
}

/* OneMeasurementHdrHistogram.ordinal: 95 -> "95th", 99.9 -> "99.9". */
static void ordinal(double p, char *out)
{
    static const char *const suffix[10] = {"th", "st", "nd", "rd", "th",
                                           "th", "th", "th", "th", "th"};
    if (p == (double)(int)p) {
        int j = (int)p;
        sprintf(out, "%d%s", j, (j % 100 >= 11 && j % 100 <= 13) ? "th" : suffix[j % 10]);
    } else {
        java_double_str(p, out);
    }
}

/* Status.hashCode(). */
static int32_t status_hash(db_status_t s)
{
    const char *d = db_status_desc(s), *n = db_status_name(s);
    uint32_t h = 31u * 1u + (uint32_t)java_string_hash(d, strlen(d));
    return (int32_t)(31u * h + (uint32_t)java_string_hash(n, strlen(n)));
}

static void export_returns(meas_t *m, FILE *out, const char *name, int map, int op)
{
    int st[DB_STATUS_COUNT], n = 0;
    uint64_t count[DB_STATUS_COUNT] = {0};
    for (int s = 0; s < DB_STATUS_COUNT; s++) {
        for (size_t i = 0; i < m->nthread; i++) count[s] += m->thread[i]->ret[map][op][s];
        if (!count[s]) continue;
        int j = n++; /* by first report, then in ConcurrentHashMap's order */
        while (j > 0 && m->ret_seq[map][op][st[j - 1]] > m->ret_seq[map][op][s]) {
            st[j] = st[j - 1];
            j--;
        }
        st[j] = s;
    }
    int32_t hash[DB_STATUS_COUNT];
    size_t order[DB_STATUS_COUNT];
    for (int i = 0; i < n; i++) hash[i] = status_hash(st[i]);
    java_hash_order(hash, (size_t)n, java_chm_capacity((size_t)n), order);
    for (int i = 0; i < n; i++)
        fprintf(out, "[%s], Return=%s, %llu\n", name, db_status_name(st[order[i]]),
                (unsigned long long)count[st[order[i]]]);
}

void meas_export(meas_t *m, FILE *out, int64_t runtime_ms, int64_t opsdone)
{
    char d[JAVA_DOUBLE_STR_MAX];
    fprintf(out, "[OVERALL], RunTime(ms), %lld\n", (long long)runtime_ms);
    java_double_str(1000.0 * (double)opsdone / (double)runtime_ms, d);
    fprintf(out, "[OVERALL], Throughput(ops/sec), %s\n", d);
    /* A C client has no garbage collector: YCSB's GC lines, with what is true here. */
    fprintf(out, "[TOTAL_GCs], Count, 0\n[TOTAL_GC_TIME], Time(ms), 0\n");
    java_double_str(0.0 / (double)runtime_ms * 100, d);
    fprintf(out, "[TOTAL_GC_TIME_%%], Time(%%), %s\n", d);
    hist_t *iv = util_xmalloc(sizeof(hist_t));
    hist_init(iv);
    pthread_mutex_lock(&m->lock);
    for (int map = 0; map < 2; map++) {
        int slot[NSLOT], n = slots_in_order(m, map, slot);
        for (int i = 0; i < n; i++) {
            char name[96], pname[JAVA_DOUBLE_STR_MAX + 4];
            slot_name(m, slot[i], name, sizeof name);
            harvest(m, slot[i], iv);
            const hist_t *h = m->total[slot[i]];
            fprintf(out, "[%s], Operations, %llu\n", name, (unsigned long long)hist_count(h));
            java_double_str(hist_mean(h), d);
            fprintf(out, "[%s], AverageLatency(us), %s\n", name, d);
            fprintf(out, "[%s], MinLatency(us), %lld\n", name, (long long)hist_min(h));
            fprintf(out, "[%s], MaxLatency(us), %lld\n", name, (long long)hist_max(h));
            for (int k = 0; k < m->npct; k++) {
                ordinal(m->pct[k], pname);
                fprintf(out, "[%s], %sPercentileLatency(us), %lld\n", name, pname,
                        (long long)hist_percentile(h, m->pct[k]));
            }
            if (slot[i] % NVARIANT == 0)
                export_returns(m, out, name, map, slot[i] / NVARIANT % MEAS_OP_COUNT);
        }
    }
    pthread_mutex_unlock(&m->lock);
    free(iv);
}
