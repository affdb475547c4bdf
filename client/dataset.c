/* dataset.c - libcte's datasets (cte/dataset.h): N-D arrays as one blob per chunk plus a small
 * metadata blob, on the tag calls of tag.c and the asynchronous puts of conn.c.
 *
 * Shape. A hyperslab is cut along the chunk grid; for each chunk it touches, box_copy moves
 * the intersection between the caller's row-major buffer (extent = count) and the chunk's
 * row-major layout (extent = the chunk clipped at the edge). A write of a whole chunk is one
 * TPUT at offset 0; a partial one is a TPUT per contiguous run at its offset, or, when that
 * would be many small runs, one read-modify-write of the chunk. Staging: over shm the chunk
 * is gathered straight into cte_put_buffer's area buffer, else into a heap buffer the put's
 * callback frees (payloads of 16 KiB or more are referenced by libcte until answered).
 *
 * Metadata blob "<name>/meta", text (every number decimal):
 *     cte-dataset 1\n  type <dtype name>\n  order little|big\n  shape <n0> <n1> ...\n
 *     chunk <c0> <c1> ...\n  then per attribute: attr <key bytes> <value bytes>\n<key><value>\n
 * Invariants: inflight is the sum of the bytes of puts queued and not answered, pending their
 * number; err holds the first failure since the last wait. Runs on the connection's thread. */
#include "cte/dataset.h"

#include "alloc.h"
#include "conn_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define META_SUFFIX "/meta"
#define BLOB_MAX (CTE_DATASET_NAME_MAX + 16 + CTE_DATASET_MAX_RANK * 21)
#define CHUNK_MAX (1ull << 30)
#define ATTR_KEY_MAX 255
#define ATTR_VALUE_MAX (64 * 1024)
#define RMW_RUNS 8                /* a partial chunk with more runs than this ... */
#define RMW_RUN_BYTES (64 * 1024) /* ... each shorter than this is read, patched, rewritten */
#define DEFAULT_INFLIGHT (256ull << 20)

typedef struct attr {
    char *key, *value;
} attr_t;

struct cte_dataset {
    cte_conn_t *c;
    char *tag, *name;
    cte_dtype_t type;
    size_t esize;
    int rank;
    uint64_t shape[CTE_DATASET_MAX_RANK], chunk[CTE_DATASET_MAX_RANK];
    uint64_t inflight, max_inflight;
    unsigned pending;
    int closing; /* closed with callbacks still owed (a broken connection): the last frees d */
    int err;
    char errmsg[256];
    attr_t *attrs;
    size_t nattr;
};

/* ---- element types ---- */

static const struct {
    const char *name;
    size_t size;
} DTYPES[] = {
#define CTE_X_DTYPE(e, name, size) {name, size},
    CTE_DTYPES(CTE_X_DTYPE)
#undef CTE_X_DTYPE
};

const char *cte_dtype_name(cte_dtype_t t)
{
    return (unsigned)t < CTE_DTYPE_COUNT ? DTYPES[t].name : NULL;
}

size_t cte_dtype_size(cte_dtype_t t)
{
    return (unsigned)t < CTE_DTYPE_COUNT ? DTYPES[t].size : 0;
}

int cte_dtype_parse(const char *name, cte_dtype_t *t)
{
    for (int i = 0; name && i < CTE_DTYPE_COUNT; i++)
        if (!strcmp(name, DTYPES[i].name)) {
            *t = (cte_dtype_t)i;
            return 0;
        }
    return CTE_E_INVAL;
}

static const char *host_order(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one ? "little" : "big";
}

/* ---- the box copy ---- */

/* Copies the box n[0..rank) from src (row-major, extent sext, box at soff) to dst (extent
 * dext, box at doff); esize bytes an element. Trailing dimensions that both sides hold whole
 * are merged into one memcpy. */
static void box_copy(char *dst, const uint64_t *dext, const uint64_t *doff, const char *src,
                     const uint64_t *sext, const uint64_t *soff, const uint64_t *n, int rank,
                     size_t esize)
{
    int last = rank - 1;
    size_t run = n[last] * esize;
    while (last > 0 && n[last] == dext[last] && n[last] == sext[last]) {
        last--;
        run *= n[last];
    }
    /* strides in bytes */
    uint64_t ds[CTE_DATASET_MAX_RANK], ss[CTE_DATASET_MAX_RANK], idx[CTE_DATASET_MAX_RANK] = {0};
    ds[rank - 1] = ss[rank - 1] = esize;
    for (int k = rank - 2; k >= 0; k--)
        ds[k] = ds[k + 1] * dext[k + 1], ss[k] = ss[k + 1] * sext[k + 1];
    uint64_t d0 = 0, s0 = 0;
    for (int k = 0; k < rank; k++) d0 += doff[k] * ds[k], s0 += soff[k] * ss[k];
    for (;;) {
        uint64_t dp = d0, sp = s0;
        for (int k = 0; k < last; k++) dp += idx[k] * ds[k], sp += idx[k] * ss[k];
        memcpy(dst + dp, src + sp, run);
        int k = last - 1;
        while (k >= 0 && ++idx[k] == n[k]) idx[k--] = 0;
        if (k < 0) return;
    }
}

static uint64_t product(const uint64_t *v, int rank)
{
    uint64_t p = 1;
    for (int k = 0; k < rank; k++) p *= v[k];
    return p;
}

/* ---- names ---- */

static int blob_meta(char *out, const char *name)
{
    return snprintf(out, BLOB_MAX, "%s" META_SUFFIX, name) < BLOB_MAX ? 0 : CTE_E_INVAL;
}

static void blob_chunk(char *out, const cte_dataset_t *d, const uint64_t *idx)
{
    size_t len = (size_t)snprintf(out, BLOB_MAX, "%s/c", d->name);
    for (int k = 0; k < d->rank; k++)
        len += (size_t)snprintf(out + len, BLOB_MAX - len, ".%" PRIu64, idx[k]);
}

static int check_name(cte_conn_t *c, const char *tag, const char *name)
{
    if (!tag || !name || !*name || strlen(name) > CTE_DATASET_NAME_MAX)
        return cte__set_error(c, CTE_E_INVAL, "dataset name must be 1 to 200 bytes");
    return 0;
}

/* ---- metadata ---- */

static const char *layout_why(cte_dtype_t type, int rank, const uint64_t *shape,
                              const uint64_t *chunk);

static int append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t nc = (*cap ? *cap * 2 : 256);
        while (nc < *len + n + 1) nc *= 2;
        char *p = cte__realloc(*buf, nc);
        if (!p) return CTE_E_NOMEM;
        *buf = p, *cap = nc;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
    return 0;
}

static int appendf_dims(char **buf, size_t *len, size_t *cap, const char *what, const uint64_t *v,
                        int rank)
{
    char line[32 + CTE_DATASET_MAX_RANK * 21];
    size_t n = (size_t)snprintf(line, sizeof line, "%s", what);
    for (int k = 0; k < rank; k++)
        n += (size_t)snprintf(line + n, sizeof line - n, " %" PRIu64, v[k]);
    line[n++] = '\n';
    return append(buf, len, cap, line, n);
}

/* The metadata text of d; the caller frees *out. */
static int meta_format(const cte_dataset_t *d, char **out, size_t *outlen)
{
    char *buf = NULL, line[128];
    size_t len = 0, cap = 0;
    int n = snprintf(line, sizeof line, "cte-dataset 1\ntype %s\norder %s\n",
                     cte_dtype_name(d->type), host_order());
    int rc = append(&buf, &len, &cap, line, (size_t)n);
    if (!rc) rc = appendf_dims(&buf, &len, &cap, "shape", d->shape, d->rank);
    if (!rc) rc = appendf_dims(&buf, &len, &cap, "chunk", d->chunk, d->rank);
    for (size_t i = 0; !rc && i < d->nattr; i++) {
        size_t kl = strlen(d->attrs[i].key), vl = strlen(d->attrs[i].value);
        n = snprintf(line, sizeof line, "attr %zu %zu\n", kl, vl);
        rc = append(&buf, &len, &cap, line, (size_t)n);
        if (!rc) rc = append(&buf, &len, &cap, d->attrs[i].key, kl);
        if (!rc) rc = append(&buf, &len, &cap, d->attrs[i].value, vl);
        if (!rc) rc = append(&buf, &len, &cap, "\n", 1);
    }
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf, *outlen = len;
    return 0;
}

/* The next line of [*p, end) without its '\n' into line (NUL-terminated); -1 if none fits. */
static int next_line(const char **p, const char *end, char *line, size_t cap)
{
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    if (!nl || (size_t)(nl - *p) >= cap) return -1;
    memcpy(line, *p, (size_t)(nl - *p));
    line[nl - *p] = '\0';
    *p = nl + 1;
    return 0;
}

/* "word n0 n1 ..." into v; returns the count of numbers or -1. */
static int parse_dims(const char *line, const char *word, uint64_t *v)
{
    size_t wl = strlen(word);
    if (strncmp(line, word, wl) || line[wl] != ' ') return -1;
    const char *s = line + wl;
    int n = 0;
    while (*s == ' ' && n < CTE_DATASET_MAX_RANK) {
        char *e;
        if (s[1] < '0' || s[1] > '9') return -1;
        v[n++] = strtoull(s + 1, &e, 10);
        s = e;
    }
    return *s ? -1 : n;
}

static void attrs_free(attr_t *a, size_t n)
{
    for (size_t i = 0; i < n; i++) free(a[i].key), free(a[i].value);
    free(a);
}

static char *dup_n(const char *s, size_t n)
{
    char *p = cte__malloc(n + 1);
    if (p) memcpy(p, s, n), p[n] = '\0';
    return p;
}

/* One "attr K V" record at *p into d's attributes. */
static int parse_attr(cte_dataset_t *d, const char *line, const char **p, const char *end)
{
    size_t kl, vl;
    char tail;
    if (sscanf(line, "attr %zu %zu%c", &kl, &vl, &tail) != 2 || kl == 0 || kl > ATTR_KEY_MAX ||
        vl > ATTR_VALUE_MAX || (size_t)(end - *p) < kl + vl + 1 || (*p)[kl + vl] != '\n')
        return CTE_E_FORMAT;
    if (memchr(*p, '\0', kl + vl)) return CTE_E_FORMAT;
    attr_t *a = cte__realloc(d->attrs, (d->nattr + 1) * sizeof *a);
    if (!a) return CTE_E_NOMEM;
    d->attrs = a;
    a[d->nattr].key = dup_n(*p, kl);
    a[d->nattr].value = dup_n(*p + kl, vl);
    d->nattr++;
    if (!a[d->nattr - 1].key || !a[d->nattr - 1].value) return CTE_E_NOMEM;
    *p += kl + vl + 1;
    return 0;
}

/* Parses metadata text into d's layout and attributes. */
static int meta_parse(cte_dataset_t *d, const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    char line[64 + CTE_DATASET_MAX_RANK * 21], word[16];
    uint64_t chunk[CTE_DATASET_MAX_RANK];
    if (next_line(&p, end, line, sizeof line) || strcmp(line, "cte-dataset 1")) return CTE_E_FORMAT;
    if (next_line(&p, end, line, sizeof line) || strncmp(line, "type ", 5) ||
        cte_dtype_parse(line + 5, &d->type))
        return CTE_E_FORMAT;
    if (next_line(&p, end, line, sizeof line) || sscanf(line, "order %15s", word) != 1 ||
        strcmp(word, host_order()))
        return CTE_E_FORMAT;
    if (next_line(&p, end, line, sizeof line)) return CTE_E_FORMAT;
    d->rank = parse_dims(line, "shape", d->shape);
    if (d->rank < 1 || next_line(&p, end, line, sizeof line) ||
        parse_dims(line, "chunk", chunk) != d->rank)
        return CTE_E_FORMAT;
    memcpy(d->chunk, chunk, sizeof chunk);
    d->esize = cte_dtype_size(d->type);
    if (layout_why(d->type, d->rank, d->shape, d->chunk)) return CTE_E_FORMAT;
    while (p < end) {
        if (next_line(&p, end, line, sizeof line)) return CTE_E_FORMAT;
        int rc = parse_attr(d, line, &p, end);
        if (rc) return rc;
    }
    return 0;
}

/* Writes d's metadata blob (and cuts off what a longer earlier one left). */
static int meta_store(cte_dataset_t *d)
{
    char blob[BLOB_MAX], *text;
    size_t len;
    uint64_t size;
    int rc = blob_meta(blob, d->name);
    if (!rc) rc = meta_format(d, &text, &len);
    if (rc) return rc;
    rc = cte_put(d->c, d->tag, blob, 0, text, len, 1.0, &size);
    free(text);
    if (!rc && size > len) rc = cte_truncate(d->c, d->tag, blob, len, NULL);
    return rc;
}

/* ---- lifecycle ---- */

static cte_dataset_t *ds_new(cte_conn_t *c, const char *tag, const char *name)
{
    cte_dataset_t *d = cte__calloc(1, sizeof *d);
    if (!d) return NULL;
    d->c = c;
    d->max_inflight = DEFAULT_INFLIGHT;
    d->tag = dup_n(tag, strlen(tag));
    d->name = dup_n(name, strlen(name));
    if (d->tag && d->name) return d;
    free(d->tag), free(d->name), free(d);
    return NULL;
}

static void ds_free(cte_dataset_t *d)
{
    attrs_free(d->attrs, d->nattr);
    free(d->tag), free(d->name), free(d);
}

static int ds_fail(cte_dataset_t *d, int rc, const char *what)
{
    char msg[400];
    if (rc == CTE_E_FORMAT || rc == CTE_E_NOTFOUND || rc == CTE_E_EXISTS) {
        snprintf(msg, sizeof msg, "dataset '%s': %s", d->name, what);
        cte__set_error(d->c, rc, msg);
    }
    return rc;
}

int cte_dataset_open(cte_conn_t *c, const char *tag, const char *name, cte_dataset_t **out)
{
    char blob[BLOB_MAX];
    const void *text;
    size_t len;
    *out = NULL;
    int rc = check_name(c, tag, name);
    if (rc || (rc = blob_meta(blob, name))) return rc;
    cte_dataset_t *d = ds_new(c, tag, name);
    if (!d) return cte__set_error(c, CTE_E_NOMEM, NULL);
    rc = cte_get_view(c, tag, blob, 0, -1, &text, &len);
    if (rc == CTE_E_NOTFOUND) rc = ds_fail(d, rc, "no such dataset");
    if (!rc && (rc = meta_parse(d, text, len)) == CTE_E_FORMAT)
        ds_fail(d, rc, "metadata does not parse (or another byte order wrote it)");
    if (rc) {
        ds_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

/* NULL when the layout is valid, else what is wrong with it. */
static const char *layout_why(cte_dtype_t type, int rank, const uint64_t *shape,
                              const uint64_t *chunk)
{
    if (!cte_dtype_name(type) || rank < 1 || rank > CTE_DATASET_MAX_RANK || !shape || !chunk)
        return "dataset: bad type or rank (1 to 8)";
    uint64_t cbytes = cte_dtype_size(type), bytes = cbytes;
    for (int k = 0; k < rank; k++) {
        if (!shape[k] || !chunk[k] || shape[k] > (1ull << 48) || chunk[k] > CHUNK_MAX)
            return "dataset: shape and chunk entries must be 1 to 2^48";
        cbytes *= chunk[k] < shape[k] ? chunk[k] : shape[k];
        bytes *= shape[k];
        if (cbytes > CHUNK_MAX) return "dataset: a chunk is at most 1 GiB";
        if (bytes > (1ull << 56)) return "dataset: at most 2^56 bytes";
    }
    return NULL;
}

static int layout_ok(cte_conn_t *c, cte_dtype_t type, int rank, const uint64_t *shape,
                     const uint64_t *chunk)
{
    const char *why = layout_why(type, rank, shape, chunk);
    return why ? cte__set_error(c, CTE_E_INVAL, why) : 0;
}

int cte_dataset_create(cte_conn_t *c, const char *tag, const char *name, cte_dtype_t type, int rank,
                       const uint64_t *shape, const uint64_t *chunk, cte_dataset_t **out)
{
    *out = NULL;
    int rc = check_name(c, tag, name);
    if (rc || (rc = layout_ok(c, type, rank, shape, chunk))) return rc;
    cte_dataset_t *d;
    rc = cte_dataset_open(c, tag, name, &d);
    if (rc == 0) {
        if (d->type == type && d->rank == rank && !memcmp(d->shape, shape, rank * sizeof *shape) &&
            !memcmp(d->chunk, chunk, rank * sizeof *chunk)) {
            *out = d;
            return 0;
        }
        rc = ds_fail(d, CTE_E_EXISTS, "exists with another type, shape or chunk shape");
        ds_free(d);
        return rc;
    }
    if (rc != CTE_E_NOTFOUND) return rc;
    if (!(d = ds_new(c, tag, name))) return cte__set_error(c, CTE_E_NOMEM, NULL);
    d->type = type, d->esize = cte_dtype_size(type), d->rank = rank;
    memcpy(d->shape, shape, rank * sizeof *shape);
    memcpy(d->chunk, chunk, rank * sizeof *chunk);
    if ((rc = meta_store(d)) != 0) {
        ds_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

int cte_dataset_close(cte_dataset_t *d)
{
    if (!d) return 0;
    int rc = cte_dataset_wait(d);
    if (d->pending) { /* the connection broke: its end runs the callbacks, the last frees d */
        d->closing = 1;
        return rc;
    }
    ds_free(d);
    return rc;
}

cte_dtype_t cte_dataset_type(const cte_dataset_t *d)
{
    return d->type;
}
int cte_dataset_rank(const cte_dataset_t *d)
{
    return d->rank;
}
const uint64_t *cte_dataset_shape(const cte_dataset_t *d)
{
    return d->shape;
}
const uint64_t *cte_dataset_chunk(const cte_dataset_t *d)
{
    return d->chunk;
}
uint64_t cte_dataset_bytes(const cte_dataset_t *d)
{
    return product(d->shape, d->rank) * d->esize;
}
uint64_t cte_dataset_inflight(const cte_dataset_t *d)
{
    return d->inflight;
}

int cte_dataset_set_max_inflight(cte_dataset_t *d, uint64_t n)
{
    if (!n) return CTE_E_INVAL;
    d->max_inflight = n;
    return 0;
}

/* ---- hyperslabs and chunks ---- */

/* The chunk grid a hyperslab touches, and where one chunk meets it. */
typedef struct slab {
    const uint64_t *start, *count;
    uint64_t lo[CTE_DATASET_MAX_RANK], hi[CTE_DATASET_MAX_RANK], idx[CTE_DATASET_MAX_RANK];
    /* the current chunk: origin, extent, and the intersection (a: first, n: count) */
    uint64_t o[CTE_DATASET_MAX_RANK], ext[CTE_DATASET_MAX_RANK];
    uint64_t in_chunk[CTE_DATASET_MAX_RANK], in_buf[CTE_DATASET_MAX_RANK], n[CTE_DATASET_MAX_RANK];
} slab_t;

/* 1 when there is something to do, 0 for an empty hyperslab, CTE_E_INVAL when it leaves the
 * shape. */
static int slab_init(cte_dataset_t *d, slab_t *s, const uint64_t *start, const uint64_t *count)
{
    char msg[200];
    if (!start || !count)
        return cte__set_error(d->c, CTE_E_INVAL, "dataset: start and count needed");
    s->start = start, s->count = count;
    int empty = 0;
    for (int k = 0; k < d->rank; k++) {
        if (start[k] > d->shape[k] || count[k] > d->shape[k] - start[k]) {
            snprintf(msg, sizeof msg,
                     "dataset '%.100s': hyperslab [%" PRIu64 ",+%" PRIu64
                     ") exceeds dimension %d of size %" PRIu64,
                     d->name, start[k], count[k], k, d->shape[k]);
            return cte__set_error(d->c, CTE_E_INVAL, msg);
        }
        if (!count[k]) empty = 1;
    }
    if (empty) return 0;
    for (int k = 0; k < d->rank; k++) {
        s->lo[k] = s->idx[k] = start[k] / d->chunk[k];
        s->hi[k] = (start[k] + count[k] - 1) / d->chunk[k];
    }
    return 1;
}

/* Fills the current chunk's geometry from s->idx. */
static void slab_chunk(const cte_dataset_t *d, slab_t *s)
{
    for (int k = 0; k < d->rank; k++) {
        uint64_t o = s->idx[k] * d->chunk[k], e = d->shape[k] - o;
        if (e > d->chunk[k]) e = d->chunk[k];
        uint64_t a = s->start[k] > o ? s->start[k] : o;
        uint64_t b = s->start[k] + s->count[k] < o + e ? s->start[k] + s->count[k] : o + e;
        s->o[k] = o, s->ext[k] = e, s->n[k] = b - a;
        s->in_chunk[k] = a - o, s->in_buf[k] = a - s->start[k];
    }
}

/* Moves to the next chunk; 0 when done. */
static int slab_next(const cte_dataset_t *d, slab_t *s)
{
    int k = d->rank - 1;
    while (k >= 0 && s->idx[k] == s->hi[k]) s->idx[k] = s->lo[k], k--;
    if (k < 0) return 0;
    s->idx[k]++;
    return 1;
}

/* ---- writes ---- */

typedef struct put_op {
    cte_dataset_t *d;
    void *heap; /* staging to free, or NULL (the shm area's) */
    uint64_t bytes;
} put_op_t;

static void record(cte_dataset_t *d, int status, const cte_reply_t *r)
{
    if (!status || d->err) return;
    d->err = status;
    const char *m = status == CTE_E_SERVER && r ? cte_reply_str(r, NULL) : NULL;
    snprintf(d->errmsg, sizeof d->errmsg, "%s", m ? m : cte_strerror(status));
}

static void put_done(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    put_op_t *op = ud;
    cte_dataset_t *d = op->d;
    d->inflight -= op->bytes;
    d->pending--;
    record(d, status, r);
    free(op->heap);
    free(op);
    if (d->closing && !d->pending) ds_free(d);
}

/* Waits until len more bytes fit under the in-flight limit (or nothing is in flight). */
static int make_room(cte_dataset_t *d, uint64_t len)
{
    while (d->inflight && d->inflight + len > d->max_inflight) {
        int rc = cte_poll(d->c, -1);
        if (rc < 0) return rc;
    }
    return 0;
}

/* A staging buffer of len bytes: the shm area's when it has one (op->heap NULL), else heap. */
static void *stage(cte_dataset_t *d, put_op_t *op, size_t len)
{
    void *p = cte_put_buffer(d->c, len);
    if (p) return p;
    return op->heap = cte__malloc(len ? len : 1);
}

/* Queues the put of staged bytes; on failure frees them. */
static int put_staged(cte_dataset_t *d, put_op_t *op, const char *blob, uint64_t off,
                      const void *data, double score)
{
    int rc = cte_put_async(d->c, d->tag, blob, off, data, op->bytes, score, put_done, op);
    if (rc) {
        free(op->heap);
        free(op);
        return rc;
    }
    d->inflight += op->bytes;
    d->pending++;
    return 0;
}

/* One put of the box s->n at s->in_chunk of a chunk whose layout (extent ext) starts at byte
 * off of the blob; the box is gathered from buf. */
static int put_box(cte_dataset_t *d, const slab_t *s, const char *blob, uint64_t off,
                   const uint64_t *ext, const uint64_t *at, const void *buf, double score)
{
    uint64_t len = product(s->n, d->rank) * d->esize;
    int rc = make_room(d, len);
    if (rc) return rc;
    put_op_t *op = cte__calloc(1, sizeof *op);
    if (!op) return cte__set_error(d->c, CTE_E_NOMEM, NULL);
    op->d = d, op->bytes = len;
    char *dst = stage(d, op, len);
    if (!dst) {
        free(op);
        return cte__set_error(d->c, CTE_E_NOMEM, NULL);
    }
    box_copy(dst, ext, at, buf, s->count, s->in_buf, s->n, d->rank, d->esize);
    return put_staged(d, op, blob, off, dst, score);
}

/* Reads a chunk blob into dst (its extent's bytes; zeros where it has none). */
static int chunk_fetch(cte_dataset_t *d, const char *blob, char *dst, size_t len)
{
    size_t got;
    int rc = cte_get(d->c, d->tag, blob, 0, -1, dst, len, &got);
    if (rc == CTE_E_NOTFOUND) got = 0, rc = 0;
    if (rc == CTE_E_TRUNCATED) return ds_fail(d, CTE_E_FORMAT, "a chunk blob exceeds its extent");
    if (rc) return rc;
    memset(dst + got, 0, len - got);
    return 0;
}

/* A chunk the hyperslab covers in part, with many short runs: read, patch, write back. */
static int put_rmw(cte_dataset_t *d, const slab_t *s, const char *blob, const void *buf,
                   double score)
{
    uint64_t len = product(s->ext, d->rank) * d->esize;
    int rc = make_room(d, len);
    if (rc) return rc;
    put_op_t *op = cte__calloc(1, sizeof *op);
    char *chunk = cte__malloc(len);
    if (!op || !chunk) {
        free(op), free(chunk);
        return cte__set_error(d->c, CTE_E_NOMEM, NULL);
    }
    if ((rc = chunk_fetch(d, blob, chunk, len)) != 0) {
        free(op), free(chunk);
        return rc;
    }
    box_copy(chunk, s->ext, s->in_chunk, buf, s->count, s->in_buf, s->n, d->rank, d->esize);
    op->d = d, op->heap = chunk, op->bytes = len;
    return put_staged(d, op, blob, 0, chunk, score);
}

/* The part of one chunk that the hyperslab covers: the whole chunk in one put, else one put
 * per contiguous run (dimensions after j held whole), else a read-modify-write. */
static int write_chunk(cte_dataset_t *d, const slab_t *s, const void *buf, double score)
{
    char blob[BLOB_MAX];
    int r = d->rank, j = r - 1;
    blob_chunk(blob, d, s->idx);
    while (j > 0 && s->n[j] == s->ext[j]) j--;
    uint64_t runs = product(s->n, j), run_bytes = product(s->n + j, r - j) * d->esize;
    if (runs > RMW_RUNS && run_bytes < RMW_RUN_BYTES) return put_rmw(d, s, blob, buf, score);
    if (runs == 1) { /* one contiguous run: at its offset, its own layout */
        uint64_t off = 0, stride = d->esize, zero[CTE_DATASET_MAX_RANK] = {0};
        for (int k = r - 1; k >= 0; k--) off += s->in_chunk[k] * stride, stride *= s->ext[k];
        return put_box(d, s, blob, off, s->n, zero, buf, score);
    }
    /* several runs: each is the box with dimensions < j fixed to one index */
    slab_t one = *s;
    uint64_t idx[CTE_DATASET_MAX_RANK] = {0};
    for (;;) {
        for (int k = 0; k < j; k++) {
            one.n[k] = 1;
            one.in_chunk[k] = s->in_chunk[k] + idx[k];
            one.in_buf[k] = s->in_buf[k] + idx[k];
        }
        uint64_t off = 0, stride = d->esize, zero[CTE_DATASET_MAX_RANK] = {0};
        for (int k = r - 1; k >= 0; k--) off += one.in_chunk[k] * stride, stride *= s->ext[k];
        int rc = put_box(d, &one, blob, off, one.n, zero, buf, score);
        if (rc) return rc;
        int k = j - 1;
        while (k >= 0 && ++idx[k] == s->n[k]) idx[k--] = 0;
        if (k < 0) return 0;
    }
}

int cte_dataset_write(cte_dataset_t *d, const uint64_t *start, const uint64_t *count,
                      const void *buf, double score)
{
    slab_t s;
    if (score > 1) return cte__set_error(d->c, CTE_E_INVAL, "dataset: score above 1");
    int rc = slab_init(d, &s, start, count);
    if (rc <= 0) return rc;
    if (!buf) return cte__set_error(d->c, CTE_E_INVAL, "dataset: no buffer");
    do {
        slab_chunk(d, &s);
        if ((rc = write_chunk(d, &s, buf, score)) != 0) return rc;
    } while (slab_next(d, &s));
    /* small requests (over shm a chunk's put is a reference into the data area) stay batched
     * in the connection until a READ_CHUNK's worth: send them now, or the server would only
     * see the last of them at the caller's next call, after its computing */
    return cte_flush(d->c);
}

int cte_dataset_wait(cte_dataset_t *d)
{
    while (d->pending) {
        int rc = cte_poll(d->c, -1);
        if (rc < 0) {
            record(d, rc, NULL);
            break;
        }
    }
    int rc = d->err;
    d->err = 0;
    if (rc) cte__set_error(d->c, rc, d->errmsg);
    return rc;
}

/* ---- reads ---- */

typedef struct get_op {
    cte_dataset_t *d;
    slab_t s; /* this chunk's geometry */
    char *buf;
    int *status;
} get_op_t;

static void get_done(cte_conn_t *c, int status, const cte_reply_t *r, void *ud)
{
    get_op_t *op = ud;
    cte_dataset_t *d = op->d;
    const slab_t *s = &op->s;
    size_t len = 0;
    const char *data = r ? cte_reply_str(r, &len) : NULL;
    size_t want = product(s->ext, d->rank) * d->esize;
    if (!status && r && cte_reply_kind(r) == CTE_REPLY_NULL)
        data = NULL, len = 0;
    else if (!status && (!r || cte_reply_kind(r) != CTE_REPLY_BULK))
        status = CTE_E_TYPE;
    else if (!status && len > want)
        status = CTE_E_FORMAT;
    if (status) {
        if (!*op->status) *op->status = status;
        free(op);
        return;
    }
    if (len == want) {
        box_copy(op->buf, s->count, s->in_buf, data, s->ext, s->in_chunk, s->n, d->rank, d->esize);
    } else { /* a chunk never written (zeros), or written only in part up to some run */
        char *tmp = cte__calloc(1, want ? want : 1);
        if (!tmp) {
            if (!*op->status) *op->status = CTE_E_NOMEM;
        } else {
            if (len) memcpy(tmp, data, len);
            box_copy(op->buf, s->count, s->in_buf, tmp, s->ext, s->in_chunk, s->n, d->rank,
                     d->esize);
            free(tmp);
        }
    }
    free(op);
}

int cte_dataset_read(cte_dataset_t *d, const uint64_t *start, const uint64_t *count, void *buf)
{
    slab_t s;
    char blob[BLOB_MAX];
    int status = 0;
    int rc = cte_dataset_wait(d);
    if (rc) return rc;
    if ((rc = slab_init(d, &s, start, count)) <= 0) return rc;
    if (!buf) return cte__set_error(d->c, CTE_E_INVAL, "dataset: no buffer");
    do {
        slab_chunk(d, &s);
        get_op_t *op = cte__malloc(sizeof *op);
        if (!op) {
            rc = cte__set_error(d->c, CTE_E_NOMEM, NULL);
            break;
        }
        op->d = d, op->s = s, op->buf = buf, op->status = &status;
        blob_chunk(blob, d, s.idx);
        if ((rc = cte_get_async(d->c, d->tag, blob, 0, -1, get_done, op)) != 0) {
            free(op);
            break;
        }
    } while (slab_next(d, &s));
    int wrc = cte_wait_all(d->c); /* the callbacks point at status and buf: wait for all */
    if (!rc) rc = wrc;
    if (!rc) rc = status;
    if (rc == CTE_E_FORMAT) return ds_fail(d, rc, "a chunk blob exceeds its extent");
    if (rc == CTE_E_TYPE) return cte__set_error(d->c, rc, "dataset: unexpected reply to TGET");
    if (rc == CTE_E_NOMEM) return cte__set_error(d->c, rc, NULL);
    return rc;
}

/* ---- attributes ---- */

const char *cte_dataset_attr(const cte_dataset_t *d, const char *key)
{
    for (size_t i = 0; key && i < d->nattr; i++)
        if (!strcmp(d->attrs[i].key, key)) return d->attrs[i].value;
    return NULL;
}

size_t cte_dataset_attr_count(const cte_dataset_t *d)
{
    return d->nattr;
}

const char *cte_dataset_attr_key(const cte_dataset_t *d, size_t i)
{
    return i < d->nattr ? d->attrs[i].key : NULL;
}

int cte_dataset_set_attr(cte_dataset_t *d, const char *key, const char *value)
{
    if (!key || !*key || strlen(key) > ATTR_KEY_MAX || (value && strlen(value) > ATTR_VALUE_MAX))
        return cte__set_error(d->c, CTE_E_INVAL,
                              "dataset: attribute keys are 1 to 255 bytes, values up to 64 KiB");
    size_t i = 0;
    while (i < d->nattr && strcmp(d->attrs[i].key, key)) i++;
    if (!value) {
        if (i == d->nattr) return 0;
        free(d->attrs[i].key), free(d->attrs[i].value);
        memmove(d->attrs + i, d->attrs + i + 1, (d->nattr - i - 1) * sizeof *d->attrs);
        d->nattr--;
        return meta_store(d);
    }
    char *v = dup_n(value, strlen(value));
    if (!v) return cte__set_error(d->c, CTE_E_NOMEM, NULL);
    if (i == d->nattr) {
        attr_t *a = cte__realloc(d->attrs, (d->nattr + 1) * sizeof *a);
        char *k = dup_n(key, strlen(key));
        if (a) d->attrs = a;
        if (!a || !k) {
            free(v), free(k);
            return cte__set_error(d->c, CTE_E_NOMEM, NULL);
        }
        a[d->nattr++] = (attr_t){k, NULL};
    }
    free(d->attrs[i].value);
    d->attrs[i].value = v;
    return meta_store(d);
}

/* ---- listing and deleting ---- */

/* Calls fn on every blob of tag whose name fully matches regex (TSCAN). */
static int scan(cte_conn_t *c, const char *tag, const char *regex,
                int (*fn)(void *ud, const char *name, size_t len), void *ud)
{
    uint64_t cursor = 0;
    do {
        cte_reply_t *names;
        int rc = cte_scan(c, tag, cursor, regex, 1000, &cursor, &names);
        if (rc) return rc;
        for (size_t i = 0; !rc && i < cte_reply_len(names); i++) {
            size_t len;
            const char *s = cte_reply_str(cte_reply_elem(names, i), &len);
            if (s) rc = fn(ud, s, len);
        }
        cte_reply_free(names);
        if (rc) return rc;
    } while (cursor);
    return 0;
}

typedef struct strvec {
    char **v;
    size_t n, cap, bytes;
} strvec_t;

static int strvec_add(void *ud, const char *s, size_t len)
{
    strvec_t *sv = ud;
    if (sv->n == sv->cap) {
        size_t nc = sv->cap ? sv->cap * 2 : 16;
        char **v = cte__realloc(sv->v, nc * sizeof *v);
        if (!v) return CTE_E_NOMEM;
        sv->v = v, sv->cap = nc;
    }
    if (!(sv->v[sv->n] = dup_n(s, len))) return CTE_E_NOMEM;
    sv->n++;
    sv->bytes += len + 1;
    return 0;
}

static void strvec_free(strvec_t *sv)
{
    for (size_t i = 0; i < sv->n; i++) free(sv->v[i]);
    free(sv->v);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cte_dataset_list(cte_conn_t *c, const char *tag, char ***names, size_t *n)
{
    strvec_t sv = {0};
    *names = NULL;
    if (n) *n = 0;
    if (!tag) return cte__set_error(c, CTE_E_INVAL, "dataset: no tag");
    int rc = scan(c, tag, ".+/meta", strvec_add, &sv);
    char **out = rc ? NULL : cte__malloc((sv.n + 1) * sizeof *out + sv.bytes);
    if (!rc && !out) rc = cte__set_error(c, CTE_E_NOMEM, NULL);
    if (rc) {
        strvec_free(&sv);
        return rc;
    }
    if (sv.n) qsort(sv.v, sv.n, sizeof *sv.v, by_name);
    char *p = (char *)(out + sv.n + 1);
    for (size_t i = 0; i < sv.n; i++) {
        size_t len = strlen(sv.v[i]) - strlen(META_SUFFIX);
        out[i] = p;
        memcpy(p, sv.v[i], len);
        p[len] = '\0';
        p += len + 1;
    }
    out[sv.n] = NULL;
    if (n) *n = sv.n;
    *names = out;
    strvec_free(&sv);
    return 0;
}

/* name with the regex metacharacters escaped, then suffix; 0 or CTE_E_INVAL (too long). */
static int regex_of(char *out, size_t cap, const char *name, const char *suffix)
{
    size_t j = 0;
    for (const char *p = name; *p; p++) {
        if (j + 3 >= cap) return CTE_E_INVAL;
        if (strchr(".^$|()[]{}*+?\\", *p)) out[j++] = '\\';
        out[j++] = *p;
    }
    return snprintf(out + j, cap - j, "%s", suffix) < (int)(cap - j) ? 0 : CTE_E_INVAL;
}

int cte_dataset_delete(cte_conn_t *c, const char *tag, const char *name)
{
    char regex[2 * CTE_DATASET_NAME_MAX + 32], meta[BLOB_MAX];
    strvec_t sv = {0};
    uint64_t removed = 0, r;
    int rc = check_name(c, tag, name);
    if (rc || (rc = blob_meta(meta, name)) ||
        (rc = regex_of(regex, sizeof regex, name, "/c(\\.[0-9]+)+")))
        return rc;
    rc = scan(c, tag, regex, strvec_add, &sv);
    for (size_t i = 0; !rc && i < sv.n; i += 1000) {
        size_t k = sv.n - i < 1000 ? sv.n - i : 1000;
        rc = cte_delete(c, tag, (const char *const *)sv.v + i, k, &r);
        removed += r;
    }
    strvec_free(&sv);
    const char *m = meta;
    if (!rc) rc = cte_delete(c, tag, &m, 1, &r);
    if (!rc && !(removed + r)) {
        char msg[300];
        snprintf(msg, sizeof msg, "dataset '%s': no such dataset", name);
        return cte__set_error(c, CTE_E_NOTFOUND, msg);
    }
    return rc;
}
