/* Tests for ycsb/measure.c and ycsb/hist.c: HdrHistogram's bucket arithmetic and read-outs,
 * YCSB's report and status-summary formats, the section order (Java's ConcurrentHashMap
 * order, printed by OpenJDK 17 for the same names) and the naming of failed operations. */
#include "hist.h"
#include "measure.h"

#include "tests/leak.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(hist, buckets_as_hdrhistogram_with_three_digits)
{
    cr_assert_eq(hist_index(0), 0);
    cr_assert_eq(hist_index(2047), 2047);
    cr_assert_eq(hist_index(2048), 2048);
    cr_assert_eq(hist_index(2049), 2048, "2048 and 2049 share a bucket");
    cr_assert_eq(hist_lowest_equivalent(2049), 2048);
    cr_assert_eq(hist_highest_equivalent(2048), 2049);
    cr_assert_eq(hist_lowest_equivalent(9500), 9496);
    cr_assert_eq(hist_highest_equivalent(9500), 9503);
    cr_assert_eq(hist_index(HIST_MAX), HIST_LEN - 1);
    cr_assert_eq(hist_highest_equivalent(1000000), 1000447);
}

LTest(hist, reads_out_as_hdrhistogram_2_1_4)
{
    hist_t *h = malloc(sizeof *h);
    hist_init(h);
    cr_assert_eq(hist_min(h), INT64_MAX, "empty: Long.MAX_VALUE");
    cr_assert_eq(hist_max(h), 0);
    cr_assert(isnan(hist_mean(h)));
    cr_assert_eq(hist_percentile(h, 95), 0);
    for (int v = 1; v <= 10000; v++) hist_record(h, v);
    cr_assert_eq(hist_count(h), 10000);
    cr_assert_eq(hist_min(h), 1);
    cr_assert_eq(hist_max(h), 10007);
    cr_assert_eq(hist_percentile(h, 95), 9503);
    cr_assert_eq(hist_percentile(h, 99), 9903);
    cr_assert_eq(hist_percentile(h, 50), 5003);
    cr_assert_eq(hist_percentile(h, 0), 1);
    /* 1..2047 exact, then buckets of 2 (2048..4095), 4 and 8: the middle of each is counted */
    double sum = 0;
    for (int v = 1; v <= 10000; v++)
        sum += (double)(hist_lowest_equivalent(v) +
                        (hist_highest_equivalent(v) - hist_lowest_equivalent(v) + 1) / 2);
    cr_assert_float_eq(hist_mean(h), sum / 10000, 1e-9);
    hist_record(h, 0);
    cr_assert_eq(hist_min(h), 0);
    hist_t *g = malloc(sizeof *g);
    hist_init(g);
    hist_record(g, 123456);
    hist_add(h, g);
    cr_assert_eq(hist_count(h), 10002);
    cr_assert_eq(hist_max(h), hist_highest_equivalent(123456));
    hist_reset(h);
    cr_assert_eq(hist_count(h), 0);
    cr_assert_eq(hist_percentile(h, 99), 0);
    free(g);
    free(h);
}

static props_t *props_of(const char *k1, const char *v1)
{
    props_t *p = props_new();
    if (k1) props_set(p, k1, v1);
    return p;
}

/* Records operations: READ 100, 200, 300 us OK and one 5000 us ERROR, UPDATE 50 us, CLEANUP. */
static void record_some(meas_t *m)
{
    meas_thread_t *t = meas_thread_new(m);
    int64_t us = 1000;
    meas_operation(t, MEAS_READ, DB_OK, 0, 0, 100 * us);
    meas_operation(t, MEAS_UPDATE, DB_OK, 0, 0, 50 * us);
    meas_operation(t, MEAS_READ, DB_OK, 0, 0, 200 * us);
    meas_operation(t, MEAS_READ, DB_ERROR, 0, 0, 5000 * us);
    meas_operation(t, MEAS_READ, DB_OK, 0, 1000, 300 * us + 1000);
    meas_latency_only(t, MEAS_CLEANUP, DB_OK, 0, 0, 7 * us);
}

static char *export(meas_t *m, int64_t runtime, int64_t ops)
{
    char *text;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    meas_export(m, f, runtime, ops);
    fclose(f);
    return text;
}

LTest(meas, exports_ycsbs_report_in_its_order)
{
    props_t *p = props_of(NULL, NULL);
    meas_t *m;
    util_err_t e;
    cr_assert_eq(meas_new(p, &m, &e), 0);
    record_some(m);
    char *text = export(m, 1000, 10);
    const char *want = "[OVERALL], RunTime(ms), 1000\n"
                       "[OVERALL], Throughput(ops/sec), 10.0\n"
                       "[TOTAL_GCs], Count, 0\n"
                       "[TOTAL_GC_TIME], Time(ms), 0\n"
                       "[TOTAL_GC_TIME_%], Time(%), 0.0\n"
                       "[READ], Operations, 3\n"
                       "[READ], AverageLatency(us), 200.0\n"
                       "[READ], MinLatency(us), 100\n"
                       "[READ], MaxLatency(us), 300\n"
                       "[READ], 95thPercentileLatency(us), 300\n"
                       "[READ], 99thPercentileLatency(us), 300\n"
                       "[READ], Return=OK, 3\n"
                       "[READ], Return=ERROR, 1\n"
                       "[CLEANUP], Operations, 1\n"
                       "[CLEANUP], AverageLatency(us), 7.0\n"
                       "[CLEANUP], MinLatency(us), 7\n"
                       "[CLEANUP], MaxLatency(us), 7\n"
                       "[CLEANUP], 95thPercentileLatency(us), 7\n"
                       "[CLEANUP], 99thPercentileLatency(us), 7\n"
                       "[UPDATE], Operations, 1\n"
                       "[UPDATE], AverageLatency(us), 50.0\n"
                       "[UPDATE], MinLatency(us), 50\n"
                       "[UPDATE], MaxLatency(us), 50\n"
                       "[UPDATE], 95thPercentileLatency(us), 50\n"
                       "[UPDATE], 99thPercentileLatency(us), 50\n"
                       "[UPDATE], Return=OK, 1\n"
                       "[READ-FAILED], Operations, 1\n"
                       "[READ-FAILED], AverageLatency(us), 5002.0\n" /* 5000..5003 share a bucket */
                       "[READ-FAILED], MinLatency(us), 5000\n"
                       "[READ-FAILED], MaxLatency(us), 5003\n"
                       "[READ-FAILED], 95thPercentileLatency(us), 5003\n"
                       "[READ-FAILED], 99thPercentileLatency(us), 5003\n";
    cr_assert_str_eq(text, want);
    free(text);
    meas_free(m);
    props_free(p);
}

LTest(meas, summary_covers_what_came_since_the_last_one)
{
    props_t *p = props_of(NULL, NULL);
    meas_t *m;
    util_err_t e;
    cr_assert_eq(meas_new(p, &m, &e), 0);
    record_some(m);
    char *s = meas_summary(m);
    cr_assert_str_eq(
        s, "[READ: Count=3, Max=300, Min=100, Avg=200, 90=300, 99=300, 99.9=300, 99.99=300] "
           "[CLEANUP: Count=1, Max=7, Min=7, Avg=7, 90=7, 99=7, 99.9=7, 99.99=7] "
           "[UPDATE: Count=1, Max=50, Min=50, Avg=50, 90=50, 99=50, 99.9=50, 99.99=50] "
           "[READ-FAILED: Count=1, Max=5003, Min=5000, Avg=5002, 90=5003, 99=5003, "
           "99.9=5003, 99.99=5003] ");
    free(s);
    s = meas_summary(m);
    cr_assert(strstr(s, "[READ: Count=0, Max=0, Min=9223372036854775807, Avg=NaN, 90=0,"), "%s", s);
    free(s);
    char *text = export(m, 1000, 10);
    cr_assert(strstr(text, "[READ], Operations, 3\n"), "the summaries' counts stay in the total");
    free(text);
    meas_free(m);
    props_free(p);
}

LTest(meas, names_failures_per_status_and_reads_its_percentiles)
{
    props_t *p = props_of("reportlatencyforeacherror", "true");
    props_set(p, "hdrhistogram.percentiles", "50,99.9,11");
    meas_t *m;
    util_err_t e;
    cr_assert_eq(meas_new(p, &m, &e), 0);
    meas_thread_t *t = meas_thread_new(m);
    meas_operation(t, MEAS_READ, DB_NOT_FOUND, 0, 0, 10000);
    meas_operation(t, MEAS_RMW, DB_OK, 0, 0, 20000);
    char *text = export(m, 0, 0);
    cr_assert(strstr(text, "[OVERALL], Throughput(ops/sec), NaN\n"), "%s", text);
    cr_assert(strstr(text, "[READ-NOT_FOUND], Operations, 1\n"), "%s", text);
    cr_assert(strstr(text, "[READ-NOT_FOUND], 50thPercentileLatency(us), 10\n"), "%s", text);
    cr_assert(strstr(text, "[READ-NOT_FOUND], 99.9PercentileLatency(us), 10\n"), "%s", text);
    cr_assert(strstr(text, "[READ-NOT_FOUND], 11thPercentileLatency(us), 10\n"), "%s", text);
    /* the status is counted under READ, which holds no latency */
    cr_assert(strstr(text,
                     "[READ], Operations, 0\n[READ], AverageLatency(us), NaN\n"
                     "[READ], MinLatency(us), 9223372036854775807\n[READ], MaxLatency(us), 0\n"),
              "%s", text);
    cr_assert(strstr(text, "[READ], Return=NOT_FOUND, 1\n"), "%s", text);
    cr_assert(strstr(text, "[READ-MODIFY-WRITE], Return=OK, 1\n"), "%s", text);
    free(text);
    meas_free(m);
    props_free(p);
}

LTest(meas, intended_latencies_count_from_the_throttles_deadline)
{
    props_t *p = props_of("measurement.interval", "both");
    meas_t *m;
    util_err_t e;
    cr_assert_eq(meas_new(p, &m, &e), 0);
    meas_thread_t *t = meas_thread_new(m);
    meas_operation(t, MEAS_UPDATE, DB_OK, 1000000, 3000000, 4000000); /* 1 ms late, 1 ms long */
    char *text = export(m, 10, 1);
    cr_assert(strstr(text, "[UPDATE], AverageLatency(us), 1000.0\n"), "%s", text);
    cr_assert(strstr(text, "[Intended-UPDATE], AverageLatency(us), 3001.0\n"), "%s", text);
    cr_assert(strstr(text, "[Intended-UPDATE], MinLatency(us), 3000\n"), "%s", text);
    free(text);
    meas_free(m);
    props_free(p);
}

LTest(meas, refuses_what_it_does_not_measure)
{
    static const char *const bad[][2] = {{"measurementtype", "timeseries"},
                                         {"measurement.interval", "sometimes"},
                                         {"latencytrackederrors", "ERROR,NOPE"}};
    for (size_t i = 0; i < 3; i++) {
        props_t *p = props_of(bad[i][0], bad[i][1]);
        meas_t *m;
        util_err_t e;
        cr_assert_eq(meas_new(p, &m, &e), -EINVAL, "%s", bad[i][0]);
        cr_assert(strstr(e.msg, bad[i][0]) || strstr(e.msg, bad[i][1]), "%s", e.msg);
        props_free(p);
    }
}
