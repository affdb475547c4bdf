/* measure.h - YCSB's Measurements: a latency histogram and return-code counts per operation
 * name, the status-line summary and the final report (TextMeasurementsExporter's format).
 *
 * Names are YCSB's: READ, UPDATE, INSERT, SCAN, READ-MODIFY-WRITE, DELETE, CLEANUP, VERIFY;
 * a failed operation's latency goes to <op>-FAILED (or <op>-<STATUS> with
 * reportlatencyforeacherror=true or the status in latencytrackederrors), its status to <op>.
 * With measurement.interval=intended or both, latencies are also taken from the intended start
 * time of a throttled operation (Intended-<op> with both).
 *
 * Threads: each client thread records through its own meas_thread_t (a lock only the status
 * line contends for); meas_summary (the status thread) and meas_export (after every client
 * thread ended) gather them. The report's sections come in the order Java's ConcurrentHashMap
 * iterates the names, so the report reads like YCSB's. */
#ifndef YCSB_MEASURE_H
#define YCSB_MEASURE_H

#include "db.h"
#include "props.h"
#include "util.h"

#include <stdint.h>
#include <stdio.h>

typedef enum meas_op {
    MEAS_READ,
    MEAS_UPDATE,
    MEAS_INSERT,
    MEAS_SCAN,
    MEAS_RMW,
    MEAS_DELETE,
    MEAS_CLEANUP,
    MEAS_VERIFY,
    MEAS_OP_COUNT
} meas_op_t;

typedef struct meas meas_t;
typedef struct meas_thread meas_thread_t;

/* Reads measurementtype (hdrhistogram only), measurement.interval (op, intended, both),
 * hdrhistogram.percentiles (default 95,99), reportlatencyforeacherror and
 * latencytrackederrors. 0 with *out the caller's (meas_free), or -EINVAL with e. */
int meas_new(const props_t *p, meas_t **out, util_err_t *e);
/* Frees m and every meas_thread_t made from it. */
void meas_free(meas_t *m);

/* A recorder for one client thread, owned by m. Any thread may make one. */
meas_thread_t *meas_thread_new(meas_t *m);

/* The intended start time of the thread's next operation (System.nanoTime units, 0: none),
 * as ClientThread's throttle sets it. */
void meas_set_intended(meas_thread_t *t, int64_t ns);
/* Measurements.getIntendedStartTimeNs: 0 with measurement.interval=op; else the intended start
 * set above, or now when none is set. */
int64_t meas_intended_start(meas_thread_t *t);

/* DBWrapper's measure + reportStatus for one operation that started at st_ns (intended at
 * ist_ns) and ended at en_ns. */
void meas_operation(meas_thread_t *t, meas_op_t op, db_status_t status, int64_t ist_ns,
                    int64_t st_ns, int64_t en_ns);
/* Measurements.measure / measureIntended under op's own name (READ-MODIFY-WRITE, VERIFY). */
void meas_latency(meas_thread_t *t, meas_op_t op, int64_t us);
void meas_latency_intended(meas_thread_t *t, meas_op_t op, int64_t us);
/* Measurements.reportStatus alone (VERIFY). */
void meas_status(meas_thread_t *t, meas_op_t op, db_status_t status);
/* DBWrapper.measure alone (CLEANUP: a latency, no status). */
void meas_latency_only(meas_thread_t *t, meas_op_t op, db_status_t status, int64_t ist_ns,
                       int64_t st_ns, int64_t en_ns);

/* Measurements.getSummary: "[READ: Count=.., Max=.., Min=.., Avg=.., 90=.., 99=.., 99.9=..,
 * 99.99=..] " per name, over what was recorded since the last summary. Returns a string the
 * caller frees. */
char *meas_summary(meas_t *m);

/* The report after the run: the [OVERALL] lines, then each name's lines. Call once, after
 * every client thread ended. */
void meas_export(meas_t *m, FILE *out, int64_t runtime_ms, int64_t opsdone);

#endif
