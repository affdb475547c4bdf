/* db_cte.c - the cte binding: each record is one blob in a tag, with every field at a fixed
 * offset, so an update writes only the field's bytes and a read of chosen fields reads only
 * their ranges.
 *
 * Layout of the blob <key> in tag <table>:
 *
 *   offset                size             what
 *   0                     4                FF 59 43 01: a binary record ("\xffYC", version 1)
 *   4 + i * slot          header           field i's length, u32 little-endian (header 4), or
 *                                          nothing when every field has fieldlength bytes
 *                                          (fieldlengthdistribution=constant: header 0)
 *   4 + i * slot + header fieldlength_max  field i's bytes (the first <length> of them count)
 *
 * slot = header + fieldlength_max; fieldcount slots follow the head. The head's first byte is
 * not UTF-8, so cte-server's search index (search-skip-binary, on by default) leaves the
 * records out, as it does any binary blob: YCSB's values are random bytes, not text anyone
 * searches, and indexing them would cost memory and a re-index of the record on every update.
 * The layout is written once into the blob _ycsb_layout of the same tag, and every later open
 * checks it, so a run cannot read records of another shape.
 *
 * Scans read the tag's names in order from the server: TLIST <table> FROM <startkey> COUNT n
 * lists the names from startkey on (inclusive, bytewise, which is YCSB's key order for its
 * keys), from the per-tag name index cte-server's search catalogue keeps for every tag (with or
 * without search-enabled), so the binding keeps no index of its own: a record costs its blob
 * alone, and an insert and a scan one round trip less.
 *
 *   insert  TPUT table key 0 <whole record>
 *   update  TPUT table key <offset of the field> <header + value> per run of adjacent fields
 *   read    TGET table key (all fields), or TGET of the fields' span when they are dense,
 *           else one TGET per field, in flight together
 *   scan    TLIST table FROM startkey COUNT n+1 (one more: _ycsb_layout sorts before YCSB's
 *           keys but may fall in a range of other keys; it is skipped), then the reads of the
 *           first n names, up to cte.depth at once
 *   delete  TDEL table key
 *
 * Properties: cte.uri (tcp://host:port, unix:PATH or shm:PATH; default tcp://127.0.0.1:6379),
 * cte.depth (requests in flight within one operation, 1..1024, default 16), cte.timeout (ms,
 * default 2000; 0 waits for ever). One connection per client thread; each operation completes
 * before the next starts (YCSB's model), the depth only overlaps the requests of one operation. */
#include "db.h"

#include "cte/cte.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAYOUT_BLOB "_ycsb_layout"
#define REC_HEAD 4
static const char rec_magic[REC_HEAD] = {'\xff', 'Y', 'C', 1};
#define DEPTH_MAX 1024
#define URI_MAX 4096

typedef struct ctedb ctedb_t;

/* One request in flight: what its reply means. */
typedef struct req {
    ctedb_t *d;
    size_t field; /* a per-field TGET: the field it reads */
} req_t;

struct ctedb {
    cte_conn_t *c;
    const db_schema_t *s;
    char *tag;
    size_t tlen; /* strlen(tag) */
    size_t hdr, slot, reclen;
    char *rec;   /* a record being written, or fields read one by one */
    size_t *got; /* per field read one by one: bytes that arrived (SIZE_MAX: none) */
    req_t *req;  /* fieldcount contexts */
    cte_reply_t *reply;
    int failed; /* a request of the current operation failed (server error) */
    size_t found, missing;
    char broken[384];
};

static int ctedb_check(const props_t *p, util_err_t *e)
{
    int64_t v;
    int rc;
    if ((rc = props_long(p, "cte.depth", 16, 1, DEPTH_MAX, &v, e)) ||
        (rc = props_long(p, "cte.timeout", 2000, 0, INT32_MAX, &v, e)))
        return rc;
    const char *uri = props_get_or(p, "cte.uri", "tcp://127.0.0.1:6379");
    if (strlen(uri) > URI_MAX) return util_fail(e, "cte.uri is longer than %d bytes", URI_MAX);
    const char *table = props_get_or(p, "table", "usertable");
    if (!*table || strlen(table) > 1024) return util_fail(e, "table must have 1 to 1024 bytes");
    return 0;
}

static void ctedb_close(void *db)
{
    ctedb_t *d = db;
    if (!d) return;
    cte_reply_free(d->reply);
    cte_conn_free(d->c);
    free(d->tag);
    free(d->rec);
    free(d->got);
    free(d->req);
    free(d);
}

static void set_broken(ctedb_t *d, int rc)
{
    if (!d->broken[0])
        snprintf(d->broken, sizeof d->broken, "cte: %s (%s)", cte_strerror(rc),
                 cte_conn_errmsg(d->c));
}

/* A failure of a call: a server error fails the operation, anything else also breaks the
 * connection. */
static db_status_t fail(ctedb_t *d, int rc)
{
    if (rc != CTE_E_SERVER && rc != CTE_E_NOTFOUND && rc != CTE_E_TYPE && rc != CTE_E_TRUNCATED)
        set_broken(d, rc);
    return DB_ERROR;
}

/* Writes the layout blob if the tag has none, else checks it is ours and of this shape
 * (layout 2 had an index of sorted sets beside the tag: its tags are refused too). */
static int check_layout(ctedb_t *d, util_err_t *e)
{
    char want[200], have[200];
    size_t len;
    int n = snprintf(want, sizeof want,
                     "cte-ycsb record layout 3: head %d, fieldcount %zu, slot %zu, header %zu\n",
                     REC_HEAD, d->s->fieldcount, d->slot, d->hdr);
    int rc = cte_get(d->c, d->tag, LAYOUT_BLOB, 0, -1, have, sizeof have, &len);
    if (rc == CTE_E_NOTFOUND)
        rc = cte_put(d->c, d->tag, LAYOUT_BLOB, 0, want, (size_t)n, -1, NULL);
    else if (rc == 0 && (len != (size_t)n || memcmp(have, want, len) != 0))
        return util_fail(
            e,
            "cte: tag %s holds records of another layout (%.*s), not %.*s: use another "
            "table or delete the tag",
            d->tag, (int)(len && have[len - 1] == '\n' ? len - 1 : len), have, n - 1, want);
    else if (rc == CTE_E_TRUNCATED)
        return util_fail(e, "cte: tag %s has a " LAYOUT_BLOB " blob that is not cte-ycsb's",
                         d->tag);
    if (rc < 0)
        return util_fail(e, "cte: reading the layout of tag %s: %s (%s)", d->tag, cte_strerror(rc),
                         cte_conn_errmsg(d->c));
    return 0;
}

static int ctedb_open(void **out, const props_t *p, const db_schema_t *s, util_err_t *e)
{
    int64_t depth, timeout;
    int rc;
    *out = NULL;
    if ((rc = ctedb_check(p, e))) return rc;
    props_long(p, "cte.depth", 16, 1, DEPTH_MAX, &depth, NULL);
    props_long(p, "cte.timeout", 2000, 0, INT32_MAX, &timeout, NULL);
    const char *uri = props_get_or(p, "cte.uri", "tcp://127.0.0.1:6379");
    const char *lendist = props_get_or(p, "fieldlengthdistribution", "constant");
    ctedb_t *d = util_xcalloc(1, sizeof *d);
    d->s = s;
    d->tag = util_xstrdup(s->table);
    d->tlen = strlen(d->tag);
    d->hdr = strcmp(lendist, "constant") == 0 ? 0 : 4;
    d->slot = d->hdr + s->fieldlength_max;
    d->reclen = REC_HEAD + d->slot * s->fieldcount;
    d->rec = util_xmalloc(d->reclen);
    d->got = util_xcalloc(s->fieldcount, sizeof *d->got);
    d->req = util_xcalloc(s->fieldcount, sizeof *d->req);
    for (size_t i = 0; i < s->fieldcount; i++) d->req[i] = (req_t){d, i};
    if (!(d->c = cte_conn_new())) {
        ctedb_close(d);
        return util_fail(e, "cte: out of memory");
    }
    cte_conn_set_timeout(d->c, (int)timeout);
    cte_conn_set_window(d->c, (unsigned)depth);
    if ((rc = cte_conn_open(d->c, uri, 0)) < 0) {
        util_fail(e, "cte: cannot connect to %s: %s", uri, cte_conn_errmsg(d->c));
        ctedb_close(d);
        return rc;
    }
    if ((rc = check_layout(d, e)) < 0) {
        ctedb_close(d);
        return rc;
    }
    *out = d;
    return 0;
}

/* Where field f starts, in the blob and in d->rec. */
static size_t field_off(const ctedb_t *d, size_t f)
{
    return REC_HEAD + f * d->slot;
}

/* ---- asynchronous completions ---- */

static void on_reply(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    ctedb_t *d = ud;
    if (status == 0 && cte_reply_kind(r) == CTE_REPLY_NULL)
        d->missing++;
    else if (status == 0)
        d->found++;
    else
        d->failed = 1;
}

/* A per-field TGET: copies the field's bytes into its place in d->rec. */
static void on_field(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    req_t *q = ud;
    ctedb_t *d = q->d;
    size_t len;
    const char *data = status == 0 ? cte_reply_str(r, &len) : NULL;
    if (status != 0) d->failed = 1;
    if (!data) {
        d->missing += status == 0;
        return;
    }
    if (len > d->slot) len = d->slot;
    memcpy(d->rec + field_off(d, q->field), data, len);
    d->got[q->field] = len;
    d->found++;
}

/* Starts an operation's batch of requests. */
static void batch_begin(ctedb_t *d)
{
    d->failed = 0;
    d->found = d->missing = 0;
}

/* Waits for the batch; DB_OK when every request succeeded. */
static db_status_t batch_end(ctedb_t *d)
{
    int rc = cte_wait_all(d->c);
    if (rc < 0) return fail(d, rc);
    return d->failed ? DB_ERROR : DB_OK;
}

/* ---- records ---- */

static uint32_t get_u32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

static void put_u32(char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (char)(v >> (8 * i));
}

/* Writes value v into its slot of d->rec; returns the bytes of the slot that count. */
static size_t place(ctedb_t *d, const db_value_t *v)
{
    char *at = d->rec + field_off(d, v->field);
    if (d->hdr) put_u32(at, (uint32_t)v->len);
    memcpy(at + d->hdr, v->data, v->len);
    if (d->hdr + v->len < d->slot) memset(at + d->hdr + v->len, 0, d->slot - d->hdr - v->len);
    return d->hdr + v->len;
}

/* The cell of field f from a slot's bytes (avail of them arrived). */
static void add_cell(ctedb_t *d, size_t f, const char *slot, size_t avail, db_result_t *out)
{
    if (avail < d->hdr || (!d->hdr && avail < d->slot)) return; /* never written */
    size_t len = d->hdr ? get_u32(slot) : d->slot;
    if (len > avail - d->hdr) len = avail - d->hdr;
    db_result_add(out, d->s->field[f], d->s->field_len[f], slot + d->hdr, len);
}

static db_status_t ctedb_insert(void *db, const char *key, size_t klen, const db_value_t *v,
                                size_t n)
{
    ctedb_t *d = db;
    memset(d->rec, 0, d->reclen);
    memcpy(d->rec, rec_magic, REC_HEAD);
    for (size_t i = 0; i < n; i++) place(d, &v[i]);
    int rc = cte_put(d->c, d->tag, key, 0, d->rec, d->reclen, -1, NULL);
    return rc < 0 ? fail(d, rc) : DB_OK;
}

static int by_field(const void *a, const void *b)
{
    const db_value_t *x = a, *y = b;
    return x->field < y->field ? -1 : x->field > y->field;
}

static db_status_t ctedb_update(void *db, const char *key, size_t klen, const db_value_t *v,
                                size_t n)
{
    ctedb_t *d = db;
    db_value_t one[1];
    db_value_t *sorted = n == 1 ? one : util_xmalloc(n * sizeof *sorted);
    memcpy(sorted, v, n * sizeof *v);
    if (n > 1) qsort(sorted, n, sizeof *sorted, by_field);
    batch_begin(d);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0;) {
        size_t j = i, tail = place(d, &sorted[i]); /* a run of adjacent fields: one TPUT */
        while (j + 1 < n && sorted[j + 1].field == sorted[j].field + 1)
            tail = place(d, &sorted[++j]);
        size_t off = field_off(d, sorted[i].field),
               len = (sorted[j].field - sorted[i].field) * d->slot + tail;
        rc = cte_put_async(d->c, d->tag, key, off, d->rec + off, len, -1, on_reply, d);
        i = j + 1;
    }
    if (sorted != one) free(sorted);
    if (rc < 0) {
        cte_wait_all(d->c);
        return fail(d, rc);
    }
    return batch_end(d);
}

/* Reads fields [lo, hi] with one ranged TGET and adds the cells asked for. */
static db_status_t read_span(ctedb_t *d, const char *key, size_t lo, size_t hi,
                             const size_t *fields, size_t nf, db_result_t *out)
{
    const void *data;
    size_t len;
    int rc = cte_get_view(d->c, d->tag, key, field_off(d, lo), (int64_t)((hi - lo + 1) * d->slot),
                          &data, &len);
    if (rc == CTE_E_NOTFOUND) return DB_NOT_FOUND;
    if (rc < 0) return fail(d, rc);
    const char *base = data;
    for (size_t i = 0; i < (fields ? nf : hi - lo + 1); i++) {
        size_t f = fields ? fields[i] : lo + i, off = (f - lo) * d->slot;
        if (off < len) add_cell(d, f, base + off, len - off < d->slot ? len - off : d->slot, out);
    }
    return out->n ? DB_OK : DB_ERROR;
}

/* Reads each field with its own TGET, all in flight together. */
static db_status_t read_each(ctedb_t *d, const char *key, const size_t *fields, size_t nf,
                             db_result_t *out)
{
    batch_begin(d);
    int rc = 0;
    for (size_t i = 0; i < nf && rc == 0; i++) {
        d->got[fields[i]] = SIZE_MAX;
        rc = cte_get_async(d->c, d->tag, key, field_off(d, fields[i]), (int64_t)d->slot, on_field,
                           &d->req[fields[i]]);
    }
    db_status_t s = rc < 0 ? (cte_wait_all(d->c), fail(d, rc)) : batch_end(d);
    if (s != DB_OK) return s;
    if (d->found == 0) return DB_NOT_FOUND;
    for (size_t i = 0; i < nf; i++)
        if (d->got[fields[i]] != SIZE_MAX)
            add_cell(d, fields[i], d->rec + field_off(d, fields[i]), d->got[fields[i]], out);
    return out->n ? DB_OK : DB_ERROR;
}

static db_status_t ctedb_read(void *db, const char *key, size_t klen, const size_t *fields,
                              size_t nf, db_result_t *out)
{
    ctedb_t *d = db;
    if (!fields) return read_span(d, key, 0, d->s->fieldcount - 1, NULL, 0, out);
    size_t lo = SIZE_MAX, hi = 0;
    for (size_t i = 0; i < nf; i++) {
        if (fields[i] < lo) lo = fields[i];
        if (fields[i] > hi) hi = fields[i];
    }
    if (nf == 0) return DB_ERROR;
    if (hi - lo + 1 <= 2 * nf) return read_span(d, key, lo, hi, fields, nf, out);
    return read_each(d, key, fields, nf, out);
}

static db_status_t ctedb_scan(void *db, const char *startkey, size_t klen, int count,
                              const size_t *fields, size_t nf, size_t *nrec)
{
    ctedb_t *d = db;
    char cnt[24];
    const char *argv[] = {"TLIST", d->tag, "FROM", startkey, "COUNT", cnt};
    size_t lens[] = {
        5, d->tlen, 4, klen, 5, (size_t)snprintf(cnt, sizeof cnt, "%lld", (long long)count + 1)};
    *nrec = 0;
    cte_reply_free(d->reply);
    d->reply = NULL;
    int rc = cte_command(d->c, &d->reply, 6, argv, lens);
    if (rc < 0) return fail(d, rc);
    /* One field (or all): its range of each record; the reads overlap up to cte.depth. */
    size_t off = fields && nf == 1 ? field_off(d, fields[0]) : 0;
    int64_t len = fields && nf == 1 ? (int64_t)d->slot : -1;
    int left = count;
    batch_begin(d);
    for (size_t i = 0; i < cte_reply_len(d->reply) && left > 0 && rc == 0; i++) {
        size_t nlen;
        const char *k = cte_reply_str(cte_reply_elem(d->reply, i), &nlen);
        if (!k || (nlen == sizeof LAYOUT_BLOB - 1 && memcmp(k, LAYOUT_BLOB, nlen) == 0)) continue;
        rc = cte_get_async(d->c, d->tag, k, off, len, on_reply, d);
        left--;
    }
    db_status_t st = rc < 0 ? (cte_wait_all(d->c), fail(d, rc)) : batch_end(d);
    *nrec = d->found;
    return st;
}

static db_status_t ctedb_remove(void *db, const char *key, size_t klen)
{
    ctedb_t *d = db;
    const char *tdel[] = {"TDEL", d->tag, key};
    const size_t tl[] = {4, d->tlen, klen};
    cte_reply_t *r1 = NULL;
    int rc = cte_command(d->c, &r1, 3, tdel, tl);
    long long removed = rc == 0 ? cte_reply_int(r1) : 0;
    cte_reply_free(r1);
    if (rc < 0) return fail(d, rc);
    return removed ? DB_OK : DB_NOT_FOUND;
}

static const char *ctedb_broken(void *db)
{
    ctedb_t *d = db;
    return d->broken[0] ? d->broken : NULL;
}

const db_binding_t db_cte_binding = {
    .name = "cte",
    .check = ctedb_check,
    .open = ctedb_open,
    .close = ctedb_close,
    .read = ctedb_read,
    .scan = ctedb_scan,
    .update = ctedb_update,
    .insert = ctedb_insert,
    .remove = ctedb_remove,
    .broken = ctedb_broken,
};
