/* rdb_load.c - reading values in Redis's RDB format, versions 1 to 10 (see rdb.h).
 *
 * Everything read here is untrusted (a RESTORE argument, a file from elsewhere): every length
 * is checked against the bytes left before it is used, a count must not exceed the bytes left
 * (each element takes at least one byte) before anything is sized by it, LZF strings must
 * expand to exactly their stated length (which may not exceed what their compressed bytes can
 * produce, 264 bytes per 3), listpacks pass lp_validate and ziplists and intsets are checked
 * field by field as they are walked. Values are built through the storage APIs, which pick the
 * encodings Redis would: a duplicate member, field or set element, a NaN score or an empty
 * collection is an error, as in Redis.
 *
 * Old encodings read here (Redis 2.6 to 6.2 write them in RDB 6 to 9): ziplists of lists,
 * hashes and sorted sets (one ziplist, or a quicklist of ziplists), zipmap hashes, and text
 * scores (RDB_TYPE_ZSET).
 *
 * Ziplist layout (little endian):  zlbytes u32 | zltail u32 | zllen u16 | entries | 0xFF
 *   entry: prevlen (1 byte < 254, or 0xFE + u32) | encoding | data
 *   encoding: 00llllll str | 01llllll llllllll str (BE) | 0x80 + u32 BE str |
 *             0xC0 i16 | 0xD0 i32 | 0xE0 i64 | 0xF0 i24 | 0xFE i8 | 0xF1..0xFD immediate 0..12 */
#include "server/persist/rdb.h"

#include "common/alloc.h"
#include "common/crc64.h"
#include "common/listpack.h"
#include "common/lzf.h"
#include "common/rdb_walk.h"
#include "common/util.h"
#include "storage/t_hash.h"
#include "storage/t_list.h"
#include "storage/t_set.h"
#include "storage/t_stream.h"
#include "storage/t_zset.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

char *rdb_read_string_alloc(rdb_reader_t *r, size_t *len, int *err)
{
    rdbw_str_t s;
    *err = rdbw_string(r, &s);
    if (*err != RDB_OK) return NULL;
    char *copy = try_malloc(s.len + 1);
    if (copy) {
        memcpy(copy, s.p, s.len);
        copy[s.len] = '\0';
        *len = s.len;
    } else {
        *err = RDB_ERR_NOMEM;
    }
    rdbw_str_release(&s);
    return copy;
}

/* ---- element sources: listpacks and ziplists walked one entry at a time ---- */

typedef struct src {
    int zip; /* 0 listpack, 1 ziplist */
    unsigned char *lp, *lpp;
    const unsigned char *zp, *zend;
    uint32_t zcount, zdeclared;
} src_t;

/* A validated listpack blob (size bytes): 0, or RDB_ERR. */
static int src_listpack(src_t *s, const char *blob, size_t size)
{
    s->zip = 0;
    if (!lp_validate((const unsigned char *)blob, size, NULL)) return RDB_ERR;
    s->lp = (unsigned char *)blob;
    s->lpp = lp_first(s->lp);
    return RDB_OK;
}

static int src_ziplist(src_t *s, const char *blob, size_t size)
{
    const unsigned char *z = (const unsigned char *)blob;
    s->zip = 1;
    if (size < 11 || rdbw_load_le(z, 4) != size || z[size - 1] != 0xFF ||
        rdbw_load_le(z + 4, 4) >= size)
        return RDB_ERR;
    s->zp = z + 10;
    s->zend = z + size - 1;
    s->zcount = 0;
    s->zdeclared = (uint32_t)rdbw_load_le(z + 8, 2);
    return RDB_OK;
}

/* The next ziplist entry: 1 (string in *p and *len, or integer: *p NULL, *v), 0 at the end (count
 * checked), RDB_ERR. */
static int zl_next(src_t *s, const unsigned char **p, size_t *len, long long *v)
{
    const unsigned char *q = s->zp, *end = s->zend;
    if (q == end) return s->zdeclared == 0xFFFF || s->zdeclared == s->zcount ? 0 : RDB_ERR;
    size_t pl = *q < 254 ? 1 : *q == 254 ? 5 : 0;
    if (!pl || (size_t)(end - q) < pl + 1) return RDB_ERR;
    q += pl;
    unsigned e = *q;
    size_t hdr, dlen = 0;
    *p = NULL;
    if (e >> 6 == 0) {
        hdr = 1;
        dlen = e & 0x3f;
    } else if (e >> 6 == 1) {
        if (end - q < 2) return RDB_ERR;
        hdr = 2;
        dlen = ((size_t)(e & 0x3f) << 8) | q[1];
    } else if (e == 0x80) {
        if (end - q < 5) return RDB_ERR;
        hdr = 5;
        dlen = (size_t)rdbw_load_be(q + 1, 4);
    } else {
        hdr = 1;
        int n = e == 0xC0 ? 2 : e == 0xD0 ? 4 : e == 0xE0 ? 8 : e == 0xF0 ? 3 : e == 0xFE ? 1 : 0;
        if (e >= 0xF1 && e <= 0xFD) {
            *v = (long long)(e & 0x0f) - 1;
        } else if (!n) {
            return RDB_ERR;
        } else {
            if ((size_t)(end - q) < 1 + (size_t)n) return RDB_ERR;
            uint64_t u = rdbw_load_le(q + 1, n);
            int sh = 64 - 8 * n;
            *v = sh ? (long long)((int64_t)(u << sh) >> sh) : (long long)u;
            dlen = (size_t)n;
        }
        if ((size_t)(end - q) < hdr + dlen) return RDB_ERR;
        s->zp = q + hdr + dlen;
        s->zcount++;
        return 1;
    }
    if ((size_t)(end - q) - hdr < dlen || (size_t)(end - q) < hdr) return RDB_ERR;
    *p = q + hdr;
    *len = dlen;
    s->zp = q + hdr + dlen;
    s->zcount++;
    return 1;
}

/* The next element as bytes (integers formatted into num): 1, 0 at the end, RDB_ERR. */
static int src_next(src_t *s, const char **p, size_t *len, char *num)
{
    if (s->zip) {
        const unsigned char *q;
        long long v;
        int rc = zl_next(s, &q, len, &v);
        if (rc != 1) return rc;
        if (q) {
            *p = (const char *)q;
        } else {
            *len = ll_to_str(num, v);
            *p = num;
        }
        return 1;
    }
    if (!s->lpp) return 0;
    uint32_t l;
    const unsigned char *q = lp_get_text(s->lpp, &l, num);
    *p = (const char *)q;
    *len = l;
    s->lpp = lp_next(s->lp, s->lpp);
    return 1;
}

/* ---- building values ---- */

static int hash_from_src(src_t *s, obj_t **out)
{
    hash_t *h = hash_new();
    const char *f, *v;
    size_t flen, vlen;
    char nf[24], nv[24];
    int rc;
    while ((rc = src_next(s, &f, &flen, nf)) == 1) {
        if (src_next(s, &v, &vlen, nv) != 1 || !hash_set(&h, f, flen, v, vlen)) {
            rc = RDB_ERR;
            break;
        }
    }
    if (rc == 0 && hash_len(h) == 0) rc = RDB_ERR_EMPTY;
    if (rc != 0) {
        hash_free(h);
        return rc;
    }
    /* Redis 7.0 keeps a listpack or ziplist payload a listpack whatever its value lengths
     * (only more fields than hash-max-listpack-entries convert it): so is it reported. */
    if (hash_len(h) <= storage_params.hash_max_listpack_entries) hash_report_listpack(&h);
    *out = &h->h;
    return RDB_OK;
}

static int zset_add_checked(zset_t *z, const char *m, size_t mlen, double score)
{
    int out = 0;
    if (isnan(score) || zset_add(z, m, mlen, score, 0, &out, NULL) < 0) return RDB_ERR;
    return (out & ZSET_OUT_ADDED) ? RDB_OK : RDB_ERR;
}

static int zset_from_src(src_t *s, obj_t **out)
{
    zset_t *z = zset_new();
    const char *m, *sc;
    size_t mlen, slen;
    char nm[24], ns[24];
    int rc;
    while ((rc = src_next(s, &m, &mlen, nm)) == 1) {
        double d;
        if (src_next(s, &sc, &slen, ns) != 1 || !str_to_d(sc, slen, &d) ||
            zset_add_checked(z, m, mlen, d) != RDB_OK) {
            rc = RDB_ERR;
            break;
        }
    }
    if (rc == 0 && zset_length(z) == 0) rc = RDB_ERR_EMPTY;
    if (rc != 0) {
        zset_free(z);
        return rc;
    }
    *out = &z->h;
    return RDB_OK;
}

/* Appends every element of s to l: RDB_OK or an error. */
static int list_from_src(list_t *l, src_t *s)
{
    const char *p;
    size_t len;
    char num[24];
    int rc;
    while ((rc = src_next(s, &p, &len, num)) == 1)
        if (list_push(l, LIST_TAIL, p, len) < 0) return RDB_ERR_NOMEM;
    return rc;
}

/* Reads a string that holds an encoded blob (listpack, ziplist, intset...) and opens it as a
 * source of the given kind. The caller releases blob. */
static int read_blob(rdb_reader_t *r, rdbw_str_t *blob)
{
    return rdbw_string(r, blob);
}

static int load_string(rdb_reader_t *r, obj_t **out)
{
    rdbw_str_t s;
    int rc = rdbw_string(r, &s);
    if (rc != RDB_OK) return rc;
    str_obj_t *o = str_try_new(s.p, s.len, s.len);
    rdbw_str_release(&s);
    if (!o) return RDB_ERR_NOMEM;
    *out = &o->h;
    return RDB_OK;
}

static int load_list_plain(rdb_reader_t *r, obj_t **out)
{
    uint64_t n;
    if (rdbw_count(r, &n, 1) != RDB_OK) return RDB_ERR;
    if (n == 0) return RDB_ERR_EMPTY;
    list_t *l = list_new();
    int rc = RDB_OK;
    for (uint64_t i = 0; i < n && rc == RDB_OK; i++) {
        rdbw_str_t s;
        if ((rc = rdbw_string(r, &s)) != RDB_OK) break;
        if (list_push(l, LIST_TAIL, s.p, s.len) < 0) rc = RDB_ERR_NOMEM;
        rdbw_str_release(&s);
    }
    if (rc != RDB_OK) {
        list_free(l);
        return rc;
    }
    *out = list_obj(l);
    return RDB_OK;
}

/* Quicklists: version 1 nodes are ziplists, version 2 nodes say plain (one element) or packed
 * (a listpack). Empty nodes are skipped, as Redis does; an empty list is an error. */
static int load_quicklist(rdb_reader_t *r, int v2, obj_t **out)
{
    uint64_t n;
    if (rdbw_count(r, &n, 1) != RDB_OK) return RDB_ERR;
    if (n == 0) return RDB_ERR_EMPTY;
    list_t *l = list_new();
    int rc = RDB_OK;
    for (uint64_t i = 0; i < n && rc == RDB_OK; i++) {
        uint64_t container = 2;
        rdbw_str_t b;
        src_t s = {0};
        if (v2 && (rdbw_len(r, &container) != RDB_OK || (container != 1 && container != 2))) {
            rc = RDB_ERR;
            break;
        }
        if ((rc = read_blob(r, &b)) != RDB_OK) break;
        if (b.len == 0)
            rc = RDB_ERR;
        else if (container == 1)
            rc = list_push(l, LIST_TAIL, b.p, b.len) < 0 ? RDB_ERR_NOMEM : RDB_OK;
        else if ((rc = v2 ? src_listpack(&s, b.p, b.len) : src_ziplist(&s, b.p, b.len)) == RDB_OK)
            rc = list_from_src(l, &s);
        rdbw_str_release(&b);
    }
    if (rc == RDB_OK && list_len(l) == 0) rc = RDB_ERR_EMPTY;
    if (rc != RDB_OK) {
        list_free(l);
        return rc;
    }
    *out = list_obj(l);
    return RDB_OK;
}

static int load_list_ziplist(rdb_reader_t *r, obj_t **out)
{
    rdbw_str_t b;
    src_t s = {0};
    int rc = read_blob(r, &b);
    if (rc != RDB_OK) return rc;
    list_t *l = list_new();
    if ((rc = src_ziplist(&s, b.p, b.len)) == RDB_OK) rc = list_from_src(l, &s);
    rdbw_str_release(&b);
    if (rc == RDB_OK && list_len(l) == 0) rc = RDB_ERR_EMPTY;
    if (rc != RDB_OK) {
        list_free(l);
        return rc;
    }
    *out = list_obj(l);
    return RDB_OK;
}

static int load_set(rdb_reader_t *r, obj_t **out)
{
    uint64_t n;
    if (rdbw_count(r, &n, 1) != RDB_OK) return RDB_ERR;
    if (n == 0) return RDB_ERR_EMPTY;
    set_t *s = set_new(n > storage_params.set_max_intset_entries ? ENC_HT : ENC_INTSET);
    int rc = RDB_OK;
    for (uint64_t i = 0; i < n && rc == RDB_OK; i++) {
        rdbw_str_t m;
        if ((rc = rdbw_string(r, &m)) != RDB_OK) break;
        if (!set_add(s, m.p, m.len)) rc = RDB_ERR; /* a duplicate */
        rdbw_str_release(&m);
    }
    if (rc != RDB_OK) {
        set_free(s);
        return rc;
    }
    *out = &s->h;
    return RDB_OK;
}

/* Intset blob: encoding u32 (2, 4 or 8) | length u32 | length values of that width, LE. */
static int load_intset(rdb_reader_t *r, obj_t **out)
{
    rdbw_str_t b;
    int rc = read_blob(r, &b);
    if (rc != RDB_OK) return rc;
    const unsigned char *q = (const unsigned char *)b.p;
    uint64_t width = b.len >= 8 ? rdbw_load_le(q, 4) : 0,
             n = b.len >= 8 ? rdbw_load_le(q + 4, 4) : 0;
    if ((width != 2 && width != 4 && width != 8) || 8 + n * width != b.len) {
        rdbw_str_release(&b);
        return RDB_ERR;
    }
    if (n == 0) {
        rdbw_str_release(&b);
        return RDB_ERR_EMPTY;
    }
    set_t *s = set_new(ENC_INTSET);
    for (uint64_t i = 0; i < n && rc == RDB_OK; i++) {
        uint64_t u = rdbw_load_le(q + 8 + i * width, (int)width);
        int sh = 64 - 8 * (int)width;
        long long v = sh ? (long long)((int64_t)(u << sh) >> sh) : (long long)u;
        char num[24];
        if (!set_add(s, num, ll_to_str(num, v))) rc = RDB_ERR;
    }
    rdbw_str_release(&b);
    if (rc != RDB_OK) {
        set_free(s);
        return rc;
    }
    *out = &s->h;
    return RDB_OK;
}

static int load_zset(rdb_reader_t *r, int binary, obj_t **out)
{
    uint64_t n;
    if (rdbw_count(r, &n, 2) != RDB_OK) return RDB_ERR;
    if (n == 0) return RDB_ERR_EMPTY;
    zset_t *z = zset_new();
    int rc = RDB_OK;
    for (uint64_t i = 0; i < n && rc == RDB_OK; i++) {
        rdbw_str_t m;
        double d;
        if ((rc = rdbw_string(r, &m)) != RDB_OK) break;
        if (binary) {
            uint64_t u;
            if (rdbw_left(r) < 8) {
                rc = RDB_ERR;
            } else {
                u = rdbw_load_le(r->p, 8);
                memcpy(&d, &u, 8);
                r->p += 8;
            }
        } else {
            rc = rdbw_text_score(r, &d);
        }
        if (rc == RDB_OK) rc = zset_add_checked(z, m.p, m.len, d);
        rdbw_str_release(&m);
    }
    if (rc != RDB_OK) {
        zset_free(z);
        return rc;
    }
    *out = &z->h;
    return RDB_OK;
}

static int load_hash(rdb_reader_t *r, obj_t **out)
{
    uint64_t n;
    if (rdbw_count(r, &n, 2) != RDB_OK) return RDB_ERR;
    if (n == 0) return RDB_ERR_EMPTY;
    hash_t *h = hash_new();
    int rc = RDB_OK;
    for (uint64_t i = 0; i < n && rc == RDB_OK; i++) {
        rdbw_str_t f, v;
        if ((rc = rdbw_string(r, &f)) != RDB_OK) break;
        if ((rc = rdbw_string(r, &v)) == RDB_OK) {
            if (!hash_set(&h, f.p, f.len, v.p, v.len)) rc = RDB_ERR; /* a duplicate */
            rdbw_str_release(&v);
        }
        rdbw_str_release(&f);
    }
    if (rc != RDB_OK) {
        hash_free(h);
        return rc;
    }
    *out = &h->h;
    return RDB_OK;
}

/* Zipmap (Redis 2.4 hashes): zmlen u8 | (len key len free value pad)* | 0xFF, where a len is
 * one byte below 254 or 254 and a u32 LE. */
static int zipmap_len(const unsigned char **q, const unsigned char *end, size_t *len)
{
    if (*q >= end) return RDB_ERR;
    if (**q < 254) {
        *len = *(*q)++;
        return RDB_OK;
    }
    if (**q != 254 || end - *q < 5) return RDB_ERR;
    *len = (size_t)rdbw_load_le(*q + 1, 4);
    *q += 5;
    return RDB_OK;
}

static int load_zipmap(rdb_reader_t *r, obj_t **out)
{
    rdbw_str_t b;
    int rc = read_blob(r, &b);
    if (rc != RDB_OK) return rc;
    const unsigned char *q = (const unsigned char *)b.p + 1,
                        *end = (const unsigned char *)b.p + b.len;
    hash_t *h = hash_new();
    if (b.len < 2) rc = RDB_ERR;
    while (rc == RDB_OK && q < end && *q != 0xFF) {
        size_t klen, vlen, pad;
        const unsigned char *k;
        if (zipmap_len(&q, end, &klen) != RDB_OK || (size_t)(end - q) < klen) {
            rc = RDB_ERR;
            break;
        }
        k = q;
        q += klen;
        if (zipmap_len(&q, end, &vlen) != RDB_OK || q >= end) {
            rc = RDB_ERR;
            break;
        }
        pad = *q++;
        if ((size_t)(end - q) < vlen || (size_t)(end - q) - vlen < pad) {
            rc = RDB_ERR;
            break;
        }
        if (!hash_set(&h, k, klen, q, vlen)) rc = RDB_ERR;
        q += vlen + pad;
    }
    if (rc == RDB_OK && (q + 1 != end)) rc = RDB_ERR;
    if (rc == RDB_OK && hash_len(h) == 0) rc = RDB_ERR_EMPTY;
    rdbw_str_release(&b);
    if (rc != RDB_OK) {
        hash_free(h);
        return rc;
    }
    *out = &h->h;
    return RDB_OK;
}

/* Hashes and sorted sets stored as one listpack or ziplist of pairs. */
static int load_pairs(rdb_reader_t *r, int zip, int zset, obj_t **out)
{
    rdbw_str_t b;
    src_t s = {0};
    int rc = read_blob(r, &b);
    if (rc != RDB_OK) return rc;
    rc = zip ? src_ziplist(&s, b.p, b.len) : src_listpack(&s, b.p, b.len);
    if (rc == RDB_OK) rc = zset ? zset_from_src(&s, out) : hash_from_src(&s, out);
    rdbw_str_release(&b);
    return rc;
}

/* ---- streams (RDB_TYPE_STREAM_LISTPACKS_2, and RDB_TYPE_STREAM_LISTPACKS of Redis 5 to 6.2)
 * Layout in rdb_save.c. Everything goes through the stream builder (storage/t_stream.h), which
 * validates each node listpack, the ids' order, the length, and that PELs and consumers agree;
 * the legacy type lacks first id, max deleted id, entries added and entries read, which are
 * derived as Redis derives them when it loads that type. */

static int read_raw_id(rdb_reader_t *r, stream_id_t *id)
{
    if (rdbw_left(r) < 16) return RDB_ERR;
    id->ms = rdbw_load_be(r->p, 8);
    id->seq = rdbw_load_be(r->p + 8, 8);
    r->p += 16;
    return RDB_OK;
}

static int read_ms_time(rdb_reader_t *r, long long *t)
{
    if (rdbw_left(r) < 8) return RDB_ERR;
    *t = (long long)rdbw_load_le(r->p, 8);
    r->p += 8;
    return RDB_OK;
}

static int read_id_lens(rdb_reader_t *r, stream_id_t *id)
{
    if (rdbw_len(r, &id->ms) != RDB_OK || rdbw_len(r, &id->seq) != RDB_OK) return RDB_ERR;
    return RDB_OK;
}

static int stream_nodes(rdb_reader_t *r, stream_t *s)
{
    uint64_t n;
    const char *err;
    if (rdbw_count(r, &n, 2) != RDB_OK) return RDB_ERR;
    for (uint64_t i = 0; i < n; i++) {
        rdbw_str_t key, lp;
        stream_id_t master;
        int rc = rdbw_string(r, &key);
        if (rc != RDB_OK) return rc;
        if (key.len != 16) {
            rdbw_str_release(&key);
            return RDB_ERR;
        }
        master.ms = rdbw_load_be((const unsigned char *)key.p, 8);
        master.seq = rdbw_load_be((const unsigned char *)key.p + 8, 8);
        rdbw_str_release(&key);
        if ((rc = rdbw_string(r, &lp)) != RDB_OK) return rc;
        rc = stream_build_node(s, &master, (const unsigned char *)lp.p, lp.len, &err);
        rdbw_str_release(&lp);
        if (rc < 0) return RDB_ERR;
    }
    return RDB_OK;
}

static int stream_meta(rdb_reader_t *r, stream_t *s, int v2)
{
    uint64_t length, added;
    stream_id_t last, first = {0, 0}, maxdel = {0, 0};
    const char *err;
    if (rdbw_len(r, &length) != RDB_OK || read_id_lens(r, &last) != RDB_OK) return RDB_ERR;
    if (v2) {
        if (read_id_lens(r, &first) != RDB_OK || read_id_lens(r, &maxdel) != RDB_OK ||
            rdbw_len(r, &added) != RDB_OK)
            return RDB_ERR;
    } else {
        added = length;
        stream_edge_id(s, 1, 1, &first);
    }
    return stream_build_meta(s, length, &last, &first, &maxdel, added, &err) < 0 ? RDB_ERR : RDB_OK;
}

static int stream_consumers(rdb_reader_t *r, stream_cg_t *cg)
{
    uint64_t n, k;
    const char *err;
    if (rdbw_count(r, &n, 10) != RDB_OK) return RDB_ERR; /* name, seen time, PEL count */
    for (uint64_t i = 0; i < n; i++) {
        rdbw_str_t name;
        long long seen;
        stream_consumer_t *c;
        int rc = rdbw_string(r, &name);
        if (rc != RDB_OK) return rc;
        rc = read_ms_time(r, &seen) == RDB_OK &&
                     stream_build_consumer(cg, name.p, name.len, seen, &c, &err) == 0
                 ? RDB_OK
                 : RDB_ERR;
        rdbw_str_release(&name);
        if (rc != RDB_OK || rdbw_count(r, &k, 16) != RDB_OK) return RDB_ERR;
        for (uint64_t j = 0; j < k; j++) {
            stream_id_t id;
            if (read_raw_id(r, &id) != RDB_OK || stream_build_claim(cg, c, &id, &err) < 0)
                return RDB_ERR;
        }
    }
    return RDB_OK;
}

static int stream_group(rdb_reader_t *r, stream_t *s, int v2)
{
    rdbw_str_t name;
    stream_id_t last;
    long long read = 0;
    stream_cg_t *cg;
    uint64_t n;
    const char *err;
    int rc = rdbw_string(r, &name);
    if (rc != RDB_OK) return rc;
    rc = read_id_lens(r, &last);
    if (rc == RDB_OK && v2) {
        uint64_t u = 0;
        rc = rdbw_len(r, &u);
        if (u == UINT64_MAX) /* written from -1: unknown */
            read = STREAM_ENTRIES_READ_INVALID;
        else if (u > (uint64_t)LLONG_MAX)
            rc = RDB_ERR;
        else
            read = (long long)u;
    } else if (rc == RDB_OK) {
        read = stream_estimate_distance(s, &last);
    }
    if (rc == RDB_OK && stream_build_group(s, name.p, name.len, &last, read, &cg, &err) < 0)
        rc = RDB_ERR;
    rdbw_str_release(&name);
    if (rc != RDB_OK) return rc;
    if (rdbw_count(r, &n, 25) != RDB_OK) return RDB_ERR; /* id, delivery time, count */
    for (uint64_t i = 0; i < n; i++) {
        stream_id_t id;
        long long when;
        uint64_t count;
        if (read_raw_id(r, &id) != RDB_OK || read_ms_time(r, &when) != RDB_OK ||
            rdbw_len(r, &count) != RDB_OK || stream_build_pel(cg, &id, when, count, &err) < 0)
            return RDB_ERR;
    }
    return stream_consumers(r, cg);
}

static int load_stream(rdb_reader_t *r, int v2, obj_t **out)
{
    stream_t *s = stream_new();
    uint64_t n;
    const char *err;
    int rc = stream_nodes(r, s);
    if (rc == RDB_OK) rc = stream_meta(r, s, v2);
    if (rc == RDB_OK) rc = rdbw_count(r, &n, 1);
    for (uint64_t i = 0; rc == RDB_OK && i < n; i++) rc = stream_group(r, s, v2);
    if (rc == RDB_OK && stream_build_finish(s, &err) < 0) rc = RDB_ERR;
    if (rc != RDB_OK) {
        stream_free(s);
        return rc;
    }
    *out = &s->h;
    return RDB_OK;
}

int rdb_read_value(rdb_reader_t *r, int type, obj_t **out)
{
    *out = NULL;
    switch (type) {
    case RDB_TYPE_STRING:
        return load_string(r, out);
    case RDB_TYPE_LIST:
        return load_list_plain(r, out);
    case RDB_TYPE_SET:
        return load_set(r, out);
    case RDB_TYPE_ZSET:
        return load_zset(r, 0, out);
    case RDB_TYPE_ZSET_2:
        return load_zset(r, 1, out);
    case RDB_TYPE_HASH:
        return load_hash(r, out);
    case RDB_TYPE_HASH_ZIPMAP:
        return load_zipmap(r, out);
    case RDB_TYPE_LIST_ZIPLIST:
        return load_list_ziplist(r, out);
    case RDB_TYPE_SET_INTSET:
        return load_intset(r, out);
    case RDB_TYPE_ZSET_ZIPLIST:
        return load_pairs(r, 1, 1, out);
    case RDB_TYPE_HASH_ZIPLIST:
        return load_pairs(r, 1, 0, out);
    case RDB_TYPE_LIST_QUICKLIST:
        return load_quicklist(r, 0, out);
    case RDB_TYPE_HASH_LISTPACK:
        return load_pairs(r, 0, 0, out);
    case RDB_TYPE_ZSET_LISTPACK:
        return load_pairs(r, 0, 1, out);
    case RDB_TYPE_LIST_QUICKLIST_2:
        return load_quicklist(r, 1, out);
    case RDB_TYPE_CTE_TAG:
        return rdb__read_tag(r, out);
    case RDB_TYPE_STREAM_LISTPACKS:
        return load_stream(r, 0, out);
    case RDB_TYPE_STREAM_LISTPACKS_2:
        return load_stream(r, 1, out);
    case RDB_TYPE_MODULE_2:
        return RDB_ERR_UNSUPPORTED;
    default:
        return RDB_ERR;
    }
}

/* ---- DUMP payloads ---- */

int rdb_dump_verify(const void *p, size_t len, int *version)
{
    const unsigned char *b = p;
    if (len < 10) return 0;
    const unsigned char *foot = b + len - 10;
    int v = foot[0] | (foot[1] << 8);
    if (version) *version = v;
    if (v > RDB_VERSION) return 0;
    return crc64(0, b, len - 8) == rdbw_load_le(foot + 2, 8);
}

int rdb_dump_decode(const void *p, size_t len, int version, obj_t **out)
{
    rdb_reader_t r = {.p = p, .end = (const unsigned char *)p + len - 10, .version = version};
    *out = NULL;
    if (len < 11) return RDB_ERR;
    int type = *r.p++;
    if (!rdbw_is_value_type(type) && type != RDB_TYPE_CTE_TAG) return RDB_ERR;
    return rdb_read_value(&r, type, out);
}
