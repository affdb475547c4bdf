/* rdb_walk.c - skipping through RDB bytes (see rdb_walk.h).
 *
 * Each reader checks the bytes it needs against r->end first. Counts are checked against the
 * bytes left (rdbw_count) before a loop runs them, so a hostile count ends in RDB_ERR after at
 * most one pass over the input. */
#include "common/rdb_walk.h"

#include "common/lzf.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LZF_MAX_RATIO 88 /* at most 264 bytes out of a 3-byte reference */

uint64_t rdbw_load_be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | p[i];
    return v;
}

uint64_t rdbw_load_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* Reads a length or, when the top bits are 11, the encoding number into *enc (*len is then
 * meaningless). */
int rdbw_len_or_enc(rdb_reader_t *r, uint64_t *len, int *enc)
{
    if (rdbw_left(r) < 1) return RDB_ERR;
    unsigned b = *r->p;
    *enc = -1;
    switch (b >> 6) {
    case 0:
        *len = b & 0x3f;
        r->p++;
        return RDB_OK;
    case 1:
        if (rdbw_left(r) < 2) return RDB_ERR;
        *len = ((uint64_t)(b & 0x3f) << 8) | r->p[1];
        r->p += 2;
        return RDB_OK;
    case 3:
        *enc = b & 0x3f;
        r->p++;
        return RDB_OK;
    }
    int n = b == 0x80 ? 4 : b == 0x81 ? 8 : 0;
    if (!n || rdbw_left(r) < (size_t)n + 1) return RDB_ERR;
    *len = rdbw_load_be(r->p + 1, n);
    r->p += 1 + n;
    return RDB_OK;
}

int rdbw_len(rdb_reader_t *r, uint64_t *len)
{
    int enc;
    if (rdbw_len_or_enc(r, len, &enc) != RDB_OK || enc != -1) return RDB_ERR;
    return RDB_OK;
}

/* A count of elements that each take at least min_bytes of input. */
int rdbw_count(rdb_reader_t *r, uint64_t *n, size_t min_bytes)
{
    if (rdbw_len(r, n) != RDB_OK) return RDB_ERR;
    if (*n > rdbw_left(r) / min_bytes) return RDB_ERR;
    return RDB_OK;
}

void rdbw_str_release(rdbw_str_t *s)
{
    free(s->owned);
    s->owned = NULL;
}

static int read_lzf(rdb_reader_t *r, rdbw_str_t *s)
{
    uint64_t clen, len;
    if (rdbw_len(r, &clen) != RDB_OK || rdbw_len(r, &len) != RDB_OK) return RDB_ERR;
    if (clen > rdbw_left(r) || len / LZF_MAX_RATIO > clen) return RDB_ERR;
    char *out = malloc(len + 1);
    if (!out) return RDB_ERR_NOMEM;
    if (lzf_decompress(r->p, clen, out, len) != len) {
        free(out);
        return RDB_ERR;
    }
    out[len] = '\0';
    r->p += clen;
    s->p = s->owned = out;
    s->len = len;
    return RDB_OK;
}

int rdbw_string(rdb_reader_t *r, rdbw_str_t *s)
{
    uint64_t len;
    int enc;
    s->owned = NULL;
    if (rdbw_len_or_enc(r, &len, &enc) != RDB_OK) return RDB_ERR;
    if (enc == -1) {
        if (len > rdbw_left(r)) return RDB_ERR;
        s->p = (const char *)r->p;
        s->len = len;
        r->p += len;
        return RDB_OK;
    }
    if (enc == 3) return read_lzf(r, s);
    int n = enc == 0 ? 1 : enc == 1 ? 2 : enc == 2 ? 4 : 0;
    if (!n || rdbw_left(r) < (size_t)n) return RDB_ERR;
    uint64_t u = rdbw_load_le(r->p, n);
    int64_t v = n == 1 ? (int8_t)u : n == 2 ? (int16_t)u : (int32_t)u;
    r->p += n;
    s->len = ll_to_str(s->num, v);
    s->p = s->num;
    return RDB_OK;
}

int rdbw_skip_string(rdb_reader_t *r)
{
    uint64_t len;
    int enc;
    if (rdbw_len_or_enc(r, &len, &enc) != RDB_OK) return RDB_ERR;
    if (enc == -1) {
        if (len > rdbw_left(r)) return RDB_ERR;
        r->p += len;
        return RDB_OK;
    }
    if (enc == 3) {
        uint64_t clen, ulen;
        if (rdbw_len(r, &clen) != RDB_OK || rdbw_len(r, &ulen) != RDB_OK || clen > rdbw_left(r))
            return RDB_ERR;
        r->p += clen;
        return RDB_OK;
    }
    int n = enc == 0 ? 1 : enc == 1 ? 2 : enc == 2 ? 4 : 0;
    if (!n || rdbw_left(r) < (size_t)n) return RDB_ERR;
    r->p += n;
    return RDB_OK;
}

int rdbw_skip(rdb_reader_t *r, size_t n)
{
    if (rdbw_left(r) < n) return RDB_ERR;
    r->p += n;
    return RDB_OK;
}

/* A text score of RDB_TYPE_ZSET: 253 nan, 254 +inf, 255 -inf, else that many characters. */
int rdbw_text_score(rdb_reader_t *r, double *d)
{
    if (rdbw_left(r) < 1) return RDB_ERR;
    unsigned n = *r->p++;
    if (n == 253) return RDB_ERR; /* NaN */
    if (n >= 254) {
        *d = n == 254 ? INFINITY : -INFINITY;
        return RDB_OK;
    }
    if (rdbw_left(r) < n) return RDB_ERR;
    char t[256];
    memcpy(t, r->p, n);
    t[n] = '\0';
    r->p += n;
    char *e;
    *d = strtod(t, &e);
    return e == t ? RDB_ERR : RDB_OK;
}

int rdbw_is_value_type(int type)
{
    return (type >= 0 && type <= 7) || (type >= 9 && type <= 19);
}

/* ---- skipping values (what the importer cannot load, reported by key) ---- */

static int skip_strings(rdb_reader_t *r, uint64_t per_item, size_t extra)
{
    uint64_t n;
    if (rdbw_count(r, &n, 1) != RDB_OK) return RDB_ERR;
    for (uint64_t i = 0; i < n; i++) {
        for (uint64_t k = 0; k < per_item; k++)
            if (rdbw_skip_string(r) != RDB_OK) return RDB_ERR;
        if (rdbw_skip(r, extra) != RDB_OK) return RDB_ERR;
    }
    return RDB_OK;
}

/* A module value written with annotations (RDB_TYPE_MODULE_2, and module aux data): opcodes
 * 1 signed, 2 unsigned (a length each), 3 float (4 bytes), 4 double (8), 5 string, 0 end. */
static int skip_module_opcodes(rdb_reader_t *r)
{
    for (;;) {
        uint64_t op, v;
        if (rdbw_len(r, &op) != RDB_OK) return RDB_ERR;
        int rc;
        switch (op) {
        case 0:
            return RDB_OK;
        case 1:
        case 2:
            rc = rdbw_len(r, &v);
            break;
        case 3:
            rc = rdbw_skip(r, 4);
            break;
        case 4:
            rc = rdbw_skip(r, 8);
            break;
        case 5:
            rc = rdbw_skip_string(r);
            break;
        default:
            return RDB_ERR;
        }
        if (rc != RDB_OK) return RDB_ERR;
    }
}

static int skip_lens(rdb_reader_t *r, int n)
{
    uint64_t v;
    for (int i = 0; i < n; i++)
        if (rdbw_len(r, &v) != RDB_OK) return RDB_ERR;
    return RDB_OK;
}

/* Streams: listpacks (id key + listpack), length, last id, [v2: first id, max deleted id,
 * entries added], groups (name, last id, [v2: entries read], PEL of 16-byte ids with delivery
 * time and count, consumers with name, seen time and a PEL of ids). */
static int skip_stream(rdb_reader_t *r, int v2)
{
    uint64_t n, m, k;
    if (skip_strings(r, 2, 0) != RDB_OK || skip_lens(r, 3) != RDB_OK) return RDB_ERR;
    if (v2 && skip_lens(r, 5) != RDB_OK) return RDB_ERR;
    if (rdbw_count(r, &n, 1) != RDB_OK) return RDB_ERR;
    for (uint64_t g = 0; g < n; g++) {
        if (rdbw_skip_string(r) != RDB_OK || skip_lens(r, v2 ? 3 : 2) != RDB_OK) return RDB_ERR;
        if (rdbw_count(r, &m, 16) != RDB_OK) return RDB_ERR;
        for (uint64_t i = 0; i < m; i++)
            if (rdbw_skip(r, 24) != RDB_OK || skip_lens(r, 1) != RDB_OK) return RDB_ERR;
        if (rdbw_count(r, &m, 1) != RDB_OK) return RDB_ERR;
        for (uint64_t c = 0; c < m; c++) {
            if (rdbw_skip_string(r) != RDB_OK || rdbw_skip(r, 8) != RDB_OK ||
                rdbw_count(r, &k, 16) != RDB_OK || rdbw_skip(r, k * 16) != RDB_OK)
                return RDB_ERR;
        }
    }
    return RDB_OK;
}

int rdbw_skip_value(rdb_reader_t *r, int type)
{
    uint64_t n;
    switch (type) {
    case RDB_TYPE_STRING:
    case RDB_TYPE_HASH_ZIPMAP:
    case RDB_TYPE_LIST_ZIPLIST:
    case RDB_TYPE_SET_INTSET:
    case RDB_TYPE_ZSET_ZIPLIST:
    case RDB_TYPE_HASH_ZIPLIST:
    case RDB_TYPE_HASH_LISTPACK:
    case RDB_TYPE_ZSET_LISTPACK:
        return rdbw_skip_string(r);
    case RDB_TYPE_LIST:
    case RDB_TYPE_SET:
    case RDB_TYPE_LIST_QUICKLIST:
        return skip_strings(r, 1, 0);
    case RDB_TYPE_HASH:
        return skip_strings(r, 2, 0);
    case RDB_TYPE_ZSET_2:
        return skip_strings(r, 1, 8);
    case RDB_TYPE_ZSET:
        if (rdbw_count(r, &n, 2) != RDB_OK) return RDB_ERR;
        for (uint64_t i = 0; i < n; i++) {
            double d;
            if (rdbw_skip_string(r) != RDB_OK) return RDB_ERR;
            if (rdbw_left(r) >= 1 && *r->p >= 253) {
                r->p++;
                continue;
            }
            if (rdbw_text_score(r, &d) != RDB_OK) return RDB_ERR;
        }
        return RDB_OK;
    case RDB_TYPE_LIST_QUICKLIST_2:
        if (rdbw_count(r, &n, 2) != RDB_OK) return RDB_ERR;
        for (uint64_t i = 0; i < n; i++)
            if (skip_lens(r, 1) != RDB_OK || rdbw_skip_string(r) != RDB_OK) return RDB_ERR;
        return RDB_OK;
    case RDB_TYPE_MODULE_2:
        return skip_lens(r, 1) == RDB_OK ? skip_module_opcodes(r) : RDB_ERR;
    case RDB_TYPE_STREAM_LISTPACKS:
        return skip_stream(r, 0);
    case RDB_TYPE_STREAM_LISTPACKS_2:
        return skip_stream(r, 1);
    default:
        return RDB_ERR;
    }
}

int rdbw_skip_module_aux(rdb_reader_t *r)
{
    return skip_lens(r, 3) == RDB_OK ? skip_module_opcodes(r) : RDB_ERR;
}
