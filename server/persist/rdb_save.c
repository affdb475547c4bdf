/* rdb_save.c - writing values in Redis 7.0's RDB format (see rdb.h).
 *
 * Bytes are Redis's wherever Redis's are determined by the value: strings (integer and LZF
 * forms, common/lzf.c makes liblzf's choices), intsets (smallest width that holds every
 * member, ascending), listpack hashes in field order, listpack sorted sets in score order
 * with integral scores as integers and others as d2string's text, and lists cut into nodes as
 * quicklistPushTail cuts them for the configured list-max-listpack-size. Hashtable hashes and
 * sets are written in our dict's order and skiplist sorted sets from the highest score down,
 * as Redis writes them. Every listpack goes through rdb_write_string, so it is LZF-compressed
 * as Redis compresses it.
 *
 * Lengths:  00xxxxxx (6 bits) | 01xxxxxx yyyyyyyy (14 bits, big endian) | 0x80 + 4 bytes BE |
 *           0x81 + 8 bytes BE.
 * Strings:  length + bytes | 0xC0 int8 | 0xC1 int16 LE | 0xC2 int32 LE |
 *           0xC3 compressed-length uncompressed-length LZF-bytes. */
#include "server/persist/rdb.h"

#include "common/alloc.h"
#include "common/crc64.h"
#include "common/listpack.h"
#include "common/lzf.h"
#include "common/util.h"
#include "storage/t_hash.h"
#include "storage/t_list.h"
#include "storage/t_set.h"
#include "storage/t_stream.h"
#include "storage/t_zset.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define QL_SIZE_SAFETY 8192            /* quicklist's SIZE_SAFETY_LIMIT */
#define QL_ENTRY_OVERHEAD 8            /* quicklist's SIZE_ESTIMATE_OVERHEAD */
#define QL_PACKED 2                    /* QUICKLIST_NODE_CONTAINER_PACKED */
#define QL_PLAIN 1                     /* QUICKLIST_NODE_CONTAINER_PLAIN */
#define QL_PLAIN_MIN ((size_t)1 << 30) /* quicklist's packed_threshold */
#define QL_FILL_MAX 32767

void rdb_write_len(buf_t *b, uint64_t len)
{
    unsigned char t[9];
    size_t n;
    if (len < (1 << 6)) {
        t[0] = (unsigned char)len;
        n = 1;
    } else if (len < (1 << 14)) {
        t[0] = (unsigned char)(0x40 | (len >> 8));
        t[1] = (unsigned char)len;
        n = 2;
    } else if (len <= UINT32_MAX) {
        t[0] = 0x80;
        for (int i = 0; i < 4; i++) t[1 + i] = (unsigned char)(len >> (24 - 8 * i));
        n = 5;
    } else {
        t[0] = 0x81;
        for (int i = 0; i < 8; i++) t[1 + i] = (unsigned char)(len >> (56 - 8 * i));
        n = 9;
    }
    buf_append(b, t, n);
}

/* Redis's rdbEncodeInteger: the 8/16/32-bit forms, or 0 when v needs more. */
static size_t encode_int(long long v, unsigned char *t)
{
    if (v >= -(1 << 7) && v <= (1 << 7) - 1) {
        t[0] = 0xC0;
        t[1] = (unsigned char)v;
        return 2;
    }
    if (v >= -(1 << 15) && v <= (1 << 15) - 1) {
        t[0] = 0xC1;
        t[1] = (unsigned char)v;
        t[2] = (unsigned char)(v >> 8);
        return 3;
    }
    if (v >= -((long long)1 << 31) && v <= ((long long)1 << 31) - 1) {
        t[0] = 0xC2;
        for (int i = 0; i < 4; i++) t[1 + i] = (unsigned char)(v >> (8 * i));
        return 5;
    }
    return 0;
}

/* The LZF form when it is at least 4 bytes shorter (Redis's rdbSaveLzfStringObject). */
static int write_lzf(buf_t *b, const void *p, size_t len)
{
    size_t cap = len - 4;
    unsigned char *tmp = try_malloc(cap + 1);
    if (!tmp) return 0;
    size_t clen = lzf_compress(p, len, tmp, cap);
    if (clen) {
        buf_push(b, (char)0xC3);
        rdb_write_len(b, clen);
        rdb_write_len(b, len);
        buf_append(b, tmp, clen);
    }
    xfree(tmp);
    return clen != 0;
}

void rdb_write_string(buf_t *b, const void *p, size_t len, int compress)
{
    long long v;
    unsigned char t[5];
    size_t n;
    if (len <= 11 && str_to_ll(p, len, &v) && (n = encode_int(v, t)) > 0) {
        buf_append(b, t, n);
        return;
    }
    if (compress && len > 20 && write_lzf(b, p, len)) return;
    rdb_write_len(b, len);
    buf_append(b, p, len);
}

int rdb_value_type(const obj_t *o)
{
    switch (o->type) {
    case OBJ_STRING:
        return RDB_TYPE_STRING;
    case OBJ_LIST:
        return RDB_TYPE_LIST_QUICKLIST_2;
    case OBJ_SET:
        return o->enc == ENC_INTSET ? RDB_TYPE_SET_INTSET : RDB_TYPE_SET;
    case OBJ_ZSET:
        return o->enc == ENC_LISTPACK ? RDB_TYPE_ZSET_LISTPACK : RDB_TYPE_ZSET_2;
    case OBJ_HASH:
        return obj_redis_enc(o) == ENC_LISTPACK ? RDB_TYPE_HASH_LISTPACK : RDB_TYPE_HASH;
    case OBJ_STREAM:
        return RDB_TYPE_STREAM_LISTPACKS_2;
    case OBJ_TAG:
        return RDB_TYPE_CTE_TAG;
    default:
        return -1;
    }
}

/* ---- lists: nodes cut as quicklistPushTail cuts them ---- */

/* 1 if an element of sz bytes may join a node of lpbytes bytes and count entries
 * (_quicklistNodeAllowInsert for a packed node). */
static int node_allows(size_t lpbytes, uint32_t count, size_t sz, int fill)
{
    static const size_t level[5] = {4096, 8192, 16384, 32768, 65536};
    size_t new_sz = lpbytes + sz + QL_ENTRY_OVERHEAD;
    if (fill < 0 && (size_t)(-fill) - 1 < 5 && new_sz <= level[-fill - 1]) return 1;
    if (new_sz > QL_SIZE_SAFETY) return 0;
    return fill >= 0 && (int)count < fill;
}

/* One quicklist node to write: a listpack, or (plain) one element of at least
 * QL_PLAIN_MIN bytes stored as it is, as Redis keeps elements that large. */
typedef struct ql_node {
    unsigned char *lp;
    const char *p;
    size_t len;
} ql_node_t;

static void push_node(ql_node_t **nodes, size_t *n, size_t *cap, ql_node_t node)
{
    if (*n == *cap) *nodes = xrealloc(*nodes, (*cap *= 2) * sizeof **nodes);
    (*nodes)[(*n)++] = node;
}

static void write_list(buf_t *b, const obj_t *o, int compress)
{
    const list_t *l = (const list_t *)o;
    int fill = storage_params.list_max_listpack_size;
    size_t cap = 16, n = 0;
    ql_node_t *nodes = xmalloc(cap * sizeof *nodes);
    unsigned char *lp = NULL;
    uint32_t count = 0;
    list_iter_t it;
    list_entry_t e;

    if (fill < -5) fill = -5; /* quicklistSetFill's bounds */
    if (fill > QL_FILL_MAX) fill = QL_FILL_MAX;
    list_iter_init(&it, l, 0, LIST_TAIL);
    while (list_iter_next(&it, &e)) {
        int plain = e.len >= QL_PLAIN_MIN;
        if (lp && (plain || !node_allows(lp_bytes(lp), count, e.len, fill))) {
            push_node(&nodes, &n, &cap, (ql_node_t){lp, NULL, 0});
            lp = NULL;
        }
        if (plain) { /* never an integer: the bytes stay in the list */
            push_node(&nodes, &n, &cap, (ql_node_t){NULL, e.p, e.len});
            continue;
        }
        if (!lp) {
            lp = lp_new(0);
            count = 0;
        }
        lp = lp_append(lp, e.p, e.len);
        count++;
    }
    if (lp) push_node(&nodes, &n, &cap, (ql_node_t){lp, NULL, 0});
    rdb_write_len(b, n);
    for (size_t i = 0; i < n; i++) {
        rdb_write_len(b, nodes[i].lp ? QL_PACKED : QL_PLAIN);
        if (nodes[i].lp) {
            rdb_write_string(b, nodes[i].lp, lp_bytes(nodes[i].lp), compress);
            lp_free(nodes[i].lp);
        } else {
            rdb_write_string(b, nodes[i].p, nodes[i].len, compress);
        }
    }
    xfree(nodes);
}

/* ---- sets ---- */

static void write_intset(buf_t *b, const set_t *s, int compress)
{
    size_t n = set_length(s), width = 2;
    set_iter_t it;
    set_elem_t e;
    set_iter_init(&it, s);
    while (set_iter_next(&it, &e)) {
        if (e.v < INT32_MIN || e.v > INT32_MAX)
            width = 8;
        else if ((e.v < INT16_MIN || e.v > INT16_MAX) && width < 4)
            width = 4;
    }
    set_iter_deinit(&it);
    size_t size = 8 + n * width;
    unsigned char *blob = xmalloc(size), *q = blob + 8;
    for (int i = 0; i < 4; i++) {
        blob[i] = (unsigned char)(width >> (8 * i));
        blob[4 + i] = (unsigned char)(n >> (8 * i));
    }
    set_iter_init(&it, s);
    while (set_iter_next(&it, &e)) {
        uint64_t u = (uint64_t)e.v;
        for (size_t i = 0; i < width; i++) *q++ = (unsigned char)(u >> (8 * i));
    }
    set_iter_deinit(&it);
    rdb_write_string(b, blob, size, compress);
    xfree(blob);
}

static void write_set(buf_t *b, const set_t *s, int compress)
{
    if (s->h.enc == ENC_INTSET) {
        write_intset(b, s, compress);
        return;
    }
    set_iter_t it;
    set_elem_t e;
    rdb_write_len(b, set_length(s));
    set_iter_init(&it, s);
    while (set_iter_next(&it, &e)) rdb_write_string(b, e.p, e.len, compress);
    set_iter_deinit(&it);
}

/* ---- sorted sets ---- */

/* Redis's double2ll: integral and within +-LLONG_MAX/2. */
static int score_as_ll(double d, long long *v)
{
    if (!(d >= (double)(-LLONG_MAX / 2) && d <= (double)(LLONG_MAX / 2))) return 0;
    long long ll = (long long)d;
    if ((double)ll != d) return 0;
    *v = ll;
    return 1;
}

static void write_zset(buf_t *b, const zset_t *z, int compress)
{
    zset_iter_t it;
    zset_entry_t e;
    if (z->h.enc == ENC_LISTPACK) {
        unsigned char *lp = lp_new(0);
        zset_iter_rank(&it, z, 0, 0);
        while (zset_iter_next(&it, &e)) {
            long long v;
            lp = lp_append(lp, e.member, e.len);
            if (score_as_ll(e.score, &v)) {
                lp = lp_append_int(lp, v);
            } else {
                char t[64];
                size_t n = isinf(e.score)
                               ? (size_t)snprintf(t, sizeof t, "%s", e.score < 0 ? "-inf" : "inf")
                               : (size_t)snprintf(t, sizeof t, "%.17g", e.score);
                lp = lp_append(lp, t, n);
            }
        }
        rdb_write_string(b, lp, lp_bytes(lp), compress);
        lp_free(lp);
        return;
    }
    rdb_write_len(b, zset_length(z));
    zset_iter_rank(&it, z, 0, 1);
    while (zset_iter_next(&it, &e)) {
        unsigned char d[8];
        uint64_t u;
        memcpy(&u, &e.score, 8);
        for (int i = 0; i < 8; i++) d[i] = (unsigned char)(u >> (8 * i));
        rdb_write_string(b, e.member, e.len, compress);
        buf_append(b, d, 8);
    }
}

/* ---- hashes ---- */

static void write_hash(buf_t *b, const hash_t *hc, int compress)
{
    hash_t *h = (hash_t *)hc; /* iteration does not change it */
    hash_iter_t it;
    hash_entry_t e;
    hash_iter_init(&it, h);
    if (rdb_value_type(&h->h) == RDB_TYPE_HASH_LISTPACK) { /* as Redis reports it, not as stored */
        unsigned char *lp = lp_new(0);
        while (hash_iter_next(&it, &e)) {
            lp = lp_append(lp, e.field, e.flen);
            lp = lp_append(lp, e.value, e.vlen);
        }
        rdb_write_string(b, lp, lp_bytes(lp), compress);
        lp_free(lp);
        return;
    }
    rdb_write_len(b, hash_len(h));
    while (hash_iter_next(&it, &e)) {
        rdb_write_string(b, e.field, e.flen, compress);
        rdb_write_string(b, e.value, e.vlen, compress);
    }
}

/* ---- streams (RDB_TYPE_STREAM_LISTPACKS_2) ----
 * nodes count, per node: master id (16 raw bytes, as a string) and its listpack (a string);
 * length, last id, first id, max deleted id (ms and seq lengths each), entries added; groups
 * count, per group: name, last id, entries read (-1 goes as UINT64_MAX), PEL count and per
 * entry raw id, delivery time (8 bytes LE), delivery count; consumers count, per consumer:
 * name, seen time (8 bytes LE), PEL count and raw ids. */

static void raw_id(unsigned char *t, const stream_id_t *id)
{
    for (int i = 0; i < 8; i++) {
        t[i] = (unsigned char)(id->ms >> (56 - 8 * i));
        t[8 + i] = (unsigned char)(id->seq >> (56 - 8 * i));
    }
}

static void write_ms_time(buf_t *b, long long t)
{
    unsigned char d[8];
    uint64_t u = (uint64_t)t;
    for (int i = 0; i < 8; i++) d[i] = (unsigned char)(u >> (8 * i));
    buf_append(b, d, 8);
}

static void write_id_lens(buf_t *b, const stream_id_t *id)
{
    rdb_write_len(b, id->ms);
    rdb_write_len(b, id->seq);
}

static void write_stream(buf_t *b, const stream_t *s, int compress)
{
    unsigned char t[16];
    rdb_write_len(b, stream_idx_size(&s->nodes));
    for (stream_idx_node_t *n = stream_idx_first(&s->nodes); n; n = stream_idx_next(n)) {
        raw_id(t, &n->id);
        rdb_write_string(b, t, sizeof t, compress);
        rdb_write_string(b, n->val, lp_bytes(n->val), compress);
    }
    rdb_write_len(b, s->length);
    write_id_lens(b, &s->last_id);
    write_id_lens(b, &s->first_id);
    write_id_lens(b, &s->max_deleted_id);
    rdb_write_len(b, s->entries_added);
    rdb_write_len(b, s->ngroups);
    for (size_t i = 0; i < s->ngroups; i++) {
        const stream_cg_t *cg = s->groups[i];
        rdb_write_string(b, cg->name, cg->namelen, compress);
        write_id_lens(b, &cg->last_id);
        rdb_write_len(b, (uint64_t)cg->entries_read);
        rdb_write_len(b, stream_idx_size(&cg->pel));
        for (stream_idx_node_t *n = stream_idx_first(&cg->pel); n; n = stream_idx_next(n)) {
            const stream_nack_t *nack = n->val;
            raw_id(t, &n->id);
            buf_append(b, t, sizeof t);
            write_ms_time(b, nack->delivery_time);
            rdb_write_len(b, nack->delivery_count);
        }
        rdb_write_len(b, cg->nconsumers);
        for (size_t j = 0; j < cg->nconsumers; j++) {
            const stream_consumer_t *c = cg->consumers[j];
            rdb_write_string(b, c->name, c->namelen, compress);
            write_ms_time(b, c->seen_time);
            rdb_write_len(b, stream_idx_size(&c->pel));
            for (stream_idx_node_t *n = stream_idx_first(&c->pel); n; n = stream_idx_next(n)) {
                raw_id(t, &n->id);
                buf_append(b, t, sizeof t);
            }
        }
    }
}

int rdb_write_value(buf_t *b, const obj_t *o, int compress)
{
    switch (o->type) {
    case OBJ_STRING: {
        const str_obj_t *s = (const str_obj_t *)o;
        rdb_write_string(b, s->data, s->len, compress);
        break;
    }
    case OBJ_LIST:
        write_list(b, o, compress);
        break;
    case OBJ_SET:
        write_set(b, (const set_t *)o, compress);
        break;
    case OBJ_ZSET:
        write_zset(b, (const zset_t *)o, compress);
        break;
    case OBJ_HASH:
        write_hash(b, (const hash_t *)o, compress);
        break;
    case OBJ_STREAM:
        write_stream(b, (const stream_t *)(const void *)o, compress);
        break;
    case OBJ_TAG:
        return rdb__write_tag(b, o, compress);
    default:
        assert(!"rdb_write_value: type without an RDB form");
    }
    return 0;
}

int rdb_dump(buf_t *b, const obj_t *o, int compress)
{
    size_t start = b->len;
    int type = rdb_value_type(o);
    assert(type >= 0);
    buf_push(b, (char)type);
    if (rdb_write_value(b, o, compress) < 0) {
        b->len = start;
        return -1;
    }
    unsigned char foot[8];
    foot[0] = RDB_VERSION & 0xff;
    foot[1] = (RDB_VERSION >> 8) & 0xff;
    buf_append(b, foot, 2);
    uint64_t crc = crc64(0, b->data + start, b->len - start);
    for (int i = 0; i < 8; i++) foot[i] = (unsigned char)(crc >> (8 * i));
    buf_append(b, foot, 8);
    return 0;
}
