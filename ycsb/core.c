/* core.c - CoreWorkload (see core.h): init from the properties, key and value building, the
 * transactions, and the measuring DB wrapper around the binding.
 *
 * Each function follows its site.ycsb.workloads.CoreWorkload (YCSB 0.17) namesake, in the
 * same order of random draws, but for the bytes of random values: those are made inside the
 * timed call, when YCSB's RandomByteIterators make theirs (fill_values). Where YCSB would
 * crash on a setting (a division by zero, a missing property) we refuse the setting at init
 * with a message instead. Generators: the core_t holds the templates, each core_thread_t its
 * own copies (gen.h, Threads). */
#include "core.h"

#include "java.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FIELDCOUNT_MAX 65536
#define FIELDLENGTH_MAX (64 << 20)
#define RECORD_MAX ((size_t)512 << 20)
#define SCANLENGTH_MAX 1000000
#define HISTOGRAM_FILE_MAX (16u << 20)

enum core_op { OP_READ, OP_UPDATE, OP_INSERT, OP_SCAN, OP_RMW };

struct core {
    char *table;
    size_t fieldcount;
    char **field;
    size_t *field_len;
    size_t *allfields; /* the fields in the order of a Java HashSet of their names */
    gen_num_t fieldlength;
    int64_t *bucket; /* fieldlengthdistribution=histogram */
    size_t fieldlength_max;
    int64_t recordcount, insertstart, insertcount;
    int zeropadding;
    bool ordered, readallfields, readallfieldsbyname, writeallfields, dataintegrity;
    gen_counter_t keysequence;
    gen_discrete_t opchooser;
    gen_acked_t txinsert;
    gen_num_t keychooser, fieldchooser, scanlength;
    _Atomic int64_t sequential;
    int64_t retry_limit, retry_interval;
    bool keep_going;
    db_schema_t schema;
};

struct core_thread {
    core_t *w;
    gen_rng_t rng;
    gen_num_t keychooser, fieldlength, fieldchooser, scanlength;
    char key[CORE_KEY_MAX + 1];
    char *valbuf; /* fieldcount * fieldlength_max */
    char *checkbuf;
    db_value_t *vals;
    size_t unfilled; /* vals[0..unfilled) still want their random bytes (fill_values) */
    size_t *fields;
    db_result_t res;
    char err[512];
};

/* ---- keys and values ---- */

size_t core_key_name(int64_t keynum, int zeropadding, bool ordered, char *out)
{
    if (!ordered) keynum = gen_fnv64(keynum);
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%" PRId64, keynum);
    int fill = zeropadding - n;
    memcpy(out, "user", 4);
    size_t len = 4;
    for (int i = 0; i < fill; i++) out[len++] = '0';
    memcpy(out + len, digits, (size_t)n + 1);
    return len + (size_t)n;
}

void core_random_bytes(gen_rng_t *r, char *out, size_t len)
{
    for (size_t i = 0; i < len; i += 6) {
        uint32_t b = (uint32_t)gen_rng_int(r);
        size_t left = len - i;
        switch (left < 6 ? left : 6) {
        case 6:
            out[i + 5] = (char)(((b >> 25) & 95) + ' ');
            /* fall through */
        case 5:
            out[i + 4] = (char)(((b >> 20) & 63) + ' ');
            /* fall through */
        case 4:
            out[i + 3] = (char)(((b >> 15) & 31) + ' ');
            /* fall through */
        case 3:
            out[i + 2] = (char)(((b >> 10) & 95) + ' ');
            /* fall through */
        case 2:
            out[i + 1] = (char)(((b >> 5) & 63) + ' ');
            /* fall through */
        case 1:
            out[i] = (char)((b & 31) + ' ');
        }
    }
}

void core_deterministic_value(const char *key, size_t klen, const char *field, size_t flen,
                              size_t size, char *out)
{
    /* key ':' field, then ':' and the String.hashCode of everything so far, until size. The
     * hash is kept running (appending c makes it 31 * h + c); the numbers and ':' are ASCII. */
    size_t n = 0, logical = klen + 1 + flen;
    int32_t h = java_string_hash_more(java_string_hash_more(java_string_hash(key, klen), ":", 1),
                                      field, flen);
    for (size_t i = 0; i < klen && n < size; i++) out[n++] = key[i];
    if (n < size) out[n++] = ':';
    for (size_t i = 0; i < flen && n < size; i++) out[n++] = field[i];
    while (logical < size) {
        char num[16];
        h = java_string_hash_more(h, ":", 1);
        int k = snprintf(num, sizeof num, "%" PRId32, h);
        h = java_string_hash_more(h, num, (size_t)k);
        if (n < size) out[n++] = ':';
        for (int i = 0; i < k && n < size; i++) out[n++] = num[i];
        logical += 1 + (size_t)k;
    }
}

/* ---- init ---- */

static int read_histogram(core_t *w, const char *path, int64_t *blocksize, int64_t *nbucket,
                          util_err_t *e)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return util_fail(e, "Couldn't read field length histogram file: %s: %s", path,
                         strerror(errno));
    char line[256];
    int64_t cap = 0, n = 0;
    int rc = 0;
    if (!fgets(line, sizeof line, f) || strncmp(line, "BlockSize\t", 10) != 0 ||
        props_parse_long(line + 10, blocksize) < 0 || *blocksize < 1 ||
        *blocksize > FIELDLENGTH_MAX) {
        rc = util_fail(e, "%s: the first line must be BlockSize<TAB>n (1..%d)", path,
                       FIELDLENGTH_MAX);
        goto done;
    }
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        int64_t idx, count;
        if (!tab || (*tab = '\0', props_parse_long(line, &idx) < 0) ||
            props_parse_long(tab + 1, &count) < 0 || idx != n || count < 0 || count > INT32_MAX ||
            n >= 1000000) {
            rc = util_fail(e, "%s: line %" PRId64 ": expected %" PRId64 "<TAB>count", path, n + 2,
                           n);
            goto done;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            w->bucket = util_xrealloc(w->bucket, (size_t)cap * sizeof *w->bucket);
        }
        w->bucket[n++] = count;
    }
    int64_t area = 0;
    for (int64_t i = 0; i < n; i++) area += w->bucket[i];
    if (n == 0 || area <= 0 || area > INT32_MAX)
        rc = util_fail(e, "%s: the buckets must hold between 1 and 2^31-1 in all", path);
    *nbucket = n;
done:
    fclose(f);
    return rc;
}

static int init_fields(core_t *w, const props_t *p, util_err_t *e)
{
    int64_t fc, fl, minfl;
    int rc;
    if ((rc = props_long(p, "fieldcount", 10, 1, FIELDCOUNT_MAX, &fc, e)) ||
        (rc = props_long(p, "fieldlength", 100, 0, FIELDLENGTH_MAX, &fl, e)) ||
        (rc = props_long(p, "minfieldlength", 1, 0, FIELDLENGTH_MAX, &minfl, e)))
        return rc;
    const char *prefix = props_get_or(p, "fieldnameprefix", "field");
    if (strlen(prefix) > 1024) return util_fail(e, "fieldnameprefix is longer than 1024 bytes");
    w->fieldcount = (size_t)fc;
    w->field = util_xcalloc(w->fieldcount, sizeof *w->field);
    w->field_len = util_xcalloc(w->fieldcount, sizeof *w->field_len);
    int32_t *hash = util_xcalloc(w->fieldcount, sizeof *hash);
    for (size_t i = 0; i < w->fieldcount; i++) {
        char name[1100];
        int n = snprintf(name, sizeof name, "%s%zu", prefix, i);
        w->field[i] = util_xstrdup(name);
        w->field_len[i] = (size_t)n;
        hash[i] = java_string_hash(name, (size_t)n);
    }
    w->allfields = util_xcalloc(w->fieldcount, sizeof *w->allfields);
    java_hash_order(hash, w->fieldcount, java_hashset_capacity(w->fieldcount), w->allfields);
    free(hash);

    const char *dist = props_get_or(p, "fieldlengthdistribution", "constant");
    if (strcmp(dist, "constant") == 0) {
        gen_constant(&w->fieldlength, fl);
        w->fieldlength_max = (size_t)fl;
    } else if (strcmp(dist, "uniform") == 0 || strcmp(dist, "zipfian") == 0) {
        if (minfl > fl)
            return util_fail(e, "minfieldlength %" PRId64 " exceeds fieldlength %" PRId64, minfl,
                             fl);
        if (dist[0] == 'u')
            gen_uniform(&w->fieldlength, minfl, fl);
        else
            gen_zipfian(&w->fieldlength, minfl, fl);
        w->fieldlength_max = (size_t)fl;
    } else if (strcmp(dist, "histogram") == 0) {
        int64_t bs = 0, nb = 0;
        const char *file = props_get_or(p, "fieldlengthhistogram", "hist.txt");
        if ((rc = read_histogram(w, file, &bs, &nb, e))) return rc;
        if (nb * bs > FIELDLENGTH_MAX)
            return util_fail(e, "%s: field lengths above %d bytes", file, FIELDLENGTH_MAX);
        gen_histogram(&w->fieldlength, bs, w->bucket, nb);
        w->fieldlength_max = (size_t)(nb * bs);
    } else {
        return util_fail(e, "Unknown field length distribution \"%s\"", dist);
    }
    if (w->fieldlength_max > RECORD_MAX / w->fieldcount)
        return util_fail(e, "a record of fieldcount %zu x fieldlength %zu exceeds %zu bytes",
                         w->fieldcount, w->fieldlength_max, RECORD_MAX);
    gen_uniform(&w->fieldchooser, 0, (int64_t)w->fieldcount - 1);
    return 0;
}

static int init_operations(core_t *w, const props_t *p, bool dotransactions, util_err_t *e)
{
    static const struct {
        const char *name;
        double def;
        int op;
    } prop[] = {{"readproportion", 0.95, OP_READ},
                {"updateproportion", 0.05, OP_UPDATE},
                {"insertproportion", 0.0, OP_INSERT},
                {"scanproportion", 0.0, OP_SCAN},
                {"readmodifywriteproportion", 0.0, OP_RMW}};
    gen_discrete_init(&w->opchooser);
    for (size_t i = 0; i < sizeof prop / sizeof prop[0]; i++) {
        double v;
        int rc = props_double(p, prop[i].name, prop[i].def, 0, 1e9, &v, e);
        if (rc) return rc;
        if (v > 0) gen_discrete_add(&w->opchooser, v, prop[i].op);
    }
    if (dotransactions && w->opchooser.n == 0)
        return util_fail(e, "every operation proportion is 0: nothing to run");
    return 0;
}

static int init_keychooser(core_t *w, const props_t *p, bool dotransactions, util_err_t *e)
{
    const char *dist = props_get_or(p, "requestdistribution", "uniform");
    int64_t lo = w->insertstart, hi = w->insertstart + w->insertcount - 1;
    int rc;
    if (strcmp(dist, "uniform") == 0 || strcmp(dist, "sequential") == 0) {
        if (dotransactions && hi < lo)
            return util_fail(e, "insertcount is 0: no keys to choose from");
        if (dist[0] == 'u')
            gen_uniform(&w->keychooser, lo, hi);
        else
            gen_sequential(&w->keychooser, &w->sequential, lo, hi);
    } else if (strcmp(dist, "exponential") == 0) {
        double pct, frac;
        if ((rc = props_double(p, "exponential.percentile", 95, 0, 100, &pct, e)) ||
            (rc = props_double(p, "exponential.frac", 0.8571428571, 0, 1e9, &frac, e)))
            return rc;
        gen_exponential(&w->keychooser, pct, (double)w->recordcount * frac);
    } else if (strcmp(dist, "zipfian") == 0) {
        double insertproportion;
        int64_t opcount = 0;
        if ((rc = props_double(p, "insertproportion", 0.0, 0, 1e9, &insertproportion, e)))
            return rc;
        if (dotransactions && !props_get(p, "operationcount"))
            return util_fail(e, "requestdistribution=zipfian needs operationcount");
        if ((rc = props_long(p, "operationcount", 0, 0, INT32_MAX, &opcount, e))) return rc;
        int32_t expectednewkeys = java_d2i((double)(int32_t)opcount * insertproportion * 2.0);
        gen_scrambled(&w->keychooser, w->insertstart,
                      w->insertstart + w->insertcount + expectednewkeys);
    } else if (strcmp(dist, "latest") == 0) {
        gen_latest(&w->keychooser, &w->txinsert);
    } else if (strcmp(dist, "hotspot") == 0) {
        double hotset, hotopn;
        if ((rc = props_double(p, "hotspotdatafraction", 0.2, -1e9, 1e9, &hotset, e)) ||
            (rc = props_double(p, "hotspotopnfraction", 0.8, -1e9, 1e9, &hotopn, e)))
            return rc;
        gen_hotspot(&w->keychooser, lo, hi, hotset, hotopn);
        const gen_num_t *g = &w->keychooser;
        if (dotransactions && ((g->b <= 0 && g->x > 0) || (g->c <= 0 && g->x < 1)))
            return util_fail(e,
                             "hotspot: hotspotdatafraction %g of %" PRId64 " keys leaves the %s "
                             "set empty",
                             hotset, hi - lo + 1, g->b <= 0 ? "hot" : "cold");
    } else {
        return util_fail(e, "Unknown request distribution \"%s\"", dist);
    }
    return 0;
}

static int init_scanlength(core_t *w, const props_t *p, util_err_t *e)
{
    int64_t lo, hi;
    int rc;
    if ((rc = props_long(p, "minscanlength", 1, 0, SCANLENGTH_MAX, &lo, e)) ||
        (rc = props_long(p, "maxscanlength", 1000, 0, SCANLENGTH_MAX, &hi, e)))
        return rc;
    if (hi < lo)
        return util_fail(e, "maxscanlength %" PRId64 " is below minscanlength %" PRId64, hi, lo);
    const char *dist = props_get_or(p, "scanlengthdistribution", "uniform");
    if (strcmp(dist, "uniform") == 0)
        gen_uniform(&w->scanlength, lo, hi);
    else if (strcmp(dist, "zipfian") == 0)
        gen_zipfian(&w->scanlength, lo, hi);
    else
        return util_fail(e, "Distribution \"%s\" not allowed for scan length", dist);
    return 0;
}

static int init_counts(core_t *w, const props_t *p, util_err_t *e)
{
    int rc;
    int64_t zp;
    if ((rc = props_long(p, "recordcount", 0, 0, INT64_MAX / 2, &w->recordcount, e))) return rc;
    if (w->recordcount == 0) w->recordcount = INT32_MAX;
    if ((rc = props_long(p, "insertstart", 0, 0, INT64_MAX / 2, &w->insertstart, e)) ||
        (rc = props_long(p, "insertcount", w->recordcount - w->insertstart, 0, INT64_MAX / 2,
                         &w->insertcount, e)) ||
        (rc = props_long(p, "zeropadding", 1, 0, CORE_ZEROPAD_MAX, &zp, e)))
        return rc;
    if (w->recordcount < w->insertstart + w->insertcount)
        return util_fail(e, "Invalid combination of insertstart, insertcount and recordcount: "
                            "recordcount must be bigger than insertstart + insertcount.");
    w->zeropadding = (int)zp;
    return 0;
}

static int init_flags(core_t *w, const props_t *p, util_err_t *e)
{
    int rc;
    w->table = util_xstrdup(props_get_or(p, "table", "usertable"));
    w->readallfields = props_bool(p, "readallfields", true);
    w->readallfieldsbyname = props_bool(p, "readallfieldsbyname", false);
    w->writeallfields = props_bool(p, "writeallfields", false);
    w->dataintegrity = props_bool(p, "dataintegrity", false);
    if (w->dataintegrity && w->fieldlength.kind != GEN_CONSTANT)
        return util_fail(e, "Must have constant field size to check data integrity.");
    if (w->dataintegrity) printf("Data integrity is enabled.\n");
    w->ordered = strcmp(props_get_or(p, "insertorder", "hashed"), "hashed") != 0;
    if ((rc = props_long(p, "core_workload_insertion_retry_limit", 0, 0, INT32_MAX, &w->retry_limit,
                         e)) ||
        (rc = props_long(p, "core_workload_insertion_retry_interval", 3, 0, 86400,
                         &w->retry_interval, e)))
        return rc;
    w->keep_going = props_bool(p, "core_workload_insertion_keep_going_on_error", false);
    return 0;
}

int core_new(const props_t *p, bool dotransactions, core_t **out, util_err_t *e)
{
    *out = NULL;
    core_t *w = util_xcalloc(1, sizeof *w);
    int rc;
    if ((rc = init_fields(w, p, e)) || (rc = init_counts(w, p, e)) || (rc = init_flags(w, p, e)))
        goto fail;
    gen_counter_init(&w->keysequence, w->insertstart);
    if ((rc = gen_acked_init(&w->txinsert, w->recordcount))) {
        util_fail(e, "out of memory");
        w->txinsert.window = NULL;
        goto fail;
    }
    atomic_init(&w->sequential, 0);
    if ((rc = init_operations(w, p, dotransactions, e)) ||
        (rc = init_keychooser(w, p, dotransactions, e)) || (rc = init_scanlength(w, p, e)))
        goto fail;
    w->schema = (db_schema_t){w->table, w->fieldcount, (const char *const *)w->field, w->field_len,
                              w->fieldlength_max};
    *out = w;
    return 0;
fail:
    core_free(w);
    return rc;
}

void core_free(core_t *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->fieldcount && w->field; i++) free(w->field[i]);
    free(w->field);
    free(w->field_len);
    free(w->allfields);
    free(w->bucket);
    free(w->table);
    if (w->txinsert.window) gen_acked_deinit(&w->txinsert);
    free(w);
}

const db_schema_t *core_schema(const core_t *w)
{
    return &w->schema;
}

/* ---- threads ---- */

core_thread_t *core_thread_new(core_t *w, uint64_t seed)
{
    core_thread_t *t = util_xcalloc(1, sizeof *t);
    t->w = w;
    gen_rng_seed(&t->rng, seed);
    t->keychooser = w->keychooser;
    t->fieldlength = w->fieldlength;
    t->fieldchooser = w->fieldchooser;
    t->scanlength = w->scanlength;
    size_t rec = w->fieldcount * w->fieldlength_max;
    t->valbuf = util_xmalloc(rec);
    t->checkbuf = util_xmalloc(w->fieldlength_max);
    t->vals = util_xcalloc(w->fieldcount, sizeof *t->vals);
    t->fields = util_xcalloc(w->fieldcount, sizeof *t->fields);
    return t;
}

void core_thread_free(core_thread_t *t)
{
    if (!t) return;
    free(t->valbuf);
    free(t->checkbuf);
    free(t->vals);
    free(t->fields);
    db_result_free(&t->res);
    free(t);
}

const char *core_thread_error(const core_thread_t *t)
{
    return t->err;
}

/* ---- the measuring wrapper (DBWrapper) ---- */

/* After an operation: -1 with the reason when the binding's connection broke, else 0. */
static int check_broken(core_thread_t *t, core_db_t *db)
{
    const char *why = db->b->broken(db->db);
    if (!why) return 0;
    snprintf(t->err, sizeof t->err, "%s", why);
    return -1;
}

static db_status_t w_read(core_thread_t *t, core_db_t *db, const char *key, size_t klen,
                          const size_t *fields, size_t nf)
{
    int64_t ist = meas_intended_start(db->meas), st = util_now_ns();
    t->res.n = 0;
    db_status_t s = db->b->read(db->db, key, klen, fields, nf, &t->res);
    meas_operation(db->meas, MEAS_READ, s, ist, st, util_now_ns());
    return s;
}

/* YCSB's values are RandomByteIterators, which make their bytes only when the binding reads
 * them, i.e. inside DBWrapper's timed call (RedisClient turns them into Strings for Jedis
 * there); so the bytes of build_values are made here, after the clock started. A retried
 * insert sends the bytes of its first attempt. */
static void fill_values(core_thread_t *t)
{
    for (size_t i = 0; i < t->unfilled; i++)
        core_random_bytes(&t->rng, (char *)t->vals[i].data, t->vals[i].len);
    t->unfilled = 0;
}

static db_status_t w_write(core_thread_t *t, core_db_t *db, meas_op_t op, const char *key,
                           size_t klen, size_t n)
{
    int64_t ist = meas_intended_start(db->meas), st = util_now_ns();
    fill_values(t);
    db_status_t s = op == MEAS_INSERT ? db->b->insert(db->db, key, klen, t->vals, n)
                                      : db->b->update(db->db, key, klen, t->vals, n);
    meas_operation(db->meas, op, s, ist, st, util_now_ns());
    return s;
}

/* ---- transactions ---- */

static size_t field_length(core_thread_t *t)
{
    return (size_t)gen_next_long(&t->fieldlength, &t->rng);
}

/* One field's value at slot i of the thread's buffer: the deterministic value (dataintegrity;
 * YCSB builds those as Strings up front), or its length, the random bytes coming in w_write. */
static void build_value(core_thread_t *t, size_t i, size_t field, const char *key, size_t klen)
{
    core_t *w = t->w;
    char *buf = t->valbuf + i * w->fieldlength_max;
    size_t len;
    if (w->dataintegrity) {
        len = (size_t)(uint32_t)gen_next_int(&t->fieldlength, &t->rng);
        core_deterministic_value(key, klen, w->field[field], w->field_len[field], len, buf);
    } else {
        len = field_length(t);
        t->unfilled = i + 1;
    }
    t->vals[i] = (db_value_t){field, buf, len};
}

/* buildValues (every field) or buildSingleValue (one chosen field); returns the count. */
static size_t build_values(core_thread_t *t, bool all, const char *key, size_t klen)
{
    t->unfilled = 0;
    if (!all) {
        size_t f = (size_t)gen_next_int(&t->fieldchooser, &t->rng);
        build_value(t, 0, f, key, klen);
        return 1;
    }
    for (size_t i = 0; i < t->w->fieldcount; i++) build_value(t, i, i, key, klen);
    return t->w->fieldcount;
}

/* CoreWorkload.nextKeynum. */
static int64_t next_keynum(core_thread_t *t)
{
    core_t *w = t->w;
    int64_t k;
    if (t->keychooser.kind == GEN_EXPONENTIAL) {
        do k = gen_acked_last(&w->txinsert) - gen_next_int(&t->keychooser, &t->rng);
        while (k < 0);
    } else {
        do k = gen_next_int(&t->keychooser, &t->rng);
        while (k > gen_acked_last(&w->txinsert));
    }
    return k;
}

static size_t next_key(core_thread_t *t)
{
    return core_key_name(next_keynum(t), t->w->zeropadding, t->w->ordered, t->key);
}

/* The fields a read asks for: one chosen field unless readallfields; all of them by name
 * (in HashSet order) when byname; else none (NULL: every field). */
static const size_t *read_fields(core_thread_t *t, bool byname, size_t *n)
{
    if (!t->w->readallfields) {
        t->fields[0] = (size_t)gen_next_int(&t->fieldchooser, &t->rng);
        *n = 1;
        return t->fields;
    }
    if (byname) {
        *n = t->w->fieldcount;
        return t->w->allfields;
    }
    *n = 0;
    return NULL;
}

/* CoreWorkload.verifyRow over the cells of the last read. */
static void verify_row(core_thread_t *t, core_db_t *db, const char *key, size_t klen)
{
    int64_t st = util_now_ns();
    db_status_t s = t->res.n ? DB_OK : DB_ERROR;
    for (size_t i = 0; i < t->res.n; i++) {
        const db_cell_t *c = &t->res.cell[i];
        size_t size = (size_t)(uint32_t)gen_next_int(&t->fieldlength, &t->rng);
        if (size > t->w->fieldlength_max) size = t->w->fieldlength_max;
        core_deterministic_value(key, klen, c->name, c->name_len, size, t->checkbuf);
        if (!c->data || c->len != size || memcmp(c->data, t->checkbuf, size) != 0) {
            s = DB_UNEXPECTED_STATE;
            break;
        }
    }
    int64_t en = util_now_ns();
    meas_latency(db->meas, MEAS_VERIFY, (int32_t)(uint32_t)(uint64_t)(en - st) / 1000);
    meas_status(db->meas, MEAS_VERIFY, s);
}

static int tx_read(core_thread_t *t, core_db_t *db)
{
    size_t klen = next_key(t), nf;
    const size_t *f = read_fields(t, t->w->dataintegrity || t->w->readallfieldsbyname, &nf);
    w_read(t, db, t->key, klen, f, nf);
    if (t->w->dataintegrity) verify_row(t, db, t->key, klen);
    return check_broken(t, db);
}

static int tx_update(core_thread_t *t, core_db_t *db)
{
    size_t klen = next_key(t);
    size_t n = build_values(t, t->w->writeallfields, t->key, klen);
    w_write(t, db, MEAS_UPDATE, t->key, klen, n);
    return check_broken(t, db);
}

static int tx_rmw(core_thread_t *t, core_db_t *db)
{
    size_t klen = next_key(t), nf;
    const size_t *f = read_fields(t, false, &nf);
    size_t n = build_values(t, t->w->writeallfields, t->key, klen);
    int64_t ist = meas_intended_start(db->meas), st = util_now_ns();
    w_read(t, db, t->key, klen, f, nf);
    w_write(t, db, MEAS_UPDATE, t->key, klen, n);
    int64_t en = util_now_ns();
    if (t->w->dataintegrity) verify_row(t, db, t->key, klen);
    meas_latency(db->meas, MEAS_RMW, (int32_t)(uint32_t)(uint64_t)((en - st) / 1000));
    meas_latency_intended(db->meas, MEAS_RMW, (int32_t)(uint32_t)(uint64_t)((en - ist) / 1000));
    return check_broken(t, db);
}

static int tx_scan(core_thread_t *t, core_db_t *db)
{
    size_t klen = next_key(t), nf, nrec = 0;
    int len = gen_next_int(&t->scanlength, &t->rng);
    const size_t *f = read_fields(t, false, &nf);
    int64_t ist = meas_intended_start(db->meas), st = util_now_ns();
    db_status_t s = db->b->scan(db->db, t->key, klen, len, f, nf, &nrec);
    meas_operation(db->meas, MEAS_SCAN, s, ist, st, util_now_ns());
    return check_broken(t, db);
}

static int tx_insert(core_thread_t *t, core_db_t *db)
{
    core_t *w = t->w;
    int64_t keynum = gen_acked_next(&w->txinsert);
    size_t klen = core_key_name(keynum, w->zeropadding, w->ordered, t->key);
    size_t n = build_values(t, true, t->key, klen);
    w_write(t, db, MEAS_INSERT, t->key, klen, n);
    if (gen_acked_ack(&w->txinsert, keynum) < 0) {
        snprintf(t->err, sizeof t->err, "Too many unacknowledged insertion keys.");
        return -1;
    }
    return check_broken(t, db);
}

int core_do_transaction(core_thread_t *t, core_db_t *db)
{
    int rc;
    switch (gen_discrete_next(&t->w->opchooser, &t->rng)) {
    case OP_READ:
        rc = tx_read(t, db);
        break;
    case OP_UPDATE:
        rc = tx_update(t, db);
        break;
    case OP_INSERT:
        rc = tx_insert(t, db);
        break;
    case OP_SCAN:
        rc = tx_scan(t, db);
        break;
    case OP_RMW:
        rc = tx_rmw(t, db);
        break;
    default:
        return 0;
    }
    return rc < 0 ? -1 : 1;
}

int core_do_insert(core_thread_t *t, core_db_t *db)
{
    core_t *w = t->w;
    int32_t keynum = (int32_t)(uint32_t)(uint64_t)gen_counter_next(&w->keysequence);
    size_t klen = core_key_name(keynum, w->zeropadding, w->ordered, t->key);
    size_t n = build_values(t, true, t->key, klen);
    db_status_t s;
    for (int64_t retries = 0;;) {
        s = w_write(t, db, MEAS_INSERT, t->key, klen, n);
        if (db_status_ok(s) || check_broken(t, db) < 0) break;
        if (++retries <= w->retry_limit) {
            fprintf(stderr, "Retrying insertion, retry count: %" PRId64 "\n", retries);
            double f = 0.8 + 0.4 * gen_rng_double(&t->rng);
            int32_t ms = java_d2i(1000.0 * (double)w->retry_interval * f);
            util_sleep_until(util_now_ns() + (int64_t)ms * 1000000);
        } else {
            fprintf(stderr,
                    "Error inserting, not retrying any more. number of attempts: %" PRId64
                    "Insertion Retry Limit: %" PRId64 "\n",
                    retries, w->retry_limit);
            break;
        }
    }
    if (check_broken(t, db) < 0) return -1;
    return (db_status_ok(s) || w->keep_going) ? 1 : 0;
}
