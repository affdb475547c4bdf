/* rdb_tag.c - tags in DUMP payloads: a value type of our own, RDB_TYPE_CTE_TAG (200).
 *
 * Redis 7.0 has no such type (its value types are 0-7 and 9-19, its opcodes 245-255), so
 * redis-server answers "Bad data format" to a tag's payload; everything else about the
 * payload (footer, CRC, string and length forms) is the standard one.
 *
 *   byte    format version, 1
 *   length  number of blobs
 *   per blob:
 *     string      name
 *     8 bytes     score (IEEE 754 double, little endian)
 *     3 x 8       ctime, mtime, atime (signed Unix ms, little endian)
 *     length x 2  reads, writes
 *     length      size (bytes of content)
 *     strings     the content in chunks of at most 8 MiB (each LZF-compressed as any RDB
 *                 string) covering exactly size bytes
 *
 * Writing reads blob bytes from file tiers synchronously on the loop thread, as SAVE does
 * (server/persist/rewrite.c); a blob with a write in flight makes DUMP fail ("try again").
 * Reading places each blob by its score through tag_put, running file-tier writes
 * synchronously; a blob no tier has room for fails the whole RESTORE (nothing is kept). */
#include "server/persist/rdb.h"

#include "common/alloc.h"
#include "common/status.h"
#include "storage/t_tag.h"

#include <string.h>

#define TAG_FORMAT 1
#define CHUNK (8u << 20)

struct dump_ctx {
    buf_t *b;
    int compress;
    int failed;
};

static void put_le64(buf_t *b, uint64_t v)
{
    unsigned char t[8];
    for (int i = 0; i < 8; i++) t[i] = (unsigned char)(v >> (8 * i));
    buf_append(b, t, 8);
}

/* Reads [off, off+len) of b without counting an access: ST_OK or an error. */
static int peek(blob_t *b, uint64_t off, uint64_t len, char *dst)
{
    tag_plan_t *plan = NULL;
    int rc = blob_peek(b, off, len, dst, &plan);
    if (rc == ST_PENDING) rc = tag_plan_run(plan) < 0 ? ST_OOM : ST_OK;
    if (plan) tag_plan_finish(plan, 0, NULL, NULL);
    return rc;
}

static void dump_blob(void *ud, blob_t *b)
{
    struct dump_ctx *x = ud;
    size_t nlen;
    const char *name = blob_name(b, &nlen);
    blob_info_t info;
    uint64_t u;
    if (x->failed) return;
    blob_get_info(b, &info);
    rdb_write_string(x->b, name, nlen, x->compress);
    memcpy(&u, &info.score, 8);
    put_le64(x->b, u);
    put_le64(x->b, (uint64_t)info.ctime);
    put_le64(x->b, (uint64_t)info.mtime);
    put_le64(x->b, (uint64_t)info.atime);
    rdb_write_len(x->b, info.reads);
    rdb_write_len(x->b, info.writes);
    rdb_write_len(x->b, info.size);
    char *tmp = info.size ? try_malloc(info.size < CHUNK ? info.size : CHUNK) : NULL;
    if (info.size && !tmp) {
        x->failed = 1;
        return;
    }
    for (uint64_t off = 0; off < info.size && !x->failed; off += CHUNK) {
        uint64_t n = info.size - off < CHUNK ? info.size - off : CHUNK;
        const char *view = blob_ram_view(b, off, n);
        if (!view && peek(b, off, n, tmp) != ST_OK) x->failed = 1;
        if (!x->failed) rdb_write_string(x->b, view ? view : tmp, n, x->compress);
    }
    xfree(tmp);
}

int rdb__write_tag(buf_t *b, const obj_t *o, int compress)
{
    tag_obj_t *t = (tag_obj_t *)o;
    struct dump_ctx x = {b, compress, 0};
    buf_push(b, TAG_FORMAT);
    rdb_write_len(b, tag_len(t));
    tag_foreach(t, dump_blob, &x);
    return x.failed ? -1 : 0;
}

/* Writes one chunk of a blob being restored, running a file-tier plan at once. */
static int put_chunk(tag_obj_t *t, const char *name, size_t nlen, uint64_t off, const char *p,
                     size_t len, double score)
{
    tag_write_t w = {name, nlen, off, p, len, 1, score, 0};
    tag_plan_t *plan = NULL;
    uint64_t size;
    int rc = tag_put(t, &w, &size, &plan);
    if (rc == ST_PENDING) {
        int st = tag_plan_run(plan);
        tag_plan_finish(plan, st, NULL, NULL);
        rc = st < 0 ? ST_OOM : ST_OK; /* a failed plan was undone by tag_plan_finish */
    }
    return rc == ST_OK ? RDB_OK : RDB_ERR_NOMEM;
}

static int read_le64(rdb_reader_t *r, uint64_t *v)
{
    if (rdbw_left(r) < 8) return RDB_ERR;
    *v = rdbw_load_le(r->p, 8);
    r->p += 8;
    return RDB_OK;
}

static int read_blob(rdb_reader_t *r, tag_obj_t *t)
{
    rdbw_str_t name;
    uint64_t u, times[3], reads, writes, size;
    double score;
    int rc = rdbw_string(r, &name);
    if (rc != RDB_OK) return rc;
    rc = read_le64(r, &u);
    memcpy(&score, &u, 8);
    for (int i = 0; i < 3 && rc == RDB_OK; i++) rc = read_le64(r, &times[i]);
    if (rc == RDB_OK && (rdbw_len(r, &reads) || rdbw_len(r, &writes) || rdbw_len(r, &size)))
        rc = RDB_ERR;
    if (rc == RDB_OK && (!(score >= 0 && score <= 1) || tag_blob(t, name.p, name.len)))
        rc = RDB_ERR; /* a score out of [0, 1], a blob twice */
    for (int i = 0; i < 3 && rc == RDB_OK; i++)
        if (times[i] > (uint64_t)TAG_TIME_MAX) rc = RDB_ERR; /* TMETA would refuse it too */
    if (rc == RDB_OK && size == 0) rc = put_chunk(t, name.p, name.len, 0, NULL, 0, score);
    for (uint64_t off = 0; rc == RDB_OK && off < size;) {
        rdbw_str_t chunk;
        if ((rc = rdbw_string(r, &chunk)) != RDB_OK) break;
        if (chunk.len == 0 || chunk.len > size - off)
            rc = RDB_ERR;
        else
            rc = put_chunk(t, name.p, name.len, off, chunk.p, chunk.len, score);
        off += chunk.len;
        rdbw_str_release(&chunk);
    }
    if (rc == RDB_OK)
        tag_set_meta(t, name.p, name.len, (long long)times[0], (long long)times[1],
                     (long long)times[2], reads, writes);
    rdbw_str_release(&name);
    return rc;
}

int rdb__read_tag(rdb_reader_t *r, obj_t **out)
{
    uint64_t n;
    if (rdbw_left(r) < 1 || *r->p++ != TAG_FORMAT) return RDB_ERR;
    if (rdbw_count(r, &n, 1) != RDB_OK) return RDB_ERR;
    if (n == 0) return RDB_ERR_EMPTY;
    tag_obj_t *t = tag_new();
    int rc = RDB_OK;
    for (uint64_t i = 0; i < n && rc == RDB_OK; i++) rc = read_blob(r, t);
    if (rc != RDB_OK) {
        obj_free((obj_t *)t);
        return rc;
    }
    *out = (obj_t *)t;
    return RDB_OK;
}
