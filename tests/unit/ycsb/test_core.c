/* Tests for ycsb/core.c: CoreWorkload against an in-memory binding that records what it is
 * asked: which keys a load inserts, which operations a run mixes, which fields reads and
 * updates touch, that reads only pick keys that exist (latest included), data integrity, the
 * settings refused at init, and that a write's latency includes making its values. */
#include "core.h"

#include "tests/leak.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAP 8192

typedef struct rec {
    char key[CORE_KEY_MAX + 1];
    char *field[16];
    size_t len[16];
} rec_t;

static struct {
    rec_t rec[CAP];
    size_t nrec;
    size_t reads, updates, inserts, scans, missing, read_fields, update_fields, scanned;
    size_t last_nfields, last_scan;
    size_t field_hits[16];
} mem;

static void mem_reset(void)
{
    for (size_t i = 0; i < mem.nrec; i++)
        for (int f = 0; f < 16; f++) free(mem.rec[i].field[f]);
    memset(&mem, 0, sizeof mem);
}

static rec_t *find(const char *key)
{
    for (size_t i = 0; i < mem.nrec; i++)
        if (strcmp(mem.rec[i].key, key) == 0) return &mem.rec[i];
    return NULL;
}

static const db_schema_t *schema;

static int m_check(const props_t *p, util_err_t *e)
{
    return 0;
}
static int m_open(void **db, const props_t *p, const db_schema_t *s, util_err_t *e)
{
    schema = s;
    *db = &mem;
    return 0;
}
static void m_close(void *db) {}

static db_status_t m_read(void *db, const char *key, size_t klen, const size_t *fields, size_t nf,
                          db_result_t *out)
{
    rec_t *r = find(key);
    mem.reads++;
    if (!r) {
        mem.missing++;
        return DB_ERROR;
    }
    size_t n = fields ? nf : schema->fieldcount;
    mem.read_fields += n;
    mem.last_nfields = n;
    for (size_t i = 0; i < n; i++) {
        size_t f = fields ? fields[i] : i;
        db_result_add(out, schema->field[f], schema->field_len[f], r->field[f], r->len[f]);
    }
    return DB_OK;
}

static void put(rec_t *r, const db_value_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r->field[v[i].field]);
        r->field[v[i].field] = malloc(v[i].len + 1);
        memcpy(r->field[v[i].field], v[i].data, v[i].len);
        r->len[v[i].field] = v[i].len;
        mem.field_hits[v[i].field]++;
    }
}

static db_status_t m_update(void *db, const char *key, size_t klen, const db_value_t *v, size_t n)
{
    rec_t *r = find(key);
    mem.updates++;
    mem.update_fields += n;
    if (!r) {
        mem.missing++;
        return DB_ERROR;
    }
    put(r, v, n);
    return DB_OK;
}

static db_status_t m_insert(void *db, const char *key, size_t klen, const db_value_t *v, size_t n)
{
    cr_assert_lt(mem.nrec, CAP);
    cr_assert_null(find(key), "%s inserted twice", key);
    rec_t *r = &mem.rec[mem.nrec++];
    memcpy(r->key, key, klen + 1);
    mem.inserts++;
    put(r, v, n);
    return DB_OK;
}

static db_status_t m_scan(void *db, const char *key, size_t klen, int count, const size_t *fields,
                          size_t nf, size_t *nrec)
{
    mem.scans++;
    mem.last_scan = (size_t)count;
    if (!find(key)) mem.missing++;
    *nrec = 1;
    mem.scanned += (size_t)count;
    return DB_OK;
}

static db_status_t m_remove(void *db, const char *key, size_t klen)
{
    return DB_NOT_IMPLEMENTED;
}
static const char *m_broken(void *db)
{
    return NULL;
}

static const db_binding_t mem_binding = {"mem",  m_check,  m_open,   m_close,  m_read,
                                         m_scan, m_update, m_insert, m_remove, m_broken};

typedef struct fixture {
    props_t *p;
    core_t *w;
    meas_t *m;
    core_thread_t *t;
    core_db_t db;
} fixture_t;

static void open_fixture(fixture_t *f, bool run, const char *const *kv)
{
    util_err_t e;
    f->p = props_new();
    for (; *kv; kv += 2) props_set(f->p, kv[0], kv[1]);
    cr_assert_eq(core_new(f->p, run, &f->w, &e), 0, "%s", e.msg);
    cr_assert_eq(meas_new(f->p, &f->m, &e), 0, "%s", e.msg);
    f->t = core_thread_new(f->w, 42);
    f->db = (core_db_t){&mem_binding, NULL, meas_thread_new(f->m)};
    cr_assert_eq(mem_binding.open(&f->db.db, f->p, core_schema(f->w), &e), 0);
}

static void close_fixture(fixture_t *f)
{
    core_thread_free(f->t);
    meas_free(f->m);
    core_free(f->w);
    props_free(f->p);
}

static void load(const char *const *kv, int n)
{
    fixture_t f;
    open_fixture(&f, false, kv);
    for (int i = 0; i < n; i++) cr_assert_eq(core_do_insert(f.t, &f.db), 1);
    close_fixture(&f);
}

static void run(const char *const *kv, int n)
{
    fixture_t f;
    open_fixture(&f, true, kv);
    for (int i = 0; i < n; i++) cr_assert_eq(core_do_transaction(f.t, &f.db), 1);
    close_fixture(&f);
}

LTest(core, load_inserts_the_hashed_keys_of_its_range)
{
    mem_reset();
    const char *kv[] = {"recordcount", "100", "insertstart", "40", "insertcount", "30", NULL};
    load(kv, 30);
    cr_assert_eq(mem.inserts, 30);
    for (int k = 40; k < 70; k++) {
        char key[CORE_KEY_MAX + 1];
        core_key_name(k, 1, false, key);
        rec_t *r = find(key);
        cr_assert_not_null(r, "%s (keynum %d) was inserted", key, k);
        for (int fld = 0; fld < 10; fld++) cr_assert_eq(r->len[fld], 100);
    }
    mem_reset();
}

LTest(core, ordered_inserts_are_zero_padded)
{
    mem_reset();
    const char *kv[] = {"recordcount", "3", "insertorder", "ordered", "zeropadding", "6",
                        "fieldcount",  "2", "fieldlength", "7",       NULL};
    load(kv, 3);
    cr_assert_not_null(find("user000000"));
    cr_assert_not_null(find("user000002"));
    cr_assert_eq(find("user000001")->len[1], 7);
    mem_reset();
}

LTest(core, a_run_mixes_operations_by_proportion_on_existing_keys)
{
    mem_reset();
    const char *lkv[] = {"recordcount", "500", NULL};
    load(lkv, 500);
    const char *kv[] = {"recordcount",
                        "500",
                        "operationcount",
                        "4000",
                        "readproportion",
                        "0.5",
                        "updateproportion",
                        "0.5",
                        "requestdistribution",
                        "zipfian",
                        NULL};
    run(kv, 4000);
    cr_assert_eq(mem.missing, 0, "zipfian keys beyond the records are skipped");
    cr_assert_eq(mem.reads + mem.updates, 4000);
    cr_assert(mem.reads > 1800 && mem.reads < 2200, "%zu reads", mem.reads);
    cr_assert_eq(mem.read_fields, mem.reads * 10, "readallfields reads every field");
    cr_assert_eq(mem.update_fields, mem.updates, "an update writes one field");
    mem_reset();
}

LTest(core, reads_and_writes_the_fields_the_properties_ask_for)
{
    mem_reset();
    const char *lkv[] = {"recordcount",
                         "50",
                         "fieldlengthdistribution",
                         "uniform",
                         "minfieldlength",
                         "5",
                         "fieldlength",
                         "9",
                         NULL};
    load(lkv, 50);
    for (size_t i = 0; i < mem.nrec; i++)
        for (int fld = 0; fld < 10; fld++)
            cr_assert(mem.rec[i].len[fld] >= 5 && mem.rec[i].len[fld] <= 9);
    const char *kv[] = {"recordcount",
                        "50",
                        "readallfields",
                        "false",
                        "writeallfields",
                        "true",
                        "readproportion",
                        "0.5",
                        "updateproportion",
                        "0.5",
                        NULL};
    run(kv, 1000);
    cr_assert_eq(mem.read_fields, mem.reads, "one chosen field per read");
    cr_assert_eq(mem.update_fields, mem.updates * 10, "writeallfields");
    mem_reset();
}

LTest(core, latest_reads_follow_the_inserts)
{
    mem_reset();
    const char *lkv[] = {"recordcount", "200", NULL};
    load(lkv, 200);
    const char *kv[] = {"recordcount",
                        "200",
                        "operationcount",
                        "3000",
                        "readproportion",
                        "0.8",
                        "updateproportion",
                        "0",
                        "insertproportion",
                        "0.2",
                        "requestdistribution",
                        "latest",
                        NULL};
    run(kv, 3000);
    cr_assert_eq(mem.missing, 0);
    cr_assert(mem.inserts > 200 + 500, "%zu", mem.inserts);
    /* the newest record is read far more than a uniform choice would */
    mem_reset();
}

LTest(core, scans_start_at_existing_keys_with_a_length_in_range)
{
    mem_reset();
    const char *lkv[] = {"recordcount", "100", NULL};
    load(lkv, 100);
    const char *kv[] = {"recordcount",
                        "100",
                        "operationcount",
                        "500",
                        "readproportion",
                        "0",
                        "updateproportion",
                        "0",
                        "scanproportion",
                        "1",
                        "minscanlength",
                        "3",
                        "maxscanlength",
                        "5",
                        "requestdistribution",
                        "uniform",
                        NULL};
    run(kv, 500);
    cr_assert_eq(mem.scans, 500);
    cr_assert_eq(mem.missing, 0);
    cr_assert(mem.scanned >= 1500 && mem.scanned <= 2500);
    mem_reset();
}

LTest(core, read_modify_write_reads_then_updates)
{
    mem_reset();
    const char *lkv[] = {"recordcount", "100", NULL};
    load(lkv, 100);
    const char *kv[] = {"recordcount",
                        "100",
                        "operationcount",
                        "300",
                        "readproportion",
                        "0",
                        "updateproportion",
                        "0",
                        "readmodifywriteproportion",
                        "1",
                        NULL};
    run(kv, 300);
    cr_assert_eq(mem.reads, 300);
    cr_assert_eq(mem.updates, 300);
    mem_reset();
}

LTest(core, dataintegrity_verifies_what_it_wrote)
{
    mem_reset();
    const char *kv[] = {"recordcount",
                        "40",
                        "dataintegrity",
                        "true",
                        "fieldlength",
                        "64",
                        "operationcount",
                        "400",
                        "readproportion",
                        "0.7",
                        "updateproportion",
                        "0.3",
                        NULL};
    fixture_t f;
    open_fixture(&f, false, kv);
    for (int i = 0; i < 40; i++) cr_assert_eq(core_do_insert(f.t, &f.db), 1);
    close_fixture(&f);
    open_fixture(&f, true, kv);
    for (int i = 0; i < 400; i++) cr_assert_eq(core_do_transaction(f.t, &f.db), 1);
    char *text;
    size_t len;
    FILE *out = open_memstream(&text, &len);
    meas_export(f.m, out, 1, 1);
    fclose(out);
    cr_assert(strstr(text, "[VERIFY], Return=OK, "), "%s", text);
    cr_assert_null(strstr(text, "UNEXPECTED_STATE"), "%s", text);
    char want[64];
    snprintf(want, sizeof want, "[VERIFY], Operations, %zu\n", mem.reads);
    cr_assert(strstr(text, want), "%s", text);
    free(text);
    close_fixture(&f);
    /* a corrupted field is caught */
    for (size_t i = 0; i < mem.nrec; i++) mem.rec[i].field[3][10] ^= 1;
    const char *kv2[] = {"recordcount",
                         "40",
                         "dataintegrity",
                         "true",
                         "fieldlength",
                         "64",
                         "operationcount",
                         "50",
                         "readproportion",
                         "1",
                         "updateproportion",
                         "0",
                         NULL};
    open_fixture(&f, true, kv2);
    for (int i = 0; i < 50; i++) cr_assert_eq(core_do_transaction(f.t, &f.db), 1);
    out = open_memstream(&text, &len);
    meas_export(f.m, out, 1, 1);
    fclose(out);
    cr_assert(strstr(text, "[VERIFY], Return=UNEXPECTED_STATE, "), "%s", text);
    cr_assert_null(strstr(text, "[VERIFY], Return=OK"), "%s", text);
    free(text);
    close_fixture(&f);
    mem_reset();
}

LTest(core, init_refuses_settings_ycsb_would_crash_on)
{
    static const char *const bad[][12] = {
        {"fieldlengthdistribution", "bogus", NULL},
        {"requestdistribution", "normal", NULL},
        {"recordcount", "10", "insertstart", "5", "insertcount", "6", NULL},
        {"requestdistribution", "zipfian", NULL}, /* a run needs operationcount */
        {"requestdistribution", "hotspot", "hotspotdatafraction", "0", NULL},
        {"readproportion", "0", "updateproportion", "0", NULL},
        {"fieldcount", "0", NULL},
        {"fieldcount", "10", "fieldlength", "60000000", NULL},
        {"dataintegrity", "true", "fieldlengthdistribution", "uniform", NULL},
        {"maxscanlength", "2", "minscanlength", "3", NULL},
        {"zeropadding", "100000", NULL},
        {"recordcount", "ten", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        props_t *p = props_new();
        for (const char *const *kv = bad[i]; *kv; kv += 2) props_set(p, kv[0], kv[1]);
        core_t *w;
        util_err_t e = {{0}};
        cr_assert_eq(core_new(p, true, &w, &e), -EINVAL, "case %zu", i);
        cr_assert_null(w);
        cr_assert_neq(e.msg[0], '\0', "case %zu says why", i);
        props_free(p);
    }
}

LTest(core, field_lengths_follow_a_histogram_file)
{
    mem_reset();
    char path[] = "/tmp/test_ycsb_hist_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    const char *text = "BlockSize\t10\n0\t1\n1\t3\n2\t0\n";
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    const char *kv[] = {
        "recordcount", "400", "fieldlengthdistribution", "histogram", "fieldlengthhistogram",
        path,          NULL};
    load(kv, 400);
    size_t tens = 0;
    for (size_t i = 0; i < mem.nrec; i++)
        for (int fld = 0; fld < 10; fld++) {
            size_t n = mem.rec[i].len[fld];
            cr_assert(n == 10 || n == 20, "%zu", n);
            tens += n == 10;
        }
    /* HistogramGenerator draws number in [0, 4): 10 while number - 1 <= 0 (two of the four
     * draws: YCSB counts one more than the bucket's weight), else 20 */
    cr_assert_float_eq((double)tens / 4000, 0.5, 0.03, "%zu of 4000", tens);
    FILE *f = fopen(path, "w");
    fputs("BlockSize\t10\n0\t1\n2\t3\n", f); /* indexes must count 0, 1, 2 ... */
    fclose(f);
    props_t *p = props_new();
    for (const char *const *k = kv; *k; k += 2) props_set(p, k[0], k[1]);
    core_t *w;
    util_err_t e;
    cr_assert_eq(core_new(p, false, &w, &e), -EINVAL);
    cr_assert(strstr(e.msg, "line 3"), "%s", e.msg);
    props_free(p);
    unlink(path);
    mem_reset();
}

/* A binding that takes no time: what a write's latency holds is then the client's own work. It
 * checks that the values it is given are filled (printable ASCII at both ends). */
static size_t null_writes;

static db_status_t n_write(void *db, const char *key, size_t klen, const db_value_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cr_assert_gt(v[i].len, 1);
        cr_assert(v[i].data[0] >= ' ' && v[i].data[v[i].len - 1] >= ' ', "field %zu is filled",
                  v[i].field);
    }
    null_writes++;
    return DB_OK;
}

static const db_binding_t null_binding = {"null", m_check, m_open,  m_close,  m_read,
                                          m_scan, n_write, n_write, m_remove, m_broken};

/* The "[op], AverageLatency(us), x" of a report. */
static double avg_latency(meas_t *m, const char *op)
{
    char *text, want[64];
    size_t len;
    FILE *out = open_memstream(&text, &len);
    meas_export(m, out, 1, 1);
    fclose(out);
    snprintf(want, sizeof want, "[%s], AverageLatency(us), ", op);
    const char *at = strstr(text, want);
    cr_assert_not_null(at, "%s", text);
    double v = strtod(at + strlen(want), NULL);
    free(text);
    return v;
}

/* YCSB's values are RandomByteIterators that make their bytes when the binding reads them,
 * inside DBWrapper's timed call: a write's latency includes making its values. With 32 MB of
 * values and a binding that does nothing, making them is nearly all an operation costs, so the
 * latency reported must be most of the time the operation took. */
LTest(core, a_writes_latency_includes_making_its_random_values)
{
    const char *kv[] = {"recordcount",
                        "4",
                        "fieldcount",
                        "4",
                        "fieldlength",
                        "8000000",
                        "operationcount",
                        "3",
                        "readproportion",
                        "0",
                        "updateproportion",
                        "1",
                        "writeallfields",
                        "true",
                        NULL};
    for (int run = 0; run < 2; run++) {
        fixture_t f;
        open_fixture(&f, run, kv);
        f.db.b = &null_binding;
        null_writes = 0;
        int64_t st = util_now_ns();
        for (int i = 0; i < 3; i++)
            cr_assert_eq(run ? core_do_transaction(f.t, &f.db) : core_do_insert(f.t, &f.db), 1);
        double took_us = (double)(util_now_ns() - st) / 1000 / 3;
        cr_assert_eq(null_writes, 3);
        double lat = avg_latency(f.m, run ? "UPDATE" : "INSERT");
        cr_assert_geq(lat, 0.5 * took_us, "%s: %.0f us reported of %.0f us per operation",
                      run ? "update" : "insert", lat, took_us);
        close_fixture(&f);
    }
}
