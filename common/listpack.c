/* listpack.c - Redis 7.0's listpack format (see listpack.h for the layout).
 *
 * Every mutation goes through one splice: replace the bytes of zero or more entries at an
 * offset by the encoded bytes of zero or one new entry, then fix the header. Entries carry
 * their own back length, so no neighbour changes when one is inserted or removed (unlike a
 * ziplist there is no cascade). The header's count saturates at 65535, after which
 * lp_length() walks. Encoding choices (integer widths, string length classes, back length
 * bytes) are Redis's, so equal contents give equal bytes. Runs on any thread; no state. */
#include "common/listpack.h"

#include "common/alloc.h"
#include "common/util.h"

#include <assert.h>
#include <string.h>

#define LP_NUMELE_UNKNOWN 65535
#define LP_MAX_ENTRY_HDR 9 /* encoding byte + 8 bytes of a 64-bit integer / 5 of a string */
#define LP_MAX_BACKLEN 5

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(unsigned char *p, uint32_t v)
{
    p[0] = v & 0xff;
    p[1] = (v >> 8) & 0xff;
    p[2] = (v >> 16) & 0xff;
    p[3] = (v >> 24) & 0xff;
}

size_t lp_bytes(const unsigned char *lp)
{
    return rd32(lp);
}

static uint32_t hdr_count(const unsigned char *lp)
{
    return (uint32_t)lp[4] | (uint32_t)lp[5] << 8;
}

static void set_count(unsigned char *lp, uint32_t n)
{
    if (n > LP_NUMELE_UNKNOWN)
        n = LP_NUMELE_UNKNOWN;
    lp[4] = n & 0xff;
    lp[5] = (n >> 8) & 0xff;
}

unsigned char *lp_new(size_t capacity)
{
    size_t n = capacity > LP_HDR_SIZE + 1 ? capacity : LP_HDR_SIZE + 1;
    unsigned char *lp = xmalloc(n);
    wr32(lp, LP_HDR_SIZE + 1);
    set_count(lp, 0);
    lp[LP_HDR_SIZE] = LP_EOF;
    return lp;
}

void lp_free(unsigned char *lp)
{
    xfree(lp);
}

/* ---- encoding ---- */

/* Encodes v into buf; returns the bytes written (1..9). */
static size_t encode_int(unsigned char *buf, long long v)
{
    if (v >= 0 && v <= 127) {
        buf[0] = (unsigned char)v;
        return 1;
    }
    if (v >= -4096 && v <= 4095) {
        uint64_t u = v < 0 ? (uint64_t)((1 << 13) + v) : (uint64_t)v;
        buf[0] = (unsigned char)(0xC0 | (u >> 8));
        buf[1] = u & 0xff;
        return 2;
    }
    int width; /* data bytes */
    unsigned char tag;
    if (v >= -32768 && v <= 32767) {
        width = 2, tag = 0xF1;
    } else if (v >= -8388608 && v <= 8388607) {
        width = 3, tag = 0xF2;
    } else if (v >= -2147483648LL && v <= 2147483647LL) {
        width = 4, tag = 0xF3;
    } else {
        width = 8, tag = 0xF4;
    }
    uint64_t u = (uint64_t)v; /* two's complement: the low bytes are the encoding */
    buf[0] = tag;
    for (int i = 0; i < width; i++)
        buf[1 + i] = (u >> (8 * i)) & 0xff;
    return 1 + (size_t)width;
}

/* Encodes the header of a string of len bytes; returns its size (1, 2 or 5). */
static size_t encode_str_hdr(unsigned char *buf, size_t len)
{
    if (len < 64) {
        buf[0] = (unsigned char)(0x80 | len);
        return 1;
    }
    if (len < 4096) {
        buf[0] = (unsigned char)(0xE0 | (len >> 8));
        buf[1] = len & 0xff;
        return 2;
    }
    buf[0] = 0xF0;
    wr32(buf + 1, (uint32_t)len);
    return 5;
}

/* Writes the back length of an entry whose encoding + data take l bytes; returns its size. */
static size_t encode_backlen(unsigned char *buf, size_t l)
{
    size_t n = l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
    /* most significant group first; every byte but the first has the high bit set, so reading
     * backwards from the last byte continues while the high bit is set */
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (l >> (7 * (n - 1 - i))) & 127;
        buf[i] = i == 0 ? b : (unsigned char)(b | 128);
    }
    return n;
}

static size_t backlen_size(size_t l)
{
    return l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
}

/* ---- decoding (trusted listpacks) ---- */

/* Size of the encoding + data of entry p. */
static size_t enc_data_size(const unsigned char *p)
{
    unsigned char b = p[0];
    if ((b & 0x80) == 0)
        return 1;
    if ((b & 0xC0) == 0x80)
        return 1 + (b & 0x3F);
    if ((b & 0xE0) == 0xC0)
        return 2;
    if ((b & 0xF0) == 0xE0)
        return 2 + (((size_t)(b & 0x0F) << 8) | p[1]);
    switch (b) {
    case 0xF0: return 5 + (size_t)rd32(p + 1);
    case 0xF1: return 3;
    case 0xF2: return 4;
    case 0xF3: return 5;
    case 0xF4: return 9;
    }
    assert(0 && "listpack: bad encoding byte");
    return 1;
}

size_t lp_entry_size(const unsigned char *p)
{
    size_t l = enc_data_size(p);
    return l + backlen_size(l);
}

/* Reads a back length ending at p (its last byte); *n receives its byte count. */
static size_t decode_backlen(const unsigned char *p, size_t *n)
{
    size_t v = 0;
    int shift = 0;
    size_t i = 0;
    for (;;) {
        unsigned char b = p[-(long)i];
        v |= (size_t)(b & 127) << shift;
        i++;
        if (!(b & 128) || i == LP_MAX_BACKLEN)
            break;
        shift += 7;
    }
    *n = i;
    return v;
}

const unsigned char *lp_get(const unsigned char *p, uint32_t *len, long long *ival)
{
    unsigned char b = p[0];
    uint64_t u;
    int bits;
    if ((b & 0x80) == 0) {
        *ival = b;
        return NULL;
    }
    if ((b & 0xC0) == 0x80) {
        *len = b & 0x3F;
        return p + 1;
    }
    if ((b & 0xE0) == 0xC0) {
        u = ((uint64_t)(b & 0x1F) << 8) | p[1];
        bits = 13;
    } else if ((b & 0xF0) == 0xE0) {
        *len = ((uint32_t)(b & 0x0F) << 8) | p[1];
        return p + 2;
    } else if (b == 0xF0) {
        *len = rd32(p + 1);
        return p + 5;
    } else {
        int width = b == 0xF1 ? 2 : b == 0xF2 ? 3 : b == 0xF3 ? 4 : 8;
        assert(b >= 0xF1 && b <= 0xF4);
        u = 0;
        for (int i = 0; i < width; i++)
            u |= (uint64_t)p[1 + i] << (8 * i);
        bits = width * 8;
    }
    if (bits < 64 && (u >> (bits - 1)) & 1) /* sign-extend */
        u |= ~(uint64_t)0 << bits;
    *ival = (long long)u;
    return NULL;
}

const unsigned char *lp_get_text(const unsigned char *p, uint32_t *len, char *buf)
{
    long long v;
    const unsigned char *s = lp_get(p, len, &v);
    if (s)
        return s;
    *len = (uint32_t)ll_to_str(buf, v);
    return (const unsigned char *)buf;
}

int lp_equals(const unsigned char *p, const void *s, size_t len)
{
    char buf[24];
    uint32_t n;
    const unsigned char *t = lp_get_text(p, &n, buf);
    return n == len && (len == 0 || memcmp(t, s, len) == 0);
}

/* ---- iteration ---- */

unsigned char *lp_first(unsigned char *lp)
{
    unsigned char *p = lp + LP_HDR_SIZE;
    return *p == LP_EOF ? NULL : p;
}

unsigned char *lp_next(unsigned char *lp, unsigned char *p)
{
    (void)lp;
    p += lp_entry_size(p);
    return *p == LP_EOF ? NULL : p;
}

unsigned char *lp_prev(unsigned char *lp, unsigned char *p)
{
    if (p == lp + LP_HDR_SIZE)
        return NULL;
    size_t n;
    size_t l = decode_backlen(p - 1, &n);
    return p - n - l;
}

unsigned char *lp_last(unsigned char *lp)
{
    unsigned char *eof = lp + lp_bytes(lp) - 1;
    return lp_prev(lp, eof);
}

uint32_t lp_length(const unsigned char *lp)
{
    uint32_t n = hdr_count(lp);
    if (n != LP_NUMELE_UNKNOWN)
        return n;
    n = 0;
    for (unsigned char *p = lp_first((unsigned char *)lp); p; p = lp_next((unsigned char *)lp, p))
        n++;
    return n;
}

unsigned char *lp_seek(unsigned char *lp, long index)
{
    long n = (long)lp_length(lp);
    if (index < 0)
        index += n;
    if (index < 0 || index >= n)
        return NULL;
    unsigned char *p;
    if (index <= n / 2) {
        p = lp_first(lp);
        while (index-- > 0)
            p = lp_next(lp, p);
    } else {
        p = lp_last(lp);
        for (long i = n - 1; i > index; i--)
            p = lp_prev(lp, p);
    }
    return p;
}

/* ---- mutation ---- */

/* Replaces del bytes at offset off by the entry enc[0..enclen) + data[0..datalen) (no entry
 * when enclen is 0), adjusting the count by dcount. Returns the listpack. */
static unsigned char *splice(unsigned char *lp, size_t off, size_t del, const unsigned char *enc,
                             size_t enclen, const void *data, size_t datalen, long dcount)
{
    size_t old = lp_bytes(lp);
    unsigned char back[LP_MAX_BACKLEN];
    size_t blen = enclen ? encode_backlen(back, enclen + datalen) : 0;
    size_t add = enclen ? enclen + datalen + blen : 0;
    size_t now = old - del + add;
    assert(now <= UINT32_MAX);
    uint32_t count = hdr_count(lp);
    if (now > old)
        lp = xrealloc(lp, now);
    memmove(lp + off + add, lp + off + del, old - off - del);
    if (add) {
        unsigned char *w = lp + off;
        memcpy(w, enc, enclen);
        if (datalen)
            memcpy(w + enclen, data, datalen);
        memcpy(w + enclen + datalen, back, blen);
    }
    if (now < old)
        lp = xrealloc(lp, now);
    wr32(lp, (uint32_t)now);
    /* as Redis: a saturated count stays so (lp_length() walks) */
    if (count != LP_NUMELE_UNKNOWN)
        set_count(lp, (uint32_t)((long)count + dcount));
    return lp;
}

/* Encodes a string entry header, or an integer when s is a canonical int64. Returns the
 * header size; *data and *datalen receive the payload that follows (none for an integer). */
static size_t encode_value(unsigned char *enc, const void *s, size_t len, const void **data,
                           size_t *datalen)
{
    long long v;
    if (len > 0 && len <= 20 && str_to_ll(s, len, &v)) {
        *data = NULL;
        *datalen = 0;
        return encode_int(enc, v);
    }
    assert(len <= LP_MAX_STRING);
    *data = s;
    *datalen = len;
    return encode_str_hdr(enc, len);
}

static unsigned char *put(unsigned char *lp, unsigned char *p, size_t del, const unsigned char *enc,
                          size_t enclen, const void *data, size_t datalen, long dcount,
                          unsigned char **newp)
{
    size_t off = p ? (size_t)(p - lp) : lp_bytes(lp) - 1;
    lp = splice(lp, off, del, enc, enclen, data, datalen, dcount);
    if (newp)
        *newp = lp + off;
    return lp;
}

unsigned char *lp_insert(unsigned char *lp, unsigned char *p, const void *s, size_t len,
                         unsigned char **newp)
{
    unsigned char enc[LP_MAX_ENTRY_HDR];
    const void *data;
    size_t datalen, n = encode_value(enc, s, len, &data, &datalen);
    return put(lp, p, 0, enc, n, data, datalen, 1, newp);
}

unsigned char *lp_insert_int(unsigned char *lp, unsigned char *p, long long v, unsigned char **newp)
{
    unsigned char enc[LP_MAX_ENTRY_HDR];
    size_t n = encode_int(enc, v);
    return put(lp, p, 0, enc, n, NULL, 0, 1, newp);
}

unsigned char *lp_append(unsigned char *lp, const void *s, size_t len)
{
    return lp_insert(lp, NULL, s, len, NULL);
}

unsigned char *lp_append_int(unsigned char *lp, long long v)
{
    return lp_insert_int(lp, NULL, v, NULL);
}

unsigned char *lp_replace(unsigned char *lp, unsigned char *p, const void *s, size_t len,
                          unsigned char **newp)
{
    unsigned char enc[LP_MAX_ENTRY_HDR];
    const void *data;
    size_t datalen, n = encode_value(enc, s, len, &data, &datalen);
    return put(lp, p, lp_entry_size(p), enc, n, data, datalen, 0, newp);
}

unsigned char *lp_replace_int(unsigned char *lp, unsigned char *p, long long v,
                              unsigned char **newp)
{
    unsigned char enc[LP_MAX_ENTRY_HDR];
    size_t n = encode_int(enc, v);
    return put(lp, p, lp_entry_size(p), enc, n, NULL, 0, 0, newp);
}

unsigned char *lp_delete(unsigned char *lp, unsigned char *p, uint32_t count, unsigned char **nextp)
{
    size_t off = (size_t)(p - lp);
    unsigned char *q = p;
    uint32_t n = 0;
    while (n < count && *q != LP_EOF) {
        q += lp_entry_size(q);
        n++;
    }
    lp = splice(lp, off, (size_t)(q - p), NULL, 0, NULL, 0, -(long)n);
    if (nextp)
        *nextp = lp[off] == LP_EOF ? NULL : lp + off;
    return lp;
}

/* ---- validation (untrusted bytes) ---- */

/* Size of the encoding + data of the entry at p, reading only p[0..avail); 0 if it does not
 * fit or the encoding byte is invalid. */
static size_t checked_enc_data_size(const unsigned char *p, size_t avail)
{
    if (avail < 1)
        return 0;
    unsigned char b = p[0];
    size_t need;
    if ((b & 0x80) == 0)
        need = 1;
    else if ((b & 0xC0) == 0x80)
        need = 1 + (b & 0x3F);
    else if ((b & 0xE0) == 0xC0)
        need = 2;
    else if ((b & 0xF0) == 0xE0) {
        if (avail < 2)
            return 0;
        need = 2 + (((size_t)(b & 0x0F) << 8) | p[1]);
    } else if (b == 0xF0) {
        if (avail < 5)
            return 0;
        need = 5 + (size_t)rd32(p + 1);
    } else if (b >= 0xF1 && b <= 0xF4) {
        need = b == 0xF1 ? 3 : b == 0xF2 ? 4 : b == 0xF3 ? 5 : 9;
    } else {
        return 0; /* 0xF5..0xFF: not an entry */
    }
    return need <= avail ? need : 0;
}

int lp_validate(const unsigned char *lp, size_t size, uint32_t *count)
{
    if (size < LP_HDR_SIZE + 1 || size > UINT32_MAX || rd32(lp) != size ||
        lp[size - 1] != LP_EOF)
        return 0;
    const unsigned char *p = lp + LP_HDR_SIZE, *end = lp + size - 1;
    uint32_t n = 0;
    while (p < end) {
        size_t l = checked_enc_data_size(p, (size_t)(end - p));
        if (l == 0)
            return 0;
        size_t bl = backlen_size(l);
        if ((size_t)(end - p) < l + bl)
            return 0;
        size_t got_n;
        if (decode_backlen(p + l + bl - 1, &got_n) != l || got_n != bl)
            return 0;
        p += l + bl;
        if (n == UINT32_MAX)
            return 0;
        n++;
    }
    uint32_t h = hdr_count(lp);
    if (h != LP_NUMELE_UNKNOWN && h != n)
        return 0;
    if (count)
        *count = n;
    return 1;
}
