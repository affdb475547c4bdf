/* core.h - YCSB's CoreWorkload: the properties that shape a run, how keys, fields and values
 * are chosen, and the five transactions (read, update, insert, scan, read-modify-write), each
 * done through a binding and measured as YCSB's DBWrapper measures it.
 *
 * Properties (YCSB's names and defaults): table, fieldcount, fieldnameprefix, fieldlength,
 * minfieldlength, fieldlengthdistribution (constant, uniform, zipfian, histogram with
 * fieldlengthhistogram), recordcount, operationcount, insertstart, insertcount, zeropadding,
 * insertorder (hashed, ordered), readallfields, readallfieldsbyname, writeallfields,
 * dataintegrity, readproportion, updateproportion, insertproportion, scanproportion,
 * readmodifywriteproportion, requestdistribution (uniform, zipfian, latest, hotspot,
 * sequential, exponential), hotspotdatafraction, hotspotopnfraction, exponential.percentile,
 * exponential.frac, minscanlength, maxscanlength, scanlengthdistribution (uniform, zipfian),
 * core_workload_insertion_retry_limit, core_workload_insertion_retry_interval,
 * core_workload_insertion_keep_going_on_error.
 *
 * Threads: a core_t is shared by every client thread (its counters are atomic); each thread
 * works through its own core_thread_t. */
#ifndef YCSB_CORE_H
#define YCSB_CORE_H

#include "db.h"
#include "gen.h"
#include "measure.h"
#include "props.h"
#include "util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest key buildKeyName makes: "user", zeropadding (at most CORE_ZEROPAD_MAX) zeros or the
 * digits of a long, whichever is longer. */
#define CORE_ZEROPAD_MAX 256
#define CORE_KEY_MAX (4 + CORE_ZEROPAD_MAX + 21)

typedef struct core core_t;
typedef struct core_thread core_thread_t;

/* CoreWorkload.init. dotransactions says whether this is a run (true) or a load: a run needs
 * what only a run uses (operationcount with the zipfian distribution, a choice of operation).
 * 0 with *out the caller's (core_free), or -EINVAL / -errno with e saying why. */
int core_new(const props_t *p, bool dotransactions, core_t **out, util_err_t *e);
void core_free(core_t *w);
/* What a record looks like, for the bindings; owned by w. */
const db_schema_t *core_schema(const core_t *w);

/* CoreWorkload.buildKeyName into out (CORE_KEY_MAX + 1 bytes): "user" + the key number (its
 * FNV-64 hash unless ordered), left-padded with zeros to zeropadding digits. Returns the
 * length. */
size_t core_key_name(int64_t keynum, int zeropadding, bool ordered, char *out);

/* The binding instance a thread works on, and where its measurements go. */
typedef struct core_db {
    const db_binding_t *b;
    void *db;
    meas_thread_t *meas;
} core_db_t;

/* A thread's state; seed picks its random sequence. Freed with core_thread_free. */
core_thread_t *core_thread_new(core_t *w, uint64_t seed);
void core_thread_free(core_thread_t *t);

/* doInsert (load) and doTransaction (run). Each returns 1 to go on, 0 when the thread should
 * stop (a load insert failed and was not retried or excused), or -1 on a fatal error (the
 * connection broke; too many unacknowledged inserts) with the reason in core_thread_error. */
int core_do_insert(core_thread_t *t, core_db_t *db);
int core_do_transaction(core_thread_t *t, core_db_t *db);
const char *core_thread_error(const core_thread_t *t);

/* Exposed for the tests: CoreWorkload.buildDeterministicValue for a value of size bytes, into
 * out (size bytes). */
void core_deterministic_value(const char *key, size_t klen, const char *field, size_t flen,
                              size_t size, char *out);
/* RandomByteIterator's bytes: len bytes of printable ASCII from r. */
void core_random_bytes(gen_rng_t *r, char *out, size_t len);

#endif
